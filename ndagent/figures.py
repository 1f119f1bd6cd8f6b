"""The figures of ndagent stats over a group of runs: outcomes, durations, tokens, cost,
the figures some agents report besides (``Format.extra_figures``), tool calls and
failed commands, kept as counts, exact sums and a histogram, so that
figures add up (``Figures.merge``) to the same whatever way the runs were split among
processes or machines.  A partial is their JSON form (``partial``, ``read_partial``).
Pure data: the verb (ndagent.cmd_stats) reads the streams and prints."""

import re
from datetime import date, datetime, timedelta, timezone
from math import log

from ndagent.decoder import RawNumber
from ndagent.model import KINDS, OUTCOMES, epoch_ms
from ndagent.terminal import quote

# The histogram of durations: bucket i holds [GROWTH**i, GROWTH**(i+1)) milliseconds,
# bucket -1 what is under 1 ms.  A figure above MOST (2**53, exact in a double) is no
# figure, so that no sum and no bucket index can run away: at most MAX_BUCKET + 2
# buckets.
GROWTH = 1.02
MOST = 1 << 53
MAX_BUCKET = 1855
_LOG_GROWTH = log(GROWTH)
# A failed command, and a kind (a tool's own name), is counted under its first
# COMMAND_LIMIT characters.
COMMAND_LIMIT = 200
TOKENS = ("input", "cacheRead", "cacheWrite", "output")
RUN_OUTCOMES = ("ok", "failed", "cutoff")
# How else a session file's run ends: counted only where one did.
UNFINISHED_OUTCOMES = ("interrupted", "open")
# What --by groups the runs of a partial by (besides none).
GROUPINGS = ("agent", "model", "file", "session", "day", "week", "month", "project")
# The format of a partial: its first key and version.
PARTIAL = "ndagent-stats-partial"
VERSION = 2
# How many runs counted with running totals as given a partial names (the first ones).
MAX_OPENINGS = 4096
# How many extra figures (Format.extra_figures) a partial's group may hold, and the
# longest name of one: the formats declare a few short names.
MAX_EXTRA = 64
EXTRA_NAME_LIMIT = 64


class Tally:
    """The tool calls of one run: (kind, status) -> n, failed command -> n, and the calls
    whose outcome the run's end may still tell (call_id -> (kind, status, command), at
    most MAX_UNSETTLED)."""

    MAX_UNSETTLED = 4096
    __slots__ = ("tools", "commands", "unsettled")

    def __init__(self):
        self.tools = {}
        self.commands = {}
        self.unsettled = {}

    def add(self, kind, outcome, command=None, call_id=None):
        if kind.__class__ is not str:
            kind = "unknown"
        elif len(kind) > COMMAND_LIMIT:  # a tool's own name, as long as a stream makes it
            kind = kind[:COMMAND_LIMIT]
        key = (kind, outcome)
        self.tools[key] = self.tools.get(key, 0) + 1
        if command is not None:
            command = _command_key(command)
            self.commands[command] = self.commands.get(command, 0) + 1
        # A success too may be told otherwise at the run's end (Antigravity's
        # denied_actions: a blocked tool's step ends as one that ran).
        if (call_id is not None and outcome != "permissionDenied"
                and len(self.unsettled) < self.MAX_UNSETTLED):
            self.unsettled[call_id] = (kind, outcome, command)

    def settle(self, outcomes):
        """The final outcomes of calls that ended before, {call_id: outcome}, as the run's
        end tells them (Claude's permission_denials)."""
        for call_id, final in outcomes.items():
            found = self.unsettled.pop(call_id, None)
            if found is None:
                continue
            kind, outcome, command = found
            self.tools[kind, outcome] -= 1
            key = (kind, final)
            self.tools[key] = self.tools.get(key, 0) + 1
            if command is not None:
                self.commands[command] -= 1
                if not self.commands[command]:
                    del self.commands[command]

    def report(self):
        """{kind: {status: n}} in the order of the common kinds, then by name."""
        return _tools_report(self.tools)


