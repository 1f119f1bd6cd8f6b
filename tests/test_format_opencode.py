"""The OpenCode format module: what it makes of each shape of docs/formats.md#opencode.

The Reader's model events (runs and where they end, the answer, the native object,
summed usage, tool calls, notes) on small streams written here in the shapes
OpenCode prints; every verb on the real capture beside the clone, when it is there.
"""

from pathlib import Path
from unittest import mock

import orjson
import pytest
from conftest import examples, model_events
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent.cmd_json import main as json_main
from ndagent.cmd_result import main as result_main
from ndagent.cmd_stats import main as stats_main
from ndagent.cmd_text import main as text_main
from ndagent.cmd_tools import main as tools_main
from ndagent.cmd_validate import main as validate_main
from ndagent.decoder import Event
from ndagent.formats import base, opencode
from ndagent.model import Note, RunEnd, RunStart, Text, ToolEnd, ToolStart

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "opencode"
SESSION = "ses_2a0c41f7effeKd8Lm3Np6Qr1St"
NEEDS = [None, frozenset({"text"}), frozenset({"tools"}), frozenset({"ends"}),
         frozenset({"native"}), frozenset({"text", "tools", "ends"})]


class Stream:
    """Lines in OpenCode's shapes, one session, the clock going on by 100 ms a line."""

    def __init__(self, session=SESSION):
        self.session = session
        self.time = 1790100000000
        self.lines = []
        self.message = None
        self.parts = 0

    def add(self, kind, **fields):
        self.time += 100
        self.lines.append({"type": kind, "timestamp": self.time, "sessionID": self.session,
                           **fields})
        return self

    def part(self, **fields):
        self.parts += 1
        return {"id": f"prt_{self.parts}", "messageID": self.message,
                "sessionID": self.session, **fields}

    def step(self):
        self.message = f"msg_{len(self.lines)}"
        return self.add("step_start", part=self.part(type="step-start"))

    def text(self, text, part_id=None):
        part = self.part(type="text", text=text, time={"start": 1, "end": 2})
        if part_id is not None:
            part["id"] = part_id
        return self.add("text", part=part)

    def tool(self, tool, status="completed", call_id="call_1", **state):
        state = {"status": status, "input": state.pop("input", {}), **state,
                 "time": {"start": 1000, "end": 1250}}
        return self.add("tool_use", part=self.part(type="tool", tool=tool, callID=call_id,
                                                    state=state))

    def finish(self, reason="stop", tokens=None, cost=0.001):
        tokens = tokens or {"total": 130, "input": 100, "output": 10, "reasoning": 5,
                            "cache": {"read": 15, "write": 0}}
        return self.add("step_finish", part=self.part(type="step-finish", reason=reason,
                                                       tokens=tokens, cost=cost))

    def error(self, error):
        return self.add("error", error=error)

    def bytes(self):
        return b"".join(orjson.dumps(line) + b"\n" for line in self.lines)


def read(stream, checks=False, needs=None):
    data = stream if stream.__class__ is bytes else stream.bytes()
    return model_events(opencode, data, checks, needs)


def only(events, cls):
    return [event for event in events if event.__class__ is cls]


def two_steps():
    return (Stream().step().text("Looking first.").tool("bash", input={"command": "ls"},
                                                         output="a\n", metadata={"exit": 0})
            .finish("tool-calls").step().text("Two files.").finish())


def test_a_run_of_two_steps_answers_with_its_last_step_and_sums_the_usage():
    events = read(two_steps())
    start, = only(events, RunStart)
    end, = only(events, RunEnd)
    assert (start.session_id, start.announced) == (SESSION, True)
    assert (end.ok, end.cutoff, end.answer, end.model) == (True, False, "Two files.", None)
    assert end.usage == {"input": 200, "cacheRead": 30, "cacheWrite": 0, "output": 30}
    assert end.cost_usd == 0.002
    assert end.duration_ms == 600
    assert end.native == {"sessionID": SESSION, "response": "Two files.", "steps": 2,
                          "tokens": {"total": 260, "input": 200, "output": 20,
                                     "reasoning": 10, "cache": {"read": 30, "write": 0}},
                          "cost": 0.002}
    assert [piece.text for piece in only(events, Text)] == ["Looking first.", "Two files."]


