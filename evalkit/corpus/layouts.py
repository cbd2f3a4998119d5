"""Corpus layouts other than the codegraph harness's: `--layout PATTERN` and the `harbor` preset.

The harness's own layouts (`evalkit.corpus.discover`, spec §7) stay the default. A layout is
given either as a **pattern** matched against corpus-relative file paths, one `/`-separated
component at a time::

    {suite}/{arm}/{task}/{trial}/agent/claude-code.txt

with the placeholders `{suite}`, `{pass}`, `{repo}`, `{task}`, `{arm}`, `{trial}` and `{run}`
(each matches one non-empty path component, or part of one: `{task}_{trial}.jsonl`), `*` for any
text inside one component and a `**` component for any number of directories; or as the
**harbor** preset for a harbor run tree (agent-formats §4.2, §4.7): every directory holding
`agent/claude-code.txt` or `agent/codex.txt` (Codex's `exec --json` stdout) is a trial
(`trial` = its name), its parent the `task`, the grandparent the `arm`, the next one up inside
the root the `suite`; its `result.json` gives the outcome; the copy under `agent/sessions/` and
`agent/trajectory.json` are the same run and are not counted again. A trial with neither log
but a `result.json` and Harbor's `agent/trajectory.json` (ATIF, §4.5: an OpenHands or
mini-swe-agent trial) is read from the trajectory, as the agent it names. Every other entry is
accounted for with a reason, as discovery does.

Each file a layout matches is one session of one segment; which agent wrote it is read from its
content (`evalkit.formats.detect`), so a `.txt` name is fine and a pattern layout mixes
Claude Code, Codex and Inspect files.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from evalkit.corpus.discover import (
    HARBOR_NO_TRANSCRIPT,
    Discovery,
    FileEntry,
    SessionRef,
    linked_duplicates,
    natural_key,
)
from evalkit.errors import UsageError

__all__ = [
    "PLACEHOLDERS",
    "HARBOR",
    "HARBOR_TRANSCRIPT",
    "HARBOR_LOGS",
    "CorpusLayout",
    "parse_layout",
    "discover_layout",
    "LayoutChoice",
    "detect_layout",
]

PLACEHOLDERS = ("suite", "pass", "repo", "task", "arm", "trial", "run")
HARBOR = "harbor"
HARBOR_TRANSCRIPT = ("agent", "claude-code.txt")
HARBOR_ATIF = "trajectory.json"
# The logs a harbor trial's `agent/` may hold, the one read first (agent-formats §4.3, §4.5).
HARBOR_LOGS = ("claude-code.txt", "codex.txt", HARBOR_ATIF)
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class CorpusLayout:
    """A parsed `--layout`: the harbor preset, or a pattern compiled to a regex."""

    name: str  # `harbor` or `pattern`
    pattern: str | None = None
    regex: re.Pattern[str] | None = None

    def describe(self) -> str:
        return "harbor run tree" if self.name == HARBOR else f"pattern {self.pattern}"


def _component(text: str, seen: set[str], pattern: str) -> str:
    out, pos = [], 0
    for m in _PLACEHOLDER.finditer(text):
        out.append(re.escape(text[pos : m.start()]).replace(r"\*", "[^/]*"))
        name = m.group(1)
        if name not in PLACEHOLDERS:
            raise UsageError(
                f"--layout {pattern}: unknown placeholder {{{name}}} "
                f"(use {', '.join('{' + p + '}' for p in PLACEHOLDERS)})"
            )
        if name in seen:
            raise UsageError(f"--layout {pattern}: {{{name}}} appears twice")
        seen.add(name)
        out.append(f"(?P<{name}>[^/]+?)")
        pos = m.end()
    out.append(re.escape(text[pos:]).replace(r"\*", "[^/]*"))
    return "".join(out)


def parse_layout(text: str | CorpusLayout | None) -> CorpusLayout | None:
    """`harbor`, a pattern with placeholders, or None (the harness's layouts).

    Raises:
        UsageError: A pattern without placeholders, with an unknown or repeated placeholder, an
            empty component, or an absolute path.
    """
    if text is None or isinstance(text, CorpusLayout):
        return text
    if text == HARBOR:
        return CorpusLayout(HARBOR)
    if "{" not in text:
        raise UsageError(
            f"--layout {text}: not a layout (give `harbor`, or a pattern such as "
            "{suite}/{arm}/{task}/{trial}/agent/claude-code.txt)"
        )
    if text.startswith("/"):
        raise UsageError(f"--layout {text}: the pattern is matched against paths inside DIR")
    seen: set[str] = set()
    parts = []
    components = text.strip("/").split("/")
    for i, comp in enumerate(components):
        if not comp:
            raise UsageError(f"--layout {text}: empty path component")
        if comp == "**":
            parts.append("(?:[^/]+/)*" if i < len(components) - 1 else ".*")
            continue
        parts.append(_component(comp, seen, text) + ("/" if i < len(components) - 1 else ""))
    if not seen:
        raise UsageError(f"--layout {text}: the pattern names no placeholder")
    return CorpusLayout("pattern", text, re.compile("".join(parts) + r"\Z"))


def _walk(root: Path, entries: list[FileEntry]) -> list[tuple[str, ...]]:
    """Every regular file under root (as path parts), hidden and linked directories accounted."""

    def walk_error(exc: OSError) -> None:
        rel = Path(exc.filename).relative_to(root).as_posix() if exc.filename else "."
        entries.append(FileEntry(rel + "/", None, f"cannot list directory: {exc.strerror}"))

    files = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=walk_error):
        here = Path(dirpath)
        parts = here.relative_to(root).parts
        keep = []
        for d in sorted(dirnames, key=natural_key):
            full = here / d
            rel = "/".join((*parts, d)) + "/"
            if full.is_symlink():
                entries.append(FileEntry(rel, None, "symbolic link to a directory, not followed"))
            elif d.startswith("."):
                n = sum(len(f) for _, _, f in os.walk(full))
                entries.append(FileEntry(rel, None, f"hidden directory, not read ({n} files)"))
            else:
                keep.append(d)
        dirnames[:] = keep
        files += [(*parts, name) for name in filenames]
    return files


def _trial_ref(tdir: tuple[str, ...], log: str, outcome: str | None, fmt: str | None) -> SessionRef:
    """A harbor trial's session: `<suite>/<arm>/<task>/<trial>/…` named by its folders."""
    return SessionRef(
        log=log,
        segments=(log,),
        arm=tdir[-3] if len(tdir) >= 3 else None,
        run=tdir[-1],
        layout="harbor",
        suite=tdir[-4] if len(tdir) >= 4 else None,
        task=tdir[-2] if len(tdir) >= 2 else None,
        trial=tdir[-1],
        outcome=outcome,
        format=fmt,
    )


def _harbor(
    files: list[tuple[str, ...]], entries: list[FileEntry], root: Path | None = None
) -> list[SessionRef]:
    trials: dict[tuple[str, ...], str] = {}  # trial directory parts -> the session's log
    sessions = []
    present = set(files)
    # A trial's log: the agent's own (Claude Code's, Codex's), else Harbor's ATIF trajectory
    # (an OpenHands or mini-swe-agent trial), read as the trajectory's agent (issue 23).
    candidates: dict[tuple[str, ...], tuple[int, tuple[str, ...]]] = {}
    for parts in files:
        if len(parts) >= 3 and parts[-2] == "agent" and parts[-1] in HARBOR_LOGS:
            rank = HARBOR_LOGS.index(parts[-1])
            tdir = parts[:-2]
            if tdir not in candidates or rank < candidates[tdir][0]:
                candidates[tdir] = (rank, parts)
    for tdir, (_rank, parts) in sorted(candidates.items()):
        log = "/".join(parts)
        trials[tdir] = log
        outcome = (*tdir, "result.json")
        atif = parts[-1] == HARBOR_ATIF
        if atif and outcome not in present:
            del trials[tdir]  # a trajectory alone is not a trial (§4.7: result.json and agent/)
            continue
        found = "/".join(outcome) if outcome in present else None
        sessions.append(_trial_ref(tdir, log, found, "atif" if atif else None))
    # §4.7: a directory holding result.json and agent/ (or harbor's exception.txt or
    # trial.log) is a trial even without a transcript: a run harbor failed around, which wrote
    # none. It is a session of its own, named by its result.json, whose status is infra_error
    # (issue 23); its outcome is joined as any other's.
    with_agent = {p[:i] for p in files for i, c in enumerate(p[:-1]) if c == "agent"}
    with_agent |= {p[:-1] for p in files if p[-1] in ("exception.txt", "trial.log")}
    results = {p[:-1] for p in files if p[-1] == "result.json" and p[:-1] not in trials}
    if root is not None:  # an agent/ folder left empty
        with_agent |= {t for t in results if root.joinpath(*t, "agent").is_dir()}
    # Another agent's log (agent/codex.txt, a trajectory, a session copy): not read here.
    other_log = {
        p[:i]
        for p in files
        for i, c in enumerate(p[:-1])
        if c == "agent"
        and (
            (len(p) == i + 2 and p[-1].endswith((".txt", ".json", ".jsonl")))
            or (len(p) > i + 2 and p[i + 1] == "sessions")
        )
    }
    agentless = {t for t in results if t in with_agent and t not in other_log}
    unread = {t for t in results if t in with_agent and t in other_log}
    for tdir in sorted(agentless):
        log = "/".join((*tdir, "result.json"))
        trials[tdir] = log
        sessions.append(_trial_ref(tdir, log, log, HARBOR_NO_TRANSCRIPT))
    for parts in files:
        rel = "/".join(parts)
        owner = next((parts[:k] for k in range(len(parts) - 1, 0, -1) if parts[:k] in trials), None)
        if owner is None:
            bare = next(
                (parts[:k] for k in range(len(parts) - 1, 0, -1) if parts[:k] in unread), None
            )
            why = (
                "harbor trial without a log evalkit reads (agent/claude-code.txt, "
                "agent/codex.txt or agent/trajectory.json): not read, its outcome not counted"
                if bare is not None
                else "not in a harbor trial directory (no agent/claude-code.txt, agent/codex.txt "
                "or agent/trajectory.json)"
            )
            entries.append(FileEntry(rel, None, why))
            continue
        log, inside = trials[owner], parts[len(owner) :]
        native = log.rpartition("/")[2]
        if rel == log:
            entries.append(FileEntry(rel, log))
        elif inside == ("result.json",):
            entries.append(FileEntry(rel, log))  # read for the trial's outcome
        elif inside[:2] == ("agent", "sessions"):
            what = "interactive copy" if native == HARBOR_TRANSCRIPT[1] else "copy"
            entries.append(FileEntry(rel, None, f"{what} of the same run (agent/{native} is read)"))
        elif inside == ("agent", HARBOR_ATIF):
            entries.append(FileEntry(rel, None, "ATIF copy of the same run, not counted again"))
        elif len(inside) == 2 and inside[0] == "agent" and inside[1] in HARBOR_LOGS:
            entries.append(
                FileEntry(rel, None, f"the same run's other log (agent/{native} is read)")
            )
        else:
            entries.append(FileEntry(rel, None, "harbor trial file, not a transcript"))
    return sessions


def _pattern(
    layout: CorpusLayout, files: list[tuple[str, ...]], entries: list[FileEntry]
) -> list[SessionRef]:
    assert layout.regex is not None
    sessions = []
    for parts in files:
        rel = "/".join(parts)
        m = layout.regex.match(rel)
        if m is None:
            entries.append(FileEntry(rel, None, f"does not match the layout {layout.pattern}"))
            continue
        g = m.groupdict()
        entries.append(FileEntry(rel, rel))
        sessions.append(
            SessionRef(
                log=rel,
                segments=(rel,),
                pass_=g.get("pass"),
                repo=g.get("repo"),
                arm=g.get("arm"),
                run=g.get("run") or g.get("trial"),
                layout="pattern",
                suite=g.get("suite"),
                task=g.get("task"),
                trial=g.get("trial"),
            )
        )
    return sessions


def discover_layout(root: str | os.PathLike[str], layout: str | CorpusLayout) -> Discovery:
    """The sessions a layout finds under `root`, and the account of every entry.

    Raises:
        UsageError: `root` is not a directory, or the layout is not usable.
    """
    spec = parse_layout(layout)
    assert spec is not None
    root = Path(root)
    if not root.is_dir():
        what = "not a directory" if root.exists() else "no such directory"
        raise UsageError(f"{os.fspath(root)}: {what}")
    entries: list[FileEntry] = []
    files = sorted(_walk(root, entries), key=lambda p: natural_key("/".join(p)))
    if spec.name == HARBOR:
        sessions = _harbor(files, entries, root)
    else:
        sessions = _pattern(spec, files, entries)
    sessions.sort(key=lambda s: natural_key(s.log))
    sessions, entries = linked_duplicates(root, sessions, entries)  # one session per transcript
    entries.sort(key=lambda e: natural_key(e.path))
    return Discovery(root, tuple(sessions), tuple(entries))


# --- recognising a harbor tree when no layout is given (issue 23) -----------------------------

# What a harbor trial's `agent/` holds (agent-formats §4.3): an agent's log, or the ATIF copy.
HARBOR_AGENT_LOGS = ("claude-code.txt", "codex.txt", "trajectory.json")


@dataclass(frozen=True)
class LayoutChoice:
    """The layout recognised for a tree when none was given, and why.

    Attributes:
        layout: The layout (`harbor`).
        reason: Why, in plain words (the first trial folder that shows it).
    """

    layout: str
    reason: str

    def line(self) -> str:
        return f"Layout: {self.layout} ({self.reason}; --layout overrides)"


def detect_layout(root: str | os.PathLike[str]) -> LayoutChoice | None:
    """`harbor` when some folder under `root` is a harbor trial (a `result.json` beside an
    `agent/` folder holding an agent's log, `HARBOR_AGENT_LOGS`), else None (the harness's
    rules). The first such folder in name order is named in the reason."""
    root = os.fspath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort(key=natural_key)
        if "result.json" in filenames and "agent" in dirnames:
            try:
                logs = sorted(
                    set(os.listdir(os.path.join(dirpath, "agent"))) & set(HARBOR_AGENT_LOGS)
                )
            except OSError:
                continue
            if logs:
                rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
                return LayoutChoice(
                    HARBOR,
                    f"a harbor run tree: {rel}/agent/{logs[0]} beside {rel}/result.json",
                )
    return None
