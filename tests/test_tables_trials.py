"""The trial sweep (evalkit/tables/trials.py, evalkit/outputs/trials_text.py, `evalkit sweep
--layout/--profile/--outcomes`) on a hand-built harbor corpus (tests/harbor_helpers.py)."""

from __future__ import annotations

import json

import pytest

from evalkit.cli import main
from evalkit.errors import UsageError
from evalkit.tables.trials import choose_arms, run_trial_sweep
from tests.harbor_helpers import build_harbor_corpus


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "runs"
    csv = build_harbor_corpus(root)
    return root, csv


def sweep(root, **kw):
    return run_trial_sweep(root, layout="harbor", profile="sourcegraph", cache=False, jobs=1, **kw)


def test_every_file_is_accounted_for_and_every_reward_joined(corpus):
    root, csv = corpus
    t = sweep(root, outcomes=csv)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert sorted(path for path, _, _ in t.accounting) == files and len(files) == 50
    status = {path: (st, why) for path, st, why in t.accounting}
    assert sum(1 for st, _ in status.values() if st == "parsed") == 32  # 16 transcripts + results
    assert status["suite/baseline/t2/t2_2/agent/trajectory.json"][1].startswith("ATIF copy")
    copy = "suite/baseline/t2/t2_2/agent/sessions/projects/-app/0000.jsonl"
    assert status[copy][1].startswith("interactive copy of the same run")
    assert status["suite/mcp/t1/t1_1/config.json"] == (
        "skipped",
        "harbor trial file, not a transcript",
    )
    assert len(t.parsed) == 16 and all(r.reward is not None for r in t.parsed)
    assert t.join.missing == () and t.join.unmatched_rows == (
        "runs-outcomes.csv:4 (task=t9 arm=mcp trial=t9_1)",
    )
    by = {(r.arm, r.trial): r for r in t.parsed}
    assert by[("mcp", "t4_1")].outcome_source == "outcomes-csv"
    assert by[("mcp", "t4_1")].outcome_ref == "runs-outcomes.csv:2"
    assert by[("baseline", "t1_1")].outcome_source == "result.json"
    assert by[("baseline", "t1_1")].outcome_ref == "suite/baseline/t1/t1_1/result.json"
    assert {r.run_status for r in t.parsed} == {"ok"}
    assert {r.suite for r in t.parsed} == {"suite"} and by[("mcp", "t2_1")].task == "t2"


def test_the_per_task_table_and_summary_by_hand(corpus):
    root, csv = corpus
    t = sweep(root, outcomes=csv)
    assert (t.baseline, t.candidate) == ("baseline", "mcp")
    o = t.outcomes
    assert [
        (r.task, r.baseline_reward, r.baseline_n, r.candidate_reward, r.candidate_n, r.delta, r.cls)
        for r in o.tasks
    ] == [
        ("t1", 0.5, 2, 1.0, 2, 0.5, "helps"),
        ("t2", 1.0, 2, 0.5, 2, -0.5, "hurts"),
        ("t3", 0.0, 2, 0.0, 2, 0.0, "tie"),
        ("t4", 0.5, 2, 1.0, 2, 0.5, "helps"),
    ]
    assert (o.helps, o.hurts, o.ties, o.incomplete) == (2, 1, 1, 0)
    assert not o.binary and o.test.p_value is None and o.test.min_attainable_p == 0.25
    cost, tokens, duration, calls = o.metrics
    assert [m.delta for m in cost.tasks] == [0.0, 0.0, 0.0, 0.0]
    assert [m.delta for m in duration.tasks] == [0.0] * 4 and calls.tied == 4


def test_without_the_csv_the_unscored_trials_are_reported(corpus):
    root, _ = corpus
    t = sweep(root)
    missing = dict(t.join.missing)
    assert missing == {
        "suite/mcp/t4/t4_1/agent/claude-code.txt": "suite/mcp/t4/t4_1/result.json: no verifier reward",
        "suite/mcp/t4/t4_2/agent/claude-code.txt": "suite/mcp/t4/t4_2/result.json: no verifier reward",
    }
    t4 = t.outcomes.tasks[3]
    assert (t4.candidate_n, t4.cls) == (0, "incomplete") and t.outcomes.incomplete == 1


