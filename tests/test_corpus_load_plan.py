"""The load plan (evalkit/corpus/load.py): a warm load of an unchanged corpus builds its frames
from the store's frame files without discovering or looking up a session, and gives exactly the
frames of a load without it; any change, damage or other option means no plan is used."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from evalkit.corpus import load as load_mod
from evalkit.corpus.frames import FRAME_NAMES
from evalkit.corpus.load import load_corpus_frames
from tests.sweep_helpers import aged, cited, put


@pytest.fixture(autouse=True)
def _trusted(trusted):
    """Files made a moment ago count as old enough for a plan to be written."""


def corpus(root):
    for i in range(1, 5):
        cited(root, f"cg22/ab-express/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 2)
    cited(root, "cg22/ab-express/run-old-1.jsonl", 70, 30)
    put(root, "broken.jsonl", text="null\n")
    put(root, "notes.txt", text="not a transcript\n")
    return aged(root)


class Spy:
    """Counts the loads that discovered the tree (no plan used) and the plans used."""

    def __init__(self, monkeypatch):
        self.discovered = 0
        self.planned = 0
        loader, from_plan = load_mod._Loader, load_mod._from_plan

        def counted_loader(*args, **kwargs):
            self.discovered += 1
            return loader(*args, **kwargs)

        def counted_plan(*args, **kwargs):
            got = from_plan(*args, **kwargs)
            self.planned += got is not None
            return got

        monkeypatch.setattr(load_mod, "_Loader", counted_loader)
        monkeypatch.setattr(load_mod, "_from_plan", counted_plan)


def same(got, want):
    for name in FRAME_NAMES:
        a, b = got.frame(name), want.frame(name)
        pd.testing.assert_frame_equal(a, b, check_dtype=True)
        csv_a, csv_b = io.StringIO(), io.StringIO()
        a.to_csv(csv_a, index=False)
        b.to_csv(csv_b, index=False)
        assert csv_a.getvalue() == csv_b.getvalue()
    assert got.records == want.records and got.errors == want.errors
    assert got.accounting() == want.accounting()
    assert got.discovery == want.discovery and got.runs == want.runs
    assert repr(got.profile_choice) == repr(want.profile_choice)
    assert repr(got.layout_choice) == repr(want.layout_choice)


def plans(cache):
    return sorted(p.name for p in cache.rglob("plan-*.out"))


def test_a_load_writes_a_plan_the_next_one_uses_with_the_same_frames(tmp_path, monkeypatch):
    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    spy = Spy(monkeypatch)
    cold = load_corpus_frames(root, cache_dir=cache, jobs=1)
    # Written by the load that parsed the sessions: every one of them was stored.
    assert len(plans(cache)) == 1 and (cold.cache_hits, cold.cache_misses) == (0, 6)
    planned = load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert spy.planned == 1 and spy.discovered == 1
    assert len(planned.errors) == 1 and planned.frame("sessions").shape[0] == 5
    same(planned, cold)
    # Without its plan, the warm load reads every session from the store (and writes the plan
    # again): the planned load says what it says.
    for plan in cache.rglob("plan-*.out"):
        plan.unlink()
    warm = load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert spy.planned == 1 and spy.discovered == 2 and len(plans(cache)) == 1
    assert (planned.cache_hits, planned.cache_misses) == (warm.cache_hits, warm.cache_misses)
    assert (warm.cache_hits, warm.cache_misses) == (6, 0)
    same(warm, cold)
    # What is never stored is applied again: a planned frame changed by its user stays theirs.
    planned.tables["sessions"].loc[0, "log"] = "changed"
    same(load_corpus_frames(root, cache_dir=cache, jobs=1), cold)


def test_a_load_whose_sessions_could_not_all_be_stored_writes_no_plan(tmp_path, monkeypatch):
    """The next load would parse them again: a plan would say it found them in the store."""
    from evalkit.store import shards

    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    with pytest.MonkeyPatch.context() as no_shards:
        no_shards.setattr(shards, "write_shard", lambda *args, **kwargs: None)
        load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert plans(cache) == []
    spy = Spy(monkeypatch)
    again = load_corpus_frames(root, cache_dir=cache, jobs=1)  # parses them all again
    assert spy.planned == 0 and again.cache_misses == 6 and len(plans(cache)) == 1


@pytest.mark.parametrize("change", ["edit", "add", "remove", "touch"])
def test_a_change_to_the_tree_means_the_plan_is_not_used(tmp_path, monkeypatch, change):
    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    load_corpus_frames(root, cache_dir=cache, jobs=1)  # writes the plan
    target = root / "cg22/ab-express/run-new-2.jsonl"
    if change == "edit":
        cited(root, "cg22/ab-express/run-new-2.jsonl", 999, 50)
    elif change == "add":
        cited(root, "cg22/ab-express/run-new-9.jsonl", 10, 5)
    elif change == "remove":
        target.unlink()
    else:
        target.touch()
    spy = Spy(monkeypatch)
    got = load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert spy.planned == 0 and spy.discovered == 1
    same(got, load_corpus_frames(root, cache=False, jobs=1))


@pytest.mark.parametrize("walk", ["first", "last"])
def test_the_tree_is_walked_beside_the_reading_and_a_change_still_means_no_plan(
    tmp_path, monkeypatch, walk
):
    """The walk runs in a thread of its own while the plan and its frame files are read; it
    ends before the load returns (no thread is left), and a change it finds means the plan is
    not used whether the walk ends before the first frame is read or after the last one."""
    import threading

    from evalkit.store import snapshot

    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    want = load_corpus_frames(root, cache_dir=cache, jobs=1)  # writes the plan
    walked_in: list[str] = []
    real_walk, real_read = snapshot.tree_state, load_mod.read_frame_file
    ended = threading.Event()

    def walked(path):
        walked_in.append(threading.current_thread().name)
        if walk == "last":  # the frames are all read before the walk says anything
            assert ended.wait(10)
        try:
            return real_walk(path)
        finally:
            if walk == "first":
                ended.set()

    def read(*args):
        if walk == "first":  # the walk has ended before any frame is read
            assert ended.wait(10)
        return real_read(*args)

    monkeypatch.setattr(snapshot, "tree_state", walked)
    monkeypatch.setattr(load_mod, "read_frame_file", read)
    real_current = snapshot.Snapshot.current

    def current(self, stored):  # asked first once every frame is read (the walk not ended)
        ended.set()
        return real_current(self, stored)

    monkeypatch.setattr(snapshot.Snapshot, "current", current)
    threads = threading.active_count()
    spy = Spy(monkeypatch)
    same(load_corpus_frames(root, cache_dir=cache, jobs=1), want)
    assert spy.planned == 1 and threading.active_count() == threads
    assert walked_in and walked_in[0].startswith("evalkit-walk")
    cited(root, "cg22/ab-express/run-new-9.jsonl", 10, 5)
    ended.clear()
    got = load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert spy.planned == 1 and spy.discovered == 1 and threading.active_count() == threads
    same(got, load_corpus_frames(root, cache=False, jobs=1))


def test_a_load_that_cannot_start_a_thread_walks_the_tree_itself(tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    want = load_corpus_frames(root, cache_dir=cache, jobs=1)  # writes the plan

    def refused(self, *args, **kwargs):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(ThreadPoolExecutor, "submit", refused)
    spy = Spy(monkeypatch)
    same(load_corpus_frames(root, cache_dir=cache, jobs=1), want)
    assert spy.planned == 1
    cited(root, "cg22/ab-express/run-new-9.jsonl", 10, 5)
    got = load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert spy.planned == 1 and spy.discovered == 1
    same(got, load_corpus_frames(root, cache=False, jobs=1))


@pytest.mark.parametrize("damage", ["plan-cut", "plan-bytes"])
def test_a_damaged_plan_falls_back_to_the_same_frames(tmp_path, monkeypatch, damage):
    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    want = load_corpus_frames(root, cache_dir=cache, jobs=1)  # writes the plan
    (plan,) = cache.rglob("plan-*.out")
    if damage == "plan-cut":
        plan.write_bytes(plan.read_bytes()[:-40])
    else:
        data = bytearray(plan.read_bytes())
        data[len(data) // 2] ^= 0xFF
        plan.write_bytes(bytes(data))
    spy = Spy(monkeypatch)
    got = load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert spy.planned == 0 and spy.discovered == 1
    same(got, want)


@pytest.mark.parametrize("kept", ["not-arrow", "other-schema", "cut-stream"])
def test_a_plan_whose_frames_are_not_the_frames_is_not_used(tmp_path, monkeypatch, kept):
    """A plan with a valid digest (one made to look valid, in a shared cache directory) whose
    kept frame is not an Arrow stream of exactly that frame: no plan, never a wrong frame."""
    import pyarrow as pa

    from evalkit.store import frame_files

    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    real = frame_files.write_frame_stream

    def forged(table, write):
        if kept == "not-arrow":
            write(b"not an arrow stream")
        elif kept == "other-schema":
            real(pa.table({"log": ["x"] * table.num_rows}), write)
        else:
            pieces = []
            real(table, pieces.append)
            write(b"".join(bytes(p) for p in pieces)[:-64])

    with pytest.MonkeyPatch.context() as forging:
        forging.setattr(load_mod, "write_frame_stream", forged)
        load_corpus_frames(root, cache_dir=cache, jobs=1)  # the cold load writes the plan
    assert len(plans(cache)) == 1
    want = load_corpus_frames(root, cache=False, jobs=1)
    spy = Spy(monkeypatch)
    got = load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert spy.planned == 0 and spy.discovered == 1
    same(got, want)


@pytest.mark.parametrize("damage", ["frame-missing", "frame-bytes"])
def test_a_plan_keeps_its_frames_and_a_damaged_frame_file_is_reparsed_without_it(
    tmp_path, monkeypatch, damage
):
    """The plan holds each frame itself: a frame file of the store damaged or removed after it
    was written changes nothing of a planned load; a load without the plan parses the sessions
    whose rows it held again, with the same frames."""
    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    want = load_corpus_frames(root, cache_dir=cache, jobs=1)  # writes the plan
    frame_file = sorted(cache.rglob("frames-calls-*.parquet"))[0]
    if damage == "frame-missing":
        frame_file.unlink()
    else:
        data = bytearray(frame_file.read_bytes())
        data[len(data) // 2] ^= 0xFF
        frame_file.write_bytes(bytes(data))
    spy = Spy(monkeypatch)
    same(load_corpus_frames(root, cache_dir=cache, jobs=1), want)
    assert spy.planned == 1 and spy.discovered == 0
    for plan in cache.rglob("plan-*.out"):
        plan.unlink()
    got = load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert spy.planned == 1 and spy.discovered == 1 and got.cache_misses > 0
    same(got, want)


def test_other_options_have_other_plans_and_verify_or_no_cache_none(tmp_path, monkeypatch):
    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert len(plans(cache)) == 1
    for options in ({"layout": "ab-arm"}, {"keep_runs": True}, {"format": "claude-code"}):
        load_corpus_frames(root, cache_dir=cache, jobs=1, **options)
        want = load_corpus_frames(root, cache_dir=cache, jobs=1, **options)
        spy = Spy(monkeypatch)
        got = load_corpus_frames(root, cache_dir=cache, jobs=1, **options)
        assert spy.planned == 1
        same(got, want)
    assert len(plans(cache)) == 4
    spy = Spy(monkeypatch)
    load_corpus_frames(root, cache_dir=cache, jobs=1, verify=True)
    load_corpus_frames(root, cache_dir=cache, jobs=1, cache=False)
    assert spy.planned == 0 and spy.discovered == 2 and len(plans(cache)) == 4


def test_a_plan_still_raises_what_the_load_would(tmp_path):
    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    with pytest.raises(load_mod.CorpusError, match="broken.jsonl"):
        load_corpus_frames(root, cache_dir=cache, jobs=1, strict=True)
    with pytest.raises(load_mod.UsageError, match="jobs"):
        load_corpus_frames(root, cache_dir=cache, jobs=0)


def test_a_planned_corpus_makes_its_records_when_asked_and_sweeps_the_same(tmp_path, monkeypatch):
    import evalkit

    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    evalkit.load_corpus(root, cache_dir=cache, jobs=1)
    want = evalkit.load_corpus(root, cache_dir=cache, jobs=1)
    spy = Spy(monkeypatch)
    got = evalkit.load_corpus(root, cache_dir=cache, jobs=1)
    assert spy.planned == 1 and type(got) is type(want)
    assert "records" not in got.__dict__  # not made yet
    assert repr(got) == repr(want)
    assert "records" not in got.__dict__  # nor for its repr (the counts its plan kept)
    assert got.sweep() == want.sweep()
    same(got, want)


class Hostile:
    """Unpickled, it would make a folder: what a plan planted in a shared cache could do."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return os.mkdir, (str(self.marker),)


