"""The format protocol (ndagent.formats.base.Format): a toy agent, made here from the
template module with event names of its own and registered through the protocol
alone, is read by every verb; and a contract that every registered format keeps,
checked on every format's own fixtures."""

import importlib.util
from pathlib import Path

import orjson
import pytest
from conftest import InProcess

import ndagent
from ndagent import formats, options
from ndagent.decoder import Event, decode_line
from ndagent.figures import figure
from ndagent.formats.base import Format
from ndagent.model import Note, RunEnd, RunStart, ToolEnd
from ndagent.selection import Selection

TESTS = Path(__file__).resolve().parent
TEMPLATE = Path(ndagent.__file__).parent / "formats" / "template.py"
NEEDS = [frozenset(), frozenset({"text"}), frozenset({"tools"}), frozenset({"tool_ends"}),
         frozenset({"ends"}), frozenset({"native"}), frozenset({"text", "tools", "ends"}),
         frozenset({"text", "tools", "ends", "transcript"})]


def toy_format():
    """The template, filled in as a new agent's module would be: its own name and its
    own event types ("toy.hello", ...)."""
    source = TEMPLATE.read_text(encoding="utf-8")
    for old, new in (('"template"', '"toy"'), ('f"template.{kind}"', 'f"toy.{kind}"'),
                     ('("start", "text", "call", "result", "end")',
                      '("hello", "say", "use", "used", "bye")'),
                     ("b'\"template.start\"'", "b'\"toy.hello\"'"),
                     ('"Template agent"', '"Toy agent"'),
                     ('"template-agent --json"', '"toy --json"')):
        assert old in source, old
        source = source.replace(old, new)
    spec = importlib.util.spec_from_loader("toy_format", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, "toy_format.py", "exec"), module.__dict__)  # noqa: S102 - our own
    return module.FORMAT


def toy_lines(answer="All done."):
    """One toy run: a start, text, a call that succeeds, the end with usage."""
    return [{"type": "toy.hello", "session": "s1", "model": "toy-1"},
            {"type": "toy.say", "text": "Reading a.py. "},
            {"type": "toy.use", "id": "c1", "tool": "read", "input": {"path": "a.py"}},
            {"type": "toy.used", "id": "c1", "tool": "read", "ok": True, "output": "print(1)"},
            {"type": "toy.say", "text": answer},
            {"type": "toy.bye", "ok": True, "answer": answer, "usage": {"in": 5, "out": 2}}]


def stream(lines):
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


@pytest.fixture
def toy():
    found = toy_format()
    formats.register(found)
    try:
        yield found
    finally:
        formats.unregister(found.name)


in_process = InProcess()


def test_the_toy_agent_is_read_by_every_verb(toy, tmp_path):
    path = tmp_path / "toy.ndjson"
    data = stream(toy_lines() + toy_lines("Second."))
    path.write_bytes(data)
    status, out, err = in_process("json", b"", path)
    assert (status, err) == (0, b"")
    assert [orjson.loads(line)["answer"] for line in out.splitlines()] == ["All done.",
                                                                          "Second."]
    assert in_process("result", b"", path) == (0, b"All done.\nSecond.\n", b"")
    assert in_process("text", b"", "-v", path)[1] == b"Read file: a.py\nRead file: a.py\n"
    status, out, err = in_process("tools", b"", path)
    records = [orjson.loads(line) for line in out.splitlines()]
    assert [(record["kind"], record["status"], record["agent"]) for record in records] == [
        ("read", "success", "toy")] * 2
    assert in_process("validate", b"", path)[:2] == (
        0, f"{path}: 12 events, 2 runs, 0 errors, 0 warnings\n".encode())
    status, out, _ = in_process("stats", b"", "--format", "ndjson", path)
    figures = orjson.loads(out)
    assert status == 0 and figures["runs"]["ok"] == 2 and figures["tokens"]["output"] == 2 * 2


def test_the_toy_agent_is_told_named_and_cut_like_any_other(toy, tmp_path):
    path = tmp_path / "toy.ndjson"
    path.write_bytes(stream(toy_lines()))
    assert toy.name in formats.names()
    assert "toy" in in_process("json", b"", "--help")[1].decode()
    cut = stream(toy_lines())[:-20]
    status, _, err = in_process("result", cut)
    assert status == 1 and b"run ended without an end event" in err
    claude = (TESTS / "golden" / "claude" / "success-tools" / "input.ndjson").read_bytes()
    status, _, err = in_process("json", b"", "--agent", "toy", "-")
    assert status == 1
    status, _, err = in_process("json", claude, "--agent", "toy")
    assert status == 1 and b"a claude stream, not toy (--agent toy)" in err