def test_containers_event_types_and_the_profile_families(corpus):
    root, csv = corpus
    t = sweep(root, outcomes=csv)
    by = {(r.arm, r.trial): r for r in t.parsed}
    array, wrapped, plain = by[("baseline", "t1_1")], by[("mcp", "t2_1")], by[("mcp", "t2_2")]
    assert array.figures == by[("baseline", "t1_2")].figures.__class__(
        **{**by[("baseline", "t1_2")].figures.to_payload(), "dur": array.figures.dur}
    )
    assert wrapped.read == plain.read and wrapped.tool_calls == plain.tool_calls == 3
    assert by[("mcp", "t1_1")].other_types == (("rate_limit_event", 1),)
    for r in t.parsed:
        assert r.tool_calls == 3
        assert r.tool_under_test_calls == (2 if r.arm == "mcp" else 0)
        assert r.read_allocation_efficiency == (1.0 if r.arm == "mcp" else 0.75)
        assert r.cost_usd == 0.25 and r.duration_s == (11 if r.trial.endswith("_1") else 12)
    base, mcp = t.reads
    assert (base.arm, base.attributed_chars, base.cited_chars, base.unattributed_chars) == (
        "baseline",
        3200,
        2400,
        320,
    )
    assert (mcp.arm, mcp.attributed_chars, mcp.cited_chars, mcp.unattributed_chars) == (
        "mcp",
        1600,
        1600,
        480,
    )
    cmp = t.comparisons[0]
    assert cmp.directory == "suite" and [a.label for a in cmp.arms] == ["baseline", "mcp"]
    assert cmp.arm("mcp").cg.median == 2 and cmp.arm("baseline").reads.median == 2
    assert cmp.arm("mcp").occ_cg.median > 0 and cmp.arm("baseline").occ_cg.median == 0


