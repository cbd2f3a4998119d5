"""Test-wide set-up: a test run never writes into the user's own cache.

Many tests (and the notebooks nbval runs) sweep or load a corpus with the default store, which
lives under `$XDG_CACHE_HOME/evalkit`. Before any test is collected, `XDG_CACHE_HOME` points at a
directory of this run's own (the notebook kernels inherit it), removed when the run ends; tests
that need another location still set their own with `monkeypatch`.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_SAVED: dict[str, str | None] = {}


def pytest_configure(config) -> None:
    _SAVED["XDG_CACHE_HOME"] = os.environ.get("XDG_CACHE_HOME")
    _SAVED["dir"] = tempfile.mkdtemp(prefix="evalkit-test-cache-")
    os.environ["XDG_CACHE_HOME"] = _SAVED["dir"]


def pytest_unconfigure(config) -> None:
    if _SAVED.get("dir"):
        shutil.rmtree(_SAVED["dir"], ignore_errors=True)
    old = _SAVED.get("XDG_CACHE_HOME")
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture
def trusted(monkeypatch):
    """For the sweep's stored output (`evalkit.store.snapshot`): files a test made a moment
    ago count as old enough to trust by their times (the two-second rule has tests of its own,
    in tests/test_sweep_snapshot.py)."""
    from evalkit.store import snapshot

    monkeypatch.setattr(snapshot, "RACY_NS", 0)
