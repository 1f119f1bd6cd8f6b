"""The GitHub Copilot CLI format module: what it makes of each shape of
docs/formats.md#copilot-cli.

The Reader's model events (runs, the answer, deltas, the result line, summed usage,
calls and their outcomes, subagent parents, notes) on small streams written here in
the shapes Copilot prints; no real capture could be shared.
"""

import orjson
import pytest
from conftest import InProcess, model_events

from ndagent.formats import copilot
from ndagent.model import Note, RunEnd, RunStart, Text, ToolEnd, ToolStart

NEEDS = [None, frozenset({"text"}), frozenset({"tools"}), frozenset({"ends"}),
         frozenset({"text", "tools", "ends"})]


class Stream:
    """Session events in Copilot's shapes, numbered ids, the clock going on."""

    def __init__(self):
        self.lines = []

    def add(self, kind, agent=None, **data):
        count = len(self.lines)
        line = {"type": kind, "data": data, "id": f"e{count}",
                "timestamp": f"2026-10-02T09:00:{count:02d}.000Z",
                "parentId": f"e{count - 1}" if count else None}
        if agent is not None:
            line["agentId"] = agent
        self.lines.append(line)
        return self

    def message(self, message_id, content, *deltas, requests=(), agent=None, model="m1"):
        for delta in deltas:
            self.add("assistant.message_delta", agent, messageId=message_id, deltaContent=delta)
        return self.add("assistant.message", agent, messageId=message_id, content=content,
                        model=model, toolRequests=[{"toolCallId": call, "name": "x"}
                                                   for call in requests])

    def tool(self, call_id, name, arguments=None, agent=None, **end):
        self.add("tool.execution_start", agent, toolCallId=call_id, toolName=name,
                 arguments=arguments or {})
        return self.add("tool.execution_complete", agent, toolCallId=call_id,
                        **(end or {"success": True, "result": {"content": "ok"}}))

    def result(self, code=0, duration=4200):
        self.lines.append({"type": "result", "timestamp": "2026-10-02T09:01:00.000Z",
                           "sessionId": "s1", "exitCode": code,
                           "usage": {"premiumRequests": 1, "sessionDurationMs": duration}})
        return self

    def bytes(self):
        return b"".join(orjson.dumps(line) + b"\n" for line in self.lines)


def read(stream, checks=False, needs=None):
    data = stream if stream.__class__ is bytes else stream.bytes()
    return model_events(copilot, data, checks, needs)


def only(events, cls):
    return [event for event in events if event.__class__ is cls]


def success():
    return (Stream().add("session.tools_updated", model="claude-sonnet-4.6")
            .add("user.message", content="Count TODOs")
            .message("m1", "", requests=["c1"])
            .add("assistant.usage", inputTokens=1000, cacheReadTokens=800,
                 cacheWriteTokens=10, outputTokens=40)
            .tool("c1", "grep", {"pattern": "TODO", "path": "src"})
            .message("m2", "Two TODOs.", "Two ", "TODOs.")
            .add("assistant.usage", inputTokens=1100, cacheReadTokens=1000,
                 cacheWriteTokens=0, outputTokens=5)
            .result())


def test_a_run_answers_with_its_last_message_and_sums_its_usage():
    stream = success()
    events = read(stream)
    start, = only(events, RunStart)
    end, = only(events, RunEnd)
    assert start.announced
    assert (end.ok, end.answer, end.model, end.duration_ms, end.cost_usd) == (
        True, "Two TODOs.", "claude-sonnet-4.6", 4200, None)
    assert end.usage == {"input": 300, "cacheRead": 1800, "cacheWrite": 10, "output": 45}
    assert end.native == stream.lines[-1] and start.session_id == "s1"
    assert [(piece.text, piece.message) for piece in only(events, Text)] == [
        ("Two ", "m2"), ("TODOs.", "m2")]


def test_a_call_pairs_by_tool_call_id_with_its_message_and_clock():
    events = read(success())
    start, = only(events, ToolStart)
    end, = only(events, ToolEnd)
    assert (start.call_id, start.kind, start.name, start.target, start.model_call_id) == (
        "c1", "grep", "grep", "TODO", "m1")
    assert (end.kind, end.outcome, end.result) == ("grep", "success", {"content": "ok"})
    assert end.time_ms - start.time_ms == 1000


@pytest.mark.parametrize("name, end, outcome", [
    ("bash", {"success": True, "result": {"content": "boom\n<exited with exit code 2>"}},
     "failure"),
    ("bash", {"success": True, "result": {"content": "x", "contents": [
        {"type": "terminal", "exitCode": 1}]}}, "failure"),
    ("bash", {"success": True, "result": {"content": "ok\n<exited with exit code 0>"}},
     "success"),
    ("view", {"success": True, "result": {"content": "<exited with exit code 2>"}}, "success"),
    ("edit", {"success": False, "error": {"code": "denied", "message": "no"}},
     "permissionDenied"),
    ("edit", {"success": False, "error": {"code": "rejected", "message": "no"}}, "rejected"),
    ("edit", {"success": False, "error": {"message": "no such file"}}, "error"),
    ("edit", {}, "unknown"),
])
def test_outcomes(name, end, outcome):
    stream = Stream().tool("c1", name, **end) if end else Stream().add(
        "tool.execution_start", toolCallId="c1", toolName=name, arguments={}).add(
        "tool.execution_complete", toolCallId="c1")
    ended, = only(read(stream.result()), ToolEnd)
    assert ended.outcome == outcome


