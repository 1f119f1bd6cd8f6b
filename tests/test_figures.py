"""ndagent.figures alone, in process: the figures of runs are their counts and sums, the
figures of any split of the runs merge into the figures of all of them, and a partial
reads back as the figures it holds."""

from collections import Counter
from fractions import Fraction

import orjson
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent.figures import (
    COMMAND_LIMIT,
    MAX_BUCKET,
    MOST,
    RUN_OUTCOMES,
    TOKENS,
    BadPartial,
    Figures,
    Tally,
    figure,
    partial,
    read_partial,
)
from ndagent.model import OUTCOMES

# Each property a few dozen examples here, Hypothesis's 100 with NDAGENT_EXAMPLES set.
EXAMPLES = examples(20, 100)

# A figure a run may report (whole milliseconds or tokens, fractions of a dollar), or
# None: not reported.
FIGURE = st.one_of(st.none(), st.integers(0, 10**9),
                   st.floats(0, 10**7, allow_nan=False, allow_infinity=False))
CALL = st.tuples(st.sampled_from(["shell", "read", "edit", "mcp-tool"]),
                 st.sampled_from(OUTCOMES), st.sampled_from([None, "npm test", "make"]))
# Extra figures (Format.extra_figures): a few names, any of them reported or not.
EXTRA = st.none() | st.dictionaries(st.sampled_from(["steps", "premium_requests", "laps"]),
                                    FIGURE, max_size=3)
RUN = st.fixed_dictionaries({
    "outcome": st.sampled_from(RUN_OUTCOMES), "duration": FIGURE, "cost": FIGURE,
    "tokens": st.none() | st.fixed_dictionaries({name: FIGURE for name in TOKENS}),
    "extra": EXTRA, "calls": st.lists(CALL, max_size=4)})
RUNS = st.lists(RUN, max_size=12)


def tally_of(calls):
    tally = Tally()
    for kind, outcome, command in calls:
        tally.add(kind, outcome, command)
    return tally


def figures_of(runs, no_run=0):
    figures = Figures()
    for run in runs:
        figures.add_run(run["outcome"], run["duration"], run["tokens"], run["cost"],
                        tally_of(run["calls"]), extra=run.get("extra"))
    figures.no_run = no_run
    return figures


def exact_sum(values):
    """The sum of the values given (None: not reported), as the report prints it."""
    total = sum(Fraction(value) for value in values if value is not None)
    return int(total) if total.denominator == 1 else float(total)


def nearest_rank(values, percent):
    ordered = sorted(values)
    return ordered[-(-len(ordered) * percent // 100) - 1]


@settings(max_examples=EXAMPLES, deadline=None)
@given(RUNS, st.integers(0, 3))
def test_the_figures_are_the_counts_and_sums_of_the_runs(runs, no_run):
    report = figures_of(runs, no_run).report(None)
    outcomes = Counter(run["outcome"] for run in runs)
    assert report["runs"] == {"total": len(runs), **{name: outcomes[name]
                                                     for name in RUN_OUTCOMES}}
    assert report["inputs_without_run"] == no_run
    durations = [run["duration"] for run in runs if run["duration"] is not None]
    assert report["duration_ms"]["runs"] == len(durations)
    assert report["duration_ms"]["total"] == (exact_sum(durations) if durations else None)
    with_tokens = [run["tokens"] for run in runs if run["tokens"] is not None]
    assert report["tokens"]["runs"] == len(with_tokens)
    for name in TOKENS:
        told = [tokens[name] for tokens in with_tokens if tokens[name] is not None]
        assert report["tokens"][name] == (exact_sum(told) if told else None)
    costs = [run["cost"] for run in runs if run["cost"] is not None]
    assert report["cost_usd"] == {"runs": len(costs),
                                  "total": float(exact_sum(costs)) if costs else None}
    told = {}
    for run in runs:
        for name, value in (run["extra"] or {}).items():
            if value is not None:
                told.setdefault(name, []).append(value)
    assert report.get("extra", {}) == {
        name: {"runs": len(values), "total": exact_sum(values)}
        for name, values in sorted(told.items())}
    calls = [call for run in runs for call in run["calls"]]
    assert report["tool_calls"] == len(calls)
    assert {kind: sum(outcomes.values()) for kind, outcomes in report["tools"].items()} \
        == Counter(kind for kind, _, _ in calls)
    assert {(kind, outcome): count for kind, outcomes in report["tools"].items()
            for outcome, count in outcomes.items()} == Counter(
        (kind, outcome) for kind, outcome, _ in calls)
    failed = Counter(command for _, _, command in calls if command is not None)
    assert {item["command"]: item["count"] for item in report["failed_commands"]} == failed
    counts = [item["count"] for item in report["failed_commands"]]
    assert counts == sorted(counts, reverse=True)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 10**9), st.floats(0, 10**9)), min_size=1))
