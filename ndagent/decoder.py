"""The one line decoder: bytes in, events out.

Every command reads its input through this module, and only this module decodes or
encodes JSON.  It knows no event type: which lines matter is given to it as a
``Selection`` (by the format the stream is in).  Each input is read in chunks of
whatever is available (``os.read`` semantics), split into lines here, and each line
becomes an item that knows its source name and 1-based line number:

- ``Event``: a line holding a JSON object;
- ``BadLine``: a line that is not one (not JSON, not an object, invalid UTF-8, cut off,
  longer than the line limit), with the reason and the start of the line; a value,
  never an exception, so the caller decides the policy;
- ``Skipped``: lines that were not decoded because they cannot be of a wanted kind;
- ``Unreadable``: an input that could not be opened or read.

Items come in batches, one batch per chunk read, so a caller can flush its output after
each batch: on a live pipe a line is handled the moment it arrives, while a file is still
processed in large batches.  Blank lines, ``\\r\\n`` endings, a UTF-8 byte order mark at
the start of each input and a last line without a newline are accepted.  Memory grows
with the longest line, up to ``MAX_LINE`` bytes: a longer line is reported and passed
over without being held.

Numbers: orjson holds 64-bit integers and doubles.  A number that does not fit (an
integer beyond 64 bits, a float beyond a double) is kept exactly as written, as a
``RawNumber``: encoded again as written, and no number for what is computed.

Example::

    from ndagent.decoder import BadLine, Event, iter_items

    for item in iter_items(["run.ndjson"]):
        if isinstance(item, Event):
            print(item.line, item.type)
        elif isinstance(item, BadLine):
            print(item.line, item.message)
"""

import json  # the slow path of values orjson cannot write; loaded by every command anyway
import os
import re
import signal

# orjson crashes the process when it is interrupted while it sets itself up (it
# imports more modules then): Ctrl-C is held back for that moment, and comes just
# after.  The frame imports this module before any other that uses orjson.
_BLOCKED = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
try:
    import orjson
finally:
    signal.pthread_sigmask(signal.SIG_SETMASK, _BLOCKED)

from ndagent.jsonvalues import (  # noqa: E402
    ORJSON_DEPTH,
    EncodedJson,
    RawNumber,
    Reason,
    decode_tolerantly,
    with_room,
)
from ndagent.selection import LateSelection  # noqa: E402
from ndagent.sources import CHUNK_SIZE, Part, lines_before, open_input, source_name  # noqa: E402
from ndagent.terminal import quote  # noqa: E402 - orjson first, Ctrl-C held back

__all__ = [
    "BadLine",
    "Event",
    "MAX_LINE",
    "RawNumber",
    "Skipped",
    "Unreadable",
    "batches",
    "decode_line",
    "encode_line",
    "encode_value",
    "iter_items",
]

# The longest line kept (bytes): a longer one is reported once and passed over, so that
# an input with no newline (/dev/zero) cannot take all memory.
MAX_LINE = 64 << 20

