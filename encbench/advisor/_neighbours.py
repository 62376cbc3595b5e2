"""The advisor's distances: the reference datasets nearest to a table, and encoders in rank order.

Each distance feature of the task (:data:`encbench.metafeatures.DISTANCE_FEATURES`) is put on a
comparable scale: counts as ``log1p`` (a dataset of 1,000 rows is as far from one of 10,000 as that
one is from 100,000), shares as they are; then standardised by the mean and standard deviation over
the reference datasets (a constant feature counts for nothing) and compared by Euclidean distance.
Equal distances are broken by dataset key.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from encbench import vocab
from encbench.metafeatures import COUNT_FEATURES, DISTANCE_FEATURES


_ENCODER_POSITION = {name: i for i, name in enumerate(vocab.ALL_ENCODERS)}


def feature_matrix(table: pd.DataFrame, task: str = "binary") -> pd.DataFrame:
    """The distance features of a meta-feature table on their comparison scale.

    Parameters
    ----------
    table : pandas.DataFrame
        A ``dataset`` column and the task's distance features (as
        :func:`encbench.metafeatures.published_metafeatures` returns).
    task : str, default "binary"

    Returns
    -------
    pandas.DataFrame
        Index ``dataset``; counts as ``log1p``, shares as they are.

    Raises
    ------
    ValueError
        A feature column is missing or a value unknown (NaN).
    """
    names = list(DISTANCE_FEATURES[task])
    missing = [c for c in ["dataset", *names] if c not in table.columns]
    if missing:
        raise ValueError(f"meta-feature table lacks columns: got {missing!r}")
    values = table.set_index(table["dataset"].astype(str))[names].apply(pd.to_numeric, errors="coerce")
    unknown = values.index[values.isna().any(axis=1)].tolist()
    if unknown:
        raise ValueError(f"meta-features unknown for datasets: got {unknown[:10]!r}")
    for name in names:
        if name in COUNT_FEATURES:
            values[name] = np.log1p(values[name].astype(float))
    return values.astype(float)


def distance_array(query: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Distances of one row to each row of ``reference``, standardised by the reference."""
    mean = reference.mean(axis=0)
    std = reference.std(axis=0)
    std[std == 0.0] = np.inf  # a constant feature separates nothing
    return np.sqrt((((reference - mean) / std - (query - mean) / std) ** 2).sum(axis=1))


def by_distance(keys: Sequence[str], found: np.ndarray) -> list[int]:
    """Positions nearest first; equal distances by dataset key."""
    return sorted(range(len(keys)), key=lambda i: (found[i], natural_key(keys[i])))


def distances(query: pd.Series, reference: pd.DataFrame) -> pd.Series:
    """Standardised Euclidean distance of one dataset to each reference dataset.

    Parameters
    ----------
    query : pandas.Series
        One row of :func:`feature_matrix` (the features on their comparison scale).
    reference : pandas.DataFrame
        Rows of :func:`feature_matrix`; their mean and standard deviation standardise both.

    Returns
    -------
    pandas.Series
        Index ``dataset`` (the reference's), the distance, sorted nearest first (ties by key).
    """
    if reference.empty:
        raise ValueError("no reference datasets to compare with: got an empty table")
    found = distance_array(query[reference.columns].to_numpy(dtype=float), reference.to_numpy(dtype=float))
    keys = [str(k) for k in reference.index]
    order = by_distance(keys, found)
    return pd.Series(found[order], index=pd.Index([keys[i] for i in order], name="dataset"), name="distance")


def natural_key(key: str) -> tuple:
    return (0, int(key), "") if str(key).isdigit() else (1, 0, str(key))


def nearest(query: pd.Series, reference: pd.DataFrame, k: int | None) -> pd.Series:
    """The ``k`` reference datasets nearest to ``query`` (all of them for None)."""
    found = distances(query, reference)
    return found if k is None else found.iloc[:k]


def encoder_order(ranking: pd.DataFrame | pd.Series) -> list[str]:
    """Encoders best first: by consensus rank, ties in the vocabulary's order.

    ``ranking`` is a Series (index encoder, the rank) or a frame with ``encoder, rank`` columns.
    """
    if isinstance(ranking, pd.Series):
        ranking = ranking.rename("rank").rename_axis("encoder").reset_index()
    keyed = sorted(zip(ranking["rank"], ranking["encoder"]),
                   key=lambda item: (item[0], _ENCODER_POSITION.get(item[1], len(_ENCODER_POSITION)), item[1]))
    return [encoder for _, encoder in keyed]
