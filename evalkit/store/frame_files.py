"""Stored frame rows: each frame's rows of a set of sessions as one typed Parquet file.

A corpus load parses a session once and keeps the rows of every frame it gave (`sessions`,
`calls`, `sections`, `files`, `tool_calls`, `models`: `evalkit.corpus.frame_rows`). The store
writes, for each shard of sessions it stores, one file per frame holding those sessions' rows
with the column dictionary's types (`evalkit.store.columns`), so a warm load reads them with
pyarrow straight into pandas: no row is decoded or built in Python again.

A frame file is named after its content, `frames-<frame>-<first 32 hex of its SHA-256>.parquet`,
and never changes once written. A session's stored row (`rows.PAYLOAD_FIELDS`, field `frames`)
names, per frame, the file, the first row and the number of rows that are the session's, so
merging or refreshing stored rows never touches a frame file. Every file read is checked before
any row of it is used: its size is bounded, its bytes must have the digest its name gives, its
schema must be exactly the one this version writes, and the rows a session's entry names must
carry that session's log (`__log`); anything else and the sessions it holds are misses (parsed
again), never wrong rows.

Identity columns (`log`, `arm`, `task`, …) come from discovery when the frames are read, since
the same files can be found under another layout; a row keeps only the identity values its
builder gave itself (an Inspect sample's own `log`, a Codex session's `agent`), marked in the
`__own` bitmask, which win over discovery's, as when rows are built afresh.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from evalkit.store.columns import IDENTITY, arrow_array, arrow_schema, arrow_table, columns_of
from evalkit.store.temps import replace_file

__all__ = [
    "FRAME_FILE",
    "FrameRef",
    "write_frame_files",
    "read_frame_file",
    "assemble",
    "identity_table",
]

FRAME_FILE = re.compile(r"^frames-(?P<frame>[a-z_]+)-(?P<hex>[0-9a-f]{32})\.parquet\Z")
MAX_FRAME_FILE_BYTES = 512 * 1024 * 1024  # a larger file is not one of ours

_LOG, _OWN = "__log", "__own"
_IDENTITY_NAMES = tuple(c.name for c in IDENTITY)
_BIT = {name: 1 << k for k, name in enumerate(_IDENTITY_NAMES)}

# frame → [hex, first row, rows]: where one session's rows of that frame are stored.
FrameRef = dict[str, list[Any]]


def file_name(frame: str, hex_: str) -> str:
    return f"frames-{frame}-{hex_}.parquet"


@cache  # a few frames: each schema made once (a warm 100x load reads 80 files)
def _schema(frame: str) -> Any:
    """The schema of a frame's stored files: its log and ownership bits, then its columns."""
    import pyarrow as pa

    return pa.schema([(_LOG, pa.large_string()), (_OWN, pa.int32()), *arrow_schema(frame)])


@cache
def _frame_schema(frame: str) -> Any:
    """The schema of a frame's table as `assemble` gives it (the dictionary's columns)."""
    import pyarrow as pa

    return pa.schema(arrow_schema(frame))


def write_frame_files(
    directory: str | os.PathLike[str],
    sessions: Sequence[tuple[str, dict[str, list[dict[str, Any]]]]],
    written: dict[tuple[str, str], Any] | None = None,
) -> dict[str, FrameRef] | None:
    """Write each frame's rows of `sessions` (`(log, rows by frame)`, in order) as one file.

    Returns each session's `FrameRef` (a session with no row of a frame has no entry for it),
    or None when a file could not be written (the sessions are then stored without frames).
    `written`, a dict, also gets each file's table by `(frame, hex)`: the very table
    `read_frame_file` reads back, so the run that wrote it need not read it.
    """
    refs, ok = write_frame_tables(directory, [frame_tables(sessions)], written)
    return refs if ok else None


# A batch of sessions' frame rows as the tables their files hold: frame → (table, each
# session's (log, first row, rows) in it), and every session's log under "" (rows or not).
FrameBatch = dict[str, Any]


@lru_cache(maxsize=256)
def _owned(keys: tuple[str, ...]) -> int:
    """The identity columns a row with these keys holds itself, as bits of `_BIT` (a row's
    own `arm`, say, beside the one its session's discovery gives)."""
    return sum(_BIT[k] for k in keys if k in _BIT)


