"""The streams `make bench` times (tests/bench/generate.py) are clean streams of their
agent: a figure measured on a stream ndagent reads as broken would time the error path,
not the one users take."""

import sys
from pathlib import Path

import pytest
from conftest import InProcess

sys.path.insert(0, str(Path(__file__).parent / "bench"))
from generate import AGENTS, generate  # noqa: E402 - the bench's folder, put on the path

in_process = InProcess()


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_generated_stream_validates_clean_as_its_agent(agent, tmp_path):
    path = tmp_path / f"{agent}.ndjson"
    generate(path, 0.2, seed=5, agent=agent)
    status, out, err = in_process("validate", b"", "--strict", "--format", "json", path)
    assert (status, err) == (0, b""), err
    assert b'"errors":0,"warnings":0}' in out, out[:300]
    status, out, err = in_process("stats", b"", "--by", "agent", path)
    assert (status, err) == (0, b"")
    assert out.startswith(f"agent {agent}\n".encode()) and out.count(b"agent ") == 1, out
