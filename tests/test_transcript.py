"""The transcripts (ndagent markdown, ndagent html): no string of the stream escapes the
place it is written in, whatever it holds; the bounds hold."""

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import InProcess, command, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent import transcript
from ndagent.cmd_markdown import _BLANKS, _DELIMITER_ROW, fence, prose, text_cell
from ndagent.terminal import escape_code, escape_prose
from ndagent.transcript import Bounded

markdown_it = pytest.importorskip("markdown_it")
html5lib = pytest.importorskip("html5lib")

HOSTILE = ("<img src=http://127.0.0.1:9/img.png><script>fetch('http://127.0.0.1:9/js')"
           "</script></details>]]>\x1b[31m\u202e`````~~~\n```\n~~~\n</details>\n")
# Strings made of what Markdown and HTML read as markup, and what a terminal obeys.
STRINGS = st.lists(st.sampled_from(
    list("`~<>\\|&\"'/!?*_[]()#-= \n\tab") + ["\r\n", "\x1b", "\u202e", "\x00", "\u200d",
                                              "</details>", "<script>", "javascript:",
                                              "\n```", "\n~~~"]),
    min_size=1, max_size=30).map("".join)


def claude_stream(prompt, text, thinking, name, command, result, answer, failure):
    """A Claude stream of two runs holding the strings in every field (``name`` as the
    model, the session, the version and a tool's name and argument): one ok, one
    failed."""
    def line(**data):
        return json.dumps(data)

    lines = []
    for run, ok in ((1, True), (2, False)):
        lines += [
            line(type="system", subtype="init", session_id=f"s{run}{name}", model=name,
                 tools=[], claude_code_version=name),
            line(type="user", message={"role": "user", "content": prompt}),
            line(type="assistant", message={"id": f"m{run}", "content": [
                {"type": "thinking", "thinking": thinking},
                {"type": "text", "text": text},
                {"type": "tool_use", "id": f"t{run}", "name": "Bash",
                 "input": {"command": command}},
                {"type": "tool_use", "id": f"u{run}", "name": name, "input": {name: name}}]}),
            line(type="user", message={"content": [
                {"type": "tool_result", "tool_use_id": f"t{run}", "content": result}]}),
            line(type="assistant", message={"id": f"n{run}", "content": [
                {"type": "text", "text": answer}]}),
            line(type="result", subtype="success" if ok else "error_during_execution",
                 is_error=not ok, duration_ms=10, num_turns=1, session_id=f"s{run}",
                 result=answer if ok else failure),
        ]
    return ("\n".join(lines) + "\n").encode()


def render(verb, stream, tmp_path, *options):
    path = tmp_path / "input.ndjson"
    path.write_bytes(stream)
    status, out, err = InProcess()(verb, b"", *options, str(path))
    return status, out.decode("utf-8"), err


def tokens(document):
    parser = markdown_it.MarkdownIt("commonmark").enable("table")
    found = []
    pending = parser.parse(document)
    while pending:
        token = pending.pop(0)
        found.append(token)
        pending[:0] = token.children or []
    return found


def shown(text):
    """A multi-line stream text as a transcript shows it: prose."""
    return escape_prose(text.replace("\r\n", "\n"))


def shown_code(text):
    """A command or a tool's result as a transcript shows it."""
    return escape_code(text.replace("\r\n", "\n"))


def check_markdown(document, result, command):
    found = tokens(document)
    for token in found:
        if token.type == "html_inline":
            assert token.content in ("</a>",) or token.content.startswith('<a id="run-'), token
        elif token.type == "html_block":
            lines = token.content.splitlines()
            assert lines[0] in ("<details>", "<details open>", "</details>"), token.content
            assert all(line.startswith("<summary>") and line.endswith("</summary>")
                       and line.count("<") == line.count("<code>") * 2 + 2
                       for line in lines[1:]), token.content
    fences = [token.content for token in found if token.type == "fence"]
    assert shown_code(result) + "\n" in fences
    assert shown_code(command) + "\n" in fences


