"""`evalkit cache` output: what the cache holds, and what prune or clear removed, as text or JSON.

Printing only: every figure comes from `evalkit.store.admin`. Sizes are decimal (kB, MB,
GB); times are shown as an age in text and as UTC ISO-8601 in JSON.
"""

from __future__ import annotations

import os
import time
from typing import Any

from evalkit.ecma import grp, js_json, pl
from evalkit.errors import one_line
from evalkit.outputs.sweep_text import text_table
from evalkit.store.admin import (
    OLDER_SUBDIR,
    CacheInfo,
    Removal,
    StoreDir,
    prune_reason,
)

__all__ = [
    "size_text",
    "age_text",
    "render_info_text",
    "info_json_dict",
    "render_info_json",
    "render_removal_text",
    "removal_json_dict",
    "render_removal_json",
    "REASONS",
]

# Why prune removes a store directory, in words.
REASONS = {
    "stale": "made by another evalkit version",
    "unknown": "made by an older evalkit (it has no record)",
    "missing": "its corpus no longer exists",
    "clear": "cleared",
}
_MAX_LISTED = 20  # entries left alone listed by name; the rest counted


def size_text(n: int) -> str:
    """`n` bytes in decimal units: `512 bytes`, `215.2 kB`, `9.4 MB`, `1.3 GB`."""
    if n < 1000:
        return f"{n} {pl(n, 'byte')}"
    for unit, scale in (("kB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        if n < scale * 1000 or unit == "GB":
            return f"{n / scale:.1f} {unit}"
    raise AssertionError("unreachable")


def age_text(ns: int | None, now_ns: int) -> str:
    """How long ago `ns` was: `just now`, `5 minutes ago`, `3 hours ago`, `2 days ago`."""
    if ns is None:
        return "unknown"
    seconds = (now_ns - ns) // 10**9
    if seconds < 60:
        return "just now"  # also a time ahead of the clock
    for unit, span in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= span:
            n = seconds // span
            return f"{n} {pl(n, unit)} ago"
    raise AssertionError("unreachable")


def _count(n: int, one: str, many: str) -> str:
    return f"{grp(n)} {one if n == 1 else many}"


def _iso(ns: int | None) -> str | None:
    return None if ns is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ns // 10**9))


def _kind(s: StoreDir) -> str:
    if s.kind is None:
        return "unknown"
    return s.kind if s.format is None else f"{s.kind} --format {s.format}"


def _presence(s: StoreDir) -> str:
    return {True: "present", False: "missing", None: "unknown"}[s.corpus_present]


def _lines(lines: list[str]) -> str:
    # Paths come from file names and records: control characters and undecodable bytes escaped.
    return "\n".join(one_line(line) for line in lines) + "\n"


def _listed(paths: tuple[str, ...]) -> list[str]:
    out = [f"  {p}" for p in paths[:_MAX_LISTED]]
    if len(paths) > _MAX_LISTED:
        out.append(f"  … and {grp(len(paths) - _MAX_LISTED)} more")
    return out


def render_info_text(info: CacheInfo, now_ns: int | None = None) -> str:
    """`evalkit cache`: where the cache is, its size, one line per store directory, what is
    left of older evalkit's cache, and what `evalkit cache prune` would free."""
    now = time.time_ns() if now_ns is None else now_ns
    where = os.fspath(info.directory)
    stores, older = info.stores, info.older
    if not stores and not older.files:
        what = "does not exist yet" if not info.exists else "holds nothing evalkit stored"
        out = [f"evalkit cache: {where}", f"  {what} (a sweep stores the sessions it parses here)"]
        out += _refused_and_foreign(info)
        return _lines(out)
    current = sum(s.current for s in stores)
    out = [
        f"evalkit cache: {where}",
        f"  {size_text(info.size)} in {grp(info.files)} {pl(info.files, 'file')}: "
        f"{_count(len(stores), 'store directory', 'store directories')}"
        f" ({current} current, {len(stores) - current} stale)",
    ]
    if stores:
        header = (
            "corpus",
            "kind",
            "evalkit",
            "state",
            "corpus dir",
            "size",
            "sessions",
            "last used",
        )
        rows = [
            (
                s.corpus if s.corpus is not None else f"unknown ({s.path})",
                _kind(s),
                s.version or "unknown",
                "current" if s.current else "stale",
                _presence(s),
                size_text(s.size),
                grp(s.sessions),
                age_text(s.last_used_ns, now),
            )
            for s in stores
        ]
        out += [""] + text_table(header, rows, left=5)
    if older.files:
        out += [
            "",
            f"older per-session cache files ({OLDER_SUBDIR}/, from evalkit before the store): "
            f"{_count(older.entries, 'entry', 'entries')}, "
            f"{size_text(older.size)}, last used {age_text(older.last_used_ns, now)}; "
            "no sweep reads them now",
        ]
    out += _refused_and_foreign(info)
    freed = sum(s.size for s in stores if prune_reason(s)) + older.size
    out.append("")
    if freed:
        out.append(f"`evalkit cache prune` would free {size_text(freed)} (see --dry-run).")
    else:
        out.append("Nothing to prune: every store is this evalkit's and its corpus exists.")
    return _lines(out)


def _refused_and_foreign(info: CacheInfo) -> list[str]:
    out = []
    for name in info.refused:
        out.append(f"note: {name} is a symbolic link or not a directory: not followed, left alone")
    foreign = info.foreign
    if foreign:
        out += ["", f"left alone, not created by evalkit: {grp(len(foreign))}"]
        out += _listed(foreign)
    return out


def _store_json(s: StoreDir) -> dict[str, Any]:
    return {
        "path": s.path,
        "corpus": s.corpus,
        "corpus_as_given": s.corpus_given,
        "corpus_present": s.corpus_present,
        "kind": s.kind,
        "format": s.format,
        "evalkit_version": s.version,
        "current": s.current,
        "files": s.files,
        "size_bytes": s.size,
        "sessions": s.sessions,
        "last_used": _iso(s.last_used_ns),
        "prune": prune_reason(s),
        "foreign": list(s.foreign),
    }


def info_json_dict(info: CacheInfo) -> dict[str, Any]:
    """`evalkit cache --json`: sizes in bytes, times in UTC ISO-8601, null where unknown."""
    older = info.older
    return {
        "cache_dir": os.fspath(info.directory),
        "exists": info.exists,
        "size_bytes": info.size,
        "files": info.files,
        "stores": [_store_json(s) for s in info.stores],
        "older_entries": {
            "path": OLDER_SUBDIR,
            "entries": older.entries,
            "files": older.files,
            "size_bytes": older.size,
            "last_used": _iso(older.last_used_ns),
        },
        "refused": list(info.refused),
        "foreign": list(info.foreign),
    }


def render_info_json(info: CacheInfo) -> str:
    return js_json(info_json_dict(info), 2) + "\n"


def render_removal_text(r: Removal, command: str) -> str:
    """What `evalkit cache prune` or `clear` removed (with --dry-run: would remove)."""
    verb = "would remove" if r.dry_run else "removed"
    head = f"evalkit {command}{' --dry-run' if r.dry_run else ''}: {os.fspath(r.directory)}"
    if not r.files and not r.stores:
        why = (
            "every store is this evalkit's and its corpus exists"
            if command == "cache prune"
            else "evalkit stored nothing here"
        )
        out = [head, f"  nothing to remove: {why}"]
    else:
        parts = []
        if r.stores:
            parts.append(_count(len(r.stores), "store directory", "store directories"))
        if r.older_entries:
            n = r.older_entries
            parts.append(f"{grp(n)} older per-session cache {pl(n, 'file')}")
        if r.temp_files:
            n = r.temp_files
            parts.append(f"{grp(n)} temporary {pl(n, 'file')} of interrupted writes")
        what = " and ".join(parts) if parts else "evalkit's files"
        out = [
            head,
            f"  {verb} {what}: {grp(r.files)} {pl(r.files, 'file')}, {size_text(r.size)}",
        ]
        if r.stores:
            rows = [
                (
                    REASONS[why],
                    s.corpus if s.corpus is not None else f"unknown ({s.path})",
                    _kind(s),
                    s.version or "unknown",
                    size_text(s.size),
                )
                for s, why in r.stores
            ]
            header = ("why", "corpus", "kind", "evalkit", "size")
            if all(why == "clear" for _, why in r.stores):  # clear: no reason to give
                header, rows = header[1:], [row[1:] for row in rows]
            out += [""] + text_table(header, rows, left=len(header) - 1)
    if r.left:
        out += ["", f"left alone, not created by evalkit: {grp(len(r.left))}"]
        out += _listed(r.left)
        out.append("  (with the directories that hold them)")
    if r.failed:
        out += ["", f"could not remove {grp(len(r.failed))} {pl(len(r.failed), 'file')}:"]
        out += _listed(r.failed)
    return _lines(out)


def removal_json_dict(r: Removal, command: str) -> dict[str, Any]:
    """`evalkit cache prune|clear --json`: what was (or would be) removed, sizes in bytes."""
    return {
        "command": command,
        "cache_dir": os.fspath(r.directory),
        "dry_run": r.dry_run,
        "stores": [{**_store_json(s), "reason": why} for s, why in r.stores],
        "older_entries": r.older_entries,
        "temp_files": r.temp_files,
        "files": r.files,
        "size_bytes": r.size,
        "left": list(r.left),
        "failed": list(r.failed),
    }


def render_removal_json(r: Removal, command: str) -> str:
    return js_json(removal_json_dict(r, command), 2) + "\n"
