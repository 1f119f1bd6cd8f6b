"""What the Cursor Agent stream-json format means: the one module that knows it.

Tool kinds (the key of ``tool_call`` ending in ``ToolCall``, or ``function``), tool
outcomes, where runs begin and end, and how the assistant's answer is rebuilt.  The
commands ask this module and never look into events for these things themselves.
See FORMAT.md in the project's specification for the sources of each rule.
"""

from collections import OrderedDict
from sys import getsizeof

__all__ = [
    "ACTIONS",
    "Answer",
    "CallPairer",
    "JSON_KEY_ORDER",
    "OUTCOMES",
    "OUTCOME_SUFFIXES",
    "MAX_OPEN_BYTES",
    "MAX_OPEN_CALLS",
    "Run",
    "Runs",
    "ToolCall",
    "assistant_text",
    "call_id",
    "is_failure",
    "json_format",
    "json_size",
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
    def args_target(self):
        """The target as the args alone name it (None for a function tool, named beside
        them): what a completed call without args takes from its started one."""
        if self.kind == "mcp":
            return self.name
        return _target_in(self.kind, self.args)

    @property
    def target(self):
        """What the call acts on, for people (`text -v`, the `tools` TSV): the path,
        command, pattern, query or url, the tool name of an mcp or function tool; None
        when the event does not say.  A call denied before it had args may still name
        its target in the outcome (``permissionDenied.command``), so that is looked at
        second."""
        if self.kind in ("mcp", "function"):
            return self.name
        found = _target_in(self.kind, self.args)
        return found if found is not None else _target_in(self.kind, self.result)

    def kept(self):
        """This call with only what the properties above read (args, name, result): what
        a command keeps of a started call until it completes."""
        body = self.body
        return ToolCall(self.kind, {key: body[key] for key in (self._args_key, "name", "result")
                                    if key in body})

    def with_args(self, args):
        """This call, given ``args`` (its started event's) when it has none of its own:
        a completed event may lack them."""
        if args is None or self.args is not None:
            return self
        return ToolCall(self.kind, {**self.body, self._args_key: args})


def _target_in(kind, place):
    """The first string under one of ``kind``'s target keys in ``place``, or None."""
    if type(place) is dict:
        for key in _TARGET_KEYS.get(kind, ()):
            value = place.get(key)
            if type(value) is str:
                return value
    return None


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


# The bounds on what a command keeps of the tool calls open at once (CallPairer): a
# stream may start calls and never complete them, a million, or 20 000 with 50 KB of
# arguments each.  The count also bounds the fixed cost of each call kept.
MAX_OPEN_CALLS = 100_000
MAX_OPEN_BYTES = 32 << 20
# A call_id longer than this is kept as a 16-byte digest of it (real ones have about 85
# characters).
LONG_CALL_ID = 128


class CallPairer:
    """Pairs the start of each tool call with its end, by call_id, in bounded memory.

    For each call started and not yet completed it keeps only what the caller gives
    it (a value, and what it costs in bytes, estimated once: ``sys.getsizeof`` of a
    string, ``json_size`` of a JSON value), and the call_id, or a digest of it when it
    is longer than ``LONG_CALL_ID``.  When more than ``max_calls`` calls are open, or
    their bytes pass ``max_bytes``, the oldest are dropped (a call of more than
    ``max_bytes`` alone, at once) and handed back to the caller, who reports them.  It
    knows nothing of any agent's events: keys, values and sizes only."""

    max_calls = MAX_OPEN_CALLS
    max_bytes = MAX_OPEN_BYTES

    def __init__(self):
        # key → (value, size), in start order; an OrderedDict drops its first item in
        # constant time, where a dict scans the holes left by the items dropped before.
        self._open = OrderedDict()
        self._bytes = 0

    def __len__(self):
        return len(self._open)

    def start(self, key, value, size):
        """Keep ``value`` (not None; of about ``size`` bytes) for the call ``key``, which
        starts.  ``(earlier, dropped)``: the value of an open call of the same key, which can no
        longer complete (or None), and the values dropped to stay within the bounds,
        oldest first (usually none)."""
        if len(key) > LONG_CALL_ID:
            key = _digest(key)
        size += getsizeof(key)
        calls = self._open
        earlier = calls.pop(key, None)
        if earlier is not None:
            self._bytes -= earlier[1]
            earlier = earlier[0]
        if size > self.max_bytes:  # alone beyond the bound: the others may stay
            return earlier, (value,)
        calls[key] = (value, size)
        self._bytes += size
        if len(calls) <= self.max_calls and self._bytes <= self.max_bytes:
            return earlier, ()
        dropped = []
        while len(calls) > self.max_calls or self._bytes > self.max_bytes:
            kept, kept_size = calls.popitem(last=False)[1]
            self._bytes -= kept_size
            dropped.append(kept)
        return earlier, dropped

    def complete(self, key):
        """The value of the open call ``key``, which completes; None when it is not open."""
        if len(key) > LONG_CALL_ID:
            key = _digest(key)
        found = self._open.pop(key, None)
        if found is None:
            return None
        self._bytes -= found[1]
        return found[0]

    def close(self):
        """The values of the calls still open, in start order; none is kept after."""
        values = [value for value, _ in self._open.values()]
        self._open.clear()
        self._bytes = 0
        return values

    @property
    def overflow(self):
        """Why calls are dropped, for messages: 'too many tool calls open at once (kept:
        at most 100000 calls and 32 MiB)'."""
        size = self.max_bytes
        size = f"{size >> 20} MiB" if size % (1 << 20) == 0 else f"{size} bytes"
        return (f"too many tool calls open at once (kept: at most {self.max_calls} calls "
                f"and {size})")


def _digest(key):
    from hashlib import blake2b

    return blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def json_size(value):
    """About how many bytes a decoded JSON value holds in Python, from its JSON, cheaply
    (C does the work) and erring high: the length of the JSON, four times that when it
    is not all ASCII (Python may keep a string at 4 bytes a character), and 80 bytes for
    each comma and colon in it (one or two for each value in an object or array)."""
    import ndagent.decoder  # quicker, in a function, than "from ... import"

    data = ndagent.decoder.encode_line(value)
    size = len(data) if data.isascii() else 4 * len(data)
    return size + 80 * (data.count(b",") + data.count(b":") + 1)


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
