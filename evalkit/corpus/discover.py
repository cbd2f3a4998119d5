"""Finding the sessions of a corpus directory by the harness's layout rules (spec §7.1–7.5).

A *session* is an ordered list of segment files (§1.1). Discovery walks a directory tree once and
accounts for every entry in it: each file is either a segment of exactly one session or skipped
with a reason, so a sweep can always say what it did with every file.

The rules, in the order they are applied inside one directory:

* **Segments** (§7.2, §7.3): `X.tN.jsonl` is turn N of the session whose first file is
  `X.jsonl` in the same directory; a session's segments are its first file followed by its `.tN`
  files sorted numerically (`t10` after `t9`). A `.tN` file is never a session of its own; one
  without its first file is skipped. `.jsonl.gz` works everywhere `.jsonl` does, and so do
  `.ndjson` and `.ndjson.gz` (the same lines under another name).
* **Runs of one arm** (§7.2): `run-<label>-<i>.jsonl` is run `i` of arm `label`. When
  `run-<label>.jsonl` exists, that arm has exactly one run and the indexed files are skipped, as
  `compare-arms.mjs` ignores them. A zero-padded index (`run-new-01.jsonl`) is a crash: the
  reference rebuilds the name as `run-new-1.jsonl` and throws.
* **Labels from the path** (§7.1, §7.6): a run directory `ab-<repo>` names the repo and its
  parent names the pass (`cg22/ab-express/run-new-1.jsonl`); a campaign run directory
  `<pass>/<repo>/run<n>/run-<label>.jsonl` (§7.3) names run, repo and pass. The directory's own
  name counts as part of the path, so sweeping `cg22/` still knows the pass. Any other
  `*.jsonl(.gz)` is a session whose labels are filled only where its path says so.
* **Interactive sessions** (§7.4, §1.10): `<id>.jsonl` with `<id>/subagents/*.jsonl` beside it
  (the subagent files and their `*.meta.json` belong to that session), or a `<uuid>.jsonl` in a
  project log directory named after an escaped path (`-private-tmp-repo/`). They are read as
  the interactive parser reads them.
* **Other agents' logs** (issue 15): an Inspect AI log (`*.eval`, or a `*.json` whose content
  is one) is a session file of its own (one session per sample and epoch when read). Codex
  rollouts and `codex exec --json` captures are `*.jsonl` files like any other; which agent
  wrote a file is decided from its content when it is parsed (`evalkit.formats.detect`).
* **Not transcripts** (§7.1): the CG-4 sidecar `explore-<label>.jsonl`, `.err` logs, MCP
  configs, the target copies `t-new/` and `t-base/`, hidden directories and anything else are
  skipped with a reason.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from evalkit.ecma import listing_key
from evalkit.errors import UsageError
from evalkit.formats.detect import AGENT_OF, check_format, is_inspect_file

__all__ = [
    "SessionRef",
    "FileEntry",
    "Discovery",
    "discover",
    "force_format",
    "linked_duplicates",
    "natural_key",
    "ref_for_files",
    "identity",
    "ArmRun",
    "discover_runs",
    "turn_files",
]

Layout = Literal["ab-arm", "campaign", "interactive", "generic"]
# Sessions found by a `--layout` (evalkit.corpus.layouts) rather than the harness's rules.
LayoutFound = Literal["harbor", "pattern"]
# `SessionRef.format` of a harbor trial whose result.json has no transcript beside it: a
# session named by its result.json, of status infra_error (issue 23).
HARBOR_NO_TRANSCRIPT = "harbor-result"

# `X.jsonl`, `X.tN.jsonl`, each optionally `.gz`.
# re.S and \Z: a name holding a line break is a transcript like any other (issue 11).
# `.ndjson` (newline-delimited JSON, the same lines) is read as `.jsonl` (issue 23).
_TRANSCRIPT = re.compile(
    r"^(?P<stem>.+?)(?:\.t(?P<turn>\d+))?\.(?P<ext>jsonl|ndjson)(?P<gz>\.gz)?\Z", re.S
)
_TRANSCRIPT_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")
_INDEXED_RUN = re.compile(r"^run-(?P<label>.+)-(?P<index>\d+)\Z", re.S)  # §7.2 step 2
_SINGLE_RUN = re.compile(r"^run-(?P<label>.+)\Z", re.S)  # §7.2 step 1
_SIDECAR = re.compile(r"^explore-(?P<label>.+)\.jsonl(?:\.gz)?\Z", re.S)  # §7.1, CG-4
_AB_DIR = re.compile(r"^ab-(?P<repo>.+)\Z", re.S)
_CAMPAIGN_RUN_DIR = re.compile(r"^run\d+$")  # §7.3
# §1.10, §7.4: Claude Code names a project's log directory after its escaped absolute path
# (`-private-tmp-repo`) and each session file after its UUID.
_SESSION_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# Output roots whose `ab-` prefix does not name a repo (§7.1 defaults, §7.3).
_NOT_REPOS = {"readme", "new-vs-baseline"}
_TARGET_COPIES = {"t-new", "t-base"}  # §7.1: throwaway working copies the agent edits
_KNOWN_FILES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\.err$"), "stderr log of a run, not a transcript"),
    (re.compile(r"^mcp-.*\.json$"), "MCP config of an arm, not a transcript"),
    (re.compile(r"^console\.log$"), "campaign console log, not a transcript"),
)


@dataclass(frozen=True, slots=True)
class SessionRef:
    """One session found in the tree.

    Attributes:
        log: The first segment's path relative to the root, with `/` separators.
        segments: Every segment file, relative to the root, in reading order.
        pass_: The pass (`cg22`, `ab-readme`), when the path names it; else None.
        repo: The repo (`express`), when the path names it; else None.
        arm: The arm label (`new`, `baseline`, `headless-with`), when the file name gives it.
        run: The run (`1` for `run-new-1`, `run2` for a campaign run directory), when given.
        layout: Which rule found it: `ab-arm`, `campaign`, `interactive` or `generic`; or
            `harbor` / `pattern` when a `--layout` found it (`evalkit.corpus.layouts`).
        subagents: Interactive sessions only: the subagent transcripts (§1.10 step 3).
        problem: Set when the reference would crash on this session before reading it (a
            zero-padded run index, §7.2); such a session is reported as a crash.
        suite, task, trial: Labels a `--layout` reads from the path (None otherwise).
        outcome: A harbor trial's `result.json`, relative to the root (None otherwise).
        format: The file format when discovery already knows it from the content (Inspect
            logs); None = decided when the file is parsed.
    """

    log: str
    segments: tuple[str, ...]
    pass_: str | None = None
    repo: str | None = None
    arm: str | None = None
    run: str | None = None
    layout: Layout | LayoutFound = "generic"
    subagents: tuple[str, ...] = ()
    problem: str | None = None
    suite: str | None = None
    task: str | None = None
    trial: str | None = None
    outcome: str | None = None
    format: str | None = None

    @property
    def multi_turn(self) -> bool:
        """Decision 7: more than one segment file."""
        return len(self.segments) > 1


@dataclass(frozen=True, slots=True)
class FileEntry:
    """What discovery did with one entry of the tree.

    Attributes:
        path: Relative to the root, `/` separators; a directory ends with `/`.
        session: The `log` of the session the file belongs to, or None when skipped.
        reason: Why it was skipped (None when it belongs to a session).
    """

    path: str
    session: str | None
    reason: str | None = None


@dataclass(frozen=True)
class Discovery:
    """Every session of a tree and the account of every entry in it."""

    root: Path
    sessions: tuple[SessionRef, ...]
    files: tuple[FileEntry, ...]

    @property
    def skipped(self) -> tuple[FileEntry, ...]:
        return tuple(f for f in self.files if f.session is None)


_DIGIT_RUN = re.compile(r"(\d+)")
# Keys already computed (a sweep sorts the same names and paths several times); bounded.
_KEYS: dict[str, tuple] = {}
_MAX_KEYS = 1 << 12  # names and labels repeat across a corpus; full paths are keyed once


def natural_key(s: str) -> tuple:
    """Sort key with digit runs compared as numbers: `run-new-2` before `run-new-10`.

    A run is a number only when `int` can read it (`str.isdecimal`, the class `\\d` matches):
    `²` passes `str.isdigit` but is not a decimal, and is compared as text.
    """
    try:
        return _KEYS[s]
    except (KeyError, TypeError):
        pass
    key = _natural_key(s)
    if type(s) is str:
        _remember(s, key)
    return key


def _natural_key(s: str) -> tuple:
    # `split` alternates text (even places, never decimal, maybe empty) and digit runs (odd
    # places: `\d` is the class of `str.isdecimal`).
    parts = _DIGIT_RUN.split(s)
    key = [(1, 0, t) for t in parts]
    key[1::2] = [(0, int(t), t) for t in parts[1::2]]
    return tuple(key)


def _remember(s: str, key: tuple) -> None:
    if len(_KEYS) >= _MAX_KEYS:
        _KEYS.clear()
    _KEYS[s] = key


def _joined_key(head: tuple, tail: tuple) -> tuple:
    """`natural_key(a + "/" + b)` from `natural_key(a)` and `natural_key(b)`: the text run that
    ends `a` and the one that starts `b` join across the `/` (every key starts and ends with a
    text run, perhaps empty)."""
    return head[:-1] + ((1, 0, head[-1][2] + "/" + tail[0][2]),) + tail[1:]


def _rel(parts: tuple[str, ...], name: str = "") -> str:
    return "/".join((*parts, name)) if name else "/".join(parts)


def _count_files(path: str | Path) -> int:
    n = 0
    for _, _, names in os.walk(path):
        n += len(names)
    return n


def _labels(parts: tuple[str, ...], root_name: str) -> tuple[str | None, str | None, str | None]:
    """(pass, repo, campaign run) from a directory's path parts (§7.1, §7.3, §7.6)."""
    chain = ((root_name,) if root_name else ()) + parts
    if not chain:
        return None, None, None
    here = chain[-1]
    m = _AB_DIR.match(here)
    if m and m["repo"] not in _NOT_REPOS:
        return (chain[-2] if len(chain) > 1 else None), m["repo"], None
    if _CAMPAIGN_RUN_DIR.match(here):
        repo = chain[-2] if len(chain) > 1 else None
        pass_ = chain[-3] if len(chain) > 2 else None
        return pass_, repo, here
    return None, None, None


