"""Codex's rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl``
(docs/agents.md#session-files, docs/formats.md#codex-rollouts).

Each line is ``{timestamp, type, payload}``.  A run is a turn: ``task_started`` to
``task_complete`` (or ``turn_aborted``), or, in files with no task events, one
``user_message`` to the next.  Usage comes from the differences of the cumulative
``total_token_usage`` (a repeated ``token_count`` adds nothing)."""

import os
import re

import orjson

from ndagent.formats._session import SessionReader, number, string
from ndagent.formats.base import Format
from ndagent.model import Note, Text, ToolEnd, ToolStart, epoch_ms

NAME = "codex_session"
AGENT = "codex"

TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted",
                   "world_state", "inter_agent_communication",
                   "inter_agent_communication_metadata"})
OLD_FORMAT = "unsupported codex session format (before the payload envelope)"

CHECKS = {
    "session-meta": ("error", "the first line is not session_meta"),
    "thread-id": ("warning", "session_meta's id is not the thread id in the file's name"),
    "token-total": ("error", "total_token_usage decreases"),
    "turn-id": ("warning", "a task_complete names no open task_started"),
    "no-model": ("warning", "model requests (token_count) with no turn_context: model "
                            "unknown"),
    "call-open": ("warning", "a call is still open when its run ends, and the run is not "
                             "open"),
}

_KINDS = {"shell": "shell", "exec_command": "shell", "local_shell_call": "shell",
          "write_stdin": "shell", "container.exec": "shell", "update_plan": "updateTodos",
          "web_search_call": "webSearch", "spawn_agent": "task", "read_file": "read",
          "view_image": "read", "list_dir": "ls", "grep_files": "grep"}
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call",
                    "web_search_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
# The events that begin and end a turn (newer CLIs).
_TASKS = frozenset({"task_started", "task_complete", "turn_aborted"})
# The events that tell how a call ended, in the extended persistence.
_ENDS = frozenset({"exec_command_end", "patch_apply_end"})
# The most calls kept waiting for their end, or ends for their call.
MAX_KEPT = 4096
# Patterns compiled when first used (re's own cache), not at every start-up.
_EXITED = r"Process exited with code (-?[0-9]+)"
_RUNNING = "Process running with session ID"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def may_decide(kind):
    return kind in TYPES


def decides(data):
    """A rollout's line: one of its types with an object ``payload`` (no stream event
    has one)."""
    kind = data.get("type")
    return kind.__class__ is str and kind in TYPES and data.get("payload").__class__ is dict


def refuses(data):
    return OLD_FORMAT if "record_type" in data else None


def kind_of(name, namespace, args):
    """The common kind of a call by its name (``apply_patch`` by what its patch does)."""
    if name == "apply_patch":
        files = re.findall(r"^\*\*\* (Add|Update|Delete) File", args or "", re.M)
        if files and all(each == "Add" for each in files):
            return "write"
        if files and all(each == "Delete" for each in files):
            return "delete"
        return "edit"
    if (namespace or "").startswith("mcp__") or "__" in (name or ""):
        return "mcp"
    return _KINDS.get(name, name)


def outcome_of(output):
    """How a call ended, from its output: an exit code in its JSON metadata or in its
    text; still running; else success."""
    text = output if output.__class__ is str else ""
    if text.startswith("{"):
        try:
            found = orjson.loads(text)
        except orjson.JSONDecodeError:
            found = None
        metadata = found.get("metadata") if found.__class__ is dict else None
        code = metadata.get("exit_code") if metadata.__class__ is dict else None
        if code.__class__ is int:
            return "success" if code == 0 else "failure"
    exited = re.search(_EXITED, text[:4096])
    if exited is not None:
        return "success" if exited[1] == "0" else "failure"
    if _RUNNING in text[:4096]:
        return "unknown"
    return "success"


def _arguments(payload):
    """A call's arguments: a function call's JSON string decoded, a custom call's
    input, a local shell call's action."""
    if payload.get("type") == "custom_tool_call":
        return payload.get("input")
    if payload.get("type") == "local_shell_call":
        return payload.get("action")
    if payload.get("type") == "web_search_call":
        return payload.get("action")
    arguments = payload.get("arguments")
    if arguments.__class__ is str:
        try:
            return orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return arguments
    return arguments


def _target(args):
    if args.__class__ is str:
        return args.split("\n", 1)[0][:200] if args.startswith("*** Begin Patch") else None
    if args.__class__ is not dict:
        return None
    for key in ("cmd", "command", "query", "path"):
        value = args.get(key)
        if value.__class__ is str:
            return value
        if value.__class__ is list and all(part.__class__ is str for part in value):
            return " ".join(value)
    return None


def _message_text(payload):
    content = payload.get("content")
    if content.__class__ is not list:
        return ""
    return "".join(block["text"] for block in content if block.__class__ is dict
                   and block.get("text").__class__ is str)


