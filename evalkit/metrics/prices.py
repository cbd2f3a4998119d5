"""Prices: what a model's tokens cost on a given date (issue 27).

A session's token ledger (`evalkit.metrics.tokens`) is priced per model from a maintained,
versioned, offline price table, `genai-prices` (its data ships with the package: no network), or
from the user's own prices (`--prices FILE.toml`), which override the table. The table is
imported only when something is priced: loading it takes about a second.

One model's tokens are priced in five disjoint parts (agent-formats §1.9, §3.9, §5.3):

* `input`: the uncached input, the prompt minus its cache reads and cache writes;
* `cache_read`: tokens read from the prompt cache;
* `cache_write_5m` / `cache_write_1h`: tokens written to the cache, for 5 minutes or 1 hour
  (Anthropic charges them differently); a log that does not split them has every write priced
  at the 5-minute rate;
* `output`: generated tokens, reasoning inside (never priced twice).

A price the table lacks for a part falls back as genai-prices itself does: a cache read or write
without its own price costs the input price, a 1-hour write without its own price the 5-minute
one. The price in force is the one on the session's date (the table keeps dated prices); with no
date, the table's latest. Long-context tiers (the whole request's prompt above a threshold
switches every part to a higher rate) are applied per request where the ledger carries each
request's tokens; with totals only, the base rate is exact when no request's prompt crossed the
threshold, and a lower bound (said so in `notes`) when one did or when it is not known.

A model the table does not know, or a ledger missing a part, gives no cost (`None`, `<NA>` in
frames) with the reason in words, never 0. A model with no tokens at all costs 0 whatever its
name (Claude Code's `<synthetic>` messages).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any

from evalkit.ecma import pl
from evalkit.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COMPONENTS",
    "PRICE_TABLE",
    "PRICE_TABLE_REQUIREMENT",
    "RequestTokens",
    "ModelLedger",
    "ComponentCost",
    "PricedModel",
    "UserPrice",
    "UserPrices",
    "table_version",
    "Rates",
    "model_rates",
    "price_day",
    "table_key",
    "table_identity",
    "load_price_table",
    "rates_to_json",
    "rates_from_json",
    "price_model",
    "load_prices",
    "prices_from_dict",
]

PRICE_TABLE = "genai-prices"
# Kept in step with pyproject.toml: the data changes with every release, and a test checks that
# a priced value is what the installed table's own per-token prices give.
PRICE_TABLE_REQUIREMENT = ">=0.2.3,<0.3"
COMPONENTS = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output")
_PER = Decimal(1_000_000)
# genai-prices price keys, each part's own first, then what it falls back to (the library prices
# a reported unit without its own price at its parent unit's price).
_KEYS: dict[str, tuple[str, ...]] = {
    "input": ("input_mtok",),
    "cache_read": ("cache_read_mtok", "input_mtok"),
    "cache_write_5m": ("cache_write_5m_mtok", "cache_write_mtok", "input_mtok"),
    "cache_write_1h": ("cache_write_1h_mtok", "cache_write_mtok", "input_mtok"),
    "output": ("output_mtok",),
}
# With no session date, the table's latest price: an instant after every dated price (noon UTC,
# so a time-of-day price is also fixed and the result never depends on the clock).
_LATEST = datetime(9999, 12, 31, 12, 0, tzinfo=UTC)


@cache
def table_version() -> str:
    """The price table and its version, e.g. `genai-prices 0.2.3` (printed beside prices).

    The bundled data is the version's: evalkit never starts genai-prices' network updater.
    """
    found = _dist_info_version()
    if found is not None:
        return f"{PRICE_TABLE} {found}"
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{PRICE_TABLE} {version(PRICE_TABLE)}"
    except PackageNotFoundError:
        return f"{PRICE_TABLE} (not installed)"


def _table_dir() -> str | None:
    """The installed price table's package directory, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(PRICE_TABLE.replace("-", "_"))
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _dist_info_version() -> str | None:
    """The `Version` of the one `.dist-info` beside the price table's package (what
    `importlib.metadata.version` reads, without importing it and the e-mail parser: a warm
    load's tenth of its time), or None when there is not exactly one of its name there."""
    where = _table_dir()
    if where is None:
        return None
    wanted = _project_name(PRICE_TABLE)
    try:
        site = os.path.dirname(where)
        infos = [
            e
            for e in os.listdir(site)
            if e.endswith(".dist-info")
            and _project_name(e.removesuffix(".dist-info").partition("-")[0]) == wanted
        ]
        if len(infos) != 1:
            return None
        with open(os.path.join(site, infos[0], "METADATA"), "rb") as fh:
            head = fh.read(64 << 10).decode("utf-8", "replace")
    except OSError:
        return None
    fields: dict[str, str] = {}
    for line in head.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        key, sep, value = line.partition(":")
        if sep and key in ("Name", "Version"):
            fields.setdefault(key, value.strip())
    found = _project_name(fields.get("Name", "")) == wanted
    return (fields.get("Version") or None) if found else None


