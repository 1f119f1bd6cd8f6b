"""The Antigravity CLI format module: what it makes of each shape of
docs/formats.md#antigravity-cli.

The Reader's model events (runs, the live answer, the result object, summed usage,
calls by step, denied actions, notes) on small streams written here in agy's shapes;
every verb on the real capture beside the clone, when it is there.
"""

from pathlib import Path

import orjson
import pytest
from conftest import examples, model_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent.cmd_json import main as json_main
from ndagent.cmd_result import main as result_main
from ndagent.cmd_stats import main as stats_main
from ndagent.cmd_text import main as text_main
from ndagent.cmd_tools import main as tools_main
from ndagent.cmd_validate import main as validate_main
from ndagent.formats import OtherAgents, antigravity, get
from ndagent.model import Note, RunEnd, RunStart, Text, ToolEnd, ToolStart

GOLDEN = Path(__file__).parent / "golden" / "antigravity"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "antigravity"
CONVERSATION = "4e1b7c09-3d58-4a26-b9f0-8c2e5a7d1f63"


class Stream:
    """Lines in agy's shapes, one conversation, steps numbered as they come."""

    def __init__(self, conversation=CONVERSATION, init=True, model=None):
        self.conversation = conversation
        self.index = 0
        self.lines = []
        if init:
            body = {"cwd": "/w", "tools": ["run_command"], "permission_mode": "request-review"}
            if model:
                body["model"] = model
            self.lines.append({"event": "init", "conversation_id": conversation, "init": body})

    def step(self, **fields):
        self.lines.append({"event": "step_update",
                           "step_update": {"conversation_id": self.conversation, **fields}})
        return self

    def respond(self, *deltas, usage=(100, 10, 5)):
        index, self.index = self.index, self.index + 1
        for delta in deltas:
            self.step(step_index=index, state="ACTIVE", step_type="agent_response",
                      text_delta=delta)
        inp, out, cache = usage
        return self.step(step_index=index, state="DONE", step_type="agent_response",
                         usage={"input_tokens": inp, "output_tokens": out,
                                "thinking_tokens": 0, "cache_read_tokens": cache,
                                "total_tokens": inp + out})

    def tool(self, name, end="DONE", step_type="tool", **info):
        index, self.index = self.index, self.index + 1
        parameters = info.pop("parameters", {"CommandLine": "make"})
        self.step(step_index=index, state="ACTIVE", step_type=step_type, tool_name=name,
                  tool_info={"name": name, "parameters": parameters})
        if end is not None:
            self.step(step_index=index, state=end, step_type=step_type, tool_name=name,
                      tool_info={"name": name, "parameters": parameters, **info})
        return self

    def result(self, status="SUCCESS", response="", **fields):
        body = {"conversation_id": self.conversation, "status": status, "response": response,
                "duration_seconds": 2.5, "num_turns": 1, **fields}
        self.lines.append({"event": "result", "result": body})
        return self

    def bytes(self):
        return b"".join(orjson.dumps(line) + b"\n" for line in self.lines)


def read(stream, checks=False, needs=None):
    data = stream if stream.__class__ is bytes else stream.bytes()
    return model_events(antigravity, data, checks, needs)


def only(events, cls):
    return [event for event in events if event.__class__ is cls]


def test_a_run_answers_with_every_delta_as_it_comes_and_sums_its_steps():
    stream = (Stream(model="gemini-3-pro").respond("Looking. ").tool("run_command", output="ok")
              .respond("Done", ".\n").result(response="Looking. Done.\n"))
    events = read(stream)
    start, = only(events, RunStart)
    end, = only(events, RunEnd)
    assert (start.session_id, start.model, start.announced) == (CONVERSATION, "gemini-3-pro",
                                                                True)
    assert [(piece.text, piece.message) for piece in only(events, Text)] == [
        ("Looking. ", None), ("Done", None), (".\n", None)]
    assert (end.ok, end.answer, end.duration_ms, end.cost_usd) == (True, "Looking. Done.\n",
                                                                   2500, None)
    assert end.usage == {"input": 200, "cacheRead": 10, "cacheWrite": None, "output": 20}
    assert end.native == stream.lines[-1]["result"]


