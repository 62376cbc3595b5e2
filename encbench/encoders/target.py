"""Supervised target encoders: MT, WoE, ME_m, PBMT_t, DMT_n and CatBoost (CB).

All statistics come from the training data only (``fit``); ``transform`` never sees a target.
``y`` is the 0/1 target (any numeric target works except for WoE). The prior is ``mean(y)``.
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state

from ._base import TableEncoder

__all__ = [
    "MeanTargetEncoder", "WoEEncoder", "MeanEstimateEncoder", "PreBinnedMeanTargetEncoder",
    "DiscretizedMeanTargetEncoder", "CatBoostEncoder", "level_stats", "prebin_levels",
]


def level_stats(codes: np.ndarray, n_levels: int, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-level row counts and target sums (levels ``0 .. n_levels-1``)."""
    counts = np.bincount(codes, minlength=n_levels).astype(float)
    sums = np.bincount(codes, weights=y, minlength=n_levels)
    return counts, sums


def check_unknown_value(value, owner: str):
    """Validate an ``unknown_value`` parameter: ``"prior"`` or a finite number."""
    if isinstance(value, str) and value == "prior":
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value):
        return float(value)
    raise ValueError(f"{owner}: unknown_value must be 'prior' or a finite number, got {value!r}")


class _SupervisedTableEncoder(TableEncoder):
    _supervised = True

    def _check_params(self):
        check_unknown_value(getattr(self, "unknown_value", "prior"), type(self).__name__)

    def _fit_tables(self, codes, y):
        check_unknown_value(getattr(self, "unknown_value", "prior"), type(self).__name__)
        self.prior_ = self._prior(y)
        super()._fit_tables(codes, y)

    def _prior(self, y) -> float:
        return float(np.mean(y))

    def _unknown(self, prior: float | None = None) -> float:
        """Encoding of a level not seen in fit: the prior, or the fixed ``unknown_value``."""
        value = getattr(self, "unknown_value", "prior")
        if isinstance(value, str):
            return self.prior_ if prior is None else prior
        return float(value)


class MeanTargetEncoder(_SupervisedTableEncoder):
    """Mean-Target (MT): each level is encoded by the mean of y over its training rows.

    Unseen levels (and missing values when fit saw none) get ``unknown_value``.
    ``fit_transform`` equals ``fit(X, y).transform(X)``: training rows see their own target
    (use ``CrossValidatedEncoder`` for out-of-fold encodings).

    Parameters
    ----------
    unknown_value : "prior" or float, default="prior"
        Encoding of levels not seen in fit (and of missing values when fit saw none):
        ``"prior"`` is ``mean(y)`` of the training data; the study's own target encoders used
        ``-1`` (its ``Encoder`` base class), which the registry's configuration reproduces.

    Attributes
    ----------
    prior_ : float
        Mean of the training target.
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Input column names seen in ``fit`` (only when they were all strings).
    output_spec_ : list of (int, str or None)
        One ``(input position, suffix)`` per output column (see ``get_feature_names_out``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"color": ["red", "blue", "red", "green", "blue", "red"]})
    >>> y = [1, 0, 1, 0, 1, 0]
    >>> from encbench.encoders import MeanTargetEncoder
    >>> MeanTargetEncoder().fit(X, y).transform(X)["color"].round(3).tolist()
    [0.667, 0.5, 0.667, 0.0, 0.5, 0.667]
    """

    def __init__(self, *, unknown_value="prior"):
        self.unknown_value = unknown_value

    def _fit_column(self, codes, n_levels, y):
        counts, sums = level_stats(codes, n_levels, y)
        return np.append(sums / counts, self._unknown())


