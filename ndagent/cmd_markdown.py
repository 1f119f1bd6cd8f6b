"""ndagent markdown: each run as a Markdown transcript a person reads, reviews and
attaches (a pull request, a bug report, a CI job's summary)."""

import html
import re

from ndagent import __version__, cli
from ndagent.transcript import (
    CALL,
    CUT_OFF,
    NO_ANSWER,
    NO_OUTPUT,
    NO_PROMPT,
    PROMPT,
    PROSE,
    Bounded,
    TranscriptCommand,
    ending_text,
    field,
    header_fields,
    outcome_word,
)

SUMMARY = "write each run as a Markdown transcript"

DESCRIPTION = """\
Write the runs as one Markdown document (CommonMark, GitHub's tables, and <details>
for what folds): for each run a heading, a table of its agent, model, session,
source, start, outcome, duration, tokens, cost and tool calls, the user's prompt when
the stream holds it, then in stream order each assistant message, each thinking
(folded) and each tool call (folded, open when it did not succeed) with its
arguments and its result, and last the answer, or why the run failed, or where it was
cut off. Several runs follow one another, numbered across the FILEs, and a list of
them ends the document.

A run is written when it ends, its header first; from a pipe (the agent still
running) each piece is written as it completes, the header's figures after the run,
so that a run cut off still leaves its transcript.

Arguments, results and thinking are bounded (--max-chars): the first three quarters
and the last quarter are shown, the characters left out said between them. Past
--max-bytes the rest of the document is lean: each call its summary line, no
thinking, texts cut.

Text from the stream cannot act on the document: results, arguments and failure
texts stand in fenced blocks longer than any run of backticks they hold; ids, paths
and names in code spans; the prose of messages keeps its Markdown, but no HTML of it
is left raw; control and bidirectional characters are spelt out (\\x1b, \\u202e).
Transcripts hold what the tools printed, secrets included: read one before you
publish it."""

EXAMPLES = """\
  <AGENT> 'fix the tests' | ndagent markdown > run.md
  ndagent markdown run.ndjson > run.md
  ndagent markdown --no-thinking --max-chars 2000 logs/*.ndjson > runs.md
  # the transcript on a CI job's summary page
  ndagent markdown run.ndjson >> "${GITHUB_STEP_SUMMARY:-summary.md}"
  # in a Makefile: the transcript beside the run
  run.md: run.ndjson
  \tndagent markdown $< > $@ || true"""


