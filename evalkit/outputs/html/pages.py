"""The report's pages, one function each: the session page (`session_page`), the task pages
(`task_pages`), and the tables and cells they are made of (`frame_table`).

A page is a Jinja2 template (`templates/`) filled from the frames' rows (`frame_rows`: Python
values, None for missing) and a session's `Timeline`. What issue 23 will change (the run's
status, outcomes for every layout) is read in two functions only, `run_status` and
`outcome_text`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from evalkit.ecma import pct1
from evalkit.outputs import caveats
from evalkit.outputs.html.render import render
from evalkit.outputs.html.timeline import Timeline, all_calls, clean

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.tables.corpus import Corpus

__all__ = [
    "PREVIEW_CHARS",
    "INLINE_CHARS",
    "FOLD_CHARS",
    "run_status",
    "outcome_text",
    "frame_table",
    "frame_rows",
    "missing",
    "plain",
    "num",
    "session_file",
    "task_file",
    "session_page",
    "long_texts",
    "task_of",
    "task_pages",
]

# Sizes that hold for a 50 MB transcript: a result longer than INLINE_CHARS shows its first
# PREVIEW_CHARS and links its full text (a .txt file beside the page); results longer than
# FOLD_CHARS start folded.
PREVIEW_CHARS = 4_000
INLINE_CHARS = 20_000
FOLD_CHARS = 1_200

# --- what waits for issue 23 -----------------------------------------------------------------
# Issue 23 gives every frame the run's `status` and the outcome for every layout. Until then
# the page shows what exists: the sweep's record status and the outcome columns the frame has.
# These two functions are the one place that reads them; fill them in from the new columns.


def run_status(row: dict[str, Any], record: Any = None) -> str | None:
    """The run's status as the pages show it: the frame's `status` column where it has one,
    else the sweep's record status (`parsed`, `no-explore`)."""
    if row.get("status") is not None:
        return str(row["status"])
    return None if record is None else record.status


def outcome_text(row: dict[str, Any]) -> str | None:
    """The run's outcome in words (`passed`, `failed`, `reward 0.5`), None when it has none."""
    passed, reward = row.get("passed"), row.get("reward")
    parts = []
    if passed is not None:
        parts.append("passed" if passed else "failed")
    if reward is not None:
        parts.append(f"reward {num(reward)}")
    return ", ".join(parts) or None


# --- small formatting -------------------------------------------------------------------------


def missing(x: Any) -> bool:
    """Whether a frame value is missing (None, NaN, <NA>)."""
    if x is None:
        return True
    try:
        import pandas as pd

        return bool(pd.isna(x)) if not isinstance(x, list | tuple | dict) else False
    except (TypeError, ValueError):
        return False


def plain(x: Any) -> Any:
    """A frame value as JSON: None for missing, Python numbers, text cleaned."""
    if missing(x):
        return None
    if isinstance(x, bool):
        return x
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float):
        if not math.isfinite(x):
            return None
        return int(x) if x.is_integer() and abs(x) < 2**53 else x
    if isinstance(x, int | bool):
        return x
    return clean(str(x))


def num(x: Any) -> str:
    """A value as the pages print it: grouped integers, up to three decimals, `—` for none."""
    x = plain(x)
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:,.3f}".rstrip("0").rstrip(".") if abs(x) < 1e6 else f"{x:,.0f}"
    return str(x)


def _cell(x: Any, unit: str | None = None) -> dict[str, Any]:
    v = plain(x)
    if unit == "fraction" and isinstance(v, int | float) and not isinstance(v, bool):
        return {"text": pct1(v), "num": True}
    return {"text": num(v), "num": isinstance(v, int | float) and not isinstance(v, bool)}


def frame_table(
    df: pd.DataFrame,
    caption: str,
    *,
    table_caveats: Sequence[str] = (),
    units: dict[str, str] | None = None,
    links: dict[int, str] | None = None,
    empty: str | None = None,
    id: str | None = None,  # noqa: A002
) -> dict[str, Any]:
    """A frame as the templates' table: column names, formatted cells, the table's caveats."""
    import pandas as pd

    units = units or {}
    if not isinstance(df.index, pd.RangeIndex):
        df = df.reset_index()  # a labelled index (a group, a task) is a column of the table
    rows = []
    for i, row in enumerate(df.itertuples(index=False)):
        cells = [_cell(v, units.get(c)) for c, v in zip(df.columns, row, strict=True)]
        if links and i in links and cells:
            cells[0] = {**cells[0], "href": links[i]}
        rows.append(cells)
    return {
        "caption": caption,
        "columns": [clean(str(c)) for c in df.columns],
        "rows": rows,
        "caveats": list(table_caveats),
        "empty": empty,
        "id": id,
    }


def _slug(text: str) -> str:
    """A file name for `text` (a log or a task): readable part plus a digest, never a path."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")[:60]
    return f"{readable}-{digest}" if readable else digest


def session_file(log: str) -> str:
    """The session page of `log`, relative to the report's root."""
    return f"sessions/{_slug(log)}.html"


