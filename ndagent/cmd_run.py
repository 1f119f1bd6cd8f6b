"""ndagent run: run an agent under guard, show its stream as another verb does, and end
it once its run is over or when it stalls, so that a job never waits for it forever."""

import os
import signal
import time

from ndagent import cli, options
from ndagent.frame import REGISTRY, Command, is_output, output_file, read_here
from ndagent.output import Output, write_all

SUMMARY = "run an agent, show its stream, and end it once its run is over or stalls"

DESCRIPTION = """\
Run COMMAND, an agent and its arguments given after '--', with its standard output on
a pipe; show what it prints as 'ndagent VERB' would (--show), save it exactly
(--save), and end the agent once its run is over or when it stalls. A pipeline
'agent | ndagent result' waits as long as the agent runs, and the Cursor Agent CLI
sometimes prints its result and never exits; a filter cannot end the process that
writes to it, this command can.

The agent runs in a process group (a session) of its own. It is ended by SIGTERM to
the whole group, then SIGKILL --grace later, so that the shells, language servers and
MCP servers it started do not outlive it or hold its output open. It is ended when it
has not exited --grace after its run is over (the event that ends a run: a result
event, Codex's turn.completed or turn.failed) or after its output ended; --grace
after it exited while a process it started still holds its output open (at once if
its run was over); after --idle without output, or --timeout after it started (said
on standard error; status 124, as timeout(1) gives, unless its run was over by then);
and on Ctrl-C, SIGTERM or SIGHUP, which are passed on to its group (a second one
kills it at once; status 130, 143 or 129). An agent that makes several runs in one
process (Claude with --input-format stream-json) must begin the next within --grace.

How its run ended decides the exit status, not how the agent was ended: a run that
succeeded is status 0 even when the agent had to be ended after it. The agent's
standard error passes through, its standard input is ndagent's.

--show result (the default), text, tools or json prints, as the stream arrives, what
'ndagent VERB' prints for the stream: with --save FILE, byte for byte what 'ndagent
VERB FILE' prints (in messages and records, the stream is FILE; without --save,
<COMMAND>). That verb's own options go with run's, before '--': 'ndagent run --show
text -v -- ...'. --show raw prints the stream as it comes (on a terminal, control and
invisible characters spelt out); --show none prints nothing.

A DURATION is a number of seconds, fractions allowed, or a number with a unit: 90s,
10m, 1h, 0.5s. --idle 0 and --timeout 0 set no limit, as their defaults do.

COMMAND's output is read as the other commands read a FILE: its agent is told from
its first objects, or named by --agent."""

EXAMPLES = """\
  # Cursor: the answer as it arrives; if the agent has not exited 5 s (the default
  # --grace) after its result event, it is ended, and the status is the run's
  ndagent run -- cursor-agent -p --output-format stream-json 'fix the tests'
  # Claude: one line per action; ended after 10 minutes without output (--idle)
  ndagent run --show text -v --idle 10m -- \\
    claude -p --output-format stream-json --verbose 'fix the tests'
  # Codex: at most an hour in all (--timeout), the stream kept in run.ndjson
  ndagent run --timeout 1h --save run.ndjson -- codex exec --json 'fix the tests'
  # Gemini: 30 s to exit after its result (--grace), its tool calls as NDJSON
  ndagent run --grace 30s --show tools -- \\
    gemini -p --output-format stream-json 'fix the tests'
  # in a Makefile: the rule fails when the run fails, and never hangs
  answer.md: prompt.txt
  \tndagent run --idle 10m --timeout 1h -- \\
  \t  cursor-agent -p --output-format stream-json "$$(cat $<)" > $@"""

EXIT_STATUSES = (
    ("0", "the agent's run succeeded (even if the agent had to be ended after it)"),
    ("1", "the run failed or was cut off: the agent exited before the event that ends\n"
          "its run, or with a status other than 0, or died of a signal; a bad line\n"
          "under --strict"),
    ("2", "usage error, a --save FILE that cannot be written or that is the output\n"
          "file, output that cannot be written"),
    ("124", "--idle or --timeout ended the agent before its run was over"),
    ("126", "COMMAND was found but could not be run"),
    ("127", "COMMAND was not found"),
    ("130", "interrupted (Ctrl-C); 143 and 129 for SIGTERM and SIGHUP"),
)

