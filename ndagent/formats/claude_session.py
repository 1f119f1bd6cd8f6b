"""Claude Code's transcripts: ``~/.claude/projects/<project>/<session>.jsonl`` and the
subagent files beside them (docs/agents.md#session-files, docs/formats.md#claude-code-transcripts).

Each line is an envelope (``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``,
``cwd``) around what the stream writes: one assistant content block per line, with the
message's ``usage`` repeated on each.  A run goes from one typed prompt to the next;
the file records no outcome, which is inferred: failed, interrupted, ok (the turn's
``turn_duration``, the Stop hook's summary, a later prompt, ``end_turn``) or open."""

import os

from ndagent.formats._claude_calls import kind_of, outcome_of, target_of
from ndagent.formats._session import SessionReader, between, number, store_folder, string
from ndagent.formats.base import Format
from ndagent.model import Note, Text, ToolEnd, ToolStart, epoch_ms

NAME = "claude_session"
AGENT = "claude"

# The lines of the conversation (the SDK's reader keeps only these), and the metadata
# lines that only a transcript writes.
CONVERSATION = frozenset({"user", "assistant", "system", "progress", "attachment"})
METADATA = frozenset({
    "file-history-snapshot", "file-history-delta", "queue-operation", "custom-title",
    "ai-title", "last-prompt", "tag", "cost-state", "mode", "permission-mode", "atis-latch",
    "bridge-session", "pr-link", "agent-name", "content-replacement", "frame-link"})
SUMMARY = "summary"

CHECKS = {
    "line-fields": ("warning", "a conversation line lacks its uuid, sessionId or timestamp"),
    "session-id": ("warning", "a file holds more than one sessionId"),
    "parent-uuid": ("warning", "a parentUuid names no earlier line of the file"),
    "message-usage": ("warning", "the lines of one message disagree on its model or input "
                                 "figures, or its output_tokens fall"),
    "time-order": ("warning", "a timestamp goes back by more than a second"),
    "version": ("info", "the CLI's version changes inside a file (resumed by a newer CLI)"),
    "call-open": ("warning", "a call is still open when its run ends, and the run is not "
                             "open"),
}

# A typed prompt does not begin with these (the SDK's list of what is not one).
_NOT_PROMPTS = ("<local-command-stdout>", "<local-command-stderr>", "<session-start-hook>",
                "<tick>", "<goal>", "[Request interrupted by user")
_INTERRUPTED = "[Request interrupted by user"
_WHOLE_BLOCKS = ("ide_opened_file", "ide_selection")
_SYNTHETIC = "<synthetic>"
# How many uuids validate keeps to check parentUuid against.
MAX_UUIDS = 1 << 20


def may_decide(kind):
    return kind in CONVERSATION or kind in METADATA or kind == SUMMARY


def decides(data):
    """A transcript's line (docs/agents.md#decisive-tests): ``sessionId`` (the stream's
    is ``session_id``) and ``parentUuid`` on a conversation line, a metadata type only
    transcripts write, or a summary that names its leaf."""
    kind = data.get("type")
    if kind.__class__ is not str:
        return False
    if kind in CONVERSATION:
        return data.get("sessionId").__class__ is str and "parentUuid" in data
    if kind in METADATA:
        return True
    return kind == SUMMARY and data.get("leafUuid").__class__ is str


def text_of(content):
    """The text of a message's content: the string, or its text blocks joined."""
    if content.__class__ is str:
        return content
    if content.__class__ is not list:
        return ""
    return "\n".join(block["text"] for block in content if block.__class__ is dict
                     and block.get("type") == "text" and block.get("text").__class__ is str)


