"""ndagent run: run an agent under guard, show its stream as another verb does, and end
it once its run is over or when it stalls, so that a job never waits for it forever."""

import codecs
import os
import re
import select
import sys
from argparse import Action, ArgumentTypeError
from importlib import import_module

from ndagent import budget, cli, formats, options
from ndagent.budget import Budget
from ndagent.feed import is_output, output_file, read_here
from ndagent.frame import REGISTRY, Command
from ndagent.output import Output, write_all
from ndagent.prices import Prices, PricesError
from ndagent.supervise import UNITS, Agent, Interrupted
from ndagent.terminal import escape_prose, quote

SUMMARY = "run an agent, show its stream, end it when its run ends or stalls"

DESCRIPTION = """\
Run COMMAND, an agent and its arguments, with its standard output on a pipe; show
what it prints as 'ndagent VERB' would (--show), save it exactly (--save), and end the
agent once its run is over or when it stalls. A pipeline 'agent | ndagent result'
waits as long as the agent runs, and an agent may print the end of its run and never
exit (below); a filter cannot end the process that writes to it, this command can.

The agent runs in a process group (a session) of its own. It is ended by SIGTERM to
the whole group, then SIGKILL --grace later, so that the shells, language servers and
MCP servers it started do not outlive it or hold its output open. It is ended when it
has not exited --grace after its run is over (at the event that ends a run) or after
its output ended; --grace after it exited while a process it started still holds its
output open (at once if its run was over); after --idle without output, or --timeout
after it started (said on standard error; status 124, as timeout(1) gives, unless its
run was over by then); and on Ctrl-C, SIGTERM, SIGHUP and the other signals that would
end ndagent (SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU), which are passed on to its
group (a second one kills it at once; status 128 and the signal's number: 130, 143,
129, ...), also while the reader of ndagent's output does not read. Ctrl-Z stops the
agent's group with ndagent, and 'fg' or 'bg' continues both; the time they were
stopped counts for no limit (--idle, --timeout, --grace). An agent that makes several
runs in one process must begin the next within --grace.

Budgets end the agent in the same way, each with a status of its own (120 to 123) and
a message that names it and the figure: --max-cost (the cost its stream reports; with
--prices FILE, also an estimate of what its messages cost as they arrive),
--max-tool-calls, --max-turns, and --stop-on PATTERN (a tool call whose target PATTERN
matches, ended as the call starts, before it is done where the stream shows its start).
They count from what the stream says as it arrives, all the agent's runs together.

Once its group is ended, the processes of the agent still running are said ('warning:
left running: pid N "COMMAND"') and ended (--reap, the default; --no-reap leaves them):
those of its session (a process that made a group of its own), and those that left it
(setsid, as a detached server does), found on Linux when their parent dies (they come
back to ndagent) and elsewhere while their parent lives (ps is asked every second, and
before the group is ended; a double fork between two looks is not found). The agent
writes to a pipe, or with --pty to a pseudo-terminal, for an agent that holds its
output in blocks on a pipe; --events FILE records when each line arrived.

How its run ended decides the exit status, not how the agent was ended: a run that
succeeded is status 0 even when the agent had to be ended after it (a budget passed
decides it though, also at the run's end). The agent's
standard error passes through, its standard input is ndagent's.

--show result (the default), text, tools or json prints, as the stream arrives, what
'ndagent VERB' prints for the stream: with --save FILE, byte for byte what 'ndagent
VERB FILE' prints (in messages and records, the stream is FILE; without --save,
<COMMAND>). That verb's own options go with run's, before COMMAND: 'ndagent run --show
text -v AGENT ...'. As with timeout(1) and env(1), the first word that is no option
(nor an option's value) is COMMAND and every word after it is COMMAND's; '--' may end
run's options too, as in 'ndagent run -- -agent-with-a-dash'. --show raw prints the
stream as it comes (on a terminal, control and invisible characters spelt out); --show
none prints nothing.

A DURATION is a number of seconds, fractions allowed, or a number with a unit: 90s,
10m, 1h, 0.5s. --idle 0 and --timeout 0 set no limit, as their defaults do.

COMMAND's output is read as the other commands read a FILE: its agent is detected
from its first objects, or named by --agent."""

