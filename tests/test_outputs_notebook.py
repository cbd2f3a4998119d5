"""What a template notebook picks out of its corpus (evalkit/outputs/notebook.py): the lowest
sessions, the session to open, the arm cells to count, the published example block.

Checked against the sweep and against small corpora laid out here, so a notebook's choices are
the package's, tested once, and never typed into a notebook.
"""

from __future__ import annotations

import shutil

import pytest

import evalkit
import evalkit.notebook as nb
from evalkit.errors import UsageError
from evalkit.paths import bundled_corpus, bundled_evidence
from evalkit.sweep import run_sweep
from tests.sweep_helpers import cited, put


@pytest.fixture(scope="module")
def bundled():
    return evalkit.load_corpus(bundled_corpus(), cache=False, jobs=1)


def test_bundled_data_is_recognised(tmp_path):
    assert nb.is_bundled_corpus(bundled_corpus())
    assert not nb.is_bundled_corpus(tmp_path)
    assert nb.is_bundled_evidence(bundled_evidence())
    assert not nb.is_bundled_evidence(tmp_path / "evidence.json")


def test_lowest_sessions_are_the_sweeps_tail_in_order(bundled):
    sweep = bundled.sweep()
    want = [r.log for r in sweep.tail(5)]
    from_corpus = nb.lowest_sessions(bundled, 5)
    from_sweep = nb.lowest_sessions(sweep, 5)
    assert from_corpus["log"].tolist() == want == from_sweep["log"].tolist()
    assert from_corpus["efficiency"].is_monotonic_increasing
    assert from_corpus["group"].notna().all()
    calls = nb.lowest_session_calls(sweep)
    assert set(calls["log"]) == {want[0]} and len(calls) == len(sweep.tail(1)[0].calls)
    assert nb.lowest_session_line(sweep).startswith(f"{want[0]}: 20.1%; the answer cites ")


def test_pick_session(tmp_path):
    cited(tmp_path, "p/ab-r/run-baseline-1.jsonl", 90, 10)
    cited(tmp_path, "p/ab-r/run-new-1.jsonl", 40, 60)
    corpus = evalkit.load_corpus(tmp_path, cache=False, jobs=1)
    assert nb.pick_session(corpus) == "p/ab-r/run-new-1.jsonl"  # the lowest, computed
    assert nb.pick_session(corpus, "p/ab-r/run-baseline-1.jsonl") == "p/ab-r/run-baseline-1.jsonl"
    with pytest.raises(UsageError, match="no session 'nope.jsonl'"):
        nb.pick_session(corpus, "nope.jsonl")


def test_pick_session_without_a_swept_or_readable_session(tmp_path):
    put(tmp_path, "a/plain.jsonl")  # a transcript with no explore call
    corpus = evalkit.load_corpus(tmp_path, cache=False, jobs=1)
    assert nb.pick_session(corpus) == "a/plain.jsonl"
    empty = tmp_path / "empty"
    put(empty, "app.jsonl", text='{"level": "info"}\n')  # not a transcript
    with pytest.raises(UsageError, match="no readable session"):
        nb.pick_session(evalkit.load_corpus(empty, cache=False, jobs=1))


def test_session_line_and_report_for_both_kinds(bundled):
    headless = bundled.session("cg8-val/run-headless-with.jsonl")
    assert nb.session_line(headless) == (
        "session: cg8-val/run-headless-with.jsonl (1 segment); headless; answer from: result"
    )
    assert "Residual context occupancy" in nb.session_report(headless)
    log = next(r.log for r in bundled.records if r.layout == "interactive")
    interactive = bundled.session(log)
    assert nb.session_line(interactive).startswith(f"session: {log} (1 segment); interactive;")
    assert "MAIN thread tools:" in nb.session_report(interactive)


def test_arm_cells_count_the_cells_with_both_arms(tmp_path):
    cited(tmp_path, "p/ab-r/run-baseline-1.jsonl", 50, 50)
    cited(tmp_path, "p/ab-r/run-new-1.jsonl", 80, 20)
    cited(tmp_path, "p/ab-s/run-baseline-1.jsonl", 90, 10)
    cited(tmp_path, "p/ab-s/run-new-1.jsonl", 70, 30)
    cited(tmp_path, "p/ab-t/run-new-1.jsonl", 70, 30)  # no baseline: not a cell
    result = run_sweep(tmp_path, cache=False)
    changes, summary = nb.arm_cells(result)
    assert changes["repo"].tolist() == ["s", "r"]  # smallest change first

    def eff(repo, arm):
        return result.cell("p", repo, arm).median

    want = [eff("s", "new") - eff("s", "baseline"), eff("r", "new") - eff("r", "baseline")]
    assert want[0] < 0 < want[1]
    assert changes["change"].tolist() == pytest.approx(want)
    assert (summary.n, summary.improved, summary.regressed) == (2, 1, 1)
    assert nb.arm_cells_line(result, summary) == (
        "new vs baseline: 1 of 2 pass/repo cells improved, 1 went the other way"
    )


def test_arm_cells_with_one_arm_say_why_there_is_nothing(tmp_path):
    cited(tmp_path, "p/ab-r/run-new-1.jsonl", 50, 50)
    result = run_sweep(tmp_path, cache=False)
    changes, summary = nb.arm_cells(result)
    assert changes.empty and summary is None
    assert nb.arm_cells_line(result, summary) == (
        "no arm comparison: no pass/repo cell has runs in both baseline and new"
    )
    (tmp_path / "none").mkdir()
    nothing = run_sweep(tmp_path / "none", cache=False)
    assert nb.arm_cells(nothing)[1] is None
    assert nb.arm_cells_line(nothing, None) == (
        "no arm comparison: this corpus has fewer than two arms (arms found: none)"
    )


def test_example_block_matches_the_published_one():
    ours, published, matches = nb.example_block_comparison(bundled_corpus())
    assert matches and ours == published
    assert ours.startswith("Explore allocation")


def test_example_block_of_a_changed_copy_does_not_match(tmp_path):
    corpus = tmp_path / "c"
    shutil.copytree(bundled_corpus() / "cg22", corpus / "cg22")
    run = corpus / "cg22" / "ab-express" / "run-baseline-1.jsonl"
    run.write_text(run.read_text(encoding="utf-8").replace("lib/utils.js", "lib/other.js"))
    assert not nb.example_block_comparison(corpus)[2]
