"""The line decoder: framing, bad lines as values, chunk independence, the prefilter."""

import io
import json
import os
import tempfile
from unittest import mock

import orjson
import pytest
from conftest import examples, fixture, lines_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent import decoder
from ndagent.decoder import (
    BadLine,
    Event,
    RawNumber,
    Skipped,
    Unreadable,
    _Lines,
    batches,
    decode_line,
    encode_line,
    encode_value,
    iter_items,
)
from ndagent.selection import Selection
from ndagent.sources import Loaded


def selection(names):
    """The Selection of event names (``TYPE``, ``TYPE/SUBTYPE``, or ``nested.TYPE``: the
    type of the object under the key ``nested``), the run boundaries (system, result)
    added, as the Cursor format makes them."""
    from ndagent.selection import Selection

    markers = []
    for name in sorted(set(names) | {"system", "result"}):
        if name.startswith("nested."):
            markers.append(((("nested", "type"), name.removeprefix("nested.")),))
            continue
        kind, _, subtype = name.partition("/")
        markers.append((("type", kind), ("subtype", subtype)) if subtype else (("type", kind),))
    return Selection(markers)


def items(data, want=None, chunk_size=1 << 18):
    out = []
    for batch in batches([io.BytesIO(data)], want, chunk_size):
        out.extend(batch)
    return out


def summary(found):
    return [(type(i).__name__, i.line, getattr(i, "reason", None),
             getattr(i, "data", None)) for i in found]


VENDOR = fixture("vendor-example.ndjson").read_bytes()


def test_vendor_example_gives_ten_events_numbered_from_one():
    found = items(VENDOR)
    assert [type(i) for i in found] == [Event] * 10
    assert [i.line for i in found] == list(range(1, 11))
    assert found[0].type == "system" and found[-1].type == "result"


def test_crlf_bom_and_blank_lines_are_accepted_and_numbered():
    data = b"\xef\xbb\xbf" + VENDOR.replace(b"\n", b"\r\n\r\n  \n")
    found = items(data)
    assert [i.line for i in found] == list(range(1, 30, 3))
    assert [i.data for i in found] == [i.data for i in items(VENDOR)]


def test_a_bom_is_stripped_at_the_start_of_each_input(tmp_path):
    one, two = tmp_path / "a", tmp_path / "b"
    one.write_bytes(b"\xef\xbb\xbf" + VENDOR)
    two.write_bytes(b"\xef\xbb\xbf" + VENDOR)
    found = list(iter_items([one, two]))
    assert [type(i) for i in found] == [Event] * 20
    assert {i.source for i in found} == {str(one), str(two)}


def test_a_non_json_line_is_a_value_and_its_neighbours_are_kept():
    lines = VENDOR.splitlines(keepends=True)
    data = b"".join(lines[:3] + [b"Update available: 2026.01.28\n"] + lines[3:])
    found = items(data)
    bad = [i for i in found if isinstance(i, BadLine)]
    assert [b.line for b in bad] == [4]
    assert bad[0].reason.startswith("not JSON: unexpected character")
    assert [i.data for i in found if isinstance(i, Event)] == [i.data for i in items(VENDOR)]


@pytest.mark.parametrize("line, reason", [
    (b"[1, 2]", "not a JSON object but an array"),
    (b'"text"', "not a JSON object but a string"),
    (b"null", "not a JSON object but a literal"),
    (b"42", "not a JSON object but a number"),
    (b'{"type": "user", "x": "\xff\xfe"}', "not valid UTF-8"),
    (b'{"a": NaN}', "not JSON: "),
    (b'{"a": 1}{"b": 2}', "not JSON: "),
    (b'{"a":' * 5000 + b"1" + b"}" * 5000, "not JSON: "),
], ids=["array", "string", "null", "number", "utf8", "nan", "two", "deep"])
def test_bad_lines_say_why(line, reason):
    value = decode_line(line)
    assert type(value) is str
    assert value.startswith(reason) and len(value) > len("not JSON: ")


