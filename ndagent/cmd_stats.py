"""ndagent stats: figures over many runs of any agent, mergeable across machines."""

import os
from sys import getsizeof

from ndagent import cli, inputs, junit, options, stepsummary, timeline
from ndagent.decoder import MAX_LINE, BadLine, Event, batches
from ndagent.feed import read_here
from ndagent.figures import (
    COMMAND_LIMIT,
    GROUPINGS,
    GROWTH,
    MAX_BUCKET,
    MAX_OPENINGS,
    PERIODS,
    TOKENS,
    BadPartial,
    Figures,
    Tally,
    day_of,
    exact,
    exact_text,
    figure,
    partial,
    period_of,
    read_partial,
)
from ndagent.frame import Command, read_inputs
from ndagent.markup import cut
from ndagent.model import OUTCOMES, run_outcome
from ndagent.output import Progress
from ndagent.prices import Prices, PricesError
from ndagent.statstext import by_outcome, group_row, run_line, text_block
from ndagent.terminal import escape_controls, tsv_row

SUMMARY = "print figures over runs: outcomes, time, tokens, cost, tool calls"

# --top's default.
TOP = 10
# With --format junit, each run's answer in <system-out> is cut to this many characters.
ANSWER_LIMIT = 10_000
# --max-line's default with --merge: a partial of --by model over a million models,
# or of the failed commands of a large archive, is one line of hundreds of megabytes.
MERGE_MAX_LINE = 1 << 30

DESCRIPTION = f"""\
Read each FILE as a stream of its own (a run cut off at the end of one FILE is counted
cut off, never joined to the next one) and print figures over all their runs:

  runs: how many ended ok, failed, or were cut off (no end event), and how many
    inputs held no run at all (the agent printed nothing); a session file's runs
    may also be interrupted (by the user) or open (the file ends inside them);
  duration: the total, the median and the 95th percentile of the runs' durations;
  tokens: input (uncached), output, cache read and cache write, summed;
  cost: the cost in USD, summed;
  extra figures: those an agent reports besides (each agent's, below), each summed;
  tool calls: by kind and by status, as 'ndagent tools' counts them, but each with
    its final outcome (the run's end may say more of a call: below);
  failed commands: the shell calls of status failure, counted by command, most
    frequent first (--top).

Each figure is the agent's own, from the event that ends the run (each agent's,
below). None is added up from other lines or estimated, none guessed from a price
list: a figure that the agent does not report or that a run lacks (a cut-off run has
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
cacheRead, cacheWrite, output}}, cost_usd, extra {{name: figure}} (only for an agent
that reports extra figures), tool_calls and tools {{kind: {{status: n}}}}.
--by agent, --by model and --by file print the figures of each group: agents and
models by name (null last: inputs with no run have neither), files in FILE order.
--by session, project, day, week (from Monday) and month group the runs by their
session, their project (the cwd a session file records) and the time they began, in
--tz's zone; --since and --until keep only the runs begun in those days (a run with no
time, as most streams' runs, is then left out).

A session file's tokens are counted once per API message across all the FILEs: a
subagent's own file and the copies of its messages in its parent's file are the same
calls (docs/agents.md#session-files). That is the one figure whose memory grows with
the input: a key and four figures per message (kept in partials, so that --merge stays
exact).

Formats: text, for people, the default (wherever standard output goes: a script asks
for --format ndjson or tsv); ndjson, one NDJSON object per record or group (always
with --partial); tsv, one row per record or group, the tool calls by status only and
no failed commands (--header names the columns); markdown, GitHub-flavoured tables for
a CI job's summary ($GITHUB_STEP_SUMMARY): the runs, the figures, the tool calls and
the failed commands (or with --by run a row per run), stream text (models, commands,
FILE:LINE) only in code spans, at most --max-bytes bytes (a table that would pass it
ends with a note); junit, one JUnit XML document, a <testsuite> per FILE (its FILEs
then read in this process only) and a <testcase> per run, with a <failure> for a run
that failed (its reason), an <error> for one cut off, and each run's answer (cut to
10,000 characters) in the suite's <system-out>.

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
  <AGENT> 'fix the tests' | tee run.ndjson |
    ndagent result; ndagent stats --by run run.ndjson
  ndagent stats --by model --format tsv --header logs/*.ndjson
  # where the runs that failed or were cut off began
  ndagent stats --by run --format ndjson logs/*.ndjson |
    jq -r 'select(.outcome != "ok") | "\\(.source):\\(.line)"'
  # fan out: a partial per 500 FILEs (each call on any machine), then merge them
  ls logs/*.ndjson | xargs -n 500 ndagent stats --partial > partials.ndjson
  ndagent stats --merge partials.ndjson
  # in CI: fail when a run of the day failed or was cut off
  ndagent stats --format ndjson logs/*.ndjson | jq -e '.runs.failed + .runs.cutoff == 0'
  # in a GitHub Actions step: the job's summary, and a JUnit report of the runs
  ndagent stats --format markdown --by run logs/*.ndjson >> summary.md
  ndagent stats --format junit logs/*.ndjson > runs.xml"""

