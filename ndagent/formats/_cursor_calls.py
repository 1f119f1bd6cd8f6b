"""The tool calls of the Cursor Agent CLI's stream: the tool object inside a
``tool_call`` event, its kind, arguments, target and outcome (docs/formats.md#cursor-agent-cli).
The one module, beside ``cursor``, that knows them."""

# The keys under a tool's `result` that say how the call ended.
OUTCOMES = ("success", "failure", "permissionDenied", "rejected", "error")

_SUFFIX = "ToolCall"

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
