"""The Cursor Agent CLI's stream-json format (``cursor-agent -p --output-format
stream-json``): the one module that knows it.

Tool kinds (the key of ``tool_call`` ending in ``ToolCall``, or ``function``), tool
outcomes, where runs begin and end, how the assistant's answer is rebuilt (the
partial-output rule), the json format's key order, and the schema that ``validate``
checks.  The rules follow docs/formats.md#cursor-agent-cli.
"""

from ndagent.decoder import RawNumber, Skipped
from ndagent.formats._cursor_calls import OUTCOMES, call_id, tool_call
from ndagent.formats.base import Format, result_json, text_or_none, with_exit_code
from ndagent.model import (
    Note,
    Prompt,
    RunEnd,
    RunStart,
    Text,
    Thinking,
    ToolEnd,
    ToolStart,
    json_size,
)
from ndagent.terminal import quote

NAME = "cursor"

# The schema checks (the generic ones are validate's own).
CHECKS = {
    "type": ("error", "an event has no string type"),
    "fields": ("error", "a documented field is missing or of the wrong JSON type"),
    "session": ("error", "an event has no session_id, or not the one of its run"),
    "init": ("warning", "a run does not begin with a system/init event"),
    "result-count": ("error", "a run has a second result event"),
    "after-result": ("error", "an event follows a result without beginning a new run"),
    "unknown-type": ("warning", "an event type or subtype is not documented (--strict)"),
    "unknown-field": ("warning", "a field is not documented (--strict)"),
}

# Checks for what clients must ignore: reported under --strict only.

# The key order of the `json` output format's one object.
JSON_KEY_ORDER = (
    "type", "subtype", "is_error", "duration_ms", "duration_api_ms",
    "result", "session_id", "request_id",
)

def assistant_text(data):
    """The text of an ``assistant`` (or ``user``) event: its content's texts, joined."""
    message = data.get("message")
    if message.__class__ is not dict:
        return ""
    content = message.get("content")
    if content.__class__ is not list:
        return content if content.__class__ is str else ""
    if len(content) == 1:  # the usual case, made quick
        part = content[0]
        text = part.get("text") if part.__class__ is dict else None
        return text if text.__class__ is str else ""
    return "".join(part["text"] for part in content if part.__class__ is dict
                   and part.get("text").__class__ is str)


def is_failure(data):
    """A ``result`` event that reports a failed run: ``is_error`` true or not ``success``."""
    return data.get("is_error") is True or data.get("subtype") != "success"


def json_format(data):
    """A ``result`` event's object in the `json` format's key order, other keys after."""
    ordered = {key: data[key] for key in JSON_KEY_ORDER if key in data}
    if len(ordered) < len(data):
        for key, value in data.items():
            if key not in ordered:
                ordered[key] = value
    return ordered


# Schema (validate).  The documented fields of each kind of event
# (docs/formats.md#cursor-events and docs/formats.md#cursor-quirks-of-real-streams),
# by (type, subtype):
# (required fields, optional fields), each with the Python type of its JSON value (int:
# a non-negative integer).  ``type``, ``subtype`` and ``session_id`` (checked by
# 'session') are known everywhere.  The subtype is None for types whose subtype does not
# matter (result) or is absent (user, assistant).
_MESSAGE = {"message": dict}
_TOOL_CALL = ({"call_id": str, "tool_call": dict}, {"model_call_id": str, "timestamp_ms": int})
FIELDS = {
    ("system", "init"): ({"apiKeySource": str, "cwd": str, "model": str,
                          "permissionMode": str}, {}),
    ("user", None): (_MESSAGE, {}),
    ("assistant", None): (_MESSAGE, {"model_call_id": str, "timestamp_ms": int}),
    ("tool_call", "started"): _TOOL_CALL,
    ("tool_call", "completed"): _TOOL_CALL,
    ("result", None): ({"subtype": str, "is_error": bool, "duration_ms": int, "result": str},
                       {"duration_api_ms": int, "request_id": str, "usage": dict}),
    ("thinking", "delta"): ({}, {"text": str, "timestamp_ms": int}),
    ("thinking", "completed"): ({}, {"timestamp_ms": int}),
    ("interaction_query", "request"): ({}, {"query_type": str, "query": dict}),
    ("interaction_query", "response"): ({}, {"query_type": str, "response": dict}),
}
_SUBTYPED = frozenset(kind for kind, subtype in FIELDS if subtype is not None)
# The event types of the stream: an input with no decisive object whose objects all
# have one of them is read as Cursor (docs/agents.md#when-nothing-is-decisive).
TYPES = frozenset(kind for kind, _ in FIELDS)
# For each kind of event: (required fields, every known field → its type or None).
_SCHEMAS = {
    key: (required, {"type": None, "subtype": None, "session_id": None, **optional,
                     **required})
    for key, (required, optional) in FIELDS.items()
}
_EXPECTED = {str: "a string", bool: "a boolean", int: "a non-negative integer",
             dict: "an object"}

