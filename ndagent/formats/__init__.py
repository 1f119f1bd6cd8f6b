"""The agents' formats, one module each, and how an input's agent is told.

Each module of this package declares its agent's stream in one object, ``FORMAT``
(``ndagent.formats.base.Format``: its fields say what each part of the protocol is);
the registry below finds the modules by themselves, so that a new agent is one module
(``template.py`` copied and filled in) and no other file.  ``register`` adds a format
made elsewhere (a test's, a script's).  How an input's agent is told
(docs/agents.md#how-an-inputs-agent-is-detected) is ``Detector``'s; ``OtherAgents`` tells,
after that, an object of another agent in it.
"""

import os
from importlib import import_module

from ndagent.formats.base import Format
from ndagent.terminal import quote

# How many JSON objects detection reads before it gives up looking for a decisive one.
DETECT_OBJECTS = 100

# How many event types OtherAgents keeps what it tries for (a stream may make up more).
MAX_TYPES = 1024

# The message of an input that is an agent's json output rather than its stream.
JSON_OUTPUT = "json output, not stream-json"

# The modules of this package that declare no agent (nor does one whose name begins
# with "_").
_NOT_AGENTS = frozenset({"base.py", "template.py"})

_REGISTERED = {}  # name -> Format, in the order of their ``order``, then name
# What is made of the registered formats for every input (Detector's, OtherAgents'),
# once: made again when they change.
_DERIVED = {}


def register(found):
    """Add a Format to those ndagent reads (one of the same name is replaced)."""
    if not isinstance(found, Format):
        raise TypeError(f"not a Format: {found!r}")
    _keep({**_formats(), found.name: found})


def unregister(name):
    """Take an agent's Format out of those ndagent reads (a test's, after it)."""
    formats = dict(_formats())
    del formats[name]
    _keep(formats)


def _keep(formats):
    if sum(1 for each in formats.values() if each.fallback_types is not None) > 1:
        raise ValueError("fallback_types: one format at most")
    _REGISTERED.clear()
    _DERIVED.clear()
    _REGISTERED.update(sorted(formats.items(), key=lambda item: (item[1].order, item[0])))


def _formats():
    """The registered formats, first the package's own modules' (imported once)."""
    if not _REGISTERED:
        found = [import_module(f"{__name__}.{name[:-3]}").FORMAT
                 for name in os.listdir(os.path.dirname(__file__))
                 if name.endswith(".py") and name[0] != "_" and name not in _NOT_AGENTS]
        _keep({each.name: each for each in found})
    return _REGISTERED


def names():
    """The names of the formats ndagent reads, in their order."""
    return tuple(_formats())


def agents():
    """The names of the agents ndagent reads (what --agent takes), in their order: each
    once, whatever the forms of its output it reads."""
    found = sorted(_formats().values(), key=lambda each: each.form != "stream")
    return tuple(dict.fromkeys(each.agent for each in found))


def session_stores(named, environ, home):
    """The folders of the session files of the agents ``named`` (None: every agent),
    that exist, each once, in the formats' order."""
    found = []
    for each in all_formats():
        if each.stores is None or named is not None and each.agent not in named:
            continue
        for folder in each.stores(environ, home):
            if folder not in found and os.path.isdir(folder):
                found.append(folder)
    return found


def what(module):
    """What an input of ``module``'s format is, for messages: 'a claude stream', 'an
    opencode session file'."""
    return a_or_an(f"{module.agent} {'stream' if module.form == 'stream' else 'session file'}")


def a_or_an(phrase):
    """``phrase`` after its indefinite article: 'an' before a vowel letter, as every
    agent's name is said ('an amp event', 'a cursor stream')."""
    return f"an {phrase}" if phrase[:1] in ("a", "e", "i", "o", "u") else f"a {phrase}"


def get(name):
    """The Format of an agent."""
    found = _formats().get(name)
    if found is None:
        raise LookupError(name)
    return found


