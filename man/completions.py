"""Write the bash, zsh and fish completions of ndagent and of each command, from the
commands' own parsers.

    python man/completions.py [DIR]        (what 'make completions' runs)

A development tool, like generate.py beside it: it needs shtab (the [dev] extra), which
ndagent itself never imports.  DIR (default: ndagent/completions) gets bash/PROGRAM,
zsh/_PROGRAM and fish/PROGRAM.fish for ``ndagent`` and each ``ndagent-VERB``; the
package installs them into share/bash-completion/completions, share/zsh/site-functions
and share/fish/vendor_completions.d of its prefix, where bash-completion, zsh and fish
look for a command's completion, and 'ndagent completion SHELL' prints them.

``ndagent`` hands its arguments over to ``ndagent-VERB``, so its own parser knows
nothing of a verb's options: its completion is made from a parser in which each VERB is
a subcommand with the options of ``ndagent-VERB`` (``ndagent_parser``), so that
``ndagent text --c<TAB>`` completes as ``ndagent-text --c<TAB>`` does.  bash and zsh
are shtab's; fish is written here (``fish``), shtab having none.
"""

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the ndagent of this tree, whatever else is installed

import shtab  # noqa: E402

from ndagent import cli  # noqa: E402


def offer_words(parser):
    """The parser, its options' ``words`` (the vocabulary of -k and -s, which their own
    type checks in any case) given to shtab as their choices."""
    for action in parser._actions:
        words = getattr(action, "words", None)
        if words:
            action.choices = words
    return parser


def verb_parsers():
    """{verb: the parser of ndagent-VERB}."""
    return {verb: offer_words(importlib.import_module(f"ndagent.cmd_{verb}").build_parser())
            for verb, _ in cli.COMMANDS}


def ndagent_parser(verbs):
    """``ndagent`` as completion sees it: each VERB a subcommand with the options of
    ``ndagent-VERB``, and ``completion SHELL``."""
    parser = argparse.ArgumentParser(prog="ndagent", description=cli.SUMMARY)
    parser.add_argument("--version", action="version", version=cli.__version__)
    commands = parser.add_subparsers(dest="command", metavar="VERB")
    for verb, summary in cli.COMMANDS:
        commands.add_parser(verb, help=summary, description=summary, parents=[verbs[verb]],
                            add_help=False)
    completion = commands.add_parser("completion", help="print the completion script")
    completion.add_argument("shell", choices=tuple(cli.COMPLETION_FILES),
                            help="the shell whose script to print")
    return parser


def parsers():
    """(program name, parser) for ndagent and each command."""
    verbs = verb_parsers()
    yield "ndagent", ndagent_parser(verbs)
    for verb, parser in verbs.items():
        yield f"ndagent-{verb}", parser


def fish(program, parser):
    """The fish completion of ``program``: its options, their values, and for a parser
    with subcommands, each subcommand and its options."""
    lines = [f"# fish completion for {program} (made by man/completions.py)"]
    subcommands = [action for action in parser._actions
                   if isinstance(action, argparse._SubParsersAction)]
    if not subcommands:
        lines += _fish_options(program, parser, "")
        return "\n".join(lines) + "\n"
    lines += _fish_options(program, parser, "__fish_use_subcommand")
    choices = subcommands[0].choices
    helps = {choice.dest: choice.help for choice in subcommands[0]._choices_actions}
    for name in choices:
        lines.append(f"complete -c {program} -n __fish_use_subcommand -f -a {_quote(name)} "
                     f"-d {_quote(_short(helps.get(name) or ''))}")
    for name, subparser in choices.items():
        lines += _fish_options(program, subparser, f"__fish_seen_subcommand_from {name}")
    return "\n".join(lines) + "\n"


def _fish_options(program, parser, condition):
    """``complete`` lines for the options (and choices of positionals) of ``parser``."""
    when = f" -n {_quote(condition)}" if condition else ""
    lines = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        if not action.option_strings:
            if action.choices:  # a positional of fixed words (completion SHELL)
                lines.append(f"complete -c {program}{when} -f -a "
                             f"{_quote(' '.join(action.choices))}")
            continue
        names = "".join(f" -s {name[1:]}" if not name.startswith("--") else f" -l {name[2:]}"
                        for name in action.option_strings)
        value = ""
        if action.nargs != 0:
            value = " -x"  # a value follows, not a file
            if action.choices:
                value += f" -a {_quote(' '.join(map(str, action.choices)))}"
        lines.append(f"complete -c {program}{when}{names}{value} "
                     f"-d {_quote(_short(action.help or ''))}")
    return lines


def _short(text):
    """An option's help, cut for fish's one-line description."""
    text = text.replace("%%", "%")
    for stop in (": ", "; ", " ("):
        text = text.split(stop, 1)[0]
    return text if len(text) <= 60 else text[:57] + "..."


def _quote(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def completions():
    """{relative path: text} of every completion file."""
    found = {}
    for program, parser in parsers():
        found[f"bash/{program}"] = shtab.complete(parser, "bash")
        found[f"zsh/_{program}"] = shtab.complete(parser, "zsh")
        found[f"fish/{program}.fish"] = fish(program, parser)
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", nargs="?", type=Path, default=ROOT / "ndagent" / "completions",
                        help="where to write them (default: ndagent/completions)")
    args = parser.parse_args(argv)
    written = completions()
    for name, text in written.items():
        path = args.dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(path)
    for old in args.dir.glob("*/*"):  # the completion of a command that is gone
        if str(old.relative_to(args.dir)) not in written:
            old.unlink()


if __name__ == "__main__":
    main()
