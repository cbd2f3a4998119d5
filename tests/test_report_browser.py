"""The report in a real browser: headless Chromium driven by Playwright (the `browser` extra).

One report of a small fixture corpus (with a hostile session), one loopback server and one
browser for the module. Every page a test opens is watched: no console error, no uncaught
exception, no dialog, and no request outside the site. The index and one session page are
saved as 1280×800 screenshots (to `reports/screenshots/`, which git ignores, or to
`$EVALKIT_SCREENSHOTS`).

Chromium is Debian's `chromium` package (Playwright's own browser download is not needed):
`$EVALKIT_CHROMIUM`, else the first of chromium, chromium-browser, google-chrome on PATH. Without
Playwright or a Chromium the module is skipped, saying which is missing.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from evalkit.outputs.html.pages import session_file
from evalkit.outputs.html.serve import make_server
from evalkit.outputs.html.site import ReportOptions, write_report
from tests.report_helpers import HOSTILE_SCRIPT, UUID, build_report_corpus

sync_api = pytest.importorskip(
    "playwright.sync_api", reason='Playwright is not installed (pip install -e ".[browser]")'
)

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
REPO = Path(__file__).resolve().parent.parent


def chromium_path() -> str | None:
    named = os.environ.get("EVALKIT_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set EVALKIT_CHROMIUM)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = build_report_corpus(tmp_path_factory.mktemp("corpus") / "c", hostile=True)
    out = tmp_path_factory.mktemp("site") / "out"
    write_report(root, out, ReportOptions(cache=False, jobs=1))
    server = make_server(out)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield out, f"http://{host}:{port}/"
    server.shutdown()
    server.server_close()


class Watched:
    """A page with everything it logs, requests and opens recorded."""

    def __init__(self, page, base: str) -> None:
        self.page, self.base = page, base
        self.problems: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))
        page.on("dialog", self._dialog)
        page.on("request", self._request)

    def _console(self, msg) -> None:
        if msg.type in ("error", "warning"):
            self.problems.append(f"console {msg.type}: {msg.text}")

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _request(self, request) -> None:
        url = request.url
        if not (url.startswith(self.base) or url.startswith(("data:", "about:"))):
            self.problems.append(f"request outside the site: {url}")

    def check(self) -> None:
        assert not self.dialogs, self.dialogs
        assert not self.problems, self.problems


@pytest.fixture
def page(browser, site):
    _, base = site
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    w = Watched(context.new_page(), base)
    yield w
    w.check()
    context.close()


def shots_dir() -> Path:
    d = Path(os.environ.get("EVALKIT_SCREENSHOTS") or REPO / "reports" / "screenshots")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _rows(p) -> list[list[str]]:
    return p.eval_on_selector_all(
        "#session-table tbody tr",
        "trs => trs.map(tr => Array.from(tr.cells, td => td.textContent))",
    )


def _column(p, name: str) -> int:
    names = p.eval_on_selector_all("#session-table thead th", "ths => ths.map(t => t.textContent)")
    return names.index(name)


def test_index_sorts_filters_and_follows_a_row(page, site):
    _, base = site
    p = page.page
    p.goto(base + "index.html")
    assert p.text_content("#session-count") == "6 of 6 sessions"
    assert "sessions with at least one answered explore" in p.text_content("#corpus-line")
    col = _column(p, "tool_calls")
    p.click("#session-table th >> text=tool_calls")
    counts = [int(r[col]) for r in _rows(p)]
    assert counts == sorted(counts)
    p.click("#session-table th >> text=tool_calls")
    assert [int(r[col]) for r in _rows(p)] == sorted(counts, reverse=True)
    p.fill("#session-filter", "arm:new")
    assert p.text_content("#session-count") == "2 of 6 sessions"
    arm = _column(p, "arm")
    assert {r[arm] for r in _rows(p)} == {"new"}
    p.fill("#session-filter", "tool_calls>3 baseline")
    assert [r[0] for r in _rows(p)] == ["p1/ab-demo/run-baseline-1.jsonl"]
    # Any column of the sessions frame filters, shown or not; the column list shows more.
    p.fill("#session-filter", "answer_source:fallback")
    assert [r[0] for r in _rows(p)] == [f"-tmp-proj/{UUID}.jsonl"]
    p.fill("#session-filter", "cache_read_tokens>1000")
    assert [r[0] for r in _rows(p)] == ["codex/rollout-2026-01-01T00-00-00-demo.jsonl"]
    p.click("#column-picker summary")
    p.check("#column-list input[data-col=cache_read_tokens]")
    assert _rows(p)[0][_column(p, "cache_read_tokens")] == "2,100"
    p.fill("#session-filter", "tool_calls>3 baseline")
    p.click("#session-table tbody a")
    p.wait_for_url("**/sessions/*.html")
    assert p.text_content("h1") == "p1/ab-demo/run-baseline-1.jsonl"
    p.goto(base + "index.html")
    p.screenshot(path=str(shots_dir() / "index.png"))


def test_a_folded_result_expands_and_its_full_text_is_a_click_away(page, site):
    _, base = site
    p = page.page
    p.goto(base + session_file("p1/ab-demo/run-baseline-1.jsonl"))
    result = p.locator("#call-4 > details.result")
    assert result.get_attribute("open") is None
    pre = result.locator("pre.text")
    assert not pre.is_visible()
    result.locator("summary").click()
    assert pre.is_visible()
    assert pre.text_content().startswith("L" * 99)
    assert "30,000 chars" in result.locator("summary").text_content()
    p.screenshot(path=str(shots_dir() / "session.png"))
    with p.expect_navigation():
        result.locator("text=the full text").click()
    assert len(p.text_content("body")) == 30_000


def _panel_facts(p) -> dict[str, str]:
    """The session page's side panel as a person reads it: each term and its value."""
    panel = p.locator("dl").first
    terms, values = panel.locator("dt").all_inner_texts(), panel.locator("dd").all_inner_texts()
    return dict(zip(terms, values, strict=True))


