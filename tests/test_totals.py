"""Running totals: agents that report, at a run's end, what their process or thread has
used so far (Claude Code's cost and modelUsage over the runs of one process, Codex's
usage over the runs of one thread) count each run's own figures, in every verb that
prints figures, in every execution mode, and through --partial and --merge."""

import tempfile
from pathlib import Path

import orjson
import pytest
from conftest import InProcess, examples, with_parts
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from ndagent.totals import MAX_KEYS, Totals

RUN = InProcess()
MODES = ("never", "always")


def ndjson(*objects):
    return b"".join(orjson.dumps(each) + b"\n" for each in objects)


def records(out):
    return [orjson.loads(line) for line in out.splitlines()]


# Claude Code: several runs of one process (--input-format stream-json), each result
# with the process's cost and modelUsage so far, and the run's own usage.

def claude_run(session, index, cost, inputs, read, output, own_inputs=18):
    model = "claude-sonnet-4-5"
    return [
        {"type": "system", "subtype": "init", "session_id": session, "model": model,
         "cwd": "/w", "tools": ["Bash"]},
        {"type": "assistant", "session_id": session, "parent_tool_use_id": None,
         "message": {"id": f"msg_{index}", "role": "assistant", "model": model,
                     "content": [{"type": "text", "text": f"answer {index}"}]}},
        {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1000,
         "num_turns": 1, "result": f"answer {index}", "session_id": session,
         "total_cost_usd": cost, "result_index": index,
         "usage": {"input_tokens": own_inputs, "cache_read_input_tokens": 0,
                   "cache_creation_input_tokens": 0, "output_tokens": 5},
         "modelUsage": {model: {"inputTokens": inputs, "outputTokens": output,
                                "cacheReadInputTokens": read,
                                "cacheCreationInputTokens": 0, "costUSD": cost}}},
    ]


TWO_CLAUDE_RUNS = ndjson(*claude_run("s-1", 0, 0.0646556, 18, 34956, 40),
                         *claude_run("s-1", 1, 0.0837797, 36, 122657, 90))


# Codex: runs of one thread (codex exec, then codex exec resume), each turn.completed
# with the thread's usage so far; input_tokens counts the cached tokens.

def codex_run(thread, inputs, cached, output):
    return [
        {"type": "thread.started", "thread_id": thread},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
                                            "text": "done"}},
        {"type": "turn.completed", "usage": {"input_tokens": inputs,
                                             "cached_input_tokens": cached,
                                             "output_tokens": output}},
    ]


THREAD = "019a2d7b-0000-7000-8000-000000000001"
CODEX_RUNS = [codex_run(THREAD, 10000, 5888, 100), codex_run(THREAD, 20000, 11776, 200),
              codex_run(THREAD, 34000, 21760, 350)]


def stats(mode, data, *argv):
    status, out, err = with_parts(mode, "stats", data, "--format", "ndjson", *argv,
                                  runner=RUN)
    return status, records(out), err.decode()


@pytest.mark.parametrize("mode", MODES)
def test_claude_runs_of_one_process_count_their_own_cost_and_tokens(mode):
    status, [first, second], err = stats(mode, TWO_CLAUDE_RUNS, "--by", "run")
    assert status == 0 and err == ""
    assert (first["cost_usd"], second["cost_usd"]) == (0.0646556, 0.0191241)
    assert first["tokens"]["input"] == second["tokens"]["input"] == 18
    assert second["tokens"]["cacheRead"] == 122657 - 34956
    assert first["tokens_from"] == second["tokens_from"] == "run"
    status, [summary], _ = stats(mode, TWO_CLAUDE_RUNS)
    assert summary["cost_usd"]["total"] == 0.0837797
    assert summary["tokens"]["input"] == 36


def test_claude_json_is_the_agent_s_own_object():
    status, out, _ = RUN("json", TWO_CLAUDE_RUNS)
    assert [each["total_cost_usd"] for each in records(out)] == [0.0646556, 0.0837797]


