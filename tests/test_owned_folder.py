"""Issue 21, item 1: a folder evalkit writes holds only regular files it created itself.

`evalkit export` wrote through symbolic links: a dangling `OUT/sessions.parquet → elsewhere`
made export create the file elsewhere, a linked frame file of an earlier export had its target
overwritten, a linked `.evalkit-export` marker had its target overwritten with marker text, and
a user's own `sessions.csv` was replaced by `--format csv` because the marker was taken as proof
that every file there was evalkit's. The folder writer (`evalkit.owned_folder`) never follows a
link, records the names and digests of what it wrote in the marker, replaces only a file it
recorded with that digest, and refuses with one line naming the file otherwise.

Every export test checks, by digest, that nothing outside OUT changed and that no foreign file
in OUT was replaced.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.cli import main
from evalkit.corpus.frames import FRAME_NAMES
from evalkit.corpus.load import export_corpus
from evalkit.errors import UsageError
from evalkit.owned_folder import MARKER, FolderRefused, OwnedFolder
from tests.sweep_helpers import cited


def _corpus(root: Path) -> Path:
    cited(root, "cg22/ab-express/run-new-1.jsonl", 100, 50)
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 50, 100)
    return root


def _digests(top: Path, skip: Path) -> dict[str, str | None]:
    """Every entry under `top` but `skip`: a file's digest, a link's target, a folder None."""
    out: dict[str, str | None] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        if here == skip or skip in here.parents:
            continue
        for name in dirnames + filenames:
            p = here / name
            if p == skip:
                continue
            if p.is_symlink():
                out[str(p)] = "link:" + os.readlink(p)
            elif p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[str(p)] = None
    return out


def _export(root: Path, out: Path, *extra: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["export", str(root), "--to", str(out), "--no-cache", "-j", "1", *extra])
    return code, err.getvalue()


@pytest.fixture
def world(tmp_path):
    """A corpus, an OUT folder and a folder elsewhere holding a file of value."""
    root = _corpus(tmp_path / "c")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.parquet").write_bytes(b"precious bytes")
    return root, tmp_path / "out", elsewhere


def _refused(tmp_path, root, out, name, *extra):
    before = _digests(tmp_path, out)
    inside = {p.name: (os.readlink(p) if p.is_symlink() else p.read_bytes()) for p in _own(out)}
    code, err = _export(root, out, *extra)
    assert code == 2, err
    assert err.count("\n") == 1 and f"{out / name}" in err, err
    assert _digests(tmp_path, out) == before  # nothing outside OUT changed
    after = {p.name: (os.readlink(p) if p.is_symlink() else p.read_bytes()) for p in _own(out)}
    assert after == inside  # nothing in OUT was replaced either
    return err


def _own(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir()) if out.is_dir() else []


def test_a_dangling_link_in_out_is_refused_and_nothing_is_created_elsewhere(tmp_path, world):
    root, out, elsewhere = world
    out.mkdir()
    (out / "sessions.parquet").symlink_to(elsewhere / "x.parquet")
    err = _refused(tmp_path, root, out, "sessions.parquet")
    assert "symbolic link" in err
    assert not (elsewhere / "x.parquet").exists()


def test_a_linked_frame_file_of_an_earlier_export_keeps_its_target(tmp_path, world):
    root, out, elsewhere = world
    assert _export(root, out)[0] == 0
    (out / "calls.parquet").unlink()
    (out / "calls.parquet").symlink_to(elsewhere / "precious.parquet")
    _refused(tmp_path, root, out, "calls.parquet")
    assert (elsewhere / "precious.parquet").read_bytes() == b"precious bytes"


def test_a_linked_marker_keeps_its_target(tmp_path, world):
    root, out, elsewhere = world
    out.mkdir()
    (out / MARKER).symlink_to(elsewhere / "precious.parquet")
    _refused(tmp_path, root, out, MARKER)
    assert (elsewhere / "precious.parquet").read_bytes() == b"precious bytes"


def test_a_dangling_linked_marker_creates_nothing(tmp_path, world):
    root, out, elsewhere = world
    out.mkdir()
    (out / MARKER).symlink_to(elsewhere / "marker")
    _refused(tmp_path, root, out, MARKER)
    assert not (elsewhere / "marker").exists()


def test_a_users_own_file_beside_an_earlier_export_is_never_replaced(tmp_path, world):
    root, out, _ = world
    assert _export(root, out)[0] == 0  # parquet: its marker is there now
    (out / "sessions.csv").write_text("my own notes\n")
    err = _refused(tmp_path, root, out, "sessions.csv", "--format", "csv")
    assert "not written by evalkit" in err
    assert (out / "sessions.csv").read_text() == "my own notes\n"


def test_a_recorded_file_changed_since_is_refused(tmp_path, world):
    root, out, _ = world
    assert _export(root, out)[0] == 0
    (out / "sessions.parquet").write_bytes(b"edited by hand")
    err = _refused(tmp_path, root, out, "sessions.parquet")
    assert "changed since" in err


def test_a_marker_of_an_older_evalkit_is_no_record(tmp_path, world):
    root, out, _ = world
    out.mkdir()
    (out / MARKER).write_text("files in this directory were written by evalkit export\n")
    (out / "sessions.parquet").write_bytes(b"whose?")
    _refused(tmp_path, root, out, "sessions.parquet")


def test_out_that_is_a_symbolic_link_is_refused(tmp_path, world):
    root, out, elsewhere = world
    out.symlink_to(elsewhere, target_is_directory=True)
    before = _digests(tmp_path, tmp_path / "none")
    code, err = _export(root, out)
    assert code == 2 and str(out) in err and "symbolic link" in err
    assert _digests(tmp_path, tmp_path / "none") == before


def test_a_folder_of_its_own_is_refreshed_in_either_format(tmp_path, world):
    root, out, _ = world
    before = _digests(tmp_path, out)
    for fmt in ("parquet", "parquet", "csv", "csv", "parquet"):
        code, err = _export(root, out, "--format", fmt)
        assert code == 0, err
    assert _digests(tmp_path, out) == before
    doc = json.loads((out / MARKER).read_text())
    names = {f"{n}.{fmt}" for n in FRAME_NAMES for fmt in ("parquet", "csv")} | {"columns.json"}
    assert set(doc["files"]) == names
    for name, digest in doc["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in out.iterdir()) == sorted(names | {MARKER})
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    assert len(pd.read_parquet(out / "sessions.parquet")) == len(loaded.sessions_df())


def test_the_api_exports_refuse_the_same(tmp_path, world):
    root, out, elsewhere = world
    out.mkdir()
    (out / "columns.json").symlink_to(elsewhere / "precious.parquet")
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    for export in (lambda: loaded.to_csv(out), lambda: export_corpus(root, out, cache=False)):
        with pytest.raises(UsageError, match="columns.json"):
            export()
    assert (elsewhere / "precious.parquet").read_bytes() == b"precious bytes"


# --- the writer itself -------------------------------------------------------------------------


def test_the_writer_records_names_and_digests(tmp_path):
    out = tmp_path / "out"
    with OwnedFolder.claim(out, ["a.txt", "b.bin"], what="evalkit report") as folder:
        folder.write_text("a.txt", "hello\n")
        with folder.open("b.bin") as fh:
            fh.write(b"\x00\x01" * 1000)
    paths = folder.paths
    assert [p.name for p in paths] == ["a.txt", "b.bin"]
    doc = json.loads((out / MARKER).read_text())
    assert doc["files"]["a.txt"] == hashlib.sha256(b"hello\n").hexdigest()
    assert doc["written_by"] == "evalkit report"
    again = OwnedFolder.claim(out, ["a.txt"])
    again.write_text("a.txt", "bye\n")
    again.commit()
    assert (out / "a.txt").read_text() == "bye\n" and (out / "b.bin").stat().st_size == 2000
    assert set(json.loads((out / MARKER).read_text())["files"]) == {"a.txt", "b.bin"}


def test_a_file_that_appears_after_the_claim_is_not_replaced(tmp_path):
    out = tmp_path / "out"
    folder = OwnedFolder.claim(out, ["a.txt"])
    (out / "a.txt").write_text("raced in")
    with pytest.raises(FolderRefused, match="a.txt"):
        folder.write_text("a.txt", "mine")
    folder.abort()
    assert (out / "a.txt").read_text() == "raced in"


def test_a_link_planted_after_the_claim_is_not_followed(tmp_path):
    out = tmp_path / "out"
    target = tmp_path / "target"
    folder = OwnedFolder.claim(out, ["a.txt"])
    (out / "a.txt").symlink_to(target)
    with pytest.raises(FolderRefused, match="a.txt"):
        folder.write_text("a.txt", "mine")
    folder.abort()
    assert not target.exists()


def test_an_interrupted_write_leaves_names_the_next_claim_may_replace(tmp_path):
    out = tmp_path / "out"
    folder = OwnedFolder.claim(out, ["a.txt", "b.txt"])
    folder.write_text("a.txt", "half")
    folder.abort()  # as a crash would leave it: a.txt written, b.txt never
    again = OwnedFolder.claim(out, ["a.txt", "b.txt"])
    again.write_text("a.txt", "whole")
    again.write_text("b.txt", "too")
    again.commit()
    assert (out / "a.txt").read_text() == "whole"


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", MARKER, "x\0y"])
def test_only_plain_file_names_are_written(tmp_path, name):
    with pytest.raises(UsageError):
        OwnedFolder.claim(tmp_path / "out", [name])
