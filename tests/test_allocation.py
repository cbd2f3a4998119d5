"""Allocation efficiency (spec §3): reference checks 47–63 and 66–68, plus worked examples."""

from __future__ import annotations

import pytest

from evalkit.metrics.allocation import (
    answer_citations,
    compute_allocation,
    format_allocation,
    same_path,
)
from evalkit.session import parse_session
from tests.builders import ASST, RESULT, TEXT, USE, E, alloc_text, lines, write_jsonl
from tests.refcheck import check, round1


def alloc(files, answer):
    return compute_allocation([alloc_text(files)], answer)


def by_path(a, fragment):
    return next(f for f in a.files if fragment in f.path)


A1 = alloc(
    [
        ("lib/response.js", "send(function)", 4000),
        ("lib/express.js", "app(variable)", 3000),
        ("lib/view.js", "View(class)", 3000),
    ],
    "The Content-Type is decided in `lib/response.js:126` by `res.send`.",
)
TWO = [("lib/response.js", "send(function)", 4000), ("lib/view.js", "View(class)", 4000)]


def test_47_allocation_one_of_three_files_cited():
    check(round1(A1.efficiency), 40.1, 0.6)
    assert (A1.used, A1.envelope) == (4052, 10146)
    assert round1(A1.efficiency) == 39.9


def test_48_cited_file_is_flagged_path():
    assert by_path(A1, "response").via == "path"


def test_49_noise_file_is_not():
    assert by_path(A1, "view").via is None
    assert by_path(A1, "express").via is None


def test_50_files_cited():
    check(A1.files_used, 1, 0)


def test_a1_section_sizes_and_shares():
    assert [f.chars for f in A1.calls[0].files] == [4052, 3050, 3044]
    block = format_allocation(A1)
    assert "39.9%   4052  lib/response.js  path" in block
    assert "30.1%   3050  lib/express.js  —" in block
    assert "30.0%   3044  lib/view.js  —" in block


def test_a1_citations():
    c = answer_citations(
        "The Content-Type is decided in `lib/response.js:126` by `res.send`.", {"js"}
    )
    assert c.paths == ("lib/response.js", "response.js")
    assert c.symbols == ("response", "send")


def test_51_bare_basename_counts_as_a_path_citation():
    a = alloc(TWO, "It happens in response.js:134, inside `res.send`.")
    check(round1(a.efficiency), 50, 0.6)
    assert (a.used, a.envelope) == (4052, 8096)
    assert by_path(a, "response").via == "path"


def test_52_a_dotted_expression_is_not_a_file_citation():
    a = alloc(TWO, "The `res.send` and `mime.contentType` calls do it.")
    assert all(f.via != "path" for f in a.files)
    assert by_path(a, "response").via == "symbol"
    assert by_path(a, "response").symbol == "send"
    assert (a.used, a.envelope) == (4052, 8096)


def test_53_symbol_citation_credits_the_definer():
    a = alloc(
        [
            ("src/mutateElement.ts", "mutateElement(function)", 4000),
            ("src/dragElements.ts", "mutateElement(calls), updateCoords(function)", 4000),
        ],
        "Mutation goes through `mutateElement`.",
    )
    f = by_path(a, "mutateElement.ts")
    assert (f.via, f.symbol) == ("symbol", "mutateElement")


def test_54_and_not_a_caller_of_it():
    a = alloc(
        [
            ("src/mutateElement.ts", "mutateElement(function)", 4000),
            ("src/dragElements.ts", "mutateElement(calls), updateCoords(function)", 4000),
        ],
        "Mutation goes through `mutateElement`.",
    )
    assert by_path(a, "dragElements").via is None


A5 = alloc(
    [
        ("lib/utils.js", "compileETag(function)", 4000),
        ("lib/application.js", "compileETag(variable), set(calls)", 4000),
    ],
    "The generator comes from `compileETag`.",
)


def test_55_a_definition_beats_an_import_alias_of_the_same_name():
    f = by_path(A5, "utils")
    assert (f.via, f.symbol) == ("symbol", "compileETag")


def test_56_and_the_aliasing_file_is_not_credited():
    assert by_path(A5, "application").via is None


def test_weak_owner_is_credited_when_no_definition_was_returned():
    a = alloc([("lib/application.js", "compileETag(variable)", 4000)], "`compileETag` does it.")
    assert a.files[0].via == "symbol"


def test_57_a_symbol_on_3_files_attributes_none_of_them():
    a = alloc(
        [
            ("a/one.js", "handle(function)", 3000),
            ("a/two.js", "handle(function)", 3000),
            ("a/three.js", "handle(function)", 3000),
        ],
        "It all runs through `handle`.",
    )
    check(a.efficiency, 0, 0.001)
    assert a.used == 0


