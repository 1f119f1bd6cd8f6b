"""ndagent html in a real browser (headless Chromium, tests/browser.py): each page loads
with no request made and no console message, and shows its answer; a hostile stream's
strings, in every field of every sample agent's run, stand as visible text and run
nothing.  Without Chromium these tests skip ('make chromium' installs Debian's, 'make
browser' runs them on every golden case; 'make test' on one case of each sample agent)."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from browser import SAMPLES, Sink, chromium, load
from conftest import FIXTURES, command

from ndagent.terminal import escape_prose

html5lib = pytest.importorskip("html5lib")
pytestmark = pytest.mark.skipif(
    chromium() is None, reason="no chromium on PATH: 'make chromium' installs Debian's "
                               "package, 'make browser' then runs these tests")

GOLDEN = Path(__file__).parent / "golden"
# Every golden case under 'make browser' (NDAGENT_BROWSER=all), else the first case of
# each sample agent, which keeps 'make test' short.
ALL = sorted(GOLDEN.glob("*/*/html.stdout"))
FIRST = {}
for _page in ALL:
    if _page.parent.parent.name in SAMPLES:
        FIRST.setdefault(_page.parent.parent.name, _page)
PAGES = ALL if os.environ.get("NDAGENT_BROWSER") == "all" else sorted(FIRST.values())

# The elements ndagent writes (tests/test_transcript.py checks its output for them): a
# DOM with any other one after loading was changed by something that ran.
ELEMENTS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "code",
            "section", "dl", "dt", "dd", "span", "div", "details", "summary", "pre", "nav",
            "ol", "li", "a"}


@pytest.fixture(scope="module")
def sink():
    with Sink() as sink:
        yield sink


def body_text(dom):
    tree = html5lib.HTMLParser(namespaceHTMLElements=False).parse(dom)
    return tree, "".join(tree.find("body").itertext())


def answers(page):
    """The answer texts of a page, as ndagent wrote them (its .answer blocks)."""
    tree = html5lib.HTMLParser(namespaceHTMLElements=False).parse(page.read_text("utf-8"))
    return ["".join(node.itertext()) for node in tree.iter("div")
            if "answer" in node.get("class", "").split()]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: f"{page.parent.parent.name}/"
                                                        f"{page.parent.name}")
def test_a_golden_page_loads_with_no_request_no_console_message_and_its_answer(page, sink,
                                                                                 tmp_path):
    copy = tmp_path / "page.html"
    copy.write_bytes(page.read_bytes())
    before = len(sink.seen)
    dom, console = load(copy, sink)
    assert sink.seen[before:] == [] and console == []
    tree, text = body_text(dom)
    assert {element.tag for element in tree.iter()} <= ELEMENTS
    for answer in answers(page):
        assert answer in text
    if (page.parent / "html.status").read_text().strip() == "0":
        assert "Answer" in text


# Markup that fetches, runs or restyles if it is ever markup (every URL goes to the
# sink, the browser's proxy), and what closes a block or turns text around.
HOSTILE = ("<img src=http://sink.example/img.png onerror=document.body.dataset.ran=1>"
           "<script>document.body.dataset.ran=1;fetch('http://sink.example/js')</script>"
           "<link rel=stylesheet href=http://sink.example/css.css>"
           "<iframe src=http://sink.example/frame></iframe><a href=\"javascript:alert(1)\">x</a>"
           "<style>@import url(http://sink.example/i.css);body{background:\\75 rl(x)}</style>"
           "</details></summary></pre></div>]]>\x1b[31m\u202e\u2066`````\n```\n")
# The keys whose values the agents' formats tell events apart by: kept, so that the
# stream is still each agent's; every other string value ends with HOSTILE.
STRUCTURE = {"type", "subtype", "role", "status", "timestamp", "timestamp_ms"}


def hostile(value, key=None):
    if isinstance(value, dict):
        return {name: hostile(item, name) for name, item in value.items()}
    if isinstance(value, list):
        return [hostile(item, key) for item in value]
    if isinstance(value, str) and key not in STRUCTURE:
        return value + HOSTILE
    return value


@pytest.mark.parametrize("agent", SAMPLES)
def test_a_hostile_stream_is_visible_text_and_runs_nothing(agent, sink, tmp_path):
    lines = (FIXTURES / "logs" / f"{agent}.ndjson").read_text("utf-8").splitlines()
    stream = "".join(json.dumps(hostile(json.loads(line))) + "\n" for line in lines if line)
    page = tmp_path / "page.html"
    with page.open("wb") as out:
        subprocess.run([command("html")], input=stream.encode(), stdout=out, timeout=60,
                       check=False)
    before = len(sink.seen)
    dom, console = load(page, sink)
    assert sink.seen[before:] == [] and console == []
    tree, text = body_text(dom)
    assert {element.tag for element in tree.iter()} <= ELEMENTS
    assert "data-ran" not in dom and tree.find("body").get("data-ran") is None
    shown = escape_prose(HOSTILE)
    assert text.count(shown) >= 3  # the prompt, a message, a tool's argument or result


def test_the_sink_and_the_console_see_a_page_that_does_fetch_and_run(sink, tmp_path):
    """The control: the hostile markup written as markup, with no policy, is seen."""
    page = tmp_path / "page.html"
    page.write_text(f"<!DOCTYPE html><html><body>{HOSTILE}"
                    "<script>console.error('ran')</script></body></html>")
    before = len(sink.seen)
    dom, console = load(page, sink)
    assert any("/img.png" in line for line in sink.seen[before:]), sink.seen[before:]
    assert any('"ran"' in line for line in console)
    assert "data-ran" in dom
