"""Usage figures that make the occupancy of a run come out at published values (spec §6, §12.3).

For the six CG-22 express runs the project published the codegraph residual, the file-access
residual and their share of the final context (§12.3). Occupancy is computed from the usage
fields of the transcript (§6.2–6.6), so this module rewrites those fields: every gap's `delta`
is its tool chars divided by one chars-per-token ratio (so calibration finds that ratio and
nothing is evicted), the first request's context sets the final context, and the length of the
ToolSearch result — a tool result of the `other` family, whose residual nobody published — is
the fine knob that moves the calibrated ratio by less than one token of residual. Every
candidate is checked with `evalkit.metrics.occupancy.compute_occupancy` itself, so the rule lives in
one place and the published cells are what the real computation prints.
"""

from __future__ import annotations

import random
from typing import Any

from evalkit.ecma import fix
from evalkit.metrics.occupancy import compute_occupancy
from evalkit.synthetic.source import numbered_body

__all__ = ["OCCUPANCY_TARGETS", "SAMPLE_TARGETS", "tune_occupancy", "tune_sample"]

# §12.3: (codegraph residual, file-access residual, share of final context) per run. The doc
# gives median and range per arm; the pairing of cells to runs follows the retrieval sums
# (10,447 + 1,306 = 11,753 …) and the sizes of each run's envelope.
OCCUPANCY_TARGETS = {
    "cg22/ab-express/run-baseline-1": (10_388, 1_663, "23.9"),
    "cg22/ab-express/run-baseline-2": (10_373, 1_661, "23.8"),
    "cg22/ab-express/run-baseline-3": (10_447, 1_306, "23.4"),
    "cg22/ab-express/run-new-1": (7_193, 0, "15.8"),
    "cg22/ab-express/run-new-2": (12_591, 242, "24.9"),
    "cg22/ab-express/run-new-3": (11_549, 231, "23.3"),
}
_RATIO = 2.25  # explore output measures about 2.2–2.3 chars per token (§6.9)


