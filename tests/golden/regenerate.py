"""Make the golden files of tests/golden from what the installed commands print now.

    python tests/golden/regenerate.py [AGENT/CASE | AGENT ...]      ('make golden')

With no argument, every case of the agents in invocations.AGENTS; named cases are made
whatever their agent.  Each command is the installed ``ndagent-VERB`` beside this
Python (the development .venv), run in the case folder on ``input.ndjson`` as
invocations.py says.  Prints each file it writes anew, changes or removes (files of an
invocation no longer in the table): review them in 'git diff tests/golden' before
committing, since the tests take them as the truth.
"""

import os
import subprocess
import sys
from pathlib import Path

from invocations import AGENTS, GOLDEN, INVOCATIONS, OUTPUTS, argv, case_name, cases, outputs

BIN = Path(sys.executable).parent


def run(folder, name):
    """{suffix: bytes} of the invocation ``name`` on the case in ``folder``."""
    verb = INVOCATIONS[name][0]
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    done = subprocess.run([str(BIN / f"ndagent-{verb}"), *argv(name)], cwd=folder,
                          stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=60)
    return outputs(done.stdout, done.stderr, done.returncode)


def regenerate(folder):
    """Write the golden files of one case; the (what, path) of each change."""
    changes = []
    wanted = set()
    for name in INVOCATIONS:
        for suffix, data in run(folder, name).items():
            path = folder / f"{name}.{suffix}"
            wanted.add(path)
            old = path.read_bytes() if path.exists() else None
            if old != data:
                path.write_bytes(data)
                changes.append(("new" if old is None else "changed", path))
    for suffix in OUTPUTS:
        for path in sorted(folder.glob(f"*.{suffix}")):
            if path not in wanted:
                path.unlink()
                changes.append(("removed", path))
    return changes


def main(names):
    try:
        folders = cases(names) if names else [
            folder for folder in cases() if case_name(folder).split("/")[0] in AGENTS]
    except LookupError as error:
        print(f"regenerate.py: {error.args[0]}", file=sys.stderr)
        return 2
    missing = sorted({verb for verb, *_ in INVOCATIONS.values()
                      if not (BIN / f"ndagent-{verb}").exists()})
    if missing:
        print(f"regenerate.py: ndagent-{missing[0]} is not installed in {BIN}: run "
              f"'make golden'", file=sys.stderr)
        return 2
    changes = [change for folder in folders for change in regenerate(folder)]
    for what, path in changes:
        print(f"{what:8} {path.relative_to(GOLDEN.parent.parent)}")
    print(f"{len(folders)} cases, {len(INVOCATIONS)} invocations each: {len(changes)} files "
          f"written or removed" + ("; review them: git diff tests/golden" if changes else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
