"""Golden tests: every command, on every case of tests/golden, prints byte for byte the
standard output and error, and exits with the status, kept beside the case's input
(tests/golden/invocations.py says what runs; 'make golden' makes the files, and their
diff is reviewed like code).  The commands run in-process, as regenerate.py runs the
installed ones: same arguments, same working directory, an empty standard input; and
in every execution mode: in one process, and with every input cut into parts wherever
its format allows, each part read by a process of its own (NDAGENT_PARTS)."""

import difflib

import pytest
from conftest import InProcess
from golden.invocations import (
    AGENTS,
    INPUT,
    INVOCATIONS,
    OUTPUTS,
    argv,
    case_name,
    cases,
    outputs,
)

from ndagent import inputs

HINT = ("if the change is intended, run 'make golden' and review the diff of tests/golden "
        "before committing it")


def params():
    """(case folder, invocation) pairs; a case with no golden files yet is skipped when
    its agent is not one ndagent reads (invocations.AGENTS)."""
    found = []
    for folder in cases():
        agent = case_name(folder).split("/")[0]
        made = any(folder.glob("*.status"))
        marks = () if made or agent in AGENTS else pytest.mark.skip(
            reason=f"no golden files yet for {agent} cases")
        for name in INVOCATIONS:
            found.append(pytest.param(folder, name, marks=marks,
                                      id=f"{case_name(folder)}:{name}"))
    return found


@pytest.fixture(scope="module")
def in_process():
    return InProcess()


def show(data):
    return data.decode("utf-8", "backslashreplace").splitlines(keepends=True)


# NDAGENT_PARTS: one process, and every input cut where its format allows.
MODES = ("never", "always")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("folder", "name"), params())
def test_golden(folder, name, mode, in_process, monkeypatch):
    monkeypatch.chdir(folder)
    monkeypatch.setenv(inputs.ENVIRONMENT, mode)
    status, out, err = in_process(INVOCATIONS[name][0], b"", *argv(name))
    for suffix, data in outputs(out, err, status).items():
        path = folder / f"{name}.{suffix}"
        where = f"tests/golden/{case_name(folder)}/{path.name}"
        if not path.exists():
            pytest.fail(f"{where} is missing: run 'make golden' and review what it writes",
                        pytrace=False)
        expected = path.read_bytes()
        if data != expected:
            diff = "".join(difflib.unified_diff(show(expected), show(data), where,
                                                f"ndagent-{' '.join(INVOCATIONS[name])} "
                                                f"{INPUT} (now)", n=2))
            pytest.fail(f"{where} differs from what the command prints now:\n"
                        f"{diff[:4000]}\n{HINT}", pytrace=False)


def test_every_golden_file_belongs_to_an_invocation():
    """No file is left of an invocation no longer in the table, or misnamed."""
    for folder in cases():
        for path in folder.iterdir():
            name, _, suffix = path.name.rpartition(".")
            assert path.name == INPUT or (name in INVOCATIONS and suffix in OUTPUTS), (
                f"tests/golden/{case_name(folder)}/{path.name}: not an input nor the output "
                f"of an invocation in tests/golden/invocations.py ('make golden' removes "
                f"those it made)")