class MarkdownCommand(TranscriptCommand):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "markdown", SUMMARY, DESCRIPTION, EXAMPLES
    SUFFIX = "md"

    @classmethod
    def add_options(cls, parser):
        super().add_options(parser)
        parser.add_argument(
            "--prose", choices=("markdown", "literal"), default="markdown",
            help="how the messages are written: as the Markdown they are (no raw HTML "
                 "left), or literal, each in a fenced block (default: markdown)",
        ).brief = "markdown (the default) or literal"

    def head(self, title, sources):
        named = ", ".join(code(source) for source in sources)
        return f"# {text_cell(title)}\n\nWritten by ndagent {__version__} from {named}.\n\n"

    def run_top(self, marks, module, start, end, pieces=None):
        first, again = marks
        outcome = "" if end is None else f" · {outcome_word(end)}"
        top = f'<a id="run-{first}"></a>\n## Run {again} · {module.name}{outcome}\n\n'
        if end is None:
            return top
        return top + self.run_fields(module, start, end, pieces)

    def run_fields(self, module, start, end, pieces):
        rows = ["| Field | Value |", "|---|---|"]
        for name, value, is_code in header_fields(start, end, pieces, module.title):
            cell = code(value).replace("|", "\\|") if is_code else text_cell(value)
            rows.append(f"| {name} | {cell} |")
        return "\n".join(rows) + "\n\n"

    def prompts(self, texts):
        if not texts:
            return f"### Prompt\n\n*{NO_PROMPT}*\n\n### Transcript\n\n"
        return ("### Prompt\n\n" + "".join(self.prose(text) for text in texts)
                + "### Transcript\n\n")

    def piece(self, kind, value, lean=False):
        if kind is PROSE:
            return self.prose(value)
        if kind is PROMPT:
            return "*Prompt:*\n\n" + self.prose(value)
        if kind is CALL:
            return call_block(value, lean)
        return ("<details>\n<summary>Thinking</summary>\n\n" + fence(value, "text")
                + "\n</details>\n\n")

    def prose(self, bounded):
        if self.args.prose == "literal":
            return fence(bounded, "text") + "\n"
        return prose(bounded.parts()) + "\n"

    def ending(self, end, answer):
        if end.cutoff:
            return f"### Cut off\n\n*{CUT_OFF.format(end.line)}*\n\n"
        if not end.ok:
            return "### Failed\n\n" + fence(ending_text(end), "text") + "\n"
        if answer is None:
            return f"### Answer\n\n*{NO_ANSWER}*\n\n"
        return "### Answer\n\n" + self.prose(answer)

    def note_text(self, text):
        return f"*{text}*\n\n"

    def tail(self, runs, empty):
        lines = []
        if len(runs) > 1:
            lines.append("## Runs\n")
            for number, agent, outcome, source, line in runs:
                lines.append(f"{number}. [Run {number} · {agent} · {outcome} · "
                             f"{code(f'{source}:{line}')}](#run-{number})")
            lines.append("")
        for source in empty:
            lines.append(f"{code(source)}: no run\n")
        return "\n".join(lines) + ("\n" if lines and lines[-1] else "")


def call_block(call, lean=False):
    """A tool call as a <details> block: its summary line, then (unless ``lean``) its
    arguments, its result and its subagent calls."""
    kind, target, outcome, name, duration = call.summary()
    said = [html.escape(field(kind))]
    if target is not None:
        said.append(f"<code>{html.escape(field(target))}</code>")
    said.append(outcome)
    if name is not None:
        said.append(html.escape(field(name)))
    if duration is not None:
        said.append(duration)
    opened = "" if outcome == "success" else " open"
    block = [f"<details{opened}>\n<summary>{' · '.join(said)}</summary>\n\n"]
    if not lean:
        if call.args is not None:
            block.append(f"{call.label}:\n\n{fence(call.args, call.info)}\n")
        if call.ended:
            block.append("Result:\n\n" + (fence(call.result, "text") if call.result
                                         else f"*{NO_OUTPUT}*\n") + "\n")
        if call.children:
            block.append("Subagent calls:\n\n")
            block.extend(call_block(child) for child in call.children)
    block.append("</details>\n\n")
    return "".join(block)


_BACKTICKS = re.compile(r"`+")


def fence(bounded, info):
    """A fenced block of ``bounded`` (a Bounded): backticks longer than any run of
    them inside, at least 3; the marker of a cut on a line of its own."""
    content = bounded.parts() if isinstance(bounded, Bounded) else bounded
    longest = 0 if "`" not in content else max(len(run) for run in
                                               _BACKTICKS.findall(content))
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{content}\n{ticks}\n"


