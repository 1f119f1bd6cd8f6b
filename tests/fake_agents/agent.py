"""A fake agent for the tests of 'ndagent run': prints a stream and then misbehaves as
told, as a real agent may.

    python agent.py STREAM [--lines N] [--then exit|hang] [--status N]
                           [--ignore-term] [--grandchild] [--escape] [--pids FILE]

It prints the first N lines of STREAM (all by default), one write each, then exits with
--status (--then exit, the default) or sleeps for an hour (--then hang).
--ignore-term ignores SIGTERM, as a process it starts then does too; --escape first
starts a process in a session of its own that sleeps for an hour; --grandchild first
starts a process that keeps its standard output open and sleeps for an hour; --pids
writes the process ids of both, one a line, to FILE.
"""

import argparse
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
    if args.pids:
        with open(args.pids, "w") as handle:
            handle.write("".join(f"{pid}\n" for pid in pids))
    with open(args.stream, "rb") as handle:
        lines = handle.readlines()
    for line in lines[:args.lines]:
        os.write(1, line)
    if args.then == "hang":
        time.sleep(HOUR)
    sys.exit(args.status)


if __name__ == "__main__":
    main()
