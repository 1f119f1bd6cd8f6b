"""OpenCode: ``opencode run --format json "..."``.

What the stream means (docs/formats.md#opencode): every line is ``{type, timestamp,
sessionID, ...}`` with a ``part`` of the session (or an ``error``).  A model call is a
step, ``step_start`` to ``step_finish``; text and tool parts are written whole, once
complete, and a tool call only at its end.  OpenCode writes no event that ends a run:
one ends at a ``step_finish`` whose reason is not ``tool-calls``/``unknown`` (where
OpenCode's own prompt loop stops), at an ``error`` (the run failed), at a change of
session, or at the end of the input (cut off).  The answer is the text parts of the
run's last step.  Usage is per step (``step_finish.part.tokens`` and ``cost``): a run's
figures are their sums.  OpenCode has no json mode: the object ``json`` prints is
ndagent's (``native`` below).
"""

from ndagent.decoder import Skipped
from ndagent.formats.base import Format, Holding, note_at, text_or_none
from ndagent.model import RunEnd, RunStart, Text, ToolEnd, ToolStart
from ndagent.terminal import quote

NAME = "opencode"

STEP_START, STEP_FINISH, TEXT, TOOL_USE, REASONING = (
    "step_start", "step_finish", "text", "tool_use", "reasoning")
ERROR, DONE = "error", "done"
_PART_TYPES = frozenset({STEP_START, STEP_FINISH, TEXT, TOOL_USE, REASONING})
_TYPES = _PART_TYPES | {ERROR, DONE}
_TIMED = frozenset({STEP_START, STEP_FINISH, ERROR})
# The events a run begins with (its first step, or an error before any).
_BEGINS = (STEP_START, ERROR)

# A step_finish with one of these reasons is followed by another step of the same run.
_GOES_ON = frozenset({"tool-calls", "unknown"})
# The lines the markers take always.  Where only a run's end is needed (its answer is
# the text of its last step: ``holds_steps``), the lines of the other types are held
# unread until one of these tells whether the step they are in ends the run
# (``Reader._holding``): most steps end in tool calls, and their text is never needed.
_READ_TYPES = frozenset({STEP_START, STEP_FINISH, ERROR, DONE})
_ENDS_ONLY = frozenset({"ends", "native"})

CHECKS = {
    "envelope": ("warning", "a line lacks its type, numeric timestamp or string sessionID"),
    "session": ("warning", "a part or step_finish of another sessionID than its run's (a "
                           "new run begins there)"),
    "part-session": ("warning", "a part's sessionID differs from its line's"),
    "steps": ("warning", "step_start and step_finish do not alternate, or a step_finish "
                         "names another message than its step_start"),
    "outside-step": ("warning", "a text, reasoning or tool_use part outside a step"),
    "tool-status": ("warning", "a tool_use whose state is neither completed nor error"),
    "finish-reason": ("warning", "a step ended for its length or a content filter"),
    "tokens-total": ("warning", "a step's tokens.total is not the sum of its parts"),
}

# The tool names of the common kinds (docs/model.md#tool-kinds-per-agent); apply_patch
# and patch depend on their files, any other tool keeps its own name.
_KINDS = {
    "bash": "shell",
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "list": "ls",
    "glob": "glob",
    "grep": "grep",
    "codesearch": "semSearch",
    "webfetch": "webFetch",
    "websearch": "webSearch",
    "todowrite": "updateTodos",
    "task": "task",
}
_PATCH_TOOLS = frozenset({"apply_patch", "patch"})
_TARGET_KEYS = ("filePath", "command", "pattern", "url", "query", "path")
_PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")

# The texts of a tool call that the CLI refused (nobody is asked in ``opencode run``),
# and of one a person refused with feedback.
_FEEDBACK = ("The user rejected permission to use this specific tool call with the following "
             "feedback:")
_AUTO_REJECTED = ("The user rejected permission to use this specific tool call",
                  "The user has specified a rule which prevents you from using this specific "
                  "tool call")

