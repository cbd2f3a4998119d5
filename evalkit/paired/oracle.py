"""Fixture oracles: file checks of a sample workspace against its recorded source (spec §8.4 step 8).

Only the guarded two-file edit has an oracle (`fixture_oracle_required`, §2.2). It compares the
workspace with the commit the workspace was created from, never with the workspace HEAD, so a
driver that commits its change cannot move the reference. An oracle establishes fixture
eligibility only: a passed oracle never creates a task pass (§5.3 step 2, §11).
"""

from __future__ import annotations

from pathlib import Path

from evalkit.paired.schema import FixtureOracle
from evalkit.paired.worktrees import GitError, committed_file, git

__all__ = ["FIXTURE_DIR", "run_fixture_oracle"]

FIXTURE_DIR = "tests/fixtures/agent-loop-multi-file"
# The two targets of the guarded_multi_file_edit prompt; the sentinels must stay unchanged.
_EDITS = (
    ("BENCH_TARGET_ALPHA=before", "BENCH_TARGET_ALPHA=after"),
    ("BENCH_TARGET_BETA=before", "BENCH_TARGET_BETA=after"),
)
_UNAVAILABLE = FixtureOracle(available=False, passed=None)


def run_fixture_oracle(case_id: str, *, repo: Path, source: str, workspace: Path) -> FixtureOracle:
    """The oracle verdict for one sample; `available: false` for cases without an oracle."""
    if case_id != "guarded_multi_file_edit":
        return _UNAVAILABLE
    expected = _expected_files(repo, source)
    if expected is None:
        return _UNAVAILABLE
    try:
        changed = git(workspace, "diff", "--name-only", "--no-renames", source, "--").split("\n")
        untracked = git(workspace, "ls-files", "--others", "--exclude-standard").split("\n")
    except GitError:
        return FixtureOracle(available=True, passed=False)
    touched = {p for p in [*changed, *untracked] if p}
    if touched != set(expected):
        return FixtureOracle(available=True, passed=False)
    for relpath, content in expected.items():
        try:
            actual = (workspace / relpath).read_bytes()
        except OSError:
            return FixtureOracle(available=True, passed=False)
        if actual != content:
            return FixtureOracle(available=True, passed=False)
    return FixtureOracle(available=True, passed=True)


def _expected_files(repo: Path, source: str) -> dict[str, bytes] | None:
    """Fixture files of `source` with the two edits applied; None when the fixture is absent."""
    try:
        names = git(repo, "ls-tree", "-r", "--name-only", source, "--", FIXTURE_DIR + "/")
    except GitError:
        return None
    expected: dict[str, bytes] = {}
    found = [False] * len(_EDITS)
    for relpath in filter(None, names.split("\n")):
        data = committed_file(repo, source, relpath)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        edited = text
        for i, (old, new) in enumerate(_EDITS):
            if old in text:
                found[i] = True
                edited = edited.replace(old, new)
        if edited != text:
            expected[relpath] = edited.encode("utf-8")
    return expected if all(found) else None
