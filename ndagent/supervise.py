"""The supervision of an agent's process for ndagent run: the agent runs in a process
group of its own, its output is read as the decoder reads a file, and the agent is ended
by the rules of --grace, --idle and --timeout, when the verb says that a budget was
passed, and on the signals ndagent receives; what it leaves running is said, and ended
(ndagent.processes).  It knows nothing of the verb: it is told what to do through its
arguments (the limits, a function that says a message, one that writes the --save
file) and its methods (``run_over``, ``run_begun``, ``passed``)."""

import errno
import os
import select
import selectors
import signal
import subprocess
import termios
import time

from ndagent import processes
from ndagent.terminal import quote

# How often the agent's process group is looked at, while only processes that do not
# hold its output may be left of it (the agent has exited, its output ended).
POLL = 0.05
# The longest wait in one go (a --timeout of days is waited for in steps).
MAX_WAIT = 3600.0

# The signals passed on to the agent's group: every one whose default would end
# ndagent and leave the agent running in its own session.
PASSED_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2, signal.SIGALRM, signal.SIGXCPU)

# The signals that stop ndagent (Ctrl-Z; a background job that reads or writes the
# terminal): its agent, in a session of its own, is stopped with it.
STOPPED_WITH = (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)

# The most characters of a command line a message quotes.
COMMAND_LIMIT = 120

# The units of a duration, in seconds.
UNITS = {"s": 1, "m": 60, "h": 3600}


class Interrupted(Exception):
    """ndagent received a signal while it waited to write its output: the agent's group
    was told, and nothing more is written."""


def duration_text(seconds):
    """A duration for a message, as run's options take it: 5s, 0.5s, 10m, 1h."""
    number, unit = seconds, "s"
    for name in ("h", "m"):
        if seconds >= UNITS[name] and seconds % UNITS[name] == 0:
            number, unit = seconds / UNITS[name], name
            break
    text = repr(number)
    return (text[:-2] if text.endswith(".0") else text) + unit


def _no_op(signum, frame):
    """A signal's Python handler: the signal is taken from the wakeup pipe."""