_BOUNDARIES = tuple((("type", kind),) for kind in (STEP_START, STEP_FINISH, ERROR, DONE))
_TEXT = ((("type", TEXT),),)
_MARKERS = {"text": _TEXT, "ends": _TEXT, "native": _TEXT, "transcript": _TEXT,
            "whole_text": ()}


def may_decide(kind):
    """Whether an object of type ``kind`` (a string) can be decisive for OpenCode."""
    return kind in _TYPES


def decides(data):
    """Whether a decoded object is decisive for OpenCode (docs/agents.md#decisive-tests):
    a top-level ``sessionID``, which no other agent writes, with a ``part`` (or an
    ``error``, or a ``done``'s reason)."""
    kind = data.get("type")
    if kind.__class__ is not str:
        return False
    if kind in _PART_TYPES:
        return data.get("sessionID").__class__ is str and data.get("part").__class__ is dict
    if kind == ERROR:
        return "sessionID" in data and data.get("error").__class__ is dict
    if kind == DONE:
        return "sessionID" in data and "reason" in data
    return False


def markers(needs):
    """The lines that matter for ``needs``: the step boundaries, errors and ``done``
    always (they begin and end runs, and hold the usage); text for the text and the
    answer.  Where calls matter, every line (None): the tool_use lines, which hold the
    calls' output, are most of a stream's bytes, and the small lines left cost less to
    decode than the search of every byte for markers."""
    if "tools" in needs or "tool_ends" in needs:
        return None
    found = list(_BOUNDARIES)
    if holds_steps(needs):
        return tuple(found)
    for need in sorted(needs):
        for marker in _MARKERS[need]:
            if marker not in found:
                found.append(marker)
    return tuple(found)


def holds_steps(needs):
    """Whether a Reader for ``needs`` holds the lines inside a step (``_READ_TYPES``)."""
    return needs is not None and needs <= _ENDS_ONLY


SPLIT_NEEDLE = b'"step_start"'


def splits_between(before, after, checks):
    """A cut may fall after a run's end (a terminal step_finish, an error) and before
    the next step_start: the Reader carries nothing from one run to the next."""
    return after.get("type") == STEP_START and _ends_run(before)


def _ends_run(data):
    kind = data.get("type")
    if kind == ERROR:
        return True
    if kind != STEP_FINISH:
        return False
    return data.get("part").__class__ is dict and _reason(data) not in _GOES_ON


def _reason(data):
    """The reason a step_finish gives (None when its part is no object, or the reason
    no string)."""
    part = data.get("part")
    reason = part.get("reason") if part.__class__ is dict else None
    return reason if reason.__class__ is str else None


def kind_of(tool, state):
    """The common kind of a tool: apply_patch is write when it adds every file, delete
    when it deletes every file, else edit."""
    if tool.__class__ is not str:
        return None
    if tool in _PATCH_TOOLS:
        metadata = state.get("metadata") if state.__class__ is dict else None
        files = metadata.get("files") if metadata.__class__ is dict else None
        types = {text_or_none(each.get("type")) if each.__class__ is dict else None
                 for each in files} if files.__class__ is list else set()
        if types == {"add"}:
            return "write"
        if types == {"delete"}:
            return "delete"
        return "edit"
    return _KINDS.get(tool, tool)


def target_of(tool, args, state):
    """What a call acts on: a path, command, pattern, url or query; for a patch, its
    first file."""
    if tool in _PATCH_TOOLS:
        metadata = state.get("metadata")
        files = metadata.get("files") if metadata.__class__ is dict else None
        first = files[0] if files.__class__ is list and files else None
        path = first.get("filePath") if first.__class__ is dict else None
        if path.__class__ is str:
            return path
        patch = args.get("patchText") if args.__class__ is dict else None
        if patch.__class__ is str:
            for line in patch.splitlines():
                for header in _PATCH_HEADERS:
                    if line.startswith(header):
                        return line[len(header):].strip()
        return None
    if args.__class__ is not dict:
        return None
    for key in _TARGET_KEYS:
        value = args.get(key)
        if value.__class__ is str:
            return value
    return None


