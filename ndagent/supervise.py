"""The supervision of an agent's process for ndagent run: the agent runs in a process
group of its own, its output is read as the decoder reads a file, and the agent is ended
by the rules of --grace, --idle and --timeout and on the signals ndagent receives.  It
knows nothing of the verb: it is told what to do through its arguments (the limits, a
function that says a message, one that writes the --save file)."""

import os
import select
import selectors
import signal
import subprocess
import sys
import time

# How often the agent's process group is looked at, while only processes that do not
# hold its output may be left of it (the agent has exited, its output ended).
POLL = 0.05
# The longest wait in one go (a --timeout of days is waited for in steps).
MAX_WAIT = 3600.0

# The signals passed on to the agent's group: every one whose default would end
# ndagent and leave the agent running in its own session.
PASSED_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2, signal.SIGALRM, signal.SIGXCPU)

# Linux's prctl option that makes the processes a process leaves behind (a daemon the
# agent started with setsid) this one's children, so that they can be ended with it.
_PR_SET_CHILD_SUBREAPER = 36

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
    ``save``, the descriptor of the --save file (or None), written with ``write_all``;
    ``grace``, ``idle`` and ``timeout``, the limits in seconds (0: no --idle, no
    --timeout); ``say``, what says a message on standard error, and ``quiet``, whether
    warnings are left unsaid."""

    def __init__(self, argv, name, save, *, grace, idle, timeout, say, quiet, write_all):
        self.argv = argv
        self.label = argv[0]  # what messages call the agent
        self.name = name
        self.grace, self.idle, self.timeout = grace, idle, timeout
        self.say, self.quiet = say, quiet
        self.save = save
        self.write_all = write_all
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
        self.children_before = None  # with orphans adopted: the children before the agent

    def start(self):
        """Start the agent: None, or the OSError that kept it from starting."""
        if _adopt_orphans():
            # This process's children from before (a script's that runs this in its
            # own process) are not the agent's orphans.
            self.children_before = frozenset(_children() or ())
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
            return error
        self.started_at = self.last_output = time.monotonic()
        self.pipe = self.process.stdout.fileno()
        os.set_blocking(self.pipe, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.pipe, selectors.EVENT_READ)
        self.selector.register(self.wakeup[0], selectors.EVENT_READ)
        return None

    # What the verb tells of the stream: a run is over, another has begun.

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

    def wait_writable(self, fd):
        """Wait until ``fd`` has room for a pipe's atomic write, acting meanwhile on the
        signals ndagent receives and on the rules' times, as reading does: a slow reader
        of ndagent's output keeps neither Ctrl-C nor --timeout from ending the agent
        (Interrupted once a signal was passed on).  Time spent waiting here is no
        silence of the agent's (--idle)."""
        while True:
            timeout = MAX_WAIT
            if not self.done:  # (once done, no rule is left to act on)
                now = time.monotonic()
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
                self.last_output = max(self.last_output, time.monotonic())
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
        if self.process is not None:
            _adopt_orphans(False)

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
            self.write_all(self.save, data)
        except OSError as error:
            self.say(f"{self.name}: error: cannot write: {error.strerror or error}")
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
        if self.children_before is not None:
            _reap(self.children_before | {self.process.pid})
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
        self.signalled_at = time.monotonic()
        self._signal(signal.SIGTERM)

    def _kill(self):
        if not self._gone():
            self._warn(f"still running {duration_text(self.grace)} after SIGTERM: killing it")
        self.killed_at = time.monotonic()
        self._signal(signal.SIGKILL)

    def _stop(self):
        """Done: the output, if still open (held by a process that left the group), is
        given up, and the processes that left the group and came back to this one when
        their parent died (Linux) are ended."""
        if self.pipe is not None:
            self._close_output()
        if self.children_before is not None:
            _end_orphans(self.children_before | {self.process.pid}, self.grace)
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
        if not self.quiet:
            self.say(f"{self.label}: warning: {text}")


def _nothing():
    """The action of a wait that only looks again."""


def _adopt_orphans(adopt=True):
    """Where the system allows it (Linux), make the processes the agent leaves behind
    this one's children when their parent dies, rather than init's (``adopt``; False
    puts it back): whether it does."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # lazy: only run on Linux needs it

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(
            _PR_SET_CHILD_SUBREAPER, int(adopt), 0, 0, 0) == 0
    except (OSError, AttributeError):  # no prctl to be had: orphans go to init
        return False


def _reap(kept):
    """Collect the children that have ended, but those ``kept`` (the agent, whose status
    Popen takes, and the children this process had before it): orphans that came back
    to this process would otherwise be zombies that keep their group alive."""
    while True:
        try:
            found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if found is None or found.si_pid in kept:
            return
        os.waitpid(found.si_pid, 0)


def _children():
    """The processes whose parent this one is (``ps``: no /proc on every system), or
    None when ``ps`` cannot tell: it sees other process ids than this one (in a
    container's own namespace, with the host's /proc), as its own entry shows."""
    try:
        lister = subprocess.Popen(["ps", "-A", "-o", "pid=,ppid="], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        listing = lister.communicate(timeout=10)[0]
    except (OSError, subprocess.SubprocessError):
        return None
    mine = str(os.getpid())
    pairs = [line.split() for line in listing.splitlines() if len(line.split()) == 2]
    if [str(lister.pid), mine] not in pairs:
        return None
    return [int(pid) for pid, parent in pairs if parent == mine and pid != str(lister.pid)]


def _end_orphans(kept, grace):
    """End the processes that came back to this one, but those ``kept`` (SIGTERM, then
    SIGKILL ``grace`` later), and collect them."""
    orphans = [pid for pid in _children() or () if pid not in kept]
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for pid in orphans:
            try:  # noqa: SIM105 - contextlib would cost start-up time
                os.kill(pid, signum)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        while orphans and time.monotonic() < deadline:
            _reap(kept)
            orphans = [pid for pid in orphans if _alive(pid)]
            time.sleep(POLL)
    _reap(kept)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
