"""GitHub Copilot CLI: ``copilot -p "..." --output-format json --allow-all-tools``.

What the stream means (docs/formats.md#copilot-cli): every line but the last is a
session event ``{type, data, id, timestamp, parentId, ephemeral?, agentId?}`` with a
dotted ``type``; the last is the CLI's ``result`` (``exitCode``, ``sessionId``,
``usage``), which ends the run, ok for exit code 0.  Text comes as
``assistant.message_delta`` pieces, then the whole ``assistant.message`` of the same
``messageId``; the answer is the last main-agent message that has text.  Tool calls go
from ``tool.execution_start`` to ``tool.execution_complete`` by ``toolCallId``.
Tokens come only per API call (``assistant.usage``), summed; the ``result`` counts
premium requests and time.
"""

from sys import getsizeof

from ndagent.formats.base import Format, Holding, first_string, note_at, text_or_none
from ndagent.model import (
    READER_CALL_BYTES,
    Answer,
    Kept,
    Prompt,
    RunEnd,
    RunStart,
    Text,
    ToolEnd,
    ToolStart,
    epoch_ms,
)
from ndagent.terminal import quote

NAME = "copilot"

RESULT = "result"
USER = "user.message"
MESSAGE, DELTA, USAGE = "assistant.message", "assistant.message_delta", "assistant.usage"
TOOL_START, TOOL_END = "tool.execution_start", "tool.execution_complete"
SUBAGENT = "subagent.started"
ERROR, WARNING, TOOLS_UPDATED = "session.error", "session.warning", "session.tools_updated"

# The events a run may begin with: the CLI's start-up notices, then the prompt.
_SESSION_STARTS = ("session.start", "session.resume")
_STARTS = (*_SESSION_STARTS, "session.info", WARNING, TOOLS_UPDATED,
           "session.mcp_server_status_changed", "session.mcp_servers_loaded",
           "session.skills_loaded", "session.custom_agents_updated", USER)
_STARTS_SET = frozenset(_STARTS)
# The messages whose deltas came and whose whole message is awaited, kept at most: real
# streams have one at a time.
MAX_STREAMED = 4096

CHECKS = {
    "envelope": ("warning", "an event lacks its id, ISO timestamp or data object"),
    "deltas": ("warning", "a message's deltas differ from its whole text, or have no "
                          "assistant.message"),
    "session-error": ("warning", "a session.error in a run that ended with exit code 0"),
    "session-warning": ("warning", "the CLI wrote a session.warning"),
    "no-answer": ("warning", "an ok run with no main-agent message that has text"),
    "parent": ("warning", "an event's parentId names itself, or an event that comes after "
                          "it"),
    "call-unstarted": ("error", "a tool.execution_complete with no tool.execution_start "
                                "before it"),
}

# How many event ids the parentId check keeps, of the events seen and of the parents
# not seen yet: the oldest are forgotten beyond (a parent never seen again is no
# finding: the stream may begin after it).
MAX_IDS = 1 << 16

# The tool names of the common kinds (docs/model.md#tool-kinds-per-agent); a tool
# whose start names an MCP server is mcp; any other keeps its own name.
_KINDS = {
    "bash": "shell",
    "powershell": "shell",
    "view": "read",
    "create": "write",
    "edit": "edit",
    "str_replace_editor": "edit",
    "glob": "glob",
    "grep": "grep",
    "rg": "grep",
    "web_fetch": "webFetch",
    "web_search": "webSearch",
    "task": "task",
}
_TARGET_KEYS = ("path", "command", "pattern", "url", "query")
# A search is told by what it looks for rather than where.
_SEARCH_TARGET_KEYS = ("pattern", "query", "path")
_EXIT_SUFFIX = "<exited with exit code "
_CODE_OUTCOMES = {"denied": "permissionDenied", "rejected": "rejected"}

