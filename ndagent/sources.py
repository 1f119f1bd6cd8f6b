"""Where an input's bytes come from: a path, standard input, a file object, or a Part
of a regular file, read decompressed where it is gzip, bzip2 or xz (told by its first
bytes), with the waits of a descriptor left non-blocking, and a pipe widened so that a
reader takes whole chunks."""

import os
import stat
from importlib import import_module

STDIN = "<stdin>"
# How much is read at once.
CHUNK_SIZE = 1 << 18
# How much is read at once to count the lines before a Part, into one buffer (a new
# bytes object each time would cost its pages as much again as the count).
COUNT_BLOCK = 1 << 22
# Lines longer than this on average are counted by finding each newline (memchr, past
# the bytes between) rather than by looking at every byte: three times as fast on
# lines of 3 KB, twice as slow on lines of 200 bytes.
LONG_LINES = 1 << 10
# Reading into a buffer: on every Linux and BSD, and macOS from 11.
_PREADV = getattr(os, "preadv", None)


class Part:
    """A part of a regular file, read as an input of its own: the lines from the byte
    ``begin`` (the start of a line) to ``end`` (just after a newline; None: to the end
    of the file) of the open file ``fd`` (read by offset: the file is opened once, by
    whoever cut it, so that a file replaced meanwhile is not read in pieces of two),
    numbered as in the whole file and named by its ``path``, so that what is said of
    them is what reading the whole file says.  ``about``: what the caller knows of the
    part, carried along (this module does not look at it)."""

    __slots__ = ("path", "fd", "begin", "end", "about")

    def __init__(self, path, fd, begin, end=None, about=None):
        self.path, self.fd, self.begin, self.end, self.about = path, fd, begin, end, about

    def __repr__(self):
        return f"Part({self.path!r}, {self.begin}, {self.end})"


class Loaded:
    """A regular file read whole already (its agent was told from its bytes), read
    again from ``data`` rather than opened a second time, and named by its ``path``."""

    __slots__ = ("path", "data")

    def __init__(self, path, data):
        self.path, self.data = path, data

    def __repr__(self):
        return f"Loaded({self.path!r}, {len(self.data)} bytes)"


def lines_before(fd, offset):
    """How many newlines the file ``fd`` holds before ``offset``."""
    block = bytearray(min(COUNT_BLOCK, offset))
    count = position = 0
    long_lines = False  # as the block before was
    while position < offset:
        length = min(_read_into(fd, block, position), offset - position)
        if length <= 0:
            break
        found = _newlines_apart(block, length) if long_lines else block.count(b"\n", 0, length)
        long_lines = found * LONG_LINES < length
        count += found
        position += length
    return count


def _read_into(fd, block, position):
    """Read into ``block`` from ``position`` of ``fd``: how many bytes came."""
    if _PREADV is not None:
        return _PREADV(fd, [block], position)
    data = os.pread(fd, len(block), position)  # a macOS before 11
    block[:len(data)] = data
    return len(data)


def _newlines_apart(block, length):
    """The newlines in ``block[:length]``, found one by one."""
    found, find = 0, block.find
    at = find(b"\n", 0, length)
    while at >= 0:
        found += 1
        at = find(b"\n", at + 1, length)
    return found


def source_name(name):
    """How messages name an input: its path, ``<stdin>``, or a file object's name."""
    if name == "-":
        return STDIN
    if name.__class__ is Part or name.__class__ is Loaded:
        name = name.path
    if isinstance(name, (str, bytes, os.PathLike)):
        return os.fsdecode(name)
    return str(getattr(name, "name", None) or "<stream>")


def open_input(name):
    """A reader for one input: ``(read function, the file opened, to close, or None)``.

    A path or standard input compressed with gzip, bzip2 or xz is read decompressed
    (``_telling``).  A regular file is told by its head before anything is read: a
    compressed one is handed back with no file (closed at its end).  A Part is read
    from its file's descriptor, which its reader opened and closes."""
    if name == "-":
        return _telling(_reader(0)), None
    if name.__class__ is Part:
        end = _NO_END if name.end is None else name.end
        return _Range(name.fd, name.begin, end).read, None
    if name.__class__ is Loaded:
        return _Slices(name.data).read, None
    if isinstance(name, (str, bytes, os.PathLike)):
        handle = open(name, "rb", buffering=0)  # noqa: SIM115 - closed by the caller
        fd = handle.fileno()
        try:
            head = os.pread(fd, _MAGIC_SIZE, 0)
        except OSError:  # not a regular file: told as it is read
            return _telling(_reader(fd)), handle
        if compression(head) is None:
            return _reader(fd), handle
        return _telling(_reader(fd), handle.close), None
    return getattr(name, "read1", None) or name.read, None


# The most bytes of an input read whole as one JSON document (a session file that is
# one pretty-printed document: docs/agents.md#session-files).
DOCUMENT_BYTES = 256 << 20

# The compressed formats read transparently: (magic bytes, standard module, name).
_COMPRESSED = ((b"\x1f\x8b", "gzip", "gzip"), (b"BZh", "bz2", "bzip2"),
               (b"\xfd7zXZ\x00", "lzma", "xz"))
