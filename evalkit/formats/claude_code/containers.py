"""Other containers of Claude Code stream messages, recognised by content (agent-formats §5.2).

The reference reads one container, JSONL (one stream message per line). Real runs also keep:

* a pretty-printed **JSON array** of stream messages (claude-code-action's
  `claude-execution-output.json`, `jq -s .` of the CLI's output): the file starts, after
  whitespace, with `[`, and the whole file parses as one array;
* **wrapped lines** `{"timestamp": <capture time>, "raw": {<stream message>}}` written by SDK
  capture tools: unwrapped, the capture time kept under `CAPTURE_KEY`;
* any file name (harbor's `agent/claude-code.txt`): the content decides, never the extension.

None of these changes what the reference reads from its own JSONL files: an array file holds no
line that parses as an object in the reference, and a wrapped line has no `type`, so the
reference drops both. Events of types the reader does not use (`rate_limit_event`,
`stream_event`, …) are counted per type in the reading account; they are kept, never damage.

Kept apart from `transcripts.read_segment`, which calls these functions at two points only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "CAPTURE_KEY",
    "READ_TYPES",
    "NO_TYPE",
    "starts_with_array",
    "read_array",
    "unwrap",
    "unwrap_all",
    "other_types",
]

# Where an unwrapped event keeps its wrapper's capture time (the capturing client's clock).
CAPTURE_KEY = "evalkit_capture_timestamp"
# The stream-json types the metrics read (reference-metrics §1.3); others are counted.
READ_TYPES = frozenset({"system", "assistant", "user", "result"})
NO_TYPE = "(no type)"
_WRAPPER_KEYS = frozenset({"raw", "timestamp"})
_LEADING_WS = re.compile(rb"[ \t\n\r]*")


def starts_with_array(data: bytes) -> bool:
    """The first byte that is not JSON whitespace is `[` (§5.2 detection order)."""
    i = _LEADING_WS.match(data).end()  # type: ignore[union-attr]  # no copy of a large file
    return data[i : i + 1] == b"["


def read_array(
    data: bytes, parse: Callable[[str], tuple[bool, Any]]
) -> tuple[list[Any], int] | None:
    """The elements of a file that is one JSON array, and how many lines had invalid UTF-8.

    Args:
        data: The file's bytes.
        parse: The reader's JSON parser (ECMAScript rules), `(ok, value)`.

    Returns:
        None when the whole file is not one JSON array (it is then read as JSONL).
    """
    try:
        text = data.decode("utf-8")
        invalid = 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        invalid = sum(1 for raw in data.split(b"\n") if not _utf8(raw))
    ok, value = parse(text)
    if not ok or not isinstance(value, list):
        return None
    return value, invalid


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def unwrap(value: dict[str, Any]) -> dict[str, Any] | None:
    """The stream message inside a `{"timestamp", "raw"}` wrapper, or None if not wrapped."""
    raw = value.get("raw")
    if not isinstance(raw, dict) or not value.keys() <= _WRAPPER_KEYS:
        return None
    if "timestamp" in value and CAPTURE_KEY not in raw:
        raw = {**raw, CAPTURE_KEY: value["timestamp"]}
    return raw


def unwrap_all(events: list[dict[str, Any]]) -> int:
    """Unwrap wrapped events in place; how many were wrapped."""
    n = 0
    for i, event in enumerate(events):
        if "raw" in event:
            inner = unwrap(event)
            if inner is not None:
                events[i] = inner
                n += 1
    return n


def other_types(events: list[dict[str, Any]]) -> tuple[tuple[str, int], ...]:
    """Events per type the reader does not use, in first-seen order (`(no type)` for none)."""
    counts: dict[str, int] = {}
    for event in events:
        etype = event.get("type")
        if not isinstance(etype, str):
            key = NO_TYPE
        elif etype in READ_TYPES:
            continue
        else:
            key = etype
        counts[key] = counts.get(key, 0) + 1
    return tuple(counts.items())