def task_file(task: str) -> str:
    return f"tasks/{_slug(task)}.html"


# --- the session page -------------------------------------------------------------------------

_PANEL = (
    ("agent", "agent"),
    ("kind", "kind"),
    ("model", "model"),
    ("group", "group"),
    ("arm", "arm"),
    ("task", "task"),
    ("trial", "trial"),
    ("segments", "segment files"),
    ("explore_calls", "explore calls"),
    ("cited_chars", "cited chars"),
    ("chars", "explore chars"),
    ("tool_calls", "tool calls"),
    ("turns", "turns"),
    ("compactions", "compactions"),
    ("prompt_tokens", "prompt tokens"),
    ("cache_read_tokens", "cache read tokens"),
    ("output_tokens", "output tokens"),
    ("final_context", "final context (tokens)"),
    ("cost_usd", "cost (USD)"),
    ("cost_source", "cost from"),  # recorded by the log, or its tokens priced (issue 27)
    ("recorded_cost_usd", "recorded cost (USD)"),
    ("priced_cost_usd", "priced cost (USD)"),
    ("price_reason", "not priced"),
    ("duration_s", "duration (s)"),
)


def _panel(row: dict[str, Any], record: Any) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    facts: list[tuple[str, str]] = []
    status = run_status(row, record)
    if status:
        facts.append(("status", status))
    outcome = outcome_text(row)
    facts.append(("outcome", outcome or "none recorded"))
    if row.get("efficiency") is not None and not missing(row.get("efficiency")):
        facts.append(("explore efficiency", pct1(float(row["efficiency"]))))
    for key, label in _PANEL:
        if key in row and not missing(row[key]):
            facts.append((label, num(row[key])))
    residuals = [
        (key.removeprefix("residual_").replace("_", " "), num(v))
        for key, v in row.items()
        if key.startswith("residual_")
        and not key.endswith(("_share", "window_share"))
        and not missing(v)
    ]
    return facts, residuals


def _result_size(c) -> str:
    tokens = "" if c.result_tokens is None else f" ≈ {c.result_tokens:,.0f} tokens"
    return f"{c.result_chars:,} chars{tokens}"


def session_page(
    t: Timeline,
    *,
    row: dict[str, Any] | None = None,
    record: Any = None,
    root: str = "../",
    task_href: str | None = None,
    text_href: Callable[[str], str] | None = None,
    standalone: bool = False,
) -> str:
    """The session page's HTML (`templates/session.html.j2`).

    Args:
        t: The session's timeline.
        row: The session's row of `sessions_df` (the side panel).
        record: The sweep's record of the session (its status, until issue 23).
        root: The report's root relative to the page (`../` in a report; `""` stand-alone).
        task_href: The task page to link, if any.
        text_href: The link to a file beside the page (`call-N.txt`, `call-N-input.txt`) holding
            a result or an input too long to show whole.
        standalone: One file with its stylesheet and script inside (a notebook's frame).
    """
    facts, residuals = _panel(row or {}, record)
    return render(
        "session.html.j2",
        standalone=standalone,
        title=t.log,
        root=root,
        page_class="session",
        t=t,
        panel=facts,
        residuals=residuals,
        task_href=task_href,
        preview=PREVIEW_CHARS,
        inline=INLINE_CHARS,
        fold=lambda c: c.result_chars > FOLD_CHARS or len(c.sections) > 0,
        size=_result_size,
        full_href=lambda c: text_href(f"call-{c.number}.txt") if text_href else None,
        input_href=lambda c: text_href(f"call-{c.number}-input.txt") if text_href else None,
    )


def long_texts(t: Timeline) -> list[tuple[str, str]]:
    """`(file name, text)` of every call input or result too long to show whole on the page
    (`call-N.txt`, `call-N-input.txt`): the page links them."""
    out = []
    for c in all_calls(t):
        if c.result is not None and (
            len(c.result) > INLINE_CHARS or len(c.preamble) > PREVIEW_CHARS
        ):
            out.append((f"call-{c.number}.txt", c.result))
        if len(c.input) > INLINE_CHARS:
            out.append((f"call-{c.number}-input.txt", c.input))
    return out


# --- task pages -------------------------------------------------------------------------------


def task_of(row: dict[str, Any]) -> str:
    task = row.get("task")
    return str(task) if not missing(task) else str(row.get("group"))


def _cost(row: dict[str, Any]) -> Any:
    """The run's cost: the frame's (recorded by the log, else its tokens priced), else the
    session's recorded cost."""
    return row.get("cost_usd") if not missing(row.get("cost_usd")) else row.get("session_cost_usd")


