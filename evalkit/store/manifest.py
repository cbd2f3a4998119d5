"""What a stored session was computed from: its files, their state, the digest of their bytes.

The store (`evalkit.store.shards`) keeps a session's `FileManifest` beside its row and decides
"unchanged" from `file_state` alone; `session_files` says which files a session's numbers
depend on. A session is anything with `segments` and `subagents` (paths relative to the swept
directory): discovery's `SessionRef`, which this layer does not import.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "FileManifest",
    "FileState",
    "StoredSession",
    "file_state",
    "regular_file_digest",
    "session_files",
]


class StoredSession(Protocol):
    """What the store needs of a session: its log (the row's key) and its files."""

    log: str
    segments: tuple[str, ...]
    subagents: tuple[str, ...]


def session_files(ref: StoredSession) -> tuple[str, ...]:
    """Every file whose content a session's numbers depend on, relative to the swept directory.

    Its segments; for an interactive session also its subagent files and each one's
    `.meta.json` (which names the delegating call, §1.10 step 4) whether or not it exists.
    """
    metas = tuple(s[: -len(".jsonl")] + ".meta.json" for s in ref.subagents if s.endswith(".jsonl"))
    return ref.segments + ref.subagents + metas


FileState = tuple[int, int, int, int]  # size, mtime_ns, inode, ctime_ns; (-1, 0, 0, 0) = absent


def file_state(path: str) -> FileState | None:
    """What the store compares to decide "unchanged" without reading: None when the path
    exists but is not a regular file (or cannot be examined), which is never stored."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return (-1, 0, 0, 0)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def regular_file_digest(path: str) -> str | None:
    """`content_digest` of a regular file's bytes; "" when absent; None if unreadable."""
    from evalkit.formats.files import content_digest

    try:  # non-blocking: a FIFO is refused below instead of hanging the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return ""
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return content_digest(fh.read())
    except OSError:
        return None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class FileManifest:
    """What a session's payload was computed from: for each file (relative to the root) its
    state before the parse and the digest of the bytes read. `racy`: a file was modified so
    recently that its modification time cannot tell a later same-size edit apart."""

    files: tuple[str, ...]
    states: tuple[FileState, ...]
    digests: tuple[str, ...]
    racy: bool
