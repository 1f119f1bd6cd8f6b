"""Google Gemini CLI: ``gemini -p ... --output-format stream-json``.

What the stream means (docs/formats.md#gemini-cli): a run goes from ``init`` (or the
first event after a ``result``) to its ``result``, ok for ``status: "success"``.
Assistant text comes as ``message`` deltas, never twice; the answer (the json mode's
``response``) is the deltas after the run's last tool event.  ``tool_use`` and
``tool_result`` are paired by ``tool_id``; ``error`` events are non-fatal notices.  The
only figures are the ``result``'s ``stats``; every event has an ISO ``timestamp``, the
only clock.
"""

from sys import getsizeof

from ndagent.formats.base import Format, first_string, result_json
from ndagent.model import (
    NATIVE_BYTES,
    READER_CALL_BYTES,
    Kept,
    KeptInOrder,
    Note,
    Prompt,
    RunEnd,
    RunStart,
    Text,
    ToolEnd,
    ToolStart,
    epoch_ms,
)
from ndagent.terminal import quote

NAME = "gemini"

# Gemini's schema checks (docs/agents.md#validate); the generic ones are the frame's.
CHECKS = {
    "init": ("warning", "a run does not begin with an init event"),
    "timestamp": ("warning", "an event has no ISO 8601 timestamp"),
    "user-message": ("warning", "a run has not exactly one user message after init"),
    "delta": ("warning", "an assistant message is not marked delta: true"),
    "error-event": ("warning", "the CLI wrote an error event (a failed run is reported "
                               "once, at its result)"),
    "tool-id": ("warning", "a tool_use has no tool_id: its result cannot be paired"),
}

# The tool names of the common kinds (docs/model.md#tool-kinds-per-agent);
# mcp_<server>_<tool> is mcp, any other tool keeps its own name as its kind.
_KINDS = {
    "run_shell_command": "shell",
    "read_file": "read",
    "read_many_files": "read",
    "write_file": "write",
    "replace": "edit",
    "list_directory": "ls",
    "glob": "glob",
    "grep_search": "grep",
    "search_file_content": "grep",
    "google_web_search": "webSearch",
    "web_fetch": "webFetch",
    "write_todos": "updateTodos",
    "invoke_agent": "task",
    "codebase_investigator": "task",
    "cli_help": "task",
}

# Where a call's parameters name what it acts on, in order.  A search is told by its
# pattern rather than the folder it searches.
_TARGET_KEYS = ("file_path", "dir_path", "command", "pattern", "query")
_SEARCH_TARGET_KEYS = ("pattern", "dir_path", "file_path", "query")

_BOUNDARIES = ((("type", "init"),), (("type", "result"),),
               (("type", "error"), ("severity", "error")))
_TOOL_EVENTS = ((("type", "tool_use"),), (("type", "tool_result"),))
_ASSISTANT = ((("type", "message"), ("role", "assistant")),)
_MARKERS = {
    # Deltas, and the tool events that end a message.
    "text": _ASSISTANT + _TOOL_EVENTS,
    "tools": _TOOL_EVENTS,
    "tool_ends": _TOOL_EVENTS,
    # The answer, and every error event for the native object's warnings.
    "ends": _ASSISTANT + _TOOL_EVENTS + ((("type", "error"),),),
}
_MARKERS["native"] = _MARKERS["ends"]  # the native object holds the answer
_MARKERS["transcript"] = _MARKERS["ends"]  # and the user's prompt: every line
_MARKERS["whole_text"] = ()


# The types of the objects ``decides`` may find decisive.
_DECISIVE_TYPES = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})


def may_decide(kind):
    """Whether an object of type ``kind`` (a string) can be decisive for Gemini."""
    return kind in _DECISIVE_TYPES


def decides(data):
    """Whether a decoded object is decisive for Gemini (docs/agents.md#decisive-tests):
    never with a top-level ``sessionID``, OpenCode's mark (its ``tool_use`` and ``error``
    share Gemini's types, and only OpenCode's test runs on a Gemini stream's
    ``tool_use``: formats.OtherAgents.screen)."""
    if "sessionID" in data:
        return False
    kind = data.get("type")
    if kind == "message":
        return "role" in data and data.get("content").__class__ is str
    if kind == "tool_use" or kind == "tool_result":
        return "tool_id" in data or "tool_name" in data
    if kind == "init":
        return "session_id" in data and "subtype" not in data
    if kind == "error":
        return "severity" in data
    if kind == "result":
        return data.get("status").__class__ is str
    return False


