"""One row per session of a sweep: what parsing it gave (spec §8.2 steps 1–2).

`analyse_session` is the unit of work the sweep runs in parallel and caches. It returns a small
JSON-able payload (numbers only, no labels) so the store can keep it; `SessionRecord` joins that
payload with the labels discovery read from the path.

The payload's fields are declared once, in `evalkit.store.rows.PAYLOAD_FIELDS`: the corpus
store derives its columns and its validation from it. Adding a per-session value means adding
one `PayloadField` there (with the check its stored value must pass), the value in
`analyse_session`, and its `SessionRecord` attribute in `record_from_payload`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from evalkit.corpus.discover import HARBOR_NO_TRANSCRIPT, Discovery, SessionRef
from evalkit.errors import NOT_A_TRANSCRIPT, NotATranscript, TranscriptError, one_line
from evalkit.formats.detect import detect_format
from evalkit.store.keys import RACY_NS
from evalkit.store.manifest import FileManifest, file_state, regular_file_digest, session_files

if TYPE_CHECKING:
    from evalkit.metrics.figures import RunFigures

__all__ = [
    "Accounting",
    "CallRecord",
    "FileDamage",
    "SessionRecord",
    "account_files",
    "analyse_session",
    "analyse_with_files",
    "analyse_chunk",
    "Analysed",
    "read_ref",
    "record_from_payload",
]

Status = Literal["parsed", "no-explore", "crash", "skipped"]


NO_EXPLORE = "no answered explore call with file sections (nothing to measure: not in the sweep)"


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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
        agent: Which agent wrote the file: `claude-code`, `codex` or `inspect` (issue 15).
        agent_sessions: For a Codex or Inspect file, a summary of each of its sessions (an
            Inspect log holds one per sample and epoch): `log`, `agent`, `format`,
            `tool_calls`, `prompt_tokens`, `output_tokens`, `duration_s`, `cost_usd`,
            `reward`, `passed`. Empty for Claude Code.
        ledger: A headless Claude Code session's `(prompt_tokens, output_tokens)` from the
            token ledger, for the agent table; None otherwise.
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
    agent: str = "claude-code"
    agent_sessions: tuple[dict[str, Any], ...] = ()
    ledger: tuple[float | None, float | None] | None = None

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
    fmt: str | None = None,
) -> dict[str, Any]:
    """Parse one session and reduce it to its allocation numbers (§8.2 steps 1–2).

    Never raises for a bad session: a parse that raises is a crash payload with the reason,
    naming the file relative to `root`; a file that is not a Claude Code transcript at all is a
    `skipped` payload. `interactive` reads the session as §1.10 does (its `<id>/subagents/`
    merged, falsy lines dropped). `frames` adds `rows`: the rows of every corpus frame
    (`evalkit.corpus.frame_rows.session_rows`), from the same parse. `profile` (a `ToolProfile`)
    parses with that tool profile and adds `run`: the figures the trial sweep reads
    (`run_payload`); give such a run a cache of its own, keyed by the profile. A Codex or
    Inspect file (`fmt`, or detected from the content of a one-file session) is read by its own
    reader (`evalkit.corpus.agents.agent_payload`).
    """
    return _analyse(root, segments, log, problem, interactive, frames, profile, fmt)[0]


def _analyse(
    root: str,
    segments: tuple[str, ...],
    log: str,
    problem: str | None,
    interactive: bool,
    frames: bool = False,
    profile: Any = None,
    fmt: str | None = None,
    digests: bool = True,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The payload, and the digest of every file the parse read (by path relative to root;
    none with `digests` off: a caller that stores nothing does not hash what it reads)."""
    if problem is not None:
        return {"status": "crash", "reason": problem}, {}
    from evalkit.metrics.envelope import forget_scans

    try:
        return _analyse_parsed(root, segments, log, interactive, frames, profile, fmt, digests)
    finally:
        forget_scans()  # memory stays bounded by the largest session


