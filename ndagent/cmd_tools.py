"""ndagent tools: one record per tool call, started and completed events paired."""

from time import gmtime, strftime

from ndagent import cli, options
from ndagent.callfilter import CallFilter, add_call_options
from ndagent.frame import Command
from ndagent.model import MAX_OPEN_BYTES, MAX_OPEN_CALLS, json_size
from ndagent.terminal import tsv_row

SUMMARY = "print one record per tool call, its start and completion paired"

DESCRIPTION = f"""\
Pair each tool call's started and completed events (by call_id) and print one NDJSON
record for it the moment it completes:

  call_id, kind, name, status, args, target, result, session_id, model_call_id,
  duration_ms, source, line, agent, parent

kind is the tool's kind (read, write, edit, shell, mcp, ...: those -k takes), or its
own name for a tool of none; name is the agent's own name of the tool; status is
success, failure, permissionDenied, rejected, error, unknown (a result of another
shape) or pending; args come from the started event when the completed one has none
(a denied call); target is what the call acts on, named alike for every agent: the
path, command, pattern, query, url or tool name (as in 'ndagent text -v'); result is
what the call gave back; model_call_id is the id of the model's message that made the
call; duration_ms is the time between the two events, when both have one; source and
line say where the call started (or completed, when no started event was seen); agent
is the agent whose stream it is (its --agent name); parent is the call_id of the
subagent call that made this call, else null. Where the agent's stream has none of
these, it is null; what each is for each agent, below. A session file's calls have two
more: run (the run's number in its FILE) and started (the ISO time of the call's line).

A call that never completes is printed at the end of its run with status pending, or
with the outcome the run's end gives it; so is a call started with no call_id, which
cannot be paired. A status is what is known when the record is printed: a call that
completed is not printed again when the run's end says more. Only what the records
need of the calls still open is kept in memory, at most {MAX_OPEN_CALLS} calls and
{MAX_OPEN_BYTES >> 20} MiB (estimated): beyond that the oldest are printed as pending at once,
with a warning.

--format tsv prints the columns call_id, kind, status, target, duration_ms, agent,
parent, source, line instead (--header names them), with backslash, tab, newline and
carriage return written as \\\\, \\t, \\n and \\r, so that every call is exactly one
row, and other control characters and the characters that reorder or hide text as
\\x1b, \\u202e, \\u200b, \\U000e0001 and the like, so that none reaches a terminal raw.

""" + options.JSON_ON_A_TERMINAL

EXAMPLES = """\
  <AGENT> 'fix the tests' | ndagent tools -s failure
  ndagent tools -k shell --format tsv run.ndjson | cut -f4      # the commands it ran
  ndagent tools -k edit,write run.ndjson | jq -r .target | sort -u
  ndagent tools -s pending --format tsv --header logs/*.ndjson   # never answered
  # the slowest shell commands of a day of runs
  ndagent tools -k shell --format tsv logs/*.ndjson | sort -t $'\\t' -k5 -rn | head
  # in a Makefile: fail when the agent ran a command it was denied
  check-denied: run.ndjson
  \t! ndagent tools -s permissionDenied $< | grep -q ."""

TSV_COLUMNS = ("call_id", "kind", "status", "target", "duration_ms", "agent", "parent",
               "source", "line")


class ToolsCommand(Command):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "tools", SUMMARY, DESCRIPTION, EXAMPLES
    splits_files = True
    needs = frozenset({"tools"})
    exact = True

    @classmethod
    def add_options(cls, parser):
        add_call_options(parser)
        options.add_format_option(parser, {
            "ndjson": "one JSON record per call",
            "tsv": "the columns " + ", ".join(TSV_COLUMNS)}, "ndjson")
        parser.add_argument(
            "--header", action="store_true",
            help="print a header row first (with --format tsv only: a usage error else)")

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.filter = CallFilter(args)
        self.tsv = args.format == "tsv"
        self.run = (None, 0)  # (source, number) of the run in hand, numbered in its input

    def begin_run(self, start):
        source, number = self.run
        self.run = (start.source, number + 1 if source == start.source else 1)

    def begin_output(self):
        if self.tsv and self.args.header:
            self.out.write("\t".join(TSV_COLUMNS).encode() + b"\n")

    def note(self, note):
        if note.message is not None:
            self.warn(note, note.message)

    def wants_call(self, call):
        return self.filter.wants(call)

    def keep(self, start):
        """The start, with what its record needs, and about how many bytes that holds."""
        return start, json_size([start.args, start.name, start.call_id, start.session_id,
                                 start.model_call_id, start.time_ms, start.target,
                                 start.parent])

    def call_again(self, kept, start):
        self.report(kept, None)  # a call_id started twice: the first can no longer end

    def calls_dropped(self, dropped, start, why):
        self.warn(start, why + ": the oldest are printed as pending at once",
                  once="calls-dropped")
        for kept in dropped:
            self.report(kept, None)

    def call_ended(self, kept, end):
        self.report(kept, end)

    def end_run(self, end, pending):
        # What the run's end tells of a call still open (the calls printed before stay
        # as they were printed).
        told = end.outcomes or {}
        for kept in pending:
            self.report(kept, None, told.get(kept.call_id, "pending"))
        super().end_run(end, pending)

    def report(self, start, end, status=None):
        """Write the record of a call from its ToolStart and its ToolEnd (either may be
        None, not both), unless the filter leaves it out; ``status``: that of a call
        with no end, when not pending."""
        if status is None:
            status = "pending" if end is None else end.outcome
        if not self.filter.shows(status):
            return
        call = end or start
        args, name, target = call.args, call.name, call.target
        if end is not None and start is not None and args is None:
            # An end without args (a denied call): what its start's args say.
            args = start.args
            if name is None:
                name = start.name
            if start.target is not None:
                target = start.target
        first = start or end
        record = {
            "call_id": call.call_id,
            "kind": call.kind,
            "name": name,
            "status": status,
            "args": args,
            "target": target,
            "result": None if end is None else end.result,
            "session_id": _field("session_id", end, start),
            "model_call_id": _field("model_call_id", end, start),
            "duration_ms": _duration(start, end),
            "source": first.source,
            "line": first.line,
            "agent": self.format.agent,
            "parent": _field("parent", end, start),
        }
        if self.format.form == "session":
            record["run"] = self.run[1]
            record["started"] = _iso(first.time_ms)
        if self.tsv:
            self.out.write(tsv_row(record[column] for column in TSV_COLUMNS))
        else:
            self.out.write_json(record)


def _field(name, end, start):
    """The end's value of ``name``, else the start's, or None."""
    value = getattr(end, name) if end is not None else None
    if value is None and start is not None:
        value = getattr(start, name)
    return value


def _iso(time_ms):
    """An ISO 8601 UTC time, as the session files write theirs, of epoch milliseconds
    (or None)."""
    if type(time_ms) is not int:
        return None
    return strftime("%Y-%m-%dT%H:%M:%S", gmtime(time_ms // 1000)) + f".{time_ms % 1000:03d}Z"


def _duration(start, end):
    """Milliseconds between the start and the end, or None without both times."""
    if start is None or end is None:
        return None
    begin, finish = start.time_ms, end.time_ms
    if type(begin) is int and type(finish) is int:
        return finish - begin
    return None


build_parser, main = cli.entry(ToolsCommand)
