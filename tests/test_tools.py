"""ndagent tools: started and completed paired into one record per call, pending calls,
filters, TSV."""

import subprocess
from pathlib import Path

import orjson
import pytest
from conftest import command, corpus_files, fixture, lines_of, needs_corpus, run, run_of, tool_event

from ndagent.cmd_tools import ToolsCommand, build_parser, main
from ndagent.feed import read_here
from ndagent.output import Output

GOLDEN = Path(__file__).resolve().parent / "golden"

FIELDS = ["call_id", "kind", "name", "status", "args", "target", "result", "session_id",
          "model_call_id", "duration_ms", "source", "line", "agent", "parent"]


def records(call, *args):
    status, out, err = call(main, *args)
    return status, [orjson.loads(line) for line in out.splitlines()], err


def test_vendor_example_pairs_both_calls(call):
    path = fixture("vendor-example.ndjson")
    status, found, err = records(call, path)
    assert (status, err) == (0, "")
    assert [list(record) for record in found] == [FIELDS, FIELDS]
    read, write = found
    assert read == {
        "call_id": "toolu_vrtx_01NnjaR886UcE8whekg2MGJd", "kind": "read", "name": None,
        "status": "success", "args": {"path": "README.md"}, "target": "README.md",
        "result": {"content": "# Project\n\nThis is a sample project...", "isEmpty": False,
                   "exceededLimit": False, "totalLines": 54, "totalChars": 1254},
        "session_id": "c6b62c6f-7ead-4fd6-9922-e952131177ff", "model_call_id": None,
        "duration_ms": None, "source": str(path), "line": 5, "agent": "cursor",
        "parent": None,
    }
    assert (write["kind"], write["status"], write["line"]) == ("write", "success", 8)
    assert write["result"]["linesCreated"] == 19


def test_every_shape_is_paired_with_its_kind_and_status(call):
    status, found, err = records(call, fixture("shapes.ndjson"))
    assert (status, err) == (0, "")
    assert [(r["call_id"], r["kind"], r["name"], r["status"], r["line"]) for r in found] == [
        ("e1", "edit", None, "success", 6),
        ("g2", "grep", None, "success", 9),        # completes before g1, started first
        ("g1", "glob", None, "success", 8),
        ("s1", "shell", None, "failure", 12),
        ("s2", "shell", None, "permissionDenied", 14),  # no args, no started
        ("d1", "delete", None, "rejected", 15),
        ("m1", "mcp", "github-search_issues", "error", 16),
        ("f1", "frobnicate", None, "success", 18),  # a kind nobody knows yet
        ("fn1", "function", "lookup", "success", 20),
    ]
    denied = found[4]
    assert denied["args"] is None and denied["duration_ms"] is None
    assert denied["result"] == {"command": "rm -rf /", "error": "not allowed"}
    assert found[3]["result"]["exitCode"] == 2
    assert found[6]["result"] == {"error": "server not running"}
    assert found[0]["model_call_id"] == "aa-0-zz" and found[8]["model_call_id"] is None


def test_newline_ids_out_of_order_completion_and_duration(call):
    status, found, _ = records(call, fixture("capture-parallel.ndjson"))
    assert status == 0
    assert [(r["call_id"], r["args"]["command"], r["duration_ms"], r["line"])
            for r in found] == [
        ("call_UAP6HeqGG8TYMm2vKIkuFk8e\nfc_05e0124e90bd688f01698ca1281b4481938c56405c6066ae8d",
         "sleep 4", 1770823849563 - 1770823845401, 13),
        ("call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_05e0124e90bd688f01698ca1281b3081939144eaa3db48daf5",
         "sleep 6", 1770823851595 - 1770823845400, 12),
    ]
    assert {r["status"] for r in found} == {"success"}


