"""ndagent run's budgets (--max-cost, --max-tool-calls, --max-turns, --stop-on), what it
says of the processes an agent leaves running (--reap, --no-reap), --pty and --events,
against the fake agent (tests/fake_agents/agent.py): each budget ends the agent within
--grace of being passed, with its own status and a one-line message naming the limit and
the figure; --save holds exactly the bytes the agent wrote, and no process of the agent
is left."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import command, examples, run
from hypothesis import given, settings
from hypothesis import strategies as st
from test_run import alive, fake_agent, run_agent

from ndagent import budget, cmd_run, formats
from ndagent.model import Message, RunEnd, ToolEnd, ToolStart
from ndagent.prices import Prices

TESTS = Path(__file__).parent
GOLDEN = TESTS / "golden"
CLAUDE = GOLDEN / "claude" / "success-tools" / "input.ndjson"
SEVERAL = GOLDEN / "claude" / "several-runs" / "input.ndjson"
CODEX = GOLDEN / "codex" / "command-success" / "input.ndjson"
LINUX = sys.platform.startswith("linux")


def budget_run(tmp_path, options, stream, *behaviour):
    """``ndagent-run OPTIONS --save FILE --events FILE -- fake agent`` printing ``stream``
    a line each 0.2 s: (the finished process, the bytes saved, the lines the agent wrote,
    when ndagent ended), once it is checked that no process of the agent is left."""
    save, pids, written = tmp_path / "saved", tmp_path / "pids", tmp_path / "written"
    done = subprocess.run([command("run"), *options, "--save", save, "--events",
                           tmp_path / "events", "--", *fake_agent(
                               stream, "--every", "0.2", "--written", written, *behaviour,
                               pids=pids)], capture_output=True, timeout=60)
    ended = time.time()
    assert not [pid for pid in pids.read_text().split() if alive(pid)]
    lines = [json.loads(line)[1] for line in written.read_text().splitlines()]
    return done, save.read_bytes(), "".join(lines).encode(), ended


def arrival(tmp_path, number):
    """When line ``number`` of the output arrived (--events)."""
    for line in (tmp_path / "events").read_text().splitlines():
        record = json.loads(line)
        if record["line"] == number:
            return record["t"]
    raise AssertionError(f"no line {number}")


def line_of(stream, needle):
    """The number of the first line of ``stream`` that holds ``needle``."""
    lines = stream.read_bytes().splitlines()
    return next(number for number, line in enumerate(lines, 1) if needle in line)


@pytest.mark.parametrize("options, status, message, needle", [
    (["--stop-on", "pytest|rm -rf"], 123,
     "tool call \"python -m pytest -q\" matched --stop-on 'pytest|rm -rf': ending it",
     b'"command":"python -m pytest -q"'),
    (["--max-tool-calls", "1"], 121, "2 tool calls passed --max-tool-calls 1: ending it",
     b'"name":"Edit"'),
    (["--max-turns", "1"], 122, "2 turns passed --max-turns 1: ending it", b'"name":"Edit"'),
    (["--max-tool-calls", "2", "--max-turns", "5", "--max-cost", "9"], 121,
     "3 tool calls passed --max-tool-calls 2: ending it", b'"name":"Bash"'),
])
def test_a_budget_passed_mid_run_ends_the_agent_at_once(tmp_path, options, status, message,
                                                        needle):
    """The agent ignores SIGTERM: it is killed --grace after the line that passed the
    budget arrived, and prints no line after it but those already on their way."""
    done, saved, written, ended = budget_run(tmp_path, [*options, "--grace", "0.5"], CLAUDE,
                                             "--then", "hang", "--ignore-term")
    assert done.returncode == status
    assert f"ndagent-run: {sys.executable}: error: {message}\n".encode() in done.stderr
    assert saved == written and CLAUDE.read_bytes().startswith(saved)
    passed_at = arrival(tmp_path, line_of(CLAUDE, needle))
    assert 0.5 <= ended - passed_at < 0.5 + 2.5  # killed at --grace (slack for a busy host)
    assert len(saved.splitlines()) < len(CLAUDE.read_bytes().splitlines())


def test_a_cost_known_at_a_run_s_end_ends_the_next_run(tmp_path):
    """Claude reports a run's cost at its end: the run that passed --max-cost is over,
    and the agent, which begins another, is ended as it does (status 120)."""
    done, saved, written, _ = budget_run(tmp_path, ["--max-cost", "0.02", "--grace", "5"],
                                         SEVERAL, "--then", "hang")
    assert done.returncode == budget.COST == 120
    assert (b"error: cost $0.025 passed --max-cost 0.02, at the end of its run: no other run "
            b"may begin\n") in done.stderr
    assert b"warning: began another run after its budget was passed: ending it" in done.stderr
    assert saved == written and SEVERAL.read_bytes().startswith(saved)
    assert saved.count(b'"type":"result"') == 1  # the second run was not let finish


def test_a_cost_passed_at_the_end_of_the_only_run_is_its_status(tmp_path):
    """The agent exits by itself after its run: its cost passed --max-cost all the same."""
    done, saved, written, _ = budget_run(tmp_path, ["--max-cost", ".01"], CLAUDE)
    assert done.returncode == 120 and saved == written == CLAUDE.read_bytes()
    assert b"cost $0.03 passed --max-cost 0.01, at the end" in done.stderr


@pytest.mark.parametrize("show", [*cmd_run.SHOWN_VERBS, "none"])
@pytest.mark.parametrize("agent", [each.name for each in formats.all_formats()
                                   if each.reports_cost])
def test_the_cost_at_a_run_s_end_counts_whatever_the_verb_shown(tmp_path, agent, show):
    """The run's figures are read for --max-cost even where the verb shown prints none
    of them (the calls of tools, of text)."""
    stream = GOLDEN / agent / "success-tools" / "input.ndjson"
    done, saved = run_agent(tmp_path, ["--show", show, "--max-cost", "0.001"], stream)
    assert done.returncode == budget.COST and saved == stream.read_bytes()
    assert b"passed --max-cost 0.001, at the end of its run" in done.stderr


@pytest.mark.parametrize("options, warning", [
    (["--max-cost", "1"], b"Codex CLI's stream reports no cost: --max-cost cannot end it"),
    (["--max-turns", "0"], b"its stream names no model response of some tool calls: "
                           b"--max-turns counts no turn of theirs")])
def test_a_budget_the_stream_cannot_tell_is_a_warning(tmp_path, options, warning):
    done, saved, _, _ = budget_run(tmp_path, options, CODEX)
    assert done.returncode == 0 and saved == CODEX.read_bytes()
    assert done.stderr.count(warning) == 1


@pytest.mark.parametrize("agent", ["cursor", "copilot", "opencode", "codex", "gemini"])
def test_prices_ask_nothing_of_a_stream_that_gives_no_message_s_tokens(tmp_path, agent):
    """--prices needs the Message events only of the formats that make them: the others
    read their streams as without it."""
    stream = sorted((GOLDEN / agent).glob("*/input.ndjson"))[0]
    table = TESTS / "fixtures" / "prices" / "litellm-sample.json"
    done, saved, _, _ = budget_run(tmp_path, ["--max-cost", "1000", "--prices", table],
                                   stream)
    assert b"Traceback" not in done.stderr and saved == stream.read_bytes()
    assert done.returncode in (0, 1)


def test_under_a_budget_the_status_is_the_run_s(tmp_path):
    done, _, _, _ = budget_run(tmp_path, ["--max-cost", "1", "--max-tool-calls", "3",
                                          "--max-turns", "3", "--stop-on", "rm -rf"], CLAUDE)
    assert (done.returncode, done.stderr) == (0, b"")


def test_show_prints_the_verb_s_output_for_what_was_saved(tmp_path):
    """A budget adds the tool calls to what the stream is read for: what --show prints
    is still what the verb prints for the saved stream."""
    done, _, _, _ = budget_run(tmp_path, ["--show", "result", "--stop-on", "pytest", "-q"],
                               CLAUDE, "--then", "hang")
    assert done.stdout == run("result", tmp_path / "saved").stdout


# The budgets, on model events.

@settings(max_examples=examples(30, 100), deadline=None)
@given(st.lists(st.booleans(), max_size=30), st.booleans(), st.randoms())
def test_each_call_counts_once_whether_its_start_its_end_or_both_are_shown(
        ends, starts, random):
    """Calls interleaved in any order, each start before its end, in a stream that shows
    every call's start (and some ends) or only ends: each call counts once, and each
    model response once."""
    events = [[] for _ in ends]
    for index, end in enumerate(ends):
        response = f"m{index // 2}"
        if starts:
            events[index].append(ToolStart(call_id=f"c{index}", model_call_id=response))
        if end or not starts:
            events[index].append(ToolEnd(call_id=f"c{index}", model_call_id=response))
    counted = budget.Budget()
    while any(events):
        call = random.choice([each for each in events if each])
        assert counted.call(call.pop(0)) is None
    assert counted.calls == len(ends)
    assert counted.turns == len({index // 2 for index in range(len(ends))})


def test_a_budget_is_passed_by_the_call_after_its_limit():
    limits = budget.Budget(max_tool_calls=2, max_turns=1, stop_on=re.compile("rm -rf"))
    first = ToolStart(call_id="a", model_call_id="m1", target="ls")
    assert limits.call(first) is None
    assert limits.call(ToolEnd(call_id="a")) is None
    assert limits.call(ToolStart(call_id="b", model_call_id="m1", target="rm -rf /")) == (
        123, "tool call \"rm -rf /\" matched --stop-on 'rm -rf'")
    assert limits.call(ToolStart(call_id="c", model_call_id="m2")) == (
        121, "3 tool calls passed --max-tool-calls 2")
    assert budget.Budget(max_turns=1).call(ToolStart(call_id="c", model_call_id="m2")) is None


@pytest.mark.parametrize("costs, limit, said", [
    ([0.0251007, 0.0166832], 0.04, "cost $0.041 passed --max-cost 0.04"),
    ([5.124], 5, "cost $5.12 passed --max-cost 5.00"),
    ([0.0051], 0.005, "cost $0.0051 passed --max-cost 0.005")])
def test_the_cost_is_the_runs_own_added_up(costs, limit, said):
    limits = budget.Budget(max_cost=limit)
    found = [limits.run_ended(RunEnd(cost_usd=cost)) for cost in costs]
    assert found[:-1] == [None] * (len(costs) - 1) and found[-1] == (120, said)
    assert limits.run_ended(RunEnd(cost_usd=None)) == (120, said)


# Sonnet 4.5's prices, under the name the golden streams give the model.
SONNET = "claude-sonnet-4-5-20250929"
PRICES = {SONNET: {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
                   "cache_creation_input_token_cost": 3.75e-06,
                   "cache_read_input_token_cost": 3e-07}}
SAMPLE_PRICES = TESTS / "fixtures" / "prices" / "litellm-sample.json"


def test_an_estimate_passed_mid_run_ends_the_agent_at_the_message_that_passed_it(tmp_path):
    """With --prices, each message is priced as it arrives: the second message of the
    run (line 5; $0.0132 then $0.0062) passes $0.015, and the agent, which ignores
    SIGTERM, is killed --grace after that line, long before the result's cost."""
    table = tmp_path / "prices.json"
    table.write_text(json.dumps(PRICES))
    done, saved, written, ended = budget_run(
        tmp_path, ["--max-cost", "0.015", "--prices", table, "--grace", "0.5"], CLAUDE,
        "--then", "hang", "--ignore-term")
    assert done.returncode == budget.COST
    assert (f"ndagent-run: {sys.executable}: error: estimated cost $0.019 (--prices) passed "
            "--max-cost 0.015: ending it\n").encode() in done.stderr
    assert saved == written and CLAUDE.read_bytes().startswith(saved)
    passed_at = arrival(tmp_path, line_of(CLAUDE, b"msg_014ngiVf5yi66EwALraonEbw"))
    assert 0.5 <= ended - passed_at < 0.5 + 2.5
    assert b'"type":"result"' not in saved