# Keys beside the tool's own object in ``tool_call`` (since 2026.07), in the tool's
# object, and beside the outcome in its ``result``.
_TOOL_SIBLINGS = frozenset({"hookAdditionalContexts", "toolCallId", "startedAtMs",
                            "completedAtMs"})
_TOOL_KEYS = {"function": frozenset({"name", "arguments", "result"})}
_TOOL_KEYS_DEFAULT = frozenset({"args", "result"})
_RESULT_SIBLINGS = frozenset({"isBackground"})


def _describe(value):
    """A JSON value in a few words, for 'must be X, not Y'."""
    if value is None:
        return "null"
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) in (int, float):
        return quote(str(value))
    if type(value) is RawNumber:
        return quote(value.text)
    if type(value) is str:
        return "a string"
    return "an array" if type(value) is list else "an object"


def _shape(data):
    """What an event's type, subtype and keys alone tell, the same for every event of
    that shape: (their problems, the fields whose values must be of a JSON type, with
    that type, and which nested object to check: "message", "tool_call" or None).
    Tuples: the same problems are handed out for every event of the shape."""
    kind = data.get("type")
    if type(kind) is not str:
        return (("type", 'the event has no "type"' if kind is None else
                 f'"type" must be a string, not {_describe(kind)}'),), (), None
    if kind not in TYPES:
        return (("unknown-type", f'unknown event type "{quote(kind)}"'),), (), None
    subtype = data.get("subtype") if kind in _SUBTYPED else None
    schema = _SCHEMAS.get((kind, subtype)) if type(subtype) in (str, type(None)) else None
    if schema is None:
        if kind == "tool_call":
            problem = ("fields", '"subtype" of a tool_call must be "started" or "completed"')
        elif type(subtype) is str:
            problem = ("unknown-type",
                       f'unknown subtype of a "{kind}" event: "{quote(subtype)}"')
        else:
            problem = ("unknown-type", f'a "{kind}" event with no string subtype')
        return (problem,), (), None
    required, known = schema
    problems = [("fields", f'"{name}" is missing') for name in required if name not in data]
    problems += [("unknown-field", f'unknown field "{quote(name)}"') for name in data
                 if name not in known]
    typed = tuple((name, known[name]) for name in data if known.get(name) is not None)
    nested = {"user": "message", "assistant": "message", "tool_call": "tool_call"}.get(kind)
    return tuple(problems), typed, nested


# Shapes seen, (type, subtype, *keys) → _shape(): most events share a few shapes, so
# each is worked out once.  Bounded in bytes, since a hostile stream can make endless
# shapes of long keys: a shape of more than 1/256 of _MAX_SHAPE_BYTES (its keys and
# messages, by model.json_size) is not kept, and the cache is emptied when it would pass
# _MAX_SHAPE_BYTES.  A real stream has a few dozen shapes, of a few hundred bytes each.
_SHAPES = {}
_MAX_SHAPE_BYTES = 4 << 20
_shapes_size = 0


