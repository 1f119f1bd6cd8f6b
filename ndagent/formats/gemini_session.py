"""Gemini CLI's chat recordings: ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (since
0.39), or ``session-*.json``, one pretty-printed document rewritten at each update
(docs/agents.md#session-files, docs/formats.md#gemini-chats).

The JSONL form is a metadata line, then messages appended again whenever they change
(the last line of an id wins), ``{"$set": ...}`` updates (``$set.messages`` replaces
the list) and ``{"$rewindTo": id}`` (that message and every later one are removed):
what the messages are is known only at the end of the file, so the runs are made
there.  A run goes from one ``user`` message to the next."""

import os
import re
from bisect import bisect_left
from collections import deque
from sys import getsizeof

import orjson

from ndagent.decoder import Event
from ndagent.formats._session import SessionReader, number, store_folder, string
from ndagent.formats.base import Format, first_string
from ndagent.model import Note, Text, ToolEnd, ToolStart, epoch_ms, json_size

NAME = "gemini_session"
AGENT = "gemini"

MESSAGE_TYPES = frozenset({"user", "gemini", "info", "warning", "error"})
SET, REWIND = "$set", "$rewindTo"
LOGS = "a Gemini logs.json (prompts only), not a session"
# What a Reader keeps of a file's messages until its end, at most.
MAX_MESSAGES_BYTES = 256 << 20

CHECKS = {
    "metadata": ("error", "the first line is not the session's metadata line"),
    "rewind": ("warning", "$rewindTo names no message before it"),
    "message-id": ("error", "a message id appears twice in a whole document"),
    "tool-status": ("warning", "a tool call's status is not one the CLI writes"),
    "no-tokens": ("info", "a gemini message with text or tool calls has no tokens (the CLI "
                          "may attach them later)"),
    "too-many": ("error", "the messages are more than a session is read with"),
}

_STATUSES = frozenset({"validating", "scheduled", "error", "success", "executing", "cancelled",
                       "awaiting_approval"})
_OUTCOMES = {"success": "success", "error": "error", "cancelled": "rejected"}
_KINDS = {"read_file": "read", "read_many_files": "read", "write_file": "write",
          "replace": "edit", "edit": "edit", "run_shell_command": "shell",
          "list_directory": "ls", "glob": "glob", "search_file_content": "grep",
          "grep": "grep", "google_web_search": "webSearch", "web_fetch": "webFetch",
          "write_todos": "updateTodos", "delegate_to_agent": "task"}
_TARGET_KEYS = ("file_path", "absolute_path", "path", "command", "pattern", "query", "url",
                "dir_path")
# A string id as a pretty-printed document holds it (a JSON string: escapes are two bytes).
_ID = re.compile(rb'"id": ("[^"\\]*(?:\\.[^"\\]*)*")')


def may_decide(kind):
    return kind is None or kind in MESSAGE_TYPES


def decides(data):
    """A chat recording's object: the metadata line (no type, sessionId and
    projectHash), an update (``$set``, ``$rewindTo``), or a message (id, timestamp and
    content; none of the stream's ``message``, a transcript's ``uuid``/``sessionId``,
    the stream error's ``severity``)."""
    kind = data.get("type")
    if kind is None:
        if data.get("sessionId").__class__ is str and data.get("projectHash").__class__ is str:
            return True
        return (data.get(SET).__class__ is dict
                or data.get(REWIND).__class__ is str)
    return (kind.__class__ is str and kind in MESSAGE_TYPES and data.get("id").__class__ is str
            and data.get("timestamp").__class__ is str and "content" in data
            and not any(key in data for key in ("message", "uuid", "sessionId", "severity")))


def document(value, text):
    """The records of a whole-document session (before 0.39): the metadata, then each
    message at the line where its object begins in ``text`` (the document's bytes);
    LOGS for a logs.json; None for any other document."""
    if value.__class__ is list and value and all(
            each.__class__ is dict and each.get("type") == "user" and "messageId" in each
            and "sessionId" in each for each in value):
        return LOGS
    if value.__class__ is not dict or value.get("sessionId").__class__ is not str \
            or value.get("projectHash").__class__ is not str \
            or value.get("messages").__class__ is not list:
        return None
    # The messages are records of their own: the metadata keeps only their count.
    metadata = {**value, "messages": len(value["messages"])}
    records = [(1, metadata)]
    ids = _id_positions(text)
    at, line, last = 0, 1, -1
    for message in value["messages"]:
        found = -1
        if message.__class__ is dict and message.get("id").__class__ is str:
            positions = ids.get(orjson.dumps(message["id"]), ())
            index = bisect_left(positions, at)
            found = positions[index] if index < len(positions) else -1
        # The same id found again (a duplicate id) begins where it began.
        if found >= 0 and found != last:
            begins = text.rfind(b"{", at, found)
            begins = found if begins < 0 else begins
            line += text.count(b"\n", at, begins)
            at, last = begins, found
        records.append((line, message))
    return records


