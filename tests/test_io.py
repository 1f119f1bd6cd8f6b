"""The commands and their descriptors, through real pipes against the installed commands:
Ctrl-C from the first import on, inputs that cannot be read or are the output, help and
version that cannot be written, descriptors left non-blocking, a standard error nobody
reads, and arguments that hold escape sequences."""

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import command, fixture, lines_of, run
from test_cli import big_stream

import ndagent

VERBS = ["json", "result", "text", "tools", "validate"]
VENDOR = fixture("vendor-example.ndjson")
MISSING = "No such file or directory"


# Ctrl-C


def interrupt(argv, delay):
    """Start ``argv`` on a pipe that stays open, send SIGINT ``delay`` seconds after the
    ndagent package has loaded (Python says when: -X importtime), and return (status,
    standard error without Python's import times)."""
    reader, writer = os.pipe()
    process = subprocess.Popen(argv, stdin=reader, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    os.close(reader)
    watchdog = threading.Timer(30, process.kill)  # should the command never load
    watchdog.start()
    try:
        for line in process.stderr:
            if line.rsplit(b"|", 1)[-1].strip() == b"ndagent":
                break
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate()
    finally:
        watchdog.cancel()
        os.close(writer)
    lines = [line for line in err.splitlines(True) if not line.startswith(b"import time:")]
    return process.returncode, b"".join(lines)


@pytest.mark.parametrize("argv", [[command(None), "json"], [command("json")],
                                  [sys.executable, "-m", "ndagent", "json"]],
                         ids=["ndagent json", "ndagent-json", "python -m ndagent json"])
def test_ctrl_c_from_the_first_import_on_is_status_130_without_traceback(argv):
    """Whenever Ctrl-C comes, loading the modules or reading: 24 tries, half of them in
    the first 10 ms (the imports), the others up to 60 ms (reading the pipe)."""
    delays = [random.uniform(0, 0.01) for _ in range(12)]
    delays += [random.uniform(0.01, 0.06) for _ in range(12)]
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(lambda delay: interrupt(argv, delay), delays))
    assert outcomes == [(130, b"")] * len(delays), [
        (f"{delay * 1000:.1f} ms", *outcome) for delay, outcome in zip(delays, outcomes)
        if outcome != (130, b"")]


# Where the ndagent package's modules are: a traceback that names one of them was
# printed by ndagent's own code.
PACKAGE = os.path.dirname(ndagent.__file__).encode() + b"/"
# The package's first lines, up to the one that takes Ctrl-C: before that one has run,
# Ctrl-C is still Python's (a traceback that ends there is Python's start-up's).
_INIT = ndagent.__file__.encode()
_TAKEN_AT = next(number for number, line in enumerate(
    Path(ndagent.__file__).read_text().splitlines(), 1)
    if "_signal.signal(_signal.SIGINT, _exit_interrupted)" in line)


def _before_ndagent_takes_ctrl_c(stderr):
    """Whether a traceback's only lines of the package are its first ones, before the
    line that takes Ctrl-C."""
    found = re.findall(rb'File "([^"]+)", line ([0-9]+)', stderr)
    ours = [(name, int(line)) for name, line in found if name.startswith(PACKAGE)]
    return bool(ours) and all(name == _INIT and line <= _TAKEN_AT for name, line in ours)


def interrupted_as_it_should(status, stderr):
    """Whether an outcome of Ctrl-C at any moment after the process started is right:
    status 130 and nothing said, once the package's line that takes Ctrl-C has run
    (``_TAKEN_AT``).  Before it, Python's
    own start-up takes Ctrl-C, and nothing ndagent does can change that: the process
    dies of SIGINT (before Python sets its handler, or as Python ends on a
    KeyboardInterrupt), ends with status 1 after a traceback ("Fatal Python error" as
    it sets up its streams or its site module), or even goes on (status None) after
    site said the KeyboardInterrupt and passed over the rest of a .pth file; its
    messages show no line of ndagent's package."""
    if (status, stderr) == (130, b""):
        return True
    if PACKAGE in stderr and not _before_ndagent_takes_ctrl_c(stderr):
        return False
    if status == -signal.SIGINT:
        return stderr == b"" or b"KeyboardInterrupt" in stderr
    # (a Ctrl-C as Python sets up sys.stdout may even end it with another exception)
    pythons = b"KeyboardInterrupt" in stderr or stderr.startswith(b"Fatal Python error")
    return status in (1, None) and pythons