EXAMPLES = """\
  # the answer as it arrives; if the agent has not exited 5 s (the default --grace)
  # after its run is over, it is ended, and the status is the run's
  ndagent run <AGENT> 'fix the tests'
  # one line per action; ended after 10 minutes without output (--idle)
  ndagent run --show text -v --idle 10m \\
    <AGENT> 'fix the tests'
  # at most an hour in all (--timeout), the stream kept in run.ndjson
  ndagent run --timeout 1h --save run.ndjson -- \\
    <AGENT> 'fix the tests'
  # 30 s to exit after its run (--grace), its tool calls as NDJSON
  ndagent run --grace 30s --show tools -- \\
    <AGENT> 'fix the tests'
  # a budget: ended at $5, at its 201st tool call, or as it starts 'rm -rf'
  ndagent run --max-cost 5 --max-tool-calls 200 --stop-on 'rm -rf' -- \\
    <AGENT> 'fix the tests'
  # in a Makefile: the rule fails when the run fails, and never hangs
  answer.md: prompt.txt
  \tndagent run --idle 10m --timeout 1h -- \\
  \t  <AGENT> "$$(cat $<)" > $@"""

EXIT_STATUSES = (
    ("0", "the agent's run succeeded (even if the agent had to be ended after it)"),
    ("1", "the run failed or was cut off: the agent exited before the event that ends\n"
          "its run, or with a status other than 0, or died of a signal; a bad line\n"
          "under --strict"),
    ("2", "usage error, a --save or --events FILE that cannot be written or that is\n"
          "the output file (or both the same file), output that cannot be written"),
    ("120", "its cost passed --max-cost (also when it was known only at its run's end)"),
    ("121", "a tool call passed --max-tool-calls"),
    ("122", "a turn passed --max-turns"),
    ("123", "a tool call matched --stop-on"),
    ("124", "--idle or --timeout ended the agent before its run was over"),
    ("126", "COMMAND was found but could not be run"),
    ("127", "COMMAND was not found"),
    ("130", "interrupted (Ctrl-C); 143 and 129 for SIGTERM and SIGHUP, and 128 and\n"
            "the number of any other signal passed on"),
)

EXIT_LIMIT, EXIT_CANNOT_RUN, EXIT_NOT_FOUND = 124, 126, 127

# The verbs --show can show the stream as; besides them, raw and none.
SHOWN_VERBS = ("result", "text", "tools", "json")

# The options of run that are also the shown verb's (the frame's), handed on to it.
SHARED_OPTIONS = ("agent", "max_line", "strict", "quiet")

# The units a DURATION may have, in seconds: the supervisor's, or none at all.
_UNITS = {"": 1, **UNITS}


def duration(text):
    """A DURATION, in seconds: a number (fractions allowed), maybe with a unit s, m or h."""
    found = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)([smh]?)", text)
    if found is None:
        raise ArgumentTypeError(f"not a duration such as 90s, 10m, 1h, 0.5s: {text!r}")
    return float(found[1]) * _UNITS[found[2]]


def dollars(text):
    """A --max-cost value: an amount of US dollars, fractions allowed."""
    if re.fullmatch(r"\$?(\d+(?:\.\d*)?|\.\d+)", text) is None:
        raise ArgumentTypeError(f"not an amount of dollars such as 5, 0.50: {text!r}")
    return float(text.lstrip("$"))


def pattern(text):
    """A --stop-on value: a regular expression (Python's)."""
    try:
        return re.compile(text)
    except re.error as error:
        raise ArgumentTypeError(f"not a regular expression: {text!r}: {error}") from None


