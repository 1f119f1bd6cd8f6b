"""Every example in the documents is a test: the commands of README.md, docs/*.md, each
command's --help and each man page are extracted, run on the project's fixtures, and
their output compared where the document shows one.  The conventions (CONTRIBUTING.md,
"Examples"):

- Markdown: a ```sh block whose lines have a ``$ `` prompt is examples: each ``$ `` line
  is a command (a line ending in ``\\`` or ``|`` goes on in the next), and the lines
  after it, up to the next ``$ ``, are what it prints (standard output and error, as a
  terminal shows them; a line ``...`` stands for any lines).  A command that shows no
  output must exit 0.  A ```sh block with no prompt is instructions (installing, a
  shell's start-up file), not run, and may use no verb of ndagent.  A ```make block is
  a Makefile: ``make`` makes its first target.  A ```python block is run by Python.  A
  ```yaml block is the steps of a GitHub Actions job, run as the runner would: each
  ``run:`` by ``bash -e``, in order, a step after a failed one only under ``if:
  always()``, with ``$GITHUB_STEP_SUMMARY`` a file; ``actions/upload-artifact`` checks
  that its ``path`` names files.  Every step must succeed.
- --help and man pages: each line of the examples is a command (``#`` lines are
  captions, a line ending in ``\\`` or ``|`` goes on), or a Makefile rule (``TARGET:``
  and its tab-indented recipe), which ``make`` makes; each must exit 0.

They run in a folder of their own: ``tests`` is the project's, ``logs/`` holds
tests/fixtures/logs/ (a stream of each agent), ``run.ndjson`` is
tests/fixtures/sample.ndjson, ``prompt.txt`` a prompt.  An agent's command (the first
word of a format's invocation: ``cursor-agent``, ``claude``, ...) is a stand-in that
prints that agent's stream of logs/.  A command that needs a program this machine does
not have (jq, GNU parallel) is skipped."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from ndagent import cli, formats

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
# Words of a command line that are no program to look for.
SHELL_WORDS = {"cd", "echo", "eval", "exit", "export", "for", "do", "done", "if", "then",
               "fi", "read", "set", "source", "test", "true", "false", "while", "printf",
               "time", "wait", "xargs"}
CONTINUES = ("\\", "|", "&&", "||")


@dataclass(frozen=True)
class Example:
    kind: str  # "sh", "make", "python" or "yaml"
    code: str
    output: object = None  # the text the document shows it prints, or None


def _commands(lines):
    """(command, output lines) of a block of prompted lines."""
    found = []
    for line in lines:
        if line.startswith("$ "):
            found.append([line[2:], []])
        elif not found:
            raise ValueError(f"a line before the first '$ ' command: {line!r}")
        elif found[-1][0].rstrip().endswith(CONTINUES) and not found[-1][1]:
            found[-1][0] += "\n" + line
        else:
            found[-1][1].append(line)
    return found


def markdown_examples(path):
    """{where: [Example, ...]} of a Markdown document, a source per block."""
    text = path.read_text(encoding="utf-8")
    found = {}
    for block in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S):
        kind, body = block[1], block[2]
        where = f"{path.name}:{text.count(chr(10), 0, block.start()) + 1}"
        lines = body.rstrip("\n").split("\n")
        if kind == "sh" and any(line.startswith("$ ") for line in lines):
            found[where] = [Example("sh", command, "\n".join(output).strip("\n") or None)
                            for command, output in _commands(lines)]
        elif kind == "sh":
            verbs = [line for line in lines if VERB_USE.search(line)]
            assert not verbs, f"{where}: a verb in a block with no '$ ' prompt: {verbs[0]!r}"
        elif kind in ("make", "python", "yaml"):
            found[where] = [Example(kind, body)]
    return found


VERB_USE = re.compile(rf"\bndagent[ -]({'|'.join(cli.VERBS)})\b")
RULE = re.compile(r"^[\w.%/-]+:( |$)")


def text_examples(text):
    """[Example, ...] of the examples of a --help or a man page."""
    lines = textwrap.dedent(text).strip("\n").split("\n")
    found, index = [], 0
    while index < len(lines):
        line, index = lines[index], index + 1
        if not line.strip() or line.startswith("#"):
            continue
        code = [line]
        if RULE.match(line):
            while index < len(lines) and lines[index].startswith("\t"):
                code.append(lines[index])
                index += 1
            found.append(Example("make", "\n".join(code) + "\n"))
            continue
        while code[-1].rstrip().endswith(CONTINUES) and index < len(lines):
            code.append(lines[index])
            index += 1
        found.append(Example("sh", "\n".join(code)))
    return found


def parsers():
    """(name, parser) of ndagent and of each verb."""
    from importlib import import_module

    yield "ndagent", cli.build_parser()
    for verb in cli.VERBS:
        yield f"ndagent-{verb}", import_module(f"ndagent.cmd_{verb}").build_parser()


def help_examples():
    """{"PROG --help": [Example, ...]}."""
    found = {}
    for name, parser in parsers():
        section = re.search(r"^examples:\n(.*?)\n\n", parser.format_help(), re.M | re.S)
        assert section, f"{name} --help has no examples"
        found[f"{name} --help"] = text_examples(section[1])
    return found


def unroff(text):
    return re.sub(r"\\(.)", lambda m: {"e": "\\", "-": "-", "&": ""}.get(m[1], m[0]), text)


def man_examples():
    """{"man/PAGE": [Example, ...]}."""
    found = {}
    for page in sorted((ROOT / "man").glob("*.1")):
        section = page.read_text(encoding="utf-8").split(".SH EXAMPLES\n", 1)[1].split(".SH")[0]
        body = re.search(r"^\.nf\n(.*?)^\.fi$", section, re.M | re.S)[1]
        found[f"man/{page.name}"] = text_examples(unroff(body))
    return found


def all_sources():
    """{where: [Example, ...]}: each block of the documents, each --help.  The man pages'
    are the same as --help's (test_the_man_pages_hold_the_examples_of_help), run once."""
    found = {}
    for path in DOCUMENTS:
        found.update(markdown_examples(path))
    found.update(help_examples())
    return found


