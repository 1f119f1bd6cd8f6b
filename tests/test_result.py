"""ndagent result: the answer, rebuilt and streamed."""

import subprocess

import orjson
import pytest
from conftest import command, corpus_files, fixture, lines_of, needs_corpus, on_a_terminal, run

from ndagent.cmd_result import main


def answer(path):
    return orjson.loads(path.read_bytes().splitlines()[-1])["result"]


@pytest.mark.parametrize("name", ["vendor-example.ndjson", "partial-output.ndjson",
                                  "capture-parallel.ndjson", "shapes.ndjson",
                                  "sample.ndjson"])
def test_answer_is_rebuilt(call, name):
    path = fixture(name)
    status, out, err = call(main, path)
    assert (status, err) == (0, "")
    text = answer(path)
    assert out.decode() == (text if text.endswith("\n") else text + "\n")


def test_partial_output_counts_the_deltas_once(call):
    status, out, _ = call(main, "-n", fixture("partial-output.ndjson"))
    assert out == b"Let me list them. There are 2 files.\n"


def test_no_newline_prints_exactly(call):
    status, out, _ = call(main, "-n", fixture("vendor-example.ndjson"))
    assert out == b"I'll read the README.md file and create a summary"


def test_from_result_prints_the_result_text(call, write):
    vendor = lines_of("vendor-example.ndjson")
    event = orjson.loads(vendor[-1])
    event["result"] = "Something else"
    path = write(vendor[:-1] + [orjson.dumps(event)])
    status, out, err = call(main, "--from-result", path)
    assert (status, out, err) == (0, b"Something else\n", "")
    status, out, err = call(main, path)
    assert status == 0
    assert out == b"I'll read the README.md file and create a summary\n"
    assert err == f"ndagent-result: {path}:10: warning: the rebuilt answer differs " \
                  "from the result event's text\n"


def test_a_failed_run_s_result_text_is_its_failure_not_its_answer(call, write):
    vendor = lines_of("vendor-example.ndjson")
    event = orjson.loads(vendor[-1])
    event.update(is_error=True, result="Connection to the model was lost.")
    path = write(vendor[:-1] + [orjson.dumps(event)])
    failed = f'ndagent-result: {path}:10: error: run failed: "Connection to the model was lost."\n'
    # streamed: the text that came stays printed, with no check against the failure
    assert call(main, path) == (1, b"I'll read the README.md file and create a summary\n",
                                failed)
    for option in ("--from-result", "--last"):  # known at the end: nothing, as elsewhere
        assert call(main, option, path) == (1, b"", failed)
        assert call(main, "-z", option, path) == (1, b"", failed)  # not even a NUL


def test_a_run_without_result_prints_its_text_then_fails(call, write):
    path = write(lines_of("vendor-example.ndjson")[:7])
    status, out, err = call(main, path)
    assert status == 1
    assert out == b"I'll read the README.md file and create a summary\n"
    assert err == f"ndagent-result: {path}:1: error: run ended without a result event: " \
                  "the agent failed or was cut off\n"


def test_two_runs_are_two_answers(call, write):
    path = write(lines_of("vendor-example.ndjson") + lines_of("partial-output.ndjson"))
    status, out, _ = call(main, path)
    assert status == 0
    assert out == (b"I'll read the README.md file and create a summary\n"
                   b"Let me list them. There are 2 files.\n")


def test_control_characters_are_spelt_out_on_a_terminal_only(write):
    line = orjson.dumps({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "red \x1b[31mtext\x1b[0m\tand\nmore"}]}})
    path = write([line])
    piped = run("result", path)
    assert piped.stdout == b"red \x1b[31mtext\x1b[0m\tand\nmore\n"
    shown = on_a_terminal("result", path, status=1)
    assert b"\x1b" not in shown
    assert b"red \\x1b[31mtext\\x1b[0m\tand" in shown


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_real_captures(path):
    done = run("result", "-n", path)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == answer(path)


def test_from_result_prints_nothing_for_a_run_without_result(call, write):
    path = write(lines_of("vendor-example.ndjson")[:7] + lines_of("partial-output.ndjson"))
    status, out, err = call(main, "--from-result", path)
    assert (status, out) == (1, b"Let me list them. There are 2 files.\n")


def test_the_differs_warning_comes_after_the_answer_s_newline(call, write):
    import orjson as json

    vendor = lines_of("vendor-example.ndjson")
    event = json.loads(vendor[-1])
    event["result"] = "Something else"
    path = write(vendor[:-1] + [json.dumps(event)])
    done = subprocess.run([command("result"), str(path)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=30)
    assert done.stdout.splitlines()[0] == b"I'll read the README.md file and create a summary"
