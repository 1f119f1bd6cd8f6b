"""What the Cursor Agent stream-json format means: the one module that knows it.

Tool kinds (the key of ``tool_call`` ending in ``ToolCall``, or ``function``), tool
outcomes, where runs begin and end, and how the assistant's answer is rebuilt.  The
commands ask this module and never look into events for these things themselves.
See FORMAT.md in the project's specification for the sources of each rule.
"""

from collections import OrderedDict

__all__ = [
    "ACTIONS",
    "Answer",
    "JSON_KEY_ORDER",
    "OUTCOMES",
    "OUTCOME_SUFFIXES",
    "MAX_OPEN_CALLS",
    "OpenCalls",
    "Run",
    "Runs",
    "ToolCall",
    "assistant_text",
    "call_id",
    "is_failure",
    "json_format",
    "tool_call",
]

# The key order of the `json` output format's one object.
JSON_KEY_ORDER = (
    "type", "subtype", "is_error", "duration_ms", "duration_api_ms",
    "result", "session_id", "request_id",
)

# The keys under a tool's `result` that say how the call ended.
OUTCOMES = ("success", "failure", "permissionDenied", "rejected", "error")

_SUFFIX = "ToolCall"

# The `text` format's line for each tool kind; any other kind is "Used tool".
ACTIONS = {
    "read": "Read file",
    "write": "Created new file",
    "edit": "Edited file",
    "shell": "Ran terminal command",
    "delete": "Deleted file",
    "ls": "Listed directory",
    "updateTodos": "Updated to-do list",
    "function": "Called tool",
    "glob": "Searched for files",
    "grep": "Searched file contents",
    "semSearch": "Searched codebase",
    "webFetch": "Fetched web page",
    "webSearch": "Searched the web",
    "mcp": "Called MCP tool",
    "task": "Ran subagent",
}

# The `text` format's suffix for each outcome other than success.
OUTCOME_SUFFIXES = {
    "failure": " (failed)",
    "permissionDenied": " (denied)",
    "rejected": " (rejected)",
    "error": " (error)",
    "unknown": " (unknown)",
}

# Where each kind names what it acts on: the keys to look for, in order.  mcp and
# function tools are named by their tool name instead (``ToolCall.name``).
_TARGET_KEYS = {
    "read": ("path",),
    "write": ("path",),
    "edit": ("path",),
    "delete": ("path",),
    "ls": ("path",),
    "shell": ("command",),
    "grep": ("pattern",),
    "glob": ("globPattern",),
    "semSearch": ("query",),
    "webSearch": ("query", "searchTerm"),
    "webFetch": ("url",),
}


class ToolCall:
    """The tool inside a ``tool_call`` event: its kind, its object, and how it ended."""

    __slots__ = ("kind", "body")

    def __init__(self, kind, body):
        self.kind = kind
        self.body = body

    @property
    def args(self):
        """The call's arguments, or None when the event has none (denied, rejected): the
        ``args`` object, or for a function tool its ``arguments`` (often a string)."""
        value = self.body.get(self._args_key)
        return value if type(value) is dict or self.kind == "function" else None

    @property
    def _args_key(self):
        return "arguments" if self.kind == "function" else "args"

    @property
    def outcome(self):
        """``success``, ``failure``, ``permissionDenied``, ``rejected``, ``error``;
        ``unknown`` for a result of another shape; None when there is no result yet."""
        result = self.body.get("result")
        if result is None:
            return None
        if type(result) is dict:
            for name in OUTCOMES:
                if name in result:
                    return name
        return "unknown"

    @property
    def completed_status(self):
        """How the call of a completed event ended: its outcome, or ``unknown`` when the
        event holds no result."""
        return self.outcome or "unknown"

    @property
    def result(self):
        """The object under the outcome key, or None."""
        outcome = self.outcome
        if outcome in OUTCOMES:
            return self.body["result"][outcome]
        return None

    @property
    def name(self):
        """The tool's own name for MCP and function tools, else None."""
        if self.kind == "function":
            value = self.body.get("name")
        elif self.kind == "mcp":
            args = self.args or {}
            value = args.get("name") or args.get("toolName")
        else:
            return None
        return value if type(value) is str else None

    @property
    def action(self):
        """The `text` format's line for this kind: ``Read file``, ..., ``Used tool``."""
        return ACTIONS.get(self.kind, "Used tool")

    @property
    def target(self):
        """What the call acts on, for people (`text -v`, the `tools` TSV): the path,
        command, pattern, query or url, the tool name of an mcp or function tool; None
        when the event does not say.  A call denied before it had args may still name
        its target in the outcome (``permissionDenied.command``), so that is looked at
        second."""
        if self.kind in ("mcp", "function"):
            return self.name
        for place in (self.args, self.result):
            if type(place) is dict:
                for key in _TARGET_KEYS.get(self.kind, ()):
                    value = place.get(key)
                    if type(value) is str:
                        return value
        return None

    def with_args(self, args):
        """This call, given ``args`` (its started event's) when it has none of its own:
        a completed event may lack them."""
        if args is None or self.args is not None:
            return self
        return ToolCall(self.kind, {**self.body, self._args_key: args})


