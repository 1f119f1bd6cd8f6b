"""The format protocol: what a format module declares about its agent's stream, in one
``Format`` object named ``FORMAT``, with the defaults filled in here once.

The frame and the verbs know an agent only through this object: how its stream is
told from others (``decides``, ``may_decide``), which lines matter (``markers``), which
objects begin a run (``run_starts``), how its events become the common model
(``reader``), the checks of validate (``checks``), where a large stream may be cut
(``splits_between``), how its answer is known, and the prose its commands' --help
says of it.  ``ndagent/formats/template.py`` is a module to copy for a new agent;
CONTRIBUTING.md walks through it.
"""

import json

import orjson

from ndagent.decoder import Skipped
from ndagent.jsonvalues import RawNumber
from ndagent.model import Note, json_size
from ndagent.selection import Selection

# The verbs whose --help may say something of an agent (``Format.help``).
HELP_VERBS = ("json", "result", "text", "tools", "validate", "stats", "run", "markdown",
              "html")

# What a format reads of its agent: the stream it prints, or the session files it keeps.
FORMS = ("stream", "session")

# What a Reader holds unread at most (``Holding``) before it reads it all the same (but
# for one item that is more alone): items (a line decoded, or a stretch of lines passed
# over), and bytes (of the lines passed over, or about what Python holds of those
# decoded).
MAX_HELD_ITEMS = 50_000
MAX_HELD_BYTES = 16 << 20


