"""The columnar pricing of the frames against the per-row rule (evalkit.corpus.pricing, issue 22).

`price_frames` prices whole columns; `price_frames_by_row` prices each session through
`session_cost` → `price_model`, the one rule for one session. Over random sessions and models
frames (models the table knows and does not, long-context tiers, a price that changes between
two dates, user prices with dated entries, <NA> tokens, ledgers without a source, per-message
output, recorded costs present and absent, Claude Code rows without a provider, odd counts that
the exact columns leave to the rule) the two must agree cell by cell: the same floats to the
last bit, the same <NA>, the same words, the same dtypes.
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from evalkit.corpus.pricing import PRICED_COLUMNS, price_frames, price_frames_by_row
from evalkit.metrics.prices import prices_from_dict
from evalkit.store.columns import build_frame

SEEDS = range(40)
N_SESSIONS = 60

# Names as logs write them: the table's (one with tiers, one whose price changed on
# 2025-06-10), Inspect's provider/model, a model only the user prices, unknown ones.
MODELS = (
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "claude-sonnet-4",
    "gpt-5-codex",
    "gpt-5.4",  # long-context tier
    "gemini-2.5-pro",  # long-context tier
    "o3",  # a new price from 2025-06-10
    "anthropic/claude-opus-4-1",
    "openai/o3",
    "my-private-model",
    "no-such-model",
    "",
    None,
)
PROVIDERS = (None, None, None, "anthropic", "openai", "google", "bedrock", "nobody")
AGENTS = ("claude-code", "claude-code", "codex", "inspect", "atif", None)
SOURCES = (None, "last", "sum", "messages", "log")
DATES = (
    None,
    "2024-03-01T10:00:00Z",
    "2025-06-09T23:30:00+00:00",
    "2025-06-10T00:30:00Z",
    "2025-06-10T01:00:00+02:00",  # the day before, in UTC
    "2026-01-15T08:00:00",  # no offset: UTC
    "2026-07-01T12:00:00.123456Z",
    "not a date",
)
USER = prices_from_dict(
    {
        "models": {
            "my-private-model": [
                {"valid_from": "2025-01-01", "input": 1.0, "output": 4.0},
                {"valid_from": "2026-01-01", "input": 1.25, "output": 5.0, "cached_input": 0.125},
            ],
            "claude-haiku-4-5": {
                "input": 0.8,
                "cached_input": 0.08,
                "cache_write": 1.0,
                "cache_write_1h": 1.6,
                "output": 4.0,
            },
        }
    },
    source="prices.toml",
)


def _tokens(rng: random.Random) -> float | None:
    """A token count: mostly whole and ordinary, sometimes <NA>, 0, past a long-context tier,
    or one the exact columns leave to the rule (fractional, negative, huge)."""
    pick = rng.random()
    if pick < 0.15:
        return None
    if pick < 0.25:
        return 0.0
    if pick < 0.35:
        return float(rng.randint(150_000, 3_000_000))
    if pick < 0.38:
        return rng.choice((1.5, -3.0, 1e17, 2.0**52 + 1, float("nan"), float("inf")))
    return float(rng.randint(1, 90_000))


def _cost(rng: random.Random) -> float | None:
    pick = rng.random()
    if pick < 0.5:
        return None
    return 0.0 if pick < 0.55 else round(rng.uniform(0.0001, 12.0), rng.randint(2, 9))


def _frames(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A random sessions frame and models frame that mostly, not always, belong together."""
    rng = random.Random(seed)
    sessions, models = [], []
    for i in range(N_SESSIONS):
        log = f"pass/repo/s{i:03d}.jsonl"
        sessions.append(
            {
                "log": log,
                "agent": rng.choice(AGENTS),
                "recorded_cost_usd": _cost(rng),
                "started_at": rng.choice(DATES),
            }
        )
        for _ in range(rng.choice((0, 1, 1, 1, 2, 3))):
            write = _tokens(rng)
            models.append(
                {
                    "log": log,
                    "model": rng.choice(MODELS),
                    "provider": rng.choice(PROVIDERS),
                    "source": rng.choice(SOURCES),
                    "input_tokens": _tokens(rng),
                    "cache_read_tokens": _tokens(rng),
                    "cache_creation_tokens": write,
                    "cache_write_1h_tokens": (
                        None
                        if rng.random() < 0.5 or write is None
                        else rng.uniform(0, 1.2) // 0.1 * write / 10
                    ),
                    "output_tokens": _tokens(rng),
                    "reasoning_tokens": _tokens(rng),
                    "max_request_prompt_tokens": _tokens(rng),
                    "cost_usd": _cost(rng),
                    "output_lower_bound": rng.choice((None, False, True)),
                }
            )
    for i in range(3):  # rows of a session the sessions frame does not hold
        models.append({"log": f"elsewhere/{i}.jsonl", "model": "gpt-5-codex", "source": "log"})
    rng.shuffle(models)  # the models frame's order is the sum's order: not the sessions'
    return build_frame("sessions", sessions), build_frame("models", models)


