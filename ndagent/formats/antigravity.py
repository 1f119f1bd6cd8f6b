"""Google Antigravity CLI: ``agy -p "..." --output-format stream-json``.

What the stream means (docs/formats.md#antigravity-cli): no line has a ``type``; each
is ``{"event": E, E: {...}}``.  A run goes from ``init`` (or the first event after a
``result``) to its ``result``, ok for ``status: "SUCCESS"``.  Everything in between is
a ``step_update`` of a numbered step: the agent's responses (``text_delta``s, and the
step's usage when it is DONE) and the tool and subagent calls, each ACTIVE then DONE or
ERROR.  The answer is every ``text_delta`` of the run, known as it comes.  A tool the
permission mode blocked ends DONE like one that ran: only the ``result``'s
``denied_actions`` says so.  A run's figures are the sums of its steps' usage: the
``result``'s own are the conversation's, earlier resumed runs included.
"""

from sys import getsizeof

from ndagent.decoder import Event, encode_line
from ndagent.formats.base import Format, first_string, note_at, text_or_none
from ndagent.model import (
    READER_CALL_BYTES,
    Kept,
    KeptInOrder,
    RunEnd,
    RunStart,
    Text,
    ToolEnd,
    ToolStart,
)
from ndagent.terminal import quote

NAME = "antigravity"

INIT, STEP, RESULT, COMMAND = "init", "step_update", "result", "command_result"

CHECKS = {
    "init": ("warning", "a run does not begin with an init event"),
    "conversation": ("warning", "a step of another conversation than its run's (passed over)"),
    "step-order": ("warning", "a step_index lower than the one before it"),
    "denied": ("warning", "the result lists an action the permission mode denied"),
    "usage-total": ("warning", "the result's usage is not the sum of the steps' (the "
                               "conversation's totals: a resumed run?)"),
    "answer": ("warning", "the run's text_deltas joined are not the result's response"),
}

# The tool names of the common kinds (docs/model.md#tool-kinds-per-agent); any other
# tool keeps its own name.
_KINDS = {
    "run_command": "shell",
    "view_file": "read",
    "write_to_file": "write",
    "replace_file_content": "edit",
    "multi_replace_file_content": "edit",
    "sed_file": "edit",
    "notebook_edit": "edit",
    "list_dir": "ls",
    "find_by_name": "glob",
    "grep_search": "grep",
    "read_url_content": "webFetch",
    "search_web": "webSearch",
    "call_mcp_tool": "mcp",
    "invoke_subagent": "task",
    "browser_subagent": "task",
    "manage_task": "updateTodos",
}
_TARGET_KEYS = ("CommandLine", "AbsolutePath", "TargetFile", "DirectoryPath", "SearchPath",
                "Pattern", "Query", "Url")
# A search is told by what it looks for rather than where.
_SEARCH_TARGET_KEYS = ("Pattern", "Query", "SearchPath", "DirectoryPath")
# The step types of a call: a tool's, a subagent's, and the finish tool's last one.
_CALL_STEPS = frozenset({"tool", "subagent", "finish"})
_HOOK_DENIAL = "tool call denied by"


def may_decide(kind):
    """Whether ``decides`` can be true of an object whose type is ``kind``: only of an
    object with no string type (None)."""
    return kind is None


def decides(data):
    """Whether a decoded object is Antigravity's (docs/agents.md#decisive-tests): no
    ``type`` at all, a string ``event`` naming the key of an object; an ``init`` also
    has its ``conversation_id``.  No other agent writes an object without ``type``."""
    if "type" in data:
        return False
    event = data.get("event")
    if event.__class__ is not str or data.get(event).__class__ is not dict:
        return False
    return event != INIT or "conversation_id" in data


# The lines that begin and end runs, all that the native object (the result's) needs.
_BOUNDARIES = ((("event", INIT),), (("event", RESULT),))
# And the call steps, all that the calls need besides (found by their nested step_type).
_CALLS = (*_BOUNDARIES, *(((("step_update", "step_type"), step),)
                          for step in ("tool", "subagent", "finish")))
_CALL_NEEDS = frozenset({"tools", "tool_ends", "native"})


