"""What a new user tries first, from the README and --help alone, does what it says
(issue 26): a COMMAND after run's options without '--', --color WHEN, a directory as
input, file names with several FILEs, one data format whatever standard output is, the
normalised target in every tools format, one rule for the noise agents print."""

import os
import sys
from pathlib import Path

import orjson
import pytest
from conftest import InProcess, on_a_terminal, run

from ndagent import cmd_json, cmd_result, cmd_run, cmd_text, cmd_tools, options
from ndagent.formats import all_formats

TESTS = Path(__file__).parent
GOLDEN = TESTS / "golden"
AGENT = TESTS / "fake_agents" / "agent.py"
CLAUDE = GOLDEN / "claude" / "success-tools" / "input.ndjson"


# run: the first word that is no option is COMMAND (as timeout, nice and env read theirs).

def run_parsers():
    return (cmd_run.build_parser(), *(module.build_parser() for module in
                                      (cmd_json, cmd_result, cmd_text, cmd_tools)))


@pytest.mark.parametrize(("argv", "before"), [
    (["agent", "-p", "--show", "raw"], []),
    (["--show", "text", "-v", "-k", "shell", "agent", "-p"], ["--show", "text", "-v", "-k",
                                                               "shell"]),
    (["--show", "tools", "-kshell", "--format", "tsv", "agent"], ["--show", "tools",
                                                                  "-kshell", "--format",
                                                                  "tsv"]),
    (["--show=text", "-vk", "shell", "agent"], ["--show=text", "-vk", "shell"]),
    (["--save", "run.ndjson", "--grace=1", "agent", "--save", "x"], ["--save", "run.ndjson",
                                                                     "--grace=1"]),
    (["--show", "text", "--color", "never", "agent"], ["--show", "text", "--color", "never"]),
    (["--show", "text", "--color", "agent"], ["--show", "text", "--color"]),
    (["--idle", "10m", "--", "-agent", "--", "x"], ["--idle", "10m"]),
    (["--form", "tsv", "agent"], ["--form", "tsv"]),  # an abbreviation of the verb's
])
def test_run_s_command_begins_at_the_first_word_that_is_no_option(argv, before):
    found = options.split_command(argv, run_parsers())
    assert found == (before, argv[len(before) + (argv[len(before):][:1] == ["--"]):])


def test_an_option_string_takes_a_value_in_every_verb_run_shows_or_in_none():
    """split_command asks every shown verb's parser at once: an option that took a value
    in one verb and none in another would make COMMAND begin elsewhere."""
    takes = {}
    for parser in run_parsers():
        for name, action in parser._option_string_actions.items():
            takes.setdefault(name, set()).add(action.nargs != 0)
    assert {name: found for name, found in takes.items() if len(found) > 1} == {}


def test_run_without_a_double_dash_runs_the_command_with_its_own_options(tmp_path):
    agent = [sys.executable, AGENT, CLAUDE]
    plain = run("run", "--show", "text", "-v", "--grace", "0.2", *agent, "--then", "exit")
    dashed = run("run", "--show", "text", "-v", "--grace", "0.2", "--", *agent)
    assert plain.returncode == dashed.returncode == 0, plain.stderr
    assert plain.stdout == dashed.stdout == run("text", "-v", CLAUDE).stdout != b""
    # Words after COMMAND that are run's options are COMMAND's.
    shell = run("run", "sh", "-c", 'cat "$0"', CLAUDE, "--show", "raw")
    assert shell.returncode == 0 and shell.stdout == run("result", CLAUDE).stdout


# --color WHEN and --color=WHEN; a bare --color is always.

@pytest.mark.parametrize(("argv", "color", "files"), [
    (["--color", "never", "f"], "never", ["f"]),
    (["--color=never", "f"], "never", ["f"]),
    (["--col", "auto", "f"], "auto", ["f"]),
    (["--color", "f"], "always", ["f"]),
    (["f", "--color"], "always", ["f"]),
    (["--color", "--", "never"], "always", ["never"]),
])
def test_color_takes_its_value_attached_or_as_the_next_word(argv, color, files):
    args = cmd_text.build_parser().parse_args(argv)
    assert (args.color, args.files) == (color, files)


# One data format per verb, whatever standard output is (colour and layout may differ).

SAMPLE = TESTS / "fixtures" / "sample.ndjson"


