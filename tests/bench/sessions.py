"""The bench's session-archive row: a generated Claude Code archive (``projects/<project>/
<session>.jsonl`` and each session's ``subagents/``), read by ``ndagent stats --by day``
and by ``ccusage claude daily --offline``, the same files, in one run.

The archive copies the shapes of real transcripts (the real ones of
../shared/corpus/sessions/claude when they are beside the clone, else the fixtures of
tests/golden/claude_session), each copy with fresh ids (``message.id``, ``requestId``,
``uuid``, tool ids) and its own day, so that no message repeats across sessions while
a subagent's file and its copies in its parent keep sharing theirs."""

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "sessions" / "claude"
GOLDEN = ROOT / "tests" / "golden" / "claude_session"
CCUSAGE = ROOT / ".ccusage" / "node_modules" / ".bin" / "ccusage"
# The target: ccusage's time / ndagent's (SESSIONS.md part 9; the goal beyond is 1).
TARGET = 0.5

_IDS = re.compile(rb"(msg_|req_|toolu_|agent-a)([A-Za-z0-9]+)")
_UUID = re.compile(rb"[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
_DAY = re.compile(rb'"timestamp": ?"2026-[0-9]{2}-[0-9]{2}')


def templates():
    """[(main transcript, [its subagents' files])] to copy: bytes each."""
    if CORPUS.is_dir():
        return [(path.read_bytes(), []) for path in sorted(CORPUS.glob("*.jsonl"))]
    return [((GOLDEN / "agent-progress/input.ndjson").read_bytes(),
             [(GOLDEN / "subagent-file/input.ndjson").read_bytes()]),
            ((GOLDEN / "rejected-interrupted/input.ndjson").read_bytes(), []),
            ((GOLDEN / "compaction-open/input.ndjson").read_bytes(), [])]


def fresh(data, copy):
    """``data`` with every id made the copy's own and its days moved to the copy's."""
    tag = b"%06x" % copy
    data = _IDS.sub(lambda found: found[1] + found[2] + b"x" + tag, data)
    data = _UUID.sub(lambda found: b"%08x" % copy + found[1], data)
    day = b"2026-%02d-%02d" % (1 + copy // 28 % 12, 1 + copy % 28)
    return _DAY.sub(lambda found: found[0][:-10] + day, data)


def generate_archive(folder, megabytes):
    """Write an archive of about ``megabytes`` MB under ``folder/projects``; kept (a
    ``.done`` file says it is whole)."""
    done = folder / ".done"
    if done.exists():
        return
    print(f"generating a {megabytes:g} MB Claude session archive in {folder} ...",
          file=sys.stderr)
    shapes = templates()
    written, copy = 0, 0
    while written < megabytes * 1e6:
        main, subagents = shapes[copy % len(shapes)]
        project = folder / "projects" / f"-home-user-project-{copy % 40}"
        session = f"{copy:08x}-0000-4000-8000-{copy:012x}"
        project.mkdir(parents=True, exist_ok=True)
        data = fresh(main, copy)
        (project / f"{session}.jsonl").write_bytes(data)
        written += len(data)
        for number, subagent in enumerate(subagents):
            where = project / session / "subagents"
            where.mkdir(parents=True, exist_ok=True)
            data = fresh(subagent, copy)
            (where / f"agent-{number}.jsonl").write_bytes(data)
            written += len(data)
        copy += 1
    done.write_text(f"{copy} sessions\n")


def ccusage_program():
    import shutil

    return str(CCUSAGE) if CCUSAGE.exists() else shutil.which("ccusage")


def session_archive_bench(data, rounds, megabytes, ndagent, compare):
    """The row: ``ndagent stats --by day`` against ``ccusage claude daily``; the names
    of the targets missed.  ``ndagent(verb)`` is the checkout's command, ``compare``
    run.py's rounds."""
    program = ccusage_program()
    if program is None:
        print("\nThe session archive: no ccusage (make ccusage), row left out.")
        return []
    folder = data / f"claude-archive-{megabytes:g}mb"
    generate_archive(folder, megabytes)
    files = sum(1 for _ in folder.rglob("*.jsonl"))
    size = sum(path.stat().st_size for path in folder.rglob("*.jsonl")) / 1e6
    home = data / "empty-home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(folder)}
    ours = [*ndagent("stats"), "--by", "day", "--tz", "UTC", "--format", "ndjson",
            str(folder / "projects")]
    theirs = ["env", f"HOME={home}", f"CLAUDE_CONFIG_DIR={folder}", program, "claude",
              "daily", "--offline", "-z", "UTC", "--json"]
    _check_equal(ours, theirs[3:], env)
    our_s, their_s, ratio, rss = compare(ours, theirs, rounds)
    met = "yes" if ratio >= TARGET else "**no**"
    print(f"\nA Claude session archive ({files} files, {size:.0f} MB; tests/bench/sessions.py): "
          "`stats --by day` against `ccusage claude daily --offline` (ratio: ccusage's time / "
          "ndagent's):\n")
    print("| command | ndagent | ccusage | ratio | target | met | ndagent peak memory |")
    print("|---|---|---|---|---|---|---|")
    print(f"| `stats --by day` | {our_s:.2f} s, {size / our_s:.0f} MB/s | {their_s:.2f} s "
          f"| {ratio:.2f}x | {TARGET}x | {met} | {rss:.0f} MB |", flush=True)
    return [] if ratio >= TARGET else ["stats --by day (session archive)"]


def _check_equal(ours, theirs, env):
    """The two print the same token figures per day (else the bench times different
    work): a message on standard error when they do not."""
    import json

    mine = subprocess.run(ours, capture_output=True, env=env).stdout.splitlines()
    other = json.loads(subprocess.run(theirs, capture_output=True, env=env).stdout or b"{}")
    days = {row["date"]: row["inputTokens"] for row in other.get("daily", [])}
    found = {json.loads(line)["day"]: json.loads(line)["tokens"]["input"] for line in mine}
    if days != found:
        print(f"bench: ndagent's and ccusage's input tokens per day differ: {found} {days}",
              file=sys.stderr)


if __name__ == "__main__":  # generate only: python tests/bench/sessions.py DIR MB
    generate_archive(Path(sys.argv[1]), float(sys.argv[2]))
