"""ndagent validate: check a stream against the format, with compiler-style diagnostics."""

from sys import getsizeof

from ndagent import cli
from ndagent.decoder import RawNumber
from ndagent.stream import MAX_OPEN_CALLS, CallPairer, json_size
from ndagent.terminal import QUOTE_LIMIT, quote

SUMMARY = "check a stream against the format, with exact line numbers"

# Every check: its name (shown in each diagnostic, stable), its severity, what it finds.
# The one list of checks: --help and the man page print it from here.
CHECKS = {
    "json": ("error", "a line is not a JSON object in UTF-8"),
    "truncated": ("error", "the last line, with no newline, is not whole JSON: cut off"),
    "type": ("error", "an event has no string type"),
    "fields": ("error", "a documented field is missing or of the wrong JSON type"),
    "session": ("error", "an event has no session_id, or not the one of its run"),
    "init": ("warning", "a run does not begin with a system/init event"),
    "call-twice": ("error", "a call_id is started again while still open"),
    "call-unstarted": ("warning", "a call_id is completed without being started"),
    "call-unfinished": ("error", "a call is started and never completed in its run"),
    "call-untracked": ("error", "a call is no longer tracked: too many calls open at once"),
    "result-count": ("error", "a run has a second result event"),
    "after-result": ("error", "an event follows a result without beginning a new run"),
    "no-result": ("error", "a run ends without a result event"),
    "no-run": ("error", "the input holds no event: the agent printed nothing"),
    "answer": ("error", "the rebuilt answer differs from the result event's text"),
    "failed-run": ("error", "the result reports failure (is_error, or not success)"),
    "unknown-type": ("warning", "an event type or subtype is not documented (--strict)"),
    "unknown-field": ("warning", "a field is not documented (--strict)"),
}

# Checks for what clients must ignore: reported under --strict only.
_STRICT_ONLY = ("unknown-type", "unknown-field")

DESCRIPTION = f"""\
Read the stream and report, on standard output, every place where it is not a
well-formed, complete, successful run: one line per finding, as it is found,

  FILE:LINE: error|warning: message [check]

then one summary line per FILE: 'FILE: N events, R runs, E errors, W warnings'. Each
FILE is checked as a stream of its own. The status is 1 when there is an error.

Whatever real streams contain is valid: the documented events and fields, and what
the CLI adds to them (thinking and interaction_query events, timestamp_ms,
model_call_id, usage, calls completed without being started, ...). Event types and
fields unknown even to that are accepted, and reported under --strict only. Blank
lines, a byte order mark and \\r\\n line ends are accepted silently. Memory stays
constant however long the stream: the answer is compared by digest, and at most
{MAX_OPEN_CALLS} calls open at once are tracked, beyond which the oldest is reported
(call-untracked).

A message quotes text from the stream (ids, type, field and tool names) at most
{QUOTE_LIMIT} characters long, then '...', with a backslash doubled (\\\\) and control
characters and the characters that reorder or hide text spelt out (\\x1b, \\u202e,
\\u200b, \\U000e0001), in both formats.

""" + cli.JSON_ON_A_TERMINAL

EXAMPLES = """\
  cursor-agent -p --output-format stream-json 'fix the tests' | ndagent validate
  ndagent validate -q run.ndjson && ndagent result run.ndjson > answer.md
  # the checks that fail most often over a day of runs
  ndagent validate --format json logs/*.ndjson | jq -r '.check // empty' |
    sort | uniq -c | sort -rn
  # in a Makefile: stop at a run that failed or was cut off
  answer.md: run.ndjson
  \tndagent validate -q $<
  \tndagent result $< > $@"""

EXIT_STATUSES = (
    ("0", "no errors (warnings allowed, unless --strict)"),
    ("1", "errors found"),
    ("2", "usage error, a FILE that cannot be read or that is the output file,\n"
          "output that cannot be written, or no memory for a line (--max-line)"),
    ("130", "interrupted (Ctrl-C)"),
)

