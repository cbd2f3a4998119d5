"""The corpus store: analysed sessions in Parquet shards, so a warm sweep reads no transcript.

Each shard holds one row per analysed session: the session's log, the files its numbers depend
on (`manifest.session_files`) with their state when they were read (size, modification time in
nanoseconds, inode, status-change time) and the digest of the bytes the parse actually read,
then the payload columns, derived from `rows.PAYLOAD_FIELDS`. A shard is written for each
hundred-odd sessions as they finish, to a temporary file renamed into place, so an interrupted
sweep keeps what it parsed and a reader never sees half a shard. A parallel sweep's shards are
written by its parser workers once they have no more sessions to parse (`write_with`); the sweep
command prints its output before it waits for them, and a serial one before it writes its last
shards (`writes_after_output`; the command line's own process, which ends then, also takes
back and writes those of a parallel sweep's that no worker has started). Interrupted, a sweep
keeps the shards already written.

A later sweep decides "unchanged" from `os.stat` alone: a session whose files all have the
recorded state is a hit, and no transcript byte is read. A file modified within two seconds of
being read (its timestamp could miss a second edit in the same tick) is re-hashed on lookup, as
every file is with `verify=True`. Invalidation is per session: a changed file misses only the
sessions that read it.

The store never trusts its files (spec: hardening): only regular files named as shards are
opened, each bounded in size; a shard whose schema, shape or values are not exactly what this
version writes is a miss and is removed. Shards live under a directory per evalkit code digest
and per swept directory, so a new evalkit (or an edited one) starts empty and two corpora never
share rows. When a directory holds many more shards than its live sessions fill, the sweep
merges the live rows of its small shards into shards of a hundred-odd rows. A sweep reads the
store a shard at a time, newest first (`CorpusStore.lookup_all`), and lets each shard's rows go
before the next: its memory holds one shard's rows, never every stored row (issue 16).

Beside each shard of the sweep's store, a side index (`shard-….index.json`) holds the same rows
as JSON, with the SHA-256 of the shard's bytes: a warm sweep reads that instead of the Parquet,
so it needs neither pyarrow nor numpy (their import costs more than the rest of a warm sweep).
The index is used only when its own digest matches its document, the shard's bytes have the
digest it names, and its rows pass the very checks a shard's rows pass; anything else and the
shard itself is read, as without an index. These checks catch damage (a cut or changed file, a
bad disk, another program's file); like any cache, the store cannot tell a deliberate rewrite
that recomputes its digests, which only its owner can make.
The index holds a JSON payload value as the value itself (not its text), and the checks run
column by column over whole columns (`_rows_of`), which is what keeps a warm sweep's reading
cheap; orjson reads an index whose writer found nothing orjson reads otherwise than Python's
JSON (an integer past 64 bits), Python's JSON any other.

One store serves every command: the sweep, the trial sweep and the corpus loader of the same
directory (and the same tool profile and forced reader, `keys.store_fingerprint`) read and write
the same shards. A session the loader parses is stored with the rows of every frame, in frame
files beside the shards (`evalkit.store.frame_files`, named by the row's `frames` field); the
sweep reads such a row like any other, and the loader takes a row stored without them (a
sweep's) as a miss (`frames=True`), so the session is parsed once more and stored with them.
Frame files no row names any more are removed once a run has read every shard.

Location: `--cache-dir`, else `$XDG_CACHE_HOME/evalkit`, else `~/.cache/evalkit`.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import json
import math
import operator
import os
import re
import stat
import sys
import time
from array import array
from collections.abc import Collection, Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import evalkit
from evalkit.formats.files import read_at_most
from evalkit.store.keys import (
    RACY_NS,
    STORE_SUBDIR,
    code_fingerprint,
    default_cache_dir,
    limits_suffix,
    store_directory,
)
from evalkit.store.manifest import (
    FileManifest,
    StoredSession,
    file_state,
    regular_file_digest,
    session_files,
)
from evalkit.store.rows import CALL_FIELDS, PAYLOAD_FIELDS, STATUSES, PayloadField
from evalkit.store.temps import remove_stale_temps, replace_file

# `evalkit.store.frame_files` (and the column declarations it reads) is imported by the methods
# that read or write frame files: a sweep that stores no frames never builds those declarations.

__all__ = [
    "CorpusStore",
    "default_cache_dir",
    "code_fingerprint",
    "limits_suffix",
    "MAX_SHARD_BYTES",
]

_SUBDIR = STORE_SUBDIR
_SHARD = re.compile(r"^shard-[0-9a-f]{16}-[0-9a-f]{32}\.parquet$")
MAX_SHARD_BYTES = 256 * 1024 * 1024  # a larger file is not one of ours: refused and removed
# A warm sweep holds one shard's rows at a time (`CorpusStore.lookup_all`), so the rows of a
# shard bound its memory whatever the corpus size (issue 16): shards are written, and merged
# shards cut, at about a hundred rows (a 30x corpus of 4,020 sessions is 32 shards).
_ROWS_PER_SHARD = 128  # merged shards are cut at this many rows
_SMALL_SHARD_BYTES = 4 * 1024 * 1024  # only shards smaller than this are merged again
# Merge a directory's shards when there are more than this many beyond those its live sessions
# fill (one per `_ROWS_PER_SHARD` sessions), so a large corpus is not rewritten by every sweep.
_MERGE_AT = 8
FRAME_FILE_GRACE_NS = 60 * 10**9  # a frame file no row names is removed once this old
FLUSH_ROWS = 128  # rows gathered before a shard is written
# Shards whose sessions' frame rows one frame file holds: a shard waits (its rows held as frame
# tables, not as dicts) until this many have gathered, so a warm load reads fewer, larger files
# (reading one costs one to two milliseconds whatever its size, most of it per column): at 8,
# a 10x corpus's frames are two files each, a 100x corpus's fourteen. (At 16 a warm load reads
# half as many again, but a cold 100x load, which holds the waiting shards' tables, peaks 12 MB
# higher.)
FRAME_FILE_SHARDS = 8
# Shards a store holds back for the parser workers until they are done parsing (`write_with`),
# or for after the output (`writes_after_output`): at most this many, and at most this many bytes
# of pickled entries (`put`'s, about 0.7 KB a session: 64 MiB is some 90,000 sessions). Within
# both, every shard waits: handed over mid-parse, a shard takes a worker off the parse while this
# process parses alone, and measured at 30x (31 shards, when the bound was 16) that cost a cold
# `--json` sweep more, to its output and to its exit, than writing them all after the parse.
HELD_WRITES = 1024
HELD_BYTES = 64 << 20
# Shards not yet started by the workers once a command's output is out, at least, for its process
# to take them back and write them itself (`writes_after_output(exits=True)`): its own import of
# pyarrow costs about as much as writing four, so fewer would only add CPU. Measured, cold
# `--json -j 2`: at 30x (31 shards) the exit came 5% sooner; at 10x (10 shards, 6 or so not
# started) it did not.
TAKE_BACK_AT = 8


def _over_budget(held: list[bytes]) -> bool:
    """Whether the shards `held` back pass `HELD_WRITES` or `HELD_BYTES`."""
    return len(held) > HELD_WRITES or sum(map(len, held)) > HELD_BYTES


_INDEX_SUFFIX = ".index.json"
_INDEX_VERSION = 3  # 2: JSON values as themselves; 3: a digest of the document


# --- text in and out of Arrow ------------------------------------------------------------------
# Strings are stored as bytes: a path or a reason may hold a lone surrogate (from a JSON escape,
# or a file name that is not UTF-8), which Arrow's UTF-8 strings cannot carry.


def _b(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _s(b: bytes) -> str:
    return b.decode("utf-8", "surrogatepass")


@lru_cache(maxsize=1)
def _schema():
    import pyarrow as pa

    blist = pa.list_(pa.binary())
    kinds = {
        "str": pa.binary(),
        "str?": pa.binary(),
        "int": pa.int64(),
        "bool": pa.bool_(),
        "str-list": blist,
        "calls": pa.list_(pa.list_(pa.int64())),
        "json": pa.binary(),  # JSON text (see _encode)
    }
    fields = [
        pa.field("session", pa.binary(), nullable=False),
        pa.field("files", blist, nullable=False),
        pa.field("states", pa.list_(pa.list_(pa.int64())), nullable=False),
        pa.field("digests", blist, nullable=False),
        pa.field("racy", pa.bool_(), nullable=False),
    ]
    fields += [pa.field("p_" + f.name, kinds[f.kind]) for f in PAYLOAD_FIELDS]
    return pa.schema(fields)


# The side index's columns: the shard's, each with how its values are held in JSON ("b": bytes
# as text, "b[]": a list of bytes as texts, "j": JSON text as the value it holds, "=": as they
# are). Read back, they are the columns `_rows_of` checks, as a shard's are.
_BYTES_KINDS = {"str": "b", "str?": "b", "json": "j", "str-list": "b[]"}
_INDEX_COLUMNS: tuple[tuple[str, str], ...] = (
    ("session", "b"),
    ("files", "b[]"),
    ("states", "="),
    ("digests", "b[]"),
    ("racy", "="),
) + tuple(("p_" + f.name, _BYTES_KINDS.get(f.kind, "=")) for f in PAYLOAD_FIELDS)


def _to_index(value: Any, how: str) -> Any:
    if value is None or how == "=":
        return value
    if how == "j":
        return json.loads(value)
    return _s(value) if how == "b" else [_s(x) for x in value]


def _index_doc(rows: Sequence[dict[str, Any]], shard: bytes) -> bytes:
    """The side index of a shard holding `rows` whose bytes are `shard`: the JSON text of
    `{"version", "shard_sha256", "rows", "fast", "columns"}` (`_index_columns` reads it).

    A JSON payload column ("j") is the rows' JSON texts put between brackets as they are (no
    value is decoded and encoded again: that was half of writing a shard); the other columns
    are encoded here, as `json.dumps` encodes them."""
    parts = []
    fast = True
    for c, how in _INDEX_COLUMNS:
        if how == "j":
            texts = [_NULL if r.get(c) is None else r[c] for r in rows]
            column = b"[" + b",".join(texts) + b"]"
            fast = fast and _reads_fast_text(column)
        else:
            values = [_to_index(r.get(c), how) for r in rows]
            # ASCII JSON: a lone surrogate in a path or reason is kept as its escape; Python's
            # JSON keeps ints apart from floats, and NaN and the infinities (allow_nan).
            text = _INDEX_JSON(values)
            fast = fast and _reads_fast(values, text)
            column = text.encode()
        parts.append(b'"' + c.encode() + b'":' + column)
    digest = hashlib.sha256(shard).hexdigest()
    # orjson reads this document exactly as Python's JSON does (`fast`).
    body = (
        f'{{"version":{_INDEX_VERSION},"shard_sha256":"{digest}","rows":{len(rows)},'
        f'"fast":{"true" if fast else "false"},"columns":{{'
    ).encode()
    return _frame_index(body + b",".join(parts) + b"}}")


_NULL = b"null"
_INDEX_JSON = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
# A run of digits long enough to be an integer orjson may read as a float (past 64 bits).
_LONG_DIGITS = re.compile(rb"-?[0-9]{19,}")
_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19


def _reads_fast_text(text: bytes) -> bool:
    """Whether orjson reads the JSON `text` (of values `json.dumps` wrote) as Python's JSON
    does: no NaN or infinity, and no integer outside 64 bits (any digit run of 19 or more that
    is one counts, inside a string too: that only costs the index its fast reading). A lone
    surrogate's escape orjson refuses to read, so the reader then takes Python's JSON."""
    if b"NaN" in text or b"Infinity" in text:
        return False
    if _LONG_RUN not in text.translate(_AS_ZERO):  # a substring search, not a regex scan
        return True
    return all(_I64_MIN <= int(m) < _U64_END for m in _LONG_DIGITS.findall(text))


def _reads_fast(columns: Any, text: str) -> bool:
    """`_fast_decoding(columns)`, without walking every value in Python: orjson refuses to
    write an integer outside 64 bits (the one value it reads otherwise than Python's JSON),
    and a NaN or an infinity shows in `text`, the columns' JSON (the word inside a string
    only costs the index its fast reading, never a value)."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency; without it, the walk
        return _fast_decoding(columns)
    try:
        orjson.dumps(columns)
    except TypeError:  # orjson.JSONEncodeError: an integer past 64 bits, or a lone surrogate
        return _fast_decoding(columns)
    return "NaN" not in text and "Infinity" not in text


