"""The common event model: what every format module makes of its agent's events.

The verbs see only these.  Each agent's format module (``ndagent.formats``) reads its
raw events and hands on, in stream order:

- ``RunStart``: a run begins;
- ``Text``: a piece of the assistant's main-thread text as it arrives, each piece once
  (what ``result --live`` prints), with the key of the message it belongs to;
- ``Prompt``, ``Thinking`` and (Claude's envelope) ``Message``: the user's prompt, the
  model's reasoning, made only for a command that needs ``"transcript"`` (the
  transcripts, and outputs of the same detail), and each assistant message's own
  figures, made only for a command that needs ``"messages"``;
- ``ToolStart`` and ``ToolEnd``: a tool call begins and ends, in the common vocabulary
  of kinds and outcomes below;
- ``Note``: something ``validate`` reports (a check, its severity, a message);
- ``RunEnd``: the run is over, ended by the agent (ok or failed) or cut off.

Every event knows its ``source`` and ``line``.  This module imports no format; it also
holds what the frame does with the events whatever their agent: the call pairer
(``CallPairer``), the same mechanism for what a format's Reader keeps of a run
(``Kept``), and the estimate of a value's size (``json_size``).
"""

import re
from collections import OrderedDict, deque
from datetime import date  # loaded already: orjson imports it as it starts
from sys import getsizeof

from ndagent.decoder import encode_line, encode_value

__all__ = [
    "ACTIONS",
    "Answer",
    "CallPairer",
    "FORGOTTEN",
    "KINDS",
    "Kept",
    "KeptInOrder",
    "MAX_OPEN_BYTES",
    "MAX_OPEN_CALLS",
    "Message",
    "NATIVE_BYTES",
    "Note",
    "OUTCOMES",
    "OUTCOME_SUFFIXES",
    "Prompt",
    "READER_CALL_BYTES",
    "RunEnd",
    "RunStart",
    "SESSION_OUTCOMES",
    "Text",
    "Thinking",
    "UNFINISHED",
    "ToolEnd",
    "ToolStart",
    "json_size",
    "key_digest",
    "run_outcome",
]

# The tool kinds every format maps its tools onto (Cursor's names); a tool outside them
# keeps its own name as its kind.
KINDS = ("read", "write", "edit", "shell", "delete", "ls", "glob", "grep", "semSearch",
         "webFetch", "webSearch", "mcp", "task", "updateTodos", "function")

# How a tool call ended.  unknown: an end whose outcome cannot be read; pending: no end.
OUTCOMES = ("success", "failure", "permissionDenied", "rejected", "error", "unknown",
            "pending")

# The `text` format's line for each kind; any other kind is "Used tool".
ACTIONS = {
    "read": "Read file",
    "write": "Created new file",
    "edit": "Edited file",
    "shell": "Ran terminal command",
    "delete": "Deleted file",
    "ls": "Listed directory",
    "updateTodos": "Updated to-do list",
    "function": "Called tool",
    "glob": "Searched for files",
    "grep": "Searched file contents",
    "semSearch": "Searched codebase",
    "webFetch": "Fetched web page",
    "webSearch": "Searched the web",
    "mcp": "Called MCP tool",
    "task": "Ran subagent",
}

# The `text` format's suffix for each outcome other than success.
OUTCOME_SUFFIXES = {
    "failure": " (failed)",
    "permissionDenied": " (denied)",
    "rejected": " (rejected)",
    "error": " (error)",
    "unknown": " (unknown)",
}


class _Event:
    """Fields by name, as slots: the model's events are many and small."""

    __slots__ = ()

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class RunStart(_Event):
    """A run begins: at ``source:line``, of ``agent``; session, model, cwd or None.
    ``announced``: the run began at the event its agent begins runs with (an init, a
    thread or turn start); false for a run made up of events that came after an ended
    run, or before any, without such an event (a late line must not pass for a new run
    where it matters whether the agent is still at work: ``run``'s --grace).
    ``version``: the agent CLI's version, where its stream says.  ``time_ms``: the
    stream time (epoch milliseconds) of the run's first event that has one, or None;
    a Reader may learn it from a later event than the one the RunStart is made at, and
    sets it then, so it is complete when the run's RunEnd (whose ``start`` this is) is
    handed on.

    Of a session file's run (``form`` "session"; None for a stream's): its ``prompt``,
    ``started`` (an ISO time, or None) and ``project`` (a cwd, or the store's folder
    name, or None)."""

    __slots__ = ("agent", "session_id", "model", "cwd", "source", "line", "announced",
                 "version", "time_ms", "form", "prompt", "started", "project")