@pytest.mark.parametrize("verb", ["json", "result", "text", "tools", "validate", "stats"])
def test_the_default_output_is_the_same_on_a_terminal_and_through_a_pipe(verb):
    """No colour (NO_COLOR), no text a terminal shows otherwise (the fixture holds no
    control character): the bytes are the same."""
    environment = {**os.environ, "NO_COLOR": "1"}
    piped = run(verb, SAMPLE, env=environment)
    assert piped.stdout != b""
    assert on_a_terminal(verb, SAMPLE, env=environment, status=piped.returncode) == piped.stdout


# A directory as input: the stream files below it, in name order, as rg lists them.

def a_folder_of_logs(root):
    """logs/ with streams at two depths, one compressed, and files that are none; the
    streams in the order they are read."""
    import gzip

    logs = root / "logs"
    (logs / "b").mkdir(parents=True)
    (logs / "a.d").mkdir()
    streams = [(logs / "a.d" / "codex.jsonl.gz", GOLDEN / "codex" / "command-success"),
               (logs / "a.ndjson", GOLDEN / "cursor" / "sample"),
               (logs / "b" / "claude.json", GOLDEN / "claude" / "success-tools")]
    for path, case in streams:
        data = (case / "input.ndjson").read_bytes()
        path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    (logs / "notes.txt").write_text("not a stream\n")
    (logs / "b" / "run.ndjson.orig").write_text("not a stream either\n")
    return logs, [path for path, _ in streams]


def test_a_directory_is_read_as_its_stream_files_in_name_order(tmp_path):
    logs, streams = a_folder_of_logs(tmp_path)
    for verb in ("text", "tools", "validate"):
        whole = run(verb, logs)
        assert whole.returncode == 0, whole.stderr
        assert whole.stdout == run(verb, *streams).stdout != b""
    stats = run("stats", "--format", "ndjson", logs)
    assert stats.returncode == 0 and orjson.loads(stats.stdout)["runs"]["ok"] == 3


def test_a_directory_s_fifos_and_devices_are_passed_over_not_read_for_ever(tmp_path):
    logs, streams = a_folder_of_logs(tmp_path)
    os.mkfifo(logs / "b" / "waiting.ndjson")  # no writer: reading it would wait for ever
    os.symlink(os.devnull, logs / "null.ndjson")
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", logs / "zero.ndjson")  # never ends
    whole = run("text", logs)
    assert (whole.returncode, whole.stderr) == (0, b"")
    assert whole.stdout == run("text", *streams).stdout != b""


def test_a_directory_without_streams_is_a_warning_and_standard_input_is_not_read(tmp_path):
    (tmp_path / "empty").mkdir()
    done = run("json", tmp_path / "empty", input=(SAMPLE).read_bytes())
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr == (f"ndagent-json: {tmp_path}/empty: warning: no stream file in this "
                           "directory (*.ndjson, *.jsonl, *.json, maybe ending .gz, .bz2 or "
                           ".xz)\n").encode()


def test_figures_are_not_printed_without_an_input_that_could_not_be_read(tmp_path):
    logs, _ = a_folder_of_logs(tmp_path)
    (logs / "gone.ndjson").symlink_to(tmp_path / "nowhere")
    done = run("stats", logs)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.splitlines()[-1] == (b"ndagent-stats: error: no figures printed: an "
                                            b"input was not read (--keep-going prints them "
                                            b"without it)")
    going = run("stats", "--keep-going", "--format", "ndjson", logs)
    assert going.returncode == 2 and orjson.loads(going.stdout)["runs"]["ok"] == 3
    assert run("stats", "--partial", logs).stdout == b""


# -H/--with-filename, --no-filename: text's lines say the FILE they came from, as grep's.

def test_text_names_the_file_of_each_line_with_several_files(tmp_path):
    logs, streams = a_folder_of_logs(tmp_path)
    cursor, claude = streams[1], streams[2]
    alone = {path: run("text", "-v", path).stdout.splitlines() for path in (cursor, claude)}
    both = run("text", "-v", cursor, claude).stdout.splitlines()
    assert both == [f"{path}:".encode() + line for path in (cursor, claude)
                    for line in alone[path]]
    assert run("text", "-v", "--no-filename", cursor, claude).stdout.splitlines() == [
        *alone[cursor], *alone[claude]]
    assert run("text", "-v", "-H", cursor).stdout.splitlines() == [
        f"{cursor}:".encode() + line for line in alone[cursor]]
    assert run("text", "-H", "-", input=cursor.read_bytes()).stdout.startswith(b"<stdin>:")
    # A directory names its files, even with one file in it; so does each line of a final
    # message.
    assert run("text", "-v", claude.parent).stdout.splitlines() == [
        f"{claude}:".encode() + line for line in alone[claude]]
    # The sample's final message, given a second line.
    cursor.write_bytes(cursor.read_bytes().replace(b"; it now returns", b".\\nIt now returns"))
    final = run("text", "--final", cursor, claude).stdout.decode().splitlines()
    assert len(final) > 2 and all(line.startswith((f"{cursor}:", f"{claude}:"))
                                  for line in final)


