"""ndagent validate: every check fails where it should and passes where real streams go."""

import io
import os

import orjson
import pytest
from conftest import corpus_files, examples, fixture, lines_of, needs_corpus, run
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent.cmd_validate import CHECKS, ValidateCommand, build_parser, main
from ndagent.feed import read_here
from ndagent.output import Output

FIXTURES = ["vendor-example.ndjson", "capture-parallel.ndjson", "shapes.ndjson",
            "sample.ndjson", "partial-output.ndjson"]


def vendor():
    return lines_of("vendor-example.ndjson")


def edited(line, drop=(), **changes):
    """A line of JSON with fields changed or dropped."""
    data = orjson.loads(line)
    data.update(changes)
    for name in drop:
        del data[name]
    return orjson.dumps(data) + b"\n"


def diagnostics(out):
    """The diagnostic lines of text output (summary lines left out), as
    (line number, severity, check)."""
    found = []
    for text in out.decode().splitlines():
        if text.endswith("]"):
            _, number, severity, _ = text.split(":", 3)
            found.append((int(number), severity.strip(), text.rsplit("[", 1)[1][:-1]))
    return found


@pytest.fixture
def validate(call, write):
    """Validate lines (or bytes): (status, diagnostics, stdout text)."""

    def validate(content, *options):
        status, out, err = call(main, *options, write(content))
        assert err == ""
        return status, diagnostics(out), out.decode()

    return validate


def test_every_check_has_a_severity_and_a_meaning():
    assert all(severity in ("error", "warning", "info") and meaning
               for severity, meaning in CHECKS.values())


# Done when 1: the vendor example, the shapes of
# docs/formats.md#cursor-quirks-of-real-streams, the real captures.

@pytest.mark.parametrize("name", FIXTURES)
def test_fixtures_are_valid(call, name):
    status, out, err = call(main, fixture(name))
    assert (status, err) == (0, "")
    assert all(severity == "warning" for _, severity, _ in diagnostics(out))
    assert ", 0 errors, " in out.decode().splitlines()[-1]


def test_shapes_warn_only_of_calls_completed_without_start(validate):
    status, found, _ = validate(lines_of("shapes.ndjson"))
    assert status == 0
    assert found == [(14, "warning", "call-unstarted"), (15, "warning", "call-unstarted")]


@needs_corpus
def test_real_captures_are_valid_even_under_strict(call):
    for path in corpus_files():
        for options in ((), ("--strict",)):
            status, out, err = call(main, *options, path)
            assert (status, diagnostics(out), err) == (0, [], ""), path


# Done when 2: each broken stream gives status 1 and names the right line.

def test_cut_off_stream(validate):
    status, found, out = validate(b"".join(vendor()[:7]) + vendor()[7][:40])
    assert status == 1
    # The run is said to end at its last line decoded, and to begin at line 1.
    assert found == [(8, "error", "truncated"), (7, "error", "no-result")]
    assert ':8: error: truncated line: the stream was cut off?: "' in out
    assert ":7: error: run ended without a result event: the agent failed or was cut " \
           "off (it began at line 1) [no-result]" in out


@pytest.mark.parametrize("bad, reason", [
    (b"T: the model is overloaded\n", "not JSON"),  # no known noise ('Update available')
    (b'{"type":"user","text":"caf\xe9"}\n', "not valid UTF-8"),
    (b'["type","user"]\n', "not a JSON object but an array"),
])
def test_a_line_that_is_not_a_json_object(validate, bad, reason):
    lines = vendor()
    status, found, out = validate(lines[:3] + [bad] + lines[3:])
    assert (status, found) == (1, [(4, "error", "json")])
    assert f":4: error: {reason}" in out


def test_run_without_result(validate):
    status, found, _ = validate(vendor()[:-1])
    assert (status, found) == (1, [(9, "error", "no-result")])


def test_result_text_that_does_not_match(validate):
    lines = vendor()
    lines[-1] = edited(lines[-1], result="Something else")
    status, found, out = validate(lines)
    assert (status, found) == (1, [(10, "error", "answer")])
    assert "rebuilt answer (49 characters) differs from the result event's text " \
           "(14 characters)" in out


