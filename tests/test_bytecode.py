"""evalkit's compiled modules under the cache directory (evalkit/commands/bytecode.py): what
`evalkit cache` says of them, and that prune and clear remove only what evalkit wrote there."""

from __future__ import annotations

import json
import os
import sys

from evalkit.cli import main
from evalkit.commands.bytecode import BYTECODE_SUBDIR, header_of, pyc_path
from evalkit.commands.cache_bytecode import bytecode_info, remove_bytecode


def _compiled(root, source):
    """Write the bytecode file the loader would write for `source` (header and a body)."""
    pyc = pyc_path(str(root), str(source))
    os.makedirs(os.path.dirname(pyc), exist_ok=True)
    with open(pyc, "wb") as fh:
        fh.write(header_of(os.stat(source)) + b"body")
    return pyc


def _folder(tmp_path):
    """A cache whose bytecode/ holds one current module, one whose source changed, one whose
    source is gone, one of another Python, an interrupted write, a foreign file and a link."""
    cache = tmp_path / "cache"
    root = cache / BYTECODE_SUBDIR
    src = tmp_path / "pkg"
    src.mkdir()
    for name in ("kept", "changed", "gone"):
        (src / f"{name}.py").write_text("x = 1\n")
    kept = _compiled(root, src / "kept.py")
    changed = _compiled(root, src / "changed.py")
    (src / "changed.py").write_text("x = 22\n")
    gone = _compiled(root, src / "gone.py")
    (src / "gone.py").unlink()
    folder = os.path.dirname(kept)
    other = os.path.join(folder, "kept.cpython-10.pyc")
    open(other, "wb").write(b"old")
    temp = kept + ".123.tmp"
    open(temp, "wb").write(b"half")
    foreign = os.path.join(folder, "notes.txt")
    open(foreign, "w").write("mine")
    outside = tmp_path / "outside.pyc"
    outside.write_bytes(b"not evalkit's")
    os.symlink(outside, os.path.join(folder, "link.cpython-311.pyc"))
    return (
        cache,
        dict(kept=kept, changed=changed, gone=gone, other=other, temp=temp, foreign=foreign),
        outside,
    )


def test_info_counts_own_files_and_the_stale_ones(tmp_path):
    cache, f, _ = _folder(tmp_path)
    info = bytecode_info(cache)
    assert (info.files, info.stale, info.refused) == (5, 4, False)
    assert info.size == sum(os.path.getsize(f[k]) for k in f if k != "foreign")
    assert info.stale_size == info.size - os.path.getsize(f["kept"])
    assert bytecode_info(tmp_path / "nothing") == bytecode_info(tmp_path / "nothing")
    assert bytecode_info(tmp_path / "nothing").files == 0


def test_prune_removes_the_stale_and_clear_the_rest_never_a_foreign_file(tmp_path):
    cache, f, outside = _folder(tmp_path)
    assert remove_bytecode(cache, stale_only=True, dry_run=True)[:2] == (
        4,
        bytecode_info(cache).stale_size,
    )
    assert all(os.path.exists(p) for p in f.values())
    files, _, failed = remove_bytecode(cache, stale_only=True)
    assert (files, failed) == (4, [])
    assert [k for k, p in f.items() if os.path.exists(p)] == ["kept", "foreign"]
    assert remove_bytecode(cache, stale_only=False)[0] == 1
    assert [k for k, p in f.items() if os.path.exists(p)] == ["foreign"]
    assert outside.read_bytes() == b"not evalkit's"  # a link is never followed
    assert os.path.isdir(cache / BYTECODE_SUBDIR)  # kept: it still holds a foreign file


def test_a_bytecode_link_is_refused(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.cpython-311.pyc").write_bytes(b"x")
    os.symlink(tmp_path / "elsewhere", cache / BYTECODE_SUBDIR)
    assert bytecode_info(cache).refused
    assert remove_bytecode(cache, stale_only=False) == (0, 0, [])
    assert (tmp_path / "elsewhere" / "x.cpython-311.pyc").exists()


def test_the_cache_command_lists_prunes_and_clears_them(tmp_path, capsys):
    cache, f, _ = _folder(tmp_path)
    assert main(["cache", "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert "compiled modules (bytecode/" in out and "5 files" in out and "4 stale" in out
    assert main(["cache", "--cache-dir", str(cache), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["bytecode"]["files"], doc["bytecode"]["stale_files"]) == (5, 4)
    assert main(["cache", "prune", "--dry-run", "--cache-dir", str(cache)]) == 0
    assert "would remove 4 stale compiled modules (bytecode/)" in capsys.readouterr().out
    assert os.path.exists(f["changed"])
    assert main(["cache", "prune", "--cache-dir", str(cache)]) == 0
    assert "removed 4 stale compiled modules" in capsys.readouterr().out
    assert main(["cache", "clear", "--cache-dir", str(cache), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bytecode"]["files"] == 1
    assert not os.path.exists(f["kept"]) and os.path.exists(f["foreign"])


def test_a_cache_without_compiled_modules_says_nothing_of_them(tmp_path, capsys):
    assert main(["cache", "--cache-dir", str(tmp_path / "c")]) == 0
    assert "bytecode" not in capsys.readouterr().out
    assert main(["cache", "--cache-dir", str(tmp_path / "c"), "--json"]) == 0
    assert "bytecode" not in json.loads(capsys.readouterr().out)


def test_the_help_says_what_the_folder_is(capsys):
    try:
        main(["cache", "--help"])
    except SystemExit:
        pass
    text = capsys.readouterr().out
    assert "bytecode/" in text and "compiled modules" in text
    assert sys.implementation.cache_tag  # the tag the file names carry