# What one line may decode to.  Python holds a string or a number in at most about 17
# times the bytes of its JSON, but an object or an array in 56 to 200 bytes, from as
# little as 2 bytes (``{}``): a line of them would take 30 times its length.  So a line
# may hold at most MAX_CONTAINERS objects and arrays, or one per CONTAINER_SPAN bytes of
# it where that is more (its ``{`` and ``[`` counted before it is decoded, those inside
# strings too); a line with more is reported and passed over, undecoded.  A line then
# decodes to at most about 20 times its length, and 50 MB.
MAX_CONTAINERS = 1 << 18
CONTAINER_SPAN = 64

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# How many of its first bytes tell UTF-16 text without a byte order mark.
_UTF16_SPAN = 32
_CUT_OFF = "truncated line: the stream was cut off?"
_CUT_INSIDE = "truncated line: another event begins inside it (the stream was cut off?)"
_TWO_EVENTS = "two events on one line (a newline is missing)"
# How many bytes of a bad line are kept, to quote its start in messages.
_START = 240


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
    """A line that does not hold a JSON object; ``reason`` says why, in a few words, and
    ``start`` holds the line's first bytes, for ``message``.  ``tail``: the object that
    ends the line, where it begins after a ``:``, ``,`` or ``[`` (or None): one nested
    in a line cut short, or the first of a stream appended to a line cut just there,
    which a format tells apart (``cut_before_tail``)."""

    __slots__ = ("source", "line", "reason", "start", "tail")

    def __init__(self, source, line, reason, start=b"", tail=None):
        self.source = source
        self.line = line
        self.reason = reason
        self.start = start[:_START]
        self.tail = tail

    @property
    def cut_off(self):
        """Whether the line was cut short: the last line of its input, or one inside
        which another event begins."""
        return self.reason in (_CUT_OFF, _CUT_INSIDE)

    def cut_before_tail(self):
        """(this line as one cut short where its ``tail`` begins, the tail as the event
        of that line): once the tail is known to begin a run, which no object nested in
        a line does."""
        return (BadLine(self.source, self.line, _CUT_INSIDE, self.start),
                Event(self.source, self.line, self.tail))

    @property
    def message(self):
        """The reason, then the start of the line, quoted (bounded and escaped), so that
        a user sees what the line was without opening the file."""
        if not self.start:
            return self.reason
        return f'{self.reason}: "{quote(self.start.decode("utf-8", "replace"))}"'

    def __repr__(self):
        return f"BadLine({self.source!r}, {self.line}, {self.reason!r})"


class Skipped:
    """Lines from ``line`` on that cannot hold a wanted event, left undecoded; their
    bytes are ``text[begin:end]`` (whole lines; None where they are not at hand), or
    ``value`` is the one line's, decoded already, for a reader that needs to know what
    they are after all (``lines``)."""

    __slots__ = ("source", "line", "text", "begin", "end", "value")
    type = None

    def __init__(self, source, line, text=None, begin=0, end=0, value=None):
        self.source = source
        self.line = line
        self.text, self.begin, self.end = text, begin, end
        self.value = value

    def known(self):
        """Whether what the lines are can be told (``lines``)."""
        return self.text is not None or self.value is not None

    def lines(self):
        """(line number, decoded value or a reason) of each of the lines, in order, as
        decoding them hands them on (a line cut short, then another stream appended to
        it, gives the appended object)."""
        text, number = self.text, self.line
        if text is None:
            if self.value is not None:
                yield number, self.value
            return
        decoder, items = _Lines(self.source, None, False, True), []
        for line in text[self.begin:self.end].split(b"\n"):
            if line.strip():
                decoder._add(line, number, items.append)
                for item in items:
                    yield item.line, item.data if item.__class__ is Event else item.reason
                items.clear()
            number += 1

    def since(self, number):
        """The same lines from line ``number`` on (one of them)."""
        text, begin = self.text, self.begin
        if text is None or number == self.line:
            return self
        for _ in range(number - self.line):
            begin = text.index(b"\n", begin) + 1
        return Skipped(self.source, number, text, begin, self.end)

    def __repr__(self):
        return f"Skipped({self.source!r}, {self.line})"


class Unreadable:
    """An input that could not be opened (``line`` None) or read to its end (``line``:
    the first line not read); ``reason`` is the OS's word (``os_error``), or why the
    input cannot be read as UTF-8 text."""

    __slots__ = ("source", "line", "reason", "os_error")

    def __init__(self, source, line, reason, os_error=True):
        self.source = source
        self.line = line
        self.reason = reason
        self.os_error = os_error

    def __repr__(self):
        return f"Unreadable({self.source!r}, {self.line}, {self.reason!r})"


def decode_line(line, exact=False):
    """Decode one line: a dict, or a short reason string when it holds no JSON object
    ("" for a blank line).  orjson reads integers beyond 64 bits as floats; ``exact``
    keeps them exact, at the cost of a scan of the line (for values that are printed
    again)."""
    value = _decode(line, _loads_exactly if exact else orjson.loads)
    if value.__class__ is Reason:
        return str(value)
    if value.__class__ is dict:
        return value
    return f"not a JSON object but {_json_kind(value)}"


