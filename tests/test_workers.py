"""Many FILEs read in worker processes (ndagent.workers): validate and stats print the
same whatever the number of processes, in FILE order."""

from pathlib import Path

import pytest
from conftest import InProcess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndagent import workers

TESTS = Path(__file__).resolve().parent
INPUTS = sorted([*TESTS.glob("fixtures/*.ndjson"), *TESTS.glob("golden/*/*/input.ndjson")])
in_process = InProcess()

# Besides the inputs: a FILE that cannot be read, a directory, standard input.
ODD = [str(TESTS / "no-such-file.ndjson"), str(TESTS / "golden"), "-"]

VERBS = [("validate",), ("validate", "-q", "--format", "ndjson"), ("validate", "--strict"),
         ("stats", "--by", "file"), ("stats", "--by", "run", "--format", "tsv")]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck),
          database=None)
@given(st.lists(st.sampled_from([*map(str, INPUTS), *ODD]), min_size=2, max_size=40),
       st.sampled_from(VERBS))
def test_property_workers_print_what_one_process_prints(names, verb):
    stdin = INPUTS[0].read_bytes()
    one = in_process(verb[0], stdin, *verb[1:], "-j", "1", *names)
    assert in_process(verb[0], stdin, *verb[1:], "-j", "3", *names) == one


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_validate_s_workers_started_either_way(method, monkeypatch):
    """macOS starts worker processes by spawn, Linux by fork: both give the same."""
    monkeypatch.setattr(workers, "START_METHOD", method)
    names = [str(path) for path in INPUTS]
    one = in_process("validate", b"", "-j", "1", *names)
    assert in_process("validate", b"", "-j", "2", *names) == one
    assert one[1].count(b" events, ") > len(names) // 2  # (not those refused: json output)


def test_without_j_workers_start_from_share_from_bytes(monkeypatch):
    """The default: one process below SHARE_FROM bytes of regular FILEs, one per core
    from there on."""
    started = []
    monkeypatch.setattr(workers, "_read_in_workers",
                        lambda command, tasks, count, progress: started.append(count))
    names = [str(path) for path in INPUTS]
    in_process("validate", b"", *names)
    assert started == []
    monkeypatch.setattr(workers, "SHARE_FROM", 1)
    monkeypatch.setattr(workers, "cores", lambda: 2)
    in_process("validate", b"", *names)
    assert started == [2]


def test_a_progress_line_is_erased(capfd):
    progress = workers.Progress("ndagent-stats", 3, True)
    progress.next = 0
    progress.add(1, 2_000_000)
    progress.clear()
    progress.clear()
    err = capfd.readouterr().err
    assert err.startswith("\rndagent-stats: 1/3 files, ") and err.endswith(" MB/s\x1b[K\r\x1b[K")
    hidden = workers.Progress("ndagent-stats", 3, False)
    hidden.next = 0
    hidden.add(1, 10)
    hidden.clear()
    assert capfd.readouterr().err == ""


def test_the_plan_counts_the_bytes_of_the_files_for_the_default_jobs(tmp_path):
    """Without -j, workers start from SHARE_FROM bytes of FILEs: the plan must give
    their bytes (not the number of files per task)."""
    paths = []
    for index in range(3):
        path = tmp_path / f"{index}.ndjson"
        path.write_bytes(b"x" * 1000 * (index + 1))
        paths.append(str(path))
    plan, size = workers.plan(paths, 2)
    assert size == 6000
    assert [name for _, names in plan for name in names] == paths
