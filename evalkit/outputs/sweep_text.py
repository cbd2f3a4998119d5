"""`evalkit sweep` output: text tables, markdown and JSON (issue 4, Build 7).

Printing only: every number comes from a `SweepResult`; percentages are rounded here and only
here, with the reference's `pct1` (§10.4), and arm cells follow compare-arms.mjs's `span` (§8.4).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from itertools import islice
from typing import Any, TextIO

from evalkit.corpus.records import CallRecord, SessionRecord
from evalkit.ecma import fix, grp, jround, js_json, pct1, pl, rj
from evalkit.errors import one_line
from evalkit.outputs import caveats
from evalkit.tables.agents import AgentRow
from evalkit.tables.aggregate import ArmCell, SliceRow, pct_cell, span
from evalkit.tables.quantile import QUANTILE_METHOD
from evalkit.tables.sweep import SweepResult

__all__ = [
    "render_text",
    "no_tool_calls_note",
    "render_markdown",
    "to_json_dict",
    "render_json",
    "corpus_line",
    "slice_label",
    "arm_span",
    "call_line",
    "agent_lines",
]

DASH = "—"


def _p(x: float | None) -> str:
    return DASH if x is None else pct1(x)


def corpus_line(result: SweepResult) -> str:
    c = result.counts
    return (
        f"{_n(c.sessions, 'session')} with at least one answered explore ({c.single} "
        f"single-question, {c.multi} multi-turn), {_n(c.calls, 'explore call')}, "
        f"{_n(c.sections, 'file section')}, {c.crashes} crashes"
    )


def slice_label(row: SliceRow) -> str:
    """`multi-turn (3 turns)` when every multi-turn session has the same number of segments."""
    if row.slice == "multi-turn" and row.turns is not None:
        return f"multi-turn ({row.turns} turns)"
    return row.slice


def arm_span(cell: ArmCell | None) -> str:
    """`median [min–max]` in compare-arms.mjs's `span(·, p)` form, over values in percent."""
    return DASH if cell is None else span(cell.percents, pct_cell)


def arm_pooled(cell: ArmCell | None) -> str:
    # compare-arms.mjs: p((Σ used / Σ envelope) × 100), `—` when Σ envelope is 0 (§8.4).
    return DASH if cell is None or cell.pooled is None else pct_cell(cell.pooled * 100)


def call_line(c: CallRecord) -> str:
    """A call in the per-call form of the reference's allocation block (§3.6 line 4)."""
    return (
        f"call {c.index}: {rj(pct1(c.efficiency), 6)}  {grp(c.used)}/{grp(c.envelope)} "
        f"chars  {c.cited_files}/{c.files} files"
    )


def _session_summary(r: SessionRecord) -> str:
    return (
        f"{len(r.calls)} {pl(len(r.calls), 'call')}, {r.files_returned} "
        f"{pl(r.files_returned, 'file')}, {grp(r.cited_chars)} of "
        f"{grp(r.chars)} chars cited; path-cited {pct1(r.path_efficiency)}"
        + ("" if r.has_answer else "; no final answer text — efficiency is not meaningful")
    )


def _n(n: int, word: str) -> str:
    return f"{n} {pl(n, word)}"


def _where(result: SweepResult) -> str:
    if result.bundled:
        return "the bundled corpus (data/corpus)"
    return os.fspath(result.root)