def _remember(key, shape):
    """Cache ``shape`` under ``key``, within the bound."""
    global _shapes_size
    size = json_size([list(key), [message for _, message in shape[0]]])
    if size > _MAX_SHAPE_BYTES >> 8:
        return
    if _shapes_size + size > _MAX_SHAPE_BYTES:
        _SHAPES.clear()
        _shapes_size = 0
    _SHAPES[key] = shape
    _shapes_size += size


def _unknown_keys(data, known, where):
    """'unknown-field' for each key of a nested object that is not documented; ``where``
    is the path to the object (``message.``), the field's path being quoted whole."""
    for name in data:
        if name not in known:
            yield "unknown-field", f'unknown field "{quote(where + name)}"'


def _message_problems(data, role):
    """The problems of a user or assistant event's ``message`` (a list)."""
    message = data["message"]
    if len(message) == 2 and message.get("role") == role:
        content = message.get("content")
        if type(content) is list and all(
                type(part) is dict and len(part) == 2 and part.get("type") == "text"
                and type(part.get("text")) is str for part in content):
            return ()  # the usual case, told quickly
    return list(_message_details(data, role))


def _message_details(data, role):
    message = data["message"]
    if message.get("role") != role:
        yield "fields", f'"message.role" must be "{role}"'
    content = message.get("content")
    if type(content) is not list:
        described = "missing" if content is None else f"not {_describe(content)}"
        yield "fields", f'"message.content" must be an array of texts, {described}'
        content = ()
    yield from _unknown_keys(message, ("role", "content"), "message.")
    for index, part in enumerate(content):
        where = f"message.content[{index}]"
        if type(part) is not dict:
            yield "fields", f'"{where}" must be an object, not {_describe(part)}'
            continue
        if part.get("type") != "text":
            yield "fields", f'"{where}.type" must be "text"'
        if type(part.get("text")) is not str:
            yield "fields", f'"{where}.text" must be a string, not {_describe(part.get("text"))}'
        yield from _unknown_keys(part, ("type", "text"), where + ".")


def _tool_problems(data, completed):
    """The problems of a tool_call event's ``tool_call`` object."""
    call = tool_call(data)
    if call is None:
        yield "fields", '"tool_call" must hold one object: a *ToolCall key, or "function"'
        return
    calls = data["tool_call"]
    if call.kind != "function" and type(calls.get("function")) is dict:
        yield "fields", '"tool_call" must hold one object: a *ToolCall key, or "function"'
        return
    tool_key = next(key for key, body in calls.items() if body is call.body)
    for name in calls:
        if name != tool_key and name not in _TOOL_SIBLINGS:
            yield "unknown-field", f'unknown field "{quote("tool_call." + name)}"'
    where = f"tool_call.{tool_key}."
    yield from _unknown_keys(call.body, _TOOL_KEYS.get(tool_key, _TOOL_KEYS_DEFAULT), where)
    if completed:
        outcome = call.outcome
        if outcome not in OUTCOMES:
            yield "fields", (f'"{quote(where + "result")}" must hold the outcome: '
                             f'{", ".join(OUTCOMES[:-1])} or {OUTCOMES[-1]}')
        else:
            known = _RESULT_SIBLINGS | {outcome}
            yield from _unknown_keys(call.body["result"], known, where + "result.")


def event_problems(data):
    """(check, message) for each problem of one event's own content: its type, its
    documented fields and their kinds, and what is not documented.  What depends on the
    rest of the stream (sessions, runs) is the Reader's."""
    kind, subtype = data.get("type"), data.get("subtype")
    if type(kind) is str and (subtype is None or type(subtype) is str):
        key = (kind, subtype, *data)
        shape = _SHAPES.get(key)
        if shape is None:
            shape = _shape(data)
            _remember(key, shape)
    else:
        shape = _shape(data)
    problems, typed, nested = shape
    for name, expected in typed:
        value = data[name]
        if type(value) is not expected and not _is_integral(value, expected) or (
                expected is int and type(value) is not RawNumber and value < 0):
            problems = [*problems, ("fields", f'"{name}" must be {_EXPECTED[expected]}, '
                                              f"not {_describe(value)}")]
    if nested == "message" and type(data.get("message")) is dict:
        problems = [*problems, *_message_problems(data, kind)]
    elif nested == "tool_call" and type(data.get("tool_call")) is dict:
        problems = [*problems, *_tool_problems(data, subtype == "completed")]
    return problems


