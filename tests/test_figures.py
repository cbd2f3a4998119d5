"""The data behind each report figure, and figure files that are the same bytes on every run."""

from __future__ import annotations

import pytest

import evalkit.outputs.notebook as nb
from evalkit.ecma import pct1
from evalkit.outputs.figures import (
    arm_runs_data,
    ecdf_data,
    file_bytes_data,
    file_bytes_figure,
    pair_deltas_data,
    pair_deltas_figure,
)
from evalkit.paired import build_report, load_published_baseline
from evalkit.session import parse_session
from tests.test_cli_run import seed_example


@pytest.fixture(scope="module")
def report():
    return build_report(load_published_baseline())


def test_pair_deltas_data_is_candidate_minus_baseline(report):
    data = pair_deltas_data(report)
    assert len(data) == 18  # 9 pairs × 2 metrics
    calls = data[data.metric == "outer_calls"]
    assert calls["delta"].tolist() == [0, -3, 0, 0, 0, 0, -2, -1, 0]
    row = data[
        (data.metric == "serialized_tool_result_bytes")
        & (data.case_id == "readonly_review")
        & (data.pair == 1)
    ].iloc[0]
    assert (row.baseline, row.candidate, row.delta) == (163826, 208012, 44186)


def test_file_bytes_data_matches_the_allocation(tmp_path):
    data = file_bytes_data(parse_session(seed_example(tmp_path)))
    assert data["path"].tolist() == [
        "lib/response.js",
        "lib/utils.js",
        "lib/express.js",
        "lib/application.js",
    ]
    assert data["chars"].tolist() == [7447, 6396, 3854, 3622]
    assert data["channel"].tolist() == ["path", "path", "uncited", "symbol"]
    assert data["sections"].tolist() == [2, 1, 2, 1]
    assert data["share"].sum() == pytest.approx(1.0)


def test_saved_figures_are_byte_identical(tmp_path, report):
    nb.setup()
    fig = pair_deltas_figure(pair_deltas_data(report), "t")
    a = nb.save_figure(fig, "x", tmp_path / "a")
    b = nb.save_figure(pair_deltas_figure(pair_deltas_data(report), "t"), "x", tmp_path / "b")
    assert a.read_bytes() == b.read_bytes()
    assert (tmp_path / "a" / "x.svg").read_bytes() == (tmp_path / "b" / "x.svg").read_bytes()
    fig2 = file_bytes_figure(file_bytes_data(parse_session(seed_example(tmp_path))), "t")
    assert len(fig2.axes[0].patches) == 4


@pytest.fixture(scope="module")
def sweep():
    from evalkit.tables.sweep import run_sweep

    return run_sweep(cache=False)


def test_ecdf_data_per_slice(sweep):
    data = ecdf_data(sweep)
    sizes = data.groupby("slice", sort=False).size().to_dict()
    assert sizes == {"all": 103, "single-question": 74, "multi-turn": 29}
    for _, part in data.groupby("slice"):
        assert part["efficiency"].is_monotonic_increasing
        assert part["ecdf"].iloc[-1] == 1.0
        assert part["p25"].nunique() == 1
    lowest = data[data.slice == "all"].iloc[0]
    assert lowest.log == "cg8-val/run-headless-with.jsonl" and f"{lowest.efficiency:.3f}" == "0.201"
    assert pct1(data[data.slice == "all"].p25.iloc[0]) == "82.0%"


def test_arm_runs_data_every_run_with_its_median(sweep):
    data = arm_runs_data(sweep)
    assert len(data) == 72  # 18 + 30 + 24 single-question A/B sessions (§7.6)
    express = data[(data["pass"] == "cg22") & (data["repo"] == "express")]
    assert [pct1(x) for x in express["efficiency"]] == [
        "81.9%",
        "82.0%",
        "81.9%",
        "100.0%",
        "92.5%",
        "100.0%",
    ]
    assert set(express.groupby("arm")["median"].first().map(pct1)) == {"81.9%", "100.0%"}


def test_titles_say_synthetic_corpus_for_the_bundled_one(tmp_path):
    from evalkit.outputs.figures import corpus_title
    from evalkit.paths import bundled_corpus

    assert corpus_title("Chars per file", bundled_corpus()) == "Chars per file (synthetic corpus)"
    assert corpus_title("Chars per file", True) == "Chars per file (synthetic corpus)"
    assert corpus_title("Chars per file", tmp_path) == "Chars per file"
    assert corpus_title("x (synthetic corpus)", True) == "x (synthetic corpus)"