def test_symbol_on_two_files_credits_both():
    a = alloc(
        [("a/one.js", "handle(function)", 3000), ("a/two.js", "handle(function)", 3000)],
        "It all runs through `handle`.",
    )
    assert [f.via for f in a.files] == ["symbol", "symbol"]


def test_a_path_takes_the_first_cited_symbol_in_answer_order_that_may_credit_it():
    # `handle` is on three files (credits none); `route` on two; `serve` on one. The answer
    # names them in that order, so one.js and two.js get `route`, and three.js `serve`.
    a = alloc(
        [
            ("a/one.js", "handle(function), route(function)", 3000),
            ("a/two.js", "handle(function), route(function), serve(function)", 3000),
            ("a/three.js", "handle(function), serve(function)", 3000),
            ("a/four.js", "other(function)", 3000),
        ],
        "`handle` calls `route`, then `serve`.",
    )
    assert {f.path: (f.via, f.symbol) for f in a.files} == {
        "a/one.js": ("symbol", "route"),
        "a/two.js": ("symbol", "route"),
        "a/three.js": ("symbol", "serve"),
        "a/four.js": (None, None),
    }


def test_a_cited_path_beats_a_cited_symbol():
    a = alloc(
        [("a/one.js", "route(function)", 3000), ("a/two.js", "route(function)", 3000)],
        "`route` lives in a/two.js.",
    )
    assert {f.path: (f.via, f.symbol) for f in a.files} == {
        "a/one.js": ("symbol", "route"),
        "a/two.js": ("path", None),
    }


def test_58_an_unquoted_symbol_in_prose_does_not_count():
    a = alloc(
        [("lib/response.js", "sendResponse(function)", 4000), ("lib/view.js", "View(class)", 4000)],
        "The sendResponse path handles it.",
    )
    check(a.efficiency, 0, 0.001)


A8 = compute_allocation(
    [
        "**`lib/response.js`** — send(function)\n\n```js\n" + "x" * 4000 + "\n```\n\n> guidance\n",
        "**`lib/view.js`** — View(class)\n\n```js\n" + "x" * 4000 + "\n```\n\n> guidance\n",
    ],
    "See `lib/response.js`.",
)


def test_59_per_call_call_1_fully_used():
    check(round1(A8.calls[0].efficiency), 100, 0.1)
    assert (A8.calls[0].used, A8.calls[0].envelope) == (4051, 4051)


def test_60_per_call_call_2_fully_wasted():
    check(round1(A8.calls[1].efficiency), 0, 0.1)
    assert (A8.calls[1].used, A8.calls[1].envelope) == (0, 4044)


def test_61_run_pools_both_calls():
    check(round1(A8.efficiency), 50, 0.6)
    assert (A8.used, A8.envelope) == (4051, 8095)


A9 = compute_allocation(
    ["**`lib/response.js`** — send(function)\n\n" + "x" * 4000 + "\n\n> g\n"] * 2,
    "See `lib/response.js`.",
)


def test_62_a_re_returned_file_is_charged_both_times():
    check(A9.envelope, 8078, 120)
    assert A9.envelope == 8082
    assert A9.files[0].calls == 2


def test_63_and_credited_both_times():
    check(round1(A9.efficiency), 100, 0.1)


def a12_file(tmp_path):
    text = (
        "**`lib/response.js`** — send(function)\n\n"
        + "x" * 4000
        + "\n\n**`lib/view.js`** — View(class)\n\n"
        + "x" * 4000
        + "\n\n> guidance\n"
    )
    events = lines(
        ASST(10000, "m1", [USE("e1", E, {"query": "q"})]),
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "e1",
                        "content": [{"type": "text", "text": text}],
                    }
                ]
            },
        },
        ASST(20000, "m2", [TEXT("done")]),
        RESULT("It is decided in `lib/response.js` by `res.send`."),
    )
    return write_jsonl(tmp_path / "a12.jsonl", events)


def test_66_parse_session_reports_allocation(tmp_path):
    s = parse_session(a12_file(tmp_path))
    check(round1(s.allocation.efficiency), 50, 0.6)
    assert (s.allocation.used, s.allocation.envelope) == (4042, 8076)


def test_67_and_the_block_renders(tmp_path):
    block = format_allocation(parse_session(a12_file(tmp_path)).allocation)
    assert (
        "    efficiency  50.0%  4,042 of 8,076 chars   (1/2 files cited; path-cited alone 50.0%)"
        in block.splitlines()
    )


def test_68_a_run_with_no_explore_says_so():
    block = format_allocation(compute_allocation([], "answer"))
    assert "no codegraph_explore responses" in block
    assert block == "  Explore allocation: no codegraph_explore responses with source sections"