def test_call_never_completed(validate):
    lines = vendor()
    del lines[5]
    status, found, out = validate(lines)
    assert (status, found) == (1, [(5, "error", "call-unfinished")])
    assert 'call "toolu_vrtx_01NnjaR886UcE8whekg2MGJd" was started and never completed' in out


# Each check: a failing case and a passing one.

def test_json_passes_blank_lines_bom_and_crlf(validate):
    lines = [b"\n"] + [line.replace(b"\n", b"\r\n") for line in vendor()] + [b"  \n"]
    status, found, _ = validate(b"\xef\xbb\xbf" + b"".join(lines))
    assert (status, found) == (0, [])


def test_truncated_passes_a_whole_last_line_without_newline(validate):
    status, found, _ = validate(b"".join(vendor()).rstrip(b"\n"))
    assert (status, found) == (0, [])


def test_type_must_be_a_string(validate):
    lines = vendor()
    lines[3] = edited(lines[3], type=["assistant"])
    status, found, out = validate(lines)
    assert (status, found[0]) == (1, (4, "error", "type"))
    assert '"type" must be a string, not an array' in out
    lines[3] = edited(lines[3], drop=["type"])
    assert validate(lines)[1][0] == (4, "error", "type")


def test_a_subtype_that_is_not_a_string(validate):
    lines = vendor()
    lines[0] = edited(lines[0], subtype=["init"])
    status, found, out = validate(lines, "--strict")
    assert (status, found) == (1, [(1, "error", "init"), (1, "error", "unknown-type")])
    assert 'a "system" event with no string subtype' in out
    lines[4] = edited(lines[4], subtype={"started": True})
    assert (5, "error", "fields") in validate(lines)[1]


def test_type_unknown_is_accepted(validate):
    lines = vendor()
    weird = b'{"type":"telemetry","session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff"}\n'
    status, found, _ = validate(lines[:2] + [weird] + lines[2:])
    assert (status, found) == (0, [])


@pytest.mark.parametrize("index, change, message", [
    (0, {"drop": ["cwd"]}, '"cwd" is missing'),
    (0, {"model": 4}, '"model" must be a string, not 4'),
    (9, {"duration_ms": -1}, '"duration_ms" must be a non-negative integer, not -1'),
    (9, {"duration_ms": 1.5}, '"duration_ms" must be a non-negative integer, not 1.5'),
    (9, {"is_error": "false"}, '"is_error" must be a boolean, not a string'),
    (9, {"drop": ["result"]}, '"result" is missing'),
    (9, {"usage": [1]}, '"usage" must be an object, not an array'),
    (2, {"message": {"role": "assistant", "content": "I'll "}},
     '"message.content" must be an array of texts, not a string'),
    (2, {"message": {"role": "user", "content": [{"type": "text", "text": "I'll "}]}},
     '"message.role" must be "assistant"'),
    (2, {"message": {"role": "assistant", "content": [{"type": "image", "text": "I'll "}]}},
     '"message.content[0].type" must be "text"'),
    (2, {"message": {"role": "assistant", "content": [{"type": "text"}]}},
     '"message.content[0].text" must be a string, not null'),
    (2, {"timestamp_ms": "now"}, '"timestamp_ms" must be a non-negative integer'),
    (4, {"subtype": "running"}, '"subtype" of a tool_call must be "started" or "completed"'),
    (4, {"call_id": 7}, '"call_id" must be a string, not 7'),
    (4, {"tool_call": {"toolCallId": "x"}}, '"tool_call" must hold one object'),
    (4, {"tool_call": {"readToolCall": {}, "lsToolCall": {}}}, '"tool_call" must hold one'),
    (5, {"tool_call": {"readToolCall": {"args": {"path": "README.md"}}}},
     '"tool_call.readToolCall.result" must hold the outcome: success, failure, '
     'permissionDenied, rejected or error'),
])
def test_fields_fail(validate, index, change, message):
    lines = vendor()
    lines[index] = edited(lines[index], **change)
    status, found, out = validate(lines)
    assert status == 1
    assert (index + 1, "error", "fields") in found
    assert message in out


