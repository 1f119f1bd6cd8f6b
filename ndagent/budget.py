"""The budgets of ndagent run: what the agent may spend (--max-cost), how many tool calls
and turns it may make (--max-tool-calls, --max-turns), and the calls it may not start
(--stop-on), counted from the model's events as they arrive.  Each is checked at the
event that can pass it, and says so: (its exit status, a message naming the limit and
the figure), or None.

The figures are the whole ``run`` command's, all its runs together.  A tool call counts
at its start, where the stream shows it, else at its end; a turn is a model response
that calls tools, as the calls' ``model_call_id`` tells them apart (a stream whose calls
carry none shows no turns); the cost is that of the runs ended, each run's own
(ndagent.totals made running totals the run's own before ``run_ended`` sees them), and
with a price table (--prices) the estimate of the messages of the run in progress, each
message's usage priced as it arrives: the cost its run reports at its end replaces
them."""

from collections import OrderedDict

from ndagent.model import CallPairer, ToolStart
from ndagent.terminal import quote

# The exit status of each budget: ``ndagent run``'s, beside 124 (--idle, --timeout).
COST, TOOL_CALLS, TURNS, STOP_ON = 120, 121, 122, 123

# How many model responses are remembered to tell a new one from one seen (a response
# forgotten and seen again counts again: never with the calls of one response in order).
MAX_RESPONSES = 4096

# How much of a call's target --stop-on searches, at each end of a longer one: a pattern
# may take time in the square of the text it searches (``curl.*\|\s*sh`` on 1 MB of
# "curl " took minutes, during which the agent ran unwatched).
STOP_ON_CHARS = 16_384


def _searched(pattern, target):
    """Whether ``pattern`` matches in ``target``, or in its first and last STOP_ON_CHARS
    characters where it is longer than both."""
    if len(target) <= 2 * STOP_ON_CHARS:
        return pattern.search(target) is not None
    return (pattern.search(target, 0, STOP_ON_CHARS) is not None
            or pattern.search(target[-STOP_ON_CHARS:]) is not None)


class Budget:
    """The budgets given (None: no such budget; ``stop_on``: a compiled pattern, whose
    text is ``stop_on.pattern``), and what was counted against them."""

    def __init__(self, max_cost=None, max_tool_calls=None, max_turns=None, stop_on=None,
                 prices=None):
        self.max_cost, self.max_tool_calls = max_cost, max_tool_calls
        self.max_turns, self.stop_on = max_turns, stop_on
        self.prices = prices  # a price table (ndagent.prices), or None
        self.cost = 0.0  # of the runs ended
        self.estimate = 0.0  # of the messages of the run in progress, priced
        self.priced = False  # whether a message of the run in progress was priced
        self.cost_estimated = False  # whether ``cost`` holds the estimate of a run
        self.unpriced = None  # the model of the last message the table had no price for
        self.calls = 0
        self.turns = 0
        self.open = CallPairer()  # the calls started and not ended, by call_id
        self.starts_seen = False  # whether the stream shows calls' starts at all
        self.responses = OrderedDict()  # the model responses seen, the latest last
        self.unnamed_responses = False  # a call of no model response was counted

    @property
    def counts_messages(self):
        """Whether the cost budget prices the messages as they arrive."""
        return self.max_cost is not None and self.prices is not None

    @property
    def counts_calls(self):
        """Whether a budget needs the tool calls."""
        return (self.max_tool_calls is not None or self.max_turns is not None
                or self.stop_on is not None)

    def call(self, call):
        """A ToolStart or ToolEnd: the budget it passes, or None.  An end counts only for
        a call whose start was not seen (or could not be: a stream that shows no
        starts)."""
        if call.__class__ is ToolStart:
            self.starts_seen = True
            if call.call_id is not None:
                self.open.start(call.call_id, True, 0)
        elif self._started(call.call_id):
            return None
        self.calls += 1
        self._count_turn(call.model_call_id)
        return self._passed_by_call(call)

    def _started(self, call_id):
        """Whether the call ``call_id`` that ends was counted at its start (a call with no
        id was, in a stream that shows starts)."""
        if call_id is None:
            return self.starts_seen
        return self.open.complete(call_id) is not None

    def _count_turn(self, response):
        if response.__class__ is not str:
            self.unnamed_responses = True
            return
        responses = self.responses
        if response in responses:
            responses.move_to_end(response)
            return
        self.turns += 1
        responses[response] = None
        if len(responses) > MAX_RESPONSES:
            responses.popitem(last=False)

    def _passed_by_call(self, call):
        target = call.target
        if (self.stop_on is not None and target.__class__ is str
                and _searched(self.stop_on, target)):
            return STOP_ON, (f'tool call "{quote(target)}" matched --stop-on '
                             f"'{self.stop_on.pattern}'")
        if self.max_tool_calls is not None and self.calls > self.max_tool_calls:
            return TOOL_CALLS, (f"{self.calls} tool calls passed --max-tool-calls "
                                f"{self.max_tool_calls}")
        if self.max_turns is not None and self.turns > self.max_turns:
            return TURNS, f"{self.turns} turns passed --max-turns {self.max_turns}"
        return None

    def message(self, message):
        """A Message: its usage priced into the estimate; the budget it passes, or None.
        A message whose model the table has no price for is not counted (``unpriced``
        names its model, for a warning)."""
        self.unpriced = None
        cost = self.prices.cost(message.model, message.usage)
        if cost is None:
            if message.usage is not None:
                self.unpriced = message.model or "(unnamed)"
            return None
        self.estimate += cost
        self.priced = True
        return self._passed_cost()

    def run_ended(self, end):
        """A RunEnd, its figures the run's own: the budget it passes, or None.  The cost
        a run reports replaces the estimate of its messages; a run that reports none
        keeps it."""
        if end.cost_usd.__class__ in (int, float):
            self.cost += end.cost_usd
        else:
            self.cost += self.estimate
            self.cost_estimated = self.cost_estimated or self.priced
        self.estimate, self.priced = 0.0, False
        return self._passed_cost()

    def _passed_cost(self):
        total = self.cost + self.estimate
        if self.max_cost is None or total <= self.max_cost:
            return None
        estimated = self.priced or self.cost_estimated
        said = "estimated cost" if estimated else "cost"
        where = " (--prices)" if estimated else ""
        return COST, (f"{said} ${_dollars(total, self.max_cost)}{where} passed --max-cost "
                      f"{_dollars(self.max_cost)}")


def _dollars(amount, above=None):
    """An amount of dollars for a message: two decimals, or as many more (up to six) as
    it takes to show it ``above`` an amount, cut (not rounded up: what is shown was
    spent); with no such amount, exactly."""
    if above is None:
        text = f"{amount:.2f}"
        return text if float(text) == amount else repr(amount)
    digits = f"{amount:.7f}"
    point = digits.index(".")
    for places in range(2, 7):
        text = digits[:point + 1 + places]
        if float(text) > above:
            return text
    return digits[:point + 7]
