"""Input validation and the dense score cube every aggregation works on.

Scores are oriented on the way in: a lower-is-better metric (RMSE, MAE: a ``scoring`` column
naming a metric of :mod:`encbench.metrics` with ``greater_is_better=False``) enters the cube
negated, so every strategy ranks "higher is better" and rank 1 is the best encoder whatever the
metric. :attr:`Cube.sign` undoes it where scores are handed back.

All strategies of docs/ARCHITECTURE.md, Consensus rankings are computed on one array ``values[g, d, e]``: the
``cv_score`` of encoder ``e`` on dataset ``d`` in factor combination ``g`` (NaN = no result).
Working on a cube instead of looping over combinations is what makes ``consensus_table`` fast,
and resampling datasets (bootstrap, replicability) becomes plain fancy indexing of axis 1.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from encbench.metrics import greater_is_better

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
    metrics : tuple of tuple of str
        Per combination, the metrics its scores come from (empty without a ``scoring`` column).
    sign : numpy.ndarray
        Per combination, +1.0, or -1.0 where the scores were negated (a lower-is-better metric):
        ``values * sign[:, None, None]`` are the scores as given.
    """

    values: np.ndarray
    keys: pd.DataFrame
    datasets: np.ndarray
    encoders: np.ndarray
    metrics: tuple[tuple[str, ...], ...] = ()
    sign: np.ndarray | None = None
    #: ``isnan(values)`` where the cube's builder has it (read, never written), else None
    missing: np.ndarray | None = field(default=None, repr=False, compare=False)

    def signs(self) -> np.ndarray:
        """:attr:`sign`, all +1.0 when it was not set."""
        return np.ones(self.values.shape[0]) if self.sign is None else self.sign

    def original(self) -> np.ndarray:
        """The scores as given (lower-is-better metrics un-negated)."""
        return self.values * self.signs()[:, None, None]

    @property
    def present(self) -> np.ndarray:
        """``(G, E)`` bool: the encoder has at least one result in the combination."""
        return (~np.isnan(self.values)).any(axis=1)

    def groups(self, start: int, stop: int) -> Cube:
        """Combinations ``start`` to ``stop - 1`` (views of this cube's arrays, not copies)."""
        return Cube(self.values[start:stop], self.keys.iloc[start:stop].reset_index(drop=True),
                    self.datasets, self.encoders, self.metrics[start:stop],
                    None if self.sign is None else self.sign[start:stop],
                    None if self.missing is None else self.missing[start:stop])

    def take_datasets(self, index: np.ndarray) -> Cube:
        """A cube of ``len(index)`` combinations, row ``b`` using datasets ``index[b]`` of
        combination 0 (repeats allowed: each draw becomes its own voter)."""
        index = np.asarray(index)
        values = self.values[0][index]  # (B, S, E)
        keys = pd.DataFrame(index=pd.RangeIndex(len(index)))
        metrics = self.metrics[:1] * len(index) if self.metrics else ()
        return Cube(values, keys, np.arange(index.shape[1]), self.encoders, metrics,
                    np.full(len(index), self.signs()[0]))


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
    finite = bool(np.isfinite(values).all())  # one pass for the common case
    if not finite and np.isinf(values).any():
        first = float(values[np.isinf(values)][0])
        raise ValueError(f"cv_score must be finite: got {first!r}")
    columns = list(required)
    if "scoring" in scores.columns and "scoring" not in columns:  # for the metric's direction
        columns.insert(0, "scoring")
    # the caller's columns, not copies (millions of rows: every copy counts; nothing writes them)
    frame = pd.DataFrame({c: scores[c] for c in columns if c != "cv_score"}, index=scores.index,
                         copy=False)
    frame["cv_score"] = values
    if not finite:
        usable = ~np.isnan(values)
        frame = frame[usable]
    if len(frame) == 0:
        raise ValueError("scores has no usable rows: got only missing (NaN) cv_score values")
    for column in required[:-1]:
        if frame[column].isna().any():
            raise ValueError(f"scores has missing values in key column {column!r}")
    return frame