class Format:
    """One agent's stream.

    Required: ``name`` (``--agent NAME``, lower case), ``title`` (for people: "Codex
    CLI"), ``invocation`` (the command line that prints the stream), ``decides(data)``
    (whether a decoded object is decisive for this agent: keys and values, never key
    order; exclusive with every other format's), ``may_decide(kind)`` (whether
    ``decides`` can be true of an object whose type is the string ``kind``, or, with
    ``kind`` None, of an object with no string type: only an agent whose objects have
    no ``type`` says yes),
    ``markers(needs)`` (the ``selection.Selection`` markers of the lines that can
    matter for ``needs``, a set of "text", "tools", "tool_ends", "ends", "native",
    "transcript" (the prompt, thinking, stream times), "whole_text" (a message's text
    may come once whole: streamed deltas that whole lines repeat may be passed over)
    and, for a format that ``reports_messages``, "messages";
    the lines that begin and end runs always among them; or None to decode every
    line), ``run_starts`` (the markers of the objects with which the agent begins a
    run, as its stream's first object does; ``begins_run(data)`` tests one: where such
    an object ends a line cut short just after a ``:``, ``,`` or ``[``, it is the first
    line of another stream appended there, not an object nested in the line; the
    ``markers`` take it always), ``reader`` (the Reader class:
    ``reader(source, checks, needs)``, with ``event(item)``, ``skipped(item)`` and
    ``finish()``, each a list of model events, and ``awaits_run()``, whether lines
    passed over would begin a run now; the frame sets its ``replay(held, read)``,
    which reads items the Reader held unread (Events, lines passed over) after all, in
    order, each event with ``read(event)``, as the frame reads an event),
    ``checks`` ({check: (severity, meaning)} of its schema checks; one named as a
    generic check of validate gives that check this agent's severity) and ``run_end``
    (the event that ends a run, for the message of a run cut off: "a result event").

    Optional: ``live_answer`` (the answer is all the run's Text, known as it arrives,
    rather than only at its end: then a failed run's text is still its answer, and
    validate compares the two), ``separator`` (what ``result --live`` prints between
    two messages), ``noise_lines`` (the lines that are not JSON which the agent's CLI is
    known to write on its stream, banners and runtime warnings: the bytes each begins
    with; such a line is a warning of its own check,
    ``noise``, in every verb, where any other line that is not JSON is an error in
    validate), ``strict_only`` (checks reported only under
    --strict), ``splits_between(before, after, checks)`` with ``split_needle`` (whether
    the stream may be cut between two adjacent decoded lines, each part read on its
    own with the same findings; bytes that every line ``after`` holds, to find them
    by), ``refuses(data)`` (what to say of an object that tells an input ndagent does
    not read: an older shape of the stream, another agent's stream in this one's
    envelope; None for any other), ``refuses_text(start)`` (what to say of an input
    whose first non-blank line holds no JSON value and begins with the bytes ``start``,
    when that tells a form of the agent's output ndagent does not read, and it holds no
    decisive object: a text transcript; None for any other),
    ``reports_cost`` (its RunEnd carries the run's cost, ``cost_usd``: ``run
    --max-cost`` can know it, at the run's end), ``reports_messages`` (its Reader makes
    ``Message`` events, with their usage, for the need "messages"),
    ``running_total`` (where a run's figures are running totals, what of: "process",
    "thread"; its Reader then fills ``RunEnd.totals``, ndagent.totals) with
    ``own_native(native, before)`` (the run's json object with its figures made the
    run's own, ``before`` being the ``native`` of the totals before; None: the object
    is the agent's own, left as it is),
    ``fallback_types`` (the event types of an input with no decisive object that is
    then read as this agent's; one format at most), ``leans(data)`` (whether an object
    decisive for no agent is of the envelope this agent shares with others, which
    none of its objects tells apart: an input with no decisive object and such an
    object is read as this agent's, before ``fallback_types`` are tried; its Reader
    says so to validate), ``help`` ({verb: prose}: what that
    verb's --help and man page say of this agent, a paragraph headed by its title; a
    verb names no agent), ``result_text(end)`` (what a transcript shows as a call's
    result, from its ToolEnd: a string, or None for no output; by default
    ``result_json``), ``interchange`` ((name, provider): the agent's name in OpenTelemetry
    and ATIF output, Harbor's ``AgentName`` where it has one, and the GenAI provider
    of its model calls, OpenTelemetry's well-known value or the agent's own where it
    routes to several; by default the format's name for both), ``extra_figures``
    ({name: meaning} of the figures its runs report besides the common ones, in
    ``RunEnd.extra``: stats sums each over a group's runs and prints it, and its
    --help says each name with its meaning, a short phrase) and ``order`` (where it
    stands in listings).

    A format reads one form of one agent's output: ``agent`` names the agent (default
    ``name``; ``--agent`` names agents, and forces each of its forms), ``form`` says
    which: "stream" (what the agent prints) or "session" (the files it keeps on disk,
    docs/agents.md#session-files; their runs end ``ok``, ``failed``, ``interrupted`` or
    ``open``, RunEnd.outcome).  ``document(value, text)``: the records of an input
    that is one JSON document rather than lines (``value``, decoded from the bytes
    ``text``: a pretty-printed object), when it is this format's, as ``[(line, object),
    ...]`` in order, read like decoded lines; a message when it is a document of the
    agent's that is no input ndagent reads; None when it is not the agent's.
    ``stores(environ, home)``: the folders a session format's agent keeps its files in
    by default, from the environment and the home folder (``--sessions``), whether
    they exist or not."""

    __slots__ = ("name", "title", "invocation", "decides", "may_decide", "markers",
                 "run_starts", "begins_run", "reader", "checks", "run_end", "live_answer",
                 "separator", "noise_lines", "strict_only", "splits_between", "split_needle",
                 "refuses", "refuses_text", "reports_cost", "reports_messages",
                 "running_total", "own_native", "fallback_types", "leans", "help",
                 "result_text", "interchange", "extra_figures", "order", "agent", "form",
                 "document", "stores")

    def __init__(self, *, name, title, invocation, decides, may_decide, markers, run_starts,
                 reader, checks, run_end, live_answer=False, separator="\n\n", noise_lines=(),
                 strict_only=(), splits_between=None, split_needle=None, refuses=None,
                 refuses_text=None, reports_cost=False, reports_messages=False, running_total=None,
                 own_native=None, fallback_types=None, leans=None, help=None, result_text=None,
                 interchange=None, extra_figures=None, order=100, agent=None, form="stream",
                 document=None, stores=None):
        if not (name.isascii() and name.isidentifier() and name.islower()):
            raise ValueError(f"a format's name is a lower-case word: {name!r}")
        if (splits_between is None) != (split_needle is None):
            raise ValueError(f"{name}: splits_between and split_needle go together")
        unknown = set(help or {}) - set(HELP_VERBS)
        if unknown:
            raise ValueError(f"{name}: help for no such verb: {sorted(unknown)}")
        self.name, self.title, self.invocation = name, title, invocation
        self.decides, self.may_decide, self.markers = decides, may_decide, markers
        self.run_starts = tuple(run_starts)
        self.begins_run = Selection(self.run_starts).wants
        self.reader, self.checks, self.run_end = reader, checks, run_end
        self.live_answer, self.separator = live_answer, separator
        self.noise_lines = tuple(noise_lines)
        self.strict_only = frozenset(strict_only)
        self.splits_between, self.split_needle = splits_between, split_needle
        self.refuses, self.refuses_text = refuses, refuses_text
        self.reports_cost, self.reports_messages = reports_cost, reports_messages
        self.running_total, self.own_native = running_total, own_native
        self.fallback_types = None if fallback_types is None else frozenset(fallback_types)
        self.leans = leans
        self.extra_figures = dict(extra_figures or {})
        for figure_name in self.extra_figures:
            if not (figure_name.isascii() and figure_name.isidentifier()
                    and figure_name.islower()):
                raise ValueError(f"{name}: an extra figure's name is a lower-case word: "
                                 f"{figure_name!r}")
        self.help = dict(help or {})
        if self.extra_figures:
            said = "; ".join(f"{figure_name}, {meaning}"
                             for figure_name, meaning in self.extra_figures.items())
            self.help["stats"] = " ".join(filter(None, (
                self.help.get("stats"), f"Its runs' extra figures: {said}.")))
        self.result_text = result_text or (lambda end: result_json(end.result))
        self.interchange = interchange or (name, name)
        self.order = order
        self.agent = name if agent is None else agent
        if form not in FORMS:
            raise ValueError(f"{name}: form is one of {FORMS}: {form!r}")
        self.form, self.document, self.stores = form, document, stores

    def is_noise(self, bad):
        """Whether the bad line ``bad`` (a decoder BadLine) is one the agent's CLI is known
        to write besides its stream (``noise_lines``), rather than damage."""
        return (not bad.cut_off
                and bad.start.removeprefix(b"\xef\xbb\xbf").startswith(self.noise_lines))

    def answer(self, end):
        """The answer of a run at its end (a model RunEnd), as the agent's own json mode
        gives it ("" where it gave none), or None for a run that has none: a failed
        run has one only where the answer is live and its end gives it (its text is the
        answer whatever came of the run)."""
        if not (end.ok or end.cutoff or (self.live_answer and end.answer.__class__ is str)
                or end.outcome in ("interrupted", "open")):
            return None
        return end.answer if end.answer.__class__ is str else ""

    def __repr__(self):
        return f"<format {self.name}>"