def frame_tables(sessions: Sequence[tuple[str, dict[str, list[dict[str, Any]]]]]) -> FrameBatch:
    """Each frame's rows of `sessions` (`(log, rows by frame)`, in order) as the table of the
    file that holds them (`write_frame_tables` writes it), built once: the rows' dicts can go."""
    import pyarrow as pa

    batch: FrameBatch = {"": [log for log, _ in sessions]}
    names = {name for _, rows in sessions for name, table in rows.items() if table}
    for frame in sorted(names):
        rows: list[dict[str, Any]] = []
        logs: list[str] = []
        own: list[int] = []
        spans: list[tuple[str, int, int]] = []
        for log, by_frame in sessions:
            got = by_frame.get(frame) or ()
            if not got:
                continue
            spans.append((log, len(rows), len(got)))
            rows += got
            logs += [log] * len(got)
            own += map(_owned, map(tuple, got))
        head = [(_LOG, arrow_array(IDENTITY[0], logs)), (_OWN, pa.array(own, pa.int32()))]
        batch[frame] = (arrow_table(frame, rows, head), spans)
    return batch


def write_frame_tables(
    directory: str | os.PathLike[str],
    batches: Sequence[FrameBatch],
    written: dict[tuple[str, str], Any] | None = None,
) -> tuple[dict[str, FrameRef], bool]:
    """Write each frame's rows of `batches` (`frame_tables`, in order) as one file.

    Returns each session's `FrameRef` (as `write_frame_files`), and whether every file was
    written; `written`, a dict, gets each file's table by `(frame, hex)`, written or not.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    refs: dict[str, FrameRef] = {log: {} for batch in batches for log in batch[""]}
    ok = True
    names = {name for batch in batches for name in batch if name}
    for frame in sorted(names):
        tables, spans, offset = [], [], 0
        for batch in batches:
            if frame in batch:
                table, got = batch[frame]
                tables.append(table)
                spans += [(log, offset + start, n) for log, start, n in got]
                offset += table.num_rows
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        sink = pa.BufferOutputStream()
        # LZ4 rather than the default Snappy: files of about the same size, which a warm load
        # decodes faster (a 100x load's 78 files: 0.11 s against 0.13 s, read alone).
        pq.write_table(table, sink, compression="lz4")
        data = sink.getvalue().to_pybytes()
        hex_ = hashlib.sha256(data).hexdigest()[:32]
        ok = ok and _put(directory, file_name(frame, hex_), data)
        if written is not None:
            written[frame, hex_] = table
        for log, start, n in spans:
            refs[log][frame] = [hex_, start, n]
    return refs, ok


def _put(directory: str | os.PathLike[str], name: str, data: bytes) -> bool:
    """Write `data` as `directory/name` through a temporary file renamed into place (a file of
    that name already holds the same bytes: its name is their digest)."""
    target = os.path.join(directory, name)
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(target).st_mode) and os.lstat(target).st_size == len(data):
            return True
    return replace_file(directory, target, data, ".parquet")


def read_frame_file(directory: str | os.PathLike[str], frame: str, hex_: str) -> Any:
    """The verified table of one frame file (None: missing, damaged or not ours)."""
    path = os.path.join(directory, file_name(frame, hex_))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FRAME_FILE_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_FRAME_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if hashlib.sha256(data).hexdigest()[:32] != hex_:
        return None
    try:
        table = parquet_table(data)
    except Exception:  # noqa: BLE001 — an unreadable file is a miss, never an error
        return None
    if not table.schema.remove_metadata().equals(_schema(frame)):
        return None
    return table


def memory_pool() -> Any:
    """The Arrow memory pool a warm load reads and assembles frames with: the C library's
    allocator, the one numpy and pandas use, rather than pyarrow's default (mimalloc here).

    Measured on a warm 100x load (13,400 sessions): with mimalloc every gather and decode writes
    to fresh pages (the gathers cost 0.30 s of CPU against 0.10 s, the Parquet decode 0.34 s
    against 0.25 s), and the memory a frame's Arrow columns give back as they become pandas is
    not reused by pandas' own arrays (peak 385 MB against 321 MB, every frame taken).
    """
    import pyarrow as pa

    return pa.system_memory_pool()


def parquet_table(data: bytes) -> Any:
    """The table of a Parquet file's bytes, every column, decoded one column at a time
    (decoding a large file's columns side by side, pyarrow's threads, holds their buffers at
    once, and costs a warm 10x load 25 MB of peak memory for no time saved on two cores).

    Read with the reader `pyarrow.parquet.ParquetFile` wraps, `pyarrow._parquet.ParquetReader`:
    the wrapper's module imports pyarrow's file systems (S3, GCS, Azure, HDFS, and `ssl`), a
    tenth of a warm load's time, for a file that is bytes in memory. Where that reader is not
    there or takes other arguments (another pyarrow), the wrapper reads it.
    """
    import pyarrow as pa

    try:
        from pyarrow._parquet import ParquetReader

        reader = ParquetReader(memory_pool())
        reader.open(pa.BufferReader(data), pre_buffer=True)
        return reader.read_all(use_threads=False)
    except (ImportError, AttributeError, TypeError):
        import pyarrow.parquet as pq

        return pq.ParquetFile(pa.BufferReader(data)).read(use_threads=False)


def identity_table(idents: Sequence[dict[str, Any]]) -> Any:
    """Sessions' identity columns (discovery's, one dict each) as the Arrow table `assemble`
    takes them from."""
    import pyarrow as pa

    # Column by column, with the values `build_columns` gives them (a name's escape, a text's
    # stored form), straight into Arrow: no frame in between.
    return pa.table({c.name: arrow_array(c, [d.get(c.name) for d in idents]) for c in IDENTITY})


def assemble(
    frame: str,
    tables: dict[str, Any],
    entries: Sequence[tuple[int, list[Any]]],
    idents: Any,
) -> tuple[Any, list[int]]:
    """One frame of stored sessions, as pandas.

    Args:
        frame: The frame's name.
        tables: Verified tables by file hex (`read_frame_file`); a missing hex is a bad file.
            Emptied once the frame's rows are gathered from them (their memory let go before
            the frame is made, so it is never held twice).
        entries: Each session's row in `idents` and its `[hex, first row, rows]` for this
            frame, in the order its rows are wanted.
        idents: The sessions' identity columns (`identity_table`).

    Returns:
        The frame's rows (the dictionary's columns, in order, its dtypes) and no position; or
        None and the positions in `entries` whose rows are missing or not theirs.
    """
    try:
        planned = entry_arrays(entries)
    except OverflowError:  # a figure past any file's rows (a damaged row): told one by one
        return None, [
            k
            for k, (_, (h, first, size)) in enumerate(entries)
            if h not in tables or first + size > tables[h].num_rows
        ]
    return assemble_planned(frame, tables, planned, idents)


@dataclass(frozen=True)
class Entries:
    """Sessions' entries of one frame as arrays (`entry_arrays`): the files they name (`hexes`,
    in the order first named), and per session the file (`which`, a place in `hexes`), its
    first row, its rows and its row in the identity table (`owners`)."""

    hexes: list[str]
    which: Any
    starts: Any
    counts: Any
    owners: Any


def entry_arrays(entries: Sequence[tuple[int, list[Any]]]) -> Entries:
    """`assemble`'s entries taken apart once, their figures as arrays (no Python step per
    session after).

    Raises:
        OverflowError: A figure too large for an array (a damaged row).
    """
    import numpy as np

    m = len(entries)
    owners, refs = zip(*entries, strict=True) if m else ((), ())
    named, firsts, sizes = zip(*refs, strict=True) if m else ((), (), ())
    code = {h: k for k, h in enumerate(dict.fromkeys(named))}
    return Entries(
        list(code),
        np.fromiter(map(code.__getitem__, named), np.int64, m),
        np.array(firsts, np.int64).reshape(m),
        np.array(sizes, np.int64).reshape(m),
        np.array(owners, np.int64).reshape(m),
    )


def assemble_planned(
    frame: str,
    tables: dict[str, Any],
    planned: Entries,
    idents: Any,
    keep: Callable[[Any], None] | None = None,
) -> tuple[Any, list[int]]:
    """`assemble` of entries already taken apart (`entry_arrays`); the same result. `keep` is
    also given the frame's Arrow table when it has rows, before it becomes pandas (what a load
    plan keeps of it: `write_frame_stream`)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = _schema(frame)
    # Every file once, end to end (no copy), in the order the entries first name them (rows
    # wanted in file order then need no gather), and each session's rows as positions in it.
    m = len(planned.which)
    which, counts = planned.which, planned.counts
    starts = planned.starts.copy()
    hexes = [h for h in planned.hexes if h in tables]
    held = np.array([tables[h].num_rows if h in tables else -1 for h in planned.hexes], np.int64)
    offsets = np.cumsum(np.maximum(held, 0)) - np.maximum(held, 0)
    bad = np.flatnonzero((held[which] < 0) | (starts + counts > held[which])).tolist()
    if bad:
        return None, bad
    starts += offsets[which]
    pool = memory_pool()
    parts = [tables[h] for h in hexes]
    whole = pa.concat_tables(parts, memory_pool=pool) if parts else schema.empty_table()
    del parts  # `whole` and `tables` hold the files' tables now
    # The identity values some stored row gave itself (its `__own` bits): a stored identity
    # column no row owns is never read (discovery's replaces it), so it is not gathered.
    owned = int(np.bitwise_or.reduce(whole.column(_OWN).to_numpy())) if whole.num_rows else 0
    wanted = [c.name for c in columns_of(frame) if c.name not in _BIT or owned & _BIT[c.name]]
    whole = whole.select([_LOG, _OWN, *wanted])
    ends = np.cumsum(counts)
    positions = np.arange(int(ends[-1]) if m else 0, dtype=np.int64)
    positions += np.repeat(starts - (ends - counts), counts)
    if len(positions) == whole.num_rows and (starts == ends - counts).all():
        rows = whole  # every row, in file order (a warm load of an unchanged corpus): no copy
    else:
        rows = pc.take(whole, pa.array(positions), memory_pool=pool)
    del whole
    tables.clear()  # the files' tables go once their rows are gathered: never held twice
    # Discovery's identity columns, row by row; one no session has a value of is all nulls.
    n = rows.num_rows
    blank = {
        name
        for name in _IDENTITY_NAMES
        if name != "log" and idents.column(name).null_count == idents.num_rows
    }
    at = pa.array(np.repeat(planned.owners, counts))
    ident = idents.select([name for name in _IDENTITY_NAMES if name not in blank])
    ident = pc.take(ident, at, memory_pool=pool)
    # Each row must be its session's: the log it carries against the log of its entry.
    wrong = pc.not_equal(rows.column(_LOG), ident.column("log"), memory_pool=pool)
    wrong = wrong.to_numpy(zero_copy_only=False)
    if wrong.any():
        owner = np.repeat(np.arange(m), counts)
        return None, sorted(set(owner[wrong].tolist()))
    own = rows.column(_OWN).to_numpy()
    columns = []
    for c in columns_of(frame):
        if c.name not in _BIT:
            column = rows.column(c.name)
            columns.append(column)
            continue
        if c.name in blank:
            column = pa.nulls(n, idents.schema.field(c.name).type, memory_pool=pool)
        else:
            column = ident.column(c.name)
        if owned & _BIT[c.name]:
            mine = pa.array((own & _BIT[c.name]) != 0, pa.bool_())
            column = pc.if_else(mine, rows.column(c.name), column, memory_pool=pool)
        columns.append(column)
    out = pa.table(columns, schema=_frame_schema(frame))
    # Only `out` holds the rows now: each column's Arrow memory goes as it becomes pandas.
    del rows, ident, columns, column
    if keep is not None and out.num_rows:
        keep(out)
    return to_pandas(out, self_destruct=True, memory_pool=pool), []


