"""A run as OpenTelemetry trace data, in the OTLP/JSON encoding (one
``ExportTraceServiceRequest`` a run), by the GenAI semantic conventions of version
1.41.0 (pinned in ``schemaUrl``): an ``invoke_agent`` span for the run, a ``chat`` span
under it for each main-thread model call where the stream reports its own usage
(``Message`` events), an ``execute_tool`` span for each tool call, under its Task call's
span for a subagent's call, else under the chat span of its ``model_call_id``, else under
the run's.  Ids come from the stream alone (``trace_id``, ``span_id``), so that
the same stream gives the same ids; times from the run's timeline
(``ndagent.timeline``), each span marked with how its times were found.  Pure data:
the verb (ndagent.cmd_otel) reads the stream and writes the lines."""

from hashlib import sha256

from ndagent import __version__
from ndagent.figures import figure
from ndagent.formats import get
from ndagent.markup import FIELD_LIMIT, json_field, json_prose, json_value
from ndagent.terminal import shortened
from ndagent.timeline import LATEST_MS, STREAM, stream_time, worst

SCHEMA_URL = "https://opentelemetry.io/schemas/1.41.0"
ID_VERSION = "ndagent-otel-1"
KIND_INTERNAL = 1
KIND_CLIENT = 3
STATUS_ERROR = 2
# error.type when the run failed and nothing tells a class of failure: the registry's
# fallback.
OTHER = "_OTHER"
CUTOFF_TEXT = "the input ended before the run's end event"
FAILURE_LIMIT = 1000
# The outcomes of a tool call that make its span an error.
ERROR_OUTCOMES = frozenset({"failure", "error", "permissionDenied", "rejected", "pending"})


def digest(*parts):
    """SHA-256 of the parts, UTF-8, joined with NUL bytes."""
    return sha256(b"\0".join(part.encode("utf-8", "surrogatepass") for part in parts)).digest()


def _id(data):
    """An id of these bytes, never all zero (the protocol's 'no id')."""
    if not any(data):
        data = data[:-1] + b"\x01"
    return data.hex()


def trace_id(agent, session_id, ordinal, source, line):
    """The trace id of a run: of its session and its rank among the runs of that
    session in its FILE; for a run with no session, of its FILE and first line."""
    if session_id is None:
        return _id(digest(ID_VERSION, "trace-nosession", agent, source, str(line))[:16])
    return _id(digest(ID_VERSION, "trace", agent, session_id, str(ordinal))[:16])


def span_id(trace, *what):
    """A span's id in the trace ``trace`` (hex), of what it is."""
    return _id(digest(ID_VERSION, "span", trace, *what)[:8])


def value(data):
    """An OTLP AnyValue of a JSON value, structured (objects, arrays), strings as the
    content rule of the verb left them."""
    kind = data.__class__
    if kind is str:
        return {"stringValue": data}
    if kind is bool:
        return {"boolValue": data}
    if kind is int and -(1 << 63) <= data < 1 << 63:
        return {"intValue": str(data)}
    if kind in (int, float):
        return {"doubleValue": float(data)}
    if kind is dict:
        return {"kvlistValue": {"values": [{"key": str(key), "value": value(item)}
                                           for key, item in data.items()]}}
    if kind is list:
        return {"arrayValue": {"values": [value(item) for item in data]}}
    if data is None:
        return {}
    return {"stringValue": str(data)}  # a number beyond 64 bits, kept as written


def _attributes(pairs):
    return [{"key": key, "value": value(found)} for key, found in pairs if found is not None]


def _nanos(milliseconds):
    return str(min(max(milliseconds, 0), LATEST_MS) * 1_000_000)


def _span(trace, span, parent, name, kind, start, end, attributes, status):
    found = {"traceId": trace, "spanId": span}
    if parent is not None:
        found["parentSpanId"] = parent
    found.update(name=name, kind=kind, startTimeUnixNano=_nanos(start),
                 endTimeUnixNano=_nanos(max(start, end)), attributes=_attributes(attributes),
                 status=status)
    return found


def _usage(usage):
    """(input with cached, output, cache read, cache write) of the run's own usage."""
    if usage.__class__ is not dict:
        return None, None, None, None
    found = {name: figure(usage.get(name)) for name in ("input", "output", "cacheRead",
                                                        "cacheWrite")}
    found = {name: int(each) if each is not None and each == int(each) else None
             for name, each in found.items()}
    given = [found[name] for name in ("input", "cacheRead", "cacheWrite")
             if found[name] is not None]
    return (sum(given) if given else None, found["output"], found["cacheRead"],
            found["cacheWrite"])


