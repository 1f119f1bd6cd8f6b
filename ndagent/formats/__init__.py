"""The agents' formats: one module per agent, and how an input's agent is told.

Each module (``cursor``, ``claude``, ``codex``, ``gemini``) knows its agent's stream and
nothing else, and offers:

- ``NAME``: the agent's name (``--agent NAME``);
- ``decides(data)``: whether a decoded object is decisive for this agent (AGENTS.md §4:
  keys and values, never key order); the tests of the modules are exclusive;
- ``markers(needs)``: the decoder markers (``ndagent.decoder.Selection``) of the raw
  lines that can matter for ``needs``, a set of ``"text"`` (Text events), ``"tools"``
  (ToolStart and ToolEnd) and ``"ends"`` (RunEnd: answer, usage, native object); the
  lines that begin and end runs are always among them;
- ``Reader(source, checks)``: turns one input's decoded items into model events
  (``ndagent.model``): ``event(event)`` for a decoder Event, ``skipped(item)`` for a
  decoder Skipped item (lines passed over: events of kinds not needed, which may still
  begin a run), ``finish()`` at the end of the input (the RunEnd of a run cut off).
  Each returns a list of model events.  With ``checks``, it also makes the ``Note``s of
  its schema checks, for ``validate``;
- ``CHECKS``: {check: (severity, meaning)} of those schema checks;
- ``LIVE_ANSWER``: whether the answer is all the Text of a run, printed as it arrives
  (Cursor), rather than known only at the run's end;
- ``SEPARATOR``: what ``result --live`` prints between two messages' Text.

The registry below names them; a new agent is one module and one line here.
"""

from importlib import import_module

# In the order detection tries them.
NAMES = ("cursor", "claude", "codex", "gemini")


def get(name):
    """The format module of an agent."""
    if name not in NAMES:
        raise LookupError(name)
    return import_module(f"ndagent.formats.{name}")
