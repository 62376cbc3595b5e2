"""Meta-features: a hand-built table with every value counted by hand, a naive reference on random
tables, the validated path, and the shipped table of the published datasets."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench import metafeatures
from encbench.data import load_dataset
from encbench.metafeatures import (
    DISTANCE_FEATURES, PUBLISHED_COLUMNS, MetaFeatures, comparison_table, compute, from_dataset,
    from_frame, published_metafeatures, published_record,
)


def _hand_table() -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    # colour: levels red x3, blue x1, green x1 (one missing) -> 3 levels, 2 seen once
    # city:   levels a x2, b x2, c x1, d x1              -> 4 levels, 2 seen once
    # size, weight: numeric; weight has 2 missing
    X = pd.DataFrame({
        "colour": ["red", "red", "red", "blue", "green", None],
        "size": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        "city": ["a", "a", "b", "b", "c", "d"],
        "weight": [1.0, None, 3.0, None, 5.0, 6.0],
    })
    return X, np.array([1, 0, 0, 0, 1, 0]), ["colour", "city"]


def test_hand_built_table():
    X, y, categorical = _hand_table()
    mf = compute(X, y, categorical)
    assert mf == MetaFeatures(task="binary", n_rows=6, n_categorical=2, n_numeric=2,
                              max_cardinality=4, median_cardinality=3.5,
                              singleton_share=4 / 7,  # (2 + 2) singletons of (3 + 4) levels
                              missing_share=3 / 24,  # one colour, two weights of 6 x 4 cells
                              minority_share=2 / 6, target_spread=None)
    assert list(mf.vector().index) == list(DISTANCE_FEATURES["binary"])
    assert mf.vector()["singleton_share"] == pytest.approx(4 / 7)


def test_no_categorical_column_and_odd_median():
    X = pd.DataFrame({"a": ["x", "y", "z", "x"], "b": ["p", "p", "q", "q"], "c": ["u", "u", "u", "v"],
                      "n": [1, 2, 3, 4]})
    mf = compute(X, [0, 1, 0, 1], ["a", "b", "c"])
    assert (mf.max_cardinality, mf.median_cardinality) == (3, 2.0)
    assert mf.singleton_share == pytest.approx(3 / 7)  # y, z of a; v of c
    none = compute(X[["n"]], [0, 1, 0, 1], [])
    assert (none.n_categorical, none.max_cardinality, none.median_cardinality, none.singleton_share) == (0, 0, 0.0, 0.0)


def _naive(X: pd.DataFrame, y, categorical) -> dict:
    levels = []
    for c in categorical:
        seen = {}
        for v in X[c]:
            if isinstance(v, str):
                seen[v] = seen.get(v, 0) + 1
        levels.append(seen)
    sizes = sorted(len(s) for s in levels)
    mid = len(sizes) // 2
    median = (sizes[mid] if len(sizes) % 2 else (sizes[mid - 1] + sizes[mid]) / 2) if sizes else 0
    total = sum(sizes)
    once = sum(1 for s in levels for n in s.values() if n == 1)
    missing = sum(1 for c in X.columns for v in X[c] if v is None or (isinstance(v, float) and v != v))
    positives = sum(int(v) for v in y)
    return {"max_cardinality": max(sizes, default=0), "median_cardinality": median,
            "singleton_share": once / total if total else 0.0,
            "missing_share": missing / (X.shape[0] * X.shape[1]),
            "minority_share": min(positives, len(y) - positives) / len(y)}


@pytest.mark.parametrize("seed", range(5))
def test_random_tables_match_a_naive_count(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 200))
    X = pd.DataFrame({
        f"c{i}": pd.Series([None if rng.random() < 0.1 else f"L{rng.integers(0, k)}" for _ in range(n)],
                           dtype=object)
        for i, k in enumerate(rng.integers(2, 60, size=int(rng.integers(1, 5))))
    })
    X["num"] = np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n))
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    categorical = [c for c in X.columns if c != "num"]
    got = compute(X, y, categorical).as_dict()
    for name, value in _naive(X, y, categorical).items():
        assert got[name] == pytest.approx(value), name


def test_bad_input_names_the_value():
    X, y, categorical = _hand_table()
    with pytest.raises(ValueError, match="'nope'"):
        compute(X, y, ["nope"])
    with pytest.raises(ValueError, match="5 values for 6 rows"):
        compute(X, y[:5], categorical)
    with pytest.raises(ValueError, match="task 'regression'"):
        compute(X, y, categorical, task="regression")
    with pytest.raises(ValueError, match="two classes: got 1"):
        compute(X, np.zeros(6), categorical)


def test_from_frame_validates_as_the_protocol():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"colour": rng.choice(["r", "g", "b"], 40).astype(object),
                          "x": rng.normal(size=40), "label": np.tile(["no", "yes", "no", "no"], 10)})
    frame.loc[0, "label"] = None  # rows without a target are dropped before counting
    mf = from_frame(frame, "label")
    assert (mf.n_rows, mf.n_categorical, mf.n_numeric) == (39, 1, 1)
    assert mf.minority_share == pytest.approx(10 / 39)
    with pytest.raises(ValueError, match="target column 'nope' not in"):
        from_frame(frame, "nope")


def test_from_dataset_on_a_bundled_copy_matches_the_shipped_row():
    mf = from_dataset(load_dataset("bundled:credit-g"))
    row = published_metafeatures().set_index("dataset").loc["31"]
    for name, value in mf.as_dict().items():
        if name == "task":
            assert row[name] == value
        elif value is not None:
            assert row[name] == pytest.approx(value, rel=1e-5), name
    assert (mf.n_rows, mf.n_categorical, mf.n_numeric, mf.minority_share) == (1000, 13, 7, 0.3)


def test_published_table_covers_the_fifty_and_says_where_each_row_comes_from():
    table = published_metafeatures()
    assert list(table.columns) == list(PUBLISHED_COLUMNS)
    assert len(table) == 50 and table["dataset"].is_unique
    complete = published_metafeatures(complete=True)
    assert len(complete) == 27
    assert complete["source"].str.contains("file").all()
    partial = table[table["n_rows"].notna() & table["n_categorical"].isna()]
    assert set(partial["name"]) == {"profb", "thoracic-surgery", "cylinder-bands", "dresses-sales"}
    assert partial["source"].str.startswith("fingerprint only").all()
    missing = table[table["n_rows"].isna()]
    assert len(missing) == 19 and missing["source"].str.startswith("not available").all()


def test_published_record_and_comparison_table():
    X, y, categorical = _hand_table()
    mf = compute(X, y, categorical)
    row = published_record("9", "nine", mf, "test")
    assert list(row) == list(PUBLISHED_COLUMNS) and row["n_rows"] == 6
    partial = published_record("8", "eight", None, "fp", n_rows=10, minority_share=0.5)
    assert partial["n_categorical"] is None and partial["n_rows"] == 10
    with pytest.raises(ValueError, match="rows"):
        published_record("8", "eight", None, "fp", rows=10)
    published = pd.DataFrame([row, partial])
    table = comparison_table(mf, published).set_index("feature")
    assert table.loc["n_rows", ["published_min", "published_max", "published_n"]].tolist() == [6, 10, 2]
    assert table.loc["n_categorical", "published_n"] == 1


def test_regression_hook_is_one_entry():
    # a task joins by an entry in both maps; the binary entry is the only one today
    assert set(metafeatures.TARGET_FEATURES) == set(DISTANCE_FEATURES) == {"binary"}
    assert "target_spread" in MetaFeatures.__dataclass_fields__