def test_a_cut_off_last_line_is_named_as_such():
    data = VENDOR[:-40]
    found = items(data)
    assert summary(found[-1:]) == [
        ("BadLine", 10, "truncated line: the stream was cut off?", None)]


def test_a_last_line_without_newline_is_an_event():
    found = items(VENDOR.rstrip(b"\n"))
    assert [type(i) for i in found] == [Event] * 10


def test_lone_surrogates_are_decoded_as_replacement_characters():
    event = decode_line(b'{"type":"assistant","t":"a\\ud800b","\\udc00":1}')
    assert event == {"type": "assistant", "t": "a\ufffdb", "\ufffd": 1}


@pytest.mark.parametrize("number", [b"%d" % 2 ** 70, b"%d" % (-(2 ** 63) - 1), b"%d" % 10 ** 30,
                                    b"9" * 5000, b"-" + b"7" * 4301])
def test_integers_beyond_64_bits_are_kept_as_written_on_request(number):
    line = b'{"n": %s, "s": "12345678901234567890"}' % number
    value = decode_line(line, exact=True)
    assert value == {"n": RawNumber(number.decode()), "s": "12345678901234567890"}
    assert encode_line(value) == b'{"n":%s,"s":"12345678901234567890"}\n' % number
    assert type(decode_line(line)["n"]) in (int, float, RawNumber)


@pytest.mark.parametrize("number", [2 ** 63 - 1, -(2 ** 63), 2 ** 64 - 1, 10 ** 18])
def test_integers_of_64_bits_stay_integers_when_read_exactly(number):
    assert decode_line(b'{"n": %d}' % number, exact=True) == {"n": number}


@pytest.mark.parametrize("number", [b"1e400", b"-2.5E+999", b"1" * 400 + b".5"])
def test_floats_beyond_a_double_are_kept_as_written(number):
    value = decode_line(b'{"f": %s}' % number)
    assert value == {"f": RawNumber(number.decode())}
    assert encode_line(value) == b'{"f":%s}\n' % number


def test_raw_numbers_survive_the_deep_nesting_fallback():
    line = b'{"a":' * 300 + b"1" * 30 + b"}" * 300
    assert encode_line(decode_line(line, exact=True)) == line + b"\n"


def test_many_raw_numbers_on_the_deep_nesting_fallback_are_each_put_back():
    """The fallback puts the numbers back in one pass over its text (a search of the
    whole text for each number was quadratic: 20 000 of them took seconds)."""
    numbers = b",".join(b"%d" % (2 ** 70 + index) for index in range(20_000))
    line = b'{"a":' * 300 + b"[" + numbers + b"]" + b"}" * 300
    assert encode_line(decode_line(line, exact=True)) == line + b"\n"


@settings(max_examples=80, deadline=None)
@given(kept=st.sampled_from([b'{"a":' * 300 + b"1" + b"}" * 300, b"%d" % 2 ** 70, b"[1e400]",
                             b'{"s":"a\\ud800b"}', b'{"x":[1,2.5,"y",null]}']),
       beside=st.sampled_from([b"[" * 300 + b"]" * 300, b"%d" % 2 ** 70, b"1e400", b'"z"']))
def test_a_value_kept_as_its_json_is_written_as_the_value_itself(kept, beside):
    """``encode_value`` keeps a value as its JSON; written inside another value, on the
    fast path or the slow one (deep nesting, numbers beyond 64 bits), it gives the bytes
    the decoded value gives."""
    value, other = decode_line(b'{"v":%s}' % kept, exact=True)["v"], decode_line(
        b'{"v":%s}' % beside, exact=True)["v"]
    if beside == b"%d" % 2 ** 70:
        other = 2 ** 70  # a computed integer beyond 64 bits: orjson refuses it
    assert encode_line([encode_value(value), other]) == encode_line([value, other])


