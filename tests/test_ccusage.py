"""ndagent stats gives ccusage's token figures where the two are comparable
(docs/agents.md#session-files; SESSIONS.md part 9): the same files laid out as ccusage
finds them, ``ccusage AGENT daily`` against ``stats --by day --tz UTC``.  Skipped when
ccusage is not installed (``make ccusage`` installs the version the Makefile pins, into
.ccusage/).  Where ccusage's session report leaves out the subagents it knows only by
their copies in the parent's file, ndagent's figure (the messages counted once each,
copies included) is the one held, with ccusage's below it."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from ndagent.cmd_stats import main as stats_main

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
SESSIONS = ROOT.parent / "shared" / "corpus" / "sessions"
CCUSAGE = ROOT / ".ccusage" / "node_modules" / ".bin" / "ccusage"


def ccusage_program():
    if CCUSAGE.exists():
        return str(CCUSAGE)
    return shutil.which("ccusage")


pytestmark = pytest.mark.skipif(ccusage_program() is None,
                                reason="no ccusage (make ccusage installs it)")

FIGURES = {"input": "inputTokens", "output": "outputTokens", "cacheRead": "cacheReadTokens",
           "cacheWrite": "cacheCreationTokens"}


def lay_out(root, files):
    """Copy ``files`` ({path under root: source}) where ccusage looks for them."""
    for path, source in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, root / path)


def ccusage(agent, report, root):
    """ccusage's JSON report of ``agent`` over the folder ``root``, offline, in UTC,
    with a home of its own (the user's own files are not added)."""
    home = root / "home"
    home.mkdir(exist_ok=True)
    variable = {"claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME",
                "gemini": "GEMINI_DATA_DIR"}[agent]
    where = root / agent / ("tmp" if agent == "gemini" else "")
    env = {**os.environ, "HOME": str(home), variable: str(where)}
    done = subprocess.run([ccusage_program(), agent, report, "--json", "--offline", "-z", "UTC"],
                          env=env, capture_output=True, timeout=120, check=True)
    return json.loads(done.stdout)


def by_day(call, root, agent):
    """ndagent's figures per day of the files under ``root/agent``."""
    status, out, err = call(stats_main, "--by", "day", "--tz", "UTC", "--format", "ndjson",
                            root / agent)
    assert status == 0, err
    return {record["day"]: {name: record["tokens"][name] or 0 for name in FIGURES}
            for record in map(orjson.loads, out.splitlines())}


def ccusage_by_day(report):
    return {row["date"]: {name: row[field] for name, field in FIGURES.items()}
            for row in report["daily"]}


def test_claude_days_of_fixtures_with_a_subagent_and_its_copies(call, tmp_path):
    project = "claude/projects/-home-ana-shop"
    lay_out(tmp_path, {
        f"{project}/5f0c2a9e.jsonl": GOLDEN / "claude_session/rejected-interrupted/input.ndjson",
        f"{project}/7a1d3e5b.jsonl": GOLDEN / "claude_session/agent-progress/input.ndjson",
        f"{project}/7a1d3e5b/subagents/agent-a1b2c3d.jsonl":
            GOLDEN / "claude_session/subagent-file/input.ndjson",
        f"{project}/c0ffee00.jsonl": GOLDEN / "claude_session/compaction-open/input.ndjson"})
    assert by_day(call, tmp_path, "claude") == ccusage_by_day(
        ccusage("claude", "daily", tmp_path))


def test_codex_days_of_fixtures_with_repeated_token_counts(call, tmp_path):
    lay_out(tmp_path, {
        "codex/sessions/2026/01/02/rollout-2026-01-02T07-00-00-019c2a10.jsonl":
            GOLDEN / "codex_session/repeated-token-count/input.ndjson"})
    assert by_day(call, tmp_path, "codex") == {
        day: {**figures, "cacheWrite": 0} for day, figures in
        ccusage_by_day(ccusage("codex", "daily", tmp_path)).items()}


def test_gemini_days_of_fixtures_of_both_forms(call, tmp_path):
    lay_out(tmp_path, {
        "gemini/tmp/shop/chats/session-2026-01-16T11-00-3e9a7c21.json":
            GOLDEN / "gemini_session/whole-document/input.ndjson",
        "gemini/tmp/shop/chats/session-2026-04-20T10-00-3e9a7c21.jsonl":
            GOLDEN / "gemini_session/jsonl-set-rewind/input.ndjson"})
    assert by_day(call, tmp_path, "gemini") == ccusage_by_day(
        ccusage("gemini", "daily", tmp_path))


needs_sessions = pytest.mark.skipif(not SESSIONS.is_dir(),
                                    reason="../shared/corpus/sessions is not beside this clone")


@needs_sessions
def test_the_real_files_days(call, tmp_path):
    lay_out(tmp_path, {
        "claude/projects/-home-marco-projects-spotter/491e126e.jsonl":
            SESSIONS / "claude/spotter-2.1.38-task-agent-progress.jsonl",
        "codex/sessions/2026/05/11/rollout-2026-05-11T11-26-55-019e1625.jsonl":
            SESSIONS / "codex/codemie-0.125.0-tui-rollout-019e1625.jsonl",
        "gemini/tmp/907f2064/chats/session-2026-01-16T11-01-37b7abef.json":
            SESSIONS / "gemini/codemie-2026-01-session-37b7abef-file-ops.json"})
    for agent in ("claude", "codex", "gemini"):
        assert by_day(call, tmp_path, agent) == ccusage_by_day(
            ccusage(agent, "daily", tmp_path)), agent


@needs_sessions
def test_claude_session_report_leaves_out_copied_subagents(call, tmp_path):
    """ccusage's session report counts 1,576 input tokens: the subagent known only by
    its copies in agent_progress lines is left out; ndagent counts it (SESSIONS.md
    part 9.3)."""
    session = "491e126e-1e71-469c-ade2-fcc8af567c74"
    lay_out(tmp_path, {f"claude/projects/-home-marco-projects-spotter/{session}.jsonl":
                       SESSIONS / "claude/spotter-2.1.38-task-agent-progress.jsonl"})
    (theirs,) = ccusage("claude", "session", tmp_path)["sessions"]
    status, out, _ = call(stats_main, "--by", "session", "--format", "ndjson",
                          tmp_path / "claude")
    (ours,) = map(orjson.loads, out.splitlines())
    assert ours["tokens"]["input"] == 1600 >= theirs["inputTokens"] == 1576
    assert ours["session"] == theirs["sessionId"]