def _cost_said():
    """What --max-cost's help says of the agents' streams, from their formats."""
    titles = [each.title for each in formats.all_formats() if each.reports_cost]
    if not titles:
        return "no agent's stream reports its cost"
    listed = _listed(titles)
    return (f"of the agents, {listed} report a run's cost, and only at its end: the agent "
            "is ended once the run that passed USD is over, if it does not exit within "
            "--grace, and at once if it begins another; the others report none, which a "
            "warning says (--prices adds an estimate as the run goes)")


def _prices_said():
    """What --prices's help says of the agents whose messages it can price."""
    priced = [each.title for each in formats.all_formats() if each.reports_messages]
    return (f"the tokens of each message of {_listed(priced)} (whose streams give them)"
            if priced else "no agent's messages")


def _listed(titles):
    return ", ".join(titles[:-1]) + (" and " if len(titles) > 1 else "") + titles[-1]


def add_budget_options(parser):
    """--max-cost, --max-tool-calls, --max-turns, --stop-on: each ends the agent (SIGTERM
    to its group, SIGKILL --grace later) once passed, with a status of its own."""
    parser.add_argument(
        "--max-cost", type=dollars, metavar="USD",
        help=f"end the agent once the cost its stream reports, all its runs together, "
             f"passes USD (status {budget.COST}); {_cost_said()}",
    ).brief = f"end the agent once its cost passes USD (status {budget.COST})"
    parser.add_argument(
        "--max-tool-calls", type=options.whole_number, metavar="N",
        help="end the agent as its tool call N+1 starts (where the stream shows only "
             f"calls' ends, as it ends), subagents' calls too (status {budget.TOOL_CALLS})",
    ).brief = f"end the agent as its tool call N+1 starts (status {budget.TOOL_CALLS})"
    parser.add_argument(
        "--max-turns", type=options.whole_number, metavar="N",
        help="end the agent as it begins turn N+1: a turn is a model response that calls "
             "tools, known where the stream names each call's response "
             "(model_call_id in 'ndagent tools'; where it names none, a warning says so, "
             f"and no turn is counted) (status {budget.TURNS})",
    ).brief = f"end the agent as it begins turn N+1 (status {budget.TURNS})"
    parser.add_argument(
        "--stop-on", type=pattern, metavar="PATTERN",
        help="end the agent as soon as a tool call whose target (what 'ndagent text -v' "
             "prints after the action: a command, a path, a url, ...) PATTERN matches "
             "(Python's regular expression, anywhere in it; in a target longer than "
             f"{2 * budget.STOP_ON_CHARS:,} characters, in its first and last "
             f"{budget.STOP_ON_CHARS:,}) starts; where the stream shows only calls' ends, "
             f"as it ends (status {budget.STOP_ON})",
    ).brief = f"end the agent as a call matching it starts (status {budget.STOP_ON})"
    prices = parser.add_argument(
        "--prices", metavar="FILE",
        help="token prices, in LiteLLM's model_prices_and_context_window.json format, read "
             "from FILE (never fetched): --max-cost then also counts an estimate as the run "
             f"goes, {_prices_said()} priced by the message's model as it arrives, and "
             "ends the agent at once when it passes USD ('estimated cost ... (--prices)'); "
             "the cost a run reports at its end replaces its estimate; a model the table "
             "has no price for is said once, in a warning, and not counted")
    prices.complete = options.COMPLETE_FILES
    prices.brief = "with --max-cost, an estimate from FILE's token prices"


def add_process_options(parser):
    """--reap, --no-reap, --pty, --events."""
    parser.add_argument(
        "--reap", "--no-reap", action=_Reap,
        help="once the agent's group is ended, the processes of the agent still running "
             "are said, each with its pid and command; --reap (the default) ends them "
             "(SIGTERM, SIGKILL --grace later), --no-reap leaves them running (a server "
             "it was asked to start)",
    ).brief = "end what the agent left running (the default), or not"
    parser.add_argument(
        "--pty", action="store_true",
        help="give the agent a pseudo-terminal for its standard output, rather than a "
             "pipe, so that an agent that holds its output in blocks on a pipe writes it "
             "as it comes; no line ending is changed (--save gets the bytes written)",
    ).brief = "the agent's output on a pseudo-terminal, not a pipe"
    events = parser.add_argument(
        "--events", metavar="FILE",
        help='write to FILE, as each line of output arrives, {"line": N, "t": SECONDS} '
             "(its number, and the time since the epoch, to the millisecond): when each "
             "line came, for streams that carry no time")
    events.complete, events.brief = options.COMPLETE_FILES, "write when each line arrived to FILE"


