"""Qwen Code: ``qwen -p "..." --output-format stream-json``.

What the stream means (docs/agents.md#claude-compatible-agents): Claude Code's
envelope, read by the Reader of ``_claude_stream``, with these differences.  The init carries
``qwen_code_version``; an assistant line's ``uuid`` is its message's id, and one line
holds blocks of one type.  The tools are Qwen Code's (Gemini CLI's names).  A run
fails when ``is_error`` is true, or when the CLI made an API error into the answer
(``[API Error: ...]``) and still said success.  A subagent that fails writes a
``result`` in the middle of the run, which ends nothing.  The ``result``'s ``usage`` is
the process's running total (ndagent.totals makes each run's own); there is no cost.
"""

import ndagent.formats._claude_stream as stream
from ndagent.formats._claude_detect import QWEN_TYPES, qwen_decides
from ndagent.formats._claude_messages import Messages
from ndagent.formats.base import Format, first_string, note_at, text_or_none
from ndagent.terminal import quote

NAME = "qwen"

CHECKS = {
    "session": ("warning", "an event's session_id is not the one its run began with"),
    "init": ("warning", "a run does not begin with system/init, or its init has no "
                        "qwen_code_version"),
    "message-id": ("warning", "an assistant line's uuid is not its message's id"),
    "block-types": ("warning", "an assistant line holds blocks of more than one type"),
    "fields": ("error", "a result lacks is_error (a boolean), duration_ms, num_turns, "
                        "session_id, or, when is_error is false, result"),
    "answer": ("warning", "the result's text is not the text of the run's last "
                          "main-thread assistant message"),
    "deltas": ("warning", "the text deltas of a block differ from the whole block that "
                          "follows them"),
    "subagent-result": ("warning", "a subagent failed: its result, in the middle of the "
                                   "run, ends nothing"),
    "call-unstarted": ("error", "a tool_result whose tool_use_id no earlier tool_use has"),
}

# Qwen Code's tools by common kind (ndagent.model.KINDS), legacy names
# too; ``mcp__SERVER__TOOL`` is mcp, and any other keeps its own name as its kind.
KINDS = {
    "run_shell_command": "shell", "read_file": "read", "read_many_files": "read",
    "write_file": "write", "edit": "edit", "replace": "edit", "list_directory": "ls",
    "glob": "glob", "grep_search": "grep", "search_file_content": "grep",
    "web_fetch": "webFetch", "web_search": "webSearch", "todo_write": "updateTodos",
    "task_create": "updateTodos", "task_update": "updateTodos", "agent": "task",
    "task": "task",
}

# Where a call names what it acts on, in order (a search: its pattern first).
_TARGET_KEYS = ("file_path", "absolute_path", "path", "command", "pattern", "url", "query")
_SEARCH_TARGET_KEYS = ("pattern", "path", "file_path", "absolute_path", "query")

# How the CLI writes an API error into the answer of a run it says went well.
API_ERROR = "[API Error:"

# At most this many subagent calls are kept open at once (a stream may open any
# number): the oldest is forgotten beyond.
MAX_AGENTS = 1024


def may_decide(kind):
    """Whether an object of type ``kind`` can be decisive for Qwen Code."""
    return kind in QWEN_TYPES


# The lines to decode for each need, and the bytes of the lines a stream may be cut
# before: the envelope's (``_claude_stream``).
markers = stream.markers
SPLIT_NEEDLE = stream.SPLIT_NEEDLE


# Whether a decoded object is Qwen Code's and no other agent's
# (docs/agents.md#decisive-tests).  The envelope's function itself, called with no step
# between: it runs on every line of the other agents' streams.
decides = qwen_decides


def splits_between(before, after, checks):
    """Between a result and the next system/init: nothing carries over from one run to
    the next but the running totals, which ndagent.totals follows across parts."""
    return stream.result_then_init(before, after)