def test_a_line_of_tens_of_megabytes_is_read_whole():
    text = "x" * (24 << 20)
    data = b'{"type":"assistant","text":"' + text.encode() + b'"}\n{"type":"result"}\n'
    found = items(data, chunk_size=1 << 16)
    assert [i.type for i in found] == ["assistant", "result"]
    assert len(found[0].data["text"]) == len(text)


def test_unreadable_inputs_are_values_and_the_rest_is_read(tmp_path):
    found = list(iter_items([tmp_path / "missing", tmp_path, fixture("vendor-example.ndjson")]))
    assert [type(i) for i in found[:2]] == [Unreadable, Unreadable]
    assert found[0].reason == "No such file or directory"
    assert found[1].reason == "Is a directory"
    assert len(found) == 12


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=97), min_size=1, max_size=50))
def test_items_do_not_depend_on_how_input_is_chunked(sizes):
    data = b"\xef\xbb\xbf" + b"".join(lines_of("shapes.ndjson")[:8]).replace(b"\n", b"\r\n")
    data += b"\nnot json\n\n" + b"".join(lines_of("vendor-example.ndjson"))[:-7]

    class Trickle(io.RawIOBase):
        def __init__(self):
            self.data, self.sizes, self.at = data, list(sizes), 0

        def read(self, n):
            size = min(n, self.sizes[self.at % len(self.sizes)])
            self.at += 1
            chunk, self.data = self.data[:size], self.data[size:]
            return chunk

    trickled = [i for batch in batches([Trickle()]) for i in batch]
    assert summary(trickled) == summary(items(data))


