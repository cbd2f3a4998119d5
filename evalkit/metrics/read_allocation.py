"""File-attributed read allocation: evalkit's own metric, not the reference harness's.

    read_allocation_efficiency = chars of file reads the final answer cites / chars of file reads

The reference's explore allocation (spec §3) exists only where an explore tool returns codegraph's
sectioned envelope, so a run without that tool has no allocation figure at all. This extension
gives every arm one on a common axis: every tool call whose input names one file (`Read`'s
`file_path`, or an input field a tool profile declares, such as `sg_read_file`'s `path`) charges
the chars of its result to that file; a file counts as cited when the final answer cites its path
through the path channel of §3.3 (path tokens, absolute paths, bare basenames with an extension
that was read; `same_path` of §3.4). Symbols are not a channel here: a plain file read has no
section header listing definitions.

Results of the retrieval families (tool under test, read, search, bash) whose call names no one
file are reported beside it as `unattributed_chars`, never mixed in. Error results are not
charged. Like explore allocation it is relative (compare arms on the same tasks) and uncited is
not unused: an agent can rely on a file without naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.ecma import js_trim
from evalkit.formats.claude_code.index import ABSENT, SessionIndex, index_events
from evalkit.formats.claude_code.transcripts import family
from evalkit.formats.frozen import quick_init
from evalkit.formats.profiles import CODEGRAPH, ToolProfile
from evalkit.metrics.allocation import PathSet, answer_citations

__all__ = ["ReadFile", "ReadAllocation", "compute_read_allocation", "pooled_read_allocation"]

_RETRIEVAL_OTHER = "other"  # the family that is not retrieval (edits, todos, delegation, …)


@quick_init
@dataclass(frozen=True)
class ReadFile:
    """One file read in the session.

    Attributes:
        path: The file as the call's input named it.
        chars: Σ result chars charged to it (UTF-16 units).
        reads: Non-error results charged to it.
        cited: The final answer cites its path (§3.3 path channel).
    """

    path: str
    chars: int
    reads: int
    cited: bool


@quick_init
@dataclass(frozen=True)
class ReadAllocation:
    """File-attributed read allocation of one session (evalkit's own metric).

    Attributes:
        files: Every file read, largest first (ties keep first-read order).
        attributed_chars: Σ chars charged to a file.
        cited_chars: Σ chars charged to files the answer cites.
        unattributed_chars: Σ chars of retrieval results whose call names no one file.
        has_answer: The final answer is non-empty after trimming.
    """

    files: tuple[ReadFile, ...]
    attributed_chars: int
    cited_chars: int
    unattributed_chars: int
    has_answer: bool

    @property
    def efficiency(self) -> float | None:
        """`cited_chars / attributed_chars`; None when nothing could be attributed to a file."""
        return self.cited_chars / self.attributed_chars if self.attributed_chars else None

    @property
    def files_read(self) -> int:
        return len(self.files)

    @property
    def files_cited(self) -> int:
        return sum(1 for f in self.files if f.cited)

    def to_dict(self) -> dict[str, Any]:
        return {
            "read_allocation_efficiency": self.efficiency,
            "attributed_chars": self.attributed_chars,
            "cited_chars": self.cited_chars,
            "unattributed_chars": self.unattributed_chars,
            "files_read": self.files_read,
            "files_cited": self.files_cited,
        }


def _extensions(paths: Sequence[str]) -> frozenset[str]:
    # The rule of §3.2 step 2 (quirk 4: the text after the last dot anywhere in the path).
    out = set()
    for p in paths:
        dot = p.rfind(".")
        if dot > 0:
            out.add(p[dot + 1 :].lower())
    return frozenset(out)


def compute_read_allocation(
    events: Sequence[dict[str, Any]],
    answer_text: str | None,
    *,
    profile: ToolProfile = CODEGRAPH,
    path: str = "(transcript)",
    index: SessionIndex | None = None,
) -> ReadAllocation:
    """Charge every file-naming call's result chars to its file; see the module docstring.

    Args:
        events: Every event of the session (all threads and segments), in stream order.
        answer_text: The final answer (§1.7).
        profile: Declares which tools name a file, and in which input field.
        path: Named in errors.
        index: `index_events(events)` when the caller built it already (the session does).
    """
    if index is None:
        index = index_events(events, path=path)
    per_file: dict[str, list[int]] = {}
    unattributed = 0
    charged: dict[int, tuple[str, str | None]] = {}  # a use (by identity) -> (family, file)
    for r in index.results:
        if r.is_error:
            continue
        use = r.use  # the use its id names when it arrives (the last one seen with that id)
        if use is None:
            fam, file = _RETRIEVAL_OTHER, None
        else:
            got = charged.get(id(use))
            if got is None:
                name = use.name
                if name is ABSENT:
                    name = None
                got = charged[id(use)] = (
                    # what `family` does for a name
                    profile.family(name)
                    if type(name) is str and name
                    else family(name or "", profile),
                    profile.file_of(name, use.input),
                )
            fam, file = got
        if r.error is not None:
            raise r.error
        chars = r.chars
        if file is not None:
            entry = per_file.setdefault(file, [0, 0])
            entry[0] += chars
            entry[1] += 1
        elif fam != _RETRIEVAL_OTHER:
            unattributed += chars
    cites = answer_citations(answer_text, _extensions(list(per_file)))
    cited = PathSet(cites.paths)
    files = [ReadFile(p, c, n, cited.has(p)) for p, (c, n) in per_file.items()]
    files.sort(key=lambda f: -f.chars)  # stable: ties keep first-read order
    return ReadAllocation(
        files=tuple(files),
        attributed_chars=sum(f.chars for f in files),
        cited_chars=sum(f.chars for f in files if f.cited),
        unattributed_chars=unattributed,
        has_answer=js_trim(answer_text or "") != "",
    )


def pooled_read_allocation(allocations: Sequence[ReadAllocation | None]) -> float | None:
    """Pooled over sessions: Σ cited chars / Σ attributed chars (None when nothing was read)."""
    cited = sum(a.cited_chars for a in allocations if a is not None)
    total = sum(a.attributed_chars for a in allocations if a is not None)
    return cited / total if total else None
