"""Keeping stream text from driving or deceiving the terminal.

Stream data is untrusted: a file name or a shell command in it can hold escape
sequences, characters that reorder text (``\\u202e``) and characters that show nothing
(``README\\u200b.md`` looks like ``README.md``).  Whatever ndagent prints for people goes
through ``escape_controls``, which spells these out as Python writes them: ``\\n``,
``\\r``, ``\\t``, then ``\\xhh`` below U+0100, ``\\uhhhh``, and ``\\Uhhhhhhhh`` beyond
U+FFFF.  Spelt out are:

- every C0 and C1 control character and DEL (``\\x1b``, ``\\x9b``, ``\\x7f``);
- the bidirectional controls (as in "Trojan Source"), the line and paragraph separators,
  the deprecated format characters U+206A-206F, the interlinear annotation characters
  U+FFF9-FFFB and the tag characters U+E0000-E007F (``\\U000e0001``: invisible text);
- in one-line records (paths, commands, names, messages) and in code (a transcript's
  commands, arguments and tool results) but not in prose (an answer, where emoji and
  some scripts need them), the characters that show nothing or change only the glyph
  before them: U+00AD, U+034F, U+115F, U+1160, U+180B-180F, U+200B-200D, U+2060-2065,
  U+3164, U+FE00-FE0F, U+FEFF, U+FFA0, U+1BCA0-1BCA3, U+1D173-1D17A and
  U+E0100-E01EF (the variation selectors, which can also carry hidden data).

``escape_field`` doubles backslashes first, so that a literal ``\\x1b`` (four characters)
and a real ESC differ; ``quote`` also cuts stream text in a message to ``QUOTE_LIMIT``
characters; ``escape_json`` writes the same characters as ``\\u`` escapes in JSON bound
for a terminal.
"""

import re

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

_CONTROLS = (*range(0x20), *range(0x7F, 0xA0))

# Invisible characters that reorder, hide or break what a terminal shows: the
# bidirectional controls, the line and paragraph separators, the deprecated format
# characters, the interlinear annotation characters and the tag characters.
_INVISIBLE = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x2070),
              0x2028, 0x2029, *range(0xFFF9, 0xFFFC), *range(0xE0000, 0xE0080))

# Invisible characters that text needs (joiners in emoji and Indic scripts, the soft
# hyphen, the word joiner, the byte order mark as a zero-width no-break space, variation
# selectors, Hangul fillers, format controls of some scripts): spelt out in one-line
# records and code, left alone in prose.
_ZERO_WIDTH = (0x00AD, 0x034F, 0x115F, 0x1160, *range(0x180B, 0x1810), *range(0x200B, 0x200E),
               *range(0x2060, 0x2066), 0x3164, *range(0xFE00, 0xFE10), 0xFEFF, 0xFFA0,
               *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B), *range(0xE0100, 0xE01F0))


def _spelling(code):
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


_ALL = {code: _spelling(code) for code in (*_CONTROLS, *_INVISIBLE, *_ZERO_WIDTH)}
_ALL.update({ord(char): text for char, text in _NAMED.items()})
_CODE = dict(_ALL)
del _CODE[ord("\n")], _CODE[ord("\t")]
_KEEP_LINES = dict(_CODE)
for _code in _ZERO_WIDTH:
    del _KEEP_LINES[_code]


# The ASCII characters that _CODE and _KEEP_LINES spell out: the C0 controls but tab and
# newline, and DEL.  An ASCII text without them is left as it is; telling so (in C, on
# bytes) costs less than the translation, which looks up each character.
_ASCII_SPELT = bytes((*range(0x09), *range(0x0B, 0x20), 0x7F))


def _spells_nothing(text):
    """Whether ``escape_code`` and ``escape_prose`` leave ``text`` as it is, told
    quickly for an ASCII text (False: not known)."""
    if not text.isascii():
        return False
    data = text.encode("ascii")
    return len(data.translate(None, _ASCII_SPELT)) == len(data)


def escape_controls(text):
    """``text`` with control and invisible characters spelt out, for one line."""
    return text.translate(_ALL)


def escape_prose(text):
    """``text`` that is prose (an answer) rather than a one-line record, with control
    and invisible characters spelt out but ``\\n``, ``\\t`` and the zero-width
    characters."""
    return text if _spells_nothing(text) else text.translate(_KEEP_LINES)


def escape_code(text):
    """``text`` of several lines that is code or a tool's output (a command, a diff, a
    file read), not prose: ``\\n`` and ``\\t`` are left alone, but a zero-width character
    is spelt out, where it could hide a difference in what a reader checks."""
    return text if _spells_nothing(text) else text.translate(_CODE)


def escape_field(text):
    """A path, command, name or other stream text for one line: backslashes doubled,
    then ``escape_controls``, so that what is shown tells apart every string (a literal
    ``\\x1b`` is shown ``\\\\x1b``)."""
    return escape_controls(text.replace("\\", "\\\\"))


def tsv_row(values):
    """One TSV row, as bytes with its newline: a field per value, empty for None, else
    as ``escape_field`` writes it, so that a value never spans fields or rows
    (backslash, tab, newline, carriage return as \\\\, \\t, \\n, \\r) and no other
    control or invisible character reaches a terminal raw (\\x1b, \\u200b, ...)."""
    row = "\t".join("" if value is None else escape_field(str(value)) for value in values)
    return row.encode("utf-8", "replace") + b"\n"


# The most characters of stream data a message or diagnostic quotes: a hostile stream
# must not make one line of output as long as the stream (a 1 MB session_id).  Spelt
# out, a quote is at most 10 times as long (``\\U000e0001``), plus the ``...``.
QUOTE_LIMIT = 60


def quote(text, limit=QUOTE_LIMIT):
    """Stream text for a message: ``shortened`` to ``limit``, written as
    ``escape_field`` writes it."""
    return escape_field(shortened(text, limit))


def shortened(text, limit):
    """``text`` cut to ``limit`` characters, ``...`` after the cut."""
    return text if len(text) <= limit else text[:limit] + "..."


# (pattern, replacements) for escape_json, made on first use: only JSON written to a
# terminal needs them.
_json_escapes = None


def escape_json(data):
    """Encoded JSON (UTF-8) with DEL and the characters ``escape_controls`` spells out
    beyond ASCII written as ``\\u`` escapes (a surrogate pair beyond U+FFFF): the same
    JSON value, harmless on a terminal.  orjson escapes only C0, and these characters
    can only be in strings."""
    global _json_escapes
    if _json_escapes is None:
        _json_escapes = _json_escape_pattern()
    pattern, replacements = _json_escapes
    return pattern.sub(lambda match: replacements[match[0]], data)


def _json_escape_pattern():
    """A bytes pattern of the UTF-8 encodings of the characters ``escape_json`` escapes
    (one alternative per leading bytes, the last byte a set), and each one's escape."""
    replacements = {}
    last_bytes = {}
    for code in _ALL:
        if code < 0x7F:
            continue
        encoded = chr(code).encode()
        if code < 0x10000:
            escape = f"\\u{code:04x}"
        else:
            high, low = divmod(code - 0x10000, 0x400)
            escape = f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
        replacements[encoded] = escape.encode()
        last_bytes.setdefault(encoded[:-1], []).append(encoded[-1])
    alternatives = [
        "".join(f"\\x{byte:02x}" for byte in lead)
        + "[" + "".join(f"\\x{byte:02x}" for byte in sorted(lasts)) + "]"
        for lead, lasts in last_bytes.items()]
    return re.compile("|".join(alternatives).encode()), replacements
