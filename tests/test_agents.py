"""The frame reads each input with its own agent's format (AGENTS.md §4): detection from
the first objects, --agent, the messages of an input that is not read, several agents
in one call, and the same output from a file and from standard input."""

from pathlib import Path

import orjson
import pytest
from conftest import fixture, run

from ndagent.cmd_json import main as json_main
from ndagent.cmd_result import main as result_main
from ndagent.cmd_validate import main as validate_main

GOLDEN = Path(__file__).resolve().parent / "golden"
CODEX = GOLDEN / "codex" / "command-success" / "input.ndjson"
CODEX_INTERIM = GOLDEN / "codex" / "interim-messages" / "input.ndjson"
CODEX_OLD = GOLDEN / "codex" / "old-format" / "input.ndjson"
GEMINI = GOLDEN / "gemini" / "tool-success" / "input.ndjson"
CURSOR = fixture("vendor-example.ndjson")


def test_each_file_is_read_with_its_own_agent_s_format(call):
    status, out, err = call(json_main, CURSOR, CODEX, GEMINI)
    assert (status, err) == (0, "")
    records = [orjson.loads(line) for line in out.splitlines()]
    assert records[0]["type"] == "result"
    assert list(records[1]) == ["items", "finalResponse", "usage"]
    assert list(records[2]) == ["session_id", "response", "stats"]


def test_agent_forced_on_another_agent_s_stream_reads_nothing_of_it(call):
    status, out, err = call(json_main, "--agent", "codex", CURSOR, CODEX)
    assert status == 1
    assert err == f"ndagent-json: {CURSOR}:1: error: a cursor stream, not codex (--agent codex)\n"
    assert list(orjson.loads(out)) == ["items", "finalResponse", "usage"]


def test_objects_of_no_agent_are_not_an_agent_stream(call, write):
    path = write([b"not json", b'{"type":"hello","n":1}', b'{"type":"user"}'])
    status, out, err = call(json_main, path)
    assert (status, out) == (1, b"")
    # The input is not read: its bad lines go unreported.
    assert err == (f'ndagent-json: {path}:2: error: not an agent stream: no known event (first '
                   'object: type "hello")\n')


def test_objects_of_the_types_cursor_uses_are_read_as_cursor(call, write):
    path = write([b'{"type":"user","message":{"role":"user","content":[]}}'])
    status, out, err = call(json_main, path)
    assert (status, out) == (1, b"")
    assert "run ended without a result event" in err


def test_codex_before_0_44_is_refused(call):
    status, out, err = call(validate_main, CODEX_OLD)
    assert (status, out) == (1, f"{CODEX_OLD}:3: error: unsupported codex format "
                                "(before 0.44) [agent]\n".encode())


@pytest.mark.parametrize("verb", ["json", "result", "text", "tools", "validate"])
@pytest.mark.parametrize("path", [CODEX, GEMINI, CURSOR, fixture("capture-parallel.ndjson")])
def test_standard_input_gives_what_the_file_gives(verb, path):
    """A file's agent is told from its head, before decoding; standard input's from its
    items, held until then, and then selected as a file's are."""
    from_file = run(verb, path)
    from_stdin = run(verb, input=path.read_bytes())
    name = str(path).encode()
    assert from_stdin.returncode == from_file.returncode
    assert from_stdin.stdout.replace(b"<stdin>", name) == from_file.stdout
    assert from_stdin.stderr.replace(b"<stdin>", name) == from_file.stderr


def test_live_prints_each_message_of_a_codex_run_an_empty_line_between(call):
    status, out, err = call(result_main, "--live", CODEX_INTERIM)
    assert (status, err) == (0, "")
    assert out == (b"I'll check the Node version first.\n\nNode 20 is installed; now the "
                   b"lockfile.\n\nNode 20.11.1 with lockfile version 3: they match.\n")


def test_a_codex_answer_is_printed_at_the_end_of_its_run(call):
    status, out, err = call(result_main, CODEX_INTERIM)
    assert (status, err) == (0, "")
    assert out == b"Node 20.11.1 with lockfile version 3: they match.\n"


def test_standard_input_of_noise_is_held_only_so_long():
    """Lines that are no objects are held until the agent is told, but not without end:
    past cli.HOLD_LINES (checked after each block read) the input is decided as at its
    end (Cursor, for no object)."""
    from ndagent import cli

    noise = b"noise\n" * (cli.HOLD_LINES * 20)  # more than one block read
    done = run("json", "-q", input=noise + CODEX.read_bytes())
    assert done.returncode == 1
    assert b"run ended without a result event" in done.stderr
