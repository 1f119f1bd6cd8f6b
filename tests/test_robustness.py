"""Hostile input: every command keeps working on anything, says exactly what is wrong
in one line, loses nothing that could be read, and never lets stream text reach the
terminal raw.  Bad lines run in-process (InProcess, as through pipes but quicker); what
depends on real files, pipes and signals runs the installed commands.  A full disk is
tested in test_cli.py.  The properties run a few dozen examples here; 'make fuzz' runs
them at length (tests/fuzz/run.py)."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from conftest import InProcess, command, examples, fixture, lines_of, peak_rss, run, tool_event
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent import model
from ndagent.decoder import RawNumber, encode_line
from ndagent.formats.cursor import JSON_KEY_ORDER
from ndagent.model import ACTIONS, OUTCOME_SUFFIXES
from ndagent.sources import STREAM_FILES
from ndagent.terminal import quote

VERBS = ["json", "result", "text", "tools", "validate"]
CONVERTERS = VERBS[:-1]
VENDOR = lines_of("vendor-example.ndjson")
SESSION = orjson.loads(VENDOR[0])["session_id"]
in_process = InProcess()

# What the properties run: few examples here, many under 'make fuzz'.
EXAMPLES = settings(max_examples=examples(10), deadline=None,
                    suppress_health_check=list(HealthCheck), database=None)

# Control characters, other than the newline that ends each line.
RAW_CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def event_line(**data):
    return encode_line({**data, "session_id": SESSION})[:-1]


def vendor_with(line, at=3):
    """The vendor example with ``line`` inserted as line ``at``."""
    lines = list(VENDOR)
    lines.insert(at - 1, line + b"\n")
    return b"".join(lines)


def assert_one_line_messages(verb, err):
    """Standard error holds whole one-line messages of this command, no traceback, and
    no raw control character."""
    assert b"Traceback" not in err
    for message in err.splitlines(keepends=True):
        assert message.startswith(f"ndagent-{verb}: ".encode()) and message.endswith(b"\n")
    assert not RAW_CONTROL.search(err)


# Lines that hold no JSON object: each is skipped with the reason, whatever the command.
NOT_OBJECTS = [
    ("invalid UTF-8", b'{"type":"result","result":"\xff\xfe"}', "not valid UTF-8"),
    ("NUL bytes", b'{"type":"result",\x00"result":""}',
     "not JSON: unexpected character, expected a string key"),
    ("binary garbage", bytes(range(11, 256)) + bytes(range(10)), "not valid UTF-8"),
    ("escape sequences", b"\x1b]0;owned\x07\x1b[2J\x7f", "not JSON: unexpected character, "
                                                            "expected a JSON value"),
    ("nesting deeper than orjson reads",
     b'{"type":"result","x":' + b"[" * 1100 + b"]" * 1100 + b"}",
     "not JSON: depth limit exceeded"),
    ("NaN", b'{"type":"result","duration_ms":NaN}',
     "not JSON: unexpected character, expected a JSON value"),
    ("Infinity", b'{"type":"result","duration_ms":Infinity}',
     "not JSON: unexpected character, expected a JSON value"),
    ("-Infinity", b'{"type":"result","duration_ms":-Infinity}', "not JSON: no digit after sign"),
    ("an array", b'[{"type":"result"}]', "not a JSON object but an array"),
    ("a string", b'"{\\"type\\":\\"result\\"}"', "not a JSON object but a string"),
]

NO_SINGLE_TOOL = "skipped: a tool_call event that names no single tool"

# Objects that are not what the format says: decoded, ignored by the converters (or
# warned about), reported by validate.  (id, line, converter warnings, validate's
# diagnostics of the line.)
ODD_OBJECTS = [
    ("no type", event_line(message={}), {}, ['error: the event has no "type" [type]']),
    ("type not a string", event_line(type=["result"]), {},
     ['error: "type" must be a string, not an array [type]']),
    ("type null", event_line(type=None), {}, ['error: the event has no "type" [type]']),
    ("message.content not a list",
     event_line(type="assistant", message={"role": "assistant", "content": {"text": "x"}}), {},
     ['error: "message.content" must be an array of texts, not an object [fields]']),
    ("an integer beyond 64 bits",
     event_line(type="thinking", subtype="delta", text="", timestamp_ms=2**70), {}, []),
    ("an integer of 5000 digits",
     event_line(type="thinking", subtype="delta", text="", timestamp_ms=RawNumber("9" * 5000)),
     {}, []),
    ("a float beyond a double",
     event_line(type="thinking", subtype="delta", text="", timestamp_ms=RawNumber("1e400")),
     {}, ['error: "timestamp_ms" must be a non-negative integer, not 1e400 [fields]']),
    ("tool_call with no *ToolCall key",
     event_line(type="tool_call", subtype="completed", call_id="c", tool_call={"x": {}}),
     {"text": NO_SINGLE_TOOL, "tools": NO_SINGLE_TOOL},
     ['error: "tool_call" must hold one object: a *ToolCall key, or "function" [fields]',
      'warning: call "c" completed without being started [call-unstarted]']),
    ("tool_call with two *ToolCall keys",
     event_line(type="tool_call", subtype="completed", call_id="c",
                tool_call={"readToolCall": {"result": {"success": {}}},
                           "shellToolCall": {"result": {"success": {}}}}),
     {"text": NO_SINGLE_TOOL, "tools": NO_SINGLE_TOOL},
     ['error: "tool_call" must hold one object: a *ToolCall key, or "function" [fields]',
      'warning: call "c" completed without being started [call-unstarted]']),
]


def check_line_in_the_vendor_example(line, warnings, diagnostics):
    """Every command on the vendor example with ``line`` as line 3 prints what it prints
    with a blank line there; the converters say ``warnings[verb]`` (or nothing), with
    their usual status; validate adds exactly ``diagnostics`` at line 3."""
    clean = vendor_with(b"")
    for verb in VERBS:
        status, out, err = in_process(verb, vendor_with(line))
        expected_status, expected_out, _ = in_process(verb, clean)
        assert_one_line_messages(verb, err)
        if verb == "validate":
            found = [text[len("<stdin>:3: "):] for text in out.decode().splitlines()
                     if text.startswith("<stdin>:3: ")]
            assert found == diagnostics
            assert status == (1 if any(d.startswith("error") for d in diagnostics) else 0)
            assert err == b""
        else:
            assert (status, out) == (expected_status, expected_out)
            warning = warnings.get(verb)
            expected_err = f"ndagent-{verb}: <stdin>:3: warning: {warning}\n" if warning else ""
            assert err.decode() == expected_err


@pytest.mark.parametrize("line, reason", [case[1:] for case in NOT_OBJECTS],
                         ids=[case[0] for case in NOT_OBJECTS])
def test_a_line_that_holds_no_object_is_skipped_with_its_reason(line, reason):
    # The message quotes the start of the line, bounded and escaped.
    reason += f': "{quote(line.decode("utf-8", "replace"))}"'
    check_line_in_the_vendor_example(line, dict.fromkeys(CONVERTERS, "skipped: " + reason),
                                     [f"error: {reason} [json]"])


@pytest.mark.parametrize("line, warnings, diagnostics", [case[1:] for case in ODD_OBJECTS],
                         ids=[case[0] for case in ODD_OBJECTS])
def test_an_object_not_of_the_format_is_ignored_or_reported(line, warnings, diagnostics):
    check_line_in_the_vendor_example(line, warnings, diagnostics)


@pytest.mark.parametrize("verb", VERBS)
def test_every_bad_line_at_once_through_real_pipes(verb):
    bad = [line for _, line, _ in NOT_OBJECTS] + [line for _, line, _, _ in ODD_OBJECTS]
    lines = VENDOR[:2] + [line + b"\n" for line in bad] + VENDOR[2:]
    done = run(verb, input=b"".join(lines))
    clean = run(verb, input=b"".join(VENDOR[:2] + [b"\n"] * len(bad) + VENDOR[2:]))
    assert_one_line_messages(verb, done.stderr)
    if verb == "validate":
        assert done.returncode == 1
        assert done.stdout.count(b" [json]\n") == len(NOT_OBJECTS)
    else:
        assert (done.returncode, done.stdout) == (0, clean.stdout)
        assert done.stderr.count(b": warning: skipped: ") == (
            len(NOT_OBJECTS) + (2 if verb in ("text", "tools") else 0))


def surrogate_stream():
    """A run whose answer and whose read call's path hold lone surrogates, which orjson
    rejects and JSON allows."""
    return b"".join([
        VENDOR[0],
        rb'{"type":"assistant","message":{"role":"assistant","content":[{"type":"text",'
        rb'"text":"a\ud800b"}]},"session_id":"' + SESSION.encode() + b'"}\n',
        tool_event("started", "c1", "readToolCall", {"path": "PATH"},
                   session_id=SESSION).replace(b"PATH", rb"\udc00"),
        tool_event("completed", "c1", "readToolCall", None, "success", session_id=SESSION),
        VENDOR[-1].replace(b'"result":"I\'ll read the README.md file and create a summary"',
                           rb'"result":"a\ud800b"'),
    ])


@pytest.mark.parametrize("verb, argv, expected", [
    ("result", [], "a\ufffdb\n"),
    ("text", ["-v"], "Read file: \ufffd\n"),
    ("validate", [], "<stdin>: 5 events, 1 run, 0 errors, 0 warnings\n"),
])
def test_lone_surrogates_are_decoded_and_printed_as_replacement_characters(
        verb, argv, expected):
    assert in_process(verb, surrogate_stream(), *argv) == (0, expected.encode(), b"")


def test_lone_surrogates_become_replacement_characters_in_json_records():
    status, out, err = in_process("json", surrogate_stream())
    assert (status, err, orjson.loads(out)["result"]) == (0, b"", "a\ufffdb")
    status, out, err = in_process("tools", surrogate_stream())
    assert (status, err, orjson.loads(out)["args"]) == (0, b"", {"path": "\ufffd"})


def test_integers_beyond_64_bits_are_printed_exactly():
    big = 2**70 + 1
    line = VENDOR[-1].replace(b'"duration_ms":5234', b'"duration_ms":%d' % big)
    status, out, err = in_process("json", b"".join(VENDOR[:-1]) + line)
    assert (status, err) == (0, b"") and b'"duration_ms":%d,' % big in out


def test_duplicate_keys_the_last_one_counts_everywhere():
    failed_then_fine = VENDOR[-1].replace(b'"is_error":false', b'"is_error":true,"is_error":false')
    data = b"".join(VENDOR[:-1]) + failed_then_fine
    for verb in VERBS:
        status, out, err = in_process(verb, data)
        assert (status, err) == (0, b"")
    assert orjson.loads(in_process("json", data)[1])["is_error"] is False


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("data", [b"", b"\n\n", b"Update available: 2026.01.28\n"],
                         ids=["empty", "blank", "banner"])
def test_input_with_no_event_is_an_error(verb, data):
    """What an agent that fails before it starts prints: nothing, or no event."""
    done = run(verb, input=data)
    assert done.returncode == 1
    message = b"no events: the agent printed nothing, or failed before it began"
    if verb == "validate":
        noise = b"Update" in data  # Cursor's banner: a warning of its own
        assert done.stdout.splitlines()[-2:] == [
            b"<stdin>:1: error: " + message + b" [no-run]",
            b"<stdin>: 0 events, 0 runs, 1 error, %s" % (b"1 warning" if noise else b"0 warnings")]
    else:
        assert done.stdout == b""
        assert done.stderr.splitlines()[-1] == \
            f"ndagent-{verb}: <stdin>:1: error: ".encode() + message


@pytest.fixture(scope="module")
def huge_line_stream(tmp_path_factory):
    """A run whose answer is one assistant event of 50 MB, repeated by its result."""
    text = "0123456789abcdef\n" * (50 * 2**20 // 17)
    assistant = orjson.loads(VENDOR[2])
    assistant["message"]["content"][0]["text"] = text
    result = orjson.loads(VENDOR[-1])
    result["result"] = text
    path = tmp_path_factory.mktemp("huge") / "huge.ndjson"
    path.write_bytes(b"".join([VENDOR[0], orjson.dumps(assistant), b"\n",
                               orjson.dumps(result), b"\n"]))
    return path, text


@pytest.mark.parametrize("verb", VERBS)
def test_a_line_of_50_megabytes(verb, huge_line_stream):
    path, text = huge_line_stream
    done = run(verb, path)
    assert (done.returncode, done.stderr) == (0, b"")
    if verb == "result":
        assert done.stdout == text.encode()
    elif verb == "json":
        assert orjson.loads(done.stdout)["result"] == text
    elif verb == "validate":
        assert done.stdout == f"{path}: 3 events, 1 run, 0 errors, 0 warnings\n".encode()
    else:
        assert done.stdout == b""


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux's /proc")
@pytest.mark.parametrize("verb", VERBS)
def test_unreadable_files_are_status_2_one_message_each_and_the_rest_is_read(verb, tmp_path):
    # Root reads any file whatever its mode; it cannot open a socket, nor read its own
    # memory at address 0, so those stand for unreadable files.
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "socket.ndjson"))  # passed over in its directory
    vendor = fixture("vendor-example.ndjson")
    inputs = [vendor, tmp_path, tmp_path / "socket.ndjson", "/proc/self/mem",
              tmp_path / "missing", vendor]
    # text names the FILE of each line with several FILEs: not here, to compare.
    done = run(verb, *(["--no-filename"] if verb == "text" else []), *inputs)
    server.close()
    assert done.returncode == 2
    assert_one_line_messages(verb, done.stderr)
    socket_unreadable = (f"ndagent-{verb}: {tmp_path}/socket.ndjson: error: cannot read: "
                         "No such device or address")
    assert done.stderr.decode().splitlines() == [
        f"ndagent-{verb}: {tmp_path}: warning: no stream file in this directory "
        f"({STREAM_FILES})", socket_unreadable,
        f"ndagent-{verb}: /proc/self/mem:1: error: cannot read: Input/output error",
        f"ndagent-{verb}: {tmp_path}/missing: error: cannot read: No such file or directory"]
    once = run(verb, vendor).stdout
    assert done.stdout == once * 2 and once


@pytest.mark.parametrize("verb", VERBS)
def test_stdout_closed_before_the_first_write_is_a_quiet_death(verb):
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run([command(verb), fixture("sample.ndjson")], stdout=writer,
                              stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (-signal.SIGPIPE, b"")


@pytest.mark.parametrize("verb", VERBS)
def test_ctrl_c_while_busy_is_status_130_without_traceback(verb):
    """SIGINT while the command is deep in a stream that keeps coming (test_cli.py sends
    it while the command waits for input)."""
    block = b"".join(VENDOR[1:-1]) * 200
    process = subprocess.Popen([command(verb)], stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    process.stdin.write(VENDOR[0])
    deadline = time.monotonic() + 0.5
    try:
        while time.monotonic() < deadline:
            process.stdin.write(block)
        process.send_signal(signal.SIGINT)
        while process.poll() is None and time.monotonic() < deadline + 20:
            process.stdin.write(block)
        process.stdin.close()
    except BrokenPipeError:
        pass
    err = process.stderr.read()
    process.wait(timeout=20)
    assert process.returncode == 130
    assert b"Traceback" not in err


# Open calls: at most model.MAX_OPEN_CALLS and MAX_OPEN_BYTES are kept, the oldest
# dropped and reported.

def never_completed(count):
    return [tool_event("started", f"c{number}", "readToolCall", {"path": f"p{number}"},
                       session_id=SESSION) for number in range(count)]


OVERFLOW = "too many tool calls open at once (kept: at most 3 calls and 32 MiB)"


def test_open_calls_beyond_the_cap_are_dropped_oldest_first_and_reported(monkeypatch):
    monkeypatch.setattr(model.CallPairer, "max_calls", 3)
    data = b"".join(VENDOR[:1] + never_completed(5) + [
        tool_event("completed", "c4", "readToolCall", None, "success", session_id=SESSION)])
    status, out, err = in_process("tools", data)
    records = [orjson.loads(line) for line in out.splitlines()]
    # The dropped calls are printed as pending at once; the others where they end.
    assert [(r["call_id"], r["status"]) for r in records] == [
        ("c0", "pending"), ("c1", "pending"), ("c4", "success"), ("c2", "pending"),
        ("c3", "pending")]
    assert err.decode() == (
        f"ndagent-tools: <stdin>:5: warning: {OVERFLOW}: the oldest are printed as "
        "pending at once\n"
        "ndagent-tools: <stdin>:1: error: run ended without a result event: "
        "the agent failed or was cut off\n")
    status, out, err = in_process("text", data, "-v")
    assert out == b"Read file: p4\n" and err.decode().startswith(
        f"ndagent-text: <stdin>:5: warning: {OVERFLOW}: the oldest are no longer tracked\n")
    status, out, err = in_process("validate", data)
    assert (status, err) == (1, b"")
    assert re.findall(rb":(\d): error: call \"(c\d)\" is no longer tracked: "
                      + re.escape(OVERFLOW.encode()) + rb" \[call-untracked\]", out) == [
        (b"2", b"c0"), (b"3", b"c1")]
    unfinished = re.findall(rb'call "(c\d)" was started and never completed', out)
    assert unfinished == [b"c2", b"c3"]


def test_a_call_alone_beyond_the_bytes_is_dropped_alone(monkeypatch):
    monkeypatch.setattr(model.CallPairer, "max_bytes", 2000)
    data = b"".join(VENDOR[:1] + never_completed(2) + [
        tool_event("started", "big", "readToolCall", {"path": "p" * 2000}, session_id=SESSION),
        tool_event("completed", "c1", "readToolCall", None, "success", session_id=SESSION)])
    status, out, err = in_process("tools", data)
    records = [orjson.loads(line) for line in out.splitlines()]
    assert [(r["call_id"], r["status"]) for r in records] == [
        ("big", "pending"), ("c1", "success"), ("c0", "pending")]
    assert "(kept: at most 100000 calls and 2000 bytes)" in err.decode()


def test_long_call_ids_are_paired_whole():
    """A call_id beyond model.LONG_CALL_ID is kept as a digest: two ids alike but for
    their last character are still two calls, and each finds its completion."""
    ids = ["x" * 50_000 + "a", "x" * 50_000 + "b"]
    data = b"".join([VENDOR[0], *(
        tool_event(subtype, key, "readToolCall", {"path": key[-1]},
                   "success" if subtype == "completed" else None, session_id=SESSION)
        for subtype in ("started", "completed") for key in reversed(ids))])
    status, out, _ = in_process("tools", data)
    records = [orjson.loads(line) for line in out.splitlines()]
    assert [(r["call_id"], r["status"], r["line"]) for r in records] == [
        (ids[1], "success", 2), (ids[0], "success", 3)]
    status, out, _ = in_process("validate", data)
    assert b"call" not in out


def test_validate_reports_an_unfinished_call_dropped_among_too_many_open():
    """Issue 10, item 4: a call started first and never completed, then 100 000 calls
    open at once, all completed: the first call is dropped from the store, and was
    never reported (0 errors, status 0, even under --strict)."""
    started = b'{"type":"tool_call","subtype":"started","call_id":"c%d",' \
              b'"tool_call":{"readToolCall":{"args":{}}},"session_id":"%s"}\n'
    completed = started.replace(b'"started"', b'"completed"').replace(
        b'{"args":{}}', b'{"args":{},"result":{"success":{}}}')
    count = model.MAX_OPEN_CALLS + 1
    session = SESSION.encode()
    result = event_line(type="result", subtype="success", is_error=False, duration_ms=1,
                        result="")
    data = b"".join([VENDOR[0], *(started % (number, session) for number in range(count)),
                     *(completed % (number, session) for number in range(1, count)),
                     result, b"\n"])
    result = run("validate", "--strict", input=data)
    assert (result.returncode, result.stderr) == (1, b"")
    assert result.stdout.decode().splitlines() == [
        '<stdin>:2: error: call "c0" is no longer tracked: too many tool calls open at once '
        "(kept: at most 100000 calls and 32 MiB) [call-untracked]",
        f"<stdin>: {2 * count + 1} events, 1 run, 1 error, 0 warnings"]


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc")
def test_calls_never_completed_keep_memory_bounded():
    """text -v keeps the args of each open call: the 300 000 of this stream kept would
    take some 120 MB, the 100 000 it keeps some 40 MB.  The input is written as the
    command reads it.  The
    peak is the child's VmHWM, read once it has printed the last call: its ru_maxrss
    (os.wait4) would count this process's memory too, which the child had before exec."""
    process = subprocess.Popen([command("text"), "-v"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    template = ('{"type":"tool_call","subtype":"started","call_id":"call_%d","tool_call":'
                '{"readToolCall":{"args":{"path":"/src/module_%d.py"}}}}\n')
    process.stdin.write(VENDOR[0])
    for start in range(0, 300000, 20000):
        process.stdin.write("".join(template % (number, number)
                                    for number in range(start, start + 20000)).encode())
    process.stdin.write(tool_event("completed", "call_299999", "readToolCall", None, "success"))
    process.stdin.flush()
    assert process.stdout.readline() == b"Read file: /src/module_299999.py\n"
    with open(f"/proc/{process.pid}/status") as status:
        peak_kib = int(re.search(r"VmHWM:\s*(\d+) kB", status.read()).group(1))
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out) == (1, b"")
    assert err.decode().splitlines() == [
        f"ndagent-text: <stdin>:{model.MAX_OPEN_CALLS + 2}: warning: too many tool calls "
        f"open at once (kept: at most {model.MAX_OPEN_CALLS} calls and 32 MiB): the oldest "
        "are no longer tracked",
        "ndagent-text: <stdin>:1: error: run ended without a result event: the agent failed or "
        "was cut off"]
    assert peak_kib < 100 * 1024


# Memory bounded in bytes: hostile streams of some 200 MB, made as they are read (by
# tests/hostile_streams.py, through a pipe), against the peak RSS of the real command.
# Before the bounds in bytes, each of these kept most of its input.

HOSTILE_STREAMS = Path(__file__).parent / "hostile_streams.py"
PEAK_BOUND = 100 << 20


def peak_on(stream_args, argv):
    """(status, peak RSS in bytes) of ``argv`` on the hostile stream ``stream_args``."""
    generator = subprocess.Popen([sys.executable, HOSTILE_STREAMS, *map(str, stream_args)],
                                 stdout=subprocess.PIPE)
    try:
        return peak_rss(argv, generator.stdout)
    finally:
        generator.stdout.close()
        generator.wait(timeout=60)


@pytest.mark.parametrize(("stream_args", "argv"), [
    (("open-args", 4000, 50_000), ("tools",)),
    (("open-ids", 4000, 50_000), ("tools", "--format", "tsv")),
    (("open-wide", 2000, 50_000), ("tools",)),
    (("open-args", 4000, 50_000), ("text", "-v")),
    (("open-wide", 2000, 50_000), ("text", "-v")),
    (("open-ids", 4000, 50_000), ("validate",)),
], ids=["tools-args", "tools-ids", "tools-wide", "text-v-args", "text-v-wide",
        "validate-ids"])
def test_open_calls_with_50_kb_args_or_ids_keep_memory_bounded(stream_args, argv):
    """Issue 10, item 9: 4000 calls of 50 KB (arguments, or call_ids) started and never
    completed, 200 MB in all, or 2000 whose args Python holds at 200 KB each: what is
    kept of them stays within MAX_OPEN_BYTES."""
    status, peak = peak_on(stream_args, [command(argv[0]), *argv[1:]])
    assert status == 1  # the run has no result
    assert peak < PEAK_BOUND, f"peak RSS {peak >> 20} MiB"


@pytest.mark.parametrize(("stream_args", "argv"), [
    (("gemini-open", 1000, 6000), ("json",)),
    (("gemini-open", 1000, 6000), ("result",)),
    (("gemini-open", 1000, 6000), ("stats",)),
    (("gemini-open", 1000, 6000), ("tools",)),
    (("codex-items", 1000, 6000), ("json",)),
    (("codex-items", 1000, 6000), ("result",)),
    (("codex-items", 1000, 6000), ("validate",)),
    (("codex-items", 1000, 6000), ("stats",)),
    (("claude-open", 2000, 20_000), ("stats",)),
    (("claude-open", 2000, 20_000), ("json",)),
    (("codex-open", 2000, 20_000), ("json",)),
    (("codex-open", 2000, 20_000), ("tools",)),
    (("dense", 20), ("json",)),
    (("dense", 20), ("validate",)),
    (("claude-deltas", 100), ("markdown",)),
    (("claude-deltas", 100), ("markdown", "--strict")),
    (("claude-task", 60), ("markdown",)),
    (("claude-task", 60), ("html",)),
])
def test_what_readers_keep_of_a_run_is_bounded_in_bytes(stream_args, argv):
    """Issue 25 (M1, M2, M3, M5): 18 MB of Gemini calls never answered or of Codex items,
    each of 6000 empty objects (432 MB decoded: every verb kept them); 80 MB of Claude
    calls or Codex items with ids and names of 20 KB (kept by count); one line of 20 MB
    of empty objects (650 MB decoded); 100 MB of Claude deltas that a transcript holds
    until it knows whether a whole line repeats them, unread or (--strict) decoded; 60 MB
    of a subagent's calls inside a Task left open, which a transcript holds until the
    Task ends, up to transcript.OPEN_CALL_CHARS (276 MiB for 68 MB when unbounded)."""
    status, peak = peak_on(stream_args, [command(argv[0]), *argv[1:]])
    assert status in (0, 1)
    # json keeps the newest items, up to model.NATIVE_BYTES (estimated); a transcript
    # renders an open call's subagent calls at once when it shows it (peaks near 75 MiB).
    most = PEAK_BOUND if (stream_args[0] == "codex-items" and argv[0] == "json"
                          or stream_args[0] == "claude-task") else 64 << 20
    assert peak < most, f"peak RSS {peak >> 20} MiB"


def test_validate_shape_cache_stays_small_on_endless_long_keys():
    """Issue 10, item 10: 40 MB of events of 100 long keys each, no two alike: the shape
    cache kept them all (some 300 MB, Python holding the emoji keys at 4 bytes a
    character)."""
    status, peak = peak_on(("shapes", 40), [command("validate")])
    assert status == 1  # the run has no result
    assert peak < PEAK_BOUND, f"peak RSS {peak >> 20} MiB"


# Properties.

# Text with what a terminal would act on: C0, C1, DEL, escape sequences.
HOSTILE_TEXT = st.lists(st.one_of(st.text(st.characters(codec="utf-8")),
                                  st.sampled_from(["\x1b[2J", "\x1b]0;x\x07", "\x9b31m", "\x7f",
                                                   "\r", "\n", "\t", "\x00", "\u2028"]))
                        ).map("".join)


KINDS = st.sampled_from(["read", "write", "edit", "shell", "grep", "mcp", "task", "frobnicate"])
OUTCOMES = st.sampled_from(["success", "failure", "permissionDenied", "rejected", "error"])


@st.composite
def valid_runs(draw, text=HOSTILE_TEXT):
    """The lines of one valid, successful run, with the answer, the calls (kind, outcome,
    args) and the result event it holds."""
    lines = [VENDOR[0]]
    answer, calls = [], []
    for step in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            piece = draw(text)
            answer.append(piece)
            lines.append(event_line(type="assistant", message={
                "role": "assistant", "content": [{"type": "text", "text": piece}]}) + b"\n")
        else:
            kind, outcome = draw(KINDS), draw(OUTCOMES)
            args = {"path": draw(text), "command": draw(text), "pattern": draw(text)}
            calls.append((f"call-{step}", kind, outcome, args))
    # Started in order, then completed in any order, before the answer's pieces.
    completions = draw(st.permutations(calls))
    lines[1:1] = [tool_event("started", key, kind + "ToolCall", args, session_id=SESSION)
                  for key, kind, _, args in calls] + [
        tool_event("completed", key, kind + "ToolCall", None, outcome, session_id=SESSION)
        for key, kind, outcome, _ in completions]
    result = orjson.loads(VENDOR[-1])
    result["result"] = "".join(answer)
    result["usage"] = {"inputTokens": draw(st.integers(0, 2**80))}
    lines.append(encode_line(result))
    return lines, "".join(answer), completions, result


@EXAMPLES
@given(st.one_of(st.binary(), st.lists(st.sampled_from(VENDOR + [b"\n", b"\r\n", b"{", b"\xff"]))
                 .map(b"".join)))
def test_property_any_bytes_give_status_0_or_1_and_one_line_messages(data):
    from ndagent.sources import compression

    # Bytes that begin as gzip, bzip2 or xz data are read as such: damaged, they are a
    # read error (status 2), as any.
    statuses = (0, 1, 2) if compression(data) else (0, 1)
    for verb in VERBS:
        status, out, err = in_process(verb, data)
        assert status in statuses
        assert_one_line_messages(verb, err)


@EXAMPLES
@given(valid_runs())
def test_property_each_command_gives_what_a_valid_run_holds(run_):
    lines, answer, completions, result = run_
    data = b"".join(lines)
    assert in_process("result", data, "-n") == (0, answer.encode(), b"")
    status, out, err = in_process("json", data)
    assert (status, err) == (0, b"") and out.count(b"\n") == 1
    printed = json.loads(out)  # orjson would read integers beyond 64 bits as floats
    assert printed == result
    assert list(printed)[:len(JSON_KEY_ORDER)] == [k for k in JSON_KEY_ORDER if k in result]
    status, out, err = in_process("tools", data)
    assert (status, err) == (0, b"")
    assert [(r["call_id"], r["kind"], r["status"], r["args"])
            for r in map(orjson.loads, out.splitlines())] == [
        (key, kind, outcome, args) for key, kind, outcome, args in completions]
    status, out, err = in_process("text", data)
    assert (status, err) == (0, b"")
    assert out.decode().splitlines() == [
        ACTIONS.get(kind, "Used tool") + OUTCOME_SUFFIXES.get(outcome, "")
        for _, kind, outcome, _ in completions]
    status, out, err = in_process("validate", data)
    assert (status, out, err) == (
        0, f"<stdin>: {len(lines)} events, 1 run, 0 errors, 0 warnings\n".encode(), b"")


@EXAMPLES
@given(valid_runs(), st.data())
def test_property_damage_to_one_line_leaves_the_others_alone(run_, data):
    """A line cut short (and followed by junk) gives what a blank line there gives, and
    at most one message about it: exactly one from validate, which reads every line in
    full (the converters may leave a line unread when it cannot hold an event they
    want)."""
    lines = run_[0]
    index = data.draw(st.integers(0, len(lines) - 1))
    line = lines[index][:-1]
    cut = data.draw(st.integers(1, len(line) - 1))
    junk = data.draw(st.sampled_from([b"", b"\xff", b"\x00", b"\x1b[2J", b"]"]))
    damaged = b"".join(lines[:index] + [line[:cut] + junk + b"\n"] + lines[index + 1:])
    blank = b"".join(lines[:index] + [b"\n"] + lines[index + 1:])
    where = f"<stdin>:{index + 1}: "
    for verb in VERBS:
        status, out, err = in_process(verb, damaged)
        blank_status, blank_out, blank_err = in_process(verb, blank)
        assert_one_line_messages(verb, err)
        if verb == "validate":
            found = [text for text in out.decode().splitlines()
                     if text.startswith(where) and text.endswith(("[json]", "[truncated]"))]
            assert len(found) == 1
            others = [text for text in out.decode().splitlines()[:-1] if text not in found]
            assert others == blank_out.decode().splitlines()[:-1] and status == 1
        else:
            assert (status, out) == (blank_status, blank_out)
            extra = err.decode().splitlines()
            for message in blank_err.decode().splitlines():
                extra.remove(message)
            assert len(extra) <= 1
            assert all(text.startswith(f"ndagent-{verb}: {where}warning: skipped: ")
                       for text in extra)


# Terminal safety: whatever the stream holds, text and every message stay one line each
# with no raw control character.

def hostile(value, keys=False, text="\x1b[31m\x9b2J\x7f\x07\r\x00\x85"):
    """``value`` with control characters added to every string (and key, if asked)."""
    if type(value) is str:
        return value + text
    if type(value) is list:
        return [hostile(item, keys, text) for item in value]
    if type(value) is dict:
        return {(hostile(key, keys, text) if keys and key != "type" else key):
                hostile(item, keys, text) for key, item in value.items()}
    return value


@pytest.mark.parametrize("keys", [False, True], ids=["values", "keys and values"])
@pytest.mark.parametrize("name", ["vendor-example.ndjson", "shapes.ndjson",
                                  "capture-parallel.ndjson", "sample.ndjson"])
def test_no_control_character_reaches_the_terminal(name, keys):
    data = b"".join(orjson.dumps(hostile(orjson.loads(line), keys)) + b"\n"
                    for line in lines_of(name))
    runs = [(verb, []) for verb in VERBS] + [
        ("text", ["-v"]), ("text", ["--final"]), ("validate", ["--strict"]),
        ("tools", ["--format", "tsv"])]
    for verb, argv in runs:
        status, out, err = in_process(verb, data, *argv)
        assert_one_line_messages(verb, err)
        if argv == ["--final"]:  # prose: its lines and tabs are kept
            out = out.replace(b"\t", b"")
        if verb in ("text", "validate"):
            assert not RAW_CONTROL.search(out.replace(b"\n", b""))


@EXAMPLES
@given(valid_runs(), st.booleans())
def test_property_text_and_validate_escape_every_control_character(run_, verbose):
    data = b"".join(run_[0])
    for verb, argv in [("text", ["-v"] if verbose else []), ("validate", ["--strict"])]:
        status, out, err = in_process(verb, data, *argv)
        assert not RAW_CONTROL.search(out.replace(b"\n", b"") + err)


# Numbers of any size: one rule for every command (README, Reliability).

def test_integers_of_thousands_of_digits_are_kept_and_never_a_traceback():
    huge = b"9" * 4300
    stream = b"".join([
        VENDOR[0],
        tool_event("started", "c", "shellToolCall", {"command": "ls"}, session_id=SESSION)
        .replace(b'"session_id"', b'"timestamp_ms":' + huge + b',"session_id"'),
        tool_event("completed", "c", "shellToolCall", {"command": "ls"}, "success",
                   session_id=SESSION)
        .replace(b'"session_id"', b'"timestamp_ms":' + huge + b'1,"session_id"'),
        VENDOR[-1].replace(b'"duration_ms":5234', b'"duration_ms":1' + huge)
        .replace(b'"result":"I\'ll read the README.md file and create a summary"',
                 b'"result":""'),
    ])
    for verb, *options in (("tools",), ("tools", "--format", "tsv"), ("json",), ("text", "-v"),
                           ("validate",)):
        done = run(verb, *options, input=stream)
        assert_one_line_messages(verb, done.stderr)
        assert done.returncode == 0, (verb, done.stderr)
    tools = run("tools", input=stream).stdout
    assert orjson.loads(tools)["duration_ms"] is None  # no number to compute with
    assert b'"duration_ms":1' + huge + b"," in run("json", input=stream).stdout


# Memory bounded in bytes: a line with no end.

def test_a_line_longer_than_the_limit_is_reported_once_and_passed_over():
    long = b'{"type":"assistant","message":{"content":[{"type":"text","text":"' + (
        b"x" * 5000) + b'"}]}}'
    stream = VENDOR[0] + long + b"\n" + b"".join(VENDOR[1:])
    for verb in CONVERTERS:
        done = run(verb, "--max-line", "1K", input=stream)
        err = done.stderr.decode()
        assert err.startswith(f"ndagent-{verb}: <stdin>:2: warning: skipped: line longer than "
                              '1 KiB (--max-line): passed over: "{"type":"assistant"')
        assert err.count("\n") == 1
        whole = run(verb, input=VENDOR[0] + b"\n" + b"".join(VENDOR[1:]))
        assert (done.returncode, done.stdout) == (whole.returncode, whole.stdout)
    # What follows the long line is read: the run is whole.
    json_done = run("json", "--max-line", "1K", input=stream)
    assert json_done.returncode == 0
    assert orjson.loads(json_done.stdout) == orjson.loads(VENDOR[-1])
    validate = run("validate", "--max-line", "1K", input=stream).stdout.decode()
    assert "<stdin>:2: error: line longer than 1 KiB (--max-line): passed over" in validate


@pytest.mark.parametrize("verb", VERBS)
def test_an_input_with_no_newline_stays_under_100_megabytes(verb):
    """``ndagent VERB /dev/zero`` for a second (64 MiB are read in a fraction of it): its
    peak memory, read in a process of its own so that no other child counts."""
    script = (
        "import resource, subprocess, sys\n"
        "child = subprocess.Popen([sys.argv[1], '/dev/zero'], stdout=subprocess.DEVNULL,\n"
        "                         stderr=subprocess.DEVNULL)\n"
        "try:\n    child.wait(timeout=1)\nexcept subprocess.TimeoutExpired:\n"
        "    child.kill(); child.wait()\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    done = subprocess.run([sys.executable, "-c", script, command(verb)], capture_output=True,
                          check=True)
    peak_kb = int(done.stdout)
    if sys.platform == "darwin":  # bytes there
        peak_kb //= 1024
    assert peak_kb < 100 * 1024


def test_running_out_of_memory_is_one_message_not_a_traceback(tmp_path):
    path = tmp_path / "big.ndjson"
    with open(path, "wb") as file:  # the 300 MB line, written a megabyte at a time
        file.write(b'{"type":"assistant","text":"')
        megabyte = b"x" * (1 << 20)
        for _ in range(300):
            file.write(megabyte)
        file.write(b'"}\n')
    done = subprocess.run(["bash", "-c", 'ulimit -v 400000; exec "$0" --max-line 1G "$1"',
                           command("result"), str(path)], capture_output=True, timeout=60)
    assert b"Traceback" not in done.stderr
    assert done.stderr.decode() == "ndagent-result: out of memory: try a smaller --max-line\n"
    assert done.returncode == 2


def test_utf16_input_gets_one_message():
    text = b"".join(VENDOR).decode()
    for encoded in (text.encode("utf-16"), text.encode("utf-16-be").join([b"\xfe\xff", b""])):
        done = run("json", input=encoded)
        assert done.stderr.decode() == (
            "ndagent-json: <stdin>:1: error: cannot read: UTF-16 text, not UTF-8: convert it first "
            "(iconv -f UTF-16 -t UTF-8)\n")
        assert (done.returncode, done.stdout) == (1, b"")


# Bounded messages: however long the stream's strings, no message or diagnostic line is
# longer than this (two quotes of at most QUOTE_LIMIT characters, each spelt out in at
# most 10 as \U000e0001 and escaped once more in JSON, with the rest of the message).
LINE_BOUND = 2048

LONG_TEXT = st.builds(lambda piece, times: piece * times,
                      st.one_of(st.text(st.characters(codec="utf-8"), min_size=1, max_size=5),
                                st.sampled_from(["\\", "\U000e0001", "\u202e", "\x1b[2J"])),
                      st.integers(1, 1000))


@st.composite
def streams_quoting_long_text(draw):
    """A run with long text in every place a diagnostic names: session and call ids,
    type, subtype, field and tool names, a number."""
    text = [draw(LONG_TEXT) for _ in range(11)]
    session = text[0]
    tool = {text[7] + "ToolCall": {"args": {}, text[8]: 1}, text[9]: {}}
    events = [
        {"type": "system", "subtype": "init", "session_id": session},
        {"type": "user", "session_id": text[1], text[2]: 1, "message": {
            "role": "user", text[3]: 1, "content": [{"type": "text", "text": "", text[4]: 1}]}},
        {"type": text[5], "session_id": session},
        {"type": "thinking", "subtype": text[6], "session_id": session},
        {"type": "tool_call", "subtype": "started", "call_id": text[10], "tool_call": tool,
         "session_id": session},
        {"type": "tool_call", "subtype": "started", "call_id": text[10], "tool_call": tool,
         "session_id": session},
        {"type": "tool_call", "subtype": "completed", "call_id": text[9], "session_id": session,
         "tool_call": {text[7] + "ToolCall": {"result": {text[8]: {}}}}},
        {"type": "result", "subtype": "success", "is_error": False, "result": "",
         "duration_ms": -int("9" * draw(st.integers(1, 4000))), "session_id": session},
    ]
    return b"".join(json.dumps(event, ensure_ascii=False).encode() + b"\n" for event in events)


@EXAMPLES
@given(streams_quoting_long_text())
def test_property_messages_quote_stream_text_short(data):
    runs = [(verb, []) for verb in CONVERTERS] + [
        ("validate", []), ("validate", ["--strict"]),
        ("validate", ["--strict", "--format", "json"])]
    for verb, argv in runs:
        status, out, err = in_process(verb, data, *argv)
        shown = err.splitlines() + (out.splitlines() if verb == "validate" else [])
        assert max(map(len, shown), default=0) <= LINE_BOUND
