"""Amp: ``amp -x "..." --stream-json``.

What the stream means (docs/agents.md#claude-compatible-agents): Claude Code's
envelope, read by the Reader of ``_claude_stream``, with these differences.  Every
line carries the thread id (``T-...``) in ``session_id``; the init has no model; the
prompt comes back as a ``user`` text line after it.  An assistant line is one whole
message, with no id: its line tells it from the others.  A failed run's ``result``
has its error as a string in ``error``.  The ``result`` has no usage: a run's figures
are the sums over its assistant lines; there is no cost.
"""

import re

import orjson

import ndagent.formats._claude_stream as stream
from ndagent.decoder import encode_line
from ndagent.formats._claude_detect import AMP_TYPES, amp_decides
from ndagent.formats._claude_messages import Messages
from ndagent.formats._claude_usage import usage_of
from ndagent.formats.base import Format, first_string, note_at

NAME = "amp"

CHECKS = {
    "session": ("warning", "an event's session_id is not the one its run began with"),
    "init": ("warning", "a run does not begin with system/init, or its init has no T- "
                        "thread id"),
    "prompt": ("warning", "the prompt does not come back as a user line right after the "
                          "init"),
    "fields": ("error", "a result lacks is_error (a boolean), duration_ms, num_turns, "
                        "session_id, or result when is_error is false, or error when true"),
    "answer": ("warning", "the result's text is not the text of the run's last "
                          "main-thread assistant message"),
    "gross-input": ("warning", "input_tokens is the sum of the cache figures: an older Amp "
                               "counted cached tokens in it, so the input is overcounted"),
    "call-unstarted": ("error", "a tool_result whose tool_use_id no earlier tool_use has"),
}

# Amp's tools by common kind (ndagent.model.KINDS); any other keeps its
# own name as its kind (how Amp names MCP tools is not known).
KINDS = {
    "Bash": "shell", "Read": "read", "create_file": "write", "edit_file": "edit",
    "apply_patch": "edit", "undo_edit": "edit", "delete_file": "delete", "glob": "glob",
    "Glob": "glob", "Grep": "grep", "finder": "semSearch", "read_web_page": "webFetch",
    "web_search": "webSearch", "task_list": "updateTodos", "todo_write": "updateTodos",
    "Task": "task", "oracle": "task", "librarian": "task", "kraken": "task",
}

# Where a call names what it acts on, in order (Amp's Bash takes ``cmd``; a search: its
# pattern first).
_TARGET_KEYS = ("path", "cmd", "command", "pattern", "filePattern", "url", "query")
_SEARCH_TARGET_KEYS = ("pattern", "filePattern", "path", "query")

# The usage figures of an assistant line, and what each adds to.
_FIGURES = (("input_tokens", "input"), ("cache_read_input_tokens", "cacheRead"),
            ("cache_creation_input_tokens", "cacheWrite"), ("output_tokens", "output"))

# The longest Bash result read for its exit code.
MAX_EXIT_RESULT = 1 << 16
# What a result's text begins with when it may be a JSON object (JSON's whitespace).
_OBJECT_TEXT = re.compile(r"[ \t\n\r]*\{")


def may_decide(kind):
    """Whether an object of type ``kind`` can be decisive for Amp."""
    return kind in AMP_TYPES


# The bytes of the lines a stream may be cut before: the envelope's (``_claude_stream``).
SPLIT_NEEDLE = stream.SPLIT_NEEDLE
_USER, _ASSISTANT = (("type", "user"),), (("type", "assistant"),)


def markers(needs):
    """The envelope's markers for ``needs``, or None (every line) where they select the
    user lines: Amp writes no stream_event, so they then select every line it writes,
    and the search for them would pass over nothing.  The native object alone needs no
    assistant line: it is the result as it stands (no figure of the run is put in it)."""
    found = stream.markers(needs)
    if found is None or _USER in found:
        return None
    if needs <= {"native"}:
        return tuple(marker for marker in found if marker != _ASSISTANT)
    return found


markers.__wrapped__ = stream.markers  # the envelope's: formats.sharing_envelope


def decides(data):
    """Whether a decoded object is Amp's and no other agent's
    (docs/agents.md#decisive-tests): its thread id."""
    return amp_decides(data)


def splits_between(before, after, checks):
    """Between a result and the next system/init: nothing carries over."""
    return stream.result_then_init(before, after)


