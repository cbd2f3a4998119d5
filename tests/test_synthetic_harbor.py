"""The synthetic harbor-layout corpus (evalkit/synthetic/harbor.py)."""

from __future__ import annotations

import json

import pytest

from evalkit.formats.profiles import SOURCEGRAPH
from evalkit.session import parse_session
from evalkit.synthetic.harbor import HARBOR_ARMS, SG_READ, generate_harbor_corpus


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_same_seed_same_bytes_and_the_layout(tmp_path):
    n = generate_harbor_corpus(tmp_path / "a", tasks=2, trials=2)
    generate_harbor_corpus(tmp_path / "b", tasks=2, trials=2)
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a == b and len(a) == n == 2 * 2 * 2 * 6 + 1
    trial = "synthetic-suite/sourcegraph/fix-retry-loop/fix-retry-loop_2"
    for part in ("agent/claude-code.txt", "agent/trajectory.json", "result.json", "config.json"):
        assert f"{trial}/{part}" in a
    assert generate_harbor_corpus(tmp_path / "c", seed=15, tasks=2) and _files(tmp_path / "c") != a


def test_trials_have_rewards_and_the_mcp_arm_calls_sourcegraph(tmp_path):
    generate_harbor_corpus(tmp_path, tasks=1, trials=1)
    for arm in HARBOR_ARMS:
        trial = tmp_path / "synthetic-suite" / arm / "fix-retry-loop" / "fix-retry-loop_1"
        reward = json.loads((trial / "result.json").read_text())["verifier_result"]["rewards"][
            "reward"
        ]
        assert reward in (0.0, 1.0)
        s = parse_session(trial / "agent" / "claude-code.txt", profile=SOURCEGRAPH)
        assert s.summary.ok and s.read_allocation.efficiency is not None
        assert (s.summary.cg > 0) == (arm == "sourcegraph")
        assert (SG_READ in s.summary.counts) == (arm == "sourcegraph")
        assert s.transcript.segments[0].skipped == 0


def test_bad_arguments():
    with pytest.raises(ValueError):
        generate_harbor_corpus("unused", tasks=0)
