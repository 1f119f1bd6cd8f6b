"""ndagent run, against fake agents (tests/fake_agents/agent.py) that finish, hang after
their run, stall, fail, ignore SIGTERM or leave a process that holds their output: each
run ends within its limits with the status the run deserves, no process of the agent's
group is left, --save holds exactly the bytes the agent printed, and --show prints what
the verb prints for the saved file."""

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import command, on_a_terminal, run
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent import cmd_run, supervise

TESTS = Path(__file__).parent
AGENT = TESTS / "fake_agents" / "agent.py"
STREAMS = {agent: TESTS / "golden" / agent / case / "input.ndjson" for agent, case in (
    ("cursor", "vendor-example"), ("claude", "success-tools"), ("codex", "command-success"),
    ("gemini", "tool-success"))}
CURSOR = STREAMS["cursor"]
GRACE = ("--grace", "0.2")


def fake_agent(stream, *behaviour, pids=None):
    """The command line of the fake agent printing ``stream``."""
    found = [sys.executable, str(AGENT), str(stream), *behaviour]
    return found + (["--pids", str(pids)] if pids is not None else [])


def alive(pid):
    """Whether process ``pid`` runs (a zombie does not: it has ended, and only waits for
    its parent, which may be an init that never collects it)."""
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True,
                           text=True).stdout.strip()
    return state != "" and not state.startswith("Z")


def run_agent(tmp_path, options, stream, *behaviour):
    """``ndagent-run OPTIONS --save FILE -- fake agent``: (the finished process, the
    bytes saved), once it is checked that none of the agent's processes is left."""
    save, pids = tmp_path / "saved.ndjson", tmp_path / "pids"
    done = subprocess.run([command("run"), *options, "--save", save, "--",
                           *fake_agent(stream, *behaviour, pids=pids)],
                          capture_output=True, timeout=30)
    started = pids.read_text().split()
    assert started and not [pid for pid in started if alive(pid)]
    return done, save.read_bytes()


@pytest.mark.parametrize("agent", STREAMS)
def test_an_agent_that_hangs_after_its_run_is_ended_and_the_run_is_a_success(tmp_path,
                                                                             agent):
    done, saved = run_agent(tmp_path, GRACE, STREAMS[agent], "--then", "hang")
    assert done.returncode == 0
    assert saved == STREAMS[agent].read_bytes()
    assert done.stdout == run("result", tmp_path / "saved.ndjson").stdout != b""
    assert b"still running 0.2s after its run was over: ending it" in done.stderr


# Lines an agent may print after its result: an empty object, a user line, a late
# thinking event, another agent's item.
LATE_LINES = (b"{}", b'{"type":"user"}', b'{"type":"thinking","subtype":"delta","text":"x"}',
              b'{"type":"item.completed","item":{"id":"i","type":"reasoning","text":"x"}}')


def with_late_line(tmp_path, agent, late):
    stream = tmp_path / "late.ndjson"
    stream.write_bytes(STREAMS[agent].read_bytes() + late + b"\n")
    return stream


@pytest.mark.parametrize("late", LATE_LINES)
@pytest.mark.parametrize("agent", STREAMS)
def test_a_line_after_the_result_does_not_keep_a_hanging_agent_alive(tmp_path, agent, late):
    done, _ = run_agent(tmp_path, GRACE, with_late_line(tmp_path, agent, late), "--then",
                        "hang")
    assert b"still running 0.2s after its run was over: ending it" in done.stderr
    assert done.returncode == run("result", tmp_path / "saved.ndjson").returncode


@pytest.mark.parametrize("agent", STREAMS)
def test_a_limit_after_a_late_line_leaves_the_status_to_the_run(tmp_path, agent):
    stream = with_late_line(tmp_path, agent, b"{}")
    done, _ = run_agent(tmp_path, ["--timeout", "0.3", "--grace", "30"], stream, "--then",
                        "hang")
    assert b"(--timeout)" in done.stderr
    assert done.returncode == run("result", tmp_path / "saved.ndjson").returncode != 124


@pytest.mark.parametrize("agent, show", [
    ("cursor", ["result"]), ("claude", ["result"]), ("cursor", ["text", "-v"]),
    ("claude", ["text", "-v"]), ("codex", ["tools", "-k", "shell"]), ("gemini", ["json"])])
