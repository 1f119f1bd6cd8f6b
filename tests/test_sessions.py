"""The session files agents keep on disk (docs/agents.md#session-files): told by their
content from each other and from the streams, read by every verb, their figures by the
de-duplication rules (the goldens under tests/golden/*_session show each verb; here,
what they do not: the real files' figures, the refusals, the bounds)."""

from pathlib import Path

import orjson
import pytest

from ndagent import formats, inputs, sources
from ndagent.cmd_json import main as json_main
from ndagent.cmd_result import main as result_main
from ndagent.cmd_stats import main as stats_main
from ndagent.decoder import decode_line

GOLDEN = Path(__file__).parent / "golden"
FOUR = ("input", "cacheRead", "cacheWrite", "output")
SESSIONS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "sessions"
needs_sessions = pytest.mark.skipif(not SESSIONS.is_dir(),
                                    reason="../shared/corpus/sessions is not beside this clone")


def case(name):
    return GOLDEN / name / "input.ndjson"


def runs(call, *paths):
    status, out, err = call(json_main, *paths)
    return [orjson.loads(line) for line in out.splitlines()], status, err


def told(path):
    """The format an input's first objects tell."""
    detector = formats.Detector()
    for line, text in enumerate(path.read_bytes().splitlines(), 1):
        value = decode_line(text)
        if value.__class__ is dict:
            found = detector.add(value, line)
            if found is not None:
                return found[0].name
    return None


