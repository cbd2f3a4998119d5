"""`evalkit.tables.ab_stats` (the per-trial rows, `compare_arms`), `evalkit stats DIR` and
`Corpus.compare_arms`: the same numbers from the command, the API and the frames, each checked
against the runs the fixture tree was built with."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats as sps

import evalkit
from evalkit.cli import main
from evalkit.errors import UsageError
from evalkit.outputs.stats_text import render_stats_text, stats_json_dict
from evalkit.paths import bundled_corpus
from evalkit.synthetic.harbor import generate_harbor_corpus
from evalkit.tables.ab_stats import compare_arms, parse_margins, trial_runs
from tests.harbor_helpers import CSV_REWARDS, REWARDS, build_harbor_corpus


@pytest.fixture(scope="module")
def harbor(tmp_path_factory):
    root = tmp_path_factory.mktemp("stats") / "mcp-bench"
    csv = build_harbor_corpus(root)
    return root, csv


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root = tmp_path_factory.mktemp("syn") / "synthetic-harbor"
    generate_harbor_corpus(root)
    return root


def test_trial_runs_are_the_trial_sweeps_runs(harbor):
    root, csv = harbor
    runs = trial_runs(root, layout="harbor", profile="sourcegraph", outcomes=csv, cache=False,
                      jobs=1)  # fmt: skip
    df = runs.frame
    assert (runs.baseline, runs.candidate) == ("baseline", "mcp")
    assert len(df) == 16 and set(df["status"]) == {"parsed"}
    for (arm, task), rewards in REWARDS.items():
        got = df[(df.arm == arm) & (df.task == task)].sort_values("trial")["reward"].tolist()
        want = [CSV_REWARDS.get((task, arm, f"{task}_{i + 1}"), r) for i, r in enumerate(rewards)]
        assert got == want, (arm, task)
    assert df["passed"].tolist() == df["reward"].tolist()  # rewards of 0 and 1


def test_compare_arms_pairs_by_task(harbor):
    root, csv = harbor
    runs = trial_runs(root, layout="harbor", profile="sourcegraph", outcomes=csv, cache=False,
                      jobs=1)  # fmt: skip
    s = compare_arms(runs, "baseline", "mcp", margins={"passed": 0.2}, seed=3)
    keys = [f.figure.key for f in s.figures]
    assert keys[0] == "passed" and "reward" not in keys  # rewards are the passes here
    p = s.figure("passed")
    # t1 0.5 -> 1.0, t2 1.0 -> 0.5, t3 0 -> 0, t4 0.5 -> 1.0 (from the CSV)
    assert [t.delta for t in p.table.tasks] == [0.5, -0.5, 0.0, 0.5]
    assert p.test.p_value is None and p.test.min_attainable_p == 2 / 2**3
    assert p.bootstrap.estimate == pytest.approx(0.125) and p.bootstrap.seed == 3
    assert p.probability.probability == pytest.approx(sps.beta.sf(0.5, 3, 2))
    curves = s.pass_k_frame().set_index(["arm", "k"])
    # baseline: t1 1/2, t2 2/2, t3 0/2, t4 1/2 passed; pass^2 = C(c,2)/C(2,2) per task.
    assert curves.loc[("baseline", 2), "pass_hat_k"] == pytest.approx(0.25)
    assert curves.loc[("baseline", 2), "pass_at_k"] == pytest.approx(0.75)
    assert s.equivalence_frame()["figure"].tolist() == ["passed"]
    tests = s.tests_frame()
    assert tests["group"].unique().tolist() == ["all tasks"]
    assert list(s.intervals_frame().columns[:4]) == ["figure", "estimate", "ci95_lo", "ci95_hi"]


def test_clusters_add_a_cluster_robust_interval_and_tests_per_cluster():
    import pandas as pd

    rows = []
    for i in range(12):
        for arm, v in (("a", 0.0), ("b", 1.0 if i % 3 else 0.0)):
            rows.append({"task": f"t{i:02d}", "arm": arm, "reward": v, "repo": f"r{i % 2}"})
    s = compare_arms(pd.DataFrame(rows), "a", "b", cluster="repo")
    f = s.figure("reward")
    assert f.cluster is not None and f.cluster.clusters == 2 and f.cluster.df == 1
    tests = s.tests_frame()
    assert tests["group"].tolist() == ["all tasks", "repo r0", "repo r1"]
    assert s.adjusted.family == sum(tests["p_value"].notna())
    with pytest.raises(ValueError, match="no column"):
        compare_arms(pd.DataFrame(rows), "a", "b", cluster="suite")


def test_parse_margins():
    assert parse_margins(["0.1", "cost_usd=0.01"]) == {
        "passed": 0.1, "reward": 0.1, "cost_usd": 0.01
    }  # fmt: skip
    for bad in (["x=1"], ["reward=-1"], ["reward=nan"], ["reward=a"]):
        with pytest.raises(UsageError):
            parse_margins(bad)


def run_json(capsys, argv) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _same(a, b):
    """Equal, reading None and NaN as the same unknown."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def test_the_command_gives_the_apis_numbers_on_a_synthetic_tree(synthetic, capsys):
    argv = ["stats", str(synthetic), "--layout", "harbor", "--profile", "sourcegraph",
            "--no-cache", "-j", "1", "--seed", "5", "--margin", "reward=0.1"]  # fmt: skip
    doc = run_json(capsys, [*argv, "--json"])
    runs = trial_runs(synthetic, layout="harbor", profile="sourcegraph", cache=False, jobs=1)
    api = compare_arms(runs, runs.baseline, runs.candidate, seed=5, margins={"reward": 0.1})
    want = json.loads(json.dumps(stats_json_dict(runs, api), default=str))
    assert doc == want
    assert doc["intervals"][0]["seed"] == 5 and doc["figures"][0] == "passed"
    assert main(argv) == 0
    assert capsys.readouterr().out == render_stats_text(runs, api)


