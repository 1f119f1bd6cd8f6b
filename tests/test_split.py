"""A large FILE read in parts (ndagent.inputs cuts it, ndagent.engine reads the parts):
every verb prints what one process prints, wherever the FILE is cut and whatever lines
lie beside the cuts."""

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest
from conftest import InProcess, at_length, examples, full_size, with_parts
from golden_streams import respelt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_prefilter import INIT, result, runs, spelt

from ndagent import engine, frame, inputs
from ndagent.cmd_validate import ValidateCommand
from ndagent.output import Output
from ndagent.sources import Part

in_process = InProcess()

# Each example runs verbs in one process and in parts: a handful here, many under
# 'make fuzz' (NDAGENT_EXAMPLES).
EXAMPLES = settings(max_examples=examples(5, lambda count: max(count // 10, 25)),
                    deadline=None, suppress_health_check=list(HealthCheck), database=None)

# Lines that may stand beside a place where the stream could be cut, and must then
# keep it whole there (or be read as one process reads them): another agent's result
# or init, a result cut short, noise, a blank line, a result after a result.
ODD_LINES = [
    orjson.dumps(result("x", num_turns=1)).decode(),  # Claude's
    orjson.dumps({**INIT, "tools": []}).decode(),  # Claude's
    orjson.dumps(result("x"))[:-9].decode(),
    "ActionRequiredError: You've hit your usage limit",
    "",
    orjson.dumps(result("again")).decode(),
    orjson.dumps({"type": "thinking", "subtype": "delta", "text": "x",
                  "session_id": "s"}).decode(),
    '{"type":"result","subtype":"success","duration_ms":' + "9" * 30 + '}',
]


def put_anywhere(draw, lines, odd):
    """Put up to four of the ``odd`` lines anywhere among ``lines``."""
    for _ in range(draw(st.integers(0, 4))):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(odd)))


