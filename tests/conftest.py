"""Shared test helpers: fixtures on disk, the installed commands, in-process runs."""

import os
import signal
import subprocess
import sys
import tempfile
from importlib import import_module
from pathlib import Path
from unittest import mock

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

# The tests of signals send SIGINT and SIGQUIT to the commands they start, which
# inherit what they do here: a test run started in the background (``make test &``)
# has both ignored, and a command keeps a signal ignored that it was started with.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN:
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
BIN = Path(sys.executable).parent


def examples(quick, at_length=None):
    """How many examples a property runs: ``quick`` in 'make test', where
    NDAGENT_EXAMPLES is unset (a few seconds' worth); with it set ('make fuzz', a run at
    length), ``at_length(NDAGENT_EXAMPLES)``, or ``at_length`` itself when a number, or
    NDAGENT_EXAMPLES itself when None."""
    value = os.environ.get("NDAGENT_EXAMPLES")
    if value is None:
        return quick
    if at_length is None:
        return int(value)
    return at_length(int(value)) if callable(at_length) else at_length


AT_LENGTH = "NDAGENT_EXAMPLES" in os.environ


def pytest_configure(config):
    config.addinivalue_line("markers", "at_length: a test whose input is larger under "
                            "'make fuzz' (NDAGENT_EXAMPLES set), which runs these tests")


def at_length(quick, full):
    """A test's input size: ``quick`` in 'make test', ``full`` in a run at length
    ('make fuzz', NDAGENT_EXAMPLES set), where the tests marked at_length run."""
    return full if AT_LENGTH else quick


def full_size(test):
    """Mark a test too long for 'make test' (a memory bound that needs its full size):
    'make fuzz' runs it, and 'make test' says it skips it; a quicker test beside it keeps
    the proof there."""
    return pytest.mark.at_length(pytest.mark.skipif(
        not AT_LENGTH, reason="full size: 'make fuzz' runs it")(test))


def fixture(name):
    return FIXTURES / name


def command(verb):
    """Path of the installed ``ndagent-VERB`` executable (or ``ndagent``)."""
    path = BIN / (f"ndagent-{verb}" if verb else "ndagent")
    assert path.exists(), f"{path} is not installed: run 'make test'"
    return str(path)


def run(verb, *args, input=b"", **kwargs):
    """Run an installed command through real pipes; the CompletedProcess."""
    return subprocess.run([command(verb), *map(str, args)], input=input,
                          capture_output=True, timeout=60, **kwargs)


def on_a_terminal(verb, *args, env=None, status=0):
    """Standard output of ``ndagent-VERB ARGS`` run with a terminal (a pty) as standard
    output, which must end with ``status``; newlines as the program wrote them."""
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen([command(verb), *map(str, args)], stdout=follower,
                               stderr=subprocess.DEVNULL, env=env)
    os.close(follower)
    seen = read_terminal(leader)
    assert process.wait(timeout=20) == status
    return seen


def read_terminal(leader):
    """All that a command wrote to the terminal (pty) whose ``leader`` is given, until it
    exits, which closes the leader; newlines as the program wrote them."""
    seen = b""
    try:
        while True:
            chunk = os.read(leader, 65536)
            if not chunk:
                break
            seen += chunk
    except OSError:  # EIO: the command has exited, and the terminal with it
        pass
    finally:
        os.close(leader)
    return seen.replace(b"\r\n", b"\n")


def peak_rss(argv, stdin):
    """(exit status, peak RSS in bytes) of the command ``argv`` reading the file object
    ``stdin``, its output thrown away.  It is measured in a fresh Python process whose
    one child the command is: getrusage(RUSAGE_CHILDREN) there counts the command alone,
    not this process (a child's ru_maxrss starts from its parent's size at fork)."""
    script = ("import resource, subprocess, sys\n"
              "status = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL,\n"
              "                         stderr=subprocess.DEVNULL)\n"
              "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
              "print(status, peak if sys.platform == 'darwin' else peak * 1024)\n")
    out = subprocess.run([sys.executable, "-c", script, *map(str, argv)], stdin=stdin,
                         stdout=subprocess.PIPE, timeout=120, check=True).stdout
    status, peak = map(int, out.split())
    return status, peak


def corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(CORPUS.glob("*.jsonl"))


needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason="../shared/corpus/real is not beside this clone")


@pytest.fixture
def call(capfdbinary):
    """Run a command's ``main`` in-process: (status, stdout bytes, stderr text)."""

    def call(main, *argv):
        status = main([str(arg) for arg in argv])
        out, err = capfdbinary.readouterr()
        return status, out, err.decode()

    return call


@pytest.fixture
def write(tmp_path):
    """Write bytes (or lines) to a file under tmp_path; its path."""
    counter = iter(range(10**6))

    def write(content, name=None):
        path = tmp_path / (name or f"input{next(counter)}.ndjson")
        if isinstance(content, (list, tuple)):
            content = b"".join(line if line.endswith(b"\n") else line + b"\n"
                               for line in content)
        path.write_bytes(content)
        return path

    return write