def markers(needs):
    """The inits and results alone for the native object; the call steps besides where
    calls alone matter (the agent_response steps, nearly every line, are passed over:
    ``Reader.skipped`` reads what they tell of the run); else None: every line, since
    the steps hold the text and the usage the run's figures are summed from."""
    if needs <= {"native"}:
        return _BOUNDARIES
    return _CALLS if needs <= _CALL_NEEDS else None


SPLIT_NEEDLE = b'"init"'


def splits_between(before, after, checks):
    """A cut may fall after a ``result`` and before an ``init``: the Reader carries
    nothing from one run to the next."""
    return before.get("event") == RESULT and after.get("event") == INIT


def kind_of(name):
    if name.__class__ is not str:
        return None
    return _KINDS.get(name, name)


def target_of(kind, info, step):
    """What a call acts on: a path, command, pattern, query or url of its parameters;
    for a subagent, the first subagent's role."""
    subagents = step.get("subagent_info")
    subagents = subagents.get("subagents") if subagents.__class__ is dict else None
    if subagents.__class__ is list and subagents and subagents[0].__class__ is dict:
        role = subagents[0].get("role")
        if role.__class__ is str:
            return role
    keys = _SEARCH_TARGET_KEYS if kind in ("grep", "glob") else _TARGET_KEYS
    return first_string(info.get("parameters"), keys)


def snake_case(name):
    """``RunCommand`` -> ``run_command``: a denied action's display name as a tool name."""
    return "".join(f"_{char.lower()}" if char.isupper() and at else char.lower()
                   for at, char in enumerate(name))


# The longest duration a result may say (a century): beyond it, it says none.
MAX_DURATION_SECONDS = 100 * 366 * 86400


def _number(value):
    cls = value.__class__
    return value if cls is int or cls is float else None


def usage_of(usage):
    """The figures of an agy usage object: input without cache reads, thinking within
    output; agy reports no cache writes."""
    if usage.__class__ is not dict:
        return None
    return {"input": _number(usage.get("input_tokens")) or 0,
            "cacheRead": _number(usage.get("cache_read_tokens")) or 0,
            "cacheWrite": None, "output": _number(usage.get("output_tokens")) or 0}


class _Run:
    __slots__ = ("start", "conversation", "last_line", "pieces", "usage", "step_index")

    def __init__(self, start, conversation):
        self.start = start
        self.conversation = conversation
        self.last_line = start.line
        self.pieces = []  # the text_deltas: the answer so far
        self.usage = None  # the sums of the DONE agent_response steps' usage
        self.step_index = None  # the last step's (checks only)


