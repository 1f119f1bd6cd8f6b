"""ndagent stats: figures over a mixed folder match a hand count; -j N changes nothing;
the partials of any split of the files merge into the figures of all of them."""

import os
import subprocess
from pathlib import Path

import orjson
import pytest
from conftest import (
    InProcess,
    command,
    corpus_files,
    examples,
    needs_corpus,
    on_a_terminal,
    run,
    tool_event,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent import formats, inputs
from ndagent.cmd_stats import main


def lines(*objects):
    """NDJSON bytes of objects (or of lines already made, bytes or text)."""
    out = []
    for item in objects:
        if isinstance(item, bytes):
            out.append(item if item.endswith(b"\n") else item + b"\n")
        elif isinstance(item, str):
            out.append(item.encode() + b"\n")
        else:
            out.append(orjson.dumps(item) + b"\n")
    return b"".join(out)


# The mixed folder: each agent, runs that end ok, fail, or are cut off, and an empty file.
# Its figures are counted by hand below (SUMMARY).

CURSOR_INIT = {"type": "system", "subtype": "init", "session_id": "s-1", "model": "gpt-5",
               "cwd": "/w", "apiKeySource": "login", "permissionMode": "default"}
CURSOR_USER = {"type": "user", "session_id": "s-1",
               "message": {"role": "user", "content": [{"type": "text", "text": "fix it"}]}}


def cursor_result(**fields):
    return {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1500,
            "duration_api_ms": 1400, "result": "done", "session_id": "s-1", **fields}


CURSOR_OK = lines(  # 1500 ms, tokens 100/50/5/20; npm test fails, a read succeeds
    CURSOR_INIT, CURSOR_USER,
    tool_event("started", "c1", "shellToolCall", {"command": "npm test"}),
    tool_event("completed", "c1", "shellToolCall", {"command": "npm test"}, "failure",
               {"exitCode": 1}),
    tool_event("started", "c2", "readToolCall", {"path": "a.py"}),
    tool_event("completed", "c2", "readToolCall", {"path": "a.py"}, "success"),
    {"type": "assistant", "session_id": "s-1",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}},
    cursor_result(usage={"inputTokens": 100, "outputTokens": 20, "cacheReadTokens": 50,
                         "cacheWriteTokens": 5}))
CURSOR_CUT = lines(  # cut off, its read pending
    CURSOR_INIT, CURSOR_USER, tool_event("started", "c3", "readToolCall", {"path": "b.py"}))
CURSOR_FAILED = lines(  # 700 ms, no usage
    CURSOR_INIT, CURSOR_USER,
    cursor_result(subtype="error", is_error=True, duration_ms=700, result=""))


def claude_line(kind, session="cl-1", **fields):
    return {"type": kind, "session_id": session, "parent_tool_use_id": None, **fields}


def claude_init(model, session="cl-1"):
    return claude_line("system", session=session, subtype="init", model=model, cwd="/w",
                       tools=["Bash", "Read", "Write"], claude_code_version="2.0.31")


def claude_tool_use(call_id, name, args, message="msg_1"):
    return claude_line("assistant", message={
        "id": message, "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}]})


def claude_tool_result(call_id, content, is_error):
    return claude_line("user", message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": content,
         "is_error": is_error}]})


def claude_model_usage(model, inputs, output, read, write, cost):
    return {model: {"inputTokens": inputs, "outputTokens": output,
                    "cacheReadInputTokens": read, "cacheCreationInputTokens": write,
                    "costUSD": cost}}


