"""How a corpus's costs were found, and every table that shows cost (evalkit.tables.costs, issue 27).

The trial sweep, the per-agent table and `evalkit stats` read the sessions frame's cost
(recorded, else priced) and print the account: recorded, priced, unknown, and how many runs'
two costs differ by more than 5%.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.corpus.frames import sessions_df, tool_calls_df
from evalkit.metrics.prices import table_version
from evalkit.outputs.cost_text import cost_lines
from evalkit.tables.ab_stats import _cost_per_pass, compare_arms
from evalkit.tables.costs import cost_account, frame_cost_account
from evalkit.tables.generic import generic_comparison
from evalkit.tables.trials import run_trial_sweep
from tests.agent_trees import ATIF_AGENT, build_harbor_agents
from tests.test_pricing import rollout

NA = pd.NA


def test_the_account_counts_recorded_priced_unknown_and_differences():
    a = cost_account(
        ["recorded", "recorded", "priced", None, NA],
        [0.04, -0.2, None, None, NA],
        ["genai-prices 0.2.3", "genai-prices 0.2.3", "user prices (p.toml)", None, None],
        [None, None, None, "the log does not name the model", "the log does not name the model"],
    )
    assert (a.sessions, a.recorded, a.priced, a.unknown) == (5, 2, 1, 2)
    assert (a.compared, a.differ) == (2, 1)  # 4% is within 5%, −20% is not
    assert a.price_tables == ("genai-prices 0.2.3", "user prices (p.toml)")
    assert a.reasons == (("the log does not name the model", 2),)
    assert cost_lines(a, noun="run") == [
        "  cost: 2 of 5 runs recorded by the log, 1 priced from their tokens, 2 unknown",
        "    prices: genai-prices 0.2.3, user prices (p.toml); recorded and priced differ by "
        "more than 5% in 1 of 2",
        "    no cost for 2: the log does not name the model",
    ]
    assert cost_lines(cost_account([], [])) == []


def test_cost_per_solved_task_is_the_tasks_cost_over_its_passes():
    frame = pd.DataFrame(
        {
            "task": ["a", "a", "a", "a", "b", "b", "b", "b"],
            "arm": ["x", "x", "y", "y", "x", "x", "y", "y"],
            "passed": [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, None],
            "cost_usd": [0.2, 0.4, 0.1, 0.3, 0.5, 0.5, 0.6, 0.9],
        }
    )
    frame["cost_per_pass_usd"] = _cost_per_pass(frame)
    frame["reward"] = frame["passed"]
    means = frame.groupby(["task", "arm"])["cost_per_pass_usd"].mean()
    assert means[("a", "x")] == pytest.approx((0.2 + 0.4) / 1)
    assert means[("a", "y")] == pytest.approx((0.1 + 0.3) / 2)
    assert pd.isna(means[("b", "x")])  # no pass: no cost per solved task
    assert means[("b", "y")] == pytest.approx(0.6 / 1)  # the trial without an outcome left out
    stats = compare_arms(frame, "x", "y", n_resamples=200)
    table = stats.figure("cost_per_pass_usd").table
    (a,) = table.complete
    assert (a.task, a.delta) == ("a", pytest.approx(0.2 - 0.6))


@pytest.fixture(scope="module")
def harbor(tmp_path_factory):
    root = tmp_path_factory.mktemp("harbor-cost") / "runs"
    root.mkdir()
    build_harbor_agents(root)
    return root


def test_the_trial_sweep_reads_the_frames_cost_and_accounts_for_it(harbor, tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."example-model"]\ninput = 2.0\noutput = 8.0\n', "utf-8")
    t = run_trial_sweep(harbor, layout="harbor", cache=False, jobs=1, prices=prices)
    rows = {r.log: r for r in t.parsed}
    atif = rows[f"suite/{ATIF_AGENT}/t1/t1_1/agent/trajectory.json"]
    # recorded 0.12, priced by the user's prices: 2300 uncached + 2000 cached at 2.0, 150 at 8.0
    assert (atif.cost_usd, atif.cost_source) == (pytest.approx(0.12), "recorded")
    assert atif.priced_cost_usd == pytest.approx((4300 * 2.0 + 150 * 8.0) / 1e6)
    codex = rows["suite/codex/t1/t1_1/agent/codex.txt"]
    assert codex.cost_usd is None and codex.cost_source is None
    assert codex.price_reason == "the log does not name the model"
    a = t.cost_account
    compared = t.compared
    assert a.sessions == len(compared)
    assert a.recorded == sum(1 for r in compared if r.cost_source == "recorded")
    assert a.unknown == sum(1 for r in compared if r.cost_source is None) >= 2
    assert "user prices (prices.toml)" in a.price_tables
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(
            ["sweep", str(harbor), "--layout", "harbor", "--prices", str(prices), "--no-cache"]
        )
    assert code == 0
    text = out.getvalue()
    assert cost_lines(a, noun="compared run")[0] in text
    assert "user prices (prices.toml)" in text
    assert "no cost for 2: the log does not name the model" in text
    out = io.StringIO()
    with redirect_stdout(out):
        main(["sweep", str(harbor), "--layout", "harbor", "--no-cache", "--json"])
    doc = json.loads(out.getvalue())
    # the fixture's models are unknown to the table (or unnamed): nothing priced, no table named
    assert doc["cost"]["price_tables"] == [] and doc["cost"]["unknown"] >= 2
    assert {r["cost_source"] for r in doc["session_rows"]} >= {"recorded", None}


def test_stats_prints_the_cost_account_and_cost_per_solved_task(harbor):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(
            ["stats", str(harbor), "--layout", "harbor", "--resamples", "100", "--no-cache"]
        )
    assert code == 0
    text = out.getvalue()
    assert "cost per solved task (USD)" in text
    assert text.splitlines()[2].startswith("cost: ")
    assert "no cost for 2: the log does not name the model" in text


def test_the_per_agent_table_counts_priced_sessions(tmp_path):
    from evalkit.outputs.generic_text import generic_lines

    rollout(tmp_path / "rollout-a.jsonl", "gpt-5-codex")
    rollout(tmp_path / "rollout-b.jsonl", "example-model")
    paths = [tmp_path / "rollout-a.jsonl", tmp_path / "rollout-b.jsonl"]
    s, calls = sessions_df(paths), tool_calls_df(paths)
    cmp = generic_comparison(s, calls)
    (g,) = cmp.groups
    assert (g.sessions, g.priced) == (2, 1)
    assert g.cost_usd == pytest.approx(s["priced_cost_usd"].iloc[0])
    assert cmp.cost == frame_cost_account(s)
    assert (cmp.cost.priced, cmp.cost.unknown) == (1, 1)
    text = "\n".join(generic_lines(cmp))
    assert "1 of 2" in text and f"prices: {table_version()}" in text


def test_a_session_with_no_tokens_has_no_price_table_claim(tmp_path: Path):
    a = frame_cost_account(
        pd.DataFrame(
            {
                "cost_source": ["recorded"],
                "cost_difference_share": [NA],
                "price_table": ["genai-prices 0.2.3"],
                "price_reason": ["the log records no tokens"],
                "priced_cost_usd": [NA],
            }
        )
    )
    assert a.price_tables == () and a.reasons == ()