def test_costs_add_up_as_their_decimals_do():
    stream = Stream().step().finish("tool-calls", cost=0.00317).step().finish(cost=0.00094)
    assert only(read(stream), RunEnd)[0].cost_usd == 0.00411


def test_an_older_step_without_total_has_it_computed():
    tokens = {"input": 7, "output": 3, "reasoning": 1, "cache": {"read": 4, "write": 2}}
    end, = only(read(Stream().step().finish(tokens=tokens)), RunEnd)
    assert end.native["tokens"]["total"] == 17


def test_a_call_is_one_line_its_start_and_end_made_there():
    events = read(two_steps())
    start, = only(events, ToolStart)
    end, = only(events, ToolEnd)
    assert (start.call_id, start.kind, start.name, start.target, start.time_ms) == (
        "call_1", "shell", "bash", "ls", 1000)
    assert (end.outcome, end.time_ms, end.result) == ("success", 1250,
                                                      {"output": "a\n", "metadata": {"exit": 0}})
    assert start.model_call_id == end.model_call_id == "msg_0"
    assert start.line == end.line == 3


@pytest.mark.parametrize("tool, state, outcome", [
    ("bash", {"metadata": {"exit": 2}}, "failure"),
    ("bash", {"metadata": {"exit": 0}}, "success"),
    ("read", {"metadata": {"exit": 2}}, "success"),
    ("edit", {"status": "error", "error": "The user rejected permission to use this specific "
              "tool call."}, "permissionDenied"),
    ("edit", {"status": "error", "error": "The user rejected permission to use this specific "
              "tool call. You may try again with different parameters."}, "permissionDenied"),
    ("bash", {"status": "error", "error": "The user has specified a rule which prevents you "
              "from using this specific tool call. Here are some of the relevant rules"},
     "permissionDenied"),
    ("edit", {"status": "error", "error": "The user rejected permission to use this specific "
              "tool call with the following feedback: not that file"}, "rejected"),
    ("edit", {"status": "error", "error": "oldString not found"}, "error"),
    ("edit", {"status": "running"}, "unknown"),
])
def test_outcomes(tool, state, outcome):
    state = {"status": "completed", **state}
    end, = only(read(Stream().step().tool(tool, **state).finish()), ToolEnd)
    assert end.outcome == outcome


@pytest.mark.parametrize("tool, files, kind", [
    ("apply_patch", [{"type": "add", "filePath": "/a"}], "write"),
    ("apply_patch", [{"type": "delete", "filePath": "/a"}, {"type": "delete"}], "delete"),
    ("patch", [{"type": "add", "filePath": "/a"}, {"type": "update"}], "edit"),
    ("apply_patch", None, "edit"),
    ("todowrite", None, "updateTodos"),
    ("codesearch", None, "semSearch"),
    ("github_create_issue", None, "github_create_issue"),
])
def test_kinds(tool, files, kind):
    state = {} if files is None else {"metadata": {"files": files}}
    end, = only(read(Stream().step().tool(tool, **state).finish()), ToolEnd)
    assert end.kind == kind


def test_a_patch_without_files_is_told_by_its_first_header():
    patch = "*** Begin Patch\n*** Update File: src/x.py\n@@\n-a\n+b\n*** End Patch"
    stream = Stream().step().tool("apply_patch", input={"patchText": patch}).finish()
    assert only(read(stream), ToolEnd)[0].target == "src/x.py"


def test_a_part_written_again_replaces_what_it_said_in_the_answer():
    stream = Stream().step().text("Draft", part_id="prt_x").text("Final", part_id="prt_x")
    events = read(stream.finish())
    assert only(events, RunEnd)[0].answer == "Final"
    assert [piece.text for piece in only(events, Text)] == ["Draft"]


