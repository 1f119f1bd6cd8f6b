"""Claude Code's stream (``claude -p --output-format stream-json --verbose``): what it means.

The one module that knows this stream; docs/formats.md#claude-code describes it, and
docs/agents.md and docs/model.md what ndagent decides of it.  Runs
begin at ``system/init`` (or at the first event after a ``result``; ``hook_*`` and
``rate_limit_event`` lines are information only) and end at their ``result``; text is
keyed by the message id and handed on once (deltas, then the whole block, are
compared); subagents' lines give calls (``parent``), no text; the ``result``'s
``permission_denials`` may make a call denied after its ``tool_result``; the answer is
the last main-thread message's text, the json object the ``result`` as it is.
"""

from io import StringIO

from ndagent.decoder import RawNumber
from ndagent.formats._claude_calls import (
    Calls,
    keep_open,
    kind_of,
    open_call,
    outcome_of,
    target_of,
)
from ndagent.formats._claude_help import HELP
from ndagent.formats._claude_usage import cost_of, running_totals, usage_of
from ndagent.formats.base import Format
from ndagent.model import Answer, Note, RunEnd, RunStart, Text, ToolEnd, ToolStart, epoch_ms
from ndagent.terminal import quote

NAME = "claude"

# The checks of this format that ``validate`` adds to the generic ones (docs/agents.md#validate).
CHECKS = {
    "session": ("warning", "an event's session_id is not the one its run began with"),
    "init": ("warning", "a run does not begin with system/init (after any hook lines)"),
    "fields": ("error", "a result lacks is_error (a boolean), duration_ms, num_turns, "
                        "session_id, or, when is_error is false, result"),
    "result-index": ("warning", "result_index does not grow by one from run to run"),
    "answer": ("warning", "the result's text is not the text of the run's last "
                          "main-thread assistant message"),
    "deltas": ("warning", "the text deltas of a block differ from the whole block that "
                          "follows them"),
    "api-retry": ("warning", "the CLI retried a request to the API (system/api_retry)"),
    "call-open": ("warning", "a tool_use is still open at a result that says the run went "
                             "well (a CLI with user hooks did this)"),
}

# How many streamed text blocks of one message are kept track of at once: a hostile
# stream may start blocks without end.  The oldest are dropped beyond.
MAX_TRACKED = 4096

# Events that begin no run: information between runs or inside one.
_INFORMATION = ("system", "rate_limit_event")


# The types of the objects ``decides`` may find decisive.
_DECISIVE_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event",
                             "rate_limit_event", "conversation_reset"})


def may_decide(kind):
    """Whether an object of type ``kind`` (a string) can be decisive for Claude."""
    return kind in _DECISIVE_TYPES


def decides(data):
    """Whether a decoded object is Claude's and no other agent's
    (docs/agents.md#decisive-tests): not one of the agents that write Claude's
    envelope (``lookalike``)."""
    return _decides(data) and lookalike(data) is None


def _decides(data):
    if "sessionId" in data:  # a line of a session file (claude_session), never a stream's
        return False
    kind = data.get("type")
    # The most frequent types first, with no any(): after detection, this runs on every
    # assistant line of a Cursor stream (formats.OtherAgents).
    if kind == "assistant" or kind == "user":
        if "uuid" in data:
            return True
        message = data.get("message")
        if message.__class__ is not dict:
            return False
        if "id" in message:
            return True
        content = message.get("content")
        if content.__class__ is list:
            for block in content:
                if block.__class__ is dict and block.get("type") == "tool_result":
                    return True
        return False
    if kind == "system":
        subtype = data.get("subtype")
        if subtype == "init":
            return data.get("tools").__class__ is list or "claude_code_version" in data
        return subtype.__class__ is str
    if kind == "result":
        return "num_turns" in data or "total_cost_usd" in data or "modelUsage" in data
    return kind in ("stream_event", "rate_limit_event", "conversation_reset")