def first_string(args, keys):
    """The first of ``args``' values under ``keys`` that is a string, or None (``args``
    may be anything decoded): what a tool call acts on, for the agents whose calls
    carry their arguments as an object, each agent with its own keys."""
    if args.__class__ is not dict:
        return None
    for key in keys:
        value = args.get(key)
        if value.__class__ is str:
            return value
    return None


def result_json(value):
    """What a transcript shows of a call's result ``value`` (anything decoded) when its
    agent says nothing more precise: a string as it is, else the JSON indented by 2,
    keys in stream order, non-ASCII kept; None for no output (None, "")."""
    if value is None or value == "":
        return None
    if value.__class__ is str:
        return value
    return indented_json(value)


def indented_json(value):
    """``value`` as JSON indented by 2, keys in stream order, non-ASCII kept (lone
    surrogates too, which the transcripts spell out)."""
    try:
        return orjson.dumps(value, default=_raw_number, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # lone surrogates, nesting deeper than orjson writes
        # A RawNumber here is written as a string: rare, and still its digits.
        return json.dumps(value, indent=2, ensure_ascii=False,
                          default=lambda raw: getattr(raw, "text", None))


def _raw_number(value):
    if value.__class__ is RawNumber:
        return orjson.Fragment(value.text.encode())
    raise TypeError


def with_exit_code(output, code):
    """A command's output, then a last line ``exit code N`` when ``code`` is not 0; None
    for no output at all."""
    if code != 0:
        separator = "" if not output or output.endswith("\n") else "\n"
        output += f"{separator}exit code {code}"
    return output or None


def joined_texts(blocks, image="[image]"):
    """The ``text`` of a content list's ``text`` blocks joined with newlines (an
    ``image`` block as ``image``), or None when the list holds none of them."""
    found = []
    for block in blocks:
        if block.__class__ is dict:
            kind = block.get("type")
            if kind == "text" and block.get("text").__class__ is str:
                found.append(block["text"])
            elif kind == "image":
                found.append(image)
    return "\n".join(found) if found else None


def text_or_none(value):
    """A field of the stream as text: ``value`` when it is a string, else None."""
    return value if value.__class__ is str else None


def note_at(item, check, message):
    """The Note of a format's ``check`` at ``item`` (anything with a source and a line)."""
    return Note(check=check, message=message, source=item.source, line=item.line)


class Holding:
    """What a Reader holds of the lines that may not be needed, unread (Events, and
    lines passed over alike, so that the prefilter changes nothing), until a later line
    tells: ``release`` reads them after all, in order, as the Reader reads a line (the
    frame's ``replay``); ``drop`` forgets them.  Past MAX_HELD_ITEMS items or
    MAX_HELD_BYTES bytes, what is held is read first: memory stays bounded."""

    held, held_bytes = (), 0
    replay = None  # the frame's

    def hold(self, item):
        """Hold ``item``, an Event or lines passed over; what is held already is read
        first where the item would take it past a bound.  Never the item itself: the
        call that holds it may begin its run (nothing is held then), whose RunStart
        comes before what it says."""
        if item.__class__ is Skipped:
            size = 0 if item.text is None else item.end - item.begin
        else:  # decoded (every line is, with --strict): its bytes as Python holds them
            size = json_size(item.data)
        if self.held and (len(self.held) >= MAX_HELD_ITEMS
                          or self.held_bytes + size > MAX_HELD_BYTES):
            self.release()
        if not self.held:
            self.held = []
        self.held.append(item)
        self.held_bytes += size

    def drop(self):
        self.held, self.held_bytes = (), 0

    def release(self):
        held = self.held
        self.drop()
        self.replay(held, self.read_now)

    def read_now(self, event):
        """Read ``event`` as the Reader reads a line it does not hold."""
        return type(self).event(self, event)

    def finish_holding(self):
        """The end of the input: what is held is read, then the run in hand ends."""
        if self.held:
            self.release()
        return type(self).finish(self)
