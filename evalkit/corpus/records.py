"""One row per session of a sweep: what parsing it gave (spec §8.2 steps 1–2).

`analyse_session` is the unit of work the sweep runs in parallel and caches. It returns a small
JSON-able payload (numbers only, no labels) so the cache can store it; `SessionRecord` joins that
payload with the labels discovery read from the path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from evalkit.corpus.discover import Discovery, SessionRef
from evalkit.errors import NOT_A_TRANSCRIPT, NotATranscript, TranscriptError

if TYPE_CHECKING:
    from evalkit.session import RunFigures

__all__ = [
    "Accounting",
    "CallRecord",
    "FileDamage",
    "SessionRecord",
    "account_files",
    "analyse_session",
    "read_ref",
    "record_from_payload",
]

Status = Literal["parsed", "no-explore", "crash", "skipped"]

# Bump when the payload's shape or meaning changes; part of every cache key.
PAYLOAD_VERSION = 4  # 2: damage line counts; 3: tool calls, skipped; 4: run figures

NO_EXPLORE = "no answered explore call with file sections (not in the sweep, Decision 4)"


@dataclass(frozen=True)
class CallRecord:
    """One allocation call (§3.2 step 6): a non-error explore result with at least one section.

    Attributes:
        index: 1-based over the session's allocation calls.
        envelope: Σ section chars (UTF-16 units, Decision 1).
        used: Σ chars of sections with a verdict (cited chars).
        used_path: Σ chars of sections with a `path` verdict.
        files: Sections in the call (a file twice counts twice).
        cited_files: Sections with a verdict.
    """

    index: int
    envelope: int
    used: int
    used_path: int
    files: int
    cited_files: int

    @property
    def efficiency(self) -> float:
        """`used / envelope`, 0 when the envelope is 0 (§3.2 step 6)."""
        return self.used / self.envelope if self.envelope else 0.0


@dataclass(frozen=True)
class FileDamage:
    """What reading one damaged file lost (the sweep's `--json` damage account).

    Attributes:
        file: The file, relative to the swept directory.
        what: The same account in words, as the text report prints it.
        malformed: Lines that are not valid JSON, skipped.
        non_object: Valid JSON lines that are not objects, ignored.
        invalid_utf8: Lines holding bytes that are not UTF-8 (decoded with U+FFFD).
        truncated_gzip: The gzip stream ended early.
        unreadable: Why the file could not be read at all (a subagent file), else None.
    """

    file: str
    what: str
    malformed: int = 0
    non_object: int = 0
    invalid_utf8: int = 0
    truncated_gzip: bool = False
    unreadable: str | None = None

    @property
    def skipped(self) -> int:
        """Non-blank lines that did not become events."""
        return self.malformed + self.non_object

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "skipped": self.skipped,
            "malformed": self.malformed,
            "non_object": self.non_object,
            "invalid_utf8": self.invalid_utf8,
            "truncated_gzip": self.truncated_gzip,
            "unreadable": self.unreadable,
            "what": self.what,
        }


@dataclass(frozen=True)
class SessionRecord:
    """A discovered session with its allocation totals (fractions, not percents).

    Attributes:
        log: First segment, relative to the swept directory.
        segments: Every segment file, relative to the swept directory.
        pass_, repo, arm, run, layout: Labels from the path (`SessionRef`).
        suite, task, trial: Labels a `--layout` reads from the path (None otherwise).
        status: `parsed` (in the sweep), `no-explore` (parsed, no allocation call), `crash`,
            or `skipped` (not a Claude Code transcript).
        reason: Why a session is not in the sweep (None when parsed).
        calls: The allocation calls.
        chars: Σ chars returned (the pooled envelope).
        cited_chars: Σ chars of cited files (`used`).
        path_chars: Σ chars of path-cited files (`usedPath`).
        files_returned: Distinct paths returned.
        files_used: Distinct paths with a verdict.
        cited_paths: The distinct paths with a verdict, largest first (§3.2 step 7 order).
        has_answer: The final answer is non-empty after trimming.
        explore_results: Answered explore results (§1.6), with or without sections.
        tool_calls: tool_use blocks over every thread (0 for a corpus of no agent work).
        damage: `(segment, what was lost)` for each damaged segment file (skipped lines,
            invalid UTF-8, a cut gzip stream); the numbers are over what survived.
        damage_counts: One `FileDamage` per damaged file, the same files as `damage`.
        subagents: Interactive sessions only: the subagent files merged into the session.
        figures: The run's ARM COMPARISON figures (§8.4) for a headless session; None for an
            interactive one (no occupancy) or a session that was not read.
    """

    log: str
    segments: tuple[str, ...]
    pass_: str | None
    repo: str | None
    arm: str | None
    run: str | None
    layout: str
    status: Status
    reason: str | None
    calls: tuple[CallRecord, ...] = ()
    chars: int = 0
    cited_chars: int = 0
    path_chars: int = 0
    files_returned: int = 0
    files_used: int = 0
    cited_paths: tuple[str, ...] = ()
    has_answer: bool = False
    explore_results: int = 0
    tool_calls: int = 0
    damage: tuple[tuple[str, str], ...] = ()
    damage_counts: tuple[FileDamage, ...] = ()
    subagents: tuple[str, ...] = ()
    suite: str | None = None
    task: str | None = None
    trial: str | None = None
    figures: RunFigures | None = field(default=None, repr=False, compare=False)

    @property
    def in_sweep(self) -> bool:
        """Decision 4: at least one allocation call."""
        return self.status == "parsed"

    @property
    def multi_turn(self) -> bool:
        """Decision 7: more than one segment file."""
        return len(self.segments) > 1

    @property
    def sections(self) -> int:
        return sum(c.files for c in self.calls)

    @property
    def efficiency(self) -> float:
        """Pooled `cited_chars / chars` (§3.2 step 7), 0 when nothing was returned."""
        return self.cited_chars / self.chars if self.chars else 0.0

    @property
    def path_efficiency(self) -> float:
        """Pooled `path_chars / chars`, the path-cited floor."""
        return self.path_chars / self.chars if self.chars else 0.0


def _relative(path: str, root: str) -> str:
    try:
        return os.path.relpath(path, root).replace(os.sep, "/")
    except ValueError:
        return path


def analyse_session(
    root: str,
    segments: tuple[str, ...],
    log: str,
    problem: str | None = None,
    interactive: bool = False,
    frames: bool = False,
    profile: Any = None,
) -> dict[str, Any]:
    """Parse one session and reduce it to its allocation numbers (§8.2 steps 1–2).

    Never raises for a bad session: a parse that raises is a crash payload with the reason,
    naming the file relative to `root`; a file that is not a Claude Code transcript at all is a
    `skipped` payload. `interactive` reads the session as §1.10 does (its `<id>/subagents/`
    merged, falsy lines dropped). `frames` adds `rows`: the rows of every corpus frame
    (`evalkit.corpus.frames.session_rows`), from the same parse. `profile` (a `ToolProfile`)
    parses with that tool profile and adds `run`: the figures the trial sweep reads
    (`run_payload`); give such a run a cache of its own, keyed by the profile.
    """
    if problem is not None:
        return {"status": "crash", "reason": problem}
    # Imported here so discovery and aggregation load without the parsing stack.
    from evalkit.session import parse_session, read_session_file

    paths = [os.path.join(root, s) for s in segments]
    extra_figures: dict[str, Any] = {}
    try:
        if interactive:  # §1.10: subagent files merged, falsy lines dropped
            isession = read_session_file(paths[0], log=log)
            allocation, texts, reads = (
                isession.allocation,
                isession.explore_texts,
                isession.segment_reads,
            )
            tool_calls = sum(isession.main_counts.values()) + sum(isession.subagent_counts.values())
            parsed: Any = isession
        else:
            if profile is not None:
                session = parse_session(paths, log=log, profile=profile)
            else:
                session = parse_session(paths, log=log)
            allocation, texts = session.allocation, session.explore_texts
            reads = session.transcript.segments
            tool_calls = len(session.summary.calls)
            parsed = session
            extra_figures = {"figures": session.figures.to_payload()}
        damage = [
            [
                _relative(seg.path, root),
                text,
                seg.malformed,
                seg.non_object,
                seg.invalid_utf8,
                seg.truncated_gzip,
                seg.unreadable,
            ]
            for seg in reads
            if (text := seg.damage())
        ]
    except NotATranscript as exc:
        where = _relative(exc.path, root)
        reason = NOT_A_TRANSCRIPT if where == segments[0] else f"{where}: {NOT_A_TRANSCRIPT}"
        return {"status": "skipped", "reason": reason}
    except TranscriptError as exc:
        where = _relative(exc.path, root)
        line = f":{exc.line}" if exc.line is not None else ""
        return {"status": "crash", "reason": f"{where}{line}: {exc.reason}"}
    except RecursionError:
        return {"status": "crash", "reason": "input nested too deeply to parse"}
    except Exception as exc:  # noqa: BLE001 — a crash is counted and reported, never fatal (§8.2)
        return {
            "status": "crash",
            "reason": f"unexpected {type(exc).__name__} while parsing: {exc}",
        }
    extra: dict[str, Any] = {}
    if profile is not None and not interactive:
        extra["run"] = run_payload(parsed)
    if frames:
        # Rows are built apart from the sweep's numbers: a failure here loses the session's
        # frame rows (reported as an error), never its place in the sweep.
        from evalkit.corpus.frames import session_rows

        try:
            extra["rows"] = session_rows(parsed)
        except TranscriptError as exc:
            extra["rows_error"] = f"{_relative(exc.path, root)}: {exc.reason}"
        except Exception as exc:  # noqa: BLE001 — reported as the session's error
            extra["rows_error"] = f"unexpected {type(exc).__name__} building frames: {exc}"
    a = allocation
    calls = [
        [c.index, c.envelope, c.used, c.used_path, len(c.files), c.cited_files] for c in a.calls
    ]
    return {
        "status": "parsed" if calls else "no-explore",
        "reason": None if calls else NO_EXPLORE,
        "calls": calls,
        "chars": a.envelope,
        "cited_chars": a.used,
        "path_chars": a.used_path,
        "files_returned": a.files_returned,
        "files_used": a.files_used,
        "cited_paths": [f.path for f in a.files if f.via],
        "has_answer": a.has_answer,
        "explore_results": len(texts),
        "tool_calls": tool_calls,
        "damage": damage,
        **extra_figures,
        **extra,
    }


def run_payload(session: Any) -> dict[str, Any]:
    """What the trial sweep keeps of one parsed session (JSON-able, cached): the arm
    comparison's figures, read allocation, tool calls, tokens, cost, duration, event types."""
    s, tokens = session.summary, session.tokens
    ledger = tokens.ledger if tokens is not None else None
    total = None
    if ledger is not None and ledger.prompt_tokens is not None:
        total = ledger.prompt_tokens + (ledger.output_tokens or 0)
    other: dict[str, int] = {}
    for seg in session.transcript.segments:
        for name, n in seg.other_types:
            other[name] = other.get(name, 0) + n
    return {
        "figures": session.figures.to_payload(),
        "read_allocation": session.read_allocation.to_dict(),
        "tool_calls": len(s.calls),
        "tool_under_test_calls": s.cg,
        "cost_usd": tokens.cost if tokens is not None else s.cost,
        "tokens": total,
        "duration_s": s.dur,
        "other_types": other,
        "containers": sorted({seg.container for seg in session.transcript.segments}),
        "wrapped": sum(seg.wrapped for seg in session.transcript.segments),
    }


def record_from_payload(ref: SessionRef, payload: dict[str, Any]) -> SessionRecord:
    """Join a session's labels with its analysed numbers."""
    from evalkit.session import RunFigures

    calls = tuple(CallRecord(*c) for c in payload.get("calls", ()))
    return SessionRecord(
        log=ref.log,
        segments=ref.segments,
        pass_=ref.pass_,
        repo=ref.repo,
        arm=ref.arm,
        run=ref.run,
        layout=ref.layout,
        suite=ref.suite,
        task=ref.task,
        trial=ref.trial,
        status=payload["status"],
        reason=payload.get("reason"),
        calls=calls,
        chars=payload.get("chars", 0),
        cited_chars=payload.get("cited_chars", 0),
        path_chars=payload.get("path_chars", 0),
        files_returned=payload.get("files_returned", 0),
        files_used=payload.get("files_used", 0),
        cited_paths=tuple(payload.get("cited_paths", ())),
        has_answer=payload.get("has_answer", False),
        explore_results=payload.get("explore_results", 0),
        tool_calls=payload.get("tool_calls", 0),
        damage=tuple((d[0], d[1]) for d in payload.get("damage", ())),
        damage_counts=tuple(FileDamage(*d) for d in payload.get("damage", ())),
        subagents=ref.subagents,
        figures=RunFigures.from_payload(payload["figures"]) if payload.get("figures") else None,
    )


@dataclass(frozen=True)
class Accounting:
    """What the sweep (or the corpus loader) did with one file or directory of the tree.

    `status` is `parsed` (a segment of a session in the sweep), `no-explore`, `crash` (a
    segment of a session whose parse raised) or `skipped`; `reason` says why for all but parsed.
    """

    path: str
    status: str
    session: str | None
    reason: str | None


def account_files(
    discovery: Discovery, records: tuple[SessionRecord, ...]
) -> tuple[Accounting, ...]:
    """Every entry of the tree with what became of it, in path order."""
    status = {r.log: r for r in records}
    out = []
    for f in discovery.files:
        if f.session is None:
            out.append(Accounting(f.path, "skipped", None, f.reason))
        else:
            r = status[f.session]
            out.append(Accounting(f.path, r.status, r.log, r.reason))
    return tuple(out)


def read_ref(root: str | os.PathLike[str], ref: SessionRef) -> Any:
    """Parse one discovered session in full, as the sweep read it (no discovery is re-run).

    Returns a `Session`, or an `InteractiveSession` for an interactive Claude Code log (§7.4);
    its `log` is the corpus-relative name.

    Raises:
        TranscriptError: The session cannot be read.
    """
    from evalkit.session import parse_session, read_session_file

    root = os.fspath(root)
    if ref.layout == "interactive":
        return read_session_file(os.path.join(root, ref.log), log=ref.log)
    return parse_session([os.path.join(root, s) for s in ref.segments], log=ref.log)
