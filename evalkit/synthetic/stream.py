"""Claude Code stream-json events for the synthetic transcripts (spec §1.3).

One assistant event per content block, all blocks of a message sharing `message.id` and `usage`
(§1.3); tool results in `user` events; one `result` event per headless segment. Usage figures
follow a token model with fixed chars-per-token ratios per kind of content, so the occupancy
calibration of §6.4 finds clean gaps and measures a ratio near the one used.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Stream", "EXPLORE"]

EXPLORE = "mcp__codegraph__codegraph_explore"
_B62 = string.ascii_letters + string.digits


@dataclass
class _Thread:
    ctx: int
    pending: int = 0  # chars appended since the last request, priced below
    pending_tokens: float = 0.0


@dataclass
class Stream:
    """Builds the events of one session, segment by segment.

    Attributes:
        rng: The session's random source (ids, small variations).
        session_id: Written on every event, as Claude Code does.
        ratios: Chars per token for `explore`, `read`, `tool` (other results) and `text`.
        interactive: Write the project-log shape (uuid/parentUuid, no result events).
    """

    rng: random.Random
    session_id: str
    base_ctx: int
    ratios: dict[str, float]
    model: str = "claude-sonnet-5"
    cwd: str = "/private/tmp/t-base"
    interactive: bool = False
    segments: list[list[dict[str, Any]]] = field(default_factory=list)
    threads: dict[str, _Thread] = field(default_factory=dict)
    seg_usage: dict[str, int] = field(default_factory=dict)
    seg_turns: int = 0
    last_uuid: str | None = None
    clock: int = 0

    def _id(self, prefix: str, n: int) -> str:
        return prefix + "".join(self.rng.choice(_B62) for _ in range(n))

    def new_tool_id(self) -> str:
        return self._id("toolu_01", 22)

    def _thread(self, parent: str | None) -> _Thread:
        key = parent or "main"
        if key not in self.threads:
            self.threads[key] = _Thread(
                ctx=self.base_ctx
                if key == "main"
                else int(self.base_ctx * 0.45) + self.rng.randrange(300)
            )
        return self.threads[key]

    def _emit(self, ev: dict[str, Any]) -> None:
        if self.interactive:
            uid = (
                self._id("", 8).lower()
                + "-"
                + self._id("", 4).lower()
                + "-4"
                + self._id("", 3).lower()
                + "-a"
                + self._id("", 3).lower()
                + "-"
                + self._id("", 12).lower()
            )
            self.clock += self.rng.randrange(400, 9000)
            ev = {
                "parentUuid": self.last_uuid,
                "isSidechain": False,
                "userType": "external",
                "cwd": self.cwd,
                "sessionId": self.session_id,
                "version": "2.1.198",
                **ev,
                "uuid": uid,
                "timestamp": _stamp(self.clock),
            }
            self.last_uuid = uid
        self.segments[-1].append(ev)

    # -- segments ------------------------------------------------------------------------------

    def begin_segment(self, tools: list[str], prompt: str) -> None:
        self.segments.append([])
        self.seg_usage = dict(
            input_tokens=0,
            cache_creation_input_tokens=0,
            cache_read_input_tokens=0,
            output_tokens=0,
        )
        self.seg_turns = 0
        main = self._thread(None)
        main.pending += len(prompt)
        main.pending_tokens += len(prompt) / self.ratios["text"]
        if self.interactive:
            self._emit({"type": "user", "message": {"role": "user", "content": prompt}})
            return
        self._emit(
            {
                "type": "system",
                "subtype": "init",
                "cwd": self.cwd,
                "session_id": self.session_id,
                "tools": tools,
                "mcp_servers": [{"name": "codegraph", "status": "connected"}]
                if any("codegraph" in t for t in tools)
                else [],
                "model": self.model,
                "permissionMode": "bypassPermissions",
                "apiKeySource": "none",
            }
        )

    # -- messages ------------------------------------------------------------------------------

    def message(self, blocks: list[dict[str, Any]], parent: str | None = None) -> str:
        """One assistant message: one event per block, shared id and usage (§1.3)."""
        th = self._thread(parent)
        th.ctx += round(th.pending_tokens)
        th.pending = 0
        th.pending_tokens = 0.0
        mid = self._id("msg_01", 22)
        cache_read = max(0, th.ctx - self.rng.randrange(200, 1400))
        creation = th.ctx - cache_read - 3
        out_chars = 0
        for b in blocks:
            if b["type"] == "text":
                out_chars += len(b["text"])
            elif b["type"] == "tool_use":
                out_chars += len(str(b["input"])) + len(b["name"])
        out_tokens = max(2, round(out_chars / 3.4) + self.rng.randrange(20, 160))
        usage = {
            "input_tokens": 3,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": cache_read,
            "output_tokens": out_tokens,
            "service_tier": "standard",
        }
        if parent is None:
            for k in (
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "output_tokens",
            ):
                self.seg_usage[k] += usage[k]
            self.seg_turns += 1
        for b in blocks:
            msg = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [b],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            }
            self._emit(
                {
                    "type": "assistant",
                    "message": msg,
                    "parent_tool_use_id": parent,
                    "session_id": self.session_id,
                }
            )
        # What this message appended, priced for the next request of the thread.
        th.pending += out_chars
        th.pending_tokens += out_chars / self.ratios["text"]
        return mid

    def tool_use(
        self, name: str, tool_input: dict[str, Any], parent: str | None = None, narration: str = ""
    ) -> str:
        tid = self.new_tool_id()
        blocks = []
        if narration:
            blocks.append({"type": "text", "text": narration})
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": tool_input})
        self.message(blocks, parent)
        return tid

    def tool_result(
        self,
        tid: str,
        text: str,
        kind: str,
        parent: str | None = None,
        is_error: bool = False,
        as_blocks: bool = True,
    ) -> None:
        th = self._thread(parent)
        th.pending += len(text)
        th.pending_tokens += len(text) / self.ratios[kind]
        content: Any = [{"type": "text", "text": text}] if as_blocks else text
        block: dict[str, Any] = {"tool_use_id": tid, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        self._emit(
            {
                "type": "user",
                "message": {"role": "user", "content": [block]},
                "parent_tool_use_id": parent,
                "session_id": self.session_id,
            }
        )

    def answer(self, text: str) -> None:
        self.message([{"type": "text", "text": text}])

    def result(self, text: str | None, duration_s: float, subtype: str = "success") -> None:
        if self.interactive:
            return
        u = self.seg_usage
        cost = (
            u["input_tokens"] * 3
            + u["cache_creation_input_tokens"] * 3.75
            + u["cache_read_input_tokens"] * 0.3
            + u["output_tokens"] * 15
        ) / 1e6
        ev: dict[str, Any] = {
            "type": "result",
            "subtype": subtype,
            "is_error": subtype != "success",
            "duration_ms": int(duration_s * 1000),
            "duration_api_ms": int(duration_s * 930),
            "num_turns": self.seg_turns,
        }
        if text is not None:
            ev["result"] = text
        ev.update(
            {"session_id": self.session_id, "total_cost_usd": round(cost, 6), "usage": dict(u)}
        )
        self._emit(ev)


def _stamp(ms: int) -> str:
    # A fixed synthetic day; only the offset varies (deterministic, not the generation time).
    s, ms = divmod(ms, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"2026-08-05T{9 + h:02d}:{m:02d}:{s:02d}.{ms:03d}Z"