def test_cli_text_names_the_profile_and_prints_every_table(corpus, capsys):
    root, csv = corpus
    code = main(
        [
            "sweep",
            str(root),
            "--layout",
            "harbor",
            "--profile",
            "sourcegraph",
            "--outcomes",
            str(csv),
            "--no-cache",
            "-j",
            "1",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Tool profile: sourcegraph (preset)" in out
    assert "====== ARM COMPARISON — suite ======" in out and "    sourcegraph calls" in out
    assert "explore sufficiency" not in out  # the profile declares no codegraph-format explore tool
    assert "  task  baseline reward  n  mcp reward  n  delta  class" in out
    assert "  t1               0.50  2        1.00  2  +0.50  helps" in out
    assert "  tokens            4          4       0     0          -100          —" in out
    assert "mcp helps on 2 of 4 tasks, hurts on 1, ties on 1; 0 incomplete" in out
    assert (
        "no p-value: 3 non-tied tasks (six are needed; the smallest p they could give is 0.2500)"
        in out
    )
    assert "Read allocation — evalkit's own metric" in out and "Uncited is not unused" in out
    assert (
        "  baseline     8   75.0%       75.0%       3,200  2,400                         320" in out
    )
    assert "outcome row matching no run: runs-outcomes.csv:4" in out
    assert "event types kept but not read by the metrics: rate_limit_event 1" in out
    assert "  damaged: 1 file read over what survived" in out
    assert "    suite/baseline/t3/t3_1/agent/claude-code.txt: 1 malformed line skipped" in out
    assert (
        "Files: 50 entries accounted for — 32 read, 0 in runs that could not be read, 18 skipped"
        in out
    )


def test_cli_json_keys(corpus, capsys):
    root, csv = corpus
    main(
        [
            "sweep",
            str(root),
            "--layout",
            "harbor",
            "--profile",
            "sourcegraph",
            "--outcomes",
            str(csv),
            "--json",
            "--no-cache",
            "-j",
            "1",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    row = doc["session_rows"][0]
    for key in (
        "suite",
        "task",
        "trial",
        "reward",
        "passed",
        "tool_calls",
        "tool_under_test_calls",
        "read_allocation_efficiency",
    ):
        assert key in row
    assert row["log"] == "suite/baseline/t1/t1_1/agent/claude-code.txt" and row["passed"] is False
    o = doc["outcomes"]
    assert list(o)[:7] == ["baseline", "candidate", "tasks", "helps", "hurts", "ties", "incomplete"]
    assert o["tasks"][1] == {
        "task": "t2",
        "baseline_reward": 1.0,
        "candidate_reward": 0.5,
        "baseline_n": 2,
        "candidate_n": 2,
        "delta": -0.5,
        "class": "hurts",
    }
    assert (o["helps"], o["hurts"], o["ties"], o["incomplete"]) == (2, 1, 1, 0)


def test_pass_threshold_and_arms(corpus, capsys):
    root, csv = corpus
    t = sweep(root, outcomes=csv, pass_threshold=0.5, arms=("mcp", "baseline"))
    assert (t.baseline, t.candidate) == ("mcp", "baseline") and t.outcomes.tasks[0].cls == "hurts"
    with pytest.raises(UsageError, match="no run in arm 'nope'"):
        choose_arms(["baseline", "mcp"], ["baseline", "nope"])
    assert main(["sweep", str(root), "--layout", "harbor", "--arms", "a,b,c"]) == 2
    assert "BASELINE,CANDIDATE" in capsys.readouterr().err
    assert main(["sweep", str(root), "--layout", "nolayout"]) == 2
    assert "not a layout" in capsys.readouterr().err
    assert main(["sweep", str(root), "--profile", str(root / "none.toml")]) == 2
    assert "no such tool profile file" in capsys.readouterr().err


def test_a_bad_outcomes_csv_is_one_clear_error(corpus, capsys):
    root, csv = corpus
    csv.write_text("task,arm,trial,reward\nt1,mcp,t1_1,lots\n", encoding="utf-8")
    assert main(["sweep", str(root), "--layout", "harbor", "--outcomes", str(csv)]) == 2
    err = capsys.readouterr().err
    assert "runs-outcomes.csv:2: reward 'lots' is not a number" in err and "Traceback" not in err
    csv.write_text("name,score\n", encoding="utf-8")
    assert main(["sweep", str(root), "--layout", "harbor", "--outcomes", str(csv)]) == 2
    assert "needs a log column or task, arm and trial columns" in capsys.readouterr().err


def test_the_cache_is_keyed_by_the_profile(corpus, tmp_path):
    root, csv = corpus
    cache = tmp_path / "cache"
    first = run_trial_sweep(root, layout="harbor", profile="sourcegraph", cache_dir=cache, jobs=1)
    again = run_trial_sweep(root, layout="harbor", profile="sourcegraph", cache_dir=cache, jobs=1)
    other = run_trial_sweep(root, layout="harbor", profile="codegraph", cache_dir=cache, jobs=1)
    assert (first.cache_misses, again.cache_hits, other.cache_hits) == (16, 16, 0)
    assert again.rows == first.rows
    assert {r.tool_under_test_calls for r in other.parsed} == {0}


def test_the_default_profile_gives_evalkit_compares_figures():
    from evalkit.paths import bundled_corpus
    from evalkit.tables.compare import compare_arms

    root = bundled_corpus()
    t = run_trial_sweep(root, profile="codegraph", cache=False, jobs=1)
    mine = next(c for c in t.comparisons if c.directory == "cg22/express")
    ref = compare_arms(root / "cg22" / "ab-express", ["baseline", "new"])
    for label in ("baseline", "new"):
        a, b = mine.arm(label), ref.arm(label)
        assert a.to_dict() | {"run_names": None} == b.to_dict() | {"run_names": None}


def test_cli_markdown(corpus, tmp_path, capsys):
    root, csv = corpus
    md = tmp_path / "trials.md"
    args = ["sweep", str(root), "--layout", "harbor", "--profile", "sourcegraph"]
    assert main([*args, "--outcomes", str(csv), "--markdown", str(md), "--no-cache"]) == 0
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Trial sweep — runs/ (harbor run tree)")
    assert "Tool profile: **sourcegraph (preset)**" in text
    assert "| t2 | 1.00 | 2 | 0.50 | 2 | -0.50 | hurts |" in text
    assert "| baseline | 8 | 75.0% | 3,200 | 2,400 | 320 |" in text
    assert str(tmp_path) not in text


def test_evalkit_compare_with_a_profile(corpus, capsys):
    root, _ = corpus
    suite = root / "suite"
    # evalkit compare reads the harness's run-<label>-<i>.jsonl files: lay two runs out that way.
    for arm in ("baseline", "mcp"):
        for i, n in enumerate((1, 2), start=1):
            src = suite / arm / "t1" / f"t1_{n}" / "agent" / "claude-code.txt"
            text = src.read_text(encoding="utf-8")
            if text.lstrip().startswith("["):  # the JSON-array trial: write it as JSONL
                text = "".join(json.dumps(e) + "\n" for e in json.loads(text))
            (root / f"run-{arm}-{i}.jsonl").write_text(text, encoding="utf-8")
    assert main(["compare", str(root), "baseline", "mcp", "--profile", "sourcegraph"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Tool profile: sourcegraph (preset)\n")
    assert (
        "    sourcegraph calls                                        0                       2"
        in out
    )
    assert "explore sufficiency" not in out
    assert main(["compare", str(root), "baseline", "mcp"]) == 0
    plain = capsys.readouterr().out
    assert "    codegraph calls " in plain and "Tool profile" not in plain


def test_a_task_name_in_two_suites_is_two_tasks(corpus):
    import shutil

    root, csv = corpus
    shutil.copytree(root / "suite", root / "other")
    t = sweep(root, outcomes=csv)
    names = [r.task for r in t.outcomes.tasks]
    assert names[:2] == ["other/t1", "other/t2"] and "suite/t4" in names and len(names) == 8
    assert len(t.comparisons) == 2
    assert (
        "runs-outcomes.csv:2 (task=t4 arm=mcp trial=t4_1; it matches 2 runs, add a suite column)"
        in (t.join.unmatched_rows)
    )
    csv.write_text("suite,task,arm,trial,reward\nother,t4,mcp,t4_1,1.0\n", encoding="utf-8")
    t = sweep(root, outcomes=csv)
    assert t.join.unmatched_rows == () and len(t.join.outcomes) == 29  # 28 from result.json


def test_a_run_with_no_outcome_source_says_so_once(tmp_path, capsys):
    from tests.sweep_helpers import cited

    cited(tmp_path / "c", "baseline/auth/t1/transcript.jsonl", 800, 200)
    argv = ["sweep", str(tmp_path / "c"), "--layout", "{arm}/{task}/{trial}/*.jsonl", "-j", "1"]
    assert main([*argv, "--no-cache"]) == 0
    out = capsys.readouterr().out
    line = (
        "    no outcome: baseline/auth/t1/transcript.jsonl (neither a result.json nor a CSV row)\n"
    )
    assert line in out


def test_trial_sweep_json_carries_the_damage_account_the_text_lists(tmp_path, capsys):
    from tests.sweep_helpers import cited

    path = cited(tmp_path / "c", "baseline/auth/t1/s.jsonl", 800, 200)
    path.write_bytes(path.read_bytes() + b'{"cut":')
    argv = ["sweep", str(tmp_path / "c"), "--layout", "{arm}/{task}/{trial}/*.jsonl"]
    assert main([*argv, "--no-cache", "-j", "1"]) == 0
    assert "    baseline/auth/t1/s.jsonl: 1 malformed line skipped\n" in capsys.readouterr().out
    assert main([*argv, "--no-cache", "-j", "1", "--json"]) == 0
    damage = json.loads(capsys.readouterr().out)["damage"]
    assert [(d["file"], d["malformed"], d["what"]) for d in damage] == [
        ("baseline/auth/t1/s.jsonl", 1, "1 malformed line skipped")
    ]


def test_trial_sweep_json_has_no_non_finite_number(tmp_path, capsys):
    from tests.sweep_helpers import explore_session, put

    events = explore_session([("lib/a.js", "fa(function)", 900)], "It is in `lib/a.js`.")
    text = "\n".join(json.dumps(e) for e in events).replace(
        '"duration_ms": 1000', '"duration_ms": 1e400'
    )
    put(tmp_path / "c", "baseline/auth/t1/s.jsonl", text=text + "\n")
    argv = ["sweep", str(tmp_path / "c"), "--layout", "{arm}/{task}/{trial}/*.jsonl", "--json"]
    assert main([*argv, "--no-cache", "-j", "1"]) == 0

    def refuse(name):
        raise AssertionError(f"{name} in the JSON")

    doc = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert doc["session_rows"][0]["duration_s"] is None  # JSON.stringify writes Infinity as null
