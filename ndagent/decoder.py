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
    """An input that could not be opened or read to its end; ``reason`` is the OS's word."""

    __slots__ = ("source", "line", "reason")

    def __init__(self, source, reason, line=None):
        self.source = source
        self.reason = reason
        self.line = line

    def __repr__(self):
        return f"Unreadable({self.source!r}, {self.reason!r})"


def decode_line(line, exact=False):
    """Decode one line: a dict, or a short reason string when it holds no JSON object
    ("" for a blank line).  orjson reads integers beyond 64 bits as floats; ``exact``
    keeps them exact, at the cost of a scan of the line (for values that are printed
    again)."""
    try:
        value = (_loads_exactly if exact else orjson.loads)(line)
    except orjson.JSONDecodeError as error:
        return _decode_tolerantly(line, error)
    if type(value) is dict:
        return value
    return f"not a JSON object but {_json_kind(value)}"


def encode_line(value):
    """Encode a value as one compact JSON line, newline included."""
    try:
        return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        # Only integers beyond 64 bits get here (from the tolerant decoder).
        import json

        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8", "surrogatepass") + b"\n"


def _loads_exactly(line):
    """orjson.loads, but a line with a run of 19 digits or more (maybe an integer beyond
    64 bits) is left to the tolerant decoder."""
    global _LONG_NUMBER
    if _LONG_NUMBER is None:
        import re

        _LONG_NUMBER = re.compile(rb"[0-9]{19}")
    if _LONG_NUMBER.search(line) is not None:
        raise orjson.JSONDecodeError("64-bit", "", 0)
    return orjson.loads(line)