def test_a_lone_error_is_a_failed_run_with_its_message():
    stream = Stream().error({"name": "UnknownError", "data": {"message": "Model not found: x."}})
    start, end = read(stream)
    assert start.announced and (end.ok, end.failure, end.answer) == (False, "Model not found: x.",
                                                                     "")
    assert end.native == {"sessionID": SESSION, "steps": 0,
                          "error": {"name": "UnknownError",
                                    "data": {"message": "Model not found: x."}}}
    assert end.usage is None and end.cost_usd is None


@pytest.mark.parametrize("error, failure", [
    ({"type": "unknown", "message": "Model unavailable: y"}, "Model unavailable: y"),
    ({"name": "MessageAbortedError", "data": {}}, "MessageAbortedError"),
])
def test_the_failure_text_falls_back_to_message_then_name(error, failure):
    assert only(read(Stream().step().error(error)), RunEnd)[0].failure == failure


def test_a_step_that_ends_in_error_fails_the_run():
    end, = only(read(Stream().step().text("Hm").finish("error")), RunEnd)
    assert (end.ok, end.failure) == (False, 'the model call ended with reason "error"')
    assert "response" not in end.native


def test_a_step_after_a_final_one_is_another_run_and_a_new_session_cuts_one_off():
    stream = Stream().step().finish().step().text("again")
    other = Stream("ses_other")
    other.step().finish()
    ends = only(read(stream.bytes() + other.bytes()), RunEnd)
    assert [(end.ok, end.cutoff, end.answer) for end in ends] == [
        (True, False, ""), (False, True, "again"), (True, False, "")]
    assert [start.session_id for start in only(read(stream.bytes() + other.bytes()),
                                               RunStart)] == [SESSION, SESSION, "ses_other"]


@pytest.mark.parametrize("other", [Stream("ses_other").step().finish(),
                                   Stream("ses_other").error({"name": "UnknownError"})])
def test_a_run_of_another_session_after_one_cut_off_is_no_finding_of_its_own(other):
    """A run cut off inside a step, then another session's stream (its first step, or an
    error): the end cut off says so, as it does with nothing after it."""
    cut = Stream().step().text("Checking.")
    events = read(cut.bytes() + other.bytes(), checks=True)
    assert not only(events, Note)
    assert [end.cutoff for end in only(events, RunEnd)] == [True, False]


def test_a_part_of_another_session_in_a_run_is_said_and_begins_a_run():
    stream = Stream().step().text("Checking.")
    stream.lines += Stream("ses_other").text("Elsewhere.").lines
    events = read(stream, checks=True)
    assert [(note.check, note.line) for note in only(events, Note)] == [
        ("session", 3), ("outside-step", 3)]
    assert [start.session_id for start in only(events, RunStart)] == [SESSION, "ses_other"]


def test_done_ends_an_open_run_keeping_its_rejections_and_is_ignored_after_an_end():
    stream = Stream().step().finish("tool-calls").add("done", reason="idle", rejected=["bash"])
    end, = only(read(stream), RunEnd)
    assert (end.ok, end.native["rejected"]) == (True, ["bash"])
    stream = Stream().step().finish().add("done", reason="idle", rejected=[])
    assert len(only(read(stream), RunStart)) == 1


def test_cut_off_answers_with_the_last_step_s_text():
    end, = only(read(Stream().step().text("2^20 = 1048576")), RunEnd)
    assert (end.cutoff, end.answer, end.usage) == (True, "2^20 = 1048576", None)