class Agent:
    """The agent: its process, in a group of its own, and its output, which the decoder
    reads as a file (``read``) and which is saved as it comes.  While it is read (and
    after, in ``finish``), the agent is ended by the rules of --grace, --idle and
    --timeout, and on the signals ndagent receives: each wait is one select on the
    output and on a pipe that the signals are written to (SIGCHLD tells that the agent
    exited), with a timeout until the next rule's time.

    ``argv`` is the agent's command line; ``name``, what the decoder calls its stream;
    ``save``, the descriptor of the --save file (or None), written with ``write_all``,
    and ``events`` that of the --events file (or None), named ``events_name``, which
    gets a line ``{"line": N, "t": SECONDS}`` for each line of output as it arrives (t:
    since the epoch); ``grace``, ``idle`` and ``timeout``, the limits in seconds (0: no --idle,
    no --timeout); ``pty``, whether its standard output is a pseudo-terminal rather
    than a pipe; ``reap``, whether the processes it leaves running are ended; ``say``,
    what says a message on standard error, and ``quiet``, whether warnings are left
    unsaid."""

    def __init__(self, argv, name, save, *, grace, idle, timeout, say, quiet, write_all,
                 events=None, events_name=None, pty=False, reap=True):
        self.argv = argv
        self.label = argv[0]  # what messages call the agent
        self.name = name
        self.grace, self.idle, self.timeout = grace, idle, timeout
        self.say, self.quiet = say, quiet
        self.save, self.events = save, events
        self.file_names = {"save": name, "events": events_name}
        self.write_all = write_all
        self.write_failed = False  # a --save or --events file could not be written
        self.pty, self.reap = pty, reap
        self.lines = 0  # the lines of output that arrived, for --events
        self.line_open = False  # whether the last bytes that arrived ended no line
        self.show = None  # the output of --show raw, given every byte read
        self.process = self.pipe = self.selector = None
        self.output = None  # the descriptor its output is read from, until ``close``
        self.wakeup = None  # (read end, write end) of the signals' pipe
        self.handlers = {}  # the signal handlers to put back
        self.previous_wakeup = -1
        self.stopped_for = 0.0  # how long ndagent and its agent were stopped (Ctrl-Z)
        self.started_at = self.last_output = None
        self.run_over_at = None  # when the run was over, while no other has begun
        self.ended_at = None  # when the output ended
        self.exited_at = None
        self.exited_on_its_own = False  # exited before it was sent a signal
        self.signalled_at = self.killed_at = None
        self.interrupted = None  # the signal ndagent received and passed on
        self.limit_fired = False  # --idle or --timeout ended it before its run was over
        self.passed_status = None  # the status of the verb's budget it passed (``passed``)
        self.done = False
        self.children_before = None  # with orphans adopted: the children before the agent
        # Where orphans do not come back to ndagent: its descendants seen while it ran,
        # {pid: command} (a pid taken again by another command is not the same process).
        self.family = {}
        self.looked_at = None

    def start(self):
        """Start the agent: None, or the OSError that kept it from starting."""
        if processes.adopt_orphans():
            # This process's children from before (a script's that runs this in its
            # own process) are not the agent's orphans.
            found = processes.listing() or ()
            self.children_before = frozenset(
                each.pid for each in found if each.ppid == os.getpid())
        self.wakeup = os.pipe()
        for fd in self.wakeup:
            os.set_blocking(fd, False)
        self.previous_wakeup = signal.set_wakeup_fd(self.wakeup[1], warn_on_full_buffer=False)
        self.handlers[signal.SIGCHLD] = signal.signal(signal.SIGCHLD, _no_op)
        for signum in PASSED_ON:
            # A signal ignored (nohup, a background job) stays ignored, for the agent too.
            if signal.getsignal(signum) is not signal.SIG_IGN:
                self.handlers[signum] = signal.signal(signum, _no_op)
        stdout = subprocess.PIPE
        if self.pty:
            self.output, stdout = _open_pty()
        try:
            self.process = subprocess.Popen(self.argv, stdout=stdout, start_new_session=True)
        except OSError as error:
            return error
        finally:
            if self.pty:
                os.close(stdout)  # the agent's now: the output ends when its processes end
        for signum in STOPPED_WITH:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                self.handlers[signum] = signal.signal(signum, self._stop_with_agent)
        self.started_at = self.last_output = self.looked_at = self._clock()
        if not self.pty:
            self.output = self.process.stdout.fileno()
        self.pipe = self.output
        os.set_blocking(self.pipe, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.pipe, selectors.EVENT_READ)
        self.selector.register(self.wakeup[0], selectors.EVENT_READ)
        return None

    def _clock(self):
        """The time the rules count: the time ndagent was stopped is left out, so that
        no --idle, --timeout or --grace comes due for it at once on 'fg'."""
        return time.monotonic() - self.stopped_for

    def _stop_with_agent(self, signum, frame):
        """SIGTSTP (Ctrl-Z), SIGTTIN, SIGTTOU: the agent's group is stopped, then ndagent
        by the same signal (the shell sees its job stopped, as by default); when it is
        continued ('fg', 'bg', SIGCONT), so is the group.  Done in the handler itself,
        which Python runs in the main thread between two steps of the program: a
        signal's byte in the wakeup pipe would wait for the next select, and a write
        to the terminal (SIGTTOU) would be retried, never reaching it."""
        stopped_at = time.monotonic()
        group = not self.done  # (once done, its id may be another group's)
        if group:
            self._signal(signal.SIGSTOP)
        handler = signal.signal(signum, signal.SIG_DFL)
        # Stops this process here until SIGCONT (the kernel discards it, and nothing
        # stops, in an orphaned process group, where no shell could continue it).
        os.kill(os.getpid(), signum)
        signal.signal(signum, handler)
        self.stopped_for += time.monotonic() - stopped_at
        if group:
            self._signal(signal.SIGCONT)

    # What the verb tells of the stream: a run is over, another has begun.

    def run_over(self):
        if self.run_over_at is None:
            self.run_over_at = self._clock()

    def run_begun(self):
        self.run_over_at = None
        if self.passed_status is not None and self.signalled_at is None:
            self._warn("began another run after its budget was passed: ending it")
            self._end()

    def passed(self, message, status):
        """A budget of the verb's (--max-cost, ...) was passed, as ``message`` says:
        ``status`` is the exit status (the first budget passed decides).  The agent is
        ended at once; where its run was over already (its cost is known only at its
        end), it may exit within --grace as ever, and is ended if it begins another
        run."""
        if self.passed_status is not None or self.signalled_at is not None:
            return
        self.passed_status = status
        if self.run_over_at is None:
            self.say(f"{self.label}: error: {message}: ending it")
            self._end()
        else:
            self.say(f"{self.label}: error: {message}, at the end of its run: no other "
                     "run may begin")

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

    def wait_writable(self, fd):
        """Wait until ``fd`` has room for a pipe's atomic write, acting meanwhile on the
        signals ndagent receives and on the rules' times, as reading does: a slow reader
        of ndagent's output keeps neither Ctrl-C nor --timeout from ending the agent
        (Interrupted once a signal was passed on).  Time spent waiting here is no
        silence of the agent's (--idle)."""
        while True:
            timeout = MAX_WAIT
            if not self.done:  # (once done, no rule is left to act on)
                now = self._clock()
                when, action = self._next(now)
                if when is not None and when <= now:
                    action()
                    continue
                if when is not None:
                    timeout = min(when - now, MAX_WAIT)
            readable, writable, _ = select.select([self.wakeup[0]], [fd], [], timeout)
            if readable:
                self._take_signals()
            if self.interrupted is not None:
                raise Interrupted
            if self.pipe is not None:
                self.last_output = max(self.last_output, self._clock())
            if writable:
                return

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
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
        elif self.output is not None:  # a pseudo-terminal's
            os.close(self.output)
        for fd in (self.save, self.events):
            if fd is not None:
                os.close(fd)
        if self.wakeup is not None:
            signal.set_wakeup_fd(self.previous_wakeup)
            for fd in self.wakeup:
                os.close(fd)
        for signum, handler in self.handlers.items():
            signal.signal(signum, handler)
        if self.process is not None:
            processes.adopt_orphans(False)

    def _take(self, size):
        """What the output holds now (saved), None if nothing; at its end (b"") it is
        closed."""
        try:
            data = os.read(self.pipe, size)
        except BlockingIOError:
            return None
        except OSError as error:
            # A pseudo-terminal's end: no process holds the agent's side any more.
            if not (self.pty and error.errno == errno.EIO):
                raise
            data = b""
        if data:
            self.last_output = self._clock()
            self._save(data)
            if self.events is not None:
                self._arrived(data)
        else:
            self.ended_at = self._clock()
            self._close_output()
        return data

    def _save(self, data):
        if self.save is not None:
            self._write("save", data)

    def _arrived(self, data):
        """Write to the --events file when each line that ``data`` ends arrived."""
        ended = data.count(b"\n")
        self.line_open = not data.endswith(b"\n")
        if not ended:
            return
        now = time.time()
        first = self.lines + 1
        self.lines += ended
        self._write("events", b"".join(b'{"line":%d,"t":%.3f}\n' % (number, now)
                                        for number in range(first, self.lines + 1)))

    def _write(self, which, data):
        """Write ``data`` to the --save or --events file (``which``): whether it could
        (the first error is said, and the file written no more)."""
        try:
            self.write_all(getattr(self, which), data)
        except OSError as error:
            self.say(f"{self.file_names[which]}: error: cannot write: "
                     f"{error.strerror or error}")
            os.close(getattr(self, which))
            setattr(self, which, None)
            self.write_failed = True
            return False
        return True

    def _close_output(self):
        if self.events is not None and self.line_open:
            # Its last line, with no end, arrived at its end (the output's end read, or
            # given up when the agent is done).
            self._arrived(b"\n")
        self.selector.unregister(self.pipe)
        self.pipe = None

    # Waiting, and what the rules do.

    def _wait(self):
        """Wait for what comes first: output (True), the agent's exit, a signal, or the
        time of a rule, which is then acted on (False)."""
        now = self._clock()
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
        self._collect()
        return readable

    def _collect(self):
        """Note the agent's exit, and collect the processes that came back to this one
        and ended (their group is gone only once they are: as PID 1, or a subreaper)."""
        if self.exited_at is None and self.process.poll() is not None:
            self.exited_at = self._clock()
            self.exited_on_its_own = self.signalled_at is None
        if self.children_before is not None:
            processes.reap(self._kept(), self.process.pid)

    def _kept(self):
        """This process's children that are not the agent's orphans: the agent itself
        (Popen takes its status), and those from before it."""
        return self.children_before | {self.process.pid}

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
            if self.children_before is None and self.exited_at is None:
                found.append((self.looked_at + processes.LOOK_EVERY, self._look))
        return min(found, key=lambda rule: rule[0], default=(None, None))

    def _look_before_ending(self):
        if self.children_before is None and self.exited_at is None:
            self._look()  # its descendants now: the group's end orphans them

    def _look(self):
        """Where orphans do not come back to this process: remember the agent's
        descendants while their parents live, to find them once it is ended."""
        self.looked_at = self._clock()
        found = processes.listing()
        if found is None:
            return
        commands = {each.pid: each.command for each in found}
        for pid in processes.descendants(found, [self.process.pid]):
            if len(self.family) < processes.MAX_REMEMBERED or pid in self.family:
                self.family[pid] = commands[pid]

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
        # An error when it decides the status (124), a warning when the run was over.
        if self.limit_fired:
            self.say(f"{self.label}: error: {message}")
        else:
            self._warn(message)
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
        self._look_before_ending()
        self.signalled_at = self._clock()
        self._signal(signal.SIGTERM)

    def _kill(self):
        if not self._gone():
            self._warn(f"still running {duration_text(self.grace)} after SIGTERM: killing it")
        self.killed_at = self._clock()
        self._signal(signal.SIGKILL)

    def _stop(self):
        """Done: the output, if still open (held by a process that left the group), is
        given up, and the processes of the agent left running are said, and ended
        (--reap)."""
        if self.pipe is not None:
            self._close_output()
        self._left_running()
        self.done = True

    def _left_running(self):
        """Say which of the agent's processes still run, its group ended: those of its
        session (where ps tells sessions), those that came back to this process (Linux)
        or were seen descending from it (``family``), and their descendants; end them
        with --reap."""
        found = processes.listing()
        if found is None:
            return
        agent, kept = self.process.pid, self.children_before
        roots = [each.pid for each in found
                 if agent in (each.pgid, each.sid) or self.family.get(each.pid) == each.command
                 or (kept is not None and each.ppid == os.getpid() and each.pid not in kept)]
        left = processes.descendants(found, roots)
        left = [each for each in found if each.pid in left and not each.ended]
        for each in left:
            command = quote(each.command, COMMAND_LIMIT)
            self._warn(f'left running: pid {each.pid} "{command}"'
                       + (": ending it" if self.reap else ""))
        if self.reap and left:
            processes.end([each.pid for each in left], self.grace, self._collect)
        else:
            self._collect()

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
        # SIGCHLD's byte is taken here, wherever ndagent waits (also for its reader):
        # the exit it tells is noted now, or it would be noticed only at a rule's time.
        self._collect()
        for signum in received:
            if signum not in PASSED_ON:
                continue
            if self.interrupted is None:
                self.interrupted = signum
                if self.signalled_at is None:
                    self._look_before_ending()
                    self.signalled_at = self._clock()
                self._signal(signum)
            elif self.killed_at is None:
                self.killed_at = self._clock()
                self._signal(signal.SIGKILL)

    def _warn(self, text):
        if not self.quiet:
            self.say(f"{self.label}: warning: {text}")


def _nothing():
    """The action of a wait that only looks again."""


def _open_pty():
    """A pseudo-terminal for the agent's standard output: (ndagent's side, the agent's),
    the agent's side passing bytes as they are written (no '\\n' made '\\r\\n'), so that
    the output read is what the agent wrote."""
    leader, follower = os.openpty()
    modes = termios.tcgetattr(follower)
    modes[1] &= ~termios.OPOST  # the output flags: no processing at all
    termios.tcsetattr(follower, termios.TCSANOW, modes)
    return leader, follower