EXIT_STATUSES = (
    ("0", "success: every input was read (failed and cut-off runs, and inputs with no\n"
          "run, are figures, not errors)"),
    ("1", "an input is no agent's stream (or not the one --agent names), is not UTF-8\n"
          "text, or has a bad line under --strict"),
    ("2", "usage error, a FILE that cannot be read or that is the output file, a bad\n"
          "partial (--merge), a worker process that died (then no figures are printed,\n"
          "unless --keep-going), output that cannot be written, or no memory for a line\n"
          "(--max-line)"),
    ("130", "interrupted (Ctrl-C)"),
)

GROUP_TSV = ("runs", "ok", "failed", "cutoff", "inputs_without_run", "duration_runs",
             "duration_total_ms", "duration_median_ms", "duration_p95_ms", "token_runs",
             *TOKENS, "cost_runs", "cost_usd", "tool_calls", *OUTCOMES)
RUN_TSV = ("agent", "model", "session_id", "source", "line", "outcome", "duration_ms",
           *TOKENS, "cost_usd", "tokens_from", "tool_calls", *OUTCOMES)


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
            "--by", choices=("run", *GROUPINGS), metavar="GROUP",
            help="one record per run, or the figures of each agent, model, file, session, "
                 "day, week (from Monday), month or project (by default, of all the runs)",
        ).brief = "a record per run, agent, model, file, session, day, ..."
        options.add_format_option(
            parser, {"text": "for people", "ndjson": "one JSON object per record",
                     "tsv": "tab-separated values",
                     "markdown": "GitHub-flavoured Markdown tables, for a CI job's summary",
                     "junit": "JUnit XML: a testsuite per FILE, a testcase per run"},
            None, "text; ndjson with --partial")
        parser.add_argument(
            "--max-bytes", type=options.whole_number, default=stepsummary.MAX_BYTES,
            metavar="N",
            help="with --format markdown, the most bytes written (default "
                 f"{stepsummary.MAX_BYTES:,}: GitHub refuses a job summary over 1024k)")
        options.add_time_origin_option(parser)
        parser.add_argument(
            "--header", action="store_true", help="with --format tsv, a header row first")
        parser.add_argument(
            "--prices", metavar="FILE",
            help="add cost_estimated_usd: the runs' tokens priced from FILE, a table in "
                 "LiteLLM's model_prices_and_context_window.json format (an estimate, "
                 "labelled so; a model it does not name is not priced)",
        ).brief = "estimate costs from a LiteLLM price table"
        parser.add_argument(
            "--top", type=options.whole_number, default=TOP, metavar="N",
            help=f"how many failed commands to print (default {TOP}; 0: all)")
        options.add_jobs_option(parser)
        options.add_keep_going_option(parser, "the figures (or the partial)")
        parser.add_argument(
            "--partial", action="store_true",
            help="print a partial for --merge (one JSON object) instead of the figures",
        ).brief = "print a partial; the FILEs are partials: merge them"
        parser.add_argument(
            "--merge", action="store_true",
            help="the FILEs are partials (of --partial): merge them (the longest line "
                 f"read is then {MERGE_MAX_LINE >> 30}G by default)",
        ).short_with = "partial"
        parser.set_defaults(max_line=None)

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        if args.max_line is None:
            args.max_line = MERGE_MAX_LINE if args.merge else MAX_LINE
        self.by = args.by
        self.groups = {}  # group key -> Figures, in the order first seen
        # The runs counted with running totals as given ([key, index, group, usage,
        # cost]): a partial before this command's may hold the runs before them.
        self.openings = []
        self.tally = Tally()  # the tool calls of the run in hand
        # The API messages whose usage a run counted, {key: [group, usage]}: a copy of
        # one in another input (a subagent's file and its parent's copies) counts once.
        self.claimed = {}
        self.zone = args.tz
        self.prices = self.prices_error = None
        if args.prices is not None:
            try:
                self.prices = _read_prices(args.prices)
            except PricesError as error:
                self.prices_error = str(error)
        self.progress = None
        form = args.format
        if form is None:
            form = "ndjson" if args.partial else "text"
        self.form = form
        self.junit = form == "junit"
        self.suite = []  # with --format junit: the cases of the FILE in hand
        self.answers = junit.SystemOut()  # and its runs' answers, for <system-out>
        self.suites = 0
        self.first_time = None  # and its earliest stream time
        # With --format markdown --by run: the rows kept (within --max-bytes), and how
        # many runs there are.
        self.rows, self.row_bytes, self.run_count = [], 0, 0

    # Reading.

    def execute(self):
        problem = self._conflict()
        if self.prices_error is not None:
            problem = f"--prices: {self.prices_error}"
        if problem is not None:
            self.say(f"{problem} (see '{self.prog} --help')")
            return options.EXIT_USAGE
        return super().execute()

    def begin_output(self):
        if self.junit:
            self.out.write(junit.HEAD.encode())
        elif self.by == "run":
            self._write_header(RUN_TSV)

    def end_output(self):
        if self.progress is not None:
            self.progress.clear()
        if self.junit:
            self.out.write(junit.TAIL.encode())
            return
        if self.by == "run":
            if self.form == "markdown":
                self.out.write(stepsummary.runs_markdown(self.rows, self.run_count,
                                                         self.args.max_bytes))
            return  # each record was printed with its run
        if self.status == options.EXIT_USAGE and not self.args.keep_going:
            # An input (or a partial) not read: figures without it would mislead.
            self.say("error: no figures printed: an input was not read (--keep-going "
                     "prints them without it)")
            return
        if self.args.partial:
            self._write_partial()
        elif self.form == "markdown":
            self.out.write(stepsummary.groups_markdown(
                self.by, [(key, figures.report(self.args.top or None))
                          for key, figures in self._ordered_groups()], self.args.max_bytes))
        else:
            self._write_groups()

    def _conflict(self):
        """What is wrong with the options together, or None."""
        args = self.args
        if args.partial and args.format not in (None, "ndjson"):
            return "--partial prints JSON only"
        if args.merge and args.format == "junit":
            return "--format junit reads streams, not partials"
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
        if self.junit or self.by == "run" and self.form == "markdown":
            # The suites are numbered, the rows counted, in FILE order: read here.
            read_here(self, inputs)
        else:
            # Told of each FILE only where it is shown: telling costs a stat a FILE.
            read_inputs(self, inputs, self.progress if shown else None)

    def partial(self):
        return ([(key, figures.state()) for key, figures in self.groups.items()],
                self.openings, self._claims())

    def _claims(self):
        return [[key, *claim] for key, claim in self.claimed.items()]

    def merge(self, partials):
        for groups, openings, claimed in partials:
            groups = [(key, Figures.from_state(state)) for key, state in groups]
            self._settle_claims(dict(groups), claimed)
            self._add_groups(groups)
            self._add_openings(openings)

    def _settle_claims(self, groups, claimed):
        """The messages a partial counted that one before it counted too: taken back from
        its groups (a message counts where it was first counted)."""
        mine = self.claimed
        for key, group, usage, estimate in claimed:
            if key in mine:
                groups[group].uncount(usage, estimate)
            else:
                mine[key] = [group, usage, estimate]

    def _add_openings(self, openings):
        self.openings.extend(openings[:MAX_OPENINGS - len(self.openings)])

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

    def needs_of(self, module):
        # JUnit's <system-out> holds each run's answer, which some agents give only as
        # text.
        return self.needs | {"text"} if self.junit else self.needs

    def begin_run(self, start):
        if self.junit:
            self._seen(timeline.stream_time(start))

    def _seen(self, time_ms):
        """A stream time of the FILE in hand: its suite's timestamp is the earliest."""
        if time_ms is not None and (self.first_time is None or time_ms < self.first_time):
            self.first_time = time_ms

    def keep(self, start):
        # The kind may be a tool's own name, and the call_id is kept whole (for the
        # outcomes the run's end tells): both count, as long as any stream makes them.
        if self.junit:
            self._seen(timeline.stream_time(start))
        command = start.target if start.kind == "shell" else None
        return ((start.kind, command, start.call_id),
                64 + getsizeof(command) + getsizeof(start.kind) + getsizeof(start.call_id))

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
        tally, self.tally = self.tally, Tally()
        told = end.outcomes or {}  # what the run's end tells of its calls' outcomes
        for kind, _, call_id in pending:
            tally.add(kind, told.get(call_id, "pending"))
        if told:
            tally.settle(told)
        start = end.start
        day = day_of(start.started, self.zone) if self.by in PERIODS else None
        outcome = run_outcome(end)
        duration = figure(end.duration_ms)
        model = end.model if end.model is not None else start.model
        key = self._key(start, model, day)
        # Sums count each API message once; a record of --by run is the run's own.
        parts = None if self.by == "run" else end.usage_parts
        if parts is not None:
            parts = self._claim(parts, key, model)
        if parts is None:
            usage = end.usage
        elif parts:
            usage = _usage_of(parts)
        else:  # every message was counted before (None: the run made none)
            usage = _usage_of(end.usage_parts.values(), counted=False) \
                if end.usage_parts else None
        tokens = None if usage.__class__ is not dict else {
            name: figure(usage.get(name)) for name in TOKENS}
        cost = figure(end.cost_usd)
        extra = self._extra(end.extra)
        if self.junit:
            self._add_case(end, model, duration)
            return
        estimate = None if self.prices is None else self._estimate(model, tokens, parts,
                                                                   end.usage_parts)
        if self.by == "run":
            self._write_run(start, model, outcome, duration, tokens, cost, tally,
                            end.tokens_from, estimate, extra)
            return
        if self.by == "model" and end.usage_parts:
            self._by_model(key, parts, end.usage_parts, (outcome, duration, cost, tally),
                           model)
            return
        if parts:
            self._priced(parts, model, estimate)
        self._group(key).add_run(outcome, duration, tokens, cost, tally, estimate, extra)
        if end.tokens_from not in (None, "run") and len(self.openings) < MAX_OPENINGS:
            total_key, index, state = end.totals
            self.openings.append([total_key, index, key, state["usage"], state["cost"]])

    def _extra(self, given):
        """A run's extra figures, {name: figure} of those its format declares that it
        reported, or None."""
        if given.__class__ is not dict:
            return None
        found = {name: figure(given.get(name)) for name in self.format.extra_figures
                 if figure(given.get(name)) is not None}
        return found or None

    def _add_case(self, end, model, duration):
        start = end.start
        number = len(self.suite) + 1
        result = None
        if end.cutoff:
            result = ("error", "cutoff", "the input ended before the run's end event",
                      self.cut_off(end) + "\n")
        elif not end.ok:
            failure = self.failure(end)
            result = ("failure", "failed", failure, failure + "\n")
        self.suite.append(junit.Case(junit.case_name(number, start.line, start.agent, model),
                                     duration, result))
        answer = self.format.answer(end)
        if answer:
            self.answers.add(f"run {number} (line {start.line}): answer\n"
                             f"{cut(answer, ANSWER_LIMIT)}\n")

    def end_input(self, source, events):
        if self.junit:
            self._write_suite(source)

    def not_read(self, where, message):
        super().not_read(where, message)
        if self.junit:  # its suite all the same, with the reason
            self.suite.append(junit.Case("stream", None, ("error", "invalid", message,
                                                          message + "\n")))
            self._write_suite(where.source)

    def _write_suite(self, source):
        origin = self.first_time
        if origin is None:
            origin = options.time_origin(self.args.time_origin, source)
        self.out.write(junit.suite(source, self.suites, self.suite, origin,
                                   self.answers).encode("utf-8", "replace"))
        self.suites += 1
        self.suite, self.answers, self.first_time = [], junit.SystemOut(), None

    def _key(self, start, model, day):
        """The group of a run for --by."""
        by = self.by
        if by in PERIODS:
            return period_of(by, day)
        if by == "session":
            session = start.session_id
            # A subagent's session ("<session>/agent-<id>") is its parent's.
            return session if session is None else session.split("/", 1)[0]
        return {None: None, "run": None, "agent": start.agent, "model": model,
                "file": start.source, "project": start.project}[by]

    def _claim(self, parts, group, model):
        """Of a run's API messages ``parts`` ({key: (model, usage)}), those that no run
        read before counted, [(model, usage)]: they are counted now, in ``group`` (by
        model: their own model's, else the run's ``model``)."""
        claimed = self.claimed
        by_model = self.by == "model"
        found = []
        for key, (each, figures) in parts.items():
            if key not in claimed:
                claimed[key] = [(each or model) if by_model else group, figures, None]
                found.append((each, figures, key))
        return found

    def _priced(self, messages, model, estimate):
        """Note with each of the run's newly claimed ``messages`` what its run's
        ``estimate`` (None: none) holds of its cost, for a partial after this one that
        counted it too to take back."""
        if estimate is None:
            return
        for each, figures, key in messages:
            if any(figures.values()):
                self.claimed[key][2] = exact_text(self.prices.cost(each or model, figures))

    def _by_model(self, main, parts, every, run, model):
        """A run's API messages' tokens, each in the group of its own model (``parts``:
        those no run counted before; ``every``: all of them, {key: (model, usage)}); the
        run counts once in the group of each model of its messages, whoever counted
        them first (so that shares of the input count it alike), its duration, cost
        and calls in its main model's (``main``)."""
        outcome, duration, cost, tally = run
        # Each model's messages, grouped in one pass (a pass over them all for each
        # model took time in the product of the two).
        of_model = {}
        for key, part in every.items():
            of_model.setdefault(part[0] or model, {})[key] = part
        models = {name: [] for name in of_model}
        for part in parts:
            models[part[0] or model].append(part)
        for name, messages in models.items():
            here = name == main
            estimate = None if self.prices is None else self._estimate(
                name, None, messages, of_model[name])
            self._priced(messages, model, estimate)
            usage = _usage_of(messages) if messages else _usage_of(
                list(of_model[name].values()), counted=False)
            self._group(name).add_run(
                outcome, duration if here else None, usage,
                cost if here else None, tally if here else Tally(), estimate)
        if main not in models:
            self._group(main).add_run(outcome, duration, None, cost, tally)

    def _estimate(self, model, tokens, parts, every=None):
        """The run's cost estimated from the price table: each API message's by its own
        model where the run says them (``parts``: those counted now), summed exactly (as
        a partial after this one that counted them too takes them back); None where one
        is not priced, one counted before too (``every``: all the run's, {key: (model,
        usage)}), as a share that read the run alone finds it."""
        if parts is None:
            return None if tokens is None else self.prices.cost(model, tokens)
        total = 0
        for part in parts:
            each, figures = part[0], part[1]
            if any(figures.values()):
                cost = self.prices.cost(each or model, figures)
                if cost is None:
                    return None
                total += exact(cost)
        if every is not None and len(every) > len(parts):
            counted_now = {part[2] for part in parts}
            if any(key not in counted_now and any(figures.values())
                   and self.prices.cost(each or model, figures) is None
                   for key, (each, figures) in every.items()):
                return None
        return total

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
        # Exactly: a count of a partial that merged many may be beyond 64 bits.
        for batch in batches(inputs, None, exact=True, every_line=True,
                             max_line=self.args.max_line):
            for item in batch:
                kind = item.__class__
                if kind is Event:
                    try:
                        partial_by, groups, openings, totals, claimed = \
                            read_partial(item.data)
                        if known and partial_by != by:
                            raise BadPartial(f"a partial of {_by_text(partial_by)}, not of "
                                             f"{_by_text(by)}")
                    except BadPartial as error:
                        self._bad_partial(item, str(error))
                        continue
                    by, known = partial_by, True
                    self._settle_openings(dict(groups), openings)
                    self._settle_claims(dict(groups), claimed)
                    self.totals.absorb(totals)
                    self._add_groups(groups)
                elif kind is BadLine:
                    self._bad_partial(item, item.message)
                else:
                    where = item.source if item.line is None else f"{item.source}:{item.line}"
                    self.say(f"{where}: cannot read: {item.reason}")
                    self.status = options.EXIT_USAGE
        self.by = by

    def _settle_openings(self, groups, openings):
        """The runs of a partial counted with running totals as given: where the
        partials before hold the runs before them, their figures become their own."""
        for key, index, group, usage, cost in openings:
            own = self.totals.own(key, index, usage, cost)
            if own is None:
                self._add_openings([[key, index, group, usage, cost]])
            else:
                groups[group].refigure((usage, cost), own)

    def _bad_partial(self, where, message):
        self.say(f"{where.source}:{where.line}: not a partial of {self.prog}: {message}")
        self.status = options.EXIT_USAGE

    def _write_partial(self):
        totals = [[key, index, {"usage": state["usage"], "cost": state["cost"]}]
                  for key, index, state in self.totals.state()]
        self.out.write_json(partial(self.by, self._ordered_groups(), self.openings, totals,
                                    self._claims()))

    # Output.

    def _ordered_groups(self):
        """(key, Figures) in the order of the output: files as first seen, agents and
        models by name, None last; the summary of no run when there is none."""
        groups = list(self.groups.items())
        if self.by is None and not groups:
            groups = [(None, Figures())]
        if self.by not in (None, "file"):
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
            if self.prices is not None:
                record["cost_estimated_usd"] = figures.estimate()
            if self.form == "ndjson":
                if self.by is not None:
                    record = {_key_name(self.by): key, **record}
                self.out.write_json(record)
            elif self.form == "tsv":
                row = [] if self.by is None else [key]
                self._write_row(row + group_row(record))
            else:
                lines = text_block(record)
                if self.by is not None:
                    name = "(none)" if key is None else key
                    lines = [f"{self.by} {name}"] + ["  " + line for line in lines]
                    if not first:
                        lines.insert(0, "")
                self._write_text(lines)
            first = False

    def _write_run(self, start, model, outcome, duration, tokens, cost, tally, tokens_from,
                   estimate, extra):
        tools = tally.report()
        if tokens_from is None and (tokens is not None or cost is not None):
            tokens_from = "run"
        record = {"agent": start.agent, "model": model, "session_id": start.session_id,
                  "source": start.source, "line": start.line, "outcome": outcome,
                  "duration_ms": duration, "tokens": tokens, "cost_usd": cost,
                  "tokens_from": tokens_from, **({"extra": extra} if extra else {}),
                  "tool_calls": sum(tally.tools.values()), "tools": tools}
        if self.prices is not None:
            record["cost_estimated_usd"] = estimate
        if self.form == "ndjson":
            self.out.write_json(record)
        elif self.form == "markdown":
            self._keep_row(record, tools)
        elif self.form == "tsv":
            tokens = tokens or {}
            self._write_row([start.agent, model, start.session_id, start.source,
                             start.line, outcome, duration,
                             *(tokens.get(name) for name in TOKENS), cost, tokens_from,
                             record["tool_calls"], *by_outcome(tools)])
        else:
            self._write_text([run_line(record)])

    def _keep_row(self, record, tools):
        """A run's row for the table written at the end, while the rows kept fit in
        --max-bytes (the rest are only counted)."""
        self.run_count += 1
        if self.row_bytes <= self.args.max_bytes:
            cells = stepsummary.run_cells(self.run_count, record, by_outcome(tools))
            self.rows.append(cells)
            self.row_bytes += sum(len(cell.encode()) + 3 for cell in cells)

    def _write_row(self, values):
        self.out.write(tsv_row(values))

    def _write_text(self, lines):
        """Lines for people, what stream text they hold (names, models, files) spelt out;
        the commands are quoted already."""
        text = "".join(escape_controls(line) + "\n" for line in lines)
        self.out.write(text.encode("utf-8", "replace"))


_PRICES = {}  # path -> its table, read once in a process (and its shares' processes)


def _read_prices(path):
    if path not in _PRICES:
        _PRICES[path] = Prices.read(path)
    return _PRICES[path]


def _usage_of(parts, counted=True):
    """The usage of API messages [(model, usage)]; not ``counted``: 0 for each figure
    they report (they were counted before), None for one they do not."""
    usage = dict.fromkeys(TOKENS, 0)
    for part in parts:
        figures = part[1]
        for name in TOKENS:
            value = figures.get(name)
            if value is None or usage[name] is None:
                usage[name] = None
            elif counted:
                usage[name] += value
    return usage


def _key_name(by):
    """The field of a group's key in the output."""
    return "source" if by == "file" else by


def _by_text(by):
    return "the summary" if by is None else f"--by {by}"


build_parser, main = cli.entry(StatsCommand)
