"""OpenAI Codex CLI, ``codex exec --json``: its ThreadEvents as model events.

A run goes from ``thread.started`` (or ``turn.started``) to ``turn.completed`` (ok, with
the usage) or ``turn.failed`` (failed, with ``error.message``); a top-level ``error``
before ``turn.failed`` is that same failure, announced.  Items, keyed by their ``id``,
are the assistant's messages, its reasoning and its tool calls: ``agent_message`` and
``reasoning`` arrive completed only, a command is started then completed, a
``file_change`` may arrive completed only (its start is made at its completion).  The
answer is the last ``agent_message`` (the TypeScript SDK's ``finalResponse``) and the
native object the SDK's ``Turn``.  The stream has no clock, no model name and no cost.
The rules follow docs/formats.md#codex-cli.

Where runs begin: at ``thread.started``; at a ``turn.started`` unless the open run has
only had its ``thread.started`` (a second one means the first turn never ended); and at
any other event always decoded (``markers``) when no run is open.  Other lines (updates,
objects of no agent) neither begin a run nor end one.
"""

from sys import getsizeof

from ndagent.decoder import RawNumber
from ndagent.formats.base import (
    Format,
    joined_texts,
    result_json,
    text_or_none,
    with_exit_code,
)
from ndagent.model import (
    NATIVE_BYTES,
    READER_CALL_BYTES,
    Kept,
    KeptInOrder,
    Note,
    RunEnd,
    RunStart,
    Text,
    Thinking,
    ToolEnd,
    ToolStart,
)
from ndagent.terminal import quote

NAME = "codex"

# What is said of an input in the format before 0.44.
OLD_FORMAT = "unsupported codex format (before 0.44)"

CHECKS = {
    "thread-start": ("warning", "a turn.started with no thread.started before it"),
    "item-type": ("error", "an item updated or completed as another type than it started"),
    "item-start": ("warning", "a command, MCP, collab or to-do item completed with no "
                              "item.started"),
    "exit-code-null": ("warning", "a command completed with exit_code null (closed by the "
                                  "CLI at the turn's end)"),
    "error-event": ("warning", "a top-level error event that no turn.failed follows"),
    "error-item": ("warning", "an error item: a notice of the CLI (configuration, "
                              "deprecation)"),
    "no-answer": ("warning", "a turn completed with no agent_message"),
    "old-format": ("error", "an event of the format before Codex 0.44"),
}

# The events that begin, fill or end runs, decoded whatever the verb needs: every need
# wants the completed items (the answer, the tools, the native object's items), and the
# starts and top-level errors are few and short.  What is left (item.updated with its
# growing output, request_user_input, plan deltas) makes no model event, so passing over
# it changes none, and begins no run either way.
_RUN_EVENTS = ("thread.started", "turn.started", "turn.completed", "turn.failed",
               "item.started", "item.completed", "error")

# Items that are not tool calls; every other item type is one.
_NOT_TOOLS = frozenset({"agent_message", "reasoning", "plan", "error"})

# Tools whose item.started the CLI always writes (docs/agents.md#validate).
_STARTED = frozenset({"command_execution", "mcp_tool_call", "collab_tool_call", "todo_list"})

_KINDS = {
    "command_execution": "shell",
    "mcp_tool_call": "mcp",
    "web_search": "webSearch",
    "todo_list": "updateTodos",
    "collab_tool_call": "task",
}

# A call's arguments and result: these keys of its item, in this order.  Items of other
# types give every key but their identity (and status, for the arguments).
_ARGS = {
    "command_execution": ("command",),
    "file_change": ("changes",),
    "mcp_tool_call": ("server", "tool", "arguments"),
    "web_search": ("query", "action"),
    "todo_list": ("items",),
    "collab_tool_call": ("tool", "sender_thread_id", "receiver_thread_ids", "prompt"),
}
_RESULTS = {
    "command_execution": ("exit_code", "aggregated_output"),
    "file_change": ("status", "changes"),
    "mcp_tool_call": ("result", "error"),
    "web_search": ("results",),
    "todo_list": ("items",),
    "collab_tool_call": ("receiver_thread_ids", "agents_states"),
}

_MISSING = object()


