"""The Gemini CLI format module: what it makes of each shape of docs/formats.md#gemini-cli.

At the model level: the decoder's items of an input go to ``Reader``, and the model
events that come out are checked (runs, answer, native object, usage, tool calls,
text pieces, notes), as are detection (``decides``) and the prefilter (``markers``).
The inputs are the golden ones (tests/golden/gemini) and small streams written here in
the shapes of docs/formats.md#gemini-cli; no real capture could be shared.
"""

import io
import re
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import orjson
import pytest
from conftest import examples, model_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent.decoder import Event, Skipped, decode_line, iter_items
from ndagent.formats import gemini
from ndagent.model import (
    FORGOTTEN,
    KINDS,
    OUTCOMES,
    Note,
    RunEnd,
    RunStart,
    Text,
    ToolEnd,
    ToolStart,
    epoch_ms,
)
from ndagent.selection import Selection

GOLDEN = Path(__file__).parent / "golden"
GEMINI_GOLDEN = GOLDEN / "gemini"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "gemini"
NEEDS_SETS = [frozenset(subset) for size in (1, 2, 3)
              for subset in combinations(("text", "tools", "ends"), size)]

SESSION = "3c9a7e2b-5f14-4d86-a0b3-e1f7c4d92a58"


# Streams in the shapes of docs/formats.md#gemini-cli.

def init(time="2026-05-11T08:02:14.310Z", session_id=SESSION, model="auto-gemini-3"):
    return {"type": "init", "timestamp": time, "session_id": session_id, "model": model}


def user(text="How many TODOs are in src/?", time="2026-05-11T08:02:14.312Z"):
    return {"type": "message", "timestamp": time, "role": "user", "content": text}


def say(text, time="2026-05-11T08:02:16.041Z"):
    return {"type": "message", "timestamp": time, "role": "assistant", "content": text,
            "delta": True}


def use(name, call_id, time="2026-05-11T08:02:16.388Z", **parameters):
    return {"type": "tool_use", "timestamp": time, "tool_name": name, "tool_id": call_id,
            "parameters": parameters}


def done(call_id, output="ok", time="2026-05-11T08:02:16.702Z"):
    return {"type": "tool_result", "timestamp": time, "tool_id": call_id,
            "status": "success", "output": output}


def failed(call_id, error_type, message, time="2026-05-11T08:02:16.702Z"):
    return {"type": "tool_result", "timestamp": time, "tool_id": call_id, "status": "error",
            "error": {"type": error_type, "message": message}}


def error(message, severity="error", time="2026-05-11T08:02:17.000Z"):
    return {"type": "error", "timestamp": time, "severity": severity, "message": message}


STATS = {"total_tokens": 21904, "input_tokens": 21611, "output_tokens": 58, "cached": 12288,
         "input": 9323, "duration_ms": 3921, "tool_calls": 1,
         "models": {"gemini-3-flash": {"total_tokens": 21904, "input_tokens": 21611,
                                       "output_tokens": 58, "cached": 12288, "input": 9323}}}
ZERO_STATS = {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0, "cached": 0,
              "input": 0, "duration_ms": 0, "tool_calls": 0, "models": {}}


def result(status="success", time="2026-05-11T08:02:18.231Z", stats=STATS, **fields):
    data = {"type": "result", "timestamp": time, "status": status, **fields}
    if stats is not None:
        data["stats"] = stats
    return data


GREP = "grep_search-1778486536388-4e2b9a7c1d5f0"
SHELL = "run_shell_command-1778493953480-b07c3e91a2d46"
READ = "read_file-1778486536400-9a8b7c6d5e4f3"

# Success with one tool call; the answer is the text after it (docs/formats.md#gemini-answer).
SUCCESS = [
    init(), user(), say("Let me search."),
    use("grep_search", GREP, pattern="TODO", dir_path="src"),
    done(GREP, "Found 7 matches"),
    say("There are 7 TODO", "2026-05-11T08:02:18.155Z"),
    say(" comments in `src/`.", "2026-05-11T08:02:18.190Z"),
    result(),
]

# A failed run, noise lines on stdout first (docs/formats.md#gemini-quirks-of-real-streams).
FAILED = [
    b"Loaded cached credentials.",
    init("2026-05-11T09:40:02.774Z", "a81d5c3f-0e62-4b97-8c24-f3b6a9d1e705",
         "gemini-3-pro-preview"),
    user("Summarise CHANGELOG.md", "2026-05-11T09:40:02.776Z"),
    result("error", "2026-05-11T09:41:15.908Z", ZERO_STATS,
           error={"type": "Error",
                  "message": "[API Error: You have exhausted your daily quota on this model.]"}),
]

# Cut off with a shell call open (docs/formats.md#gemini-runs and docs/agents.md#tools).
CUT_OFF = [
    init("2026-05-11T10:05:51.020Z", "f4b2e8a1-7c39-4d50-9a16-2e5c8b0d3f71"),
    user("Fix the failing test", "2026-05-11T10:05:51.022Z"),
    use("run_shell_command", SHELL, "2026-05-11T10:05:53.480Z", command="npm test",
        description="Run the test suite"),
]

# Two calls in parallel, their results in the other order, text between.
PARALLEL = [
    init(), user(), say("Reading both."),
    use("read_file", READ, file_path="src/a.py"),
    use("grep_search", GREP, pattern="def ", dir_path="src"),
    done(GREP, "Found 3 matches", "2026-05-11T08:02:16.500Z"),
    done(READ, "print(1)", "2026-05-11T08:02:16.900Z"),
    say("Three functions; `a.py` prints 1."),
    result(),
]

