"""The compiled modules under the cache directory (`evalkit.commands.bytecode`), as `evalkit
cache` lists, prunes and clears them: what the folder holds, which files are stale (their source
changed or is gone, another Python wrote them, or their writer was interrupted), and removing
only evalkit's own files there, never following a symbolic link."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass

from evalkit.commands.bytecode import BYTECODE_SUBDIR, header_of

__all__ = ["BytecodeInfo", "bytecode_info", "remove_bytecode"]


@dataclass(frozen=True)
class BytecodeInfo:
    """What `<cache dir>/bytecode/` holds.

    Attributes:
        directory: The folder.
        files: Compiled modules (`*.pyc`) and temporary files of interrupted writes.
        size: Their bytes.
        stale: Those no start reads again: a temporary file, a module whose source is gone
            or changed since, or one another Python version wrote.
        stale_size: Their bytes.
        refused: True when the folder is a symbolic link or not a directory (never entered).
    """

    directory: str
    files: int = 0
    size: int = 0
    stale: int = 0
    stale_size: int = 0
    refused: bool = False


def _own_files(directory: str) -> list[tuple[str, os.stat_result, bool]]:
    """Every file of the folder evalkit writes there, by name (`*.pyc`, `*.pyc.<pid>.tmp`),
    with its state and whether it is stale; symbolic links are neither followed nor listed."""
    out = []
    tag = f".{sys.implementation.cache_tag}.pyc"
    for dirpath, dirnames, names in os.walk(directory, followlinks=False):
        for name in names:
            if not (name.endswith(".pyc") or (".pyc." in name and name.endswith(".tmp"))):
                continue
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            out.append((path, st, not name.endswith(tag) or not _current(directory, path, tag)))
        dirnames.sort()
    return out


def _current(directory: str, path: str, tag: str) -> bool:
    """Whether the source that `path` mirrors exists and is what the bytecode was made from."""
    rel = os.path.relpath(path, directory)
    source = os.sep + rel[: -len(tag)] + ".py"
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
        return head == header_of(os.stat(source))
    except OSError:
        return False


def bytecode_info(cache_dir: str | os.PathLike[str]) -> BytecodeInfo:
    """What `<cache_dir>/bytecode/` holds (an empty account when it does not exist)."""
    directory = os.path.join(os.fspath(cache_dir), BYTECODE_SUBDIR)
    try:
        st = os.lstat(directory)
    except OSError:
        return BytecodeInfo(directory)
    if not stat.S_ISDIR(st.st_mode):
        return BytecodeInfo(directory, refused=True)
    found = _own_files(directory)
    stale = [s for _, s, old in found if old]
    return BytecodeInfo(
        directory,
        files=len(found),
        size=sum(s.st_size for _, s, _ in found),
        stale=len(stale),
        stale_size=sum(s.st_size for s in stale),
    )


def remove_bytecode(
    cache_dir: str | os.PathLike[str], *, stale_only: bool, dry_run: bool = False
) -> tuple[int, int, list[str]]:
    """Remove the folder's stale files (`stale_only`, for prune) or all of evalkit's files in
    it (for clear), then the folders left empty: `(files, bytes, paths that failed)`. Nothing
    but evalkit's own file names is removed, and no symbolic link is followed."""
    info = bytecode_info(cache_dir)
    if info.refused or not info.files:
        return 0, 0, []
    files = size = 0
    failed: list[str] = []
    for path, st, old in _own_files(info.directory):
        if stale_only and not old:
            continue
        if not dry_run:
            try:
                os.unlink(path)
            except OSError:
                failed.append(path)
                continue
        files += 1
        size += st.st_size
    if not dry_run:
        for dirpath, _, _ in sorted(os.walk(info.directory, followlinks=False), reverse=True):
            try:
                os.rmdir(dirpath)  # only an empty folder goes
            except OSError:
                pass
    return files, size, failed