class Text(_Event):
    """A piece of main-thread assistant text, as the agent delivers it, never twice:
    ``message`` is the key of the message it belongs to (two messages are told apart
    by it).  ``time_ms``: when, in epoch milliseconds, where the stream says (as for
    ToolStart), else None."""

    __slots__ = ("text", "message", "source", "line", "time_ms")

    def __init__(self, text=None, message=None, source=None, line=None, time_ms=None):
        # Spelt out: the most frequent event, made for each piece of text.
        self.text = text
        self.message = message
        self.source = source
        self.line = line
        self.time_ms = time_ms


class Prompt(_Event):
    """The user's prompt, where the stream holds it (the agent echoes or replays it):
    its ``text``, whole.  Made only for the need ``"transcript"``."""

    __slots__ = ("text", "source", "line")


class Thinking(_Event):
    """A stretch of the model's main-thread reasoning (thinking blocks, reasoning
    items), whole, never empty, in stream order among the Text and tool events;
    ``message``: the key of the message it belongs to, where the stream says, else
    None.  Made only for the need ``"transcript"``."""

    __slots__ = ("text", "message", "source", "line")


class Message(_Event):
    """One main-thread assistant message of an agent that reports figures per message
    (Claude's envelope), handed on once per key, when docs/model.md#messages says:
    ``key`` (the message id), ``model``, ``first_line`` and ``last_line`` (its first
    line, and its last read when it was handed on), ``first_ms`` and ``last_ms``
    (their stream times, or None), ``usage`` ({input, cacheRead, cacheWrite, output}
    as the message reports them, or None; ``output`` only from a ``message_delta``, the
    final count, else None).  ``source`` and ``line``: where it was handed on.  Made
    only for the need ``"messages"``."""

    __slots__ = ("key", "model", "first_line", "last_line", "first_ms", "last_ms", "usage",
                 "source", "line")


class ToolStart(_Event):
    """A tool call begins.  ``kind``: the common kind; ``name``: the agent's own tool
    name; ``args``: its arguments (or None); ``target``: what it acts on, for people
    (a path, a command, a pattern, a query, a url, a tool name) or None;
    ``time_ms``: when, in epoch milliseconds, where the stream says."""

    __slots__ = ("call_id", "kind", "name", "args", "target", "session_id",
                 "model_call_id", "parent", "time_ms", "source", "line")

    def __init__(self, call_id=None, kind=None, name=None, args=None, target=None,
                 session_id=None, model_call_id=None, parent=None, time_ms=None,
                 source=None, line=None):
        # Spelt out, as for Text: one for each tool call.
        self.call_id = call_id
        self.kind = kind
        self.name = name
        self.args = args
        self.target = target
        self.session_id = session_id
        self.model_call_id = model_call_id
        self.parent = parent
        self.time_ms = time_ms
        self.source = source
        self.line = line


class ToolEnd(_Event):
    """A tool call ends: its ``outcome`` (one of OUTCOMES but pending) and ``result``;
    the fields of ToolStart that the end event tells too (a call may end with no start
    seen: then they are all there is)."""

    __slots__ = ("call_id", "kind", "name", "args", "target", "session_id",
                 "model_call_id", "parent", "time_ms", "outcome", "result", "source",
                 "line")

    def __init__(self, call_id=None, kind=None, name=None, args=None, target=None,
                 session_id=None, model_call_id=None, parent=None, time_ms=None,
                 outcome=None, result=None, source=None, line=None):
        self.call_id = call_id
        self.kind = kind
        self.name = name
        self.args = args
        self.target = target
        self.session_id = session_id
        self.model_call_id = model_call_id
        self.parent = parent
        self.time_ms = time_ms
        self.outcome = outcome
        self.result = result
        self.source = source
        self.line = line


