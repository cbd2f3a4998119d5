"""DataFrames of sessions, calls and sections (issue 2, Inspect AI style)."""

from __future__ import annotations

import pandas as pd
import pytest

from evalkit.corpus.frames import calls_df, sections_df, sessions_df, tool_calls_df
from evalkit.errors import TranscriptError
from evalkit.session import parse_session
from evalkit.store.columns import IDENTITY
from tests.builders import ASST, RESULT, TEXT, USE, E, lines, write_jsonl
from tests.test_cli_run import seed_example


def no_explore(tmp_path):
    return write_jsonl(
        tmp_path / "quiet.jsonl", lines(ASST(1, "m", [TEXT("nothing to see")]), RESULT("ok"))
    )


def test_sessions_df_one_row_per_session_id_columns_first(tmp_path):
    df = sessions_df([seed_example(tmp_path), no_explore(tmp_path)])
    ids = [c.name for c in IDENTITY]
    assert list(df.columns[: len(ids) + 1]) == [*ids, "segments"]
    assert len(df) == 2
    row = df.iloc[0]
    assert (row.explore_calls, row.sections, row.chars, row.cited_chars) == (2, 6, 21319, 17465)
    assert row.efficiency == pytest.approx(17465 / 21319)
    assert pd.isna(df.iloc[1].efficiency) and df.iloc[1].explore_calls == 0


def test_calls_and_sections(tmp_path):
    s = parse_session(seed_example(tmp_path))
    calls = calls_df(s)
    assert list(calls["call"]) == [1, 2]
    assert list(calls["chars"]) == [12048, 9271]
    sections = sections_df([s])
    assert len(sections) == 6
    ids = [c.name for c in IDENTITY]
    assert list(sections.columns[: len(ids) + 2]) == [*ids, "call", "section"]
    app = sections[sections.path == "lib/application.js"].iloc[0]
    assert (app.cited_via, app.cited_symbol) == ("symbol", "compileETag")
    assert sections.groupby("call")["chars"].sum().tolist() == calls["chars"].tolist()


def test_multi_segment_session_is_one_row(tmp_path):
    a = write_jsonl(tmp_path / "run.jsonl", lines(ASST(1, "m", [USE("e", E)]), RESULT("a")))
    b = write_jsonl(tmp_path / "run.t2.jsonl", RESULT("b"))
    df = sessions_df([[a, b]])
    assert (len(df), df.iloc[0].segments, df.iloc[0].slice) == (1, 2, "multi-turn")


def test_strict_raises_and_non_strict_collects(tmp_path):
    good = seed_example(tmp_path)
    with pytest.raises(TranscriptError):
        calls_df([good, tmp_path / "nope.jsonl"])
    df, errors = calls_df([good, tmp_path / "nope.jsonl"], strict=False)
    assert len(df) == 2 and len(errors) == 1 and "no such file" in str(errors[0])


# --- issue 3: sufficiency, occupancy and summary columns; tool_calls_df ------------------------


def sufficiency_run(tmp_path):
    from tests.test_sufficiency import S1

    return write_jsonl(tmp_path / "s1.jsonl", S1)


def test_calls_df_carries_the_sufficiency_verdict(tmp_path):
    calls = calls_df(sufficiency_run(tmp_path))
    ids = [c.name for c in IDENTITY]
    assert list(calls.columns[: len(ids) + 3]) == [*ids, "call", "tool_use_id", "thread"]
    assert list(calls["tool_use_id"]) == ["e1", "e2"]
    assert list(calls["sufficiency_bucket"]) == ["explore_again", "read_returned"]
    assert list(calls["next_action"]) == ["codegraph_explore", "Read response.js"]
    assert list(calls["thread"]) == ["main", "main"]


def test_calls_df_links_by_tool_use_id_not_position(tmp_path):
    # The subagent's explore is answered first in the stream but recorded after main's
    # (sufficiency groups by thread, §5.3); allocation calls are in stream order.
    from tests.test_sufficiency import S10

    calls = calls_df(write_jsonl(tmp_path / "s10.jsonl", S10))
    assert list(calls["tool_use_id"]) == ["e1", "e2"]
    assert list(calls["thread"]) == ["a1", "main"]
    assert list(calls["sufficiency_bucket"]) == ["read_returned", "sufficient"]


def test_sessions_df_has_occupancy_sufficiency_and_summary_columns(tmp_path):
    from tests.test_occupancy import F4

    df = sessions_df([write_jsonl(tmp_path / "f4.jsonl", F4), sufficiency_run(tmp_path)])
    f4, s1 = df.iloc[0], df.iloc[1]
    assert (f4.final_context, f4.base_context, f4.chars_per_token) == (14500, 10000, 2.5)
    assert (f4.residual_codegraph, f4.residual_read, f4.residual_file_access) == (500, 4000, 4000)
    assert (f4.contributed_codegraph, f4.evicted, f4.compactions, f4.assistant_messages) == (
        4000,
        3500,
        0,
        3,
    )
    assert bool(f4.calibrated) and f4.dispersion == 0
    assert (f4.tool_calls, f4.codegraph_calls, f4.read_calls, bool(f4.success)) == (2, 1, 1, True)
    assert (f4.cost_usd, f4.duration_s) == (0.1, 1)
    assert (f4.tokens_processed, f4.tokens_processed_per_message) == (0, 10002 + 14002 + 14502)
    assert (s1.answered_calls, s1.next_explore_again, s1.next_read_returned) == (2, 1, 1)
    assert (s1.errored_calls, s1.concurrent_accesses, s1.next_sufficient) == (0, 0, 0)
    assert not bool(s1.raced) and s1.cli_calls == 0


def test_tool_calls_df_one_row_per_tool_use(tmp_path):
    from tests.builders import RES, SUB

    events = lines(
        ASST(1, "m1", [USE("e1", E, {"query": "where"}), USE("b1", "Bash", {"command": "ls"})]),
        RES("e1", 30),
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "b1", "is_error": True, "content": "é"}
                ]
            },
        },
        SUB("e1", ASST(2, "s1", [USE("r1", "Read", {"file_path": "/t/a/b.js"})])),
        ASST(3, "m2", [USE("x1", "Edit")]),
        RESULT("done"),
    )
    df = tool_calls_df(write_jsonl(tmp_path / "t.jsonl", events))
    ids = [c.name for c in IDENTITY]
    assert list(df.columns[: len(ids) + 2]) == [*ids, "call", "tool_use_id"]
    assert list(df["call"]) == [1, 2, 3, 4]
    assert list(df["name"]) == [E, "Bash", "Read", "Edit"]
    assert list(df["family"]) == ["codegraph", "bash", "read", "other"]
    assert list(df["thread"]) == ["main", "main", "e1", "main"]
    assert list(df["message_id"]) == ["m1", "m1", "s1", "m2"]
    assert list(df["detail"]) == ['"where"', "ls", "b.js", ""]
    assert list(df["results"]) == [1, 1, 0, 0]
    assert df["result_chars"].tolist()[:2] == [30, 1]
    assert df["is_error"].tolist()[:2] == [False, True]
    assert df["result_chars"].isna().tolist() == [False, False, True, True]