def encode_line(value):
    """Encode a value as one compact JSON line, newline included."""
    return _encode(value, orjson.OPT_APPEND_NEWLINE, b"\n")


def encode_value(value):
    """A value held as its compact JSON (``EncodedJson``), written as it stands by
    ``encode_line``."""
    return EncodedJson(_encode(value, 0, b""))


def _encode(value, option, end):
    try:
        return orjson.dumps(value, default=_written_as_it_stands, option=option)
    except TypeError:
        # Nesting deeper than orjson writes (255 levels; it reads 1024) and integers
        # beyond 64 bits that were computed get here.
        return _encode_slowly(value) + end


def _written_as_it_stands(value):
    if value.__class__ is RawNumber:
        return orjson.Fragment(value.text.encode())
    if value.__class__ is EncodedJson:
        return orjson.Fragment(value.data)
    raise TypeError


def _encode_slowly(value):
    """The stdlib json in orjson's place, with more room than decoding had (so that
    whatever was decoded can be encoded from deeper in the stack).  RawNumbers go in as
    unguessable placeholder strings that are then replaced by their text, and so do
    EncodedJson values."""
    texts = []
    token = os.urandom(8).hex()

    def placeholder(item):
        if item.__class__ is RawNumber:
            texts.append(item.text)
        elif item.__class__ is EncodedJson:
            texts.append(item.data.decode("utf-8", "surrogatepass"))
        else:
            raise TypeError(f"cannot encode {type(item).__name__}")
        return f"\ue000{token}:{len(texts) - 1}\ue000"

    text = with_room(2 * ORJSON_DEPTH, json.dumps, value, ensure_ascii=False,
                      separators=(",", ":"), default=placeholder)
    if texts:  # in one pass: one search of the whole text per placeholder was quadratic
        text = re.sub(f'"\ue000{token}:([0-9]+)\ue000"', lambda found: texts[int(found[1])],
                      text)
    return text.encode("utf-8", "surrogatepass")


class _Inexact(ValueError):
    """orjson read the line, but it may hold an integer beyond 64 bits (read inexactly)."""

    msg = "an integer beyond 64 bits"


def _loads_exactly(line):
    """orjson.loads, but a line with a run of 19 digits or more (maybe an integer beyond
    64 bits) is left to the tolerant decoder.  (Turning every digit into 0 and looking
    for 19 zeros is many times faster than a regular expression.)"""
    value = orjson.loads(line)
    if _may_be_inexact(line):
        raise _Inexact
    return value


def _may_be_inexact(data):
    """Whether ``data`` holds a run of 19 digits or more that may be a number, which
    orjson may read inexactly (``_loads_exactly``).  A number begins after a colon, a
    bracket, a comma, a space or a minus sign: a run after a letter (an id such as
    ``msg_0000000600043737879``) is inside a string."""
    return (_NINETEEN_DIGITS in data.translate(_DIGITS_TO_ZERO)
            and _NUMBER_OF_NINETEEN_DIGITS.search(data) is not None)


_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_DIGITS = b"0" * 19
_NUMBER_OF_NINETEEN_DIGITS = re.compile(rb"[:\[,\s-][0-9]{19}")
_NOT_DECODED = (orjson.JSONDecodeError, _Inexact)
_UNREAD = object()  # what a line orjson did not read decodes to, for _Lines

# The share of a block's lines its selection must take for the next block to be read by
# _Lines._selected_densely: the search for the lines to decode then costs more than the
# few lines it passes over.
DENSE = 7 / 8
DENSE_SAMPLE = 64  # lines, however many blocks they came in (some blocks are one line)


def _json_kind(value):
    if type(value) is list:
        return "an array"
    if type(value) is str:
        return "a string"
    if value is None or type(value) is bool:
        return "a literal"
    return "a number"


def _decode(line, loads):
    """The JSON value of a line, or a ``Reason``."""
    try:
        return loads(line)
    except _NOT_DECODED as error:
        return decode_tolerantly(line, error.msg)