def test_the_side_panel_shows_where_the_cost_comes_from(page, site):
    _, base = site
    p = page.page
    p.goto(base + session_file("p1/ab-demo/run-baseline-1.jsonl"))
    facts = _panel_facts(p)
    assert facts["cost from"] == "recorded" and facts["recorded cost (USD)"] == facts["cost (USD)"]
    p.goto(base + session_file("codex/rollout-2026-01-01T00-00-00-demo.jsonl"))
    facts = _panel_facts(p)
    assert "cost (USD)" not in facts
    assert "does not know the model example-model" in facts["not priced"]
    assert p.locator("dt", has_text="not priced").is_visible()


def test_a_citation_opens_the_section_it_credits(page, site):
    _, base = site
    p = page.page
    p.goto(base + session_file("p1/ab-demo/run-new-1.jsonl"))
    section = p.locator("#sec-1-2")
    assert not section.is_visible()  # inside the folded explore result
    p.click("#final-answer a.cite >> text=helper")
    assert p.url.endswith("#sec-1-2")
    assert section.is_visible() and section.get_attribute("open") is not None
    assert "cited by symbol helper" in section.locator("summary").text_content()
    assert "src/util.js" in section.locator("summary").text_content()


def test_a_deep_link_to_a_section_opens_its_call(page, site):
    _, base = site
    p = page.page
    p.goto(base + session_file("p1/ab-demo/run-new-1.jsonl") + "#sec-1-3")
    section = p.locator("#sec-1-3")
    assert section.is_visible()
    assert "uncited" in section.locator("summary").text_content()


