"""Which lines of a stream the decoder decodes: a ``Selection`` tells, from a line's
bytes alone and soundly, whether it may hold an object with a format's markers, so
that the lines that cannot are passed over undecoded (the prefilter)."""

import re
from itertools import repeat


class LateSelection:
    """A selection known only once the first lines are read (the agent of a standard
    input is told from them): every line is decoded until ``selection`` is set, and the
    blocks read after that are selected by it."""

    __slots__ = ("selection",)

    def __init__(self):
        self.selection = None


class Selection:
    """Which lines a reader needs decoded: those that may hold an object in which, for
    one of the ``markers``, every (key, value) pair holds.  A marker is a tuple of
    (key, value) pairs of plain ASCII names: ``(("type", "call"), ("subtype",
    "ended"))``; a key may also be a path into nested objects, a tuple of names
    (``(("step", "kind"), "call")``: the object's ``step`` is an object whose ``kind``
    is ``"call"``).  The format gives the markers; this module knows no event.

    The test on the bytes is sound whatever the key order, duplicate keys or escapes
    of a line: a line is passed over only when it looks like an object (starts with
    ``{``, ends with ``}``), holds no ``"KEY":"VALUE"`` of a marker's first pair
    anywhere (space allowed around the colon; of a path, its last name) or not the
    quoted ``"VALUE"`` of each of its other pairs, and no ``\\u00XX`` escape of a
    printable ASCII character, the only other way to spell a key or value.  No
    decoding of such a line can give an object with a marker's pairs, however its keys
    repeat (the last counts)."""

    def __init__(self, markers):
        # first key -> {first value -> [the marker's other pairs, ...]}
        self.decoded = {}
        for marker in markers:
            marker = tuple(marker)
            for key, value in marker:
                names = key if key.__class__ is tuple else (key,)
                if not (names and all(_is_plain(name) for name in (*names, value))):
                    raise ValueError(f"a marker is made of plain names: {(key, value)!r}")
            (key, value), rest = marker[0], marker[1:]
            self.decoded.setdefault(key, {}).setdefault(value, []).append(rest)
        self._patterns = None  # compiled when first needed: a Format makes a Selection
        # of its run starts only for ``wants``, at start-up
        # (key, values) when every marker is one pair of that key: the usual case.
        self.quick = None
        if len(self.decoded) == 1:
            (key, values), = self.decoded.items()
            if key.__class__ is str and all(() in rests for rests in values.values()):
                self.quick = key, frozenset(values)

    @property
    def patterns(self):
        """(pattern, {value (bytes): None when the value alone is enough, else the other
        pairs' values, quoted, per marker}, whether every value alone is enough).  A
        line holds a pair only if it holds the pair's value, quoted: that is how the
        other pairs are told."""
        if self._patterns is None:
            self._patterns = []
            for key, values in self.decoded.items():
                needles = {value.encode(): None if () in rests else tuple(
                               tuple(b'"%s"' % other.encode() for _, other in rest)
                               for rest in rests)
                           for value, rests in values.items()}
                name = key if key.__class__ is str else key[-1]
                self._patterns.append((re.compile(_pair_pattern(name, sorted(needles))),
                                       needles,
                                       all(rests is None for rests in needles.values())))
        return self._patterns

    def wants(self, data):
        """Whether a decoded object has every pair of one of the markers."""
        quick = self.quick
        if quick is not None:
            value = data.get(quick[0])
            return value.__class__ is str and value in quick[1]
        for key, values in self.decoded.items():
            value = _value_at(data, key)
            if value.__class__ is str:
                rests = values.get(value)
                if rests is not None:
                    for rest in rests:
                        if all(_value_at(data, name) == wanted for name, wanted in rest):
                            return True
        return False

    def newlines(self, text, begin, end):
        """The offsets of the newlines before the lines to decode among the whole lines of
        ``text[begin:end]`` (``begin`` is 0 or follows a newline; ``begin - 1`` for the
        first line), in order."""
        found = set()
        rfind, find = text.rfind, text.find
        floor = max(begin - 1, 0)  # rfind from here finds the newline before the first line
        for pattern, values, alone in self.patterns:
            if alone:  # the usual case, made quick (in C): every match selects its line
                found.update(map(rfind, repeat(b"\n"), repeat(floor),
                                 map(_MATCH_START, pattern.finditer(text, begin, end))))
                continue
            for match in pattern.finditer(text, begin, end):
                newline = rfind(b"\n", floor, match.start())
                rests = values[match.group(1)]
                if rests is None:
                    found.add(newline)
                elif newline not in found:
                    line_end = find(b"\n", newline + 1)
                    for needles in rests:
                        if all(find(needle, newline + 1, line_end) >= 0
                               for needle in needles):
                            found.add(newline)
                            break
        # Rare: a search for the escapes' fixed beginning (memchr-quick) costs less
        # than the regular expression's.
        first = find(_ESCAPE_BEGINS, begin, end)
        if first >= 0:
            found.update(map(rfind, repeat(b"\n"), repeat(floor),
                             map(_MATCH_START, _ESCAPE.finditer(text, first, end))))
        if text[begin:begin + 1] != b"{":
            found.add(begin - 1)
        last = end - 1
        for match in _SHAPE.finditer(text, begin, end):
            newline = match.start()
            if newline == begin or not _ends_object(text, newline):
                found.add(rfind(b"\n", floor, newline))
            if newline < last and text[newline + 1] != 123:  # "{"
                found.add(newline)
        return sorted(found)


    def selects(self, text, start, stop):
        """Whether ``newlines`` takes the line ``text[start:stop]`` (``stop``: its
        newline): the same test, made on one line."""
        if text[start:start + 1] != b"{" or not _ends_object(text, stop):
            return True
        for pattern, values, _ in self.patterns:
            for match in pattern.finditer(text, start, stop):
                rests = values[match.group(1)]
                if rests is None or any(all(text.find(needle, start, stop) >= 0
                                            for needle in needles) for needles in rests):
                    return True
        return _ESCAPE.search(text, start, stop) is not None


def _value_at(data, key):
    """The value of a decoded object at ``key``: a name, or a path of names."""
    if key.__class__ is str:
        return data.get(key)
    for name in key:
        if data.__class__ is not dict:
            return None
        data = data.get(name)
    return data


def _is_plain(name):
    return name.__class__ is str and name != "" and all(
        char.isascii() and (char.isalnum() or char in "_.-") for char in name)


def _pair_pattern(key, values):
    """``"KEY" : "VALUE"`` for any of the values (group 1), JSON space around the colon."""
    return (b'"' + re.escape(key.encode()) + rb'"[ \t\r]*:[ \t\r]*"('
            + b"|".join(re.escape(value) for value in values) + rb')"')


# The escape of a printable ASCII character, the one other way to spell a key or value.
_ESCAPE = re.compile(rb"\\u00[2-7][0-9a-fA-F]")
_ESCAPE_BEGINS = b"\\u00"
# A newline next to a line that does not look like an object: the line after does not
# start with "{", or (told by the caller) the line before does not end with "}".
_SHAPE = re.compile(rb"\n(?:(?!\{)|(?<!\}\n)(?<!\}\r\n))")
_MATCH_START = re.Match.start


def _ends_object(text, newline):
    """Whether the line that ends at ``newline`` ends with ``}`` (or ``}\r``)."""
    before = text[newline - 1]
    return before == 125 or (before == 13 and text[newline - 2] == 125)  # "}", "\r"