# How many places a line that does not decode is tried from, looking for an object
# that begins inside it.
_RECOVERY_TRIES = 64


def _recover(line, loads):
    """(offset, value, nested) of a whole object that begins inside a line that does not
    decode and runs to its end: a stream cut off, then another appended to it.  Places
    where ``{"type"`` begins are tried first, from the right, then the other ``{``; None
    when none decodes within a few tries.  A ``{`` after ``:``, ``,`` or ``[`` is tried
    last, and is ``nested``: there an object nested in the line cut short may begin as
    well (the line cut just after it), which is no event of its own; the appended
    stream's first object may begin there too (the line cut just after a ``:``), and
    is one.  Only its format can tell them apart (``BadLine.tail``)."""
    free, nested = [], []
    for match in re.finditer(rb'\{[ \t\r]*"', line):
        place = match.start()
        if place:
            before = line[:place].rstrip(b" \t\r")[-1:]
            (nested if before in b":,[" else free).append(place)
    tries = _RECOVERY_TRIES
    for places in (free, nested):
        typed = {place for place in places
                 if line.startswith(b'type"', line.index(b'"', place) + 1)}
        for place in sorted(places, key=lambda place: (place in typed, place),
                            reverse=True)[:tries]:
            value = _decode(line[place:], loads)
            if value.__class__ is dict:
                return place, value, places is nested
        tries -= min(tries, len(places))
    return None