# The types of the Claude-compatible agents' lines that carry their thread id (Amp's).
_ENVELOPE_TYPES = frozenset({"system", "user", "assistant", "result"})


def lookalike(data):
    """The name of an agent ndagent does not read that writes Claude's envelope, when
    the object is that agent's (docs/agents.md#claude-compatible-agents), or None."""
    kind = data.get("type")
    session = data.get("session_id")
    if session.__class__ is str and session.startswith("T-") and kind in _ENVELOPE_TYPES:
        return "Amp"  # a thread id on every line
    return "Qwen Code" if _qwen(kind, data) else None


def _qwen(kind, data):
    """Qwen Code's init (its version), assistant lines (the uuid is the message id),
    results (no cost) and message_start (no usage)."""
    if "qwen_code_version" in data:
        return True
    if kind == "assistant":
        message, uuid = data.get("message"), data.get("uuid")
        return uuid.__class__ is str and message.__class__ is dict and message.get("id") == uuid
    if kind == "result":
        return ("uuid" in data and "num_turns" in data and "total_cost_usd" not in data
                and "modelUsage" not in data)
    event = data.get("event") if kind == "stream_event" else None
    if event.__class__ is not dict or event.get("type") != "message_start":
        return False
    message = event.get("message")
    return message.__class__ is dict and "id" in message and "usage" not in message


def _refuses(data):
    found = lookalike(data)
    return None if found is None else f"not a stream of a supported agent: looks like {found}"


def markers(needs):
    """The decoder markers of the lines that can matter for ``needs``.

    Always: ``system`` (runs begin at init; the other subtypes must be told from it),
    ``result`` (runs end), ``rate_limit_event`` (begins no run, so it must be seen) and
    ``assistant`` (tool calls, text, a failed local command, the answer of a run cut
    off).  ``user`` lines end tool calls; ``stream_event`` lines carry text deltas, for
    the text and for the answer of a run cut off in the middle of a message (not
    ``native``: the native object is the result event's)."""
    found = [(("type", "system"),), (("type", "result"),), (("type", "rate_limit_event"),),
             (("type", "assistant"),)]
    if "text" in needs or "ends" in needs:
        found.append((("type", "stream_event"),))
    if "tools" in needs or "tool_ends" in needs:
        found.append((("type", "user"),))
    return tuple(found)


class _Run:
    """What is known of the run in progress."""

    __slots__ = ("start", "session_id", "session_reported", "last_source", "last_line",
                 "calls", "errors", "local_failure", "api_error", "message", "text",
                 "streamed", "unchecked", "has_message")

    def __init__(self, start, calls):
        self.start = start
        self.session_id = start.session_id
        self.session_reported = False
        self.last_source = start.source
        self.last_line = start.line
        # The calls open: call id -> (kind, name); and the ids of the calls whose
        # tool_result had is_error true, which the result's permission_denials may
        # still make denied.  The Reader's (``_Calls``), emptied for each run.
        self.calls, self.errors = calls
        self.local_failure = None  # the text of a failed local command's message
        # The text of the last main-thread message when the CLI made it of an API
        # error (a run that ends on one failed, whatever its result says).
        self.api_error = None
        # The last main-thread assistant message: its key, and its text so far (the
        # deltas and whole text blocks, joined with nothing).
        self.message = None
        self.text = None
        self.has_message = False
        # Its text blocks that came as deltas: content index -> a digest of their text
        # (None when not checking), and those not yet followed by their whole block.
        self.streamed = {}
        self.unchecked = []

    def enter(self, key):
        """The main-thread message a line belongs to, by its id: a new one when the id
        differs (an unnamed message, begun by deltas whose message_start was not seen,
        takes the first id it is given)."""
        if not self.has_message or (key != self.message and self.message is not None):
            self.new_message(key)
        else:
            self.message = key

    def new_message(self, key):
        self.message = key
        self.text = StringIO()
        self.has_message = True
        self.streamed = {}
        self.unchecked = []

    def answer(self):
        """The text of the last main-thread message, or None when there was none."""
        return self.text.getvalue() if self.has_message else None