@pytest.mark.parametrize("mode", MODES)
def test_a_later_run_whose_earlier_ones_are_missing_says_so_once(mode):
    later = ndjson(*claude_run("s-1", 1, 0.0837797, 36, 122657, 90),
                   *claude_run("s-2", 3, 0.5, 36, 0, 90))
    status, found, err = stats(mode, later, "--by", "run")
    assert status == 0
    assert [each["tokens_from"] for each in found] == ["process_total"] * 2
    assert [each["cost_usd"] for each in found] == [0.0837797, 0.5]
    assert err.count("warning:") == 1 and "not in the input" in err


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_codex_runs_of_one_thread_count_their_own_usage(tmp_path, mode, jobs):
    # In one FILE, and in three FILEs given together (codex exec, then two resumes,
    # each in its own FILE), with another thread's FILE between them.
    one = tmp_path / "one.ndjson"
    one.write_bytes(ndjson(*(line for run in CODEX_RUNS for line in run)))
    files = []
    for number, run in enumerate(CODEX_RUNS):
        files.append(tmp_path / f"{number}.ndjson")
        files[-1].write_bytes(ndjson(*run))
        other = tmp_path / f"{number}-other.ndjson"
        other.write_bytes(ndjson(*codex_run(f"other-{number}", 100, 0, 1)))
        files.append(other)
    for inputs in ([one], files):
        status, found, err = stats(mode, b"", "-j", jobs, "--by", "run", *inputs)
        assert status == 0 and err == ""
        mine = [each for each in found if each["session_id"] == THREAD]
        assert [each["tokens"]["cacheRead"] for each in mine] == [5888, 5888, 9984]
        assert [each["tokens"]["input"] for each in mine] == [4112, 4112, 4016]
        assert [each["tokens"]["output"] for each in mine] == [100, 100, 150]
        assert [each["tokens_from"] for each in mine] == ["thread_total", "run", "run"]
        status, [summary], _ = stats(mode, b"", "-j", jobs, *inputs)
        assert summary["tokens"]["cacheRead"] == 21760 + 3 * 0
        assert summary["tokens"]["input"] == 34000 - 21760 + (300 if inputs == files else 0)


@pytest.mark.parametrize("mode", MODES)
def test_codex_json_usage_is_the_run_s_own(mode):
    data = ndjson(*(line for run in CODEX_RUNS for line in run))
    status, out, _ = with_parts(mode, "json", data, runner=RUN)
    assert status == 0
    assert [each["usage"] for each in records(out)] == [
        {"input_tokens": 10000, "cached_input_tokens": 5888, "output_tokens": 100},
        {"input_tokens": 10000, "cached_input_tokens": 5888, "output_tokens": 100},
        {"input_tokens": 14000, "cached_input_tokens": 9984, "output_tokens": 150}]


def test_totals_that_fall_are_not_subtracted():
    data = ndjson(*codex_run(THREAD, 500, 0, 50), *codex_run(THREAD, 400, 0, 60))
    _, found, _ = stats("never", data, "--by", "run")
    assert [each["tokens"]["input"] for each in found] == [500, 400]
    assert [each["tokens_from"] for each in found] == ["thread_total"] * 2


def test_the_keys_kept_are_bounded():
    totals = Totals()
    for number in range(MAX_KEYS + 10):
        totals._remember(f"k{number}", None, {"usage": None, "cost": number, "native": None})
    assert len(totals.last) == MAX_KEYS
    assert not totals.knows("k0") and totals.knows(f"k{MAX_KEYS + 9}")
    totals._remember("big", None, {"usage": None, "cost": 1, "native": {"x" * 9000: 1}})
    assert not totals.knows("big")


# The property: however the runs are split among FILEs and the FILEs among partials
# (a thread's or a process's runs included), --merge of the partials prints what
# stats prints over all the FILEs, which is the sum of the runs' own figures.

@st.composite
def histories(draw):
    """Runs of a few Claude processes and Codex threads, interleaved, as stream lines,
    with the own figures each run used."""
    keys = draw(st.lists(st.sampled_from(["c1", "c2", "x1", "x2"]), min_size=1,
                         max_size=8))
    totals, index, runs = {}, {}, []
    for key in keys:
        used = draw(st.integers(0, 1000)), draw(st.integers(0, 1000))
        before = totals.get(key, (0, 0))
        now = before[0] + used[0], before[1] + used[1]
        totals[key] = now
        if key.startswith("c"):
            number = index.get(key, 0)
            index[key] = number + 1
            lines = claude_run(key, number, now[0] / 64, now[0], 0, now[1])
        else:
            lines = codex_run(key, now[0] + now[1], now[1], 7 * len(runs))
        runs.append(lines)
    return runs


