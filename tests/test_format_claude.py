"""The Claude Code format module, at the level of the model: what it makes of each shape
of docs/formats.md#claude-code (the goldens, fixtures written here, the real captures when
they are beside the clone), detection, and that the markers never change what it makes."""

import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson
import pytest
from conftest import examples, model_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent.decoder import Event, iter_items
from ndagent.formats import _claude_stream, claude
from ndagent.formats._claude_calls import _says_denied
from ndagent.model import FORGOTTEN, Note, RunEnd, RunStart, Text, ToolEnd, ToolStart

GOLDEN = Path(__file__).parent / "golden"
# The cases of Claude's stream-json (json-output is the json form, which the frame
# refuses).
CLAUDE_GOLDEN = sorted(path for path in (GOLDEN / "claude").glob("*/input.ndjson")
                       if path.parent.name != "json-output")
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "claude"
SID = "9d3c4a1e-6f2b-4c8d-a7e5-0b1f2c3d4e5f"
MODEL = "claude-sonnet-4-5-20250929"


# Reading a stream the way the frame does.

def read(path, checks=False):
    """Every model event of an input, every line decoded."""
    return model_events(claude, path, checks)


def read_selected(path, needs):
    """The model events of an input read with the markers of ``needs``."""
    return model_events(claude, path, needs=needs)


def write(directory, lines):
    path = Path(directory) / "stream.ndjson"
    path.write_bytes(b"".join((line if type(line) is bytes else orjson.dumps(line)) + b"\n"
                              for line in lines))
    return path


@pytest.fixture
def stream(tmp_path):
    """The model events of a stream of these lines (objects, or raw bytes)."""

    def stream(*lines, checks=False):
        return read(write(tmp_path, lines), checks)

    return stream


def of(events, kind):
    return [event for event in events if event.__class__ is kind]


def outcomes(events):
    """Each run's outcome: ("ok", answer), ("failed", failure) or ("cutoff", answer)."""
    found = []
    for end in of(events, RunEnd):
        if end.cutoff:
            found.append(("cutoff", end.answer))
        else:
            found.append(("ok", end.answer) if end.ok else ("failed", end.failure))
    return found


def calls(events):
    """Tool starts and ends in order: ("start", kind, name, target) and
    ("end", kind, name, outcome)."""
    found = []
    for event in events:
        if event.__class__ is ToolStart:
            found.append(("start", event.kind, event.name, event.target))
        elif event.__class__ is ToolEnd:
            found.append(("end", event.kind, event.name, event.outcome))
    return found


def messages(events):
    """The Text of each message, joined, in order of first piece."""
    joined = {}
    for text in of(events, Text):
        joined[text.message] = joined.get(text.message, "") + text.text
    return list(joined.values())


def checks_of(events):
    return [(note.check, note.line) for note in of(events, Note)]


# Lines in the shapes of docs/formats.md#claude-events and
# docs/formats.md#claude-quirks-of-real-streams.

def init(**fields):
    return {"type": "system", "subtype": "init", "cwd": "/home/dev/app", "session_id": SID,
            "tools": ["Task", "Bash", "Read", "Edit", "Write"], "mcp_servers": [],
            "model": MODEL, "permissionMode": "default", "apiKeySource": "none",
            "claude_code_version": "2.1.120", "uuid": "0c1d2e3f-init", **fields}


