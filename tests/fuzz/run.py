"""The long fuzz run ('make fuzz'): the property tests of test_robustness.py, with many
examples each, over every command, in-process.  Prints how many inputs each property
ran through the commands, and exits 1 at the first property that fails."""

import argparse
import os
import sys
import time
import traceback
from pathlib import Path


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=10_000,
                        help="examples per property (default: %(default)s)")
    args = parser.parse_args()
    os.environ["NDAGENT_EXAMPLES"] = str(args.examples)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import test_robustness

    properties = [(name, test) for name, test in vars(test_robustness).items()
                  if name.startswith("test_property_")]
    runner = test_robustness.in_process
    failed = False
    for name, test in properties:
        before, started = runner.runs, time.monotonic()
        try:
            test()
            outcome = "no failure"
        except Exception:  # a falsified property: hypothesis has printed the example
            traceback.print_exc()
            outcome, failed = "FAILED", True
        print(f"{name}: {runner.runs - before} command runs, "
              f"{time.monotonic() - started:.0f} s, {outcome}", flush=True)
    print(f"total: {runner.runs} command runs over {len(properties)} properties, "
          f"{'a failure' if failed else 'no failure'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