EXIT_LIMIT, EXIT_CANNOT_RUN, EXIT_NOT_FOUND = 124, 126, 127

# The verbs --show can show the stream as; besides them, raw and none.
SHOWN_VERBS = ("result", "text", "tools", "json")

# The options of run that are also the shown verb's (the frame's), handed on to it.
SHARED_OPTIONS = ("agent", "max_line", "strict", "quiet")

# How often the agent's process group is looked at, while only processes that do not
# hold its output may be left of it (the agent has exited, its output ended).
POLL = 0.05
# The longest wait in one go (a --timeout of days is waited for in steps).
MAX_WAIT = 3600.0

# The signals passed on to the agent's group.
PASSED_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}


def duration(text):
    """A DURATION, in seconds: a number (fractions allowed), maybe with a unit s, m or h."""
    import re
    from argparse import ArgumentTypeError

    found = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)([smh]?)", text)
    if found is None:
        raise ArgumentTypeError(f"not a duration such as 90s, 10m, 1h, 0.5s: {text!r}")
    return float(found[1]) * _UNITS[found[2]]


def duration_text(seconds):
    """A duration for a message, as ``duration`` reads it: 5s, 0.5s, 10m, 1h."""
    number, unit = seconds, "s"
    for name in ("h", "m"):
        if seconds >= _UNITS[name] and seconds % _UNITS[name] == 0:
            number, unit = seconds / _UNITS[name], name
            break
    text = repr(number)
    return (text[:-2] if text.endswith(".0") else text) + unit


class RunCommand(Command):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "run", SUMMARY, DESCRIPTION, EXAMPLES
    EXIT_STATUSES = EXIT_STATUSES
    FILES_HELP = None  # it reads COMMAND's output, no FILE

    @classmethod
    def build_parser(cls):
        parser = super().build_parser()
        parser.usage = "%(prog)s [OPTION ...] -- COMMAND [ARG ...]"
        # The shown verb's options are not run's: none may be taken for an abbreviation.
        parser.allow_abbrev = False
        return parser

    @classmethod
    def add_options(cls, parser):
        parser.add_argument(
            "--show", choices=(*SHOWN_VERBS, "raw", "none"), default="result",
            help="what to print of the stream as it arrives: what 'ndagent VERB' prints "
                 "for it (result, the default; text; tools; json), with that verb's "
                 "options given beside run's; raw: the stream itself; none: nothing")
        save = parser.add_argument(
            "--save", metavar="FILE",
            help="write the stream to FILE exactly as it arrives, written at once (a "
                 "killed run leaves all it printed)")
        save.complete = options.COMPLETE_FILES
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

    @classmethod
    def parse_args(cls, parser, argv):
        """Run's options before '--', COMMAND after it.  The options run does not know
        are the shown verb's, parsed by that verb's parser (``args.shown``)."""
        import sys
        from importlib import import_module

        argv = sys.argv[1:] if argv is None else list(argv)
        options, command = argv, []
        if "--" in argv:
            split = argv.index("--")
            options, command = argv[:split], argv[split + 1:]
        args, rest = parser.parse_known_args(options)
        if args.show in SHOWN_VERBS:
            verb_parser = import_module(f"ndagent.cmd_{args.show}").build_parser()
            verb_parser.prog = parser.prog
            args.shown = verb_parser.parse_args(rest)
            rest = args.shown.files
            for name in SHARED_OPTIONS:
                setattr(args.shown, name, getattr(args, name))
        else:
            args.shown = args
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)} (COMMAND goes after '--')")
        if not command:
            parser.error("a COMMAND is needed, after '--'")
        args.command = command
        return args

    def execute(self):
        args = self.args
        save = self.open_save(args.save)
        if save is False:
            return options.EXIT_USAGE
        agent = Agent(args, self, save)
        try:
            failed = agent.start()
            if failed is not None:
                return failed
            shown = self.shown_command(agent)
            shown.begin_output()
            read_here(shown, (agent,))
            shown.end_output()
            shown.out.flush()
            agent.finish()
        finally:
            agent.close()
        return self.outcome(agent, shown.status)

    def open_save(self, path):
        """The descriptor of the --save file, None without one, False when it cannot be
        written or is the output file (reported)."""
        if path is None:
            return None
        output = output_file(1)
        if output is not None and is_output(path, output):
            self.say(f"{path}: the --save file is the output file")
            return False
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        except OSError as error:
            self.say(f"{path}: cannot write: {error.strerror or error}")
            return False

    def shown_command(self, agent):
        """The command that shows the stream (--show), told by the agent's model events
        when a run is over; for raw, its output is the stream itself."""
        from importlib import import_module

        show = self.args.show
        verb_class = Command
        if show in SHOWN_VERBS:
            import_module(f"ndagent.cmd_{show}")  # which registers its class
            verb_class = REGISTRY[show]
        out = self.out
        if show == "raw":
            out = agent.show = RawOutput()
        shown_class = type(verb_class.__name__, (_Watching, verb_class), {"agent": agent})
        return shown_class(self.args.shown, self.prog, out)

    def outcome(self, agent, status):
        """The exit status: a signal's, a limit's, else the run's, made worse by an
        agent that failed by itself and by a --save file that could not be written."""
        if agent.interrupted is not None:
            return 128 + agent.interrupted
        if agent.limit_fired:
            return EXIT_LIMIT
        code = agent.process.returncode
        if agent.exited_on_its_own and code:
            how = f"exited with status {code}" if code > 0 else f"died of signal {-code}"
            self.say(f"{agent.label}: {how}")
            status = max(status, options.EXIT_BAD_STREAM)
        if agent.save_failed:
            status = max(status, options.EXIT_USAGE)
        return status


