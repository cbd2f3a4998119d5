"""DataFrames of sessions, calls and sections (issue 2, Inspect AI style)."""

from __future__ import annotations

import math

import pytest

from evalkit.errors import TranscriptError
from evalkit.frames import calls_df, sections_df, sessions_df
from evalkit.session import parse_session
from tests.builders import ASST, RESULT, TEXT, USE, E, lines, write_jsonl
from tests.test_cli_run import seed_example


def no_explore(tmp_path):
    return write_jsonl(
        tmp_path / "quiet.jsonl", lines(ASST(1, "m", [TEXT("nothing to see")]), RESULT("ok"))
    )


def test_sessions_df_one_row_per_session_id_columns_first(tmp_path):
    df = sessions_df([seed_example(tmp_path), no_explore(tmp_path)])
    assert list(df.columns[:2]) == ["log", "segments"]
    assert len(df) == 2
    row = df.iloc[0]
    assert (row.explore_calls, row.sections, row.chars, row.cited_chars) == (2, 6, 21319, 17465)
    assert row.efficiency == pytest.approx(17465 / 21319)
    assert math.isnan(df.iloc[1].efficiency) and df.iloc[1].explore_calls == 0


def test_calls_and_sections(tmp_path):
    s = parse_session(seed_example(tmp_path))
    calls = calls_df(s)
    assert list(calls["call"]) == [1, 2]
    assert list(calls["chars"]) == [12048, 9271]
    sections = sections_df([s])
    assert len(sections) == 6
    assert list(sections.columns[:3]) == ["log", "call", "section"]
    app = sections[sections.path == "lib/application.js"].iloc[0]
    assert (app.via, app.symbol) == ("symbol", "compileETag")
    assert sections.groupby("call")["chars"].sum().tolist() == calls["chars"].tolist()


def test_multi_segment_session_is_one_row(tmp_path):
    a = write_jsonl(tmp_path / "run.jsonl", lines(ASST(1, "m", [USE("e", E)]), RESULT("a")))
    b = write_jsonl(tmp_path / "run.t2.jsonl", RESULT("b"))
    df = sessions_df([[a, b]])
    assert (len(df), df.iloc[0].segments, bool(df.iloc[0].multi_turn)) == (1, 2, True)


def test_strict_raises_and_non_strict_collects(tmp_path):
    good = seed_example(tmp_path)
    with pytest.raises(TranscriptError):
        calls_df([good, tmp_path / "nope.jsonl"])
    df, errors = calls_df([good, tmp_path / "nope.jsonl"], strict=False)
    assert len(df) == 2 and len(errors) == 1 and "no such file" in str(errors[0])
