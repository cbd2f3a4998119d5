"""Layouts (evalkit/corpus/layouts.py) and outcome joining (evalkit/corpus/outcomes.py)."""

from __future__ import annotations

import json

import pytest

from evalkit.corpus.layouts import discover_layout, parse_layout
from evalkit.corpus.outcomes import join_outcomes, read_outcomes_csv
from evalkit.errors import UsageError
from evalkit.formats.harbor import read_trial_result


def touch(root, rel, text="{}\n"):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def test_a_pattern_labels_every_placeholder(tmp_path):
    touch(tmp_path, "cg/express/with/q1_2.jsonl")
    touch(tmp_path, "cg/express/with/notes.txt")
    touch(tmp_path, ".git/HEAD")
    d = discover_layout(tmp_path, "{pass}/{repo}/{arm}/{task}_{trial}.jsonl")
    (ref,) = d.sessions
    assert (ref.pass_, ref.repo, ref.arm, ref.task, ref.trial, ref.run) == (
        "cg",
        "express",
        "with",
        "q1",
        "2",
        "2",
    )
    reasons = {f.path: f.reason for f in d.files}
    assert reasons["cg/express/with/notes.txt"].startswith("does not match the layout")
    assert reasons[".git/"].startswith("hidden directory")
    assert reasons["cg/express/with/q1_2.jsonl"] is None


def test_globs_and_double_star(tmp_path):
    touch(tmp_path, "a/b/s1/arm1/t/t_1/agent/claude-code.txt")
    d = discover_layout(tmp_path, "**/{suite}/{arm}/{task}/{trial}/agent/*.txt")
    assert [(r.suite, r.arm, r.task, r.trial) for r in d.sessions] == [("s1", "arm1", "t", "t_1")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{suite}/{nope}.txt", "unknown placeholder {nope}"),
        ("{arm}/{arm}.txt", "appears twice"),
        ("plain/path.txt", "not a layout"),
        ("/abs/{arm}.txt", "inside DIR"),
        ("{arm}//x.txt", "empty path component"),
    ],
)
def test_bad_patterns(text, message):
    with pytest.raises(UsageError, match=message):
        parse_layout(text)


def test_harbor_labels_and_suite_outside_the_root(tmp_path):
    touch(tmp_path, "arm/task/task_1/agent/claude-code.txt")
    touch(tmp_path, "arm/task/task_1/result.json")
    touch(tmp_path, "loose.jsonl")
    d = discover_layout(tmp_path, "harbor")
    (ref,) = d.sessions
    assert (ref.suite, ref.arm, ref.task, ref.trial) == (None, "arm", "task", "task_1")
    assert ref.outcome == "arm/task/task_1/result.json"
    files = {f.path: (f.session, f.reason) for f in d.files}
    assert files["arm/task/task_1/result.json"] == (ref.log, None)
    assert files["loose.jsonl"][1].startswith("not in a harbor trial directory")


def test_trial_results(tmp_path):
    ok = touch(tmp_path, "a.json", json.dumps({"verifier_result": {"rewards": {"reward": 0.5}}}))
    assert read_trial_result(str(ok)).reward == 0.5
    score = touch(tmp_path, "b.json", json.dumps({"verifier_result": {"rewards": {"score": 1}}}))
    assert (read_trial_result(str(score)).reward, read_trial_result(str(score)).reward_key) == (
        1.0,
        "score",
    )
    many = touch(tmp_path, "c.json", json.dumps({"verifier_result": {"rewards": {"x": 1, "y": 0}}}))
    assert "several rewards (x, y)" in read_trial_result(str(many)).problem
    raised = {"verifier_result": None, "exception_info": {"exception_type": "AgentTimeoutError"}}
    r = read_trial_result(str(touch(tmp_path, "d.json", json.dumps(raised))))
    assert (
        r.reward is None and r.problem == "no verifier reward (the trial raised AgentTimeoutError)"
    )
    assert read_trial_result(str(touch(tmp_path, "e.json", "{oops"))).problem == "not valid JSON"
    assert read_trial_result(str(tmp_path / "none.json")).problem.startswith("cannot read")
    void = {"verifier_result": {"rewards": {"reward": 1.0}}, "reward_valid": False}
    assert (
        "reward_valid"
        in read_trial_result(str(touch(tmp_path, "g.json", json.dumps(void)))).problem
    )
    text = touch(tmp_path, "f.json", json.dumps({"verifier_result": {"rewards": {"reward": "1"}}}))
    assert read_trial_result(str(text)).problem == "rewards.reward is not a number"


