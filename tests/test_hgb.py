"""encbench.hgb: HistGradientBoosting taking category columns wider than its 255 bins."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

from encbench.hgb import HGBClassifier, HGBRegressor


def _frame(n_levels: int, n: int = 1200, seed: int = 0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_levels, n)
    X = pd.DataFrame({"c": pd.Categorical(codes.astype(float), categories=np.arange(n_levels, dtype=float)),
                      "x": rng.normal(size=n)})
    return X, codes, rng


def test_narrow_columns_give_scikit_learns_predictions_bit_for_bit():
    """Within 255 categories nothing changes: the same predictions as scikit-learn's models."""
    X, codes, rng = _frame(40)
    y = (codes % 3 == 0).astype(int)
    ours = HGBClassifier(random_state=1).fit(X, y).predict_proba(X)
    theirs = HistGradientBoostingClassifier(random_state=1).fit(X, y).predict_proba(X)
    assert np.array_equal(ours, theirs)
    target = codes * 0.1 + X["x"].to_numpy()
    assert np.array_equal(HGBRegressor(random_state=1).fit(X, target).predict(X),
                          HistGradientBoostingRegressor(random_state=1).fit(X, target).predict(X))


def _hand_grouping(codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Naive reference: level -> its category, the 254 most frequent levels (equal counts in level
    order) numbered in level order, every other level 254."""
    counts = np.bincount(codes, minlength=n_levels)
    kept = sorted(sorted(range(n_levels), key=lambda level: (-counts[level], level))[:254])
    expected = np.full(n_levels, 254)
    expected[kept] = np.arange(254)
    return expected


def _hand_grouped(X: pd.DataFrame, codes: np.ndarray, n_levels: int) -> pd.DataFrame:
    return X.assign(c=pd.Categorical.from_codes(_hand_grouping(codes, n_levels)[codes], categories=np.arange(255)))


def test_a_wide_column_keeps_its_most_frequent_levels_and_groups_the_rest():
    """400 levels: scikit-learn refuses the column; ours keeps the 254 most frequent training
    levels (equal counts in category order) and maps the 146 others as the hand-built grouping
    does; missing values stay missing."""
    X, codes, rng = _frame(400, n=6000)
    target = np.where(codes < 200, 1.0, 0.0) + 0.1 * X["x"].to_numpy()
    with pytest.raises(ValueError, match="cardinality"):
        HistGradientBoostingRegressor(random_state=1).fit(X, target)
    model = HGBRegressor(random_state=1).fit(X, target)
    categories, mapped = model.wide_categories_["c"]
    expected = _hand_grouping(codes, 400)
    assert np.array_equal(mapped, expected)
    once = model._narrow(X)
    assert model._narrow(once) is once        # narrowing twice changes nothing (no second mapping)
    narrowed = model._narrow(X.assign(c=X["c"].astype(object).where(np.arange(len(X)) % 100 != 0)))
    assert narrowed["c"].cat.categories.tolist() == list(range(255))
    got = narrowed["c"].cat.codes.to_numpy()
    assert (got[::100] == -1).all()                                    # missing stays missing
    rest = np.arange(len(X)) % 100 != 0
    assert np.array_equal(got[rest], expected[codes[rest]])
    # the grouped fit equals scikit-learn's fit on the hand-grouped column
    hand = _hand_grouped(X, codes, 400)
    reference = HistGradientBoostingRegressor(random_state=1).fit(hand, target)
    assert np.array_equal(model.predict(X), reference.predict(hand))
    # the grouped column still carries its levels' signal
    alone = HistGradientBoostingRegressor(random_state=1).fit(X[["x"]], target).score(X[["x"]], target)
    assert model.score(X, target) > alone + 0.5


def test_the_classifier_predicts_through_the_grouping_and_clones():
    """predict, predict_proba and decision_function all narrow first: each equals scikit-learn's
    classifier on the hand-grouped column, bit for bit; clone keeps the parameters."""
    from sklearn.base import clone

    X, codes, _ = _frame(300, n=3000, seed=2)
    y = (codes % 2).astype(int)
    model = HGBClassifier(random_state=1, learning_rate=0.2).fit(X, y)
    hand = _hand_grouped(X, codes, 300)
    reference = HistGradientBoostingClassifier(random_state=1, learning_rate=0.2).fit(hand, y)
    for method in ("predict", "predict_proba", "decision_function"):
        assert np.array_equal(getattr(model, method)(X), getattr(reference, method)(hand)), method
    assert clone(model).get_params()["learning_rate"] == 0.2


def test_a_search_clones_and_refits_the_wide_model():
    """Model tuning (GridSearchCV clones the estimator per candidate and fold) runs on a column
    scikit-learn's own model refuses, and its refit keeps the grouping."""
    from sklearn.model_selection import GridSearchCV

    X, codes, rng = _frame(300, n=2000, seed=3)
    target = (codes % 5).astype(float) + rng.normal(size=len(X))
    search = GridSearchCV(HGBRegressor(random_state=1), {"learning_rate": [0.1, 0.2]}, cv=2).fit(X, target)
    assert np.array_equal(search.best_estimator_.wide_categories_["c"][1], _hand_grouping(codes, 300))
    hand = _hand_grouped(X, codes, 300)
    refit = HistGradientBoostingRegressor(random_state=1, **search.best_params_).fit(hand, target)
    assert np.array_equal(search.predict(X), refit.predict(hand))
