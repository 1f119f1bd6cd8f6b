"""Terminal safety: invisible characters spelt out, backslashes doubled where stream text
is shown in one line, stream text quoted short in diagnostics, and JSON on a terminal
with \\u escapes for what would act on it."""

import json
import re

import orjson
import pytest
from conftest import examples, fixture, on_a_terminal, run, run_of, tool_event
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent.cmd_text import main as text_main
from ndagent.cmd_tools import main as tools_main
from ndagent.cmd_validate import main as validate_main
from ndagent.terminal import (
    _CODE,
    _KEEP_LINES,
    QUOTE_LIMIT,
    escape_code,
    escape_controls,
    escape_field,
    escape_json,
    escape_prose,
    quote,
)

# Every character that shows nothing, or reorders what follows, and how it is spelt.
INVISIBLE = {
    "\u00ad": "\\xad", "\u061c": "\\u061c", "\u180e": "\\u180e", "\u200b": "\\u200b",
    "\u200c": "\\u200c", "\u200d": "\\u200d", "\u200e": "\\u200e", "\u202e": "\\u202e",
    "\u2028": "\\u2028", "\u2060": "\\u2060", "\u2064": "\\u2064", "\u2066": "\\u2066",
    "\u206a": "\\u206a", "\u206f": "\\u206f", "\ufeff": "\\ufeff", "\ufff9": "\\ufff9",
    "\ufffb": "\\ufffb", "\U000e0001": "\\U000e0001", "\U000e0041": "\\U000e0041",
    "\U000e007f": "\\U000e007f",
}
# What hides text even in prose: the tag characters (invisible ASCII), the bidi controls.
HIDDEN_IN_PROSE = {"\U000e0001": "\\U000e0001", "\U000e0068": "\\U000e0068",
                   "\u202e": "\\u202e", "\ufff9": "\\ufff9"}
# What a terminal would act on, or hide, in JSON: C1, DEL, bidi, zero-width, tags.
HOSTILE = "a\x9b31m\x7f\u202e\u200b\U000e0001b"
HOSTILE_ESCAPED = b"a\\u009b31m\\u007f\\u202e\\u200b\\udb40\\udc01b"
HOSTILE_RAW = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\x8b\xae]|\xf3\xa0")


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda char: f"U+{ord(char):04X}")
def test_invisible_characters_are_spelt_out(char):
    assert escape_controls(f"README{char}.md") == f"README{INVISIBLE[char]}.md"


@settings(max_examples=examples(2000), deadline=None)
@given(st.text(st.characters(max_codepoint=0x7F)) | st.text())
def test_property_code_and_prose_are_spelt_as_their_tables_spell_them(text):
    """The quick way out for an ASCII text with no control character leaves exactly
    what the translation would."""
    assert escape_code(text) == text.translate(_CODE)
    assert escape_prose(text) == text.translate(_KEEP_LINES)


def test_prose_keeps_joiners_and_lines_but_not_hidden_text():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467 soft\u00adhyphen\n\tnext"
    assert escape_prose(family) == family
    for char, spelt in HIDDEN_IN_PROSE.items():
        assert escape_prose(f"a{char}b") == f"a{spelt}b"


def test_fields_double_backslashes_so_that_escapes_and_characters_differ():
    assert escape_field("a\\x1b") == "a\\\\x1b"
    assert escape_field("a\x1b") == "a\\x1b"
    assert escape_field("C:\\dir\\\u200b") == "C:\\\\dir\\\\\\u200b"


def test_quote_is_bounded_and_spelt_out():
    assert quote("x" * 10**6) == "x" * QUOTE_LIMIT + "..."
    assert quote("\U000e0001" * 1000) == "\\U000e0001" * QUOTE_LIMIT + "..."
    assert quote("a\\b\n") == "a\\\\b\\n"


def test_escape_json_keeps_the_value_and_leaves_other_text_alone():
    value = {"k\u202e": HOSTILE, "emoji": "\U0001f600 \u00e9 \\u009b", "n": [1, None]}
    encoded = escape_json(orjson.dumps(value))
    assert orjson.loads(encoded) == json.loads(encoded) == value
    assert not HOSTILE_RAW.search(encoded)
    assert HOSTILE_ESCAPED in encoded and b'"k\\u202e"' in encoded
    assert "\U0001f600 \u00e9 \\\\u009b".encode() in encoded
    every = "".join(chr(code) for code in (*range(0x7F, 0xA0), *map(ord, INVISIBLE)))
    assert escape_json(orjson.dumps(every)).isascii()


# Item 16: wherever a path, command or name is shown, invisible characters are spelt out
# and a literal backslash is doubled.

def shell_run(write, *commands):
    """A run with one successful shell call per command."""
    events = []
    for number, command_text in enumerate(commands):
        events += [tool_event("started", f"c{number}", "shellToolCall", {"command": command_text}),
                   tool_event("completed", f"c{number}", "shellToolCall",
                              {"command": command_text}, "success")]
    return write(run_of(*events))