class WoEEncoder(_SupervisedTableEncoder):
    """Weight of Evidence (WoE): ``log P(level | y=1) / P(level | y=0)``, regularised.

    As category_encoders' ``WOEEncoder`` (which the study used), with ``r = regularization``,
    ``P`` positives and ``N`` negatives in the training data::

        woe(level) = log( (pos_l + r) / (P + 2r) ) - log( (neg_l + r) / (N + 2r) )

    and levels seen only once are encoded as 0, as category_encoders does to avoid overfitting
    id-like columns. Unseen levels (and missing values when fit saw none) get 0: no evidence
    either way (the prior on the log-odds-ratio scale). Needs a 0/1 target.

    Parameters
    ----------
    regularization : float, default=1.0
        Pseudo-count added to each level's positive and negative counts.

    Attributes
    ----------
    prior_ : float
        Mean of the training target.
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Input column names seen in ``fit`` (only when they were all strings).
    output_spec_ : list of (int, str or None)
        One ``(input position, suffix)`` per output column (see ``get_feature_names_out``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"color": ["red", "blue", "red", "green", "blue", "red"]})
    >>> y = [1, 0, 1, 0, 1, 0]
    >>> from encbench.encoders import WoEEncoder
    >>> WoEEncoder().fit(X, y).transform(X)["color"].round(3).tolist()
    [0.405, 0.0, 0.405, 0.0, 0.0, 0.405]
    """

    def __init__(self, *, regularization=1.0):
        self.regularization = regularization

    def _check_params(self):
        if not (isinstance(self.regularization, numbers.Real) and self.regularization > 0):
            raise ValueError(f"regularization must be > 0, got {self.regularization!r}")

    def _check_y(self, y, n_rows):
        """Any binary target: a 0/1 target as is; two other values are mapped to 0/1, the
        second in sorted order being the positive class (docs/ARCHITECTURE.md, Protocol)."""
        y = super()._check_y(y, n_rows)
        values = np.unique(y)
        if values.size > 2:
            raise ValueError(f"WoEEncoder needs a binary target (0/1 or two values), got "
                             f"{values.size} distinct values such as {values[:5]!r}")
        if np.isin(values, [0.0, 1.0]).all():
            return y
        if values.size == 1:
            raise ValueError(f"WoEEncoder: the target has one class only ({values[0]!r}), neither 0 "
                             "nor 1, so which class is positive is unknown")
        return (y == values[1]).astype(float)

    def _fit_column(self, codes, n_levels, y):
        r = float(self.regularization)
        counts, positives = level_stats(codes, n_levels, y)
        negatives = counts - positives
        n_pos, n_neg = float(y.sum()), float(len(y) - y.sum())
        woe = np.log((positives + r) / (n_pos + 2 * r)) - np.log((negatives + r) / (n_neg + 2 * r))
        woe[counts == 1] = 0.0
        return np.append(woe, 0.0)


class MeanEstimateEncoder(_SupervisedTableEncoder):
    """Mean-Estimate (ME_m): MT shrunk towards the prior with strength ``m``.

    ``ME(level) = (n_l * MT(level) + m * mean(y)) / (n_l + m)``. Unseen levels (and missing
    values when fit saw none) get ``unknown_value`` (the prior is the formula's value at n_l = 0).

    Parameters
    ----------
    m : float, default=1.0
        Regularisation strength (the study used 0.1, 1 and 10).
    unknown_value : "prior" or float, default="prior"
        Encoding of levels not seen in fit (and of missing values when fit saw none):
        ``"prior"`` is ``mean(y)`` of the training data; the study's own target encoders used
        ``-1`` (its ``Encoder`` base class), which the registry's configuration reproduces.

    Attributes
    ----------
    prior_ : float
        Mean of the training target.
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Input column names seen in ``fit`` (only when they were all strings).
    output_spec_ : list of (int, str or None)
        One ``(input position, suffix)`` per output column (see ``get_feature_names_out``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"color": ["red", "blue", "red", "green", "blue", "red"]})
    >>> y = [1, 0, 1, 0, 1, 0]
    >>> from encbench.encoders import MeanEstimateEncoder
    >>> MeanEstimateEncoder(m=1.0).fit(X, y).transform(X)["color"].round(3).tolist()
    [0.625, 0.5, 0.625, 0.25, 0.5, 0.625]
    """

    def __init__(self, *, m=1.0, unknown_value="prior"):
        self.m = m
        self.unknown_value = unknown_value

    def _check_params(self):
        super()._check_params()
        if not (isinstance(self.m, numbers.Real) and self.m >= 0):
            raise ValueError(f"m must be >= 0, got {self.m!r}")

    def _fit_column(self, codes, n_levels, y):
        m = float(self.m)
        counts, sums = level_stats(codes, n_levels, y)
        return np.append((sums + m * self.prior_) / (counts + m), self._unknown())


_SHARE_TOLERANCE = 1e-10  # shares within 1e-10 of the threshold count as reaching it (study)


