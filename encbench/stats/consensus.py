"""Consensus rankings of encoders: the aggregation strategies of docs/ARCHITECTURE.md, Consensus rankings.

Every strategy maps a score cube ``(G, D, E)`` (combinations x datasets x encoders, NaN = no
result) to consensus ranks ``(G, E)`` (1 = best, ties share, NaN = encoder absent from the
combination). Heuristics are computed for all combinations at once with array operations, which
is why :func:`consensus_table` needs no per-combination Python loop.

Conventions: per dataset, the encoders present are dense-ranked by ``cv_score`` (higher is
better; a lower-is-better metric named in a ``scoring`` column is negated first, see
:mod:`encbench.stats._cube`; exactly equal scores share a rank); a missing result is skipped by rank aggregations and
quality aggregations use the rows that exist. An encoder present in a combination whose aggregate
is undefined (Q-RM when all its datasets have IQR 0) is ranked after all others.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import vocab
from encbench.metrics import METRIC_REGISTRY
from encbench.stats._arrays import RowRanks, dense_rank, nanmedian_last, quantile_of_descending
from encbench.stats._cube import Cube, build_cube, threads
from encbench.stats.elo import bradley_terry_strengths, snap_ties
from encbench.stats.impute import fit_quality_difficulty
from encbench.stats.kemeny import kemeny_rank_vector
from encbench.stats.nemenyi import nemenyi_counts_of_means

#: every strategy of the registry (:data:`encbench.vocab.STRATEGY_REGISTRY`), in display order
STRATEGIES: tuple[str, ...] = vocab.AGGREGATIONS
#: the study's heuristics (the default set): all but the exact Kemeny solve and the fitted model
HEURISTIC_STRATEGIES: tuple[str, ...] = tuple(
    name for name, spec in vocab.STRATEGY_REGISTRY.items() if spec.heuristic)
DEFAULT_BY: tuple[str, ...] = vocab.FACTORS


class _RankedCube:
    """A cube plus its per-dataset rankings, computed once and shared by the strategies.

    The rankings come from one sort of each (combination, dataset) row
    (:class:`~encbench.stats._arrays.RowRanks`), kept in rank order: the rank strategies count
    them per (combination, encoder) with ``bincount`` instead of reducing ``(G, D, E)`` arrays,
    and Q-RM and Q-Th read each dataset's quantiles and best score off the sorted rows. Counts
    of integer ranks and sums of half-integers are exact in any order, so these give the
    numbers the cube's own reductions give; sums of scores keep the cube's reductions.
    """

    #: the most (combination, encoder, rank, position) counts :attr:`rank_counts` takes at once
    JOINT_COUNTS = 4_000_000
    #: combinations of at least this many cells get their rank counts one at a time
    BLOCK_CELLS = 1 << 16

    def __init__(self, cube: Cube, *, positions: bool = False):
        self.cube = cube
        self.values = cube.values
        # R-Nem's average ranks, summed, are the positions in rank order summed and amended
        # at the ties: counted with the ranks when asked for (and when the counts stay small)
        self._positions = positions
        self._position_sums: np.ndarray | None = None
        self._rows: RowRanks | None = None
        self._missing: np.ndarray | None = None
        self._count: np.ndarray | None = None
        self._dense: np.ndarray | None = None
        self._average: np.ndarray | None = None
        self._rank_counts: np.ndarray | None = None
        self._cells: tuple[np.ndarray, np.ndarray] | None = None
        self._valid: np.ndarray | None = None
        self._scratch: np.ndarray | None = None

    def scratch(self) -> np.ndarray:
        """A float array of the cube's shape for one strategy at a time to overwrite (one
        allocation for all of them: a fresh array of the cube's size costs as much as a pass)."""
        if self._scratch is None:
            self._scratch = np.empty(self.values.shape)
        return self._scratch

    @property
    def missing(self) -> np.ndarray:
        """``(G, D, E)`` bool: no score (the rankings' own mask once they are computed)."""
        if self._rows is not None:
            return self._rows.missing.reshape(self.values.shape)
        if self._missing is None:
            self._missing = np.isnan(self.values) if self.cube.missing is None else self.cube.missing
        return self._missing

    @property
    def count(self) -> np.ndarray:
        """``(G, E)`` int: on how many datasets each encoder has a score."""
        if self._count is None:
            self._count = self.values.shape[1] - np.count_nonzero(self.missing, axis=1)
        return self._count

    @property
    def present(self) -> np.ndarray:
        """``(G, E)`` bool: the encoder has a score in the combination (:attr:`Cube.present`)."""
        return self.count > 0

    def mean_over_datasets(self, x: np.ndarray) -> np.ndarray:
        """``(G, E)`` mean of ``x`` ``(G, D, E)`` over the datasets where the encoder has a
        score (``x`` NaN or 0 elsewhere, never read there), NaN without any: the numbers of
        :func:`~encbench.stats._arrays.nanmean` of ``x`` NaN where the cube is. ``x`` is
        overwritten (0 where the cube has no score), the cube's own values copied first."""
        if x is self.values:
            x = self.scratch()
            np.copyto(x, self.values)
        np.copyto(x, 0.0, where=self.missing)
        total = x.sum(axis=1)
        count = self.count
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / np.maximum(count, 1), np.nan)

    @property
    def rows(self) -> RowRanks:
        """The rankings of the ``G * D`` rows of the cube."""
        if self._rows is None:
            self._rows = RowRanks(self.values.reshape(-1, self.values.shape[2]), descending=True,
                                  missing=self.missing)
        return self._rows

    @property
    def dense(self) -> np.ndarray:
        """``(G, D, E)`` dense ranks per dataset (1 = best), NaN where missing."""
        if self._dense is None:
            self._dense = self.rows.dense().reshape(self.values.shape)
        return self._dense

    @property
    def average(self) -> np.ndarray:
        """``(G, D, E)`` average (Friedman) ranks per dataset, NaN where missing."""
        if self._average is None:
            self._average = self.rows.average().reshape(self.values.shape)
        return self._average

    @property
    def valid(self) -> np.ndarray:
        """``(G * D, E)`` bool: which sorted cells hold a score (the first ``n`` of a row)."""
        if self._valid is None:
            self._valid = np.arange(self.values.shape[2]) < self.rows.n[:, None]
        return self._valid

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """``(valid, cell)``: which sorted cells hold a score, and the (combination, encoder)
        of each as ``g * E + e``."""
        if self._cells is None:
            n_groups, n_datasets, n_encoders = self.values.shape
            group = np.repeat(np.arange(n_groups, dtype=np.int64) * n_encoders, n_datasets)
            self._cells = self.valid, self.rows.column + group[:, None]
        return self._cells

    def cell_of(self, position: np.ndarray) -> np.ndarray:
        """The (combination, encoder) ``g * E + e`` of the sorted cells at flat ``position``."""
        _, n_datasets, n_encoders = self.values.shape
        cell = position // (n_datasets * n_encoders)
        cell *= n_encoders
        cell += self.rows.column.ravel()[position]
        return cell

    def per_cell(self, mask: np.ndarray) -> np.ndarray:
        """``(G, E)`` count of the valid sorted cells where ``mask`` (a few a row)."""
        n_groups, _, n_encoders = self.values.shape
        position = np.flatnonzero(self.valid & mask)
        out = np.bincount(self.cell_of(position), minlength=n_groups * n_encoders)
        return out.reshape(n_groups, n_encoders).astype(float)

    @property
    def rank_counts(self) -> np.ndarray:
        """``(G, E, E + 1)``: on how many datasets each encoder has each dense rank."""
        if self._rank_counts is None:
            rows = self.rows
            n_groups, n_datasets, n_encoders = self.values.shape
            size = n_encoders * (n_encoders + 1)  # bins of a combination: (encoder, rank)
            # (with positions only where the cells outnumber the bins: else counting the bins
            # costs more than the average ranks)
            bins = n_groups * size * n_encoders
            joint = self._positions and bins <= self.JOINT_COUNTS and 4 * bins <= self.values.size
            if joint:
                size *= n_encoders  # and the position in the row
            # each sorted cell's bin within its combination, in the narrowest integers (cells
            # without a score in one more bin), counted one large combination at a time: the
            # integers bincount makes of them stay small
            index = rows.column.astype(np.min_scalar_type(size))
            index *= n_encoders + 1
            np.add(index, rows.dense_sorted, out=index, casting="unsafe")  # ranks are <= E
            if joint:
                index *= n_encoders
                index += np.arange(n_encoders, dtype=index.dtype)
            np.copyto(index, size, where=~self.valid, casting="unsafe")
            blocks = index.reshape(n_groups, -1)
            if blocks.shape[1] >= self.BLOCK_CELLS:
                counts = np.stack([np.bincount(block, minlength=size + 1)[:size] for block in blocks])
            else:  # many small combinations (resampled datasets): one count over all
                flat = blocks.astype(np.int64)
                flat += (np.arange(n_groups, dtype=np.int64) * (size + 1))[:, None]
                counts = np.bincount(flat.ravel(), minlength=n_groups * (size + 1))
                counts = counts.reshape(n_groups, size + 1)[:, :size]
            if joint:
                counts = counts.reshape(n_groups, n_encoders, n_encoders + 1, n_encoders)
                per_position = counts.sum(axis=2)
                self._position_sums = per_position @ np.arange(1, n_encoders + 1)  # exact: integers
                counts = counts.sum(axis=3)
            self._rank_counts = counts.reshape(n_groups, n_encoders, n_encoders + 1)
        return self._rank_counts

    def average_rank_sums(self) -> np.ndarray:
        """``(G, E)`` sums over the datasets of the encoders' average (Friedman) ranks.

        A cell's average rank is its 1-based position in rank order, but in a tie the mean of
        the tie's positions: the sums of positions (counted with :attr:`rank_counts`) plus,
        for the cells in ties alone, the difference. Sums of half-integers: exact in any order.
        """
        rows = self.rows
        n_groups, _, n_encoders = self.values.shape
        _ = self.rank_counts  # counts the positions too, when asked to
        if self._position_sums is None:
            valid, cell = self.cells()
            average = rows.average_sorted()
            np.copyto(average, 0.0, where=~valid)  # so every cell can be summed, without selecting
            total = np.bincount(cell.ravel(), weights=average.ravel(), minlength=n_groups * n_encoders)
            return total.reshape(n_groups, n_encoders)
        starts = rows._starts.ravel()
        tied = np.empty_like(starts)  # in a tie: not a tie's start followed by another's
        tied[:-1] = starts[1:]
        tied[-1:] = True
        tied &= starts
        np.logical_not(tied, out=tied)
        tied &= self.valid.ravel()
        index = np.flatnonzero(tied)
        total = self._position_sums.astype(float).ravel()
        if index.size:
            head = starts[index]  # the first cell of each tie (a tie's cells are all here)
            firsts = np.flatnonzero(head)
            lasts = np.empty_like(firsts)
            lasts[:-1] = firsts[1:] - 1
            lasts[-1] = len(index) - 1
            middle = (index[firsts] + index[lasts]) / 2.0  # the tie's mean position
            tie = np.cumsum(head) - 1
            shift = middle[tie] - index  # positions in one row: the row's start cancels
            total += np.bincount(self.cell_of(index), weights=shift, minlength=n_groups * n_encoders)
        return total.reshape(n_groups, n_encoders)

    def final(self, aggregate: np.ndarray, *, higher_is_better: bool) -> np.ndarray:
        """Dense consensus ranks from an aggregate score per (combination, encoder).

        Encoders whose aggregate is undefined (NaN while present) come last.
        """
        key = -aggregate if higher_is_better else aggregate.copy()
        key = np.where(self.present & np.isnan(key), np.inf, key)  # undefined: last
        key[~self.present] = np.nan
        return dense_rank(key, descending=False)


