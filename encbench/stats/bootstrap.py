"""Bootstrap intervals on consensus ranks (beyond the study, docs/ARCHITECTURE.md, Consensus rankings).

Datasets are resampled with replacement (a dataset drawn twice votes twice) and the consensus is
recomputed on each resample; an encoder's interval is the central ``level`` range of its ranks.
All resamples are ranked at once as one cube of ``B`` combinations.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from encbench.stats._checks import check_level, check_positive_int
from encbench.stats._cube import build_cube
from encbench.stats.consensus import check_params, check_strategies, rank_cube

_CHUNK = 500  # resamples ranked per cube, to bound memory for large B


def rank_intervals(
    scores: pd.DataFrame,
    strategy: str = "R-M",
    B: int = 1000,
    seed: int | np.random.Generator | None = 0,
    *,
    level: float = 0.95,
    **params: object,
) -> pd.DataFrame:
    """Bootstrap interval of each encoder's consensus rank.

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` for one factor combination.
    strategy : str, default "R-M"
        Any strategy of :func:`encbench.stats.consensus` (R-Kem solves ``B`` exact problems,
        about 5-500 ms each).
    B : int, default 1000
        Number of resamples of the datasets (with replacement).
    seed : int, numpy.random.Generator or None, default 0
        Seed of ``numpy.random.default_rng``.
    level : float, default 0.95
        Coverage of the interval.
    **params
        Strategy parameters (see :func:`encbench.stats.consensus`).

    Returns
    -------
    pandas.DataFrame
        Columns ``encoder, rank, low, high``: the consensus rank on the data as given and the
        empirical ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the bootstrap ranks
        (numpy 'inverted_cdf', so bounds are ranks that occurred). Resamples in which an encoder
        has no result are skipped for it (NaN bounds if it never appears). Sorted by rank,
        then encoder.

    Raises
    ------
    ValueError
        On invalid scores, strategy, parameters, ``B`` or ``level``.
    """
    names = check_strategies(strategy)
    if len(names) != 1 or not isinstance(strategy, str):
        raise ValueError(f"strategy must be one strategy name: got {strategy!r}")
    params = check_params(names, params)
    B = check_positive_int(B, "B")
    level = check_level(level)
    cube = build_cube(scores)
    rng = np.random.default_rng(seed)
    n_datasets = cube.values.shape[1]
    point = rank_cube(cube, names, params)[strategy][0]
    draws = []
    for start in range(0, B, _CHUNK):
        size = min(_CHUNK, B - start)
        index = rng.integers(0, n_datasets, size=(size, n_datasets))
        draws.append(rank_cube(cube.take_datasets(index), names, params)[strategy])
    ranks = np.concatenate(draws, axis=0)  # (B, E)
    tail = (1.0 - level) / 2.0
    low = np.full(ranks.shape[1], np.nan)
    high = np.full(ranks.shape[1], np.nan)
    seen = (~np.isnan(ranks)).any(axis=0)
    if seen.any():
        bounds = np.nanquantile(ranks[:, seen], [tail, 1.0 - tail], axis=0, method="inverted_cdf")
        low[seen], high[seen] = bounds[0], bounds[1]
    present = ~np.isnan(point)
    frame = pd.DataFrame({
        "encoder": cube.encoders[present],
        "rank": point[present].astype(np.int64),
        "low": low[present],
        "high": high[present],
    })
    return frame.sort_values(["rank", "encoder"], kind="stable").reset_index(drop=True)