def may_decide(kind):
    """Whether an object of type ``kind`` (a string, or None) can be decisive for Codex."""
    return kind is not None and (kind.startswith(("thread.", "turn.", "item."))
                                 or kind == "error" or kind == "request_user_input")


def decides(data):
    """Whether a decoded object is a Codex event (docs/agents.md#decisive-tests): a
    ``thread.``, ``turn.`` or ``item.`` type (not an item of the old ``item_type`` shape),
    ``request_user_input``, or an ``error`` with a string ``message`` and neither
    ``severity`` nor ``timestamp`` (Gemini's have them)."""
    kind = data.get("type")
    if kind.__class__ is not str:
        return False
    if kind.startswith(("thread.", "turn.", "item.")):
        return not _old_item(data)
    if kind == "error":
        return (data.get("message").__class__ is str and "severity" not in data
                and "timestamp" not in data)
    return kind == "request_user_input"


def old_format(data):
    """Whether a decoded object is of Codex's format before 0.44, which ndagent does not
    read: ``{"id":…,"msg":{"type":…}}`` with no ``type``, or an ``item.*`` event of early
    ``--experimental-json`` whose item has ``item_type`` and no ``type``."""
    if data.get("type") is None:
        msg = data.get("msg")
        return "id" in data and msg.__class__ is dict and msg.get("type").__class__ is str
    return _old_item(data)


def _old_item(data):
    item = data.get("item")
    return (item.__class__ is dict and "item_type" in item and "type" not in item
            and data["type"].__class__ is str and data["type"].startswith("item."))


# The needs that take the tool calls' events.
_CALL_NEEDS = frozenset({"tools", "tool_ends", "transcript"})


def markers(needs):
    """None: every line is decoded, whatever the need.  The lines that matter are the
    run's events (``_RUN_EVENTS``) for every need, and they are all that the CLI
    writes, so that finding them would cost more than it saves."""
    return None


# A needle found in each line at which a stream may be split (``splits_between``).
SPLIT_NEEDLE = b'"thread.started"'


def splits_between(before, after, checks):
    """Whether a stream may be cut between the adjacent lines that decode to the
    objects ``before`` and ``after`` and each part read on its own, with the same
    findings: a turn.completed or turn.failed ends the run in hand (the Reader then
    holds no run, nor an error event's note) and a thread.started begins the next in a
    thread of its own (a next turn without one continues the thread before: no place to
    cut); but not for a Reader with ``checks``, which says some findings once an input."""
    return (not checks and before.get("type") in ("turn.completed", "turn.failed")
            and after.get("type") == "thread.started")


class _Run:
    """What is known of the run being read."""

    __slots__ = ("start", "turned", "line", "open", "items", "answer", "answered", "error")

    def __init__(self, start, kept):
        self.start = start
        self.turned = False  # a turn.started was read: another one begins the next run
        self.line = start.line  # the last line of an event of the run
        # The Reader's, emptied for each run, in bounded memory: the items started, item
        # id -> its type (a hostile stream may start items without end: the oldest are
        # forgotten, and their completion makes a start of its own); the completed
        # items, for the native object (the SDK's Turn), or None where not needed.
        self.open, self.items = kept
        self.answer = ""  # the SDK's finalResponse so far
        self.answered = False  # an agent_message was read
        self.error = None  # the message of the last top-level error event


