"""Running totals made into each run's own figures.

Some agents report, at the end of a run, what their process or thread has used so
far rather than what the run used: Claude Code's cost and per-model usage when one
process prints several runs, Codex's usage when a thread is resumed.  A Reader says
so in ``RunEnd.totals``: (key, index, state), the key of the process or thread,
the run's index in it (None: any earlier run of the key comes before it) and the
running totals, ``{"usage": {input, cacheRead, cacheWrite, output} or None, "cost":
a number or None, "native": what the format needs of them for its json object, or
None}``.  ``Totals`` remembers the last totals of each key read so far, so that a
run's figures are its own: the difference from the run before it (the format makes
its json object's figures the run's own, ``Format.own_native``).

Where the run before is not in the input, the figures stay as the agent gave them
and ``RunEnd.tokens_from`` says that they are a running total.  The keys are read
in input order, across FILEs: a thread resumed in another FILE is settled when the
FILE of its earlier runs comes first.  Memory is bounded: at most MAX_KEYS keys,
each with at most MAX_STATE bytes of totals (a key past that is forgotten, the
oldest first; a run of a forgotten key keeps its figures as given, flagged).
"""

from marshal import dumps

from ndagent import formats
from ndagent.model import key_digest

MAX_KEYS = 4096
MAX_STATE = 4096
# A key longer than this is kept as a digest of it.
MAX_KEY = 256


class Totals:
    """The last totals of each key, in the order last seen.  ``complete``: every
    earlier run of the input is known here (false in a share of the input read apart
    from the shares before it: a key first seen there may have been seen before)."""

    __slots__ = ("last", "complete")

    def __init__(self, complete=True):
        self.last = {}
        self.complete = complete

    @staticmethod
    def apart():
        """The totals for a share read apart, in a process of its own, while the
        shares before it may still be read: none known (what this process knew when
        it began may be older than what those shares hold)."""
        return Totals(complete=False)

    def settle(self, end):
        """``end`` with its figures made the run's own where its format reports running
        totals: (the RunEnd, the key when whether the key was seen before is not known
        here, else None)."""
        key, index, state = end.totals
        key = _bounded(key)
        end.totals = key, index, state
        previous = self.last.pop(key, None)
        # Whether the runs before it may be in the shares before this one, unread here.
        unsure = not self.complete and previous is None
        self._remember(key, index, state)
        fmt = formats.get(end.start.agent)
        own = _less_before(previous, index, end.usage, end.cost_usd, state)
        if own is not None:
            end.usage, end.cost_usd = own
            if end.native is not None and fmt.own_native is not None:
                end.native = fmt.own_native(end.native, previous[1]["native"])
            end.tokens_from = "run"
            return end, None
        if index == 0:  # the first run of its process: its totals are its own
            end.tokens_from = "run"
            return end, None
        end.tokens_from = f"{fmt.running_total}_total"
        return end, (key if unsure else None)

    def own(self, key, index, usage, cost):
        """The own figures of a run counted with its running totals ``usage`` and
        ``cost`` as given (its key unknown then), now that the totals before it may be
        known here: (usage, cost), or None when they are not."""
        return _less_before(self.last.get(key), index, usage, cost,
                            {"usage": usage, "cost": cost})

    def _remember(self, key, index, state):
        if state is None or len(dumps(state)) > MAX_STATE:
            return
        last = self.last
        last[key] = (index, state)
        if len(last) > MAX_KEYS:
            del last[next(iter(last))]

    def state(self):
        """The keys' last totals, oldest first."""
        return [[key, index, state] for key, (index, state) in self.last.items()]

    def absorb(self, state):
        """The keys of a share read after every run known here."""
        for key, index, totals in state:
            self.last.pop(key, None)
            self._remember(key, index, totals)

    def knows(self, key):
        return key in self.last


def less(figure, total, before):
    """A run's own ``figure``, reported as the running total ``total`` (None: the
    figure is the run's own already), the total before it being ``before``."""
    if total is None or not (_number(figure) and _number(before)):
        return figure
    if figure.__class__ is int and before.__class__ is int:
        return figure - before
    # Dollars: the difference of the decimals the agent wrote, not of the doubles
    # nearest to them (0.0837797 - 0.0646556 is 0.0191241, not 0.019124100000000005).
    from decimal import Decimal  # lazy: only figures with a fraction need it
    return float(Decimal(repr(figure)) - Decimal(repr(before)))


def _number(value):
    return value.__class__ is int or value.__class__ is float


def usage_less(usage, totals, before):
    """``less`` for each of a usage's figures."""
    if usage is None or totals is None or before is None:
        return usage
    return {name: less(value, totals.get(name), before.get(name))
            for name, value in usage.items()}


def _less_before(previous, index, usage, cost, running):
    """A run's own (usage, cost): its figures less the totals of ``previous`` ((index,
    state) of the key's run before, or None), of the figures that ``running`` (its
    state) says are running totals; None where ``previous`` is not the run just before
    it, or where a figure would fall below zero (then they are no running totals)."""
    if previous is None or not _follows(previous[0], index):
        return None
    before = previous[1]
    usage = usage_less(usage, running["usage"], before["usage"])
    cost = less(cost, running["cost"], before["cost"])
    return (usage, cost) if _not_negative(usage, cost) else None


def _follows(before, index):
    """Whether a run of index ``index`` comes right after one of index ``before``."""
    return index is None or before == index - 1


def _not_negative(usage, cost):
    figures = [cost, *(() if usage is None else usage.values())]
    return all(not _number(value) or value >= 0 for value in figures)


def _bounded(key):
    if len(key) <= MAX_KEY:
        return key
    return "#" + key_digest(key).hex()
