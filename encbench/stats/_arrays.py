"""Vectorised NaN-aware ranking and quantile helpers along the last axis of an array.

NaN marks a missing result and never takes part in a ranking or a quantile.
"""
from __future__ import annotations

import numpy as np


_LOW_63 = np.int64(0x7FFF_FFFF_FFFF_FFFF)


class RowRanks:
    """Dense and average ranks of each row of a 2-D array, from one sort, kept in rank order.

    Row ``r`` sorted best first (the largest value first when ``descending``), NaN last:
    ``sorted[r, j]`` is its ``j``-th value, from column ``column[r, j]`` (cell ``flat[r, j]`` of
    ``x.ravel()``), with dense rank ``dense_sorted[r, j]``; ``n[r]`` values are not NaN (the
    cells ``j >= n[r]`` are NaN and their ranks mean nothing). Aggregations read these
    directly; :meth:`dense` and :meth:`average` put the ranks back where the values were.

    The sort is one ``numpy.sort`` of 64-bit integers that order as the floats do, with the
    column number in their lowest bits (several times faster than ``argsort`` along short
    rows). Two values that differ only in those bits can come out in the wrong order: each row
    is checked, and a row found so is sorted again with a stable ``argsort``, so the ranks are
    exact whatever the values. Equal values (``0.0`` and ``-0.0`` included) share a rank.
    """

    def __init__(self, x: np.ndarray, *, descending: bool, missing: np.ndarray | None = None):
        x = np.ascontiguousarray(x, dtype=float)
        if x.ndim != 2:
            raise ValueError(f"RowRanks takes a 2-D array: got shape {x.shape!r}")
        rows, m = x.shape
        self.shape = x.shape
        # ``missing``: ``isnan(x)`` where the caller has it already
        self.missing = np.isnan(x) if missing is None else missing.reshape(x.shape)
        self.n = m - np.count_nonzero(self.missing, axis=1)
        bits = max(1, (m - 1).bit_length())
        mask = np.int64((1 << bits) - 1)
        columns = np.arange(m, dtype=np.int64)
        bits_of_x = x.view(np.int64)
        if rows and m and bits_of_x.min() >= 0:
            # no sign bit set (scores are mostly so): the bits order as the floats do already,
            # and the key below is made in two passes, the same key as in the general case
            key = bits_of_x | mask
            key ^= ~columns if descending else mask ^ columns
        else:
            key = bits_of_x.copy()
            flip = np.right_shift(key, 63)  # -1 where the float is negative, else 0
            flip &= _LOW_63
            key ^= flip  # now the integers order as the floats do (-0.0 just below 0.0)
            del flip
            if descending:
                np.invert(key, out=key)
            key &= ~mask
            key |= columns
        np.copyto(key, (_LOW_63 & ~mask) | columns, where=self.missing)  # NaN after any number
        key.sort(axis=-1)
        key &= mask
        self.column = key.astype(np.min_scalar_type(-m))  # small integers: a few bytes a cell
        key += (np.arange(rows, dtype=np.int64) * m)[:, None]
        self.flat = key
        values = np.empty(x.shape)
        np.take(x.ravel(), self.flat.ravel(), out=values.ravel())
        self.sorted = values
        with np.errstate(invalid="ignore"):
            wrong = values[:, 1:] > values[:, :-1] if descending else values[:, 1:] < values[:, :-1]
        bad = np.flatnonzero(wrong.any(axis=1)) if wrong.any() else np.empty(0, dtype=np.int64)
        if bad.size:  # values the key's high bits could not tell apart: sort those rows exactly
            sub = x[bad]
            order = np.argsort(-sub if descending else sub, axis=-1, kind="stable")
            self.column[bad] = order
            self.flat[bad] = order + (bad * m)[:, None]
            self.sorted[bad] = np.take_along_axis(sub, order, axis=-1)
        starts = np.empty(x.shape, dtype=bool)
        starts[:, :1] = True
        np.not_equal(values[:, 1:], values[:, :-1], out=starts[:, 1:])  # NaN: a start each
        self._starts = starts
        # one cumulative sum over the whole array (along short rows it is several times slower),
        # less each row's count before its first cell
        dense = np.cumsum(starts.ravel(), dtype=np.int32 if x.size < 2**31 else np.int64).reshape(x.shape)
        # the number of ties before each row: the rank of a cell, plus it, less one, numbers
        # its tie over the whole array
        self._ties_before = dense[:, :1] - 1
        if rows:
            dense -= self._ties_before
        self.dense_sorted = dense

    def _scatter(self, sorted_values: np.ndarray) -> np.ndarray:
        out = np.empty(self.shape)
        out.ravel()[self.flat.ravel()] = sorted_values.ravel()
        np.copyto(out, np.nan, where=self.missing)
        return out

    def dense(self) -> np.ndarray:
        """Dense ranks in the places of ``x`` (float, NaN where ``x`` is NaN)."""
        return self._scatter(self.dense_sorted)

    def average_sorted(self) -> np.ndarray:
        """Average (Friedman) ranks in rank order: ties get the mean of their positions."""
        rows, m = self.shape
        if not rows or not m:
            return np.empty(self.shape)
        first = np.flatnonzero(self._starts.ravel())  # where each tie starts, over the whole array
        ends = np.empty_like(first)  # and one past where it ends (no tie spans two rows)
        ends[:-1] = first[1:]
        ends[-1] = rows * m
        ends += first
        first //= m
        first *= 2 * m
        first -= 1
        ends -= first  # first + last + 2, less twice the row's start
        middle = ends / 2.0  # the mean of the 1-based positions of the tie in its row
        tie = self.dense_sorted + self._ties_before
        tie -= 1
        return middle[tie]

    def average(self) -> np.ndarray:
        """Average ranks in the places of ``x`` (float, NaN where ``x`` is NaN)."""
        return self._scatter(self.average_sorted())


