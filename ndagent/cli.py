"""The frame every ndagent command runs in.

One place does what all the filters share: the options every command has, reading the
FILE arguments in order as one stream, splitting it into runs, the policy for bad
lines, one-line messages (``ndagent-VERB: FILE:LINE: message``), exit statuses, output
flushed after each batch of input, and quiet exits when the reader of stdout goes away.
A command declares its options (``build_parser``) and subclasses ``Command`` with what
it does for each event and at the end of each run.
"""

import os
import sys

from ndagent import __version__

# The commands, in the order the top-level help lists them: (verb, what it is for).
COMMANDS = (
    ("json", "convert a stream to the single-object json output format"),
    ("result", "reassemble the assistant's full answer"),
    ("text", "print one line per tool call, as the text output format does"),
    ("tools", "print one record per tool call, its start and completion paired"),
    ("validate", "check a stream against the format, with exact line numbers"),
)

# The exit statuses every command shares, (status, meaning), and a note after them: the
# one source of the "exit status:" part of --help and of the man pages' EXIT STATUS.
EXIT_STATUSES = (
    ("0", "success"),
    ("1", "the stream is bad or incomplete: no event at all, a run without a result\n"
          "event, a failed run, a bad line under --strict"),
    ("2", "usage error, or a FILE that cannot be read"),
    ("130", "interrupted (Ctrl-C)"),
)
EXIT_STATUS_NOTE = """\
When the reader of standard output goes away (as in '| head -1'), the command
stops quietly, as cat does."""


def format_exit_status(statuses=EXIT_STATUSES, note=EXIT_STATUS_NOTE):
    """The "exit status:" part of --help."""
    lines = [f"  {status:<5}" + meaning.replace("\n", "\n       ")
             for status, meaning in statuses]
    if note:
        lines.append("  " + note.replace("\n", "\n  "))
    return "exit status:\n" + "\n".join(lines)


EXIT_STATUS = format_exit_status()

EXIT_OK, EXIT_BAD_STREAM, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _argparse():
    import argparse

    class Parser(argparse.ArgumentParser):
        """Usage errors in one line, as every other message."""

        def error(self, message):
            self.exit(EXIT_USAGE, f"{self.prog}: {message} (see '{self.prog} --help')\n")

    return argparse, Parser