_ALWAYS = tuple((("type", kind),) for kind in (RESULT, *_STARTS, ERROR))
_MESSAGES = ((("type", MESSAGE),), (("type", USAGE),))
# The needs that take neither messages nor usage: the calls' ends (named by their
# starts) and the native object (the result as it stands).
_NO_MESSAGES = frozenset({"tool_ends", "native"})
_TOOLS = ((("type", TOOL_START),), (("type", TOOL_END),), (("type", SUBAGENT),))
_MARKERS = {"text": ((("type", DELTA),),), "tools": _TOOLS, "tool_ends": _TOOLS, "ends": (),
            "native": (), "transcript": ((("type", USER),),), "whole_text": ()}


_CODEX_PREFIXES = ("thread.", "turn.", "item.")


def _dotted(kind):
    """Whether ``kind`` is a session event's type: names of lower-case ASCII words joined
    by ``_``, two or more of them joined by dots (``session.tools_updated``)."""
    if kind.__class__ is not str or kind.startswith(_CODEX_PREFIXES):
        return False
    names = kind.split(".")
    return len(names) > 1 and all(
        word.isascii() and word.isalpha() and word.islower()
        for name in names for word in name.split("_"))


def may_decide(kind):
    """Whether an object of type ``kind`` (a string, or None) can be decisive for
    Copilot: a dotted type other than Codex's, or its result."""
    return kind == RESULT or _dotted(kind)


def decides(data):
    """Whether a decoded object is decisive for Copilot (docs/agents.md#decisive-tests): a
    dotted type (not Codex's) with a ``data`` object, or a ``result`` with ``exitCode``
    and ``sessionId``."""
    kind = data.get("type")
    if kind == RESULT:
        return "exitCode" in data and "sessionId" in data
    return _dotted(kind) and data.get("data").__class__ is dict


def markers(needs):
    """The lines that matter for ``needs``: the result, the events a run begins with
    and errors always; messages (the answer, the model, the message that requested each
    call) and usage but for the calls' ends and the native object alone; deltas for
    text, but under "whole_text"; the tool events and subagent starts for calls."""
    found = list(_ALWAYS if needs <= _NO_MESSAGES else _ALWAYS + _MESSAGES)
    for need in sorted(needs):
        if need == "text" and "whole_text" in needs:
            continue  # the whole messages repeat the deltas: they are held (Reader)
        for marker in _MARKERS[need]:
            if marker not in found:
                found.append(marker)
    return tuple(found)


# A stream may be cut before a start-up notice that begins a run, each of whose types
# holds the needle (never before a run's prompt, which holds none).
SPLIT_NEEDLE = b'"session.'
_SPLIT_STARTS = frozenset(kind for kind in _STARTS if kind.startswith("session."))


def splits_between(before, after, checks):
    """A cut may fall after a ``result`` and before a start-up notice that begins the
    next run: the Reader carries nothing from one run to the next, but for ``checks``
    the event ids the parentId check follows."""
    return not checks and before.get("type") == RESULT and after.get("type") in _SPLIT_STARTS


def kind_of(name, data):
    if data.get("mcpServerName").__class__ is str:
        return "mcp"
    if name.__class__ is not str:
        return None
    return _KINDS.get(name, name)


def name_of(data):
    """The tool's name: ``server/tool`` for an MCP tool."""
    server, tool = data.get("mcpServerName"), data.get("mcpToolName")
    if server.__class__ is str and tool.__class__ is str:
        return f"{server}/{tool}"
    name = data.get("toolName")
    return name if name.__class__ is str else None


def target_of(kind, name, args):
    if kind == "mcp":
        return name
    return first_string(args, _SEARCH_TARGET_KEYS if kind in ("grep", "glob") else _TARGET_KEYS)


def exit_code_of(result):
    """A shell call's exit code, where its result tells one: ``contents[]``'s
    ``terminal``/``shell_exit`` ``exitCode``, or ``content`` ending ``<exited with exit
    code N>``; else None."""
    if result.__class__ is not dict:
        return None
    contents = result.get("contents")
    if contents.__class__ is list:
        for item in contents:
            if item.__class__ is dict and item.get("exitCode").__class__ is int:
                return item["exitCode"]
    content = result.get("content")
    if content.__class__ is str:
        tail = content.rstrip()
        at = tail.rfind(_EXIT_SUFFIX)
        if at >= 0 and tail.endswith(">"):
            number = tail[at + len(_EXIT_SUFFIX):-1]
            if number.isascii() and number.lstrip("-").isdigit():
                return int(number)
    return None


