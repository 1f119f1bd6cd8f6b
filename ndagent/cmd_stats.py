"""ndagent stats: figures over many runs of any agent, mergeable across machines."""

import os
from sys import getsizeof

from ndagent import cli, inputs, options
from ndagent.decoder import BadLine, Event, batches
from ndagent.frame import Command, read_inputs
from ndagent.model import KINDS, OUTCOMES
from ndagent.output import Progress

SUMMARY = "print figures over many runs: outcomes, durations, tokens, cost, tool calls"

# The histogram of durations: bucket i holds [GROWTH**i, GROWTH**(i+1)) milliseconds,
# bucket -1 what is under 1 ms.  A figure above MOST (2**53, exact in a double) is no
# figure, so that no sum and no bucket index can run away: at most MAX_BUCKET + 2
# buckets.
GROWTH = 1.02
MOST = 1 << 53
MAX_BUCKET = 1855
# A failed command is counted under its first COMMAND_LIMIT characters; --top's default.
COMMAND_LIMIT = 200
TOP = 10
TOKENS = ("input", "cacheRead", "cacheWrite", "output")
RUN_OUTCOMES = ("ok", "failed", "cutoff")
# The format of --partial: its first key and version.
PARTIAL = "ndagent-stats-partial"
VERSION = 1

DESCRIPTION = f"""\
Read each FILE as a stream of its own (a run cut off at the end of one FILE is counted
cut off, never joined to the next one) and print figures over all their runs:

  runs: how many ended ok, failed, or were cut off (no end event), and how many
    inputs held no run at all (the agent printed nothing);
  duration: the total, the median and the 95th percentile of the runs' durations;
  tokens: input (uncached), output, cache read and cache write, summed;
  cost: the cost in USD, summed;
  tool calls: by kind and by status, as 'ndagent tools' counts them, but that a
    Claude call which the result's permission_denials names is permissionDenied;
  failed commands: the shell calls of status failure, counted by command, most
    frequent first (--top).

Each figure is the agent's own, from the event that ends the run: Cursor's result;
Claude's result (tokens from modelUsage, cost from total_cost_usd); Codex's
turn.completed; Gemini's result stats. None is added up from other lines or
estimated, none guessed from a price list: a figure that the agent does not report
(Codex gives no duration, only Claude a cost) or that a run lacks (a cut-off run has
none) is left out of its sum, and 'runs' beside each sum says how many runs reported
it. Failed runs count their tokens and cost.

The median and the 95th percentile (nearest rank) are read from a histogram of the
durations in buckets {GROWTH - 1:.0%} wide: each is within 1% of the exact value, and
never beyond the shortest or the longest duration (so exact for one run), then rounded
to a whole millisecond. Memory does not grow with the number of runs: the
histogram has at most {MAX_BUCKET + 2} buckets and the sums are exact numbers. It grows
only with the distinct failed commands (each cut to {COMMAND_LIMIT} characters) and the
groups of --by.

--by run prints one record per run instead: agent, model, session_id, source and line
(where the run began), outcome (ok, failed or cutoff), duration_ms, tokens {{input,
cacheRead, cacheWrite, output}}, cost_usd, tool_calls and tools {{kind: {{status: n}}}}.
--by agent, --by model and --by file print the figures of each group: agents and
models by name (null last: inputs with no run have neither), files in FILE order.

Formats: text, for people, the default when standard output is a terminal; ndjson, one
NDJSON object per record or group, the default otherwise; tsv, one row per record or
group, the tool calls by status only and no failed commands (--header names the
columns).

Big archives: -j N reads the FILEs in N processes (by default one per core, when they
add up to {inputs.SHARE_FROM >> 20} MB or more), and the output is the same whatever N is, in
FILE order; standard input and the FILEs that are not regular files are read in this
process. While many FILEs are read, a terminal's standard error shows how many are done
and how fast (not with -q, nor when records go to that same terminal). --partial
prints instead one JSON object, a partial (counts, exact sums, the histogram, every
failed command), and --merge PARTIAL... prints from partials exactly what one call over
all their FILEs would have printed: run --partial on the shards of an archive, on as
many machines as there are, then --merge (the groups of --by file come in the order of
the partials). --merge --partial merges partials into one.

""" + options.JSON_ON_A_TERMINAL

