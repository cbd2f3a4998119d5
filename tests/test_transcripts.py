"""Reading transcripts (spec §1.1–1.6, §9.1, §10.2, §10.8): tolerant and accountable."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from evalkit.corpus.frames import sessions_df
from evalkit.errors import TranscriptError
from evalkit.formats.claude_code.transcripts import (
    explore_texts,
    family,
    read_segment,
    read_transcript,
    result_text,
    tool_results,
)
from tests.builders import ASST, DONE, RES, TEXT, USE, XRES, E, lines, write_jsonl

GOOD = lines(
    ASST(10, "m1", [USE("e1", E, {"query": "q"})]),
    XRES("e1", ["lib/a.js"]),
    ASST(20, "m2", [TEXT("see `lib/a.js`")]),
    DONE,
)


def write_bytes(path, data: bytes):
    path.write_bytes(data)
    return path


def test_segments_are_concatenated_in_order(tmp_path):
    a = write_jsonl(tmp_path / "run.jsonl", GOOD[:2])
    b = write_jsonl(tmp_path / "run.t2.jsonl", GOOD[2:])
    t = read_transcript([a, b])
    assert t.events == GOOD
    assert t.segment_starts == (0, 2)
    assert [s.events for s in t.segments] == [2, 2]


def test_truncated_last_line_is_skipped_and_counted(tmp_path):
    text = "\n".join(json.dumps(e) for e in GOOD)
    p = write_bytes(tmp_path / "run.jsonl", text[:-10].encode())
    events, account = read_segment(str(p))
    assert events == GOOD[:-1]
    assert (account.malformed, account.blank, account.lines) == (1, 0, 4)


def test_invalid_utf8_line_is_decoded_with_replacement_and_counted(tmp_path):
    bad = (
        json.dumps({"type": "result", "result": "caf\u00e9"}, ensure_ascii=False)
        .encode()
        .replace(b"\xc3\xa9", b"\xe9")
    )
    p = write_bytes(tmp_path / "run.jsonl", b"\n".join([json.dumps(GOOD[0]).encode(), bad]) + b"\n")
    events, account = read_segment(str(p))
    assert account.invalid_utf8 == 1
    assert events[1]["result"] == "caf\ufffd"


def test_blank_malformed_nonobject_nan_and_bom_lines(tmp_path):
    data = (
        b"\xef\xbb\xbf"
        + json.dumps(GOOD[0]).encode()
        + b"\n\n  \n"
        + b'{"type":"result","result":NaN}\n'
        + b"[1,2]\n42\n"
        + b'{"type":"x"}\r\n'
    )
    events, account = read_segment(str(write_bytes(tmp_path / "r.jsonl", data)))
    assert events == [{"type": "x"}]  # the BOM line is lost, as in the reference; \r is whitespace
    assert account.blank == 2  # two empty pieces ("" between \n\n and the final "")
    assert account.malformed == 3  # BOM line, "  " is not JSON, NaN
    assert account.non_object == 2


def test_line_separators_inside_strings_do_not_split_lines(tmp_path):
    event = {"type": "result", "result": "a\u2028b\u0085c\rd"}
    p = write_bytes(tmp_path / "r.jsonl", json.dumps(event, ensure_ascii=False).encode() + b"\n")
    assert read_segment(str(p))[0] == [event]


def test_large_integers_become_doubles(tmp_path):
    p = write_bytes(tmp_path / "r.jsonl", b'{"n":12345678901234567890,"m":7}\n')
    event = read_segment(str(p))[0][0]
    assert isinstance(event["n"], float) and event["m"] == 7


def test_fifty_megabyte_single_line(tmp_path):
    big = {"type": "result", "result": "y" * (50 * 1024 * 1024)}
    p = write_jsonl(tmp_path / "big.jsonl", [big])
    events, account = read_segment(str(p))
    assert len(events[0]["result"]) == 50 * 1024 * 1024 and account.events == 1
    truncated = write_bytes(tmp_path / "cut.jsonl", p.read_bytes()[: 30 * 1024 * 1024])
    assert read_segment(str(truncated))[1].malformed == 1


def test_empty_file_is_a_session_with_no_events(tmp_path):
    t = read_transcript(write_bytes(tmp_path / "empty.jsonl", b""))
    assert t.events == [] and t.segments[0].blank == 1


def test_gzip_is_read_transparently_and_a_cut_gzip_keeps_what_it_had(tmp_path):
    raw = ("\n".join(json.dumps(e) for e in GOOD) + "\n").encode()
    p = write_bytes(tmp_path / "run.jsonl.gz", gzip.compress(raw, mtime=0))
    events, account = read_segment(str(p))
    assert events == GOOD and account.gzip and not account.truncated_gzip
    cut = write_bytes(tmp_path / "cut.jsonl.gz", p.read_bytes()[:-12])
    events, account = read_segment(str(cut))
    assert account.truncated_gzip and events == GOOD[: len(events)] and events


def test_directory_missing_file_and_symlink_loop_are_clear_errors(tmp_path):
    with pytest.raises(TranscriptError, match="is a directory"):
        read_transcript(tmp_path)
    with pytest.raises(TranscriptError, match="no such file") as info:
        read_transcript(tmp_path / "missing.jsonl")
    assert str(info.value) == f"{tmp_path / 'missing.jsonl'}: no such file"
    loop = tmp_path / "loop.jsonl"
    os.symlink(loop, loop)
    with pytest.raises(TranscriptError, match="symbolic link loop"):
        read_transcript(loop)
    os.mkfifo(tmp_path / "fifo.jsonl")
    with pytest.raises(TranscriptError, match="not a regular file"):
        read_transcript(tmp_path / "fifo.jsonl")


def test_null_line_raises_with_file_and_line(tmp_path):
    p = write_bytes(tmp_path / "n.jsonl", b'{"type":"x"}\n null \n')
    with pytest.raises(TranscriptError) as info:
        read_transcript(p)
    assert info.value.line == 2 and "null" in str(info.value)
    assert read_segment(str(p), drop_falsy=True)[1].non_object == 1


def test_damaged_files_do_not_stop_the_others_loading(tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", GOOD)
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    df, errors = sessions_df(
        [good, tmp_path / "missing.jsonl", tmp_path, tmp_path / "loop"], strict=False
    )
    assert list(df["log"]) == [str(good)]
    assert [str(e) for e in errors][0] == f"{tmp_path / 'missing.jsonl'}: no such file"
    assert [e.error for e in errors] == [
        "no such file",
        "is a directory, not a transcript file",
        "symbolic link loop",
    ]


def test_result_text_pieces_are_glued_without_separator():
    assert result_text([{"text": "a"}, "b", {"text": None}, 7, {"text": 5}]) == 'ab{"text":null}75'
    assert result_text(None) == "" and result_text({"k": 1}) == '{"k":1}'
    with pytest.raises(TranscriptError):
        result_text([None])


def test_tool_results_names_and_errors():
    events = lines(
        RES("early", 3),  # before its tool_use: name "" (§9.1)
        ASST(1, "m", [USE("early", E), USE("t1", E)]),
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "is_error": [], "content": "x"},
                    {"type": "tool_result", "tool_use_id": "t1", "is_error": 0, "content": "y"},
                ]
            },
            "parent_tool_use_id": "",
        },
    )
    results = list(tool_results(events))
    assert [(r.name, r.is_error, r.text, r.thread) for r in results] == [
        ("", False, "xxx", "main"),
        (E, True, "x", ""),
        (E, False, "y", ""),
    ]
    assert explore_texts(events) == ["y"]


@pytest.mark.parametrize(
    "name, fam",
    [
        ("mcp__codegraph__codegraph_search", "codegraph"),
        ("Read", "read"),
        ("NotebookRead", "read"),
        ("Grep", "search"),
        ("Glob", "search"),
        ("Bash", "bash"),
        ("BashOutput", "bash"),
        ("Task", "other"),
        ("", "other"),
    ],
)
def test_family(name, fam):
    assert family(name) == fam


def test_damage_says_what_was_lost(tmp_path):
    clean = read_segment(str(write_jsonl(tmp_path / "ok.jsonl", GOOD)))[1]
    assert clean.damage() is None
    data = b'{"type":"x"}\n{"type":\n[1]\n' + '{"t":"caf\u00e9"}'.encode().replace(
        b"\xc3\xa9", b"\xe9"
    )
    damaged = read_segment(str(write_bytes(tmp_path / "bad.jsonl", data)))[1]
    assert damaged.damage() == (
        "1 malformed line skipped, 1 non-object JSON line ignored, "
        "1 line with invalid UTF-8 decoded with U+FFFD"
    )


def test_id_keys_have_ecmascript_map_equality():
    from evalkit.formats.claude_code.transcripts import id_key, message_key

    assert id_key("a") == id_key("a") and id_key(1) == id_key(1.0)
    assert id_key(True) != id_key(1) and id_key("1") != id_key(1)
    assert id_key({"k": 1}) != id_key({"k": 1})  # a parsed object is a new identity each time
    assert message_key("") is None and message_key(0) is None and message_key(None) is None
    assert message_key(True) == message_key(True)


def test_an_object_tool_use_id_matches_no_result():
    events = lines(
        ASST(1, "m", [{"type": "tool_use", "id": {"x": 1}, "name": E, "input": {}}]),
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": {"x": 1}, "content": "**`a/b.js`**\n"}
                ]
            },
        },
    )
    assert [r.name for r in tool_results(events)] == [""]


def test_huge_integer_literals_are_infinity_and_the_line_is_kept(tmp_path):
    p = write_bytes(tmp_path / "r.jsonl", b'{"type":"x","k":' + b"9" * 400 + b"}\n")
    events, account = read_segment(str(p))
    assert events[0]["k"] == float("inf") and account.malformed == 0


def test_crash_in_a_later_segment_names_that_segment(tmp_path):
    from evalkit.session import parse_session

    a = write_jsonl(tmp_path / "run.jsonl", GOOD)
    b = write_bytes(tmp_path / "run.t2.jsonl", b'{"type":"user","message":{"content":[null]}}\n')
    with pytest.raises(TranscriptError) as info:
        parse_session([a, b])
    assert info.value.path == str(b)
    c = write_bytes(
        tmp_path / "run2.t2.jsonl", b'{"type":"assistant","message":{"id":"m","content":"hi"}}\n'
    )
    first = write_jsonl(tmp_path / "run2.jsonl", GOOD[:2])
    with pytest.raises(TranscriptError) as info:
        parse_session([first, c])
    assert info.value.path == str(c)


def test_only_a_gz_name_is_decompressed(tmp_path):
    raw = ("\n".join(json.dumps(e) for e in GOOD) + "\n").encode()
    hidden = write_bytes(tmp_path / "run.jsonl", gzip.compress(raw, mtime=0))
    events, account = read_segment(str(hidden))  # read as the reference reads it
    assert events == [] and account.malformed >= 1 and not account.gzip
    fake = write_bytes(tmp_path / "run.jsonl.gz", raw)
    with pytest.raises(TranscriptError, match="named .gz but not gzip-compressed"):
        read_segment(str(fake))


@pytest.mark.parametrize("any_type", [False, True])
def test_null_block_in_an_assistant_message_is_named_with_an(any_type):
    events = [{"type": "assistant", "message": {"id": "m", "content": [None]}}]
    with pytest.raises(TranscriptError, match="null block in an assistant message"):
        list(tool_results(events, any_type=any_type))