class _Watching:
    """Mixed into the shown command's class: tells the agent when a run is over, from
    the model (a RunEnd that is no cut-off), and when another begins (at the event
    that begins runs: a late line after a result, which the model makes a run of its
    own, is no sign that the agent is at work again)."""

    agent = None

    def begin_run(self, start):
        super().begin_run(start)
        if start.announced:
            self.agent.run_begun()

    def end_run(self, end, pending):
        super().end_run(end, pending)
        if not end.cutoff:
            self.agent.run_over()


class RawOutput(Output):
    """Standard output for --show raw: the bytes the agent printed, written when the
    frame flushes (after each batch), never while the decoder reads (a write error
    must not pass for a read error).  On a terminal they are decoded as they come, and
    control and invisible characters are spelt out (the --save file has the bytes)."""

    def __init__(self):
        super().__init__()
        self.decoder = None
        if self.terminal:
            import codecs

            self.decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")

    def write(self, data):
        if self.decoder is not None:
            from ndagent.terminal import escape_controls

            data = escape_controls(self.decoder.decode(data), keep_lines=True).encode()
        self.parts.append(data)


def _no_op(signum, frame):
    """A signal's Python handler: the signal is taken from the wakeup pipe."""


class Agent:
    """The agent: its process, in a group of its own, and its output, which the decoder
    reads as a file (``read``) and which is saved as it comes.  While it is read (and
    after, in ``finish``), the agent is ended by the rules of --grace, --idle and
    --timeout, and on the signals ndagent receives: each wait is one select on the
    output and on a pipe that the signals are written to (SIGCHLD tells that the agent
    exited), with a timeout until the next rule's time."""

    def __init__(self, args, command, save):
        self.argv = args.command
        self.label = args.command[0]  # what messages call the agent
        # What the frame calls the stream: the --save file, whose lines its lines are.
        self.name = args.save if args.save is not None else f"<{os.path.basename(self.label)}>"
        self.grace, self.idle, self.timeout = args.grace, args.idle, args.timeout
        self.command = command
        self.save = save
        self.save_failed = False
        self.show = None  # the output of --show raw, given every byte read
        self.process = self.pipe = self.selector = None
        self.wakeup = None  # (read end, write end) of the signals' pipe
        self.handlers = {}  # the signal handlers to put back
        self.previous_wakeup = -1
        self.started_at = self.last_output = None
        self.run_over_at = None  # when the run was over, while no other has begun
        self.ended_at = None  # when the output ended
        self.exited_at = None
        self.exited_on_its_own = False  # exited before it was sent a signal
        self.signalled_at = self.killed_at = None
        self.interrupted = None  # the signal ndagent received and passed on
        self.limit_fired = False  # --idle or --timeout ended it before its run was over
        self.done = False

    def start(self):
        """Start the agent: None, or the exit status of a COMMAND that cannot be run."""
        import selectors
        import subprocess

        self.wakeup = os.pipe()
        for fd in self.wakeup:
            os.set_blocking(fd, False)
        self.previous_wakeup = signal.set_wakeup_fd(self.wakeup[1], warn_on_full_buffer=False)
        self.handlers[signal.SIGCHLD] = signal.signal(signal.SIGCHLD, _no_op)
        for signum in PASSED_ON:
            # A signal ignored (nohup, a background job) stays ignored, for the agent too.
            if signal.getsignal(signum) is not signal.SIG_IGN:
                self.handlers[signum] = signal.signal(signum, _no_op)
        try:
            self.process = subprocess.Popen(self.argv, stdout=subprocess.PIPE,
                                            start_new_session=True)
        except OSError as error:
            self.command.say(f"{self.label}: cannot run: {error.strerror or error}")
            return EXIT_NOT_FOUND if isinstance(error, FileNotFoundError) else EXIT_CANNOT_RUN
        self.started_at = self.last_output = time.monotonic()
        self.pipe = self.process.stdout.fileno()
        os.set_blocking(self.pipe, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.pipe, selectors.EVENT_READ)
        self.selector.register(self.wakeup[0], selectors.EVENT_READ)
        return None

    # What the shown command tells (_Watching).

    def run_over(self):
        if self.run_over_at is None:
            self.run_over_at = time.monotonic()

    def run_begun(self):
        self.run_over_at = None

    # Reading.

    def read(self, size):
        """The decoder's read: the next bytes of output, b"" when there are no more to
        read (its end, or the agent ended and its output given up)."""
        while self.pipe is not None:
            if self._wait():
                data = self._take(size)
                if data:
                    if self.show is not None:
                        self.show.write(data)
                    return data
        return b""

    def finish(self):
        """After the frame: the agent ended at once if the frame stopped reading early
        (--strict, standard output gone), the rest of its output saved, and the end of
        the agent and of its group waited for."""
        self.show = None
        if self.pipe is not None and self.signalled_at is None:
            self._end()
        while not self.done:
            if self._wait():
                self._take(1 << 16)

    def close(self):
        """Put back what ``start`` changed, the agent's group ended first (on an error:
        the output gone, a write error)."""
        if self.process is not None and not self.done:
            self.finish()
        if self.selector is not None:
            self.selector.close()
        if self.process is not None:
            self.process.stdout.close()
        if self.save is not None:
            os.close(self.save)
        if self.wakeup is not None:
            signal.set_wakeup_fd(self.previous_wakeup)
            for fd in self.wakeup:
                os.close(fd)
        for signum, handler in self.handlers.items():
            signal.signal(signum, handler)

    def _take(self, size):
        """What the output holds now (saved), None if nothing; at its end (b"") it is
        closed."""
        try:
            data = os.read(self.pipe, size)
        except BlockingIOError:
            return None
        if data:
            self.last_output = time.monotonic()
            self._save(data)
        else:
            self.ended_at = time.monotonic()
            self._close_output()
        return data

    def _save(self, data):
        if self.save is None:
            return
        try:
            write_all(self.save, data)
        except OSError as error:
            self.command.say(f"{self.name}: cannot write: {error.strerror or error}")
            os.close(self.save)
            self.save = None
            self.save_failed = True

    def _close_output(self):
        self.selector.unregister(self.pipe)
        self.pipe = None

    # Waiting, and what the rules do.

    def _wait(self):
        """Wait for what comes first: output (True), the agent's exit, a signal, or the
        time of a rule, which is then acted on (False)."""
        now = time.monotonic()
        when, action = self._next(now)
        if when is not None and when <= now:
            action()
            return False
        timeout = MAX_WAIT if when is None else min(when - now, MAX_WAIT)
        readable = False
        for key, _ in self.selector.select(timeout):
            if key.fd == self.pipe:
                readable = True
            else:
                self._take_signals()
        if self.exited_at is None and self.process.poll() is not None:
            self.exited_at = time.monotonic()
            self.exited_on_its_own = self.signalled_at is None
        return readable

    def _next(self, now):
        """The next rule to act on: (when, method), or (None, None) while the agent
        works (it has exited and its output ended, or a limit passed, ...)."""
        found = []
        if self.killed_at is not None:
            found.append((now if self._gone() else self.killed_at + self.grace, self._stop))
        elif self.signalled_at is not None:
            found.append((self.signalled_at + self.grace, self._kill))
            if self.exited_at is not None and self.pipe is None:
                # Only processes that do not hold its output may be left of its group.
                found.append((now, self._stop) if self._group_gone() else
                             (now + POLL, _nothing))
        else:
            if self.timeout:
                found.append((self.started_at + self.timeout, self._timed_out))
            if self.idle and self.pipe is not None:
                found.append((self.last_output + self.idle, self._idled))
            over = self._over(now)
            if over is not None:
                found.append(over)
        return min(found, key=lambda rule: rule[0], default=(None, None))

    def _over(self, now):
        """The rule of an agent whose run is over, whose output ended or that exited."""
        if self.exited_at is not None:
            if self.pipe is None or self.run_over_at is not None:
                return now, self._end_the_rest
            return self.exited_at + self.grace, self._held_open
        if self.run_over_at is not None:
            return self.run_over_at + self.grace, self._still_running
        if self.ended_at is not None:
            return self.ended_at + self.grace, self._still_running
        return None

    def _gone(self):
        """Whether the agent has exited and its output ended."""
        return self.exited_at is not None and self.pipe is None

    def _group_gone(self):
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # EPERM: a process of the group that ndagent may not signal
            return False
        return False

    def _timed_out(self):
        self._limit(f"still running {duration_text(self.timeout)} after it started "
                    "(--timeout): ending it")

    def _idled(self):
        self._limit(f"no output for {duration_text(self.idle)} (--idle): ending it")

    def _limit(self, message):
        self.limit_fired = self.run_over_at is None
        self.command.say(f"{self.label}: {message}")
        self._end()

    def _still_running(self):
        what = "its run was over" if self.run_over_at is not None else "its output ended"
        self._warn(f"still running {duration_text(self.grace)} after {what}: ending it")
        self._end()

    def _held_open(self):
        self._warn(f"exited, and its output is still held open {duration_text(self.grace)} "
                   "later: ending its process group")
        self._end()

    def _end_the_rest(self):
        """The agent has exited, its run over or its output ended: what is left of its
        group is ended."""
        if self._group_gone():
            self._stop()
        else:
            self._end()

    def _end(self):
        self.signalled_at = time.monotonic()
        self._signal(signal.SIGTERM)

    def _kill(self):
        if not self._gone():
            self._warn(f"still running {duration_text(self.grace)} after SIGTERM: killing it")
        self.killed_at = time.monotonic()
        self._signal(signal.SIGKILL)

    def _stop(self):
        """Done: the output, if still open (held by a process that left the group), is
        given up."""
        if self.pipe is not None:
            self._close_output()
        self.done = True

    def _signal(self, signum):
        """Send ``signum`` to the agent's process group."""
        try:  # noqa: SIM105 - contextlib would cost start-up time
            os.killpg(self.process.pid, signum)
        except OSError:  # the group is gone, or none of it may be signalled
            pass

    def _take_signals(self):
        """Act on the signals ndagent received: Ctrl-C, SIGTERM and SIGHUP are passed on
        to the agent's group, and a second one kills it."""
        try:
            received = os.read(self.wakeup[0], 512)
        except BlockingIOError:
            return
        for signum in received:
            if signum not in PASSED_ON:
                continue
            if self.interrupted is None:
                self.interrupted = signum
                if self.signalled_at is None:
                    self.signalled_at = time.monotonic()
                self._signal(signum)
            elif self.killed_at is None:
                self.killed_at = time.monotonic()
                self._signal(signal.SIGKILL)

    def _warn(self, text):
        if not self.command.quiet:
            self.command.say(f"{self.label}: warning: {text}")


def _nothing():
    """The action of a wait that only looks again."""


build_parser, main = cli.entry(RunCommand)