EXAMPLES = """\
  ndagent stats logs/*.ndjson
  cursor-agent -p --output-format stream-json 'fix the tests' | tee run.ndjson |
    ndagent result; ndagent stats --by run run.ndjson
  ndagent stats --by model --format tsv --header logs/*.ndjson
  # where the runs that failed or were cut off began
  ndagent stats --by run --format ndjson logs/*.ndjson |
    jq -r 'select(.outcome != "ok") | "\\(.source):\\(.line)"'
  # fan out over machines that share logs/, 500 FILEs a call, then merge
  ls logs/*.ndjson | parallel -N 500 -j1 --sshlogin host1,host2 --workdir . \\
    ndagent stats --partial > partials.ndjson
  ndagent stats --merge partials.ndjson
  # in CI: fail when a run of the day failed or was cut off
  ndagent stats --format ndjson logs/*.ndjson | jq -e '.runs.failed + .runs.cutoff == 0'"""

EXIT_STATUSES = (
    ("0", "success: every input was read (failed and cut-off runs, and inputs with no\n"
          "run, are figures, not errors)"),
    ("1", "an input is no agent's stream (or not the one --agent names), is not UTF-8\n"
          "text, or has a bad line under --strict"),
    ("2", "usage error, a FILE that cannot be read or that is the output file, a bad\n"
          "partial (--merge), a worker process that died, output that cannot be\n"
          "written, or no memory for a line (--max-line)"),
    ("130", "interrupted (Ctrl-C)"),
)

GROUP_TSV = ("runs", "ok", "failed", "cutoff", "inputs_without_run", "duration_runs",
             "duration_total_ms", "duration_median_ms", "duration_p95_ms", "token_runs",
             *TOKENS, "cost_runs", "cost_usd", "tool_calls", *OUTCOMES)
RUN_TSV = ("agent", "model", "session_id", "source", "line", "outcome", "duration_ms",
           *TOKENS, "cost_usd", "tool_calls", *OUTCOMES)