def test_show_prints_what_the_verb_prints_for_the_saved_stream(tmp_path, agent, show):
    done, saved = run_agent(tmp_path, ["--show", *show], STREAMS[agent])
    assert (done.returncode, done.stderr) == (0, b"")
    assert saved == STREAMS[agent].read_bytes()
    assert done.stdout == run(*show, tmp_path / "saved.ndjson").stdout != b""


def test_raw_shows_the_stream_and_none_nothing(tmp_path):
    raw, saved = run_agent(tmp_path, ["--show", "raw"], CURSOR)
    assert raw.returncode == 0 and raw.stdout == saved == CURSOR.read_bytes()
    none, saved = run_agent(tmp_path, ["--show", "none"], CURSOR)
    assert none.returncode == 0 and none.stdout == b"" and saved == CURSOR.read_bytes()


def test_raw_holds_no_more_than_a_mebibyte_of_a_line_without_end(tmp_path):
    """An agent that prints 64 MB with no newline: shown as it comes, not held."""
    from conftest import peak_rss

    endless = tmp_path / "endless"
    with open(endless, "wb") as file:
        for _ in range(64):
            file.write(b"x" * (1 << 20))
    with open(os.devnull, "rb") as stdin:
        status, peak = peak_rss([command("run"), "--show", "raw", "-q", "--max-line", "1M",
                                 "--", "cat", endless], stdin)
    assert status == 1  # no event: the agent printed nothing of a stream
    assert peak < 50 << 20


def test_raw_on_a_terminal_spells_out_controls(tmp_path):
    stream = tmp_path / "hostile.ndjson"
    first, *rest = CURSOR.read_bytes().splitlines(keepends=True)
    stream.write_bytes(b"".join([first, b'{"type":"x\xe2\x80\xae"}\n\x1b[2Joops\n', *rest]))
    shown = on_a_terminal("run", "--show", "raw", "-q", "--", *fake_agent(stream), status=0)
    assert b"\x1b" not in shown and b"\xe2\x80\xae" not in shown
    assert b'"x\\u202e"}\n\\x1b[2Joops\n' in shown


@pytest.mark.parametrize("limit, message", [
    ("--idle", b"no output for 0.3s (--idle): ending it"),
    ("--timeout", b"still running 0.3s after it started (--timeout): ending it")])
def test_an_agent_silent_mid_run_is_ended_by_a_limit(tmp_path, limit, message):
    done, saved = run_agent(tmp_path, [limit, "0.3"], CURSOR, "--lines", "3", "--then", "hang")
    assert done.returncode == 124
    assert saved == b"".join(CURSOR.read_bytes().splitlines(keepends=True)[:3])
    assert message in done.stderr


def test_a_limit_after_the_run_is_over_leaves_the_status_to_the_run(tmp_path):
    done, _ = run_agent(tmp_path, ["--idle", "0.2", "--grace", "5"], CURSOR, "--then", "hang")
    assert done.returncode == 0 and b"(--idle)" in done.stderr


@pytest.mark.parametrize("status", [0, 3])
def test_an_agent_that_exits_before_its_run_is_over_fails(tmp_path, status):
    done, saved = run_agent(tmp_path, (), CURSOR, "--lines", "3", "--status", str(status))
    assert done.returncode == 1
    assert b"run ended without a result event" in done.stderr
    assert (f"exited with status {status}".encode() in done.stderr) == (status != 0)


def test_an_agent_that_exits_with_failure_after_its_run_fails(tmp_path):
    done, _ = run_agent(tmp_path, (), CURSOR, "--status", "2")
    assert done.returncode == 1 and b": exited with status 2\n" in done.stderr


def test_an_agent_that_ignores_sigterm_is_killed_and_its_run_counts(tmp_path):
    done, saved = run_agent(tmp_path, GRACE, CURSOR, "--then", "hang", "--ignore-term",
                            "--grandchild")
    assert done.returncode == 0 and saved == CURSOR.read_bytes()
    assert b"still running 0.2s after SIGTERM: killing it" in done.stderr


