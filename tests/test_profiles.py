"""Tool profiles (evalkit/formats/profiles.py): presets, user files, and the metrics that follow them."""

from __future__ import annotations

import pickle

import pytest

from evalkit.errors import UsageError
from evalkit.formats.claude_code.transcripts import family, is_explore
from evalkit.formats.profiles import (
    CODEGRAPH,
    SOURCEGRAPH,
    Globs,
    load_profile,
    profile_from_dict,
)
from evalkit.metrics.occupancy import compute_occupancy, format_occupancy
from evalkit.metrics.summary import format_run_header, summarize
from tests.builders import ASST, DONE, RES, TEXT, USE, lines

NAMES = [
    "mcp__codegraph__codegraph_explore",
    "mcp__cg__codegraph_explore",
    "codegraph",
    "mcp__codegraph__codegraph_search",
    "Read",
    "NotebookRead",
    "Grep",
    "Glob",
    "Bash",
    "BashOutput",
    "Task",
    "Agent",
    "ToolSearch",
    "",
    "read",
    "mcp__sourcegraph__sg_keyword_search",
    "mcp__sourcegraph__sg_read_file",
    "undefined",
]


def reference_family(name: str) -> str:
    """§1.4 as the spec words it: tested in this order."""
    if "codegraph" in name:
        return "codegraph"
    if name in ("Read", "NotebookRead"):
        return "read"
    if name in ("Grep", "Glob"):
        return "search"
    if name in ("Bash", "BashOutput"):
        return "bash"
    return "other"


@pytest.mark.parametrize("name", NAMES)
def test_the_codegraph_preset_is_the_reference_rule(name):
    assert family(name) == CODEGRAPH.family(name) == reference_family(name)
    assert is_explore(name) == ("codegraph_explore" in name)
    assert load_profile(None) is CODEGRAPH and CODEGRAPH.is_default


def test_family_of_a_non_string_name_uses_its_string_form():
    assert family(None) == "other" and family(5) == "other"
    assert family(None, SOURCEGRAPH) == "other"


def test_the_sourcegraph_preset():
    p = load_profile("sourcegraph")
    assert p is SOURCEGRAPH and p.families == ("sourcegraph", "read", "search", "bash", "other")
    assert p.family("mcp__sourcegraph__sg_keyword_search") == "sourcegraph"
    assert p.family("mcp__sourcegraph__sg_read_file") == "sourcegraph"
    assert p.family("mcp__codegraph__codegraph_explore") == "other"
    assert p.family("Read") == "read" and p.family("Bash") == "bash"
    assert not p.is_explore("mcp__codegraph__codegraph_explore")
    assert p.file_of("mcp__sourcegraph__sg_read_file", {"path": "src/a.go"}) == "src/a.go"
    assert p.file_of("mcp__sourcegraph__sg_read_file", {"repo": "x"}) is None
    assert p.file_of("mcp__sourcegraph__sg_keyword_search", {"path": "a"}) is None
    assert p.is_cli_call("cd repo && src search foo") and not p.is_cli_call("cd src && ls")
    assert p.describe() == "sourcegraph (preset)" and CODEGRAPH.describe() == "codegraph (default)"


def test_globs_compile_to_the_same_answers_as_fnmatch():
    import fnmatch

    g = Globs(["Read", "*codegraph*", "mcp__sg__*", "x?y", "[AB]ash"])
    for name in ["Read", "Reader", "a codegraph b", "mcp__sg__find", "xzy", "Bash", "Cash", ""]:
        assert g(name) == any(fnmatch.fnmatchcase(name, p) for p in g.globs)
    assert pickle.loads(pickle.dumps(g)) == g


def test_a_profile_survives_pickling_for_the_sweep_workers():
    back = pickle.loads(pickle.dumps(SOURCEGRAPH))
    assert back == SOURCEGRAPH and back.is_cli_call("src search x")
    assert back.file_of("mcp__sourcegraph__sg_read_file", {"path": "p"}) == "p"
    assert back.fingerprint() == SOURCEGRAPH.fingerprint() != CODEGRAPH.fingerprint()


USER_TOML = """\
name = "acme"
description = "ACME code search"

[tool_under_test]
label = "acme"
tools = ["mcp__acme__*"]
cli = ["acme-cli"]

[file_inputs]
"Read" = "file_path"
"mcp__acme__open" = "file"
"""


def test_a_user_profile_file(tmp_path):
    f = tmp_path / "acme.toml"
    f.write_text(USER_TOML, encoding="utf-8")
    p = load_profile(f)
    assert p.name == "acme" and p.source == "acme.toml" and p.describe() == "acme (from acme.toml)"
    assert p.family("mcp__acme__find") == "acme" and p.family("Grep") == "search"
    assert p.file_of("mcp__acme__open", {"file": "a.c"}) == "a.c"
    assert p.is_cli_call("acme-cli find x") and not p.is_cli_call("codegraph explore")
    assert p.explore.globs == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = 1\n", "name must be a string"),
        ('name = "a"\n[tool_under_test]\ntools = []\n', "at least one tool glob"),
        ('name = "a"\n[tool_under_test]\ntools = ["x"]\nlabel = "read"\n', "label 'read'"),
        ('name = "a"\ntypo = 1\n', "unknown key 'typo'"),
        ('name = "a"\n[tool_under_test]\ntools = ["x", 3]\n', "list of non-empty strings"),
        ("name = [\n", "not a valid TOML"),
    ],
)
def test_bad_profile_files_name_the_file(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=message) as info:
        load_profile(f)
    assert "bad.toml" in str(info.value)


