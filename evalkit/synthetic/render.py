"""Turn solved session plans into stream-json transcripts (issue 4, Build 2).

Each session style has a behaviour script: the A/B pass runs (ToolSearch, explores, the Reads of
§12.6, a Bash or Grep here and there), `cg8-val` (three explores, the last delegating to a
subagent that greps `sceneNonce`, §12.5), the campaign runs of `ab-readme` (three segments,
sufficiency buckets as §12.4 publishes them), an extension run whose third turn hits the turn
limit, and interactive sessions without result events. The allocation each transcript yields is
checked against the plan with `evalkit.metrics.allocation.compute_allocation` while rendering; an answer
that would cite differently is redrawn.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from evalkit.metrics.allocation import MIN_SYMBOL_LEN, STOPWORDS, compute_allocation
from evalkit.synthetic.answers import AnswerPlan, CitedFile, summary_sentence, write_answers
from evalkit.synthetic.calibrate import SessionPlan
from evalkit.synthetic.catalog import QUESTIONS, FileInfo, catalog, file_info
from evalkit.synthetic.explore import FOOTERS, HeaderStyle, empty_response, render_response
from evalkit.synthetic.source import numbered_body
from evalkit.synthetic.stream import EXPLORE, Stream
from evalkit.synthetic.usage import OCCUPANCY_TARGETS, SAMPLE_TARGETS, tune_occupancy, tune_sample

__all__ = ["RenderedSession", "render_session", "render_without", "dumps_events"]

TOOLS = [
    "Task",
    "Bash",
    "Glob",
    "Grep",
    "Read",
    "Edit",
    "Write",
    "TodoWrite",
    "ToolSearch",
    "WebFetch",
    "mcp__codegraph__codegraph_explore",
    "mcp__codegraph__codegraph_node",
    "mcp__codegraph__codegraph_search",
]
TOOLS_WITHOUT = [t for t in TOOLS if "codegraph" not in t]
# 73 chars, the `other tools` result of the published occupancy sample (§12.7).
TOOLSEARCH_RESULT = "Loaded deferred tool mcp__codegraph__codegraph_explore (schema attached)."
SHARED_NAMES = ["handle", "dispatch", "update", "process"]


@dataclass
class RenderedSession:
    files: dict[str, bytes]
    truth: list[dict[str, Any]] = field(default_factory=list)


def dumps_events(events: list[dict[str, Any]]) -> bytes:
    return "".join(
        json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in events
    ).encode("utf-8")


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _question(s: SessionPlan) -> list[str]:
    if s.style in ("campaign", "campaign-x"):
        return QUESTIONS[s.repo]
    if s.style == "cg8-val":
        return [
            "Where does canvasNonce come from, and what invalidates the static canvas"
            " cache when an element changes?"
        ]
    q = QUESTIONS["excalidraw-ab" if s.repo == "excalidraw" else s.repo][0]
    if s.pass_ == "cg22":
        return [f"Use codegraph to answer: {q}"]
    return [q[:1].upper() + q[1:] + " Use the codegraph tools to look things up."]


def _abs_root(s: SessionPlan) -> str:
    if s.style in ("ab",):
        return "/private/tmp/t-new" if s.arm == "new" else "/private/tmp/t-base"
    return f"/private/tmp/codegraph-corpus/{s.repo}"


def _build(s: SessionPlan) -> str:
    return "baseline" if s.arm == "baseline" else "new"


# --- headers ----------------------------------------------------------------------------------


def _headers(rng: random.Random, s: SessionPlan) -> tuple[dict[tuple[int, int], HeaderStyle], str]:
    """Header style per (call, section), and the name on 3+ files cited on purpose (or "")."""
    infos = {x.path: file_info(s.repo, x.path) for c in s.calls for x in c.sections}
    verdicts = {x.path: (x.verdict, x.symbol) for c in s.calls for x in c.sections}
    protected = s.pass_ == "cg22" and s.repo == "express"
    sym_files = [p for p, (v, _) in verdicts.items() if v == "symbol"]
    none_files = [p for p, (v, _) in verdicts.items() if not v]
    alias_on = ""
    if sym_files and none_files and not protected and rng.random() < 0.35:
        alias_on = rng.choice(none_files)  # re-binds a name another file defines (§3.3)
    shared = ""
    shared_on: set[str] = set()
    if len(verdicts) >= 3 and not protected and rng.random() < 0.3:
        shared = rng.choice(SHARED_NAMES)
        shared_on = set(rng.sample(sorted(verdicts), 3))
    sym_names = [verdicts[p][1] for p in sym_files]
    out = {}
    for ci, call in enumerate(s.calls):
        for si, x in enumerate(call.sections):
            info = infos[x.path]
            own = [f"{n}({k})" for n, k in info.symbols]
            if x.verdict == "symbol":
                kind = dict(info.symbols)[x.symbol]
                first = f"{x.symbol}({kind})"
                rest = [lbl for lbl in own if lbl != first]
                labels = [first] + rng.sample(rest, min(len(rest), rng.randrange(0, 3)))
                mode = "labels"
            else:
                mode = rng.choices(
                    ["labels", "focused", "skeleton", "requested", "bare"], [60, 12, 10, 8, 10]
                )[0]
                labels = rng.sample(own, min(len(own), rng.randrange(1, 4)))
            if x.path in shared_on or x.path == alias_on:
                mode = "labels" if mode != "requested" else mode
            if x.path == alias_on:
                labels.append(f"{rng.choice(sym_names)}(variable)")
            if x.path in shared_on:
                labels.insert(rng.randrange(len(labels) + 1), f"{shared}(function)")
            # Call sites of another file's definition: listed, never a definition (§2.3).
            others = [n for n in sym_names if n != x.symbol]
            if others and mode == "labels" and rng.random() < 0.5:
                labels.append(f"{rng.choice(others)}(calls)")
            more = rng.randrange(2, 40) if mode == "labels" and rng.random() < 0.55 else 0
            out[(ci, si)] = HeaderStyle(labels=labels, more=more, mode=mode)
    return out, shared


# --- explore responses ------------------------------------------------------------------------


def _query(rng: random.Random, s: SessionPlan, ci: int) -> str:
    if s.key == "cg22/ab-express/run-baseline-1":
        return ["res.send Content-Type ETag generation", "response.js res.send function body"][ci]
    names = []
    for x in s.calls[ci].sections:
        info = file_info(s.repo, x.path)
        names.append(rng.choice(info.symbols)[0].split(".")[-1])
    words = {
        "express": "Content-Type ETag",
        "excalidraw": "render canvas update",
        "client-go": "informer cache sync",
        "vscode": "extension host rpc",
        "django": "QuerySet SQL compiler",
        "tokio": "scheduler task queue",
        "okhttp": "interceptor chain",
        "gin": "router middleware",
        "alamofire": "request validate retry",
    }[s.repo]
    return " ".join(names[:2]) + " " + words


def _pointers(rng: random.Random, s: SessionPlan, exclude: set[str]) -> list[str]:
    pool = [f for f in catalog(s.repo) if f.path not in exclude]
    out = []
    for f in rng.sample(pool, min(len(pool), rng.randrange(2, 5))):
        name = rng.choice(f.symbols)[0]
        out.append(f"- `{name}` — {f.path}:{rng.randrange(10, 900)}")
    return out


def _explore_text(
    rng: random.Random, s: SessionPlan, ci: int, styles, query: str, mention: str = ""
) -> str:
    call = s.calls[ci]
    infos = [file_info(s.repo, x.path) for x in call.sections]
    hs = [styles[(ci, si)] for si in range(len(call.sections))]
    returned = {x.path for c in s.calls for x in c.sections}
    lines = [
        f'Explore — "{query}": {len(call.sections)} files, budget '
        f"{(call.envelope // 1000 + 2) * 1000:,} chars"
    ]
    if rng.random() < 0.6 or mention:
        steps = [file_info(s.repo, x.path).symbols[0][0] for x in call.sections[:3]]
        flow = " → ".join(steps)
        if mention:
            flow += f" → {mention}"
        lines.append(f"Flow: {flow}")
    if rng.random() < 0.3:
        others = [f.path for f in catalog(s.repo) if f.path not in returned][:3]
        if others:
            lines.append("Blast radius: " + ", ".join(others))
    preamble = "\n".join(lines) + "\n\n"
    pointers = _pointers(rng, s, returned) if rng.random() < 0.5 else []
    return render_response(
        rng,
        call.sections,
        infos,
        hs,
        preamble=preamble,
        pointers=pointers,
        footer=FOOTERS[_build(s)],
    )


# --- answers ----------------------------------------------------------------------------------


def _answer_plan(s: SessionPlan, shared: str) -> AnswerPlan:
    seen: dict[str, CitedFile] = {}
    for c in s.calls:
        for x in c.sections:
            if x.path not in seen:
                info = file_info(s.repo, x.path)
                defined = [
                    n
                    for n, k in info.symbols
                    if "." not in n and len(n) >= MIN_SYMBOL_LEN and n.lower() not in STOPWORDS
                ]
                seen[x.path] = CitedFile(x.path, x.verdict, x.symbol, defined)
    bases = [p.rsplit("/", 1)[-1] for p in seen]
    unique = {b for b in bases if bases.count(b) == 1}
    extra = []
    if s.style == "cg8-val":
        extra = ["packages/excalidraw/scene/Renderer.ts", "packages/excalidraw/components/App.tsx"]
    return AnswerPlan(
        repo=s.repo,
        files=list(seen.values()),
        abs_root=_abs_root(s),
        unique_basenames=unique,
        ambiguous=shared,
        extra_cites=extra,
        opening=summary_sentence(s.repo) if s.repo == "express" else "",
    )


def _verify(s: SessionPlan, texts: list[str], answer: str) -> list[str]:
    """Compare the parser's verdicts with the plan; returns the mismatches."""
    a = compute_allocation(texts, answer)
    bad = []
    if len(a.calls) != len(s.calls):
        return [f"{len(a.calls)} calls, planned {len(s.calls)}"]
    for ci, (got, want) in enumerate(zip(a.calls, s.calls, strict=True)):
        if len(got.files) != len(want.sections):
            bad.append(f"call {ci + 1}: {len(got.files)} sections")
            continue
        for g, w in zip(got.files, want.sections, strict=True):
            if (g.path, g.chars, g.via or "", g.symbol or "") != (
                w.path,
                w.chars,
                w.verdict,
                w.symbol if w.verdict == "symbol" else "",
            ):
                bad.append(
                    f"call {ci + 1} {w.path}: got {g.chars} {g.via} {g.symbol}, planned "
                    f"{w.chars} {w.verdict} {w.symbol}"
                )
    return bad