# An invalid response: an error event of severity error, then status error, no error.
INVALID = [
    init(), user(),
    error("Loop detected, stopping execution", "warning"),
    error("first invalid chunk"),
    error("Model stream ended with an invalid chunk or missing finish reason."),
    result("error", stats={"total_tokens": 10, "input_tokens": 10, "output_tokens": 0,
                           "duration_ms": 0}),
]


def stream(*lines):
    """The bytes of a stream: dicts as compact JSON lines, bytes as they are."""
    return b"".join((line if line.__class__ is bytes else orjson.dumps(line)) + b"\n"
                    for line in lines)


def read(data, checks=False, needs=None, source="t"):
    """The model events of a stream's bytes: every line decoded, or (``needs``) only the
    lines the module's markers select, the others handed over as Skipped."""
    return model_events(gemini, data, checks, needs, name=source)


def read_file(path, checks=False):
    reader = gemini.Reader(str(path), checks)
    out = []
    for item in iter_items([path]):
        assert not isinstance(item, Skipped)
        if isinstance(item, Event):
            out += reader.event(item)
    return out + reader.finish()


def only(events, cls):
    return [event for event in events if isinstance(event, cls)]


def run_ends(events):
    return only(events, RunEnd)


def tools(events):
    """(class, call_id, kind, name, outcome, target) of every tool event."""
    return [(type(event).__name__, event.call_id, event.kind, event.name,
             getattr(event, "outcome", None), event.target)
            for event in events if isinstance(event, (ToolStart, ToolEnd))]


def notes(events):
    return [(event.check, event.line) for event in only(events, Note)]


# The shapes of docs/formats.md#gemini-cli.

def test_success_with_a_tool_the_answer_is_the_text_after_it():
    events = read(stream(*SUCCESS))
    assert [type(event) for event in events] == [
        RunStart, Text, ToolStart, ToolEnd, Text, Text, RunEnd]
    start = events[0]
    assert (start.agent, start.session_id, start.model, start.cwd, start.line) == (
        "gemini", SESSION, "auto-gemini-3", None, 1)
    (end,) = run_ends(events)
    assert (end.ok, end.cutoff, end.failure, end.line, end.start) == (True, False, None, 8,
                                                                      start)
    assert end.answer == "There are 7 TODO comments in `src/`."
    assert list(end.native) == ["session_id", "response", "stats"]
    assert end.native == {"session_id": SESSION, "response": end.answer, "stats": STATS}
    assert end.usage == {"input": 9323, "cacheRead": 12288, "cacheWrite": None, "output": 58}
    assert (end.cost_usd, end.duration_ms, end.model) == (None, 3921, "auto-gemini-3")
    assert tools(events) == [("ToolStart", GREP, "grep", "grep_search", None, "TODO"),
                             ("ToolEnd", GREP, "grep", "grep_search", "success", "TODO")]
    tool_start, tool_end = only(events, ToolStart)[0], only(events, ToolEnd)[0]
    assert tool_start.args == {"pattern": "TODO", "dir_path": "src"}
    # The arguments are the start's alone: the Reader does not keep them (issue 25, M1).
    assert tool_end.args is None and tool_end.result == "Found 7 matches"
    assert (tool_start.time_ms, tool_end.time_ms) == (1778486536388, 1778486536702)
    assert tool_start.session_id == tool_end.session_id == SESSION
    assert tool_start.model_call_id is tool_start.parent is None
    texts = only(events, Text)
    assert [text.text for text in texts] == [
        "Let me search.", "There are 7 TODO", " comments in `src/`."]
    assert texts[0].message != texts[1].message == texts[2].message
    assert [text.line for text in texts] == [3, 6, 7]


def test_a_clean_stream_has_no_notes():
    assert not only(read(stream(*SUCCESS), checks=True), Note)
    assert not only(read(stream(*PARALLEL), checks=True), Note)


def test_parallel_calls_pair_by_tool_id():
    events = read(stream(*PARALLEL))
    assert tools(events) == [
        ("ToolStart", READ, "read", "read_file", None, "src/a.py"),
        ("ToolStart", GREP, "grep", "grep_search", None, "def "),
        ("ToolEnd", GREP, "grep", "grep_search", "success", "def "),
        ("ToolEnd", READ, "read", "read_file", "success", "src/a.py"),
    ]
    assert [start.args for start in only(events, ToolStart)] == [
        {"file_path": "src/a.py"}, {"pattern": "def ", "dir_path": "src"}]
    ends = only(events, ToolEnd)
    assert [end.result for end in ends] == ["Found 3 matches", "print(1)"]
    (end,) = run_ends(events)
    assert end.ok and end.answer == "Three functions; `a.py` prints 1."


