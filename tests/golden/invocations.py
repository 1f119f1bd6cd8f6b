"""What the golden tests run, in one place for regenerate.py and tests/test_golden.py.

Each case is a folder ``tests/golden/AGENT/CASE/`` with an ``input.ndjson``.  Every
invocation below runs ``ndagent-VERB OPTIONS... input.ndjson`` with the case folder as
the working directory (so messages name ``input.ndjson:LINE``, wherever the clone is)
and an empty standard input; its standard output, standard error and exit status are
kept beside the input as ``NAME.stdout``, ``NAME.stderr`` and ``NAME.status``.
"""

from pathlib import Path

GOLDEN = Path(__file__).resolve().parent
INPUT = "input.ndjson"

# name: (verb, options...)
INVOCATIONS = {
    "json": ("json",),
    "result": ("result",),
    "result-from-result": ("result", "--from-result"),
    "text": ("text",),
    "text-v": ("text", "-v", "--color=never"),
    "text-final": ("text", "--final"),
    "tools": ("tools",),
    "tools-tsv": ("tools", "--format", "tsv", "--header"),
    "validate": ("validate",),
    "validate-json": ("validate", "--format", "ndjson"),
    "validate-strict": ("validate", "--strict"),
    # The CI and interchange outputs; a fixed time origin, for streams with no clock.
    "validate-github": ("validate", "--format", "github"),
    "validate-junit": ("validate", "--format", "junit", "--time-origin", "2026-06-01T10:00:00Z"),
    "stats-junit": ("stats", "--format", "junit", "--time-origin", "2026-06-01T10:00:00Z"),
    "stats-markdown": ("stats", "--format", "markdown"),
    "stats-markdown-run": ("stats", "--format", "markdown", "--by", "run"),
    "otel": ("otel", "--time-origin", "2026-06-01T10:00:00Z"),
    "atif": ("atif",),
    "markdown": ("markdown",),
    "html": ("html",),
}

# The files each invocation leaves, by suffix.
OUTPUTS = ("stdout", "stderr", "status")

# The agents whose goldens 'make golden' makes: those ndagent reads.  The inputs of the
# others wait in their folders; add an agent here when ndagent learns its format.
AGENTS = ("cursor", "claude", "codex", "gemini", "opencode", "antigravity", "copilot", "qwen",
          "amp", "claude_session", "codex_session", "gemini_session", "cursor_session")


def cases(names=()):
    """The case folders: those named (``AGENT/CASE``, or ``AGENT`` for all of its
    cases), else every case of every agent, sorted."""
    if not names:
        return sorted(path.parent for path in GOLDEN.glob(f"*/*/{INPUT}"))
    found = []
    for name in names:
        folder = GOLDEN / name
        if (folder / INPUT).is_file():
            found.append(folder)
        elif folder.is_dir() and sorted(folder.glob(f"*/{INPUT}")):
            found += sorted(path.parent for path in folder.glob(f"*/{INPUT}"))
        else:
            raise LookupError(f"no case {name!r} under {GOLDEN}")
    return found


def case_name(folder):
    """``AGENT/CASE`` of a case folder."""
    return folder.relative_to(GOLDEN).as_posix()


def argv(name):
    """The arguments after ``ndagent-VERB`` for the invocation ``name``."""
    return [*INVOCATIONS[name][1:], INPUT]


def outputs(stdout, stderr, status):
    """{suffix: bytes} as the golden files hold them."""
    return {"stdout": stdout, "stderr": stderr, "status": b"%d\n" % status}
