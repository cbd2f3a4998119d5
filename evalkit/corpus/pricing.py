"""The priced cost in the frames: every session's and every model's, added when frames are built.

The store keeps each model's token ledger (the models frame's token columns, `started_at` in the
sessions frame), never a price: `price_frames` prices those ledgers each time the frames are
built (`evalkit.corpus.load.load_corpus_frames`, `evalkit.corpus.frames`), so a new price table
or another `--prices FILE.toml` never needs a parse again, and a stored row can never hold a
stale price. The rule of one session's cost (recorded beside priced, the one to use, the
difference) is `evalkit.metrics.costs.session_cost`; this module only reads frames into it and
writes its answer back.

A models row without a ledger of its own (`source` <NA>: a model the assistant messages name
that `result.modelUsage` leaves out) is not priced and not part of the session's sum.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from evalkit.metrics.costs import COST_COLUMNS, parse_started_at, session_cost
from evalkit.metrics.prices import (
    COMPONENTS,
    NOTE_NO_DATE,
    NOTE_SNAPSHOTS,
    NOTE_UNSPLIT,
    ModelLedger,
    UserPrices,
    tier_note,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PRICED_COLUMNS",
    "price_frames",
    "price_frames_by_row",
    "priced_frame",
    "resolve_prices",
    "session_date",
    "with_trial_results",
]

# The sessions frame's columns `price_frames` fills (`cost_usd` replaces the stored value).
_SESSION_COLUMNS = tuple(c[0] for c in COST_COLUMNS)
# The models frame's columns a ledger is read from (`_ledger`).
_LEDGER_COLUMNS = (
    "log",
    "model",
    "source",
    "provider",
    "input_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
    "reasoning_tokens",
    "max_request_prompt_tokens",
    "cost_usd",
    "output_lower_bound",
)

# The columns `price_frames` reads, per frame.
_READS = {
    "sessions": ("log", "agent", "recorded_cost_usd", "started_at"),
    "models": _LEDGER_COLUMNS,
}
# The columns `price_frames` fills, per frame: added when frames are built, never stored.
PRICED_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": tuple(c for c in _SESSION_COLUMNS if c != "recorded_cost_usd"),  # stored
    "models": (
        "recorded_cost_usd",
        "priced_cost_usd",
        *(f"{p}_cost_usd" for p in COMPONENTS),
        "cache_write_5m_tokens",
        "table_model",
        "price_source",
        "price_reason",
        "price_date",
        "priced_lower_bound",
        "price_notes",
    ),
}
_NO_LEDGER = "no token ledger of its own: the session's result.modelUsage prices its models"


def resolve_prices(prices: Any) -> UserPrices | None:
    """`UserPrices`, or a `--prices FILE.toml` path read (`load_prices`), or None.

    Raises:
        UsageError: The file cannot be read or declares a bad price.
    """
    if prices is None or isinstance(prices, UserPrices):
        return prices
    from evalkit.metrics.prices import load_prices

    return load_prices(prices)


def session_date(started_at: Any) -> datetime | None:
    """The `started_at` text as a time (`evalkit.metrics.costs.parse_started_at`)."""
    return parse_started_at(started_at)


def _value(x: Any) -> Any:
    """A frame cell as Python: <NA> and NaN as None."""
    if x is None:
        return None
    try:
        if x != x:
            return None
    except (TypeError, ValueError):
        return None
    return None if type(x).__name__ == "NAType" else x


def _ledger(row: dict[str, Any], agent: Any) -> ModelLedger | None:
    if _value(row.get("source")) is None:
        return None
    fresh = _value(row.get("input_tokens"))
    read = _value(row.get("cache_read_tokens"))
    write = _value(row.get("cache_creation_tokens"))
    prompt = None if fresh is None else fresh + (read or 0.0) + (write or 0.0)
    provider = _value(row.get("provider"))
    # An <NA> agent is not Claude Code, as the columnar path has it (`_price_columns`).
    if provider is None and _value(agent) == "claude-code":
        provider = "anthropic"
    return ModelLedger(
        model=_value(row.get("model")),
        provider=provider,
        prompt_tokens=prompt,
        cache_read_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=_value(row.get("cache_write_1h_tokens")),
        output_tokens=_value(row.get("output_tokens")),
        reasoning_tokens=_value(row.get("reasoning_tokens")),
        max_request_prompt_tokens=_value(row.get("max_request_prompt_tokens")),
        recorded_cost_usd=_value(row.get("cost_usd")),
        output_lower_bound=bool(_value(row.get("output_lower_bound"))),
    )


def with_trial_results(sessions: pd.DataFrame, models: pd.DataFrame, results: Any) -> None:
    """What a harbor trial's `result.json` adds to pricing, in place, where the transcript
    lacks it (`evalkit.formats.harbor.TrialResult`): `agent_result.cost_usd` as the recorded
    cost, `started_at` as the date, and `config.agent.model_name` as the model of a ledger that
    names none (a `codex exec --json` stream). `results`: log → `TrialResult`."""
    if not results or not len(sessions):
        return
    from evalkit.store.columns import name_text

    at = {log: i for i, log in enumerate(sessions["log"].tolist())}
    cols = {c: sessions.columns.get_loc(c) for c in ("recorded_cost_usd", "started_at")}
    unnamed: dict[str, str] = {}
    for log, trial in results.items():
        i = at.get(name_text(log), at.get(log))
        if i is None:
            continue
        if (
            trial.cost_usd is not None
            and _value(sessions.iat[i, cols["recorded_cost_usd"]]) is None
        ):
            sessions.iat[i, cols["recorded_cost_usd"]] = trial.cost_usd
        if trial.started_at and _value(sessions.iat[i, cols["started_at"]]) is None:
            sessions.iat[i, cols["started_at"]] = trial.started_at
        if trial.model:
            unnamed[sessions.iat[i, sessions.columns.get_loc("log")]] = trial.model
    if unnamed and len(models):
        fill = models["model"].isna() & models["log"].isin(list(unnamed))
        if fill.any():
            models.loc[fill, "model"] = [unnamed[log] for log in models.loc[fill, "log"]]


def price_frames_by_row(
    sessions: pd.DataFrame, models: pd.DataFrame, prices: UserPrices | None = None
) -> None:
    """`price_frames` one session at a time: each session's ledgers through `session_cost`.

    The rule the columnar `price_frames` must give cell by cell (a property test compares
    them), and what it falls back to for a sessions frame that holds a log twice.
    """

    by_log: dict[Any, list[int]] = {}
    # Only the ledger's columns: turning every column into Python objects is most of the time.
    model_rows = models[list(_LEDGER_COLUMNS)].to_dict("records") if len(models) else []
    for i, row in enumerate(model_rows):
        by_log.setdefault(row["log"], []).append(i)
    out_models = {name: [None] * len(model_rows) for name in PRICED_COLUMNS["models"]}
    out_sessions: dict[str, list[Any]] = {name: [] for name in _SESSION_COLUMNS}
    for s in sessions[["log", "agent", "recorded_cost_usd", "started_at"]].itertuples(index=False):
        at = by_log.get(s.log, [])
        priced_at, ledgers = [], []
        for i in at:
            out_models["recorded_cost_usd"][i] = _value(model_rows[i].get("cost_usd"))
            ledger = _ledger(model_rows[i], s.agent)
            if ledger is None:
                out_models["price_reason"][i] = _NO_LEDGER
                continue
            priced_at.append(i)
            ledgers.append(ledger)
        cost = session_cost(
            ledgers,
            recorded_cost_usd=_value(s.recorded_cost_usd),
            when=session_date(_value(s.started_at)),
            prices=prices,
        )
        for name, value in cost.to_dict().items():
            out_sessions[name].append(value)
        for i, m in zip(priced_at, cost.models, strict=True):
            d = m.to_dict()
            for name in ("priced_cost_usd", "table_model", "price_source", "price_reason"):
                out_models[name][i] = d[name]
            for p in COMPONENTS:
                out_models[f"{p}_cost_usd"][i] = d[f"{p}_cost_usd"]
            out_models["cache_write_5m_tokens"][i] = d["cache_write_5m_tokens"]
            out_models["price_date"][i] = d["price_date"]
            out_models["priced_lower_bound"][i] = m.lower_bound if m.cost_usd is not None else None
            out_models["price_notes"][i] = d["price_notes"]
    _assign(sessions, "sessions", out_sessions)
    _assign(models, "models", out_models)


def priced_frame(name: str, rows: dict[str, list[dict[str, Any]]], prices: Any = None):
    """Frame `name` built from `rows` (frame → rows with identity) as `build_frame` builds it,
    the sessions and models frames priced (`price_frames`: each needs the other's rows)."""
    from evalkit.store.columns import build_columns, build_frame, columns_of

    if name not in PRICED_COLUMNS:
        return build_frame(name, rows.get(name, []))
    # The other frame only as far as pricing reads it: it is not returned.
    other = "models" if name == "sessions" else "sessions"
    reads = [c for c in columns_of(other) if c.name in _READS[other]]
    frames = {
        name: build_frame(name, rows.get(name, [])),
        other: build_columns(reads, rows.get(other, [])),
    }
    price_frames(frames["sessions"], frames["models"], resolve_prices(prices))
    return frames[name]


# --- columnar pricing ---------------------------------------------------------------------------
#
# `price_frames` gives exactly what `price_frames_by_row` gives, a column at a time. The prices
# are looked up once per distinct (model, provider, date) and the Rates object is shared by
# every ledger priced at the same price, so ledgers are grouped by it. The arithmetic is exact:
# `price_model` prices a part as Decimal(tokens) × rate / 10⁶ and the model as the Decimal sum
# of its parts, then rounds once to a float. With the rate a fraction p / q, that is the float
# nearest to tokens·p / q (and to Σ tokensᵢ·pᵢ·(D/qᵢ) / D over a common denominator D). Where
# every one of those integers is below 2⁵³ the float division of two exactly held integers is
# that nearest float (IEEE division rounds correctly), so the columns are the same to the last
# bit. A ledger outside that range (fractional, negative or huge counts, an odd rate) is priced
# by `price_model` itself.

_EXACT = float(2**53)  # integers below it, their sums and products below it, are exact floats
_TOKENS_LIMIT = float(2**50)  # a count the fast path takes (three of them add up below 2⁵³)


def _numbers(column: pd.Series) -> Any:
    """A numeric column as float64, NaN for <NA> (and for NaN: `_value` reads both as None)."""
    import numpy as np
    import pandas as pd

    return pd.to_numeric(column, errors="coerce").astype("Float64").to_numpy(float, na_value=np.nan)


def _texts(column: pd.Series) -> Any:
    """A text column as an object array, None for <NA>."""
    import numpy as np

    values = column.to_numpy(dtype=object)
    values[column.isna().to_numpy()] = None
    return values if len(values) else np.empty(0, dtype=object)


def _truthy(x: Any) -> Any:
    import numpy as np

    return ~np.isnan(x) & (x != 0)


def _exact_rates(rates: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What the exact columns need of a price (the rules above), or None when they cannot
    hold it: each rate as p / q per token, the common denominator D, each pᵢ·(D/qᵢ), and the
    cost below which `price_model`'s Decimal sum is exact (its 28 digits hold every digit)."""
    import math
    from decimal import Decimal

    nums, dens, exponents = [], [], []
    for rate in rates:
        sign, digits, exponent = rate.as_tuple()
        if sign or not isinstance(exponent, int) or len(digits) > 11:
            return None  # Decimal(tokens) × rate has at most 17 + 11 digits: never rounded
        num, den = rate.as_integer_ratio()
        nums.append(num)
        dens.append(den * 1_000_000)
        exponents.append(min(exponent, 0))
    common = math.lcm(*dens)
    scaled = [n * (common // d) for n, d in zip(nums, dens, strict=True)]
    if max([common, *nums, *scaled]) >= _EXACT:
        return None
    # The sum's digits: tokens×10 (repr's ".0") × the coefficient, aligned on the smallest
    # exponent: below 10²⁸ when the cost is below 10^(21 + that exponent); 100× margin.
    limit = float(Decimal(10) ** (19 + min(exponents)))
    return nums, dens, common, scaled, limit


def price_frames(
    sessions: pd.DataFrame,
    models: pd.DataFrame,
    prices: UserPrices | None = None,
    *,
    memo: MutableMapping[str, Any] | None = None,
) -> None:
    """Fill the cost columns of the sessions and models frames, in place.

    Args:
        sessions: The sessions frame (its `log`, `agent`, `recorded_cost_usd`, `started_at`).
        models: The models frame (one token ledger per session × model).
        prices: The user's prices (`--prices FILE.toml`), overriding the table's.
        memo: The price table's answers already known (`evalkit.store.price_memo.PriceMemo`),
            added to as the table is asked.

    Never raises on a ledger: what cannot be priced is <NA> with `price_reason`. The values are
    those of `price_frames_by_row` (`session_cost` for each session), computed a column at a
    time.
    """
    import numpy as np

    if sessions["log"].duplicated().any():
        price_frames_by_row(sessions, models, prices)
        return
    # Counts that are not finite give what Python's floats give, without numpy's warnings.
    with np.errstate(all="ignore"):
        _price_columns(sessions, models, prices, memo)


def _price_columns(
    sessions: pd.DataFrame,
    models: pd.DataFrame,
    prices: UserPrices | None,
    memo: MutableMapping[str, Any] | None,
) -> None:
    import numpy as np
    import pandas as pd

    from evalkit.metrics.prices import model_rates, price_day, price_model, table_version

    n_s, n_m = len(sessions), len(models)

    # --- each session's date, and whether it is Claude Code's (a ledger without provider)
    parsed: dict[Any, tuple[Any, str | None]] = {}
    whens: list[Any] = []
    day_texts = np.empty(n_s, dtype=object)
    for i, text in enumerate(sessions["started_at"].tolist()):
        text = _value(text)
        got = parsed.get(text)
        if got is None:
            when = session_date(text)
            day = price_day(when)
            got = parsed[text] = (when, day.isoformat() if day else None)
        whens.append(got[0])
        day_texts[i] = got[1]
    undated = np.array([w is None for w in whens], dtype=bool)
    claude = (sessions["agent"] == "claude-code").fillna(False).to_numpy(dtype=bool)
    recorded = _numbers(sessions["recorded_cost_usd"])

    # --- each models row's session (-1: none in the sessions frame: the row is left empty)
    sess = pd.Index(sessions["log"]).get_indexer(models["log"]) if n_m else np.empty(0, int)
    in_session = sess >= 0
    ledger = in_session & models["source"].notna().to_numpy(dtype=bool)
    fresh, read, write, hour_w, output = (
        _numbers(models[c])
        for c in (
            "input_tokens",
            "cache_read_tokens",
            "cache_creation_tokens",
            "cache_write_1h_tokens",
            "output_tokens",
        )
    )
    biggest = _numbers(models["max_request_prompt_tokens"])
    names = _texts(models["model"])
    providers = _texts(models["provider"])
    at = np.where(in_session, sess, 0)
    providers[ledger & claude[at] & (providers == None)] = "anthropic"  # noqa: E711
    snapshots = models["output_lower_bound"].astype("boolean").fillna(False).to_numpy(dtype=bool)

    fast = ledger.copy()
    for x in (fresh, read, write, hour_w, output):
        fast &= np.isnan(x) | ((x >= 0) & (x < _TOKENS_LIMIT) & (x == np.floor(x)) & ~np.signbit(x))

    # --- the models frame's columns (NaN / None: <NA>)
    m_cost = np.full(n_m, np.nan)
    m_parts = {p: np.full(n_m, np.nan) for p in COMPONENTS}
    m_5m = np.full(n_m, np.nan)
    m_text = {
        k: np.full(n_m, None, dtype=object)
        for k in ("table_model", "price_source", "price_reason", "price_date", "price_notes")
    }
    m_lower = np.full(n_m, None, dtype=object)
    priced = np.zeros(n_m, dtype=bool)  # a cost, not None (a slow row's may be NaN)
    m_recorded = np.where(in_session, _numbers(models["cost_usd"]), np.nan)
    m_text["price_reason"][in_session & ~ledger] = _NO_LEDGER
    m_text["price_date"][ledger] = day_texts[at[ledger]]

    # The rules of `price_model`, in its order, over whole columns.
    read0, write0, hour0 = (np.nan_to_num(x, nan=0.0) for x in (read, write, hour_w))
    prompt = fresh + read0 + write0
    counts = {
        "input": prompt - read0 - write0,
        "cache_read": read0,
        "cache_write_5m": write0 - np.minimum(hour0, write0),
        "cache_write_1h": np.minimum(hour0, write0),
        "output": output,
    }
    empty = fast & ~(_truthy(prompt) | _truthy(read) | _truthy(write) | _truthy(output))
    m_cost[empty] = 0.0
    m_lower[empty] = False
    priced[empty] = True
    todo = fast & ~empty
    unnamed = todo & (names == None)  # noqa: E711
    m_text["price_reason"][unnamed] = "the log does not name the model"
    todo &= ~unnamed
    for gone, what in (
        (np.isnan(fresh) & np.isnan(output), "prompt and output"),
        (np.isnan(fresh), "prompt"),
        (np.isnan(output), "output"),
    ):
        m_text["price_reason"][todo & gone] = f"the log does not record the {what} tokens"
        todo &= ~gone
    negative = todo & (counts["input"] < 0)
    m_text["price_reason"][negative] = "the cache reads and writes exceed the prompt"
    todo &= ~negative

    # One price lookup per distinct (model, provider, date); ledgers grouped by the Rates.
    looked: dict[tuple[Any, Any, Any], Any] = {}
    groups: dict[int, tuple[Any, list[int]]] = {}
    for i in np.flatnonzero(todo).tolist():
        key = (names[i], providers[i], whens[sess[i]])
        rates = looked.get(key)
        if rates is None:
            rates = looked[key] = model_rates(key[0], key[1], when=key[2], prices=prices, memo=memo)
        if isinstance(rates, str):
            m_text["price_reason"][i] = rates
        else:
            groups.setdefault(id(rates), (rates, []))[1].append(i)

    for rates, rows in groups.values():
        idx = np.asarray(rows)
        exact = _exact_rates(rates.base_rates())
        if exact is None:
            fast[idx] = False
            continue
        nums, dens, common, scaled, cost_limit = exact
        whole = np.zeros(len(idx))
        fits = np.ones(len(idx), dtype=bool)
        parts = {}
        for part, num, den, big in zip(COMPONENTS, nums, dens, scaled, strict=True):
            c = counts[part][idx]
            product, term = c * float(num), c * float(big)
            fits &= (product < _EXACT) & (term < _EXACT)
            parts[part] = product / float(den)
            whole = whole + term  # exact below 2⁵³: each term is a whole number
        cost = whole / float(common)
        fits &= (whole < _EXACT) & (cost < cost_limit)
        fast[idx[~fits]] = False
        idx = idx[fits]
        for part in COMPONENTS:
            m_parts[part][idx] = parts[part][fits]
        m_cost[idx] = cost[fits]
        priced[idx] = True
        m_5m[idx] = counts["cache_write_5m"][idx]
        m_text["table_model"][idx] = rates.table_model
        m_text["price_source"][idx] = rates.source
        kind = np.zeros(len(idx), dtype=int)
        if rates.threshold is not None:
            b = biggest[idx]
            kind[np.isnan(b) & (prompt[idx] > rates.threshold)] = 1
            kind[~np.isnan(b) & (b > rates.threshold)] = 2
        flags = (
            undated[sess[idx]].astype(int)
            + 2 * (_truthy(write[idx]) & np.isnan(hour_w[idx]))
            + 4 * snapshots[idx]
            + 8 * kind
        )
        m_lower[idx] = snapshots[idx] | (kind > 0)
        for code in np.unique(flags).tolist():
            notes = [
                n
                for bit, n in ((1, NOTE_NO_DATE), (2, NOTE_UNSPLIT), (4, NOTE_SNAPSHOTS))
                if code & bit
            ]
            if code >> 3:
                notes.append(tier_note(rates.threshold, sizes_known=code >> 3 == 2))  # type: ignore[arg-type]
            m_text["price_notes"][idx[flags == code]] = "; ".join(notes) or None

    # The ledgers the exact columns cannot hold: priced one by one, by the rule itself.
    slow = np.flatnonzero(ledger & ~fast)
    if len(slow):
        rows = models.iloc[slow][list(_LEDGER_COLUMNS)].to_dict("records")
        for i, row in zip(slow.tolist(), rows, strict=True):
            s = sess[i]
            led = _ledger(row, "claude-code" if claude[s] else None)
            m = price_model(led, when=whens[s], prices=prices, memo=memo)  # type: ignore[arg-type]
            d = m.to_dict()
            m_cost[i] = np.nan if m.cost_usd is None else m.cost_usd
            for p in COMPONENTS:
                v = d[f"{p}_cost_usd"]
                m_parts[p][i] = np.nan if v is None else v
            m_5m[i] = np.nan if d["cache_write_5m_tokens"] is None else d["cache_write_5m_tokens"]
            for k in ("table_model", "price_source", "price_reason", "price_date", "price_notes"):
                m_text[k][i] = d[k]
            m_lower[i] = m.lower_bound if m.cost_usd is not None else None
            priced[i] = m.cost_usd is not None
    # --- the sessions frame's columns: each session's ledgers, in the models frame's order
    led = np.flatnonzero(ledger)
    owner = sess[led]
    failed = ~priced[led]
    n_ledgers = np.bincount(owner, minlength=n_s)
    n_failed = np.bincount(owner[failed], minlength=n_s)
    total = np.zeros(n_s)
    # Σ one model at a time, in order, as `sum` adds them (the same float at every step).
    place = pd.Series(owner).groupby(owner).cumcount().to_numpy() if len(led) else owner
    for k in range(int(place.max()) + 1 if len(place) else 0):
        here = place == k
        total[owner[here]] += m_cost[led[here]]
    # Priced when every ledger is (its sum may still be NaN: a count that is not finite).
    has_total = (n_ledgers > 0) & (n_failed == 0)
    total[~has_total] = np.nan
    s_reason = np.full(n_s, None, dtype=object)
    s_reason[n_ledgers == 0] = "the log records no tokens"
    why: dict[int, list[str]] = {}
    for s, i in zip(owner[failed].tolist(), led[failed].tolist(), strict=True):
        why.setdefault(s, []).append(m_text["price_reason"][i] or "not priced")
    for s, reasons in why.items():
        s_reason[s] = "; ".join(reasons)
    lower_led = np.array([bool(v) for v in m_lower[led]], dtype=bool)
    any_lower = np.bincount(owner[lower_led], minlength=n_s) > 0
    table = table_version()
    s_table = np.full(n_s, table, dtype=object)
    # Each session's sources, sorted and joined: a code of the (few) distinct sources it has.
    led_sources = m_text["price_source"][led]
    labels = sorted({x for x in led_sources.tolist() if x is not None})
    has = np.zeros(n_s, dtype=np.int64)
    for bit, label in enumerate(labels):
        has |= (np.bincount(owner[led_sources == label], minlength=n_s) > 0).astype(np.int64) << bit
    for code in np.unique(has[has > 0]).tolist():
        s_table[has == code] = ", ".join(x for bit, x in enumerate(labels) if code >> bit & 1)
    s_date = np.where(n_ledgers > 0, day_texts, None)
    has_rec = ~np.isnan(recorded)
    cost = np.where(has_rec, recorded, total)
    source = np.where(has_rec, "recorded", np.where(has_total, "priced", None)).astype(object)
    both = has_rec & has_total
    diff = np.where(both, recorded - total, np.nan)
    share = np.where(both & (recorded != 0), diff / recorded, np.nan)
    s_lower = np.where(has_total, any_lower, None).astype(object)

    out_sessions = {
        "priced_cost_usd": total,
        "recorded_cost_usd": recorded,
        "cost_usd": cost,
        "cost_source": source,
        "cost_difference_usd": diff,
        "cost_difference_share": share,
        "priced_lower_bound": s_lower,
        "price_reason": s_reason,
        "price_table": s_table,
        "price_date": s_date,
    }
    out_models = {
        "recorded_cost_usd": m_recorded,
        "priced_cost_usd": m_cost,
        **{f"{p}_cost_usd": m_parts[p] for p in COMPONENTS},
        "cache_write_5m_tokens": m_5m,
        **{k: m_text[k] for k in ("table_model", "price_source", "price_reason", "price_date")},
        "priced_lower_bound": m_lower,
        "price_notes": m_text["price_notes"],
    }
    _assign(sessions, "sessions", out_sessions)
    _assign(models, "models", out_models)


def _assign(frame: pd.DataFrame, name: str, columns: dict[str, Any]) -> None:
    import numpy as np
    import pandas as pd

    from evalkit.store.columns import columns_of

    dtypes = {c.name: c.dtype for c in columns_of(name)}
    for col, values in columns.items():
        dtype = dtypes[col]
        if dtype == "Float64":
            values = np.asarray(values, dtype=float)
            frame[col] = pd.arrays.FloatingArray(values, np.isnan(values))
        else:
            frame[col] = pd.array(values, dtype=dtype)
