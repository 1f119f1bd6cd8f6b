"""ndagent validate: check a stream against the format, with compiler-style diagnostics."""

from sys import getsizeof

from ndagent import cli, inputs, junit, options, timeline
from ndagent.feed import read_here
from ndagent.figures import figure, plural
from ndagent.formats import all_formats
from ndagent.frame import Command, noise_message, place
from ndagent.markup import workflow_command
from ndagent.model import FORGOTTEN, MAX_OPEN_CALLS, UNFINISHED, Answer
from ndagent.sources import STDIN, source_name
from ndagent.terminal import QUOTE_LIMIT, escape_controls, quote

SUMMARY = "check a stream against the format, with exact line numbers"

# The generic checks, for every agent: name (shown in each diagnostic, stable),
# severity, what it finds.  Each format adds its own (its CHECKS); --help and the man
# page print them all from here and there.
CHECKS = {
    "json": ("error", "a line is not a JSON object in UTF-8"),
    "truncated": ("error", "the last line, with no newline, is not whole JSON: cut off"),
    "noise": ("warning", "a line is not JSON but one the agent's CLI is known to write (a "
                         "banner, a runtime warning): each agent's are listed below"),
    "agent": ("error", "the input is no agent's stream (json output is not one), or not "
                       "the one --agent names"),
    "other-agent": ("error", "an event of another agent than the input's, after its first"),
    "call-twice": ("error", "a call_id is started again while still open"),
    "call-unstarted": ("warning", "a call_id is completed without being started"),
    "call-unfinished": ("error", "a call is started and never completed in its run"),
    "call-untracked": ("error", "a call is no longer tracked: too many calls open at once"),
    FORGOTTEN: ("warning", "the format's reader forgot the oldest of what it keeps of a "
                           "run, to stay within its memory (the message says what)"),
    "no-result": ("error", "a run ends without the event that ends a run: it was cut off"),
    "no-run": ("error", "the input holds no event: the agent printed nothing"),
    "read": ("error", "the input cannot be read (in the CI formats; on standard error "
                      "always)"),
    "answer": ("error", "the rebuilt answer differs from the result event's text"),
    "failed-run": ("error", "the result reports failure (is_error, or not success)"),
    "run-interrupted": ("info", "a session file's run was stopped by the user"),
    "run-open": ("info", "a session file ends inside a run: still running, or killed"),
}

_SHARE_MB, _SPLIT_MB = inputs.SHARE_FROM >> 20, inputs.SPLIT_FROM >> 20

DESCRIPTION = f"""\
Read the stream and report, on standard output, every place where it is not a
well-formed, complete, successful run: one line per finding, as it is found,

  FILE:LINE: error|warning: message [check]

then one summary line per FILE: 'FILE: N events, R runs, E errors, W warnings'. Each
FILE is checked as a stream of its own, so that many are checked in N processes with
-j N (by default one per core when they add up to {_SHARE_MB} MB or more), the output
the same whatever N is, in FILE order. A FILE of {_SPLIT_MB} MB or more that holds many
runs of an agent whose runs carry nothing over from one to the next (below) is checked
in N parts likewise, each cut between the end of one run and the start of the next:
lines are numbered and counted as in the whole FILE, and the output is the same. The
status is 1 when there is an error.

Each agent has the generic checks (bad lines, runs, calls, failed runs, the answer)
and its own (listed below). Blank lines, a byte order mark and \\r\\n line ends are
accepted silently. Memory stays constant however long the stream: the answer is
compared by digest, and at most {MAX_OPEN_CALLS} calls open at once are tracked, beyond
which the oldest is reported (call-untracked).

A message quotes text from the stream (ids, type, field and tool names) at most
{QUOTE_LIMIT} characters long, then '...', with a backslash doubled (\\\\) and control
characters and the characters that reorder or hide text spelt out (\\x1b, \\u202e,
\\u200b, \\U000e0001), in both formats.

In CI: --format github writes each diagnostic as a GitHub Actions workflow command
('::error file=FILE,line=LINE,title=ndagent validate: CHECK::MESSAGE', or ::warning),
escaped as the Actions toolkit escapes them ('%', CR and LF in the message; also ':'
and ',' in the properties), so that no stream text can make a command of its own; then,
unless -q, one last line '::notice title=ndagent validate::E errors, W warnings in R
runs' for all the FILEs; nothing else. GitHub shows at most 10 errors, 10 warnings
and 10 notices of a step as annotations (50 in a job): the rest stay in the log.
--format junit writes one JUnit XML document: a <testsuite> per FILE (written when it
is read, so that FILEs are then read in this process only), a <testcase> per run,
failing (type failed, cutoff or invalid) when the run failed, was cut off or has an
error, and one more case 'stream' when the FILE has errors outside any run; each
suite's <system-out> holds its text diagnostics and summary. Its timestamp is the
FILE's first stream time, else the time origin (--time-origin).

""" + options.JSON_ON_A_TERMINAL