SOURCES = all_sources()


def agent_programs():
    """{program: the stream its stand-in prints}: each agent's stream format, its log
    (a session format's invocation is where its files are, no program)."""
    return {each.invocation.split()[0]: TESTS / "fixtures" / "logs" / f"{each.name}.ndjson"
            for each in formats.all_formats() if each.form == "stream"}


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "tests").symlink_to(TESTS)
    (tmp_path / "logs").symlink_to(TESTS / "fixtures" / "logs")
    shutil.copy(TESTS / "fixtures" / "sample.ndjson", tmp_path / "run.ndjson")
    (tmp_path / "prompt.txt").write_text("fix the failing test\n")
    stand_ins = tmp_path / ".bin"
    stand_ins.mkdir()
    for program, stream in agent_programs().items():
        script = stand_ins / program
        script.write_text(f"#!/bin/sh\nexec cat '{stream}'\n")
        script.chmod(0o755)
    path = os.pathsep.join([str(stand_ins), str(BIN), "/usr/local/bin", "/usr/bin", "/bin"])
    env = {"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8", "COLUMNS": "80",
           "TERM": "dumb", "PYTHONPATH": str(ROOT)}
    return tmp_path, env


def missing_programs(example, path):
    """The programs an example runs that are not installed."""
    code = example.code
    if example.kind == "python":
        return []
    if example.kind == "yaml":
        code = "\n".join(step["run"] for step in workflow_steps(code) if "run" in step)
    if example.kind == "make":  # the recipes
        code = "\n".join(line for line in code.split("\n") if line.startswith("\t"))
    code = re.sub(r"'[^']*'", "''", code)  # a quoted jq program is no command
    # An assignment before a command (SOURCE_DATE_EPOCH=1 ndagent ...) is no command.
    code = re.sub(r"(^|[|;&(]\s*)[A-Za-z_]\w*=\S*\s+", r"\1", code, flags=re.M)
    words = re.findall(r"(?:^|[|;&(`!]|\$\(|\bdo\b|\bthen\b)\s*([A-Za-z][\w.+-]*)", code, re.M)
    return sorted({word for word in words if word not in SHELL_WORDS
                   and shutil.which(word, path=path) is None})


def matches(shown, printed):
    """Whether ``printed`` is what the document shows, a line '...' standing for any."""
    pattern = "".join(r"(?:.*\n)*?" if line == "..." else re.escape(line) + "\n"
                      for line in shown.split("\n"))
    return re.fullmatch(pattern, printed.strip("\n") + "\n") is not None


def workflow_steps(code):
    """The steps of a ```yaml block: a list of GitHub Actions steps."""
    yaml = pytest.importorskip("yaml")
    steps = yaml.safe_load(code)
    assert isinstance(steps, list) and all(isinstance(step, dict) for step in steps), code
    return steps


# What a step's ``if:`` may say here: nothing (run while every step before succeeded)
# or always().
STEP_CONDITIONS = (None, "always()")


def run_workflow(code, folder, env):
    """Run a job's steps as the runner does; its status is 1 when a step failed."""
    summary = folder / "step-summary.md"
    summary.touch()
    env = {**env, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"}
    printed, failed = [], False
    for step in workflow_steps(code):
        assert step.get("if") in STEP_CONDITIONS, step
        if failed and step.get("if") != "always()":
            continue
        if "run" in step:
            done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=folder, env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=60)
            printed.append(done.stdout)
            failed = failed or done.returncode != 0
        else:
            assert step["uses"].startswith("actions/upload-artifact@"), step
            paths = step["with"]["path"].split("\n")
            missing = [path for path in paths if path and not list(folder.glob(path))]
            if missing:
                printed.append(f"upload-artifact: no files: {missing}\n")
                failed = True
    return subprocess.CompletedProcess(code, int(failed), "".join(printed))


def run(example, folder, env):
    if example.kind == "yaml":
        return run_workflow(example.code, folder, env)
    if example.kind == "python":
        argv = [sys.executable, "-c", example.code]
    elif example.kind == "make":
        (folder / "Makefile").write_text(example.code)
        argv = ["make", "-s"]
    else:
        argv = ["bash", "-o", "pipefail", "-c", example.code]
    return subprocess.run(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=60)


