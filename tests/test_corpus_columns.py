"""The column dictionary (evalkit/store/columns.py): every frame is built from it, exactly.

A frame with a column the dictionary lacks cannot be built (`build_frame` refuses the key), and
a declared column that no row builder fills fails here; missing values are <NA>.
"""

from __future__ import annotations

import numpy as np
import pytest

import evalkit
from evalkit.corpus.frames import FRAME_NAMES
from evalkit.paths import bundled_corpus
from evalkit.store.columns import FRAMES, IDENTITY
from evalkit.sweep import run_sweep

ID_NAMES = [c.name for c in IDENTITY]


@pytest.fixture(scope="module")
def bundled():
    return evalkit.load_corpus(bundled_corpus(), cache=False)


@pytest.fixture(scope="module")
def swept():
    return run_sweep(bundled_corpus(), cache=False)


def test_missing_means_missing():
    from evalkit.store.columns import build_frame

    df = build_frame("sessions", [{"log": "a", "efficiency": float("nan"), "success": None}])
    assert df["efficiency"].dtype == "Float64" and df["efficiency"].isna().all()
    assert str(df["success"].dtype) == "boolean" and df["success"].isna().all()
    assert df["group"].isna().all()  # build_frame never invents a value
    with pytest.raises(ValueError, match="undeclared"):
        build_frame("calls", [{"log": "a", "bucket": "x"}])


# Values of every kind a row may hold where a column is declared: the right type, None and NaN,
# and the wrong ones (a bool as a count, a float as a count, a number as a text, numpy scalars,
# an int too large for Arrow, a lone surrogate).
_ODD_VALUES = {
    "Int64": [[1, None, 7], [True, 2], [3.0, None], [np.int64(4), 5], [3.5], [2**63], [1, "2"]],
    "Float64": [[0.5, None, float("nan")], [1, 2.5], [True, 0.5], [np.float64(0.25)], [2**70]],
    "boolean": [[True, None, False], [1, 0], [np.bool_(True)], [0.0, 1.0], ["yes"]],
    "string": [["a", None, "b\ud800c"], [1, "x"], ["caf\u00e9", "\\"], [b"x"]],
}


def _table_or_error(build):
    try:
        return build()
    except Exception as e:  # noqa: BLE001 — what each builder refuses is compared
        return type(e)


@pytest.mark.parametrize(("dtype", "values"), [(t, v) for t, vs in _ODD_VALUES.items() for v in vs])
def test_a_frame_files_table_holds_what_the_frame_holds(dtype, values):
    """`arrow_table` (the stored rows' tables, built without pandas) gives exactly the table of
    `build_frame`'s frame, or refuses what it refuses, for values of any type."""
    import pyarrow as pa

    from evalkit.store.columns import arrow_table, build_frame, columns_of

    frame = "sessions"
    col = next(c for c in columns_of(frame)[len(IDENTITY) :] if c.dtype == dtype)
    rows = [{"log": f"s{i}", col.name: v} for i, v in enumerate(values)]
    fast = _table_or_error(lambda: arrow_table(frame, rows))
    slow = _table_or_error(
        lambda: pa.Table.from_pandas(build_frame(frame, rows), preserve_index=False)
    )
    if isinstance(slow, type):  # both refuse (not necessarily with the same error)
        assert isinstance(fast, type), (fast, slow)
    else:
        assert fast.equals(slow.replace_schema_metadata(None)), (fast, slow)


def test_frames_follow_the_dictionary_both_ways(bundled, swept):
    built = {name: bundled.frame(name) for name in FRAME_NAMES}
    built |= {"sweep_sessions": swept.sessions_frame(), "sweep_calls": swept.calls_frame()}
    for name, cols in FRAMES.items():
        df = built[name]
        assert list(df.columns) == [c.name for c in cols], name
        assert [str(t) for t in df.dtypes] == [c.dtype for c in cols], name


def test_a_frame_with_an_undeclared_or_missing_column_fails_the_check(bundled):
    df = bundled.frame("calls")
    declared = [c.name for c in FRAMES["calls"]]
    assert list(df.assign(extra=1).columns) != declared
    assert list(df.drop(columns="efficiency").columns) != declared


