"""The processes an agent started, for ndagent run: which of them are left running once
its process group is ended, found with what Linux and macOS both offer (``ps``; no
/proc), and how they are ended and collected.

A process is the agent's when it is in the agent's process group or session (the agent
leads both), or descends from the agent.  A process that calls setsid() leaves both,
and once its parent exits nothing ties it to the agent any more: on Linux it then comes
back to ndagent (ndagent is a subreaper, ``adopt_orphans``), so every descendant is
found; elsewhere only those seen while their parents were alive are (``Agent`` in
ndagent.supervise looks at the agent's descendants every ``LOOK_EVERY`` seconds, and
once before it ends the group): a double fork between two looks is not found."""

import os
import signal
import subprocess
import sys
import time

# How often the agent's descendants are listed while it runs, where they do not come back
# to ndagent when their parent dies (no subreaper: macOS).
LOOK_EVERY = 1.0
# How often the processes being ended are looked at.
POLL = 0.05
# The most descendants remembered (a fork bomb is not followed for ever).
MAX_REMEMBERED = 4096

# Linux's prctl option that makes the processes a process leaves behind (a daemon the
# agent started with setsid) this one's children, so that they can be ended with it.
_PR_SET_CHILD_SUBREAPER = 36

# The columns asked of ps, and those of a ps that has no session id (macOS's names
# another thing 'sess', and has no 'sid'); 'command' last, as it holds spaces.
_COLUMNS = ("pid", "ppid", "pgid", "sid", "stat", "command")
_WITHOUT_SID = ("pid", "ppid", "pgid", "stat", "command")
_columns = [_COLUMNS]  # what this system's ps was found to take


class Process:
    """One line of ``ps``: its ids (``sid`` None where ps does not tell it), its state
    (``Z``: a zombie, which has ended) and its command line (untrusted text)."""

    __slots__ = ("pid", "ppid", "pgid", "sid", "state", "command")

    def __init__(self, pid, ppid, pgid, sid, state, command):
        self.pid, self.ppid, self.pgid, self.sid = pid, ppid, pgid, sid
        self.state, self.command = state, command

    @property
    def ended(self):
        return self.state.startswith("Z")


def listing():
    """Every process ps shows, or None when ps cannot tell: it is missing, fails, or
    sees other process ids than this one (in a container's own namespace, with the
    host's /proc), as its own entry shows."""
    found = _ps(_columns[0])
    if found is False and _columns[0] is _COLUMNS:
        _columns[0] = _WITHOUT_SID
        found = _ps(_WITHOUT_SID)
    return None if found is False else found


def _ps(columns):
    """The listing of ``ps`` with ``columns``; False when ps refuses them (a keyword it
    does not know), None when it cannot tell."""
    spec = ",".join(f"{name}=" for name in columns)
    try:
        lister = subprocess.Popen(["ps", "-A", "-ww", "-o", spec], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        text = lister.communicate(timeout=10)[0]
    except (OSError, subprocess.SubprocessError):
        return None
    if lister.returncode != 0:
        return False
    found = []
    numbers = len(columns) - 2
    for line in text.decode("utf-8", "replace").splitlines():
        fields = line.split(None, len(columns) - 1)
        if len(fields) < len(columns) - 1 or not all(map(str.isdigit, fields[:numbers])):
            continue
        ids = [int(field) for field in fields[:numbers]]
        if "sid" not in columns:
            ids.append(None)
        command = fields[numbers + 1] if len(fields) == len(columns) else ""
        found.append(Process(*ids, fields[numbers], command))
    mine = os.getpid()
    if not any(each.pid == lister.pid and each.ppid == mine for each in found):
        return None
    return [each for each in found if each.pid != lister.pid]


def descendants(found, roots):
    """The pids of ``found`` (a listing) that descend from ``roots`` (pids), these
    included where they are in it."""
    children = {}
    for each in found:
        children.setdefault(each.ppid, []).append(each.pid)
    seen = set()
    waiting = list(roots)
    while waiting:
        pid = waiting.pop()
        if pid in seen:
            continue
        seen.add(pid)
        waiting.extend(children.get(pid, ()))
    listed = {each.pid for each in found}
    return seen & listed


def adopt_orphans(adopt=True):
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


def reap(kept, group):
    """Collect the children that have ended, but those ``kept`` (the agent, whose status
    Popen takes, and the children this process had before it): orphans that came back
    to this process would otherwise be zombies that keep their group alive.  waitid
    tells one ended child at a time, and one that is kept stops the search: the
    agent's ``group`` is searched again on its own, past a kept child of another
    group."""
    for kind, among in ((os.P_ALL, 0), (os.P_PGID, group)):
        while True:
            try:
                found = os.waitid(kind, among, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                break
            if found is None or found.si_pid in kept:
                break
            os.waitpid(found.si_pid, 0)


def end(pids, grace, collect):
    """End the processes ``pids``: SIGTERM, then SIGKILL ``grace`` later to those still
    running; ``collect`` is called as they are waited for (it collects those that are
    this process's children, as zombies they would seem alive)."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:  # noqa: SIM105 - contextlib would cost start-up time
                os.kill(pid, signum)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        while pids and time.monotonic() < deadline:
            collect()
            pids = [pid for pid in pids if alive(pid)]
            if pids:
                time.sleep(POLL)
    collect()


def alive(pid):
    """Whether ``pid`` is a process (a zombie of another parent's counts: only ps tells
    it apart, and ``end`` collects this one's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
