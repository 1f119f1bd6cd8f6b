"""Many FILEs read in worker processes, for the verbs that read each FILE on its own
(``per_input``: validate, stats), and a large FILE read in parts.

The FILEs are shared out in tasks of a few, in FILE order.  A worker runs the verb's
command over its task, keeping what it writes (output and messages, in the order they
came) and what the command says it found (``worker_state``); this process writes each
task's output and messages in FILE order and hands the rest to its own command
(``take_worker_state``).  So the output is the same as from one process, whatever the
number of workers.  Standard input and the FILEs that are not regular files are read
in this process, in their turn.

A command that ``splits_files`` (validate among its FILEs, the converters when given
one) reads a large regular FILE in parts, one per process, where its agent's format
says the stream may be cut (``splits_between``: between the end of one run and the
beginning of the next, so that each part is read as the whole would be), each in a
child process whose output this one writes in turn (``_read_parts``); each part is
numbered as in the whole FILE, and the command adds up what they found
(``take_parts``).
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
# How far past the point where a part would end its end is looked for (a line at which
# the stream may be cut), at the most; past that, the part runs on to the next point.
SPLIT_SEARCH = 4 << 20
# How many lines that hold the format's SPLIT_NEEDLE are tried there, at the most (each
# costs decoding two lines: a stream made to hold the needle everywhere costs little).
SPLIT_TRIES = 32


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
    if not command.splits_files or jobs == 1:
        _read_files(command, inputs, jobs, progress)
        return
    files = []  # the FILEs before the next one read in parts
    for name in inputs:
        parts = split(command, name, jobs or cores())
        if len(parts) == 1:
            files.append(name)
            continue
        _read_files(command, files, jobs, progress)
        files = []
        if command.stopped:
            return
        _read_parts(command, parts)
        if progress is not None:
            progress.add(1, size(name))
    _read_files(command, files, jobs, progress)


def read_in_parts(command, name):
    """Read the FILE ``name`` in parts, one per core, where it may be cut
    (``split``): whether it was."""
    parts = split(command, name, cores())
    if len(parts) == 1:
        return False
    _read_parts(command, parts)
    return True


def _read_files(command, inputs, jobs, progress):
    """Read ``inputs``, each whole: in worker processes where there are ``jobs`` (None:
    as many as there are cores, from SHARE_FROM bytes of regular FILEs), else here."""
    if command.stopped:
        return
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


def split(command, name, count):
    """A FILE as the ``count`` parts to read it in (``decoder.Part``s, each knowing the
    agent, told here from the FILE's head), or as itself: when it is small, not a
    regular file, the output file, or a stream its format does not split, or one whose
    lines the command selects and that it ``prefers_scan``, or when no place to cut it
    is found."""
    import stat

    from ndagent.decoder import Part
    from ndagent.formats import Detector

    if count < 2 or name == "-" or not isinstance(name, (str, bytes, os.PathLike)):
        return [name]
    try:
        found = os.stat(name)
    except OSError:
        return [name]
    output = cli._output_file(command.out.fd)
    if (not stat.S_ISREG(found.st_mode) or found.st_size < cli.SPLIT_FROM
            or (output is not None and cli._is_output(name, output))):
        return [name]
    decision = cli._detect_head(name, Detector(command.forced_agent))
    module = None if decision is None else decision[0]
    if getattr(module, "splits_between", None) is None or (
            command.prefers_scan and not command.every_line
            and module.markers(command.needs_of(module)) is not None):
        return [name]
    size = found.st_size
    cuts = []
    try:
        with open(name, "rb", buffering=0) as handle:
            for index in range(1, count):
                begin = max(size * index // count, cuts[-1] if cuts else 0)
                cut = _cut(handle.fileno(), begin, module, command)
                if cut is not None and (not cuts or cut > cuts[-1]):
                    cuts.append(cut)
    except OSError:
        return [name]
    if not cuts:
        return [name]
    ends = [*cuts, None]
    return [Part(name, begin, end, module.NAME) for begin, end in zip([0, *cuts], ends)]


def _cut(fd, begin, module, command):
    """The offset of the first line at or after ``begin`` (within SPLIT_SEARCH bytes)
    before which ``module``'s stream may be cut for ``command``, or None.  Both lines
    beside the cut are decoded as the decoder decodes them (a line it would not take
    whole for an object, too long or not plain JSON, is no place to cut), and neither
    may be another agent's (the frame would pass it over)."""
    import orjson

    from ndagent.formats import OtherAgents

    max_line = command.args.max_line
    base = max(begin - 1, 0)  # from the newline before ``begin``: a line there is whole
    window = os.pread(fd, SPLIT_SEARCH, base)
    others = OtherAgents(module)
    found = window.find(module.SPLIT_NEEDLE)
    tries = 0
    while found >= 0 and tries < SPLIT_TRIES:
        start = window.rfind(b"\n", 0, found) + 1
        end = window.find(b"\n", found)
        if end < 0:
            return None
        if start and end - start < max_line:
            tries += 1
            before = window.rfind(b"\n", 0, start - 1) + 1
            # The line before, unless it is too long (or begins before the window: read
            # from the file, at most once a window).
            before = (window[before:start - 1] if before
                      else _line_before(fd, base + start - 1, max_line))
            try:
                first = None if before is None or len(before) >= max_line \
                    else orjson.loads(before)
                second = orjson.loads(window[start:end])
            except orjson.JSONDecodeError:
                first = second = None
            if (first.__class__ is dict and second.__class__ is dict
                    and module.splits_between(first, second, command.checks)
                    and not any(decides(value) for value in (first, second)
                                for decides, _ in others.tests(_string(value.get("type"))))):
                return base + start
        found = window.find(module.SPLIT_NEEDLE, end)
    return None


def _line_before(fd, newline, max_line):
    """The line that ends at the newline at offset ``newline`` (but the first line of
    the file, which may begin with a byte order mark), or None when it is longer than
    SPLIT_SEARCH bytes or ``max_line``."""
    most = min(SPLIT_SEARCH, max_line)
    data = os.pread(fd, min(most + 1, newline), newline - min(most + 1, newline))
    start = data.rfind(b"\n") + 1
    return data[start:] if start else None


def _string(value):
    return value if value.__class__ is str else None


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


def _read_parts(command, parts):
    """Read the parts of one FILE, each in a child process that sends what it writes
    (output and messages, in the order they came) through a pipe, and at the end its
    status and what its command found; this process writes each part's in turn, so
    that the output is that of one process.  What the later parts send meanwhile is
    held, up to PARTS_HELD bytes in all, past which they wait: memory stays bounded
    however much they print, and a part that prints much does not wait for those
    before it to end.  A part that could not be read to its end, or whose reading
    stopped early (--strict), is the last one taken: one process stops there.  The
    command is then given the parts' findings (``take_parts``)."""
    command.out.flush()  # nothing of this process's is written again by a child
    children = []  # (pid, the read end of its pipe)
    try:
        for part in parts:
            child = _start_part(command, part, [pipe for _, pipe in children])
            if child is None:  # no room for another process: this one reads the rest
                break
            children.append(child)
        received = _Received(children)
        states = []
        for index, part in enumerate(parts):
            if index < len(children):
                end = received.write(index, command)
                if end is None:
                    command.say("a worker process died (killed? out of memory?): some "
                                "FILEs were not read")
                    command.status = max(command.status, cli.EXIT_USAGE)
                    return
                status, whole, state = end
                command.status = max(command.status, status)
            else:
                command.all_read = True
                whole, state = _read_part(command, part)
                command.part = None
            states.append(state)
            if not whole:
                break
        command.take_parts(states)
    finally:
        for pid, pipe in children:
            os.close(pipe)
            _end_process(pid)


# What the parts after the one being written may have sent and be held, in all; how
# much of a pipe is read at once; the kinds of the frames a child sends.
PARTS_HELD = 32 << 20
PIPE_BUFFER = 1 << 20
_OUTPUT, _MESSAGE, _ONCE, _END = range(4)


class _Received:
    """What the parts' children send, by child: ``write`` writes one child's as it
    comes, holding what the later ones send meanwhile (PARTS_HELD bytes in all)."""

    def __init__(self, children):
        self.pipes = [pipe for _, pipe in children]
        self.data = [bytearray() for _ in children]
        self.open = set(range(len(children)))  # the children whose pipe is not at its end
        self.held = 0

    def write(self, index, command):
        """Write what child ``index`` sends, to its end: the value of its end frame
        (status, whether read whole, state), or None when it ended without one."""
        import select
        from marshal import loads

        data = self.data[index]
        self.held -= len(data)
        while True:
            position = 0  # frames: a kind, a length (8 bytes), the bytes
            while len(data) - position >= 9:
                size = int.from_bytes(data[position + 1:position + 9], "little")
                if len(data) - position - 9 < size:
                    break
                kind = data[position]
                frame = bytes(data[position + 9:position + 9 + size])
                position += 9 + size
                if kind == _OUTPUT:
                    command.out.write(frame)
                elif kind == _MESSAGE:
                    command.out.message(frame)
                elif kind == _ONCE:
                    once, _, frame = frame.partition(b"\0")
                    command.out.message(frame, once.decode())
                else:
                    command.out.flush()
                    return loads(frame)
            del data[:position]
            command.out.flush()
            if index not in self.open:
                return None
            watched = [index]
            if self.held < PARTS_HELD:
                watched += [later for later in self.open if later > index]
            ready, _, _ = select.select([self.pipes[child] for child in watched], [], [])
            for child in watched:
                if self.pipes[child] in ready:
                    more = os.read(self.pipes[child], PIPE_BUFFER)
                    if not more:
                        self.open.discard(child)
                    self.data[child] += more
                    if child != index:
                        self.held += len(more)


def _start_part(command, part, others):
    """A child process that reads ``part`` with a command like ``command``: (its pid,
    the read end of its pipe), or None when the system has no room for it.  ``others``:
    the pipes of the children started before, which it closes."""
    from ndagent.decoder import fork_with_pipe

    forked = fork_with_pipe()
    if forked is None:
        return None
    pid, read_end, write_end = forked
    if pid:
        return pid, read_end
    try:  # the child: only ever os._exit, so that nothing of the parent's is flushed
        from marshal import dumps

        for pipe in others:
            os.close(pipe)
        reader = type(command)(command.args, command.prog, _Sent(write_end,
                                                                  command.out.terminal))
        whole, state = _read_part(reader, part)
        reader.out.flush()
        _send(write_end, _END, dumps((reader.status, whole, state)))
        os._exit(0)
    except BaseException:  # noqa: BLE001 - the parent says that the part was not read
        os._exit(1)


def _read_part(command, part):
    """Read ``part`` with ``command``, here: (whether it was read whole, neither a read
    failing nor the reading stopped early, and what the command found)."""
    command.part = part
    command.read_here(part)
    return command.all_read and not command.stopped, command.worker_state()


def _send(pipe, kind, data):
    cli.write_all(pipe, bytes([kind]) + len(data).to_bytes(8, "little") + data)


def _end_process(pid):
    import signal

    try:  # noqa: SIM105 - contextlib would cost start-up time
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


class _Sent(cli.Output):
    """A part's child's standard output and messages, sent in order through ``pipe``
    to the process that writes them (``_read_parts``)."""

    def __init__(self, pipe, terminal):
        super().__init__()
        self.terminal = terminal
        self.pipe = pipe

    def flush(self):
        if self.parts:
            data = b"".join(self.parts)
            self.parts.clear()
            self.size = 0
            _send(self.pipe, _OUTPUT, data)

    def message(self, data, once=None):
        if self.said_before(once):
            return
        self.flush()
        if once is None:
            _send(self.pipe, _MESSAGE, data)
        else:  # the key first, so that this process writes only a key's first message
            _send(self.pipe, _ONCE, once.encode() + b"\0" + data)


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

    def message(self, data, once=None):
        if self.said_before(once):  # (the verbs that read FILEs in workers say none)
            return
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