def markers(needs):
    """The decoder markers of the lines that matter for ``needs``: always ``init``,
    ``result`` and the severity-error events (a failure's text may be one's message).
    None (every line is decoded) when the answer's messages matter: then only the
    user's prompt would be passed over, and finding the rest would cost more than it
    saves."""
    if any(_ASSISTANT[0] in _MARKERS[need] for need in needs):
        return None
    found = list(_BOUNDARIES)
    for need in sorted(needs):
        for marker in _MARKERS[need]:
            if marker not in found:
                found.append(marker)
    return tuple(found)


def kind_of(name):
    """The common kind of a Gemini tool name (None for no name)."""
    if name.__class__ is not str:
        return None
    kind = _KINDS.get(name)
    if kind is not None:
        return kind
    if name.startswith("mcp_"):
        server, _, tool = name[4:].partition("_")
        if server and tool:
            return "mcp"
    return name


def target_of(kind, name, args):
    """What a call acts on, for people: the tool name of an MCP tool, else the first
    of the parameters that name a path, command, pattern or query; or None."""
    if kind == "mcp":
        return name
    return first_string(args, _SEARCH_TARGET_KEYS if kind in ("grep", "glob") else _TARGET_KEYS)


def outcome_of(data):
    """How a ``tool_result`` says its call ended (docs/model.md#outcomes-per-agent)."""
    status = data.get("status")
    if status == "success":
        return "success"
    if status == "error":
        error = data.get("error")
        if error.__class__ is dict and error.get("type") == "policy_violation":
            return "permissionDenied"
        return "error"
    return "unknown"


def name_in_call_id(call_id):
    """The tool name in a ``tool_id`` written ``<tool_name>-<epoch ms>-<hex>``, or None:
    all that a ``tool_result`` whose ``tool_use`` was not seen tells of its tool."""
    if call_id.__class__ is not str:
        return None
    parts = call_id.rsplit("-", 2)
    if (len(parts) == 3 and parts[0] and parts[1].isascii() and parts[1].isdigit()
            and parts[2] and all(c in "0123456789abcdef" for c in parts[2])):
        return parts[0]
    return None


def _number(value):
    """A count from ``stats``, or None (a RawNumber, a bool or any other value)."""
    cls = value.__class__
    return value if cls is int or cls is float else None


def usage_of(stats):
    """``{input, cacheRead, cacheWrite, output}`` from a result's ``stats``
    (docs/agents.md#stats): ``input`` is the uncached part, ``input_tokens`` minus
    ``cached`` when the stats lack it; Gemini reports no cache writes."""
    if stats.__class__ is not dict:
        return None
    cached = _number(stats.get("cached"))
    uncached = _number(stats.get("input"))
    if uncached is None:
        total = _number(stats.get("input_tokens"))
        if total is not None:
            uncached = total - (cached or 0)
    return {"input": uncached, "cacheRead": 0 if cached is None else cached,
            "cacheWrite": None, "output": _number(stats.get("output_tokens"))}


# A needle found in each line at which a stream may be split (``splits_between``).
SPLIT_NEEDLE = b'"init"'


def splits_between(before, after, checks):
    """Whether a stream may be cut between the adjacent lines that decode to the
    objects ``before`` and ``after`` and each part read on its own (by Readers with
    ``checks`` or not), with the same findings: a result ends the run in hand (the
    Reader holds no run after it) and an init begins the next (what the Reader keeps
    across runs, the key of the message in hand, tells messages apart and nothing
    more)."""
    return before.get("type") == "result" and after.get("type") == "init"


