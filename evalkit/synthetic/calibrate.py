"""Solve the bundled corpus's numbers before any text is written (issue 4, Build 3).

The published figures (spec §12.1–12.3) constrain sessions, calls and sections at once: slice
quantiles over per-session efficiencies, a per-call median and p25, pass/repo medians, a few
per-run values, pooled byte shares, and the exact example session of the seed. This module fixes,
for every session, call and section, the integers that realise them: section chars and the verdict
each section is meant to get (`path`, `symbol` or none). `render.py` then writes transcripts whose
sections have exactly those UTF-16 lengths and answers that cite exactly those files.

Nothing here is read back by the sweep: the sweep recomputes every number from the transcripts
through `evalkit.session.parse_session`. `check_plan` recomputes the published statistics from
the plan with the sweep's quantile rules (§8.1), so a change here that breaks a figure fails
before a single file is written.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalkit.ecma import pct1
from evalkit.metrics.allocation import MIN_SYMBOL_LEN, STOPWORDS
from evalkit.synthetic.catalog import FileInfo, catalog, file_info
from evalkit.tables.quantile import median, quantile

__all__ = [
    "SectionPlan",
    "CallPlan",
    "SessionPlan",
    "PASSES",
    "CAMPAIGN",
    "plan_corpus",
    "check_plan",
    "plan_stats",
]

MIN_SECTION = 240  # UTF-16 units: a header, fences and a few numbered lines.


@dataclass
class SectionPlan:
    """One file section of one call: its path, chars, and the verdict the answer must give it."""

    path: str
    chars: int
    verdict: str  # "path", "symbol" or "" (not cited)
    symbol: str = ""  # the crediting symbol, for a symbol verdict


@dataclass
class CallPlan:
    sections: list[SectionPlan]

    @property
    def envelope(self) -> int:
        return sum(s.chars for s in self.sections)

    @property
    def used(self) -> int:
        return sum(s.chars for s in self.sections if s.verdict)

    @property
    def used_path(self) -> int:
        return sum(s.chars for s in self.sections if s.verdict == "path")


@dataclass
class SessionPlan:
    """A session: where it lives, what kind it is, and its solved calls.

    `segments` are paths relative to the corpus root; `style` picks the behaviour script in
    `render.py` (which follow-ups, subagents, result events).
    """

    key: str
    segments: list[str]
    repo: str
    pass_: str = ""
    arm: str = ""
    run: int = 0
    style: str = "ab"
    target: float = 1.0  # intended session efficiency (a fraction)
    envelope: int = 0
    used: int = 0
    used_path: int = 0
    n_calls: int = 1
    reads: int = 0
    duration: float = 30.0
    calls: list[CallPlan] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def multi(self) -> bool:
        return len(self.segments) > 1

    @property
    def efficiency(self) -> float:
        e = sum(c.envelope for c in self.calls)
        return sum(c.used for c in self.calls) / e if e else 0.0


# ---------------------------------------------------------------------------------------------
# The published A/B passes (spec §7.6, §12.2, §12.6). Per run, in run order: explore calls,
# Read calls, duration (s), intended efficiency (%). Explore counts, Reads and durations are the
# §12.6 figures; efficiencies realise the §12.2 medians and the quoted per-run values, and are
# chosen so that the slices of §12.1 come out (see `check_plan`).
# ---------------------------------------------------------------------------------------------

Run = tuple[int, int, float, float]

PASSES: dict[tuple[str, str, str], list[Run]] = {
    # CG-15: three runs per arm on every repo.
    ("cg15", "express", "baseline"): [(2, 1, 23, 80.5), (2, 1, 28, 82.0), (2, 1, 27, 83.0)],
    ("cg15", "express", "new"): [(1, 0, 18, 100.0), (4, 4, 52, 100.0), (2, 0, 24, 89.9)],
    ("cg15", "excalidraw", "baseline"): [(3, 0, 33, 81.0), (3, 0, 34, 90.1), (4, 0, 39, 93.0)],
    ("cg15", "excalidraw", "new"): [(2, 0, 23, 88.0), (3, 0, 24, 92.8), (2, 0, 32, 96.0)],
    ("cg15", "client-go", "baseline"): [(3, 0, 48, 78.0), (2, 0, 49, 84.1), (3, 0, 52, 97.7)],
    ("cg15", "client-go", "new"): [(2, 0, 39, 74.0), (2, 0, 50, 80.8), (6, 0, 61, 95.6)],
    # CG-21: express and excalidraw 6 runs (two pooled batches of 3, runs 1-6 in one directory).
    ("cg21", "express", "baseline"): [
        (2, 1, 19, 79.5),
        (1, 1, 23, 81.5),
        (2, 0, 24, 84.1),
        (2, 1, 25, 84.1),
        (2, 1, 27, 88.0),
        (2, 0, 29, 87.5),
    ],
    ("cg21", "express", "new"): [
        (2, 0, 18, 89.5),
        (2, 0, 20, 98.5),
        (2, 0, 21, 100.0),
        (2, 0, 22, 100.0),
        (1, 0, 25, 100.0),
        (1, 0, 30, 100.0),
    ],
    ("cg21", "excalidraw", "baseline"): [
        (2, 0, 24, 76.0),
        (4, 0, 25, 88.8),
        (2, 0, 26, 91.3),
        (2, 0, 27, 91.3),
        (2, 0, 30, 94.0),
        (2, 0, 45, 95.2),
    ],
    ("cg21", "excalidraw", "new"): [
        (3, 0, 28, 87.0),
        (2, 0, 31, 95.0),
        (2, 0, 34, 97.5),
        (3, 0, 35, 97.5),
        (4, 0, 38, 99.0),
        (2, 0, 43, 100.0),
    ],
    ("cg21", "client-go", "baseline"): [(4, 0, 40, 55.0), (2, 0, 43, 67.1), (4, 0, 49, 80.0)],
    ("cg21", "client-go", "new"): [(2, 0, 44, 88.5), (4, 0, 45, 95.0), (4, 0, 52, 99.0)],
    # CG-22: client-go 6 runs (two pooled batches of 3). Express and excalidraw per-run values
    # are the published ones (§12.2); run-baseline-1 is the seed's example block (§3.6).
    ("cg22", "express", "baseline"): [(2, 1, 26, 81.92), (2, 1, 24, 82.02), (2, 1, 30, 81.92)],
    ("cg22", "express", "new"): [(1, 0, 18, 100.0), (2, 0, 35, 92.5), (2, 0, 24, 100.0)],
    ("cg22", "excalidraw", "baseline"): [(4, 0, 21, 89.3), (2, 0, 26, 85.6), (2, 0, 32, 90.8)],
    ("cg22", "excalidraw", "new"): [(2, 0, 26, 87.4), (2, 0, 26, 79.2), (2, 0, 27, 78.2)],
    ("cg22", "client-go", "baseline"): [
        (2, 0, 31, 77.0),
        (2, 0, 33, 80.0),
        (2, 0, 35, 86.6),
        (2, 2, 35, 86.6),
        (2, 0, 38, 88.0),
        (2, 0, 42, 95.6),
    ],
    ("cg22", "client-go", "new"): [
        (3, 0, 30, 88.0),
        (3, 0, 33, 87.0),
        (2, 0, 36, 93.3),
        (4, 0, 37, 93.3),
        (2, 0, 40, 96.0),
        (2, 0, 46, 98.0),
    ],
}

# Typical envelope per explore call, by repo (spec §7.6 budget tiers: express small, the others
# medium), before the pooled-share tuning below.
PER_CALL = {"express": 10_000, "excalidraw": 14_500, "client-go": 15_500}

# The 7-repo campaign (spec §7.1, §12.4), with-arm sessions under ab-readme/<repo>/run<n>/:
# calls per run (run1..run4), intended efficiency (%) per run, the repo's pooled efficiency and
# envelope as published (§12.4), and the sufficiency buckets of its answered calls.
CAMPAIGN: dict[str, dict] = {
    "vscode": dict(
        calls=[8, 7, 6, 5],
        eff=[57.4, 61.0, 64.0, 70.0],
        pooled=63.2,
        env=442_000,
        buckets=dict(again=21, read_returned=0, read_missed=1, search=1, moved_on=3),
    ),
    "excalidraw": dict(
        calls=[5, 5, 4, 4],
        eff=[88.0, 91.5, 97.7, 100.0],
        pooled=94.7,
        env=338_000,
        buckets=dict(again=14, read_returned=0, read_missed=0, search=0, moved_on=4),
    ),
    "django": dict(
        calls=[3, 3, 3, 2],
        eff=[90.1, 98.5, 100.0, 100.0],
        pooled=96.2,
        env=186_000,
        buckets=dict(again=6, read_returned=1, read_missed=0, search=0, moved_on=4),
    ),
    "tokio": dict(
        calls=[4, 4, 4, 4],
        eff=[85.0, 92.1, 91.8, 100.0],
        pooled=92.9,
        env=343_000,
        buckets=dict(again=12, read_returned=0, read_missed=0, search=1, moved_on=3),
    ),
    "okhttp": dict(
        calls=[2, 2, 2, 2],
        eff=[89.6, 100.0, 100.0, 100.0],
        pooled=97.9,
        env=151_000,
        buckets=dict(again=4, read_returned=0, read_missed=0, search=0, moved_on=4),
    ),
    "gin": dict(
        calls=[2, 2, 2, 2],
        eff=[96.0, 100.0, 100.0, 100.0],
        pooled=99.0,
        env=116_000,
        buckets=dict(again=4, read_returned=0, read_missed=0, search=0, moved_on=4),
    ),
    "alamofire": dict(
        calls=[6, 6, 6, 5],
        eff=[81.0, 80.0, 92.0, 98.0],
        pooled=89.0,
        env=306_000,
        buckets=dict(again=19, read_returned=1, read_missed=0, search=0, moved_on=3),
    ),
}
CAMPAIGN_ORDER = ["vscode", "excalidraw", "django", "tokio", "okhttp", "gin", "alamofire"]

# Published targets (spec §12.1–12.3), as printed.
SLICES = {
    "all": dict(
        n=103, pooled="85.6%", median="90.1%", p25="82.0%", p75="97.7%", min="20.1%", path="80.2%"
    ),
    "single-question": dict(
        n=74, pooled="85.2%", median="88.8%", p25="82.0%", p75="95.6%", min="20.1%", path="82.2%"
    ),
    "multi-turn": dict(
        n=29, pooled="86.2%", median="92.1%", p25="85.0%", p75="100.0%", min="57.4%", path="77.5%"
    ),
}
PER_CALL_TARGET = dict(median="94.7%", p25="79.2%")
ARM_MEDIANS = {
    ("cg15", "express"): ("82.0%", "100.0%"),
    ("cg15", "excalidraw"): ("90.1%", "92.8%"),
    ("cg15", "client-go"): ("84.1%", "80.8%"),
    ("cg21", "express"): ("84.1%", "100.0%"),
    ("cg21", "excalidraw"): ("91.3%", "97.5%"),
    ("cg21", "client-go"): ("67.1%", "95.0%"),
    ("cg22", "express"): ("81.9%", "100.0%"),
    ("cg22", "excalidraw"): ("89.3%", "79.2%"),
    ("cg22", "client-go"): ("86.6%", "93.3%"),
}
PER_RUN = {
    ("cg22", "express", "baseline"): ["81.9%", "82.0%", "81.9%"],
    ("cg22", "express", "new"): ["100.0%", "92.5%", "100.0%"],
    ("cg22", "excalidraw", "baseline"): ["89.3%", "85.6%", "90.8%"],
    ("cg22", "excalidraw", "new"): ["87.4%", "79.2%", "78.2%"],
}
ARM_POOLED = {("cg22", "express", "new"): "96.9%", ("cg22", "express", "baseline"): "82.0%"}
TOTALS = dict(sessions=103, single=74, multi=29, calls=297, sections=815)

# The seed's example session (§3.6): call 1 and call 2 of cg22/ab-express/run-baseline-1.
EXAMPLE_CALLS = [
    [
        ("lib/response.js", 3725, "path", ""),
        ("lib/utils.js", 6396, "path", ""),
        ("lib/express.js", 1927, "", ""),
    ],
    [
        ("lib/response.js", 3722, "path", ""),
        ("lib/application.js", 3622, "symbol", "compileETag"),
        ("lib/express.js", 1927, "", ""),
    ],
]
# cg8-val (§12.1): 3 explores, 11 files, 60,694 chars, 20.1%; only Scene.ts and
# StaticCanvas.tsx cited.
CG8_ENVELOPE = 60_694
CG8_CITED = {
    "packages/excalidraw/scene/Scene.ts": 7_105,
    "packages/excalidraw/components/canvases/StaticCanvas.tsx": 5_095,
}
# §12.6: lib/utils.js chars per CG-22 express run (pooled over the run's calls).
CG22_UTILS = {"baseline": [6396, 6380, 6396], "new": [6643, 7673, 6455]}


# ---------------------------------------------------------------------------------------------
# Quantiles and printing (the sweep's rules, §8.1 / Decision 2)
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Integer helpers
# ---------------------------------------------------------------------------------------------


def split_int(
    rng: random.Random, total: int, k: int, min_each: int = MIN_SECTION, skew: float = 0.4
) -> list[int]:
    """`total` as `k` positive parts, each at least `min_each`, in random proportions."""
    if k <= 0:
        return []
    if total < k * min_each:
        raise ValueError(f"cannot split {total} into {k} parts of at least {min_each}")
    weights = [skew + rng.random() for _ in range(k)]
    free = total - k * min_each
    s = sum(weights)
    parts = [min_each + int(free * w / s) for w in weights]
    parts[rng.randrange(k)] += total - sum(parts)
    return parts


def _round_used(e: float, envelope: int) -> int:
    return min(envelope, max(0, round(e * envelope)))


# ---------------------------------------------------------------------------------------------
# Session inventory
# ---------------------------------------------------------------------------------------------


def _inventory(rng: random.Random) -> list[SessionPlan]:
    sessions: list[SessionPlan] = []
    for (pass_, repo, arm), runs in PASSES.items():
        for i, (n_calls, reads, duration, eff) in enumerate(runs, 1):
            key = f"{pass_}/ab-{repo}/run-{arm}-{i}"
            base = PER_CALL[repo] * n_calls
            env = int(base * (0.8 + 0.4 * rng.random()))
            sessions.append(
                SessionPlan(
                    key=key,
                    segments=[key + ".jsonl"],
                    repo=repo,
                    pass_=pass_,
                    arm=arm,
                    run=i,
                    style="ab",
                    target=eff / 100,
                    envelope=env,
                    n_calls=n_calls,
                    reads=reads,
                    duration=duration,
                )
            )
            if repo == "express":
                # §12.6: every express run's envelope was 100% inside the answer set `lib/**`.
                sessions[-1].extra["exclude"] = {
                    f.path for f in catalog(repo) if not f.path.startswith("lib/")
                }
            if key == "cg15/ab-express/run-new-2":
                # §12.5: the fourth explore returned lib/utils.js; the agent then Read it.
                sessions[-1].extra["pin_last"] = "lib/utils.js"
    sessions.append(
        SessionPlan(
            key="cg8-val/run-headless-with",
            segments=["cg8-val/run-headless-with.jsonl"],
            repo="excalidraw",
            pass_="cg8-val",
            arm="headless-with",
            style="cg8-val",
            target=0.201,
            envelope=CG8_ENVELOPE,
            n_calls=3,
            duration=97,
        )
    )
    # The 74th single-question session (documented in data/corpus/README.md): an interactive
    # Claude Code session on express, read from its project-log layout (§1.10, §7.4).
    sessions.append(
        SessionPlan(
            key="interactive/-private-tmp-codegraph-corpus-express/7d0c51e2-int-with",
            segments=[
                "interactive/-private-tmp-codegraph-corpus-express/"
                "7d0c51e2-5b8a-4c1e-9f3d-2a6b4e8c0f17.jsonl"
            ],
            repo="express",
            pass_="interactive",
            arm="int-with",
            style="interactive",
            target=0.888,
            envelope=17_850,
            n_calls=1,
            duration=0,
        )
    )
    for repo in CAMPAIGN_ORDER:
        spec = CAMPAIGN[repo]
        for i, (n_calls, eff) in enumerate(zip(spec["calls"], spec["eff"], strict=True), 1):
            d = f"ab-readme/{repo}/run{i}"
            sessions.append(
                SessionPlan(
                    key=f"{d}/run-headless-with",
                    segments=[
                        f"{d}/run-headless-with.jsonl",
                        f"{d}/run-headless-with.t2.jsonl",
                        f"{d}/run-headless-with.t3.jsonl",
                    ],
                    repo=repo,
                    pass_="ab-readme",
                    arm="headless-with",
                    run=i,
                    style="campaign",
                    target=eff / 100,
                    envelope=0,
                    n_calls=n_calls,
                    duration=0,
                )
            )
    # The 29th multi-turn session: an extension run (RUN_FROM=5) whose third turn hit the turn
    # limit, so parse-bench-readme drops it (ok = false, §7.3) while the sweep keeps it.
    d = "ab-readme/excalidraw/run5"
    sessions.append(
        SessionPlan(
            key=f"{d}/run-headless-with",
            segments=[
                f"{d}/run-headless-with.jsonl",
                f"{d}/run-headless-with.t2.jsonl",
                f"{d}/run-headless-with.t3.jsonl",
            ],
            repo="excalidraw",
            pass_="ab-readme",
            arm="headless-with",
            run=5,
            style="campaign-x",
            target=0.72,
            envelope=66_500,
            n_calls=11,
            duration=0,
            # The run Reads StaticCanvas.tsx after a response that named it without shipping it.
            extra={"exclude": {"packages/excalidraw/components/canvases/StaticCanvas.tsx"}},
        )
    )
    return sessions


# ---------------------------------------------------------------------------------------------
# Envelope sizes: pooled shares (§12.1 pooled / path-cited columns, §12.3, §12.4)
# ---------------------------------------------------------------------------------------------


def _set_used(s: SessionPlan) -> None:
    s.used = _round_used(s.target, s.envelope)


def _fit_group(
    group: list[SessionPlan], lo: float, hi: float, fixed: set[str], total: int | None = None
) -> None:
    """Tilt the free sessions' envelopes toward low or high efficiencies until the group's
    Σ used / Σ envelope is in [lo, hi): E_i = base_i · exp(β · (0.9 − e_i))."""
    free = [s for s in group if s.key not in fixed]
    base = {s.key: s.envelope for s in free}

    def pooled(beta: float) -> float:
        for s in free:
            s.envelope = max(
                4 * MIN_SECTION * s.n_calls, int(base[s.key] * math.exp(beta * (0.9 - s.target)))
            )
        if total is not None:  # keep the group's published envelope (§12.4)
            scale = total / sum(s.envelope for s in free)
            for s in free:
                s.envelope = int(s.envelope * scale)
        for s in group:
            if s.key not in fixed or s.used == 0:
                _set_used(s)
        return sum(s.used for s in group) / sum(s.envelope for s in group)

    a, b = -20.0, 20.0
    mid = (lo + hi) / 2
    for _ in range(200):
        beta = (a + b) / 2
        p = pooled(beta)
        if lo <= p < hi:
            return
        # A larger beta weights low-efficiency sessions more, lowering the pooled share.
        if p > mid:
            a = beta
        else:
            b = beta
    raise RuntimeError(f"could not fit pooled share of {[s.key for s in group][:3]}…")


def _window(printed: str, scale: float = 100) -> tuple[float, float]:
    """The interval of fractions whose `pct1` prints `printed` (half-open, conservative)."""
    x = float(printed.rstrip("%")) / scale
    return x - 0.0004999, x + 0.0004999


def _fit_envelopes(sessions: list[SessionPlan]) -> None:
    by_key = {s.key: s for s in sessions}
    # cg22 express (§12.2, §12.3): run-baseline-1 is the example; the others realise the per-run
    # values and the pooled 82.0% / 96.9%.
    b1 = by_key["cg22/ab-express/run-baseline-1"]
    b1.envelope, b1.used, b1.used_path = 21_319, 17_465, 13_843
    b2, b3 = by_key["cg22/ab-express/run-baseline-2"], by_key["cg22/ab-express/run-baseline-3"]
    b2.envelope, b2.target = 21_180, 0.8202
    b3.envelope, b3.target = 21_450, 0.8192
    n1, n2, n3 = (by_key[f"cg22/ab-express/run-new-{i}"] for i in (1, 2, 3))
    n1.envelope, n2.envelope, n3.envelope = 15_260, 27_540, 23_410
    for b, sym in ((b2, 3611), (b3, 3618)):
        _set_used(b)
        b.used_path = b.used - sym  # lib/application.js, credited through `compileETag`
    for n in (n1, n2, n3):
        _set_used(n)
        n.used_path = n.used
    val = by_key["cg8-val/run-headless-with"]
    val.used = val.used_path = sum(CG8_CITED.values())
    fixed = {b1.key, b2.key, b3.key, n1.key, n2.key, n3.key, val.key}
    for s in sessions:
        if s.key not in (b1.key, val.key):
            _set_used(s)
    # Campaign repos: their own pooled efficiency and envelope (§12.4).
    for repo in CAMPAIGN_ORDER:
        spec = CAMPAIGN[repo]
        group = [s for s in sessions if s.style == "campaign" and s.repo == repo]
        weights = _campaign_weights(repo)
        for s, w in zip(group, weights, strict=True):
            s.envelope = int(spec["env"] * w)
        lo, hi = _window(f"{spec['pooled']}%")
        _fit_group(group, lo, hi, set(), total=spec["env"])
        total = sum(s.envelope for s in group)
        if not spec["env"] - 500 <= total < spec["env"] + 500:
            raise RuntimeError(f"{repo}: envelope {total} drifted from {spec['env']}")
    singles = [s for s in sessions if not s.multi]
    multis = [s for s in sessions if s.multi]
    # Multi-turn slice pooled 86.2%: the 29th session closes the gap to the campaign's 86.7%.
    x29 = next(s for s in multis if s.style == "campaign-x")
    lo, hi = _window(SLICES["multi-turn"]["pooled"])
    for _ in range(10000):
        _set_used(x29)
        p = sum(s.used for s in multis) / sum(s.envelope for s in multis)
        if lo <= p < hi:
            break
        x29.envelope += 50 if p > lo else -50
    else:
        raise RuntimeError("multi-turn pooled share not reachable")
    # Aim the whole corpus at the middle of its window; the single slice follows.
    u_m = sum(s.used for s in multis)
    e_m = sum(s.envelope for s in multis)
    e_s = sum(s.envelope for s in singles)
    want = (0.8560 * (e_s + e_m) - u_m) / e_s
    slo, shi = _window(SLICES["single-question"]["pooled"])
    want = min(max(want, slo + 0.0001), shi - 0.0001)
    lo, hi = want - 0.00005, want + 0.00005
    _fit_group(singles, lo, hi, fixed | {s.key for s in singles if s.style == "interactive"})


def _campaign_weights(repo: str) -> list[float]:
    return {
        "vscode": [0.25, 0.25, 0.25, 0.25],
        "excalidraw": [0.2, 0.25, 0.3, 0.25],
        "django": [0.3, 0.5, 0.1, 0.1],
        "tokio": [0.2, 0.25, 0.25, 0.3],
        "okhttp": [0.2, 0.27, 0.27, 0.26],
        "gin": [0.25, 0.25, 0.25, 0.25],
        "alamofire": [0.2, 0.2, 0.3, 0.3],
    }[repo]


def _fit_paths(sessions: list[SessionPlan], rng: random.Random) -> None:
    """Choose path-cited chars per session so the path-cited-only column comes out (Decision 3).

    The rest of a session's cited chars is credited through a symbol in a code span.
    """
    fixed = {s.key for s in sessions if s.key.startswith("cg22/ab-express/")}
    fixed.add("cg8-val/run-headless-with")
    for s in sessions:
        if s.key not in fixed:
            s.used_path = s.used
    singles = [s for s in sessions if not s.multi]
    multis = [s for s in sessions if s.multi]
    env_s = sum(s.envelope for s in singles)
    env_m = sum(s.envelope for s in multis)
    # The three path-cited cells are tied by the slices' envelope weights: fix the multi-turn
    # share, aim the whole corpus at the middle of its window, and derive the single slice.
    # The first candidate pair that puts the single slice inside its window wins.
    lo, hi = _window(SLICES["single-question"]["path"])
    for p_m, p_all in [
        (m, a) for m in (0.7752, 0.7748, 0.7754, 0.7746) for a in (0.8018, 0.8021, 0.8016, 0.8023)
    ]:
        p_s = (p_all * (env_s + env_m) - p_m * env_m) / env_s
        if lo + 0.0001 < p_s < hi - 0.0001:
            break
    else:
        raise RuntimeError(f"single-question path share {p_s:.5f} outside its window")
    for members, share, env in ((singles, p_s, env_s), (multis, p_m, env_m)):
        need = sum(s.used_path for s in members) - share * env
        movable = [s for s in members if s.key not in fixed and s.used > 4 * MIN_SECTION]
        rng.shuffle(movable)
        for s in movable:
            if need <= 0:
                break
            cap = int(s.used * (0.1 + rng.random() * (0.35 if s.multi else 0.2)))
            take = max(MIN_SECTION, min(cap, int(need)))
            s.used_path = s.used - take
            need -= take
        if need > 0:
            raise RuntimeError("cannot move enough chars to symbol citations")


# ---------------------------------------------------------------------------------------------
# Calls and sections
# ---------------------------------------------------------------------------------------------


def _call_envelopes(rng: random.Random, s: SessionPlan) -> list[int]:
    return split_int(rng, s.envelope, s.n_calls, min_each=4 * MIN_SECTION, skew=0.6)


def _split_calls(rng: random.Random, s: SessionPlan, mode: str) -> list[tuple[int, int, int]]:
    """Per call (envelope, used, used_path) summing to the session's numbers.

    `mode` decides where the uncited chars go: `one` concentrates them in one call (the shape
    the seed describes: call 1 on target, call 3 noise), `spread` divides them evenly.
    """
    envs = s.extra.get("call_envs") or _call_envelopes(rng, s)
    n = len(envs)
    uncited = s.envelope - s.used
    unc = [0] * n
    if uncited:
        if mode == "one" or n == 1:
            # Mostly one noisy call; it keeps some cited source (rarely none: pure noise).
            order = sorted(range(n), key=lambda i: -envs[i] * (0.5 + rng.random()))
            left = uncited
            for i in order:
                keep = (
                    0
                    if (n > 1 and rng.random() < 0.12)
                    else max(MIN_SECTION, int(envs[i] * rng.uniform(0.05, 0.4)))
                )
                take = min(max(0, envs[i] - keep), left)
                unc[i] = take
                left -= take
                if left == 0:
                    break
            if left:
                raise RuntimeError(f"{s.key}: uncited chars do not fit")
        else:
            # Spread over the calls in random proportions, each call keeping cited source.
            w = [envs[i] * (0.2 + rng.random()) for i in range(n)]
            tw = sum(w)
            for i in range(n):
                unc[i] = min(envs[i] - MIN_SECTION, int(uncited * w[i] / tw))
            left = uncited - sum(unc)
            for i in sorted(range(n), key=lambda i: -envs[i]):
                take = min(left, envs[i] - MIN_SECTION - unc[i])
                unc[i] += take
                left -= take
            if left:
                raise RuntimeError(f"{s.key}: uncited chars do not fit")
        # An uncited share below a minimal section is merged into a neighbour call.
        for i in range(n):
            if 0 < unc[i] < MIN_SECTION:
                j = max((k for k in range(n) if k != i), key=lambda k: unc[k], default=None)
                if j is None:
                    raise RuntimeError(f"{s.key}: uncited chars below a section")
                unc[j] += unc[i]
                unc[i] = 0
    cited = [envs[i] - unc[i] for i in range(n)]
    # Symbol-credited chars (used - used_path) go to the calls with the most cited chars.
    sym_left = s.used - s.used_path
    sym = [0] * n
    for i in sorted(range(n), key=lambda i: -cited[i]):
        if sym_left <= 0:
            break
        room = cited[i] - MIN_SECTION if cited[i] >= 2 * MIN_SECTION else 0
        take = min(room, sym_left)
        if 0 < take < MIN_SECTION:
            continue
        if 0 < sym_left - take < MIN_SECTION:
            take = sym_left - MIN_SECTION if sym_left - MIN_SECTION >= MIN_SECTION else take
        sym[i] = take
        sym_left -= take
    if sym_left:
        raise RuntimeError(f"{s.key}: symbol chars do not fit")
    return [(envs[i], cited[i], cited[i] - sym[i]) for i in range(n)]


def plan_stats(sessions: Sequence[SessionPlan]) -> dict:
    """The published statistics recomputed from solved numbers (the sweep's definitions)."""
    out: dict = {}
    swept = [s for s in sessions if s.calls]
    for name, members in (
        ("all", swept),
        ("single-question", [s for s in swept if not s.multi]),
        ("multi-turn", [s for s in swept if s.multi]),
    ):
        effs = [s.efficiency for s in members]
        env = sum(c.envelope for s in members for c in s.calls)
        out[name] = dict(
            n=len(members),
            pooled=pct1(sum(c.used for s in members for c in s.calls) / env),
            median=pct1(median(effs)),
            p25=pct1(quantile(effs, 0.25)),
            p75=pct1(quantile(effs, 0.75)),
            min=pct1(min(effs)),
            path=pct1(sum(c.used_path for s in members for c in s.calls) / env),
        )
    calls = [c.used / c.envelope for s in swept for c in s.calls]
    out["per_call"] = dict(median=pct1(median(calls)), p25=pct1(quantile(calls, 0.25)))
    out["totals"] = dict(
        sessions=len(swept),
        single=sum(not s.multi for s in swept),
        multi=sum(s.multi for s in swept),
        calls=len(calls),
        sections=sum(len(c.sections) for s in swept for c in s.calls),
    )
    arms = {}
    for (pass_, repo), _ in ARM_MEDIANS.items():
        cells = []
        for arm in ("baseline", "new"):
            effs = [s.efficiency for s in swept if (s.pass_, s.repo, s.arm) == (pass_, repo, arm)]
            cells.append(pct1(median(effs)))
        arms[(pass_, repo)] = tuple(cells)
    out["arms"] = arms
    out["per_run"] = {
        k: [pct1(s.efficiency) for s in swept if (s.pass_, s.repo, s.arm) == k] for k in PER_RUN
    }
    pooled = {}
    for k in ARM_POOLED:
        ms = [s for s in swept if (s.pass_, s.repo, s.arm) == k]
        pooled[k] = pct1(
            sum(c.used for s in ms for c in s.calls) / sum(c.envelope for s in ms for c in s.calls)
        )
    out["arm_pooled"] = pooled
    return out


def check_plan(sessions: Sequence[SessionPlan]) -> list[str]:
    """Every published figure the plan must realise; returns the mismatches (empty = all good)."""
    st = plan_stats(sessions)
    bad = []
    for name, want in SLICES.items():
        got = st[name]
        for k, v in want.items():
            if got[k] != v:
                bad.append(f"slice {name} {k}: {got[k]} != {v}")
    for k, v in PER_CALL_TARGET.items():
        if st["per_call"][k] != v:
            bad.append(f"per-call {k}: {st['per_call'][k]} != {v}")
    for k, v in TOTALS.items():
        if st["totals"][k] != v:
            bad.append(f"total {k}: {st['totals'][k]} != {v}")
    for k, v in ARM_MEDIANS.items():
        if st["arms"][k] != v:
            bad.append(f"arm medians {k}: {st['arms'][k]} != {v}")
    for k, v in PER_RUN.items():
        if st["per_run"][k] != v:
            bad.append(f"per-run {k}: {st['per_run'][k]} != {v}")
    for k, v in ARM_POOLED.items():
        if st["arm_pooled"][k] != v:
            bad.append(f"arm pooled {k}: {st['arm_pooled'][k]} != {v}")
    return bad


# ---------------------------------------------------------------------------------------------
# Per-call shapes: the per-call median and p25 (§12.1)
# ---------------------------------------------------------------------------------------------

_CALL_P25 = (0.7915, 0.7925)  # fractions printing 79.2%
_CALL_MED = (0.9465, 0.9475)  # fractions printing 94.7%
# Per-call ranks: 297 calls, so p25 is the 75th smallest (index 74), the median index 148.
_RANK_P25, _RANK_MED = 74, 148


def _call_effs(shapes: dict[str, list[tuple[int, int, int]]]) -> list[float]:
    return [u / e for sh in shapes.values() for e, u, _ in sh]


def _objective(effs: list[float]) -> int:
    a = sum(x < _CALL_P25[0] for x in effs)
    b = sum(x < _CALL_P25[1] for x in effs)
    c = sum(x < _CALL_MED[0] for x in effs)
    d = sum(x < _CALL_MED[1] for x in effs)
    return (
        max(0, a - _RANK_P25)
        + max(0, _RANK_P25 + 1 - b)
        + max(0, c - _RANK_MED)
        + max(0, _RANK_MED + 1 - d)
    )


def _anchor_split(s: SessionPlan, envs: list[int], anchor: float) -> list[tuple[int, int, int]]:
    """Call 1 at exactly `anchor` efficiency; the rest of the uncited chars in the other calls."""
    unc0 = s.envelope - s.used
    first = round((1 - anchor) * envs[0])
    rest = unc0 - first
    if rest < 0 or (0 < rest < MIN_SECTION):
        raise RuntimeError(f"{s.key}: cannot anchor a call at {anchor}")
    out = [(envs[0], envs[0] - first)]
    others = list(range(1, len(envs)))
    for i in others:
        take = min(rest, envs[i] - MIN_SECTION)
        out.append((envs[i], envs[i] - take))
        rest -= take
    if rest:
        raise RuntimeError(f"{s.key}: anchor split does not fit")
    sym = s.used - s.used_path
    shaped = []
    for e, u in out:
        take = min(sym, max(0, u - MIN_SECTION)) if u - MIN_SECTION >= MIN_SECTION else 0
        if 0 < sym - take < MIN_SECTION:
            take = 0
        shaped.append((e, u, u - take))
        sym -= take
    if sym:
        raise RuntimeError(f"{s.key}: anchor split cannot hold symbol chars")
    return shaped


def _plan_calls(rng: random.Random, sessions: list[SessionPlan]) -> None:
    by_key = {s.key: s for s in sessions}
    shapes: dict[str, list[tuple[int, int, int]]] = {}
    modes: dict[str, str] = {}
    fixed: set[str] = set()
    # Sessions whose sections are dictated by published figures: the seed's example and the
    # other CG-22 express runs (§3.6, §12.2, §12.6), and cg8-val (§12.1).
    for s in sessions:
        custom = _custom_sections(rng, s)
        if custom is not None:
            s.extra["sections"] = custom
            shapes[s.key] = [
                (
                    sum(x.chars for x in call),
                    sum(x.chars for x in call if x.verdict),
                    sum(x.chars for x in call if x.verdict == "path"),
                )
                for call in custom
            ]
            fixed.add(s.key)
    # The per-call median anchor (94.7%): first call of a two-call session.
    anchor_med = by_key["cg21/ab-excalidraw/run-baseline-5"]
    envs = split_int(rng, anchor_med.envelope, anchor_med.n_calls, 4 * MIN_SECTION, 0.6)
    shapes[anchor_med.key] = _anchor_split(anchor_med, envs, 0.947)
    fixed.add(anchor_med.key)
    for s in sessions:
        if s.key in fixed:
            continue
        s.extra["call_envs"] = _call_envelopes(rng, s)
        modes[s.key] = "one" if rng.random() < 0.6 else "spread"
        shapes[s.key] = _split_calls(rng, s, modes[s.key])
    # Hill-climb over the free sessions' shapes (which call takes the uncited chars) until the
    # per-call p25 and median land on 79.2% and 94.7%.
    free = [s for s in sessions if s.key not in fixed and s.used < s.envelope and s.n_calls > 1]
    best = _objective(_call_effs(shapes))
    for _ in range(6000):
        if best == 0:
            break
        s = free[rng.randrange(len(free))]
        old_shape, old_envs, old_mode = shapes[s.key], s.extra["call_envs"], modes[s.key]
        if rng.random() < 0.5:
            modes[s.key] = "spread" if old_mode == "one" else "one"
        else:
            s.extra["call_envs"] = _call_envelopes(rng, s)
        try:
            shapes[s.key] = _split_calls(rng, s, modes[s.key])
        except RuntimeError:
            shapes[s.key], s.extra["call_envs"], modes[s.key] = old_shape, old_envs, old_mode
            continue
        score = _objective(_call_effs(shapes))
        if score <= best:
            best = score
        else:
            shapes[s.key], s.extra["call_envs"], modes[s.key] = old_shape, old_envs, old_mode
    if best:
        raise RuntimeError(f"per-call quantiles not reached (objective {best})")
    for s in sessions:
        s.extra["shape"] = shapes[s.key]


def _sec(path: str, chars: int, verdict: str = "", symbol: str = "") -> SectionPlan:
    return SectionPlan(path, chars, verdict, symbol)


def _custom_sections(rng: random.Random, s: SessionPlan) -> list[list[SectionPlan]] | None:
    if s.key == "cg22/ab-express/run-baseline-1":
        return [[_sec(*x) for x in call] for call in EXAMPLE_CALLS]
    if s.pass_ == "cg22" and s.repo == "express":
        utils = CG22_UTILS[s.arm][s.run - 1]
        if s.arm == "baseline":
            # The baseline reliably spent ~18% on lib/express.js, never cited (§12.2).
            express = s.envelope - s.used
            sym = s.used - s.used_path
            response = s.used_path - utils
            r1 = response // 2 + rng.randrange(-40, 40)
            e1 = express // 2
            return [
                [
                    _sec("lib/response.js", r1, "path"),
                    _sec("lib/utils.js", utils, "path"),
                    _sec("lib/express.js", e1),
                ],
                [
                    _sec("lib/response.js", response - r1, "path"),
                    _sec("lib/application.js", sym, "symbol", "compileETag"),
                    _sec("lib/express.js", express - e1),
                ],
            ]
        rest = s.used - utils
        if s.n_calls == 1:
            return [[_sec("lib/utils.js", utils, "path"), _sec("lib/response.js", rest, "path")]]
        uncited = s.envelope - s.used
        a = rest // 2 + rng.randrange(-300, 300)
        call2 = [_sec("lib/response.js", rest - a, "path")]
        if uncited:
            call2.append(_sec("lib/view.js", uncited))
        else:
            b = (rest - a) // 3
            call2 = [
                _sec("lib/response.js", rest - a - b, "path"),
                _sec("lib/request.js", b, "path"),
            ]
        return [[_sec("lib/utils.js", utils, "path"), _sec("lib/response.js", a, "path")], call2]
    if s.key == "cg8-val/run-headless-with":
        envs = [21_342, 19_870, 19_482]
        scene, static = CG8_CITED
        others = [
            f.path
            for f in catalog(s.repo)
            if f.path not in CG8_CITED and not f.path.endswith("/App.tsx")
        ]
        rng.shuffle(others)
        others = others[:9]
        calls = []
        for i, (env, cited) in enumerate(zip(envs, (scene, static, None), strict=True)):
            names = others[3 * i : 3 * i + 3]
            left = env - (CG8_CITED[cited] if cited else 0)
            parts = split_int(rng, left, 3, 2_000)
            call = [_sec(p, c) for p, c in zip(names, parts, strict=True)]
            if cited:
                call.insert(rng.randrange(2), _sec(cited, CG8_CITED[cited], "path"))
            calls.append(call)
        return calls
    return None


def _symbol_of(info: FileInfo) -> str | None:
    """A name this file's header can carry as a definition and an answer can cite in a code
    span: strong kind (§3.2 step 4), no dots, at least 4 characters (§3.3)."""
    for name, kind in info.symbols:
        if (
            kind not in ("variable", "constant")
            and "." not in name
            and len(name) >= MIN_SYMBOL_LEN
            and name.lower() not in STOPWORDS
        ):
            return name
    return None


def _plan_sections(rng: random.Random, sessions: list[SessionPlan]) -> None:
    """Section counts (815 in all, §12.1), then files, chars and verdicts per section."""
    counts: dict[tuple[str, int], list[int]] = {}
    generic = [s for s in sessions if "sections" not in s.extra]
    total_fixed = sum(
        len(c) for s in sessions if "sections" in s.extra for c in s.extra["sections"]
    )
    for s in generic:
        for i, (e, u, p) in enumerate(s.extra["shape"]):
            counts[(s.key, i)] = [int(p > 0), int(u - p > 0), int(e - u > 0)]
    have = total_fixed + sum(sum(v) for v in counts.values())
    extra = TOTALS["sections"] - have
    if extra < 0:
        raise RuntimeError("too many sections at the minimum")
    by_key = {s.key: s for s in sessions}
    # Sessions with a published answer share (§12.6) get two sections of one verdict in one
    # call, so chars can move between an answer-set file and another without changing any
    # efficiency (`_fit_answer_share`).
    for s in generic:
        if (s.pass_, s.repo, s.arm) not in ANSWER_SHARES:
            continue
        need = 3 if (s.pass_, s.repo, s.arm) in GENERATED_SHARES else 2
        if any(g >= need for i in range(len(s.extra["shape"])) for g in counts[(s.key, i)]):
            continue
        sizes = [
            (size, i, g)
            for i, (e, u, p) in enumerate(s.extra["shape"])
            for g, size in enumerate((p, u - p, e - u))
            if counts[(s.key, i)][g]
        ]
        size, i, g = max(sizes)
        while counts[(s.key, i)][g] < need and size >= (counts[(s.key, i)][g] + 1) * MIN_SECTION:
            counts[(s.key, i)][g] += 1
            extra -= 1
    slots = list(counts)
    while extra:
        key, i = slots[rng.randrange(len(slots))]
        e, u, p = by_key[key].extra["shape"][i]
        sizes = [p, u - p, e - u]
        g = rng.choice([0, 0, 0, 1, 2, 2])
        k = counts[(key, i)]
        if k[g] == 0 or sizes[g] < (k[g] + 1) * 3 * MIN_SECTION or sum(k) >= 7:
            continue
        k[g] += 1
        extra -= 1
    for s in sessions:
        if "sections" in s.extra:
            s.calls = [CallPlan(c) for c in s.extra["sections"]]
            continue
        s.calls = _assign_files(rng, s, [counts[(s.key, i)] for i in range(len(s.extra["shape"]))])
        if (s.pass_, s.repo, s.arm) in ANSWER_SHARES:
            _fit_answer_share(rng, s, ANSWER_SHARES[(s.pass_, s.repo, s.arm)][s.run - 1])


def _assign_files(rng: random.Random, s: SessionPlan, counts: list[list[int]]) -> list[CallPlan]:
    files = [f for f in catalog(s.repo) if f.path not in s.extra.get("exclude", ())]
    rng.shuffle(files)
    pool = {"path": [f for f in files], "symbol": [f for f in files if _symbol_of(f)]}
    taken: set[str] = set()
    # One file per basename in a session: a basename citation credits every returned file
    # ending in it (§3.4), which would credit a file the plan leaves uncited.
    bases: set[str] = set()
    chosen: dict[str, list[FileInfo]] = {"path": [], "symbol": [], "": []}

    def pick(group: str, in_call: set[str]) -> FileInfo:
        reuse = [f for f in chosen[group] if f.path not in in_call]
        fresh = [
            f
            for f in (pool["symbol"] if group == "symbol" else pool["path"])
            if f.path not in taken and f.path.rsplit("/", 1)[-1] not in bases
        ]
        if reuse and (not fresh or rng.random() < 0.3):
            return rng.choice(reuse)
        if not fresh:
            raise RuntimeError(f"{s.key}: catalog of {s.repo} too small")
        f = fresh[0]
        taken.add(f.path)
        bases.add(f.path.rsplit("/", 1)[-1])
        chosen[group].append(f)
        return f

    # §12.5: a file the last explore must return (and the answer cite by path).
    pin = s.extra.get("pin_last")
    if pin:
        pool["path"] = [f for f in pool["path"] if f.path != pin]
        pool["symbol"] = [f for f in pool["symbol"] if f.path != pin]
    calls = []
    last = len(s.extra["shape"]) - 1
    for ci, ((e, u, p), k) in enumerate(zip(s.extra["shape"], counts, strict=True)):
        secs: list[SectionPlan] = []
        in_call: set[str] = set()
        for group, size, n in (("path", p, k[0]), ("symbol", u - p, k[1]), ("", e - u, k[2])):
            if not n:
                continue
            for j, chars in enumerate(split_int(rng, size, n, min(MIN_SECTION, size // n), 0.5)):
                if pin and ci == last and group == "path" and j == 0:
                    f = file_info(s.repo, pin)
                    taken.add(pin)
                    bases.add(pin.rsplit("/", 1)[-1])
                else:
                    f = pick(group, in_call)
                in_call.add(f.path)
                sym = _symbol_of(f) if group == "symbol" else ""
                secs.append(SectionPlan(f.path, chars, group, sym or ""))
        rng.shuffle(secs)
        calls.append(CallPlan(secs))
    return calls


def plan_corpus(seed: int) -> list[SessionPlan]:
    """Solve every session, call and section of the corpus for `seed`.

    Raises:
        RuntimeError: The seed leads to a plan that misses a published figure.
    """
    rng = random.Random(seed)
    sessions = _inventory(rng)
    _fit_envelopes(sessions)
    _fit_paths(sessions, rng)
    _plan_calls(rng, sessions)
    _plan_sections(rng, sessions)
    bad = check_plan(sessions)
    if bad:
        raise RuntimeError("plan misses published figures:\n  " + "\n  ".join(bad))
    return sessions


# ---------------------------------------------------------------------------------------------
# Envelope answer shares (§12.6): client-go, answer set `tools/cache/**`, per run in run order
# ---------------------------------------------------------------------------------------------

ANSWER_GLOB = "tools/cache/**"
ANSWER_SHARES = {
    ("cg15", "client-go", "new"): [74.2, 96.9, 82.6],
    ("cg15", "client-go", "baseline"): [78.1, 97.1, 71.3],
    ("cg21", "client-go", "new"): [96.0, 96.2, 92.7],
    ("cg21", "client-go", "baseline"): [86.7, 53.8, 80.2],
    ("cg22", "client-go", "new"): [95.2, 97.8, 92.3, 96.8, 96.8, 89.8],
    ("cg22", "client-go", "baseline"): [95.4, 100.0, 100.0, 85.6, 97.0, 97.0],
}
GENERATED_SHARES = {
    ("cg15", "client-go", "new"): [4.0, 0.0, 5.2],
    ("cg15", "client-go", "baseline"): [10.5, 0.0, 5.1],
}
# The generated layer (`kubernetes/**`, `listers/**`, `applyconfigurations/**`, `informers/**`,
# `**/fake/**`, §12.6) takes envelope only where CG-15 published a generated share.
_GENERATED = ("informers/", "listers/", "kubernetes/", "applyconfigurations/")


def _answer_class(path: str) -> str:
    if path.startswith("tools/cache/"):
        return "answer"
    return "generated" if path.startswith(_GENERATED) or "/fake/" in path else "other"


def _fit_answer_share(rng: random.Random, s: SessionPlan, share: float) -> None:
    """Choose which of the session's files lie outside `tools/cache/` and move chars between two
    sections of one call and one verdict group (so no efficiency changes) until the envelope
    view's answer-set share prints `share` (§4.2)."""
    env = sum(c.envelope for c in s.calls)
    target = round(env * (1 - share / 100))  # chars outside the answer set
    totals: dict[str, int] = {}
    for c in s.calls:
        for x in c.sections:
            totals[x.path] = totals.get(x.path, 0) + x.chars
    outside: list[str] = []
    if target:
        # Candidate sets of outside files: each file, each pair, and the largest-first greedy
        # fill; the feasible one needing the smallest shift wins.
        names = sorted(totals, key=lambda p: -totals[p])
        cands = [[p] for p in names] + [[p, q] for i, p in enumerate(names) for q in names[i + 1 :]]
        acc, greedy = 0, []
        for p in names:
            if acc + totals[p] <= target:
                greedy.append(p)
                acc += totals[p]
        if greedy:
            cands.append(greedy)
        room = sum(_answer_class(f.path) == "other" for f in catalog(s.repo)) - 2
        best = None
        # With a generated share to place as well, two outside files in one call and verdict
        # group are needed (one generated, one not), so chars can move between them.
        split = GENERATED_SHARES.get((s.pass_, s.repo, s.arm), [0.0] * 9)[s.run - 1] > 0
        for cand in (c for c in cands if (2 if split else 1) <= len(c) <= room):
            delta = target - sum(totals[p] for p in cand)
            if best is not None and abs(delta) >= abs(best[1]):
                continue
            if split and not _same_group_pair(s, set(cand)):
                continue
            if delta == 0 or _shift(s, set(cand), delta, dry=True):
                best = (cand, delta)
        if best is None:
            raise RuntimeError(f"{s.key}: cannot reach the answer share {share}")
        outside, delta = best
        if delta:
            _shift(s, set(outside), delta)
    generated: list[str] = []
    g_share = GENERATED_SHARES.get((s.pass_, s.repo, s.arm), [0.0] * 9)[s.run - 1]
    g_target = round(env * g_share / 100)
    if g_target:
        # §12.6 (CG-15): part of the outside chars went to the generated layer.
        cands = [[p] for p in outside] + [
            [p, q] for i, p in enumerate(outside) for q in outside[i + 1 :]
        ]
        best = None
        for cand in (c for c in cands if len(c) < len(outside)):
            delta = g_target - sum(totals_now(s)[p] for p in cand)
            if best is not None and abs(delta) >= abs(best[1]):
                continue
            if delta == 0 or _shift(s, set(cand), delta, dry=True, among=set(outside)):
                best = (cand, delta)
        if best is None:
            raise RuntimeError(f"{s.key}: cannot reach the generated share {g_share}")
        generated, delta = best
        if delta:
            _shift(s, set(generated), delta, among=set(outside))
    _repath(rng, s, set(outside), set(generated))
    classes = [(_answer_class(x.path), x.chars) for c in s.calls for x in c.sections]
    got = 1 - sum(n for k, n in classes if k != "answer") / env
    got_g = sum(n for k, n in classes if k == "generated") / env
    if pct1(got) != f"{share:.1f}%" or pct1(got_g) != f"{g_share:.1f}%":
        raise RuntimeError(f"{s.key}: answer share {pct1(got)} / generated {pct1(got_g)}")


def _same_group_pair(s: SessionPlan, paths: set[str]) -> bool:
    for c in s.calls:
        seen: dict[str, str] = {}
        for x in c.sections:
            if x.path in paths:
                if x.verdict in seen and seen[x.verdict] != x.path:
                    return True
                seen[x.verdict] = x.path
    return False


def totals_now(s: SessionPlan) -> dict[str, int]:
    totals: dict[str, int] = {}
    for c in s.calls:
        for x in c.sections:
            totals[x.path] = totals.get(x.path, 0) + x.chars
    return totals


def _shift(
    s: SessionPlan, outside: set[str], delta: int, dry: bool = False, among: set[str] | None = None
) -> bool:
    """Move `delta` chars into the outside files (out of them when negative), each step between
    two sections of one call with the same verdict (one outside, one not), keeping every section
    at least MIN_SECTION, so no call's or session's cited chars change. With `among`, both
    sections must belong to those files. Returns whether the whole `delta` could move."""
    left = delta
    moves = []
    for c in s.calls:
        for a in c.sections:
            for b in c.sections:
                if a is b or a.verdict != b.verdict or (a.path in outside) == (b.path in outside):
                    continue
                if among is not None and (a.path not in among or b.path not in among):
                    continue
                if a.path not in outside:
                    continue
                # a is outside: it gains `step`, b loses it (negative steps the other way).
                room = b.chars - MIN_SECTION if left > 0 else a.chars - MIN_SECTION
                step = max(0, min(abs(left), room)) * (1 if left > 0 else -1)
                if step:
                    moves.append((a, b, step))
                    left -= step
                    if not dry:
                        a.chars += step
                        b.chars -= step
                if left == 0:
                    return True
    if not dry:
        raise RuntimeError(f"{s.key}: shift of {delta} chars incomplete")
    return False


def _repath(
    rng: random.Random, s: SessionPlan, outside: set[str], generated: set[str] = frozenset()
) -> None:
    """Rename files so exactly `outside` lie outside the answer set, keeping verdicts, symbols
    credited, and one file per basename."""
    paths = list(dict.fromkeys(x.path for c in s.calls for x in c.sections))
    want = {
        p: ("generated" if p in generated else "other" if p in outside else "answer") for p in paths
    }
    rename: dict[str, str] = {}
    used = set(paths)
    bases = {p.rsplit("/", 1)[-1] for p in paths}
    pool = [f for f in catalog(s.repo)]
    rng.shuffle(pool)
    for p in paths:
        if _answer_class(p) == want[p]:
            continue
        needs_symbol = any(
            x.verdict == "symbol" for c in s.calls for x in c.sections if x.path == p
        )
        for f in pool:
            base = f.path.rsplit("/", 1)[-1]
            if (
                f.path in used
                or base in bases
                or _answer_class(f.path) != want[p]
                or (needs_symbol and not _symbol_of(f))
            ):
                continue
            rename[p] = f.path
            used.add(f.path)
            bases.add(base)
            bases.discard(p.rsplit("/", 1)[-1])
            break
        else:
            raise RuntimeError(f"{s.key}: no {want[p]} file left to rename {p}")
    for c in s.calls:
        for x in c.sections:
            if x.path in rename:
                x.path = rename[x.path]
                if x.verdict == "symbol":
                    x.symbol = _symbol_of(file_info(s.repo, x.path)) or ""
