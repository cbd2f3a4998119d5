"""The ARM COMPARISON block of `compare-arms.mjs`, character for character (spec §8.4), and
evalkit's JSON and markdown forms of the same figures.

`format_comparison` is the reference's stdout; `comparison_warnings` its stderr lines. Anything
evalkit adds (runs left out, run-hygiene counts, the synthetic-corpus label) is in
`comparison_notes`, which the command prints on stderr so stdout stays the reference's text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evalkit.ecma import fix, grp, jround, js_json, lj, number_str, printable, rj
from evalkit.metrics.sufficiency import BUCKET_LABELS, BUCKETS
from evalkit.tables.compare import EXCLUDE_RULES, ArmFigures, Comparison, Span

__all__ = [
    "HOW_TO_READ",
    "REFERENCE_TITLES",
    "USAGE",
    "format_comparison",
    "comparison_cells",
    "comparison_frame",
    "comparison_warnings",
    "no_runs_message",
    "comparison_notes",
    "comparison_json",
    "comparison_markdown",
]

USAGE = "usage: evalkit compare DIR LABEL [LABEL ...]"

# §8.4: the section titles exactly as compare-arms.mjs prints them. They carry the project's
# metric labels (CG-7/8/9) because the block is reproduced character for character; this is
# the one place they are spelled (`comparison_frame` names the sections in plain words).
REFERENCE_TITLES = {
    "behavior": "  behavior",
    "occupancy": "  residual context occupancy (CG-7) — tokens still resident at end of run",
    "sufficiency": "  explore sufficiency (CG-8) — pooled over every answered explore call",
    "allocation": (
        "  explore allocation efficiency (CG-9) — share of returned bytes the answer cited"
    ),
    "contamination": "  contamination — the CLI must never be how codegraph is reached",
}

# §8.4: the fixed text that ends the block.
HOW_TO_READ = """\
  how to read this
    occupancy  compare each arm's RETRIEVAL residual (codegraph in a with-arm,
               file-access in a without-arm). Shares are Claude Code on a 200k
               window and do NOT transfer to another host; the ratio does.
    sufficiency  pooled across runs because it is per-CALL. "explore again" is
               ambiguous by construction; "Read a file we returned" is an
               allocation miss, the two recall rows are recall misses.
    allocation  RELATIVE, not absolute — attribution is by citation, and an agent
               can use a file without naming it. Compare builds on the SAME
               question; never quote it as "codegraph wastes N% of what it returns."
    all three  small-n. Runs make 1–5 explore calls, so read the range, not the
               median of one run. RUNS>=2, and the 7-repo campaign for a verdict."""


def _n(x: float) -> str:
    """compare-arms.mjs's default cell: `String(Math.round(x))`."""
    return number_str(jround(x))


def _int(x: float) -> str:
    """`int(x)`: the rounded value with thousands separators."""
    return grp(jround(x))


def _p(x: float) -> str:
    """`p(x)`: one decimal and a percent sign, x already in percent."""
    return fix(x, 1) + "%"


def _row(label: str, cells: Sequence[str]) -> str:
    return "  " + lj(label, 36) + "".join(" " + rj(c, 23) for c in cells)


def _bucket_cell(a: ArmFigures, bucket: str) -> str:
    if not a.answered:
        return "—"
    count = a.counts[bucket]
    return f"{count}  {fix((count / a.answered) * 100, 0)}%"


def _rows(
    cmp: Comparison, tool: str = "codegraph", explore: bool = True
) -> list[tuple[str, list[str]] | str]:
    """The table as items: `(label, cells)` for a row, a string for a title or empty line.

    `tool` names the tool under test's rows (a tool profile's label; the reference's text is
    `codegraph`); `explore=False` leaves out the explore sufficiency and allocation sections, for
    a tool profile that declares no codegraph-format explore tool."""
    arms = cmp.arms

    def spans(key: str, f=_n) -> list[str]:
        return [getattr(a, key).cell(f) for a in arms]

    out: list[tuple[str, list[str]] | str] = [("", [a.label for a in arms])]
    out.append(("runs", [str(a.runs) for a in arms]))
    if any(a.non_success for a in arms):
        out.append(("  of which non-success", [str(a.non_success) for a in arms]))
    if any(a.raced for a in arms):
        out.append(("  MCP cold-start race", [str(a.raced) for a in arms]))
    out += ["", REFERENCE_TITLES["behavior"]]
    for key, label in (
        ("dur", "duration (s)"),
        ("tools", "tool calls"),
        ("reads", "Read"),
        ("grep", "Grep/Glob"),
        ("bash", "Bash"),
        ("cg", f"{tool} calls"),
    ):
        out.append(("  " + label, spans(key)))
    out += ["", REFERENCE_TITLES["occupancy"]]
    out.append(("  final context (tok)", spans("ctx", _int)))
    out.append((f"  {tool} residual (tok)", spans("occ_cg", _int)))
    out.append(("  file-access residual (tok)", spans("occ_file", _int)))
    out.append(("  → retrieval residual (tok)", spans("occ_self", _int)))
    out.append(("  → share of final context", spans("occ_share", _p)))
    if explore:
        out += _explore_rows(arms, spans)
    out += ["", REFERENCE_TITLES["contamination"].replace("codegraph", tool)]
    out.append(("  CLI calls that RETURNED output", [str(a.cli_contaminated) for a in arms]))
    out.append(("  CLI attempts blocked", [str(a.cli_calls) for a in arms]))
    return out


