"""The frame, through real pipes against the installed commands: aliases, help, exit
statuses, quiet exits when the reader goes away, live output, write errors."""

import contextlib
import os
import select
import signal
import subprocess
import sys
import time

import orjson
import pytest
from conftest import command, fixture, lines_of, run

from ndagent import __version__

VENDOR = fixture("vendor-example.ndjson")
VERBS = ["json", "result", "text", "tools", "validate"]


@pytest.mark.parametrize("verb", VERBS)
def test_verb_and_executable_and_module_agree(verb):
    data = VENDOR.read_bytes()
    direct = run(verb, input=data)
    via_ndagent = subprocess.run([command(None), verb, "-"], input=data, capture_output=True)
    via_module = subprocess.run([sys.executable, "-m", "ndagent", verb], input=data,
                                capture_output=True)
    assert direct.returncode == via_ndagent.returncode == via_module.returncode == 0
    assert direct.stdout == via_ndagent.stdout == via_module.stdout != b""


@pytest.mark.parametrize("verb", VERBS)
def test_help_shows_examples_and_exit_statuses(verb):
    done = run(verb, "--help")
    assert done.returncode == 0
    text = done.stdout.decode()
    assert text.startswith(f"usage: ndagent-{verb} ")
    assert "examples:" in text and "cursor-agent -p --output-format stream-json" in text
    assert "exit status:" in text and "130" in text


def test_top_level_help_lists_the_commands():
    done = run(None, "--help")
    assert done.returncode == 0
    for verb in VERBS:
        assert f"\n  {verb} " in done.stdout.decode()
    bare = run(None)
    assert bare.returncode == 2 and bare.stderr.startswith(b"ndagent: ")
    assert run(None, "frobnicate").returncode == 2


@pytest.mark.parametrize("verb", [None, *VERBS])
def test_version(verb):
    done = run(verb, "--version")
    name = "ndagent" if verb is None else f"ndagent-{verb}"
    assert (done.returncode, done.stdout) == (0, f"{name} {__version__}\n".encode())


@pytest.mark.parametrize("verb", VERBS)
def test_usage_error_is_one_line_and_status_2(verb):
    done = run(verb, "--no-such-option")
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1
    assert done.stderr.startswith(f"ndagent-{verb}: ".encode())


@pytest.mark.parametrize("verb", VERBS)
def test_exit_statuses(verb, write, tmp_path):
    cut = write(lines_of("vendor-example.ndjson")[:5])
    assert run(verb, VENDOR).returncode == 0
    assert run(verb, cut).returncode == 1
    assert run(verb, "--strict", input=b"oops\n" + VENDOR.read_bytes()).returncode == 1
    assert run(verb, tmp_path / "missing").returncode == 2
    (tmp_path / "gone.ndjson").symlink_to(tmp_path / "nowhere")  # in a directory read
    assert run(verb, tmp_path).returncode == 2


@pytest.mark.parametrize("verb", VERBS)
def test_standard_input_by_dash_or_no_file(verb):
    data = VENDOR.read_bytes()
    # A record that says where a call was (tools) names the input: <stdin> or the path.
    from_file = run(verb, VENDOR).stdout.replace(str(VENDOR).encode(), b"<stdin>")
    assert run(verb, input=data).stdout == run(verb, "-", input=data).stdout == from_file


def big_stream(path, runs=40):
    """A few MB of runs, each with many assistant events."""
    vendor = lines_of("vendor-example.ndjson")
    delta = orjson.loads(vendor[2])
    delta["message"]["content"][0]["text"] = "x" * 200
    body = [vendor[0], vendor[1]] + [orjson.dumps(delta) + b"\n"] * 500
    event = orjson.loads(vendor[-1])
    event["result"] = "x" * 200 * 500
    path.write_bytes(b"".join(body + [orjson.dumps(event) + b"\n"]) * runs)
    return path


@pytest.mark.parametrize("verb, head", [("result", "head -c 10"), ("json", "head -n 1")])
def test_reader_going_away_is_quiet(verb, head, tmp_path):
    path = big_stream(tmp_path / "big.ndjson")
    done = subprocess.run(
        ["bash", "-c", f'set -o pipefail; cat "$1" | "$2" | {head} >/dev/null',
         "-", str(path), command(verb)], capture_output=True, timeout=60)
    assert done.stderr == b""


def read_some(stream, timeout):
    ready, _, _ = select.select([stream], [], [], timeout)
    return os.read(stream.fileno(), 65536) if ready else b""


