"""The OpenAI Codex CLI readers: rollout files (`rollout`, agent-formats §1) and the
`codex exec --json` event stream (`exec_json`, §2), both yielding `AgentSession`s; `outputs`
decodes the text shapes of tool outputs (§1.6)."""
