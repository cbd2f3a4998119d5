"""Residual context occupancy (CG-7): what each tool family still occupies at the end (§6).

For request k, `ctx_k = input + cache_read + cache_creation` tokens is the exact size of its whole
prompt, so `ctx_k − ctx_{k−1}` is exactly what was appended in between. Tool results are priced
with a chars-per-token ratio calibrated on gaps dominated by tool results; content that leaves the
window (a compaction event, or a drop in context without one) is removed oldest first.

Two points follow the reference's code rather than its docs: subagent assistant events add their
own requests to the one timeline (Decision 5, §6.9), and the printed block puts "of which fixed"
right after "final context" (Decision 6).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.ecma import (
    JS_WHITESPACE,
    fix,
    grp,
    jround,
    js_add,
    js_div,
    js_json,
    js_truthy,
    lj,
    number_str,
    pl,
    rj,
    utf16_len,
)
from evalkit.errors import TranscriptError
from evalkit.formats.claude_code.events import at_event
from evalkit.formats.claude_code.fastjson import stringify_units
from evalkit.formats.claude_code.index import SessionIndex, index_events
from evalkit.formats.claude_code.transcripts import family, message_key, result_text
from evalkit.formats.frozen import quick_init
from evalkit.formats.profiles import CODEGRAPH, ToolProfile

__all__ = [
    "FAMILIES",
    "FILE_ACCESS",
    "DEFAULT_WINDOW_TOKENS",
    "Gap",
    "Occupancy",
    "compute_occupancy",
    "occupancy_of_timeline",
    "Req",
    "Add",
    "Compact",
    "format_occupancy",
    "window_tokens_from_env",
    "js_number",
    "request_count",
]

# §1.4: the occupancy families, in the order they are tested and printed (the default profile's;
# another profile puts its own tool-under-test label first: `ToolProfile.families`).
FAMILIES: tuple[str, ...] = CODEGRAPH.families
FILE_ACCESS: tuple[str, ...] = ("read", "search", "bash")
DEFAULT_WINDOW_TOKENS = 200000
FALLBACK_CHARS_PER_TOKEN = 3.0


# --- the timeline (§6.2) ------------------------------------------------------------------------


# Slotted, not frozen: a session's timeline holds one entry per content block, and a frozen
# dataclass costs twice as much to build. Nothing changes an entry once it is made.
@dataclass(slots=True)
class _Req:
    ctx: float


@dataclass(slots=True)
class _Add:
    chars: float  # NaN for a block with no length (§9.1 "odd field values")
    family: str | None


@dataclass(slots=True)
class _Compact:
    pass


# The timeline's entries, for another format's timeline (`occupancy_of_timeline`).
Req, Add, Compact = _Req, _Add, _Compact


def _usage_tokens(usage: Any, fields: Sequence[str], path: str) -> float:
    total: float = 0
    if not isinstance(usage, dict):
        return total
    if len(fields) == 3:
        a, b, c = map(usage.get, fields)
        # The usual usage: with no part negative, every partial sum lies between 0 and the
        # total, so a total within 2^53 is what the additions below give, one by one.
        if type(a) is int and type(b) is int and type(c) is int:
            if a >= 0 and b >= 0 and c >= 0 and a + b + c <= _MAX_SAFE:
                return a + b + c
    for name in fields:
        value = usage.get(name)
        if type(value) is int and type(total) is int:  # the usual case, as js_add would add
            added = total + value  # (a zero is falsy and skipped: adding it changes nothing)
            if -_MAX_SAFE <= added <= _MAX_SAFE:
                total = added
                continue
        if not js_truthy(value):
            continue
        if not isinstance(value, int | float):
            # The reference would concatenate strings here; evalkit refuses to invent a number.
            raise TranscriptError(path, f"usage.{name} is not a number: {js_json(value)}")
        total = js_add(total, value)  # a double sum, rounded past 2^53 as in ECMAScript
    return total


_CTX_FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_MAX_SAFE = 2**53


def _js_length(x: Any) -> float:
    """`(x || "").length`: 0 when falsy, UTF-16 length of a string, element count of an array,
    and `undefined` (NaN once summed) for anything else (§9.1)."""
    if not js_truthy(x):
        return 0
    if isinstance(x, str):
        return utf16_len(x)
    if isinstance(x, list):
        return len(x)
    return math.nan


def _block_chars(block: Any, path: str) -> float:
    """§6.2: the chars one assistant content block adds to the window."""
    if block is None:
        raise TranscriptError(
            path,
            "null block in an assistant message's content (the reference harness crashes here)",
        )
    if isinstance(block, dict):
        btype = block.get("type")
        if btype == "text":
            return _js_length(block.get("text"))
        if btype == "thinking":
            return _js_length(block.get("thinking"))
        if btype == "tool_use":
            raw = block.get("input")
            return stringify_units({} if raw is None else raw) + _js_length(block.get("name"))
    return stringify_units(block)


def _timeline(
    index: SessionIndex, path: str, profile: ToolProfile = CODEGRAPH
) -> tuple[list[Any], int]:
    entries: list[Any] = []
    add = entries.append
    compactions = 0
    at = -1
    try:
        for view in index.timeline:  # compactions, and assistant and user events with a message
            at = view.index
            etype = view.type
            if etype == "system":
                add(_Compact())
                compactions += 1
                continue
            message = view.message
            if etype == "assistant":
                if view.first:  # the first event of a request (`message_key`, §6.2)
                    add(_Req(_usage_tokens(message.get("usage"), _CTX_FIELDS, path)))
                content = view.content
                if type(content) is list:
                    for block in content:
                        if type(block) is dict and block.get("type") == "text":
                            text = block.get("text")  # `_block_chars` inlined for text blocks
                            if type(text) is str:
                                add(_Add(utf16_len(text), None))
                                continue
                        add(_Add(_block_chars(block, path), None))
                    continue
                if not js_truthy(content):
                    continue
                if isinstance(content, str):
                    # Walked code point by code point, each priced as its own JSON string (§6.2).
                    for ch in content:
                        add(_Add(utf16_len(js_json(ch)), None))
                else:
                    raise TranscriptError(
                        path,
                        "assistant message content is neither an array nor a "
                        "string (the reference harness crashes here)",
                    )
            else:  # user
                content = view.content
                if type(content) is list:
                    results = iter(view.results)
                    for block in content:
                        if block is None:
                            raise view.null  # type: ignore[misc]
                        if type(block) is dict and block.get("type") == "tool_result":
                            r = next(results)
                            if r.error is not None:
                                raise r.error
                            name = r.raw_name
                            if type(name) is not str or not name:
                                fam = family(name or "", profile)
                            else:
                                fam = profile.family(name)  # what `family` does for a name
                            add(_Add(r.chars, fam))
                        else:
                            add(_Add(utf16_len(result_text([block], path=path)), None))
                elif isinstance(content, str):
                    add(_Add(utf16_len(content), None))
    except TranscriptError as exc:
        at_event(exc, at)  # which event, so the session can name its segment file
        raise
    return entries, compactions


# --- gaps, calibration, dispersion, eviction (§6.3–6.6) ----------------------------------------


@quick_init
@dataclass(frozen=True)
class Gap:
    """What was appended between two consecutive requests (§6.3).

    Attributes:
        delta: `ctx_k − ctx_{k−1}` in tokens (negative when the window shed content).
        chars: Chars of every block added in between (NaN when a block has no length, §9.1).
        tool_chars: Chars of the tool results among them.
        by_family: Tool-result chars per family, in first-seen order within the gap.
        compacted: A compaction event lies between the two requests.
    """

    delta: float
    chars: float
    tool_chars: float
    by_family: tuple[tuple[str, float], ...]
    compacted: bool


def _gaps(entries: list[Any]) -> tuple[list[Gap], list[float]]:
    gaps: list[Gap] = []
    reqs: list[float] = []
    chars: float = 0
    tool_chars: float = 0
    by_family: dict[str, float] = {}
    compacted = False
    for entry in entries:
        if type(entry) is _Add:  # most entries: the `else` branch below, taken first
            chars += entry.chars
            fam = entry.family
            if fam is not None:
                tool_chars += entry.chars
                by_family[fam] = by_family.get(fam, 0) + entry.chars
            continue
        if isinstance(entry, _Req):
            if reqs:
                gaps.append(
                    Gap(
                        js_add(entry.ctx, -reqs[-1]),
                        chars,
                        tool_chars,
                        tuple(by_family.items()),
                        compacted,
                    )
                )
            reqs.append(entry.ctx)
            chars = tool_chars = 0
            by_family = {}
            compacted = False
        elif isinstance(entry, _Compact):
            compacted = True
        else:
            chars += entry.chars
            if entry.family is not None:
                tool_chars += entry.chars
                by_family[entry.family] = by_family.get(entry.family, 0) + entry.chars
    return gaps, reqs


def _calibrate(gaps: list[Gap]) -> tuple[float, bool]:
    """§6.4: chars per token over clean tool-dominated gaps, else all chars, else 3.0."""
    clean = [
        g
        for g in gaps
        if not g.compacted
        and g.delta > 0
        and g.chars > 500
        and js_div(g.tool_chars, g.chars) >= 0.8
    ]
    ratios = sorted(js_div(g.tool_chars, g.delta) for g in clean)
    lower_median = ratios[(len(ratios) - 1) // 2] if ratios else 0
    sum_d: float = 0
    sum_c: float = 0
    for g in clean:
        # A gap in which the window also shed content pushes the ratio up: leave it out.
        if lower_median > 0 and js_div(g.tool_chars, g.delta) > 1.5 * lower_median:
            continue
        sum_d = js_add(sum_d, g.delta)
        sum_c = js_add(sum_c, g.tool_chars)
    if sum_d == 0:
        for g in gaps:
            if not g.compacted and g.delta > 0 and g.chars > 0:
                sum_d = js_add(sum_d, g.delta)
                sum_c = js_add(sum_c, g.chars)
    if sum_d > 0:
        return js_div(sum_c, sum_d), True  # true even in the all-chars fallback (§9.2 row 7)
    return FALLBACK_CHARS_PER_TOKEN, False


def _dispersion(gaps: list[Gap], chars_per_token: float) -> float | None:
    """§6.5: lower median relative error of the calibrated price on near-pure tool gaps."""
    errs = []
    for g in gaps:
        # Written as skip tests, so a NaN `chars` gap stays in (§9.1): every NaN comparison is false.
        if g.compacted or g.delta <= 0 or g.chars <= 500 or js_div(g.tool_chars, g.chars) < 0.95:
            continue
        errs.append(js_div(abs(js_div(g.tool_chars, chars_per_token) - g.delta), g.delta))
    errs.sort()
    return errs[(len(errs) - 1) >> 1] if errs else None


def _attribute(
    gaps: list[Gap], chars_per_token: float, families: tuple[str, ...] = FAMILIES
) -> tuple[dict[str, float], dict[str, float], float]:
    """§6.6: contributed tokens per family, the FIFO residual and the evicted total (unrounded)."""
    contributed: dict[str, float] = dict.fromkeys(families, 0)
    queue: list[list[Any]] = []  # [family, tokens], one entry per family per gap
    evicted: float = 0
    for g in gaps:
        if g.compacted:
            cleared: float = 0
            for _, tok in queue:
                cleared += tok
            evicted += cleared
            queue = []
        tool_tokens: float = 0
        for fam, ch in g.by_family:
            tok = js_div(ch, chars_per_token)
            tool_tokens += tok
            contributed[fam] += tok
            queue.append([fam, tok])
        shortfall = tool_tokens - g.delta
        if not g.compacted and shortfall > max(200, 0.05 * tool_tokens):
            # Context dropped without a compaction event (micro-compaction): evict oldest first.
            left = shortfall
            while left > 0 and queue:
                head = queue[0]
                if head[1] <= left:
                    evicted += head[1]
                    left -= head[1]
                    queue.pop(0)
                else:
                    head[1] -= left
                    evicted += left
                    left = 0
    residual: dict[str, float] = dict.fromkeys(families, 0)
    for fam, tok in queue:
        residual[fam] += tok
    return contributed, residual, evicted


# --- result -------------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True)
class Occupancy:
    """§6.7: the residual context occupancy of one session.

    Token figures are rounded as the reference rounds them (`jround`); the unrounded values are
    kept in `residual_exact` / `contributed_exact` for analysis.

    Attributes:
        final_context: ctx of the last request (0 with none).
        base_context: ctx of the first request: system prompt + tool schemas + question.
        chars_per_token: The calibrated price (3.0 when nothing could be calibrated).
        calibrated: False only for the 3.0 fallback.
        dispersion: Lower-median relative error of the price, or None.
        residual: Tokens still in the window at the end, per family (rounded).
        contributed: Tokens each family ever added (rounded).
        residual_file_access / contributed_file_access: read + search + bash, rounded from the
            unrounded sum (can differ by one from the sum of the rounded parts).
        chars: Tool-result chars per family, every result counted (also outside any gap).
        results: Tool results per family.
        evicted: Tokens removed by compaction or FIFO eviction (rounded).
        compactions: Compaction events.
        turns: Requests (distinct assistant `message.id`s).
        window_tokens: The window the share-of-window column uses.
        gaps: The gaps between consecutive requests.
        families: The families, tool under test first (its label names the first row).
    """

    final_context: float
    base_context: float
    chars_per_token: float
    calibrated: bool
    dispersion: float | None
    residual: dict[str, int]
    contributed: dict[str, int]
    residual_file_access: int
    contributed_file_access: int
    chars: dict[str, int]
    results: dict[str, int]
    evicted: int
    compactions: int
    turns: int
    window_tokens: float
    residual_exact: dict[str, float]
    contributed_exact: dict[str, float]
    gaps: tuple[Gap, ...]
    families: tuple[str, ...] = FAMILIES

    @property
    def tool_family(self) -> str:
        """The tool under test's family (`codegraph` by default)."""
        return self.families[0]

    @property
    def base_tokens(self) -> float:
        """The `base (prompt+prose)` row: what the rounded residuals leave of the final context."""
        return max(0, self.final_context - sum(self.residual[f] for f in self.families))

    @property
    def dropped(self) -> int:
        """Rounded tokens contributed but no longer resident (decides the `evicted` note)."""
        tool = self.tool_family
        return (
            self.contributed[tool] + self.contributed_file_access + self.contributed["other"]
        ) - (self.residual[tool] + self.residual_file_access + self.residual["other"])

    def to_dict(self) -> dict[str, Any]:
        """The `occupancy` object of `evalkit run --json`."""
        return {
            "chars_per_token": self.chars_per_token,
            "calibrated": self.calibrated,
            "dispersion": self.dispersion,
            "final_context": self.final_context,
            "base_context": self.base_context,
            "residual": dict(self.residual),
            "contributed": dict(self.contributed),
            "residual_file_access": self.residual_file_access,
            "evicted": self.evicted,
            "compactions": self.compactions,
            "turns": self.turns,
        }


