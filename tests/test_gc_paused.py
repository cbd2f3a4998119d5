"""The collector paused while a store is read or a corpus loaded (`evalkit.store.shards.gc_paused`).

What the block made is handed back to the collector's oldest generation, so switching it on
again does not walk every object the block made at the next allocation; a process's own frozen
objects are left alone; garbage the block made is still collected."""

from __future__ import annotations

import gc
import weakref

from evalkit.store.shards import gc_paused


class _Node:
    pass


def _young_collections(action) -> list[int]:
    """The generations collected while `action` runs."""
    seen: list[int] = []

    def note(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        action()
    finally:
        gc.callbacks.remove(note)
    return seen


def test_what_a_paused_block_made_is_not_walked_again_when_the_collector_resumes():
    assert gc.isenabled()
    kept = []

    def load():
        with gc_paused():
            assert not gc.isenabled()
            kept.extend([[i, {"x": i}] for i in range(100_000)])  # tracked, none garbage
        _ = [[i] for i in range(100)]  # the allocations that come next

    # Left in the youngest generation, they would be walked at the first allocation after the
    # block (a collection of all of them); handed to the oldest, none is due.
    assert _young_collections(load) == []
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_garbage_made_in_a_paused_block_is_still_collected():
    with gc_paused():
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # a cycle
        gone = weakref.ref(a)
        del a, b
    gc.collect()
    assert gone() is None


def test_a_process_that_froze_its_heap_keeps_it_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            _ = [[i] for i in range(1000)]
        assert gc.get_freeze_count() == frozen  # not unfrozen by the block
    finally:
        gc.unfreeze()


def test_a_block_inside_a_paused_collector_leaves_it_paused():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