def outcome_of(kind, data):
    """How a ``tool.execution_complete`` says its call ended
    (docs/model.md#outcomes-per-agent)."""
    success = data.get("success")
    if success is True:
        code = exit_code_of(data.get("result")) if kind == "shell" else None
        return "failure" if code is not None and code != 0 else "success"
    if success is False:
        error = data.get("error")
        code = error.get("code") if error.__class__ is dict else None
        return _CODE_OUTCOMES.get(code, "error") if code.__class__ is str else "error"
    return "unknown"


def _number(value):
    cls = value.__class__
    return value if cls is int or cls is float else None


def _extra(usage):
    """The run's extra figures (FORMAT's extra_figures) of its result's usage, or None."""
    requests = _number(usage.get("premiumRequests"))
    return None if requests is None else {"premium_requests": requests}


def _whole_text(event):
    """Whether an ``assistant.message`` event is the main agent's, with text."""
    body = event.get("data")
    if body.__class__ is not dict or not _main(event, body):
        return False
    text = body.get("content")
    return text.__class__ is str and text != ""


def _main(event, data):
    """Whether an event is the main agent's: no ``agentId``, no ``parentToolCallId``."""
    return event.get("agentId") is None and data.get("parentToolCallId") is None


def _begins_another(run, event, data):
    """Whether a start-up notice or prompt ``event`` (its ``data``) begins another run
    while ``run`` has had no ``result``, which is then cut off: another process's stream
    follows it.  The first event of a session does (its ``parentId`` null: every later
    event names an earlier one), and, after the run's prompt, a session's start or
    resumption, or another prompt of the main agent (``copilot -p`` takes one prompt a
    process).  Where the first event printed names one not printed (the CLI keeps the
    session's first events off stdout), the start-up notices before the new prompt are
    still read as the end of the run cut off: a notice may come within a run too."""
    if "parentId" in data and data["parentId"] is None:
        return True
    if not run.prompted:
        return False
    kind = event.type
    if kind == USER:
        body = data.get("data")
        return body.__class__ is dict and _main(data, body)
    return kind in _SESSION_STARTS


class _Run:
    __slots__ = ("start", "answer", "pieces", "piece_message", "usage", "model",
                 "first_model", "error", "last_line", "deltas", "prompted")

    def __init__(self, start):
        self.start = start
        self.answer = None  # the last main-agent message's text
        self.pieces = []  # the deltas of the message in hand: a cut-off run's answer
        self.piece_message = None
        self.usage = None
        self.model = None  # session.tools_updated's
        self.first_model = None  # the first message's
        self.error = None  # the last session.error's message
        self.last_line = start.line
        # messageId -> a digest of its deltas' text (checks: else None), until its whole
        # message; at most MAX_STREAMED messages, the oldest let go
        self.deltas = {}
        self.prompted = False  # whether the main agent's prompt (user.message) was seen


