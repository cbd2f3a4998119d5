"""Writing a folder of output files: only regular files evalkit creates itself, inside it.

Every command that writes a folder (`evalkit export`, the HTML report) writes through
`OwnedFolder`, so the same rules hold for all of them (issue 21):

* nothing is followed: the folder is opened without following a symbolic link (OUT itself
  being one is refused), and every file in it is opened relative to that folder, created new
  (`O_CREAT | O_EXCL | O_NOFOLLOW`): a link in OUT, dangling or not, is never written through,
  so nothing outside OUT is ever created or changed;
* a file is replaced only when evalkit wrote it: the folder's marker (`.evalkit-export`) records
  the name and SHA-256 of every file written, and a file that is there already is replaced only
  when the marker records its name with exactly its digest (or records it as being written when
  a run was interrupted); a marker is never taken as proof for files it does not name;
* anything else (a link, a file of the user's, a file changed since evalkit wrote it, a marker
  that is a link or not evalkit's) is refused, before anything is written, with one line naming
  the file (`FolderRefused`, a `UsageError`: exit status 2).

Usage, for a writer that knows its file names up front (the check of every name comes first,
so a refused folder is left exactly as it was):

    with OwnedFolder.claim(out, ["report.html", "data.json"], what="evalkit report") as folder:
        folder.write_text("report.html", html)
        with folder.open("data.json") as fh:    # a binary file; its digest is recorded
            fh.write(data)
    folder.paths                                # the files written, in the order written

A name not given to `claim` is checked when it is opened. Names are plain file names (no
folder part): OUT holds files only. `commit` (or the end of the `with` block) records the
digests; `abort` (or an exception in the block) closes what is open and leaves the names it
was writing recorded as being written, so that the next run may replace them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from evalkit.errors import UsageError

__all__ = ["MARKER", "FolderRefused", "OwnedFolder"]

MARKER = ".evalkit-export"  # the marker's name: what the folder's writers recorded
_MARKER_KIND = "evalkit owned folder"
_MARKER_VERSION = 1
_MAX_MARKER_BYTES = 1 << 20
_CHUNK = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class FolderRefused(UsageError):
    """A file in the output folder is not one evalkit wrote there (the message names it)."""


def _check_name(name: str) -> None:
    if (
        not isinstance(name, str)
        or name in ("", ".", "..", MARKER)
        or "/" in name
        or os.sep in name
        or (os.altsep and os.altsep in name)
        or "\0" in name
        or name.startswith(MARKER + ".")
    ):
        raise UsageError(f"{name!r}: not a plain file name evalkit may write in its folder")


class OwnedFolder:
    """A folder being written (see the module docstring). Made by `claim`."""

    def __init__(self, out: Path, fd: int, marker: str, what: str, record: dict[str, Any]):
        self.out = out
        self._fd = fd
        self._marker = marker
        self.what = what
        self._record: dict[str, str | None] = record  # name → digest, None = being written
        self._previous: dict[str, str | None] = {}  # the record as this writer found it
        self._verified: dict[str, tuple[int, ...]] = {}  # name → its state when checked
        self._written: dict[str, str] = {}  # names written by this run → digest
        self._open: dict[str, tuple[_OwnedFile, Any]] = {}  # name → (descriptor, outer file)
        self.paths: list[Path] = []  # the files written, in the order written

    # --- claiming ------------------------------------------------------------------------------

    @classmethod
    def claim(
        cls,
        out: str | os.PathLike[str],
        names: Iterable[str] = (),
        *,
        what: str = "evalkit export",
        marker: str = MARKER,
    ) -> OwnedFolder:
        """Open (or create) the folder `out` for writing `names`, each checked now.

        Args:
            out: The folder; created (with its parents) when missing.
            names: The file names this writer will write (others are checked when opened).
            what: The writer, in words (`evalkit export`), recorded and named in refusals.
            marker: The marker's file name in `out`.

        Raises:
            FolderRefused: `out` is a symbolic link or not a folder, the marker is not
                evalkit's, or one of `names` is there and not a file evalkit recorded.
            UsageError: `out` cannot be created or opened, or a name is not a plain file name.
        """
        names = list(names)
        for name in names:
            _check_name(name)
        path = Path(out)
        shown = os.fspath(path)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            try:
                os.makedirs(path, exist_ok=True)
            except OSError as exc:
                raise UsageError(f"{shown}: cannot create ({exc.strerror})") from None
        except OSError as exc:
            raise UsageError(f"{shown}: cannot examine ({exc.strerror})") from None
        else:
            if stat.S_ISLNK(st.st_mode):
                raise FolderRefused(
                    f"{shown}: is a symbolic link; {what} writes only into a folder itself "
                    "(give the folder it points to)"
                )
            if not stat.S_ISDIR(st.st_mode):
                raise FolderRefused(f"{shown}: exists and is not a directory")
        try:
            fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
        except OSError as exc:
            raise UsageError(f"{shown}: cannot open ({exc.strerror})") from None
        folder = cls(path, fd, marker, what, {})  # it owns the descriptor from here on
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                raise FolderRefused(f"{shown}: exists and is not a directory")
            folder._record = folder._read_marker()
            folder._previous = dict(folder._record)
            for name in names:
                folder._check(name)
            if names:
                folder._save({**folder._record, **dict.fromkeys(names)})
        except BaseException:
            folder._close_folder()
            raise
        return folder

    def _where(self, name: str) -> str:
        return os.fspath(self.out / name)

    def _refuse(self, name: str, why: str) -> FolderRefused:
        return FolderRefused(
            f"{self._where(name)}: {why}; {self.what} writes only files it created itself "
            "(choose an empty or new directory, or remove the file)"
        )

    def _stat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise UsageError(f"{self._where(name)}: cannot examine ({exc.strerror})") from None

    def _read_marker(self) -> dict[str, str | None]:
        """The marker's record (name → digest or None); {} when there is no marker."""
        name = self._marker
        st = self._stat(name)
        if st is None:
            return {}
        if stat.S_ISLNK(st.st_mode):
            raise self._refuse(name, "a symbolic link, not evalkit's marker")
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_MARKER_BYTES:
            raise self._refuse(name, "not evalkit's marker")
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY, dir_fd=self._fd)
        except OSError as exc:
            raise self._refuse(name, f"cannot be read ({exc.strerror})") from None
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(_MAX_MARKER_BYTES + 1)
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return {}  # an older evalkit's marker (a line of text): it records no file
        files = doc.get("files") if isinstance(doc, dict) else None
        if doc.get("kind") != _MARKER_KIND or not isinstance(files, dict):  # type: ignore[union-attr]
            return {}
        return {
            k: v
            for k, v in files.items()
            if isinstance(k, str) and (v is None or isinstance(v, str))
        }

    def _check(self, name: str) -> None:
        """Refuse `name` unless it is absent or a regular file the marker records as written
        (with its digest) or as being written."""
        st = self._stat(name)
        if st is None:
            return
        if stat.S_ISLNK(st.st_mode):
            raise self._refuse(name, "a symbolic link, never written through")
        if not stat.S_ISREG(st.st_mode):
            raise self._refuse(name, "not a regular file")
        if name not in self._record:
            raise self._refuse(name, f"not written by {self.what} (its marker does not name it)")
        recorded = self._record[name]
        if recorded is not None and self._digest_of(name) != recorded:
            raise self._refuse(name, f"changed since {self.what} wrote it")
        self._verified[name] = _state(st)  # as checked: `open` replaces only this very file

    def _digest_of(self, name: str) -> str | None:
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY, dir_fd=self._fd)
        except OSError:
            return None
        h = hashlib.sha256()
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            while chunk := os.read(fd, _CHUNK):
                h.update(chunk)
        except OSError:
            return None
        finally:
            os.close(fd)
        return h.hexdigest()

    # --- writing -------------------------------------------------------------------------------

    def open(self, name: str) -> BinaryIO:
        """A new regular file `name` in the folder, for writing bytes; its digest is recorded
        when it is closed. A file evalkit recorded there is removed first (never a link's
        target); anything else there is refused.

        Raises:
            FolderRefused: `name` is there and not a file evalkit recorded writing.
            UsageError: The file cannot be written.
        """
        _check_name(name)
        if name in self._open or name in self._written:
            raise UsageError(f"{self._where(name)}: written twice by one {self.what}")
        if name not in self._record:
            self._check(name)
            self._save({**self._record, name: None})
        st = self._stat(name)
        if st is not None:
            if self._verified.get(name) != _state(st):  # not the file checked: raced in
                if stat.S_ISLNK(st.st_mode):
                    raise self._refuse(name, "a symbolic link, never written through")
                raise self._refuse(name, f"appeared or changed after {self.what} checked it")
            try:
                os.unlink(name, dir_fd=self._fd)  # the name only: never what a link points to
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise UsageError(f"{self._where(name)}: cannot replace ({exc.strerror})") from None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
        try:
            fd = os.open(name, flags, 0o666, dir_fd=self._fd)
        except FileExistsError:
            raise self._refuse(name, "appeared while it was being written") from None
        except OSError as exc:
            raise UsageError(f"{self._where(name)}: cannot write ({exc.strerror})") from None
        raw = _OwnedFile(fd, lambda digest: self._closed(name, digest))
        fh = io.BufferedWriter(raw, _CHUNK)
        self._open[name] = (raw, fh)
        return fh  # type: ignore[return-value]

    def open_text(self, name: str, *, newline: str | None = None) -> TextIO:
        """`open(name)` for UTF-8 text (`newline` as `open`'s)."""
        fh = io.TextIOWrapper(self.open(name), encoding="utf-8", newline=newline)  # type: ignore[arg-type]
        self._open[name] = (self._open[name][0], fh)
        return fh

    def write_bytes(self, name: str, data: bytes) -> Path:
        """Write the file `name` whole (`open`)."""
        with self.open(name) as fh:
            fh.write(data)
        return self.out / name

    def write_text(self, name: str, text: str) -> Path:
        """Write the file `name` whole as UTF-8 text (`open`)."""
        return self.write_bytes(name, text.encode("utf-8"))

    def _closed(self, name: str, digest: str) -> None:
        self._open.pop(name, None)
        self._written[name] = digest
        self.paths.append(self.out / name)

    # --- the marker ----------------------------------------------------------------------------

    def _save(self, record: dict[str, str | None]) -> None:
        """Write the marker (atomically: a new file renamed over it, inside the folder)."""
        doc = {
            "kind": _MARKER_KIND,
            "version": _MARKER_VERSION,
            "written_by": self.what,
            "note": "the files evalkit wrote in this folder, with their SHA-256 (null: being "
            "written); evalkit replaces no other file here",
            "files": dict(sorted(record.items())),
        }
        data = (json.dumps(doc, indent=1, ensure_ascii=True) + "\n").encode("ascii")
        tmp = f"{self._marker}.tmp-{secrets.token_hex(6)}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
        try:
            fd = os.open(tmp, flags, 0o666, dir_fd=self._fd)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                st = self._stat(self._marker)
                if st is not None and not stat.S_ISREG(st.st_mode):
                    raise self._refuse(self._marker, "not evalkit's marker")
                os.replace(tmp, self._marker, src_dir_fd=self._fd, dst_dir_fd=self._fd)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=self._fd)
                except OSError:
                    pass
                raise
        except OSError as exc:
            raise UsageError(f"{os.fspath(self.out)}: cannot write ({exc.strerror})") from None
        self._record = record

    def commit(self) -> list[Path]:
        """Close what is still open (its writes flushed) and record every file written, with
        its digest; the files written, in order."""
        for _, fh in list(self._open.values()):
            fh.close()
        if self._fd >= 0:
            record = dict(self._record)
            for name, digest in self._record.items():
                if digest is None and name not in self._written:  # claimed, not written
                    if self._previous.get(name) is not None:
                        record[name] = self._previous[name]  # still the file written before
                    elif self._stat(name) is None:
                        del record[name]
            record.update(self._written)
            try:
                self._save(record)
            finally:
                self._close_folder()
        return list(self.paths)

    def abort(self) -> None:
        """Close what is open without recording digests: the names being written stay recorded
        as such, so the next writer may replace them."""
        for raw, _ in list(self._open.values()):
            raw.discard()
        self._open.clear()
        self._close_folder()

    def _close_folder(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> OwnedFolder:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()

    def __del__(self) -> None:
        if getattr(self, "_fd", -1) >= 0:
            self.abort()


def _state(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class _OwnedFile(io.RawIOBase):
    """The descriptor of a file `OwnedFolder.open` created, hashing what is written."""

    def __init__(self, fd: int, done) -> None:
        super().__init__()
        self._fd = fd
        self._done = done
        self._hash = hashlib.sha256()
        self._pos = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        view = memoryview(data).cast("B")
        n = len(view)
        at = 0
        while at < n:
            at += os.write(self._fd, view[at:])
        self._hash.update(view)
        self._pos += n
        return n

    def tell(self) -> int:
        return self._pos

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        if self.closed:
            return
        try:
            os.close(self._fd)
        finally:
            super().close()
        self._done(self._hash.hexdigest())

    def discard(self) -> None:
        """Close without recording it."""
        if not self.closed:
            os.close(self._fd)
            super().close()
