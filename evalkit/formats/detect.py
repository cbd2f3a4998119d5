"""Which agent wrote a file, from its content (issue 15), and reading any supported file.

The name never decides (a stream-json capture may be called `claude-code.txt`, a Codex rollout
is a `.jsonl` like a Claude Code run): the first JSON records do.

* a ZIP archive holding `header.json` or `_journal/start.json` → an Inspect `.eval` log;
* one (pretty-printed) JSON object starting `{"version": N, "status": …` with an `eval`
  → an Inspect `.json` log;
* JSON lines whose `type` is `session_meta`, `response_item`, `event_msg`, `turn_context` or
  `compacted` with a `payload`, or a bare first line `{id, timestamp, instructions}` (the
  pre-September-2025 layout) → a Codex rollout (agent-formats §1.3, §1.13);
* JSON lines of `thread.started`, `turn.*`, `item.*` (or the older `session.created`) → a
  `codex exec --json` stream (§2.2, §2.5);
* one (pretty-printed) JSON object whose `schema_version` is `ATIF-v…` → Harbor's cross-agent
  trajectory (ATIF, §4.5), whose `agent.name` is the agent;
* anything else → Claude Code, whose reader keeps its own rules for what it skips.

`--format` (and `format=` in the API) forces a reader instead.
"""

from __future__ import annotations

import json
import os
import re
import stat
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from evalkit.errors import TranscriptError, UsageError
from evalkit.formats.names import FORMATS, Format
from evalkit.formats.stack import fixed_stack

# The readers are imported when a file is read (or its head sniffed), not with this module: a
# command that reads no file of another agent (a warm sweep) does not pay for their imports.
if TYPE_CHECKING:
    from evalkit.formats.common import AgentSession

__all__ = [
    "AGENT_OF",
    "FORMATS",
    "Format",
    "agent_of",
    "check_format",
    "detect_format",
    "is_inspect_file",
    "read_agent_file",
]

# The `agent` identity column of each format.
AGENT_OF: dict[str, str] = {
    "claude-code": "claude-code",
    "codex-rollout": "codex",
    "codex-exec": "codex",
    "inspect": "inspect",
    "atif": "atif",  # the agent is the trajectory's `agent.name`, read with the file
}
_HEAD_BYTES = 1 << 16
_HEAD_RECORDS = 20
_INSPECT_JSON = re.compile(r'^\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"')
# Codex writes `{"timestamp":…,"type":…,"payload":…}` in that order (agent-formats §1.3).
_ROLLOUT_PREFIX = re.compile(
    r'^\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"(?:session_meta|response_item|'
    r'event_msg|turn_context|compacted)"\s*,\s*"payload"\s*:'
)


def check_format(value: str | None) -> Format | None:
    """`value` as a format name (None or `auto` = detect), else a UsageError listing the names."""
    if value in (None, "auto"):
        return None
    if value not in FORMATS:
        raise UsageError(f"unknown format {value!r}; choose one of: auto, {', '.join(FORMATS)}")
    return value  # type: ignore[return-value]


def agent_of(fmt: str) -> str:
    """The agent a format belongs to (`codex-exec` → `codex`)."""
    return AGENT_OF[fmt]


def _head(path: str) -> bytes:
    # Only a regular file is opened: a FIFO would block, a device never end. The reader then
    # reports such a path in its own words.
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return b""
        with open(path, "rb") as fh:
            data = fh.read(_HEAD_BYTES)
    except OSError:
        return b""  # the reader reports it with its own words
    if data.startswith(b"\x1f\x8b"):
        try:
            data = zlib.decompressobj(wbits=31).decompress(data, _HEAD_BYTES)
        except zlib.error:
            return b""
    return data


def _is_inspect_zip(path: str) -> bool:
    import zipfile  # here: only a `.eval` file is opened as a zip archive

    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
    return "header.json" in names or "_journal/start.json" in names


def detect_format(path: str | os.PathLike[str]) -> Format:
    """The format of a file, from its first bytes and records (see the module docstring).

    Never raises: a head that cannot be read is Claude Code, whose reader then names the
    problem. Detection skips what the readers skip (issue 21): a line over the line limit, a
    line that is not JSON or is nested too deeply to parse, and a record whose `type` is not
    text (`bad_type`), so such a line near the top never decides, or stops, the detection.
    """
    name = os.fspath(path)
    try:
        return _detect(name)
    except Exception:  # noqa: BLE001 — detection is a guess; the reader gives the reason
        return "claude-code"


