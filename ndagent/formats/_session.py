"""What the formats of the session files agents keep on disk share
(docs/agents.md#session-files): a run from its prompt to its end, what it gathers on
the way (answer, usage, tool calls, times), the ``session_run`` object that ``json``
prints for it, and the RunEnd that ends it.  A module whose name begins with ``_``
declares no agent."""

from sys import getsizeof

from ndagent.model import (
    KINDS,
    OUTCOMES,
    READER_CALL_BYTES,
    Kept,
    RunEnd,
    RunStart,
    epoch_ms,
)

# The type of the object ``json`` prints for each run of a session file.
SESSION_RUN = "session_run"

# The four figures of a run's usage, in the order json prints them.
TOKENS = ("input", "cacheRead", "cacheWrite", "output")


class Run:
    """What a Reader gathers of one run of a session file."""

    __slots__ = ("start", "number", "last_time", "last_line", "models", "answer", "usage",
                 "parts", "cost", "costs_known", "tools", "calls", "duration_ms", "failure",
                 "finished", "interrupted", "answered")

    def __init__(self, start, number):
        self.start = start
        self.number = number
        self.last_time = start.started  # the last ISO timestamp of the run's lines
        self.last_line = start.line
        self.models = {}  # model -> how many of the run's messages used it
        self.answer = None
        self.usage = None  # {input, cacheRead, cacheWrite, output}, or None: none reported
        self.parts = None  # {key: (model, usage)}: the usage of each API message
        self.cost = 0
        self.costs_known = None  # whether every message said its cost (None: no message)
        self.tools = {}  # (kind, outcome) -> calls ended
        self.calls = Kept(READER_CALL_BYTES, "the tool calls open at once",
                          "the oldest are forgotten (their ends name no tool)")
        self.duration_ms = None  # as the file says it, else from the times
        self.failure = None
        self.finished = False  # the file says the agent finished the run's reply
        self.interrupted = False
        self.answered = False

    def add_usage(self, usage):
        """Add a usage {input, cacheRead, cacheWrite, output} (a figure may be None: left
        out of the sum) to the run's."""
        if self.usage is None:
            self.usage = dict.fromkeys(TOKENS)
        for name in TOKENS:
            value = usage.get(name)
            if value is not None:
                self.usage[name] = (self.usage[name] or 0) + value

    def count_model(self, model):
        if model.__class__ is str:
            self.models[model] = self.models.get(model, 0) + 1

    def model(self):
        """The run's main model: the most frequent (the first seen of those)."""
        if not self.models:
            return None
        return max(self.models, key=self.models.get)

    def seen(self, item, timestamp):
        """A line of the run at ``item``, of ISO time ``timestamp`` (or None)."""
        self.last_line = item.line
        if timestamp.__class__ is str:
            self.last_time = timestamp


class SessionReader:
    """The part of a session file's Reader that every agent's shares: runs numbered in
    the input, begun and ended with the model events; tool calls counted for the
    ``session_run`` object.  A subclass sets ``AGENT`` and reads the lines."""

    AGENT = None

    def __init__(self, source, checks=False, needs=None):
        self.source = source
        self.checks = checks
        self.needs = needs
        self.run = None
        self.runs = 0
        self.session_id = None
        self.project = None

    def awaits_run(self):
        return False  # every line is decoded: no line is passed over

    def skipped(self, item):
        return []

    def begin(self, item, prompt, started, out, project=None, announced=True):
        """A run begins at ``item`` with ``prompt`` (or None), at ISO time ``started``, in
        ``project`` (None: the file's); not ``announced`` when no prompt begins it."""
        self.runs += 1
        project = self.project if project is None else project
        start = RunStart(agent=self.AGENT, session_id=self.session_id, cwd=project,
                         source=item.source, line=item.line, announced=announced,
                         form="session",
                         prompt=prompt, started=started, project=project)
        self.run = Run(start, self.runs)
        out.append(start)
        return self.run

    def call_started(self, run, call, out):
        """A ToolStart of the run, kept open until its end."""
        if call.call_id is not None:
            run.calls.keep(call.call_id, (call.kind, call.name), getsizeof(call.name), call,
                           out)
        out.append(call)

    def call_ended(self, run, end, out):
        """A ToolEnd of the run: the kind and name of its start where it names none."""
        if end.call_id is not None:
            started = run.calls.complete(end.call_id)
            if started is not None and end.kind is None:
                end.kind, end.name = started
        key = (end.kind if end.kind.__class__ is str else "unknown", end.outcome)
        run.tools[key] = run.tools.get(key, 0) + 1
        out.append(end)

    def end(self, outcome, out, failure=None, answer=None):
        """The open run ends with ``outcome`` (SESSION_OUTCOMES)."""
        run, self.run = self.run, None
        for kind, _ in run.calls.close():
            key = (kind if kind.__class__ is str else "unknown", "pending")
            run.tools[key] = run.tools.get(key, 0) + 1
        start = run.start
        for _, usage in (run.parts or {}).values():
            run.add_usage(usage)
        if answer is None:
            answer = run.answer
        duration = run.duration_ms
        if duration is None:
            begun, ended = epoch_ms(start.started), epoch_ms(run.last_time)
            if begun is not None and ended is not None and ended >= begun:
                duration = ended - begun
        model = run.model()
        cost = run.cost if run.costs_known else None
        native = None
        if self.needs is None or "native" in self.needs:
            native = {
                "type": SESSION_RUN, "agent": self.AGENT, "session_id": start.session_id,
                "run": run.number, "prompt": start.prompt, "answer": answer,
                "outcome": outcome, "error": failure, "started": start.started,
                "ended": run.last_time, "duration_ms": duration, "model": model,
                "usage": run.usage, "cost_usd": cost, "tools": tools_report(run.tools),
                "source": start.source, "line": start.line}
        out.append(RunEnd(start=start, cutoff=False, ok=outcome == "ok", failure=failure,
                          answer=answer, native=native, usage=run.usage, cost_usd=cost,
                          duration_ms=duration, model=model, outcome=outcome,
                          ended=run.last_time, usage_parts=run.parts,
                          source=start.source, line=run.last_line))


def tools_report(tools):
    """{kind: {outcome: n}} of (kind, outcome) -> n: the common kinds first, in their
    order, then by name; the outcomes in OUTCOMES' order."""
    kinds = {}
    for (kind, outcome), count in tools.items():
        kinds.setdefault(kind, {})[outcome] = count
    order = {kind: index for index, kind in enumerate(KINDS)}
    return {kind: {outcome: kinds[kind][outcome] for outcome in OUTCOMES
                   if outcome in kinds[kind]}
            for kind in sorted(kinds, key=lambda kind: (order.get(kind, len(order)), kind))}


def string(value):
    return value if value.__class__ is str else None


def between(text, opening, closing):
    """What ``text`` holds between its first ``opening`` tag and the first ``closing``
    one after it, or None when there is none.  (A lazy regular expression costs time in
    the square of the text, or worse, on many openings or blanks with no closing.)"""
    start = text.find(opening)
    if start < 0:
        return None
    start += len(opening)
    end = text.find(closing, start)
    return None if end < 0 else text[start:end]


def number(value):
    """A token count or a cost: a number that is not a bool, else None."""
    return value if value.__class__ is int or value.__class__ is float else None


def store_folder(source, parent):
    """The name of the folder under a ``parent`` folder in the path ``source``
    (``projects/<slug>/...``: the project a store keeps a file under), or None."""
    if source.__class__ is not str:
        return None
    parts = source.replace("\\", "/").split("/")
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == parent and index + 2 < len(parts):
            return parts[index + 1]
    return None