def test_a_process_holding_the_output_after_the_run_is_ended_at_once(tmp_path):
    done, saved = run_agent(tmp_path, ["--grace", "0.2", "-q"], CURSOR, "--grandchild")
    assert (done.returncode, done.stderr) == (0, b"")
    assert saved == CURSOR.read_bytes()


def test_a_process_holding_the_output_of_an_unfinished_run_is_ended(tmp_path):
    done, _ = run_agent(tmp_path, GRACE, CURSOR, "--lines", "3", "--grandchild")
    assert done.returncode == 1
    assert b"exited, and its output is still held open 0.2s later" in done.stderr


def test_strict_ends_the_agent_at_a_bad_line(tmp_path):
    stream = tmp_path / "bad.ndjson"
    lines = CURSOR.read_bytes().splitlines(keepends=True)
    stream.write_bytes(b"".join(lines[:2] + [b"oops\n"] + lines[2:]))
    done, _ = run_agent(tmp_path, ["--strict", *GRACE], stream, "--then", "hang")
    assert done.returncode == 1 and b":3: error: not JSON" in done.stderr


def started(process):
    """Wait for the first output of ``ndagent run --show raw`` (the agent is running)."""
    assert process.stdout.read1(65536)


@pytest.mark.parametrize("signum, status", [
    (signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGQUIT, 131), (signal.SIGUSR1, 138),
    (signal.SIGALRM, 142)])