# The documented fields of each kind of event (FORMAT.md §1 and §2), by (type, subtype):
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
KNOWN_TYPES = frozenset(kind for kind, _ in FIELDS)
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
    if kind not in KNOWN_TYPES:
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
# messages, by stream.json_size) is not kept, and the cache is emptied when it would pass
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
    from ndagent.stream import OUTCOMES, tool_call

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
    rest of the stream (sessions, calls, runs, the answer) is the command's."""
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


def _is_integral(value, expected):
    """Whether ``value`` is a JSON integer though not a Python int: JSON has one kind of
    number, and orjson reads integers beyond 64 bits as floats (``2**70``), or the
    decoder keeps them as written (a RawNumber: only a non-negative one counts)."""
    if expected is not int:
        return False
    if type(value) is float:
        return value.is_integer()
    return type(value) is RawNumber and not any(char in value.text for char in "-.eE")


def build_parser():
    parser = cli.command_parser(
        "validate", SUMMARY, DESCRIPTION, EXAMPLES, converter=False,
        exit_statuses=EXIT_STATUSES,
        files_help="input streams, each checked on its own; '-' or none: standard input")
    listing = "\n".join(f"  {name:<17}{severity:<9}{meaning}"
                        for name, (severity, meaning) in CHECKS.items())
    parser.epilog = f"checks:\n{listing}\n\n{parser.epilog}"
    parser.add_argument(
        "--strict", action="store_true",
        help="count warnings as errors, and report undocumented event types and fields")
    parser.add_argument(
        "-q", "--quiet", action="store_true",
        help="print nothing: only the exit status tells")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text",
        help="text: one line per diagnostic (default); json: one NDJSON object per "
             "diagnostic (source, line, severity, check, message) and per summary "
             "(source, events, runs, errors, warnings)")
    return parser