def _analyse_parsed(
    root: str,
    segments: tuple[str, ...],
    log: str,
    interactive: bool,
    frames: bool,
    profile: Any,
    fmt: str | None = None,
    digests: bool = True,
) -> tuple[dict[str, Any], dict[str, str]]:
    paths = [os.path.join(root, s) for s in segments]
    extra_figures: dict[str, Any] = {}
    try:
        if fmt == HARBOR_NO_TRANSCRIPT:
            return _no_transcript_payload(paths[0], frames), {}
        if fmt not in (None, "claude-code"):
            return _agent_payload(root, paths[0], log, fmt, frames, profile), {}
        session, interactive = _read_claude_code(paths, log, interactive, profile, digests, frames)
        if interactive:  # §1.10: subagent files merged, falsy lines dropped
            from evalkit.session import read_session_file

            isession = read_session_file(paths[0], log=log)
            allocation, texts, reads = (
                isession.allocation,
                isession.explore_texts,
                isession.segment_reads,
            )
            tool_calls = sum(isession.main_counts.values()) + sum(isession.subagent_counts.values())
            parsed: Any = isession
        else:
            allocation, texts = session.allocation, session.explore_texts
            reads = session.transcript.segments
            tool_calls = len(session.summary.calls)
            parsed = session
            extra_figures = {"figures": session.figures.to_payload()}
            # The agent table's ledger figures (issue 15), computed with the session already.
            ledger = session.tokens.ledger if session.tokens is not None else None
            if ledger is not None:
                extra_figures["ledger"] = [ledger.prompt_tokens, ledger.output_tokens]
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
        # Not Claude Code: another agent's log, told by its content (only then is it looked
        # at, so a Claude Code corpus pays nothing for the other readers).
        other = _other_format(paths, fmt, interactive)
        if isinstance(other, dict):
            return other, {}
        if other is not None:
            return _agent_payload(root, paths[0], log, other, frames, profile), {}
        where = _relative(exc.path, root)
        why = exc.reason or NOT_A_TRANSCRIPT  # a line over the limit is named (issue 21)
        reason = why if where == segments[0] else f"{where}: {why}"
        return {"status": "skipped", "reason": reason}, {}
    except TranscriptError as exc:
        # Another agent's log holding a line the Claude Code reader stops on (a `null`) is
        # read by its own reader, as `evalkit run`, which detects first, reads it (issue 21).
        other = _other_format(paths, fmt, interactive)
        if isinstance(other, dict):
            return other, {}
        if other is not None:
            return _agent_payload(root, paths[0], log, other, frames, profile), {}
        where = _relative(exc.path, root)
        line = f":{exc.line}" if exc.line is not None else ""
        return {"status": "crash", "reason": f"{where}{line}: {exc.reason}"}, {}
    except RecursionError:
        return {"status": "crash", "reason": "input nested too deeply to parse"}, {}
    except Exception as exc:  # noqa: BLE001 — a crash is counted and reported, never fatal (§8.2)
        return _unexpected(exc, "parsing"), {}
    extra: dict[str, Any] = {}
    if profile is not None and not interactive:
        extra["run"] = run_payload(parsed)
    if frames:
        # Rows are built apart from the sweep's numbers: a failure here loses the session's
        # frame rows (reported as an error), never its place in the sweep.
        from evalkit.corpus.frame_rows import session_rows

        try:
            extra["rows"] = session_rows(parsed, profile)
        except TranscriptError as exc:
            extra["rows_error"] = f"{_relative(exc.path, root)}: {exc.reason}"
        except Exception as exc:  # noqa: BLE001 — reported as the session's error
            extra["rows_error"] = f"unexpected {type(exc).__name__} building frames: {exc}"
    a = allocation
    calls = [
        [c.index, c.envelope, c.used, c.used_path, len(c.files), c.cited_files] for c in a.calls
    ]
    payload = {
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
    named = dict(zip(paths, segments, strict=False))  # a segment's path → its name as given
    return payload, {
        _relative_to(seg.path, root, named.get(seg.path)): seg.digest for seg in reads if seg.digest
    }


def _other_format(paths: list[str], fmt: str | None, interactive: bool) -> Any:
    """For a file the Claude Code reader refused: another agent's format when its content is
    one (a one-file session, no reader forced), else None; a crash payload when detection
    itself failed (this file's reason, never the corpus's)."""
    if fmt is not None or interactive or len(paths) != 1:
        return None
    try:
        other = detect_format(paths[0])
    except Exception as err:  # noqa: BLE001
        return _unexpected(err, "detecting its format")
    return None if other == "claude-code" else other


def _read_claude_code(
    paths: list[str],
    log: str,
    interactive: bool,
    profile: Any,
    digests: bool = True,
    frames: bool = True,
) -> tuple[Any, bool]:
    """A Claude Code session read as its content says (issue 23): `(Session, False)` for a
    headless run, `(None, True)` for an interactive project log, to be read by the interactive
    reader. A file discovery took for a headless run whose content is a project log (no
    `system/init`, no `result`, `sessionId`/`parentUuid` lines) is interactive, whatever its
    name; a log discovery took for an interactive one stays so (its folder and subagents)."""
    # Imported here so discovery and aggregation load without the parsing stack.
    from evalkit.formats.claude_code.transcripts import read_transcript
    from evalkit.session import is_interactive_log, session_from_transcript

    if interactive:
        return None, True
    transcript = read_transcript(paths, digests=digests, refuse_empty=True)
    if len(paths) == 1 and is_interactive_log(transcript.events):
        return None, True
    if profile is not None:
        return session_from_transcript(transcript, log=log, profile=profile), False
    # The sweep's payload never reads the read allocation (only frames and `run` do).
    return session_from_transcript(transcript, log=log, read_allocation=frames), False


def _no_transcript_payload(result_path: str, frames: bool) -> dict[str, Any]:
    """A harbor trial whose `result.json` has no transcript beside it (issue 23): one session
    of status `infra_error`, its agent named by the result; nothing else is known of it."""
    from evalkit.formats.harbor import read_trial_result
    from evalkit.metrics.status import missing_transcript_status

    trial = read_trial_result(result_path)
    status = missing_transcript_status(trial)
    agent = trial.agent or "claude-code"
    payload: dict[str, Any] = {
        "status": "no-explore",
        "reason": "harbor trial without a transcript (result.json only): " + status.detail,
        "calls": [],
        "agent": agent,
    }
    if frames:
        from evalkit.corpus.frame_rows import FRAME_NAMES

        rows: dict[str, list[dict[str, Any]]] = {name: [] for name in FRAME_NAMES}
        rows["sessions"].append(
            {
                "question": 1,
                "agent": agent,
                "segments": 0,
                "status": status.status,
                "status_detail": status.detail,
                "success": False,
            }
        )
        payload["rows"] = rows
    return payload


def _unexpected(exc: BaseException, doing: str) -> dict[str, Any]:
    """The crash payload of an exception evalkit did not foresee while `doing` a step."""
    if isinstance(exc, RecursionError):
        return {"status": "crash", "reason": "input nested too deeply to parse"}
    detail = one_line(str(exc))[:200]
    what = f"unexpected {type(exc).__name__} while {doing}" + (f": {detail}" if detail else "")
    return {"status": "crash", "reason": what}


def _relative_to(path: str, root: str, given: str | None) -> str:
    """`_relative(path, root)` for `path = os.path.join(root, given)`: `given` itself when it
    is already the relative path (normal, downward, relative), without `relpath`'s work."""
    if (
        given is not None
        and root
        and not os.path.isabs(given)
        and os.path.normpath(given) == given
        and given != ".."
        and not given.startswith("../")
        and os.sep == "/"
    ):
        return given
    return _relative(path, root)


def analyse_with_files(
    root: str, ref: SessionRef, frames: bool = False, profile: Any = None
) -> tuple[dict[str, Any], FileManifest | None]:
    """`analyse_session` plus the manifest to store it under; None when it must not be stored.

    The files are examined before and after the parse: a file that is not regular, vanishes
    or changes meanwhile leaves the payload unstored (it is still returned). Digests are those
    of the bytes the parse read; a file the parse did not read (a crash before it, a
    `.meta.json`) is hashed here, between the two examinations.
    """
    try:
        return _analyse_with_files(root, ref, frames, profile)
    except Exception as exc:  # noqa: BLE001 — one file's failure is that file's reason (issue 21)
        return _unexpected(exc, "reading"), None


def _analyse_with_files(
    root: str, ref: SessionRef, frames: bool, profile: Any
) -> tuple[dict[str, Any], FileManifest | None]:
    import time

    files = session_files(ref)
    paths = [os.path.join(root, f) for f in files]
    before = [file_state(p) for p in paths]
    payload, read = _analyse(
        root,
        ref.segments,
        ref.log,
        ref.problem,
        ref.layout == "interactive",
        frames,
        profile,
        ref.format,
    )
    if any(s is None for s in before):
        return payload, None
    digests = []
    for f, p in zip(files, paths, strict=True):
        d = read.get(f)
        if d is None:
            d = regular_file_digest(p)
            if d is None:
                return payload, None
        digests.append(d)
    after = [file_state(p) for p in paths]
    if after != before:
        return payload, None
    now = time.time_ns()
    racy = any(s[0] >= 0 and now - s[1] < RACY_NS for s in before)  # type: ignore[index]
    return payload, FileManifest(tuple(files), tuple(before), tuple(digests), racy)  # type: ignore[arg-type]


Analysed = tuple[dict[str, Any], FileManifest | None]


def analyse_chunk(
    root: str,
    refs: Sequence[SessionRef],
    frames: bool = False,
    profile: Any = None,
    manifests: bool = True,
) -> list[Analysed]:
    """The unit of parallel work, run by every parsing engine (`evalkit.corpus.parse`): each
    session's payload and the manifest to store it under.

    `frames` also builds every corpus frame's rows from the same parse, and `profile` parses
    with a tool profile (`analyse_session`). `manifests=False` is for a run that stores
    nothing: every manifest is None, and the files are neither examined twice nor hashed.
    """
    if not manifests:
        return [(_payload_only(root, ref, frames, profile), None) for ref in refs]
    return [analyse_with_files(root, ref, frames, profile) for ref in refs]


def _payload_only(root: str, ref: SessionRef, frames: bool, profile: Any) -> dict[str, Any]:
    """`analyse_with_files(...)[0]` without its manifest: the same payload, the same crash
    payload for what fails unforeseen."""
    try:
        return _analyse(
            root,
            ref.segments,
            ref.log,
            ref.problem,
            ref.layout == "interactive",
            frames,
            profile,
            ref.format,
            digests=False,
        )[0]
    except Exception as exc:  # noqa: BLE001 — one file's failure is that file's reason (issue 21)
        return _unexpected(exc, "reading")


def _agent_payload(
    root: str, path: str, log: str, fmt: str, frames: bool, profile: Any = None
) -> dict[str, Any]:
    """A Codex, Inspect or ATIF file's payload; an unreadable one is a crash naming the file."""
    from evalkit.corpus.agents import agent_payload

    try:
        return agent_payload(root, path, log, fmt, frames, profile)
    except TranscriptError as exc:
        where = _relative(exc.path, root)
        line = f":{exc.line}" if exc.line is not None else ""
        return {"status": "crash", "reason": f"{where}{line}: {exc.reason}"}
    except Exception as exc:  # noqa: BLE001 — a crash is counted and reported, never fatal
        return _unexpected(exc, "reading")


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
        "tool_names": sorted(s.counts),  # the profile is chosen from them (issue 23)
        "other_types": other,
        "containers": sorted({seg.container for seg in session.transcript.segments}),
        "wrapped": sum(seg.wrapped for seg in session.transcript.segments),
    }


