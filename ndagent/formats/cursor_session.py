"""Cursor's agent transcripts: ``~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl``
(docs/agents.md#session-files, docs/formats.md#cursor-transcripts).

Rows ``{role, message: {content: [...]}}`` with no type, id, time or usage, and (since
2026-07) ``{"type": "turn_ended", "status": ...}``.  A run goes from one user row to its
``turn_ended``, or to the next user row.  Tool calls have no id and no result: each is
a call whose outcome is not recorded (``unknown``)."""

import os

from ndagent.formats._session import SessionReader, between, store_folder, string
from ndagent.formats.base import Format, first_string
from ndagent.model import Note, Text, ToolEnd, ToolStart

NAME = "cursor_session"
AGENT = "cursor"
TURN_ENDED = "turn_ended"
ROLES = ("user", "assistant")

CHECKS = {
    "row": ("error", "a line is neither a role row nor turn_ended"),
    "tool-use": ("error", "a tool_use has no name or no object input"),
    "no-turn-ended": ("info", "no turn_ended in the whole file (an older version)"),
}

_KINDS = {"Read": "read", "Write": "write", "StrReplace": "edit", "Delete": "delete",
          "Grep": "grep", "Glob": "glob", "Shell": "shell", "WebSearch": "webSearch",
          "WebFetch": "webFetch", "TodoWrite": "updateTodos", "Task": "task",
          "CallMcpTool": "mcp"}
_TARGET_KEYS = ("path", "command", "pattern", "glob_pattern", "search_term", "url")
_REDACTED = "[REDACTED]"


def may_decide(kind):
    return kind is None or kind == TURN_ENDED


def decides(data):
    """A transcript row: no type, a role, an object message (a stream's events always
    have a type); or a turn_ended with its status."""
    kind = data.get("type")
    if kind is None:
        return data.get("role") in ROLES and data.get("message").__class__ is dict
    return kind == TURN_ENDED and data.get("status").__class__ is str


def refuses_text(start):
    """The older transcripts are plain text, each turn headed by a line ``user:`` or
    ``assistant:``; ndagent reads the JSONL ones only."""
    if start.strip() == b"user:":
        return "a Cursor text transcript (.txt), not supported"
    return None


def kind_of(name):
    if name is None:
        return "function"
    if name.startswith("mcp_"):
        return "mcp"
    return _KINDS.get(name, name)


def _texts(message):
    content = message.get("content") if message.__class__ is dict else None
    if content.__class__ is str:
        return [content]
    if content.__class__ is not list:
        return []
    return [block["text"] for block in content if block.__class__ is dict
            and block.get("type") == "text" and block.get("text").__class__ is str]


def prompt_of(message):
    text = "\n".join(_texts(message))
    query = between(text, "<user_query>", "</user_query>")
    return (text if query is None else query).strip()


def without_thinking(text):
    """A text without the ``[REDACTED]`` stub that stands for the thinking left out."""
    text = text.removesuffix("\n\n" + _REDACTED)
    return "" if text.strip() == _REDACTED else text


class Reader(SessionReader):
    """The runs of one transcript."""

    AGENT = AGENT

    def __init__(self, source, checks=False, needs=None):
        super().__init__(source, checks, needs)
        self.project = store_folder(source, "projects")
        self.answer = []
        self.turn_ended = False
        self.first = None

    def event(self, item):
        data = item.data
        out = []
        if self.first is None:
            self.first = item
        role = data.get("role")
        if item.type == TURN_ENDED:
            self.turn_ended = True
            if self.run is not None:
                status = string(data.get("status"))
                if status == "success":
                    self._end(out, "ok")
                else:
                    self._end(out, "failed", string(data.get("error")) or status or "error")
        elif role == "user" and data.get("message").__class__ is dict:
            if self.run is not None:
                self._end(out, "ok")
            self.begin(item, prompt_of(data["message"]), None, out)
        elif role == "assistant" and data.get("message").__class__ is dict:
            if self.run is None:
                self.begin(item, None, None, out, announced=False)
            self._assistant(item, data["message"], out)
        elif self.checks:
            out.append(Note(check="row", message="neither a role row nor turn_ended",
                            source=item.source, line=item.line))
        if self.run is not None:
            self.run.seen(item, None)
        return out

    def _assistant(self, item, message, out):
        run = self.run
        for text in _texts(message):
            text = without_thinking(text)
            if text.strip():
                self.answer.append(text)
                out.append(Text(text, str(item.line), item.source, item.line))
        content = message.get("content")
        if content.__class__ is not list:
            return
        for index, block in enumerate(content):
            if block.__class__ is not dict or block.get("type") != "tool_use":
                continue
            name, args = string(block.get("name")), block.get("input")
            if self.checks and (name is None or args.__class__ is not dict):
                out.append(Note(check="tool-use", message="a tool_use without its name or "
                                                          "an object input",
                                source=item.source, line=item.line))
            fields = {"call_id": f"{item.line}:{index}", "kind": kind_of(name), "name": name,
                      "args": args, "target": first_string(args, _TARGET_KEYS),
                      "source": item.source, "line": item.line}
            out.append(ToolStart(**fields))
            self.call_ended(run, ToolEnd(**fields, outcome="unknown"), out)

    def _end(self, out, outcome, failure=None):
        # The answer is joined here, once (at each text, a long turn took time in the
        # square of its rows).
        answer = "\n\n".join(self.answer) if self.answer else None
        self.answer = []
        self.end(outcome, out, failure=failure, answer=answer)

    def finish(self):
        out = []
        if self.run is not None:
            self._end(out, "open")
        if self.checks and not self.turn_ended and self.first is not None:
            out.append(Note(check="no-turn-ended", message="no turn_ended in the file (an "
                                                           "older version of Cursor)",
                            source=self.first.source, line=self.first.line))
        return out


def stores(environ, home):
    """``~/.cursor/projects``: each project's ``agent-transcripts`` are below it."""
    return [os.path.join(home, ".cursor", "projects")]


FORMAT = Format(
    name=NAME,
    agent=AGENT,
    form="session",
    title="Cursor agent transcripts",
    invocation="~/.cursor/projects/PROJECT/agent-transcripts/ID/ID.jsonl",
    decides=decides,
    may_decide=may_decide,
    markers=lambda needs: None,
    run_starts=[(("role", "user"),)],
    reader=Reader,
    checks=CHECKS,
    run_end="turn_ended",
    refuses_text=refuses_text,
    stores=stores,
    order=113,
)