def test_the_checks():
    stream = Stream().text("outside").step()
    stream.lines.append({"type": "text", "sessionID": SESSION,
                         "part": {"sessionID": "ses_elsewhere", "text": "x"}})
    stream.tool("bash", status="pending")
    stream.finish("length", tokens={"total": 9, "input": 1, "output": 1, "reasoning": 0,
                                    "cache": {"read": 0, "write": 0}})
    stream.add("step_finish", part={"reason": "tool-calls"})
    found = [(note.check, note.line) for note in only(read(stream, checks=True), Note)]
    assert found == [("outside-step", 1), ("envelope", 3), ("part-session", 3),
                     ("tool-status", 4), ("tokens-total", 5), ("finish-reason", 5),
                     ("steps", 6)]
    assert not only(read(two_steps(), checks=True), Note)


@pytest.mark.parametrize("needs", NEEDS)
def test_the_prefilter_leaves_the_runs_and_their_figures_as_they_are(needs):
    data = two_steps().bytes() + Stream("ses_b").error({"name": "APIError",
                                                        "data": {"message": "down"}}).bytes()
    whole = only(read(data), RunEnd)
    part = only(read(data, needs=needs), RunEnd)
    assert [(e.ok, e.line) for e in part] == [(e.ok, e.line) for e in whole]
    # The figures are summed for a verb that wants the runs' ends or json objects only.
    summed = needs is None or "ends" in needs or "native" in needs
    assert [(e.usage, e.cost_usd) for e in part] == [
        (e.usage, e.cost_usd) if summed else (None, None) for e in whole]
    if needs is not None and "ends" in needs:
        assert [e.answer for e in part] == [e.answer for e in whole]


@pytest.mark.parametrize("needs", [{"tools"}, {"tool_ends"}, {"text", "tools", "ends"}])
def test_every_line_is_decoded_where_calls_matter(needs):
    """The tool_use lines, which hold the calls' output, are then decoded: passing over
    the small lines left saves less than the search for markers costs."""
    assert opencode.markers(needs) is None


def test_the_tool_use_lines_are_passed_over_where_calls_do_not_matter():
    for needs in ({"native"}, {"text", "ends"}):
        assert (("type", "tool_use"),) not in opencode.markers(needs)


def test_decides_on_session_id_with_a_part_or_an_error():
    step, = Stream().step().lines
    assert opencode.decides(step)
    assert not opencode.decides({**step, "sessionID": None})
    assert not opencode.decides({"type": "tool_use", "tool_id": "x", "tool_name": "y"})
    assert opencode.decides({"type": "error", "timestamp": 1, "sessionID": "",
                             "error": {"type": "unknown", "message": "x"}})
    assert not opencode.decides({"type": "error", "message": "x"})
    assert not opencode.decides({"type": ["text"], "sessionID": "s", "part": {}})


# The real capture, when it is beside the clone.

def corpus_files():
    return sorted(CORPUS.glob("*.ndjson")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not corpus_files(), reason="../shared/corpus/opencode is not beside this clone")
@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.name)
def test_every_verb_on_the_real_capture(call, path):
    objects = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    steps = [o["part"] for o in objects if o["type"] == "step_finish"]
    last = [o for o in objects if o["type"] == "step_start"][-1]["part"]["messageID"]
    answer = "".join(o["part"]["text"] for o in objects
                     if o["type"] == "text" and o["part"]["messageID"] == last)
    status, out, err = call(json_main, path)
    native = orjson.loads(out)
    assert (status, err) == (0, "")
    assert native["response"] == answer and native["steps"] == len(steps)
    assert native["tokens"]["total"] == sum(step["tokens"]["total"] for step in steps)
    assert call(result_main, path)[:2] == (0, answer.encode() + b"\n")
    calls = [o["part"] for o in objects if o["type"] == "tool_use"]
    records = [orjson.loads(line) for line in call(tools_main, path)[1].splitlines()]
    assert [r["call_id"] for r in records] == [c["callID"] for c in calls]
    assert {r["status"] for r in records} == {"success"}
    assert len(call(text_main, path)[1].splitlines()) == len(calls)
    assert call(validate_main, path)[0] == 0
    figures = orjson.loads(call(stats_main, "--format", "ndjson", path)[1])
    assert figures["tokens"]["output"] == sum(s["tokens"]["output"] + s["tokens"]["reasoning"]
                                              for s in steps)
    assert figures["tokens"]["input"] == sum(step["tokens"]["input"] for step in steps)