def _project_name(name: str) -> str:
    """A distribution's name as packaging compares names (PEP 503: runs of `-_.` as one `-`,
    lower case)."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


# --- what is priced -------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestTokens:
    """One request's tokens (one API call), for the long-context tiers.

    Attributes:
        prompt_tokens: The whole prompt, cached part included.
        cache_read_tokens: Part of the prompt read from cache (None: none recorded).
        cache_write_tokens: Part of the prompt written to cache (None: none recorded).
        output_tokens: Generated tokens, reasoning included.
    """

    prompt_tokens: float
    cache_read_tokens: float | None = None
    cache_write_tokens: float | None = None
    output_tokens: float | None = None


@dataclass(frozen=True)
class ModelLedger:
    """One model's tokens in one session, as each agent's reader counts them.

    Attributes:
        model: The model name as the log writes it (an Inspect `provider/model` included).
        provider: The provider, when the log names it apart from the model (else None: the table
            finds it from the model name).
        prompt_tokens: The whole prompt, cache reads and writes included (None: not recorded).
        cache_read_tokens: Part of the prompt read from cache (None: none recorded).
        cache_write_tokens: Part of the prompt written to cache, both durations (None: none).
        cache_write_1h_tokens: Part of the cache writes kept for one hour; None when the log
            does not split them (every write is then priced at the 5-minute rate).
        output_tokens: Generated tokens, reasoning included (None: not recorded).
        reasoning_tokens: Part of the output spent on reasoning (shown, never priced again).
        max_request_prompt_tokens: The largest single request's prompt, where known: tells
            whether a long-context tier applied.
        requests: Each request's tokens, where the log records them all: priced one by one when
            the price has long-context tiers.
        recorded_cost_usd: What the log says this model cost, where it says it.
        output_lower_bound: The output count may be short (Claude Code per-message snapshots).
    """

    model: str | None
    prompt_tokens: float | None
    cache_read_tokens: float | None = None
    cache_write_tokens: float | None = None
    cache_write_1h_tokens: float | None = None
    output_tokens: float | None = None
    reasoning_tokens: float | None = None
    provider: str | None = None
    max_request_prompt_tokens: float | None = None
    requests: tuple[RequestTokens, ...] | None = field(default=None, repr=False)
    recorded_cost_usd: float | None = None
    output_lower_bound: bool = False

    @property
    def uncached_input_tokens(self) -> float | None:
        """The prompt minus its cache reads and writes (None when the prompt is unknown)."""
        if self.prompt_tokens is None:
            return None
        return self.prompt_tokens - (self.cache_read_tokens or 0) - (self.cache_write_tokens or 0)

    def counts(self) -> dict[str, float | None]:
        """Tokens per priced part, in `COMPONENTS` order."""
        write = self.cache_write_tokens or 0
        hour = min(self.cache_write_1h_tokens or 0, write)
        return {
            "input": self.uncached_input_tokens,
            "cache_read": self.cache_read_tokens or 0,
            "cache_write_5m": write - hour,
            "cache_write_1h": hour,
            "output": self.output_tokens,
        }

    @property
    def empty(self) -> bool:
        """No token of any kind: costs 0 whatever the model."""
        return not any(
            x
            for x in (
                self.prompt_tokens,
                self.cache_read_tokens,
                self.cache_write_tokens,
                self.output_tokens,
            )
        )


@dataclass(frozen=True)
class ComponentCost:
    """One priced part of one model's tokens.

    Attributes:
        component: One of `COMPONENTS`.
        tokens: How many tokens.
        usd_per_mtok: The price per million tokens applied (the base rate when requests were
            priced at different tiers: see `cost_usd`).
        cost_usd: What they cost.
    """

    component: str
    tokens: float
    usd_per_mtok: float
    cost_usd: float


@dataclass(frozen=True)
class PricedModel:
    """What one model's tokens cost in one session.

    Attributes:
        model: The model name as the log writes it.
        cost_usd: The priced cost; None when it cannot be priced (`reason` says why).
        components: The cost per part (empty when not priced).
        price_source: Where the price came from: `genai-prices 0.2.3` (the table and its
            version) or `user prices (FILE.toml)`; None when not priced.
        table_model: The table's model id the name matched (`claude-sonnet-4-5`), or the user
            file's model name.
        table_provider: The table's provider id (`anthropic`, `openai`), None for user prices.
        price_date: The date whose price was used; None when the session date is unknown (the
            latest price then).
        reason: Why there is no cost, in words; None when priced.
        notes: What the figure assumes (a lower bound, an unsplit cache write, the latest price).
        recorded_cost_usd: What the log says this model cost, where it says it.
        lower_bound: The true cost may be higher (a tier not applied, output snapshots).
    """

    model: str | None
    cost_usd: float | None
    components: tuple[ComponentCost, ...] = ()
    price_source: str | None = None
    table_model: str | None = None
    table_provider: str | None = None
    price_date: date | None = None
    reason: str | None = None
    notes: tuple[str, ...] = ()
    recorded_cost_usd: float | None = None
    lower_bound: bool = False

    def component(self, name: str) -> ComponentCost | None:
        return next((c for c in self.components if c.component == name), None)

    def to_dict(self) -> dict[str, Any]:
        """One row: the model, its cost, each part's tokens and cost, source, reason."""
        row: dict[str, Any] = {
            "model": self.model,
            "priced_cost_usd": self.cost_usd,
            "recorded_cost_usd": self.recorded_cost_usd,
        }
        for name in COMPONENTS:
            c = self.component(name)
            row[f"{name}_tokens"] = c.tokens if c else None
            row[f"{name}_cost_usd"] = c.cost_usd if c else None
        row.update(
            {
                "price_source": self.price_source,
                "table_model": self.table_model,
                "price_date": self.price_date.isoformat() if self.price_date else None,
                "lower_bound": self.lower_bound,
                "price_reason": self.reason,
                "price_notes": "; ".join(self.notes) or None,
            }
        )
        return row

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([self.to_dict()])