CLAUDE = lines(
    # Ok, 6240 ms, $0.1; tokens from modelUsage (two models), not from usage (the main
    # thread's); make lint fails; the write's hook error is a denial at the result.
    claude_init("claude-sonnet-4-5"),
    claude_tool_use("toolu_1", "Bash", {"command": "make lint"}),
    claude_tool_result("toolu_1", "Exit code 2\nlint errors", True),
    claude_tool_use("toolu_2", "Write", {"file_path": "x.py", "content": ""}),
    claude_tool_result("toolu_2", "Blocked by the PreToolUse hook", True),
    claude_line("result", subtype="success", is_error=False, duration_ms=6240,
                num_turns=3, result="", total_cost_usd=0.1,
                usage={"input_tokens": 1, "output_tokens": 1, "cache_read_input_tokens": 1,
                       "cache_creation_input_tokens": 1},
                modelUsage={**claude_model_usage("claude-sonnet-4-5", 8, 61, 32151, 2029, 0.09),
                            **claude_model_usage("claude-haiku-4-5", 300, 40, 0, 0, 0.01)},
                permission_denials=[{"tool_name": "Write", "tool_use_id": "toolu_2",
                                     "tool_input": {}}]),
    # Failed (line 7), 4105 ms, $0.2; a read ends in error.
    claude_init("claude-opus-4-5", session="cl-2"),
    claude_tool_use("toolu_3", "Read", {"file_path": "/nope"}, message="msg_2"),
    claude_tool_result("toolu_3", "<tool_use_error>File does not exist.</tool_use_error>",
                       True),
    claude_line("result", session="cl-2", subtype="error_max_turns", is_error=True,
                duration_ms=4105, num_turns=2, total_cost_usd=0.2,
                modelUsage=claude_model_usage("claude-opus-4-5", 3, 52, 0, 20114, 0.2),
                permission_denials=[]))


def codex_item(event, item_id, kind, **fields):
    return {"type": event, "item": {"id": item_id, "type": kind, **fields}}


CODEX = lines(
    # Ok: pytest fails, ls succeeds; tokens 8214 of which 6912 cached, 187 out.
    {"type": "thread.started", "thread_id": "th-1"}, {"type": "turn.started"},
    codex_item("item.started", "item_1", "command_execution", command="pytest -q",
               aggregated_output="", exit_code=None, status="in_progress"),
    codex_item("item.completed", "item_1", "command_execution", command="pytest -q",
               aggregated_output="1 failed", exit_code=2, status="failed"),
    codex_item("item.started", "item_2", "command_execution", command="ls",
               aggregated_output="", exit_code=None, status="in_progress"),
    codex_item("item.completed", "item_2", "command_execution", command="ls",
               aggregated_output="a.py", exit_code=0, status="completed"),
    codex_item("item.completed", "item_3", "agent_message", text="One test fails."),
    {"type": "turn.completed",
     "usage": {"input_tokens": 8214, "cached_input_tokens": 6912, "output_tokens": 187}},
    # Failed (line 9): no usage.
    {"type": "turn.started"},
    {"type": "turn.failed", "error": {"message": "model not found"}})
CODEX_CUT = lines(  # cut off, its command pending
    {"type": "thread.started", "thread_id": "th-2"}, {"type": "turn.started"},
    codex_item("item.started", "item_1", "command_execution", command="make -j8",
               aggregated_output="", exit_code=None, status="in_progress"))

GEMINI = lines(  # ok, 3921 ms; tokens: 9323 uncached in, 12288 cached, 58 out
    {"type": "init", "timestamp": "2026-05-11T08:02:14.310Z", "session_id": "g-1",
     "model": "auto-gemini-3"},
    {"type": "message", "timestamp": "2026-05-11T08:02:14.312Z", "role": "user",
     "content": "How many TODOs?"},
    {"type": "tool_use", "timestamp": "2026-05-11T08:02:16.388Z", "tool_name": "grep_search",
     "tool_id": "grep-1", "parameters": {"pattern": "TODO"}},
    {"type": "tool_result", "timestamp": "2026-05-11T08:02:16.702Z", "tool_id": "grep-1",
     "status": "success", "output": "Found 7 matches"},
    {"type": "message", "timestamp": "2026-05-11T08:02:18.155Z", "role": "assistant",
     "content": "Seven.", "delta": True},
    {"type": "result", "timestamp": "2026-05-11T08:02:18.231Z", "status": "success",
     "stats": {"total_tokens": 21904, "input_tokens": 21611, "output_tokens": 58,
               "cached": 12288, "input": 9323, "duration_ms": 3921, "tool_calls": 1}})
