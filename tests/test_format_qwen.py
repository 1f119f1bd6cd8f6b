"""The Qwen Code format module: what it makes of each shape of its stream (Claude's
envelope, Qwen Code's own ids, tools, failures, running totals and checks), on small
streams written here in its shapes, on the golden inputs through stats, and on the real
capture beside the clone when it is there."""

from pathlib import Path

import orjson
import pytest
from conftest import model_events

from ndagent.cmd_json import main as json_main
from ndagent.cmd_result import main as result_main
from ndagent.cmd_stats import main as stats_main
from ndagent.cmd_text import main as text_main
from ndagent.cmd_tools import main as tools_main
from ndagent.cmd_validate import main as validate_main
from ndagent.formats import qwen
from ndagent.model import Note, RunEnd, RunStart, Text, ToolEnd, ToolStart

GOLDEN = Path(__file__).resolve().parent / "golden" / "qwen"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "qwen"
SESSION = "3b7e0c1a-9d24-4f6b-8e15-c0a2d7f94b36"


class Stream:
    """Lines in Qwen Code's shapes: the uuid of an assistant line is its message's id."""

    def __init__(self, session=SESSION):
        self.session = session
        self.lines = []
        self.count = 0

    def _id(self):
        self.count += 1
        return f"00000000-0000-4000-8000-{self.count:012d}"

    def init(self, **fields):
        self.lines.append({"type": "system", "subtype": "init", "uuid": self.session,
                           "session_id": self.session, "cwd": "/w", "tools": ["read_file"],
                           "model": "qwen3-coder-plus", "permission_mode": "yolo",
                           "qwen_code_version": "0.16.2", **fields})
        return self

    def assistant(self, *blocks, parent=None, usage=None, message_id=None):
        key = message_id or self._id()
        self.lines.append({"type": "assistant", "uuid": key, "session_id": self.session,
                           "parent_tool_use_id": parent,
                           "message": {"id": key, "type": "message", "role": "assistant",
                                       "model": "qwen3-coder-plus", "content": list(blocks),
                                       "usage": usage or {"input_tokens": 0,
                                                          "output_tokens": 0}}})
        return self

    def text(self, text, **fields):
        return self.assistant({"type": "text", "text": text}, **fields)

    def call(self, call_id, name, args, **fields):
        return self.assistant({"type": "tool_use", "id": call_id, "name": name,
                               "input": args}, **fields)

    def tool_result(self, call_id, content="ok", error=False, parent=None):
        self.lines.append({"type": "user", "uuid": self._id(), "session_id": self.session,
                           "parent_tool_use_id": parent,
                           "message": {"role": "user", "content": [
                               {"type": "tool_result", "tool_use_id": call_id,
                                "is_error": error, "content": content}]}})
        return self

    def result(self, text="Done.", usage=None, error=None, **fields):
        line = {"type": "result", "subtype": "success" if error is None else
                "error_during_execution", "uuid": self._id(), "session_id": self.session,
                "is_error": error is not None, "duration_ms": 1200, "duration_api_ms": 900,
                "num_turns": 1, "usage": usage or {"input_tokens": 0, "output_tokens": 0},
                "permission_denials": []}
        if error is None:
            line["result"] = text
        else:
            line["error"] = {"message": error}
        line.update(fields)
        self.lines.append(line)
        return self

    def bytes(self):
        return b"".join(orjson.dumps(line) + b"\n" for line in self.lines)


def read(stream, checks=False, needs=None):
    return model_events(qwen, stream.bytes(), checks, needs)


def only(events, cls):
    return [event for event in events if event.__class__ is cls]


def notes(events):
    return [(note.check, note.line) for note in only(events, Note)]