class Note(_Event):
    """What ``validate`` reports at ``source:line``: a ``check`` (a name in the format's
    or the model's table of checks) and a ``message``."""

    __slots__ = ("check", "message", "source", "line")


class RunEnd(_Event):
    """A run is over.  ``start``: its RunStart.  ``cutoff``: the input ended, or the
    next run began, before the agent ended it; else ``ok`` says how it ended and
    ``failure`` why it failed.  ``answer``: the answer as the agent's own json mode
    reports it (for a cut-off run, what it would have been), or None.  ``native``: the
    agent's own single json object for the run, or None.  ``usage``: {input, cacheRead,
    cacheWrite, output} or None; ``cost_usd``, ``duration_ms``, ``model`` or None.
    ``source``/``line``: where it ended (the end event; for a run cut off, the frame
    puts the input's last line decoded, or the line that began the next run).
    ``stray``: the "run" is only events that followed an ended run without beginning a
    new one, which the format's checks report (``validate`` then checks no end and no
    answer of it).  ``outcomes``: {call_id: outcome} of the run's calls whose outcome
    only its end tells (Claude's ``permission_denials``), or None: the final outcome
    of a call that ended before (a verb that printed it then keeps what it printed),
    or the outcome of one still open.  ``totals``: (key, index, state) where the
    agent reports running totals (ndagent.totals), else None; ``tokens_from``, once
    they are settled: "run" (the figures are the run's own) or "<what>_total" (a
    running total as the agent gave it, the runs before it not in the input).
    ``time_ms``: the stream time of the end event, or None.  ``error_type``: for a
    failed run, a short class of its failure from the agent's own names (a result
    subtype, an HTTP status, an error type), else "_OTHER"; for a run cut off,
    "cutoff"; None for a run that ended ok.  A Reader sets it where its agent names
    the failure; the frame sets the rest ("_OTHER", "cutoff").

    Of a session file's run: ``outcome`` ("ok", "failed", "interrupted": the user
    stopped it, or "open": the file ends inside it; neither of the last two is a
    failure, and ``ok`` is false for both), ``ended`` (an ISO time, or None) and
    ``usage_parts``, its usage by API message ({key: (model, usage)}, or None), for
    counting each message once across inputs that hold copies of it.  ``extra``: the
    run's figures besides the common ones, {name: number} of names its format declares
    (``Format.extra_figures``: OpenCode's steps), or None."""

    __slots__ = ("start", "cutoff", "ok", "failure", "answer", "native", "usage",
                 "cost_usd", "duration_ms", "model", "stray", "outcomes", "source", "line",
                 "totals", "tokens_from", "time_ms", "error_type", "outcome", "ended",
                 "usage_parts", "extra")


# How a session file's run may end (RunEnd.outcome); the two last are no failure.
SESSION_OUTCOMES = ("ok", "failed", "interrupted", "open")
UNFINISHED = ("interrupted", "open")


def run_outcome(end):
    """How a run ended, as the verbs name it: a session run's own outcome, else "ok",
    "failed" or "cutoff"."""
    if end.outcome is not None:
        return end.outcome
    return "cutoff" if end.cutoff else "ok" if end.ok else "failed"


class Answer:
    """A digest of text as it arrives, to compare with the agent's own answer without
    keeping the text: pieces are hashed once they add up to 64 KiB, or when compared."""

    __slots__ = ("length", "ends_with_newline", "_pieces", "_waiting", "_digest")

    def __init__(self):
        self.length = 0
        self.ends_with_newline = False
        self._pieces = []
        self._waiting = 0
        self._digest = None

    def add(self, text):
        if text:
            self.length += len(text)
            self.ends_with_newline = text[-1] == "\n"
            self._pieces.append(text)
            self._waiting += len(text)
            if self._waiting > 1 << 16:
                self._hash_pieces()

    def _hash_pieces(self):
        if self._digest is None:
            self._digest = _blake2b()(digest_size=16)
        self._digest.update("".join(self._pieces).encode("utf-8", "surrogatepass"))
        self._pieces.clear()
        self._waiting = 0

    def digest(self):
        self._hash_pieces()
        return self._digest.digest()

    def matches(self, text):
        """Whether ``text`` equals the text added."""
        if text.__class__ is not str or len(text) != self.length:
            return False
        other = Answer()
        other.add(text)
        return other.digest() == self.digest()