@pytest.mark.parametrize("part", ["plan", "later"])
def test_a_plan_naming_anything_but_its_own_kinds_runs_nothing(tmp_path, monkeypatch, part):
    from evalkit.errors import EvalkitError

    root, cache, marker = corpus(tmp_path / "c"), tmp_path / "cache", tmp_path / "ran"
    write_plan = load_mod._write_plan

    def planted(snap, corpus, got):  # a plan with a valid digest that names os.mkdir
        field = "runs" if part == "plan" else "records"
        value = {"x": Hostile(marker)} if part == "plan" else (*corpus.records, Hostile(marker))
        object.__setattr__(corpus, field, value)
        return write_plan(snap, corpus, got)

    monkeypatch.setattr(load_mod, "_write_plan", planted)
    load_corpus_frames(root, cache_dir=cache, jobs=1)
    monkeypatch.setattr(load_mod, "_write_plan", write_plan)
    assert len(plans(cache)) == 1 and not marker.exists()
    spy = Spy(monkeypatch)
    got = load_corpus_frames(root, cache_dir=cache, jobs=1)
    if part == "plan":  # not used: the load runs without it
        assert spy.planned == 0 and spy.discovered == 1
        same(got, load_corpus_frames(root, cache=False, jobs=1))
    else:  # its records, read when first asked for: a plain error
        assert spy.planned == 1
        with pytest.raises(EvalkitError, match="evalkit cache clear"):
            got.records  # noqa: B018
    assert not marker.exists()