def compute_occupancy(
    events: Sequence[dict[str, Any]],
    *,
    window_tokens: float = DEFAULT_WINDOW_TOKENS,
    path: str = "(transcript)",
    profile: ToolProfile = CODEGRAPH,
    index: SessionIndex | None = None,
) -> Occupancy:
    """§6.2–6.7: residual and contributed tokens per tool family at the end of the session.

    Args:
        events: Every event of the session (all threads, all segments), in order.
        window_tokens: The nominal window for the share-of-window column (§10.7); use
            `window_tokens_from_env()` to honour `CG_WINDOW_TOKENS` as the reference does.
        path: Named in errors.
        profile: Forms the families (default: the reference's, `codegraph` first).
        index: `index_events(events)` when the caller built it already (the session does).

    Raises:
        TranscriptError: On inputs the reference crashes on (§9.1 cases 2 and 4), and on a
            non-numeric usage count.
    """
    if index is None:
        index = index_events(events, path=path)
    entries, compactions = _timeline(index, path, profile)
    return occupancy_of_timeline(entries, compactions, window_tokens, profile.families)


def occupancy_of_timeline(
    entries: Sequence[Any],
    compactions: int,
    window_tokens: float,
    families: tuple[str, ...],
) -> Occupancy:
    """§6.3–6.7 over a timeline already built: gaps, calibration, dispersion, FIFO attribution
    and the rounded result. `entries` are `Req(ctx)`, `Add(chars, family)` and `Compact()` in
    order; every family an `Add` names must be one of `families`. The Codex rollout residual
    (`evalkit.metrics.agent_occupancy`) builds its own timeline and shares this arithmetic."""
    gaps, reqs = _gaps(list(entries))
    chars_per_token, calibrated = _calibrate(gaps)
    dispersion = _dispersion(gaps, chars_per_token)
    contributed, residual, evicted = _attribute(gaps, chars_per_token, families)
    chars: dict[str, int] = dict.fromkeys(families, 0)
    results: dict[str, int] = dict.fromkeys(families, 0)
    for entry in entries:
        if (type(entry) is _Add or isinstance(entry, _Add)) and entry.family is not None:
            chars[entry.family] += entry.chars
            results[entry.family] += 1
    return Occupancy(
        final_context=reqs[-1] if reqs else 0,
        base_context=reqs[0] if reqs else 0,
        chars_per_token=chars_per_token,
        calibrated=calibrated,
        dispersion=dispersion,
        residual={f: jround(residual[f]) for f in families},
        contributed={f: jround(contributed[f]) for f in families},
        residual_file_access=jround(_sum(residual[f] for f in FILE_ACCESS)),
        contributed_file_access=jround(_sum(contributed[f] for f in FILE_ACCESS)),
        chars=chars,
        results=results,
        evicted=jround(evicted),
        compactions=compactions,
        turns=len(reqs),
        window_tokens=window_tokens,
        residual_exact=residual,
        contributed_exact=contributed,
        gaps=tuple(gaps),
        families=families,
    )