def test_a_model_the_table_does_not_price_is_said_once_and_the_reported_cost_counts(
        tmp_path):
    done, saved, _, _ = budget_run(tmp_path, ["--max-cost", ".01", "--prices",
                                              SAMPLE_PRICES], CLAUDE)
    warning = (f'warning: --prices has no price for model "{SONNET}": its messages are not '
               "counted").encode()
    assert done.stderr.count(warning) == 1
    assert done.returncode == 120 and saved == CLAUDE.read_bytes()
    assert b"error: cost $0.03 passed --max-cost 0.01, at the end" in done.stderr


def test_a_run_s_reported_cost_replaces_the_estimate_of_its_messages():
    limits = budget.Budget(max_cost=1, prices=Prices(PRICES))
    usage = {"input": 0, "cacheRead": 0, "cacheWrite": 0, "output": 40000}  # $0.60
    assert limits.message(Message(model=SONNET, usage=usage)) is None
    assert limits.run_ended(RunEnd(cost_usd=0.25)) is None  # $0.25, not $0.85
    assert limits.message(Message(model=SONNET, usage=usage)) is None
    assert limits.message(Message(model="gpt-0", usage=usage)) is None  # not counted
    assert limits.unpriced == "gpt-0"
    assert limits.run_ended(RunEnd(cost_usd=None)) is None  # $0.85: its estimate stays
    assert limits.message(Message(model=SONNET, usage=usage)) == (
        120, "estimated cost $1.45 (--prices) passed --max-cost 1.00")