class Figures:
    """The figures of a group of runs, in the form that adds up exactly however the runs
    are split: counts, sums as exact numbers (an int, or a Fraction once a float is
    added), a histogram of durations."""

    __slots__ = ("runs", "no_run", "duration_runs", "duration_total", "duration_range",
                 "histogram", "token_runs", "tokens", "cost_runs", "cost_total", "extra",
                 "tools", "commands", "estimate_runs", "estimate_total")

    def __init__(self):
        self.runs = {"ok": 0, "failed": 0, "cutoff": 0}
        self.no_run = 0
        self.duration_runs = self.duration_total = 0
        self.duration_range = None  # [shortest, longest], exactly
        self.histogram = {}  # bucket -> runs
        self.token_runs = 0
        self.tokens = {}  # name -> sum, for the names some run reported
        self.cost_runs = self.cost_total = 0
        self.extra = {}  # extra figure's name -> [runs that reported it, sum]
        self.tools = {}  # (kind, status) -> calls
        self.commands = {}  # failed command -> calls
        # The cost estimated from a price table (--prices), of the runs it priced.
        self.estimate_runs = self.estimate_total = 0

    def add_run(self, outcome, duration, tokens, cost, tally, estimate=None, extra=None):
        """Count a run: ``extra`` is {name: figure or None} of its extra figures, or None."""
        self.runs[outcome] = self.runs.get(outcome, 0) + 1
        if duration is not None:
            self.duration_runs += 1
            self.duration_total += exact(duration)
            self._widen([duration, duration])
            bucket = _bucket(duration)
            self.histogram[bucket] = self.histogram.get(bucket, 0) + 1
        if tokens is not None:
            self.token_runs += 1
            sums = self.tokens
            for name, value in tokens.items():
                if value is not None:
                    sums[name] = sums.get(name, 0) + exact(value)
        if cost is not None:
            self.cost_runs += 1
            self.cost_total += exact(cost)
        for name, value in (extra or {}).items():
            if value is not None:
                self._add_extra(name, 1, exact(value))
        _add_counts(self.tools, tally.tools)
        _add_counts(self.commands, tally.commands)
        if estimate is not None:
            self.estimate_runs += 1
            self.estimate_total += exact(estimate)

    def estimate(self):
        """The estimated cost as printed: the runs priced, and their total in USD."""
        return {"runs": self.estimate_runs,
                "total": float(self.estimate_total) if self.estimate_runs else None}

    def uncount(self, tokens, estimate=None):
        """Take back the tokens {name: figure} counted before in this group's runs, and
        the ``estimate`` of their cost that a run's estimate holds (an exact sum as a
        partial writes it, or None): an API message that another run (another input's
        copy of it) counted first."""
        for name, value in tokens.items():
            if value is not None and name in self.tokens:
                self.tokens[name] -= exact(value)
        if estimate is not None:
            self.estimate_total -= _sum(estimate, "claimed")

    def _add_extra(self, name, runs, total):
        found = self.extra.get(name)
        if found is None:
            self.extra[name] = [runs, total]
        else:
            found[0] += runs
            found[1] += total

    def refigure(self, given, own):
        """Count a run counted before with the figures ``given`` ((tokens, cost), a
        running total as the agent gave it) with ``own`` instead, its own figures."""
        (tokens, cost), (own_tokens, own_cost) = given, own
        for name, value in (tokens or {}).items():
            if name in TOKENS and figure(value) is not None:
                self.tokens[name] += exact(own_tokens[name]) - exact(value)
        if figure(cost) is not None:
            self.cost_total += exact(own_cost) - exact(cost)

    def _widen(self, bounds):
        found = self.duration_range
        if found is None:
            self.duration_range = list(bounds)
        else:
            found[0] = min(found[0], bounds[0])
            found[1] = max(found[1], bounds[1])

    def merge(self, other):
        _add_counts(self.runs, other.runs)
        self.no_run += other.no_run
        self.duration_runs += other.duration_runs
        self.duration_total += other.duration_total
        if other.duration_range is not None:
            self._widen(other.duration_range)
        _add_counts(self.histogram, other.histogram)
        self.token_runs += other.token_runs
        _add_counts(self.tokens, other.tokens)
        self.cost_runs += other.cost_runs
        self.cost_total += other.cost_total
        for name, (runs, total) in other.extra.items():
            self._add_extra(name, runs, total)
        _add_counts(self.tools, other.tools)
        _add_counts(self.commands, other.commands)
        self.estimate_runs += other.estimate_runs
        self.estimate_total += other.estimate_total

    def report(self, top):
        """The figures as printed (json), with the ``top`` failed commands (None: all)."""
        runs = self.runs
        durations = self.duration_runs
        commands = sorted(self.commands.items(), key=lambda item: (-item[1], item[0]))
        # The extra figures only where a run reported one: the report of runs of agents
        # that have none is as it always was.
        extra = {"extra": {name: {"runs": runs, "total": _plain(total)}
                           for name, (runs, total) in sorted(self.extra.items())}
                 } if self.extra else {}
        return {
            "runs": {"total": sum(runs.values()), **_in_order(runs)},
            "inputs_without_run": self.no_run,
            "duration_ms": {
                "runs": durations,
                "total": _plain(self.duration_total) if durations else None,
                "median": self._quantile(50), "p95": self._quantile(95)},
            "tokens": {"runs": self.token_runs,
                       **{name: _plain(self.tokens[name]) if name in self.tokens else None
                          for name in TOKENS}},
            "cost_usd": {"runs": self.cost_runs,
                         "total": float(self.cost_total) if self.cost_runs else None},
            **extra,
            "tool_calls": sum(self.tools.values()),
            "tools": _tools_report(self.tools),
            "failed_commands": [{"command": command, "count": count}
                                for command, count in commands[:top]],
        }

    def _quantile(self, percent):
        """The nearest-rank ``percent``th percentile of the durations, from the histogram
        (within 1%) and between the shortest and the longest (exact for one run), in
        whole milliseconds; None without durations."""
        rank = -(-self.duration_runs * percent // 100)
        if not rank:
            return None
        seen = 0
        for bucket in sorted(self.histogram):
            seen += self.histogram[bucket]
            if seen >= rank:
                break
        shortest, longest = self.duration_range
        return round(min(max(_bucket_value(bucket), shortest), longest))

    def state(self):
        """The figures as a partial holds them, in a fixed order: JSON's kinds only
        (objects, lists, strings, numbers), as they are also sent between processes;
        the estimated cost only where a run was priced, "extra" only where a run reported
        an extra figure (a partial without it has none)."""
        extra = {"extra": [[name, runs, str(total)] for name, (runs, total)
                           in sorted(self.extra.items())]} if self.extra else {}
        found = {
            "runs": _in_order(self.runs), "no_run": self.no_run,
            "duration_runs": self.duration_runs, "duration_total": str(self.duration_total),
            "duration_range": None if self.duration_range is None else list(self.duration_range),
            "histogram": [list(pair) for pair in sorted(self.histogram.items())],
            "token_runs": self.token_runs,
            "tokens": {name: str(self.tokens[name]) for name in TOKENS if name in self.tokens},
            "cost_runs": self.cost_runs, "cost_total": str(self.cost_total),
            **extra,
            "tools": _tools_report(self.tools),
            "failed_commands": [list(pair) for pair in sorted(self.commands.items())],
        }
        if self.estimate_runs:
            found["estimate_runs"] = self.estimate_runs
            found["estimate_total"] = str(self.estimate_total)
        return found

    @classmethod
    def from_state(cls, data):
        """The figures of a partial's ``state``; BadPartial when it is not one."""
        if data.__class__ is not dict:
            raise BadPartial("a group's figures are not an object")
        figures = cls()
        runs = _field(data, "runs", dict)
        if not set(RUN_OUTCOMES) <= runs.keys() <= {*RUN_OUTCOMES, *UNFINISHED_OUTCOMES}:
            raise BadPartial('"runs" does not have ok, failed and cutoff (and only '
                             'interrupted and open besides)')
        figures.runs = {name: _counted(runs[name], "runs") for name in
                        (*RUN_OUTCOMES, *UNFINISHED_OUTCOMES) if name in runs}
        figures.no_run = _counted(data.get("no_run"), "no_run")
        figures.duration_runs = _counted(data.get("duration_runs"), "duration_runs")
        figures.duration_total = _sum(_field(data, "duration_total", str), "duration_total")
        bounds = data.get("duration_range")
        if (bounds is None) != (figures.duration_runs == 0) or bounds is not None and not (
                bounds.__class__ is list and len(bounds) == 2
                and all(figure(bound) is not None for bound in bounds)
                and bounds[0] <= bounds[1]):
            raise BadPartial('"duration_range" is not the shortest and the longest duration')
        figures.duration_range = bounds
        for pair in _field(data, "histogram", list):
            if pair.__class__ is not list or len(pair) != 2 or pair[0].__class__ is not int \
                    or not -1 <= pair[0] <= MAX_BUCKET:
                raise BadPartial('"histogram" holds a bad bucket')
            figures.histogram[pair[0]] = _counted(pair[1], "histogram")
        if sum(figures.histogram.values()) != figures.duration_runs:
            raise BadPartial('"histogram" does not hold duration_runs runs')
        figures.token_runs = _counted(data.get("token_runs"), "token_runs")
        for name, total in _field(data, "tokens", dict).items():
            if name not in TOKENS or total.__class__ is not str:
                raise BadPartial('"tokens" holds a bad figure')
            figures.tokens[name] = _sum(total, "tokens")
        figures.cost_runs = _counted(data.get("cost_runs"), "cost_runs")
        figures.cost_total = _sum(_field(data, "cost_total", str), "cost_total")
        figures.extra = _extra(data.get("extra", []))
        for kind, outcomes in _field(data, "tools", dict).items():
            if outcomes.__class__ is not dict or not outcomes.keys() <= set(OUTCOMES):
                raise BadPartial('"tools" holds a bad status')
            for outcome, count in outcomes.items():
                figures.tools[kind, outcome] = _counted(count, "tools")
        for pair in _field(data, "failed_commands", list):
            if pair.__class__ is not list or len(pair) != 2 or pair[0].__class__ is not str:
                raise BadPartial('"failed_commands" holds a bad command')
            figures.commands[pair[0]] = _counted(pair[1], "failed_commands")
        if "estimate_runs" in data:
            figures.estimate_runs = _counted(data["estimate_runs"], "estimate_runs")
            figures.estimate_total = _sum(_field(data, "estimate_total", str),
                                          "estimate_total")
        return figures


def _extra(data):
    """The extra figures of a partial's group: [[name, runs, sum]], each name once."""
    if data.__class__ is not list or len(data) > MAX_EXTRA:
        raise BadPartial(f'"extra" is not a list of at most {MAX_EXTRA} figures')
    extra = {}
    for each in data:
        if each.__class__ is not list or len(each) != 3 or each[0].__class__ is not str \
                or not 0 < len(each[0]) <= EXTRA_NAME_LIMIT or each[0] in extra \
                or each[2].__class__ is not str:
            raise BadPartial('"extra" holds a bad figure')
        runs = _counted(each[1], "extra")
        if not runs:
            raise BadPartial('"extra" holds a figure that no run reported')
        extra[each[0]] = [runs, _sum(each[2], "extra")]
    return extra


def partial(by, groups, openings=(), totals=(), claimed=()):
    """The partial of ``groups``, [(key, Figures)] of --by ``by`` (None, "agent",
    "model" or "file"): the JSON object that --partial prints and read_partial reads.
    ``openings``: the runs counted with running totals as they were given, [key,
    index, group, usage, cost], and ``totals`` the last running totals of each key,
    [key, index, {"usage", "cost"}] (ndagent.totals): what merging needs to make them
    the runs' own when a partial before holds the runs before them.  ``claimed``: the
    API messages whose usage the partial counted, [key, group, usage], for merging to
    count each once (the partial of another input that holds a copy of one counts it
    too)."""
    return {PARTIAL: VERSION, "by": by,
            "groups": [[key, figures.state()] for key, figures in groups],
            "openings": list(openings), "totals": list(totals), "claimed": list(claimed)}


class BadPartial(ValueError):
    """A line given to --merge that is not a partial: what is wrong with it."""


def read_partial(data):
    """(by, [(key, Figures)], openings, totals, claimed) of a partial (a decoded JSON
    object); BadPartial when it is not one."""
    version = data.get(PARTIAL)
    if version is None:
        raise BadPartial(f'no "{PARTIAL}" key')
    if version != VERSION or version.__class__ is not int:
        raise BadPartial(f"version {quote(repr(version))}: this ndagent reads version "
                         f"{VERSION}")
    by = data.get("by")
    if by not in (None, *GROUPINGS):
        raise BadPartial(f'"by" is not null or one of {", ".join(GROUPINGS)}')
    groups = []
    for group in _field(data, "groups", list):
        if group.__class__ is not list or len(group) != 2 or \
                group[0].__class__ not in (str, type(None)):
            raise BadPartial('"groups" holds a bad group')
        groups.append((group[0], Figures.from_state(group[1])))
    keys = [key for key, _ in groups]
    if len(set(keys)) != len(keys):
        raise BadPartial('"groups" holds a group twice')
    if by is None and keys not in ([], [None]):
        raise BadPartial('a partial of all the runs holds one group, keyed null')
    openings = [_opening(each, keys) for each in _field(data, "openings", list)]
    if len(openings) > MAX_OPENINGS:
        raise BadPartial(f'"openings" holds more than {MAX_OPENINGS} runs')
    totals = [_totals(each) for each in _field(data, "totals", list)]
    claimed = data.get("claimed", [])  # none in partials of streams only
    if claimed.__class__ is not list:
        raise BadPartial('"claimed" is not a list')
    claimed = [_claimed(each, keys) for each in claimed]
    return by, groups, openings, totals, claimed


def _claimed(data, keys):
    """[key, group, usage, the estimate of its cost or None]: a partial's message (the
    estimate: none in those written before --prices counted it)."""
    if data.__class__ is not list or len(data) not in (3, 4) or data[0].__class__ is not str \
            or data[1] not in keys:
        raise BadPartial('"claimed" holds a bad message')
    estimate = data[3] if len(data) == 4 else None
    if estimate is not None:
        if estimate.__class__ is not str:
            raise BadPartial('"claimed" holds a bad message')
        _sum(estimate, "claimed")  # a sum as partials write it, else BadPartial
    return [data[0], data[1], _usage(data[2], "claimed"), estimate]


def _opening(data, keys):
    if data.__class__ is not list or len(data) != 5 or data[2] not in keys:
        raise BadPartial('"openings" holds a bad run')
    key, index = _key_index(data, "openings")
    return [key, index, data[2], _usage(data[3], "openings"), _figure_or_none(data[4],
                                                                             "openings")]


def _totals(data):
    if data.__class__ is not list or len(data) != 3 or data[2].__class__ is not dict:
        raise BadPartial('"totals" holds bad totals')
    key, index = _key_index(data, "totals")
    state = data[2]
    return [key, index, {"usage": _usage(state.get("usage"), "totals"),
                         "cost": _figure_or_none(state.get("cost"), "totals"),
                         "native": None}]


def _key_index(data, name):
    key, index = data[0], data[1]
    if key.__class__ is not str or len(key) > 256 or not (
            index is None or index.__class__ is int and index >= 0):
        raise BadPartial(f'"{name}" holds a bad key')
    return key, index


def _usage(value, name):
    if value is None:
        return None
    if value.__class__ is not dict or not value.keys() <= set(TOKENS):
        raise BadPartial(f'"{name}" holds bad tokens')
    return {token: _figure_or_none(figures, name) for token, figures in value.items()}


def _figure_or_none(value, name):
    if value is not None and figure(value) is None:
        raise BadPartial(f'"{name}" holds a bad figure')
    return value


def _field(data, name, kind):
    value = data.get(name)
    if value.__class__ is not kind:
        raise BadPartial(f'"{name}" is missing or not of its type')
    return value


def _counted(value, name):
    """A count: a whole number, of up to 400 digits (beyond 64 bits, as partials that
    merged many write it, the decoder keeps it as written)."""
    if value.__class__ is RawNumber and value.text.isdigit() and len(value.text) <= 400:
        return int(value.text)
    if value.__class__ is not int or value < 0:
        raise BadPartial(f'"{name}" holds a count that is not a whole number')
    return value


# The largest sum a partial may hold: far above what real figures add up to (2**53 per
# figure, a run count of 64 bits), far below what a double holds (2**1024), so that
# merging a million partials still gives sums a double holds.
LARGEST_SUM = 1 << 960

_SUM = None  # the pattern of a sum, compiled on the first partial read


def _sum(text, name):
    """An exact sum as a partial writes it: "12" or "3/8".  Sums of figures (doubles,
    each at most MOST) have a power of two at most 2**1074 below the line and stay far
    below LARGEST_SUM: anything else is no partial's (it would make merging slow, or a
    sum no double holds)."""
    global _SUM
    if _SUM is None:
        _SUM = re.compile(r"(0|[1-9][0-9]{0,399})(?:/([1-9][0-9]{0,399}))?")
    match = _SUM.fullmatch(text)
    if match is None:
        raise BadPartial(f'"{name}" holds a sum that is not a number')
    value = int(match[1])
    if match[2] is not None:
        below = int(match[2])
        if below & (below - 1) or below > 1 << 1074:
            raise BadPartial(f'"{name}" holds a fraction that is no sum of figures')
        value = _fraction()(value, below)
    if value > LARGEST_SUM:
        raise BadPartial(f'"{name}" holds a sum larger than any of figures')
    return value


def _in_order(runs):
    """The runs by outcome, in a fixed order (interrupted and open only where counted)."""
    return {name: runs[name] for name in (*RUN_OUTCOMES, *UNFINISHED_OUTCOMES)
            if name in runs}


def _add_counts(mine, other):
    for key, value in other.items():
        mine[key] = mine.get(key, 0) + value


def _tools_report(tools):
    """{kind: {status: n}} of (kind, status) -> n, the kinds in the order of the common
    vocabulary and then by name, the statuses in OUTCOMES' order; no zero."""
    kinds = {}
    for (kind, outcome), count in tools.items():
        if count:
            kinds.setdefault(kind, {})[outcome] = count
    order = {kind: index for index, kind in enumerate(KINDS)}
    return {kind: {outcome: kinds[kind][outcome] for outcome in OUTCOMES
                   if outcome in kinds[kind]}
            for kind in sorted(kinds, key=lambda kind: (order.get(kind, len(order)), kind))}


def figure(value):
    """A figure of a run (milliseconds, tokens, dollars): a number from 0 to MOST, or
    None (absent, or not such a number)."""
    kind = value.__class__
    if (kind is int or kind is float) and 0 <= value <= MOST:
        return value
    return None


def exact_text(value):
    """A figure as the exact sum a partial writes ("12", "3/8")."""
    return str(exact(value))


def exact(value):
    """A figure as an exact number, for sums that do not depend on the order of adding:
    an int as it is, a float as the fraction it is."""
    if value.__class__ is int:
        return value
    return _fraction()(value)


def _fraction():
    """The Fraction class, loaded when a figure first needs one."""
    from fractions import Fraction  # lazy: costly to load, and runs of ints never need it

    return Fraction


def _plain(total):
    """An exact sum for JSON: an int when it is whole (and fits in 64 bits), else a float."""
    if total.__class__ is not int:
        if total.denominator != 1:
            return float(total)
        total = int(total)
    return total if total < 1 << 63 else float(total)


def _bucket(milliseconds):
    if milliseconds < 1:
        return -1
    return min(int(log(milliseconds) / _LOG_GROWTH), MAX_BUCKET)


def _bucket_value(bucket):
    """The value that stands for a bucket: within (GROWTH-1)/(GROWTH+1), under 1%, of
    every value in it."""
    if bucket < 0:
        return 0
    return 2 * GROWTH ** (bucket + 1) / (1 + GROWTH)


def _command_key(command):
    text = command if command.__class__ is str else str(command)
    return text if len(text) <= COMMAND_LIMIT else text[:COMMAND_LIMIT] + "..."


def duration_text(milliseconds):
    """A duration for people: 850 ms, 12.3 s, 4m 05s, 2h 03m."""
    if milliseconds < 1000:
        return f"{milliseconds:.0f} ms"
    seconds = milliseconds / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes}m {int(seconds % 60):02d}s"
    return f"{minutes // 60}h {minutes % 60:02d}m"