class InProcess:
    """Runs a command's ``main`` in this process with standard input, output and error
    on temporary files, as a subprocess would have them, at a fraction of the cost: for
    property tests and fuzzing, which run thousands of inputs."""

    runs = 0  # command runs of every instance, for 'make fuzz'

    def __init__(self):
        self.files = [tempfile.TemporaryFile(buffering=0)  # noqa: SIM115 - for its life
                      for _ in range(3)]

    def __call__(self, verb, data, *argv):
        """(status, stdout bytes, stderr bytes) of ``ndagent-VERB ARGV`` on ``data``."""
        main = import_module(f"ndagent.cmd_{verb}").main
        for file in self.files:
            file.seek(0)
            file.truncate()
        self.files[0].write(data)
        self.files[0].seek(0)
        saved = [os.dup(fd) for fd in (0, 1, 2)]
        try:
            for fd, file in enumerate(self.files):
                os.dup2(file.fileno(), fd)
            status = main([str(arg) for arg in argv])
        except SystemExit as exit:  # a usage error, --help
            status = exit.code
        finally:
            for fd, copy in enumerate(saved):
                os.dup2(copy, fd)
                os.close(copy)
        InProcess.runs += 1
        out, err = (self._read(file) for file in self.files[1:])
        return status, out, err

    @staticmethod
    def _read(file):
        file.seek(0)
        return file.read()


def with_parts(mode, verb, stdin, *arguments, runner=None):
    """What ``verb`` prints in-process (``InProcess``) with NDAGENT_PARTS set to
    ``mode``: "never", one process; "always", every input cut wherever its format
    allows and every FILE of a list a share of its own, each in a process.

    Standard input's time origin is the time it is read, which two runs never share:
    when it is read ("-", or no FILE given as a path), SOURCE_DATE_EPOCH fixes it; a
    FILE keeps its modification time."""
    changes = {"NDAGENT_PARTS": mode}
    reads_stdin = "-" in arguments or not any(isinstance(argument, os.PathLike)
                                              for argument in arguments)
    if reads_stdin and "SOURCE_DATE_EPOCH" not in os.environ:
        changes["SOURCE_DATE_EPOCH"] = "1780308000"
    with mock.patch.dict(os.environ, changes):
        return (runner or _RUNNER)(verb, stdin, *arguments)


_RUNNER = InProcess()


def model_events(module, source, checks=False, needs=None, name=None):
    """The model events a format module's Reader makes of an input (a path, or bytes),
    fed as the frame feeds it: every line decoded, or with ``needs`` only the lines its
    markers select, the others handed over as Skipped, and the Reader told ``needs``."""
    import io

    from ndagent.decoder import Event, Skipped, batches
    from ndagent.selection import Selection

    if isinstance(source, bytes):
        source = io.BytesIO(source)
        source.name = name or "input"
    else:
        source = str(source)
    reader = module.Reader(name or str(source) if isinstance(source, str) else source.name,
                           checks, needs)
    markers = None if needs is None else module.markers(needs)
    want = None if markers is None else Selection(markers)
    events = []

    def replay(held, read):  # the frame's, but for another agent's objects
        nonlocal events
        for item in held:
            if item.__class__ is Event:
                events += read(item)
                continue
            for number, value in item.lines():
                if value.__class__ is dict:
                    events += read(Event(item.source, number, value))

    reader.replay = replay
    for batch in batches([source], want=want):
        for item in batch:
            if item.__class__ is Event:
                events += reader.event(item)
            elif item.__class__ is Skipped:
                events += reader.skipped(item)
    return events + reader.finish()


def lines_of(name):
    return fixture(name).read_bytes().splitlines(keepends=True)


def tool_event(subtype, call_id, kind, args=None, outcome=None, result=None, **fields):
    """One ``tool_call`` event line (bytes): ``kind`` as in ``readToolCall``; ``args``
    and the ``outcome`` (with its ``result`` object) only when given; ``fields`` are
    extra top-level fields such as ``timestamp_ms``."""
    import orjson

    body = {} if args is None else {"args": args}
    if outcome is not None:
        body["result"] = {outcome: {} if result is None else result}
    data = {"type": "tool_call", "subtype": subtype, "call_id": call_id,
            "tool_call": {kind: body}, "session_id": "s-1", **fields}
    return orjson.dumps(data) + b"\n"


def run_of(*events):
    """Lines of one whole run (init, the events, a successful result)."""
    return [b'{"type":"system","subtype":"init","session_id":"s-1"}\n', *events,
            b'{"type":"result","subtype":"success","is_error":false,"result":"",'
            b'"session_id":"s-1"}\n']


os.environ.pop("NO_COLOR", None)