class Reader(Holding):
    """Turns one input's decoded items into model events (``ndagent.formats``)."""

    def __init__(self, source, checks=False, needs=None):
        self.source = source
        self.checks = checks
        self.texts = needs is None or "text" in needs
        self.run = None
        # Whether to make the prompt and the run's stream time (a transcript's).
        self.transcript = needs is not None and "transcript" in needs
        # Of the run in hand: the open calls' kind, name and target (their ends name no
        # tool), the message that requested each call, and the call of each subagent.
        self.calls = Kept(READER_CALL_BYTES, "the tool calls open at once",
                          "the oldest are forgotten (their ends name no tool)")
        self.requests = Kept(READER_CALL_BYTES, "the tool requests not yet started",
                             "the oldest calls lose their message's id")
        self.agents = Kept(READER_CALL_BYTES, "the subagents of the run",
                           "the oldest subagents' calls lose their parent")
        # The ids of the events seen, and the parentIds not seen yet (the line of the
        # first event naming each), for the parentId check.
        self.ids, self.parents = ({}, {}) if checks else (None, None)
        self._handlers = {
            DELTA: self._delta,
            MESSAGE: self._message,
            USAGE: self._usage,
            TOOL_START: self._tool_start,
            TOOL_END: self._tool_end,
            SUBAGENT: self._subagent,
            ERROR: self._error,
            WARNING: self._warning,
            TOOLS_UPDATED: self._tools_updated,
            USER: self._user,
        }
        # Under "whole_text", the lines passed over (the deltas) are held (``Holding``).
        if needs is not None and "whole_text" in needs and not checks:
            self.event, self.skipped, self.finish = (self._holding, self._holding_skipped,
                                                     self.finish_holding)

    def event(self, event):
        data = event.data
        kind = event.type
        out = []
        run = self.run
        if run is None:
            run = self._begin(event, out)
        elif kind in _STARTS_SET and _begins_another(run, event, data):
            out += self.finish()
            run = self._begin(event, out)
        run.last_line = event.line
        if kind == RESULT:
            self._end(run, event, data, out)
            return out
        body = data.get("data")
        if self.checks and (data.get("id").__class__ is not str
                            or epoch_ms(data.get("timestamp")) is None
                            or body.__class__ is not dict):
            out.append(note_at(event, "envelope", "an event without its id, ISO timestamp "
                                                  "and data object"))
        if self.checks:
            self._check_parent(event, data, out)
        handler = self._handlers.get(kind)
        if handler is not None and body.__class__ is dict:
            handler(run, event, data, body, out)
        return out

    def awaits_run(self):
        return self.run is None

    def _user(self, run, event, data, body, out):
        """A prompt: the main agent's is the run's (another begins another run).  A
        transcript shows it, and takes the run's first stream time from it."""
        if _main(data, body):
            run.prompted = True
        if not self.transcript:
            return
        text = body.get("content")
        if text.__class__ is str and text:
            out.append(Prompt(text=text, source=event.source, line=event.line))
        if run.start.time_ms is None:
            run.start.time_ms = epoch_ms(data.get("timestamp"))

    def _check_parent(self, event, data, out):
        """An event's parentId names an earlier event: one that names itself, or an event
        that comes later, is said."""
        own, parent = data.get("id"), data.get("parentId")
        if own.__class__ is not str:
            own = None
        if own is not None:
            line = self.parents.pop(own, None)
            if line is not None:
                out.append(note_at(event, "parent", f'event "{quote(own)}" comes after line '
                                                    f"{line}, whose parentId names it"))
        if parent.__class__ is str:
            if parent == own:
                out.append(note_at(event, "parent", "the event's parentId is its own id"))
            elif parent not in self.ids and parent not in self.parents:
                _keep_id(self.parents, parent, event.line)
        if own is not None:
            _keep_id(self.ids, own, True)

    def skipped(self, item):
        out = []
        if self.run is None:
            self._begin(item, out)
        self.run.last_line = item.line
        return out

    # Under "whole_text": a main-agent message's text comes from its whole line, and the
    # lines passed over before it (its deltas, which it repeats, and lines that make
    # nothing) are dropped; before any other line, they are read first, as if none had
    # been held (a run cut off in the middle of a message: its deltas are its text).

    def _holding(self, event):
        if self.held:
            if event.type == MESSAGE and _whole_text(event.data):
                self.drop()
            else:
                self.release()
        return self.read_now(event)

    def _holding_skipped(self, item):
        out = []
        if self.run is None:
            self._begin(item, out)
        self.hold(item)
        return out

    def finish(self):
        run = self.run
        if run is None:
            return []
        self.run = None
        answer = "".join(run.pieces) or run.answer
        return [RunEnd(start=run.start, cutoff=True, ok=False, answer=answer,
                       usage=run.usage, model=run.model or run.first_model,
                       source=run.start.source, line=run.last_line)]

    # Runs.

    def _begin(self, item, out):
        for kept in (self.calls, self.requests, self.agents):
            kept.close()
        start = RunStart(agent=NAME, announced=item.type in _STARTS, source=item.source,
                         line=item.line)
        run = self.run = _Run(start)
        out.append(start)
        return run

    def _end(self, run, event, data, out):
        self.run = None
        code = data.get("exitCode")
        ok = code == 0
        if self.checks:
            if ok and run.error is not None:
                out.append(note_at(event, "session-error", f'the run had a session.error, '
                                   f'"{quote(run.error)}", and exit code 0'))
            if ok and not run.answer:
                out.append(note_at(event, "no-answer", "no main-agent message with text"))
            for message_id in run.deltas:
                out.append(note_at(event, "deltas", f'the deltas of message '
                                   f'"{quote(message_id)}" have no assistant.message'))
        usage = data.get("usage")
        usage = usage if usage.__class__ is dict else {}
        failure = None
        if not ok:
            failure = run.error or (f"exit code {code}" if _number(code) is not None
                                    else "no exit code")
        session = data.get("sessionId")
        run.start.session_id = session if session.__class__ is str else None
        out.append(RunEnd(start=run.start, cutoff=False, ok=ok, failure=failure,
                          answer=run.answer if run.answer is not None else "",
                          native=data, usage=run.usage, cost_usd=None,
                          duration_ms=_number(usage.get("sessionDurationMs")),
                          model=run.model or run.first_model, extra=_extra(usage),
                          source=event.source, line=event.line))

    # Events.

    def _delta(self, run, event, data, body, out):
        text = body.get("deltaContent")
        message = text_or_none(body.get("messageId"))
        if text.__class__ is not str or not text or not _main(data, body):
            return
        if message.__class__ is str:
            deltas = run.deltas
            if message not in deltas:
                deltas[message] = Answer() if self.checks else None
                if len(deltas) > MAX_STREAMED:
                    del deltas[next(iter(deltas))]
            if self.checks:
                deltas[message].add(text)
        if message != run.piece_message:
            run.pieces = []
            run.piece_message = message
        run.pieces.append(text)
        if self.texts:
            out.append(Text(text, message, event.source, event.line))

    def _message(self, run, event, data, body, out):
        model = body.get("model")
        if run.first_model is None and model.__class__ is str:
            run.first_model = model
        message = text_or_none(body.get("messageId"))
        requests = body.get("toolRequests")
        if message.__class__ is str and requests.__class__ is list:
            for request in requests:
                call_id = request.get("toolCallId") if request.__class__ is dict else None
                if call_id.__class__ is str:
                    self.requests.keep(call_id, message, getsizeof(message), event, out)
        if not _main(data, body):
            return
        text = body.get("content")
        if text.__class__ is not str:
            return
        streamed = message.__class__ is str and message in run.deltas
        digest = run.deltas.pop(message) if streamed else None
        if not streamed:
            if text and self.texts:
                out.append(Text(text, message, event.source, event.line))
        elif self.checks and not digest.matches(text):
            out.append(note_at(event, "deltas", "the deltas differ from the message's text"))
        run.pieces = []
        if text:
            run.answer = text

    def _usage(self, run, event, data, body, out):
        figures = [_number(body.get(key)) or 0 for key in
                   ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")]
        used = {"input": figures[0] - figures[1], "cacheRead": figures[1],
                "cacheWrite": figures[2], "output": figures[3]}
        if run.usage is None:
            run.usage = used
        else:
            for key, value in used.items():
                run.usage[key] += value

    def _tool_start(self, run, event, data, body, out):
        call_id = body.get("toolCallId")
        call_id = call_id if call_id.__class__ is str else None
        name = name_of(body)
        kind = kind_of(body.get("toolName"), body)
        args = body.get("arguments")
        target = target_of(kind, name, args)
        if call_id is not None:
            self.calls.keep(call_id, (kind, name, target),
                            getsizeof(name) + getsizeof(target), event, out)
        message = None if call_id is None else self.requests.complete(call_id)
        out.append(ToolStart(call_id=call_id, kind=kind, name=name, args=args, target=target,
                             model_call_id=message, parent=self._parent(data, body),
                             time_ms=epoch_ms(data.get("timestamp")), source=event.source,
                             line=event.line))

    def _tool_end(self, run, event, data, body, out):
        call_id = body.get("toolCallId")
        call_id = call_id if call_id.__class__ is str else None
        known = None if call_id is None else self.calls.complete(call_id)
        kind, name, target = known if known is not None else (None, None, None)
        result = body.get("result") if body.get("success") is True else body.get("error")
        out.append(ToolEnd(call_id=call_id, kind=kind, name=name, target=target,
                           parent=self._parent(data, body), outcome=outcome_of(kind, body),
                           result=result, time_ms=epoch_ms(data.get("timestamp")),
                           source=event.source, line=event.line))

    def _parent(self, data, body):
        parent = body.get("parentToolCallId")
        if parent.__class__ is str:
            return parent
        agent = data.get("agentId")
        return self.agents.get(agent) if agent.__class__ is str else None

    def _subagent(self, run, event, data, body, out):
        agent, call_id = body.get("agentId"), body.get("toolCallId")
        if agent is None:
            agent = data.get("agentId")
        if agent.__class__ is str and call_id.__class__ is str:
            self.agents.keep(agent, call_id, getsizeof(call_id), event, out)

    def _error(self, run, event, data, body, out):
        message = body.get("message")
        if message.__class__ is str and message:
            run.error = message

    def _warning(self, run, event, data, body, out):
        if self.checks:
            message = body.get("message")
            text = quote(message) if message.__class__ is str else ""
            out.append(note_at(event, "session-warning", f'session.warning: "{text}"'))

    def _tools_updated(self, run, event, data, body, out):
        model = body.get("model")
        if model.__class__ is str:
            run.model = model


def _keep_id(kept, key, value):
    kept[key] = value
    if len(kept) > MAX_IDS:
        del kept[next(iter(kept))]


# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "the run's result line as it is (its JSON mode is the stream; the result is its "
            "one summary): exitCode, sessionId and usage (premium requests, durations, code "
            "changes); a failed run's is printed too (status 1).",
    "result": "the answer is the last main-agent assistant.message that has text, known "
              "only at the run's end. --live prints the deltas (or each whole message).",
    "text": "bash is shell, view read, create write, edit edit, grep grep, glob glob, "
            "web_fetch webFetch, task task, a tool with an MCP server mcp, ...",
    "tools": "call_id is toolCallId, name toolName (server/tool for MCP), args the arguments, "
             "result the result or error; a shell command that exits non-zero is a failure; "
             "error code denied is permissionDenied, rejected rejected.",
    "validate": "a session.error in a run that exits 0 and each session.warning are "
                "warnings, as are deltas that differ from their message.",
    "stats": "tokens are the sums of the assistant.usage events (null when the CLI prints "
             "none); the duration is the result's sessionDurationMs; no cost (its cost "
             "is a premium-request multiplier).",
    "run": "its run is over at its result line.",
    "markdown": "the prompt is the user.message event.",
    "html": "the prompt is the user.message event.",
}


FORMAT = Format(
    name=NAME,
    title="GitHub Copilot CLI",
    invocation="copilot -p --output-format json --allow-all-tools",
    decides=decides,
    may_decide=may_decide,
    markers=markers,
    run_starts=[(("type", kind),) for kind in _STARTS],
    reader=Reader,
    checks=CHECKS,
    run_end="a result event",
    splits_between=splits_between,
    split_needle=SPLIT_NEEDLE,
    help=HELP,
    interchange=("copilot-cli", "github_copilot"),
    extra_figures={"premium_requests": "the premium requests the run used (its result's "
                                       "usage.premiumRequests)"},
    order=70,
)
