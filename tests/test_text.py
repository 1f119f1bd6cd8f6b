"""ndagent text: one action line per completed tool call, -v targets, --final, colour,
and terminal safety."""

import os

import orjson
import pytest
from conftest import (
    corpus_files,
    fixture,
    lines_of,
    needs_corpus,
    on_a_terminal,
    run,
    run_of,
    tool_event,
)

from ndagent.cmd_text import main

CONTROLS = {*range(0x20), *range(0x7F, 0xA0)} - {0x0A}


def test_vendor_example_prints_exactly_the_documented_lines(call):
    assert call(main, fixture("vendor-example.ndjson")) == \
        (0, b"Read file\nCreated new file\n", "")


def test_parallel_shell_calls_print_one_line_each_in_completion_order(call):
    path = fixture("capture-parallel.ndjson")
    assert call(main, path) == (0, b"Ran terminal command\n" * 2, "")
    status, out, _ = call(main, "-v", path)
    assert out == b"Ran terminal command: sleep 4\nRan terminal command: sleep 6\n"


def test_every_shape_gets_its_action_and_outcome_suffix(call):
    status, out, err = call(main, "-v", fixture("shapes.ndjson"))
    assert (status, err) == (0, "")
    assert out.decode().splitlines() == [
        "Edited file: src/app.py",
        "Searched file contents: TODO",
        "Searched for files: **/*.py",
        "Ran terminal command: make test (failed)",
        "Ran terminal command: rm -rf / (denied)",
        "Deleted file (rejected)",
        "Called MCP tool: github-search_issues (error)",
        "Used tool",
        "Called tool: lookup",
    ]


@pytest.mark.parametrize("kind, args, line", [
    ("readToolCall", {"path": "a.py"}, "Read file: a.py"),
    ("writeToolCall", {"path": "b.py"}, "Created new file: b.py"),
    ("editToolCall", {"path": "c.py"}, "Edited file: c.py"),
    ("shellToolCall", {"command": "ls -l"}, "Ran terminal command: ls -l"),
    ("deleteToolCall", {"path": "d.py"}, "Deleted file: d.py"),
    ("lsToolCall", {"path": "src"}, "Listed directory: src"),
    ("updateTodosToolCall", {"todos": []}, "Updated to-do list"),
    ("globToolCall", {"globPattern": "*.md"}, "Searched for files: *.md"),
    ("grepToolCall", {"pattern": "x+"}, "Searched file contents: x+"),
    ("semSearchToolCall", {"query": "where"}, "Searched codebase: where"),
    ("webFetchToolCall", {"url": "https://e.org"}, "Fetched web page: https://e.org"),
    ("webSearchToolCall", {"query": "ndjson"}, "Searched the web: ndjson"),
    ("mcpToolCall", {"name": "gh-issues", "toolName": "issues"}, "Called MCP tool: gh-issues"),
    ("taskToolCall", {"description": "sub"}, "Ran subagent"),
    ("readLintsToolCall", {"paths": []}, "Used tool"),
])
def test_action_table(call, write, kind, args, line):
    path = write(run_of(tool_event("started", "c1", kind, args),
                        tool_event("completed", "c1", kind, args, "success")))
    assert call(main, path) == (0, line.split(":")[0].encode() + b"\n", "")
    assert call(main, "-v", path) == (0, line.encode() + b"\n", "")


@pytest.mark.parametrize("outcome, suffix", [
    ("failure", " (failed)"), ("permissionDenied", " (denied)"),
    ("rejected", " (rejected)"), ("error", " (error)"), ("cancelled", " (unknown)"),
])
def test_outcome_suffixes(call, write, outcome, suffix):
    path = write(run_of(tool_event("completed", "c1", "readToolCall", {"path": "x"}, outcome)))
    assert call(main, path)[1] == f"Read file{suffix}\n".encode()


def test_verbose_takes_the_target_from_the_started_event_when_completed_has_no_args(
        call, write):
    path = write(run_of(
        tool_event("started", "c1", "shellToolCall", {"command": "rm -rf build"}),
        tool_event("completed", "c1", "shellToolCall", None, "rejected", {"reason": "no"})))
    assert call(main, "-v", path)[1] == b"Ran terminal command: rm -rf build (rejected)\n"


def test_verbose_escapes_control_characters_one_line_per_action(call, write):
    command_text = "echo hi\nrm -rf /\r\x1b[2J\x1b]0;title\x07\x9b31m\x7f\ttab"
    path_text = "dir\nname\x1b[31m.py"
    path = write(run_of(
        tool_event("started", "a\nb", "shellToolCall", {"command": command_text}),
        tool_event("started", "c\x1b", "editToolCall", {"path": path_text}),
        tool_event("completed", "a\nb", "shellToolCall", {"command": command_text},
                   "failure"),
        tool_event("completed", "c\x1b", "editToolCall", {"path": path_text}, "success")))
    for color in ("never", "always"):
        status, out, _ = call(main, "-v", f"--color={color}", path)
        lines = out.decode().split("\n")
        assert len(lines) == 3 and lines[2] == ""
        text = "".join(lines)
        if color == "always":
            # Only the colour's own sequences reach the terminal, none from the stream.
            for sequence in ("\x1b[2m", "\x1b[31m", "\x1b[0m"):
                text = text.replace(sequence, "")
        assert not CONTROLS & set(map(ord, text))
    assert out.decode().startswith("Ran terminal command\x1b[2m: echo hi\\nrm -rf /\\r\\x1b[2J")
    assert call(main, "-v", path)[1].decode().splitlines() == [
        "Ran terminal command: echo hi\\nrm -rf /\\r\\x1b[2J\\x1b]0;title\\x07\\x9b31m\\x7f"
        "\\ttab (failed)",
        "Edited file: dir\\nname\\x1b[31m.py",
    ]


