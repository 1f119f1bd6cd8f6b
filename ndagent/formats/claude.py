"""Claude Code's stream (``claude -p --output-format stream-json --verbose``): what it means.

docs/formats.md#claude-code describes it, and docs/agents.md and docs/model.md what
ndagent decides of it.  Qwen Code and Amp write the same envelope: the Reader is the
one of ``_claude_stream``, and what is Claude's own is here (which objects tell its
stream, its tools, why a run failed, its figures, its checks).  An input whose objects
tell none of the three apart is read as Claude's (``leans``), which validate says once.
"""

import ndagent.formats._claude_stream as stream
from ndagent.formats._claude_calls import kind_of, outcome_of, target_of
from ndagent.formats._claude_detect import claude_decides, claude_family
from ndagent.formats._claude_messages import Messages
from ndagent.formats._claude_usage import cost_of, running_totals, usage_of
from ndagent.formats.base import Format, text_or_none
from ndagent.model import Note, epoch_ms
from ndagent.terminal import quote

NAME = "claude"

# The checks of this format that ``validate`` adds to the generic ones (docs/agents.md#validate).
CHECKS = {
    "session": ("warning", "an event's session_id is not the one its run began with"),
    "init": ("warning", "a run does not begin with system/init (after any hook lines)"),
    "fields": ("error", "a result lacks is_error (a boolean), duration_ms, num_turns, "
                        "session_id, or, when is_error is false, result"),
    "result-index": ("warning", "result_index does not grow by one from run to run of a session"),
    "answer": ("warning", "the result's text is not the text of the run's last "
                          "main-thread assistant message"),
    "deltas": ("warning", "the text deltas of a block differ from the whole block that "
                          "follows them"),
    "api-retry": ("warning", "the CLI retried a request to the API (system/api_retry)"),
    "call-open": ("warning", "a tool_use is still open at a result that says the run went "
                             "well (a CLI with user hooks did this)"),
    "family": ("warning", "no line tells Claude Code, Qwen Code and Amp apart: the "
                          "stream is read as Claude's"),
}

# Kept where the tests find them.
MAX_TRACKED = stream.MAX_TRACKED

# How many objects the Reader looks through for one that tells Claude's stream from
# Qwen Code's and Amp's, as detection does (formats.DETECT_OBJECTS).
_FAMILY_OBJECTS = 100

# The types of the objects ``decides`` may find decisive.
_DECISIVE_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event",
                             "rate_limit_event", "conversation_reset"})


def may_decide(kind):
    """Whether an object of type ``kind`` (a string) can be decisive for Claude."""
    return kind in _DECISIVE_TYPES


# The lines to decode for each need, and the bytes of the lines a stream may be cut
# before: the envelope's (``_claude_stream``).
markers = stream.markers
SPLIT_NEEDLE = stream.SPLIT_NEEDLE


# Whether a decoded object is Claude's and no other agent's
# (docs/agents.md#decisive-tests): none of the agents that write Claude's envelope
# writes it.  The envelope's function itself, called with no step between: it runs on
# every line of the other agents' streams.
decides = claude_decides


def splits_between(before, after, checks):
    """Whether a stream may be cut between the adjacent lines that decode to the
    objects ``before`` and ``after`` and each part read on its own, with the same
    findings: between a result and the next system/init; but not for a Reader with
    ``checks``, which follows ``result_index`` from one run to the next."""
    return not checks and stream.result_then_init(before, after)


class Reader(stream.Reader):
    """Claude's stream: its tools, failures, figures and checks."""

    NAME = NAME
    VERSION_KEY = "claude_code_version"
    FOLLOWS_INDEX = True
    MESSAGES = Messages

    def __init__(self, source, checks=False, needs=None):
        super().__init__(source, checks, needs)
        # Until an object tells the stream Claude's: how many were read (None: told,
        # or said), and the last.
        self.untold = 0 if checks else None
        self.last = None

    def event(self, event):
        out = super().event(event)
        if self.untold is not None:
            if decides(event.data):
                self.untold = None
            else:
                self.untold += 1
                self.last = event
                if self.untold >= _FAMILY_OBJECTS:
                    self._untold(out)
        return out

    def finish(self):
        out = []
        if self.untold:
            self._untold(out)
        return out + super().finish()

    def _untold(self, out):
        """The note of a stream whose first objects tell none of the agents that write
        Claude's envelope (detection read it as Claude's, having no better guess)."""
        self.untold = None
        out.append(Note(check="family", message="a Claude-compatible stream with no line "
                        "that tells Claude, Qwen Code and Amp apart; read as claude "
                        "(--agent qwen or --agent amp to choose)",
                        source=self.last.source, line=self.last.line))

    def kind_of(self, name, server):
        return kind_of(name, server)

    def target_of(self, kind, name, args):
        return target_of(kind, name, args)

    def outcome_of(self, block, kind):
        return outcome_of(block, kind)

    def assistant_line(self, run, event, data, message, content, main, out):
        if main:
            if run.local_failure is None and _local_command_failed(data, message):
                run.local_failure = stream.message_text(content)
            run.api_error = (stream.message_text(content) or text_or_none(data.get("error"))
                             or "API error" if _api_error_message(data) else None)

    def failure(self, run, data):
        return _failure(data, run.local_failure, run.api_error)

    def figures(self, run, data):
        usage, cost = usage_of(data), cost_of(data)
        return usage, cost, running_totals(run.start, data, usage, cost)

    def system(self, run, event, data, out):
        if self.checks and data.get("subtype") == "api_retry":
            out.append(Note(check="api-retry", message=_retry_message(data),
                            source=event.source, line=event.line))


