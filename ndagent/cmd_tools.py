"""ndagent tools: one record per tool call, started and completed events paired."""

from ndagent import cli
from ndagent.stream import (
    MAX_OPEN_BYTES,
    MAX_OPEN_CALLS,
    OUTCOMES,
    CallPairer,
    call_id,
    json_size,
    tool_call,
)

SUMMARY = "print one record per tool call, its start and completion paired"

DESCRIPTION = f"""\
Pair each tool call's started and completed events (by call_id) and print one NDJSON
record for it the moment it completes:

  call_id, kind, name, status, args, result, session_id, model_call_id,
  duration_ms, source, line

kind is the tool's key without 'ToolCall' (read, write, edit, shell, mcp, ...;
'function' for a tool_call.function); name is the tool name of an MCP or function
tool, else null; status is success, failure, permissionDenied, rejected, error,
unknown (a result of another shape) or pending; args come from the started event when
the completed one has none (a denied call); result is the object under the outcome
key; duration_ms is the difference of the two events' timestamp_ms, when both have
one; source and line say where the call started (or completed, when no started event
was seen). A call that never completes is printed with status pending at the end of
its run. Only what the records need of the calls still open is kept in memory, at
most {MAX_OPEN_CALLS} calls and {MAX_OPEN_BYTES >> 20} MiB (estimated): beyond that the oldest
are printed as pending at once, with a warning.

--format tsv prints the columns call_id, kind, status, target, duration_ms instead,
the target being the path, command, pattern, query, url or tool name (as in 'ndagent
text -v'), with backslash, tab, newline and carriage return written as \\\\, \\t, \\n
and \\r, so that every call is exactly one row, and other control characters and the
characters that reorder or hide text as \\x1b, \\u202e, \\u200b, \\U000e0001 and the
like, so that none reaches a terminal raw.

""" + cli.JSON_ON_A_TERMINAL

EXAMPLES = """\
  cursor-agent -p --output-format stream-json 'fix the tests' | ndagent tools -s failure
  ndagent tools -k shell --format tsv run.ndjson | cut -f4      # the commands it ran
  ndagent tools -k edit,write run.ndjson | jq -r .args.path | sort -u
  ndagent tools -s pending --format tsv --header cut-off.ndjson
  # the slowest shell commands of a day of runs
  ndagent tools -k shell --format tsv logs/*.ndjson | sort -t $'\\t' -k5 -rn | head
  # in a Makefile: fail when the agent ran a command it was denied
  check-denied: run.ndjson
  \t! ndagent tools -s permissionDenied $< | grep -q ."""

TSV_COLUMNS = ("call_id", "kind", "status", "target", "duration_ms")


def build_parser():
    from argparse import ArgumentTypeError

    statuses = (*OUTCOMES, "unknown", "pending")

    def names(choices=None):
        """A -k/-s value: one or more comma-separated names."""

        def parse(text):
            found = [name for name in text.split(",") if name]
            if not found:
                raise ArgumentTypeError(f"no name in {text!r}")
            for name in found:
                if choices is not None and name not in choices:
                    raise ArgumentTypeError(
                        f"invalid choice: {name!r} (choose from {', '.join(choices)})")
            return found

        return parse

    parser = cli.command_parser("tools", SUMMARY, DESCRIPTION, EXAMPLES)
    parser.add_argument(
        "-k", "--kind", action="extend", type=names(), metavar="KIND",
        help="only calls of this kind (read, shell, mcp, ...); repeatable or "
             "comma-separated")
    parser.add_argument(
        "-s", "--status", action="extend", type=names(statuses), metavar="STATUS",
        help=f"only calls with this status ({', '.join(statuses)}); repeatable or "
             "comma-separated")
    parser.add_argument(
        "--format", choices=("ndjson", "tsv"), default="ndjson",
        help="ndjson (the default): one JSON record per call; tsv: the columns "
             + ", ".join(TSV_COLUMNS))
    parser.add_argument(
        "--header", action="store_true", help="with --format tsv, print a header row first")
    return parser