# A needle found in each line at which a stream may be split (``splits_between``).
SPLIT_NEEDLE = b'"init"'


def splits_between(before, after, checks):
    """Whether a stream may be cut between the adjacent lines that decode to the
    objects ``before`` and ``after`` and each part read on its own, with the same
    findings: a result ends the run in hand (the Reader holds no run after it) and
    system/init begins the next; but not for a Reader with ``checks``, which follows
    ``result_index`` from one run to the next."""
    return (not checks and before.get("type") == "result"
            and after.get("type") == "system" and after.get("subtype") == "init")


class Reader:
    """Turns one input's decoded items into model events (``ndagent.model``)."""

    def __init__(self, source, checks=False, needs=None):
        # ``source``: the input's name, which every item carries too.
        self.checks = checks
        # Whether to make Text events: the run's text is kept for its answer either way.
        self.texts = needs is None or "text" in needs
        self.run = None
        self.last_index = None  # the result_index of the input's previous result
        self.calls = Calls(needs is None or "tools" in needs or "tool_ends" in needs)

    def event(self, event):
        """The model events of one decoded line."""
        data = event.data
        kind = event.type
        run = self.run
        out = []
        if kind == "system" and data.get("subtype") == "init":
            if run is not None:
                out.append(self._cut_off(run))
            run = self._begin(event, data, out)
        elif run is None:
            if kind in _INFORMATION:
                if self.checks and kind == "system":
                    self._system(None, event, data, out)
                return out
            run = self._begin(event, None, out)
        run.last_source, run.last_line = event.source, event.line
        if self.checks:
            self._check_session(run, event, data, out)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, run, event, data, out)
        return out

    def awaits_run(self):
        return self.run is None

    def skipped(self, item):
        """Lines passed over: they cannot be of a kind that begins no run, so after a
        result they begin the next one."""
        out = []
        run = self.run
        if run is None:
            run = self._begin(item, None, out)
        run.last_source, run.last_line = item.source, item.line
        return out

    def finish(self):
        """The end of the input: the run in progress, if any, was cut off."""
        run = self.run
        if run is None:
            return []
        return [self._cut_off(run)]

    # Runs.

    def _begin(self, item, init, out):
        if init is None:
            start = RunStart(agent=NAME, source=item.source, line=item.line)
        else:
            start = RunStart(agent=NAME, session_id=_string(init.get("session_id")),
                             model=_string(init.get("model")), cwd=_string(init.get("cwd")),
                             announced=True, source=item.source, line=item.line)
        out.append(start)
        if init is None and self.checks:
            out.append(Note(check="init", message="the run does not begin with system/init",
                            source=item.source, line=item.line))
        run = self.run = _Run(start, self.calls.emptied())
        return run

    def _cut_off(self, run):
        """The RunEnd of a run that the input, or the next run, cut off: the answer it
        would have had is its last main-thread message's text."""
        self.run = None
        return RunEnd(start=run.start, cutoff=True, ok=False, answer=run.answer(),
                      model=run.start.model, source=run.last_source, line=run.last_line)

    def _result(self, run, event, data, out):
        self.run = None
        failure = _failure(data, run.local_failure, run.api_error)
        ok = failure is None
        answer = data.get("result") if ok else None
        if self.checks:
            self._check_result(run, event, data, ok, out)
        usage, cost = usage_of(data), cost_of(data)
        out.append(RunEnd(start=run.start, cutoff=False, ok=ok, failure=failure,
                          answer=answer if answer.__class__ is str else None, native=data,
                          usage=usage, cost_usd=cost,
                          duration_ms=_number(data.get("duration_ms")), model=run.start.model,
                          outcomes=_denied_calls(run, data.get("permission_denials")),
                          totals=running_totals(run.start, data, usage, cost),
                          source=event.source, line=event.line))

    # Assistant lines: text and tool calls.

    def _assistant(self, run, event, data, out):
        message = data.get("message")
        if message.__class__ is not dict:
            return
        content = message.get("content")
        if content.__class__ is str:
            content = ({"type": "text", "text": content},)
        elif content.__class__ is not list:
            return
        parent = data.get("parent_tool_use_id")
        key = _string(message.get("id"))
        main = parent is None
        if main:
            run.enter(key)
        for block in content:
            if block.__class__ is not dict:
                continue
            kind = block.get("type")
            if kind == "text":
                if main:
                    self._whole_text(run, event, block.get("text"), out)
            elif kind == "tool_use" or kind == "server_tool_use":
                out.append(self._tool_start(run, event, data, block, key, parent, out))
            elif kind.__class__ is str and kind.endswith("_tool_result"):
                out.append(self._server_tool_end(run, event, data, block, parent))
        if main:
            if run.local_failure is None and _local_command_failed(data, message):
                run.local_failure = _message_text(content)
            run.api_error = (_message_text(content) or _string(data.get("error")) or "API error"
                             if _api_error_message(data) else None)

    def _whole_text(self, run, event, text, out):
        """A whole text block: a text piece, unless it came as deltas already (then it
        only checks them)."""
        if text.__class__ is not str:
            return
        if run.unchecked:
            digest = run.unchecked.pop(0)
            if digest is not None and not digest.matches(text):
                out.append(Note(check="deltas", message="the text deltas of a block differ "
                                "from the whole block", source=event.source, line=event.line))
            return
        if text:
            run.text.write(text)
            if self.texts:
                out.append(Text(text=text, message=run.message, source=event.source,
                                line=event.line))

    def _tool_start(self, run, event, data, block, message_id, parent, out):
        call_id = _string(block.get("id"))
        name = _string(block.get("name"))
        kind = kind_of(name, block.get("type") == "server_tool_use")
        args = block.get("input")
        keep_open(run, call_id, kind, name, event, out)
        return ToolStart(call_id=call_id, kind=kind, name=name, args=args,
                         target=target_of(kind, name, args),
                         session_id=_string(data.get("session_id")),
                         model_call_id=_string(message_id), parent=_string(parent),
                         time_ms=_epoch_ms(data.get("timestamp")), source=event.source,
                         line=event.line)

    def _server_tool_end(self, run, event, data, block, parent):
        """The end of one of the API's own tools (``web_search_tool_result``, ...), in the
        same assistant message as its start."""
        content = block.get("content")
        failed = content.__class__ is dict and str(content.get("type")).endswith("_error")
        call_id = _string(block.get("tool_use_id"))
        return self._tool_end(run, event, data, call_id, open_call(run, call_id),
                              "error" if failed else "success", content, parent)

    def _tool_end(self, run, event, data, call_id, known, outcome, result, parent):
        """The ToolEnd of ``call_id`` (a string or None); ``known``: (kind, name) of
        its start, or None."""
        kind, name = known or (None, None)
        return ToolEnd(call_id=call_id, kind=kind, name=name,
                       session_id=_string(data.get("session_id")), parent=_string(parent),
                       time_ms=_epoch_ms(data.get("timestamp")), outcome=outcome,
                       result=result, source=event.source, line=event.line)

    # User lines: tool results.

    def _user(self, run, event, data, out):
        message = data.get("message")
        content = message.get("content") if message.__class__ is dict else None
        if content.__class__ is not list:
            return  # a prompt: a string, or text blocks
        results = [block for block in content
                   if block.__class__ is dict and block.get("type") == "tool_result"]
        # The tool's structured output belongs to the line, so to its one result only.
        extra = data.get("tool_use_result") if len(results) == 1 else None
        parent = data.get("parent_tool_use_id")
        for block in results:
            call_id = _string(block.get("tool_use_id"))
            known = open_call(run, call_id)
            result = {"content": block.get("content")}
            if extra is not None:
                result["tool_use_result"] = extra
            outcome = outcome_of(block, known[0] if known else None)
            if outcome != "success" and call_id is not None and run.errors is not None:
                run.errors.keep(call_id, True, 0, event, out)
            out.append(self._tool_end(run, event, data, call_id, known, outcome, result,
                                      parent))

    # Partial messages.

    def _stream_event(self, run, event, data, out):
        if data.get("parent_tool_use_id") is not None:
            return  # a subagent's: never text
        inner = data.get("event")
        if inner.__class__ is not dict:
            return
        kind = inner.get("type")
        if kind == "content_block_delta":
            delta = inner.get("delta")
            if delta.__class__ is dict and delta.get("type") == "text_delta":
                self._delta(run, event, inner.get("index"), delta.get("text"), out)
        elif kind == "message_start":
            message = inner.get("message")
            run.enter(_string(message.get("id")) if message.__class__ is dict else None)
        elif kind == "content_block_start":
            block = inner.get("content_block")
            if block.__class__ is dict and block.get("type") == "text":
                self._open_block(run, _index(inner.get("index")))
                self._delta(run, event, inner.get("index"), block.get("text"), out)

    def _open_block(self, run, index):
        """A text block that comes as deltas (``index``: its place in the message):
        its whole text, when it follows, is not text again, only checked against them."""
        if not run.has_message:
            run.new_message(None)
        digest = Answer() if self.checks else None
        streamed = run.streamed
        streamed.pop(index, None)
        streamed[index] = digest
        run.unchecked.append(digest)
        if len(streamed) > MAX_TRACKED:
            del streamed[next(iter(streamed))]
        if len(run.unchecked) > MAX_TRACKED:
            del run.unchecked[0]
        return digest

    def _delta(self, run, event, index, text, out):
        if text.__class__ is not str or not text:
            return
        index = _index(index)
        if run.has_message and index in run.streamed:
            digest = run.streamed[index]
        else:
            digest = self._open_block(run, index)  # its start was not seen
        if digest is not None:
            digest.add(text)
        run.text.write(text)
        if self.texts:
            out.append(Text(text=text, message=run.message, source=event.source,
                            line=event.line))

    # System lines and checks.

    def _system(self, run, event, data, out):
        if self.checks and data.get("subtype") == "api_retry":
            out.append(Note(check="api-retry", message=_retry_message(data),
                            source=event.source, line=event.line))

    def _check_session(self, run, event, data, out):
        session_id = data.get("session_id")
        if session_id.__class__ is not str:
            return
        if run.session_id is None:
            run.session_id = session_id
        elif session_id != run.session_id and not run.session_reported:
            run.session_reported = True
            out.append(Note(check="session", message=f'session_id "{quote(session_id)}", '
                            f'not "{quote(run.session_id)}" as the run began with',
                            source=event.source, line=event.line))

    def _check_result(self, run, event, data, ok, out):
        def note(check, message):
            out.append(Note(check=check, message=message, source=event.source,
                            line=event.line))

        problems = _result_problems(data)
        if problems:
            note("fields", "the result " + "; ".join(problems))
        index = data.get("result_index")
        if index.__class__ is int:
            if self.last_index is not None and index != self.last_index + 1:
                note("result-index", f"result_index {index} follows {self.last_index}")
            self.last_index = index
        text = data.get("result")
        if ok and text.__class__ is str and run.has_message:
            last = run.text.getvalue()
            if text != last:
                note("answer", f"the result's text ({len(text)} characters) is not the last "
                               f"main-thread message's ({len(last)} characters)")