def test_an_mcp_tool_is_named_server_slash_tool():
    stream = Stream()
    stream.add("tool.execution_start", toolCallId="c1", toolName="github-search_code",
               mcpServerName="github", mcpToolName="search_code", arguments={"q": "x"})
    start, = only(read(stream.result()), ToolStart)
    assert (start.kind, start.name, start.target) == ("mcp", "github/search_code",
                                                      "github/search_code")


def test_a_subagent_s_calls_have_its_task_as_parent_and_its_text_is_no_answer():
    stream = (Stream().add("tool.execution_start", toolCallId="t1", toolName="task",
                           arguments={})
              .add("subagent.started", toolCallId="t1", agentId="a1", agentName="r")
              .tool("s1", "view", {"path": "/a"}, agent="a1")
              .message("sm", "sub text", agent="a1")
              .add("tool.execution_complete", toolCallId="t1", success=True,
                   result={"content": "done"})
              .message("m1", "Main answer.").result())
    events = read(stream)
    assert [(e.call_id, e.parent) for e in only(events, ToolStart)] == [("t1", None),
                                                                         ("s1", "t1")]
    assert only(events, RunEnd)[0].answer == "Main answer."
    assert [piece.text for piece in only(events, Text)] == ["Main answer."]


def test_a_failed_run_s_text_is_its_last_session_error_else_its_exit_code():
    stream = Stream().add("session.error", errorType="quota", message="Over quota.")
    end, = only(read(stream.result(1)), RunEnd)
    assert (end.ok, end.failure) == (False, "Over quota.")
    end, = only(read(Stream().add("user.message", content="x").result(3)), RunEnd)
    assert end.failure == "exit code 3"


def test_cut_off_answers_with_the_last_message_so_far():
    stream = Stream().message("m1", "First.").add("assistant.message_delta", messageId="m2",
                                                 deltaContent="Seco")
    end, = only(read(stream), RunEnd)
    assert (end.cutoff, end.answer) == (True, "Seco")
    end, = only(read(Stream().message("m1", "First.")), RunEnd)
    assert end.answer == "First."


def test_two_runs_each_begin_after_the_result():
    data = success().bytes() + success().bytes()
    ends = only(read(data), RunEnd)
    assert [end.answer for end in ends] == ["Two TODOs."] * 2
    assert all(start.announced for start in only(read(data), RunStart))


@pytest.mark.parametrize("needs", NEEDS)
@pytest.mark.parametrize("cut", [
    Stream().add("session.tools_updated", model="gpt-5.4").add("user.message", content="Go")
    .message("m1", "Running them.", requests=["c1"]).add("tool.execution_start",
                                                         toolCallId="c1", toolName="bash"),
    Stream().add("session.mcp_servers_loaded", servers=[])])
def test_another_process_s_stream_after_a_run_with_no_result_begins_a_run(cut, needs):
    """A session's first event (its parentId null, a start-up notice here) ends the run
    in hand, cut off, whether that run got to its prompt or not."""
    ends = only(read(cut.bytes() + success().bytes(), needs=needs), RunEnd)
    assert [(end.cutoff, end.ok) for end in ends] == [(True, False), (False, True)]
    assert ends[1].answer == "Two TODOs."
    assert ends[0].answer == ("Running them." if len(cut.lines) > 1 else None)
    starts = only(read(cut.bytes() + success().bytes(), needs=needs), RunStart)
    assert [start.line for start in starts] == [1, len(cut.lines) + 1]


@pytest.mark.parametrize("kind", ["user.message", "session.resume", "session.start"])
def test_after_the_prompt_another_prompt_or_session_begins_another_run(kind):
    """A resumed session's stream need not begin with a parentId null: after the run's
    prompt, the main agent's next prompt, or a session's start or resumption, begins
    another run (``copilot -p`` takes one prompt a process)."""
    stream = Stream().add("user.message", content="Migrate").message("m1", "Running.")
    stream.add(kind, content="And then?").message("m2", "Done.").result()
    ends = only(read(stream), RunEnd)
    assert [(end.cutoff, end.answer) for end in ends] == [(True, "Running."), (False, "Done.")]
    assert [start.line for start in only(read(stream), RunStart)] == [1, 3]


@pytest.mark.parametrize("kind, agent", [
    ("session.warning", None), ("session.info", None), ("session.tools_updated", None),
    ("session.mcp_server_status_changed", None), ("user.message", "a1")])
def test_a_notice_or_a_subagent_s_prompt_in_a_run_begins_none(kind, agent):
    stream = Stream().add("user.message", content="Migrate").message("m1", "Running.")
    stream.add(kind, agent, content="Review it", message="An MCP server stopped.")
    end, = only(read(stream.message("m2", "Done.").result()), RunEnd)
    assert (end.ok, end.answer) == (True, "Done.")


