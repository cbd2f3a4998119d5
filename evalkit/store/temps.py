"""Temporary files in a store directory: locked while written, removed once their writer is gone.

Every file evalkit writes in a store directory is first written to a temporary file (`.tmp-` and
8 characters, then its suffix) renamed into place, so a reader never sees half a file. The
shards, their side indexes, the frame files, the record and the price table's answers are written
whole by `replace_file`, the snapshots streamed into a `temp_file`; `evalkit cache prune` and every sweep remove what interrupted writers left
(`remove_stale_temps`).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time

from evalkit.store.keys import RACY_NS

__all__ = [
    "TEMP_AGE_NS",
    "TEMP_FILE",
    "remove_stale_temps",
    "replace_file",
    "stale_temp",
    "temp_file",
]

TEMP_FILE = re.compile(r"^\.tmp-[a-z0-9_]{8}\.(?:parquet|json|out)\Z")


# --- temporary files: locked while written, removed once their writer is gone ------------------
# Every temporary file evalkit writes in a store directory (`TEMP_FILE`) is made by `temp_file`,
# which takes an exclusive lock on it for as long as the writer holds it open. A writer killed
# (`kill -9`) leaves its file behind, but the kernel releases its lock: a temporary file that
# can be locked, and that did not change in the last `RACY_NS` (the moment between its making
# and its locking, or its closing and its renaming), was left by an interrupted writer. Without
# file locks (not POSIX) only a file `TEMP_AGE_NS` old is taken to be one (issue 21).

TEMP_AGE_NS = 24 * 3600 * 10**9

try:
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - not POSIX
    _fcntl = None  # type: ignore[assignment]


def temp_file(directory: str | os.PathLike[str], suffix: str) -> tuple[int, str]:
    """`tempfile.mkstemp` in `directory` with evalkit's temporary name (`.tmp-` and 8
    characters, then `suffix`), locked by its writer until the returned descriptor is closed.

    Raises:
        OSError: The file cannot be made.
    """
    fd, name = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=suffix)
    if _fcntl is not None:
        with contextlib.suppress(OSError):  # a file system without locks: the age rule then
            _fcntl.flock(fd, _fcntl.LOCK_EX)  # a cleaner holds it a moment at most
    return fd, name


def replace_file(
    directory: str | os.PathLike[str], target: str | os.PathLike[str], data: bytes, suffix: str
) -> bool:
    """Write `data` as `target` (in `directory`) through a `temp_file` renamed into place, so a
    reader never sees half of it; whether it was written (a read-only or full directory only
    costs speed: nothing is left behind)."""
    try:
        fd, tmp = temp_file(directory, suffix)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def stale_temp(dir_fd: int, name: str, now_ns: int, *, unlink: bool = False) -> bool:
    """Whether `name` in the directory `dir_fd` is a temporary file an interrupted writer left
    (see above): a regular file (never a link), not locked by a live writer, not changed in
    the last `RACY_NS`. `unlink` removes it too, while its lock is held, so no writer can take
    it meanwhile. The name is not checked: the caller matched it to `TEMP_FILE`."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return False  # gone, a link, or unreadable: left alone
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return False
        if _fcntl is None:
            stale = now_ns - st.st_mtime_ns >= TEMP_AGE_NS
        else:
            try:
                _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # its writer is alive
            except OSError:
                stale = now_ns - st.st_mtime_ns >= TEMP_AGE_NS  # no locks here: by age
            else:
                stale = now_ns - st.st_mtime_ns >= RACY_NS
        if stale and unlink:
            try:
                same = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                if (same.st_dev, same.st_ino) != (st.st_dev, st.st_ino):
                    return False
                os.unlink(name, dir_fd=dir_fd)
            except OSError:
                return False
        return stale
    finally:
        os.close(fd)


def remove_stale_temps(directory: str | os.PathLike[str], now_ns: int | None = None) -> int:
    """Remove the temporary files interrupted writers left in one store directory (only names
    matching `TEMP_FILE`, only stale ones: `stale_temp`); how many were removed. Never raises:
    a directory that cannot be read is left as it is."""
    now = time.time_ns() if now_ns is None else now_ns
    try:
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return 0
    removed = 0
    try:
        for name in os.listdir(dir_fd):
            if TEMP_FILE.match(name) and stale_temp(dir_fd, name, now, unlink=True):
                removed += 1
    except OSError:
        pass
    finally:
        os.close(dir_fd)
    return removed
