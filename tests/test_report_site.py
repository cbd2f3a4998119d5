"""The static report (`evalkit.outputs.html.site` and `pages`, `evalkit report`, `evalkit view`,
`evalkit pairs report --html`, `session.view()`): what each page holds, determinism, sizes,
hostile input, and the folder rules."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

import evalkit
from evalkit.cli import main
from evalkit.outputs.html.pages import PREVIEW_CHARS, session_file
from evalkit.outputs.html.site import ReportOptions, write_report
from tests.harbor_helpers import build_harbor_corpus
from tests.report_helpers import (
    HOSTILE_MB,
    HOSTILE_SCRIPT,
    build_report_corpus,
)

EVIDENCE = Path(__file__).resolve().parent.parent / "data" / "evidence"
NO_CACHE = ReportOptions(cache=False, jobs=1)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = build_report_corpus(tmp_path_factory.mktemp("corpus") / "c", hostile=True)
    out = tmp_path_factory.mktemp("out") / "site"
    written = write_report(root, out, NO_CACHE)
    return root, out, written


def _index_data(out: Path) -> dict:
    html = (out / "index.html").read_text(encoding="utf-8")
    block = re.search(
        r'<script type="application/json" id="session-data">(.*?)</script>', html, re.S
    )
    return json.loads(block.group(1))


def test_one_page_per_session_and_per_task(report):
    root, out, written = report
    assert written.sessions == 6 and written.tasks == 3 and not written.unreadable
    data = _index_data(out)
    assert len(data["rows"]) == 6
    # Every column of the sessions frame is in the data; the usual ones are shown.
    assert {"answer_source", "residual_read", "cache_read_tokens"} <= set(data["columns"])
    shown = [data["columns"][i] for i in data["shown"]]
    assert shown[:4] == ["log", "agent", "kind", "group"] and "answer_source" not in shown
    for link in data["links"]:
        assert (out / link).is_file()
    logs = [row[0] for row in data["rows"]]
    assert "codex/rollout-2026-01-01T00-00-00-demo.jsonl" in logs
    assert any(log.startswith("-tmp-proj/") for log in logs)
    tasks = sorted(f"tasks/{p.name}" for p in (out / "tasks").iterdir())
    assert tasks == sorted(f for f in written.files if f.startswith("tasks/"))
    assert len(tasks) == 3


def test_index_holds_the_corpus_line_tables_figures_and_every_file(report):
    root, out, _ = report
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "sessions with at least one answered explore" in html
    assert "Allocation efficiency per session, by slice" in html
    assert "Arms — per-session efficiency by pass / repo" in html
    assert "Other agents, per agent and arm" in html
    # Figures inline, with no inline style the page's policy would refuse.
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
    assert len(svgs) >= 3
    assert not any(" style=" in s or "<style" in s for s in svgs)
    # Every file of the tree, with what became of it.
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    accounted = re.search(r'id="files".*?</section>', html, re.S).group(0)
    for f in files:
        assert f">{f}<" in accounted.replace("&#34;", '"'), f


def test_session_page_shows_the_timeline_and_the_row(report):
    root, out, _ = report
    page = (out / session_file("p1/ab-demo/run-baseline-1.jsonl")).read_text(encoding="utf-8")
    assert 'id="call-1"' in page and 'id="call-4"' in page
    assert 'id="sec-1-1"' in page and "cited by path" in page
    assert "cited by symbol <code>helper</code>" in page and "uncited" in page
    assert 'href="#sec-1-1">src/app.js</a>' in page
    assert "subagent thread started by call #2" in page
    assert "context compacted" in page
    # The run status is the sessions frame's (how the run ended), as every page shows it.
    frame = evalkit.load_corpus(root, cache=False, jobs=1).sessions_df().set_index("log")
    status = frame.loc["p1/ab-demo/run-baseline-1.jsonl", "status"]
    assert status in ("ok", "agent_error", "unknown")
    assert f"<dt>status</dt><dd>{status}</dd>" in page
    assert "<dt>arm</dt><dd>baseline</dd>" in page
    # Where its cost comes from: the log's recorded cost, and the tokens priced beside it.
    assert "<dt>cost from</dt><dd>recorded</dd>" in page
    assert "<dt>recorded cost (USD)</dt>" in page


def test_a_session_page_says_why_a_cost_is_unknown(report):
    root, out, _ = report
    # The fixture's Codex rollout names a model the price table does not know, and its
    # interactive log names none: each page says why it has no cost, never a 0.
    for log, reason in (
        ("codex/rollout-2026-01-01T00-00-00-demo.jsonl", "does not know the model example-model"),
        ("-tmp-proj/3f9a6c1d-0b2e-4d7a-8c55-91e2f4b7a631.jsonl", "the log does not name the model"),
    ):
        page = (out / session_file(log)).read_text(encoding="utf-8")
        assert "<dt>cost from</dt>" not in page and "<dt>cost (USD)</dt>" not in page
        assert re.search(r"<dt>not priced</dt><dd>[^<]*" + re.escape(reason), page)


def test_a_long_result_is_folded_with_its_full_text_a_click_away(report):
    _, out, _ = report
    page_name = session_file("p1/ab-demo/run-hostile-1.jsonl")
    page = (out / page_name).read_text(encoding="utf-8")
    assert len(page) < 200_000  # the 5 MB line is not on the page
    assert f"showing the first {PREVIEW_CHARS:,} of {HOSTILE_MB + len(HOSTILE_SCRIPT):,}" in page
    txt = out / page_name.removesuffix(".html") / "call-2.txt"
    text = txt.read_text(encoding="utf-8-sig")
    assert len(text) == HOSTILE_MB + len(HOSTILE_SCRIPT)
    assert f'href="{txt.parent.name}/call-2.txt"' in page


class _Tags(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_hostile_strings_are_text_on_every_page(report):
    _, out, _ = report
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        parser = _Tags()
        parser.feed(html)
        for tag, attrs in parser.tags:
            assert tag not in ("img", "iframe", "object", "embed", "base", "form"), page
            assert not [a for a in attrs if a.startswith("on")], (page, tag, attrs)
            for name in ("href", "src", "action"):
                assert not (attrs.get(name) or "").lower().startswith("javascript"), page
            if tag == "script":
                assert attrs.get("src") or attrs.get("type") == "application/json"
        assert "\u202e" not in html and "\ud800" not in html
    page = (out / session_file("p1/ab-demo/run-hostile-1.jsonl")).read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "admin&lt;U+202E&gt; gnp.exe" in page


def test_the_report_is_deterministic_and_names_no_machine_path(report, tmp_path):
    root, out, _ = report
    again = write_report(root, tmp_path / "again", NO_CACHE)
    for rel in again.files:
        a, b = (out / rel).read_bytes(), (tmp_path / "again" / rel).read_bytes()
        assert a == b, rel
        assert str(root).encode() not in a and str(tmp_path).encode() not in a


def test_evalkit_report_writes_and_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    root = build_report_corpus(tmp_path / "c")
    out = tmp_path / "out"
    assert main(["report", str(root), "--to", str(out), "--no-cache", "-j", "1"]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"wrote {out}/index.html: 5 session pages, 3 task pages")
    assert main(["report", str(root), "--to", str(out), "--no-cache", "-j", "1"]) == 0
    capsys.readouterr()
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.md").write_text("mine")
    assert main(["report", str(root), "--to", str(other), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "keep.md" in err and "did not write" in err
    assert sorted(p.name for p in other.iterdir()) == ["keep.md"]


def test_evalkit_report_prices_with_the_users_prices(tmp_path, capsys):
    root = build_report_corpus(tmp_path / "c")
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."example-model"]\ninput = 2.0\noutput = 8.0\n', "utf-8")
    out = tmp_path / "out"
    args = ["report", str(root), "--to", str(out), "--no-cache", "-j", "1", "--prices"]
    assert main([*args, str(prices)]) == 0
    capsys.readouterr()
    page = (out / session_file("codex/rollout-2026-01-01T00-00-00-demo.jsonl")).read_text("utf-8")
    assert "<dt>cost from</dt><dd>priced</dd>" in page and "<dt>not priced</dt>" not in page
    assert main([*args, str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.toml" in err


def test_trial_report_has_the_outcome_table_and_task_pages(tmp_path):
    csv = build_harbor_corpus(tmp_path / "runs")
    out = tmp_path / "out"
    code = main(
        ["report", str(tmp_path / "runs"), "--to", str(out), "--layout", "harbor",
         "--profile", "sourcegraph", "--outcomes", str(csv), "--no-cache", "-j", "1"]
    )  # fmt: skip
    assert code == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "Outcomes per task — mcp against baseline (helps / hurts / tie)" in index
    assert "Read allocation per arm" in index
    pages = sorted((out / "tasks").glob("t1-*.html"))
    assert len(pages) == 1
    task = pages[0].read_text(encoding="utf-8")
    assert "Outcome: helps" in task
    # The per-arm table: t1's rewards are 0, 1 for baseline and 1, 1 for mcp.
    assert "<h3>Per arm</h3>" in task
    assert '<td>baseline</td><td class="num">2</td><td>1 of 2</td>' in task
    assert '<td>mcp</td><td class="num">2</td><td>2 of 2</td>' in task
    assert task.count('class="arm"') == 2
    assert 'class="tick fam-' in task and "#call-1" in task


def test_evalkit_view_serves_on_loopback_and_cleans_up(tmp_path, capsys, monkeypatch):
    import evalkit.outputs.html.serve as serve

    root = build_report_corpus(tmp_path / "c")
    made = {}

    def fake_server(folder, port=0):
        server = real(folder, port)
        made["folder"] = Path(folder)
        made["index"] = (Path(folder) / "index.html").is_file()

        def stop():
            raise KeyboardInterrupt

        server.serve_forever = stop
        return server

    real = serve.make_server
    monkeypatch.setattr(serve, "make_server", fake_server)
    assert main(["view", str(root), "--no-cache", "-j", "1"]) == 0
    out = capsys.readouterr().out
    assert re.match(r"serving the report of 5 sessions at http://127\.0\.0\.1:\d+/ ", out)
    assert made["index"] and not made["folder"].exists()


def test_pairs_report_html_writes_the_per_pair_page(tmp_path, capsys):
    evidence = str(EVIDENCE / "host-policy-2026-10-17.json")
    assert main(["pairs", "report", evidence]) == 0
    text = capsys.readouterr().out
    out = tmp_path / "pairs"
    assert main(["pairs", "report", evidence, "--html", str(out)]) == 0
    assert capsys.readouterr().out == text
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<h3>Per pair</h3>" in page and "Deltas (candidate minus baseline)" in page
    assert page.count("<h2>Task ") == 3
    assert page.count('class="arm"') == 6
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("mine")
    assert main(["pairs", "report", evidence, "--html", str(tmp_path / "mine")]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"evalkit pairs: --html {tmp_path / 'mine'}: holds files")
        and "notes.md" in err
    )


def test_session_view_in_a_notebook(report, tmp_path):
    import evalkit

    root, _, _ = report
    corpus = evalkit.load_corpus(root, cache=False, jobs=1)
    for log in ("p1/ab-demo/run-new-1.jsonl", "codex/rollout-2026-01-01T00-00-00-demo.jsonl"):
        v = corpus.session(log).view()
        frame = v._repr_html_()
        assert frame.startswith('<iframe sandbox="allow-scripts" ')
        assert "<script" not in frame  # the page is inside srcdoc, escaped
        assert "&lt;script&gt;" in frame
        saved = v.save(tmp_path / "one.html")
        assert saved.read_text(encoding="utf-8") == v.html


def test_a_report_of_an_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    written = write_report(tmp_path / "empty", tmp_path / "out", NO_CACHE)
    assert written.sessions == 0
    assert (
        "0 sessions with at least one answered explore"
        in (tmp_path / "out" / "index.html").read_text()
    )
    shutil.rmtree(tmp_path / "out")


def test_notebook_session_pages_are_written_and_linked(report, tmp_path):
    import evalkit
    import evalkit.notebook as nb

    root, _, _ = report
    corpus = evalkit.load_corpus(root, cache=False, jobs=1)
    logs = ["p1/ab-demo/run-new-1.jsonl", "p1/ab-demo/run-baseline-1.jsonl"]
    pages = nb.session_pages(corpus, logs, tmp_path / "pages")
    assert [log for log, _ in pages.pages] == logs
    for _, page in pages.pages:
        html = page.read_text(encoding="utf-8")
        assert "sha256-" in html and 'id="call-1"' in html
    assert repr(pages).splitlines()[0].startswith("p1/ab-demo/run-new-1.jsonl → ")
    assert pages._repr_html_().count("<a href=") == 2
    nb.session_pages(corpus, logs[:1], tmp_path / "pages")  # replaces what it wrote before
    written = sorted(p.name for p in (tmp_path / "pages").iterdir())
    assert written == sorted([pages.pages[0][1].name, "evalkit-report.json"])


def test_a_long_input_links_its_full_text(tmp_path):
    from evalkit.outputs.html.pages import long_texts, session_page
    from evalkit.outputs.html.timeline import Call, Entry, Timeline

    big = "y" * 50_000
    call = Call(1, "Write", "edit", big, "ok", 2, 0.7, False, "main")
    t = Timeline("a.jsonl", "claude-code", "headless", (Entry("call", call=call),), (), "none")
    assert long_texts(t) == [("call-1-input.txt", big)]
    page = session_page(t, text_href=lambda name: f"a/{name}")
    assert f"showing the first {PREVIEW_CHARS:,} of 50,000 characters" in page
    assert 'href="a/call-1-input.txt"' in page
    assert len(page) < 20_000


def test_pages_are_in_plain_words(report):
    from tests.test_plain_words import spec_words

    _, out, _ = report
    for page in out.rglob("*.html"):
        text = re.sub(r"<svg\b.*?</svg>|<[^>]+>", " ", page.read_text(encoding="utf-8"), flags=re.S)
        assert not spec_words(text), (page.name, spec_words(text))


def test_inspect_samples_get_their_pages(tmp_path):
    pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
    from tests.agent_builders import two_sample_log

    (tmp_path / "c" / "inspect").mkdir(parents=True)
    two_sample_log(tmp_path / "c" / "inspect" / "two.json")
    written = write_report(tmp_path / "c", tmp_path / "out", NO_CACHE)
    assert written.sessions == 2 and not written.unreadable
    page = (tmp_path / "out" / session_file("inspect/two.json#q-001:1")).read_text("utf-8")
    assert "inspect · inspect" in page and 'id="call-1"' in page