def test_a_call_is_its_step_active_then_done_started_once():
    stream = Stream().tool("view_file", parameters={"AbsolutePath": "/w/a"}, output="1 line")
    stream.lines.insert(2, stream.lines[1])  # an ACTIVE update again
    events = read(stream.result())
    start, = only(events, ToolStart)
    end, = only(events, ToolEnd)
    assert (start.call_id, start.kind, start.name, start.target) == (
        f"{CONVERSATION}:0", "read", "view_file", "/w/a")
    assert (end.call_id, end.outcome, end.result) == (f"{CONVERSATION}:0", "success", "1 line")


@pytest.mark.parametrize("end, error, outcome", [
    ("ERROR", {"type": "TOOL_ERROR", "message": "tool call denied by pre-tool hook: no"},
     "permissionDenied"),
    ("ERROR", {"type": "TOOL_ERROR", "message": "no such file"}, "error"),
    ("DONE", None, "success"),
])
def test_outcomes(end, error, outcome):
    fields = {} if error is None else {"error": error}
    ended, = only(read(Stream().tool("run_command", end=end, **fields).result()), ToolEnd)
    assert ended.outcome == outcome


@pytest.mark.parametrize("name, parameters, kind, target", [
    ("grep_search", {"SearchPath": "/w", "Query": "TODO"}, "grep", "TODO"),
    ("find_by_name", {"SearchPath": "/w", "Pattern": "*.py"}, "glob", "*.py"),
    ("write_to_file", {"TargetFile": "/w/b"}, "write", "/w/b"),
    ("call_mcp_tool", {}, "mcp", None),
    ("ask_question", {}, "ask_question", None),
])
def test_kinds_and_targets(name, parameters, kind, target):
    start, = only(read(Stream().tool(name, parameters=parameters).result()), ToolStart)
    assert (start.kind, start.target) == (kind, target)


def test_a_subagent_step_is_a_task_named_by_its_role():
    stream = Stream()
    stream.step(step_index=0, state="ACTIVE", step_type="subagent", tool_name="invoke_subagent",
                subagent_info={"subagents": [{"role": "reviewer"}]})
    start, = only(read(stream.result()), ToolStart)
    assert (start.kind, start.target) == ("task", "reviewer")


def test_a_denied_action_is_the_last_silent_step_of_its_tool():
    stream = (Stream().tool("run_command").tool("run_command", output="ran")
              .tool("write_to_file").tool("run_command")
              .result(denied_actions=[{"action": "command", "display_name": "RunCommand"}]))
    events = read(stream, checks=True)
    end, = only(events, RunEnd)
    assert end.outcomes == {f"{CONVERSATION}:3": "permissionDenied"}
    assert [ended.outcome for ended in only(events, ToolEnd)] == ["success"] * 4
    assert [note.check for note in only(events, Note)] == ["denied"]


def test_stats_counts_a_denied_action_s_call_as_denied(call):
    """A call that ended a success and that the run's end tells was denied counts as
    denied (the figures settle successes too)."""
    path = GOLDEN / "denied-shell" / "input.ndjson"
    figures = orjson.loads(call(stats_main, "--format", "ndjson", path)[1])
    assert figures["tools"] == {"write": {"success": 1}, "shell": {"permissionDenied": 1}}


def test_a_failed_run_keeps_its_text_and_its_open_call_is_pending():
    stream = (Stream().respond("Deploying.\n").tool("run_command", end=None)
              .result("ERROR", "Deploying.\n", error="interrupted"))
    end, = only(read(stream), RunEnd)
    assert (end.ok, end.failure, end.answer) == (False, "interrupted", "Deploying.\n")