class Reader(SessionReader):
    """The turns of one rollout."""

    AGENT = AGENT

    def __init__(self, source, checks=False, needs=None):
        super().__init__(source, checks, needs)
        self.model = None  # the model of the last turn_context
        self.tasks = False  # whether the file has task events (newer CLIs)
        self.total = None  # the last total_token_usage
        self.carried = None  # usage reported while no run was open: the next run's
        self.lines = 0
        self.turn = None  # the turn_id of the open task
        self.agent_message = None
        self.final = None  # (phase is final_answer, text) of the last assistant message
        self.requests_unmodelled = False
        # Of the calls whose outputs say they still run, the ends waiting for their
        # exec_command_end; the outcomes of the ends that came before their outputs.
        self.running = {}
        self.outcomes = {}

    def event(self, item):
        data = item.data
        payload = data.get("payload")
        out = []
        self.lines += 1
        if payload.__class__ is not dict:
            return out
        kind, inner = item.type, string(payload.get("type"))
        timestamp = string(data.get("timestamp"))
        if self.checks and self.lines == 1 and kind != "session_meta":
            self._note(item, "session-meta", "the first line is not session_meta", out)
        if kind == "session_meta":
            self._meta(item, payload, out)
        elif kind == "turn_context":
            self.model = string(payload.get("model")) or self.model
            self.project = string(payload.get("cwd")) or self.project
        elif kind == "event_msg":
            self._event(item, inner, payload, timestamp, out)
        elif kind == "response_item":
            self._item(item, inner, payload, timestamp, out)
        if self.run is not None:
            self.run.seen(item, timestamp)
        return out

    def _meta(self, item, payload, out):
        self.session_id = string(payload.get("id")) or self.session_id
        self.project = string(payload.get("cwd")) or self.project
        if self.checks and self.session_id is not None:
            named = re.findall(_UUID, str(item.source))
            if named and named[-1] != self.session_id:
                self._note(item, "thread-id", "session_meta's id is not the thread id in "
                                              "the file's name", out)

    def _event(self, item, inner, payload, timestamp, out):
        run = self.run
        if inner in _TASKS:
            self._task(item, inner, payload, timestamp, out)
        elif inner == "user_message":
            prompt = string(payload.get("message"))
            if not self.tasks or run is None:
                if run is not None:
                    self._end(out, "ok")
                self._begin(item, prompt, timestamp, out)
            elif run.start.prompt is None:
                run.start.prompt = prompt
        elif inner == "agent_message" and run is not None:
            self.agent_message = string(payload.get("message"))
            run.answered = True
        elif inner == "token_count":
            self._tokens(item, payload, out)
        elif inner == "error" and run is not None:
            run.failure = string(payload.get("message")) or "error"
        elif inner in _ENDS:
            self._ended(payload, out)

    def _task(self, item, inner, payload, timestamp, out):
        """A turn's start and end events (newer CLIs)."""
        run = self.run
        if inner == "task_started":
            if run is not None:
                self._end(out, "open")
            self.tasks = True
            self.turn = string(payload.get("turn_id"))
            self._begin(item, None, timestamp, out)
        elif inner == "task_complete":
            if self.checks and (run is None or string(payload.get("turn_id")) != self.turn):
                self._note(item, "turn-id", "task_complete names no open task_started", out)
            if run is not None:
                run.duration_ms = number(payload.get("duration_ms"))
                answer = string(payload.get("last_agent_message"))
                self._end(out, "ok", answer=answer)
        elif run is not None:  # turn_aborted
            self._end(out, "interrupted", failure=string(payload.get("reason")))

    def _item(self, item, inner, payload, timestamp, out):
        if inner in _CALLS or inner in _OUTPUTS:
            if self.run is None:
                self._begin(item, None, timestamp, out, announced=False)
            run = self.run
            if inner in _CALLS:
                name = string(payload.get("name")) or inner
                args = _arguments(payload)
                call = ToolStart(
                    call_id=string(payload.get("call_id")) or string(payload.get("id")),
                    kind=kind_of(name, string(payload.get("namespace")), args
                                 if args.__class__ is str else None),
                    name=name, args=args, target=_target(args), session_id=self.session_id,
                    time_ms=epoch_ms(timestamp), source=item.source, line=item.line)
                if inner == "web_search_call":  # a call complete on its own line
                    run.answered = False
                    self.call_ended(run, ToolEnd(kind=call.kind, name=name, args=args,
                                                 target=call.target, outcome="success",
                                                 session_id=self.session_id,
                                                 time_ms=call.time_ms, source=item.source,
                                                 line=item.line), out)
                else:
                    self.call_started(run, call, out)
            else:
                self._output(item, payload, timestamp, out)
        elif inner == "message" and payload.get("role") == "assistant" and self.run is not None:
            text = _message_text(payload)
            if text:
                final = payload.get("phase") == "final_answer"
                if final or self.final is None or not self.final[0]:
                    self.final = (final, text)
                self.run.answered = True
                out.append(Text(text, str(item.line), item.source, item.line))

    def _output(self, item, payload, timestamp, out):
        """A call's output ends it, unless the command is still running: then its
        ``exec_command_end`` (extended persistence) ends it, else the run's end."""
        output = payload.get("output")
        call_id = string(payload.get("call_id"))
        self.run.answered = False
        outcome = self.outcomes.pop(call_id, None) or outcome_of(output)
        end = ToolEnd(call_id=call_id, outcome=outcome, result=output,
                      session_id=self.session_id, time_ms=epoch_ms(timestamp),
                      source=item.source, line=item.line)
        if outcome == "unknown" and call_id is not None and len(self.running) < MAX_KEPT:
            self.running[call_id] = end
        else:
            self.call_ended(self.run, end, out)

    def _ended(self, payload, out):
        """An ``exec_command_end`` or ``patch_apply_end``: how its call ended."""
        call_id = string(payload.get("call_id"))
        code, success = payload.get("exit_code"), payload.get("success")
        if payload.get("status") == "declined":
            outcome = "rejected"
        elif code.__class__ is int or success.__class__ is bool:
            outcome = "success" if code == 0 or success is True else "failure"
        else:
            return
        end = self.running.pop(call_id, None)
        if end is not None:
            end.outcome = outcome
            self.call_ended(self.run, end, out)
        elif (call_id is not None and self.run is not None
              and self.run.calls.get(call_id) is not None and len(self.outcomes) < MAX_KEPT):
            self.outcomes[call_id] = outcome  # its output is still to come

    def _tokens(self, item, payload, out):
        info = payload.get("info")
        if info.__class__ is not dict:
            return
        total = info.get("total_token_usage")
        if total.__class__ is dict:
            usage = self._difference(item, total, out)
            self.total = total
        else:
            last = info.get("last_token_usage")
            usage = _figures(last) if last.__class__ is dict else None
        if self.checks and self.model is None and not self.requests_unmodelled:
            self.requests_unmodelled = True
            self._note(item, "no-model", "a model request (token_count) before any "
                                         "turn_context: model unknown", out)
        if usage is None or not any(usage.values()):
            return
        if self.run is None:
            self.carried = _add(self.carried, usage)
        else:
            self.run.add_usage(usage)

    def _difference(self, item, total, out):
        """The usage since the last total (the whole total for the first)."""
        now = _figures(total)
        if self.total is None:
            return now
        before = _figures(self.total)
        usage = {name: (now[name] or 0) - (before[name] or 0) for name in now}
        if any(value < 0 for value in usage.values()):
            if self.checks:
                self._note(item, "token-total", "total_token_usage decreases", out)
            return None
        return usage

    def _begin(self, item, prompt, timestamp, out, announced=True):
        run = self.begin(item, prompt, timestamp, out, announced=announced)
        self.agent_message = self.final = None
        if self.carried is not None:
            run.add_usage(self.carried)
            self.carried = None

    def _end(self, out, outcome, failure=None, answer=None):
        run = self.run
        for end in self.running.values():  # still running when the run ended: unknown
            self.call_ended(run, end, out)
        self.running.clear()
        if run.failure is not None and outcome != "interrupted":
            outcome, failure = "failed", run.failure
        if answer is None:
            answer = self.agent_message
        if answer is None and self.final is not None:
            answer = self.final[1]
        run.count_model(self.model)
        self.end(outcome, out, failure=failure, answer=answer)

    def finish(self):
        out = []
        if self.run is not None:
            answered = not self.tasks and self.run.answered
            self._end(out, "ok" if answered else "open")
        return out

    @staticmethod
    def _note(item, check, message, out):
        out.append(Note(check=check, message=message, source=item.source, line=item.line))


def _figures(usage):
    """The four figures of a Codex usage: input less the cached, the cached, no cache
    write, output (reasoning within it)."""
    given = number(usage.get("input_tokens")) or 0
    cached = number(usage.get("cached_input_tokens")) or 0
    return {"input": given - cached, "cacheRead": cached, "cacheWrite": 0,
            "output": number(usage.get("output_tokens")) or 0}


def _add(usage, more):
    if usage is None:
        return dict(more)
    return {name: usage[name] + more[name] for name in usage}


def stores(environ, home):
    """``${CODEX_HOME:-~/.codex}/sessions`` and its ``archived_sessions``."""
    root = environ.get("CODEX_HOME") or os.path.join(home, ".codex")
    return [os.path.join(root, "sessions"), os.path.join(root, "archived_sessions")]


FORMAT = Format(
    name=NAME,
    agent=AGENT,
    form="session",
    title="Codex rollouts",
    invocation="~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl",
    decides=decides,
    may_decide=may_decide,
    markers=lambda needs: None,
    run_starts=[(("type", "event_msg"),)],
    reader=Reader,
    checks=CHECKS,
    run_end="task_complete",
    refuses=refuses,
    stores=stores,
    order=111,
)
