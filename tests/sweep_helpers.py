"""Small helpers that lay out corpus trees for the sweep tests (spec §7)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.builders import ASST, RESULT, USE, E, _result_event, alloc_text, lines, write_jsonl


def explore_session(
    files: list[tuple[str, str, int]] | None, answer: str | None, *, calls: int = 1
) -> list[dict]:
    """Events of one segment: `calls` explore calls each returning `files`, then the answer.

    `files` None gives a segment with no explore call at all.
    """
    groups: list = []
    if files is not None:
        for i in range(calls):
            groups += [
                ASST(10, f"m{i}", [USE(f"x{i}", E, {"query": "q"})]),
                _result_event(f"x{i}", alloc_text(files)),
            ]
    groups.append(RESULT(answer))
    return lines(*groups)


def put(root: Path, rel: str, events: list[dict] | None = None, *, text: str | None = None) -> Path:
    """Write `events` (or raw `text`) at `root/rel`, creating directories."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        path.write_text(text, encoding="utf-8")
        return path
    return write_jsonl(path, events if events is not None else explore_session(None, "done"))


def cited(root: Path, rel: str, cited_chars: int, uncited_chars: int, *, calls: int = 1) -> Path:
    """A session returning `lib/a.js` (cited by path) and `lib/b.js` (not cited)."""
    files = [("lib/a.js", "fa(function)", cited_chars), ("lib/b.js", "fb(function)", uncited_chars)]
    return put(root, rel, explore_session(files, "It is in `lib/a.js`.", calls=calls))


def aged(root, seconds=60):
    """Move every file's modification time into the past, so no row is stored as racy."""
    for path in root.rglob("*"):
        if path.is_file():
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9))
    return root


def stored_row(ledger: bytes) -> dict:
    """One row as the store writes it (a parsed session of one file), its ledger column given
    as JSON text: for tests of the side index."""
    return {
        "session": b"a.jsonl",
        "files": [b"a.jsonl"],
        "states": [[1, 2, 3, 4]],
        "digests": [b"0" * 64],
        "racy": False,
        "p_status": b"parsed",
        "p_damage": b"[]",
        "p_ledger": ledger,
    }
