"""Harbor's cross-agent trajectory format (ATIF, agent-formats §4.5)."""