def test_the_median_and_the_95th_percentile_are_within_a_percent(durations):
    """Within 1% of the exact nearest rank, then rounded to a whole millisecond (what is
    under a millisecond is one bucket: 0 or 1), and never beyond the shortest or the
    longest."""
    runs = [{"outcome": "ok", "duration": duration, "tokens": None, "cost": None,
             "extra": None, "calls": []} for duration in durations]
    found = figures_of(runs).report(None)["duration_ms"]
    for name, percent in (("median", 50), ("p95", 95)):
        exact = nearest_rank(durations, percent)
        assert abs(found[name] - exact) <= (exact / 100 + 0.5 if exact >= 1 else 1)
        assert round(min(durations)) <= found[name] <= round(max(durations))
    if len(durations) == 1:
        assert found["median"] == found["p95"] == round(durations[0])


def test_the_histogram_keeps_its_bound_whatever_the_durations():
    runs = [{"outcome": "ok", "duration": duration, "tokens": None, "cost": None,
             "extra": None, "calls": []} for duration in (0, 0.5, 1, 10**6, MOST)]
    buckets = [bucket for bucket, _ in figures_of(runs).state()["histogram"]]
    assert buckets[0] == -1 and buckets[-1] <= MAX_BUCKET


@settings(max_examples=EXAMPLES, deadline=None)
@given(RUNS, st.data())
def test_the_figures_of_any_split_merge_into_the_figures_of_all(runs, data):
    shards = data.draw(st.lists(st.integers(0, 3), min_size=len(runs), max_size=len(runs)))
    merged = Figures()
    for shard in sorted(set(shards)):
        merged.merge(figures_of([run for run, mine in zip(runs, shards) if mine == shard]))
    whole = figures_of(runs)
    assert merged.state() == whole.state()
    assert merged.report(None) == whole.report(None)


def through_json(data):
    return orjson.loads(orjson.dumps(data))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from([None, "agent", "model", "file"]),
       st.lists(st.tuples(st.none() | st.text(max_size=5), RUNS), max_size=3,
                unique_by=lambda group: group[0]))
def test_a_partial_reads_back_as_the_figures_it_holds(by, groups):
    """Any partial --partial writes: one group keyed null for all the runs, else a
    group a key."""
    if by is None:
        groups = [(None, runs) for _, runs in groups[:1]]
    figures = [(key, figures_of(runs)) for key, runs in groups]
    read_by, read, _, _, _ = read_partial(through_json(partial(by, figures)))
    assert read_by == by
    assert [(key, found.state()) for key, found in read] == \
        [(key, found.state()) for key, found in figures]


@settings(max_examples=EXAMPLES, deadline=None)
@given(RUNS, RUNS)
def test_two_partials_merge_into_the_figures_of_all_their_runs(first, second):
    [(_, merged)] = read_partial(through_json(partial(None, [(None, figures_of(first))])))[1]
    [(_, other)] = read_partial(through_json(partial(None, [(None, figures_of(second))])))[1]
    merged.merge(other)
    assert merged.state() == figures_of(first + second).state()
    # What a merge printed as a partial reads back the same.
    [(_, again)] = read_partial(through_json(partial(None, [(None, merged)])))[1]
    assert again.state() == merged.state()