def _run_card(
    row: dict[str, Any], record: Any, tools: list[dict[str, Any]], calls: list[dict[str, Any]]
) -> dict[str, Any]:
    """One run on a task page: its facts, its tool calls as a strip (each tick links the call
    on the session page) and its explore calls' allocation (rows of `tool_calls_df` and
    `calls_df`)."""
    log = row["log"]
    href = "../" + session_file(log)
    facts = [
        ("status", run_status(row, record) or "—"),
        ("outcome", outcome_text(row) or "none recorded"),
        ("tool calls", num(row.get("tool_calls"))),
        (
            "tokens (prompt + output)",
            num(_sum(row.get("prompt_tokens"), row.get("output_tokens"))),
        ),
        ("cost (USD)", num(_cost(row))),
        ("duration (s)", num(row.get("duration_s"))),
    ]
    if not missing(row.get("efficiency")):
        facts.append(("explore efficiency", pct1(float(row["efficiency"]))))
    strip = [
        {"number": t["call"], "name": clean(str(t["name"])), "family": clean(str(t["family"])),
         "href": f"{href}#call-{t['call']}"}
        for t in tools
    ]  # fmt: skip
    explore = [
        {"call": c["call"], "sections": num(c["sections"]), "cited": num(c["cited_chars"]),
         "chars": num(c["chars"]), "efficiency": pct1(float(c["efficiency"]))}
        for c in calls
    ]  # fmt: skip
    return {"log": clean(log), "href": href, "facts": facts, "strip": strip, "explore": explore}


def _arm_summary(by_arm: dict[str, list[dict[str, Any]]], order: list[str]) -> dict[str, Any]:
    """The task's runs per arm: how many, how many passed, and the median of each figure."""
    import pandas as pd

    from evalkit.tables.quantile import median

    def med(rows: list[dict[str, Any]], get: Callable[[dict[str, Any]], Any]) -> Any:
        return median([float(v) for v in map(get, rows) if not missing(v)])

    table = []
    for arm in order:
        rows = by_arm[arm]
        passed = [r["passed"] for r in rows if not missing(r.get("passed"))]
        table.append(
            {
                "arm": arm,
                "runs": len(rows),
                "passed": f"{sum(passed)} of {len(passed)}" if passed else None,
                "median tool calls": med(rows, lambda r: r.get("tool_calls")),
                "median tokens": med(
                    rows, lambda r: _sum(r.get("prompt_tokens"), r.get("output_tokens"))
                ),
                "median cost (USD)": med(rows, _cost),
                "median duration (s)": med(rows, lambda r: r.get("duration_s")),
            }
        )
    return frame_table(pd.DataFrame(table), "Per arm", table_caveats=[caveats.SMALL_N])


def task_pages(
    rows: list[dict[str, Any]],
    corpus: Corpus,
    records: dict[str, Any],
    outcome_rows: dict[str, dict[str, Any]],
) -> list[tuple[str, str, dict[str, Any]]]:
    """(task, file, page context) for every task: its runs by arm, side by side."""
    from evalkit.outputs.glance import NO_ARM, arm_order

    calls_by: dict[str, list[dict[str, Any]]] = {}
    tools_by: dict[str, list[dict[str, Any]]] = {}
    for frame, keep, by in (
        (
            corpus.calls_df(),
            ["log", "call", "sections", "cited_chars", "chars", "efficiency"],
            calls_by,
        ),
        (corpus.tool_calls_df(), ["log", "call", "name", "family"], tools_by),
    ):
        for r in frame_rows(frame[keep]):
            by.setdefault(r["log"], []).append(r)
    tasks: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in rows:
        arm = NO_ARM if missing(row.get("arm")) else str(row["arm"])
        tasks.setdefault(task_of(row), {}).setdefault(arm, []).append(row)
    pages = []
    for task, by_arm in tasks.items():
        order = arm_order(list(by_arm))
        arms = [
            {
                "name": clean(arm),
                "runs": [
                    _run_card(
                        r,
                        records.get(r["log"]),
                        tools_by.get(r["log"], []),
                        calls_by.get(r["log"], []),
                    )
                    for r in by_arm[arm]
                ],
            }
            for arm in order
        ]
        families = sorted({t["family"] for a in arms for run in a["runs"] for t in run["strip"]})
        lines = []
        got = outcome_rows.get(task)
        if got is not None:
            lines.append(
                f"Outcome: {got.get('class')} — delta {num(got.get('delta'))} "
                f"({got.get('candidate') or 'candidate'} against {got.get('baseline') or 'baseline'})"
            )
        context = {
            "heading": f"Task {clean(task)}",
            "lines": lines,
            "tables": [_arm_summary(by_arm, order)],
            "arms": arms,
            "groups": [{"title": None, "arms": arms}],
            "families": families,
            "caveats": [],
        }
        pages.append((task, task_file(task), context))
    return pages


def _sum(*xs: Any) -> Any:
    got = [float(x) for x in xs if not missing(x)]
    return sum(got) if got else None


def _value(x: Any) -> Any:
    """A frame value as Python: None for missing, Python numbers; text kept as it is (a log
    names its session)."""
    if missing(x):
        return None
    return x.item() if hasattr(x, "item") else x


def frame_rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as dicts of Python values (None for missing)."""
    cols = list(df.columns)
    return [
        {c: _value(v) for c, v in zip(cols, r, strict=True)}
        for r in df.itertuples(index=False, name=None)
    ]