# A step's lines, drawn for the property below (of the step's session: a part of
# another session inside a step begins a run where it is read, and it is read only
# where the step's text matters, as the prefilter passes over a tool_use line).
_STEP_LINES = st.lists(st.sampled_from(["text", "tool", "reasoning", "noise"]), max_size=4)


def _drawn_stream(steps, cut):
    """OpenCode lines made of ``steps`` ((session, lines, end, opened) each: end is a
    finish reason, "error", "done" or None; without ``opened``, no step_start), cut off
    after ``cut`` lines (None: whole).  A step with no step_start is of the session of
    the step before it: its parts are of the run in hand's session."""
    lines, before = [], None
    for session, inner, end, opened in steps:
        if not opened and before is not None:
            session = before
        before = session
        stream = Stream(session)
        if opened:
            stream.step()
        for kind in inner:
            if kind == "text":
                stream.text(f"said {len(stream.lines)} ")
            elif kind == "tool":
                stream.tool("bash", input={"command": "ls"}, output="a\n" * 3)
            elif kind == "reasoning":
                stream.add("reasoning", part=stream.part(type="reasoning", text="hm"))
            else:
                stream.add("text", part="not an object")
        if end == "error":
            stream.error({"name": "APIError", "data": {"message": "down"}})
        elif end == "done":
            stream.add("done", reason="idle")
        elif end is not None:
            stream.finish(end)
        lines += stream.lines
    if cut is not None:
        lines = lines[:cut]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


@settings(max_examples=examples(40), deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from([SESSION, "ses_b"]), _STEP_LINES,
                                st.sampled_from(["stop", "tool-calls", "unknown", "length",
                                                 "error", "done", None]),
                                st.booleans()),
                      max_size=6),
       cut=st.one_of(st.none(), st.integers(0, 40)), needs=st.sampled_from(
           [frozenset({"ends"}), frozenset({"native"}), frozenset({"ends", "native"})]),
       most=st.sampled_from([base.MAX_HELD_ITEMS, 1, 2]))
def test_property_the_lines_held_inside_a_step_change_no_run(steps, cut, needs, most):
    """Where only the runs' ends are needed, the lines inside a step are held unread
    until its end tells whether they matter (dropped, or read after all, in every
    order of steps, sessions, reasons and cuts): the runs, where they end, their
    answers, figures and json objects are those of a Reader that reads every line as
    it comes, whether the prefilter passed lines over or not, and however few items
    may be held (``most``) before they are read all the same."""
    data = _drawn_stream(steps, cut)
    whole = _runs(_every_line(data, frozenset({"text", "ends", "native"})))
    with mock.patch.object(base, "MAX_HELD_ITEMS", most):
        assert _runs(read(data, needs=needs)) == whole
        assert _runs(_every_line(data, needs)) == whole


def _runs(events):
    """The RunStarts and RunEnds among ``events``, each as its fields."""
    return [_fields(event) for event in events if event.__class__ in (RunStart, RunEnd)]


def _fields(value):
    if value.__class__ not in (RunStart, RunEnd):
        return value
    return type(value).__name__, {name: _fields(getattr(value, name, None))
                                  for cls in type(value).__mro__
                                  for name in getattr(cls, "__slots__", ())}


def _every_line(data, needs):
    """The model events of a Reader told ``needs`` and handed every line decoded."""
    reader = opencode.Reader("input", False, needs)
    events = []

    def replay(held, read_event):
        nonlocal events
        for item in held:
            events += read_event(item)

    reader.replay = replay
    for line_number, line in enumerate(data.splitlines(), 1):
        value = orjson.loads(line)
        events += reader.event(Event("input", line_number, value))
    return events + reader.finish()
