"""The interface conventions every verb shares (issue 15): options spelt and meaning the
same everywhere, as GNU tools, jq and csvkit have them."""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import InProcess, command, fixture, on_a_terminal, read_terminal
from conftest import run as run_installed

ROOT = Path(__file__).resolve().parent.parent
_IN_PROCESS = InProcess()


def run(verb, *args, input=b""):
    """``ndagent-VERB ARGS`` on ``input``, in this process (the installed ``ndagent`` for
    VERB None): what it did, as a CompletedProcess."""
    if verb is None:
        return run_installed(None, *args, input=input)
    status, out, err = _IN_PROCESS(verb, input, *args)
    return subprocess.CompletedProcess([verb, *args], status, out, err)

SHAPES = fixture("shapes.ndjson")
VENDOR = fixture("vendor-example.ndjson")
CUT_OFF = b"".join(VENDOR.read_bytes().splitlines(keepends=True)[:5])


def environment(**changes):
    """The environment of the tests, without NO_COLOR and TERM, with ``changes``."""
    base = {name: value for name, value in os.environ.items()
            if name not in ("NO_COLOR", "TERM")}
    return {**base, **changes}


# --color


def test_a_bare_color_is_always_and_leaves_the_file_an_argument():
    """As GNU grep and ls: '--color FILE' colours FILE's lines (it took FILE for its
    value: 'invalid choice')."""
    for option in ("--color", "--col"):  # an abbreviation too, as argparse allows it
        done = run("text", option, SHAPES)
        assert done.returncode == 0, done.stderr
        assert b"\x1b[31m (failed)\x1b[0m" in done.stdout
    assert run("text", "--color=never", SHAPES).stdout == run("text", SHAPES).stdout
    # After '--', a word is a FILE whatever it looks like.
    assert run("text", "--", "--color").returncode == 2


def test_color_auto_follows_the_terminal_term_and_no_color(write):
    assert b"\x1b[31m" in on_a_terminal("text", SHAPES, env=environment(TERM="xterm"))
    assert b"\x1b" not in on_a_terminal("text", SHAPES, env=environment(TERM="dumb"))
    assert b"\x1b" not in on_a_terminal("text", SHAPES, env=environment(NO_COLOR="1"))
    assert b"\x1b[31m" in on_a_terminal("text", SHAPES, env=environment(NO_COLOR=""))
    assert b"\x1b[31m" in on_a_terminal("text", "--color", SHAPES,
                                        env=environment(TERM="dumb", NO_COLOR="1"))


def test_validate_colours_its_diagnostics_as_compilers_do(write):
    path = write(CUT_OFF)
    place = re.escape(str(path).encode()) + rb":\d+:"
    coloured = on_a_terminal("validate", path, env=environment(TERM="xterm"), status=1)
    assert re.search(rb"\x1b\[1m" + place + rb"\x1b\[0m \x1b\[1;31merror:\x1b\[0m run ended",
                     coloured)
    plain = on_a_terminal("validate", path, env=environment(TERM="dumb"), status=1)
    assert b"\x1b" not in plain and re.search(place + b" error: run ended", plain)
    assert b"\x1b" not in on_a_terminal("validate", path, env=environment(NO_COLOR="1"),
                                        status=1)
    warned = write(VENDOR.read_bytes().replace(b'"type":"tool_call","subtype":"started"',
                                               b'"type":"tool_call","subtype":"startd"', 1))
    assert b"\x1b[1;35mwarning:\x1b[0m" in run("validate", "--color", warned).stdout
    # Never in JSON, never through a pipe unless asked.
    assert b"\x1b" not in run("validate", "--color", "--format", "json", path).stdout
    assert b"\x1b" not in run("validate", path).stdout


# --header


def verbs_with(option):
    """The verbs that have ``option``."""
    from importlib import import_module

    from ndagent import cli

    return [verb for verb in cli.VERBS
            if option in import_module(f"ndagent.cmd_{verb}").build_parser()
            ._option_string_actions]


