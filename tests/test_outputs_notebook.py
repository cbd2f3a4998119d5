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


# --- notebook 07: the arm directory, its labels, the directories beside it, the campaign root


def test_arm_labels_put_baseline_last():
    assert nb.arm_labels(["baseline", "new", "baseline", "alt"]) == ("alt", "new", "baseline")
    assert nb.arm_labels(a for a in ["baseline", "new"]) == ("new", "baseline")  # any iterable
    assert nb.arm_labels(["with"]) == ("with",)


def test_pick_arm_dir_prefers_a_directory_with_two_arms(tmp_path):
    cited(tmp_path, "p/ab-a/run-new-1.jsonl", 50, 50)  # one arm only
    cited(tmp_path, "p/ab-b/run-baseline-1.jsonl", 50, 50)
    cited(tmp_path, "p/ab-b/run-new-1.jsonl", 80, 20)
    cited(tmp_path, "p/ab-b/run-new-2.jsonl", 80, 20)
    cited(tmp_path, "p/ab-c/run-baseline-1.jsonl", 50, 50)
    dirs = nb.arm_directories(tmp_path)
    assert [(d.path, d.labels, d.runs) for d in dirs] == [
        ("p/ab-a", ("new",), 1),
        ("p/ab-b", ("new", "baseline"), 3),
        ("p/ab-c", ("baseline",), 1),
    ]
    directory, labels = nb.pick_arm_dir(tmp_path)
    assert (directory, labels) == (tmp_path / "p" / "ab-b", ("new", "baseline"))
    assert nb.arm_dir_line(tmp_path, directory, labels) == (
        "arm directory: p/ab-b; labels compared: new baseline"
    )
    # Given: any directory and labels, as "a,b" or a list.
    assert nb.pick_arm_dir(tmp_path, tmp_path / "p" / "ab-a", "new,x")[1] == ("new", "x")
    assert nb.pick_arm_dir(tmp_path, tmp_path / "p" / "ab-c") == (
        tmp_path / "p" / "ab-c",
        ("baseline",),
    )
    # Beside p/ab-b: the directories of the same pass with one of its labels, it first.
    beside = nb.sibling_comparisons(tmp_path, directory, labels)
    assert [c.directory for c in beside] == ["p/ab-b", "p/ab-a", "p/ab-c"]
    assert [a.label for a in beside[1].arms] == ["new"] and beside[1].missing == ("baseline",)


def test_no_arm_directory_says_so(tmp_path):
    put(tmp_path, "logs/session.jsonl")
    assert nb.pick_arm_dir(tmp_path) == (None, ())
    assert nb.compare_dir(tmp_path, None, ()) is None
    assert nb.sibling_comparisons(tmp_path, None, ()) == []
    assert nb.arm_dir_line(tmp_path, None, ()).startswith("no arm comparison: this corpus has no")
    assert nb.pick_campaign(tmp_path) is None
    assert nb.campaign_line(tmp_path, None, None).startswith("no campaign: this corpus has no")


def test_pick_campaign_finds_the_campaign_root_and_its_repos(tmp_path):
    for repo in ("zlib", "gin", "django"):
        put(tmp_path, f"bench/{repo}/run1/run-headless-with.jsonl")
        put(tmp_path, f"bench/{repo}/run1/run-headless-without.jsonl")
    (tmp_path / "bench" / "notes").mkdir()  # no run folder: not a repo
    where = nb.pick_campaign(tmp_path)
    assert where == tmp_path / "bench"
    assert nb.campaign_repos(where) == ("django", "gin", "zlib")  # the harness's order, then names
    assert nb.pick_campaign(tmp_path, tmp_path / "elsewhere") == tmp_path / "elsewhere"


def test_the_bundled_defaults_are_the_published_ones():
    root = bundled_corpus()
    directory, labels = nb.pick_arm_dir(root)
    assert directory == root / nb.PUBLISHED_ARM_DIR and labels == nb.PUBLISHED_ARM_LABELS
    assert nb.pick_campaign(root) == root / nb.BUNDLED_CAMPAIGN
    from evalkit.tables.campaign import CAMPAIGN_REPOS

    assert nb.campaign_repos(root / nb.BUNDLED_CAMPAIGN) == CAMPAIGN_REPOS
    cmp = nb.compare_dir(root, directory, labels)
    published = nb.published_arm_comparison(root, cmp)
    assert published is not None and bool(published["matches"].all())
    # Other labels or another directory: nothing published to compare with.
    assert nb.published_arm_comparison(root, nb.compare_dir(root, directory, labels[::-1])) is None
    other = nb.compare_dir(root, root / "cg21" / "ab-express", labels)
    assert nb.published_arm_comparison(root, other) is None


# --- notebook 06: how a trial tree is read


def test_trial_layout_and_profile_defaults(tmp_path):
    from tests.harbor_helpers import build_harbor_corpus

    build_harbor_corpus(tmp_path / "tree", with_csv=False)
    cited(tmp_path / "ab", "p/ab-r/run-new-1.jsonl", 50, 50)
    assert nb.trial_layout(tmp_path / "tree") == "harbor"
    assert nb.trial_layout(tmp_path / "ab") is None
    assert nb.trial_layout(tmp_path / "ab", "{arm}/x.jsonl") == "{arm}/x.jsonl"
    assert nb.trial_profile(tmp_path / "tree") is None  # the default profile
    assert nb.trial_profile(tmp_path / "tree", "sourcegraph") == "sourcegraph"
    assert nb.trial_profile(nb.harbor_corpus_dir()) == "sourcegraph"  # the synthetic tree's tools


def test_trial_corpus_dir_order(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALKIT_HARBOR_CORPUS", raising=False)
    monkeypatch.setenv("EVALKIT_CORPUS", str(tmp_path / "a"))
    assert nb.trial_corpus_dir() == tmp_path / "a"
    monkeypatch.setenv("EVALKIT_HARBOR_CORPUS", str(tmp_path / "b"))
    assert nb.trial_corpus_dir() == tmp_path / "b"
    assert nb.trial_corpus_dir(tmp_path / "c") == tmp_path / "c"
    monkeypatch.delenv("EVALKIT_HARBOR_CORPUS")
    monkeypatch.delenv("EVALKIT_CORPUS")
    assert nb.trial_corpus_dir() == nb.harbor_corpus_dir()


def test_trial_sweep_outcomes_and_why_there_are_none(tmp_path):
    from tests.harbor_helpers import build_harbor_corpus

    csv = build_harbor_corpus(tmp_path / "tree")
    trials = nb.trial_sweep(tmp_path / "tree", profile="sourcegraph", outcomes=csv)
    assert trials.arms == ("baseline", "mcp")
    assert nb.outcome_lines(trials)[0] == "mcp against baseline:"
    assert nb.outcome_frame(trials)["task"].tolist() == ["t1", "t2", "t3", "t4"]
    assert nb.outcome_metrics_frame(trials)["figure"].iloc[0] == "reward"
    swapped = nb.trial_sweep(tmp_path / "tree", arms=["mcp", "baseline"])
    assert (swapped.baseline, swapped.candidate) == ("mcp", "baseline")
    with pytest.raises(UsageError):
        nb.trial_sweep(tmp_path / "tree", arms="mcp")
    cited(tmp_path / "ab", "p/ab-r/run-new-1.jsonl", 50, 50)
    alone = nb.trial_sweep(tmp_path / "ab")
    assert nb.outcome_lines(alone) == ["no outcome table: it needs two arms (arms found: new)"]
    assert nb.outcome_frame(alone).empty and nb.outcome_metrics_frame(alone).empty
