"""Explore responses: file sections, their sizes, and the envelope view (spec §2, §4).

A `codegraph_explore` response is markdown. Each file section starts at a line beginning with
``**` `` and runs to the next one; the last runs to the first guidance quote (`"\\n> "`) after it.
Every size is a count of UTF-16 code units (Decision 1).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.ecma import DOT, at_line_start, grp, pct1, rj, utf16_len
from evalkit.errors import UsageError
from evalkit.formats.frozen import quick_init

__all__ = [
    "DEFINING_KINDS",
    "Symbol",
    "Section",
    "Envelope",
    "split_sections",
    "returned_paths",
    "mentioned_paths",
    "PATH_TOKEN",
    "path_tokens",
    "forget_scans",
    "remembered_scan",
    "ScanMemo",
    "glob_to_regex",
    "EnvelopeFile",
    "EnvelopeView",
    "envelope_view",
    "format_envelope",
]

# §2.2 step 1: header at an ECMAScript line start; `[^`]` may cross lines, `.` may not.
# `_split` finds its matches with `_header_matches` below.
_HEADER = re.compile(at_line_start("**`") + r"([^`]+)`\*\*(" + DOT + "*)")
# §2.2 step 5: `name(kind)` labels of the header remainder; `\w` is ASCII (§10.3).
_LABEL = re.compile(r"([A-Za-z_$][A-Za-z0-9_$.]*)\(([a-z_]+)\)")
# §2.8: a path with at least one directory and an extension starting with a letter.
PATH_TOKEN = re.compile(r"(?:[\w@.+-]+/)+[\w@.+-]+\.[A-Za-z]\w*", re.ASCII)
# Every PATH_TOKEN match lies inside one maximal run of `[\w@.+/-]` characters, and only runs
# holding a `/` can match: scanning run by run gives the same matches without the regex's
# quadratic backtracking over long slash-free runs (a 20k-character line of source, say). This
# pattern finds exactly those runs: it may start only where a run starts (the lookbehind), and
# its possessive loops never backtrack, so the scan is linear in the text.
_PATH_RUN = re.compile(r"(?<![\w@.+/-])[\w@.+-]*+/[\w@.+/-]*+", re.ASCII)
_GUIDANCE = "\n> "  # §2.2: the last section ends at the first one after its header
# The headers are found from their backticks: `str.find` of one character passes over a text in
# fewer instructions than the engine's search (in the same time), and `_HEADER` is tried only
# where a backtick follows `**`. `_GUIDANCE_SCAN` finds the `> ` of the first `"\n> "` from a
# position (a match starts 1 character after it); `>` is rarer than a line break, so it is
# quicker than `str.find`.
_GUIDANCE_SCAN = re.compile(r"> (?<=\n> )")
# How many recent responses keep their split (a session's explore texts are split once and
# shared by allocation, sufficiency and the frames); a bound, so memory stays bounded too.
_SCANS_KEPT = 256

# §2.3: the product's node kinds less file/import/export. `constructor` and `union` are not
# here, as in the reference (quirk 5, §9.2).
DEFINING_KINDS = frozenset(
    "module class struct interface trait protocol function method property field variable "
    "constant enum enum_member type_alias namespace route component".split()
)


@quick_init
@dataclass(frozen=True)
class Symbol:
    """A `name(kind)` header label with a defining kind."""

    name: str
    kind: str


@quick_init
@dataclass(frozen=True)
class Section:
    """One file section of an explore response.

    Attributes:
        path: The path between the backticks of the header.
        chars: UTF-16 units charged to the file (§2.5).
        symbols: Defined symbols listed in the header, in order.
        at: UTF-16 offset of the header in the response.
        header: The header remainder after ``**`path`**`` (e.g. `` — send(function), +3 more``).
    """

    path: str
    chars: int
    symbols: tuple[Symbol, ...]
    at: int
    header: str


@quick_init
@dataclass(frozen=True)
class Envelope:
    """The sections of one response and their total (`envelope`)."""

    envelope: int
    files: tuple[Section, ...]


def split_sections(src: str | None) -> Envelope:
    """Split a response into file sections (§2.2).

    Section i spans from its header to the next header; the last one ends at the first
    `"\\n> "` after its header (or the end of the text). Quirk 2 (§9.2): that search is a plain
    substring search, so a source line starting with `> ` cuts the last section short.

    A response is split once however many metrics ask (allocation, sufficiency, the frames):
    the result is immutable and remembered for the most recent texts.
    """
    return _split(src or "")


class ScanMemo:
    """A pure function of one text, remembered for the most recent texts by the text's
    *identity*: the metrics of a session pass the same string objects around, and a cache
    keyed by value would hash every long response once more (a pass over all its bytes).
    A text passed again as an equal but distinct object is simply scanned again. Each entry
    holds its text, so an identity cannot be reused while it is remembered."""

    def __init__(self, fn: Any, size: int = _SCANS_KEPT) -> None:
        self._fn = fn
        self._size = size
        self._memo: dict[int, tuple[str, Any]] = {}
        self.__wrapped__ = fn

    def __call__(self, text: str) -> Any:
        hit = self._memo.get(id(text))
        if hit is not None and hit[0] is text:
            return hit[1]
        value = self._fn(text)
        memo = self._memo
        if len(memo) >= self._size:
            try:  # the oldest (another thread may be evicting or clearing too)
                memo.pop(next(iter(memo)), None)
            except (RuntimeError, StopIteration):
                pass
        memo[id(text)] = (text, value)
        return value

    def cache_clear(self) -> None:
        self._memo.clear()


@ScanMemo
def _split(src: str) -> Envelope:
    matches = _header_matches(src)
    if not matches:
        return Envelope(0, ())
    starts = [m.start() for m in matches]
    # The first `"\n> "` at or after the last header (`src.find(_GUIDANCE, starts[-1])`: the
    # header's own `*` cannot be its `\n`, so its `> ` lies past the header's start).
    tail = _GUIDANCE_SCAN.search(src, starts[-1])
    end = tail.start() - 1 if tail is not None else len(src)
    # No character outside the BMP: every UTF-16 length is the plain length (one C pass).
    plain = src.isascii() or utf16_len(src) == len(src)
    files = []
    total = 0
    offset = 0  # UTF-16 offset of starts[i]
    starts.append(end)
    for i, m in enumerate(matches):
        start = starts[i]
        stop = starts[i + 1]
        if plain:
            at, chars = start, stop - start
        else:
            if i == 0:
                offset = utf16_len(src[:start])
            at, chars = offset, utf16_len(src[start:stop])
            offset += chars
        path, header = m.groups()
        # A label needs its `(`: most headers have none, and the search is skipped.
        symbols = (
            tuple([Symbol(n, k) for n, k in _LABEL.findall(header) if k in DEFINING_KINDS])
            if "(" in header
            else ()
        )
        files.append(Section(path, chars, symbols, at, header))
        total += chars
    return Envelope(total, tuple(files))


def _header_matches(src: str) -> list[re.Match[str]]:
    """`list(_HEADER.finditer(src))`: a match starts 2 characters before a backtick that
    follows `**`, and the search goes on where the last match ended, as `finditer`'s does."""
    matches = []
    find, match = src.find, _HEADER.match
    lo = 2  # the first backtick a match may start 2 characters before
    i = find("`", lo)
    while i >= 0:
        if src[i - 1] == "*" and src[i - 2] == "*":
            m = match(src, i - 2)
            if m is not None:
                matches.append(m)
                lo = m.end() + 2
                i = find("`", lo)
                continue
        i = find("`", i + 1)
    return matches


