"""The template of an agent's format: copy it to ``ndagent/formats/NAME.py`` and fill it
in (CONTRIBUTING.md walks through it).  The registry reads every module of this
package but this one and ``base``, so the copy needs no other file.

As it stands, it reads a small made-up stream, so that what each part does can be
seen working (tests/test_protocol.py reads one through every verb)::

    {"type":"template.start","session":"s1","model":"m1"}
    {"type":"template.text","text":"Reading a.py."}
    {"type":"template.call","id":"c1","tool":"read","input":{"path":"a.py"}}
    {"type":"template.result","id":"c1","tool":"read","ok":true,"output":"..."}
    {"type":"template.end","ok":true,"answer":"Done.","usage":{"in":5,"out":2}}

A run begins at a start event and ends at an end event; the answer is the end
event's; every other event before a start begins a run that its checks report.
"""

from ndagent.formats.base import Format, text_or_none
from ndagent.model import Note, RunEnd, RunStart, Text, ToolEnd, ToolStart

# The agent's name, as --agent takes it: a lower-case word.
NAME = "template"

# The stream's event types: what the agent writes in "type".
START, TEXT, CALL, RESULT, END = (f"template.{kind}" for kind in
                                  ("start", "text", "call", "result", "end"))
TYPES = frozenset({START, TEXT, CALL, RESULT, END})

# validate's checks of this stream: {check: (severity, what it finds)}.
CHECKS = {
    "start": ("warning", "a run does not begin with a start event"),
}

# The agent's tool names onto the common kinds (ndagent.model.KINDS); another tool
# keeps its own name as its kind.
KINDS = {"read": "read", "write": "write", "edit": "edit", "shell": "shell"}


def may_decide(kind):
    """Whether ``decides`` can be true of an object of type ``kind``: only the stream's
    own types, so that other agents' objects are tested by their own formats alone."""
    return kind in TYPES


def decides(data):
    """Whether a decoded object is this agent's: by its keys and values, never their
    order, and never true of another agent's object (tests/test_protocol.py checks
    that against every registered format's fixtures)."""
    return data.get("type") in TYPES


def markers(needs):
    """The lines the decoder must decode for ``needs`` (see ``Format``): the lines that
    begin and end runs always; the calls for "tools" and "tool_ends"; the text for
    "text"."""
    found = [(("type", START),), (("type", END),)]
    if "tools" in needs or "tool_ends" in needs:
        found += [(("type", CALL),), (("type", RESULT),)]
    if "text" in needs:
        found.append((("type", TEXT),))
    return found


# Bytes that every line a large stream may be cut before holds.
SPLIT_NEEDLE = b'"template.start"'


def splits_between(before, after, checks):
    """Whether the stream may be cut between two adjacent objects, each part read on
    its own with the same findings: after a run's end, before the next run's start
    (the Reader carries nothing from one run to the next)."""
    return before.get("type") == END and after.get("type") == START


class Reader:
    """The model events of one input: ``event`` for each decoded object the decoder
    hands on, ``skipped`` for lines passed over undecoded (they may begin a run after
    an ended one: ``awaits_run`` says when, so that the frame first makes sure that
    they hold one of this agent's events), ``finish`` at the end of the input (the run
    left open is cut off).  Each but ``awaits_run`` returns a list of model events
    (ndagent.model)."""

    def __init__(self, source, checks=False, needs=None):
        self.source = source
        self.checks = checks
        self.run = None  # the RunStart of the open run
        self.answer = None  # the text of the open run, for a run cut off

    def event(self, event):
        data, kind = event.data, event.type
        out = []
        if kind == START or self.run is None:
            self._begin(event, data if kind == START else None, out)
        if kind == TEXT:
            text = data.get("text")
            if text.__class__ is str and text:
                self.answer = (self.answer or "") + text
                out.append(Text(text, None, event.source, event.line))
        elif kind == CALL:
            out.append(ToolStart(call_id=text_or_none(data.get("id")), **_call(data),
                                 source=event.source, line=event.line))
        elif kind == RESULT:
            ok = data.get("ok")
            out.append(ToolEnd(call_id=text_or_none(data.get("id")), **_call(data),
                               outcome="success" if ok is True else "failure",
                               result=data.get("output"), source=event.source,
                               line=event.line))
        elif kind == END:
            out.append(self._end(event, data))
        return out

    def awaits_run(self):
        """Whether no run is open: a line passed over would begin one."""
        return self.run is None

    def skipped(self, item):
        out = []
        if self.run is None:
            self._begin(item, None, out)
        return out

    def finish(self):
        if self.run is None:
            return []
        start, self.run = self.run, None
        return [RunEnd(start=start, cutoff=True, ok=False, answer=self.answer,
                       source=start.source, line=start.line)]

    def _begin(self, item, start, out):
        """A run begins at ``item`` (``start``: its start event's data, or None): the
        open one, if any, is cut off."""
        out += self.finish()
        self.answer = None
        self.run = RunStart(agent=NAME, announced=start is not None, source=item.source,
                            line=item.line)
        if start is not None:
            self.run.session_id = text_or_none(start.get("session"))
            self.run.model = text_or_none(start.get("model"))
        out.append(self.run)
        if start is None and self.checks:
            out.append(Note(check="start", message="the run does not begin with a start "
                            "event", source=item.source, line=item.line))

    def _end(self, event, data):
        start, self.run = self.run, None
        ok = data.get("ok") is True
        answer = data.get("answer")
        usage = data.get("usage")
        error = data.get("error")
        return RunEnd(
            start=start, cutoff=False, ok=ok,
            failure=None if ok or error.__class__ is not str else error,
            answer=answer if answer.__class__ is str else None, native=data,
            usage={"input": usage.get("in"), "cacheRead": 0, "cacheWrite": 0,
                   "output": usage.get("out")} if usage.__class__ is dict else None,
            model=start.model, source=event.source, line=event.line)


def _call(data):
    """The fields of a call's start and end that its event tells."""
    tool = text_or_none(data.get("tool"))
    args = data.get("input") if data.get("input").__class__ is dict else None
    target = None if args is None else text_or_none(args.get("path") or args.get("command"))
    return {"kind": KINDS.get(tool, tool), "name": tool, "args": args, "target": target}


# What each verb's --help (and man page) says of this agent, a paragraph under its
# title: only what differs from every agent (ndagent.formats.base.HELP_VERBS).
HELP = {
    "result": "the answer is the end event's, known only at the run's end.",
    "text": "read is read, write write, edit edit, shell shell; another tool keeps its name.",
    "run": "its run is over at its end event.",
}


FORMAT = Format(
    name=NAME,
    title="Template agent",
    invocation="template-agent --json",
    decides=decides,
    may_decide=may_decide,
    markers=markers,
    run_starts=[(("type", START),)],
    reader=Reader,
    checks=CHECKS,
    # The event that ends a run, for the message of a run cut off.
    run_end="an end event",
    splits_between=splits_between,
    split_needle=SPLIT_NEEDLE,
    help=HELP,
    # The agent's name in OpenTelemetry and ATIF output, and its models' provider.
    interchange=("toy-agent", "toy"),
    # Figures its runs report that the common ones do not hold (RunEnd.extra), each
    # with what it counts, for stats --help: {"laps": "the laps of the run"}.
    extra_figures=None,
    # Where it stands in listings (--help, --agent): after the agents there are.
    order=1000,
)
