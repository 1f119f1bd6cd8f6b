"""Feeding one command the inputs it reads in this process: each input's agent is
detected (``--agent``, or from its first objects), its format's Reader turns its
items into model events (``ndagent.model``), the frame's pairer pairs their calls in
bounded memory, running totals become each run's own figures (``ndagent.totals``),
and the command's hooks get the events (``ndagent.frame.Command``)."""

import os
import stat

import orjson

from ndagent import inputs
from ndagent.decoder import BadLine, Event, Skipped, batches
from ndagent.figures import day_of
from ndagent.formats import Detector, OtherAgents, a_or_an, all_formats, what
from ndagent.model import (
    CallPairer,
    Message,
    Prompt,
    RunEnd,
    RunStart,
    Text,
    Thinking,
    ToolEnd,
    ToolStart,
)
from ndagent.options import EXIT_USAGE
from ndagent.selection import LateSelection, Selection
from ndagent.sources import DOCUMENT_BYTES, source_name


class Stop(Exception):
    """Ends the stream early with a status (``--strict`` at a bad line)."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status




# How many items of an input are held at most until its agent is told.
HOLD_LINES = 10_000


class Where:
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
    start = b""  # no line of text: never noise

    def __init__(self, event, other, module):
        self.source = event.source
        self.line = event.line
        event = "event" if other.form == "stream" else "session line"
        self.message = f"{a_or_an(other.agent)} {event} in {what(module)}"


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
            _end_run(command, pairer, event, where)
        else:
            hook = _TRANSCRIPT_HOOKS.get(kind)
            if hook is None:
                command.note(event)
            else:
                hook(command, event)
    return began


# The events made only for the needs "transcript" and "messages", and the hook of each.
_TRANSCRIPT_HOOKS = {
    Prompt: lambda command, prompt: command.prompt(prompt),
    Thinking: lambda command, thinking: command.thinking(thinking),
    Message: lambda command, message: command.message(message),
}


def _end_run(command, pairer, end, where):
    """Hand a RunEnd to ``command``, with what the frame adds: where a run cut off
    ended, the class of a failure its Reader left unnamed, the run's own figures."""
    if end.cutoff and where is not None:
        end.source, end.line = where.source, where.line
    if end.error_type is None and not end.ok:
        end.error_type = "cutoff" if end.cutoff else "_OTHER"
    if end.totals is not None:
        end = _own_figures(command, end)
    command.end_run(end, pairer.close())


def _own_figures(command, end):
    """``end`` with its figures the run's own where the agent reports running totals
    (ndagent.totals); a run whose earlier runs are missing keeps them, said once."""
    end, unknown = command.totals.settle(end)
    if unknown is not None:  # a share read apart: the shares before it may know
        command.out.ask(unknown)
    if end.tokens_from != "run" and end.totals[1] is not None:
        command.warn(end, f"the figures of this run are its {end.tokens_from.replace('_', ' ')} "
                          "so far: the runs before it are not in the input",
                     once="running-total")
    return end


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
    except Stop as stop:
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
    decision, loaded = inputs.detect_file(name, detector)
    records = None
    # A document is also tried when its head did not decide: one larger than the head.
    if detector.json_output is not None and (decision is None or decision[0] is None):
        decision, records = _document(command, name, source, decision)
    if decision is not None and decision[0] is None:
        command.not_read(Where(source, decision[1]), decision[2])
        return
    module = None if decision is None else decision[0]
    # A session file's runs end with it.
    if state.reader is not None and (command.per_input or state.reader.format is not module
                                     or module.form == "session"):
        state.end_reader(command)
    state.events, state.whole, state.last = 0, True, None
    if module is None:
        if not _read_undecided(command, name, source, detector, state):
            return
    else:
        if state.reader is None:
            state.reader = _reader(module, source, command, state)
        if records is not None:
            _handle(state, command, records)
        else:
            for batch in batches((loaded,), _selection(module, command),
                                 **_decoding(command)):
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


def _document(command, name, source, decision):
    """An input that begins as a JSON document rather than lines: ``(decision,
    records)``, the records being the Events of the format whose ``document`` reads it
    (docs/agents.md#whole-documents), or ``decision`` as it was (json output, or None
    for a FILE whose head did not decide) with None, or a decision not to read it that
    says why."""
    text = inputs.read_document(name)
    if text is None:
        if decision is None:  # not told from its head: read as lines, as it was
            return None, None
        return (None, 1, f"input too large for a JSON document (more than "
                         f"{DOCUMENT_BYTES >> 20} MiB)"), None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return decision, None
    forced = command.forced_agent
    for module in all_formats():
        found = None if module.document is None else module.document(value, text)
        if found is None:
            continue
        if found.__class__ is str:
            return (None, 1, found), None
        if forced is not None and forced != module.agent:
            return (None, 1, f"{what(module)}, not {forced} (--agent {forced})"), None
        return (module, None, None), [Event(source, line, data) for line, data in found
                                      if data.__class__ is dict]
    return decision, None


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
        command.not_read(Where(source, decision[1]), decision[2])
        return False
    state.reader = _reader(decision[0], source, command, state)
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
            if self.reader.__class__ is _InPeriod and self.reader.hid:
                self.began = True  # its runs were passed over: it was no empty input
            self.reader = None