class ValidateCommand(cli.Command):
    per_input = True

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.strict = args.strict
        self.as_json = args.format == "json"
        # For each open call: the line of its started event, and the start of its call_id.
        self.open_calls = CallPairer()
        self._new_input()
        self._new_run()

    def _new_input(self):
        self.events = self.runs = self.errors = self.warnings = 0
        self.readable = True
        # The line of the result that ended the input's last run, if it had one.
        self.follows_result = None

    def _new_run(self):
        from ndagent.stream import Answer

        self.answer = Answer()
        self.open_calls.close()
        self.session = None  # (session_id, line) of the run's first session_id
        self.session_id = None  # the same session_id alone, for the quick test
        self.first_event = True
        self.stray = False  # the run is events after a result, with no init

    def begin_run(self, run):
        self.runs += 1
        self._new_run()

    def event(self, event):
        self.events += 1
        data = event.data
        if self.first_event:
            self.first_event = False
            self._check_beginning(event)
        for check, message in event_problems(data):
            self.report(event, check, message)
        kind = event.type
        session_id = data.get("session_id")
        if (session_id is None or session_id != self.session_id) and kind is not None and (
                kind in KNOWN_TYPES or "session_id" in data):
            self._check_session(event)
        if kind == "assistant":
            self.answer.add(data)
        elif kind == "tool_call":
            self._track_call(event)

    def _check_beginning(self, event):
        from ndagent.stream import begins_run

        if begins_run(event.data):
            return
        previous = self.follows_result
        if previous is None:
            self.report(event, "init", "the run does not begin with a system/init event")
            return
        self.stray = True
        if event.type == "result":
            self.report(event, "result-count",
                        f"a second result event for the run that ended at line {previous}")
        else:
            self.report(event, "after-result",
                        f"an event after the result of line {previous}: "
                        "a new run must begin with a system/init event")

    def _check_session(self, event):
        value = event.data.get("session_id")
        if type(value) is not str:
            self.report(event, "session", 'the event has no "session_id"' if value is None
                        else f'"session_id" must be a string, not {_describe(value)}')
        elif self.session is None:
            self.session = (value, event.line)
            self.session_id = value
        elif value != self.session[0]:
            first, line = self.session
            self.report(event, "session",
                        f'session_id "{quote(value)}" differs from the run\'s "{quote(first)}" '
                        f"(line {line})")

    def _track_call(self, event):
        from ndagent.stream import call_id

        key = call_id(event.data)
        subtype = event.data.get("subtype")
        if key is None:
            return
        if subtype == "started":
            # Enough of the call_id for quote() to show it as it would the whole id.
            shown = key[:QUOTE_LIMIT + 1]
            earlier, dropped = self.open_calls.start(key, (event.line, shown),
                                                     getsizeof(shown))
            if earlier is not None:
                self.report(event, "call-twice",
                            f'call "{quote(key)}" started again: it is open since line '
                            f"{earlier[0]}")
            for line, shown in dropped:
                self.report(_At(event.source, line), "call-untracked",
                            f'call "{quote(shown)}" is no longer tracked: '
                            f"{self.open_calls.overflow}")
        elif subtype == "completed" and self.open_calls.complete(key) is None:
            self.report(event, "call-unstarted",
                        f'call "{quote(key)}" completed without being started')

    def end_run(self, run):
        from ndagent.stream import is_failure

        result = run.result
        if result is None and not self.stray:
            self.report(run, "no-result",
                        "run ended without a result event: the agent failed or was cut off")
        for line, shown in self.open_calls.close():
            self.report(_At(run.source, line), "call-unfinished",
                        f'call "{quote(shown)}" was started and never completed')
        self.follows_result = None if result is None else result.line
        if result is None:
            return
        text = result.data.get("result")
        if type(text) is str and not self.stray and not self.answer.matches(text):
            self.report(result, "answer",
                        f"the rebuilt answer ({self.answer.length} characters) differs from "
                        f"the result event's text ({len(text)} characters)")
        if is_failure(result.data):
            self.report(result, "failed-run", "the run reported failure")

    def bad_line(self, bad):
        self.report(bad, "truncated" if bad.cut_off else "json", bad.message)

    def no_run(self, source):
        self.report(_At(source, 1), "no-run",
                    "no events: the agent printed nothing, or failed before it began")

    def unreadable(self, item):
        super().unreadable(item)
        self.readable = False

    def report(self, where, check, message):
        """One diagnostic at ``where`` (anything with ``source`` and ``line``)."""
        if check in _STRICT_ONLY and not self.strict:
            return
        severity = "error" if self.strict else CHECKS[check][0]
        if severity == "error":
            self.errors += 1
            self.status = max(self.status, cli.EXIT_BAD_STREAM)
        else:
            self.warnings += 1
        if self.quiet:
            return
        if self.as_json:
            self.out.write_json({"source": where.source, "line": where.line,
                                 "severity": severity, "check": check, "message": message})
        else:
            self._write_text(f"{where.source}:{where.line}: {severity}: {message} [{check}]")

    def end_input(self, source):
        if self.readable and not self.quiet:
            if self.as_json:
                self.out.write_json({"source": source, "events": self.events,
                                     "runs": self.runs, "errors": self.errors,
                                     "warnings": self.warnings})
            else:
                self._write_text(f"{source}: {self.events} events, {self.runs} runs, "
                                 f"{self.errors} errors, {self.warnings} warnings")
        self._new_input()

    def _write_text(self, line):
        """One line of text output.  The stream text in it is already quoted
        (``terminal.quote``); what else it holds, a FILE's name, is spelt out here."""
        from ndagent.terminal import escape_controls

        self.out.write(escape_controls(line).encode("utf-8", "replace") + b"\n")


class _At:
    """A place in the input that is not the current item: a call's started line."""

    __slots__ = ("source", "line")

    def __init__(self, source, line):
        self.source = source
        self.line = line


def main(argv=None):
    return cli.run_command(build_parser, ValidateCommand, argv)
