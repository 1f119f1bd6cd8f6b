"""What is known of an input before it is decoded, and how the inputs are shared out
among processes (``ndagent.engine`` runs the shares): a regular FILE's agent, told from
its head; a large FILE cut into parts where its format says nothing carries over from
one part to the next; and a list of FILEs, each read on its own, cut into contiguous
shares that shrink as they go.

The environment variable NDAGENT_PARTS sets the choice for tests: ``always`` cuts
every regular FILE wherever its format allows (each cut a part of its own, whatever
the FILE's size and the number of cores) and gives every FILE of a list a share of
its own; ``never`` reads everything in one process; unset (or any other value), the
sizes below and the cores decide.  The output is the same in every case.
"""

import os
import stat

import orjson

from ndagent.decoder import decode_line
from ndagent.formats import Detector, OtherAgents, get
from ndagent.sources import DOCUMENT_BYTES, STREAM_SUFFIXES, Loaded, Part, compression

# How much of a regular file is read ahead to tell its agent before it is decoded.
DETECT_HEAD = 1 << 20
# A regular FILE this large is read in parts, one per core, where its format allows.
SPLIT_FROM = 16 << 20
# How far past the point where a part would end its end is looked for (a line at which
# the stream may be cut), at the most; past that, the part runs on to the next point.
SPLIT_SEARCH = 4 << 20
# How many lines that hold the format's SPLIT_NEEDLE are tried there, at the most (each
# costs decoding two lines: a stream made to hold the needle everywhere costs little).
SPLIT_TRIES = 32
# The most parts one FILE is cut into when every place to cut is taken (NDAGENT_PARTS).
MOST_PARTS = 64
# Without -j, a list of FILEs is shared among processes when they add up to this many
# bytes: below, the processes would cost more than they save.
SHARE_FROM = 8 << 20
# A list of FILEs is shared out in shares that shrink as they go (guided scheduling):
# each holds a 2*processes-th of the bytes not shared yet, so that the last are small
# and the processes end about together, whatever their FILEs cost; but none smaller
# than a LAST_SHARES-th of the whole per process, nor LEAST_SHARE bytes (-j 1000 over
# small files forks no more processes than there is work for).
LAST_SHARES = 16
LEAST_SHARE = 1 << 20

# The process of a later part first counts the newlines before it (its line numbers are
# the FILE's), at about this share of what reading those bytes costs a verb.  Measured:
# from 0.04 for validate to 0.25 for Cursor's json; with a tenth, the parts of the heavy
# verbs end together as before, and those of the light ones 3-4% sooner.
COUNT_SHARE = 0.1

ENVIRONMENT = "NDAGENT_PARTS"


def forced():
    """``always``, ``never``, or None: what NDAGENT_PARTS says."""
    value = os.environ.get(ENVIRONMENT)
    return value if value in ("always", "never") else None