# tools: one format holds everything, the normalised target in NDJSON, where each call
# began in TSV.

CASES = sorted(path.parent for path in GOLDEN.glob("*/*/input.ndjson")
               if path.parts[-3] in ("cursor", "claude", "codex", "gemini"))


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.parent.name}/{case.name}")
def test_tools_ndjson_and_tsv_hold_the_same_target_source_and_line(case, call):
    path = case / "input.ndjson"
    found = [orjson.loads(line) for line in call(cmd_tools.main, "-q", path)[1].splitlines()]
    rows = call(cmd_tools.main, "-q", "--format", "tsv", "--header", path)[1].decode()
    header, *rows = [row.split("\t") for row in rows.splitlines()]
    assert header[-2:] == ["source", "line"]
    assert [(row[3], row[-2], row[-1]) for row in rows] == [
        (record["target"] or "", record["source"], str(record["line"])) for record in found]


def test_an_edit_s_target_is_its_path_for_every_agent():
    """The issue's recipe: '-k edit,write | jq -r .target' gives each path (.args.path was
    null for Claude's file_path and Codex's changes[].path)."""
    for case in ("claude/success-tools", "codex/file-change-add", "cursor/shapes"):
        path = GOLDEN / case / "input.ndjson"
        found = [orjson.loads(line) for line in
                 run("tools", "-q", "-k", "edit,write", path).stdout.splitlines()]
        assert found and all(isinstance(record["target"], str) and record["target"]
                             for record in found), case


# One rule for the lines that are not JSON, in every verb and for every agent: the noise
# its format declares is a warning of its own check; any other such line is an error
# in validate.

SUCCESS = {"cursor": "sample", "claude": "success-tools", "codex": "command-success",
           "gemini": "tool-success", "qwen": "success-tools", "amp": "success-tools"}
NOISE = [(module.name, start) for module in all_formats() for start in module.noise_lines]
IN_PROCESS = InProcess()


def with_line(tmp_path, agent, line):
    path = tmp_path / "run.ndjson"
    path.write_bytes(line + b"\n" + (GOLDEN / agent / SUCCESS[agent] / "input.ndjson")
                     .read_bytes())
    return path


def test_the_agents_with_known_noise_declare_it():
    # Qwen Code and Amp are Node programs too: Node's warnings, as Claude's.
    assert {agent for agent, _ in NOISE} == {"cursor", "claude", "gemini", "qwen", "amp"}


@pytest.mark.parametrize(("agent", "start"), NOISE)
def test_known_noise_is_a_warning_of_its_own_check_in_every_verb(tmp_path, agent, start):
    path = with_line(tmp_path, agent, start + b" and more")
    status, out, _ = IN_PROCESS("validate", b"", path)
    assert status == 0, out
    assert out.startswith(f"{path}:1: warning: noise the agent writes besides its stream: "
                          .encode()) and b" [noise]\n" in out
    for verb in ("json", "result", "text", "tools", "stats"):
        status, _, err = IN_PROCESS(verb, b"", path)
        assert status == 0, (verb, err)
        assert err.startswith(f"ndagent-{verb}: {path}:1: warning: skipped: noise ".encode())
        assert err.endswith(b" [noise]\n")


@pytest.mark.parametrize("agent", SUCCESS)
def test_a_line_that_is_no_known_noise_is_an_error_in_validate(tmp_path, agent):
    path = with_line(tmp_path, agent, b"Segmentation fault")
    checked = run("validate", path)
    assert checked.returncode == 1
    assert checked.stdout.startswith(f"{path}:1: error: not JSON: ".encode())
    assert b" [json]\n" in checked.stdout


# Messages: every one of run's own is labelled, so that grep ': error:' finds them.

CURSOR = GOLDEN / "cursor" / "vendor-example" / "input.ndjson"