# Few examples here, many under 'make fuzz' (NDAGENT_EXAMPLES).
@settings(max_examples=examples(5, lambda count: max(count // 10, 20)),
          deadline=None, suppress_health_check=list(HealthCheck))
@given(histories(), st.data())
def test_property_merge_of_any_split_is_stats_over_all(runs, data):
    with tempfile.TemporaryDirectory() as folder:
        _merge_of_any_split_is_stats_over_all(Path(folder), runs, data)


def _merge_of_any_split_is_stats_over_all(folder, runs, data):
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(runs)), max_size=4))))
    files, begin = [], 0
    for cut in [*cuts, len(runs)]:
        if cut > begin:
            path = folder / f"{len(files):02}.ndjson"
            path.write_bytes(ndjson(*(line for run in runs[begin:cut] for line in run)))
            files.append(path)
            begin = cut
    note(orjson.dumps([runs, cuts]).decode())
    _, [whole], _ = stats("never", b"", *files)
    _, by_run, _ = stats("never", b"", "--by", "run", *files)
    for name in ("input", "cacheRead", "output"):
        assert whole["tokens"][name] == sum(run["tokens"][name] for run in by_run)
    assert abs((whole["cost_usd"]["total"] or 0)
               - sum(run["cost_usd"] or 0 for run in by_run)) < 1e-9
    assert stats("always", b"", *files)[1] == [whole]
    shards = sorted(set(data.draw(st.lists(st.integers(1, len(files)), max_size=3))))
    partials, begin = b"", 0
    for shard in [*shards, len(files)]:
        if shard > begin:
            status, out, _ = RUN("stats", b"", "--partial", *files[begin:shard])
            assert status == 0
            partials += out
            begin = shard

    status, merged, _ = stats("never", partials, "--merge")
    assert status == 0 and merged == [whole]


def test_merge_reads_a_partial_longer_than_the_default_line_limit():
    """A partial of many groups is one long line: --merge reads what --partial wrote
    beyond 64M (S5.2 of the review)."""
    figures = {"runs": {"ok": 1, "failed": 0, "cutoff": 0}, "no_run": 0,
               "duration_runs": 0, "duration_total": "0", "duration_range": None,
               "histogram": [], "token_runs": 0, "tokens": {}, "cost_runs": 0,
               "cost_total": "0", "tools": {}, "failed_commands": []}
    groups = [[f"model-{number:02}" + "x" * (1 << 20), figures] for number in range(66)]
    line = orjson.dumps({"ndagent-stats-partial": 2, "by": "model", "groups": groups,
                         "openings": [], "totals": []}) + b"\n"
    assert len(line) > 64 << 20
    status, out, err = RUN("stats", line, "--merge", "--format", "tsv")
    assert (status, err) == (0, b"")
    assert out.count(b"\n") == 66


FIXTURE_INPUTS = sorted([*Path(__file__).parent.glob("golden/*/*/input.ndjson"),
                         *Path(__file__).parent.glob("fixtures/*.ndjson")])


@pytest.mark.parametrize("path", FIXTURE_INPUTS,
                         ids=lambda path: "/".join(path.parts[-3:-1]) or path.name)
def test_the_summary_is_the_sum_of_the_runs_own_figures(path):
    """On every fixture: the summary's tokens and cost are the sums of the --by run
    records', which are the runs' own."""
    _, [summary], _ = stats("never", b"", "-q", path)
    _, runs, _ = stats("never", b"", "-q", "--by", "run", path)
    for name in ("input", "cacheRead", "cacheWrite", "output"):
        assert (summary["tokens"][name] or 0) == sum(
            (run["tokens"] or {}).get(name) or 0 for run in runs)
    assert (summary["cost_usd"]["total"] or 0) == pytest.approx(
        sum(run["cost_usd"] or 0 for run in runs), abs=1e-12)
    # As given: a Codex thread's first run, and a Qwen Code process's, whose results
    # carry no index that would say whether earlier runs are missing.
    assert all(run["tokens_from"] in (None, "run", "thread_total")
               or (run["agent"], run["tokens_from"]) == ("qwen", "process_total")
               for run in runs)