def test_fields_pass_what_real_streams_add(validate):
    lines = vendor()
    lines[2] = edited(lines[2], timestamp_ms=1770823845001, model_call_id="r-0-abcd")
    lines[5] = edited(lines[5], tool_call={
        "hookAdditionalContexts": [], "toolCallId": "x", "completedAtMs": 1,
        "readToolCall": {"result": {"rejected": {"reason": "no"}, "isBackground": False}}})
    lines[9] = edited(lines[9], usage={"inputTokens": 1}, extra_field=True)
    status, found, _ = validate(lines)
    assert (status, found) == (0, [])


def test_session_must_be_present_and_the_same(validate):
    lines = vendor()
    lines[2] = edited(lines[2], session_id="other")
    lines[3] = edited(lines[3], drop=["session_id"])
    status, found, out = validate(lines)
    assert (status, found) == (1, [(3, "error", "session"), (4, "error", "session")])
    assert ':3: error: session_id "other" differs from the run\'s ' \
           '"c6b62c6f-7ead-4fd6-9922-e952131177ff" (line 1)' in out
    assert ':4: error: the event has no "session_id"' in out


def test_session_missing_from_the_first_events_too(validate):
    lines = vendor()
    lines[0] = edited(lines[0], drop=["session_id"])
    lines[1] = edited(lines[1], drop=["session_id"])
    status, found, _ = validate(lines)
    assert (status, found) == (1, [(1, "error", "session"), (2, "error", "session")])


def test_session_may_change_between_runs(validate):
    other = [edited(line, session_id="other") for line in vendor()]
    status, found, out = validate(vendor() + other)
    assert (status, found) == (0, [])
    assert out.endswith(": 20 events, 2 runs, 0 errors, 0 warnings\n")


def test_init_missing_is_a_warning(validate):
    status, found, out = validate(vendor()[1:])
    assert (status, found) == (0, [(1, "warning", "init")])
    assert out.endswith(": 9 events, 1 run, 0 errors, 1 warning\n")


def test_call_started_twice(validate):
    lines = vendor()
    status, found, out = validate(lines[:5] + [lines[4]] + lines[5:])
    assert (status, found) == (1, [(6, "error", "call-twice")])
    assert "started again: it is open since line 5" in out


def test_call_id_may_be_used_again_once_completed(validate):
    lines = vendor()
    status, found, _ = validate(lines[:6] + lines[4:6] + lines[6:])
    assert (status, found) == (0, [])


def test_call_completed_without_start_is_a_warning(validate):
    lines = vendor()
    del lines[4]
    status, found, _ = validate(lines)
    assert (status, found) == (0, [(5, "warning", "call-unstarted")])


def test_parallel_calls_complete_in_any_order(validate):
    lines = vendor()
    status, found, _ = validate(lines[:5] + [lines[7], lines[5], lines[6], lines[8],
                                             lines[9]])
    assert (status, found) == (0, [])


def test_call_id_with_a_newline_stays_on_one_line(call, write):
    lines = vendor()
    lines[4] = edited(lines[4], call_id="call_1\nfc_2")
    path = write(lines)
    status, out, _ = call(main, path)
    assert status == 1
    assert f'{path}:5: error: call "call_1\\nfc_2" was started and never completed' \
           " [call-unfinished]\n" in out.decode()
    assert len(out.splitlines()) == 3
    # A message is text for people, the same in both formats: stream text spelt out.
    status, out, _ = call(main, "--format", "json", path)
    messages = [orjson.loads(line).get("message", "") for line in out.splitlines()]
    # Quoted as every message quotes stream text (terminal.quote): escaped, bounded.
    assert any('"call_1\\nfc_2"' in message for message in messages)