def outcome_of(kind, state):
    """How a tool_use's state says its call ended (docs/model.md#outcomes-per-agent)."""
    status = state.get("status")
    if status == "completed":
        metadata = state.get("metadata")
        exit_code = metadata.get("exit") if metadata.__class__ is dict else None
        if kind == "shell" and exit_code.__class__ is int and exit_code != 0:
            return "failure"
        return "success"
    if status == "error":
        error = state.get("error")
        if error.__class__ is str:
            if error.startswith(_FEEDBACK):
                return "rejected"
            if error.startswith(_AUTO_REJECTED):
                return "permissionDenied"
        return "error"
    return "unknown"


def _number(value):
    cls = value.__class__
    return value if cls is int or cls is float else 0


def _decimals(value):
    """How many decimals ``value`` is written with (``repr``), to add costs as their
    decimals add up rather than as the doubles nearest to them."""
    mantissa, _, exponent = repr(value).partition("e")
    return max(0, len(mantissa.partition(".")[2]) - int(exponent or 0))


class _Run:
    """What the Reader keeps of the run in hand."""

    __slots__ = ("start", "session", "first_ms", "last_ms", "last_line", "message",
                 "texts", "steps", "tokens", "cost", "cost_decimals", "in_step", "error")

    def __init__(self, start, session):
        self.start = start
        self.session = session
        self.first_ms = self.last_ms = None
        self.last_line = start.line
        self.message = None  # the messageID of the step in hand
        self.texts = {}  # part id -> text, of the step in hand: the answer so far
        self.steps = 0
        self.tokens = None  # the sums of the step_finishes' tokens
        self.cost = None
        self.cost_decimals = 0
        self.in_step = False
        self.error = None  # the error event's error