def test_the_command_gives_the_apis_numbers_on_the_bundled_corpus(capsys):
    argv = ["stats", str(bundled_corpus()), "--arms", "baseline,new", "-j", "1", "--cluster",
            "repo"]  # fmt: skip
    doc = run_json(capsys, [*argv, "--json"])
    runs = trial_runs(bundled_corpus(), arms=("baseline", "new"), jobs=1)
    api = compare_arms(runs, "baseline", "new", cluster="repo")
    assert doc["tasks"] == json.loads(json.dumps(stats_json_dict(runs, api)["tasks"]))
    cost = api.figure("cost_usd")
    assert [t.task for t in cost.table.complete][:3] == [
        "cg15/client-go", "cg15/excalidraw", "cg15/express"
    ]  # fmt: skip
    assert cost.cluster.clusters == 3 and "only 3 repo clusters" in cost.cluster.note
    # The pass/repo directory is the task and its runs are the trials: the task means are the
    # means of the runs' costs.
    df = runs.frame
    mine = df[(df.task == "cg22/express") & (df.arm == "new")]["cost_usd"]
    row = next(t for t in cost.table.tasks if t.task == "cg22/express")
    assert row.candidate_mean == pytest.approx(mine.mean()) and len(row.candidate) == len(mine)
    text = capsys.readouterr().out
    assert text == ""
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed == render_stats_text(runs, api)
    assert "unpaired" not in printed.lower() and "z-test" not in printed.lower()


def test_corpus_compare_arms_is_the_command(harbor, capsys):
    root, csv = harbor
    corpus = evalkit.load_corpus(root, layout="harbor", profile="sourcegraph", cache=False,
                                 jobs=1)  # fmt: skip
    api = corpus.compare_arms(profile="sourcegraph", outcomes=csv, cache=False)
    doc = run_json(capsys, ["stats", str(root), "--layout", "harbor", "--profile",
                            "sourcegraph", "--outcomes", str(csv), "--no-cache", "--json"])  # fmt: skip
    assert doc["tests"] == json.loads(json.dumps(api.tests_frame().to_dict("records")).replace(
        "NaN", "null"))  # fmt: skip
    assert doc["intervals"][0]["ci95_lo"] == api.intervals_frame()["ci95_lo"].iloc[0]
    with pytest.raises(UsageError):
        corpus.compare_arms("baseline", None)


def test_without_two_arms_the_command_says_so(tmp_path, capsys):
    root = tmp_path / "one-arm"
    build_harbor_corpus(root, with_csv=False)
    import shutil

    shutil.rmtree(next(root.iterdir()) / "mcp")
    assert main(["stats", str(root), "--layout", "harbor", "--no-cache", "-j", "1"]) == 0
    assert "No comparison: two arms are needed" in capsys.readouterr().out
    assert main(["stats", str(root), "--layout", "harbor", "--arms", "baseline,zz"]) == 2
    assert "no run in arm 'zz'" in capsys.readouterr().err


def test_withheld_tests_teach():
    import pandas as pd

    rows = [{"task": f"t{i}", "arm": arm, "passed": float(arm == "b" and i < 3)}
            for i in range(5) for arm in ("a", "b")]  # fmt: skip
    s = compare_arms(pd.DataFrame(rows), "a", "b")
    from evalkit.outputs.stats_text import figure_lines

    lines = "\n".join(figure_lines(s.figure("passed"), s))
    assert "exact McNemar test" in lines and "withheld — 3 tasks differ" in lines
    assert "the smallest p they could give is 0.2500" in lines
    assert "uniform prior" in lines