# --- scripts ----------------------------------------------------------------------------------


def _read_text(rng: random.Random, info: FileInfo, offset: int, chars: int) -> str:
    body = numbered_body(rng, info.lang, [n for n, _ in info.symbols], chars, start=offset)
    return "\n".join(
        f"{ln.split(chr(9), 1)[0]:>6}\t{ln.split(chr(9), 1)[-1]}" if "\t" in ln else ln
        for ln in body.split("\n")
    )


def _grep_text(rng: random.Random, s: SessionPlan, pattern: str) -> str:
    files = rng.sample(list(catalog(s.repo)), 3)
    return "\n".join(f"{f.path}:{rng.randrange(10, 800)}:  // uses {pattern}" for f in files)


@dataclass
class _Ctx:
    rng: random.Random
    s: SessionPlan
    st: Stream
    styles: dict
    texts: list[str] = field(default_factory=list)  # answered explore texts, stream order
    call: int = 0

    def explore(self, parent: str | None = None, narration: str = "", mention: str = "") -> str:
        q = _query(self.rng, self.s, self.call)
        tid = self.st.tool_use(EXPLORE, {"query": q}, parent, narration)
        text = _explore_text(self.rng, self.s, self.call, self.styles, q, mention)
        self.st.tool_result(tid, text, "explore", parent)
        self.texts.append(text)
        self.call += 1
        return text

    def explore_error(self, parent: str | None = None) -> None:
        tid = self.st.tool_use(EXPLORE, {"query": "render loop invalidation"}, parent)
        self.st.tool_result(
            tid, "MCP error -32001: Request timed out", "tool", parent, is_error=True
        )

    def explore_empty(self, parent: str | None = None) -> None:
        q = "why is the whole canvas repainted"
        tid = self.st.tool_use(EXPLORE, {"query": q}, parent)
        text = empty_response(q, _pointers(self.rng, self.s, set()))
        self.st.tool_result(tid, text, "explore", parent)
        self.texts.append(text)

    def read(
        self,
        path: str,
        parent: str | None = None,
        offset: int | None = None,
        chars: int | None = None,
    ) -> None:
        info = _info_any(self.s.repo, path)
        inp: dict[str, Any] = {"file_path": f"{_abs_root(self.s)}/{path}"}
        if offset:
            inp.update(offset=offset, limit=120)
        tid = self.st.tool_use("Read", inp, parent)
        text = _read_text(self.rng, info, offset or 1, chars or self.rng.randrange(1500, 5200))
        self.st.tool_result(tid, text, "read", parent, as_blocks=False)

    def grep(self, pattern: str, parent: str | None = None) -> None:
        tid = self.st.tool_use(
            "Grep", {"pattern": pattern, "output_mode": "content", "-n": True}, parent
        )
        self.st.tool_result(
            tid, _grep_text(self.rng, self.s, pattern), "tool", parent, as_blocks=False
        )

    def bash(
        self, cmd: str, output: str, parent: str | None = None, is_error: bool = False
    ) -> None:
        tid = self.st.tool_use("Bash", {"command": cmd, "description": "Inspect the code"}, parent)
        self.st.tool_result(tid, output, "tool", parent, is_error=is_error, as_blocks=False)

    def toolsearch(self) -> None:
        tid = self.st.tool_use("ToolSearch", {"query": "select:" + EXPLORE, "max_results": 1})
        self.st.tool_result(tid, TOOLSEARCH_RESULT, "tool")