# Each example renders two documents of two runs: a few here, more under 'make fuzz'.
@settings(max_examples=examples(5, lambda count: max(count // 100, 12)),
          deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(STRINGS, STRINGS, STRINGS, STRINGS, STRINGS, STRINGS, STRINGS, STRINGS)
def test_no_stream_string_escapes_its_place(tmp_path, prompt, text, thinking, name, command,
                                            result, answer, failure):
    stream = claude_stream(prompt, text, thinking, name, command, result, answer, failure)
    status, document, _ = render("markdown", stream, tmp_path)
    assert status == 1  # the second run failed
    check_markdown(document, result, command)
    status, page, _ = render("html", stream, tmp_path)
    assert status == 1
    # No NUL of the stream's is left raw: the output's marks are the only ones.
    assert "\x00" not in document and "\x00" not in page
    check_html(page)
    for value in (prompt, text, thinking, answer, failure):
        assert html_text(page).count(shown(value).strip()) >= 1
    assert html_text(page).count(shown_code(result).strip()) >= 1


# The elements and attributes ndagent writes, and nothing else.
ELEMENTS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "code",
            "section", "dl", "dt", "dd", "span", "div", "details", "summary", "pre", "nav",
            "ol", "li", "a"}
ATTRIBUTES = {"lang", "charset", "http-equiv", "content", "name", "class", "id", "open", "href"}


def check_html(page):
    tree = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)
    for element in tree.iter():
        assert element.tag in ELEMENTS, element.tag
        assert set(element.attrib) <= ATTRIBUTES, element.attrib
        assert element.get("href", "#run-").startswith("#run-")
    head = tree.find("head")
    assert head[1].get("http-equiv") == "Content-Security-Policy"


def html_text(page):
    tree = html5lib.HTMLParser(namespaceHTMLElements=False).parse(page)
    return "".join(tree.find("body").itertext())


def test_the_hostile_fixture_is_visible_text_in_both(tmp_path):
    stream = claude_stream(*[HOSTILE] * 8)
    _, document, _ = render("markdown", stream, tmp_path)
    check_markdown(document, HOSTILE, HOSTILE)
    _, page, _ = render("html", stream, tmp_path)
    check_html(page)
    assert shown(HOSTILE) in html_text(page)


def test_a_zero_width_character_is_spelt_out_in_code_and_kept_in_prose(tmp_path):
    hidden = "rm -rf build\u200b/ # \U0001F468\u200d\U0001F469"
    stream = claude_stream("p", hidden, "t", "Bash", hidden, hidden, hidden, "f")
    for verb in ("markdown", "html"):
        _, document, _ = render(verb, stream, tmp_path)
        # the target, the command and the result, in each of the two runs
        assert document.count("build\\u200b/ # \U0001F468\\u200d") == 6
        assert "build\u200b/ # \U0001F468\u200d\U0001F469" in document  # the answer


def test_a_fence_is_longer_than_any_backtick_run_it_holds():
    assert fence(Bounded("a ``````` b"), "text").startswith("````````text\n")
    assert fence(Bounded("plain"), "text").startswith("```text\n")


def test_a_long_result_keeps_its_head_and_tail_and_says_the_cut():
    cut = Bounded("h" * 25_000 + "t" * 25_000, 10_000)
    assert (len(cut.head), len(cut.tail), cut.omitted) == (7_500, 2_500, 40_000)
    assert "\n[… 40,000 characters omitted …]\n" in fence(cut, "text")


def test_prose_leaves_no_raw_html_and_closes_its_fences():
    rendered = prose("<b>x</b> `a<b>` ``` open\n~~~\n<script>")
    kinds = [token.type for token in tokens(rendered)]
    assert "html_inline" not in kinds and "html_block" not in kinds
    assert rendered.endswith("~~~\n")


# Lines made of what opens, closes or holds Markdown's blocks and spans: list items and
# quotes, each indentation a fence's line may have, fences, tables, code spans, links,
# web addresses, raw HTML.
PROSE_LINES = st.lists(st.tuples(
    st.sampled_from(["", " ", "  ", "   ", "    ", "     ", "      ", "\t", " \t", "- ",
                     "* ", "+ ", "1. ", "2) ", "-\t", "> ", ">", "> > ", "  - ", "   1. ",
                     "  > ", "-    ", "10.  "]),
    st.lists(st.sampled_from(
        ["```", "````", "~~~", "~~~~", "```py", "<script>x</script>", "<b>", "text", "`a` <i>",
         "", "- item", "```` ", "\t```", "\\~~~", "~~x~~", "<!-- c", "]]>", "```x```", "|",
         "-|-", ":-", "--|--", "`", "``", "<img src=x>", "[x](", ")", "](", "]: http://e.x",
         "[y]", "http://e.x/", "www.e.x", "\\", "\\<i>", " ", "&lt;", "![i](x)", "<http://e.x>",
         "<`@e.co>", "<1@x.co>", "<_a@b.c>", "[ ] ", "[!NOTE]", "10:30 - 11:00", "[z]:"]),
        max_size=4).map("".join)), max_size=12).map(
    lambda lines: "\n".join(lead + body for lead, body in lines))
# What the transcript writes after an agent's prose: it must stay a table of its own.
TRAILER = "\n| Field | Value |\n|---|---|\n| Outcome | ok |\n"


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(st.sampled_from(" \t-|:>+*1.)x"), max_size=24))
def test_property_a_delimiter_row_is_told_with_its_blanks_one_to_a_run(line):
    """Whether a line may be a table's delimiter row is told on the line with each run
    of blanks made one, which keeps the pattern from trying every way of sharing a long
    run out among its blanks: it is the same answer."""
    assert (_DELIMITER_ROW.fullmatch(_BLANKS.sub(" ", line)) is None) == (
        _DELIMITER_ROW.fullmatch(line) is None)


