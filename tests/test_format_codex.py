"""The Codex format module (``codex exec --json``), at the level of the model events.

Each input is read as the frame reads it: the decoder's items, Events to
``Reader.event`` (and, with the markers' selection, Skipped items to
``Reader.skipped``), then ``finish``.  The expectations come from
docs/formats.md#codex-cli and the project's decisions in docs/model.md and docs/agents.md.
"""

import io
import json
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import orjson
import pytest
from conftest import examples, model_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent.decoder import Event, encode_line, iter_items
from ndagent.formats import codex
from ndagent.model import FORGOTTEN, Note, RunEnd, RunStart, Text, ToolEnd, ToolStart

GOLDEN = Path(__file__).parent / "golden"
CODEX_GOLDEN = GOLDEN / "codex"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "codex"
NEEDS = [frozenset(chosen) for size in range(4)
         for chosen in combinations(("text", "tools", "ends"), size)]

THREAD = "019b3e4f-7a21-7c90-b4d2-5e8f1a3c6d70"


# Reading.

def read(source, checks=True, needs=None):
    """The model events of an input (a path, or bytes): every line decoded, or with
    ``needs`` only those the markers select."""
    return model_events(codex, source, checks, needs, name="input")


def stream(*lines):
    """An input of these lines: objects (encoded compact) or raw text."""
    return b"".join((line.encode() if isinstance(line, str) else orjson.dumps(line)) + b"\n"
                    for line in lines)


def outline(events):
    """What the verbs see, one tuple per event."""
    out = []
    for event in events:
        if isinstance(event, RunStart):
            out.append(("start", event.line, event.session_id))
        elif isinstance(event, Text):
            out.append(("text", event.line, event.message, event.text))
        elif isinstance(event, ToolStart):
            out.append(("tool+", event.line, event.call_id, event.kind, event.name,
                        event.target))
        elif isinstance(event, ToolEnd):
            out.append(("tool-", event.line, event.call_id, event.kind, event.name,
                        event.target, event.outcome))
        elif isinstance(event, Note):
            out.append(("note", event.line, event.check))
        else:
            assert isinstance(event, RunEnd)
            how = "cutoff" if event.cutoff else "ok" if event.ok else "failed"
            out.append(("end", event.line, how, event.answer, event.failure))
    return out


def no_text_twice(events):
    """Whether no message of a run gives its text twice (Codex never repeats text)."""
    seen = set()
    for event in events:
        if isinstance(event, RunStart):
            seen = set()
        elif isinstance(event, Text):
            if event.message in seen:
                return False
            seen.add(event.message)
    return True


def native_items(end):
    """The items of a run's json object, as printed (they are kept as their JSON)."""
    return orjson.loads(encode_line(end.native))["items"]


def ends(events):
    return [event for event in events if isinstance(event, RunEnd)]


def fingerprint(events):
    """Every field of every event, for comparing two readings."""
    return [(type(event).__name__, repr(event)) for event in events]


def thread(thread_id=THREAD):
    return {"type": "thread.started", "thread_id": thread_id}


TURN = {"type": "turn.started"}


def completed(input_tokens=100, cached=40, output=7, **more):
    return {"type": "turn.completed", "usage": {"input_tokens": input_tokens,
                                                "cached_input_tokens": cached,
                                                "output_tokens": output, **more}}


def failed(message):
    return {"type": "turn.failed", "error": {"message": message}}


def item(event, item_id, kind, **fields):
    return {"type": f"item.{event}", "item": {"id": item_id, "type": kind, **fields}}


def message(item_id, text):
    return item("completed", item_id, "agent_message", text=text)


def reasoning(item_id, text="**Thinking**"):
    return item("completed", item_id, "reasoning", text=text)


def command(event, item_id, line, status, exit_code=None, output=""):
    return item(event, item_id, "command_execution", command=line, aggregated_output=output,
                exit_code=exit_code, status=status)


# The golden inputs (written in the real shapes by another helper).