_LONG_NUMBER = None


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
    and integers beyond 64 bits.  Lone surrogates become U+FFFD, so that every string
    handed on is valid Unicode.  Anything else gets the reason orjson gave."""
    reason = str(error).split(": line ", 1)[0]
    if not line.strip():
        return ""
    if "surrogate" not in reason and "64-bit" not in reason:
        return _reason(reason)
    import json

    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8"
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return "not JSON: nested too deeply"
    except ValueError:
        return _reason(reason)
    if type(value) is not dict:
        return f"not a JSON object but {_json_kind(value)}"
    return _replace_surrogates(value)


def _reject_constant(name):
    raise ValueError(name)


def _reason(orjson_reason):
    if orjson_reason.startswith("str is not valid UTF-8"):
        return "not valid UTF-8"
    if orjson_reason.startswith("byte order mark"):
        return "not JSON: a byte order mark inside the input"
    return "not JSON: " + orjson_reason


def _replace_surrogates(value):
    if type(value) is str:
        if not _has_surrogate(value):
            return value
        import re

        return re.sub("[\ud800-\udfff]", "\ufffd", value)
    if type(value) is dict:
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if type(value) is list:
        return [_replace_surrogates(v) for v in value]
    return value


def _has_surrogate(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _decode_into(items, source, number, value, wanted):
    """Add the item for one decoded line (see ``decode_line``) to ``items``."""
    if value.__class__ is dict:
        event = Event(source, number, value)
        wanted_event = wanted is None or event.type in wanted
        items.append(event if wanted_event else Skipped(source, number))
    elif value:
        items.append(BadLine(source, number, value))


class _Lines:
    """Turns blocks of whole lines of one input into items, numbering lines as it goes."""

    def __init__(self, source, want, exact):
        self.source = source
        self.exact = exact
        self.wanted = None if want is None else frozenset(want) | {"system", "result"}
        self.boundary = None if want is None else _boundary(self.wanted)
        self.number = 0

    def block(self, data):
        """Items of ``data``, whole lines each ending in a newline."""
        if self.boundary is None:
            return self._all(data)
        return self._selected(data)

    def last(self, line):
        """Items of a last line that has no newline: if it does not decode, it was cut."""
        items = []
        self.number += 1
        value = decode_line(line, self.exact)
        if type(value) is dict:
            _decode_into(items, self.source, self.number, value, self.wanted)
        elif value:
            items.append(BadLine(self.source, self.number, _CUT_OFF))
        return items

    def _all(self, data):
        items = []
        append = items.append
        source = self.source
        number = self.number
        loads = _loads_exactly if self.exact else orjson.loads
        lines = data.split(b"\n")
        lines.pop()
        for line in lines:
            number += 1
            try:
                value = loads(line)
            except orjson.JSONDecodeError as error:
                value = _decode_tolerantly(line, error)  # a dict, a reason, or "" (blank)
                if value.__class__ is str:
                    if value:
                        append(BadLine(source, number, value))
                    continue
            if value.__class__ is dict:
                append(Event(source, number, value))
            else:
                append(BadLine(source, number, f"not a JSON object but {_json_kind(value)}"))
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
        source, wanted, exact = self.source, self.wanted, self.exact
        number = self.number
        text = b"\n" + data  # so that the first line, too, follows a newline
        position = 1  # where the lines not yet numbered begin
        last = len(text) - 1
        for match in self.boundary.finditer(text):
            newline = match.start()
            if newline and not _ends_object(text, newline):  # the line ending here
                start = text.rfind(b"\n", 0, newline) + 1
                if start >= position:
                    number = self._skip(items, text, position, start, number) + 1
                    _decode_into(items, source, number, decode_line(text[start:newline], exact),
                                 wanted)
                    position = newline + 1
            if match.group("next") is not None and newline < last:  # the line after
                start = newline + 1
                number = self._skip(items, text, position, start, number) + 1
                end = text.index(b"\n", start)
                _decode_into(items, source, number, decode_line(text[start:end], exact), wanted)
                position = end + 1
        self.number = self._skip(items, text, position, len(text), number)
        return items

    def _skip(self, items, text, start, end, number):
        """The lines from ``start`` to ``end`` are not decoded: one Skipped for them, if
        there are any.  The number of the last line before ``end``."""
        if end > start:
            items.append(Skipped(self.source, number + 1))
            number += text.count(b"\n", start, end)
        return number


_BOUNDARIES = {}


def _boundary(wanted):
    """The newlines next to a line to decode: the line before does not end with ``}``,
    or the line after (group ``next``, which matches the empty string, so it only tells)
    does not start ``{"type":"NAME"`` for a NAME not wanted."""
    pattern = _BOUNDARIES.get(wanted)
    if pattern is None:
        import re

        names = b"|".join(re.escape(name.encode()) for name in sorted(wanted))
        unwanted = rb'\{"type":"(?!(?:' + names + rb')")[A-Za-z_]+"'
        pattern = _BOUNDARIES[wanted] = re.compile(
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
        return lambda size: os.read(0, size), None
    if isinstance(name, (str, bytes, os.PathLike)):
        handle = open(name, "rb", buffering=0)  # noqa: SIM115 - closed by the caller
        return handle.read, handle.close
    return getattr(name, "read1", None) or name.read, None


def batches(inputs=("-",), want=None, chunk_size=CHUNK_SIZE, exact=False):
    """Yield lists of items, one list per chunk read, from the inputs in order.

    ``inputs`` holds paths, ``"-"`` for standard input, or binary file objects.  With
    ``want`` (event type names), lines that cannot hold those types are not decoded:
    they come as ``Skipped`` items.  ``system`` and ``result`` events are always
    decoded, since they mark where runs begin and end.  ``exact``: see ``decode_line``."""
    for name in inputs or ("-",):
        source = source_name(name)
        try:
            read, close = _open(name)
        except OSError as error:
            yield [Unreadable(source, error.strerror or str(error))]
            continue
        try:
            yield from _read_batches(source, read, _Lines(source, want, exact), chunk_size)
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
            yield [Unreadable(source, error.strerror or str(error), lines.number + 1)]
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