def ref_for_files(
    files: tuple[str, ...], *, log: str | None = None, interactive: bool = False
) -> SessionRef:
    """The labels the discovery rules give a session named by its files, outside any corpus.

    Used when frames are built from paths or parsed sessions rather than a directory: the
    directory part of the first file names pass, repo and campaign run as in a corpus (§7.1,
    §7.3, §7.6), its name the arm and run (§7.2).
    """
    first = files[0] if files else (log or "")
    pure = Path(first)
    parts = tuple(p for p in pure.parent.parts if p not in ("/", ""))
    pass_, repo, campaign_run = _labels(parts, "")
    arm = run = None
    layout: Layout = "interactive" if interactive else "generic"
    m = _TRANSCRIPT.match(pure.name)
    stem = m["stem"] if m else pure.name
    if not interactive:
        mi, ms = _INDEXED_RUN.match(stem), _SINGLE_RUN.match(stem)
        if mi:
            arm, run = sys.intern(mi["label"]), sys.intern(mi["index"])  # shared by sessions
        elif ms:
            arm = sys.intern(ms["label"])
        if campaign_run is not None:
            run = campaign_run
            layout = "campaign" if ms else "generic"
        elif repo is not None and (mi or ms):
            layout = "ab-arm"
    return SessionRef(
        log=log if log is not None else first,
        segments=files or (first,),
        pass_=pass_,
        repo=repo,
        arm=arm,
        run=run,
        layout=layout,
    )


