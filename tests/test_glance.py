"""The corpus at a glance (evalkit/outputs/glance.py): the data behind notebook 05's figures.

Each data function is checked against numbers computed another way — the sweep's records, the
raw frames, `statistics.median` — on the bundled corpus, and every figure is drawn with labelled
axes, or says there is nothing to draw.
"""

from __future__ import annotations

import statistics

import pytest

import evalkit
from evalkit.outputs import glance
from evalkit.paths import bundled_corpus
from evalkit.tables.quantile import quantile


@pytest.fixture(scope="module")
def corpus():
    return evalkit.load_corpus(bundled_corpus(), cache=False, jobs=1)


@pytest.fixture(scope="module")
def sweep(corpus):
    return corpus.sweep()


def test_arm_order_puts_baseline_and_new_first_and_no_arm_last():
    assert glance.arm_order(["z", glance.NO_ARM, "new", "a", "baseline"]) == [
        "baseline",
        "new",
        "a",
        "z",
        glance.NO_ARM,
    ]
    colours = glance.arm_colours(["a", "b", "baseline", glance.NO_ARM])
    assert len(set(colours.values())) == 4


def test_sessions_by_group_counts_every_session_once(corpus, sweep):
    table = glance.sessions_by_group(corpus)
    sessions = corpus.sessions_df()
    assert int(table["all"].sum()) == len(sessions) == len(sweep.records)
    assert int(table["in_sweep"].sum()) == sweep.counts.sessions
    arms = [c for c in table.columns if c not in ("all", "in_sweep")]
    assert (table[arms].sum(axis=1) == table["all"]).all()
    # The interactive logs have no arm: they are counted, not dropped.
    interactive = sessions[sessions["kind"] == "interactive"]
    assert len(interactive) > 0
    group = interactive["group"].iloc[0]
    assert table.loc[group, glance.NO_ARM] == len(interactive)


def test_efficiency_ecdf_by_arm_is_the_sweeps_efficiencies(sweep, corpus):
    data = glance.efficiency_ecdf_data(corpus)
    sessions = data[data["level"] == "session"]
    for arm in ("baseline", "new", "headless-with"):
        want = sorted(r.efficiency for r in sweep.sessions if r.arm == arm)
        part = sessions[sessions["arm"] == arm]
        assert part["efficiency"].tolist() == pytest.approx(want)
        assert part["ecdf"].iloc[-1] == 1.0 and part["ecdf"].is_monotonic_increasing
        assert part["p25"].iloc[0] == pytest.approx(quantile(want, 0.25))
    calls = data[data["level"] == "call"]
    assert len(calls) == sweep.counts.calls
    assert len(sessions) == sweep.counts.sessions


def test_efficiency_vs_sections_has_every_swept_session(sweep, corpus):
    data = glance.efficiency_vs_sections_data(corpus)
    assert len(data) == sweep.counts.sessions
    assert int(data["sections"].sum()) == sweep.counts.sections
    assert data["efficiency"].between(0, 1).all()


def test_tool_mix_shares_add_up_per_arm(corpus):
    data = glance.tool_mix_data(corpus)
    assert int(data["calls"].sum()) == len(corpus.tool_calls_df())
    shares = data.groupby("arm", observed=True)["share"].sum()
    assert shares.to_numpy() == pytest.approx([1.0] * len(shares))
    without = data[(data["arm"] == "headless-without") & (data["family"] == "codegraph")]
    assert without["calls"].tolist() == [0]  # the without-tool arm never calls the tool


def test_residual_medians_per_family(corpus):
    data = glance.residual_data(corpus)
    s = corpus.sessions_df()
    base = s[(s["arm"] == "baseline") & s["final_context"].notna()]
    row = data[(data["arm"] == "baseline") & (data["family"] == "codegraph")].iloc[0]
    assert row["sessions"] == len(base)
    assert row["median_tokens"] == statistics.median(base["residual_codegraph"].astype(float))
    # Interactive logs carry the occupancy of their main file (issue 23): they have no arm.
    interactive = s[s["kind"] == "interactive"]
    no_arm = data[(data["arm"] == glance.NO_ARM) & (data["family"] == "codegraph")].iloc[0]
    assert no_arm["sessions"] == len(interactive) > 0


def test_buckets_count_every_answered_call(corpus):
    data = glance.buckets_data(corpus)
    s = corpus.sessions_df()
    assert int(data["calls"].sum()) == int(s["answered_calls"].sum())
    new = data[data["arm"] == "new"]
    assert list(new["bucket"]) == list(glance.BUCKETS)
    assert new["share"].sum() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "name", ["efficiency_ecdf", "efficiency_vs_sections", "tool_mix", "residual", "buckets"]
)
def test_figures_have_labelled_axes_and_cope_with_nothing(corpus, name):
    data = getattr(glance, f"{name}_data")(corpus)
    fig = getattr(glance, f"{name}_figure")(data, "title")
    for ax in fig.axes:
        assert ax.get_xlabel()
    assert fig.axes[0].get_ylabel()
    empty = getattr(glance, f"{name}_figure")(data.iloc[:0], "title")
    assert [t.get_text() for t in empty.axes[0].texts][0].startswith("no ")