def _codes(column: pd.Series, *, unused: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, labels, order)``: each row's index into ``labels`` (the column's distinct values,
    each one used, in no particular order) and the order that sorts ``labels``.

    A categorical column gives its codes without hashing a value; any other column is hashed
    once, unsorted. Nothing is sorted but the distinct values: the cube is put in label order
    afterwards, one pass over its cells instead of one over the rows per column. ``unused``
    keeps a category no row uses among the labels (no pass over the codes to find them), for a
    caller that keeps only the labels it meets.
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()  # int8 or int16 for a few categories
        labels = np.asarray(column.cat.categories, dtype=object)
        if len(codes) and not unused and codes.min() >= 0:
            counts = np.bincount(codes, minlength=len(labels))
            if not counts.all():  # categories no row uses: left out
                used = np.flatnonzero(counts)
                lookup = np.zeros(len(labels), dtype=np.int64)
                lookup[used] = np.arange(len(used))
                codes, labels = lookup[codes], labels[used]
    else:
        codes, labels, in_order = _factorize_runs(column, sort=True)
        labels = np.asarray(labels, dtype=object)
        if in_order and len(codes) and codes.min() >= 0:
            return codes, labels, np.arange(len(labels))
    if len(codes) and codes.min() < 0:  # a missing value: pandas' own rules for it
        codes, labels = pd.factorize(column, sort=True)
        return codes.astype(np.int64), np.asarray(labels, dtype=object), np.arange(len(labels))
    try:
        order = np.argsort(labels, kind="stable")
    except TypeError:  # values that do not compare (numbers and text): pandas sorts them
        codes, labels = pd.factorize(column.astype(object), sort=True)
        return codes.astype(np.int64), np.asarray(labels, dtype=object), np.arange(len(labels))
    return codes, labels, order


def _factorize_runs(column: pd.Series, *, sort: bool = False) -> tuple[np.ndarray, object, bool]:
    """``pandas.factorize(column, sort=False)``, hashing one row per run of equal neighbours;
    the third value says whether the labels came out sorted (``sort`` and runs: codes and
    labels then as ``sort=True`` gives them).

    Scores come from the store sorted by factor combination and dataset, so most key columns
    hold long runs of one value: comparing neighbours is several times cheaper than hashing
    every text value. An Arrow-backed text column without missing values is compared so (when
    its first rows have few runs); a column with few runs gets its codes from the runs' first
    rows (the same codes and labels, in order of first appearance, in the narrowest integers),
    any other column is hashed as it is (an Arrow array by Arrow's own dictionary encoding,
    which gives pandas' codes and labels).
    """
    n = len(column)
    dtype = column.dtype
    arrow_text = (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow") or (
        isinstance(dtype, pd.ArrowDtype) and pa_types_is_text(dtype))
    if n > 1 and arrow_text and not column.hasnans:
        import pyarrow as pa
        import pyarrow.compute as pc

        values = pa.array(column.array)  # the column's own Arrow data, not a copy
        head = values[:_RUNS_SAMPLE + 1]
        if n <= _RUNS_SAMPLE or np.count_nonzero(
                pc.not_equal(head[1:], head[:-1]).to_numpy(zero_copy_only=False)) < len(head) // 8:
            changes = pc.not_equal(values[1:], values[:-1]).to_numpy(zero_copy_only=False)
            heads = np.flatnonzero(changes)
            if len(heads) < n // 8:  # few runs: factorize their first rows
                heads = np.concatenate(([0], heads + 1))
                codes, labels = pd.factorize(column.iloc[heads], sort=sort)
                codes = codes.astype(np.min_scalar_type(-max(len(labels), 1)))
                return np.repeat(codes, np.diff(heads, append=n)), labels, sort
        if isinstance(values, pa.Array):
            encoded = pc.dictionary_encode(values)
            codes = encoded.indices.to_numpy(zero_copy_only=False)
            return codes, encoded.dictionary.to_numpy(zero_copy_only=False), False
    codes, labels = pd.factorize(column, sort=False)
    return codes, labels, False


#: first rows of a text column compared with their neighbours to tell whether runs are worth
#: looking for over the whole column
_RUNS_SAMPLE = 1 << 16


def pa_types_is_text(dtype: pd.ArrowDtype) -> bool:
    import pyarrow as pa

    return pa.types.is_string(dtype.pyarrow_dtype) or pa.types.is_large_string(dtype.pyarrow_dtype)


def _factorize(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, labels)`` as ``pandas.factorize(column, sort=True)`` gives them."""
    codes, labels, order = _codes(column)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes], labels[order]


def _combinations(codes: list[np.ndarray], dims: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``(unique flat keys, group of each row)`` of the rows' factor combinations, in the order
    of their codes.

    The combinations are few (models x tunings x scorings), so a count per possible key finds
    the ones present in one pass, where sorting millions of keys took most of the cube's time.
    """
    size = int(np.prod(dims, dtype=np.int64))
    n = len(codes[0]) if codes else 0
    if size > 4 * n + 1_000_000:  # sparse combinations: sort instead
        return np.unique(np.ravel_multi_index(tuple(codes), dims), return_inverse=True)
    flat_key = _flat_keys(codes, dims, n)
    unique_keys = np.flatnonzero(np.bincount(flat_key, minlength=size))
    lookup = np.empty(size, dtype=np.int64)
    lookup[unique_keys] = np.arange(len(unique_keys))
    return unique_keys, lookup[flat_key]