_HANDLERS = {
    "assistant": Reader._assistant,
    "user": Reader._user,
    "stream_event": Reader._stream_event,
    "result": Reader._result,
    "system": Reader._system,
}


def _string(value):
    return value if value.__class__ is str else None


def _index(value):
    """A content block's index as a key: an integer, or None for anything else."""
    return value if value.__class__ is int else None


def _number(value):
    """A JSON number as a number, or None (a RawNumber is no number to compute with)."""
    return value if value.__class__ is int or value.__class__ is float else None


def _denied_calls(run, denials):
    """{call_id: "permissionDenied"} of the calls that ``permission_denials`` lists and
    that ended with is_error true or are still open (docs/model.md#outcomes-per-agent:
    the first match of an error; a call that succeeded stays a success), or None."""
    if denials.__class__ is not list:
        return None
    found = None
    for denial in denials:
        call_id = denial.get("tool_use_id") if denial.__class__ is dict else None
        if call_id.__class__ is str and run.calls is not None and (
                run.errors.get(call_id) is not None or run.calls.get(call_id) is not None):
            if found is None:
                found = {}
            found[call_id] = "permissionDenied"
    return found


def _message_text(content):
    """The text blocks of a message's content, joined with nothing."""
    return "".join(block["text"] for block in content
                   if block.__class__ is dict and block.get("type") == "text"
                   and block.get("text").__class__ is str)


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
    return data.get("is_api_error_message") is True or _filled(data.get("error"))