def run_request(run, end, ordinal, origin, content=None):
    """The ExportTraceServiceRequest of a run (a recorder.Run and its RunEnd), the
    ``ordinal``th of its session in its FILE; ``origin``: the time origin, for a run
    with no clock; ``content``: --max-chars when prompts, answers, arguments and
    results go in (--content), else None."""
    start = run.start
    agent = start.agent
    outcome = "cutoff" if end.cutoff else "ok" if end.ok else "failed"
    duration = None if end.cutoff else figure(end.duration_ms)
    timeline = run.timeline
    synthetic = timeline.made_up(origin, duration)
    trace = trace_id(agent, start.session_id, ordinal, start.source or "", start.line)
    root = span_id(trace, "invoke_agent")
    begun, begun_timing = timeline.at(timeline.first)
    own_end = stream_time(end)
    if own_end is not None:
        ended, ended_timing = own_end, STREAM
    elif duration is not None:
        ended, ended_timing = begun + int(duration), begun_timing
    else:
        ended, ended_timing = timeline.at(timeline.last)
    spans = [None]  # the root, made last: it ends where its calls may
    ids = {}  # call_id -> the span of its latest call, for its subagent's calls
    chats = {}  # message key -> its chat span's id, for the calls it made
    started = _calls_started(run.calls)
    for message in run.messages:
        spans.append(_chat_span(message, run, trace, root, chats, timeline, started))
    for call in run.calls:
        spans.append(_tool_span(call, trace, root, ids, chats, timeline, ended, content))
    model = end.model if end.model is not None else start.model
    failure = None if end.ok or end.cutoff or end.failure is None else str(end.failure)
    status, error_type = {}, None
    if end.cutoff:
        status, error_type = {"message": CUTOFF_TEXT, "code": STATUS_ERROR}, "cutoff"
    elif not end.ok:
        error_type = end.error_type or OTHER
        status = {"code": STATUS_ERROR}
        if failure:
            status = {"message": json_prose(failure, FAILURE_LIMIT), "code": STATUS_ERROR}
    tokens, output, cache_read, cache_write = _usage(None if end.cutoff else end.usage)
    cost = None if end.cutoff else figure(end.cost_usd)
    version = start.version
    answer = end.answer if end.ok and end.answer.__class__ is str and end.answer else None
    name, provider = get(agent).interchange
    attributes = [
        ("gen_ai.operation.name", "invoke_agent"),
        ("gen_ai.provider.name", provider),
        ("gen_ai.agent.name", name),
        ("gen_ai.agent.version", None if version is None else json_field(str(version))),
        ("gen_ai.conversation.id", _field(start.session_id)),
        ("gen_ai.request.model", _field(model)),
        ("gen_ai.usage.input_tokens", tokens),
        ("gen_ai.usage.output_tokens", output),
        ("gen_ai.usage.cache_read.input_tokens", cache_read),
        ("gen_ai.usage.cache_creation.input_tokens", cache_write),
        ("gen_ai.input.messages", None if content is None or not run.prompts else [
            {"role": "user", "parts": [{"type": "text", "content": json_prose(text, content)}]}
            for text, _ in run.prompts]),
        ("gen_ai.output.messages", None if content is None or answer is None else [
            {"role": "assistant", "parts": [{"type": "text",
                                             "content": json_prose(answer, content)}],
             "finish_reason": "stop"}]),
        ("error.type", None if error_type is None else json_field(str(error_type))),
        ("ndagent.outcome", outcome),
        ("ndagent.cost_usd", None if cost is None else float(cost)),
        ("ndagent.duration_ms", None if duration is None else int(duration)),
        ("ndagent.source", _field(start.source)),
        ("ndagent.line", start.line),
        ("ndagent.timing", "synthetic" if synthetic else worst(begun_timing, ended_timing)),
    ]
    spans[0] = _span(trace, root, None, f"invoke_agent {name}", KIND_INTERNAL, begun, ended,
                     attributes, status)
    return {"resourceSpans": [{
        "resource": {"attributes": _attributes([("service.name", name)])},
        "scopeSpans": [{"scope": {"name": "ndagent", "version": __version__},
                        "spans": spans, "schemaUrl": SCHEMA_URL}],
        "schemaUrl": SCHEMA_URL}]}