def _id_positions(text):
    """Where each ``"id": "..."`` is in a document's bytes, {the id as orjson writes it:
    [its offsets, in order]}, made in one pass: an id written otherwise (``\\u00e9``)
    is in none, and a search of the rest of the document for each would be quadratic."""
    found = {}
    for match in _ID.finditer(text):
        found.setdefault(match.group(1), []).append(match.start())
    return found


def content_text(content):
    """A message's text: its content string, or its parts' text joined."""
    if content.__class__ is str:
        return content
    if content.__class__ is dict:
        content = [content]
    if content.__class__ is not list:
        return ""
    return "".join(part["text"] if part.__class__ is dict and part.get("text").__class__ is str
                   else part if part.__class__ is str else "" for part in content)


class Reader(SessionReader):
    """The runs of one chat recording, made at its end."""

    AGENT = AGENT

    def __init__(self, source, checks=False, needs=None):
        super().__init__(source, checks, needs)
        self.project = store_folder(source, "tmp")
        # id -> (item, message, the bytes it counts in ``bytes``), in order (a dict keeps
        # it).
        self.messages = {}
        self.bytes = 0
        self.objects = 0
        self.whole = False  # a whole document (its ids must be unique)
        self.notes = []
        self.overflow = False
        # The messages a rewind took back (their calls were made, and billed), [(id,
        # model, usage)]: the run of the next message counts them, {its id: them}.  Deques:
        # the lists of the messages a rewind takes back join at either end, the shorter
        # into the longer (each copied whole would be quadratic in a chain of rewinds).
        self.rewound = deque()
        self.carried = {}

    def event(self, item):
        data = item.data
        self.objects += 1
        if item.type is None:
            self._update(item, data)
            return []
        key = data.get("id")
        if key.__class__ is not str:
            return []
        if self.checks and self.whole and key in self.messages:
            self._note(item, "message-id", "a message id appears twice in the document")
        old = self.messages.pop(key, None)  # appended again: it moves to where it is now
        if old is not None:
            self.bytes -= old[2]
        size = json_size(data) + getsizeof(key)
        if self.bytes + size > MAX_MESSAGES_BYTES:
            if not self.overflow:
                self.overflow = True
                self._note(item, "too-many", "more messages than are kept in memory "
                                             f"({MAX_MESSAGES_BYTES >> 20} MiB): the later "
                                             "are not read")
            return []
        self.bytes += size
        self.messages[key] = (item, data, size)
        if self.rewound:
            self.carried[key], self.rewound = self.rewound, deque()
        return []

    def _update(self, item, data):
        if data.get("sessionId").__class__ is str and data.get("projectHash").__class__ is str:
            self.session_id = data["sessionId"]
            messages = data.get("messages")
            # ``document`` leaves the count of messages in the metadata it makes; a
            # document written compact is one line, its messages in it.
            self.whole = messages.__class__ is int or messages.__class__ is list
            if messages.__class__ is list:
                for message in messages:
                    if message.__class__ is dict:
                        self.event(Event(item.source, item.line, message))
            return
        if self.checks and self.objects == 1:
            self._note(item, "metadata", "the first line is not the session's metadata line")
        update = data.get(SET)
        if update.__class__ is dict and update.get("messages").__class__ is list:
            self.messages.clear()
            self.bytes = 0
            # Not counted (0 bytes): the line that holds them bounds them.
            for message in update["messages"]:
                if message.__class__ is dict and message.get("id").__class__ is str:
                    self.messages[message["id"]] = (item, message, 0)
        target = data.get(REWIND)
        if target.__class__ is str:
            if target not in self.messages:
                if self.checks:
                    self._note(item, "rewind", "$rewindTo names no message before it")
                return
            self._rewind(target)

    def _rewind(self, target):
        """Take back the message ``target`` and every later one, in their order: those
        are popped from the end (a copy of the ids to find it would cost as much as all
        the messages at each rewind)."""
        taken = []
        key = None
        while key != target:
            key, (_, message, size) = self.messages.popitem()
            self.bytes -= size
            taken.append((key, message))
        for key, message in reversed(taken):
            self._carry(self.carried.pop(key, None))
            usage = _usage(message.get("tokens"))
            if usage is not None:
                self.rewound.append((key, string(message.get("model")), usage))

    def _carry(self, carried):
        """Add what a message taken back carried (None: nothing) after ``rewound``."""
        if not carried:
            return
        if not self.rewound:
            self.rewound = carried
        elif len(carried) > len(self.rewound):
            carried.extendleft(reversed(self.rewound))
            self.rewound = carried
        else:
            self.rewound.extend(carried)

    def _note(self, item, check, message):
        self.notes.append(Note(check=check, message=message, source=item.source,
                               line=item.line))

    def finish(self):
        out = self.notes
        self.notes = []
        for item, message, _ in self.messages.values():
            self._message(item, message, out)
        self.messages.clear()
        if self.run is not None:
            self._end(out)
        return out

    def _message(self, item, message, out):
        kind = message.get("type")
        timestamp = string(message.get("timestamp"))
        if kind == "user":
            if self.run is not None:
                self._end(out)
            self.begin(item, content_text(message.get("content")), timestamp, out)
        elif self.run is None:
            self.begin(item, None, timestamp, out, announced=False)
        run = self.run
        for key, model, usage in self.carried.pop(message.get("id"), ()):
            _count(run, key, model, usage)
        if kind == "user":
            return
        run.seen(item, timestamp)
        if kind == "error":
            run.failure = content_text(message.get("content")) or "error"
        if kind != "gemini":
            return
        run.count_model(string(message.get("model")))
        tokens = message.get("tokens")
        usage = _usage(tokens)
        if usage is not None:
            _count(run, message.get("id"), string(message.get("model")), usage)
        calls = message.get("toolCalls")
        text = content_text(message.get("content"))
        if self.checks and tokens.__class__ is not dict and (text or calls):
            out.append(Note(check="no-tokens", message="a gemini message without tokens",
                            source=item.source, line=item.line))
        if calls.__class__ is list:
            for call in calls:
                if call.__class__ is dict:
                    self._call(item, message, call, out)
            if calls:
                run.answered = False
        if text.strip():
            run.answer = text
            run.answered = True
            out.append(Text(text, string(message.get("id")), item.source, item.line))

    def _call(self, item, message, call, out):
        name = string(call.get("name"))
        args = call.get("args")
        kind = _KINDS.get(name, name)
        target = first_string(args, _TARGET_KEYS)
        status = call.get("status")
        if self.checks and status not in _STATUSES:
            out.append(Note(check="tool-status", message="a tool call's status is not one "
                                                         "the CLI writes",
                            source=item.source, line=item.line))
        fields = {"call_id": string(call.get("id")), "kind": kind, "name": name, "args": args,
                  "target": target, "session_id": self.session_id,
                  "model_call_id": string(message.get("id")),
                  "time_ms": epoch_ms(call.get("timestamp")), "source": item.source,
                  "line": item.line}
        out.append(ToolStart(**fields))
        self.call_ended(self.run, ToolEnd(**fields, outcome=_OUTCOMES.get(status, "pending"),
                                          result=_response(call.get("result"))), out)

    def _end(self, out):
        run = self.run
        if run.failure is not None:
            self.end("failed", out, failure=run.failure)
        else:
            self.end("ok" if run.answered else "open", out)