def prebin_levels(counts: np.ndarray, threshold: float) -> np.ndarray:
    """Group levels into bins whose relative frequency is at least ``threshold`` (PBMT's rule).

    The rule of the study's code, which aims at the maximum number of bins (paper, section 3);
    with ``R`` the levels not yet binned, sorted by share (ties in level order):

    1. if ``R`` has one level, or its total share is below ``2 t``, ``R`` is the last bin;
    2. otherwise a bin is opened with the most frequent level of ``R`` and completed from the
       next levels down: a level is added if the bin stays below ``t`` with it, or if the
       rarer levels could not complete the bin without it; others are skipped, so the bin is
       completed by a small level rather than overshooting with a big one;
    3. once the bin reaches ``t``: if the rest of ``R`` is below ``t``, all of ``R`` is the last
       bin; else the bin is closed and step 1 repeats on the rest.

    So levels with share >= t get a bin of their own, rare levels are packed into bins that
    just reach ``t``, and every bin reaches ``t`` (unless all levels together do not). This
    reaches the brute-force maximum number of bins far more often than a plain greedy pass
    from rare to frequent levels (296 vs 260 of 300 random small cases); the exact maximum is
    a bin-covering problem, NP-hard in general.

    Parameters
    ----------
    counts : array of shape (L,)
        Training count of each level.
    threshold : float
        Minimum relative frequency of a bin, in (0, 1].

    Returns
    -------
    array of int, shape (L,)
        Bin index of each level, bins numbered from 0 in order of closing.
    """
    counts = np.asarray(counts, dtype=float)
    # Work with counts, whose sums are exact, rather than shares: "share >= t" is
    # "count >= t N", with the study's tolerance of 1e-10 on shares.
    n_rows = counts.sum()
    target = float(threshold) * n_rows
    tolerance = _SHARE_TOLERANCE * n_rows
    bins = np.empty(len(counts), dtype=np.intp)
    order = np.argsort(counts, kind="stable")  # remaining levels, rarest first
    sizes = counts[order]
    n_bins = 0
    while True:
        total = sizes.sum()
        if len(order) == 1 or total < 2 * target:
            bins[order] = n_bins
            return bins
        # rarer[j] = rows of the levels rarer than j (those the bin could still use)
        rarer = np.concatenate(([0.0], np.cumsum(sizes)[:-1]))
        taken = [len(order) - 1]
        filled = sizes[-1]
        pointer = len(order) - 2
        while filled + tolerance < target and pointer >= 0:
            missing = target - filled - tolerance
            # Jump over the skipped levels: a level is added if it keeps the bin below t
            # (size < missing: indices up to `fits`) or if the rarer ones cannot complete the
            # bin (rarer < missing: indices up to `needed`), and the rarest always is.
            fits = int(np.searchsorted(sizes, missing, side="left")) - 1
            needed = int(np.searchsorted(rarer, missing, side="left")) - 1
            level = max(min(pointer, fits), min(pointer, needed), 0)
            taken.append(level)
            filled += sizes[level]
            pointer = level - 1
        if total - filled < target:
            bins[order] = n_bins
            return bins
        bins[order[taken]] = n_bins
        n_bins += 1
        keep = np.ones(len(order), dtype=bool)
        keep[taken] = False
        order, sizes = order[keep], sizes[keep]


class PreBinnedMeanTargetEncoder(_SupervisedTableEncoder):
    """Pre-Binned Mean-Target (PBMT_t): bin rare levels together, then MT on the bins.

    Levels are grouped by :func:`prebin_levels` so that every bin holds at least a fraction
    ``threshold`` of the training rows; each level is encoded by the mean of y over its bin.
    Unseen levels (and missing values when fit saw none) get ``unknown_value``.

    Parameters
    ----------
    threshold : float, default=0.01
        Minimum relative frequency of a bin (the study used 0.001, 0.01, 0.1).
    unknown_value : "prior" or float, default="prior"
        Encoding of levels not seen in fit (and of missing values when fit saw none):
        ``"prior"`` is ``mean(y)`` of the training data; the study's own target encoders used
        ``-1`` (its ``Encoder`` base class), which the registry's configuration reproduces.

    Attributes
    ----------
    bins_ : list of ndarray
        Per column, the bin of each training level.
    prior_ : float
        Mean of the training target.
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Input column names seen in ``fit`` (only when they were all strings).
    output_spec_ : list of (int, str or None)
        One ``(input position, suffix)`` per output column (see ``get_feature_names_out``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"color": ["red", "blue", "red", "green", "blue", "red"]})
    >>> y = [1, 0, 1, 0, 1, 0]
    >>> from encbench.encoders import PreBinnedMeanTargetEncoder
    >>> PreBinnedMeanTargetEncoder(threshold=0.3).fit(X, y).transform(X)["color"].round(3).tolist()
    [0.667, 0.333, 0.667, 0.333, 0.333, 0.667]
    """

    def __init__(self, *, threshold=0.01, unknown_value="prior"):
        self.threshold = threshold
        self.unknown_value = unknown_value

    def _check_params(self):
        super()._check_params()
        if not (isinstance(self.threshold, numbers.Real) and 0 < self.threshold <= 1):
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold!r}")

    def _fit_column(self, codes, n_levels, y):
        t = float(self.threshold)
        counts, sums = level_stats(codes, n_levels, y)
        bins = prebin_levels(counts, t)
        n_bins = int(bins.max()) + 1
        bin_counts = np.bincount(bins, weights=counts, minlength=n_bins)
        bin_sums = np.bincount(bins, weights=sums, minlength=n_bins)
        self.bins_.append(bins)
        return np.append((bin_sums / bin_counts)[bins], self._unknown())

    def _fit_tables(self, codes, y):
        self.bins_ = []
        super()._fit_tables(codes, y)