def test_a_call_that_never_completes_prints_nothing(call, write):
    path = write(lines_of("vendor-example.ndjson")[:8])  # cut after the write started
    status, out, err = call(main, path)
    assert (status, out) == (1, b"Read file\n")
    assert "run ended without a result event" in err


def test_a_tool_call_naming_no_tool_is_skipped_with_a_warning(call, write):
    path = write(run_of(b'{"type":"tool_call","subtype":"completed","call_id":"x",'
                        b'"tool_call":{"aToolCall":{},"bToolCall":{}}}\n'))
    status, out, err = call(main, path)
    assert (status, out) == (0, b"")
    assert err == f"ndagent-text: {path}:2: warning: skipped: a tool_call event that " \
                  "names no single tool\n"
    assert call(main, "-q", path) == (0, b"", "")


def test_final_prints_the_text_after_the_last_tool_call_at_the_end_of_each_run(call, write):
    assert call(main, "--final", fixture("shapes.ndjson")) == (0, b"Done.\n", "")
    # The vendor's run ends with a tool call: its final message is empty, no line.
    assert call(main, "--final", fixture("vendor-example.ndjson")) == (0, b"", "")
    # Partial output: the deltas count, not the segment repeated after them.
    assert call(main, "--final", fixture("partial-output.ndjson")) == \
        (0, b" There are 2 files.\n", "")
    both = write(lines_of("capture-parallel.ndjson") + lines_of("sample.ndjson"))
    last = orjson.loads(lines_of("sample.ndjson")[-2])["message"]["content"][0]["text"]
    assert last.startswith("\n\nFixed: ") and last.endswith("pass.\n")
    # The blank lines that part it from the text before it are no part of it.
    assert call(main, "--final", both) == (0, b"done\n" + last.lstrip("\n").encode(), "")


def test_final_without_tool_calls_is_the_whole_answer(call, write):
    vendor = lines_of("vendor-example.ndjson")
    path = write([line for line in vendor if b'"tool_call"' not in line])
    assert call(main, "--final", path)[1] == \
        b"I'll read the README.md file and create a summary\n"


def test_final_keeps_lines_but_escapes_other_controls(call, write):
    vendor = lines_of("vendor-example.ndjson")
    delta = orjson.loads(vendor[6])
    delta["message"]["content"][0]["text"] = "line one\n\tline \x1b[31mtwo\n"
    path = write(vendor[:6] + [orjson.dumps(delta)] + vendor[9:])
    assert call(main, "--final", path) == (0, b"line one\n\tline \\x1b[31mtwo\n", "")


def test_final_of_a_cut_off_run_is_printed_then_reported(call, write):
    path = write(lines_of("vendor-example.ndjson")[:7])
    status, out, err = call(main, "--final", path)
    assert (status, out) == (1, b" and create a summary\n")
    assert "run ended without a result event" in err


def test_final_and_verbose_do_not_go_together():
    done = run("text", "--final", "-v", fixture("vendor-example.ndjson"))
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.count(b"\n") == 1


def test_colour_is_minimal_and_only_when_asked_or_on_a_terminal(call):
    shapes = fixture("shapes.ndjson")
    status, out, _ = call(main, "--color=always", "-v", shapes)
    lines = out.decode().splitlines()
    assert lines[0] == "Edited file\x1b[2m: src/app.py\x1b[0m"
    assert lines[3] == "Ran terminal command\x1b[2m: make test\x1b[0m\x1b[31m (failed)\x1b[0m"
    assert call(main, "--color=always", shapes)[1].splitlines()[4] == \
        b"Ran terminal command\x1b[31m (denied)\x1b[0m"
    plain = call(main, "-v", shapes)[1]
    assert b"\x1b" not in plain
    assert call(main, "--color=never", "-v", shapes)[1] == plain
    assert run("text", "-v", shapes).stdout == plain  # auto, on a pipe


def test_colour_on_a_terminal_unless_no_color():
    shapes = fixture("shapes.ndjson")
    without = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert b"\x1b[31m (failed)\x1b[0m" in on_a_terminal("text", shapes, env=without)
    assert b"\x1b" not in on_a_terminal("text", shapes, env={**without, "NO_COLOR": "1"})
    assert b"\x1b" not in on_a_terminal("text", "--color=never", shapes, env=without)
    assert b"\x1b[31m" in on_a_terminal("text", "--color=always", shapes,
                                        env={**without, "NO_COLOR": "1"})


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.name)
def test_real_captures(call, path):
    completed = sum(1 for line in path.read_bytes().splitlines()
                    if b'"subtype":"completed"' in line and b'"shellToolCall"' in line)
    status, out, err = call(main, path)
    assert (status, err) == (0, "")
    assert completed and out == b"Ran terminal command\n" * completed


def test_verbose_spells_out_characters_that_reorder_text(call, write):
    command_text = "rm -rf /tmp/x \u202e# harmless\u202c\u2066"
    path = write(run_of(
        tool_event("started", "a", "shellToolCall", {"command": command_text}),
        tool_event("completed", "a", "shellToolCall", {"command": command_text}, "success")))
    status, out, _ = call(main, "-v", "--color=never", path)
    assert out == b"Ran terminal command: rm -rf /tmp/x \\u202e# harmless\\u202c\\u2066\n"
