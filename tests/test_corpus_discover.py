"""Discovery of sessions in a corpus tree (evalkit/sweep/discover.py, spec §7.1–7.5)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from evalkit.corpus.discover import discover, natural_key
from evalkit.errors import UsageError
from tests.sweep_helpers import put


def by_log(d):
    return {s.log: s for s in d.sessions}


def test_ab_arm_layout_labels_pass_repo_arm_run(tmp_path):
    root = tmp_path / "corpus"
    for rel in (
        "cg22/ab-express/run-baseline-1.jsonl",
        "cg22/ab-express/run-new-2.jsonl",
        "cg15/ab-client-go/run-new-10.jsonl",
    ):
        put(root, rel)
    s = by_log(discover(root))
    b = s["cg22/ab-express/run-baseline-1.jsonl"]
    assert (b.pass_, b.repo, b.arm, b.run, b.layout) == (
        "cg22",
        "express",
        "baseline",
        "1",
        "ab-arm",
    )
    assert s["cg15/ab-client-go/run-new-10.jsonl"].repo == "client-go"
    assert s["cg15/ab-client-go/run-new-10.jsonl"].run == "10"
    assert all(not x.multi_turn for x in s.values())


def test_the_swept_directory_name_counts_as_part_of_the_path(tmp_path):
    put(tmp_path / "cg22" / "ab-express", "run-new-1.jsonl")
    (one,) = discover(tmp_path / "cg22").sessions
    assert (one.log, one.pass_, one.repo) == ("ab-express/run-new-1.jsonl", "cg22", "express")
    (two,) = discover(tmp_path / "cg22" / "ab-express").sessions
    assert (two.pass_, two.repo, two.arm) == (None, "express", "new")


def test_tn_segments_attach_to_their_run_in_numeric_order(tmp_path):
    for rel in ("x/run-a.jsonl", "x/run-a.t10.jsonl", "x/run-a.t2.jsonl", "x/run-a.t9.jsonl"):
        put(tmp_path, rel)
    (s,) = discover(tmp_path).sessions
    assert s.segments == (
        "x/run-a.jsonl",
        "x/run-a.t2.jsonl",
        "x/run-a.t9.jsonl",
        "x/run-a.t10.jsonl",
    )
    assert s.multi_turn


def test_indexed_runs_keep_their_own_segments(tmp_path):
    for rel in ("ab-x/run-new-1.jsonl", "ab-x/run-new-1.t2.jsonl", "ab-x/run-new-2.jsonl"):
        put(tmp_path, rel)
    s = by_log(discover(tmp_path))
    assert s["ab-x/run-new-1.jsonl"].segments == ("ab-x/run-new-1.jsonl", "ab-x/run-new-1.t2.jsonl")
    assert s["ab-x/run-new-2.jsonl"].segments == ("ab-x/run-new-2.jsonl",)


def test_campaign_tree_layout(tmp_path):
    root = tmp_path / "ab-readme"
    for rel in (
        "excalidraw/run2/run-headless-with.jsonl",
        "excalidraw/run2/run-headless-with.t2.jsonl",
        "excalidraw/run2/run-headless-with.t3.jsonl",
        "excalidraw/run2/run-headless-without.jsonl",
    ):
        put(root, rel)
    put(root, "excalidraw/run2/console.log", text="log")
    d = discover(root)
    s = by_log(d)
    w = s["excalidraw/run2/run-headless-with.jsonl"]
    assert (w.pass_, w.repo, w.arm, w.run, w.layout) == (
        "ab-readme",
        "excalidraw",
        "headless-with",
        "run2",
        "campaign",
    )
    assert len(w.segments) == 3
    assert s["excalidraw/run2/run-headless-without.jsonl"].arm == "headless-without"
    assert [f.reason for f in d.skipped] == ["campaign console log, not a transcript"]


def test_single_run_file_makes_indexed_runs_of_that_label_ignored(tmp_path):
    # §7.2 rule 1: run-<label>.jsonl means exactly one run; run-<label>-<i> files are ignored.
    for rel in (
        "ab-x/run-new.jsonl",
        "ab-x/run-new-1.jsonl",
        "ab-x/run-new-1.t2.jsonl",
        "ab-x/run-baseline-1.jsonl",
    ):
        put(tmp_path, rel)
    d = discover(tmp_path)
    assert [s.log for s in d.sessions] == ["ab-x/run-baseline-1.jsonl", "ab-x/run-new.jsonl"]
    skipped = {f.path: f.reason for f in d.skipped}
    assert set(skipped) == {"ab-x/run-new-1.jsonl", "ab-x/run-new-1.t2.jsonl"}
    assert all("has exactly one run" in r for r in skipped.values())


def test_zero_padded_run_index_is_a_crash_like_the_reference(tmp_path):
    put(tmp_path, "ab-x/run-new-01.jsonl")
    (s,) = discover(tmp_path).sessions
    assert s.problem is not None and "run-new-1.jsonl" in s.problem


def test_orphan_tn_segment_is_skipped_never_a_session(tmp_path):
    put(tmp_path, "ab-x/run-new-1.t2.jsonl")
    d = discover(tmp_path)
    assert d.sessions == ()
    (f,) = d.skipped
    assert f.path == "ab-x/run-new-1.t2.jsonl" and "never a session" in f.reason


def test_unknown_layout_every_jsonl_is_a_session_labelled_only_where_the_path_says(tmp_path):
    for rel in ("misc/a.jsonl", "misc/b.jsonl.gz", "misc/a.t2.jsonl", "notes/run-foo.jsonl"):
        put(tmp_path, rel)
    s = by_log(discover(tmp_path))
    assert set(s) == {"misc/a.jsonl", "misc/b.jsonl.gz", "notes/run-foo.jsonl"}
    a = s["misc/a.jsonl"]
    assert a.segments == ("misc/a.jsonl", "misc/a.t2.jsonl")
    assert (a.pass_, a.repo, a.arm, a.run, a.layout) == (None, None, None, None, "generic")
    foo = s["notes/run-foo.jsonl"]
    assert (foo.pass_, foo.repo, foo.arm, foo.run) == (None, None, "foo", None)


def test_gzip_segments_and_compressed_duplicates(tmp_path):
    put(tmp_path, "ab-x/run-new-1.jsonl")
    put(tmp_path, "ab-x/run-new-1.jsonl.gz", text="")
    put(tmp_path, "ab-x/run-new-2.jsonl.gz", text="")
    put(tmp_path, "ab-x/run-new-2.t2.jsonl.gz", text="")
    d = discover(tmp_path)
    s = by_log(d)
    assert set(s) == {"ab-x/run-new-1.jsonl", "ab-x/run-new-2.jsonl.gz"}
    assert s["ab-x/run-new-2.jsonl.gz"].segments[1] == "ab-x/run-new-2.t2.jsonl.gz"
    assert [f.path for f in d.skipped] == ["ab-x/run-new-1.jsonl.gz"]
    assert "duplicate" in d.skipped[0].reason


def test_harness_side_files_are_skipped_with_reasons(tmp_path):
    root = tmp_path / "ab-express"
    put(root, "run-new-1.jsonl")
    put(root, "run-new-1.err", text="")
    put(root, "mcp-new.json", text="{}")
    put(root, "explore-new.jsonl", text="{}\n")
    put(root, "t-new/lib/app.js", text="x")
    put(root, "t-new/test/fixture.jsonl", text="{}\n")
    put(root, "README.md", text="x")
    d = discover(root)
    assert [s.log for s in d.sessions] == ["run-new-1.jsonl"]
    reasons = {f.path: f.reason for f in d.skipped}
    assert "stderr" in reasons["run-new-1.err"]
    assert "MCP config" in reasons["mcp-new.json"]
    assert "sidecar" in reasons["explore-new.jsonl"]
    assert "target copy" in reasons["t-new/"] and "2 files" in reasons["t-new/"]
    assert "not a transcript" in reasons["README.md"]


def test_interactive_session_claims_its_subagents(tmp_path):
    put(tmp_path, "proj/abc.jsonl")
    put(tmp_path, "proj/abc/subagents/agent-b.jsonl")
    put(tmp_path, "proj/abc/subagents/agent-a.jsonl")
    put(tmp_path, "proj/abc/subagents/agent-a.meta.json", text='{"toolUseId": "t1"}')
    d = discover(tmp_path)
    (s,) = d.sessions
    assert s.layout == "interactive" and s.log == "proj/abc.jsonl"
    assert s.subagents == ("proj/abc/subagents/agent-a.jsonl", "proj/abc/subagents/agent-b.jsonl")
    assert all(f.session == "proj/abc.jsonl" for f in d.files)


def test_every_file_is_accounted_for_exactly_once(tmp_path):
    rels = [
        "cg22/ab-express/run-new-1.jsonl",
        "cg22/ab-express/run-new-1.t2.jsonl",
        "cg22/ab-express/run-new-3.t2.jsonl",
        "cg22/ab-express/run-new-1.err",
        "ab-readme/gin/run1/run-headless-with.jsonl",
        "x/y/z.jsonl",
        "x/y/z.txt",
        "x/.hidden/q.jsonl",
        "top.jsonl.gz",
        "weird name ü.jsonl",
    ]
    for rel in rels:
        put(tmp_path, rel)
    d = discover(tmp_path)
    paths = [f.path for f in d.files]
    assert len(paths) == len(set(paths))
    on_disk = set()
    for dirpath, _, names in os.walk(tmp_path):
        for n in names:
            on_disk.add((Path(dirpath) / n).relative_to(tmp_path).as_posix())
    covered = set()
    for p in paths:
        if p.endswith("/"):
            covered |= {x for x in on_disk if x.startswith(p)}
        else:
            covered.add(p)
    assert covered == on_disk
    owned = {f.session for f in d.files if f.session}
    assert owned == {s.log for s in d.sessions}


def test_symlinked_directories_are_not_followed(tmp_path):
    put(tmp_path, "real/a.jsonl")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    d = discover(tmp_path)
    assert [s.log for s in d.sessions] == ["real/a.jsonl"]
    assert {f.path: f.reason for f in d.skipped}["link/"].startswith("symbolic link")


def test_missing_or_file_root_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such directory"):
        discover(tmp_path / "nope")
    f = put(tmp_path, "a.jsonl")
    with pytest.raises(UsageError, match="not a directory"):
        discover(f)


def test_order_is_natural_and_deterministic(tmp_path):
    for i in (10, 2, 1):
        put(tmp_path, f"ab-x/run-new-{i}.jsonl")
    assert [s.run for s in discover(tmp_path).sessions] == ["1", "2", "10"]
    assert sorted(["run10", "run2"], key=natural_key) == ["run2", "run10"]


def test_natural_order_survives_digit_like_characters_that_are_not_decimal(tmp_path):
    # `²` is a digit to str.isdigit() but not a decimal int() can read; a directory named
    # `1²` once made the whole sweep exit 2.
    assert sorted(["a1²", "a1", "a١٠", "a2"], key=natural_key) == ["a1", "a1²", "a2", "a١٠"]
    (tmp_path / "1²").mkdir()
    put(tmp_path, "ab-x/run-new-1.jsonl")
    put(tmp_path, "1²/ab-y/run-new-1.jsonl")
    assert [s.log for s in discover(tmp_path).sessions] == [
        "1²/ab-y/run-new-1.jsonl",
        "ab-x/run-new-1.jsonl",
    ]


def test_gzip_content_is_not_needed_for_discovery(tmp_path):
    p = tmp_path / "ab-x" / "run-new-1.jsonl.gz"
    p.parent.mkdir()
    p.write_bytes(gzip.compress(b"{}\n"))
    assert [s.arm for s in discover(tmp_path).sessions] == ["new"]


def test_claude_code_project_log_directory_is_read_as_interactive(tmp_path):
    sid = "7d0c51e2-5b8a-4c1e-9f3d-2a6b4e8c0f17"
    put(tmp_path, f"-private-tmp-repo/{sid}.jsonl")
    put(tmp_path, "-private-tmp-repo/notes.jsonl")
    s = by_log(discover(tmp_path))
    assert s[f"-private-tmp-repo/{sid}.jsonl"].layout == "interactive"
    assert s["-private-tmp-repo/notes.jsonl"].layout == "generic"


def test_subagent_names_that_are_not_utf8_sort_without_crashing(tmp_path):
    import os

    log_dir = tmp_path / "-private-tmp-proj"
    (log_dir / "abc" / "subagents").mkdir(parents=True)
    (log_dir / "abc.jsonl").write_text("{}\n")
    sub = os.fsencode(log_dir / "abc" / "subagents") + b"/agent-\xff.jsonl"
    with open(sub, "wb") as fh:
        fh.write(b"{}\n")
    (log_dir / "abc" / "subagents" / "agent-a.jsonl").write_text("{}\n")
    found = discover(tmp_path)
    assert [s.log for s in found.sessions] == ["-private-tmp-proj/abc.jsonl"]