# --- user prices ------------------------------------------------------------------------------

_RATE_KEYS = ("input", "cached_input", "cache_write", "cache_write_1h", "output")
_USER_KEYS = (*_RATE_KEYS, "valid_from")


@dataclass(frozen=True)
class UserPrice:
    """One model's price from the user's file, in dollars per million tokens.

    Attributes:
        model: The model name it applies to (compared without case, and without an Inspect
            `provider/` prefix on the log's side).
        input: Uncached input.
        cached_input: Cache reads (default: `input`).
        cache_write: Cache writes kept 5 minutes, and every write when the log does not split
            them (default: `input`).
        cache_write_1h: Cache writes kept one hour (default: `cache_write`).
        output: Output, reasoning included.
        valid_from: The first day this price applies (None: always).
    """

    model: str
    input: Decimal
    output: Decimal
    cached_input: Decimal | None = None
    cache_write: Decimal | None = None
    cache_write_1h: Decimal | None = None
    valid_from: date | None = None

    def per_mtok(self) -> dict[str, Decimal]:
        write = self.cache_write if self.cache_write is not None else self.input
        return {
            "input": self.input,
            "cache_read": self.cached_input if self.cached_input is not None else self.input,
            "cache_write_5m": write,
            "cache_write_1h": self.cache_write_1h if self.cache_write_1h is not None else write,
            "output": self.output,
        }


