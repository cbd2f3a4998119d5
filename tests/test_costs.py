"""A session's cost for every agent (evalkit.metrics.costs, issue 27).

Each fixture is built by the helpers and read by the agent's own reader; each priced value is
checked against a hand computation from the installed table's own per-token prices (read from
genai-prices here), so a table update cannot break a test silently.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from evalkit.formats.codex.exec_json import read_exec_json
from evalkit.formats.codex.rollout import read_rollout
from evalkit.formats.inspect.logs import inspect_available, read_inspect_log
from evalkit.metrics.costs import (
    COST_COLUMNS,
    COST_DIFFERENCE_LIMIT,
    MODEL_COST_COLUMNS,
    SessionCost,
    agent_cost,
    claude_code_cost,
    claude_code_date,
    claude_code_ledgers,
    session_cost,
)
from evalkit.metrics.prices import ModelLedger, load_prices, table_version
from evalkit.metrics.tokens import claude_code_tokens
from evalkit.session import parse_session, read_session_file
from evalkit.store.columns import DTYPES
from tests.agent_builders import (
    codex_session_lines,
    exec_stream_events,
    inspect_log,
    turn_context,
    write_events,
    write_rollout,
)
from tests.builders import RESULT, TEXT, lines, write_jsonl

M = Decimal(1_000_000)
DAY = date(2026, 1, 15)
NOON = datetime(2026, 1, 15, 12, tzinfo=UTC)


def table_prices(model: str, when: datetime, provider: str | None = None):
    from genai_prices.data_snapshot import get_snapshot

    _provider, info = get_snapshot().find_provider_model(model, None, provider, None)
    return info.get_prices(when)


def usd(tokens: float, price) -> float:
    return float(Decimal(repr(float(tokens))) * getattr(price, "base", price) / M)


# --- Codex --------------------------------------------------------------------------------------


def _rollout(tmp_path: Path, model: str):
    """The acceptance rollout (agent_builders) with every turn served by `model`: Σ input 3000,
    of which cached 2100 (uncached 900), output 180."""
    body = [
        turn_context(line["payload"].get("turn_id"), model=model)
        if line["type"] == "turn_context"
        else line
        for line in codex_session_lines()
    ]
    return read_rollout(write_rollout(tmp_path / "rollout.jsonl", body))


def test_a_codex_rollout_is_priced_from_its_ledger(tmp_path):
    cost = agent_cost(_rollout(tmp_path, "gpt-5-codex"), when=DAY)
    p = table_prices("gpt-5-codex", NOON)
    hand = usd(900, p.input_mtok) + usd(2100, p.cache_read_mtok) + usd(180, p.output_mtok)
    assert cost.priced_cost_usd == pytest.approx(hand)
    assert (cost.recorded_cost_usd, cost.cost_source) == (None, "priced")
    assert cost.cost_usd == cost.priced_cost_usd
    assert cost.cost_difference_usd is None and cost.differs is None
    assert cost.price_table == table_version() and cost.price_date == DAY
    (model,) = cost.models
    assert [c.tokens for c in model.components] == [900, 2100, 0, 0, 180]


def test_a_price_change_between_two_dates_is_honoured_for_a_session(tmp_path):
    from genai_prices.data_snapshot import get_snapshot
    from genai_prices.types import StartDateConstraint

    _p, info = get_snapshot().find_provider_model("o3", None, "openai", None)
    change = next(c.constraint.start_date for c in info.prices if c.constraint is not None)
    assert isinstance(next(c.constraint for c in info.prices if c.constraint), StartDateConstraint)
    session = _rollout(tmp_path, "o3")
    on = datetime.combine(change, datetime.min.time(), tzinfo=UTC)
    for when in (on - timedelta(days=1), on):
        p = table_prices("o3", when)
        hand = usd(900, p.input_mtok) + usd(2100, p.cache_read_mtok) + usd(180, p.output_mtok)
        assert agent_cost(session, when=when).priced_cost_usd == pytest.approx(hand)
    assert (
        agent_cost(session, when=on - timedelta(days=1)).priced_cost_usd
        != agent_cost(session, when=on).priced_cost_usd
    )


def test_an_unknown_model_is_na_with_its_reason(tmp_path):
    cost = agent_cost(_rollout(tmp_path, "example-model"), when=DAY)
    assert cost.priced_cost_usd is None and cost.cost_usd is None and cost.cost_source is None
    assert (
        cost.reason == f"the price table ({table_version()}) does not know the model example-model"
    )
    assert cost.to_dict()["price_reason"] == cost.reason
    assert cost.to_dict()["priced_lower_bound"] is None


def test_user_prices_price_what_the_table_does_not_know(tmp_path):
    (tmp_path / "prices.toml").write_text(
        '[models."example-model"]\ninput = 2.0\ncached_input = 0.5\noutput = 8.0\n',
        encoding="utf-8",
    )
    prices = load_prices(tmp_path / "prices.toml")
    cost = agent_cost(_rollout(tmp_path, "example-model"), when=DAY, prices=prices)
    assert cost.priced_cost_usd == pytest.approx((900 * 2.0 + 2100 * 0.5 + 180 * 8.0) / 1e6)
    assert cost.cost_source == "priced" and cost.price_table == "user prices (prices.toml)"


def test_an_exec_json_stream_is_priced_with_the_model_the_caller_names(tmp_path):
    # The stream names no model (agent-formats §2.4): last turn.completed = input 2500 of which
    # cached 1800, output 120.
    session = read_exec_json(write_events(tmp_path / "codex.txt", exec_stream_events()))
    unnamed = agent_cost(session, when=DAY)
    assert unnamed.priced_cost_usd is None and unnamed.reason == "the log does not name the model"
    cost = agent_cost(session, when=DAY, model="gpt-5-codex")
    p = table_prices("gpt-5-codex", NOON)
    hand = usd(700, p.input_mtok) + usd(1800, p.cache_read_mtok) + usd(120, p.output_mtok)
    assert cost.priced_cost_usd == pytest.approx(hand) and cost.cost_source == "priced"


def test_without_a_session_date_the_latest_price_is_used_and_said(tmp_path):
    session = read_exec_json(write_events(tmp_path / "codex.txt", exec_stream_events()))
    cost = agent_cost(session, model="gpt-5-codex")
    assert cost.price_date is None and "session date unknown: the latest price" in cost.notes
    assert cost.to_dict()["price_date"] is None


# --- Inspect ------------------------------------------------------------------------------------


@pytest.mark.skipif(not inspect_available(), reason="needs the inspect extra")
def test_an_inspect_log_is_priced_and_its_recorded_cost_kept_beside(tmp_path):
    model = "anthropic/claude-haiku-4-5"
    usage = {
        "input_tokens": 100,
        "input_tokens_cache_read": 2000,
        "input_tokens_cache_write": 500,
        "output_tokens": 300,
        "reasoning_tokens": 50,
        "total_tokens": 2900,
    }
    sample = {"calls": [], "answer": "It is in src/net.py.", "scores": {"match": "C"}}
    path = inspect_log(
        tmp_path / "log.eval",
        [
            {**sample, "id": "q-001", "usage": {model: usage}},
            {**sample, "id": "q-002", "usage": {model: {**usage, "total_cost": 0.01}}},
        ],
    )
    unrecorded, recorded = (agent_cost(s, when=DAY) for s in read_inspect_log(path))
    p = table_prices("claude-haiku-4-5", NOON, "anthropic")
    hand = (
        usd(100, p.input_mtok)
        + usd(2000, p.cache_read_mtok)
        + usd(500, p.cache_write_mtok)  # not split by duration: the 5-minute rate
        + usd(300, p.output_mtok)
    )
    assert unrecorded.priced_cost_usd == pytest.approx(hand)
    assert (unrecorded.cost_source, unrecorded.recorded_cost_usd) == ("priced", None)
    assert unrecorded.models[0].table_provider == "anthropic"
    assert recorded.priced_cost_usd == pytest.approx(hand)
    assert (recorded.cost_source, recorded.cost_usd) == ("recorded", 0.01)
    assert recorded.cost_difference_usd == pytest.approx(0.01 - hand)
    assert recorded.cost_difference_share == pytest.approx((0.01 - hand) / 0.01)
    assert recorded.differs == (abs((0.01 - hand) / 0.01) > COST_DIFFERENCE_LIMIT)


# --- Claude Code --------------------------------------------------------------------------------

OPUS, HAIKU = "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"


def message(mid, model, fresh, read, write, out, hour=None, blocks=1, **extra):
    """One assistant message, one event per content block, every event with the same usage
    except the streamed output snapshot, which grows to `out` on the last block."""
    events = []
    for b in range(blocks):
        usage = {
            "input_tokens": fresh,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": out if b == blocks - 1 else 1,
        }
        if hour is not None:
            usage["cache_creation"] = {
                "ephemeral_5m_input_tokens": write - hour,
                "ephemeral_1h_input_tokens": hour,
            }
        body = {"id": mid, "model": model, "content": [TEXT(f"part {b}")], "usage": usage}
        events.append({"type": "assistant", "message": body, **extra})
    return events


def model_usage(fresh, read, write, out, cost):
    return {
        "inputTokens": fresh,
        "outputTokens": out,
        "cacheReadInputTokens": read,
        "cacheCreationInputTokens": write,
        "webSearchRequests": 0,
        "costUSD": cost,
        "contextWindow": 200000,
    }


def _headless(tmp_path: Path, models: dict[str, dict]) -> Path:
    events = lines(
        message("msg_1", OPUS, 600, 30000, 5000, 7, hour=3000, blocks=2),
        message("msg_2", OPUS, 400, 20000, 3000, 5),
        message("msg_3", HAIKU, 500, 10000, 2000, 3),
        RESULT("It is in src/net.py.", total_cost_usd=0.5, modelUsage=models),
    )
    return write_jsonl(tmp_path / "run.jsonl", events)


def test_a_claude_code_headless_session_keeps_total_cost_usd_beside_the_priced_cost(tmp_path):
    path = _headless(
        tmp_path,
        {
            OPUS: model_usage(1000, 50000, 8000, 2000, 0.4),
            HAIKU: model_usage(500, 10000, 2000, 800, 0.1),
        },
    )
    s = parse_session(path)
    cost = claude_code_cost(s.tokens, s.transcript.events, when=DAY)
    o, h = table_prices(OPUS, NOON), table_prices(HAIKU, NOON)
    opus = (
        usd(1000, o.input_mtok)
        + usd(50000, o.cache_read_mtok)
        + usd(5000, o.cache_write_mtok)  # 8000 written, 3000 of them for an hour (msg_1)
        + usd(3000, o.cache_write_1h_mtok)
        + usd(2000, o.output_mtok)  # modelUsage's output, not the streamed snapshots
    )
    haiku = (
        usd(500, h.input_mtok)
        + usd(10000, h.cache_read_mtok)
        + usd(2000, h.cache_write_mtok)
        + usd(800, h.output_mtok)
    )
    assert [m.cost_usd for m in cost.models] == pytest.approx([opus, haiku])
    assert [m.recorded_cost_usd for m in cost.models] == [0.4, 0.1]
    assert cost.priced_cost_usd == pytest.approx(opus + haiku)
    assert (cost.recorded_cost_usd, cost.cost_usd, cost.cost_source) == (0.5, 0.5, "recorded")
    assert cost.cost_difference_usd == pytest.approx(0.5 - (opus + haiku))
    assert not cost.lower_bound  # no request's prompt near a long-context tier
    frame = cost.to_frame()
    assert list(frame["model"]) == [OPUS, HAIKU]
    assert frame.loc[0, "cache_write_1h_tokens"] == 3000
    # Headless stream-json carries no date: the latest price, said so.
    assert claude_code_date(s.transcript.events) is None
    assert "session date unknown: the latest price" in claude_code_cost(s.tokens).notes


def test_one_unknown_model_leaves_the_session_unpriced_but_its_recorded_cost(tmp_path):
    path = _headless(
        tmp_path,
        {
            OPUS: model_usage(1000, 50000, 8000, 2000, 0.4),
            "example-model": model_usage(500, 10000, 2000, 800, 0.1),
        },
    )
    s = parse_session(path)
    cost = claude_code_cost(s.tokens, s.transcript.events, when=DAY)
    assert cost.models[0].cost_usd is not None and cost.models[1].cost_usd is None
    assert cost.priced_cost_usd is None and "example-model" in cost.reason
    assert (cost.cost_usd, cost.cost_source) == (0.5, "recorded")
    assert cost.cost_difference_usd is None


def _interactive(tmp_path: Path) -> Path:
    stamp = {"timestamp": "2026-01-15T10:00:00.000Z", "sessionId": "s-1", "isSidechain": False}
    events = lines(
        {"type": "user", "message": {"role": "user", "content": "Where?"}, **stamp},
        message("msg_1", OPUS, 600, 30000, 5000, 120, hour=3000, blocks=3, **stamp),
        message("msg_2", OPUS, 400, 20000, 3000, 40, blocks=2, **stamp),
        message("msg_3", "<synthetic>", 0, 0, 0, 0, **stamp),
    )
    log_dir = tmp_path / "projects" / "-home-dev-repo"
    log_dir.mkdir(parents=True)
    return write_jsonl(log_dir / "s-1.jsonl", events)


def test_a_claude_code_interactive_session_without_a_result_is_priced(tmp_path):
    s = read_session_file(str(_interactive(tmp_path)))
    tokens = claude_code_tokens(s.events)
    assert tokens.cost is None and tokens.ledger.output_tokens is None  # nothing recorded
    cost = claude_code_cost(tokens, s.events)
    assert cost.price_date == DAY  # from the events' timestamps
    o = table_prices(OPUS, NOON)
    hand = (
        usd(1000, o.input_mtok)
        + usd(50000, o.cache_read_mtok)
        + usd(5000, o.cache_write_mtok)
        + usd(3000, o.cache_write_1h_mtok)
        + usd(160, o.output_mtok)  # the largest snapshot of each message: 120 + 40
    )
    assert cost.priced_cost_usd == pytest.approx(hand)
    assert (cost.recorded_cost_usd, cost.cost_source) == (None, "priced")
    assert cost.lower_bound and any("lower bound" in n for n in cost.notes)
    assert [m.model for m in cost.models] == [OPUS, "<synthetic>"]  # no tokens: 0
    assert cost.models[1].cost_usd == 0.0


def test_ledgers_without_events_fall_back_to_the_session_ledger(tmp_path):
    s = read_session_file(str(_interactive(tmp_path)))
    (only,) = claude_code_ledgers(claude_code_tokens(s.events))
    assert only.prompt_tokens == 600 + 30000 + 5000 + 400 + 20000 + 3000
    assert only.output_tokens is None  # the interactive ledger has no output: not priced
    assert session_cost([only]).reason == "the log does not record the output tokens"


# --- the columns ------------------------------------------------------------------------------


def test_the_cost_columns_are_declared_for_every_value():
    names = [c[0] for c in COST_COLUMNS]
    empty = SessionCost(None, None, None, None)
    assert names == list(empty.to_dict())
    assert all(c[1] in DTYPES and c[3] for c in (*COST_COLUMNS, *MODEL_COST_COLUMNS))
    row = ModelLedger("gpt-5", prompt_tokens=1, output_tokens=1)
    model_row = session_cost([row], when=DAY).models[0].to_dict()
    assert {c[0] for c in MODEL_COST_COLUMNS} <= set(model_row)