def _info_any(repo: str, path: str) -> FileInfo:
    try:
        return file_info(repo, path)
    except KeyError:
        return FileInfo(path, "ts", (("Renderer", "class"), ("renderStaticScene", "function")))


def _cited_path(s: SessionPlan, ci: int) -> str:
    secs = s.calls[ci].sections
    for x in secs:
        if x.verdict == "path":
            return x.path
    return secs[0].path


_BLOCKED = (
    "Blocked by PreToolUse hook: the codegraph CLI is hidden in this arm "
    "(no-cli-shim); use the MCP tools."
)


def _script_ab(c: _Ctx, answers: list[str]) -> None:
    s, st, rng = c.s, c.st, c.rng
    st.begin_segment(TOOLS, _question(s)[0])
    c.toolsearch()
    for i in range(len(s.calls)):
        c.explore(narration="Let me look at how the pieces connect." if i == 0 else "")
    last = len(s.calls) - 1
    if s.reads:
        if s.key == "cg15/ab-express/run-new-2":
            c.read(s.extra.get("pin_last") or _cited_path(s, last), offset=195)
        else:
            c.read(_cited_path(s, last), offset=rng.choice([None, 100, 180]))
        others = [x.path for cc in s.calls for x in cc.sections if x.verdict == "path"]
        for _ in range(s.reads - 1):
            c.read(rng.choice(others))
    elif s.pass_ == "cg22" and s.repo == "express" and s.n_calls == 2:
        out = (
            "lib/response.js exports 41 methods\n" + "res.send -> res.set, res.type, "
            "etag, fresh\n" * 12
        )[: rng.randrange(515, 560)]
        c.bash("node -e \"console.log(Object.keys(require('./lib/response')).length)\"", out)
    elif not (s.pass_ == "cg22" and s.repo == "express") and rng.random() < 0.25:
        c.grep(rng.choice(file_info(s.repo, _cited_path(s, last)).symbols)[0].split(".")[-1])
    st.answer(answers[0])
    st.result(answers[0], s.duration)


