"""evalkit's compiled modules under its cache directory, and what `evalkit cache` says of them.

Python keeps a module's bytecode in `__pycache__` beside its source. Where it cannot (the package
directory is read-only, or `PYTHONDONTWRITEBYTECODE` is set), every `evalkit` command would
compile each of its modules again; `keep_bytecode` (called by `evalkit.cli.main`) keeps them in
`<cache dir>/bytecode/` instead (issue 26). `bytecode_info` and `remove_bytecode` are that
folder's share of `evalkit cache`: what it holds, which files are stale (their source changed or
is gone, or another Python wrote them), and removing them.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
from dataclasses import dataclass
from importlib.machinery import PathFinder, SourceFileLoader
from importlib.util import MAGIC_NUMBER
from typing import Any

__all__ = ["BYTECODE_SUBDIR", "BytecodeInfo", "bytecode_info", "keep_bytecode", "remove_bytecode"]

BYTECODE_SUBDIR = "bytecode"


def pyc_path(root: str, source_path: str) -> str:
    """Where the bytecode of `source_path` is kept under `root`: the source's absolute path
    mirrored, as `PYTHONPYCACHEPREFIX` lays it out."""
    stem = os.path.splitext(os.path.basename(source_path))[0]
    return os.path.join(
        root,
        os.path.dirname(os.path.abspath(source_path)).lstrip(os.sep),
        f"{stem}.{sys.implementation.cache_tag}.pyc",
    )


def _header(st: os.stat_result) -> bytes:
    # The header Python writes (PEP 552, timestamp form): magic, flags 0, mtime, size.
    return (
        MAGIC_NUMBER
        + (0).to_bytes(4, "little")
        + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    )


def keep_bytecode(cache_dir: str | None = None) -> bool:
    """Keep evalkit's compiled modules under its cache directory when Python cannot keep them
    beside the package, so a command does not compile evalkit again at every start.

    Python writes a module's bytecode to `__pycache__` beside its source; where it cannot
    (`PYTHONDONTWRITEBYTECODE` is set, or the package's directory is read-only), every start
    compiles each of evalkit's modules from source, which costs more than a warm sweep. Then
    evalkit's own modules (and no other package's) are loaded through a loader that keeps
    their bytecode in `<cache dir>/bytecode/`, checked against the source's modification time
    and size as Python checks its own. Nothing changes when Python has a prefix already
    (`PYTHONPYCACHEPREFIX`) or can write beside the package.

    Args:
        cache_dir: The cache directory (default: `default_cache_dir()`).

    Returns:
        Whether the loader was installed.
    """
    import evalkit

    if sys.pycache_prefix is not None or any(isinstance(f, _BytecodeFinder) for f in sys.meta_path):
        return False
    package = os.path.dirname(os.path.abspath(evalkit.__file__))
    beside = os.path.join(package, "__pycache__")
    if not sys.dont_write_bytecode and os.access(
        beside if os.path.isdir(beside) else package, os.W_OK
    ):
        return False
    spec = sys.modules[__name__].__spec__
    if spec is not None and spec.cached and _fresh(spec.cached, spec.origin):
        return False  # bytecode written beside the package at install time is read as it is
    if cache_dir is None:
        from evalkit.store.keys import default_cache_dir

        cache_dir = str(default_cache_dir())
    sys.meta_path.insert(0, _BytecodeFinder(os.path.join(cache_dir, BYTECODE_SUBDIR)))
    return True


def _fresh(cached: str, source: str | None) -> bool:
    try:
        return source is not None and os.stat(cached).st_mtime >= os.stat(source).st_mtime
    except OSError:
        return False


class _BytecodeFinder:
    """Finds `evalkit.*` modules as Python's path finder does, loaded by `_BytecodeLoader`."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if not name.startswith("evalkit."):
            return None
        spec = PathFinder.find_spec(name, path)
        if spec is not None and type(spec.loader) is SourceFileLoader:
            spec.loader = _BytecodeLoader(spec.loader.name, spec.loader.path, self.root)
        return spec

    def invalidate_caches(self) -> None:
        pass


class _BytecodeLoader(SourceFileLoader):
    """A source loader whose bytecode lives under `root` (the source's absolute path mirrored,
    as `PYTHONPYCACHEPREFIX` lays it out), written even where Python itself would not write
    bytecode. A missing, damaged or outdated file is compiled again."""

    def __init__(self, fullname: str, path: str, root: str) -> None:
        super().__init__(fullname, path)
        self.root = root

    def get_code(self, fullname: str) -> Any:
        source_path = self.get_filename(fullname)
        st = os.stat(source_path)
        pyc = pyc_path(self.root, source_path)
        header = _header(st)
        try:
            with open(pyc, "rb") as fh:
                data = fh.read()
            if data[:16] == header:
                return marshal.loads(memoryview(data)[16:])
        except (OSError, ValueError, EOFError, TypeError):
            pass
        code = self.source_to_code(self.get_data(source_path), source_path)
        try:
            os.makedirs(os.path.dirname(pyc), exist_ok=True)
            tmp = f"{pyc}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(header + marshal.dumps(code))
            os.replace(tmp, pyc)  # whole or not at all, also with another evalkit starting
        except OSError:
            pass  # a cache that cannot be written: compiled each time, as before
        return code


# --- what the folder holds, for `evalkit cache` ---------------------------------------------------


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
        return head == _header(os.stat(source))
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