def plural(count, noun):
    """A count for people with its noun: 1 run, 2 runs, 0 errors."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"

# Time periods: the groups --by day, week and month put a run in, by when it began.

PERIODS = ("day", "week", "month")


def zone_of(name):
    """The time zone named (an IANA name, or UTC), or None for the local zone (the
    name ``local``); ValueError for a name that is none."""
    if name == "local":
        return None
    if name.upper() in ("UTC", "Z"):
        return timezone.utc
    from zoneinfo import ZoneInfo  # lazy: only --tz ZONE needs the zone database

    try:
        return ZoneInfo(name)
    except (ValueError, OSError, KeyError) as error:
        raise ValueError(f"no such time zone: {name}") from error


def day_of(iso, zone):
    """The date (in ``zone``: None for the local one) of an ISO time, or None."""
    moment = epoch_ms(iso)
    if moment is None:
        return None
    when = datetime.fromtimestamp(moment / 1000, zone or timezone.utc)
    if zone is None:
        when = when.astimezone()
    return when.date()


def period_of(by, day):
    """The group of a date for --by day, week (its Monday) or month, as text; None for
    no date."""
    if day is None:
        return None
    if by == "week":
        return (day - timedelta(days=day.weekday())).isoformat()
    if by == "month":
        return day.isoformat()[:7]
    return day.isoformat()


def date_of(text, zone):
    """A date as --since and --until take it: YYYY-MM-DD, YYYYMMDD, today or yesterday
    (in ``zone``); ValueError otherwise."""
    if text in ("today", "yesterday"):
        today = datetime.now(zone or timezone.utc)
        today = (today if zone is not None else today.astimezone()).date()
        return today - timedelta(days=1) if text == "yesterday" else today
    if re.fullmatch(r"[0-9]{8}", text):
        text = f"{text[:4]}-{text[4:6]}-{text[6:]}"
    return date.fromisoformat(text)