def test_failed_run_prints_the_error_object_and_takes_the_duration_from_the_timestamps():
    data = stream(*FAILED)
    items = list(iter_items([io.BytesIO(data)]))
    # The noise line is the decoder's bad line; the reader never sees it.
    assert [type(item).__name__ for item in items] == ["BadLine", "Event", "Event", "Event"]
    events = read(data)
    (start,) = only(events, RunStart)
    assert start.line == 2 and start.model == "gemini-3-pro-preview"
    (end,) = run_ends(events)
    assert (end.ok, end.cutoff, end.line) == (False, False, 4)
    assert end.failure == "[API Error: You have exhausted your daily quota on this model.]"
    assert list(end.native) == ["session_id", "stats", "error"]
    assert end.native["error"] == FAILED[-1]["error"]
    assert end.native["stats"] == ZERO_STATS
    assert end.duration_ms == 73134  # stats.duration_ms is 0
    assert end.usage == {"input": 0, "cacheRead": 0, "cacheWrite": None, "output": 0}
    assert end.answer == ""


def test_invalid_stream_error_from_the_last_severity_error_event_the_others_are_warnings():
    events = read(stream(*INVALID))
    (end,) = run_ends(events)
    assert not end.ok and not end.cutoff
    assert end.failure == "Model stream ended with an invalid chunk or missing finish reason."
    assert list(end.native) == ["session_id", "response", "stats", "error", "warnings"]
    assert end.native["response"] == ""
    assert end.native["error"] == {"type": "INVALID_STREAM", "message": end.failure}
    assert end.native["warnings"] == ["Loop detected, stopping execution",
                                      "first invalid chunk"]
    # 2026-04 stats: no cached, no input; duration 0: from the timestamps.
    assert end.usage == {"input": 10, "cacheRead": 0, "cacheWrite": None, "output": 0}
    assert end.duration_ms == 18231 - 14310


def test_status_error_with_nothing_to_say_why():
    events = read(stream(init(), user(), result("error", stats=None)))
    (end,) = run_ends(events)
    assert end.failure == 'result status "error"'
    assert end.native == {"session_id": SESSION, "response": "",
                          "error": {"type": "INVALID_STREAM", "message": None}}
    assert end.usage is None and end.duration_ms == 18231 - 14310


def test_result_error_leaves_every_error_event_a_warning():
    lines = [init(), user(), error("retrying", "warning"), error("a severe one"),
             result("error", error={"type": "FatalTurnLimitedError",
                                    "message": "Reached max session turns"})]
    (end,) = run_ends(read(stream(*lines)))
    assert end.failure == "Reached max session turns"
    assert list(end.native) == ["session_id", "stats", "error", "warnings"]
    assert end.native["warnings"] == ["retrying", "a severe one"]


def test_a_success_after_a_loop_warning_keeps_its_response_and_warns():
    lines = [init(), user(), say("Partial."), error("Loop detected, stopping execution",
                                                     "warning"), result()]
    (end,) = run_ends(read(stream(*lines)))
    assert end.ok and end.failure is None
    assert end.native["response"] == "Partial."
    assert end.native["warnings"] == ["Loop detected, stopping execution"]
    assert list(end.native) == ["session_id", "response", "stats", "warnings"]


def test_an_empty_session_id_is_left_out_and_absent_stats_too():
    (end,) = run_ends(read(stream(init(session_id=""), user(), say("Hi."),
                                  result(stats=None))))
    assert end.native == {"response": "Hi."}
    assert end.usage is None


def test_cut_off_with_a_call_open():
    events = read(stream(*CUT_OFF))
    assert tools(events) == [("ToolStart", SHELL, "shell", "run_shell_command", None,
                              "npm test")]
    (end,) = run_ends(events)
    assert end.cutoff and not end.ok
    assert (end.answer, end.native, end.usage, end.duration_ms, end.cost_usd) == (
        "", None, None, None, None)
    assert end.model == "auto-gemini-3" and end.line == 3 and end.start.line == 1


def test_cut_off_mid_answer_would_have_answered_the_text_since_the_last_tool_event():
    lines = [init(), user(), say("Looking."), use("read_file", READ, file_path="a"),
             done(READ), say("The answer"), say(" so far")]
    (end,) = run_ends(read(stream(*lines)))
    assert end.cutoff and end.answer == "The answer so far" and end.line == 7


def test_several_runs():
    events = read(stream(*SUCCESS, *PARALLEL))
    starts, ends = only(events, RunStart), run_ends(events)
    assert [start.line for start in starts] == [1, 9]
    assert [(end.ok, end.cutoff, end.line) for end in ends] == [(True, False, 8),
                                                                (True, False, 17)]
    assert [end.start for end in ends] == starts
    assert [end.answer for end in ends] == ["There are 7 TODO comments in `src/`.",
                                            "Three functions; `a.py` prints 1."]
    messages = [text.message for text in only(events, Text)]
    assert len(set(messages)) == 4  # two messages per run, all told apart


def test_a_run_begins_at_the_first_event_after_a_result_without_init():
    lines = [*SUCCESS, user("And now?"), say("Done."), result()]
    events = read(stream(*lines), checks=True)
    starts = only(events, RunStart)
    assert [(start.line, start.session_id, start.model) for start in starts] == [
        (1, SESSION, "auto-gemini-3"), (9, None, None)]
    second = run_ends(events)[1]
    assert second.ok and second.answer == "Done." and "session_id" not in second.native
    assert second.duration_ms == 3921  # from stats; no init to count from
    assert notes(events) == [("init", 9)]


def test_an_init_in_an_open_run_cuts_it_off():
    events = read(stream(*CUT_OFF, *SUCCESS))
    ends = run_ends(events)
    assert [(end.cutoff, end.start.line, end.line) for end in ends] == [(True, 1, 3),
                                                                        (False, 4, 11)]
    assert [type(event) for event in events[:4]] == [RunStart, ToolStart, RunEnd, RunStart]


