"""The frame reads each input with its own agent's format (docs/agents.md): detection from
the first objects, --agent, the messages of an input that is not read, several agents
in one call, and the same output from a file and from standard input."""

from importlib import import_module
from pathlib import Path

import orjson
import pytest
from conftest import examples, fixture, run
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent import feed, inputs
from ndagent.cmd_json import main as json_main
from ndagent.cmd_result import main as result_main
from ndagent.cmd_validate import main as validate_main

GOLDEN = Path(__file__).resolve().parent / "golden"
CODEX = GOLDEN / "codex" / "command-success" / "input.ndjson"
CODEX_INTERIM = GOLDEN / "codex" / "interim-messages" / "input.ndjson"
CODEX_OLD = GOLDEN / "codex" / "old-format" / "input.ndjson"
GEMINI = GOLDEN / "gemini" / "tool-success" / "input.ndjson"
CURSOR = fixture("vendor-example.ndjson")


def test_each_file_is_read_with_its_own_agent_s_format(call):
    status, out, err = call(json_main, CURSOR, CODEX, GEMINI)
    assert (status, err) == (0, "")
    records = [orjson.loads(line) for line in out.splitlines()]
    assert records[0]["type"] == "result"
    assert list(records[1]) == ["items", "finalResponse", "usage"]
    assert list(records[2]) == ["session_id", "response", "stats"]


def test_agent_forced_on_another_agent_s_stream_reads_nothing_of_it(call):
    status, out, err = call(json_main, "--agent", "codex", CURSOR, CODEX)
    assert status == 1
    assert err == f"ndagent-json: {CURSOR}:1: error: a cursor stream, not codex (--agent codex)\n"
    assert list(orjson.loads(out)) == ["items", "finalResponse", "usage"]


def test_objects_of_no_agent_are_not_an_agent_stream(call, write):
    path = write([b"not json", b'{"type":"hello","n":1}', b'{"type":"user"}'])
    status, out, err = call(json_main, path)
    assert (status, out) == (1, b"")
    # The input is not read: its bad lines go unreported.
    assert err == (f'ndagent-json: {path}:2: error: not an agent stream: no known event (first '
                   'object: type "hello")\n')


def test_objects_of_the_types_cursor_uses_are_read_as_cursor(call, write):
    path = write([b'{"type":"user","message":{"role":"user","content":[]}}'])
    status, out, err = call(json_main, path)
    assert (status, out) == (1, b"")
    assert "run ended without a result event" in err


def test_codex_before_0_44_is_refused(call):
    status, out, err = call(validate_main, CODEX_OLD)
    assert (status, out) == (1, f"{CODEX_OLD}:3: error: unsupported codex format "
                                "(before 0.44) [agent]\n".encode())


@pytest.mark.parametrize("verb", ["json", "result", "text", "tools", "validate"])
@pytest.mark.parametrize("path", [CODEX, GEMINI, CURSOR, fixture("capture-parallel.ndjson")])
def test_standard_input_gives_what_the_file_gives(verb, path):
    """A file's agent is told from its head, before decoding; standard input's from its
    items, held until then, and then selected as a file's are."""
    from_file = run(verb, path)
    from_stdin = run(verb, input=path.read_bytes())
    name = str(path).encode()
    assert from_stdin.returncode == from_file.returncode
    assert from_stdin.stdout.replace(b"<stdin>", name) == from_file.stdout
    assert from_stdin.stderr.replace(b"<stdin>", name) == from_file.stderr


def test_live_prints_each_message_of_a_codex_run_an_empty_line_between(call):
    status, out, err = call(result_main, "--live", CODEX_INTERIM)
    assert (status, err) == (0, "")
    assert out == (b"I'll check the Node version first.\n\nNode 20 is installed; now the "
                   b"lockfile.\n\nNode 20.11.1 with lockfile version 3: they match.\n")


def test_a_codex_answer_is_printed_at_the_end_of_its_run(call):
    status, out, err = call(result_main, CODEX_INTERIM)
    assert (status, err) == (0, "")
    assert out == b"Node 20.11.1 with lockfile version 3: they match.\n"


def test_standard_input_of_noise_is_held_only_so_long():
    """Lines that are no objects are held until the agent is told, but not without end:
    past feed.HOLD_LINES (checked after each block read) the input is decided as at its
    end (Cursor, for no object)."""

    # 600 KB: more than one block read (sources.CHUNK_SIZE), and past HOLD_LINES by more
    # than a block, so that the input is decided before the Codex objects are read.
    noise = b"noise\n" * (feed.HOLD_LINES * 10)
    done = run("json", "-q", input=noise + CODEX.read_bytes())
    # Read as Cursor's, the Codex objects after the noise are another agent's: no run.
    assert done.returncode == 1
    assert done.stderr == b"ndagent-json: <stdin>:1: error: no events: the agent printed " \
                          b"nothing, or failed before it began\n"