def test_unknown_preset_and_missing_file():
    with pytest.raises(UsageError, match="presets: codegraph, sourcegraph"):
        load_profile("nosuch")
    with pytest.raises(UsageError, match="no such tool profile file"):
        load_profile("dir/nosuch.toml")


SG = "mcp__sourcegraph__sg_keyword_search"
SGR = "mcp__sourcegraph__sg_read_file"


def sourcegraph_session():
    """A hand-built run: two sourcegraph calls, a Read, a Grep, a Bash running the `src` CLI."""
    return lines(
        ASST(1000, "m1", [USE("t1", SG, {"query": "retry loop"})]),
        RES("t1", 900),
        ASST(1300, "m2", [USE("t2", SGR, {"path": "pkg/net/retry.go"})]),
        RES("t2", 1200),
        ASST(1700, "m3", [USE("t3", "Read", {"file_path": "/w/pkg/net/dial.go"})]),
        RES("t3", 600),
        ASST(
            1900,
            "m4",
            [USE("t4", "Grep", {"pattern": "x"}), USE("t5", "Bash", {"command": "src search x"})],
        ),
        RES("t4", 300),
        RES("t5", 90),
        ASST(2000, "m5", [TEXT("See pkg/net/retry.go.")]),
        DONE,
    )


def test_summary_counts_follow_the_profile():
    events = sourcegraph_session()
    s = summarize(events, profile=SOURCEGRAPH)
    assert (s.cg, s.reads, s.grep, s.bash, len(s.calls)) == (2, 1, 1, 1, 5)
    assert [c.family for c in s.calls] == ["sourcegraph", "sourcegraph", "read", "search", "bash"]
    assert s.cli_calls == 1 and s.cli_contaminated == 1
    assert s.tool_calls[0] == f'{SG} "retry loop"'
    header = format_run_header(s, ["claude-code.txt"])
    assert "sourcegraph tools exposed: ?" in header and "1 sourcegraph CLI call RETURNED" in header
    default = summarize(events)
    assert (default.cg, default.cli_calls) == (0, 0) and default.calls[0].family == "other"


def test_occupancy_families_follow_the_profile():
    events = sourcegraph_session()
    o = compute_occupancy(events, profile=SOURCEGRAPH)
    assert o.families[0] == "sourcegraph" and o.tool_family == "sourcegraph"
    assert o.chars == {"sourcegraph": 2100, "read": 600, "search": 300, "bash": 90, "other": 0}
    assert o.results == {"sourcegraph": 2, "read": 1, "search": 1, "bash": 1, "other": 0}
    assert set(o.residual) == set(o.families)
    assert "  sourcegraph " in format_occupancy(o)
    d = compute_occupancy(events)
    assert d.chars["other"] == 2100 and "codegraph" in d.residual and "sourcegraph" not in d.chars


def test_a_user_profile_dict_drives_the_same_metrics():
    p = profile_from_dict({"name": "sg", "tool_under_test": {"tools": ["mcp__sourcegraph__sg_*"]}})
    o = compute_occupancy(sourcegraph_session(), profile=p)
    assert o.chars["sg"] == 2100 and summarize(sourcegraph_session(), profile=p).cg == 2


def test_evalkit_run_with_a_profile(tmp_path, capsys):
    import json

    from evalkit.cli import main
    from tests.builders import write_jsonl

    f = write_jsonl(tmp_path / "claude-code.txt", sourcegraph_session())
    assert main(["run", str(f), "--brief"]) == 0
    plain = capsys.readouterr().out
    assert "Tool profile" not in plain and "codegraph tools exposed" in plain
    assert main(["run", str(f), "--brief", "--profile", "sourcegraph"]) == 0
    out = capsys.readouterr().out
    assert "sourcegraph tools exposed" in out and "Tool profile: sourcegraph (preset)" in out
    assert "Read allocation (evalkit's own metric, not the reference's): 66.7% of 1,800" in out
    assert main(["run", str(f), "--json", "--profile", "sourcegraph"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["read_allocation"]["attributed_chars"] == 1800
    assert doc["occupancy"]["residual"]["sourcegraph"] >= 0
    assert main(["run", str(f), "--profile", "nope"]) == 2
    assert "no tool profile preset 'nope'" in capsys.readouterr().err


def test_a_user_profile_file_drives_counts_occupancy_and_contamination(tmp_path):
    f = tmp_path / "sg.toml"
    f.write_text(
        'name = "my-sg"\n[tool_under_test]\nlabel = "sg"\ntools = ["mcp__sourcegraph__*"]\n'
        'cli = ["src"]\n[counts]\nread = ["Read", "mcp__sourcegraph__sg_read_file"]\n',
        encoding="utf-8",
    )
    p = load_profile(f)
    events = sourcegraph_session()
    s = summarize(events, profile=p)
    # the file's counts make sg_read_file a Read too; it stays the tool under test's call.
    assert (s.cg, s.reads, s.cli_contaminated) == (2, 2, 1)
    o = compute_occupancy(events, profile=p)
    assert o.families == ("sg", "read", "search", "bash", "other")
    assert (o.chars["sg"], o.results["sg"], o.chars["read"]) == (2100, 2, 600)
    assert o.residual["sg"] + o.residual_file_access <= o.final_context