class Reader:
    """Model events of one input's Codex events.  Runs begin and end only at the events
    always decoded (``markers``), so ``skipped`` has nothing to do.

    ``needs`` (optional, beyond the protocol; as for ``markers``): without ``"native"``,
    the completed items are not kept for the native object (``RunEnd.native`` is None),
    so that memory does not grow with a run for verbs that never print it; with it, the
    newest items that fit in ``NATIVE_BYTES`` (a Note says the oldest are forgotten)."""

    def __init__(self, source, checks=False, needs=None):
        self.source = source
        self.checks = checks
        self.keep_items = needs is None or "native" in needs
        # Whether to make Thinking events of the reasoning items (a transcript's).
        self.transcript = needs is not None and "transcript" in needs
        # Whether to make the tool items' ToolStart and ToolEnd events: a verb that needs
        # only the runs' ends or json objects has no use for them.
        self.calls = checks or needs is None or not needs.isdisjoint(_CALL_NEEDS)
        self.kept = (
            Kept(READER_CALL_BYTES, "the items started and not completed",
                 "the oldest are forgotten (their completion is taken as their start)"),
            KeptInOrder(NATIVE_BYTES, "the run's completed items",
                 "the oldest are left out of the json object's items")
            if self.keep_items else None)
        self.run = None
        # The input's thread: a run without thread.started (a next turn) continues it.
        self.thread_id = None
        self.thread_seen = False
        self.thread_warned = False
        self.old_warned = False
        # The note of a top-level error event, held until the next event: it is no
        # warning when a turn.failed follows, which reports the same failure.
        self.error_note = None

    def event(self, event):
        handler = _HANDLERS.get(event.type)
        held = self.error_note
        if held is not None:
            self.error_note = None
            if event.type != "turn.failed":
                return [held, *self.event(event)]
        if handler is not None and not _old_item(event.data):
            return handler(self, event)
        if self.checks and not self.old_warned and old_format(event.data):
            self.old_warned = True  # once: every line of such an input is of that shape
            return [_note("old-format", OLD_FORMAT, event)]
        return []

    def awaits_run(self):
        return False  # lines passed over begin no run (the markers take those that do)

    def skipped(self, item):
        return []

    def finish(self):
        held = [] if self.error_note is None else [self.error_note]
        self.error_note = None
        run = self.run
        if run is None:
            return held
        self.run = None
        return [*held, self._cut_off(run)]

    # Runs.

    def _begin(self, event, out, announced=False):
        """A new run at ``event``, the open one cut off; ``announced`` where the event
        begins runs (a thread or turn start)."""
        if self.run is not None:
            out.append(self._cut_off(self.run))
        start = RunStart(agent=NAME, session_id=self.thread_id, announced=announced,
                         source=event.source, line=event.line)
        out.append(start)
        for kept in self.kept:
            if kept is not None:
                kept.close()
        run = self.run = _Run(start, self.kept)
        return run

    def _in_run(self, event, out):
        """The open run, or one begun at ``event``: the line it has read last."""
        run = self.run
        if run is None:
            run = self._begin(event, out)
        run.line = event.line
        return run

    def _cut_off(self, run):
        return RunEnd(start=run.start, cutoff=True, ok=False, answer=run.answer,
                      source=self.source, line=run.line)

    def _end(self, run, event, **fields):
        self.run = None
        raw = event.data.get("usage")
        usage = _usage(raw)
        totals = None
        if usage is not None and self.thread_id is not None:
            # The thread's running totals (docs/formats.md#codex-usage-and-cost).
            numbers = {name: value for name, value in raw.items()
                       if _tokens(value) is not None}
            totals = self.thread_id, None, {"usage": usage, "cost": None, "native": numbers}
        return RunEnd(start=run.start, cutoff=False, usage=usage, totals=totals,
                      source=event.source, line=event.line, **fields)

    def _thread_started(self, event):
        out = []
        thread_id = event.data.get("thread_id")
        self.thread_id = thread_id if thread_id.__class__ is str else None
        self.thread_seen = True
        self._begin(event, out, announced=True)
        return out

    def _turn_started(self, event):
        out = []
        run = self.run
        if run is None or run.turned or not run.start.announced:
            run = self._begin(event, out, announced=True)
        run.line = event.line
        run.turned = True
        if self.checks and not self.thread_seen and not self.thread_warned:
            self.thread_warned = True
            out.append(_note("thread-start", "turn.started with no thread.started before it",
                             event))
        return out

    def _turn_completed(self, event):
        out = []
        run = self._in_run(event, out)
        if self.checks and not run.answered:
            out.append(_note("no-answer", "turn completed with no agent_message", event))
        native = None if run.items is None else {
            "items": run.items.close(), "finalResponse": run.answer,
            "usage": event.data.get("usage")}
        out.append(self._end(run, event, ok=True, answer=run.answer, native=native))
        return out

    def _turn_failed(self, event):
        out = []
        run = self._in_run(event, out)
        error = event.data.get("error")
        message = error.get("message") if error.__class__ is dict else None
        if message.__class__ is not str:  # as the CLI picks it when the turn has none
            message = run.error if run.error is not None else "turn failed"
        out.append(self._end(run, event, ok=False, failure=message))
        return out

    def _error(self, event):
        out = []
        run = self._in_run(event, out)
        message = event.data.get("message")
        if message.__class__ is str:
            run.error = message
        if self.checks:
            self.error_note = _note("error-event", f'error: "{_quote(message)}"', event)
        return out

    # Items.

    def _item_started(self, event):
        out = []
        run = self._in_run(event, out)
        item = event.data.get("item")
        if item.__class__ is not dict:
            return out
        kind = item.get("type")
        call_id = _identity(item)
        if call_id is not None:
            if run.open.get(call_id) is not None:
                return out  # started again: the first start stands
            run.open.keep(call_id, (kind,), getsizeof(kind), event, out)
        if self.calls and _is_tool(kind):
            out.append(self._call(ToolStart, kind, item, event))
        return out

    def _item_updated(self, event):
        """No model event: an update only repeats the item (checked against its start)."""
        run = self.run
        item = event.data.get("item")
        if not self.checks or run is None or item.__class__ is not dict:
            return []
        return self._type_check(_started(run, _identity(item), False), item, "updated", event)

    def _item_completed(self, event):
        out = []
        run = self._in_run(event, out)
        item = event.data.get("item")
        if run.items is not None:
            run.items.keep_encoded(item, event, out)
        if item.__class__ is not dict:
            return out
        kind = item.get("type")
        call_id = _identity(item)
        started = _started(run, call_id, True)
        if self.checks:
            out += self._type_check(started, item, "completed", event)
        if kind == "agent_message":
            run.answered = True
            text = item.get("text")
            if text.__class__ is str:
                run.answer = text
                if text:
                    out.append(Text(text=text, message=event.line if call_id is None
                                    else call_id, source=event.source, line=event.line))
        elif kind == "reasoning":
            if self.transcript:
                out += _thinking(item, call_id, event)
        elif kind == "plan":  # the SDK's answer while no agent_message has given one
            text = item.get("text")
            if text.__class__ is str and run.answer == "":
                run.answer = text
        elif kind == "error":
            if self.checks:
                out.append(_note("error-item",
                                 f'error item: "{_quote(item.get("message"))}"', event))
        elif self.calls and _is_tool(kind):
            out += self._tool_completed(kind, item, call_id, started, event)
        return out

    def _tool_completed(self, kind, item, call_id, started, event):
        """The model events of a completed tool item: its start too, where none was seen."""
        out = []
        if started is _MISSING or not _is_tool(started):
            if self.checks and kind in _STARTED:
                out.append(_note("item-start", f'{_quote(kind)} item '
                                 f'"{_quote(call_id)}" completed with no item.started',
                                 event))
            out.append(self._call(ToolStart, kind, item, event))
        out.append(self._call(ToolEnd, kind, item, event, outcome=_outcome(kind, item),
                              result=_pick(item, _RESULTS.get(kind), ("id", "type"))))
        if (self.checks and kind == "command_execution"
                and item.get("status") == "completed" and item.get("exit_code") is None):
            out.append(_note("exit-code-null", f'command "{_quote(call_id)}" completed '
                             "with exit_code null: closed by the CLI at the turn's end?",
                             event))
        return out

    def _call(self, event_class, kind, item, event, **fields):
        """The ToolStart or ToolEnd of a tool item."""
        return event_class(call_id=_identity(item), kind=_kind(kind, item),
                           name=_name(kind, item),
                           args=_pick(item, _ARGS.get(kind), ("id", "type", "status")),
                           target=_target(kind, item), session_id=self.run.start.session_id,
                           source=event.source, line=event.line, **fields)

    def _type_check(self, started, item, verb, event):
        kind = item.get("type")
        if started is _MISSING or started == kind:
            return []
        return [_note("item-type", f'item "{_quote(_identity(item))}" started as '
                      f'{_quote(started)} but {verb} as {_quote(kind)}', event)]


