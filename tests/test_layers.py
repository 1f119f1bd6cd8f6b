"""The shape of the code, held as invariants: imports run one way (verbs, then the
frame, the verbs' own libraries, the formats, the model, the decoder, the terminal), a
verb imports no other verb, and neither the decoder nor the frame nor a verb nor a verb's
library names an agent or a raw event type."""

import ast
import re
from importlib import import_module
from pathlib import Path

import pytest

import ndagent
from ndagent import cli, formats
from ndagent.formats.base import HELP_VERBS

PACKAGE = Path(ndagent.__file__).parent

# Lower layers first: a module may import only from a lower layer.  The verbs are the
# one layer of several modules, and a verb imports no other verb; their own libraries
# (stats' figures, run's supervision of the agent) know neither a verb nor the frame.
LAYERS = (
    ("terminal",),
    ("markup",),
    ("sources",),
    ("prices",),
    ("selection",),
    ("jsonvalues",),
    ("decoder",),
    ("model",),
    ("formats.base",),
    ("formats._",),  # an agent module's own parts (its help prose), no agent themselves
    ("formats",),
    ("figures",),
    ("junit", "statstext", "stepsummary", "timeline"),
    ("otlp",),
    ("atif",),
    ("totals",),
    ("output",),
    ("options",),
    ("callfilter",),
    ("budget",),
    ("processes",),
    ("supervise",),
    ("engine",),
    ("inputs",),
    ("feed",),
    ("frame",),
    ("recorder", "transcript"),  # the trace recorder; what the transcript verbs share
    ("cli",),
    tuple(f"cmd_{verb}" for verb in cli.VERBS),
    ("__main__",),
)

# Words that are a raw event type of some agent and also the verbs' own vocabulary: a
# verb's name ("result"), a diagnostic's severity and field ("error", "message",
# "warning", "info"), a summary, a mode.
OWN_WORDS = frozenset(cli.VERBS) | {"error", "message", "warning", "info", "summary", "mode"}
# The vocabulary of the interchange outputs (otel's attribute names, the message roles of
# OpenTelemetry and ATIF), which some agent's raw event types share.
OUTPUT_WORDS = frozenset({"assistant", "system", "user"})
OUTPUT_PREFIXES = ("gen_ai.", "ndagent.", "error.", "service.")


def _own_word(text):
    return text in OWN_WORDS or text in OUTPUT_WORDS or text.startswith(OUTPUT_PREFIXES)


def _layer(module):
    """The layer of ``ndagent.X[.Y]`` (the package itself: below every layer)."""
    parts = module.split(".")
    if parts[0] != "ndagent":
        return None
    if len(parts) == 1:
        return -1
    if parts[1:2] == ["formats"] and parts[2:3] and parts[2].startswith("_"):
        parts = [*parts[:2], "_"]
    for index, names in enumerate(LAYERS):
        if ".".join(parts[1:3]) in names or parts[1] in names:
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def _modules():
    return sorted(path for path in PACKAGE.rglob("*.py") if "completions" not in path.parts)