GOLDEN_CASES = {
    "command-success": [
        ("start", 1, "019bc5e3-bfe0-76e2-a655-9338589b26ee"),
        ("tool+", 4, "item_1", "shell", "command_execution",
         "bash -lc 'du -sh logs/* | sort -rh | head -n 3'"),
        ("tool-", 5, "item_1", "shell", "command_execution",
         "bash -lc 'du -sh logs/* | sort -rh | head -n 3'", "success"),
        ("text", 6, "item_2",
         "The largest is `logs/access.log` (312M), then `logs/error.log` (48M)."),
        ("end", 7, "ok",
         "The largest is `logs/access.log` (312M), then `logs/error.log` (48M).", None),
    ],
    "command-exit-code": [
        ("start", 1, "019b9675-3bcc-7957-b93c-5b5281bcdea8"),
        ("tool+", 4, "item_1", "shell", "command_execution", "bash -lc 'npx tsc --noEmit'"),
        ("tool-", 5, "item_1", "shell", "command_execution", "bash -lc 'npx tsc --noEmit'",
         "failure"),
        ("text", 6, "item_2",
         "`tsc` reports one error: `src/api.ts` line 14 assigns a string to a number."),
        ("end", 7, "ok",
         "`tsc` reports one error: `src/api.ts` line 14 assigns a string to a number.", None),
    ],
    "reasoning-answer": [
        ("start", 1, "019bfd90-9fdb-7ebd-9290-d929bad80c64"),
        ("text", 4, "item_1", "72 °F is 22.2 °C."),
        ("end", 5, "ok", "72 °F is 22.2 °C.", None),
    ],
    "file-change-add": [
        ("start", 1, "019bc3db-527a-7336-be36-32882af114e9"),
        ("tool+", 4, "item_1", "write", "file_change", "/home/dev/widgets/.editorconfig"),
        ("tool-", 4, "item_1", "write", "file_change", "/home/dev/widgets/.editorconfig",
         "success"),
        ("text", 5, "item_2", "Added `.editorconfig` with 4-space indentation for Python files."),
        ("end", 6, "ok", "Added `.editorconfig` with 4-space indentation for Python files.",
         None),
    ],
    "failed-run": [
        ("start", 1, "019baf4a-68bc-78f5-8412-539bec37399d"),
        ("end", 4, "failed", None,
         "stream disconnected before completion: Rate limit reached for gpt-5-codex in "
         "organization org-DdSpnRBcv8agsjnqKhNDfTi7 on tokens per min (TPM): Limit 500000, "
         "Used 498211, Requested 9112. Please try again in 1.118s."),
    ],
    "cut-off": [
        ("start", 1, "019b3fac-e548-7377-aeae-2572a205d77f"),
        ("tool+", 4, "item_1", "shell", "command_execution",
         "bash -lc 'go test ./integration/...'"),
        ("end", 4, "cutoff", "", None),
    ],
    "mcp-search-todo": [
        ("start", 1, "019b7fee-b305-7f29-a072-4169d3d95366"),
        ("tool+", 3, "item_0", "updateTodos", "todo_list", None),
        ("tool+", 4, "item_1", "mcp", "github/get_issue", "github/get_issue"),
        ("tool-", 5, "item_1", "mcp", "github/get_issue", "github/get_issue", "success"),
        ("tool+", 7, "item_2", "webSearch", "web_search",
         "tinyhttp keep-alive timeout leak fixed release notes"),
        ("tool-", 7, "item_2", "webSearch", "web_search",
         "tinyhttp keep-alive timeout leak fixed release notes", "success"),
        ("text", 8, "item_3",
         "Issue #88 (keep-alive leak on timeout) is still open; no release mentions a fix yet."),
        ("tool-", 9, "item_0", "updateTodos", "todo_list", None, "success"),
        ("end", 10, "ok",
         "Issue #88 (keep-alive leak on timeout) is still open; no release mentions a fix yet.",
         None),
    ],
    "interim-messages": [
        ("start", 1, "019bea32-2d92-7d55-853c-8f4885e63200"),
        ("text", 3, "item_0", "I'll check the Node version first."),
        ("tool+", 4, "item_1", "shell", "command_execution", "bash -lc 'node --version'"),
        ("tool-", 5, "item_1", "shell", "command_execution", "bash -lc 'node --version'",
         "success"),
        ("text", 6, "item_2", "Node 20 is installed; now the lockfile."),
        ("tool+", 7, "item_3", "shell", "command_execution",
         "bash -lc 'grep -m1 lockfileVersion package-lock.json'"),
        ("tool-", 8, "item_3", "shell", "command_execution",
         "bash -lc 'grep -m1 lockfileVersion package-lock.json'", "success"),
        ("text", 9, "item_4", "Node 20.11.1 with lockfile version 3: they match."),
        ("end", 10, "ok", "Node 20.11.1 with lockfile version 3: they match.", None),
    ],
    "declined-command": [
        ("start", 1, "019b2155-2dcd-70e0-8f9a-e2a417a84a70"),
        ("note", 4, "item-start"),
        ("tool+", 4, "item_1", "shell", "command_execution", "bash -lc 'rm -rf build/'"),
        ("tool-", 4, "item_1", "shell", "command_execution", "bash -lc 'rm -rf build/'",
         "rejected"),
        ("text", 5, "item_2", "Removing `build/` was declined, so nothing was deleted."),
        ("end", 6, "ok", "Removing `build/` was declined, so nothing was deleted.", None),
    ],
    "old-format": [("note", 3, "old-format")],
}

# (input, cacheRead, cacheWrite, output) of each ok golden run.
GOLDEN_USAGE = {
    "command-success": (1423, 5888, 0, 164),
    "command-exit-code": (2104, 6016, 0, 140),
    "reasoning-answer": (3104, 0, 0, 21),
    "file-change-add": (2072, 4480, 0, 73),
    "mcp-search-todo": (5246, 9984, 0, 402),
    "interim-messages": (2830, 7040, 0, 233),
    "declined-command": (2458, 3072, 0, 58),
}


def golden_input(case):
    return CODEX_GOLDEN / case / "input.ndjson"


def test_every_codex_golden_case_has_its_expectation():
    assert sorted(path.name for path in CODEX_GOLDEN.iterdir() if path.is_dir()) == sorted(
        GOLDEN_CASES)


@pytest.mark.parametrize("case", sorted(GOLDEN_CASES))
def test_golden_inputs_give_their_runs_texts_tools_and_notes(case):
    events = read(golden_input(case))
    assert outline(events) == GOLDEN_CASES[case]
    assert no_text_twice(events)


@pytest.mark.parametrize("case", sorted(GOLDEN_CASES))
def test_without_checks_there_is_no_note(case):
    events = read(golden_input(case), checks=False)
    assert outline(events) == [entry for entry in GOLDEN_CASES[case] if entry[0] != "note"]


@pytest.mark.parametrize("case", sorted(GOLDEN_USAGE))
def test_an_ok_golden_run_has_the_sdk_turn_and_its_usage(case):
    path = golden_input(case)
    objects = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    (end,) = ends(read(path))
    assert end.ok and not end.cutoff and end.failure is None
    assert list(end.native) == ["items", "finalResponse", "usage"]
    assert native_items(end) == [o["item"] for o in objects if o["type"] == "item.completed"]
    assert end.native["finalResponse"] == end.answer
    assert end.native["usage"] == objects[-1]["usage"]
    assert end.usage == dict(zip(("input", "cacheRead", "cacheWrite", "output"),
                                 GOLDEN_USAGE[case]))
    assert (end.cost_usd, end.duration_ms, end.model) == (None, None, None)
    assert end.start.agent == "codex" and end.start.model is None and end.start.cwd is None


@pytest.mark.parametrize("case", ["failed-run", "cut-off"])
def test_failed_and_cut_off_runs_have_no_native_object_nor_usage(case):
    (end,) = ends(read(golden_input(case)))
    assert (end.native, end.usage, end.cost_usd, end.duration_ms) == (None, None, None, None)


def test_the_native_object_encodes_in_the_sdk_key_order():
    (end,) = ends(read(golden_input("reasoning-answer")))
    assert encode_line(end.native) == (
        b'{"items":[{"id":"item_0","type":"reasoning","text":"**Converting the units**"},'
        b'{"id":"item_1","type":"agent_message","text":"72 \xc2\xb0F is 22.2 \xc2\xb0C."}],'
        b'"finalResponse":"72 \xc2\xb0F is 22.2 \xc2\xb0C.",'
        b'"usage":{"input_tokens":3104,"cached_input_tokens":0,"output_tokens":21}}\n')


# Detection.

def golden_objects():
    for path in sorted(GOLDEN.glob("*/*/input.ndjson")):
        agent, case = path.parent.parent.name, path.parent.name
        for event in iter_items([path]):
            if isinstance(event, Event):
                yield agent, case, event


def test_only_codex_lines_of_the_golden_inputs_decide_codex():
    seen = set()
    for agent, case, event in golden_objects():
        expected = agent == "codex" and case != "old-format"
        assert codex.decides(event.data) is expected, (agent, case, event.line)
        seen.add(agent)
    assert seen >= {"cursor", "claude", "codex", "gemini"}