_HANDLERS = {
    "thread.started": Reader._thread_started,
    "turn.started": Reader._turn_started,
    "turn.completed": Reader._turn_completed,
    "turn.failed": Reader._turn_failed,
    "error": Reader._error,
    "item.started": Reader._item_started,
    "item.updated": Reader._item_updated,
    "item.completed": Reader._item_completed,
}


def _thinking(item, call_id, event):
    """The Thinking of a completed reasoning item (none when it has no text)."""
    text = item.get("text")
    if text.__class__ is not str or not text:
        return []
    return [Thinking(text=text, message=call_id, source=event.source, line=event.line)]


def result_text(end):
    """What a transcript shows of a call's result, by the item's result fields: a
    command's output (and its exit code when not 0), a change's kind and path per line,
    an MCP tool's texts (or its error), the to-do items checked or not; else the JSON."""
    result = end.result if end.result.__class__ is dict else {}
    if "aggregated_output" in result or "exit_code" in result:
        output = result.get("aggregated_output")
        code = result.get("exit_code")
        return with_exit_code(output if output.__class__ is str else "",
                              code if code.__class__ is int else 0)
    if result.get("changes").__class__ is list:
        return "\n".join(f"{change.get('kind')} {change.get('path')}"
                         for change in result["changes"] if change.__class__ is dict) or None
    if "result" in result or "error" in result:
        return _mcp_text(result)
    if result.get("items").__class__ is list:
        return "\n".join(f"[{'x' if item.get('completed') is True else ' '}] "
                         f"{item.get('text')}" for item in result["items"]
                         if item.__class__ is dict) or None
    return result_json(end.result)