def _explore_rows(arms, spans) -> list[tuple[str, list[str]] | str]:
    """The explore sufficiency (CG-8) and allocation (CG-9) sections of §8.4."""
    out: list[tuple[str, list[str]] | str] = ["", REFERENCE_TITLES["sufficiency"]]
    out.append(("  answered explore calls", [str(a.answered) for a in arms]))
    for b in BUCKETS:
        out.append(("  " + BUCKET_LABELS[b][0], [_bucket_cell(a, b) for a in arms]))
    if any(a.errors for a in arms):
        out.append(("  errored/unanswered (not bucketed)", [str(a.errors) for a in arms]))
    out += ["", REFERENCE_TITLES["allocation"]]
    out.append(("  explore calls with source", [str(a.alloc_calls) for a in arms]))
    out.append(
        (
            "  pooled efficiency",
            ["—" if a.pooled_efficiency is None else _p(a.pooled_efficiency) for a in arms],
        )
    )
    out.append(("  per-run efficiency", spans("efficiency", _p)))
    out.append(("  envelope (chars)", [_int(a.alloc_envelope) for a in arms]))
    return out


# The table's sections in plain words (the printed titles carry the project's metric labels).
_SECTIONS = ("runs", "behavior", "occupancy", "sufficiency", "allocation", "contamination")


def comparison_frame(cmp: Comparison):
    """The table as a DataFrame: `section`, `row`, then one column of printed cells per arm,
    rows in the printed order (the section names are those of the published sample)."""
    import pandas as pd

    section, rows = 0, []
    for item in _rows(cmp)[1:]:
        if isinstance(item, str):
            section += item == ""  # each empty line opens the next section
            continue
        rows.append(
            {
                "section": _SECTIONS[section],
                "row": item[0].strip(),
                **dict(zip([a.label for a in cmp.arms], item[1], strict=True)),
            }
        )
    return pd.DataFrame(rows, columns=["section", "row", *(a.label for a in cmp.arms)])


def comparison_cells(cmp: Comparison) -> dict[str, list[str]]:
    """Every row of the table by its label (leading spaces dropped): the printed cells, one
    per arm. The empty-label first row (the arm labels) is left out."""
    return {item[0].strip(): item[1] for item in _rows(cmp) if isinstance(item, tuple) and item[0]}


def format_comparison(
    cmp: Comparison, *, tool: str = "codegraph", explore: bool = True, reference: bool = True
) -> str:
    """The reference's stdout for `compare-arms.mjs <dir> <labels…>` (§8.4), every line ending
    in a newline. Empty when no arm has runs (the reference prints only the error then).

    `tool` and `explore` as for `_rows` (a tool profile other than codegraph). `reference=False`
    is evalkit's own use of the block (the trial sweep): the metric labels (CG-7/8/9) are left
    out of the titles and the closing text names `tool`, not codegraph (issue 23)."""
    if not cmp.arms:
        return ""
    out = ["", f"====== ARM COMPARISON — {cmp.directory} ======"]
    for item in _rows(cmp, tool, explore):
        if isinstance(item, str) and not reference:
            item = _LABEL_MARK.sub("", item)
        out.append(item if isinstance(item, str) else _row(*item))
    dirty = [a.label for a in cmp.arms if a.contaminated_runs]
    if dirty:
        out.append(
            f"  !! {', '.join(dirty)} reached {tool} through Bash — those runs are CONTAMINATED"
        )
        out.append(
            f"     (a without-arm was not without {tool}; a with-arm has bytes attributed "
            f"to Bash, not {tool})"
        )
    out += ["", HOW_TO_READ if reference else HOW_TO_READ.replace("codegraph", tool)]
    return printable("\n".join(out) + "\n")


_LABEL_MARK = re.compile(r" \(CG-\d+\)")


def comparison_warnings(cmp: Comparison) -> list[str]:
    """The reference's stderr lines: one WARN per arm without runs (§8.4)."""
    return [f"  WARN: no run logs for arm '{label}' in {cmp.directory}" for label in cmp.missing]


def no_runs_message(cmp: Comparison) -> str:
    """The reference's error when no arm has runs (§8.4; exit status 1)."""
    return f"no run logs for {'/'.join(cmp.labels)} in {cmp.directory}"


