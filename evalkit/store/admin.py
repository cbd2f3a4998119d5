"""The cache's life cycle: what evalkit keeps in its cache directory, and pruning or clearing it.

What evalkit writes under the cache directory (`store.default_cache_dir()` or `--cache-dir`):

    corpus-store-v1/<code digest[:20]>/<corpus digest[:20]>/    a store directory (`shards.py`)
        shard-<16 hex>-<32 hex>.parquet, shard-….index.json      the stored sessions
        store.json                                              what the store is for
        snapshot-<32 hex>.out                                   a sweep's stored output
                                                                (`snapshot.py`)
        plan-<32 hex>.out                                       a corpus load's plan
                                                                (`corpus/load.py`)
        prices-<32 hex>.json                                    the price table's answers
                                                                (`price_memo.py`)
        .tmp-<8 chars>.parquet / .json / .out                   a write in progress
    sweep/<key[:2]>/<key>.json  (key: 64 hex digits)             older evalkit's cache: one JSON
        .tmp-<8 chars>.json                                      file per session, never read now

A store directory is **current** when its code digest is this evalkit's (`code_fingerprint()`),
**stale** otherwise: no sweep of this evalkit reads it again. Its `store.json` names the swept
directory, so a store whose corpus no longer exists can be told apart; a store without a valid
record (written before records existed, or damaged) is shown as unknown, never an error.

Removing never reaches past what evalkit created (guide: nothing evalkit writes can replace or
delete what it did not create): only regular files whose names match the patterns above, inside
directories whose names match them, are removed; every directory is opened relative to its
parent without following a symbolic link (a symlinked directory is left and never entered, and
no symbolic link is removed); a directory is removed only once empty, so a foreign file keeps
the directories that hold it; nothing outside the cache directory is touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from evalkit.errors import UsageError
from evalkit.formats.detect import FORMATS
from evalkit.formats.profiles import PRESETS, preset
from evalkit.store.keys import store_fingerprint
from evalkit.store.shards import (
    _SHARD,
    _SUBDIR,
    RECORD,
    RECORD_VERSION,
    STORE_FILE,
    code_fingerprint,
    default_cache_dir,
    fingerprint_parts,
)
from evalkit.store.temps import TEMP_AGE_NS, TEMP_FILE, stale_temp

__all__ = [
    "StoreDir",
    "OlderEntries",
    "CacheInfo",
    "Removal",
    "cache_info",
    "prune_cache",
    "clear_cache",
    "prune_reason",
    "STORE_SUBDIR",
    "OLDER_SUBDIR",
    "TEMP_AGE_NS",
]

STORE_SUBDIR = _SUBDIR
OLDER_SUBDIR = "sweep"  # evalkit.corpus.cache.SweepCache, replaced by the corpus store

_HEX20 = re.compile(r"^[0-9a-f]{20}\Z")
_HEX2 = re.compile(r"^[0-9a-f]{2}\Z")
_ENTRY = re.compile(r"^([0-9a-f]{2})[0-9a-f]{62}\.json\Z")
_TEMP_JSON = re.compile(r"^\.tmp-[a-z0-9_]{8}\.json\Z")
_MAX_RECORD_BYTES = 64 * 1024

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOATIME = getattr(os, "O_NOATIME", 0)


# --- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoreDir:
    """One store directory.

    Attributes:
        path: Relative to the cache directory (`corpus-store-v1/<code>/<corpus>`).
        corpus: The swept directory, resolved, or None when the store has no valid record.
        corpus_given: The swept directory as the sweep was given it (None when unknown).
        kind: `sweep` (the reference's rules: the sweep's and the corpus loader's), `trials`
            (a tool profile's: the trial sweep's and the loader's with that profile), `frames`
            (an older evalkit's corpus loader's), or None.
        format: The reader forced on every session (`--format`), or None.
        version: The evalkit version that created it, or None when unknown.
        current: Made by this evalkit's code (a sweep of this evalkit reads it).
        corpus_present: Whether the swept directory exists; None when unknown.
        files: evalkit's files in it.
        size: Their total size in bytes.
        sessions: Distinct sessions held by its readable shards.
        last_used_ns: The latest access or modification time of its files (as the file system
            records them), or of the directory when it holds none.
        foreign: What it holds that evalkit did not write (relative paths), left alone.
    """

    path: str
    corpus: str | None
    corpus_given: str | None
    kind: str | None
    format: str | None
    version: str | None
    current: bool
    corpus_present: bool | None
    files: int
    size: int
    sessions: int
    last_used_ns: int | None
    foreign: tuple[str, ...] = ()


@dataclass(frozen=True)
class OlderEntries:
    """Older evalkit's per-session cache files (`sweep/<xx>/<key>.json`), read by no sweep now."""

    entries: int = 0
    files: int = 0
    size: int = 0
    last_used_ns: int | None = None
    foreign: tuple[str, ...] = ()


@dataclass(frozen=True)
class CacheInfo:
    """What evalkit keeps in a cache directory.

    Attributes:
        directory: The cache directory.
        exists: Whether it exists (a missing one is an empty cache).
        stores: Every store directory, ordered by corpus, kind and path.
        older: Older evalkit's per-session cache files.
        refused: evalkit's own subdirectory names that are not directories here (a symbolic
            link, a file): never entered.
        loose: What evalkit's subdirectories hold outside any store directory that evalkit did
            not write (relative paths), left alone.
    """

    directory: Path
    exists: bool
    stores: tuple[StoreDir, ...] = ()
    older: OlderEntries = OlderEntries()
    refused: tuple[str, ...] = ()
    loose: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return sum(s.size for s in self.stores) + self.older.size

    @property
    def files(self) -> int:
        return sum(s.files for s in self.stores) + self.older.files

    @property
    def foreign(self) -> tuple[str, ...]:
        found = [f for s in self.stores for f in s.foreign] + [*self.older.foreign, *self.loose]
        return tuple(sorted(found))


@dataclass(frozen=True)
class Removal:
    """What `prune_cache` or `clear_cache` removed (or, with `dry_run`, would remove).

    Attributes:
        directory: The cache directory.
        dry_run: Nothing was removed; the counts say what would be.
        stores: The store directories removed, each with why (`stale`: another evalkit's code;
            `missing`: its corpus no longer exists; `unknown`: no record and not this evalkit's;
            `clear`: everything goes).
        older_entries: Older per-session cache files removed.
        temp_files: Temporary files of interrupted writes removed.
        files: Every file removed.
        size: Their total size in bytes.
        left: What evalkit did not create and so left alone (relative paths).
        failed: Files that could not be removed, each `path: reason`.
    """

    directory: Path
    dry_run: bool
    stores: tuple[tuple[StoreDir, str], ...] = ()
    older_entries: int = 0
    temp_files: int = 0
    files: int = 0
    size: int = 0
    left: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()


# --- reading the directory tree without following a link ----------------------------------------


def _open_dir(name: str, dir_fd: int) -> int:
    """`name` inside `dir_fd` opened as a directory; OSError when it is a symbolic link (never
    followed), not a directory, or unreadable."""
    return os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=dir_fd)


def _entries(fd: int) -> list[tuple[str, os.stat_result]]:
    """The entries of an open directory with their own status (links not followed), by name."""
    out = []
    with os.scandir(fd) as it:
        for entry in it:
            with contextlib.suppress(OSError):  # vanished meanwhile
                out.append((entry.name, entry.stat(follow_symlinks=False)))
    return sorted(out, key=lambda e: e[0])


def _open_top(directory: Path) -> int | None:
    """The cache directory opened (None when it does not exist); a UsageError when it is not a
    directory or cannot be read. The path to it is the user's and may pass through links."""
    if not (os.open in os.supports_dir_fd and os.scandir in os.supports_fd and _DIRECTORY):
        raise UsageError("evalkit cache needs a system that opens directories by handle (POSIX)")
    try:
        return os.open(directory, os.O_RDONLY | _DIRECTORY)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise UsageError(f"cache directory {directory}: not a directory") from None
    except OSError as exc:
        raise UsageError(f"cache directory {directory}: cannot read ({exc.strerror})") from None


def _open_file(name: str, dir_fd: int) -> int | None:
    """`name` inside `dir_fd` opened for reading when it is a regular file, without following a
    link or (where the system allows) touching its access time, so that looking does not make a
    store look used; None otherwise."""
    for flags in (_NOATIME, 0):
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | flags, dir_fd=dir_fd)
        except PermissionError:
            continue  # O_NOATIME is only for the file's owner
        except OSError:
            return None
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return fd
        except OSError:
            pass
        os.close(fd)
        return None
    return None


