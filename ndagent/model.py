"""The common event model: what every format module makes of its agent's events.

The verbs see only these.  Each agent's format module (``ndagent.formats``) reads its
raw events and hands on, in stream order:

- ``RunStart``: a run begins;
- ``Text``: a piece of the assistant's main-thread text as it arrives, each piece once
  (what ``result --live`` prints), with the key of the message it belongs to;
- ``ToolStart`` and ``ToolEnd``: a tool call begins and ends, in the common vocabulary
  of kinds and outcomes below;
- ``Note``: something ``validate`` reports (a check, its severity, a message);
- ``RunEnd``: the run is over, ended by the agent (ok or failed) or cut off.

Every event knows its ``source`` and ``line``.  This module imports no format.
"""

__all__ = [
    "ACTIONS",
    "Answer",
    "KINDS",
    "Note",
    "OUTCOMES",
    "OUTCOME_SUFFIXES",
    "RunEnd",
    "RunStart",
    "Text",
    "ToolEnd",
    "ToolStart",
]

# The tool kinds every format maps its tools onto (Cursor's names); a tool outside them
# keeps its own name as its kind.
KINDS = ("read", "write", "edit", "shell", "delete", "ls", "glob", "grep", "semSearch",
         "webFetch", "webSearch", "mcp", "task", "updateTodos", "function")

# How a tool call ended.  unknown: an end whose outcome cannot be read; pending: no end.
OUTCOMES = ("success", "failure", "permissionDenied", "rejected", "error", "unknown",
            "pending")

# The `text` format's line for each kind; any other kind is "Used tool".
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


class _Event:
    """Fields by name, as slots: the model's events are many and small."""

    __slots__ = ()

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class RunStart(_Event):
    """A run begins: at ``source:line``, of ``agent``; session, model, cwd or None."""

    __slots__ = ("agent", "session_id", "model", "cwd", "source", "line")


class Text(_Event):
    """A piece of main-thread assistant text, as the agent delivers it, never twice:
    ``message`` is the key of the message it belongs to (two messages are told apart
    by it)."""

    __slots__ = ("text", "message", "source", "line")


class ToolStart(_Event):
    """A tool call begins.  ``kind``: the common kind; ``name``: the agent's own tool
    name; ``args``: its arguments (or None); ``target``: what it acts on, for people
    (a path, a command, a pattern, a query, a url, a tool name) or None;
    ``time_ms``: when, in epoch milliseconds, where the stream says."""

    __slots__ = ("call_id", "kind", "name", "args", "target", "session_id",
                 "model_call_id", "parent", "time_ms", "source", "line")


class ToolEnd(_Event):
    """A tool call ends: its ``outcome`` (one of OUTCOMES but pending) and ``result``;
    the fields of ToolStart that the end event tells too (a call may end with no start
    seen: then they are all there is)."""

    __slots__ = ("call_id", "kind", "name", "args", "target", "session_id",
                 "model_call_id", "parent", "time_ms", "outcome", "result", "source",
                 "line")


class Note(_Event):
    """What ``validate`` reports at ``source:line``: a ``check`` (a name in the format's
    or the model's table of checks) and a ``message``."""

    __slots__ = ("check", "message", "source", "line")


class RunEnd(_Event):
    """A run is over.  ``start``: its RunStart.  ``cutoff``: the input ended, or the
    next run began, before the agent ended it; else ``ok`` says how it ended and
    ``failure`` why it failed.  ``answer``: the answer as the agent's own json mode
    reports it (for a cut-off run, what it would have been), or None.  ``native``: the
    agent's own single json object for the run, or None.  ``usage``: {input, cacheRead,
    cacheWrite, output} or None; ``cost_usd``, ``duration_ms``, ``model`` or None.
    ``source``/``line``: where it ended (the end event, or where the input stopped)."""

    __slots__ = ("start", "cutoff", "ok", "failure", "answer", "native", "usage",
                 "cost_usd", "duration_ms", "model", "source", "line")


class Answer:
    """A digest of text as it arrives, to compare with the agent's own answer without
    keeping the text: pieces are hashed once they add up to 64 KiB, or when compared."""

    __slots__ = ("length", "ends_with_newline", "_pieces", "_waiting", "_digest")

    def __init__(self):
        self.length = 0
        self.ends_with_newline = False
        self._pieces = []
        self._waiting = 0
        self._digest = None

    def add(self, text):
        if text:
            self.length += len(text)
            self.ends_with_newline = text[-1] == "\n"
            self._pieces.append(text)
            self._waiting += len(text)
            if self._waiting > 1 << 16:
                self._hash_pieces()

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
        """Whether ``text`` equals the text added."""
        if text.__class__ is not str or len(text) != self.length:
            return False
        other = Answer()
        other.add(text)
        return other.digest() == self.digest()
