"""Claude Code's figures of a run, from its result: tokens, cost, and the running
totals of a process that prints several runs (ndagent.totals)."""

from ndagent.formats.base import text_or_none


def usage_of(data):
    """The run's tokens (docs/agents.md#stats; what they cover:
    docs/formats.md#claude-usage-and-cost): ``modelUsage``, every model's, when it is a
    non-empty object (it matches the cost, subagents and background calls included);
    else ``usage``, the main thread's.  A figure that is not a number is None."""
    models = data.get("modelUsage")
    if models.__class__ is dict and models:
        figures = [figures for figures in models.values() if figures.__class__ is dict]
        names = ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens",
                 "outputTokens")
    else:
        usage = data.get("usage")
        if usage.__class__ is not dict:
            return None
        figures = [usage]
        names = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                 "output_tokens")
    totals = {}
    for field, name in zip(("input", "cacheRead", "cacheWrite", "output"), names):
        total = 0
        for each in figures:
            value = each.get(name, 0)
            if value.__class__ is not int and value.__class__ is not float:
                total = None
                break
            total += value
        totals[field] = total
    return totals


def running_totals(start, data, usage, cost):
    """The process's running totals that a result of a process that prints several
    runs holds (docs/formats.md#claude-usage-and-cost): its cost and ``modelUsage``
    (``usage`` is the run's own); None for a result with no ``result_index``."""
    index = data.get("result_index")
    session = text_or_none(data.get("session_id")) or start.session_id
    if index.__class__ is not int or index < 0 or session is None:
        return None
    models = data.get("modelUsage")
    running = usage if models.__class__ is dict and models else None
    return session, index, {"usage": running, "cost": cost, "native": None}


def cost_of(data):
    """``total_cost_usd`` (``cost_usd`` in older versions), in USD."""
    cost = _number(data.get("total_cost_usd"))
    return cost if cost is not None else _number(data.get("cost_usd"))


def _number(value):
    return value if value.__class__ is int or value.__class__ is float else None
