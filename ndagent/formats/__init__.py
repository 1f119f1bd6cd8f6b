"""The agents' formats: one module per agent, and how an input's agent is told.

Each module (``cursor``, ``claude``, ``codex``, ``gemini``) knows its agent's stream and
nothing else, and offers:

- ``NAME``: the agent's name (``--agent NAME``);
- ``decides(data)``: whether a decoded object is decisive for this agent
  (docs/detection.md#telling-the-agent: keys and values, never key order); the tests of
  the modules are exclusive;
- ``may_decide(kind)``: whether ``decides`` can be true of an object whose type is the
  string ``kind`` (so that the objects of a stream are tested only by the agents whose
  test looks at their type);
- ``markers(needs)``: the decoder markers (``ndagent.selection.Selection``) of the raw
  lines that can matter for ``needs``, a set of ``"text"`` (Text events), ``"tools"``
  (ToolStart and ToolEnd), ``"ends"`` (RunEnd: answer, usage, native object) and
  ``"native"`` (RunEnd but the answer of a run cut off: what the json verb needs); the
  lines that begin and end runs are always among them.  None instead when those lines
  are (nearly) all the agent writes: then the decoder decodes every line, which costs
  less than finding them;
- ``Reader(source, checks, needs=None)``: turns one input's decoded items into model events
  (``ndagent.model``): ``event(event)`` for a decoder Event, ``skipped(item)`` for a
  decoder Skipped item (lines passed over: events of kinds not needed, which may still
  begin a run), ``finish()`` at the end of the input (the RunEnd of a run cut off).
  Each returns a list of model events.  With ``checks``, it also makes the ``Note``s of
  its schema checks, for ``validate``; ``needs`` (as for ``markers``, or None for
  every event) lets it keep less, and leave out the events not needed;
- ``CHECKS``: {check: (severity, meaning)} of those schema checks; one named
  ``call-open`` gives the calls still open when a run ends well a check and a severity
  of the format's own (else they are the generic ``call-unfinished`` errors);
- ``LIVE_ANSWER``: whether the answer is all the Text of a run, printed as it arrives
  (Cursor), rather than known only at the run's end;
- ``SEPARATOR``: what ``result --live`` prints between two messages' Text;
- ``RUN_END``: the event that ends a run, for the message of a run cut off;
- ``NOISE_LINES``: whether the agent itself writes lines that are not JSON on its
  stream (``validate`` warns of them rather than count them errors);
- optionally ``splits_between(before, after, checks)`` and ``SPLIT_NEEDLE``: whether
  the stream may be cut between two adjacent lines, decoded, and each part read on its
  own with the same findings (the Reader, with ``checks`` or not, carries nothing
  across), and bytes that each line ``after`` holds, to find them by; a large file of
  such an agent may then be read in parts, in as many processes (``ndagent.workers``);
- optionally ``old_format(data)`` and ``OLD_FORMAT``: an object of an older shape of
  the agent's stream, which ndagent does not read, and the message that says so.

The registry below names them; a new agent is one module and one line here.  How an
input's agent is told (docs/detection.md) is ``Detector``'s; ``OtherAgents`` tells, after
that, an object of another agent in it.
"""

from importlib import import_module

from ndagent.terminal import quote

# In the order detection tries them.
NAMES = ("cursor", "claude", "codex", "gemini")

# How many JSON objects detection reads before it gives up looking for a decisive one.
DETECT_OBJECTS = 100

# How many event types OtherAgents keeps what it tries for (a stream may make up more).
MAX_TYPES = 1024

# The message of an input that is an agent's json output rather than its stream.
JSON_OUTPUT = "json output, not stream-json"


_MODULES = {}


def get(name):
    """The format module of an agent (imported once: detection asks for every agent's
    at each input, and import_module costs more than a look-up)."""
    module = _MODULES.get(name)
    if module is None:
        if name not in NAMES:
            raise LookupError(name)
        module = _MODULES[name] = import_module(f"ndagent.formats.{name}")
    return module


