"""The Inspect AI reader: `.eval` and `.json` eval logs, one `AgentSession` per sample and epoch
(agent-formats §3), read with Inspect's own API (the optional extra `inspect`)."""