def _filled(text):
    return text.__class__ is str and text.strip() != ""


def _failure_text(data):
    """The joined ``errors``, else ``result``, else a subtype other than ``success``,
    else the API's HTTP status, else the terminal reason."""
    errors = data.get("errors")
    if errors.__class__ is list:
        texts = [error for error in errors if _filled(error)]
        if texts:
            return "; ".join(texts)
    text = data.get("result")
    if _filled(text):
        return text
    subtype = data.get("subtype")
    if _filled(subtype) and subtype != "success":
        return subtype
    status = data.get("api_error_status")
    if status is not None and status.__class__ is not bool and \
            status.__class__ in (int, float, str):
        return f"API error (HTTP {status})"
    reason = data.get("terminal_reason")
    if _filled(reason):
        return reason
    return "the result reports is_error"


def _result_problems(data):
    """What a result lacks of the fields every version writes."""
    problems = []
    if data.get("is_error").__class__ is not bool:
        problems.append('has no boolean "is_error"')
    for name, kinds in (("duration_ms", (int, float, RawNumber)),
                        ("num_turns", (int, RawNumber)), ("session_id", (str,))):
        if name not in data:
            problems.append(f'has no "{name}"')
        elif data[name].__class__ not in kinds:
            problems.append(f'has a "{name}" of the wrong type')
    if data.get("is_error") is False and data.get("result").__class__ is not str:
        problems.append('has no "result" text, with is_error false')
    return problems


def _retry_message(data):
    attempt, most = data.get("attempt"), data.get("max_retries")
    error = data.get("error")
    said = "the CLI retried a request to the API"
    if _number(attempt) is not None and _number(most) is not None:
        said += f" (attempt {attempt} of {most})"
    if _filled(error):
        said += f': "{quote(error)}"'
    return said


def _epoch_ms(value):
    """An ISO 8601 timestamp in epoch milliseconds, or None; without a zone, UTC."""
    return epoch_ms(value, zone_required=False)


FORMAT = Format(
    name=NAME,
    title="Claude Code",
    invocation="claude -p --output-format stream-json --verbose",
    decides=decides,
    may_decide=may_decide,
    markers=markers,
    run_starts=[(("type", "system"), ("subtype", "init"))],
    reader=Reader,
    checks=CHECKS,
    run_end="a result event",
    noise_lines=(b"(node:", b"(Use `node --trace-"),  # Node's warnings, from stderr
    splits_between=splits_between,
    split_needle=SPLIT_NEEDLE,
    refuses=_refuses,
    running_total="process",
    help=HELP,
    order=20,
)