def _read_small(name: str, dir_fd: int, limit: int) -> bytes | None:
    """A regular file's bytes (at most `limit`), or None."""
    fd = _open_file(name, dir_fd)
    if fd is None:
        return None
    try:
        data = os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= limit else None


def _shard_sessions(name: str, dir_fd: int) -> set[bytes]:
    """The session names a shard holds (its `session` column alone); none if unreadable."""
    fd = _open_file(name, dir_fd)
    if fd is None:
        return set()
    with os.fdopen(fd, "rb") as fh:
        try:
            import pyarrow.parquet as pq

            column = pq.ParquetFile(fh).read(columns=["session"]).column(0)
            return {v for v in column.to_pylist() if type(v) is bytes}
        except Exception:  # noqa: BLE001 — a shard that cannot be read holds no session we count
            return set()


# --- what each store directory is for -----------------------------------------------------------


def _digest20(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


@lru_cache(maxsize=1)
def _current_names() -> dict[str, tuple[str, str | None]]:
    """The code-digest directory names this evalkit writes (with no tool profile or a preset
    one), with their kind and forced format: how a store without a record is still known to be
    current. The fingerprints are those `keys.store_fingerprint` gives the sweep, the trial sweep
    and the corpus loader, which share them."""
    code = code_fingerprint()
    suffixes: dict[str, tuple[str, str | None]] = {}
    for profile in [None, *(preset(name).fingerprint() for name in PRESETS)]:
        kind = "sweep" if profile is None else "trials"
        for fmt in (None, *FORMATS):
            suffixes[store_fingerprint(fmt, profile)[len(code) :]] = (kind, fmt)
    return {_digest20((code + s).encode()): v for s, v in suffixes.items()}


def _record(dir_fd: int, code_name: str, where_name: str) -> dict[str, Any] | None:
    """The store's `store.json`, when it is one evalkit wrote for exactly this directory: its
    fingerprint and corpus hash to the directory's names. Anything else is no record."""
    data = _read_small(RECORD, dir_fd, _MAX_RECORD_BYTES)
    if data is None:
        return None
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if type(doc) is not dict or doc.get("record") != RECORD_VERSION:
        return None
    fingerprint, resolved = doc.get("fingerprint"), doc.get("corpus_resolved")
    if type(fingerprint) is not str or type(resolved) is not str:
        return None
    try:
        if _digest20(fingerprint.encode("utf-8", "surrogatepass")) != code_name:
            return None
        if _digest20(os.fsencode(resolved)) != where_name:
            return None
    except (UnicodeError, ValueError):
        return None
    given, version = doc.get("corpus"), doc.get("evalkit")
    return {
        "fingerprint": fingerprint,
        "corpus": resolved,
        "corpus_given": given if type(given) is str else None,
        "version": version if type(version) is str else None,
    }


def _corpus_present(path: str) -> bool | None:
    """True when the swept directory exists, False when it is gone, None when it cannot be told
    (a permission error: the store is then kept)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError):
        return None


def _store_file(name: str) -> bool:
    return bool(STORE_FILE.match(name))


@dataclass
class _Scan:
    """One store directory as found, before its siblings say what an unrecorded one is."""

    path: str
    code: str
    record: dict[str, Any] | None
    files: int = 0
    size: int = 0
    sessions: set[bytes] = field(default_factory=set)
    last_used_ns: int | None = None
    foreign: list[str] = field(default_factory=list)


def _scan_store(fd: int, rel: str, code: str, where: str, mtime_ns: int) -> _Scan:
    scan = _Scan(rel, code, _record(fd, code, where))
    shards = []
    for name, st in _entries(fd):
        if stat.S_ISREG(st.st_mode) and _store_file(name):
            scan.files += 1
            scan.size += st.st_size
            used = max(st.st_atime_ns, st.st_mtime_ns)
            scan.last_used_ns = used if scan.last_used_ns is None else max(scan.last_used_ns, used)
            if _SHARD.match(name):
                shards.append(name)
        else:
            scan.foreign.append(f"{rel}/{name}")
    for name in shards:  # after every status is taken: reading a shard may touch its times
        scan.sessions |= _shard_sessions(name, fd)
    if scan.last_used_ns is None:
        scan.last_used_ns = mtime_ns
    return scan


def _store_dir(scan: _Scan, sibling: dict[str, Any] | None) -> StoreDir:
    """A scanned store directory with what it is for: from its own record; else, for the
    version, from a record beside it under the same code digest; else from the names this
    evalkit writes."""
    rec = scan.record
    known = rec or sibling
    if known is not None:
        parts = fingerprint_parts(known["fingerprint"])
        current = parts["code"] == code_fingerprint()
        kind, fmt, version = parts["kind"], parts["format"], known["version"]
    elif scan.code in _current_names():
        current, version = True, None
        kind, fmt = _current_names()[scan.code]
    else:
        current, kind, fmt, version = False, None, None, None
    corpus = rec["corpus"] if rec else None
    return StoreDir(
        path=scan.path,
        corpus=corpus,
        corpus_given=rec["corpus_given"] if rec else None,
        kind=kind,
        format=fmt,
        version=version,
        current=current,
        corpus_present=None if corpus is None else _corpus_present(corpus),
        files=scan.files,
        size=scan.size,
        sessions=len(scan.sessions),
        last_used_ns=scan.last_used_ns,
        foreign=tuple(scan.foreign),
    )


def _scan_stores(top: int) -> tuple[list[StoreDir], list[str], list[str]]:
    """(store directories, foreign entries outside them, refused names)."""
    try:
        root = _open_dir(STORE_SUBDIR, top)
    except FileNotFoundError:
        return [], [], []
    except OSError:
        return [], [], [STORE_SUBDIR]
    stores: list[StoreDir] = []
    foreign: list[str] = []
    try:
        for code, st in _entries(root):
            rel = f"{STORE_SUBDIR}/{code}"
            if not (stat.S_ISDIR(st.st_mode) and _HEX20.match(code)):
                foreign.append(rel)
                continue
            try:
                code_fd = _open_dir(code, root)
            except OSError:
                foreign.append(rel)
                continue
            scans = []
            try:
                for where, st2 in _entries(code_fd):
                    wrel = f"{rel}/{where}"
                    if not (stat.S_ISDIR(st2.st_mode) and _HEX20.match(where)):
                        foreign.append(wrel)
                        continue
                    try:
                        where_fd = _open_dir(where, code_fd)
                    except OSError:
                        foreign.append(wrel)
                        continue
                    try:
                        scans.append(_scan_store(where_fd, wrel, code, where, st2.st_mtime_ns))
                    finally:
                        os.close(where_fd)
            finally:
                os.close(code_fd)
            sibling = next((s.record for s in scans if s.record is not None), None)
            for scan in scans:
                if scan.files == 0 and scan.foreign:
                    foreign += scan.foreign  # only what evalkit left alone: no store any more
                else:
                    stores.append(_store_dir(scan, sibling))
    finally:
        os.close(root)
    return stores, foreign, []


def _scan_older(top: int) -> tuple[OlderEntries, list[str]]:
    try:
        root = _open_dir(OLDER_SUBDIR, top)
    except FileNotFoundError:
        return OlderEntries(), []
    except OSError:
        return OlderEntries(), [OLDER_SUBDIR]
    entries = files = size = 0
    last: int | None = None
    foreign: list[str] = []
    try:
        for bucket, st in _entries(root):
            rel = f"{OLDER_SUBDIR}/{bucket}"
            if not (stat.S_ISDIR(st.st_mode) and _HEX2.match(bucket)):
                foreign.append(rel)
                continue
            try:
                fd = _open_dir(bucket, root)
            except OSError:
                foreign.append(rel)
                continue
            try:
                for name, est in _entries(fd):
                    if not (stat.S_ISREG(est.st_mode) and _older_file(name, bucket)):
                        foreign.append(f"{rel}/{name}")
                        continue
                    files += 1
                    entries += not _TEMP_JSON.match(name)
                    size += est.st_size
                    used = max(est.st_atime_ns, est.st_mtime_ns)
                    last = used if last is None else max(last, used)
            finally:
                os.close(fd)
    finally:
        os.close(root)
    return OlderEntries(entries, files, size, last, tuple(foreign)), []


def _older_file(name: str, bucket: str) -> bool:
    m = _ENTRY.match(name)
    return bool((m and m.group(1) == bucket) or _TEMP_JSON.match(name))


def _cache_dir(cache_dir: str | os.PathLike[str] | None) -> Path:
    return Path(cache_dir) if cache_dir is not None else default_cache_dir()


def cache_info(cache_dir: str | os.PathLike[str] | None = None) -> CacheInfo:
    """What evalkit keeps in `cache_dir` (default: the sweep's cache directory).

    Raises:
        UsageError: `cache_dir` exists but is not a directory, or cannot be read.
    """
    directory = _cache_dir(cache_dir)
    top = _open_top(directory)
    if top is None:
        return CacheInfo(directory, False)
    try:
        stores, foreign, refused = _scan_stores(top)
        older, refused_older = _scan_older(top)
    finally:
        os.close(top)
    stores.sort(key=lambda s: (s.corpus is None, s.corpus or "", s.kind or "", s.path))
    return CacheInfo(
        directory, True, tuple(stores), older, tuple(refused + refused_older), tuple(foreign)
    )


# --- removing -----------------------------------------------------------------------------------


@dataclass
class _Tally:
    act: bool
    now_ns: int
    files: int = 0
    size: int = 0
    entries: int = 0
    temps: int = 0
    left: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


# A rule says, for one level of evalkit's layout, which file names are evalkit's, which of those
# to remove (by name and status), and which subdirectories are evalkit's, with their rule. A file
# whose name is not evalkit's, and anything that is neither a regular file nor a directory (a
# symbolic link, a FIFO), is left and listed.
_FileRule = Callable[[int, str, os.stat_result], bool]  # (directory fd, name, status)


def _no_file(name: str) -> bool:
    return False


def _no_dir(name: str) -> _Rule | None:
    return None


@dataclass(frozen=True)
class _Rule:
    own: Callable[[str], bool]
    remove: _FileRule
    dirs: Callable[[str], _Rule | None] = _no_dir


def _clean(parent: int, name: str, rel: str, rule: _Rule, tally: _Tally) -> bool:
    """Remove evalkit's files from directory `name` (inside `parent`) by `rule`, then the
    directory itself once empty. True when it is (or, in a dry run, would be) removed."""
    try:
        fd = _open_dir(name, parent)
    except FileNotFoundError:
        return True
    except OSError:
        tally.left.append(rel)  # a symbolic link or not a directory: never entered
        return False
    empty = True
    try:
        for child, st in _entries(fd):
            crel = f"{rel}/{child}"
            sub = rule.dirs(child) if stat.S_ISDIR(st.st_mode) else None
            if sub is not None:
                empty = _clean(fd, child, crel, sub, tally) and empty
            elif not (stat.S_ISREG(st.st_mode) and rule.own(child)):
                tally.left.append(crel)  # not evalkit's
                empty = False
            elif not rule.remove(fd, child, st) or not _unlink(fd, child, crel, tally):
                empty = False  # evalkit's, kept (a current store's shard) or not removable
            else:
                tally.files += 1
                tally.size += st.st_size
                tally.entries += bool(_ENTRY.match(child))
    finally:
        os.close(fd)
    if not empty:
        return False
    if tally.act:
        try:
            os.rmdir(name, dir_fd=parent)
        except FileNotFoundError:
            pass
        except OSError:
            return False  # something was put there meanwhile: it stays, and so does the directory
    return True


def _unlink(fd: int, name: str, rel: str, tally: _Tally) -> bool:
    if not tally.act:
        return True
    try:
        os.unlink(name, dir_fd=fd)  # removes the name only: never what a link points to
    except FileNotFoundError:
        pass
    except OSError as exc:
        tally.failed.append(f"{rel}: {exc.strerror}")
        return False
    return True


def _any(fd: int, name: str, st: os.stat_result) -> bool:
    return True


def _old_temp(now_ns: int) -> _FileRule:
    """A temporary file an interrupted writer left: no live writer holds its lock (issue 21;
    `temps.stale_temp`), never a concurrent writer's file."""
    return lambda fd, name, st: bool(TEMP_FILE.match(name)) and stale_temp(fd, name, now_ns)


def _hex20(rule: _Rule) -> Callable[[str], _Rule | None]:
    return lambda name: rule if _HEX20.match(name) else None


def _bucket(name: str) -> _Rule | None:
    if not _HEX2.match(name):
        return None
    return _Rule(lambda n: _older_file(n, name), _any)


_STORE_ALL = _Rule(_store_file, _any)
_CODE_ALL = _Rule(_no_file, _any, _hex20(_STORE_ALL))
_STORES_ALL = _Rule(_no_file, _any, _hex20(_CODE_ALL))
_OLDER_ALL = _Rule(_no_file, _any, _bucket)


def prune_reason(s: StoreDir) -> str | None:
    """Why `prune_cache` removes a store directory (`stale`, `unknown`, `missing`), or None when
    it is kept: this evalkit's, of a corpus that exists (or cannot be told to be gone)."""
    if not s.current:
        return "stale" if s.version is not None or s.kind is not None else "unknown"
    if s.corpus_present is False:
        return "missing"
    return None


def _remove(
    cache_dir: str | os.PathLike[str] | None, *, dry_run: bool, everything: bool, now_ns: int
) -> Removal:
    info = cache_info(cache_dir)
    top = _open_top(info.directory) if info.exists else None
    if top is None:
        return Removal(info.directory, dry_run)
    tally = _Tally(act=not dry_run, now_ns=now_ns)
    try:
        if everything:
            _clean(top, STORE_SUBDIR, STORE_SUBDIR, _STORES_ALL, tally)
            removed = [(s, "clear") for s in info.stores]
        else:
            removed = _prune_stores(top, info, tally)
        _clean(top, OLDER_SUBDIR, OLDER_SUBDIR, _OLDER_ALL, tally)
    finally:
        os.close(top)
    return Removal(
        directory=info.directory,
        dry_run=dry_run,
        stores=tuple(removed),
        older_entries=tally.entries,
        temp_files=tally.temps,
        files=tally.files,
        size=tally.size,
        left=tuple(sorted({*tally.left, *info.loose, *info.refused})),
        failed=tuple(tally.failed),
    )


def _prune_stores(top: int, info: CacheInfo, tally: _Tally) -> list[tuple[StoreDir, str]]:
    """Remove the stale store directories and those of missing corpora (their files; each
    directory too once empty); in the others, only temporary files of interrupted writes; then
    code-digest directories left empty."""
    try:
        root = _open_dir(STORE_SUBDIR, top)
    except OSError:
        return []  # gone meanwhile, or refused (listed by the caller's info)
    removed = []
    emptied: dict[str, bool] = {}  # code directory → every store in it removed
    temps = _Rule(_store_file, _old_temp(tally.now_ns))
    try:
        for s in info.stores:
            _, code, where = s.path.split("/")
            try:
                code_fd = _open_dir(code, root)
            except OSError:
                continue  # gone meanwhile, or swapped for a link: not entered
            try:
                why = prune_reason(s)
                files = tally.files
                gone = _clean(code_fd, where, s.path, _STORE_ALL if why else temps, tally)
                if why:
                    removed.append((s, why))
                else:
                    tally.temps += tally.files - files
                emptied[code] = emptied.get(code, True) and gone and why is not None
            finally:
                os.close(code_fd)
        for code, empty in sorted(emptied.items()):
            if empty and tally.act:
                with contextlib.suppress(OSError):  # not empty (a foreign entry): it stays
                    os.rmdir(code, dir_fd=root)
    finally:
        os.close(root)
    return removed


def prune_cache(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    dry_run: bool = False,
    now_ns: int | None = None,
) -> Removal:
    """Remove what no sweep of this evalkit will read again: store directories made by another
    evalkit code version (or with no record and not this evalkit's), store directories of corpora
    that no longer exist, older evalkit's per-session cache files, and temporary files of writes
    interrupted (whose writer is gone: `temps.stale_temp`). A current store of an existing
    corpus is kept.

    Args:
        cache_dir: The cache directory (default: the sweep's).
        dry_run: Remove nothing; say what would be removed.
        now_ns: The time temporary files are aged against (default: now).

    Raises:
        UsageError: `cache_dir` exists but is not a directory, or cannot be read.
    """
    import time

    now = time.time_ns() if now_ns is None else now_ns
    return _remove(cache_dir, dry_run=dry_run, everything=False, now_ns=now)


def clear_cache(
    cache_dir: str | os.PathLike[str] | None = None, *, dry_run: bool = False
) -> Removal:
    """Remove everything evalkit created in the cache directory (its store directories and older
    per-session cache files); what it did not create stays, with the directories holding it.

    Raises:
        UsageError: `cache_dir` exists but is not a directory, or cannot be read.
    """
    return _remove(cache_dir, dry_run=dry_run, everything=True, now_ns=0)