def test_tool_use_without_tool_id_cannot_be_paired():
    lines = [init(), user(),
             {"type": "tool_use", "timestamp": "2026-05-11T08:02:16.388Z",
              "tool_name": "read_file", "parameters": {"file_path": "x"}},
             {"type": "tool_result", "timestamp": "2026-05-11T08:02:16.702Z",
              "status": "success", "output": "x"},
             say("ok"), result()]
    events = read(stream(*lines), checks=True)
    assert tools(events) == [("ToolStart", None, "read", "read_file", None, "x"),
                             ("ToolEnd", None, None, None, "success", None)]
    assert notes(events) == [("tool-id", 3)]
    assert run_ends(events)[0].answer == "ok"
    # Not only for validate: the converters warn of it.
    assert notes(read(stream(*lines))) == [("tool-id", 3)]


def test_a_tool_result_without_its_tool_use_names_the_tool_from_its_id():
    mcp = "mcp_linear_list_issues-1781300700352-de2c6477c192f"
    events = read(stream(init(), user(), done(SHELL), done(mcp), done("odd-id"), result()))
    assert tools(events) == [
        ("ToolEnd", SHELL, "shell", "run_shell_command", "success", None),
        ("ToolEnd", mcp, "mcp", "mcp_linear_list_issues", "success",
         "mcp_linear_list_issues"),
        ("ToolEnd", "odd-id", None, None, "success", None),
    ]


@pytest.mark.parametrize(("name", "kind"), [
    ("run_shell_command", "shell"), ("read_file", "read"), ("read_many_files", "read"),
    ("write_file", "write"), ("replace", "edit"), ("list_directory", "ls"),
    ("glob", "glob"), ("grep_search", "grep"), ("search_file_content", "grep"),
    ("google_web_search", "webSearch"), ("web_fetch", "webFetch"),
    ("write_todos", "updateTodos"), ("invoke_agent", "task"),
    ("codebase_investigator", "task"), ("cli_help", "task"),
    ("mcp_linear_list_issues", "mcp"), ("mcp_context7_resolve", "mcp"),
    ("save_memory", "save_memory"), ("activate_skill", "activate_skill"),
    ("tracker_update", "tracker_update"), ("mcp_", "mcp_"), ("mcp_server", "mcp_server"),
    (None, None),
])
def test_kinds(name, kind):
    assert gemini.kind_of(name) == kind
    assert kind is None or kind in KINDS or kind == name


@pytest.mark.parametrize(("name", "parameters", "target"), [
    ("read_file", {"file_path": "a/b.py"}, "a/b.py"),
    ("list_directory", {"dir_path": "src"}, "src"),
    ("run_shell_command", {"command": "ls -la", "description": "list"}, "ls -la"),
    ("grep_search", {"dir_path": "src", "pattern": "TODO"}, "TODO"),
    ("glob", {"pattern": "*/README.md", "dir_path": "."}, "*/README.md"),
    ("google_web_search", {"query": "gemini cli"}, "gemini cli"),
    ("mcp_linear_list_issues", {"state": "open"}, "mcp_linear_list_issues"),
    ("web_fetch", {"prompt": "summarise https://example.com"}, None),
    ("write_todos", {"todos": []}, None),
])
def test_targets(name, parameters, target):
    call_id = f"{name}-1778486536388-4e2b9a7c1d5f0"
    events = read(stream(init(), user(), use(name, call_id, **parameters)))
    assert only(events, ToolStart)[0].target == target


@pytest.mark.parametrize(("end", "outcome", "result"), [
    (done(SHELL, "exit 1 but ran"), "success", "exit 1 but ran"),
    (failed(SHELL, "policy_violation", "denied"), "permissionDenied",
     {"type": "policy_violation", "message": "denied"}),
    (failed(SHELL, "file_not_found", "no such file"), "error",
     {"type": "file_not_found", "message": "no such file"}),
    ({"type": "tool_result", "timestamp": "2026-05-11T08:02:16.702Z", "tool_id": SHELL,
      "status": "cancelled"}, "unknown", None),
])
def test_outcomes(end, outcome, result):
    events = read(stream(init(), user(), use("run_shell_command", SHELL, command="x"), end))
    (tool_end,) = only(events, ToolEnd)
    assert (tool_end.outcome, tool_end.result) == (outcome, result)
    assert tool_end.outcome in OUTCOMES


def test_text_pieces_come_once_each_and_a_tool_event_begins_a_new_message():
    lines = [init(), user(), say("a"), say("b"), use("read_file", READ, file_path="x"),
             say("c"), done(READ), say("d"), say(""), say("e"), result()]
    events = read(stream(*lines))
    texts = only(events, Text)
    assert [text.text for text in texts] == ["a", "b", "c", "d", "e"]
    keys = [text.message for text in texts]
    assert keys[0] == keys[1] != keys[2] != keys[3] == keys[4] and keys[0] != keys[3]
    assert run_ends(events)[0].answer == "de"


def test_the_answer_with_no_tool_call_is_all_deltas():
    lines = [init(), user(), say("Bogotá is the capital and"),
             say(" largest city of Colombia."), result()]
    assert run_ends(read(stream(*lines)))[0].answer == (
        "Bogotá is the capital and largest city of Colombia.")


# validate's checks for Gemini (docs/agents.md#validate).