def _mcp_text(result):
    """An MCP call's result texts, else its error's message, else the JSON."""
    content = result.get("result")
    if content.__class__ is dict and content.get("content").__class__ is list:
        texts = joined_texts(content["content"])
        if texts is not None:
            return texts
    error = result.get("error")
    if error.__class__ is dict and error.get("message").__class__ is str:
        return error["message"]
    return result_json(result)


def _started(run, call_id, completes):
    """The type that the item ``call_id`` started as (kept in a tuple: it may be null),
    or _MISSING when its start is not known; ``completes``: the item is no longer open."""
    if call_id is None:
        return _MISSING
    found = run.open.complete(call_id) if completes else run.open.get(call_id)
    return _MISSING if found is None else found[0]


def _identity(item):
    """An item's id, which links its start and completion, or None.  A ``web_search``
    item may hold ``id`` twice (the item's, then the search's, flattened beside it): the
    decoder keeps the last, on both events alike."""
    value = item.get("id")
    return value if value.__class__ is str else None


def _is_tool(kind):
    return kind.__class__ is str and kind not in _NOT_TOOLS


def _kind(kind, item):
    """The common kind: a file_change is write when every change adds a file, delete
    when every change deletes one, else edit; a type not in the table is its own kind."""
    if kind == "file_change":
        changes = item.get("changes")
        kinds = {text_or_none(change.get("kind")) if change.__class__ is dict else None
                 for change in changes} if changes.__class__ is list else ()
        if len(kinds) == 1:
            only = next(iter(kinds))
            if only == "add":
                return "write"
            if only == "delete":
                return "delete"
        return "edit"
    return _KINDS.get(kind, kind)


def _name(kind, item):
    """The agent's own tool name: the item type, ``server/tool`` for MCP, the collab
    tool for a collab call."""
    if kind == "mcp_tool_call":
        parts = [part for part in (item.get("server"), item.get("tool"))
                 if part.__class__ is str]
        return "/".join(parts) or kind
    if kind == "collab_tool_call":
        tool = item.get("tool")
        return tool if tool.__class__ is str else kind
    return kind


def _target(kind, item):
    """What the call acts on: the command, the first path changed, the search's query or
    page, the MCP tool."""
    if kind == "command_execution":
        value = item.get("command")
    elif kind == "file_change":
        changes = item.get("changes")
        first = changes[0] if changes.__class__ is list and changes else None
        value = first.get("path") if first.__class__ is dict else None
    elif kind == "web_search":
        value = item.get("query")
        action = item.get("action")
        if (value.__class__ is not str or not value) and action.__class__ is dict:
            value = action.get("url") or action.get("query")
    elif kind == "mcp_tool_call":
        value = _name(kind, item)
    else:
        value = None
    return value if value.__class__ is str and value else None


def _pick(item, keys, identity):
    """The keys of ``item`` among ``keys`` (in that order), or when ``keys`` is None every
    key but those of ``identity``; None when there are none."""
    if keys is None:
        picked = {key: value for key, value in item.items() if key not in identity}
    else:
        picked = {key: item[key] for key in keys if key in item}
    return picked or None


