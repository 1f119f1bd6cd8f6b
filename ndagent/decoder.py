"""The one line decoder: bytes in, events out.

Every command reads its input through this module, and only this module decodes or
encodes JSON.  Each input is read in chunks of whatever is available (``os.read``
semantics), split into lines here, and each line becomes an item that knows its source
name and 1-based line number:

- ``Event``: a line holding a JSON object;
- ``BadLine``: a line that is not one (not JSON, not an object, invalid UTF-8, cut off),
  with the reason; a value, never an exception, so the caller decides the policy;
- ``Skipped``: lines that were not decoded because they cannot be of a wanted type;
- ``Unreadable``: an input that could not be opened or read.

Items come in batches, one batch per chunk read, so a caller can flush its output after
each batch: on a live pipe a line is handled the moment it arrives, while a file is still
processed in large batches.  Blank lines, ``\\r\\n`` endings, a UTF-8 byte order mark at
the start of each input and a last line without a newline are accepted.  Memory grows
with the longest line, not with the stream.

Example::

    from ndagent.decoder import iter_items, Event

    for item in iter_items(["run.ndjson"]):
        if isinstance(item, Event) and item.type == "result":
            print(item.line, item.data["result"])
"""

import os

import orjson

__all__ = [
    "BadLine",
    "Event",
    "Skipped",
    "Unreadable",
    "batches",
    "decode_line",
    "encode_line",
    "iter_items",
    "source_name",
    "STDIN",
]

STDIN = "<stdin>"
CHUNK_SIZE = 1 << 18

_BOM = b"\xef\xbb\xbf"
_CUT_OFF = "truncated line: the stream was cut off?"


class Event:
    """One decoded line: ``data`` is the JSON object, ``type`` its string type or None."""

    __slots__ = ("source", "line", "data", "type")

    def __init__(self, source, line, data):
        self.source = source
        self.line = line
        self.data = data
        kind = data.get("type")
        self.type = kind if kind.__class__ is str else None

    def __repr__(self):
        return f"Event({self.source!r}, {self.line}, type={self.type!r})"


class BadLine:
    """A line that does not hold a JSON object; ``reason`` says why, in a few words."""

    __slots__ = ("source", "line", "reason")

    def __init__(self, source, line, reason):
        self.source = source
        self.line = line
        self.reason = reason

    @property
    def cut_off(self):
        """Whether this is the last line of its input, cut short (no newline, no JSON)."""
        return self.reason == _CUT_OFF

    def __repr__(self):
        return f"BadLine({self.source!r}, {self.line}, {self.reason!r})"


class Skipped:
    """Lines from ``line`` on that hold objects of unwanted types, left undecoded."""

    __slots__ = ("source", "line")
    type = None

    def __init__(self, source, line):
        self.source = source
        self.line = line

    def __repr__(self):
        return f"Skipped({self.source!r}, {self.line})"


class Unreadable:
    """An input that could not be opened (``line`` None) or read to its end (``line``:
    the first line not read); ``reason`` is the OS's word."""

    __slots__ = ("source", "line", "reason")

    def __init__(self, source, line, reason):
        self.source = source
        self.line = line
        self.reason = reason

    def __repr__(self):
        return f"Unreadable({self.source!r}, {self.line}, {self.reason!r})"


def decode_line(line, exact=False):
    """Decode one line: a dict, or a short reason string when it holds no JSON object
    ("" for a blank line).  orjson reads integers beyond 64 bits as floats; ``exact``
    keeps them exact, at the cost of a scan of the line (for values that are printed
    again)."""
    item = _item(None, 0, line, _loads_exactly if exact else orjson.loads, None)
    if item is None:
        return ""
    return item.data if item.__class__ is Event else item.reason


def encode_line(value):
    """Encode a value as one compact JSON line, newline included."""
    try:
        return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        # Integers beyond 64 bits (from the tolerant decoder) and nesting deeper than
        # orjson writes (255 levels; it reads 1024) get here.  More room than decoding
        # had, so that whatever was decoded can be encoded from deeper in the stack.
        import json

        text = _with_room(2 * _ORJSON_DEPTH, json.dumps, value, ensure_ascii=False,
                          separators=(",", ":"))
        return text.encode("utf-8", "surrogatepass") + b"\n"