CLAUDE = GOLDEN / "claude" / "bash-exit-code" / "input.ndjson"


def claude_json_outputs():
    """A Claude run as the json forms print it, not as stream-json: the --verbose array
    on one line, and the result object pretty-printed after a noise line."""
    objects = [orjson.loads(line) for line in CLAUDE.read_bytes().splitlines()]
    return [(orjson.dumps(objects) + b"\n", 1),
            (b"Loaded cached credentials.\n" + orjson.dumps(objects[-1], option=orjson.OPT_INDENT_2)
             + b"\n", 2)]


@pytest.mark.parametrize("verb", ["json", "result", "text", "tools", "validate"])
def test_json_output_is_reported_once_and_not_read(verb, call, write):
    main = import_module(f"ndagent.cmd_{verb}").main
    for data, line in claude_json_outputs():
        path = write(data)
        for argv in ([path], ["--agent", "claude", path]):
            status, out, err = call(main, *argv)
            assert status == 1
            if verb == "validate":
                assert (out, err) == (f"{path}:{line}: error: json output, not stream-json "
                                      "[agent]\n".encode(), "")
            else:
                assert (out, err) == (b"", f"ndagent-{verb}: {path}:{line}: error: json output, "
                                           "not stream-json\n")
    # Standard input is told from its items, not a file's head: the same.
    done = run(verb, input=data)
    assert (done.returncode, done.stdout + done.stderr) == (
        1, (out + err.encode()).replace(str(path).encode(), b"<stdin>"))


def test_noise_that_begins_with_a_bracket_is_no_json_output(call, write):
    path = write(b"[dotenv@17.2.1] injecting env (0) from .env\n[ERROR] quota\n"
                 + GEMINI.read_bytes())
    status, out, err = call(json_main, "-q", path)
    assert (status, err) == (0, "")
    assert list(orjson.loads(out)) == ["session_id", "response", "stats"]


@pytest.mark.parametrize(("start", "found"), [
    (b"{", True), (b"[", True), (b"  [\r", True), (b'[{"type":"system"', True),
    (b'[ {"type"', True), (b'\xef\xbb\xbf[{"a":1}]', True),
    (b"[]", False), (b"[1, 2]", False), (b"[ERROR] {", False), (b'{"type"', False),
    (b"{}", False), (b"", False), (b"Loaded cached credentials.", False),
])
def test_json_output_begins_with_a_lone_bracket_or_an_array_of_objects(start, found):
    from ndagent.formats import json_output

    assert json_output(start) is found


def test_a_stream_whose_first_line_is_cut_to_a_brace_is_still_a_stream(call, write):
    path = write(b"{\n" + CODEX.read_bytes())
    status, out, err = call(json_main, path)
    assert status == 0 and list(orjson.loads(out)) == ["items", "finalResponse", "usage"]
    assert err.startswith(f"ndagent-json: {path}:1: warning: skipped: not JSON")


def claude_with(*others):
    """The bash-exit-code run with other agents' lines inserted after its third line."""
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    return b"".join(lines[:3] + [orjson.dumps(other) + b"\n" for other in others] + lines[3:])


GEMINI_RESULT = {"type": "result", "timestamp": "2026-05-11T08:02:18.231Z",
                 "status": "success", "stats": {"total_tokens": 1}}
CODEX_ITEM = {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
                                                  "text": "hi"}}


def test_another_agent_s_event_is_a_bad_line(call, write):
    path = write(claude_with(GEMINI_RESULT, CODEX_ITEM))
    alone = write(claude_with())
    # A converter skips it with a warning, where it reads the line.
    status, out, err = call(json_main, path)
    assert (status, out) == call(json_main, alone)[:2] and status == 0
    assert err == f"ndagent-json: {path}:4: warning: skipped: a gemini event in a claude stream\n"
    # validate reads every line: each is an error.
    status, out, _ = call(validate_main, path)
    assert status == 1
    assert out.decode().splitlines()[:2] == [
        f"{path}:4: error: a gemini event in a claude stream [other-agent]",
        f"{path}:5: error: a codex event in a claude stream [other-agent]"]
    assert out.decode().splitlines()[2:] == [f"{path}: 7 events, 1 run, 2 errors, 0 warnings"]
    assert call(validate_main, alone)[0] == 0