def test_the_price_table_must_be_readable(tmp_path):
    table = tmp_path / "prices.json"
    table.write_text("[1]")
    done = run("run", "--max-cost", "1", "--prices", table, "--", "true")
    assert done.returncode == 2 and b"--prices" in done.stderr and b"not a table" in done.stderr


def test_help_says_which_agents_report_their_cost_from_their_formats():
    text = " ".join(run("run", "--help").stdout.decode().split())
    reporting = [each.title for each in formats.all_formats() if each.reports_cost]
    assert reporting
    said = text.split("--max-cost USD", 1)[1].split("--max-tool-calls")[0]
    for each in formats.all_formats():
        assert (each.title in said) == each.reports_cost, each.name
    for status in ("120", "121", "122", "123"):
        assert f" {status} " in text


def test_a_format_whose_runs_carry_a_cost_declares_it():
    """The data --max-cost's help is made of: an agent whose golden runs have a cost
    says that it reports one."""
    for each in formats.all_formats():
        inputs = sorted((GOLDEN / each.name).glob("*/input.ndjson"))
        if not inputs:
            continue
        records = run("stats", "--by", "run", "--format", "ndjson", "--agent", each.name,
                      "-q", *inputs).stdout.splitlines()
        costs = [json.loads(record).get("cost_usd") for record in records]
        assert any(cost is not None for cost in costs) == each.reports_cost, each.name


