"""Claude Code's tool calls: their kinds, what they act on, and how they ended (the agent
is ``claude``; this module declares none)."""


# Claude's tools by common kind (docs/model.md#tool-kinds-per-agent); ``mcp__SERVER__TOOL``
# is mcp, and a tool outside the table keeps its own name as its kind.
_KINDS = {
    "Bash": "shell", "Read": "read", "NotebookRead": "read", "Write": "write", "Edit": "edit",
    "MultiEdit": "edit", "NotebookEdit": "edit", "Glob": "glob", "Grep": "grep", "LS": "ls",
    "WebFetch": "webFetch", "WebSearch": "webSearch", "TodoWrite": "updateTodos",
    "TaskCreate": "updateTodos", "TaskUpdate": "updateTodos", "Task": "task", "Agent": "task",
}
# The API's own tools (``server_tool_use`` blocks).
_SERVER_KINDS = {"web_search": "webSearch", "web_fetch": "webFetch"}

# Where a call names what it acts on, in order.
_TARGET_KEYS = ("file_path", "notebook_path", "command", "pattern", "url", "query")

# How a tool_result with is_error true begins when permission was not given (the CLI
# writes "... to use Bash", "... to write to PATH", "... to edit PATH"), when the user
# refused the call, and when a shell command exited non-zero.
_NOT_GRANTED = ("Claude requested permissions to ", "This command requires approval")
_REFUSED = "The user doesn't want to proceed with this tool use"
_EXIT_CODE = "Exit code "


def kind_of(name, server=False):
    """The common kind of a tool name."""
    if name is None:
        return "function"
    if server:
        return _SERVER_KINDS.get(name, name)
    kind = _KINDS.get(name)
    if kind is not None:
        return kind
    return "mcp" if name.startswith("mcp__") else name


def target_of(kind, name, args):
    """What a call acts on, for people: an MCP tool's name, else the first of its
    path, command, pattern, url or query."""
    if kind == "mcp":
        return name
    if args.__class__ is dict:
        for key in _TARGET_KEYS:
            value = args.get(key)
            if value.__class__ is str:
                return value
    return None


def outcome_of(block, kind):
    """How a tool_result says its call ended (docs/model.md#outcomes-per-agent), as far as
    known at the result: ``result.permission_denials`` comes only at the run's end."""
    if block.get("is_error") is not True:
        return "success"
    text = _result_text(block.get("content"))
    if text.startswith(_NOT_GRANTED) or _says_denied(text):
        return "permissionDenied"
    if text.startswith(_REFUSED):
        return "rejected"
    if kind == "shell" and text.startswith(_EXIT_CODE):
        return "failure"
    return "error"


_PERMISSION, _DENIED = "Permission to use ", " has been denied"


def _says_denied(text):
    """Whether a line of ``text`` says "Permission to use X has been denied" (X one
    character or more).  The first "Permission to use " of each line is tried alone: a
    later one has no ending the first has not.  (A lazy pattern took time in the square
    of a line of many of them.)"""
    if _DENIED not in text:
        return False
    start = text.find(_PERMISSION)
    while start >= 0:
        line_end = text.find("\n", start)
        if line_end < 0:
            line_end = len(text)
        if text.find(_DENIED, start + len(_PERMISSION) + 1, line_end) >= 0:
            return True
        start = text.find(_PERMISSION, line_end)
    return False


def _result_text(content):
    """The text of a tool_result's content: the string, or its first text block's."""
    if content.__class__ is str:
        return content
    if content.__class__ is list:
        for block in content:
            if block.__class__ is dict and block.get("text").__class__ is str:
                return block["text"]
    return ""
