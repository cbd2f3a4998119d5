"""`evalkit run` (issue 2): the seed's printed example, JSON keys, errors without tracebacks."""

from __future__ import annotations

import json

import pytest

from evalkit.cli import main
from tests.builders import ASST, RESULT, TEXT, USE, E, lines, write_jsonl

# The seed's example block for cg22/ab-express/run-baseline-1 (spec §3.6, with the note line the
# code always prints).
SEED_BLOCK = """\
  Explore allocation — share of returned bytes the answer used (2 calls, 4 files):
    efficiency  81.9%  17,465 of 21,319 chars   (3/4 files cited; path-cited alone 64.9%)
    call 1:  84.0%  10,121/12,048 chars  2/3 files
    call 2:  79.2%  7,344/9,271 chars  2/3 files
    *  34.9%   7447  lib/response.js  path
    *  30.0%   6396  lib/utils.js  path
       18.1%   3854  lib/express.js  —
    *  17.0%   3622  lib/application.js  symbol `compileETag`
    note: relative metric — attribution is by citation, so compare builds on the same question, not absolutes.
"""


def sized_response(files: list[tuple[str, str, int]]) -> str:
    """A response whose sections are exactly the given chars (the last one ends at the quote)."""
    parts = []
    for i, (path, syms, chars) in enumerate(files):
        head, tail = f"**`{path}`** — {syms}\n\n```js\n", "\n```\n"
        joiner = 0 if i == len(files) - 1 else 1
        parts.append(head + "x" * (chars - len(head) - len(tail) - joiner) + tail)
    return "\n".join(parts) + "\n> Treat the code above as already read.\n"


def explore_result(id: str, text: str):
    return {
        "type": "user",
        "message": {
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": id,
                    "content": [{"type": "text", "text": text}],
                }
            ]
        },
    }


def seed_example(tmp_path):
    call1 = sized_response(
        [
            ("lib/response.js", "send(method), contentType(method)", 3725),
            ("lib/utils.js", "etag(function), setCharset(function)", 6396),
            ("lib/express.js", "createApplication(function), +12 more", 1927),
        ]
    )
    call2 = sized_response(
        [
            ("lib/response.js", "send(method)", 3722),
            ("lib/application.js", "compileETag(function), set(calls)", 3622),
            ("lib/express.js", "createApplication(function)", 1927),
        ]
    )
    answer = (
        "`res.send` in lib/response.js:126-220 sets Content-Type; the ETag comes from "
        "utils.js:225, wired up through `compileETag`."
    )
    events = lines(
        ASST(10000, "m1", [USE("e1", E, {"query": "res.send Content-Type ETag"})]),
        explore_result("e1", call1),
        ASST(20000, "m2", [USE("e2", E, {"query": "etag generation"})]),
        explore_result("e2", call2),
        ASST(30000, "m3", [TEXT(answer)]),
        RESULT(answer),
    )
    return write_jsonl(tmp_path / "run-baseline-1.jsonl", events)


def test_seed_example_block_character_for_character(tmp_path, capsys):
    assert main(["run", str(seed_example(tmp_path))]) == 0
    # The allocation block closes the full report (issue 3; the report's order is in
    # test_full_report_blocks_in_reference_order).
    assert capsys.readouterr().out.endswith("\n\n" + SEED_BLOCK)


