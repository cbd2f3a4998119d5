"""`evalkit.load_corpus`: one entry point for a corpus directory (issue 12).

The bundled corpus loads with the sweep's session count and numbers; a Claude Code projects
directory (interactive sessions with subagents and a compaction) loads through every entry
point; files that are not transcripts are skipped with a reason; the frames follow the column
dictionary; the export reads back in DuckDB.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

import evalkit
from evalkit.corpus.frames import FRAME_NAMES, sessions_df
from evalkit.corpus.load import CorpusError
from evalkit.errors import UsageError
from evalkit.outputs.sweep_text import render_json
from evalkit.paths import bundled_corpus
from evalkit.session import InteractiveSession
from evalkit.store.columns import FRAMES, IDENTITY
from evalkit.sweep import run_sweep
from tests.sweep_helpers import cited, put
from tests.test_interactive import MAIN, SUB_A1, SUB_B, write_records

ID_NAMES = [c.name for c in IDENTITY]
SESSION_ID = "0b0e4c1c-1111-4a2b-9c3d-123456789abc"


@pytest.fixture(scope="module")
def bundled():
    return evalkit.load_corpus(bundled_corpus(), cache=False)


@pytest.fixture(scope="module")
def swept():
    return run_sweep(bundled_corpus(), cache=False)


def test_every_frame_has_the_identity_columns_and_group_is_never_missing(bundled, swept):
    frames = {name: bundled.frame(name) for name in FRAME_NAMES}
    frames |= {"sweep_sessions": swept.sessions_frame(), "sweep_calls": swept.calls_frame()}
    assert set(frames) == set(FRAMES)
    for name, df in frames.items():
        assert list(df.columns[: len(ID_NAMES)]) == ID_NAMES, name
        assert len(df) > 0, name
        assert not df["group"].isna().any(), name
        assert not df["log"].isna().any() and not df["kind"].isna().any(), name


def test_session_count_and_figures_equal_the_sweeps(bundled, swept):
    sessions = bundled.sessions_df()
    assert len(sessions) == len(swept.records)  # every discovered session once (134)
    assert sessions["log"].is_unique
    in_sweep = sessions[sessions["explore_calls"] > 0]
    assert len(in_sweep) == swept.counts.sessions
    assert int(in_sweep["explore_calls"].sum()) == swept.counts.calls
    assert int(in_sweep["sections"].sum()) == swept.counts.sections
    by_log = {r.log: r for r in swept.sessions}
    for row in in_sweep.itertuples():
        r = by_log[row.log]
        assert (row.chars, row.cited_chars, row.efficiency) == (
            r.chars,
            r.cited_chars,
            r.efficiency,
        )
    assert len(bundled.calls_df()) == swept.counts.calls
    # The sweep of the loaded corpus is the sweep: same tables, same text.
    from evalkit.outputs.sweep_text import render_json

    assert render_json(bundled.sweep()) == render_json(swept)


def test_groupby_keeps_sessions_without_pass_or_repo(bundled, swept):
    sessions = bundled.sessions_df()
    lowest = sessions.loc[sessions["efficiency"].idxmin()]
    assert pd.isna(lowest["pass"])  # the cg8-val session: no pass/repo in its path
    grouped = sessions.groupby(["group", "arm"], dropna=False).size().sum()
    assert grouped == len(sessions)
    assert sessions.groupby("group").size().sum() == len(sessions)
    sweep_sessions = swept.sessions_frame()
    assert sweep_sessions.groupby(["group", "arm"]).size().sum() < len(sweep_sessions)  # no arm
    assert sweep_sessions.groupby("group").size().sum() == len(sweep_sessions)


def test_logs_are_corpus_relative_and_the_same_in_every_frame_and_the_sweep(bundled, swept):
    logs = set(bundled.sessions_df()["log"])
    assert logs == {r.log for r in swept.records}
    assert all(not os.path.isabs(log) and "\\" not in log for log in logs)
    for name in ("calls", "sections", "files", "tool_calls"):
        assert set(bundled.frame(name)["log"]) <= logs
    from evalkit.outputs.sweep_text import render_json

    doc = json.loads(render_json(swept))
    assert {r["log"] for r in doc["session_rows"]} <= logs
    skipped_sessions = {r["log"] for r in doc["skipped"]} & logs
    assert {r["log"] for r in doc["session_rows"]} | skipped_sessions == logs


def test_session_is_a_lookup_and_interactive_sessions_are_accepted(bundled):
    interactive = bundled.sessions_df().query("kind == 'interactive'")
    assert len(interactive) > 0
    log = interactive["log"].iloc[0]
    s = bundled.session(log)
    assert isinstance(s, InteractiveSession) and s.log == log
    df = sessions_df([s])
    assert df["kind"].tolist() == ["interactive"]
    # Interactive logs carry no result event: duration and cost are unknown, not 0; the run
    # status comes from the last turn (issue 23).
    assert df[["duration_s", "recorded_cost_usd"]].isna().all(axis=None)
    # no result event, so no recorded cost: the cost is the priced ledger (issue 27)
    assert df["cost_source"].tolist() == ["priced"] and df["cost_usd"].iloc[0] > 0
    assert (df["status"].tolist(), df["success"].tolist()) == (["ok"], [True])
    with pytest.raises(KeyError):
        bundled.session("no/such.jsonl")


# --- a Claude Code projects directory -----------------------------------------------------


def projects_dir(tmp_path):
    """projects/-work-my-app/<uuid>.jsonl with subagents (one with its meta), a compaction, an
    older session, and a note that is not a session."""
    projects = tmp_path / "projects"
    log_dir = projects / "-work-my-app"
    subs = log_dir / SESSION_ID / "subagents"
    subs.mkdir(parents=True)
    compact = {"type": "system", "subtype": "compact_boundary", "content": "compacted"}
    write_records(log_dir / f"{SESSION_ID}.jsonl", [*MAIN[:8], compact, *MAIN[8:]])
    write_records(subs / "agent-a1.jsonl", SUB_A1)
    (subs / "agent-a1.meta.json").write_text(json.dumps({"toolUseId": "a1"}))
    write_records(subs / "agent-b.jsonl", SUB_B)
    older = write_records(log_dir / "1a1a1a1a-2222-4b3b-8c4c-abcdefabcdef.jsonl", MAIN[:10])
    os.utime(older, ns=(1_000_000_000 * 10**9, 1_000_000_000 * 10**9))
    (log_dir / "notes.md").write_text("# my notes\n")
    return projects, log_dir


def test_a_projects_directory_loads_with_interactive_sessions(tmp_path, capsys):
    projects, log_dir = projects_dir(tmp_path)
    corpus = evalkit.load_corpus(projects, cache=False, jobs=1)
    sessions = corpus.sessions_df()
    assert sorted(sessions["kind"]) == ["interactive", "interactive"]
    main = sessions.set_index("log").loc[f"-work-my-app/{SESSION_ID}.jsonl"]
    assert main["group"] == "-work-my-app"
    assert main["explore_calls"] == 2  # one in the main thread, one in a subagent
    # No result event: no duration; the main file's occupancy as `evalkit run` gives it.
    assert pd.isna(main["duration_s"]) and main["final_context"] > 0 and main["compactions"] == 1
    calls = corpus.calls_df()
    assert set(calls["thread"].dropna()) >= {"main"}
    assert (calls["question"] == 1).all()
    acc = {a.path: a for a in corpus.accounting()}
    assert acc["-work-my-app/notes.md"].status == "skipped"
    assert acc[f"-work-my-app/{SESSION_ID}/subagents/agent-a1.jsonl"].session == main.name
    # sessions_df(DIR) is the same frame; and the sweep counts the same sessions.
    pd.testing.assert_frame_equal(sessions_df(projects), sessions)
    assert len(corpus.sweep().records) == len(sessions)
    # `evalkit session` reads the newest of them the same way.
    from evalkit.cli import main

    assert main(["session", "--log-dir", str(log_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"session: {SESSION_ID}\n")
    assert "SUBAGENT tools (2 subagent transcripts)" in out
    assert "(2 answered calls)" in out


def test_evalkit_session_finds_a_log_dir_escaped_as_claude_code_does(tmp_path):
    project = tmp_path / "src" / "my_app.v2"
    project.mkdir(parents=True)
    projects = tmp_path / "projects"
    escaped = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(project.resolve()))
    log_dir = projects / escaped
    log_dir.mkdir(parents=True)
    write_records(log_dir / f"{SESSION_ID}.jsonl", MAIN)
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "session", str(project), "--projects-dir", str(projects)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"session: {SESSION_ID}\n")


# --- not a transcript -------------------------------------------------------------------------


def non_transcripts(root):
    put(root, "README.md", text="# notes\n\nnot a transcript\n")
    (root / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary\n")
    put(root, "evidence.json", text='{"schema_version": 1}\n')
    put(root, "app.jsonl", text='{"level": "info", "msg": "started"}\n{"level": "warn"}\n')
    put(root, "run-new.jsonl", text='{"ts": 1, "event": "request"}\n')
    put(root, "empty.jsonl", text="")


def test_a_sweep_of_non_transcripts_lists_each_as_skipped(tmp_path):
    non_transcripts(tmp_path)
    corpus = evalkit.load_corpus(tmp_path, cache=False, jobs=1)
    acc = {a.path: a for a in corpus.accounting()}
    for name in ("app.jsonl", "run-new.jsonl"):
        assert (acc[name].status, acc[name].reason) == ("skipped", "not a Claude Code transcript")
    # A zero-byte file is refused too (issue 23): no session of zeros.
    assert (acc["empty.jsonl"].status, acc["empty.jsonl"].reason) == (
        "skipped",
        "an empty file (0 bytes): nothing to measure",
    )
    assert list(corpus.sessions_df()["log"]) == []
    assert corpus.errors == ()
    result = run_sweep(tmp_path, cache=False, jobs=1)
    assert result.arm_rows == ()  # a non-transcript is not a run of arm "new"


def test_strict_raises_on_an_unreadable_session(tmp_path):
    cited(tmp_path, "ok.jsonl", 10, 10)
    put(tmp_path, "bad.jsonl", text="null\n")
    corpus = evalkit.load_corpus(tmp_path, cache=False, jobs=1)
    assert [e.log for e in corpus.errors] == ["bad.jsonl"]
    assert list(corpus.sessions_df()["log"]) == ["ok.jsonl"]
    with pytest.raises(CorpusError, match="bad.jsonl"):
        evalkit.load_corpus(tmp_path, cache=False, jobs=1, strict=True)
    df, errors = sessions_df(tmp_path, strict=False)
    assert len(df) == 1 and [e.log for e in errors] == ["bad.jsonl"]


def test_bad_arguments_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="layout"):
        evalkit.load_corpus(tmp_path, layout="nope")
    with pytest.raises(UsageError, match="no such directory"):
        evalkit.load_corpus(tmp_path / "missing")


def test_layout_keeps_one_rule_and_skips_the_rest(tmp_path):
    cited(tmp_path, "cg22/ab-express/run-new-1.jsonl", 10, 10)
    cited(tmp_path, "misc/other.jsonl", 10, 10)
    corpus = evalkit.load_corpus(tmp_path, layout="ab-arm", cache=False, jobs=1)
    assert list(corpus.sessions_df()["log"]) == ["cg22/ab-express/run-new-1.jsonl"]
    assert {a.path: a.status for a in corpus.accounting()}["misc/other.jsonl"] == "skipped"


def test_the_cache_gives_the_same_frames(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for i in (1, 2, 3, 4, 5):
        cited(tmp_path / "c", f"cg22/ab-express/run-new-{i}.jsonl", 10 * i, 7)
    fresh = evalkit.load_corpus(tmp_path / "c", cache=False, jobs=1)
    first = evalkit.load_corpus(tmp_path / "c", cache=True, jobs=2)
    warm = evalkit.load_corpus(tmp_path / "c", cache=True, jobs=2)
    assert (first.cache_misses, warm.cache_hits, warm.cache_misses) == (5, 5, 0)
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(warm.frame(name), fresh.frame(name))
        pd.testing.assert_frame_equal(first.frame(name), fresh.frame(name))
    # One store serves both: a sweep after a load parses nothing, and gives the same output.
    after = run_sweep(tmp_path / "c", jobs=1)
    assert (after.cache_hits, after.cache_misses) == (5, 0)
    assert render_json(after) == render_json(run_sweep(tmp_path / "c", cache=False, jobs=1))


# --- export -----------------------------------------------------------------------------------


def test_export_parquet_reads_back_in_duckdb_with_the_same_row_counts(bundled, tmp_path):
    import duckdb

    out = tmp_path / "out"
    written = bundled.to_parquet(out)
    assert sorted(p.name for p in written) == sorted(
        [f"{n}.parquet" for n in FRAME_NAMES] + ["columns.json"]
    )
    con = duckdb.connect()
    for name in FRAME_NAMES:
        n = con.execute(f"SELECT count(*) FROM '{out / name}.parquet'").fetchone()[0]
        assert n == len(bundled.frame(name)), name
    median = con.execute(
        f"SELECT median(efficiency) FROM '{out}/sessions.parquet' WHERE explore_calls > 0"
    ).fetchone()[0]
    assert median == pytest.approx(bundled.sweep().slices[0].median)
    doc = json.loads((out / "columns.json").read_text())
    assert list(doc["frames"]) == list(FRAME_NAMES)
    assert [c["name"] for c in doc["frames"]["sessions"]] == [c.name for c in FRAMES["sessions"]]


def test_export_never_replaces_a_file_it_did_not_write(tmp_path):
    cited(tmp_path / "c", "x.jsonl", 10, 10)
    corpus = evalkit.load_corpus(tmp_path / "c", cache=False, jobs=1)
    out = tmp_path / "out"
    out.mkdir()
    (out / "sessions.csv").write_text("mine\n")
    with pytest.raises(UsageError, match="not written by evalkit"):
        corpus.to_csv(out)
    assert (out / "sessions.csv").read_text() == "mine\n"
    fresh = tmp_path / "fresh"
    corpus.to_csv(fresh)
    corpus.to_csv(fresh)  # a previous export may be refreshed
    assert pd.read_csv(fresh / "sessions.csv")["log"].tolist() == ["x.jsonl"]


def test_evalkit_export_and_columns_commands(tmp_path, capsys):
    from evalkit.cli import main

    shutil.copytree(bundled_corpus() / "cg22", tmp_path / "c" / "cg22")
    assert main(["export", str(tmp_path / "c"), "--to", str(tmp_path / "o"), "--no-cache"]) == 0
    from evalkit.corpus.frames import FRAME_NAMES

    # every exported frame plus columns.json
    assert f"wrote {len(FRAME_NAMES) + 1} files" in capsys.readouterr().out
    assert main(["columns", "calls"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"calls ({len(FRAMES['calls'])} columns)\n")
    for c in FRAMES["calls"]:
        assert f"  {c.name} " in text
    assert main(["columns", "nope"]) == 2
    assert "no frame 'nope'" in capsys.readouterr().err


def test_evalkit_export_reads_a_layout_of_your_own(tmp_path, capsys):
    from evalkit.cli import main

    root = tmp_path / "c"
    for arm, task, trial in [("baseline", "auth", "t1"), ("candidate", "auth", "t1")]:
        cited(root, f"{arm}/{task}/{trial}/transcript.jsonl", 800, 200)
    argv = ["export", str(root), "--to", str(tmp_path / "o"), "--format", "csv", "--no-cache"]
    assert main([*argv, "--layout", "{arm}/{task}/{trial}/*.jsonl", "-j", "1"]) == 0
    capsys.readouterr()
    sessions = pd.read_csv(tmp_path / "o" / "sessions.csv")
    assert sessions[["arm", "task", "trial"]].values.tolist() == [
        ["baseline", "auth", "t1"],
        ["candidate", "auth", "t1"],
    ]
    assert main([*argv, "--profile", "nope"]) == 2
    assert "no tool profile preset 'nope'" in capsys.readouterr().err


def test_notebook_04_runs_on_an_interactive_session(tmp_path, monkeypatch):
    import papermill

    projects, _ = projects_dir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(bundled_corpus().parents[1]))
    monkeypatch.setenv("EVALKIT_FIGURES", str(tmp_path / "figures"))
    out = tmp_path / "04.ipynb"
    papermill.execute_notebook(
        str(bundled_corpus().parents[1] / "notebooks" / "04_one_run.ipynb"),
        str(out),
        parameters={"corpus": str(projects), "session": f"-work-my-app/{SESSION_ID}.jsonl"},
        progress_bar=False,
        kernel_name="python3",
    )
    text = out.read_text()
    assert f"session: -work-my-app/{SESSION_ID}.jsonl (1 segment)" in text
    assert "SUBAGENT tools (2 subagent transcripts)" in text


def test_repr_is_short_and_names_no_absolute_path(bundled, swept):
    text = repr(bundled)
    assert text.startswith(f"<Corpus corpus/: {len(swept.records)} sessions, 0 unreadable, ")
    assert str(bundled_corpus().parent) not in text
