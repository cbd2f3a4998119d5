"""Loading a corpus directory into frames: discover → parse records → frames (spec §7, §8.2).

`load_corpus_frames(DIR)` is the loading step of `evalkit.load_corpus` (which adds the sweep's
tables, `evalkit.tables.corpus.Corpus.sweep`). It discovers the sessions exactly as the sweep
does (`evalkit.corpus.discover`, one discovery), parses each session once, in parallel and
through the store every command shares (`evalkit.corpus.parse`, `evalkit.store.shards`), and
keeps, per session, the sweep's record and the rows of every frame from that one parse.

A stored session's rows are read from the store's frame files (`evalkit.store.frame_files`)
with pyarrow straight into pandas, its identity columns taken from this discovery: no row is
built in Python again. A parsed session's rows become frames (`evalkit.store.columns.build_frame`,
the one place rows become a frame) `LOAD_BATCH` sessions at a time as the payloads arrive, each
payload let go once its rows are taken (and stored as frame files for the next load). The
pieces are joined in discovery order (`_FrameParts`).

A load whose every row came from the store leaves a plan beside it (`_write_plan`): the next
load with the same options of the same unchanged tree walks the tree once and reads the frames
the plan keeps, without discovering or looking up a session again.

Every file of the tree is accounted for (`accounting()`), and a session that cannot be read is
reported in `errors` (or raised with `strict=True`) while the rest still loads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import operator
import os
import re
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from evalkit.corpus.discover import Discovery, Layout, SessionRef, discover, force_format, identity
from evalkit.corpus.frame_rows import FRAME_NAMES, SessionError
from evalkit.corpus.layouts import CorpusLayout, detect_layout, discover_layout, parse_layout
from evalkit.corpus.outcomes import OutcomeJoin, join_outcomes, with_outcomes
from evalkit.corpus.parse import Progress, analyse_payloads, jobs_ahead, workers_ahead
from evalkit.corpus.pricing import price_frames, resolve_prices, with_trial_results
from evalkit.corpus.records import (
    Accounting,
    SessionRecord,
    account_files,
    read_ref,
    record_from_payload,
)
from evalkit.errors import EvalkitError, UsageError
from evalkit.formats.detect import check_format
from evalkit.formats.profiles import CODEGRAPH, ProfileChoice, choose_profile, load_profile
from evalkit.metrics.prices import load_price_table
from evalkit.owned_folder import OwnedFolder
from evalkit.store.columns import build_frame, dictionary_json, name_text
from evalkit.store.frame_files import (
    assemble,
    assemble_planned,
    entry_arrays,
    file_name,
    frame_from_bytes,
    identity_table,
    memory_pool,
    read_frame_file,
    to_pandas,
    write_frame_stream,
)
from evalkit.store.keys import store_directory, store_fingerprint
from evalkit.store.price_memo import PriceMemo
from evalkit.store.shards import CorpusStore, default_cache_dir, gc_paused

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.formats.common import AgentSession
    from evalkit.session import InteractiveSession, Session

__all__ = [
    "LoadedCorpus",
    "CorpusError",
    "load_corpus_frames",
    "export_corpus",
    "Exported",
    "FrameWriter",
    "EXPORT_FORMATS",
]

EXPORT_FORMATS = ("parquet", "csv")
LAYOUTS: tuple[str, ...] = get_args(Layout)


class CorpusError(EvalkitError):
    """`strict=True`: a session of the corpus could not be read (the message names it)."""


@dataclass(frozen=True, repr=False)
class LoadedCorpus:
    """A loaded corpus directory: every discovered session once, its frames, its accounting.

    Attributes:
        root: The corpus directory.
        discovery: The sessions and file entries found (the sweep's discovery).
        records: One sweep record per discovered session, discovery order (every status).
        errors: The sessions that could not be read, as `SessionError`s (log, reason).
        tables: Every frame, built once (`frame(name)` gives a copy).
        cache_hits, cache_misses: Sessions that came from the cache / were parsed.
        outcomes: The outcome join the sessions frame holds (`evalkit.corpus.outcomes`):
            harbor `result.json` files and the `outcomes` CSV, with what could not be joined.
        runs: With a tool profile, what the trial sweep keeps of each headless run
            (`evalkit.corpus.records.run_payload`), by the session's log.
    """

    root: Path
    discovery: Discovery
    records: tuple[SessionRecord, ...]
    errors: tuple[SessionError, ...]
    tables: dict[str, pd.DataFrame] = field(repr=False)
    cache_hits: int = 0
    cache_misses: int = 0
    # issue 23: the tool profile the sessions were read with and why (`ProfileChoice`), and the
    # layout recognised when none was given (`LayoutChoice`, None when it was given or none was).
    profile_choice: Any = None
    layout_choice: Any = None
    outcomes: OutcomeJoin | None = field(default=None, repr=False)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        # Short, and without the absolute path: a notebook shows it as output. A corpus loaded
        # by its plan tells the counts its plan kept (its records are not made for this).
        counts = self.__dict__.get("_counts")
        if counts is None:
            counts = _counts(self.discovery, self.records)
        sessions, skipped = counts
        return (
            f"<{type(self).__name__} {self.root.name}/: {sessions} sessions, "
            f"{len(self.errors)} unreadable, {skipped} files skipped>"
        )

    def __getattr__(self, name: str) -> Any:
        # A corpus loaded by its plan makes its discovery and records (one Python object per
        # session and file) only when they are first asked for (see `_from_plan`).
        later = self.__dict__.get("_later")
        if later is None or name not in ("discovery", "records"):
            raise AttributeError(name)
        try:
            discovery, records = _plan_loads(zlib.decompress(later))
        except Exception as exc:  # noqa: BLE001 — its digest held: a plan made to look valid
            raise EvalkitError(
                f"the load plan kept in the cache directory for {self.root.name}/ cannot be "
                "read back; `evalkit cache clear` removes it, and the next load makes it again"
            ) from exc
        object.__setattr__(self, "discovery", discovery)
        object.__setattr__(self, "records", records)
        del self.__dict__["_later"]
        return self.__dict__[name]

    def retyped(self, cls: type[LoadedCorpus]) -> Any:
        """This corpus as an instance of `cls`, a subclass adding no field (nothing is
        copied, and what is made when first asked for stays so)."""
        other = object.__new__(cls)
        other.__dict__.update(self.__dict__)
        return other

    @cached_property
    def _refs(self) -> dict[str, SessionRef]:
        # By the frames' `log` (`name_text`), and by the name itself when it holds a byte that
        # is not UTF-8 (a record's `log`): the escaped text of a name never holds one.
        refs = {name_text(ref.log): ref for ref in self.discovery.sessions}
        refs.update((ref.log, ref) for ref in self.discovery.sessions if ref.log not in refs)
        return refs

    def frame(self, name: str) -> pd.DataFrame:
        """The frame `name` (`sessions`, `calls`, `sections`, `files`, `tool_calls`); a copy,
        so changing it never changes what the next call returns."""
        if name not in self.tables:
            raise KeyError(f"no frame {name!r}; frames: {', '.join(FRAME_NAMES)}")
        return self.tables[name].copy()

    def sessions_df(self) -> pd.DataFrame:
        """One row per readable session (see `evalkit.corpus.frames.sessions_df`)."""
        return self.frame("sessions")

    def calls_df(self) -> pd.DataFrame:
        """One row per explore allocation call."""
        return self.frame("calls")

    def sections_df(self) -> pd.DataFrame:
        """One row per file section of every explore call."""
        return self.frame("sections")

    def files_df(self) -> pd.DataFrame:
        """One row per returned file of each session, pooled over its calls."""
        return self.frame("files")

    def tool_calls_df(self) -> pd.DataFrame:
        """One row per tool_use block."""
        return self.frame("tool_calls")

    def models_df(self) -> pd.DataFrame:
        """One row per session × model of `result.modelUsage` (see `frames.models_df`)."""
        return self.frame("models")

    def session(self, log: str) -> Session | InteractiveSession | AgentSession:
        """The session whose log is `log`, parsed in full (a lookup: no discovery is re-run).

        `log` as the frames hold it (a byte of the name that is not UTF-8 written `\\udcXX`,
        a backslash `\\\\`: `evalkit.store.columns.name_text`). A Codex file gives its
        `AgentSession`; an Inspect sample is named `<file>#<sample id>:<epoch>`, as in the
        frames.

        Raises:
            KeyError: No session of the corpus has that log.
        """
        file_log, _, sample = log.partition("#")
        ref = self._refs.get(log) or (self._refs.get(file_log) if sample else None)
        if ref is None:
            raise KeyError(log)
        got = read_ref(self.root, ref)
        if not isinstance(got, list):
            return got
        from evalkit.corpus.agents import session_log

        for s in got:
            if name_text(session_log(ref.log, s)) in (log, name_text(log)):
                return s
        raise KeyError(log)

    def accounting(self) -> tuple[Accounting, ...]:
        """Every file and directory of the tree with what became of it, as the sweep reports
        it: `parsed`, `no-explore`, `crash` (with the reason) or `skipped` (with the reason)."""
        return account_files(self.discovery, self.records)

    # --- export ---------------------------------------------------------------------------

    def export(self, out: str | os.PathLike[str], fmt: str = "parquet") -> list[Path]:
        """Write every frame to `out/<frame>.<fmt>` plus `out/columns.json` (the dictionary).

        `out` is created when missing. Only regular files evalkit creates itself are written
        there, never through a symbolic link, and a file is replaced only when the folder's
        marker records evalkit writing it, with its digest (`evalkit.owned_folder`): anything
        else is refused before anything is written.

        Each frame is written in chunks of `CHUNK_ROWS` rows (a Parquet row group each), so
        writing needs memory for one chunk, not for a whole frame. The files read back as
        `frame(name)`.

        Raises:
            UsageError: Unknown format, or `out` cannot be written.
        """
        writer = FrameWriter(out, fmt)
        try:
            for name in FRAME_NAMES:
                df = self.tables[name]
                for k in range(0, len(df), CHUNK_ROWS):
                    writer.add_frame(name, df.iloc[k : k + CHUNK_ROWS].reset_index(drop=True))
            return writer.close()
        finally:
            writer.abort()

    def to_parquet(self, out: str | os.PathLike[str]) -> list[Path]:
        """`export(out, "parquet")`: one Parquet file per frame, plus `columns.json`."""
        return self.export(out, "parquet")

    def to_csv(self, out: str | os.PathLike[str]) -> list[Path]:
        """`export(out, "csv")`: one CSV file per frame, plus `columns.json`."""
        return self.export(out, "csv")


def _counts(discovery: Discovery, records: tuple[SessionRecord, ...]) -> tuple[int, int]:
    """A corpus's sessions and skipped files, as its `repr` tells them."""
    return len(records), sum(1 for f in discovery.files if f.session is None)


def _layout_skip(ref: SessionRef, layout: str) -> dict[str, Any]:
    return {
        "status": "skipped",
        "reason": f"not read: found by the {ref.layout} layout rule, and layout={layout} was asked",
    }


def _why(log: str, reason: str | None) -> str:
    """A crash reason without the session's own name in front (the error names it once)."""
    if not reason:
        return "could not be read"
    m = re.match(re.escape(log) + r"(?::(\d+))?: (.*)", reason, re.S)
    if m is None:
        return reason
    return f"line {m[1]}: {m[2]}" if m[1] else m[2]


_POOL_LOCK = threading.Lock()
_POOL_DEPTH = 0
_POOL_BEFORE: Any = None


@contextlib.contextmanager
def _system_arrow_pool() -> Iterator[None]:
    """Arrow's default memory pool set to the C library's allocator while a load runs, and put
    back after it (the outermost of loads running at once puts it back).

    pandas' operations on the frames' Arrow-backed columns allocate from Arrow's default pool,
    mimalloc in the wheels, which keeps what they free: measured on a warm 100x load (13,400
    sessions, every frame taken), the peak is 304 MB with the system allocator against 311 MB
    (the frames themselves hold 118 MB; the bundled corpus's load peaks at 123 MB either way).
    `evalkit export` sets the same allocator for its whole process (`ARROW_DEFAULT_MEMORY_POOL`);
    a load leaves the caller's choice as it found it. What the load made with the system pool
    stays valid after it: every Arrow buffer keeps the pool it came from.
    """
    global _POOL_DEPTH, _POOL_BEFORE
    import pyarrow as pa

    with _POOL_LOCK:
        if _POOL_DEPTH == 0:
            _POOL_BEFORE = pa.default_memory_pool()
            pa.set_memory_pool(pa.system_memory_pool())
        _POOL_DEPTH += 1
    try:
        yield
    finally:
        with _POOL_LOCK:
            _POOL_DEPTH -= 1
            if _POOL_DEPTH == 0:
                pa.set_memory_pool(_POOL_BEFORE)
                _POOL_BEFORE = None


@_system_arrow_pool()
def load_corpus_frames(
    path: str | os.PathLike[str],
    *,
    layout: str | None = None,
    jobs: int | None = None,
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    strict: bool = False,
    profile: Any = None,
    verify: bool = False,
    engine: str = "local",
    scheduler: Any = None,
    format: str | None = None,  # noqa: A002 — the CLI option's name
    outcomes: str | os.PathLike[str] | None = None,
    pass_threshold: float = 1.0,
    keep_runs: bool = False,
    prices: Any = None,
) -> LoadedCorpus:
    """Discover, parse and keep every session of a corpus directory (see the module docstring).

    Args:
        path: The corpus directory.
        layout: None = the harness's rules, or `harbor` when the tree is a harbor run tree
            (`detect_layout`, said in `layout_choice`). Keep only sessions found by one layout rule (`ab-arm`, `campaign`,
            `interactive`, `generic`); the others are listed as skipped. None = every session.
            Or find the sessions by a layout of their own: `harbor` (harbor trial folders) or
            a pattern such as `{suite}/{arm}/{task}/{trial}/agent/claude-code.txt`
            (`evalkit.corpus.layouts`); the frames' `suite`, `task`, `trial` come from it.
        profile: A tool profile (`ToolProfile`, preset name or TOML file) the sessions are
            parsed with; None = chosen from the tools the sessions call (`choose_profile`:
            codegraph's tools or none → codegraph, the reference's rules; `mcp__sourcegraph__*`
            → sourcegraph; another MCP server → a profile made for it), said in
            `profile_choice`.
        jobs: Worker processes (default: every core); 1 parses in this process.
        cache: Use the parsed-session cache (it never changes a number, only the time taken).
        cache_dir: Cache location (default `$XDG_CACHE_HOME/evalkit` or `~/.cache/evalkit`).
        progress: Progress bar on stderr: True, False, or None = only when stderr is a terminal.
        strict: Raise `CorpusError` on the first session that cannot be read, instead of
            listing it in `errors`.
        verify: Re-hash the files of every stored session instead of trusting their state.
        engine: `local` (processes on this machine) or `dask` (tasks on a Dask cluster).
        scheduler: For `dask`: a scheduler address, a `distributed.Client`, or None to start
            a local cluster.
        format: Read every session with this reader (`claude-code`, `codex-rollout`,
            `codex-exec`, `inspect`) instead of detecting each file's format, as
            `evalkit sweep --format` does; a session it cannot read is listed in `errors`.
        outcomes: A CSV of outcomes (`evalkit.corpus.outcomes`), joined with each harbor
            trial's `result.json` into the sessions frame's `reward`, `passed`,
            `outcome_source` and `outcome_ref` when the corpus is loaded (never stored: the
            files can change while the transcripts do not); a trial's `result.json` also gives
            its run status (`status`: an exception harbor recorded).
        pass_threshold: The reward a run needs to count as passed.
        keep_runs: With a profile, keep each headless run's trial figures (`runs`).
        prices: User prices (`UserPrices`, or a `--prices FILE.toml` path) overriding the
            price table's for the models they name; the priced cost is computed from the token
            ledgers each time the frames are built, never stored (`evalkit.corpus.pricing`).

    Raises:
        UsageError: `path` is not a directory, `layout`, `format` or `outcomes` is unusable.
        CorpusError: `strict=True` and a session could not be read.
    """
    plan = _plan_snapshot(
        path, layout, profile, jobs, cache, cache_dir, verify, engine, format, keep_runs
    )
    if plan is not None and plan.exists():
        planned = _from_plan(plan, path, strict, outcomes, pass_threshold, resolve_prices(prices))
        if planned is not None:
            return planned
    capture: dict[str, Any] = {}  # what the last load read from the store, for its plan
    settle: list[Callable[[], None]] = []  # the last load's store, to finish (`_load_frames`)
    args = dict(
        jobs=jobs,
        cache=cache,
        cache_dir=cache_dir,
        progress=progress,
        strict=strict,
        verify=verify,
        engine=engine,
        scheduler=scheduler,
        format=format,
        outcomes=outcomes,
        pass_threshold=pass_threshold,
        keep_runs=keep_runs,
        prices=resolve_prices(prices),
        capture=capture,
        settle=settle,
        plan=plan,
    )
    # No plan (a first load of this store, whose every session will be parsed): the parser
    # workers start now, and the first walks the tree for the plan this load writes while this
    # process discovers the sessions, as a cold sweep's do (a 100x load: the walk 0.4 s).
    ahead = jobs_ahead(jobs, engine, plan.path.parent) if plan is not None else None
    with workers_ahead(ahead) if ahead is not None else contextlib.nullcontext() as pool:
        if plan is not None:
            plan.walk(pool)  # done already when a plan was read; here when no worker walks it
        layout_choice = None
        if layout is None and os.path.isdir(path):
            layout_choice = detect_layout(path)  # a harbor tree is read as one (issue 23)
            layout = layout_choice.layout if layout_choice is not None else None
        writer = None
        try:
            if profile is None:
                # No profile given: read with the default, then choose one from the tools
                # the sessions call; a corpus whose tool under test is not codegraph is read
                # again with its profile. (With `keep_runs` the default is read as the
                # codegraph profile: its runs are kept.)
                first = CODEGRAPH if keep_runs else None
                corpus = _load_frames(path, layout=layout, profile=first, **args)
                choice = choose_profile(_tool_names(corpus.tables))
                if choice.profile != CODEGRAPH:
                    settle.pop()()
                    _drop_writer(capture)  # the plan is of the load with the chosen profile
                    corpus = _load_frames(path, layout=layout, profile=choice.profile, **args)
            else:
                corpus = _load_frames(path, layout=layout, profile=profile, **args)
                choice = ProfileChoice(load_profile(profile), "given", detected=False)
            corpus = dataclasses.replace(corpus, profile_choice=choice, layout_choice=layout_choice)
            # The plan is written while the parser workers still write the shards, and kept
            # only once every shard is written.
            if plan is not None and capture.get("whole"):
                writer = _write_plan(plan, corpus, capture)
            while settle:
                settle.pop()()
        except BaseException:
            if writer is not None:
                writer.discard()
            _drop_writer(capture)
            while settle:
                settle.pop()()
            raise
        if writer is not None:
            if capture.get("whole"):
                writer.commit()
            else:
                writer.discard()
        return corpus


def _tool_names(tables: dict[str, Any]) -> list[list[str]]:
    """The tool names each session calls, from the tool_calls frame (one list per session)."""
    calls = tables.get("tool_calls")
    if calls is None or calls.empty:
        return []
    # Whole columns at once: each session's distinct names (all `choose_profile` reads), and
    # an empty list for a session whose calls have no name (it still counts as a session).
    import numpy as np
    import pandas as pd

    named = calls[["log", "name"]].dropna().drop_duplicates()
    # Grouped by log without a Python step per call: each log's names in the order they come,
    # the logs in the order they first come.
    codes, logs = pd.factorize(named["log"])
    order = np.argsort(codes, kind="stable")
    names = named["name"].to_numpy(object)[order].tolist()
    ends = np.cumsum(np.bincount(codes, minlength=len(logs))).tolist()
    by_log = [names[a:b] for a, b in zip([0, *ends], ends, strict=False)]
    return by_log + [[]] * (calls["log"].nunique() - len(by_log))


# --- the load plan ------------------------------------------------------------------------------
#
# A warm load of an unchanged corpus reads every row from the store's frame files; what it
# does besides (discovery, looking up and decoding each session's stored record, choosing the
# layout and the profile) gives the same answer again. A load whose every session came from
# the store writes that answer as a *plan*, beside the store (`plan-<32 hex>.out`, a
# `Snapshot` keyed by the state of the whole tree and every option that changes the result):
# the discovery, the records, the errors, the runs, the choices, and each frame as assembled
# from the store's frame files, in discovery order (an Arrow stream, LZ4-compressed:
# `write_frame_stream`). The next identical load walks the tree once and, when the state is the
# recorded one, reads each frame back without decoding or gathering a row (a 100x corpus's
# frames from the frame files: a Parquet decode and a gather into discovery order, 0.3 s; from
# the plan: a decompression), then joins the outcomes and prices the sessions as every load
# does (never stored). The plan's digest covers its frames, and each is validated in full as
# it is read: a plan damaged or replaced is unusable, never a wrong row, and the load then runs
# as without it. `verify=True` and `cache=False` never read or write one.

# 2: the discovery and records compressed, the counts kept; 3: the wanted sessions as columns;
# 5: the frames themselves, one part each (before the plan's own two), instead of where their
# rows are in the frame files.
PLAN_VERSION = 5


def _plan_snapshot(path, layout, profile, jobs, cache, cache_dir, verify, engine, fmt, keep_runs):
    """The plan `load_corpus_frames` with these options would read or write, or None when it
    takes none (no store, `verify`, options a plain load would refuse, a layout object)."""
    if not cache or verify or not isinstance(layout, str | None) or not os.path.isdir(path):
        return None
    if (jobs is not None and jobs < 1) or engine not in ("local", "dask"):
        return None  # the load itself says what is wrong
    if layout is not None and layout not in LAYOUTS and layout != "harbor" and "{" not in layout:
        return None
    from evalkit.store.snapshot import Snapshot

    try:
        fmt = check_format(fmt)
        given = load_profile(profile) if profile is not None else None
    except EvalkitError:
        return None
    # Beside the store of the load's first reading (the default profile's, or the one given).
    first = given if given is not None else (CODEGRAPH if keep_runs else None)
    directory = store_directory(
        cache_dir or default_cache_dir(),
        store_fingerprint(fmt, first.fingerprint() if first else None),
        path,
    )
    options = {
        "plan": PLAN_VERSION,
        "root": os.fspath(path),
        "resolved": os.path.realpath(path),
        "layout": layout,
        "profile": given.fingerprint() if given is not None else None,
        "format": fmt,
        "keep_runs": keep_runs,
    }
    # Walked by `_from_plan`, beside its reading.
    return Snapshot(directory, os.fspath(path), options, kind="plan", later=True)


def _rebuild(cls: type, values: tuple[Any, ...]) -> Any:
    """A frozen dataclass with slots made from its fields' values (`_plan_pickler`)."""
    obj = object.__new__(cls)
    for name, value in zip(cls.__slots__, values, strict=True):
        object.__setattr__(obj, name, value)
    return obj


# What a plan may name when it is read back: the classes and functions its own writer puts in
# (`_write_plan`). A plan lies in a cache directory that others may write to (a shared
# `--cache-dir`), and unpickling runs what the pickle names; anything else makes the plan
# unreadable, so the load runs without it.
_PLAN_GLOBALS = frozenset(
    [("evalkit.corpus.load", "_rebuild"), ("pathlib", "PosixPath"), ("pathlib", "WindowsPath")]
)


def _plan_loads(data: bytes) -> Any:
    """A plan's part read back, naming only what `_PLAN_GLOBALS` allows and evalkit's own
    dataclasses (`pickle.UnpicklingError` for anything else)."""
    import pickle

    class PlanUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if (module, name) in _PLAN_GLOBALS:
                return super().find_class(module, name)
            if module.startswith("evalkit.") and not name.startswith("_"):
                obj = super().find_class(module, name)
                if isinstance(obj, type) and dataclasses.is_dataclass(obj):
                    return obj
            raise pickle.UnpicklingError(f"a plan may not name {module}.{name}")

    return PlanUnpickler(io.BytesIO(data)).load()


def _slot_values(cls: type) -> Any:
    """A function giving an object of `cls` as its slots' values in order (a tuple), when `cls`
    is a dataclass with slots (and neither `__dict__` nor `__weakref__` among them); else None."""
    slots = cls.__dict__.get("__slots__")
    if slots is None or "__dataclass_fields__" not in cls.__dict__:
        return None
    if any(k in slots for k in ("__dict__", "__weakref__")):
        return None
    if len(slots) == 1:
        (name,) = slots
        return lambda obj: (getattr(obj, name),)
    return operator.attrgetter(*slots)  # a tuple, for two names or more


def _as_columns(objects: Sequence[Any]) -> tuple[Any, ...]:
    """A list of objects of one dataclass with slots as `("columns", class, one tuple per
    slot)`, which pickles and unpickles as plain tuples (a 100x load's sessions: 0.03 s read
    back and made again, against 0.09 s as objects); else `("objects", list)`."""
    cls = type(objects[0]) if objects else None
    values = _slot_values(cls) if cls is not None else None
    if values is None or any(type(obj) is not cls for obj in objects):
        return ("objects", list(objects))
    return ("columns", cls, tuple(zip(*map(values, objects), strict=True)))


def _from_columns(packed: tuple[Any, ...]) -> list[Any]:
    """The objects `_as_columns` packed (ValueError for anything else)."""
    if packed[0] == "objects" and type(packed[1]) is list:
        return packed[1]
    kind, cls, columns = packed
    if kind != "columns" or _slot_values(cls) is None or len(columns) != len(cls.__slots__):
        raise ValueError("not a plan's columns")
    out = [object.__new__(cls) for _ in columns[0]]
    setattr_ = object.__setattr__
    for name, column in zip(cls.__slots__, columns, strict=True):
        for obj, value in zip(out, column, strict=True):
            setattr_(obj, name, value)
    return out


def _plan_pickler():
    import pickle

    values_of: dict[type, Any] = {}  # each class's `_slot_values`, found once (None: none)

    class PlanPickler(pickle.Pickler):
        """Pickles a dataclass with slots (a discovery's refs and entries, the records) as its
        values in slot order: read back without `dataclasses`' per-object step (`fields()`
        each time), a third of reading a 10x plan."""

        def reducer_override(self, obj: Any) -> Any:
            cls = type(obj)
            try:
                values = values_of[cls]
            except KeyError:
                values = values_of[cls] = _slot_values(cls)
            if values is None:
                return NotImplemented
            return _rebuild, (cls, values(obj))

    return PlanPickler


def _write_plan(snap: Any, corpus: LoadedCorpus, got: dict[str, Any]) -> Any:
    """Write the plan of a finished load (`got`: what it read from the store, and the writer
    its frames were written to as they were read, `_add_stored`); the writer, for the caller
    to commit (or discard), or None when no plan could be written."""
    import pickle

    if "writer" in got:  # made as the frames were read, each frame a part of it already
        writer, framed = got.pop("writer"), got["framed"]
    else:  # no session was read from the store (a corpus of none)
        writer, framed = snap.writer(), []
    if writer is None:
        return None
    plan = {
        "version": PLAN_VERSION,
        "store": got["store"],
        "wanted": _as_columns(got["wanted"]),
        "framed": framed,  # the frames with rows, in the parts before the last two
        "errors": corpus.errors,
        # What the next load finds, the plan's loads say: every session in the store.
        "cache_hits": got["hits"],
        "cache_misses": 0,
        "runs": corpus.runs,
        "profile_choice": corpus.profile_choice,
        "layout_choice": corpus.layout_choice,
        "counts": _counts(corpus.discovery, corpus.records),
    }
    try:
        # The discovery and the records, a part of their own, compressed: the planned load
        # holds its bytes until they are first asked for (a 100x corpus's: 20 MB as pickled,
        # 2.4 MB compressed, 0.05 s to decompress). Each part pickled straight into the file
        # (no second copy of it in memory).
        for value, compress in ((plan, False), ((corpus.discovery, corpus.records), True)):
            sink = _Sink(writer, zlib.compressobj(1) if compress else None)
            pickler = _plan_pickler()(sink, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.fast = True  # no memo of every object pickled (a 100x load's peak memory)
            pickler.dump(value)
            sink.close()
            writer.end_part()
    except BaseException as exc:
        writer.discard()
        if not isinstance(exc, Exception):
            raise
        return None  # a value that cannot be kept: no plan, the load stands
    return writer


def _drop_writer(got: dict[str, Any]) -> None:
    """Discard the plan writer `got` holds, if any (the load will write no plan)."""
    writer = got.pop("writer", None)
    if writer is not None:
        writer.discard()


class _Sink:
    """A binary file whose writes go to the current part of a snapshot writer, through a
    `zlib` compressor when one is given (`close` writes what it still holds)."""

    def __init__(self, writer: Any, compressor: Any = None) -> None:
        self._writer, self._compressor = writer, compressor
        if compressor is None:
            self.write = writer.write_bytes

    def write(self, data: bytes) -> None:
        self._writer.write_bytes(self._compressor.compress(data))

    def close(self) -> None:
        if self._compressor is not None:
            self._writer.write_bytes(self._compressor.flush())


def _from_plan(snap, path, strict, outcomes, pass_threshold, prices) -> LoadedCorpus | None:
    """The load its plan gives (see above), or None when there is no usable plan.

    The tree is walked in a thread of its own while the plan and its frames are read: the walk
    mostly waits on the file system and the reading is mostly Arrow's decompression, both with
    the interpreter's lock let go (a warm 100x load: the walk 0.16 s, the rest 0.4 s). What is
    read is used only once the walk has found the tree in the plan's state, and a walk that
    finds it changed ends the reading at the next frame. The walk has ended when this returns,
    so no thread is left running when the load without a plan starts its parser processes.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="evalkit-walk") as walker:
        try:
            snap.walk(walker)
        except RuntimeError:  # no thread to be had (a process at its limit): walked here first
            snap.walk()
        return _read_plan(snap, path, strict, outcomes, pass_threshold, prices)


@gc_paused()
def _read_plan(snap, path, strict, outcomes, pass_threshold, prices) -> LoadedCorpus | None:
    stored = snap.read(tree_later=True)
    if stored is None:
        return None
    with stored:
        parts = len(stored.sizes)
        try:
            plan = _plan_loads(stored.data(parts - 2))
            if plan.get("version") != PLAN_VERSION:
                return None
            wanted = _from_columns(plan["wanted"])
            framed = plan["framed"]
            if not set(framed) <= set(FRAME_NAMES) or parts != 2 + len(framed):
                return None
            part = {name: k for k, name in enumerate(framed)}
        except Exception:  # noqa: BLE001 — a plan that cannot be read is no plan
            return None
        later = stored.data(parts - 1)
        directory = plan["store"]
        tables: dict[str, pd.DataFrame] = {}
        for name in FRAME_NAMES:
            if snap.walked() and not snap.current(stored):
                return None  # the tree has changed since the plan was written
            if name not in part:
                tables[name] = build_frame(name, [])
                continue
            table = frame_from_bytes(name, stored.data(part[name]))
            if table is None:  # not the frame it was written as: the load runs without its plan
                return None
            tables[name] = to_pandas(table, self_destruct=True, memory_pool=memory_pool())
            table = None
            # What the frame's Arrow columns held, given back to the system before the next
            # frame is read (the C library keeps freed memory otherwise: a 100x load's peak).
            memory_pool().release_unused()
    if not snap.current(stored):
        return None
    root = Path(path)
    errors = plan["errors"]
    if strict and errors:
        raise _strict_error(errors, root)
    join = _finish(root, wanted, directory, tables, outcomes, pass_threshold, prices)
    corpus = LoadedCorpus(
        root=root,
        discovery=None,  # type: ignore[arg-type]
        records=(),
        errors=errors,
        tables=tables,
        cache_hits=plan["cache_hits"],
        cache_misses=plan["cache_misses"],
        outcomes=join,
        runs=plan["runs"],
        profile_choice=plan["profile_choice"],
        layout_choice=plan["layout_choice"],
    )
    # Its discovery and records are made from the plan when first asked for (`__getattr__`).
    del corpus.__dict__["discovery"], corpus.__dict__["records"]
    corpus.__dict__["_later"] = later
    corpus.__dict__["_counts"] = tuple(plan["counts"])
    return corpus


# The collector paused: a load makes many objects and keeps nearly all of them (records,
# payloads until their rows are taken, frame columns), so a collection finds nothing to free
# and costs a walk of the heap (a quarter of a 100x load, issue 22).
@gc_paused()
def _load_frames(
    path: str | os.PathLike[str],
    *,
    layout: str | None,
    profile: Any,
    jobs: int | None,
    cache: bool,
    cache_dir: str | os.PathLike[str] | None,
    progress: bool | None,
    strict: bool,
    verify: bool,
    engine: str,
    scheduler: Any,
    format: str | None,  # noqa: A002
    outcomes: str | os.PathLike[str] | None,
    pass_threshold: float,
    keep_runs: bool,
    prices: Any = None,
    capture: dict[str, Any] | None = None,
    settle: list[Callable[[], None]] | None = None,
    plan: Any = None,
) -> LoadedCorpus:
    """One load of the corpus (`load_corpus_frames`'s arguments). `capture`, a dict, gets what
    a plan of it needs when every row came from the store (else it is emptied). The store's
    shards are waited for before this returns, or, with `settle` (a list), by the function it
    appends, which the caller must call: after writing the plan, so that writing it overlaps
    the parser workers' writing the shards (a cold 100x load: 0.4 s)."""
    loader = _Loader(path, layout, profile, jobs, cache, cache_dir, verify, engine, format)
    found = loader.found
    bar = None if progress is False else Progress(len(loader.wanted), enabled=progress)
    runs: dict[str, dict[str, Any]] | None = {} if keep_runs else None
    # What this load read from the store, for its plan (`plan`, a `Snapshot`): the frames are
    # written to the plan as they are read (`_add_stored`).
    got: dict[str, Any] = {"plan": plan}
    # The table's answers kept in the store: a warm load then never imports the table.
    memo = PriceMemo(loader.store.directory)
    # With none kept (and no prices of the user's), the first session parsed with a model
    # imports the table, while the workers still parse; else it would be imported once they
    # are done, with this process alone at work. Not for a large corpus: the table (18 MB)
    # would then sit beside the frames as they are assembled, the load's peak, for a gain
    # under 1% (measured at 100x: +14 MB of peak).
    ahead = not memo and prices is None and len(loader.wanted) <= PRICE_TABLE_AHEAD
    try:
        records, parts, again = _gather(
            loader, found.sessions, jobs, bar, scheduler, runs, got, price_table=ahead
        )
    except BaseException:
        _drop_writer(got)  # the plan's frames written so far: no plan of a load that failed
        raise
    store = loader.store
    errors = parts.errors()
    try:
        if strict and errors:
            raise _strict_error(errors, loader.root)
        tables = parts.frames()
        join = _finish(
            loader.root,
            loader.wanted,
            store.directory,
            tables,
            outcomes,
            pass_threshold,
            prices,
            memo,
        )
    except BaseException:
        _drop_writer(got)
        store.finish(loader.wanted)
        raise
    if capture is not None:
        capture.clear()
        # A plan only of a load whose every row came from the store's frame files, read once:
        # those of a stored session, or those this load wrote of a session it parsed. Every
        # session it parsed was stored, frame files and all, so the next load would find each
        # one in the store, as the plan says (a cold load writes the plan its next load uses).
        stored_all = store.stored == store.misses and not store.lost_writes
        whole = stored_all and again == 0 and not parts.built
        whole = whole and got.get("framed", []) is not None  # every frame kept for the plan
        if whole and store.directory is not None and got.get("reads", 0) <= 1:
            capture.update(got, whole=True, store=os.fspath(store.directory))  # its writer too
            capture["wanted"] = loader.wanted
            capture["hits"] = store.hits + store.misses

    if capture is None or not capture.get("whole"):
        _drop_writer(got)  # a load of which no plan is written

    def finished() -> None:
        # The parser workers write the shards meanwhile (`CorpusStore.write_with`): waited for
        # once the frames are made. A shard they could not write leaves no plan.
        store.finish(loader.wanted)
        if capture is not None and store.lost_writes:
            _drop_writer(capture)
            capture.clear()

    if settle is None:
        finished()
    else:  # the caller's, once it has written the plan (which it keeps only if still whole)
        settle.append(finished)
    return LoadedCorpus(
        root=loader.root,
        discovery=found,
        records=tuple(records),  # type: ignore[arg-type]
        errors=tuple(errors),
        tables=tables,
        cache_hits=store.hits - again,
        cache_misses=store.misses,
        outcomes=join,
        runs=runs or {},
    )


def _strict_error(errors: list[SessionError], root: Path) -> CorpusError:
    """What `strict=True` raises for a load with unreadable sessions."""
    return CorpusError(
        f"{errors[0]} ({len(errors)} unreadable in {root.name}/; strict=False loads "
        "the rest and lists them in errors)"
    )


def _finish(
    root: Path,
    wanted: list[SessionRef],
    store_dir: Any,
    tables: dict[str, pd.DataFrame],
    outcomes: Any,
    threshold: float,
    prices: Any,
    memo: PriceMemo | None = None,
) -> OutcomeJoin:
    """What every load adds to its frames, never stored: the outcomes joined, the sessions
    priced (`memo`: the store's price memo, if read already). Returns the outcome join."""
    join = _join(root, wanted, tables, outcomes, threshold)
    # The priced cost, never stored (issue 27): a trial's result.json may add the recorded cost,
    # the date and the model a transcript lacks.
    with_trial_results(tables["sessions"], tables["models"], join.results)
    if memo is None:
        memo = PriceMemo(store_dir)
    price_frames(tables["sessions"], tables["models"], prices, memo=memo)
    memo.save()
    return join


def _join(
    root: Path,
    wanted: list[SessionRef],
    tables: dict[str, pd.DataFrame],
    csv_path: Any,
    threshold: float,
) -> OutcomeJoin:
    """Join the outcomes into the sessions frame (`evalkit.corpus.outcomes.with_outcomes`)."""
    sessions = tables["sessions"]
    files = {ref.log for ref in wanted}
    samples: list[str] = []
    if csv_path is not None:  # a CSV may name an Inspect sample by its own log
        samples = [log for log in sessions["log"].tolist() if "#" in log and log not in files]
    join = join_outcomes(root, wanted, csv_path=csv_path, threshold=threshold, logs=samples)
    with_outcomes(sessions, join)
    # An Inspect score that is a number and no pass/fail: passed by the pass threshold, as a
    # harbor reward or a CSV reward is (`evalkit.corpus.outcomes`).
    scored = (
        (sessions["outcome_source"] == "inspect-score")
        & sessions["passed"].isna()
        & sessions["reward"].notna()
    ).fillna(False)
    if scored.any():
        sessions.loc[scored, "passed"] = sessions.loc[scored, "reward"] >= threshold
    return join


def _gather(
    loader: _Loader,
    refs: list[SessionRef],
    jobs,
    bar,
    scheduler,
    runs=None,
    got=None,
    *,
    price_table: bool = False,
) -> tuple[list[SessionRecord | None], _FrameParts, int]:
    """Every session of `refs`: its record, and its rows of every frame (from the store's
    frame files, or parsed), in a `_FrameParts`; and how many stored sessions had to be
    parsed again because a frame file was missing or damaged. `runs`, a dict, also gets each
    payload's trial figures (`run`) by log. `price_table`: the first parsed session that
    names a model imports the price table (`load_price_table`), as the load will price it."""
    at = {ref.log: i for i, ref in enumerate(refs)}
    records: list[SessionRecord | None] = [None] * len(refs)
    parts = _FrameParts()
    store = loader.store
    stored: list[tuple[int, SessionRef, dict[str, list[Any]]]] = []
    hits: set[str] = set()  # the stored sessions' logs
    # Parsed sessions whose rows the store writes as frame files: read back from the tables it
    # wrote, as a stored session's are (one columnar build of every row, issue 22).
    fresh: list[tuple[int, SessionRef]] = []

    def keep(ref: SessionRef, payload: dict[str, Any]) -> None:
        nonlocal price_table
        # Each payload is let go once its record and frame rows are taken (issue 16).
        i = at[ref.log]
        records[i] = record_from_payload(ref, payload)
        if price_table and "rows" in payload:
            if any(r.get("model") for r in payload["rows"].get("models", ())):
                price_table = False
                load_price_table()
        if runs is not None and payload.get("run") is not None:
            runs[ref.log] = payload["run"]
        elif runs is not None and payload.get("runs") is not None:  # Codex, Inspect, ATIF
            runs[ref.log] = {"agent_runs": payload["runs"]}
        if "rows" not in payload and "frames" in payload:
            stored.append((i, ref, payload["frames"]))
            hits.add(ref.log)
        elif "rows" in payload and store.takes_rows(ref.log):
            fresh.append((i, ref))
        else:
            parts.add(i, ref, payload)

    wanted = {r.log for r in loader.wanted}
    for ref in refs:
        if ref.log not in wanted:
            keep(ref, loader.skip(ref))
    loader.payloads([r for r in refs if r.log in wanted], jobs, bar, scheduler, keep=keep)
    again = 0
    while stored or fresh:
        if fresh:
            store.flush()  # the frame files of every parsed session written
            for i, ref in fresh:
                where, rows = store.written_frames(ref.log)
                if where is not None:
                    stored.append((i, ref, where))
                else:  # could not be written: built from the rows themselves
                    parts.add(i, ref, {"status": "parsed", "rows": rows})
            fresh = []
        redo = _add_stored(store, stored, parts, got)
        stored = []
        if not redo:
            break
        # Counted as hits, then parsed: their frame files were bad.
        again += sum(ref.log in hits for ref in redo)
        hits -= {ref.log for ref in redo}
        loader.payloads(redo, jobs, None, scheduler, keep=keep)
    store.forget_written()
    return records, parts, again


def _add_stored(
    store: CorpusStore,
    stored: list[tuple[int, SessionRef, dict[str, list[Any]]]],
    parts: _FrameParts,
    got: dict[str, Any] | None = None,
) -> list[SessionRef]:
    """Add the stored sessions' rows of every frame to `parts`, read from the store's frame
    files; the sessions whose files were missing or damaged are returned (and those files
    refused by the store), to be parsed again."""
    import numpy as np

    stored = sorted(stored, key=lambda x: x[0])  # discovery order
    idents = identity_table([identity(ref) for _, ref, _ in stored])
    refused: set[str] = set()
    bad: set[int] = set()
    pieces: dict[str, tuple[pd.DataFrame, list[tuple[int, list[Any]]]]] = {}
    # Each frame written to the plan of this load as it is read, a part of its own
    # (`write_frame_stream`), and named in `framed`; None when no plan will have them.
    if got is not None and got.get("reads"):  # read twice: a plan of neither reading
        _drop_writer(got)
    plan = got.get("plan") if got is not None and not got.get("reads") else None
    writer = plan.writer() if plan is not None else None
    framed: list[str] | None = [] if writer is not None else None

    def keep(table: Any) -> None:  # given only while there is a writer
        write_frame_stream(table, writer.write_bytes)  # type: ignore[union-attr]

    frames = iter(FRAME_NAMES)
    # A frame at a time: its files read (or the tables this run wrote taken from the store),
    # assembled, and let go before the next frame's, so memory holds one frame's tables.
    try:
        while (frame := next(frames, None)) is not None:
            items = [(k, where[frame]) for k, (_, _, where) in enumerate(stored) if frame in where]
            items = [item for item in items if item[0] not in bad]
            tables: dict[str, Any] = {}
            for _, (hex_, _, _) in items:
                if hex_ not in tables and file_name(frame, hex_) not in refused:
                    table = store.written_table(frame, hex_)
                    if table is None:
                        directory = store.directory
                        table = read_frame_file(directory, frame, hex_)  # type: ignore[arg-type]
                    if table is None:
                        refused.add(file_name(frame, hex_))
                    else:
                        tables[hex_] = table
                    table = None  # only `tables` holds it: `assemble` lets it go
            try:  # the entries taken apart once
                planned = entry_arrays(items)
            except OverflowError:  # a damaged row's figure: `assemble` tells whose
                df, lost = assemble(frame, tables, items, idents)
                if writer is not None:  # not kept: no plan of this load (its sessions are lost)
                    writer.discard()
                    writer = framed = None
            else:
                df, lost = assemble_planned(
                    frame, tables, planned, idents, keep if writer is not None else None
                )
            del tables
            if lost:  # those sessions leave every frame: every frame assembled again without them
                bad |= {items[j][0] for j in lost}
                pieces, frames = {}, iter(FRAME_NAMES)
                if writer is not None:  # parts of frames made again: no plan of this load
                    writer.discard()
                    writer = framed = None
                continue
            pieces[frame] = (df, items)
            if writer is not None and len(df):  # `keep` wrote it: a part of its own
                writer.end_part()
                framed.append(frame)  # type: ignore[union-attr]
            # What the frame's Arrow columns and its compression held, given back to the
            # system before the next frame is read (a cold 100x load's peak memory).
            memory_pool().release_unused()
    except BaseException:
        if writer is not None:
            writer.discard()
        raise
    if got is not None:  # what a plan of this load keeps (`_write_plan`)
        got["reads"] = got.get("reads", 0) + 1
        got["writer"], got["framed"] = writer, framed
    for frame, (df, items) in pieces.items():
        if len(df):
            at = np.repeat(
                np.fromiter((stored[k][0] for k, _ in items), np.int64, len(items)),
                np.fromiter((ref[2] for _, ref in items), np.int64, len(items)),
            )
            parts.add_piece(frame, df, at)
    for k in bad:  # a lost session's files are not used again, whatever made it lost
        refused |= {file_name(frame, ref[0]) for frame, ref in stored[k][2].items()}
    if refused:
        store.refuse_frames(refused)
    return [stored[k][1] for k in sorted(bad)]


LOAD_BATCH = 256  # parsed sessions whose rows `load_corpus` turns into frames at a time
PRICE_TABLE_AHEAD = 5000  # sessions, at most, for a load to import the price table ahead


class _FrameParts:
    """The frames of a corpus, built `LOAD_BATCH` sessions at a time (issue 16).

    Sessions are added in any order, each with its place in the discovery (`add`); once a
    batch has gathered, its rows become a piece of each frame (`build_frame`), so what is held
    is frame columns, not one dict per row. `frames()` joins the pieces into each frame, its
    rows in discovery order, as `build_frame` over every session's rows in that order makes it.
    """

    def __init__(self) -> None:
        self._rows: dict[str, list[dict[str, Any]]] = {name: [] for name in FRAME_NAMES}
        self._at: dict[str, list[int]] = {name: [] for name in FRAME_NAMES}
        self._pieces: dict[str, list[tuple[pd.DataFrame, list[int]]]] = {
            name: [] for name in FRAME_NAMES
        }
        self._errors: list[tuple[int, SessionError]] = []
        self._gathered = 0
        self._last = -1
        self._in_order = True  # sessions added in discovery order (no reordering needed)
        self.built = False  # some rows were built here (not read from the store's files)

    def add(self, i: int, ref: SessionRef, payload: dict[str, Any]) -> None:
        """Session `i` of the discovery: its frame rows (with its identity columns), or its
        error."""
        if i < self._last:
            self._in_order = False
        self._last = i
        errors: list[SessionError] = []
        got = {name: [] for name in FRAME_NAMES}
        _collect(ref, payload, got, errors)
        self._errors += [(i, e) for e in errors]
        for name, rows in got.items():
            if rows:
                self._rows[name] += rows
                self._at[name] += [i] * len(rows)
        self._gathered += 1
        if self._gathered >= LOAD_BATCH:
            self._flush()

    def add_piece(self, name: str, df: pd.DataFrame, at: Any) -> None:
        """Rows of frame `name` already built (a stored session's, read from the store), with
        the discovery place of each row's session."""
        self._pieces[name].append((df, at))
        self._in_order = False

    def _flush(self) -> None:
        for name in FRAME_NAMES:
            if self._rows[name]:
                self.built = True
                self._pieces[name].append((build_frame(name, self._rows[name]), self._at[name]))
                self._rows[name], self._at[name] = [], []
        self._gathered = 0

    def errors(self) -> list[SessionError]:
        """The sessions that could not be read, in discovery order."""
        return [e for _, e in sorted(self._errors, key=lambda x: x[0])]

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every frame, its rows in discovery order (the pieces let go as they are joined)."""
        return {name: self.frame(name) for name in FRAME_NAMES}

    def frame(self, name: str) -> pd.DataFrame:
        """Frame `name`, its rows in discovery order (its pieces let go as they are joined)."""
        self._flush()
        return self._join(name)

    def _join(self, name: str) -> pd.DataFrame:
        import numpy as np
        import pandas as pd

        pieces, self._pieces[name] = self._pieces[name], []
        if not pieces:
            return build_frame(name, [])
        if len(pieces) == 1:
            df = pieces[0][0]
        else:
            df = pd.concat([piece for piece, _ in pieces], ignore_index=True)
        if not self._in_order:
            at = np.concatenate([np.asarray(a, np.int64) for _, a in pieces])
            if (at[1:] < at[:-1]).any():  # in order already (stored rows only): no copy
                order = np.argsort(at, kind="stable")  # a session's rows keep their order
                df = df.take(order).reset_index(drop=True)
        return df


class _Loader:
    """What loading a corpus needs before any session is parsed: the options checked, the
    discovery, the sessions wanted and the store (shared by `load_corpus_frames` and
    `export_corpus`)."""

    def __init__(
        self, path, layout, profile, jobs, cache, cache_dir, verify, engine, fmt=None
    ) -> None:
        spec = None
        if isinstance(layout, CorpusLayout):
            spec, layout = layout, layout.pattern or layout.name
        elif layout is not None and layout not in LAYOUTS:
            if layout != "harbor" and "{" not in layout:
                raise UsageError(
                    f"unknown layout {layout!r} (one of {', '.join(LAYOUTS)}, harbor, or a "
                    "pattern with placeholders such as {arm}/{task}/{trial}.jsonl)"
                )
            spec = parse_layout(layout)
        self.profile = load_profile(profile) if profile is not None else None
        if jobs is not None and jobs < 1:
            raise UsageError(f"jobs must be at least 1, got {jobs}")
        self.root = root = Path(path)
        found = discover(root) if spec is None else discover_layout(root, spec)
        fmt = check_format(fmt)
        self.found = found = force_format(found, fmt)
        self.layout = layout
        self.wanted = [
            r for r in found.sessions if spec is not None or layout is None or r.layout == layout
        ]
        prof = self.profile
        # The store every command of these options shares; its rows hit only with frame rows.
        self.store = CorpusStore(
            (cache_dir or default_cache_dir()) if cache else None,
            root,
            fingerprint=store_fingerprint(fmt, prof.fingerprint() if prof else None),
            verify=verify,
            frames=True,
        )
        if engine not in ("local", "dask"):
            raise UsageError(f"unknown engine {engine!r} (choose local or dask)")
        self.engine = engine

    def payloads(self, refs, jobs, bar, scheduler, keep=None) -> list[Any]:
        return analyse_payloads(
            self.root,
            refs,
            cache=self.store,
            jobs=jobs,
            progress=bar,
            frames=True,
            profile=self.profile,
            engine=self.engine,
            scheduler=scheduler,
            finish_store=False,
            keep=keep,
        )

    def skip(self, ref: SessionRef) -> dict[str, Any]:
        return _layout_skip(ref, self.layout or "")


def _collect(
    ref: SessionRef,
    payload: dict[str, Any],
    rows: dict[str, list[dict[str, Any]]],
    errors: list[SessionError],
) -> None:
    """Add one session's frame rows (with its identity columns) to `rows`, or its error."""
    if payload["status"] == "crash":
        errors.append(SessionError(ref.log, _why(ref.log, payload.get("reason"))))
        return
    if "rows_error" in payload:
        errors.append(SessionError(ref.log, payload["rows_error"]))
        return
    got = payload.get("rows")
    if got is None:  # skipped: not a transcript, or another layout
        return
    ident = identity(ref)
    for name in FRAME_NAMES:
        rows[name].extend({**ident, **r} for r in got[name])


# --- writing frames ---------------------------------------------------------------------------

CHUNK_ROWS = 4096  # rows of one frame built and written at a time (a Parquet row group)


class FrameWriter:
    """Writes every frame to `out/<frame>.<fmt>` chunk by chunk, then `out/columns.json`.

    Rows are gathered per frame and written `CHUNK_ROWS` at a time (a Parquet row group, or
    CSV lines appended). Each `add` turns its rows into a frame at once (`build_frame`; the
    declared dtypes make every frame's columns the same), so what waits for a chunk to fill is
    held as columns, not as one dict per row; a chunk is written as the frame of its rows
    would be. Memory is one chunk per frame, whatever the size of the corpus. `out` is
    checked and its marker written when the writer is made.

    Raises:
        UsageError: Unknown format, `out` is not usable, or a file cannot be written.
    """

    def __init__(self, out: str | os.PathLike[str], fmt: str = "parquet") -> None:
        if fmt not in EXPORT_FORMATS:
            raise UsageError(f"unknown export format {fmt!r} (parquet or csv)")
        out = Path(out)
        self.out, self.fmt = out, fmt
        self.targets = {name: out / f"{name}.{fmt}" for name in FRAME_NAMES}
        # Only regular files it creates itself, inside OUT, and never a file it did not record
        # writing (issue 21): every name is checked before anything is written.
        self._folder = OwnedFolder.claim(
            out, [*(t.name for t in self.targets.values()), "columns.json"], what="evalkit export"
        )
        self._pending: dict[str, list[pd.DataFrame]] = {name: [] for name in FRAME_NAMES}
        self._waiting = dict.fromkeys(FRAME_NAMES, 0)  # rows in `_pending`
        self._sinks: dict[str, Any] = {}  # frame → open ParquetWriter, or CSV file
        self._files: dict[str, Any] = {}  # frame → its file (under the ParquetWriter)
        self._schemas: dict[str, Any] = {}
        self.rows = dict.fromkeys(FRAME_NAMES, 0)

    def _guard(self, write):
        try:
            return write()
        except OSError as exc:
            raise UsageError(f"{os.fspath(self.out)}: cannot write ({exc.strerror})") from None

    def add(self, name: str, rows) -> None:
        """Rows of frame `name` (written once `CHUNK_ROWS` have gathered)."""
        if len(rows):
            self.add_frame(name, build_frame(name, list(rows)))

    def add_frame(self, name: str, df: pd.DataFrame) -> None:
        """Rows of frame `name` already built as a frame (`build_frame`'s columns)."""
        if not len(df):
            return
        self.rows[name] += len(df)
        self._pending[name].append(df)
        self._waiting[name] += len(df)
        while self._waiting[name] >= CHUNK_ROWS:
            self._write(name, self._take(name, CHUNK_ROWS))

    def _take(self, name: str, n: int) -> pd.DataFrame:
        """The first `n` waiting rows of frame `name` as one frame (the rest keep waiting)."""
        import pandas as pd

        parts = self._pending[name]
        df = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
        head, rest = df.iloc[:n].reset_index(drop=True), df.iloc[n:].reset_index(drop=True)
        self._pending[name] = [rest] if len(rest) else []
        self._waiting[name] = len(rest)
        return head

    def _write(self, name: str, df: pd.DataFrame) -> None:
        target = self.targets[name].name
        if self.fmt == "csv":
            sink = self._sinks.get(name)
            if sink is None:
                sink = self._sinks[name] = self._folder.open_text(target, newline="")
                self._guard(lambda: df.to_csv(sink, index=False))
            else:
                self._guard(lambda: df.to_csv(sink, index=False, header=False))
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = self._schemas.get(name)
        table = pa.Table.from_pandas(df, schema=schema, preserve_index=False)
        if name not in self._sinks:
            self._schemas[name] = table.schema
            fh = self._files[name] = self._folder.open(target)
            self._sinks[name] = self._guard(lambda: pq.ParquetWriter(fh, table.schema))
        self._guard(lambda: self._sinks[name].write_table(table))

    def close(self) -> list[Path]:
        """Write what is gathered (an empty frame still gets its file) and `columns.json`;
        the files written, frames first."""
        import json

        for name in FRAME_NAMES:
            if self._waiting[name]:
                self._write(name, self._take(name, self._waiting[name]))
            elif name not in self._sinks:  # an empty frame still gets its file
                self._write(name, build_frame(name, []))
        self._close_sinks()
        frames = dictionary_json()
        doc = {"format": self.fmt, "frames": {name: frames[name] for name in FRAME_NAMES}}
        text = json.dumps(doc, indent=2) + "\n"
        dictionary = self._guard(lambda: self._folder.write_text("columns.json", text))
        self._guard(self._folder.commit)  # the marker records each file with its digest
        return [*self.targets.values(), dictionary]

    def _close_sinks(self) -> None:
        sinks, self._sinks = self._sinks, {}
        files, self._files = self._files, {}
        for sink in sinks.values():
            self._guard(sink.close)
        for fh in files.values():  # a ParquetWriter leaves the file it was given open
            self._guard(fh.close)

    def abort(self) -> None:
        """Close every open file (after `close`, or when writing stopped on an error); after
        an error, what was being written stays recorded as such (`OwnedFolder.abort`)."""
        try:
            self._close_sinks()
        finally:
            self._folder.abort()


@dataclass(frozen=True)
class Exported:
    """What `export_corpus` wrote: the files, the sessions left out (`SessionError`s) and the
    rows written per frame."""

    files: list[Path]
    errors: tuple[SessionError, ...]
    rows: dict[str, int]


def export_corpus(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    fmt: str = "parquet",
    *,
    layout: str | None = None,
    jobs: int | None = None,
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    profile: Any = None,
    verify: bool = False,
    engine: str = "local",
    scheduler: Any = None,
    outcomes: str | os.PathLike[str] | None = None,
    pass_threshold: float = 1.0,
    prices: Any = None,
) -> Exported:
    """`load_corpus_frames(path, ...).export(out, fmt)`: the files hold the same rows (the same
    layout and profile chosen when none is given, outcomes joined the same way), in the
    same order, as the frames of `load_corpus`. A stored session's rows are read from the
    store's frame files, not built again; each frame is written `CHUNK_ROWS` rows at a time
    and let go once written, so memory is that of the frames, never a second copy of them.

    `engine="dask"` parses the sessions not stored as Dask tasks (`evalkit.corpus.parse.dask_cluster`)
    on `scheduler` (a `distributed.Client`, a scheduler address, or None for a local cluster of
    `jobs` workers, started once for the whole export); the files are the local engine's.

    Raises:
        UsageError: As `load_corpus_frames` and `FrameWriter`.
    """
    writer = FrameWriter(out, fmt)  # OUT is checked before anything is read
    load = dict(
        layout=layout,
        jobs=jobs,
        cache=cache,
        cache_dir=cache_dir,
        progress=progress,
        profile=profile,
        verify=verify,
        engine=engine,
        outcomes=outcomes,
        pass_threshold=pass_threshold,
        prices=prices,
    )
    try:
        if engine != "dask":
            corpus = load_corpus_frames(path, scheduler=scheduler, **load)
        else:
            from evalkit.corpus.parse.dask_cluster import client_for

            with client_for(scheduler, jobs or os.cpu_count() or 1) as client:  # one cluster
                corpus = load_corpus_frames(path, scheduler=client, **load)
        for name in FRAME_NAMES:
            df = corpus.tables.pop(name)  # each frame let go once written
            for k in range(0, len(df), CHUNK_ROWS):
                writer.add_frame(name, df.iloc[k : k + CHUNK_ROWS].reset_index(drop=True))
            del df
        return Exported(writer.close(), corpus.errors, dict(writer.rows))
    finally:
        writer.abort()
