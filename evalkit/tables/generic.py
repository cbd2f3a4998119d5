"""The generic comparison: what any corpus can be compared on, explore calls or not (issue 23).

`generic_comparison(sessions, tool_calls)` takes the sessions and tool_calls frames of a loaded
corpus (`evalkit.load_corpus`) and gives, per agent × arm (per agent × group when no session has
an arm): the sessions (by `status` when the frame has that column), the outcomes (`reward`,
`passed`), the tool calls by family (`evalkit.formats.families`: the scheme every agent shares),
the tokens by ledger column, cost and duration; and the lowest and highest sessions by cost and
by outcome. `evalkit sweep DIR` prints it (`evalkit.outputs.sweep_text`) when the corpus has no
explore call, where the explore tables would be empty. Nothing is rounded here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.formats.families import TOOL_FAMILIES
from evalkit.tables.costs import CostAccount, frame_cost_account

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LEDGER", "GroupFigures", "Extreme", "GenericComparison", "generic_comparison"]

# The token ledger's columns, in print order (the sessions frame's names).
LEDGER: tuple[str, ...] = (
    "prompt_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
)
NO_LABEL = "(none)"


@dataclass(frozen=True)
class GroupFigures:
    """One agent × arm (or agent × group) of the generic comparison.

    Attributes:
        agent, arm: The group's labels (`(none)` where the frame has none).
        sessions: Sessions in the group.
        statuses: `(status, sessions)` pairs, most first (empty without a `status` column).
        outcomes: Sessions with a reward or a pass/fail.
        passed: Sessions that passed, of those with a pass/fail (`judged`).
        judged: Sessions with a pass/fail.
        mean_reward: The mean reward over sessions with one; None without.
        calls: `(family, calls)` for every family of the scheme, in its order.
        tokens: `(ledger column, sum)` in `LEDGER` order; None where no session has a value.
        cost_usd: The summed cost (`cost_usd`: recorded where the log records one, else
            priced from its tokens); None where no session has one.
        priced: Sessions whose cost is priced (`cost_source` priced), not recorded.
        median_cost_usd, median_duration_s: Medians over sessions with a value; None without.
        duration_s: The summed duration; None without.
    """

    agent: str
    arm: str
    sessions: int
    statuses: tuple[tuple[str, int], ...]
    outcomes: int
    passed: int
    judged: int
    mean_reward: float | None
    calls: tuple[tuple[str, int], ...]
    tokens: tuple[tuple[str, float | None], ...]
    cost_usd: float | None
    median_cost_usd: float | None
    duration_s: float | None
    median_duration_s: float | None
    priced: int = 0


@dataclass(frozen=True)
class Extreme:
    """The lowest or highest session by one figure: `what` is `cost` or `reward`."""

    what: str
    end: str  # lowest / highest
    log: str
    agent: str
    arm: str
    value: float


@dataclass(frozen=True)
class GenericComparison:
    """The generic comparison of a corpus (see the module docstring).

    Attributes:
        by: `arm` or `group`: what the second label of each row is.
        tool_under_test: The tool profile's label the `tool_under_test` family stands for.
        groups: One row per agent × arm, in label order.
        extremes: The lowest and highest sessions by cost, then by reward (where any has one).
        has_status: The sessions frame has a `status` column.
        cost: How the sessions' costs were found (recorded, priced, unknown; issue 27).
    """

    by: str
    tool_under_test: str | None
    groups: tuple[GroupFigures, ...]
    extremes: tuple[Extreme, ...]
    has_status: bool
    cost: CostAccount | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per group: labels, sessions, outcomes, calls per family, tokens, cost."""
        import pandas as pd

        rows = []
        for g in self.groups:
            row: dict[str, Any] = {
                "agent": g.agent,
                self.by: g.arm,
                "sessions": g.sessions,
                "passed": g.passed,
                "judged": g.judged,
                "mean_reward": g.mean_reward,
            }
            row.update({f"status_{s}": n for s, n in g.statuses})
            row.update({f"calls_{f}": n for f, n in g.calls})
            row.update(dict(g.tokens))
            row.update(
                {
                    "cost_usd": g.cost_usd,
                    "priced_sessions": g.priced,
                    "median_cost_usd": g.median_cost_usd,
                    "duration_s": g.duration_s,
                    "median_duration_s": g.median_duration_s,
                }
            )
            rows.append(row)
        return pd.DataFrame(rows)