class Detector:
    """Tells an input's agent from its first JSON objects
    (docs/detection.md#telling-the-agent): the first object decisive for an agent
    decides; after ``DETECT_OBJECTS`` objects, or at the end of the input, with none
    decisive, the input is Cursor's when every object's type is one Cursor uses (or
    there was no object), else no agent's (docs/detection.md#when-nothing-is-decisive).
    ``forced``: the agent of ``--agent`` (None for auto): another agent's decisive
    object is then an error, and it is the agent of an input with none.

    An input with no decisive object and a line that begins an agent's json output
    (``json_output``) is that json output, not stream-json, whatever ``--agent`` says
    (a stream one of whose lines is damaged to look so still has its decisive objects).

    ``add`` and ``end`` return None while undecided, else ``(module, None, None)``, or
    ``(None, line, message)`` for an input that is not read."""

    def __init__(self, forced=None):
        self.forced = None if forced is None else get(forced)
        self.modules = [get(name) for name in NAMES]
        self.objects = 0
        self.first = None  # (line, type) of the first object
        self.cursor_types = True
        self.json_output = None  # the line of the first that begins json output

    def add(self, data, line):
        """The decision an object at ``line`` makes, or None."""
        self.objects += 1
        kind = data.get("type")
        if self.first is None:
            self.first = (line, kind)
        for module in self.modules:
            if module.decides(data):
                forced = self.forced
                if forced is not None and forced is not module:
                    return (None, line,
                            f"a {module.NAME} stream, not {forced.NAME} (--agent {forced.NAME})")
                return module, None, None
        for module in self.modules:
            old = getattr(module, "old_format", None)
            if old is not None and old(data):
                return None, line, module.OLD_FORMAT
        if self.cursor_types:
            self.cursor_types = kind.__class__ is str and kind in get("cursor").TYPES
        if self.objects >= DETECT_OBJECTS:
            return self.end()
        return None

    def other_line(self, start, line):
        """A line at ``line`` that holds no JSON object (``start``: its first bytes),
        before a decision: the first that begins json output is kept, for ``end``."""
        if self.json_output is None and json_output(start):
            self.json_output = line

    def end(self):
        """The decision with no decisive object."""
        if self.json_output is not None:
            return None, self.json_output, JSON_OUTPUT
        if self.forced is not None:
            return self.forced, None, None
        if self.cursor_types:
            return get("cursor"), None, None
        line, kind = self.first
        kind = f'type "{quote(kind)}"' if kind.__class__ is str else "no type"
        return None, line, f"not an agent stream: no known event (first object: {kind})"


class OtherAgents:
    """Tells the objects of an input read as ``module``'s that are decisive for another
    agent (docs/detection.md#another-agents-objects-in-a-stream: bad lines, ``a codex
    event in a claude stream``), at little cost: for each type, only the agents that
    ``may_decide`` on it are tried.
    ``by_type`` holds, for each type seen (at most MAX_TYPES), those agents' tests,
    ``((decides, module), ...)``, so that a caller finds them with one lookup, and
    ``tests`` learns them for a type not seen yet."""

    def __init__(self, module):
        self.others = tuple(other for other in map(get, NAMES) if other is not module)
        self.by_type = {}

    def tests(self, kind):
        """The tests of the other agents that may decide on objects of type ``kind`` (a
        string or None): ``((decides, module), ...)``."""
        tests = self.by_type.get(kind)
        if tests is None:
            tests = () if kind is None else tuple(
                (other.decides, other) for other in self.others if other.may_decide(kind))
            if len(self.by_type) < MAX_TYPES:
                self.by_type[kind] = tests
        return tests


def json_output(start):
    """Whether a line that holds no JSON object (``start``: its first bytes) begins an
    agent's json output rather than being a line of its stream: an array of objects on
    one line (Claude's ``--output-format json --verbose``), or a lone ``{`` or ``[``, the
    first line of an object or array pretty-printed (Gemini's json mode, jq's output).
    A noise line that begins with a bracket (``[ERROR] ...``) is neither."""
    text = start.strip()
    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:].lstrip()
    if text == b"{" or text == b"[":
        return True
    return text[:1] == b"[" and text[1:].lstrip()[:1] == b"{"