def test_header_without_tsv_is_a_usage_error_in_every_verb_that_has_it():
    verbs = verbs_with("--header")
    assert "tools" in verbs
    for verb in verbs:
        for argv in (["--header"], ["--header", "--format", "ndjson"]):
            done = run(verb, *argv, VENDOR)
            assert (done.returncode, done.stdout) == (2, b""), verb
            assert done.stderr.startswith(
                f"ndagent-{verb}: --header is for --format tsv".encode()), done.stderr
            assert done.stderr.count(b"\n") == 1
        assert run(verb, "--header", "--format", "tsv", VENDOR).returncode == 0, verb


# --format


def test_format_names_ndjson_the_same_in_every_verb_and_takes_json_as_its_old_name():
    from importlib import import_module

    formats = {}
    for verb in verbs_with("--format"):
        action = import_module(f"ndagent.cmd_{verb}").build_parser() \
            ._option_string_actions["--format"]
        formats[verb] = action.choices
        assert "json" not in action.choices, verb  # the one name for NDJSON is ndjson
        new, old = (run(verb, "--format", name, VENDOR) for name in ("ndjson", "json"))
        assert new.returncode == old.returncode == 0 and new.stdout == old.stdout != b""
        assert run(verb, "--format=json", VENDOR).stdout == new.stdout
    assert "ndjson" in formats["tools"] and "ndjson" in formats["validate"]
    done = run("validate", "--format", "xml", VENDOR)
    assert done.returncode == 2 and b"ndjson" in done.stderr.split(b"choose from")[1]


# -q and --strict


VENDOR_LINES = VENDOR.read_bytes().splitlines(keepends=True)
# A stream with one warning and no error: a line that is not JSON for the converters,
# a call completed without being started for validate.
WARNED = {"converter": b"".join(VENDOR_LINES[:3] + [b"oops\n"] + VENDOR_LINES[3:]),
          "validate": b"".join(VENDOR_LINES[:4] + VENDOR_LINES[5:])}


def test_q_and_strict_mean_the_same_in_every_verb_and_help_says_what_q_silences():
    from importlib import import_module

    from ndagent import cli
    from ndagent.options import QUIET_HELP, STRICT_HELP

    for verb in cli.VERBS:
        parser = import_module(f"ndagent.cmd_{verb}").build_parser()
        options = parser._option_string_actions
        assert options["-q"] is options["--quiet"]
        assert options["-q"].help.startswith(QUIET_HELP + ": no "), verb
        assert options["--strict"].help.startswith(STRICT_HELP), verb
        if not any(action.dest == "files" for action in parser._actions):
            continue  # run reads the agent it starts (tests/test_run.py)
        stream = WARNED["validate" if verb == "validate" else "converter"]
        plain, quiet, strict = (run(verb, *argv, input=stream)
                                for argv in ([], ["-q"], ["--strict"]))
        said = plain.stderr + plain.stdout if verb == "validate" else plain.stderr
        assert plain.returncode == 0 and b": warning: " in said, verb
        assert quiet.returncode == 0 and b"warning" not in quiet.stderr + quiet.stdout, verb
        assert strict.returncode == 1, verb
        said = strict.stdout if verb == "validate" else strict.stderr
        assert said and b": warning: " not in said, verb


def test_q_still_prints_errors():
    done = run("validate", "-q", input=CUT_OFF)
    assert done.returncode == 1
    assert b": error: " in done.stdout and b"warning" not in done.stdout
    assert b" events, " not in done.stdout  # no summary line
    done = run("json", "-q", input=CUT_OFF)
    assert done.returncode == 1 and b"run ended without a result event" in done.stderr


# tools -k, -t, -s; the same filters in text


def ids(out):
    import orjson

    return [orjson.loads(line)["call_id"] for line in out.splitlines()]


def test_kinds_match_in_any_case_and_the_kinds_are_documented():
    from ndagent.model import KINDS

    assert ids(run("tools", "-k", "SHELL", SHAPES).stdout) == ["s1", "s2"]
    assert ids(run("tools", "-k", "semsearch,Glob", SHAPES).stdout) == ["g1"]
    help_text = run("tools", "--help").stdout.decode()
    assert ", ".join(KINDS) in " ".join(help_text.split())
    assert ", ".join(KINDS) in " ".join(run("text", "--help").stdout.decode().split())