def test_a_ctrl_c_before_the_package_takes_it_is_python_s():
    """A traceback that ends in the package's first lines is Python's start-up's; one
    from any later line is ndagent's."""
    trace = (b'Traceback (most recent call last):\n  File "/bin/ndagent-json", line 3\n'
             b'  File "' + _INIT + b'", line %d, in <module>\nKeyboardInterrupt\n')
    assert interrupted_as_it_should(-signal.SIGINT, trace % (_TAKEN_AT - 2))
    assert not interrupted_as_it_should(-signal.SIGINT, trace % (_TAKEN_AT + 5))


def interrupt_after(argv, delay):
    """Start ``argv`` with standard input on a pipe that stays open, send SIGINT
    ``delay`` seconds later, and return (status, standard error); status None when it
    still runs 10 s later (it is then killed)."""
    reader, writer = os.pipe()
    process = subprocess.Popen(argv, stdin=reader, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    os.close(reader)
    try:
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        try:
            status = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            status = None
            process.kill()
        err = process.communicate()[1]
    finally:
        os.close(writer)
    return status, err


@pytest.mark.parametrize("argv", [[command("json")], [command("run"), "--", "sleep", "5"]],
                         ids=["json", "run"])
def test_ctrl_c_at_any_moment_after_the_start_is_130_once_ndagent_runs(argv):
    """40 tries at random moments from the start of the process to 80 ms after it (the
    interpreter's start-up, the package's loading, reading or running the agent)."""
    delays = [random.uniform(0, 0.08) for _ in range(40)]
    with ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(lambda delay: interrupt_after(argv, delay), delays))
    wrong = [(f"{delay * 1000:.1f} ms", *outcome) for delay, outcome in zip(delays, outcomes)
             if not interrupted_as_it_should(*outcome)]
    assert not wrong


def test_ctrl_c_while_the_agent_has_printed_nothing_says_nothing_but_the_status():
    """The agent ended by the Ctrl-C passed on to it, before any event: no 'no events'
    error, as at any other moment."""
    assert interrupt_after([command("run"), "--", "sleep", "5"], 0.5) == (130, b"")


AUDITED_START = """
import _signal, sys
imports = []  # (module, whether Ctrl-C still had Python's handler as it was imported)
sys.addaudithook(lambda event, args: event == "import" and imports.append(
    (args[0], _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler)))
import ndagent.cmd_json
names = [name for name, _ in imports]
print([name for name, default in imports[names.index("ndagent") + 1:] if default])
"""


def test_ctrl_c_is_taken_before_the_package_imports_anything(tmp_path):
    """The moments a random Ctrl-C rarely hits: from its first line on, the package
    takes Ctrl-C before it imports any module that the interpreter has not loaded yet
    (importing signal itself takes milliseconds)."""
    script = tmp_path / "ndagent-json"  # started as the command is
    script.write_text(AUDITED_START)
    done = subprocess.run([sys.executable, script], capture_output=True, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"[]\n", b"")


LIBRARY_USER = """
import signal, sys
import ndagent.decoder, ndagent.model
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_a_script_that_imports_ndagent_keeps_its_own_ctrl_c(tmp_path):
    """Only the commands end at Ctrl-C without a traceback: a script that uses the
    library, even one named like the commands or run by 'python -m', keeps Python's
    KeyboardInterrupt."""
    script = tmp_path / "ndagent-report"
    script.write_text(LIBRARY_USER)
    package = tmp_path / "report"
    package.mkdir()
    (package / "__init__.py").write_text(LIBRARY_USER)
    (package / "__main__.py").write_text("")
    for argv in ([script], ["-c", LIBRARY_USER], ["-m", "report"]):
        done = subprocess.run([sys.executable, *argv], cwd=tmp_path, capture_output=True,
                              timeout=30)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"True\n", b"")


def test_the_console_scripts_are_known_to_the_package():
    from importlib.metadata import entry_points

    scripts = {entry.name for entry in entry_points(group="console_scripts")
               if entry.value.startswith("ndagent.")}
    assert scripts == ndagent._SCRIPTS


# Inputs that cannot be read, or that are the output


def messages(done):
    return done.stderr.decode().splitlines()


@pytest.mark.parametrize("verb", VERBS)
def test_a_missing_file_is_one_message(verb, tmp_path):
    name = tmp_path / "nope.ndjson"
    done = run(verb, name)
    assert (done.returncode, done.stdout) == (2, b"")
    assert messages(done) == [f"ndagent-{verb}: {name}: error: cannot read: {MISSING}"]


def named(verb):
    """The options that make one FILE's output what it is among several: text names
    each line's FILE then."""
    return ["-H"] if verb == "text" else []