#: tables of at least this many rows have their key columns coded in :func:`threads` threads
#: (Arrow's comparisons and dictionary encoding release the interpreter's lock)
PARALLEL_ROWS = 500_000


def threads() -> int:
    """How many threads a large table or cube is split over: the cores this process may use, at
    most 2 (the heuristics at 7.7M rows gain 1.3-1.5x from two; a server serves other visitors too)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(2, cores))


def _all_codes(frame: pd.DataFrame, by: tuple[str, ...]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`_codes` (categories no row uses kept) of the ``by`` columns, then of ``dataset``
    and ``encoder``."""
    columns = [frame[column] for column in (*by, "dataset", "encoder")]
    n_text = sum(not isinstance(c.dtype, pd.CategoricalDtype) for c in columns)  # categories: no hashing
    n_threads = threads()
    if len(frame) < PARALLEL_ROWS or n_text < 2 or n_threads < 2:
        return [_codes(column, unused=True) for column in columns]
    with ThreadPoolExecutor(n_threads, thread_name_prefix="encbench-cube") as pool:
        return list(pool.map(lambda column: _codes(column, unused=True), columns))


def build_cube(scores: object, by: tuple[str, ...] = ()) -> Cube:
    """Validate ``scores`` and arrange it as a :class:`Cube` grouped by the ``by`` columns.

    Raises
    ------
    ValueError
        See :func:`check_scores`; also when one (combination, dataset, encoder) has several rows.
    """
    by = tuple(by)
    frame = check_scores(scores, by)
    # every code below is in first-appearance order (or category order); the cube is sorted by
    # label at the end. Categories no row uses are kept at first, a place in the cube each,
    # and the cube's empty combinations, datasets and encoders are left out afterwards, from
    # which cells were written: one pass over the cells, none over the rows per column.
    *parts, d_parts, e_parts = _all_codes(frame, by)
    dims = tuple(len(labels) for _, labels, _ in parts)
    d_codes, datasets, d_order = _in_order(*d_parts)
    e_codes, encoders, e_order = _in_order(*e_parts)
    n_keys = int(np.prod(dims, dtype=np.int64))
    if n_keys * len(datasets) * len(encoders) > 2 * len(frame) + 1_000_000:
        # many categories no row uses, or sparse combinations: find what is used first
        d_codes, datasets, d_order = _in_order(*_codes(frame["dataset"]))
        e_codes, encoders, e_order = _in_order(*_codes(frame["encoder"]))
        unique_keys, group = _combinations([codes for codes, _, _ in parts], dims) if by else (
            np.zeros(1, dtype=np.int64), np.zeros(len(frame), dtype=np.int64))
    else:
        unique_keys = np.arange(n_keys)  # every combination of the categories, for now
        group = _flat_keys([codes for codes, _, _ in parts], dims, len(frame))
    per_column = np.unravel_index(unique_keys, dims) if by else ()
    keys = pd.DataFrame({c: labels[codes] for c, (_, labels, _), codes in zip(by, parts, per_column)},
                        index=pd.RangeIndex(len(unique_keys)))
    n_groups, n_datasets, n_encoders = len(unique_keys), len(datasets), len(encoders)
    size = n_groups * n_datasets * n_encoders
    flat = group.astype(np.int64)  # cell numbers (64-bit: what indexing takes)
    flat *= n_datasets
    flat += d_codes
    flat *= n_encoders
    flat += e_codes
    values = np.full(size, np.nan)
    values[flat] = frame["cv_score"].to_numpy()  # finite: a cell left NaN was not written
    missing = np.isnan(values)
    if size - np.count_nonzero(missing) < len(flat):  # a cell written twice
        counts = np.bincount(flat, minlength=size)
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
    missing = missing.reshape(n_groups, n_datasets, n_encoders)
    used_groups = np.flatnonzero(~missing.reshape(n_groups, -1).all(axis=1))
    d_order = _used(d_order, missing, (0, 2))
    e_order = _used(e_order, missing, (0, 1))
    keys = keys.iloc[used_groups].reset_index(drop=True)
    if len(used_groups) < n_groups:  # the rows' combinations numbered among those used
        lookup = np.zeros(n_groups, dtype=np.int64)
        lookup[used_groups] = np.arange(len(used_groups))
        row_group = lambda: lookup[group]  # noqa: E731
    else:
        row_group = lambda: group.astype(np.int64)  # noqa: E731
    ranks = []
    for (_, _, order), codes in zip(parts, per_column):
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        ranks.append(rank[codes[used_groups]])
    group_order = np.lexsort(ranks[::-1]) if by else np.zeros(1, dtype=np.int64)  # in key order
    metrics, sign = _orientation(frame, row_group, len(used_groups), keys, by)
    values = values.reshape(n_groups, n_datasets, n_encoders)
    for g in used_groups[sign < 0].tolist():  # lower-is-better: negated (NaN left as it is)
        np.negative(values[g], out=values[g], where=~missing[g])
    # label order on every axis, the empty ones left out: one pass over the cells, skipped
    # where nothing changes
    group_index = used_groups[group_order]
    identity = [len(o) == n and np.array_equal(o, np.arange(n))
                for o, n in ((group_index, n_groups), (d_order, n_datasets), (e_order, n_encoders))]
    if not all(identity[1:]):
        values = values[np.ix_(group_index, d_order, e_order)]
        missing = np.isnan(values)
    elif not identity[0]:
        values = _take_groups(values, group_index)
        missing = _take_groups(missing, group_index)
    keys = keys.iloc[group_order].reset_index(drop=True)
    metrics = tuple(metrics[g] for g in group_order) if metrics else metrics
    return Cube(values, keys, datasets[d_order], encoders[e_order], metrics, sign[group_order],
                missing)


