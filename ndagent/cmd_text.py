"""ndagent text: the documented text output format, one action line per tool call."""

from sys import getsizeof

from ndagent import cli, options
from ndagent.callfilter import CallFilter, add_call_options
from ndagent.frame import Command
from ndagent.model import ACTIONS, OUTCOME_SUFFIXES
from ndagent.terminal import escape_field, escape_prose

SUMMARY = "print one line per tool call, as the text output format does"

DESCRIPTION = """\
Print one line for each tool call the moment it completes: 'Read file', 'Created new
file', 'Edited file', 'Ran terminal command', 'Deleted file', 'Listed directory',
'Searched for files', 'Searched file contents', 'Searched codebase', 'Fetched web
page', 'Searched the web', 'Called MCP tool', 'Called tool', 'Updated to-do list',
'Ran subagent', or 'Used tool' for any other kind. A call that did not succeed gets
' (failed)', ' (denied)', ' (rejected)' or ' (error)' (' (unknown)' for an outcome of
another shape). Nothing else is printed. A call that never completes prints no line.

With --progress, a line is printed when each call starts too, its action in the
progressive form ('Reading file', 'Running terminal command', 'Using tool'), so that a
long call shows at once; at the end of a run (one cut off, say), each call still open
gets a line of its own, its action in the progressive form and ' (pending)'.

Every agent's tools are named by the same kinds (which of its tools is which, below); a
tool of no kind keeps its own name and prints 'Used tool'.

With several FILEs or a directory, each line begins with the FILE it came from and a
colon, as grep's lines do ('logs/a.ndjson:Read file'); -H asks for it with one FILE,
--no-filename never.

-k, -t and -s select the calls whose lines are printed, as for 'ndagent tools': by
kind (shell, read, webSearch, ...), by the agent's own tool name, by outcome (failed,
denied, ...).

With --final, print instead the final assistant message of each run, at the end of
the run: the answer that 'ndagent result' prints, or for an agent whose answer is all
the run's text (below), the text after the run's last tool call.

Text from the stream is untrusted: in a target, control characters and the characters
that reorder or hide text are spelt out (\\n, \\x1b, \\u202e, \\u200b, \\U000e0001)
and a backslash is doubled (\\\\), so one action is always one line, no escape sequence
reaches the terminal raw, and README.md, README\\u200b.md and a literal \\\\x1b all look
different. The final message keeps its newlines, tabs and zero-width joiners (emoji and
some scripts need them); its other control, bidirectional and tag characters are
spelt out."""

EXAMPLES = """\
  <AGENT> 'fix the tests' | tee run.ndjson | ndagent text
  ndagent text -v run.ndjson
  ndagent text --final run.ndjson > answer.txt
  ndagent text -v -k shell -s failed run.ndjson      # the commands that failed
  # watch a long run: each call as it starts, and as it ends
  <AGENT> 'fix the tests' | ndagent text -v --progress
  # what the agent did, counted: 12 Read file, 3 Edited file, ...
  ndagent text --no-filename logs/*.ndjson | sort | uniq -c | sort -rn
  # in a Makefile: a log of the agent's actions beside its answer
  actions.log: run.ndjson
  \tndagent text -v --color=never $< > $@"""

# The environment variables the command reads (shown in its man page).
ENVIRONMENT = options.COLOR_ENVIRONMENT

# --progress: the line of each kind when a call starts ('Used tool': 'Using tool'), and
# the suffix of a call still open when its run ends.
STARTS = {
    "read": "Reading file",
    "write": "Creating new file",
    "edit": "Editing file",
    "shell": "Running terminal command",
    "delete": "Deleting file",
    "ls": "Listing directory",
    "updateTodos": "Updating to-do list",
    "function": "Calling tool",
    "glob": "Searching for files",
    "grep": "Searching file contents",
    "semSearch": "Searching codebase",
    "webFetch": "Fetching web page",
    "webSearch": "Searching the web",
    "mcp": "Calling MCP tool",
    "task": "Running subagent",
}
PENDING = " (pending)"

# SGR sequences: dim for the target, red for an outcome that is not success, yellow for
# a call still open, magenta for the file name (as grep's).
_DIM, _RED, _YELLOW, _RESET = "\x1b[2m", "\x1b[31m", "\x1b[33m", "\x1b[0m"
_MAGENTA = "\x1b[35m"