# Whether every event gets the full checks (event_problems, then Reader._check): the
# tests set it, to compare them with the quick test of _passes.
FULL_CHECKS = False


def _passes(run, data, kind):
    """Whether an event inside ``run``, of type ``kind`` (neither system, result nor
    tool_call), has certainly no problem and changes nothing of the run, told at the
    cost of a few lookups: its session_id is the run's (which the full checks of the
    run's first event set, so this is not that one), its shape is known and has no
    problem, each typed field has exactly its type (an int not negative), and its
    message, if any, is the usual array of texts.  False only says that the full checks
    must look: they find the same problems either way."""
    session_id = data.get("session_id")
    if session_id is None or session_id != run.session_id:
        return False
    subtype = data.get("subtype")
    if subtype is not None and subtype.__class__ is not str:
        return False  # not a key of _SHAPES (it may not even be hashable)
    shape = _SHAPES.get((kind, subtype, *data))
    if shape is None or shape[0]:
        return False
    for name, expected in shape[1]:
        value = data[name]
        if value.__class__ is not expected or expected is int and value < 0:
            return False
    if shape[2] is None:
        return True
    message = data["message"]  # an object: typed, since its shape has it
    if len(message) != 2 or message.get("role") != kind:
        return False
    content = message.get("content")
    if content.__class__ is not list:
        return False
    for part in content:
        if part.__class__ is not dict or len(part) != 2 or part.get("type") != "text" \
                or part.get("text").__class__ is not str:
            return False
    return True


def _is_integral(value, expected):
    """Whether ``value`` is a JSON integer though not a Python int: JSON has one kind of
    number, and orjson reads integers beyond 64 bits as floats (``2**70``), or the
    decoder keeps them as written (a RawNumber: only a non-negative one counts)."""
    if expected is not int:
        return False
    if type(value) is float:
        return value.is_integer()
    return type(value) is RawNumber and not any(char in value.text for char in "-.eE")


# The types of the objects ``decides`` may find decisive.
_DECISIVE_TYPES = frozenset({"system", "tool_call", "thinking", "interaction_query", "result"})


def may_decide(kind):
    """Whether an object of type ``kind`` (a string) can be decisive for Cursor."""
    return kind in _DECISIVE_TYPES


def decides(data):
    """Whether a decoded object is decisive for Cursor (docs/agents.md#decisive-tests)."""
    kind = data.get("type")
    if kind == "system":
        return (data.get("subtype") == "init" and "tools" not in data
                and "claude_code_version" not in data)
    if kind == "tool_call" or kind == "thinking" or kind == "interaction_query":
        return True
    if kind == "result":
        return "duration_ms" in data and not any(
            key in data for key in ("num_turns", "total_cost_usd", "modelUsage", "status"))
    return False


# The events each need takes (``TYPE`` or ``TYPE/SUBTYPE``); the run boundaries always.
_NEEDS = {
    "text": ("assistant",),
    "tools": ("tool_call",),
    "tool_ends": ("tool_call/completed",),
    "ends": (),
    "native": (),
    "transcript": ("user", "thinking", "assistant", "tool_call"),
    "whole_text": (),
}
_BOUNDARIES = ("system", "result")
# The types a run is made of: the stream's but the interaction queries, a few lines
# that no need takes and that cost less to decode than a search for the others.
_RUN_TYPES = TYPES - {"interaction_query"}


