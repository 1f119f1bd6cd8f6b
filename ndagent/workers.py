"""Many FILEs read in worker processes, for the verbs that read each FILE on its own
(``per_input``: validate, stats).

The FILEs are shared out in tasks of a few, in FILE order.  A worker runs the verb's
command over its task, keeping what it writes (output and messages, in the order they
came) and what the command says it found (``worker_state``); this process writes each
task's output and messages in FILE order and hands the rest to its own command
(``take_worker_state``).  So the output is the same as from one process, whatever the
number of workers.  Standard input and the FILEs that are not regular files are read
in this process, in their turn.
"""

import os
from sys import platform

from ndagent import cli

# Without -j, the FILEs are shared among processes when they add up to this many bytes:
# below, starting the processes would cost more than it saves.
SHARE_FROM = 8 << 20
# Worker processes' start method: fork where it is safe and quick, spawn elsewhere (as
# macOS itself chose).  The tests run both.
START_METHOD = "fork" if platform.startswith("linux") else "spawn"
# How many FILEs a worker reads for one task, at most: few enough that each worker gets
# several tasks (an even share, and little left to wait for at the end), enough that a
# task's cost (sending it, its result) does not count.
TASK_FILES = 64


def add_jobs_option(parser):
    parser.add_argument(
        "-j", "--jobs", type=_positive, metavar="N",
        help="read the FILEs in N processes (default: one per core when they add up to "
             f"{SHARE_FROM >> 20} MB or more; 1: in this one); the output is the same")


def _positive(text):
    """A -j value: a whole number above 0."""
    from argparse import ArgumentTypeError

    if cli.whole_number(text) == 0:
        raise ArgumentTypeError("0 processes: give 1 or more")
    return int(text)