def test_a_call_s_outcome_is_settled_by_the_run_s_end():
    """A failed call that the run's end says was denied is counted denied, and its
    command is no longer a failed command; so is a call that ended a success (the
    format tells which calls its run's end settles: Antigravity's blocked tools end as
    successes); a long command is counted under its first COMMAND_LIMIT characters."""
    tally = Tally()
    tally.add("shell", "failure", "rm -rf build", "c1")
    tally.add("shell", "failure", "x" * (COMMAND_LIMIT + 50), "c2")
    tally.add("read", "success", None, "c3")
    tally.add("read", "success", None, "c4")
    tally.settle({"c1": "permissionDenied", "c3": "permissionDenied", "c9": "failure"})
    assert tally.report() == {"read": {"success": 1, "permissionDenied": 1},
                              "shell": {"failure": 1, "permissionDenied": 1}}
    assert tally.commands == {"x" * COMMAND_LIMIT + "...": 1}


@pytest.mark.parametrize("value, kept", [
    (0, True), (1500, True), (0.25, True), (MOST, True), (MOST + 1, False), (-1, False),
    (float("nan"), False), (float("inf"), False), (True, False), ("12", False),
    (None, False)])
def test_a_figure_is_a_number_from_0_to_most(value, kept):
    assert (figure(value) is not None) == kept


def good_state():
    runs = [{"outcome": "ok", "duration": 1500, "tokens": dict.fromkeys(TOKENS, 10),
             "cost": 0.5, "calls": [("shell", "failure", "make")]}]
    return through_json(figures_of(runs).state())


@pytest.mark.parametrize("damage, message", [
    (lambda state: state.update(duration_runs=2), '"histogram" does not hold'),
    (lambda state: state.update(no_run=-1), '"no_run" holds a count'),
    (lambda state: state.update(cost_total="0.5"), '"cost_total" holds a sum'),
    (lambda state: state.update(duration_range=[2000, 1500]), '"duration_range"'),
    (lambda state: state["runs"].pop("cutoff"), '"runs" does not have'),
    (lambda state: state["tools"]["shell"].update(done=1), '"tools" holds a bad status'),
    (lambda state: state.update(histogram=[[MAX_BUCKET + 1, 1]]), "a bad bucket"),
    (lambda state: state.update(extra={"steps": 2}), '"extra" is not a list'),
    (lambda state: state.update(extra=[["steps", 1, "2"]] * 2), '"extra" holds a bad'),
    (lambda state: state.update(extra=[["steps", 0, "2"]]), "that no run reported"),
    (lambda state: state.update(extra=[["steps", 1, "2.5"]]), '"extra" holds a sum'),
])
def test_figures_that_do_not_hold_together_are_no_partial(damage, message):
    state = good_state()
    Figures.from_state(state)
    damage(state)
    with pytest.raises(BadPartial, match=message):
        Figures.from_state(state)


@pytest.mark.parametrize("data, message", [
    ({}, 'no "ndagent-stats-partial" key'),
    ({"ndagent-stats-partial": 1, "by": None, "groups": []}, "version 1"),
    ({"ndagent-stats-partial": True, "by": None, "groups": []}, "version True"),
    ({"ndagent-stats-partial": 2, "by": "run", "groups": []}, '"by" is not null'),
    ({"ndagent-stats-partial": 2, "by": None, "groups": [[1, {}]]}, "a bad group"),
])
def test_a_partial_s_frame_is_checked(data, message):
    with pytest.raises(BadPartial, match=message):
        read_partial(data)


# Hostile partials: refused with one message each (status 2), never a traceback, never
# a slow merge, never two summaries.

def one_run_partial(**state):
    runs = [{"outcome": "ok", "duration": 1234, "tokens": None, "cost": 0.5, "calls": []}]
    found = orjson.loads(orjson.dumps(partial(None, [(None, figures_of(runs))])))
    found["groups"][0][1].update(state)
    return found