@st.composite
def streams(draw):
    """Runs (most ending in a result, where a cut may be made), their lines spelt in any
    way, odd lines put anywhere, \\r\\n line ends or not, a byte order mark or not."""
    plain = draw(st.booleans())  # as the CLI writes them: the usual places to cut
    lines = []
    for number in range(draw(st.integers(1, 6))):
        events = draw(runs())
        if events[-1]["type"] != "result" and draw(st.booleans()):
            events.append(result(""))
        # Another agent's result or init where a run would end or begin: the frame
        # passes over it (a bad line), so that no run ends or begins there.
        if events[-1]["type"] == "result" and draw(st.integers(0, 4)) == 0:
            events[-1] = {**events[-1], "num_turns": 1}
        if number and draw(st.integers(0, 4)) == 0:  # (not the first: Claude's stream)
            events[0] = {**INIT, "tools": []}
        lines += [orjson.dumps(event).decode() if plain else draw(spelt(event))
                  for event in events]
    put_anywhere(draw, lines, ODD_LINES)
    end = draw(st.sampled_from(["\n", "\r\n"]))
    data = (end.join(lines) + end).encode()
    if draw(st.booleans()):
        data = data[:draw(st.integers(len(data) // 2, len(data)))]  # cut off
    if draw(st.integers(0, 5)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


@st.composite
def gemini_streams(draw):
    """Gemini runs (most ending in a result, where a cut may be made), with other
    agents' results, a result cut short, noise and blank lines put anywhere."""
    from test_format_gemini import done, error, failed, init, say, use, user
    from test_format_gemini import result as gemini_result

    lines = []
    for number in range(draw(st.integers(1, 6))):
        events = [init(), user()] if draw(st.integers(0, 5)) else [user()]
        for index in range(draw(st.integers(0, 4))):
            call = f"call-{number}-{index}"
            events += draw(st.sampled_from([
                [say("Hello")], [say(" world\n")], [use("read_file", call, path="a")],
                [use("run_shell_command", call, command="ls"), done(call)],
                [use("grep", call), failed(call, "x", "no")], [error("slow", "warning")]]))
        if draw(st.integers(0, 3)):
            events.append(gemini_result(draw(st.sampled_from(["success", "error"]))))
        lines += [orjson.dumps(event).decode() for event in events]
    odd = [orjson.dumps(result("x")).decode(),  # Cursor's
           orjson.dumps(result("x", num_turns=1)).decode(),  # Claude's
           orjson.dumps(gemini_result())[:-12].decode(),
           "[ERROR] quota exceeded", "", orjson.dumps(gemini_result()).decode()]
    put_anywhere(draw, lines, odd)
    return ("\n".join(lines) + "\n").encode()


@st.composite
def claude_streams(draw):
    """Claude runs (most ending in a result, some with a result_index, not always one
    more than the last), with other agents' results, a result cut short, a hook line,
    noise and blank lines put anywhere."""
    from test_format_claude import assistant, init, text, tool_result, tool_use, user
    from test_format_claude import result as claude_result
    from test_format_gemini import result as gemini_result

    lines = []
    for number in range(draw(st.integers(1, 6))):
        events = [init()] if draw(st.integers(0, 5)) else []
        for index in range(draw(st.integers(0, 4))):
            call = f"toolu_{number}_{index}"
            events += draw(st.sampled_from([
                [assistant(f"msg_{number}_{index}", text("Hello"))],
                [assistant(f"msg_{number}_{index}", tool_use(call, "Bash", command="ls")),
                 user(tool_result(call, "ok"))],
                [assistant(f"msg_{number}_{index}", tool_use(call, "Read", file_path="a"))]]))
        if draw(st.integers(0, 3)):
            index = draw(st.sampled_from([None, number, number + 2]))
            events.append(claude_result(**({} if index is None else {"result_index": index})))
        lines += [orjson.dumps(event).decode() for event in events]
    odd = [orjson.dumps(result("x")).decode(),  # Cursor's
           orjson.dumps(gemini_result()).decode(),
           orjson.dumps(claude_result())[:-12].decode(),
           orjson.dumps({"type": "system", "subtype": "hook_started", "hook_id": "h",
                         "session_id": "s"}).decode(),
           "Error: rate limited", "", orjson.dumps(claude_result()).decode()]
    put_anywhere(draw, lines, odd)
    return ("\n".join(lines) + "\n").encode()


@st.composite
def codex_streams(draw):
    """Codex runs, most in a thread of their own (where a cut may be made), some a next
    turn of the thread before, most ending in turn.completed or turn.failed, with other
    agents' results, a turn.completed cut short, a line of the format before 0.44 (which
    validate reports once an input), noise and blank lines put anywhere."""
    from test_format_claude import result as claude_result
    from test_format_codex import TURN, command, completed, failed, message, reasoning, thread

    lines = []
    for number in range(draw(st.integers(1, 6))):
        events = [thread(f"thread-{number}"), TURN] if draw(st.integers(0, 4)) else [TURN]
        for index in range(draw(st.integers(0, 4))):
            item = f"item_{number}_{index}"
            events += draw(st.sampled_from([
                [message(item, "Hello")], [reasoning(item)],
                [command("started", item, "ls", "in_progress"),
                 command("completed", item, "ls", "completed", 0, "a\n")],
                [command("completed", item, "false", "failed", 1)],
                [{"type": "error", "message": "Reconnecting... 1/5"}]]))
        if draw(st.integers(0, 3)):
            events.append(draw(st.sampled_from([completed(), failed("boom")])))
        lines += [orjson.dumps(event).decode() for event in events]
    odd = [orjson.dumps(result("x")).decode(),  # Cursor's
           orjson.dumps(claude_result()).decode(),
           orjson.dumps(completed())[:-12].decode(),
           orjson.dumps({"type": "thread.started"}).decode(),
           orjson.dumps({"id": "0", "msg": {"type": "task_started"}}).decode(),  # before 0.44
           "Reading prompt from stdin...", "", orjson.dumps(completed()).decode()]
    put_anywhere(draw, lines, odd)
    return ("\n".join(lines) + "\n").encode()


# The streams made here, and the golden inputs of every registered format, their lines'
# keys in any order.
STREAMS = st.one_of(streams(), gemini_streams(), claude_streams(), codex_streams(), respelt())
OPTIONS = [(), ("--strict",), ("-q", "--format", "ndjson"), ("--max-line", "120"),
           ("--agent", "cursor")]


@contextmanager
def parts_from(size, search=inputs.SPLIT_SEARCH, cores=None):
    """Every FILE of ``size`` bytes or more read in parts, a cut looked for within
    ``search`` bytes, as if there were ``cores`` cores (for the verbs without -j);
    ``parts_from.made``: the parts of each FILE cut."""
    saved = inputs.SPLIT_FROM, inputs.SPLIT_SEARCH, inputs.Cutter.parts, inputs.cores
    made = parts_from.made = []

    def watched(cutter, name, count):
        found = saved[2](cutter, name, count)
        if found is not None:
            made.append(found)
        return found

    inputs.SPLIT_FROM, inputs.SPLIT_SEARCH, inputs.Cutter.parts = size, search, watched
    if cores is not None:
        inputs.cores = lambda: cores
    try:
        yield
    finally:
        inputs.SPLIT_FROM, inputs.SPLIT_SEARCH, inputs.Cutter.parts, inputs.cores = saved


def split(command, name, count):
    """``name`` as the parts ``command`` reads it in, or as itself."""
    found = frame._cutter(command).parts(name, count)
    if found is None:
        return [name]
    inputs.Cutter.close(found)
    return found


def prints_the_same_in_parts(path, verb, *options, search=inputs.SPLIT_SEARCH, cores=3):
    """Whether ``verb`` with ``options`` prints (status, output, messages) in parts of
    the FILE ``path`` (at most ``cores``, a cut looked for within ``search`` bytes) what
    it prints in one process."""
    with parts_from(1 << 62):
        one = in_process(verb, b"", *options, path)
    with parts_from(0, search, cores):
        return in_process(verb, b"", *options, path) == one


@EXAMPLES
@given(STREAMS, st.sampled_from(OPTIONS), st.integers(2, 4),
       st.sampled_from([200, 4096, 1 << 20]))
def test_property_validate_prints_in_parts_what_one_process_prints(stream, options, jobs,
                                                                     search):
    with tempfile.TemporaryDirectory() as folder:  # no fixture: 'make fuzz' calls it too
        path = Path(folder) / "run.ndjson"
        path.write_bytes(stream)
        names = [path, path, "-"]  # the FILE twice: its parts' counts are its own
        one = in_process("validate", stream, *options, "-j", "1", *names)
        with parts_from(0, search):
            parts = in_process("validate", stream, *options, "-j", str(jobs), *names)
        assert parts == one


CONVERTERS = [("json",), ("result",), ("result", "--from-result"), ("result", "--live"),
              ("text", "-v"), ("text", "--progress"), ("tools",), ("tools", "--format", "tsv"),
              ("text", "--strict"), ("json", "--max-line", "120")]


@EXAMPLES
@given(STREAMS, st.integers(2, 4),
       st.sampled_from([200, 4096, 1 << 20]))
def test_property_converters_print_in_parts_what_one_process_prints(stream, cores, search):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.ndjson"
        path.write_bytes(stream)
        for verb, *options in CONVERTERS:
            assert prints_the_same_in_parts(path, verb, *options, search=search,
                                            cores=cores), (verb, *options)


# Values for the options that take one and list no choices, by dest: any option a
# verb's parser adds must be here (or have choices), so that the property below draws
# it too.
VALUES = {
    "max_line": ["120", "4K"],
    "jobs": ["1", "2", "3"],
    "top": ["0", "2"],
    "kind": ["shell", "read,edit", "mcp"],
    "tool": ["Bash", "read_file,run_shell_command"],
    "status": ["failure", "pending", "success,failed"],
    "time_origin": ["0", "2026-06-01T10:00:00Z"],
    "title": ["Runs", "<b>`x`</b>"],
    "max_chars": ["1", "40", "10000"],
    "max_bytes": ["1", "2000", "4K"],
    "tz": ["UTC", "Europe/Paris"],
    "since": ["2026-01-01", "today"],
    "until": ["20300101"],
    "prices": [str(Path(__file__).parent / "fixtures" / "prices" / "litellm-sample.json")],
}
# What the property does not draw: help and version, the FILEs it gives itself,
# --merge, which reads partials, not streams (tests/test_stats.py), --sessions, which
# reads the user's own folders (tests/test_sessions.py), and --split, which writes files,
# not standard output (tests/test_transcript.py).
NOT_DRAWN = {"help", "version", "files", "merge", "sessions", "split"}
# markdown and html number their runs across the output and bound it (--max-bytes),
# which only the order of the output knows (ndagent.output.Marks).
SHARED_VERBS = ("json", "result", "text", "tools", "validate", "stats", "markdown", "html")


@st.composite
def verb_options(draw, verb):
    """A verb, and options drawn from its own parser: each option given or not, with
    one of its choices or of VALUES."""
    from importlib import import_module

    parser = import_module(f"ndagent.cmd_{verb}").build_parser()
    arguments = []
    for action in parser._actions:
        if action.dest in NOT_DRAWN or not draw(st.booleans()):
            continue
        name = draw(st.sampled_from(action.option_strings))
        if action.nargs == 0:
            arguments.append(name)
            continue
        values = action.choices or VALUES.get(action.dest)
        assert values, f"{verb} {name}: add example values to VALUES"
        value = draw(st.sampled_from(list(values)))
        arguments.append(f"{name}={value}" if action.nargs == "?" else name)
        if action.nargs != "?":
            arguments.append(value)
    return arguments


@EXAMPLES
@given(STREAMS, st.data())
def test_property_every_verb_with_any_options_prints_in_parts_what_one_process_prints(
        stream, data):
    """Every verb, with options drawn from its parser, on a FILE given twice and on
    standard input: in parts (every FILE cut wherever its format allows, each part in a
    process of its own) it prints what one process prints, what it writes once per
    output included (a header, a summary)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.ndjson"
        path.write_bytes(stream)
        for verb in SHARED_VERBS:
            options = data.draw(verb_options(verb), label=verb)
            for names in ([path], [path, "-", path]):
                one = with_parts("never", verb, stream, *options, *names)
                assert with_parts("always", verb, stream, *options, *names) == one, (
                    verb, *options)


@pytest.mark.parametrize("verb, options", [
    ("tools", ["--format", "tsv", "--header"]), ("stats", ["--by", "run", "--format", "tsv",
                                                         "--header"]),
    ("stats", []), ("stats", ["--partial"]), ("stats", ["--by", "model", "--format", "text"]),
    ("validate", []), ("validate", ["--format", "ndjson"])])
def test_what_comes_once_per_output_comes_once_in_parts(verb, options, tmp_path):
    """A header, the figures, a FILE's summary: written once, by the process that owns
    standard output, however many parts the FILE is read in."""
    path = tmp_path / "runs.ndjson"
    path.write_bytes(_stream(12))
    one = with_parts("never", verb, b"", *options, path)
    parts = with_parts("always", verb, b"", *options, path)
    assert parts == one and one[0] == 0


def _stream(runs_count):
    events = []
    for index in range(runs_count):
        events += [INIT, {"type": "assistant", "message": {"role": "assistant", "content": [
                       {"type": "text", "text": f"answer {index}"}]}, "session_id": "s"},
                   result(f"answer {index}")]
    return b"".join(orjson.dumps(event) + b"\n" for event in events)


def test_a_file_of_many_runs_is_read_in_parts_cut_between_runs(tmp_path):
    path = tmp_path / "runs.ndjson"
    stream = _stream(30)
    path.write_bytes(stream)
    command = ValidateCommand(ValidateCommand.build_parser().parse_args([str(path)]),
                              "ndagent-validate", Output())
    with parts_from(0):
        found = split(command, str(path), 3)
    assert [part.about for part in found] == ["cursor"] * 3
    assert found[0].begin == 0 and found[-1].end is None
    for before, after in zip(found, found[1:]):
        assert before.end == after.begin
        assert stream[:after.begin].endswith(b"}\n")
        assert stream[after.begin:].startswith(b'{"type":"system","subtype":"init"')
    one = in_process("validate", b"", "-j", "1", path)
    with parts_from(0):
        assert in_process("validate", b"", "-j", "3", path) == one
    assert len(parts_from.made) == 1
    assert one[1] == f"{path}: 90 events, 30 runs, 0 errors, 0 warnings\n".encode()


def test_no_cut_is_made_where_no_run_ends(tmp_path):
    """One run, or a FILE of another format, or the output file: read whole."""
    path = tmp_path / "one.ndjson"
    path.write_bytes(_stream(1))
    command = ValidateCommand(ValidateCommand.build_parser().parse_args([str(path)]),
                              "ndagent-validate", Output())
    with parts_from(0):
        assert split(command, str(path), 2) == [str(path)]
        assert split(command, "-", 2) == ["-"]
    claude = tmp_path / "claude.ndjson"
    claude.write_bytes(b'{"type":"system","subtype":"init","session_id":"s","tools":[]}\n' * 4)
    with parts_from(0):
        assert split(command, str(claude), 2) == [str(claude)]


def test_a_part_is_numbered_and_named_as_in_its_file(tmp_path):
    from ndagent.decoder import iter_items

    path = tmp_path / "runs.ndjson"
    stream = _stream(3)
    path.write_bytes(stream)
    begin = stream.index(b'{"type":"system"', 10)
    with open(path, "rb") as handle:
        items = list(iter_items([Part(str(path), handle.fileno(), begin, None)]))
    assert [(item.source, item.line) for item in items] == [(str(path), line)
                                                           for line in range(4, 10)]


def test_a_part_after_one_that_cannot_be_read_is_not_taken(tmp_path, monkeypatch):
    """One process stops reading a FILE where a read fails: so do the parts, the later
    ones' output dropped (here, a bad line), and no summary is printed."""
    from ndagent import sources

    path = tmp_path / "runs.ndjson"
    stream = _stream(30)
    bad = stream.index(b"answer 25") - 40
    stream = stream[:bad] + b"not json\n" + stream[bad:]
    path.write_bytes(stream)
    failing = stream.index(b"answer 15")  # in the second of three parts
    read = sources._Range.read

    def failing_read(self, size):
        if self.position <= failing < self.position + size:
            raise OSError(5, "Input/output error")
        return read(self, size)

    monkeypatch.setattr(sources._Range, "read", failing_read)
    with parts_from(0):
        status, out, err = in_process("validate", b"", "-j", "3", path)
    assert len(parts_from.made[0]) == 3
    assert parts_from.made[0][1].begin < failing < parts_from.made[0][2].begin
    assert status == 2 and b"error: cannot read: Input/output error" in err
    assert b"not json" not in out and b" events, " not in out


def test_a_child_that_dies_is_told(tmp_path, monkeypatch):
    path = tmp_path / "runs.ndjson"
    path.write_bytes(_stream(30))
    monkeypatch.setattr(ValidateCommand, "begin_run", lambda self, start: os._exit(9))
    with parts_from(0):
        status, out, err = in_process("validate", b"", "-j", "2", path)
    assert status == 2 and b"a worker process died" in err and out == b""


def test_parts_without_room_for_a_child_are_read_here(tmp_path, monkeypatch):
    path = tmp_path / "runs.ndjson"
    path.write_bytes(_stream(30))
    one = in_process("validate", b"", "-j", "1", path)
    started = []

    def no_room(work, shares, terminal, others):
        started.append(shares)
        return None

    monkeypatch.setattr(engine, "_start", no_room)
    with parts_from(0):
        assert in_process("validate", b"", "-j", "3", path) == one
    # A child tried for each part in its turn, refused, and the part read here.
    assert started == [parts_from.made[0]] * len(parts_from.made[0])


def test_a_child_reads_one_share_after_another(tmp_path, monkeypatch):
    """However many shares, no more children are forked than -j says: each reads the
    shares it is given one after another."""
    names = []
    for index in range(40):
        path = tmp_path / f"{index}.ndjson"
        path.write_bytes(_stream(1))  # one run: no place to cut it
        names.append(path)
    one = in_process("validate", b"", "-j", "1", *names)
    started = []
    start = engine._start

    def counted(*arguments):
        started.append(os.getpid())
        return start(*arguments)

    monkeypatch.setattr(engine, "_start", counted)
    monkeypatch.setenv("NDAGENT_PARTS", "always")  # a share a FILE: 40 shares
    assert in_process("validate", b"", "-j", "3", *names) == one
    assert len(started) == 3


def test_a_message_said_once_in_a_share_read_again_is_said_in_the_next(capfd):
    """A child that asked, said a message once, then saw its share read again here (its
    output given up) says that message again in its next share, which needs it."""
    import time

    def work(share, out, here):
        if share == 0:
            time.sleep(0.3)  # the share being written is slow: the child of 1 reads 2 too
        elif share == 1 and not here:  # cannot know: asks, then warns
            out.ask("key")
            out.message(b"share 1 warns\n", "warning")
        elif share == 2:
            out.message(b"share 2 warns\n", "warning")
        out.write(b"share %d\n" % share)
        out.flush()
        return share

    assert engine.run([0, 1, 2], 2, Output(1), work, lambda index, value: True,
                      known=lambda key: key == "key")
    out, err = capfd.readouterr()
    assert (out, err) == ("share 0\nshare 1\nshare 2\n", "share 2 warns\n")


@pytest.mark.parametrize("by", [[], ["--by", "model"]])
def test_a_run_whose_messages_were_counted_before_is_priced_as_they_were(by, tmp_path):
    """A session FILE given twice: the second copy's runs have no message of their own
    left, and are priced, or not, as those messages were (as a share that reads the
    copy alone finds them), in one process and in shares alike (make fuzz found it)."""
    session = Path(__file__).parent / "golden" / "gemini_session" / "whole-document"
    path = tmp_path / "session.json"
    path.write_bytes((session / "input.ndjson").read_bytes())
    prices = Path(__file__).parent / "fixtures" / "prices" / "litellm-sample.json"
    one = with_parts("never", "stats", b"", *by, "--prices", prices, path, path)
    assert with_parts("always", "stats", b"", *by, "--prices", prices, path, path) == one
    assert one[1].count(b"no run priced") == (2 if by else 1)  # its model is not priced


def _noisy_file(path, size):
    """A FILE of about ``size`` bytes whose every line is a finding (a line that is no
    JSON) but for a run's three lines every 2000: validate prints about three times its
    size."""
    init, *rest = _stream(1).splitlines(keepends=True)
    noise = b"ActionRequiredError: You've hit your usage limit\n" * 2000
    with open(path, "wb") as file:
        while file.tell() < size:
            file.write(init + noise + b"".join(rest))


def test_what_the_later_parts_print_is_held_up_to_a_bound(tmp_path, monkeypatch):
    """What this process holds of the later parts' output, while it writes the first
    part's, stays within engine.HELD (and a few reads of a pipe), however much they
    print: a FILE that prints three megabytes, read in two parts with HELD at 64 KiB and
    pipes read 4 KiB at a time, so that the bound is passed many times over.  The
    parts' run is traced (tracemalloc: this process's allocations, not its children's);
    the real command's peak on a FILE past SPLIT_FROM runs in 'make fuzz' (the test
    below)."""
    import tracemalloc

    path = tmp_path / "noisy.ndjson"
    _noisy_file(path, 1 << 20)
    one = in_process("validate", b"", "-j", "1", path)
    monkeypatch.setattr(engine, "HELD", 64 << 10)
    monkeypatch.setattr(engine, "PIPE_BUFFER", 4 << 10)
    run, start, peaks = engine.run, engine._start, []

    def traced(*arguments, **options):
        tracemalloc.start()
        try:
            return run(*arguments, **options)
        finally:
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()

    def untraced(work):  # in a child (not here), which tracing would only slow
        def child_work(share, out, here):
            if not here:
                tracemalloc.stop()
            return work(share, out, here)

        return child_work

    monkeypatch.setattr(engine, "run", traced)
    monkeypatch.setattr(engine, "_start", lambda work, *rest: start(untraced(work), *rest))
    with parts_from(0, 64 << 10, cores=2):
        parts = in_process("validate", b"", "-j", "2", path)
    assert len(parts_from.made) == 1 and len(parts_from.made[0]) == 2
    assert parts == one and one[0] == 1 and len(one[1]) > 3 << 20
    # Held without a bound, the second part's output (half of it) would be traced.
    assert peaks and max(peaks) < 2 << 20, f"peak {max(peaks) >> 10} KiB traced"


@full_size
def test_a_large_file_s_parts_keep_memory_bounded_however_much_they_print(tmp_path):
    """A FILE whose every line is a finding (a line that is no JSON) prints about three
    times its size: the parts' children send it as they go, and what this process holds
    of the later parts' is bounded (PARTS_HELD), so no process holds it all.  The real
    command on a FILE past SPLIT_FROM, some 60 MB printed: 'make fuzz' runs it (some ten
    seconds of two cores); the bound itself is checked in 'make test' by the test above."""
    from conftest import command, peak_rss

    path = tmp_path / "noisy.ndjson"
    _noisy_file(path, inputs.SPLIT_FROM + (4 << 20))
    with parts_from(inputs.SPLIT_FROM):
        command_ = ValidateCommand(ValidateCommand.build_parser().parse_args([str(path)]),
                                   "ndagent-validate", Output())
        assert len(split(command_, str(path), 2)) == 2
    with open(os.devnull, "rb") as stdin:
        status, peak = peak_rss([command("validate"), "-j", "2", path], stdin)
    assert status == 1
    assert peak < engine.HELD + (32 << 20)


@pytest.mark.parametrize("verb", [("text", "-v"), ("tools",)])
def test_a_warning_said_once_is_said_once_whatever_part_says_it(verb, tmp_path, monkeypatch):
    """text and tools warn once when calls open at once are too many: so do their parts,
    each of which would say it once (the first part's is written, the others' are not)."""
    from ndagent.model import CallPairer

    monkeypatch.setattr(CallPairer, "max_calls", 2)
    events = []
    for index in range(6):
        events.append(INIT)
        events += [{"type": "tool_call", "subtype": "started", "call_id": f"c{index}-{call}",
                    "tool_call": {"readToolCall": {"args": {"path": "/p"}}},
                    "session_id": "s"} for call in range(4)]
        events.append(result(""))
    path = tmp_path / "open.ndjson"
    path.write_bytes(b"".join(orjson.dumps(event) + b"\n" for event in events))
    with parts_from(1 << 62):
        one = in_process(verb[0], b"", *verb[1:], path)
    with parts_from(0, cores=3):
        parts = in_process(verb[0], b"", *verb[1:], path)
    assert len(parts_from.made) == 1 and len(parts_from.made[0]) == 3
    assert parts == one
    assert one[2].count(b"warning: too many tool calls open at once") == 1


def test_every_converter_reads_a_file_its_format_cuts_in_parts(tmp_path):
    """json, result, text and tools: a Cursor or Gemini FILE of many runs, in parts."""
    from test_format_gemini import init, user
    from test_format_gemini import result as gemini_result

    cursor = tmp_path / "cursor.ndjson"
    cursor.write_bytes(_stream(30))
    gemini = tmp_path / "gemini.ndjson"
    gemini.write_bytes(b"".join(orjson.dumps(event) + b"\n"
                                for _ in range(30) for event in (init(), user(), gemini_result())))
    for path in (cursor, gemini):
        for verb, options in [("json", ()), ("text", ()), ("tools", ()), ("json", ("--strict",)),
                              ("result", ())]:
            with parts_from(0, cores=2):
                in_process(verb, b"", *options, path)
            assert len(parts_from.made) == 1, (path.name, verb, options)


def test_validate_reads_a_claude_file_whole_as_result_index_runs_from_run_to_run(tmp_path):
    """Claude's results may carry a result_index, which validate checks against the
    last run's: cut between two runs, the second part would not know it."""
    from test_format_claude import assistant, init, text
    from test_format_claude import result as claude_result

    lines = []
    for number, index in enumerate([0, 5, 2, 3]):
        lines += [init(), assistant(f"msg_{number}", text("hi")),
                  claude_result("hi", result_index=index)]
    path = tmp_path / "claude.ndjson"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    one = in_process("validate", b"", "-j", "1", path)
    with parts_from(0):
        assert in_process("validate", b"", "-j", "2", path) == one
        assert in_process("result", b"", path)[0] == 0  # the converters do cut it
    assert len(parts_from.made) == 1
    assert one[1].count(b"[result-index]") == 2


def test_a_codex_file_is_cut_only_where_a_thread_begins_and_not_for_validate(tmp_path):
    """A Codex turn without thread.started continues the thread before it: no cut there.
    validate reads the FILE whole, as it says some findings once an input."""
    from test_format_codex import TURN, completed, message, thread

    lines = []
    for number in range(12):
        lines += [*([thread(f"t{number}")] if number % 3 == 0 else []), TURN,
                  message(f"m{number}", f"answer {number}"), completed()]
    path = tmp_path / "codex.ndjson"
    stream = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    path.write_bytes(stream)
    command = ValidateCommand(ValidateCommand.build_parser().parse_args([str(path)]),
                              "ndagent-validate", Output())
    with parts_from(0):
        assert split(command, str(path), 2) == [str(path)]
        one = in_process("validate", b"", "-j", "1", path)
        assert in_process("validate", b"", "-j", "2", path) == one
    assert parts_from.made == []
    for verb in ("json", "result", "text"):
        assert prints_the_same_in_parts(path, verb, cores=4), verb
        made = parts_from.made[0]
        assert len(made) > 1
        assert all(stream[part.begin:].startswith(b'{"type":"thread.started"')
                   for part in made[1:])


@pytest.mark.at_length
@pytest.mark.parametrize("agent", ["cursor", "claude", "codex", "gemini", "opencode", "qwen",
                                   "amp", "antigravity", "copilot"])
def test_the_bench_streams_print_the_same_in_parts(agent, tmp_path):
    """The first 400 kB of each agent's bench stream (tests/bench/generate.py: hundreds
    of runs of every shape it makes; its first megabyte in 'make fuzz'), a bad line and
    a cut-off line put in: every verb prints in parts what it prints in one process,
    and each agent's FILE is cut for every converter."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "bench"))
    from generate import generate

    path = tmp_path / f"bench-{agent}.ndjson"
    generate(path, at_length(0.4, 1), seed=11, agent=agent)
    data = path.read_bytes()
    middle = data.index(b"\n", len(data) // 3) + 1
    path.write_bytes(data[:middle] + b"not json\n" + data[middle:] + data[:200])
    for verb, *options in [*CONVERTERS, ("validate",), ("validate", "--strict")]:
        assert prints_the_same_in_parts(path, verb, *options), (verb, *options)
        if verb != "validate" and "--max-line" not in options:
            assert len(parts_from.made) == 1, (verb, *options)


TESTS = Path(__file__).resolve().parent
SMALL_INPUTS = sorted([*TESTS.glob("fixtures/*.ndjson"), *TESTS.glob("golden/*/*/input.ndjson")])


@pytest.mark.parametrize("path", SMALL_INPUTS, ids=lambda path: str(path.relative_to(TESTS)))
def test_every_fixture_twice_prints_the_same_in_parts(path, tmp_path):
    """Every fixture and golden input of every agent, twice in one FILE (so that one
    run's end meets the next one's start): every verb prints in parts what it prints in
    one process.  (Each verb's options in parts: the property above, which draws them
    from its parser.)"""
    twice = tmp_path / "twice.ndjson"
    data = path.read_bytes()
    twice.write_bytes(data + (b"" if data.endswith(b"\n") or not data else b"\n") + data)
    for verb, *options in [("json",), ("result",), ("text", "-v"), ("tools",), ("validate",)]:
        assert prints_the_same_in_parts(twice, verb, *options), (verb, *options)


SHARED_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


@pytest.mark.parametrize("agent", ["real", "claude", "codex"])
def test_real_captures_one_after_another_print_the_same_in_parts(agent, tmp_path):
    """The real captures of an agent, each twice, one after another as in a log folder
    catted together: every verb prints in parts what it prints in one process."""
    folder = SHARED_CORPUS / agent
    if not folder.is_dir():
        pytest.skip(f"{folder} is not here")
    captures = sorted(path for path in folder.iterdir() if path.suffix in (".jsonl", ".ndjson"))
    path = tmp_path / "all.ndjson"
    path.write_bytes(b"".join(capture.read_bytes() for capture in captures * 2))
    for verb, *options in [*CONVERTERS, ("validate",), ("validate", "--strict")]:
        assert prints_the_same_in_parts(path, verb, *options), (verb, *options)
        if "--max-line" not in options:  # (120 bytes: no line beside a cut is that short)
            assert len(parts_from.made) == (verb != "validate" or agent == "real")


@pytest.mark.parametrize("by", [[], ["--by", "model"]])
def test_a_run_s_estimate_is_the_exact_sum_its_messages_are_taken_back_by(by, tmp_path):
    """A session FILE given twice, in shares: the second share's messages, counted by
    the first, are taken back from its total at their exact cost, so the runs' estimates
    are exact sums of their messages' costs too, or the total would differ from one
    process's by a rounding (make fuzz found it)."""
    path = tmp_path / "session.jsonl"
    path.write_bytes((Path(__file__).parent / "fixtures" / "logs" / "session.jsonl").read_bytes())
    prices = Path(__file__).parent / "fixtures" / "prices" / "litellm-sample.json"
    options = [*by, "--prices", prices, "--partial"]
    one = with_parts("never", "stats", b"", *options, path, path)
    assert with_parts("always", "stats", b"", *options, path, path) == one
    assert b'"estimate_runs"' in one[1]
