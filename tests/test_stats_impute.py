"""Q-Imp: the quality x difficulty imputation model of Motl and Kordik and its benefit on sparse data."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from encbench.stats import consensus, impute_scores
from encbench.store.published import load_published_results


def _naive_fit(acc: np.ndarray, n_iter: int) -> tuple[np.ndarray, np.ndarray]:
    """The paper's pseudocode, cell by cell (algorithms in rows, datasets in columns)."""
    n_alg, n_dat = acc.shape
    alg = np.array([np.nanmean(acc[a]) for a in range(n_alg)])
    dat = np.ones(n_dat)
    for _ in range(n_iter):
        dat = dat + np.array([np.nanmean([acc[a, d] - alg[a] * dat[d] for a in range(n_alg)])
                              for d in range(n_dat)])
        alg = alg + np.array([np.nanmean([acc[a, d] - alg[a] * dat[d] for d in range(n_dat)])
                              for a in range(n_alg)])
    return alg, dat


def _long(acc: np.ndarray) -> pd.DataFrame:
    rows = [(f"d{d:02d}", f"e{a:02d}", acc[a, d]) for a in range(acc.shape[0])
            for d in range(acc.shape[1]) if not np.isnan(acc[a, d])]
    return pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])


def test_fit_matches_the_papers_pseudocode():
    rng = np.random.default_rng(0)
    acc = rng.uniform(0.5, 1.0, size=(7, 11))
    acc[rng.random(acc.shape) < 0.35] = np.nan
    acc[0, 0] = 0.7  # keep every row and column non-empty
    acc[np.isnan(acc).all(axis=1), 0] = 0.6
    for n_iter in (1, 10):
        alg, dat = _naive_fit(acc, n_iter)
        result = impute_scores(_long(acc), n_iter=n_iter)
        names = [f"e{a:02d}" for a in range(7)]
        np.testing.assert_allclose(result.quality.loc[names].to_numpy(), alg, rtol=1e-12)
        np.testing.assert_allclose(result.difficulty.to_numpy(), dat, rtol=1e-12)


def test_exact_product_is_recovered_and_observed_cells_kept():
    rng = np.random.default_rng(1)
    quality, difficulty = rng.uniform(0.6, 0.9, 8), rng.uniform(0.7, 1.2, 12)
    acc = np.outer(quality, difficulty)
    sparse = acc.copy()
    sparse[rng.random(acc.shape) < 0.3] = np.nan
    result = impute_scores(_long(sparse), n_iter=50)
    completed = result.completed.loc[[f"d{d:02d}" for d in range(12)], [f"e{a:02d}" for a in range(8)]]
    np.testing.assert_allclose(completed.to_numpy().T, acc, atol=1e-12)
    assert result.n_imputed == int(np.isnan(sparse).sum())
    assert list(result.quality.index) == [f"e{a:02d}" for a in np.argsort(-quality)]
    ranking = consensus(_long(sparse), "Q-Imp", n_iter=50)
    assert list(ranking.index) == list(result.quality.index) and list(ranking) == list(range(1, 9))


def test_q_imp_beats_q_m_on_sparsified_published_tables():
    # on complete published tables with 30% of the cells removed at random, the Q-Imp
    # ranking is closer (Spearman) to the complete-data Q-M ranking than Q-M on the sparse table.
    frame = load_published_results()
    rng = np.random.default_rng(0)
    imp, qm = [], []
    for key, combo in frame.groupby(["model", "tuning", "scoring"]):
        if combo.dataset.nunique() * combo.encoder.nunique() != len(combo):
            continue  # only the complete tables
        reference = consensus(combo, "Q-M")
        sparse = combo[rng.random(len(combo)) >= 0.3]
        rho_imp = stats.spearmanr(reference, consensus(sparse, "Q-Imp").reindex(reference.index)).statistic
        rho_qm = stats.spearmanr(reference, consensus(sparse, "Q-M").reindex(reference.index)).statistic
        assert rho_imp > rho_qm, key
        imp.append(rho_imp)
        qm.append(rho_qm)
    assert len(imp) >= 9
    assert np.mean(imp) > 0.8 and np.mean(qm) < 0.65


def test_n_iter_is_validated():
    with pytest.raises(ValueError, match="n_iter must be a positive integer: got 2.5"):
        impute_scores(_long(np.ones((2, 2))), n_iter=2.5)