def cores():
    """How many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS
        return os.cpu_count() or 1


def expand(names):
    """The inputs named, each directory replaced by the stream files below it (their
    names end in STREAM_SUFFIXES; FIFOs, devices and sockets passed over), at every
    depth, sorted by name as 'rg --sort path' lists them: ``(inputs, the directories
    that hold none)``.  A directory that cannot be listed stays an input, so that
    reading it reports why; a link to a directory below one given is not followed (no
    loop)."""
    found, empty = [], []
    for name in names:
        if not (isinstance(name, (str, bytes, os.PathLike)) and name != "-"
                and os.path.isdir(name)):
            found.append(name)
            continue
        files = _stream_files(os.fspath(name))
        if not files:
            empty.append(name)
        found.extend(files)
    return found, empty


def _stream_files(top):
    """The stream files below the directory ``top``, in name order, depth first (a
    directory's files come where its name does); a directory that cannot be listed
    in their place."""
    found = []
    listings = [_listing(top, found)]  # an iterator over each directory being listed
    while listings:
        entry = next(listings[-1], None)
        if entry is None:
            listings.pop()
        elif entry.is_dir(follow_symlinks=False):
            listings.append(_listing(entry.path, found))
        elif entry.name.endswith(STREAM_SUFFIXES) and not _special(entry):
            found.append(entry.path)
    return found


def _special(entry):
    """Whether a directory's entry is a FIFO, a device or a socket (or a link to one),
    which a search of the directory passes over, as ripgrep's does: it would be read
    until a writer closes it, or for ever (/dev/zero).  One that cannot be looked at
    stays, for its reader to report."""
    try:
        mode = entry.stat().st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
        or stat.S_ISSOCK(mode)


def _listing(folder, found):
    """The entries of ``folder`` in name order; none when it cannot be listed, and then
    the folder itself among the ``found``, for its reader to report."""
    try:
        with os.scandir(folder) as entries:
            return iter(sorted(entries, key=lambda entry: entry.name))
    except OSError:
        found.append(folder)
        return iter(())


def size(name):
    """The size of a FILE in bytes (0 when not a regular file, or standard input)."""
    if name == "-" or not isinstance(name, (str, bytes, os.PathLike)):
        return 0
    try:
        found = os.stat(name)
    except OSError:
        return 0
    return found.st_size if stat.S_ISREG(found.st_mode) else 0


class Cutter:
    """Cuts FILEs into Parts for a command: ``agent`` (--agent, or None), ``checks``
    (whether its Readers check: some formats carry findings across runs then),
    ``max_line`` (a longer line is no place to cut), ``output`` ((device, inode) of the
    output file, which is read whole where it is read at all)."""

    def __init__(self, agent, checks, max_line, output):
        self.agent, self.checks, self.max_line, self.output = agent, checks, max_line, output

    def parts(self, name, count):
        """``name`` as up to ``count`` Parts (the FILE opened once, its descriptor in each:
        the caller closes it with ``close``), or None: when it is small, not a regular
        file, the output file, or a stream its format does not cut, or when no place to
        cut it is found."""
        mode = forced()
        if mode == "never" or (count < 2 and mode is None):
            return None
        # Told by its size, before it is opened: most FILEs of a long list are small.
        length = size(name)
        if length == 0 or (length < SPLIT_FROM and mode != "always"):
            return None
        try:
            fd = os.open(name, os.O_RDONLY)
        except OSError:
            return None
        try:
            cuts, module = self._cuts(name, fd, count, mode == "always")
        except OSError:
            cuts = None
        if not cuts:
            os.close(fd)
            return None
        ends = [*cuts, None]
        return [Part(name, fd, begin, end, module.name) for begin, end in zip([0, *cuts], ends)]

    @staticmethod
    def close(parts):
        os.close(parts[0].fd)

    def _cuts(self, name, fd, count, everywhere):
        found = os.fstat(fd)
        if (not stat.S_ISREG(found.st_mode)
                or (found.st_size < SPLIT_FROM and not everywhere)
                or (found.st_dev, found.st_ino) == self.output):
            return None, None
        decision = detect_head(name, Detector(self.agent))
        module = None if decision is None else decision[0]
        if module is None or module.splits_between is None:
            return None, None
        cuts = []
        if everywhere:
            while len(cuts) < MOST_PARTS - 1:
                cut = self._cut(fd, cuts[-1] + 1 if cuts else 1, module)
                if cut is None:
                    break
                cuts.append(cut)
            return cuts, module
        for index in range(1, count):
            begin = max(_part_begin(found.st_size, index, count), cuts[-1] if cuts else 0)
            cut = self._cut(fd, begin, module)
            if cut is not None and (not cuts or cut > cuts[-1]):
                cuts.append(cut)
        return cuts, module

    def _cut(self, fd, begin, module):
        """The offset of the first line at or after ``begin`` (within SPLIT_SEARCH bytes)
        before which ``module``'s stream may be cut, or None.  Both lines beside the cut
        are decoded as the decoder decodes them (a line it would not take whole for an
        object, too long or not plain JSON, is no place to cut), and neither may be
        another agent's (the frame would pass it over)."""
        max_line = self.max_line
        base = max(begin - 1, 0)  # from the newline before ``begin``: a line there is whole
        window = os.pread(fd, SPLIT_SEARCH, base)
        others = OtherAgents.of(module)
        found = window.find(module.split_needle)
        tries = 0
        while found >= 0 and tries < SPLIT_TRIES:
            start = window.rfind(b"\n", 0, found) + 1
            end = window.find(b"\n", found)
            if end < 0:
                return None
            if start and end - start < max_line:
                tries += 1
                before = window.rfind(b"\n", 0, start - 1) + 1
                # The line before, unless it is too long (or begins before the window:
                # read from the file, at most once a window).
                before = (window[before:start - 1] if before
                          else _line_before(fd, base + start - 1, max_line))
                if self._between(before, window[start:end], module, others):
                    return base + start
            found = window.find(module.split_needle, end)
        return None

    def _between(self, before, after, module, others):
        """Whether the lines ``before`` and ``after`` decode to objects between which
        ``module``'s stream may be cut, neither of them another agent's."""
        try:
            first = None if before is None or len(before) >= self.max_line \
                else orjson.loads(before)
            second = orjson.loads(after)
        except orjson.JSONDecodeError:
            return False
        return (first.__class__ is dict and second.__class__ is dict
                and module.splits_between(first, second, self.checks)
                and not any(decides(value) for value in (first, second)
                            for decides, _ in others.tests(_string(value.get("type")))))


def _part_begin(size, index, count):
    """Where part ``index`` of ``count`` would begin for the parts to take about as long
    each, each costing the reading of its bytes and COUNT_SHARE of the bytes before it:
    the earlier parts are the larger."""
    kept = 1 - COUNT_SHARE
    return round(size * (1 - kept ** index) / (1 - kept ** count))


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


def share_files(names, jobs):
    """A list of FILEs as ``(processes, groups)``: the groups in order, each ``(here,
    names)``: one FILE for this process (standard input, a pipe, a device), or a
    contiguous share of regular FILEs (or FILEs that cannot be read: a share's reader
    says so), each of about a 2*processes-th of the bytes not shared before it
    (``_share_ends``), for ``processes`` processes at a time.  ``jobs``:
    -j, or None for one per core from SHARE_FROM bytes.  With one process, one group
    of all the FILEs, here."""
    mode = forced()
    sizes = [_shared_size(name) for name in names]
    total = sum(found for found in sizes if found is not None)
    shared = len(names) - sizes.count(None)
    if mode == "always":
        processes = max(jobs or 2, 2)
    elif mode == "never":
        processes = 1
    elif jobs is None:
        processes = cores() if total >= SHARE_FROM else 1
    else:
        processes = min(jobs, max(1, total // LEAST_SHARE), shared)
    if processes <= 1 or shared == 0:
        return 1, [(True, list(names))]
    ends = _share_ends(total, processes)
    groups = []
    last = None  # the number of the share in hand
    number = 0  # the share where the middle of the FILE in hand falls, by ``ends``
    filled = 0  # the bytes of the regular FILEs before the one in hand
    for index, (name, found) in enumerate(zip(names, sizes)):
        if found is None:
            groups.append((True, [name]))
            last = None
            continue
        if mode == "always":
            number = index
        else:
            while number < len(ends) - 1 and filled + found / 2 >= ends[number]:
                number += 1
        if number == last:
            groups[-1][1].append(name)
        else:
            groups.append((False, [name]))
            last = number
        filled += found
    return processes, groups


def _share_ends(total, processes):
    """Where each share of ``total`` bytes ends, for ``processes`` at a time, in order."""
    least = max(LEAST_SHARE, total / (processes * LAST_SHARES))
    ends, taken = [], 0
    while taken < total:
        taken += max((total - taken) / (2 * processes), least)
        ends.append(taken)
    return ends


def _shared_size(name):
    """The size of a FILE that may be read in a share (0: not a regular file), or None
    for one read in this process: standard input, or not a regular file (a pipe, a
    device; a directory is reported by its reader wherever it is, a FILE that cannot
    be read too)."""
    if name == "-" or not isinstance(name, (str, bytes, os.PathLike)):
        return None
    try:
        found = os.stat(name)
    except OSError:
        return 0
    if stat.S_ISREG(found.st_mode):
        return found.st_size
    return 0 if stat.S_ISDIR(found.st_mode) else None


def read_document(name):
    """The bytes of a regular FILE read whole as one JSON document, or None when it is
    larger than DOCUMENT_BYTES."""
    with open(name, "rb") as handle:
        text = handle.read(DOCUMENT_BYTES + 1)
    return None if len(text) > DOCUMENT_BYTES else text


def detect_head(name, detector):
    """The decision on a regular file's agent from its first DETECT_HEAD bytes, as
    ``detector`` makes it (on a part of one, the agent the part carries), or None (not
    a regular file, compressed, unreadable, or undecided within them: it is decided as
    it is read)."""
    return detect_file(name, detector)[0]


def detect_file(name, detector):
    """``(detect_head's decision, the input to read)``: the FILE itself, or, when its
    head was the whole of it and decided its agent, a ``Loaded`` of its bytes (a
    small FILE, such as a session file, is then opened and read once)."""
    if name.__class__ is Part:  # a part of a file whose agent was told from its head
        return (get(name.about), None, None), name
    if not isinstance(name, (str, bytes, os.PathLike)) or name == "-":
        return None, name
    try:
        # The descriptor itself: a file object costs as much again (a stat of its own),
        # and a session store is tens of thousands of small FILEs.
        fd = os.open(name, os.O_RDONLY)
    except OSError:
        return None, name
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            return None, name
        # No more than the file holds (a buffer of DETECT_HEAD costs more than reading a
        # small file), and a byte more to see whether it has grown since.
        limit = min(DETECT_HEAD, found.st_size + 1)
        head = os.read(fd, limit)
        whole = len(head) < limit
    except OSError:
        return None, name
    finally:
        os.close(fd)
    if compression(head) is not None:
        return None, name
    decision = _decide(head, whole, detector)
    return decision, Loaded(name, head) if whole and decision is not None else name


def _decide(head, whole, detector):
    """The decision on the agent of a FILE that begins with ``head`` (all of it:
    ``whole``), or None."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    # Not the last piece: a line cut by the head, or the file's last line, without a
    # newline (after a last newline, the empty piece is taken as split takes it), which
    # counts only where it holds an object (a file of one line with no newline).
    number = 0
    for number, line in enumerate(_pieces(head, whole and head.endswith(b"\n")), 1):
        data = _object(line)
        if data.__class__ is not dict:
            detector.other_line(line, number)
            continue
        found = detector.add(data, number)
        if found is not None:
            return found
    if not whole:
        return None
    if not head.endswith(b"\n"):
        data = _object(head[head.rfind(b"\n") + 1:])
        if data.__class__ is dict:
            found = detector.add(data, number + 1)
            if found is not None:
                return found
    return detector.end()


def _object(line):
    """What a line decodes to, as the decoder reads it (a lone surrogate, a number orjson
    cannot hold), or None where it cannot hold an object."""
    try:
        return orjson.loads(line) if line.rstrip().endswith(b"}") else None
    except orjson.JSONDecodeError:
        return decode_line(line)


def _pieces(data, with_last):
    """The pieces of ``data`` between newlines, one at a time (the first lines are
    usually enough); the last piece only ``with_last``."""
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            if with_last:
                yield data[start:]
            return
        yield data[start:end]
        start = end + 1
