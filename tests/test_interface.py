"""The interface conventions every verb shares (issue 15): options spelt and meaning the
same everywhere, as GNU tools, jq and csvkit have them."""

import os
import re

from conftest import fixture, on_a_terminal, run

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

    for verb in cli.VERBS:
        options = import_module(f"ndagent.cmd_{verb}").build_parser()._option_string_actions
        assert options["-q"] is options["--quiet"]
        assert options["-q"].help.startswith(cli.QUIET_HELP + ": no "), verb
        assert options["--strict"].help.startswith(cli.STRICT_HELP), verb
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