class _Reap(Action):
    """--reap and --no-reap, one option: whether the processes left running are ended
    (the last one given decides)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=True, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, option_string == "--reap")


class RunCommand(Command):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "run", SUMMARY, DESCRIPTION, EXAMPLES
    EXIT_STATUSES = EXIT_STATUSES
    FILES_HELP = None  # it reads COMMAND's output, no FILE

    @classmethod
    def build_parser(cls):
        parser = super().build_parser()
        parser.usage = "%(prog)s [OPTION ...] [--] COMMAND [ARG ...]"
        # The shown verb's options are not run's: none may be taken for an abbreviation.
        parser.allow_abbrev = False
        return parser

    @classmethod
    def add_options(cls, parser):
        parser.add_argument(
            "--show", choices=(*SHOWN_VERBS, "raw", "none"), default="result",
            help="what to print of the stream as it arrives: what 'ndagent VERB' prints "
                 "for it (result, the default; text; tools; json), with that verb's "
                 "options given beside run's; raw: the stream itself; none: nothing",
        ).brief = "result (the default), text, tools, json, raw or none"
        save = parser.add_argument(
            "--save", metavar="FILE",
            help="write the stream to FILE exactly as it arrives, written at once (a "
                 "killed run leaves all it printed)")
        save.complete, save.brief = options.COMPLETE_FILES, "save the stream to FILE as it arrives"
        parser.add_argument(
            "--grace", type=duration, default=5.0, metavar="DURATION",
            help="how long the agent has to exit once its run is over (or its output "
                 "ended), and to end after SIGTERM before SIGKILL (default 5s)")
        parser.add_argument(
            "--idle", type=duration, default=0.0, metavar="DURATION",
            help="end the agent after this long without output (status 124)")
        parser.add_argument(
            "--timeout", type=duration, default=0.0, metavar="DURATION",
            help="end the agent this long after it started (status 124)")
        add_budget_options(parser)
        add_process_options(parser)

    @classmethod
    def parse_args(cls, parser, argv):
        """Run's options and the shown verb's, then COMMAND: the first word that is no
        option (or all after '--').  The options run does not know are the shown
        verb's, parsed by that verb's parser (``args.shown``)."""
        argv = sys.argv[1:] if argv is None else list(argv)
        verb_parsers = {verb: import_module(f"ndagent.cmd_{verb}").build_parser()
                        for verb in SHOWN_VERBS}
        before, command = options.split_command(argv, (parser, *verb_parsers.values()))
        args, rest = parser.parse_known_args(before)
        if args.show in SHOWN_VERBS:
            verb_parser = verb_parsers[args.show]
            verb_parser.prog = parser.prog
            args.shown = verb_parser.parse_args(rest)
            rest = args.shown.files
            for name in SHARED_OPTIONS:
                setattr(args.shown, name, getattr(args, name))
        else:
            args.shown = args
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        if not command:
            parser.error("a COMMAND is needed, after the options")
        if args.prices is not None and args.max_cost is None:
            parser.error("--prices prices a run only for --max-cost, which is not given")
        args.command = command
        return args

    def execute(self):
        args = self.args
        self.prices = None
        if args.prices is not None:
            try:
                self.prices = Prices.read(args.prices)
            except PricesError as error:
                self.say(f"error: --prices: {error}")
                return options.EXIT_USAGE
        if args.save is not None and args.events is not None \
                and _same_file(args.save, args.events):
            self.say(f"{args.events}: error: the --events file is the --save file")
            return options.EXIT_USAGE
        save = self.open_file(args.save, "--save")
        events = self.open_file(args.events, "--events") if save is not False else False
        if events is False:
            if save is not None and save is not False:
                os.close(save)
            return options.EXIT_USAGE
        if save is False:
            return options.EXIT_USAGE
        # What the frame calls the stream: the --save file, whose lines its lines are.
        name = args.save if args.save is not None else f"<{os.path.basename(args.command[0])}>"
        agent = Agent(args.command, name, save, grace=args.grace, idle=args.idle,
                      timeout=args.timeout, say=self.say, quiet=self.quiet,
                      write_all=write_all, events=events, events_name=args.events,
                      pty=args.pty, reap=args.reap)
        try:
            error = agent.start()
            if error is not None:
                self.say(f"{agent.label}: error: cannot run: {error.strerror or error}")
                return EXIT_NOT_FOUND if isinstance(error, FileNotFoundError) else EXIT_CANNOT_RUN
            shown = self.shown_command(agent)
            try:
                shown.begin_output()
                read_here(shown, (agent,))
                shown.end_output()
                shown.out.flush()
            except Interrupted:  # a signal while the output waited for its reader
                shown.out.parts.clear()
            agent.finish()
        finally:
            agent.close()
        return self.outcome(agent, shown.status)

    def open_file(self, path, option):
        """The descriptor of the --save or --events file (``option``), None without one,
        False when it cannot be written or is the output file (reported)."""
        if path is None:
            return None
        output = output_file(1)
        if output is not None and is_output(path, output):
            self.say(f"{path}: error: the {option} file is the output file")
            return False
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        except OSError as error:
            self.say(f"{path}: error: cannot write: {error.strerror or error}")
            return False

    def shown_command(self, agent):
        """The command that shows the stream (--show), told by the agent's model events
        when a run is over; for raw, its output is the stream itself."""
        show = self.args.show
        verb_class = Command
        if show in SHOWN_VERBS:
            import_module(f"ndagent.cmd_{show}")  # which registers its class
            verb_class = REGISTRY[show]
        out = GuardedOutput(agent)
        if show == "raw":
            out = agent.show = RawOutput(agent)
        limits = Budget(self.args.max_cost, self.args.max_tool_calls, self.args.max_turns,
                        self.args.stop_on, self.prices)
        shown_class = type(verb_class.__name__, (_Watching, verb_class),
                           {"agent": agent, "budget": limits})
        return shown_class(self.args.shown, self.prog, out)

    def outcome(self, agent, status):
        """The exit status: a signal's, a limit's, else the run's, made worse by an
        agent that failed by itself and by a --save file that could not be written."""
        if agent.interrupted is not None:
            return 128 + agent.interrupted
        if agent.passed_status is not None:
            return agent.passed_status
        if agent.limit_fired:
            return EXIT_LIMIT
        code = agent.process.returncode
        if agent.exited_on_its_own and code:
            how = f"exited with status {code}" if code > 0 else f"died of signal {-code}"
            self.say(f"{agent.label}: error: {how}")
            status = max(status, options.EXIT_BAD_STREAM)
        if agent.write_failed:
            status = max(status, options.EXIT_USAGE)
        return status


def _same_file(one, other):
    """Whether two paths name one file: the same path once links are resolved, or one
    file under two names (a hard link)."""
    if os.path.realpath(one) == os.path.realpath(other):
        return True
    try:
        return os.path.samefile(one, other)
    except OSError:  # one of them does not exist yet
        return False


# What the budgets of tool calls need of the model, beside what the shown verb needs.
_CALLS = frozenset({"tools"})
# What --max-cost needs: the runs' ends, with their figures (a verb that shows the calls
# alone does not need them).
_ENDS = frozenset({"ends"})
# What the estimate of --prices needs: the messages' usage.
_MESSAGES = frozenset({"messages"})


class _Watching:
    """Mixed into the shown command's class: tells the agent when a run is over, from
    the model (a RunEnd that is no cut-off), and when another begins (at the event
    that begins runs: a late line after a result, which the model makes a run of its
    own, is no sign that the agent is at work again); counts the budgets
    (``ndagent.budget``) and tells the agent when one is passed.  It sees every tool
    call, whatever the shown verb keeps of them (its ``wants_call``)."""

    agent = budget = None

    def needs_of(self, module):
        needs = super().needs_of(module)
        if self.budget.counts_calls and needs is not None:
            needs = needs | _CALLS
        if self.budget.max_cost is not None and needs is not None:
            needs = needs | _ENDS
        if self.budget.counts_messages and module.reports_messages and needs is not None:
            needs = needs | _MESSAGES
        return needs

    def begin_run(self, start):
        super().begin_run(start)
        if (self.budget.max_cost is not None and not self.format.reports_cost
                and not (self.budget.counts_messages and self.format.reports_messages)):
            self.agent_warning(f"{self.format.title}'s stream reports no cost: --max-cost "
                               "cannot end it")
        if start.announced:
            self.agent.run_begun()

    def no_run(self, source):
        # An agent ended by the signal ndagent passed on (Ctrl-C) before it printed an
        # event: the interruption is said by the status alone, as it is at any other
        # moment.
        if self.agent.interrupted is None:
            super().no_run(source)

    def wants_call(self, call):
        passed = self.budget.call(call)
        if passed is not None:
            self.agent.passed(passed[1], passed[0])
        if self.budget.unnamed_responses and self.budget.max_turns is not None:
            self.agent_warning("its stream names no model response of some tool calls: "
                               "--max-turns counts no turn of theirs")
        return super().wants_call(call)

    def message(self, message):
        super().message(message)
        if not self.budget.counts_messages:
            return
        passed = self.budget.message(message)
        if self.budget.unpriced is not None:
            self.agent_warning(f'--prices has no price for model "{quote(self.budget.unpriced)}"'
                               ": its messages are not counted")
        if passed is not None:
            self.agent.passed(passed[1], passed[0])

    def end_run(self, end, pending):
        super().end_run(end, pending)
        if not end.cutoff:
            self.agent.run_over()
        passed = self.budget.run_ended(end)
        if passed is not None:
            self.agent.passed(passed[1], passed[0])

    def agent_warning(self, text):
        """A warning about the agent, once each (not under -q)."""
        if not self.quiet:
            self.say(f"{self.agent.label}: warning: {text}", once=text)


class GuardedOutput(Output):
    """Standard output of run: written a pipe's atomic size at a time, each once there
    is room for it, waiting as the agent's supervisor waits (``Agent.wait_writable``):
    a reader that stops reading keeps neither signals nor limits from ending the
    agent."""

    def __init__(self, agent):
        super().__init__()
        self.agent = agent

    def flush(self):
        if not self.parts:
            return
        data = memoryview(b"".join(self.parts))
        self.parts.clear()
        self.size = 0
        if self.terminal:
            self.line_open = data[-1:] != b"\n"
        while data:
            self.agent.wait_writable(self.fd)
            data = data[os.write(self.fd, data[:select.PIPE_BUF]):]


class RawOutput(GuardedOutput):
    """Standard output for --show raw: the bytes the agent printed, written when the
    frame flushes (after each batch), and past 1 MiB held as the decoder reads (an agent
    may print for ever without a newline, and the decoder then hands on no batch); a
    write error there is kept for the frame's next flush, not taken for a read error.
    On a terminal they are decoded as they come, and control and invisible characters
    are spelt out (the --save file has the bytes)."""

    def __init__(self, agent):
        super().__init__(agent)
        self.decoder = None
        self.error = None  # a write error met while the decoder read
        if self.terminal:
            self.decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")

    def write(self, data):
        if self.error is not None:
            return  # the output is broken: the frame says so at its next flush
        if self.decoder is not None:
            data = escape_prose(self.decoder.decode(data)).encode()
        self.parts.append(data)
        self.size += len(data)
        if self.size > 1 << 20:
            try:
                super().flush()
            except OSError as error:
                self.error = error

    def flush(self):
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        super().flush()


build_parser, main = cli.entry(RunCommand)
