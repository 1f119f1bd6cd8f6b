"""The reading frame: what every verb shares between its inputs and its output.

A verb is a ``Command`` subclass (csvkit's way): its options, what it ``needs`` of the
model, and hooks for the model events of its inputs.  The frame reads the inputs in
order, tells each one's agent (``--agent``, or from its first objects), has the
agent's format Reader turn its items into model events (``ndagent.model``), pairs
their tool calls in bounded memory, and applies the policy for bad lines and for
runs that failed or were cut off.  Where it pays, the inputs are shared out among
processes (``ndagent.inputs`` says how, ``ndagent.engine`` runs them): each share is
read by a new command of the verb's class, and the command that owns standard output
merges what they found (``partial``, ``merge``) and writes alone what comes once per
output (``begin_output``, ``end_output``).
"""


import os

from ndagent import inputs
from ndagent.feed import Stop, Where, output_file, read_here
from ndagent.formats import session_stores
from ndagent.model import FORGOTTEN, UNFINISHED
from ndagent.options import (
    EXIT_BAD_STREAM,
    EXIT_OK,
    EXIT_STATUSES,
    EXIT_USAGE,
    command_parser,
    period,
)
from ndagent.sources import STREAM_FILES, Part, source_name
from ndagent.terminal import escape_controls, quote
from ndagent.totals import Totals

# VERB -> its Command class, filled as the classes are defined.
REGISTRY = {}


