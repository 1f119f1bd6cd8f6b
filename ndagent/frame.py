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
import stat

from ndagent import engine, inputs
from ndagent.decoder import BadLine, Event, Skipped, batches
from ndagent.formats import Detector, OtherAgents
from ndagent.model import CallPairer, RunEnd, RunStart, Text, ToolEnd, ToolStart
from ndagent.options import EXIT_BAD_STREAM, EXIT_OK, EXIT_STATUSES, EXIT_USAGE, command_parser
from ndagent.selection import LateSelection, Selection
from ndagent.sources import Part, source_name
from ndagent.terminal import escape_controls, quote

# VERB -> its Command class, filled as the classes are defined.
REGISTRY = {}


class _Stop(Exception):
    """Ends the stream early with a status (``--strict`` at a bad line)."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status




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
        """Run as the owner of standard output: what is written once per output
        (``begin_output``, ``end_output``: never by a process that reads a share of the
        inputs) around the reading of the inputs (``read``).  The exit status."""
        self.begin_output()
        self.read(list(self.args.files) or ["-"])
        self.end_output()
        self.out.flush()
        return self.status

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


# How many items of an input are held at most until its agent is told.
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
        self.message = f"a {other.name} event in a {module.name} stream"


def _dispatch(command, pairer, events, where):
    """Hand the model events of one item to ``command``: whether a run began.  A run
    cut off is said to end at ``where``: the item that began the next run, or the last
    line decoded when the input ended (or None: where its format says)."""
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
        parts = _parts(command, names[0], inputs.cores())
    if parts is None:
        read_here(command, names)
    else:
        _read_parts(command, parts)


def _read_each(command, names, progress):
    """Read each input on its own: a large FILE in parts where it may be cut, the
    others shared out, in FILE order."""
    jobs = getattr(command.args, "jobs", None)
    files = []  # the FILEs before the next one read in parts
    for name in names:
        parts = None
        if command.splits_files:
            parts = _parts(command, name, jobs or inputs.cores())
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


def _parts(command, name, count):
    """``name`` as up to ``count`` Parts, or None to read it whole."""
    cutter = inputs.Cutter(command.forced_agent, command.checks, command.args.max_line,
                           output_file(command.out.fd))
    return cutter.parts(name, count)


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
    if not engine.run(work_shares, jobs, command.out, _share_reader(command), taken):
        command.say("a worker process died (killed? out of memory?): some FILEs were not "
                    "read")
        command.status = max(command.status, EXIT_USAGE)
        command.stopped = True


def _share_reader(command):
    """What reads one share, in whatever process: a new command of ``command``'s
    class, writing to the output it is given: (status, whether every input was read
    to its end, whether reading stopped early, its partial)."""
    kind = type(command)

    def work(share, out):
        reader = kind(command.args, command.prog, out)
        names = share
        if share.__class__ is Part:
            reader.part, names = share, [share]
        try:
            read_here(reader, names)
        except MemoryError:
            reader.say("out of memory: try a smaller --max-line")
            reader.status = max(reader.status, EXIT_USAGE)
            reader.all_read = False
        return reader.status, reader.all_read, reader.stopped, reader.partial()

    return work


def read_here(command, names):
    """Feed the inputs ``names`` to ``command`` in this process: each input's agent is told
    (``--agent``, or from its first objects), its format's Reader turns its items into
    model events, and the frame pairs their calls.  The command's exit status."""
    state = _State(command)
    output = output_file(command.out.fd)
    try:
        for name in names or ("-",):
            _read_input(command, name, state, output)
        state.end_reader(command)
        if not state.began and not command.per_input and state.read is not None:
            command.no_run(state.read)
        command.finish()
    except _Stop as stop:
        command.status = max(command.status, stop.status)
        command.stopped = True
    command.out.flush()
    return command.status


def _read_input(command, name, state, output):
    """Read one input; a command that reads each on its own ends it here."""
    source = source_name(name)
    if output is not None and is_output(name, output):
        command.say(f"{source}: error: input file is output file")
        command.status = max(command.status, EXIT_USAGE)
        return
    detector = Detector(command.forced_agent)
    decision = inputs.detect_head(name, detector)
    if decision is not None and decision[0] is None:
        command.not_read(_Where(source, decision[1]), decision[2])
        return
    module = None if decision is None else decision[0]
    if state.reader is not None and (command.per_input or state.reader.format is not module):
        state.end_reader(command)
    state.events, state.whole, state.last = 0, True, None
    if module is None:
        if not _read_undecided(command, name, source, detector, state):
            return
    else:
        if state.reader is None:
            state.reader = _reader(module, source, command)
        for batch in batches((name,), _selection(module, command), **_decoding(command)):
            _handle(state, command, batch)
    if state.whole:
        state.read = source
    if command.per_input:
        state.end_reader(command)
        if not state.began and state.whole:
            command.no_run(source)
        state.began = False
        command.end_input(source, state.events)
        command.out.flush()


def _read_undecided(command, name, source, detector, state):
    """Read an input whose head did not tell its agent (standard input, a pipe, a
    compressed FILE): its items are held until one tells it, or its end does.  Whether
    it was read (else it was reported, and not read)."""
    want = LateSelection()
    held = []
    decided = False
    for batch in batches((name,), want, **_decoding(command)):
        if not decided:
            batch, decision = _hold(batch, held, detector)
            if decision is None:
                continue
            if not _decided(command, source, decision, state):
                return False
            want.selection = _selection(decision[0], command)
            batch = _selected(held + batch, want.selection)
            decided = True
        _handle(state, command, batch)
    if not decided:
        decision = detector.end()
        if not _decided(command, source, decision, state):
            return False
        _handle(state, command, _selected(held, _selection(decision[0], command)))
    return True