def discretize(values: np.ndarray, n_bins: int, *, grid=None) -> np.ndarray:
    """The study's ``minmaxbins`` discretisation of a column's level encodings.

    With ``m`` and ``M`` the smallest and largest value: ``v -> m + (M - m) * floor(n (v - m) /
    (M - m)) / n``, i.e. each value falls to the lower bound of its interval of ``[m, M]`` cut
    into ``n_bins`` equal intervals, **except the maximum, which keeps its own value** ``M``
    (``floor(n) / n = 1``): it is not merged into the last interval. If all values are equal
    (``m == M``) every value becomes 1.0. The operations are those of the study's code
    (``Discretized(how="minmaxbins")``), in the same order, so the floats are identical.

    ``grid`` (default ``values``) gives ``m`` and ``M``: other values (e.g. the prior) are binned
    on the grid of the training levels, clipped to ``[m, M]``.
    """
    values = np.asarray(values, dtype=float)
    reference = values if grid is None else np.asarray(grid, dtype=float)
    low, high = reference.min(), reference.max()
    if low == high:
        return np.ones_like(values)
    scaled = np.clip((values - low) / (high - low), 0.0, 1.0)
    scaled = np.floor(n_bins * scaled) / n_bins
    return (high - low) * scaled + low


class DiscretizedMeanTargetEncoder(_SupervisedTableEncoder):
    """Discretized Mean-Target (DMT_n): MT, then equal-width discretisation of the MT values.

    The range ``[m, M]`` of the levels' MT values is split into ``n_bins`` intervals of equal
    length and each level is encoded by the lower bound of its interval (paper, section 3), as
    the study's code does it (:func:`discretize`): the level(s) with the largest MT keep ``M``
    (a value of their own), and if all levels have the same MT every level is encoded as 1.0.
    Unseen levels (and missing values when fit saw none) get ``unknown_value``; with
    ``"prior"``, the prior discretised on the training levels' grid (clipped to ``[m, M]``).

    Parameters
    ----------
    n_bins : int, default=5
        Number of intervals (the study used 2, 5, 10).
    unknown_value : "prior" or float, default="prior"
        Encoding of levels not seen in fit: ``"prior"`` (see above) or a fixed number; the
        study's code used ``-1``, which the registry's configuration reproduces.

    Attributes
    ----------
    prior_ : float
        Mean of the training target.
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Input column names seen in ``fit`` (only when they were all strings).
    output_spec_ : list of (int, str or None)
        One ``(input position, suffix)`` per output column (see ``get_feature_names_out``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"color": ["red", "blue", "red", "green", "blue", "red"]})
    >>> y = [1, 0, 1, 0, 1, 0]
    >>> from encbench.encoders import DiscretizedMeanTargetEncoder
    >>> DiscretizedMeanTargetEncoder(n_bins=2).fit(X, y).transform(X)["color"].round(3).tolist()
    [0.667, 0.333, 0.667, 0.0, 0.333, 0.667]
    """

    def __init__(self, *, n_bins=5, unknown_value="prior"):
        self.n_bins = n_bins
        self.unknown_value = unknown_value

    def _check_params(self):
        super()._check_params()
        if not (isinstance(self.n_bins, numbers.Integral) and self.n_bins >= 1):
            raise ValueError(f"n_bins must be a positive integer, got {self.n_bins!r}")

    def _fit_column(self, codes, n_levels, y):
        counts, sums = level_stats(codes, n_levels, y)
        means = sums / counts
        n_bins = int(self.n_bins)
        prior = discretize([self.prior_], n_bins, grid=means)[0]
        return np.append(discretize(means, n_bins), self._unknown(prior))