class ToolsCommand(cli.Command):
    want = frozenset({"tool_call"})
    exact = True

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.kinds = frozenset(args.kind) if args.kind else None
        self.statuses = frozenset(args.status) if args.status else None
        # What the record needs of each call started and not yet completed (_Started).
        self.open = CallPairer()
        self.said_overflow = False
        self.tsv = args.format == "tsv"
        if self.tsv and args.header:
            out.write("\t".join(TSV_COLUMNS).encode() + b"\n")

    def event(self, event):
        data = event.data
        subtype = data.get("subtype")
        if subtype != "started" and subtype != "completed":
            return
        call = tool_call(data)
        if call is None:
            if subtype == "completed":
                self.warn(event, "skipped: a tool_call event that names no single tool")
            return
        if self.kinds is not None and call.kind not in self.kinds:
            return
        key = call_id(data)
        if subtype == "completed":
            self.report(None if key is None else self.open.complete(key), event)
        elif key is not None:
            started = _Started(event, call.kept(), key)
            # A call_id started twice: the first call can no longer be completed.
            earlier, dropped = self.open.start(key, started, started.size())
            if earlier is not None:
                self.report(earlier, None)
            if dropped:
                if not self.said_overflow:
                    self.said_overflow = True
                    self.warn(event, self.open.overflow + ": the oldest are printed as "
                                                          "pending at once")
                for started in dropped:
                    self.report(started, None)

    def end_run(self, run):
        for started in self.open.close():
            self.report(started, None)
        super().end_run(run)

    def report(self, started, completed):
        """Write the record of a call from its _Started and its completed event (either
        may be None, not both), unless --status leaves it out."""
        call = tool_call(completed.data) if completed is not None else None
        if started is not None:
            call = started.call if call is None else call.with_args(started.call.args)
        status = "pending" if completed is None else call.completed_status
        if self.statuses is not None and status not in self.statuses:
            return
        first = started or completed
        record = {
            "call_id": started.call_id if started is not None else call_id(completed.data),
            "kind": call.kind,
            "name": call.name,
            "status": status,
            "args": call.args,
            "result": call.result,
            "session_id": _field("session_id", completed, started),
            "model_call_id": _field("model_call_id", completed, started),
            "duration_ms": _duration(started, completed),
            "source": first.source,
            "line": first.line,
        }
        if self.tsv:
            record["target"] = call.target
            row = "\t".join(_tsv_field(record[column]) for column in TSV_COLUMNS)
            self.out.write(row.encode("utf-8", "replace") + b"\n")
        else:
            self.out.write_json(record)


class _Started:
    """What a call's record takes from its started event, kept until the call completes:
    not the event, which may hold much more."""

    __slots__ = ("call", "call_id", "session_id", "model_call_id", "timestamp_ms", "source",
                 "line")

    def __init__(self, event, call, key):
        data = event.data
        self.call = call
        self.call_id = key
        self.session_id = data.get("session_id")
        self.model_call_id = data.get("model_call_id")
        self.timestamp_ms = data.get("timestamp_ms")
        self.source = event.source
        self.line = event.line

    def size(self):
        """About how many bytes this holds (stream.json_size)."""
        return json_size([self.call.body, self.call_id, self.session_id, self.model_call_id,
                          self.timestamp_ms])


def _field(name, completed, started):
    """The completed event's value of ``name``, else the started event's, or None."""
    value = completed.data.get(name) if completed is not None else None
    if value is None and started is not None:
        value = getattr(started, name)
    return value


def _duration(started, completed):
    """Milliseconds between the two events' timestamp_ms, or None without both."""
    if started is None or completed is None:
        return None
    begin = started.timestamp_ms
    end = completed.data.get("timestamp_ms")
    if type(begin) is int and type(end) is int:
        return end - begin
    return None


def _tsv_field(value):
    """One TSV field: empty for null, else as ``escape_field`` writes it, so that a value
    never spans fields or rows (backslash, tab, newline, carriage return as \\\\, \\t, \\n,
    \\r) and no other control or invisible character reaches a terminal raw (\\x1b,
    \\u200b, ...)."""
    if value is None:
        return ""
    from ndagent.terminal import escape_field

    return escape_field(str(value))


def main(argv=None):
    return cli.run_command(build_parser, ToolsCommand, argv)
