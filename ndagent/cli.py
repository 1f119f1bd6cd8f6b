"""The entry point: ``ndagent VERB ...`` and each ``ndagent-VERB``, their exit
statuses, and what a command process sets for itself (SIGPIPE, the collector, the
standard descriptors) so that every outcome is a status and never a traceback.
A verb module ends with ``build_parser, main = cli.entry(ItsCommand)``."""

import gc
import os
import signal
import sys
from argparse import REMAINDER, RawDescriptionHelpFormatter
from importlib import import_module

from ndagent import __version__
from ndagent.frame import REGISTRY
from ndagent.options import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STATUS,
    EXIT_STATUSES,
    EXIT_USAGE,
    Parser,
    agent_examples,
    keep_parts,
)
from ndagent.output import Output, die_of_sigpipe, write_message

# The verbs, in the order the top-level help lists them: each is the module
# ndagent.cmd_VERB, whose Command class says the rest (COMMANDS).
VERBS = ("json", "result", "text", "tools", "validate", "stats", "markdown", "html", "otel",
         "atif", "run")


def __getattr__(name):
    """``COMMANDS``: ((verb, summary), ...), from the verbs' classes (imported when
    asked for: a command needs only its own)."""
    if name == "COMMANDS":
        for verb in VERBS:
            import_module(f"ndagent.cmd_{verb}")
        return tuple((verb, REGISTRY[verb].SUMMARY) for verb in VERBS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SUMMARY = "small Unix filters for the NDJSON event streams of AI coding agents"

DESCRIPTION = """\
Small Unix filters for the NDJSON event streams that AI coding agents print (the
agents, and the command lines that print their streams, are listed below). Each input's
agent is detected from its first objects.

'ndagent VERB ...' and 'ndagent-VERB ...' are the same command; 'ndagent VERB --help'
tells more. 'ndagent completion bash|zsh|fish' prints the completion script of both
forms, for a shell's start-up file."""

EXAMPLES = """\
  <AGENT> 'fix the tests' | ndagent result
  ndagent text -v run.ndjson
  # how the runs of any agents ended, counted: figures over runs come from stats
  ndagent stats --by run --format ndjson logs/*.ndjson | jq -r .outcome | sort | uniq -c
  # the session ids of the three slowest runs
  ndagent stats --by run --format ndjson logs/*.ndjson |
    jq -r '[.duration_ms, .session_id] | @tsv' | sort -rn | head -n 3 | cut -f 2
  # in a Makefile: the rule fails when the agent's run failed or was cut off
  answer.md: prompt.txt
  \t<AGENT> "$$(cat $<)" | ndagent result > $@"""


def build_parser():
    """The parser of ``ndagent`` itself, which hands over to ``ndagent-VERB``."""
    commands = (*__getattr__("COMMANDS"), ("completion", COMPLETION_SUMMARY))
    listing = "\n".join(f"  {verb:<12}{summary}" for verb, summary in commands)
    intro, _, rest = DESCRIPTION.partition("\n\n")
    examples = agent_examples(EXAMPLES)
    parser = Parser(
        prog="ndagent",
        description=f"{intro}\n\ncommands:\n{listing}\n\n{rest}",
        epilog=f"examples:\n{examples}\n\n{EXIT_STATUS}",
        formatter_class=RawDescriptionHelpFormatter,
    )
    parser.agents_paragraph = True
    keep_parts(parser, SUMMARY, DESCRIPTION, examples, EXIT_STATUSES)
    parser.help_parts["commands"] = listing
    parser.add_argument("command", choices=VERBS, metavar="VERB",
                        help="the command to run: " + ", ".join(VERBS))
    parser.add_argument("args", nargs=REMAINDER, metavar="ARG",
                        help="the command's own options and FILEs")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit")
    return parser


# 'ndagent completion SHELL': the shells and the file of a program's script in each
# (ndagent/completions/SHELL/, made by 'make completions').
COMPLETION_FILES = {"bash": "{}", "zsh": "_{}", "fish": "{}.fish"}


COMPLETION_SUMMARY = "print a shell's completion script of ndagent and ndagent-VERB"

COMPLETION_EXAMPLES = """\
  eval "$(ndagent completion bash)"     # in ~/.bashrc
  eval "$(ndagent completion zsh)"      # in ~/.zshrc, after compinit
  ndagent completion fish | source       # in ~/.config/fish/config.fish"""


def print_completion(argv):
    """``ndagent completion SHELL``: the completion script of ``ndagent`` and of every
    ``ndagent-VERB`` for SHELL, as gh and rustup print theirs: pipx installs no
    completion files."""
    description = f"{COMPLETION_SUMMARY[0].upper()}{COMPLETION_SUMMARY[1:]}."
    parser = Parser(prog="ndagent completion", description=description,
                    epilog=f"examples:\n{COMPLETION_EXAMPLES}",
                    formatter_class=RawDescriptionHelpFormatter)
    keep_parts(parser, COMPLETION_SUMMARY, description, COMPLETION_EXAMPLES, "")
    parser.man_page = "ndagent"  # which tells of it: it has no page of its own
    parser.add_argument("shell", choices=tuple(COMPLETION_FILES), metavar="SHELL",
                        help="bash, zsh or fish")
    shell = parser.parse_args(argv).shell
    folder = os.path.join(os.path.dirname(__file__), "completions", shell)
    scripts = []
    for program in ("ndagent", *(f"ndagent-{verb}" for verb in VERBS)):
        path = os.path.join(folder, COMPLETION_FILES[shell].format(program))
        try:
            with open(path, encoding="utf-8") as script:
                scripts.append(script.read())
        except OSError as error:
            write_message(f"ndagent completion: {path}: error: cannot read: "
                          f"{error.strerror or error}\n".encode())
            return EXIT_USAGE
    parser._print_message("\n".join(scripts), sys.stdout)
    return EXIT_OK


def main(argv=None):
    """``ndagent VERB ...``: run ``ndagent-VERB``; ``ndagent completion SHELL``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "completion":
        return print_completion(argv[1:])
    if not argv or argv[0] not in VERBS:
        # Help, version and usage errors end here; what passes is a VERB all the same
        # ('ndagent -- json FILE').
        parser = build_parser()
        if not argv:
            parser.error("a VERB is needed: " + ", ".join(VERBS))
        args = parser.parse_args(argv)
        argv = [args.command, *args.args]
    try:
        command = import_module(f"ndagent.cmd_{argv[0]}")
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return command.main(argv[1:])


def run_command(build, command_class, argv=None):
    """The entry point of ``ndagent-VERB``: parse, run, and turn every outcome into an
    exit status (never a traceback).  What it sets for the whole process (SIGPIPE, the
    collector) is put back before it returns, so that a script may call ``main`` again
    and again."""
    _occupy_closed_standard_descriptors()
    # A write to a pipe with no reader fails (EPIPE) rather than kill: the command dies
    # of SIGPIPE when it is standard output's reader that went away (die_of_sigpipe),
    # and goes on when it is standard error's (write_message).
    on_sigpipe = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # Decoding makes many short-lived dicts and no cycles: collecting them with the
    # default threshold costs 5-15% of the run for nothing.  (Not gc.freeze(): the
    # objects it holds back are never collected after, in a process that goes on.)
    threshold = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        try:
            parser = build()
            args = command_class.parse_args(parser, argv)
            command_class.check_options(parser, args)
            out = Output()
            command = command_class(args, parser.prog, out)
            return command.execute()
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            return die_of_sigpipe()
        except MemoryError:
            # A line under --max-line that still does not fit in memory (ulimit -v).
            write_message(f"{parser.prog}: out of memory: try a smaller --max-line\n".encode())
            return EXIT_USAGE
        except OSError as error:
            # A file of its own that the command writes (--split) is named; standard
            # output is not.
            where = "write error" if error.filename is None else f"{error.filename}: error"
            command.say(f"{where}: {error.strerror or error}")
            return EXIT_USAGE
    finally:
        gc.set_threshold(*threshold)
        signal.signal(signal.SIGPIPE, on_sigpipe)


def _occupy_closed_standard_descriptors():
    """Open /dev/null on any of descriptors 0, 1 and 2 that is closed, in the mode that
    makes its use fail as on a closed one (standard input for writing, the others for
    reading), as gnulib's stdopen does: else the next file opened (a --save file, a
    pipe) would take its number, and the command's output or messages would be
    written into it."""
    for fd, mode in ((0, os.O_WRONLY), (1, os.O_RDONLY), (2, os.O_RDONLY)):
        try:
            os.fstat(fd)
        except OSError:
            try:  # noqa: SIM105 - contextlib would cost start-up time
                os.open(os.devnull, mode)  # the lowest free descriptor: fd itself
            except OSError:  # no /dev/null (a bare chroot): nothing better to do
                pass


def entry(command_class):
    """The entry points of ``ndagent-VERB``: (build_parser, main)."""

    def main(argv=None):
        return run_command(command_class.build_parser, command_class, argv)

    return command_class.build_parser, main
