"""The hardened, bounded open sequence for receipts and evidence files (spec §5.1, §3.1).

`lstat`, a regular-file check, an open that follows no link and never blocks (`O_NOFOLLOW |
O_NONBLOCK | O_CLOEXEC`, so a FIFO swapped in after `lstat` cannot hang the reader), an identity
re-check with `fstat`, and a read of at most `limit + 1` bytes. Each failure raises the caller's
own error with the caller's own message, so the receipt reader and the evidence loader share the
sequence but keep their spec-fixed wording.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["OpenMessages", "read_bounded"]


@dataclass(frozen=True)
class OpenMessages:
    """The message for each failure step; the caller's error type wraps them."""

    lstat_failed: str
    not_regular: str
    too_large: str
    open_failed: str
    changed_identity: str


def read_bounded(
    path: str | os.PathLike[str],
    *,
    limit: int,
    messages: OpenMessages,
    error: Callable[[str], Exception],
) -> bytes:
    """Read at most `limit` bytes from the regular file at `path`, refusing anything else."""
    try:
        before = os.lstat(path)
    except OSError:
        raise error(messages.lstat_failed) from None
    if not stat.S_ISREG(before.st_mode):  # symlinks, FIFOs, directories, sockets, devices
        raise error(messages.not_regular)
    if before.st_size > limit:
        raise error(messages.too_large)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        raise error(messages.open_failed) from None
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (
            before.st_dev,
            before.st_ino,
        ):
            raise error(messages.changed_identity)
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, remaining)
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:  # the file grew after lstat
        raise error(messages.too_large)
    return data