@pytest.mark.parametrize("argv", [
    ["--max-cost", "five", "--", "true"], ["--max-cost", "-1", "--", "true"],
    ["--max-tool-calls", "1.5", "--", "true"], ["--stop-on", "(", "--", "true"],
    ["--no-reap=x", "--", "true"]])
def test_usage_errors(argv, capfd):
    with pytest.raises(SystemExit) as exit:
        cmd_run.main(argv)
    err = capfd.readouterr().err
    assert exit.value.code == 2
    assert err.startswith("ndagent-run: ") and err.count("\n") == 1


# What the agent leaves running.

def left(stderr):
    return [int(pid) for pid in re.findall(rb"warning: left running: pid (\d+) ", stderr)]


@pytest.mark.skipif(not LINUX, reason="Linux's subreaper finds a double fork's process")
@pytest.mark.parametrize("reap", [[], ["--reap"], ["--no-reap"], ["--no-reap", "--reap"]])
def test_a_double_forked_process_in_a_session_of_its_own_is_said_and_reaped(tmp_path, reap):
    pids = tmp_path / "pids"
    done = subprocess.run([command("run"), *reap, "--grace", "0.3", "--", *fake_agent(
        CLAUDE, "--double-fork", pids=pids)], capture_output=True, timeout=60)
    agent, grandchild = map(int, pids.read_text().split())
    try:
        assert done.returncode == 0
        assert left(done.stderr) == [grandchild]
        said = re.search(rb'left running: pid \d+ "(.*)"(: ending it)?\n', done.stderr)
        assert said[1].startswith(sys.executable.encode() + b" ")
        reaped = reap != ["--no-reap"]
        assert (said[2] is not None, alive(grandchild)) == (reaped, not reaped)
    finally:
        if alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


