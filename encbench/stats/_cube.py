"""Input validation and the dense score cube every aggregation works on.

All strategies of DESIGN.md section 7 are computed on one array ``values[g, d, e]``: the
``cv_score`` of encoder ``e`` on dataset ``d`` in factor combination ``g`` (NaN = no result).
Working on a cube instead of looping over combinations is what makes ``consensus_table`` fast,
and resampling datasets (bootstrap, replicability) becomes plain fancy indexing of axis 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

SCORE_COLUMNS: tuple[str, ...] = ("dataset", "encoder", "cv_score")


@dataclass(frozen=True)
class Cube:
    """Scores of ``G`` factor combinations x ``D`` datasets x ``E`` encoders (NaN = missing).

    Attributes
    ----------
    values : numpy.ndarray
        Shape ``(G, D, E)``, float; NaN where an encoder has no result on a dataset.
    keys : pandas.DataFrame
        ``G`` rows, one column per grouping factor (no columns when there is no grouping).
    datasets, encoders : numpy.ndarray
        Labels of axes 1 and 2 (sorted).
    """

    values: np.ndarray
    keys: pd.DataFrame
    datasets: np.ndarray
    encoders: np.ndarray

    @property
    def present(self) -> np.ndarray:
        """``(G, E)`` bool: the encoder has at least one result in the combination."""
        return (~np.isnan(self.values)).any(axis=1)

    def take_datasets(self, index: np.ndarray) -> Cube:
        """A cube of ``len(index)`` combinations, row ``b`` using datasets ``index[b]`` of
        combination 0 (repeats allowed: each draw becomes its own voter)."""
        index = np.asarray(index)
        values = self.values[0][index]  # (B, S, E)
        keys = pd.DataFrame(index=pd.RangeIndex(len(index)))
        return Cube(values, keys, np.arange(index.shape[1]), self.encoders)


def check_scores(scores: object, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """Validate a long scores frame and return the rows to use (NaN scores dropped).

    Raises
    ------
    ValueError
        If ``scores`` is not a DataFrame, lacks a column, is empty, has a non-numeric or
        infinite ``cv_score``, or has a missing value in a key column.
    """
    if not isinstance(scores, pd.DataFrame):
        raise ValueError(f"scores must be a pandas DataFrame: got {type(scores).__name__!r}")
    required = tuple(by) + SCORE_COLUMNS
    missing = [c for c in required if c not in scores.columns]
    if missing:
        raise ValueError(
            f"scores lacks required column(s) {missing!r}: got columns {list(scores.columns)!r}"
        )
    if len(scores) == 0:
        raise ValueError("scores is empty: got 0 rows")
    raw = scores["cv_score"]
    if pd.api.types.is_bool_dtype(raw):
        raise ValueError(f"cv_score must be numeric: got dtype {str(raw.dtype)!r}")
    if not pd.api.types.is_numeric_dtype(raw):
        # An object column holding real numbers is accepted; anything else (strings included,
        # even "0.5") is named in the error.
        for index, value in raw.items():
            if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
                continue
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
                raise ValueError(f"cv_score must be numeric: got {value!r} in row {index!r}")
        raw = pd.Series([np.nan if v is None or v is pd.NA else float(v) for v in raw], index=raw.index)
    values = raw.to_numpy(dtype=float, na_value=np.nan)
    if np.isinf(values).any():
        first = float(values[np.isinf(values)][0])
        raise ValueError(f"cv_score must be finite: got {first!r}")
    frame = scores.loc[:, list(required)]
    frame = frame.assign(cv_score=values)
    frame = frame[~np.isnan(values)]
    if len(frame) == 0:
        raise ValueError("scores has no usable rows: got only missing (NaN) cv_score values")
    for column in required[:-1]:
        if frame[column].isna().any():
            raise ValueError(f"scores has missing values in key column {column!r}")
    return frame


def _factorize(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(column, sort=True)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)


def build_cube(scores: object, by: tuple[str, ...] = ()) -> Cube:
    """Validate ``scores`` and arrange it as a :class:`Cube` grouped by the ``by`` columns.

    Raises
    ------
    ValueError
        See :func:`check_scores`; also when one (combination, dataset, encoder) has several rows.
    """
    by = tuple(by)
    frame = check_scores(scores, by)
    key_codes, key_labels = [], []
    for column in by:
        codes, labels = _factorize(frame[column])
        key_codes.append(codes)
        key_labels.append(labels)
    if by:
        dims = tuple(len(labels) for labels in key_labels)
        flat_key = np.ravel_multi_index(tuple(key_codes), dims)
        unique_keys, group = np.unique(flat_key, return_inverse=True)
        per_column = np.unravel_index(unique_keys, dims)
        keys = pd.DataFrame({c: labels[codes] for c, labels, codes in zip(by, key_labels, per_column)})
    else:
        group = np.zeros(len(frame), dtype=np.int64)
        keys = pd.DataFrame(index=pd.RangeIndex(1))
    d_codes, datasets = _factorize(frame["dataset"])
    e_codes, encoders = _factorize(frame["encoder"])
    n_groups, n_datasets, n_encoders = len(keys), len(datasets), len(encoders)
    flat = (group * n_datasets + d_codes) * n_encoders + e_codes
    counts = np.bincount(flat, minlength=n_groups * n_datasets * n_encoders)
    if counts.max() > 1:
        cell = int(np.flatnonzero(counts > 1)[0])
        g, rest = divmod(cell, n_datasets * n_encoders)
        d, e = divmod(rest, n_encoders)
        where = ", ".join(f"{c}={keys.iloc[g][c]!r}" for c in by)
        hint = "" if by else " (pass one factor combination, or use consensus_table with by=...)"
        if "run_id" in scores.columns and scores["run_id"].nunique() > 1:
            hint += ("; the rows come from several runs: combine them first with "
                     "encbench.store.queries.one_score_per_experiment")
        raise ValueError(
            f"scores has {int(counts[cell])} rows for dataset={datasets[d]!r}, "
            f"encoder={encoders[e]!r}{', ' + where if where else ''}: expected one{hint}"
        )
    values = np.full(n_groups * n_datasets * n_encoders, np.nan)
    values[flat] = frame["cv_score"].to_numpy()
    return Cube(values.reshape(n_groups, n_datasets, n_encoders), keys, datasets, encoders)
