"""Friedman + Nemenyi against scikit-posthocs and scipy on complete data; conventions when sparse."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs as sp
from scipy import stats

from encbench.stats import consensus, nemenyi
from encbench.store.published import load_published_results


def _long(matrix: np.ndarray) -> pd.DataFrame:
    n, k = matrix.shape
    return pd.DataFrame({
        "dataset": np.repeat([f"d{i:02d}" for i in range(n)], k),
        "encoder": np.tile([f"E{j}" for j in range(k)], n),
        "cv_score": matrix.ravel(),
    }).dropna()


def _complete_random(seed: int, n: int, k: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.0, 0.3, k)
    x = rng.random((n, k)) * 0.5 + quality
    return np.round(x, 1)  # rounding creates ties


@pytest.mark.parametrize("seed, n, k", [(0, 15, 6), (1, 40, 10), (2, 8, 4)])
def test_matches_scikit_posthocs_on_complete_data(seed, n, k):
    matrix = _complete_random(seed, n, k)
    result = nemenyi(_long(matrix), alpha=0.05)
    names = [f"E{j}" for j in range(k)]
    # scikit-posthocs ranks ascending, so give it the negated scores (higher score = better).
    reference = sp.posthoc_nemenyi_friedman(pd.DataFrame(-matrix, columns=names))
    mine = result.pvalues.loc[names, names]
    np.testing.assert_allclose(mine.to_numpy(), reference.to_numpy(), rtol=1e-9, atol=1e-12)
    significant = {(a, b) for a in names for b in names if a < b and reference.loc[a, b] < 0.05}
    got = {tuple(sorted(p)) for p in zip(result.significant_pairs.better, result.significant_pairs.worse)}
    assert got == significant
    ranks = stats.rankdata(-matrix, axis=1, method="average").mean(axis=0)
    np.testing.assert_allclose(result.mean_ranks.loc[names].to_numpy(), ranks)
    statistic, pvalue = stats.friedmanchisquare(*matrix.T)
    assert result.friedman_statistic == pytest.approx(statistic, rel=1e-12)
    assert result.friedman_pvalue == pytest.approx(pvalue, rel=1e-9)


def test_published_complete_combination_matches_scikit_posthocs():
    frame = load_published_results()
    combo = frame[(frame.model == "DT") & (frame.tuning == "full") & (frame.scoring == "Acc")]
    wide = combo.pivot(index="dataset", columns="encoder", values="cv_score")
    assert not wide.isna().any().any()
    reference = sp.posthoc_nemenyi_friedman(-wide)
    result = nemenyi(combo)
    mine = result.pvalues.loc[wide.columns, wide.columns]
    np.testing.assert_allclose(mine.to_numpy(), reference.to_numpy(), rtol=1e-9, atol=1e-12)
    # R-Nem: encoders significantly better (lower mean rank and p < alpha); fewer is better.
    mean = result.mean_ranks
    counts = pd.Series({e: int(((reference[e] < 0.05) & (mean[reference.index] < mean[e])).sum())
                        for e in wide.columns})
    expected = counts.rank(method="dense").astype(int)
    got = consensus(combo, "R-Nem")
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)
    pd.testing.assert_series_equal(result.better_counts.sort_index(), counts.sort_index(), check_names=False)


def test_critical_difference_formula():
    result = nemenyi(_long(_complete_random(3, 20, 5)), alpha=0.1)
    q = stats.studentized_range.ppf(0.9, 5, np.inf)
    assert result.critical_difference == pytest.approx(q / np.sqrt(2) * np.sqrt(5 * 6 / (6 * 20)))
    assert result.n_datasets == 20 and result.n_encoders == 5 and result.alpha == 0.1
    diffs = result.significant_pairs["difference"]
    assert (diffs > result.critical_difference).all()
    assert (result.significant_pairs["pvalue"] < 0.1).all()


def test_mean_ranks_skip_missing_results():
    # C is missing on d2: its mean rank uses d1 and d3 only, ranks among the encoders present.
    frame = pd.DataFrame(
        [("d1", "A", 0.9), ("d1", "B", 0.8), ("d1", "C", 0.7),
         ("d2", "A", 0.5), ("d2", "B", 0.6),
         ("d3", "A", 0.9), ("d3", "B", 0.9), ("d3", "C", 0.1)],
        columns=["dataset", "encoder", "cv_score"],
    )
    result = nemenyi(frame)
    assert result.mean_ranks.to_dict() == pytest.approx({"A": (1 + 2 + 1.5) / 3, "B": (2 + 1 + 1.5) / 3, "C": 3.0})
    assert result.n_datasets == 3
    # Friedman needs complete blocks: computed on d1 and d3 only.
    statistic, _ = stats.friedmanchisquare([0.9, 0.9], [0.8, 0.9], [0.7, 0.1])
    assert result.friedman_statistic == pytest.approx(statistic)


def test_alpha_is_validated():
    with pytest.raises(ValueError, match="alpha must be a number in \\(0, 1\\): got 'x'"):
        nemenyi(_long(_complete_random(0, 5, 3)), alpha="x")