def test_a_load_puts_back_the_arrow_memory_pool_it_found(tmp_path, monkeypatch):
    """A load allocates from the C library's allocator (pandas' operations on its frames) and
    leaves Arrow's default pool as the caller had it, whether it reads a plan or not, and
    when it fails."""
    import pyarrow as pa

    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    callers = [p for p in (pa.mimalloc_memory_pool, pa.jemalloc_memory_pool) if _usable(p)]
    if not callers:
        pytest.skip("this pyarrow has no allocator but the system's")
    theirs = callers[0]()
    during: list[str] = []
    finish = load_mod._finish

    def seen(*args, **kwargs):
        during.append(pa.default_memory_pool().backend_name)
        return finish(*args, **kwargs)

    monkeypatch.setattr(load_mod, "_finish", seen)
    before = pa.default_memory_pool()
    pa.set_memory_pool(theirs)
    try:
        for _ in range(3):  # cold, warm, then by its plan
            load_corpus_frames(root, cache_dir=cache, jobs=1)
            assert pa.default_memory_pool().backend_name == theirs.backend_name
        with pytest.raises(load_mod.CorpusError):
            load_corpus_frames(root, cache_dir=cache, jobs=1, strict=True)
        assert pa.default_memory_pool().backend_name == theirs.backend_name
    finally:
        pa.set_memory_pool(before)
    assert during == ["system"] * 3


