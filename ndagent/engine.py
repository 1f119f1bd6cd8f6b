"""The one parallel mechanism: shares of work read in forked children, their output
written in order.

A share is whatever the caller's ``work`` reads (a part of a FILE, a few FILEs).  Up to
``jobs`` children are forked, each reading the shares it is given one after another
(the next one as soon as it has sent the last): a child costs its fork and the
pages of this process it comes to write, once however many shares it reads.  A child
writes what it prints (output and messages, in the order they came) into a pipe, then
the value its work returned.  This process writes each share's output in share order,
so that the output is that of one process; what the later shares send meanwhile is
held, up to HELD bytes in all, past which they wait and no other share is given out:
memory stays bounded however much they print.  A share that no child can be made for
(no room for a process or a pipe) is read here, in its turn.  Nothing here knows what
a share is or what reads it.
"""

import gc
import os
import select
import signal
from marshal import dumps, loads

from ndagent.output import Output, write_all
from ndagent.sources import widen_pipe

# What the shares after the one being written may have sent and be held, in all; how
# much of a pipe is read at once.
HELD = 32 << 20
PIPE_BUFFER = 1 << 20
_OUTPUT, _MESSAGE, _ONCE, _ASK, _END = range(5)
_HEADER = 9  # a frame: its kind (a byte), its length (8 bytes), its bytes
_ORDER = 8  # what a child is told: the number of its next share (8 bytes)


def run(shares, jobs, out, work, taken, known=None):
    """Read ``shares`` with ``work(share, out, here)``, each in a child (``here``
    false), ``jobs`` children at a time; the value ``work`` returns is of the kinds
    marshal takes (numbers, strings, lists, tuples, dicts).  ``work`` keeps nothing
    from one share to the next that would change what it prints.  ``taken(index,
    value)`` is called in share order once a share's output is written; it returns
    whether to go on (False: the shares after it are not taken).  A child that ended
    without a share's value is said on ``out`` as a message and ends the run: the
    result is False, else True.

    A child that cannot know something that the shares before it hold asks
    (``out.ask(value)``) and goes on as if they did not hold it; ``known(value)`` is
    asked in share order, once those shares are taken: when true, the child is
    ended and its share read again here, with ``here`` true, its output from the
    beginning but for what was written of it already."""
    out.flush()  # nothing of this process's is written again by a child
    # The objects made so far out of the collector's sight while the children run: a
    # child's collections would touch, and so copy, every page of the parent's heap
    # (about 15 ms a child).
    gc.freeze()
    children = _Children(shares, jobs, out, work, known)
    try:
        for index, share in enumerate(shares):
            children.give(index)
            if index in children.data:
                value = children.write(index)
                if value is None:
                    return False
            else:  # no room for a child: this process reads it
                children.given = index + 1
                value = work(share, out, True)
                out.flush()
            if not taken(index, value):
                break
        return True
    finally:
        children.end()
        gc.unfreeze()


class _Child:
    """A child: its process id, the read end of the pipe it writes into, the write end
    of the pipe it is told its shares through, the share in hand (None: waiting for
    one), and how far what it sent of that share was looked through for its end."""

    __slots__ = ("pid", "pipe", "orders", "share", "scanned")

    def __init__(self, pid, pipe, orders):
        self.pid, self.pipe, self.orders = pid, pipe, orders
        self.share = None
        self.scanned = 0


class _Children:
    """The children of a run, and what the shares they were given sent and is not
    written yet."""

    def __init__(self, shares, jobs, out, work, known):
        self.shares, self.jobs, self.out, self.work = shares, jobs, out, work
        self.known = known
        self.given = 0  # the shares given to a child, or tried
        self.children = []  # those alive
        self.data = {}  # share -> what it sent and is not written yet
        self.lost = set()  # the shares whose child ended before their value
        self.held = 0  # the bytes in ``data`` of the shares after the one being written

    def give(self, index):
        """Give out shares, in order, while there are shares left, a child free (or
        room for another) and what is held leaves room (share ``index``, being
        written, always goes out if a child can take it)."""
        while self.given < len(self.shares) and (self.given == index or self.held < HELD):
            child = next((child for child in self.children if child.share is None), None)
            if child is None and len(self.children) < self.jobs:
                child = _start(self.work, self.shares, self.out.terminal,
                               [fd for other in self.children
                                for fd in (other.pipe, other.orders)])
                if child is not None:
                    self.children.append(child)
            if child is None:
                return
            try:
                write_all(child.orders, self.given.to_bytes(_ORDER, "little"))
            except OSError:  # it died while free: no share of its is lost
                self._forget(child)
                continue
            child.share, child.scanned = self.given, 0
            self.data[self.given] = bytearray()
            self.given += 1

    def write(self, index):
        """Write what share ``index`` sends, to its end: the value it ended with, or
        None when its child ended without one."""
        data = self.data[index]
        self.held -= len(data)
        written = _Written(self.out, self.known)
        while True:
            position, value = written.frames(data)
            self.out.flush()
            del data[:position]
            if written.again:
                self._done(index, again=True)
                value = self.work(self.shares[index], _Again(self.out, written), True)
                self.out.flush()
                return value
            if value is not None:
                self._done(index)
                return loads(value)
            if index in self.lost:
                self._done(index)
                return None
            self._wait(index)
            self.give(index)

    def _wait(self, index):
        """Read what the children have sent, once one has: share ``index``'s always,
        the other shares' while what is held leaves room."""
        watched = [child for child in self.children if child.share is not None
                   and (child.share == index or self.held < HELD)]
        ready = set(select.select([child.pipe for child in watched], [], [])[0])
        for child in watched:
            if child.pipe not in ready:
                continue
            share = child.share
            more = os.read(child.pipe, PIPE_BUFFER)
            if not more:
                self.lost.add(share)
                self._forget(child)
                continue
            self.data[share] += more
            if share != index:
                self.held += len(more)
                self._scan(child)

    def _scan(self, child):
        """Look through what the child sent of a later share for the share's end: then
        the child is free for another."""
        data = self.data[child.share]
        position = child.scanned
        while len(data) - position >= _HEADER:
            end = position + _HEADER + int.from_bytes(data[position + 1:position + _HEADER],
                                                      "little")
            if end > len(data):
                break
            if data[position] == _END:
                child.share = None
                return
            position = end
        child.scanned = position

    def _done(self, index, again=False):
        """The share is written (or to be read again here): its child, if it still
        reads it, is free again, or ended when it is to be read again."""
        del self.data[index]
        self.lost.discard(index)
        child = next((child for child in self.children if child.share == index), None)
        if child is not None and again:
            self._forget(child)
        elif child is not None:
            child.share = None

    def _forget(self, child):
        self.children.remove(child)
        _end(child)

    def end(self):
        for child in self.children:
            _end(child)
        self.children = []


