"""`evalkit sweep` on the command line (evalkit/commands/sweep.py)."""

from __future__ import annotations

import json

import pytest

import evalkit.tables.sweep as sweep_pkg
from evalkit.cli import main
from evalkit.outputs import caveats
from tests.sweep_helpers import cited, put


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 800, 200)
    cited(root, "cg22/ab-express/run-new-1.jsonl", 900, 100)
    put(root, "bad.jsonl", text="null\n")
    return root


def test_help_teaches(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for needle in (
        "run-{baseline,new}-<i>.jsonl",
        "examples:",
        "exit status",
        "--markdown",
        "--json",
        "--no-cache",
        "--cache-dir",
        "crash",
        "synthetic",
    ):
        assert needle in out


def test_text_run_exits_0_with_crash_reported(corpus, capsys):
    assert main(["sweep", str(corpus), "--no-cache", "-j", "1"]) == 0
    out = capsys.readouterr().out
    assert (
        "2 sessions with at least one answered explore (2 single-question, 0 multi-turn), "
        "2 explore calls, 4 file sections, 1 crashes" in out
    )
    assert "  crash: bad.jsonl:1: line is JSON null" in out


def test_json_and_markdown(corpus, tmp_path, capsys):
    md = tmp_path / "out.md"
    assert (
        main(
            [
                "sweep",
                str(corpus),
                "--json",
                "--markdown",
                str(md),
                "--cache-dir",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["sessions"] == 2 and doc["crashes"] == 1
    assert [a["arm"] for a in doc["arms"]] == ["baseline", "new"]
    assert md.read_text().startswith("# Explore allocation sweep")


def test_arms_option_selects_columns(corpus, capsys):
    assert main(["sweep", str(corpus), "--json", "--no-cache", "--arms", "new"]) == 0
    assert [a["arm"] for a in json.loads(capsys.readouterr().out)["arms"]] == ["new"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--tail", "-1"], "--tail must be 0 or more"),
        (["--arms", ","], "--arms needs at least one arm label"),
    ],
)
def test_bad_options_exit_2(corpus, capsys, argv, message):
    assert main(["sweep", str(corpus), *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("trial", [False, True])
def test_a_cache_dir_that_is_a_file_exits_2(corpus, tmp_path, capsys, trial):
    not_a_dir = tmp_path / "cache.txt"
    not_a_dir.write_text("mine\n")
    argv = ["sweep", str(corpus), "--cache-dir", str(not_a_dir), "-j", "1"]
    assert main([*argv, *(["--profile", "codegraph"] if trial else [])]) == 2
    err = capsys.readouterr().err
    assert err == f"evalkit sweep: --cache-dir {not_a_dir}: not a directory\n"
    assert not_a_dir.read_text() == "mine\n"


def test_missing_directory_exits_2_with_one_line(tmp_path, capsys):
    assert main(["sweep", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such directory" in err


def test_default_is_the_bundled_corpus_with_its_label(corpus, monkeypatch, capsys):
    monkeypatch.setattr(sweep_pkg, "bundled_corpus_dir", lambda: corpus)
    assert main(["sweep", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "the bundled corpus (data/corpus)" in out and caveats.SYNTHETIC_CORPUS in out
    assert str(corpus) not in out  # no absolute paths
    assert main(["sweep", "--no-cache", "--json"]) == 0
    captured = capsys.readouterr()
    assert caveats.SYNTHETIC_CORPUS in captured.err
    assert json.loads(captured.out)["sessions"] == 2


def test_absent_bundled_corpus_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sweep_pkg, "bundled_corpus_dir", lambda: tmp_path / "data" / "corpus")
    assert main(["sweep"]) == 2
    assert "bundled corpus is missing" in capsys.readouterr().err


# --- issue 12: not a transcript, no tool calls, every --arms label checked ---------------------


def test_a_folder_of_non_transcripts_lists_each_as_not_a_claude_code_transcript(tmp_path, capsys):
    put(tmp_path, "app.jsonl", text='{"level": "info", "msg": "up"}\n')
    put(tmp_path, "logs/run-new-1.jsonl", text='{"ts": 1}\n')
    put(tmp_path, "evidence.json", text='{"schema_version": 1}\n')
    assert main(["sweep", str(tmp_path), "--no-cache", "-j", "1"]) == 0
    out = capsys.readouterr().out
    assert (
        "  skipped: not a Claude Code transcript\n    app.jsonl\n    logs/run-new-1.jsonl\n" in out
    )
    assert "(no Claude Code transcripts found" in out
    assert "no-explore (0 sessions)" in out


def test_sessions_without_any_tool_call_say_so_at_the_top(tmp_path, capsys):
    put(tmp_path, "chat.jsonl")  # an answer, no tool call
    put(tmp_path, "chat2.jsonl")
    assert main(["sweep", str(tmp_path), "--no-cache", "-j", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[1]
        == "note: none of the 2 sessions holds a tool call, so there is no explore call to measure"
    )


def test_no_note_when_a_session_has_a_tool_call(corpus, capsys):
    assert main(["sweep", str(corpus), "--no-cache", "-j", "1"]) == 0
    assert "holds a tool call" not in capsys.readouterr().out


@pytest.mark.parametrize("arms", ["baseline,neww", "neww", "new,baseline,x"])
def test_an_arms_label_no_session_has_exits_2_listing_the_arms(corpus, capsys, arms):
    assert main(["sweep", str(corpus), "--no-cache", "-j", "1", "--arms", arms]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("evalkit sweep: --arms: no session is in arm ")
    assert err[0].endswith("; arms found: baseline, new")