def _local_command_failed(data, message):
    """Whether an assistant line reports a failed local slash command (``/compact``)."""
    for place in (data, message):
        outcome = place.get("local_command_outcome")
        if outcome.__class__ is dict and outcome.get("kind") == "failed":
            return True
    return False


def _failure(data, local_failure, api_error):
    """Why a run failed, picked as the SDK does, or None when it ended well.

    ``is_error`` decides, whatever the subtype (an API failure comes as ``success``);
    a result without a boolean ``is_error`` (not written by any known version) is taken
    as failed when its subtype is not ``success``.  A run whose ``is_error`` is false
    failed all the same when a local command in it failed, when it was aborted, and
    when it ended on an API error: the result names one (``api_error_status``,
    ``terminal_reason`` "api_error"), or the run's last message is the one the CLI
    makes of it (``api_error``: its text), which older CLIs report as a success."""
    is_error = data.get("is_error")
    subtype = data.get("subtype")
    reason = data.get("terminal_reason")
    if is_error is True or (is_error.__class__ is not bool and subtype.__class__ is str
                            and subtype != "success"):
        return _failure_text(data)
    if local_failure is not None:
        return local_failure or "a local command failed"
    if reason.__class__ is str and reason.startswith("aborted"):
        return _failure_text(data)
    status = data.get("api_error_status")
    if api_error is not None or reason == "api_error" or (
            status is not None and status is not False):
        return api_error or _failure_text(data)
    return None


def _api_error_message(data):
    """Whether an assistant line is the message the CLI makes of an API error (a rate
    limit, 529 overloaded, an organisation not allowed): marked as one, or carrying
    the error's kind."""
    return data.get("is_api_error_message") is True or stream.filled(data.get("error"))


def _failure_text(data):
    """The joined ``errors``, else ``result``, else a subtype other than ``success``,
    else the API's HTTP status, else the terminal reason."""
    errors = data.get("errors")
    if errors.__class__ is list:
        texts = [error for error in errors if stream.filled(error)]
        if texts:
            return "; ".join(texts)
    text = data.get("result")
    if stream.filled(text):
        return text
    subtype = data.get("subtype")
    if stream.filled(subtype) and subtype != "success":
        return subtype
    status = data.get("api_error_status")
    if status is not None and status.__class__ is not bool and \
            status.__class__ in (int, float, str):
        return f"API error (HTTP {status})"
    reason = data.get("terminal_reason")
    if stream.filled(reason):
        return reason
    return "the result reports is_error"


def _retry_message(data):
    attempt, most = data.get("attempt"), data.get("max_retries")
    error = data.get("error")
    said = "the CLI retried a request to the API"
    if stream.number(attempt) is not None and stream.number(most) is not None:
        said += f" (attempt {attempt} of {most})"
    if stream.filled(error):
        said += f': "{quote(error)}"'
    return said


def _epoch_ms(value):
    """An ISO 8601 timestamp in epoch milliseconds, or None; without a zone, UTC."""
    return epoch_ms(value, zone_required=False)


# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "each run's result event as it is: what 'claude -p --output-format json' prints (a run "
            "whose is_error is true prints it too, and is reported: status 1).",
    "result": "the answer is the result's text, that of the run's last main-thread message, known "
              "only at the run's end. --live prints the text deltas where the stream has partial "
              "messages, else whole text blocks, never the same text twice.",
    "text": "Bash is shell, Read read, Write write, Edit edit, Glob glob, Grep grep, Task task, "
            "mcp__* tools mcp, WebSearch webSearch, ...; the calls of a subagent print too.",
    "tools": "name is the tool's name (Bash, Read, mcp__server__tool, ...), args its input, result "
             '{"content": ...} of its tool_result (with tool_use_result when the line has it), '
             "model_call_id the message id, parent the parent_tool_use_id of a subagent's call. A "
             "call still open at the run's end that the result's permission_denials lists is "
             "printed permissionDenied.",
    "validate": "a FILE is checked whole, never in parts: result_index is followed from one run "
                "to the next.",
    "stats": "the figures are those of the result event: tokens from its modelUsage (else its "
             "usage), cost from its total_cost_usd. A call that the result's permission_denials "
             "names counts as permissionDenied.",
    "run": "its run is over at its result event; with --input-format stream-json it makes several "
           "runs in one process, each of which must begin within --grace of the one before.",
    "markdown": "the prompt shows only in a stream made with --replay-user-messages; thinking "
                "comes from whole thinking blocks; Started is known from CLI 2.1 on, whose lines "
                "carry a timestamp.",
    "html": "the prompt shows only in a stream made with --replay-user-messages; thinking comes "
            "from whole thinking blocks; Started is known from CLI 2.1 on, whose lines carry a "
            "timestamp.",
}


FORMAT = Format(
    name=NAME,
    title="Claude Code",
    invocation="claude -p --output-format stream-json --verbose",
    decides=decides,
    may_decide=may_decide,
    reader=Reader,
    checks=CHECKS,
    splits_between=splits_between,
    leans=claude_family,
    reports_cost=True,
    running_total="process",
    help=HELP,
    **stream.ENVELOPE,
    interchange=("claude-code", "anthropic"),
    order=20,
)