def _frame_index(body: bytes) -> bytes:
    """A side index file: the document's own digest first, at a fixed place, then the document
    (`_index_body`), so that a damaged index whose values would still pass the checks is a
    miss, never a wrong number. The file is still one JSON object."""
    return _INDEX_HEAD + hashlib.sha256(body).hexdigest().encode() + _INDEX_MID + body + b"}"


# `{"sha256":"<64 hex digits>","index":<document>}`
_INDEX_HEAD, _INDEX_MID = b'{"sha256":"', b'","index":'
_DIGEST_AT = len(_INDEX_HEAD)
_BODY_AT = _DIGEST_AT + 64 + len(_INDEX_MID)


def _index_body(data: bytes) -> bytes | None:
    """The document of a side index file whose digest matches it, else None."""
    digest, body = data[_DIGEST_AT : _DIGEST_AT + 64], data[_BODY_AT:-1]
    if (
        not data.startswith(_INDEX_HEAD)
        or data[_DIGEST_AT + 64 : _BODY_AT] != _INDEX_MID
        or not data.endswith(b"}")
        or hashlib.sha256(body).hexdigest().encode() != digest
    ):
        return None
    return body


_I64_MIN, _U64_END = -(2**63), 2**64


def _fast_decoding(value: Any) -> bool:
    """Whether orjson decodes the JSON of `value` to the very values Python's JSON gives.

    It does for every value but an integer outside 64 bits, which it reads as a float without
    a word (NaN, the infinities and lone surrogates it refuses, so those need no flag; they
    are counted here too, so that such an index goes straight to Python's JSON).
    """
    stack = [value]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is list:
            stack.extend(x)
        elif t is dict:
            stack.extend(x.values())
        elif t is int:
            if not _I64_MIN <= x < _U64_END:
                return False
        elif t is float:
            if not math.isfinite(x):
                return False
    return True