def _usable(make) -> bool:
    try:
        make()
    except NotImplementedError:
        return False
    return True


def test_a_plan_keeps_its_sessions_as_columns_and_makes_the_same_refs_again():
    """The wanted sessions are pickled as one tuple per field (plain values, read back without
    a step per object) and made again equal; anything else is refused, so the plan is not used."""
    import pickle

    from evalkit.corpus.discover import SessionRef

    refs = [
        SessionRef(log="a.jsonl", segments=("a.jsonl",), arm="new", layout="ab-arm"),
        SessionRef(log="b/c.jsonl", segments=("b/c.jsonl", "b/c-2.jsonl"), task="t", run="2"),
    ]
    packed = load_mod._as_columns(refs)
    assert packed[0] == "columns" and packed[2][0] == ("a.jsonl", "b/c.jsonl")
    again = load_mod._from_columns(load_mod._plan_loads(pickle.dumps(packed)))
    assert again == refs and all(type(r) is SessionRef for r in again)
    assert load_mod._from_columns(load_mod._as_columns([])) == []
    mixed = [*refs, "not a ref"]
    assert load_mod._from_columns(load_mod._as_columns(mixed)) == mixed
    for bad in (
        ("columns", dict, ((),)),  # not a dataclass with slots
        ("columns", SessionRef, packed[2][:-1]),  # a field short
        ("columns", SessionRef, (*packed[2][:-1], ("only one",))),  # a column short
        ("rows", SessionRef, packed[2]),
    ):
        with pytest.raises((ValueError, TypeError)):
            load_mod._from_columns(bad)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_corpus_read_again_with_its_own_profile_plans_that_reading_and_leaves_no_temp(
    tmp_path, monkeypatch, jobs
):
    """A corpus whose tool under test is not codegraph's is read twice (the default profile,
    then the one chosen); the plan, whose frames are written as the frames are read, is that
    of the second reading only, and the first reading's leaves nothing in the store."""
    from evalkit.corpus import parse
    from tests.tool_helpers import SOURCEGRAPH, mcp_corpus

    monkeypatch.setattr(parse, "_MIN_PARALLEL_BYTES", 0)
    root, cache = aged(mcp_corpus(tmp_path / "c", SOURCEGRAPH)), tmp_path / "cache"
    cold = load_corpus_frames(root, cache_dir=cache, jobs=jobs)
    assert cold.profile_choice.profile.name == "sourcegraph"
    assert len(plans(cache)) == 1 and not list(cache.rglob(".tmp-*"))
    spy = Spy(monkeypatch)
    planned = load_corpus_frames(root, cache_dir=cache, jobs=jobs)
    assert spy.planned == 1 and spy.discovered == 0
    same(planned, cold)
    same(planned, load_corpus_frames(root, cache=False, jobs=1))


def test_a_load_interrupted_after_its_frames_were_read_leaves_no_plan_and_no_temp(
    tmp_path, monkeypatch
):
    """The plan's frames are written as they are read: a load stopped after that (Ctrl-C while
    it parses sessions again, say) discards them, and the next load writes a plan of its own."""
    root, cache = corpus(tmp_path / "c"), tmp_path / "cache"
    real = load_mod._add_stored

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as stop:
        stop.setattr(load_mod, "_add_stored", interrupted)
        with pytest.raises(KeyboardInterrupt):
            load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert plans(cache) == [] and not list(cache.rglob(".tmp-*"))
    cold = load_corpus_frames(root, cache_dir=cache, jobs=1)
    assert len(plans(cache)) == 1
    spy = Spy(monkeypatch)
    same(load_corpus_frames(root, cache_dir=cache, jobs=1), cold)
    assert spy.planned == 1
