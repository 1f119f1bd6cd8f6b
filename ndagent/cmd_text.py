"""ndagent text: the documented text output format, one action line per tool call."""

from sys import getsizeof

from ndagent import cli
from ndagent.stream import OUTCOME_SUFFIXES, CallPairer, call_id, tool_call

SUMMARY = "print one line per tool call, as the text output format does"

DESCRIPTION = """\
Print one line for each tool call the moment it completes: 'Read file', 'Created new
file', 'Edited file', 'Ran terminal command', 'Deleted file', 'Listed directory',
'Searched for files', 'Searched file contents', 'Searched codebase', 'Fetched web
page', 'Searched the web', 'Called MCP tool', 'Called tool', 'Updated to-do list',
'Ran subagent', or 'Used tool' for any other kind. A call that did not succeed gets
' (failed)', ' (denied)', ' (rejected)' or ' (error)' (' (unknown)' for an outcome of
another shape). This is the text format of 'cursor-agent -p --output-format text' as
documented; nothing else is printed. A call that never completes prints no line.

With --final, print instead the final assistant message of each run (its text after
the last tool call), at the end of the run: what recent CLI versions print for
--output-format text.

Text from the stream is untrusted: in a target, control characters and the characters
that reorder or hide text are spelt out (\\n, \\x1b, \\u202e, \\u200b, \\U000e0001)
and a backslash is doubled (\\\\), so one action is always one line, no escape sequence
reaches the terminal raw, and README.md, README\\u200b.md and a literal \\\\x1b all look
different. The final message keeps its newlines, tabs and zero-width joiners (emoji and
some scripts need them); its other control, bidirectional and tag characters are
spelt out."""

EXAMPLES = """\
  cursor-agent -p --output-format stream-json 'fix the tests' | tee run.ndjson | ndagent text
  ndagent text -v run.ndjson
  ndagent text --final run.ndjson > answer.txt
  # what the agent did, counted: 12 Read file, 3 Edited file, ...
  ndagent text logs/*.ndjson | sort | uniq -c | sort -rn
  # in a Makefile: a log of the agent's actions beside its answer
  actions.log: run.ndjson
  \tndagent text -v --color=never $< > $@"""

# The environment variables the command reads (shown in its man page).
ENVIRONMENT = {
    "NO_COLOR": "when set and not empty, --color=auto does not colour (no-color.org)",
}

# SGR sequences: dim for the target, red for an outcome that is not success.
_DIM, _RED, _RESET = "\x1b[2m", "\x1b[31m", "\x1b[0m"


def build_parser():
    parser = cli.command_parser("text", SUMMARY, DESCRIPTION, EXAMPLES)
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "-v", "--verbose", action="store_true",
        help="name each call's target, as 'ACTION: TARGET': the path, the command, the "
             "pattern, the query, the url, or the tool name of an MCP or function tool")
    what.add_argument(
        "--final", action="store_true",
        help="print only the final assistant message of each run (the text after its "
             "last tool call), at the end of the run")
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="colour the target and the outcome: always, never, or (auto, the default) "
             "when standard output is a terminal and NO_COLOR is not set")
    return parser


def use_color(choice, fd):
    """Whether to colour: ``--color``, where auto follows the terminal and NO_COLOR."""
    if choice != "auto":
        return choice == "always"
    import os

    return os.isatty(fd) and not os.environ.get("NO_COLOR")


class TextCommand(cli.Command):
    # A line per completed call needs only the completed events; -v also needs the
    # started ones (for the args a completed event may lack), --final the texts too.
    want = frozenset({"tool_call/completed"})

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.color = use_color(args.color, out.fd)
        # verbose: the target the args of each call name at its start, until it completes
        # (a completed event may lack them).
        self.open_targets = CallPairer()
        self.said_overflow = False
        # --final: the run's answer, and its text since the last tool call.
        self.answer = None
        self.final_segment = []
        if args.final:
            self.want = frozenset({"tool_call", "assistant"})
        elif args.verbose:
            self.want = frozenset({"tool_call"})

    def begin_run(self, run):
        if self.args.final:
            from ndagent.stream import Answer

            self.answer = Answer()
            self.final_segment.clear()

    def event(self, event):
        if event.type == "assistant":
            text = self.answer.add(event.data)
            if text:
                self.final_segment.append(text)
        elif event.type == "tool_call":
            if self.args.final:
                self.final_segment.clear()
            else:
                self.tool_event(event)

    def tool_event(self, event):
        data = event.data
        subtype = data.get("subtype")
        call = tool_call(data)
        if call is None:
            if subtype == "completed":
                self.warn(event, "skipped: a tool_call event that names no single tool")
            return
        key = call_id(data)
        if subtype == "started":
            target = call.args_target if self.args.verbose and key is not None else None
            if target is not None:
                dropped = self.open_targets.start(key, target, getsizeof(target))[1]
                if dropped and not self.said_overflow:
                    self.said_overflow = True
                    self.warn(event, self.open_targets.overflow
                              + ": the oldest are no longer tracked")
        elif subtype == "completed":
            self.print_action(call, None if key is None else self.open_targets.complete(key))

    def print_action(self, call, started_target):
        """The line of a completed call; ``started_target``: what its started event's
        args named, for a call that has no args of its own."""
        from ndagent.terminal import escape_field

        line = call.action
        target = None
        if self.args.verbose:
            target = call.target if started_target is None or call.args is not None \
                else started_target
        if target is not None:
            target = ": " + escape_field(target)
            line += f"{_DIM}{target}{_RESET}" if self.color else target
        suffix = OUTCOME_SUFFIXES.get(call.completed_status, "")
        if suffix:
            line += f"{_RED}{suffix}{_RESET}" if self.color else suffix
        self.out.write(line.encode("utf-8", "replace") + b"\n")

    def end_run(self, run):
        self.open_targets.close()
        if self.final_segment:
            from ndagent.terminal import escape_controls

            text = escape_controls("".join(self.final_segment), keep_lines=True)
            self.final_segment.clear()
            if not text.endswith("\n"):
                text += "\n"
            self.out.write(text.encode("utf-8", "replace"))
        super().end_run(run)


def main(argv=None):
    return cli.run_command(build_parser, TextCommand, argv)