def _handle(state, command, batch):
    """Hand one batch of items to the reader, the pairer and the command."""
    reader, pairer = state.reader, state.pairer
    feed_event, text = reader.event, command.text
    # The tests for another agent's objects, by type, the reader's own first: a true
    # one of its own (``other`` None) ends them (OtherAgents.screen).
    other_tests, learn_tests = reader.other_agents.screens, reader.other_agents.screen
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
            agent = None  # the other agent the object is decisive for
            for decides, other in tests:
                if decides(item.data):
                    agent = other
                    break
            if agent is not None:
                command.other_agent(_OtherAgent(item, agent, reader.format))
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


def _replay(state, command, held, read):
    """Read the items a Reader held (Events, and lines passed over) after all, in
    order, with ``read`` (the Reader's own reading of an Event), as ``_handle`` reads
    them: another agent's object is said and passed over, a line that holds no object
    is passed over (as the prefilter passes over it)."""
    reader = state.reader
    for item in held:
        if item.__class__ is Event:
            _replay_event(state, command, item, read)
            continue
        for number, value in item.lines():
            if value.__class__ is not dict:
                continue
            event = Event(item.source, number, value)
            agent = _other_agent(reader.other_agents, event.type, value)
            if agent is not None:
                command.other_agent(_OtherAgent(event, agent, reader.format))
                _decoded(state, event)
            else:
                _replay_event(state, command, event, read)


def _replay_event(state, command, event, read):
    found = read(event)
    if state.reader.__class__ is _InPeriod:
        found = state.reader.shown(found)
    if found and _dispatch(command, state.pairer, found, event):
        state.began = True
    _decoded(state, event)


def _decoded(state, event):
    """A held line is decoded: the last line decoded, as _handle says, unless a later
    one was (decoded with it, and held)."""
    if state.last is None or state.last.line <= event.line:
        state.last = event


def _first_own_line(item, reader):
    """The lines passed over from the first that holds an object of the reader's agent
    (not another agent's, nor no object: those begin no run when decoded); None when
    there is none.  Only where a run would begin.  Whose an object is, is told as
    ``_handle`` tells it, by the screen: one decisive for the reader's agent and for
    another too is the reader's where its own test goes first."""
    others = reader.other_agents
    for number, value in item.lines():
        if value.__class__ is not dict:
            continue
        kind = value.get("type")
        if _other_agent(others, kind if kind.__class__ is str else None, value) is None:
            return item.since(number)
    return None


def _other_agent(others, kind, value):
    """The other agent whose decoded object ``value`` (of type ``kind``, a string or
    None) is, by the reader's screen (``_handle`` tells it inline), or None."""
    return next((agent for decides, agent in others.screen(kind) if decides(value)), None)


def _reader(module, source, command, state):
    """A Reader of ``module`` for ``source``, and the command told which format it reads;
    the reader holds besides the test for another agent's objects (``other_agents``),
    and what reads the lines it held, if it holds any (``replay``).  With --since or
    --until, the runs begun outside those days are passed over."""
    reader = module.reader(source, command.checks, command.reader_needs(module))
    reader.replay = lambda held, read: _replay(state, command, held, read)
    if command.period is not None:
        reader = _InPeriod(reader, command.period)
    reader.format = command.format = module
    reader.other_agents = OtherAgents.of(module)
    return reader


class _InPeriod:
    """A Reader whose runs begun outside the days of ``period`` ((zone, first day, last
    day), ``options.period``), or at no known time, are passed over whole: their events
    are not handed on, but ``hid`` says there were runs (the input is not empty)."""

    def __init__(self, reader, period):
        self.reader = reader
        self.zone, self.first, self.last = period
        self.awaits_run = reader.awaits_run
        self.hiding = self.hid = False

    def event(self, item):
        return self.shown(self.reader.event(item))

    def skipped(self, item):
        return self.shown(self.reader.skipped(item))

    def finish(self):
        return self.shown(self.reader.finish())

    def shown(self, events):
        if not self.hiding and not any(event.__class__ is RunStart for event in events):
            return events
        shown = []
        for event in events:
            kind = event.__class__
            if kind is RunStart:
                day = day_of(event.started, self.zone)
                self.hiding = (day is None or self.first is not None and day < self.first
                               or self.last is not None and day > self.last)
                self.hid = self.hid or self.hiding
            if not self.hiding:
                shown.append(event)
            elif kind is RunEnd:
                self.hiding = False
        return shown


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