@settings(max_examples=examples(15), deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(st.lists(st.sampled_from([b'{"type":"a"}\n', b'{"type":"b","n":1}\r\n', b"\n",
                                 b"not json\n", b'{"cut":', b"\xef\xbb\xbf", b"{\x00\"\x00",
                                 b"[1]\n", b"\xff\xfe"]), max_size=12))
def test_property_a_file_read_whole_before_gives_what_the_file_gives(pieces):
    """A ``Loaded`` FILE (its bytes read already to tell its agent) gives the items
    that reading the FILE gives, named as they are."""
    data = b"".join(pieces)
    with tempfile.TemporaryDirectory() as folder:  # no fixture: 'make fuzz' calls it too
        path = os.path.join(folder, "input.ndjson")
        with open(path, "wb") as out:
            out.write(data)
        found = [item for batch in batches([Loaded(path, data)]) for item in batch]
        assert [vars_of(item) for item in found] == [
            vars_of(item) for batch in batches([path]) for item in batch]


def vars_of(item):
    return type(item).__name__, {name: getattr(item, name) for name in item.__slots__}


@st.composite
def numbered_lines(draw):
    """An object line holding digits: runs of any length (19 or more: maybe beyond 64
    bits) as numbers or in strings, at its ends or split by the line's end."""
    digits = st.text("0123456789", min_size=1, max_size=25).map(lambda run: run.lstrip("0")
                                                                 or "0")
    value = draw(st.sampled_from(["n", "-n", "s", "id", "f", "bad"]))
    run = draw(digits)
    body = {"n": run, "-n": f"-{run}", "s": f'"{run}"', "id": f'"id_{run}"', "f": f"{run}.5e3",
            "bad": f"{run}x"}[value]
    space = draw(st.sampled_from(["", " ", "\t", "\r"]))
    if draw(st.booleans()):
        return f'{{"type":"x","v":{space}{body}}}'.encode()
    return f'{{"type":"x","v":[1,{space}{body}]}}'.encode()


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(numbered_lines())
def test_property_a_line_read_exactly_has_every_integer_as_it_is_written(line):
    """orjson is left to read a line alone only where no number in it can be beyond 64
    bits; a long run of digits in a string (an id) is no number."""
    exact = decode_line(line, exact=True)
    if not isinstance(exact, dict):
        return
    value = json.loads(line, parse_float=lambda text: ("float", text),
                       parse_int=lambda text: ("int", text))["v"]
    shown = exact["v"][-1] if isinstance(exact["v"], list) else exact["v"]
    written = value[-1] if isinstance(value, list) else value
    if isinstance(written, tuple) and written[0] == "int":
        text = shown.text if isinstance(shown, RawNumber) else str(shown)
        assert not isinstance(shown, float) and int(text) == int(written[1])


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(st.lists(numbered_lines(), max_size=20), st.integers(8, 400))
def test_property_exact_blocks_read_each_line_as_it_is_read_alone(lines, chunk_size):
    """Read exactly, a block with no run of 19 digits is decoded by orjson line by line
    without the scan of each line: every line gives what it gives alone."""
    data = b"\n".join(lines) + b"\n"
    found = [item for batch in batches([io.BytesIO(data)], None, chunk_size, exact=True)
             for item in batch]
    alone = [decode_line(line, exact=True) for line in lines]
    assert [repr(item.data) if isinstance(item, Event) else None for item in found] == [
        repr(value) if isinstance(value, dict) else None for value in alone]


# The prefilter: lines that cannot hold a wanted type are not decoded.  Whatever the
# spelling of a line, the wanted events and the bad lines found must be the same as
# with full decoding.

TYPES = ["system", "user", "assistant", "tool_call", "result", "thinking", "interaction_query"]


def spell(text, escapes):
    """``text`` as a JSON string, some characters as \\u escapes."""
    return '"' + "".join(f"\\u{ord(c):04x}" if flag else c
                         for c, flag in zip(text, escapes)) + '"'


@st.composite
def adversarial_objects(draw):
    """One event as a JSON object in any spelling: keys reordered, repeated (the last
    counts), escaped, spaced; strings that hold what looks like a type."""
    canonical = draw(st.booleans())  # as the CLI writes it: what the prefilter passes over

    def name(text):
        if canonical:
            return f'"{text}"'
        return spell(text, draw(st.lists(st.booleans(), min_size=len(text),
                                         max_size=len(text))))

    def pair(key, value):
        space = "" if canonical else draw(st.sampled_from(["", " ", "\t", "  "]))
        return f"{name(key)}{space}:{space}{name(value)}"

    kinds = st.sampled_from(TYPES + ["results", "init"])
    subtypes = st.sampled_from(["init", "success", "delta", "started", "completed"])
    text = draw(st.sampled_from(['"result"', ':"result"', 'x\\":\\"result', "\\u0072esult",
                                 '{\\"type\\":\\"result\\"}', "system",
                                 "line\\nbreak"]))
    nested = [pair("type", draw(kinds))]
    if not canonical and draw(st.booleans()):  # the key again, with another value
        nested.insert(draw(st.integers(0, 1)), pair("type", draw(kinds)))
    body = [pair("type", draw(kinds)), pair("subtype", draw(subtypes)), f'"text":"{text}"',
            '"session_id":"s"', '"nested":{' + ",".join(nested) + "}"]
    if not canonical:
        for key, values in (("type", kinds), ("subtype", subtypes)):
            if draw(st.booleans()):  # the key again, with another value
                body.insert(draw(st.integers(0, len(body))), pair(key, draw(values)))
        body = draw(st.permutations(body))
    return "{" + ",".join(body) + "}"


@st.composite
def adversarial_lines(draw):
    line = draw(adversarial_objects())
    damage = draw(st.sampled_from(["", "", "", "", "cut", "prefix", "array", "blank", "crlf",
                                   "merged", "cut-merged"]))
    if damage == "cut":
        line = line[: draw(st.integers(min_value=1, max_value=len(line) - 1))]
    elif damage == "prefix":
        line = "T: " + line
    elif damage == "array":
        line = "[" + line + "]"
    elif damage == "blank":
        line = "   "
    elif damage == "crlf":
        line += "\r"
    elif damage == "merged":  # two lines with the newline between them lost
        line += draw(adversarial_objects())
    elif damage == "cut-merged":  # a stream cut off, then another appended
        line = line[: draw(st.integers(min_value=1, max_value=len(line) - 1))]
        line += draw(adversarial_objects())
    return line.encode()


WANTS = st.sets(st.sampled_from(["assistant", "tool_call", "tool_call/completed", "result",
                                 "nested.tool_call", "nested.init"]), min_size=1)


def is_wanted(event, want):
    wanted = set(want) | {"system", "result"}
    nested = event.data.get("nested")
    return (event.type in wanted or f"{event.type}/{event.data.get('subtype')}" in wanted
            or nested.__class__ is dict and f"nested.{nested.get('type')}" in wanted)


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(st.lists(adversarial_lines(), max_size=25), WANTS)
def test_property_the_prefilter_finds_what_full_decoding_finds(lines, want):
    """For every line, the prefilter's verdict is full decoding's: the same wanted
    events, in the same places."""
    data = b"\n".join(lines) + b"\n"
    full = items(data)
    selected = items(data, want=selection(want))
    full_events = [i for i in full if isinstance(i, Event)]
    selected_events = [i for i in selected if isinstance(i, Event)]
    assert summary(selected_events) == summary(i for i in full_events if is_wanted(i, want))
    # Every bad line that does not look like an object is still reported.
    looks_like_object = {n for n, line in enumerate(data.split(b"\n"), 1)
                         if line.strip().startswith(b"{") and line.rstrip().endswith(b"}")}
    assert {i.line for i in selected if isinstance(i, BadLine)} >= {
        i.line for i in full if isinstance(i, BadLine) and i.line not in looks_like_object}


def test_the_prefilter_marks_each_stretch_of_other_events():
    data = fixture("capture-parallel.ndjson").read_bytes()
    found = items(data, want=selection({"result"}))
    assert summary(found) == [
        ("Event", 1, None, orjson.loads(data.splitlines()[0])),
        ("Skipped", 2, None, None),
        ("Event", 17, None, orjson.loads(data.splitlines()[16])),
    ]


@pytest.mark.parametrize("want", [None, {"assistant"}])
def test_json_values_that_are_not_objects_are_bad_lines_in_both_modes(want):
    data = b'"text"\n[1]\n7\n{"type":"assistant"}\n'
    assert summary(items(data, want and selection(want))) == [
        ("BadLine", 1, "not a JSON object but a string", None),
        ("BadLine", 2, "not a JSON object but an array", None),
        ("BadLine", 3, "not a JSON object but a number", None),
        ("Event", 4, None, {"type": "assistant"}),
    ]


@pytest.mark.parametrize("cut", [
    b'{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]}',
    b'{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}',
    b'{"type":"assistant","message":{"content":[]},"x":{"type":"result","result":""}',
])
def test_a_line_cut_just_after_a_nested_object_gives_no_event_of_it(cut):
    """The object nested in a line cut short decodes, but is no event: only an object
    that begins where the cut part ends (not after ``:``, ``,`` or ``[``) is one.  The
    line keeps it as its tail, which only its format can tell from the first object of
    a stream appended to a line cut just after a ``:``."""
    found = items(cut + b"\n")
    assert summary(found) == [("BadLine", 1, summary_reason(cut), None)]
    assert found[0].tail.__class__ is dict and cut.endswith(orjson.dumps(found[0].tail))


@pytest.mark.parametrize("cut", [b'{"type":', b'{"type":"result","usage":', b'{"a":[',
                                 b'{"type":"result","result":"a,', b'{"a":1,'])
@pytest.mark.parametrize("last", [False, True])
def test_a_line_cut_just_after_a_colon_comma_or_bracket_keeps_the_object_after(cut, last):
    """A stream cut off just after a ``:``, ``,`` or ``[`` (in a string too), another
    appended: the line is reported, the next stream's first object kept as its tail;
    taken as the line's event, it is told where the line was cut."""
    init = b'{"type":"system","subtype":"init","session_id":"b","tools":[{"x":1}]}'
    line = cut + init
    found = items(line + (b"" if last else b"\n"))
    assert summary(found) == [
        ("BadLine", 1, "truncated line: the stream was cut off?" if last
         else summary_reason(line), None)]
    assert found[0].tail == orjson.loads(init)
    bad, event = found[0].cut_before_tail()
    assert bad.cut_off and "another event begins inside it" in bad.message
    assert (event.line, event.data) == (1, orjson.loads(init))


def summary_reason(line):
    value = decode_line(line)
    assert type(value) is str
    return value


def test_a_line_of_too_many_objects_and_arrays_is_passed_over_undecoded():
    """Issue 25 (M3): a line of empty objects decodes to 30 times its length; one that
    holds more than MAX_CONTAINERS of them, and more than one per CONTAINER_SPAN bytes,
    is reported and passed over, the lines around it read, the last line too."""
    from ndagent.decoder import CONTAINER_SPAN, MAX_CONTAINERS

    def line(count, pad=0):
        return b'{"x":[' + b",".join([b"[]"] * count) + b'],"p":"' + b"a" * pad + b'"}'

    dense = line(MAX_CONTAINERS)
    sparse = line(MAX_CONTAINERS, pad=MAX_CONTAINERS * CONTAINER_SPAN)
    data = b"\n".join([b'{"a":1}', dense, line(MAX_CONTAINERS - 2), sparse, b'{"b":2}', dense])
    items = list(iter_items([io.BytesIO(data)]))
    assert [(type(item).__name__, item.line) for item in items] == [
        ("Event", 1), ("BadLine", 2), ("Event", 3), ("Event", 4), ("Event", 5), ("BadLine", 6)]
    assert "objects and arrays" in items[1].message and items[1].start == dense[:240]


# The two readings of a selected block: searching it for the lines to decode, or, where
# the selection takes nearly every line, decoding each and testing only the others.

_SELECTED_LINES = st.one_of(
    st.builds(lambda kind, extra, space: json.dumps(
        {"type": kind, **extra}, separators=(",", ":")).encode().replace(
        b'":', b'"' + space + b":", 1),
              st.sampled_from(["a", "b", "c", "call", 7]),
              st.dictionaries(st.sampled_from(["subtype", "step", "x", "type"]),
                              st.one_of(st.sampled_from(["s", "kind", "b", "call"]),
                                        st.integers(-2**70, 2**70),
                                        st.builds(dict, kind=st.just("call")))),
              st.sampled_from([b"", b" ", b"\t"])),
    st.sampled_from([b"", b" ", b"null", b"[1]", b'"a"', b'{"type":"a",', b'{"type":"a"} ',
                     b' {"type":"a"}', b'{"type":"a"}\r', b'{"type":"\\u0061"}',
                     b'{"ty\\u0070e":"b"}', b'{"type":"b","n":12345678901234567890}',
                     b'{"type":"a","n":-12345678901234567890}',
                     b'{"type":"x"}{"type":"a"}', b'{"type":"x","t":"\\ud800"}', b"\xff{}",
                     b'{"step":{"kind":"call"}}', b'{"type":"b","subtype":"s"}']))

# Lines of JSON's pieces put together anyhow: objects cut, merged, doubled, spaced,
# escaped, keys repeated, numbers beyond 64 bits, bad UTF-8.
_PIECES = st.lists(st.sampled_from([
    b"{", b"}", b'"type"', b'"\\u0074ype"', b'"ty\\u0070e"', b":", b" : ", b"\t", b"\r", b",",
    b'"a"', b'"b"', b'"\\u0062"', b'"s"', b'"subtype"', b'"step"', b'"kind"', b'"call"', b"null",
    b"[", b"]", b"-12345678901234567890", b"\xff", b'"\\ud800"', b" ", b'"\\u00"', b"\\"]),
    max_size=12).map(b"".join)
_LINES = st.one_of(_SELECTED_LINES, _PIECES,
                   st.sampled_from([b"{}", b"{}\r", b"{\r", b"}\r", b"\r", b"{ }\r\r"]))
# Markers of one to three pairs: first keys and values shared, paths, a path in a rest.
_PAIRS = st.sampled_from([("type", "a"), ("type", "b"), ("subtype", "s"), ("kind", "call"),
                          (("step", "kind"), "call"), (("step", "type"), "a"), ("x", "s")])
_MARKERS = st.lists(st.lists(_PAIRS, min_size=1, max_size=3), min_size=1, max_size=4)


def _text(lines):
    return b"".join(line.replace(b"\n", b"") + b"\n" for line in lines)


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(_LINES, max_size=5), st.lists(_LINES, min_size=1, max_size=25),
       st.lists(_LINES, max_size=3), _MARKERS, st.booleans())
