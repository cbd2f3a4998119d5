"""`session.view()`: a session's page inline in a notebook.

The page is drawn by the outputs layer (`evalkit.outputs.html.notebook.view`). The session
classes sit far to its left and must not import it, so they reach it here by name, at call
time: the package's one late binding besides the `evalkit.__getattr__` entry points. Nothing
else in a session depends on it.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["VIEWER", "view"]

VIEWER = "evalkit.outputs.html.notebook"


def view(session: Any, **options: Any) -> Any:
    """The session page of `session` (see `evalkit.outputs.html.notebook.view`)."""
    return importlib.import_module(VIEWER).view(session, **options)
