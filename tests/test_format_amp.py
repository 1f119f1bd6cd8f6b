"""The Amp format module: what it makes of each shape of its stream (Claude's envelope
with thread ids, messages without ids, usage only on assistant lines, a failed run's
error as a string, its checks), on small streams written here in Amp's shapes; no real
capture could be shared."""

from pathlib import Path

import orjson
import pytest
from conftest import model_events

from ndagent import formats
from ndagent.formats import amp
from ndagent.model import Note, RunEnd, RunStart, Text, ToolEnd, ToolStart

THREAD = "T-019f3a52-6c1d-7e80-9b24-5d7c0e1f8a39"


class Stream:
    """Lines in Amp's shapes: the thread id on each, no uuid, no message id."""

    def __init__(self):
        self.lines = []

    def add(self, line):
        self.lines.append({**line, "session_id": THREAD})
        return self

    def init(self):
        return self.add({"type": "system", "subtype": "init", "cwd": "/w",
                         "tools": ["Bash", "Read"], "mcp_servers": []})

    def prompt(self, text="Go."):
        return self.add({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": text}]}, "parent_tool_use_id": None})

    def assistant(self, *blocks, usage=(1, 0, 0, 1), parent=None):
        figures = dict(zip(("input_tokens", "cache_creation_input_tokens",
                            "cache_read_input_tokens", "output_tokens"), usage))
        return self.add({"type": "assistant", "message": {
            "type": "message", "role": "assistant", "content": list(blocks),
            "stop_reason": "end_turn", "usage": {**figures, "max_tokens": 300000}},
            "parent_tool_use_id": parent})

    def tool_result(self, call_id, content="ok", error=False, parent=None):
        return self.add({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": content,
             "is_error": error}]}, "parent_tool_use_id": parent})

    def result(self, text="Done.", error=None):
        line = {"type": "result", "subtype": "success" if error is None else
                "error_during_execution", "duration_ms": 900, "is_error": error is not None,
                "num_turns": 1}
        line.update({"result": text} if error is None else {"error": error})
        return self.add(line)

    def bytes(self):
        return b"".join(orjson.dumps(line) + b"\n" for line in self.lines)


def text(value):
    return {"type": "text", "text": value}


def call(call_id, name, args):
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


GOLDEN = Path(__file__).parent / "golden" / "amp"


def read(stream, checks=False, needs=None):
    return model_events(amp, stream.bytes(), checks, needs)


def only(events, cls):
    return [event for event in events if event.__class__ is cls]


def notes(events):
    return [(note.check, note.line) for note in only(events, Note)]


@pytest.mark.parametrize("needs", [None, frozenset({"ends"}), frozenset({"text"})])
def test_a_run_answers_with_its_last_line_and_sums_the_usage_of_every_line(needs):
    stream = (Stream().init().prompt()
              .assistant(text("Looking."), call("t1", "Read", {"path": "/w/go.mod"}),
                         usage=(5, 1204, 13377, 58))
              .tool_result("t1")
              .assistant(call("t2", "Read", {"path": "/w/a"}), usage=(2, 0, 100, 3),
                         parent="t9")
              .tool_result("t2", parent="t9")
              .assistant(text("Go "), text("1.24."), usage=(6, 97, 14581, 9))
              .result("Go 1.24."))
    events = read(stream, checks=needs is None, needs=needs)
    start, = only(events, RunStart)
    end, = only(events, RunEnd)
    assert (start.agent, start.model, start.session_id) == ("amp", None, THREAD)
    assert (end.ok, end.answer, end.cost_usd, end.duration_ms, end.totals) == (
        True, "Go 1.24.", None, 900, None)
    # The figures are summed for a verb that wants the runs' ends only.
    assert end.usage == ({"input": 13, "cacheRead": 28058, "cacheWrite": 1301, "output": 70}
                         if needs is None or "ends" in needs else None)
    if needs is None:
        assert notes(events) == []
    if needs is None or "text" in needs:
        # Each line is a message of its own: the pieces of the last one follow each other.
        assert [(piece.text, piece.message) for piece in only(events, Text)] == [
            ("Looking.", 3), ("Go ", 7), ("1.24.", 7)]


def test_a_failed_run_says_its_error_string_else_its_json():
    body = '413 {"type":"error","error":{"message":"Prompt is too long"}}'
    end, = only(read(Stream().init().prompt().result(error=body)), RunEnd)
    assert (end.ok, end.failure, end.answer, end.usage) == (False, body, None, None)
    end, = only(read(Stream().init().prompt().result(error={"code": 413})), RunEnd)
    assert end.failure == '{"code":413}'


