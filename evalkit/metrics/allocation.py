"""Explore allocation efficiency: the share of returned chars that went to cited files (spec §3).

    efficiency = chars explore returned for files the final answer cited / all chars returned

A file is cited through one of two channels (§3.3): its **path** (a path token, an absolute path,
or a bare basename whose extension the envelope shipped), or a **symbol** the file's header lists
as defined, named inside a code span. The symbol channel has three guards, all of which cost
efficiency rather than inflate it: definitions only (no `(calls)` labels), a definition beats a
`variable`/`constant` binding, and a name on three or more files credits none of them.

It is a relative metric: an agent can use a file without naming it, so compare builds on the same
question; never read it as absolute waste.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from evalkit.ecma import grp, js_div, js_trim, pct1, pl, rj
from evalkit.formats.frozen import quick_init
from evalkit.metrics.envelope import (
    ScanMemo,
    Section,
    path_tokens,
    remembered_scan,
    split_sections,
)

__all__ = [
    "SYMBOL_AMBIGUITY_LIMIT",
    "MIN_SYMBOL_LEN",
    "STOPWORDS",
    "Citations",
    "SectionVerdict",
    "CallAllocation",
    "PooledFile",
    "Allocation",
    "answer_citations",
    "norm_path",
    "same_path",
    "same_as_any",
    "PathSet",
    "compute_allocation",
    "format_allocation",
]

Via = Literal["path", "symbol"]

SYMBOL_AMBIGUITY_LIMIT = 3  # a name owned by 3+ returned files identifies none of them (§3.2)
MIN_SYMBOL_LEN = 4  # §3.3
STOPWORDS = frozenset(
    "function return const this true false null void undefined string object number boolean "
    "array class import export async await default type value name data self super else then "
    "case from with when where that they".split()
)
_WEAK_KINDS = frozenset({"variable", "constant"})  # import bindings and aliases (§3.2 step 4)

# §3.3; `\w` and `\b` are ASCII, as in ECMAScript (§10.3). The whole basename is a group too,
# so `findall` gives (basename, extension) pairs without a match object per basename.
_BARE_BASENAME = re.compile(r"\b([\w@+-]+\.([A-Za-z]\w*))", re.ASCII)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*", re.ASCII)


@quick_init
@dataclass(frozen=True)
class Citations:
    """What an answer cites: raw path strings and symbol names, each in first-seen order."""

    paths: tuple[str, ...]
    symbols: tuple[str, ...]


def answer_citations(text: str | None, extensions: set[str] | frozenset[str]) -> Citations:
    """`answerCitations(text, extensions)` (§3.3).

    Paths: every path token, then every bare basename whose extension is in `extensions` (so
    `res.send` is not a file unless an envelope file ended in `.send`). Symbols: identifiers of
    length ≥ 4, not stopwords, inside inline code spans only — prose never counts.
    """
    tokens, basenames, symbols = _citation_scan(text or "")
    paths = dict.fromkeys(tokens)
    for whole, extension in basenames:
        if extension in extensions:
            paths.setdefault(whole)
    return Citations(tuple(paths), symbols)


@remembered_scan
@ScanMemo
def _citation_scan(
    src: str,
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]:
    """What `answer_citations` finds whatever the extensions: path tokens, bare basenames
    (with their lowercased extension), code-span symbols. An answer is scanned once for the
    explore allocation and the read allocation both."""
    basenames = tuple([(whole, ext.lower()) for whole, ext in _BARE_BASENAME.findall(src)])
    symbols: dict[str, None] = {}
    for span in _CODE_SPAN.findall(src):
        for token in _IDENTIFIER.findall(span):
            if len(token) >= MIN_SYMBOL_LEN and token.lower() not in STOPWORDS:
                symbols.setdefault(token)
    return tuple(path_tokens(src)), basenames, tuple(symbols)


def norm_path(p: str | None) -> str:
    """§3.4: backslashes to `/`, one leading `./` removed; a leading `/` is kept."""
    p = (p or "").replace("\\", "/")
    return p[2:] if p.startswith("./") else p


def same_path(a: str | None, b: str | None) -> bool:
    """§3.4: equal, or one ends with `/` + the other. Quirk 3: basenames credit every match."""
    x, y = norm_path(a), norm_path(b)
    if not x or not y:
        return False
    return x == y or x.endswith("/" + y) or y.endswith("/" + x)


def same_as_any(a: str | None, others: Sequence[str | None]) -> bool:
    """`any(same_path(a, b) for b in others)`, normalising `a` once."""
    return PathSet(others).has(a)


class PathSet:
    """Paths to test many others against with `same_path` (an answer's cited paths).

    `same_path(x, y)` holds when `x == y`, when `y` is what follows some `/` of `x`, or when
    `x` is what follows some `/` of `y`. So each path is normalised once and kept with the
    text after each of its slashes (`tails`): a test is a few set lookups, one per slash of the
    tested path, not a comparison with every path of the set. A path longer than
    `_CHARS_INDEXED` or with more than `_SLASHES_INDEXED` slashes (only hostile logs have them)
    is compared the plain way, so the tails stay small.
    """

    __slots__ = ("_exact", "_tails", "_long")

    def __init__(self, paths: Sequence[str | None]) -> None:
        exact: set[str] = set()
        tails: set[str] = set()
        long: list[tuple[str, str]] = []
        for y in map(norm_path, paths):
            if not y:
                continue
            if len(y) > _CHARS_INDEXED or y.count("/") > _SLASHES_INDEXED:
                long.append((y, "/" + y))
                continue
            exact.add(y)
            i = y.find("/")
            while i >= 0:
                tails.add(y[i + 1 :])
                i = y.find("/", i + 1)
        self._exact, self._tails, self._long = exact, tails, long

    def has(self, a: str | None) -> bool:
        """`any(same_path(a, b) for b in paths)`."""
        return self.has_normalised(norm_path(a))

    def has_normalised(self, x: str) -> bool:
        """`has` for a path already through `norm_path` (which is not idempotent: `././a`)."""
        if not x:
            return False
        exact = self._exact
        if x in exact or x in self._tails:  # x == y, or y ends with "/" + x
            return True
        if exact:
            if len(x) > _CHARS_INDEXED or x.count("/") > _SLASHES_INDEXED:
                if any(x.endswith("/" + y) for y in exact):
                    return True
            else:
                i = x.find("/")
                while i >= 0:  # x ends with "/" + y
                    if x[i + 1 :] in exact:
                        return True
                    i = x.find("/", i + 1)
        if self._long:
            slash_x = "/" + x
            for y, slash_y in self._long:
                if x == y or x.endswith(slash_y) or y.endswith(slash_x):
                    return True
        return False


# A path longer than this, or with more slashes, is compared, not indexed: the tails of an
# indexed path hold at most 64 × 4096 characters.
_SLASHES_INDEXED = 64
_CHARS_INDEXED = 4096


@quick_init
@dataclass(frozen=True)
class SectionVerdict:
    """One section of one call, with the verdict for its path."""

    path: str
    chars: int
    symbols: tuple[str, ...]
    via: Via | None
    symbol: str | None


@quick_init
@dataclass(frozen=True)
class CallAllocation:
    """Allocation of one call (§3.2 step 6). `index` is 1-based over calls with sections;
    `source` is the 0-based position of its text among the explore texts given (texts without
    a section are not calls, so the two differ)."""

    index: int
    envelope: int
    used: int
    used_path: int
    files: tuple[SectionVerdict, ...]
    source: int = -1

    @property
    def efficiency(self) -> float:
        return js_div(self.used, self.envelope) if self.envelope else 0.0

    @property
    def cited_files(self) -> int:
        """Sections with a verdict (a file twice in one call counts twice)."""
        return sum(1 for f in self.files if f.via)


@quick_init
@dataclass(frozen=True)
class PooledFile:
    """A path pooled over the session: chars summed over every occurrence (§3.2 step 7).

    `calls` counts sections, not distinct calls: a path returned twice in one response and once
    in another has `calls = 3`, as in the reference.
    """

    path: str
    chars: int
    calls: int
    via: Via | None
    symbol: str | None


@quick_init
@dataclass(frozen=True)
class Allocation:
    """`computeAllocation` result (§3.5). Fractions, not percents; chars are UTF-16 units."""

    calls: tuple[CallAllocation, ...]
    files: tuple[PooledFile, ...]
    envelope: int
    used: int
    used_path: int
    has_answer: bool

    @property
    def efficiency(self) -> float:
        return js_div(self.used, self.envelope) if self.envelope else 0.0

    @property
    def efficiency_path(self) -> float:
        return js_div(self.used_path, self.envelope) if self.envelope else 0.0

    @property
    def files_returned(self) -> int:
        return len(self.files)

    @property
    def files_used(self) -> int:
        return sum(1 for f in self.files if f.via)

    @property
    def sections(self) -> int:
        return sum(len(c.files) for c in self.calls)


def _extensions(calls: Sequence[Sequence[Section]]) -> frozenset[str]:
    # §3.2 step 2, quirk 4: the text after the last dot anywhere in the path (`a.b/Makefile`).
    out = set()
    for sections in calls:
        for s in sections:
            dot = s.path.rfind(".")
            if dot > 0:
                out.add(s.path[dot + 1 :].lower())
    return frozenset(out)


def compute_allocation(explore_texts: Sequence[str], answer_text: str | None) -> Allocation:
    """`computeAllocation(exploreTexts, answerText)` (§3.2).

    Args:
        explore_texts: Answered explore result texts in stream order (§1.6); texts without a
            file section are not calls.
        answer_text: The final answer (§1.7).
    """
    split = [(i, env.files) for i, env in enumerate(map(split_sections, explore_texts))]
    calls = [files for _, files in split if files]
    sources = [i for i, files in split if files]
    cites = answer_citations(answer_text, _extensions(calls))

    strong: dict[str, dict[str, None]] = {}
    weak: dict[str, dict[str, None]] = {}
    for sections in calls:
        for s in sections:
            for sym in s.symbols:
                owners = weak if sym.kind in _WEAK_KINDS else strong
                owners.setdefault(sym.name, {}).setdefault(s.path)

    # The symbol channel's verdict of each path, read off once: the first cited symbol, in the
    # answer's order, whose owners (its definitions, else its weak bindings) are fewer than
    # `SYMBOL_AMBIGUITY_LIMIT` and include the path.
    by_symbol: dict[str, str] = {}
    for name in cites.symbols:
        owners = strong.get(name) or weak.get(name)
        if owners and len(owners) < SYMBOL_AMBIGUITY_LIMIT:
            for owner in owners:
                by_symbol.setdefault(owner, name)

    verdicts: dict[str, tuple[Via | None, str | None]] = {}
    cited = PathSet(cites.paths)  # normalised once, not once per path

    def verdict(path: str) -> tuple[Via | None, str | None]:
        found = verdicts.get(path)
        if found is None:
            if cited.has(path):  # the path channel first (§3.2 step 5)
                found = ("path", None)
            else:
                name = by_symbol.get(path)
                found = (None, None) if name is None else ("symbol", name)
            verdicts[path] = found
        return found

    call_results = []
    pooled: dict[str, list] = {}
    for index, (sections, source) in enumerate(zip(calls, sources, strict=True), start=1):
        files = []
        envelope = used = used_path = 0  # integer sums, in section order
        for s in sections:
            via, symbol = verdict(s.path)
            files.append(
                SectionVerdict(s.path, s.chars, tuple([x.name for x in s.symbols]), via, symbol)
            )
            entry = pooled.setdefault(s.path, [0, 0, via, symbol])
            entry[0] += s.chars
            entry[1] += 1
            envelope += s.chars
            if via:
                used += s.chars
                if via == "path":
                    used_path += s.chars
        call_results.append(
            CallAllocation(
                index=index,
                envelope=envelope,
                used=used,
                used_path=used_path,
                files=tuple(files),
                source=source,
            )
        )
    ranked = sorted(pooled.items(), key=lambda kv: -kv[1][0])  # stable: ties keep first-seen order
    pooled_files = tuple(PooledFile(path, c, n, via, sym) for path, (c, n, via, sym) in ranked)
    return Allocation(
        calls=tuple(call_results),
        files=pooled_files,
        envelope=sum(f.chars for f in pooled_files),
        used=sum(f.chars for f in pooled_files if f.via),
        used_path=sum(f.chars for f in pooled_files if f.via == "path"),
        has_answer=js_trim(answer_text or "") != "",
    )


NOTE = (
    "note: relative metric — attribution is by citation, so compare builds on the same "
    "question, not absolutes."
)


def format_allocation(a: Allocation, indent: str = "  ", limit: int = 12) -> str:
    """The printed allocation block, character for character (§3.6)."""
    if not a.calls:
        return f"{indent}Explore allocation: no codegraph_explore responses with source sections"
    n, fr = len(a.calls), a.files_returned
    out = [
        f"{indent}Explore allocation — share of returned bytes the answer used "
        f"({n} {pl(n, 'call')}, {fr} {pl(fr, 'file')}):",
        f"{indent}  efficiency {rj(pct1(a.efficiency), 6)}  {grp(a.used)} of {grp(a.envelope)} chars"
        f"   ({a.files_used}/{fr} files cited; path-cited alone {pct1(a.efficiency_path)})",
    ]
    if not a.has_answer:
        out.append(
            f"{indent}  !! no final answer text found — efficiency is not meaningful for this run"
        )
    for c in a.calls:
        out.append(
            f"{indent}  call {c.index}: {rj(pct1(c.efficiency), 6)}  {grp(c.used)}/"
            f"{grp(c.envelope)} chars  {c.cited_files}/{len(c.files)} files"
        )
    for f in a.files[:limit]:
        share = js_div(f.chars, a.envelope) if a.envelope else 0.0
        why = f"symbol `{f.symbol}`" if f.via == "symbol" else ("path" if f.via else "—")
        out.append(
            f"{indent}  {'*' if f.via else ' '} {rj(pct1(share), 6)} "
            f"{rj(str(f.chars), 6)}  {f.path}  {why}"
        )
    if len(a.files) > limit:
        out.append(f"{indent}    … {len(a.files) - limit} more files")
    out.append(f"{indent}  {NOTE}")
    return "\n".join(out)
