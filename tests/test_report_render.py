"""Rendering the report safely (`evalkit.outputs.html.render`): escaped text, JSON that cannot
leave its script block, the CSP, figures as inline SVG the CSP allows."""

from __future__ import annotations

import html as html_lib
import json
import re

from evalkit.outputs.html.render import CSP, css_name, inline_svg, render, script_json


def test_script_json_cannot_end_its_block_and_reads_back():
    value = {"t": "</script><!-- <script>alert(1)</script> & \u2028\u2029", "s": "x\ud800"}
    text = script_json(value)
    for bad in ("<", ">", "&", "\u2028", "\u2029", "\ud800"):
        assert bad not in text
    back = json.loads(text)
    assert back["t"] == value["t"]
    assert back["s"] == "x\ufffd"


def test_templates_escape_every_string():
    html = render(
        "task.html.j2",
        title="<script>alert(1)</script>",
        root="",
        page_class="task",
        heading='"><img src=x onerror=alert(2)>',
        lines=["javascript:alert(3)"],
        tables=[],
        groups=[],
        families=[],
        caveats=[],
    )
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert re.findall(r"<script\b[^>]*>", html) == ['<script src="assets/report.js" defer>']


def test_every_page_carries_the_strict_policy():
    html = render(
        "task.html.j2", title="t", root="", page_class="task", heading="h", lines=[],
        tables=[], groups=[], families=[], caveats=[],
    )  # fmt: skip
    assert f'content="{CSP}"' in html_lib.unescape(html)
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
    assert "connect-src 'none'" in CSP and "default-src 'none'" in CSP


def test_standalone_pages_allow_their_own_script_and_style_by_digest_only():
    html = render(
        "task.html.j2", standalone=True, title="t", root="", page_class="task", heading="h",
        lines=[], tables=[], groups=[], families=[], caveats=[],
    )  # fmt: skip
    policy = html_lib.unescape(re.search(r'Policy" content="([^"]*)"', html).group(1))
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+';", policy)
    assert re.search(r"style-src 'sha256-[A-Za-z0-9+/=]+';", policy)
    assert "'self'" not in policy.split("img-src")[0]


def test_inline_svg_drops_inline_styles():
    svg = (
        '<?xml version="1.0"?>\n<!DOCTYPE svg>\n<svg xmlns="http://www.w3.org/2000/svg">'
        "<metadata>m</metadata><defs><style>*{stroke-linejoin: round}</style></defs>"
        '<path style="fill: #ffffff; stroke: #000000; stroke-width: 0.8"/></svg>'
    )
    out = inline_svg(svg)
    assert out.startswith("<svg ")
    assert "style" not in out and "<metadata" not in out
    assert '<path fill="#ffffff" stroke="#000000" stroke-width="0.8"/>' in out


def test_css_name_keeps_a_class_name_inert():
    assert css_name('a" onmouseover="x') == "a--onmouseover--x"
    assert css_name("") == "none"