def _label(v: Any) -> str:
    import pandas as pd

    return NO_LABEL if v is None or pd.isna(v) else str(v)


def _values(series: pd.Series) -> list[float]:
    return [float(x) for x in series.dropna()]


def _median(xs: list[float]) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def generic_comparison(sessions: pd.DataFrame, tool_calls: pd.DataFrame) -> GenericComparison:
    """The generic comparison of the sessions and tool_calls frames of one corpus."""
    by = "arm" if "arm" in sessions and sessions["arm"].notna().any() else "group"
    s = sessions.copy()
    s["_agent"] = [_label(v) for v in s["agent"]] if len(s) else []
    s["_by"] = [_label(v) for v in s[by]] if len(s) else []
    # The priced frames' cost_usd: recorded where the log records one, else priced (issue 27).
    s["_cost"] = s["cost_usd"]
    priced = s["cost_source"] == "priced" if "cost_source" in s else None
    has_status = "status" in s.columns
    label_of = dict(zip(s["log"], zip(s["_agent"], s["_by"], strict=True), strict=True))
    calls: dict[tuple[str, str], dict[str, int]] = {}
    fam_col = "tool_family" if "tool_family" in tool_calls.columns else "family"
    for log, fam in zip(tool_calls["log"], tool_calls[fam_col], strict=True):
        key = label_of.get(log)
        if key is None:
            continue
        counts = calls.setdefault(key, {})
        f = fam if isinstance(fam, str) and fam in TOOL_FAMILIES else "other"
        counts[f] = counts.get(f, 0) + 1
    groups = []
    for (agent, arm), g in sorted(s.groupby(["_agent", "_by"], sort=False), key=lambda kv: kv[0]):
        statuses: tuple[tuple[str, int], ...] = ()
        if has_status:
            vc = g["status"].fillna("unknown").value_counts()
            statuses = tuple(
                sorted(((str(k), int(n)) for k, n in vc.items()), key=lambda x: (-x[1], x[0]))
            )
        rewards = _values(g["reward"])
        judged = g["passed"].dropna()
        outcome = g["reward"].notna() | g["passed"].notna()
        fam = calls.get((agent, arm), {})
        tokens = tuple((col, (sum(v) if (v := _values(g[col])) else None)) for col in LEDGER)
        costs = _values(g["_cost"])
        durations = _values(g["duration_s"])
        groups.append(
            GroupFigures(
                agent=agent,
                arm=arm,
                sessions=len(g),
                statuses=statuses,
                outcomes=int(outcome.sum()),
                passed=int(judged.astype(bool).sum()),
                judged=len(judged),
                mean_reward=sum(rewards) / len(rewards) if rewards else None,
                calls=tuple((f, fam.get(f, 0)) for f in TOOL_FAMILIES),
                tokens=tokens,
                cost_usd=sum(costs) if costs else None,
                median_cost_usd=_median(costs),
                duration_s=sum(durations) if durations else None,
                median_duration_s=_median(durations),
                priced=int(priced[g.index].fillna(False).sum()) if priced is not None else 0,
            )
        )
    extremes: list[Extreme] = []
    for what, col in (("cost", "_cost"), ("reward", "reward")):
        have = s[s[col].notna()]
        if have.empty:
            continue
        order = sorted(
            zip(have[col].astype(float), have["log"], have["_agent"], have["_by"], strict=True)
        )
        for end, (value, log, agent, arm) in (("lowest", order[0]), ("highest", order[-1])):
            extremes.append(Extreme(what, end, str(log), agent, arm, float(value)))
    tut = None
    # The tool under test is named only when some session called it: a corpus that calls no
    # such tool is not described in the default profile's (codegraph's) words.
    called = s["tool_under_test_calls"].fillna(0) > 0 if "tool_under_test_calls" in s else None
    if called is not None and called.any() and s.loc[called, "tool_under_test"].notna().any():
        tut = str(sorted(set(s.loc[called, "tool_under_test"].dropna()))[0])
    cost = frame_cost_account(s) if "cost_source" in s else None
    return GenericComparison(by, tut, tuple(groups), tuple(extremes), has_status, cost)