def test_real_call_id_with_a_newline_is_valid(validate):
    lines = vendor()
    lines[4] = edited(lines[4], call_id="call_1\nfc_2")
    lines[5] = edited(lines[5], call_id="call_1\nfc_2")
    assert validate(lines)[:2] == (0, [])


def test_second_result_in_a_run(validate):
    lines = vendor()
    status, found, out = validate(lines + [lines[-1]])
    assert (status, found) == (1, [(11, "error", "result-count")])
    assert "a second result event for the run that ended at line 10" in out


def test_event_after_the_result(validate):
    lines = vendor()
    status, found, out = validate(lines + [lines[2]])
    assert (status, found) == (1, [(11, "error", "after-result")])
    assert ":11: error: an event after the result of line 10: a new run must begin " \
           "with a system/init event [after-result]" in out


def test_runs_follow_each_other(validate):
    status, found, out = validate(vendor() + lines_of("partial-output.ndjson"))
    assert (status, found) == (0, [])
    assert out.endswith(": 21 events, 2 runs, 0 errors, 0 warnings\n")


def test_a_run_cut_off_by_the_next_init(validate):
    status, found, out = validate(vendor()[:4] + vendor())
    assert (status, found) == (1, [(5, "error", "no-result")])  # where the next began
    assert "(it began at line 1)" in out


def test_answer_passes_partial_output_and_an_empty_result(validate):
    lines = vendor()
    empty = [lines[0], lines[1], edited(lines[-1], result="")]
    assert validate(lines_of("partial-output.ndjson"))[:2] == (0, [])
    assert validate(empty)[:2] == (0, [])


@pytest.mark.parametrize("change", [{"is_error": True}, {"subtype": "error_max_turns"}])
def test_failed_run(validate, change):
    lines = vendor()
    lines[-1] = edited(lines[-1], result="Turn limit reached.", **change)
    status, found, out = validate(lines)
    # the failure's text, never checked as an answer against the text streamed
    assert (status, found) == (1, [(10, "error", "failed-run")])
    assert ':10: error: run failed: "Turn limit reached." [failed-run]' in out


def test_unknown_types_and_fields_only_under_strict(validate):
    lines = vendor()
    weird = b'{"type":"telemetry","session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff"}\n'
    lines[9] = edited(lines[9], cost=3)
    lines[2] = edited(lines[2], message={"role": "assistant", "extra": 1,
                                         "content": [{"type": "text", "text": "I'll "}]})
    # A system event whose subtype is no string.
    reload = edited(lines[0], subtype=["reload"])
    stream = lines[:1] + [reload] + lines[1:2] + [weird] + lines[2:]
    assert validate(stream)[:2] == (0, [])
    status, found, out = validate(stream, "--strict")
    assert status == 1
    assert found == [(2, "error", "unknown-type"), (4, "error", "unknown-type"),
                     (5, "error", "unknown-field"), (12, "error", "unknown-field")]
    assert 'a "system" event with no string subtype' in out
    # One of another subtype is in Claude's envelope, which Qwen Code and Amp write too:
    # it tells no agent, and Cursor's stream does not know it (docs/agents.md).
    stream[1] = edited(lines[0], subtype="reload")
    assert validate(stream)[:2] == (0, [])
    assert validate(stream, "--strict")[1][0] == (2, "error", "unknown-type")
    assert 'unknown event type "telemetry"' in out
    assert 'unknown field "message.extra"' in out and 'unknown field "cost"' in out


# The interface.

def test_strict_counts_warnings_as_errors(validate):
    status, found, out = validate(lines_of("shapes.ndjson"), "--strict")
    assert status == 1
    assert found == [(14, "error", "call-unstarted"), (15, "error", "call-unstarted")]
    assert out.endswith(": 24 events, 1 run, 2 errors, 0 warnings\n")


def test_quiet_prints_only_the_errors(call, write):
    status, out, err = call(main, "-q", write(vendor()[1:-1]))
    assert (status, err) == (1, "")
    assert out.endswith(b":8: error: run ended without a result event: the agent failed or "
                        b"was cut off (it began at line 1) [no-result]\n")
    assert out.count(b"\n") == 1
    assert call(main, "--quiet", fixture("vendor-example.ndjson")) == (0, b"", "")