# The bounds on what a command keeps of the tool calls open at once (CallPairer): a
# stream may start calls and never complete them, a million, or 20 000 with 50 KB of
# arguments each.  The count also bounds the fixed cost of each call kept.
MAX_OPEN_CALLS = 100_000
MAX_OPEN_BYTES = 32 << 20
# A call_id longer than this is kept as a 16-byte digest of it (real ones have about 85
# characters).
LONG_CALL_ID = 128


class CallPairer:
    """Pairs the start of each tool call with its end, by call_id, in bounded memory.

    For each call started and not yet completed it keeps only what the caller gives
    it (a value, and what it costs in bytes, estimated once: ``sys.getsizeof`` of a
    string, ``json_size`` of a JSON value), and the call_id, or a digest of it when it
    is longer than ``LONG_CALL_ID``.  When more than ``max_calls`` calls are open, or
    their bytes pass ``max_bytes``, the oldest are dropped (a call of more than
    ``max_bytes`` alone, at once) and handed back to the caller, who reports them.  It
    knows nothing of any agent's events: keys, values and sizes only."""

    max_calls = MAX_OPEN_CALLS
    max_bytes = MAX_OPEN_BYTES

    def __init__(self, max_bytes=None):
        if max_bytes is not None:
            self.max_bytes = max_bytes
        # key → (value, size), in start order; an OrderedDict drops its first item in
        # constant time, where a dict scans the holes left by the items dropped before.
        self._open = OrderedDict()
        self._bytes = 0

    def __len__(self):
        return len(self._open)

    def start(self, key, value, size):
        """Keep ``value`` (not None; of about ``size`` bytes) for the call ``key``, which
        starts.  ``(earlier, dropped)``: the value of an open call of the same key, which can no
        longer complete (or None), and the values dropped to stay within the bounds,
        oldest first (usually none).  A call with no key (None) cannot complete: it is
        kept until ``close``, which hands it back with the calls still open."""
        if key is None:
            key = object()
        elif len(key) > LONG_CALL_ID:
            key = key_digest(key)
        size += getsizeof(key)
        calls = self._open
        earlier = calls.pop(key, None)
        if earlier is not None:
            self._bytes -= earlier[1]
            earlier = earlier[0]
        if size > self.max_bytes:  # alone beyond the bound: the others may stay
            return earlier, (value,)
        calls[key] = (value, size)
        self._bytes += size
        if len(calls) <= self.max_calls and self._bytes <= self.max_bytes:
            return earlier, ()
        dropped = []
        while len(calls) > self.max_calls or self._bytes > self.max_bytes:
            kept, kept_size = calls.popitem(last=False)[1]
            self._bytes -= kept_size
            dropped.append(kept)
        return earlier, dropped

    def complete(self, key):
        """The value of the open call ``key``, which completes; None when it is not open."""
        if len(key) > LONG_CALL_ID:
            key = key_digest(key)
        found = self._open.pop(key, None)
        if found is None:
            return None
        self._bytes -= found[1]
        return found[0]

    def get(self, key):
        """The value of the open call ``key``, which stays open; None when it is not open."""
        if len(key) > LONG_CALL_ID:
            key = key_digest(key)
        found = self._open.get(key)
        return None if found is None else found[0]

    def close(self):
        """The values of the calls still open, in start order; none is kept after."""
        values = [value for value, _ in self._open.values()]
        self._open.clear()
        self._bytes = 0
        return values

    @property
    def overflow(self):
        """Why calls are dropped, for messages: 'too many tool calls open at once (kept:
        at most 100000 calls and 32 MiB)'."""
        return f"too many tool calls open at once (kept: {self.bounds})"

    @property
    def bounds(self):
        """'at most 100000 calls and 32 MiB'."""
        size = self.max_bytes
        size = f"{size >> 20} MiB" if size % (1 << 20) == 0 else f"{size} bytes"
        return f"at most {self.max_calls} calls and {size}"