def _over_datasets(x: np.ndarray) -> np.ndarray:
    """Move the dataset axis last: ``(G, D, E) -> (G, E, D)`` for last-axis reductions."""
    return np.moveaxis(x, 1, -1)


def _count(mask: np.ndarray) -> np.ndarray:
    return mask.sum(axis=1).astype(float)


# The computations of the strategies of :data:`encbench.vocab.STRATEGY_REGISTRY`, one per entry.
# Each takes the votes and the strategy's parameters (by keyword, defaults from the registry) and
# returns its aggregate per (combination, encoder); the registry's ``higher_is_better`` turns the
# aggregate into ranks. A strategy whose direction is None (R-Kem) returns the ranks itself.
_COMPUTE: dict[str, Callable[..., np.ndarray]] = {}


def _computes(name: str) -> Callable[[Callable[..., np.ndarray]], Callable[..., np.ndarray]]:
    """Register the computation of the registry strategy ``name``."""
    if name not in vocab.STRATEGY_REGISTRY:
        raise ValueError(f"no strategy {name!r} in encbench.vocab.STRATEGY_REGISTRY: add its entry there")

    def register(compute: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        _COMPUTE[name] = compute
        return compute
    return register


@_computes("R-M")
def _r_m(v: _RankedCube) -> np.ndarray:
    counts = v.rank_counts
    total = (counts * np.arange(counts.shape[2])).sum(axis=2).astype(float)  # exact: integers
    n = counts.sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


@_computes("R-Md")
def _r_md(v: _RankedCube) -> np.ndarray:
    # the middle rank(s) of each encoder's ranks, read off the counts of each rank
    counts = v.rank_counts
    n = counts.sum(axis=2)
    below = np.cumsum(counts, axis=2)

    def rank_at(position: np.ndarray) -> np.ndarray:  # the position-th smallest rank (from 0)
        return (below <= position[:, :, None]).sum(axis=2).astype(float)

    median = (rank_at(np.clip((n - 1) // 2, 0, None)) + rank_at(np.clip(n // 2, 0, None))) / 2.0
    return np.where(n > 0, median, np.nan)


@_computes("R-B")
def _r_b(v: _RankedCube) -> np.ndarray:
    return v.rank_counts[:, :, 1].astype(float)


@_computes("R-W")
def _r_w(v: _RankedCube) -> np.ndarray:
    rows = v.rows
    worst = rows.dense_sorted[np.arange(len(rows.n)), np.maximum(rows.n - 1, 0)]  # last rank per dataset
    return v.per_cell(rows.dense_sorted == worst[:, None])


@_computes("Q-M")
def _q_m(v: _RankedCube) -> np.ndarray:
    return v.mean_over_datasets(v.values)


@_computes("Q-Md")
def _q_md(v: _RankedCube) -> np.ndarray:
    return nanmedian_last(_over_datasets(v.values), work=v.scratch(), counts=v.count)


@_computes("Q-RM")
def _q_rm(v: _RankedCube) -> np.ndarray:
    # Per dataset: (score - min) / IQR over the encoders present (numpy linear quantiles);
    # datasets with IQR 0 are left out for every encoder (the study's convention).
    rows, shape = v.rows, v.values.shape[:2]
    low = rows.sorted[np.arange(len(rows.n)), np.maximum(rows.n - 1, 0)].reshape(shape)
    upper, lower = (quantile_of_descending(rows.sorted, rows.n, q).reshape(shape) for q in (0.75, 0.25))
    iqr = upper - lower
    usable = iqr != 0  # NaN (absent dataset) compares unequal, but its scores are NaN anyway
    rescaled = np.subtract(v.values, low[:, :, None], out=v.scratch())
    with np.errstate(invalid="ignore", divide="ignore"):
        rescaled /= iqr[:, :, None]
    # the mean over the datasets where the encoder has a score and the IQR is not 0: those
    # with IQR 0 add 0 to the sums and leave the counts
    left_out = np.flatnonzero(~usable.ravel())
    n_groups, n_datasets, n_encoders = v.values.shape
    rescaled.reshape(-1, n_encoders)[left_out] = 0.0
    np.copyto(rescaled, 0.0, where=v.missing)  # its own array: no copy
    total = rescaled.sum(axis=1)
    count = v.count.copy()
    scored = ~v.missing.reshape(-1, n_encoders)[left_out]
    np.subtract.at(count, left_out // n_datasets, scored.astype(count.dtype))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


@_computes("Q-Th")
def _q_th(v: _RankedCube, *, theta: float) -> np.ndarray:
    best = v.rows.sorted[:, 0].reshape(v.values.shape[:2])  # NaN for a dataset without scores
    with np.errstate(invalid="ignore"):
        good = v.values >= theta * best[:, :, None]
    return _count(good)


@_computes("R-Nem")
def _r_nem(v: _RankedCube, *, alpha: float) -> np.ndarray:
    rows = v.rows
    n_sum = v.rank_counts.sum(axis=2)
    total = v.average_rank_sums()
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_ranks = np.where(n_sum > 0, total / np.maximum(n_sum, 1), np.nan)
    n_datasets = (rows.n > 0).reshape(v.values.shape[:2]).sum(axis=1)
    return nemenyi_counts_of_means(mean_ranks, n_datasets, alpha)


@_computes("R-Kem")
def _r_kem(v: _RankedCube, *, time_limit: float | None) -> np.ndarray:
    # One exact solve per combination (the MILP cannot be batched); ~ms each with lazy rows.
    out = np.full(v.present.shape, np.nan)
    for g in range(v.values.shape[0]):
        cols = np.flatnonzero(v.present[g])
        if cols.size == 0:
            continue
        ranks = v.dense[g][:, cols]
        ranks = ranks[(~np.isnan(ranks)).any(axis=1)]
        out[g, cols], _ = kemeny_rank_vector(ranks, time_limit=time_limit)
    return out


@_computes("Q-Imp")
def _q_imp(v: _RankedCube, *, n_iter: int) -> np.ndarray:
    quality, _ = fit_quality_difficulty(v.values, n_iter)
    return quality


@_computes("Elo")
def _elo(v: _RankedCube) -> np.ndarray:
    # Bradley-Terry log-strengths (the Elo ratings up to the scale and the reference's shift,
    # which leave the order alone); fitted strengths that agree to rounding are made equal, so
    # that encoders with the same wins share a rank.
    return snap_ties(bradley_terry_strengths(v.values), tol=1e-9)


@dataclass(frozen=True)
class _Strategy:
    compute: Callable[..., np.ndarray]
    spec: vocab.Strategy

    @property
    def params(self) -> tuple[str, ...]:
        return self.spec.param_names


def _bind(name: str, spec: vocab.Strategy) -> _Strategy:
    if name not in _COMPUTE:  # fails at import: a registry entry needs its computation
        raise ValueError(f"strategy {name!r} of encbench.vocab.STRATEGY_REGISTRY has no computation: "
                         f"add one here with @_computes({name!r})")
    return _Strategy(_COMPUTE[name], spec)


_REGISTRY: dict[str, _Strategy] = {name: _bind(name, spec) for name, spec in vocab.STRATEGY_REGISTRY.items()}


def strategy_parameters(strategy: str) -> tuple[str, ...]:
    """Names of the keyword parameters a strategy accepts (e.g. ``("theta",)`` for Q-Th)."""
    return _lookup(strategy).params


def _lookup(strategy: object) -> _Strategy:
    try:
        return _REGISTRY[strategy]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(f"unknown strategy {strategy!r}: expected one of {list(STRATEGIES)!r}") from None


def check_strategies(strategies: str | Iterable[str]) -> list[str]:
    """Validate a strategy name or list of names; returns the list (duplicates removed)."""
    if isinstance(strategies, str):
        strategies = [strategies]
    names = list(dict.fromkeys(strategies))
    if not names:
        raise ValueError("strategies is empty: got []")
    for name in names:
        _lookup(name)
    return names


def check_params(strategies: Sequence[str], params: dict[str, object]) -> dict[str, object]:
    """Validate keyword parameters against the strategies that use them.

    Each value is checked by its parameter's constraint in the registry
    (:meth:`encbench.vocab.StrategyParameter.validate`); an error names the strategy, the
    parameter, what it accepts and the value (``"strategy 'Q-Th': theta must be a number in
    (0, 1]: got 1.5"``).
    """
    users: dict[str, list[str]] = {}
    specs: dict[str, vocab.StrategyParameter] = {}
    for name in strategies:
        for param in _lookup(name).spec.params:
            users.setdefault(param.name, []).append(name)
            specs[param.name] = param
    checked = {}
    for key, value in params.items():
        if key not in specs:
            raise ValueError(
                f"unknown parameter {key!r} for strategies {list(strategies)!r}: "
                f"expected one of {sorted(specs)!r}"
            )
        checked[key] = specs[key].validate(value, users[key])
    return checked


def params_for(strategies: str | Iterable[str], values: Mapping[str, object] | None = None) -> dict[str, object]:
    """The parameters ``strategies`` use, taken from ``values`` and validated.

    One place turns parameter values (a page's widgets, a caller's keywords) into what a
    strategy accepts: values of parameters none of ``strategies`` uses are left out (the library
    rejects unused ones), parameters not in ``values`` are left to the registry's defaults.

    Parameters
    ----------
    strategies : str or iterable of str
        Strategy names of :data:`STRATEGIES`.
    values : mapping, optional
        Parameter name -> value, e.g. ``{"theta": 0.9, "alpha": 0.05}``; each name must be a
        parameter of some strategy of the registry.

    Returns
    -------
    dict
        ``{name: checked value}`` in the order of ``values``.

    Raises
    ------
    ValueError
        Unknown strategy, a name that is no strategy's parameter, or an invalid value.

    Examples
    --------
    >>> params_for(["R-M", "Q-Th"], {"theta": 0.9, "alpha": 0.05})
    {'theta': 0.9}
    """
    names = check_strategies(strategies)
    known = {p.name for spec in vocab.STRATEGY_REGISTRY.values() for p in spec.params}
    values = dict(values or {})
    for key in values:
        if key not in known:
            raise ValueError(f"unknown strategy parameter {key!r}: expected one of {sorted(known)!r}")
    used = {p for name in names for p in _lookup(name).params}
    return check_params(names, {k: v for k, v in values.items() if k in used})


def check_metrics(cube: Cube, strategies: Sequence[str]) -> None:
    """Refuse a strategy that is undefined for a combination's metric.

    Raises
    ------
    ValueError
        If a strategy marked ``ratio_scale`` in the registry (Q-Th, Q-Imp) meets a metric that
        is unbounded or lower-is-better (RMSE, MAE, R2).
    """
    needy = [name for name in strategies if _lookup(name).spec.ratio_scale]
    if not needy:
        return
    for metrics in cube.metrics:
        for metric in metrics:
            spec = METRIC_REGISTRY.get(metric)
            if spec is not None and not spec.ratio_scale:
                kind = "lower-is-better" if not spec.greater_is_better else "unbounded"
                raise ValueError(
                    f"strategy {needy[0]!r} is undefined for scoring {metric!r} ({kind}): it needs a "
                    f"bounded, higher-is-better metric such as AUC; rank strategies (R-M, R-Kem, ...) "
                    f"and Q-M, Q-Md, Q-RM work for every metric")


#: strategies whose ranks of a combination depend on that combination's scores alone, computed
#: by array operations that give each combination the same numbers whatever others are beside it
#: (Elo's fit and Q-Imp's sweeps are shared by all combinations, R-Kem solves one at a time)
_PER_COMBINATION = frozenset(HEURISTIC_STRATEGIES) | {"R-Nem"}
#: cubes of at least this many cells have those strategies computed in threads, a share of the
#: combinations each (numpy releases the interpreter's lock in its sorts and passes); smaller
#: ones take less time than starting threads saves
PARALLEL_CELLS = 2_000_000


def rank_cube(cube: Cube, strategies: Sequence[str], params: dict[str, object]) -> dict[str, np.ndarray]:
    """Consensus ranks ``(G, E)`` (NaN = absent) for each strategy; inputs already validated
    (:func:`check_metrics` is applied here).

    A large cube (:data:`PARALLEL_CELLS`) has its per-combination strategies computed in
    :func:`~encbench.stats._cube.threads` threads, a contiguous share of the combinations each: the same ranks as
    one pass over the whole cube, bit for bit.
    """
    check_metrics(cube, strategies)
    n_groups = cube.values.shape[0]
    n_threads = min(threads(), n_groups)
    split = [name for name in strategies if name in _PER_COMBINATION]
    if n_threads < 2 or not split or cube.values.size < PARALLEL_CELLS:
        return _rank_votes(cube, strategies, params)
    edges = np.linspace(0, n_groups, n_threads + 1).round().astype(int)
    with ThreadPoolExecutor(n_threads, thread_name_prefix="encbench-consensus") as pool:
        parts = list(pool.map(lambda bounds: _rank_votes(cube.groups(*bounds), split, params),
                              zip(edges[:-1], edges[1:])))
    rest = [name for name in strategies if name not in _PER_COMBINATION]
    joined = _rank_votes(cube, rest, params) if rest else {}
    joined.update({name: np.concatenate([part[name] for part in parts]) for name in split})
    return {name: joined[name] for name in strategies}


def _rank_votes(cube: Cube, strategies: Sequence[str], params: dict[str, object]) -> dict[str, np.ndarray]:
    """:func:`rank_cube` over one pass of the cube's votes."""
    votes = _RankedCube(cube, positions="R-Nem" in strategies)
    out = {}
    for name in strategies:
        strategy = _REGISTRY[name]
        kwargs = {p.name: params.get(p.name, p.default) for p in strategy.spec.params}
        result = strategy.compute(votes, **kwargs)
        direction = strategy.spec.higher_is_better
        out[name] = result if direction is None else votes.final(result, higher_is_better=direction)
    return out


def _to_series(ranks: np.ndarray, encoders: np.ndarray) -> pd.Series:
    present = ~np.isnan(ranks)
    names = encoders[present]
    values = ranks[present].astype(np.int64)
    order = np.lexsort((names.astype(str), values))
    return pd.Series(values[order], index=pd.Index(names[order], name="encoder"), name="rank")


def consensus(scores: pd.DataFrame, strategy: str = "R-M", **params: object) -> pd.Series:
    """Consensus ranking of encoders for one factor combination.

    Parameters
    ----------
    scores : pandas.DataFrame
        Long table with columns ``dataset, encoder, cv_score`` (higher is better; other columns
        are ignored) for ONE factor combination: at most one row per (dataset, encoder). Rows with
        a NaN ``cv_score`` count as missing results.
    strategy : str, default "R-M"
        One of :data:`STRATEGIES`; :data:`encbench.vocab.STRATEGY_REGISTRY` describes each
        (e.g. ``R-M`` mean rank, ``Q-Th`` times within ``theta`` of the best, ``R-Kem`` exact
        Kemeny-Young).
    **params
        The strategy's parameters, defaults and accepted values as in the registry:
        ``theta`` (Q-Th), ``alpha`` (R-Nem), ``time_limit`` (R-Kem), ``n_iter`` (Q-Imp).

    Returns
    -------
    pandas.Series
        Index ``encoder`` (every encoder in ``scores``), int dense rank named ``rank``
        (1 = best, ties share a rank), sorted by rank then encoder.

    Raises
    ------
    ValueError
        Unknown strategy or parameter, missing columns, empty input, non-numeric or infinite
        score, or several rows for one (dataset, encoder).

    Examples
    --------
    >>> ranking = consensus(scores, "Q-Th", theta=0.95)  # doctest: +SKIP
    """
    names = check_strategies(strategy)
    if len(names) != 1 or not isinstance(strategy, str):
        raise ValueError(f"strategy must be one strategy name: got {strategy!r}")
    params = check_params(names, params)
    cube = build_cube(scores)
    ranks = rank_cube(cube, names, params)[strategy]
    return _to_series(ranks[0], cube.encoders)


def consensus_table(
    scores: pd.DataFrame,
    strategies: str | Iterable[str] = HEURISTIC_STRATEGIES,
    by: str | Iterable[str] = DEFAULT_BY,
    **params: object,
) -> pd.DataFrame:
    """Consensus rankings of every factor combination and strategy at once.

    Parameters
    ----------
    scores : pandas.DataFrame
        Long table with the ``by`` columns and ``dataset, encoder, cv_score``.
    strategies : str or iterable of str, default :data:`HEURISTIC_STRATEGIES`
        Strategy names (see :func:`consensus`). Heuristics, R-Nem and Q-Imp are vectorised over
        combinations; R-Kem solves one exact problem per combination.
    by : str or iterable of str, default ("model", "tuning", "scoring")
        Columns defining a factor combination.
    **params
        Strategy parameters (``theta``, ``alpha``, ``time_limit``, ``n_iter``); each must be
        used by at least one requested strategy and is passed to those that use it.

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, strategy, encoder, rank``: one row per (combination, strategy, encoder
        present in that combination), rank an int dense rank (1 = best). Sorted by the ``by``
        columns, strategy (in the order given), rank, encoder.

    Raises
    ------
    ValueError
        As :func:`consensus`.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    names = check_strategies(strategies)
    params = check_params(names, params)
    cube = build_cube(scores, by)
    ranks = rank_cube(cube, names, params)
    return _long_table(cube, by, ranks)


def _long_table(cube: Cube, by: tuple[str, ...], ranks: dict[str, np.ndarray]) -> pd.DataFrame:
    names = list(ranks)
    stacked = np.stack([ranks[name] for name in names], axis=1)  # (G, S, E)
    g, s, e = np.nonzero(~np.isnan(stacked))
    rank = stacked[g, s, e].astype(np.int64)
    encoder_order = np.argsort(np.argsort(cube.encoders.astype(str), kind="stable"))
    order = np.lexsort((encoder_order[e], rank, s, g))  # keys are sorted, so g orders them
    g, s, e, rank = g[order], s[order], e[order], rank[order]
    columns = {column: cube.keys[column].to_numpy()[g] for column in by}
    columns["strategy"] = np.asarray(names, dtype=object)[s]
    columns["encoder"] = cube.encoders[e]
    columns["rank"] = rank
    return pd.DataFrame(columns)