def test_a_run_answers_with_its_last_message_and_its_figures_less_the_cache():
    stream = (Stream().init().call("c1", "grep_search", {"pattern": "TODO", "path": "src"})
              .tool_result("c1").text("Two TODOs.")
              .result("Two TODOs.", usage={"input_tokens": 9000, "output_tokens": 50,
                                           "cache_read_input_tokens": 8000},
                      total_cost_usd=0))
    events = read(stream, checks=True)
    start, = only(events, RunStart)
    end, = only(events, RunEnd)
    assert (start.agent, start.model, start.session_id) == ("qwen", "qwen3-coder-plus",
                                                              SESSION)
    assert (end.ok, end.answer, end.duration_ms, end.cost_usd) == (True, "Two TODOs.", 1200,
                                                                   None)
    assert end.usage == {"input": 1000, "cacheRead": 8000, "cacheWrite": 0, "output": 50}
    assert end.totals == (SESSION, None, {"usage": end.usage, "cost": None, "native": None})
    call, = only(events, ToolStart)
    assert (call.kind, call.target, call.model_call_id) == ("grep", "TODO",
                                                            stream.lines[1]["uuid"])
    assert notes(events) == []


@pytest.mark.parametrize("name, kind", [
    ("run_shell_command", "shell"), ("read_file", "read"), ("read_many_files", "read"),
    ("write_file", "write"), ("edit", "edit"), ("replace", "edit"), ("list_directory", "ls"),
    ("glob", "glob"), ("grep_search", "grep"), ("search_file_content", "grep"),
    ("web_fetch", "webFetch"), ("web_search", "webSearch"), ("todo_write", "updateTodos"),
    ("task_create", "updateTodos"), ("agent", "task"), ("task", "task"),
    ("mcp__github__search", "mcp"), ("save_memory", "save_memory")])
def test_tool_kinds(name, kind):
    events = read(Stream().init().call("c1", name, {}).tool_result("c1").result())
    assert only(events, ToolStart)[0].kind == kind


def test_a_call_denied_by_the_approval_policy_is_denied_at_the_end():
    stream = (Stream().init().call("c1", "run_shell_command", {"command": "rm -rf /"})
              .tool_result("c1", "denied", error=True)
              .call("c2", "write_file", {"file_path": "/w/a"})
              .result(permission_denials=[{"tool_name": "run_shell_command",
                                           "tool_use_id": "c1", "tool_input": {}},
                                          {"tool_name": "write_file", "tool_use_id": "c2",
                                           "tool_input": {}}]))
    events = read(stream)
    assert [end.outcome for end in only(events, ToolEnd)] == ["error"]
    assert only(events, RunEnd)[0].outcomes == {"c1": "permissionDenied",
                                                "c2": "permissionDenied"}


def test_an_api_error_reported_as_success_fails_the_run():
    text = "[API Error: 401 Incorrect API key provided.]"
    end, = only(read(Stream().init().text(text).result(text)), RunEnd)
    assert (end.ok, end.failure, end.answer) == (False, text, None)


def test_a_failed_run_says_its_error_message_else_its_subtype():
    end, = only(read(Stream().init().result(error="Reached max session turns")), RunEnd)
    assert (end.ok, end.failure) == (False, "Reached max session turns")
    stream = Stream().init().result(error="x")
    del stream.lines[-1]["error"]
    end, = only(read(stream), RunEnd)
    assert end.failure == "error_during_execution"


def subagent_failing():
    """An agent call whose subagent fails: its result comes while the call is open."""
    stream = Stream().init().call("a1", "agent", {"prompt": "look"})
    stream.lines.append({"type": "result", "subtype": "error_during_execution",
                         "uuid": "r0", "session_id": SESSION, "is_error": True,
                         "duration_ms": 0, "duration_api_ms": 0, "num_turns": 0,
                         "usage": {"input_tokens": 0, "output_tokens": 0},
                         "permission_denials": [], "error": {"message": "no content"}})
    return stream.tool_result("a1", "failed", error=True).text("Could not look.").result(
        "Could not look.")


@pytest.mark.parametrize("needs", [None, frozenset({"ends"}), frozenset({"tools"})])
def test_a_subagent_s_result_in_the_middle_of_a_run_ends_nothing(needs):
    events = read(subagent_failing(), checks=needs is None, needs=needs)
    end, = only(events, RunEnd)
    assert (end.ok, end.answer, end.line) == (True, "Could not look.", 6)
    if needs is None:
        assert notes(events) == [("subagent-result", 3)]
        assert only(events, Note)[0].message == 'a subagent failed: "no content"'