OPENCODE_STEP = {"type": "step_start", "timestamp": 1790012100437, "sessionID": "ses_1",
                 "part": {"id": "prt_1", "messageID": "msg_1", "sessionID": "ses_1",
                          "type": "step-start"}}


def test_an_agent_s_name_takes_the_article_it_is_said_with(call, write):
    """'an' before a name said with a vowel first, in a message and in --help."""
    _, out, _ = call(validate_main, write(claude_with(OPENCODE_STEP)))
    assert "4: error: an opencode event in a claude stream [other-agent]" in out.decode()
    lines = (GOLDEN / "opencode" / "success-tools" / "input.ndjson").read_bytes()
    _, out, _ = call(validate_main, write(lines + orjson.dumps(CODEX_ITEM) + b"\n"))
    assert "error: a codex event in an opencode stream [other-agent]" in out.decode()
    assert " a amp " not in " ".join(run("json", "--help").stdout.decode().split())


def test_another_agent_s_event_is_found_where_a_converter_reads_every_line(call, write):
    """The prefilter passes over a line that holds no event the format's markers name
    (a Codex item in a Claude stream); --strict reads every line, and stops there."""
    path = write(claude_with(CODEX_ITEM))
    assert call(json_main, path)[0::2] == (0, "")
    status, out, err = call(json_main, "--strict", path)
    assert (status, out) == (1, b"")
    assert err == f"ndagent-json: {path}:4: error: a codex event in a claude stream\n"


def golden_objects():
    from ndagent.decoder import decode_line

    for path in sorted(GOLDEN.glob("*/*/input.ndjson")):
        for line in path.read_bytes().splitlines():
            data = decode_line(line)
            if data.__class__ is dict:
                yield path.parent.parent.name, data


TYPES = ["system", "assistant", "user", "result", "tool_call", "thinking", "init",
         "message", "tool_use", "tool_result", "error", "stream_event", "thread.started",
         "item.completed", "turn.x", "request_user_input", "rate_limit_event", "other"]
VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3),
                   st.sampled_from(["init", "success", "tool_result", "msg_1"]),
                   st.lists(st.fixed_dictionaries({"type": st.sampled_from(
                       ["text", "tool_result"])}), max_size=2),
                   st.fixed_dictionaries({}, optional={"id": st.just("m"),
                                                       "content": st.just([])}))
KEYS = st.sampled_from(["subtype", "tools", "claude_code_version", "uuid", "message",
                        "num_turns", "total_cost_usd", "modelUsage", "duration_ms",
                        "status", "session_id", "role", "content", "tool_id",
                        "tool_name", "severity", "timestamp", "item"])


@settings(max_examples=examples(75, 300), deadline=None)
@given(st.sampled_from(TYPES), st.dictionaries(KEYS, VALUES, max_size=5))
def test_property_an_agent_decides_only_on_the_types_it_may_decide_on(kind, fields):
    from ndagent.formats import all_formats

    data = {"type": kind, **fields}
    for module in all_formats():
        assert not module.decides(data) or module.may_decide(kind), (module.name, data)


def test_other_agent_finds_every_other_agent_s_golden_object():
    """Another agent's tests find each golden object decisive for it, and only those;
    with the reader's own test first (``screen``, as the frame runs them), the same."""
    from ndagent.formats import OtherAgents, all_formats, get

    objects = list(golden_objects())
    for module in all_formats():
        others = OtherAgents(module)
        for agent, data in objects:
            kind = data.get("type") if data.get("type").__class__ is str else None
            found = next((other for decides, other in others.tests(kind)
                          if decides(data)), None)
            screened = next((other for decides, other in others.screen(kind)
                             if decides(data)), None)
            if agent == module.name or not get(agent).decides(data):
                assert found is None and screened is None, (module.name, agent, data)
            else:
                assert found is screened is get(agent), (module.name, agent, data)


SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CAPTURES = sorted([*SHARED.glob("claude/*.ndjson"), *SHARED.glob("codex/*.ndjson")])


@pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not beside this clone")
@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.name)
def test_every_verb_on_a_real_capture(call, path):
    """What docs/agents.md decides per verb, on the Claude and Codex captures."""
    from ndagent.cmd_text import main as text_main
    from ndagent.cmd_tools import main as tools_main

    objects = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    claude = path.parent.name == "claude"
    ended = objects[-1]["type"] in ("result", "turn.completed")
    status, out, err = call(json_main, path)
    if claude:  # the result event as it is
        assert (status, orjson.loads(out)) == (0, objects[-1]) and err == ""
        answer = objects[-1]["result"]
    elif ended:  # the SDK's Turn
        items = [o["item"] for o in objects if o["type"] == "item.completed"]
        messages = [item["text"] for item in items if item["type"] == "agent_message"]
        answer = messages[-1]
        assert orjson.loads(out) == {"items": items, "finalResponse": answer,
                                     "usage": objects[-1]["usage"]}
    else:  # cut off: no line, a message, status 1
        assert (status, out) == (1, b"") and "run ended without" in err
        answer = ""
    status, out, _ = call(result_main, path)
    assert out == (answer.encode() + b"\n" if answer else b"") and status == (0 if ended else 1)
    # One record, and one action line, per call, each ended.
    calls = [block for o in objects if o["type"] == "assistant"
             for block in o["message"]["content"] if block["type"] == "tool_use"] if claude \
        else [o["item"] for o in objects if o["type"] == "item.completed"
              and o["item"]["type"] in ("command_execution", "file_change")]
    records = [orjson.loads(line) for line in call(tools_main, path)[1].splitlines()]
    assert sorted(r["call_id"] for r in records) == sorted(c["id"] for c in calls)
    assert {(r["agent"], r["parent"]) for r in records} <= {(path.parent.name, None)}
    assert "pending" not in {r["status"] for r in records}
    assert len(call(text_main, path)[1].splitlines()) == len(calls)
    assert call(validate_main, path)[0] == (0 if ended else 1)


def _decision_from_split(data, detector):
    """What detect_head decides, by the plain means: split the whole head into lines."""

    head = data[:inputs.DETECT_HEAD]
    whole = len(data) < inputs.DETECT_HEAD
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    lines = head.split(b"\n")
    last = None if whole and head.endswith(b"\n") else lines.pop()
    for number, line in enumerate(lines, 1):
        data = _object(line)
        if data.__class__ is not dict:
            detector.other_line(line, number)
            continue
        found = detector.add(data, number)
        if found is not None:
            return found
    if not whole:
        return None
    # A last line with no newline counts where it holds an object (a one-line file).
    if last is not None and _object(last).__class__ is dict:
        found = detector.add(_object(last), len(lines) + 1)
        if found is not None:
            return found
    return detector.end()


def _object(line):
    try:
        return orjson.loads(line) if line.rstrip().endswith(b"}") else None
    except orjson.JSONDecodeError:
        return None


HEAD_LINES = [b'{"type":"system","subtype":"init","session_id":"s","model":"m"}',
              b'{"type":"assistant","message":{"content":[{"type":"text","text":"x"}]}}',
              b'{"type":"thread.started","thread_id":"t"}', b'{"type":"init","session_id":"s"}',
              b'{"type":"user"}', b'{"type":"mystery"}', b"[{", b"{", b"noise", b"", b"  "]


@settings(max_examples=examples(50, 200), deadline=None)
@given(st.lists(st.sampled_from(HEAD_LINES), max_size=8), st.booleans(), st.booleans(),
       st.integers(0, 6))
def test_property_the_head_is_read_as_split_reads_it(lines, newline_at_end, bom, cut):
    """detect_head reads the pieces of a file's head one at a time, and no more of the
    file than it holds: the decision is the one from splitting the whole head."""
    import tempfile

    from ndagent.formats import Detector

    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines)
    if newline_at_end and lines:
        data += b"\n"
    data = data[:max(len(data) - cut, 0)]
    with tempfile.NamedTemporaryFile(suffix=".ndjson") as file:
        file.write(data)
        file.flush()
        found = inputs.detect_head(file.name, Detector(None))
    expected = _decision_from_split(data, Detector(None))
    assert found == expected


def test_a_file_of_one_line_with_no_newline_is_told_by_it(call, tmp_path):
    """As from standard input: its one object tells its agent (it was passed over, as a
    line the head may have cut, and the file read as Cursor's)."""
    path = tmp_path / "one.ndjson"
    golden = Path(__file__).parent / "golden" / "claude" / "success-tools" / "input.ndjson"
    path.write_bytes(golden.read_bytes().split(b"\n")[0])
    status, out, _ = call(validate_main, path)
    assert b"no-result" in out and b"other-agent" not in out
    # A Gemini chat document written compact with no newline (JSON.stringify's).
    document = Path(__file__).parent / "golden" / "gemini_session" / "whole-document"
    path.write_bytes(orjson.dumps(orjson.loads((document / "input.ndjson").read_bytes())))
    status, out, _ = call(validate_main, path)
    assert b"3 runs" in out, out