def markers(needs):
    """The decoder markers of the events that ``needs`` take, the run boundaries added;
    None (every line) where they take every type a run is made of: the search would
    pass over nothing but a few lines (a query, another agent's), which cost less to
    decode than the search."""
    names = set(_BOUNDARIES)
    for need in needs:
        names.update(_NEEDS[need])
    if names >= _RUN_TYPES:
        return None
    if "tool_call" in names:
        names.discard("tool_call/completed")
    found = []
    for name in sorted(names):
        kind, _, subtype = name.partition("/")
        found.append((("type", kind), ("subtype", subtype)) if subtype else (("type", kind),))
    return tuple(found)


def begins_run(data):
    """Whether an event's data is ``system/init``, with which a run begins."""
    return data.get("type") == "system" and data.get("subtype") == "init"


# A needle found in each line at which a stream may be split (``splits_between``).
SPLIT_NEEDLE = b'"init"'


def splits_between(before, after, checks):
    """Whether a stream may be cut between the adjacent lines that decode to the
    objects ``before`` and ``after`` and each part read on its own (by Readers with
    ``checks`` or not), with the same findings: a run ends at ``before`` (a result event
    ends the run in hand, whatever came before it) and the next begins at ``after``
    (system/init), so that the Reader carries nothing across (what follows a result
    matters only to an event that begins no run)."""
    return before.get("type") == "result" and begins_run(after)


class _Run:
    """One run: where it began, whether its result was read, and what its answer and
    checks need."""

    __slots__ = ("start", "ended", "partial", "session", "session_id", "first_event",
                 "stray")

    def __init__(self, start):
        self.start = start
        self.ended = False
        # Whether the run was made with --stream-partial-output: decided by its first
        # assistant event (None until then).
        self.partial = None
        self.session = None  # (session_id, line) of the run's first session_id
        self.session_id = None  # the same session_id alone, for the quick test
        self.first_event = True
        self.stray = False  # the run is events after a result, with no init