def test_only_the_old_shape_is_old_format():
    for agent, case, event in golden_objects():
        expected = agent == "codex" and case == "old-format" and event.line >= 3
        assert codex.old_format(event.data) is expected, (agent, case, event.line)


@pytest.mark.parametrize(("data", "decisive"), [
    ({"type": "thread.started", "thread_id": "t"}, True),
    ({"type": "turn.failed", "error": {"message": "x"}}, True),
    ({"type": "item.plan.delta", "item_id": "item_1", "delta": "x"}, True),
    ({"type": "request_user_input", "id": "t", "call_id": "c", "questions": []}, True),
    ({"type": "error", "message": "reconnecting"}, True),
    ({"message": "reconnecting", "type": "error"}, True),
    ({"type": "error", "message": "x", "severity": "warning"}, False),  # Gemini's
    ({"type": "error", "message": "x", "timestamp": "2026-01-01T00:00:00Z"}, False),
    ({"type": "error", "message": {"text": "x"}}, False),
    ({"type": "item.completed", "item": {"id": "0", "item_type": "assistant_message"}}, False),
    ({"type": "threads"}, False),
    ({"type": ["thread.started"]}, False),
    ({"id": "0", "msg": {"type": "task_started"}}, False),
])
def test_the_decisive_test(data, decisive):
    assert codex.decides(data) is decisive


@pytest.mark.parametrize(("data", "old"), [
    ({"id": "0", "msg": {"type": "task_started"}}, True),
    ({"msg": {"type": "agent_message", "message": "hi"}, "id": "3"}, True),
    ({"type": "item.completed", "item": {"id": "itm_0", "item_type": "assistant_message",
                                         "text": "hi"}}, True),
    ({"id": "0", "msg": {"text": "no type"}}, False),
    ({"id": "0", "msg": "task_started"}, False),
    ({"msg": {"type": "task_started"}}, False),
    ({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
                                         "item_type": "x"}}, False),
    ({"type": "thread.started", "thread_id": "t"}, False),
])
def test_the_old_format_test(data, old):
    assert codex.old_format(data) is old


def test_the_old_item_shape_is_reported_once_and_begins_no_run():
    events = read(stream(
        {"type": "item.completed", "item": {"id": "itm_0", "item_type": "reasoning",
                                            "text": "x"}},
        {"type": "item.completed", "item": {"id": "itm_1", "item_type": "assistant_message",
                                            "text": "hi"}}))
    assert outline(events) == [("note", 1, "old-format")]
    assert CHECKS_SEVERITY["old-format"] == "error"


# Shapes of docs/formats.md#codex-cli, written inline.

SUCCESS = stream(
    thread(), TURN, reasoning("item_0", "**Checking the test command**"),
    command("started", "item_1", "bash -lc 'pytest -q tests/test_cart.py'", "in_progress"),
    command("completed", "item_1", "bash -lc 'pytest -q tests/test_cart.py'", "completed", 0,
            "....\n4 passed in 0.21s\n"),
    message("item_2", "All 4 tests in `tests/test_cart.py` pass."),
    completed(8214, 6912, 187))


def test_success_with_one_tool_call():
    events = read(SUCCESS)
    pytest_line = "bash -lc 'pytest -q tests/test_cart.py'"
    answer = "All 4 tests in `tests/test_cart.py` pass."
    assert outline(events) == [
        ("start", 1, THREAD),
        ("tool+", 4, "item_1", "shell", "command_execution", pytest_line),
        ("tool-", 5, "item_1", "shell", "command_execution", pytest_line, "success"),
        ("text", 6, "item_2", answer),
        ("end", 7, "ok", answer, None),
    ]
    start, end = events[1], events[2]
    assert start.args == end.args == {"command": pytest_line}
    assert end.result == {"exit_code": 0, "aggregated_output": "....\n4 passed in 0.21s\n"}
    for call in (start, end):
        assert call.session_id == THREAD
        assert (call.model_call_id, call.parent, call.time_ms) == (None, None, None)
        assert call.source == "input"
    assert events[-1].usage == {"input": 1302, "cacheRead": 6912, "cacheWrite": 0,
                                "output": 187}
    assert events[-1].start is events[0]
    found = codex.FORMAT
    assert found.live_answer is False and found.separator == "\n\n" and found.name == "codex"


def test_parallel_calls_end_in_completion_order():
    events = read(stream(
        thread(), TURN,
        command("started", "item_1", "sleep 2; echo a", "in_progress"),
        command("started", "item_2", "echo b", "in_progress"),
        command("completed", "item_2", "echo b", "completed", 0, "b\n"),
        command("completed", "item_1", "sleep 2; echo a", "completed", 0, "a\n"),
        message("item_3", "a, then b."), completed()))
    assert [entry[:3] for entry in outline(events)] == [
        ("start", 1, THREAD), ("tool+", 3, "item_1"), ("tool+", 4, "item_2"),
        ("tool-", 5, "item_2"), ("tool-", 6, "item_1"), ("text", 7, "item_3"),
        ("end", 8, "ok")]


API_ERROR = json.dumps({"type": "error", "error": {
    "type": "invalid_request_error", "code": "model_not_found",
    "message": "The model `gpt-5.9-mini` does not exist or you do not have access to it.",
    "param": "model"}, "status": 404}, indent=2)


def test_a_failed_run_is_one_failure_its_error_event_no_warning():
    """The error event that turn.failed follows is that same failure
    (docs/formats.md#codex-runs); only one that no turn.failed follows is a warning
    (docs/agents.md#validate)."""
    events = read(stream(thread(), TURN, {"type": "error", "message": API_ERROR},
                         failed(API_ERROR)))
    assert outline(events) == [("start", 1, THREAD), ("end", 4, "failed", None, API_ERROR)]
    assert len(ends(events)) == 1


def test_an_error_event_that_no_turn_failed_follows_is_a_warning():
    events = read(stream(thread(), TURN, {"type": "error", "message": API_ERROR},
                         message("item_0", "recovered"), completed()))
    assert outline(events)[1] == ("note", 3, "error-event")
    note = events[1]
    assert CHECKS_SEVERITY[note.check] == "warning"
    assert "\n" not in note.message and "\\n" in note.message