def test_args_come_from_the_started_event_when_completed_has_none(call, write):
    path = write(run_of(
        tool_event("started", "c1", "mcpToolCall", {"name": "gh-issues", "args": {}},
                   timestamp_ms=100, model_call_id="m-0-a"),
        tool_event("completed", "c1", "mcpToolCall", None, "rejected", {"reason": "no"},
                   timestamp_ms=250)))
    status, found, _ = records(call, path)
    assert found == [{
        "call_id": "c1", "kind": "mcp", "name": "gh-issues", "status": "rejected",
        "args": {"name": "gh-issues", "args": {}}, "target": "gh-issues",
        "result": {"reason": "no"},
        "session_id": "s-1", "model_call_id": "m-0-a", "duration_ms": 150,
        "source": str(path), "line": 2, "agent": "cursor", "parent": None,
    }]


def test_records_name_their_agent_and_the_subagent_call_that_made_them(call):
    status, found, err = records(call, GOLDEN / "claude" / "subagent" / "input.ndjson")
    assert (status, err) == (0, "")
    task = "toolu_01YEymW9bY7M4LL74sadoBd2"
    assert [(r["name"], r["agent"], r["parent"]) for r in found] == [
        ("Grep", "claude", task), ("Read", "claude", task), ("Task", "claude", None)]
    status, out, _ = call(main, "--format", "tsv", "--header",
                          GOLDEN / "codex" / "command-success" / "input.ndjson",
                          GOLDEN / "claude" / "subagent" / "input.ndjson")
    rows = [row.split("\t") for row in out.decode().splitlines()]
    assert rows[0][5:7] == ["agent", "parent"]
    assert [row[5:7] for row in rows[1:]] == [["codex", ""], ["claude", task],
                                               ["claude", task], ["claude", ""]]


def test_a_cut_off_stream_reports_its_open_calls_as_pending(call, write):
    cut = lines_of("capture-parallel.ndjson")[:14]  # both started, one completed
    path = write(cut + lines_of("vendor-example.ndjson"))
    status, found, err = records(call, path)
    assert status == 1
    assert err == f"ndagent-tools: {path}:1: error: run ended without a result event: " \
                  "the agent failed or was cut off\n"
    # The pending call is written when its run ends, before the next run's calls.
    assert [(r["kind"], r["status"]) for r in found] == \
        [("shell", "success"), ("shell", "pending"), ("read", "success"), ("write", "success")]
    pending = found[1]
    assert pending["args"]["command"] == "sleep 6"
    assert (pending["result"], pending["duration_ms"], pending["line"]) == (None, None, 12)
    assert pending["model_call_id"].endswith("-0-qzkx")
    status, found, _ = records(call, "-s", "pending", write(cut))
    assert (status, [r["call_id"][:9] for r in found]) == (1, ["call_MZSw"])


def test_a_call_with_no_call_id_is_pending_at_the_end_of_its_run(call, write):
    """A Gemini tool_use without tool_id cannot be paired: pending, with a warning."""
    lines = [{"type": "init", "timestamp": "2026-05-11T08:02:14Z", "session_id": "g-1"},
             {"type": "tool_use", "timestamp": "2026-05-11T08:02:15Z",
              "tool_name": "read_file", "parameters": {"file_path": "a.txt"}},
             {"type": "tool_use", "timestamp": "2026-05-11T08:02:15Z", "tool_name": "glob",
              "tool_id": "glob-1-ab", "parameters": {"pattern": "*"}},
             {"type": "tool_result", "timestamp": "2026-05-11T08:02:16Z",
              "tool_id": "glob-1-ab", "status": "success", "output": "a.txt"},
             {"type": "result", "timestamp": "2026-05-11T08:02:17Z", "status": "success"}]
    path = write([orjson.dumps(line) for line in lines])
    status, found, err = records(call, path)
    assert status == 0
    assert [(r["call_id"], r["name"], r["status"], r["line"]) for r in found] == [
        ("glob-1-ab", "glob", "success", 3), (None, "read_file", "pending", 2)]
    assert err == (f'ndagent-tools: {path}:2: warning: a tool_use of "read_file" has no '
                   "tool_id: its result cannot be paired\n")
    assert call(main, "-q", "-s", "pending", "--format", "tsv", path)[1:] == (
        f"\tread\tpending\ta.txt\t\tgemini\t\t{path}\t2\n".encode(), "")


