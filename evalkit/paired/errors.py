"""Errors of the paired-evidence part (spec §2.7, §3.10, §5.1).

Each carries one fixed, payload-safe message: a location built from known keys and indices plus
a fixed expectation, never a value taken from the file. They subclass `EvalkitError`, so the
`evalkit` command prints them on one line and exits with status 2.
"""

from __future__ import annotations

from evalkit.errors import EvalkitError

__all__ = ["CaseManifestError", "EvidenceError", "PairedError", "ReceiptError"]


class PairedError(EvalkitError):
    """Base class: unusable paired-evidence input. `str(error)` is the spec's message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class CaseManifestError(PairedError):
    """The case manifest is unreadable or breaks spec §2 (messages of §2.7)."""


class EvidenceError(PairedError):
    """An evidence file is unreadable or structurally invalid (messages of §3.10)."""


class ReceiptError(PairedError):
    """A driver receipt is unreadable or invalid (messages of §5.1, §5.2)."""