def _sum(values: Any) -> float:
    total: float = 0  # summed from 0 in the stated order (§10.4)
    for v in values:
        total += v
    return total


def request_count(events: Sequence[dict[str, Any]]) -> int:
    """Distinct non-empty assistant `message.id`s: the reference's `turns` (§1.11, §6.2)."""
    seen: set[Any] = set()
    n = 0
    for event in events:
        message = event.get("message")
        if event.get("type") != "assistant" or not isinstance(message, dict):
            continue
        key = message_key(message.get("id"))
        if key is not None and key not in seen:
            seen.add(key)
            n += 1
    return n


# --- CG_WINDOW_TOKENS (§10.7) ------------------------------------------------------------------

_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\Z")
_RADIX = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)\Z")


def js_number(text: str) -> float:
    """ECMAScript `Number(string)`: trimmed; decimal, exponent, 0x/0o/0b, Infinity; else NaN."""
    s = text.strip(JS_WHITESPACE)
    if s == "":
        return 0.0
    if _RADIX.match(s):
        return float(int(s[2:], {"x": 16, "o": 8, "b": 2}[s[1].lower()]))
    if _DECIMAL.match(s):
        if s.lstrip("+-") == "Infinity":
            return -math.inf if s.startswith("-") else math.inf
        return float(s)
    return math.nan