# How deep orjson reads nesting.  The stdlib json, which stands in for orjson on the
# rare lines it cannot handle, recurses once per level: Python's default limit of 1000
# frames is not enough for that.
_ORJSON_DEPTH = 1024


def _with_room(frames, function, *args, **kwargs):
    """``function(*args, **kwargs)`` with ``frames`` more frames of recursion allowed."""
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + frames)
    try:
        return function(*args, **kwargs)
    finally:
        sys.setrecursionlimit(limit)


def _loads_exactly(line):
    """orjson.loads, but a line with a run of 19 digits or more (maybe an integer beyond
    64 bits) is left to the tolerant decoder.  (Turning every digit into 0 and looking
    for 19 zeros is many times faster than a regular expression.)  orjson reads the line
    first, so that a line it rejects has its reason."""
    value = orjson.loads(line)
    if _NINETEEN_DIGITS in line.translate(_DIGITS_TO_ZERO):
        raise orjson.JSONDecodeError("64-bit", "", 0)
    return value


_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_DIGITS = b"0" * 19


def _json_kind(value):
    if type(value) is list:
        return "an array"
    if type(value) is str:
        return "a string"
    if value is None or type(value) is bool:
        return "a literal"
    return "a number"


def _decode_tolerantly(line, error):
    """Second chance for what orjson rejects but JSON allows: lone surrogate escapes
    and integers beyond 64 bits (or beyond a double: orjson says "infinity").  Lone
    surrogates become U+FFFD, so that every string handed on is valid Unicode.  Anything
    else, floats beyond a double included, gets the reason orjson gave."""
    reason = str(error).split(": line ", 1)[0]
    if not line.strip():
        return ""
    if "surrogate" not in reason and "64-bit" not in reason and "infinity" not in reason:
        return _reason(reason)
    import json

    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8"
    try:
        value = _with_room(_ORJSON_DEPTH, json.loads, text, parse_constant=_reject_constant,
                           parse_float=_finite_float)
    except RecursionError:
        return "not JSON: nested too deeply"
    except ValueError:
        return _reason(reason)
    if type(value) is not dict:
        return f"not a JSON object but {_json_kind(value)}"
    return _replace_surrogates(value)


def _reject_constant(name):
    raise ValueError(name)


def _finite_float(text):
    """A float, as orjson reads it: one beyond a double (1e400) is not infinity but an
    error."""
    value = float(text)
    if value in (_INFINITY, -_INFINITY):
        raise ValueError(text)
    return value


_INFINITY = float("inf")


def _reason(orjson_reason):
    if orjson_reason.startswith("str is not valid UTF-8"):
        return "not valid UTF-8"
    if orjson_reason.startswith("byte order mark"):
        return "not JSON: a byte order mark inside the input"
    return "not JSON: " + orjson_reason


def _replace_surrogates(value):
    """``value``, fresh from the stdlib json, with every lone surrogate in its keys and
    strings made U+FFFD, in place: a loop, not recursion, since the nesting may be
    deeper than Python recurses."""
    containers = [value]
    while containers:
        container = containers.pop()
        if type(container) is dict:
            if any(_has_surrogate(key) for key in container):
                items = [(_without_surrogates(key), item) for key, item in container.items()]
                container.clear()
                container.update(items)
            places = container.items()
        else:
            places = enumerate(container)
        for place, item in places:
            if type(item) is str:
                container[place] = _without_surrogates(item)
            elif type(item) is dict or type(item) is list:
                containers.append(item)
    return value


def _without_surrogates(text):
    if not _has_surrogate(text):
        return text
    import re

    return re.sub("[\ud800-\udfff]", "\ufffd", text)


