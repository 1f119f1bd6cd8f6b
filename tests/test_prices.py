"""Prices from a LiteLLM table (--prices FILE): a model is found under the names
providers dress it in, its tokens priced per figure, and stats labels the sum an
estimate; a model the table does not name is not priced."""

import orjson
import pytest
from conftest import fixture
from test_sessions import case

from ndagent.cmd_stats import main as stats_main
from ndagent.prices import Prices, PricesError

TABLE = fixture("prices/litellm-sample.json")


@pytest.fixture(scope="module")
def prices():
    return Prices.read(TABLE)


@pytest.mark.parametrize("name", [
    "claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", "eu.anthropic.claude-sonnet-4-5-v1:0",
    "claude-sonnet-4-5@20250929", "gemini-3-flash"])
def test_a_model_is_found_by_the_names_providers_give_it(prices, name):
    assert prices.prices(name) is not None


def test_unknown_models_and_the_sample_spec_are_not_priced(prices):
    assert prices.prices("claude-unknown-9") is None
    assert prices.prices("sample_spec") is None  # no price of its own
    assert prices.cost("claude-unknown-9", {"input": 1}) is None


def test_each_figure_has_its_price(prices):
    usage = {"input": 1000, "cacheRead": 10_000, "cacheWrite": 2000, "output": 500}
    assert prices.cost("claude-sonnet-4-5", usage) == pytest.approx(
        1000 * 3e-06 + 10_000 * 3e-07 + 2000 * 3.75e-06 + 500 * 1.5e-05)
    # no cache write price: the input's
    assert prices.cost("gpt-5.5", {"cacheWrite": 1000}) == pytest.approx(1000 * 1.25e-06)


@pytest.mark.parametrize("content", [b"[1, 2]", b"{", b""])
def test_a_table_that_is_none_says_why(write, content):
    with pytest.raises(PricesError):
        Prices.read(write(content))


def test_stats_adds_the_estimate_only_with_a_table(call):
    path = case("claude_session/rejected-interrupted")
    _, plain, _ = call(stats_main, "--format", "ndjson", path)
    assert "cost_estimated_usd" not in orjson.loads(plain)
    status, out, _ = call(stats_main, "--format", "ndjson", "--prices", TABLE, path)
    found = orjson.loads(out)
    assert status == 0 and found["cost_usd"]["total"] is None  # no cost is guessed
    assert found["cost_estimated_usd"]["runs"] == 2
    assert found["cost_estimated_usd"]["total"] == pytest.approx(
        8 * 3e-06 + 7400 * 3e-07 + 1520 * 3.75e-06 + 146 * 1.5e-05)
    _, text, _ = call(stats_main, "--prices", TABLE, path)
    assert b"estimated from the price table" in text


def test_a_missing_table_is_a_usage_error(call, tmp_path):
    status, out, err = call(stats_main, "--prices", tmp_path / "none.json",
                            case("claude_session/rejected-interrupted"))
    assert (status, out) == (2, b"") and "--prices" in err