@pytest.mark.parametrize("error, failure", [({"code": 7}, '{"code":7}'), (None, "status CANCELED")])
def test_the_failure_text_of_another_error(error, failure):
    fields = {} if error is None else {"error": error}
    end, = only(read(Stream().result("CANCELED", **fields)), RunEnd)
    assert end.failure == failure


def test_a_lone_error_result_is_a_whole_run_with_no_init_warning():
    stream = Stream("", init=False).result("ERROR", error="signed out",
                                           usage={"input_tokens": 0, "output_tokens": 0})
    events = read(stream, checks=True)
    start, end = events
    assert (start.announced, end.ok, end.usage) == (False, False, None)


def test_a_result_s_usage_is_taken_when_no_step_has_any():
    stream = Stream().result(usage={"input_tokens": 90, "output_tokens": 4})
    assert only(read(stream), RunEnd)[0].usage == {"input": 90, "cacheRead": 0,
                                                   "cacheWrite": None, "output": 4}


def test_cut_off_and_a_new_init_cuts_the_run_off():
    stream = Stream().respond("Half")
    stream.lines += Stream("other").respond("Whole").result(response="Whole").lines
    ends = only(read(stream), RunEnd)
    assert [(end.cutoff, end.answer) for end in ends] == [(True, "Half"), (False, "Whole")]


def test_the_checks():
    stream = Stream(init=False).respond("a").respond().step(step_index=0, state="DONE",
                                                            step_type="user_input")
    stream.step(conversation_id="elsewhere", step_index=9, state="DONE", step_type="tool")
    stream.lines[-1]["step_update"]["conversation_id"] = "elsewhere"
    stream.respond(usage=(1, 1, 0)).result(response="a", usage={"input_tokens": 5})
    found = [(note.check, note.line) for note in only(read(stream, checks=True), Note)]
    assert found == [("init", 1), ("step-order", 4), ("conversation", 5), ("usage-total", 7)]


def test_decides_on_an_event_envelope_with_no_type_and_is_found_in_another_stream():
    init, = Stream().lines
    assert antigravity.decides(init) and antigravity.may_decide(None)
    assert not antigravity.decides({**init, "type": "x"})
    assert not antigravity.decides({"event": "result", "result": "x"})
    assert not antigravity.decides({"event": "init", "init": {}})
    found = [module for decides, module in OtherAgents(get("claude")).tests(None)
             if decides(init)]
    assert found == [antigravity.FORMAT]


def native_view(events):
    """What json sees of a stream's runs: where each begins, how it ends, its object."""
    return [(end.start.line, end.cutoff, end.ok, end.failure, end.native)
            for end in only(events, RunEnd)]


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/input.ndjson")),
                         ids=lambda path: path.parent.name)
def test_the_native_object_needs_only_the_inits_and_results(path):
    """The steps, nearly every line, are passed over for json: its runs begin, end and
    hold the same objects as when every line is decoded."""
    assert antigravity.markers({"native"}) == ((("event", "init"),), (("event", "result"),))
    data = path.read_bytes()
    assert native_view(read(data, needs={"native"})) == native_view(read(data))
    runs_without_init = Stream().respond("a").result().lines[1:] * 2 + [{"event": "x"}]
    data = Stream(init=False).bytes() + b"".join(orjson.dumps(line) + b"\n"
                                                 for line in runs_without_init)
    assert native_view(read(data, needs={"native"})) == native_view(read(data))


def calls_view(events):
    """What text and tools see of a stream: each call event's id, session and outcome,
    and where each run begins and ends."""
    view = {ToolStart: lambda start: ("start", start.call_id, start.session_id, start.line),
            ToolEnd: lambda end: ("end", end.call_id, end.session_id, end.outcome),
            RunStart: lambda start: ("run", start.line, start.session_id),
            RunEnd: lambda end: ("ended", end.cutoff, end.ok)}
    return [view[event.__class__](event) for event in events if event.__class__ in view]


