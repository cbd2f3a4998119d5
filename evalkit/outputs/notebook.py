"""Notebook support: deterministic output, where the data is, where figures go, and the small
choices a notebook template makes about *its* corpus.

Every evalkit notebook starts with

    import evalkit.notebook as nb
    nb.setup()

so that outputs are the same on every run (nbval compares them): the Agg backend, a fixed
figure size and dpi, fixed pandas display options, no progress bars, and figure files written
without timestamps.

The notebooks are templates: they analyse whatever corpus (or evidence file) their parameter
names, and compare with the published figures only when it is the bundled one
(`is_bundled_corpus`, `is_bundled_evidence`). What they pick out of a corpus — the lowest
sessions, the session to open in depth, the arm cells to count — is computed here, never typed
into a notebook.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.paths import bundled_corpus, bundled_evidence, repo_root
from evalkit.store.columns import name_text

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.formats.common import AgentSession
    from evalkit.paired import PairedReport
    from evalkit.session import InteractiveSession, Session
    from evalkit.stats import PairedDeltas
    from evalkit.tables.campaign import Campaign
    from evalkit.tables.compare import Comparison
    from evalkit.tables.corpus import Corpus
    from evalkit.tables.sweep import SweepResult
    from evalkit.tables.trials import TrialSweep

__all__ = [
    "FIGSIZE",
    "DPI",
    "setup",
    "corpus_dir",
    "harbor_corpus_dir",
    "evidence_file",
    "figures_dir",
    "save_figure",
    "show_path",
    "execute",
    "is_bundled_corpus",
    "is_bundled_evidence",
    "per_call_line",
    "lowest_sessions",
    "session_pages",
    "SessionPages",
    "lowest_session_calls",
    "lowest_session_line",
    "arm_cells",
    "arm_cells_line",
    "pick_session",
    "session_line",
    "session_report",
    "explore_frame",
    "session_tool_calls",
    "session_sufficiency",
    "file_bytes_cell",
    "figure_cell",
    "table",
    "corpus_frame",
    "load",
    "sweep",
    "EXAMPLE_RUN",
    "example_block_comparison",
    "pairs_table",
    "pair_deltas_title",
    "host_cells_line",
    "first_case_deltas",
    "trial_corpus_dir",
    "trial_layout",
    "trial_profile",
    "arm_stats",
    "trial_sweep",
    "trials_line",
    "outcome_lines",
    "cost_account_lines",
    "COST_COLUMNS_SHOWN",
    "outcome_frame",
    "outcome_metrics_frame",
    "outcome_figure",
    "PUBLISHED_ARM_DIR",
    "PUBLISHED_ARM_LABELS",
    "BUNDLED_CAMPAIGN",
    "ArmDirectory",
    "arm_directories",
    "arm_labels",
    "pick_arm_dir",
    "arm_dir_line",
    "compare_dir",
    "sibling_comparisons",
    "pick_campaign",
    "campaign_repos",
    "campaign_line",
    "published_arm_comparison",
]

FIGSIZE = (7.0, 4.0)
DPI = 100
# Figure files carry no creation date or software version, so the same figure is the same bytes.
_PNG_METADATA = {"Software": None}
_SVG_METADATA = {"Date": None, "Creator": None}


def setup() -> None:
    """Make notebook output deterministic: Agg backend, fixed sizes, display options, no progress."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import pandas as pd

    plt.rcdefaults()
    plt.rcParams.update(
        {
            "figure.figsize": FIGSIZE,
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
            "svg.hashsalt": "evalkit",
            "font.family": "DejaVu Sans",
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    pd.set_option("display.width", 120)
    pd.set_option("display.max_columns", 20)
    pd.set_option("display.max_rows", 60)
    pd.set_option("display.precision", 4)
    # Fixed-point floats: a tiny difference prints as 0.0000, never in scientific notation.
    pd.set_option("display.float_format", "{:.4f}".format)
    pd.set_option("display.max_colwidth", 60)
    os.environ["EVALKIT_PROGRESS"] = "0"
    _show_figures_inline()


def _show_figures_inline() -> None:
    # Under Agg a Figure shows only as text; in a kernel, render it as PNG when it is the value of
    # a cell. nbval compares the text form (`<Figure size 700x400 with 1 Axes>`), not pixels.
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"png"}, dpi=DPI)


def corpus_dir(parameter: str | os.PathLike[str] | None = None) -> Path:
    """The corpus a notebook analyses: its parameter, else `$EVALKIT_CORPUS`, else the bundled one."""
    chosen = parameter or os.environ.get("EVALKIT_CORPUS") or bundled_corpus()
    return Path(chosen)


def harbor_corpus_dir(parameter: str | os.PathLike[str] | None = None) -> Path:
    """The trial corpus a notebook analyses: its parameter, else `$EVALKIT_HARBOR_CORPUS`, else
    the small synthetic harbor corpus (`evalkit.synthetic.harbor`), written once per process into
    a temporary directory (the same seed gives the same files, so the outputs are the same)."""
    chosen = parameter or os.environ.get("EVALKIT_HARBOR_CORPUS")
    if chosen:
        return Path(chosen)
    global _HARBOR_TMP
    if _HARBOR_TMP is None:
        import atexit
        import shutil
        import tempfile

        from evalkit.synthetic.harbor import generate_harbor_corpus

        tmp = tempfile.mkdtemp(prefix="evalkit-harbor-")
        atexit.register(shutil.rmtree, tmp, True)  # only the directory made here
        _HARBOR_TMP = Path(tmp) / "synthetic-harbor"
        generate_harbor_corpus(_HARBOR_TMP)
    return _HARBOR_TMP