def _has_surrogate(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _item(source, number, line, loads, wanted):
    """The item for one line that was decoded: an Event, Skipped (an event of a type not
    wanted), a BadLine, or None for a blank line."""
    try:
        value = loads(line)
    except orjson.JSONDecodeError as error:
        value = _decode_tolerantly(line, error)
        if value.__class__ is str:
            return BadLine(source, number, value) if value else None
    if value.__class__ is not dict:
        return BadLine(source, number, f"not a JSON object but {_json_kind(value)}")
    event = Event(source, number, value)
    return event if wanted is None or event.type in wanted else Skipped(source, number)


class _Lines:
    """Turns blocks of whole lines of one input into items, numbering lines as it goes."""

    def __init__(self, source, want, exact, every_line):
        self.source = source
        self.loads = _loads_exactly if exact else orjson.loads
        if want is None:
            self.wanted = self.boundary = None
        else:
            want = frozenset(want) | {"system", "result"}
            self.wanted = frozenset(name.split("/")[0] for name in want)
            self.boundary = None if every_line else _boundary(want)
        self.number = 0

    def block(self, data):
        """Items of ``data``, whole lines each ending in a newline."""
        if self.boundary is None:
            return self._all(data)
        return self._selected(data)

    def last(self, line):
        """Items of a last line that has no newline: if it does not decode, it was cut."""
        self.number += 1
        item = _item(self.source, self.number, line, self.loads, self.wanted)
        if item is None:
            return []
        if item.__class__ is BadLine:
            item.reason = _CUT_OFF
        return [item]

    def _all(self, data):
        items = []
        append = items.append
        source = self.source
        number = self.number
        wanted, loads = self.wanted, self.loads
        lines = data.split(b"\n")
        lines.pop()
        for line in lines:
            number += 1
            item = _item(source, number, line, loads, wanted)
            if item is not None:
                append(item)
        self.number = number
        return items

    def _selected(self, data):
        """Decode only the lines that may hold a wanted type.

        A line is left undecoded when it starts with ``{"type":"NAME"`` for a NAME that
        is not wanted, and ends with ``}``: then it is an object of that type (or
        damaged inside, which only ``validate`` looks for).  Every other line, blank,
        escaped, spaced, reordered or not an object at all, is decoded.  One regular
        expression finds the newlines next to lines to decode, so the undecoded lines
        cost no Python work; each stretch of them becomes one ``Skipped`` item."""
        items = []
        append = items.append
        source, wanted, loads = self.source, self.wanted, self.loads
        number = self.number
        text = b"\n" + data  # so that the first line, too, follows a newline
        count = text.count
        position = 1  # where the lines not yet numbered begin
        for start, end in self._lines_to_decode(text):
            if start > position:
                append(Skipped(source, number + 1))
                number += count(b"\n", position, start)
            number += 1
            item = _item(source, number, text[start:end], loads, wanted)
            if item is not None:
                append(item)
            position = end + 1
        if position < len(text):
            append(Skipped(source, number + 1))
            number += count(b"\n", position)
        self.number = number
        return items

    def _lines_to_decode(self, text):
        """(start, end) of each line of ``text`` to decode, in order: the lines next to
        the newlines that ``boundary`` finds (see ``_boundary``)."""
        done = 1  # the lines before this offset were given already
        last = len(text) - 1
        find = text.find
        for match in self.boundary.finditer(text):
            newline = match.start()
            if text[newline - 1] != 125 and newline and not _ends_object(text, newline):
                start = text.rfind(b"\n", 0, newline) + 1  # the line ending here
                if start >= done:
                    yield start, newline
                    done = newline + 1
            if match.lastgroup and newline < last:  # "next": the line after
                end = find(b"\n", newline + 1)
                yield newline + 1, end
                done = end + 1


_BOUNDARIES = {}


def _boundary(want):
    """The newlines next to a line to decode: the line before does not end with ``}``,
    or the line after (group ``next``, which matches the empty string, so it only tells)
    does not start ``{"type":"NAME"`` for a NAME not wanted, nor, for a wanted
    ``NAME/SUBTYPE``, ``{"type":"NAME","subtype":"OTHER"`` for another subtype."""
    pattern = _BOUNDARIES.get(want)
    if pattern is None:
        import re

        def alternatives(names):
            return b"|".join(re.escape(name.encode()) for name in sorted(names))

        subtypes = {}
        for name in want:
            kind, _, subtype = name.partition("/")
            subtypes.setdefault(kind, set()).add(subtype)
        unwanted = [rb'\{"type":"(?:(?!(?:' + alternatives(subtypes) + rb')")[A-Za-z_]+"']
        for kind, names in sorted(subtypes.items()):
            if "" not in names:  # only some subtypes of this type are wanted
                unwanted.append(re.escape(kind.encode()) + rb'","subtype":"(?!(?:'
                                + alternatives(names) + rb')")[A-Za-z_]+"')
        unwanted = b"|".join(unwanted) + b")"
        pattern = _BOUNDARIES[want] = re.compile(
            rb"\n(?:(?P<next>(?!" + unwanted + rb"))|(?<!\}\n)(?<!\}\r\n))")
    return pattern


def _ends_object(text, newline):
    """Whether the line that ends at ``newline`` ends with ``}`` (or ``}\r``)."""
    before = text[newline - 1]
    return before == 125 or (before == 13 and text[newline - 2] == 125)  # "}", "\r"


def source_name(name):
    """How messages name an input: its path, ``<stdin>``, or a file object's name."""
    if name == "-":
        return STDIN
    if isinstance(name, (str, bytes, os.PathLike)):
        return os.fsdecode(name)
    return str(getattr(name, "name", None) or "<stream>")


def _open(name):
    """A reader for one input: ``(read function, close function)``."""
    if name == "-":
        return _reader(0), None
    if isinstance(name, (str, bytes, os.PathLike)):
        handle = open(name, "rb", buffering=0)  # noqa: SIM115 - closed by the caller
        return _reader(handle.fileno()), handle.close
    return getattr(name, "read1", None) or name.read, None


def _reader(fd):
    """``os.read`` of ``fd``.  A parent may have left standard input non-blocking (the
    flag belongs to the open file, shared with whoever else has it, and with
    /dev/stdin on macOS): then wait for data, rather than take "none yet" (EAGAIN) for
    an error."""

    def read(size):
        while True:
            try:
                return os.read(fd, size)
            except BlockingIOError:
                import select

                select.select([fd], [], [])

    return read


def batches(inputs=("-",), want=None, chunk_size=CHUNK_SIZE, exact=False, every_line=False):
    """Yield lists of items, one list per chunk read, from the inputs in order.

    ``inputs`` holds paths, ``"-"`` for standard input, or binary file objects.  With
    ``want`` (event type names, or ``TYPE/SUBTYPE`` for only some subtypes of a type),
    lines that cannot hold those are not decoded: they come as ``Skipped`` items.
    ``system`` and ``result`` events are always decoded, since they mark where runs
    begin and end.  ``every_line``: decode every line all the same (so that no bad line
    goes unseen), handing over only the wanted events.  ``exact``: see ``decode_line``."""
    for name in inputs or ("-",):
        source = source_name(name)
        try:
            read, close = _open(name)
        except OSError as error:
            yield [Unreadable(source, None, error.strerror or str(error))]
            continue
        try:
            lines = _Lines(source, want, exact, every_line)
            yield from _read_batches(source, read, lines, chunk_size)
        finally:
            if close is not None:
                close()


def _read_batches(source, read, lines, chunk_size):
    pieces = []
    at_start = True
    while True:
        try:
            chunk = read(chunk_size)
        except OSError as error:
            yield [Unreadable(source, lines.number + 1, error.strerror or str(error))]
            return
        if not chunk:
            break
        end = chunk.rfind(b"\n")
        if end < 0:
            pieces.append(chunk)
            continue
        data = chunk[:end + 1]
        if pieces:
            pieces.append(data)
            data = b"".join(pieces)
            pieces.clear()
        if end + 1 < len(chunk):
            pieces.append(chunk[end + 1:])
        if at_start:
            at_start = False
            if data.startswith(_BOM):
                data = data[3:]
        yield lines.block(data)
    if pieces:
        data = b"".join(pieces)
        if at_start and data.startswith(_BOM):
            data = data[3:]
        if data.strip():
            yield lines.last(data)


def iter_items(inputs=("-",), want=None):
    """Every item of the inputs, one at a time (``batches`` without the batching)."""
    for batch in batches(inputs, want):
        yield from batch
