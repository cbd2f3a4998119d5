"""Readers, one folder per agent's transcript format, each yielding the events evalkit's session
model is built from. Today: `claude_code` (stream-json runs and interactive project logs)."""
