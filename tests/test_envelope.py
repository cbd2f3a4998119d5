"""Explore responses and the envelope view (spec §2, §4)."""

from __future__ import annotations

import pytest

from evalkit.errors import UsageError
from evalkit.metrics.envelope import (
    envelope_view,
    format_envelope,
    glob_to_regex,
    mentioned_paths,
    returned_paths,
    split_sections,
)
from tests.builders import alloc_text


def test_worked_numbers_of_section_2_7():
    env = split_sections(
        alloc_text(
            [
                ("lib/response.js", "send(function)", 4000),
                ("lib/express.js", "app(variable)", 3000),
                ("lib/view.js", "View(class)", 3000),
            ]
        )
    )
    assert [f.chars for f in env.files] == [4052, 3050, 3044]
    assert env.envelope == 10146


def test_header_symbols_keep_defining_kinds_only():
    env = split_sections(
        "**`a/b.ts`** — mutateElement(calls), Foo.bar(method), x$(variable), "
        "C(constructor), U(union), +32 more\n\nbody\n"
    )
    assert [(s.name, s.kind) for s in env.files[0].symbols] == [
        ("Foo.bar", "method"),
        ("x$", "variable"),
    ]


def test_focused_and_skeleton_headers_have_no_symbols():
    env = split_sections(
        "**`a/b.ts`** — focused (the methods you named in full)\n\nx\n"
        "**`a/c.ts`** — skeleton (signatures only)\n\ny\n"
    )
    assert [f.symbols for f in env.files] == [(), ()]


def test_text_before_first_header_and_after_guidance_is_overhead():
    text = "Summary line\n\n**`a/b.js`**\n\nbody\n\n> Treat the code above as already read.\n"
    env = split_sections(text)
    assert env.files[0].chars == len("**`a/b.js`**\n\nbody\n")


def test_quirk_2_source_line_starting_with_quote_cuts_last_section():
    env = split_sections("**`a/b.md`**\n\nline\n> quoted source\nmore\n")
    assert env.files[0].chars == len("**`a/b.md`**\n\nline")


def test_line_starts_follow_ecmascript():
    # After \r and U+2028 a header starts a section; after U+0085 it does not.
    assert len(split_sections("x\r**`a.js`**\n").files) == 1
    assert len(split_sections("x\u2028**`a.js`**\n").files) == 1
    assert len(split_sections("x\u0085**`a.js`**\n").files) == 0
    # A U+2028 inside the header line cuts the labels after it.
    env = split_sections("**`a.js`** — f(function)\u2028g(function)\n")
    assert [s.name for s in env.files[0].symbols] == ["f"]


def test_sizes_are_utf16_units():
    env = split_sections("**`a.js`** 😀\n**`b.js`** 中\n")
    assert [f.chars for f in env.files] == [len("**`a.js`** ") + 2 + 1, len("**`b.js`** 中\n")]
    assert env.files[1].at == len("**`a.js`** ") + 3


def test_returned_and_mentioned_paths():
    text = "**`lib/response.js`** — fn(function)\n\n1. lib/router/index.js:42 handle v1.2 x.js\n"
    assert returned_paths(text) == ["lib/response.js"]
    assert mentioned_paths(text) == ["lib/response.js", "lib/router/index.js"]


def test_envelope_example_of_section_4_5():
    text = (
        "**`lib/utils.js`**\n" + "u" * (6380 - 20) + "\n"
        "**`lib/response.js`**\n" + "r" * (3935 - 23) + "\n"
        "**`lib/application.js`**\n" + "a" * (1607 - 26) + "\n"
        "**`lib/express.js`**\n" + "e" * (1927 - 21) + "\n> guidance\n"
    )
    # application before express in the text, but express is larger: ranking is by chars.
    view = envelope_view([text], ["lib/**"])
    assert format_envelope(view) == (
        "  Explore envelope: 13,849 chars over 1 response(s)\n"
        "    answer-set share: 100.0% | top file answers: true\n"
        "    *  46.1%   6380  lib/utils.js\n"
        "    *  28.4%   3935  lib/response.js\n"
        "    *  13.9%   1927  lib/express.js\n"
        "    *  11.6%   1607  lib/application.js"
    )


def test_envelope_counts_responses_without_sections():
    view = envelope_view(["not indexed", ""])
    assert format_envelope(view) == "  Explore envelope: 0 chars over 2 response(s)"


@pytest.mark.parametrize(
    "glob, path, want",
    [
        ("tools/cache/**", "tools/cache/a/b.go", True),
        ("lib/*.js", "lib/a/b.js", False),
        ("lib/*.js", "lib/b.js", True),
        ("**/fake/**", "fake/x.go", False),
        ("**/fake/**", "a/fake/x.go", True),
        ("lib/**", "lib", False),
        ("lib/?.js", "lib.js", True),  # quirk 1: `?` makes the `/` optional
        ("lib/{a,b}.js", "lib/a.js", False),  # no brace expansion
        ("lib/[ab].js", "lib/[ab].js", True),
        ("a.js", "a.js\n", False),  # `$` only at the very end
    ],
)
def test_glob_to_regex(glob, path, want):
    assert bool(glob_to_regex(glob).search(path)) is want


@pytest.mark.parametrize("glob", ["?lib", "lib???", "lib/*??", "lib/**??"])
def test_glob_with_nothing_to_repeat_raises(glob):
    with pytest.raises(UsageError, match="not a usable glob"):
        glob_to_regex(glob)


def test_path_tokens_scan_equals_the_plain_regex():
    import random

    from evalkit.metrics.envelope import PATH_TOKEN, path_tokens

    rng = random.Random(7)
    alphabet = "ab.-@+/_ :x1é\n`"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert path_tokens(text) == PATH_TOKEN.findall(text), text


def test_long_slash_free_runs_are_fast():
    # The plain regex backtracks quadratically here (~20 s for 20k chars); the run scan is linear.
    from evalkit.metrics.envelope import path_tokens

    assert path_tokens("x" * 200_000 + " lib/a.js") == ["lib/a.js"]


def test_quirk_14_glob_holding_the_sentinel_text():
    # In the reference the `**` sentinel is the text `\u0000`: a glob holding that text has its
    # (escaped) backslash followed by `.*`, i.e. a literal dot repeated.
    pattern = glob_to_regex("a\\u0000")
    assert pattern.pattern == "^a\\.*\\Z"
    assert [bool(pattern.search(p)) for p in ("a", "a..", "ab")] == [True, True, False]
