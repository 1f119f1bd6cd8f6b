"""Every registered format's golden inputs as material for properties stated over all
formats: each format's inputs, those a cut may fall anywhere in the last line of (the
line that ends their last run) and those another stream may be appended to the cut of
(their first object begins a run), their ids made each copy's own, and their lines
spelt with the keys in any order."""

from pathlib import Path

import orjson
from hypothesis import strategies as st

from ndagent import formats
from ndagent.decoder import Event, decode_line
from ndagent.model import RunEnd

GOLDEN = Path(__file__).resolve().parent / "golden"


def golden_inputs(found):
    """The bytes of each golden input of the format ``found``, in case order."""
    return [path.read_bytes() for path in sorted((GOLDEN / found.name).glob("*/input.ndjson"))]


def objects_of(data):
    """The decoded objects of each line, or None when a line holds no JSON object."""
    objects = [decode_line(line) for line in data.splitlines()]
    return objects if objects and all(each.__class__ is dict for each in objects) else None


def ends_its_last_run(found, data):
    """Whether every line of ``data`` is an object and the last one is the event that
    ends its last run: the Reader ends a run there, not cut off, and holds none after."""
    objects = objects_of(data)
    if objects is None:
        return False
    reader = found.reader("x", False, None)
    ended_last = False
    for index, each in enumerate(objects):
        ended_last = any(event.__class__ is RunEnd and not event.cutoff
                         for event in reader.event(Event("x", index + 1, each)))
    return ended_last and not reader.finish()


def begins_a_run(found, data):
    """Whether the first line of ``data`` is an object with which the agent begins a run
    (so that it begins a stream appended to a line cut short)."""
    objects = objects_of(data)
    return objects is not None and found.begins_run(objects[0])


def with_own_ids(data, tag):
    """``data`` with ``tag`` added to the end of every id it holds (a string of 4 or more
    characters under a key ending in "id", wherever it stands): copies tagged
    differently share no session, thread, message or call, and what the agents test of
    an id (its prefix, two ids equal) still holds."""
    assert tag not in data, tag
    found = set()
    for each in objects_of(data) or ():
        _ids(each, found)
    for value in sorted(found, key=len, reverse=True):
        data = data.replace(orjson.dumps(value), orjson.dumps(value + tag.decode()))
    return data


def _ids(value, found):
    if value.__class__ is dict:
        for key, each in value.items():
            if key.lower().endswith("id") and each.__class__ is str and len(each) >= 4:
                found.add(each)
            else:
                _ids(each, found)
    elif value.__class__ is list:
        for each in value:
            _ids(each, found)


def cut_and_appended(tag):
    """(a format, an input of it whose last line ends its last run, an input of it that
    begins with a run), with ``tag`` in their ids, then a letter of each (the two may be
    one input: their calls must not pair with each other): any registered stream
    format's.  Not a session file's: those are not appended one to another, and their
    run without an end is ended by the next prompt (ok) or by the file's end (open), so
    what follows a cut rightly changes the cut run's outcome."""
    streams = [found for found in formats.all_formats() if found.form == "stream"]
    return st.sampled_from(streams).flatmap(lambda found: _pairs(found, tag))


def _pairs(found, tag):
    """The pairs of ``found``'s inputs, or no example where it has none: a first input
    of two lines or more (a cut in its last line leaves a run begun), and a second."""
    inputs = golden_inputs(found)
    firsts = [with_own_ids(data, tag + b"a") for data in inputs
              if data.count(b"\n") > 1 and ends_its_last_run(found, data)]
    seconds = [with_own_ids(data, tag + b"b") for data in inputs if begins_a_run(found, data)]
    if not firsts or not seconds:
        return st.nothing()
    return st.tuples(st.just(found), st.sampled_from(firsts), st.sampled_from(seconds))


@st.composite
def respelt(draw):
    """One to three golden inputs of any registered format, one after another, each
    line that holds an object written again with its keys in another order."""
    found = draw(st.sampled_from(formats.all_formats()))
    inputs = golden_inputs(found)
    lines = []
    for data in draw(st.lists(st.sampled_from(inputs), min_size=1, max_size=3)):
        for line in data.splitlines():
            value = decode_line(line)
            if value.__class__ is dict and draw(st.booleans()):
                pairs = draw(st.permutations(list(value.items())))
                line = b"{" + b",".join(orjson.dumps(key) + b":" + orjson.dumps(each)
                                        for key, each in pairs) + b"}"
            lines.append(line)
    return b"".join(line + b"\n" for line in lines)