class _Run:
    """What a reader keeps of the run in hand: for the current run only, bounded."""

    __slots__ = ("start", "init_ms", "pieces", "errors_seen", "last_error", "users",
                 "last_line")

    def __init__(self, start, init_ms):
        self.start = start
        self.init_ms = init_ms
        self.pieces = []  # the text since the last tool event: what the answer is so far
        self.errors_seen = 0
        self.last_error = None  # (number, message) of the last severity-error event
        self.users = 0
        self.last_line = start.line


class Reader:
    """Turns one input's decoded items into model events (``ndagent.formats``)."""

    def __init__(self, source, checks=False, needs=None):
        self.source = source
        self.checks = checks
        # Whether to make Text events: the run's pieces are kept for its answer either way.
        self.texts = needs is None or "text" in needs
        # Whether to make the prompt and the texts' times (a transcript's).
        self.transcript = needs is not None and "transcript" in needs
        # What the run in hand keeps, in bounded memory (emptied when a run begins): of
        # each open call, its kind, name and target, which its tool_result does not
        # tell, but not its arguments (only where tool calls are needed); the error
        # events' messages, for the native object's warnings (only where it is needed).
        self.calls = Kept(READER_CALL_BYTES, "the tool calls open at once",
                          "the oldest are forgotten (their results name no tool)") \
            if needs is None or "tools" in needs or "tool_ends" in needs else None
        self.errors = KeptInOrder(NATIVE_BYTES, "the error events' messages",
                           "the oldest are left out of the json object's warnings") \
            if needs is None or "native" in needs else None
        self.run = None
        # The key of the message in hand: a new message begins after each tool event.
        self.message = 0
        self._handlers = {
            "message": self._message,
            "tool_use": self._tool_use,
            "tool_result": self._tool_result,
            "error": self._error,
        }

    def event(self, event):
        data = event.data
        kind = event.type
        out = []
        run = self.run
        if kind == "init":
            if run is not None:
                out.append(self._cut_off(run))
            run = self._begin(event, data, out)
        elif run is None:
            run = self._begin(event, None, out)
        run.last_line = event.line
        if self.transcript and run.start.time_ms is None:
            run.start.time_ms = epoch_ms(data.get("timestamp"))
        if self.checks and epoch_ms(data.get("timestamp")) is None:
            self._timestamp_note(event, data.get("timestamp"), out)
        if kind == "result":
            self._end(run, event, data, out)
            self.run = None
        else:
            handler = self._handlers.get(kind)
            if handler is not None:
                handler(run, event, data, out)
        return out

    def awaits_run(self):
        return self.run is None

    def skipped(self, item):
        """Lines passed over: never an ``init`` (always decoded), but they may be the
        first event after a result, which begins a run."""
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
        return [self._cut_off(run)]

    # Runs.

    def _begin(self, item, init, out):
        self.message += 1
        if init is None:
            start = RunStart(agent=NAME, source=item.source, line=item.line)
            init_ms = None
        else:
            session_id = init.get("session_id")
            model = init.get("model")
            start = RunStart(agent=NAME,
                             session_id=session_id if session_id.__class__ is str else None,
                             model=model if model.__class__ is str else None,
                             announced=True, source=item.source, line=item.line)
            init_ms = start.time_ms = epoch_ms(init.get("timestamp"))
        for kept in (self.calls, self.errors):
            if kept is not None:
                kept.close()
        run = self.run = _Run(start, init_ms)
        out.append(start)
        if init is None and self.checks:
            kind = item.type
            what = f'a "{quote(kind)}" event' if kind is not None else "another event"
            out.append(self._note(item, "init", f"the run begins with {what}, not init"))
        return run

    def _end(self, run, event, data, out):
        if self.checks and run.users == 0:
            out.append(self._note(event, "user-message", "no user message in the run"))
        ok = data.get("status") == "success"
        answer = "".join(run.pieces)
        stats = data.get("stats")
        native = {}
        session_id = run.start.session_id
        if session_id:
            native["session_id"] = session_id
        error = data.get("error")
        if error is None:
            native["response"] = answer
        if "stats" in data:
            native["stats"] = stats
        used = None  # the error event whose message is the native error's
        if error is not None:
            native["error"] = error
        elif not ok:
            if run.last_error is not None:
                used, message = run.last_error
            else:
                message = None
            native["error"] = {"type": "INVALID_STREAM", "message": message}
        warnings = [] if self.errors is None else [
            message for number, message in self.errors.close() if number != used]
        if warnings:
            native["warnings"] = warnings
        out.append(RunEnd(start=run.start, cutoff=False, ok=ok,
                          failure=None if ok else _failure(data, run), answer=answer,
                          native=native, usage=usage_of(stats), cost_usd=None,
                          duration_ms=self._duration(run, data, stats),
                          model=run.start.model, time_ms=epoch_ms(data.get("timestamp")),
                          error_type=None if ok else _error_type(error),
                          source=event.source, line=event.line))

    def _cut_off(self, run):
        return RunEnd(start=run.start, cutoff=True, ok=False, answer="".join(run.pieces),
                      model=run.start.model, source=run.start.source, line=run.last_line)

    @staticmethod
    def _duration(run, data, stats):
        """``stats.duration_ms``; when 0 or absent (failed runs), the result's time
        minus the init's."""
        if stats.__class__ is dict:
            duration = _number(stats.get("duration_ms"))
            if duration is not None and duration > 0:
                return duration
        end_ms = epoch_ms(data.get("timestamp"))
        if end_ms is None or run.init_ms is None or end_ms < run.init_ms:
            return None
        return end_ms - run.init_ms

    # Events inside a run.

    def _message(self, run, event, data, out):
        role = data.get("role")
        if role == "assistant":
            text = data.get("content")
            if self.checks and data.get("delta") is not True:
                out.append(self._note(event, "delta",
                                      'an assistant message without "delta": true'))
            if text.__class__ is str and text:
                run.pieces.append(text)
                if self.texts:
                    out.append(Text(text=text, message=self.message, source=event.source,
                                    line=event.line, time_ms=epoch_ms(data.get("timestamp"))
                                    if self.transcript else None))
        elif role == "user":
            run.users += 1
            text = data.get("content")
            if self.transcript and text.__class__ is str and text:
                out.append(Prompt(text=text, source=event.source, line=event.line))
            if self.checks and run.users == 2:
                out.append(self._note(event, "user-message",
                                      "a second user message in the run"))

    def _tool_use(self, run, event, data, out):
        self._new_message(run)
        call_id = data.get("tool_id")
        name = data.get("tool_name")
        name = name if name.__class__ is str else None
        if call_id.__class__ is not str:
            # It stays open until its run ends (docs/agents.md#tools: pending, with a warning).
            call_id = None
            tool = f'"{quote(name)}"' if name is not None else "a tool"
            out.append(self._note(event, "tool-id", f"a tool_use of {tool} has no "
                                                    "tool_id: its result cannot be paired"))
        kind = kind_of(name)
        args = data.get("parameters")
        start = ToolStart(call_id=call_id, kind=kind, name=name, args=args,
                          target=target_of(kind, name, args),
                          session_id=run.start.session_id,
                          time_ms=epoch_ms(data.get("timestamp")), source=event.source,
                          line=event.line)
        if call_id is not None and self.calls is not None:
            self.calls.keep(call_id, (kind, name, start.target),
                            getsizeof(name) + getsizeof(start.target), event, out)
        out.append(start)

    def _tool_result(self, run, event, data, out):
        self._new_message(run)
        call_id = data.get("tool_id")
        call_id = call_id if call_id.__class__ is str else None
        calls = self.calls
        known = calls.complete(call_id) if call_id is not None and calls is not None else None
        # Its arguments are its start's: a verb that prints them keeps them itself, in
        # the frame's pairer.
        if known is not None:
            kind, name, target = known
        else:
            name = name_in_call_id(call_id)
            kind = kind_of(name)
            target = name if kind == "mcp" else None
        outcome = outcome_of(data)
        result = data.get("output")
        if outcome != "success" and "error" in data:
            result = data.get("error")
        out.append(ToolEnd(call_id=call_id, kind=kind, name=name, target=target,
                           session_id=run.start.session_id,
                           time_ms=epoch_ms(data.get("timestamp")), outcome=outcome,
                           result=result, source=event.source, line=event.line))

    def _error(self, run, event, data, out):
        message = data.get("message")
        severity = data.get("severity")
        if message.__class__ is str:
            number = run.errors_seen = run.errors_seen + 1
            if self.errors is not None:
                self.errors.keep((number, message), getsizeof(message), event, out)
            if severity == "error":
                run.last_error = (number, message)
        if self.checks:
            text = quote(message) if message.__class__ is str else ""
            level = quote(severity) if severity.__class__ is str else "?"
            out.append(self._note(event, "error-event",
                                  f'error event (severity "{level}"): "{text}"'))

    def _new_message(self, run):
        """A tool event: the text so far was interim, and later text is a new message."""
        self.message += 1
        run.pieces.clear()

    # Notes.

    def _timestamp_note(self, event, value, out):
        if value is None:
            message = "an event without a timestamp"
        elif value.__class__ is str:
            message = f'timestamp "{quote(value)}" is not an ISO 8601 time'
        else:
            message = "a timestamp that is not a string"
        out.append(self._note(event, "timestamp", message))

    @staticmethod
    def _note(item, check, message):
        return Note(check=check, message=message, source=item.source, line=item.line)


