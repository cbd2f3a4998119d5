"""The names of the environment variables that bound reading a transcript (issue 11).

Kept apart from `evalkit.formats.files`, which applies them (`ReadLimits`), so that what keys a
stored result on them (`evalkit.store.keys.limits_suffix`) can name them without
importing the readers.
"""

from __future__ import annotations

__all__ = ["LIMIT_VARS"]

# ReadLimits field -> environment variable (a number of MB).
LIMIT_VARS = {
    "decompressed_bytes": "EVALKIT_MAX_DECOMPRESSED_MB",
    "line_bytes": "EVALKIT_MAX_LINE_MB",
    "session_bytes": "EVALKIT_MAX_SESSION_MB",
}