def test_an_unknown_kind_is_a_usage_error_naming_the_nearest():
    for word, nearest in (("websarch", b"webSearch"), ("web", b"webFetch, webSearch"),
                          ("todos", b"updateTodos")):
        done = run("tools", "-k", f"read,{word}", SHAPES)
        assert (done.returncode, done.stdout) == (2, b"")
        assert done.stderr.count(b"\n") == 1
        assert f"unknown kind '{word}' (nearest known ones: ".encode() + nearest \
            in done.stderr, done.stderr
    done = run("text", "-k", "bash", SHAPES)
    assert done.returncode == 2 and b"known ones: read, write, " in done.stderr
    assert b"-t NAME" in done.stderr  # where the agent's own tool name goes
    done = run("tools", "-s", "sucess", SHAPES)
    assert done.returncode == 2 and b"nearest known ones: success" in done.stderr


def test_the_agent_s_own_tool_name_is_matched_with_t(write):
    # A Cursor tool of no kind keeps its name as its kind; a function tool has its name.
    assert ids(run("tools", "-t", "FROBNICATE", SHAPES).stdout) == ["f1"]
    assert ids(run("tools", "-t", "lookup", "-k", "shell", SHAPES).stdout) == \
        ["s1", "s2", "fn1"]
    gemini = write(
        b'{"type":"init","timestamp":"2026-01-01T00:00:00.000Z","session_id":"g","model":"m"}\n'
        b'{"type":"tool_use","timestamp":"2026-01-01T00:00:01.000Z","tool_name":'
        b'"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}\n'
        b'{"type":"tool_result","timestamp":"2026-01-01T00:00:02.000Z","tool_id":"t1",'
        b'"status":"success","output":""}\n'
        b'{"type":"result","timestamp":"2026-01-01T00:00:03.000Z","status":"success"}\n')
    assert ids(run("tools", "-t", "Run_Shell_Command", gemini).stdout) == ["t1"]
    assert run("text", "-t", "run_shell_command", gemini).stdout == b"Ran terminal command\n"
    assert run("text", "-t", "read_file", gemini).stdout == b""


def test_s_takes_the_words_text_prints_and_text_has_the_same_filters():
    assert ids(run("tools", "-s", "failed,DENIED", SHAPES).stdout) == ["s1", "s2"]
    assert ids(run("tools", "-s", "Failure,permissiondenied", SHAPES).stdout) == ["s1", "s2"]
    assert run("text", "-s", "failed,denied", SHAPES).stdout == \
        b"Ran terminal command (failed)\nRan terminal command (denied)\n"
    assert run("text", "-v", "-k", "mcp,delete", "-s", "error", SHAPES).stdout == \
        b"Called MCP tool: github-search_issues (error)\n"
    # Each line of text is the line of the record tools selects, in the same order.
    for argv in (["-k", "shell"], ["-s", "success"], ["-k", "grep,glob", "-s", "success"],
                 ["-t", "frobnicate"]):
        records = ids(run("tools", *argv, SHAPES).stdout)
        assert len(run("text", *argv, SHAPES).stdout.splitlines()) == len(records) > 0


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_kinds_and_statuses():
    completions = ROOT / "ndagent" / "completions" / "bash"
    script = f"""
source {completions / "ndagent-tools"}
COMP_WORDS=(ndagent-tools -k we); COMP_CWORD=2; _shtab_ndagent_tools; echo "${{COMPREPLY[@]}}"
COMP_WORDS=(ndagent-tools -s f); COMP_CWORD=2; _shtab_ndagent_tools; echo "${{COMPREPLY[@]}}"
source {completions / "ndagent-text"}
COMP_WORDS=(ndagent-text --kind u); COMP_CWORD=2; _shtab_ndagent_text; echo "${{COMPREPLY[@]}}"
"""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.stdout.splitlines() == ["webFetch webSearch", "failure failed", "updateTodos"]


# Messages: labelled as validate labels them, with FILE:LINE


CONVERTERS = ["json", "result", "text", "tools"]


