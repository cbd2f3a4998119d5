"""Where the bundled data lives: one place, so every module and notebook agrees.

The data ships with the repository (`data/` beside `evalkit/`), so these paths exist in a checkout
or an editable install.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["repo_root", "bundled_corpus", "is_bundled_corpus", "bundled_evidence", "published_dir"]


def repo_root() -> Path:
    """The checkout evalkit runs from (the folder holding `data/` and `notebooks/`)."""
    return Path(__file__).resolve().parent.parent


def bundled_corpus() -> Path:
    """The synthetic A/B corpus (`data/corpus/`)."""
    return repo_root() / "data" / "corpus"


def is_bundled_corpus(
    path: str | os.PathLike[str], bundled: str | os.PathLike[str] | None = None
) -> bool:
    """Whether `path` is the bundled corpus (`bundled`, default `bundled_corpus()`), both sides
    resolved (a symbolically linked `data` folder included); False when either cannot be."""
    try:
        return os.path.realpath(path) == os.path.realpath(bundled or bundled_corpus())
    except (OSError, ValueError):
        return False


def bundled_evidence() -> Path:
    """The reconstructed 2026-10-17 Host-policy baseline."""
    return repo_root() / "data" / "evidence" / "host-policy-2026-10-17.json"


def published_dir() -> Path:
    """Published figures (`data/published/`); `$EVALKIT_PUBLISHED` overrides."""
    return Path(os.environ.get("EVALKIT_PUBLISHED") or repo_root() / "data" / "published")
