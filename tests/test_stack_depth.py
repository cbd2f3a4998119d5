"""A line nested hundreds of levels deep reads the same whatever called the reader.

Python's `json` counts nesting against the recursion limit the caller's frames share, so the
same file once gave one row through `sessions_df([path])` and another through `load_corpus(DIR)`
(`evalkit.formats.stack`). Every reader now gets the same headroom below its own frame.
"""

from __future__ import annotations

import json
from pathlib import Path

import evalkit
from evalkit.corpus.frames import sessions_df
from tests.arm_helpers import run_events
from tests.tool_helpers import codex_exec_events

DEPTH = 900  # deeper than a reader called 400 frames down could once parse
COLUMNS = ["agent", "turns", "tool_calls", "skipped_lines", "prompt_tokens", "output_tokens"]


def _deep(kind: str) -> str:
    """A JSON-object line with a value nested `DEPTH` levels deep (written by hand: encoding it
    with `json.dumps` would itself run out of stack)."""
    return f'{{"type":"{kind}","extra":{"[" * DEPTH}1{"]" * DEPTH}}}'


def _write(path: Path, events: list[dict], deep_at: int, kind: str) -> Path:
    text = [json.dumps(e) for e in events]
    text.insert(deep_at, _deep(kind))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def _corpus(root: Path) -> list[Path]:
    return [
        _write(root / "exec-1.jsonl", codex_exec_events(), 2, "item.completed"),
        _write(root / "run-a-1.jsonl", run_events(explores=1), 1, "system"),
    ]


def _from_deep_in_the_stack(levels: int, fn):
    return _from_deep_in_the_stack(levels - 1, fn) if levels else fn()


def _rows(df):
    return df[COLUMNS].astype(str).to_dict("records")


def test_a_deep_line_reads_the_same_from_any_stack(tmp_path):
    paths = _corpus(tmp_path / "c")
    shallow = _rows(sessions_df(paths))
    deep = _rows(_from_deep_in_the_stack(400, lambda: sessions_df(paths)))
    assert deep == shallow
    frame = evalkit.load_corpus(tmp_path / "c", cache=False, jobs=1).sessions_df()
    by_log = frame.set_index("log").loc[["exec-1.jsonl", "run-a-1.jsonl"]].reset_index()
    assert _rows(by_log) == shallow
    # the deep line is read, not skipped as "not JSON"
    assert [r["skipped_lines"] for r in shallow] == ["0", "0"]