@pytest.mark.parametrize("verb", CONVERTERS)
def test_converters_label_errors_and_warnings_as_validate_does(verb, write):
    damaged = write(VENDOR_LINES[:2] + [b"oops\n"] + VENDOR_LINES[2:5])
    done = run(verb, damaged)
    empty = run(verb, write(b""))
    assert done.returncode == empty.returncode == 1
    lines = (done.stderr + empty.stderr).decode().splitlines()
    assert len(lines) == 3
    for line in lines:  # every one about a place in the stream: FILE:LINE: SEVERITY:
        assert re.fullmatch(rf"ndagent-{verb}: \S+:\d+: (error|warning): .+", line), line
    assert lines[0].startswith(f"ndagent-{verb}: {damaged}:3: warning: skipped: not JSON")
    assert lines[1].startswith(f"ndagent-{verb}: {damaged}:1: error: run ended without")
    assert lines[2].endswith(":1: error: no events: the agent printed nothing, or failed "
                             "before it began")
    grep = subprocess.run(["grep", "-c", ": error:"], input=done.stderr + empty.stderr,
                          capture_output=True)
    assert grep.stdout == b"2\n"
    done = run(verb, damaged.parent / "missing.ndjson")
    assert done.stderr.decode().startswith(f"ndagent-{verb}: {damaged.parent}/missing.ndjson: "
                                           "error: cannot read: ")


def test_validate_says_a_run_cut_off_at_its_last_line_and_where_it_began(write):
    cut = write(VENDOR_LINES[:5])  # a call started at line 5, never completed
    assert run("validate", cut).stdout.decode().splitlines()[:2] == [
        f'{cut}:5: error: call "toolu_vrtx_01NnjaR886UcE8whekg2MGJd" was started and never '
        "completed [call-unfinished]",
        f"{cut}:5: error: run ended without a result event: the agent failed or was cut off "
        "(it began at line 1) [no-result]"]
    # Cut off by the next run: at the line that began it.
    two = write(VENDOR_LINES[:3] + VENDOR_LINES)
    assert run("validate", two).stdout.decode().splitlines()[0] == (
        f"{two}:4: error: run ended without a result event: the agent failed or was cut off "
        "(it began at line 1) [no-result]")
    # Diagnostics in input order.
    found = [int(line.split(":")[1]) for line in run("validate", cut, two).stdout.decode()
             .splitlines() if ": error: " in line and line.startswith(str(cut))]
    assert found == sorted(found)


# result -z, and messages beside an answer on a terminal


def test_result_z_ends_each_answer_with_a_nul(write):
    import orjson

    other = [orjson.loads(line) for line in VENDOR_LINES]
    other[2]["message"]["content"][0]["text"] = "two\nlines"
    other[3]["message"]["content"][0]["text"] = ""
    other[6]["message"]["content"][0]["text"] = "\n"
    other[-1]["result"] = "two\nlines\n"
    other = b"".join(orjson.dumps(event) + b"\n" for event in other)
    empty = [orjson.loads(line) for line in (VENDOR_LINES[0], VENDOR_LINES[-1])]
    empty[1]["result"] = ""
    empty = b"".join(orjson.dumps(event) + b"\n" for event in empty)
    done = run("result", "-z", write(VENDOR.read_bytes() + other + empty))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (b"I'll read the README.md file and create a summary\0"
                           b"two\nlines\n\0\0")
    items = subprocess.run(["xargs", "-0", "-n", "1", "printf", "[%s]"], input=done.stdout,
                           capture_output=True).stdout
    assert items == b"[I'll read the README.md file and create a summary][two\nlines\n][]"
    # Codex and Gemini answers, printed at the run's end, too.
    assert run("result", "--from-result", "-z", VENDOR).stdout == \
        b"I'll read the README.md file and create a summary\0"


def on_one_terminal(verb, *args, data):
    """What ``ndagent-VERB ARGS`` writes when standard output and error are one
    terminal (a pty), reading ``data`` from a pipe."""
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen([command(verb), *map(str, args)], stdin=subprocess.PIPE,
                               stdout=follower, stderr=follower)
    os.close(follower)
    process.stdin.write(data)
    process.stdin.close()
    seen = read_terminal(leader)
    process.wait(timeout=20)
    return seen