def test_property_a_block_read_densely_gives_the_items_of_its_search(before, lines, after,
                                                                    markers, exact):
    """Whatever the lines and the selection, and wherever the block is in the data,
    ``selects`` takes a line exactly when ``newlines`` gives the newline before it, and
    ``_selected_densely`` gives the items ``_selected`` gives, item for item, numbering
    the lines alike: which of the two reads a block is a matter of speed alone."""
    selection = Selection(markers)
    begin = len(_text(before))
    text = _text(before) + _text(lines) + _text(after)
    end = begin + len(_text(lines))
    newlines = selection.newlines(text, begin, end)
    start = begin
    for line in lines:
        stop = text.index(b"\n", start)
        assert selection.selects(text, start, stop) == (start - 1 in newlines), line
        start = stop + 1
    found = []
    for method in ("_selected", "_selected_densely"):
        reader = _Lines("f", selection, exact, False)
        reader.number = 3
        items = getattr(reader, method)(text, begin, end)
        found.append(([(type(item).__name__, *_fields(item)) for item in items],
                      reader.number))
    assert found[0] == found[1]


@settings(max_examples=examples(20), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(_LINES, min_size=1, max_size=6), min_size=1, max_size=12), _MARKERS,
       st.booleans(), st.integers(1, 5), st.sampled_from([0.0, 0.5, 1.0]),
       st.sampled_from([None, 3]))