class StatsCommand(Command):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "stats", SUMMARY, DESCRIPTION, EXAMPLES
    EXIT_STATUSES = EXIT_STATUSES
    FILES_HELP = ("input streams, each read as a stream of its own; '-' or none: standard "
                  "input (with --merge: partials)")
    needs = frozenset({"tools", "ends"})
    per_input = True

    @classmethod
    def add_options(cls, parser):
        parser.add_argument(
            "--by", choices=("run", "agent", "model", "file"),
            help="one record per run, or the figures of each agent, model or file "
                 "(by default, of all the runs)")
        options.add_format_option(
            parser, {"text": "for people", "ndjson": "one JSON object per record",
                     "tsv": "tab-separated values"},
            None, "text on a terminal, else ndjson")
        parser.add_argument(
            "--header", action="store_true", help="with --format tsv, a header row first")
        parser.add_argument(
            "--top", type=options.whole_number, default=TOP, metavar="N",
            help=f"how many failed commands to print (default {TOP}; 0: all)")
        options.add_jobs_option(parser)
        parser.add_argument(
            "--partial", action="store_true",
            help="print a partial for --merge (one JSON object) instead of the figures")
        parser.add_argument(
            "--merge", action="store_true",
            help="the FILEs are partials (of --partial): merge them")

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.by = args.by
        self.groups = {}  # group key -> Figures, in the order first seen
        self.tally = _Tally()  # the tool calls of the run in hand
        self.progress = None
        form = args.format
        if form is None:
            form = "ndjson" if args.partial or not out.terminal else "text"
        self.form = form

    # Reading.

    def execute(self):
        problem = self._conflict()
        if problem is not None:
            self.say(f"{problem} (see '{self.prog} --help')")
            return options.EXIT_USAGE
        return super().execute()

    def begin_output(self):
        if self.by == "run":
            self._write_header(RUN_TSV)

    def end_output(self):
        if self.progress is not None:
            self.progress.clear()
        if self.args.partial:
            self._write_partial()
        elif self.by != "run":
            self._write_groups()

    def _conflict(self):
        """What is wrong with the options together, or None."""
        args = self.args
        if args.partial and args.format not in (None, "ndjson"):
            return "--partial prints JSON only"
        if (args.partial or args.merge) and self.by == "run":
            return ("--by run does not go with --partial or --merge: the records of shards "
                    "add up as they are")
        return None

    def read(self, inputs):
        """Read the inputs (with --merge, the partials), the streams in shares where -j
        asks for them or they are many bytes of regular FILEs."""
        if self.args.merge:
            self._merge(inputs)
            return
        shown = (len(inputs) > 1 and not self.quiet and os.isatty(2)
                 and not (self.by == "run" and self.out.terminal))
        self.progress = Progress(self.prog, len(inputs), shown)
        read_inputs(self, inputs, self.progress)

    def partial(self):
        return list(self.groups.items())

    def merge(self, partials):
        for groups in partials:
            self._add_groups(groups)

    def _add_groups(self, groups):
        mine = self.groups
        for key, figures in groups:
            found = mine.get(key)
            if found is None:
                mine[key] = figures
            else:
                found.merge(figures)

    def say(self, text, once=None):
        if self.progress is not None:
            self.progress.clear()
        super().say(text, once)

    def bad_line(self, bad):
        if self.args.strict:
            self.stopped = True
        super().bad_line(bad)

    # The events of each input.

    def keep(self, start):
        command = start.target if start.kind == "shell" else None
        return ((start.kind, command, start.call_id),
                64 + (0 if command is None else getsizeof(command)))

    def call_ended(self, kept, end):
        kind = end.kind
        if kind is None and kept is not None:
            kind = kept[0]
        outcome = end.outcome
        command = None
        if outcome == "failure" and kind == "shell":
            command = end.target
            if command is None and kept is not None:
                command = kept[1]
        self.tally.add(kind, outcome, command, end.call_id)

    def call_again(self, kept, start):
        self.tally.add(kept[0], "pending")

    def calls_dropped(self, dropped, start, why):
        for kept in dropped:
            self.tally.add(kept[0], "pending")

    def end_run(self, end, pending):
        tally, self.tally = self.tally, _Tally()
        told = end.outcomes or {}  # what the run's end tells of its calls' outcomes
        for kind, _, call_id in pending:
            tally.add(kind, told.get(call_id, "pending"))
        if told:
            tally.settle(told)
        start = end.start
        outcome = "cutoff" if end.cutoff else "ok" if end.ok else "failed"
        duration = _figure(end.duration_ms)
        usage = end.usage
        tokens = None if usage.__class__ is not dict else {
            name: _figure(usage.get(name)) for name in TOKENS}
        cost = _figure(end.cost_usd)
        model = end.model if end.model is not None else start.model
        if self.by == "run":
            self._write_run(start, model, outcome, duration, tokens, cost, tally)
            return
        key = {None: None, "agent": start.agent, "model": model, "file": start.source}[self.by]
        self._group(key).add_run(outcome, duration, tokens, cost, tally)

    def no_run(self, source):
        if self.by != "run":
            self._group(source if self.by == "file" else None).no_run += 1

    def _group(self, key):
        found = self.groups.get(key)
        if found is None:
            found = self.groups[key] = Figures()
        return found

    # Partials.

    def _merge(self, inputs):
        by = self.by
        known = by is not None  # --by given, or a partial read: the partials must agree
        for batch in batches(inputs, None, every_line=True, max_line=self.args.max_line):
            for item in batch:
                kind = item.__class__
                if kind is Event:
                    try:
                        partial_by, groups = read_partial(item.data)
                        if known and partial_by != by:
                            raise BadPartial(f"a partial of {_by_text(partial_by)}, not of "
                                             f"{_by_text(by)}")
                    except BadPartial as error:
                        self._bad_partial(item, str(error))
                        continue
                    by, known = partial_by, True
                    self._add_groups(groups)
                elif kind is BadLine:
                    self._bad_partial(item, item.message)
                else:
                    where = item.source if item.line is None else f"{item.source}:{item.line}"
                    self.say(f"{where}: cannot read: {item.reason}")
                    self.status = options.EXIT_USAGE
        self.by = by

    def _bad_partial(self, where, message):
        self.say(f"{where.source}:{where.line}: not a partial of {self.prog}: {message}")
        self.status = options.EXIT_USAGE

    def _write_partial(self):
        self.out.write_json({PARTIAL: VERSION, "by": self.by,
                             "groups": [[key, figures.state()]
                                        for key, figures in self._ordered_groups()]})

    # Output.

    def _ordered_groups(self):
        """(key, Figures) in the order of the output: files as first seen, agents and
        models by name, None last; the summary of no run when there is none."""
        groups = list(self.groups.items())
        if self.by is None and not groups:
            groups = [(None, Figures())]
        if self.by in ("agent", "model"):
            groups.sort(key=lambda group: (group[0] is None, group[0] or ""))
        return groups

    def _write_header(self, columns):
        if self.form == "tsv" and self.args.header:
            self.out.write("\t".join(columns).encode() + b"\n")

    def _write_groups(self):
        self._write_header(GROUP_TSV if self.by is None else (_key_name(self.by), *GROUP_TSV))
        top = self.args.top or None
        first = True
        for key, figures in self._ordered_groups():
            record = figures.report(top)
            if self.form == "ndjson":
                if self.by is not None:
                    record = {_key_name(self.by): key, **record}
                self.out.write_json(record)
            elif self.form == "tsv":
                row = [] if self.by is None else [key]
                self._write_row(row + _group_row(record))
            else:
                lines = _text_block(record)
                if self.by is not None:
                    name = "(none)" if key is None else key
                    lines = [f"{self.by} {name}"] + ["  " + line for line in lines]
                    if not first:
                        lines.insert(0, "")
                self._write_text(lines)
            first = False

    def _write_run(self, start, model, outcome, duration, tokens, cost, tally):
        tools = tally.report()
        record = {"agent": start.agent, "model": model, "session_id": start.session_id,
                  "source": start.source, "line": start.line, "outcome": outcome,
                  "duration_ms": duration, "tokens": tokens, "cost_usd": cost,
                  "tool_calls": sum(tally.tools.values()), "tools": tools}
        if self.form == "ndjson":
            self.out.write_json(record)
        elif self.form == "tsv":
            tokens = tokens or {}
            self._write_row([start.agent, model, start.session_id, start.source,
                             start.line, outcome, duration,
                             *(tokens.get(name) for name in TOKENS), cost,
                             record["tool_calls"], *_by_outcome(tools)])
        else:
            self._write_text([_run_line(record)])

    def _write_row(self, values):
        from ndagent.terminal import tsv_row

        self.out.write(tsv_row(values))

    def _write_text(self, lines):
        """Lines for people, what stream text they hold (names, models, files) spelt out;
        the commands are quoted already."""
        from ndagent.terminal import escape_controls

        text = "".join(escape_controls(line) + "\n" for line in lines)
        self.out.write(text.encode("utf-8", "replace"))