def comparison_notes(cmp: Comparison) -> list[str]:
    """evalkit's own stderr lines: runs left out because they could not be read, and how many
    runs each `--exclude` rule dropped, per arm."""
    out = []
    for a in cmp.arms:
        for path, what in a.damaged:
            out.append(f"note: {path}: {what}")
        for name, why in a.crashed:
            out.append(f"note: run {name} left out of arm {a.label}: {why}")
    if cmp.exclude:
        for a in cmp.arms:
            parts = " · ".join(f"{rule} {a.dropped.get(rule, 0)}" for rule in cmp.exclude)
            out.append(f"note: arm {a.label}: runs dropped by --exclude: {parts}")
    return [printable(line) for line in out]


def comparison_json(cmps: Sequence[Comparison]) -> str:
    """`--json`: one object; a single directory's figures, or `{"comparisons": [...]}`."""
    if len(cmps) == 1:
        doc = cmps[0].to_dict()
    else:
        doc = {"comparisons": [c.to_dict() for c in cmps]}
    return js_json(doc, 2) + "\n"  # JSON.stringify: a non-finite number is null


# --- the transposed markdown of the A/B write-ups -------------------------------------------------

# (row label, ArmFigures attribute, cell formatter, direction: -1 lower is better, +1 higher, 0 none)
_MD_ROWS = (
    ("duration (s)", "dur", _n, -1),
    ("tool calls", "tools", _n, -1),
    ("Read", "reads", _n, -1),
    ("Grep/Glob", "grep", _n, -1),
    ("codegraph calls", "cg", _n, 0),
    ("occupancy share", "occ_share", _p, -1),
    ("allocation efficiency", "efficiency", _p, +1),
)
# Sufficiency rows: a larger share of `sufficient` is better, of every other bucket worse.
_MD_BUCKET_DIRECTION = {b: (+1 if b == "sufficient" else -1) for b in BUCKETS}


def _column_name(cmp: Comparison, arm: ArmFigures, several: bool) -> str:
    if not several:
        return arm.label
    name = cmp.directory.rstrip("/").split("/")[-1]
    repo = name[3:] if name.startswith("ab-") else name
    return f"{repo} · {arm.label}"


def _bold_best(values: Sequence[float | None], cells: list[str], direction: int) -> list[str]:
    known = [v for v in values if v is not None]
    if direction == 0 or len(known) < 2 or len(set(known)) == 1:
        return cells
    best = max(known) if direction > 0 else min(known)
    return [f"**{c}**" if v == best else c for v, c in zip(values, cells, strict=True)]


def comparison_markdown(cmps: Sequence[Comparison], *, by_directory: bool | None = None) -> str:
    """The transposed table of the A/B write-ups: one column per arm (per repo × arm when
    several directories are compared), cells `median [min–max]`, sufficiency as counts
    (`2 in 5`), the better cell of each row with a direction in bold (compared by median,
    or by share for sufficiency; ties are not bolded). `by_directory` names the columns
    `repo · arm` (default: when there are several directories)."""
    several = len(cmps) > 1 if by_directory is None else by_directory
    columns = [(c, a) for c in cmps for a in c.arms]
    head = ["", *(_column_name(c, a, several) for c, a in columns)]
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---"] + ["---:"] * len(columns)) + "|",
    ]

    def row(label: str, cells: list[str]) -> None:
        lines.append("| " + " | ".join([label, *cells]) + " |")

    arms = [a for _, a in columns]
    groups = [id(c) for c, _ in columns]  # the better cell is chosen within one directory

    def bold(values: list[float | None], cells: list[str], direction: int) -> list[str]:
        out = list(cells)
        for g in dict.fromkeys(groups):
            idx = [i for i, x in enumerate(groups) if x == g]
            marked = _bold_best([values[i] for i in idx], [cells[i] for i in idx], direction)
            for i, text in zip(idx, marked, strict=True):
                out[i] = text
        return out

    row("runs", [str(a.runs) for a in arms])
    for label, key, f, direction in _MD_ROWS:
        spans: list[Span] = [getattr(a, key) for a in arms]
        row(label, bold([s.median for s in spans], [s.cell(f) for s in spans], direction))
    for b in BUCKETS:
        cells = [f"{a.counts[b]} in {a.answered}" for a in arms]
        row(BUCKET_LABELS[b][0], bold([a.share(b) for a in arms], cells, _MD_BUCKET_DIRECTION[b]))
    lines.append("")
    lines.append(
        "Cells are median [min–max] over runs; sufficiency counts are pooled over every answered "
        "explore call. Bold marks the better arm of a repo where a row has a direction "
        "(fewer calls, a smaller share, more cited bytes, more calls that moved on)."
    )
    drops = [a for a in arms if any(a.dropped.get(r) for r in EXCLUDE_RULES)]
    for a in drops:
        parts = ", ".join(f"{r} {a.dropped[r]}" for r in EXCLUDE_RULES if a.dropped.get(r))
        lines.append(f"Runs dropped from {a.label}: {parts}.")
    return printable("\n".join(lines) + "\n")