def all_formats():
    """Every registered Format, in order."""
    return tuple(_formats().values())


def _forced(agent):
    """The format an input of ``agent`` (--agent) with no decisive object is read as:
    its stream's, else its first."""
    found = [each for each in all_formats() if each.agent == agent]
    if not found:
        raise LookupError(agent)
    return next((each for each in found if each.form == "stream"), found[0])


def fallback():
    """The format of an input with no decisive object whose types it names, or None."""
    return next((found for found in all_formats() if found.fallback_types is not None), None)


def leaner():
    """The format an input with no decisive object is read as when one of its objects
    is in the envelope that format shares with others (``leans``), or None."""
    return next((found for found in all_formats() if found.leans is not None), None)


def sharing_envelope(found):
    """The formats that write the envelope of ``found``, ``found`` among them, in order:
    those whose lines are selected by the same ``markers`` (one module reads them all),
    or by markers that wrap them (``__wrapped__``: a format that writes fewer kinds of
    line decodes every line where those would select all it writes)."""
    envelope = _unwrapped(found.markers)
    return tuple(each for each in all_formats() if _unwrapped(each.markers) is envelope)


def _unwrapped(markers):
    return getattr(markers, "__wrapped__", markers)


class Detector:
    """Tells an input's agent from its first JSON objects
    (docs/agents.md#telling-the-agent): the first object decisive for an agent
    decides; after ``DETECT_OBJECTS`` objects, or at the end of the input, with none
    decisive, the input is the agent's whose envelope one of them is in (``leans``:
    Claude's, which Qwen Code and Amp write too), else the fallback format's
    (``fallback``: Cursor's) when every object's type is one of its
    ``fallback_types`` (or there was no object), else no agent's
    (docs/agents.md#when-nothing-is-decisive).
    ``forced``: the agent of ``--agent`` (None for auto): another agent's decisive
    object is then an error, and it is the agent of an input with none that holds an
    object of one of its event types (or no object at all).

    An input with no decisive object and a line that begins an agent's json output
    (``json_output``) is that json output, not stream-json, whatever ``--agent`` says
    (a stream one of whose lines is damaged to look so still has its decisive objects).

    ``add`` and ``end`` return None while undecided, else ``(format, None, None)``, or
    ``(None, line, message)`` for an input that is not read."""

    def __init__(self, forced=None):
        self.forced = None if forced is None else _forced(forced)
        self.modules, self.fallback, self.leaners = _derived("detector", _detection)
        self.leaning = None  # the format of the first object in an envelope (``leans``)
        self.objects = 0
        self.first = None  # (line, type) of the first object
        self.fallback_types = True  # whether every object's type is the fallback's
        self.json_output = None  # the line of the first that begins json output
        # The first non-blank line, when it holds no JSON value: (line, message) of a
        # format that refuses what it begins with (``refuses_text``), or False.
        self.refused_text = None
        # Whether an object's type is one of the forced agent's events.
        self.forced_event = False

    def add(self, data, line):
        """The decision an object at ``line`` makes, or None."""
        self.objects += 1
        kind = data.get("type")
        if self.first is None:
            self.first = (line, kind)
        for module in self.modules:
            if module.decides(data):
                forced = self.forced
                if forced is not None and forced.agent != module.agent:
                    return (None, line, f"{what(module)}, not {forced.agent} "
                                        f"(--agent {forced.agent})")
                return module, None, None
        for module in self.modules:
            refused = None if module.refuses is None else module.refuses(data)
            if refused is not None:
                return None, line, refused
        if self.leaning is None:
            self.leaning = next((module for module in self.leaners if module.leans(data)),
                                None)
        if self.fallback_types:
            self.fallback_types = (self.fallback is not None and kind.__class__ is str
                                   and kind in self.fallback.fallback_types)
        if self.forced is not None and (kind is None or kind.__class__ is str) \
                and self.forced.may_decide(kind):
            self.forced_event = True
        if self.objects >= DETECT_OBJECTS:
            return self.end()
        return None

    def other_line(self, start, line):
        """A line at ``line`` that holds no JSON object (``start``: its first bytes),
        before a decision: the first that begins json output is kept, for ``end``."""
        if self.json_output is None and json_output(start):
            self.json_output = line
        if self.refused_text is None and start.strip():
            self.refused_text = False  # only the first such line, before any object
            for module in self.modules if self.first is None else ():
                message = None if module.refuses_text is None else module.refuses_text(start)
                if message is not None:
                    self.refused_text = (line, message)
                    break

    def end(self):
        """The decision with no decisive object."""
        if self.json_output is not None:
            return None, self.json_output, JSON_OUTPUT
        if self.refused_text:
            return None, *self.refused_text
        if self.forced is not None:
            if self.forced_event or self.first is None:
                return self.forced, None, None
            return None, self.first[0], f"no {self.forced.name} event in the input"
        if self.leaning is not None:
            return self.leaning, None, None
        if self.fallback_types and self.fallback is not None:
            return self.fallback, None, None
        line, kind = self.first
        kind = f'type "{quote(kind)}"' if kind.__class__ is str else "no type"
        return None, line, f"not an agent stream: no known event (first object: {kind})"


