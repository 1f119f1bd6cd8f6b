"""The one parallel mechanism: shares of work read in forked children, their output
written in order.

A share is whatever the caller's ``work`` reads (a part of a FILE, a few FILEs): each
goes to a child process, at most ``jobs`` at a time, which writes what it prints
(output and messages, in the order they came) into a pipe, then the value its work
returned.  This process writes each share's output in share order, so that the
output is that of one process; what the later shares send meanwhile is held, up to
HELD bytes in all, past which they wait: memory stays bounded however much they
print.  A share that no child can be made for (no room for a process or a pipe) is
read here, in its turn.  Nothing here knows what a share is or what reads it.
"""

import os
import select
import signal

from ndagent.output import Output, write_all
from ndagent.sources import widen_pipe

# What the shares after the one being written may have sent and be held, in all; how
# much of a pipe is read at once.
HELD = 32 << 20
PIPE_BUFFER = 1 << 20
_OUTPUT, _MESSAGE, _ONCE, _END = range(4)


def run(shares, jobs, out, work, taken):
    """Read ``shares`` with ``work(share, out)``, which returns a value (anything
    pickle takes), each in a child, at most ``jobs`` at a time.  ``taken(index, value)`` is
    called in share order once a share's output is written; it returns whether to go
    on (False: the shares after it are not taken).  A child that ended without its
    value is said on ``out`` as a message and ends the run: the result is False, else
    True."""
    import pickle  # lazy: only a command that runs shares pays for it

    out.flush()  # nothing of this process's is written again by a child
    children = {}  # share index -> (pid, the read end of its pipe)
    received = _Received(out, pickle.loads)
    started = 0  # the shares a child was started for, or tried
    try:
        for index, share in enumerate(shares):
            while started < len(shares) and started < index + jobs:
                child = _start(work, shares[started], out.terminal,
                               [pipe for _, pipe in children.values()], pickle.dumps)
                if child is None:  # no room for another: this one reads it in turn
                    break
                children[started] = child
                received.add(started, child[1])
                started += 1
            if index in children:
                value = received.write(index)
                _end(*children.pop(index))
                if value is None:
                    return False
            else:
                started = max(started, index + 1)
                value = work(share, out)
                out.flush()
            if not taken(index, value):
                break
        return True
    finally:
        for pid, pipe in children.values():
            os.close(pipe)
            _end(pid, None)


class _Received:
    """What the children send, by share: ``write`` writes one share's as it comes,
    holding what the later ones send meanwhile (HELD bytes in all)."""

    def __init__(self, out, loads):
        self.out = out
        self.loads = loads
        self.pipes = {}  # index -> pipe, while open
        self.data = {}  # index -> what it sent and is not written yet
        self.held = 0

    def add(self, index, pipe):
        self.pipes[index] = pipe
        self.data[index] = bytearray()

    def write(self, index):
        """Write what share ``index`` sends, to its end: the value it ended with, or
        None when it ended without one."""
        data = self.data.pop(index)
        self.held -= len(data)
        while True:
            position, value = self._frames(data)
            del data[:position]
            self.out.flush()
            if value is not None:
                return self.loads(value)
            if index not in self.pipes:
                return None
            watched = [index]
            if self.held < HELD:
                watched += [later for later in self.pipes if later > index]
            ready = set(select.select([self.pipes[share] for share in watched], [], [])[0])
            for share in watched:
                pipe = self.pipes[share]
                if pipe not in ready:
                    continue
                more = os.read(pipe, PIPE_BUFFER)
                if not more:
                    del self.pipes[share]
                if share == index:
                    data += more
                else:
                    self.data[share] += more
                    self.held += len(more)

    def _frames(self, data):
        """Write the whole frames at the start of ``data``: (how many bytes they took,
        the end frame's bytes or None)."""
        out = self.out
        position = 0  # frames: a kind, a length (8 bytes), the bytes
        while len(data) - position >= 9:
            size = int.from_bytes(data[position + 1:position + 9], "little")
            if len(data) - position - 9 < size:
                break
            kind = data[position]
            frame = bytes(data[position + 9:position + 9 + size])
            position += 9 + size
            if kind == _OUTPUT:
                out.write(frame)
            elif kind == _MESSAGE:
                out.message(frame)
            elif kind == _ONCE:
                once, _, frame = frame.partition(b"\0")
                out.message(frame, once.decode())
            else:
                return position, frame
        return position, None


def _start(work, share, terminal, others, dumps):
    """A child that reads ``share``: (its pid, the read end of its pipe), or None when
    the system has no room for it.  ``others``: the pipes of the children started
    before, which it closes; ``dumps``: how it sends the value its work returns."""
    try:
        read_end, write_end = os.pipe()
        widen_pipe(read_end)
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            raise
    except OSError:
        return None
    if pid:
        os.close(write_end)
        return pid, read_end
    try:  # the child: only ever os._exit, so that nothing of the parent's is flushed
        os.close(read_end)
        for pipe in others:
            os.close(pipe)
        sent = _Sent(write_end, terminal)
        value = work(share, sent)
        sent.flush()
        _send(write_end, _END, dumps(value))
        os._exit(0)
    except BaseException:  # noqa: BLE001 - the parent says that the share was not read
        os._exit(1)


def _end(pid, pipe):
    """End a child (at once: its share is written, or given up) and collect it."""
    if pipe is not None:
        os.close(pipe)
    try:  # noqa: SIM105 - contextlib would cost start-up time
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


def _send(pipe, kind, data):
    write_all(pipe, bytes([kind]) + len(data).to_bytes(8, "little") + data)


class _Sent(Output):
    """A child's standard output and messages, sent in order through ``pipe`` to the
    process that writes them.  A child whose parent is gone (killed) ends at its next
    flush, rather than read on for no one."""

    def __init__(self, pipe, terminal):
        super().__init__()
        self.terminal = terminal
        self.pipe = pipe
        self.parent = os.getppid()

    def flush(self):
        if os.getppid() != self.parent:
            os._exit(1)
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
        else:  # the key first, so that the parent writes only a key's first message
            _send(self.pipe, _ONCE, once.encode() + b"\0" + data)

