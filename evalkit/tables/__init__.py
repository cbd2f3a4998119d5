"""Aggregation of per-session records into tables: the one quantile rule (`quantile`), the
corpus line, slice, per-call and arm tables (`aggregate`), and the sweep that builds them from a
corpus (`sweep`)."""