def check(example, folder, env):
    """Run an example; the message of what is wrong with it, or None."""
    done = run(example, folder, env)
    if example.output is not None:
        if not matches(example.output, done.stdout):
            return f"shown:\n{example.output}\nprinted:\n{done.stdout}"
    # 141: the reader of its output went away (| head), as the documents say.
    elif done.returncode not in (0, 141):
        return f"status {done.returncode}:\n{done.stdout}"
    return None


@pytest.mark.skipif(not (BIN / "ndagent").exists(), reason="ndagent is not installed here")
@pytest.mark.parametrize("where", list(SOURCES))
def test_examples(where, workspace):
    """The examples of one block or one --help, in order, in one folder (an example
    may use what one before it made)."""
    folder, env = workspace
    skipped, failed = [], []
    for example in SOURCES[where]:
        missing = missing_programs(example, env["PATH"])
        if missing:
            skipped.append(f"{example.code.split(chr(10))[0]}: needs {', '.join(missing)}")
            continue
        wrong = check(example, folder, env)
        if wrong:
            failed.append(f"$ {example.code}\n{wrong}")
    assert not failed, f"{where}: " + "\n\n".join(failed)
    if skipped:
        pytest.skip("; ".join(skipped))


def test_every_document_and_help_has_examples():
    names = {where.split(":")[0].split(" ")[0] for where in SOURCES}
    assert {"README.md", "ndagent", *(f"ndagent-{verb}" for verb in cli.VERBS)} <= names


def test_the_man_pages_hold_the_examples_of_help():
    """The pages are made from the parsers: their examples, read back from roff, are
    those of --help (so a page that garbles one fails here)."""
    pages = man_examples()
    assert {where.replace(" --help", "") for where in help_examples()} == {
        where[4:-2] for where in pages}
    for where, examples in help_examples().items():
        assert pages[f"man/{where.replace(' --help', '')}.1"] == examples, where


def test_a_broken_example_fails(tmp_path, workspace):
    """The extraction and the comparison catch a command that fails and an output that
    differs: what makes the examples worth testing."""
    readme = tmp_path / "README.md"
    readme.write_text("```sh\n$ ndagent result run.ndjson\nnot the answer\n"
                      "$ ndagent json --no-such-option run.ndjson\n```\n")
    ((where, (shown, failing)),) = markdown_examples(readme).items()
    folder, env = workspace
    assert "printed:\nI'll run the test suite" in check(shown, folder, env)
    assert check(failing, folder, env).startswith("status 2:")
    answer = ("...\nFixed: `add` in calc.py returned `a - b`; it now returns `a + b`, "
              "and both tests pass.")
    assert check(Example("sh", "ndagent result run.ndjson", answer), folder, env) is None


def anchors(path):
    """The anchors GitHub makes of a Markdown file's headings."""
    headings = re.findall(r"^#+ (.*)$", path.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("path", [*DOCUMENTS, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md",
                                  *sorted(TESTS.glob("*/README.md"))],
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_documents_refer_only_to_what_a_clone_has(path):
    """Every link to a file leads to one in the clone, and to a heading it has; no
    document names a folder outside the clone."""
    text = path.read_text(encoding="utf-8")
    assert "../shared" not in text
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"\w+:", target):
            continue
        name, _, anchor = target.partition("#")
        linked = (path.parent / name).resolve() if name else path
        assert linked.exists() and ROOT in linked.parents, f"{path.name}: {target}"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{path.name}: {target}"


def readme_workflow():
    (code,) = [example.code for where, examples in SOURCES.items()
               if where.startswith("README.md:") for example in examples
               if example.kind == "yaml"]
    return code


@pytest.mark.skipif(not (BIN / "ndagent").exists(), reason="ndagent is not installed here")
@pytest.mark.parametrize("stream, failed", [("fixtures/logs/claude.ndjson", False),
                                            ("golden/claude/failed-max-turns/input.ndjson", True)])
def test_the_readme_ci_recipe_reports_the_run(workspace, stream, failed):
    """The README's GitHub Actions steps, with the agent's run ok or failed: the run step
    fails with the run; either way the report steps annotate (workflow commands only),
    write the figures and the transcript to the job summary and keep the stream and the
    HTML page."""
    folder, env = workspace
    (folder / ".bin" / "claude").write_text(f"#!/bin/sh\nexec cat '{TESTS / stream}'\n")
    done = run_workflow(readme_workflow(), folder, env)
    assert done.returncode == int(failed), done.stdout
    assert (folder / "run.ndjson").read_bytes() == (TESTS / stream).read_bytes()
    commands = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert any(line.startswith("::error ") for line in commands) == failed
    summary = (folder / "step-summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### ndagent stats\n")
    assert ("| 1 | 0 | 1 | 0 | 0 |" if failed else "| 1 | 1 | 0 | 0 | 0 |") in summary
    assert "\n# Agent transcript\n" in summary
    assert "<html" in (folder / "run.html").read_text(encoding="utf-8").lower()
