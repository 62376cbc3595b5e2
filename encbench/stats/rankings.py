"""Per-dataset rankings of encoders (the "voters" of every rank aggregation)."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from encbench.stats._arrays import rank_last_axis
from encbench.stats._cube import build_cube


def dataset_ranks(scores: pd.DataFrame, by: str | Iterable[str] = ()) -> pd.DataFrame:
    """Rank the encoders within each dataset (and factor combination).

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` plus the ``by`` columns.
    by : str or iterable of str, default ()
        Factor columns; rankings are made per (combination, dataset).

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, dataset, encoder, cv_score, rank, average_rank``: ``rank`` is the dense
        rank (int, 1 = highest score, exactly equal scores share), ``average_rank`` the Friedman
        rank (ties get the mean of their positions). Only the rows with a result; sorted by the
        ``by`` columns, dataset, rank, encoder.

    Raises
    ------
    ValueError
        On invalid ``scores`` (see :func:`encbench.stats.consensus`).
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    cube = build_cube(scores, by)
    dense, average = rank_last_axis(cube.values, descending=True)
    g, d, e = np.nonzero(~np.isnan(cube.values))
    rank = dense[g, d, e].astype(np.int64)
    columns = {c: cube.keys[c].to_numpy()[g] for c in by}
    columns.update(dataset=cube.datasets[d], encoder=cube.encoders[e],
                   cv_score=cube.original()[g, d, e], rank=rank, average_rank=average[g, d, e])
    frame = pd.DataFrame(columns)
    return frame.sort_values([*by, "dataset", "rank", "encoder"], kind="stable").reset_index(drop=True)
