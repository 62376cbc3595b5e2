"""Leakage statistics (encbench/data/leakage.py): single-feature AUCs against scikit-learn's per column."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from encbench.data import leakage
from encbench.data.columns import as_category_text
from encbench.data.leakage import rank_auc, single_feature_auc, single_feature_aucs


def _reference_auc(column: pd.Series, positive: np.ndarray, categorical: bool) -> float:
    """The per-column computation with scikit-learn: what the vectorised statistics must equal."""
    if categorical:
        text = as_category_text(column).fillna("<missing>").to_numpy(dtype=object)
        half = np.random.default_rng(1).permutation(len(text)) % 2 == 0
        aucs = []
        for part in (half, ~half):
            other = ~part
            if not other.any() or positive[part].all() or not positive[part].any():
                continue
            rates = pd.Series(positive[other]).groupby(text[other]).mean()
            score = pd.Series(text[part]).map(rates).fillna(positive[other].mean()).to_numpy(dtype=float)
            aucs.append(float(roc_auc_score(positive[part], score)) if np.ptp(score) > 0 else 0.5)
        if not aucs:
            return np.nan
        auc = float(np.mean(aucs))
        return max(auc, 1 - auc)
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    if np.isnan(values).all():
        return np.nan
    score = np.where(np.isnan(values), np.nanmedian(values), values)
    if np.all(score == score[0]):
        return np.nan
    auc = float(roc_auc_score(positive, score))
    return max(auc, 1 - auc)


def test_rank_auc_is_roc_auc_score_for_every_column():
    rng = np.random.default_rng(7)
    for n in (2, 5, 37, 400):
        positive = rng.random(n) < 0.3
        positive[:2] = [True, False]                        # both classes
        scores = np.column_stack([rng.normal(size=n), rng.integers(0, 3, n), np.repeat(1.0, n),
                                  np.where(positive, 1.0, 0.0), rng.integers(0, 2, n) * 1e9])
        expected = [roc_auc_score(positive, scores[:, j]) for j in range(scores.shape[1])]
        np.testing.assert_allclose(rank_auc(scores, positive), expected, rtol=0, atol=1e-12)
    assert rank_auc(np.array([3.0, 1.0, 2.0]), np.array([True, False, False]))[0] == 1.0  # by hand
    with pytest.raises(ValueError, match="both classes"):
        rank_auc(np.ones(3), np.zeros(3, dtype=bool))


def test_single_feature_aucs_equal_the_per_column_computation():
    rng = np.random.default_rng(11)
    n = 301
    positive = rng.random(n) < 0.4
    noisy = np.where(positive, 1.0, 0.0) + rng.normal(0, 0.3, n)
    noisy[rng.random(n) < 0.2] = np.nan
    frame = pd.DataFrame({
        "num": rng.normal(size=n), "noisy": noisy, "const": np.ones(n), "empty": np.full(n, np.nan),
        "ints": rng.integers(0, 4, n),
        "cat": pd.Series(rng.choice(["a", "b", "c"], n), dtype="str"),
        "rare": pd.Series([f"l{i}" for i in rng.integers(0, 150, n)], dtype="str"),
        "leaky": pd.Series(np.where(positive, "p", "q"), dtype="str").where(rng.random(n) > 0.1),
        "one": pd.Series(["z"] * n, dtype="str"),
        "codes": rng.integers(0, 5, n).astype(float),
    })
    categorical = ["cat", "rare", "leaky", "one", "codes"]
    got = single_feature_aucs(frame, positive, categorical)
    expected = [_reference_auc(frame[c], positive, c in categorical) for c in frame.columns]
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=0, atol=1e-12)
    assert got.index.tolist() == frame.columns.tolist()
    assert np.isnan(got["const"]) and np.isnan(got["empty"]) and got["leaky"] > 0.9
    assert single_feature_auc(frame["noisy"], positive, categorical=False) == pytest.approx(got["noisy"])
    assert single_feature_auc(frame["const"], positive, categorical=False) is None


def test_a_wide_table_is_checked_on_a_bounded_seeded_sample(monkeypatch):
    rng = np.random.default_rng(3)
    n, k = 3000, 40
    positive = rng.random(n) < 0.5
    frame = pd.DataFrame(rng.normal(size=(n, k)), columns=[f"x{j}" for j in range(k)])
    frame["x0"] = np.where(positive, 1.0, 0.0) + rng.normal(0, 0.01, n)
    monkeypatch.setattr(leakage, "LEAK_CELLS", 40 * 1000)        # 1,000 rows for 40 columns
    monkeypatch.setattr(leakage, "LEAK_MIN_ROWS", 100)
    keep = np.sort(np.random.default_rng(0).choice(n, 1000, replace=False))
    got = leakage.single_feature_aucs(frame, positive)
    expected = [_reference_auc(frame[c].iloc[keep], positive[keep], False) for c in frame.columns]
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=0, atol=1e-12)
    assert got["x0"] == 1.0
    monkeypatch.setattr(leakage, "LEAK_CELLS", 40)               # never under LEAK_MIN_ROWS
    assert len(leakage._leak_rows(n, k)) == 100
    assert leakage._leak_rows(50, k) is None


def test_leak_scores_of_every_task_use_the_single_feature_statistic():
    """A multiclass target: a text column naming the class leaks (the one-against-rest AUCs,
    weighted by the classes' shares, are 1), a column given for one class only leaks by its gaps,
    noise does not; the values' score equals the weighted per-class statistic. A numeric target:
    its copy leaks (above the median against the rest), noise does not. Rows without a target
    are left out."""
    rng = np.random.default_rng(1)
    n = 300
    cls = rng.integers(0, 3, n)
    frame = pd.DataFrame({"code": np.array(["ka", "kb", "kc"])[cls], "only_b": np.where(cls == 1, 1.0, np.nan),
                          "noise": rng.normal(size=n), "c": list("pq") * (n // 2)})
    y = pd.Series(np.array(["a", "b", "c"])[cls])
    scores = leakage.leak_scores(frame, y, "multiclass", ["c", "code"])
    assert scores.loc["code", "values"] == pytest.approx(1.0)
    assert scores.loc["only_b", "missing"] == pytest.approx(1.0)
    assert scores.loc["noise"].max() < 0.7
    weighted = sum(single_feature_auc(frame["c"], y.to_numpy() == k, categorical=True) * np.mean(y == k)
                   for k in "abc")
    assert scores.loc["c", "values"] == pytest.approx(weighted, abs=1e-12)
    target = pd.Series(frame["noise"].to_numpy())
    target[:10] = np.nan                                              # no target: left out
    numbers = pd.DataFrame({"copy": frame["noise"] * 2, "other": rng.normal(size=n), "c": frame["c"]})
    scores = leakage.leak_scores(numbers, target, "regression", ["c"])
    assert scores.loc["copy", "values"] == pytest.approx(1.0) and scores.loc["other", "values"] < 0.7
    above = (target > target.median()).to_numpy()[10:]
    assert scores.loc["other", "values"] == pytest.approx(_reference_auc(numbers["other"][10:], above, False))


def test_many_classes_share_one_bounded_sample(monkeypatch):
    """With K classes the rows are sampled for K times the columns, so the time does not grow
    K-fold: the sample is the one a table K times as wide would get."""
    rng = np.random.default_rng(4)
    n = 2000
    y = pd.Series(rng.integers(0, 10, n).astype(str))
    frame = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n)})
    full = leakage.leak_scores(frame, y, "multiclass")
    monkeypatch.setattr(leakage, "LEAK_CELLS", 2 * 10 * 1000)        # 1,000 rows for 2 columns x 10 classes
    keep = leakage._leak_rows(n, 2 * 10)
    sampled = leakage.leak_scores(frame, y, "multiclass")
    assert len(keep) == 1000
    expected = leakage.leak_scores(frame.iloc[keep].reset_index(drop=True), y.iloc[keep].reset_index(drop=True),
                                   "multiclass")
    pd.testing.assert_frame_equal(sampled, expected)
    assert not np.allclose(sampled["values"], full["values"])


def test_a_class_target_recoded_is_found_with_its_map():
    """A column that each class determines (two classes to one value) is the target recoded; a
    column with two values within a class, or a single value, is not; missing counts as a value."""
    labels = pd.Series(["a", "b", "c", "a", "b", "c"])
    assert leakage.recoded_target(pd.Series(["x", "x", "z", "x", "x", "z"]), labels) == {"a": "x", "b": "x", "c": "z"}
    assert leakage.recoded_target(pd.Series([1.0, None, 2.0, 1.0, None, 2.0]), labels) == \
        {"a": "1", "b": "<missing>", "c": "2"}
    assert leakage.recoded_target(pd.Series(["x", "x", "z", "y", "x", "z"]), labels) is None
    assert leakage.recoded_target(pd.Series(["x"] * 6), labels) is None


def test_a_numeric_target_binned_is_found_with_its_ranges():
    """A column whose values split the target into disjoint ranges (birth weight under 5.5
    pounds) is the target binned, its ranges in increasing order; overlapping ranges, a value on
    fewer than BINNED_MIN_ROWS rows, or more than BINNED_MAX_LEVELS values are not judged so."""
    rng = np.random.default_rng(5)
    weight = rng.normal(7, 1.5, 400)
    low = pd.Series(np.where(weight < 5.5, "low", "not low"))
    ranges = leakage.binned_target(low, weight)
    assert [r[0] for r in ranges] == ["low", "not low"]
    assert ranges[0][1] == weight.min() and ranges[0][2] == weight[weight < 5.5].max()
    assert ranges[1][1] == weight[weight >= 5.5].min() and ranges[1][2] == weight.max()
    noise = pd.Series(rng.choice(["p", "q"], 400))
    assert leakage.binned_target(noise, weight) is None
    rare = pd.Series(np.where(weight == weight.max(), "top", "rest"))   # one row on "top"
    assert leakage.binned_target(rare, weight) is None
    many = pd.Series(pd.cut(weight, 25, labels=False).astype(str))
    assert leakage.binned_target(many, weight) is None