def _group_name(pass_: str | None, repo: str | None) -> str:
    return f"{pass_ or DASH} / {repo or DASH}"


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    """Columns padded to their widest cell; the first `left` columns left-aligned."""
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
    out = []
    for row in (header, *rows):
        cells = [
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append("  " + "  ".join(cells).rstrip())
    return out


_SLICE_HEADER = ("slice", "n", "pooled", "median", "p25", "p75", "min", "path-cited only")


def _slice_cells(s: SliceRow) -> list[str]:
    return [
        slice_label(s),
        str(s.n),
        _p(s.pooled),
        _p(s.median),
        _p(s.p25),
        _p(s.p75),
        _p(s.min),
        _p(s.path_cited),
    ]


def _arm_header(result: SweepResult) -> list[str]:
    head = ["pass / repo"]
    for arm in result.arms:
        head += [f"{arm}: median [min–max]", "n", "pooled"]
    return head


def _arm_cells(result: SweepResult) -> list[list[str]]:
    rows = []
    for row in result.arm_rows:
        cells = [_group_name(row.pass_, row.repo)]
        for c in row.cells:
            cells += [arm_span(c), DASH if c is None else str(c.n), arm_pooled(c)]
        rows.append(cells)
    return rows


def _accounting_lines(result: SweepResult, *, every_file: bool) -> list[str]:
    acc = result.accounting
    by = {
        s: [a for a in acc if a.status == s] for s in ("parsed", "no-explore", "crash", "skipped")
    }
    sessions = {s: sorted({a.session for a in by[s]}) for s in ("parsed", "no-explore", "crash")}
    lines = [
        f"Files: {len(acc)} entries accounted for — {len(by['parsed'])} parsed "
        f"({_n(len(sessions['parsed']), 'session')} in the sweep), {len(by['no-explore'])} "
        f"no-explore ({_n(len(sessions['no-explore']), 'session')}), {len(by['crash'])} in "
        f"crashed sessions ({len(sessions['crash'])}), {len(by['skipped'])} skipped"
    ]
    records = {r.log: r for r in result.records}
    damaged = [d for r in result.records for d in r.damage]
    if damaged:
        lines.append(f"  damaged: {_n(len(damaged), 'file')} read over what survived")
        lines += [f"    {one_line(path)}: {what}" for path, what in damaged]
    if every_file:
        lines += [f"  parsed: {one_line(a.path)}" for a in by["parsed"]]
    # Grouped by reason so a reason shared by many files is printed once.
    groups: dict[tuple[str, str], list[str]] = {}
    for status in ("no-explore", "crash"):
        for log in sessions[status]:
            r = records[log]
            extra = f" (+{len(r.segments) - 1} segments)" if len(r.segments) > 1 else ""
            groups.setdefault((status, r.reason or ""), []).append(one_line(log) + extra)
    for a in by["skipped"]:
        groups.setdefault(("skipped", a.reason or ""), []).append(one_line(a.path))
    for (status, reason), items in groups.items():
        lines.append(f"  {status}: {one_line(reason)}")
        lines += [f"    {item}" for item in items]
    return lines


def no_tool_calls_note(result: SweepResult) -> str | None:
    """One line when the sessions that were read hold no tool call at all (nothing to measure:
    a corpus of plain chats, or logs of something else that happen to be transcripts)."""
    read = [r for r in result.records if r.status in ("parsed", "no-explore")]
    if not read or any(r.tool_calls for r in read):
        return None
    n = len(read)
    who = (
        "the session holds no tool call"
        if n == 1
        else f"none of the {n} sessions holds a tool call"
    )
    return f"note: {who}, so there is no explore call to measure"


def _terminal_safe(out: list[str]) -> str:
    """The report's lines joined, each with control characters and bytes that are not UTF-8
    escaped (labels come from path names): nothing a file name holds reaches the terminal raw."""
    return "\n".join(one_line(line) for line in out) + "\n"


def hygiene_lines(result: SweepResult) -> list[str]:
    """How many runs each `--exclude` rule dropped, per pass / repo / arm (none asked: none)."""
    if not result.exclude:
        return []
    out = [
        f"Run hygiene — runs dropped from the arm table by --exclude {','.join(result.exclude)}:"
    ]
    for row in result.arm_rows:
        for c in row.cells:
            if c is None:
                continue
            parts = " · ".join(f"{rule} {c.dropped.get(rule, 0)}" for rule in result.exclude)
            out.append(f"  {_group_name(row.pass_, row.repo)} {c.arm}: {parts}")
    return out


def full_comparison_text(result: SweepResult) -> str:
    """`--full`: the ARM COMPARISON block of compare-arms.mjs for every pass / repo of the arm
    table, over the runs with figures (headless sessions)."""
    from evalkit.outputs.compare_text import format_comparison
    from evalkit.tables.compare import Comparison

    blocks = []
    for row in result.arm_rows:
        arms = tuple(c.figures for c in row.cells if c is not None and c.figures is not None)
        if arms:
            name = "/".join(x for x in (row.pass_, f"ab-{row.repo}" if row.repo else None) if x)
            blocks.append(format_comparison(Comparison(name or DASH, result.arms, arms, ())))
    return "".join(blocks)


def render_text(
    result: SweepResult, *, tail: int = 5, every_file: bool = False, full: bool = False
) -> str:
    """The full `evalkit sweep` report; `full` adds the ARM COMPARISON of every pass / repo."""
    out = [f"Explore allocation sweep — {_where(result)}"]
    if note := no_tool_calls_note(result):
        out.append(note)
    if result.bundled:
        out += ["", caveats.SYNTHETIC_CORPUS]
    out += ["", corpus_line(result)]
    if not result.discovery.sessions:
        out.append(
            "  (no transcripts found: a session is a *.jsonl or *.jsonl.gz file at any depth, "
            "its .tN.jsonl segments beside it)"
        )
    elif all(r.status == "skipped" for r in result.records):
        out.append(
            "  (no Claude Code transcripts found: no line of any *.jsonl file is a Claude Code "
            "event; see the skipped files below)"
        )
    out += [
        "",
        "Baseline — allocation efficiency per session (share of returned chars the answer cited):",
    ]
    out += text_table(_SLICE_HEADER, [_slice_cells(s) for s in result.slices])
    pc = result.per_call
    out += [
        "",
        f"Per call: median {_p(pc.median)}, p25 {_p(pc.p25)} (over {_n(pc.n, 'explore call')}).",
    ]
    out += [
        "",
        f"Arms — per-session efficiency by pass / repo ({' vs '.join(result.arms) or 'no arms'}"
        "): median [min–max], n sessions, pooled:",
    ]
    if result.arm_rows:
        out += text_table(_arm_header(result), _arm_cells(result))
    elif result.arms and any(r.arm for r in result.sessions):
        found = sorted({r.arm for r in result.sessions if r.arm})
        out.append(
            f"  (no session is in arm {' or '.join(result.arms)}; arms found: "
            f"{', '.join(found)} — see --arms)"
        )
    else:
        out.append(
            "  (no session has a pass/repo/arm label from its path; for a layout of your own,"
            " name them with --layout, e.g. --layout '{arm}/{task}/{trial}/*.jsonl')"
        )
    if hyg := hygiene_lines(result):
        out += ["", *hyg]
    if full and result.arm_rows:
        out += ["", "Arms — the full comparison per pass / repo (compare-arms.mjs):"]
        out += full_comparison_text(result).rstrip("\n").split("\n")  # line by line: escaped
    low = result.tail(tail)
    if low:
        out += [
            "",
            f"Lowest {len(low)} {'session' if len(low) == 1 else 'sessions'} — the tail, "
            "where the signal is:",
        ]
        for r in low:
            out.append(f"  {rj(pct1(r.efficiency), 6)}  {one_line(r.log)}  ({_session_summary(r)})")
            out += [f"            {call_line(c)}" for c in r.calls]
    if result.agents:
        out += ["", *agent_lines(result.agents)]
    out += ["", QUANTILE_METHOD, "", "How to read this:"]
    out += [f"  - {c}" for c in caveats.SWEEP_CAVEATS]
    out += [""] + _accounting_lines(result, every_file=every_file)
    return _terminal_safe(out)


_AGENT_HEADER = (
    "agent",
    "arm",
    "sessions",
    "tool calls",
    "prompt tokens",
    "output tokens",
    "passed",
    "mean reward",
)


def _tokens(x: float | None) -> str:
    return "—" if x is None else grp(jround(x))


def agent_lines(rows: Sequence[AgentRow]) -> list[str]:
    """The agent table: sessions per agent and arm, medians per session (issue 15)."""
    cells = [
        [
            r.agent,
            r.arm or "—",
            str(r.sessions),
            "—" if r.tool_calls is None else fix(r.tool_calls, 1),
            _tokens(r.prompt_tokens),
            _tokens(r.output_tokens),
            f"{r.passed} of {r.outcomes}" if r.outcomes else "—",
            "—" if r.reward is None else fix(r.reward, 3),
        ]
        for r in rows
    ]
    return [
        "Agents — every session by agent and arm (median per session; the explore tables above "
        "are Claude Code's only):",
        *text_table(_AGENT_HEADER, cells, left=2),
        "  tokens are the token ledger: prompt = every input token, cached or not; output "
        "includes reasoning; — = not in the logs",
    ]


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    return [
        "| " + " | ".join(map(esc, header)) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ] + ["| " + " | ".join(map(esc, r)) + " |" for r in rows]


def render_markdown(result: SweepResult, *, tail: int = 5) -> str:
    """The sweep's tables as markdown, with the label, method line and caveats."""
    out = [f"# Explore allocation sweep — {_where(result)}", ""]
    if result.bundled:
        out += [f"> {caveats.SYNTHETIC_CORPUS}", ""]
    out += [corpus_line(result) + ".", "", "## Baseline", ""]
    out += _md_table(_SLICE_HEADER, [_slice_cells(s) for s in result.slices])
    pc = result.per_call
    out += [
        "",
        f"Per call: median {_p(pc.median)}, p25 {_p(pc.p25)} (over {_n(pc.n, 'explore call')}).",
        "",
        "## Arms",
        "",
    ]
    if result.arm_rows:
        out += _md_table(_arm_header(result), _arm_cells(result))
    else:
        out.append("No session has a pass/repo/arm label from its path.")
    if hyg := hygiene_lines(result):
        out += ["", hyg[0], ""] + [f"- {line.strip()}" for line in hyg[1:]]
    low = result.tail(tail)
    if low:
        out += ["", "## The tail (lowest sessions)", ""]
        out += _md_table(
            ["session", "efficiency", "calls", "files", "cited / returned chars", "per call"],
            [
                [
                    f"`{r.log}`",
                    pct1(r.efficiency),
                    str(len(r.calls)),
                    str(r.files_returned),
                    f"{grp(r.cited_chars)} / {grp(r.chars)}",
                    "; ".join(pct1(c.efficiency) for c in r.calls),
                ]
                for r in low
            ],
        )
    out += ["", f"_{QUANTILE_METHOD}_", "", "## How to read this", ""]
    out += [f"- {c}" for c in caveats.SWEEP_CAVEATS]
    skipped = [a for a in result.accounting if a.status != "parsed"]
    out += ["", "## Files not in the sweep", ""]
    if skipped:
        out += _md_table(
            ["file", "status", "reason"],
            [[f"`{a.path}`", a.status, a.reason or ""] for a in skipped],
        )
    else:
        out.append("None: every file is a segment of a session in the sweep.")
    return _terminal_safe(out)


def to_json_dict(result: SweepResult) -> dict[str, Any]:
    """The `--json` document: exactly the keys of issue 4 Build 7; fractions, not percents."""
    return {key: list(v) if isinstance(v, Iterator) else v for key, v in _json_parts(result)}


def _json_parts(result: SweepResult) -> list[tuple[str, Any]]:
    """The `--json` document's keys in order, each with its value, or with an iterator over
    the rows of a per-session or per-file list (made as they are written, see `write_json`)."""
    c = result.counts

    def skipped() -> Iterator[dict[str, Any]]:
        for r in result.records:
            if r.status == "no-explore":
                yield {"log": r.log, "reason": r.reason}
            elif r.status == "crash":
                yield {"log": r.log, "reason": f"crash: {r.reason}"}
        for a in result.accounting:
            if a.status == "skipped":
                yield {"log": a.path, "reason": a.reason}

    parts: list[tuple[str, Any]] = [
        ("sessions", c.sessions),
        ("single", c.single),
        ("multi", c.multi),
        ("calls", c.calls),
        ("sections", c.sections),
        ("crashes", c.crashes),
        ("slices", [s.to_dict() for s in result.slices]),
        ("per_call", {"median": result.per_call.median, "p25": result.per_call.p25}),
        (
            "arms",
            [
                {
                    "pass": cell.pass_,
                    "repo": cell.repo,
                    "arm": cell.arm,
                    "n": cell.n,
                    "median": cell.median,
                    "min": cell.min,
                    "max": cell.max,
                    "pooled": cell.pooled,
                }
                for row in result.arm_rows
                for cell in row.cells
                if cell is not None
            ],
        ),
        (
            "session_rows",
            (
                {
                    "log": r.log,
                    "pass": r.pass_,
                    "repo": r.repo,
                    "arm": r.arm,
                    "run": r.run,
                    "segments": len(r.segments),
                    "calls": len(r.calls),
                    "chars": r.chars,
                    "cited_chars": r.cited_chars,
                    "efficiency": r.efficiency,
                    "path_efficiency": r.path_efficiency,
                }
                for r in result.records
                if r.in_sweep
            ),
        ),
        ("skipped", skipped()),
        # Every file of the tree (each segment and subagent file) and what became of it, and
        # per damaged file what was lost: the accounting the text report lists.
        (
            "files",
            ({"file": a.path, "status": a.status, "session": a.session} for a in result.accounting),
        ),
        ("damage", (d.to_dict() for r in result.records for d in r.damage_counts)),
    ]
    # Only for a corpus holding another agent's logs, so a Claude Code corpus keeps its keys.
    if result.agents:
        parts.append(("agents", [asdict(r) for r in result.agents]))
    return parts


# Rows of a list written by one `js_json` call (its fast path for a table of scalar rows).
_ROWS_PER_PIECE = 512


def write_json(result: SweepResult, out: TextIO) -> None:
    """Write `--json` (`render_json`'s text, byte for byte) to `out` piece by piece.

    The per-session and per-file lists are made a few hundred rows at a time as they are
    written, so neither the document nor its text is ever held whole: at a corpus of thousands
    of sessions both are megabytes (the largest part of a sweep's peak memory). The text is
    `JSON.stringify(doc, null, 2)`: each piece is written by `js_json` at the top level and
    indented to its place (`js_json` never writes a raw newline inside a string).
    """
    out.write("{")
    for n, (key, value) in enumerate(_json_parts(result)):
        out.write(("," if n else "") + "\n  " + js_json(key) + ": ")
        if not isinstance(value, Iterator):
            out.write(js_json(value, 2).replace("\n", "\n  "))
            continue
        opened = False
        while piece := list(islice(value, _ROWS_PER_PIECE)):
            text = js_json(piece, 2)  # "[\n  row,\n  row\n]": keep what is between the brackets
            out.write(("," if opened else "[") + text[1:-2].replace("\n", "\n  "))
            opened = True
        out.write("\n  ]" if opened else "[]")
    out.write("\n}\n")


def render_json(result: SweepResult) -> str:
    """`--json`: written as JSON.stringify writes it (non-finite numbers are null, a name that is
    not valid UTF-8 keeps its `\\udcXX` escapes), so the output is always valid JSON."""
    buffer = io.StringIO()
    write_json(result, buffer)
    return buffer.getvalue()


def needs_generic(result: SweepResult) -> bool:
    """Whether the sweep has sessions but no explore call (issue 23): its explore tables would be
    empty, so `evalkit sweep` prints the generic comparison instead (`render_generic_text`)."""
    return not result.sessions and any(r.status in ("parsed", "no-explore") for r in result.records)


def render_generic_text(
    result: SweepResult, lines: Sequence[str], notes: Sequence[str], *, every_file: bool = False
) -> str:
    """The sweep's report of a corpus without explore calls: the notes (the layout or profile
    chosen, the flag to use), the generic comparison's `lines`, and the file accounting."""
    read = sum(1 for r in result.records if r.status in ("parsed", "no-explore"))
    out = [f"Sweep — {_where(result)}"]
    if note := no_tool_calls_note(result):
        out.append(note)
    out += list(notes)
    if result.bundled:
        out += ["", caveats.SYNTHETIC_CORPUS]
    out += [
        "",
        f"{_n(read, 'session')} read, none with an answered explore call: the explore "
        f"allocation tables have nothing to show, so this is the comparison every corpus has "
        f"({result.counts.crashes} crashes).",
        "",
        *lines,
    ]
    out += [""] + _accounting_lines(result, every_file=every_file)
    return _terminal_safe(out)
