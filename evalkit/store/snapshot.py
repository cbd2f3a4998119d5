"""A sweep's output stored against the state of its whole tree: a warm `evalkit sweep` that parses,
loads and computes nothing (issue 16).

The corpus store keeps each session's numbers, so a warm sweep reads no transcript; it still
discovers the sessions, loads every stored row and computes the tables. A *snapshot* keeps the
command's finished output instead, beside the store (`<store directory>/snapshot-<32 hex>.out`,
one per set of output options), with the state of every entry of the tree it was computed
from. A later sweep with the same options walks the tree once (`os.scandir` and `lstat`, no
file is opened) and, when every entry has exactly the recorded state, prints the stored output.

What the state covers, so that an equal state means an equal output:

* every directory and file name under the root, hidden directories and target copies included
  (discovery counts their files), symbolic links to directories as links (discovery does not
  follow them); each directory's modification and status-change times (the root's too), so an
  entry made and removed again while a sweep ran is a change;
* for every file its type, size, modification and status-change times in nanoseconds, inode and
  device; for a symbolic link also what it points to, followed (the sweep reads the target);
* a directory that cannot be listed, with its error.

The snapshot's name holds everything else the output depends on: evalkit's code digest and the
reading limits (through the store directory: `keys`), the Python version, the directory
as given and resolved, and every option that changes the output (`sweep_options`).

A snapshot is written only when no entry changed in the two seconds before the walk (as the
store treats a file modified within two seconds of being read: a second edit in the same clock
tick could keep the same times), and only after the whole output was produced. The status-change
time cannot be set by a user, so an edit after the walk always shows. A file outside the tree
that the output depends on (a trial sweep's profile or outcomes file) is keyed by its content;
its state is taken before that content is read, and the snapshot is not written unless the file
still has that state then and had not changed in the two seconds before. Like the store's side
index, a snapshot carries the SHA-256 of its own bytes: a damaged or cut file is a miss, never a
wrong output. `--verify` never reads one; `--no-cache` neither reads nor writes one.

A snapshot file: a first line naming it, a line of JSON (the tree's digest, the options, the
corpus), the bytes of each output part (the markdown file's text when `--markdown` was given,
then standard output's), a newline, and a last line of JSON with the parts' sizes and the
SHA-256 of everything before it and of those sizes.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import itertools
import json
import marshal
import operator
import os
import stat
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit.store.keys import RACY_NS

__all__ = [
    "TreeState",
    "tree_state",
    "file_digest",
    "file_state",
    "Snapshot",
    "Stored",
]

_MAGIC = b"evalkit sweep snapshot 1\n"
_NAME = operator.attrgetter("name")
_MAX_BYTES = 1 << 31  # a larger file is not one of ours
_HEAD_BYTES = 1 << 20  # the header line and the trailer line are within this of each end
_CHUNK = 1 << 18


class TreeState:
    """The state of every entry under a directory (see the module docstring).

    Attributes:
        digest: SHA-256 (hex) of every entry's name and state, in a fixed order.
        newest_ns: The latest modification or status-change time of any file (0 when none).
        entries: How many entries were seen.
    """

    __slots__ = ("digest", "newest_ns", "entries")

    def __init__(self, digest: str, newest_ns: int, entries: int) -> None:
        self.digest = digest
        self.newest_ns = newest_ns
        self.entries = entries


def tree_state(root: str) -> TreeState:
    """Walk `root` once and return the state of everything under it.

    Never raises for what is under the root: an entry that cannot be read is recorded with its
    error, as discovery reports it. Entries are taken in name order, so the digest does not
    depend on the order the file system lists them in.
    """
    # Each directory's entries are digested as they are listed (marshal version 2: bytes of
    # exactly these values, each list's bytes self-delimiting; later versions write a repeated
    # object as a reference to its first occurrence, so equal values could give other bytes),
    # so the walk holds one directory at a time. The Python version is in the key.
    digest = hashlib.sha256()
    items: list[Any] = []
    newest = 0
    n = 0
    isdir, islnk = stat.S_ISDIR, stat.S_ISLNK
    try:
        top = os.stat(root)
    except OSError as exc:
        items.append(("", "unstat", exc.errno))
    else:
        items.append(("", top.st_mode, top.st_mtime_ns, top.st_ctime_ns, top.st_ino, top.st_dev))
        newest = max(top.st_mtime_ns, top.st_ctime_ns)
    stack = [("", root)]
    while stack:
        digest.update(marshal.dumps(items, 2))
        items.clear()
        rel, path = stack.pop()
        try:
            with os.scandir(path) as it:
                listed = sorted(it, key=_NAME)
        except OSError as exc:
            items.append((rel, "unlisted", exc.errno))
            continue
        n += len(listed)
        items.append(rel)
        for entry in listed:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                items.append((entry.name, "unstat", exc.errno))
                continue
            mode = st.st_mode
            m, c = st.st_mtime_ns, st.st_ctime_ns
            if isdir(mode):
                # Its times too: an entry made and removed again while a sweep ran shows there.
                items.append((entry.name, mode, m, c, st.st_ino, st.st_dev))
                stack.append((f"{rel}/{entry.name}", entry.path))
                if m > newest or c > newest:
                    newest = m if m > c else c
                continue
            items.append((entry.name, mode, st.st_size, m, c, st.st_ino, st.st_dev))
            if m > newest or c > newest:
                newest = m if m > c else c
            if islnk(mode):
                try:
                    t = os.stat(entry.path)
                except OSError as exc:
                    items.append(("->", exc.errno))
                else:
                    m, c = t.st_mtime_ns, t.st_ctime_ns
                    items.append(("->", t.st_mode, t.st_size, m, c, t.st_ino, t.st_dev))
                    if m > newest or c > newest:
                        newest = m if m > c else c
    digest.update(marshal.dumps(items, 2))
    return TreeState(digest.hexdigest(), newest, n)


class Snapshot:
    """The stored output of one sweep command: read it (`read`), or write it (`writer`).

    Args:
        store_dir: The sweep's store directory (`keys.store_directory`).
        root: The swept directory.
        options: Everything but the tree the output depends on (JSON-able).
        inputs: `(path, file_state(path))` of each file outside the tree whose content is in
            `options` (a trial sweep's profile and outcomes files), the state taken first.
        fingerprint: The store directory's fingerprint, for its record (`store.json`).
        later: Leave the walk to `walk`, for a caller that has it made elsewhere (by a parser
            worker, while this process discovers the sessions). The walk must be started
            before the sweep reads a file; it may end later: `started_ns` is taken here, and
            an entry changed after it makes the snapshot `recent` (not written), so a file
            read before the walk reached it is never keyed by a state it did not have.
        kind: The file's name before its digest: `snapshot` (a sweep's output) or `plan` (a
            corpus load's plan, `evalkit.corpus.load`).
    """

    def __init__(
        self,
        store_dir: Path,
        root: str,
        options: dict[str, Any],
        inputs: Sequence[tuple[str | os.PathLike[str], tuple[int, ...] | None]] = (),
        fingerprint: str | None = None,
        *,
        later: bool = False,
        kind: str = "snapshot",
    ) -> None:
        self.options = {**options, "python": sys.version}
        self.root = root
        self.fingerprint = fingerprint
        text = json.dumps(self.options, sort_keys=True, ensure_ascii=True)
        self.path = store_dir / f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.out"
        self.started_ns = time.time_ns()
        # Files outside the tree whose content is in `options`, with their `file_state` taken
        # before that content was read: the sweep reads them again later, so they must keep
        # that state until the snapshot is written (`unchanged`).
        self.inputs = list(inputs)
        self._tree: TreeState | None = None
        self._job: Any = None  # the walk given to an executor
        if not later:
            self.walk()

    def walk(self, executor: Any = None) -> None:
        """Walk the tree now, or start the walk in `executor` (a `concurrent.futures`
        executor) and go on; `tree` waits for it."""
        if self._tree is not None or self._job is not None:
            return
        if executor is None:
            self._tree = tree_state(self.root)
        else:
            self._job = executor.submit(tree_state, self.root)

    @property
    def tree(self) -> TreeState:
        """The state of the tree (see `walk`). Raises what the walk in an executor raised
        (a worker that died): the caller then writes no snapshot."""
        if self._tree is None:
            if self._job is None:
                self.walk()
            else:
                self._tree = self._job.result()
                self._job = None
        assert self._tree is not None
        return self._tree

    def exists(self) -> bool:
        """Whether a file is there under this snapshot's name (its content unchecked: `read`)."""
        try:
            return stat.S_ISREG(os.lstat(self.path).st_mode)
        except OSError:
            return False

    # --- reading -------------------------------------------------------------------------------

    def read(self, *, tree_later: bool = False) -> Stored | None:
        """The stored output, when the snapshot is intact and of exactly this tree's state and
        these options; else None. Its bytes are checked against the digest a chunk at a time
        before any is given out, so reading holds at most a chunk, whatever the output's size.

        `tree_later`: check all but the tree's state now, without waiting for the walk, and
        leave that to `current(stored)`, which the caller must ask before it uses anything
        made from the output (a reader whose work overlaps a walk in another thread).
        """
        fd = _open_regular(self.path)
        if fd is None:
            return None
        if not tree_later:
            try:
                _ = self.tree
            except Exception:  # noqa: BLE001 — the walk failed (its worker died): no snapshot
                os.close(fd)
                return None
        stored = None
        try:
            stored = self._check(fd, tree_later)
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            stored = None
        finally:
            if stored is None:
                os.close(fd)
        return stored

    def walked(self) -> bool:
        """Whether the walk has ended (`tree` would not wait)."""
        return self._tree is not None or (self._job is not None and self._job.done())

    def current(self, stored: Stored) -> bool:
        """Whether `stored` (read with `tree_later`) is of this tree's state: waits for the walk;
        False when the walk failed."""
        try:
            return stored.tree == self.tree.digest
        except Exception:  # noqa: BLE001 — the walk failed (its worker died): no snapshot
            return False

    def _check(self, fd: int, tree_later: bool = False) -> Stored | None:
        size = os.fstat(fd).st_size
        head = os.pread(fd, min(size, _HEAD_BYTES), 0)
        head_end = head.find(b"\n", len(_MAGIC))
        tail_at = max(0, size - _HEAD_BYTES)
        tail = os.pread(fd, size - tail_at, tail_at)
        end = tail.rfind(b"\n", 0, len(tail) - 1)  # the newline before the trailer
        if not head.startswith(_MAGIC) or head_end < 0 or end < 0 or not tail.endswith(b"\n"):
            return None
        trailer = json.loads(tail[end + 1 :])
        end += tail_at
        if head_end >= end:
            return None
        header = json.loads(head[len(_MAGIC) : head_end])
        sizes = trailer["parts"]
        tree = header.get("tree")
        if header.get("options") != self.options or type(tree) is not str:
            return None
        if not tree_later and tree != self.tree.digest:
            return None
        if type(sizes) is not list or not sizes or any(type(n) is not int or n < 0 for n in sizes):
            return None
        if sum(sizes) != end - head_end - 1:
            return None
        digest = hashlib.sha256()
        at = 0
        while at <= end:  # everything before the trailer, its newline included
            chunk = os.pread(fd, min(_CHUNK, end + 1 - at), at)
            if not chunk:
                return None
            digest.update(chunk)
            at += len(chunk)
        digest.update(json.dumps(sizes).encode())
        if digest.hexdigest() != trailer["sha256"]:
            return None
        return Stored(fd, head_end + 1, sizes, tree)

    # --- writing -------------------------------------------------------------------------------

    @property
    def recent(self) -> bool:
        """An entry changed within two seconds of the walk: its times cannot be trusted yet."""
        newest = max([self.tree.newest_ns, *(max(st[1:3]) for _, st in self.inputs if st)])
        return newest >= self.started_ns - RACY_NS

    def unchanged(self) -> bool:
        """Whether every input file outside the tree still has the state it had when its
        content was keyed: an edit while the sweep ran (which the sweep may have read) would
        else be stored under the content from before it."""
        return all(file_state(p) == st for p, st in self.inputs)

    def writer(self) -> _Writer | None:
        """A writer of this snapshot, or None when none may or can be written (a recent change,
        no usable store directory)."""
        try:
            if self.recent:
                return None
        except Exception:  # noqa: BLE001 — the walk failed (its worker died): no snapshot
            return None
        return _Writer(self)


class _Writer:
    """Writes a snapshot as its parts are produced, to a temporary file renamed into place by
    `commit` (nothing is left by `discard` or by a failure)."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self._fh = None
        self._tmp: str | None = None
        self._sizes: list[int] = []
        self._hash = hashlib.sha256()
        self._current = 0
        try:
            from evalkit.store.temps import remove_stale_temps, temp_file

            snap.path.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_temps(snap.path.parent)  # what an interrupted sweep left (issue 21)
            fd, self._tmp = temp_file(snap.path.parent, ".out")  # locked while it is written
            self._fh = os.fdopen(fd, "wb")
            header = {"tree": snap.tree.digest, "options": snap.options, "corpus": snap.root}
            self._raw(_MAGIC + json.dumps(header, ensure_ascii=True).encode() + b"\n")
        except OSError:
            self.discard()

    def _raw(self, data: bytes) -> None:
        if self._fh is not None:
            try:
                self._fh.write(data)
            except OSError:
                self.discard()
                return
            self._hash.update(data)

    def write(self, text: str) -> None:
        """Add `text` to the current part."""
        data = text.encode("utf-8", "surrogatepass")
        self._current += len(data)
        self._raw(data)

    def write_bytes(self, data: bytes | memoryview) -> None:
        """Add `data` (any contiguous buffer) to the current part."""
        self._current += memoryview(data).nbytes
        self._raw(data)

    def end_part(self) -> None:
        self._sizes.append(self._current)
        self._current = 0

    def commit(self) -> None:
        """End the last part and put the snapshot in place (a failure only costs the next
        sweep its speed)."""
        if self._fh is None:
            return
        if not self.snap.unchanged():
            self.discard()
            return
        if self._current or not self._sizes:
            self.end_part()
        self._raw(b"\n")  # the trailer is a line of its own, whatever the last part ends with
        if self._fh is None:
            return
        # The digest covers everything before the trailer and the part sizes the trailer gives.
        self._hash.update(json.dumps(self._sizes).encode())
        trailer = {"parts": self._sizes, "sha256": self._hash.hexdigest()}
        try:
            self._fh.write(json.dumps(trailer).encode() + b"\n")
            self._fh.close()
            self._fh = None
            os.replace(self._tmp, self.snap.path)  # type: ignore[arg-type]
            self._tmp = None
        except OSError:
            self.discard()
            return
        if self.snap.fingerprint is not None:
            # What the directory is for, for `evalkit cache`, when no shard wrote it (a trial
            # sweep's output, a corpus with no session). The sweep has imported the store.
            from evalkit.store.shards import write_record

            write_record(self.snap.path.parent, self.snap.fingerprint, self.snap.root)

    def discard(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)
            self._tmp = None


def file_state(path: str | os.PathLike[str]) -> tuple[int, ...] | None:
    """Size, modification and status-change times, inode and device of `path` (followed), or
    None when it cannot be stat'ed: taken before `file_digest` reads it, and compared again
    before a snapshot keyed by that digest is written (`Snapshot.unchanged`)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


class Stored:
    """A checked snapshot's output parts, read from its file on demand (close it, or use it in a
    `with` block). `tree`: the digest of the tree's state it was stored for."""

    def __init__(self, fd: int, start: int, sizes: list[int], tree: str = "") -> None:
        self._fd = fd
        self.sizes = sizes
        self.tree = tree
        self._starts = list(itertools.accumulate([start, *sizes[:-1]]))

    def text(self, i: int) -> str:
        """Part `i`, whole."""
        return os.pread(self._fd, self.sizes[i], self._starts[i]).decode("utf-8", "surrogatepass")

    def data(self, i: int) -> bytes:
        """Part `i`, whole, as bytes."""
        return os.pread(self._fd, self.sizes[i], self._starts[i])

    def copy(self, i: int, out: Any) -> None:
        """Write part `i` to the text stream `out` a chunk at a time."""
        decode = codecs.getincrementaldecoder("utf-8")("surrogatepass").decode
        at, left = self._starts[i], self.sizes[i]
        while left > 0:
            chunk = os.pread(self._fd, min(_CHUNK, left), at)
            if not chunk:
                raise OSError("the stored output ended early")
            at += len(chunk)
            left -= len(chunk)
            out.write(decode(chunk, final=left <= 0))

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Stored:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def file_digest(path: str | os.PathLike[str]) -> str | None:
    """SHA-256 of a regular file's bytes (a small input of the sweep: a profile, an outcomes
    table), or None when there is no such file or it cannot be read."""
    data = _read_regular(path, follow=True)
    return None if data is None else hashlib.sha256(data).hexdigest()


def _open_regular(path: str | os.PathLike[str], *, follow: bool = False) -> int | None:
    """A descriptor of `path` opened for reading when it is a regular file (never through a
    symbolic link unless `follow`) of at most 2 GB; None otherwise."""
    # O_NONBLOCK: a FIFO under that name is refused, never waited on.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_BYTES:
        os.close(fd)
        return None
    return fd


def _read_regular(path: str | os.PathLike[str], *, follow: bool = False) -> bytes | None:
    """The bytes of `path` when `_open_regular` opens it; None otherwise.

    The readers' bounded reading (`evalkit.formats.files`) is not imported for this: its module
    costs a warm sweep more than the whole rest of its start (it imports `dataclasses`)."""
    fd = _open_regular(path, follow=follow)
    if fd is None:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
