"""Rendering pages safely: the Jinja2 environment, data embedded as JSON, figures as inline SVG.

Safe by construction (issue 25 item 5):

* every template is rendered with autoescape on, so a string from a transcript is text, never
  markup (`<script>`, `onerror=`, `javascript:` all arrive as characters);
* data for the page's script goes in a `<script type="application/json">` block through
  `script_json`, which escapes `<`, `>`, `&`, U+2028 and U+2029 (so `</script>` and `<!--`
  cannot end or change the block) and replaces lone surrogates;
* each page carries a Content-Security-Policy (`CSP`) that runs only the report's own
  `assets/report.js`: no inline script, no inline event handler, no inline style, no request
  to anywhere (`connect-src 'none'`, images only from the site or `data:`);
* matplotlib's SVG is rewritten for that policy (`inline_svg`): its `style` attributes become
  presentation attributes and its `<style>` element is dropped, so the figures draw without
  `'unsafe-inline'`.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from evalkit.ecma import printable

__all__ = ["CSP", "environment", "render", "script_json", "inline_svg", "css_name"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'none'; base-uri 'none'; form-action 'none'; "
    "object-src 'none'; frame-src 'none'"
)

_SCRIPT_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_SCRIPT_UNSAFE = re.compile("[<>&\u2028\u2029]")


def script_json(value: Any) -> str:
    """`value` as JSON that is safe inside `<script type="application/json">`: no `<`, `>` or
    `&` (no `</script>`, no `<!--`), no raw line separators, lone surrogates as U+FFFD."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = printable(text)
    return _SCRIPT_UNSAFE.sub(lambda m: _SCRIPT_ESCAPES[m.group(0)], text)


def css_name(value: Any) -> str:
    """A value usable as part of a CSS class name (a tool family): letters, digits, `-`."""
    return re.sub(r"[^A-Za-z0-9-]", "-", str(value))[:40] or "none"


@cache
def environment():
    """The one Jinja2 environment of the report: templates from the package, autoescape on."""
    import jinja2

    root = resources.files("evalkit.outputs.html") / "templates"
    templates = {
        p.name: p.read_text(encoding="utf-8") for p in root.iterdir() if p.name.endswith(".j2")
    }
    env = jinja2.Environment(
        loader=jinja2.DictLoader(templates),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["css"] = css_name
    return env


def render(template: str, *, standalone: bool = False, **context: Any) -> str:
    """Render `template` with the page's CSP; text is made printable (lone surrogates, which
    cannot be written as UTF-8, become U+FFFD).

    `standalone` puts the stylesheet and the script inside the page (for a notebook's inline
    frame, which has no folder beside it): the CSP then allows exactly those two, by their
    SHA-256 digests, and still nothing else."""
    csp, inline = CSP, None
    if standalone:
        from markupsafe import Markup

        css, js = asset("report.css").decode("utf-8"), asset("report.js").decode("utf-8")
        csp = CSP.replace("script-src 'self'", f"script-src '{_sha256(js)}'").replace(
            "style-src 'self'", f"style-src '{_sha256(css)}'"
        )
        inline = {"css": Markup(css), "js": Markup(js)}
    page = environment().get_template(template).render(csp=csp, inline_assets=inline, **context)
    return printable(page)


def _sha256(text: str) -> str:
    import base64
    import hashlib

    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def asset(name: str) -> bytes:
    """One of the report's static files (`report.js`, `report.css`)."""
    return (resources.files("evalkit.outputs.html") / "assets" / name).read_bytes()


# --- figures --------------------------------------------------------------------------------

_STYLE_ATTR = re.compile(r'\sstyle="([^"]*)"')
_STYLE_ELEMENT = re.compile(r"<style[^>]*>.*?</style>", re.S)
_PROLOGUE = re.compile(r"^.*?(?=<svg\b)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>", re.S)


def _attributes(match: re.Match[str]) -> str:
    out = []
    for decl in match.group(1).split(";"):
        name, _, value = decl.partition(":")
        name, value = name.strip(), value.strip()
        if re.fullmatch(r"[a-z-]+", name) and '"' not in value and "<" not in value:
            out.append(f' {name}="{value}"')
    return "".join(out)


def inline_svg(svg: str) -> str:
    """matplotlib's SVG as an inline `<svg>` element the page's CSP allows: the XML prologue and
    metadata removed, `style="a: b"` attributes turned into presentation attributes (`a="b"`),
    the `<style>` element dropped (its one rule, rounded line joins, is set on the root)."""
    svg = _PROLOGUE.sub("", svg, count=1)
    svg = _METADATA.sub("", svg)
    svg = _STYLE_ELEMENT.sub("", svg)
    svg = _STYLE_ATTR.sub(_attributes, svg)
    return svg.replace("<svg ", '<svg stroke-linejoin="round" stroke-linecap="butt" ', 1)


def figure_svg(fig) -> str:
    """A matplotlib Figure as CSP-safe inline SVG, the same bytes on every run."""
    import io

    import matplotlib as mpl

    buf = io.StringIO()
    with mpl.rc_context({"svg.hashsalt": "evalkit", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return inline_svg(buf.getvalue())