def test_a_call_id_started_twice_leaves_the_first_pending(call, write):
    path = write(run_of(
        tool_event("started", "c1", "readToolCall", {"path": "a"}),
        tool_event("started", "c1", "readToolCall", {"path": "b"}),
        tool_event("completed", "c1", "readToolCall", None, "success")))
    status, found, _ = records(call, path)
    assert [(r["status"], r["args"]) for r in found] == \
        [("pending", {"path": "a"}), ("success", {"path": "b"})]


def test_a_result_of_another_shape_is_unknown(call, write):
    path = write(run_of(tool_event("completed", "c1", "readToolCall", None, "cancelled"),
                        b'{"type":"tool_call","subtype":"completed","call_id":"c2",'
                        b'"tool_call":{"readToolCall":{}}}\n'))
    assert [r["status"] for r in records(call, path)[1]] == ["unknown", "unknown"]


def test_integers_beyond_64_bits_are_kept_exact(call, write):
    path = write(run_of(tool_event("started", "c1", "readToolCall", {"path": "a"}),
                        b'{"type":"tool_call","subtype":"completed","call_id":"c1","tool_'
                        b'call":{"readToolCall":{"result":{"success":{"n":123456789012345'
                        b'678901234567890}}}}}\n'))
    assert b'"result":{"n":123456789012345678901234567890}' in call(main, path)[1]


@pytest.mark.parametrize("options, expected", [
    (["-k", "shell"], ["s1", "s2"]),
    (["-k", "grep,glob"], ["g2", "g1"]),
    (["-k", "grep", "--kind", "glob"], ["g2", "g1"]),
    (["-k", "function", "-t", "frobnicate"], ["f1", "fn1"]),
    (["-s", "failure,permissionDenied"], ["s1", "s2"]),
    (["-s", "rejected", "-s", "error"], ["d1", "m1"]),
    (["-k", "shell", "-s", "success"], []),
    (["-k", "shell", "-s", "failure", "--format", "tsv"], ["s1"]),
])
def test_filters(call, options, expected):
    status, out, _ = call(main, *options, fixture("shapes.ndjson"))
    if "tsv" in options:
        ids = [line.split(b"\t")[0].decode() for line in out.splitlines()]
    else:
        ids = [orjson.loads(line)["call_id"] for line in out.splitlines()]
    assert (status, ids) == (0, expected)


@pytest.mark.parametrize("option", ["-s bogus", "-s success,failur", "-k ,", "-k frobnicate",
                                    "--format csv"])
def test_bad_filter_is_a_usage_error(option):
    done = run("tools", *option.split(), fixture("shapes.ndjson"))
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.startswith(b"ndagent-tools: argument ") and \
        done.stderr.count(b"\n") == 1


def test_tsv_columns_and_header(call):
    path = fixture("shapes.ndjson")
    status, out, _ = call(main, "--format", "tsv", "--header", path)
    rows = out.decode().split("\n")
    assert rows[0] == ("call_id\tkind\tstatus\ttarget\tduration_ms\tagent\tparent\tsource\t"
                       "line")
    assert [row.rsplit("\tcursor\t", 1)[0] for row in rows[1:-1]] == [
        "e1\tedit\tsuccess\tsrc/app.py\t0", "g2\tgrep\tsuccess\tTODO\t0",
        "g1\tglob\tsuccess\t**/*.py\t0", "s1\tshell\tfailure\tmake test\t0",
        "s2\tshell\tpermissionDenied\trm -rf /\t", "d1\tdelete\trejected\t\t",
        "m1\tmcp\terror\tgithub-search_issues\t0", "f1\tfrobnicate\tsuccess\t\t0",
        "fn1\tfunction\tsuccess\tlookup\t"]
    assert all(row.split("\t")[5:8] == ["cursor", "", str(path)] for row in rows[1:-1])
    assert rows[-1] == ""
    assert call(main, "--format", "tsv", path)[1] == out.split(b"\n", 1)[1]