class Reader:
    """Turns one input's decoded items into model events (``ndagent.formats``)."""

    def __init__(self, source, checks=False, needs=None):
        self.source = source
        self.checks = checks
        self.texts = needs is None or "text" in needs
        self.run = None
        # Of the run in hand: the call steps ACTIVE (to start each once), and the tool
        # steps that ended DONE with neither output nor error, which a denied action
        # of the result may name.
        self.open = Kept(READER_CALL_BYTES, "the tool steps open at once",
                         "the oldest are forgotten: a later update starts them again")
        self.silent = KeptInOrder(READER_CALL_BYTES, "the tool steps that ended with no output",
                           "the oldest cannot be matched with a denied action")

    def event(self, event):
        data = event.data
        kind = data.get("event")
        run = self.run
        if kind == STEP and run is not None:  # nearly every line: a step of the run in hand
            body = data.get(STEP)
            out = []
            run.last_line = event.line
            self._step(run, event, body if body.__class__ is dict else {}, out)
            return out
        body = data.get(kind) if kind.__class__ is str else None
        body = body if body.__class__ is dict else {}
        out = []
        if kind == INIT:
            out += self.finish()
            run = self._begin(event, data, body, out)
        elif run is None:
            run = self._begin(event, None, body, out)
        run.last_line = event.line
        if kind == STEP:
            self._step(run, event, body, out)
        elif kind == RESULT:
            self._end(run, event, body, out)
        return out

    def awaits_run(self):
        return self.run is None

    def skipped(self, item):
        """Lines passed over: where calls alone matter, steps of no call, which begin a
        run and name its conversation (its first step's, when it has no init) and do
        nothing else then; so they are read till the conversation is known (another
        agent's objects among them name none: ``event`` finds no step in them)."""
        out = []
        run = self.run
        if (run is None or run.conversation is None) and item.known():
            for number, data in item.lines():
                if data.__class__ is dict:
                    out += self.event(Event(item.source, number, data))
                    if self.run.conversation is not None:
                        break
        if self.run is None:
            self._begin(item, None, {}, out)
        self.run.last_line = item.line
        return out

    def finish(self):
        run = self.run
        if run is None:
            return []
        self.run = None
        return [RunEnd(start=run.start, cutoff=True, ok=False, answer="".join(run.pieces),
                       usage=run.usage, model=run.start.model, source=run.start.source,
                       line=run.last_line)]

    # Runs.

    def _begin(self, item, init, body, out):
        self.open.close()
        self.silent.close()
        if init is not None:
            conversation = init.get("conversation_id")
            model = body.get("model")
            start = RunStart(agent=NAME, session_id=text_or_none(conversation),
                             model=text_or_none(model), cwd=text_or_none(body.get("cwd")),
                             announced=True, source=item.source, line=item.line)
        else:
            # A run with no init: its conversation is its first step's or result's.
            start = RunStart(agent=NAME, session_id=text_or_none(body.get("conversation_id")),
                             announced=False, source=item.source, line=item.line)
            if self.checks and not (item.type is None and _error_only(item.data, body)):
                out.append(note_at(item, "init", "the run begins with another event than init"))
        run = self.run = _Run(start, start.session_id)
        out.append(start)
        return run

    def _end(self, run, event, body, out):
        self.run = None
        ok = body.get("status") == "SUCCESS"
        response = body.get("response")
        usage = run.usage
        given = usage_of(body.get("usage"))
        if usage is None:
            if given is not None and any(given[key] for key in ("input", "cacheRead", "output")):
                usage = given
        elif self.checks and given is not None and given != usage:
            out.append(note_at(event, "usage-total", "the result's usage is not the sum of the "
                                                     "steps': the conversation's totals?"))
        duration = _number(body.get("duration_seconds"))
        if duration is not None and not 0 <= duration <= MAX_DURATION_SECONDS:
            duration = None  # no duration, as a figure that cannot be one (1e308)
        out.append(RunEnd(start=run.start, cutoff=False, ok=ok,
                          failure=None if ok else _failure(body),
                          answer=response if response.__class__ is str else None,
                          native=body, usage=usage, cost_usd=None,
                          duration_ms=None if duration is None else round(duration * 1000),
                          model=run.start.model,
                          outcomes=self._denied(run, event, body.get("denied_actions"), out),
                          source=event.source, line=event.line))

    def _denied(self, run, event, denied, out):
        """{call_id: "permissionDenied"} of the tool steps that the result's denied
        actions name: for each, the last DONE step of its tool with no output."""
        if denied.__class__ is not list or not denied:
            return None
        silent = self.silent.close()
        found = {}
        for action in denied:
            name = action.get("display_name") if action.__class__ is dict else None
            if self.checks:
                shown = quote(name) if name.__class__ is str else "an action"
                out.append(note_at(event, "denied", f'the permission mode denied "{shown}"'))
            if name.__class__ is not str:
                continue
            tool = snake_case(name)
            for at in range(len(silent) - 1, -1, -1):
                call_id, step_tool = silent[at]
                if step_tool == tool and call_id not in found:
                    found[call_id] = "permissionDenied"
                    break
        return found or None

    # Steps.

    def _step(self, run, event, step, out):
        if "type" in event.data:  # an object with a type is none of agy's (``decides``)
            step = {}
        conversation = step.get("conversation_id")
        if conversation != run.conversation:
            if run.conversation is None and conversation.__class__ is str:
                run.conversation = run.start.session_id = conversation
            else:
                if self.checks:
                    out.append(note_at(event, "conversation", "a step of another "
                                                              "conversation: passed over"))
                return
        if self.checks:
            self._check_order(run, event, step.get("step_index"), out)
        step_type = step.get("step_type")
        if step_type == "agent_response":  # inline: nearly every step is a text_delta
            text = step.get("text_delta")
            if text.__class__ is str and text:
                run.pieces.append(text)
                if self.texts:
                    out.append(Text(text, None, event.source, event.line))
            if step.get("state") == "DONE":
                _add_usage(run, usage_of(step.get("usage")))
        elif step_type.__class__ is str and step_type in _CALL_STEPS:
            self._call(run, event, step, f"{conversation}:{step.get('step_index')}", out)

    @staticmethod
    def _check_order(run, event, index, out):
        """A step_index lower than the one before it is said."""
        if index.__class__ is int:
            if run.step_index is not None and index < run.step_index:
                out.append(note_at(event, "step-order", f"step_index {index} after "
                                                        f"{run.step_index}"))
            run.step_index = index

    def _call(self, run, event, step, call_id, out):
        state = step.get("state")
        info = step.get("tool_info")
        info = info if info.__class__ is dict else {}
        name = text_or_none(step.get("tool_name")) or text_or_none(info.get("name"))
        kind = kind_of(name)
        fields = {"call_id": call_id, "kind": kind, "name": name,
                  "args": info.get("parameters"), "target": target_of(kind, info, step),
                  "session_id": run.conversation, "source": event.source, "line": event.line}
        if state == "ACTIVE":
            if self.open.get(call_id) is None:
                self.open.keep(call_id, True, 0, event, out)
                out.append(ToolStart(**fields))
            return
        if state not in ("DONE", "ERROR"):
            return
        self.open.complete(call_id)
        error = info.get("error")
        if state == "DONE":
            outcome = "success"
            result = info.get("output")
            if "output" not in info and error is None and name is not None:
                self.silent.keep((call_id, name), getsizeof(call_id) + getsizeof(name),
                                 event, out)
        else:
            message = error.get("message") if error.__class__ is dict else None
            denied = message.__class__ is str and message.startswith(_HOOK_DENIAL)
            outcome = "permissionDenied" if denied else "error"
            result = error
        # Its duration_seconds has no place in the model: a call's duration is the time
        # between its events' clocks, and agy's lines have none.
        out.append(ToolEnd(outcome=outcome, result=result, **fields))