class TextCommand(Command):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "text", SUMMARY, DESCRIPTION, EXAMPLES
    splits_files = True
    ENVIRONMENT = ENVIRONMENT
    # A line per ended call needs only the ends; -v and --progress also need the starts
    # (for the target a start's args name, which its end may lack; for their lines),
    # --final the texts too.
    needs = frozenset({"tool_ends"})

    @classmethod
    def add_options(cls, parser):
        what = parser.add_mutually_exclusive_group()
        what.add_argument(
            "-v", "--verbose", action="store_true",
            help="name each call's target, as 'ACTION: TARGET': the path, the command, the "
                 "pattern, the query, the url, or the tool name of an MCP or function tool",
        ).brief = "name each call's target: 'ACTION: TARGET'"
        what.add_argument(
            "--final", action="store_true",
            help="print only the final assistant message of each run, at the end of the run",
        ).brief = "print only each run's final assistant message"
        parser.add_argument(
            "--progress", action="store_true",
            help="also print a line when each call starts, its action in the progressive "
                 "form ('Reading file', 'Running terminal command'), and at the end of a "
                 "run one for each call still open, marked (pending)",
        ).brief = "also print a line as each call starts"
        options.add_color_option(parser, "the file name, the target and the outcome")
        options.add_filename_options(parser)
        add_call_options(parser)

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.color = options.use_color(args.color, out.fd)
        self.filter = CallFilter(args)
        # --final: the run's text since its last tool event.
        self.final_segment = []
        if args.final:
            self.needs = frozenset({"tools", "text", "ends"})
        elif args.verbose or args.progress:
            self.needs = frozenset({"tools"})

    @classmethod
    def check_options(cls, parser, args):
        super().check_options(parser, args)
        options.resolve_filename(args)
        if args.final and args.progress:
            parser.error("--progress is for the lines of calls, not with --final")

    def begin_run(self, start):
        self.final_segment.clear()

    def text(self, piece):
        if self.args.final and self.format.live_answer:
            self.final_segment.append(piece.text)

    def note(self, note):
        """A tool event the format could not read: a warning, and for --final, the end
        of the text that came before it."""
        if self.args.final:
            self.final_segment.clear()
        elif note.message is not None:
            self.warn(note, note.message)

    def wants_call(self, call):
        if self.args.final:
            self.final_segment.clear()
            return False
        return self.filter.wants(call)

    def keep(self, start):
        """-v: the target the args of a call name at its start, until it ends (a call
        with no call_id never ends); --progress: the call's line as it starts, and its
        kind, until it ends (or is listed open at its run's end)."""
        target = start.target if self.args.verbose else None
        if self.args.progress:
            self.write_line(start, STARTS.get(start.kind, "Using tool"), target)
            return (start.kind, target), getsizeof(target)
        if target is None or start.call_id is None:
            return None
        return (None, target), getsizeof(target)

    def calls_dropped(self, dropped, start, why):
        self.warn(start, why + ": the oldest are no longer tracked", once="calls-dropped")

    def call_ended(self, kept, end):
        """The line of an ended call; ``kept``: what ``keep`` kept of its start, whose
        target is what its args named, for a call whose end has no args of its own."""
        if not self.filter.shows(end.outcome):
            return
        target = None
        if self.args.verbose:
            started = None if kept is None else kept[1]
            target = end.target if started is None or end.args is not None else started
        # A session file that never records its calls' outcomes (unknown) says nothing
        # of each.
        suffix = ("" if end.outcome == "unknown" and self.format.form == "session"
                  else OUTCOME_SUFFIXES.get(end.outcome, ""))
        self.write_line(end, ACTIONS.get(end.kind, "Used tool"), target, suffix, _RED)

    def file_name(self, where):
        """What begins each line of ``where`` (anything with a ``source``): its FILE and a
        colon with -H, else nothing."""
        if not self.args.with_filename:
            return ""
        name = escape_field(where.source) + ":"
        return f"{_MAGENTA}{name}{_RESET}" if self.color else name

    def write_line(self, where, action, target, suffix="", suffix_color=None):
        """One line: -H's FILE:, the action, ': TARGET' (spelt out, dim), the suffix
        (coloured)."""
        line = self.file_name(where) + action
        if target is not None:
            target = ": " + escape_field(target)
            line += f"{_DIM}{target}{_RESET}" if self.color else target
        if suffix:
            line += f"{suffix_color}{suffix}{_RESET}" if self.color else suffix
        self.out.write(line.encode("utf-8", "replace") + b"\n")

    def end_run(self, end, pending):
        if self.args.progress and self.filter.shows("pending"):
            for kind, target in pending:
                self.write_line(end, STARTS.get(kind, "Using tool"), target, PENDING, _YELLOW)
        text = None
        if self.args.final:
            # The text since the last tool event begins with what parted it from the
            # text before: blank lines, no part of the message.
            text = ("".join(self.final_segment).lstrip("\r\n") if self.format.live_answer
                    else self.format.answer(end))
            self.final_segment.clear()
        if text:
            text = escape_prose(text)
            if not text.endswith("\n"):
                text += "\n"
            name = self.file_name(end)
            if name:  # on each line, as grep does
                text = "".join(name + line for line in text.splitlines(keepends=True))
            self.out.write(text.encode("utf-8", "replace"))
        super().end_run(end, pending)


build_parser, main = cli.entry(TextCommand)
