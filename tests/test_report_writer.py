"""The report's folder writer and viewer server (`evalkit.outputs.html.writer`, `serve`)."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request

import pytest

from evalkit.errors import UsageError
from evalkit.outputs.html.serve import HOST, make_server, resolve
from evalkit.outputs.html.writer import MARKER, SiteWriter


def _write(out, files):
    w = SiteWriter(out)
    for rel, text in files.items():
        w.write(rel, text)
    return w.close()


def test_writes_files_and_a_marker_of_what_it_wrote(tmp_path):
    out = tmp_path / "out"
    assert _write(out, {"index.html": "i", "sessions/a.html": "a"}) == [
        "index.html",
        "sessions/a.html",
    ]
    marker = json.loads((out / MARKER).read_text())
    assert sorted(marker["files"]) == ["index.html", "sessions/a.html"]


def test_refuses_a_folder_holding_files_it_did_not_write(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match=r"did not write.*notes\.txt"):
        SiteWriter(out)
    assert (out / "notes.txt").read_text() == "mine"


def test_rewrites_its_own_report_and_removes_what_it_no_longer_writes(tmp_path):
    out = tmp_path / "out"
    _write(out, {"index.html": "1", "sessions/old.html": "old"})
    _write(out, {"index.html": "2"})
    assert (out / "index.html").read_text() == "2"
    assert not (out / "sessions").exists()


def test_never_replaces_a_file_changed_since(tmp_path):
    out = tmp_path / "out"
    _write(out, {"index.html": "1"})
    (out / "index.html").write_text("edited by hand")
    w = SiteWriter(out)
    with pytest.raises(UsageError, match=r"changed since.*index\.html"):
        w.write("index.html", "2")
    assert (out / "index.html").read_text() == "edited by hand"


def test_a_file_added_to_an_old_report_is_refused(tmp_path):
    out = tmp_path / "out"
    _write(out, {"index.html": "1"})
    (out / "extra.txt").write_text("x")
    with pytest.raises(UsageError, match=r"extra\.txt"):
        SiteWriter(out)


def test_never_writes_through_a_symlink(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "out"
    link.symlink_to(elsewhere)
    with pytest.raises(UsageError, match="symlink"):
        SiteWriter(link)
    out = tmp_path / "real"
    _write(out, {"index.html": "1"})
    (out / "sessions").symlink_to(elsewhere)
    with pytest.raises(UsageError, match="symlink"):
        SiteWriter(out)
    assert os.listdir(elsewhere) == []


def test_names_outside_the_folder_are_not_file_names(tmp_path):
    w = SiteWriter(tmp_path / "out")
    for bad in ("../x.html", "/etc/x", "a/../../x", ""):
        with pytest.raises(ValueError):
            w.write(bad, "x")


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    (root / "sessions").mkdir(parents=True)
    (root / "index.html").write_text("<p>index</p>")
    (root / "sessions" / "a.html").write_text("a")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (root / "leak.txt").symlink_to(secret)
    (root / "linked").symlink_to(tmp_path)
    return root


def test_resolve_serves_only_regular_files_under_the_folder(site):
    assert resolve(site, "/") == site / "index.html"
    assert resolve(site, "/sessions/a.html?x=1#y") == site / "sessions" / "a.html"
    for bad in (
        "/../secret.txt",
        "/sessions/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/leak.txt",
        "/linked/secret.txt",
        "/sessions",
        "/sessions/",
        "/missing.html",
        "/a\\..\\secret.txt",
    ):
        assert resolve(site, bad) is None, bad


def test_the_server_listens_on_loopback_only_and_answers_404_outside(site):
    server = make_server(site)
    host, port = server.server_address[:2]
    assert host == HOST == "127.0.0.1" and port > 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/") as r:
            assert r.read() == b"<p>index</p>"
            assert r.headers["Content-Type"] == "text/html; charset=utf-8"
            assert "script-src 'self'" in r.headers["Content-Security-Policy"]
            assert r.headers["X-Content-Type-Options"] == "nosniff"
        for bad in ("/leak.txt", "/linked/secret.txt", "/sessions/"):
            with pytest.raises(urllib.error.HTTPError) as got:
                urllib.request.urlopen(f"http://{HOST}:{port}{bad}")
            assert got.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