def without_init():
    """Runs with no init, whose conversation only a step passed over names: the first
    step names none, a step with a type (no agy object) names one, and the next names
    the run's; a tool step of another conversation, before the run's own, is passed
    over."""
    stream = Stream(init=False)
    stream.step(step_index=0, state="ACTIVE", step_type="agent_response", text_delta="a")
    del stream.lines[-1]["step_update"]["conversation_id"]
    stream.respond("b")
    typed = Stream("typed").respond("c").lines[-1]
    stream.lines.insert(1, {**typed, "type": "x"})
    stream.lines += Stream("elsewhere", init=False).tool("view_file", output="x").lines
    stream.tool("run_command", output="ok").result()
    after = Stream("next", init=False).respond("d").tool("list_dir", output="")
    return stream.lines + after.lines


@pytest.mark.parametrize("needs", [{"tools"}, {"tool_ends"}, {"tools", "native"}])
def test_the_calls_need_only_the_call_steps_and_the_runs_stay_as_they_are(needs):
    """Where calls alone matter, the agent_response steps (nearly every line) are passed
    over, and the runs they begin and the conversations they name are read from them:
    the calls come the same as when every line is decoded."""
    selected = antigravity.markers(needs)
    assert (("event", "init"),) in selected and (("event", "result"),) in selected
    data = b"".join(orjson.dumps(line) + b"\n" for line in without_init())
    assert calls_view(read(data, needs=needs)) == calls_view(read(data))
    assert [event.session_id for event in only(read(data, needs=needs), ToolStart)] == [
        CONVERSATION, "next"]
    for path in sorted(GOLDEN.glob("*/input.ndjson")):
        data = path.read_bytes()
        assert calls_view(read(data, needs=needs)) == calls_view(read(data)), path


def test_the_calls_of_a_stream_with_another_agent_s_lines_come_the_same_either_way():
    from test_prefilter import prints_the_same_with_and_without_the_prefilter

    claude = {"type": "assistant", "session_id": "s", "uuid": "u",
              "message": {"id": "msg_1", "content": [{"type": "text", "text": "x"}]}}
    lines = without_init()
    lines.insert(0, claude)
    lines.insert(len(lines) - 3, claude)
    prints_the_same_with_and_without_the_prefilter(
        b"".join(orjson.dumps(line) + b"\n" for line in lines))


def test_a_step_decisive_for_another_agent_too_begins_the_run_either_way():
    """An agent_response step that is also a Cursor transcript row (a role, an object
    message) is Antigravity's, whose test goes first on an object with no type: it
    begins the run and names its conversation, so a call of another conversation after
    it is passed over, whether the step is decoded or passed over by the prefilter."""
    from test_prefilter import prints_the_same_with_and_without_the_prefilter

    first = Stream(init=False).respond("a").lines[-1]
    lines = [{**first, "role": "user", "message": {}},
             *Stream("elsewhere", init=False).tool("run_command", output="ok").lines,
             *Stream(init=False).result().lines]
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    assert [event.session_id for event in only(read(data), ToolStart)] == []
    prints_the_same_with_and_without_the_prefilter(data)


# Any stream: steps of the run's conversation, of another, of none or a non-string one,
# with a type or no object body; inits and results with and without a conversation;
# other agents' objects (some also Antigravity's); noise; lines merged or cut.
_CONVERSATIONS = st.sampled_from([CONVERSATION, CONVERSATION, "other", None, 5, ...])
_FOREIGN = [{"type": "assistant", "session_id": "s", "uuid": "u",
             "message": {"id": "msg_1", "content": [{"type": "text", "text": "x"}]}},
            {"role": "user", "message": {}},
            {"sessionId": "s", "projectHash": "p"},
            {"type": None, "event": "step_update", "step_update": {"step_type": "tool"}},
            {"foo": 1}]


