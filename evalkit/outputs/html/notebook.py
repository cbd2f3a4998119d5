"""A session page inline in a notebook: `corpus.session(log).view()` (or `view(session)`).

The page is the report's session page made standalone (its stylesheet and script inside, the
CSP allowing exactly those by digest) and shown in a sandboxed inline frame (`srcdoc`, scripts
allowed, no same origin: the page cannot reach the notebook). Outside a notebook, `.html` is
the page and `.save(path)` writes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from evalkit.formats.common import AgentSession
from evalkit.outputs.html.pages import session_page
from evalkit.outputs.html.timeline import timeline

__all__ = ["SessionView", "view", "session_row"]


def session_row(session: Any) -> dict[str, Any]:
    """The session's row of the sessions frame, without its identity columns."""
    if isinstance(session, AgentSession):
        from evalkit.corpus.agents import agent_rows

        rows = agent_rows([session], session.path)["sessions"]
    else:
        from evalkit.corpus.frame_rows import session_rows

        rows = session_rows(session)["sessions"]
    return dict(rows[0]) if rows else {}


@dataclass(frozen=True)
class SessionView:
    """A session page for display: `_repr_html_` is the sandboxed inline frame."""

    html: str
    height: int = 720

    def _repr_html_(self) -> str:
        return (
            f'<iframe sandbox="allow-scripts" referrerpolicy="no-referrer" '
            f'style="width:100%;height:{int(self.height)}px;border:1px solid #ddd" '
            f'srcdoc="{escape(self.html, quote=True)}"></iframe>'
        )

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the page to `path` (one self-contained HTML file) and return the path."""
        out = Path(path)
        out.write_text(self.html, encoding="utf-8")
        return out


def view(session: Any, *, log: str | None = None, height: int = 720) -> SessionView:
    """The session page of `session` (Claude Code headless or interactive, Codex, Inspect)."""
    t = timeline(session, log=log)
    html = session_page(t, row=session_row(session), root="", standalone=True)
    return SessionView(html, height)