class Reader(stream.Reader):
    """Qwen Code's stream: its tools, failures, figures and checks."""

    NAME = NAME
    VERSION_KEY = "qwen_code_version"
    MESSAGES = Messages

    def kind_of(self, name, server):
        if name is None:
            return "function"
        kind = KINDS.get(name)
        if kind is not None:
            return kind
        return "mcp" if name.startswith("mcp__") else name

    def target_of(self, kind, name, args):
        if kind == "mcp":
            return name
        return first_string(args, _SEARCH_TARGET_KEYS if kind in ("grep", "glob")
                            else _TARGET_KEYS)

    def init_problem(self, init):
        if "qwen_code_version" not in init:
            return "system/init has no qwen_code_version"
        return None

    def assistant_line(self, run, event, data, message, content, main, out):
        for block in content:
            if (main and block.__class__ is dict and block.get("type") == "tool_use"
                    and self.kind_of(text_or_none(block.get("name")), False) == "task"):
                self._agent_opens(run, block.get("id"))
        if not self.checks:
            return
        uuid = data.get("uuid")
        if uuid.__class__ is str and message.get("id") != uuid:
            out.append(note_at(event, "message-id", f'uuid "{quote(uuid)}" is not the '
                               "message's id"))
        types = {text_or_none(block.get("type")) for block in content if block.__class__ is dict}
        if len(types) > 1:
            out.append(note_at(event, "block-types", "an assistant line with blocks of "
                               f"{len(types)} types"))

    def _agent_opens(self, run, call_id):
        if call_id.__class__ is not str:
            return
        if run.agents is None:
            run.agents = {}
        run.agents[call_id] = True
        if len(run.agents) > MAX_AGENTS:
            del run.agents[next(iter(run.agents))]

    def mid_run_result(self, run, event, data, out):
        """A failed subagent's result: is_error, no time, while a subagent call of the
        main thread is open (its tool_result not seen)."""
        if not (run.agents and data.get("is_error") is True
                and data.get("duration_ms") == 0 and data.get("duration_api_ms") == 0):
            return False
        if self.checks:
            error = _error_message(data)
            out.append(note_at(event, "subagent-result", "a subagent failed" + (
                f': "{quote(error)}"' if error is not None else "")))
        return True

    def failure(self, run, data):
        """``is_error`` (its ``error.message``, else the subtype), or an answer the CLI
        made of an API error."""
        is_error = data.get("is_error")
        subtype = data.get("subtype")
        if is_error is True or (is_error.__class__ is not bool and subtype.__class__ is str
                                and subtype != "success"):
            error = _error_message(data)
            if error is not None:
                return error
            return subtype if stream.filled(subtype) else "the result reports is_error"
        text = data.get("result")
        if text.__class__ is str and text.startswith(API_ERROR):
            return text
        return None

    def figures(self, run, data):
        """The ``result``'s usage, a running total of the process (the session): input
        less its cached part, no cache write, no cost."""
        raw = data.get("usage")
        if raw.__class__ is not dict:
            return None, None, None
        cached = raw.get("cache_read_input_tokens", 0)
        total, output = raw.get("input_tokens"), raw.get("output_tokens")
        usage = {"input": total - cached if _numbers(total, cached) else None,
                 "cacheRead": cached if _numbers(cached) else None, "cacheWrite": 0,
                 "output": output if _numbers(output) else None}
        session = text_or_none(data.get("session_id")) or run.start.session_id
        totals = None if session is None else (session, None, {"usage": usage, "cost": None,
                                                                "native": None})
        return usage, None, totals


def _error_message(data):
    """The text of a result's ``error`` (``{message}``, or a string), or None."""
    error = data.get("error")
    if error.__class__ is dict:
        error = error.get("message")
    return error if stream.filled(error) else None


def _numbers(*values):
    return all(value.__class__ is int or value.__class__ is float for value in values)


# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "each run's result event as it is, the last element of what 'qwen --output-format "
            "json' prints (a failed run's too: status 1); a subagent's result in the middle of "
            "a run is not printed. Its usage is the process's running total.",
    "result": "the answer is the result's text, that of the run's last main-thread message, known "
              "only at the run's end. A run whose answer is an '[API Error: ...]' the CLI "
              "reported as a success failed: nothing is printed.",
    "text": "run_shell_command is shell, read_file read, write_file write, edit edit, glob glob, "
            "grep_search grep, list_directory ls, web_fetch webFetch, agent task, mcp__* tools "
            "mcp, ...; the calls of a subagent print too.",
    "tools": "name is the tool's name (read_file, run_shell_command, ...), args its input, result "
             '{"content": ...} of its tool_result, model_call_id the message id, parent the '
             "parent_tool_use_id of a subagent's call. A call that the result's "
             "permission_denials lists is permissionDenied.",
    "validate": "a subagent's result in the middle of a run is a warning, and ends nothing; an "
                "'[API Error: ...]' answer is a failed run.",
    "stats": "the result's usage is the process's running total: each run counts it less the "
             "previous result's of the same session_id (input less its cached part); no cost.",
    "run": "its run is over at its result event (not a subagent's).",
}


FORMAT = Format(
    name=NAME,
    title="Qwen Code",
    invocation="qwen -p --output-format stream-json",
    decides=decides,
    may_decide=may_decide,
    reader=Reader,
    checks=CHECKS,
    splits_between=splits_between,
    running_total="process",
    help=HELP,
    **stream.ENVELOPE,
    interchange=("qwen-coder", "qwen"),
    order=80,
)