_MAGIC_SIZE = max(len(magic) for magic, _, _ in _COMPRESSED)

# The names of the files a directory given as input holds streams in: what agents'
# streams are saved as, and the same compressed as above (a file is still told
# compressed by its bytes, never by its name).
STREAM_NAMES, COMPRESSED_NAMES = (".ndjson", ".jsonl", ".json"), (".gz", ".bz2", ".xz")
STREAM_SUFFIXES = tuple(f"{kind}{compressed}" for kind in STREAM_NAMES
                        for compressed in ("", *COMPRESSED_NAMES))
STREAM_FILES = (f"*{', *'.join(STREAM_NAMES)}, maybe ending {', '.join(COMPRESSED_NAMES[:-1])} "
                f"or {COMPRESSED_NAMES[-1]}")


def compression(head):
    """(module, name) of the compressed format that ``head`` begins, or None."""
    for magic, module, label in _COMPRESSED:
        if head.startswith(magic):
            return module, label
    return None


def _telling(read, close=None):
    """``read`` for an input that may be compressed: its first call tells by the first
    bytes, reading more only while they may still begin a magic (a live pipe's first
    line is not held back); a compressed input is then decompressed (its module
    imported only then), and ``close`` called at its end; any other is read as it is."""

    def first_call(size):
        nonlocal current
        first = read(size)
        while first and any(len(first) < len(magic) and magic.startswith(first)
                            for magic, _, _ in _COMPRESSED):
            more = read(size)
            if not more:
                break
            first += more
        found = compression(first)
        if found is None:
            current = read
            return first
        current = _decompressing(*found, _Held(first, read), close)
        return current(size)

    current = first_call
    return lambda size: current(size)


def _decompressing(module, label, source, close):
    """The read function of ``source`` decompressed by the standard ``module``: damaged
    data is an OSError (a message, as any read error), and ``close`` is called at the
    end or at the error."""
    stream = import_module(module).open(source)
    errors = (EOFError, OSError)  # cut short; not the format, or damaged (bz2, gzip)
    if module == "gzip":
        errors += (import_module("zlib").error,)
    elif module == "lzma":
        errors += (import_module("lzma").LZMAError,)

    def read(size):
        try:
            data = stream.read1(size)
        except errors as error:
            done()
            raise OSError(f"{label}: {getattr(error, 'strerror', None) or error}") from None
        if not data:
            done()
        return data

    def done():
        stream.close()
        if close is not None:
            close()

    return read


class _Held:
    """An input of which ``first`` was read already, as a file for a decompressor."""

    def __init__(self, first, read):
        self.first = first
        self.rest = read

    def read(self, size=-1):
        if not self.first:
            return self.rest(size if size >= 0 else CHUNK_SIZE)
        if size < 0:
            size = len(self.first)
        data, self.first = self.first[:size], self.first[size:]
        return data


def _reader(fd):
    """``os.read`` of ``fd``.  A parent may have left standard input non-blocking (the
    flag belongs to the open file, shared with whoever else has it, and with
    /dev/stdin on macOS): then wait for data, rather than take "none yet" (EAGAIN) for
    an error."""
    widen_pipe(fd)

    def read(size):
        while True:
            try:
                return os.read(fd, size)
            except BlockingIOError:
                wait_for(fd, readable=True)

    return read


# The end of a _Range that reads to the end of its file, wherever that is by then.
_NO_END = 1 << 62


class _Range:
    """Reads the bytes of ``fd`` from ``position`` to ``end``, which may be moved
    nearer while reading."""

    def __init__(self, fd, position, end):
        self.fd, self.position, self.end = fd, position, end

    def read(self, size):
        if self.position >= self.end:
            return b""
        data = os.pread(self.fd, min(size, self.end - self.position), self.position)
        self.position += len(data)
        return data


class _Slices:
    """Reads ``data`` in order, a slice at a time (all of it at once when it fits)."""

    def __init__(self, data):
        self.data, self.position = data, 0

    def read(self, size):
        data, position = self.data, self.position
        self.position = position + size
        if position == 0 and size >= len(data):
            return data
        return data[position:position + size]


# How much a pipe read from may hold: as much as a chunk, so that a writer ahead of us
# gives whole chunks (a read gives at most what the pipe holds: 64 KiB by default on
# Linux), and each costs the per-chunk work once.
PIPE_SIZE = 1 << 20


def widen_pipe(fd):
    """Make the pipe ``fd`` hold ``PIPE_SIZE`` bytes, where the system allows it (Linux's
    F_SETPIPE_SZ, up to its pipe-max-size); elsewhere, and for other files, nothing."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
        import fcntl  # lazy: only a pipe needs it

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (OSError, AttributeError):  # not Linux (no F_SETPIPE_SZ), not allowed
        pass


def wait_for(fd, readable):
    """Wait until ``fd`` (left non-blocking by whoever shares it) can be read, or
    written to."""
    import select  # lazy: only a descriptor left non-blocking ever waits

    if readable:
        select.select([fd], [], [])
    else:
        select.select([], [fd], [])
