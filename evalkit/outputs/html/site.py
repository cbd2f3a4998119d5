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

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.outputs import caveats
from evalkit.outputs.html.pages import (
    frame_rows,
    frame_table,
    long_texts,
    missing,
    outcome_text,
    plain,
    run_status,
    session_file,
    session_page,
    task_file,
    task_of,
    task_pages,
)
from evalkit.outputs.html.render import asset, figure_svg, render, script_json
from evalkit.outputs.html.timeline import Timeline, clean, timeline
from evalkit.outputs.html.writer import SiteWriter

if TYPE_CHECKING:
    from evalkit.tables.corpus import Corpus

__all__ = ["ReportOptions", "Written", "write_report", "SESSION_COLUMNS"]


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
    prices: str | os.PathLike[str] | None = None  # --prices FILE.toml (issue 27)

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


# --- the index --------------------------------------------------------------------------------


def _units() -> dict[str, str]:
    from evalkit.store.columns import columns_of

    return {c.name: c.unit for c in columns_of("sessions")}


def _meanings() -> dict[str, str]:
    from evalkit.store.columns import columns_of

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
        table.append([plain({**row, **derived}.get(c)) for c in names])
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
        prices=opts.prices,
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
        prices=opts.prices,
    )


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
            if missing(row.get("reward")) and tr.reward is not None:
                row["reward"] = tr.reward
            if missing(row.get("passed")) and tr.passed is not None:
                row["passed"] = tr.passed

    writer.write("assets/report.js", asset("report.js"))
    writer.write("assets/report.css", asset("report.css"))

    tasks = task_pages(rows, corpus, records, outcome_rows)
    page_of_task = {row["log"]: task_file(task_of(row)) for row in rows}
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
        for name, text in long_texts(t):
            # A UTF-8 byte order mark, so a browser opening the file from disk reads it as UTF-8.
            writer.write(f"{folder}/{name}", "\ufeff" + text)
        stem = folder.rsplit("/", 1)[1]
        html = session_page(
            t,
            row=row,
            record=records.get(log),
            task_href="../" + page_of_task[log],
            text_href=lambda name, stem=stem: f"{stem}/{name}",
        )
        writer.write(page, html)

    for _, file, ctx in tasks:
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
            for task, _, ctx in tasks
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
                frame_table(task_table, "Tasks", links={i: f for i, (_, f, _) in enumerate(tasks)})
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
    return Written(tuple(files), len(rows), len(tasks), tuple(unreadable))


def _markup(text: str):
    from markupsafe import Markup

    return Markup(text)