def test_a_claude_transcript_is_no_cut_off_stream(call):
    """It was read as a Claude stream: one run cut off, status 1."""
    assert told(case("claude_session/rejected-interrupted")) == "claude_session"
    found, status, err = runs(call, case("claude_session/rejected-interrupted"))
    assert (status, err) == (0, "")
    assert [run["outcome"] for run in found] == ["interrupted", "ok"]


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*_session/*/input.ndjson")),
                         ids=lambda path: f"{path.parent.parent.name}/{path.parent.name}")
def test_each_session_run_is_one_object_with_the_keys_in_order(call, path):
    found, _, _ = runs(call, path)
    assert found
    for number, run in enumerate(found, 1):
        assert list(run) == ["type", "agent", "session_id", "run", "prompt", "answer",
                             "outcome", "error", "started", "ended", "duration_ms", "model",
                             "usage", "cost_usd", "tools", "source", "line"]
        assert run["run"] == number and run["outcome"] in ("ok", "failed", "interrupted",
                                                            "open")


def test_codex_usage_is_the_difference_of_totals_never_the_sum_of_repeats(call):
    found, _, _ = runs(call, case("codex_session/repeated-token-count"))
    input_total = sum(run["usage"]["input"] + run["usage"]["cacheRead"] for run in found)
    assert input_total == 22000  # the last total_token_usage's input_tokens
    assert sum(run["usage"]["output"] for run in found) == 260


def test_claude_usage_counts_each_message_once_its_largest_line(call):
    (run,) = runs(call, case("claude_session/agent-progress"))[0]
    # msg_B1 + msg_B2 of the main thread, msg_S1 (its larger line) + msg_S2 copied
    assert run["usage"] == {"input": 3 + 2 + 5 + 4, "cacheRead": 12000 + 17000 + 8000 + 10000,
                            "cacheWrite": 5000 + 400 + 2000 + 100,
                            "output": 90 + 30 + 44 + 20}


def test_stats_counts_a_subagent_file_and_its_copies_once(call):
    args = ("--format", "ndjson", case("claude_session/agent-progress"))
    _, alone, _ = call(stats_main, *args)
    _, both, _ = call(stats_main, *args, case("claude_session/subagent-file"))
    alone, both = orjson.loads(alone)["tokens"], orjson.loads(both)["tokens"]
    assert {name: both[name] for name in ("input", "cacheRead", "cacheWrite", "output")} == \
        {name: alone[name] for name in ("input", "cacheRead", "cacheWrite", "output")}


def test_result_last_prints_the_last_run_s_answer(call):
    status, out, _ = call(result_main, "--last", case("claude_session/rejected-interrupted"),
                          case("claude_session/compaction-open"))
    assert (status, out) == (0, b"Adding a discount test.\n")


def test_agent_forces_the_agent_of_either_form(call):
    path = case("claude_session/compaction-open")
    assert runs(call, "--agent", "claude", path)[1] == 0
    found, status, err = runs(call, "--agent", "codex", path)
    assert (found, status) == ([], 1)
    assert "a claude session file, not codex (--agent codex)" in err


def test_a_gemini_logs_json_is_refused_in_one_line(call, write):
    path = write(orjson.dumps([{"sessionId": "s", "messageId": 0, "type": "user",
                                "message": "hi", "timestamp": "2026-01-01T00:00:00Z"}],
                              option=orjson.OPT_INDENT_2), "logs.json")
    found, status, err = runs(call, path)
    assert (found, status) == ([], 1)
    assert err.endswith("a Gemini logs.json (prompts only), not a session\n")


@pytest.mark.parametrize("main", [json_main, result_main, stats_main])
def test_a_cursor_text_transcript_is_refused_in_one_line(call, write, main):
    """The older Cursor transcripts are plain text: one error at the first line that
    says what the input is, not a warning for each of its lines."""
    path = write(b"\n\nuser:\n<user_query>\nfix it\n</user_query>\n\nassistant:\ndone\n",
                 "transcript.txt")
    status, out, err = call(main, path)
    assert status == 1 and (out == b"" or main is stats_main)  # stats: its zero table
    assert err.endswith(f": {path}:3: error: a Cursor text transcript (.txt), not supported\n")
    assert err.count("\n") == 1


def test_a_user_line_after_objects_is_no_text_transcript(call, write):
    stream = case("cursor/sample").read_bytes()
    status, out, err = call(json_main, write(stream + b"user:\n"))
    assert "text transcript" not in err and out


def test_a_document_past_the_bound_is_refused(call, monkeypatch):
    monkeypatch.setattr(sources, "DOCUMENT_BYTES", 1000)
    monkeypatch.setattr(inputs, "DOCUMENT_BYTES", 1000)
    found, status, err = runs(call, case("gemini_session/whole-document"))
    assert (found, status) == ([], 1)
    assert "input too large for a JSON document" in err


def test_any_other_document_is_still_json_output(call, write):
    path = write(orjson.dumps({"type": "result", "result": "hi"}, option=orjson.OPT_INDENT_2))
    assert "json output, not stream-json" in runs(call, path)[2]


def test_a_codex_rollout_before_the_payload_envelope_is_refused(call, write):
    path = write([b'{"id":"x","timestamp":"2025-01-01T00:00:00Z","instructions":null}',
                  b'{"record_type":"state"}'])
    assert "unsupported codex session format" in runs(call, path)[2]


# The real files (SESSIONS.md part 9: the figures ccusage gives, where comparable).

@needs_sessions
@pytest.mark.parametrize(("name", "figures"), [
    ("claude/spotter-2.1.38-task-agent-progress.jsonl",
     {"input": 1600, "output": 1593, "cacheWrite": 40127, "cacheRead": 522629}),
    ("codex/codemie-0.125.0-tui-rollout-019e1625.jsonl",
     {"input": 1126300, "cacheRead": 4929536, "cacheWrite": 0, "output": 9118}),
    ("gemini/codemie-2026-01-session-37b7abef-file-ops.json",
     {"input": 25301, "cacheRead": 62117, "output": 1441}),
])
def test_real_session_totals(call, name, figures):
    found, status, _ = runs(call, SESSIONS / name)
    assert status == 0
    totals = {key: sum(run["usage"][key] or 0 for run in found) for key in figures}
    assert totals == figures


@needs_sessions
def test_real_codex_turns_and_answer(call):
    found, _, _ = runs(call, SESSIONS / "codex/codemie-0.125.0-tui-rollout-019e1625.jsonl")
    assert [run["usage"] for run in found] == [
        {"input": 20786, "cacheRead": 37120, "cacheWrite": 0, "output": 374},
        {"input": 1105514, "cacheRead": 4892416, "cacheWrite": 0, "output": 8744}]
    assert (found[0]["prompt"], found[0]["started"], found[0]["duration_ms"]) == (
        "show tools", "2026-05-11T08:27:17.493Z", 15481)


# --sessions: the agents' default folders, read as ccusage reads them with no argument.

@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home folder with a session file of each agent in its default folder, a
    Gemini logs.json beside its chats, and none of the agents' variables set."""
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    layout = {
        ".claude/projects/-home-ana-shop/5f0c2a9e.jsonl": "claude_session/rejected-interrupted",
        ".codex/sessions/2026/01/02/rollout-2026-01-02T07-00-00-x.jsonl":
            "codex_session/repeated-token-count",
        ".gemini/tmp/shop/chats/session-2026-04-20T10-00-3e9a7c21.jsonl":
            "gemini_session/jsonl-set-rewind",
        ".cursor/projects/srv-app/agent-transcripts/a/a.jsonl": "cursor_session/no-turn-ended",
    }
    for path, name in layout.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(case(name).read_bytes())
    (tmp_path / ".gemini/tmp/shop/logs.json").write_bytes(
        b'[{"sessionId": "s", "messageId": 0, "type": "user", "message": "hi"}]\n')
    return tmp_path


def test_sessions_reads_every_agent_s_default_folder(call, home):
    status, out, err = call(stats_main, "--sessions", "--by", "agent", "--format", "ndjson")
    assert (status, err) == (0, "")  # the logs.json passed over
    found = {record["agent"]: record["runs"]["total"] for record in map(orjson.loads,
                                                                        out.splitlines())}
    assert found == {"claude": 2, "codex": 2, "cursor": 2, "gemini": 3}


def test_sessions_names_agents_and_config_folders(call, home, monkeypatch):
    status, out, _ = call(stats_main, "--sessions", "claude,codex", "--by", "agent",
                          "--format", "ndjson")
    assert status == 0
    assert [orjson.loads(line)["agent"] for line in out.splitlines()] == ["claude", "codex"]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "elsewhere"))
    status, out, _ = call(stats_main, "--sessions", "claude", "--format", "ndjson")
    assert orjson.loads(out)["runs"]["total"] == 0


def test_since_and_until_keep_the_runs_begun_those_days(call):
    paths = [case("claude_session/rejected-interrupted"), case("codex_session/aborted-resumed")]
    status, out, _ = call(stats_main, "--tz", "UTC", "--since", "2026-05-12", "--until",
                          "20260512", "--format", "ndjson", *paths)
    assert status == 0 and orjson.loads(out)["runs"]["total"] == 1


def test_gemini_counts_the_tokens_of_rewound_messages_in_the_run_after(call):
    """A message $rewindTo takes back was still a call made (ccusage counts it too): its
    tokens go to the run that takes its place."""
    found, _, _ = runs(call, case("gemini_session/jsonl-set-rewind"))
    assert [run["prompt"] for run in found] == ["what is in notes.txt", "translate it to german",
                                                "and in italian?"]
    assert found[1]["usage"] == {"input": 200 + 200, "cacheRead": 3100 + 3000,
                                 "cacheWrite": None, "output": 7 + 6}


def test_since_works_in_every_verb_and_a_file_of_other_days_is_no_empty_input(call):
    from ndagent.cmd_text import main as text_main
    from ndagent.cmd_validate import main as validate_main

    paths = [case("claude_session/rejected-interrupted"), case("claude_session/compaction-open")]
    status, out, err = call(text_main, "--no-filename", "--tz", "UTC", "--since", "2026-03-04",
                            *paths)
    assert (status, out, err) == (0, b"Edited file\n", "")
    status, out, _ = call(validate_main, "--tz", "UTC", "--until", "2000-01-01", paths[0])
    assert status == 0 and out.endswith(b": 17 events, 0 runs, 0 errors, 0 warnings\n")


def test_partials_merge_to_what_one_call_counts(call, tmp_path):
    """A partial lists the API messages it counted: merged in either order, a subagent's
    file and its copies in another partial count once."""
    paths = [case("claude_session/agent-progress"), case("claude_session/subagent-file")]
    _, whole, _ = call(stats_main, "--format", "ndjson", *paths)
    partials = []
    for index, path in enumerate(paths):
        _, out, _ = call(stats_main, "--partial", path)
        partials.append(tmp_path / f"{index}.partial")
        partials[-1].write_bytes(out)
    for order in (partials, partials[::-1]):
        _, merged, _ = call(stats_main, "--merge", "--format", "ndjson", *order)
        assert orjson.loads(merged)["tokens"] == orjson.loads(whole)["tokens"]


def test_by_model_splits_a_run_s_tokens_by_each_message_s_model(call, tmp_path):
    path = case("claude_session/agent-progress")
    _, out, _ = call(stats_main, "--by", "model", "--format", "ndjson", path)
    found = {record["model"]: record for record in map(orjson.loads, out.splitlines())}
    assert found["claude-haiku-4-5-20251001"]["tokens"]["input"] == 5 + 4  # the subagent's
    assert found["claude-sonnet-4-5"]["tokens"]["input"] == 3 + 2
    assert found["claude-sonnet-4-5"]["tool_calls"] == 2  # the run's calls: its main model's
    assert found["claude-haiku-4-5-20251001"]["runs"]["total"] == 1
    # the same in partials merged, the subagent's own file in another
    parts = []
    for index, each in enumerate((path, case("claude_session/subagent-file"))):
        parts.append(tmp_path / f"{index}")
        parts[-1].write_bytes(call(stats_main, "--by", "model", "--partial", each)[1])
    _, merged, _ = call(stats_main, "--merge", "--format", "ndjson", *parts[::-1])
    merged = {record["model"]: record for record in map(orjson.loads, merged.splitlines())}
    for model, record in found.items():
        assert {name: merged[model]["tokens"][name] for name in FOUR} == \
            {name: record["tokens"][name] for name in FOUR}


def test_a_codex_command_still_running_ends_with_its_exec_command_end(call, write):
    def line(kind, **payload):
        return orjson.dumps({"timestamp": "2026-05-11T08:00:00.000Z", "type": kind,
                             "payload": payload})

    running = "Chunk ID: 1\\nProcess running with session ID 7\\nOutput:\\n"
    path = write([
        line("session_meta", id="019e0000-0000-7000-8000-000000000000", cwd="/w"),
        line("event_msg", type="task_started", turn_id="t1"),
        line("event_msg", type="user_message", message="build it"),
        line("response_item", type="function_call", name="exec_command",
             arguments='{"cmd": "make"}', call_id="c1"),
        line("response_item", type="function_call_output", call_id="c1", output=running),
        line("event_msg", type="exec_command_end", call_id="c1", exit_code=2),
        line("response_item", type="function_call", name="exec_command",
             arguments='{"cmd": "make serve"}', call_id="c2"),
        line("event_msg", type="exec_command_end", call_id="c2", exit_code=0),
        line("response_item", type="function_call_output", call_id="c2", output=running),
        line("response_item", type="function_call", name="exec_command",
             arguments='{"cmd": "tail -f log"}', call_id="c3"),
        line("response_item", type="function_call_output", call_id="c3", output=running),
        line("event_msg", type="task_complete", turn_id="t1", last_agent_message="done")])
    (run,) = runs(call, path)[0]
    assert run["tools"] == {"shell": {"success": 1, "failure": 1, "unknown": 1}}


@pytest.mark.parametrize("by", ["file", "day", "model"])
def test_a_file_read_twice_counts_once_in_one_process_and_in_shares(call, monkeypatch, by):
    paths = [case("gemini_session/jsonl-set-rewind"), case("claude_session/agent-progress"),
             case("gemini_session/jsonl-set-rewind"), case("claude_session/subagent-file")]
    printed = []
    for mode in ("never", "always"):
        monkeypatch.setenv(inputs.ENVIRONMENT, mode)
        printed.append(call(stats_main, "--by", by, "--tz", "UTC", *paths)[1])
    assert printed[0] == printed[1]


PRICES = GOLDEN.parent / "fixtures" / "prices" / "litellm-sample.json"


@pytest.mark.parametrize("options", [["--by", "model"], ["--prices", PRICES],
                                     ["--by", "model", "--prices", PRICES]])
@pytest.mark.parametrize("name", ["agent-progress", "subagent-file", "compaction-open"])
def test_messages_counted_before_count_alike_in_shares_and_partials(call, monkeypatch,
                                                                    tmp_path, name, options):
    """A FILE read twice: its messages counted once, their estimated cost once, and each
    run in the group of each model of its messages, whether one process reads both, a
    share each, or a partial each merged."""
    path = case(f"claude_session/{name}")
    printed = []
    for mode in ("never", "always"):
        monkeypatch.setenv(inputs.ENVIRONMENT, mode)
        printed.append(call(stats_main, "--format", "ndjson", *options, path, path)[1])
    monkeypatch.setenv(inputs.ENVIRONMENT, "never")
    partial = tmp_path / "one"
    partial.write_bytes(call(stats_main, "--partial", *options, path)[1])
    printed.append(call(stats_main, "--merge", "--format", "ndjson", *options[2:] if
                        options[0] == "--by" else options, partial, partial)[1])
    assert printed[0] == printed[1] == printed[2]


def test_a_session_file_is_opened_once(call, monkeypatch):
    """Its agent is told from its bytes, which are then read: the many small files of a
    store cost one open each."""
    import builtins
    import os

    path = str(case("claude_session/agent-progress"))
    opened = []
    for module, name in ((builtins, "open"), (os, "open")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda file, *rest, real=real, **keywords:
                            opened.append(file) or real(file, *rest, **keywords))
    monkeypatch.setenv(inputs.ENVIRONMENT, "never")
    assert call(stats_main, path)[0] == 0
    assert opened.count(path) == 1


def test_stats_tells_the_progress_line_nothing_when_it_is_not_shown(call, monkeypatch):
    """(Telling it the bytes read costs a stat of each FILE.)"""
    sizes = []
    monkeypatch.setattr(inputs, "size", lambda name: sizes.append(name) or 0)
    paths = [case("claude_session/agent-progress"), case("claude_session/subagent-file")]
    assert call(stats_main, "-j", "1", *paths)[0] == 0
    assert sizes == []


@pytest.mark.parametrize("needs", [None, frozenset({"native"}), frozenset({"tools", "ends"})])
def test_the_session_run_object_is_made_only_for_a_verb_that_prints_it(needs):
    from ndagent.decoder import iter_items
    from ndagent.formats.claude_session import Reader
    from ndagent.model import RunEnd

    path = str(case("claude_session/agent-progress"))
    reader = Reader(path, False, needs)
    events = [event for item in iter_items([path]) for event in reader.event(item)]
    ends = [event for event in events + reader.finish() if event.__class__ is RunEnd]
    assert ends
    printed = needs is None or "native" in needs
    assert all((end.native is not None) == printed for end in ends)


def test_a_long_turn_s_answer_is_joined_once(call, write):
    """A Cursor turn of many assistant rows, and a Claude Code message of many text
    lines: the answer is joined at the run's end (joined at each text, 20 000 rows took
    half a minute)."""
    rows = [{"role": "user", "message": {"content": [
        {"type": "text", "text": "<user_query>\ngo\n</user_query>"}]}}]
    rows += [{"role": "assistant", "message": {"content": [{"type": "text", "text": f"r{n}"}]}}
             for n in range(20_000)]
    rows.append({"type": "turn_ended", "status": "success"})
    path = write(b"".join(orjson.dumps(row) + b"\n" for row in rows), "cursor.jsonl")
    (run,), status, _ = runs(call, path)
    assert status == 0 and run["agent"] == "cursor"
    assert run["answer"] == "\n\n".join(f"r{n}" for n in range(20_000))
    head = {"sessionId": "s1", "cwd": "/p", "version": "2.1.39", "isSidechain": False,
            "userType": "external", "timestamp": "2026-03-04T08:00:00.000Z"}
    lines = [{**head, "parentUuid": None, "type": "user", "uuid": "u0",
              "message": {"role": "user", "content": "go"}}]
    lines += [{**head, "parentUuid": f"u{n}", "type": "assistant", "uuid": f"u{n + 1}",
               "message": {"id": "msg_1", "role": "assistant", "model": "m",
                           "content": [{"type": "text", "text": f"t{n}"}],
                           "stop_reason": "end_turn" if n == 19_999 else None}}
              for n in range(20_000)]
    path = write(b"".join(orjson.dumps(line) + b"\n" for line in lines), "claude.jsonl")
    (run,), status, _ = runs(call, path)
    assert run["agent"] == "claude" and run["answer"] == "".join(
        f"t{n}" for n in range(20_000))


@pytest.mark.parametrize("text, prompt", [
    ("<user_query>\n  fix it \n</user_query>", "fix it"),
    ("before <user_query>a</user_query> <user_query>b</user_query>", "a"),
    ("<user_query>" + " " * 50_000 + "x", "<user_query>" + " " * 50_000 + "x"),
    (" <user_query> </user_query>", ""),
])
def test_a_cursor_prompt_is_its_first_user_query(call, write, text, prompt):
    """What the first <user_query> holds, blanks stripped; the whole text where none
    closes (found with plain searches: a lazy pattern took seconds on a long run of
    blanks with no closing tag)."""
    rows = [{"role": "user", "message": {"content": [{"type": "text", "text": text}]}},
            {"type": "turn_ended", "status": "success"}]
    path = write(b"".join(orjson.dumps(row) + b"\n" for row in rows), "cursor.jsonl")
    (run,), _, _ = runs(call, path)
    assert run["prompt"] == prompt.strip()


def test_by_model_groups_a_run_of_thousands_of_models_each_once(call, write):
    """A run whose every message names its own model: each model's messages are found
    in one pass over the run's (a pass for each model took time in the product: 10 000
    models took seconds), the file read twice counting each message once."""
    head = {"sessionId": "s1", "cwd": "/p", "version": "2.1.39", "isSidechain": False,
            "userType": "external", "timestamp": "2026-03-04T08:00:00.000Z"}
    count = 10_000
    lines = [{**head, "parentUuid": None, "type": "user", "uuid": "u0",
              "message": {"role": "user", "content": "go"}}]
    lines += [{**head, "parentUuid": f"u{n}", "type": "assistant", "uuid": f"u{n + 1}",
               "requestId": f"req_{n}",
               "message": {"id": f"msg_{n}", "role": "assistant", "model": f"m{n}",
                           "content": [{"type": "text", "text": "t"}],
                           "usage": {"input_tokens": n, "output_tokens": 1},
                           "stop_reason": "end_turn" if n == count - 1 else None}}
              for n in range(count)]
    path = write(b"".join(orjson.dumps(line) + b"\n" for line in lines), "claude.jsonl")
    _, out, _ = call(stats_main, "-j", "1", "--by", "model", "--format", "ndjson", path, path)
    found = {record["model"]: record for record in map(orjson.loads, out.splitlines())}
    assert len(found) == count
    assert all(found[f"m{n}"]["tokens"]["input"] == n for n in range(count))


# Gemini chats: the whole documents before 0.39, the JSONL files since.

def _gemini_message(key, kind="gemini", content="hi", tokens=True):
    message = {"id": key, "timestamp": "2026-04-20T10:00:02.000Z", "type": kind,
               "content": content, "model": "gemini-3-flash"}
    if tokens:
        message["tokens"] = {"input": 10, "output": 1, "cached": 0}
    return message


def _gemini_reader(lines):
    """The events a Gemini chat's Reader makes of ``lines`` (objects), to its end."""
    from ndagent.decoder import Event
    from ndagent.formats.gemini_session import Reader

    reader = Reader("chat.jsonl", checks=True)
    found = []
    for number, data in enumerate(lines, 1):
        found += reader.event(Event("chat.jsonl", number, data))
    return found + reader.finish()


def test_a_gemini_document_numbers_its_messages_in_one_pass_whatever_its_ids_spelling():
    """An id written otherwise than orjson writes it (``\\u00e9`` by Python's json) is
    not found, and the message takes the line of the last found: each such search went
    through the rest of the document (20 000 messages took tens of seconds)."""
    import json

    from ndagent.formats.gemini_session import document

    count = 20000
    messages = [_gemini_message(f"u-{index}", "user") if index % 2 == 0
                else _gemini_message(f"\u00e9-{index}") for index in range(count)]
    text = json.dumps({"sessionId": "s", "projectHash": "p", "messages": messages},
                      indent=2).encode()
    records = document(orjson.loads(text), text)
    lines = text.split(b"\n")
    assert len(records) == count + 1
    for (line, message), (before, _) in zip(records[1::2], records[2::2]):
        assert lines[line - 1].strip() == b"{" and f'"{message["id"]}"'.encode() in lines[line]
        assert before == line  # the message after it, not found, is numbered as it


def test_gemini_rewinds_at_the_end_of_many_messages_take_back_only_those():
    """Each $rewindTo pops from the end what it takes back: a list of the ids made
    at each took seconds (20 000 rewinds after 20 000 messages).  The messages taken
    back have no tokens, so that nothing is carried."""
    from ndagent.model import RunEnd

    count = 20000
    lines = [{"sessionId": "s", "projectHash": "p"}]
    lines += [_gemini_message(f"m-{index}", "user" if index % 10 == 0 else "gemini")
              for index in range(count)]
    for index in range(count):
        lines += [_gemini_message(f"x-{index}", tokens=False), {"$rewindTo": f"x-{index}"}]
    lines.append(_gemini_message("last"))
    ends = [event for event in _gemini_reader(lines) if event.__class__ is RunEnd]
    assert len(ends) == count // 10
    assert list(ends[-1].usage_parts) == [*(f"m-{index}" for index in range(count - 9, count)),
                                          "last"]


def test_a_chain_of_gemini_rewinds_carries_every_taken_back_message_once_in_order():
    """Each message taken back hands what it carried to the next (a list that grows
    with the chain): copying it at each rewind took 34 s for 80 000 rewinds."""
    from ndagent.model import RunEnd

    count = 80000
    lines = [{"sessionId": "s", "projectHash": "p"}, _gemini_message("u", "user")]
    for index in range(count):
        lines += [_gemini_message(f"x-{index}"), {"$rewindTo": f"x-{index}"}]
    lines.append(_gemini_message("last"))
    (end,) = [event for event in _gemini_reader(lines) if event.__class__ is RunEnd]
    assert list(end.usage_parts) == [*(f"x-{index}" for index in range(count)), "last"]


def test_a_gemini_message_taken_back_or_appended_again_leaves_the_bound(monkeypatch):
    """The bound on what is kept counts what is kept: a message appended again on each
    change (a 12 KB message rewritten 1 000 times is 12 MB), or taken back, counts no
    longer (it was counted for good, and the later messages were not read)."""
    from ndagent.formats import gemini_session
    from ndagent.model import Note, RunEnd

    monkeypatch.setattr(gemini_session, "MAX_MESSAGES_BYTES", 1 << 20)
    long = _gemini_message("g-1", content="x" * 12000)
    lines = [{"sessionId": "s", "projectHash": "p"}, _gemini_message("u-1", "user")]
    lines += [long] * 1000
    for index in range(1000):
        lines += [{**long, "id": f"x-{index}"}, {"$rewindTo": f"x-{index}"}]
    lines += [_gemini_message("u-2", "user"), _gemini_message("g-2")]
    found = _gemini_reader(lines)
    assert not [event for event in found if event.__class__ is Note]
    assert [event.ok for event in found if event.__class__ is RunEnd] == [True, True]


def test_a_gemini_document_larger_than_the_head_read_to_tell_the_agent_is_read(call, write):
    """A document whose first MiB decides nothing (its lines hold no object) was
    refused as json output: only a head that was the whole FILE was tried."""
    messages = []
    for index in range(4000):
        messages += [_gemini_message(f"u-{index}", "user", "hello " * 20),
                     _gemini_message(f"g-{index}", content="answer " * 20)]
    text = orjson.dumps({"sessionId": "s", "projectHash": "p", "messages": messages},
                        option=orjson.OPT_INDENT_2)
    assert len(text) > inputs.DETECT_HEAD
    found, status, err = runs(call, write(text, "session.json"))
    assert (status, err, len(found)) == (0, "", 4000)
    assert found[-1]["line"] == text[:text.index(b'"u-3999"')].count(b"\n")


def test_a_stream_undecided_in_its_head_is_still_read_as_lines(call, write, monkeypatch):
    """A FILE whose head decides nothing is tried as a document only when a line of
    its head begins one; a stream that is none, or a document past the bound, is read
    as lines as before: told by a later object, or json output."""
    monkeypatch.setattr(inputs, "DETECT_HEAD", 100)
    stream = case("claude/api-error").read_bytes()
    path = write(b"{\n" + b'{"type": "noise"}\n' * 10 + stream)
    assert runs(call, path)[1] == 1 and "json output" not in runs(call, path)[2]
    monkeypatch.setattr(inputs, "DOCUMENT_BYTES", 1000)
    document = case("gemini_session/whole-document").read_bytes()
    assert len(document) > 1000
    assert "json output, not stream-json" in runs(call, write(document))[2]


def test_a_gemini_document_written_compact_is_read_from_its_one_line(call, write):
    """Its one line is the metadata's, with the messages in it (as ``jq -c`` writes
    it): they were left unread, 0 runs."""
    document = orjson.loads(case("gemini_session/whole-document").read_bytes())
    found, status, _ = runs(call, write(orjson.dumps(document) + b"\n"))
    pretty, _, _ = runs(call, case("gemini_session/whole-document"))
    assert status == 1 and len(found) == len(pretty) > 0  # as the pretty one: a run failed
    assert [run["usage"] for run in found] == [run["usage"] for run in pretty]
    assert {run["line"] for run in found} == {1}
