"""The static report of a corpus: `write_report(DIR, OUT)` (`evalkit report`, `evalkit view`).

    OUT/index.html               the corpus line and accounting, the sweep's (or the trial
                                 sweep's) tables, the figures, the sessions table, the tasks
    OUT/sessions/<name>.html     one page per session: the timeline and the session's row
    OUT/sessions/<name>/call-N.txt   the full text of a result too long to show inline
    OUT/tasks/<name>.html        one page per task: its runs side by side, arm by arm
    OUT/assets/report.{js,css}   the one script and stylesheet every page uses
    OUT/evalkit-report.json      what the report wrote (names and digests; `writer.MARKER`)

Everything comes from the frames and the session model (`evalkit.load_corpus`, the sweep's and
the trial sweep's tables): there is no second parser. The pages need no server and make no
request: open `index.html` from disk, or serve the folder (`evalkit.outputs.html.serve`).

The sessions table keeps its rows as JSON data and the page's script draws 50 at a time, with
sorting and filtering over every row (hand-written, `assets/report.js`: about 150 lines, which
is less to audit than a vendored table library, and needs none of its styling or plug-ins).

Pages are deterministic: no absolute path, time or process id is written; page names are
derived from the session's `log` (readable part plus a digest).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.ecma import pct1
from evalkit.errors import EvalkitError
from evalkit.outputs import caveats
from evalkit.outputs.html.render import asset, figure_svg, render, script_json
from evalkit.outputs.html.timeline import Timeline, all_calls, clean, timeline
from evalkit.outputs.html.writer import SiteWriter

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.tables.corpus import Corpus

__all__ = [
    "ReportOptions",
    "Written",
    "write_report",
    "session_page",
    "session_file",
    "run_status",
    "outcome_text",
    "PREVIEW_CHARS",
    "INLINE_CHARS",
    "FOLD_CHARS",
    "frame_rows",
]

# Sizes that hold for a 50 MB transcript: a result longer than INLINE_CHARS shows its first
# PREVIEW_CHARS and links its full text (a .txt file beside the page); results longer than
# FOLD_CHARS start folded.
PREVIEW_CHARS = 4_000
INLINE_CHARS = 20_000
FOLD_CHARS = 1_200

# The sessions table's columns, in order (frame column names, so `column:text` filters by them);
# a column no session has a value in is left out.
SESSION_COLUMNS = (
    "log",
    "agent",
    "kind",
    "group",
    "arm",
    "task",
    "trial",
    "status",
    "outcome",
    "efficiency",
    "explore_calls",
    "tool_calls",
    "prompt_tokens",
    "output_tokens",
    "cost_usd",
    "duration_s",
    "reward",
    "passed",
    "model",
)


@dataclass(frozen=True)
class ReportOptions:
    """The sweep's discovery and table options, as `evalkit report` takes them."""

    layout: str | None = None
    profile: str | None = None
    outcomes: str | os.PathLike[str] | None = None
    arms: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    pass_threshold: float = 1.0
    cache: bool = True
    cache_dir: str | os.PathLike[str] | None = None
    jobs: int | None = None
    format: str | None = None

    @property
    def trials(self) -> bool:
        """A trial sweep, as `evalkit sweep` decides it."""
        return self.layout is not None or self.profile is not None or self.outcomes is not None


@dataclass(frozen=True)
class Written:
    """What `write_report` wrote: the files (relative to OUT) and how many of each page."""

    files: tuple[str, ...]
    sessions: int
    tasks: int
    unreadable: tuple[tuple[str, str], ...] = ()


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
        parts.append(f"reward {_num(reward)}")
    return ", ".join(parts) or None


# --- small formatting -------------------------------------------------------------------------


def _missing(x: Any) -> bool:
    if x is None:
        return True
    try:
        import pandas as pd

        return bool(pd.isna(x)) if not isinstance(x, list | tuple | dict) else False
    except (TypeError, ValueError):
        return False


def _plain(x: Any) -> Any:
    """A frame value as JSON: None for missing, Python numbers, text cleaned."""
    if _missing(x):
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