def test_a_turn_failed_without_a_message_takes_the_error_event_s_then_turn_failed():
    events = read(stream(thread(), TURN, {"type": "error", "message": "quota exceeded"},
                         {"type": "turn.failed", "error": {}},
                         TURN, {"type": "turn.failed"}))
    assert [(end.ok, end.failure) for end in ends(events)] == [
        (False, "quota exceeded"), (False, "turn failed")]


def test_a_run_cut_off_during_a_command():
    events = read(stream(
        thread(), TURN, reasoning("item_0", "**Running the full build**"),
        command("started", "item_1", "bash -lc 'make -j8'", "in_progress")))
    assert outline(events) == [
        ("start", 1, THREAD),
        ("tool+", 4, "item_1", "shell", "command_execution", "bash -lc 'make -j8'"),
        ("end", 4, "cutoff", "", None)]
    end = events[-1]
    assert end.native is None and end.usage is None and not end.ok


def test_a_cut_off_run_s_answer_is_its_last_message_so_far():
    events = read(stream(thread(), TURN, message("item_0", "First I'll look."),
                         message("item_1", "Now the build."),
                         command("started", "item_2", "make", "in_progress")))
    assert outline(events)[-1] == ("end", 5, "cutoff", "Now the build.", None)


def test_a_stream_that_stops_after_turn_started_is_cut_off_there():
    events = read(stream(thread(), TURN))
    assert outline(events) == [("start", 1, THREAD), ("end", 2, "cutoff", "", None)]


def test_two_whole_runs():
    other = "019b3e52-0c6d-7f14-8a39-d2b7e5f1c084"
    events = read(stream(thread(), TURN, message("item_0", "one"), completed(),
                         thread(other), TURN, message("item_0", "two"), completed()))
    assert outline(events) == [
        ("start", 1, THREAD), ("text", 3, "item_0", "one"), ("end", 4, "ok", "one", None),
        ("start", 5, other), ("text", 7, "item_0", "two"), ("end", 8, "ok", "two", None)]
    assert [end.start.line for end in ends(events)] == [1, 5]


def test_two_failed_runs_without_thread_started_between_them():
    events = read(stream(thread(), TURN, {"type": "error", "message": "first"},
                         failed("first"), TURN, {"type": "error", "message": "second"},
                         failed("second")))
    assert outline(events) == [
        ("start", 1, THREAD), ("end", 4, "failed", None, "first"),
        ("start", 5, THREAD), ("end", 7, "failed", None, "second")]


def test_a_turn_started_again_before_its_end_cuts_the_run_off():
    events = read(stream(thread(), TURN, message("item_0", "interrupted"),
                         TURN, message("item_0", "done"), completed()))
    assert outline(events) == [
        ("start", 1, THREAD), ("text", 3, "item_0", "interrupted"),
        ("end", 3, "cutoff", "interrupted", None),
        ("start", 4, THREAD), ("text", 5, "item_0", "done"), ("end", 6, "ok", "done", None)]


def test_a_thread_started_cuts_an_open_run_off():
    other = "019b3e58-93a4-7b02-a1c7-4f6e2d8b9a15"
    events = read(stream(thread(), TURN, command("started", "item_0", "ls", "in_progress"),
                         thread(other), TURN, message("item_0", "ok"), completed()))
    assert [entry[:3] for entry in outline(events)] == [
        ("start", 1, THREAD), ("tool+", 3, "item_0"), ("end", 3, "cutoff"),
        ("start", 4, other), ("text", 6, "item_0"), ("end", 7, "ok")]


def test_events_after_a_run_s_end_begin_the_next_run():
    events = read(stream(thread(), TURN, completed(), message("item_0", "late"), completed(),
                         {"type": "error", "message": "after the end"}))
    assert [entry[:3] for entry in outline(events)] == [
        ("start", 1, THREAD), ("note", 3, "no-answer"), ("end", 3, "ok"),
        ("start", 4, THREAD), ("text", 4, "item_0"), ("end", 5, "ok"),
        ("start", 6, THREAD), ("note", 6, "error-event"), ("end", 6, "cutoff")]


NOISE_LINES = [
    "Reading prompt from stdin...",
    {"note": "an object of no agent"},
    {"type": "request_user_input", "id": "turn_1", "call_id": "call_1", "questions": []},
    {"type": "item.plan.delta", "item_id": "item_9", "delta": "1. look"},
    {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5,
     "result": "", "session_id": "s"},
    "",
]


def test_noise_makes_no_event_and_begins_no_run():
    events = read(stream(*NOISE_LINES, thread(), *NOISE_LINES, TURN,
                         command("started", "item_1", "npm test", "in_progress"),
                         *NOISE_LINES,
                         command("updated", "item_1", "npm test", "in_progress",
                                 output="> test\n"),
                         command("completed", "item_1", "npm test", "completed", 0, "ok\n"),
                         message("item_2", "Tests pass."), completed(), *NOISE_LINES))
    assert [entry[:3] for entry in outline(events)] == [
        ("start", 7, THREAD), ("tool+", 15, "item_1"), ("tool-", 23, "item_1"),
        ("text", 24, "item_2"), ("end", 25, "ok")]


# Items and tools.

def calls(events):
    """(start or end, line, call_id, kind, name, target, outcome) of the tool events."""
    return [entry for entry in outline(events) if entry[0] in ("tool+", "tool-")]


def test_a_web_search_item_with_its_id_twice_pairs_by_the_last():
    started = ('{"type":"item.started","item":{"id":"item_2","type":"web_search",'
               '"id":"ws_0c41e9","query":"","action":{"type":"other"}}}')
    done = ('{"type":"item.completed","item":{"id":"item_2","type":"web_search",'
            '"id":"ws_0c41e9","query":"gleam json decode",'
            '"action":{"type":"search","query":"gleam json decode"}}}')
    events = read(stream(thread(), TURN, started, done, message("item_3", "Found it."),
                         completed()))
    assert calls(events) == [
        ("tool+", 3, "ws_0c41e9", "webSearch", "web_search", None),
        ("tool-", 4, "ws_0c41e9", "webSearch", "web_search", "gleam json decode", "success")]
    assert native_items(ends(events)[0])[0]["id"] == "ws_0c41e9"
    assert not [event for event in events if isinstance(event, Note)]


def test_a_web_search_that_opens_a_page_targets_its_url():
    events = read(stream(thread(), TURN, item("completed", "item_1", "web_search", query="",
                                              action={"type": "open_page",
                                                      "url": "https://example.org/a"}),
                         completed()))
    assert calls(events)[1][5] == "https://example.org/a"