def returned_paths(text: str | None) -> list[str]:
    """§2.8: the section paths of a response, in order (the same sections as §2.2)."""
    return [f.path for f in split_sections(text).files]


def mentioned_paths(text: str | None) -> list[str]:
    """§2.8: every path-shaped token anywhere in the response."""
    return list(_mentioned(text or ""))


@ScanMemo
def _mentioned(text: str) -> tuple[str, ...]:
    return tuple(path_tokens(text))


_SCAN_CACHES: list[Any] = [_split, _mentioned]


def remembered_scan(cache: Any) -> Any:
    """Register a `ScanMemo` of another metric module with `forget_scans`."""
    _SCAN_CACHES.append(cache)
    return cache


def forget_scans() -> None:
    """Drop the remembered splits and path scans (the corpus reader calls it after each
    session, so what is remembered never outlives the session it was computed for)."""
    for cache in _SCAN_CACHES:
        cache.cache_clear()


def path_tokens(text: str | None) -> list[str]:
    """Every match of the path-token pattern (§2.8, §3.3), left to right.

    A run never holds a line break, and one starting a line is found as at the start of a text:
    so only the lines holding a `/` are scanned (most of an answer's lines hold none), and
    their matches, in line order, are the text's.
    """
    if not text or "/" not in text:
        return []
    if "\n" not in text:
        return [m for run in _PATH_RUN.findall(text) for m in PATH_TOKEN.findall(run)]
    return [
        m
        for line in text.split("\n")
        if "/" in line
        for run in _PATH_RUN.findall(line)
        for m in PATH_TOKEN.findall(run)
    ]