def identity(ref: SessionRef, *, kind: str | None = None) -> dict[str, Any]:
    """The identity columns of a session (every frame's first columns), `question` excluded.

    `group` is never missing: `pass/repo` where the path gives them, else the session's parent
    directory (`.` for a session at the top of the corpus).
    """
    named = [p for p in (ref.pass_, ref.repo) if p]
    parent = ref.log.rpartition("/")[0]
    return {
        "log": ref.log,
        "pass": ref.pass_,
        "repo": ref.repo,
        "arm": ref.arm,
        "run": ref.run,
        "suite": ref.suite,
        "task": ref.task,
        "trial": ref.trial,
        "slice": "multi-turn" if len(ref.segments) > 1 else "single-question",
        "kind": kind or ("interactive" if ref.layout == "interactive" else "headless"),
        # A record knows its agent; a ref only for Inspect logs, and Codex and Inspect rows
        # override it with the agent read from the content (issue 15).
        "agent": getattr(ref, "agent", None)
        or AGENT_OF.get(getattr(ref, "format", None) or "claude-code", "claude-code"),
        "group": "/".join(named) if named else (parent or "."),
    }


def discover(root: str | os.PathLike[str]) -> Discovery:
    """Find every session under `root` and account for every entry (spec §7.1–7.5).

    Raises:
        UsageError: `root` does not exist or is not a directory.
    """
    root = Path(root)
    if not root.exists():
        raise UsageError(f"{os.fspath(root)}: no such directory")
    if not root.is_dir():
        raise UsageError(
            f"{os.fspath(root)}: not a directory (evalkit sweep reads a corpus directory; "
            "use `evalkit run FILE` for one transcript)"
        )
    root_name = root.resolve().name

    listing: dict[tuple[str, ...], list[str]] = {}
    entries: list[FileEntry] = []
    keys: dict[str, tuple] = {}  # natural_key of every listed file's path, built per directory
    linked: set[str] = set()  # files that are symbolic links, relative to the root

    def walk_error(exc: OSError) -> None:
        rel = Path(exc.filename).relative_to(root).as_posix() if exc.filename else "."
        entries.append(FileEntry(rel + "/", None, f"cannot list directory: {exc.strerror}"))

    for dirpath, parts, dir_key, dirnames, links, filenames in _walk(os.fspath(root), walk_error):
        keep = []
        has_runs = any(n.startswith("run-") for n in filenames)
        dkeys = {d: natural_key(d) for d in dirnames}
        for d in sorted(dirnames, key=dkeys.__getitem__):
            if d in links:
                entries.append(
                    FileEntry(
                        _rel(parts, d) + "/", None, "symbolic link to a directory, not followed"
                    )
                )
            elif d.startswith("."):
                n = _count_files(os.path.join(dirpath, d))
                entries.append(
                    FileEntry(_rel(parts, d) + "/", None, f"hidden directory, not read ({n} files)")
                )
            elif d in _TARGET_COPIES and has_runs:
                n = _count_files(os.path.join(dirpath, d))
                entries.append(
                    FileEntry(
                        _rel(parts, d) + "/",
                        None,
                        f"target copy the agent worked in, not read ({n} files)",
                    )
                )
            else:
                keep.append((d, dkeys[d] if dir_key is None else _joined_key(dir_key, dkeys[d])))
        dirnames[:] = keep
        fkeys = {n: natural_key(n) for n in filenames}
        listing[parts] = sorted(filenames, key=fkeys.__getitem__)
        linked.update(_rel(parts, n) for n in filenames if n in links)
        for n, k in fkeys.items():
            keys[_rel(parts, n)] = k if dir_key is None else _joined_key(dir_key, k)

    sessions: list[SessionRef] = []
    claimed: dict[tuple[str, ...], set[str]] = {}  # dir parts -> file names owned by a session

    # Interactive sessions first (§7.4): they claim their subagent directories.
    for parts, names in listing.items():
        if len(parts) < 2 or parts[-1] != "subagents":
            continue
        owner_dir, sid = parts[:-2], parts[-2]
        owner_names = listing.get(owner_dir, [])
        first = next((sid + s for s in _TRANSCRIPT_SUFFIXES if sid + s in owner_names), None)
        if first is None:
            continue
        log = _rel(owner_dir, first)
        subs = sorted(
            (n for n in names if _TRANSCRIPT.match(n) and not n.endswith(".meta.json")),
            key=listing_key,
        )  # §1.10 step 3: Node's listing order
        for n in names:
            claimed.setdefault(parts, set()).add(n)
            entries.append(FileEntry(_rel(parts, n), log))
        claimed.setdefault(owner_dir, set()).add(first)
        entries.append(FileEntry(log, log))
        sessions.append(
            SessionRef(
                log, (log,), layout="interactive", subagents=tuple(_rel(parts, n) for n in subs)
            )
        )

    for parts, names in listing.items():
        taken = claimed.get(parts, ())
        sessions.extend(_classify_dir(parts, names, root_name, taken, entries, root))

    def path_key(path: str) -> tuple:
        key = keys.get(path)
        return natural_key(path) if key is None else key

    sessions.sort(key=lambda s: path_key(s.log))
    if linked:
        sessions, entries = linked_duplicates(root, sessions, entries, linked)
    entries.sort(key=lambda e: path_key(e.path))
    return Discovery(root, tuple(sessions), tuple(entries))


