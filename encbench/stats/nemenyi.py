"""Friedman average ranks and Nemenyi pairwise tests (Demsar 2006), for R-Nem and CD diagrams.

Conventions (docs/ARCHITECTURE.md, Consensus rankings): within each dataset, the encoders present get Friedman ranks
(1 = best score, ties share the mean of their positions); an encoder's mean rank is averaged over
the datasets where it has a result. Two encoders differ significantly at level ``alpha`` when

    |R_i - R_j| > CD = q_alpha / sqrt(2) * sqrt(k (k + 1) / (6 N)),

with ``q_alpha`` the upper ``alpha`` quantile of the studentized range for ``k`` groups and
infinite degrees of freedom, ``k`` the encoders and ``N`` the datasets of the combination. This is
what ``scikit_posthocs.posthoc_nemenyi_friedman`` computes on complete data (the p-value of a pair
is ``studentized_range.sf(sqrt(2) |R_i - R_j| / sqrt(k (k + 1) / (6 N)), k, inf)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from encbench.stats._arrays import nanmean, rank_last_axis
from encbench.stats._checks import check_alpha
from encbench.stats._cube import Cube, build_cube


def _scipy_stats():
    """``scipy.stats``, imported on first use: it takes about a second to import and pages that
    draw no CD diagram (the app's first page among them) do not need it."""
    from scipy import stats

    return stats


@lru_cache(maxsize=256)
def studentized_range_critical(k: int, alpha: float) -> float:
    """Upper ``alpha`` quantile of the studentized range with ``k`` groups, infinite df."""
    return float(_scipy_stats().studentized_range.ppf(1.0 - alpha, k, np.inf))


def critical_difference(k: int, n: int, alpha: float) -> float:
    """Nemenyi critical difference for ``k`` encoders ranked on ``n`` datasets (NaN if k < 2)."""
    if k < 2 or n < 1:
        return float("nan")
    q = studentized_range_critical(int(k), float(alpha))
    return q / np.sqrt(2.0) * np.sqrt(k * (k + 1.0) / (6.0 * n))


def nemenyi_better_counts(average_ranks: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """R-Nem scores for many combinations at once.

    Parameters
    ----------
    average_ranks : numpy.ndarray
        ``(G, D, E)`` Friedman ranks per dataset, NaN where missing.
    alpha : float
        Significance level.

    Returns
    -------
    counts : numpy.ndarray
        ``(G, E)`` float: number of encoders with a lower mean rank whose difference exceeds the
        critical difference (fewer is better); NaN for encoders absent from a combination.
    mean_ranks : numpy.ndarray
        ``(G, E)`` mean Friedman ranks.
    """
    mean_ranks = nanmean(average_ranks, axis=1)  # (G, E)
    n = (~np.isnan(average_ranks)).any(axis=2).sum(axis=1)
    return nemenyi_counts_of_means(mean_ranks, n, alpha), mean_ranks


def nemenyi_counts_of_means(mean_ranks: np.ndarray, n: np.ndarray, alpha: float) -> np.ndarray:
    """The R-Nem scores of :func:`nemenyi_better_counts` from the ``(G, E)`` mean Friedman
    ranks (NaN = absent encoder) and the ``(G,)`` numbers of datasets ranked."""
    present = ~np.isnan(mean_ranks)
    k = present.sum(axis=1)
    # One studentized-range quantile per distinct number of encoders (usually a single one).
    q = np.full(k.shape, np.nan)
    for size in np.unique(k[k >= 2]):
        q[k == size] = studentized_range_critical(int(size), alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        cd = q / np.sqrt(2.0) * np.sqrt(k * (k + 1.0) / (6.0 * n))
    # gap[g, i, j] = R_i - R_j > 0 when j has the lower (better) mean rank.
    gap = mean_ranks[:, :, None] - mean_ranks[:, None, :]
    with np.errstate(invalid="ignore"):
        better = gap > cd[:, None, None]
    counts = better.sum(axis=2).astype(float)
    counts[~present] = np.nan
    return counts


@dataclass(frozen=True)
class NemenyiResult:
    """Outcome of Friedman ranks + Nemenyi tests for one factor combination.

    Attributes
    ----------
    mean_ranks : pandas.Series
        Mean Friedman rank per encoder (index ``encoder``), ascending: best first.
    critical_difference : float
        Two mean ranks further apart than this differ significantly.
    alpha : float
        Significance level used.
    n_datasets : int
        Datasets (blocks) ranked.
    pvalues : pandas.DataFrame
        Square, encoder x encoder (order of ``mean_ranks``), Nemenyi p-values; 1 on the diagonal.
    significant_pairs : pandas.DataFrame
        One row per significantly different pair: ``better, worse, difference, pvalue``
        (``difference`` = mean rank of ``worse`` minus that of ``better``), sorted by
        ``better``'s then ``worse``'s mean rank.
    friedman_statistic, friedman_pvalue : float
        Friedman chi-square (with the usual tie correction) and its p-value with ``k - 1``
        degrees of freedom, as ``scipy.stats.friedmanchisquare``, computed on the datasets that
        have a result for every encoder (the test needs complete blocks); NaN when fewer than
        two such datasets exist.
    """

    mean_ranks: pd.Series
    critical_difference: float
    alpha: float
    n_datasets: int
    pvalues: pd.DataFrame
    significant_pairs: pd.DataFrame
    friedman_statistic: float
    friedman_pvalue: float

    @property
    def n_encoders(self) -> int:
        """Number of encoders compared."""
        return len(self.mean_ranks)

    @property
    def better_counts(self) -> pd.Series:
        """R-Nem score: for each encoder, how many encoders are significantly better."""
        counts = self.significant_pairs.groupby("worse").size()
        return counts.reindex(self.mean_ranks.index, fill_value=0).astype(int).rename("n_better")


def _friedman(average: np.ndarray) -> tuple[float, float]:
    """Friedman chi-square (tie-corrected) on the complete rows of ``(D, k)`` Friedman ranks."""
    complete = average[~np.isnan(average).any(axis=1)]
    n_blocks, k = complete.shape
    if k < 2 or n_blocks < 2:
        return float("nan"), float("nan")
    mean_ranks = complete.mean(axis=0)
    statistic = 12.0 * n_blocks / (k * (k + 1.0)) * (np.sum(mean_ranks**2) - k * (k + 1.0) ** 2 / 4.0)
    ties = 0.0
    for row in complete:
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts**3 - counts))
    correction = 1.0 - ties / (n_blocks * k * (k * k - 1.0))
    if correction <= 0:  # every dataset ties all encoders: no evidence either way
        return float("nan"), float("nan")
    statistic /= correction
    return float(statistic), float(_scipy_stats().chi2.sf(statistic, k - 1))


def nemenyi(scores: pd.DataFrame, alpha: float = 0.05) -> NemenyiResult:
    """Friedman mean ranks and Nemenyi pairwise tests for one factor combination.

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` (higher is better) for one factor combination.
    alpha : float, default 0.05
        Significance level of the pairwise tests.

    Returns
    -------
    NemenyiResult
        Mean ranks, critical difference, p-values and significant pairs (for critical-difference
        diagrams).

    Raises
    ------
    ValueError
        On invalid ``scores`` (see :func:`encbench.stats.consensus`) or ``alpha`` outside (0, 1).
    """
    alpha = check_alpha(alpha)
    cube = build_cube(scores)
    return _nemenyi_from_cube(cube, alpha)


def _nemenyi_from_cube(cube: Cube, alpha: float) -> NemenyiResult:
    _, average = rank_last_axis(cube.values[0], descending=True)  # (D, E)
    keep_datasets = (~np.isnan(average)).any(axis=1)
    average = average[keep_datasets]
    mean = nanmean(average, axis=0)
    order = np.lexsort((cube.encoders.astype(str), mean))
    encoders = pd.Index(cube.encoders[order], name="encoder")
    mean = mean[order]
    average = average[:, order]
    k, n = mean.size, average.shape[0]
    cd = critical_difference(k, n, alpha)
    pvalues = np.ones((k, k))
    if k >= 2:
        scale = np.sqrt(k * (k + 1.0) / (6.0 * n))
        upper = np.triu_indices(k, 1)
        q = np.abs(mean[upper[0]] - mean[upper[1]]) / scale * np.sqrt(2.0)
        pvalues[upper] = _scipy_stats().studentized_range.sf(q, k, np.inf)
        pvalues.T[upper] = pvalues[upper]
    # Significance uses the same test as R-Nem (difference > CD) so the diagram and the
    # consensus always agree; it is equivalent to p < alpha.
    gap = mean[None, :] - mean[:, None]  # gap[i, j] = R_j - R_i, > 0 when i is better
    better_idx, worse_idx = np.nonzero(gap > cd)
    pairs = pd.DataFrame(
        {
            "better": encoders[better_idx].astype(object),
            "worse": encoders[worse_idx].astype(object),
            "difference": gap[better_idx, worse_idx],
            "pvalue": pvalues[better_idx, worse_idx],
        }
    )
    statistic, pvalue = _friedman(average)
    return NemenyiResult(
        mean_ranks=pd.Series(mean, index=encoders, name="mean_rank"),
        critical_difference=float(cd),
        alpha=alpha,
        n_datasets=int(n),
        pvalues=pd.DataFrame(pvalues, index=encoders, columns=encoders.rename(None)),
        significant_pairs=pairs,
        friedman_statistic=statistic,
        friedman_pvalue=pvalue,
    )