@pytest.mark.parametrize(("changes", "kind"), [
    ([{"path": "/p/a.py", "kind": "add"}, {"path": "/p/b.py", "kind": "add"}], "write"),
    ([{"path": "/p/a.py", "kind": "delete"}], "delete"),
    ([{"path": "/p/a.py", "kind": "update"}], "edit"),
    ([{"path": "/p/a.py", "kind": "add"}, {"path": "/p/b.py", "kind": "update"}], "edit"),
    ([{"path": "/p/a.py", "kind": "add"}, {"path": "/p/b.py", "kind": "delete"}], "edit"),
])
def test_a_file_change_s_kind_comes_from_its_changes(changes, kind):
    events = read(stream(thread(), TURN, item("completed", "item_1", "file_change",
                                              changes=changes, status="completed"),
                         completed()))
    assert calls(events) == [
        ("tool+", 3, "item_1", kind, "file_change", "/p/a.py"),
        ("tool-", 3, "item_1", kind, "file_change", "/p/a.py", "success")]
    assert events[2].result == {"status": "completed", "changes": changes}


def test_a_file_change_with_a_start_is_started_once():
    changes = [{"path": "/p/a.py", "kind": "update"}]
    events = read(stream(thread(), TURN,
                         item("started", "item_1", "file_change", changes=changes,
                              status="in_progress"),
                         item("updated", "item_1", "file_change", changes=changes,
                              status="in_progress"),
                         item("completed", "item_1", "file_change", changes=changes,
                              status="failed"),
                         completed()))
    assert calls(events) == [
        ("tool+", 3, "item_1", "edit", "file_change", "/p/a.py"),
        ("tool-", 5, "item_1", "edit", "file_change", "/p/a.py", "error")]


def test_an_mcp_call_is_named_server_slash_tool_and_fails_as_error():
    fields = {"server": "linear", "tool": "list_issues", "arguments": {"team": "ENG"}}
    events = read(stream(thread(), TURN,
                         item("started", "item_1", "mcp_tool_call", **fields, result=None,
                              error=None, status="in_progress"),
                         item("completed", "item_1", "mcp_tool_call", **fields, result=None,
                              error={"message": "unauthorized"}, status="failed"),
                         completed()))
    assert calls(events) == [
        ("tool+", 3, "item_1", "mcp", "linear/list_issues", "linear/list_issues"),
        ("tool-", 4, "item_1", "mcp", "linear/list_issues", "linear/list_issues", "error")]
    assert events[1].args == fields
    assert events[2].result == {"result": None, "error": {"message": "unauthorized"}}


def test_a_collab_call_is_a_task_named_by_its_tool():
    fields = {"tool": "spawn_agent", "sender_thread_id": "t0", "receiver_thread_ids": ["t1"],
              "prompt": "Check the tests"}
    events = read(stream(thread(), TURN,
                         item("started", "item_1", "collab_tool_call", **fields,
                              agents_states={}, status="in_progress"),
                         item("completed", "item_1", "collab_tool_call", **fields,
                              agents_states={"t1": {"status": "running", "message": None}},
                              status="completed"),
                         message("item_2", "Spawned."), completed()))
    assert calls(events) == [
        ("tool+", 3, "item_1", "task", "spawn_agent", None),
        ("tool-", 4, "item_1", "task", "spawn_agent", None, "success")]
    assert events[1].args == fields


def test_a_to_do_list_runs_from_its_start_to_its_completion():
    todo = [{"text": "Read", "completed": False}]
    done = [{"text": "Read", "completed": True}]
    events = read(stream(thread(), TURN, item("started", "item_0", "todo_list", items=todo),
                         item("updated", "item_0", "todo_list", items=done),
                         message("item_1", "Done."),
                         item("completed", "item_0", "todo_list", items=done), completed()))
    assert calls(events) == [("tool+", 3, "item_0", "updateTodos", "todo_list", None),
                             ("tool-", 6, "item_0", "updateTodos", "todo_list", None,
                              "success")]
    assert events[1].args == {"items": todo} and events[3].result == {"items": done}


@pytest.mark.parametrize(("status", "exit_code", "outcome"), [
    ("completed", 0, "success"),
    ("completed", 1, "failure"),
    ("failed", 2, "failure"),
    ("failed", None, "failure"),
    ("completed", None, "unknown"),
    ("completed", "1", "unknown"),
    ("declined", None, "rejected"),
    ("in_progress", None, "unknown"),
    ("interrupted", None, "unknown"),
])
def test_a_command_s_outcome(status, exit_code, outcome):
    events = read(stream(thread(), TURN, command("started", "item_1", "make", "in_progress"),
                         command("completed", "item_1", "make", status, exit_code),
                         completed()))
    assert calls(events)[-1][-1] == outcome


def test_a_command_s_exit_code_beyond_a_double_is_a_failure():
    events = read(stream(thread(), TURN, command("started", "item_1", "make", "in_progress"),
                         '{"type":"item.completed","item":{"id":"item_1",'
                         '"type":"command_execution","command":"make","aggregated_output":"",'
                         '"exit_code":1e400,"status":"completed"}}',
                         completed()))
    assert calls(events)[-1][-1] == "failure"


def test_a_command_completed_with_exit_code_null_is_unknown_with_a_warning():
    events = read(stream(thread(), TURN, command("started", "item_1", "sleep 100", "in_progress"),
                         message("item_2", "Stopped waiting."),
                         command("completed", "item_1", "sleep 100", "completed"), completed()))
    assert [entry for entry in outline(events) if entry[0] in ("tool-", "note")] == [
        ("tool-", 5, "item_1", "shell", "command_execution", "sleep 100", "unknown"),
        ("note", 5, "exit-code-null")]


@pytest.mark.parametrize(("status", "outcome"), [
    (None, "success"), ("completed", "success"), ("failed", "error"),
    ("declined", "rejected"), ("running", "unknown")])
def test_other_tools_outcomes(status, outcome):
    fields = {} if status is None else {"status": status}
    events = read(stream(thread(), TURN, item("completed", "item_1", "web_search", query="q",
                                              **fields), completed()))
    assert calls(events)[-1][-1] == outcome


def test_an_item_type_of_a_later_version_is_a_tool_of_its_own_kind():
    events = read(stream(thread(), TURN, item("started", "item_1", "image_view", path="/p/a.png",
                                              status="in_progress"),
                         item("completed", "item_1", "image_view", path="/p/a.png",
                              status="completed"), completed()))
    assert calls(events) == [("tool+", 3, "item_1", "image_view", "image_view", None),
                             ("tool-", 4, "item_1", "image_view", "image_view", None,
                              "success")]
    assert events[1].args == {"path": "/p/a.png"}
    assert events[2].result == {"path": "/p/a.png", "status": "completed"}