def linked_duplicates(
    root: str | os.PathLike[str],
    sessions: list[SessionRef],
    entries: list[FileEntry],
    linked: Collection[str] | None = None,
) -> tuple[list[SessionRef], list[FileEntry]]:
    """One session for one transcript reached through symbolic links (issue 21).

    Two sessions whose files are the same files (the same device and inode, links followed)
    are one session, as a `.gz` copy beside its file is: a session reached without a link is
    kept, else the first in path order, and each other one's files are skipped with the reason.
    `sessions` in path order; `linked`: the files that are links (None: each is looked at).
    Only sessions with a linked file can be dropped, so a corpus without links pays nothing.
    """
    root = os.fspath(root)

    def is_link(rel: str) -> bool:
        if linked is not None:
            return rel in linked
        try:
            return os.path.islink(os.path.join(root, rel))
        except (OSError, ValueError):
            return False

    via_link = [any(map(is_link, ref.segments)) for ref in sessions]
    if not any(via_link):
        return sessions, entries
    kept: dict[tuple[tuple[int, int], ...], SessionRef] = {}
    order = sorted(range(len(sessions)), key=lambda i: via_link[i])  # unlinked first, stable
    dropped: dict[str, str] = {}  # log → the log it duplicates
    for i in order:
        ref = sessions[i]
        try:
            ident = tuple(
                (st.st_dev, st.st_ino)
                for st in (os.stat(os.path.join(root, f)) for f in ref.segments)
            )
        except (OSError, ValueError):
            continue  # a dangling link: its parse names the problem
        first = kept.setdefault(ident, ref)
        if first is not ref and via_link[i]:
            dropped[ref.log] = first.log
    if not dropped:
        return sessions, entries
    out = []
    for e in entries:
        if e.session in dropped:
            why = f"symbolic link to the transcript of {dropped[e.session]}, not read again"
            e = FileEntry(e.path, None, why)
        out.append(e)
    return [ref for ref in sessions if ref.log not in dropped], out