class Reader(Holding):
    """Turns one input's decoded items into model events (``ndagent.formats``)."""

    def __init__(self, source, checks=False, needs=None):
        self.source = source
        self.checks = checks
        self.texts = needs is None or "text" in needs
        # Whether to make ToolStart events: a call's end names its kind, args and target
        # too, and each tool_use line is a whole call.
        self.starts = needs is None or "tools" in needs or "transcript" in needs
        # Whether the run's figures, summed over its step_finishes, are wanted (its end
        # and its json object hold them).
        self.summed = needs is None or "ends" in needs or "native" in needs
        self.run = None
        self._handlers = {
            STEP_START: self._step_start,
            STEP_FINISH: self._step_finish,
            TEXT: self._text,
            REASONING: self._in_step,
            TOOL_USE: self._tool_use,
        }
        if holds_steps(needs) and not checks:
            self.event, self.skipped, self.finish = (self._holding, self._holding_skipped,
                                                     self.finish_holding)

    def event(self, event):
        data, kind = event.data, event.type
        out = []
        if self.checks:
            self._envelope(event, data, out)
        session = data.get("sessionID")
        session = session if session.__class__ is str else None
        run = self.run
        if kind == DONE:
            # It follows the run's last step (the session is idle): its end is known.
            if run is not None:
                self._end(run, event, data, out)
            return out
        if run is not None and session is not None and run.session is not None \
                and session != run.session:
            # A step_start or error of another session begins a run as a stream
            # appended to a run cut off does, whose end says so: only a part or a
            # step_finish of another session in a run is news.
            if self.checks and kind not in _BEGINS:
                out.append(note_at(event, "session", f'sessionID "{quote(session)}" after '
                                   f'"{quote(run.session)}": a new run begins'))
            out += self.finish()
            run = None
        if run is None:
            run = self._begin(event, session, out)
        run.last_line = event.line
        time = data.get("timestamp")
        # The clock of the lines every reader decodes, whatever it needs: a run's
        # duration must not depend on which lines were passed over.
        if kind in _TIMED and (time.__class__ is int or time.__class__ is float):
            if run.first_ms is None:
                run.first_ms = time
            run.last_ms = time
        if kind == ERROR:
            error = data.get("error")
            run.error = error if error.__class__ is dict else {}
            self._end(run, event, None, out)
            return out
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(run, event, data, out)
        return out

    def awaits_run(self):
        return self.run is None

    def skipped(self, item):
        out = []
        run = self.run
        if run is None:
            run = self._begin(item, None, out)
        run.last_line = item.line
        return out

    def finish(self):
        run = self.run
        if run is None:
            return []
        self.run = None
        return [RunEnd(start=run.start, cutoff=True, ok=False, answer="".join(run.texts.values()),
                       usage=self._usage(run), cost_usd=run.cost, model=None,
                       duration_ms=self._duration(run), extra={"steps": run.steps},
                       source=run.start.source, line=run.last_line)]

    # Where only a run's end is needed, the lines inside a step are held (``Holding``)
    # until a line that is always read (_READ_TYPES) tells whether they matter: a
    # step_start of the run's session drops them (it begins the step whose text is the
    # answer so far), a step_finish that does not end the run leaves them held (the
    # answer of a run cut off after it is still theirs), any other line reads them
    # first.  What is read of them after a later line was read leaves the run's last
    # line that later one's.  A line that begins a run is read at once.

    def _holding(self, event):
        if self.run is None:
            return self.read_now(event)
        if event.type not in _READ_TYPES:
            self.hold(event)
            return []
        if self.held:
            self._settle(event)
        return self.read_now(event)

    def _settle(self, event):
        """What a line that is always read makes of the lines held before it."""
        data, kind, run = event.data, event.type, self.run
        session = data.get("sessionID")
        if session.__class__ is str and run.session is not None and session != run.session:
            self.release()
        elif kind == STEP_START:
            self.drop()
        elif kind != STEP_FINISH or _reason(data) not in _GOES_ON:
            self.release()

    def release(self):
        """``Holding.release``, the run's last line left the later one's where a line
        was read after those held (a step_finish), whatever reads them: a line, the
        end of the input, or a bound."""
        run = self.run
        last = None if run is None else run.last_line
        super().release()
        if last is not None and (run.last_line is None or run.last_line < last):
            run.last_line = last

    def _holding_skipped(self, item):
        # Where no run is in hand, the lines are read one by one until one begins a run,
        # as they are when every line is decoded; the rest are held.
        while self.run is None:
            end = -1 if item.text is None else item.text.find(b"\n", item.begin, item.end)
            if end < 0:
                self.replay((item,), self.read_now)
                return []
            self.replay((Skipped(item.source, item.line, item.text, item.begin, end),),
                        self.read_now)
            item = Skipped(item.source, item.line + 1, item.text, end + 1, item.end)
        self.hold(item)
        return []

    # Runs.

    def _begin(self, item, session, out):
        kind = item.type  # None for lines passed over
        start = RunStart(agent=NAME, session_id=session,
                         announced=kind in (STEP_START, ERROR),
                         source=item.source, line=item.line)
        run = self.run = _Run(start, session)
        out.append(start)
        return run

    def _end(self, run, event, done, out, reason=None):
        """The run ends at ``event``: an error, a step_finish of the finish ``reason``,
        or a ``done`` (its data)."""
        self.run = None
        answer = "".join(run.texts.values())
        if run.error is not None:
            failure = _failure(run.error)
        elif reason == "error":
            failure = 'the model call ended with reason "error"'
        else:
            failure = None
        ok = failure is None
        native = {"sessionID": run.session}
        if ok:
            native["response"] = answer
        native["steps"] = run.steps
        if run.tokens is not None:
            native["tokens"] = run.tokens
            native["cost"] = run.cost
        if run.error is not None:
            native["error"] = run.error
        if done is not None and "rejected" in done:
            native["rejected"] = done.get("rejected")
        out.append(RunEnd(start=run.start, cutoff=False, ok=ok, failure=failure,
                          answer=answer, native=native, usage=self._usage(run),
                          cost_usd=run.cost, duration_ms=self._duration(run), model=None,
                          extra={"steps": run.steps}, source=event.source, line=event.line))

    @staticmethod
    def _usage(run):
        tokens = run.tokens
        if tokens is None:
            return None
        cache = tokens["cache"]
        return {"input": tokens["input"], "cacheRead": cache["read"],
                "cacheWrite": cache["write"], "output": tokens["output"] + tokens["reasoning"]}

    @staticmethod
    def _duration(run):
        if run.first_ms is None or run.last_ms < run.first_ms:
            return None
        return run.last_ms - run.first_ms

    # Events inside a run.

    def _step_start(self, run, event, data, out):
        part = data.get("part")
        message = part.get("messageID") if part.__class__ is dict else None
        if self.checks and run.in_step:
            out.append(note_at(event, "steps", "a step_start inside a step"))
        run.in_step = True
        run.message = message if message.__class__ is str else None
        run.texts = {}

    def _step_finish(self, run, event, data, out):
        part = data.get("part")
        part = part if part.__class__ is dict else {}
        if self.checks:
            message = part.get("messageID")
            if not run.in_step:
                out.append(note_at(event, "steps", "a step_finish outside a step"))
            elif message != run.message:
                out.append(note_at(event, "steps", "a step_finish of another message than "
                                                   "its step_start's"))
        run.in_step = False
        run.steps += 1
        if self.summed or self.checks:
            self._add_usage(run, event, part, out)
        reason = _reason(data)
        if self.checks and reason in ("length", "content-filter"):
            out.append(note_at(event, "finish-reason", f'a step ended with reason "{reason}"'))
        if reason not in _GOES_ON:
            self._end(run, event, None, out, reason)

    def _add_usage(self, run, event, part, out):
        tokens = part.get("tokens")
        if tokens.__class__ is not dict:
            return
        cache = tokens.get("cache")
        cache = cache if cache.__class__ is dict else {}
        given, output = _number(tokens.get("input")), _number(tokens.get("output"))
        reasoning = _number(tokens.get("reasoning"))
        read, write = _number(cache.get("read")), _number(cache.get("write"))
        parts = given + output + reasoning + read + write
        total = tokens.get("total")
        if self.checks and "total" in tokens and total != parts:
            out.append(note_at(event, "tokens-total", f"tokens.total {quote(str(total))} is not "
                                                      f"the sum of its parts ({parts})"))
        if total.__class__ is not int:
            total = parts
        summed = run.tokens
        if summed is None:
            run.tokens = {"total": total, "input": given, "output": output,
                          "reasoning": reasoning, "cache": {"read": read, "write": write}}
        else:
            summed["total"] += total
            summed["input"] += given
            summed["output"] += output
            summed["reasoning"] += reasoning
            summed["cache"]["read"] += read
            summed["cache"]["write"] += write
        cost = part.get("cost")
        if cost.__class__ is int or cost.__class__ is float:
            run.cost_decimals = max(run.cost_decimals, _decimals(cost))
            run.cost = round((run.cost or 0) + cost, run.cost_decimals)
        elif run.cost is None:
            run.cost = 0

    def _in_step(self, run, event, data, out):
        """A part: inside a step, of the step's message, of the line's session."""
        if not self.checks:
            return
        kind = event.type
        if not run.in_step:
            out.append(note_at(event, "outside-step", f"a {kind} part outside a step"))
        part = data.get("part")
        if part.__class__ is dict and part.get("sessionID") != data.get("sessionID"):
            out.append(note_at(event, "part-session", f"a {kind} part of another session "
                                                      "than its line's"))

    def _text(self, run, event, data, out):
        self._in_step(run, event, data, out)
        part = data.get("part")
        if part.__class__ is not dict:
            return
        text = part.get("text")
        if text.__class__ is not str:
            return
        key = part.get("id")
        key = key if key.__class__ is str else event.line
        seen = key in run.texts
        run.texts[key] = text  # a part written again replaces what it said
        if text and not seen and self.texts:
            out.append(Text(text=text, message=key, source=event.source, line=event.line))

    def _tool_use(self, run, event, data, out):
        self._in_step(run, event, data, out)
        part = data.get("part")
        part = part if part.__class__ is dict else {}
        state = part.get("state")
        state = state if state.__class__ is dict else {}
        tool = part.get("tool")
        tool = tool if tool.__class__ is str else None
        call_id = part.get("callID")
        call_id = call_id if call_id.__class__ is str else None
        message = part.get("messageID")
        args = state.get("input")
        kind = kind_of(tool, state)
        outcome = outcome_of(kind, state)
        if self.checks and outcome == "unknown":
            status = state.get("status")
            shown = quote(status) if status.__class__ is str else "none"
            out.append(note_at(event, "tool-status", f'a tool_use with status "{shown}"'))
        time = state.get("time")
        time = time if time.__class__ is dict else {}
        fields = {"call_id": call_id, "kind": kind, "name": tool, "args": args,
                  "target": target_of(tool, args, state), "session_id": run.session,
                  "model_call_id": message if message.__class__ is str else None,
                  "source": event.source, "line": event.line}
        result = state.get("output") if state.get("status") == "completed" else state.get("error")
        if "metadata" in state:
            result = {"output": result, "metadata": state.get("metadata")}
        if self.starts:
            out.append(ToolStart(time_ms=_time(time.get("start")), **fields))
        out.append(ToolEnd(time_ms=_time(time.get("end")), outcome=outcome, result=result,
                           **fields))

    # Notes.

    def _envelope(self, event, data, out):
        time = data.get("timestamp")
        if (event.type is None or data.get("sessionID").__class__ is not str
                or not (time.__class__ is int or time.__class__ is float)):
            out.append(note_at(event, "envelope", "a line without its type, numeric timestamp "
                                                  "and string sessionID"))