def test_a_line_of_thousands_of_blanks_is_written_as_it_is():
    """The shape that made the delimiter-row pattern try every sharing of the blanks
    (minutes for a few kilobytes)."""
    line = " " * 5000 + "-" + " " * 5000 + "+"
    assert prose(f"a | b\n{line}") == f"a | b\n{line}\n"


@settings(max_examples=examples(60, lambda count: max(count, 300)), deadline=None)
@given(PROSE_LINES)
def test_property_prose_in_any_container_leaves_no_raw_html_link_or_block_open(text):
    found = tokens(prose(text) + TRAILER)
    assert not [token for token in found if token.type in (
        "html_inline", "html_block", "link_open", "image")]
    cells = [token.content for token in found if token.type == "inline"]
    assert cells[-4:] == ["Field", "Value", "Outcome", "ok"]
    assert found[-1].type == "table_close"


def test_what_github_s_bare_links_would_take_in_is_escaped():
    # GitHub's bare links run over a backslash and a backtick: the < after one, and a
    # code span begun inside one, would be raw HTML.
    for text in ("www.e.x\\<img src=x>", "http://e.x/`<b>x</b>`", "(www.e.x/`<b>`)"):
        assert "<" not in prose(text).replace("&lt;", ""), text
    assert prose("`<b>` http://e.x") == "`<b>` http://e.x\n"  # a code span before one
    assert text_cell("2.0 see www.e.x/login or https://e.x") == \
        "2.0 see www\\.e.x/login or https\\://e.x"


def test_ordinary_markdown_keeps_its_blocks():
    after_table = "| a | b |\n|---|---|\n| 1 | 2 |\n```sh\necho <i>\n```"
    assert [token.type for token in tokens(prose(after_table))].count("fence") == 1
    assert prose("x\n10:30 - 11:00 `a|<b>`") == "x\n10:30 - 11:00 `a|<b>`\n"  # no table
    assert prose("- [ ] todo\n- [x] done") == "- [ ] todo\n- [x] done\n"
    # an email autolink may begin with a backtick: it would take in the code span
    assert [token.type for token in tokens(prose("See <`@e.co><img src=x>` now."))
            if token.type in ("link_open", "html_inline")] == []