@dataclass(frozen=True)
class UserPrices:
    """The prices of a `--prices` file.

    Attributes:
        source: The file's name (no directory: outputs stay the same wherever it lives).
        prices: Every price, file order.
    """

    source: str
    prices: tuple[UserPrice, ...] = ()

    @property
    def label(self) -> str:
        return f"user prices ({self.source})"

    def lookup(self, model: str, when: date | None) -> UserPrice | None:
        """The model's price in force on `when` (the latest `valid_from` not after it); with no
        date, its latest price. None when the file has no price for the model on that date."""
        names = {model.lower(), model.rsplit("/", 1)[-1].lower()}
        mine = [p for p in self.prices if p.model.lower() in names]
        if when is not None:
            mine = [p for p in mine if p.valid_from is None or p.valid_from <= when]
        if not mine:
            return None
        return max(mine, key=lambda p: p.valid_from or date.min)


def _decimal(value: Any, origin: str, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{origin}: {where} must be a number of dollars per million tokens")
    if value != value or value < 0 or value == float("inf"):
        raise UsageError(f"{origin}: {where} must be a non-negative number")
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _valid_from(value: Any, origin: str, where: str) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise UsageError(f"{origin}: {where} must be a date (valid_from = 2026-01-31)")


def _one_price(model: str, entry: Any, origin: str, where: str) -> UserPrice:
    if not isinstance(entry, Mapping):
        raise UsageError(f"{origin}: {where} must be a table of prices")
    for key in entry:
        if key not in _USER_KEYS:
            raise UsageError(
                f"{origin}: unknown key {where}.{key} (known: {', '.join(_USER_KEYS)})"
            )
    for key in ("input", "output"):
        if key not in entry:
            raise UsageError(f"{origin}: {where} needs {key} (dollars per million tokens)")
    rates = {k: _decimal(entry[k], origin, f"{where}.{k}") for k in _RATE_KEYS if k in entry}
    when = None
    if "valid_from" in entry:
        when = _valid_from(entry["valid_from"], origin, f"{where}.valid_from")
    return UserPrice(model=model, valid_from=when, **rates)


def prices_from_dict(data: Mapping[str, Any], *, source: str = "(dict)") -> UserPrices:
    """User prices from their declaration (the TOML shape):

        [models."claude-sonnet-4-5"]
        input = 3.0
        cached_input = 0.3
        cache_write = 3.75
        cache_write_1h = 6.0
        output = 15.0

        [[models."my-private-model"]]     # an array of tables: one price per valid_from
        valid_from = 2026-01-01
        input = 1.0
        output = 4.0

    Raises:
        UsageError: A bad declaration, named by its file and key, in one line.
    """
    for key in data:
        if key != "models":
            raise UsageError(f"{source}: unknown key {key} (known: models)")
    models = data.get("models", {})
    if not isinstance(models, Mapping):
        raise UsageError(f"{source}: models must be a table of model names")
    out: list[UserPrice] = []
    for model, entry in models.items():
        where = f'models."{model}"'
        if isinstance(entry, list):
            if not entry:
                raise UsageError(f"{source}: {where} has no price")
            for i, one in enumerate(entry):
                out.append(_one_price(model, one, source, f"{where}[{i}]"))
            dated = [p.valid_from for p in out if p.model == model]
            if len(set(dated)) != len(dated):
                raise UsageError(f"{source}: {where} has two prices with the same valid_from")
        else:
            out.append(_one_price(model, entry, source, where))
    return UserPrices(source=source, prices=tuple(out))


def load_prices(path: str | os.PathLike[str]) -> UserPrices:
    """Read a `--prices FILE.toml`.

    Raises:
        UsageError: No such file, not TOML, or a bad declaration (named by file and key).
    """
    import tomllib  # only a prices file needs it

    text = os.fspath(path)
    name = os.path.basename(text)
    try:
        with open(text, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"{text}: no such prices file") from None
    except IsADirectoryError:
        raise UsageError(f"{text}: is a directory, not a prices file") from None
    except OSError as exc:
        raise UsageError(f"{text}: cannot read ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{name}: not a valid TOML prices file ({exc})") from None
    return prices_from_dict(data, source=name)


# --- pricing -----------------------------------------------------------------------------------


def _instant(when: date | datetime | None) -> datetime:
    if when is None:
        return _LATEST
    if isinstance(when, datetime):
        return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return datetime.combine(when, time(12, 0), tzinfo=UTC)


def price_day(when: date | datetime | None) -> date | None:
    """The day whose prices apply at `when` (its UTC date); None when `when` is."""
    if when is None:
        return None
    if isinstance(when, datetime):
        return _instant(when).astimezone(UTC).date()
    return when


# Inspect's provider names where genai-prices names the provider otherwise.
_PROVIDER_IDS = {"grok": "x-ai", "bedrock": "aws", "azureai": "azure", "vertex": "google"}


def _split_provider(model: str, provider: str | None) -> tuple[str, str | None]:
    """`anthropic/claude-x` → (`claude-x`, `anthropic`); a name without `/` is kept whole."""
    if provider is None and "/" in model:
        head, rest = model.split("/", 1)
        return rest, head
    return model, provider


def load_price_table() -> None:
    """Import the price table now rather than at its first lookup (a tenth to a fifth of a
    second): for a caller that knows it will ask the table and has time to spare now, such as a
    corpus load whose parser workers are still parsing."""
    from genai_prices.data_snapshot import get_snapshot

    get_snapshot()


@cache  # one lookup per model name: a corpus prices the same few models over and over
def _table_lookup(model: str, provider: str | None) -> tuple[Any, Any] | str:
    """(provider, model info) from the table, or the reason it has none."""
    from genai_prices.data_snapshot import get_snapshot

    snapshot = get_snapshot()
    name, prov = _split_provider(model, provider)
    if prov is not None:
        prov_id = _PROVIDER_IDS.get(prov.lower(), prov)
        try:
            return snapshot.find_provider_model(name, None, prov_id, None)
        except LookupError:
            pass  # an unknown provider, or the model under another: try by name alone
    try:
        return snapshot.find_provider_model(name, None, None, None)
    except LookupError:
        return f"the price table ({table_version()}) does not know the model {model}"


class _Tiered:
    """A price with long-context tiers: (base, [(prompt threshold, price)])."""

    def __init__(self, base: Decimal, tiers: Sequence[tuple[int, Decimal]]) -> None:
        self.base = base
        self.tiers = sorted(tiers)

    def at(self, prompt: float) -> Decimal:
        # As genai-prices: above a threshold the tier's rate applies to every token.
        price = self.base
        for start, tier_price in self.tiers:
            if prompt > start:
                price = tier_price
        return price


def _table_prices(model_price: Any) -> dict[str, Decimal | _Tiered | None]:
    from genai_prices.types import TieredPrices

    out: dict[str, Decimal | _Tiered | None] = {}
    for part, keys in _KEYS.items():
        value = None
        for key in keys:
            value = getattr(model_price, key, None)
            if value is not None:
                break
        if isinstance(value, TieredPrices):
            value = _Tiered(value.base, [(t.start, t.price) for t in value.tiers])
        out[part] = value
    return out


def _threshold(prices: Mapping[str, Decimal | _Tiered | None]) -> int | None:
    starts = [s for p in prices.values() if isinstance(p, _Tiered) for s, _ in p.tiers]
    return min(starts) if starts else None


def _covers(ledger: ModelLedger) -> bool:
    """The ledger's per-request tokens add up to its totals (prompt and output)."""
    reqs = ledger.requests
    if not reqs or ledger.prompt_tokens is None or ledger.output_tokens is None:
        return False
    if any(r.output_tokens is None for r in reqs):
        return False
    prompt = sum(r.prompt_tokens for r in reqs)
    output = sum(r.output_tokens or 0 for r in reqs)
    return prompt == ledger.prompt_tokens and output == ledger.output_tokens


def _cost_of(
    counts: Mapping[str, float | None],
    prices: Mapping[str, Decimal | _Tiered | None],
    prompt: float,
) -> dict[str, Decimal]:
    out = {}
    for part in COMPONENTS:
        price = prices[part]
        unit = price.at(prompt) if isinstance(price, _Tiered) else price
        out[part] = Decimal(repr(float(counts[part] or 0))) * (unit or Decimal(0)) / _PER
    return out


@dataclass(frozen=True, eq=False)
class Rates:
    """One model's prices per million tokens on one date, as `price_model` applies them.

    Attributes:
        unit_prices: Each part's price (`COMPONENTS`), with long-context tiers where the table
            has them; None where the table has no price for the part (costs 0).
        source: `genai-prices 0.2.3` or `user prices (FILE.toml)`.
        table_model: The table's model id the name matched, or the user file's model name.
        table_provider: The table's provider id; None for user prices.
        threshold: The lowest prompt size at which a long-context tier starts (None: no tier).
    """

    unit_prices: Mapping[str, Decimal | _Tiered | None]
    source: str
    table_model: str
    table_provider: str | None
    threshold: int | None

    def base_rates(self) -> tuple[Decimal, ...]:
        """Each part's price below every long-context tier (0 where there is none), in
        `COMPONENTS` order: what `price_model` multiplies a session's token totals by."""
        out = []
        for part in COMPONENTS:
            price = self.unit_prices[part]
            unit = price.at(0) if isinstance(price, _Tiered) else price
            out.append(unit or Decimal(0))
        return tuple(out)


# Rates are made once per price (a table's dated price or a user's price) and reused: a corpus
# prices the same few models on the same few prices over and over.
_RATES: dict[tuple[int, str, str, str | None], tuple[Any, Rates]] = {}


def _rates_of(price: Any, unit_prices: Any, source: str, model: str, provider: str | None) -> Rates:
    key = (id(price), source, model, provider)
    got = _RATES.get(key)
    if got is None or got[0] is not price:
        prices = unit_prices()
        got = (price, Rates(prices, source, model, provider, _threshold(prices)))
        _RATES[key] = got
    return got[1]


def model_rates(
    model: str,
    provider: str | None = None,
    *,
    when: date | datetime | None = None,
    prices: UserPrices | None = None,
    memo: MutableMapping[str, Rates | str] | None = None,
) -> Rates | str:
    """The prices `price_model` applies to `model`'s tokens on `when` (None: the latest): the
    user's where `prices` has one for the model on that day, else the table's; or the reason,
    in words, that there are none.

    `memo` keeps the table's answers by `table_key` (what one installed table gives never
    changes): an answer found there needs no table, whose import alone takes a third of a
    second (`evalkit.store.price_memo` keeps them beside a store's sessions).
    """
    user = prices.lookup(model, price_day(when)) if prices is not None else None
    if user is not None:
        label = prices.label  # type: ignore[union-attr]
        return _rates_of(user, lambda: dict(user.per_mtok()), label, user.model, None)
    if memo is None:
        return _table_rates(model, provider, when)
    key = table_key(model, provider, when)
    got = memo.get(key)
    if got is None:
        got = memo[key] = _table_rates(model, provider, when)
    return got


def table_key(model: str, provider: str | None, when: date | datetime | None) -> str:
    """What the table's answer for a model depends on, as text: its name, its provider and the
    instant whose price applies."""
    named = "" if provider is None else "=" + provider
    return f"{model}\x1f{named}\x1f{_instant(when).isoformat()}"


@cache
def table_identity() -> str:
    """The installed price table, as a `memo` is keyed: its version, and its data file's size
    and time (a table changed in place is another table). Found without importing it."""
    st = None
    where = _table_dir()
    if where is not None:
        with contextlib.suppress(OSError):
            st = os.stat(os.path.join(where, "data.py"))
    stamp = f"{st.st_size}:{st.st_mtime_ns}" if st is not None else "?"
    return f"{table_version()}:{stamp}"


def rates_to_json(rates: Rates | str) -> Any:
    """`Rates` (or the reason there are none) as JSON: every price as its exact decimal text."""
    if isinstance(rates, str):
        return rates
    unit: dict[str, Any] = {}
    for part, price in rates.unit_prices.items():
        if isinstance(price, _Tiered):
            unit[part] = [str(price.base), [[start, str(p)] for start, p in price.tiers]]
        else:
            unit[part] = None if price is None else str(price)
    return {
        "unit": unit,
        "source": rates.source,
        "table_model": rates.table_model,
        "table_provider": rates.table_provider,
    }


def rates_from_json(data: Any) -> Rates | str:
    """`rates_to_json` read back.

    Raises:
        ValueError: `data` is not what `rates_to_json` writes.
    """
    if isinstance(data, str):
        return data
    try:
        unit: dict[str, Decimal | _Tiered | None] = {}
        for part in COMPONENTS:
            value = data["unit"][part]
            if isinstance(value, list):
                base, tiers = value
                unit[part] = _Tiered(Decimal(base), [(int(t), Decimal(p)) for t, p in tiers])
            elif value is None or isinstance(value, str):
                unit[part] = None if value is None else Decimal(value)
            else:
                raise TypeError(f"{part} is not a price")
        source, model, provider = data["source"], data["table_model"], data["table_provider"]
    except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
        raise ValueError(f"not a price: {exc}") from None
    texts = isinstance(source, str) and isinstance(model, str)
    if not texts or not (provider is None or isinstance(provider, str)):
        raise ValueError("not a price: its source and model are not text")
    return Rates(unit, source, model, provider, _threshold(unit))


def _table_rates(model: str, provider: str | None, when: date | datetime | None) -> Rates | str:
    found = _table_lookup(model, provider)
    if isinstance(found, str):
        return found
    table_provider, info = found
    price = info.get_prices(_instant(when))
    rates = _rates_of(
        price, lambda: _table_prices(price), table_version(), info.id, table_provider.id
    )
    for part in ("input", "output"):
        if rates.unit_prices[part] is None:
            return f"the price table has no {part} price for {info.id}"
    return rates


# The notes of a priced model (`price_model`; the columnar `evalkit.corpus.pricing` writes the
# same words).
NOTE_NO_DATE = "session date unknown: the latest price"
NOTE_UNSPLIT = "cache writes not split by duration: priced as 5-minute writes"
NOTE_SNAPSHOTS = "output tokens from per-message usage (streamed snapshots): a lower bound"


def tier_note(threshold: int, *, sizes_known: bool) -> str:
    """The note of a model priced at its base rate under a long-context tier: a request
    crossed `threshold` (`sizes_known`), or the requests' prompt sizes are unknown."""
    if not sizes_known:
        return (
            f"requests' prompt sizes unknown: priced below the {threshold:,}-token "
            "long-context tier (a lower bound if any request crossed it)"
        )
    return (
        f"a request's prompt crossed {threshold:,} tokens: priced at the base rate, a lower bound"
    )


def price_model(
    ledger: ModelLedger,
    *,
    when: date | datetime | None = None,
    prices: UserPrices | None = None,
    memo: MutableMapping[str, Rates | str] | None = None,
) -> PricedModel:
    """Price one model's tokens on the session's date.

    Args:
        ledger: The model's tokens.
        when: The session's date (or time); None when unknown: the latest price is used and
            `notes` say so.
        prices: User prices; a model they price on that date is priced by them, not the table.
        memo: The table's answers already known (`model_rates`), added to as it is asked.

    Never raises: what cannot be priced has `cost_usd` None and a `reason`.
    """
    recorded = ledger.recorded_cost_usd
    day = price_day(when)
    if ledger.empty:
        return PricedModel(ledger.model, 0.0, recorded_cost_usd=recorded, price_date=day)
    if ledger.model is None:
        return PricedModel(None, None, reason="the log does not name the model", price_date=day)
    missing = [
        what
        for what, value in (("prompt", ledger.prompt_tokens), ("output", ledger.output_tokens))
        if value is None
    ]
    if missing:
        return PricedModel(
            ledger.model,
            None,
            reason=f"the log does not record the {' and '.join(missing)} tokens",
            recorded_cost_usd=recorded,
            price_date=day,
        )
    counts = ledger.counts()
    if (counts["input"] or 0) < 0:
        return PricedModel(
            ledger.model,
            None,
            reason="the cache reads and writes exceed the prompt",
            recorded_cost_usd=recorded,
            price_date=day,
        )

    notes: list[str] = []
    rates = model_rates(ledger.model, ledger.provider, when=when, prices=prices, memo=memo)
    if isinstance(rates, str):
        return PricedModel(
            ledger.model, None, reason=rates, recorded_cost_usd=recorded, price_date=day
        )
    unit_prices = rates.unit_prices
    source, table_model, table_provider = rates.source, rates.table_model, rates.table_provider
    if when is None:
        notes.append(NOTE_NO_DATE)
    if ledger.cache_write_tokens and ledger.cache_write_1h_tokens is None:
        notes.append(NOTE_UNSPLIT)

    lower = ledger.output_lower_bound
    if lower:
        notes.append(NOTE_SNAPSHOTS)
    threshold = rates.threshold
    if threshold is not None and _covers(ledger):
        cost = dict.fromkeys(COMPONENTS, Decimal(0))
        for r in ledger.requests or ():
            one = ModelLedger(
                ledger.model,
                r.prompt_tokens,
                r.cache_read_tokens,
                r.cache_write_tokens,
                output_tokens=r.output_tokens,
            ).counts()
            if ledger.cache_write_1h_tokens is not None and ledger.cache_write_tokens:
                # The 1-hour share of the session's writes, spread over its requests.
                share = Decimal(repr(ledger.cache_write_1h_tokens / ledger.cache_write_tokens))
                write = Decimal(repr(float(r.cache_write_tokens or 0)))
                one["cache_write_1h"] = float(write * share)
                one["cache_write_5m"] = float(write - write * share)
            for part, usd in _cost_of(one, unit_prices, r.prompt_tokens).items():
                cost[part] += usd
        above = sum(1 for r in ledger.requests or () if r.prompt_tokens > threshold)
        if above:
            notes.append(
                f"{above} {pl(above, 'request')} over {threshold:,} prompt tokens: long-context rate"
            )
    else:
        cost = _cost_of(counts, unit_prices, 0)
        if threshold is not None:
            # No request's prompt exceeds the session's whole prompt: an upper bound.
            biggest = ledger.max_request_prompt_tokens
            if biggest is None and (ledger.prompt_tokens or 0) <= threshold:
                biggest = ledger.prompt_tokens
            if biggest is None:
                notes.append(tier_note(threshold, sizes_known=False))
                lower = True
            elif biggest > threshold:
                notes.append(tier_note(threshold, sizes_known=True))
                lower = True
    components = tuple(
        ComponentCost(
            component=part,
            tokens=float(counts[part] or 0),
            usd_per_mtok=float(_base(unit_prices[part])),
            cost_usd=float(cost[part]),
        )
        for part in COMPONENTS
    )
    return PricedModel(
        model=ledger.model,
        cost_usd=float(sum(cost.values(), Decimal(0))),
        components=components,
        price_source=source,
        table_model=table_model,
        table_provider=table_provider,
        price_date=day,
        notes=tuple(notes),
        recorded_cost_usd=recorded,
        lower_bound=lower,
    )


def _base(price: Decimal | _Tiered | None) -> Decimal:
    if price is None:
        return Decimal(0)
    return price.base if isinstance(price, _Tiered) else price
