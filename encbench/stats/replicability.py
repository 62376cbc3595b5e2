"""Replicability of a consensus ranking across disjoint dataset samples (study section 5.2).

For a sample size ``s``, draw ``n_pairs`` pairs of disjoint samples of ``s`` datasets, aggregate
each sample into a consensus ranking and compare the two with Spearman's rho and the Jaccard index
of their best encoders. The study plots the mean similarity against ``s`` with bootstrapped 95%
intervals (its Figure 2). All ``2 * n_pairs`` samples of one size are ranked as one cube.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import vocab
from encbench.stats._checks import check_level, check_positive_int
from encbench.stats._cube import Cube, build_cube
from encbench.stats.consensus import check_metrics, check_params, check_strategies, rank_cube
from encbench.stats.similarity import jaccard_rows, spearman_rows


class ReplicabilityCancelled(Exception):
    """Raised by :func:`replicability` when its ``should_stop`` callable returns True."""


#: samples per task when an expensive strategy's samples are solved on a process pool: for
#: R-Kem about 0.1 s of work (a sample takes ~12 ms, the slowest ~0.15 s;
#: benchmarks/bench_replicability.py), small enough to keep both workers busy until the end and
#: to report progress often
_CHUNK = 8


def _rank_samples(values: np.ndarray, encoders: np.ndarray, strategy: str, params: dict) -> np.ndarray:
    """Consensus ranks ``(B, E)`` of ``B`` samples (``values`` is ``(B, S, E)``); a pool task."""
    keys = pd.DataFrame(index=pd.RangeIndex(values.shape[0]))
    cube = Cube(values, keys, np.arange(values.shape[1]), encoders)
    return rank_cube(cube, [strategy], params)[strategy]


def _rank_all(cube: Cube, draws: list[np.ndarray], strategy: str, params: dict, n_jobs: int,
              report: Callable[[int], None], should_stop: Callable[[], bool] | None) -> list[np.ndarray]:
    """Ranks of the samples of every sample size, on ``n_jobs`` processes (a strategy the registry
    marks expensive: one solve per sample, R-Kem's) or inline (the others rank all the samples of
    a size in one vectorised pass)."""
    def stop() -> None:
        if should_stop is not None and should_stop():
            raise ReplicabilityCancelled("replicability computation cancelled")

    if n_jobs <= 1 or not vocab.STRATEGY_REGISTRY[strategy].expensive:
        out = []
        for both in draws:
            stop()
            out.append(rank_cube(cube.take_datasets(both), [strategy], params)[strategy])
            report(len(both))
        return out
    # spawn, not fork: the caller may be a threaded server (Streamlit), and forking a process
    # that holds other threads' locks can deadlock the child
    pool = cf.ProcessPoolExecutor(n_jobs, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = {}
        for d, both in enumerate(draws):
            values = cube.values[0][both]
            for start in range(0, len(both), _CHUNK):
                task = pool.submit(_rank_samples, values[start:start + _CHUNK], cube.encoders, strategy, params)
                futures[task] = (d, start)
        parts: dict[tuple[int, int], np.ndarray] = {}
        pending = set(futures)
        while pending:
            stop()
            finished, pending = cf.wait(pending, timeout=0.2, return_when=cf.FIRST_COMPLETED)
            for task in finished:
                parts[futures[task]] = task.result()
                report(len(parts[futures[task]]))
    finally:
        # wait for the chunks already running (a fraction of a second): with wait=False the
        # pool's manager thread outlives this call, and a cancelled computation's process then
        # hung at exit waiting for a worker that never received its stop sentinel
        pool.shutdown(wait=True, cancel_futures=True)
    return [np.concatenate([parts[(d, start)] for start in range(0, len(both), _CHUNK)])
            for d, both in enumerate(draws)]


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


def _bootstrap_mean(values: np.ndarray, rng: np.random.Generator, n_boot: int,
                    level: float) -> tuple[float, float, float]:
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
    n_jobs: int = 1,
    should_stop: Callable[[], bool] | None = None,
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
        Aggregation (see :func:`encbench.stats.consensus`); an expensive one (R-Kem) makes one
        solve per sample, ``2 * n_pairs`` per sample size.
    progress : callable, optional
        Called as ``progress(done, total)`` in samples ranked (``total = 2 * n_pairs`` per
        sample size): after each sample size, and for an expensive strategy on several processes
        after each task of a few samples.
    n_boot : int, default 1000
        Bootstrap resamples of the pair similarities for the intervals.
    level : float, default 0.95
        Coverage of the intervals.
    n_jobs : int, default 1
        Processes solving the samples of a strategy the registry marks expensive
        (:attr:`encbench.vocab.Strategy.expensive`, R-Kem's exact problems) in parallel; the
        other strategies are vectorised and ignore it. The result does not depend on it.
    should_stop : callable, optional
        Polled while computing; when it returns True the computation stops with
        :class:`ReplicabilityCancelled`.
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
    check_metrics(cube, names)
    n_datasets = cube.values.shape[1]
    too_big = [s for s in sizes if 2 * s > n_datasets]
    if too_big:
        raise ValueError(
            f"sample size {too_big[0]!r} needs {2 * too_big[0]} datasets for two disjoint samples: "
            f"got {n_datasets}"
        )
    n_jobs = check_positive_int(n_jobs, "n_jobs")
    sampling, resampling = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    # Draw every sample first (the same stream, in the same order, as one size at a time), so
    # an expensive strategy's solves of all sizes can be spread over the processes together.
    draws = []
    for size in sizes:
        # Each row of `order` is a random permutation; its first 2s entries give the two samples.
        order = np.argsort(sampling.random((n_pairs, n_datasets)), axis=1)[:, : 2 * size]
        draws.append(np.concatenate([order[:, :size], order[:, size:]], axis=0))
    total, done = 2 * n_pairs * len(sizes), [0]

    def report(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress(done[0], total)

    all_ranks = _rank_all(cube, draws, strategy, params, n_jobs, report, should_stop)
    pair_rows, summary_rows = [], []
    for size, ranks in zip(sizes, all_ranks):
        first, second = ranks[:n_pairs], ranks[n_pairs:]
        rho = spearman_rows(first, second)
        jac = jaccard_rows(first, second)
        pair_rows.append(pd.DataFrame({"sample_size": size, "pair": np.arange(n_pairs), "rho": rho, "J": jac}))
        rho_stats = _bootstrap_mean(rho, resampling, n_boot, level)
        j_stats = _bootstrap_mean(jac, resampling, n_boot, level)
        summary_rows.append((size, n_pairs, *rho_stats, *j_stats))
    summary = pd.DataFrame(summary_rows, columns=["sample_size", "n_pairs", "rho_mean", "rho_low",
                                                  "rho_high", "J_mean", "J_low", "J_high"])
    return ReplicabilityResult(pairs=pd.concat(pair_rows, ignore_index=True), summary=summary,
                               strategy=strategy)


@dataclass(frozen=True)
class AgreementProjection:
    """How many datasets two samples need to agree at ``target``, projected from a summary.

    Attributes
    ----------
    r : float
        The agreement of two single datasets' rankings that the Spearman-Brown formula fitted
        (in [0, 1)).
    needed : int or None
        Datasets per sample at which the formula reaches ``target`` (None when ``r`` is 0).
    target : float
    fits : bool
        The fitted curve lies inside the interval (``rho_low`` to ``rho_high``) of the largest
        sample size, the one a projection beyond the data rests on.
    above : bool
        The fitted curve lies above that interval: the measured agreement grows more slowly than
        the formula (it flattens), so ``needed`` is at best a lower bound. Where it lies below,
        ``needed`` is at most an upper bound.
    """

    r: float
    needed: int | None
    target: float
    fits: bool
    above: bool


def spearman_brown(n, r: float):
    """Agreement of two means of ``n`` exchangeable rankings whose single rankings agree at ``r``:
    ``n r / (1 + (n - 1) r)``."""
    n = np.asarray(n, dtype=float)
    return n * r / (1.0 + (n - 1.0) * r)


def project_agreement(summary: pd.DataFrame, target: float = 0.9) -> AgreementProjection:
    """Project rho-replicability to the sample size at which it reaches ``target``.

    A consensus by mean rank is a mean of the datasets' rankings; if datasets were exchangeable
    draws, the agreement of two disjoint samples of ``n`` would follow the Spearman-Brown formula
    (:func:`spearman_brown`). Its single parameter ``r`` is fitted to the summary's ``rho_mean``
    by least squares, and ``needed`` solves the formula for ``target``:
    ``target (1 - r) / (r (1 - target))``, rounded up. ``fits`` says whether the fitted curve is
    inside the measured interval at the largest sample size: where it is not (agreement that
    flattens as samples grow, as with datasets of several kinds), the projection is not to be
    relied on.

    Parameters
    ----------
    summary : pandas.DataFrame
        :attr:`ReplicabilityResult.summary` (``sample_size, rho_mean, rho_low, rho_high``).
    target : float, default 0.9
        In (0, 1).

    Returns
    -------
    AgreementProjection
    """
    from scipy.optimize import minimize_scalar  # only this projection needs it

    if not 0.0 < target < 1.0:
        raise ValueError(f"target is an agreement in (0, 1): got {target!r}")
    if summary.empty:
        raise ValueError("summary has no sample size to project from")
    n = summary["sample_size"].to_numpy(dtype=float)
    rho = summary["rho_mean"].to_numpy(dtype=float)
    fit = minimize_scalar(lambda r: float(((spearman_brown(n, r) - rho) ** 2).sum()), bounds=(0.0, 1.0 - 1e-9),
                          method="bounded", options={"xatol": 1e-10})
    r = float(fit.x)
    largest = int(np.argmax(n))
    at_largest = float(spearman_brown(n[largest], r))
    above = at_largest > float(summary["rho_high"].iloc[largest]) + 1e-9
    below = at_largest < float(summary["rho_low"].iloc[largest]) - 1e-9
    needed = None if r <= 1e-9 else int(np.ceil(target * (1.0 - r) / (r * (1.0 - target)) - 1e-9))
    return AgreementProjection(r=r, needed=needed, target=target, fits=not (above or below), above=above)