def _decode_index(data: bytes) -> Any:
    """The side index document: by orjson when the index says it reads it exactly (and it
    does read it), else by Python's JSON."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency; without it Python's JSON reads it
        orjson = None
    if orjson is not None:
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            doc = None
        if type(doc) is dict and doc.get("fast") is True:
            return doc
    return json.loads(data)


def _index_columns(data: bytes, shard: bytes) -> dict[str, list[Any]] | None:
    """The columns a side index holds for the shard whose bytes are `shard`, or None when it
    is not an index of exactly these bytes (the values are checked by `_rows_of`, as a
    shard's)."""
    body = _index_body(data)
    if body is None:
        return None
    try:
        doc = _decode_index(body)
    except (ValueError, RecursionError):
        return None
    if type(doc) is not dict or doc.get("version") != _INDEX_VERSION:
        return None
    if doc.get("shard_sha256") != hashlib.sha256(shard).hexdigest():
        return None
    n, columns = doc.get("rows"), doc.get("columns")
    if type(n) is not int or type(columns) is not dict:
        return None
    if set(columns) != {c for c, _ in _INDEX_COLUMNS}:
        return None
    if not all(type(v) is list and len(v) == n for v in columns.values()):
        return None
    return columns


def _read_bounded(path: str) -> bytes | None | bool:
    """The bytes of the regular file `path`; None when it is over `MAX_SHARD_BYTES`; False when
    it is not a regular file that can be opened (vanished, a symbolic link, a FIFO, a device)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return False
        if st.st_size > MAX_SHARD_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = read_at_most(fh, MAX_SHARD_BYTES + 1)  # not a 256 MB buffer each time
    except OSError:
        return False
    finally:
        os.close(fd)
    return data if len(data) <= MAX_SHARD_BYTES else None


def _index_path(shard_path: str) -> str:
    return shard_path[: -len(".parquet")] + _INDEX_SUFFIX


def _bitmap(flags: Sequence[bool]) -> bytes:
    """Arrow's bit-packed booleans (least significant bit first)."""
    out = bytearray((len(flags) + 7) // 8)
    for i, f in enumerate(flags):
        if f:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


_OFFSET = "i" if array("i").itemsize == 4 else "l"


def _arrow(t: Any, values: Sequence[Any]) -> Any:
    """An Arrow array of type `t` from Python values, built from its buffers.

    Equivalent to `pa.array(values, t)`, which makes pyarrow import pandas (a quarter of a
    second a sweep would pay for nothing) to check whether `values` is a pandas object. Each
    buffer is made by one pass in C where it can be (`accumulate`, `join`, `array`).
    """
    import pyarrow as pa

    n = len(values)
    nulls = None in values
    validity = pa.py_buffer(_bitmap([v is not None for v in values])) if nulls else None
    present = [v for v in values if v is not None] if nulls else values
    if pa.types.is_binary(t) or pa.types.is_list(t):
        sizes = (0 if v is None else len(v) for v in values) if nulls else map(len, values)
        offsets = array(_OFFSET, [0])
        offsets.extend(itertools.accumulate(sizes))
        if pa.types.is_binary(t):
            bufs = [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(present))]
            return pa.Array.from_buffers(t, n, bufs)
        child = _arrow(t.value_type, list(_chain(present)))
        return pa.Array.from_buffers(t, n, [validity, pa.py_buffer(offsets)], children=[child])
    if pa.types.is_boolean(t):
        return pa.Array.from_buffers(t, n, [validity, pa.py_buffer(_bitmap(values))])
    code = "q" if pa.types.is_int64(t) else "d"
    data = array(code, [0 if v is None else v for v in values] if nulls else values)
    return pa.Array.from_buffers(t, n, [validity, pa.py_buffer(data)])


# What a shard is written from: rows (`CorpusStore._row`), or (log, payload, manifest) entries
# whose rows are built only when the shard is written (`CorpusStore.put`).
_Entry = dict[str, Any] | tuple[str, dict[str, Any], FileManifest]


def _rows_of_entries(entries: Sequence[_Entry]) -> list[dict[str, Any]]:
    return [e if isinstance(e, dict) else CorpusStore._row(*e) for e in entries]


def _table(rows: Sequence[_Entry]) -> Any:
    import pyarrow as pa

    rows = _rows_of_entries(rows)
    schema = _schema()
    columns = [_arrow(f.type, [r.get(f.name) for r in rows]) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _encode(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "json":
        # Python's JSON keeps what a payload holds: ints apart from floats, NaN and infinities,
        # and lone surrogates (escaped), which Arrow strings and orjson cannot carry.
        return _PAYLOAD_JSON(value).encode()
    if kind in ("str", "str?"):
        return _b(value)
    if kind == "str-list":
        return [_b(x) for x in value]
    if kind == "calls":
        return [list(c) for c in value]
    return value


# `json.dumps(value, ensure_ascii=True, allow_nan=True, separators=(",", ":"))` made once:
# `json.dumps` with options builds an encoder at every call (a sweep encodes ~20 values a row).
_PAYLOAD_JSON = json.JSONEncoder(ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode

# A row's payload columns: (column, payload field, its default, its kind).
_ROW_FIELDS = tuple(("p_" + f.name, f.name, f.default, f.kind) for f in PAYLOAD_FIELDS)

_NONE = type(None)
_BAD = object()  # stands for a stored value that cannot be what this version writes


def _text_column(values: list[Any]) -> list[Any] | None:
    """A shard's bytes column as text (None stays None), or None if a value is not UTF-8."""
    try:
        return [None if v is None else _s(v) if type(v) is bytes else _BAD for v in values]
    except UnicodeDecodeError:
        return None


def _json_value(text: Any) -> Any:
    # A shard holds a JSON value as its text; no value (None) is no text, never `null`.
    value = json.loads(text) if type(text) is bytes else _BAD
    return _BAD if value is None else value


def _shard_columns(columns: dict[str, list[Any]]) -> dict[str, list[Any]] | None:
    """A shard's columns in the side index's form (text for bytes, JSON text decoded), or
    None when a value cannot be decoded."""
    out: dict[str, list[Any]] = {}
    for c, how in _INDEX_COLUMNS:
        values = columns[c]
        if how == "b":
            conv = _text_column(values)
        elif how == "b[]":
            conv = []
            for v in values:
                item = _text_column(v) if type(v) is list else None if v is None else [_BAD]
                if item is None and v is not None:
                    return None
                conv.append(item)
        elif how == "j":
            try:
                conv = [None if v is None else _json_value(v) for v in values]
            except (UnicodeDecodeError, ValueError, RecursionError):
                return None
        else:
            conv = values
        if conv is None:
            return None
        out[c] = conv
    return out


def _types(values: Iterable[Any]) -> set[type]:
    return set(map(type, values))


_chain = itertools.chain.from_iterable
_HEX = re.compile(r"[0-9a-f]*\Z")
_NON_NULL = {"str": {str}, "int": {int}, "bool": {bool}}


def _lists_of(values: list[Any], item: set[type], *, null: bool) -> bool:
    """Every value a list (or None when `null`) whose items are of the types `item`."""
    if not _types(values) <= ({list, _NONE} if null else {list}):
        return False
    return _types(_chain(v for v in values if v is not None)) <= item


def _column_ok(f: PayloadField, values: list[Any]) -> bool:
    """Every stored value of a payload column is of the field's kind, or None (whether None may
    stand for it is decided per row)."""
    kind = f.kind
    if kind in ("str", "str?", "int", "bool"):
        return _types(values) <= _NON_NULL[kind.rstrip("?")] | {_NONE}
    if kind == "str-list":
        return _lists_of(values, {str}, null=True)
    if kind == "calls":
        if not _lists_of(values, {list}, null=True):
            return False
        calls = list(_chain(v for v in values if v is not None))
        return set(map(len, calls)) <= {len(CALL_FIELDS)} and _types(_chain(calls)) <= {int}
    if kind == "json":
        present = [v for v in values if v is not None]
        if any(v is _BAD for v in present):
            return False
        if f.check_column is not None:
            return f.check_column(present)
        return f.check is None or all(map(f.check, present))
    return False


def _manifest_ok(columns: dict[str, list[Any]]) -> bool:
    """The files, states and digests of every row: one of each per file, at least one file."""
    files, digests, states = columns["files"], columns["digests"], columns["states"]
    if not (_types(columns["session"]) <= {str} and _types(columns["racy"]) <= {bool}):
        return False
    if not all(_lists_of(c, t, null=False) for c, t in ((files, {str}), (digests, {str}))):
        return False
    if not _lists_of(states, {list}, null=False):
        return False
    counts = list(map(len, files))
    if 0 in counts or list(map(len, states)) != counts or list(map(len, digests)) != counts:
        return False
    each = list(_chain(states))
    if set(map(len, each)) - {4} or not _types(_chain(each)) <= {int}:
        return False
    hexes = [d for d in _chain(digests) if d]  # a digest is "" (absent) or 64 hex digits
    return set(map(len, hexes)) <= {64} and _HEX.match("".join(hexes)) is not None


# A parsed session's payload: the leading fields that every payload holds (None is allowed only
# for a `str?` one), then the optional ones, left out when None; in `PAYLOAD_FIELDS` order.
_LEAD = next((i for i, f in enumerate(PAYLOAD_FIELDS) if f.optional), len(PAYLOAD_FIELDS))
_LEAD_NAMES = tuple(f.name for f in PAYLOAD_FIELDS[:_LEAD])
_NOT_NULL = tuple(i for i, f in enumerate(PAYLOAD_FIELDS[:_LEAD]) if f.kind != "str?")
_REST = tuple((f.name, f.optional, f.kind == "str?") for f in PAYLOAD_FIELDS[_LEAD:])
_not_null = operator.itemgetter(*_NOT_NULL) if len(_NOT_NULL) > 1 else None


def _payload(values: tuple[Any, ...]) -> dict[str, Any] | None:
    """The payload of one row's payload values (each already of its field's kind), or None
    when it is not one this version writes."""
    status, reason = values[0], values[1]
    if status not in STATUSES or (reason is None) != (status == "parsed"):
        return None
    if status in ("crash", "skipped"):  # such a payload is its status and reason only
        return {"status": status, "reason": reason}
    lead = values[:_LEAD]
    if None in (_not_null(lead) if _not_null is not None else [lead[i] for i in _NOT_NULL]):
        return None  # a parsed session's payload holds every other field
    payload = dict(zip(_LEAD_NAMES, lead, strict=True))
    for (name, optional, nullable), value in zip(_REST, values[_LEAD:], strict=True):
        if value is None:
            if optional:
                continue  # absent, as in a fresh payload
            if not nullable:
                return None
        payload[name] = value
    return payload


def _rows_of(columns: dict[str, list[Any]]) -> list[_Row] | None:
    """The rows of a shard's (or a side index's) columns, or None unless every value is
    exactly what this version writes: checked column by column, then row by row."""
    if not _manifest_ok(columns):
        return None
    payload_columns = []
    for f in PAYLOAD_FIELDS:
        values = columns["p_" + f.name]
        if not _column_ok(f, values):
            return None
        payload_columns.append(values)
    rows = []
    for session, files, states, digests, racy, values in zip(
        columns["session"],
        columns["files"],
        columns["states"],
        columns["digests"],
        columns["racy"],
        zip(*payload_columns, strict=True),
        strict=True,
    ):
        payload = _payload(values)
        if payload is None:
            return None
        rows.append(
            _Row(session, tuple(files), tuple(map(tuple, states)), tuple(digests), racy, payload)
        )
    return rows


class _Row:
    """A validated row: the session's files, their states and digests, and the payload."""

    __slots__ = ("session", "files", "states", "digests", "racy", "payload")

    def __init__(
        self,
        session: str,
        files: tuple[str, ...],
        states: tuple[tuple[int, ...], ...],
        digests: tuple[str, ...],
        racy: bool,
        payload: dict[str, Any],
    ) -> None:
        self.session = session
        self.files = files
        self.states = states
        self.digests = digests
        self.racy = racy
        self.payload = payload


def holds_shards(directory: str | os.PathLike[str]) -> bool:
    """Whether a store directory holds a file named as a shard (unread: a damaged one counts)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return any(map(_SHARD.match, names))


# Stores whose shard writes, handed to the parser workers, are waited for when
# `writes_after_output` ends (None: outside it, `finish` waits for them itself).
_after_output: list[CorpusStore] | None = None
_exits = False  # within `writes_after_output(exits=True)`


@contextlib.contextmanager
def writes_after_output(*, exits: bool = False) -> Iterator[None]:
    """Within: a store's shards written by the parser workers (`CorpusStore.write_with`) are
    not waited for when the sweep ends, but when this block does, so a command prints its
    output first, while the workers still write; a serial sweep's shards (its last ones, past
    `HELD_WRITES` or `HELD_BYTES`) are written here once the block ends, after the output.

    `exits`: this process ends once the block does (the command line's own process). The
    shards written here then import pyarrow without numpy, when numpy is not loaded yet, as a
    parser worker's do (`_pyarrow_without_numpy`): a serial sweep's exit comes sooner by most
    of numpy's import. And of a parallel sweep's shards, those no worker has started once the
    output is out are taken back and written here, from the last, while the workers write
    from the first. Never for a caller that goes on: pyarrow imported so must not meet numpy
    later in the process.

    The store is complete once the block is left, by an error too (a usage error found after
    the sessions were parsed keeps what was parsed): a command's process never ends before its
    shards are written. Left by Ctrl-C, the writes not yet started are dropped (a missing
    shard is a miss, parsed again next time) and those under way are finished.
    """
    global _after_output, _exits
    outer, _after_output = _after_output, []
    outer_exits, _exits = _exits, exits
    interrupted = False
    try:
        yield
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        stores, _after_output, _exits = _after_output, outer, outer_exits
        for store in stores:
            store.wait_writes(cancel=interrupted)


def write_shard(directory: str, fingerprint: str, root: str, rows: list[_Entry]) -> str | None:
    """Write `rows` (`CorpusStore._row`s, or the entries they are built from) as one shard of
    the store directory `directory`, then its side index; the shard's name, or None when it
    could not be written (a read-only or full cache directory only costs speed).

    Run by the store itself or by a parser worker (`CorpusStore.write_with`): all it needs is
    in its arguments, and every file goes through a temporary file renamed into place, so a
    write interrupted anywhere leaves nothing a later run trusts.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    where = Path(directory)
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    write_record(where, fingerprint, root)
    rows = _rows_of_entries(rows)
    try:
        sink = pa.BufferOutputStream()
        pq.write_table(_table(rows), sink)
        data = sink.getvalue().to_pybytes()
    except pa.ArrowException:
        return None
    import uuid  # only a sweep that writes needs it

    name = f"shard-{time.time_ns():016x}-{uuid.uuid4().hex}.parquet"
    if not replace_file(where, where / name, data, ".parquet"):
        return None
    # After the shard is in place: a shard without its index (an interrupted write) is read
    # from the Parquet, and no index is ever left without its shard.
    replace_file(where, _index_path(os.path.join(where, name)), _index_doc(rows, data), ".json")
    return name


def write_pickled_shard(
    directory: str, fingerprint: str, root: str, rows: bytes, last: bool = False
) -> str | None:
    """`write_shard` of rows (or their entries) pickled by this version's store
    (`CorpusStore._write_soon`), in a parser worker; `last`: the worker has no more sessions
    to parse (pyarrow is then imported without numpy, `_pyarrow_without_numpy`)."""
    import pickle

    if last:
        _pyarrow_without_numpy()
    return write_shard(directory, fingerprint, root, pickle.loads(rows))


def _pyarrow_without_numpy(*, worker: bool = True) -> None:
    """Import pyarrow without numpy in a parser worker that has loaded neither and has no
    more sessions to parse (its only use of pyarrow is then writing shards); `worker=False`:
    in this process, whose caller knows it does nothing more but write shards and exit
    (`writes_after_output(exits=True)`).

    Writing a shard needs only Arrow's buffers and Parquet, which pyarrow (16 and later) gives
    without numpy, and numpy is about 60% of pyarrow's import (measured: 0.07 against 0.17 s
    of CPU); the shard's bytes are the same. A pyarrow that needs numpy is then imported as
    usual. numpy stays importable, but a pyarrow imported without it must never be given
    numpy's values (measured: converting a numpy array then crashes the process), hence
    only a process that does nothing else with pyarrow.
    """
    if "pyarrow" in sys.modules or "numpy" in sys.modules:
        return
    import multiprocessing

    if worker and multiprocessing.parent_process() is None:
        return  # not a worker: this process may want numpy's pyarrow later
    sys.modules["numpy"] = None  # type: ignore[assignment]  # `import numpy` fails meanwhile
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:  # an older pyarrow: imported again below, with numpy
        for name in [n for n in sys.modules if n == "pyarrow" or n.startswith("pyarrow.")]:
            del sys.modules[name]
    finally:
        del sys.modules["numpy"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused: reading a store (or loading a corpus) makes many
    objects, all kept and none in a cycle, so every collection meanwhile would walk the heap
    for nothing.

    Switched back on, the collector would walk them all at once, at the next allocation: they
    are all in its youngest generation (measured after a cold 100x load: 0.16 s, two
    collections, over objects none of which is garbage). So they are moved to its oldest
    generation first (`gc.freeze` then `gc.unfreeze`), where only a full collection looks at
    them, as at any that comes later; the caller's young objects go with them, so a cycle
    among those is freed by the next full collection rather than a young one. Not when the
    process keeps frozen objects of its own (a server that froze its heap before forking):
    they stay as they are."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


class CorpusStore:
    """Analysed sessions of one swept directory. `CorpusStore(None, root)` is disabled.

    Args:
        directory: The cache directory (a `corpus-store-v1/` subdirectory is used), or None.
        root: The swept directory; its resolved path selects the shard directory.
        fingerprint: Overrides `code_fingerprint()`; tests use it to simulate a new version.
        verify: Re-hash every file of a hit instead of trusting its recorded state.
        frames: The corpus loader's lookups: a stored row is a hit only when every frame's
            rows of its session are stored too (`frame_files`); a sweep's row, stored without
            them, is then a miss, and the session is parsed and stored again with them.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None,
        root: str | os.PathLike[str],
        *,
        fingerprint: str | None = None,
        verify: bool = False,
        frames: bool = False,
    ) -> None:
        self.frames = frames
        if fingerprint is None:  # a store that is off keys nothing: no digest of the code
            fingerprint = code_fingerprint() if directory is not None else ""
        self.fingerprint = fingerprint + limits_suffix()
        self.root = os.fspath(root)
        self._prefix = os.path.join(self.root, "")
        self.verify = verify
        self.hits = 0
        self.misses = 0
        self.removed = 0  # shards refused and removed on read
        # Sessions `put` took (each with its manifest), and whether any row or frame file could
        # not be written: when every miss was stored, the next run hits every session.
        self.stored = 0
        self.lost_writes = False
        self.directory: Path | None = None
        if directory is not None:
            self.directory = store_directory(directory, self.fingerprint, self.root)
        self._rows: dict[str, list[_Row]] | None = None
        self._shards: list[str] = []
        self._written: list[str] = []
        self._pool: Any = None  # parser workers that write this store's shards (`write_with`)
        self._end: Any = None  # their pool, ended once the shards are written (`wait_writes`)
        self._writes: list[Any] = []  # their shards being written (futures of names)
        self._queued: list[bytes] = []  # shards held back for them, pickled entries
        self._later: list[bytes] = []  # shards to write here after the output, pickled entries
        # Shards handed to the workers that this process may take back and write itself, if no
        # worker has started them once its output is out (`writes_after_output(exits=True)`).
        self._may_take_back: dict[Any, bytes] = {}
        self._exits_after = False  # the process ends once they are written (`_wait_writes`)
        self._hold = True
        self._refresh: list[dict[str, Any]] = []
        self._pending: list[_Entry] = []  # a session's row, or what it is built from
        # Frame rows of pending sessions, (index into `_pending`, log, rows by frame).
        self._pending_frames: list[tuple[int, str, dict[str, list[dict[str, Any]]]]] = []
        self._refused_frames: set[str] = set()  # frame files found damaged: their rows miss
        # This run's frame rows (the loader's parses): the sessions whose rows `put` took, each
        # one's `FrameRef` once its frame files are written, or its rows handed back when they
        # could not be; and the tables written, so the loader reads them without the files.
        self._taken: set[str] = set()
        self._written_refs: dict[str, dict[str, list[Any]]] = {}
        self._unwritten: dict[str, dict[str, list[dict[str, Any]]]] = {}
        self._written_tables: dict[tuple[str, str], Any] = {}
        # Shards waiting for their sessions' frame files: (rows, [(index into rows, log)],
        # the sessions' frame tables or None), in the order they were flushed.
        self._held: list[tuple[list[_Entry], list[tuple[int, str]], Any]] = []
        self._held_shards = 0
        self._frame_files_seen: set[str] = set()  # named by a row read or written this run
        self._read_all = False  # every shard was read (so unnamed frame files can go)

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    # --- reading ---------------------------------------------------------------------------

    def _shard_names(self) -> list[str]:
        assert self.directory is not None
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        return sorted(n for n in names if _SHARD.match(n))

    def _read_shard(self, name: str) -> list[_Row] | None:
        """The rows of one shard, or None when it is not a valid shard (it is then removed).

        From its side index when that is an index of exactly the shard's bytes and every row
        passes; else from the Parquet itself.
        """
        from evalkit.store.frame_files import referenced

        assert self.directory is not None
        path = os.path.join(self.directory, name)
        data = _read_bounded(path)
        if data is False:
            return None  # vanished, a symbolic link or not a regular file: not ours, left alone
        rows = None
        if data is not None:
            index = _read_bounded(_index_path(path))
            if type(index) is bytes:
                rows = self._valid_rows(_index_columns(index, data))  # type: ignore[arg-type]
            if rows is None:
                raw = self._parquet_rows(data)  # type: ignore[arg-type]
                rows = self._valid_rows(None if raw is None else _shard_columns(raw))
        if rows is None:
            self._remove(path)
            return None
        self._frame_files_seen |= referenced(r.payload for r in rows)
        return rows

    @staticmethod
    def _parquet_rows(data: bytes) -> dict[str, list[Any]] | None:
        """The columns of a shard's bytes when it has exactly this version's schema."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pq.ParquetFile(pa.BufferReader(data)).read()
            if table.schema.remove_metadata().equals(_schema()):
                return table.to_pydict()
        except Exception:  # noqa: BLE001 — any unreadable shard is a miss, never an error
            pass
        return None

    @staticmethod
    def _valid_rows(columns: dict[str, list[Any]] | None) -> list[_Row] | None:
        """The rows as `_Row`s, or None unless every one is exactly what this version writes."""
        if columns is None:
            return None
        try:
            return _rows_of(columns)
        except Exception:  # noqa: BLE001 — any unreadable row is a miss, never an error
            return None

    def _remove(self, path: str, *, refused: bool = True) -> None:
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)
                self.removed += refused
        index = _index_path(path)  # a shard's side index goes with it
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(index).st_mode):
                os.unlink(index)

    def _load(self) -> dict[str, list[_Row]]:
        if self._rows is None:
            self._rows = {}
            if self.directory is not None:
                with gc_paused():
                    for name in self._shard_names():
                        rows = self._read_shard(name)
                        if rows is None:
                            continue
                        self._shards.append(name)
                        for r in rows:
                            self._rows.setdefault(r.session, []).append(r)
                self._read_all = True
        return self._rows

    def lookup(self, ref: StoredSession) -> dict[str, Any] | None:
        """The stored payload of a session whose files are unchanged, else None (a miss)."""
        if not self.enabled:
            self.misses += 1
            return None
        candidates = self._load().get(ref.log)
        if candidates:
            seen = self._seen(ref)
            for row in reversed(candidates):  # the latest shard first
                payload = self._hit(ref, seen, row)
                if payload is not None:
                    return payload
        self.misses += 1
        return None

    def lookup_all(self, refs: Sequence[StoredSession]) -> Iterator[tuple[int, dict[str, Any]]]:
        """`lookup` of every ref, as `(index into refs, payload)` for each hit, a shard at a time.

        The same hits as `lookup`, and counted the same, but the shards are read newest first,
        each one's rows let go before the next is read, and each session takes the first of its
        rows that matches (newest shard first, then the last row of a shard first: the very row
        `lookup` takes). Memory is then one shard's rows and what the caller keeps of each hit,
        not every stored row at once (issue 16). A hit is yielded as soon as its shard is read,
        so not in the order of `refs`; the misses are counted once every shard is read.
        """
        if not self.enabled or self._rows is not None:
            yield from self._lookup_each(refs)
            return
        # Session → the index of its ref not yet resolved (a list when several refs share a
        # log, which discovery never gives): a dict of ints, as small as it can be.
        open_: dict[str, Any] = {}
        for i, ref in enumerate(refs):
            j = open_.setdefault(ref.log, i)
            if j != i:
                open_[ref.log] = [*j, i] if type(j) is list else [j, i]
        seen: dict[int, tuple[tuple[str, ...], list[str], tuple[Any, ...]]] = {}
        for name in reversed(self._shard_names()):
            with gc_paused():
                rows = self._read_shard(name)
            if rows is None:
                continue
            self._shards.insert(0, name)
            for row in reversed(rows):
                waiting = open_.get(row.session)
                if waiting is None:
                    continue
                for i in waiting if type(waiting) is list else (waiting,):
                    ref = refs[i]
                    if i not in seen:
                        seen[i] = self._seen(ref)
                    payload = self._hit(ref, seen[i], row)
                    if payload is not None:
                        del seen[i]
                        if type(waiting) is list and len(waiting) > 1:
                            waiting = open_[row.session] = [j for j in waiting if j != i]
                        else:
                            del open_[row.session]
                        yield i, payload
            del rows  # the shard's rows go before the next shard is read
        self._read_all = True
        self.misses += sum(len(v) if type(v) is list else 1 for v in open_.values())

    def _lookup_each(self, refs: Sequence[StoredSession]) -> Iterator[tuple[int, dict[str, Any]]]:
        """`lookup` of each ref in turn, as `lookup_all` yields them."""
        for i, ref in enumerate(refs):
            payload = self.lookup(ref)
            if payload is not None:
                yield i, payload

    def _seen(self, ref: StoredSession) -> tuple[tuple[str, ...], list[str], tuple[Any, ...]]:
        """A session's files, their paths and their states now, as its rows are checked."""
        files = session_files(ref)
        paths = [self._prefix + f for f in files]  # os.path.join(root, f): f is relative
        return files, paths, tuple(map(file_state, paths))

    def _hit(
        self,
        ref: StoredSession,
        seen: tuple[tuple[str, ...], list[str], tuple[Any, ...]],
        row: _Row,
    ) -> dict[str, Any] | None:
        """The payload of `row` when it is a hit for `ref` (counted), else None."""
        files, paths, states = seen
        if row.files != files or row.states != states:
            return None
        if self.frames and not self._framed(row.payload):
            return None
        if (self.verify or row.racy) and not self._digests_match(paths, row):
            return None
        if row.racy and not self.verify:
            self._maybe_refresh(ref, row)
        self.hits += 1
        return row.payload

    def _framed(self, payload: dict[str, Any]) -> bool:
        """Whether a payload has every frame row its session gives (none for a crash or a
        skipped file), in frame files not found damaged."""
        from evalkit.store.frame_files import file_name

        if payload["status"] in ("crash", "skipped") or "rows_error" in payload:
            return True
        where = payload.get("frames")
        if where is None:
            return False
        return not self._refused_frames or not any(
            file_name(frame, ref[0]) in self._refused_frames for frame, ref in where.items()
        )

    def takes_rows(self, log: str) -> bool:
        """Whether `put` took this session's frame rows, to store them as frame files: once
        `flush`ed, `written_frames` gives where they are (or the rows back)."""
        return log in self._taken

    def written_frames(self, log: str) -> tuple[dict[str, list[Any]] | None, Any]:
        """After `flush`: a session's `FrameRef` into the tables this run built of its rows
        (`written_table`, whether or not their files could be written), or (None, its rows by
        frame) when no table could be built of them; nothing is kept of it after this call."""
        self._taken.discard(log)
        if log in self._written_refs:
            return self._written_refs.pop(log), None
        return None, self._unwritten.pop(log)

    def written_table(self, frame: str, hex_: str) -> Any:
        """The table of a frame file this run wrote (as `read_frame_file` reads it), or None;
        handed over once (asked again, the file is read)."""
        return self._written_tables.pop((frame, hex_), None)

    def forget_written(self) -> None:
        """Let go of the tables this run wrote (the loader has read them)."""
        self._written_tables = {}

    def refuse_frames(self, names: Iterable[str]) -> None:
        """Frame files found missing or damaged (`frame_files.read_frame_file`): a row naming
        one is a miss from now on, and the file, if it is a regular file, is removed."""
        assert self.directory is not None
        for name in names:
            self._refused_frames.add(name)
            with contextlib.suppress(OSError):
                path = os.path.join(self.directory, name)
                if stat.S_ISREG(os.lstat(path).st_mode):
                    os.unlink(path)
                    self.removed += 1

    def _digests_match(self, paths: Sequence[str], row: _Row) -> bool:
        return all(regular_file_digest(p) == d for p, d in zip(paths, row.digests, strict=True))

    def _maybe_refresh(self, ref: StoredSession, row: _Row) -> None:
        # Verified by content and now old enough: store it again as trusted by its state.
        now = time.time_ns()
        if all(s[0] < 0 or now - s[1] >= RACY_NS for s in row.states):
            manifest = FileManifest(row.files, row.states, row.digests, False)
            self._refresh.append(self._row(ref.log, row.payload, manifest))

    # --- writing ---------------------------------------------------------------------------

    @staticmethod
    def _row(log: str, payload: dict[str, Any], m: FileManifest) -> dict[str, Any]:
        row: dict[str, Any] = {
            "session": _b(log),
            "files": [_b(f) for f in m.files],
            "states": [list(s) for s in m.states],
            "digests": [d.encode() for d in m.digests],
            "racy": m.racy,
        }
        get = payload.get
        for column, name, default, kind in _ROW_FIELDS:
            row[column] = _encode(get(name, default), kind)
        return row

    def put(
        self, items: Iterable[tuple[StoredSession, dict[str, Any], FileManifest | None]]
    ) -> None:
        """Store a chunk of analysed sessions (those with a manifest).

        Rows are written as a shard once `FLUSH_ROWS` have gathered (and by `finish`), so a
        sweep writes a few shards rather than one per worker chunk.
        """
        if not self.enabled:
            return
        for ref, p, m in items:
            if m is None:
                continue
            self.stored += 1
            if "rows" in p:  # a parse's frame rows: stored as frame files when flushed
                self._pending_frames.append((len(self._pending), ref.log, p["rows"]))
                self._taken.add(ref.log)
                # The rest of its payload, its row built as its shard is written (the frame
                # files it names written first, here), as a payload without frame rows.
                p = {k: v for k, v in p.items() if k != "rows"}
            # Its row is built when its shard is written: after the output, or by a worker.
            self._pending.append((ref.log, p, m))
        if len(self._pending) >= FLUSH_ROWS:
            self.flush(hold=True)

    def flush(self, *, hold: bool = False) -> None:
        """Write the rows gathered so far as one shard, and the shards waiting for frame files.

        A shard whose sessions have frame rows waits, its rows built into frame tables at once,
        until `FRAME_FILE_SHARDS` such shards have gathered (`hold`) or until a flush without
        `hold`: their frame files are then written first (a shard never names a frame
        file not yet there), then the shards, in the order they were flushed.
        """
        from evalkit.store.frame_files import frame_tables

        if self._pending:
            rows, self._pending = self._pending, []
            framed, self._pending_frames = self._pending_frames, []
            batch = None
            if framed:
                try:
                    batch = frame_tables([(log, got) for _, log, got in framed])
                except Exception:  # noqa: BLE001 — a store that cannot be written only costs speed
                    self._unwritten.update((log, got) for _, log, got in framed)
            if batch is None and not self._held:
                self._write_soon(rows)
            else:
                placed = [(i, log) for i, log, _ in framed] if batch is not None else []
                self._held.append((rows, placed, batch))
                self._held_shards += batch is not None
        if self._held and (not hold or self._held_shards >= FRAME_FILE_SHARDS):
            self._write_held()

    def _write_held(self) -> None:
        """Write the frame files of the held shards' sessions, then the shards (their rows
        name the files only when every file was written; else they are stored without)."""
        from evalkit.store.frame_files import referenced, write_frame_tables

        assert self.directory is not None
        held, self._held, self._held_shards = self._held, [], 0
        batches = [batch for _, _, batch in held if batch is not None]
        with contextlib.suppress(OSError):  # else no file is written: only costs speed
            self.directory.mkdir(parents=True, exist_ok=True)
        tables: dict[tuple[str, str], Any] = {}
        refs, ok = write_frame_tables(self.directory, batches, tables)
        if not ok:  # the loader builds the frames from these tables: their files may be missing
            self._written_tables.update(tables)
        del tables  # else it reads the files back, a frame at a time (a cold load's peak memory)
        self.lost_writes |= not ok
        if ok:
            self._frame_files_seen |= referenced({"frames": r} for r in refs.values())
        for rows, placed, _ in held:
            for i, log in placed:
                self._written_refs[log] = refs[log]
                if ok:
                    rows[i][1]["frames"] = refs[log]  # an entry: (log, payload, manifest)
            self._write_soon(rows)

    def _write(self, rows: list[_Entry]) -> str | None:
        assert self.directory is not None
        name = write_shard(os.fspath(self.directory), self.fingerprint, self.root, rows)
        if name is not None:
            self._written.append(name)
        else:
            self.lost_writes = True
        return name

    def _write_soon(self, rows: list[_Entry]) -> None:
        """Write a shard: by a parser worker when the store was given one (`write_with`); else
        here, after the output when the caller prints first (`writes_after_output`: a serial
        sweep's last shards, within `HELD_WRITES` and `HELD_BYTES`), else now."""
        import pickle  # only a run that writes needs it

        if self._pool is None:
            if _after_output is None:
                self._write(rows)
                return
            # Pickled: what is written after the output is what was parsed, whatever the
            # caller does meanwhile with the payloads it was handed.
            self._later.append(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
            while len(self._later) > 1 and _over_budget(self._later):
                self._write(pickle.loads(self._later.pop(0)))
            return
        # Held as one bytes object until the workers are done parsing (`release_writes`), within
        # `HELD_WRITES` and `HELD_BYTES` (a larger corpus's are then written meanwhile).
        self._queued.append(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
        if not self._hold or _over_budget(self._queued):
            self._submit_queued()

    def _submit_queued(self) -> None:
        assert self.directory is not None
        queued, self._queued = self._queued, []
        # The parse is over and this process, the command line's own, has only its output to
        # print: the shards no worker has started by then it takes back and writes itself.
        back = not self._hold and _exits and _after_output is not None
        for k, rows in enumerate(queued):
            try:
                job = self._pool.submit(
                    write_pickled_shard,
                    os.fspath(self.directory),
                    self.fingerprint,
                    self.root,
                    rows,
                    not self._hold,  # the workers have nothing left to parse
                )
            except RuntimeError:  # the pool is shutting down or broken: written here
                import pickle

                for left in queued[k:]:
                    self._write(pickle.loads(left))
                return
            self._writes.append(job)
            if back:
                self._may_take_back[job] = rows

    def write_with(self, pool: Any, *, drop: bool = False) -> None:
        """Hand the shards written from now on to `pool`'s workers (a `ProcessPoolExecutor`
        whose workers are parsing this store's sessions), or stop doing so (None: the shards
        still held are handed over first).

        The parser workers then do all of a shard's work in parallel — Arrow and Parquet
        (whose import alone costs this process a quarter of a second), the side index, the
        files — and this process only gathers the rows. The shards are held back until
        `release_writes` (the workers have no more sessions to parse), so that writing never
        delays parsing: on two busy cores, every second a worker spent writing before the last
        session is parsed would delay the output by half a second. The frame files of sessions
        with frame rows are still written here (a corpus load reads them back), before the
        shards that name them are handed over.
        `finish` waits for the shards still being written, unless the caller prints its
        output first (`writes_after_output`). `drop`: the run failed, and the shards still
        held back are dropped (their sessions are parsed again next time).
        """
        if drop:
            self._queued = []
        if pool is None and self._pool is not None:
            self._hold = False  # the parsing is over
            self._submit_queued()
        self._pool, self._hold = pool, True

    def release_writes(self) -> None:
        """The workers have no more sessions to parse: hand them the shards held back, and
        every later one at once."""
        self._hold = False
        if self._pool is not None:
            self._submit_queued()

    @property
    def writing(self) -> bool:
        """Whether a shard of this store is still to be written, by a worker (`write_with`) or
        here after the output (`writes_after_output`)."""
        return bool(self._later) or any(not job.done() for job in self._writes)

    def end_after_writes(self, pool: Any) -> None:
        """Shut `pool` (whose workers write this store's shards) down once they are written
        (`wait_writes`), and not before: the parse is over, the writes are not. A pool given
        before is waited for and shut down first (a load parsing its damaged sessions again)."""
        if self._end is not None and self._end is not pool:
            self.wait_writes()
        self._end = pool

    def wait_writes(self, *, cancel: bool = False) -> None:
        """Write the shards left for after the output, and wait for those handed to workers
        (`cancel`: drop those not started yet); then end their pool (`end_after_writes`)."""
        try:
            self._wait_writes(cancel)
        finally:
            pool, self._end = self._end, None
            if pool is not None:
                # Waited for, its threads and pipes closed, before this process exits:
                # Python 3.11's exit wakes every pool still running, and one closing its pipe
                # meanwhile printed a traceback (`_python_exit`: Bad file descriptor).
                pool.shutdown(wait=True, cancel_futures=cancel)

    def _write_here(self, rows: bytes) -> None:
        """Write a shard pickled for after the output, in this process: with pyarrow alone when
        the process ends once its shards are written (`writes_after_output(exits=True)`)."""
        import pickle

        if self._exits_after:
            _pyarrow_without_numpy(worker=False)
        self._write(pickle.loads(rows))

    def _wait_writes(self, cancel: bool) -> None:
        later, self._later = self._later, []
        if later and not cancel:
            for rows in later:
                self._write_here(rows)
        back, self._may_take_back = self._may_take_back, {}
        if not self._writes:
            return
        from concurrent.futures import CancelledError  # only a run that gave writes to workers

        waiting = sum(not (job.running() or job.done()) for job in self._writes)
        if back and not cancel and waiting >= TAKE_BACK_AT:
            # The workers write from the first shard on; this process, from the last, each one
            # no worker has started yet: both end at about the same time, however fast each is.
            while self._writes and self._writes[-1] in back and self._writes[-1].cancel():
                self._write_here(back.pop(self._writes.pop()))
        back.clear()
        writes, self._writes = self._writes, []
        for job in writes:
            if cancel and job.cancel():
                continue
            try:
                name = job.result()
            except (Exception, CancelledError):  # noqa: BLE001 — a shard not written only costs speed
                name = None
            if name is not None:
                self._written.append(name)
            else:  # its sessions are parsed again next time: no plan may say they are stored
                self.lost_writes = True

    def finish(self, live: Iterable[StoredSession]) -> None:
        """After a sweep: write refreshed rows, and merge small shards when there are many.

        A merged shard keeps, for each session still in the corpus, its rows from the most
        recent shards that hold it; the shards merged are then removed.
        """
        if not self.enabled:
            return
        assert self.directory is not None
        remove_stale_temps(self.directory)  # what an interrupted writer left (issue 21)
        self._pending.extend(self._refresh)
        self._refresh = []
        self.flush()
        if self._writes or self._later:
            if _after_output is None:
                self.wait_writes()
            else:  # the caller prints first, then waits (`writes_after_output`)
                _after_output.append(self)
                self._exits_after = _exits
        self._prune_frame_files()
        live = live if isinstance(live, Collection) else list(live)
        names = self._shard_names()
        if len(names) <= _MERGE_AT + len(live) // _ROWS_PER_SHARD:
            return
        assert self.directory is not None
        # Each session still in the corpus keeps only a row of its current file list: a row of
        # another list can never be a hit, and kept through merges such rows would pile up
        # until every run merged the store again.
        keep = {_b(ref.log): [_b(f) for f in session_files(ref)] for ref in live}
        small = []
        for name in names:
            with contextlib.suppress(OSError):
                if os.lstat(self.directory / name).st_size < _SMALL_SHARD_BYTES:
                    small.append(name)
        # Oldest first, in groups of at most _ROWS_PER_SHARD rows: memory stays bounded by a
        # group, whatever the size of the store.
        merged: dict[bytes, dict[str, Any]] = {}
        sources: list[str] = []
        for i, name in enumerate(small):
            rows = self._read_rows(name)
            if rows is not None:
                sources.append(name)
                for row in rows:
                    if keep.get(row["session"]) == row["files"]:
                        merged[row["session"]] = row  # later shards win
            if len(merged) >= _ROWS_PER_SHARD or (i == len(small) - 1 and len(sources) > 1):
                if merged and self._write(list(merged.values())) is None:
                    return  # could not write: keep the sources
                for source in sources:
                    self._remove(os.path.join(self.directory, source), refused=False)
                merged, sources = {}, []

    def _prune_frame_files(self) -> None:
        """Remove the frame files no stored row names any more, once every shard was read
        (a file younger than `FRAME_FILE_GRACE_NS` may belong to a shard another process is
        writing, and stays)."""
        from evalkit.store.frame_files import FRAME_FILE

        if not self._read_all or self.directory is None:
            return
        now = time.time_ns()
        try:
            names = os.listdir(self.directory)
        except OSError:
            return
        for name in names:
            if not FRAME_FILE.match(name) or name in self._frame_files_seen:
                continue
            path = os.path.join(self.directory, name)
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode) and now - st.st_mtime_ns >= FRAME_FILE_GRACE_NS:
                    os.unlink(path)

    def _read_rows(self, name: str) -> list[dict[str, Any]] | None:
        """The raw rows of a valid shard, for merging (validated as `_read_shard` does)."""
        rows = self._read_shard(name)
        if rows is None:
            return None
        out = []
        for r in rows:
            m = FileManifest(r.files, r.states, r.digests, r.racy)  # type: ignore[arg-type]
            out.append(self._row(r.session, r.payload, m))
        return out


# --- what a store directory is for -------------------------------------------------------------
# `store.json` in each store directory, read by `evalkit cache` (`evalkit.store.admin`)
# and never by a lookup: a store without one (older evalkit) works as before.

RECORD = "store.json"
RECORD_VERSION = 1
# Every name this module writes in a store directory: shards, their side indexes, the record,
# and temporary files (`temps.temp_file`: `.tmp-` and 8 characters) of writes in progress.
# `evalkit cache prune` and `clear` remove only files with these names: a new kind of file
# written here must be named here.
# The names evalkit writes in a store directory: shards and their side indexes, the record, the
# sweep's output snapshots (`evalkit.store.snapshot`), the price table's answers
# (`evalkit.store.price_memo`), and their temporary files.
STORE_FILE = re.compile(
    r"^(?:shard-[0-9a-f]{16}-[0-9a-f]{32}(?:\.parquet|\.index\.json)"
    r"|frames-[a-z_]+-[0-9a-f]{32}\.parquet"
    r"|store\.json|(?:snapshot|plan)-[0-9a-f]{32}\.out|prices-[0-9a-f]{32}\.json"
    r"|\.tmp-[a-z0-9_]{8}\.(?:parquet|json|out))\Z"
)


def fingerprint_parts(fingerprint: str) -> dict[str, str | None]:
    """The code digest, store kind, forced format and profile digest a store fingerprint holds.

    A store's fingerprint (`keys.store_fingerprint`) is the code digest, then `…:trials:PROFILE`
    when its sessions are read with a tool profile, `…:format:NAME` with a forced reader, and
    `…:limits:DIGEST` when reading limits are set (`limits_suffix`). Older evalkit's corpus
    loader kept a store of its own, `…:frames…`: listed with that kind until pruned.
    """
    code, *rest = fingerprint.split(":")
    parts: dict[str, str | None] = {
        "code": code,
        "kind": "sweep",
        "format": None,
        "profile": None,
        "limits": None,
    }
    i = 0
    while i < len(rest):
        if rest[i] in ("frames", "trials"):
            parts["kind"] = rest[i]
        elif rest[i] in ("format", "limits") and i + 1 < len(rest):
            parts[rest[i]] = rest[i + 1]
            i += 1
        else:
            parts["profile"] = rest[i]
        i += 1
    return parts


def write_record(directory: Path, fingerprint: str, root: str) -> None:
    """Write `directory/store.json` (what the store is for) unless it is there already.

    Once per directory, atomically (a temporary file renamed into place); a failure only leaves
    the store without its record, which `evalkit cache` then shows as unknown.
    """
    path = directory / RECORD
    with contextlib.suppress(OSError):
        os.lstat(path)
        return  # there already (or something else by that name: left alone)
    doc = {
        "record": RECORD_VERSION,
        "evalkit": evalkit.__version__,
        "fingerprint": fingerprint,
        **fingerprint_parts(fingerprint),
        "corpus": root,
        "corpus_resolved": os.path.realpath(root),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    # ASCII: a lone surrogate is kept as its escape.
    replace_file(directory, path, json.dumps(doc, ensure_ascii=True, indent=1).encode(), ".json")
