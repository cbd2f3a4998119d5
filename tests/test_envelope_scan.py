"""The fast scans of explore responses find what the plain patterns find (envelope.py, §2.2, §2.8).

The section-header pattern tests the line start after its literal `**`` and path tokens are
searched run by run; both are checked against the patterns as the spec writes them, on random
texts built from the characters that matter (line terminators, backticks, path characters,
characters outside the BMP).
"""

from __future__ import annotations

import random
import re

from evalkit.ecma import DOT, LINE_START, utf16_len
from evalkit.metrics import envelope
from evalkit.metrics.envelope import PATH_TOKEN, path_tokens, returned_paths, split_sections

PLAIN_HEADER = re.compile(LINE_START + r"\*\*`([^`]+)`\*\*(" + DOT + "*)")
PIECES = [
    "**`", "`**", "`", "**", "\n", "\r", "\u2028", "\u2029", "a/b.js", "lib/", ".ts", " ", "x",
    "\U0001f600", "\u00e9", "\n> ", "/", "-", "@", "+", ".", "(function)", "f(class)", "\ud800",
]  # fmt: skip


def texts(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 80))) for _ in range(n)]


def test_header_pattern_matches_the_plain_line_start_pattern():
    for text in texts(3000, 1):
        fast = [(m.start(), m.group(1), m.group(2)) for m in envelope._HEADER.finditer(text)]
        plain = [(m.start(), m.group(1), m.group(2)) for m in PLAIN_HEADER.finditer(text)]
        assert fast == plain, text
        assert returned_paths(text) == [p for _, p, _ in plain]


def test_path_tokens_match_the_plain_pattern():
    for text in texts(3000, 2):
        assert path_tokens(text) == PATH_TOKEN.findall(text), text


def test_sections_are_measured_in_utf16_units_with_or_without_astral_characters():
    for text in texts(1000, 3):
        for s in split_sections(text).files:
            assert s.chars >= 0
        env = split_sections(text)
        if env.files:
            first = env.files[0]
            start = PLAIN_HEADER.search(text).start()
            assert first.at == utf16_len(text[:start])


def test_a_long_line_without_slashes_is_scanned_in_linear_time():
    # Quadratic backtracking would take minutes here; a linear scan takes milliseconds.
    assert path_tokens("a" * 200_000 + " lib/x.js") == ["lib/x.js"]


def _plain_split(text: str) -> list[tuple[str, int, int, str]]:
    """§2.2 as the spec writes it: (path, at, chars, header) with the plain patterns."""
    matches = list(PLAIN_HEADER.finditer(text))
    if not matches:
        return []
    tail = text.find("\n> ", matches[-1].start())
    ends = [m.start() for m in matches[1:]] + [tail if tail >= 0 else len(text)]
    return [
        (m.group(1), utf16_len(text[: m.start()]), utf16_len(text[m.start() : e]), m.group(2))
        for m, e in zip(matches, ends, strict=True)
    ]


def test_the_header_scan_from_the_backtick_finds_the_header_pattern_matches():
    # `_split` tries `_HEADER` 2 characters before each backtick that follows `**`.
    extra = ["**`a`**\n**`b`**", "x\n**`a\n**`b`**c`**d", "**`", "`**`a`**", "***`a`**"]
    extra += ["\r**`a`**", "**`a`**`**`b`**", "**`a`**\n**`b`**\u2028**`c`**x", "*`**`a`**"]
    for text in texts(3000, 4) + extra:
        scan = [(m.start(), m.group(1), m.group(2)) for m in envelope._header_matches(text)]
        plain = [(m.start(), m.group(1), m.group(2)) for m in PLAIN_HEADER.finditer(text)]
        assert scan == plain, text


def test_sections_end_where_the_plain_rules_end_them():
    # The guidance search (`_GUIDANCE_SCAN`, from the `> `) ends the last section where
    # `find("\n> ")` does, including a guidance right after the last header's line.
    extra = ["**`a`**\n> x", "**`a`**> \n> ", "\n> **`a`**x\n>\n> y", "**`a`**\r\n> z", "**`a`**"]
    for text in texts(3000, 5) + extra:
        envelope.forget_scans()
        got = [(s.path, s.at, s.chars, s.header) for s in split_sections(text).files]
        assert got == _plain_split(text), text