def test_a_format_declares_what_goes_together():
    fields = {"name": "x", "title": "X", "invocation": "x", "decides": bool,
              "may_decide": bool, "markers": lambda needs: None, "run_starts": [(("type", "x"),)],
              "reader": object,
              "checks": {}, "run_end": "an end"}
    Format(**fields)
    declared = Format(**fields, extra_figures={"laps": "the laps of the run"})
    assert "laps, the laps of the run" in declared.help["stats"]
    for wrong in ({"name": "X Y"}, {"split_needle": b"x"}, {"help": {"nosuchverb": "text"}},
                  {"extra_figures": {"Two words": "a name that is no word"}}):
        with pytest.raises(ValueError):
            Format(**{**fields, **wrong})
    with pytest.raises(TypeError):
        formats.register(object())


def test_what_is_made_of_the_formats_for_each_input_follows_their_registration():
    """Detector's formats and a format's OtherAgents are made once for all inputs, and
    made again when a format is registered or taken out."""
    claude = formats.get("claude")
    assert formats.OtherAgents.of(claude) is formats.OtherAgents.of(claude)
    found = toy_format()
    formats.register(found)
    try:
        assert found in formats.OtherAgents.of(claude).others
        assert found in formats.Detector().modules
    finally:
        formats.unregister(found.name)
    assert found not in formats.OtherAgents.of(claude).others
    assert found not in formats.Detector().modules


# The contract, over every format and its fixtures.

def fixture_lines(found):
    """The decoded objects of the format's own fixtures: its golden inputs (the toy's:
    its runs), each input a list."""
    if found.name == "toy":
        return [toy_lines() + toy_lines("again")]
    inputs = []
    for path in sorted((TESTS / "golden" / found.name).glob("*/input.ndjson")):
        objects = [decode_line(line) for line in path.read_bytes().splitlines()]
        inputs.append([value for value in objects if value.__class__ is dict])
    assert inputs, f"no fixtures for {found.name}"
    return inputs


def every_format():
    return [*formats.all_formats(), toy_format()]


@pytest.mark.parametrize("found", every_format(), ids=lambda found: found.name)
def test_decides_is_exclusive_and_said_by_may_decide(found):
    others = [other for other in every_format() if other.name != found.name]
    for objects in fixture_lines(found):
        for data in objects:
            kind = data.get("type")
            assert not found.decides(data) or found.may_decide(kind), data
            assert not any(other.decides(data) for other in others), (found.name, data)


def decisive_samples(found):
    """One decisive object of each type and key set in the format's fixtures."""
    samples = {}
    for objects in fixture_lines(found):
        for data in objects:
            if found.decides(data):
                samples.setdefault((str(data.get("type")), frozenset(data)), data)
    return list(samples.values())


def test_an_object_decisive_for_the_reader_s_agent_is_none_of_another_s():
    """The keys of two agents' objects of one type, merged: where such an object is
    decisive for the reader's agent, the screen of another agent's objects finds no
    other agent for it, whichever other agents' tests it runs, in whatever order
    (OtherAgents.screen leaves the reader's own test out before a single other one)."""
    samples = {found.name: decisive_samples(found) for found in every_format()}
    for found in every_format():
        screens = formats.OtherAgents(found)
        for other in every_format():
            if other is found:
                continue
            for mine in samples[found.name]:
                for theirs in samples[other.name]:
                    if mine.get("type") != theirs.get("type"):
                        continue
                    for data in ({**mine, **theirs}, {**theirs, **mine}):
                        if not found.decides(data):
                            continue
                        kind = data.get("type")
                        first = next((agent for decides, agent in screens.screen(
                            kind if kind.__class__ is str else None) if decides(data)),
                            None)
                        assert first is None, (found.name, first.name, data)


def reader_events(found, objects):
    """(object index, model event) of a Reader with checks over the objects."""
    reader = found.reader("x", True, None)
    events = []
    for index, data in enumerate(objects):
        item = Event("x", index + 1, data)
        events += [(index, event) for event in reader.event(item)]
    return events, reader.finish()


