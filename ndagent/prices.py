"""Token prices from a table the user gives (``--prices FILE``), for an estimate of what
runs cost where the agent reports no cost: the table is LiteLLM's
``model_prices_and_context_window.json`` format (the one ccusage embeds), read from a
file, never fetched.  ndagent guesses no price: without a table there is no estimate,
and a model the table does not name has none."""

import orjson

from ndagent.terminal import quote

# The largest table read (LiteLLM's is about 1.5 MB).
MAX_TABLE_BYTES = 64 << 20

# A model's prices in the table: per token, for input, output, cache read and cache
# write; the cache write and read fall back to the input's price where the table has
# none (its entries for models without caching).
_FIELDS = {"input": "input_cost_per_token", "output": "output_cost_per_token",
           "cacheRead": "cache_read_input_token_cost",
           "cacheWrite": "cache_creation_input_token_cost"}


# The table's first entry, which describes the others' fields: no model.
_SPEC = "sample_spec"


class PricesError(ValueError):
    """A price table that cannot be read: why, in a few words."""


class Prices:
    """A price table: ``cost(model, usage)`` estimates what the tokens ``usage``
    ({input, cacheRead, cacheWrite, output}) of ``model`` cost, in USD."""

    def __init__(self, table):
        self.table = {}
        for name, entry in table.items():
            if entry.__class__ is not dict or name == _SPEC:
                continue
            prices = {figure: entry.get(field) for figure, field in _FIELDS.items()}
            if not all(_price(prices[figure]) for figure in ("input", "output")):
                continue
            for figure in ("cacheRead", "cacheWrite"):
                if not _price(prices[figure]):
                    prices[figure] = prices["input"]
            self.table[name] = prices
        # A provider's entry ("gemini/gemini-3-flash") is also found by the model's name.
        for name in list(self.table):
            short = name.rsplit("/", 1)[-1]
            self.table.setdefault(short, self.table[name])
        self.found = {}  # model -> its prices or None, as looked up before

    @classmethod
    def read(cls, path):
        """The table of the file ``path``; PricesError when it is none."""
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_TABLE_BYTES + 1)
        except OSError as error:
            raise PricesError(f"{quote(str(path))}: {error.strerror or error}") from error
        if len(data) > MAX_TABLE_BYTES:
            raise PricesError(f"{quote(str(path))}: larger than {MAX_TABLE_BYTES >> 20} MiB")
        try:
            table = orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise PricesError(f"{quote(str(path))}: not JSON ({error})") from error
        if table.__class__ is not dict:
            raise PricesError(f"{quote(str(path))}: not a table of models (a JSON object)")
        return cls(table)

    def prices(self, model):
        """A model's prices, by its name as the table has it, else as a provider's
        prefix or suffix dressed it (``anthropic/claude-x``, ``eu.anthropic.claude-x-v1:0``,
        ``claude-x@20250101``), else None."""
        if model.__class__ is not str:
            return None
        if model in self.found:
            return self.found[model]
        found = self.table.get(model)
        if found is None:
            for name in _candidates(model):
                found = self.table.get(name)
                if found is not None:
                    break
        # Names as long as a real model's are remembered, a bounded number of them: the
        # stream's names may be of any length.
        if len(self.found) < 1 << 16 and len(model) <= 256:
            self.found[model] = found
        return found

    def cost(self, model, usage):
        """What ``usage`` of ``model`` costs in USD, or None (no usage, a model the table
        does not price)."""
        prices = self.prices(model)
        if prices is None or usage.__class__ is not dict:
            return None
        total = 0.0
        for figure, price in prices.items():
            value = usage.get(figure)
            if value.__class__ is int or value.__class__ is float:
                total += value * price
        return total


def _candidates(model):
    """Other names the table may know a model by."""
    name = model.rsplit("/", 1)[-1]
    found = [name]
    for provider in ("anthropic.", "openai.", "google."):
        if provider in name:
            found.append(name.split(provider, 1)[1])
    for each in list(found):
        for suffix in ("-v1:0", "-v2:0", ":0"):
            if each.endswith(suffix):
                found.append(each[:-len(suffix)])
        if "@" in each:
            found.append(each.split("@", 1)[0])
    return [each for each in found if each != model]


def _price(value):
    return (value.__class__ is int or value.__class__ is float) and value >= 0
