"""Many FILEs read in shares, each in a process (ndagent.inputs plans them,
ndagent.engine runs them): validate and stats print the same whatever the number of
processes, in FILE order."""

import os
import tempfile
from pathlib import Path
from unittest import mock

from conftest import examples, with_parts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent import engine, inputs, sources
from ndagent.formats import Detector
from ndagent.output import Output, Progress

TESTS = Path(__file__).resolve().parent
INPUTS = sorted([*TESTS.glob("fixtures/*.ndjson"), *TESTS.glob("golden/*/*/input.ndjson")])

# Besides the inputs: a FILE that cannot be read, a directory, standard input.
ODD = [str(TESTS / "no-such-file.ndjson"), str(TESTS / "golden"), "-"]

VERBS = [("validate",), ("validate", "-q", "--format", "ndjson"), ("validate", "--strict"),
         ("stats", "--by", "file"), ("stats", "--by", "run", "--format", "tsv"),
         ("stats", "--partial")]

# Each example runs two commands over up to 40 FILEs: a fifth of what the other
# properties run ('make fuzz' sets NDAGENT_EXAMPLES).
EXAMPLES = settings(max_examples=examples(6, lambda count: count // 5),
                    deadline=None, suppress_health_check=list(HealthCheck), database=None)


@EXAMPLES
@given(st.lists(st.sampled_from([*map(str, INPUTS), *ODD]), min_size=2, max_size=40),
       st.sampled_from(VERBS), st.sampled_from(["1", "3"]))
def test_property_shares_print_what_one_process_prints(names, verb, jobs):
    stdin = INPUTS[0].read_bytes()
    one = with_parts("never", verb[0], stdin, *verb[1:], "-j", jobs, *names)
    assert with_parts("always", verb[0], stdin, *verb[1:], "-j", jobs, *names) == one


def test_validate_over_every_input_in_shares_prints_every_summary():
    names = [str(path) for path in INPUTS]
    one = with_parts("never", "validate", b"", *names)
    assert with_parts("always", "validate", b"", "-j", "2", *names) == one
    assert one[1].count(b" events, ") > len(names) // 2  # (not those refused: json output)


def test_without_j_processes_start_from_share_from_bytes(monkeypatch):
    """The default: one process below SHARE_FROM bytes of regular FILEs, one per core
    from there on."""
    names = [str(path) for path in INPUTS]
    assert inputs.share_files(names, None)[0] == 1
    monkeypatch.setattr(inputs, "SHARE_FROM", 1)
    monkeypatch.setattr(inputs, "cores", lambda: 2)
    assert inputs.share_files(names, None)[0] == 2


def test_j_forks_no_more_processes_than_there_is_work_for(tmp_path):
    """-j 1000 over a thousand small FILEs: as many processes as LEAST_SHARE bytes
    of them, not a thousand."""
    names = []
    for index in range(1000):
        path = tmp_path / f"{index}.ndjson"
        path.write_bytes(b"x" * 7000)
        names.append(str(path))
    processes, groups = inputs.share_files(names, 1000)
    assert processes == 7000 * 1000 // inputs.LEAST_SHARE
    assert all(sum(map(inputs.size, group)) >= inputs.LEAST_SHARE - 7000
               for _, group in groups[:-1])


@settings(max_examples=examples(50), deadline=None, database=None)
@given(files=st.lists(st.tuples(st.integers(0, 5000), st.booleans()), max_size=30),
       jobs=st.integers(1, 8))
def test_property_shares_are_contiguous_and_shrink(files, jobs):
    """The groups hold the FILEs in order, each once; a FILE read here (standard input)
    is a group of its own; each shared group holds no more than twice the share of
    the bytes left that it is due (a 2*processes-th, or a LAST_SHARES-th of the whole
    per process) but where one FILE alone does."""
    with tempfile.TemporaryDirectory() as folder:  # no fixture: 'make fuzz' calls it too
        names = []
        for index, (size, here) in enumerate(files):
            if here:
                names.append("-")
                continue
            path = Path(folder) / f"{index}"
            path.write_bytes(b"x" * size)
            names.append(str(path))
        saved = inputs.LEAST_SHARE
        inputs.LEAST_SHARE = 1
        try:
            processes, groups = inputs.share_files(names, jobs)
        finally:
            inputs.LEAST_SHARE = saved
        assert [name for _, group in groups for name in group] == names
        assert processes == 1 or all(group == ["-"] for here, group in groups if here)
        sizes = [sum(map(inputs.size, group)) for here, group in groups if not here]
    left = total = sum(sizes)
    for size in sizes if processes > 1 else ():
        due = max(left / (2 * processes), total / (processes * inputs.LAST_SHARES), 1)
        assert size <= 2 * due + 5000
        left -= size


def test_a_list_of_files_is_shared_out_with_one_stat_a_file(monkeypatch):
    names = [str(path) for path in INPUTS] + ODD
    stats = []
    stat = os.stat
    monkeypatch.setattr(os, "stat", lambda name, *rest, **keywords: stats.append(name)
                        or stat(name, *rest, **keywords))
    inputs.share_files(names, 2)
    assert sorted(stats) == sorted(name for name in names if name != "-")


def test_a_share_whose_process_dies_is_told(tmp_path, monkeypatch):
    from ndagent.cmd_validate import ValidateCommand

    monkeypatch.setattr(ValidateCommand, "begin_run", lambda self, start: os._exit(9))
    names = [str(path) for path in INPUTS[:4]]
    status, out, err = with_parts("always", "validate", b"", "-j", "2", *names)
    assert status == 2 and b"a worker process died" in err


def test_shares_without_room_for_a_process_are_read_here(monkeypatch):
    names = [str(path) for path in INPUTS[:6]]
    one = with_parts("never", "validate", b"", *names)
    monkeypatch.setattr(engine, "_start", lambda *arguments: None)
    assert with_parts("always", "validate", b"", "-j", "2", *names) == one


def test_the_children_see_the_parent_s_objects_frozen_and_the_parent_after_them_not():
    """(So that a child's collections copy none of the parent's pages; the parent's
    collector is whole again after.)"""
    import gc

    seen = []

    def work(share, out, here):
        return gc.get_freeze_count() > 0

    found = engine.run([1, 2], 2, Output(os.open(os.devnull, os.O_WRONLY)), work,
                       lambda index, value: seen.append(value) or True)
    assert found and seen == [True, True] and gc.get_freeze_count() == 0


def test_a_progress_line_is_erased(capfd):
    progress = Progress("ndagent-stats", 3, True)
    progress.next = 0
    progress.add(1, 2_000_000)
    progress.clear()
    progress.clear()
    err = capfd.readouterr().err
    assert err.startswith("\rndagent-stats: 1/3 files, ") and err.endswith(" MB/s\x1b[K\r\x1b[K")
    hidden = Progress("ndagent-stats", 3, False)
    hidden.next = 0
    hidden.add(1, 10)
    hidden.clear()
    assert capfd.readouterr().err == ""


def test_a_file_s_head_is_read_as_the_decoder_reads_it(tmp_path):
    """A line orjson refuses but the decoder reads (a lone surrogate escape, a number
    beyond 64 bits) tells the agent from a file's head as it does from a pipe's."""
    path = tmp_path / "run.ndjson"
    path.write_bytes(b'{"type":"system","subtype":"init","session_id":"\\ud800","tools":[],'
                     b'"n":1e400}\n')
    found, _, _ = inputs.detect_head(str(path), Detector())
    assert found is not None and found.name == "claude"


@settings(max_examples=int(os.environ.get("NDAGENT_EXAMPLES", "200")), deadline=None,
          database=None)
@given(size=st.integers(0, 1 << 40), count=st.integers(1, inputs.MOST_PARTS))
def test_property_parts_are_cut_to_cost_alike(size, count):
    """Where a FILE's parts would begin: from 0 to its end, in order, each part's bytes
    and COUNT_SHARE of the bytes before it (what its process counts the newlines of)
    about the same for every part."""
    begins = [inputs._part_begin(size, index, count) for index in range(count + 1)]
    assert begins[0] == 0 and begins[-1] == size
    assert begins == sorted(begins)
    costs = [end - begin + inputs.COUNT_SHARE * begin
             for begin, end in zip(begins, begins[1:])]
    assert max(costs) - min(costs) <= 2 + size * 1e-9


PREADV = sources._PREADV


@settings(max_examples=examples(40), deadline=None)
@given(lines=st.lists(st.integers(0, 3000), max_size=60), block=st.integers(1, 5000),
       preadv=st.booleans(), data=st.data())
def test_property_the_lines_before_a_part_are_counted_at_any_offset(lines, block, preadv,
                                                                     data):
    """Whatever the blocks it reads (with or without ``os.preadv``) and however long
    the lines (counted byte by byte or newline by newline, switching from one block to
    the next), ``lines_before`` gives the newlines before the offset, at every offset
    of the file."""
    content = b"".join(b"x" * length + b"\n" for length in lines)
    offsets = range(len(content) + 1) if len(content) < 400 else \
        data.draw(st.lists(st.integers(0, len(content)), max_size=40))
    with tempfile.TemporaryFile() as file, \
            mock.patch.object(sources, "COUNT_BLOCK", block), \
            mock.patch.object(sources, "_PREADV", PREADV if preadv else None):
        file.write(content)
        file.flush()
        for offset in offsets:
            assert sources.lines_before(file.fileno(), offset) == content[:offset].count(b"\n")
