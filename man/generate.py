"""Write the manual pages of ndagent and of each command, from the commands' own parsers.

    python man/generate.py [--date YYYY-MM-DD] [DIR]        (what 'make man' runs)

A development tool: it needs argparse-manpage (the [dev] extra), which ndagent itself
never imports.  Each page is made by argparse-manpage from the very parser the command
runs (``ndagent.cmd_VERB.build_parser()``, ``ndagent.cli.build_parser()`` for
``ndagent.1``), one page per parser, for every command in ``ndagent.cli.COMMANDS``.
The texts --help shows (description, examples, exit statuses) come from the parser
(``parser.help_parts``), and what it says of the agents from their formats
(``parser.agents_paragraphs()``); a command module may define besides, for its page
only:

    ENVIRONMENT  {VARIABLE: meaning} (or a paragraph): an ENVIRONMENT section
    CHECKS       {check name: meaning}: a CHECKS section listing every check

The date in the pages is --date, else the day of SOURCE_DATE_EPOCH (UTC), else today.
"""

import argparse
import datetime
import importlib
import os
import sys
import textwrap
from itertools import groupby
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the ndagent of this tree, whatever else is installed

from argparse_manpage.manpage import Manpage  # noqa: E402

from ndagent import __version__, callfilter, cli, model, options  # noqa: E402

MANUAL = "ndagent manual"
WIDTH = "80"  # argparse wraps usage lines to the terminal's width: fix it


def escape(text):
    """Backslashes and minus signs spelt out for roff."""
    return text.replace("\\", "\\e").replace("-", "\\-")


def roff(text):
    """Plain text as roff input: escaped, and no line taken for a request."""
    text = escape(text)
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line
                     for line in text.split("\n"))


def paragraphs(text):
    """Paragraphs (separated by blank lines) as roff; indented lines are kept as they are
    (a table, a sample line)."""
    out = []
    for block in textwrap.dedent(text).strip("\n").split("\n\n"):
        out.append(".PP")
        for indented, lines in groupby(block.split("\n"), lambda line: line[:1].isspace()):
            lines = "\n".join(lines)
            if indented:
                out.append(".RS 4\n.nf\n" + roff(textwrap.dedent(lines)) + "\n.fi\n.RE")
            else:
                out.append(roff(lines) if out[-1] == ".PP" else ".PP\n" + roff(lines))
    return "\n".join(out)


def tagged(items):
    """(term, meaning) pairs as a tagged list; a meaning may be a tuple of words
    (such as (severity, meaning))."""
    return "\n".join(f".TP\n.B {roff(term)}\n{roff(_words(meaning))}" for term, meaning in items)


def _words(meaning):
    return meaning if isinstance(meaning, str) else ": ".join(map(str, meaning))


def examples(text):
    return ".PP\n.RS 4\n.nf\n" + roff(textwrap.dedent(text).strip("\n")) + "\n.fi\n.RE"


def exit_status(statuses):
    return tagged(statuses) + "\n.PP\n" + roff(options.EXIT_STATUS_NOTE)


def synopsis(parser, verb):
    """The usage line, for ``ndagent-VERB`` and for ``ndagent VERB``."""
    words = parser.format_usage().split()[2:]
    names = ["ndagent"] if verb is None else [f"ndagent-{verb}", f"ndagent {verb}"]
    # No word hyphenated, no [group] broken across lines.
    usage, depth = "", 0
    for word in words:
        usage += ("\\ " if depth else " ") + "\\%" + escape(word)
        depth += word.count("[") + word.count("{") - word.count("]") - word.count("}")
    usage = usage[1:]
    return "\n.br\n".join(f".B {roff(name)}\n{usage}" for name in names)


def see_also(verb):
    pages = ["ndagent"] + [f"ndagent-{other}" for other, _ in cli.COMMANDS]
    refs = [f".BR \\%{roff(page)} (1)" for page in pages if page != _page(verb)]
    return ".ad l\n" + ",\n".join([*refs, ".BR jq (1)"])