def _script_cg8(c: _Ctx, answers: list[str]) -> None:
    st = c.st
    st.begin_segment(TOOLS, _question(c.s)[0])
    c.toolsearch()
    for _ in range(3):
        c.explore()
    tid = st.tool_use(
        "Task",
        {
            "subagent_type": "general-purpose",
            "description": "Trace sceneNonce through the renderer",
            "prompt": "Find where sceneNonce is produced and consumed.",
        },
    )
    c.grep("sceneNonce", parent=tid)
    c.read("packages/excalidraw/scene/Renderer.ts", parent=tid, chars=4200)
    c.read("packages/excalidraw/components/App.tsx", parent=tid, offset=1480, chars=5200)
    st.message(
        [
            {
                "type": "text",
                "text": "sceneNonce is bumped by Scene.triggerUpdate and "
                "passed down to the static canvas, whose memo compares it.",
            }
        ],
        parent=tid,
    )
    st.tool_result(
        tid,
        "Summary: the nonce is created in Renderer.ts (getRenderableElements) "
        "and read in App.tsx when the static canvas props are built.",
        "tool",
    )
    st.answer(answers[0])
    st.result(answers[0], c.s.duration)


def _turns(rng: random.Random, n: int, key: str = "") -> list[int]:
    if key in SAMPLE_TARGETS:
        return [1, 1, 0]  # the §12.7 sample: six requests, the third turn answers from context
    if n == 2:
        return rng.choice([[1, 1, 0], [1, 0, 1]])
    base = [n // 3 + (1 if i < n % 3 else 0) for i in range(3)]
    return base


def _campaign_special(s: SessionPlan) -> dict[str, Any]:
    """Where a campaign run's explores are followed by something other than another explore
    or the answer, so each repo's buckets come out as published (§12.4)."""
    n = s.n_calls
    key = (s.repo, s.run)
    if key == ("vscode", 4):
        return {
            1: "bash-search",
            n - 1: "read-missed",
            "after": ("reads", 4, "bash", 4, "blocked", 2),
        }
    if key == ("django", 4):
        return {0: "read-returned"}
    if key == ("tokio", 2):
        return {n - 1: "grep", "after": ("reads", 3, "bash", 1, "blocked", 1)}
    if key == ("alamofire", 2):
        return {n - 1: "read-returned"}
    return {}


def _after(c: _Ctx, spec: tuple) -> None:
    it = dict(zip(spec[::2], spec[1::2], strict=True))
    paths = [x.path for cc in c.s.calls for x in cc.sections]
    for _ in range(it.get("reads", 0)):
        c.read(c.rng.choice(paths))
    for _ in range(it.get("blocked", 0)):
        c.bash(
            f'codegraph explore "{c.rng.choice(["message loss", "spawn queue"])}"',
            _BLOCKED,
            is_error=True,
        )
    for _ in range(it.get("bash", 0)):
        p = c.rng.choice(paths)
        c.bash(f"wc -l {p.rsplit('/', 1)[0]}/*", f"  {c.rng.randrange(80, 2400)} total\n")


def _reaction(c: _Ctx, what: str, ci: int) -> None:
    s, rng = c.s, c.rng
    returned = {x.path for x in s.calls[ci].sections}
    if what == "read-returned":
        c.read(_cited_path(s, ci))
    elif what == "read-missed":
        every = {x.path for cc in s.calls for x in cc.sections}
        missed = [f.path for f in catalog(s.repo) if f.path not in every]
        c.read(rng.choice(missed))
    elif what == "grep":
        c.grep(rng.choice(file_info(s.repo, _cited_path(s, ci)).symbols)[0].split(".")[-1])
    elif what == "bash-search":
        d = sorted(returned)[0].rsplit("/", 1)[0]
        c.bash(
            f"grep -rn 'onDidExit' {d}/ | head -20",
            "\n".join(f"{d}/x{i}.ts:{40 + i}:  onDidExit(handler)" for i in range(6)),
        )


def _script_campaign(c: _Ctx, answers: list[str]) -> None:
    s, st, rng = c.s, c.st, c.rng
    qs = _question(s)
    special = _campaign_special(s)
    turns = _turns(rng, s.n_calls, s.key)
    ci = 0
    for t in range(3):
        st.begin_segment(TOOLS, qs[t])
        if t == 0:
            c.toolsearch()
        for _ in range(turns[t]):
            c.explore()
            if ci in special:
                _reaction(c, special[ci], ci)
            ci += 1
        if t == 2 and "after" in special:
            _after(c, special["after"])
        st.answer(answers[t])
        st.result(answers[t], rng.randrange(38, 140) + rng.random())


def _script_campaign_x(c: _Ctx, answers: list[str]) -> None:
    """ab-readme/excalidraw/run5: an errored explore, one with no sections, a Read of a file
    the response named but did not ship, a delegation whose subagent reads a returned file with
    a shell command and explores twice itself; the third turn hits the turn limit."""
    s, st, rng = c.s, c.st, c.rng
    qs = _question(s)
    static = "packages/excalidraw/components/canvases/StaticCanvas.tsx"
    st.begin_segment(TOOLS, qs[0])
    c.toolsearch()
    c.explore()
    c.explore()
    c.explore_error()
    c.explore()
    st.answer(answers[0])
    st.result(answers[0], 71.4)
    st.begin_segment(TOOLS, qs[1])
    c.explore()
    c.explore(mention=static)
    c.read(static)
    c.explore_empty()
    c.explore()
    tid = st.tool_use(
        "Agent",
        {
            "subagent_type": "general-purpose",
            "description": "Check the shape cache path",
            "prompt": "Confirm where shapes are regenerated.",
        },
    )
    shape = _cited_path(s, c.call - 1)
    bid = st.tool_use("Bash", {"command": f"sed -n '1,80p' {shape}"}, parent=tid)
    st.tool_result(
        bid, _read_text(rng, file_info(s.repo, shape), 1, 2400), "read", parent=tid, as_blocks=False
    )
    c.explore(parent=tid)
    c.explore(parent=tid)
    st.message(
        [
            {
                "type": "text",
                "text": "Shapes are regenerated when the element version "
                "changes; the cache key is the element itself.",
            }
        ],
        parent=tid,
    )
    st.tool_result(
        tid, "The shape cache is keyed by element and invalidated on version bumps.", "tool"
    )
    st.answer(answers[1])
    st.result(answers[1], 112.9)
    st.begin_segment(TOOLS, qs[2])
    for _ in range(3):
        c.explore()
    st.result(None, 240.0, subtype="error_max_turns")


def _script_interactive(c: _Ctx, answers: list[str]) -> None:
    s, st = c.s, c.st
    st.begin_segment(TOOLS, QUESTIONS["express"][0])
    c.toolsearch()
    c.explore_error()
    st.message(
        [
            {
                "type": "text",
                "text": "The explore call timed out; retrying. Let me look at "
                "lib/view.js afterwards if the send path does not explain it.",
            }
        ]
    )
    c.explore()
    c.read(_cited_path(s, 0), offset=120)
    st.answer(answers[0])


_SCRIPTS = {
    "ab": _script_ab,
    "cg8-val": _script_cg8,
    "campaign": _script_campaign,
    "campaign-x": _script_campaign_x,
    "interactive": _script_interactive,
}


def _ratios(rng: random.Random) -> dict[str, float]:
    return {
        "explore": 2.2 + rng.random() * 0.1,
        "read": 2.6 + rng.random() * 0.3,
        "tool": 3.2,
        "text": 3.9,
    }


def render_session(s: SessionPlan, seed: int) -> RenderedSession:
    """The transcript files of one planned session, checked against the plan."""
    for attempt in range(60):
        rng = random.Random(f"{seed}:{s.key}:{attempt}")
        styles, shared = _headers(rng, s)
        aplan = _answer_plan(s, shared)
        n_answers = len(s.segments) if s.style != "campaign-x" else 2
        answers = write_answers(rng, aplan, n_answers)
        if s.style == "campaign-x":
            answers.append("")
        st = Stream(
            rng=rng,
            session_id=_uuid(rng),
            base_ctx=rng.randrange(21_000, 38_000),
            ratios=_ratios(rng),
            interactive=s.style == "interactive",
            cwd=_abs_root(s),
        )
        c = _Ctx(rng=rng, s=s, st=st, styles=styles)
        _SCRIPTS[s.style](c, answers)
        answer = "\n\n".join(a for a in answers[:n_answers])
        if s.style == "interactive":
            answer = answers[0]
        bad = _verify(s, [t for t in c.texts], answer)
        if not bad:
            break
    else:
        raise RuntimeError(f"{s.key}: answers never cite as planned: {bad[:3]}")
    if s.key in OCCUPANCY_TARGETS:
        tune_occupancy(st.segments[0], s.key, seed)
    if s.key in SAMPLE_TARGETS:
        tune_sample([e for seg in st.segments for e in seg], s.key, seed)
    files = {rel: dumps_events(events) for rel, events in zip(s.segments, st.segments, strict=True)}
    return RenderedSession(files=files, truth=_truth(s))


def _truth(s: SessionPlan) -> list[dict[str, Any]]:
    log = s.segments[0]
    rows = [
        dict(
            log=log,
            level="session",
            call="",
            section="",
            path="",
            chars=sum(c.envelope for c in s.calls),
            cited_chars=sum(c.used for c in s.calls),
            path_chars=sum(c.used_path for c in s.calls),
            verdict="",
            symbol="",
        )
    ]
    for ci, c in enumerate(s.calls, 1):
        rows.append(
            dict(
                log=log,
                level="call",
                call=ci,
                section="",
                path="",
                chars=c.envelope,
                cited_chars=c.used,
                path_chars=c.used_path,
                verdict="",
                symbol="",
            )
        )
        for si, x in enumerate(c.sections, 1):
            rows.append(
                dict(
                    log=log,
                    level="section",
                    call=ci,
                    section=si,
                    path=x.path,
                    chars=x.chars,
                    cited_chars=x.chars if x.verdict else 0,
                    path_chars=x.chars if x.verdict == "path" else 0,
                    verdict=x.verdict or "none",
                    symbol=x.symbol,
                )
            )
    return rows


# --- sessions that must not count -------------------------------------------------------------


def render_without(
    rel_segments: list[str],
    repo: str,
    seed: int,
    *,
    blocked: bool,
    interactive: bool = False,
    errored_explore: bool = False,
) -> dict[str, bytes]:
    """A session with no answered explore: a without-arm run (Read/Grep/Bash only), or an
    interactive session whose only explore errored. Neither is in the sweep (Decision 4)."""
    rng = random.Random(f"{seed}:{rel_segments[0]}")
    st = Stream(
        rng=rng,
        session_id=_uuid(rng),
        base_ctx=rng.randrange(20_000, 30_000),
        ratios=_ratios(rng),
        interactive=interactive,
        cwd=f"/private/tmp/codegraph-corpus/{repo}",
    )
    dummy = SessionPlan(key=rel_segments[0], segments=rel_segments, repo=repo, style="without")
    c = _Ctx(rng=rng, s=dummy, st=st, styles={})
    qs = QUESTIONS.get(repo, QUESTIONS["express"])
    files = list(catalog(repo))
    for t, _rel in enumerate(rel_segments):
        st.begin_segment(TOOLS if errored_explore else TOOLS_WITHOUT, qs[t % len(qs)])
        if errored_explore:
            c.explore_error()
        if blocked and t == 0:
            c.bash('codegraph explore "entry point"', _BLOCKED, is_error=True)
        for _ in range(rng.randrange(2, 4)):
            kind = rng.choice(["read", "grep", "bash"])
            f = rng.choice(files)
            if kind == "read":
                c.read(f.path, chars=rng.randrange(600, 1800))
            elif kind == "grep":
                c.grep(f.symbols[0][0].split(".")[-1])
            else:
                c.bash(
                    f"ls {f.path.rsplit('/', 1)[0] if '/' in f.path else '.'}",
                    "\n".join(g.path.rsplit("/", 1)[-1] for g in files[:6]),
                )
        text = (
            f"From reading the sources directly: {f.path} is where this starts; the rest "
            "follows from the calls it makes."
        )
        st.answer(text)
        st.result(text, rng.randrange(40, 160) + 0.5)
    return {rel: dumps_events(ev) for rel, ev in zip(rel_segments, st.segments, strict=True)}
