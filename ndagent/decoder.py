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
_SPACE = b" \t\r\n"


class Event:
    """One decoded line: ``data`` is the JSON object, ``type`` its string type or None."""

    __slots__ = ("source", "line", "data")

    def __init__(self, source, line, data):
        self.source = source
        self.line = line
        self.data = data

    @property
    def type(self):
        value = self.data.get("type")
        return value if type(value) is str else None

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
    if type(value) is dict:
        event = Event(source, number, value)
        if wanted is None or event.type in wanted:
            items.append(event)
        else:
            items.append(Skipped(source, number))
    elif value:
        items.append(BadLine(source, number, value))


class _Lines:
    """Turns blocks of whole lines of one input into items, numbering lines as it goes."""

    def __init__(self, source, want, exact):
        self.source = source
        self.exact = exact
        self.wanted = None if want is None else frozenset(want) | {"system", "result"}
        self.needles = None if want is None else _needles(self.wanted)
        self.number = 0

    def block(self, data):
        """Items of ``data``, whole lines each ending in a newline."""
        if self.needles is None:
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
                value = _decode_tolerantly(line, error)
                if value == "":
                    continue
            if type(value) is dict:
                append(Event(source, number, value))
            else:
                append(BadLine(source, number, value if type(value) is str else
                               f"not a JSON object but {_json_kind(value)}"))
        self.number = number
        return items

    def _selected(self, data):
        """Decode only the lines that may hold a wanted type; see ``_candidate_lines``."""
        items = []
        source = self.source
        wanted = self.wanted
        exact = self.exact
        number = self.number
        position = 0
        for start in _candidate_lines(data, self.needles):
            if start > position:
                self._gap(items, data, position, start, number)
                number += data.count(b"\n", position, start)
            end = data.index(b"\n", start)
            number += 1
            _decode_into(items, source, number, decode_line(data[start:end], exact), wanted)
            position = end + 1
        if position < len(data):
            self._gap(items, data, position, len(data), number)
            number += data.count(b"\n", position)
        self.number = number
        return items

    def _gap(self, items, data, start, end, number):
        """Lines between candidates: no wanted type can be there.  Report them as one
        ``Skipped`` when each looks like an object (starts with ``{``, ends with ``}``);
        otherwise decode them one by one, so no bad line goes unnoticed."""
        first = start
        while first < end and data[first] in _SPACE:
            first += 1
        if first == end:
            return
        line_start = data.rfind(b"\n", 0, first) + 1
        lines = data.count(b"\n", line_start, end)
        opens = data.count(b"\n{", line_start - 1, end) if line_start else (
            (data[0] == 123) + data.count(b"\n{", 0, end))
        closes = data.count(b"}\n", line_start, end) + data.count(b"}\r\n", line_start, end)
        first_number = number + data.count(b"\n", start, line_start) + 1
        if opens == lines == closes:
            items.append(Skipped(self.source, first_number))
            return
        skipped = False
        for offset, line in enumerate(data[line_start:end - 1].split(b"\n")):
            value = decode_line(line)
            if type(value) is dict:
                if not skipped:
                    items.append(Skipped(self.source, first_number + offset))
                    skipped = True
            elif value:
                items.append(BadLine(self.source, first_number + offset, value))


def _needles(wanted):
    """What to search for: each wanted type as a quoted string, and any \\u escape (a
    type could be spelt with escapes, as in ``"\\u0072esult"``)."""
    return tuple(b'"' + name.encode() + b'"' for name in sorted(wanted)) + (b"\\u",)


def _candidate_lines(data, needles):
    """Start offsets of the lines that may hold one of the wanted types, in order.

    A type is a string value, so in the raw line it appears as ``"name"`` after a colon
    (and optional spaces): inside a JSON string every quote is escaped, so this cannot
    be mistaken for text.  Lines with a ``\\u`` escape are always candidates.  A line
    that is not a candidate cannot hold a wanted event; a candidate may still not hold
    one (the caller decodes it and checks)."""
    starts = set()
    find = data.find
    for needle in needles:
        escape = needle == b"\\u"
        found = find(needle)
        while found >= 0:
            if escape or _follows_colon(data, found):
                starts.add(data.rfind(b"\n", 0, found) + 1)
                found = find(needle, data.index(b"\n", found))
            else:
                found = find(needle, found + len(needle))
    return sorted(starts)


def _follows_colon(data, index):
    index -= 1
    while index >= 0 and data[index] in b" \t\r":
        index -= 1
    return index >= 0 and data[index] == 58  # ord(":")


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