@pytest.mark.parametrize("state, message", [
    ({"duration_total": "1" + "0" * 309}, "larger than any"),
    ({"cost_total": "9" * 400}, "larger than any"),
    ({"cost_total": "1/" + "3" * 399}, "no sum of figures"),
    ({"cost_total": "1/" + str(1 << 1075)}, "no sum of figures"),
])
def test_a_sum_no_figures_add_up_to_is_refused(state, message):
    with pytest.raises(BadPartial, match=message):
        read_partial(one_run_partial(**state))


def test_a_partial_of_all_runs_holds_one_group_and_keys_are_unique():
    summary = one_run_partial()
    state = summary["groups"][0][1]
    with pytest.raises(BadPartial, match="one group, keyed null"):
        read_partial({**summary, "groups": [[None, state], ["zzz", state]]})
    with pytest.raises(BadPartial, match="a group twice"):
        read_partial({**summary, "by": "model", "groups": [["m", state], ["m", state]]})


def test_merging_many_partials_stays_quick_and_exact():
    """Sums of figures have powers of two below the line: a thousand partials of
    different costs merge at once, to the exact sum."""
    import time

    merged = Figures()
    started = time.monotonic()
    for number in range(1000):
        runs = [{"outcome": "ok", "duration": 1, "tokens": None, "cost": 0.1 + number / 7,
                 "calls": []}]
        state = orjson.loads(orjson.dumps(partial(None, [(None, figures_of(runs))])))
        merged.merge(read_partial(state)[1][0][1])
    assert time.monotonic() - started < 10
    assert merged.cost_total == sum(Fraction(0.1 + number / 7) for number in range(1000))


def test_counts_beyond_64_bits_merge_again(tmp_path):
    from conftest import InProcess

    run = InProcess()
    counted = one_run_partial()
    counted["groups"][0][1]["runs"]["ok"] = 2**64 - 1
    counted["groups"][0][1]["runs"]["failed"] = 0
    line = orjson.dumps(counted) + b"\n"
    status, merged, _ = run("stats", line * 2, "--merge", "--partial")
    assert status == 0
    status, out, err = run("stats", merged, "--merge", "--format", "ndjson")
    assert (status, err) == (0, b"")
    assert f'"ok":{2 * (2**64 - 1)},'.encode() in out


def test_a_bad_version_is_quoted_short():
    with pytest.raises(BadPartial) as refused:
        read_partial({"ndagent-stats-partial": "A" * 5_000_000, "by": None, "groups": []})
    assert len(str(refused.value)) < 200


def test_merge_prints_no_figures_when_a_partial_is_refused():
    """Figures without a refused partial would pass a CI gate they should fail."""
    from conftest import InProcess

    good = orjson.dumps(one_run_partial()) + b"\n"
    two = one_run_partial()
    two["groups"].append(["zzz", two["groups"][0][1]])
    status, out, err = InProcess()("stats", good + orjson.dumps(two) + b"\n", "--merge")
    assert (status, out) == (2, b"")
    refused, no_figures = err.splitlines()
    assert b"one group, keyed null" in refused and b"no figures printed" in no_figures


def test_a_group_s_figures_take_the_bytes_robustness_md_says():
    """Memory with many groups of --by (M4 of the review): about 2 KB a group at most,
    its key besides, whatever it holds (a run with every figure, a tool call, a
    failed command of the longest kept length)."""
    import tracemalloc

    tally = Tally()
    tally.add("shell", "failure", "x" * COMMAND_LIMIT, "c1")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        groups = []
        for _ in range(2000):
            figures = Figures()
            figures.add_run("ok", 1234.5, {"input": 1, "cacheRead": 2, "cacheWrite": 3,
                                           "output": 4}, 0.25, tally)
            groups.append(figures)
        each = (tracemalloc.get_traced_memory()[0] - before) / len(groups)
    finally:
        tracemalloc.stop()
    assert each < 2048, each