def rank_last_axis(x: np.ndarray, *, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """Dense and average ranks of ``x`` along its last axis, ignoring NaN.

    Parameters
    ----------
    x : numpy.ndarray
        Any shape ``(..., m)``; NaN = missing.
    descending : bool
        True ranks the largest value first (scores), False the smallest (aggregate losses).

    Returns
    -------
    dense, average : numpy.ndarray
        Same shape as ``x``, float, NaN where ``x`` is NaN. ``dense`` gives exactly equal values
        one rank and the next value the next integer; ``average`` is the Friedman rank (ties get
        the mean of the positions they occupy).
    """
    x = np.asarray(x, dtype=float)
    shape = x.shape
    if x.ndim == 0:
        raise ValueError("rank_last_axis needs at least one axis: got a scalar")
    if x.size == 0:
        return np.empty(shape), np.empty(shape)
    ranks = RowRanks(x.reshape(-1, shape[-1]), descending=descending)
    return ranks.dense().reshape(shape), ranks.average().reshape(shape)


def dense_rank(x: np.ndarray, *, descending: bool) -> np.ndarray:
    """Dense ranks along the last axis (see :func:`rank_last_axis`)."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 0 or x.size == 0:
        return rank_last_axis(x, descending=descending)[0]
    return RowRanks(x.reshape(-1, x.shape[-1]), descending=descending).dense().reshape(x.shape)


def nanmean(x: np.ndarray, axis: int) -> np.ndarray:
    """Mean over ``axis`` ignoring NaN; NaN (no warning) where every value is missing."""
    valid = ~np.isnan(x)
    count = valid.sum(axis=axis)
    total = np.where(valid, x, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _sorted_with_counts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.sort(x, axis=-1), (~np.isnan(x)).sum(axis=-1)


def _pick(s: np.ndarray, index: np.ndarray) -> np.ndarray:
    return np.take_along_axis(s, index[..., None], axis=-1)[..., 0]


def nanquantile_last(x: np.ndarray, q: float) -> np.ndarray:
    """``numpy.nanquantile(x, q, axis=-1)`` with the default 'linear' method, vectorised.

    Reproduces numpy's interpolation bit for bit (numpy interpolates from the upper neighbour
    when the fraction is at least 0.5), so that Q-RM's IQR-0 test and rescaled values agree
    exactly with ``numpy.percentile``/``scipy.stats.iqr`` as the study used them.
    """
    return _quantile_of_sorted(*_sorted_with_counts(x), q)


def quantile_of_descending(s: np.ndarray, n: np.ndarray, q: float) -> np.ndarray:
    """:func:`nanquantile_last` of rows already sorted largest first, NaN last (``n`` numbers
    each), as :class:`RowRanks` keeps them with ``descending=True``: the same numbers."""
    return _quantile_of_sorted(s, n, q, descending=True)


def _quantile_of_sorted(s: np.ndarray, n: np.ndarray, q: float, *, descending: bool = False) -> np.ndarray:
    position = (n - 1) * q
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, np.maximum(n - 1, 0))
    below = np.clip(below, 0, None)
    t = position - below
    if descending:  # the i-th smallest of n sits at n - 1 - i
        last = np.maximum(n - 1, 0)
        a, b = _pick(s, last - below), _pick(s, last - above)
    else:
        a, b = _pick(s, below), _pick(s, above)
    diff = b - a
    result = np.where(t >= 0.5, b - diff * (1.0 - t), a + diff * t)
    return np.where(n > 0, result, np.nan)


def nanmedian_last(x: np.ndarray, *, work: np.ndarray | None = None,
                   counts: np.ndarray | None = None) -> np.ndarray:
    """Median along the last axis ignoring NaN: the middle value, or the mean of the two.

    ``work``, optional: a float array of ``x.size`` cells this may overwrite (long rows are
    copied there instead of to a new array); ``counts``, optional: the numbers (not NaN) of
    each row, ``x.shape[:-1]``, where the caller has them.
    """
    x = np.asarray(x, dtype=float)
    if x.ndim and x.shape[-1] >= _SELECT_FROM and x.size:
        return _nanmedian_select(x, work, counts)
    s, n = _sorted_with_counts(x)
    lower = np.clip((n - 1) // 2, 0, None)
    upper = np.clip(n // 2, 0, None)
    result = (_pick(s, lower) + _pick(s, upper)) / 2.0
    return np.where(n > 0, result, np.nan)


#: rows at least this long get their medians by selection, one row at a time (a sort of long
#: rows costs several times more; along short rows the loop would cost more than the sort)
_SELECT_FROM = 256


def _nanmedian_select(x: np.ndarray, work: np.ndarray | None = None,
                      counts: np.ndarray | None = None) -> np.ndarray:
    """:func:`nanmedian_last` by ``numpy.partition`` of each row (NaN sorts after every number):
    the same middle values, so the same medians."""
    shape, m = x.shape[:-1], x.shape[-1]
    if work is None or work.size != x.size or work.dtype != np.float64 or not work.flags.c_contiguous:
        rows = np.array(x, order="C").reshape(-1, m)  # a copy: partitioned in place
    else:
        rows = work.reshape(x.shape)
        np.copyto(rows, x)
        rows = rows.reshape(-1, m)
    n = m - np.count_nonzero(np.isnan(rows), axis=1) if counts is None else np.ravel(counts)
    out = np.full(len(rows), np.nan)
    for i in np.flatnonzero(n):
        row, count = rows[i], int(n[i])
        lower, upper = (count - 1) // 2, count // 2
        row.partition(lower)
        # the next value up is the smallest number beyond the lower one (fmin skips NaN)
        above = row[lower] if upper == lower else np.fmin.reduce(row[lower + 1:])
        out[i] = (row[lower] + above) / 2.0
    return out.reshape(shape)