def _decided(command, source, decision, state):
    """Act on an input's agent, told: whether it is read (else it is reported)."""
    if decision[0] is None:
        command.not_read(_Where(source, decision[1]), decision[2])
        return False
    state.reader = _reader(decision[0], source, command)
    return True


def _decoding(command):
    """The decoder's options for ``command``."""
    return {"exact": command.exact, "every_line": command.every_line,
            "max_line": command.args.max_line}


class _State:
    """What the frame knows of the inputs in hand: the Reader of the format read so
    far and the call pairer; whether a run began (in this input, for per_input
    commands; else in any), the last input read to its end (what "no events" is said
    of); of the input in hand, how many events it held, whether it was read to its
    end, and its last line decoded (an Event item, or None: with a prefilter, the
    lines passed over after it are not told apart)."""

    __slots__ = ("reader", "pairer", "began", "read", "events", "whole", "last")

    def __init__(self, command):
        self.reader = None
        self.pairer = command.pairer = CallPairer()
        self.began = False
        self.read = None
        self.events = 0
        self.whole = True
        self.last = None

    def end_reader(self, command):
        """The end of the Reader's input: the run it has open, if any, is cut off."""
        if self.reader is not None:
            if _dispatch(command, self.pairer, self.reader.finish(), self.last):
                self.began = True
            self.reader = None


def _handle(state, command, batch):
    """Hand one batch of items to the reader, the pairer and the command."""
    reader, pairer = state.reader, state.pairer
    feed_event, text = reader.event, command.text
    # The tests for another agent's objects, by type (OtherAgents).
    other_tests, learn_tests = reader.other_agents.by_type, reader.other_agents.tests
    events = 0
    appended = None  # the last event of a stream appended to a line cut short
    for item in batch:
        if item.__class__ is not Event:
            item = _handle_other(state, command, item)
            if item is None:
                continue
            appended = item
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
        if len(found) == 1 and found[0].__class__ is Text:  # the usual case
            text(found[0])
        elif _dispatch(command, pairer, found, item):
            state.began = True
    state.events += events
    for item in reversed(batch):
        if item.__class__ is Event:
            state.last = item
            break
    if appended is not None and (state.last is None or state.last.line <= appended.line):
        state.last = appended
    command.out.flush()


def _handle_other(state, command, item):
    """An item that is no event: lines passed over, a bad line, a read that failed.  A
    bad line whose tail begins a run of the reader's agent was cut short, and the first
    line of another stream appended to it: that event is returned, to be read."""
    kind = item.__class__
    if kind is Skipped:
        reader = state.reader
        if item.known() and reader.awaits_run():
            item = _first_own_line(item, reader)
            if item is None:
                return
        found = reader.skipped(item)
        if found and _dispatch(command, state.pairer, found, item):
            state.began = True
    elif kind is BadLine:
        if item.tail is not None and state.reader.format.begins_run(item.tail):
            item, appended = item.cut_before_tail()
            command.bad_line(item)
            return appended
        command.bad_line(item)
    else:
        command.unreadable(item)
        state.whole = False


def _first_own_line(item, reader):
    """The first of the lines passed over that holds an object of the reader's agent
    (not another agent's, nor no object: those begin no run when decoded), as a
    Skipped item of its own; None when there is none.  Only where a run would begin."""
    others = reader.other_agents
    for number, value in item.lines():
        if value.__class__ is not dict:
            continue
        kind = value.get("type")
        if not any(decides(value) for decides, _ in others.tests(
                kind if kind.__class__ is str else None)):
            return Skipped(item.source, number)
    return None


def _reader(module, source, command):
    """A Reader of ``module`` for ``source``, and the command told which format it reads;
    the reader holds besides the test for another agent's objects (``other_agents``)."""
    reader = module.reader(source, command.checks, command.needs_of(module))
    reader.format = command.format = module
    reader.other_agents = OtherAgents(module)
    return reader


_SELECTIONS = {}


def _selection(module, command):
    """The decoder's Selection of the lines that ``command`` needs in ``module``'s
    format (None: the command takes ``every_line``, or every line the format writes
    may matter)."""
    needs = None if command.every_line else command.needs_of(module)
    if needs is None:
        return None
    key = (module.name, needs)
    if key not in _SELECTIONS:
        markers = module.markers(needs)
        _SELECTIONS[key] = None if markers is None else Selection(markers)
    return _SELECTIONS[key]


def _hold(batch, held, detector):
    """Hold the items of an input whose agent is not told yet: ``(the items after the
    decisive one, decision)``, the decision None while undecided (the items are held).
    Past HOLD_LINES items (lines that are no objects: noise, bad lines) it is taken as
    at the end of the input, so that what is held stays bounded."""
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


def _selected(held, selection):
    """The held items, the events that the selection would have passed over as Skipped
    (they were decoded only to tell the agent)."""
    if selection is None:
        return held
    return [Skipped(item.source, item.line, value=item.data)
            if item.__class__ is Event and not selection.wants(item.data) else item
            for item in held]


def output_file(fd):
    """(device, inode) of the regular file that ``fd`` writes to, or None."""
    try:
        found = os.fstat(fd)
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None


def is_output(name, output):
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
