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

from datetime import datetime
from typing import TYPE_CHECKING, Any

from evalkit.metrics.costs import COST_COLUMNS, parse_started_at, session_cost
from evalkit.metrics.prices import COMPONENTS, ModelLedger, UserPrices

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PRICED_COLUMNS",
    "price_frames",
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
    if provider is None and agent == "claude-code":
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


def price_frames(
    sessions: pd.DataFrame, models: pd.DataFrame, prices: UserPrices | None = None
) -> None:
    """Fill the cost columns of the sessions and models frames, in place.

    Args:
        sessions: The sessions frame (its `log`, `recorded_cost_usd`, `started_at`).
        models: The models frame (one token ledger per session × model).
        prices: The user's prices (`--prices FILE.toml`), overriding the table's.

    Never raises on a ledger: what cannot be priced is <NA> with `price_reason`.
    """
    import pandas as pd

    from evalkit.store.columns import columns_of

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
    dtypes = {c.name: c.dtype for c in columns_of("sessions")}
    for name, values in out_sessions.items():
        sessions[name] = pd.array(_clean(values, dtypes[name]), dtype=dtypes[name])
    dtypes = {c.name: c.dtype for c in columns_of("models")}
    for name, values in out_models.items():
        models[name] = pd.array(_clean(values, dtypes[name]), dtype=dtypes[name])


def priced_frame(name: str, rows: dict[str, list[dict[str, Any]]], prices: Any = None):
    """Frame `name` built from `rows` (frame → rows with identity) as `build_frame` builds it,
    the sessions and models frames priced (`price_frames`: each needs the other's rows)."""
    from evalkit.store.columns import build_frame

    if name not in PRICED_COLUMNS:
        return build_frame(name, rows.get(name, []))
    frames = {f: build_frame(f, rows.get(f, [])) for f in PRICED_COLUMNS}
    price_frames(frames["sessions"], frames["models"], resolve_prices(prices))
    return frames[name]


def _clean(values: list[Any], dtype: str) -> list[Any]:
    if dtype == "Float64":
        return [None if v is None or v != v else float(v) for v in values]
    return values
