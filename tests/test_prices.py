"""Pricing one model's tokens (evalkit.metrics.prices, issue 27).

Every expected cost is computed here by hand from the installed table's own per-token prices,
read from genai-prices in the test, so a table update changes both sides together.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from evalkit.errors import UsageError
from evalkit.metrics.prices import (
    PRICE_TABLE_REQUIREMENT,
    ModelLedger,
    RequestTokens,
    UserPrices,
    load_prices,
    price_model,
    prices_from_dict,
    table_version,
)

ROOT = Path(__file__).resolve().parent.parent
M = Decimal(1_000_000)


def table_prices(model: str, when: datetime):
    """The table's price record of `model` in force at `when` (genai-prices' own lookup)."""
    from genai_prices.data_snapshot import get_snapshot

    _provider, info = get_snapshot().find_provider_model(model, None, None, None)
    return info.get_prices(when)


def rate(price) -> Decimal:
    """A price per million tokens; a tiered one's base rate."""
    return getattr(price, "base", price)


def usd(tokens: int, price) -> float:
    return float(Decimal(tokens) * rate(price) / M)


NOON = datetime(2026, 1, 15, 12, tzinfo=UTC)


def test_the_table_is_named_with_its_version_and_pinned_in_pyproject():
    import genai_prices

    assert table_version() == f"genai-prices {genai_prices.__version__}"
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"genai-prices{PRICE_TABLE_REQUIREMENT}" in deps
    low, high = (part.lstrip("<>=") for part in PRICE_TABLE_REQUIREMENT.split(","))
    version = tuple(int(x) for x in genai_prices.__version__.split(".")[:3])
    assert tuple(map(int, low.split("."))) <= version < tuple(map(int, high.split(".")))


def test_the_tables_version_is_read_from_its_dist_info_as_importlib_metadata_reads_it(
    tmp_path, monkeypatch
):
    """A warm load names the table's version without importing `importlib.metadata`: from the
    one `.dist-info` beside the package, else as `importlib.metadata` finds it."""
    from importlib.metadata import version

    import evalkit.metrics.prices as prices_module

    assert prices_module._dist_info_version() == version("genai-prices")
    site = tmp_path / "site"
    (site / "genai_prices").mkdir(parents=True)
    monkeypatch.setattr(prices_module, "_table_dir", lambda: str(site / "genai_prices"))
    assert prices_module._dist_info_version() is None  # no dist-info: importlib.metadata asked
    info = site / "genai_prices-9.8.7.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: genai-prices\nVersion: 9.8.7\n")
    assert prices_module._dist_info_version() == "9.8.7"
    (info / "METADATA").write_text("Name: other-package\nVersion: 9.8.7\n")
    assert prices_module._dist_info_version() is None  # not the table's: not taken
    (info / "METADATA").write_text("Name: genai_prices\nVersion: 9.8.7\n")
    (site / "genai_prices-1.0.0.dist-info").mkdir()
    assert prices_module._dist_info_version() is None  # two of them: which is installed?
    prices_module.table_version.cache_clear()
    try:
        monkeypatch.setattr(prices_module, "_dist_info_version", lambda: None)
        assert prices_module.table_version() == f"genai-prices {version('genai-prices')}"
    finally:
        prices_module.table_version.cache_clear()


def test_five_parts_priced_from_the_tables_own_prices():
    # Anthropic splits cache writes: 5-minute and 1-hour at different rates.
    ledger = ModelLedger(
        "claude-haiku-4-5-20251001",
        prompt_tokens=100_000,  # 10,000 uncached + 60,000 read + 30,000 written
        cache_read_tokens=60_000,
        cache_write_tokens=30_000,
        cache_write_1h_tokens=10_000,
        output_tokens=5_000,
    )
    priced = price_model(ledger, when=NOON.date())
    p = table_prices("claude-haiku-4-5-20251001", NOON)
    parts = {
        "input": usd(10_000, p.input_mtok),
        "cache_read": usd(60_000, p.cache_read_mtok),
        "cache_write_5m": usd(20_000, p.cache_write_mtok),
        "cache_write_1h": usd(10_000, p.cache_write_1h_mtok),
        "output": usd(5_000, p.output_mtok),
    }
    assert {c.component: c.cost_usd for c in priced.components} == pytest.approx(parts)
    assert [c.tokens for c in priced.components] == [10_000, 60_000, 20_000, 10_000, 5_000]
    assert priced.cost_usd == pytest.approx(sum(parts.values()))
    assert priced.table_model == "claude-haiku-4-5" and priced.table_provider == "anthropic"
    assert priced.price_source == table_version() and priced.reason is None
    assert priced.price_date == date(2026, 1, 15) and priced.notes == ()
    # genai-prices' own arithmetic agrees (its input_tokens is the whole prompt).
    from genai_prices import Usage, calc_price

    usage = Usage(
        input_tokens=100_000,
        cache_read_tokens=60_000,
        cache_write_tokens=30_000,
        cache_write_1h_tokens=10_000,
        output_tokens=5_000,
    )
    total = calc_price(usage, "claude-haiku-4-5-20251001", genai_request_timestamp=NOON)
    assert priced.cost_usd == pytest.approx(float(total.total_price))
    frame = priced.to_frame()
    assert frame.loc[0, "cache_write_1h_tokens"] == 10_000
    assert frame.loc[0, "priced_cost_usd"] == pytest.approx(priced.cost_usd)


