"""The manual pages in man/: made from the commands' own parsers by man/generate.py
('make man'), up to date with them, complete, and rendered by man without a warning."""

import difflib
import importlib
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ndagent import cli, formats, options

ROOT = Path(__file__).resolve().parent.parent
MAN = ROOT / "man"
GENERATOR = MAN / "generate.py"
PAGES = ["ndagent.1"] + [f"ndagent-{verb}.1" for verb, _ in cli.COMMANDS]
SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES",
            "SEE ALSO"]
OUT_OF_DATE = "man/ is out of date with the commands' parsers: run 'make man' (and commit man/)"


def page(name):
    path = MAN / name
    assert path.exists(), f"{path} is missing: {OUT_OF_DATE}"
    return path.read_text(encoding="utf-8")


def sections(text):
    """{heading: the section's roff source}."""
    parts = re.split(r"^\.SH (.*)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def roff(text):
    return text.replace("\\", "\\e").replace("-", "\\-")


def test_pages_are_up_to_date_with_the_parsers(tmp_path):
    date = re.match(r'\.TH \S+ "1" "([^"]+)"', page("ndagent.1")).group(1).replace("\\-", "-")
    done = subprocess.run([sys.executable, str(GENERATOR), "--date", date, str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    made = sorted(p.name for p in tmp_path.glob("*.1"))
    committed = sorted(p.name for p in MAN.glob("*.1"))
    assert made == committed == sorted(PAGES), OUT_OF_DATE
    for name in made:
        new, old = (tmp_path / name).read_text(), page(name)
        diff = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                            f"man/{name}", "regenerated", n=1))
        assert new == old, f"{OUT_OF_DATE}\n{diff[:3000]}"


@pytest.mark.parametrize("name", PAGES)
def test_every_page_has_the_sections(name):
    found = sections(page(name))
    for heading in SECTIONS:
        assert found.get(heading, "").strip(), f"man/{name} has no {heading} section"
    assert "cursor\\-agent \\-p \\-\\-output\\-format stream\\-json" in found["EXAMPLES"]
    for status, _ in cli.EXIT_STATUSES:
        assert f".B {status}\n" in found["EXIT STATUS"]
    assert ".BR jq (1)" in found["SEE ALSO"]
    for other in PAGES:
        if other != name:
            assert roff(other[:-2]) + " (1)" in found["SEE ALSO"]


def test_the_top_page_lists_every_command():
    commands = sections(page("ndagent.1"))["COMMANDS"]
    for verb, summary in cli.COMMANDS:
        assert f".B ndagent {roff(verb)}\n{roff(summary)}" in commands


@pytest.mark.parametrize("verb", [verb for verb, _ in cli.COMMANDS])
def test_command_pages_have_what_the_module_adds(verb):
    """ENVIRONMENT and CHECKS, where the command's module defines them."""
    module = importlib.import_module(f"ndagent.cmd_{verb}")
    found = sections(page(f"ndagent-{verb}.1"))
    for constant, heading in (("ENVIRONMENT", "ENVIRONMENT"), ("CHECKS", "CHECKS")):
        value = getattr(module, constant, None)
        if isinstance(value, dict):
            for term in value:
                assert f".B {roff(term)}\n" in found.get(heading, ""), (verb, term)
        elif value:
            assert found.get(heading, "").strip(), (verb, heading)


@pytest.mark.parametrize("verb", [verb for verb, _ in cli.COMMANDS])
def test_command_pages_say_what_each_format_says_of_the_command(verb):
    """As --help does: the agents' prose is their formats', assembled."""
    description = sections(page(f"ndagent-{verb}.1"))["DESCRIPTION"]
    text = " ".join(description.replace("\\&", "").replace("\\-", "-").replace("\\e", "\\")
                    .split())
    for each in formats.all_formats():
        if each.help.get(verb):
            assert " ".join(f"{each.title}: {each.help[verb]}".split()) in text, each.name


@pytest.mark.skipif(importlib.util.find_spec("ndagent.cmd_validate") is None,
                    reason="there is no validate command yet")
def test_the_validate_page_lists_every_check():
    from ndagent import cmd_validate

    assert cmd_validate.CHECKS, "ndagent.cmd_validate defines CHECKS = {name: meaning}"
    checks = sections(page("ndagent-validate.1")).get("CHECKS", "")
    for name in cmd_validate.CHECKS:
        assert f".B {roff(name)}\n" in checks, f"{name}: {OUT_OF_DATE}"


def man_db():
    if shutil.which("man") is None:
        return False
    done = subprocess.run(["man", "--version"], capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.startswith("man ")


@pytest.mark.skipif(not man_db(), reason="man (man-db) is not installed")
@pytest.mark.parametrize("name", PAGES)
def test_man_renders_the_page_without_a_warning(name):
    done = subprocess.run(["man", "--warnings", "-l", str(MAN / name)], capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin",
                                                      "MANWIDTH": "80", "LANG": "C.UTF-8"})
    assert done.returncode == 0 and done.stderr == ""
    assert f"ndagent{name[7:-2]}".upper() in done.stdout and "EXIT STATUS" in done.stdout


def test_commands_do_not_load_the_man_tools():
    code = ("import sys\nfrom ndagent import cli\n"
            "for verb, _ in cli.COMMANDS:\n"
            "    __import__(f'ndagent.cmd_{verb}', fromlist=['x']).build_parser()\n"
            "cli.build_parser()\n"
            "assert 'argparse_manpage' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_pages_are_installed_with_the_package(tmp_path):
    """The wheel puts every page in share/man/man1 of the install prefix, where man(1)
    looks for a PATH entry's bin/ (pip install, pipx, --user alike)."""
    import zipfile

    pytest.importorskip("wheel")
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "ndagent", "man"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name)  # a copy: the build writes beside its sources
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps",
                            "--no-build-isolation", "--wheel-dir", str(tmp_path), str(source)],
                           check=True, capture_output=True, text=True, timeout=120)
    # No warning of the build's (a licence that is no SPDX string, data folders that are
    # no packages, ...), but those of the environment (PYTHONDONTWRITEBYTECODE).
    warnings = [line for line in (built.stdout + built.stderr).splitlines()
                if re.search("warn|deprecat", line, re.I) and "byte-compiling" not in line
                and "Location 'file:" not in line]
    assert warnings == []
    (wheel,) = tmp_path.glob("ndagent-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    # Every module of the package, subpackages included (a package list that misses
    # one installs a command that fails at its first import of it).
    assert {name for name in names if name.endswith(".py")} == {
        path.relative_to(ROOT).as_posix() for path in (ROOT / "ndagent").rglob("*.py")}
    installed = {name.split("/data/", 1)[1] for name in names if ".data/data/" in name}
    completions = ROOT / "ndagent" / "completions"
    assert installed == {
        *(f"share/man/man1/{page.name}" for page in MAN.glob("*.1")),
        *(f"share/bash-completion/completions/{path.name}" for path in completions.glob("bash/*")),
        *(f"share/zsh/site-functions/{path.name}" for path in completions.glob("zsh/*")),
        *(f"share/fish/vendor_completions.d/{path.name}"
          for path in completions.glob("fish/*"))}
    # The scripts 'ndagent completion SHELL' prints, in the package.
    assert {name for name in names if name.startswith("ndagent/completions/")} == {
        f"ndagent/completions/{path.relative_to(completions).as_posix()}"
        for path in completions.glob("*/*")}


def test_completions_are_up_to_date_with_the_parsers(tmp_path):
    completions = ROOT / "ndagent" / "completions"
    done = subprocess.run([sys.executable, str(MAN / "completions.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    made = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob("*/*"))
    committed = sorted(str(p.relative_to(completions)) for p in completions.glob("*/*"))
    expected = [f"{shell}/{name.format(program)}" for shell, name in cli.COMPLETION_FILES.items()
                for program in ["ndagent"] + [f"ndagent-{verb}" for verb, _ in cli.COMMANDS]]
    assert made == committed == sorted(expected), "run 'make completions'"
    for name in made:
        assert (tmp_path / name).read_text() == (completions / name).read_text(), \
            f"ndagent/completions/{name} is out of date: run 'make completions'"


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_options_choices_and_verbs():
    completions = ROOT / "ndagent" / "completions" / "bash"
    script = f"""
source {completions / "ndagent-text"}
COMP_WORDS=(ndagent-text --col); COMP_CWORD=1; _shtab_ndagent_text; echo "${{COMPREPLY[@]}}"
COMP_WORDS=(ndagent-text --color ''); COMP_CWORD=2; _shtab_ndagent_text; echo "${{COMPREPLY[@]}}"
source {completions / "ndagent"}
COMP_WORDS=(ndagent va); COMP_CWORD=1; _shtab_ndagent; echo "${{COMPREPLY[@]}}"
"""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.stdout.splitlines() == ["--color", "auto always never", "validate"]


def help_of(verb, option):
    """What ``ndagent [VERB] OPTION`` prints, run as a user runs it."""
    argv = [sys.executable, "-m", "ndagent", *([verb] if verb else []), option]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "80", "LANG": "C.UTF-8",
                               "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


@pytest.mark.parametrize("verb", [None, *(verb for verb, _ in cli.COMMANDS)])
def test_short_help_fits_a_screen(verb):
    """-h, as ripgrep's: the usage, every option in one line of at most 80 columns (some
    that go together share one), one example; at most 25 lines in all."""
    text = help_of(verb, "-h")
    lines = text.splitlines()
    assert len(lines) <= 25, text
    assert all(len(line) <= 80 for line in lines), text
    assert lines[0].startswith("usage: ") and "example:" in lines
    parser = (cli.build_parser() if verb is None
              else importlib.import_module(f"ndagent.cmd_{verb}").build_parser())
    for action in parser._actions:
        names = ", ".join(action.option_strings) or action.metavar or action.dest
        names = re.escape(names)
        assert sum(re.match(rf"  (\S.*, )?{names}[ ,]", line) is not None
                   for line in lines) == 1, names
    assert len(text) < len(help_of(verb, "--help")) / 2


def test_detection_is_explained_once_in_ndagent_1():
    """How an input's agent is told is in 'ndagent --help' and ndagent(1), and every
    verb's help sends the reader there instead of repeating it."""
    paragraph = " ".join(options.agents_help().split())
    assert paragraph in " ".join(help_of(None, "--help").split())
    # A line that begins with a quote is escaped with roff's zero-width escape, wherever
    # the page's wrapping puts it.
    described = sections(page("ndagent.1"))["DESCRIPTION"].replace("\\&", "")
    assert " ".join(roff(options.agents_help()).split()) in " ".join(described.split())
    for verb, _ in cli.COMMANDS:
        text = " ".join(help_of(verb, "--help").split())
        assert paragraph[:60] not in text and options.SEE_DETECTION in text, verb
        assert paragraph[:60] not in " ".join(page(f"ndagent-{verb}.1").split()), verb