@st.composite
def any_step(draw):
    step = {"step_index": draw(st.integers(0, 3)),
            "state": draw(st.sampled_from(["ACTIVE", "DONE", "ERROR", "PENDING"])),
            "step_type": draw(st.sampled_from(["agent_response", "agent_response", "tool",
                                               "subagent", "finish", "user_input"])),
            "text_delta": "x", "tool_name": draw(st.sampled_from(["run_command", "view_file"])),
            "tool_info": {"name": "run_command", "parameters": {"CommandLine": "make"},
                          "output": "ok"},
            "usage": {"input_tokens": 3, "output_tokens": 2}}
    conversation = draw(_CONVERSATIONS)
    if conversation is not ...:
        step["conversation_id"] = conversation
    line = {"event": "step_update", "step_update": step}
    if draw(st.integers(0, 9)) == 0:
        line["type"] = "x"
    return line


@st.composite
def any_line(draw):
    which = draw(st.integers(0, 13))
    if which < 7:
        return orjson.dumps(draw(any_step())).decode()
    if which < 9:
        kind = "init" if which < 8 else "result"
        body = {"status": draw(st.sampled_from(["SUCCESS", "ERROR"])), "response": "x"}
        conversation = draw(_CONVERSATIONS)
        if conversation is not ...:
            body["conversation_id"] = conversation
        line = {"event": kind, kind: body}
        if kind == "init" and conversation is not ...:
            line["conversation_id"] = conversation
        return orjson.dumps(line).decode()
    if which < 13:
        foreign = draw(st.sampled_from(_FOREIGN))
        if draw(st.booleans()):  # Antigravity's too
            foreign = {**draw(any_step()), **foreign}
        return orjson.dumps(foreign).decode()
    return draw(st.sampled_from(["", "not json", "[1]", "{}", '{"event":']))


@st.composite
def any_stream(draw):
    out = draw(st.lists(any_line(), min_size=1, max_size=12))
    for _ in range(draw(st.integers(0, 2))):
        if len(out) > 1:
            at = draw(st.integers(0, len(out) - 2))
            cut = draw(st.integers(0, len(out[at])))
            out[at:at + 2] = [out[at][:cut] + out[at + 1]]
    return ("\n".join(out) + "\n").encode()


@settings(max_examples=examples(10), deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(any_stream())
def test_property_the_converters_print_the_same_on_any_stream_with_and_without_the_prefilter(
        stream):
    from test_prefilter import prints_the_same_with_and_without_the_prefilter

    prints_the_same_with_and_without_the_prefilter(stream)


# The real capture, when it is beside the clone.

def corpus_files():
    return sorted(CORPUS.glob("*.ndjson")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not corpus_files(),
                    reason="../shared/corpus/antigravity is not beside this clone")
@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.name)
def test_every_verb_on_the_real_capture(call, path):
    objects = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    result = objects[-1]["result"]
    assert call(json_main, path)[:3] == (0, orjson.dumps(result) + b"\n", "")
    response = result["response"]
    assert call(result_main, path)[:2] == (0, response.encode() + (b"\n" if response and
                                                                   response[-1] != "\n"
                                                                   else b""))
    steps = [o["step_update"] for o in objects if o["event"] == "step_update"]
    calls = {s["step_index"] for s in steps if s["step_type"] in ("tool", "subagent")}
    records = [orjson.loads(line) for line in call(tools_main, path)[1].splitlines()]
    assert sorted(r["call_id"] for r in records) == sorted(
        f"{result['conversation_id']}:{index}" for index in calls)
    assert len(call(text_main, path)[1].splitlines()) == len(calls)
    status, out, _ = call(validate_main, path)
    assert status == 0 and out.count(b"[denied]") == len(result.get("denied_actions", []))
    figures = orjson.loads(call(stats_main, "--format", "ndjson", path)[1])
    responses = [s["usage"] for s in steps if s["step_type"] == "agent_response"
                 and s["state"] == "DONE"]
    assert figures["tokens"]["input"] == sum(u["input_tokens"] for u in responses)
    assert figures["tokens"]["output"] == sum(u["output_tokens"] for u in responses)
    denied = sum(counts.get("permissionDenied", 0) for counts in figures["tools"].values())
    assert denied == len(result.get("denied_actions", []))
