"""Final answers that cite exactly the files the plan says, in every way spec §3.3 tells apart.

Cited by path: `path:line-range` in a code span, a plain `path:line`, an absolute path, a bare
basename with a shipped extension, a markdown link. Cited by symbol: a defined name in a code
span. Present but not citations: prose mentions of defined names, dotted expressions
(`res.send`), basenames with an extension the envelope never shipped (`package.json`), code
inside fenced blocks, and names listed on three or more returned files.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["CitedFile", "AnswerPlan", "write_answers"]

_PHRASES = [
    "is where the decision is made",
    "builds the value the caller sees",
    "hands the result to the next step",
    "keeps the state this path reads",
    "is the entry point of the flow",
    "guards the edge case before anything is written",
    "turns the input into the internal form",
    "holds the loop that drives the rest",
]
_VERBS = ["calls", "forwards to", "then reaches", "delegates to", "feeds"]
# Dotted expressions per repo: the same token shape as a basename, with "extensions" no envelope
# ships, so they never read as file citations (§3.3).
_DOTTED = {
    "express": ["res.send", "mime.contentType", "req.fresh", "res.get"],
    "excalidraw": ["element.versionNonce", "scene.getNonDeletedElements", "appState.zoom"],
    "client-go": ["informer.HasSynced", "queue.Pop", "store.List"],
    "vscode": ["protocol.getProxy", "extHost.onDidExit", "ipc.send"],
    "django": ["query.where", "connection.ops", "qs.filter"],
    "tokio": ["handle.spawn", "task.poll", "rt.block_on"],
    "okhttp": ["chain.proceed", "call.execute", "client.newCall"],
    "gin": ["c.Next", "engine.handleHTTPRequest", "c.Abort"],
    "alamofire": ["request.validate", "session.request", "response.result"],
}
_PROSE_MENTIONS = [
    "Note that {n} is not on this path even though it shows up nearby.",
    "{n} looks related, but nothing in this flow calls it.",
    "I ruled out {n}; it only matters for a different code path.",
]
_DOTTED_LINES = [
    "In prose terms {d} is only the visible call; the settings in {u} play no part.",
    "What a caller sees is {d}; nothing in {u} changes this.",
    "You will see {d} in stack traces, which is the outer layer of the same flow.",
]
_UNSHIPPED = {
    "express": "package.json",
    "excalidraw": "tsconfig.json",
    "client-go": "go.mod",
    "vscode": "product.json",
    "django": "setup.cfg",
    "tokio": "Cargo.toml",
    "okhttp": "build.gradle.kts",
    "gin": "go.mod",
    "alamofire": "Alamofire.podspec",
}
_FENCE_LANG = {
    "express": "js",
    "excalidraw": "ts",
    "client-go": "go",
    "vscode": "ts",
    "django": "python",
    "tokio": "rust",
    "okhttp": "kotlin",
    "gin": "go",
    "alamofire": "swift",
}


@dataclass
class CitedFile:
    path: str
    verdict: str  # path | symbol | ""
    symbol: str = ""
    defined: list[str] = field(default_factory=list)  # undotted names its headers define


@dataclass
class AnswerPlan:
    """Everything one session's answers must (and must not) say."""

    repo: str
    files: list[CitedFile]
    abs_root: str  # e.g. /private/tmp/t-base
    unique_basenames: set[str]
    ambiguous: str = ""  # a name on 3+ returned files, cited on purpose (credits nobody)
    extra_cites: list[str] = field(default_factory=list)  # paths outside the envelope
    opening: str = ""


def _path_form(rng: random.Random, f: CitedFile, plan: AnswerPlan) -> str:
    base = f.path.rsplit("/", 1)[-1]
    a = rng.randrange(12, 400)
    b = a + rng.randrange(8, 120)
    forms = ["span-range", "plain", "abs", "link"]
    if base in plan.unique_basenames and base.count(".") == 1:
        forms += ["base", "base"]
    form = rng.choice(forms)
    if form == "span-range":
        return f"`{f.path}:{a}-{b}`"
    if form == "plain":
        return f"{f.path}:{a}"
    if form == "abs":
        return f"{plan.abs_root}/{f.path}:{a}"
    if form == "link":
        return f"[{base}]({f.path}#L{a})"
    return f"{base}:{a}"


def _symbol_form(rng: random.Random, name: str) -> str:
    return rng.choice([f"`{name}`", f"`{name}()`", f"`{name}(opts)`", f"`{name}`"])


def write_answers(rng: random.Random, plan: AnswerPlan, n: int) -> list[str]:
    """`n` answer texts (one per segment) that together cite exactly the planned files."""
    cited = [f for f in plan.files if f.verdict]
    rng.shuffle(cited)
    uncited = [f for f in plan.files if not f.verdict]
    buckets: list[list[CitedFile]] = [[] for _ in range(n)]
    for i, f in enumerate(cited):
        buckets[i % n if i < n else rng.randrange(n)].append(f)
    out = []
    for k in range(n):
        lines = []
        if k == 0 and plan.opening:
            lines.append(plan.opening)
            lines.append("")
        lines.append(
            rng.choice(
                [
                    "Here is the path, step by step:",
                    "The flow, in order:",
                    "Short version first, then the chain:",
                    "Walking the chain from the entry point:",
                ]
            )
        )
        lines.append("")
        for j, f in enumerate(buckets[k], 1):
            if f.verdict == "path":
                ref = _path_form(rng, f, plan)
                tail = ""
                if f.defined and rng.random() < 0.4:
                    tail = f" via {_symbol_form(rng, rng.choice(f.defined))}"
                lines.append(f"{j}. {ref} {rng.choice(_PHRASES)}{tail}.")
            else:
                lines.append(
                    f"{j}. {_symbol_form(rng, f.symbol)} {rng.choice(_PHRASES)}"
                    f" and {rng.choice(_VERBS)} the next stage."
                )
        if k == 0 and plan.ambiguous:
            lines.append("")
            lines.append(
                f"Every stage exposes a `{plan.ambiguous}` hook, so that name alone does"
                " not tell you which file does the work."
            )
        if k == n - 1 and plan.extra_cites:
            lines.append("")
            lines.append(
                "I also read "
                + " and ".join(f"`{p}`" for p in plan.extra_cites)
                + " directly; they were not in the explore output."
            )
        # Things that look like citations and are not (spec §3.3).
        if uncited and rng.random() < 0.6:
            f = rng.choice(uncited)
            if f.defined:
                lines.append("")
                lines.append(rng.choice(_PROSE_MENTIONS).format(n=rng.choice(f.defined)))
        if rng.random() < (0.6 if n == 1 else 0.3):
            lines.append("")
            lines.append(
                rng.choice(_DOTTED_LINES).format(
                    d=rng.choice(_DOTTED[plan.repo]), u=_UNSHIPPED[plan.repo]
                )
            )
        if uncited and rng.random() < 0.35:
            f = rng.choice(uncited)
            if f.defined:
                lang = _FENCE_LANG[plan.repo]
                lines.append("")
                lines.append(f"```{lang}")
                lines.append(f"{rng.choice(f.defined)}(input) // sketch, not a reference")
                lines.append("```")
        out.append("\n".join(lines))
    return out


def summary_sentence(repo: str) -> str:
    return {
        "express": "`res.send` picks the Content-Type from the body type and computes the ETag"
        " right before the response is written.",
    }.get(repo, "")
