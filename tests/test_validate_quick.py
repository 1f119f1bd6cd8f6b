"""validate on Cursor streams: the quick test of the events whose shape is known
(formats.cursor._passes) passes only events the full checks find nothing in, so that
every diagnostic, summary and status is the same with it and without it
(cursor.FULL_CHECKS).  The property runs a few dozen examples here; 'make fuzz' runs
it at length (tests/fuzz/run.py)."""


import orjson
from conftest import InProcess, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent.formats import cursor


class Raw(str):
    """A JSON value written as it is (a number orjson cannot hold, -0, 1.0)."""


def _events_of_a_run(session):
    """One well-formed event of each kind, by name, of the session ``session``."""
    text = [{"type": "text", "text": "Hi"}]
    shell = {"shellToolCall": {"args": {"command": "ls"}, "result": {"success": {}}}}
    return {
        "init": {"type": "system", "subtype": "init", "apiKeySource": "login", "cwd": "/w",
                 "session_id": session, "model": "m", "permissionMode": "default"},
        "user": {"type": "user", "message": {"role": "user", "content": text},
                 "session_id": session},
        "assistant": {"type": "assistant", "message": {"role": "assistant", "content": text},
                      "session_id": session},
        "assistant-timed": {"type": "assistant", "message": {"role": "assistant",
                                                             "content": text},
                            "session_id": session, "timestamp_ms": 5},
        "assistant-model": {"type": "assistant", "message": {"role": "assistant",
                                                             "content": text},
                            "session_id": session, "model_call_id": "m1", "timestamp_ms": 6},
        "thinking": {"type": "thinking", "subtype": "delta", "text": "hm",
                     "session_id": session, "timestamp_ms": 7},
        "thought": {"type": "thinking", "subtype": "completed", "session_id": session,
                    "timestamp_ms": 8},
        "query": {"type": "interaction_query", "subtype": "request", "query_type": "q",
                  "query": {}, "session_id": session},
        "started": {"type": "tool_call", "subtype": "started", "call_id": "c1",
                    "tool_call": shell, "session_id": session},
        "completed": {"type": "tool_call", "subtype": "completed", "call_id": "c1",
                      "tool_call": shell, "session_id": session},
        "result": {"type": "result", "subtype": "success", "is_error": False,
                   "duration_ms": 9, "result": "Hi", "session_id": session},
    }


# Values put in place of a field's, by the JSON type of its own: of other types, and
# numbers that are integers though not Python ints, or not integers though Python
# compares them so.
ODD_VALUES = {
    int: [-1, 1.5, 2.0, True, "7", None, Raw("1e400"), Raw("123456789012345678901234567890"),
          Raw("-0"), Raw("1.0"), Raw("-5")],
    str: [5, None, [], True, ""],
    bool: [0, 1, None, "true", True],
    dict: [[], "s", None, {"role": "user"}],
}
# What a key given twice first holds.
DECOYS = ["thinking", "delta", "s2", -1, None, {}]
# A user or assistant event's message (ROLE its own role, OTHER the other one), as it
# is and with each thing wrong in turn.
ODD_MESSAGES = [
    {"role": "ROLE", "content": [{"type": "text", "text": "x"}]},
    {"role": "ROLE", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": ""}]},
    {"role": "ROLE", "content": []},
    {"role": "OTHER", "content": [{"type": "text", "text": "x"}]},
    {"role": "other", "content": [{"type": "text", "text": "x"}]},
    {"role": "ROLE", "content": "x"},
    {"role": "ROLE", "other": [{"type": "text", "text": "x"}]},
    {"content": [{"type": "text", "text": "x"}], "other": 1},
    {"role": "ROLE", "content": [{"type": "text", "text": "x"}], "other": 1},
    {"role": "ROLE", "content": [{"type": "text", "text": "x", "other": 1}]},
    {"role": "ROLE", "content": [{"type": "text", "text": 5}]},
    {"role": "ROLE", "content": [{"type": "text", "other": "x"}]},
    {"role": "ROLE", "content": [{"type": "image", "text": "x"}]},
    {"role": "ROLE", "content": [{"other": "text", "text": "x"}]},
    {"role": "ROLE", "content": [{"type": "text", "text": "x"}, ["text", "x"]]},
]


@st.composite
def changed_event(draw, name, session):
    """One of a run's events, as a list of (key, value) pairs, perhaps changed: its
    session_id, type, subtype, message or another field given another value, a field
    added or dropped."""
    event = _events_of_a_run(session)[name]
    change = draw(st.sampled_from([None] * 12 + ["field"] * 4 + ["message"] * 6
                                  + ["session"] * 2 + ["subtype", "type", "add", "drop"]))
    if change == "message" and "message" in event:
        role, other = ("user", "assistant") if name == "user" else ("assistant", "user")
        message = orjson.dumps(draw(st.sampled_from(ODD_MESSAGES)))
        message = message.replace(b"ROLE", role.encode()).replace(b"OTHER", other.encode())
        event["message"] = orjson.loads(message)
    elif change in ("field", "message"):
        key = draw(st.sampled_from(sorted(event.keys() - {"type", "subtype", "session_id"})))
        event[key] = draw(st.sampled_from(ODD_VALUES[type(event[key])]))
    elif change == "session":
        event["session_id"] = draw(st.sampled_from(["s1", "s2", 5, None, []]))
    elif change == "subtype":
        event["subtype"] = draw(st.sampled_from(["delta", "other", 1, True, [], None]))
    elif change == "type":
        event["type"] = draw(st.sampled_from(["thinking", "bogus", 5, None]))
    elif change == "add":
        event[draw(st.sampled_from(["extra", "usage", "text", "timestamp_ms"]))] = 1
    elif change == "drop":
        del event[draw(st.sampled_from(sorted(event)))]
    return list(event.items())


def _key(draw, key):
    """A key as JSON, perhaps with one character written as a \\u00XX escape."""
    if key and draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(key) - 1))
        return f'"{key[:at]}\\u{ord(key[at]):04x}{key[at + 1:]}"'
    return orjson.dumps(key).decode()


