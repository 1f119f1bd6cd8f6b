"""ndagent: small Unix filters for the NDJSON event streams of AI coding agents.

The commands are ``ndagent json``, ``result``, ``text``, ``tools``, ``validate`` and
``stats``, and ``ndagent run``, which runs an agent and shows its stream as one of them
does.  For scripts, ``ndagent.decoder`` reads streams (``iter_items``, ``batches``),
each agent's ``Format`` in ``ndagent.formats`` knows what its events mean, and
``ndagent.model`` holds the common events they become (runs, text, tool calls).
"""

# Ctrl-C ends a command with status 130 and no traceback, from the package's first
# line on.  Python's own handler raises KeyboardInterrupt wherever the program is, and
# no ``try`` covers the imports of the console script (``from ndagent.cli import main``)
# and all before ``run_command``'s ``try``: a Ctrl-C there printed a traceback.  A
# command ends at Ctrl-C, and nothing needs undoing (what it printed is printed).  Not
# when the process started with SIGINT ignored (a background job); in-process calls of
# ``main`` get 130 from ``run_command``, which catches KeyboardInterrupt.  It is taken
# with signal's C module, which the interpreter loads as it starts (the signal module
# takes milliseconds to import), and os and sys, which it has loaded too (os by site).
import _signal
import os
import sys


def _exit_interrupted(signum, frame):
    """Ctrl-C in a command: status 130 at once, without a traceback."""
    os._exit(130)


# Until this process is known to be a command, Ctrl-C ends it too: a script that
# imports ndagent gets its own handler back a few lines below.
_PYTHONS_CTRL_C = _signal.getsignal(_signal.SIGINT)
if _PYTHONS_CTRL_C is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _exit_interrupted)

__version__ = "0.1.0"

# The console scripts (pyproject.toml's [project.scripts]; tests/test_cli.py checks).
_SCRIPTS = frozenset({"ndagent", "ndagent-json", "ndagent-result", "ndagent-run",
                      "ndagent-stats", "ndagent-text", "ndagent-tools", "ndagent-validate",
                      "ndagent-otel", "ndagent-atif", "ndagent-markdown", "ndagent-html"})


def _started_as_command():
    """Whether this process is one of the commands: a console script of ours (argv[0]
    names it) or ``python -m ndagent`` (while Python looks for the module to run,
    argv[0] is "-m"; Python 3.10 and later also keep the command line, which tells
    that the module is ndagent).  A script that imports ndagent is not."""
    argv = getattr(sys, "argv", None)
    if not argv:
        return False
    if argv[0] != "-m":
        return os.path.basename(argv[0]) in _SCRIPTS
    given = getattr(sys, "orig_argv", None)
    if given is None:
        return True
    module = given[len(given) - len(argv)]  # the word before the module's own arguments
    return module == "ndagent" or (module.startswith("-") and module.endswith("mndagent"))


def _ctrl_c_of_scripts_is_their_own():
    """Give a script that imports ndagent (no command: ``_started_as_command``) Python's
    own Ctrl-C back, which the package's first lines took."""
    if not _started_as_command() and _PYTHONS_CTRL_C is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _PYTHONS_CTRL_C)


_ctrl_c_of_scripts_is_their_own()