def _field(text):
    """A one-line field of a span, cut to FIELD_LIMIT characters: each span repeats the
    run's (a session id of 200 KB made 100 MB of output of 500 messages)."""
    return None if text is None else json_field(shortened(str(text), FIELD_LIMIT))


def _calls_started(calls):
    """{message key: the last line that started one of its calls}, of the main
    thread's calls (made once per run: a run may hold many messages and many calls)."""
    found = {}
    for call in calls:
        if call.parent is None and call.start_line is not None:
            key = call.model_call_id
            found[key] = max(found.get(key, call.start_line), call.start_line)
    return found


def _chat_span(message, run, trace, root, chats, timeline, started):
    """The chat span of a Message: from its first line to the last line known of it
    (its own last line, or a later line that started one of its calls, ``started``: a
    message handed on at its first line, partial messages off, has more lines)."""
    key = str(message.key)
    rank = chats.get(("count", key), 0)
    chats[("count", key)] = rank + 1
    span = span_id(trace, "chat", key, str(rank))
    chats[message.key] = span
    last = max(message.last_line or message.first_line,
               started.get(message.key, 0))
    begun, begun_timing = timeline.at(message.first_line)
    ended, ended_timing = timeline.at(last)
    model = _field(message.model)
    tokens, output, cache_read, cache_write = _usage(message.usage)
    attributes = [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", get(run.start.agent).interchange[1]),
        ("gen_ai.request.model", model),
        ("gen_ai.response.model", model),
        # A key that is no id (Amp's: the line number) is no response id.
        ("gen_ai.response.id", _field(message.key) if message.key.__class__ is str else None),
        ("gen_ai.conversation.id", _field(run.start.session_id)),
        ("gen_ai.usage.input_tokens", tokens),
        ("gen_ai.usage.output_tokens", output),
        ("gen_ai.usage.cache_read.input_tokens", cache_read),
        ("gen_ai.usage.cache_creation.input_tokens", cache_write),
        ("ndagent.line", message.first_line),
        ("ndagent.timing", worst(begun_timing, ended_timing)),
    ]
    name = "chat" if model is None else f"chat {model}"
    return _span(trace, span, root, name, KIND_CLIENT, begun, ended, attributes, {})


def _tool_span(call, trace, root, ids, chats, timeline, run_end, content):
    """The execute_tool span of a call (recorder.Call)."""
    first = call.start_line if call.start_line is not None else call.end_line
    call_key = call.call_id if call.call_id is not None else f"line:{first}"
    rank = ids.get(("count", call_key), 0)
    ids[("count", call_key)] = rank + 1
    span = span_id(trace, "execute_tool", call_key, str(rank))
    if call.call_id is not None:
        ids[call.call_id] = span
    if call.parent is not None:
        parent = ids.get(call.parent, root)
    else:
        parent = chats.get(call.model_call_id, root)
    begun, begun_timing = timeline.at(first)
    if call.end_line is None:
        ended, ended_timing = max(begun, run_end), begun_timing
    else:
        ended, ended_timing = timeline.at(call.end_line)
    outcome = call.outcome
    status = {}
    if outcome in ERROR_OUTCOMES:
        status = {"code": STATUS_ERROR}
        if outcome == "pending":
            status = {"message": "no end in the stream", "code": STATUS_ERROR}
    name = _field(call.name if call.name is not None else call.kind) or "unknown"
    arguments = result = None
    if content is not None:
        arguments = None if call.args is None else json_value(call.args, content)
        if outcome == "success" and call.result is not None:
            result = json_prose(call.result)  # cut to --max-chars when kept
    attributes = [
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", name),
        ("gen_ai.tool.call.id", _field(call.call_id)),
        ("gen_ai.tool.type", "extension" if call.kind == "mcp" else "function"),
        ("gen_ai.tool.call.arguments", arguments),
        ("gen_ai.tool.call.result", result),
        ("error.type", outcome if outcome in ERROR_OUTCOMES else None),
        ("ndagent.tool.kind", _field(call.kind)),
        ("ndagent.tool.outcome", outcome),
        ("ndagent.line", first),
        ("ndagent.timing", worst(begun_timing, ended_timing)),
    ]
    return _span(trace, span, parent, f"execute_tool {name}", KIND_INTERNAL, begun, ended,
                 attributes, status)

