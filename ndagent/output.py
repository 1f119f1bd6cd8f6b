"""Output: standard output as bytes written after each batch of input, one-line
messages on standard error in order with it, and the progress line of a long read.

Writes wait out a descriptor left non-blocking, a failed message write never stops a
command, and the reader of standard output going away ends it quietly (SIGPIPE)."""

import os
import signal
from time import monotonic

from ndagent.decoder import encode_line
from ndagent.sources import wait_for
from ndagent.terminal import escape_json


class Output:
    """Standard output as bytes, written out at each ``flush`` (after each input batch)."""

    def __init__(self, fd=1):
        self.fd = fd
        self.parts = []
        self.size = 0
        self.terminal = os.isatty(fd)
        # On a terminal: whether what was written last ends inside a line (an answer
        # still arriving, or printed with -n or -z).
        self.line_open = False
        self.said = set()  # the keys of the messages said once (``message``)

    def write_json(self, value):
        """``value`` as one JSON line; on a terminal, with the characters that would act
        on it or hide from it written as ``\\u`` escapes (the same JSON value)."""
        line = encode_line(value)
        if self.terminal:
            line = escape_json(line)
        self.write(line)

    def write(self, data):
        self.parts.append(data)
        self.size += len(data)
        if self.size > 1 << 20:
            self.flush()

    def write_now(self, data):
        """Write ``data`` (any bytes-like object) at once, after what waits: output
        made elsewhere, passed on without a copy."""
        self.flush()
        write_all(self.fd, data)
        if self.terminal and len(data):
            self.line_open = data[-1:] != b"\n"

    def message(self, data, once=None):
        """Write ``data``, whole lines, on standard error: what is waiting for standard
        output goes first, so that a terminal shows both in order, and on a line of its
        own.  ``once``: a key, of which only the first message is written (a command's
        "warns once", whatever processes read its parts)."""
        if self.said_before(once):
            return
        self.flush()
        if self.line_open and _same_terminal(self.fd, 2):
            # Not on the line of the answer being printed: on a line of its own.
            data = b"\n" + data
            self.line_open = False
        write_message(data)

    def said_before(self, once):
        """Whether a message of the key ``once`` was said (None: no key); from now on
        it was."""
        if once is None:
            return False
        if once in self.said:
            return True
        self.said.add(once)
        return False

    def flush(self):
        if not self.parts:
            return
        data = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        write_all(self.fd, data)
        if self.terminal:
            self.line_open = not data.endswith(b"\n")


def write_all(fd, data):
    """Write all of ``data``.  A parent may have left the descriptor non-blocking (the
    flag belongs to the open file, shared with whoever else has it): then wait until
    there is room, rather than take "not now" (EAGAIN) for an error."""
    data = memoryview(data)
    while data:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            wait_for(fd, readable=False)


def write_message(data):
    """Bytes on standard error.  A failed write is ignored: a closed standard error (or
    its reader gone) must not stop the command, whose output and status matter more.
    While a command runs, SIGPIPE is ignored, so a write to a pipe with no reader fails
    (EPIPE) instead of killing it."""
    try:  # noqa: SIM105 - contextlib would cost start-up time
        write_all(2, data)
    except OSError:
        pass


def die_of_sigpipe():
    """The reader of standard output went away: die of SIGPIPE, quietly, as cat does
    (a shell sees status 141).  Where SIGPIPE is blocked, status 141 all the same."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    return 128 + signal.SIGPIPE



def _same_terminal(fd, other):
    """Whether ``fd`` and ``other`` are the same terminal."""
    try:
        return os.isatty(other) and os.fstat(fd).st_rdev == os.fstat(other).st_rdev
    except OSError:
        return False


class Progress:
    """The line on a terminal's standard error that says how far the reading is: shown
    after half a second, five times a second at most, erased at the end and before any
    message."""

    def __init__(self, prog, total, shown):
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
        write_message(f"\r{self.prog}: {self.files}/{self.total} files, "
                          f"{rate:.1f} MB/s\x1b[K".encode())
        self.visible = True

    def clear(self):
        if self.visible:
            write_message(b"\r\x1b[K")
            self.visible = False