class Command:
    """What one verb does with the model events of its inputs (``ndagent.model``).

    A verb is one subclass: it declares ``VERB``, ``SUMMARY``, ``DESCRIPTION``,
    ``EXAMPLES``, its options (``add_options``) and what it ``needs`` ("text", "tools",
    "tool_ends", "ends", "transcript", "messages": which model events; None: every line
    decoded, for validate;
    ``needs_of`` where they depend on the input's format), from which each input's
    format gives the prefilter.  The frame calls ``begin_run``, ``text``, ``note``,
    ``prompt``, ``thinking``, ``message``, the
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
            REGISTRY[cls.VERB] = cls

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
        verb: --header is for --format tsv (no other format has a header row), and
        --since and --until take dates."""
        if getattr(args, "header", False) and getattr(args, "format", None) != "tsv":
            parser.error("--header is for --format tsv, the only format with a header row")
        try:
            period(args)
        except ValueError:
            parser.error("--since and --until take a date: YYYY-MM-DD, YYYYMMDD, today or "
                         "yesterday")

    def __init__(self, args, prog, out):
        self.args = args
        self.prog = prog
        self.out = out
        self.status = EXIT_OK
        self.quiet = getattr(args, "quiet", False)
        self.strict = getattr(args, "strict", False)
        self.format = None  # the format module of the input being read
        self.pairer = None  # the frame's CallPairer, while it runs
        # The running totals of the runs read so far (ndagent.totals), across inputs.
        self.totals = Totals()
        # The folders of the session files --sessions reads (that exist).
        sessions = getattr(args, "sessions", False)
        self.stores = [] if sessions is False else session_stores(
            sessions, os.environ, os.path.expanduser("~"))
        # (zone, first day, last day) of the runs read (--since, --until), or None.
        self.period = period(args)

    def execute(self):
        """Run as the owner of standard output: what is written once per output
        (``begin_output``, ``end_output``: never by a process that reads a share of the
        inputs) around the reading of the inputs (``read``).  The exit status."""
        self.begin_output()
        found = self.input_names()
        if found:  # none: only directories that hold no stream (never standard input)
            self.read(found)
        self.end_output()
        self.out.flush()
        return self.status

    def input_names(self):
        """The inputs to read: the FILEs, a directory's stream files in its place
        (``inputs.expand``; one that holds none is a warning), or standard input when
        there is no FILE."""
        sessions = getattr(self.args, "sessions", False) is not False
        if sessions and not self.stores and not self.quiet:
            self.say("warning: --sessions: no agent's session folder is on this machine")
        if not self.args.files and not sessions:
            return ["-"]
        found, empty = inputs.expand(self.stores + self.args.files)
        for folder in empty:
            self.warn(Where(source_name(folder), None),
                      f"no stream file in this directory ({STREAM_FILES})")
        return found

    def read(self, inputs):
        """Read the inputs, the work shared among processes where it pays."""
        read_inputs(self, inputs)

    def begin_output(self):
        """Write what comes first in the output (a header), once."""

    def end_output(self):
        """Write what comes last in the output (a summary), once."""

    def begin_run(self, start):
        pass

    def text(self, piece):
        pass

    # The events made only for the needs "transcript" and "messages" (ndagent.model).

    def prompt(self, prompt):
        pass

    def thinking(self, thinking):
        pass

    def message(self, message):
        pass

    def note(self, note):
        """A Note of the Reader: only one that says it forgot what it kept of a run
        (the output may lack what it would have given) matters to every verb."""
        if note.check == FORGOTTEN:
            self.warn(note, note.message, once=FORGOTTEN)

    def needs_of(self, module):
        """What the command needs of a stream in ``module``'s format: ``needs``, unless
        it depends on the format."""
        return self.needs

    def reader_needs(self, module):
        """What the Reader of a stream in ``module``'s format is to make for the command
        (None: everything, the native object too): ``needs_of``, unless the lines it
        decodes are not all it needs."""
        return self.needs_of(module)

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
        calls never ended).  By default a run cut off, or one that failed, is an error
        (a session run the user interrupted, or still open, is neither)."""
        if end.outcome in UNFINISHED:
            return
        if end.cutoff:
            self.error(end.start, self.cut_off(end))
        elif not end.ok:
            self.error(end, self.failure(end))

    def cut_off(self, end):
        """The message of a run cut off."""
        end_event = self.format.run_end
        return f"run ended without {end_event}: the agent failed or was cut off"

    @staticmethod
    def failure(end):
        """The message of a failed run: its failure text, where the agent gives one."""
        if end.failure is None:
            return "the run reported failure"

        return f'run failed: "{quote(str(end.failure))}"'

    def end_input(self, source, events):
        """The input ``source`` is read (``events``: the objects it held)."""

    def no_run(self, source):
        """The input held no event at all: when an agent fails before it starts, it
        prints nothing (or only lines that are not events).  An error, status 1, said at
        line 1 as validate says it."""
        self.error(Where(source, 1),
                   "no events: the agent printed nothing, or failed before it began")

    def not_read(self, where, message):
        """An input that is not read: no agent's stream, or another agent's than
        ``--agent`` names.  An error, status 1 (but for a file of an agent's session
        folder, --sessions, which may hold other files)."""
        if any(where.source.startswith(os.path.join(store, "")) for store in self.stores):
            return
        self.error(where, message)

    def finish(self):
        pass

    def other_agent(self, event):
        """An object of another agent than the input's (``event.message`` says which):
        a bad line."""
        self.bad_line(event)

    def bad_line(self, bad):
        """A line that is not a JSON object: skipped with a warning (one the agent's CLI
        is known to write, noise, says so, with the check validate names it by), or the
        end of the stream under ``--strict``."""
        message = bad.message
        if self.format.is_noise(bad):
            message = f"{noise_message(bad)} [noise]"
        if self.strict:
            self.error(bad, message)
            raise Stop(EXIT_BAD_STREAM)
        self.warn(bad, "skipped: " + message)

    def unreadable(self, item):
        self.all_read = False
        self.say(f"{place(item)}: error: cannot read: {item.reason}")
        # The OS's refusal is the user's to mend (status 2); text in another encoding
        # is a bad stream (status 1).
        self.status = max(self.status, EXIT_USAGE if item.os_error else EXIT_BAD_STREAM)

    def error(self, where, text, once=None):
        """An error at ``where`` (anything with ``source`` and ``line``): status 1.
        Labelled as validate labels its diagnostics, so that grep ': error:' finds it."""
        self.say(f"{place(where)}: error: {text}", once)
        self.status = max(self.status, EXIT_BAD_STREAM)

    def warn(self, where, text, once=None):
        """A warning at ``where``: an error under --strict, nothing under -q."""
        if self.strict:
            self.error(where, text, once)
        elif not self.quiet:
            self.say(f"{place(where)}: warning: {text}", once)

    def say(self, text, once=None):
        """One line on standard error, control characters spelt out; with ``once``, a
        key, only the first message of that key (``Output.message``)."""

        self.out.message(f"{self.prog}: {escape_controls(text)}\n".encode("utf-8", "replace"),
                         once)

    # Reading in shares (ndagent.inputs, ndagent.engine): each share is read by a new
    # command of the same class, whose findings this one merges.

    stopped = False  # read no further (the stream ended early: --strict)
    # Whether a large FILE may be read in parts, each in a process of its own, where its
    # format says the stream may be cut: what one process keeps from one run to the
    # next, the command keeps in its ``partial``.
    splits_files = False
    part = None  # while a part of a FILE is read, that part (a sources.Part)
    all_read = True  # whether every input was read to its end (no Unreadable)

    def partial(self):
        """What this command found besides its output, for ``merge`` (of the kinds
        marshal takes: numbers, strings, lists, tuples, dicts)."""
        return None

    def merge(self, partials):
        """Add to this command what the commands that read shares of its inputs found
        (their ``partial``, in order; none after a share whose reading stopped the
        rest: a part not read to its end, --strict)."""


def noise_message(bad):
    """What is said of a bad line that is noise (``Format.is_noise``)."""
    start = quote(bad.start.decode("utf-8", "replace"))
    return f'noise the agent writes besides its stream: "{start}"'


def place(where):
    """How a message names ``where``: FILE:LINE, or FILE alone (no line: a directory,
    a FILE that could not be opened)."""
    return where.source if where.line is None else f"{where.source}:{where.line}"


def read_inputs(command, names, progress=None):
    """Read the inputs ``names`` with ``command``, the work shared among processes where it
    pays: a verb that reads each input on its own (``per_input``) shares a list of
    FILEs, and any verb that ``splits_files`` reads a large FILE in parts (the
    converters when given one FILE only: they read several FILEs as one stream).
    ``progress``: an output.Progress told of each FILE read."""
    if command.per_input:
        _read_each(command, names, progress)
        return
    parts = None
    if command.splits_files and len(names) == 1:
        parts = _cutter(command).parts(names[0], inputs.cores())
    if parts is None:
        read_here(command, names)
    else:
        _read_parts(command, parts)


def _read_each(command, names, progress):
    """Read each input on its own: a large FILE in parts where it may be cut, the
    others shared out, in FILE order."""
    jobs = getattr(command.args, "jobs", None)
    cutter = _cutter(command) if command.splits_files else None
    files = []  # the FILEs before the next one read in parts
    for name in names:
        parts = None
        if cutter is not None:
            parts = cutter.parts(name, jobs or inputs.cores())
        if parts is None:
            files.append(name)
            continue
        _read_files(command, files, jobs, progress)
        files = []
        if not command.stopped:
            _read_parts(command, parts)
        if progress is not None:
            progress.add(1, inputs.size(name))
        if command.stopped:
            return
    _read_files(command, files, jobs, progress)


def _cutter(command):
    """What cuts the command's large FILEs in Parts (``parts(name, count)``: None to
    read one whole)."""
    return inputs.Cutter(command.forced_agent, command.checks, command.args.max_line,
                         output_file(command.out.fd))


def _read_parts(command, parts):
    """Read the parts of one FILE, each as an input of its own, numbered as in the
    FILE; a part not read to its end, or whose reading stopped (--strict), is the last
    one taken, as one process stops there.  The command merges what they found."""
    partials = []

    def taken(index, value):
        status, whole, stopped, partial = value
        command.status = max(command.status, status)
        partials.append(partial)
        command.stopped = command.stopped or stopped
        return whole and not stopped

    try:
        jobs = inputs.cores() if inputs.forced() is None else max(inputs.cores(), 2)
        _run(command, parts, jobs, taken)
    finally:
        inputs.Cutter.close(parts)
    command.merge(partials)


def _read_files(command, names, jobs, progress):
    """Read ``names``, each on its own: regular FILEs in shares, each in a process,
    where ``inputs.share_files`` says so; the others here, in their turn."""
    if not names or command.stopped:
        return
    processes, groups = inputs.share_files(names, jobs)
    shared = []  # the shares before the next FILE read here

    def taken(index, value):
        status, _, stopped, partial = value
        command.status = max(command.status, status)
        partials.append(partial)
        if progress is not None:
            progress.add(len(shared[index]), sum(map(inputs.size, shared[index])))
        command.stopped = command.stopped or stopped
        return not stopped

    for here, group in [*groups, (True, [])]:
        if not here:
            shared.append(group)
            continue
        if shared and not command.stopped:
            partials = []
            _run(command, shared, processes, taken)
            command.merge(partials)
        shared = []
        for name in group:
            if command.stopped:
                return
            read_here(command, [name])
            if progress is not None:
                progress.add(1, inputs.size(name))


def _run(command, work_shares, jobs, taken):
    """Run the shares in processes (ndagent.engine); a process that died is said."""
    from ndagent import engine  # lazy: a command that reads in one process never needs it

    def taken_with_totals(index, value):
        *value, totals = value
        if totals is not None:
            command.totals.absorb(totals)
        return taken(index, value)

    if not engine.run(work_shares, jobs, command.out, _share_reader(command),
                      taken_with_totals, command.totals.knows):
        command.say("error: a worker process died (killed? out of memory?): some FILEs were not "
                    "read")
        command.status = max(command.status, EXIT_USAGE)
        command.stopped = True


def _share_reader(command):
    """What reads one share, in whatever process: a new command of ``command``'s
    class, writing to the output it is given: (status, whether every input was read
    to its end, whether reading stopped early, its partial)."""
    kind = type(command)

    def work(share, out, here):
        reader = kind(command.args, command.prog, out)
        reader.totals = command.totals if here else command.totals.apart()
        names = share
        if share.__class__ is Part:
            reader.part, names = share, [share]
        try:
            read_here(reader, names)
        except MemoryError:
            reader.say("out of memory: try a smaller --max-line")
            reader.status = max(reader.status, EXIT_USAGE)
            reader.all_read = False
        totals = None if here else reader.totals.state()
        return reader.status, reader.all_read, reader.stopped, reader.partial(), totals

    return work