def test_a_head_beyonddetect_head_is_not_whole(tmp_path, monkeypatch):
    from ndagent.formats import Detector

    monkeypatch.setattr(inputs, "DETECT_HEAD", 64)
    path = tmp_path / "noise.ndjson"
    path.write_bytes(b"noise\n" * 20)  # 120 bytes: undecided within the head
    assert inputs.detect_head(str(path), Detector(None)) is None
    assert _decision_from_split(path.read_bytes(), Detector(None)) is None
    path.write_bytes(b"noise\n" * 5)  # whole: read as Cursor, nothing decisive
    assert inputs.detect_head(str(path), Detector(None)) == _decision_from_split(
        path.read_bytes(), Detector(None))


# The agents that write Claude's envelope, Claude Code, Qwen Code and Amp, are told apart
# (docs/agents.md#claude-compatible-agents); a stream that none of its lines tells is
# read as Claude's, which validate says once.

QWEN_INIT = {"type": "system", "subtype": "init", "uuid": "5f0c", "session_id": "5f0c",
             "cwd": "/p", "tools": ["read_file"], "mcp_servers": [], "model": "qwen3-coder",
             "permission_mode": "default", "qwen_code_version": "0.0.14"}
AMP_INIT = {"type": "system", "subtype": "init", "cwd": "/p", "session_id": "T-019e2a",
            "tools": ["Bash", "Read"], "mcp_servers": []}


def _envelope_stream(write, first):
    """``first``, then an assistant line and a result in the envelope the three share."""
    session = first["session_id"]
    return write([orjson.dumps(line) for line in (
        first,
        {"type": "assistant", "message": {"id": "m1", "role": "assistant",
                                          "content": [{"type": "text", "text": "Hi."}]},
         "session_id": session, "parent_tool_use_id": None},
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1,
         "result": "Hi.", "session_id": session, "duration_ms": 5})])


@pytest.mark.parametrize("first, name", [(QWEN_INIT, "a qwen"), (AMP_INIT, "an amp")])
def test_claude_envelope_agents_are_read_as_their_own(call, write, first, name):
    path = _envelope_stream(write, first)
    assert call(result_main, path) == (0, b"Hi.\n", "")
    status, out, _ = call(validate_main, "--format", "ndjson", path)
    assert status == 0 and b'"family"' not in out
    status, out, err = call(json_main, "--agent", "claude", path)
    assert (status, out) == (1, b"")
    assert err == (f"ndagent-json: {path}:1: error: {name} stream, not claude "
                   "(--agent claude)\n")


def test_a_stream_no_line_of_which_tells_the_three_apart_is_claude_s(call, write):
    path = _envelope_stream(write, {"type": "system", "subtype": "hook_started",
                                    "session_id": "s1"})
    status, out, err = call(validate_main, path)
    assert status == 0 and out.count(b"[family]") == 1, out
    assert b"warning: a Claude-compatible stream with no line that tells" in out
    status, out, _ = call(json_main, path)
    assert status == 0 and orjson.loads(out)["result"] == "Hi."
    from ndagent.cmd_stats import main as stats_main

    status, out, _ = call(stats_main, "--by", "run", "--format", "ndjson", path)
    assert orjson.loads(out.splitlines()[0])["agent"] == "claude"
    # Named, the agent is the one named, and nothing is said.
    for agent in ("qwen", "amp", "claude"):
        status, out, _ = call(validate_main, "--agent", agent, "--format", "ndjson", path)
        assert status == 0 and (b'"family"' in out) == (agent == "claude")


@pytest.mark.parametrize("other, agent", [
    ({"type": "assistant", "message": {"id": "x", "content": []}, "uuid": "x",
      "session_id": "s"}, "qwen"),
    ({"type": "result", "uuid": "r", "num_turns": 1, "session_id": "s"}, "qwen"),
    ({"type": "stream_event", "event": {"type": "message_start", "message": {"id": "m"}}},
     "qwen"),
    ({"type": "user", "session_id": "T-1"}, "amp"),
    ({"type": "result", "session_id": "T-1", "total_cost_usd": 1, "uuid": "r",
      "num_turns": 1}, "amp")])
def test_qwen_and_amp_objects_decide_for_them_alone(other, agent):
    from ndagent.formats import all_formats

    assert [found.name for found in all_formats() if found.decides(other)] == [agent]


def test_an_agent_forced_on_a_stream_with_none_of_its_events_is_said_once(call, write):
    path = write([b'{"type":"note","text":"x"}', b'{"type":"note","text":"y"}'])
    status, out, err = call(json_main, "--agent", "gemini", path)
    assert (status, out) == (1, b"")
    assert err == f"ndagent-json: {path}:1: error: no gemini event in the input\n"
