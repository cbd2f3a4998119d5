"""The explore feedback metrics, computed from events a reader produced, as the reference does:
`answer` (the final answer, §1.7), `envelope` (file sections of an explore response, §2, §4),
`allocation` (§3), `sufficiency` (§5), `occupancy` (§6), `summary` (per-session fields, §1.11),
and `tokens` (the token ledger shared by every agent's reader)."""
