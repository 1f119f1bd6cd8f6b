"""The frame every ndagent command runs in.

One place does what all the filters share: the options every command has, reading the
FILE arguments in order as one stream, splitting it into runs, the policy for bad
lines, one-line messages (``ndagent-VERB: FILE:LINE: error: message``), exit statuses, output
flushed after each batch of input, and quiet exits when the reader of stdout goes away.
A command declares its options (``build_parser``) and subclasses ``Command`` with what
it does for each event and at the end of each run.
"""

import os
import sys

from ndagent import __version__

# The verbs, in the order the top-level help lists them: each is the module
# ndagent.cmd_VERB, whose Command class says the rest (COMMANDS).
VERBS = ("json", "result", "text", "tools", "validate", "stats", "run")

# VERB -> its Command class, filled as the classes are defined.
_REGISTRY = {}


def __getattr__(name):
    """``COMMANDS``: ((verb, summary), ...), from the verbs' classes (imported when
    asked for: a command needs only its own)."""
    if name == "COMMANDS":
        from importlib import import_module

        for verb in VERBS:
            import_module(f"ndagent.cmd_{verb}")
        return tuple((verb, _REGISTRY[verb].SUMMARY) for verb in VERBS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# The exit statuses every command shares, (status, meaning), and a note after them: the
# one source of the "exit status:" part of --help and of the man pages' EXIT STATUS.
EXIT_STATUSES = (
    ("0", "success"),
    ("1", "the stream is bad or incomplete: no event at all, a run without a result\n"
          "event, a failed run, a warning under --strict"),
    ("2", "usage error, a FILE that cannot be read or that is the output file,\n"
          "output that cannot be written, or no memory for a line (--max-line)"),
    ("130", "interrupted (Ctrl-C)"),
)
EXIT_STATUS_NOTE = """\
When the reader of standard output goes away (as in '| head -1'), the command
stops quietly, as cat does."""


# What the commands that print JSON say in --help about a terminal (ndagent.terminal).
JSON_ON_A_TERMINAL = """\
JSON output on a terminal: DEL, the C1 control characters and the characters that
reorder or hide text (bidirectional controls, zero-width and tag characters) are
written as \\u escapes (\\u009b, \\udb40\\udc01): the same JSON values, harmless to
show. Through a pipe or to a file, the bytes are as orjson writes them."""


def format_exit_status(statuses=EXIT_STATUSES, note=EXIT_STATUS_NOTE):
    """The "exit status:" part of --help."""
    lines = [f"  {status:<5}" + meaning.replace("\n", "\n       ")
             for status, meaning in statuses]
    if note:
        lines.append("  " + note.replace("\n", "\n  "))
    return "exit status:\n" + "\n".join(lines)


EXIT_STATUS = format_exit_status()

EXIT_OK, EXIT_BAD_STREAM, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

# A regular FILE this large is read in parts, one per core, by a command that
# splits_files, where its format says the stream may be cut (ndagent.workers.split).
SPLIT_FROM = 16 << 20


def _argparse():
    import argparse

    class Parser(argparse.ArgumentParser):
        """Usage errors in one line, as every other message."""

        # The width of a formatter made for anything but help: argparse makes one for
        # each option added (to check its metavar), which would import shutil to ask the
        # terminal's width each time a command starts.
        formatter_width = 80

        def _get_formatter(self):
            return self.formatter_class(prog=self.prog, width=self.formatter_width)

        def format_help(self):
            self.formatter_width = None  # the terminal's
            return super().format_help()

        def format_usage(self):
            self.formatter_width = None
            return super().format_usage()

        def error(self, message):
            from ndagent.terminal import escape_controls

            # The message may quote an argument: a file name can hold escape sequences.
            self.exit(EXIT_USAGE, f"{self.prog}: {escape_controls(message)} "
                                  f"(see '{self.prog} --help')\n")

        def parse_known_args(self, args=None, namespace=None):
            args = sys.argv[1:] if args is None else list(args)
            return super().parse_known_args(_attach_optional_values(self, args), namespace)

        def _print_message(self, message, file=None):
            """Help, version and usage, written as every other output: argparse ignores
            write errors ('--help > /dev/full' said nothing, status 0)."""
            if not message:
                return
            data = message.encode("utf-8", "replace")
            if file is not sys.stdout:
                write_message(data)
                return
            try:
                write_all(1, data)
            except BrokenPipeError:
                sys.exit(die_of_sigpipe())
            except OSError as error:
                write_message(f"{self.prog}: write error: {error.strerror or error}\n"
                              .encode())
                sys.exit(EXIT_USAGE)

    return argparse, Parser


def _attach_optional_values(parser, args):
    """GNU's rule for an option whose value is optional (``nargs="?"``, as --color): it
    takes a value only when attached (``--color=never``), so that a bare ``--color``
    means its ``const`` and the word after it stays an argument (a FILE): argparse
    alone took the FILE for the option's value."""
    optional = {name: action for action in parser._actions
                if action.nargs == "?" and action.option_strings
                for name in action.option_strings}
    if not optional:
        return args
    names = [name for name in parser._option_string_actions if name.startswith("--")]
    given = []
    for index, arg in enumerate(args):
        if arg == "--":
            return given + args[index:]
        name = arg
        if arg.startswith("--") and arg not in optional and "=" not in arg:
            found = [option for option in names if option.startswith(arg)]
            if len(found) == 1:  # an abbreviation, as argparse allows
                name = found[0]
        action = optional.get(name)
        given.append(arg if action is None else f"{name}={action.const}")
    return given


# --color, in every command that colours its output: a bare --color is always, as in
# GNU grep and ls; auto colours on a terminal, unless NO_COLOR is set or TERM is dumb.
COLOR_CHOICES = ("auto", "always", "never")
COLOR_ENVIRONMENT = {
    "NO_COLOR": "when set and not empty, --color=auto does not colour (no-color.org)",
    "TERM": "when dumb, --color=auto does not colour",
}


def add_color_option(parser, what):
    """``--color[=WHEN]``; ``what``: what it colours, for --help."""
    parser.add_argument(
        "--color", nargs="?", choices=COLOR_CHOICES, const="always", default="auto",
        metavar="WHEN",
        help=f"colour {what}: always (a bare --color), never, or auto (the default): when "
             "standard output is a terminal, NO_COLOR is not set and TERM is not dumb")


# --format: the same value name for the same output in every verb (ndjson: one JSON
# object a line); an old name is still accepted, so that scripts keep working.
FORMAT_ALIASES = {"json": "ndjson"}


def add_format_option(parser, formats, default, default_help=None):
    """``--format NAME``; ``formats``: {name: what it prints}, for --help.  ``default``
    None: the command chooses, as ``default_help`` says."""
    aliases = [f"{old} for {new}" for old, new in FORMAT_ALIASES.items() if new in formats]
    parser.add_argument(
        "--format", choices=tuple(formats), default=default,
        type=lambda name: FORMAT_ALIASES.get(name, name),
        help="; ".join(f"{name}: {meaning}" for name, meaning in formats.items())
             + f" (default: {default_help or default})"
             + (f"; the old name {', '.join(aliases)} is accepted" if aliases else ""))


def use_color(choice, fd):
    """Whether to colour output on ``fd``, by ``--color``."""
    if choice != "auto":
        return choice == "always"
    return (os.isatty(fd) and not os.environ.get("NO_COLOR")
            and os.environ.get("TERM") != "dumb")


# How shells complete a FILE argument, for the completions generated by shtab (at
# development time: ndagent never imports it).
_COMPLETE_FILES = {"bash": "_shtab_compgen_files", "zsh": "_files"}


# What every command's --help says of the agents it reads.
AGENTS_HELP = """\
Agents: each FILE (and standard input) is read as the stream of the agent that its
first JSON objects tell, by their keys and values: Cursor ('cursor-agent -p
--output-format stream-json'), Claude Code ('claude -p --output-format stream-json
--verbose'), Codex ('codex exec --json') or Gemini ('gemini -p --output-format
stream-json'); objects before the first decisive one are held and handled after it.
With none in 100 objects or in the whole input, an input whose objects all have types
Cursor uses is Cursor's (so is one with no object); any other is reported, 'not an
agent stream', and not read (status 1); so is an agent's json output rather than its
stream (an array of objects, or a lone '{' or '[' line, and no decisive object): 'json
output, not stream-json'. --agent NAME names the agent instead: an input of another
agent is reported and not read (status 1). Once the agent is told, an object of
another agent is a bad line, 'a codex event in a claude stream': skipped with a
warning (an error in validate), wherever a line is decoded: every line in validate and
under --strict, else the lines that may hold an event the command needs."""


# -q and --strict mean the same in every verb; each verb's --help says what else.
QUIET_HELP = "print no warnings, only errors"
STRICT_HELP = "make every warning an error (status 1)"


def command_parser(verb, summary, description, examples, converter=True,
                   exit_statuses=EXIT_STATUSES,
                   files_help="input streams, read in order as one; '-' or none: standard "
                              "input"):
    """The parser of ``ndagent-VERB`` with the options every command shares; ``converter``
    adds the bad-line policy options (``--strict``, ``-q``)."""
    argparse, parser_class = _argparse()
    parser = parser_class(
        prog=f"ndagent-{verb}",
        description=f"{summary}.\n\n{description}\n\n{AGENTS_HELP}",
        epilog=f"examples:\n{examples}\n\n{format_exit_status(exit_statuses)}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _keep_parts(parser, summary, description, examples, exit_statuses)
    if files_help is not None:  # None: a command that reads no FILE (run)
        files = parser.add_argument("files", nargs="*", metavar="FILE",
                                    help=f"{files_help}; gzip, bzip2 or xz: read decompressed")
        files.complete = _COMPLETE_FILES
    from ndagent.formats import NAMES

    parser.add_argument(
        "--agent", choices=("auto", *NAMES), default="auto",
        help="the agent whose stream each FILE is: auto (the default) tells it from the "
             "first objects of each FILE: " + ", ".join(NAMES))
    parser.add_argument(
        "--max-line", type=_size, default=_MAX_LINE, metavar="SIZE",
        help="the longest line read, in bytes (suffixes K, M, G: 1024s; default 64M): a "
             "longer line is reported and passed over without being held in memory")
    if converter:
        parser.add_argument(
            "--strict", action="store_true",
            help=f"{STRICT_HELP}; stop at the first line that is not a JSON object, or "
                 "another agent's event (by default skipped with a warning), and decode "
                 "every line in full")
        parser.add_argument(
            "-q", "--quiet", action="store_true",
            help=f"{QUIET_HELP}: no message marked 'warning:' on standard error")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


_MAX_LINE = 64 << 20  # ndagent.decoder.MAX_LINE, which this module does not import
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _size(text):
    """A --max-line value: a whole number of bytes, maybe with a suffix K, M or G."""
    from argparse import ArgumentTypeError

    digits, unit = text[:-1], text[-1:].upper()
    if unit not in _UNITS or unit == "":
        digits, unit = text, ""
    if not (digits.isascii() and digits.isdigit()) or int(digits) == 0:
        raise ArgumentTypeError(f"not a size in bytes such as 4096, 512K, 64M: {text!r}")
    return int(digits) * _UNITS[unit]


def whole_number(text):
    """An option's value: a whole number (stats --top, -j)."""
    from argparse import ArgumentTypeError

    if not (text.isascii() and text.isdigit()):
        raise ArgumentTypeError(f"not a whole number: {text!r}")
    return int(text)


def _keep_parts(parser, summary, description, examples, exit_statuses):
    """Keep the texts --help is made of on the parser, for the man pages (man/generate.py)."""
    parser.man_short_description = summary  # argparse-manpage's NAME line
    parser.help_parts = {"summary": summary, "description": description,
                         "examples": examples, "exit_statuses": exit_statuses}


SUMMARY = "small Unix filters for the NDJSON event streams of AI coding agents"

DESCRIPTION = """\
Small Unix filters for the NDJSON event streams that AI coding agents print: the Cursor
Agent CLI's --output-format stream-json, Claude Code's 'claude -p --output-format
stream-json --verbose', 'codex exec --json' and the Gemini CLI's --output-format
stream-json. Each input's agent is told from its first objects.

'ndagent VERB ...' and 'ndagent-VERB ...' are the same command; 'ndagent VERB --help'
tells more. 'ndagent completion bash|zsh|fish' prints the completion script of both
forms, for a shell's start-up file."""

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
    listing = "\n".join(f"  {verb:<10}{summary}" for verb, summary in __getattr__("COMMANDS"))
    intro, _, rest = DESCRIPTION.partition("\n\n")
    parser = parser_class(
        prog="ndagent",
        description=f"{intro}\n\ncommands:\n{listing}\n\n{rest}",
        epilog=f"examples:\n{EXAMPLES}\n\n{EXIT_STATUS}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _keep_parts(parser, SUMMARY, DESCRIPTION, EXAMPLES, EXIT_STATUSES)
    parser.add_argument("command", choices=VERBS, metavar="VERB",
                        help="the command to run: " + ", ".join(VERBS))
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARG",
                        help="the command's own options and FILEs")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


# 'ndagent completion SHELL': the shells and the file of a program's script in each
# (ndagent/completions/SHELL/, made by 'make completions').
COMPLETION_FILES = {"bash": "{}", "zsh": "_{}", "fish": "{}.fish"}


def print_completion(argv):
    """``ndagent completion SHELL``: the completion script of ``ndagent`` and of every
    ``ndagent-VERB`` for SHELL, as gh and rustup print theirs: pipx installs no
    completion files."""
    argparse, parser_class = _argparse()
    parser = parser_class(
        prog="ndagent completion",
        description="Print the completion script of ndagent and ndagent-VERB for SHELL.",
        epilog="examples:\n"
               "  eval \"$(ndagent completion bash)\"     # in ~/.bashrc\n"
               "  eval \"$(ndagent completion zsh)\"      # in ~/.zshrc, after compinit\n"
               "  ndagent completion fish | source       # in ~/.config/fish/config.fish",
        formatter_class=argparse.RawDescriptionHelpFormatter)
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
    from importlib import import_module

    try:
        command = import_module(f"ndagent.cmd_{argv[0]}")
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return command.main(argv[1:])


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
        self.terminal = os.isatty(fd)
        # On a terminal: whether what was written last ends inside a line (an answer
        # still arriving, or printed with -n or -z).
        self.line_open = False
        self.said = set()  # the keys of the messages said once (``message``)

    def write_json(self, value):
        """``value`` as one JSON line; on a terminal, with the characters that would act
        on it or hide from it written as ``\\u`` escapes (the same JSON value)."""
        from ndagent.decoder import encode_line

        line = encode_line(value)
        if self.terminal:
            from ndagent.terminal import escape_json

            line = escape_json(line)
        self.write(line)

    def write(self, data):
        self.parts.append(data)
        self.size += len(data)
        if self.size > 1 << 20:
            self.flush()

    def message(self, data, once=None):
        """Write ``data``, whole lines, on standard error: what is waiting for standard
        output goes first, so that a terminal shows both in order, and on a line of its
        own.  ``once``: a key, of which only the first message is written (a command's
        "warns once", whatever processes read its parts)."""
        if self.said_before(once):
            return
        self.flush()
        if self.line_open and _same_terminal(self.fd, 2):
            # Not on the line of the answer being printed: on a line of its own.
            data = b"\n" + data
            self.line_open = False
        write_message(data)

    def said_before(self, once):
        """Whether a message of the key ``once`` was said (None: no key); from now on
        it was."""
        if once is None:
            return False
        if once in self.said:
            return True
        self.said.add(once)
        return False

    def flush(self):
        if not self.parts:
            return
        data = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        write_all(self.fd, data)
        if self.terminal:
            self.line_open = not data.endswith(b"\n")


def write_all(fd, data):
    """Write all of ``data``.  A parent may have left the descriptor non-blocking (the
    flag belongs to the open file, shared with whoever else has it): then wait until
    there is room, rather than take "not now" (EAGAIN) for an error."""
    data = memoryview(data)
    while data:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            import select

            select.select([], [fd], [])


def write_message(data):
    """Bytes on standard error.  A failed write is ignored: a closed standard error (or
    its reader gone) must not stop the command, whose output and status matter more.
    While a command runs, SIGPIPE is ignored, so a write to a pipe with no reader fails
    (EPIPE) instead of killing it."""
    try:  # noqa: SIM105 - contextlib would cost start-up time
        write_all(2, data)
    except OSError:
        pass


def die_of_sigpipe():
    """The reader of standard output went away: die of SIGPIPE, quietly, as cat does
    (a shell sees status 141).  Where SIGPIPE is blocked, status 141 all the same."""
    import signal

    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    return 128 + signal.SIGPIPE


class Command:
    """What one verb does with the model events of its inputs (``ndagent.model``).

    A verb is one subclass: it declares ``VERB``, ``SUMMARY``, ``DESCRIPTION``,
    ``EXAMPLES``, its options (``add_options``) and what it ``needs`` ("text", "tools",
    "tool_ends", "ends": which model events; None: every line decoded, for validate;
    ``needs_of`` where they depend on the input's format), from which each input's
    format gives the prefilter.  The frame calls ``begin_run``, ``text``, ``note``, the
    call handlers (``keep``, ``call_ended``, ``call_again``, ``calls_dropped``: one
    pairer in the frame pairs ToolStart and ToolEnd, by call_id, in bounded memory),
    ``end_run`` with the calls still pending, and, at the end of the input, ``finish``;
    the defaults do nothing, but for runs that failed or were cut off, which are
    errors."""

    VERB = None
    SUMMARY = DESCRIPTION = EXAMPLES = ""
    # The exit statuses of --help and the man page; whether it has --strict and -q
    # (the bad-line policy of the converters), and the help of FILE.
    EXIT_STATUSES = EXIT_STATUSES
    CONVERTER = True
    FILES_HELP = "input streams, read in order as one; '-' or none: standard input"

    needs = frozenset({"ends"})
    # Keep integers beyond 64 bits exact (for commands that print values again).
    exact = False
    # Each FILE is a stream of its own (runs end with it; ``end_input`` is called).
    per_input = False
    # Whether the format's schema checks make Notes (validate).
    checks = False
    # Whether the decoder may pass over the lines that cannot hold a wanted event (the
    # tests turn it off, to show that the output is the same).
    prefilter = True

    @property
    def every_line(self):
        """Whether every line is decoded and every object handed on: --strict must see
        every bad line, so the prefilter cannot pass any over; nor can the selection,
        so that every object is checked for another agent's."""
        return self.strict or not self.prefilter

    @property
    def forced_agent(self):
        """The agent --agent names, or None to tell each input's from its objects."""
        forced = getattr(self.args, "agent", "auto")
        return None if forced == "auto" else forced

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("VERB"):
            _REGISTRY[cls.VERB] = cls
            cls.main = classmethod(lambda command, argv=None: run_command(
                command.build_parser, command, argv))

    @classmethod
    def build_parser(cls):
        parser = command_parser(cls.VERB, cls.SUMMARY, cls.DESCRIPTION, cls.EXAMPLES,
                                converter=cls.CONVERTER, exit_statuses=cls.EXIT_STATUSES,
                                files_help=cls.FILES_HELP)
        cls.add_options(parser)
        return parser

    @classmethod
    def add_options(cls, parser):
        """The verb's own options."""

    @classmethod
    def parse_args(cls, parser, argv):
        """The command's arguments, from its parser."""
        return parser.parse_args(argv)

    @classmethod
    def check_options(cls, parser, args):
        """The usage errors of options that go together (``parser.error``); in every
        verb: --header is for --format tsv (no other format has a header row)."""
        if getattr(args, "header", False) and getattr(args, "format", None) != "tsv":
            parser.error("--header is for --format tsv, the only format with a header row")

    def __init__(self, args, prog, out):
        self.args = args
        self.prog = prog
        self.out = out
        self.status = EXIT_OK
        self.quiet = getattr(args, "quiet", False)
        self.strict = getattr(args, "strict", False)
        self.format = None  # the format module of the input being read
        self.pairer = None  # the frame's CallPairer, while it runs

    def execute(self):
        """Read the inputs (the FILE arguments, through ``execute``): the exit status.  A
        verb may read them its own way (stats spreads them over processes; run reads
        the agent it starts).  One large regular FILE is read in parts, where it may be
        (``splits_files``)."""
        files = self.args.files
        if self.splits_files and len(files) == 1 and _large_file(files[0]):
            from ndagent import workers

            if workers.read_in_parts(self, files[0]):
                self.out.flush()
                return self.status
        return execute(self, files)

    def begin_run(self, start):
        pass

    def text(self, piece):
        pass

    def note(self, note):
        pass

    def needs_of(self, module):
        """What the command needs of a stream in ``module``'s format: ``needs``, unless
        it depends on the format."""
        return self.needs

    def keep(self, start):
        """What to keep of a ToolStart until its call ends, ``(value, size in bytes)``,
        or None to keep nothing (then its end comes with no start)."""
        return None

    def call_ended(self, kept, end):
        """A call ended: ``kept`` is what ``keep`` gave for its start, or None."""

    def call_again(self, kept, start):
        """A call_id is started again while open: ``kept`` is the first call's."""

    def calls_dropped(self, dropped, start, why):
        """Too many calls open at ``start``: ``dropped`` (kept values, oldest first) are
        no longer tracked; ``why`` says so, for messages."""

    def wants_call(self, call):
        """Whether to pair this ToolStart or ToolEnd at all."""
        return True

    def end_run(self, end, pending):
        """The run is over (``end``: its RunEnd; ``pending``: the kept values of its
        calls never ended).  By default a run cut off, or one that failed, is an error."""
        if end.cutoff:
            self.error(end.start, self.cut_off(end))
        elif not end.ok:
            self.error(end, self.failure(end))

    def cut_off(self, end):
        """The message of a run cut off."""
        end_event = getattr(self.format, "RUN_END", "its end event")
        return f"run ended without {end_event}: the agent failed or was cut off"

    @staticmethod
    def failure(end):
        """The message of a failed run: its failure text, where the agent gives one."""
        if end.failure is None:
            return "the run reported failure"
        from ndagent.terminal import quote

        return f'run failed: "{quote(str(end.failure))}"'

    def end_input(self, source, events):
        """The input ``source`` is read (``events``: the objects it held)."""

    def no_run(self, source):
        """The input held no event at all: when an agent fails before it starts, it
        prints nothing (or only lines that are not events).  An error, status 1, said at
        line 1 as validate says it."""
        self.error(_Where(source, 1),
                   "no events: the agent printed nothing, or failed before it began")

    def not_read(self, where, message):
        """An input that is not read: no agent's stream, or another agent's than
        ``--agent`` names.  An error, status 1."""
        self.error(where, message)

    def finish(self):
        pass

    def other_agent(self, event):
        """An object of another agent than the input's (``event.message`` says which):
        a bad line."""
        self.bad_line(event)

    def bad_line(self, bad):
        """A line that is not a JSON object: skipped with a warning, or the end of the
        stream under ``--strict``."""
        if self.strict:
            self.error(bad, bad.message)
            raise _Stop(EXIT_BAD_STREAM)
        self.warn(bad, "skipped: " + bad.message)

    def unreadable(self, item):
        self.all_read = False
        where = item.source if item.line is None else f"{item.source}:{item.line}"
        self.say(f"{where}: error: cannot read: {item.reason}")
        # The OS's refusal is the user's to mend (status 2); text in another encoding
        # is a bad stream (status 1).
        self.status = max(self.status, EXIT_USAGE if item.os_error else EXIT_BAD_STREAM)

    def error(self, where, text, once=None):
        """An error at ``where`` (anything with ``source`` and ``line``): status 1.
        Labelled as validate labels its diagnostics, so that grep ': error:' finds it."""
        self.say(f"{where.source}:{where.line}: error: {text}", once)
        self.status = max(self.status, EXIT_BAD_STREAM)

    def warn(self, where, text, once=None):
        """A warning at ``where``: an error under --strict, nothing under -q."""
        if self.strict:
            self.error(where, text, once)
        elif not self.quiet:
            self.say(f"{where.source}:{where.line}: warning: {text}", once)

    def say(self, text, once=None):
        """One line on standard error, control characters spelt out; with ``once``, a
        key, only the first message of that key (``Output.message``)."""
        from ndagent.terminal import escape_controls

        self.out.message(f"{self.prog}: {escape_controls(text)}\n".encode("utf-8", "replace"),
                         once)

    # Reading FILEs in worker processes (ndagent.workers), for per_input commands.

    stopped = False  # read no further (the stream ended early: --strict)
    # Whether a large FILE may be read in parts, each in a process of its own, where its
    # format says the stream may be cut (ndagent.workers.split): what one process
    # keeps from one run to the next, the command keeps in the parts' findings
    # (worker_state, added up by take_parts).
    splits_files = False
    # Whether, where the format selects the lines the verb needs, the two-process scan
    # of a large file (ndagent.decoder) shares its work at less cost than parts do: the
    # verbs that do little with each line they decode (json, text, tools).
    prefers_scan = False
    part = None  # while a part of a FILE is read, that part (a decoder.Part)
    all_read = True  # whether every input was read to its end (no Unreadable)

    def read_here(self, name):
        """Read one FILE in this process."""
        execute(self, [name])

    def worker_options(self):
        """Options of a worker's command beyond this one's (a format told here)."""
        return {}

    def worker_state(self):
        """What a worker's command found besides its output, for ``take_worker_state``."""
        return None

    def take_worker_state(self, state):
        """Add to this command what a worker's command found (``worker_state``)."""

    def take_parts(self, states):
        """Add to this command what the commands that read the parts of one FILE found
        (their ``worker_state``, in order; none after a part that could not be read to
        its end, as one process stops there)."""


def _large_file(name):
    """Whether ``name`` is a regular file of SPLIT_FROM bytes or more."""
    import stat

    try:
        found = os.stat(name)
    except (OSError, TypeError, ValueError):
        return False
    return stat.S_ISREG(found.st_mode) and found.st_size >= SPLIT_FROM


def _same_terminal(fd, other):
    """Whether ``fd`` and ``other`` are the same terminal."""
    try:
        return os.isatty(other) and os.fstat(fd).st_rdev == os.fstat(other).st_rdev
    except OSError:
        return False


def run_command(build, command_class, argv=None):
    """The entry point of ``ndagent-VERB``: parse, run, and turn every outcome into an
    exit status (never a traceback).  What it sets for the whole process (SIGPIPE, the
    collector) is put back before it returns, so that a script may call ``main`` again
    and again."""
    import gc
    import signal

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
            _load_decoder()
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
            command.say(f"write error: {error.strerror or error}")
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


def _load_decoder():
    """Import the decoder with Ctrl-C held back: orjson's module set-up crashes the
    process when interrupted.  A Ctrl-C meanwhile arrives just after, as usual."""
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        import ndagent.decoder  # noqa: F401
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


# How much of a regular file is read ahead to tell its agent before it is decoded; how
# many items of standard input are held at most until its agent is told.
DETECT_HEAD = 1 << 20
HOLD_LINES = 10_000


class _Where:
    """A place in the input: a line that is no item."""

    __slots__ = ("source", "line")

    def __init__(self, source, line):
        self.source = source
        self.line = line


class _OtherAgent:
    """An object of another agent than the input's, found after detection: a bad line
    (not one cut short), whose message names both."""

    __slots__ = ("source", "line", "message")
    cut_off = False

    def __init__(self, event, other, module):
        self.source = event.source
        self.line = event.line
        self.message = f"a {other.NAME} event in a {module.NAME} stream"


def _detect_head(name, detector):
    """The decision on a regular file's agent from its first DETECT_HEAD bytes (on a
    part of one, the agent it carries), or None (not a regular file, compressed,
    unreadable, or undecided within them: it is decided as it is read)."""
    import stat

    import orjson

    from ndagent.decoder import Part, compression
    from ndagent.formats import get

    if name.__class__ is Part:  # a part of a file whose agent was told from its head
        return get(name.about), None, None
    if not isinstance(name, (str, bytes, os.PathLike)) or name == "-":
        return None
    try:
        with open(name, "rb", buffering=0) as handle:
            found = os.fstat(handle.fileno())
            if not stat.S_ISREG(found.st_mode):
                return None
            # No more than the file holds (a buffer of DETECT_HEAD costs more than
            # reading a small file), and a byte more to see whether it has grown since.
            limit = min(DETECT_HEAD, found.st_size + 1)
            head = handle.read(limit)
            whole = len(head) < limit
    except OSError:
        return None
    if compression(head) is not None:
        return None
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    # Not the last piece: a line cut by the head, or the file's last line, without a
    # newline (after a last newline, the empty piece is taken as split takes it).
    lines = _pieces(head, whole and head.endswith(b"\n"))
    for number, line in enumerate(lines, 1):
        try:
            data = orjson.loads(line) if line.rstrip().endswith(b"}") else None
        except orjson.JSONDecodeError:
            data = None
        if data.__class__ is not dict:
            detector.other_line(line, number)
            continue
        found = detector.add(data, number)
        if found is not None:
            return found
    return detector.end() if whole else None


def _pieces(data, with_last):
    """The pieces of ``data`` between newlines, one at a time (the first lines are
    usually enough); the last piece only ``with_last``."""
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            if with_last:
                yield data[start:]
            return
        yield data[start:end]
        start = end + 1


# The model's event classes, for _dispatch (imported when a command runs).
_MODEL = None


def _dispatch(command, pairer, events, where):
    """Hand the model events of one item to ``command``: whether a run began.  A run
    cut off is said to end at ``where``: the item that began the next run, or the last
    line decoded when the input ended (or None: where its format says)."""
    RunEnd, RunStart, Text, ToolEnd, ToolStart = _MODEL  # noqa: N806 - classes
    began = False
    for event in events:
        kind = event.__class__
        if kind is Text:
            command.text(event)
        elif kind is ToolEnd:
            if command.wants_call(event):
                key = event.call_id
                command.call_ended(None if key is None else pairer.complete(key), event)
        elif kind is ToolStart:
            if command.wants_call(event):
                kept = command.keep(event)
                if kept is not None:
                    earlier, dropped = pairer.start(event.call_id, *kept)
                    if earlier is not None:
                        command.call_again(earlier, event)
                    if dropped:
                        command.calls_dropped(dropped, event, pairer.overflow)
        elif kind is RunStart:
            began = True
            command.begin_run(event)
        elif kind is RunEnd:
            if event.cutoff and where is not None:
                event.source, event.line = where.source, where.line
            command.end_run(event, pairer.close())
        else:
            command.note(event)
    return began


def execute(command, inputs):
    """Feed the inputs to ``command``: each input's agent is told (``--agent``, or
    from its first objects), its format's Reader turns its items into model events,
    and the frame pairs their calls.  The command's exit status."""
    from ndagent import model
    from ndagent.decoder import Event, LateSelection, Selection, Skipped, batches, source_name
    from ndagent.formats import Detector

    global _MODEL
    _MODEL = (model.RunEnd, model.RunStart, model.Text, model.ToolEnd, model.ToolStart)

    out = command.out
    pairer = command.pairer = model.CallPairer()
    max_line = command.args.max_line
    state = _State()
    read = None  # the last input read to its end: what "no events" is said of
    output = _output_file(out.fd)
    reader = None  # the Reader of the format of the inputs read so far
    try:
        for name in inputs or ("-",):
            source = source_name(name)
            if output is not None and _is_output(name, output):
                command.say(f"{source}: error: input file is output file")
                command.status = max(command.status, EXIT_USAGE)
                continue
            detector = Detector(command.forced_agent)
            decision = _detect_head(name, detector)
            late = None
            if decision is None:
                want = late = LateSelection()
                held = []
            elif decision[0] is None:
                command.not_read(_Where(source, decision[1]), decision[2])
                continue
            else:
                want = _selection(decision[0], command, Selection)
            if reader is not None and (command.per_input or decision is None
                                       or reader.format is not decision[0]):
                state.began = (_dispatch(command, pairer, reader.finish(), state.last)
                               or state.began)
                reader = None
            if decision is not None and reader is None:
                reader = _reader(decision[0], source, command)
            state.events, state.whole, state.last = 0, True, None
            refused = False
            for batch in batches((name,), want, exact=command.exact,
                                 every_line=command.every_line, max_line=max_line):
                if late is not None:
                    rest, decision = _hold(batch, held, detector)
                    if decision is None:
                        continue
                    late = None
                    if decision[0] is None:
                        command.not_read(_Where(source, decision[1]), decision[2])
                        refused = True
                        break
                    want.selection = _selection(decision[0], command, Selection)
                    reader = _reader(decision[0], source, command)
                    batch = _selected(held + rest, want.selection, Event, Skipped)
                _handle(state, command, reader, pairer, batch)
            if refused:
                continue
            if late is not None:  # the input ended undecided
                decision = detector.end()
                if decision[0] is None:
                    command.not_read(_Where(source, decision[1]), decision[2])
                    continue
                reader = _reader(decision[0], source, command)
                _handle(state, command, reader, pairer,
                        _selected(held, _selection(decision[0], command, Selection), Event,
                                  Skipped))
            if state.whole:
                read = source
            if command.per_input:
                state.began = (_dispatch(command, pairer, reader.finish(), state.last)
                               or state.began)
                reader = None
                if not state.began and state.whole:
                    command.no_run(source)
                state.began = False
                command.end_input(source, state.events)
                out.flush()
        if reader is not None:
            state.began = (_dispatch(command, pairer, reader.finish(), state.last)
                           or state.began)
        if not state.began and not command.per_input and read is not None:
            command.no_run(read)
        command.finish()
    except _Stop as stop:
        command.status = max(command.status, stop.status)
        command.stopped = True
    out.flush()
    return command.status


class _State:
    """What the frame knows of the input in hand: whether a run began (in this input,
    for per_input commands; else in any), how many events it held, whether it was
    read to its end, and its last line decoded (an Event item, or None: with a
    prefilter, the lines passed over after it are not told apart)."""

    __slots__ = ("began", "events", "whole", "last")

    def __init__(self):
        self.began = False
        self.events = 0
        self.whole = True
        self.last = None


def _handle(state, command, reader, pairer, batch):
    """Hand one batch of items to the reader, the pairer and the command."""
    from ndagent.decoder import BadLine, Event, Skipped

    feed_event, feed_skipped, text = reader.event, reader.skipped, command.text
    # The tests for another agent's objects, by type (OtherAgents).
    other_tests, learn_tests = reader.other_agents.by_type, reader.other_agents.tests
    text_class = _MODEL[2]
    events = 0
    for item in batch:
        kind = item.__class__
        if kind is Event:
            events += 1
            tests = other_tests.get(item.type)
            if tests is None:
                tests = learn_tests(item.type)
            if tests:  # inline: this runs on most events of a Cursor stream
                for decides, other in tests:
                    if decides(item.data):
                        command.other_agent(_OtherAgent(item, other, reader.format))
                        break
                else:
                    other = None
                if other is not None:
                    continue
            found = feed_event(item)
            if not found:
                continue
            if len(found) == 1 and found[0].__class__ is text_class:  # the usual case
                text(found[0])
            elif _dispatch(command, pairer, found, item):
                state.began = True
        elif kind is Skipped:
            found = feed_skipped(item)
            if found and _dispatch(command, pairer, found, item):
                state.began = True
        elif kind is BadLine:
            command.bad_line(item)
        else:
            command.unreadable(item)
            state.whole = False
    state.events += events
    for item in reversed(batch):
        if item.__class__ is Event:
            state.last = item
            break
    command.out.flush()


def _reader(module, source, command):
    """A Reader of ``module`` for ``source``, and the command told which format it reads;
    the reader holds besides the test for another agent's objects (``other_agents``)."""
    from ndagent.formats import OtherAgents

    reader = module.Reader(source, command.checks, command.needs_of(module))
    reader.format = command.format = module
    reader.other_agents = OtherAgents(module)
    return reader


_SELECTIONS = {}


def _selection(module, command, selection_class):
    """The decoder's Selection of the lines that ``command`` needs in ``module``'s
    format (None: the command takes ``every_line``, or every line the format writes
    may matter)."""
    needs = None if command.every_line else command.needs_of(module)
    if needs is None:
        return None
    key = (module.NAME, needs)
    if key not in _SELECTIONS:
        markers = module.markers(needs)
        _SELECTIONS[key] = None if markers is None else selection_class(markers)
    return _SELECTIONS[key]


def _hold(batch, held, detector):
    """Hold the items of an input whose agent is not told yet: ``(the items after the
    decisive one, decision)``, the decision None while undecided (the items are held).
    Past HOLD_LINES items (lines that are no objects: noise, bad lines) it is taken as
    at the end of the input, so that what is held stays bounded."""
    from ndagent.decoder import BadLine, Event

    for index, item in enumerate(batch):
        if item.__class__ is Event:
            decision = detector.add(item.data, item.line)
            if decision is not None:
                held.extend(batch[:index + 1])
                return batch[index + 1:], decision
        elif item.__class__ is BadLine:
            detector.other_line(item.start, item.line)
    held.extend(batch)
    if len(held) >= HOLD_LINES:
        return [], detector.end()
    return [], None


def _selected(held, selection, event_class, skipped_class):
    """The held items, the events that the selection would have passed over as Skipped
    (they were decoded only to tell the agent)."""
    if selection is None:
        return held
    return [skipped_class(item.source, item.line)
            if item.__class__ is event_class and not selection.wants(item.data) else item
            for item in held]


def _output_file(fd):
    """(device, inode) of the regular file that ``fd`` writes to, or None."""
    import stat

    try:
        found = os.fstat(fd)
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None


def _is_output(name, output):
    """Whether input ``name`` is the ``output`` file ((device, inode)): such an input is
    refused, as cat does, since the command would read what it writes ('ndagent json f
    >> f' grew f for ever)."""
    if not isinstance(name, (str, bytes, os.PathLike)):
        return False  # a stream ndagent opened itself (run's pipe)
    try:
        found = os.fstat(0) if name == "-" else os.stat(name)
    except OSError:
        return False
    return (found.st_dev, found.st_ino) == output
