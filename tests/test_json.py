"""ndagent json: one line per finished run, in the json format's key order."""

import orjson
import pytest
from conftest import corpus_files, fixture, lines_of, needs_corpus, run

from ndagent.cmd_json import main
from ndagent.formats.cursor import JSON_KEY_ORDER

VENDOR = fixture("vendor-example.ndjson")


def result_event(path):
    return orjson.loads(path.read_bytes().splitlines()[-1])


def test_vendor_example_gives_its_result_event_in_json_key_order(call):
    status, out, err = call(main, VENDOR)
    assert (status, err) == (0, "")
    assert out.count(b"\n") == 1
    event = result_event(VENDOR)
    assert orjson.loads(out) == event
    assert list(orjson.loads(out)) == list(JSON_KEY_ORDER)
    assert out.startswith(b'{"type":"result","subtype":"success","is_error":false,'
                          b'"duration_ms":5234,"duration_api_ms":5234,"result":')


def test_other_keys_follow_in_stream_order(call):
    status, out, _ = call(main, fixture("partial-output.ndjson"))
    assert status == 0
    assert list(orjson.loads(out)) == [*JSON_KEY_ORDER, "usage"]


def test_a_run_without_result_prints_nothing_and_fails(call, write):
    path = write(lines_of("vendor-example.ndjson")[:6])
    status, out, err = call(main, path)
    assert (status, out) == (1, b"")
    assert err == f"ndagent-json: {path}:1: error: run ended without a result event: " \
                  "the agent failed or was cut off\n"


def test_two_runs_give_two_lines_and_a_broken_one_is_named(call, write):
    vendor = lines_of("vendor-example.ndjson")
    path = write(vendor + lines_of("partial-output.ndjson")[:4] + vendor)
    status, out, err = call(main, path)
    assert status == 1
    assert [orjson.loads(line) for line in out.splitlines()] == [orjson.loads(vendor[-1])] * 2
    assert err == f"ndagent-json: {path}:11: error: run ended without a result event: " \
                  "the agent failed or was cut off\n"


def test_a_failed_run_is_printed_and_fails(call, write):
    event = result_event(VENDOR)
    event.update(is_error=True, subtype="error", result="Connection lost.")
    path = write([orjson.dumps(event)])
    status, out, err = call(main, path)
    assert status == 1
    assert orjson.loads(out) == event
    assert err == f'ndagent-json: {path}:1: error: run failed: "Connection lost."\n'
    event["result"] = ""  # a failure with no text
    path = write([orjson.dumps(event)])
    assert call(main, path)[2] == f"ndagent-json: {path}:1: error: the run reported failure\n"


def test_escaped_and_spaced_types_are_found(call, write):
    line = b'{ "type" : "\\u0072esult" , "subtype":"success","is_error":false,"result":"x"}'
    status, out, _ = call(main, write([line]))
    assert status == 0
    assert orjson.loads(out)["type"] == "result"


def test_values_are_unchanged(call, write):
    line = (b'{"usage":{"n":123456789012345678901234},"type":"result","subtype":"success",'
            b'"is_error":false,"result":"\\u00e9\\ud83d\\ude00 1.50","duration_ms":1.5e3}')
    status, out, _ = call(main, write([line]))
    assert status == 0
    assert out == ('{"type":"result","subtype":"success","is_error":false,"duration_ms":1500.0,'
                   '"result":"é😀 1.50","usage":{"n":123456789012345678901234}}\n').encode()


def test_bad_lines_are_skipped_with_a_warning(call, write):
    vendor = lines_of("vendor-example.ndjson")
    path = write([b"Update available: 2026.01.28"] + vendor[:-1] + [b"[1]", vendor[-1]])
    status, out, err = call(main, path)
    assert status == 0
    assert orjson.loads(out) == result_event(VENDOR)
    # Each names the line, the reason, and quotes the start of the line.
    # The banner is noise Cursor's CLI is known to print (its check named), [1] damage.
    assert err.splitlines() == [
        f"ndagent-json: {path}:1: warning: skipped: noise the agent writes besides its "
        'stream: "Update available: 2026.01.28" [noise]',
        f'ndagent-json: {path}:11: warning: skipped: not a JSON object but an array: "[1]"',
    ]
    status, out, err = call(main, "-q", path)
    assert (status, err) == (0, "")
    status, out, err = call(main, "--strict", path)
    assert (status, out) == (1, b"")
    assert err.startswith(f"ndagent-json: {path}:1: error: noise the agent writes")


def test_a_missing_file_is_status_2_and_the_others_are_read(call, tmp_path):
    status, out, err = call(main, tmp_path / "missing.ndjson", VENDOR)
    assert status == 2
    assert orjson.loads(out) == result_event(VENDOR)
    assert err == f"ndagent-json: {tmp_path / 'missing.ndjson'}: error: cannot read: " \
                  "No such file or directory\n"


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_real_captures(path):
    done = run("json", path)
    assert (done.returncode, done.stderr) == (0, b"")
    assert orjson.loads(done.stdout) == result_event(path)


def test_numbers_are_the_same_values_in_their_shortest_form(call, write):
    """What the README and --help say of values: the same JSON values, numbers in their
    shortest form, and a number beyond 64 bits or a double exactly as written."""
    result = (b'{"type":"result","subtype":"success","is_error":false,"duration_ms":1E3,'
              b'"duration_api_ms":1.50,"result":"","session_id":"s","huge":'
              + b"9" * 30 + b',"big":-1e400}')
    path = write([b'{"type":"system","subtype":"init","session_id":"s"}', result])
    status, out, err = call(main, path)
    assert (status, err) == (0, "")
    assert b'"duration_ms":1000.0,"duration_api_ms":1.5,' in out
    assert out.endswith(b'"huge":' + b"9" * 30 + b',"big":-1e400}\n')