def test_a_result_with_no_time_and_no_subagent_open_ends_the_run():
    stream = Stream().init().call("a1", "agent", {}).tool_result("a1").result(error="boom",
                                                                              duration_ms=0,
                                                                              duration_api_ms=0)
    end, = only(read(stream), RunEnd)
    assert (end.ok, end.failure) == (False, "boom")


def test_an_older_tool_result_names_its_own_call_as_parent():
    stream = Stream().init().call("c1", "read_file", {}).tool_result("c1", parent="c1")
    end, = only(read(stream.result()), ToolEnd)
    assert end.parent is None


def test_partial_messages_are_text_once():
    stream = Stream().init()
    stream.lines += [{"type": "stream_event", "uuid": "e1", "session_id": SESSION,
                      "parent_tool_use_id": None, "event": event} for event in (
        {"type": "message_start", "message": {"id": "m1", "role": "assistant", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text",
                                                                      "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta",
                                                              "text": "Hel"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta",
                                                              "text": "lo."}})]
    stream.text("Hello.", message_id="m1").result("Hello.")
    events = read(stream, checks=True)
    assert [piece.text for piece in only(events, Text)] == ["Hel", "lo."]
    assert only(events, RunEnd)[0].answer == "Hello." and notes(events) == []


def test_checks_of_the_init_the_ids_and_the_blocks():
    stream = Stream().init()
    del stream.lines[0]["qwen_code_version"]
    stream.assistant({"type": "thinking", "thinking": "x"}, {"type": "text", "text": "Hi."})
    stream.lines[-1]["uuid"] = "other"
    stream.result("Hi.")
    assert notes(read(stream, checks=True)) == [("init", 1), ("message-id", 2),
                                                ("block-types", 2)]


def test_the_golden_runs_of_one_process_count_their_own_figures(call):
    """Two prompts of one process: the second result's usage is the running total."""
    path = GOLDEN / "two-runs" / "input.ndjson"
    results = [line for line in map(orjson.loads, path.read_bytes().splitlines())
               if line["type"] == "result"]
    status, out, _ = call(stats_main, "--by", "run", "--format", "ndjson", path)
    runs = [orjson.loads(line) for line in out.splitlines()][:2]
    first, second = (result["usage"] for result in results)
    assert runs[1]["tokens"] == {
        "input": (second["input_tokens"] - second["cache_read_input_tokens"])
        - (first["input_tokens"] - first["cache_read_input_tokens"]),
        "cacheRead": second["cache_read_input_tokens"] - first["cache_read_input_tokens"],
        "cacheWrite": 0, "output": second["output_tokens"] - first["output_tokens"]}
    assert [run["tokens_from"] for run in runs] == ["process_total", "run"]
    assert {run["cost_usd"] for run in runs} == {None}


def captures():
    return sorted(CORPUS.glob("*.ndjson")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not captures(), reason="../shared/corpus/qwen is not beside this clone")
@pytest.mark.parametrize("path", captures(), ids=lambda path: path.name)
def test_every_verb_on_a_real_capture(call, path):
    """What AGENTS-MORE.md part 2 decides per verb, on the real capture."""
    objects = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    result = objects[-1]
    assert call(json_main, path) == (0, orjson.dumps(result) + b"\n", "")
    assert call(result_main, path) == (0, result["result"].encode() + b"\n", "")
    calls = [block for line in objects if line["type"] == "assistant"
             for block in line["message"]["content"] if block["type"] == "tool_use"]
    records = [orjson.loads(line) for line in call(tools_main, path)[1].splitlines()]
    assert [(record["call_id"], record["agent"], record["status"]) for record in records] == [
        (block["id"], "qwen", "success") for block in calls]
    assert call(text_main, path)[1] == b"Read file\n" * len(calls)
    assert call(validate_main, path)[0] == 0
    status, out, _ = call(stats_main, "--by", "run", "--format", "ndjson", path)
    run = orjson.loads(out.splitlines()[0])
    assert (run["agent"], run["outcome"], run["model"], run["cost_usd"]) == (
        "qwen", "ok", objects[0]["model"], None)
