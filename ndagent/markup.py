"""Stream text made safe for the machine-read outputs: GitHub Actions workflow commands,
XML (JUnit), GitHub-flavoured Markdown tables; and the one rule by which long text is
cut (``cut``).

Each function spells out control and invisible characters as ``ndagent.terminal`` does
(a no-op on text already quoted: ``terminal.quote``), then adds the escaping of its own
format, so that stream text can never end the element, the command or the table cell
it stands in, nor begin another.
"""

import re

from ndagent.terminal import escape_controls, escape_field, escape_prose, quote

# GitHub Actions workflow commands ('::error file=F,line=N,title=T::message'): what
# actions/toolkit's escapeData and escapeProperty replace, in that order, and what the
# runner undoes (ActionCommand.cs).  A property value may never hold '::' (the runner
# ends the properties at the first one), nor ',' (between properties).
_COMMAND_DATA = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_COMMAND_PROPERTY = (*_COMMAND_DATA, (":", "%3A"), (",", "%2C"))


def _replace(text, pairs):
    for old, new in pairs:
        text = text.replace(old, new)
    return text


def workflow_command(name, properties, message):
    """One workflow command line (no newline): ``name`` (error, warning), the
    ``properties`` ((key, value), ...; None values left out) and ``message``, each
    escaped so that the line is one command whatever they hold."""
    said = ",".join(f"{key}={_replace(str(value), _COMMAND_PROPERTY)}"
                    for key, value in properties if value is not None)
    return f"::{name} {said}::{_replace(message, _COMMAND_DATA)}"


# XML 1.0 forbids C0 controls but tab, LF and CR (escape_controls spells those out
# already), and U+FFFE, U+FFFF and lone surrogates, which it does not: spelt out here.
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
_XML_TEXT = {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"}
# In an attribute, also the quote, and the white space that attribute-value
# normalisation would turn into spaces.
_XML_ATTRIBUTE = {**_XML_TEXT, ord('"'): "&quot;", ord("\t"): "&#9;", ord("\n"): "&#10;",
                  ord("\r"): "&#13;"}


def _xml_chars(text):
    return _NOT_XML.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def xml_text(text):
    """Text for an XML element's content: controls spelt out (lines kept), ``&<>``
    escaped."""
    return _xml_chars(escape_prose(text)).translate(_XML_TEXT)


def xml_attribute(text):
    """Text for a double-quoted XML attribute value, in one line."""
    return _xml_chars(escape_controls(text)).translate(_XML_ATTRIBUTE)


# GitHub-flavoured Markdown tables: a '|' anywhere in a cell, inside a code span too,
# ends the cell unless escaped.
_BACKTICKS = re.compile("`+")


# The most characters of a one-line stream field a table cell or a report's name
# holds (a model of 100 000 characters is cut, and said to be: "...").
FIELD_LIMIT = 1000


def table_code(text):
    """A one-line field (a model, a command, FILE:LINE) as a code span in a table cell:
    cut to FIELD_LIMIT characters, fenced by one backtick more than its longest run of
    them, with a space inside each end where it begins or ends with one, and every '|'
    escaped; '' stays empty."""
    if not text:
        return ""
    text = quote(text, FIELD_LIMIT)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def table_row(cells):
    """One row of a Markdown table, of cells already made (numbers, ndagent's words,
    ``table_code``)."""
    return "| " + " | ".join(cells) + " |"


def cut(text, limit):
    """``text`` of more than ``limit`` characters cut in the middle: its first ``limit -
    limit // 4`` characters and its last ``limit // 4``, with a line between them
    saying how many were left out (the head holds a command's start, the tail the error
    that ended it).  Escape after cutting, so that no spelt-out escape is split."""
    if len(text) <= limit:
        return text
    return cut_of(text, text, len(text), limit)


def cut_of(head, tail, length, limit):
    """What ``cut`` makes of a text of ``length`` characters, more than ``limit``, that
    begins with ``head`` and ends with ``tail`` (each at least as long as what it keeps
    of them): a text kept in part as it came."""
    keep = limit // 4
    omitted = f"\n[… {length - limit:,} characters omitted …]\n"
    return head[:limit - keep] + omitted + (tail[len(tail) - keep:] if keep else "")


# Lone surrogates (a JSON "\ud800") cannot be written as UTF-8: spelt out, as Python
# writes them.
_SURROGATES = re.compile("[\ud800-\udfff]")


def _surrogates(text):
    return _SURROGATES.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def json_field(text):
    """A one-line field (an id, a name, a model, a FILE) for JSON output: as
    ``escape_field`` writes it, lone surrogates spelt out too."""
    return _surrogates(escape_field(text))


def json_prose(text, limit=None):
    """Multi-line stream text (a result, an answer, a failure) for JSON output: CR LF
    made LF, cut to ``limit`` characters (None: never), controls but LF and tab
    spelt out, lone surrogates too."""
    text = text.replace("\r\n", "\n")
    if limit:
        text = cut(text, limit)
    return _surrogates(escape_prose(text))


# How many levels deep json_value writes a value's structure; an object or array below
# is said to be left out: a walk as deep as the decoder reads (1 024 levels) passes
# Python's recursion limit, and OTLP's form takes four levels a level.
MAX_DEPTH = 64
DEEPER = "[… nested deeper than 64 levels: left out …]"


def json_value(value, limit=None, depth=0):
    """A JSON value of the stream with its strings made safe: each string as
    ``json_prose`` (cut to ``limit``), each key as a one-line field; an object or array
    MAX_DEPTH levels down as DEEPER."""
    kind = value.__class__
    if kind is str:
        return json_prose(value, limit)
    if depth >= MAX_DEPTH and (kind is dict or kind is list):
        return DEEPER
    if kind is dict:
        return {json_field(str(key)): json_value(item, limit, depth + 1)
                for key, item in value.items()}
    if kind is list:
        return [json_value(item, limit, depth + 1) for item in value]
    return value
