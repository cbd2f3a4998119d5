"""Where evalkit's cache lives and what keys it: the cache directory, evalkit's code digest, the
reading limits, and a store directory's path.

These few functions are all a warm `evalkit sweep` needs to find its stored output
(`evalkit.store.snapshot`), so they import nothing of the readers, metrics or pyarrow;
`evalkit.store.shards` builds on them.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

import evalkit
from evalkit.formats.limits import LIMIT_VARS

__all__ = [
    "STORE_SUBDIR",
    "RACY_NS",
    "default_cache_dir",
    "code_fingerprint",
    "limits_suffix",
    "sweep_fingerprint",
    "store_directory",
]

STORE_SUBDIR = "corpus-store-v1"
# A file modified this close to when it was read could be modified again within the same
# timestamp tick: the store re-hashes such a session on its next lookup, and a sweep's stored
# output is not written (`evalkit.store.snapshot`).
RACY_NS = 2_000_000_000


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/evalkit`, or `~/.cache/evalkit` when that is unset or not absolute."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "evalkit"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """evalkit's version plus a digest of every `.py` file of the package.

    The version alone would keep stale entries across edits made between releases. The digest
    covers `store/rows.py`, so a new payload version (`rows.PAYLOAD_VERSION`) is a new
    digest too.
    """
    pkg = os.path.dirname(os.path.realpath(evalkit.__file__))
    h = hashlib.sha256(f"evalkit {evalkit.__version__}\n".encode())
    found = []  # (path parts relative to the package, path): sorted as `Path`s sort
    for dirpath, _, filenames in os.walk(pkg):
        rel = os.path.relpath(dirpath, pkg).replace(os.sep, "/")
        parts = () if rel == "." else tuple(rel.split("/"))
        found += [((*parts, n), os.path.join(dirpath, n)) for n in filenames if n.endswith(".py")]
    for parts, path in sorted(found):
        h.update("/".join(parts).encode() + b"\0")
        with open(path, "rb") as fh:
            h.update(fh.read() + b"\0")
    return h.hexdigest()


def limits_suffix(environ: os._Environ[str] | dict[str, str] | None = None) -> str:
    """What the reading limits set in the environment add to a store's fingerprint.

    A limit changes what a session's parse gives (a line or a session refused), so sessions
    read under other limits never share a store: `:limits:<digest>` of the variables' raw
    values when any is set, nothing when none is (the defaults).
    """
    env = os.environ if environ is None else environ
    raw = [env.get(var) or "" for var in LIMIT_VARS.values()]
    if not any(raw):
        return ""
    digest = hashlib.sha256("\0".join(raw).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f":limits:{digest}"


def store_fingerprint(fmt: str | None = None, profile: str | None = None) -> str:
    """The fingerprint of a store without its limits (`CorpusStore` adds them): the code
    digest, `:trials:DIGEST` when the sessions are read with a tool profile (the trial sweep,
    or `load_corpus(profile=…)`: its payloads hold the profile's figures), and `:format:NAME`
    when one reader is forced on every session (its payloads differ for the same files). The
    sweep and the corpus loader of the same options share the store (`shards`)."""
    fingerprint = code_fingerprint()
    if profile is not None:
        fingerprint += f":trials:{profile}"
    if fmt is not None:
        fingerprint += f":format:{fmt}"
    return fingerprint


def sweep_fingerprint(fmt: str | None = None) -> str:
    """The sweep's store fingerprint: `store_fingerprint` with the reference's rules."""
    return store_fingerprint(fmt)


def store_directory(
    cache_dir: str | os.PathLike[str], fingerprint: str, root: str | os.PathLike[str]
) -> Path:
    """The store directory of the swept directory `root` under a store `fingerprint` (the code
    digest and what else keys it, limits included): one per code digest and per resolved
    corpus path."""
    code = hashlib.sha256(fingerprint.encode()).hexdigest()
    where = hashlib.sha256(os.fsencode(os.path.realpath(os.fspath(root)))).hexdigest()
    return Path(cache_dir) / STORE_SUBDIR / code[:20] / where[:20]
