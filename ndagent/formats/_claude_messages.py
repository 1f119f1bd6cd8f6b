"""The ``Message`` events of Claude's envelope (Claude Code, Qwen Code, Amp): one per
main-thread assistant message, for a command that needs ``"messages"``
(docs/model.md#messages).

A message's input figures (input, cache read, cache write) are the same on each of its
lines, so they are counted once, from the first line that carries a usage.  Its final
output count comes only in a ``message_delta``, with partial messages on.  So a message
begun by a ``message_start`` is handed on at its ``message_delta`` or ``message_stop``
(whichever comes first), or when the next main-thread message begins or the run ends;
a message with no ``message_start`` (partial messages off) is handed on at its first
line that carries a usage, with no output count: the lines that follow it say nothing
more that is final, and a budget must see the figures as they arrive."""

from collections import OrderedDict

from ndagent.formats.base import text_or_none
from ndagent.model import Message, epoch_ms

# How many keys of messages handed on are remembered, so that a message is handed on
# once even when its lines come apart (a hostile stream may name messages without end).
MAX_KEYS = 4096

# The usage fields of a message, as the model names them.
_INPUT_FIGURES = (("input", "input_tokens"), ("cacheRead", "cache_read_input_tokens"),
                  ("cacheWrite", "cache_creation_input_tokens"))


class Messages:
    """The main-thread message in hand of one Reader, and the keys handed on."""

    def __init__(self):
        self.current = None  # the Message not handed on yet, or None
        self.streamed = False  # whether it began with a message_start
        self.done = OrderedDict()  # the keys handed on, the latest last

    def started(self, event, message, out):
        """A main-thread ``message_start`` (``message``: its message object)."""
        key = text_or_none(message.get("id"))
        self.flush(out)
        if key is not None and key in self.done:
            return
        self.current = Message(key=key, model=text_or_none(message.get("model")),
                               first_line=event.line, last_line=event.line,
                               first_ms=_time(event), last_ms=_time(event),
                               usage=input_usage(message.get("usage")),
                               source=event.source, line=event.line)
        self.streamed = True

    def line(self, event, key, message, out):
        """A main-thread assistant line of the message ``key`` (its message object)."""
        current = self.current
        if current is not None and current.key != key and current.key is not None:
            self.flush(out)
            current = None
        if current is None:
            if key is not None and key in self.done:
                return
            current = self.current = Message(
                key=key, model=None, first_line=event.line, first_ms=_time(event),
                usage=None, source=event.source)
            self.streamed = False
        current.key = key
        current.last_line, current.last_ms = event.line, _time(event)
        if current.model is None:
            current.model = text_or_none(message.get("model"))
        if current.usage is None:
            current.usage = input_usage(message.get("usage"))
        if not self.streamed and current.usage is not None:
            current.line = event.line
            self.flush(out)

    def delta(self, event, usage, out):
        """A main-thread ``message_delta`` (``usage``: its usage): the output count is
        final, and the message is complete."""
        current = self.current
        if current is None:
            return
        output = usage.get("output_tokens") if usage.__class__ is dict else None
        if output.__class__ is int or output.__class__ is float:
            if current.usage is None:
                current.usage = {"input": None, "cacheRead": None, "cacheWrite": None}
            current.usage["output"] = output
        self.stopped(event, out)

    def stopped(self, event, out):
        """A main-thread ``message_stop``, or its ``message_delta``: the message ends."""
        current = self.current
        if current is not None:
            current.last_line, current.last_ms = event.line, _time(event)
            current.source, current.line = event.source, event.line
            self.flush(out)

    def flush(self, out):
        """Hand on the message in hand, if any: the next began, or the run ends."""
        current = self.current
        if current is None:
            return
        self.current = None
        if current.line is None:
            current.line = current.last_line
        if current.usage is not None:
            current.usage.setdefault("output", None)
        out.append(current)
        if current.key is not None:
            self.done[current.key] = None
            if len(self.done) > MAX_KEYS:
                self.done.popitem(last=False)

    def reset(self):
        """A run begins: what the previous one left is dropped."""
        self.current = None
        self.done.clear()


def input_usage(usage):
    """{input, cacheRead, cacheWrite} of a message's usage, each a number or None; None
    when there is no usage."""
    if usage.__class__ is not dict:
        return None
    found = {}
    for field, name in _INPUT_FIGURES:
        value = usage.get(name)
        found[field] = value if value.__class__ is int or value.__class__ is float else None
    return found


def _time(event):
    return epoch_ms(event.data.get("timestamp"), zone_required=False)