def _walk(top: str, onerror: Any) -> Iterator[tuple[Any, ...]]:
    """`os.walk(top, onerror=onerror)` from the top down, one `scandir` per directory.

    Yields `(dirpath, parts, key, dirnames, links, filenames)`: `parts` is the directory's
    path relative to `top` as a tuple, `key` its `natural_key` (None at the top), `links` the
    names in `dirnames` and `filenames` that are symbolic links (from the listing, without a
    `stat`). The
    caller replaces `dirnames` with the `(name, key)` pairs of the subdirectories to enter, in
    order. A directory that cannot be listed is reported to `onerror` and not yielded, as
    `os.walk` does; a name whose type cannot be told is a file, as there.
    """
    stack: list[tuple[str, tuple[str, ...], tuple | None]] = [(top, (), None)]
    while stack:
        path, parts, key = stack.pop()
        dirs: list[Any] = []
        files: list[str] = []
        links: set[str] = set()
        try:
            with os.scandir(path) as it:
                for entry in it:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        files.append(entry.name)
                        try:
                            if entry.is_symlink():  # from the listing: no system call
                                links.add(entry.name)
                        except OSError:
                            pass
                        continue
                    dirs.append(entry.name)
                    try:
                        if entry.is_symlink():
                            links.add(entry.name)
                    except OSError:
                        pass
        except OSError as exc:
            onerror(exc)
            continue
        yield path, parts, key, dirs, links, files
        for name, child_key in reversed(dirs):
            stack.append((os.path.join(path, name), (*parts, name), child_key))


def force_format(found: Discovery, fmt: str | None) -> Discovery:
    """Every session of `found` read by one reader (`--format`), not by what its content says.

    A Claude Code session with several segment files (`X.t2.jsonl`, …) or an interactive log
    with subagent files cannot be read by another agent's one-file reader: forced to such a
    reader it is reported as a crash saying so, never read in part. Entries that are not
    sessions stay skipped. `fmt` None (or `auto`) leaves `found` unchanged.

    Raises:
        UsageError: `fmt` is not a format name.
    """
    fmt = check_format(fmt)
    if fmt is None:
        return found
    sessions = []
    for ref in found.sessions:
        problem = ref.problem
        if problem is None and fmt != "claude-code":
            if len(ref.segments) > 1:
                problem = (
                    f"{len(ref.segments)} segment files make a Claude Code session; "
                    f"--format {fmt} reads one file"
                )
            elif ref.layout == "interactive" and ref.subagents:
                problem = (
                    f"an interactive Claude Code log with subagent files; --format {fmt} reads "
                    "one file"
                )
        sessions.append(replace(ref, format=fmt, problem=problem))
    return Discovery(found.root, tuple(sessions), found.files)