def window_tokens_from_env(environ: Mapping[str, str] | None = None) -> float:
    """§6.7/§10.7: `CG_WINDOW_TOKENS` as `Number()` converts it, or 200000 when unset or empty."""
    env = os.environ if environ is None else environ
    raw = env.get("CG_WINDOW_TOKENS")
    if not raw:
        return DEFAULT_WINDOW_TOKENS
    return js_number(raw)


# --- printed block (§6.8) -----------------------------------------------------------------------


def _js_round(x: float) -> float:
    return x if not math.isfinite(x) else jround(x)


_ROWS = (
    (None, None),  # the tool under test: its family label names the row
    ("Read", ("read",)),
    ("Grep/Glob", ("search",)),
    ("Bash", ("bash",)),
    ("→ file-access", FILE_ACCESS),
    ("other tools", ("other",)),
)


def format_occupancy(
    result: Occupancy, indent: str = "  ", window_tokens: float | None = None
) -> str:
    """§6.8 `formatOccupancy`, character for character, in the code's line order (Decision 6).

    Args:
        result: From `compute_occupancy`.
        indent: The block's indent prefix.
        window_tokens: Overrides `result.window_tokens` for the share-of-window column.
    """
    i = indent
    win = result.window_tokens if window_tokens is None else window_tokens
    w_k = number_str(_js_round(js_div(win, 1000)))
    ctx = result.final_context

    def pct_ctx(t: float) -> str:
        return fix(js_div(t, ctx) * 100, 1) if ctx > 0 else "0.0"

    def pct_win(t: float) -> str:
        return fix(js_div(t, win) * 100, 1)

    def tok(t: float) -> str:
        return rj(grp(t) + " tok", 12)

    out = [
        f"{i}Residual context occupancy at end of run:",
        f"{i}  {lj('final context', 18)}{tok(ctx)}  {rj(pct_win(ctx) + '%', 6)} of {w_k}k window",
        f"{i}  {lj('  of which fixed', 18)}{tok(result.base_context)}  system + tool schemas + "
        "question, before any tool answered",
    ]
    for label, fams in _ROWS:
        if fams is None:
            label, fams = result.tool_family, (result.tool_family,)
        t = result.residual_file_access if fams == FILE_ACCESS else result.residual[fams[0]]
        ch = sum(result.chars[f] for f in fams)
        n = sum(result.results[f] for f in fams)
        out.append(
            f"{i}  {lj(label, 18)}{tok(t)}  {rj(pct_ctx(t) + '%', 6)} of ctx  "
            f"{rj(pct_win(t) + '%', 6)} of {w_k}k win   ({grp(ch)} chars, {n} "
            f"{pl(n, 'result')})"
        )
    base = result.base_tokens
    out.append(
        f"{i}  {lj('base (prompt+prose)', 18)}{tok(base)}  {rj(pct_ctx(base) + '%', 6)} of "
        f"ctx  {rj(pct_win(base) + '%', 6)} of {w_k}k win"
    )
    measured = "measured" if result.calibrated else "(FALLBACK — no clean gap to calibrate on)"
    disp = f" ±{fix(result.dispersion * 100, 1)}%" if result.dispersion is not None else ""
    evicted = (
        f" · evicted {grp(result.evicted)} tok" if result.evicted > 0 or result.dropped > 1 else ""
    )
    out.append(
        f"{i}  measure: {fix(result.chars_per_token, 2)} chars/tok {measured}{disp} · turns "
        f"{result.turns} · compactions {result.compactions}{evicted}"
    )
    return "\n".join(out)
