"""Parity on hostile input (issue 11, items 1–5): what `evalkit run --json` prints where a
transcript holds lone surrogates, non-finite or huge numbers, or non-string ids and names."""

from __future__ import annotations

import json
import math

import pytest

from evalkit.cli import main
from evalkit.ecma import grp, js_add, js_div, js_json
from evalkit.formats.claude_code.transcripts import parse_line
from evalkit.paired._json import canonical_dumps
from evalkit.session import parse_session
from tests.builders import ASST, RESULT, TEXT, USE, XRES, E, lines, write_jsonl


def _strict_json(text: str):
    """Parse as ECMAScript's JSON.parse would: NaN/Infinity are not JSON."""

    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _run_json(capsys, path) -> dict:
    assert main(["run", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    assert "Infinity" not in out and "NaN" not in out
    return _strict_json(out)


def _write_raw(path, raw_lines: list[str]):
    path.write_text("\n".join(raw_lines) + "\n", encoding="utf-8")
    return path


# --- item 1: a lone surrogate is the reference's \udxxx escape, never U+FFFD -------------------


def test_lone_surrogate_in_a_query_is_escaped_in_run_json(tmp_path, capsys):
    events = lines(
        ASST(100, "m1", [USE("x1", E, {"query": "auth \ud800 flow"})]),
        XRES("x1", ["src/a.ts"]),
        ASST(200, "m2", [TEXT("see src/a.ts")]),
        RESULT("see src/a.ts"),
    )
    # json.dumps escapes the lone surrogate as \ud800 (valid JSON text, as a transcript holds it).
    path = _write_raw(tmp_path / "run.jsonl", [json.dumps(e) for e in events])
    assert main(["run", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    assert "\\ud800" in out and "\ufffd" not in out
    assert _strict_json(out)["sufficiency"]["calls"][0]["query"] == "auth \ud800 flow"


def test_js_json_escapes_lone_surrogates_and_indents_like_stringify():
    value = {"b": ["\udc00", 1.0, {}], "10": [], "a": {"x": None}}
    assert js_json(value) == '{"10":[],"b":["\\udc00",1,{}],"a":{"x":null}}'
    assert js_json(value, 2) == (
        '{\n  "10": [],\n  "b": [\n    "\\udc00",\n    1,\n    {}\n  ],\n  "a": {\n'
        '    "x": null\n  }\n}'
    )


# --- item 2: a non-finite number prints null ---------------------------------------------------


def test_non_finite_numbers_print_null():
    assert js_json([math.inf, -math.inf, math.nan, 1e400]) == "[null,null,null,null]"
    assert json.loads(canonical_dumps({"ratio": math.nan, "n": [math.inf]})) == {
        "ratio": None,
        "n": [None],
    }


# --- item 3: ECMAScript division; no ZeroDivisionError ------------------------------------------


def _usage_overflow_session(tmp_path):
    """A usage of 1e400 after a tool result: the context is Infinity, the price 0 chars/token."""
    raw = [
        json.dumps(e)
        for e in lines(
            ASST(100, "m1", [USE("r1", "Read", {"file_path": "a.ts"})]),
            [
                {
                    "type": "user",
                    "message": {
                        "content": [
                            {"type": "tool_result", "tool_use_id": "r1", "content": "x" * 2000}
                        ]
                    },
                }
            ],
            ASST(1, "m2", [TEXT("done")]),
        )
    ]
    raw[-1] = raw[-1].replace('"input_tokens": 1,', '"input_tokens": 1e400,')
    return _write_raw(tmp_path / "overflow.jsonl", raw)


def test_infinite_usage_after_a_tool_result_is_measured_not_a_crash(tmp_path, capsys):
    out = _run_json(capsys, _usage_overflow_session(tmp_path))
    occupancy = out["occupancy"]
    assert occupancy["final_context"] is None  # Infinity → null
    assert occupancy["chars_per_token"] == 0  # 2000 / Infinity
    assert occupancy["residual"]["read"] is None  # 2000 chars / 0 → Infinity → null
    assert main(["run", str(tmp_path / "overflow.jsonl")]) == 0
    text = capsys.readouterr().out
    assert "∞ tok" in text and "inf" not in text


@pytest.mark.parametrize(
    "a, b, want",
    [(1, 0, math.inf), (-1, 0, -math.inf), (1, -0.0, -math.inf), (5, math.inf, 0.0), (6, 3, 2.0)],
)
def test_js_div_follows_ecmascript(a, b, want):
    assert js_div(a, b) == want


def test_js_div_zero_over_zero_is_nan():
    assert math.isnan(js_div(0, 0)) and math.isnan(js_div(math.nan, 1))


def test_an_unexpected_exception_is_one_line_naming_the_file(tmp_path, capsys, monkeypatch):
    import evalkit.session

    def boom(*args, **kwargs):
        raise KeyError("surprise\nsecond line")

    monkeypatch.setattr(evalkit.session, "compute_occupancy", boom)
    path = write_jsonl(tmp_path / "odd.jsonl", lines(ASST(10, "m1", [TEXT("hi")]), RESULT("hi")))
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "KeyError" in err
    assert "Traceback" not in err


# --- item 4: integers beyond 2^53 are doubles ---------------------------------------------------


@pytest.mark.parametrize("text", ["9007199254740993", "-9007199254740993"])
def test_integers_past_two_to_the_53_round_as_doubles(text):
    ok, value = parse_line(text)
    assert ok and isinstance(value, float) and value == float(text)
    assert parse_line("9007199254740992") == (True, 2**53)


def test_token_sums_round_each_addition_to_a_double(tmp_path):
    assert js_add(2**53 - 1, 2) == 2.0**53  # JS: 9007199254740991 + 2 === 9007199254740992
    assert js_add(3, 4) == 7 and isinstance(js_add(3, 4), int)
    path = write_jsonl(
        tmp_path / "big.jsonl",
        lines(
            ASST(10, "m1", [TEXT("a")]),
            RESULT("a", usage={"input_tokens": 2**53 - 1}),
            RESULT("a", usage={"input_tokens": 2}),
        ),
    )
    session = parse_session(path)
    assert session.summary.processed == 2.0**53  # not the exact 9007199254740993
    assert grp(session.summary.processed) == "9,007,199,254,740,992"
    assert grp(12345678901234567890) == "12,345,678,901,234,567,000"  # shortest digits, as JS


# --- item 5: raw thread ids and tool names ------------------------------------------------------


def _sub(parent, events):
    return [{**e, "parent_tool_use_id": parent} for e in events]


def test_thread_5_and_thread_string_5_are_different_threads(tmp_path, capsys):
    events = lines(
        ASST(10, "m0", [TEXT("start")]),
        _sub(5, ASST(100, "m1", [USE("x1", E, {"query": "q"})])),
        _sub(5, XRES("x1", ["src/a.ts"])),
        _sub("5", ASST(200, "m2", [USE("r1", "Read", {"file_path": "src/a.ts"})])),
        RESULT("src/a.ts"),
    )
    out = _run_json(capsys, write_jsonl(tmp_path / "t.jsonl", events))
    call = out["sufficiency"]["calls"][0]
    assert call["thread"] == 5  # the raw value, a number
    assert call["next"] == "(final answer)"  # the Read is in thread "5", another thread


def test_a_non_string_tool_name_is_kept_raw_and_a_missing_one_is_left_out(tmp_path, capsys):
    def session(name_block):
        return lines(
            ASST(100, "m1", [USE("x1", E, {"query": "q"})]),
            XRES("x1", ["src/a.ts"]),
            ASST(200, "m2", [name_block]),
            RESULT("src/a.ts"),
        )

    numeric = {"type": "tool_use", "id": "t2", "name": 7, "input": {}}
    out = _run_json(capsys, write_jsonl(tmp_path / "n.jsonl", session(numeric)))
    assert out["sufficiency"]["calls"][0]["next"] == 7

    missing = {"type": "tool_use", "id": "t2", "input": {}}
    path = write_jsonl(tmp_path / "m.jsonl", session(missing))
    out = _run_json(capsys, path)
    assert "next" not in out["sufficiency"]["calls"][0]
    assert main(["run", str(path)]) == 0
    assert "[1 file] → undefined" in capsys.readouterr().out
