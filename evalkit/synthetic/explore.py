"""Explore responses in the product's markdown format, with sections of exact sizes (spec §2).

A response is: optional preamble (summary, flow, blast radius), the file sections, an optional
pointer list, and the guidance blockquote. Section `i` is charged from its header to the next
header; the last one up to the `"\\n"` that begins the first `"\\n> "` after it (§2.2, §2.5), so a
pointer list placed before the quote is charged to the last section. `render_response` builds
each section's numbered body to the length that makes its span exactly the planned chars.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from evalkit.synthetic.calibrate import SectionPlan
from evalkit.synthetic.catalog import FileInfo
from evalkit.synthetic.source import numbered_body

__all__ = ["HeaderStyle", "render_response", "empty_response", "FOOTERS"]

# Guidance blockquotes differ between builds (spec §2.1): the baseline `49c11fc` and newer ones.
FOOTERS = {
    "baseline": "> Treat the code above as already read — do not Read these files again.",
    "new": "> Treat the code above as already read.\n"
    "> (Trailing pointer list omitted — ask explore for a name to see its source.)",
}


@dataclass
class HeaderStyle:
    """How one section's header reads (§2.1): labels shown, call sites, the `+N more` cap."""

    labels: list[str]
    more: int = 0
    mode: str = "labels"  # labels | focused | skeleton | requested | bare


def header_text(path: str, style: HeaderStyle) -> str:
    head = f"**`{path}`**"
    if style.mode == "bare":
        return head
    if style.mode == "focused":
        return head + " — focused (the methods you named in full, the rest as signatures)"
    if style.mode == "skeleton":
        return head + " — skeleton (signatures only; ask for a name to see its body)"
    labels = ", ".join(style.labels)
    if style.mode == "requested":
        return f"{head} — {labels} · requested definitions"
    if style.more:
        labels += f", +{style.more} more"
    return f"{head} — {labels}"


def _section_text(rng: random.Random, header: str, info: FileInfo, body_len: int) -> str:
    names = [n for n, _ in info.symbols]
    base = info.path.rsplit("/", 1)[-1]
    gaps = [
        f"... (gap: {names[(i + 1) % len(names)].split('.')[-1]} ({base}:{rng.randrange(40, 900)}),"
        f" …) ..."
        for i in range(2)
    ]
    body = numbered_body(
        rng,
        info.lang,
        names,
        body_len,
        start=rng.choice([1, 1, 12, 38, 96, 126, 214, 402]),
        gaps=gaps,
    )
    return f"{header}\n\n```{info.lang}\n{body}\n```\n"


def _overhead(header: str, lang: str) -> int:
    # header + "\n\n```lang\n" + body + "\n```\n"
    return len(header) + 2 + 3 + len(lang) + 1 + 5


def render_response(
    rng: random.Random,
    sections: Sequence[SectionPlan],
    infos: Sequence[FileInfo],
    headers: Sequence[HeaderStyle],
    *,
    preamble: str,
    pointers: Sequence[str] = (),
    footer: str = FOOTERS["new"],
) -> str:
    """An explore response whose sections span exactly `sections[i].chars` (§2.2)."""
    parts = []
    n = len(sections)
    tail = ""
    if pointers:
        tail = "\n**Not shown above — explore these names for their source**\n" + "\n".join(
            pointers
        )
        last = sections[-1]
        room = last.chars - _overhead(header_text(last.path, headers[-1]), infos[-1].lang)
        if room - len(tail) < 60:
            tail = ""  # the pointer list would not fit inside the last section's planned span
    for i, (sec, info, style) in enumerate(zip(sections, infos, headers, strict=True)):
        header = header_text(sec.path, style)
        span_extra = 1 if i < n - 1 else len(tail)  # joining "\n", or the charged pointer list
        body_len = sec.chars - span_extra - _overhead(header, info.lang)
        if body_len < 8:
            # A small section drops its label list (never the credited symbol's label).
            style = HeaderStyle(labels=style.labels[:1], mode="labels" if style.labels else "bare")
            header = header_text(sec.path, style)
            body_len = sec.chars - span_extra - _overhead(header, info.lang)
            if body_len < 8:
                raise ValueError(f"section {sec.path} of {sec.chars} chars is too small")
        parts.append(_section_text(rng, header, info, body_len))
    text = preamble + "\n".join(parts) + tail + "\n" + footer + "\n"
    return text


def empty_response(query: str, pointers: Sequence[str]) -> str:
    """An answered explore with no file section: it is not an allocation call (Decision 4)."""
    lines = [f'No source sections matched "{query}" within the budget.', ""]
    if pointers:
        lines.append("**Not shown above — explore these names for their source**")
        lines.extend(pointers)
        lines.append("")
    lines.append("> Try a symbol name or a file path; a prose question matches nothing here.")
    return "\n".join(lines) + "\n"
