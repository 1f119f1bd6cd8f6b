"""Detection is by keys and values, whatever the order of the lines: every golden input
of every agent is told as its agent with its first objects shuffled, and never as
another's (docs/agents.md#telling-the-agent)."""

from pathlib import Path

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent.decoder import decode_line
from ndagent.formats import DETECT_OBJECTS, Detector, names

GOLDEN = Path(__file__).resolve().parent / "golden"


def decided(objects):
    detector = Detector()
    for line, data in enumerate(objects, 1):
        found = detector.add(data, line)
        if found is not None:
            return found
    return detector.end() if objects else None


def told_inputs():
    """(agent, objects) of each golden input whose agent is told as it stands (not the
    empty one, nor json output or an older shape, which are refused)."""
    found = []
    for agent in names():
        for path in sorted((GOLDEN / agent).glob("*/input.ndjson")):
            objects = [value for value in map(decode_line, path.read_bytes().splitlines())
                       if value.__class__ is dict]
            result = decided(objects)
            if result is not None and result[0] is not None and result[0].name == agent:
                found.append((f"{agent}/{path.parent.name}", agent, objects))
    return found


INPUTS = told_inputs()


def test_every_agent_has_inputs_told_as_its_own():
    assert {agent for _, agent, _ in INPUTS} == set(names())


@pytest.mark.parametrize("case, agent, objects", INPUTS, ids=[case for case, _, _ in INPUTS])
@settings(max_examples=examples(6, 20), deadline=None)
@given(data=st.data())
def test_shuffled_heads_are_told_as_their_agent(case, agent, objects, data):
    head = data.draw(st.permutations(objects[:DETECT_OBJECTS]))
    module, _, message = decided(list(head) + objects[DETECT_OBJECTS:])
    assert module is not None and module.name == agent, (case, message)