# The check of the Note a Reader makes when it forgets the oldest of what it keeps of a
# run, to stay within its bounds (``Kept``): validate reports it, every other verb warns
# of it once.
FORGOTTEN = "memory-bound"
# What a format's Reader keeps of a run, beside the frame's pairer, in bytes: of each
# call open, what its end may not tell (its kind and name: Gemini's and Claude's ends
# name no tool), or what it must check it against (Codex's item type); and what its
# native object holds beyond the event that ends the run (Codex's items, Gemini's
# warnings), for ``json`` only.
READER_CALL_BYTES = 8 << 20
NATIVE_BYTES = 64 << 20
# What each value kept by a Reader costs beyond its own bytes and its key's: its entry
# in the OrderedDict, the pair it is kept in, its size.
KEPT_ENTRY = 200
# What a value kept as its encoding costs beyond the length of its JSON: the bytes
# object's header and the EncodedJson holding it.
ENCODED_BYTES = 80


class Kept(CallPairer):
    """What a format's Reader keeps of the run in hand, by key (a call_id), in bounded
    memory: the pairer's mechanism with a byte bound of its own.  Beyond it the oldest
    values are forgotten, and the first time, a Note says so (check ``FORGOTTEN``):
    ``what`` is kept ("the tool calls open at once"), ``lost`` what forgetting loses."""

    def __init__(self, max_bytes, what, lost):
        super().__init__(max_bytes)
        self.what = what
        self.lost = lost
        self.said = False

    def keep(self, key, value, size, item, out):
        """Keep ``value`` (of about ``size`` bytes) under ``key``, in place of any value
        of the same key; when the oldest must go, the first time, a Note at ``item``
        (an Event) in ``out``."""
        _, dropped = self.start(key, value, size + KEPT_ENTRY)
        if dropped and not self.said:
            self.said = True
            out.append(_forgotten(self, item))


class KeptInOrder:
    """What a format's Reader keeps of the run in hand and never asks for by key (Codex's
    completed items, Gemini's warnings), in order, within the bounds ``Kept`` has; the
    oldest are forgotten beyond them, and the first time, a Note says so."""

    max_calls = MAX_OPEN_CALLS

    def __init__(self, max_bytes, what, lost):
        self.max_bytes = max_bytes
        self.what = what
        self.lost = lost
        self.said = False
        self._values = deque()  # (value, size), oldest first
        self._bytes = 0

    bounds = CallPairer.bounds

    def keep(self, value, size, item, out):
        """Keep ``value`` (of about ``size`` bytes); when the oldest must go, the first
        time, a Note at ``item`` (an Event) in ``out``."""
        size += KEPT_ENTRY
        values = self._values
        if size <= self.max_bytes:  # else alone beyond the bound: the others may stay
            values.append((value, size))
            self._bytes += size
            if self._bytes <= self.max_bytes and len(values) <= self.max_calls:
                return
            while self._bytes > self.max_bytes or len(values) > self.max_calls:
                self._bytes -= values.popleft()[1]
        if not self.said:
            self.said = True
            out.append(_forgotten(self, item))

    def keep_encoded(self, value, item, out):
        """Keep the JSON value ``value`` as its encoding: it costs the length of its
        JSON (measured, where a decoded value is estimated) and is written again as it
        stands."""
        encoded = encode_value(value)
        self.keep(encoded, len(encoded.data) + ENCODED_BYTES, item, out)

    def close(self):
        """The values kept, oldest first; none is kept after."""
        values = [value for value, _ in self._values]
        self._values.clear()
        self._bytes = 0
        return values


