"""The tool under test by role, one family scheme across agents, a report that is never empty
(issue 23, items 3, 4 and 6)."""

from __future__ import annotations

import json

import pytest

from evalkit.cli import main
from evalkit.corpus.layouts import detect_layout
from evalkit.corpus.load import load_corpus_frames
from evalkit.formats.families import TOOL_FAMILIES, family_of
from evalkit.formats.profiles import CODEGRAPH, SOURCEGRAPH, choose_profile, load_profile
from evalkit.tables.generic import generic_comparison
from tests.harbor_helpers import build_harbor_corpus
from tests.tool_helpers import GITHUB, mcp_corpus, mixed_agents_corpus
from tests.tool_helpers import SOURCEGRAPH as SG_TOOLS


def _load(root, tmp_path):
    return load_corpus_frames(root, jobs=1, cache_dir=tmp_path / "cache", progress=False)


def _sweep(capsys, *argv):
    code = main(["sweep", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# --- choosing the profile ----------------------------------------------------------------------


def test_the_profile_is_chosen_by_the_presets_own_globs():
    c = choose_profile([["Read", "mcp__sourcegraph__sg_read_file"], ["Read"]])
    assert c.profile == SOURCEGRAPH and c.flag == "sourcegraph"
    assert "1 of 2 sessions call sourcegraph's tools (mcp__sourcegraph__*)" in c.reason
    c = choose_profile([["mcp__codegraph__codegraph_explore"]])
    assert c.profile == CODEGRAPH
    assert choose_profile([["Read", "Bash"]]).profile == CODEGRAPH  # no MCP tool: the default
    assert choose_profile([]).profile == CODEGRAPH


def test_an_unknown_mcp_server_gets_a_profile_made_for_it():
    c = choose_profile([["mcp__github__search_code"], ["mcp__github__x", "mcp__other__y"]])
    p = c.profile
    assert (p.name, p.label, p.tools.globs, c.flag) == (
        "github",
        "github",
        ("mcp__github__*",),
        "mcp:github",
    )
    assert p.is_tool_under_test("mcp__github__anything")
    assert not p.is_tool_under_test("mcp__githubx__y")
    assert load_profile("mcp:github") == p  # the flag names the same profile
    # a server name that is a built-in family is no usable label: prefixed
    assert choose_profile([["mcp__read__x"]]).profile.label == "mcp-read"


# --- item 3: the tool under test by role in the frames -----------------------------------------


def test_a_sourcegraph_corpus_without_flags_is_read_with_sourcegraph(tmp_path):
    corpus = _load(mcp_corpus(tmp_path / "c", SG_TOOLS), tmp_path)
    assert corpus.profile_choice.profile == SOURCEGRAPH
    assert corpus.profile_choice.detected
    s = corpus.frame("sessions").set_index("log")
    new, base = s.loc["p1/ab-demo/run-new-1.jsonl"], s.loc["p1/ab-demo/run-baseline-1.jsonl"]
    assert new["tool_under_test"] == "sourcegraph" and base["tool_under_test"] == "sourcegraph"
    assert (new["tool_under_test_calls"], base["tool_under_test_calls"]) == (2, 0)
    # codegraph's column holds codegraph's numbers only
    assert new["codegraph_calls"] == 0
    assert s["residual_codegraph"].isna().all()
    assert new["residual_tool_under_test"] > 0 and base["residual_tool_under_test"] == 0
    assert (
        new["residual_tool_under_test"] == new["residual_sourcegraph"]
        if "residual_sourcegraph" in s
        else True
    )
    assert new["contributed_tool_under_test"] >= new["residual_tool_under_test"]
    assert (
        new["retrieval_residual"] == new["residual_tool_under_test"] + new["residual_file_access"]
    )


def test_an_unknown_mcp_server_corpus_without_flags(tmp_path):
    corpus = _load(mcp_corpus(tmp_path / "c", GITHUB), tmp_path)
    assert corpus.profile_choice.profile.label == "github"
    s = corpus.frame("sessions").set_index("log")
    new = s.loc["p1/ab-demo/run-new-2.jsonl"]
    assert new["tool_under_test"] == "github"
    assert new["tool_under_test_calls"] == 2 and new["codegraph_calls"] == 0
    assert new["residual_tool_under_test"] > 0
    calls = corpus.frame("tool_calls")
    fams = calls[calls["log"] == "p1/ab-demo/run-new-2.jsonl"]["tool_family"].tolist()
    assert fams == ["tool_under_test", "tool_under_test", "bash"]


def test_the_codegraph_corpus_keeps_the_default_profile(tmp_path):
    from tests.sweep_helpers import cited

    root = tmp_path / "c"
    cited(root, "p1/ab-x/run-new-1.jsonl", 300, 100)
    corpus = _load(root, tmp_path)
    assert corpus.profile_choice.profile == CODEGRAPH
    s = corpus.frame("sessions").iloc[0]
    assert s["tool_under_test"] == "codegraph"
    assert s["tool_under_test_calls"] == s["codegraph_calls"] == 1
    assert s["residual_tool_under_test"] == s["residual_codegraph"]


def test_a_given_profile_overrides_the_detection(tmp_path):
    corpus = load_corpus_frames(
        mcp_corpus(tmp_path / "c", SG_TOOLS),
        jobs=1,
        cache_dir=tmp_path / "cache",
        progress=False,
        profile="codegraph",
    )
    assert not corpus.profile_choice.detected
    s = corpus.frame("sessions")
    assert set(s["tool_under_test"]) == {"codegraph"}
    assert s["tool_under_test_calls"].sum() == 0


# --- item 4: one family scheme across agents ---------------------------------------------------


def test_the_scheme_is_one_declaration():
    assert TOOL_FAMILIES == (
        "tool_under_test",
        "read",
        "search",
        "bash",
        "edit",
        "plan",
        "subagent",
        "web",
        "mcp_other",
        "other",
    )
    for name, fam in [
        ("Edit", "edit"),
        ("Write", "edit"),
        ("MultiEdit", "edit"),
        ("NotebookEdit", "edit"),
        ("apply_patch", "edit"),
        ("file_change", "edit"),
        ("TodoWrite", "plan"),
        ("update_plan", "plan"),
        ("Task", "subagent"),
        ("WebFetch", "web"),
        ("ToolSearch", "other"),
        ("mcp__codegraph__codegraph_explore", "mcp_other"),
        ("mcp__sourcegraph__sg_read_file", "tool_under_test"),
    ]:
        assert family_of(name, SOURCEGRAPH) == fam, name
    assert family_of("mcp__codegraph__codegraph_explore", CODEGRAPH) == "tool_under_test"


def test_claude_code_and_codex_edits_and_plans_land_in_one_family(tmp_path):
    corpus = _load(mixed_agents_corpus(tmp_path / "c"), tmp_path)
    calls = corpus.frame("tool_calls")
    got = sorted(zip(calls["agent"], calls["name"], calls["tool_family"], strict=True))
    assert ("claude-code", "Edit", "edit") in got
    assert ("claude-code", "Write", "edit") in got
    assert ("claude-code", "TodoWrite", "plan") in got
    assert ("claude-code", "Task", "subagent") in got
    assert ("codex", "apply_patch", "edit") in got
    assert ("codex", "update_plan", "plan") in got
    assert ("codex", "file_change", "edit") in got
    # the reference's occupancy families stay in `family` (Claude Code's Edit is `other` there)
    cc = calls[calls["agent"] == "claude-code"].set_index("name")
    assert cc.loc["Edit", "family"] == "other"
    cmp = generic_comparison(corpus.frame("sessions"), calls)
    by_agent = {g.agent: dict(g.calls) for g in cmp.groups}
    assert by_agent["claude-code"]["edit"] == 2 and by_agent["claude-code"]["plan"] == 1
    assert by_agent["codex"]["edit"] == 2 and by_agent["codex"]["plan"] >= 1


def test_evalkit_columns_lists_the_families(capsys):
    assert main(["columns", "families"]) == 0
    out = capsys.readouterr().out
    for fam in TOOL_FAMILIES:
        assert f"\n  {fam} " in out
    assert "TodoWrite, update_plan" in out
    assert main(["columns", "tool_calls"]) == 0
    assert "tool_family" in capsys.readouterr().out


# --- item 6: a report that is never empty --------------------------------------------------------


def test_a_corpus_without_explore_calls_gets_the_generic_comparison(tmp_path, capsys):
    root = mcp_corpus(tmp_path / "c", SG_TOOLS)
    code, out, _ = _sweep(capsys, str(root), "--cache-dir", str(tmp_path / "cache"), "-j", "1")
    assert code == 0
    assert "4 sessions read, none with an answered explore call" in out
    assert (
        "Tool under test: sourcegraph (profile detected: 2 of 4 sessions call sourcegraph's" in out
    )
    assert "evalkit sweep DIR --profile sourcegraph" in out
    lines = out.splitlines()
    i = lines.index("Sessions per agent × arm: outcomes, cost and duration:")
    header, base, new = lines[i + 1], lines[i + 2], lines[i + 3]
    assert header.split()[:3] == ["agent", "arm", "sessions"]
    # "0 of 2" priced: both costs are the ones the logs record (issue 27)
    assert base.split() == [
        "claude-code", "baseline", "2", "—", "—", "$0.30", "0", "of", "2", "$0.15", "12.0"
    ]  # fmt: skip
    assert new.split() == [
        "claude-code", "new", "2", "—", "—", "$0.70", "0", "of", "2", "$0.35", "12.0"
    ]  # fmt: skip
    j = lines.index("Tool calls by family (tool_under_test = sourcegraph):")
    assert lines[j + 1].split() == ["agent", "arm", *TOOL_FAMILIES]
    assert lines[j + 2].split() == [
        "claude-code",
        "baseline",
        "0",
        "2",
        "2",
        "2",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
    ]
    assert lines[j + 3].split() == [
        "claude-code",
        "new",
        "4",
        "0",
        "0",
        "2",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
    ]
    assert (
        "  lowest cost: $0.10  p1/ab-demo/run-baseline-1.jsonl  (claude-code, arm baseline)"
        in lines
    )
    assert "  highest cost: $0.40  p1/ab-demo/run-new-2.jsonl  (claude-code, arm new)" in lines
    assert "Tokens by ledger column (summed over the sessions):" in lines
    assert "codegraph" not in out.lower()


def test_the_generic_comparison_counts_statuses_and_outcomes_when_the_frame_has_them(tmp_path):
    corpus = _load(mcp_corpus(tmp_path / "c", SG_TOOLS), tmp_path)
    s = corpus.frame("sessions").copy()
    s["status"] = ["ok", "rate_limited", "ok", "ok"]
    s["reward"] = [1.0, 0.0, 0.5, None]
    s["passed"] = [True, False, None, None]
    cmp = generic_comparison(s, corpus.frame("tool_calls"))
    g = {x.arm: x for x in cmp.groups}
    assert cmp.has_status
    assert g["baseline"].statuses == (("ok", 1), ("rate_limited", 1))
    assert (g["baseline"].passed, g["baseline"].judged, g["baseline"].mean_reward) == (1, 2, 0.5)
    assert g["new"].mean_reward == 0.5 and g["new"].outcomes == 1
    ends = [(e.what, e.end, e.value) for e in cmp.extremes]
    assert ends == [
        ("cost", "lowest", pytest.approx(0.1)),
        ("cost", "highest", pytest.approx(0.4)),
        ("reward", "lowest", 0.0),
        ("reward", "highest", 1.0),
    ]


def test_an_unknown_server_corpus_names_its_profile_flag(tmp_path, capsys):
    root = mcp_corpus(tmp_path / "c", GITHUB)
    code, out, _ = _sweep(capsys, str(root), "--no-cache", "-j", "1")
    assert code == 0
    assert "Tool under test: github (profile detected: 2 of 4 sessions call mcp__github__*" in out
    assert "--profile mcp:github" in out
    assert "codegraph" not in out.lower()


def test_a_harbor_tree_swept_without_layout_is_recognised(tmp_path, capsys):
    root = tmp_path / "h"
    build_harbor_corpus(root, with_csv=False)
    assert detect_layout(root).layout == "harbor"
    code, out, _ = _sweep(capsys, str(root), "--no-cache", "-j", "1")
    assert code == 0
    assert "Layout: harbor (a harbor run tree: suite/baseline/t1/t1_1/agent/claude-code.txt" in out
    assert (
        "Tool under test: sourcegraph (profile detected: 8 of 16 sessions call sourcegraph's" in out
    )
    assert "no transcripts" not in out
    assert "codegraph" not in out.lower()
    assert "CG-" not in out
    # a flag overrides: the same tree with --profile codegraph says nothing was detected
    code, out, _ = _sweep(capsys, str(root), "--no-cache", "-j", "1", "--profile", "codegraph")
    assert "profile detected" not in out


def test_no_output_under_sourcegraph_says_codegraph(tmp_path, capsys):
    root = tmp_path / "h"
    csv = build_harbor_corpus(root)
    code, out, _ = _sweep(
        capsys, str(root), "--no-cache", "-j", "1", "--layout", "harbor", "--outcomes", str(csv)
    )
    assert code == 0 and "sourcegraph" in out
    assert "codegraph" not in out.lower() and "CG-" not in out
    code, out, _ = _sweep(capsys, str(root), "--no-cache", "-j", "1", "--json")
    assert "codegraph" not in json.dumps(json.loads(out)).lower()


def test_the_profile_applies_to_codex_sessions_too(tmp_path):
    from tests.agent_builders import codex_session_lines, write_rollout

    root = mcp_corpus(tmp_path / "c", SG_TOOLS)
    lines = [
        {**x, "payload": {**x["payload"], "name": SG_TOOLS[0]}}
        if x.get("payload", {}).get("name") == "mcp__codegraph__codegraph_explore"
        else x
        for x in codex_session_lines()
    ]
    (root / "codex").mkdir()
    write_rollout(
        root / "codex" / "rollout-2030-01-01T10-00-00-00000000-0000-7000-8000-000000000001.jsonl",
        lines,
    )
    corpus = _load(root, tmp_path)
    assert corpus.profile_choice.profile == SOURCEGRAPH
    s = corpus.frame("sessions")
    codex = s[s["agent"] == "codex"].iloc[0]
    assert codex["tool_under_test"] == "sourcegraph"
    assert (codex["tool_under_test_calls"], codex["codegraph_calls"]) == (1, 0)
    # the call was in the first turn, which the compaction evicted: it added tokens, none remain
    assert codex["contributed_tool_under_test"] > 0 and codex["residual_tool_under_test"] == 0
    assert codex["retrieval_residual"] == (
        codex["residual_tool_under_test"] + codex["residual_file_access"]
    )
    calls = corpus.frame("tool_calls")
    cx = calls[calls["agent"] == "codex"]
    fams = dict(zip(cx["name"], cx["tool_family"], strict=True))
    assert fams[SG_TOOLS[0]] == "tool_under_test" and fams["apply_patch"] == "edit"


def test_the_export_chooses_the_profile_as_the_loader_does(tmp_path):
    import pandas as pd

    from evalkit.corpus.load import export_corpus

    root = mcp_corpus(tmp_path / "c", SG_TOOLS)
    export_corpus(root, tmp_path / "out", jobs=1, cache_dir=tmp_path / "cache", progress=False)
    s = pd.read_parquet(tmp_path / "out" / "sessions.parquet")
    assert set(s["tool_under_test"]) == {"sourcegraph"}
    assert sorted(s["tool_under_test_calls"]) == [0, 0, 2, 2]
    pd.testing.assert_frame_equal(s, _load(root, tmp_path).frame("sessions"), check_exact=True)


def test_a_corpus_calling_no_tool_under_test_is_not_described_in_codegraphs_words(tmp_path, capsys):
    root = mixed_agents_corpus(tmp_path / "c")  # Claude Code and Codex runs, no MCP tool called
    code, out, _ = _sweep(capsys, str(root), "--no-cache", "-j", "1")
    assert code == 0
    assert "Tool calls by family:" in out.splitlines()
    assert "codegraph" not in out.lower()