def is_inspect_file(path: str | os.PathLike[str]) -> bool:
    """`detect_format(path) == "inspect"`, from the head alone: the other formats' readers
    (and their modules) are not needed to tell, since an Inspect log is told first."""
    name = os.fspath(path)
    try:
        head = _head(name)
        if head.startswith(b"PK\x03\x04"):
            return _is_inspect_zip(name)
        return _is_inspect_head(head)
    except Exception:  # noqa: BLE001 — as `detect_format`: not told, so Claude Code
        return False


def _is_inspect_head(head: bytes) -> bool:
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    return text.startswith("{") and _looks_like_inspect_json(text)


@fixed_stack
def _detect(name: str) -> Format:
    head = _head(name)
    if head.startswith(b"PK\x03\x04"):
        return "inspect" if _is_inspect_zip(name) else "claude-code"
    if _is_inspect_head(head):
        return "inspect"
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if text.startswith("{"):
        from evalkit.formats.atif.trajectory import looks_like_atif

        if looks_like_atif(text):
            return "atif"
    from evalkit.formats.common import bad_type

    limit = _line_limit()
    records = []
    pieces = head.split(b"\n")
    for raw in pieces:
        if len(raw) > limit:
            continue  # the readers skip a line over the limit
        try:
            value = json.loads(raw.decode("utf-8", "replace").lstrip("\ufeff"))
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and not bad_type(value):
            records.append(value)
            if len(records) >= _HEAD_RECORDS:
                break
    if not records and len(pieces[0]) <= limit and _ROLLOUT_PREFIX.match(text):
        return "codex-rollout"  # a first line longer than the head read (long instructions)
    from evalkit.formats.codex.exec_json import EXEC_EVENTS
    from evalkit.formats.codex.rollout import ROLLOUT_KINDS

    for i, rec in enumerate(records):
        kind = rec.get("type")
        if kind in ROLLOUT_KINDS and "payload" in rec:
            return "codex-rollout"
        if kind in EXEC_EVENTS and kind != "error":
            return "codex-exec"
        if i == 0 and "type" not in rec and {"id", "timestamp"} <= rec.keys():
            if "instructions" in rec:
                return "codex-rollout"
    return "claude-code"


def _line_limit() -> int:
    from evalkit.formats.files import ReadLimits

    try:
        return ReadLimits.from_env().line_bytes
    except TranscriptError:
        return ReadLimits().line_bytes  # the reader names the unusable setting


def _looks_like_inspect_json(text: str) -> bool:
    # A `.json` log is one object whose first keys are `version` (an integer) and `status`, with
    # `eval` next (§3.2, §3.3); only the head is read, so match that start rather than parse.
    return bool(_INSPECT_JSON.match(text)) and '"eval"' in text[:4096]


def read_agent_file(
    path: str | os.PathLike[str], *, format: Format | None = None, parent: str | None = None
) -> Iterator[AgentSession]:
    """The sessions of one Codex, Inspect or ATIF file: one for a rollout, an `exec --json`
    capture or a trajectory, one per sample and epoch for an Inspect log.

    Args:
        path: The file.
        format: Force a reader; None detects it from the content.
        parent: A rollout's parent thread file (forks and forked subagents, agent-formats §1.11).

    Raises:
        TranscriptError: The file cannot be read by its reader, or it is a Claude Code file
            (read those with `evalkit.session`).
    """
    name = os.fspath(path)
    fmt = format or detect_format(name)
    if fmt == "codex-rollout":
        from evalkit.formats.codex.rollout import read_rollout

        yield read_rollout(name, parent=parent)
    elif fmt == "codex-exec":
        from evalkit.formats.codex.exec_json import read_exec_json

        yield read_exec_json(name)
    elif fmt == "inspect":
        from evalkit.formats.inspect.logs import read_inspect_log

        yield from read_inspect_log(name)
    elif fmt == "atif":
        from evalkit.formats.atif.trajectory import read_atif

        yield read_atif(name)
    else:
        raise TranscriptError(name, "a Claude Code transcript: read it as a Claude Code session")