@pytest.mark.parametrize("verb", VERBS)
def test_beside_a_missing_file_the_others_still_count(verb, tmp_path, write):
    missing = tmp_path / "nope.ndjson"
    cannot_read = f"ndagent-{verb}: {missing}: error: cannot read: {MISSING}"
    done = run(verb, missing, VENDOR)
    assert (done.returncode, messages(done)) == (2, [cannot_read])
    assert done.stdout == run(verb, *named(verb), VENDOR).stdout
    # An input that was read and held no event is still said to hold none.
    empty = write(b"")
    done = run(verb, empty, missing)
    assert done.returncode == 2
    no_events = (f"{empty}:1: error: no events: the agent printed nothing, or failed "
                 "before it began")
    if verb == "validate":  # the same words, as a diagnostic
        assert messages(done) == [cannot_read]
        assert done.stdout.decode().splitlines() == [
            f"{no_events} [no-run]",
            f"{empty}: 0 events, 0 runs, 1 error, 0 warnings"]
    else:
        assert messages(done) == [cannot_read, f"ndagent-{verb}: {no_events}"]


@pytest.mark.parametrize("verb", VERBS)
def test_an_input_that_is_the_output_file_is_refused(verb, tmp_path):
    """'ndagent json f >> f' read its own output for ever; as cat does, the input is
    refused (status 2), the other inputs are read."""
    path = tmp_path / "f.ndjson"
    path.write_bytes(VENDOR.read_bytes())
    expected = run(verb, *named(verb), VENDOR).stdout
    for argv, stdin in (([path, VENDOR], os.devnull), (["-", VENDOR], path)):
        path.write_bytes(VENDOR.read_bytes())
        with open(path, "ab") as out, open(stdin, "rb") as source:
            done = subprocess.run([command(verb), *map(str, argv)], stdin=source, stdout=out,
                                  stderr=subprocess.PIPE, timeout=20)
        name = "<stdin>" if argv[0] == "-" else path
        assert (done.returncode, messages(done)) == (
            2, [f"ndagent-{verb}: {name}: error: input file is output file"])
        assert path.read_bytes() == VENDOR.read_bytes() + expected


def test_an_output_that_is_not_a_regular_file_is_no_input_s_output():
    with open(os.devnull, "wb") as null:
        done = subprocess.run([command("json"), os.devnull], stdout=null,
                              stderr=subprocess.PIPE, timeout=20)
    assert done.returncode == 1 and b"no events" in done.stderr


# Help, version and usage


def test_a_verb_after_double_dash_runs():
    for argv in (["--", "json", VENDOR], ["--", "json", "--strict", VENDOR]):
        done = run(None, *argv)
        assert (done.returncode, done.stdout, done.stderr) == (
            0, run("json", VENDOR).stdout, b"")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("verb", [None, *VERBS])
@pytest.mark.parametrize("option", ["--help", "--version"])
def test_help_or_version_that_cannot_be_written_is_status_2(verb, option):
    name = "ndagent" if verb is None else f"ndagent-{verb}"
    with open("/dev/full", "wb") as full:
        done = subprocess.run([command(verb), option], stdout=full, stderr=subprocess.PIPE,
                              timeout=20)
    assert (done.returncode, done.stderr) == (
        2, f"{name}: write error: No space left on device\n".encode())


@pytest.mark.parametrize("verb", [None, *VERBS])
def test_usage_errors_spell_out_control_characters_of_the_arguments(verb):
    """'ndagent json *' in a folder that holds a file named so (an unknown option), or
    'ndagent *' (an unknown verb)."""
    name = "\x1b]0;X\x07\nsecond-line\u202e"
    done = run(verb, name if verb is None else "--" + name)
    assert done.returncode == 2
    assert done.stderr.count(b"\n") == 1
    assert (b"invalid choice" if verb is None else b"unrecognized arguments") in done.stderr
    assert b"\\x1b]0;X\\x07\\nsecond-line\\u202e" in done.stderr