def _is_agent_log(path: Path) -> bool:
    """An Inspect AI log under a name the transcript rules do not take (`*.eval`, `*.json`)."""
    if not path.name.endswith((".eval", ".json")):
        return False
    return is_inspect_file(path)  # the head alone: no other reader is imported to tell


def _classify_dir(
    parts: tuple[str, ...],
    names: list[str],
    root_name: str,
    claimed: Collection[str],
    entries: list[FileEntry],
    root: Path | None = None,
) -> list[SessionRef]:
    """Sessions and file entries of one directory (the rules in the module docstring);
    `claimed`: the names in it that an interactive session owns already."""
    prefix = "/".join(parts) + "/" if parts else ""
    firsts: dict[str, str] = {}  # stem -> first segment file name
    turns: dict[str, list[tuple[int, str]]] = {}
    others: list[str] = []
    # Each name matched once (a name that does not end so can match neither pattern).
    matches = {n: _TRANSCRIPT.match(n) if n.endswith(_TRANSCRIPT_SUFFIXES) else None for n in names}
    run_stems = {m["stem"] for n, m in matches.items() if m and n.startswith("run-")}
    for name in names:
        if name in claimed:
            continue
        m = matches[name]
        side = _SIDECAR.match(name) if m and name.startswith("explore-") else None
        if side and any(
            s == "run-" + side["label"] or s.startswith("run-" + side["label"] + "-")
            for s in run_stems
        ):
            entries.append(
                FileEntry(prefix + name, None, "explore sidecar log of a run, not a transcript")
            )
            continue
        if not m:
            others.append(name)
            continue
        stem = m["stem"]
        if m["turn"] is not None:
            if m["gz"] and name[:-3] in matches:
                entries.append(
                    FileEntry(prefix + name, None, f"compressed duplicate of {name[:-3]}, not read")
                )
                continue
            turns.setdefault(stem, []).append((int(m["turn"]), name))
        elif stem in firsts:
            # `x.jsonl` and `x.jsonl.gz` both present: one session, the plain file wins.
            plain, gz = sorted((firsts[stem], name), key=lambda n: n.endswith(".gz"))
            firsts[stem] = plain
            entries.append(
                FileEntry(prefix + gz, None, f"compressed duplicate of {plain}, not read")
            )
        else:
            firsts[stem] = name

    pass_, repo, campaign_run = _labels(parts, root_name)
    here = parts[-1] if parts else root_name

    sessions: list[SessionRef] = []
    for name in others:
        rel = prefix + name
        if root is not None and _is_agent_log(root / rel):
            entries.append(FileEntry(rel, rel))
            sessions.append(
                SessionRef(log=rel, segments=(rel,), pass_=pass_, repo=repo, format="inspect")
            )
            continue
        reason = next(
            (why for pat, why in _KNOWN_FILES if pat.search(name)),
            "not a transcript (not *.jsonl, *.ndjson or their .gz)",
        )
        entries.append(FileEntry(rel, None, reason))

    for stem, first in firsts.items():
        segs = [first] + [
            n for _, n in sorted(turns.pop(stem, []), key=lambda t: (t[0], natural_key(t[1])))
        ]
        log = prefix + first
        arm = run = problem = None
        layout: Layout = "generic"
        mi, ms = _INDEXED_RUN.match(stem), _SINGLE_RUN.match(stem)
        if mi:
            if "run-" + mi["label"] in firsts:
                why = (
                    f"ignored: run-{mi['label']}.jsonl is in the same directory, so arm "
                    f"'{mi['label']}' has exactly one run"
                )
                entries.extend(FileEntry(prefix + n, None, why) for n in segs)
                continue
            arm, run = sys.intern(mi["label"]), sys.intern(mi["index"])  # shared by sessions
            if str(int(run)) != run:
                problem = (
                    f"zero-padded run index '{run}': the reference rebuilds the name as "
                    f"run-{arm}-{int(run)}.jsonl and crashes"
                )
        elif ms:
            arm = sys.intern(ms["label"])
        if here.startswith("-") and _SESSION_ID.match(stem) and len(segs) == 1:
            layout = "interactive"
        elif campaign_run is not None:
            run = campaign_run
            layout = "campaign" if ms else "generic"
        elif repo is not None and (mi or ms):
            layout = "ab-arm"
        # One string per path, shared by the file's entry and the session's segments.
        paths = (log, *(prefix + n for n in segs[1:]))
        entries.extend(FileEntry(path, log) for path in paths)
        sessions.append(
            SessionRef(
                log=log,
                segments=paths,
                pass_=pass_,
                repo=repo,
                arm=arm,
                run=run,
                layout=layout,
                problem=problem,
            )
        )

    for stem, orphan in turns.items():
        for _, name in orphan:
            entries.append(
                FileEntry(
                    prefix + name,
                    None,
                    f"a .tN segment without its first segment {stem}.jsonl (never a session of "
                    "its own)",
                )
            )
    return sessions