@pytest.mark.parametrize("name, kind, args, target", [
    ("Bash", "shell", {"cmd": "make"}, "make"), ("Read", "read", {"path": "/a"}, "/a"),
    ("create_file", "write", {"path": "/a"}, "/a"), ("edit_file", "edit", {"path": "/a"}, "/a"),
    ("delete_file", "delete", {"path": "/a"}, "/a"),
    ("Grep", "grep", {"pattern": "x", "path": "/a"}, "x"),
    ("glob", "glob", {"filePattern": "*.go"}, "*.go"),
    ("finder", "semSearch", {"query": "auth"}, "auth"),
    ("read_web_page", "webFetch", {"url": "https://x"}, "https://x"),
    ("web_search", "webSearch", {"query": "q"}, "q"), ("Task", "task", {}, None),
    ("oracle", "task", {}, None), ("todo_write", "updateTodos", {}, None),
    ("mermaid", "mermaid", {}, None)])
def test_tool_kinds_and_targets(name, kind, args, target):
    stream = Stream().init().prompt().assistant(call("t1", name, args)).tool_result("t1")
    start, = only(read(stream.result()), ToolStart)
    assert (start.kind, start.target, start.model_call_id) == (kind, target, None)


@pytest.mark.parametrize("name, content, error, outcome", [
    ("Bash", '{"output":"x","exitCode":1}', False, "failure"),
    ("Bash", [{"type": "text", "text": '{"output":"x","exitCode":2}'}], True, "failure"),
    ("Bash", {"output": "x", "exitCode": 3}, False, "failure"),
    ("Bash", '{"output":"x","exitCode":0}', False, "success"),
    ("Bash", "not JSON {", True, "error"),
    ("Read", '{"exitCode":1}', False, "success"),
    ("edit_file", "old_str not found", True, "error"),
])
def test_outcomes(name, content, error, outcome):
    stream = (Stream().init().prompt().assistant(call("t1", name, {}))
              .tool_result("t1", content, error))
    end, = only(read(stream.result()), ToolEnd)
    assert end.outcome == outcome


def test_checks_of_the_init_the_prompt_the_fields_and_a_gross_input():
    stream = Stream().init()
    stream.lines[0]["session_id"] = "5f0c"  # an init with no thread id
    stream.assistant(text("Hi."), usage=(300, 100, 200, 1))
    stream.assistant(text("Hi."), usage=(300, 100, 200, 1))
    stream.result(error="boom")
    del stream.lines[-1]["error"]
    events = read(stream, checks=True)
    assert notes(events) == [("init", 1), ("prompt", 1), ("session", 2), ("gross-input", 2),
                             ("fields", 4)]
    assert 'has no "error", with is_error true' in only(events, Note)[-1].message


def test_a_cut_off_run_answers_with_its_last_line_and_leaves_its_call_open():
    stream = Stream().init().prompt().assistant(text("Building."), call("t1", "Bash",
                                                                         {"cmd": "make"}))
    events = read(stream)
    end, = only(events, RunEnd)
    assert (end.cutoff, end.answer) == (True, "Building.")
    assert only(events, ToolEnd) == []


@pytest.mark.parametrize("needs", [{"tools"}, {"tool_ends"}, {"text", "tools", "ends"}])
def test_every_line_is_decoded_where_the_envelope_s_markers_select_every_amp_line(needs):
    """Amp writes no stream_event: where calls matter (the user lines), the envelope's
    markers select each of its lines, and the search for them is spared."""
    assert amp.markers(needs) is None


def test_the_user_lines_are_passed_over_otherwise_and_the_envelope_stays_claude_s():
    for needs in ({"native"}, {"text", "ends"}):
        assert (("type", "user"),) not in amp.markers(needs)
    assert amp.FORMAT in formats.sharing_envelope(formats.get("claude"))


def native_view(events):
    """What json sees of a stream's runs: where each begins, how it ends, its object."""
    return [(end.start.line, end.cutoff, end.ok, end.failure, end.native)
            for end in events if end.__class__ is RunEnd]


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/input.ndjson")),
                         ids=lambda path: path.parent.name)
def test_the_native_object_needs_no_assistant_line(path):
    """It is the result as it stands: json's runs begin, end and hold the same objects
    as when every line is decoded."""
    assert (("type", "assistant"),) not in amp.markers({"native"})
    assert (("type", "assistant"),) in amp.markers({"text", "ends"})
    data = path.read_bytes()
    assert (native_view(model_events(amp, data, needs={"native"}))
            == native_view(model_events(amp, data)))