def tool_call(data):
    """The ToolCall of a ``tool_call`` event's data, or None when it names no single tool.

    The kind is the one key ending in ``ToolCall`` (``readToolCall`` is ``read``): since
    2026.07 the object has sibling keys too, so the first key is not it.  A tool object
    under ``function`` is kind ``function``."""
    calls = data.get("tool_call")
    if type(calls) is not dict:
        return None
    found = None
    for key, body in calls.items():
        if key.endswith(_SUFFIX) and len(key) > len(_SUFFIX) and type(body) is dict:
            if found is not None:
                return None
            found = ToolCall(key[:-len(_SUFFIX)], body)
    if found is None and type(calls.get("function")) is dict:
        found = ToolCall("function", calls["function"])
    return found


def call_id(data):
    """The ``call_id`` that links a ``tool_call`` event's started and completed, or None
    when it is not a string (it may hold a newline: ``"call_...\\nfc_..."``)."""
    value = data.get("call_id")
    return value if type(value) is str else None


# The most tool calls a command keeps track of while they are open.
MAX_OPEN_CALLS = 100_000


class OpenCalls(OrderedDict):
    """The tool calls started and not yet completed, by call_id, in start order.

    A stream may start calls and never complete them (a million, in a hostile one), so
    at most ``limit`` are kept: ``add`` drops the oldest beyond that and returns it as
    ``(call_id, value)``, and calls ``warn(where, message)`` the first time, so that the
    command says so once."""

    limit = MAX_OPEN_CALLS

    def __init__(self, warn):
        super().__init__()
        self.warn = warn
        self.full = False

    def add(self, key, value, where):
        """Keep ``value`` for the call ``key``, started at ``where``; what was dropped."""
        self[key] = value
        if len(self) <= self.limit:
            return None
        if not self.full:
            self.full = True
            self.warn(where, f"more than {self.limit} tool calls open at once: "
                             "the oldest are no longer tracked")
        return self.popitem(last=False)


def assistant_text(data):
    """The text of an ``assistant`` (or ``user``) event: its content's texts, joined."""
    message = data.get("message")
    if message.__class__ is not dict:
        return ""
    content = message.get("content")
    if content.__class__ is not list:
        return content if content.__class__ is str else ""
    if len(content) == 1:  # the usual case, made quick
        part = content[0]
        text = part.get("text") if part.__class__ is dict else None
        return text if text.__class__ is str else ""
    return "".join(part["text"] for part in content if part.__class__ is dict
                   and part.get("text").__class__ is str)


# The events with which runs begin and end: every command needs them decoded.
RUN_BOUNDARIES = frozenset({"system", "result"})

_SELECTIONS = {}


def selection(want):
    """The decoder's Selection for event names (``TYPE``, or ``TYPE/SUBTYPE`` for one
    subtype only), the run boundaries added."""
    want = frozenset(want) | RUN_BOUNDARIES
    found = _SELECTIONS.get(want)
    if found is None:
        from ndagent.decoder import Selection

        markers = []
        for name in sorted(want):
            kind, _, subtype = name.partition("/")
            markers.append((("type", kind), ("subtype", subtype)) if subtype
                           else (("type", kind),))
        found = _SELECTIONS[want] = Selection(markers)
    return found