def test_reasoning_plan_and_error_items_are_not_tools_nor_text():
    events = read(stream(thread(), TURN, reasoning("item_0"),
                         item("completed", "item_1", "plan", text="1. Look"),
                         item("completed", "item_2", "error", message="deprecated flag"),
                         message("item_3", "Answer."), completed()))
    assert outline(events) == [("start", 1, THREAD), ("note", 5, "error-item"),
                               ("text", 6, "item_3", "Answer."),
                               ("end", 7, "ok", "Answer.", None)]


def test_a_plan_is_the_answer_only_while_no_message_gave_one():
    alone = read(stream(thread(), TURN, item("completed", "item_0", "plan", text="1. Look"),
                        completed()))
    assert ends(alone)[0].answer == "1. Look"
    assert ends(alone)[0].native["finalResponse"] == "1. Look"
    after = read(stream(thread(), TURN, message("item_0", "Answer."),
                        item("completed", "item_1", "plan", text="1. Look"), completed()))
    assert ends(after)[0].answer == "Answer."


def test_the_answer_is_the_last_message_even_when_empty():
    events = read(stream(thread(), TURN, message("item_0", "Interim."), message("item_1", ""),
                         completed()))
    assert [entry[0] for entry in outline(events)] == ["start", "text", "end"]
    assert ends(events)[0].answer == ""


def test_an_ok_run_with_no_message_answers_nothing_with_a_warning():
    events = read(stream(thread(), TURN, reasoning("item_0"), completed()))
    assert outline(events) == [("start", 1, THREAD), ("note", 4, "no-answer"),
                               ("end", 4, "ok", "", None)]
    assert ends(events)[0].native["finalResponse"] == ""


def test_a_structured_answer_is_text_as_it_is():
    answer = '{"files":3,"ok":true}'
    events = read(stream(thread(), TURN, message("item_0", answer), completed()))
    assert ends(events)[0].answer == answer


def test_usage_counts_cache_writes_once():
    """input_tokens holds the cache reads and writes: the input is what is left, and the
    four figures add up to input_tokens + output_tokens (41 320 = 27 386 + 13 925 + 9 in
    a real stream of 0.159)."""
    (end,) = ends(read(stream(thread(), TURN, message("item_0", "x"),
                              completed(41320, 27386, 50, cache_write_input_tokens=13925,
                                        reasoning_output_tokens=30))))
    assert end.usage == {"input": 9, "cacheRead": 27386, "cacheWrite": 13925, "output": 50}
    assert sum(end.usage.values()) == 41320 + 50


@pytest.mark.parametrize(("usage", "expected"), [
    ({"input_tokens": 10, "output_tokens": 2}, {"input": 10, "cacheRead": 0,
                                                "cacheWrite": 0, "output": 2}),
    ({"input_tokens": "10", "cached_input_tokens": 4, "output_tokens": None},
     {"input": None, "cacheRead": 4, "cacheWrite": 0, "output": None}),
    ({"input_tokens": 10, "cached_input_tokens": True, "output_tokens": 2},
     {"input": None, "cacheRead": None, "cacheWrite": 0, "output": 2}),
    ("lots", None),
])
def test_usage_that_is_not_all_numbers(usage, expected):
    (end,) = ends(read(stream(thread(), TURN, {"type": "turn.completed", "usage": usage})))
    assert end.usage == expected
    assert end.native["usage"] == usage


def test_a_turn_completed_without_usage_has_null_usage():
    (end,) = ends(read(stream(thread(), TURN, {"type": "turn.completed"})))
    assert end.usage is None and end.native["usage"] is None


# validate's checks (docs/agents.md#validate).

CHECKS_SEVERITY = {name: severity for name, (severity, _) in codex.CHECKS.items()}


def test_the_checks_table():
    for name, (severity, meaning) in codex.CHECKS.items():
        assert severity in ("error", "warning"), name
        assert meaning and "\n" not in meaning, name


def test_a_turn_without_thread_started_is_warned_once():
    events = read(stream(TURN, message("item_0", "a"), completed(),
                         TURN, message("item_0", "b"), completed()))
    assert [entry for entry in outline(events) if entry[0] in ("start", "note")] == [
        ("start", 1, None), ("note", 1, "thread-start"), ("start", 4, None)]


def test_an_item_changing_type_is_an_error():
    events = read(stream(thread(), TURN, command("started", "item_1", "ls", "in_progress"),
                         item("updated", "item_1", "todo_list", items=[]),
                         item("completed", "item_1", "file_change", changes=[],
                              status="completed"),
                         completed()))
    notes = [event for event in events if isinstance(event, Note)]
    assert [(note.line, note.check) for note in notes] == [(4, "item-type"), (5, "item-type"),
                                                          (6, "no-answer")]
    assert notes[0].message == ('item "item_1" started as command_execution but updated as '
                                "todo_list")
    assert CHECKS_SEVERITY["item-type"] == "error"
    # The call that started ends there, as what it completed as.
    assert calls(events)[-1] == ("tool-", 5, "item_1", "edit", "file_change", None, "success")


@pytest.mark.parametrize("kind", ["command_execution", "mcp_tool_call", "collab_tool_call",
                                  "todo_list"])
def test_a_missing_start_is_a_warning_where_the_cli_writes_one(kind):
    events = read(stream(thread(), TURN, item("completed", "item_1", kind, status="completed"),
                         message("item_2", "x"), completed()))
    assert ("note", 3, "item-start") in outline(events)
    assert CHECKS_SEVERITY["item-start"] == "warning"


@pytest.mark.parametrize("kind", ["file_change", "web_search", "agent_message", "reasoning",
                                  "plan"])
def test_a_missing_start_is_normal_for_completed_only_items(kind):
    events = read(stream(thread(), TURN, item("completed", "item_1", kind, text="t"),
                         message("item_2", "x"), completed()))
    assert not [event for event in events if isinstance(event, Note)]


def test_notes_quote_stream_text_bounded_and_escaped():
    hostile = "\x1b]0;owned\x07\u202e" + "x" * 5000
    events = read(stream(thread(), TURN, {"type": "error", "message": hostile},
                         item("completed", "item_0", "error", message=hostile),
                         command("started", hostile, "ls", "in_progress"),
                         item("completed", hostile, "todo_list", items=[]),
                         failed(hostile)))
    notes = [event for event in events if isinstance(event, Note)]
    assert [note.check for note in notes] == ["error-event", "error-item", "item-type"]
    for note in notes:
        assert "\x1b" not in note.message and "\u202e" not in note.message
        assert "\\x1b" in note.message and len(note.message) < 300