# Rows of a frame compressed at a time as a plan keeps it (`write_frame_stream`): what the
# compression holds at once, whatever the frame's size.
FRAME_BATCH_ROWS = 16384


class _WriteOnly:
    """A binary file that hands each write to a function (for `pyarrow.PythonFile`)."""

    closed = False

    def __init__(self, write: Callable[[Any], None]) -> None:
        self._write, self._at = write, 0

    def write(self, data: Any) -> int:
        n = memoryview(data).nbytes
        self._write(data)
        self._at += n
        return n

    def tell(self) -> int:
        return self._at

    def flush(self) -> None:
        pass


def write_frame_stream(table: Any, write: Callable[[Any], None]) -> None:
    """Write a frame's table (`assemble`'s, before pandas) as an Arrow IPC stream, its buffers
    LZ4 compressed, `FRAME_BATCH_ROWS` rows at a time, each piece handed to `write` as it is
    made: what a load plan keeps of each frame (`evalkit.corpus.load`), read back by
    `frame_from_bytes` without any decoding or gathering (a 100x corpus's frames: 27 MB).
    Nothing of it is held beyond a batch (a cold 100x load's peak memory)."""
    import pyarrow as pa

    sink = pa.PythonFile(_WriteOnly(write), mode="w")
    options = pa.ipc.IpcWriteOptions(compression="lz4", use_threads=False)
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table, max_chunksize=FRAME_BATCH_ROWS)