def test_writes_not_split_by_duration_are_priced_as_five_minute_writes():
    ledger = ModelLedger(
        "claude-haiku-4-5", prompt_tokens=1_000, cache_write_tokens=600, output_tokens=10
    )
    priced = price_model(ledger, when=NOON)
    p = table_prices("claude-haiku-4-5", NOON)
    assert priced.component("cache_write_5m").cost_usd == pytest.approx(
        usd(600, p.cache_write_mtok)
    )
    assert priced.component("cache_write_1h").tokens == 0
    assert any("not split by duration" in n for n in priced.notes)


def test_a_part_without_its_own_price_costs_the_input_price():
    # OpenAI has no cache-write price: writes are inside the input and cost the input rate.
    ledger = ModelLedger("gpt-5", prompt_tokens=2_000, cache_write_tokens=500, output_tokens=0)
    priced = price_model(ledger, when=NOON)
    p = table_prices("gpt-5", NOON)
    assert getattr(p, "cache_write_mtok", None) is None  # the premise of this test
    assert priced.cost_usd == pytest.approx(usd(2_000, p.input_mtok))


def _dated_model():
    """o3 and the first date its price changed, both read from the table."""
    from genai_prices.data_snapshot import get_snapshot
    from genai_prices.types import StartDateConstraint

    _provider, info = get_snapshot().find_provider_model("o3", None, "openai", None)
    starts = [
        c.constraint.start_date
        for c in info.prices
        if isinstance(c.constraint, StartDateConstraint)
    ]
    assert starts, "the table no longer keeps o3's earlier price: pick another dated model"
    return "o3", starts[0]


def test_a_price_change_between_two_dates_is_honoured():
    model, change = _dated_model()
    ledger = ModelLedger(model, prompt_tokens=50_000, cache_read_tokens=20_000, output_tokens=4_000)

    def hand(when: datetime) -> float:
        p = table_prices(model, when)
        return (
            usd(30_000, p.input_mtok) + usd(20_000, p.cache_read_mtok) + usd(4_000, p.output_mtok)
        )

    after = datetime.combine(change, datetime.min.time(), tzinfo=UTC)
    before = after - timedelta(days=1)
    old, new = price_model(ledger, when=before.date()), price_model(ledger, when=after.date())
    assert old.cost_usd == pytest.approx(hand(before))
    assert new.cost_usd == pytest.approx(hand(after))
    assert old.cost_usd != new.cost_usd
    assert old.price_date < new.price_date == change
    # A datetime works as well as a date.
    assert price_model(ledger, when=before.replace(hour=23)).cost_usd == old.cost_usd


def test_no_session_date_prices_at_the_latest_price_and_says_so():
    model, change = _dated_model()
    ledger = ModelLedger(model, prompt_tokens=1_000, output_tokens=100)
    latest = price_model(ledger)
    assert latest.cost_usd == price_model(ledger, when=date(9000, 1, 1)).cost_usd
    assert latest.price_date is None
    assert "session date unknown: the latest price" in latest.notes


def test_an_unknown_model_has_no_cost_and_a_reason():
    priced = price_model(ModelLedger("example-model", prompt_tokens=1_000, output_tokens=10))
    assert priced.cost_usd is None and priced.components == ()
    assert priced.reason == (
        f"the price table ({table_version()}) does not know the model example-model"
    )
    unknown = price_model(ModelLedger("anthropic/example-model", prompt_tokens=5, output_tokens=1))
    assert unknown.cost_usd is None and "example-model" in unknown.reason


