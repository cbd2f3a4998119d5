"""The price table's answers kept in the store (evalkit.store.price_memo, issue 22).

A warm load prices every ledger again from the table's answers kept beside the store's
sessions, so it never imports the table; a damaged or foreign file of answers is ignored and
written again; `evalkit cache clear` removes it with the rest of the store.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

import evalkit
from evalkit.corpus.pricing import PRICED_COLUMNS
from evalkit.store.admin import cache_info, clear_cache
from evalkit.store.price_memo import PRICES_FILE
from tests.test_pricing import rollout

REPO = Path(__file__).resolve().parent.parent


def _corpus(root: Path) -> Path:
    """Rollouts of models the table knows, on two sides of a price change, and one it does
    not know."""
    (root / "codex").mkdir(parents=True)
    for i, (model, day) in enumerate(
        [
            ("gpt-5-codex", None),
            ("o3", "2025-06-09"),
            ("o3", "2025-06-10"),
            ("example-model", None),
        ]
    ):
        rollout(root / f"codex/rollout-{i}.jsonl", model, day)
    return root


def _priced(corpus) -> dict[str, pd.DataFrame]:
    return {f: corpus.frame(f)[["log", *cols]] for f, cols in PRICED_COLUMNS.items()}


def _memo_files(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if PRICES_FILE.match(p.name)]


def _same_prices(got: dict[str, pd.DataFrame], want: dict[str, pd.DataFrame]) -> None:
    for frame in PRICED_COLUMNS:
        pd.testing.assert_frame_equal(got[frame], want[frame], check_exact=True)


def test_a_warm_load_prices_from_the_stored_answers_and_never_imports_the_table(tmp_path):
    root, cache = _corpus(tmp_path / "c"), tmp_path / "cache"
    want = _priced(evalkit.load_corpus(root, cache=False, jobs=1))
    _same_prices(_priced(evalkit.load_corpus(root, cache_dir=cache, jobs=1)), want)
    assert len(_memo_files(cache)) == 1
    script = (
        "import sys, evalkit\n"
        f"c = evalkit.load_corpus({str(root)!r}, cache_dir={str(cache)!r}, jobs=1)\n"
        "c.sessions_df(); c.models_df()\n"
        "print(c.cache_hits, 'genai_prices' in sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert run.stdout.split() == ["4", "False"]
    _same_prices(_priced(evalkit.load_corpus(root, cache_dir=cache, jobs=1)), want)
    # The file is one of the store's: listed, never foreign, and cleared with it.
    assert cache_info(cache).foreign == ()
    clear_cache(cache)
    assert _memo_files(cache) == []


def test_a_damaged_or_foreign_file_of_answers_is_ignored_and_written_again(tmp_path):
    root, cache = _corpus(tmp_path / "c"), tmp_path / "cache"
    want = _priced(evalkit.load_corpus(root, cache=False, jobs=1))
    evalkit.load_corpus(root, cache_dir=cache, jobs=1)
    (memo,) = _memo_files(cache)
    good = json.loads(memo.read_bytes())
    other = {**good, "table": "genai-prices 0.0.1:1:1"}  # another table's answers
    wrong = {**good, "keys": {k: 10**6 for k in good["keys"]}}  # answers that are not there
    for damage in (b"{not json", b"", json.dumps(other).encode(), json.dumps(wrong).encode()):
        memo.write_bytes(damage)
        _same_prices(_priced(evalkit.load_corpus(root, cache_dir=cache, jobs=1)), want)
        assert json.loads(memo.read_bytes()) == good  # written again, whole
    # A price that is not a price is refused as a whole file, never read as a price.
    rates = [dict(r, unit={**r["unit"], "input": 3}) for r in good["rates"]]
    memo.write_text(json.dumps({**good, "rates": rates}), encoding="utf-8")
    _same_prices(_priced(evalkit.load_corpus(root, cache_dir=cache, jobs=1)), want)
    assert json.loads(memo.read_bytes()) == good


def test_user_prices_are_never_kept(tmp_path):
    root, cache = _corpus(tmp_path / "c"), tmp_path / "cache"
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."example-model"]\ninput = 2.0\noutput = 8.0\n', "utf-8")
    want = _priced(evalkit.load_corpus(root, cache=False, jobs=1, prices=prices))
    got = _priced(evalkit.load_corpus(root, cache_dir=cache, jobs=1, prices=prices))
    _same_prices(got, want)
    (memo,) = _memo_files(cache)
    assert "example-model" not in {
        k.split("\x1f")[0] for k in json.loads(memo.read_bytes())["keys"]
    }
    # ... and another prices file is used at once, the table's answers still read
    prices.write_text('[models."example-model"]\ninput = 4.0\noutput = 8.0\n', "utf-8")
    again = _priced(evalkit.load_corpus(root, cache_dir=cache, jobs=1, prices=prices))
    s = again["sessions"].set_index("log")["priced_cost_usd"]
    w = want["sessions"].set_index("log")["priced_cost_usd"]
    assert s["codex/rollout-3.jsonl"] > w["codex/rollout-3.jsonl"]
    assert s.drop("codex/rollout-3.jsonl").equals(w.drop("codex/rollout-3.jsonl"))


def test_a_cold_load_imports_the_table_while_it_parses_and_a_warm_one_never(tmp_path, monkeypatch):
    """The price table is imported at the first parsed session naming a model, not after the
    parse, where this process would do it alone; never when the store's answers are kept, or
    when the user gives prices (which may name every model)."""
    import evalkit.corpus.load as load

    root, cache = _corpus(tmp_path / "c"), tmp_path / "cache"
    want = _priced(evalkit.load_corpus(root, cache=False, jobs=1))
    steps: list[str] = []
    real_price = load.price_frames
    monkeypatch.setattr(load, "load_price_table", lambda: steps.append("table"))
    monkeypatch.setattr(
        load, "price_frames", lambda *a, **k: (steps.append("price"), real_price(*a, **k))
    )

    def loaded(**options) -> list[str]:
        steps.clear()
        corpus = evalkit.load_corpus(root, jobs=1, **options)
        if "prices" not in options:
            _same_prices(_priced(corpus), want)
        return list(steps)

    assert loaded(cache=False) == ["table", "price"]
    assert loaded(cache_dir=cache) == ["table", "price"]  # cold
    assert loaded(cache_dir=cache) == ["price"]  # warm: the answers are kept
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."example-model"]\ninput = 2.0\noutput = 8.0\n', "utf-8")
    assert loaded(cache=False, prices=prices) == ["price"]
    # A large corpus imports it once its frames are assembled (the table would add to the peak)
    monkeypatch.setattr(load, "PRICE_TABLE_AHEAD", 3)  # this corpus has 4 sessions
    assert loaded(cache=False) == ["price"]
