"""The sweep's cache of analysed sessions: an unchanged corpus re-sweeps without re-parsing.

A cache entry is the JSON payload `analyse_session` returned for one session. Its key hashes
the **content** of every segment file (in order, with its name relative to the swept
directory) together with evalkit's version and a digest of evalkit's own source, so a changed
transcript, a new release or an edited parser each miss the cache. Modification times are never
trusted. The payload holds exactly what a fresh parse would return, so a cache hit cannot change
a number; a corrupt or unreadable entry is a miss, and a cache that cannot be written is ignored.

Location: `--cache-dir`, else `$XDG_CACHE_HOME/evalkit`, else `~/.cache/evalkit`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import evalkit
from evalkit.corpus.records import PAYLOAD_VERSION

__all__ = ["SweepCache", "default_cache_dir", "code_fingerprint"]

_SUBDIR = "sweep"


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/evalkit`, or `~/.cache/evalkit` when that is unset or not absolute."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "evalkit"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """evalkit's version plus a digest of every `.py` file of the package.

    The version alone would keep stale entries across edits made between releases.
    """
    pkg = Path(evalkit.__file__).resolve().parent
    h = hashlib.sha256(f"evalkit {evalkit.__version__} payload {PAYLOAD_VERSION}\n".encode())
    for path in sorted(pkg.rglob("*.py")):
        h.update(path.relative_to(pkg).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


class SweepCache:
    """Content-keyed payload store. `SweepCache(None)` is a disabled cache (every lookup misses).

    Args:
        directory: Where entries live (a `sweep/` subdirectory is used), or None to disable.
        fingerprint: Overrides `code_fingerprint()`; tests use it to simulate a new version.
    """

    def __init__(
        self, directory: str | os.PathLike[str] | None, *, fingerprint: str | None = None
    ) -> None:
        self.directory = Path(directory) / _SUBDIR if directory is not None else None
        self.fingerprint = fingerprint if fingerprint is not None else code_fingerprint()
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def key(self, root: str | os.PathLike[str], files: tuple[str, ...]) -> str | None:
        """The key of a session made of `files` (relative to `root`); None if one is unreadable.

        An unreadable or non-regular file is not cached (nor opened: a FIFO would block and a
        link to a device would never end); parsing it reports the crash with its reason.
        """
        if not self.enabled:
            return None
        h = hashlib.sha256(self.fingerprint.encode() + b"\0")
        for rel in files:
            path = os.path.join(root, rel)
            try:
                if not stat.S_ISREG(os.stat(path).st_mode):
                    return None
                with open(path, "rb") as fh:
                    digest = hashlib.file_digest(fh, "sha256").hexdigest()
            except OSError:
                return None
            h.update(rel.encode("utf-8", "surrogateescape") + b"\0" + digest.encode() + b"\0")
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str | None) -> dict[str, Any] | None:
        if key is None or not self.enabled:
            self.misses += 1
            return None
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            self.misses += 1
            return None
        if (
            not isinstance(entry, dict)
            or entry.get("key") != key
            or not isinstance(entry.get("payload"), dict)
        ):
            self.misses += 1
            return None
        self.hits += 1
        return entry["payload"]

    def put(self, key: str | None, payload: dict[str, Any]) -> None:
        if key is None or not self.enabled:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Write-then-rename so a concurrent sweep never reads half an entry.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        except OSError:
            return  # a read-only or full cache directory only costs speed
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"key": key, "payload": payload}, fh, separators=(",", ":"))
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