def test_checks_error_events_are_warnings_whatever_their_severity():
    events = read(stream(*INVALID), checks=True)
    assert notes(events) == [("error-event", 3), ("error-event", 4), ("error-event", 5)]
    assert only(events, Note)[0].message == (
        'error event (severity "warning"): "Loop detected, stopping execution"')
    assert all(gemini.CHECKS[check][0] == "warning" for check, _ in notes(events))


def test_checks_init_first_and_iso_timestamps():
    no_time = dict(user())
    del no_time["timestamp"]
    lines = [user(), init(), no_time, say("x", time="2026-05-11 08:02"),
             say("y", time=1778486536), result()]
    events = read(stream(*lines), checks=True)
    assert notes(events) == [("init", 1), ("timestamp", 3), ("timestamp", 4),
                             ("timestamp", 5)]
    messages = [note.message for note in only(events, Note)]
    assert messages[0] == 'the run begins with a "message" event, not init'
    assert messages[2] == 'timestamp "2026-05-11 08:02" is not an ISO 8601 time'


def test_checks_exactly_one_user_message():
    events = read(stream(init(), user(), user("again"), say("x"), result()), checks=True)
    assert notes(events) == [("user-message", 3)]
    events = read(stream(init(), say("x"), result()), checks=True)
    assert notes(events) == [("user-message", 3)]
    assert only(events, Note)[0].message == "no user message in the run"


def test_checks_assistant_message_without_delta():
    whole = dict(say("whole"))
    del whole["delta"]
    events = read(stream(init(), user(), whole, result()), checks=True)
    assert notes(events) == [("delta", 3)]
    assert run_ends(events)[0].answer == "whole"


def test_notes_quote_stream_text_bounded_and_escaped():
    events = read(stream(init(), user(), error("\x1b[31mred\u202e" + "x" * 100),
                         use("\x1b]0;t\x07", None), result()), checks=True)
    messages = [note.message for note in only(events, Note)]
    assert messages[0] == 'error event (severity "error"): "\\x1b[31mred\\u202e' + (
        "x" * 51 + '..."')
    assert messages[1] == ('a tool_use of "\\x1b]0;t\\x07" has no tool_id: its result '
                           "cannot be paired")
    assert all("\x1b" not in message for message in messages)


def test_without_checks_no_notes_but_of_a_call_that_cannot_be_paired():
    lines = [user(), init(), say("x", time="bad"), error("e"), result()]
    assert not only(read(stream(*lines)), Note)


def test_every_check_is_in_the_table():
    assert set(gemini.CHECKS) == {"init", "timestamp", "user-message", "delta",
                                  "error-event", "tool-id"}
    for severity, meaning in gemini.CHECKS.values():
        assert severity in ("error", "warning") and "\n" not in meaning


# Memory: what a run keeps is bounded.

def test_open_calls_and_error_messages_are_kept_in_bounded_bytes(monkeypatch):
    """Issue 25 (M1): what a run keeps of its open calls (not their arguments) and of
    its error messages is bounded in bytes, not in number; the oldest are forgotten,
    with one note for each."""
    monkeypatch.setattr(gemini, "READER_CALL_BYTES", 20_000)
    monkeypatch.setattr(gemini, "NATIVE_BYTES", 20_000)
    path = "x" * 1000
    lines = [init(), user()]
    lines += [use("read_file", f"read_file-1-{index:x}", file_path=path, big=[{}] * 1000)
              for index in range(50)]
    lines += [error(f"e{index}" + "!" * 1000, "warning") for index in range(50)]
    reader = gemini.Reader("t")
    notes = []
    for number, line in enumerate(lines, 1):
        notes += [event for event in reader.event(Event("t", number, line))
                  if isinstance(event, Note)]
    assert [note.check for note in notes] == [FORGOTTEN, FORGOTTEN]
    (end,) = [event for event in reader.event(Event("t", 103, result()))
              if isinstance(event, RunEnd)]
    warnings = end.native["warnings"]
    assert 5 < len(warnings) < 20 and warnings[-1].startswith("e49!")
    # The newest calls are still paired, with their target; the oldest no longer.
    reader = gemini.Reader("t")
    for number, line in enumerate([*lines[:52], done("read_file-1-31"), done("read_file-1-0")],
                                  1):
        out = reader.event(Event("t", number, line))
        if number == 53:
            assert (out[0].kind, out[0].target, out[0].args) == ("read", path, None)
    assert (out[0].kind, out[0].target) == ("read", None)


def test_the_reader_keeps_no_arguments_of_open_calls():
    """Issue 25 (M1): the arguments of calls never answered are not kept by the Reader
    (json and result need no tool call; the verbs that print them keep them in the
    frame's pairer)."""
    import tracemalloc

    line = use("read_file", "read_file-1-0", file_path="a", big=[{}] * 6000)
    # 32 such calls are 16 MB decoded, four times the bound: what passes through is some
    # 1 MB at once.
    for needs in ({"native"}, {"text", "ends"}, {"tools", "ends"}, None):
        needs = None if needs is None else frozenset(needs)
        reader = gemini.Reader("t", needs=needs)
        reader.event(Event("t", 1, init()))
        tracemalloc.start()
        try:
            for number in range(2, 34):
                line["tool_id"] = f"read_file-1-{number:x}"
                reader.event(Event("t", number, orjson.loads(orjson.dumps(line))))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 4 << 20, (needs, peak)