def _shared(s: str | None) -> str | None:
    """One string object for equal strings: a sweep holds its records all at once, and the
    same path, reason or label recurs across sessions (every payload that came from a worker or
    from the store brings its own copy)."""
    return None if s is None else sys.intern(s)


def _same(a: Any, b: Any) -> Any:
    """`b`, or `a` when both are equal ints: one object for a number a record holds twice (a
    session's cited chars are often its path-cited chars, a call's used chars its envelope).
    Only ints: equal floats can differ in sign (`-0.0 == 0.0`)."""
    return a if type(a) is int and type(b) is int and a == b else b


# One dict for equal sufficiency counts (a corpus has a few dozen distinct ones); bounded.
_COUNTS: dict[tuple[Any, ...], dict[str, Any]] = {}
_MAX_COUNTS = 1 << 12


def _shared_counts(counts: Any) -> Any:
    if type(counts) is not dict:
        return counts
    key = (tuple(counts.items()), tuple(map(type, counts.values())))  # 1, 1.0 and True apart
    try:
        return _COUNTS[key]
    except KeyError:
        pass
    except TypeError:  # pragma: no cover - stored counts are scalars, so hashable
        return counts
    if len(_COUNTS) >= _MAX_COUNTS:
        _COUNTS.clear()
    _COUNTS[key] = counts
    return counts