def prompt_of(data):
    """The prompt a main-thread user line begins a run with, or None (a tool result,
    injected context, an interrupt, a command's output)."""
    if data.get("isMeta") or data.get("isCompactSummary"):
        return None
    message = data.get("message")
    content = message.get("content") if message.__class__ is dict else None
    if content.__class__ is list and any(block.__class__ is dict
                                         and block.get("type") == "tool_result"
                                         for block in content):
        return None
    text = text_of(content).strip()
    if not text:
        return None
    command = between(text, "<command-name>", "</command-name>")
    if command is not None:
        arguments = between(text, "<command-args>", "</command-args>") or ""
        return f"{command.strip()} {arguments.strip()}".rstrip()
    if text.startswith(_NOT_PROMPTS):
        return None
    for tag in _WHOLE_BLOCKS:
        if text.startswith(f"<{tag}>") and text.endswith(f"</{tag}>"):
            return None
    return text


def usage_of(usage):
    """The four figures of a message's usage, and its total (to keep the largest)."""
    figures = {"input": number(usage.get("input_tokens")),
               "cacheRead": number(usage.get("cache_read_input_tokens")),
               "cacheWrite": number(usage.get("cache_creation_input_tokens")),
               "output": number(usage.get("output_tokens"))}
    return figures, sum(value for value in figures.values() if value is not None)