def _same(a: pd.Series, b: pd.Series) -> list[int]:
    """The rows where two columns differ: dtype, <NA>, or value (floats bit for bit)."""
    assert a.dtype == b.dtype, (a.name, a.dtype, b.dtype)
    na_a, na_b = a.isna().to_numpy(), b.isna().to_numpy()
    bad = na_a != na_b
    both = ~na_a & ~na_b
    if a.dtype == "Float64":
        x = a.to_numpy(float, na_value=0.0).view(np.int64)
        y = b.to_numpy(float, na_value=0.0).view(np.int64)
        bad |= both & (x != y)
    else:
        x, y = a.to_numpy(dtype=object), b.to_numpy(dtype=object)
        differ = [bool(k) and p != q for k, p, q in zip(both, x, y, strict=True)]
        bad |= np.array(differ, dtype=bool)
    return np.flatnonzero(bad).tolist()


def _priced(seed: int, prices) -> tuple[tuple[pd.DataFrame, ...], tuple[pd.DataFrame, ...]]:
    sessions, models = _frames(seed)
    rule = (sessions.copy(), models.copy())
    price_frames_by_row(*rule, prices)
    columnar = (sessions.copy(), models.copy())
    price_frames(*columnar, prices)
    return rule, columnar


@pytest.mark.parametrize("prices", [None, USER], ids=["table", "user-prices"])
def test_columnar_pricing_is_the_per_row_rule_cell_by_cell(prices):
    cells = 0
    for seed in SEEDS:
        rule, columnar = _priced(seed, prices)
        for frame, want, got in zip(("sessions", "models"), rule, columnar, strict=True):
            assert list(want.columns) == list(got.columns)
            names = [*PRICED_COLUMNS[frame], "recorded_cost_usd"]
            for name in names:
                bad = _same(want[name], got[name])
                assert not bad, (
                    f"seed {seed}, {frame}.{name}, row {bad[0]}: "
                    f"{want[name].iloc[bad[0]]!r} by row, {got[name].iloc[bad[0]]!r} columnar"
                )
                cells += len(want)
            # and nothing else changed
            pd.testing.assert_frame_equal(want, got, check_exact=True)
    assert cells > 50_000


def test_the_random_frames_reach_every_branch():
    """The property test is only as good as its frames: they hold every kind of ledger."""
    reasons, notes, sources = set(), set(), set()
    for seed in SEEDS:
        (sessions, models), _ = _priced(seed, USER)
        reasons |= set(models["price_reason"].dropna())
        notes |= {n for v in models["price_notes"].dropna() for n in v.split("; ")}
        sources |= set(sessions["price_table"].dropna())
    words = " | ".join(sorted(reasons))
    for part in (
        "does not know the model",
        "does not name the model",
        "does not record the prompt and output tokens",
        "does not record the prompt tokens",
        "does not record the output tokens",
        "exceed the prompt",
        "no token ledger of its own",
    ):
        assert part in words, part
    tiers = " | ".join(sorted(notes))
    for part in ("latest price", "not split by duration", "lower bound", "long-context tier"):
        assert part in tiers, part
    assert any(", " in s for s in sources)  # a session priced from the table and the file