class Reader:
    """Model events of one input's Cursor events.

    A run begins at ``system/init``, or at the first event (or skipped line) after a
    ``result``, and ends at its ``result``.  Text: each assistant event's text, but in a
    run made with ``--stream-partial-output`` (its first assistant event has
    ``timestamp_ms`` and no ``model_call_id``) only the deltas, since the CLI repeats
    their text as whole segments.  With ``checks``, the schema checks, sessions and run
    beginnings make Notes."""

    def __init__(self, source, checks=False, needs=None):
        self.source = source
        self.checks = checks
        self.run = None
        # The line of the result that ended the input's last run, if it had one.
        self.follows_result = None
        # For a transcript: the thinking deltas of the stretch in hand (texts, their
        # length, the first's event), and the prompt and stream times besides.
        self.thinking = None
        if needs is not None and "transcript" in needs:
            self.event = self._transcribed

    def _transcribed(self, event):
        """The model events of one event, with what a transcript needs besides: the
        prompt (``user``), the thinking (deltas joined per stretch: it ends at its
        ``completed``, at any other event, or past ``THINKING_PIECE`` characters) and
        the stream times."""
        kind, data = event.type, event.data
        run = self.run
        if kind == "thinking" and run is not None and not run.ended and not self.checks:
            # The most frequent event of a run with thinking, made quick: Reader.event
            # makes nothing of it, and it holds no Text to time.
            out = _NONE
        else:
            out = self._thought() if self.thinking is not None and kind != "thinking" else []
            out += Reader.event(self, event)
            run = self.run
        time_ms = data.get("timestamp_ms")
        time_ms = time_ms if time_ms.__class__ is int else None
        if run is None or run.ended:
            return out
        if run.start.time_ms is None:
            run.start.time_ms = time_ms
        if kind == "thinking":
            text = data.get("text")
            if text.__class__ is str and text:
                if self.thinking is None:
                    self.thinking = ([], 0, event)
                texts, length, first = self.thinking
                texts.append(text)
                self.thinking = (texts, length + len(text), first)
            if data.get("subtype") == "completed" or (
                    self.thinking is not None and self.thinking[1] > THINKING_PIECE):
                out = [*out, *self._thought()]
        elif kind == "user":
            text = assistant_text(data)
            if text:
                out.append(Prompt(text=text, source=event.source, line=event.line))
        for found in out:
            if found.__class__ is Text:
                found.time_ms = time_ms
        return out

    def _thought(self):
        """The Thinking of the stretch in hand, if any."""
        stretch, self.thinking = self.thinking, None
        if stretch is None:
            return []
        texts, _, first = stretch
        return [Thinking(text="".join(texts), source=first.source, line=first.line)]

    def event(self, event):
        run = self.run
        kind = event.type
        data = event.data
        if run is not None and not run.ended and kind != "system" and kind != "result" \
                and kind != "tool_call":
            # The most frequent events, made quick: no run begins or ends at them.
            out = _NONE
            if self.checks and (FULL_CHECKS or not _passes(run, data, kind)):
                out = self._check(run, event, event_problems(data))
            if kind != "assistant":
                return out
            partial = run.partial
            if partial is None:
                partial = run.partial = "timestamp_ms" in data and "model_call_id" not in data
            if partial and ("timestamp_ms" not in data or "model_call_id" in data):
                return out  # a flush of text that came as deltas
            text = assistant_text(data)
            if text:
                return [*out, Text(text, None, event.source, event.line)]
            return out
        out = []
        if kind == "system" and begins_run(data) or run is None or run.ended:
            run = self._begin(event, out)
        if kind == "result":
            run.ended = True
        if self.checks:
            out += self._check(run, event, event_problems(data))
        if kind == "assistant":
            text = self._text(run, data)
            if text:
                out.append(Text(text, None, event.source, event.line))
        elif kind == "tool_call":
            self._tool(event, out)
        elif kind == "result":
            out.append(self._end(run, event))
        return out

    def awaits_run(self):
        """Whether no run is open: the next line, of whatever kind, begins one."""
        return self.run is None or self.run.ended

    def skipped(self, item):
        run = self.run
        if run is None or run.ended:
            out = []
            self._begin(item, out)
            return out
        return []

    def finish(self):
        run = self.run
        self.run = None
        thought = self._thought()
        if run is None or run.ended:
            return thought
        return [*thought, self._cut_off(run)]

    def _begin(self, item, out):
        """A run begins at ``item``: the open one is cut off."""
        run = self.run
        if run is not None and not run.ended:
            out.append(self._cut_off(run))
        start = RunStart(agent=NAME, source=item.source, line=item.line)
        if item.__class__ is not Skipped and begins_run(item.data):
            data = item.data
            start.announced = True
            start.session_id = text_or_none(data.get("session_id"))
            start.model = text_or_none(data.get("model"))
            start.cwd = text_or_none(data.get("cwd"))
        out.append(start)
        self.run = _Run(start)
        return self.run

    def _cut_off(self, run):
        self.follows_result = None
        return RunEnd(start=run.start, cutoff=True, ok=False, stray=run.stray,
                      source=run.start.source, line=run.start.line)

    def _end(self, run, event):
        data = event.data
        self.follows_result = event.line
        text = text_or_none(data.get("result"))
        # A failed run's result holds the failure, not an answer: its answer is only the
        # text streamed before it.
        failed = is_failure(data)
        return RunEnd(start=run.start, cutoff=False, ok=not failed,
                      answer=None if failed else text, failure=text if failed and text else None,
                      native=json_format(data), usage=_usage(data.get("usage")),
                      duration_ms=data.get("duration_ms"), model=run.start.model,
                      stray=run.stray, source=event.source, line=event.line)

    def _text(self, run, data):
        """The part of an ``assistant`` event's data that belongs to the answer."""
        partial = run.partial
        if partial is None:
            partial = run.partial = "timestamp_ms" in data and "model_call_id" not in data
        if partial and ("timestamp_ms" not in data or "model_call_id" in data):
            return ""  # a flush of text that came as deltas
        return assistant_text(data)

    def _tool(self, event, out):
        data = event.data
        subtype = data.get("subtype")
        call = tool_call(data) if subtype == "started" or subtype == "completed" else None
        if call is None:
            if self.checks:  # validate still pairs its call_id (and reports the rest)
                if subtype == "started" or subtype == "completed":
                    if subtype == "started":
                        out.append(ToolStart(call_id=call_id(data), source=event.source,
                                             line=event.line))
                    else:
                        out.append(ToolEnd(call_id=call_id(data), outcome="unknown",
                                           source=event.source, line=event.line))
                return
            # Still a tool event: the text after it is not the run's final message.
            out.append(Note(check="tool-unnamed", message="skipped: a tool_call event that "
                            "names no single tool" if subtype == "completed" else None,
                            source=event.source, line=event.line))
            return
        if subtype == "started":
            out.append(ToolStart(
                call_id=call_id(data), kind=call.kind, name=call.name, args=call.args,
                target=call.args_target, session_id=data.get("session_id"),
                model_call_id=text_or_none(data.get("model_call_id")),
                time_ms=data.get("timestamp_ms"),
                source=event.source, line=event.line))
        else:
            outcome = call.outcome
            out.append(ToolEnd(
                call_id=call_id(data), kind=call.kind, name=call.name, args=call.args,
                target=call.target, session_id=data.get("session_id"),
                model_call_id=text_or_none(data.get("model_call_id")),
                time_ms=data.get("timestamp_ms"),
                outcome="unknown" if outcome is None else outcome, result=call.result,
                source=event.source, line=event.line))

    # Checks (validate).

    def _check(self, run, event, problems):
        """The Notes of an event's checks, ``problems`` its ``event_problems`` (usually
        none: an empty tuple)."""
        data = event.data
        out = _NONE
        if run.first_event:
            run.first_event = False
            out = []
            self._check_beginning(run, event, out)
        if problems:
            out = [*out, *(Note(check=check, message=message, source=event.source,
                                line=event.line) for check, message in problems)]
        session_id = data.get("session_id")
        if session_id is None or session_id != run.session_id:
            kind = event.type
            if kind is not None and (kind in TYPES or "session_id" in data):
                out = list(out)
                self._check_session(run, event, out)
        return out

    def _check_beginning(self, run, event, out):
        if begins_run(event.data):
            return
        previous = self.follows_result
        if previous is None:
            out.append(_note("init", "the run does not begin with a system/init event", event))
            return
        run.stray = True
        if event.type == "result":
            out.append(_note("result-count", "a second result event for the run that ended "
                             f"at line {previous}", event))
        else:
            out.append(_note("after-result", f"an event after the result of line {previous}: "
                             "a new run must begin with a system/init event", event))

    def _check_session(self, run, event, out):
        value = event.data.get("session_id")
        if type(value) is not str:
            out.append(_note("session", 'the event has no "session_id"' if value is None
                             else f'"session_id" must be a string, not {_describe(value)}',
                             event))
        elif run.session is None:
            run.session = (value, event.line)
            run.session_id = value
        elif value != run.session[0]:
            first, line = run.session
            out.append(_note("session", f'session_id "{quote(value)}" differs from the run\'s '
                             f'"{quote(first)}" (line {line})', event))