def test_texts_without_sections_are_not_calls():
    a = compute_allocation(["not indexed", alloc_text([("a/b.js", "f(function)", 10)])], "`a/b.js`")
    assert [c.index for c in a.calls] == [1]


def test_no_answer_prints_warning_and_zero():
    a = compute_allocation([alloc_text([("a/b.js", "f(function)", 10)])], " \u00a0\ufeff ")
    assert not a.has_answer and a.efficiency == 0
    assert "  !! no final answer text found" in format_allocation(a)


def test_pooled_ties_keep_first_seen_order_and_calls_count_sections():
    texts = [
        alloc_text(
            [
                ("b/x.js", "f(function)", 10),
                ("a/y.js", "g(function)", 10),
                ("b/x.js", "f(function)", 10),
            ]
        ),
        alloc_text([("b/x.js", "f(function)", 10)]),
    ]
    a = compute_allocation(texts, "")
    assert [f.path for f in a.files] == ["b/x.js", "a/y.js"]
    assert a.files[0].calls == 3
    assert len(a.calls[0].files) == 3


def test_more_than_twelve_files_are_summarised():
    a = compute_allocation([alloc_text([(f"d/f{i:02}.js", "", 100 - i) for i in range(15)])], "")
    assert format_allocation(a).splitlines()[-2] == "      … 3 more files"


@pytest.mark.parametrize(
    "a, b, want",
    [
        ("lib/response.js", "response.js", True),
        ("lib/response.js", "private/tmp/t-base/lib/response.js", True),
        ("src/index.ts", "packages/element/src/index.ts", True),  # quirk 3, reproduced
        ("lib/response.js", "lib/respons.js", False),
        ("./lib/x.js", "lib\\x.js", True),
        ("", "x.js", False),
        ("xresponse.js", "response.js", False),
    ],
)
def test_same_path(a, b, want):
    assert same_path(a, b) is want


def test_extension_gate_and_quirky_extensions():
    # `a.b/Makefile` adds the extension `b/makefile` (quirk 4); `.gitignore` adds nothing.
    a = compute_allocation(
        [alloc_text([("a.b/Makefile", "", 10), (".gitignore", "", 10)])],
        "see Makefile and send.gitignore",
    )
    assert a.used == 0


def test_non_ascii_paths_and_identifiers():
    c = answer_citations("见lib/response.js中 and 在view.js里 and `résuméBuilder`", {"js"})
    assert "lib/response.js" in c.paths and "response.js" in c.paths and "view.js" in c.paths
    assert c.symbols == ("Builder",)
    a = alloc([("lib/résumé.js", "résuméBuilder(class)", 10)], "`résuméBuilder` in lib/résumé.js")
    assert a.files[0].via == "symbol" and a.files[0].symbol == "Builder"


def test_emoji_counts_two_utf16_units():
    plain = alloc([("a/b.js", "f(function)", 10)], "")
    emoji = compute_allocation(
        [
            alloc_text([("a/b.js", "f(function)", 0)]).replace(
                "```js\n", "```js\n" + "😀" * 5 + "中" * 0, 1
            )
        ],
        "",
    )
    assert emoji.envelope == plain.envelope  # 5 emoji = 10 UTF-16 units = 10 x's
    cjk = compute_allocation(
        [alloc_text([("a/b.js", "f(function)", 0)]).replace("```js\n", "```js\n" + "中" * 10, 1)],
        "",
    )
    assert cjk.envelope == plain.envelope


def test_path_set_agrees_with_same_path_on_random_paths():
    """`PathSet` indexes the text after each slash; it must answer exactly as comparing the
    tested path with every path by `same_path` does, leading/trailing/doubled slashes,
    `./`, backslashes and paths past the indexed slash count included."""
    import random

    from evalkit.metrics.allocation import PathSet, same_path

    rng = random.Random(26)
    parts = ["a", "b", "src", "x.py", "", ".", "..", "a.b", "\\", "./"]

    def path() -> str:
        if rng.random() < 0.05:
            return "/" * rng.randint(60, 70) + rng.choice(["a", "x.py", ""])
        if rng.random() < 0.03:  # past the indexed length
            return (
                rng.choice(["", "a/"]) + "b" * rng.randint(4090, 4100) + rng.choice(["", "/x.py"])
            )
        head = rng.choice(["", "/", "./", "././", "\\"])
        return head + "/".join(rng.choice(parts) for _ in range(rng.randint(0, 5)))

    for _ in range(3000):
        cited = [path() for _ in range(rng.randint(0, 6))] + [None] * rng.randint(0, 1)
        ps = PathSet(cited)
        for _ in range(4):
            a = rng.choice([path(), *[c for c in cited if c]])
            assert ps.has(a) == any(same_path(a, c) for c in cited), (a, cited)