class Reader(SessionReader):
    """The runs of one transcript (or subagent file)."""

    AGENT = AGENT

    def __init__(self, source, checks=False, needs=None):
        super().__init__(source, checks, needs)
        self.project = store_folder(source, "projects")
        self.subagent = None  # whether the file is a subagent's (its first line says)
        self.prompt = None  # (item, prompt, timestamp, cwd) of a prompt with no reply yet
        self.message = None  # the id of the main message whose text is the answer so far
        self.answer_parts = []
        self.ended_with_text = False
        # validate's
        self.uuids = set()
        self.versions = None
        self.sessions = None
        self.time = None
        self.messages = {}  # message key -> (model, input figures, output) of its lines

    def event(self, item):
        data, kind = item.data, item.type
        out = []
        if kind not in CONVERSATION:
            return out
        if self.checks:
            self._check(item, data, out)
        sidechain = data.get("isSidechain") is True
        if self.subagent is None and kind in ("user", "assistant"):
            self.subagent = sidechain
            session = string(data.get("sessionId"))
            agent = string(data.get("agentId"))
            self.session_id = (f"{session}/agent-{agent}" if sidechain and session and agent
                               else session)
        main = sidechain == bool(self.subagent)
        timestamp = string(data.get("timestamp"))
        if kind == "user" and main:
            self._user(item, data, timestamp, out)
        elif kind == "assistant" and main:
            self._assistant(item, data, timestamp, out)
        elif kind == "assistant":  # a subagent's line in a main file (2.0.x)
            self._usage(data, out)
        elif kind == "progress":
            self._progress(item, data, timestamp, out)
        elif kind == "system" and self.run is not None:
            subtype = data.get("subtype")
            if subtype == "turn_duration":
                self.run.finished = True
                self.run.duration_ms = number(data.get("durationMs"))
            elif subtype == "stop_hook_summary":
                self.run.finished = True
        if self.run is not None:
            self.run.seen(item, timestamp)
        return out

    def _user(self, item, data, timestamp, out):
        prompt = prompt_of(data)
        if prompt is not None and (not self.subagent or self.run is None):
            if self.run is not None:
                self._end(out, later_prompt=True)
            cwd = string(data.get("cwd"))
            self.prompt = (item, prompt, timestamp, cwd)
            return
        run = self.run
        message = data.get("message")
        content = message.get("content") if message.__class__ is dict else None
        if run is not None:
            run.interrupted = (text_of(content).startswith(_INTERRUPTED)
                               or data.get("toolDenialKind") == "interrupted")
        self._results(item, data, content, timestamp, None, out)

    def _results(self, item, data, content, timestamp, parent, out):
        """The ToolEnds of a user line's tool_result blocks."""
        run = self.run
        if run is None or content.__class__ is not list:
            return
        result = data.get("toolUseResult")
        for block in content:
            if block.__class__ is not dict or block.get("type") != "tool_result":
                continue
            call_id = string(block.get("tool_use_id"))
            started = None if call_id is None else run.calls.get(call_id)
            kind = None if started is None else started[0]
            self.call_ended(run, ToolEnd(
                call_id=call_id, outcome=outcome_of(block, kind),
                result=result if result is not None else block.get("content"),
                session_id=self.session_id, parent=parent, time_ms=epoch_ms(timestamp),
                source=item.source, line=item.line), out)

    def _begin(self, item, timestamp, out):
        """The run of the prompt waiting for its reply begins (a reply with no prompt
        before it begins one of its own, at the reply)."""
        if self.prompt is None:
            self.begin(item, None, timestamp, out, announced=False)
            return
        prompt_item, prompt, started, cwd = self.prompt
        self.prompt = None
        self.begin(prompt_item, prompt, started, out, cwd)

    def _assistant(self, item, data, timestamp, out):
        if self.run is None or self.prompt is not None:
            if self.run is not None:
                self._end(out, later_prompt=True)
            self._begin(item, timestamp, out)
        run = self.run
        run.interrupted = False
        message = data.get("message")
        if message.__class__ is not dict:
            return
        model = string(message.get("model"))
        message_id = string(message.get("id"))
        if model != _SYNTHETIC and self._usage(data, out):
            run.count_model(model)
        error = data.get("isApiErrorMessage") is True or "error" in data
        content = message.get("content")
        text = "".join(block["text"] for block in content
                       if block.__class__ is dict and block.get("type") == "text"
                       and block.get("text").__class__ is str and block["text"].strip()) \
            if content.__class__ is list else ""
        run.failure = (text or "API error") if error else None
        run.finished = run.finished or message.get("stop_reason") == "end_turn"
        self.ended_with_text = bool(text)
        if text:
            if message_id != self.message or message_id is None:
                self.message, self.answer_parts = message_id, []
            self.answer_parts.append(text)
            out.append(Text(text, message_id, item.source, item.line))
        self._calls(item, content, message_id, timestamp, None, out)

    def _calls(self, item, content, message_id, timestamp, parent, out):
        if content.__class__ is not list:
            return
        for block in content:
            if block.__class__ is not dict or block.get("type") != "tool_use":
                continue
            name = string(block.get("name"))
            args = block.get("input")
            kind = kind_of(name)
            self.call_started(self.run, ToolStart(
                call_id=string(block.get("id")), kind=kind, name=name, args=args,
                target=target_of(kind, name, args), session_id=self.session_id,
                model_call_id=message_id, parent=parent, time_ms=epoch_ms(timestamp),
                source=item.source, line=item.line), out)

    def _usage(self, data, out):
        """Count a message line's usage in the run: the largest of its lines', once per
        message key (``message.id`` and ``requestId``).  Whether it is a message."""
        message = data.get("message")
        run = self.run
        if run is None or message.__class__ is not dict:
            return False
        message_id = string(message.get("id"))
        usage = message.get("usage")
        if message_id is None or usage.__class__ is not dict:
            return message_id is not None
        request = string(data.get("requestId"))
        key = message_id if request is None else f"{message_id}:{request}"
        figures, total = usage_of(usage)
        parts = run.parts
        if parts is None:
            parts = run.parts = {}
        found = parts.get(key)
        if found is None or total > sum(value for value in found[1].values() if value):
            parts[key] = (string(message.get("model")), figures)
        if found is None:
            cost = number(data.get("costUSD"))
            run.costs_known = cost is not None and run.costs_known is not False
            run.cost += cost or 0
        return found is None

    def _progress(self, item, data, timestamp, out):
        """An ``agent_progress`` line: a copy of a subagent's line, its usage and calls
        the main run's (the same message in the subagent's file counts once)."""
        progress = data.get("data")
        if self.run is None or progress.__class__ is not dict \
                or progress.get("type") != "agent_progress":
            return
        copy = progress.get("message")
        if copy.__class__ is not dict:
            return
        parent = string(data.get("parentToolUseID"))
        message = copy.get("message")
        content = message.get("content") if message.__class__ is dict else None
        if copy.get("type") == "assistant":
            self._usage(copy, out)
            self._calls(item, content, string(message.get("id")) if message.__class__ is dict
                        else None, string(copy.get("timestamp")) or timestamp, parent, out)
        elif copy.get("type") == "user":
            self._results(item, copy, content, string(copy.get("timestamp")) or timestamp,
                          parent, out)

    def _end(self, out, later_prompt=False):
        run = self.run
        if run.failure is not None:
            outcome = "failed"
        elif run.interrupted:
            outcome = "interrupted"
        elif run.finished or later_prompt or (self.subagent and self.ended_with_text):
            outcome = "ok"
        else:
            outcome = "open"
        # The answer is joined here, once: joined at each text, a message of many lines
        # took time in the square of their number.
        answer = "".join(self.answer_parts) if self.answer_parts else None
        self.message, self.answer_parts = None, []
        self.end(outcome, out, failure=run.failure, answer=answer)

    def finish(self):
        out = []
        if self.run is not None:
            self._end(out)
        return out

    # validate

    def _check(self, item, data, out):
        def note(check, message):
            out.append(Note(check=check, message=message, source=item.source,
                            line=item.line))

        uuid, session = data.get("uuid"), data.get("sessionId")
        timestamp = epoch_ms(data.get("timestamp"))
        if uuid.__class__ is not str or session.__class__ is not str or timestamp is None:
            note("line-fields", "a conversation line without its uuid, sessionId or "
                                "timestamp")
        if session.__class__ is str:
            if self.sessions is None:
                self.sessions = session
            elif session != self.sessions:
                self.sessions = session
                note("session-id", "another sessionId than the lines' before")
        parent = data.get("parentUuid")
        if parent.__class__ is str and parent not in self.uuids \
                and len(self.uuids) < MAX_UUIDS:
            note("parent-uuid", "parentUuid names no earlier line of the file")
        if uuid.__class__ is str and len(self.uuids) < MAX_UUIDS:
            self.uuids.add(uuid)
        if timestamp is not None:
            if self.time is not None and timestamp < self.time - 1000:
                note("time-order", "the timestamp goes back by more than a second")
            self.time = max(timestamp, self.time or timestamp)
        version = data.get("version")
        if version.__class__ is str:
            if self.versions is not None and version != self.versions:
                note("version", "the CLI's version changes: resumed by another CLI")
            self.versions = version
        if data.get("type") == "assistant":
            self._check_message(data, note)

    def _check_message(self, data, note):
        message = data.get("message")
        if message.__class__ is not dict or message.get("usage").__class__ is not dict:
            return
        key = string(message.get("id"))
        if key is None or len(self.messages) >= MAX_UUIDS:
            return
        figures, _ = usage_of(message["usage"])
        seen = (message.get("model"), figures["input"], figures["cacheRead"],
                figures["cacheWrite"])
        found = self.messages.get(key)
        self.messages[key] = (seen, figures["output"])
        if found is None:
            return
        if found[0] != seen:
            note("message-usage", "the lines of one message disagree on its model or "
                                  "input figures")
        elif (found[1] or 0) > (figures["output"] or 0):
            note("message-usage", "output_tokens fall between the lines of one message")


def stores(environ, home):
    """``$CLAUDE_CONFIG_DIR`` (a comma-separated list of config folders, or of their
    ``projects`` folders), else ``~/.claude/projects`` and
    ``${XDG_CONFIG_HOME:-~/.config}/claude/projects``."""
    given = [each.strip() for each in environ.get("CLAUDE_CONFIG_DIR", "").split(",")
             if each.strip()]
    if given:
        return [each if os.path.basename(each.rstrip("/")) == "projects"
                else os.path.join(each, "projects") for each in given]
    config = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [os.path.join(home, ".claude", "projects"),
            os.path.join(config, "claude", "projects")]


FORMAT = Format(
    name=NAME,
    agent=AGENT,
    form="session",
    title="Claude Code transcripts",
    invocation="~/.claude/projects/PROJECT/SESSION.jsonl",
    decides=decides,
    may_decide=may_decide,
    markers=lambda needs: None,
    # A run is told at its reply's first line (a prompt with none begins no run).
    run_starts=[(("type", "assistant"),)],
    reader=Reader,
    checks=CHECKS,
    run_end="its reply",
    stores=stores,
    order=110,
)
