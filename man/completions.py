"""Write the bash and zsh completions of ndagent and of each command, from the
commands' own parsers.

    python man/completions.py [DIR]        (what 'make completions' runs)

A development tool, like generate.py beside it: it needs shtab (the [dev] extra), which
ndagent itself never imports.  DIR (default: ndagent/completions) gets bash/PROGRAM and
zsh/_PROGRAM for ``ndagent`` and each ``ndagent-VERB``; the package installs them into
share/bash-completion/completions and share/zsh/site-functions of its prefix, where
bash-completion and zsh look for a command's completion.
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


def parsers():
    """(program name, parser) for ndagent and each command."""
    yield "ndagent", cli.build_parser()
    for verb, _ in cli.COMMANDS:
        yield f"ndagent-{verb}", importlib.import_module(f"ndagent.cmd_{verb}").build_parser()


def offer_words(parser):
    """The parser, its options' ``words`` (the vocabulary of -k and -s, which their own
    type checks in any case) given to shtab as their choices."""
    for action in parser._actions:
        words = getattr(action, "words", None)
        if words:
            action.choices = words
    return parser


def completions():
    """{relative path: text} of every completion file."""
    found = {}
    for program, parser in parsers():
        parser = offer_words(parser)
        found[f"bash/{program}"] = shtab.complete(parser, "bash")
        found[f"zsh/_{program}"] = shtab.complete(parser, "zsh")
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