def _add_usage(run, usage):
    """Add a DONE agent_response step's figures (``usage_of``, or None) to the run's."""
    if usage is None:
        return
    if run.usage is None:
        run.usage = usage
    else:
        for key in ("input", "cacheRead", "output"):
            run.usage[key] += usage[key]


def _error_only(data, body):
    """Whether an object is the lone result of a run that failed before it began (signed
    out, an unknown model): no init, and that is normal."""
    return (data.get("event") == RESULT and body.get("status") != "SUCCESS"
            and body.get("conversation_id") == "")


def _failure(body):
    """Why a run failed: its ``error`` (a string as it is, another value as JSON), else
    its status."""
    error = body.get("error")
    if error.__class__ is str and error:
        return error
    if error is not None and error != "":
        return encode_line(error).decode("utf-8", "replace").rstrip("\n")
    status = body.get("status")
    return f"status {status}" if status.__class__ is str else "no status"


# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "the object under the stream's result event, as it is (whether it is what "
            "--output-format json prints is not documented); a failed run's is printed too "
            "(status 1).",
    "result": "the answer is every text_delta of the run, printed as it arrives (agy's "
              "response is the same text); a failed run's text stays printed.",
    "text": "run_command is shell, view_file read, write_to_file write, replace_file_content "
            "edit, list_dir ls, find_by_name glob, grep_search grep, invoke_subagent task, "
            "call_mcp_tool mcp, ...; a tool the permission mode blocked looks done when its "
            "step ends: only the run's result says it was denied.",
    "tools": "call_id is conversation_id:step_index, name tool_name, args the parameters, "
             "result the output or error; duration_ms is null (the lines have no clock).",
    "validate": "the result's denied_actions are warnings; a result usage that is not the sum "
                "of the steps' (a resumed conversation's totals) is a warning. A large FILE "
                "of many runs is checked in parts.",
    "stats": "the figures are the sums of the run's agent_response steps' usage, not the "
             "result's (which counts the whole conversation); it reports no cost.",
    "run": "its run is over at its result event.",
}


FORMAT = Format(
    name=NAME,
    title="Antigravity CLI",
    invocation="agy -p --output-format stream-json",
    decides=decides,
    may_decide=may_decide,
    markers=markers,
    run_starts=[(("event", INIT),)],
    reader=Reader,
    checks=CHECKS,
    run_end="a result event",
    live_answer=True,
    splits_between=splits_between,
    split_needle=SPLIT_NEEDLE,
    help=HELP,
    interchange=("antigravity-cli", "gcp.gen_ai"),
    order=60,
)
