"""No value of any field makes a command fail: every verb, on a golden input whose one
field (an object's member, or an array's item, at any depth) holds instead a value of
another type or out of every range, says what it makes of it and exits 0 or 1, never
with a traceback."""

import json
from pathlib import Path

from conftest import InProcess, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GOLDEN = Path(__file__).parent / "golden"

# Of another type than the field's, or beyond what a number may be: an integer of 22
# digits (the decoder keeps it as written), one too large for a float, a float too
# large for an integer once multiplied.
VALUES = (None, True, "", [], {}, -1, -1.5, 2**70, 10**400, 1e308, "x" * 70_000)

VERBS = (("json",), ("result",), ("result", "--last"), ("result", "--from-result"),
         ("text", "-v"), ("text", "--final"), ("tools",),
         ("tools", "--format", "tsv"), ("validate",), ("validate", "--format", "github"),
         ("validate", "--format", "junit"), ("stats",), ("stats", "--by", "run"),
         ("stats", "--format", "markdown", "--by", "run"), ("stats", "--format", "junit"),
         ("markdown",), ("markdown", "--prose", "literal"), ("html",), ("otel",), ("atif",))


def _members(value, keys=()):
    """The key paths of every member and item of a decoded value, at any depth."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, inner in items:
        yield (*keys, key)
        if isinstance(inner, (dict, list)):
            yield from _members(inner, (*keys, key))


def _places():
    """(input, line index, key path) of every field of the golden inputs: of each
    agent's, each kind of line and each field of it (the same member of each array item,
    and of each line of a type and subtype, is one field), the first."""
    found = {}
    for path in sorted(GOLDEN.glob("*/*/input.ndjson")):
        agent = path.parent.parent.name
        for index, line in enumerate(path.read_bytes().split(b"\n")):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if not isinstance(value, dict):
                continue
            kind = (value.get("type"), value.get("subtype"), value.get("event"))
            for keys in _members(value):
                field = (agent, str(kind), tuple(key for key in keys if isinstance(key, str)))
                found.setdefault(field, (path, index, keys))
    return list(found.values())


PLACES = _places()


def _with(path, index, keys, value):
    lines = path.read_bytes().split(b"\n")
    data = json.loads(lines[index])
    inner = data
    for key in keys[:-1]:
        inner = inner[key]
    inner[keys[-1]] = value
    lines[index] = json.dumps(data).encode()
    return b"\n".join(lines)


# A few examples here, as many as the other properties' under 'make fuzz'.
@settings(max_examples=examples(10),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PLACES), st.sampled_from(VALUES))
def test_property_no_value_of_any_field_makes_a_verb_fail(place, value):
    stream = _with(*place, value)
    run = InProcess()
    for verb, *options in VERBS:
        status, _, err = run(verb, stream, *options)
        assert status in (0, 1), (verb, options, err[-2000:])
        assert b"Traceback" not in err, (verb, options, err[-2000:])


def test_the_fields_reach_every_agent():
    assert {path.parent.parent.name for path, _, _ in PLACES} == {
        path.name for path in GOLDEN.iterdir() if path.is_dir() and path.name[0] != "_"}