EXAMPLES = """\
  <AGENT> 'fix the tests' | ndagent validate
  ndagent validate -q run.ndjson && ndagent result run.ndjson > answer.md
  # the checks that fail most often over a day of runs
  ndagent validate --format ndjson logs/*.ndjson | jq -r '.check // empty' |
    sort | uniq -c | sort -rn
  # in a Makefile: stop at a run that failed or was cut off
  answer.md: run.ndjson
  \tndagent validate -q $<
  \tndagent result $< > $@
  # in a GitHub Actions step: the diagnostics as annotations, and a JUnit report
  ndagent validate --format github logs/*.ndjson
  ndagent validate --format junit logs/*.ndjson > report.xml || true"""

EXIT_STATUSES = (
    ("0", "no errors (warnings allowed, unless --strict)"),
    ("1", "errors found"),
    ("2", "usage error, a FILE that cannot be read or that is the output file,\n"
          "output that cannot be written, or no memory for a line (--max-line)"),
    ("130", "interrupted (Ctrl-C)"),
)

# What validate needs of a Reader, which decodes every line (``needs`` None).
CHECKED = frozenset({"text", "tools", "tool_ends", "ends"})

# The check under which a format (its CHECKS) reports the calls still open when a run
# ends well, rather than call-unfinished.
OPEN_AT_END = "call-open"

# The environment variables the command reads (shown in its man page).
ENVIRONMENT = options.COLOR_ENVIRONMENT

# SGR sequences as compilers colour a diagnostic (GCC_COLORS' defaults): the place in
# bold, error: in bold red, warning: in bold magenta.
_COLORS = {"place": "\x1b[1m", "error": "\x1b[1;31m", "warning": "\x1b[1;35m",
           "info": "\x1b[1;36m"}
_RESET = "\x1b[0m"


def _listing(checks):
    return "\n".join(f"  {name:<17}{severity:<9}{meaning}"
                     for name, (severity, meaning) in checks.items())


def _noise(module):
    """The lines ``module``'s CLI is known to write besides its stream, for --help."""
    if not module.noise_lines:
        return ""
    said = ", ".join(f"'{escape_controls(start.decode())}'" for start in module.noise_lines)
    return f"\n  {module.name} noise: the lines that begin {said}"