def tsv_of_shell_call(call, write, call_id, command_text):
    """The TSV output of a run with one successful shell call."""
    path = write(run_of(
        tool_event("started", call_id, "shellToolCall", {"command": command_text}),
        tool_event("completed", call_id, "shellToolCall", {"command": command_text},
                   "success")))
    return call(main, "--format", "tsv", path)[1].replace(f"\t{path}\t".encode(), b"\tPATH\t")


def test_tsv_escapes_backslash_tab_newline_and_carriage_return(call, write):
    command_text = "printf 'a\\tb\\n' |\tcat\r\nls C:\\dir"
    out = tsv_of_shell_call(call, write, "x\ny", command_text)
    assert out == (b"x\\ny\tshell\tsuccess\tprintf 'a\\\\tb\\\\n' |\\tcat\\r\\nls C:\\\\dir\t"
                   b"\tcursor\t\tPATH\t2\n")
    row = out.decode()[:-1].split("\t")
    assert len(row) == 9 and "\n" not in out.decode()[:-1]
    # Undoing the escapes gives the command back.
    undone = row[3].replace("\\\\", "\0").replace("\\t", "\t").replace("\\n", "\n") \
        .replace("\\r", "\r").replace("\0", "\\")
    assert undone == command_text


def test_shell_commands_an_agent_ran_with_cut(write):
    """The README's one-liner: ndagent tools -k shell --format tsv | cut -f4."""
    path = fixture("sample.ndjson")
    done = subprocess.run(f'"{command("tools")}" -k shell --format tsv "{path}" | cut -f4',
                          shell=True, capture_output=True, timeout=60)
    assert done.stdout == b"python -m pytest -q\n" * 2


def test_memory_holds_only_the_open_calls(write, tmp_path):
    calls = []
    for number in range(200):
        calls += [tool_event("started", f"c{number}", "readToolCall", {"path": "a"}),
                  tool_event("started", f"d{number}", "readToolCall", {"path": "b"}),
                  tool_event("completed", f"c{number}", "readToolCall", None, "success"),
                  tool_event("completed", f"d{number}", "readToolCall", None, "success")]
    path = write(run_of(*calls))
    args = build_parser().parse_args([str(path)])
    largest = []

    class Watched(ToolsCommand):
        def call_ended(self, kept, end):
            largest.append(len(self.pairer) + 1)  # with the call that ends
            super().call_ended(kept, end)

    with open(tmp_path / "out", "wb") as sink:
        command_object = Watched(args, "ndagent-tools", Output(sink.fileno()))
        assert read_here(command_object, args.files) == 0
    assert max(largest) == 2 and len(command_object.pairer) == 0
    assert (tmp_path / "out").read_bytes().count(b"\n") == 400


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.name)
def test_real_captures(call, path):
    started = [orjson.loads(line) for line in path.read_bytes().splitlines()
               if b'"subtype":"started"' in line and b'"tool_call"' in line]
    status, found, err = records(call, path)
    assert (status, err) == (0, "")
    assert started and len(found) == len(started)
    assert {r["call_id"] for r in found} == {event["call_id"] for event in started}
    for record in found:
        assert (record["kind"], record["status"]) == ("shell", "success")
        assert record["args"]["command"].startswith("sleep ")
        assert record["duration_ms"] > 0


def test_a_function_tool_s_arguments_are_its_args(call):
    found = {r["call_id"]: r for r in records(call, fixture("shapes.ndjson"))[1]}
    assert (found["fn1"]["kind"], found["fn1"]["name"]) == ("function", "lookup")
    assert found["fn1"]["args"] == '{"q":1}'


def test_tsv_spells_out_other_control_and_reordering_characters(call, write):
    command_text = "clear\x1b[2J\x1b]0;title\x07 \x9b31m\x7f \u202ereversed\u2028next \\x1b"
    out = tsv_of_shell_call(call, write, "c\x1b", command_text)
    assert out.decode() == (
        "c\\x1b\tshell\tsuccess\tclear\\x1b[2J\\x1b]0;title\\x07 \\x9b31m\\x7f "
        "\\u202ereversed\\u2028next \\\\x1b\t\tcursor\t\tPATH\t2\n")
