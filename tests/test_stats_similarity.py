"""Jaccard of best sets, Spearman rho, and sensitivity matrices."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from encbench.stats import HEURISTIC_STRATEGIES, consensus, consensus_table, jaccard_best, sensitivity, spearman
from encbench.store.published import load_published_results


@pytest.fixture(scope="module")
def published():
    return load_published_results()


def _r(**ranks):
    return pd.Series(ranks, name="rank").rename_axis("encoder")


def test_jaccard_best_hand_computed():
    assert jaccard_best(_r(A=1, B=1, C=2), _r(A=1, B=2, C=2)) == pytest.approx(1 / 2)
    assert jaccard_best(_r(A=1, B=1, C=2), _r(A=2, B=2, C=1)) == 0.0
    assert jaccard_best(_r(A=1, B=2), _r(A=1, B=2)) == 1.0
    # Only common encoders count: D is best in r2 but absent from r1, so A is r2's best.
    assert jaccard_best(_r(A=1, B=2), _r(D=1, A=2, B=3)) == 1.0
    assert np.isnan(jaccard_best(_r(A=1), _r(B=1)))


def test_spearman_matches_scipy_with_ties_and_common_encoders():
    rng = np.random.default_rng(0)
    names = [f"E{i}" for i in range(15)]
    for _ in range(20):
        a = pd.Series(rng.integers(1, 6, 15), index=names)
        b = pd.Series(rng.integers(1, 9, 15), index=names).iloc[rng.permutation(15)]
        b = b.drop(b.index[:3])
        common = a.index.intersection(b.index)
        expected = stats.spearmanr(a[common], b[common]).statistic
        assert spearman(a, b) == pytest.approx(expected, abs=1e-12)
    assert spearman(_r(A=1, B=2, C=3), _r(A=3, B=2, C=1)) == pytest.approx(-1.0)
    assert np.isnan(spearman(_r(A=1, B=1), _r(A=1, B=2)))  # constant ranking


def test_ranking_inputs_are_validated():
    with pytest.raises(ValueError, match="r1 must be a pandas Series"):
        spearman([1, 2], _r(A=1))
    with pytest.raises(ValueError, match="r2 has encoder 'A' more than once"):
        jaccard_best(_r(A=1), pd.Series([1, 2], index=["A", "A"]))


def test_sensitivity_over_models_matches_pairwise_functions(published):
    result = sensitivity(published, "model", fixed={"tuning": "no", "scoring": "Acc"}, strategy="R-M")
    assert result.labels == ("DT", "LGBM", "SVM", "kNN", "LogReg")  # vocabulary order
    assert list(result.spearman.index) == list(result.labels) == list(result.jaccard.columns)
    sub = published[(published.tuning == "no") & (published.scoring == "Acc")]
    rankings = {m: consensus(sub[sub.model == m], "R-M") for m in result.labels}
    for a in result.labels:
        for b in result.labels:
            assert result.spearman.loc[a, b] == pytest.approx(spearman(rankings[a], rankings[b]), abs=1e-12)
            assert result.jaccard.loc[a, b] == pytest.approx(jaccard_best(rankings[a], rankings[b]))
    assert np.allclose(np.diag(result.spearman), 1.0)
    pd.testing.assert_frame_equal(result.spearman, result.spearman.T)
    assert result.rankings.shape == (32, 5)


def test_sensitivity_over_strategies_and_tuning(published):
    fixed = {"model": "LogReg", "tuning": "no", "scoring": "AUC"}
    result = sensitivity(published, "strategy", fixed=fixed, alpha=0.1)
    assert result.labels == HEURISTIC_STRATEGIES
    sub = published[(published.model == "LogReg") & (published.tuning == "no") & (published.scoring == "AUC")]
    table = consensus_table(sub, HEURISTIC_STRATEGIES, by=(), alpha=0.1)
    nem = table[table.strategy == "R-Nem"].set_index("encoder")["rank"]
    rm = table[table.strategy == "R-M"].set_index("encoder")["rank"]
    assert result.spearman.loc["R-M", "R-Nem"] == pytest.approx(spearman(rm, nem))
    tuning = sensitivity(published, "tuning", fixed={"model": "DT", "scoring": "F1"}, strategy="Q-Th", theta=0.9)
    assert tuning.labels == ("no", "model", "full")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(vary="colour", fixed={"tuning": "no"}), "unknown factor to vary 'colour'"),
        (dict(vary="model", fixed={"tuning": "no"}), "factor 'scoring' is not fixed"),
        (dict(vary="model", fixed={"tuning": "no", "scoring": "MCC"}), "no rows with scoring='MCC'"),
        (dict(vary="model", fixed={"model": "DT"}), "both varied and fixed"),
        (dict(vary="model", fixed={"tuning": "no", "scoring": "Acc"}, strategy="X"), "unknown strategy 'X'"),
        (dict(vary="strategy", fixed={"model": "DT", "tuning": "no", "scoring": "Acc"}, strategies=["R-M", "Y"]),
         "unknown strategy 'Y'"),
    ],
)
def test_sensitivity_errors(published, kwargs, match):
    with pytest.raises(ValueError, match=match):
        sensitivity(published, **kwargs)