# Descriptors left non-blocking


def feed_slowly(writer, data, parts=4):
    """Write ``data`` in ``parts``, with pauses: the reader meets an empty pipe."""
    size = -(-len(data) // parts)
    for start in range(0, len(data), size):
        time.sleep(0.05)
        os.write(writer, data[start:start + size])


@pytest.mark.parametrize("verb", VERBS)
def test_a_non_blocking_standard_input_is_waited_for(verb):
    data = VENDOR.read_bytes()
    reader, writer = os.pipe()
    os.set_blocking(reader, False)
    try:
        process = subprocess.Popen([command(verb)], stdin=reader, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        os.close(reader)
        feed_slowly(writer, data)
    finally:
        os.close(writer)
    out, err = process.communicate(timeout=30)
    expected = run(verb, input=data)
    assert (process.returncode, out, err) == (0, expected.stdout, b"")


@pytest.mark.parametrize("verb", ["json", "result"])
def test_a_non_blocking_standard_output_is_waited_for(verb, tmp_path):
    path = big_stream(tmp_path / "big.ndjson")
    expected = run(verb, path).stdout
    assert len(expected) > 1 << 20
    reader, writer = os.pipe()
    os.set_blocking(writer, False)
    try:
        process = subprocess.Popen([command(verb), path], stdout=writer,
                                   stderr=subprocess.PIPE)
    finally:
        os.close(writer)
    time.sleep(0.3)  # the pipe fills: the command meets "not now" (EAGAIN)
    with os.fdopen(reader, "rb") as output:
        out = output.read()
    assert (process.wait(timeout=30), out, process.stderr.read()) == (0, expected, b"")


# A standard error nobody reads


@pytest.mark.parametrize("verb", VERBS)
def test_a_standard_error_with_no_reader_stops_nothing(verb, tmp_path):
    """'ndagent tools onebad.ndjson 2>&1 >out.ndjson | true' was killed at the first
    warning, out.ndjson empty."""
    lines = lines_of("vendor-example.ndjson")
    onebad = tmp_path / "onebad.ndjson"
    onebad.write_bytes(b"".join(lines[:3] + [b"oops\n"] + lines[3:]))
    missing = tmp_path / "nope.ndjson"  # for validate, whose findings go to stdout
    expected = run(verb, onebad, missing)
    assert expected.stderr and expected.stdout or verb != "tools"
    reader, writer = os.pipe()
    os.close(reader)
    try:
        with open(tmp_path / "out", "wb") as out:
            done = subprocess.run([command(verb), onebad, missing], stdout=out,
                                  stderr=writer, timeout=30)
    finally:
        os.close(writer)
    assert done.returncode == expected.returncode == 2
    assert (tmp_path / "out").read_bytes() == expected.stdout


@pytest.mark.parametrize("verb", VERBS)
def test_standard_output_with_no_reader_still_ends_the_command_quietly(verb, tmp_path):
    """Even when standard error has no reader either: the death of cat, by SIGPIPE."""
    pipes = [os.pipe(), os.pipe()]
    for reader, _ in pipes:
        os.close(reader)
    try:
        done = subprocess.run([command(verb), fixture("sample.ndjson"), tmp_path / "nope"],
                              stdout=pipes[0][1], stderr=pipes[1][1], timeout=30)
    finally:
        for _, writer in pipes:
            os.close(writer)
    assert done.returncode == -signal.SIGPIPE


def test_a_pipe_read_from_is_widened_to_hold_a_chunk():
    """A read gives at most what the pipe holds: widened, a writer ahead of ndagent
    gives whole chunks (Linux only; elsewhere the pipe is left as it is)."""
    import fcntl

    from ndagent import sources

    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("no F_GETPIPE_SZ here")
    read_end, write_end = os.pipe()
    try:
        sources._reader(read_end)  # as standard input is read
        assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) >= sources.PIPE_SIZE
    finally:
        os.close(read_end)
        os.close(write_end)


def test_widening_leaves_other_files_alone(tmp_path):
    from ndagent import sources

    path = tmp_path / "run.ndjson"
    path.write_bytes(b"{}\n")
    with open(path, "rb") as handle:
        sources.widen_pipe(handle.fileno())  # no error, nothing to do