def test_every_note_is_in_the_checks_table():
    inputs = [golden_input(case) for case in GOLDEN_CASES]
    for source in inputs:
        for event in read(source):
            if isinstance(event, Note):
                assert event.check in codex.CHECKS


# Bounded memory.

def test_items_started_and_never_completed_are_remembered_in_bounded_bytes(monkeypatch):
    """Issue 25 (M5): items started and never completed, with ids and types of 40 KB:
    what is kept of them stays within READER_CALL_BYTES (not a count of them), the
    oldest forgotten with one note."""
    monkeypatch.setattr(codex, "READER_CALL_BYTES", 1 << 20)
    long = "x" * 40_000
    lines = [thread(), TURN] + [item("started", f"item_{n}{long}", f"mcp{long}",
                                     status="in_progress") for n in range(100)]
    reader = codex.Reader("input", True)
    events = [model for event in iter_items([io.BytesIO(stream(*lines))])
              for model in reader.event(event)]
    forgotten = [event for event in events if isinstance(event, Note)
                 and event.check == FORGOTTEN]
    assert len(forgotten) == 1 and 0 < len(reader.run.open) < 30
    # The oldest are forgotten: their completion starts them again; the newest pair.
    first = reader.event(Event("input", 10 ** 6, item("completed", f"item_0{long}",
                                                      f"mcp{long}", status="completed")))
    last = reader.event(Event("input", 10 ** 6 + 1, item("completed", f"item_99{long}",
                                                         f"mcp{long}", status="completed")))
    assert [type(event).__name__ for event in first] == ["ToolStart", "ToolEnd"]
    assert [type(event).__name__ for event in last] == ["ToolEnd"]


def test_the_native_object_s_items_are_kept_in_bounded_bytes(monkeypatch):
    """Issue 25 (M2): json keeps the newest items that fit in NATIVE_BYTES, and says
    once that it left the oldest out."""
    monkeypatch.setattr(codex, "NATIVE_BYTES", 1 << 20)
    lines = [thread(), TURN] + [item("completed", f"item_{n}", "reasoning", text="x" * 10_000)
                                for n in range(300)] + [completed()]
    events = read(stream(*lines), checks=False, needs=frozenset({"native"}))
    forgotten = [event for event in events if isinstance(event, Note)]
    assert [note.check for note in forgotten] == [FORGOTTEN]
    assert "json object" in forgotten[0].message
    items = native_items(ends(events)[0])
    # The newest items, as many as their JSON (and a few hundred bytes each beside it)
    # fits in the bound, and no more.
    held = sum(len(encode_line(item)) for item in items)
    assert held <= 1 << 20 < held + 400 * len(items) + len(encode_line(items[0]))
    assert [item["id"] for item in items] == [f"item_{n}" for n in range(300 - len(items), 300)]


def peak_memory(needs, count=5000):
    """Peak bytes traced while a reader reads a run of ``count`` commands, each with 1 KB
    of output made afresh (the decoder's objects are dropped once read)."""
    import tracemalloc

    reader = codex.Reader("input", False, needs)
    tracemalloc.start()
    try:
        reader.event(Event("input", 1, thread()))
        reader.event(Event("input", 2, TURN))
        for n in range(count):
            reader.event(Event("input", 3, command("started", f"item_{n}", "ls", "in_progress")))
            reader.event(Event("input", 4, command("completed", f"item_{n}", "ls", "completed",
                                                    0, f"{n:1000}")))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_items_are_kept_for_the_native_object_only_when_it_is_needed():
    """Issue 25 (M2): only json prints the native object; result, stats and validate
    (ends, tools, checks) keep no item."""
    assert peak_memory(None) > 5_000_000
    assert peak_memory(frozenset({"native"})) > 5_000_000
    for needs in ({"ends"}, {"text", "ends"}, {"tools", "ends"}, {"text", "tools"}):
        assert peak_memory(frozenset(needs)) < 1_000_000


def test_without_ends_needed_runs_have_no_native_object_but_the_rest():
    whole = read(SUCCESS)
    reader = codex.Reader("input", True, frozenset({"text", "tools"}))
    events = [model for event in iter_items([io.BytesIO(SUCCESS)])
              for model in reader.event(event)] + reader.finish()
    assert outline(events) == outline(whole)
    assert ends(events)[0].native is None and ends(events)[0].usage == ends(whole)[0].usage


def test_a_run_s_state_is_dropped_at_its_end():
    reader = codex.Reader("input", False)
    for event in iter_items([io.BytesIO(SUCCESS)]):
        reader.event(event)
    assert reader.run is None and reader.finish() == []


def test_the_module_imports_only_the_model_at_first():
    code = ("import sys, ndagent.formats.codex; "
            "print(sorted(m for m in sys.modules if m.startswith('ndagent')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert eval(done.stdout) == ["ndagent", "ndagent.decoder", "ndagent.formats",
                                 "ndagent.formats.base",
                                 "ndagent.formats.codex", "ndagent.jsonvalues",
                                 "ndagent.model", "ndagent.selection", "ndagent.sources",
                                 "ndagent.terminal"]


# The markers: the lines they pass over change no event.

EXAMPLES = settings(max_examples=examples(25), deadline=None,
                    suppress_health_check=list(HealthCheck), database=None)


def all_inputs():
    paths = sorted(CODEX_GOLDEN.glob("*/input.ndjson"))
    if CORPUS.is_dir():
        paths += sorted(CORPUS.glob("*.ndjson"))
    return paths


def test_every_line_is_decoded_for_every_need():
    """The run's events are all the CLI writes: no markers, every line decoded."""
    for needs in NEEDS:
        assert codex.markers(needs) is None


@pytest.mark.parametrize("path", all_inputs(), ids=lambda path: path.parent.name
                         if path.name == "input.ndjson" else path.name)
def test_the_markers_lose_no_event_of_a_golden_input(path):
    whole = read(path, checks=False)
    for needs in NEEDS:
        assert fingerprint(read(path, checks=False, needs=needs)) == as_needed(whole, needs)