def _forgotten(kept, item):
    """The Note of what a Reader forgets first (``Kept``, ``KeptInOrder``)."""
    return Note(check=FORGOTTEN, message=f"{kept.what}: more than is kept in memory "
                f"({kept.bounds.replace(' calls', '')}): {kept.lost}",
                source=item.source, line=item.line)


def key_digest(key):
    """A long key (a call_id, a running total's key) as 16 bytes that stand for it."""
    return _blake2b()(key.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _blake2b():
    """The hash of answers and keys, loaded when first needed."""
    from hashlib import blake2b  # lazy: hashlib loads OpenSSL (2 ms at start-up)

    return blake2b


def json_size(value):
    """About how many bytes a decoded JSON value holds in Python, from its JSON, cheaply
    (C does the work) and erring high: the length of the JSON, four times that when it
    is not all ASCII (Python may keep a string at 4 bytes a character), and 80 bytes for
    each comma and colon in it (one or two for each value in an object or array)."""
    data = encode_line(value)
    size = len(data) if data.isascii() else 4 * len(data)
    return size + 80 * (data.count(b",") + data.count(b":") + 1)


def epoch_ms(value, zone_required=True):
    """Milliseconds since the epoch of an ISO 8601 time (``2026-05-11T08:02:14.310Z``, as
    JavaScript writes it), or None; one without a zone is taken as UTC unless
    ``zone_required``.  The agents' timestamps, for durations."""
    if value.__class__ is not str:
        return None
    global _LAST
    if _LAST[0] == value and _LAST[1] is zone_required:
        return _LAST[2]
    found = _epoch_ms(value, zone_required)
    _LAST = (value, zone_required, found)
    return found


def _epoch_ms(value, zone_required):
    # Its minute (YYYY-MM-DDTHH:MM, 16 characters), which a run's lines share, is read
    # once; the rest each time.
    minutes = _MINUTES.get(value[:16])
    if minutes is None:
        minutes = _minutes(value)
        if minutes is None:
            return None
        if len(_MINUTES) < MAX_MINUTES:
            _MINUTES[value[:16]] = minutes
    match = _SECONDS.fullmatch(value, 16)
    if match is None:
        return None
    second, fraction, zone, sign, zone_h, zone_m = match.groups()
    if not zone and zone_required:
        return None
    second = int(second)
    if second > 60:
        return None
    seconds = minutes * 60 + second
    if sign is not None:
        offset = (int(zone_h) * 60 + int(zone_m)) * 60
        seconds += -offset if sign == "+" else offset
    return seconds * 1000 + (int(fraction[:3].ljust(3, "0")) if fraction else 0)


def _minutes(value):
    """Minutes since the epoch of the minute an ISO 8601 time begins with, or None (not
    one, or no such date or time).  The patterns are made at its first call (not at
    start-up), which comes before epoch_ms reads the rest of any time."""
    global _MINUTE, _SECONDS
    if _MINUTE is None:
        _MINUTE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2})")
        _SECONDS = re.compile(r":([0-9]{2})(?:[.,]([0-9]+))?"
                              r"((?:[Zz]|([+-])([0-9]{2}):?([0-9]{2}))?)")
    match = _MINUTE.match(value)
    if match is None:
        return None
    year, month, day, hour, minute = match.groups()
    hour, minute = int(hour), int(minute)
    if hour > 23 or minute > 59:
        return None
    try:
        days = date(int(year), int(month), int(day)).toordinal() - _EPOCH_DAY
    except ValueError:
        return None
    return (days * 24 + hour) * 60 + minute


_MINUTE = _SECONDS = None
# The last time read, and what it was read as: the lines of a stream come many to the
# same time (a message's deltas), each read once per line.
_LAST = (None, None, None)
_EPOCH_DAY = 719163  # date(1970, 1, 1).toordinal()
# The minutes epoch_ms has met, as written (YYYY-MM-DDTHH:MM) -> minutes since the
# epoch; at most MAX_MINUTES of them (a few MB).
_MINUTES = {}
MAX_MINUTES = 1 << 16