GEMINI_FAILED = lines(  # a noise line; failed, 73134 ms from the timestamps, tokens all 0
    "Loaded cached credentials.",
    {"type": "init", "timestamp": "2026-05-11T09:40:02.774Z", "session_id": "g-2",
     "model": "gemini-3-pro-preview"},
    {"type": "message", "timestamp": "2026-05-11T09:40:02.776Z", "role": "user",
     "content": "Summarise"},
    {"type": "result", "timestamp": "2026-05-11T09:41:15.908Z", "status": "error",
     "error": {"type": "Error", "message": "quota"},
     "stats": {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0, "cached": 0,
               "input": 0, "duration_ms": 0, "tool_calls": 0}})

FOLDER = {
    "cursor-ok.ndjson": CURSOR_OK,
    "cursor-cut.ndjson": CURSOR_CUT,
    "cursor-failed.ndjson": CURSOR_FAILED,
    "claude.ndjson": CLAUDE,
    "codex.ndjson": CODEX,
    "codex-cut.ndjson": CODEX_CUT,
    "gemini.ndjson": GEMINI,
    "gemini-failed.ndjson": GEMINI_FAILED,
    "empty.ndjson": b"",
}

# Counted by hand.  Durations: 1500, 700, 6240, 4105, 3921, 73134 (Codex has none);
# tokens of the six runs that report them (input: 100 + 8 + 300 + 3 + 1302 + 9323 + 0).
SUMMARY = {
    "runs": {"total": 10, "ok": 4, "failed": 4, "cutoff": 2},
    "inputs_without_run": 1,
    "duration_ms": {"runs": 6, "total": 89600, "median": 3921, "p95": 73134},
    "tokens": {"runs": 6, "input": 11036, "cacheRead": 51401, "cacheWrite": 22148,
               "output": 418},
    "cost_usd": {"runs": 2, "total": 0.1 + 0.2},
    "tool_calls": 10,
    "tools": {"read": {"success": 1, "error": 1, "pending": 1},
              "write": {"permissionDenied": 1},
              "shell": {"success": 1, "failure": 3, "pending": 1},
              "grep": {"success": 1}},
    "failed_commands": [{"command": "make lint", "count": 1},
                        {"command": "npm test", "count": 1},
                        {"command": "pytest -q", "count": 1}],
}
NOISE_WARNING = "gemini-failed.ndjson:1: warning: skipped: "


@pytest.fixture
def folder(tmp_path):
    """The mixed folder's files, in the order above."""
    paths = []
    for name, data in FOLDER.items():
        path = tmp_path / name
        path.write_bytes(data)
        paths.append(path)
    return paths


def records(out):
    return [orjson.loads(line) for line in out.splitlines()]


def within_a_percent(found, exact):
    return abs(found - exact) <= exact / 100 + 0.5


# Done when 1: the hand count.


def test_the_summary_matches_the_hand_count(call, folder):
    status, out, err = call(main, "--format", "ndjson", *folder)
    assert status == 0
    assert err.count("\n") == 1 and NOISE_WARNING in err  # the noise line
    [found] = records(out)
    duration = found["duration_ms"]
    assert within_a_percent(duration["median"], 3921)
    assert within_a_percent(duration["p95"], 73134)
    duration["median"], duration["p95"] = 3921, 73134
    assert found == SUMMARY


def test_quiet_says_nothing_and_the_default_is_the_text_wherever_the_output_goes(call,
                                                                                folder):
    status, out, err = call(main, "-q", *folder)
    assert (status, err) == (0, "")
    assert out.decode().startswith("runs         10: 4 ok, 4 failed, 2 cut off\n")
    assert out == on_a_terminal("stats", "-q", *folder)