def test_json_has_exactly_the_documented_keys(tmp_path, capsys):
    assert main(["run", str(seed_example(tmp_path)), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"answer_source", "allocation", "sufficiency", "occupancy"}
    a = out["allocation"]
    assert set(a) == {
        "calls",
        "chars",
        "cited_chars",
        "path_cited_chars",
        "efficiency",
        "path_efficiency",
        "files",
        "files_returned",
        "files_cited",
        "has_answer",
    }
    assert a["calls"][0] == {
        "index": 1,
        "chars": 12048,
        "cited_chars": 10121,
        "path_cited_chars": 10121,
        "files": 3,
        "cited_files": 2,
    }
    assert a["files"][3] == {
        "path": "lib/application.js",
        "chars": 3622,
        "calls": 1,
        "via": "symbol",
        "symbol": "compileETag",
    }
    assert [f["path"] for f in a["files"]] == [
        "lib/response.js",
        "lib/utils.js",
        "lib/express.js",
        "lib/application.js",
    ]
    assert a["efficiency"] == 17465 / 21319 and a["path_efficiency"] == 13843 / 21319
    assert out["answer_source"] == "result"


def test_envelope_and_answer_globs(tmp_path, capsys):
    assert main(["run", str(seed_example(tmp_path)), "--answer", "lib/res*.js"]) == 0
    out = capsys.readouterr().out
    assert "  Explore envelope: 21,319 chars over 2 response(s)\n" in out
    assert "    answer-set share: 34.9% | top file answers: true\n" in out


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: d / "missing.jsonl", "no such file"),
        (lambda d: d, "is a directory"),
    ],
)
def test_unusable_input_exits_2_with_one_line(tmp_path, capsys, make, message):
    assert main(["run", str(make(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("etype, phrase", [("assistant", "an assistant"), ("user", "a user")])
def test_null_block_error_reads_as_english(tmp_path, capsys, etype, phrase):
    path = write_jsonl(tmp_path / "s.jsonl", [{"type": etype, "message": {"content": [None]}}])
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"null block in {phrase} message's content" in err and err.count("\n") == 1


def test_invalid_glob_exits_2(tmp_path, capsys):
    assert main(["run", str(seed_example(tmp_path)), "--answer", "?x"]) == 2
    assert "not a usable glob" in capsys.readouterr().err


def test_help_teaches(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "segments of ONE multi-turn session" in out and "exit status" in out


# --- issue 3: the full report, --brief, --json keys, window and processed options -------------


def s1_run(tmp_path):
    from tests.test_sufficiency import S1

    return write_jsonl(tmp_path / "run-1.jsonl", S1)


def test_full_report_is_printed(tmp_path, capsys):
    from tests.test_report import S1_REPORT

    assert main(["run", str(s1_run(tmp_path))]) == 0
    assert capsys.readouterr().out == S1_REPORT + "\n"


def test_brief_drops_the_numbered_listing(tmp_path, capsys):
    assert main(["run", str(s1_run(tmp_path)), "--brief"]) == 0
    out = capsys.readouterr().out
    assert "Tool calls (3):\n  by type:" in out and "  1. " not in out.split("Result:")[0]


def test_json_sufficiency_and_occupancy_keys(tmp_path, capsys):
    assert main(["run", str(s1_run(tmp_path)), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["sufficiency"]) == ["answered", "errors", "concurrent", "counts", "calls"]
    assert list(out["sufficiency"]["calls"][0]) == [
        "thread",
        "query",
        "files",
        "chars",
        "bucket",
        "next",
        "named",
    ]
    assert list(out["occupancy"]) == [
        "chars_per_token",
        "calibrated",
        "dispersion",
        "final_context",
        "base_context",
        "residual",
        "contributed",
        "residual_file_access",
        "evicted",
        "compactions",
        "turns",
    ]
    assert out["occupancy"]["residual"] == {
        "codegraph": 40,
        "read": 1000,
        "search": 0,
        "bash": 0,
        "other": 0,
    }


def test_window_tokens_option_and_environment(tmp_path, capsys, monkeypatch):
    run = str(s1_run(tmp_path))
    assert main(["run", run, "--window-tokens", "1e6"]) == 0
    assert "    1.5% of 1000k window" in capsys.readouterr().out
    monkeypatch.setenv("CG_WINDOW_TOKENS", "400000")
    assert main(["run", run]) == 0
    assert "    3.8% of 400k window" in capsys.readouterr().out
    monkeypatch.setenv("CG_WINDOW_TOKENS", "200_000")  # NaN, printed as the reference prints it
    assert main(["run", run]) == 0
    assert "   NaN% of NaNk window" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["0", "-5", "lots", "Infinity"])
def test_unusable_window_tokens_exits_2(tmp_path, capsys, value):
    assert main(["run", str(s1_run(tmp_path)), "--window-tokens", value]) == 2
    assert "--window-tokens" in capsys.readouterr().err


def test_processed_option_is_announced(tmp_path, capsys):
    assert main(["run", str(s1_run(tmp_path)), "--processed", "message-usage"]) == 0
    out = capsys.readouterr().out
    assert (
        "  tokens processed: 51,008 (per-message usage, later revision — not the reference's"
        " figure) | cost $0.100\n"
    ) in out


def test_damaged_file_is_measured_and_reported_on_stderr(tmp_path, capsys):
    path = seed_example(tmp_path)
    path.write_bytes(path.read_bytes() + b'{"type": "user", "mess')
    assert main(["run", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "efficiency  81.9%" in out
    assert err == f"evalkit run: {path}: 1 malformed line skipped\n"
