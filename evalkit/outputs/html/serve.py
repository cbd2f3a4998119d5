"""Serving a report folder for `evalkit view`: 127.0.0.1 only, files under the folder only.

The server binds the loopback address (never `0.0.0.0`), on a free port the system picks unless
one is asked for. It answers GET and HEAD for regular files under its folder: a path with `..`,
a symlink anywhere on the way, a folder, or anything that is not a regular file is a 404; no
directory listing is ever made. Every answer carries the pages' Content-Security-Policy as a
header too, `nosniff` (a `.txt` result is shown as text, never sniffed as HTML) and no caching.
"""

from __future__ import annotations

import http.server
import mimetypes
import os
import stat
import urllib.parse
from pathlib import Path

from evalkit.outputs.html.render import CSP

__all__ = ["HOST", "make_server", "resolve"]

HOST = "127.0.0.1"

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
}


def resolve(root: str | os.PathLike[str], url_path: str) -> Path | None:
    """The regular file `url_path` names under `root`, or None: no `..`, no empty or hidden
    trick component, no symlink on the way, nothing but a regular file."""
    path = urllib.parse.unquote(urllib.parse.urlsplit(url_path).path)
    if "\\" in path or "\x00" in path:
        return None
    parts = [p for p in path.split("/") if p]
    if not parts:
        parts = ["index.html"]
    if any(p in (".", "..") for p in parts):
        return None
    here = Path(root)
    for i, part in enumerate(parts):
        here = here / part
        try:
            st = os.lstat(here)
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            return None
        last = i == len(parts) - 1
        if last and not stat.S_ISREG(st.st_mode):
            return None
        if not last and not stat.S_ISDIR(st.st_mode):
            return None
    return here


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "evalkit"
    sys_version = ""
    root: Path

    def _answer(self, body: bool) -> None:
        target = resolve(self.root, self.path)
        if target is None and urllib.parse.urlsplit(self.path).path == "/favicon.ico":
            # A browser asks for it beside a page that is not HTML (a result's .txt): nothing.
            self.send_response(204)
            self.end_headers()
            return
        if target is None:
            self.send_error(404, "not in this report")
            return
        try:
            fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as f:
                data = f.read()
        except OSError:
            self.send_error(404, "not in this report")
            return
        kind = _TYPES.get(target.suffix) or mimetypes.guess_type(target.name)[0]
        self.send_response(200)
        self.send_header("Content-Type", kind or "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 — the http.server interface
        self._answer(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(False)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 — quiet: no request log
        pass


def make_server(root: str | os.PathLike[str], port: int = 0) -> http.server.ThreadingHTTPServer:
    """A server of `root` on 127.0.0.1 (`port` 0: a free one; read it from `server_address`)."""
    handler = type("ReportHandler", (_Handler,), {"root": Path(root)})
    server = http.server.ThreadingHTTPServer((HOST, port), handler)
    server.daemon_threads = True
    return server