def test_json_format(call, write):
    path = write(vendor()[1:-1])
    status, out, err = call(main, "--format", "json", path)
    assert (status, err) == (1, "")
    assert [orjson.loads(line) for line in out.splitlines()] == [
        {"source": str(path), "line": 1, "severity": "warning", "check": "init",
         "message": "the run does not begin with a system/init event"},
        {"source": str(path), "line": 8, "severity": "error", "check": "no-result",
         "message": "run ended without a result event: the agent failed or was cut off "
                    "(it began at line 1)"},
        {"source": str(path), "events": 8, "runs": 1, "errors": 1, "warnings": 1},
    ]


def test_each_input_has_its_summary(call, write, tmp_path):
    cut = write(vendor()[:-1])
    good = fixture("vendor-example.ndjson")
    status, out, err = call(main, good, cut, tmp_path / "missing", good)
    assert status == 2
    assert out.decode().splitlines() == [
        f"{good}: 10 events, 1 run, 0 errors, 0 warnings",
        f"{cut}:9: error: run ended without a result event: the agent failed or was cut "
        "off (it began at line 1) [no-result]",
        f"{cut}: 9 events, 1 run, 1 error, 0 warnings",
        f"{good}: 10 events, 1 run, 0 errors, 0 warnings",
    ]
    assert err == f"ndagent-validate: {tmp_path / 'missing'}: error: cannot read: " \
                  "No such file or directory\n"


def test_standard_input_is_named():
    done = run("validate", input=b"".join(vendor()))
    assert (done.returncode, done.stdout, done.stderr) == \
        (0, b"<stdin>: 10 events, 1 run, 0 errors, 0 warnings\n", b"")


JSON_KEYS = st.sampled_from(["type", "subtype", "session_id", "message", "content", "text",
                             "call_id", "tool_call", "readToolCall", "function", "result",
                             "is_error", "duration_ms", "timestamp_ms"])
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(
        ["system", "init", "user", "assistant", "tool_call", "started", "completed",
         "result", "success", "thinking", "s"])),
    lambda inner: st.one_of(st.lists(inner, max_size=2),
                            st.dictionaries(JSON_KEYS, inner, max_size=3)),
    max_leaves=6)


@settings(max_examples=examples(40, 200), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), JSON_KEYS, JSON_VALUES), max_size=6),
       st.lists(st.integers(0, 9), max_size=12), st.booleans())
def test_any_objects_get_a_verdict_never_a_crash(changes, order, strict):
    """The vendor example with fields replaced, events dropped, repeated, reordered."""
    events = [orjson.loads(line) for line in vendor()]
    for index, key, value in changes:
        events[index][key] = value
    stream = b"".join(orjson.dumps(events[index]) + b"\n" for index in order)
    args = build_parser().parse_args(["--strict"] if strict else [])
    with open(os.devnull, "wb") as sink:
        command = ValidateCommand(args, "ndagent-validate", Output(sink.fileno()))
        assert read_here(command, [io.BytesIO(stream)]) in (0, 1)


def test_a_tool_and_a_function_in_one_tool_call_is_ambiguous(validate):
    lines = vendor()
    started = orjson.loads(lines[4])
    started["tool_call"]["function"] = {"name": "lookup", "arguments": "{}"}
    lines[4] = orjson.dumps(started) + b"\n"
    status, found, out = validate(lines)
    assert (status, found) == (1, [(5, "error", "fields")])
    assert '"tool_call" must hold one object' in out


def test_a_file_not_read_leaves_no_count_to_the_next_one(tmp_path):
    """A FILE refused (json output, no agent's stream) gets its error and no summary;
    the next FILE's summary counts its own errors only."""
    refused = tmp_path / "refused.ndjson"
    refused.write_bytes(b'[{"type":"system","subtype":"init"}]\n')
    done = run("validate", refused, fixture("vendor-example.ndjson"))
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 1
    assert lines[0].endswith("[agent]") and len(lines) == 2
    assert lines[1].endswith(" 1 run, 0 errors, 0 warnings"), lines