def test_quiet_says_nothing_left_and_still_reaps(tmp_path):
    pids = tmp_path / "pids"
    done = subprocess.run([command("run"), "-q", "--grace", "0.3", "--", *fake_agent(
        CLAUDE, "--escape", "--then", "hang", pids=pids)], capture_output=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")
    assert not [pid for pid in pids.read_text().split() if alive(pid)]


# Where the processes that leave the agent's session do not come back to ndagent (macOS),
# the agent's descendants are looked at while it runs: a script that runs run's main with
# the subreaper off shows what is found then.
WITHOUT_SUBREAPER = ("import sys\n"
                     "from ndagent import cmd_run, processes\n"
                     "processes.adopt_orphans = lambda adopt=True: False\n"
                     "sys.exit(cmd_run.main(sys.argv[1:]))\n")


@pytest.mark.parametrize("behaviour, found", [
    (["--escape", "--then", "hang"], True), (["--double-fork"], False)])
def test_without_a_subreaper_what_is_seen_descending_from_the_agent_is_found(
        tmp_path, behaviour, found):
    """A process in a session of its own whose parent, the agent, lives until it is
    ended is found; one whose parent exited at once (a double fork) is not."""
    pids = tmp_path / "pids"
    done = subprocess.run([sys.executable, "-c", WITHOUT_SUBREAPER, "--grace", "0.3", "--",
                           *fake_agent(CLAUDE, *behaviour, pids=pids)],
                          capture_output=True, timeout=60)
    escaped = int(pids.read_text().split()[-1])
    try:
        assert done.returncode == 0
        assert left(done.stderr) == ([escaped] if found else [])
        assert alive(escaped) != found
    finally:
        if alive(escaped):
            os.kill(escaped, signal.SIGKILL)


# --pty and --events.

@pytest.mark.parametrize("pty", [True, False])
def test_pty_lets_an_agent_that_holds_its_output_on_a_pipe_stream_it(tmp_path, pty):
    """The agent holds its output in 4 KiB blocks on a pipe, and writes each line as it
    comes on a terminal: under --pty each line arrives within 100 ms of being written
    (--events says when), without it some do not; the bytes are the same."""
    stream = tmp_path / "stream"
    # A line ending in \r\n, and a last line with no end: saved as they are.
    stream.write_bytes(CLAUDE.read_bytes().replace(b"\n", b"\r\n", 1) + b'{"type":"x"}')
    written = tmp_path / "written"
    done = subprocess.run([command("run"), *(["--pty"] * pty), "--show", "raw", "-q",
                           "--events", tmp_path / "events", "--",
                           *fake_agent(stream, "--every", "0.15", "--blocks", "--written",
                                       written)], capture_output=True, timeout=60)
    assert done.stdout == stream.read_bytes()
    sent = [json.loads(line)[0] for line in written.read_text().splitlines()]
    events = [json.loads(line) for line in (tmp_path / "events").read_text().splitlines()]
    assert [event["line"] for event in events] == list(range(1, len(sent) + 1))
    late = [round(event["t"] - at, 3) for event, at in zip(events, sent)]
    assert all(delay < 0.1 for delay in late) == pty, late


def test_events_are_one_object_a_line_in_order(tmp_path):
    events = tmp_path / "events"
    done = run("run", "--events", events, "--show", "none", "--", *fake_agent(CLAUDE))
    assert done.returncode == 0
    records = [json.loads(line) for line in events.read_text().splitlines()]
    assert [record["line"] for record in records] == list(
        range(1, CLAUDE.read_bytes().count(b"\n") + 1))
    times = [record["t"] for record in records]
    assert times == sorted(times) and abs(times[0] - time.time()) < 60
    assert all(set(record) == {"line", "t"} for record in records)


def test_the_events_file_cannot_be_the_output_file(tmp_path):
    output = tmp_path / "out"
    with open(output, "wb") as handle:
        done = subprocess.run([command("run"), "--events", output, "--", "true"],
                              stdout=handle, stderr=subprocess.PIPE, timeout=30)
    assert done.returncode == 2 and b"the --events file is the output file" in done.stderr


def test_the_events_file_cannot_be_the_save_file(tmp_path):
    saved = tmp_path / "run.ndjson"
    saved.write_bytes(b"kept\n")
    os.link(saved, tmp_path / "also.ndjson")
    for events in (saved, tmp_path / "." / "run.ndjson", tmp_path / "also.ndjson"):
        done = subprocess.run([command("run"), "--save", saved, "--events", events, "--",
                               *fake_agent(CLAUDE)], capture_output=True, timeout=30)
        assert done.returncode == 2 and done.stderr.endswith(
            b"error: the --events file is the --save file\n")
        assert saved.read_bytes() == b"kept\n"  # not even opened


def test_an_events_file_that_cannot_be_written_is_status_2(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    done = subprocess.run([command("run"), "--show", "raw", "--events", "/dev/full", "--",
                           *fake_agent(CLAUDE)], capture_output=True, timeout=30)
    assert done.returncode == 2 and b"/dev/full: error: cannot write" in done.stderr
    assert done.stdout == CLAUDE.read_bytes()  # the stream is shown all the same


def test_prices_without_a_cost_limit_is_a_usage_error():
    """--prices is read for --max-cost only: alone it would be silently ignored."""
    done = run("run", "--prices", SAMPLE_PRICES, "--", "true")
    assert done.returncode == 2
    assert b"--prices" in done.stderr and b"--max-cost" in done.stderr
    assert done.stderr.count(b"\n") <= 3 and done.stdout == b""



def test_stop_on_searches_a_long_target_at_both_ends():
    """In a call's target longer than twice STOP_ON_CHARS, the pattern is searched in
    its first and last STOP_ON_CHARS: a pattern may take time in the square of what it
    searches (``curl.*\\|\\s*sh`` over 1 MB of "curl " took minutes, the agent
    unwatched meanwhile)."""
    from ndagent.budget import STOP_ON_CHARS, _searched

    pattern = re.compile(r"curl.*\|\s*sh")
    padding = "x" * (3 * STOP_ON_CHARS)
    assert _searched(pattern, "curl a | sh " + padding)
    assert _searched(pattern, padding + " curl a | sh")
    assert not _searched(pattern, padding + " curl a | sh " + padding)
    assert not _searched(pattern, "curl " * 200_000)