def _in_order(codes: np.ndarray, labels: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, labels, order)`` of :func:`_codes` with the labels sorted (``order`` then the
    identity): one look-up per row, where putting the cube's axis in order afterwards gathers
    every cell."""
    if np.array_equal(order, np.arange(len(order))):
        return codes, labels, order
    rank = np.empty(len(order), dtype=np.min_scalar_type(-max(len(order), 1)))
    rank[order] = np.arange(len(order))
    return rank[codes], labels[order], np.arange(len(order))


def _take_groups(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[index]``, in place where ``index`` only leaves groups out (blocks moved down
    and the end cut off: no second cube, the cut end stays allocated with it)."""
    if len(index) and np.all(np.diff(index) > 0):
        blocks = values.reshape(len(values), -1)
        for k, g in enumerate(index.tolist()):
            if k != g:  # g > k: block k is unused or moved already
                blocks[k] = blocks[g]
        return values[:len(index)]
    return values[index]


def _flat_keys(codes: list[np.ndarray], dims: tuple[int, ...], n: int) -> np.ndarray:
    """Each row's combination of codes as one number, in the narrowest integers that hold it
    (a few passes over bytes where ``ravel_multi_index`` makes 64-bit integers)."""
    size = int(np.prod(dims, dtype=np.int64))
    dtype = np.min_scalar_type(max(size - 1, 0))
    if not codes:
        return np.zeros(n, dtype=dtype)
    flat_key = codes[0].astype(dtype)
    for column, dim in zip(codes[1:], dims[1:]):
        flat_key *= dtype.type(dim)
        np.add(flat_key, column, out=flat_key, casting="unsafe")  # codes are within dims
    return flat_key


def _used(order: np.ndarray, missing: np.ndarray, axes: tuple[int, int]) -> np.ndarray:
    """``order`` (labels in sorted order) without the labels of no written cell."""
    used = ~missing.all(axis=axes)
    return order if used.all() else order[used[order]]


def _orientation(frame: pd.DataFrame, row_group: Callable[[], np.ndarray], n_groups: int,
                 keys: pd.DataFrame, by: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], ...], np.ndarray]:
    """The metrics of each combination and its sign (-1 for a lower-is-better metric).

    Raises
    ------
    ValueError
        If one combination pools metrics of opposite directions (no ranking means anything then).
    """
    sign = np.ones(n_groups)
    if "scoring" not in frame.columns:
        return (), sign
    if "scoring" in by:  # one metric per combination: its key says which
        per_group: list[list[str]] = [[str(m)] for m in keys["scoring"]]
    else:
        codes, names = _factorize(frame["scoring"].astype(str))
        pairs = np.flatnonzero(np.bincount(row_group() * len(names) + codes,
                                           minlength=n_groups * len(names)))
        per_group = [[] for _ in range(n_groups)]
        for pair in pairs:  # in name order within each combination
            g, code = divmod(int(pair), len(names))
            per_group[g].append(str(names[code]))
    for g, metrics in enumerate(per_group):
        directions = {greater_is_better(m) for m in metrics}
        if len(directions) > 1:
            where = ", ".join(f"{c}={keys.iloc[g][c]!r}" for c in by if c != "scoring")
            raise ValueError(
                f"scores pool metrics of opposite directions in one ranking{' (' + where + ')' if where else ''}: "
                f"got scoring {metrics!r}; rank higher-is-better and lower-is-better metrics apart")
        if directions == {False}:
            sign[g] = -1.0
    return tuple(tuple(m) for m in per_group), sign