def _results(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """tool_result blocks by tool name."""
    names: dict[str, str] = {}
    out: dict[str, list[dict[str, Any]]] = {}
    for ev in events:
        content = (ev.get("message") or {}).get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if b.get("type") == "tool_use":
                names[b["id"]] = b["name"]
            elif b.get("type") == "tool_result":
                out.setdefault(names.get(b["tool_use_id"], ""), []).append(b)
    return out


def _text(block: dict[str, Any]) -> str:
    c = block["content"]
    return c if isinstance(c, str) else "".join(x["text"] for x in c)


def _set_text(block: dict[str, Any], text: str) -> None:
    if isinstance(block["content"], str):
        block["content"] = text
    else:
        block["content"] = [{"type": "text", "text": text}]


def _pad_explore(text: str, extra: int) -> str:
    """Lengthen the preamble (overhead, never charged to a file, §2.5) by `extra` chars."""
    if extra <= 0:
        return text
    first, rest = text.split("\n", 1)
    words = (
        "Related definitions outside the budget: etag weak strong fresh vary "
        "charset contentType lastModified statusCode headersSent "
    )
    line = (words * (extra // len(words) + 1))[: extra - 1]
    return first + "\n" + line + "\n" + rest


def _apply_usage(events: list[dict[str, Any]], base: int, deltas: list[int]) -> None:
    seen: dict[str, int] = {}
    k = -1
    for ev in events:
        if ev.get("type") != "assistant":
            continue
        mid = ev["message"]["id"]
        if mid not in seen:
            k += 1
            seen[mid] = k
        ctx = base + sum(deltas[: seen[mid]])
        u = ev["message"]["usage"]
        creation = min(u["cache_creation_input_tokens"], ctx - 3)
        cached = ctx - 3 - creation
        ev["message"]["usage"] = {
            **u,
            "input_tokens": 3,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": ctx - 3 - cached,
        }
    totals = dict(
        input_tokens=0, cache_creation_input_tokens=0, cache_read_input_tokens=0, output_tokens=0
    )
    counted: set[str] = set()
    for ev in events:
        if ev.get("type") == "assistant" and ev["message"]["id"] not in counted:
            counted.add(ev["message"]["id"])
            for key in totals:
                totals[key] += ev["message"]["usage"][key]
        elif ev.get("type") == "result":
            ev["usage"] = {**ev["usage"], **totals}


def tune_occupancy(events: list[dict[str, Any]], key: str, seed: int) -> None:
    """Rewrite usage (and overhead text lengths) of one single-segment run in place so that its
    occupancy prints the §12.3 cells. Raises RuntimeError when no candidate fits."""
    r_cg, r_file, share = OCCUPANCY_TARGETS[key]
    rng = random.Random(f"{seed}:{key}:usage")
    res = _results(events)
    explores = res["mcp__codegraph__codegraph_explore"]
    c_cg = sum(len(_text(b)) for b in explores)
    deficit = round(_RATIO * r_cg) - c_cg
    if deficit > 0:
        for i, b in enumerate(explores):
            part = deficit // len(explores) + (1 if i < deficit % len(explores) else 0)
            _set_text(b, _pad_explore(_text(b), part))
        c_cg = sum(len(_text(b)) for b in explores)
    target_cpt = c_cg / r_cg
    file_blocks = res.get("Read", []) + res.get("Bash", [])
    if r_file:
        (fb,) = file_blocks
        n = round(r_file * target_cpt)
        if "Read" in res:
            body = numbered_body(rng, "js", ["send", "etag"], n, start=120)
            _set_text(fb, body)
        else:
            t = _text(fb)
            _set_text(fb, (t * (n // len(t) + 1))[:n])
    (ts,) = res["ToolSearch"]
    ts_head = "Loaded 1 deferred tool: mcp__codegraph__codegraph_explore. Schema: "
    schema = (
        '{"query":{"type":"string","description":"What to explore: a question, symbol '
        'names or file paths"},"budget":{"type":"integer"}} '
    )
    jitter = [rng.choice((-1, 1)) * rng.uniform(0.008, 0.022) for _ in range(6)]
    for ts_len in range(600, 1400):
        _set_text(ts, (ts_head + schema * 12)[:ts_len])
        gaps = compute_occupancy(events).gaps
        deltas = [
            round(g.tool_chars / target_cpt) if g.tool_chars else round(g.chars / 3.9) for g in gaps
        ]
        # Real runs measure a ±1–2% dispersion (§6.9): move a little of each source gap's
        # delta to the ToolSearch gap, leaving the sum (and so the calibrated ratio) unchanged.
        src = [
            i for i, g in enumerate(gaps) if i and g.tool_chars and g.tool_chars / g.chars >= 0.95
        ]
        moved = 0
        for j, i in enumerate(src[:-1] if len(src) > 1 else src):
            d = round(deltas[i] * jitter[j % len(jitter)] * (1 if len(src) > 1 else 0.25))
            deltas[i] += d
            moved += d
        deltas[src[-1] if len(src) > 1 else 0] -= moved
        total = sum(deltas)
        want = r_cg + r_file
        # ctx_final such that want / ctx_final prints `share`.
        ctx_final = round(want * 100 / float(share))
        _apply_usage(events, ctx_final - total, deltas)
        occ = compute_occupancy(events)
        got_share = fix(
            (occ.residual["codegraph"] + occ.residual_file_access) / occ.final_context * 100, 1
        )
        if (occ.residual["codegraph"], occ.residual_file_access, got_share, occ.evicted) == (
            r_cg,
            r_file,
            share,
            0,
        ):
            return
    raise RuntimeError(f"{key}: no usage figures reproduce the published occupancy")


# §12.7: the published occupancy sample (the run is not named). It is realised by a two-explore
# campaign session: two codegraph results of 31,312 chars, the 73-char ToolSearch result, six
# requests, fixed 37,726 and final 54,950 tokens, 2.25 chars/tok measured ±0.9%.
SAMPLE_TARGETS = {
    "ab-readme/gin/run2/run-headless-with": dict(
        cg_chars=31_312, cg_tokens=13_941, base=37_726, final=54_950, dispersion="0.9"
    ),
}


def tune_sample(events: list[dict[str, Any]], key: str, seed: int) -> None:
    """Rewrite usage of one session (all segments' events, in order) so that its occupancy block
    carries the §12.7 sample's numbers. Raises RuntimeError when that is not reachable."""
    t = SAMPLE_TARGETS[key]
    res = _results(events)
    explores = res["mcp__codegraph__codegraph_explore"]
    c_cg = sum(len(_text(b)) for b in explores)
    deficit = t["cg_chars"] - c_cg
    if deficit < 0:
        raise RuntimeError(f"{key}: explore output already longer than the sample's")
    for i, b in enumerate(explores):
        part = deficit // len(explores) + (1 if i < deficit % len(explores) else 0)
        _set_text(b, _pad_explore(_text(b), part))
    gaps = compute_occupancy(events).gaps
    src = [i for i, g in enumerate(gaps) if g.tool_chars and g.tool_chars / g.chars >= 0.95]
    if len(src) != 2:
        raise RuntimeError(f"{key}: expected two explore gaps, found {len(src)}")
    # Σ explore deltas = the codegraph tokens, so the calibrated ratio is cg_chars / cg_tokens
    # and the residual is exactly cg_tokens; the larger gap is off by the published dispersion.
    big, small = sorted(src, key=lambda i: -gaps[i].tool_chars)
    want = float(t["dispersion"]) / 100
    cpt = t["cg_chars"] / t["cg_tokens"]
    for err in range(0, 400):
        d_big = round(gaps[big].tool_chars / cpt) + err
        d_small = t["cg_tokens"] - d_big
        e_big = abs(gaps[big].tool_chars / cpt - d_big) / d_big
        e_small = abs(gaps[small].tool_chars / cpt - d_small) / d_small
        if fix(min(e_big, e_small) * 100, 1) == t["dispersion"] and e_big <= want + 0.0005:
            break
    else:
        raise RuntimeError(f"{key}: dispersion not reachable")
    deltas = [0] * len(gaps)
    deltas[big], deltas[small] = d_big, d_small
    rest = [i for i in range(len(gaps)) if i not in (big, small)]
    left = t["final"] - t["base"] - t["cg_tokens"]
    # Non-tool gaps (answers, the resumed turns' prompts and reminders) take the remainder,
    # in proportion to their chars.
    weight = sum(gaps[i].chars for i in rest)
    for i in rest:
        deltas[i] = int(left * gaps[i].chars / weight)
    deltas[rest[-1]] += left - sum(deltas[i] for i in rest)
    _apply_usage(events, t["base"], deltas)
    occ = compute_occupancy(events)
    if (
        occ.residual["codegraph"],
        occ.base_context,
        occ.final_context,
        occ.evicted,
        fix(occ.chars_per_token, 2),
        fix((occ.dispersion or 0) * 100, 1),
    ) != (t["cg_tokens"], t["base"], t["final"], 0, "2.25", t["dispersion"]):
        raise RuntimeError(f"{key}: the sample's occupancy was not reproduced")