def test_a_message_never_lands_on_the_line_of_an_answer_on_the_same_terminal():
    partial = fixture("partial-output.ndjson").read_bytes().splitlines(keepends=True)
    damaged = b"".join(partial[:4] + [b"oops\n"] + partial[4:])
    for data, argv in ((damaged, []), (b"".join(partial[:6]), ["-n"]),
                       (b"".join(VENDOR_LINES[:4]), ["-z"])):
        seen = on_one_terminal("result", *argv, data=data)
        assert b"ndagent-result: " in seen, seen
        for line in seen.split(b"\n"):
            assert b"ndagent-result: " not in line or line.startswith(b"ndagent-result: "), \
                (argv, seen)
    # Through a pipe, the output is the answer alone, as ever.
    assert run("result", input=damaged).stdout == run("result", input=b"".join(partial)).stdout


# Compressed input


COMPRESSORS = {"gzip": "gz", "bz2": "bz2", "lzma": "xz"}


def compressed(write, data, module):
    from importlib import import_module

    return write(import_module(module).compress(data), f"run.ndjson.{COMPRESSORS[module]}")


@pytest.mark.parametrize("module", COMPRESSORS)
def test_compressed_files_and_standard_input_are_read_transparently(module, write):
    gemini = (ROOT / "tests" / "golden" / "gemini" / "shell" / "input.ndjson").read_bytes()
    for data in (VENDOR.read_bytes(), gemini):
        path = compressed(write, data, module)
        for verb, *argv in (("json",), ("text", "-v"), ("tools",), ("validate",)):
            plain = run(verb, *argv, write(data, "plain.ndjson"))
            assert plain.returncode == 0 and plain.stdout
            for done in (run(verb, *argv, path), run(verb, *argv, input=path.read_bytes())):
                assert done.returncode == 0, done.stderr
                assert done.stdout.replace(str(path).encode(), b"plain").replace(
                    b"<stdin>", b"plain") == plain.stdout.replace(
                    str(path.parent / "plain.ndjson").encode(), b"plain")
    # Through a real pipe.
    done = run_installed("text", input=path.read_bytes())
    assert (done.returncode, done.stdout) == (0, b"Ran terminal command\n")