def usage(output=2):
    return {"input_tokens": 4, "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 2000, "output_tokens": output}


def assistant(message_id, *blocks, parent=None, **fields):
    return {"type": "assistant",
            "message": {"model": MODEL, "id": message_id, "type": "message",
                        "role": "assistant", "content": list(blocks), "stop_reason": None,
                        "usage": usage()},
            "parent_tool_use_id": parent, "session_id": SID, "uuid": "a-" + message_id,
            **fields}


def text(words):
    return {"type": "text", "text": words}


def tool_use(call_id, name, **args):
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def user(*results, parent=None, **fields):
    return {"type": "user", "message": {"role": "user", "content": list(results)},
            "parent_tool_use_id": parent, "session_id": SID, "uuid": "u-1", **fields}


def tool_result(call_id, content, is_error=None):
    block = {"tool_use_id": call_id, "type": "tool_result", "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    return block


def result(answer="Done.", **fields):
    line = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 6240,
            "duration_api_ms": 5980, "num_turns": 2, "result": answer, "session_id": SID,
            "total_cost_usd": 0.0182,
            "usage": {"input_tokens": 8, "cache_creation_input_tokens": 2029,
                      "cache_read_input_tokens": 32151, "output_tokens": 61},
            "modelUsage": {MODEL: {"inputTokens": 8, "outputTokens": 61,
                                   "cacheReadInputTokens": 32151,
                                   "cacheCreationInputTokens": 2029, "costUSD": 0.0182}},
            "permission_denials": [], "uuid": "r-1"}
    line.update(fields)
    return {key: value for key, value in line.items() if value is not _ABSENT}


_ABSENT = object()


def partial(inner, parent=None):
    return {"type": "stream_event", "event": inner, "session_id": SID,
            "parent_tool_use_id": parent, "uuid": "s-1"}


def streamed(message_id, index, *pieces, parent=None):
    """The stream events of one text block that arrives as deltas (message_start when
    ``index`` is 0)."""
    lines = []
    if index == 0:
        lines.append(partial({"type": "message_start", "message": {
            "model": MODEL, "id": message_id, "type": "message", "role": "assistant",
            "content": [], "usage": usage(1)}}, parent))
    lines.append(partial({"type": "content_block_start", "index": index,
                          "content_block": {"type": "text", "text": ""}}, parent))
    lines += [partial({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": piece}}, parent)
              for piece in pieces]
    lines.append(partial({"type": "content_block_stop", "index": index}, parent))
    return lines


# The goldens: each shape, what the module makes of it.

EXPECTED = {
    "api-error": {
        # A run that ends on an API error failed (docs/formats.md#claude-runs).
        "runs": [("failed", 'API Error: 529 {"type":"error","error":{"type":"overloaded_error",'
                            '"message":"Overloaded"},"request_id":"req_011CWCJZXgjRrXYuX3i194"}')],
        "calls": [],
    },
    "bash-exit-code": {
        "runs": [("ok", "The linter fails on one error: `total` is unused in `src/cart.js` "
                        "line 12.")],
        "calls": [("start", "shell", "Bash", "npm run lint"),
                  ("end", "shell", "Bash", "failure")],
    },
    "cut-off-partial": {
        "runs": [("cutoff", "There are five recipes: two breads, two")],
        "calls": [("start", "glob", "Glob", "recipes/**/*.md"),
                  ("end", "glob", "Glob", "success")],
        "texts": ["Counting the recipes.", "There are five recipes: two breads, two"],
    },
    "denied-by-hook": {
        "runs": [("ok", "A hook blocked `rm -rf build/`, and writing `.env` was not allowed: "
                        "nothing changed.")],
        # What the tool_result says; the result's permission_denials come after.
        "calls": [("start", "shell", "Bash", "rm -rf build/"),
                  ("start", "write", "Write", "/home/dev/site/.env"),
                  ("end", "shell", "Bash", "error")],
    },
    "failed-max-turns": {
        "runs": [("failed", "error_max_turns")],
        "calls": [("start", "shell", "Bash", "ls migrations | tail -n 3"),
                  ("end", "shell", "Bash", "success"),
                  ("start", "read", "Read", "/srv/billing/migrations/0044_refunds.sql"),
                  ("end", "read", "Read", "error")],
    },
    "noise": {
        "runs": [("ok", "The entry point is `bin/cli.js`, which calls `run()` from "
                        "`src/main.js`.")],
        "calls": [],
    },
    "open-call-at-result": {
        "runs": [("ok", "There are 14 TODO comments under `src/`.")],
        "calls": [("start", "grep", "Grep", "TODO")],
    },
    "parallel-calls": {
        "runs": [("ok", "Two drafts are waiting (`rust-errors.md`, `zsh-tricks.md`), drafts "
                        "are not built, and there are 3 TODOs.")],
        "calls": [("start", "read", "Read", "/home/dev/blog/config.toml"),
                  ("start", "grep", "Grep", "TODO"),
                  ("start", "glob", "Glob", "content/drafts/*.md"),
                  ("end", "glob", "Glob", "success"),
                  ("end", "read", "Read", "success"),
                  ("end", "grep", "Grep", "success")],
    },
    "partial-messages": {
        "runs": [("ok", "`gs` is defined in `zsh/aliases.zsh` on line 14 as "
                        "`git status -sb`.")],
        "calls": [("start", "grep", "Grep", "alias gs"), ("end", "grep", "Grep", "success")],
        "texts": ["Looking for the alias.",
                  "`gs` is defined in `zsh/aliases.zsh` on line 14 as `git status -sb`."],
    },
    "permission-denied": {
        "runs": [("ok", "I could not write `scripts/export.sh` or run the export: both need "
                        "your permission.")],
        "calls": [("start", "write", "Write", "/home/dev/notes-app/scripts/export.sh"),
                  ("end", "write", "Write", "permissionDenied"),
                  ("start", "shell", "Bash", "sqlite3 notes.db .dump > export.sql"),
                  ("end", "shell", "Bash", "permissionDenied")],
    },
    "several-runs": {
        "runs": [("ok", "Yes: `requests` is pinned to 2.32.3 in `requirements.txt`."),
                 ("ok", "Bumped `requests` to 2.32.4.")],
        "calls": [("start", "grep", "Grep", "^requests"), ("end", "grep", "Grep", "success"),
                  ("start", "edit", "Edit", "/home/dev/weather/requirements.txt"),
                  ("end", "edit", "Edit", "success")],
    },
    "subagent": {
        "runs": [("ok", "Saving happens in `write_save` (`src/persist.rs`), which serialises "
                        "the state with bincode.")],
        "calls": [("start", "task", "Task", None),
                  ("start", "grep", "Grep", "save_game|write_save"),
                  ("end", "grep", "Grep", "success"),
                  ("start", "read", "Read", "/home/dev/game/src/persist.rs"),
                  ("end", "read", "Read", "success"),
                  ("end", "task", "Task", "success")],
        # The subagent's own text is no text piece.
        "texts": ["I'll have a subagent find the save code.",
                  "Saving happens in `write_save` (`src/persist.rs`), which serialises the "
                  "state with bincode."],
    },
    "success-tools": {
        "runs": [("ok", "Renamed `fmt_price` to `format_price` in `src/money.py`; all 12 tests "
                        "pass.")],
        "calls": [("start", "read", "Read", "/home/dev/inventory/src/money.py"),
                  ("end", "read", "Read", "success"),
                  ("start", "edit", "Edit", "/home/dev/inventory/src/money.py"),
                  ("end", "edit", "Edit", "success"),
                  ("start", "shell", "Bash", "python -m pytest -q"),
                  ("end", "shell", "Bash", "success")],
    },
}


def test_every_claude_golden_has_expectations():
    assert sorted(path.parent.name for path in CLAUDE_GOLDEN) == sorted(EXPECTED)


@pytest.mark.parametrize("path", CLAUDE_GOLDEN, ids=lambda path: path.parent.name)
def test_golden(path):
    expected = EXPECTED[path.parent.name]
    events = read(path)
    assert outcomes(events) == expected["runs"]
    assert calls(events) == expected["calls"]
    if "texts" in expected:
        assert messages(events) == expected["texts"]
    # Streams the CLI wrote whole: nothing for validate to report.
    assert of(read(path, checks=True), Note) == []


@pytest.mark.parametrize("path", CLAUDE_GOLDEN, ids=lambda path: path.parent.name)
def test_golden_runs_begin_and_end_where_the_stream_says(path):
    lines = [orjson.loads(line) if line.startswith(b"{") else None
             for line in path.read_bytes().splitlines()]
    events = read(path)
    starts, ends = of(events, RunStart), of(events, RunEnd)
    assert [end.start for end in ends] == starts
    for start in starts:
        assert lines[start.line - 1]["type"] == "system"
        assert lines[start.line - 1]["subtype"] == "init"
        assert (start.agent, start.session_id) == ("claude", lines[start.line - 1]["session_id"])
        assert (start.model, start.cwd) == (lines[start.line - 1]["model"],
                                           lines[start.line - 1]["cwd"])
    for end in ends:
        assert end.source == str(path)
        if end.cutoff:
            assert end.line == len(lines) and end.native is None and end.usage is None
        else:
            native = lines[end.line - 1]
            assert native["type"] == "result"
            # The result event as it is: same keys, same order, same values.
            assert end.native == native and list(end.native) == list(native)
            assert end.duration_ms == native["duration_ms"]
            assert end.cost_usd == native["total_cost_usd"]
            assert end.model == end.start.model


def test_a_result_whose_keys_are_not_type_first_ends_its_run():
    path = GOLDEN / "claude" / "failed-max-turns" / "input.ndjson"
    last = path.read_bytes().splitlines()[-1]
    assert last.startswith(b'{"is_error":true')
    (end,) = of(read(path), RunEnd)
    assert list(end.native)[:3] == ["is_error", "duration_api_ms", "num_turns"]
    assert (end.ok, end.failure, end.answer, end.line) == (False, "error_max_turns", None, 6)
    assert end.usage == {"input": 8, "cacheRead": 18720, "cacheWrite": 18980, "output": 77}


def test_usage_is_every_model_s_from_model_usage():
    (end,) = of(read(GOLDEN / "claude" / "subagent" / "input.ndjson"), RunEnd)
    # haiku (the subagent) and sonnet, where the result's usage has sonnet's only.
    assert end.usage == {"input": 21 + 10, "cacheRead": 3100 + 27828,
                         "cacheWrite": 1860 + 3842, "output": 96 + 140}
    assert end.native["usage"]["input_tokens"] == 10


def test_usage_is_the_result_s_when_model_usage_is_empty_or_absent(stream):
    (end,) = of(read(GOLDEN / "claude" / "api-error" / "input.ndjson"), RunEnd)
    assert end.native["modelUsage"] == {}
    assert end.usage == {"input": 0, "cacheRead": 0, "cacheWrite": 0, "output": 0}
    (end,) = of(stream(init(), assistant("msg_1", text("Done.")),
                       result(modelUsage=_ABSENT, total_cost_usd=_ABSENT, cost_usd=0.5)),
                RunEnd)
    assert end.usage == {"input": 8, "cacheRead": 32151, "cacheWrite": 2029, "output": 61}
    assert end.cost_usd == 0.5


def test_usage_is_never_summed_over_lines(stream):
    """Each line of a message repeats its usage; only the result's counts."""
    events = stream(init(), assistant("msg_1", text("One")), assistant("msg_1", text(" two")),
                    assistant("msg_1", tool_use("toolu_1", "Read", file_path="/a")),
                    user(tool_result("toolu_1", "x")), assistant("msg_2", text("Done.")),
                    result())
    (end,) = of(events, RunEnd)
    assert end.usage == {"input": 8, "cacheRead": 32151, "cacheWrite": 2029, "output": 61}


def test_a_figure_that_is_no_number_is_none(stream):
    (end,) = of(stream(init(), result(modelUsage={MODEL: {
        "inputTokens": "8", "outputTokens": 1, "cacheReadInputTokens": 0}})), RunEnd)
    assert end.usage == {"input": None, "cacheRead": 0, "cacheWrite": 0, "output": 1}


# Runs: success, failure, cut off, several.

def test_success_with_a_tool_call(stream):
    events = stream(init(), assistant("msg_1", text("I'll count the lines.")),
                    assistant("msg_1", tool_use("toolu_1", "Bash", command="wc -l cart.py",
                                                description="Count")),
                    user(tool_result("toolu_1", "212 cart.py", False)),
                    assistant("msg_2", text("`cart.py` has 212 lines.")),
                    result("`cart.py` has 212 lines."))
    assert [event.__class__ for event in events] == [
        RunStart, Text, ToolStart, ToolEnd, Text, RunEnd]
    start, end = events[2], events[3]
    assert (start.call_id, start.kind, start.name, start.target, start.model_call_id,
            start.parent, start.session_id, start.line) == (
        "toolu_1", "shell", "Bash", "wc -l cart.py", "msg_1", None, SID, 3)
    assert start.args == {"command": "wc -l cart.py", "description": "Count"}
    assert (end.call_id, end.kind, end.outcome, end.result, end.line) == (
        "toolu_1", "shell", "success", {"content": "212 cart.py"}, 4)
    assert outcomes(events) == [("ok", "`cart.py` has 212 lines.")]
    assert [(text.message, text.text) for text in of(events, Text)] == [
        ("msg_1", "I'll count the lines."), ("msg_2", "`cart.py` has 212 lines.")]


def test_the_answer_is_the_result_s_text_not_the_texts_joined(stream):
    events = stream(init(), assistant("msg_1", text("First.")),
                    assistant("msg_2", text("Second.")), result("Second."), checks=True)
    assert outcomes(events) == [("ok", "Second.")]
    assert checks_of(events) == []


def test_parallel_calls_end_in_completion_order(stream):
    events = stream(init(), assistant("msg_1", tool_use("toolu_a", "Read", file_path="/a")),
                    assistant("msg_1", tool_use("toolu_b", "Grep", pattern="TODO")),
                    assistant("msg_1", tool_use("toolu_c", "Glob", pattern="*.md")),
                    user(tool_result("toolu_c", "x.md")), user(tool_result("toolu_a", "a")),
                    user(tool_result("toolu_b", "1")), result())
    assert [(event.__class__.__name__, event.call_id, event.kind) for event in events
            if event.__class__ in (ToolStart, ToolEnd)] == [
        ("ToolStart", "toolu_a", "read"), ("ToolStart", "toolu_b", "grep"),
        ("ToolStart", "toolu_c", "glob"), ("ToolEnd", "toolu_c", "glob"),
        ("ToolEnd", "toolu_a", "read"), ("ToolEnd", "toolu_b", "grep")]


@pytest.mark.parametrize(("fields", "failure"), [
    # API failures come as success with is_error true: the subtype is not the outcome.
    ({"is_error": True, "result": "API Error: 529 Overloaded", "errors": [],
      "api_error_status": 529}, "API Error: 529 Overloaded"),
    ({"is_error": True, "errors": ["first", "", "second"], "result": "text"},
     "first; second"),
    ({"is_error": True, "subtype": "error_max_turns", "result": _ABSENT}, "error_max_turns"),
    ({"is_error": True, "subtype": "error_during_execution", "result": "  "},
     "error_during_execution"),
    ({"is_error": True, "result": _ABSENT, "api_error_status": 401}, "API error (HTTP 401)"),
    ({"is_error": True, "result": _ABSENT}, "the result reports is_error"),
    ({"terminal_reason": "aborted_streaming", "result": ""}, "aborted_streaming"),
    ({"is_error": _ABSENT, "subtype": "error_max_budget_usd", "result": _ABSENT},
     "error_max_budget_usd"),
])
def test_a_failed_run_and_its_failure_text(stream, fields, failure):
    events = stream(init(), assistant("msg_1", text("Working.")), result(**fields),
                    checks=True)
    (end,) = of(events, RunEnd)
    assert (end.cutoff, end.ok, end.failure, end.answer) == (False, False, failure, None)
    # Failed runs keep their figures, and the result for json.
    assert end.native["type"] == "result" and end.usage["output"] == 61
    assert end.cost_usd == 0.0182 and end.duration_ms == 6240
    # The answer check is skipped for a failed run.
    assert "answer" not in [check for check, _ in checks_of(events)]


def test_a_failed_local_command_fails_the_run_that_reports_success(stream):
    failed = {"type": "assistant", "message": {
        "model": "<synthetic>", "id": "4f0e7b2a-local", "type": "message", "role": "assistant",
        "content": [text("Error: not enough messages to compact.")], "usage": usage(0)},
        "parent_tool_use_id": None, "session_id": SID, "uuid": "a-local",
        "local_command_outcome": {"kind": "failed"}}
    events = stream(init(), failed, result(""))
    assert outcomes(events) == [("failed", "Error: not enough messages to compact.")]


def test_is_error_false_with_an_error_subtype_is_ok(stream):
    """is_error decides (docs/formats.md#claude-runs), not the subtype."""
    events = stream(init(), result(subtype="error_during_execution", result=_ABSENT))
    (end,) = of(events, RunEnd)
    assert (end.ok, end.failure, end.answer) == (True, None, None)


def test_a_run_cut_off_by_the_end_of_input(stream):
    events = stream(init(), assistant("msg_1", text("Let me run the build.")),
                    assistant("msg_1", tool_use("toolu_1", "Bash", command="make")))
    assert outcomes(events) == [("cutoff", "Let me run the build.")]
    (end,) = of(events, RunEnd)
    assert (end.ok, end.failure, end.native, end.usage, end.cost_usd, end.duration_ms,
            end.line, end.model) == (False, None, None, None, None, None, 3, MODEL)
    assert calls(events) == [("start", "shell", "Bash", "make")]


def test_a_cut_off_run_s_answer_is_its_last_message_s_text(stream):
    assert outcomes(stream(init(), assistant("msg_1", text("Interim.")),
                           assistant("msg_2", text("Final, half")))) == [
        ("cutoff", "Final, half")]
    assert outcomes(stream(init(), *streamed("msg_1", 0, "The three largest",
                                             " notes are"))) == [
        ("cutoff", "The three largest notes are")]
    # No main-thread message at all: no answer.
    assert outcomes(stream(init(), assistant("msg_9", text("sub"), parent="toolu_1"))) == [
        ("cutoff", None)]


def test_a_run_cut_off_by_the_next_init(stream):
    events = stream(init(), assistant("msg_1", text("Half")), init(session_id="other"),
                    assistant("msg_2", text("Whole.")), result("Whole."))
    assert outcomes(events) == [("cutoff", "Half"), ("ok", "Whole.")]
    first, second = of(events, RunEnd)
    assert (first.line, first.start.line, second.start.line) == (2, 1, 3)
    assert [event.__class__ for event in events] == [
        RunStart, Text, RunEnd, RunStart, Text, RunEnd]
    assert of(events, RunStart)[1].session_id == "other"


def test_several_runs_with_hook_lines_before_init(stream):
    hook = {"type": "system", "subtype": "hook_started", "hook_id": "h", "hook_name":
            "SessionStart:startup", "hook_event": "SessionStart", "uuid": "h1",
            "session_id": SID}
    response = {**hook, "subtype": "hook_response", "exit_code": 0, "outcome": "success"}
    events = stream(hook, response, init(), assistant("msg_1", text("One.")),
                    result("One.", result_index=0), hook, init(),
                    assistant("msg_2", text("Two.")), result("Two.", result_index=1),
                    checks=True)
    assert [(start.line, end.line) for start, end in
            zip(of(events, RunStart), of(events, RunEnd))] == [(3, 5), (7, 9)]
    assert outcomes(events) == [("ok", "One."), ("ok", "Two.")]
    assert [end.native["result_index"] for end in of(events, RunEnd)] == [0, 1]
    assert checks_of(events) == []


def test_a_run_without_init_begins_at_the_first_event_after_a_result(stream):
    events = stream(init(), result("One."),
                    {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"},
                     "uuid": "x", "session_id": SID},
                    {"type": "system", "subtype": "status", "status": "compacting",
                     "session_id": SID, "uuid": "y"},
                    user(tool_result("toolu_1", "late")),
                    assistant("msg_2", text("Two.")), result("Two."), checks=True)
    assert [start.line for start in of(events, RunStart)] == [1, 5]
    assert of(events, RunStart)[1].session_id is None
    assert checks_of(events) == [("init", 5)]
    assert outcomes(events) == [("ok", "One."), ("ok", "Two.")]


def test_a_result_alone_is_a_run(stream):
    """``--output-format json`` prints just the result."""
    events = stream(result("4"), checks=True)
    assert [event.__class__ for event in events] == [RunStart, Note, RunEnd]
    assert outcomes(events) == [("ok", "4")]
    assert checks_of(events) == [("init", 1)]


def test_noise_lines_are_not_events(stream):
    events = stream(b"(node:48213) [DEP0040] DeprecationWarning: punycode", b"",
                    init(), assistant("msg_1", text("Yes.")), result("Yes."))
    assert of(events, RunStart)[0].line == 3
    assert outcomes(events) == [("ok", "Yes.")]


def test_unknown_events_and_blocks_are_passed_over(stream):
    events = stream(init(), {"type": "future_event", "data": 1, "session_id": SID},
                    assistant("msg_1", {"type": "thinking", "thinking": "", "signature": "s"},
                              {"type": "redacted_thinking", "data": "x"}, "not a block"),
                    {"type": "assistant", "message": "no object"},
                    {"type": "user", "message": {"role": "user", "content": "a prompt"},
                     "isReplay": True, "session_id": SID},
                    assistant("msg_2", text("Done.")), result(), checks=True)
    assert outcomes(events) == [("ok", "Done.")]
    assert of(events, Text)[0].text == "Done." and calls(events) == []
    assert checks_of(events) == []


# Text: main thread only, each piece once.

def test_partial_messages_give_each_piece_once(stream):
    events = stream(init(), *streamed("msg_1", 0, "Looking", " for it."),
                    assistant("msg_1", text("Looking for it.")),
                    partial({"type": "content_block_start", "index": 1,
                             "content_block": {"type": "tool_use", "id": "toolu_1",
                                               "name": "Grep", "input": {}}}),
                    partial({"type": "content_block_delta", "index": 1, "delta": {
                        "type": "input_json_delta", "partial_json": '{"pattern": "x"}'}}),
                    assistant("msg_1", tool_use("toolu_1", "Grep", pattern="x")),
                    user(tool_result("toolu_1", "a:1")),
                    *streamed("msg_2", 0, "Found", " it."),
                    assistant("msg_2", text("Found it.")), result("Found it."), checks=True)
    assert [(text.message, text.text) for text in of(events, Text)] == [
        ("msg_1", "Looking"), ("msg_1", " for it."), ("msg_2", "Found"), ("msg_2", " it.")]
    # The call starts from the assistant line only, with its whole input.
    (start,) = of(events, ToolStart)
    assert (start.args, start.line) == ({"pattern": "x"}, 10)
    assert outcomes(events) == [("ok", "Found it.")]
    assert checks_of(events) == []


def test_thinking_and_tool_input_deltas_are_no_text(stream):
    events = stream(init(), partial({"type": "message_start", "message": {"id": "msg_1"}}),
                    partial({"type": "content_block_delta", "index": 0, "delta": {
                        "type": "thinking_delta", "thinking": "Hmm."}}),
                    partial({"type": "content_block_delta", "index": 1, "delta": {
                        "type": "input_json_delta", "partial_json": "{"}}),
                    partial({"type": "content_block_delta", "index": 2, "delta": {
                        "type": "signature_delta", "signature": "abc"}}))
    assert of(events, Text) == []


def test_a_message_whose_deltas_were_lost_counts_whole(stream):
    """A run mixing both: the second message came with no deltas."""
    events = stream(init(), *streamed("msg_1", 0, "A", "B"), assistant("msg_1", text("AB")),
                    assistant("msg_2", text("Whole.")), result("Whole."))
    assert messages(events) == ["AB", "Whole."]
    # Its message_start came, its deltas did not.
    events = stream(init(), streamed("msg_1", 0, "lost")[0],
                    assistant("msg_1", text("Whole.")), result("Whole."), checks=True)
    assert messages(events) == ["Whole."] and checks_of(events) == []


def test_deltas_that_differ_from_their_block_are_reported(stream):
    events = stream(init(), *streamed("msg_1", 0, "Hel", "lo"),
                    assistant("msg_1", text("Hello!")), result("Hello!"), checks=True)
    assert messages(events) == ["Hello"]  # what was printed live stays printed once
    assert checks_of(events) == [("deltas", 7), ("answer", 8)]


def test_deltas_whose_block_start_was_not_seen_still_count_once(stream):
    delta = partial({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": "Hi."}})
    events = stream(init(), delta, assistant("msg_1", text("Hi.")), result("Hi."),
                    checks=True)
    assert messages(events) == ["Hi."]
    assert checks_of(events) == []


def test_subagent_lines_give_no_text_but_their_calls(stream):
    events = stream(init(), assistant("msg_1", tool_use("toolu_task", "Task",
                                                        description="Find", prompt="Find")),
                    user(text("Find"), parent="toolu_task"),
                    *streamed("msg_sub", 0, "Looking.", parent="toolu_task"),
                    assistant("msg_sub", text("Looking."), parent="toolu_task"),
                    assistant("msg_sub", tool_use("toolu_sub", "Bash", command="ls"),
                              parent="toolu_task"),
                    user(tool_result("toolu_sub", "Exit code 2\nls: x", True),
                         parent="toolu_task"),
                    user(tool_result("toolu_task", [text("Nothing found.")])),
                    assistant("msg_2", text("Nothing.")), result("Nothing."), checks=True)
    assert messages(events) == ["Nothing."]
    assert [(event.call_id, event.parent) for event in events
            if event.__class__ in (ToolStart, ToolEnd)] == [
        ("toolu_task", None), ("toolu_sub", "toolu_task"), ("toolu_sub", "toolu_task"),
        ("toolu_task", None)]
    assert calls(events)[2] == ("end", "shell", "Bash", "failure")
    assert of(events, ToolEnd)[1].result == {"content": [text("Nothing found.")]}
    assert checks_of(events) == []


def test_a_line_without_parent_field_is_main_thread(stream):
    line = assistant("msg_1", text("Old."))
    del line["parent_tool_use_id"]
    assert messages(stream(init(), line, result("Old."))) == ["Old."]


# Tool calls: kinds, names, targets, outcomes.

@pytest.mark.parametrize(("name", "args", "kind", "target"), [
    ("Bash", {"command": "ls"}, "shell", "ls"),
    ("Read", {"file_path": "/a"}, "read", "/a"),
    ("NotebookRead", {"notebook_path": "/n.ipynb"}, "read", "/n.ipynb"),
    ("Write", {"file_path": "/w", "content": "x"}, "write", "/w"),
    ("Edit", {"file_path": "/e"}, "edit", "/e"),
    ("MultiEdit", {"file_path": "/m"}, "edit", "/m"),
    ("NotebookEdit", {"notebook_path": "/n.ipynb"}, "edit", "/n.ipynb"),
    ("Glob", {"pattern": "*.py"}, "glob", "*.py"),
    ("Grep", {"pattern": "TODO", "path": "/src"}, "grep", "TODO"),
    ("LS", {"path": "/src"}, "ls", None),
    ("WebFetch", {"url": "https://example.org", "prompt": "p"}, "webFetch",
     "https://example.org"),
    ("WebSearch", {"query": "orjson"}, "webSearch", "orjson"),
    ("TodoWrite", {"todos": []}, "updateTodos", None),
    ("TaskCreate", {"subject": "s"}, "updateTodos", None),
    ("TaskUpdate", {"taskId": "1"}, "updateTodos", None),
    ("Task", {"description": "d", "prompt": "p"}, "task", None),
    ("Agent", {"description": "d", "prompt": "p"}, "task", None),
    ("mcp__github__create_issue", {"title": "t"}, "mcp", "mcp__github__create_issue"),
    ("BashOutput", {"bash_id": "b"}, "BashOutput", None),
    ("ExitPlanMode", {"plan": "p"}, "ExitPlanMode", None),
])
def test_tool_kinds_and_targets(stream, name, args, kind, target):
    events = stream(init(), assistant("msg_1", tool_use("toolu_1", name, **args)),
                    user(tool_result("toolu_1", "ok")), result())
    start, end = of(events, ToolStart)[0], of(events, ToolEnd)[0]
    assert (start.kind, start.name, start.target, start.args) == (kind, name, target, args)
    assert (end.kind, end.name, end.outcome) == (kind, name, "success")


@pytest.mark.parametrize(("name", "content", "is_error", "outcome"), [
    ("Bash", "ok", None, "success"),
    ("Bash", "ok", False, "success"),
    ("Bash", "Exit code 1\nboom", True, "failure"),
    ("Bash", [text("Exit code 2\nboom")], True, "failure"),
    ("Read", "Exit code 1", True, "error"),  # failure is a command that ran
    ("Read", "<tool_use_error>File does not exist.</tool_use_error>", True, "error"),
    ("Read", "EISDIR: illegal operation on a directory, read", True, "error"),
    ("Bash", "Claude requested permissions to use Bash, but you haven't granted it yet.",
     True, "permissionDenied"),
    ("Write", "Claude requested permissions to write to /a, but you haven't granted it yet.",
     True, "permissionDenied"),
    ("Bash", "Permission to use Bash with command rm -rf / has been denied.", True,
     "permissionDenied"),
    ("Bash", "This command requires approval", True, "permissionDenied"),
    ("Edit", "The user doesn't want to proceed with this tool use. The tool use was "
             "rejected.", True, "rejected"),
    ("Bash", None, True, "error"),
])
def test_tool_outcomes(stream, name, content, is_error, outcome):
    events = stream(init(), assistant("msg_1", tool_use("toolu_1", name, command="x")),
                    user(tool_result("toolu_1", content, is_error)), result())
    assert of(events, ToolEnd)[0].outcome == outcome


def test_a_tool_s_structured_output_is_part_of_its_result(stream):
    events = stream(init(), assistant("msg_1", tool_use("toolu_1", "Read", file_path="/a")),
                    user(tool_result("toolu_1", "1→x"),
                         tool_use_result={"type": "text", "file": {"filePath": "/a"}}),
                    assistant("msg_1", tool_use("toolu_2", "Read", file_path="/b"),
                              tool_use("toolu_3", "Read", file_path="/c")),
                    user(tool_result("toolu_2", "b"), tool_result("toolu_3", "c"),
                         tool_use_result={"which": "?"}), result())
    first, second, third = of(events, ToolEnd)
    assert first.result == {"content": "1→x",
                            "tool_use_result": {"type": "text", "file": {"filePath": "/a"}}}
    # Two results on one line: whose the structured output is, is not known.
    assert (second.result, third.result) == ({"content": "b"}, {"content": "c"})


def test_times_come_from_the_lines_timestamps(stream):
    events = stream(init(), assistant("msg_1", tool_use("toolu_1", "Bash", command="x"),
                                      timestamp="2026-06-02T09:14:07.512Z"),
                    user(tool_result("toolu_1", "ok"), timestamp="2026-06-02T11:14:07.640+02:00"),
                    result())
    start, end = of(events, ToolStart)[0], of(events, ToolEnd)[0]
    assert start.time_ms == 1_780_391_647_512
    assert end.time_ms - start.time_ms == 128
    assert of(stream(init(), assistant("msg_1", tool_use("toolu_1", "Bash", command="x"),
                                       timestamp="yesterday")), ToolStart)[0].time_ms is None


@pytest.mark.parametrize("stamp", ["2026-06-02T09:14:07Z", "2026-06-02T09:14:07.5Z",
                                   "2026-06-02T09:14:07.123456789Z", "2026-06-02 09:14:07",
                                   "2026-06-02T10:14:07+0100", "2026-06-02T07:14:07-02:00"])
def test_timestamp_spellings(stamp):
    from datetime import datetime, timezone

    whole = int(datetime(2026, 6, 2, 9, 14, 7, tzinfo=timezone.utc).timestamp()) * 1000
    assert claude._epoch_ms(stamp) - whole in (0, 500, 123)


@pytest.mark.parametrize("stamp", ["2026-13-02T09:14:07Z", "2026-06-02T25:00:00Z",
                                   "2026-06-02", "", "2026-06-02T09:14:07Zjunk"])
def test_timestamps_that_are_not_times(stamp):
    assert claude._epoch_ms(stamp) is None


def test_server_tools_start_and_end_in_the_assistant_message(stream):
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
              "input": {"query": "orjson release"}}
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
             "content": [{"type": "web_search_result", "url": "https://example.org"}]}
    failed = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2",
              "content": {"type": "web_search_tool_result_error", "error_code": "max_uses"}}
    events = stream(init(), assistant("msg_1", search), assistant("msg_1", found),
                    assistant("msg_1", {**search, "id": "srvtoolu_2"}),
                    assistant("msg_1", failed), result())
    assert calls(events) == [("start", "webSearch", "web_search", "orjson release"),
                             ("end", "webSearch", "web_search", "success"),
                             ("start", "webSearch", "web_search", "orjson release"),
                             ("end", "webSearch", "web_search", "error")]


def test_an_end_with_no_start_is_handed_on(stream):
    """The frame reports it (a generic check): the module hands it on as it is."""
    events = stream(init(), user(tool_result("toolu_x", "?", True)), result(), checks=True)
    (end,) = of(events, ToolEnd)
    assert (end.call_id, end.kind, end.name, end.outcome) == ("toolu_x", None, None, "error")
    assert checks_of(events) == []


def test_odd_tool_blocks(stream):
    events = stream(init(), assistant("msg_1", {"type": "tool_use", "input": "raw"},
                                      {"type": "tool_use", "id": ["x"], "name": 7}),
                    user({"type": "tool_result", "tool_use_id": {"a": 1}, "content": 5}),
                    result())
    assert [(event.call_id, event.kind, event.name, event.target) for event in
            of(events, ToolStart)] == [(None, "function", None, None),
                                       (None, "function", None, None)]
    assert of(events, ToolEnd)[0].call_id is None


# The format's checks (validate).

def test_a_session_that_changes_in_a_run(stream):
    first, second = assistant("msg_2", text("One.")), assistant("msg_3", text("Two."))
    first["session_id"] = second["session_id"] = "e\x1b[31mvil"
    events = stream(init(), assistant("msg_1", text("Zero.")), first, second,
                    result("Two."), checks=True)
    (note,) = of(events, Note)  # once a run
    assert (note.check, note.line) == ("session", 3)
    assert "\\x1b[31m" in note.message and "\x1b" not in note.message


def test_result_fields(stream):
    bad = result(duration_ms=_ABSENT, num_turns="2", session_id=_ABSENT, result=_ABSENT,
                 is_error=False)
    events = stream(init(), assistant("msg_1", text("x")), bad, checks=True)
    (note,) = of(events, Note)
    assert note.check == "fields" and note.line == 3
    for said in ('"duration_ms"', '"num_turns"', '"session_id"', '"result"'):
        assert said in note.message
    assert of(events, RunEnd)[0].answer is None
    assert checks_of(stream(init(), result(is_error="no"), checks=True)) == [("fields", 2)]


def test_result_index_grows_by_one(stream):
    events = stream(init(), result("a", result_index=0), init(), result("b", result_index=2),
                    init(), result("c", result_index=3), checks=True)
    assert checks_of(events) == [("result-index", 4)]
    # Another session's results (another process, appended) begin their count again.
    other = "6f1d0c2e-0000-4000-8000-00000000abcd"
    events = stream(init(), result("a", result_index=0), init(), result("b", result_index=1),
                    init(session_id=other), result("c", result_index=0, session_id=other),
                    checks=True)
    assert checks_of(events) == []


def test_the_answer_check(stream):
    events = stream(init(), assistant("msg_1", text("Said.")), result("Not said."),
                    checks=True)
    (note,) = of(events, Note)
    assert (note.check, note.line) == ("answer", 3)
    assert "9 characters" in note.message and "5 characters" in note.message
    # Two text blocks of the last message are joined with nothing.
    assert checks_of(stream(init(), assistant("msg_1", text("A")), assistant("msg_1", text("B")),
                            result("AB"), checks=True)) == []


def test_api_retries_are_warnings(stream):
    retry = {"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10,
             "retry_delay_ms": 500, "error_status": 529, "error": "overloaded\x07",
             "session_id": SID, "uuid": "x"}
    events = stream(retry, init(), retry, assistant("msg_1", text("Ok.")), result("Ok."),
                    checks=True)
    assert checks_of(events) == [("api-retry", 1), ("api-retry", 3)]
    assert of(events, Note)[0].message == (
        'the CLI retried a request to the API (attempt 1 of 10): "overloaded\\x07"')


def test_notes_only_with_checks(stream):
    lines = (result("x", result_index=5), result("y", result_index=9))
    assert of(stream(*lines), Note) == []
    assert len(of(stream(*lines, checks=True), Note)) == 3


def test_the_checks_table():
    assert claude.CHECKS
    for severity, meaning in claude.CHECKS.values():
        assert severity in ("error", "warning")
        assert meaning and "\n" not in meaning


def test_every_note_names_a_check_of_the_table(stream):
    events = stream(result(result_index=3, num_turns=_ABSENT),
                    assistant("msg_1", text("x")),
                    {"type": "system", "subtype": "api_retry", "session_id": "x"},
                    *streamed("msg_2", 0, "a"),
                    assistant("msg_2", text("b")), result("c", result_index=7), checks=True)
    assert {note.check for note in of(events, Note)} == {
        "init", "fields", "result-index", "api-retry", "session", "deltas", "answer"}
    assert {note.check for note in of(events, Note)} <= set(claude.CHECKS)


def test_the_protocol_constants():
    found = claude.FORMAT
    assert (found.name, found.live_answer, found.separator) == ("claude", False, "\n\n")
    assert claude.FORMAT.refuses is None  # Qwen Code's and Amp's streams are read


def test_importing_the_module_loads_little():
    """The layers below the format and nothing else of ndagent: no other agent's
    format, no frame, no verb."""
    code = ("import sys; import ndagent.formats.claude; "
            "print(sorted(m for m in sys.modules if m.startswith('ndagent')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout
    assert eval(loaded) == ["ndagent", "ndagent.decoder", "ndagent.formats",
                            "ndagent.formats._claude_calls",
                            "ndagent.formats._claude_detect",
                            "ndagent.formats._claude_messages",
                            "ndagent.formats._claude_stream",
                            "ndagent.formats._claude_usage", "ndagent.formats.base",
                            "ndagent.formats.claude", "ndagent.jsonvalues", "ndagent.model",
                            "ndagent.selection",
                            "ndagent.sources", "ndagent.terminal"]


# Memory stays bounded whatever the stream.

def _traced_peak(feed):
    import tracemalloc

    tracemalloc.start()
    try:
        feed()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_calls_never_ended_are_tracked_in_bounded_memory(monkeypatch):
    """Issue 25 (M5): calls never ended, with ids and names of 20 KB: what is kept of
    them stays within READER_CALL_BYTES, whatever their number, with one note."""
    monkeypatch.setattr(_claude_stream, "READER_CALL_BYTES", 2 << 20)
    line = assistant("msg_1", tool_use("toolu_0", "Bash", command="true"))
    notes = []

    def feed(count):
        reader = claude.Reader("s", False)
        reader.event(Event("s", 1, init()))

        def run():
            for number in range(count):
                block = line["message"]["content"][0]
                block["id"] = f"toolu_{number:08d}" + "i" * 20_000
                block["name"] = f"{number}" + "n" * 20_000
                notes.extend(event for event in reader.event(Event("s", number + 2, line))
                             if isinstance(event, Note))
        return _traced_peak(run)

    assert feed(1000) < 4 << 20
    assert [note.check for note in notes] == [FORGOTTEN]


def test_a_long_message_of_deltas_is_kept_as_its_text():
    reader = claude.Reader("s", True)
    reader.event(Event("s", 1, init()))
    for line in streamed("msg_1", 0, "x"):
        reader.event(Event("s", 2, line))
    delta = streamed("msg_1", 1, "y")[1]

    def run():
        for number in range(200_000):
            reader.event(Event("s", number + 3, delta))

    # 200,000 one-character pieces: their text, not 200,000 string objects.
    assert _traced_peak(run) < 2 << 20
    assert reader.run.answer() == "x" + "y" * 200_000


def test_blocks_streamed_and_never_followed_are_bounded():
    reader = claude.Reader("s", True)
    reader.event(Event("s", 1, init()))
    for index in range(3 * claude.MAX_TRACKED):
        reader.event(Event("s", 2, partial({
            "type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""}})))
    assert len(reader.run.streamed) == len(reader.run.unchecked) == claude.MAX_TRACKED


# Detection.

def _objects(paths):
    for path in paths:
        for item in iter_items([str(path)]):
            if item.__class__ is Event:
                yield path, item.data


def _other_agents_inputs():
    found = [path for path in sorted(GOLDEN.glob("*/*/input.ndjson"))
             if path.parts[-3] != "claude"]
    found += sorted((Path(__file__).parent / "fixtures").glob("*.ndjson"))
    corpus = CORPUS.parent
    found += sorted((corpus / "real").glob("*.jsonl")) + sorted((corpus / "codex").glob("*"))
    return found


def test_every_claude_input_is_told_and_every_line_is_in_its_envelope():
    """Each Claude input has a line that tells it from Qwen Code's and Amp's, and every
    line is Claude's or in the envelope the three share (never one of theirs)."""
    from ndagent.formats import _claude_detect

    paths = CLAUDE_GOLDEN + sorted(CORPUS.glob("*.ndjson"))
    told = set()
    for path, data in _objects(paths):
        if claude.decides(data):
            told.add(path)
        else:
            assert _claude_detect.claude_family(data), (path, data.get("type"))
        assert not (_claude_detect.qwen_decides(data) or _claude_detect.amp_decides(data))
    assert told == set(paths)


def test_no_other_agent_s_line_is_decisive():
    paths = _other_agents_inputs()
    assert len(paths) >= 30
    for path, data in _objects(paths):
        assert not claude.decides(data), (path, data)


@pytest.mark.parametrize(("data", "decisive"), [
    ({"type": "system", "subtype": "init", "tools": []}, True),
    ({"type": "system", "subtype": "init", "claude_code_version": "2.0.25"}, True),
    ({"type": "system", "subtype": "init", "session_id": "s", "model": "m"}, False),  # Cursor
    ({"type": "system", "subtype": "init", "tools": [], "qwen_code_version": "0.16.2"}, False),
    ({"type": "system", "subtype": "init", "tools": [], "session_id": "T-019f"}, False),  # Amp
    ({"type": "system", "subtype": "hook_started"}, False),  # any of the three
    ({"type": "system"}, False),
    ({"type": "stream_event"}, False),
    ({"type": "stream_event", "event": {"type": "message_start",
                                        "message": {"id": "msg_1", "usage": {}}}}, True),
    ({"type": "stream_event", "event": {"type": "message_start", "message": {"id": "m"}}},
     False),  # Qwen Code
    ({"type": "rate_limit_event"}, True),
    ({"type": "conversation_reset"}, True),
    ({"num_turns": 1, "type": "result"}, False),
    ({"type": "result", "total_cost_usd": 0}, False),  # older Qwen Code writes it too
    ({"type": "result", "total_cost_usd": 0.0125}, True),
    ({"type": "result", "modelUsage": {}}, True),
    ({"type": "result", "modelUsage": {}, "session_id": "T-1"}, False),
    ({"type": "result", "duration_ms": 1, "is_error": False}, False),  # Cursor
    ({"type": "result", "status": "success"}, False),  # Gemini
    ({"type": "assistant", "uuid": "u", "message": {}}, False),
    ({"type": "assistant", "message": {"id": "msg_1", "content": []}}, True),
    ({"type": "assistant", "uuid": "u", "message": {"id": "m", "content": []}}, True),
    ({"type": "assistant", "uuid": "m", "message": {"id": "m", "content": []}}, False),  # Qwen
    ({"type": "assistant", "uuid": "msg_1", "message": {"id": "msg_1"}}, False),  # Qwen's rule
    ({"type": "user", "message": {"content": [{"type": "tool_result"}]}}, False),
    ({"type": "user", "message": {"content": []}, "timestamp": "2026-06-02T09:14:07Z"}, True),
    ({"type": "user", "message": {"content": []}, "tool_use_result": {}}, True),
    ({"type": "user", "message": {"role": "user", "content": [{"type": "text"}]}}, False),
    ({"type": "assistant", "message": "text"}, False),
    ({"type": "thread.started"}, False),
    ({"type": "init", "session_id": "s"}, False),
    ({"msg": {"type": "x"}, "id": "0"}, False),
])
def test_decides(data, decisive):
    assert claude.decides(data) is decisive


# The markers: the lines they select make the same events as all lines.

NEEDS = [frozenset(needs) for needs in ((), ("text",), ("tools",), ("tool_ends",),
                                        ("ends",), ("text", "tools"), ("text", "ends"),
                                        ("tools", "ends"), ("text", "tools", "ends"),
                                        ("native",), ("tools", "native"))]


def _project(events, needs):
    """What the events tell that ``needs`` asks for (runs always), and the lines where
    cut-off runs were last seen (compared apart: see ``_same``)."""
    kept, cut_lines = [], []
    for event in events:
        kind = event.__class__
        if kind is RunStart:
            kept.append(("start", *(getattr(event, name) for name in event.__slots__)))
        elif kind is RunEnd:
            fields = [event.start.line, event.cutoff, event.ok, event.failure, event.source]
            if event.cutoff:
                cut_lines.append(event.line)
            else:
                fields.append(event.line)
            if "ends" in needs:
                fields += [event.answer, event.native, event.usage, event.cost_usd,
                           event.duration_ms, event.model]
            elif "native" in needs:  # all but the answer of a run cut off
                fields += [None if event.cutoff else event.answer, event.native,
                           event.usage, event.cost_usd, event.duration_ms, event.model]
            kept.append(("end", *fields))
        elif (kind is Text and "text" in needs) or (
                kind in (ToolStart, ToolEnd) and "tools" in needs) or (
                kind is ToolEnd and "tool_ends" in needs):
            kept.append((kind.__name__, *(getattr(event, name) for name in event.__slots__)))
        elif kind is Note:
            raise AssertionError("no notes without checks")
    return kept, cut_lines


def _same(path, needs):
    everything, all_cut = _project(read(path), needs)
    selected, selected_cut = _project(read_selected(path, needs), needs)
    assert selected == everything, needs
    # A cut-off run ends where the input stopped; when its last lines were passed over,
    # the reader knows only where they began (a Skipped item has no end line).
    assert len(selected_cut) == len(all_cut)
    assert all(seen <= last for seen, last in zip(selected_cut, all_cut))
    return everything


def _several_shapes():
    """One stream of every shape written here, runs begun by lines the markers may pass
    over among them."""
    return [init(), *streamed("msg_1", 0, "Let me", " look."), assistant("msg_1", text("x")),
            assistant("msg_1", tool_use("toolu_1", "Bash", command="ls")),
            {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}},
            user(tool_result("toolu_1", "Exit code 1", True)),
            assistant("msg_2", text("Done.")), result("Done.", result_index=0),
            user(tool_result("toolu_2", "late")), assistant("msg_3", text("Again.")),
            result("Again.", is_error=True), init(),
            assistant("msg_4", tool_use("toolu_3", "Task", prompt="p")),
            assistant("msg_5", text("sub"), parent="toolu_3"),
            *streamed("msg_6", 0, "Half", " way")]


@pytest.mark.parametrize("path", CLAUDE_GOLDEN, ids=lambda path: path.parent.name)
@pytest.mark.parametrize("needs", NEEDS, ids=lambda needs: "+".join(sorted(needs)) or "none")
def test_markers_on_goldens(path, needs):
    _same(path, needs)


@pytest.mark.parametrize("needs", NEEDS, ids=lambda needs: "+".join(sorted(needs)) or "none")
def test_markers_on_runs_begun_by_lines_passed_over(tmp_path, needs):
    events = _same(write(tmp_path, _several_shapes()), needs)
    assert [event[6] for event in events if event[0] == "start"] == [1, 13, 16]


def _shuffled(value, chooser):
    if type(value) is dict:
        keys = list(value)
        chooser.shuffle(keys)
        return {key: _shuffled(value[key], chooser) for key in keys}
    if type(value) is list:
        return [_shuffled(item, chooser) for item in value]
    return value


def _spelt(value, chooser):
    """One line of JSON, keys reordered, spaced or not around its colons."""
    separators = chooser.choice(((",", ":"), (", ", ": "), (",", " : ")))
    return json.dumps(_shuffled(value, chooser), ensure_ascii=chooser.random() < 0.5,
                      separators=separators).encode()


_INPUTS = [path.read_bytes() for path in CLAUDE_GOLDEN]
_INPUTS.append(b"".join(orjson.dumps(line) + b"\n" for line in _several_shapes()))


@settings(max_examples=examples(15, 60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from(_INPUTS), needs=st.sampled_from(NEEDS),
       seed=st.integers(0, 2**32 - 1))
def test_markers_on_variants(source, needs, seed):
    chooser = random.Random(seed)
    lines = [_spelt(orjson.loads(line), chooser) if line.startswith(b"{") else line
             for line in source.splitlines()]
    with tempfile.TemporaryDirectory() as directory:
        path = write(directory, lines)
        variant = _same(path, needs)
        path.write_bytes(source)
        assert variant == _same(path, needs)


# The real captures, when they are beside the clone.

CAPTURES = sorted(CORPUS.glob("*.ndjson")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CAPTURES, reason="../shared/corpus/claude is not beside this clone")
@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.name)
def test_capture(path):
    events = read(path, checks=True)
    assert of(events, Note) == []
    ends = of(events, RunEnd)
    assert ends and all(not end.cutoff and end.ok for end in ends)
    for end in ends:
        # The answer is the result's own text, and the last main-thread message's.
        assert end.answer == end.native["result"]
        run_texts = [text for text in of(events, Text)
                     if end.start.line <= text.line <= end.line]
        last = run_texts[-1].message
        assert "".join(text.text for text in run_texts if text.message == last) == end.answer
        usage = end.native.get("modelUsage") or {}
        if usage:
            assert end.usage["output"] == sum(each["outputTokens"] for each in usage.values())
        else:
            assert end.usage["output"] == end.native["usage"]["output_tokens"]
    # Every call ends, after it starts, and the kinds are the common ones.
    started = {start.call_id: start for start in of(events, ToolStart)}
    ended = {end.call_id: end for end in of(events, ToolEnd)}
    assert started.keys() == ended.keys() and started
    for call_id, end in ended.items():
        assert end.line > started[call_id].line and end.kind == started[call_id].kind
        assert end.outcome in ("success", "error", "failure", "permissionDenied", "rejected")
    # Each piece of text once: no message's text handed on twice.
    pieces = [(text.message, text.text) for text in of(events, Text)]
    assert len(pieces) == len(set(pieces))


@pytest.mark.parametrize("needs", [{"tool_ends"}, {"tool_ends", "text", "ends"}])
def test_a_verb_that_wants_only_the_calls_ends_gets_no_starts(tmp_path, needs):
    """The ends name their calls' kind and name all the same: they are those a verb
    that wants the starts too gets."""
    path = write(tmp_path, [init(), assistant("msg_1", tool_use("t1", "Bash", command="ls"),
                                              tool_use("t2", "Read", file_path="a.py")),
                            user(tool_result("t1", "a.py")),
                            user(tool_result("t2", "oops", is_error=True)), result()])
    ends = [event for event in read_selected(path, frozenset(needs))
            if event.__class__ in (ToolStart, ToolEnd)]
    with_starts = read_selected(path, frozenset(needs | {"tools"}))
    assert list(map(repr, ends)) == [repr(event) for event in with_starts
                                     if event.__class__ is ToolEnd]
    assert [(end.kind, end.name, end.outcome) for end in ends] == [
        ("shell", "Bash", "success"), ("read", "Read", "error")]


@settings(max_examples=examples(2000), deadline=None)
@given(st.lists(st.sampled_from(["Permission to use ", " has been denied", "x", "\n", " ",
                                 "Permission", "denied"]), max_size=12).map("".join))
def test_property_a_denial_is_told_as_its_pattern_tells_it(text):
    """The denial of a tool's use is found with plain searches, a line at a time, where
    its pattern (``Permission to use .+? has been denied``) was: the same answer."""
    assert _says_denied(text) == (
        re.search(r"Permission to use .+? has been denied", text) is not None)


def test_a_line_of_many_permissions_is_read_at_once():
    """The shape on which the lazy pattern took a minute (a tool's output is the
    stream's, untrusted)."""
    text = "Permission to use " * 20_000 + "\n has been denied"
    assert not _says_denied(text)
    assert _says_denied("Permission to use " * 20_000 + "x has been denied")