@pytest.mark.parametrize(("argv", "label"), [
    (["--idle", "0.3", sys.executable, AGENT, CURSOR, "--lines", "3", "--then", "hang"],
     "error"),
    (["--timeout", "0.3", sys.executable, AGENT, CURSOR, "--lines", "3", "--then", "hang"],
     "error"),
    (["--grace", "0.2", sys.executable, AGENT, CURSOR, "--then", "hang"], "warning"),
    (["--idle", "0.2", "--grace", "1", sys.executable, AGENT, CURSOR, "--then", "hang"],
     "warning"),
    ([sys.executable, AGENT, CURSOR, "--status", "3"], "error"),
    (["/nonexistent/agent"], "error"),
    (["--save", "/nonexistent/run.ndjson", "true"], "error"),
])
def test_run_s_own_messages_are_labelled(argv, label):
    done = run("run", *argv)
    said = done.stderr.decode().splitlines()
    assert said and all(line.startswith("ndagent-run: ") for line in said)
    assert any(f": {label}: " in line for line in said), said
    assert all(": error: " in line or ": warning: " in line for line in said), said


def test_messages_say_detected_and_case_insensitive():
    for verb in ("json", "result", "text", "tools", "validate", "stats", "run"):
        text = run(verb, "--help").stdout.decode()
        assert " told" not in text and "in any case" not in text, verb
    assert "case-insensitive" in run("tools", "--help").stdout.decode()


# result --live: the way to watch agents whose answer comes at the run's end, never a
# default (what it prints is more than the answer).

def test_result_prints_the_answer_on_a_terminal_too_and_live_the_interim_texts():
    claude = GOLDEN / "claude" / "several-runs" / "input.ndjson"
    piped = run("result", claude).stdout
    assert on_a_terminal("result", claude) == piped
    live = run("result", "--live", claude).stdout
    assert len(live) > len(piped) and piped.strip().splitlines()[-1] in live
    text = run("result", "--help").stdout.decode()
    assert "ndagent result --live" in text and "known only at its end" in text


# make install without pipx: a virtual environment of its own, its commands and man pages
# linked (pip --user is refused where Python is externally managed: Debian 12, Ubuntu
# 23.04 on).  A fake python3 stands for the real one: the test needs no network.

FAKE_PYTHON = """#!/bin/sh
# python3 -m venv --clear DIR: DIR/bin/python, whose 'pip install' leaves what an install
# of ndagent leaves; anything else (pip --user) fails.
[ "$1 $2 $3" = "-m venv --clear" ] && [ -n "$FAKE_VENV_WORKS" ] || exit 1
mkdir -p "$4/bin"
printf '%s\\n' '#!/bin/sh' 'here=$(dirname "$0")' 'mkdir -p "$here/../share/man/man1"' \\
  'touch "$here/ndagent" "$here/ndagent-json" "$here/../share/man/man1/ndagent.1"' \\
  > "$4/bin/python"
chmod +x "$4/bin/python"
"""


def make_install(tmp_path, venv_works):
    import shutil
    import subprocess

    make = shutil.which("make")
    if make is None:
        pytest.skip("no make")
    tools = tmp_path / "tools"  # a PATH with no pipx, whatever this machine has
    tools.mkdir()
    for tool in ("mkdir", "ln", "dirname", "touch", "chmod"):
        (tools / tool).symlink_to(shutil.which(tool))
    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    environment = {"PATH": str(tools), "HOME": str(tmp_path)}
    if venv_works:
        environment["FAKE_VENV_WORKS"] = "1"
    return subprocess.run([make, "--no-print-directory", "install", f"PYTHON={python}",
                           f"PREFIX={tmp_path / 'prefix'}"], cwd=TESTS.parent,
                          env=environment, capture_output=True, timeout=60, text=True)


def test_make_install_without_pipx_links_the_commands_of_a_venv_of_its_own(tmp_path):
    done = make_install(tmp_path, venv_works=True)
    assert done.returncode == 0, done.stderr
    prefix = tmp_path / "prefix"
    venv = prefix / "share" / "ndagent" / "venv"
    assert (prefix / "bin" / "ndagent").resolve() == venv / "bin" / "ndagent"
    assert (prefix / "bin" / "ndagent-json").resolve() == venv / "bin" / "ndagent-json"
    assert (prefix / "share" / "man" / "man1" / "ndagent.1").resolve() == (
        venv / "share" / "man" / "man1" / "ndagent.1")


def test_make_install_that_cannot_says_in_one_line_what_to_do(tmp_path):
    done = make_install(tmp_path, venv_works=False)
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if line.startswith("make install:")]
    assert len(said) == 1 and "install pipx (apt install pipx) or" in said[0]