def test_one_record_per_run_with_its_file_and_line(call, folder):
    status, out, _ = call(main, "-q", "--format", "ndjson", "--by", "run", *folder)
    assert status == 0
    found = records(out)
    where = [(os.path.basename(record["source"]), record["line"], record["outcome"])
             for record in found]
    assert where == [
        ("cursor-ok.ndjson", 1, "ok"), ("cursor-cut.ndjson", 1, "cutoff"),
        ("cursor-failed.ndjson", 1, "failed"), ("claude.ndjson", 1, "ok"),
        ("claude.ndjson", 7, "failed"), ("codex.ndjson", 1, "ok"),
        ("codex.ndjson", 9, "failed"), ("codex-cut.ndjson", 1, "cutoff"),
        ("gemini.ndjson", 1, "ok"), ("gemini-failed.ndjson", 2, "failed")]
    claude_ok = found[3]
    assert claude_ok == {
        "agent": "claude", "model": "claude-sonnet-4-5", "session_id": "cl-1",
        "source": str(folder[3]), "line": 1, "outcome": "ok", "duration_ms": 6240,
        "tokens": {"input": 308, "cacheRead": 32151, "cacheWrite": 2029, "output": 101},
        "cost_usd": 0.1, "tokens_from": "run", "tool_calls": 2,
        "tools": {"write": {"permissionDenied": 1}, "shell": {"failure": 1}}}
    # The figures are the end events' own; a cut-off run has none.
    assert found[5]["tokens"] == {"input": 1302, "cacheRead": 6912, "cacheWrite": 0,
                                  "output": 187}
    assert (found[5]["agent"], found[5]["model"], found[5]["duration_ms"]) == ("codex", None,
                                                                              None)
    assert found[8]["tokens"] == {"input": 9323, "cacheRead": 12288, "cacheWrite": None,
                                  "output": 58}
    assert found[9]["duration_ms"] == 73134
    assert found[1]["tools"] == {"read": {"pending": 1}}
    assert [found[1][name] for name in ("duration_ms", "tokens", "cost_usd")] == [None] * 3


def test_groups_by_agent_model_and_file(call, folder):
    _, out, _ = call(main, "-q", "--format", "ndjson", "--by", "agent", *folder)
    by_agent = {record["agent"]: record for record in records(out)}
    assert list(by_agent) == ["claude", "codex", "cursor", "gemini", None]
    assert [by_agent[name]["runs"]["total"] for name in by_agent] == [2, 3, 3, 2, 0]
    assert by_agent[None]["inputs_without_run"] == 1
    assert by_agent["claude"]["cost_usd"] == {"runs": 2, "total": 0.1 + 0.2}
    _, out, _ = call(main, "-q", "--format", "ndjson", "--by", "model", *folder)
    assert [record["model"] for record in records(out)] == [
        "auto-gemini-3", "claude-opus-4-5", "claude-sonnet-4-5", "gemini-3-pro-preview",
        "gpt-5", None]
    _, out, _ = call(main, "-q", "--format", "ndjson", "--by", "file", *folder)
    found = records(out)
    assert [record["source"] for record in found] == list(map(str, folder))
    assert [record["runs"]["total"] for record in found] == [1, 1, 1, 2, 2, 1, 1, 1, 0]


def test_tool_calls_are_counted_as_ndagent_tools_prints_them(call, folder):
    """But for the denial that only the Claude result tells."""
    from ndagent.cmd_tools import main as tools

    counted = {}
    for path in folder:
        for record in records(call(tools, "-q", path)[1]):
            kind = counted.setdefault(record["kind"], {})
            kind[record["status"]] = kind.get(record["status"], 0) + 1
    assert counted["write"] == {"error": 1}
    counted["write"] = {"permissionDenied": 1}
    assert counted == {kind: dict(outcomes) for kind, outcomes in SUMMARY["tools"].items()}


