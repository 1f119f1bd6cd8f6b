"""The stream Claude Code prints, and Qwen Code and Amp print in its envelope: how it is
read, whichever of the three wrote it (this module declares no agent; ``claude``,
``qwen`` and ``amp`` each declare theirs, with a Reader made from the one here).

Runs begin at ``system/init`` (or at the first event after a ``result``; ``hook_*``
and ``rate_limit_event`` lines are information only) and end at their ``result``;
text is keyed by the message and handed on once (deltas, then the whole block, are
compared); subagents' lines give calls (``parent``), no text; the ``result``'s
``permission_denials`` may make a call denied after its ``tool_result``; the answer
is the last main-thread message's text, the json object the ``result`` as it is.
What differs from agent to agent (tool names, outcomes, failures, figures, checks) is
what each agent's Reader says in the methods it overrides."""

from io import StringIO
from sys import getsizeof

from ndagent.formats.base import Holding, joined_texts, result_json, text_or_none
from ndagent.jsonvalues import RawNumber
from ndagent.model import (
    READER_CALL_BYTES,
    Answer,
    Kept,
    Note,
    Prompt,
    RunEnd,
    RunStart,
    Text,
    Thinking,
    ToolEnd,
    ToolStart,
    epoch_ms,
)
from ndagent.terminal import quote

# How many streamed text blocks of one message are kept track of at once (a hostile
# stream may start blocks without end); the oldest are dropped beyond.
MAX_TRACKED = 4096

# Events that begin no run: information between runs or inside one.
_INFORMATION = ("system", "rate_limit_event")

# The types of the lines that the markers take always: under the need "whole_text",
# the lines of any other type (the deltas) are held, unread, until a line of these says
# whether they are needed (``Reader._holding``).
_READ_TYPES = frozenset({"system", "result", "rate_limit_event", "assistant", "user"})


def markers(needs):
    """The decoder markers of the lines that can matter for ``needs``.

    Always: ``system`` (runs begin at init; the other subtypes must be told from it),
    ``result`` (runs end), ``rate_limit_event`` (begins no run, so it must be seen) and
    ``assistant`` (tool calls, text, usage, a failed local command, the answer of a run
    cut off).  ``user`` lines end tool calls; ``stream_event`` lines carry text deltas,
    for the text and for the answer of a run cut off in the middle of a message, and
    messages' figures (not ``native``: the native object is the result event's); under
    "whole_text" (a message's text may come whole), only for the figures.  Where both
    matter, None (every line): the few lines of other types (a notice, another agent's
    line) cost less to decode than the search of them all."""
    deltas = "messages" in needs or "whole_text" not in needs and (
        "text" in needs or "ends" in needs)
    calls = "tools" in needs or "tool_ends" in needs or "transcript" in needs
    if deltas and calls:
        return None
    found = [(("type", "system"),), (("type", "result"),), (("type", "rate_limit_event"),),
             (("type", "assistant"),)]
    if deltas:
        found.append((("type", "stream_event"),))
    if calls:
        found.append((("type", "user"),))
    return tuple(found)


def holds_text(data):
    """Whether a line's message holds text: its content a string, or a list with a text
    block (an assistant line that repeats deltas; a user line that is a prompt)."""
    message = data.get("message")
    content = message.get("content") if message.__class__ is dict else None
    if content.__class__ is str:
        return True
    return content.__class__ is list and any(
        block.__class__ is dict and block.get("type") == "text" for block in content)


# Node's warnings, which the three CLIs (Node programs) write on stderr, often merged
# into the stream.
NODE_WARNINGS = (b"(node:", b"(Use `node --trace-")

# The objects a run begins with.
RUN_STARTS = [(("type", "system"), ("subtype", "init"))]

# A needle found in each line at which a stream may be split (``splits_between``).
SPLIT_NEEDLE = b'"init"'


# What the three agents' Format objects say alike of the envelope.
def result_text(end):
    """What a transcript shows of a call's result: a tool_result's content when a
    string, the texts of its blocks when a list, else the JSON."""
    result = end.result
    if result.__class__ is not dict or "content" not in result:
        return result_json(result)
    content = result["content"]
    if content.__class__ is list:
        texts = joined_texts(content)
        if texts is not None:
            return texts
    return result_json(content)


ENVELOPE = {"markers": markers, "run_starts": RUN_STARTS, "run_end": "a result event",
            "noise_lines": NODE_WARNINGS, "split_needle": SPLIT_NEEDLE,
            "result_text": result_text, "reports_messages": True}


