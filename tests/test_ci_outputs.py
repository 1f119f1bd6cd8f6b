"""The CI and interchange outputs pass their validators: GitHub workflow commands (a
re-statement of the runner's parser), JUnit XML (junitparser, and the structure of the
Ant schema), job-summary Markdown (markdown-it-py's tables), OTLP/JSON (the
opentelemetry-proto messages) and ATIF (Harbor's trajectory validator), on every golden
output and on streams with hostile strings in every field; otel's ids are stable; a
--endpoint posts to a server that decodes every request, and a failed post loses
nothing."""

import base64
import json
import re
import threading
import xml.etree.ElementTree as ElementTree
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from conftest import InProcess, examples
from golden.invocations import GOLDEN
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent import junit
from ndagent.formats import get
from ndagent.markup import FIELD_LIMIT, cut, table_code, workflow_command

GOLDENS = sorted(GOLDEN.glob("*/*/input.ndjson"))
RUN = InProcess()


def golden_outputs(name):
    return [(path.parent / f"{name}.stdout") for path in GOLDENS
            if (path.parent / f"{name}.stdout").exists()]


# GitHub Actions: the runner's parser (actions/runner ActionCommand.cs, TryParseV2,
# UnescapeProperty, UnescapeData), re-stated.

def _unescape(text, pairs):
    for old, new in pairs:
        text = text.replace(old, new)
    return text


