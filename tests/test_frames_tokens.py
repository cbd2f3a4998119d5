"""Token, cost and retrieval columns of sessions_df, and the models frame (agent-formats §5.3)."""

from __future__ import annotations

import pandas as pd

from evalkit.corpus.frames import models_df, sessions_df
from tests.arm_helpers import run_events, write_run
from tests.builders import TEXT, lines, write_jsonl
from tests.test_tokens import msg, mu, result


def _session(tmp_path, **result_fields):
    return write_run(tmp_path, "run-a-1.jsonl", run_events(explores=1, **result_fields))


def test_sessions_df_has_the_ledger_and_cost_columns(tmp_path):
    path = _session(
        tmp_path,
        total_cost_usd=0.25,
        num_turns=3,
        duration_api_ms=900,
        modelUsage={
            "m-big": mu(10, 80, 500, 20, 0.2, window=1_000_000),
            "m-small": mu(5, 4, 0, 0, 0.05),
        },
    )
    row = sessions_df([path]).iloc[0]
    # ASST(ctx, …) puts the whole prompt in input_tokens: requests at 1100 and 1200 tokens
    assert row["prompt_tokens"] == 2300 and row["cache_read_tokens"] == 0
    assert row["uncached_prompt_tokens"] == 2300
    assert row["output_tokens"] == 84  # Σ modelUsage outputTokens, not the per-message snapshots
    assert pd.isna(row["reasoning_tokens"])
    assert row["requests_main"] == 2 and row["requests_subagent"] == 0
    assert row["num_turns"] == 3 and row["duration_api_ms"] == 900
    assert row["cost_usd"] == 0.25 and row["session_cost_usd"] == 0.25
    assert not row["totals_carried_over"]
    assert row["model_usage"] == "last" and row["models"] == 2
    # the share of window uses the log's contextWindow, not the nominal 200k
    assert row["context_window"] == 1_000_000
    assert row["final_context_window_share"] == row["final_context"] / 1_000_000
    assert row["retrieval_residual"] == row["residual_codegraph"] + row["residual_file_access"]
    assert row["retrieval_residual_share"] == row["retrieval_residual"] / row["final_context"]


def test_without_model_usage_the_window_is_the_nominal_one(tmp_path):
    row = sessions_df([_session(tmp_path)]).iloc[0]
    assert pd.isna(row["context_window"]) and row["model_usage"] == "none"
    assert row["final_context_window_share"] == row["final_context"] / 200_000


def test_models_df_one_row_per_session_and_model(tmp_path):
    path = _session(
        tmp_path,
        modelUsage={"m-big": mu(10, 80, 500, 20, 0.2), "m-small": mu(5, 4, 0, 0, 0.05)},
    )
    df = models_df([path, _session(tmp_path / "other")])
    first, other = df[df["log"] == df["log"].iloc[0]], df[df["log"] != df["log"].iloc[0]]
    # the builders' messages name no model: the modelUsage models are the session's rows
    assert list(first["model"]) == ["m-big", "m-small"]
    assert list(first["output_tokens"]) == [80, 4]
    assert list(first["cost_usd"]) == [0.2, 0.05]
    assert list(first["source"]) == ["last", "last"]
    # no modelUsage and no model named: one row of unknown model with the requests counted
    assert len(other) == 1 and pd.isna(other["model"].iloc[0])
    assert other["requests"].iloc[0] == 2 and other["prompt_tokens"].iloc[0] == 2300
    # its ledger is summed over the messages (issue 27), priced only once a model is named
    assert other["output_tokens"].iloc[0] == 4 and other["source"].iloc[0] == "messages"
    assert pd.isna(other["priced_cost_usd"].iloc[0])
    assert other["price_reason"].iloc[0] == "the log does not name the model"
    assert list(df.columns[:3]) == ["log", "pass", "repo"]


def test_models_df_from_message_models(tmp_path):
    events = run_events(explores=1)
    for e in events:
        if e["type"] == "assistant":
            e["message"]["model"] = "m-one"
    df = models_df([write_run(tmp_path, "run-a-1.jsonl", events)])
    assert list(df["model"]) == ["m-one"] and list(df["requests"]) == [2]


def test_a_resumed_session_keeps_the_reference_sum_beside_its_recorded_cost(tmp_path):
    # segment 2's totals hold both segments (--resume carried them over): the session cost is
    # the last one, while the reference's Σ total_cost_usd stays in cost_usd_summed
    first = result(cost=0.1, model_usage={"m": mu(100, 10, 0, 0, 0.1)})
    second = result(cost=0.25, model_usage={"m": mu(250, 30, 0, 0, 0.25)})
    write_jsonl(tmp_path / "run-y.jsonl", lines(msg("a1", [TEXT("a")], inp=100), first))
    write_jsonl(tmp_path / "run-y.t2.jsonl", lines(msg("b1", [TEXT("b")], inp=150), second))
    (row,) = (r for _, r in sessions_df(tmp_path).iterrows())
    assert row["totals_carried_over"]
    assert row["cost_usd_summed"] == 0.35  # 0.1 + 0.25, as compare and campaign sum it
    assert row["recorded_cost_usd"] == row["session_cost_usd"] == 0.25
    assert row["cost_usd"] == 0.25 and row["cost_source"] == "recorded"