class _Lines:
    """Turns blocks of whole lines of one input into items, numbering lines as it goes."""

    def __init__(self, source, selection, exact, every_line):
        self.source = source
        self.loads = _loads_exactly if exact else orjson.loads
        self.every_line = every_line
        self.late = None
        if selection.__class__ is LateSelection:
            self.late, selection = selection, None
        self._choose(selection)
        self.number = 0
        # Whether the selection took nearly all of the last lines read: the next block is
        # then read by _selected_densely, which gives the same items at less cost.
        self.dense = False
        self.sample = (0, 0)  # (lines, those the selection took) since the last choice

    def _choose(self, selection):
        self.wants = None if selection is None else selection.wants
        self.selection = None if self.every_line else selection

    def block(self, data, begin=0, end=None):
        """Items of ``data[begin:end]``, whole lines each ending in a newline (offsets,
        so that a chunk read is not copied)."""
        if self.late is not None and self.late.selection is not None:
            self._choose(self.late.selection)
            self.late = None
        if end is None:
            end = len(data)
        # Only a block longer than MAX_CONTAINERS may hold a line of too many containers.
        if end - begin > MAX_CONTAINERS and _containers(data, begin, end) > MAX_CONTAINERS:
            return self._dense(data, begin, end)
        return self._block(data, begin, end)

    def _block(self, data, begin, end):
        if self.selection is None:
            return self._all(data[begin:end] if begin or end < len(data) else data)
        if self.dense:
            return self._selected_densely(data, begin, end)
        return self._selected(data, begin, end)

    def _dense(self, data, begin, end):
        """Items of a block that may hold lines of too many objects and arrays: each is
        reported and passed over, the other lines are read as usual."""
        items = []
        done = begin  # where the lines not yet read begin
        start = begin
        while start < end:
            stop = data.find(b"\n", start, end) + 1 or end
            reason = _too_dense(data, start, stop)
            if reason is not None:
                if done < start:
                    items += self._block(data, done, start)
                self.number += 1
                items.append(BadLine(self.source, self.number, reason,
                                     data[start:start + _START]))
                done = stop
            start = stop
        if done < end:
            items += self._block(data, done, end)
        return items

    def last(self, line):
        """Items of a last line that has no newline: if it does not decode, it was cut."""
        self.number += 1
        reason = _too_dense(line, 0, len(line))
        if reason is not None:
            return [BadLine(self.source, self.number, reason, line)]
        items = []
        self._add(line, self.number, items.append, last=True)
        return items

    def overlong(self, limit, start):
        """The item of a line longer than ``limit`` bytes, which is passed over."""
        self.number += 1
        return BadLine(self.source, self.number,
                       f"line longer than {_bytes(limit)} (--max-line): passed over", start)

    def _all(self, data):
        items = []
        append = items.append
        if self.loads is not _loads_exactly:
            self._lines(data, self.loads, append)
            return items
        # Read exactly, only a line with a run of 19 digits needs more than orjson: such
        # lines are found in one scan of the block, and the stretches between them are
        # read as they would be line by line.
        digits = data.translate(_DIGITS_TO_ZERO)
        position = 0
        found = digits.find(_NINETEEN_DIGITS)
        while found >= 0:
            start = data.rfind(b"\n", 0, found) + 1
            end = data.find(b"\n", found) + 1
            self._lines(data[position:start], orjson.loads, append)
            self._lines(data[start:end], _loads_exactly, append)
            position = end
            found = digits.find(_NINETEEN_DIGITS, end)
        self._lines(data[position:] if position else data, orjson.loads, append)
        return items

    def _lines(self, data, loads, append):
        """The items of whole lines, each decoded by ``loads`` first."""
        source, wants, add = self.source, self.wants, self._add
        number = self.number
        lines = data.split(b"\n")
        lines.pop()
        for line in lines:
            number += 1
            try:
                value = loads(line)
            except _NOT_DECODED:
                add(line, number, append)
                continue
            if value.__class__ is dict and wants is None:
                append(Event(source, number, value))
            else:
                add(line, number, append, value)
        self.number = number

    def _add(self, line, number, append, value=None, last=False):
        """The items of one line (``value``: its decoding, when it has one)."""
        source = self.source
        if value is None:
            value = _decode(line, self.loads)
        if value.__class__ is Reason:
            if value:
                self._bad(line, number, str(value), append, last)
        elif value.__class__ is not dict:
            append(BadLine(source, number, f"not a JSON object but {_json_kind(value)}",
                           line))
        elif self.wants is None or self.wants(value):
            append(Event(source, number, value))
        else:
            append(Skipped(source, number, line, 0, len(line)))

    def _bad(self, line, number, reason, append, last):
        """A line that does not decode: if a whole object begins inside it, the part
        before is reported and the object handed on, with the same line number; if it
        begins where an object nested in the line may begin, the line is reported, the
        object kept as its ``tail`` for the frame to judge."""
        found = _recover(line, self.loads) if b"{" in line[1:] else None
        if found is None or found[2]:
            append(BadLine(self.source, number, _CUT_OFF if last else reason, line,
                           None if found is None else found[1]))
            return
        place, value, _ = found
        before = _decode(line[:place], self.loads)
        if before.__class__ is dict:
            append(BadLine(self.source, number, _TWO_EVENTS, line))
            self._add(line[:place], number, append, before)
        else:
            append(BadLine(self.source, number, _CUT_INSIDE, line))
        self._add(line[place:], number, append, value)

    def take(self, text, start, end, number, append):
        """The items of the line ``text[start:end]``, to decode (``_add`` made quick for a
        line that decodes to a wanted object)."""
        line = text[start:end]
        try:
            value = self.loads(line)
        except _NOT_DECODED:
            self._add(line, number, append)
            return
        if value.__class__ is dict and self.wants(value):
            append(Event(self.source, number, value))
        else:
            self._add(line, number, append, value)

    def _selected(self, text, begin, end):
        """Decode only the lines that may hold a wanted event (``Selection.newlines``);
        each stretch of lines passed over becomes one ``Skipped`` item."""
        items = []
        append = items.append
        source, take = self.source, self.take
        number = self.number
        count, find = text.count, text.find
        position = begin  # where the lines not yet numbered begin
        newlines = self.selection.newlines(text, begin, end)
        for newline in newlines:
            start = newline + 1
            if start > position:
                append(Skipped(source, number + 1, text, position, start - 1))
                number += count(b"\n", position, start)
            position = find(b"\n", start) + 1
            number += 1
            take(text, start, position - 1, number, append)
        if position < end:
            append(Skipped(source, number + 1, text, position, end - 1))
            number += count(b"\n", position, end)
        self._measure(number - self.number, len(newlines))
        self.number = number
        return items

    def _measure(self, lines, taken):
        """Count the lines of a block and those its selection took; every DENSE_SAMPLE
        lines or more, choose how the next block is read (``dense``)."""
        self.sample = (self.sample[0] + lines, self.sample[1] + taken)
        if self.sample[0] >= DENSE_SAMPLE:
            self.dense = self.sample[1] >= DENSE * self.sample[0]
            self.sample = (0, 0)

    def _selected_densely(self, text, begin, end):
        """The items ``_selected`` gives, for a block most of whose lines the selection
        takes: each line is decoded, and one that gives no wanted event is tested
        (``Selection.selects``) for whether it was to be decoded or passed over."""
        items = []
        append = items.append
        source, loads, wants, selects = self.source, self.loads, self.wants, self.selection.selects
        number = self.number
        lines = text[begin:end].split(b"\n")
        lines.pop()
        start = begin
        passed = None  # (line number, offset) of the first of the lines passed over in hand
        count = 0  # of the lines passed over
        for line in lines:
            number += 1
            stop = start + len(line)
            try:
                value = loads(line)
            except _NOT_DECODED:
                value = _UNREAD
            wanted = value.__class__ is dict and wants(value)
            if not wanted and not selects(text, start, stop):
                count += 1
                if passed is None:
                    passed = number, start
            else:
                if passed is not None:
                    append(Skipped(source, passed[0], text, passed[1], start - 1))
                    passed = None
                if wanted:
                    append(Event(source, number, value))
                elif value is _UNREAD:
                    self._add(line, number, append)
                else:
                    self._add(line, number, append, value)
            start = stop + 1
        if passed is not None:
            append(Skipped(source, passed[0], text, passed[1], end - 1))
        self._measure(len(lines), len(lines) - count)
        self.number = number
        return items