def _time(value):
    return value if value.__class__ is int or value.__class__ is float else None


def _failure(error):
    """The failure text of an error event's error: ``data.message``, else ``message``
    (the newer CLI's shape), else the error's name."""
    details = error.get("data")
    if details.__class__ is dict:
        message = details.get("message")
        if message.__class__ is str and message:
            return message
    for key in ("message", "name"):
        value = error.get(key)
        if value.__class__ is str and value:
            return value
    return "an error event"


# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "OpenCode has no json mode: the object is ndagent's, "
            '{"sessionID","response","steps","tokens","cost","error","rejected"}: the answer, '
            "the number of steps, and tokens and cost summed over the steps (OpenCode's own "
            "shape); a failed run's object has its error event's error and no response "
            "(status 1).",
    "result": "the answer is the text parts of the run's last step (what opencode run's own "
              "prompt returns), printed at the step_finish that ends the run. --live prints "
              "every text part.",
    "text": "bash is shell, read read, write write, edit edit, apply_patch write, delete or "
            "edit, glob glob, grep grep, webfetch webFetch, task task, ...; a call is printed "
            "when it ends (the stream has no start event).",
    "tools": "call_id is callID, name the tool, args state.input, result state.output or "
             "state.error with state.metadata; a shell command that exits non-zero is a "
             "failure, a permission the CLI rejected is permissionDenied.",
    "validate": "there is no answer check: the stream holds no answer of its own. A run "
                "ends at a step_finish whose reason is not tool-calls: a stream that stops "
                "before one was cut off.",
    "stats": "the figures are the sums of the steps' tokens and cost (reasoning counts as "
             "output); the duration is from the first timestamp to the last; no model.",
    "run": "it writes no end event: its run is over at a step_finish whose reason is not "
           "tool-calls (or at an error), and the agent is then given --grace to exit.",
}


FORMAT = Format(
    name=NAME,
    title="OpenCode",
    invocation="opencode run --format json",
    decides=decides,
    may_decide=may_decide,
    markers=markers,
    run_starts=[(("type", kind),) for kind in _BEGINS],
    reader=Reader,
    checks=CHECKS,
    run_end="a final step_finish",
    reports_cost=True,
    splits_between=splits_between,
    split_needle=SPLIT_NEEDLE,
    help=HELP,
    interchange=("opencode", "opencode"),
    extra_figures={"steps": "the model calls of the run (its step_finish events)"},
    order=50,
)