VENDOR_LINES = lines_of("vendor-example.ndjson")
DAMAGED = VENDOR_LINES[:3] + [b"oops\n"] + VENDOR_LINES[3:]


@pytest.mark.parametrize("verb, lines, first_lines, expected, status", [
    ("result", VENDOR_LINES * 2, 4, b"I'll read the README.md file", 0),
    ("json", VENDOR_LINES * 2, 10, b'{"type":"result"', 0),
    ("text", VENDOR_LINES, 6, b"Read file\n", 0),  # up to the read call's completion
    ("tools", VENDOR_LINES, 6, b'{"call_id":"toolu_vrtx_01NnjaR886UcE8whekg2MGJd","kind":"read"',
     0),
    ("validate", DAMAGED, 4, b"<stdin>:4: error: not JSON: ", 1),
])
def test_output_appears_while_the_writer_is_still_writing(verb, lines, first_lines, expected,
                                                          status):
    process = subprocess.Popen([command(verb)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        process.stdin.write(b"".join(lines[:first_lines]))
        process.stdin.flush()
        seen = b""
        deadline = time.monotonic() + 20
        while expected not in seen and time.monotonic() < deadline:
            seen += read_some(process.stdout, 0.5)
        assert seen.startswith(expected), "nothing came out before the writer finished"
        assert process.poll() is None
        rest, err = process.communicate(b"".join(lines[first_lines:]), timeout=20)
    finally:
        process.kill()
    assert process.returncode == status and err == b""


@pytest.mark.parametrize("verb", VERBS)
def test_ctrl_c_is_status_130_without_traceback(verb):
    process = subprocess.Popen([command(verb)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdin.write(b"".join(lines_of("vendor-example.ndjson")[:3]))
    process.stdin.flush()
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 130
    assert b"Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("verb", VERBS)
def test_full_disk_is_one_message_and_status_2(verb):
    with open("/dev/full", "wb") as full:
        done = subprocess.run([command(verb), str(VENDOR)], stdout=full, capture_output=False,
                              stderr=subprocess.PIPE, timeout=30)
    assert done.returncode == 2
    assert done.stderr == f"ndagent-{verb}: write error: No space left on device\n".encode()


def test_main_puts_back_what_it_sets_for_the_process(call):
    import gc

    from ndagent.cmd_json import main

    before = (signal.getsignal(signal.SIGPIPE), gc.get_threshold(), gc.get_freeze_count())
    assert before[2] == 0
    for argv in ([VENDOR], ["--no-such-option"], ["--help"]):
        with contextlib.suppress(SystemExit):
            call(main, *argv)
        assert (signal.getsignal(signal.SIGPIPE), gc.get_threshold(),
                gc.get_freeze_count()) == before


def test_ctrl_c_while_orjson_loads_is_status_130():
    """orjson crashes when interrupted while it is imported: Ctrl-C is held back, and
    then ends the command (as its console script starts it) with status 130."""
    program = f"""
import builtins, os, signal, sys
sys.argv[0] = "ndagent"
real_import = builtins.__import__
def interrupting_import(name, *args, **kwargs):
    if name == "uuid" and "uuid" not in sys.modules:  # orjson imports it as it loads
        os.kill(os.getpid(), signal.SIGINT)
    return real_import(name, *args, **kwargs)
builtins.__import__ = interrupting_import
from ndagent.cli import main
sys.exit(main(["json", {str(VENDOR)!r}]))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=30)
    assert (done.returncode, done.stderr) == (130, b"")


@pytest.mark.parametrize("verb", ["json", "result", "text", "tools"])
def test_strict_sees_damage_inside_a_line_the_prefilter_would_pass_over(verb, write):
    damaged = b'{"type":"thinking","text":,,"session_id":"x"}'
    path = write(VENDOR_LINES[:2] + [damaged] + VENDOR_LINES[2:])
    assert run(verb, path).returncode == 0
    done = run(verb, "--strict", path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"ndagent-{verb}: {path}:3: error: not JSON: ".encode())


def test_repeated_in_process_runs_let_the_host_s_garbage_be_collected(call):
    import gc

    from ndagent.cmd_json import main

    class Cycle:
        def __init__(self):
            self.itself = self

    counts = []
    for _ in range(40):
        gc.collect(0)
        for _ in range(500):  # garbage only the cyclic collector frees, too little yet
            Cycle()
        call(main, VENDOR)
        counts.append(len(gc.get_objects()))
    assert counts[-1] < counts[9] + 5_000, counts
