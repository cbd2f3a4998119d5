"""Synthetic source text for the corpus: numbered `cat -n` bodies of an exact length.

Every line is assembled from small templates and the catalog's invented names; nothing is
copied from a real project. Lengths are UTF-16 units (Decision 1); the text is ASCII, so a
Python `len` is the UTF-16 length here.
"""

from __future__ import annotations

import random

__all__ = ["code_line", "numbered_body", "comment_prefix"]

_WORDS = (
    "value state entry cache queue handler request response buffer index item node event "
    "listener options config result payload context scope target source record batch frame "
    "token version offset length count limit timeout status header field element scene"
).split()

_TEMPLATES = {
    "js": [
        "function {f}({a}, {b}) {{",
        "  var {a} = this.{b} || {{}};",
        "  if (!{a}) return {f}({b});",
        "  {a}.{b} = {f}({a}, {b});",
        "  return this.{f}({a});",
        "}}",
        "  // {c}",
        "  var {a} = typeof {b} === 'string' ? {b} : String({b});",
        "  this.set('{a}', {b});",
        "  for (var i = 0; i < {a}.length; i++) {{",
    ],
    "ts": [
        "export function {f}({a}: {T}, {b}: number): {T} {{",
        "  const {a} = {b}.get({f}) ?? null;",
        "  if ({a} === undefined) {{",
        "    return {f}({a}, {b});",
        "  }}",
        "}}",
        "  // {c}",
        "  private {a}: Map<string, {T}> = new Map();",
        "  this.{a} = {{ ...this.{a}, {b} }};",
        "  for (const {a} of {b}) {{",
        "export type {T} = Readonly<{{ {a}: number; {b}: string }}>;",
    ],
    "go": [
        "func (s *{T}) {F}({a} string, {b} int) error {{",
        "\t{a}, err := s.{f}({b})",
        "\tif err != nil {{",
        '\t\treturn fmt.Errorf("{c}: %w", err)',
        "\t}}",
        "}}",
        "\t// {c}",
        "\ts.{a}.Lock()",
        "\tdefer s.{a}.Unlock()",
        "\tfor _, {a} := range s.{b} {{",
    ],
    "python": [
        "    def {f}(self, {a}, {b}=None):",
        "        {a} = self.{b}.copy()",
        "        if {a} is None:",
        "            return self.{f}({b})",
        "        # {c}",
        "        for {a} in self.{b}:",
        "        return {a}",
        "class {T}({T2}):",
    ],
    "rust": [
        "pub(crate) fn {f}(&self, {a}: usize) -> Option<{T}> {{",
        "    let {a} = self.{b}.load(Ordering::Acquire);",
        "    if {a} == 0 {{",
        "        return None;",
        "    }}",
        "}}",
        "    // {c}",
        "    match self.{a}.{f}() {{",
        "        Some({a}) => {b}.push({a}),",
        "impl {T} {{",
    ],
    "kotlin": [
        "  fun {f}({a}: {T}): {T2} {{",
        "    val {a} = {b}.{f}()",
        "    if ({a} == null) return {f}({b})",
        "  }}",
        "    // {c}",
        '    check({a} >= 0) {{ "{c}" }}',
        "  override fun {f}(chain: Interceptor.Chain): Response {{",
        "    for ({a} in {b}) {{",
    ],
    "swift": [
        "    func {f}(_ {a}: {T}) -> {T2} {{",
        "        let {a} = {b}.{f}()",
        "        guard let {a} = {b} else {{ return }}",
        "    }}",
        "        // {c}",
        "        {a}.append({b})",
        "    public var {a}: {T}? {{ {b} }}",
        "        switch {a} {{",
    ],
}
_TEMPLATES["tsx"] = _TEMPLATES["ts"] + [
    "  return <{T} {a}={{{b}}} />;",
    "  const [{a}, set{T}] = useState<{T2}>();",
]
_COMMENT = {
    "python": "# ",
    "js": "// ",
    "ts": "// ",
    "tsx": "// ",
    "go": "// ",
    "rust": "// ",
    "kotlin": "// ",
    "swift": "// ",
}


def comment_prefix(lang: str) -> str:
    return _COMMENT.get(lang, "// ")


def _ident(name: str) -> str:
    return name.split(".")[-1]


def code_line(rng: random.Random, lang: str, names: list[str]) -> str:
    """One invented source line in `lang`, using the file's names where a template wants one."""
    t = rng.choice(_TEMPLATES[lang])
    f = _ident(rng.choice(names)) if names else rng.choice(_WORDS)
    types = [n for n in names if n[:1].isupper()] or ["Entry"]
    return t.format(
        f=f,
        F=f[:1].upper() + f[1:],
        a=rng.choice(_WORDS),
        b=rng.choice(_WORDS),
        T=_ident(rng.choice(types)),
        T2=_ident(rng.choice(types)),
        c=" ".join(rng.choice(_WORDS) for _ in range(rng.randrange(3, 8))),
    )


def _filler(rng: random.Random, n: int) -> str:
    """Exactly `n` characters of comment words (n >= 0)."""
    out = ""
    while len(out) < n:
        out += rng.choice(_WORDS) + " "
    return out[:n].rstrip().ljust(n, ".")


def numbered_body(
    rng: random.Random,
    lang: str,
    names: list[str],
    length: int,
    start: int = 1,
    gaps: list[str] | None = None,
) -> str:
    """Numbered source (`<n>\\t<code>` lines joined by `\\n`) of exactly `length` characters.

    `gaps` are gap-marker lines placed between runs of lines (spec §2.1). No line can start
    with `> ` or with the section marker, so the text never cuts or opens a section (§2.5).
    """
    if length < 8:
        raise ValueError(f"a numbered body needs at least 8 characters, not {length}")
    lines: list[str] = []
    used = 0  # characters of "\n".join(lines)
    n = start
    gaps = list(gaps or [])
    while True:
        left = length - used - (1 if lines else 0)  # room for one more line
        prefix = f"{n}\t{comment_prefix(lang)}"
        if left <= 110:
            if left >= len(prefix) + 4:
                lines.append(prefix + _filler(rng, left - len(prefix)))
                break
            if lines:
                # Too little room for a line of its own: lengthen the previous line instead.
                extra = left + 1
                lines[-1] = (
                    lines[-1] + " " + _filler(rng, extra - 1) if extra > 1 else (lines[-1] + " ")
                )
                break
            lines.append(f"{n}\t" + _filler(rng, left - len(f"{n}\t")))
            break
        if gaps and rng.random() < 0.06 and len(lines) > 3:
            line = gaps.pop(0)
            n += rng.randrange(8, 60)
        else:
            for _ in range(6):  # prefer a whole line that fits over a cut one
                line = f"{n}\t" + code_line(rng, lang, names)
                if len(line) + 1 <= left - 12:
                    break
            n += 1
        if len(line) + 1 > left - 12:
            line = line[: max(len(f"{n}\t") + 4, left - 40)]
        lines.append(line)
        used += len(line) + (1 if len(lines) > 1 else 0)
    body = "\n".join(lines)
    if len(body) != length:
        raise AssertionError(f"body length {len(body)} != {length}")
    return body
