"""The names of the formats evalkit reads (`--format`), apart from the readers that read them
(`evalkit.formats.detect`), so a command can offer them without importing a reader."""

from __future__ import annotations

from typing import Literal

__all__ = ["Format", "FORMATS"]

Format = Literal["claude-code", "codex-rollout", "codex-exec", "inspect", "atif"]
FORMATS: tuple[Format, ...] = ("claude-code", "codex-rollout", "codex-exec", "inspect", "atif")
