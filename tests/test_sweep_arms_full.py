"""The sweep's arm table as the full comparison (arm_frame(full=True), Corpus.arms_df(),
`evalkit sweep --full`, `--exclude`), spec §8.4."""

from __future__ import annotations

import pytest

import evalkit
from evalkit.cli import main
from evalkit.tables.sweep import run_sweep
from tests.arm_helpers import write_run


@pytest.fixture
def tree(tmp_path):
    d = tmp_path / "cg9" / "ab-gin"
    write_run(d, "run-baseline-1.jsonl", dur_ms=10_000, explores=2)
    write_run(d, "run-baseline-2.jsonl", dur_ms=30_000, explores=1, raced=True)
    write_run(d, "run-new-1.jsonl", dur_ms=20_000, explores=1, reads=2)
    write_run(d, "run-new-2.jsonl", dur_ms=40_000, explores=1, subtype="error_max_turns")
    return tmp_path


def test_arm_frame_full_has_every_compare_arms_figure(tree):
    df = run_sweep(tree, cache=False, jobs=1).arm_frame(full=True)
    assert list(df.columns[:9]) == [
        "pass",
        "repo",
        "arm",
        "n",
        "runs",
        "median",
        "min",
        "max",
        "pooled",
    ]
    base = df[df["arm"] == "baseline"].iloc[0]
    assert (base["dur_median"], base["dur_min"], base["dur_max"], base["dur_n"]) == (20, 10, 30, 2)
    assert base["raced"] == 1 and base["non_success"] == 0
    # run 1: explore → explore; run 2: explore → the raced explore call
    assert base["answered"] == 3 and base["next_explore_again"] == 2
    new = df[df["arm"] == "new"].iloc[0]
    assert new["reads_max"] == 2 and new["non_success"] == 1
    assert 0 < new["occ_share_median"] < 1  # a fraction, as every frame's shares
    assert new["pooled_efficiency"] == new["pooled"]  # one pooling rule
    for name in (
        "ctx",
        "occ_cg",
        "occ_file",
        "occ_self",
        "efficiency",
        "tools",
        "grep",
        "bash",
        "cg",
    ):
        assert {f"{name}_median", f"{name}_min", f"{name}_max", f"{name}_n"} <= set(df.columns)


def test_the_default_arm_frame_is_unchanged(tree):
    df = run_sweep(tree, cache=False, jobs=1).arm_frame()
    assert list(df.columns) == [
        "pass",
        "repo",
        "arm",
        "n",
        "runs",
        "median",
        "min",
        "max",
        "pooled",
    ]


def test_exclude_drops_runs_from_the_arm_table_only(tree):
    result = run_sweep(tree, cache=False, jobs=1, exclude=("failed", "raced"))
    base = result.cell("cg9", "gin", "baseline")
    new = result.cell("cg9", "gin", "new")
    assert base.runs == 1 and base.dropped == {"failed": 0, "raced": 1}
    assert new.runs == 1 and new.dropped == {"failed": 1, "raced": 0}
    assert result.counts.sessions == 4  # the baseline sweep still covers every session


def test_corpus_arms_df(tree):
    corpus = evalkit.load_corpus(tree, cache=False, jobs=1)
    df = corpus.arms_df(exclude=("raced",))
    assert list(df["arm"]) == ["baseline", "new"]
    assert list(df["dropped_raced"]) == [1, 0]
    assert list(df["runs"]) == [1, 2]


def test_sweep_full_prints_the_comparison_and_exclude_counts(tree, capsys):
    code = main(["sweep", str(tree), "--no-cache", "-j", "1", "--full", "--exclude", "raced"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Run hygiene — runs dropped from the arm table by --exclude raced:" in out
    assert "  cg9 / gin baseline: raced 1" in out and "  cg9 / gin new: raced 0" in out
    assert "\n====== ARM COMPARISON — cg9/ab-gin ======\n" in out
    assert "  " + "runs".ljust(36) + " " + "1".rjust(23) + " " + "2".rjust(23) in out


def test_sweep_without_full_or_exclude_prints_neither(tree, capsys):
    main(["sweep", str(tree), "--no-cache", "-j", "1"])
    out = capsys.readouterr().out
    assert "ARM COMPARISON" not in out and "Run hygiene" not in out


def test_sweep_markdown_lists_the_hygiene_counts(tree, tmp_path, capsys):
    md = tmp_path / "sweep.md"
    main(
        ["sweep", str(tree), "--no-cache", "-j", "1", "--exclude", "failed", "--markdown", str(md)]
    )
    text = md.read_text(encoding="utf-8")
    assert "- cg9 / gin baseline: failed 0" in text and "- cg9 / gin new: failed 1" in text


def test_the_sweep_and_compare_agree_on_every_bundled_arm():
    # one computation: the sweep's per-arm figures are compare-arms's for the same directory
    from evalkit.paths import bundled_corpus
    from evalkit.tables.compare import compare_arms

    result = run_sweep(bundled_corpus(), cache=False, jobs=1)
    checked = 0
    for row in result.arm_rows:
        d = bundled_corpus() / row.pass_ / f"ab-{row.repo}"
        for cell in row.cells:
            ours = compare_arms(d, [cell.arm]).arm(cell.arm).to_dict()
            theirs = cell.figures.to_dict()
            ours.pop("run_names"), theirs.pop("run_names")
            assert ours == theirs, (row.pass_, row.repo, cell.arm)
            checked += 1
    assert checked == 18