def begins_run(data):
    """Whether an event's data is ``system/init``, with which a run begins."""
    return data.get("type") == "system" and data.get("subtype") == "init"


def is_failure(data):
    """A ``result`` event that reports a failed run: ``is_error`` true or not ``success``."""
    return data.get("is_error") is True or data.get("subtype") != "success"


def json_format(data):
    """A ``result`` event's object in the `json` format's key order, other keys after."""
    ordered = {key: data[key] for key in JSON_KEY_ORDER if key in data}
    if len(ordered) < len(data):
        for key, value in data.items():
            if key not in ordered:
                ordered[key] = value
    return ordered


class Run:
    """One agent run: where it began, and its ``result`` event once seen."""

    __slots__ = ("source", "line", "result")

    def __init__(self, source, line):
        self.source = source
        self.line = line
        self.result = None


class Runs:
    """Splits a stream into runs.  A run begins at ``system/init``, or at the first event
    after a ``result``, and ends at its ``result``; input may hold several runs.

    ``feed`` takes each Event or Skipped item and returns ``(ended, begun)``: the run
    that the item ended without a result (or None), and the run the item began (or None).
    A ``result`` event ends its run: the caller sees it as ``current.result``.  (It is
    called for every event, hence the early return for the common case.)"""

    def __init__(self):
        self.current = None

    def feed(self, item):
        current = self.current
        kind = item.type
        if kind == "system" and begins_run(item.data):
            ended = current if current is not None and current.result is None else None
            current = None
        elif current is not None and current.result is None:
            if kind == "result":
                current.result = item
            return None, None
        else:
            ended = None
        current = self.current = Run(item.source, item.line)
        if kind == "result":
            current.result = item
        return ended, current

    def finish(self):
        """The run left open at the end of input, if any (it has no result)."""
        current = self.current
        self.current = None
        return current if current is not None and current.result is None else None


class Answer:
    """Rebuilds the assistant's answer of one run, and checks it against ``result``.

    With ``--stream-partial-output`` text arrives twice: as deltas (``timestamp_ms`` and
    no ``model_call_id``), then again as whole segments.  Whether the run is partial is
    decided from its first ``assistant`` event, so the text can be streamed; a partial
    run counts only its deltas.  Only a digest of the text is kept, never the whole
    text: pieces are hashed once they add up to 64 KiB, or when the digest is asked for."""

    __slots__ = ("partial", "length", "ends_with_newline", "_pieces", "_waiting", "_digest")

    def __init__(self):
        self.partial = None
        self.length = 0
        self.ends_with_newline = False
        self._pieces = []
        self._waiting = 0
        self._digest = None

    def add(self, data):
        """The part of an ``assistant`` event's data that belongs to the answer."""
        partial = self.partial
        if partial is None:
            partial = self.partial = "timestamp_ms" in data and "model_call_id" not in data
        if partial and ("timestamp_ms" not in data or "model_call_id" in data):
            return ""  # a flush of text that came as deltas
        text = assistant_text(data)
        if text:
            self.length += len(text)
            self.ends_with_newline = text[-1] == "\n"
            self._pieces.append(text)
            self._waiting += len(text)
            if self._waiting > 1 << 16:
                self._hash_pieces()
        return text

    def _hash_pieces(self):
        if self._digest is None:
            from hashlib import blake2b

            self._digest = blake2b(digest_size=16)
        self._digest.update("".join(self._pieces).encode("utf-8", "surrogatepass"))
        self._pieces.clear()
        self._waiting = 0

    def digest(self):
        self._hash_pieces()
        return self._digest.digest()

    def matches(self, text):
        """Whether ``text`` (the result event's) equals the rebuilt answer."""
        if text.__class__ is not str or len(text) != self.length:
            return False
        other = Answer()
        other.add({"message": {"content": [{"text": text}]}})
        return other.digest() == self.digest()