def as_needed(events, needs):
    """The fingerprint of ``events`` as a Reader told ``needs`` makes them: the same, but
    for the native object of RunEnd, kept only for the needs that ask for it, and the
    tool calls' events, made only for the needs that take them."""
    from copy import copy

    if needs.isdisjoint({"tools", "tool_ends", "transcript"}):
        events = [event for event in events if not isinstance(event, (ToolStart, ToolEnd))]
    if "native" in needs:
        return fingerprint(events)
    events = [copy(event) for event in events]
    for event in events:
        if isinstance(event, RunEnd):
            event.native = None
    return fingerprint(events)


NOISE = [
    b'{"type":"item.updated","item":{"id":"item_1","type":"command_execution",'
    b'"command":"x","aggregated_output":"partial\\n","exit_code":null,"status":"in_progress"}}',
    b'{"note":"an object of no agent"}',
    b'{"type":"request_user_input","id":"t","call_id":"c","questions":[]}',
    b'{"type":"item.plan.delta","item_id":"item_9","delta":"step"}',
    b"Reading prompt from stdin...",
    b"",
    b'{"type":"item.updated","item":{"id":"item_0","type":"todo_list","items":[]}}',
]


def shuffled(draw, value, depth=0):
    """``value`` with the keys of its objects (two levels deep) in a drawn order."""
    if type(value) is not dict or depth > 2:
        return value
    keys = draw(st.permutations(list(value)))
    return {key: shuffled(draw, value[key], depth + 1) for key in keys}


@st.composite
def variants(draw):
    """An input of the golden inputs, spelt otherwise: keys reordered, spaces around the
    colons, non-ASCII escaped, the key "type" escaped, noise lines between."""
    path = draw(st.sampled_from(all_inputs()))
    out = []
    for raw in path.read_bytes().splitlines():
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            out.append(raw)
            continue
        separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (",", " : ")]))
        text = json.dumps(shuffled(draw, value), separators=separators,
                          ensure_ascii=draw(st.booleans())).encode()
        if draw(st.booleans()):
            text = text.replace(b'"type"', b'"\\u0074ype"')
        out.append(text)
    for _ in range(draw(st.integers(0, 4))):
        out.insert(draw(st.integers(0, len(out))), draw(st.sampled_from(NOISE)))
    return b"\n".join(out) + b"\n"


@EXAMPLES
@given(variants())
def test_property_the_markers_lose_no_event_of_a_variant(data):
    whole = read(data, checks=False)
    for needs in NEEDS:
        assert fingerprint(read(data, checks=False, needs=needs)) == as_needed(whole, needs)


ITEM_TYPES = ["agent_message", "reasoning", "plan", "command_execution", "file_change",
              "mcp_tool_call", "web_search", "todo_list", "collab_tool_call", "error",
              "image_view", None]


@st.composite
def codex_events(draw):
    """One event of a Codex stream, or of a damaged one."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return thread(draw(st.sampled_from(["t1", "t2", None])))
    if choice == 1:
        return TURN
    if choice == 2:
        return completed(draw(st.integers(0, 9)), draw(st.integers(0, 9)), 1)
    if choice == 3:
        return draw(st.sampled_from([failed("boom"), {"type": "turn.failed"},
                                     {"type": "error", "message": "boom"}]))
    if choice == 4:
        return draw(st.sampled_from([{"note": 1}, {"type": "request_user_input"},
                                     {"type": "item.completed", "item": "not an object"},
                                     {"type": "item.completed",
                                      "item": {"id": "x", "item_type": "reasoning"}}]))
    event = draw(st.sampled_from(["started", "updated", "completed", "completed"]))
    fields = {"id": draw(st.sampled_from(["item_0", "item_1", "item_2", None])),
              "type": draw(st.sampled_from(ITEM_TYPES)),
              "text": draw(st.sampled_from(["", "hi", "bye"])),
              "command": "ls", "status": draw(st.sampled_from(
                  ["in_progress", "completed", "failed", "declined", None])),
              "exit_code": draw(st.sampled_from([None, 0, 1])),
              "changes": [{"path": "/p", "kind": draw(st.sampled_from(["add", "delete"]))}]}
    return {"type": f"item.{event}", "item": fields}


@EXAMPLES
@given(st.lists(st.one_of(codex_events(), st.sampled_from(NOISE)), max_size=30))
def test_property_any_stream_gives_well_formed_runs_and_calls(lines):
    data = stream(*[line.decode() if isinstance(line, bytes) else line for line in lines])
    events = read(data)
    whole = read(data, checks=False)
    for needs in NEEDS:
        assert fingerprint(read(data, checks=False, needs=needs)) == as_needed(whole, needs)
    run = None
    open_calls = set()
    for event in events:
        if isinstance(event, RunStart):
            assert run is None
            run, open_calls = event, set()
        elif isinstance(event, RunEnd):
            assert event.start is run
            run = None
        elif isinstance(event, Note):
            assert event.check in codex.CHECKS
        else:
            assert run is not None, event
            if isinstance(event, ToolStart) and event.call_id is not None:
                open_calls.add(event.call_id)
            elif isinstance(event, ToolEnd) and event.call_id is not None:
                assert event.call_id in open_calls
                open_calls.discard(event.call_id)
            elif isinstance(event, Text):
                assert event.text
    assert run is None


# The real captures, when they are beside this clone.

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(),
                                  reason="../shared/corpus/codex is not beside this clone")


def corpus_files():
    return sorted(CORPUS.glob("*.ndjson")) if CORPUS.is_dir() else []


@needs_corpus
def test_the_corpus_is_there():
    assert corpus_files()


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.name)
def test_a_capture(path):
    objects = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    events = read(path)
    assert all(codex.decides(data) for data in objects)
    (end,) = ends(events)
    messages = [o["item"]["text"] for o in objects if o["type"] == "item.completed"
                and o["item"]["type"] == "agent_message"]
    assert end.answer == (messages[-1] if messages else "")
    texts = [event.text for event in events if isinstance(event, Text)]
    assert texts == messages and no_text_twice(events)
    started = {event.call_id for event in events if isinstance(event, ToolStart)}
    ended = {event.call_id for event in events if isinstance(event, ToolEnd)}
    assert ended <= started
    if objects[-1]["type"] == "turn.completed":
        assert end.ok and not end.cutoff
        assert ended == started
        assert end.native["finalResponse"] == end.answer
        usage = objects[-1]["usage"]
        assert end.usage["input"] == (usage["input_tokens"] - usage["cached_input_tokens"]
                                      - usage.get("cache_write_input_tokens", 0))
        assert not [event for event in events if isinstance(event, Note)]
    else:
        assert end.cutoff and end.native is None and end.line == len(objects)
