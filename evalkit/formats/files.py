"""Reading a log file's bytes, bounded, for every format's reader (issue 11).

Only regular files are opened; a `*.gz` name is gunzipped with a bound on the decompressed size;
a session's bytes are bounded too, and the digest of exactly the bytes read is returned so that
the corpus store keys a file on what was parsed. Every reader (Claude Code, Codex, Inspect's
JSON lines) reads through `read_file_bytes`.
"""

from __future__ import annotations

import errno
import hashlib
import math
import os
import stat
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import BinaryIO

from evalkit.errors import TranscriptError
from evalkit.formats.frozen import quick_init
from evalkit.formats.limits import LIMIT_VARS

__all__ = [
    "OVER_BUDGET",
    "LIMIT_VARS",
    "ReadLimits",
    "content_digest",
    "read_at_most",
    "read_file_bytes",
]

_MB = 1024 * 1024
OVER_BUDGET = "session over the memory budget (see EVALKIT_MAX_SESSION_MB)"


@quick_init
@dataclass(frozen=True)
class ReadLimits:
    """Bounds on what reading one transcript may cost (issue 11): past them a file or line is
    skipped with a reason instead of exhausting memory.

    Defaults are far above any real transcript; each is settable through the environment
    (in MB), so the sweep's worker processes see the same limits.

    Attributes:
        decompressed_bytes: Per `.gz` file, its decompressed size (`EVALKIT_MAX_DECOMPRESSED_MB`,
            default 512). Past it the file is refused: `decompressed size over limit`.
        line_bytes: Per line (`EVALKIT_MAX_LINE_MB`, default 64). A longer line is skipped and
            counted, like a malformed one.
        session_bytes: Per session, all segments' bytes together (`EVALKIT_MAX_SESSION_MB`,
            default 1024). Past it the session is refused: `session over the memory budget`.
    """

    decompressed_bytes: int = 512 * _MB
    line_bytes: int = 64 * _MB
    session_bytes: int = 1024 * _MB

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ReadLimits:
        env = os.environ if environ is None else environ
        values = {}
        for field_name, var in LIMIT_VARS.items():
            raw = env.get(var)
            if raw:
                try:
                    mb = float(raw)
                except ValueError:
                    raise TranscriptError(var, f"must be a number of MB, not {raw!r}") from None
                if not mb > 0 or mb == math.inf:
                    raise TranscriptError(var, f"must be a positive number of MB, not {raw!r}")
                values[field_name] = int(mb * _MB)
        return cls(**values)


def _check_regular_file(path: str, st: os.stat_result | None = None) -> None:
    if st is not None:  # the caller's own `os.stat(path)`, taken just before
        _check_mode(path, st)
        return
    try:
        st = os.stat(path)
    except FileNotFoundError:
        why = "broken symbolic link" if os.path.islink(path) else "no such file"
        raise TranscriptError(path, why) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TranscriptError(path, "symbolic link loop") from None
        raise TranscriptError(path, f"cannot read: {exc.strerror or exc}") from None
    _check_mode(path, st)


def _check_mode(path: str, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise TranscriptError(path, "is a directory, not a transcript file")
    if not stat.S_ISREG(st.st_mode):
        raise TranscriptError(path, "not a regular file")


def content_digest(data: bytes) -> str:
    """The digest the corpus store keys a file on: SHA-256 of its bytes, in hex."""
    return hashlib.sha256(data).hexdigest()


def read_at_most(fh: BinaryIO, limit: int) -> bytes:
    """`fh.read(limit)`, without asking for a buffer of `limit` bytes up front: the file's
    size (plus one byte, to see growth) is read first, and only a file that grew meanwhile
    is read on, still bounded by `limit`."""
    try:
        size = os.fstat(fh.fileno()).st_size
    except OSError:
        return fh.read(limit)
    first = min(size + 1, limit)
    data = fh.read(first)
    if len(data) == first < limit:  # it grew since fstat: the rest, up to the bound
        data += fh.read(limit - first)
    return data


def read_file_bytes(
    path: str,
    limits: ReadLimits | None = None,
    *,
    known_stat: os.stat_result | None = None,
    digest: bool = True,
) -> tuple[bytes, bool, bool, str]:
    """The file's bytes, whether it was gzip, whether the stream was cut, and the digest of the
    bytes read; a `*.gz` file is gunzipped (so `.jsonl.gz` just works).

    Only the name decides, as the reference never decompresses: a gzip stream in a plain
    `.jsonl` file is read as the reference reads it (unparseable lines, counted as malformed).

    Args:
        path: The file.
        limits: The bounds (default: from the environment).
        known_stat: `os.stat(path)` when the caller has just taken it (a session's reader
            does, for its size budget): the regular-file check reads it instead of asking again.
        digest: Hash the bytes (`content_digest`); False gives `""` instead. Only the corpus
            store keys on the digest, and hashing is a pass over every byte read (about a
            twentieth of a sweep that stores nothing), so a reader whose caller stores
            nothing, or that never returns the digest, leaves it out.
    """
    limits = limits or ReadLimits.from_env()
    _check_regular_file(path, known_stat)
    try:
        with open(path, "rb") as fh:
            data = read_at_most(fh, limits.session_bytes + 1)
    except OSError as exc:
        raise TranscriptError(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limits.session_bytes:
        raise TranscriptError(path, OVER_BUDGET)
    hexdigest = content_digest(data) if digest else ""
    if not path.endswith(".gz"):
        return data, False, False, hexdigest
    if not data.startswith(b"\x1f\x8b"):
        raise TranscriptError(path, "named .gz but not gzip-compressed")
    out = bytearray()
    rest = data
    truncated = False
    # Concatenated gzip members are valid gzip; a cut-off stream keeps what it decompressed.
    while rest:
        d = zlib.decompressobj(wbits=31)
        room = limits.decompressed_bytes - len(out)
        try:
            # Bounded: a small file that inflates to gigabytes (a gzip bomb) stops at the limit.
            out += d.decompress(rest, room + 1)
            if len(out) > limits.decompressed_bytes:
                raise TranscriptError(path, "decompressed size over limit")
        except zlib.error as exc:
            if not out:
                raise TranscriptError(path, f"not a readable gzip file ({exc})") from None
            truncated = True
            break
        if not d.eof:
            if d.unconsumed_tail:  # stopped at the limit with input left: over the limit
                raise TranscriptError(path, "decompressed size over limit")
            truncated = True
            break
        rest = d.unused_data
    return bytes(out), True, truncated, hexdigest