def _page(verb):
    return "ndagent" if verb is None else f"ndagent-{verb}"


def commands():
    return "\n".join(
        f".TP\n.B ndagent {roff(verb)}\n{roff(summary)}; see\n.BR \\%ndagent\\-{roff(verb)} (1)."
        for verb, summary in cli.COMMANDS)


def tool_kinds():
    """The common vocabulary of kinds (-k), with the line 'ndagent text' prints for each."""
    intro = ("Every agent's tools are told by the same kinds (what -k of ndagent tools and "
             "ndagent text takes, in any case), each with the line ndagent text prints; a "
             "tool of none keeps its own name as its kind, prints 'Used tool', and is "
             "selected by -t NAME.")
    return paragraphs(intro) + "\n" + tagged(
        (kind, model.ACTIONS.get(kind, "Used tool")) for kind in model.KINDS)


def outcomes():
    """How a tool call ended (-s), with the suffix 'ndagent text' prints for each."""
    intro = ("How a tool call ended (what -s takes, in any case, as well as the word in "
             "the suffix ndagent text prints).")
    return paragraphs(intro) + "\n" + tagged(
        (outcome, meaning + (f"; ndagent text prints{model.OUTCOME_SUFFIXES[outcome]}"
                             if outcome in model.OUTCOME_SUFFIXES else ""))
        for outcome, meaning in callfilter.OUTCOME_MEANINGS.items())


def manpage(parser, verb, module, date):
    """The page of one parser, as text."""
    parts = parser.help_parts
    description = parts["description"]
    if parser.agents_paragraph:  # what --help adds of the agents, from their formats
        description = f"{description}\n\n{parser.agents_paragraphs()}"
    # The page has sections of its own for what --help puts in the description and
    # epilog, and lists FILE and the other arguments with the options.
    parser.description = parser.epilog = None
    parser._optionals._group_actions[:0] = parser._positionals._group_actions
    parser._positionals._group_actions = []

    page = Manpage(parser)
    page.date = date
    page.source = f"ndagent {__version__}"
    page.manual = MANUAL
    page.add_section("synopsis", "=", synopsis(parser, verb))
    page.add_section("description", "=", paragraphs(description))
    if verb is None:
        page.add_section("commands", "=", commands())
        page.add_section("tool kinds", "=", tool_kinds())
        page.add_section("outcomes", "=", outcomes())
    checks = getattr(module, "CHECKS", None)
    if checks:
        page.add_section("checks", "=", tagged(checks.items()))
    page.add_section("exit status", "=", exit_status(parts["exit_statuses"]))
    environment = getattr(module, "ENVIRONMENT", None)
    if environment:
        page.add_section("environment", "=", tagged(environment.items())
                         if isinstance(environment, dict) else paragraphs(environment))
    page.add_section("examples", "=", examples(parts["examples"]))
    page.add_section("see also", "=", see_also(verb))
    return str(page)


def pages(date):
    """{file name: text} of every page."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        found = {"ndagent.1": manpage(cli.build_parser(), None, cli, date)}
        for verb, _ in cli.COMMANDS:
            module = importlib.import_module(f"ndagent.cmd_{verb}")
            found[f"ndagent-{verb}.1"] = manpage(module.build_parser(), verb, module, date)
        return found
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def default_date():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
            else datetime.datetime.now(datetime.timezone.utc))
    return when.strftime("%Y-%m-%d")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", nargs="?", type=Path, default=Path(__file__).parent,
                        help="where to write the pages (default: man/)")
    parser.add_argument("--date", help="the date in the pages (YYYY-MM-DD)")
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    written = pages(args.date or default_date())
    for name, text in written.items():
        (args.dir / name).write_text(text, encoding="utf-8")
        print(args.dir / name)
    for old in args.dir.glob("ndagent*.1"):  # the page of a command that is gone
        if old.name not in written:
            old.unlink()


if __name__ == "__main__":
    main()
