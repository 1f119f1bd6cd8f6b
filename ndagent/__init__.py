"""ndagent: small Unix filters for the NDJSON event streams of AI coding agents.

The commands are ``ndagent json``, ``result``, ``text``, ``tools``, ``validate`` and
``stats``, and ``ndagent run``, which runs an agent and shows its stream as one of them
does.  For scripts, ``ndagent.decoder`` reads streams (``iter_items``, ``batches``),
each agent's ``Format`` in ``ndagent.formats`` knows what its events mean, and
``ndagent.model`` holds the common events they become (runs, text, tool calls).
"""

# Ctrl-C is taken first of all (below, the why): with signal's C module, which the
# interpreter loads as it starts (the signal module takes milliseconds to import), and
# os and sys, which it has loaded too (os by site).
import _signal
import os
import sys

__version__ = "0.1.0"

# The console scripts (pyproject.toml's [project.scripts]; tests/test_cli.py checks).
_SCRIPTS = frozenset({"ndagent", "ndagent-json", "ndagent-result", "ndagent-run",
                      "ndagent-stats", "ndagent-text", "ndagent-tools", "ndagent-validate"})


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


def _exit_interrupted(signum, frame):
    """Ctrl-C in a command: status 130 at once, without a traceback."""
    os._exit(130)


def _exit_quietly_at_ctrl_c():
    """Make Ctrl-C end a command with status 130 and no traceback from here on.

    Python's own handler raises KeyboardInterrupt wherever the program is, and no
    ``try`` can cover the imports of the console script (``from ndagent.cli import
    main``) and everything before ``run_command``'s ``try``: a Ctrl-C there printed a
    traceback.  A command is a process that ends at Ctrl-C, so from the first line of
    the package on, the handler ends it at once: nothing needs undoing (what it printed
    is printed), and this holds while it works too.  It is set only in a command
    process, never for a script that imports ndagent (its Ctrl-C stays its own), and
    only when Ctrl-C has Python's usual handler (not when the process was started with
    SIGINT ignored, as background jobs are).  In-process calls of ``main`` still get
    status 130 from ``run_command``, which catches KeyboardInterrupt."""
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _exit_interrupted)


if _started_as_command():
    _exit_quietly_at_ctrl_c()