@needs_corpus
def test_the_real_captures_count_as_tools_prints_them(call):
    from ndagent.cmd_tools import main as tools

    for path in corpus_files():
        [figures] = records(call(main, "--format", "ndjson", path)[1])
        calls = records(call(tools, path)[1])
        assert figures["runs"]["ok"] == 1
        assert figures["tool_calls"] == len(calls) > 0


# The forms.


def test_text_on_a_terminal(folder):
    text = on_a_terminal("stats", "-q", *folder).decode()
    assert text.splitlines()[:2] == ["runs         10: 4 ok, 4 failed, 2 cut off",
                                     "no run       1 input"]
    assert "cost         $0.3000 (2 runs)" in text
    assert "  shell        5: 1 success, 3 failure, 1 pending" in text
    assert text.endswith("failed commands, most frequent first\n"
                         "          1  make lint\n          1  npm test\n"
                         "          1  pytest -q\n")
    runs = on_a_terminal("stats", "-q", "--by", "run", *folder).decode().splitlines()
    assert runs[3] == (f"{folder[3]}:1: claude claude-sonnet-4-5 ok, 6.2 s, 308 in / 101 out "
                       "/ 32,151 cache read / 2,029 cache write tokens, $0.1000, 2 tool calls "
                       "(1 failure, 1 permissionDenied)")
    agents = on_a_terminal("stats", "-q", "--by", "agent", *folder).decode()
    assert agents.startswith("agent claude\n  runs         2: 1 ok, 1 failed, 0 cut off\n")
    assert "\n\nagent (none)\n" in agents


def test_tsv_rows_have_their_header_s_columns(call, folder):
    for by in ("run", "agent", "file", None):
        argv = ["-q", "--format", "tsv", "--header", *(["--by", by] if by else []), *folder]
        status, out, _ = call(main, *argv)
        rows = [row.split("\t") for row in out.decode().splitlines()]
        assert status == 0 and len({len(row) for row in rows}) == 1
        last = dict(zip(rows[0], rows[-1]))
        if by is None:
            assert (last["runs"], last["cost_usd"]) == ("10", "0.30000000000000004")
        elif by == "run":
            assert (last["outcome"], last["duration_ms"], last["cacheWrite"]) == (
                "failed", "73134", "")


def test_stream_text_is_spelt_out_on_a_terminal(write):
    evil = "\x1b]0;owned\x07\u202e"
    path = write(lines({**CURSOR_INIT, "model": "m" + evil}, CURSOR_USER,
                       tool_event("started", "c1", "shellToolCall", {"command": "rm" + evil}),
                       tool_event("completed", "c1", "shellToolCall", {"command": "rm" + evil},
                                  "failure", {"exitCode": 1}),
                       cursor_result()))
    summary = on_a_terminal("stats", path)
    per_run = on_a_terminal("stats", "--by", "run", path)
    for shown in (summary, per_run):
        assert b"\x1b]" not in shown and "\u202e".encode() not in shown
    assert b"  rm\\x1b]0;owned\\x07\\u202e\n" in summary  # the failed command
    assert b" m\\x1b]0;owned\\x07\\u202e ok," in per_run  # the model
    json_shown = on_a_terminal("stats", "--format", "ndjson", path)
    assert b"\\u202e" in json_shown and b"\x1b]" not in json_shown


# Done when 2: partials merge into the figures of all the files.

# Runs whose floats do not add up the same in every order: 0.1 + 0.2 + 0.3 differs from
# 0.3 + 0.2 + 0.1 in doubles, so only exact sums merge to what one call prints.
FLOATS = [lines(claude_init("claude-sonnet-4-5"),
                claude_line("result", subtype="success", is_error=False,
                            duration_ms=duration, num_turns=1, result="",
                            total_cost_usd=cost,
                            modelUsage=claude_model_usage("claude-sonnet-4-5", 1, 1, 0, 0,
                                                          cost)))
          for duration, cost in ((0.5, 0.1), (12.25, 0.2), (1e6 / 3, 0.3), (7, 1e-9))]