def test_the_task_page_puts_the_arms_side_by_side(page, site):
    _, base = site
    p = page.page
    p.goto(base + session_file("p1/ab-demo/run-baseline-1.jsonl"))
    with p.expect_navigation():
        p.click("text=task page")
    assert p.text_content("h1") == "Task p1/demo"
    arms = p.eval_on_selector_all(".arm > h2", "hs => hs.map(h => h.textContent)")
    assert arms == ["baseline", "new", "hostile"]
    boxes = [p.locator(".arm").nth(i).bounding_box() for i in range(3)]
    assert boxes[0]["y"] == boxes[1]["y"] and boxes[0]["x"] < boxes[1]["x"]  # side by side
    first = p.locator(".arm").first.locator(".strip .tick")
    assert first.count() == 4
    with p.expect_navigation():
        first.nth(2).click()
    assert p.url.endswith("#call-3")
    assert p.text_content("h1") == "p1/ab-demo/run-baseline-1.jsonl"


def test_the_hostile_session_renders_as_text(page, site):
    _, base = site
    p = page.page
    p.goto(base + session_file("p1/ab-demo/run-hostile-1.jsonl"))
    body = p.text_content("body")
    assert HOSTILE_SCRIPT in body and "<img src=x onerror=alert(2)>" in body
    assert "javascript:alert(3)" in body
    assert p.eval_on_selector_all("img, iframe, object, embed", "els => els.length") == 0
    assert p.evaluate("document.scripts.length") == 1
    big = p.locator("#call-2 > details.result")
    big.locator("summary").click()
    assert big.locator("pre.text").is_visible()
    width = p.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280  # the 5 MB line wraps; the page does not grow sideways
    p.click("#expand-all")
    assert p.evaluate("document.documentElement.scrollWidth") <= 1280


def test_the_index_works_opened_from_disk(browser, site):
    out, _ = site
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    w = Watched(context.new_page(), out.as_uri())
    try:
        w.page.goto((out / "index.html").as_uri())
        assert w.page.text_content("#session-count") == "6 of 6 sessions"
        assert len(_rows(w.page)) == 6
        w.check()
    finally:
        context.close()


def test_an_index_of_10000_sessions_draws_one_page_of_rows(browser, tmp_path):
    from markupsafe import Markup

    from evalkit.outputs.html.render import asset, render, script_json

    n = 10_000
    data = {
        "columns": ["log", "arm", "efficiency"],
        "shown": [0, 1, 2],
        "kinds": ["label", "label", "fraction"],
        "meanings": ["", "", ""],
        "rows": [[f"s/run-{i}.jsonl", "new" if i % 2 else "baseline", i / n] for i in range(n)],
        "links": [f"sessions/{i}.html" for i in range(n)],
    }
    (tmp_path / "assets").mkdir()
    for name in ("report.js", "report.css"):
        (tmp_path / "assets" / name).write_bytes(asset(name))
    html = render(
        "index.html.j2", title="big", root="", page_class="index", heading="big", notes=[],
        corpus_line="", toc=[], blocks=[], session_data=Markup(script_json(data)),
    )  # fmt: skip
    (tmp_path / "index.html").write_text(html, encoding="utf-8")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    w = Watched(context.new_page(), tmp_path.as_uri())
    try:
        p = w.page
        p.goto((tmp_path / "index.html").as_uri())
        assert p.text_content("#session-count") == "10000 of 10000 sessions"
        assert p.locator("#session-table tbody tr").count() == 50
        assert p.text_content("#page-info") == "page 1 of 200"
        p.click("#session-table th >> text=efficiency")
        p.click("#session-table th >> text=efficiency")
        assert _rows(p)[0] == ["s/run-9999.jsonl", "new", "100.0%"]
        p.click("#page-next")
        assert p.text_content("#page-info") == "page 2 of 200"
        p.fill("#session-filter", "arm:baseline efficiency<0.001")
        assert p.text_content("#session-count") == "5 of 10000 sessions"
        w.check()
    finally:
        context.close()
