"""evalkit's compiled modules under its cache directory, and what `evalkit cache` says of them.

Python keeps a module's bytecode in `__pycache__` beside its source. Where it cannot (the package
directory is read-only, or `PYTHONDONTWRITEBYTECODE` is set), every `evalkit` command would
compile each of its modules again; `keep_bytecode` (called by `evalkit.cli.main`) keeps them in
`<cache dir>/bytecode/` instead (issue 26). What `evalkit cache` says of that folder, and its
pruning, is `evalkit.commands.cache_bytecode`: this module is read at every start, and compiled
at every start where bytecode cannot be kept, so it holds only the loader.
"""

from __future__ import annotations

import marshal
import os
import sys
from importlib.machinery import PathFinder, SourceFileLoader
from importlib.util import MAGIC_NUMBER
from typing import Any

__all__ = ["BYTECODE_SUBDIR", "keep_bytecode", "pyc_path"]

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


def header_of(st: os.stat_result) -> bytes:
    """The 16 bytes a bytecode file of a source with state `st` starts with."""
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
        header = header_of(st)
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