GOLDEN = Path(__file__).resolve().parent / "golden"


def declaring_extra_figures():
    """The formats whose runs report extra figures (Format.extra_figures)."""
    return [found for found in formats.all_formats() if found.extra_figures]


def golden_inputs(found):
    return sorted((GOLDEN / found.name).glob("*/input.ndjson"))


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pool")
    paths = []
    extra = [path.read_bytes() for found in declaring_extra_figures()
             for path in golden_inputs(found)]
    for number, data in enumerate([*FOLDER.values(), *FLOATS, *extra]):
        path = folder / f"{number:02d}.ndjson"
        path.write_bytes(data)
        paths.append(path)
    return paths


STATS = InProcess()


def stats(*argv):
    status, out, err = STATS("stats", b"", "-q", "-j", "1", "--format", "ndjson", *argv)
    assert status == 0, err
    return out


WHOLE = {}  # (--by, --format) -> what stats prints over the whole pool


@settings(max_examples=examples(8, 30), deadline=None)
@given(data=st.data())
def test_partials_of_any_split_merge_into_the_whole(pool, tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("partials")
    shards = data.draw(st.lists(st.integers(0, 3), min_size=len(pool), max_size=len(pool)))
    contiguous = data.draw(st.booleans())
    if contiguous:
        shards = sorted(shards)  # a split into runs of FILEs in order
    by = data.draw(st.sampled_from([None, "agent", "model"] + (["file"] if contiguous else [])))
    form = data.draw(st.sampled_from(["ndjson", "text", "tsv"]))
    options = ["--by", by] if by else []
    partials = []
    for shard in sorted(set(shards)):
        files = [path for path, mine in zip(pool, shards) if mine == shard]
        partial = folder / f"{shard}.json"
        partial.write_bytes(stats("--partial", *options, *files))
        partials.append(partial)
    whole = WHOLE.get((by, form))
    if whole is None:
        whole = WHOLE[by, form] = stats("--format", form, *options, *pool)
    assert stats("--merge", "--format", form, *partials) == whole
    # Partials merge into a partial, which merges the same.
    merged = folder / "merged.json"
    merged.write_bytes(stats("--merge", "--partial", *partials))
    assert stats("--merge", "--format", form, merged) == whole


@pytest.mark.parametrize("found", declaring_extra_figures(), ids=lambda found: found.name)
def test_a_group_s_extra_figures_are_the_sums_of_its_runs(found):
    """Each extra figure a format declares: in each run's record as the run reports it,
    summed in its agent's group with how many runs reported it, said in --help."""
    paths = golden_inputs(found)
    runs = records(stats("--by", "run", *paths))
    told = {}
    for record in runs:
        assert record.get("extra", {}).keys() <= found.extra_figures.keys()
        for name, value in record.get("extra", {}).items():
            told.setdefault(name, []).append(value)
    assert told.keys() == found.extra_figures.keys()
    [group] = records(stats("--by", "agent", *paths))
    assert group["extra"] == {name: {"runs": len(values), "total": sum(values)}
                              for name, values in sorted(told.items())}
    text = stats("--format", "text", *paths).decode()
    for name, values in told.items():
        assert f"\n{name:<12} {sum(values):,} (" in text
    described = " ".join(run("stats", "--help").stdout.decode().split())
    for name, meaning in found.extra_figures.items():
        assert f"{name}, {' '.join(meaning.split())}" in described


def test_runs_of_agents_without_extra_figures_have_none(call, folder):
    assert all("extra" not in record
               for record in records(call(main, "-q", "--by", "run", "--format", "ndjson",
                                          *folder)[1]))


def test_memory_of_the_summary_does_not_grow_with_the_runs(write):
    """8 000 runs, each of its own duration: the partial (all the summary keeps) holds a
    histogram, not the durations."""
    import random

    rng = random.Random(1)
    run = [orjson.dumps(CURSOR_INIT) + b"\n", None]
    many = []
    for _ in range(8_000):
        run[1] = orjson.dumps(cursor_result(duration_ms=rng.randrange(1, 10**8))) + b"\n"
        many.extend(run)
    path = write(b"".join(many))
    partial = stats("--partial", path)
    [summary] = records(stats(path))
    assert summary["duration_ms"]["runs"] == 8_000
    assert len(partial) < 20_000  # the 8 000 durations alone take 60 000 bytes


def test_the_median_is_within_a_percent(write):
    durations = [1, 2, 3, 40, 999, 1000, 1001, 5000, 123456, 7654321]
    path = write(b"".join(lines(CURSOR_INIT, cursor_result(duration_ms=duration))
                          for duration in durations))
    for count in range(1, len(durations) + 1):
        part = write(b"".join(lines(CURSOR_INIT, cursor_result(duration_ms=duration))
                              for duration in durations[:count]))
        [found] = records(stats(part))
        exact = sorted(durations[:count])
        median, p95 = exact[-(-count // 2) - 1], exact[-(-count * 95 // 100) - 1]
        assert within_a_percent(found["duration_ms"]["median"], median)
        assert within_a_percent(found["duration_ms"]["p95"], p95)
        assert min(exact) <= found["duration_ms"]["median"] <= found["duration_ms"]["p95"] \
            <= max(exact)
    assert records(stats(path))[0]["duration_ms"]["total"] == sum(durations)
    # One run: the figures are its own.
    [one] = records(stats(write(lines(CURSOR_INIT, cursor_result(duration_ms=3921)))))
    assert (one["duration_ms"]["median"], one["duration_ms"]["p95"]) == (3921, 3921)


BAD_PARTIALS = [
    (b"[1]\n", "not a partial of ndagent-stats: "),
    (b'{"x":1}\n', 'no "ndagent-stats-partial" key'),
    (b'{"ndagent-stats-partial":1,"by":null,"groups":[]}\n', "version 1"),
    (b'{"ndagent-stats-partial":2,"by":"run","groups":[]}\n', '"by" is not null'),
    (b'{"ndagent-stats-partial":2,"by":null,"groups":[[null,{}]]}\n', '"runs"'),
]


@pytest.mark.parametrize("data, message", BAD_PARTIALS)
def test_a_bad_partial_is_one_line_and_status_2(data, message, write, call):
    path = write(data)
    status, out, err = call(main, "--merge", path)
    assert (status, out) == (2, b"")
    said, no_figures = err.splitlines()
    assert said.startswith(f"ndagent-stats: {path}:1: ") and message in said
    assert no_figures.startswith("ndagent-stats: error: no figures printed")


def test_a_damaged_partial_is_refused(pool, write, call):
    good = orjson.loads(stats("--partial", *pool))
    figures = good["groups"][0][1]
    for name, value in (("duration_total", "1.5"), ("histogram", [[0, 1]]),
                        ("duration_range", [5, 1]), ("duration_range", None),
                        ("tools", {"shell": {"done": 1}}), ("no_run", -1),
                        ("cost_total", 0.5), ("failed_commands", [["x", "1"]])):
        damaged = {**good, "groups": [[None, {**figures, name: value}]]}
        status, _, err = call(main, "--merge", write(orjson.dumps(damaged)))
        assert status == 2 and f'"{name}"' in err


def test_partials_of_other_groups_do_not_merge(pool, write, call):
    by_agent = write(stats("--partial", "--by", "agent", *pool))
    summary = write(stats("--partial", *pool))
    status, _, err = call(main, "--merge", by_agent, summary)
    assert status == 2 and "a partial of the summary, not of --by agent" in err
    status, _, err = call(main, "--merge", summary, by_agent)
    assert status == 2 and "a partial of --by agent, not of the summary" in err
    status, _, err = call(main, "--merge", "--by", "model", by_agent)
    assert status == 2 and "a partial of --by agent, not of --by model" in err


# Done when 3: -j N prints the same as -j 1.


@pytest.mark.parametrize("by", [None, "run"])
def test_processes_print_what_one_process_prints(pool, by, monkeypatch):
    monkeypatch.setenv(inputs.ENVIRONMENT, "always")
    options = ["--by", by] if by else ["--keep-going"]
    files = [*pool, *pool[:3], pool[0].parent / "missing.ndjson"]
    one = run("stats", "-j", "1", *options, *files)
    assert one.returncode == 2 and one.stdout
    many = run("stats", "-j", "2", *options, *files)
    assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout,
                                                           one.stderr)


def test_standard_input_among_the_files_is_read_in_order(pool, monkeypatch):
    monkeypatch.setenv(inputs.ENVIRONMENT, "always")
    argv = [command("stats"), "-q", "--format", "ndjson", "--by", "run", *pool[:3], "-", *pool[4:]]
    outputs = [subprocess.run(argv[:1] + ["-j", jobs] + argv[1:], input=FOLDER["claude.ndjson"],
                              capture_output=True, timeout=60).stdout
               for jobs in ("1", "2")]
    assert outputs[0] == outputs[1]
    assert b'"source":"<stdin>","line":7,' in outputs[0]


def test_workers_end_with_their_parent(pool, monkeypatch):
    """Killed, or ended at Ctrl-C, the command leaves no worker behind waiting for work
    for ever with its standard output open."""
    monkeypatch.setenv(inputs.ENVIRONMENT, "always")
    import select
    import time

    process = subprocess.Popen([command("stats"), "-j", "2", *pool, "-"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        time.sleep(1)  # the workers read the FILEs, the command waits for standard input
        process.kill()
        assert select.select([process.stdout], [], [], 20)[0], "workers outlived the command"
        assert process.stdout.read() == b""
    finally:
        process.stdin.close()
        process.wait()


def test_strict_stops_at_the_first_bad_line_whatever_the_processes(pool, write):
    bad = write(CURSOR_OK + b"oops\n" + CURSOR_OK)
    files = [*pool[:4], bad, *pool[4:]]
    one = run("stats", "--strict", "-j", "1", "--format", "ndjson", "--by", "run", *files)
    two = run("stats", "--strict", "-j", "2", "--format", "ndjson", "--by", "run", *files)
    assert one.returncode == two.returncode == 1
    assert (one.stdout, one.stderr) == (two.stdout, two.stderr)
    assert len(records(one.stdout)) == 6  # the five runs before, the first of the bad file


# Statuses, options, help.


def test_exit_statuses(folder, tmp_path, write, call):
    assert call(main, "-q", *folder)[0] == 0  # failed and cut-off runs are figures
    assert call(main, write(b'{"type":"nothing"}\n'))[0] == 1
    assert call(main, tmp_path / "missing")[0] == 2
    for argv in (["--partial", "--format", "text"], ["--partial", "--by", "run"],
                 ["--merge", "--by", "run"]):
        status, out, err = STATS("stats", b"", *argv, folder[0])
        assert (status, out, err.count(b"\n")) == (2, b"", 1), argv
    for argv in (["-j", "0"], ["--top", "x"]):
        done = run("stats", *argv, folder[0])
        assert (done.returncode, done.stdout, done.stderr.count(b"\n")) == (2, b"", 1)


def test_top_prints_that_many_failed_commands(call, folder):
    for top, count in (("1", 1), ("0", 3), ("2", 2)):
        [found] = records(call(main, "-q", "--format", "ndjson", "--top", top, *folder)[1])
        assert len(found["failed_commands"]) == count


def test_help_and_the_verb(folder):
    done = run("stats", "--help")
    text = done.stdout.decode()
    assert done.returncode == 0 and text.startswith("usage: ndagent-stats ")
    assert "within 1%" in text and "examples:" in text and "exit status:" in text
    assert run(None, "stats", "-q", *folder).stdout == run("stats", "-q", *folder).stdout