def result_text(end):
    """What a transcript shows of a call's result: its output, or its error's message."""
    result = end.result
    if result.__class__ is dict and result.get("message").__class__ is str:
        return result["message"] or None
    return result_json(result)


def _error_type(error):
    """The class of a failed run's failure: the result's ``error.type``, or None."""
    kind = error.get("type") if error.__class__ is dict else None
    return kind if kind.__class__ is str and kind else None


def _failure(data, run):
    """Why a run failed: the result's ``error.message``, else the message of the run's
    last severity-error event, else what the result says."""
    error = data.get("error")
    if error.__class__ is dict:
        message = error.get("message")
        if message.__class__ is str and message:
            return message
    if run.last_error is not None:
        return run.last_error[1]
    status = data.get("status")
    return f'result status "{status}"' if status.__class__ is str else "result status"


# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "the object of its json mode, "
            '{"session_id","response","stats","error","warnings"}, '
            "made from the stream: stats in the stream's reduced form (the result's few "
            "figures, not the CLI's session metrics); a failed run's object is printed (status "
            "1), where the CLI writes it on standard error.",
    "result": "the answer is the text after the run's last tool call (its json mode's response), "
              "known only at the run's end, since a later tool call would make the text so far "
              "an interim message. --live prints every delta.",
    "text": "run_shell_command is shell, read_file read, write_file write, replace edit, glob "
            "glob, grep_search grep, mcp_* tools mcp, google_web_search webSearch, ...",
    "tools": "call_id is tool_id, name tool_name, args the parameters, result the output or "
             "error; a tool_use with no tool_id cannot be paired: it is printed at its run's end, "
             "with a warning.",
    "validate": "the CLI writes notices that are not JSON ('Loaded cached credentials.') on "
                "its standard output: each known one is a warning (noise), as every agent's. "
                "There is no answer check: the stream holds no answer to check against. A "
                "large FILE of many runs is checked in parts.",
    "stats": "the figures are those of the result event's stats; it reports no cost.",
    "run": "its run is over at its result event.",
    "markdown": "the prompt is the user message; Started is the init's timestamp; thinking is not "
                "in the stream.",
    "html": "the prompt is the user message; Started is the init's timestamp; thinking is not in "
            "the stream.",
}


FORMAT = Format(
    name=NAME,
    title="Gemini CLI",
    invocation="gemini -p --output-format stream-json",
    decides=decides,
    may_decide=may_decide,
    markers=markers,
    run_starts=[(("type", "init"),)],
    reader=Reader,
    checks=CHECKS,
    run_end="a result event",
    # The CLI's notices that reach standard output (docs/formats.md#gemini-quirks).
    noise_lines=(b"YOLO mode is enabled.", b"Loaded cached credentials.", b"Server '",
                 b"Rename failed with EPERM"),
    splits_between=splits_between,
    split_needle=SPLIT_NEEDLE,
    help=HELP,
    result_text=result_text,
    interchange=("gemini-cli", "gcp.gen_ai"),
    order=40,
)