def _containers(data, begin, end):
    """How many objects and arrays ``data[begin:end]`` may hold: its ``{`` and ``[``."""
    return data.count(b"{", begin, end) + data.count(b"[", begin, end)


def _too_dense(data, begin, end):
    """Why the line ``data[begin:end]`` is not decoded, when it holds more objects and
    arrays than a line may (MAX_CONTAINERS, or one per CONTAINER_SPAN bytes); else None."""
    most = max(MAX_CONTAINERS, (end - begin) // CONTAINER_SPAN)
    if end - begin <= most:
        return None
    count = _containers(data, begin, end)
    if count <= most:
        return None
    return (f"line of {count} objects and arrays in {end - begin} bytes, more than a line "
            f"may hold (at most {MAX_CONTAINERS}, or one per {CONTAINER_SPAN} bytes): "
            "passed over")


def _bytes(size):
    """A size for people: 64 MiB, 512 KiB, 1000 bytes."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} bytes"


def batches(inputs=("-",), want=None, chunk_size=CHUNK_SIZE, exact=False, every_line=False,
            max_line=MAX_LINE):
    """Yield lists of items, one list per chunk read, from the inputs in order.

    ``inputs`` holds paths, ``"-"`` for standard input, or binary file objects.  With
    ``want`` (a ``Selection``), lines that cannot hold a wanted event are not decoded:
    they come as ``Skipped`` items, and so do decoded events that are not wanted; a
    ``LateSelection`` selects from the block after the one in which it is set.
    ``every_line``: decode every line all the same (so that no bad line goes unseen),
    handing over only the wanted events.  ``exact``: see ``decode_line``.  A line longer
    than ``max_line`` bytes is reported as a BadLine and passed over unread.

    A ``Part`` of a regular file is read as an input of its own."""
    chunk_size = min(chunk_size, max_line)  # so that no line inside one chunk is too long
    for name in inputs or ("-",):
        source = source_name(name)
        try:
            read, handle = open_input(name)
        except OSError as error:
            yield [Unreadable(source, None, error.strerror or str(error))]
            continue
        try:
            lines = _Lines(source, want, exact, every_line)
            at_start = True
            if name.__class__ is Part:
                lines.number = lines_before(name.fd, name.begin)
                at_start = name.begin == 0
            yield from _read_batches(source, read, lines, chunk_size, max_line, at_start)
        finally:
            if handle is not None:
                handle.close()


_UTF16 = "UTF-16 text, not UTF-8: convert it first (iconv -f UTF-16 -t UTF-8)"


def _read_batches(source, read, lines, chunk_size, max_line, at_start=True):
    """The batches of one input (``at_start``: it begins at the start of its file,
    where a byte order mark may stand)."""
    pieces = []  # the start of a line not yet ended
    held = 0  # their length
    passing = False  # inside a line longer than max_line, until its newline
    for chunk in _chunks(source, read, lines, chunk_size, at_start):
        if chunk.__class__ is Unreadable:
            yield [chunk]
            return
        if passing:
            newline = chunk.find(b"\n")
            if newline < 0:
                continue
            chunk = chunk[newline + 1:]
            passing = False
        end = chunk.rfind(b"\n")
        if end < 0:
            pieces.append(chunk)
            held += len(chunk)
            if held > max_line:
                passing = True
                yield [lines.overlong(max_line, _first_bytes(pieces, max_line + 1))]
                pieces.clear()
                held = 0
            continue
        items = []
        begin = 0  # where the chunk's lines not yet handled begin
        if pieces:  # the line begun in earlier chunks ends in this one
            begin = chunk.find(b"\n") + 1
            if held + begin - 1 > max_line:
                items.append(lines.overlong(
                    max_line, _first_bytes((*pieces, chunk[:begin]), max_line + 1)))
            else:
                pieces.append(chunk[:begin])
                items += lines.block(b"".join(pieces))
            pieces.clear()
            held = 0
        if end + 1 < len(chunk):
            pieces.append(chunk[end + 1:])
            held = len(chunk) - end - 1
        if begin <= end:
            items += lines.block(chunk, begin, end + 1)
        yield items
    if pieces:
        data = b"".join(pieces)
        if data.strip():
            yield lines.last(data)


def _chunks(source, read, lines, chunk_size, at_start):
    """The chunks of an input, a byte order mark taken off its start; an Unreadable
    item last where a read fails or the input is UTF-16."""
    start = b"" if at_start else None  # the first bytes of the input, until there are 3
    while True:
        try:
            chunk = read(chunk_size)
        except OSError as error:
            yield Unreadable(source, lines.number + 1, error.strerror or str(error))
            return
        if start is not None:  # at the start of the input: a byte order mark?
            if chunk and len(start) + len(chunk) < 3:
                start += chunk
                continue
            chunk, start = start + chunk, None
            if _is_utf16(chunk):
                yield Unreadable(source, 1, _UTF16, os_error=False)
                return
            if chunk.startswith(_BOM):
                chunk = chunk[3:]
                if not chunk:
                    continue
        if not chunk:
            return
        yield chunk


def _is_utf16(head):
    """Whether an input that begins with ``head`` is UTF-16 text: a byte order mark, or
    (with none) a JSON object whose first characters ({" then more) each stand beside
    a NUL byte, which no UTF-8 stream of JSON holds (one damaged line that begins with
    a NUL byte or two does not make the whole input unread)."""
    if head[:2] in _UTF16_BOMS:
        return True
    head = head[:_UTF16_SPAN]
    if len(head) < 4:
        return False
    if head[:1] == b"{":
        nuls, text = head[1::2], head[::2]
    elif head[1:2] == b"{":
        nuls, text = head[::2], head[1::2]
    else:
        return False
    return text[1:2] == b'"' and nuls.count(0) == len(nuls) and 0 not in text


def _first_bytes(pieces, most):
    """The first ``most`` bytes (no more than a message quotes) of a line held in
    pieces that holds more: the same however the reads cut it."""
    most = min(most, _START)
    start = b""
    for piece in pieces:
        start += piece[:most - len(start)]
        if len(start) >= most:
            break
    return start


def iter_items(inputs=("-",), want=None):
    """Every item of the inputs, one at a time (``batches`` without the batching)."""
    for batch in batches(inputs, want):
        yield from batch