_HARBOR_TMP: Path | None = None


def evidence_file(parameter: str | os.PathLike[str] | None = None) -> Path:
    """The evidence file a notebook reviews: its parameter, `$EVALKIT_EVIDENCE`, or the bundled one."""
    chosen = parameter or os.environ.get("EVALKIT_EVIDENCE") or bundled_evidence()
    return Path(chosen)


def is_bundled_corpus(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is the bundled synthetic corpus, the only one with published figures."""
    from evalkit.tables.sweep import is_bundled_corpus as bundled

    return bundled(path)


def is_bundled_evidence(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is the bundled 2026-10-17 Host-policy reconstruction."""
    try:
        return Path(path).resolve() == bundled_evidence().resolve()
    except OSError:
        return False


def show_path(path: str | os.PathLike[str]) -> str:
    """A path as a notebook may print it: relative to the checkout, never a machine path."""
    p = Path(path).resolve()
    try:
        return p.relative_to(repo_root()).as_posix()
    except ValueError:
        return p.name


def figures_dir() -> Path:
    """`reports/figures/` in the checkout (override with `$EVALKIT_FIGURES`)."""
    return Path(os.environ.get("EVALKIT_FIGURES") or repo_root() / "reports" / "figures")


def save_figure(fig, name: str, directory: str | os.PathLike[str] | None = None) -> Path:
    """Save `fig` as `<name>.png` and `<name>.svg`, byte-identical on every run.

    Returns:
        The PNG's path. Print it with `show_path`, not as is.
    """
    out = Path(directory) if directory is not None else figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    png = out / f"{name}.png"
    fig.savefig(png, dpi=DPI, metadata=_PNG_METADATA)
    fig.savefig(out / f"{name}.svg", metadata=_SVG_METADATA)
    return png


# --- what a template picks out of its corpus --------------------------------------------------

_TAIL_COLUMNS = (
    "log",
    "group",
    "arm",
    "segments",
    "explore_calls",
    "files_returned",
    "files_cited",
    "chars",
    "cited_chars",
    "efficiency",
    "path_efficiency",
)


def per_call_line(result: SweepResult) -> str:
    """The sweep's per-call median and p25, printed with the reference's rounding."""
    from evalkit.ecma import pct1

    pc = result.per_call
    if not pc.n:
        return "per call: no explore call with file sections in this corpus"
    return f"per call: median {pct1(pc.median)}, p25 {pct1(pc.p25)} over {pc.n} explore calls"


def lowest_sessions(source: SweepResult | Corpus, n: int = 5) -> pd.DataFrame:
    """The `n` lowest sessions of a sweep or a loaded corpus, lowest first, as `evalkit sweep`
    lists its tail (ties in log order, `SweepResult.tail`).

    Columns: the log, its group and arm where the frame has them, then the session's size and
    efficiency (fractions).
    """
    if hasattr(source, "sessions_df"):  # a Corpus: its frame carries the identity columns
        frame, result = source.sessions_df(), source.sweep()
    else:
        frame, result = source.sessions_frame(), source
    frame = frame.set_index("log", drop=False)
    logs = [name_text(r.log) for r in result.tail(n)]  # as the frame holds names
    columns = [c for c in _TAIL_COLUMNS if c in frame.columns]
    return frame.loc[logs, columns].reset_index(drop=True)


def pages_dir() -> Path:
    """`reports/sessions/` beside the figures (`figures_dir()`), where notebooks write pages."""
    return figures_dir().parent / "sessions"


@dataclass(frozen=True)
class SessionPages:
    """Session pages written for a notebook: `(log, page)` pairs, shown as links."""

    pages: tuple[tuple[str, Path], ...]

    def _href(self, page: Path) -> str:
        try:
            return Path(os.path.relpath(page.resolve(), repo_root() / "notebooks")).as_posix()
        except ValueError:
            return page.name

    def __repr__(self) -> str:
        return "\n".join(f"{log} → {show_path(page)}" for log, page in self.pages)

    def _repr_html_(self) -> str:
        from html import escape

        items = "".join(
            f'<li><a href="{escape(self._href(page))}">{escape(log)}</a></li>'
            for log, page in self.pages
        )
        return f"<ul>{items}</ul>"


def session_pages(
    corpus: Corpus, logs: Sequence[str], directory: str | os.PathLike[str] | None = None
) -> SessionPages:
    """Write the report's page of each session in `logs` (one self-contained HTML file each,
    `evalkit.outputs.html`) to `directory` (default `pages_dir()`), replacing the pages an
    earlier call wrote there, and return them as links."""
    from evalkit.outputs.html.notebook import session_row
    from evalkit.outputs.html.pages import frame_rows, session_file, session_page
    from evalkit.outputs.html.timeline import timeline
    from evalkit.outputs.html.writer import SiteWriter

    out = Path(directory) if directory is not None else pages_dir()
    rows = {r["log"]: r for r in frame_rows(corpus.sessions_df())}
    writer = SiteWriter(out, option="")
    pages = []
    for log in logs:
        session = corpus.session(log)
        name = session_file(log).removeprefix("sessions/")
        row = rows.get(log) or session_row(session)
        writer.write(
            name,
            session_page(
                timeline(session, log=log),
                row=row,
                root="",
                standalone=True,
            ),
        )
        pages.append((log, out / name))
    writer.close()
    return SessionPages(tuple(pages))


def lowest_session_calls(result: SweepResult) -> pd.DataFrame:
    """The per-call breakdown of the sweep's lowest session (empty when the sweep has none)."""
    calls = result.calls_frame()
    lowest = result.tail(1)
    if not lowest:
        return calls.iloc[:0]
    return calls[calls["log"] == name_text(lowest[0].log)].reset_index(drop=True)


def lowest_session_line(result: SweepResult) -> str:
    """The sweep's lowest session and the files its answer cited, in one line."""
    from evalkit.ecma import pct1

    lowest = result.tail(1)
    if not lowest:
        return "no session of this corpus is in the sweep"

    r = lowest[0]
    cited = ", ".join(r.cited_paths) or "no returned file"
    return f"{r.log}: {pct1(r.efficiency)}; the answer cites {cited}"


def arm_cells(result: SweepResult) -> tuple[pd.DataFrame, PairedDeltas | None]:
    """The arm changes per cell of a sweep and their small-n summary.

    A cell is one pass / repo; its change is the second arm's median minus the first's (the arms
    `result.arms` compares, baseline first). Only cells where both arms have runs are counted.

    Returns:
        `(changes, summary)`: `SweepResult.arm_changes_frame()` of the cells with both arms,
        smallest change first, and `evalkit.stats.paired_deltas` over their medians (higher is
        better, one pass/repo cell as the resampling unit, seed 0) — or an empty frame and None
        when the corpus has fewer than two arms or no cell with both.
    """
    import pandas as pd

    from evalkit.stats import paired_deltas

    none = pd.DataFrame(columns=["pass", "repo", "change", "direction"])
    if len(result.arms) < 2 or not result.arm_rows:
        return none, None
    first, second = result.arms[:2]
    changes = result.arm_changes_frame()
    both = changes[changes[f"{first}_median"].notna() & changes[f"{second}_median"].notna()]
    both = both.sort_values("change", kind="stable").reset_index(drop=True)
    if both.empty:
        return both, None
    summary = paired_deltas(
        both[f"{first}_median"].tolist(),
        both[f"{second}_median"].tolist(),
        direction="higher_is_better",
        seed=0,
        unit="pass/repo cell",
    )
    return both, summary


def arm_cells_line(result: SweepResult, summary: PairedDeltas | None) -> str:
    """One sentence: how many cells improved, or why no cell can be counted."""
    if summary is None:
        if len(result.arms) < 2:
            found = ", ".join(result.arms) or "none"
            return f"no arm comparison: this corpus has fewer than two arms (arms found: {found})"
        a, b = result.arms[:2]
        return f"no arm comparison: no pass/repo cell has runs in both {a} and {b}"
    a, b = result.arms[:2]
    return (
        f"{b} vs {a}: {summary.improved} of {summary.n} pass/repo cells improved, "
        f"{summary.regressed} went the other way"
    )


def pick_session(corpus: Corpus, session: str | None = None) -> str:
    """The log of the session a notebook opens: `session` when given, else the corpus's lowest.

    The lowest session is the first of the sweep's tail (lowest efficiency, ties in log order);
    a corpus with no session in the sweep opens its first readable session in discovery order.

    Args:
        corpus: A loaded corpus (`evalkit.load_corpus`).
        session: A log relative to the corpus, as `evalkit sweep` lists it, or None.

    Raises:
        UsageError: `session` names no session of the corpus, or the corpus has no readable one.
    """
    from evalkit.errors import UsageError

    where = f"{Path(corpus.root).name}/ (`evalkit sweep --list-files` lists them)"
    if session:
        known = {r.log for r in corpus.records}
        if str(session) not in known and str(session).partition("#")[0] not in known:
            raise UsageError(f"no session {str(session)!r} in {where}")
        return str(session)
    lowest = corpus.sweep().tail(1)
    if lowest:
        return lowest[0].log
    readable = [r.log for r in corpus.records if r.status in ("parsed", "no-explore")]
    if readable:
        return readable[0]
    raise UsageError(f"no readable session in {where}")


def session_line(run: Session | InteractiveSession | AgentSession, log: str | None = None) -> str:
    """What a notebook says first about one session: its log, kind, files and answer source
    (for a Codex, Inspect or ATIF session: its agent and format; `log` names it as the frames
    do, since its own path is where the file was read)."""
    from evalkit.formats.common import AgentSession
    from evalkit.session import InteractiveSession

    if isinstance(run, AgentSession):
        from evalkit.corpus.agents import session_kind

        return (
            f"session: {log or Path(run.path).name} ({run.agent}, {run.format}); "
            f"{session_kind(run)}; answer from: {run.final_answer_source}"
        )
    kind = "interactive" if isinstance(run, InteractiveSession) else "headless"
    segments = f"{run.segments} segment{'s' if run.segments != 1 else ''}"
    source = run.answer.source if run.answer is not None else "no answer"
    return f"session: {run.log} ({segments}); {kind}; answer from: {source}"


def session_report(run: Session | InteractiveSession | AgentSession, log: str | None = None) -> str:
    """The text `evalkit run --brief` (headless), `evalkit session` (interactive) or
    `evalkit run` on another agent's file prints."""
    from evalkit.formats.common import AgentSession
    from evalkit.outputs.report import format_interactive, format_run
    from evalkit.session import InteractiveSession

    if isinstance(run, AgentSession):
        from evalkit.outputs.agent_text import format_agent_sessions

        return format_agent_sessions(log or Path(run.path).name, [run])
    if isinstance(run, InteractiveSession):
        return format_interactive(run)
    return format_run(run, brief=True)


def _not_claude_code(run: Any) -> str | None:
    """Why a session has no explore frames (another agent's), or None for Claude Code."""
    from evalkit.formats.common import AgentSession

    if isinstance(run, AgentSession):
        return (
            f"no explore calls to show: explore allocation and sufficiency are Claude Code "
            f"metrics, not computed for this {run.agent} session (its tool calls are below)"
        )
    return None


def explore_frame(run: Any, frame: str, columns: Sequence[str]) -> pd.DataFrame | None:
    """One of a Claude Code session's explore frames (`calls`, `files`, `sections`) with
    `columns`; for another agent's session, prints why there is none and returns None."""
    from evalkit.corpus import frames

    why = _not_claude_code(run)
    if why is not None:
        print(why)
        return None
    data = getattr(frames, f"{frame}_df")(run)
    if data.empty:
        print(f"no {frame} to show: this session has no explore call that returned file sections")
        return None
    return data[list(columns)]


def session_tool_calls(corpus: Corpus, log: str) -> pd.DataFrame | None:
    """Every tool call of one session (any agent) from the corpus's `tool_calls` frame: order,
    thread, name, family, what it was called on, result size and error; None (with the reason
    printed) when it made none."""
    calls = corpus.tool_calls_df()
    mine = calls[calls["log"] == log]
    if mine.empty:
        print("no tool call in this session")
        return None
    cols = ["call", "thread", "name", "family", "detail", "result_chars", "is_error"]
    return mine[cols].reset_index(drop=True)


def session_sufficiency(run: Any) -> pd.DataFrame | None:
    """A Claude Code session's explore sufficiency table; None (reason printed) otherwise."""
    why = _not_claude_code(run)
    if why is not None:
        print("no sufficiency table: " + why.split(": ", 1)[1].split(" (")[0])
        return None
    return table(run.sufficiency.to_frame(), "this session made no answered explore call")


def file_bytes_cell(run: Any, title: str):
    """The chars-per-file figure of a Claude Code session, or the empty figure saying why."""
    from evalkit.outputs.figures import _empty_figure, file_bytes_data, file_bytes_figure

    why = _not_claude_code(run)
    if why is not None:
        return _empty_figure(
            title,
            "explore allocation is a Claude Code metric: " + why.split(", ")[1].split(" (")[0],
        )
    data = file_bytes_data(run)
    if data.empty:
        return _empty_figure(title, "no file sections returned in this session")
    return file_bytes_figure(data, title)


def table(frame: pd.DataFrame | None, why: str) -> pd.DataFrame | None:
    """`frame` for a notebook cell; when it has no row, `why` is printed in one line instead
    (prefixed "nothing to show: ") and None returned, so no empty table is drawn."""
    if frame is None or len(frame) == 0:
        print(f"nothing to show: {why}")
        return None
    return frame


def figure_cell(fig, name: str, directory: str | os.PathLike[str] | None = None):
    """Save a notebook's figure and print where; a figure with nothing to draw is not drawn:
    its reason is printed in one line instead and None returned (no empty axes)."""
    why = getattr(fig, "evalkit_nothing", None)
    if why is not None:
        print(f"no figure: {why}")
        return None
    print(show_path(save_figure(fig, name, directory)))
    return fig


def load(
    corpus: str | os.PathLike[str] | None = None,
    *,
    layout: str | None = None,
    profile: str | None = None,
    outcomes: str | os.PathLike[str] | None = None,
) -> Corpus:
    """The corpus a notebook reads: `corpus_dir(corpus)` by `layout` (default: `harbor` when
    the tree holds harbor trials, else the harness's layouts) with the tool `profile`, uncached.
    `outcomes` (a CSV of rewards per run) is joined where the loader takes it."""
    import inspect

    import evalkit

    root = corpus_dir(corpus)
    kwargs: dict[str, Any] = {"layout": trial_layout(root, layout), "cache": False}
    if profile:
        kwargs["profile"] = profile
    if outcomes and "outcomes" in inspect.signature(evalkit.load_corpus).parameters:
        kwargs["outcomes"] = outcomes
    return evalkit.load_corpus(root, **kwargs)


def corpus_frame(
    frame: str,
    root: str | os.PathLike[str],
    directory: str | os.PathLike[str] | None = None,
    *,
    layout: str | None = None,
    profile: str | None = None,
) -> pd.DataFrame:
    """A frame (`sessions`, `models`, …) of one arm `directory` when given, else of the whole
    corpus read by `layout` and `profile` (as `load` reads it)."""
    if directory is not None:
        from evalkit.corpus import frames

        return getattr(frames, f"{frame}_df")(directory)
    return getattr(load(root, layout=layout, profile=profile), f"{frame}_df")()


def sweep(
    corpus: str | os.PathLike[str] | None = None,
    *,
    layout: str | None = None,
    profile: str | None = None,
    outcomes: str | os.PathLike[str] | None = None,
    arms: str | Sequence[str] | None = None,
) -> SweepResult:
    """The baseline sweep a notebook shows: `run_sweep` of the corpus (the harness's layouts,
    as `evalkit sweep DIR`), or the sweep of the corpus loaded by `layout` and `profile`."""
    chosen = _two(arms)
    root = corpus_dir(corpus)
    if trial_layout(root, layout) is None and not profile:
        from evalkit.tables.sweep import run_sweep

        return run_sweep(root, arms=tuple(chosen) if chosen else None, cache=False)
    loaded = load(root, layout=layout, profile=profile, outcomes=outcomes)
    return loaded.sweep(tuple(chosen) if chosen else None)


# The run the published doc prints as its example (data/published/example_block_*.txt).
EXAMPLE_RUN = "cg22/ab-express/run-baseline-1.jsonl"


def example_block_comparison(root: str | os.PathLike[str]) -> tuple[str, str, bool]:
    """The allocation block of the published example run beside the block as published.

    Only meaningful for the bundled corpus. The published doc omits the `note:` line the
    reference always prints, so the comparison leaves it out (spec §3.6).

    Returns:
        `(ours, published, matches)`, both blocks as text.
    """
    from evalkit.metrics.allocation import format_allocation
    from evalkit.paths import published_dir
    from evalkit.tables.sweep import load_session

    run = load_session(root, EXAMPLE_RUN)
    ours = "\n".join(format_allocation(run.allocation, indent="").splitlines()[:-1]) + "\n"
    published = (published_dir() / "example_block_cg22_express_baseline_1.txt").read_text(
        encoding="utf-8"
    )
    return ours, published, ours == published


# --- what a template picks out of an evidence file --------------------------------------------


def pairs_table(report: PairedReport) -> pd.DataFrame:
    """The per-pair table in the design's layout, or the samples of an experiment without pairs."""
    return report.published_style_table() if report.paired else report.samples_frame()


def pair_deltas_title(report: PairedReport) -> str:
    """`Per-pair deltas, <candidate lane> − <baseline lane>`, marked when it is a reconstruction."""
    lanes = report.lanes or {}
    base = lanes.get("baseline", {}).get("label", "baseline")
    cand = lanes.get("candidate", {}).get("label", "candidate")
    title = f"Per-pair deltas, {cand} − {base}"
    return f"{title} (reconstruction)" if report.basis == "published_summary" else title


def host_cells_line(report: PairedReport) -> str:
    """The report's Host-cell summary, or why the experiment has none."""
    cells = report.host_cells()
    if cells is None:
        return f"no Host cells: {report.experiment} evidence does not attest them"
    return cells["summary"]["text"]


def first_case_deltas(
    report: PairedReport, metric: str = "serialized_tool_result_bytes"
) -> tuple[str | None, PairedDeltas | None]:
    """The small-n summary of one metric's per-pair deltas in the evidence's first case.

    Returns:
        `(case_id, summary)` — `evalkit.stats.paired_deltas` of candidate against baseline
        (lower is better, seed 0) — or `(None, None)` when the evidence has no pairs.
    """
    from evalkit.stats import paired_deltas

    pairs = report.pairs_frame()
    if pairs.empty:
        return None, None
    case = pairs["case_id"].iloc[0]
    rows = pairs[pairs["case_id"] == case]
    summary = paired_deltas(
        rows[f"{metric}.baseline"].tolist(), rows[f"{metric}.candidate"].tolist(), seed=0
    )
    return case, summary


# --- what a template picks out of a trial tree (notebook 06) -----------------------------------


def trial_corpus_dir(parameter: str | os.PathLike[str] | None = None) -> Path:
    """The trial corpus notebook 06 reads: its parameter, else `$EVALKIT_HARBOR_CORPUS`, else
    `$EVALKIT_CORPUS`, else the small synthetic harbor corpus (`harbor_corpus_dir`)."""
    chosen = (
        parameter or os.environ.get("EVALKIT_HARBOR_CORPUS") or os.environ.get("EVALKIT_CORPUS")
    )
    return Path(chosen) if chosen else harbor_corpus_dir()


def _has_harbor_trials(root: Path) -> bool:
    from evalkit.corpus.layouts import HARBOR_LOGS

    native = set(HARBOR_LOGS) - {"trajectory.json"}  # a trajectory is a trial with result.json
    for dirpath, _, filenames in os.walk(root):
        if Path(dirpath).name != "agent":
            continue
        if native & set(filenames):
            return True
        if "trajectory.json" in filenames and (Path(dirpath).parent / "result.json").is_file():
            return True
    return False


def trial_layout(root: str | os.PathLike[str], layout: str | None = None) -> str | None:
    """The layout a trial tree is read with: `layout` when given; else `harbor` when the tree
    holds a harbor trial (a folder with `agent/claude-code.txt`); else None, the A/B layouts
    evalkit reads by default (`evalkit.corpus.discover`)."""
    if layout:
        return layout
    from evalkit.corpus.layouts import HARBOR

    return HARBOR if _has_harbor_trials(Path(root)) else None


def trial_profile(root: str | os.PathLike[str], profile: str | None = None) -> str | None:
    """The tool profile a trial tree is read with: `profile` when given; `sourcegraph` for the
    synthetic harbor corpus (its candidate arm calls the Sourcegraph MCP tools); else None, the
    default profile (codegraph), as `evalkit sweep` uses."""
    if profile:
        return profile
    from evalkit.synthetic.harbor import is_synthetic_harbor

    return "sourcegraph" if is_synthetic_harbor(root) else None


def _two(arms: str | Sequence[str] | None) -> list[str] | None:
    if arms is None or arms == "":
        return None
    if isinstance(arms, str):
        return [a.strip() for a in arms.split(",")]
    return [str(a) for a in arms]


def trial_sweep(
    corpus: str | os.PathLike[str] | None = None,
    *,
    layout: str | None = None,
    profile: str | None = None,
    outcomes: str | os.PathLike[str] | None = None,
    arms: str | Sequence[str] | None = None,
    prices: str | os.PathLike[str] | None = None,
) -> TrialSweep:
    """The trial sweep of notebook 06: `evalkit sweep DIR --layout L --profile P --outcomes F
    --arms A,B --prices FILE.toml`, with the notebook's defaults (`trial_corpus_dir`,
    `trial_layout`, `trial_profile`; `arms` as `"BASELINE,CANDIDATE"` or two names; the bundled
    price table), uncached, in-process."""
    from evalkit.tables.trials import run_trial_sweep

    root = trial_corpus_dir(corpus)
    return run_trial_sweep(
        root,
        layout=trial_layout(root, layout),
        profile=trial_profile(root, profile),
        outcomes=outcomes,
        arms=_two(arms),
        cache=False,
        jobs=1,
        prices=prices,
    )


def cost_account_lines(trials: TrialSweep) -> list[str]:
    """Where the compared runs' costs come from: recorded by the log, priced from their tokens
    (with the price table's version), unknown and why; and how many runs' recorded and priced
    costs differ by more than 5% (the trial sweep's accounting lines)."""
    from evalkit.outputs.cost_text import cost_lines

    return cost_lines(trials.cost_account, noun="compared run", indent="")


COST_COLUMNS_SHOWN = (
    "arm",
    "task",
    "trial",
    "cost_source",
    "recorded_cost_usd",
    "priced_cost_usd",
    "cost_difference_share",
    "price_table",
)


def trials_line(trials: TrialSweep) -> str:
    """One line: the corpus, how it was read (layout, profile), the runs read and the arms."""
    layout = trials.layout.describe() if trials.layout is not None else "the A/B layouts"
    arms = ", ".join(trials.arms) or "none"
    return (
        f"corpus: {show_path(trials.root)}; layout: {layout}; tool profile: "
        f"{trials.profile.describe()}; runs read: {len(trials.parsed)} of {len(trials.rows)}; "
        f"arms: {arms}"
    )


def outcome_lines(trials: TrialSweep) -> list[str]:
    """The outcome table's summary (k of n tasks helped, the exact test), or why there is none."""
    from evalkit.outputs.trials_text import outcome_summary

    t = trials.outcomes
    if t is None:
        found = ", ".join(trials.arms) or "none"
        return [f"no outcome table: it needs two arms (arms found: {found})"]
    if not t.tasks:
        return [
            f"no outcome table: no run of {t.baseline} or {t.candidate} names a task with an "
            "outcome (a harbor trial's result.json, or an outcomes CSV: the `outcomes` parameter)"
        ]
    return [f"{t.candidate} against {t.baseline}:"] + outcome_summary(t)


def outcome_frame(trials: TrialSweep) -> pd.DataFrame:
    """`OutcomeTable.to_frame()`, one row per task (no row without an outcome table)."""
    import pandas as pd

    if trials.outcomes is None:
        cols = ["task", "baseline_reward", "baseline_n", "candidate_reward", "candidate_n"]
        return pd.DataFrame(columns=[*cols, "delta", "class"])
    return trials.outcomes.to_frame()


def outcome_metrics_frame(trials: TrialSweep) -> pd.DataFrame:
    """`OutcomeTable.summary_frame()`: reward, cost, tokens, duration and tool calls per task,
    paired (no row without tasks)."""
    import pandas as pd

    if trials.outcomes is None or not trials.outcomes.tasks:
        return pd.DataFrame(columns=["figure", "tasks", "candidate_higher", "candidate_lower"])
    return trials.outcomes.summary_frame()


def outcome_figure(trials: TrialSweep):
    """The per-task reward deltas as bars, or a figure that says why there are none; the title
    says "synthetic corpus" when the tree is the synthetic harbor one."""
    from evalkit.outputs.figures import (
        SYNTHETIC_LABEL,
        _empty_figure,
        outcome_deltas_data,
        outcome_deltas_figure,
    )
    from evalkit.synthetic.harbor import is_synthetic_harbor

    label = SYNTHETIC_LABEL if is_synthetic_harbor(trials.root) else ""
    t = trials.outcomes
    if t is None or not t.tasks:
        return _empty_figure(f"Reward delta per task{label}", "no task has an outcome in two arms")
    return outcome_deltas_figure(
        outcome_deltas_data(t), f"{t.candidate} against {t.baseline}, per task{label}"
    )


# --- what a template picks out of arm directories and campaigns (notebook 07) -----------------

# The bundled corpus's arm directory whose ARM COMPARISON the project published (spec §12.3),
# with the labels in the published order, and its campaign root (spec §7.3).
PUBLISHED_ARM_DIR = "cg22/ab-express"
PUBLISHED_ARM_LABELS = ("new", "baseline")
BUNDLED_CAMPAIGN = "ab-readme"


@dataclass(frozen=True)
class ArmDirectory:
    """A directory of arm runs (`run-<label>-<i>.jsonl`, `run-<label>.jsonl`, spec §7.2).

    Attributes:
        path: The directory, relative to the corpus (POSIX; `.` for the corpus itself).
        labels: The arm labels its runs name, in comparison order (`arm_labels`).
        runs: How many runs it holds.
    """

    path: str
    labels: tuple[str, ...]
    runs: int


def arm_labels(labels) -> tuple[str, ...]:
    """Arm labels in comparison order: every other label by name, then `baseline` last (the
    order of the harness's own invocation, `compare-arms.mjs DIR new baseline`)."""
    labels = set(labels)
    return tuple(sorted(labels - {"baseline"}) + (["baseline"] if "baseline" in labels else []))


def arm_directories(root: str | os.PathLike[str]) -> tuple[ArmDirectory, ...]:
    """Every directory of the corpus that holds A/B arm runs, in path order."""
    from evalkit.corpus.discover import discover

    runs: dict[str, list[str]] = {}
    for ref in discover(root).sessions:
        if ref.layout == "ab-arm" and ref.arm is not None:
            runs.setdefault(ref.log.rpartition("/")[0] or ".", []).append(ref.arm)
    return tuple(ArmDirectory(d, arm_labels(a), len(a)) for d, a in sorted(runs.items()))


def _direct_labels(directory: Path) -> tuple[str, ...]:
    from evalkit.corpus.discover import discover

    return arm_labels(
        r.arm for r in discover(directory).sessions if r.arm is not None and "/" not in r.log
    )


def pick_arm_dir(
    root: str | os.PathLike[str],
    arm_dir: str | os.PathLike[str] | None = None,
    labels: str | Sequence[str] | None = None,
) -> tuple[Path | None, tuple[str, ...]]:
    """The arm directory notebook 07 compares, and the labels it compares.

    `arm_dir` when given (any directory of runs, inside the corpus or not), else the bundled
    corpus's published one (`PUBLISHED_ARM_DIR`), else the corpus's first arm directory (path
    order) with runs of two labels or more, else its first one. `labels` (`"new,baseline"` or
    names) when given, else the labels the directory's runs name (`arm_labels` order).

    Returns:
        `(directory, labels)`, or `(None, ())` when the corpus has no arm directory.
    """
    root = Path(root)
    asked = _two(labels)
    if arm_dir:
        directory = Path(arm_dir)
        return directory, tuple(asked) if asked else _direct_labels(directory)
    if is_bundled_corpus(root):
        return root / PUBLISHED_ARM_DIR, tuple(asked) if asked else PUBLISHED_ARM_LABELS
    dirs = arm_directories(root)
    if not dirs:
        return None, ()
    chosen = next((d for d in dirs if len(d.labels) >= 2), dirs[0])
    return root / chosen.path, tuple(asked) if asked else chosen.labels


def _name(directory: Path, root: Path) -> str:
    try:
        return directory.resolve().relative_to(root.resolve()).as_posix()
    except (OSError, ValueError):
        return show_path(directory)


def arm_dir_line(root: str | os.PathLike[str], directory: Path | None, labels) -> str:
    """What notebook 07 compares, in one line, or why it compares nothing."""
    if directory is None:
        return (
            "no arm comparison: this corpus has no directory of arm runs "
            "(run-<label>-<i>.jsonl files; set `arm_dir` to one)"
        )
    shown = " ".join(labels) or "none"
    return f"arm directory: {_name(directory, Path(root))}; labels compared: {shown}"


def compare_dir(
    root: str | os.PathLike[str], directory: Path | None, labels: Sequence[str]
) -> Comparison | None:
    """`evalkit compare DIR LABEL…` of the chosen directory, named relative to the corpus (None
    without a directory or labels)."""
    from evalkit.tables.compare import compare_arms

    if directory is None or not labels:
        return None
    return compare_arms(directory, list(labels), name=_name(directory, Path(root)))


def sibling_comparisons(
    root: str | os.PathLike[str], directory: Path | None, labels: Sequence[str]
) -> list[Comparison]:
    """The comparison of `directory` and of every other arm directory beside it (an `ab-<repo>`
    folder of the same parent: the same pass) that has runs of one of `labels`, `directory`
    first, then by name: the columns of the transposed repo × arm table."""
    from evalkit.corpus.discover import discover

    if directory is None or not labels:
        return []
    out = [compare_dir(root, directory, labels)]
    parent = directory.parent
    try:
        others = sorted(p for p in parent.iterdir() if p.is_dir() and p.name.startswith("ab-"))
    except OSError:
        others = []
    for other in others:
        if other.resolve() == directory.resolve():
            continue
        found = {r.arm for r in discover(other).sessions if "/" not in r.log}
        if found & set(labels):
            out.append(compare_dir(root, other, labels))
    return [c for c in out if c is not None]


def pick_campaign(
    root: str | os.PathLike[str], campaign: str | os.PathLike[str] | None = None
) -> Path | None:
    """The campaign root notebook 07 reads: `campaign` when given, else the bundled corpus's
    (`BUNDLED_CAMPAIGN`), else the first campaign root of the corpus (a folder of
    `<repo>/run<N>/run-<label>.jsonl` runs, spec §7.3), else None."""
    root = Path(root)
    if campaign:
        return Path(campaign)
    if is_bundled_corpus(root):
        return root / BUNDLED_CAMPAIGN
    from evalkit.corpus.discover import discover

    roots = sorted(
        "/".join(ref.log.split("/")[:-3]) for ref in discover(root).sessions
        if ref.layout == "campaign"
    )  # fmt: skip
    return (root / roots[0] if roots[0] else root) if roots else None


def campaign_repos(campaign: Path) -> tuple[str, ...]:
    """The repos of a campaign root: the folders holding `run<N>` run folders, the harness's
    seven first in its order (`CAMPAIGN_REPOS`), then any other by name."""
    from evalkit.tables.campaign import CAMPAIGN_REPOS, _is_run_dir

    try:
        found = {
            d.name
            for d in campaign.iterdir()
            if d.is_dir() and any(_is_run_dir(r, r.name) for r in d.iterdir())
        }
    except OSError:
        return ()
    return tuple([r for r in CAMPAIGN_REPOS if r in found] + sorted(found - set(CAMPAIGN_REPOS)))


def published_arm_comparison(
    root: str | os.PathLike[str], cmp: Comparison | None
) -> pd.DataFrame | None:
    """The published ARM COMPARISON cells beside the printed ones (`evalkit.published.
    arm_comparison_comparison`), or None unless `cmp` is the bundled corpus's published
    directory compared with the published labels, the only comparison there is to check."""
    from evalkit.outputs.compare_text import comparison_cells
    from evalkit.published import arm_comparison_comparison

    if cmp is None or not is_bundled_corpus(root):
        return None
    if cmp.directory != PUBLISHED_ARM_DIR or cmp.labels != PUBLISHED_ARM_LABELS:
        return None
    return arm_comparison_comparison(comparison_cells(cmp), list(PUBLISHED_ARM_LABELS))


def campaign_line(root: str | os.PathLike[str], campaign: Path | None, c: Campaign | None) -> str:
    """What notebook 07's campaign section reads, in one line, or why it reads nothing."""
    if campaign is None or c is None:
        return (
            "no campaign: this corpus has no campaign root (<repo>/run<N>/run-<label>.jsonl "
            "folders; set `campaign_root` to one)"
        )
    repos = ", ".join(r.repo for r in c.repos)
    return f"campaign root: {_name(campaign, Path(root))}; repos: {repos}"


def execute(paths: list[str | os.PathLike[str]], *, timeout: int = 600) -> None:
    """Run notebooks top to bottom in a fresh kernel and save them with their outputs.

    This is how the committed notebooks are refreshed after a change to evalkit's output:
    `python -m evalkit.notebook notebooks/*.ipynb`. nbval then compares every later run
    with what was saved.
    """
    import nbformat
    from nbclient import NotebookClient

    for path in paths:
        path = Path(path)
        nb = nbformat.read(path, as_version=4)
        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
        nbformat.write(nb, path)
        print(f"executed {path}")


if __name__ == "__main__":
    import sys

    execute(sys.argv[1:])


# --- is the difference real? (notebook 08) ----------------------------------------------------


def arm_stats(
    corpus: str | os.PathLike[str] | None = None,
    *,
    layout: str | None = None,
    profile: str | None = None,
    outcomes: str | os.PathLike[str] | None = None,
    arms: str | Sequence[str] | None = None,
    margin: str | None = None,
    cluster: str | None = None,
    seed: int | None = None,
):
    """`evalkit stats DIR --layout L --profile P --outcomes F --arms A,B --margin M --cluster C
    --seed S` with notebook 06's defaults (`trial_corpus_dir`, `trial_layout`, `trial_profile`),
    uncached, in-process: `(runs, stats)`, stats None without two arms. `margin` is the
    command's `--margin` text (`"reward=0.05,cost_usd=0.01"`, or one number for pass and
    reward)."""
    from evalkit.tables.ab_stats import compare_arms, parse_margins, trial_runs

    root = trial_corpus_dir(corpus)
    runs = trial_runs(
        root,
        layout=trial_layout(root, layout),
        profile=trial_profile(root, profile),
        outcomes=outcomes,
        arms=_two(arms),
        cache=False,
        jobs=1,
    )
    if runs.baseline is None or runs.candidate is None:
        return runs, None
    margins = parse_margins([m for m in (margin or "").split(",") if m.strip()])
    stats = compare_arms(
        runs, runs.baseline, runs.candidate, margins=margins, cluster=cluster,
        seed=0 if seed is None else int(seed),
    )  # fmt: skip
    return runs, stats
