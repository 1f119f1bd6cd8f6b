"""What JSON allows and orjson does not read, or not exactly: numbers beyond 64 bits
or beyond a double (kept as written, ``RawNumber``) and lone surrogate escapes (made
U+FFFD), for the decoder's second chance at a line (``ndagent.decoder``)."""

import json  # every command loads it anyway (ndagent.formats.base): no lazier here
import re
import sys

# How deep orjson reads nesting.  The stdlib json, which stands in for orjson on the
# rare lines it cannot handle, recurses once per level: Python's default limit of 1000
# frames is not enough for that.
ORJSON_DEPTH = 1024


class RawNumber:
    """A JSON number that orjson cannot hold, as written: ``1e400``, an integer of 5000
    digits.  Encoded again as written; not a number for anything computed (a duration
    from it is null), and never converted (Python's int of a long text is slow)."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __eq__(self, other):
        return other.__class__ is RawNumber and other.text == self.text

    __hash__ = None

    def __repr__(self):
        return f"RawNumber({self.text!r})"


class EncodedJson:
    """A JSON value held as its compact encoding (``data``, UTF-8 bytes) and written
    again as it stands: what a Reader keeps of a run for long costs the length of its
    JSON alone, a measured figure, and is not encoded a second time when printed."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data

    def __eq__(self, other):
        return other.__class__ is EncodedJson and other.data == self.data

    __hash__ = None

    def __repr__(self):
        return f"EncodedJson({self.data!r})"


def tolerated():
    """What the tolerant decoder may read where orjson did not: a surrogate escape, a run
    of 19 digits, an exponent of three digits."""
    global _TOLERATED_PATTERN
    if _TOLERATED_PATTERN is None:
        _TOLERATED_PATTERN = re.compile(rb"\\u[dD][89a-fA-F]|[0-9]{19}|[eE][+-]?[0-9]{3}")
    return _TOLERATED_PATTERN


_TOLERATED_PATTERN = None


class Reason(str):
    """Why a line holds no JSON value (empty for a blank line): not a JSON string."""


def decode_tolerantly(line, reason):
    """Second chance for what orjson rejects (or reads inexactly) but JSON allows: lone
    surrogate escapes (made U+FFFD, so that every string handed on is valid Unicode) and
    numbers beyond 64 bits (kept as RawNumber).  What the stdlib json rejects too gets
    the reason orjson gave (a ``Reason``)."""
    if not line.strip():
        return Reason("")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return Reason("not valid UTF-8")
    if text.startswith("\ufeff"):
        return Reason("not JSON: a byte order mark inside the input")
    if tolerated().search(line) is None:
        return Reason("not JSON: " + reason)
    try:
        value = with_room(ORJSON_DEPTH, json.loads, text, parse_constant=reject_constant,
                          parse_int=parse_int, parse_float=parse_float)
    except RecursionError:
        return Reason("not JSON: nested too deeply")
    except ValueError:
        return Reason("not JSON: " + reason)
    return replace_surrogates(value) if type(value) in (dict, list) else value


def with_room(frames, function, *args, **kwargs):
    """``function(*args, **kwargs)`` with ``frames`` more frames of recursion allowed."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + frames)
    try:
        return function(*args, **kwargs)
    finally:
        sys.setrecursionlimit(limit)


def reject_constant(name):
    raise ValueError(name)


def parse_int(text):
    """An int when it fits in 64 bits, as orjson reads it; else the text as written."""
    if len(text) < 19:
        return int(text)
    if len(text) <= 20:
        value = int(text)
        if -(1 << 63) <= value < 1 << 64:
            return value
    return RawNumber(text)


def parse_float(text):
    """A float, as orjson reads it; one beyond a double (1e400) as written."""
    value = float(text)
    if value in (_INFINITY, -_INFINITY):
        return RawNumber(text)
    return value


_INFINITY = float("inf")


def replace_surrogates(value):
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
    return re.sub("[\ud800-\udfff]", "\ufffd", text)


def _has_surrogate(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
