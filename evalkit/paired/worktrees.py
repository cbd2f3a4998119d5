"""Git plumbing of the collector: revisions, fresh detached worktrees, cleanliness (spec §8.1, §8.3).

Every git command runs without a shell, with stdin on the null device and no terminal prompt.
The collector removes only the worktrees it created (`git worktree remove --force`, with a
recursive delete of the worktree and of its own administrative entry as fallback); it never
runs a global `git worktree prune` and never touches other worktrees. The administrative entry
is found in the collector's own repository when the worktree is created, never through the
worktree's `.git` file, which the driver controls.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from evalkit.errors import UsageError
from evalkit.paired._json import is_commit_hex

__all__ = [
    "GitError",
    "add_worktree",
    "committed_file",
    "git",
    "head_of",
    "is_clean",
    "remove_worktree",
    "repo_toplevel",
    "resolve_commit",
]


class GitError(RuntimeError):
    """A git command failed. The message names the command, never its output."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def git(cwd: str | os.PathLike[str], *args: str, binary: bool = False):
    """Run `git -C cwd args...` and return its stdout (text unless `binary`).

    Raises:
        GitError: non-zero exit or git missing.
    """
    try:
        done = subprocess.run(
            ["git", "-C", str(cwd), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=_env(),
            check=False,
        )
    except OSError:
        raise GitError("git is not available") from None
    if done.returncode != 0:
        raise GitError(f"git {args[0]} failed")
    return done.stdout if binary else done.stdout.decode("utf-8", "replace")


def repo_toplevel(repo: str | os.PathLike[str]) -> Path:
    """The root of the worktree holding `repo` (spec §8.1 message when there is none)."""
    try:
        out = git(repo, "rev-parse", "--show-toplevel").strip()
    except GitError:
        raise UsageError("benchmark repo must be inside a Git worktree") from None
    if not out:  # inside a bare repository or a .git directory
        raise UsageError("benchmark repo must be inside a Git worktree")
    return Path(out)


def resolve_commit(repo: Path, rev: str, *, what: str = "base") -> str:
    """Resolve `rev` to a commit and require the exact 40-hex form (spec §8.1 messages)."""
    try:
        out = git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    except GitError:
        raise UsageError(f"could not resolve {what} revision: {rev}") from None
    resolved = out.strip()
    if not is_commit_hex(resolved):
        raise UsageError(f"resolved {what} revision is not an exact 40-hex commit")
    return resolved


def head_of(path: str | os.PathLike[str]) -> str | None:
    """The commit checked out at `path`, or None when it cannot be read."""
    try:
        return git(path, "rev-parse", "--verify", "--quiet", "HEAD").strip() or None
    except GitError:
        return None


def committed_file(repo: Path, rev: str, relpath: str) -> bytes | None:
    """The bytes of `relpath` in commit `rev`, or None when the commit has no such file."""
    try:
        return git(repo, "show", f"{rev}:{relpath}", binary=True)
    except GitError:
        return None


def add_worktree(repo: Path, path: Path, rev: str) -> Path | None:
    """Create a fresh detached worktree of `rev` at `path`; roll back a failed checkout.

    Returns:
        The worktree's administrative directory (`<common dir>/worktrees/<name>`) as recorded at
        creation, before any driver runs; `remove_worktree` removes exactly that one.
    """
    try:
        git(repo, "worktree", "add", "--detach", "--quiet", str(path), rev)
    except GitError:
        remove_worktree(repo, path)
        raise
    return _registered_admin(repo, path)


def is_clean(path: Path) -> bool:
    """True when the worktree has no tracked or untracked changes (ignored files aside)."""
    try:
        return git(path, "status", "--porcelain", "--untracked-files=all").strip() == ""
    except GitError:
        return False


def remove_worktree(repo: Path, path: Path, admin: Path | None = None) -> None:
    """Remove one worktree this collector created, and only that one.

    The worktree's own `.git` file is never read: a driver may have rewritten its `gitdir:` to
    point at another repository's registration. The administrative directory is the one
    recorded at creation (`admin`), or else the entry of this repository whose `gitdir` names
    `path`; either way it is removed only after checking that it lies in this repository's own
    `worktrees/` directory (no global `git worktree prune`, §8.3).
    """
    if admin is None:
        admin = _registered_admin(repo, path)
    try:
        git(repo, "worktree", "remove", "--force", str(path))
    except GitError:
        pass
    if path.is_symlink():
        path.unlink()  # never follow a link the driver put in its place
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)
    if admin is not None and _own_admin(repo, admin) and admin.is_dir():
        shutil.rmtree(admin, ignore_errors=True)


def _worktrees_dir(repo: Path) -> Path | None:
    """This repository's `<common dir>/worktrees`, where git keeps worktree registrations."""
    try:
        out = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    except GitError:
        return None
    return Path(out) / "worktrees" if out else None


def _own_admin(repo: Path, admin: Path) -> bool:
    """Whether `admin` is a real directory directly inside this repository's `worktrees/`."""
    base = _worktrees_dir(repo)
    if base is None or admin.is_symlink():
        return False
    try:
        return admin.resolve(strict=True).parent == base.resolve(strict=True)
    except OSError:
        return False


def _registered_admin(repo: Path, path: Path) -> Path | None:
    """The entry of this repository's `worktrees/` whose `gitdir` file names `path/.git`."""
    base = _worktrees_dir(repo)
    if base is None or not base.is_dir():
        return None
    want = os.path.realpath(path / ".git")
    for entry in sorted(base.iterdir()):
        try:
            text = (entry / "gitdir").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if os.path.realpath(text) == want and _own_admin(repo, entry):
            return entry
    return None