def test_text_verbose_shows_invisible_characters_and_doubles_backslashes(call, write):
    path = shell_run(write, "cat README.md", "cat README\u200b.md", "cat a\\x1b", "cat a\x1b",
                     "cat tag\U000e0041")
    status, out, err = call(text_main, "-v", "--color=never", path)
    assert (status, err) == (0, "")
    assert out.decode().splitlines() == [
        "Ran terminal command: cat README.md", "Ran terminal command: cat README\\u200b.md",
        "Ran terminal command: cat a\\\\x1b", "Ran terminal command: cat a\\x1b",
        "Ran terminal command: cat tag\\U000e0041"]


def test_tsv_shows_invisible_characters(call, write):
    path = shell_run(write, "cat README\u200b.md", "cat \ufeffx\U000e0001")
    status, out, _ = call(tools_main, "--format", "tsv", path)
    targets = [row.split("\t")[3] for row in out.decode().splitlines()]
    assert targets == ["cat README\\u200b.md", "cat \\ufeffx\\U000e0001"]


def test_validate_text_shows_invisible_characters_and_doubles_backslashes(call, write):
    lines = run_of(b'{"type":"user","message":{"role":"user","content":[]},"session_id":'
                   b'"s-1","README\\u200b":1,"a\\\\x1b":2,"a\\u001b":3}')
    status, out, _ = call(validate_main, "--strict", write(lines))
    assert status == 1
    assert re.findall(r'unknown field "(.*)"', out.decode()) == [
        "README\\u200b", "a\\\\x1b", "a\\x1b"]


def test_answer_on_a_terminal_spells_out_tag_characters(write):
    answer = "hidden\U000e0069\U000e0067 \u202e \U0001f468\u200d\U0001f469 ok\n"
    line = orjson.dumps({"type": "assistant", "session_id": "s-1", "message": {
        "role": "assistant", "content": [{"type": "text", "text": answer}]}})
    path = write(run_of(line))
    shown = ("hidden\\U000e0069\\U000e0067 \\u202e \U0001f468\u200d\U0001f469 ok\n").encode()
    assert run("result", path).stdout == answer.encode()
    assert on_a_terminal("result", path) == shown
    assert on_a_terminal("text", "--final", path) == shown


# Item 15: JSON on a terminal has \u escapes for what a terminal would act on or hide;
# through a pipe, the bytes are orjson's.

def hostile_stream(write):
    """A run whose tool call and result hold HOSTILE text."""
    result = {"type": "result", "subtype": "success", "is_error": False, "result": HOSTILE,
              "session_id": "s-1"}
    return write([run_of()[0],
                  tool_event("started", "c\x9b", "shellToolCall", {"command": HOSTILE}),
                  tool_event("completed", "c\x9b", "shellToolCall", {"command": HOSTILE},
                             "success", {"stdout": HOSTILE}),
                  orjson.dumps(result)])


@pytest.mark.parametrize("verb", ["json", "tools"])
def test_json_outputs_escape_what_a_terminal_acts_on_and_pipes_are_unchanged(write, verb):
    path = hostile_stream(write)
    piped = run(verb, path).stdout
    assert HOSTILE.encode() in piped and b"\\u009b" not in piped
    shown = on_a_terminal(verb, path)
    assert not HOSTILE_RAW.search(shown) and HOSTILE_ESCAPED in shown
    assert [orjson.loads(line) for line in shown.splitlines()] == \
        [orjson.loads(line) for line in piped.splitlines()]


def test_validate_json_on_a_terminal_escapes_a_file_name(write):
    path = write(fixture("vendor-example.ndjson").read_bytes(), name="run\u202e\x9b.ndjson")
    piped = run("validate", "--format", "json", path).stdout
    assert orjson.loads(piped)["source"] == str(path)
    assert "\u202e\x9b".encode() in piped
    shown = on_a_terminal("validate", "--format", "json", path)
    assert not HOSTILE_RAW.search(shown) and b"run\\u202e\\u009b.ndjson" in shown
    assert orjson.loads(shown) == orjson.loads(piped)


# Item 11: a diagnostic quotes stream text at most QUOTE_LIMIT characters long.

def test_a_huge_session_id_is_quoted_short(write, tmp_path):
    import subprocess

    from conftest import command

    huge = "S" * 2**20
    lines = [orjson.dumps({"type": "system", "subtype": "init", "session_id": huge})]
    lines += [orjson.dumps({"type": "thinking", "subtype": "delta", "session_id": f"s{n}"})
              for n in range(1000)]
    path = write(lines)
    for options in ([], ["--format", "json"]):
        output = tmp_path / "out"
        with open(output, "wb") as sink:
            done = subprocess.run([command("validate"), *options, str(path)], stdout=sink,
                                  timeout=120)
        assert done.returncode == 1
        size = output.stat().st_size
        assert size < 1002 * 300, f"{size} bytes of diagnostics"
        found = output.read_bytes().decode().splitlines()
        messages = [orjson.loads(line).get("message") for line in found] if options else found
        assert sum(f'from the run\'s "{"S" * QUOTE_LIMIT}..." (line 1)' in str(message)
                   for message in messages) == 1000
