"""Keeping stream text from driving the terminal.

Stream data is untrusted: a file name or a shell command in it can hold escape
sequences.  Whatever ndagent prints for people goes through ``escape_controls``, which
spells out every C0 and C1 control character and DEL (``\\n``, ``\\x1b``, ``\\x9b``) and
the invisible characters that reorder text (``\\u202e``), so one record stays one line
and what is shown is what the stream holds.
"""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


# Invisible characters that reorder or break what a terminal shows: the bidirectional
# controls (as in "Trojan Source") and the line and paragraph separators.
_INVISIBLE = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
              0x2028, 0x2029)


def _escape_table(keep):
    table = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}
    table.update({code: f"\\u{code:04x}" for code in _INVISIBLE})
    table.update({ord(char): text for char, text in _NAMED.items()})
    for char in keep:
        table.pop(ord(char), None)
    return table


_ALL = _escape_table("")
_KEEP_LINES = _escape_table("\n\t")


def escape_controls(text, keep_lines=False):
    """``text`` with control characters spelt out; ``keep_lines`` leaves ``\\n`` and
    ``\\t`` alone, for prose (an answer) rather than one-line records."""
    return text.translate(_KEEP_LINES if keep_lines else _ALL)


# The most characters of stream data a message or diagnostic quotes: a hostile stream
# must not make one line of stderr as long as the stream (a 1 MB session_id).
QUOTE_LIMIT = 60


def quote(text, limit=QUOTE_LIMIT):
    """Stream text for a message: at most ``limit`` characters, then ``...``, with
    control and invisible characters spelt out."""
    if len(text) > limit:
        text = text[:limit] + "..."
    return escape_controls(text)