def frame_from_bytes(frame: str, data: bytes) -> Any:
    """The table of frame `frame` that `write_frame_stream` wrote, fully validated (its
    schema exactly the frame's, every offset and length within its buffers); None for
    anything else."""
    import pyarrow as pa

    try:
        reader = pa.ipc.open_stream(pa.py_buffer(data), memory_pool=memory_pool())
        table = reader.read_all()
        if not table.schema.equals(_frame_schema(frame)):
            return None
        table.validate(full=True)
    except Exception:  # noqa: BLE001 — bytes that are not such a table: no table
        return None
    return table


def to_pandas(table: Any, *, self_destruct: bool = False, memory_pool: Any = None) -> Any:
    """A table of the dictionary's arrow types as a frame of its pandas dtypes
    (`self_destruct`: the table is let go column by column, and must not be used again)."""
    import pandas as pd
    import pyarrow as pa

    mapping = {
        pa.large_string(): pd.StringDtype(),
        pa.string(): pd.StringDtype(),
        pa.int64(): pd.Int64Dtype(),
        pa.float64(): pd.Float64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
    }
    return table.to_pandas(
        types_mapper=mapping.get, self_destruct=self_destruct, memory_pool=memory_pool
    )


def referenced(payloads: Iterable[dict[str, Any]]) -> set[str]:
    """The frame files the given stored payloads name."""
    return {
        file_name(frame, ref[0]) for p in payloads for frame, ref in (p.get("frames") or {}).items()
    }
