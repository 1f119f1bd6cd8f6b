"""ndagent html: each run as one self-contained HTML page, readable offline, with no
script and nothing fetched."""

import html
from base64 import b64encode
from hashlib import sha256

from ndagent import __version__, cli
from ndagent.transcript import (
    CALL,
    CUT_OFF,
    NO_ANSWER,
    NO_OUTPUT,
    NO_PROMPT,
    PROMPT,
    PROSE,
    TranscriptCommand,
    ending_text,
    field,
    header_fields,
    outcome_word,
)

SUMMARY = "write each run as a self-contained HTML transcript"

DESCRIPTION = """\
Write the runs as one HTML page that works offline, from a file or any server: the
same transcript as 'ndagent markdown' (for each run its header, the prompt, each
message, thinking and tool call in stream order, then the answer, the failure or
where it was cut off), with the tool calls and thinking folded (open when a call did
not succeed), light or dark as the reader's system is, and a stylesheet for print.

The page holds its one stylesheet and nothing else: no script, no image, no font, no
link to anything but its own runs, and a Content-Security-Policy that lets the
browser load nothing at all besides that stylesheet. Every text from the stream is
escaped and stands as text: no stream value becomes markup, an attribute or a URL.
Messages are shown as the plain text they are, their line breaks kept.

Arguments, results and thinking are bounded as for 'ndagent markdown' (--max-chars,
--max-bytes); a long block scrolls inside the page. Transcripts hold what the tools
printed, secrets included: read one before you publish it."""

EXAMPLES = """\
  ndagent html run.ndjson > run.html
  <AGENT> 'fix the tests' | ndagent html > run.html
  ndagent html --title 'Nightly runs' --no-thinking logs/*.ndjson > runs.html
  # in a Makefile: the page beside the run
  run.html: run.ndjson
  \tndagent html $< > $@ || true"""

# The one stylesheet; the page's policy allows it by its hash and nothing else.
STYLE = """\
:root{color-scheme:light dark;--bg:#fdfdfd;--fg:#1d2125;--dim:#5b6470;--panel:#f3f5f7;\
--rule:#d3d9df;--good:#17772f;--bad:#c4212b}
@media (prefers-color-scheme:dark){:root{--bg:#101418;--fg:#e3e8ee;--dim:#98a2ad;\
--panel:#181e25;--rule:#38414b;--good:#48c065;--bad:#f5605a}}
body{margin:0 auto;max-width:62rem;padding:1rem 1.25rem;background:var(--bg);\
color:var(--fg);font:15px/1.5 system-ui,sans-serif}
pre,code{font:13px/1.45 ui-monospace,Menlo,Consolas,monospace}
pre{background:var(--panel);border:1px solid var(--rule);border-radius:5px;\
padding:.5rem .75rem;margin:.25rem 0;white-space:pre-wrap;overflow-wrap:anywhere;\
max-height:40rem;overflow:auto}
.prose{white-space:pre-wrap;overflow-wrap:anywhere;margin:.75rem 0}
.run{border-top:2px solid var(--rule);margin-top:2rem}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:0 1rem;margin:.5rem 0}
.meta dt{color:var(--dim)}.meta dd{margin:0;overflow-wrap:anywhere}
details{border:1px solid var(--rule);border-radius:5px;margin:.5rem 0;padding:.25rem .75rem}
summary{overflow-wrap:anywhere}
.label{color:var(--dim);font-size:12px;text-transform:uppercase;letter-spacing:.05em;\
margin:.5rem 0 0}
.o-ok,.o-success{color:var(--good)}
.o-failed,.o-cutoff,.o-failure,.o-error,.o-permissionDenied,.o-rejected,.o-pending,\
.o-unknown{color:var(--bad)}
.thinking .prose,.note,.cut{color:var(--dim);font-style:italic}
.answer{border-left:4px solid var(--good);padding-left:.75rem}
.ended{border-left:4px solid var(--bad);padding-left:.75rem}
@media print{body{max-width:none;background:#fff;color:#000}pre{max-height:none;\
overflow:visible}details{break-inside:avoid}summary{list-style:none}}
"""

STYLE_HASH = b64encode(sha256(STYLE.encode()).digest()).decode()
POLICY = (f"default-src 'none'; style-src 'sha256-{STYLE_HASH}'; base-uri 'none'; "
          "form-action 'none'")

# The outcome words' class names (never stream text: the model's outcomes, ok, failed,
# cut off).
_CLASS = {"cut off": "cutoff"}