def test_outcomes_csv_by_log_with_passed(tmp_path):
    touch(tmp_path, "c/x/run-a-1.jsonl")
    d = discover_layout(tmp_path, "{pass}/{repo}/run-{arm}-{run}.jsonl")
    csv = touch(
        tmp_path.parent / "o", "out.csv", "log,passed\nc/x/run-a-1.jsonl,yes\nc/x/none.jsonl,no\n"
    )
    rows = read_outcomes_csv(csv)
    assert [(r.line, r.log, r.passed, r.reward) for r in rows] == [
        (2, "c/x/run-a-1.jsonl", True, None),
        (3, "c/x/none.jsonl", False, None),
    ]
    j = join_outcomes(tmp_path, d.sessions, csv_path=csv)
    assert j.outcomes["c/x/run-a-1.jsonl"].passed is True
    assert j.unmatched_rows == ("out.csv:3 (c/x/none.jsonl)",) and j.missing == ()
    bad = touch(tmp_path.parent / "o", "bad.csv", "log,passed\nx,maybe\n")
    with pytest.raises(UsageError, match=r"bad.csv:2: passed 'maybe' is not true/false"):
        read_outcomes_csv(bad)
    with pytest.raises(UsageError, match="no such outcomes file"):
        read_outcomes_csv(tmp_path / "missing.csv")
    with pytest.raises(UsageError, match=r"o: is a directory, not an outcomes CSV file$"):
        read_outcomes_csv(tmp_path.parent / "o")
    binary = tmp_path.parent / "o" / "binary.csv"
    binary.write_bytes(b"log,passed\n\xff\xfe\n")
    with pytest.raises(UsageError, match=r"binary.csv: cannot read the outcomes CSV \(not UTF-8"):
        read_outcomes_csv(binary)


def test_load_corpus_with_the_harbor_layout_fills_the_identity_columns(tmp_path):
    import evalkit
    from tests.harbor_helpers import build_harbor_corpus

    build_harbor_corpus(tmp_path / "runs", with_csv=False)
    c = evalkit.load_corpus(
        tmp_path / "runs", layout="harbor", profile="sourcegraph", cache=False, jobs=1
    )
    df = c.sessions_df()
    assert len(df) == 16 and c.errors == ()
    row = df[df["log"] == "suite/mcp/t2/t2_1/agent/claude-code.txt"].iloc[0]
    assert (row.suite, row.task, row.trial, row.arm) == ("suite", "t2", "t2_1", "mcp")
    assert len(c.accounting()) == 50
    with pytest.raises(UsageError, match="unknown layout 'nonsense'"):
        evalkit.load_corpus(tmp_path / "runs", layout="nonsense")


def test_a_harbor_trial_without_a_log_evalkit_reads_is_said_so(tmp_path):
    # issue 23: agent/codex.txt and an ATIF-only agent/trajectory.json are read (tests in
    # test_agents_layouts); another agent's own log without a trajectory is not.
    touch(tmp_path, "s/arm/task/task_1/agent/gemini-cli.txt")
    touch(tmp_path, "s/arm/task/task_1/result.json")
    d = discover_layout(tmp_path, "harbor")
    assert d.sessions == ()
    reasons = {f.path: f.reason for f in d.files}
    assert reasons["s/arm/task/task_1/result.json"].startswith(
        "harbor trial without a log evalkit reads"
    )
    assert (
        reasons["s/arm/task/task_1/agent/gemini-cli.txt"]
        == reasons["s/arm/task/task_1/result.json"]
    )
