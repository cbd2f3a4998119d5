"""The reference self-test's `check` and `round` helpers (spec §11.1, §11.2).

`check(got, want, tol)` passes iff |got − want| ≤ tol, exactly as the reference asserts. The
tests also assert the exact values the spec derives, which are stricter than the tolerances.
"""

from __future__ import annotations

from evalkit.ecma import jround


def check(got: float, want: float, tol: float) -> None:
    assert abs(got - want) <= tol, f"got {got}, want {want} ±{tol}"


def round1(fraction: float) -> float:
    """`round(f)` of §11.2: an efficiency as a percentage with one decimal."""
    return jround(fraction * 1000) / 10
