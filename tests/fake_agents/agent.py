"""A fake agent for the tests of 'ndagent run': prints a stream and then misbehaves as
told, as a real agent may.

    python agent.py STREAM [--lines N] [--then exit|hang] [--status N]
                           [--ignore-term] [--grandchild] [--escape] [--double-fork]
                           [--every SECONDS] [--blocks] [--written FILE] [--pids FILE]

It prints the first N lines of STREAM (all by default), one write each, --every SECONDS
apart, then exits with --status (--then exit, the default) or sleeps for an hour (--then
hang).  --ignore-term ignores SIGTERM, as a process it starts then does too; --escape
first starts a process in a session of its own that sleeps for an hour; --double-fork
starts one by a double fork (its parent exits at once: the process is no one's
descendant); --grandchild first starts a process that keeps its standard output open
and sleeps for an hour; --pids writes the process ids of all, one a line, to FILE.
--blocks holds its output in 4 KiB blocks when it is no terminal, as C's stdio does on
a pipe (on a terminal each line is written as it comes); --written appends each line
to FILE as it is written, with the time it was written (a JSON array [time, line]).
"""

import argparse
import json
import os
import signal
import sys
import time

HOUR = 3600


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("stream")
    parser.add_argument("--lines", type=int)
    parser.add_argument("--then", choices=("exit", "hang"), default="exit")
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--grandchild", action="store_true")
    parser.add_argument("--escape", action="store_true")
    parser.add_argument("--double-fork", action="store_true")
    parser.add_argument("--every", type=float, default=0.0)
    parser.add_argument("--blocks", action="store_true")
    parser.add_argument("--written")
    parser.add_argument("--pids")
    args = parser.parse_args()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pids = [os.getpid()]
    if args.grandchild:
        child = os.fork()
        if child == 0:
            time.sleep(HOUR)
            os._exit(0)
        pids.append(child)
    if args.escape:  # a daemon in a session of its own, its output elsewhere
        child = os.fork()
        if child == 0:
            os.setsid()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            time.sleep(HOUR)
            os._exit(0)
        pids.append(child)
    if args.double_fork:
        pids.append(double_fork())
    if args.pids:
        with open(args.pids, "w") as handle:
            handle.write("".join(f"{pid}\n" for pid in pids))
    with open(args.stream, "rb") as handle:
        lines = handle.readlines()
    write = Writer(args.blocks and not os.isatty(1), args.written)
    for index, line in enumerate(lines[:args.lines]):
        if index and args.every:
            time.sleep(args.every)
        write(line)
    write.flush()
    if args.then == "hang":
        time.sleep(HOUR)
    sys.exit(args.status)


def double_fork():
    """Start a process in a session of its own whose parent exits at once: its pid."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        grandchild = os.fork()
        if grandchild == 0:  # its output and errors elsewhere: it holds no pipe open
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            time.sleep(HOUR)
            os._exit(0)
        os.write(writer, b"%d" % grandchild)
        os._exit(0)
    os.close(writer)
    found = int(os.read(reader, 64))
    os.waitpid(child, 0)
    return found


class Writer:
    """Writes lines to standard output, each at once or in 4 KiB blocks (``blocks``),
    and each line with its time to the file ``written`` (None: none), SIGTERM held
    meanwhile so that the file tells exactly what was written."""

    def __init__(self, blocks, written):
        self.blocks = blocks
        self.held = b""
        self.written = written

    def __call__(self, line):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        if self.blocks:
            self.held += line
            while len(self.held) >= 4096:
                os.write(1, self.held[:4096])
                self.held = self.held[4096:]
        else:
            os.write(1, line)
        if self.written:
            with open(self.written, "a") as handle:
                handle.write(json.dumps([time.time(), line.decode()]) + "\n")
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})

    def flush(self):
        if self.held:
            os.write(1, self.held)
            self.held = b""


if __name__ == "__main__":
    main()