def result_then_init(before, after):
    """Whether a result ends the run in hand (the Reader holds no run after it) and
    system/init begins the next."""
    return (before.get("type") == "result" and after.get("type") == "system"
            and after.get("subtype") == "init")


class Calls:
    """What a Reader keeps of the calls of the run in hand (``_Run.calls`` and
    ``errors``), where tool calls are needed; each in bounded memory (``Kept``)."""

    def __init__(self, needed):
        self.kept = (Kept(READER_CALL_BYTES, "the tool calls open at once",
                          "the oldest are forgotten (their results name no tool)"),
                     Kept(READER_CALL_BYTES, "the calls that ended in an error",
                          "the oldest are forgotten (permission_denials cannot make "
                          "them denied)")) if needed else (None, None)

    def emptied(self):
        for kept in self.kept:
            if kept is not None:
                kept.close()
        return self.kept


def keep_open(run, call_id, kind, name, item, out):
    """Keep the kind and name of a call that starts, which its tool_result will not
    tell, where calls are kept; a Note in ``out`` when the oldest must be forgotten."""
    if call_id is not None and run.calls is not None:
        run.calls.keep(call_id, (kind, name), getsizeof(name), item, out)


def open_call(run, call_id):
    """(kind, name) of the open call ``call_id``, which ends, or None."""
    calls = run.calls
    return None if call_id is None or calls is None else calls.complete(call_id)


class _Run:
    """What is known of the run in progress."""

    __slots__ = ("start", "session_id", "session_reported", "last_source", "last_line",
                 "calls", "errors", "local_failure", "api_error", "message", "text",
                 "streamed", "unchecked", "has_message", "usage", "agents", "said")

    def __init__(self, start, calls):
        self.start = start
        self.session_id = start.session_id
        self.session_reported = False
        self.last_source = start.source
        self.last_line = start.line
        # The calls open: call id -> (kind, name); and the ids of the calls whose
        # tool_result had is_error true, which the result's permission_denials may
        # still make denied.  The Reader's (``Calls``), emptied for each run.
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
        # The usage summed over the run's assistant lines, where an agent's figures
        # are those (Amp's), and the subagent calls open (Qwen Code's): what each
        # agent's Reader keeps.
        self.usage = None
        self.agents = None
        self.said = None  # the checks said once a run, and said

    def said_once(self, check):
        """Whether ``check`` may be said now, being said at most once in the run."""
        if self.said is None:
            self.said = set()
        elif check in self.said:
            return False
        self.said.add(check)
        return True

    def enter(self, key):
        """The main-thread message a line belongs to, by its key: a new one when the key
        differs (an unnamed message, begun by deltas whose message_start was not seen,
        takes the first key it is given)."""
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