class CatBoostEncoder(_SupervisedTableEncoder):
    """CatBoost (CB) ordered target statistics.

    ``fit_transform`` (training data) encodes each row with the statistics of the rows before
    it only::

        CB(row) = (sum of y over earlier rows with the row's level + a * prior) / (count + a)

    so a training row never sees its own target. "Earlier" is the **row order of the data**
    (``shuffle=False``, the default): this is category_encoders' ``CatBoostEncoder``, which
    the study used, so published CB numbers are reproduced, including on files sorted by the
    target (where the first rows of a level only see one class). ``shuffle=True`` orders the
    rows by a random permutation (``random_state``) first, as the CatBoost paper prescribes
    (Prokhorenkova et al. 2018, section 3.2) - the better choice for data sorted by anything.

    ``transform`` (test data) uses all training rows: ``(sum_l + a * prior) / (n_l + a)``;
    unseen levels (and missing values when fit saw none) get the prior. Hence
    ``fit_transform(X, y)`` differs from ``fit(X, y).transform(X)``. The ``(sum + 1) /
    (count + 2)`` variant of the CatBoost benchmarks is ``a=2, prior=0.5``.

    Parameters
    ----------
    a : float, default=1.0
        Weight of the prior (pseudo-count).
    prior : float or None, default=None
        The prior; None means ``mean(y)`` of the training data.
    shuffle : bool, default=False
        Order training rows by a random permutation instead of their order in the data.
    random_state : int, RandomState or None, default=None
        Seed of the permutation (used only with ``shuffle=True``).

    Attributes
    ----------
    permutation_ : ndarray
        Order of the training rows used by the last ``fit_transform``.
    prior_ : float
        Mean of the training target.
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Input column names seen in ``fit`` (only when they were all strings).
    output_spec_ : list of (int, str or None)
        One ``(input position, suffix)`` per output column (see ``get_feature_names_out``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"color": ["red", "blue", "red", "green", "blue", "red"]})
    >>> y = [1, 0, 1, 0, 1, 0]
    >>> from encbench.encoders import CatBoostEncoder
    >>> CatBoostEncoder().fit_transform(X, y)["color"].round(3).tolist()  # ordered statistics
    [0.5, 0.5, 0.75, 0.5, 0.25, 0.833]
    """

    def __init__(self, *, a=1.0, prior=None, shuffle=False, random_state=None):
        self.a = a
        self.prior = prior
        self.shuffle = shuffle
        self.random_state = random_state

    def _prior(self, y) -> float:
        return float(np.mean(y)) if self.prior is None else float(self.prior)

    def _check_params(self):
        if not (isinstance(self.a, numbers.Real) and self.a > 0):
            raise ValueError(f"a must be > 0, got {self.a!r}")
        if self.prior is not None and not (isinstance(self.prior, numbers.Real) and np.isfinite(self.prior)):
            raise ValueError(f"prior must be None or a finite number, got {self.prior!r}")

    def _fit_column(self, codes, n_levels, y):
        a = float(self.a)
        counts, sums = level_stats(codes, n_levels, y)
        return np.append((sums + a * self.prior_) / (counts + a), self.prior_)

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on all rows, and encode the training rows with ordered statistics (see above).

        Returns
        -------
        DataFrame
            Ordered-statistics encodings of the training rows (not ``fit(X, y).transform(X)``).
        """
        frame = self._validate_X(X, reset=True)
        target = self._check_y(y, frame.shape[0])
        codes = self._fit_levels(frame)
        self._fit_tables(codes, target)
        if self.shuffle:
            order = check_random_state(self.random_state).permutation(frame.shape[0])
        else:
            order = np.arange(frame.shape[0])
        self.permutation_ = order
        a = float(self.a)
        out = np.empty((frame.shape[0], len(codes)))
        for j, column_codes in enumerate(codes):
            sums_before, counts_before = ordered_statistics(column_codes[order], target[order])
            out[order, j] = (sums_before + a * self.prior_) / (counts_before + a)
        return self._output(out, frame.index)


def ordered_statistics(codes: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row, the sum of y and the number of rows over *earlier* rows of the same level."""
    n = len(codes)
    order = np.argsort(codes, kind="stable")  # rows grouped by level, original order kept inside
    sorted_codes = codes[order]
    sorted_y = y[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    group_start = np.repeat(starts, np.diff(np.r_[starts, n]))
    cumulative = np.cumsum(sorted_y)
    # Exclusive cumulative sum within the group: total up to the row minus the row itself
    # minus everything before the group.
    before_group = np.where(group_start > 0, cumulative[group_start - 1], 0.0)
    sums = np.empty(n)
    counts = np.empty(n)
    sums[order] = cumulative - sorted_y - before_group
    counts[order] = np.arange(n) - group_start
    return sums, counts