def code(value):
    """A code span of a one-line value: backticks one longer than its longest run,
    a space inside both ends when it begins or ends with one."""
    if not value:
        return "*empty*"
    longest = max((len(run) for run in _BACKTICKS.findall(value)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if value[0] == "`" or value[-1] == "`" else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


# The ASCII punctuation that may start Markdown or HTML in a line of text.
_SPECIAL = re.compile(r"([\\`*_\[\]<>()#+!|~&])")


# Where GitHub's bare links begin: "www." and a scheme's "://".
_BARE_LINK = re.compile(r"(?i)(?<=www)\.|:(?=//)")


def text_cell(value):
    """A one-line text that is not code (the title, the agent's version): every
    character that Markdown could read as markup escaped, and what would begin a bare
    link (GitHub makes one of ``www.`` or ``http://`` in text)."""
    return _BARE_LINK.sub(lambda found: "\\" + found[0], _SPECIAL.sub(r"\\\1", value))


_OPENING = re.compile(r" {0,3}(`{3,}|~{3,})")
# A line that may be a table's delimiter row (GFM), in a list item or a quote too: cells
# of hyphens, each maybe between colons, parted by pipes, after what marks a container.
# Its blanks are matched one to a run (_BLANKS): the pattern has blanks on both sides of
# what may be absent, and on a long run of them it would try every way of sharing it out
# (a line of a few thousand blanks took minutes).  A run of blanks matches wherever one
# blank does, and the other way round.
_DELIMITER_ROW = re.compile(r"(?:[ \t]*(?:>|[-+*][ \t]|[0-9]{1,9}[.)][ \t]))*[ \t]*\|?"
                            r"[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
_BLANKS = re.compile(r"[ \t]+")


def prose(text):
    """Text an agent wrote, as Markdown, with no raw HTML left and no block left open: a
    fenced block opened by a line of at most 3 spaces of indentation is copied as it is
    and closed if left open; any other line goes through ``_inline``, or cell by cell
    where a table may stand (from a line followed by what may be a delimiter row, to a
    blank line or a fence), since a table's cells are parted before a code span is
    looked for.  A fence line followed by a delimiter row is a table's header to some
    readers: it opens no fence.

    A fence indented by 1-3 spaces may stand in a list item, which a less indented line
    ends, and the fence with it; or at the top, where that line is code.  A line that one
    reading would take out of the fence and the other not is not copied as code: the
    fence is closed first, in its own indentation, which closes it in either reading."""
    out = []
    lines = text.split("\n")
    fence_open = None  # (indentation, opening run) of the fence the text is in
    table = False  # whether the line may be a table's
    for number, line in enumerate(lines):
        if fence_open is not None:
            indent, run = fence_open
            place = _in_fence(line, indent, run)
            if place != _LEAVES:
                out.append(line)
                if place == _CLOSES:
                    fence_open = None
                continue
            out.append(" " * indent + run)
            fence_open = None
        header = number + 1 < len(lines) and _begins_table(line, lines[number + 1])
        table = bool(line.strip(" \t")) and (table or header)
        opening = _OPENING.match(line)
        if opening and not header and not (opening[1][0] == "`"
                                           and "`" in line[opening.end():]):
            fence_open = (opening.start(1), opening[1])
            table = False
            out.append(line)
            continue
        out.append(_cells(line) if table else _inline(line)[0])
    if fence_open is not None:
        indent, run = fence_open
        out.append(" " * indent + run)
    return "\n".join(out) + "\n"


def _cells(line):
    """A line that may be a table's row, cell by cell: a web address's word goes on
    past a ``|`` where the line is no row after all."""
    cells, in_address = [], False
    for cell in line.split("|"):
        text, in_address = _inline(cell, in_address)
        cells.append(text)
    return "|".join(cells)


def _begins_table(line, following):
    """Whether ``line`` may be a table's header row: ``following`` may be a delimiter
    row (with a pipe or a colon, or after a line with a pipe: a line of hyphens alone
    underlines a heading)."""
    return "-" in following and ("|" in line or "|" in following or ":" in following) \
        and _DELIMITER_ROW.fullmatch(_BLANKS.sub(" ", following)) is not None


# Where a line stands in a fence (_in_fence).
_HOLDS, _CLOSES, _LEAVES = "holds", "closes", "leaves"


def _in_fence(line, indent, run):
    """Whether ``line`` is code of the fence opened by ``run`` at ``indent`` spaces
    (``_HOLDS``), closes it (``_CLOSES``), or may leave it (``_LEAVES``): at the top
    (``indent`` 0) nothing leaves a fence; else a line indented less than the fence does,
    and so does a closing run that only one reading takes as one (indented by 4 spaces
    or more, or by a tab)."""
    stripped = line.lstrip(" \t")
    if not stripped:
        return _HOLDS
    spaces = len(line) - len(line.lstrip(" "))
    length = len(stripped) - len(stripped.lstrip(run[0]))
    if length >= len(run) and stripped[length:].strip(" \t") == "":
        if indent <= spaces <= 3 and line[spaces] != "\t":
            return _CLOSES
        return _HOLDS if indent == 0 else _LEAVES
    return _HOLDS if spaces >= indent else _LEAVES


# What _inline acts on; the text between is copied as it is.
_ACTIVE = re.compile(r"[\\`<~]|\](?=[(\[:])")
# What a backslash escapes that _inline keeps escaped.
_KEPT_ESCAPES = frozenset("`~]\\")


def _inline(line, in_address=False):
    """One line (or table cell) outside a fence, escaped, and whether it ends in a word
    that holds a web address (``in_address``: whether it begins in one).  A backtick
    run is a code span's, copied as it is, where a run of the same length closes it and
    no web address before it in the same word could take it in (GitHub's bare links run
    over backticks and backslashes), else escaped; so is a run of three tildes or more, and
    a ``]`` before ``(``, ``[`` or ``:`` (no link, image or link definition can form,
    and so none that looks like ndagent's own text; a task list's ``[ ]`` stays); every
    ``<`` is ``&lt;`` (a tag, an autolink, an email address's, which may begin with a
    backtick), even after a backslash, which a bare link would take in."""
    out = []
    index, size = 0, len(line)
    closers = _closers(line) if "`" in line else None
    while True:
        found = _ACTIVE.search(line, index)
        stretch_end = size if found is None else found.start()
        in_address = _address_word(line, index, stretch_end, in_address)
        out.append(line[index:stretch_end])
        if found is None:
            return "".join(out), in_address
        at, char = stretch_end, line[stretch_end]
        if char == "\\":
            follows = line[at + 1:at + 2]
            if follows == "<":
                out.append("&lt;")
                index = at + 2
            else:
                index = at + (2 if follows and follows in _KEPT_ESCAPES else 1)
                out.append(line[at:index])
        elif char == "`":
            end = _run_end(line, at)
            closer = None if in_address else closers.get(at)
            if closer is None:
                out.append("\\`" * (end - at))
                index = end
            else:
                in_address = _address_word(line, at, closer, in_address)
                out.append(line[at:closer])
                index = closer
        elif char == "~":
            end = _run_end(line, at)
            out.append("\\~" * (end - at) if end - at >= 3 else line[at:end])
            index = end
        elif char == "]":
            out.append("\\]")
            index = at + 1
        else:
            out.append("&lt;")
            index = at + 1


def _run_end(line, at):
    """The index after the run of ``line[at]`` that begins at ``at``."""
    end, char = at + 1, line[at]
    while end < len(line) and line[end] == char:
        end += 1
    return end


def _closers(line):
    """{where each backtick run begins: the index after the next run of the same length,
    which would close a code span it opens (None where there is none)}, in one pass
    from the end, so that a line of many runs takes time in proportion to its length."""
    found = {}
    next_end = {}  # run length: the end of the nearest run of that length after
    for run in reversed(list(_BACKTICKS.finditer(line))):
        length = run.end() - run.start()
        found[run.start()] = next_end.get(length)
        next_end[length] = run.end()
    return found


def _address_word(line, start, end, in_address):
    """Whether the word in hand holds a web address after ``line[start:end]``: the
    stretch's last word, or the word in hand it goes on."""
    space = max(line.rfind(" ", start, end), line.rfind("\t", start, end))
    if space >= 0:
        start, in_address = space + 1, False
    if in_address or start == end:
        return in_address
    word = line[start:end]
    return "://" in word or "www." in word.lower()


build_parser, main = cli.entry(MarkdownCommand)