class Reader(stream.Reader):
    """Amp's stream: its tools, failures, figures and checks."""

    NAME = NAME
    MESSAGES = Messages
    HOLDS_DELTAS = False  # Amp writes no stream_event: its lines are all read

    def __init__(self, source, checks=False, needs=None):
        super().__init__(source, checks, needs)
        self.init = None  # the init just read, whose prompt comes next (checks only)
        # Whether the run's figures, summed over its assistant lines, are wanted.
        self.summed = needs is None or "ends" in needs
        if not checks:  # the init waiting for its prompt is kept for validate only
            self.event = super().event

    def event(self, event):
        init, self.init = self.init, None
        out = []
        if init is not None and not (event.type == "user" and stream.holds_text(event.data)):
            out.append(note_at(init, "prompt", "the prompt does not come back after the init"))
        out += super().event(event)
        if event.type == "system" and event.data.get("subtype") == "init":
            self.init = event
        return out

    def kind_of(self, name, server):
        return "function" if name is None else KINDS.get(name, name)

    def target_of(self, kind, name, args):
        return first_string(args, _SEARCH_TARGET_KEYS if kind in ("grep", "glob")
                            else _TARGET_KEYS)

    def outcome_of(self, block, kind):
        """A Bash result whose content is an object with a non-zero ``exitCode`` failed;
        else ``is_error``."""
        if kind == "shell" and _exit_code(block.get("content")) not in (None, 0):
            return "failure"
        return "error" if block.get("is_error") is True else "success"

    def message_key(self, event, message):
        return event.line

    def init_problem(self, init):
        session = init.get("session_id")
        if session.__class__ is str and session.startswith("T-"):
            return None
        return "system/init has no T- thread id"

    def assistant_line(self, run, event, data, message, content, main, out):
        usage = message.get("usage") if self.summed else None
        if usage.__class__ is not dict:
            return
        if run.usage is None:
            run.usage = {"input": 0, "cacheRead": 0, "cacheWrite": 0, "output": 0}
        for name, field in _FIGURES:
            value = usage.get(name)
            if value.__class__ is int or value.__class__ is float:
                run.usage[field] += value
        if self.checks and _gross(usage) and run.said_once("gross-input"):
            out.append(note_at(event, "gross-input", "input_tokens is the sum of the cache "
                               "figures (an older Amp): the input is overcounted"))

    def failure(self, run, data):
        """``is_error``: its ``error`` (a string as it is, another value as JSON), else
        ``result``, else the subtype."""
        is_error = data.get("is_error")
        subtype = data.get("subtype")
        if not (is_error is True or (is_error.__class__ is not bool
                                     and subtype.__class__ is str and subtype != "success")):
            return None
        error = data.get("error")
        if stream.filled(error):
            return error
        if error is not None and error.__class__ is not str:
            return encode_line(error).decode("utf-8", "replace").rstrip("\n")
        for text in (data.get("result"), subtype):
            if stream.filled(text) and text != "success":
                return text
        return "the result reports is_error"

    def figures(self, run, data):
        """The sums over the run's assistant lines (a ``usage`` in the result, which no
        version is known to write, would be taken instead); no cost."""
        if data.get("usage").__class__ is dict:
            return usage_of(data), None, None
        return run.usage, None, None

    def result_problems(self, data):
        problems = super().result_problems(data)
        if data.get("is_error") is True and "error" not in data:
            problems.append('has no "error", with is_error true')
        return problems


def _gross(usage):
    """Whether an assistant line's input_tokens is its cache figures' sum (and not 0)."""
    values = [usage.get(name) for name in ("input_tokens", "cache_read_input_tokens",
                                           "cache_creation_input_tokens")]
    if not all(value.__class__ is int for value in values):
        return False
    return values[0] > 0 and values[0] == values[1] + values[2]


def _exit_code(content):
    """The integer ``exitCode`` of a Bash result's content (an object, or its JSON text,
    or a text block holding it), or None."""
    if content.__class__ is list:
        content = next((block.get("text") for block in content
                        if block.__class__ is dict and block.get("text").__class__ is str),
                       None)
    if content.__class__ is str:
        # Matched where it stands: a result of a few KB begun with spaces is not copied.
        if len(content) > MAX_EXIT_RESULT or _OBJECT_TEXT.match(content) is None:
            return None
        try:
            content = orjson.loads(content)
        except orjson.JSONDecodeError:
            return None
    if content.__class__ is not dict:
        return None
    code = content.get("exitCode")
    return code if code.__class__ is int else None


# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "Amp has no json mode: each run's result event as it is (a failed run's too, with "
            "its error: status 1).",
    "result": "the answer is the result's text, that of the run's last main-thread assistant "
              "line, known only at the run's end; a failed run's error text is in the message.",
    "text": "Bash is shell, Read read, create_file write, edit_file edit, Grep grep, glob glob, "
            "finder semSearch, read_web_page webFetch, Task and oracle task, ...; the calls of a "
            "subagent print too.",
    "tools": "name is the tool's name (Bash, Read, ...), args its input, result {\"content\": "
             "...} of its tool_result, model_call_id null (Amp's messages have no id), parent "
             "the parent_tool_use_id of a subagent's call. A Bash result with a non-zero "
             "exitCode is a failure.",
    "validate": "the prompt comes back as a user line after the init; an input_tokens that is "
                "the sum of the cache figures (an older Amp) is a warning.",
    "stats": "the figures are the sums over the run's assistant lines' usage (the result has "
             "none); no cost, no model.",
    "run": "its run is over at its result event.",
}


FORMAT = Format(
    name=NAME,
    title="Amp",
    invocation="amp -x --stream-json",
    decides=decides,
    may_decide=may_decide,
    reader=Reader,
    checks=CHECKS,
    splits_between=splits_between,
    help=HELP,
    **{**stream.ENVELOPE, "markers": markers},
    interchange=("amp", "amp"),
    order=90,
)
