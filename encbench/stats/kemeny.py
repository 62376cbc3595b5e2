"""Exact Kemeny-Young aggregation into a weak order, solved with HiGHS and lazy transitivity rows.

Model (DESIGN.md section 7, following the study's formulation with ties and missing values):
for voter (dataset) ``v``, ``Y_v[i, j] = +1`` if ``rank_i <= rank_j`` (ties count both ways) and
``-1`` otherwise; pairs involving an encoder the voter does not rank count 0 and, when any voter
misses encoders, each voter's matrix is divided by ``w_v (w_v - 1)`` (``w_v`` = encoders it
ranks). With ``c = sum_v Y_v`` and binaries ``X[i, j]`` = "i is ranked at least as well as j":

    maximise   sum_{i != j} (2 X_ij - 1) c_ij
    subject to X_ij + X_ji >= 1                 (totality: every pair is ordered or tied)
               X_ik + X_kj - X_ij <= 1          (transitivity, for all distinct i, j, k)

The consensus is the dense rank of each encoder's row sum of X (more wins = better).

Solving: the n(n-1)(n-2) transitivity rows (29,760 for 32 encoders) are added lazily. Start with
totality only, solve the LP relaxation, add the violated transitivity rows, re-solve (HiGHS
warm-starts the dual simplex), repeat. An integral LP solution violating no transitivity row is
optimal for the full problem (its relaxation bound is attained). If the relaxation stays
fractional, the columns become binary and the same loop continues with MIP solves; a MIP optimum
of a subset of the rows that satisfies all rows is optimal for the full problem.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench.stats._arrays import dense_rank
from encbench.stats._checks import check_time_limit
from encbench.stats._cube import build_cube

log = logging.getLogger(__name__)

_INTEGRALITY_TOL = 1e-6
_VIOLATION_TOL = 1e-6
_MAX_ROWS_PER_ROUND = 4000
# Rows with LP slack above this are added before branch and bound (None: off, the default).
# Measured on the Replicability page's default figure (1,000 problems, benchmarks/
# bench_replicability.py): -0.5 cut the slowest problem from 3 MIP solves (16 s) to 1 (3 s) but
# cost more CPU over all problems (113 s against 97 s), so it stays off; kept to measure again.
_NEAR_SLACK: float | None = None


@dataclass(frozen=True)
class KemenyResult:
    """An exact Kemeny-Young consensus.

    Attributes
    ----------
    ranking : pandas.Series
        Index ``encoder``, int dense rank (1 = best, ties share a rank), sorted best first.
    objective : float
        Optimal value of ``sum_{i != j} (2 X_ij - 1) c_ij`` (agreement with the voters).
    solve_time : float
        Wall-clock seconds spent building and solving (excludes input validation).
    optimal : bool
        True when HiGHS proved optimality (always, unless ``time_limit`` stopped it).
    n_rounds : int
        Solver calls made (LP and MIP).
    n_transitivity_rows : int
        Transitivity rows that had to be added (out of ``n (n - 1) (n - 2)``).
    used_mip : bool
        Whether the LP relaxation stayed fractional and integer solves were needed.
    max_objective : float
        The objective a consensus agreeing with every voter on every pair would reach: the sum
        of ``|Y_v[i, j]|`` over voters and pairs (``V n (n - 1)`` on complete data; the number of
        voters ranking two or more encoders when voters are normalised, DESIGN.md section 7).
        The raw objective's scale depends on which of the two applies, so compare
        :attr:`agreement` across combinations instead.
    """

    ranking: pd.Series
    objective: float
    solve_time: float
    optimal: bool
    n_rounds: int
    n_transitivity_rows: int
    used_mip: bool
    max_objective: float = float("nan")

    @property
    def agreement(self) -> float:
        """``objective / max_objective`` in [-1, 1]: 1 = the consensus agrees with every voter on
        every pair, 0 = as much disagreement as agreement. Comparable across combinations."""
        if not self.max_objective or not np.isfinite(self.max_objective):
            return float("nan")
        return float(self.objective / self.max_objective)


def kemeny_weights(ranks: np.ndarray) -> np.ndarray:
    """The pairwise agreement matrix ``c`` from per-voter ranks.

    Parameters
    ----------
    ranks : numpy.ndarray
        ``(V, n)``: rank of each of ``n`` encoders for each voter (lower = better), NaN where
        the voter does not rank the encoder.

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` matrix ``c`` with a zero diagonal.
    """
    ranks = np.asarray(ranks, dtype=float)
    present = ~np.isnan(ranks)
    both = present[:, :, None] & present[:, None, :]
    with np.errstate(invalid="ignore"):
        at_least = ranks[:, :, None] <= ranks[:, None, :]
    y = np.where(both, np.where(at_least, 1.0, -1.0), 0.0)
    if not present.all():
        w = present.sum(axis=1).astype(float)
        norm = np.where(w >= 2, w * (w - 1.0), 1.0)  # a voter ranking < 2 encoders has no pairs
        y = y / norm[:, None, None]
    c = y.sum(axis=0)
    np.fill_diagonal(c, 0.0)
    return c


def kemeny_max_objective(ranks: np.ndarray) -> float:
    """Upper bound of the objective for per-voter ``ranks`` (see :attr:`KemenyResult.max_objective`)."""
    present = ~np.isnan(np.asarray(ranks, dtype=float))
    w = present.sum(axis=1).astype(float)
    if present.all():
        return float(np.sum(w * (w - 1.0)))
    return float(np.sum(w >= 2))  # each voter's pairs were divided by w (w - 1)


def kemeny_objective(x: np.ndarray, c: np.ndarray) -> float:
    """``sum_{i != j} (2 X_ij - 1) c_ij`` for a 0/1 relation ``x``."""
    off = ~np.eye(c.shape[0], dtype=bool)
    return float(np.sum((2.0 * x[off] - 1.0) * c[off]))


def _new_highs():
    import highspy

    # The public highspy.Highs() prints a licence banner on stdout the first time it is built,
    # before any option can be set; the core class underneath it does not. Library code must not
    # print, so prefer the core class when this highspy version has it.
    core = getattr(getattr(highspy, "_core", None), "_Highs", None)
    highs = core() if core is not None else highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("mip_rel_gap", 0.0)
    highs.setOptionValue("mip_abs_gap", 1e-9)
    highs.setOptionValue("threads", 1)
    return highs


def _violated_triples(x: np.ndarray, limit: int) -> np.ndarray:
    """Triples ``(i, k, j)`` with ``x_ik + x_kj - x_ij > 1``, most violated first."""
    slack = x[:, :, None] + x[None, :, :] - x[:, None, :] - 1.0  # slack[i, k, j]
    flat = np.flatnonzero(slack > _VIOLATION_TOL)
    if flat.size > limit:
        worst = np.argpartition(-slack.ravel()[flat], limit - 1)[:limit]
        flat = flat[worst]
    return np.column_stack(np.unravel_index(flat, slack.shape))


def _near_triples(x: np.ndarray, added: np.ndarray, slack_min: float) -> np.ndarray:
    """Distinct triples ``(i, k, j)`` not in the model with ``x_ik + x_kj - x_ij - 1 > slack_min``."""
    n = x.shape[0]
    slack = x[:, :, None] + x[None, :, :] - x[:, None, :] - 1.0
    idx = np.arange(n)
    distinct = ((idx[:, None, None] != idx[None, :, None]) & (idx[None, :, None] != idx[None, None, :])
                & (idx[:, None, None] != idx[None, None, :]))
    return np.column_stack(np.nonzero((slack > slack_min) & distinct & ~added))


def _add_transitivity_rows(highs, col: np.ndarray, triples: np.ndarray) -> None:
    """Add ``X_ik + X_kj - X_ij <= 1`` for each row ``(i, k, j)`` of ``triples``."""
    import highspy

    i, k, j = triples[:, 0], triples[:, 1], triples[:, 2]
    r = len(triples)
    index = np.column_stack([col[i, k], col[k, j], col[i, j]]).ravel().astype(np.int32)
    coef = np.tile(np.array([1.0, 1.0, -1.0]), r)
    highs.addRows(r, np.full(r, -highspy.kHighsInf), np.ones(r), 3 * r,
                  np.arange(0, 3 * r, 3, dtype=np.int32), index, coef)


def solve_kemeny(c: np.ndarray, *, time_limit: float | None = None) -> tuple[np.ndarray, dict]:
    """Solve the Kemeny weak-order problem for the agreement matrix ``c`` exactly.

    Parameters
    ----------
    c : numpy.ndarray
        ``(n, n)`` agreement matrix (see :func:`kemeny_weights`).
    time_limit : float, optional
        Seconds; when reached the best integral solution found so far is returned with
        ``optimal=False`` in the info dict.

    Returns
    -------
    x : numpy.ndarray
        ``(n, n)`` 0/1 int matrix, ``x[i, j] = 1`` when i is ranked at least as well as j (ones on
        the diagonal).
    info : dict
        ``objective, optimal, n_rounds, n_transitivity_rows, used_mip``.
    """
    import highspy

    c = np.asarray(c, dtype=float)
    n = c.shape[0]
    info = {"optimal": True, "n_rounds": 0, "n_transitivity_rows": 0, "used_mip": False}
    if n <= 1:
        x = np.ones((n, n), dtype=np.int64)
        return x, {**info, "objective": 0.0}
    start = time.perf_counter()
    off = ~np.eye(n, dtype=bool)
    col = np.full((n, n), -1, dtype=np.int32)
    col[off] = np.arange(n * (n - 1), dtype=np.int32)
    m = n * (n - 1)
    highs = _new_highs()
    # HiGHS minimises: maximising sum 2 c_ij X_ij (the -c_ij terms are a constant).
    highs.addCols(m, -2.0 * c[off], np.zeros(m), np.ones(m), 0,
                  np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
    iu, ju = np.triu_indices(n, 1)
    n_pairs = iu.size
    highs.addRows(n_pairs, np.ones(n_pairs), np.full(n_pairs, highspy.kHighsInf), 2 * n_pairs,
                  np.arange(0, 2 * n_pairs, 2, dtype=np.int32),
                  np.column_stack([col[iu, ju], col[ju, iu]]).ravel().astype(np.int32),
                  np.ones(2 * n_pairs))
    used_mip = False
    x = None
    added = np.zeros((n, n, n), dtype=bool)  # transitivity rows (i, k, j) in the model
    while True:
        if time_limit is not None:
            remaining = time_limit - (time.perf_counter() - start)
            if remaining <= 0:
                info["optimal"] = False
                break
            highs.setOptionValue("time_limit", float(remaining))
        highs.run()
        info["n_rounds"] += 1
        status = highs.getModelStatus()
        values = np.asarray(highs.getSolution().col_value, dtype=float)
        if status == highspy.HighsModelStatus.kTimeLimit:
            info["optimal"] = False
            if values.size == m:
                x = np.eye(n)
                x[off] = values
            break
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"HiGHS did not solve the Kemeny problem: got status {status!r}")
        x = np.eye(n)
        x[off] = values
        triples = _violated_triples(x, _MAX_ROWS_PER_ROUND)
        if len(triples) == 0:
            if np.all(np.abs(values - np.round(values)) <= _INTEGRALITY_TOL):
                break
            # Fractional relaxation with every transitivity row satisfied: branch and bound.
            # Optionally add the rows the relaxation nearly meets first (see _NEAR_SLACK): integer
            # solutions of the MIP may violate them, and each violation costs another MIP solve.
            used_mip = True
            near = _near_triples(x, added, _NEAR_SLACK) if _NEAR_SLACK is not None else []
            if len(near):
                _add_transitivity_rows(highs, col, near)
                added[near[:, 0], near[:, 1], near[:, 2]] = True
                info["n_transitivity_rows"] += len(near)
            highs.changeColsIntegrality(m, np.arange(m, dtype=np.int32),
                                        np.full(m, int(highspy.HighsVarType.kInteger), dtype=np.uint8))
            continue
        _add_transitivity_rows(highs, col, triples)
        added[triples[:, 0], triples[:, 1], triples[:, 2]] = True
        info["n_transitivity_rows"] += len(triples)
    if x is None:
        raise RuntimeError(f"Kemeny solve hit the time limit of {time_limit!r} s before any solution")
    if info["optimal"]:
        x = np.round(x).astype(np.int64)
        np.fill_diagonal(x, 1)
    else:
        # Stopped early: the incumbent may violate rows not yet added. Return the weak order
        # its row sums induce, which is always feasible, with that order's objective.
        ranks = dense_rank(x.sum(axis=1), descending=True)
        x = (ranks[:, None] <= ranks[None, :]).astype(np.int64)
    info["used_mip"] = used_mip
    info["objective"] = kemeny_objective(x, c)
    log.debug("Kemeny n=%d: %s in %.3f s", n, info, time.perf_counter() - start)
    return x, info


def kemeny_rank_vector(ranks: np.ndarray, *, time_limit: float | None = None) -> tuple[np.ndarray, dict]:
    """Consensus dense ranks (1 = best) of the ``n`` columns of a ``(V, n)`` voter rank matrix."""
    x, info = solve_kemeny(kemeny_weights(ranks), time_limit=time_limit)
    wins = x.sum(axis=1).astype(float)
    return dense_rank(wins, descending=True).astype(np.int64), info


def kemeny(scores: pd.DataFrame, *, time_limit: float | None = None) -> KemenyResult:
    """Exact Kemeny-Young consensus (weak order) of one factor combination.

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` (higher is better) for one factor combination.
        Each dataset is a voter ranking the encoders it has results for (dense ranks).
    time_limit : float, optional
        Stop after this many seconds (the result then has ``optimal=False``).

    Returns
    -------
    KemenyResult
        Ranking, optimal objective, solve time and solver statistics.

    Raises
    ------
    ValueError
        On invalid ``scores`` or ``time_limit``.
    """
    time_limit = check_time_limit(time_limit)
    cube = build_cube(scores)
    start = time.perf_counter()
    ranks = dense_rank(cube.values[0], descending=True)
    ranks = ranks[(~np.isnan(ranks)).any(axis=1)]
    consensus, info = kemeny_rank_vector(ranks, time_limit=time_limit)
    elapsed = time.perf_counter() - start
    order = np.lexsort((cube.encoders.astype(str), consensus))
    ranking = pd.Series(consensus[order], index=pd.Index(cube.encoders[order], name="encoder"),
                        name="rank")
    return KemenyResult(ranking=ranking, objective=info["objective"], solve_time=elapsed,
                        optimal=info["optimal"], n_rounds=info["n_rounds"],
                        n_transitivity_rows=info["n_transitivity_rows"], used_mip=info["used_mip"],
                        max_objective=kemeny_max_objective(ranks))