def _value(value):
    return value if type(value) is Raw else orjson.dumps(value).decode()


@st.composite
def spelt_line(draw, pairs):
    """An event's line: keys reordered, escaped, or given twice (the first of the two
    with another value, which the last overrides)."""
    if draw(st.integers(0, 3)) == 0:
        pairs = draw(st.permutations(pairs))
    written = [f"{_key(draw, key)}:{_value(value)}" for key, value in pairs]
    if pairs and draw(st.integers(0, 4)) == 0:
        key = draw(st.sampled_from([key for key, _ in pairs]))
        written.insert(draw(st.integers(0, len(written))),
                       f"{_key(draw, key)}:{_value(draw(st.sampled_from(DECOYS)))}")
    return "{" + ",".join(written) + "}"


@st.composite
def cursor_streams(draw):
    """Runs of Cursor events, most of a few repeated shapes, some changed; runs without
    init or result, events after a result, sessions that differ; lines merged (a newline
    lost), blank, or the last cut off."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        session = draw(st.sampled_from(["s1", "s1", "s2"]))
        names = draw(st.lists(st.sampled_from(
            ["thinking", "thinking", "assistant", "assistant-timed", "assistant-model",
             "thought", "user", "query", "started", "completed"]), min_size=4, max_size=30))
        if draw(st.integers(0, 3)):
            names.insert(0, "init")
        if draw(st.integers(0, 3)):
            names.append("result")
        names += draw(st.lists(st.sampled_from(["thinking", "assistant", "result"]),
                               max_size=2))
        lines += [draw(spelt_line(draw(changed_event(name, session)))) for name in names]
    for _ in range(draw(st.integers(0, 2))):
        if len(lines) > 1:
            at = draw(st.integers(0, len(lines) - 2))
            lines[at:at + 2] = [lines[at] + lines[at + 1]]
    if lines and draw(st.integers(0, 3)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), "")
    stream = "\n".join(lines) + "\n"
    if lines and draw(st.integers(0, 3)) == 0:  # the last line cut off, or its newline
        stream = stream[:-draw(st.integers(1, len(lines[-1]) + 1))]
    return stream.encode()


QUICK_EXAMPLES = settings(max_examples=examples(10),
                          deadline=None, suppress_health_check=list(HealthCheck),
                          database=None)
in_process = InProcess()


@QUICK_EXAMPLES
@given(cursor_streams(), st.sampled_from([(), ("--format", "ndjson"), ("--agent", "cursor")]))
def test_property_the_quick_checks_report_what_the_full_checks_report(stream, options):
    """Every diagnostic (check, severity, message, line), the summary and the status,
    with every shape new (the cache emptied) and with every shape seen before; with
    --strict too, which reports what the others pass over (undocumented fields)."""

    def validate(full, cached, *options):
        if not cached:
            cursor._SHAPES.clear()
            cursor._shapes_size = 0
        cursor.FULL_CHECKS = full
        try:
            return in_process("validate", stream, *options)
        finally:
            cursor.FULL_CHECKS = False

    for these in (options, ("--strict", *options)):
        full = validate(True, False, *these)
        assert validate(False, False, *these) == full, these
        assert validate(False, True, *these) == full, these