def test_missing_counts_and_models_give_reasons_never_zero():
    no_output = price_model(ModelLedger("gpt-5", prompt_tokens=1_000, output_tokens=None))
    assert no_output.cost_usd is None
    assert no_output.reason == "the log does not record the output tokens"
    no_model = price_model(ModelLedger(None, prompt_tokens=1_000, output_tokens=10))
    assert no_model.cost_usd is None and no_model.reason == "the log does not name the model"
    bad = price_model(
        ModelLedger("gpt-5", prompt_tokens=100, cache_read_tokens=200, output_tokens=1)
    )
    assert bad.cost_usd is None and "exceed the prompt" in bad.reason
    # No tokens at all: 0 whatever the name (Claude Code's `<synthetic>` messages).
    empty = price_model(ModelLedger("<synthetic>", prompt_tokens=0, output_tokens=0))
    assert empty.cost_usd == 0.0 and empty.reason is None


def _tier(model: str):
    """A tiered model's threshold and its input/output prices below and above it."""
    p = table_prices(model, NOON)
    assert hasattr(p.input_mtok, "tiers"), f"{model} has no long-context tier any more"
    tier = p.input_mtok.tiers[0]
    out_tier = next(t for t in p.output_mtok.tiers if t.start == tier.start)
    read_tier = next(t for t in p.cache_read_mtok.tiers if t.start == tier.start)
    return tier.start, p, (tier.price, read_tier.price, out_tier.price)


def test_long_context_tier_applies_per_request():
    threshold, p, (tier_in, tier_read, tier_out) = _tier("gpt-5.4")
    big = threshold + 1_000
    requests = (
        RequestTokens(prompt_tokens=1_000, cache_read_tokens=400, output_tokens=100),
        RequestTokens(prompt_tokens=big, cache_read_tokens=200_000, output_tokens=300),
    )
    ledger = ModelLedger(
        "gpt-5.4",
        prompt_tokens=1_000 + big,
        cache_read_tokens=200_400,
        output_tokens=400,
        requests=requests,
    )
    priced = price_model(ledger, when=NOON)
    small = usd(600, p.input_mtok) + usd(400, p.cache_read_mtok) + usd(100, p.output_mtok)
    large = usd(big - 200_000, tier_in) + usd(200_000, tier_read) + usd(300, tier_out)
    assert priced.cost_usd == pytest.approx(small + large)
    assert not priced.lower_bound
    assert any(f"1 request over {threshold:,}" in n for n in priced.notes)