def test_ordinary_ledgers_never_go_through_the_per_row_rule(monkeypatch):
    """Whole counts are priced by the columns themselves, not by `price_model` one by one."""
    import evalkit.metrics.prices as prices_module

    calls = []
    real = prices_module.price_model
    monkeypatch.setattr(
        prices_module, "price_model", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    sessions, models = _frames(7)
    for c in ("input_tokens", "cache_read_tokens", "cache_creation_tokens", "output_tokens"):
        models[c] = models[c].where(models[c].isna() | (models[c] >= 0), 1.0).round()
        models[c] = models[c].where(models[c] < 1e12, 5.0)
    models["cache_write_1h_tokens"] = models["cache_write_1h_tokens"].round()
    price_frames(sessions, models)
    assert calls == []
    assert models["priced_cost_usd"].notna().sum() > 20


def test_a_log_twice_is_priced_by_the_rule():
    sessions, models = _frames(3)
    sessions = pd.concat([sessions, sessions.iloc[:2]], ignore_index=True)
    want = (sessions.copy(), models.copy())
    price_frames_by_row(*want)
    price_frames(sessions, models)
    pd.testing.assert_frame_equal(want[0], sessions, check_exact=True)
    pd.testing.assert_frame_equal(want[1], models, check_exact=True)


def test_a_session_without_an_agent_is_not_claude_code_in_either_path():
    """An <NA> agent with a ledger that names no provider: neither path raises, and neither
    takes the ledger for Anthropic's (the columnar path's rule, the per-row oracle's too)."""
    sessions = build_frame(
        "sessions",
        [{"log": "a.jsonl", "agent": None, "started_at": "2026-01-15T08:00:00Z"}],
    )
    models = build_frame(
        "models",
        [
            {
                "log": "a.jsonl",
                "model": "claude-sonnet-4-5",
                "source": "last",
                "input_tokens": 1000.0,
                "output_tokens": 100.0,
            }
        ],
    )
    assert sessions["agent"].isna().all()
    want = (sessions.copy(), models.copy())
    price_frames_by_row(*want)
    price_frames(sessions, models)
    pd.testing.assert_frame_equal(want[0], sessions, check_exact=True)
    pd.testing.assert_frame_equal(want[1], models, check_exact=True)
    # Priced as another agent's session is: its ledger's provider not taken for Anthropic.
    codex = (sessions.assign(agent="codex"), models.copy())
    codex[0]["agent"] = codex[0]["agent"].astype("string")
    price_frames_by_row(*codex)
    pd.testing.assert_frame_equal(codex[1], models, check_exact=True)
    assert models["priced_cost_usd"].notna().all()


def test_the_table_answers_read_back_from_json_price_the_same(monkeypatch):
    """What `evalkit.store.price_memo` keeps (each answer as JSON text) prices every cell as
    the table itself does, and a memo holding every answer never asks the table."""
    import json

    import evalkit.metrics.prices as prices_module
    from evalkit.metrics.prices import rates_from_json, rates_to_json

    memos, wants = [], []
    for seed in SEEDS[:10]:
        sessions, models = _frames(seed)
        memo: dict = {}
        price_frames(sessions.copy(), models.copy(), USER, memo=memo)
        memos.append(
            {k: rates_from_json(json.loads(json.dumps(rates_to_json(v)))) for k, v in memo.items()}
        )
        wants.append(_priced(seed, USER)[0])
    assert sum(not isinstance(v, str) for m in memos for v in m.values()) > 100

    def no_table(*args):
        raise AssertionError("the table was asked")

    monkeypatch.setattr(prices_module, "_table_rates", no_table)
    for seed, memo, want in zip(SEEDS[:10], memos, wants, strict=True):
        sessions, models = _frames(seed)
        price_frames(sessions, models, USER, memo=memo)
        for frame, got in zip(want, (sessions, models), strict=True):
            for name in frame.columns:
                assert not _same(frame[name], got[name]), (seed, name)