@pytest.mark.parametrize("found", every_format(), ids=lambda found: found.name)
def test_the_markers_take_every_line_that_begins_or_ends_a_run(found):
    for objects in fixture_lines(found):
        events, _ = reader_events(found, objects)
        bounds = {index for index, event in events
                  if event.__class__ is RunStart and event.announced
                  or event.__class__ is RunEnd and not event.cutoff}
        for needs in NEEDS:
            markers = found.markers(needs)
            if markers is None:
                continue
            selection = Selection(markers)
            assert all(selection.wants(objects[index]) for index in bounds), (needs, found)


@pytest.mark.parametrize("found", every_format(), ids=lambda found: found.name)
def test_begins_run_holds_of_every_object_a_run_begins_with(found):
    """``begins_run`` is true of each object at which the Reader begins a run it is told
    of (so that such an object, the first of a stream appended to a line cut short, is
    read), and the markers select each object it is true of (so that the prefilter
    passes over no line that ends with one)."""
    told = at_end = 0
    for objects in fixture_lines(found):
        events, last = reader_events(found, objects)
        starts = {index for index, event in events
                  if event.__class__ is RunStart and event.announced}
        assert all(found.begins_run(objects[index]) for index in starts), found.name
        told += len(starts)
        at_end += sum(event.__class__ is RunStart for event in last)
    # A format whose runs are known only at the end of the input (a session file whose
    # later lines may take back earlier ones) begins them all there.
    assert told or at_end, f"no run of {found.name}'s fixtures begins with an object that tells it"
    for needs in NEEDS:
        markers = found.markers(needs)
        if markers is not None:
            wants = Selection(markers).wants
            assert all(wants(dict(marker)) for marker in found.run_starts), (needs, found)


@pytest.mark.parametrize("found", every_format(), ids=lambda found: found.name)
def test_a_cut_falls_only_between_runs(found):
    """Where ``splits_between`` allows a cut, the run before ended at the line before
    it and the next begins at the line after it, holding the needle."""
    if found.splits_between is None:
        return
    for objects in fixture_lines(found):
        events, _ = reader_events(found, objects)
        ends = {index for index, event in events if event.__class__ is RunEnd}
        starts = {index for index, event in events if event.__class__ is RunStart}
        for index in range(1, len(objects)):
            for checks in (False, True):
                if found.splits_between(objects[index - 1], objects[index], checks):
                    assert index - 1 in ends and index in starts, (found.name, index)
                    assert found.split_needle in orjson.dumps(objects[index])


@pytest.mark.parametrize("found", every_format(), ids=lambda found: found.name)
def test_every_note_is_a_check_the_format_declares(found):
    for objects in fixture_lines(found):
        events, last = reader_events(found, objects)
        every = [event for _, event in events] + last
        notes = [event for event in every if event.__class__.__name__ == "Note"]
        assert {note.check for note in notes} <= set(found.checks), found.name
        # The end of the input ends the run left open (and the calls it kept waiting
        # for an end), and may say what the whole input lacks; a format whose runs are
        # known only then makes them all there.
        if not any(event.__class__ is RunStart for event in last):
            assert all(event.__class__ in (RunEnd, Note, ToolEnd) for event in last)


@pytest.mark.parametrize("found", every_format(), ids=lambda found: found.name)
def test_a_run_s_extra_figures_are_those_its_format_declares(found):
    """``RunEnd.extra`` holds only names of ``extra_figures``, each a number or None; and
    a format that declares a figure reports it for some run of its fixtures."""
    reported = set()
    for objects in fixture_lines(found):
        events, last = reader_events(found, objects)
        for event in [event for _, event in events] + last:
            if event.__class__ is RunEnd and event.extra is not None:
                assert event.extra.keys() <= found.extra_figures.keys(), found.name
                assert all(value is None or figure(value) is not None
                           for value in event.extra.values()), event.extra
                reported |= {name for name, value in event.extra.items() if value is not None}
    assert reported == found.extra_figures.keys(), found.name


def test_the_formats_that_share_an_envelope_are_those_whose_objects_it_holds():
    """The formats ``sharing_envelope`` names for the format that leans (their lines read
    by one module) are exactly those some of whose fixture objects are in its envelope,
    and detection's paragraph of --help names each of them."""
    found = formats.leaner()
    if found is None:
        return
    in_envelope = {each.name for each in formats.all_formats()
                   if any(found.leans(data) for objects in fixture_lines(each)
                          for data in objects)}
    sharing = formats.sharing_envelope(found)
    assert {each.name for each in sharing} == in_envelope
    said = " ".join(options.agents_help().split())
    rule = said[said.index("objects or in the whole input, "):said.index("otherwise")]
    assert all(each.title in rule for each in sharing) and f"{found.title}'s" in rule
