"""ndagent tools: one record per tool call, started and completed events paired."""

from ndagent import cli

SUMMARY = "print one record per tool call, its start and completion paired"

DESCRIPTION = """\
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
its run. Only the calls still open are kept in memory: at most 100000, beyond which
the oldest is printed as pending at once, with a warning.

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

    from ndagent.stream import OUTCOMES

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
        from ndagent.stream import OpenCalls

        super().__init__(args, prog, out)
        self.kinds = frozenset(args.kind) if args.kind else None
        self.statuses = frozenset(args.status) if args.status else None
        # The started event of each call not yet completed, by call_id, in start order.
        self.open = OpenCalls(self.warn)
        self.tsv = args.format == "tsv"
        if self.tsv and args.header:
            out.write("\t".join(TSV_COLUMNS).encode() + b"\n")

    def event(self, event):
        from ndagent.stream import call_id, tool_call

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
            self.report(self.open.pop(key, None), event)
        elif key is not None:
            # A call_id started twice: the first call can no longer be completed.
            earlier = self.open.pop(key, None)
            if earlier is not None:
                self.report(earlier, None)
            dropped = self.open.add(key, event, event)
            if dropped is not None:
                self.report(dropped[1], None)

    def end_run(self, run):
        for started in self.open.values():
            self.report(started, None)
        self.open.clear()
        super().end_run(run)

    def report(self, started, completed):
        """Write the record of a call from its started and completed events (either may
        be None, not both), unless --status leaves it out."""
        from ndagent.stream import call_id, tool_call

        call = tool_call(completed.data) if completed is not None else None
        if started is not None:
            begun = tool_call(started.data)
            call = begun if call is None else call.with_args(begun.args)
        status = "pending" if completed is None else call.completed_status
        if self.statuses is not None and status not in self.statuses:
            return
        first = started or completed
        events = [event.data for event in (completed, started) if event is not None]
        record = {
            "call_id": call_id(first.data),
            "kind": call.kind,
            "name": call.name,
            "status": status,
            "args": call.args,
            "result": call.result,
            "session_id": _field("session_id", events),
            "model_call_id": _field("model_call_id", events),
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


def _field(name, events):
    """The first value of ``name`` among the events' data, or None."""
    for data in events:
        value = data.get(name)
        if value is not None:
            return value
    return None


def _duration(started, completed):
    """Milliseconds between the two events' timestamp_ms, or None without both."""
    if started is None or completed is None:
        return None
    begin = started.data.get("timestamp_ms")
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