def command_parser(verb, summary, description, examples, converter=True,
                   exit_statuses=EXIT_STATUSES):
    """The parser of ``ndagent-VERB`` with the options every command shares; ``converter``
    adds the bad-line policy options (``--strict``, ``-q``)."""
    argparse, parser_class = _argparse()
    parser = parser_class(
        prog=f"ndagent-{verb}",
        description=f"{summary}.\n\n{description}",
        epilog=f"examples:\n{examples}\n\n{format_exit_status(exit_statuses)}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _keep_parts(parser, summary, description, examples, exit_statuses)
    parser.add_argument(
        "files", nargs="*", metavar="FILE",
        help="input streams, read in order as one; '-' or none: standard input")
    if converter:
        parser.add_argument(
            "--strict", action="store_true",
            help="stop with status 1 at the first line that is not a JSON object "
                 "(by default such lines are skipped with a warning)")
        parser.add_argument(
            "-q", "--quiet", action="store_true",
            help="do not print warnings (errors are still printed)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def _keep_parts(parser, summary, description, examples, exit_statuses):
    """Keep the texts --help is made of on the parser, for the man pages (man/generate.py)."""
    parser.man_short_description = summary  # argparse-manpage's NAME line
    parser.help_parts = {"summary": summary, "description": description,
                         "examples": examples, "exit_statuses": exit_statuses}


SUMMARY = "small Unix filters for the NDJSON event streams of AI coding agents"

DESCRIPTION = """\
Small Unix filters for the NDJSON event streams that AI coding agents print (the Cursor
Agent CLI's --output-format stream-json).

'ndagent VERB ...' and 'ndagent-VERB ...' are the same command; 'ndagent VERB --help'
tells more."""

EXAMPLES = """\
  cursor-agent -p --output-format stream-json 'fix the tests' | ndagent result
  ndagent json run.ndjson | jq -r .result
  # how the runs of a day ended, counted
  ndagent json logs/*.ndjson | jq -r .subtype | sort | uniq -c
  # the session ids of the three slowest runs
  ndagent json logs/*.ndjson | jq -r '[.duration_ms, .session_id] | @tsv' |
    sort -rn | head -n 3 | cut -f 2
  # in a Makefile: the rule fails when the agent's run failed or was cut off
  answer.md: prompt.txt
  \tcursor-agent -p --output-format stream-json "$$(cat $<)" | ndagent result > $@"""


def build_parser():
    """The parser of ``ndagent`` itself, which hands over to ``ndagent-VERB``."""
    argparse, parser_class = _argparse()
    listing = "\n".join(f"  {verb:<10}{summary}" for verb, summary in COMMANDS)
    intro, _, rest = DESCRIPTION.partition("\n\n")
    parser = parser_class(
        prog="ndagent",
        description=f"{intro}\n\ncommands:\n{listing}\n\n{rest}",
        epilog=f"examples:\n{EXAMPLES}\n\n{EXIT_STATUS}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _keep_parts(parser, SUMMARY, DESCRIPTION, EXAMPLES, EXIT_STATUSES)
    parser.add_argument("command", choices=[verb for verb, _ in COMMANDS], metavar="VERB",
                        help="the command to run: " + ", ".join(v for v, _ in COMMANDS))
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARG",
                        help="the command's own options and FILEs")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def main(argv=None):
    """``ndagent VERB ...``: run ``ndagent-VERB``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in dict(COMMANDS):
        from importlib import import_module

        try:
            command = import_module(f"ndagent.cmd_{argv[0]}")
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        return command.main(argv[1:])
    parser = build_parser()
    if not argv:
        parser.error("a VERB is needed: " + ", ".join(verb for verb, _ in COMMANDS))
    parser.parse_args(argv)
    return EXIT_USAGE


class _Stop(Exception):
    """Ends the stream early with a status (``--strict`` at a bad line)."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


class Output:
    """Standard output as bytes, written out at each ``flush`` (after each input batch)."""

    def __init__(self, fd=1):
        self.fd = fd
        self.parts = []
        self.size = 0

    def write(self, data):
        self.parts.append(data)
        self.size += len(data)
        if self.size > 1 << 20:
            self.flush()

    def flush(self):
        if not self.parts:
            return
        data = memoryview(b"".join(self.parts))
        self.parts.clear()
        self.size = 0
        while data:
            data = data[os.write(self.fd, data):]


class Command:
    """What one verb does with the stream.  The frame calls ``begin_run``, ``event``
    (for each decoded event of the types in ``want``; all types when None), ``end_run``
    and, at the end of the input, ``finish``; the defaults do nothing."""

    want = None
    # Keep integers beyond 64 bits exact (for commands that print values again).
    exact = False
    # Each FILE is a stream of its own (runs end with it; ``end_input`` is called).
    per_input = False

    def __init__(self, args, prog, out):
        self.args = args
        self.prog = prog
        self.out = out
        self.status = EXIT_OK
        self.quiet = getattr(args, "quiet", False)

    def begin_run(self, run):
        pass

    def event(self, event):
        pass

    def end_run(self, run):
        """The run is over: ``run.result`` is its result event, or None.  By default a
        run without a result, or one that reports failure, is an error."""
        if run.result is None:
            self.error(run, "run ended without a result event: the agent failed or was cut off")
        else:
            from ndagent.stream import is_failure

            if is_failure(run.result.data):
                self.error(run.result, "the run reported failure")

    def end_input(self, source):
        pass

    def no_run(self, source):
        """The input held no event at all: when an agent fails before it starts, it
        prints nothing (or only lines that are not events).  An error, status 1."""
        self.say(f"{source}: no events: the agent printed nothing, or failed before it began")
        self.status = max(self.status, EXIT_BAD_STREAM)

    def finish(self):
        pass

    def bad_line(self, bad):
        """A line that is not a JSON object: skipped with a warning, or the end of the
        stream under ``--strict``."""
        if getattr(self.args, "strict", False):
            self.error(bad, bad.reason)
            raise _Stop(EXIT_BAD_STREAM)
        self.warn(bad, "skipped: " + bad.reason)

    def unreadable(self, item):
        where = item.source if item.line is None else f"{item.source}:{item.line}"
        self.say(f"{where}: cannot read: {item.reason}")
        self.status = max(self.status, EXIT_USAGE)

    def error(self, where, text):
        """An error at ``where`` (anything with ``source`` and ``line``): status 1."""
        self.say(f"{where.source}:{where.line}: {text}")
        self.status = max(self.status, EXIT_BAD_STREAM)

    def warn(self, where, text):
        if not self.quiet:
            self.say(f"{where.source}:{where.line}: warning: {text}")

    def say(self, text):
        """One line on standard error, control characters spelt out; what is waiting
        for standard output goes first, so that a terminal shows both in order."""
        from ndagent.terminal import escape_controls

        self.out.flush()
        message = f"{self.prog}: {escape_controls(text)}\n".encode("utf-8", "replace")
        try:  # noqa: SIM105 - contextlib would cost start-up time
            os.write(2, message)
        except OSError:
            pass


def run_command(build, command_class, argv=None):
    """The entry point of ``ndagent-VERB``: parse, run, and turn every outcome into an
    exit status (never a traceback).  What it sets for the whole process (SIGPIPE, the
    collector) is put back before it returns, so that a script may call ``main`` again
    and again."""
    import gc
    import signal

    # Die quietly of SIGPIPE, as cat does, when the reader of stdout goes away.
    on_sigpipe = signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Decoding makes many short-lived dicts and no cycles: collecting them with the
    # default threshold costs 5-15% of the run for nothing.
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    try:
        try:
            _load_decoder()
            parser = build()
            args = parser.parse_args(argv)
            out = Output()
            command = command_class(args, parser.prog, out)
            return execute(command, args.files)
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            return 128 + 13
        except OSError as error:
            command.say(f"write error: {error.strerror or error}")
            return EXIT_USAGE
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
        signal.signal(signal.SIGPIPE, on_sigpipe)


def _load_decoder():
    """Import the decoder with Ctrl-C held back: orjson's module set-up crashes the
    process when interrupted.  A Ctrl-C meanwhile arrives just after, as usual."""
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        import ndagent.decoder  # noqa: F401
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def execute(command, inputs):
    """Feed the inputs to ``command``; its exit status."""
    from ndagent.decoder import BadLine, Event, Skipped, batches, source_name
    from ndagent.stream import Runs

    runs = Runs()
    out = command.out
    feed, event, end_run = runs.feed, command.event, command.end_run  # the hot loop's
    # --strict must see every bad line, so the prefilter cannot pass any over.
    every_line = getattr(command.args, "strict", False)
    began = False  # whether a run began (in this input, for per_input commands)
    try:
        for name in inputs or ("-",):
            for batch in batches((name,), command.want, exact=command.exact,
                                 every_line=every_line):
                for item in batch:
                    kind = item.__class__
                    if kind is Event or kind is Skipped:
                        ended, begun = feed(item)
                        if ended is not None:
                            end_run(ended)
                        if begun is not None:
                            began = True
                            command.begin_run(begun)
                        if kind is Event:
                            event(item)
                            if item.type == "result" and runs.current.result is item:
                                end_run(runs.current)
                    elif kind is BadLine:
                        command.bad_line(item)
                    else:
                        command.unreadable(item)
                out.flush()
            if command.per_input:
                ended = runs.finish()
                if ended is not None:
                    command.end_run(ended)
                if not began:
                    command.no_run(source_name(name))
                began = False
                command.end_input(source_name(name))
                out.flush()
        ended = runs.finish()
        if ended is not None:
            command.end_run(ended)
        if not began and not command.per_input:
            command.no_run(source_name(name))
        command.finish()
    except _Stop as stop:
        command.status = max(command.status, stop.status)
    out.flush()
    return command.status