def test_no_link_definition_can_take_the_cut_s_marker():
    rendered = prose("[… 1,020 characters omitted …]: https://e.x/phish\n\nx")
    assert "]:" not in rendered.replace("\\]", "")
    assert not [token for token in tokens(rendered + "\n[… 1,020 characters omitted …]\n")
                if token.type == "link_open"]


def test_max_bytes_keeps_every_header_and_ending_and_says_so_once(tmp_path):
    stream = claude_stream("p", "t" * 3000, "th", "Bash", "c", "r" * 5000, "a", "f")
    _, document, _ = render("markdown", stream * 3, tmp_path, "--max-bytes", "4096")
    assert document.count("Output limit of 4,096 bytes reached") == 1
    assert document.count("## Run ") == 6
    assert document.count("### Answer") == 3 and document.count("### Failed") == 3


GOLDEN = Path(__file__).parent / "golden"
# What pandoc writes of the transcripts: its own elements and the <a id>, <details> and
# <summary> ndagent writes. Prose keeps its Markdown, so links, lists and emphasis too.
PANDOC_ELEMENTS = {"h1", "h2", "h3", "h4", "h5", "h6", "p", "a", "code", "pre", "table",
                   "thead", "tbody", "tr", "th", "td", "details", "summary", "em", "strong",
                   "ul", "ol", "li", "blockquote", "hr", "br", "del", "div", "span", "input",
                   "html", "head", "body"}


@pytest.mark.skipif(shutil.which("pandoc") is None,
                    reason="no pandoc on PATH ('make pandoc' installs Debian's)")
def test_pandoc_renders_every_golden_markdown_transcript_as_written():
    """Every golden case's Markdown, one pandoc run for all (pandoc starts slowly): each
    document closes what it opens, so the documents one after another are read as
    each alone would be; the <details> blocks, the runs' anchors and headings are all
    there, and no element came from the stream."""
    documents = [path.read_text("utf-8") for path in
                 sorted(GOLDEN.glob("*/*/markdown.stdout"))]
    assert len(documents) > 50
    source = "".join(documents)
    done = subprocess.run(["pandoc", "-f", "gfm", "-t", "html"], input=source.encode(),
                          capture_output=True, timeout=300, check=True)
    tree = html5lib.HTMLParser(namespaceHTMLElements=False).parse(done.stdout.decode())
    elements = list(tree.iter())
    assert {element.tag for element in elements} <= PANDOC_ELEMENTS
    for element in elements:
        assert not {"src", "style"} & set(element.attrib), element.attrib
        assert not any(name.startswith("on") for name in element.attrib), element.attrib
    tags = [element.tag for element in elements]
    assert tags.count("details") == source.count("\n<details")
    assert tags.count("summary") == source.count("\n<summary>")
    runs = [element for element in elements if element.tag == "a"
            and element.get("id", "").startswith("run-")]
    assert len(runs) == source.count('\n<a id="run-')
    headings = ["".join(element.itertext()) for element in elements if element.tag == "h2"]
    assert sum(heading.startswith("Run ") for heading in headings) == len(runs)