@pytest.mark.parametrize("bom, encoding", [(b"\xff\xfe", "utf-16-le"),
                                           (b"\xfe\xff", "utf-16-be"),
                                           (b"", "utf-16-le"), (b"", "utf-16-be")])
@pytest.mark.parametrize("where", ["file", "stdin"])
def test_utf16_input_is_said_once_as_the_converters_say_it(tmp_path, bom, encoding, where):
    """A UTF-16 stream (with its byte order mark, as Windows tools write it, or none):
    validate says what json says of it, one line on standard error, with the same
    status, and prints no diagnostic nor summary for it."""
    encoded = bom + b"".join(vendor()).decode().encode(encoding)
    path = tmp_path / "windows.ndjson"
    path.write_bytes(encoded)
    files, stdin = ((path,), b"") if where == "file" else ((), encoded)
    done = run("validate", *files, input=stdin)
    converted = run("json", *files, input=stdin)
    said = converted.stderr.replace(b"ndagent-json:", b"ndagent-validate:")
    assert said.count(b"\n") == 1 and b"UTF-16" in said
    assert (done.returncode, done.stdout, done.stderr) == (converted.returncode, b"", said)
    assert done.returncode == 1


@pytest.mark.parametrize("damage", [b"{\x00", b"\x00{", b'{\x00"\x00', b"{\x00\"\x00t\x00x"])
def test_a_first_line_with_nul_bytes_is_no_utf16_input(damage):
    """UTF-16 text is told by its first characters each beside a NUL byte: a first line
    damaged into a NUL byte or two is a bad line, and the lines after it are read."""
    done = run("json", input=damage + b"\n" + b"".join(vendor()))
    assert done.returncode == 0
    assert b"UTF-16" not in done.stderr and done.stdout.count(b"\n") == 1


# A format's check named as a generic one gives it the agent's severity
# (ndagent.formats.base.Format.checks): each agent's as docs/agents.md says.

GOLDEN_DIR = fixture("x").parent.parent / "golden"


def _golden_lines(case):
    return (GOLDEN_DIR / case / "input.ndjson").read_bytes().splitlines(keepends=True)


def _answer_changed(lines):
    """The last line, a result, with another answer."""
    data = orjson.loads(lines[-1])
    body = data.get("result") if "event" in data else data
    key = "response" if "event" in data else "result"
    body[key] = "Not what the messages said."
    return [*lines[:-1], orjson.dumps(data) + b"\n"]


def _start_dropped(lines, marker):
    """The lines without the first that holds ``marker``: a call ends with no start."""
    index = next(index for index, line in enumerate(lines) if marker in line)
    return lines[:index] + lines[index + 1:]


@pytest.mark.parametrize("case, change, check, severity", [
    ("claude/success-tools", _answer_changed, "answer", "warning"),
    ("qwen/success-tools", _answer_changed, "answer", "warning"),
    ("amp/success-tools", _answer_changed, "answer", "warning"),
    ("antigravity/success-tools", _answer_changed, "answer", "warning"),
    ("cursor/sample", _answer_changed, "answer", "error"),
    ("copilot/success-tools", lambda lines: _start_dropped(lines, b'"tool.execution_start"'),
     "call-unstarted", "error"),
    ("qwen/success-tools", lambda lines: _start_dropped(lines, b'"tool_use"'),
     "call-unstarted", "error"),
    ("amp/success-tools", lambda lines: _start_dropped(lines, b'"tool_use"'),
     "call-unstarted", "error"),
    ("claude/success-tools", lambda lines: _start_dropped(lines, b'"tool_use"'),
     "call-unstarted", "warning"),
])
def test_each_agent_s_severity_of_a_generic_check(validate, case, change, check, severity):
    status, found, out = validate(change(_golden_lines(case)))
    assert (severity, check) in {(each[1], each[2]) for each in found}, out
    assert status == (1 if severity == "error" else 0), out
