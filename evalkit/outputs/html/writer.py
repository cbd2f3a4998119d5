"""Writing the report's folder: every file of a report goes through `SiteWriter.write`.

A small stand-in for the shared safe folder writer (issue 21), with the same promises, so that
switching to it touches this module only:

* `OUT` must be missing, empty, or a previous report: a folder holding `MARKER`
  (`evalkit-report.json`, the names and SHA-256 digests of the files it wrote). Anything else is
  refused with one line naming the first file that is not the report's.
* A file a previous report wrote is replaced only if it still holds what was written (its
  digest); a file changed since, or one the marker does not name, is never touched.
* Nothing is written through a symlink: `OUT` itself, every folder on the way and every
  target must be a real folder or file (`O_NOFOLLOW` on open).
* Files of the previous report that this one does not write again are removed at `close`, so
  the folder always holds one report.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path, PurePosixPath

from evalkit.errors import UsageError

__all__ = ["MARKER", "SiteWriter"]

MARKER = "evalkit-report.json"
_KIND = "evalkit report"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class SiteWriter:
    """The report's folder, written one file at a time (see the module docstring)."""

    def __init__(self, out: str | os.PathLike[str], option: str = "--to") -> None:
        """`option` names the folder in refusals (`--to OUT: ...`; `""` for none)."""
        self.out = Path(out)
        self.name = f"{option} {self.out}" if option else str(self.out)
        self.written: dict[str, str] = {}
        self.previous: dict[str, str] = {}
        self._open_out()

    def _refuse(self, rel: str, why: str) -> UsageError:
        shown = os.path.join(os.fspath(self.out), *PurePosixPath(rel).parts) if rel else self.out
        return UsageError(f"{self.name}: {why}: {shown}")

    def _open_out(self) -> None:
        try:
            st = os.lstat(self.out)
        except FileNotFoundError:
            try:
                os.makedirs(self.out)
            except OSError as exc:
                raise UsageError(f"{self.name}: cannot create it ({exc.strerror})") from None
            return
        if stat.S_ISLNK(st.st_mode):
            raise self._refuse("", "is a symlink; the report is never written through one")
        if not stat.S_ISDIR(st.st_mode):
            raise self._refuse("", "is not a folder")
        entries = sorted(os.listdir(self.out))
        if not entries:
            return
        if MARKER not in entries:
            raise self._refuse(
                entries[0], "holds files evalkit did not write (use an empty or new folder)"
            )
        self.previous = self._read_marker()
        for rel in self._files():
            if rel == MARKER:
                continue
            if rel not in self.previous:
                raise self._refuse(rel, "holds a file the previous report did not write")

    def _read_marker(self) -> dict[str, str]:
        path = self.out / MARKER
        try:
            if os.path.islink(path):
                raise ValueError
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("kind") != _KIND or not isinstance(doc.get("files"), dict):
                raise ValueError
            return {str(k): str(v) for k, v in doc["files"].items()}
        except (OSError, ValueError, AttributeError):
            raise self._refuse(MARKER, "is not a report record evalkit wrote") from None

    def _files(self) -> list[str]:
        """Every file under `OUT` as a `/` path; a symlink anywhere is refused."""
        out = []
        for top, dirs, files in os.walk(self.out):
            for name in sorted(dirs + files):
                full = os.path.join(top, name)
                rel = Path(full).relative_to(self.out).as_posix()
                if os.path.islink(full):
                    raise self._refuse(rel, "is a symlink; the report is never written through one")
                if name in files:
                    out.append(rel)
        return sorted(out)

    def _check_rel(self, rel: str) -> PurePosixPath:
        p = PurePosixPath(rel)
        if p.is_absolute() or not p.parts or any(part in ("", ".", "..") for part in p.parts):
            raise ValueError(f"not a report file name: {rel!r}")
        return p

    def write(self, rel: str, data: bytes | str) -> None:
        """Write the report file `rel` (a `/` path under `OUT`). The one place a report file is
        written."""
        p = self._check_rel(rel)
        if rel == MARKER:
            raise ValueError("the marker is written by close()")
        raw = data.encode("utf-8") if isinstance(data, str) else data
        folder = self.out
        for part in p.parts[:-1]:
            folder = folder / part
            try:
                st = os.lstat(folder)
            except FileNotFoundError:
                os.mkdir(folder)
                continue
            if not stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode):
                raise self._refuse(folder.relative_to(self.out).as_posix(), "is not a folder")
        target = self.out.joinpath(*p.parts)
        if os.path.lexists(target):
            if os.path.islink(target) or not os.path.isfile(target):
                raise self._refuse(rel, "is not a regular file; the report does not replace it")
            expected = self.previous.get(rel)
            if rel not in self.written and (
                expected is None or _digest(target.read_bytes()) != expected
            ):
                raise self._refuse(rel, "was changed since evalkit wrote it; not replaced")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        self.written[rel] = _digest(raw)

    def close(self) -> list[str]:
        """Remove what the previous report wrote and this one did not, write the marker, and
        return the files written (sorted)."""
        for rel, digest in self.previous.items():
            if rel in self.written:
                continue
            target = self.out.joinpath(*self._check_rel(rel).parts)
            if os.path.isfile(target) and not os.path.islink(target):
                if _digest(target.read_bytes()) == digest:
                    target.unlink()
        for top, dirs, _ in os.walk(self.out, topdown=False):
            for name in dirs:
                full = os.path.join(top, name)
                if not os.path.islink(full) and not os.listdir(full):
                    os.rmdir(full)
        doc = {"kind": _KIND, "files": dict(sorted(self.written.items()))}
        marker = self.out / MARKER
        if os.path.islink(marker):
            raise self._refuse(MARKER, "is a symlink; the report is never written through one")
        marker.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        return sorted(self.written)