@pytest.mark.parametrize("verb, suffix", [("markdown", "md"), ("html", "html")])
def test_split_writes_each_run_as_the_document_it_is_alone(verb, suffix, tmp_path):
    """--split DIR: a file per run, each what the verb writes of that run alone (but
    the run's number, counted across the output), its path on standard output."""
    folder = tmp_path / "runs"
    folder.mkdir()
    alone = []
    for number in (1, 2):
        path = tmp_path / f"input{number}.ndjson"
        path.write_bytes(claude_stream(*[f"v{number}"] * 8).split(b"\n{\"type\": \"system\"")[0]
                         + b"\n")
        alone.append(render_path(verb, path))
    status, out, _ = InProcess()(verb, b"", "--split", str(folder),
                                 str(tmp_path / "input1.ndjson"),
                                 str(tmp_path / "input2.ndjson"))
    names = [f"run-1-s1v1.{suffix}", f"run-2-s1v2.{suffix}"]
    assert status == 0 and out.decode() == "".join(f"{folder / name}\n" for name in names)
    assert sorted(os.listdir(folder)) == names
    for number, (name, document) in enumerate(zip(names, alone), 1):
        renumbered = document.replace("run-1", f"run-{number}").replace("Run 1 ", f"Run {number} ")
        assert (folder / name).read_text("utf-8") == renumbered


def render_path(verb, path):
    status, out, _ = InProcess()(verb, b"", str(path))
    assert status == 0
    return out.decode("utf-8")