def _num(x: Any) -> str:
    x = _plain(x)
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
    v = _plain(x)
    if unit == "fraction" and isinstance(v, int | float) and not isinstance(v, bool):
        return {"text": pct1(v), "num": True}
    return {"text": _num(v), "num": isinstance(v, int | float) and not isinstance(v, bool)}


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
    ("session_cost_usd", "session cost (USD)"),
    ("duration_s", "duration (s)"),
)


def _panel(row: dict[str, Any], record: Any) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    facts: list[tuple[str, str]] = []
    status = run_status(row, record)
    if status:
        facts.append(("status", status))
    outcome = outcome_text(row)
    facts.append(("outcome", outcome or "none recorded"))
    if row.get("efficiency") is not None and not _missing(row.get("efficiency")):
        facts.append(("explore efficiency", pct1(float(row["efficiency"]))))
    for key, label in _PANEL:
        if key in row and not _missing(row[key]):
            facts.append((label, _num(row[key])))
    residuals = [
        (key.removeprefix("residual_").replace("_", " "), _num(v))
        for key, v in row.items()
        if key.startswith("residual_")
        and not key.endswith(("_share", "window_share"))
        and not _missing(v)
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


def _long_texts(t: Timeline) -> list[tuple[str, str]]:
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


# --- the index --------------------------------------------------------------------------------


def _units() -> dict[str, str]:
    from evalkit.corpus.columns import columns_of

    return {c.name: c.unit for c in columns_of("sessions")}


def _meanings() -> dict[str, str]:
    from evalkit.corpus.columns import columns_of

    return {c.name: c.meaning for c in columns_of("sessions")}


def _session_data(rows: list[dict[str, Any]], records: dict[str, Any]) -> dict[str, Any]:
    """The sessions table as the page's script reads it: every column of the sessions frame
    (`SESSION_COLUMNS` first, shown; the rest a click away in the column list), a column no
    session has a value in left out, each row's page, each column's unit and meaning."""
    units, meanings = _units(), _meanings()
    extra = {"status": "the run's status", "outcome": "the run's outcome in words"}
    frame_columns = list(rows[0]) if rows else []
    names = list(SESSION_COLUMNS) + [c for c in frame_columns if c not in SESSION_COLUMNS]
    table = []
    for row in rows:
        derived = {
            "status": run_status(row, records.get(row["log"])),
            "outcome": outcome_text(row),
        }
        table.append([_plain({**row, **derived}.get(c)) for c in names])
    keep = [i for i, c in enumerate(names) if i == 0 or any(r[i] is not None for r in table)]
    cols = [names[i] for i in keep]
    return {
        "columns": cols,
        "shown": [i for i, c in enumerate(cols) if c in SESSION_COLUMNS],
        "kinds": [units.get(c, "") for c in cols],
        "meanings": [meanings.get(c) or extra.get(c, "") for c in cols],
        "rows": [[r[i] for i in keep] for r in table],
        "links": [session_file(row["log"]) for row in rows],
    }


def _figure(title: str, draw: Callable[[], Any]) -> dict[str, str] | None:
    try:
        fig = draw()
    except Exception as exc:  # noqa: BLE001 — a figure that cannot be drawn is said, not fatal
        return {"title": f"{title}: could not be drawn ({clean(str(exc))[:200]})", "svg": ""}
    if fig is None:
        return None
    from markupsafe import Markup

    return {"title": title, "svg": Markup(figure_svg(fig))}


def _accounting_block(acc: Sequence[Any]) -> dict[str, Any]:
    import pandas as pd

    counts: dict[str, int] = {}
    for a in acc:
        counts[a.status] = counts.get(a.status, 0) + 1
    line = f"Files: {len(acc)} entries accounted for — " + ", ".join(
        f"{n} {status}" for status, n in counts.items()
    )
    df = pd.DataFrame(
        [(a.path, a.status, a.reason or "") for a in acc],
        columns=["file", "what became of it", "why"],
    )
    return {
        "id": "files",
        "title": "Every file and what became of it",
        "lines": [line],
        "tables": [frame_table(df, "Files")],
        "figures": [],
        "caveats": [],
    }


def _sweep_blocks(corpus: Corpus, opts: ReportOptions) -> tuple[str, list[str], list[dict]]:
    from evalkit.outputs.figures import (
        arm_runs_data,
        arm_runs_figure,
        corpus_title,
        ecdf_data,
        ecdf_figure,
    )
    from evalkit.outputs.sweep_text import QUANTILE_METHOD, corpus_line
    from evalkit.tables.agents import agent_frame

    result = corpus.sweep(opts.arms, exclude=opts.exclude)
    notes = [caveats.SYNTHETIC_CORPUS] if result.bundled else []
    tables = [
        frame_table(
            result.slices_frame(),
            "Allocation efficiency per session, by slice",
            table_caveats=[QUANTILE_METHOD],
            units=dict.fromkeys(
                ("pooled", "median", "p25", "p75", "min", "path_cited"), "fraction"
            ),
        ),
    ]
    if result.arm_rows:
        tables.append(
            frame_table(
                result.arm_frame(),
                f"Arms — per-session efficiency by pass / repo ({' vs '.join(result.arms)})",
                table_caveats=[caveats.SMALL_N],
                units=dict.fromkeys(("median", "min", "max", "pooled"), "fraction"),
            )
        )
    if result.agents:
        tables.append(frame_table(agent_frame(result.agents), "Other agents, per agent and arm"))
    bundled = result.bundled
    figures = []
    if result.sessions:
        figures.append(
            _figure(
                corpus_title("Allocation efficiency per session", bundled),
                lambda: ecdf_figure(ecdf_data(result), corpus_title("ECDF by slice", bundled)),
            )
        )
    if result.arm_rows:
        figures.append(
            _figure(
                corpus_title("Runs per arm", bundled),
                lambda: arm_runs_figure(
                    arm_runs_data(result), corpus_title("Runs per arm", bundled)
                ),
            )
        )
    blocks = [
        {
            "id": "sweep",
            "title": "The sweep",
            "lines": [],
            "tables": tables,
            "figures": [f for f in figures if f],
            "caveats": list(caveats.SWEEP_CAVEATS),
        }
    ]
    return corpus_line(result), notes, blocks


def _trial_blocks(corpus: Corpus, opts: ReportOptions, trials) -> tuple[str, list[str], list[dict]]:
    from evalkit.outputs.figures import outcome_deltas_data, outcome_deltas_figure
    from evalkit.synthetic.harbor import is_synthetic_harbor

    t = trials
    parsed = t.parsed
    with_outcome = sum(1 for r in parsed if r.reward is not None or r.passed is not None)
    line = (
        f"{len(parsed)} runs read ({with_outcome} with an outcome), arms: "
        f"{', '.join(t.arms) or 'none'}; tool profile {t.profile.name}"
    )
    notes = [caveats.SYNTHETIC_HARBOR_CORPUS] if is_synthetic_harbor(t.root) else []
    tables = [frame_table(t.arm_summary_frame(), "Per arm: cost, tokens, duration, tool calls")]
    figures = []
    if t.outcomes is not None:
        tables.insert(
            0,
            frame_table(
                t.outcomes.to_frame(),
                f"Outcomes per task — {t.candidate} against {t.baseline} (helps / hurts / tie)",
                table_caveats=[caveats.SMALL_N],
                links={
                    i: task_file(str(task)) for i, task in enumerate(t.outcomes.to_frame()["task"])
                },
            ),
        )
        tables.insert(1, frame_table(t.outcomes.summary_frame(), "Outcome summary"))
        figures.append(
            _figure(
                "Reward delta per task",
                lambda: outcome_deltas_figure(
                    outcome_deltas_data(t.outcomes), "Reward delta per task"
                ),
            )
        )
    tables.append(
        frame_table(
            t.reads_frame(),
            "Read allocation per arm (evalkit's own metric)",
            table_caveats=list(caveats.READ_ALLOCATION_CAVEATS),
            units={"pooled": "fraction", "median_run": "fraction"},
        )
    )
    blocks = [
        {
            "id": "trials",
            "title": "The trial sweep",
            "lines": []
            if t.outcomes is not None
            else ["Two arms are needed for the outcome table."],
            "tables": tables,
            "figures": [f for f in figures if f],
            "caveats": [],
        }
    ]
    return line, notes, blocks


def _glance_block(corpus: Corpus) -> dict[str, Any] | None:
    from evalkit.outputs import glance

    if corpus.sessions_df().empty:
        return None
    figures = [
        _figure(
            "Tool calls per session, by family",
            lambda: glance.tool_mix_figure(glance.tool_mix_data(corpus), "Tool mix per arm"),
        ),
        _figure(
            "Residual context at the end, by family",
            lambda: glance.residual_figure(glance.residual_data(corpus), "Residual occupancy"),
        ),
        _figure(
            "What the agent did after each explore call",
            lambda: glance.buckets_figure(glance.buckets_data(corpus), "Sufficiency buckets"),
        ),
    ]
    return {
        "id": "glance",
        "title": "At a glance",
        "lines": [],
        "tables": [
            frame_table(glance.sessions_by_group(corpus), "Sessions by group and arm"),
        ],
        "figures": [f for f in figures if f],
        "caveats": [caveats.RELATIVE_METRIC],
    }


# --- task pages -------------------------------------------------------------------------------


def _task_of(row: dict[str, Any]) -> str:
    task = row.get("task")
    return str(task) if not _missing(task) else str(row.get("group"))


def _cost(row: dict[str, Any]) -> Any:
    """The run's cost: the result's, else the session's sum over its segments."""
    return row.get("cost_usd") if not _missing(row.get("cost_usd")) else row.get("session_cost_usd")


def _run_card(row: dict[str, Any], record: Any, tools: Any, calls: Any) -> dict[str, Any]:
    """One run on a task page: its facts, its tool calls as a strip (each tick links the call
    on the session page) and its explore calls' allocation."""
    log = row["log"]
    href = "../" + session_file(log)
    facts = [
        ("status", run_status(row, record) or "—"),
        ("outcome", outcome_text(row) or "none recorded"),
        ("tool calls", _num(row.get("tool_calls"))),
        (
            "tokens (prompt + output)",
            _num(_sum(row.get("prompt_tokens"), row.get("output_tokens"))),
        ),
        ("cost (USD)", _num(_cost(row))),
        ("duration (s)", _num(row.get("duration_s"))),
    ]
    if not _missing(row.get("efficiency")):
        facts.append(("explore efficiency", pct1(float(row["efficiency"]))))
    strip = []
    if tools is not None:
        for number, name, family in zip(tools["call"], tools["name"], tools["family"], strict=True):
            n = _plain(number)
            strip.append(
                {"number": n, "name": clean(str(name)), "family": clean(str(family)),
                 "href": f"{href}#call-{n}"}
            )  # fmt: skip
    explore = []
    if calls is not None:
        for c in calls.itertuples(index=False):
            explore.append(
                {"call": _plain(c.call), "sections": _num(c.sections), "cited": _num(c.cited_chars),
                 "chars": _num(c.chars), "efficiency": pct1(float(c.efficiency))}
            )  # fmt: skip
    return {"log": clean(log), "href": href, "facts": facts, "strip": strip, "explore": explore}


def _arm_summary(by_arm: dict[str, list[dict[str, Any]]], order: list[str]) -> dict[str, Any]:
    """The task's runs per arm: how many, how many passed, and the median of each figure."""
    import pandas as pd

    from evalkit.tables.quantile import median

    def med(rows: list[dict[str, Any]], get: Callable[[dict[str, Any]], Any]) -> Any:
        return median([float(v) for v in map(get, rows) if not _missing(v)])

    table = []
    for arm in order:
        rows = by_arm[arm]
        passed = [r["passed"] for r in rows if not _missing(r.get("passed"))]
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


def _task_pages(
    rows: list[dict[str, Any]],
    corpus: Corpus,
    records: dict[str, Any],
    outcome_rows: dict[str, dict[str, Any]],
) -> list[tuple[str, str, dict[str, Any]]]:
    """(task, file, page context) for every task: its runs by arm, side by side."""
    from evalkit.outputs.glance import NO_ARM, arm_order

    calls, tools = corpus.calls_df(), corpus.tool_calls_df()
    calls_by = dict(tuple(calls.groupby("log", sort=False))) if len(calls) else {}
    tools_by = dict(tuple(tools.groupby("log", sort=False))) if len(tools) else {}
    tasks: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in rows:
        arm = NO_ARM if _missing(row.get("arm")) else str(row["arm"])
        tasks.setdefault(_task_of(row), {}).setdefault(arm, []).append(row)
    pages = []
    for task, by_arm in tasks.items():
        order = arm_order(list(by_arm))
        arms = [
            {
                "name": clean(arm),
                "runs": [
                    _run_card(
                        r, records.get(r["log"]), tools_by.get(r["log"]), calls_by.get(r["log"])
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
                f"Outcome: {got.get('class')} — delta {_num(got.get('delta'))} "
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
    got = [float(x) for x in xs if not _missing(x)]
    return sum(got) if got else None


# --- the whole report -------------------------------------------------------------------------


def _load(root: str | os.PathLike[str], opts: ReportOptions) -> Corpus:
    from evalkit.tables.corpus import load_corpus

    return load_corpus(
        root,
        layout=opts.layout,
        profile=opts.profile,
        cache=opts.cache,
        cache_dir=opts.cache_dir,
        jobs=opts.jobs,
        progress=False,
        format=opts.format,
    )


def _trials(root: str | os.PathLike[str], opts: ReportOptions):
    from evalkit.tables.trials import run_trial_sweep

    return run_trial_sweep(
        root,
        layout=opts.layout,
        profile=opts.profile,
        outcomes=opts.outcomes,
        pass_threshold=opts.pass_threshold,
        arms=opts.arms,
        exclude=opts.exclude,
        cache=opts.cache,
        cache_dir=opts.cache_dir,
        jobs=opts.jobs,
        progress=False,
    )


def _value(x: Any) -> Any:
    """A frame value as Python: None for missing, Python numbers; text kept as it is (a log
    names its session)."""
    if _missing(x):
        return None
    return x.item() if hasattr(x, "item") else x


def frame_rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as dicts of Python values (None for missing)."""
    cols = list(df.columns)
    return [
        {c: _value(v) for c, v in zip(cols, r, strict=True)}
        for r in df.itertuples(index=False, name=None)
    ]


def write_report(
    root: str | os.PathLike[str] | None,
    out: str | os.PathLike[str],
    options: ReportOptions | None = None,
) -> Written:
    """Write the static report of the corpus at `root` (default: the bundled one) to `out`.

    Raises:
        UsageError: `root` is not a corpus directory, an option is unusable, or `out` holds
            files evalkit did not write (see `evalkit.outputs.html.writer`).
    """
    from evalkit.paths import bundled_corpus

    opts = options or ReportOptions()
    root = Path(root) if root is not None else Path(bundled_corpus())
    writer = SiteWriter(out)  # refuse a folder that is not ours before any work
    corpus = _load(root, opts)
    trials = _trials(root, opts) if opts.trials else None
    records = {r.log: r for r in corpus.records}
    outcome_rows: dict[str, dict[str, Any]] = {}
    if trials is not None and trials.outcomes is not None:
        for r in frame_rows(trials.outcomes.to_frame()):
            outcome_rows[str(r["task"])] = {
                **r, "baseline": trials.baseline, "candidate": trials.candidate
            }  # fmt: skip
        # The trial sweep's outcomes (joined from result.json or --outcomes) on each run's row.
        by_log = {r.log: r for r in trials.rows}
    else:
        by_log = {}
    rows = frame_rows(corpus.sessions_df())
    for row in rows:
        tr = by_log.get(row["log"])
        if tr is not None:
            if _missing(row.get("reward")) and tr.reward is not None:
                row["reward"] = tr.reward
            if _missing(row.get("passed")) and tr.passed is not None:
                row["passed"] = tr.passed

    writer.write("assets/report.js", asset("report.js"))
    writer.write("assets/report.css", asset("report.css"))

    task_pages = _task_pages(rows, corpus, records, outcome_rows)
    task_of = {row["log"]: task_file(_task_of(row)) for row in rows}
    unreadable: list[tuple[str, str]] = []
    for row in rows:
        log = row["log"]
        try:
            session = corpus.session(log)
            t = timeline(session, log=log)
        except (EvalkitError, KeyError) as exc:
            unreadable.append((log, clean(str(exc))))
            t = Timeline(log=clean(log), agent=str(row.get("agent")), kind=str(row.get("kind")),
                         entries=(), answer=(), answer_source=f"could not be read again: {clean(str(exc))}")  # fmt: skip
        page = session_file(log)
        folder = page.removesuffix(".html")
        for name, text in _long_texts(t):
            # A UTF-8 byte order mark, so a browser opening the file from disk reads it as UTF-8.
            writer.write(f"{folder}/{name}", "\ufeff" + text)
        stem = folder.rsplit("/", 1)[1]
        html = session_page(
            t,
            row=row,
            record=records.get(log),
            task_href="../" + task_of[log],
            text_href=lambda name, stem=stem: f"{stem}/{name}",
        )
        writer.write(page, html)

    for _, file, ctx in task_pages:
        writer.write(
            file, render("task.html.j2", title=ctx["heading"], root="../", page_class="task", **ctx)
        )

    if trials is not None:
        line, notes, blocks = _trial_blocks(corpus, opts, trials)
    else:
        line, notes, blocks = _sweep_blocks(corpus, opts)
    glance_block = _glance_block(corpus)
    if glance_block is not None:
        blocks.append(glance_block)
    import pandas as pd

    task_table = pd.DataFrame(
        [
            (task, ", ".join(f"{a['name']} {len(a['runs'])}" for a in ctx["arms"]),
             outcome_rows.get(task, {}).get("class"))
            for task, _, ctx in task_pages
        ],
        columns=["task", "runs per arm", "outcome class"],
    )  # fmt: skip
    if task_table["outcome class"].isna().all():
        task_table = task_table.drop(columns="outcome class")
    blocks.append(
        {
            "id": "tasks",
            "title": "Tasks",
            "lines": [
                "Each task's runs side by side, arm by arm (a task is the layout's task, else the session's group)."
            ],
            "tables": [
                frame_table(
                    task_table, "Tasks", links={i: f for i, (_, f, _) in enumerate(task_pages)}
                )
            ],
            "figures": [],
            "caveats": [],
        }
    )
    blocks.append(_accounting_block(corpus.accounting()))
    if corpus.errors:
        errs = pd.DataFrame(
            [(e.log, e.reason) for e in corpus.errors],
            columns=["session", "why it could not be read"],
        )
        blocks.append({"id": "unreadable", "title": "Sessions that could not be read", "lines": [], "tables": [frame_table(errs, "Unreadable sessions")], "figures": [], "caveats": []})  # fmt: skip
    toc = [{"id": "sessions", "title": "Sessions"}] + [
        {"id": b["id"], "title": b["title"]} for b in blocks
    ]
    index = render(
        "index.html.j2",
        title=clean(root.name),
        root="",
        page_class="index",
        heading=f"Report of {clean(root.name)}/",
        notes=notes,
        corpus_line=line,
        toc=toc,
        blocks=blocks,
        session_data=_markup(script_json(_session_data(rows, records))),
    )
    writer.write("index.html", index)
    files = writer.close()
    return Written(tuple(files), len(rows), len(task_pages), tuple(unreadable))


def _markup(text: str):
    from markupsafe import Markup

    return Markup(text)