_NONE = ()
# The most characters of thinking one Thinking event holds: a longer stretch is handed
# on in pieces of about this size, so that what is kept of it stays bounded.
THINKING_PIECE = 1 << 20


def _note(check, message, event):
    return Note(check=check, message=message, source=event.source, line=event.line)


def result_text(end):
    """What a transcript shows of a call's result: a shell call's standard output, its
    standard error after a line ``stderr:``, its exit code when not 0; a read's
    content; else the JSON."""
    result = end.result
    if result.__class__ is dict and end.kind == "shell":
        out, err, code = result.get("stdout"), result.get("stderr"), result.get("exitCode")
        text = out if out.__class__ is str else ""
        if err.__class__ is str and err:
            text += ("" if not text or text.endswith("\n") else "\n") + "stderr:\n" + err
        return with_exit_code(text, code if code.__class__ is int else 0)
    if result.__class__ is dict and end.kind == "read" and result.get("content").__class__ is str:
        return result["content"] or None
    return result_json(result)


def _usage(usage):
    """{input, cacheRead, cacheWrite, output} of a result's ``usage``, or None."""
    if usage.__class__ is not dict:
        return None
    return {"input": usage.get("inputTokens"), "cacheRead": usage.get("cacheReadTokens"),
            "cacheWrite": usage.get("cacheWriteTokens"), "output": usage.get("outputTokens")}


# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "each run's result event, its keys in the order of the json output format "
            "('cursor-agent -p --output-format json'): type, subtype, is_error, duration_ms, "
            "duration_api_ms, result, session_id, request_id, then any other keys (such as usage) "
            "in the stream's order; a failed run prints it too. Only lines that may hold a result "
            "or init event are decoded (wherever the type stands in the line, however it is "
            "spelt): a line that is not a JSON object is still noticed when it does not look like "
            "one ({...}); 'ndagent validate' checks every line in full.",
    "result": "the answer is every assistant event's text in order, printed as it arrives (a "
              "failed run's too; under --live, its segments join with nothing, as in the answer); "
              "in a run made with --stream-partial-output (whose first assistant event has "
              "timestamp_ms and no model_call_id) only those deltas count, since the CLI repeats "
              "their text as whole segments. The rebuilt answer is checked against the result "
              "event's own text, with a warning when they differ; a failed run's result text is "
              "its failure, said in the message.",
    "text": "the lines are those of its text output format ('cursor-agent -p --output-format "
            "text') as documented; a tool's kind is the key of its tool_call without 'ToolCall' "
            "(readToolCall is read), function for a tool_call.function. Its answer is all the "
            "run's text: --final prints the text after the last tool call, what recent CLI "
            "versions print for --output-format text.",
    "tools": "kind is the key of the tool_call without 'ToolCall' ('function' for a "
             "tool_call.function); name is the tool name of an MCP or function tool, else null; "
             "result is the object under the outcome key; model_call_id is the event's "
             "model_call_id; duration_ms is the difference of the two events' timestamp_ms.",
    "validate": "whatever real streams contain is valid: the documented events and fields, and "
                "what the CLI adds to them (thinking and interaction_query events, timestamp_ms, "
                "model_call_id, usage, calls completed without being started, ...); event types "
                "and fields unknown even to that are accepted, and reported under --strict only. "
                "A large FILE of many runs is checked in parts.",
    "stats": "the figures are those of the result event (duration_ms, usage); it reports no cost.",
    "run": "its run is over at its result event, after which the CLI sometimes never exits.",
    "markdown": "the prompt is the user event; thinking is the thinking deltas, joined up to each "
                "thinking/completed; Started is the first timestamp_ms.",
    "html": "the prompt is the user event; thinking is the thinking deltas, joined up to each "
            "thinking/completed; Started is the first timestamp_ms.",
}


FORMAT = Format(
    name=NAME,
    title="Cursor Agent CLI",
    invocation="cursor-agent -p --output-format stream-json",
    decides=decides,
    may_decide=may_decide,
    markers=markers,
    run_starts=[(("type", "system"), ("subtype", "init"))],
    reader=Reader,
    checks=CHECKS,
    run_end="a result event",
    # The answer is every assistant segment, printed as it arrives; they join with
    # nothing.
    live_answer=True,
    separator="",
    noise_lines=(b"Update available: ",),  # older CLIs' banner, before the stream
    strict_only=("unknown-type", "unknown-field"),
    splits_between=splits_between,
    split_needle=SPLIT_NEEDLE,
    fallback_types=TYPES,
    help=HELP,
    result_text=result_text,
    interchange=("cursor-cli", "cursor"),
    order=10,
)
