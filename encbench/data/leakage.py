"""Leakage statistics: how well each column alone predicts the target, and whether it is the
target recoded.

A column that predicts the target almost perfectly on its own (:data:`LEAK_AUC`) likely leaks the
answer (it is known only with or after the target); :mod:`encbench.data.validation` warns about
it, and the suites' curation (``benchmarks/curate_suites.py``) leaves it out. The statistics:

- :func:`single_feature_aucs` scores every column against a binary label at once, on a bounded
  seeded sample of rows;
- :func:`leak_scores` applies it to a target of any task, by a column's values and by where it
  is missing;
- :func:`recoded_target` and :func:`binned_target` find a column that the target determines
  (a class target recoded, a numeric target cut into ranges), which need not predict the target
  well (a coarser version of it does not) but is known only with it.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from encbench.data.columns import as_category_text, level_codes
from encbench.data.target import class_order, label_text


#: a single feature with at least this AUC (either direction) is flagged as likely leakage
LEAK_AUC = 0.99
#: rows used to estimate a single-feature AUC (a seeded sample beyond this) ...
LEAK_SAMPLE = 20_000
#: ... and at most this many cells (sampled rows x columns) in all: a wide table is checked on
#: fewer rows (never under :data:`LEAK_MIN_ROWS`), so the check stays within about a second
LEAK_CELLS = 4_000_000
LEAK_MIN_ROWS = 500
#: columns scored at once (bounds the memory of the rank matrices)
_LEAK_BLOCK = 256


def rank_auc(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """ROC AUC of each column of ``scores`` for the labels ``positive``, from ranks.

    The Mann-Whitney statistic of the positives' average ranks (ties count one half), which is
    the area under the ROC curve that :func:`sklearn.metrics.roc_auc_score` computes, for every
    column at once.

    Parameters
    ----------
    scores : array of shape (n_rows,) or (n_rows, n_columns)
        Higher means more likely positive; no NaN.
    positive : bool array of shape (n_rows,)
        Both classes present.

    Returns
    -------
    numpy.ndarray of shape (n_columns,)
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim == 1:
        scores = scores[:, None]
    positive = np.asarray(positive, dtype=bool)
    n, k = scores.shape
    n_pos = int(positive.sum())
    n_neg = n - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"rank_auc needs both classes, got {n_pos} positive and {n_neg} negative rows")
    order = np.argsort(scores, axis=0, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=0)
    # tied values form a group; every member of a group gets the group's average rank
    starts = np.ones((n, k), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    group = np.cumsum(starts, axis=0) - 1 + np.arange(k) * n      # distinct ids across columns
    position = np.broadcast_to(np.arange(1, n + 1, dtype=float)[:, None], (n, k))
    size = np.bincount(group.ravel(), minlength=n * k)
    average = np.bincount(group.ravel(), weights=position.ravel(), minlength=n * k) / np.maximum(size, 1)
    positive_rank_sum = np.where(positive[order], average[group], 0.0).sum(axis=0)
    return (positive_rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _leak_rows(n_rows: int, n_columns: int) -> np.ndarray | None:
    """The seeded rows the single-feature AUCs use (None: all of them)."""
    limit = min(LEAK_SAMPLE, max(LEAK_MIN_ROWS, LEAK_CELLS // max(n_columns, 1)))
    if n_rows <= limit:
        return None
    return np.sort(np.random.default_rng(0).choice(n_rows, limit, replace=False))


def _numeric_aucs(frame: pd.DataFrame, positive: np.ndarray) -> np.ndarray:
    """max(AUC, 1 - AUC) of each column as its own score (missing at the median); NaN where a
    column is all missing or constant."""
    values = np.column_stack([pd.to_numeric(frame.iloc[:, i], errors="coerce").to_numpy(dtype=float)
                              for i in range(frame.shape[1])])
    out = np.full(values.shape[1], np.nan)
    missing = np.isnan(values)
    usable = ~missing.all(axis=0)
    if not usable.any():
        return out
    values = values[:, usable]
    with warnings.catch_warnings():  # an all-missing column was left out above
        warnings.simplefilter("ignore", RuntimeWarning)
        medians = np.nanmedian(values, axis=0)
    values = np.where(np.isnan(values), medians, values)
    varies = (values != values[0]).any(axis=0)
    auc = np.full(values.shape[1], np.nan)
    if varies.any():
        auc[varies] = rank_auc(values[:, varies], positive)
    out[usable] = np.maximum(auc, 1.0 - auc)
    return out


def _categorical_aucs(frame: pd.DataFrame, positive: np.ndarray) -> np.ndarray:
    """max(AUC, 1 - AUC) of each column scored by its levels' positive rate on the other half.

    Seeded random halves (the same for every column); a level unseen in the other half gets
    that half's rate; the AUC is computed within each half and the two are averaged. NaN where
    no half has both classes.
    """
    n = len(positive)
    half = np.random.default_rng(1).permutation(n) % 2 == 0
    codes = level_codes(frame)
    # one bincount over every column: column j's levels are numbered from offsets[j]
    offsets = np.concatenate([[0], np.cumsum(codes.max(axis=0) + 1)[:-1]])
    flat = codes + offsets
    n_levels = int(flat.max()) + 1
    aucs = []
    for part in (half, ~half):
        other = ~part
        if not other.any() or positive[part].all() or not positive[part].any():
            continue
        seen = np.bincount(flat[other].ravel(), minlength=n_levels)
        hits = np.bincount(flat[other].ravel(),
                           weights=np.repeat(positive[other], flat.shape[1]).astype(float),
                           minlength=n_levels)
        rates = np.where(seen > 0, hits / np.maximum(seen, 1), positive[other].mean())
        score = rates[flat[part]]
        varies = (score != score[0]).any(axis=0)
        auc = np.full(flat.shape[1], 0.5)
        if varies.any():
            auc[varies] = rank_auc(score[:, varies], positive[part])
        aucs.append(auc)
    if not aucs:
        return np.full(frame.shape[1], np.nan)
    auc = np.mean(aucs, axis=0)
    return np.maximum(auc, 1.0 - auc)


def single_feature_aucs(frame: pd.DataFrame, positive: np.ndarray,
                        categorical: Sequence[str] = ()) -> pd.Series:
    """How well each column alone ranks the positive class: max(AUC, 1 - AUC), NaN if unknown.

    A numeric column is its own score (missing values at the median). A categorical column
    (those named in ``categorical``) is scored by its level's positive rate estimated on the
    *other* half of the rows (seeded random halves; a level unseen there gets that half's rate),
    so a column with many rare levels does not look predictive just because each level
    memorises its own rows; the AUC is computed within each half and averaged.

    Vectorised over columns (:func:`rank_auc`, in blocks of columns) and bounded: beyond
    :data:`LEAK_SAMPLE` rows, or :data:`LEAK_CELLS` cells, a seeded sample of the rows is used.

    Parameters
    ----------
    frame : pandas.DataFrame
        The feature columns (unique names).
    positive : bool array of shape (len(frame),)
    categorical : sequence of str
        Columns scored as categorical.

    Returns
    -------
    pandas.Series
        Indexed by column, in ``frame``'s order.
    """
    positive = np.asarray(positive, dtype=bool)
    result = pd.Series(np.nan, index=frame.columns, dtype=float)
    keep = _leak_rows(len(positive), frame.shape[1])
    if keep is not None:
        frame, positive = frame.iloc[keep], positive[keep]
    if frame.shape[1] == 0 or positive.all() or not positive.any():
        return result
    cat_set = set(categorical)
    for kind, scorer in ((True, _categorical_aucs), (False, _numeric_aucs)):
        names = [c for c in frame.columns if (c in cat_set) == kind]
        for start in range(0, len(names), _LEAK_BLOCK):
            block = names[start:start + _LEAK_BLOCK]
            result[block] = scorer(frame[block], positive)
    return result


def single_feature_auc(column: pd.Series, positive: np.ndarray, *, categorical: bool) -> float | None:
    """:func:`single_feature_aucs` of one column: max(AUC, 1 - AUC), or None when unknown."""
    name = column.name if column.name is not None else 0
    auc = single_feature_aucs(column.to_frame(name), positive, [name] if categorical else ())
    value = float(auc.iloc[0])
    return None if np.isnan(value) else value


def leak_scores(features: pd.DataFrame, y: pd.Series, task: str,
                categorical: Sequence[str] = ()) -> pd.DataFrame:
    """Each feature's single-feature AUC (max(AUC, 1 - AUC), :func:`single_feature_aucs`) for a
    target of any task, two per column: ``values`` (by its values) and ``missing`` (by whether it
    is missing: a column given only for some classes leaks them by its gaps); 0.5 where unknown.

    A binary target: its second class against the first. A regression target: above its median
    against the rest. A multiclass target: each class against the rest, the values' AUCs
    weighted by the classes' shares (a column that predicts the whole target), the gaps' the
    highest over the classes (a column missing exactly outside one class names that class).
    Rows without a target are left out. A multiclass target's classes share the cell budget of
    the sample (:data:`LEAK_CELLS`), so many classes do not multiply the time.

    Parameters
    ----------
    features : pandas.DataFrame
        The feature columns (unique names), row-aligned with ``y``.
    y : pandas.Series
        The target: class labels (any type) or numbers.
    task : {'binary', 'multiclass', 'regression'}
    categorical : sequence of str
        Columns scored as categorical.

    Returns
    -------
    pandas.DataFrame
        Columns ``values`` and ``missing``, indexed by feature in ``features``' order.
    """
    has_target = y.notna().to_numpy()
    features = features.loc[has_target].reset_index(drop=True)
    y = y.loc[has_target].reset_index(drop=True)
    if task == "multiclass":
        labels = y.map(label_text).to_numpy(dtype=object)
        masks = [labels == cls for cls in class_order(y)]
    elif task == "regression":
        numbers = pd.to_numeric(y, errors="coerce").to_numpy(float)
        masks = [numbers > np.median(numbers)]
    else:
        labels = y.map(label_text).to_numpy(dtype=object)
        masks = [labels == class_order(y)[-1]]
    keep = _leak_rows(len(y), features.shape[1] * len(masks))
    if keep is not None:
        features, masks = features.iloc[keep], [m[keep] for m in masks]
    gaps = features.loc[:, features.isna().any().to_numpy()].isna().astype(float)

    def by_values(positive: np.ndarray) -> pd.Series:
        return single_feature_aucs(features, positive, categorical).fillna(0.5)

    def by_gaps(positive: np.ndarray) -> pd.Series:
        scores = pd.Series(0.5, index=features.columns)
        if gaps.shape[1]:
            scores[gaps.columns] = single_feature_aucs(gaps, positive).fillna(0.5)
        return scores

    if task == "multiclass":
        values = sum(by_values(m) * m.mean() for m in masks)
        missing = pd.concat([by_gaps(m) for m in masks], axis=1).max(axis=1)
        return pd.DataFrame({"values": values, "missing": missing})
    return pd.DataFrame({"values": by_values(masks[0]), "missing": by_gaps(masks[0])})


#: a column is read as the target binned when it has at most this many values ...
BINNED_MAX_LEVELS = 20
#: ... each on at least this many rows (two levels of 10 rows each fall into disjoint target
#: ranges by chance with probability 2 / C(20, 10), about 1 in 92,000)
BINNED_MIN_ROWS = 10


def _levels_text(column: pd.Series) -> np.ndarray:
    return as_category_text(column).fillna("<missing>").to_numpy(dtype=object)


def recoded_target(column: pd.Series, labels: pd.Series) -> dict[str, str] | None:
    """The column's value for each class when the class target determines it (each class's rows
    all hold one value, missing counting as a value) and it takes at least two values; else
    None. A one-to-one map is the case of as many values as classes.

    ``labels`` are the class labels as text, row-aligned with ``column``, without missing values.
    """
    values = _levels_text(column)
    pairs = pd.DataFrame({"y": labels.to_numpy(dtype=object), "v": values}).drop_duplicates()
    if pairs["y"].duplicated().any() or pairs["v"].nunique() < 2:
        return None
    return dict(sorted(zip(pairs["y"], pairs["v"]), key=lambda kv: kv[0]))


def binned_target(column: pd.Series, y: np.ndarray) -> list[tuple[str, float, float]] | None:
    """The target's range on each of the column's values, in increasing order, when those ranges
    are disjoint (the column is the numeric target cut into ranges); else None. Only a column of
    2 to :data:`BINNED_MAX_LEVELS` values, each on at least :data:`BINNED_MIN_ROWS` rows, is
    judged; missing counts as a value.

    ``y``: the numeric target, row-aligned with ``column``, without missing values.
    """
    values = _levels_text(column)
    ranges = pd.Series(np.asarray(y, dtype=float)).groupby(values).agg(["min", "max", "size"])
    if not 2 <= len(ranges) <= BINNED_MAX_LEVELS or ranges["size"].min() < BINNED_MIN_ROWS:
        return None
    ranges = ranges.sort_values("min")
    if not (ranges["min"].to_numpy()[1:] > ranges["max"].to_numpy()[:-1]).all():
        return None
    return [(str(level), float(lo), float(hi)) for level, lo, hi
            in zip(ranges.index, ranges["min"], ranges["max"])]