_DATA = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
_PROPERTY = (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%"))


def parse_command(line):
    """(name, {key: value}, message) of a workflow command line, or None."""
    line = line.lstrip()
    if not line.startswith("::"):
        return None
    end = line.find("::", 2)
    if end < 0:
        return None
    info, message = line[2:end], line[end + 2:]
    name, _, properties = info.partition(" ")
    found = {}
    for pair in properties.strip().split(","):
        key, sep, value = pair.partition("=")
        if sep and value:
            found[key] = _unescape(value, _PROPERTY)
    return name, found, _unescape(message, _DATA)


def pieces(alphabet, min_size=0):
    """Strings joined from pieces of ``alphabet`` (escapes, markup), up to 12 of them."""
    return st.lists(st.sampled_from(alphabet), min_size=min_size, max_size=12).map("".join)


TRICKY = pieces(["%", "%0A", "%25", "%3A", "%2C", ":", ",", "\n", "\r", "=", "::", "é",
                 "\u202e", "a", " "])


@settings(max_examples=examples(75, 300), deadline=None)
@given(file=TRICKY, message=TRICKY, check=st.sampled_from(["failed-run", "a:b,c"]))
def test_a_workflow_command_round_trips_through_the_runners_parser(file, message, check):
    line = workflow_command("error", [("file", file or None), ("line", 7),
                                      ("title", f"ndagent validate: {check}")], message)
    assert "\n" not in line and "\r" not in line
    name, properties, parsed = parse_command(line)
    assert name == "error" and parsed == message
    assert properties.get("file") == (file or None)
    assert properties["line"] == "7" and properties["title"] == f"ndagent validate: {check}"


@pytest.mark.parametrize("path", golden_outputs("validate-github"),
                         ids=lambda path: path.parent.name)
def test_golden_github_output_is_commands_only(path):
    *diagnostics, notice = path.read_text(encoding="utf-8").splitlines()
    for line in diagnostics:
        assert re.match(r"^::(error|warning|notice) ", line), line
        assert parse_command(line)[1]["title"].startswith("ndagent validate: ")
    assert_notice_counts(notice, diagnostics)


def assert_notice_counts(notice, diagnostics):
    """``notice`` is one notice that counts the errors and warnings of ``diagnostics``."""
    name, properties, message = parse_command(notice)
    assert (name, properties) == ("notice", {"title": "ndagent validate"})
    errors, warnings, runs = map(int, re.fullmatch(
        r"(\d+) errors?, (\d+) warnings? in (\d+) runs?", message).groups())
    names = [parse_command(line)[0] for line in diagnostics]
    assert (errors, warnings) == (names.count("error"), names.count("warning"))
    return runs


def test_the_github_notice_counts_every_file_however_they_are_read(monkeypatch):
    """One notice, last, for all the FILEs, the same whether they are read in this
    process, each in a process of its own, or cut in parts; -q leaves it out."""
    paths = GOLDENS[:12]
    printed = {}
    for parts in ("never", "always"):
        monkeypatch.setenv("NDAGENT_PARTS", parts)
        _, out, _ = RUN("validate", b"", "--format", "github", *paths)
        printed[parts] = out
    assert printed["never"] == printed["always"]
    *diagnostics, notice = printed["never"].decode().splitlines()
    runs = assert_notice_counts(notice, diagnostics)
    _, out, _ = RUN("validate", b"", "--format", "ndjson", *paths)
    summaries = [json.loads(line) for line in out.splitlines() if b'"events"' in line]
    assert runs == sum(summary["runs"] for summary in summaries)
    _, out, _ = RUN("validate", b"", "--format", "github", "-q", *paths)
    assert b"::notice" not in out and b"::warning" not in out


# JUnit.


SUITE_CHILDREN = ["properties", "testcase", "system-out", "system-err"]
SUITE_ATTRIBUTES = ["name", "package", "id", "tests", "failures", "errors", "skipped", "time",
                    "timestamp", "hostname"]


def check_junit(data):
    """The document's structure as the Ant schema wants it, and junitparser's reading
    of it: (suites, cases)."""
    junit = pytest.importorskip("junitparser")
    root = ElementTree.fromstring(data)
    assert root.tag == "testsuites" and not root.attrib
    cases = 0
    for index, suite in enumerate(root):
        assert suite.tag == "testsuite" and list(suite.attrib) == SUITE_ATTRIBUTES
        assert suite.get("id") == str(index)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp"))
        tags = [child.tag for child in suite]
        assert tags[0] == "properties" and tags[-2:] == ["system-out", "system-err"]
        assert set(tags[1:-2]) <= {"testcase"}
        suite_cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(suite_cases)
        for case in suite_cases:
            assert list(case.attrib) == ["name", "classname", "time"]
            assert len(case) <= 1 and all(child.tag in ("failure", "error") for child in case)
            assert all(child.get("type") for child in case)
        assert int(suite.get("failures")) == sum(1 for case in suite_cases
                                                 if case.find("failure") is not None)
        cases += len(suite_cases)
    parsed = junit.JUnitXml.fromstring(data)
    suites = list(parsed)
    assert len(suites) == len(root)
    assert sum(len(list(suite)) for suite in suites) == cases
    return len(root), cases


@pytest.mark.parametrize("path", golden_outputs("validate-junit") + golden_outputs("stats-junit"),
                         ids=lambda path: f"{path.parent.parent.name}/{path.parent.name}/"
                                          f"{path.stem}")
def test_golden_junit_output_validates(path):
    check_junit(path.read_bytes())


def test_junit_cases_agree_with_validates_ndjson():
    folder = GOLDEN / "claude" / "several-runs"
    _, xml, _ = RUN("validate", b"", "--format", "junit", folder / "input.ndjson")
    _, ndjson, _ = RUN("validate", b"", "--format", "ndjson", folder / "input.ndjson")
    summary = [json.loads(line) for line in ndjson.splitlines() if b'"runs"' in line][0]
    suite = ElementTree.fromstring(xml)[0]
    assert len(suite.findall("testcase")) == summary["runs"]
    errors = [json.loads(line) for line in ndjson.splitlines() if b'"severity":"error"' in line]
    assert (int(suite.get("failures")) > 0) == bool(errors)


# The job summary.

def tables(markdown):
    """[(header cells, [row cells])] of the tables markdown-it-py finds."""
    markdown_it = pytest.importorskip("markdown_it")
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(markdown)
    found = []
    row = None
    for token in tokens:
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type in ("th_open", "td_open"):
            row.append("")
        elif token.type == "inline" and row is not None:
            row[-1] = "".join(child.content for child in token.children)
            assert not any(child.type == "html_inline" for child in token.children)
        elif token.type == "tr_close":
            found[-1].append(row)
            row = None
        assert token.type not in ("html_inline", "html_block")
    return found


@pytest.mark.parametrize("path", golden_outputs("stats-markdown") +
                         golden_outputs("stats-markdown-run"),
                         ids=lambda path: f"{path.parent.parent.name}/{path.parent.name}/"
                                          f"{path.stem}")
def test_golden_markdown_tables_are_whole(path):
    found = tables(path.read_text(encoding="utf-8"))
    assert found
    for table in found:
        assert all(len(row) == len(table[0]) for row in table)


def test_markdown_example_has_three_tables_of_5_3_and_9_cells():
    folder = GOLDEN / "claude"
    _, out, _ = RUN("stats", b"", "--format", "markdown", folder / "success-tools/input.ndjson",
                    folder / "failed-max-turns/input.ndjson")
    found = tables(out.decode())
    assert [len(table[0]) for table in found] == [5, 3, 9]
    assert [len(table) for table in found] == [2, 9, 5]


def test_markdown_run_rows_stay_under_the_byte_limit(write):
    run = (b'{"type":"system","subtype":"init","session_id":"s","model":"m|`x"}\n'
           b'{"type":"result","subtype":"success","is_error":false,"duration_ms":5,'
           b'"result":"ok","session_id":"s"}\n')
    path = write(run * 3000)
    status, out, _ = RUN("stats", b"", "--format", "markdown", "--by", "run",
                         "--max-bytes", "100000", path)
    assert status == 0 and len(out) <= 100_000
    assert out.rstrip().endswith(b"bytes was reached.*")
    table = tables(out.decode())[0]
    assert all(len(row) == 12 for row in table) and table[1][3] == "m|`x"


# OpenTelemetry.

def proto_requests(data):
    """Each line parsed into an ExportTraceServiceRequest (ids hex made base64 first, as
    the JSON mapping of protobuf reads bytes), with the checks json_format leaves out."""
    pytest.importorskip("opentelemetry.proto")
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    found = []
    for line in data.splitlines():
        value = json.loads(line)
        for resource in value["resourceSpans"]:
            assert resource["schemaUrl"] == "https://opentelemetry.io/schemas/1.41.0"
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        request = json_format.ParseDict(value, ExportTraceServiceRequest(),
                                        ignore_unknown_fields=False)
        spans = [span for resource in request.resource_spans for scope in resource.scope_spans
                 for span in scope.spans]
        ids = {span.span_id for span in spans}
        assert len(ids) == len(spans)
        for span in spans:
            assert len(span.trace_id) == 16 and any(span.trace_id)
            assert len(span.span_id) == 8 and any(span.span_id)
            assert not span.parent_span_id or span.parent_span_id in ids
            assert span.start_time_unix_nano <= span.end_time_unix_nano
            names = {attribute.key for attribute in span.attributes}
            assert "gen_ai.operation.name" in names
            # A chat span with no model is named by its operation alone (Amp's).
            assert span.name.startswith(("invoke_agent ", "execute_tool ", "chat ")) or (
                span.name == "chat")
            if span.status.code == 2:
                assert "error.type" in names
            assert not names & {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
                                "gen_ai.input.messages", "gen_ai.output.messages"}
        found.append(request)
    return found


@pytest.mark.parametrize("path", golden_outputs("otel"),
                         ids=lambda path: f"{path.parent.parent.name}/{path.parent.name}")
def test_golden_otel_output_is_otlp(path):
    proto_requests(path.read_bytes())


def test_otel_ids_are_the_specifications_example():
    from ndagent import otlp

    trace = otlp.trace_id("claude", "5f0c9e3a-7d21-4b8e-a4c6-93e1d07b2f58", 0, "f", 1)
    assert trace == "2ea06e191dc4c7b4658de988b60d919b"
    assert otlp.span_id(trace, "invoke_agent") == "6a9838609ab2ca95"
    assert otlp.span_id(trace, "execute_tool", "toolu_01Vb8cM2xR4qLt6ZnW9eJ3fK",
                        "0") == "9fdbb50bee60fcfa"


def test_otel_twice_is_byte_identical():
    path = GOLDEN / "claude" / "several-runs" / "input.ndjson"
    first = RUN("otel", b"", path)
    assert first[1] and RUN("otel", b"", path) == first


def _runs(sessions, calls):
    lines = []
    for session in sessions:
        lines.append({"type": "system", "subtype": "init", "session_id": session})
        lines.append({"type": "assistant", "session_id": session, "message": {
            "id": "m", "content": [{"type": "tool_use", "id": call, "name": "Bash",
                                    "input": {}} for call in calls]}})
        lines.append({"type": "result", "subtype": "success", "is_error": False,
                      "result": "", "session_id": session})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


@settings(max_examples=examples(10, 40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(sessions=st.lists(st.sampled_from(["a", "b", "", "a\n"]), min_size=2, max_size=5),
       calls=st.lists(st.sampled_from(["c1", "c2", "line:3"]), max_size=4))
def test_two_runs_never_share_a_span_id(sessions, calls):
    status, out, _ = RUN("otel", _runs(sessions, calls))
    ids = [span["spanId"] for line in out.splitlines()
           for span in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]]
    assert len(out.splitlines()) == len(sessions)
    assert len(ids) == len(set(ids))


# ATIF.

def check_atif(data):
    pytest.importorskip("pydantic")
    validator = pytest.importorskip("harbor.utils.trajectory_validator")
    for line in data.splitlines():
        checker = validator.TrajectoryValidator()
        assert checker.validate(json.loads(line)), checker.errors


@pytest.mark.parametrize("path", golden_outputs("atif"),
                         ids=lambda path: f"{path.parent.parent.name}/{path.parent.name}")
def test_golden_atif_output_validates(path):
    check_atif(path.read_bytes())


def test_a_message_s_own_tokens_are_its_step_s_metrics():
    """An agent that reports tokens per message (the formats that make Message events)
    gives each of its agent steps the figures of its message: the prompt is what it
    read, cached or not, written to the cache or not; the run's final metrics stay the
    run's own figures."""
    found = 0
    for path in golden_outputs("atif"):
        if not get(path.parent.parent.name).reports_messages:
            continue
        for line in path.read_bytes().splitlines():
            for step in json.loads(line)["steps"]:
                metrics = step.get("metrics")
                if metrics is None:
                    continue
                found += 1
                assert step["source"] == "agent"
                assert metrics["prompt_tokens"] >= metrics["cached_tokens"] + \
                    metrics["extra"]["cache_creation_input_tokens"]
    assert found


def test_codex_trajectories_say_what_the_stream_lacks():
    for path in golden_outputs("atif"):
        if path.parent.parent.name != "codex":
            continue
        for line in path.read_bytes().splitlines():
            trajectory = json.loads(line)
            assert trajectory["agent"]["version"] == "unknown"
            assert "model_name" not in trajectory["agent"]
            assert all("timestamp" not in step for step in trajectory["steps"])


def test_a_task_call_refers_to_its_subagent_trajectory():
    trajectory = json.loads((GOLDEN / "claude" / "subagent" / "atif.stdout").read_bytes())
    embedded = {each["trajectory_id"] for each in trajectory["subagent_trajectories"]}
    refs = {ref["trajectory_id"] for step in trajectory["steps"]
            for result in step.get("observation", {}).get("results", [])
            for ref in result.get("subagent_trajectory_ref", [])}
    assert refs and refs == embedded


def atif_of(case, *options):
    _, out, _ = RUN("atif", b"", *options, GOLDEN / case / "input.ndjson")
    return [json.loads(line) for line in out.splitlines()]


def test_a_prompt_is_a_user_step_and_thinking_is_the_next_steps_reasoning():
    (gemini,) = atif_of("gemini/tool-success")
    assert gemini["steps"][0]["source"] == "user" and gemini["steps"][0]["message"]
    assert all(step["source"] == "agent" for step in gemini["steps"][1:])
    (codex,) = atif_of("codex/command-exit-code")
    first = codex["steps"][0]
    assert first["reasoning_content"] == "**Type-checking the project**"
    assert first["tool_calls"][0]["function_name"] == "command_execution"
    check_atif(json.dumps(codex).encode())


def test_a_call_with_no_message_key_joins_the_message_that_asked_for_it():
    """Gemini and Codex name no message for a call: it belongs to the text before it,
    until a result came between (then it is a new model turn)."""
    (gemini,) = atif_of("gemini/tool-success")
    asking = gemini["steps"][1]
    assert asking["message"] == "I'll check the Vite config."
    assert [call["function_name"] for call in asking["tool_calls"]] == ["read_file"]
    (codex,) = atif_of("codex/interim-messages")
    assert [bool(step["message"]) for step in codex["steps"]] == [True, True, True]
    assert ["tool_calls" in step for step in codex["steps"]] == [True, True, False]


def test_calls_open_at_once_share_their_step_and_a_call_after_an_end_does_not():
    """Parallel calls (each begun before any ended) are one model turn; a call begun
    after one of them ended is the next.  Told from the step's first end, at once for
    each call (a look at each earlier call was quadratic: 6 000 calls open at once
    took seconds)."""
    events = [{"type": "init", "timestamp": "2026-06-12T21:33:21.000Z", "session_id": "s",
               "model": "m"},
              {"type": "message", "role": "user", "content": "go",
               "timestamp": "2026-06-12T21:33:21.000Z"}]
    calls = 6_000
    for kind in ("tool_use", "tool_result"):
        events += [{"type": kind, "timestamp": "2026-06-12T21:33:21.000Z",
                    "tool_name": "read_file", "tool_id": f"t{index}", "status": "success",
                    "parameters": {"file_path": "a"}, "output": "x"}
                   for index in range(calls)]
    events.append({"type": "tool_use", "timestamp": "2026-06-12T21:33:22.000Z",
                   "tool_name": "read_file", "tool_id": "late", "parameters": {}})
    events.append({"type": "result", "status": "success", "stats": {},
                   "timestamp": "2026-06-12T21:33:23.000Z"})
    stream = b"".join(json.dumps(event).encode() + b"\n" for event in events)
    _, out, _ = RUN("atif", stream)
    (trajectory,) = [json.loads(line) for line in out.splitlines()]
    assert [len(step.get("tool_calls", ())) for step in trajectory["steps"]] == [
        0, calls, 1]


def test_thinking_left_at_the_runs_end_is_a_step_of_its_own():
    stream = (b'{"type":"thread.started","thread_id":"t1"}\n{"type":"turn.started"}\n'
              b'{"type":"item.completed","item":{"id":"item_0","type":"reasoning",'
              b'"text":"**Thinking it over**"}}\n')
    _, out, _ = RUN("atif", stream)
    (trajectory,) = [json.loads(line) for line in out.splitlines()]
    assert trajectory["steps"] == [{"step_id": 1, "source": "agent", "message": "",
                                    "reasoning_content": "**Thinking it over**"}]
    check_atif(out)


def test_observations_are_the_result_text_each_format_shows():
    """As the transcripts show a call's result: Codex's command output with its exit
    code, not the item's JSON."""
    (codex,) = atif_of("codex/command-exit-code")
    content = codex["steps"][0]["observation"]["results"][0]["content"]
    assert content.endswith("\nexit code 2") and not content.startswith("{")


def test_max_chars_cuts_a_result_once(tmp_path):
    path = tmp_path / "long.ndjson"
    stream = (GOLDEN / "gemini" / "tool-success" / "input.ndjson").read_text()
    path.write_text(stream.replace('"output":""', '"output":"%s"' % ("x" * 5_000)))
    for verb, options in (("atif", ["--max-chars", "100"]),
                          ("otel", ["--content", "--max-chars", "100"])):
        _, out, _ = RUN(verb, b"", *options, path)
        assert out.count(b"characters omitted") == 1
        assert "[… 4,900 characters omitted …]".encode() in out


def test_otel_content_holds_the_prompt_and_changes_no_time_or_id():
    """--content adds the prompts (gen_ai.input.messages), the answer, arguments and
    results, and nothing else: the spans, their ids and times are those without it."""
    for path in GOLDENS:
        _, plain, _ = RUN("otel", b"", "--time-origin", "2026-06-01T10:00:00Z", path)
        _, full, _ = RUN("otel", b"", "--time-origin", "2026-06-01T10:00:00Z", "--content",
                         path)
        assert len(plain.splitlines()) == len(full.splitlines())
        for line, with_content in zip(plain.splitlines(), full.splitlines()):
            spans = json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
            more = json.loads(with_content)["resourceSpans"][0]["scopeSpans"][0]["spans"]
            assert len(spans) == len(more)
            for span, other in zip(spans, more):
                other["attributes"] = [attribute for attribute in other["attributes"]
                                       if attribute not in span["attributes"]]
                assert {attribute["key"] for attribute in other["attributes"]} <= {
                    "gen_ai.input.messages", "gen_ai.output.messages",
                    "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}, path
                span["attributes"] = other["attributes"]
                assert span == other, path
    _, out, _ = RUN("otel", b"", "--content", GOLDEN / "gemini" / "tool-success" / "input.ndjson")
    root = json.loads(out)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    (messages,) = [attribute["value"] for attribute in root["attributes"]
                   if attribute["key"] == "gen_ai.input.messages"]
    (message,) = messages["arrayValue"]["values"]
    role, parts = message["kvlistValue"]["values"]
    assert role == {"key": "role", "value": {"stringValue": "user"}}
    (part,) = parts["value"]["arrayValue"]["values"]
    assert part["kvlistValue"]["values"][1]["value"]["stringValue"] == (
        atif_of("gemini/tool-success")[0]["steps"][0]["message"])


# Hostile strings in every field.

HOSTILE = pieces(["\n", "\r", "::", "%", "|", "`", "<", ">", "&", '"', "'", "]]>", "<!--",
                  "\x1b[31m", "\x00", "\u202e", "\u2028", "\ud800", ",", "=", "a", " ", "\t",
                  "&amp;", "\n::error file=x::y"], min_size=1)


def hostile_stream(text, failed):
    # A Claude stream by its init (a tools list), so that every field below is read as
    # Claude's, its call included.
    lines = [{"type": "system", "subtype": "init", "session_id": text, "model": text,
              "cwd": text, "tools": [text], "claude_code_version": text},
             {"type": "assistant", "session_id": text, "message": {"id": text, "model": text,
              "content": [{"type": "text", "text": text},
                          {"type": "tool_use", "id": text, "name": text,
                           "input": {text: text, "command": text}}]}},
             {"type": "user", "session_id": text, "message": {"content": [
                 {"type": "tool_result", "tool_use_id": text, "content": text,
                  "is_error": True}]}},
             {"type": "result", "subtype": text if failed else "success", "is_error": failed,
              "result": text, "session_id": text, "duration_ms": 12, "num_turns": 1,
              "total_cost_usd": 0.01, "modelUsage": {text: {"inputTokens": 1}}}]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


@settings(max_examples=examples(15, 60), deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # each file written anew
@given(text=HOSTILE, failed=st.booleans(), name=HOSTILE.filter(lambda name: "\x00" not in name))
def test_hostile_strings_stay_inside_their_field(tmp_path, text, failed, name):
    path = tmp_path / (name.replace("/", "_").replace("\ud800", "_") + ".ndjson")
    if path.name in (".ndjson",):
        return
    path.write_bytes(hostile_stream(text, failed))
    for old in tmp_path.iterdir():
        if old != path:
            old.unlink()
    _, out, _ = RUN("validate", b"", "--format", "github", path)
    *diagnostics, notice = out.decode().splitlines()
    for line in diagnostics:
        assert parse_command(line)[0] in ("error", "warning")
    assert_notice_counts(notice, diagnostics)
    assert len(out.splitlines()) == out.count(b"\n::") + (1 if out.startswith(b"::") else 0)
    _, out, _ = RUN("validate", b"", "--format", "junit", path)
    assert check_junit(out) == (1, 1)
    _, out, _ = RUN("stats", b"", "--format", "junit", path)
    assert check_junit(out) == (1, 1)
    _, out, _ = RUN("stats", b"", "--format", "markdown", "--by", "run", path)
    table = tables(out.decode())[0]
    assert len(table) == 2 and all(len(row) == 12 for row in table)
    _, out, _ = RUN("stats", b"", "--format", "markdown", path)
    assert [len(table[0]) for table in tables(out.decode())][:3] == [5, 3, 9]
    _, out, _ = RUN("otel", b"", "--content", path)
    assert len(out.splitlines()) == 1
    proto_requests_with_content(out)
    _, out, _ = RUN("atif", b"", path)
    check_atif(out)


def test_a_megabyte_string_stays_inside_its_field(tmp_path):
    path = tmp_path / "big.ndjson"
    path.write_bytes(hostile_stream("\n::error x|<a>" * 80_000, True))
    _, out, _ = RUN("validate", b"", "--format", "github", path)
    assert all(line.startswith(b"::") for line in out.splitlines())
    _, out, _ = RUN("validate", b"", "--format", "junit", path)
    check_junit(out)
    _, out, _ = RUN("otel", b"", "--content", path)
    proto_requests_with_content(out)
    _, out, _ = RUN("atif", b"", path)
    check_atif(out)


def proto_requests_with_content(data):
    """As proto_requests, content attributes allowed."""
    stripped = []
    for line in data.splitlines():
        value = json.loads(line)
        for span in value["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["attributes"] = [attribute for attribute in span["attributes"]
                                  if not attribute["key"].startswith(("gen_ai.tool.call.a",
                                                                      "gen_ai.tool.call.r",
                                                                      "gen_ai.input",
                                                                      "gen_ai.output"))]
        stripped.append(json.dumps(value))
    proto_requests("\n".join(stripped).encode())


# --endpoint.

class _Collector(BaseHTTPRequestHandler):
    received = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def test_endpoint_posts_each_run_and_the_server_decodes_it():
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Collector.received = []
    path = GOLDEN / "claude" / "several-runs" / "input.ndjson"
    try:
        status, out, err = RUN("otel", b"", "--endpoint",
                               f"http://127.0.0.1:{server.server_port}/v1/traces", path)
    finally:
        server.shutdown()
        server.server_close()
    _, expected, _ = RUN("otel", b"", path)
    assert out == b"" and status in (0, 1)
    assert [body + b"\n" for _, _, body in _Collector.received] == expected.splitlines(True)
    assert {(where, kind) for where, kind, _ in _Collector.received} == {
        ("/v1/traces", "application/json")}
    for _, _, body in _Collector.received:
        proto_requests(body)


def test_endpoint_refused_says_so_once_and_loses_nothing():
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    port = server.server_port
    server.server_close()  # nothing listens there now
    path = GOLDEN / "claude" / "several-runs" / "input.ndjson"
    status, out, err = RUN("otel", b"", "--endpoint", f"http://127.0.0.1:{port}/v1/traces",
                           path)
    _, expected, _ = RUN("otel", b"", path)
    assert status == 2 and out == expected
    assert err.count(b"cannot post") == 1


@pytest.mark.parametrize("url", ["ftp://host/v1/traces", "http://host:port/v1/traces",
                                 "http://[::1", "http://a b/", "http://", "http://a\x1b/"])
def test_an_endpoint_that_could_not_be_posted_to_is_a_usage_error(url):
    status, out, err = RUN("otel", b"", "--endpoint", url, GOLDENS[0])
    assert (status, out) == (2, b"") and err.count(b"\n") == 1
    assert b"argument --endpoint: not a" in err and b"Traceback" not in err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_that_cannot_be_read_fails_in_the_ci_formats_too(tmp_path, jobs):
    """A run's stream that was never written must not show as a passing job."""
    missing, good = tmp_path / "missing.ndjson", GOLDENS[0]
    status, out, err = RUN("validate", b"", "-j", jobs, "--format", "github", missing, good)
    assert status == 2 and err.count(b"cannot read") == 1
    assert out.splitlines()[0] == (f"::error file={missing},title=ndagent validate%3A read"
                                   "::cannot read: No such file or directory").encode()
    status, out, _ = RUN("validate", b"", "-j", jobs, "--format", "junit", missing, good)
    check_junit(out)
    suite = ElementTree.fromstring(out).find("testsuite")
    assert (suite.get("name"), suite.get("failures")) == (str(missing), "1")
    assert suite.find("testcase/failure").get("message").startswith("cannot read: ")


def test_new_goldens_exist_for_every_case():
    for path in GOLDENS:
        for name in ("validate-github", "validate-junit", "stats-junit", "stats-markdown",
                     "otel", "atif"):
            assert (path.parent / f"{name}.status").exists() or not Path(
                path.parent / "validate.status").exists()


def test_a_one_line_field_is_cut_in_a_table_cell_and_a_case_s_name():
    model = "m" * 100_000
    assert table_code(model) == f"`{'m' * FIELD_LIMIT}...`"
    assert junit.case_name(1, 1, "claude", model).endswith(f" {'m' * FIELD_LIMIT}...")


@pytest.mark.parametrize("argv", [("otel", "--content"), ("atif",)])
def test_arguments_nested_as_deep_as_the_decoder_reads_are_written(argv):
    """A call's arguments 1 000 levels deep (the decoder reads 1 024): below 64 levels
    an object is said to be left out, since a walk that deep passed Python's recursion
    limit (a traceback at 500)."""
    deep = b'"x"'
    for _ in range(1_000):
        deep = b'{"k":' + deep + b"}"
    stream = (b'{"type":"system","subtype":"init","session_id":"s","tools":[],"model":"m"}\n'
              b'{"type":"assistant","message":{"id":"m0","role":"assistant","content":[{'
              b'"type":"tool_use","id":"c1","name":"Bash","input":{"command":"ls","deep":'
              + deep + b'}}]},"parent_tool_use_id":null,"session_id":"s"}\n'
              b'{"type":"result","subtype":"success","is_error":false,"duration_ms":1,'
              b'"num_turns":1,"result":"ok","session_id":"s"}\n')
    status, out, err = RUN(*argv[:1], stream, *argv[1:])
    assert status == 0, err
    assert b"nested deeper than 64 levels: left out" in out


def test_junit_keeps_the_first_errors_outside_a_run_and_counts_the_rest():
    """Of the errors outside any run (lines that are no JSON after it), the first
    TEXT_LINES are kept for the stream's case and the rest counted (all were kept: 200 000
    lines took 114 MB)."""
    stream = (b'{"type":"system","subtype":"init","session_id":"s","tools":[],"model":"m"}\n'
              b'{"type":"result","subtype":"success","is_error":false,"duration_ms":1,'
              b'"num_turns":1,"result":"ok","session_id":"s"}\n' + b"noise\n" * 5_000)
    _, out, _ = RUN("validate", stream, "--format", "junit")
    assert f"… {5_000 - junit.TEXT_LINES} more".encode() in out


def test_the_calls_an_otel_run_leaves_out_leave_no_times_behind(monkeypatch):
    """Past MAX_CALLS calls in a run the rest are left out, said once, and so are their
    times (each call's lines were timed all the same: 800 000 calls kept 800 000 times,
    260 MB)."""
    from ndagent import recorder, timeline

    monkeypatch.setattr(recorder, "MAX_CALLS", 5)
    timed = []
    add = timeline.Timeline.add
    monkeypatch.setattr(timeline.Timeline, "add",
                        lambda self, line, time_ms: (timed.append(line), add(self, line, time_ms)))
    lines = [b'{"type":"system","subtype":"init","session_id":"s","tools":[],"model":"m"}']
    lines += [b'{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{'
              b'"type":"tool_use","id":"c%d","name":"Bash","input":{"command":"ls"}}]},'
              b'"parent_tool_use_id":null,"session_id":"s","timestamp":'
              b'"2026-01-01T00:00:00.000Z"}' % (index, index) for index in range(50)]
    status, out, err = RUN("otel", b"\n".join(lines) + b"\n")
    assert err.count(b"more than 5 tool calls in one run") == 1, err
    assert len(timed) < 20


@settings(max_examples=examples(1000), deadline=None)
@given(st.lists(st.text(max_size=30), max_size=30), st.integers(0, 120))
def test_property_system_out_keeps_what_cut_keeps(pieces, limit):
    """A suite's <system-out> kept a piece at a time (its head, its tail and its length)
    is what cutting the whole text gives: stats kept every run's answer until the end of
    its FILE (8 000 runs of 10 KB answers took 187 MB)."""
    kept = junit.SystemOut(limit)
    for piece in pieces:
        kept.add(piece)
    assert kept.text() == cut("".join(pieces), limit)