# --- runs of one arm in one directory (§7.2, compare-arms.mjs) ----------------------------------

_JS_REGEX_SPECIAL = re.compile(r"[.*+?^${}()|\[\]\\]")


@dataclass(frozen=True)
class ArmRun:
    """One run of an arm, as `compare-arms.mjs`'s `discoverRuns` finds it (§7.2).

    Attributes:
        name: `<label>` for a single run, `<label>-<i>` for an indexed one.
        segments: The segment files (paths under the directory), in reading order.
        problem: Set when the reference crashes on this run before reading it: a zero-padded
            index points at a file that does not exist (§7.2 quirk).
    """

    name: str
    segments: tuple[str, ...]
    problem: str | None = None


def turn_files(names: list[str], stem: str) -> list[str]:
    """The `<stem>.t<N>.jsonl` names among `names`, sorted numerically by N (§7.2, §7.3)."""
    pat = re.compile("^" + _JS_REGEX_SPECIAL.sub(r"\\\g<0>", stem) + r"\.t(\d+)\.jsonl$")
    found = [(int(m[1]), n) for n in names if (m := pat.match(n))]
    return [n for _, n in sorted(found, key=lambda t: t[0])]


def discover_runs(directory: str | os.PathLike[str], label: str) -> tuple[ArmRun, ...]:
    """`discoverRuns(dir, label)` of `compare-arms.mjs` (§7.2).

    `run-<label>.jsonl` makes the arm exactly one run (its `.tN` files follow, sorted
    numerically) and the indexed files are ignored; otherwise every `run-<label>-<i>.jsonl` is a
    run, indices sorted numerically. The label is regex-escaped inside the patterns.

    Raises:
        UsageError: The directory does not exist or cannot be listed.
    """
    directory = Path(directory)
    try:
        names = sorted(os.listdir(directory), key=listing_key)
    except FileNotFoundError:
        raise UsageError(f"{os.fspath(directory)}: no such directory") from None
    except NotADirectoryError:
        raise UsageError(f"{os.fspath(directory)}: not a directory") from None
    except OSError as exc:
        raise UsageError(f"{os.fspath(directory)}: cannot list ({exc.strerror})") from None
    single = f"run-{label}.jsonl"
    if single in names:
        segs = [single, *turn_files(names, f"run-{label}")]
        return (ArmRun(label, tuple(os.fspath(directory / n) for n in segs)),)
    indexed = re.compile("^run-" + _JS_REGEX_SPECIAL.sub(r"\\\g<0>", label) + r"-(\d+)\.jsonl$")
    found = sorted(((int(m[1]), n) for n in names if (m := indexed.match(n))), key=lambda t: t[0])
    runs = []
    for index, name in found:
        stem = f"run-{label}-{index}"  # rebuilt from the number, as the reference does
        first = f"{stem}.jsonl"
        problem = None
        if first not in names:
            problem = (
                f"{name}: the run index is zero-padded, so the reference looks for {first}, "
                "which does not exist (compare-arms.mjs crashes here)"
            )
        segs = [first, *turn_files(names, stem)]
        runs.append(
            ArmRun(f"{label}-{index}", tuple(os.fspath(directory / n) for n in segs), problem)
        )
    return tuple(runs)