# --- envelope view (§4) ---------------------------------------------------------------------

_GLOB_SPECIALS = re.compile(r"([.+^${}()|\[\]\\])")
# Quirk 14 (§9.2): in the reference the `**` sentinel is the six-character text `\u0000`.
_SENTINEL = "\\u0000"
_UNESCAPED_DOT = re.compile(r"\\.|\.", re.S)


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """Turn an `--answer` glob into the reference's regex (§4.3).

    Quirk 1 (§9.2): `?` is not escaped, so it acts as a regex quantifier. A `?` with nothing
    to repeat is an invalid regex; the reference crashes there and evalkit raises `UsageError`.
    Known gap: after a character outside the BMP, ECMAScript's `?` makes only its low
    surrogate optional; here the whole character is.
    """
    body = _GLOB_SPECIALS.sub(r"\\\1", glob)
    body = body.replace("**", _SENTINEL).replace("*", "[^/]*").replace(_SENTINEL, ".*")
    # ECMAScript's `.` excludes \r, U+2028 and U+2029 too: rewrite every unescaped `.` (the
    # sentinel's, and quirk 14's `\.*` when the glob itself held the text `\u0000`).
    body = _UNESCAPED_DOT.sub(lambda m: DOT if m.group(0) == "." else m.group(0), body)
    try:
        return re.compile("^" + body + r"\Z")
    except re.error as exc:
        raise UsageError(f"--answer {glob!r} is not a usable glob ({exc.msg})") from None


@dataclass(frozen=True)
class EnvelopeFile:
    """A path's pooled chars over every response, and whether an answer glob matches it."""

    path: str
    chars: int
    share: float
    answer: bool


@dataclass(frozen=True)
class EnvelopeView:
    """The envelope view of §4.2: ranked files, total, response count, answer-set chars."""

    envelope: int
    responses: int
    files: tuple[EnvelopeFile, ...]
    answer_chars: int
    globs: tuple[str, ...]

    @property
    def answer_share(self) -> float:
        return self.answer_chars / self.envelope if self.envelope else 0.0


def envelope_view(explore_texts: Sequence[str], globs: Iterable[str] = ()) -> EnvelopeView:
    """Pool every response by path and rank by chars, largest first, stable (§4.2)."""
    globs = tuple(globs)
    patterns = [glob_to_regex(g) for g in globs]
    pooled: dict[str, int] = {}
    envelope = 0
    for text in explore_texts:
        for f in split_sections(text).files:
            pooled[f.path] = pooled.get(f.path, 0) + f.chars
            envelope += f.chars
    ranked = sorted(pooled.items(), key=lambda kv: -kv[1])  # stable: ties keep first-seen order
    files = tuple(
        EnvelopeFile(
            path,
            chars,
            chars / envelope if envelope else 0.0,
            any(p.search(path) for p in patterns),
        )
        for path, chars in ranked
    )
    answer_chars = sum(f.chars for f in files if f.answer)
    return EnvelopeView(envelope, len(explore_texts), files, answer_chars, globs)


def format_envelope(view: EnvelopeView, indent: str = "  ", limit: int = 12) -> str:
    """The printed envelope block (§4.4)."""
    out = [
        f"{indent}Explore envelope: {grp(view.envelope)} chars over {view.responses} response(s)"
    ]
    if view.globs:
        top = "true" if view.files and view.files[0].answer else "false"
        out.append(
            f"{indent}  answer-set share: {pct1(view.answer_share)} | top file answers: {top}"
        )
    for f in view.files[:limit]:
        mark = "*" if f.answer else " "
        out.append(f"{indent}  {mark} {rj(pct1(f.share), 6)} {rj(str(f.chars), 6)}  {f.path}")
    if len(view.files) > limit:
        out.append(f"{indent}    … {len(view.files) - limit} more files")
    return "\n".join(out)