class _Written:
    """What is written of one share's frames: its output's bytes and messages, and
    whether it is to be read again (``again``: its child asked of something that
    the shares before it hold)."""

    def __init__(self, out, known):
        self.out, self.known = out, known
        self.size = 0
        self.messages = 0
        self.again = False

    def frames(self, data):
        """Write the whole frames at the start of ``data``: (how many bytes they took,
        the end frame's bytes or None).  Output goes out as it is, not copied."""
        position = 0
        view = memoryview(data)
        out = self.out
        try:
            while len(data) - position >= _HEADER:
                size = int.from_bytes(view[position + 1:position + _HEADER], "little")
                begin = position + _HEADER
                if len(data) - begin < size:
                    break
                kind = data[position]
                position = begin + size
                if kind == _OUTPUT:
                    out.write_now(view[begin:position])
                    self.size += size
                elif kind == _MESSAGE:
                    out.message(bytes(view[begin:position]))
                    self.messages += 1
                elif kind == _ONCE:
                    once, _, frame = bytes(view[begin:position]).partition(b"\0")
                    out.message(frame, once.decode())
                elif kind == _ASK:
                    if self.known is not None and self.known(loads(view[begin:position])):
                        self.again = True
                        break
                else:
                    return position, bytes(view[begin:position])
            return position, None
        finally:
            view.release()


class _Again(Output):
    """The output of a share read again here: what its child's output had written
    already (bytes, and messages but those said once, which ``out`` knows) is not
    written twice."""

    def __init__(self, out, written):
        super().__init__(out.fd)
        self.out = out
        self.terminal = out.terminal
        self.said = out.said
        self.skip = written.size
        self.skip_messages = written.messages

    def flush(self):
        if self.parts:
            data = b"".join(self.parts)
            self.parts.clear()
            self.size = 0
            self.write_now(data)

    def write_now(self, data):
        self.flush()
        if self.skip:
            cut = min(self.skip, len(data))
            data, self.skip = data[cut:], self.skip - cut
        if len(data):
            self.out.write_now(data)

    def message(self, data, once=None):
        if self.said_before(once):
            return
        if once is None and self.skip_messages:
            self.skip_messages -= 1
            return
        self.flush()
        self.out.message(data)


def _start(work, shares, terminal, others):
    """A child that reads the shares it is told of, or None when the system has no
    room for it.  ``others``: this process's ends of the other children's pipes, which
    it closes."""
    try:
        read_end, write_end = os.pipe()
        try:
            orders, told = os.pipe()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            raise
        widen_pipe(read_end)
        try:
            pid = os.fork()
        except OSError:
            for fd in (read_end, write_end, orders, told):
                os.close(fd)
            raise
    except OSError:
        return None
    if pid:
        os.close(write_end)
        os.close(orders)
        return _Child(pid, read_end, told)
    try:  # the child: only ever os._exit, so that nothing of the parent's is flushed
        os.close(read_end)
        os.close(told)
        for fd in others:
            os.close(fd)
        while True:
            order = os.read(orders, _ORDER)
            if len(order) < _ORDER:  # no more shares: the run is over
                os._exit(0)
            # An output of its own for each share: a message said once in a share whose
            # output is given up (read again here) is said again in the next.
            sent = _Sent(write_end, terminal)
            value = work(shares[int.from_bytes(order, "little")], sent, False)
            sent.flush()
            _send(write_end, _END, dumps(value))
    except BaseException:  # noqa: BLE001 - the parent says that the share was not read
        os._exit(1)


def _end(child):
    """End a child (at once: its shares are written, or given up) and collect it."""
    os.close(child.pipe)
    os.close(child.orders)
    try:  # noqa: SIM105 - contextlib would cost start-up time
        os.kill(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(child.pid, 0)


def _send(pipe, kind, data):
    """A frame: its header, then its bytes as they are (not copied into one)."""
    write_all(pipe, bytes([kind]) + len(data).to_bytes(8, "little"))
    write_all(pipe, data)


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

    def ask(self, value):
        """Ask the process that writes the output (``run``'s ``known``)."""
        self.flush()
        _send(self.pipe, _ASK, dumps(value))

    def message(self, data, once=None):
        if self.said_before(once):
            return
        self.flush()
        if once is None:
            _send(self.pipe, _MESSAGE, data)
        else:  # the key first, so that the parent writes only a key's first message
            _send(self.pipe, _ONCE, once.encode() + b"\0" + data)