def _outcome(kind, item):
    """How a tool item ended (docs/model.md#outcomes-per-agent): a command by its status
    and exit code, any item declined as rejected, failed as error, completed (or with no
    status) as success."""
    status = item.get("status")
    if kind == "command_execution":
        if status == "completed":
            code = item.get("exit_code")
            if code.__class__ in (int, float):
                return "success" if code == 0 else "failure"
            return "failure" if _is_raw_number(code) else "unknown"
        if status == "failed":
            return "failure"
    if status == "declined":
        return "rejected"
    if status == "failed":
        return "error"
    if status is None or status == "completed":
        return "success"
    return "unknown"


def _is_raw_number(value):
    """Whether a value is a number beyond what orjson holds (never zero)."""
    return value.__class__ is RawNumber


def _usage(usage):
    """{input, cacheRead, cacheWrite, output} of a turn's ``usage`` (docs/agents.md#stats;
    what they cover: docs/formats.md#codex-usage-and-cost): ``input_tokens`` counts the
    tokens read from the cache and those written to it, which are taken out, so that
    the four add up to ``input_tokens + output_tokens``; a figure that is not a number
    is None, a cache figure that is absent 0."""
    if usage.__class__ is not dict:
        return None
    total = _tokens(usage.get("input_tokens"))
    cached = _tokens(usage.get("cached_input_tokens", 0))
    written = _tokens(usage.get("cache_write_input_tokens", 0))
    return {
        "input": None if None in (total, cached, written) else total - cached - written,
        "cacheRead": cached,
        "cacheWrite": written,
        "output": _tokens(usage.get("output_tokens")),
    }


def own_native(native, before):
    """The json object of a run with its ``usage`` the run's own: each of its figures
    less the thread's total before the run (``before``: that total's figures)."""
    usage = native.get("usage")
    if usage.__class__ is not dict or before is None:
        return native
    own = {name: value - before[name]
           if _tokens(value) is not None and name in before else value
           for name, value in usage.items()}
    return {**native, "usage": own}


def _tokens(value):
    return value if value.__class__ in (int, float) else None


def _quote(text):
    """Stream text (or a value that should have been text) for a message."""
    return quote(text if text.__class__ is str else repr(text))


def _note(check, message, event):
    return Note(check=check, message=message, source=event.source, line=event.line)


# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "each run is the SDK's Turn, "
            '{"items":[...],"finalResponse":...,"usage":...}: '
            "the items completed in the run, its answer and turn.completed's usage; a failed run "
            "prints no line, as the SDK throws.",
    "result": "the answer is the run's last agent_message (the SDK's finalResponse), known only "
              "at the run's end. --live prints every agent_message.",
    "text": "command_execution is shell, file_change write, delete or edit, mcp_tool_call mcp, "
            "web_search webSearch, todo_list updateTodos, collab_tool_call task.",
    "tools": "call_id is the item id, name the item type (server/tool for MCP), args and result "
             "the item's fields (command; exit_code and aggregated_output; ...), duration_ms null "
             "(the stream has no clock).",
    "validate": "a FILE is checked whole, never in parts: some of its findings are made once "
                "for the whole input.",
    "stats": "the figures are those of turn.completed (tokens from its usage); it reports no "
             "duration, no model and no cost.",
    "run": "its run is over at turn.completed or turn.failed.",
    "markdown": "the stream holds no prompt and no clock (no Started, no call durations); thinking"
                " is the reasoning items.",
    "html": "the stream holds no prompt and no clock (no Started, no call durations); thinking is "
            "the reasoning items.",
}


FORMAT = Format(
    name=NAME,
    title="Codex CLI",
    invocation="codex exec --json",
    decides=decides,
    may_decide=may_decide,
    markers=markers,
    run_starts=[(("type", "thread.started"),), (("type", "turn.started"),)],
    reader=Reader,
    checks=CHECKS,
    run_end="a turn.completed or turn.failed event",
    splits_between=splits_between,
    split_needle=SPLIT_NEEDLE,
    refuses=lambda data: OLD_FORMAT if old_format(data) else None,
    running_total="thread",
    own_native=own_native,
    help=HELP,
    result_text=result_text,
    interchange=("codex", "openai"),
    order=30,
)
