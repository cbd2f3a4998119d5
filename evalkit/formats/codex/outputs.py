"""The text shapes of Codex tool outputs, decoded into text, exit code and error flag (agent-formats §1.6).

A rollout writes no success flag, so whether a call failed is read from its output: the structured
shell JSON (`{"output", "metadata": {"exit_code"}}`), the freeform `Exit code: N` header, the unified
exec `Process exited with code N` line, or the `err: ` prefix of a failed MCP call in late-2025
builds. The reader tries them in that order and keeps the text otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evalkit.formats.common import dumps, loads_or_none, text_of_parts

__all__ = ["DecodedOutput", "decode_output"]

_EXIT_CODE = re.compile(r"^Exit code: (-?\d+)\s*$", re.M)
_PROCESS_EXITED = re.compile(r"^Process exited with code (-?\d+)\s*$", re.M)
# Only the header part of a unified exec / freeform output is searched, never the command's own
# output, which could print such a line itself.
_OUTPUT_MARK = "\nOutput:"


@dataclass(frozen=True)
class DecodedOutput:
    """A tool output, unwrapped.

    Attributes:
        text: The output text (the `output` of structured JSON; else the whole string, or the
            text items of a content list joined with "\\n").
        exit_code: The exit code where the output gives one.
        error: A non-zero exit code or a failed MCP call.
    """

    text: str
    exit_code: int | None
    error: bool


def _header(text: str) -> str:
    cut = text.find(_OUTPUT_MARK)
    return text if cut < 0 else text[:cut]


def decode_output(output: Any) -> DecodedOutput:
    """Decode a `function_call_output` / `custom_tool_call_output` `output` value (§1.6)."""
    if isinstance(output, list):
        text = text_of_parts(output, ("input_text", "output_text", "text"))
        code = _header_exit(text)
        return DecodedOutput(text, code, code not in (None, 0))
    if not isinstance(output, str):
        text = "" if output is None else dumps(output)
        return DecodedOutput(text, None, False)
    if output.startswith("{"):
        value = loads_or_none(output)  # not JSON, or nested too deeply to read: the text
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            meta = value.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            return DecodedOutput(value["output"], code, code not in (None, 0))
    code = _header_exit(output)
    if code is not None:
        return DecodedOutput(output, code, code != 0)
    return DecodedOutput(output, None, output.startswith("err: "))


def _header_exit(text: str) -> int | None:
    head = _header(text)
    m = _EXIT_CODE.search(head) or _PROCESS_EXITED.search(head)
    return int(m.group(1)) if m else None