class Reader(Holding):
    """Turns one input's decoded items into model events (``ndagent.model``).  An agent's
    Reader sets ``NAME`` and overrides what its stream says otherwise: ``kind_of``,
    ``target_of``, ``outcome_of`` (its tools), ``message_key``, ``failure``,
    ``figures``, ``init_problem``, ``assistant_line``, ``result_problems``,
    ``mid_run_result`` and ``system``."""

    NAME = None
    # Whether the results carry ``result_index``, followed from run to run (Claude's).
    FOLLOWS_INDEX = False
    # The key of system/init that holds the CLI's version, or None.
    VERSION_KEY = None
    # What makes the Message events for the need "messages": the class of
    # ``_claude_messages.Messages``, which each agent's Reader sets (a part of the
    # envelope this module, a part too, cannot import).
    MESSAGES = None
    # Whether the stream may hold deltas, which the need "whole_text" passes over.
    HOLDS_DELTAS = True

    def __init__(self, source, checks=False, needs=None):
        # ``source``: the input's name, which every item carries too.
        self.checks = checks
        # Whether to make Text events: the run's text is kept for its answer either way.
        self.texts = needs is None or "text" in needs
        # Whether to make the prompt, the thinking and the stream times (a transcript's).
        self.transcript = needs is not None and "transcript" in needs
        # The Message events' tracker, when they are needed.
        self.messages = (self.MESSAGES() if needs is not None and "messages" in needs
                         else None)
        self.run = None
        # (session_id, result_index) of the input's previous result: a process's.
        self.last_index = None
        self.calls = Calls(needs is None or "tools" in needs or "tool_ends" in needs)
        # Whether to make ToolStart events (a call's end names its kind and name too).
        self.starts = needs is None or "tools" in needs or "transcript" in needs
        self.handlers = {"assistant": self._assistant, "user": self._user,
                         "stream_event": self._stream_event, "result": self._result,
                         "system": self.system}
        # Under "whole_text", the deltas are held (``Holding``).
        if (needs is not None and "whole_text" in needs and self.messages is None
                and not checks and self.HOLDS_DELTAS):
            self.event, self.skipped, self.finish = (self._holding, self._holding_skipped,
                                                     self.finish_holding)

    def event(self, event):
        """The model events of one decoded line."""
        data = event.data
        kind = event.type
        run = self.run
        out = []
        if kind == "system" and data.get("subtype") == "init":
            if run is not None:
                self._cut_off(run, out)
            run = self._begin(event, data, out)
        elif run is None:
            if kind in _INFORMATION:
                if self.checks and kind == "system":
                    self.system(None, event, data, out)
                return out
            run = self._begin(event, None, out)
        run.last_source, run.last_line = event.source, event.line
        if self.transcript and run.start.time_ms is None and "timestamp" in data:
            run.start.time_ms = _epoch_ms(data["timestamp"])
        if self.checks:
            self._check_session(run, event, data, out)
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(run, event, data, out)
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
        out = []
        if run is not None:
            self._cut_off(run, out)
        return out

    # Under "whole_text": a main-thread message's text comes from its whole lines; the
    # deltas are read only where none follows them (a run cut off in the middle of a
    # message).  The lines of the types that are always read (_READ_TYPES) decide: a
    # main-thread assistant line that holds text drops what is held before it, one that
    # holds none (a tool call, thinking) leaves it held, any other line reads it first.
    # The lines of other types are held, decoded or passed over alike, so that the
    # prefilter changes nothing.  Held lines read before their whole line came (past the
    # bounds) gave the text of their block: the rest of it is read too.

    def _holding(self, event):
        if event.type in _READ_TYPES:
            if self.held:
                self._settle(event)
            return self.read_now(event)
        out = self._awaited(event)
        self.hold(event)
        return out

    def _settle(self, event):
        """What a line that is always read makes of the lines held before it."""
        if event.type != "assistant" or event.data.get("parent_tool_use_id") is not None \
                or (self.run and self.run.unchecked):
            self.release()
        elif holds_text(event.data):
            self.drop()

    def _holding_skipped(self, item):
        out = self._awaited(item)
        self.hold(item)
        return out

    def _awaited(self, item):
        """A held line after a run's end begins the next one, as when it is read."""
        if self.run is not None:
            return []
        out = []
        self._begin(item, None, out)
        return out

    # What each agent's Reader says of its own stream.

    def kind_of(self, name, server):
        """The common kind of a tool name (``server``: one of the API's own tools)."""
        raise NotImplementedError

    def target_of(self, kind, name, args):
        """What a call acts on, for people, or None."""
        raise NotImplementedError

    def outcome_of(self, block, kind):
        """How a tool_result block says its call ended, as far as known then."""
        return "success" if block.get("is_error") is not True else "error"

    def message_key(self, event, message):
        """The key that tells an assistant line's message from the others: its id."""
        return text_or_none(message.get("id"))

    def failure(self, run, data):
        """Why the run that ``data`` (its result) ends failed, or None."""
        raise NotImplementedError

    def figures(self, run, data):
        """(usage, cost, totals) of the run that ``data`` (its result) ends."""
        raise NotImplementedError

    def init_problem(self, init):
        """What ``validate`` says of a run's init (None when it is as it should be)."""
        return None

    def assistant_line(self, run, event, data, message, content, main, out):
        """What else an assistant line says (``main``: of the main thread)."""

    def result_problems(self, data):
        """What a result lacks of the fields every version writes."""
        return _result_problems(data)

    def mid_run_result(self, run, event, data, out):
        """Whether a result ends nothing (a subagent's, in the middle of the run)."""
        return False

    def system(self, run, event, data, out):
        """A system line other than init (``run`` None: between runs)."""

    # Runs.

    def _begin(self, item, init, out):
        if init is None:
            start = RunStart(agent=self.NAME, source=item.source, line=item.line)
        else:
            start = RunStart(agent=self.NAME, session_id=text_or_none(init.get("session_id")),
                             model=text_or_none(init.get("model")),
                             cwd=text_or_none(init.get("cwd")),
                             version=(None if self.VERSION_KEY is None
                                      else text_or_none(init.get(self.VERSION_KEY))),
                             announced=True, source=item.source, line=item.line)
        out.append(start)
        if self.checks:
            problem = ("the run does not begin with system/init" if init is None
                       else self.init_problem(init))
            if problem is not None:
                out.append(Note(check="init", message=problem, source=item.source,
                                line=item.line))
        run = self.run = _Run(start, self.calls.emptied())
        if self.messages is not None:
            self.messages.reset()
        return run

    def _cut_off(self, run, out):
        """The RunEnd of a run that the input, or the next run, cut off, in ``out``
        (after the message in hand): the answer it would have had is its last
        main-thread message's text."""
        self.run = None
        if self.messages is not None:
            self.messages.flush(out)
        out.append(RunEnd(start=run.start, cutoff=True, ok=False, answer=run.answer(),
                      model=run.start.model, source=run.last_source, line=run.last_line))

    def _result(self, run, event, data, out):
        if self.mid_run_result(run, event, data, out):
            return
        self.run = None
        failure = self.failure(run, data)
        ok = failure is None
        answer = data.get("result") if ok else None
        if self.checks:
            self._check_result(run, event, data, ok, out)
        usage, cost, totals = self.figures(run, data)
        if self.messages is not None:
            self.messages.flush(out)
        out.append(RunEnd(start=run.start, cutoff=False, ok=ok, failure=failure,
                          answer=answer if answer.__class__ is str else None, native=data,
                          usage=usage, cost_usd=cost,
                          duration_ms=number(data.get("duration_ms")), model=run.start.model,
                          outcomes=_denied_calls(run, data.get("permission_denials")),
                          totals=totals, time_ms=_epoch_ms(data.get("timestamp")),
                          error_type=None if ok else _error_type(data),
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
        key = self.message_key(event, message)
        main = parent is None
        if main:
            run.enter(key)
            if self.messages is not None:
                self.messages.line(event, key, message, out)
        for block in content:
            if block.__class__ is not dict:
                continue
            kind = block.get("type")
            if kind == "text":
                if main:
                    self._whole_text(run, event, block.get("text"), out)
            elif kind == "thinking":
                text = block.get("thinking")
                if main and self.transcript and text.__class__ is str and text:
                    out.append(Thinking(text=text, message=run.message, source=event.source,
                                        line=event.line))
            elif kind == "tool_use" or kind == "server_tool_use":
                self._tool_start(run, event, data, block, key, parent, out)
            elif kind.__class__ is str and kind.endswith("_tool_result"):
                out.append(self._server_tool_end(run, event, data, block, parent))
        self.assistant_line(run, event, data, message, content, main, out)

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
                out.append(self._text(run, event, text))

    def _text(self, run, event, text):
        """A Text piece of the main thread's message in hand, with its time for a
        transcript."""
        stamp = event.data.get("timestamp") if self.transcript else None
        return Text(text, run.message, event.source, event.line,
                    None if stamp is None else _epoch_ms(stamp))

    def _tool_start(self, run, event, data, block, message_key, parent, out):
        """The call kept open, and its ToolStart in ``out`` where starts are wanted."""
        call_id = text_or_none(block.get("id"))
        name = text_or_none(block.get("name"))
        kind = self.kind_of(name, block.get("type") == "server_tool_use")
        keep_open(run, call_id, kind, name, event, out)
        if not self.starts:
            return
        args = block.get("input")
        out.append(ToolStart(
            call_id=call_id, kind=kind, name=name, args=args,
            target=self.target_of(kind, name, args),
            session_id=text_or_none(data.get("session_id")),
            model_call_id=text_or_none(message_key), parent=text_or_none(parent),
            time_ms=_epoch_ms(data.get("timestamp")), source=event.source, line=event.line))

    def _server_tool_end(self, run, event, data, block, parent):
        """The end of one of the API's own tools (``web_search_tool_result``, ...), in the
        same assistant message as its start."""
        content = block.get("content")
        failed = content.__class__ is dict and str(content.get("type")).endswith("_error")
        call_id = text_or_none(block.get("tool_use_id"))
        return self._tool_end(event, data, call_id, open_call(run, call_id),
                              "error" if failed else "success", content, parent)

    def _tool_end(self, event, data, call_id, known, outcome, result, parent):
        """The ToolEnd of ``call_id`` (a string or None); ``known``: (kind, name) of
        its start, or None.  A ``parent`` that is the call's own id (older Qwen Code
        wrote it so) is the main thread."""
        kind, name = known or (None, None)
        parent = text_or_none(parent)
        return ToolEnd(call_id=call_id, kind=kind, name=name,
                       session_id=text_or_none(data.get("session_id")),
                       parent=None if parent == call_id else parent,
                       time_ms=_epoch_ms(data.get("timestamp")),
                       outcome=outcome, result=result, source=event.source, line=event.line)

    # User lines: tool results.

    def _user(self, run, event, data, out):
        message = data.get("message")
        content = message.get("content") if message.__class__ is dict else None
        results = [block for block in content
                   if block.__class__ is dict and block.get("type") == "tool_result"
                   ] if content.__class__ is list else None
        if not results:
            # A prompt (replayed with --replay-user-messages): a string, or text blocks.
            if self.transcript and data.get("parent_tool_use_id") is None:
                text = content if content.__class__ is str else (
                    message_text(content) if content.__class__ is list else "")
                if text:
                    out.append(Prompt(text=text, source=event.source, line=event.line))
            return
        # The tool's structured output belongs to the line, so to its one result only.
        extra = data.get("tool_use_result") if len(results) == 1 else None
        parent = data.get("parent_tool_use_id")
        agents = run.agents
        for block in results:
            call_id = text_or_none(block.get("tool_use_id"))
            if agents:
                agents.pop(call_id, None)
            known = open_call(run, call_id)
            result = {"content": block.get("content")}
            if extra is not None:
                result["tool_use_result"] = extra
            outcome = self.outcome_of(block, known[0] if known else None)
            if outcome != "success" and call_id is not None and run.errors is not None:
                run.errors.keep(call_id, True, 0, event, out)
            out.append(self._tool_end(event, data, call_id, known, outcome, result, parent))

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
            run.enter(text_or_none(message.get("id")) if message.__class__ is dict else None)
            if self.messages is not None and message.__class__ is dict:
                self.messages.started(event, message, out)
        elif self.messages is not None:
            if kind == "message_delta":
                self.messages.delta(event, inner.get("usage"), out)
            elif kind == "message_stop":
                self.messages.stopped(event, out)
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
        if index.__class__ is not int:
            index = None
        streamed = run.streamed
        if run.has_message and index in streamed:
            digest = streamed[index]
        else:
            digest = self._open_block(run, index)  # its start was not seen
        if digest is not None:
            digest.add(text)
        run.text.write(text)
        if self.texts:
            out.append(self._text(run, event, text))

    # Checks.

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

        problems = self.result_problems(data)
        if problems:
            note("fields", "the result " + "; ".join(problems))
        index = data.get("result_index")
        if self.FOLLOWS_INDEX and index.__class__ is int:
            session, last = self.last_index or (None, None)
            if last is not None and session == data.get("session_id") and index != last + 1:
                note("result-index", f"result_index {index} follows {last}")
            self.last_index = (data.get("session_id"), index)
        text = data.get("result")
        if ok and text.__class__ is str and run.has_message:
            last = run.text.getvalue()
            if text != last:
                note("answer", f"the result's text ({len(text)} characters) is not the last "
                               f"main-thread message's ({len(last)} characters)")


def _epoch_ms(value):
    """An ISO 8601 timestamp in epoch milliseconds, or None; without a zone, UTC."""
    return epoch_ms(value, zone_required=False)


def _error_type(data):
    """The class of a failed run's failure (docs/model.md#failure-classes): the result's
    subtype when not ``success``, else its API error status, else "_OTHER"."""
    subtype = data.get("subtype")
    if filled(subtype) and subtype != "success":
        return subtype
    status = data.get("api_error_status")
    if status.__class__ is int or filled(status):
        return str(status)
    return "_OTHER"


def _index(value):
    """A content block's index as a key: an integer, or None for anything else."""
    return value if value.__class__ is int else None


def number(value):
    """A JSON number as a number, or None (a RawNumber is no number to compute with)."""
    return value if value.__class__ is int or value.__class__ is float else None


def filled(text):
    """Whether ``text`` is a string with more than blanks."""
    return text.__class__ is str and text.strip() != ""


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


def message_text(content):
    """The text blocks of a message's content, joined with nothing."""
    return "".join(block["text"] for block in content
                   if block.__class__ is dict and block.get("type") == "text"
                   and block.get("text").__class__ is str)


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