class ValidateCommand(Command):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "validate", SUMMARY, DESCRIPTION, EXAMPLES
    EXIT_STATUSES = EXIT_STATUSES
    ENVIRONMENT = ENVIRONMENT
    CONVERTER = False
    FILES_HELP = "input streams, each checked on its own; '-' or none: standard input"
    needs = None  # every line is decoded and checked
    per_input = True
    checks = True
    splits_files = True

    @classmethod
    def build_parser(cls):
        parser = super().build_parser()
        listing = [f"checks:\n{_listing(CHECKS)}"]
        listing += [f"{each.name} checks:\n{_listing(each.checks)}{_noise(each)}"
                    for each in all_formats()]
        parser.epilog = "\n\n".join(listing) + f"\n\n{parser.epilog}"
        return parser

    @classmethod
    def add_options(cls, parser):
        parser.add_argument(
            "--strict", action="store_true",
            help=f"{options.STRICT_HELP}, and report undocumented event types and fields")
        parser.add_argument(
            "-q", "--quiet", action="store_true",
            help=f"{options.QUIET_HELP}: no warning diagnostics and no summary lines (a FILE "
                 "that cannot be read is still reported, on standard error)")
        options.add_format_option(parser, {
            "text": "one line per diagnostic and per summary",
            "ndjson": "one JSON object per diagnostic (source, line, severity, check, "
                      "message) and per summary (source, events, runs, errors, warnings)",
            "github": "a GitHub Actions workflow command per diagnostic, then a notice "
                      "with the counts",
            "junit": "one JUnit XML document: a testsuite per FILE, a testcase per run"},
            "text")
        options.add_color_option(parser, "the text diagnostics as compilers do (the place, "
                                     "error:, warning:)")
        options.add_jobs_option(parser)
        options.add_time_origin_option(parser)

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.form = args.format
        self.as_json = self.form == "ndjson"
        self.color = self.form == "text" and options.use_color(args.color, out.fd)
        self.suite = _Suite() if self.form == "junit" else None
        self.suites = 0  # the <testsuite>s written
        self.answer = Answer()
        self._new_input()
        # The errors, warnings and runs of every FILE, for --format github's notice.
        self.tally = [0, 0, 0]
        # The counts of the part of a FILE read (a sources.Part): events, runs, errors,
        # warnings, and whether it was read whole.
        self.counts = None

    def _new_input(self):
        self.runs = self.errors = self.warnings = 0
        self.readable = True

    def reader_needs(self, module):
        """Every model event, but not the native object, which is never printed."""
        return CHECKED

    def read(self, inputs):
        """JUnit's suites are numbered in FILE order: read here, one FILE after the
        other."""
        if self.suite is None:
            super().read(inputs)
        else:
            read_here(self, inputs)

    def begin_output(self):
        if self.suite is not None:
            self.out.write(junit.HEAD.encode())

    def end_output(self):
        if self.suite is not None:
            self.out.write(junit.TAIL.encode())
        elif self.form == "github" and not self.quiet:
            errors, warnings, runs = self.tally
            self._write_line(workflow_command(
                "notice", [("title", "ndagent validate")],
                f"{plural(errors, 'error')}, {plural(warnings, 'warning')} in "
                f"{plural(runs, 'run')}"))

    def begin_run(self, start):
        self.runs += 1
        self.tally[2] += 1
        self.answer = Answer()
        if self.suite is not None:
            self.suite.begin_run(start, self.runs, self.args.time_origin)

    def text(self, piece):
        self.answer.add(piece.text)

    def note(self, note):
        self.report(note, note.check, note.message)

    def keep(self, start):
        # The line of its start, and enough of the call_id for quote() to show it as it
        # would the whole id.  A call with no call_id cannot be paired: its format's
        # checks report it, if it matters.
        if self.suite is not None:
            self.suite.seen(timeline.stream_time(start))
        if start.call_id is None:
            return None
        shown = start.call_id[:QUOTE_LIMIT + 1]
        return (start.line, shown), getsizeof(shown)

    def call_again(self, earlier, start):
        self.report(start, "call-twice", f'call "{quote(start.call_id)}" started again: it '
                                         f"is open since line {earlier[0]}")

    def calls_dropped(self, dropped, start, why):
        for line, shown in dropped:
            self.report(_At(start.source, line), "call-untracked",
                        f'call "{quote(shown)}" is no longer tracked: {why}')

    def call_ended(self, kept, end):
        if kept is None and end.call_id is not None:
            self.report(end, "call-unstarted",
                        f'call "{quote(end.call_id)}" completed without being started')

    def _check_run(self, end, pending):
        start = end.start
        # A format may give the calls still open when a run ends well a check of its
        # own, with its own severity (Claude: a warning).
        check, after = "call-unfinished", ""
        if end.outcome == "open":
            pending = ()  # the calls of a session still running may still end
        if not end.cutoff and (end.ok or end.outcome in UNFINISHED) \
                and OPEN_AT_END in self.format.checks:
            check, after = OPEN_AT_END, f": still open at the run's end (line {end.line})"
        # The calls still open first: they were started before the run's last line, at
        # which a run cut off is reported (naming the line where it began).
        for line, shown in pending:
            self.report(_At(start.source, line), check,
                        f'call "{quote(shown)}" was started and never completed{after}')
        if end.outcome in UNFINISHED:
            self.report(end, f"run-{end.outcome}", f"the run (line {start.line}) is "
                        + ("interrupted by the user" if end.outcome == "interrupted" else
                           "open: the file ends inside it"))
            return
        if end.cutoff:
            if not end.stray:
                began = (f"line {start.line}" if start.source == end.source
                         else f"{start.source}:{start.line}")
                self.report(end, "no-result", f"{self.cut_off(end)} (it began at {began})")
            return
        text = end.answer
        if (self.format.live_answer and type(text) is str and not end.stray
                and not self.answer.matches(text)):
            self.report(end, "answer",
                        f"the rebuilt answer ({self.answer.length} characters) differs from "
                        f"the result event's text ({len(text)} characters)")
        if not end.ok:
            self.report(end, "failed-run", self.failure(end))

    def end_run(self, end, pending):
        self._check_run(end, pending)
        if self.suite is not None:
            self.suite.end_run(end)

    def bad_line(self, bad):
        if bad.cut_off:
            self.report(bad, "truncated", bad.message)
        elif self.format.is_noise(bad):
            self.report(bad, "noise", noise_message(bad))
        else:
            self.report(bad, "json", bad.message)

    def no_run(self, source):
        self.report(_At(source, 1), "no-run",
                    "no events: the agent printed nothing, or failed before it began")

    def not_read(self, where, message):
        self.report(where, "agent", message)
        if self.suite is not None:  # its suite all the same, failing
            self._write_suite(where.source)
        self._new_input()  # no summary for it: the next FILE's counts begin at 0

    def other_agent(self, event):
        self.report(event, "other-agent", event.message)

    def unreadable(self, item):
        super().unreadable(item)
        self.readable = False
        if self.form in ("github", "junit"):
            # A CI job's annotations and test report show what its log shows: a FILE
            # that was never written fails there too, rather than pass as empty.
            self.report(item, "read", f"cannot read: {item.reason}")

    def report(self, where, check, message):
        """One diagnostic at ``where`` (anything with ``source`` and ``line``): of the
        format's check of that name, which may give a generic one its own severity,
        else of the generic one."""
        found = None if self.format is None else self.format.checks.get(check)
        if found is None:
            found = CHECKS[check]
        elif check in self.format.strict_only and not self.strict:
            return
        severity = "error" if self.strict and found[0] != "info" else found[0]
        if severity == "error":
            self.errors += 1
            self.tally[0] += 1
            self.status = max(self.status, options.EXIT_BAD_STREAM)
        elif severity == "warning":
            self.warnings += 1
            self.tally[1] += 1
        if self.quiet and severity != "error":
            return
        if self.suite is not None:
            self.suite.add(where, severity, check, message,
                           _diagnostic_text(where, severity, check, message))
        elif self.form == "github":
            self._write_command(where, severity, check, message)
        elif self.as_json:
            self.out.write_json({"source": where.source, "line": where.line,
                                 "severity": severity, "check": check, "message": message})
        else:
            self._write_diagnostic(f"{where.source}:{where.line}:", severity,
                                   f"{message} [{check}]")

    def end_input(self, source, events):
        counts = (events, self.runs, self.errors, self.warnings, self.readable)
        if self.suite is not None:
            self._summary(source, counts)
            self._write_suite(source)
        elif self.part is None:
            self._summary(source, counts)
        else:  # for the command that adds up the parts (partial)
            self.counts = counts
        self._new_input()

    def partial(self):
        """The tally of what was read, and a part's counts with its FILE's name (None
        for whole FILEs: their summaries are written)."""
        if self.part is None:
            return tuple(self.tally), None
        # No counts: the part was not read to its end (no memory for a line).
        return tuple(self.tally), (source_name(self.part.path),
                                   self.counts or (0, 0, 0, 0, False))

    def merge(self, partials):
        """The tallies of the shares read added up, and the summary of a FILE read
        in parts: their counts added up."""
        for tally, _ in partials:
            self.tally = [mine + theirs for mine, theirs in zip(self.tally, tally)]
        counts = [found for _, found in partials if found is not None]
        if not counts:
            return
        totals = [sum(found[index] for _, found in counts) for index in range(4)]
        self._summary(counts[0][0], (*totals, all(found[4] for _, found in counts)))

    def _summary(self, source, counts):
        events, runs, errors, warnings, readable = counts
        if readable and not self.quiet and self.form != "github":
            said = (f"{source}: {plural(events, 'event')}, {plural(runs, 'run')}, "
                    f"{plural(errors, 'error')}, {plural(warnings, 'warning')}")
            if self.suite is not None:
                self.suite.out_line(escape_controls(said))
            elif self.as_json:
                self.out.write_json({"source": source, "events": events, "runs": runs,
                                     "errors": errors, "warnings": warnings})
            else:
                self._write_text(said)

    def _write_suite(self, source):
        self.out.write(self.suite.text(source, self.suites, self.args.time_origin).encode(
            "utf-8", "replace"))
        self.suites += 1
        self.suite = _Suite()

    def _write_command(self, where, severity, check, message):
        """A diagnostic as a GitHub Actions workflow command: FILE and LINE as
        properties (for standard input, none: the message names the place)."""
        place = escape_controls(where.source)
        properties = [("file", place), ("line", where.line)]
        if where.source == STDIN:
            properties, message = [], f"{place}:{where.line}: {message}"
        properties.append(("title", f"ndagent validate: {check}"))
        # GitHub's commands are error, warning and notice: an "info" finding is a notice.
        command = "notice" if severity == "info" else severity
        self._write_line(workflow_command(command, properties, escape_controls(message)))

    def _write_diagnostic(self, place, severity, rest):
        """A diagnostic's line; with colour, its place and severity coloured."""
        place = escape_controls(place)
        label = f"{severity}:"
        if self.color:
            place = f"{_COLORS['place']}{place}{_RESET}"
            label = f"{_COLORS[severity]}{label}{_RESET}"
        self._write_line(f"{place} {label} {escape_controls(rest)}")

    def _write_text(self, line):
        """One line of text output.  The stream text in it is already quoted
        (``terminal.quote``); what else it holds, a FILE's name, is spelt out here."""
        self._write_line(escape_controls(line))

    def _write_line(self, line):
        self.out.write(line.encode("utf-8", "replace") + b"\n")