def test_the_checks():
    stream = (Stream().add("session.warning", warningType="mcp", message="off")
              .add("assistant.message_delta", messageId="m1", deltaContent="A")
              .message("m1", "B")
              .add("assistant.message_delta", messageId="m2", deltaContent="C")
              .add("session.error", message="retrying"))
    stream.lines.append({"type": "user.message", "data": {}})
    found = [(note.check, note.line)
             for note in only(read(stream.result(0), checks=True), Note)]
    assert found == [("session-warning", 1), ("deltas", 3), ("envelope", 6),
                     ("session-error", 7), ("deltas", 7)]
    assert not only(read(success(), checks=True), Note)
    found = [note.check for note in only(read(Stream().message("m", "").result(),
                                              checks=True), Note)]
    assert found == ["no-answer"]


@pytest.mark.parametrize("needs", NEEDS)
def test_the_prefilter_leaves_the_runs_and_their_figures_as_they_are(needs):
    data = success().bytes() + Stream().add("session.error", message="x").result(1).bytes()
    whole = only(read(data), RunEnd)
    part = only(read(data, needs=needs), RunEnd)
    assert [(e.ok, e.usage, e.model, e.answer, e.line) for e in part] == [
        (e.ok, e.usage, e.model, e.answer, e.line) for e in whole]


@pytest.mark.parametrize("needs", [frozenset({"tool_ends"}), frozenset({"native"})])
def test_the_calls_ends_and_the_native_object_need_no_message_nor_usage(needs):
    """Those lines are passed over: the runs end alike, with the same object, and the
    calls' ends have the same tools and outcomes."""
    assert not {(("type", "assistant.message"),), (("type", "assistant.usage"),)} & set(
        copilot.markers(needs))
    data = success().bytes() + Stream().add("session.error", message="x").result(1).bytes()

    def seen(events):
        return [(e.ok, e.failure, e.cutoff, e.native, e.line) if e.__class__ is RunEnd
                else (e.call_id, e.kind, e.name, e.outcome, e.line) for e in events
                if e.__class__ is RunEnd or e.__class__ is ToolEnd and "tool_ends" in needs]

    assert seen(read(data, needs=needs)) == seen(read(data))


def test_decides_on_dotted_types_with_data_not_codex_s():
    assert copilot.decides({"type": "session.idle", "data": {}})
    assert not copilot.decides({"type": "session.idle"})
    assert not copilot.decides({"type": "item.completed", "data": {}})
    assert copilot.decides({"type": "result", "exitCode": 0, "sessionId": "s"})
    assert not copilot.decides({"type": "result", "exitCode": 0})
    assert not copilot.may_decide(None) and not copilot.may_decide("turn.started")


def test_a_parent_id_names_an_earlier_event():
    """The Stream's events each name the one before; one that names a later event, or
    itself, is said; one that names an event never seen is not (the stream may begin
    after it)."""
    stream = Stream().add("user.message", content="x").add("session.info", message="a")
    stream.add("session.info", message="b").add("session.info", message="c")
    stream.lines[0]["parentId"] = "before-the-stream"
    stream.lines[1]["parentId"] = "e3"  # the last event, two lines on
    stream.lines[2]["parentId"] = "e2"  # itself
    found = [(note.check, note.line, note.message)
             for note in only(read(stream.result(0), checks=True), Note)
             if note.check == "parent"]
    assert found == [("parent", 3, "the event's parentId is its own id"),
                     ("parent", 4, 'event "e3" comes after line 2, whose parentId names it')]


def test_a_transcript_takes_a_message_from_its_whole_line_and_one_cut_off_from_its_deltas():
    """The transcripts (the need "whole_text") pass the deltas over undecoded: a message's
    text is its whole line's, and the deltas are read only where no whole message
    follows them."""
    stream = (Stream().add("user.message", content="Go")
              .message("m1", "Whole text.", "Delta ", "text.")
              .add("assistant.message_delta", messageId="m2", deltaContent="Cut ")
              .add("assistant.message_delta", messageId="m2", deltaContent="short"))
    status, out, _ = InProcess()("markdown", stream.bytes())
    assert status == 1
    assert b"Whole text." in out and b"Delta text." not in out
    assert b"Cut short" in out


def test_a_message_of_tens_of_thousands_of_deltas_is_read_whole():
    """Its deltas are its text where no whole message follows (a transcript), and their
    digest matches the whole message where one does (validate): each delta once (the
    text joined at each delta took 16 s for 40 000)."""
    deltas = [f"d{index} " for index in range(40_000)]
    cut = Stream().add("user.message", content="Go")
    for delta in deltas:
        cut.add("assistant.message_delta", messageId="m1", deltaContent=delta)
    _, out, _ = InProcess()("markdown", cut.bytes())
    assert "".join(deltas).strip().encode() in out
    whole = cut.add("assistant.message", messageId="m1", content="".join(deltas)).result()
    status, out, _ = InProcess()("validate", whole.bytes())
    assert status == 0 and b"[deltas]" not in out, out