def _usage(tokens):
    """The four figures of a message's tokens (input less the cached), or None."""
    if tokens.__class__ is not dict:
        return None
    given, cached = number(tokens.get("input")) or 0, number(tokens.get("cached")) or 0
    return {"input": given - cached, "cacheRead": cached, "cacheWrite": None,
            "output": number(tokens.get("output")) or 0}


def _count(run, key, model, usage):
    """Count a message's usage in its run, by its id (a session resumed from a legacy
    document copies every message into its JSONL file: the same ids)."""
    if run.parts is None:
        run.parts = {}
    run.parts[key] = (model, usage)


def _response(result):
    """The ``functionResponse.response`` of a call's result parts, or the result."""
    if result.__class__ is list:
        for part in result:
            response = part.get("functionResponse") if part.__class__ is dict else None
            if response.__class__ is dict and "response" in response:
                return response["response"]
    return result


def stores(environ, home):
    """``.gemini/tmp`` in ``$GEMINI_CLI_HOME`` (which stands for the home), else in the
    home."""
    return [os.path.join(environ.get("GEMINI_CLI_HOME") or home, ".gemini", "tmp")]


FORMAT = Format(
    name=NAME,
    agent=AGENT,
    form="session",
    title="Gemini CLI chats",
    invocation="~/.gemini/tmp/PROJECT/chats/session-*.jsonl",
    decides=decides,
    may_decide=may_decide,
    markers=lambda needs: None,
    run_starts=[(("type", "user"),)],
    reader=Reader,
    checks=CHECKS,
    run_end="its reply",
    document=document,
    stores=stores,
    order=112,
)
