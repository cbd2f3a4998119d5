"""Small builders for transcript fixtures, in the notation of the reference self-test (spec §11.2).

Each builder returns a list of event dicts (one per JSONL line). `write_jsonl` turns such a list
into a file the reader parses, lines joined with "\\n" plus a final "\\n", as the reference's
fixtures are written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

E = "mcp__codegraph__codegraph_explore"


def USE(id: str, name: str, input: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": {} if input is None else input}


def TEXT(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


THINK = {"type": "thinking", "thinking": ""}


def ASST(ctx: int, id: str | None, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One assistant event per content block, all sharing the message id and usage."""
    out = []
    for block in blocks:
        message: dict[str, Any] = {}
        if id is not None:
            message["id"] = id
        message["content"] = [block]
        message["usage"] = {
            "input_tokens": ctx,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "output_tokens": 2,
        }
        out.append({"type": "assistant", "message": message})
    return out


def _result_event(id: str, text: str, error: bool = False) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": id}
    if error:
        block["is_error"] = True
    block["content"] = [{"type": "text", "text": text}]
    return [{"type": "user", "message": {"content": [block]}}]


def RES(id: str, n: int) -> list[dict[str, Any]]:
    return _result_event(id, "x" * n)


def xres_text(paths: list[str], extra: str = "") -> str:
    return "\n".join(f"**`{p}`** — fn(function)\n\n1\tcode here\n" for p in paths) + extra


def XRES(id: str, paths: list[str], extra: str = "", error: bool = False) -> list[dict[str, Any]]:
    return _result_event(id, xres_text(paths, extra), error)


def RESULT(
    text: str | None = None, subtype: str = "success", **fields: Any
) -> list[dict[str, Any]]:
    event: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "duration_ms": 1000,
        "total_cost_usd": 0.1,
        "usage": {},
    }
    if text is not None:
        event["result"] = text
    event.update(fields)
    return [event]


DONE = RESULT()
COMPACT = [{"type": "system", "subtype": "compact_boundary"}]


def SUB(parent: str, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mark every line as a subagent's (parent_tool_use_id added as the last key)."""
    return [{**line, "parent_tool_use_id": parent} for line in lines]


def section(path: str, syms: str, size: int) -> str:
    """One ALLOC section: header, blank line, fenced body of `size` x's (spec §11.2)."""
    return f"**`{path}`** — {syms}\n\n```js\n" + "x" * size + "\n```\n"


def alloc_text(files: list[tuple[str, str, int]]) -> str:
    """One response text in the ALLOC notation: sections joined with "\\n", then guidance."""
    return "\n".join(section(*f) for f in files) + "\n> Treat the code above as already read.\n"


def lines(*groups: list[dict[str, Any]] | dict[str, Any]) -> list[dict[str, Any]]:
    """Flatten builder outputs into one event list."""
    out: list[dict[str, Any]] = []
    for g in groups:
        out.extend(g if isinstance(g, list) else [g])
    return out


def write_jsonl(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_text(
        "\n".join(json.dumps(e, ensure_ascii=False) for e in events) + "\n", encoding="utf-8"
    )
    return path
