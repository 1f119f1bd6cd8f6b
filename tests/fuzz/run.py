"""The long fuzz run ('make fuzz'): the property tests (test_property_*) of the test
modules below, with many examples each, over every command, in-process.  Prints how
many inputs each property ran through the commands; runs every property, and exits 1
when one failed.

Each property runs in rounds of a few thousand examples: within one run Hypothesis
keeps a record of every example it has tried, so one long run would grow without bound.
"""

import argparse
import os
import resource
import subprocess
import sys
import time
import traceback
from importlib import import_module
from pathlib import Path

# The test modules whose properties run here, each called with no argument (no pytest
# fixture), in this order.
MODULES = ("test_robustness", "test_prefilter", "test_decoder", "test_inputs", "test_totals",
           "test_validate_quick", "test_split", "test_cut_runs", "test_hostile_fields",
           "test_transcript", "test_terminal", "test_format_claude",
           "test_ci_outputs")


def fuzzed():
    """[(name, property)] of MODULES, in order."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    found = []
    for module in MODULES:
        found += [(name, test) for name, test in vars(import_module(module)).items()
                  if name.startswith("test_property_")]
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=25_000,
                        help="examples per property (default: %(default)s)")
    parser.add_argument("--round", type=int, default=2_500,
                        help="examples per Hypothesis run (default: %(default)s)")
    parser.add_argument("-k", dest="only", default="",
                        help="only the properties whose name holds this text")
    parser.add_argument("-j", "--jobs", type=int, default=1,
                        help="properties run at once, each in a process of its own "
                             "(default: %(default)s)")
    parser.add_argument("--name", help=argparse.SUPPRESS)  # the one property a job runs
    args = parser.parse_args()
    os.environ["NDAGENT_EXAMPLES"] = str(args.round)
    properties = [(name, test) for name, test in fuzzed()
                  if args.only in name and args.name in (None, name)]
    if args.jobs > 1:
        return in_jobs([name for name, _ in properties], args)
    import conftest

    runner = conftest.InProcess
    rounds = -(-args.examples // args.round)
    failed = False
    for name, test in properties:
        before, started = runner.runs, time.monotonic()
        try:
            for _ in range(rounds):
                test()
            outcome = "no failure"
        except Exception:  # a falsified property: hypothesis has printed the example
            traceback.print_exc()
            outcome, failed = "FAILED", True
        print(f"{name}: {rounds * args.round} inputs, {runner.runs - before} command runs, "
              f"{time.monotonic() - started:.0f} s, {outcome}", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"total: {len(properties) * rounds * args.round} inputs, {runner.runs} command runs "
          f"over {len(properties)} properties, peak memory {peak} MB, "
          f"{'a failure' if failed else 'no failure'}")
    return 1 if failed else 0


def in_jobs(names, args):
    """Each property in a process of its own (this script, --name), at most
    ``args.jobs`` at once, in their order; 1 when one failed."""
    waiting, running, failed = list(names), [], False
    while waiting or running:
        while waiting and len(running) < args.jobs:
            running.append(subprocess.Popen(
                [sys.executable, __file__, "--examples", str(args.examples), "--round",
                 str(args.round), "--name", waiting.pop(0)]))
        finished = next((job for job in running if job.poll() is not None), None)
        if finished is None:
            time.sleep(0.5)
            continue
        running.remove(finished)
        failed = failed or finished.returncode != 0
    print(f"all jobs: {len(names)} properties, {'a failure' if failed else 'no failure'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
