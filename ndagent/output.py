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

# The marks of what only the order of the output knows, when the inputs are read in
# shares that each do not know what the ones before them wrote (a transcript's runs):
# the next number and the last number again; a text and its lean form (FULL, LEAN,
# END), of which the lean one is written once ``limit`` bytes are; and a text between
# ONCE_BEGIN and ONCE_END, of which only the first written is.  An output that is
# ``marked`` writes them as what they stand for; no other byte of its output is a NUL
# (stream text has its control characters spelt out).
NEXT_NUMBER = "\0+"
SAME_NUMBER = "\0="
FULL, LEAN, END = "\0[", "\0|", "\0]"
ONCE_BEGIN, ONCE_END = "\0<", "\0>"


class Output:
    """Standard output as bytes, written out at each ``flush`` (after each input batch)."""

    def __init__(self, fd=1):
        self.fd = fd
        self.parts = []
        self.size = 0
        self.marked = None  # a Marks when marks are written as what they stand for
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
        if self.marked is not None:
            data = self.marked.unmarked(data)
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
        if self.marked is not None:
            data = self.marked.unmarked(data)
        write_all(self.fd, data)
        if self.terminal:
            self.line_open = not data.endswith(b"\n")


class Marks:
    """What the marks of an output stand for, as its bytes are written in order: the
    number they have come to, whether ``limit`` bytes are written (past it, the lean
    form of each text that has one), whether a ONCE text was written."""

    def __init__(self, limit):
        self.limit = limit
        self.written = 0  # the bytes written, marks written as what they stand for
        self.number = 0
        self.once_written = False
        self.lean = False  # in a text that has a lean form: whether that one is written
        # Whether the bytes are passed over: in the form of a text not written, or in a
        # ONCE text written before.
        self.passing_form = self.passing_once = False
        self.cut = False  # whether the last bytes given end with a mark's NUL

    def unmarked(self, data):
        """``data`` with its marks written as what they stand for; a mark cut after its
        NUL is completed by the next bytes given."""
        data = bytes(data)
        if self.cut:
            data, self.cut = b"\0" + data, False
        if b"\0" not in data:
            if self.passing_form or self.passing_once:
                return b""
            self.written += len(data)
            return data
        head, *marked = data.split(b"\0")
        if not marked[-1]:  # the NUL ended the bytes: its tag comes next
            self.cut = True
            marked.pop()
        found = []
        self._add(found, head)
        for piece in marked:
            tag, rest = piece[:1], piece[1:]
            if tag == b"+" or tag == b"=":
                self.number += tag == b"+"
                rest = b"%d" % self.number + rest
            elif tag == b"[":
                self.lean = self.written >= self.limit
                self.passing_form = self.lean
            elif tag == b"|":
                self.passing_form = not self.lean
            elif tag == b"]":
                self.passing_form = False
            elif self.passing_form:
                pass
            elif tag == b"<":
                self.passing_once = self.once_written
                self.once_written = True
            elif tag == b">":
                self.passing_once = False
            else:
                rest = b"\0" + piece
            self._add(found, rest)
        return b"".join(found)

    def _add(self, found, data):
        if data and not (self.passing_form or self.passing_once):
            found.append(data)
            self.written += len(data)


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