def test_property_blocks_read_densely_or_not_give_the_same_items(blocks, markers, exact,
                                                                 sample, dense, containers):
    """Blocks of any sizes, one line or more, read one after the other by a reader that
    switches between the two readings (after a few lines: ``DENSE_SAMPLE``), give the
    items of a reader that never reads densely (``DENSE`` 2: no share of lines is that
    much), also where lines of too many objects and arrays cut the blocks."""
    found = []
    limits = {} if containers is None else {"MAX_CONTAINERS": containers}
    for share in (dense, 2):
        with mock.patch.multiple(decoder, DENSE=share, DENSE_SAMPLE=sample, **limits):
            reader = _Lines("f", Selection(markers), exact, False)
            items = [(type(item).__name__, *_fields(item))
                     for block in blocks for item in reader.block(_text(block))]
            found.append((items, reader.number))
    assert found[0] == found[1]


def _fields(item):
    values = [getattr(item, name) for name in type(item).__slots__]
    if isinstance(item, Skipped):  # its lines, not the whole block they are in
        return [item.source, item.line, item.text[item.begin:item.end], item.value]
    return values


def test_a_block_after_one_its_selection_took_nearly_whole_is_read_densely():
    selected, passed = b'{"type":"a"}\n' * 60, b'{"type":"x"}\n'
    reader = _Lines("f", Selection([(("type", "a"),)]), False, False)
    reader.block(selected + passed * 4)
    assert reader.dense
    reader.block(selected + passed * 9)
    assert not reader.dense
    for _ in range(63):  # too few lines to choose by
        reader.block(selected[:13])
    assert not reader.dense