# `RunFigures`' fields in order, and where the counts and the two processed-token figures are.
_FIGURES: tuple[tuple[str, ...], int, int, int] | None = None


def _run_figures(figures: dict[str, Any]) -> RunFigures:
    """`RunFigures.from_payload(figures)`, holding less: equal counts share one dict, and the
    tokens processed by both definitions one int when they are equal (issue 16: the figures
    are the largest part of a record)."""
    from evalkit.metrics.figures import RunFigures

    global _FIGURES
    if _FIGURES is None:
        names = tuple(RunFigures.__dataclass_fields__)
        at = names.index
        _FIGURES = names, at("counts"), at("processed"), at("processed_message_usage")
    names, counts, processed, pmu = _FIGURES
    values = list(map(figures.__getitem__, names))  # in field order: given by position
    values[counts] = _shared_counts(values[counts])
    values[pmu] = _same(values[processed], values[pmu])
    return RunFigures(*values)


def record_from_payload(ref: SessionRef, payload: dict[str, Any]) -> SessionRecord:
    """Join a session's labels with its analysed numbers.

    The record holds none of the payload's containers (lists and dicts become tuples and
    slotted records, repeated strings one shared object, equal counts one dict, a number held
    twice one int), so the payload can be dropped as soon as its record is made: a sweep then
    holds, per session, only its record.
    """
    calls = tuple(
        CallRecord(c[0], c[1], used := _same(c[1], c[2]), _same(used, c[3]), c[4], c[5])
        for c in payload.get("calls", ())
    )
    damage = payload.get("damage", ())
    figures = payload.get("figures")
    ledger = payload.get("ledger")
    agent = payload.get("agent", "claude-code")
    run_figures = _run_figures(figures) if figures else None
    chars = payload.get("chars", 0)
    cited = payload.get("cited_chars", 0)
    if run_figures is not None:
        chars = _same(run_figures.alloc_envelope, chars)
        cited = _same(run_figures.alloc_used, cited)
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
        status=_shared(payload["status"]),  # type: ignore[arg-type]
        reason=_shared(payload.get("reason")),
        calls=calls,
        chars=chars,
        cited_chars=cited,
        path_chars=_same(cited, payload.get("path_chars", 0)),
        files_returned=payload.get("files_returned", 0),
        files_used=payload.get("files_used", 0),
        cited_paths=tuple(map(_shared, payload.get("cited_paths", ()))),  # type: ignore[arg-type]
        has_answer=payload.get("has_answer", False),
        explore_results=payload.get("explore_results", 0),
        tool_calls=payload.get("tool_calls", 0),
        damage=tuple((_shared(d[0]), _shared(d[1])) for d in damage),  # type: ignore[misc]
        damage_counts=tuple(
            FileDamage(_shared(d[0]), _shared(d[1]), *d[2:6], _shared(d[6]))  # type: ignore[arg-type]
            for d in damage
        ),
        subagents=ref.subagents,
        figures=run_figures,
        agent=_shared(agent),  # type: ignore[arg-type]
        agent_sessions=tuple(payload.get("agent_sessions", ())),
        ledger=tuple(ledger) if ledger else None,  # type: ignore[arg-type]
    )


@dataclass(frozen=True, slots=True)
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
    its `log` is the corpus-relative name. A Codex or Inspect file gives the list of its
    `AgentSession`s (issue 15).

    Raises:
        TranscriptError: The session cannot be read.
    """
    from evalkit.session import read_session_file

    root = os.fspath(root)
    first = os.path.join(root, ref.segments[0])
    fmt = ref.format
    if fmt == HARBOR_NO_TRANSCRIPT:
        raise TranscriptError(ref.log, "a harbor trial without a transcript: nothing to read")
    if fmt is None and ref.layout != "interactive" and len(ref.segments) == 1:
        fmt = detect_format(first)
    if fmt not in (None, "claude-code"):
        from evalkit.corpus.agents import read_agent_sessions

        return read_agent_sessions(first, format=fmt, root=root)
    paths = [os.path.join(root, s) for s in ref.segments]
    session, interactive = _read_claude_code(paths, ref.log, ref.layout == "interactive", None)
    if interactive:
        return read_session_file(os.path.join(root, ref.log), log=ref.log)
    return session
