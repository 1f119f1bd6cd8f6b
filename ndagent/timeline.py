"""The times of a run's lines, for the outputs that put a time on each span or case
(otel, validate --format junit): a line's own stream time where its event carries one,
else the nearest timed line's, else a time made from the input's time origin
(``options.time_origin``), marked as made up.  Never more precision than the stream
has."""

from bisect import bisect_left

from ndagent.model import RunEnd, RunStart, Text, ToolEnd, ToolStart

# The model events that carry a stream time (``time_ms``).
_TIMED = (RunStart, RunEnd, Text, ToolStart, ToolEnd)

# The latest time every output can write (OTLP's nanoseconds are 64 bits: 2554): a
# stream's time beyond it, or before 1970, is no time; made-up times stop there.
LATEST_MS = (1 << 64) // 1_000_000 - 1

# How each time of a span was found: its line's own, a neighbour's, or made up.
STREAM, DERIVED, SYNTHETIC = "stream", "derived", "synthetic"
_RANK = {STREAM: 0, DERIVED: 1, SYNTHETIC: 2}


def stream_time(event):
    """The stream time of a model event in epoch milliseconds, or None."""
    if isinstance(event, _TIMED):
        found = event.time_ms
        if found.__class__ is int and 0 <= found <= LATEST_MS:
            return found
    return None


def worst(*timings):
    """The timing of a span whose ends were found as ``timings`` say."""
    return max(timings, key=_RANK.__getitem__)


class Timeline:
    """The lines of one run, from ``first`` to ``last``, and the stream times some of
    them carry: ``at(line)`` is (time in epoch milliseconds, timing)."""

    def __init__(self, first):
        self.first = first
        self.last = first
        self.lines = []  # the timed lines, in stream order
        self.times = {}  # timed line -> its time

    def add(self, line, time_ms):
        """Line ``line`` was read; ``time_ms``: its stream time, or None."""
        if line is None:
            return
        self.last = max(self.last, line)
        if time_ms is not None and line not in self.times:
            self.times[line] = time_ms
            if self.lines and line < self.lines[-1]:
                self.lines.insert(bisect_left(self.lines, line), line)
            else:
                self.lines.append(line)

    def made_up(self, origin, duration_ms):
        """Whether the run has no clock: then times come from ``origin``, spread over
        its reported ``duration_ms`` (or 1 ms a line without one)."""
        self.origin = origin
        self.duration_ms = duration_ms
        return not self.lines

    def at(self, line):
        """(time, timing) of ``line``, by the rules: its own time (stream); the nearest
        earlier timed line's, or before the first, the first's (derived); with no
        clock in the run, the origin plus the line's share of the run's duration, or 1
        ms a line (synthetic)."""
        found = self.times.get(line)
        if found is not None:
            return found, STREAM
        if self.lines:
            index = bisect_left(self.lines, line)
            nearest = self.lines[index - 1] if index else self.lines[0]
            return self.times[nearest], DERIVED
        first = self.first
        if self.duration_ms is None:
            return min(self.origin + (line - 1), LATEST_MS), SYNTHETIC
        span = max(1, self.last - first)
        made = self.origin + (first - 1) + int((line - first) * self.duration_ms // span)
        return min(made, LATEST_MS), SYNTHETIC