def _detection():
    """What every Detector tries: (the formats, the fallback, the formats that lean)."""
    modules = all_formats()
    return modules, fallback(), tuple(module for module in modules if module.leans is not None)


def _derived(key, make):
    """What ``make()`` makes of the registered formats, made once for ``key``."""
    found = _DERIVED.get(key)
    if found is None:
        found = _DERIVED[key] = make()
    return found


class OtherAgents:
    """Tells the objects of an input read as ``module``'s that are decisive for another
    agent (docs/agents.md#another-agents-objects-in-a-stream: bad lines, ``a codex
    event in a claude stream``), at little cost: for each type, only the agents that
    ``may_decide`` on it are tried.
    ``by_type`` holds, for each type seen (at most MAX_TYPES), those agents' tests,
    ``((decides, module), ...)``, so that a caller finds them with one lookup, and
    ``tests`` learns them for a type not seen yet; ``screens`` and ``screen`` the same
    with ``module``'s own test first."""

    def __init__(self, module):
        self.module = module
        self.others = tuple(other for other in all_formats() if other is not module)
        self.by_type = {}
        self.screens = {}

    def screen(self, kind):
        """``tests(kind)``, after ``(module.decides, None)`` where there are two or more
        and ``module`` may decide on ``kind`` too: an object decisive for its own agent
        is no other's, and on the agents whose every line is decisive (Amp's,
        Antigravity's) one test of their own costs less than those of the others.
        Before one other test, it would only add a call (on every delta of a Claude
        stream): there, no object decisive for the reader's agent may be decisive for
        the other too (tests/test_protocol.py merges every pair's objects to check)."""
        tests = self.screens.get(kind)
        if tests is None:
            tests = self.tests(kind)
            if len(tests) > 1 and self.module.may_decide(kind):
                tests = ((self.module.decides, None), *tests)
            if len(self.screens) < MAX_TYPES:
                self.screens[kind] = tests
        return tests

    @staticmethod
    def of(module):
        """The OtherAgents of ``module``'s inputs, one for all of them: what it learns of
        a type holds in every input (each learning it again costs as much as reading a
        session file's few lines)."""
        return _derived(("others", module), lambda: OtherAgents(module))

    def tests(self, kind):
        """The tests of the other agents that may decide on objects of type ``kind`` (a
        string, or None for an object with no string type, which only an agent whose
        objects have none may decide on): ``((decides, module), ...)``."""
        tests = self.by_type.get(kind)
        if tests is None:
            tests = tuple((other.decides, other) for other in self.others
                          if other.may_decide(kind))
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

