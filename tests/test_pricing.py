"""The priced cost in the frames, for every agent (evalkit.corpus.pricing, issue 27).

Each fixture is built by the helpers and loaded as a user loads it (`sessions_df`, `models_df`,
`load_corpus_frames`); each priced value is checked against a hand computation from the
installed table's own per-token prices, read from genai-prices here.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from evalkit.corpus.frames import models_df, sessions_df
from evalkit.corpus.load import load_corpus_frames
from evalkit.formats.inspect.logs import inspect_available
from evalkit.metrics.prices import table_version
from tests.agent_builders import (
    codex_session_lines,
    exec_stream_events,
    inspect_log,
    turn_context,
    write_events,
    write_rollout,
)
from tests.agent_trees import atif_trajectory
from tests.builders import RESULT, lines, write_jsonl
from tests.test_costs import HAIKU, OPUS, message, model_usage, table_prices, usd

ROLLOUT_DAY = datetime(2030, 1, 1, 10, tzinfo=UTC)  # write_rollout's first line


def rollout(path: Path, model: str, day: str | None = None) -> Path:
    """The acceptance rollout served by `model` (Σ input 3000, cached 2100, output 180),
    written on `day` (YYYY-MM-DD) instead of 2030-01-01 when given."""
    body = [
        turn_context(line["payload"].get("turn_id"), model=model)
        if line["type"] == "turn_context"
        else line
        for line in codex_session_lines()
    ]
    write_rollout(path, body)
    if day is not None:
        path.write_text(path.read_text(encoding="utf-8").replace("2030-01-01", day), "utf-8")
    return path


def codex_hand(model: str, when: datetime) -> float:
    p = table_prices(model, when)
    return usd(900, p.input_mtok) + usd(2100, p.cache_read_mtok) + usd(180, p.output_mtok)


def one(df: pd.DataFrame) -> pd.Series:
    assert len(df) == 1
    return df.iloc[0]


def test_a_codex_rollout_is_priced_in_both_frames(tmp_path):
    path = rollout(tmp_path / "rollout.jsonl", "gpt-5-codex")
    s = one(sessions_df(path))
    hand = codex_hand("gpt-5-codex", ROLLOUT_DAY)
    assert s["priced_cost_usd"] == pytest.approx(hand)
    assert s["cost_usd"] == pytest.approx(hand) and s["cost_source"] == "priced"
    assert pd.isna(s["recorded_cost_usd"]) and pd.isna(s["cost_difference_usd"])
    assert s["started_at"].startswith("2030-01-01T10:00:00")
    assert (s["price_date"], s["price_table"]) == ("2030-01-01", table_version())
    m = one(models_df(path))
    assert (m["model"], m["source"], m["agent"]) == ("gpt-5-codex", "log", "codex")
    assert (m["input_tokens"], m["cache_read_tokens"], m["output_tokens"]) == (900, 2100, 180)
    assert m["priced_cost_usd"] == pytest.approx(hand)
    p = table_prices("gpt-5-codex", ROLLOUT_DAY)
    assert m["input_cost_usd"] == pytest.approx(usd(900, p.input_mtok))
    assert m["table_model"] and m["price_source"] == table_version()


def test_a_price_change_between_two_dates_is_honoured_in_the_frames(tmp_path):
    from genai_prices.data_snapshot import get_snapshot

    _p, info = get_snapshot().find_provider_model("o3", None, "openai", None)
    change = next(c.constraint.start_date for c in info.prices if c.constraint is not None)
    before, on = change - timedelta(days=1), change
    paths = [rollout(tmp_path / f"rollout-{d}.jsonl", "o3", d.isoformat()) for d in (before, on)]
    df = sessions_df(paths)
    for (_, s), d in zip(df.iterrows(), (before, on), strict=True):
        when = datetime.combine(d, datetime.min.time(), tzinfo=UTC) + timedelta(hours=10)
        assert s["priced_cost_usd"] == pytest.approx(codex_hand("o3", when))
        assert s["price_date"] == d.isoformat()
    assert df["priced_cost_usd"].iloc[0] != df["priced_cost_usd"].iloc[1]


def test_an_unknown_model_is_na_with_its_reason_in_both_frames(tmp_path):
    path = rollout(tmp_path / "rollout.jsonl", "example-model")
    s = one(sessions_df(path))
    why = f"the price table ({table_version()}) does not know the model example-model"
    assert pd.isna(s["priced_cost_usd"]) and pd.isna(s["cost_usd"]) and pd.isna(s["cost_source"])
    assert s["price_reason"] == why
    m = one(models_df(path))
    assert pd.isna(m["priced_cost_usd"]) and m["price_reason"] == why


def test_an_exec_json_stream_names_no_model_so_its_cost_is_na_and_says_why(tmp_path):
    path = write_events(tmp_path / "codex.txt", exec_stream_events())
    s = one(sessions_df(path))
    assert pd.isna(s["priced_cost_usd"]) and pd.isna(s["cost_usd"])
    assert s["price_reason"] == "the log does not name the model"
    assert pd.isna(s["started_at"])  # the stream has no timestamps
    m = one(models_df(path))
    assert (m["input_tokens"], m["cache_read_tokens"], m["output_tokens"]) == (700, 1800, 120)


def test_user_prices_price_an_exec_json_model_and_a_rollout_the_table_does_not_know(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[models."example-model"]\ninput = 2.0\ncached_input = 0.5\noutput = 8.0\n', "utf-8"
    )
    path = rollout(tmp_path / "rollout.jsonl", "example-model")
    s = one(sessions_df(path, prices=prices))
    assert s["priced_cost_usd"] == pytest.approx((900 * 2.0 + 2100 * 0.5 + 180 * 8.0) / 1e6)
    assert s["price_table"] == "user prices (prices.toml)" and s["cost_source"] == "priced"


def test_an_atif_trajectory_keeps_total_cost_usd_beside_the_priced_cost(tmp_path):
    doc = atif_trajectory("t1")
    doc["agent"]["model_name"] = "gpt-5-codex"
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    s = one(sessions_df(path))
    when = datetime(2030, 1, 1, 10, tzinfo=UTC)
    p = table_prices("gpt-5-codex", when)
    hand = usd(2300, p.input_mtok) + usd(2000, p.cache_read_mtok) + usd(150, p.output_mtok)
    assert s["priced_cost_usd"] == pytest.approx(hand)
    assert (s["recorded_cost_usd"], s["cost_usd"], s["cost_source"]) == (0.12, 0.12, "recorded")
    assert s["cost_difference_usd"] == pytest.approx(0.12 - hand)
    assert s["cost_difference_share"] == pytest.approx((0.12 - hand) / 0.12)


@pytest.mark.skipif(not inspect_available(), reason="needs the inspect extra")
def test_an_inspect_sample_prices_its_solver_and_grader_models_apart(tmp_path):
    solver, grader = "anthropic/claude-haiku-4-5", "openai/gpt-4o-mini"
    used = {
        "input_tokens": 100,
        "input_tokens_cache_read": 2000,
        "input_tokens_cache_write": 500,
        "output_tokens": 300,
        "total_tokens": 2900,
    }
    graded = {"input_tokens": 400, "output_tokens": 20, "total_tokens": 420}
    sample = {"calls": [], "answer": "It is in src/net.py.", "scores": {"match": "C"}}
    path = inspect_log(
        tmp_path / "log.eval", [{**sample, "id": "q-001", "usage": {solver: used, grader: graded}}]
    )
    m = models_df(path)
    assert list(m["model"]) == [solver, grader]
    s = one(sessions_df(path))
    day = datetime.fromisoformat(s["started_at"].replace("Z", "+00:00"))
    h = table_prices("claude-haiku-4-5", day, "anthropic")
    g = table_prices("gpt-4o-mini", day, "openai")
    solver_usd = (
        usd(100, h.input_mtok)
        + usd(2000, h.cache_read_mtok)
        + usd(500, h.cache_write_mtok)
        + usd(300, h.output_mtok)
    )
    grader_usd = usd(400, g.input_mtok) + usd(20, g.output_mtok)
    assert list(m["priced_cost_usd"]) == pytest.approx([solver_usd, grader_usd])
    assert s["priced_cost_usd"] == pytest.approx(solver_usd + grader_usd)
    assert s["cost_source"] == "priced" and pd.isna(s["recorded_cost_usd"])


def _headless(tmp_path: Path) -> Path:
    events = lines(
        message("msg_1", OPUS, 600, 30000, 5000, 7, hour=3000, blocks=2),
        message("msg_2", OPUS, 400, 20000, 3000, 5),
        message("msg_3", HAIKU, 500, 10000, 2000, 3),
        RESULT(
            "It is in src/net.py.",
            total_cost_usd=0.5,
            modelUsage={
                OPUS: model_usage(1000, 50000, 8000, 2000, 0.4),
                HAIKU: model_usage(500, 10000, 2000, 800, 0.1),
            },
        ),
    )
    return write_jsonl(tmp_path / "run.jsonl", events)


def test_a_claude_code_headless_session_is_recorded_with_the_priced_cost_beside(tmp_path):
    path = _headless(tmp_path)
    latest = datetime(9999, 12, 31, 12, tzinfo=UTC)  # no date in stream-json: the latest price
    o, h = table_prices(OPUS, latest), table_prices(HAIKU, latest)
    opus = (
        usd(1000, o.input_mtok)
        + usd(50000, o.cache_read_mtok)
        + usd(5000, o.cache_write_mtok)
        + usd(3000, o.cache_write_1h_mtok)  # msg_1's one-hour writes
        + usd(2000, o.output_mtok)
    )
    haiku = (
        usd(500, h.input_mtok)
        + usd(10000, h.cache_read_mtok)
        + usd(2000, h.cache_write_mtok)
        + usd(800, h.output_mtok)
    )
    m = models_df(path)
    assert list(m["model"]) == [OPUS, HAIKU]
    assert list(m["priced_cost_usd"]) == pytest.approx([opus, haiku])
    assert list(m["recorded_cost_usd"]) == [0.4, 0.1]
    assert list(m["cache_write_1h_tokens"].fillna(0)) == [3000, 0]
    assert list(m["cache_write_5m_tokens"]) == [5000, 2000]
    s = one(sessions_df(path))
    assert s["priced_cost_usd"] == pytest.approx(opus + haiku)
    assert (s["recorded_cost_usd"], s["cost_usd"], s["cost_source"]) == (0.5, 0.5, "recorded")
    assert s["cost_difference_usd"] == pytest.approx(0.5 - (opus + haiku))
    assert pd.isna(s["price_date"]) and pd.isna(s["started_at"])


def test_a_claude_code_interactive_session_without_a_result_is_priced(tmp_path):
    stamp = {"timestamp": "2026-01-15T10:00:00.000Z", "sessionId": "s-1", "isSidechain": False}
    events = lines(
        {"type": "user", "message": {"role": "user", "content": "Where?"}, **stamp},
        message("msg_1", OPUS, 600, 30000, 5000, 120, hour=3000, blocks=3, **stamp),
        message("msg_2", OPUS, 400, 20000, 3000, 40, blocks=2, **stamp),
    )
    log_dir = tmp_path / "projects" / "-home-dev-repo"
    log_dir.mkdir(parents=True)
    path = write_jsonl(log_dir / "s-1.jsonl", events)
    s = one(sessions_df(path))
    o = table_prices(OPUS, datetime(2026, 1, 15, 10, tzinfo=UTC))
    hand = (
        usd(1000, o.input_mtok)
        + usd(50000, o.cache_read_mtok)
        + usd(5000, o.cache_write_mtok)
        + usd(3000, o.cache_write_1h_mtok)
        + usd(160, o.output_mtok)  # the largest snapshot of each message: 120 + 40
    )
    assert s["priced_cost_usd"] == pytest.approx(hand)
    assert (s["cost_source"], s["price_date"]) == ("priced", "2026-01-15")
    assert pd.isna(s["recorded_cost_usd"]) and bool(s["priced_lower_bound"])
    m = one(models_df(path))
    assert m["source"] == "messages" and bool(m["output_lower_bound"])
    assert "lower bound" in m["price_notes"]


def test_a_stored_row_never_serves_a_stale_price(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    rollout(corpus / "rollout-a.jsonl", "gpt-5-codex")
    store = tmp_path / "store"
    opts = dict(cache_dir=store, jobs=1, progress=False)
    first = load_corpus_frames(corpus, **opts)
    assert first.cache_misses == 1
    hand = codex_hand("gpt-5-codex", ROLLOUT_DAY)
    assert first.frame("sessions")["priced_cost_usd"].iloc[0] == pytest.approx(hand)
    # Other prices for the same stored session: read from the store, priced anew.
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."gpt-5-codex"]\ninput = 1.0\noutput = 10.0\n', "utf-8")
    again = load_corpus_frames(corpus, prices=prices, **opts)
    assert (again.cache_hits, again.cache_misses) == (1, 0)
    s = again.frame("sessions").iloc[0]
    assert s["priced_cost_usd"] == pytest.approx((900 + 2100 + 180 * 10.0) / 1e6)
    assert s["price_table"] == "user prices (prices.toml)"
    m = again.frame("models").iloc[0]
    assert m["priced_cost_usd"] == pytest.approx(s["priced_cost_usd"])
    # And back to the table: nothing of the user's prices was kept.
    last = load_corpus_frames(corpus, **opts)
    assert last.cache_hits == 1
    assert last.frame("sessions")["priced_cost_usd"].iloc[0] == pytest.approx(hand)


def test_the_stored_frame_files_hold_no_price(tmp_path):
    # What the store keeps is the ledger: every priced column is filled when frames are built.
    from evalkit.corpus.frames import session_rows
    from evalkit.corpus.pricing import PRICED_COLUMNS
    from evalkit.session import parse_session

    rows = session_rows(parse_session(_headless(tmp_path)))
    for frame in ("sessions", "models"):
        stored = {k for r in rows[frame] for k in r}
        assert not stored & (set(PRICED_COLUMNS[frame]) - {"cost_usd"}), frame


def _codex_trial(root: Path, task: str, result: dict) -> None:
    trial = root / "suite" / "codex" / task / f"{task}_1"
    (trial / "agent").mkdir(parents=True)
    write_events(trial / "agent" / "codex.txt", exec_stream_events(), banner="codex v0.100")
    doc = {"task_name": task, "verifier_result": {"rewards": {"reward": 1.0}}} | result
    (trial / "result.json").write_text(json.dumps(doc), encoding="utf-8")


def test_a_harbor_result_names_the_model_date_and_recorded_cost_a_stream_lacks(tmp_path):
    config = {"config": {"agent": {"name": "codex", "model_name": "gpt-5-codex"}}}
    _codex_trial(tmp_path, "t1", config | {"started_at": "2026-01-15T10:00:00Z"})
    _codex_trial(tmp_path, "t2", config | {"agent_result": {"cost_usd": 0.3}})
    corpus = load_corpus_frames(tmp_path, layout="harbor", cache=False, jobs=1, progress=False)
    s = corpus.frame("sessions").set_index("task")
    p = table_prices("gpt-5-codex", datetime(2026, 1, 15, 10, tzinfo=UTC))
    hand = usd(700, p.input_mtok) + usd(1800, p.cache_read_mtok) + usd(120, p.output_mtok)
    assert s.loc["t1", "priced_cost_usd"] == pytest.approx(hand)
    assert (s.loc["t1", "cost_source"], s.loc["t1", "price_date"]) == ("priced", "2026-01-15")
    assert (s.loc["t2", "recorded_cost_usd"], s.loc["t2", "cost_source"]) == (0.3, "recorded")
    assert corpus.frame("models")["model"].tolist() == ["gpt-5-codex", "gpt-5-codex"]


def test_load_corpus_and_export_take_the_users_prices(tmp_path):
    import evalkit
    from evalkit.cli import main

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    rollout(corpus / "rollout-a.jsonl", "example-model")
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."example-model"]\ninput = 1.0\noutput = 10.0\n', "utf-8")
    want = (3000 * 1.0 + 180 * 10.0) / 1e6
    loaded = evalkit.load_corpus(corpus, cache=False, jobs=1, prices=prices)
    assert loaded.sessions_df()["priced_cost_usd"].iloc[0] == pytest.approx(want)
    out = tmp_path / "out"
    assert main(["export", str(corpus), "--to", str(out), "--prices", str(prices), "-j", "1"]) == 0
    written = pd.read_parquet(out / "sessions.parquet")
    assert written["priced_cost_usd"].iloc[0] == pytest.approx(want)
    assert written["price_table"].iloc[0] == "user prices (prices.toml)"


def test_evalkit_run_prints_a_codex_sessions_priced_cost(tmp_path, capsys):
    from evalkit.cli import main

    path = rollout(tmp_path / "rollout.jsonl", "gpt-5-codex")
    assert main(["run", str(path)]) == 0
    hand = codex_hand("gpt-5-codex", ROLLOUT_DAY)
    out = capsys.readouterr().out
    assert "  duration 28.0 s, cost not recorded\n" in out
    assert (
        f"  priced from the tokens: ${hand:.4f} ({table_version()}, prices of 2030-01-01)\n" in out
    )
    assert main(["run", str(path), "--json"]) == 0
    (s,) = json.loads(capsys.readouterr().out)["sessions"]
    assert s["priced_cost_usd"] == pytest.approx(hand) and s["cost_source"] == "priced"
    unknown = rollout(tmp_path / "other.jsonl", "example-model")
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."example-model"]\ninput = 1.0\noutput = 10.0\n', "utf-8")
    assert main(["run", str(unknown)]) == 0
    assert "not priced (the price table" in capsys.readouterr().out
    assert main(["run", str(unknown), "--prices", str(prices)]) == 0
    assert "(user prices (prices.toml), prices of 2030-01-01)" in capsys.readouterr().out


def test_a_codex_model_switch_prices_each_models_requests_apart(tmp_path):
    body = [
        turn_context(
            line["payload"].get("turn_id"),
            model="gpt-5-codex" if line["payload"].get("turn_id") == "turn-1" else "o3",
        )
        if line["type"] == "turn_context"
        else line
        for line in codex_session_lines()
    ]
    path = write_rollout(tmp_path / "rollout.jsonl", body)
    m = models_df(path)
    assert list(m["model"]) == ["gpt-5-codex", "o3"]
    # turn 1's requests: input 1000 + 1100 (cached 800 + 1000), output 50 + 30; turn 2's the rest
    assert list(m["input_tokens"]) == [300, 600] and list(m["cache_read_tokens"]) == [1800, 300]
    assert list(m["output_tokens"]) == [80, 100]
    g, o = table_prices("gpt-5-codex", ROLLOUT_DAY), table_prices("o3", ROLLOUT_DAY)
    hand = [
        usd(300, g.input_mtok) + usd(1800, g.cache_read_mtok) + usd(80, g.output_mtok),
        usd(600, o.input_mtok) + usd(300, o.cache_read_mtok) + usd(100, o.output_mtok),
    ]
    assert list(m["priced_cost_usd"]) == pytest.approx(hand)
    assert one(sessions_df(path))["priced_cost_usd"] == pytest.approx(sum(hand))
