"""The Claude Code reader: stream-json segments (`transcripts`), event positions across segments
(`events`), interactive project logs with their subagents (`interactive`)."""