class HtmlCommand(TranscriptCommand):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "html", SUMMARY, DESCRIPTION, EXAMPLES
    SUFFIX = "html"

    def head(self, title, sources):
        shown = html.escape(f"{field(title)}: {', '.join(sources)}"[:200])
        named = ", ".join(f"<code>{html.escape(source)}</code>" for source in sources)
        return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
                '<meta name="referrer" content="no-referrer">\n'
                '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                '<meta name="color-scheme" content="light dark">\n'
                f'<meta name="generator" content="ndagent {__version__}">\n'
                f"<title>{shown}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
                f"<h1>{html.escape(field(title))}</h1>\n"
                f'<p class="note">Written by ndagent {__version__} from {named}</p>\n')

    def run_top(self, marks, module, start, end, pieces=None):
        first, again = marks
        outcome = ""
        if end is not None:
            word = outcome_word(end)
            outcome = f' · <span class="o-{_CLASS.get(word, word)}">{word}</span>'
        top = (f'<section class="run" id="run-{first}">\n'
               f"<h2>Run {again} · {html.escape(module.name)}{outcome}</h2>\n")
        if end is None:
            return top
        return top + self.run_fields(module, start, end, pieces)

    def run_fields(self, module, start, end, pieces):
        rows = ['<dl class="meta">']
        for name, value, is_code in header_fields(start, end, pieces, module.title):
            shown = html.escape(value)
            if is_code:
                shown = f"<code>{shown}</code>"
            word = outcome_word(end)
            extra = f' class="o-{_CLASS.get(word, word)}"' if name == "Outcome" else ""
            rows.append(f"<dt>{name}</dt><dd{extra}>{shown}</dd>")
        return "\n".join(rows) + "\n</dl>\n"

    def prompts(self, texts):
        if not texts:
            return f'<h3>Prompt</h3>\n<p class="note">{NO_PROMPT}</p>\n<h3>Transcript</h3>\n'
        return ("<h3>Prompt</h3>\n" + "".join(prose(text) for text in texts)
                + "<h3>Transcript</h3>\n")

    def piece(self, kind, value, lean=False):
        if kind is PROSE:
            return prose(value)
        if kind is PROMPT:
            return '<p class="label">Prompt</p>\n' + prose(value)
        if kind is CALL:
            return call_block(value, self.marks[1], lean)
        return ('<details class="thinking"><summary>Thinking</summary>\n'
                + prose(value) + "</details>\n")

    def ending(self, end, answer):
        if end.cutoff:
            return (f'<h3>Cut off</h3>\n<p class="note ended">{CUT_OFF.format(end.line)}</p>\n'
                    "</section>\n")
        if not end.ok:
            return "<h3>Failed</h3>\n" + pre(ending_text(end), "ended") + "</section>\n"
        if answer is None:
            return f'<h3>Answer</h3>\n<p class="note">{NO_ANSWER}</p>\n</section>\n'
        return "<h3>Answer</h3>\n" + prose(answer, "prose answer") + "</section>\n"

    def note_text(self, text):
        return f'<p class="note">{html.escape(text)}</p>\n'

    def tail(self, runs, empty):
        parts = []
        if len(runs) > 1:
            parts.append('<nav class="runs"><h2>Runs</h2><ol>')
            parts.extend(f'<li><a href="#run-{number}">Run {number} · {html.escape(agent)} · '
                         f"{outcome} · {html.escape(source)}:{line}</a></li>"
                         for number, agent, outcome, source, line in runs)
            parts.append("</ol></nav>")
        parts.extend(f'<p class="note"><code>{html.escape(source)}</code>: no run</p>'
                     for source in empty)
        return "\n".join(parts) + ("\n" if parts else "") + "</body>\n</html>\n"


def prose(bounded, classes="prose"):
    """A text as it is, its line breaks kept; a cut said between its parts."""
    return f'<div class="{classes}">{_text(bounded)}</div>\n'


def pre(bounded, classes=None):
    """A preformatted block (the first newline after <pre> is the parser's)."""
    attribute = f' class="{classes}"' if classes else ""
    return f"<pre{attribute}>\n{_text(bounded)}</pre>\n"


def _text(bounded):
    if not bounded.omitted:
        return html.escape(bounded.head)
    return (f'{html.escape(bounded.head)}\n<span class="cut">{bounded.marker()}</span>\n'
            f"{html.escape(bounded.tail)}")


def call_block(call, run, lean=False):
    """A tool call as a <details> element: its summary line, then (unless ``lean``)
    its arguments, its result and its subagent calls."""
    kind, target, outcome, name, duration = call.summary()
    said = [html.escape(field(kind))]
    if target is not None:
        said.append(f"<code>{html.escape(field(target))}</code>")
    said.append(f'<span class="o-{outcome}">{outcome}</span>')
    if name is not None:
        said.append(html.escape(field(name)))
    if duration is not None:
        said.append(duration)
    opened = "" if outcome == "success" else " open"
    block = [f'<details class="tool" id="run-{run}-call-{call.number}"{opened}>\n'
             f"<summary>{' · '.join(said)}</summary>\n"]
    if not lean:
        if call.args is not None:
            block.append(f'<p class="label">{call.label}</p>\n{pre(call.args)}')
        if call.ended:
            block.append('<p class="label">Result</p>\n' + (
                pre(call.result) if call.result else f'<p class="note">{NO_OUTPUT}</p>\n'))
        if call.children:
            block.append('<p class="label">Subagent calls</p>\n')
            block.extend(call_block(child, run) for child in call.children)
    block.append("</details>\n")
    return "".join(block)


build_parser, main = cli.entry(HtmlCommand)
