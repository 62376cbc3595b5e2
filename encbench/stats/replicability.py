"""Replicability of a consensus ranking across disjoint dataset samples (study section 5.2).

For a sample size ``s``, draw ``n_pairs`` pairs of disjoint samples of ``s`` datasets, aggregate
each sample into a consensus ranking and compare the two with Spearman's rho and the Jaccard index
of their best encoders. The study plots the mean similarity against ``s`` with bootstrapped 95%
intervals (its Figure 2). All ``2 * n_pairs`` samples of one size are ranked as one cube.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench.stats._cube import build_cube
from encbench.stats.bootstrap import check_level, check_positive_int
from encbench.stats.consensus import check_params, check_strategies, rank_cube
from encbench.stats.similarity import jaccard_rows, spearman_rows


@dataclass(frozen=True)
class ReplicabilityResult:
    """Similarity of consensus rankings from disjoint dataset samples.

    Attributes
    ----------
    pairs : pandas.DataFrame
        One row per (sample size, pair): ``sample_size, pair, rho, J``. ``rho`` is NaN when a
        sample's ranking is constant (e.g. all tied).
    summary : pandas.DataFrame
        One row per sample size: ``sample_size, n_pairs, rho_mean, rho_low, rho_high, J_mean,
        J_low, J_high``; means skip NaN, bounds are percentile-bootstrap intervals of the mean.
    strategy : str
        The aggregation used.
    """

    pairs: pd.DataFrame
    summary: pd.DataFrame
    strategy: str


def _bootstrap_mean(values: np.ndarray, rng: np.random.Generator, n_boot: int, level: float) -> tuple[float, float, float]:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    means = values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(values.mean()), float(low), float(high)


def replicability(
    scores: pd.DataFrame,
    sample_sizes: Iterable[int],
    n_pairs: int = 100,
    seed: int | None = 0,
    strategy: str = "R-M",
    progress: Callable[[int, int], None] | None = None,
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    **params: object,
) -> ReplicabilityResult:
    """Rho- and J-replicability of a consensus for several sample sizes.

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` for one factor combination.
    sample_sizes : iterable of int
        Numbers of datasets per sample; each needs ``2 * s`` <= the number of datasets.
    n_pairs : int, default 100
        Pairs of disjoint samples drawn per sample size.
    seed : int or None, default 0
        Seeds both the sampling and the bootstrap of the intervals (independent streams).
    strategy : str, default "R-M"
        Aggregation (see :func:`encbench.stats.consensus`); R-Kem solves ``2 * n_pairs`` exact
        problems per sample size.
    progress : callable, optional
        Called as ``progress(done, total)`` after each sample size.
    n_boot : int, default 1000
        Bootstrap resamples of the pair similarities for the intervals.
    level : float, default 0.95
        Coverage of the intervals.
    **params
        Strategy parameters.

    Returns
    -------
    ReplicabilityResult

    Raises
    ------
    ValueError
        On invalid scores, strategy, parameters, sample sizes, ``n_pairs``, ``n_boot`` or
        ``level``.
    """
    names = check_strategies(strategy)
    if len(names) != 1 or not isinstance(strategy, str):
        raise ValueError(f"strategy must be one strategy name: got {strategy!r}")
    params = check_params(names, params)
    n_pairs = check_positive_int(n_pairs, "n_pairs")
    n_boot = check_positive_int(n_boot, "n_boot")
    level = check_level(level)
    if isinstance(sample_sizes, (int, np.integer)):
        sample_sizes = [sample_sizes]
    sizes = [check_positive_int(s, "sample size") for s in sample_sizes]
    if not sizes:
        raise ValueError("sample_sizes is empty: got []")
    cube = build_cube(scores)
    n_datasets = cube.values.shape[1]
    too_big = [s for s in sizes if 2 * s > n_datasets]
    if too_big:
        raise ValueError(
            f"sample size {too_big[0]!r} needs {2 * too_big[0]} datasets for two disjoint samples: "
            f"got {n_datasets}"
        )
    sampling, resampling = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    pair_rows, summary_rows = [], []
    for done, size in enumerate(sizes, start=1):
        # Each row of `order` is a random permutation; its first 2s entries give the two samples.
        order = np.argsort(sampling.random((n_pairs, n_datasets)), axis=1)[:, : 2 * size]
        both = np.concatenate([order[:, :size], order[:, size:]], axis=0)
        ranks = rank_cube(cube.take_datasets(both), names, params)[strategy]
        first, second = ranks[:n_pairs], ranks[n_pairs:]
        rho = spearman_rows(first, second)
        jac = jaccard_rows(first, second)
        pair_rows.append(pd.DataFrame({"sample_size": size, "pair": np.arange(n_pairs), "rho": rho, "J": jac}))
        rho_stats = _bootstrap_mean(rho, resampling, n_boot, level)
        j_stats = _bootstrap_mean(jac, resampling, n_boot, level)
        summary_rows.append((size, n_pairs, *rho_stats, *j_stats))
        if progress is not None:
            progress(done, len(sizes))
    summary = pd.DataFrame(summary_rows, columns=["sample_size", "n_pairs", "rho_mean", "rho_low",
                                                  "rho_high", "J_mean", "J_low", "J_high"])
    return ReplicabilityResult(pairs=pd.concat(pair_rows, ignore_index=True), summary=summary,
                               strategy=strategy)
