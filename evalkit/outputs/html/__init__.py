"""The static HTML report: a corpus as pages a colleague opens without Python or a server.

* `timeline` — one session (Claude Code headless or interactive, Codex, Inspect) as the steps
  its page shows
* `render` — the Jinja2 templates, safe JSON for the page's script, CSP-safe inline SVG figures
* `pages` — the session page, the task pages and the tables they are made of
* `site` — `write_report(DIR, OUT)`: the index, and every page written
* `writer` — the one place a report file is written (`SiteWriter.write`)
* `serve` — `evalkit view`: the report served on 127.0.0.1 only
* `pairs` — the per-pair page of a paired-evidence file (`evalkit pairs report FILE --html OUT`)
* `notebook` — a session page inline in a notebook (`corpus.session(log).view()`)
"""