def test_a_new_run_forgets_the_last_ones_calls():
    events = read(stream(*CUT_OFF, init(), user(), done(SHELL), result()))
    (end,) = only(events, ToolEnd)
    assert end.args is None and end.kind == "shell"  # from the id: the start is forgotten


# Times.

@pytest.mark.parametrize(("text", "ms"), [
    ("1970-01-01T00:00:00Z", 0),
    ("2026-05-11T08:02:14.310Z", 1778486534310),
    ("2026-05-11T08:02:14Z", 1778486534000),
    ("2026-05-11T08:02:14.3105678Z", 1778486534310),
    ("2026-05-11T10:02:14.310+02:00", 1778486534310),
    ("2026-05-11T03:02:14.310-0500", 1778486534310),
    ("2026-05-11 08:02:14.310z", 1778486534310),
    ("2026-05-11T08:02:14.310", None), ("2026-13-11T08:02:14Z", None),
    ("2026-02-30T08:02:14Z", None), ("2026-05-11T24:00:00Z", None),
    ("٢٠٢٦-05-11T08:02:14Z", None), ("", None), (1778486534310, None), (None, None),
])
def test_epoch_ms(text, ms):
    assert epoch_ms(text) == ms


# What each time reads as, a zone required or not: the same in any order of reading.
TIMES = {("2026-05-11T08:02:14.310", True): None,
         ("2026-05-11T08:02:14.310", False): 1778486534310,
         ("2026-05-11T10:02:14.310+02:00", True): 1778486534310,
         ("2026-05-11T10:02:14.310+02:00", False): 1778486534310,
         ("2026-02-30T08:02:14Z", True): None, ("2026-02-30T08:02:14Z", False): None}


@given(st.lists(st.sampled_from(sorted(TIMES)), min_size=2))
def test_epoch_ms_reads_a_time_whatever_was_read_before(calls):
    for text, zone_required in calls:
        assert epoch_ms(text, zone_required=zone_required) == TIMES[text, zone_required]