class _Tally:
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
        key = (kind, outcome)
        self.tools[key] = self.tools.get(key, 0) + 1
        if command is not None:
            command = _command_key(command)
            self.commands[command] = self.commands.get(command, 0) + 1
        if (call_id is not None and outcome != "success" and outcome != "permissionDenied"
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
                 "histogram", "token_runs", "tokens", "cost_runs", "cost_total", "tools",
                 "commands")

    def __init__(self):
        self.runs = {"ok": 0, "failed": 0, "cutoff": 0}
        self.no_run = 0
        self.duration_runs = self.duration_total = 0
        self.duration_range = None  # [shortest, longest], exactly
        self.histogram = {}  # bucket -> runs
        self.token_runs = 0
        self.tokens = {}  # name -> sum, for the names some run reported
        self.cost_runs = self.cost_total = 0
        self.tools = {}  # (kind, status) -> calls
        self.commands = {}  # failed command -> calls

    def add_run(self, outcome, duration, tokens, cost, tally):
        self.runs[outcome] += 1
        if duration is not None:
            self.duration_runs += 1
            self.duration_total += _exact(duration)
            self._widen([duration, duration])
            bucket = _bucket(duration)
            self.histogram[bucket] = self.histogram.get(bucket, 0) + 1
        if tokens is not None:
            self.token_runs += 1
            sums = self.tokens
            for name, value in tokens.items():
                if value is not None:
                    sums[name] = sums.get(name, 0) + _exact(value)
        if cost is not None:
            self.cost_runs += 1
            self.cost_total += _exact(cost)
        _add_counts(self.tools, tally.tools)
        _add_counts(self.commands, tally.commands)

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
        _add_counts(self.tools, other.tools)
        _add_counts(self.commands, other.commands)

    def report(self, top):
        """The figures as printed (json), with the ``top`` failed commands (None: all)."""
        runs = self.runs
        durations = self.duration_runs
        commands = sorted(self.commands.items(), key=lambda item: (-item[1], item[0]))
        return {
            "runs": {"total": sum(runs.values()), **runs},
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
        """The figures as a partial holds them (JSON), in a fixed order."""
        return {
            "runs": self.runs, "no_run": self.no_run,
            "duration_runs": self.duration_runs, "duration_total": str(self.duration_total),
            "duration_range": self.duration_range, "histogram": sorted(self.histogram.items()),
            "token_runs": self.token_runs,
            "tokens": {name: str(self.tokens[name]) for name in TOKENS if name in self.tokens},
            "cost_runs": self.cost_runs, "cost_total": str(self.cost_total),
            "tools": _tools_report(self.tools),
            "failed_commands": sorted(self.commands.items()),
        }

    @classmethod
    def from_state(cls, data):
        """The figures of a partial's ``state``; BadPartial when it is not one."""
        if data.__class__ is not dict:
            raise BadPartial("a group's figures are not an object")
        figures = cls()
        runs = _field(data, "runs", dict)
        if sorted(runs) != sorted(RUN_OUTCOMES):
            raise BadPartial('"runs" does not have ok, failed and cutoff')
        figures.runs = {name: _counted(runs[name], "runs") for name in RUN_OUTCOMES}
        figures.no_run = _counted(_field(data, "no_run", int), "no_run")
        figures.duration_runs = _counted(_field(data, "duration_runs", int), "duration_runs")
        figures.duration_total = _sum(_field(data, "duration_total", str), "duration_total")
        bounds = data.get("duration_range")
        if (bounds is None) != (figures.duration_runs == 0) or bounds is not None and not (
                bounds.__class__ is list and len(bounds) == 2
                and all(_figure(bound) is not None for bound in bounds)
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
        figures.token_runs = _counted(_field(data, "token_runs", int), "token_runs")
        for name, total in _field(data, "tokens", dict).items():
            if name not in TOKENS or total.__class__ is not str:
                raise BadPartial('"tokens" holds a bad figure')
            figures.tokens[name] = _sum(total, "tokens")
        figures.cost_runs = _counted(_field(data, "cost_runs", int), "cost_runs")
        figures.cost_total = _sum(_field(data, "cost_total", str), "cost_total")
        for kind, outcomes in _field(data, "tools", dict).items():
            if outcomes.__class__ is not dict or not outcomes.keys() <= set(OUTCOMES):
                raise BadPartial('"tools" holds a bad status')
            for outcome, count in outcomes.items():
                figures.tools[kind, outcome] = _counted(count, "tools")
        for pair in _field(data, "failed_commands", list):
            if pair.__class__ is not list or len(pair) != 2 or pair[0].__class__ is not str:
                raise BadPartial('"failed_commands" holds a bad command')
            figures.commands[pair[0]] = _counted(pair[1], "failed_commands")
        return figures


class BadPartial(ValueError):
    """A line given to --merge that is not a partial: what is wrong with it."""


def read_partial(data):
    """(by, [(key, Figures)]) of a partial (a decoded JSON object); BadPartial when it
    is not one."""
    version = data.get(PARTIAL)
    if version is None:
        raise BadPartial(f'no "{PARTIAL}" key')
    if version != VERSION or version.__class__ is not int:
        raise BadPartial(f"version {version!r}: this ndagent reads version {VERSION}")
    by = data.get("by")
    if by not in (None, "agent", "model", "file"):
        raise BadPartial('"by" is not null, "agent", "model" or "file"')
    groups = []
    for group in _field(data, "groups", list):
        if group.__class__ is not list or len(group) != 2 or \
                group[0].__class__ not in (str, type(None)):
            raise BadPartial('"groups" holds a bad group')
        groups.append((group[0], Figures.from_state(group[1])))
    return by, groups


def _field(data, name, kind):
    value = data.get(name)
    if value.__class__ is not kind:
        raise BadPartial(f'"{name}" is missing or not of its type')
    return value


def _counted(value, name):
    if value.__class__ is not int or value < 0:
        raise BadPartial(f'"{name}" holds a count that is not a whole number')
    return value


_SUM = None


def _sum(text, name):
    """An exact sum as a partial writes it: "12" or "3/8"."""
    global _SUM
    if _SUM is None:
        import re

        _SUM = re.compile(r"(0|[1-9][0-9]{0,399})(?:/([1-9][0-9]{0,399}))?")
    match = _SUM.fullmatch(text)
    if match is None:
        raise BadPartial(f'"{name}" holds a sum that is not a number')
    if match[2] is None:
        return int(match[1])
    from fractions import Fraction

    return Fraction(int(match[1]), int(match[2]))


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


def _by_outcome(tools):
    """The calls of each status of OUTCOMES, of {kind: {status: n}}."""
    return [sum(outcomes.get(outcome, 0) for outcomes in tools.values())
            for outcome in OUTCOMES]


def _figure(value):
    """A figure of a run (milliseconds, tokens, dollars): a number from 0 to MOST, or
    None (absent, or not such a number)."""
    kind = value.__class__
    if (kind is int or kind is float) and 0 <= value <= MOST:
        return value
    return None


def _exact(value):
    """A figure as an exact number, for sums that do not depend on the order of adding:
    an int as it is, a float as the fraction it is."""
    if value.__class__ is int:
        return value
    from fractions import Fraction

    return Fraction(value)


def _plain(total):
    """An exact sum for JSON: an int when it is whole (and fits in 64 bits), else a float."""
    if total.__class__ is not int:
        if total.denominator != 1:
            return float(total)
        total = int(total)
    return total if total < 1 << 63 else float(total)


_LOG_GROWTH = None


def _bucket(milliseconds):
    global _LOG_GROWTH
    if milliseconds < 1:
        return -1
    from math import log

    if _LOG_GROWTH is None:
        _LOG_GROWTH = log(GROWTH)
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


def _key_name(by):
    """The field of a group's key in the output."""
    return "source" if by == "file" else by


def _by_text(by):
    return "the summary" if by is None else f"--by {by}"


# Text for people.

_TOKEN_LABELS = (("input", "input"), ("output", "output"), ("cacheRead", "cache read"),
                 ("cacheWrite", "cache write"))
_RUN_TOKEN_LABELS = (("input", "in"), ("output", "out"), ("cacheRead", "cache read"),
                     ("cacheWrite", "cache write"))


def _text_block(record):
    """The lines of a group's figures, for people."""
    runs = record["runs"]
    lines = [f"runs         {runs['total']}: {runs['ok']} ok, {runs['failed']} failed, "
             f"{runs['cutoff']} cut off"]
    if record["inputs_without_run"]:
        lines.append(f"no run       {_plural(record['inputs_without_run'], 'input')}")
    duration = record["duration_ms"]
    if duration["runs"]:
        lines.append(f"duration     total {_duration(duration['total'])}, median "
                     f"{_duration(duration['median'])}, 95th percentile "
                     f"{_duration(duration['p95'])} ({_plural(duration['runs'], 'run')})")
    else:
        lines.append("duration     not reported")
    tokens = record["tokens"]
    if tokens["runs"]:
        said = [f"{label} {tokens[name]:,}" for name, label in _TOKEN_LABELS
                if tokens[name] is not None]
        lines.append(f"tokens       {', '.join(said)} ({_plural(tokens['runs'], 'run')})")
    else:
        lines.append("tokens       not reported")
    cost = record["cost_usd"]
    lines.append(f"cost         ${cost['total']:,.4f} ({_plural(cost['runs'], 'run')})"
                 if cost["runs"] else "cost         not reported")
    lines.append(f"tool calls   {record['tool_calls']}")
    for kind, outcomes in record["tools"].items():
        lines.append(f"  {kind:<12} {sum(outcomes.values())}: "
                     + ", ".join(f"{count} {outcome}" for outcome, count in outcomes.items()))
    if record["failed_commands"]:
        from ndagent.terminal import quote

        lines.append("failed commands, most frequent first")
        lines.extend(f"  {item['count']:>9}  {quote(item['command'])}"
                     for item in record["failed_commands"])
    return lines


def _run_line(record):
    """One run's line, for people: where it began, its agent, model and outcome, then
    what it reports."""
    said = [f"{record['source']}:{record['line']}: {record['agent']} "
            f"{record['model'] or '-'} {record['outcome']}"]
    if record["duration_ms"] is not None:
        said.append(_duration(record["duration_ms"]))
    tokens = record["tokens"]
    if tokens is not None:
        said.append(" / ".join(f"{tokens[name]:,} {label}" for name, label in _RUN_TOKEN_LABELS
                               if tokens[name] is not None) + " tokens")
    if record["cost_usd"] is not None:
        said.append(f"${record['cost_usd']:,.4f}")
    calls = _plural(record["tool_calls"], "tool call")
    failing = [f"{count} {outcome}" for outcome, count in
               zip(OUTCOMES, _by_outcome(record["tools"])) if count and outcome != "success"]
    said.append(calls + (f" ({', '.join(failing)})" if failing else ""))
    return ", ".join(said)


def _duration(milliseconds):
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


def _plural(count, noun):
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _group_row(record):
    """A group's TSV columns after its key (GROUP_TSV)."""
    runs, duration, tokens = record["runs"], record["duration_ms"], record["tokens"]
    return [runs["total"], runs["ok"], runs["failed"], runs["cutoff"],
            record["inputs_without_run"], duration["runs"], duration["total"],
            duration["median"], duration["p95"], tokens["runs"],
            *(tokens[name] for name in TOKENS), record["cost_usd"]["runs"],
            record["cost_usd"]["total"], record["tool_calls"],
            *_by_outcome(record["tools"])]


build_parser, main = cli.entry(StatsCommand)