def cores():
    """How many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS
        return os.cpu_count() or 1


def size(name):
    """The size of a FILE in bytes (0 when not a regular file)."""
    try:
        return os.stat(name).st_size if name != "-" else 0
    except OSError:
        return 0


def plan(names, jobs):
    """The FILEs as tasks for ``jobs`` processes, in order, ``(here, names)``: ``here``
    for one FILE to read in this process (standard input, a pipe, a device), else up to
    TASK_FILES regular FILEs (or FILEs that cannot be read: a worker says so) for a
    worker; and the bytes of the regular FILEs."""
    import stat

    here = []
    total = 0
    for name in names:
        if name == "-":
            here.append(True)
            continue
        try:
            found = os.stat(name)
        except OSError:
            here.append(False)
            continue
        here.append(not (stat.S_ISREG(found.st_mode) or stat.S_ISDIR(found.st_mode)))
        if stat.S_ISREG(found.st_mode):
            total += found.st_size
    shared = here.count(False)
    per_task = max(1, min(TASK_FILES, shared // (8 * jobs)))
    tasks = []
    for name, in_here in zip(names, here):
        if in_here:
            tasks.append((True, [name]))
        elif tasks and not tasks[-1][0] and len(tasks[-1][1]) < per_task:
            tasks[-1][1].append(name)
        else:
            tasks.append((False, [name]))
    return tasks, total


def read(command, inputs, progress=None):
    """Read ``inputs`` with ``command`` (its -j option, ``args.jobs``): in worker
    processes where it asks for them or, without -j, where there are SHARE_FROM bytes
    of regular FILEs; ``command.read_here(name)`` reads one in this process.
    ``progress``: a Progress told of each FILE read.  Stops early when the command
    says so (``stopped``)."""
    jobs = command.args.jobs
    tasks, total = plan(inputs, jobs or cores())
    if jobs is None:
        jobs = cores() if total >= SHARE_FROM else 1
    workers = min(jobs, sum(1 for here, _ in tasks if not here))
    if workers <= 1:
        for name in inputs:
            command.read_here(name)
            if progress is not None:
                progress.add(1, size(name))
            if command.stopped:
                break
        return
    _read_in_workers(command, tasks, workers, progress)


def _read_in_workers(command, tasks, workers, progress):
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import get_context

    kind = type(command)
    options = {**vars(command.args), "files": [], **command.worker_options()}
    executor = ProcessPoolExecutor(
        workers, mp_context=get_context(START_METHOD), initializer=_start_worker,
        initargs=((kind.__module__, kind.__qualname__), options, command.prog,
                  command.out.terminal, os.getpid()))
    tasks = iter(tasks)
    waiting = deque()  # (names, their future, or None to read them here), in order
    try:
        while True:
            while len(waiting) < 4 * workers:
                here, names = next(tasks, (None, None))
                if names is None:
                    break
                waiting.append((names, None if here else
                                executor.submit(_read_in_worker, names)))
            if not waiting:
                break
            names, future = waiting.popleft()
            if future is None:
                command.read_here(names[0])
            else:
                _take(command, progress, *future.result())
            if progress is not None:
                progress.add(len(names), sum(map(size, names)))
            if command.stopped:
                break
    except BrokenProcessPool:
        command.say("a worker process died (killed? out of memory?): some FILEs were not "
                    "read")
        command.status = max(command.status, cli.EXIT_USAGE)
    finally:
        # Waits for the FILEs in hand only; workers left behind would wait for ever.
        executor.shutdown(wait=True, cancel_futures=True)


def _take(command, progress, writes, status, stopped, state):
    """What a worker read: its output and messages in the order they came, its status,
    and what the command found."""
    for to_output, data in writes:
        if to_output:
            command.out.write(data)
        else:
            if progress is not None:
                progress.clear()
            command.out.message(data)
    command.status = max(command.status, status)
    command.stopped = stopped
    command.take_worker_state(state)


class Progress:
    """The line on a terminal's standard error that says how far the reading is: shown
    after half a second, five times a second at most, erased at the end and before any
    message."""

    def __init__(self, prog, total, shown):
        from time import monotonic

        self.prog, self.total, self.shown = prog, total, shown
        self.files = self.bytes = 0
        self.clock = monotonic
        self.began = monotonic()
        self.next = self.began + 0.5
        self.visible = False

    def add(self, files, size):
        self.files += files
        self.bytes += size
        if not self.shown:
            return
        now = self.clock()
        if now < self.next:
            return
        self.next = now + 0.2
        rate = self.bytes / (now - self.began) / 1e6
        cli.write_message(f"\r{self.prog}: {self.files}/{self.total} files, "
                          f"{rate:.1f} MB/s\x1b[K".encode())
        self.visible = True

    def clear(self):
        if self.visible:
            cli.write_message(b"\r\x1b[K")
            self.visible = False


class _Captured(cli.Output):
    """A worker's standard output and messages, kept in order for the parent, which
    writes them in FILE order: ``writes``, (whether to standard output, bytes)."""

    def __init__(self, terminal):
        super().__init__()
        self.terminal = terminal
        self.writes = []

    def flush(self):
        if self.parts:
            self.writes.append((True, b"".join(self.parts)))
            self.parts.clear()
            self.size = 0

    def message(self, data):
        self.flush()
        self.writes.append((False, data))


_WORKER = None  # (command class, options, prog, terminal) of the worker process


def _start_worker(kind, options, prog, terminal, parent):
    """A worker process begins: Ctrl-C ends it at once, quietly (the parent says it), and
    so does the end of its ``parent``; the garbage collector set as ``run_command`` sets
    it."""
    import gc
    import signal
    from argparse import Namespace
    from importlib import import_module
    from threading import Thread

    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    gc.set_threshold(100_000, 50, 100)
    module, name = kind
    _WORKER = (getattr(import_module(module), name), Namespace(**options), prog, terminal)
    Thread(target=_watch, args=(parent,), daemon=True).start()


def _watch(parent):
    """End this worker once its parent is gone (killed, or ended at Ctrl-C without a
    word to it): it would wait for work for ever, holding the parent's standard output
    open.  An orphan's parent is another process."""
    from time import sleep

    while os.getppid() == parent:
        sleep(0.5)
    os._exit(1)


def _read_in_worker(names):
    """Read ``names`` in a worker process: (writes, status, stopped, state)."""
    kind, args, prog, terminal = _WORKER
    command = kind(args, prog, _Captured(terminal))
    try:
        cli.execute(command, names)
    except MemoryError:
        command.say("out of memory: try a smaller --max-line")
        command.status = cli.EXIT_USAGE
    command.out.flush()
    return command.out.writes, command.status, command.stopped, command.worker_state()