def _name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree, name):
    """The ndagent modules a module's code imports, wherever the import stands."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package
                package = name.split(".")[:len(name.split(".")) - node.level]
                base = ".".join([*package, *([base] if base else [])])
            if base == "ndagent":  # "from ndagent import cli": the module ndagent.cli
                for alias in node.names:
                    yield f"ndagent.{alias.name}" if alias.name != "__version__" else base
            else:
                yield base


@pytest.mark.parametrize("path", _modules(), ids=lambda path: _name(path))
def test_imports_run_one_way(path):
    name = _name(path)
    layer = _layer(name)
    for imported in _imports(ast.parse(path.read_text(encoding="utf-8")), name):
        below = _layer(imported)
        if below is None or below == -1 or imported == name:
            continue
        assert below < layer, f"{name} imports {imported}, not a layer below it"


def _strings(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def _raw_type(text):
    return any(each.may_decide(text) for each in formats.all_formats())


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda path: path.name)
def test_no_agent_or_raw_event_type_named_outside_the_formats(path):
    named = [(line, text) for line, text in _strings(path)
             if text in formats.names() or (_raw_type(text) and not _own_word(text))]
    assert named == [], f"{path.name} names an agent or a raw event type: {named}"


def _agent_named(text):
    """The first agent's name (a whole word, in any case) or format title that a text
    holds, or None."""
    for each in formats.all_formats():
        found = (re.search(rf"\b{re.escape(each.name)}\b", text, re.I)
                 or re.search(rf"\b{re.escape(each.title)}\b", text, re.I))
        if found:
            return found[0]
    return None


# The modules that --help is made of besides the formats: each verb, the entry point and
# the options.  What they say is every agent's; what is one agent's, its format says.
HELP_MODULES = sorted([*PACKAGE.glob("cmd_*.py"), PACKAGE / "cli.py", PACKAGE / "options.py"])


@pytest.mark.parametrize("path", HELP_MODULES, ids=lambda path: path.name)
def test_no_help_module_names_an_agent_in_its_prose(path):
    """Stricter than the test above: no string holds an agent's name as a word, in any
    case ('cursor-agent', "Claude's"), nor a format's title.  (A generic word that is an
    agent's name, a terminal's cursor say, has to be put otherwise there.)"""
    named = sorted((line, found) for line, text in _strings(path)
                   if (found := _agent_named(text)))
    assert named == [], f"{path.name} names an agent (its format should say it): {named}"


@pytest.mark.parametrize("verb", HELP_VERBS)
def test_a_verbs_help_says_what_each_format_says_of_it(verb):
    parser = import_module(f"ndagent.cmd_{verb}").build_parser()
    shown = " ".join(parser.format_help().split())
    said = [each for each in formats.all_formats() if each.help.get(verb)]
    assert said, f"no format says anything of {verb}"
    for each in said:
        assert " ".join(f"{each.title}: {each.help[verb]}".split()) in shown, each.name


# The longest a module may be, in lines; how many imports may stand inside functions
# (each a deliberately lazy one, saying why on its line: "# lazy: ...").
MOST_LINES = 800
MOST_LAZY_IMPORTS = 15


@pytest.mark.parametrize("path", _modules(), ids=lambda path: _name(path))
def test_no_module_is_too_long(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MOST_LINES, f"{_name(path)}: {lines} lines: split it"


def _lazy_imports():
    """(module, line, text) of every import inside a function or class of ndagent."""
    found = []
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found += [(_name(path), inner.lineno, lines[inner.lineno - 1].strip())
                          for inner in ast.walk(node)
                          if isinstance(inner, (ast.Import, ast.ImportFrom))]
    return sorted(set(found))


def test_imports_stand_at_the_top_but_a_few_lazy_ones_that_say_why():
    lazy = _lazy_imports()
    assert len(lazy) <= MOST_LAZY_IMPORTS, lazy
    assert [found for found in lazy if "# lazy: " not in found[2]] == []


def test_one_module_forks_and_none_uses_a_process_pool():
    """The engine is the one parallel mechanism (run's agent aside, started by
    subprocess in supervise)."""
    forking = {_name(path) for path in _modules()
               if "os.fork(" in path.read_text(encoding="utf-8")}
    assert forking == {"ndagent.engine"}
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        assert "concurrent.futures" not in text and "multiprocessing" not in text, path


def test_the_name_check_can_fail():
    """The oracles above know each agent's distinctive types, and its name."""
    assert all(_raw_type(text) for text in ("tool_call", "stream_event", "item.completed",
                                            "tool_use"))
    assert not _raw_type("tools")
    assert [_agent_named(text) for text in ("cursor-agent -p", "Claude's answer",
                                            "the GEMINI CLI", "the agent's answer")] == [
        "cursor", "Claude", "GEMINI", None]


def test_every_fuzzed_property_takes_no_fixture():
    """'make fuzz' calls each property of its modules with no argument."""
    import importlib.util
    import inspect

    path = Path(__file__).parent / "fuzz" / "run.py"
    spec = importlib.util.spec_from_file_location("fuzz_run", path)
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    found = runner.fuzzed()
    assert len(found) > 20
    assert [name for name, test in found if inspect.signature(test).parameters] == []