@pytest.mark.parametrize("module", COMPRESSORS)
def test_a_damaged_compressed_input_is_a_read_error_after_what_it_held(module, write):
    data = compressed(write, VENDOR.read_bytes() * 50, module).read_bytes()
    cut = write(data[:len(data) // 2], "cut.ndjson.x")
    done = run("text", cut)
    assert done.returncode == 2
    if module == "gzip":  # the others decompress in blocks larger than this input
        assert done.stdout.startswith(b"Read file\nCreated new file\n")
    label = {"gzip": "gzip", "bz2": "bzip2", "lzma": "xz"}[module]
    assert re.match(rf"ndagent-text: {re.escape(str(cut))}:\d+: error: cannot read: "
                    rf"{label}: .+\n", done.stderr.decode()), done.stderr


def test_a_compressed_file_is_never_cut_in_parts(write, monkeypatch):
    """Parts are read from the file's raw bytes: a compressed file must be read whole,
    decompressed, even where every file is cut where it may be (NDAGENT_PARTS)."""
    from ndagent import inputs

    monkeypatch.setenv(inputs.ENVIRONMENT, "always")
    cutter = inputs.Cutter(None, False, 1 << 20, None)
    data = VENDOR.read_bytes() * 3
    plain = write(data)
    parts = cutter.parts(plain, 2)
    assert parts is not None and len(parts) == 3
    inputs.Cutter.close(parts)
    for module in COMPRESSORS:
        assert cutter.parts(compressed(write, data, module), 2) is None


def test_a_decompressor_is_imported_only_for_compressed_input(write):
    """(Nor is shutil, which imports them all: argparse's formatter imports it to ask
    the terminal's width, which only help needs.)"""
    import sys

    code = ("import sys\nfrom ndagent.cmd_json import main\nmain(sys.argv[1:])\n"
            "print(sorted(set(sys.modules) & {'gzip', 'bz2', 'lzma', 'shutil'}))\n")
    plain = subprocess.run([sys.executable, "-c", code, VENDOR], capture_output=True)
    assert plain.stdout.endswith(b"\n[]\n")
    path = compressed(write, VENDOR.read_bytes(), "gzip")
    done = subprocess.run([sys.executable, "-c", code, path], capture_output=True)
    assert done.stdout.endswith(b"\n['gzip']\n")


def test_a_live_uncompressed_pipe_that_begins_as_a_magic_does_is_not_held_back():
    """A noise line that begins as bzip2's magic does ('B') is passed once its next
    byte tells it is none; the lines after it come out as they arrive."""
    import time

    process = subprocess.Popen([command("text")], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        process.stdin.write(b"Banner\n" + b"".join(VENDOR_LINES[:6]))
        process.stdin.flush()
        os.set_blocking(process.stdout.fileno(), False)
        seen, deadline = b"", time.monotonic() + 20
        while b"Read file\n" not in seen and time.monotonic() < deadline:
            time.sleep(0.05)
            seen += process.stdout.read() or b""
        assert seen == b"Read file\n" and process.poll() is None
    finally:
        process.kill()


# text --progress


def test_progress_prints_a_line_when_a_call_starts_and_lists_the_calls_left_open(write):
    from ndagent.cmd_text import STARTS
    from ndagent.model import KINDS

    assert set(STARTS) == set(KINDS)
    assert run("text", "--progress", VENDOR).stdout == (
        b"Reading file\nRead file\nCreating new file\nCreated new file\n")
    assert run("text", "-v", "--progress", VENDOR).stdout.splitlines()[:2] == [
        b"Reading file: README.md", b"Read file: README.md"]
    cut = write(VENDOR_LINES[:5])
    done = run("text", "-v", "--progress", cut)
    assert done.returncode == 1
    assert done.stdout == b"Reading file: README.md\nReading file: README.md (pending)\n"
    assert run("text", "--progress", cut).stdout == b"Reading file\nReading file (pending)\n"
    # -k and -t select the calls, -s the lines of their ends (pending: the calls left open).
    assert run("text", "--progress", "-k", "write", VENDOR).stdout == \
        b"Creating new file\nCreated new file\n"
    assert run("text", "--progress", "-s", "failed", cut).stdout == b"Reading file\n"
    assert run("text", "--progress", "-s", "pending", cut).stdout == \
        b"Reading file\nReading file (pending)\n"
    assert b"(pending)" not in run("text", "-v", cut).stdout  # the documented format
    assert b"\x1b[33m (pending)\x1b[0m" in run("text", "--color", "--progress", cut).stdout
    done = run("text", "--progress", "--final", VENDOR)
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1


def test_progress_shows_a_call_as_soon_as_it_starts():
    import time

    process = subprocess.Popen([command("text"), "-v", "--progress"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        process.stdin.write(b"".join(VENDOR_LINES[:5]))  # up to the read call's start
        process.stdin.flush()
        os.set_blocking(process.stdout.fileno(), False)
        seen, deadline = b"", time.monotonic() + 20
        while not seen.endswith(b"\n") and time.monotonic() < deadline:
            time.sleep(0.05)
            seen += process.stdout.read() or b""
        assert seen == b"Reading file: README.md\n" and process.poll() is None
    finally:
        process.kill()


# Completion


def test_completion_prints_the_script_of_each_shell():
    from ndagent import cli

    for shell in cli.COMPLETION_FILES:
        done = run(None, "completion", shell)
        assert done.returncode == 0 and done.stderr == b""
        script = done.stdout.decode()
        for program in ("ndagent", *(f"ndagent-{verb}" for verb in cli.VERBS)):
            assert program in script, (shell, program)
    done = run(None, "completion", "tcsh")
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1
    assert run(None, "completion").returncode == 2
    assert b"ndagent completion bash|zsh|fish" in run(None, "--help").stdout


@pytest.mark.parametrize("option", ["-h", "--help"])
def test_completion_has_its_help_and_ndagent_s_lists_it(option):
    done = run(None, "completion", option)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.startswith(b"usage: ndagent completion") and b"eval" in done.stdout
    if option == "-h":
        assert done.stdout.endswith(b"'man ndagent'.\n")  # it has no page of its own
    assert b"\n  completion  print a shell's completion script" in run(None, option).stdout


def bash_completes(*words):
    """What bash completes for the command line ``words`` (the last one being
    completed), with the script 'ndagent completion bash' prints."""
    script = f"""
eval "$({command(None)} completion bash)"
words=({' '.join(f"'{word}'" for word in words)})
function=$(complete -p "${{words[0]}}" | sed 's/.* -F \\([^ ]*\\) .*/\\1/')
COMP_WORDS=("${{words[@]}}"); COMP_CWORD=$((${{#words[@]}} - 1)); COMPREPLY=()
"$function" "${{words[0]}}" "${{words[-1]}}" "${{words[-2]}}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.stderr == ""
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_ndagent_verb_as_ndagent_dash_verb():
    assert bash_completes("ndagent", "text", "--c") == ["--color"]
    assert bash_completes("ndagent-text", "--c") == ["--color"]
    assert bash_completes("ndagent", "tools", "-k", "we") == ["webFetch", "webSearch"]
    assert bash_completes("ndagent-tools", "--kind", "we") == ["webFetch", "webSearch"]
    assert bash_completes("ndagent", "validate", "--format", "") == ["text", "ndjson", "github",
                                                                     "junit"]
    assert bash_completes("ndagent", "text", "--color", "") == ["auto", "always", "never"]
    assert bash_completes("ndagent", "result", "-s", "f") == []  # result has no -s
    assert bash_completes("ndagent", "comp") == ["completion"]
    assert bash_completes("ndagent", "completion", "") == ["bash", "zsh", "fish"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="no fish")
def test_fish_completes_ndagent_verb_as_ndagent_dash_verb():
    def completes(line):
        script = f"{command(None)} completion fish | source; complete -C {line!r}"
        done = subprocess.run(["fish", "-c", script], capture_output=True, text=True,
                              timeout=30)
        assert done.stderr == ""
        return [found.split("\t")[0] for found in done.stdout.splitlines()]

    assert completes("ndagent text --c") == completes("ndagent-text --c") == ["--color"]
    assert completes("ndagent tools -k we") == ["webFetch", "webSearch"]
    assert completes("ndagent-tools -s fail") == ["failed", "failure"]
    assert "validate" in completes("ndagent ")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="no zsh")
def test_zsh_registers_the_completion_of_every_program():
    script = (f'autoload -U compinit; compinit -u; eval "$({command(None)} completion zsh)"; '
              'print -l ${_comps[ndagent]} ${_comps[ndagent-text]}')
    done = subprocess.run(["zsh", "-fc", script], capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["_shtab_ndagent", "_shtab_ndagent_text"], done.stderr


def test_man_ndagent_lists_the_kinds_and_the_outcomes():
    from ndagent.model import KINDS, OUTCOMES

    page = (ROOT / "man" / "ndagent.1").read_text(encoding="utf-8")
    kinds = page.split(".SH TOOL KINDS", 1)[1].split(".SH ", 1)[0]
    outcomes = page.split(".SH OUTCOMES", 1)[1].split(".SH ", 1)[0]
    assert [line[3:] for line in kinds.splitlines() if line.startswith(".B ")] == list(KINDS)
    assert [line[3:] for line in outcomes.splitlines() if line.startswith(".B ")] == \
        list(OUTCOMES)


@pytest.mark.parametrize("given", ["99999999999999999999", "253402300800000",
                                   "10000-01-01T00:00:00Z"])
def test_a_time_origin_after_the_year_9999_is_a_usage_error(given):
    done = run("validate", "--format", "junit", "--time-origin", given, os.devnull)
    assert (done.returncode, done.stdout) == (2, b"")
    assert b"argument --time-origin: not a time" in done.stderr


def test_the_time_origin_is_the_option_then_source_date_epoch_then_mtime_then_now(
        monkeypatch, write):
    """Where a stream has no clock: --time-origin, else SOURCE_DATE_EPOCH (seconds),
    else a regular FILE's modification time, else the time it is read."""
    from ndagent.options import STDIN, time_origin

    path = write(b"")
    os.utime(path, ns=(0, 1_700_000_000_123_000_000))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780308000")
    assert time_origin(5, str(path)) == 5
    assert time_origin(None, str(path)) == time_origin(None, STDIN) == 1_780_308_000_000
    for beyond in ("not a number", "99999999999999999"):  # after the year 9999
        monkeypatch.setenv("SOURCE_DATE_EPOCH", beyond)
        assert time_origin(None, str(path)) == 1_700_000_000_123
    before = time.time_ns() // 1_000_000
    assert before <= time_origin(None, STDIN) <= time.time_ns() // 1_000_000