def test_totals_only_above_the_tier_are_a_lower_bound():
    threshold, p, _ = _tier("gpt-5.4")
    over = ModelLedger(
        "gpt-5.4",
        prompt_tokens=3 * threshold,
        output_tokens=10,
        max_request_prompt_tokens=threshold + 1,
    )
    priced = price_model(over, when=NOON)
    assert priced.lower_bound
    assert priced.cost_usd == pytest.approx(
        usd(3 * threshold, p.input_mtok) + usd(10, p.output_mtok)
    )
    # Below the threshold (known, or bounded by the whole prompt) the base rate is exact.
    under = ModelLedger("gpt-5.4", prompt_tokens=threshold // 2, output_tokens=10)
    assert not price_model(under, when=NOON).lower_bound
    unknown = ModelLedger("gpt-5.4", prompt_tokens=3 * threshold, output_tokens=10)
    assert price_model(unknown, when=NOON).lower_bound


# --- user prices ------------------------------------------------------------------------------

PRICES_TOML = """\
[models."claude-haiku-4-5"]
input = 0.5
cached_input = 0.05
cache_write = 0.6
cache_write_1h = 1.0
output = 2.5

[[models."private-model"]]
input = 1.0
output = 4.0

[[models."private-model"]]
valid_from = 2026-03-01
input = 2.0
output = 8.0
"""


def test_user_prices_override_the_table(tmp_path):
    prices = load_prices(_write(tmp_path, PRICES_TOML))
    assert prices.source == "prices.toml" and len(prices.prices) == 3
    tokens = dict(
        prompt_tokens=10_000,
        cache_read_tokens=5_000,
        cache_write_tokens=3_000,
        cache_write_1h_tokens=1_000,
        output_tokens=1_000,
    )
    hand = (2_000 * 0.5 + 5_000 * 0.05 + 2_000 * 0.6 + 1_000 * 1.0 + 1_000 * 2.5) / 1e6
    mine = price_model(ModelLedger("claude-haiku-4-5", **tokens), when=NOON, prices=prices)
    assert mine.cost_usd == pytest.approx(hand)
    assert mine.price_source == "user prices (prices.toml)"
    assert mine.table_model == "claude-haiku-4-5" and mine.table_provider is None
    table = price_model(ModelLedger("claude-haiku-4-5", **tokens), when=NOON)
    assert table.cost_usd != mine.cost_usd and table.price_source == table_version()
    # An Inspect name with its provider prefix matches the same entry; another name does not.
    inspect = price_model(
        ModelLedger("anthropic/claude-haiku-4-5", **tokens), when=NOON, prices=prices
    )
    assert inspect.cost_usd == pytest.approx(hand)
    dated = price_model(
        ModelLedger("claude-haiku-4-5-20251001", **tokens), when=NOON, prices=prices
    )
    assert dated.price_source == table_version()


def test_user_prices_with_valid_from_dates(tmp_path):
    prices = load_prices(_write(tmp_path, PRICES_TOML))
    ledger = ModelLedger("private-model", prompt_tokens=1_000_000, output_tokens=1_000_000)
    assert price_model(ledger, when=date(2026, 2, 28), prices=prices).cost_usd == 5.0
    assert price_model(ledger, when=date(2026, 3, 1), prices=prices).cost_usd == 10.0
    assert price_model(ledger, prices=prices).cost_usd == 10.0  # no date: the latest
    # Without the file the table does not know it.
    assert price_model(ledger, when=date(2026, 3, 1)).cost_usd is None


def test_user_prices_before_their_first_date_fall_back_to_the_table():
    prices = prices_from_dict(
        {"models": {"gpt-5": {"valid_from": "2026-06-01", "input": 0.0, "output": 0.0}}},
        source="negotiated.toml",
    )
    ledger = ModelLedger("gpt-5", prompt_tokens=1_000, output_tokens=100)
    before = price_model(ledger, when=date(2026, 5, 31), prices=prices)
    after = price_model(ledger, when=date(2026, 6, 1), prices=prices)
    assert before.price_source == table_version() and before.cost_usd > 0
    assert after.price_source == "user prices (negotiated.toml)" and after.cost_usd == 0.0


def _write(tmp_path: Path, text: str, name: str = "prices.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[models."m"]\ninput = 1\noutput = 2\ninptu = 3\n',
            'prices.toml: unknown key models."m".inptu (known: input, cached_input, '
            "cache_write, cache_write_1h, output, valid_from)",
        ),
        (
            '[models."m"]\ninput = "cheap"\noutput = 2\n',
            'prices.toml: models."m".input must be a number of dollars per million tokens',
        ),
        (
            '[models."m"]\ninput = -1\noutput = 2\n',
            'prices.toml: models."m".input must be a non-negative number',
        ),
        ('[models."m"]\noutput = 2\n', 'prices.toml: models."m" needs input'),
        (
            '[models."m"]\ninput = 1\noutput = 2\nvalid_from = "soon"\n',
            'prices.toml: models."m".valid_from must be a date (valid_from = 2026-01-31)',
        ),
        (
            '[[models."m"]]\ninput = 1\noutput = 2\n[[models."m"]]\ninput = 2\noutput = 3\n',
            'prices.toml: models."m" has two prices with the same valid_from',
        ),
        ("[prices]\n", "prices.toml: unknown key prices (known: models)"),
        ('models = "all"\n', "prices.toml: models must be a table of model names"),
        ("[models\n", "prices.toml: not a valid TOML prices file"),
    ],
)
def test_a_bad_prices_file_is_one_line_naming_the_file_and_key(tmp_path, text, message):
    with pytest.raises(UsageError) as err:
        load_prices(_write(tmp_path, text))
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value) and str(tmp_path) not in str(err.value)


def test_a_missing_prices_file_is_named(tmp_path):
    with pytest.raises(UsageError, match="no such prices file"):
        load_prices(tmp_path / "nope.toml")


def test_user_prices_lookup_ignores_case_and_provider_prefix():
    prices = UserPrices(
        "p.toml", prices_from_dict({"models": {"My-Model": {"input": 1, "output": 1}}}).prices
    )
    assert prices.lookup("openrouter/my-model", None) is not None
    assert prices.lookup("my-model-2", None) is None


def test_importing_the_cost_modules_does_not_load_the_price_table():
    code = (
        "import sys, evalkit.metrics.costs, evalkit.metrics.prices\n"
        "from evalkit.metrics.prices import load_prices, table_version\n"
        "table_version()\n"
        "print('genai_prices' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