class _At:
    """A place in the input that is not the current item: a call's started line."""

    __slots__ = ("source", "line")

    def __init__(self, source, line):
        self.source = source
        self.line = line


build_parser, main = cli.entry(ValidateCommand)


def _diagnostic_text(where, severity, check, message):
    """A diagnostic as --format text writes it, without colour (a FILE that could not
    be read has no line)."""
    return escape_controls(f"{place(where)}: {severity}: {message} [{check}]")


class _Suite:
    """What the JUnit suite of the FILE in hand gathers: a case per run, with the
    run's diagnostics; the errors outside any run; the text of <system-out>; the
    earliest stream time."""

    def __init__(self):
        self.cases = []
        self.run = None  # [start, number, diagnostics, errors {check: message}], in a run
        self.stream = []  # the error diagnostics outside any run, the first TEXT_LINES
        self.stream_more = 0  # and how many more
        self.out = []
        self.out_size = 0
        self.out_more = 0
        self.origin = None
        self.earliest = None  # the earliest stream time seen

    def begin_run(self, start, number, given_origin):
        self.run = [start, number, [], 0, {}]
        if self.origin is None:
            self.origin = options.time_origin(given_origin, start.source)
        self.seen(timeline.stream_time(start))

    def seen(self, time_ms):
        if time_ms is not None and (self.earliest is None or time_ms < self.earliest):
            self.earliest = time_ms

    def add(self, where, severity, check, message, text):
        self.out_line(text)
        if self.run is None:
            if severity == "error":
                if len(self.stream) < junit.TEXT_LINES:
                    self.stream.append((message, text))
                else:
                    self.stream_more += 1
            return
        _, _, lines, more, errors = self.run
        if len(lines) < junit.TEXT_LINES:
            lines.append(text)
        else:
            self.run[3] = more + 1
        if severity == "error":
            errors.setdefault(check, message)
            errors.setdefault(None, message)  # the first error

    def out_line(self, text):
        if self.out_size < junit.SYSTEM_OUT_LIMIT:
            self.out.append(text)
            self.out_size += len(text) + 1
        else:
            self.out_more += 1

    def end_run(self, end):
        start, number, lines, more, errors = self.run
        self.run = None
        model = end.model if end.model is not None else start.model
        result = None
        for kind, check in (("failed", "failed-run"), ("cutoff", "no-result"),
                            ("invalid", None)):
            if check in errors:
                result = ("failure", kind, errors[check], junit.lines_text(lines, more))
                break
        self.cases.append(junit.Case(junit.case_name(number, start.line, start.agent, model),
                                     figure(end.duration_ms), result))

    def text(self, source, index, given_origin):
        cases = self.cases
        if self.stream:
            cases.append(junit.Case("stream", None, (
                "failure", "invalid", self.stream[0][0],
                junit.lines_text([text for _, text in self.stream], self.stream_more))))
        origin = self.earliest
        if origin is None:
            origin = self.origin
        if origin is None:
            origin = options.time_origin(given_origin, source)
        out = "".join(line + "\n" for line in self.out)
        if self.out_more:
            out += f"… {self.out_more} more lines\n"
        return junit.suite(source, index, cases, origin, out)