def plain_epoch_ms(text, zone_required):
    """epoch_ms by the plain means: the whole time matched at once, read by datetime."""
    from datetime import datetime, timedelta, timezone

    match = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):"
                         r"([0-9]{2})(?:[.,]([0-9]+))?((?:[Zz]|([+-])([0-9]{2}):?([0-9]{2}))?)",
                         text)
    if match is None or not match[8] and zone_required:
        return None
    year, month, day, hour, minute, second = map(int, match.groups()[:6])
    if second > 60:
        return None
    try:
        moment = datetime(year, month, day, hour, minute, tzinfo=timezone.utc)
    except ValueError:
        return None
    offset = 0 if match[9] is None else int(match[10]) * 60 + int(match[11])
    moment += timedelta(seconds=second, minutes=offset if match[9] == "-" else -offset)
    fraction = int(match[7][:3].ljust(3, "0")) if match[7] else 0
    return (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(
        milliseconds=1) + fraction


def times():
    """ISO 8601 times and near misses: any digits in each field, the separators and
    zones the agents write and others, a piece cut or added."""
    digits = lambda size: st.text("0123456789", min_size=size, max_size=size)  # noqa: E731
    time = st.tuples(digits(4), st.sampled_from("-/"), digits(2), st.just("-"), digits(2),
                     st.sampled_from("Tt x"), digits(2), st.just(":"), digits(2),
                     st.sampled_from([":", ""]), digits(2),
                     st.sampled_from(["", ".310", ",5", ".3105678", "."]),
                     st.sampled_from(["Z", "z", "", "+02:00", "-0500", "+2", "Zx"]))
    return st.one_of(time.map("".join), st.text("0123456789-:.TZ+ ", max_size=30))


@settings(max_examples=examples(60, 500), deadline=None, database=None)
@given(st.lists(times(), max_size=20), st.booleans())
def test_property_epoch_ms_reads_a_time_as_the_plain_means_do(texts, zone_required):
    """Whatever times were read before (epoch_ms keeps the minutes it has read)."""
    for text in texts + texts:
        assert epoch_ms(text, zone_required) == plain_epoch_ms(text, zone_required), text


# Detection (docs/agents.md#decisive-tests).

def golden_lines():
    for path in sorted(GOLDEN.glob("*/*/input.ndjson")):
        agent = path.parent.parent.name
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            data = decode_line(line)
            if data.__class__ is dict:
                yield agent, f"{path.parent.name}:{number}", data


def test_decides_on_every_golden_line_of_every_agent():
    seen = {"gemini": 0, "other": 0}
    for agent, where, data in golden_lines():
        if agent == "gemini":
            assert gemini.decides(data), where
            seen["gemini"] += 1
        else:
            assert not gemini.decides(data), (agent, where)
            seen["other"] += 1
    assert seen["gemini"] > 50 and seen["other"] > 100


@pytest.mark.parametrize(("data", "decisive"), [
    ({"type": "init", "session_id": "s"}, True),
    ({"type": "init", "session_id": "s", "subtype": "x"}, False),
    ({"type": "init"}, False),
    ({"type": "message", "role": "user", "content": "x"}, True),
    ({"type": "message", "role": "user", "content": ["x"]}, False),
    ({"type": "message", "content": "x"}, False),
    ({"type": "tool_use", "tool_name": "x"}, True),
    ({"type": "tool_result", "tool_id": "x"}, True),
    ({"type": "tool_result", "status": "success"}, False),
    ({"type": "error", "severity": "warning", "message": "m"}, True),
    ({"type": "error", "message": "m"}, False),  # Codex's
    ({"type": "result", "status": "success"}, True),
    ({"type": "result", "status": 1}, False),
    ({"type": "result", "subtype": "success", "duration_ms": 1}, False),  # Cursor's
    ({"type": "system", "subtype": "init", "session_id": "s"}, False),
    ({"type": "assistant", "message": {"content": []}}, False),
    ({}, False),
])
def test_decides(data, decisive):
    assert gemini.decides(data) is decisive


def test_no_old_format_to_recognise():
    assert gemini.FORMAT.refuses is None


# The prefilter: markers select every line that matters.

def test_markers_always_hold_the_run_boundaries():
    for needs in [frozenset(), *NEEDS_SETS]:
        if gemini.markers(needs) is None:
            continue
        found = set(gemini.markers(needs))
        assert {(("type", "init"),), (("type", "result"),),
                (("type", "error"), ("severity", "error"))} <= found
        Selection(gemini.markers(needs))  # plain names only


@pytest.mark.parametrize("need", ["text", "ends", "native"])
def test_every_line_is_decoded_when_the_answer_s_messages_matter(need):
    """Then only the user's prompt would be passed over."""
    assert gemini.markers({need}) is None
    assert gemini.markers({need, "tools"}) is None
    assert gemini.markers({"tools"}) is not None


def comparable(events, needs):
    """What a verb with ``needs`` sees of the model events: run boundaries always."""
    kept = []
    for event in events:
        if isinstance(event, RunStart):
            kept.append(repr(event))
        elif isinstance(event, RunEnd):
            if "ends" in needs:
                # The native object's warnings are kept only where it is needed.
                native = None if event.native is None else {
                    key: value for key, value in event.native.items()
                    if key != "warnings" or "native" in needs}
                kept.append((repr(event.start), event.cutoff, event.ok, event.failure,
                             event.answer, native, event.usage, event.line))
            else:
                # A cut-off run's last lines may have been passed over: a Skipped item
                # gives the first line of what it passes over, not the last.
                kept.append(("end", event.start.line, event.cutoff, event.ok, event.failure,
                             None if event.cutoff else event.line))
        elif isinstance(event, Text) and "text" in needs or (
                isinstance(event, (ToolStart, ToolEnd)) and "tools" in needs):
            kept.append(repr(event))
    return kept


INLINE = {
    "success": SUCCESS, "failed": FAILED, "cut-off": CUT_OFF, "parallel": PARALLEL,
    "invalid": INVALID,
    "no-init": [*SUCCESS, user("And now?"), say("Done."), result()],
    "init-in-run": [*CUT_OFF, *SUCCESS],
    "cut-off-in-text": [init(), user(), use("read_file", READ, file_path="a"), done(READ),
                        say("The answer"), say(" so far")],
}
INPUTS = {**{f"golden/{path.parent.name}": path.read_bytes()
             for path in sorted(GEMINI_GOLDEN.glob("*/input.ndjson"))},
          **{name: stream(*lines) for name, lines in INLINE.items()}}


@pytest.mark.parametrize("name", sorted(INPUTS))
@pytest.mark.parametrize("needs", NEEDS_SETS, ids=lambda needs: "+".join(sorted(needs)))
def test_selected_lines_give_the_same_events(name, needs):
    data = INPUTS[name]
    assert comparable(read(data, needs=needs), needs) == comparable(read(data), needs)


def respell(line, draw):
    """A line of JSON with its keys in another order, spaced or with an escaped key, as
    another writer might spell the same object."""
    data = decode_line(line)
    if data.__class__ is not dict:
        return line
    keys = draw(st.permutations(list(data)))
    members = []
    for key in keys:
        name = orjson.dumps(key)
        if draw(st.booleans()) and key[:1].isalpha():
            name = b'"\\u%04x' % ord(key[0]) + name[2:]
        separator = draw(st.sampled_from([b":", b" : ", b": ", b":\t"]))
        members.append(name + separator + orjson.dumps(data[key]))
    return b"{" + b", ".join(members) + b"}"


@settings(max_examples=examples(15, 60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(INPUTS)), needs=st.sampled_from(NEEDS_SETS),
       data=st.data())
def test_selected_lines_give_the_same_events_however_spelt(name, needs, data):
    lines = INPUTS[name].splitlines()
    respelt = b"".join(respell(line, data.draw) + b"\n" for line in lines)
    whole = read(respelt)
    assert comparable(read(respelt, needs=needs), needs) == comparable(whole, needs)
    # And the spelling changes nothing the reader makes (but the source's bytes).
    assert comparable(whole, {"text", "tools", "ends"}) == comparable(
        read(INPUTS[name]), {"text", "tools", "ends"})


# The golden inputs, event by event.

GOLDEN_RUNS = {
    # case: [(ok, cutoff, failure, answer)], tools [(kind, name, outcome, target)]
    "tool-success": ([(True, False, None,
                       "The dev server listens on port 5173 (the `server.port` setting).")],
                     [("read", "read_file", "success", "vite.config.ts")]),
    "no-tool": ([(True, False, None,
                  "No. 2027 is not divisible by 4, so it is not a leap year.")], []),
    "failed-noise": ([(False, False,
                       "[API Error: Resource has been exhausted (e.g. check quota).]", "")],
                     []),
    "failed-invalid-stream": ([(False, False, "Model stream ended with an invalid chunk or "
                                "missing finish reason.", "")], []),
    "cut-off": ([(False, True, None, "")],
                [("shell", "run_shell_command", "pending", "npm run migrate -- --env staging")]),
    "policy-violation": ([(True, False, None, "I may not delete remote branches here; run "
                           "`git push origin --delete release/1.0 release/1.1` yourself.")],
                         [("shell", "run_shell_command", "permissionDenied",
                           "git push origin --delete release/1.0 release/1.1")]),
    "shell": ([(True, False, None, "No: 1 of the 4 unit tests fails.")],
              [("shell", "run_shell_command", "success", "pytest -q tests/unit")]),
    "mcp-tool": ([(True, False, None,
                   "The newest open issue is ENG-412, a flaky upload test on CI.")],
                 [("mcp", "mcp_linear_list_issues", "success", "mcp_linear_list_issues")]),
    "several-runs": ([(True, False, None, "There are four: `api`, `web`, `docs` and "
                       "`scripts`."), (True, False, None, "`api` and `docs` have one.")],
                     [("ls", "list_directory", "success", "."),
                      ("glob", "glob", "success", "*/README.md")]),
    "tool-without-id": ([(True, False, None, "`make test` runs `pytest -q` in `.venv`.")],
                        [("read", "read_file", "pending", "Makefile")]),
}


def test_every_golden_case_is_covered():
    assert set(GOLDEN_RUNS) == {path.name for path in GEMINI_GOLDEN.iterdir()
                                if (path / "input.ndjson").exists()}


def calls(events):
    """(kind, name, outcome, target) per call, in start order; pending when no end."""
    ends = {end.call_id: end for end in only(events, ToolEnd)}
    found = []
    for start in only(events, ToolStart):
        end = ends.get(start.call_id)
        found.append((start.kind, start.name, end.outcome if end else "pending",
                      start.target))
    return found


@pytest.mark.parametrize("case", sorted(GOLDEN_RUNS))
def test_golden_input(case):
    path = GEMINI_GOLDEN / case / "input.ndjson"
    events = read_file(path, checks=True)
    runs, expected_calls = GOLDEN_RUNS[case]
    ends = run_ends(events)
    assert [(end.ok, end.cutoff, end.failure, end.answer) for end in ends] == runs
    assert calls(events) == expected_calls
    assert len(only(events, RunStart)) == len(ends)
    # Notes: only the error event of failed-invalid-stream, the tool_use without id.
    expected_notes = {"failed-invalid-stream": [("error-event", 3)],
                      "tool-without-id": [("tool-id", 3)]}.get(case, [])
    assert notes(events) == expected_notes
    lines = path.read_bytes().splitlines()
    for end in ends:
        # The answer is the deltas after the run's last tool event, and Text gives each
        # delta once, on its own line.
        assert end.model == end.start.model == "auto-gemini-3" or case == "failed-noise"
        if end.cutoff:
            assert end.native is None and end.usage is None and end.duration_ms is None
            continue
        result = orjson.loads(lines[end.line - 1])
        assert result["type"] == "result"
        keys = ["session_id", "response", "stats", "error"]
        if "error" in result:
            keys.remove("response")
        elif end.ok:
            keys.remove("error")
        assert list(end.native) == keys
        assert end.native["stats"] == result["stats"]
        stats = result["stats"]
        assert end.usage == {"input": stats["input"], "cacheRead": stats["cached"],
                             "cacheWrite": None, "output": stats["output_tokens"]}
        assert end.cost_usd is None
        assert end.duration_ms == (stats["duration_ms"] or 61046)
    texts = only(events, Text)
    assert [text.text for text in texts] == [
        orjson.loads(lines[text.line - 1])["content"] for text in texts]
    assert len({text.line for text in texts}) == len(texts)


def test_golden_tool_times_are_the_lines_timestamps():
    path = GEMINI_GOLDEN / "tool-success" / "input.ndjson"
    events = read_file(path)
    start, end = only(events, ToolStart)[0], only(events, ToolEnd)[0]
    assert end.time_ms - start.time_ms == 300
    assert start.time_ms == int(start.call_id.split("-")[1])  # the id holds it too


# Real captures, when ../shared/corpus/gemini is beside this clone.

def corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(path for path in CORPUS.iterdir() if path.suffix in (".jsonl", ".ndjson"))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus/gemini is not here")
@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.name)
def test_capture(path):
    events = read_file(path)
    ends = run_ends(events)
    assert ends and len(ends) == len(only(events, RunStart))
    started = {start.call_id for start in only(events, ToolStart)}
    ended = {end.call_id for end in only(events, ToolEnd)}
    for end in ends:
        if end.cutoff:
            continue
        assert end.native is not None
        if end.ok:
            assert "response" in end.native and "error" not in end.native
            assert end.native["response"] == end.answer
            assert started <= ended, "every call of a whole run ends"


# Start-up time: nothing heavy at import.

def test_import_is_light():
    code = ("import sys, ndagent.formats.gemini; print(sorted(m for m in "
            "('hashlib', 'ndagent.frame', 'ndagent.formats.cursor') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_protocol_surface():
    assert gemini.NAME == "gemini"
    assert gemini.FORMAT.live_answer is False
    assert gemini.FORMAT.separator == "\n\n"
    reader = gemini.Reader("x", checks=False)
    assert reader.finish() == []
    assert reader.skipped(Skipped("x", 4))[0].line == 4
