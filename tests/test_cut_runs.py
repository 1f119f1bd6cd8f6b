"""A stream cut off anywhere, then another appended (``head -c N a.ndjson > cut; cat cut
b.ndjson``): the two never merge.  Whatever byte the cut falls after (a ``:``, a ``,``,
inside a string or a number), the run cut short is reported cut off and the stream
after it is printed as it prints alone, by every verb, for every agent, in both
execution modes and from standard input.  The properties run one example an agent
here; 'make fuzz' runs them at length (tests/fuzz/run.py)."""

import os
import re
import tempfile
from pathlib import Path

import orjson
import pytest
from conftest import run, with_parts
from golden_streams import (
    begins_a_run,
    cut_and_appended,
    ends_its_last_run,
    golden_inputs,
    with_own_ids,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_format_claude import assistant, text, tool_result, tool_use, user
from test_format_claude import init as claude_init
from test_format_claude import result as claude_result
from test_format_codex import TURN, command, completed, message, reasoning, thread
from test_format_codex import failed as codex_failed
from test_format_gemini import done, say, use
from test_format_gemini import init as gemini_init
from test_format_gemini import result as gemini_result
from test_format_gemini import user as gemini_user

from ndagent import formats, inputs

# Each example is read cut at every byte of a line, by every verb in both modes: one
# example an agent here, more under 'make fuzz' (NDAGENT_EXAMPLES).
EXAMPLES = settings(max_examples=max(int(os.environ.get("NDAGENT_EXAMPLES", "0")) // 500, 1),
                    deadline=None, suppress_health_check=list(HealthCheck), database=None)

# (verb, options): where the output is NDJSON, its records hold line numbers.
VERBS = [("json",), ("result",), ("text", "-v"), ("tools",), ("validate", "--format", "ndjson"),
         ("stats", "--by", "run", "--format", "ndjson")]
# The parts of a FILE read in parts (NDAGENT_PARTS=always): a few, each a process.
PARTS = 4

# In every id of a generated stream: each copy of it gets a number of its own there, so
# that no two copies share a session or a thread.
SEGMENT = b"SEGM"
# The same for the golden inputs of every format, in hex digits: their ids keep their
# shape with it (Gemini's call ids end in hex digits).
HEX_SEGMENT = b"5e9d"


GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.mark.parametrize("case", ["claude/success-tools", "codex/command-success",
                                  "cursor/sample", "gemini/tool-success"])
def test_a_run_cut_just_after_a_colon_then_another_stream_through_real_pipes(case):
    """The issue's reproduction: ``head -c N a.ndjson > cut; cat cut b.ndjson``, the cut
    just after the ``:`` of ``"type":`` in the last line.  The run cut short is cut off,
    the next stream's first line is read (two runs), and its answer printed."""
    stream = (GOLDEN / case / "input.ndjson").read_bytes()
    cut = stream[:stream.rindex(b"\n", 0, len(stream) - 1) + len(b'\n{"type":')]
    validate = run("validate", input=cut + stream)
    report = validate.stdout.decode()
    assert validate.returncode == 1
    assert "truncated line: another event begins inside it" in report
    assert "[no-result]" in report and ", 2 runs, 2 errors," in report
    whole, merged = run("result", input=stream), run("result", input=cut + stream)
    assert merged.returncode == 1 and merged.stdout.endswith(whole.stdout)


def test_a_stream_s_first_line_appended_to_a_cut_is_where_its_run_is_cut_off():
    """A cut stream, then only the first line of another (the input ends there): the run
    begun on that line is cut off at that line, not at the line before it."""
    lines = (GOLDEN / "cursor" / "two-runs" / "input.ndjson").read_bytes().splitlines()
    cut = b"\n".join(lines[:5]) + b'\n{"type":'
    report = run("validate", input=cut + lines[6]).stdout.decode().splitlines()
    assert report[1:3] == [
        "<stdin>:6: error: run ended without a result event: the agent failed or was cut off "
        f"(it began at line {line}) [no-result]" for line in (1, 6)]


# Runs of each agent, in the shapes its CLI writes; ``name`` tells one stream's ids
# from another's.

def cursor_run(draw, name):
    session = f"{name}-SEGM-4e7a-9c1f-2d5b8e0a7c34"
    events = [{"type": "system", "subtype": "init", "apiKeySource": "login",
               "cwd": "/home/user/calc", "session_id": session, "model": "Auto",
               "permissionMode": "default"},
              {"type": "user", "message": {"role": "user", "content": [
                  {"type": "text", "text": "The tests fail: fix them."}]}, "session_id": session}]
    answer = ""
    for index in range(draw(st.integers(0, 3))):
        step = draw(st.sampled_from(["text", "call", "thinking"]))
        if step == "text":
            piece = draw(st.sampled_from(["Reading calc.py.", " Fixed: `add`.", "\n\nDone."]))
            answer += piece
            events.append({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": piece}]}, "timestamp_ms": 1770900000300,
                "session_id": session})
        elif step == "thinking":
            events.append({"type": "thinking", "subtype": "delta", "text": "**Checking**",
                           "timestamp_ms": 1770900000020, "session_id": session})
        else:
            call = f"call_{name}{index}\nfc_0a1b2c3d"
            args = {"command": "python -m pytest -q", "workingDirectory": "/home/user/calc"}
            events.append({"type": "tool_call", "subtype": "started", "call_id": call,
                           "tool_call": {"shellToolCall": {"args": args}},
                           "timestamp_ms": 1770900000310, "session_id": session})
            outcome = draw(st.sampled_from(["success", "failure"]))
            events.append({"type": "tool_call", "subtype": "completed", "call_id": call,
                           "tool_call": {"shellToolCall": {"args": args, "result": {outcome: {
                               "exitCode": int(outcome != "success"), "stdout": "2 passed\n",
                               "stderr": ""}}}},
                           "timestamp_ms": 1770900001140, "session_id": session})
    ok = draw(st.booleans())
    events.append({"type": "result", "subtype": "success" if ok else "error",
                   "duration_ms": 4180, "duration_api_ms": 4180, "is_error": not ok,
                   "result": answer, "session_id": session,
                   "request_id": f"{name}-SEGM-4c3b-8e1f-6a9d2c5b7e10"})
    return events


def claude_run(draw, name):
    session = f"{name}-SEGM-4c8d-a7e5-0b1f2c3d4e5f"
    events = [claude_init(session_id=session)]
    answer = "Done."
    for index in range(draw(st.integers(0, 3))):
        message_id = f"msg_{name}{index}"
        if draw(st.booleans()):
            answer = draw(st.sampled_from(["Renamed it; the 12 tests pass.", "Done.", ""]))
            events.append(assistant(message_id, text(answer), session_id=session))
        else:
            call = f"toolu_{name}{index}"
            events.append(assistant(message_id, tool_use(call, "Bash", command="make test"),
                                    session_id=session))
            events.append(user(tool_result(call, "12 passed", draw(st.sampled_from(
                [None, True]))), session_id=session))
    if draw(st.booleans()):
        events.append(claude_result(answer, session_id=session))
    else:
        events.append(claude_result("", subtype="error_max_turns", is_error=True,
                                    session_id=session))
    return events


def codex_run(draw, name):
    events = [thread(f"019b3e4f-{name}-SEGM-b4d2-5e8f1a3c6d70"), TURN]
    for index in range(draw(st.integers(0, 3))):
        item = f"item_{name}{index}"
        events += draw(st.sampled_from([
            [message(item, "The largest is `logs/access.log`.")], [reasoning(item)],
            [command("started", item, "du -sh logs/*", "in_progress"),
             command("completed", item, "du -sh logs/*", "completed", 0, "312M\tlogs\n")],
            [command("completed", item, "false", "failed", 1)]]))
    events.append(draw(st.sampled_from([completed(), codex_failed("stream disconnected")])))
    return events


def gemini_run(draw, name):
    events = [gemini_init(session_id=f"{name}-SEGM-4d86-a0b3-e1f7c4d92a58"), gemini_user()]
    for index in range(draw(st.integers(0, 3))):
        call = f"run_shell_command-1778493953480-{name}{index}"
        events += draw(st.sampled_from([
            [say("The server listens on 5173.")], [say(" It is set in vite.config.ts.\n")],
            [use("run_shell_command", call, command="grep -rn port ."), done(call)]]))
    events.append(gemini_result(draw(st.sampled_from(["success", "error"]))))
    return events


RUNS = {"claude": claude_run, "codex": codex_run, "cursor": cursor_run, "gemini": gemini_run}


@st.composite
def stream_pairs(draw, agent):
    """(a stream of ``agent``'s of one or two runs, another stream of one or two)."""
    streams = []
    for name in ("a", "b"):
        events = []
        for number in range(draw(st.integers(1, 2))):
            events += RUNS[agent](draw, f"{name}{number}")
        streams.append(b"".join(orjson.dumps(event) + b"\n" for event in events))
    return streams


# What a verb prints, made comparable: a message about the line cut short says only that
# it was (not why, nor what the line holds, which a stream appended changes), a run cut
# off is known by where it began (not by the line it is said to end at: the last one
# read), and NDJSON records are objects.

def comparable(verb, printed):
    status, out, err = printed
    err = re.sub(rb"truncated line: [^\n]*", b"truncated line", err)
    if verb in ("json", "result", "text"):
        return status, out, err
    records = [orjson.loads(line) for line in out.splitlines()]
    for record in records:
        if record.get("check") == "truncated":
            record["message"] = "truncated line"
        elif record.get("check") == "no-result":
            record["line"] = None
    return status, records, err


def moved(verb, printed, number, lines, source, segment=SEGMENT):
    """Comparable output of what was ``printed`` of a stream, as printed of its copy
    ``number`` read ``lines`` lines further down an input named ``source``: the copy's
    ids, every line number (a message's place, a line a message names, a record's)."""
    status, out, err = (printed[0], *(data.replace(segment, b"%04d" % number)
                                      for data in printed[1:]))
    err = re.sub(rb"(?<=" + re.escape(source.encode()) + rb":)\d+(?=:)|(?<=line )\d+",
                 lambda found: b"%d" % (int(found[0]) + lines), err)
    status, out, err = comparable(verb, (status, out, err))
    if out.__class__ is list:
        for record in out:
            if record.get("line") is not None:
                record["line"] += lines
            if "message" in record:
                record["message"] = re.sub(r"(?<=line )\d+",
                                           lambda found: str(int(found[0]) + lines),
                                           record["message"])
    return status, out, err


def joined(verb, outputs):
    """What ``verb`` prints for inputs one after another, read as one."""
    status = max(printed[0] for printed in outputs)
    err = b"".join(printed[2] for printed in outputs)
    if verb != "validate":
        if outputs[0][1].__class__ is bytes:
            return status, b"".join(printed[1] for printed in outputs), err
        return status, [record for printed in outputs for record in printed[1]], err
    findings, summary = [], None  # validate: one summary of the input, counts added up
    for printed in outputs:
        *more, counts = printed[1]
        findings += more
        summary = counts if summary is None else {
            key: value if key == "source" else value + counts[key]
            for key, value in summary.items()}
    return status, [*findings, summary], err


def never_merge(first, second, segment=SEGMENT):
    """``first`` cut at every byte of its last line (the event that ends its last run),
    each cut followed by ``second``, all in one input (each copy's sessions and threads
    its own): every verb, on a FILE in both modes and on standard input, prints what
    each cut stream prints alone (its last run cut off: status 1, but for stats)
    followed by what ``second`` prints alone, the lines numbered as they stand in the
    input."""
    start = first.rindex(b"\n", 0, len(first) - 1) + 1  # where the last line begins
    cuts = range(start, len(first) - 1)
    copies = b"".join(first.replace(segment, b"%04d" % number)[:cut]
                      + second.replace(segment, b"%04d" % number)
                      for number, cut in enumerate(cuts))
    with tempfile.TemporaryDirectory() as folder:  # no fixture: 'make fuzz' calls it too
        path = Path(folder) / "run.ndjson"
        path.write_bytes(copies)
        for verb, *options in VERBS:
            wanted = {name: _wanted(verb, options, first, second, cuts, source, segment)
                      for name, source in ((path, str(path)), ("-", "<stdin>"))}
            for mode, name in (("never", path), ("always", path), ("never", "-")):
                saved, inputs.MOST_PARTS = inputs.MOST_PARTS, PARTS
                try:
                    found = with_parts(mode, verb, copies if name == "-" else b"", *options,
                                       name)
                finally:
                    inputs.MOST_PARTS = saved
                found = comparable(verb, found)
                assert found == wanted[name], (verb, mode, name,
                                               *_first_difference(found, wanted[name]))


def _wanted(verb, options, first, second, cuts, source, segment):
    """What ``verb`` should print of the input ``never_merge`` makes, named ``source``:
    what it prints of each of its streams read alone from standard input, moved to
    where it stands.  Every cut that leaves some of the last line prints what the cut
    after its first byte prints: a line cut short is reported alike whatever is left
    of it (``comparable``)."""
    alone = {}
    for key, stream in (("lost", first[:cuts[0]]), ("cut", first[:cuts[0] + 1]),
                        ("other", second)):
        alone[key] = with_parts("never", verb, stream, *options, "-")
        if key != "other":  # the last run cut off
            assert alone[key][0] == (0 if verb == "stats" else 1), (verb, alone[key])
        if source != "<stdin>":
            alone[key] = (alone[key][0], *(data.replace(b"<stdin>", source.encode())
                                           for data in alone[key][1:]))
    wanted = []
    lines = 0  # of the input, before the copy
    for number, cut in enumerate(cuts):
        before = first.count(b"\n", 0, cut)  # of the copy, before the cut
        wanted.append(moved(verb, alone["cut" if cut > cuts[0] else "lost"], number, lines,
                            source, segment))
        wanted.append(moved(verb, alone["other"], number, lines + before, source, segment))
        lines += before + second.count(b"\n")
    return joined(verb, wanted)


def _property(agent):
    @EXAMPLES
    @given(stream_pairs(agent))
    def test(streams):
        never_merge(*streams)

    test.__doc__ = f"{agent.capitalize()}'s streams: see never_merge."
    return test


test_property_claude_runs_cut_anywhere_never_merge_with_the_next = _property("claude")
test_property_codex_runs_cut_anywhere_never_merge_with_the_next = _property("codex")
test_property_cursor_runs_cut_anywhere_never_merge_with_the_next = _property("cursor")
test_property_gemini_runs_cut_anywhere_never_merge_with_the_next = _property("gemini")


@EXAMPLES
@given(cut_and_appended(HEX_SEGMENT))
def test_property_every_format_s_runs_cut_anywhere_never_merge_with_the_next(streams):
    """Any registered stream format's golden inputs: one whose last line ends its last
    run, cut anywhere in that line, then one that begins with a run: see never_merge."""
    _, first, second = streams
    never_merge(first, second, HEX_SEGMENT)


@pytest.mark.parametrize("agent", ["copilot", "opencode"])
def test_runs_told_from_what_came_before_never_merge_with_a_stream_appended(agent):
    """The formats whose run begins at an event that a run may also hold (Copilot's
    start-up notices and prompt, OpenCode's step_start), so that the Reader tells a
    new run from the run in hand, on the first pair of their golden inputs: a stream
    appended to a cut begins a run of its own, with no finding of its own."""
    found = formats.get(agent)
    inputs = golden_inputs(found)
    first = next(data for data in inputs if ends_its_last_run(found, data))
    second = next(data for data in inputs if begins_a_run(found, data))
    never_merge(with_own_ids(first, HEX_SEGMENT + b"a"),
                with_own_ids(second, HEX_SEGMENT + b"b"), HEX_SEGMENT)


def _first_difference(found, wanted):
    """Where two outputs part: (what, the found part, the wanted part)."""
    for what, one, other in zip(("status", "stdout", "stderr"), found, wanted):
        if one != other:
            if one.__class__ is int:  # the status
                return what, one, other
            if one.__class__ is bytes:
                one, other = one.splitlines(), other.splitlines()
            for index, (line, expected) in enumerate(zip(one, other)):
                if line != expected:
                    return what, index, line, expected
            return what, len(one), len(other)
    return ()