def test_a_signal_is_passed_on_to_the_agent(tmp_path, signum, status):
    pids = tmp_path / "pids"
    process = subprocess.Popen(
        [command("run"), "--show", "raw", *GRACE, "--",
         *fake_agent(CURSOR, "--lines", "3", "--then", "hang", "--grandchild", pids=pids)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started(process)
    process.send_signal(signum)
    process.communicate(timeout=30)
    assert process.returncode == status
    assert not [pid for pid in pids.read_text().split() if alive(pid)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's subreaper only")
@pytest.mark.parametrize("behaviour", [[], ["--then", "hang"]])
def test_a_process_that_left_the_agent_s_group_is_ended_too(tmp_path, behaviour):
    """A daemon the agent started in a session of its own (setsid, as Node's detached
    spawn): it comes back to ndagent when the agent dies, and is ended with it."""
    done, saved = run_agent(tmp_path, GRACE, CURSOR, "--escape", *behaviour)
    assert done.returncode == 0 and saved == CURSOR.read_bytes()


def test_a_second_signal_kills_at_once(tmp_path):
    pids = tmp_path / "pids"
    process = subprocess.Popen(
        [command("run"), "--show", "raw", "--grace", "1h", "--",
         *fake_agent(CURSOR, "--then", "hang", "--ignore-term", pids=pids)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started(process)
    # Signals sent at once may arrive as one: send them until it ends (not in the hour
    # of --grace: on the second one it receives).
    for _ in range(300):
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0.1)
            break
    process.communicate(timeout=30)
    # (a SIGTERM sent after ndagent put its handlers back, as it exits, ends it by that
    # signal: what a shell shows as 143 too)
    assert process.returncode in (143, -signal.SIGTERM)
    assert not [pid for pid in pids.read_text().split() if alive(pid)]


def test_the_agent_is_ended_when_the_reader_of_the_output_goes_away(tmp_path):
    pids = tmp_path / "pids"
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run([command("run"), *GRACE, "--",
                               *fake_agent(CURSOR, "--then", "hang", pids=pids)],
                              stdout=writer, stderr=subprocess.PIPE, timeout=30)
    finally:
        os.close(writer)
    assert done.returncode == -signal.SIGPIPE and done.stderr == b""
    assert not [pid for pid in pids.read_text().split() if alive(pid)]


def test_a_command_that_cannot_be_run(tmp_path, call):
    missing = run("run", "--", tmp_path / "no-such-agent")
    assert missing.returncode == 127
    assert missing.stderr == (f"ndagent-run: {tmp_path}/no-such-agent: error: cannot run: "
                              "No such file or directory\n").encode()
    script = tmp_path / "agent"
    script.write_text("#!/bin/sh\n")  # not executable
    assert call(cmd_run.main, "--", script)[0] == 126
    assert call(cmd_run.main, "--", tmp_path)[0] == 126


def test_a_usage_error_is_one_line_and_status_2():
    done = run("run", "--grace", "5x", "--", "true")
    assert done.returncode == 2
    assert done.stderr == (b"ndagent-run: argument --grace: not a duration such as 90s, 10m, "
                           b"1h, 0.5s: '5x' (see 'ndagent-run --help')\n")


@pytest.mark.parametrize("argv", [
    ["--idle", "-1s", "--", "true"], ["--timeout", "1d"], [], ["--show", "text"],
    ["--show", "text", "--"], ["--show", "raw", "-v", "--", "true"],
    ["--show", "text", "--no-such", "--", "true"],
    ["--show", "frobnicate", "--", "true"]])
def test_usage_errors(argv, capfd):
    with pytest.raises(SystemExit) as exit:
        cmd_run.main(argv)
    err = capfd.readouterr().err
    assert exit.value.code == 2
    assert err.startswith("ndagent-run: ") and err.count("\n") == 1


def test_the_save_file_cannot_be_the_output_file(tmp_path):
    output = tmp_path / "out"
    output.write_bytes(b"kept")
    with open(output, "ab") as handle:
        done = subprocess.run([command("run"), "--save", output, "--", "true"],
                              stdout=handle, stderr=subprocess.PIPE, timeout=30)
    assert done.returncode == 2 and b"the --save file is the output file" in done.stderr
    assert output.read_bytes() == b"kept"


@pytest.mark.parametrize("closed", [1, 2])
def test_the_save_file_holds_the_stream_alone_when_stdout_or_stderr_is_closed(tmp_path,
                                                                              closed):
    stream = tmp_path / "bad.ndjson"
    first, *rest = CURSOR.read_bytes().splitlines(keepends=True)
    stream.write_bytes(b"".join([first, b"not json\n", *rest]))  # a warning on stderr
    save = tmp_path / "saved.ndjson"
    done = subprocess.run(["sh", "-c", f'exec "$0" "$@" {closed}>&-', command("run"), "--save",
                           save, "--", *fake_agent(stream)], capture_output=True, timeout=30)
    if closed == 2:
        assert save.read_bytes() == stream.read_bytes()
    else:  # output that cannot be written ends the agent (status 2): what came is saved
        assert done.returncode == 2 and b"write error: Bad file descriptor" in done.stderr
        assert stream.read_bytes().startswith(save.read_bytes())


def test_run_is_a_verb_of_ndagent_and_runs_in_process(tmp_path, call):
    agent = fake_agent(STREAMS["claude"])
    via_ndagent = subprocess.run([command(None), "run", "--show", "text", "--", *agent],
                                 capture_output=True, timeout=30)
    handlers = [signal.getsignal(signum) for signum in (*supervise.PASSED_ON, signal.SIGCHLD)]
    assert call(cmd_run.main, "--show", "text", "--", *agent) == (0, via_ndagent.stdout, "")
    assert via_ndagent.returncode == 0 and via_ndagent.stdout.startswith(b"Read file\n")
    # What it set for the process is put back (its signal handlers, the wakeup fd).
    assert [signal.getsignal(signum)
            for signum in (*supervise.PASSED_ON, signal.SIGCHLD)] == handlers
    assert signal.set_wakeup_fd(-1) == -1


def test_help_explains_the_limits_for_each_agent():
    text = run("run", "--help").stdout.decode()
    for option in ("--grace", "--idle", "--timeout"):
        assert f"{option} DURATION" in text
    for agent in ("cursor-agent -p --output-format stream-json",
                  "claude -p --output-format stream-json --verbose", "codex exec --json",
                  "gemini -p --output-format stream-json"):
        assert agent in text
    for status in ("124", "126", "127", "130"):
        assert f"\n  {status} " in text


@settings(max_examples=50, deadline=None)
@given(st.one_of(st.integers(0, 10**6), st.integers(0, 10**5).map(lambda n: n / 100)),
       st.sampled_from(["", "s", "m", "h"]))
def test_durations(number, unit):
    """A DURATION is its number times its unit; a duration written for a message reads
    back as itself."""
    seconds = cmd_run.duration(f"{number}{unit}")
    assert seconds == number * {"": 1, "s": 1, "m": 60, "h": 3600}[unit]
    assert cmd_run.duration(supervise.duration_text(seconds)) == seconds