def test_row_builders_fill_every_declared_column_and_no_other(bundled, swept):
    # build_frame refuses an undeclared key; this catches the other direction: a declared
    # column no builder fills (it would be <NA> everywhere without anyone noticing).
    from evalkit.corpus.frames import session_rows
    from evalkit.corpus.pricing import PRICED_COLUMNS

    headless = bundled.session("cg22/ab-express/run-baseline-1.jsonl")
    rows = session_rows(headless)
    # Outcomes are joined when a corpus is loaded, never built with a session's rows (issue 23).
    joined = {"outcome_source", "outcome_ref"}
    for name in FRAME_NAMES:
        keys = set(ID_NAMES) - {"question"} | {k for r in rows[name] for k in r}
        # The priced cost is added when frames are built, never with the rows (issue 27).
        priced = set(PRICED_COLUMNS.get(name, ())) - {"cost_usd"}
        added = (joined if name == "sessions" else set()) | priced
        assert keys | added == {c.name for c in FRAMES[name]}
        assert not keys & joined, name
        assert not keys & priced, name
    for name, df in (
        ("sweep_sessions", swept.sessions_frame()),
        ("sweep_calls", swept.calls_frame()),
    ):
        filled = {c for c in df.columns if df[c].notna().any()}
        declared = {c.name for c in FRAMES[name]}
        # suite / task / trial come only from a trial layout (harbor); the bundled corpus has none.
        unfilled = {"reason", "question", "suite", "task", "trial"}
        assert filled <= declared and declared - filled <= unfilled, name


def _naive_columns(names, rows):
    return {name: [r.get(name) for r in rows] for name in names}


def test_column_values_are_each_rows_value_whatever_the_rows_shapes():
    """Rows are turned into columns a run of one shape at a time: the values are exactly the
    cell-by-cell ones, for runs, alternating shapes (read cell by cell), missing keys, keys in
    another order, and no rows."""
    import random

    from evalkit.store.columns import Column, column_values

    rng = random.Random(7)
    names = ["a", "b", "kind", "c"]
    cols = [Column(n, "string", "", "") for n in names]
    values = [None, 0, "", "x", "é", "\udcff", 3, 2.5, False]
    shapes = [("a", "b", "c"), ("a", "b", "c", "kind"), ("c", "a", "b"), ("a",), (), ("b", "z")]
    for case in range(200):
        # a few long runs (the usual rows) or one shape per row (the fallback)
        runs = rng.choice([1, 2, 3, 60])
        rows = []
        for _ in range(rng.randrange(0, 120)):
            if not rows or rng.randrange(runs) == 0:
                shape = rng.choice(shapes)
            rows.append({k: rng.choice(values) for k in shape})
        got = column_values(cols, rows)
        assert got == _naive_columns(names, rows), case
        assert all(len(v) == len(rows) for v in got.values())


@pytest.mark.parametrize(
    ("name", "dtype"), [("log", "string"), ("arm", "string"), ("answer_source", "string")]
)
def test_a_columns_stored_values_skip_the_escapes_only_when_none_applies(name, dtype):
    """A column of ASCII texts is stored as it is, with no step per value; a text or a name
    that needs its escape (a lone surrogate, a name's backslash), or a value that is no text,
    still gets what `stored_text` and `name_text` give it."""
    from evalkit.store.columns import NAME_COLUMNS, Column, _values, name_text, stored_text

    c = Column(name, dtype, "", "")
    one = name_text if name in NAME_COLUMNS else stored_text

    def slow(values):
        if name in NAME_COLUMNS:
            return [name_text(v) if type(v) is str else v for v in values]
        return [stored_text(v) for v in values]

    for values in (
        ["a", None, "b/c.jsonl", ""],
        ["a", "caf\udce9", None],
        ["a\\b", "c"],
        ["é", "x"],
        ["a", 3, None],
        [None, None],
        [],
    ):
        assert _values(c, values) == slow(values), values
    assert one("caf\udce9") != "caf\udce9"  # the case the fast path must not take