def test_split_names_a_file_by_safe_characters_only_and_follows_no_link(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    stream = claude_stream(*["/../../x\\y\x00\u202e:*?"] * 8)
    _, out, _ = render("markdown", stream, tmp_path, "--split", str(folder))
    names = sorted(os.listdir(folder))
    assert names == ["run-1-s1_.._.._x_y_____.md", "run-2-s2_.._.._x_y_____.md"]
    assert out.splitlines() == [str(folder / name) for name in names]
    # A link where a file goes (planted before the run) is not followed: status 2.
    for name in names:
        os.unlink(folder / name)
    (folder / names[0]).symlink_to(tmp_path / "elsewhere")
    status, _, err = render("markdown", stream, tmp_path, "--split", str(folder))
    assert status == 2 and not (tmp_path / "elsewhere").exists()
    assert err.startswith(f"ndagent-markdown: {folder / names[0]}: error: ".encode())
    assert err.count(b"\n") == 1  # the file it could not write, named
    status, _, err = render("markdown", stream, tmp_path, "--split", str(tmp_path / "no"))
    assert status == 2 and b"no such directory" in err


def test_markdown_on_a_live_pipe_writes_each_piece_before_the_run_ends(tmp_path):
    """'agent | ndagent markdown': what is complete is written while the agent still
    runs, and a run cut off then still leaves its transcript, marked so."""
    agent = Path(__file__).parent / "fake_agents" / "agent.py"
    stream = Path(__file__).parent / "fixtures" / "logs" / "claude.ndjson"
    # All but the result, a line every 0.05 s, then the agent hangs: the run never ends.
    producer = subprocess.Popen([sys.executable, str(agent), str(stream), "--lines", "10",
                                 "--every", "0.05", "--then", "hang"], stdout=subprocess.PIPE)
    consumer = subprocess.Popen([command("markdown")], stdin=producer.stdout,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    producer.stdout.close()
    try:
        seen = b""
        deadline = time.monotonic() + 30
        while b"</details>" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([consumer.stdout], [], [], 1)
            if ready:
                seen += os.read(consumer.stdout.fileno(), 65536)
        assert b"<summary>read \xc2\xb7 <code>/home/dev/inventory/src/money.py</code>" in seen
        assert producer.poll() is None and consumer.poll() is None  # the run goes on
    finally:
        producer.kill()
        producer.wait()
    rest, _ = consumer.communicate(timeout=30)
    assert consumer.returncode == 1
    document = (seen + rest).decode("utf-8")
    assert document.index("</details>") < document.index("### Cut off")
    assert document.startswith("# Agent transcript\n") and "| Outcome | cut off |" in document


# Claude Code's (and Qwen Code's) deltas, which the whole lines repeat: a transcript
# holds them unread, and reads them only for a message that no whole line ends.

def _delta_stream(deltas, whole, ended):
    """A Claude run whose message streams ``deltas``, then (unless ``whole`` is None)
    comes whole as ``whole``; ended by a result when ``ended``."""
    def event(inner):
        return {"type": "stream_event", "event": inner, "session_id": "s",
                "parent_tool_use_id": None}

    lines = [{"type": "system", "subtype": "init", "session_id": "s", "tools": [],
              "model": "m", "claude_code_version": "2.1.0"},
             event({"type": "message_start", "message": {
                 "id": "msg_1", "role": "assistant", "content": [],
                 "usage": {"input_tokens": 1, "output_tokens": 1}}}),
             event({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}})]
    lines += [event({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": text}}) for text in deltas]
    if whole is not None:
        lines.append({"type": "assistant", "session_id": "s", "parent_tool_use_id": None,
                      "message": {"id": "msg_1", "role": "assistant",
                                  "content": [{"type": "text", "text": whole}]}})
    lines.append(event({"type": "message_stop"}))
    if ended:
        lines.append({"type": "result", "subtype": "success", "is_error": False,
                      "duration_ms": 5, "num_turns": 1, "result": whole or "",
                      "session_id": "s", "total_cost_usd": 0.01})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _every_way(verb, stream, tmp_path, monkeypatch):
    """The transcript of ``stream``: the same with and without the prefilter, in one
    process and in parts (what the test patched stays patched in each)."""
    from ndagent.frame import Command

    path = tmp_path / "run.ndjson"
    path.write_bytes(stream)
    found = InProcess()(verb, b"", str(path))
    with monkeypatch.context() as patch:
        patch.setattr(Command, "prefilter", False)
        assert InProcess()(verb, b"", str(path))[:2] == found[:2]
    with monkeypatch.context() as patch:
        patch.setenv("NDAGENT_PARTS", "always")
        assert InProcess()(verb, b"", str(path))[:2] == found[:2]
    return found


def test_a_message_s_text_is_its_whole_line_s_and_the_deltas_only_what_none_ends(
        tmp_path, monkeypatch):
    # The whole line says otherwise than its deltas: the transcript shows the line.
    status, out, _ = _every_way("markdown", _delta_stream(["Draft ", "answer."], "Final answer.",
                                                          True), tmp_path, monkeypatch)
    assert status == 0 and b"Final answer." in out and b"Draft" not in out
    # Cut off before the whole line: what the deltas said is shown.
    status, out, _ = _every_way("markdown", _delta_stream(["Half ", "an answer"], None, False),
                                tmp_path, monkeypatch)
    assert status == 1 and b"Half an answer" in out and b"### Cut off" in out


def test_deltas_held_past_the_bound_are_read_as_they_came(tmp_path, monkeypatch):
    """Past MAX_HELD_ITEMS, the held deltas are read: a stream whose whole lines repeat
    them gives the same transcript."""
    from ndagent.formats import base

    stream = _delta_stream(["one ", "two ", "three"], "one two three", True)
    expected = _every_way("html", stream, tmp_path, monkeypatch)
    monkeypatch.setattr(base, "MAX_HELD_ITEMS", 1)
    assert _every_way("html", stream, tmp_path, monkeypatch) == expected


@pytest.mark.parametrize("bound", [("MAX_HELD_ITEMS", 3), ("MAX_HELD_BYTES", 100)])
def test_a_run_that_held_lines_begin_begins_before_what_they_say(bound, tmp_path,
                                                                   monkeypatch):
    """After a result, a run begun by a stretch of lines passed over that is past a
    bound of what is held on its own: its start comes before their text, however they
    are read (the text was handed to no run)."""
    from ndagent.formats import base

    monkeypatch.setattr(base, *bound)
    first = _delta_stream([], "First.", True)
    second = _delta_stream(["Hello ", "there", ", ", "world"], None, True).split(b"\n", 1)[1]
    status, out, err = _every_way("markdown", first + second, tmp_path, monkeypatch)
    assert status == 0, err
    assert b"## Run 2" in out and b"Hello there, world" in out


def test_a_delta_appended_to_a_line_cut_short_is_read_however_the_lines_are(tmp_path,
                                                                              monkeypatch):
    """A delta line cut short and the next appended to it (a stream cut off, then
    another): the appended delta is read as decoding the line finds it, whether the
    prefilter passed the line over or not."""
    lines = _delta_stream(["Lost", "Found"], None, True).split(b"\n")
    cut = next(index for index, line in enumerate(lines) if b'"Lost"' in line)
    lines[cut:cut + 2] = [lines[cut][:40] + lines[cut + 1]]
    status, out, err = _every_way("markdown", b"\n".join(lines), tmp_path, monkeypatch)
    assert b"Found" in out and b"Lost" not in out, err


def test_a_run_cut_off_ends_at_its_last_line_decoded_though_held_lines_came_before(
        tmp_path, monkeypatch):
    """A run cut off after a held line and another agent's object: it ends at the
    object's line, the last decoded, whether the held line was decoded with it or
    passed over and read at the end."""
    stream = _delta_stream(["a"], "a", False) + b'{"type":"turn.started"}\n'
    status, out, _ = _every_way("markdown", stream, tmp_path, monkeypatch)
    last = stream.count(b"\n")
    assert status == 1 and f"(last line {last})".encode() in out


def test_deltas_that_no_line_of_text_repeats_are_read(tmp_path, monkeypatch):
    """An assistant line with no text (a tool call alone, or no message at all) does not
    repeat the held deltas: they are read, not dropped."""
    stream = _delta_stream(["Let me ", "look."], None, False)
    call = {"type": "assistant", "session_id": "s", "parent_tool_use_id": None,
            "message": {"id": "msg_1", "role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}}
    result = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5,
              "num_turns": 1, "result": "", "session_id": "s", "total_cost_usd": 0.01}
    for line in (call, {"type": "assistant", "message": None, "session_id": "s"}):
        tail = (json.dumps(line) + "\n" + json.dumps(result) + "\n").encode()
        status, out, err = _every_way("markdown", stream + tail, tmp_path, monkeypatch)
        assert status == 0 and b"Let me look." in out, err


def test_a_call_left_open_behind_too_much_is_shown_pending(monkeypatch):
    """What comes after a call still open waits for its end, up to OPEN_CALL_CHARS:
    past that, the call is written as it stands (pending, warned once) and what follows
    it is written as it completes, so that memory stays flat under a Task left open."""
    monkeypatch.setattr(transcript, "OPEN_CALL_CHARS", 30_000)
    monkeypatch.setattr(transcript, "KEEP_CHARS", 10_000)
    lines = [b'{"type":"system","subtype":"init","session_id":"s","tools":[],"model":"m"}',
             b'{"type":"assistant","message":{"id":"m0","role":"assistant","content":[{'
             b'"type":"tool_use","id":"task","name":"Task","input":{"prompt":"p"}}]},'
             b'"parent_tool_use_id":null,"session_id":"s"}']
    for index in range(20):
        lines.append(b'{"type":"assistant","message":{"id":"m%d","role":"assistant",'
                     b'"content":[{"type":"tool_use","id":"c%d","name":"Bash","input":{'
                     b'"command":"ls"}}]},"parent_tool_use_id":"task","session_id":"s"}'
                     % (index + 1, index))
        lines.append(b'{"type":"user","message":{"role":"user","content":[{"type":'
                     b'"tool_result","tool_use_id":"c%d","content":"%s"}]},'
                     b'"parent_tool_use_id":"task","session_id":"s"}' % (index, b"r" * 5000))
    lines.append(b'{"type":"user","message":{"role":"user","content":[{"type":"tool_result",'
                 b'"tool_use_id":"task","content":"done"}]},"parent_tool_use_id":null,'
                 b'"session_id":"s"}')
    status, out, err = InProcess()("markdown", b"\n".join(lines) + b"\n")
    assert err.count(b"a call stayed open while more than 30,000 characters") == 1, err
    assert b"<summary>task \xc2\xb7 pending \xc2\xb7 Task</summary>" in out
    assert out.count(b"<summary>shell") == 20  # every subagent call, inside it or after
