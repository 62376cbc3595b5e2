"""Exact Kemeny-Young aggregation into a weak order: branch and cut over HiGHS LPs with lazy transitivity rows.

Model (docs/ARCHITECTURE.md, Consensus rankings, following the study's formulation with ties and missing values):
for voter (dataset) ``v``, ``Y_v[i, j] = +1`` if ``rank_i <= rank_j`` (ties count both ways) and
``-1`` otherwise; pairs involving an encoder the voter does not rank count 0 and, when any voter
misses encoders, each voter's matrix is divided by ``w_v (w_v - 1)`` (``w_v`` = encoders it
ranks). With ``c = sum_v Y_v`` and binaries ``X[i, j]`` = "i is ranked at least as well as j":

    maximise   sum_{i != j} (2 X_ij - 1) c_ij
    subject to X_ij + X_ji >= 1                 (totality: every pair is ordered or tied)
               X_ik + X_kj - X_ij <= 1          (transitivity, for all distinct i, j, k)

The consensus is the dense rank of each encoder's row sum of X (more wins = better).

Solving (exact; a branch and cut written here, HiGHS solving the LPs):

1. Blocks. The encoders split into blocks that every optimum ranks one above the other
   (:func:`dominance_components`); each block is solved alone.
2. A quick answer. Each pair at its own best (strict order or tie) bounds the objective; when
   that relation is transitive it is the optimum.
3. An incumbent: that pairwise relation read as a weak order by wins, improved by local search
   (move one encoder to another tier or a new one while it helps). It is a lower bound only.
4. The LP relaxation with lazy transitivity rows: the n(n-1)(n-2) rows (29,760 for 32 encoders)
   are not all written; start with totality and the rows the pairwise relation violates that
   are tight at the incumbent, solve, add the violated rows, re-solve (warm-started dual
   simplex), repeat. An integral LP solution violating no row is optimal for the full problem.
5. When the relaxation stays fractional (it is often half-integral), depth-first branch and
   bound on the ``X_ij`` of largest fractionality x ``|c_ij|``, each node solving its LP with
   lazy rows (they are valid everywhere, so they stay) and pruned when its bound does not beat
   the incumbent by more than a relative 1e-9 (an LP stops early, rounds of rows included, once its bound
   cannot); local search from every node's LP solution improves the incumbent. The root bound
   is usually within 0.1 % of the optimum and local search finds the optimum, so a few nodes
   prove it. On the Replicability page's default figure (1,000 problems of 32 encoders,
   benchmarks/bench_replicability.py) 9 % of the problems branch, on at most 20 nodes and
   0.15 s, 12-16 s for the 1,000; HiGHS's own MIP solver, given the same problems, reaches the
   same optimal objective on every one but takes up to 25 s on one of them (mostly cut rounds at
   its root, restarted for every round of rows) and 100 CPU-s for the 1,000.

Ties among optima: when several weak orders reach the optimum, the one returned is the first
the steps above meet (the pairwise relation; the incumbent, once an LP bound meets it; an
integral LP solution). It depends only on ``c``, never on problems solved before, so
replicability gives the same figure on any number of processes. It is not always the one
HiGHS's MIP solver returned before (that one was not chosen by any rule either): pairs no
voter settles (as many voters for as against, none tying them) are the usual cause, common in
samples of 5 datasets.
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
# Two objective values closer than this (relative to the larger, at least 1) are equal: the LP
# bound does not beat the incumbent, a local-search move does not improve.
_OBJECTIVE_RTOL = 1e-9


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
        True when optimality was proved (always, unless ``time_limit`` stopped the search).
    n_rounds : int
        LP solves made (every node of the branch and bound, every round of rows).
    n_transitivity_rows : int
        Transitivity rows that had to be added (out of ``n (n - 1) (n - 2)``).
    fractional_root : bool
        Whether the root LP relaxation stayed fractional, so that the optimum needed the local
        search's solution to match the bound or branch and bound (see :attr:`n_nodes`).
    max_objective : float
        The objective a consensus agreeing with every voter on every pair would reach: the sum
        of ``|Y_v[i, j]|`` over voters and pairs (``V n (n - 1)`` on complete data; the number of
        voters ranking two or more encoders when voters are normalised, docs/ARCHITECTURE.md, Consensus rankings).
        The raw objective's scale depends on which of the two applies, so compare
        :attr:`agreement` across combinations instead.
    n_nodes : int
        Branch-and-bound nodes solved after the root (0 when the root settled it).
    n_components : int
        Blocks the encoders split into (see :func:`dominance_components`); each was solved alone.
    """

    ranking: pd.Series
    objective: float
    solve_time: float
    optimal: bool
    n_rounds: int
    n_transitivity_rows: int
    fractional_root: bool
    max_objective: float = float("nan")
    n_nodes: int = 0
    n_components: int = 1

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


def _add_transitivity_rows(highs, col: np.ndarray, triples: np.ndarray) -> None:
    """Add ``X_ik + X_kj - X_ij <= 1`` for each row ``(i, k, j)`` of ``triples``."""
    import highspy

    i, k, j = triples[:, 0], triples[:, 1], triples[:, 2]
    r = len(triples)
    index = np.column_stack([col[i, k], col[k, j], col[i, j]]).ravel().astype(np.int32)
    coef = np.tile(np.array([1.0, 1.0, -1.0]), r)
    highs.addRows(r, np.full(r, -highspy.kHighsInf), np.ones(r), 3 * r,
                  np.arange(0, 3 * r, 3, dtype=np.int32), index, coef)


# A weak order is held as levels: ``levels[i]`` = 0 for the best tier, 1 for the next, ...
# For a pair {i, j}, with d = c - c.T and s = c + c.T, the objective gains d_ij when i is
# strictly above j, -d_ij when j is above i and s_ij when they are tied (the two ordered terms
# (2 X_ij - 1) c_ij + (2 X_ji - 1) c_ji of the objective).


def _relation(levels: np.ndarray) -> np.ndarray:
    """``X[i, j] = 1`` when i is at least as good as j."""
    return (levels[:, None] <= levels[None, :]).astype(np.int64)


def _levels_from_wins(x: np.ndarray) -> np.ndarray:
    """Levels of the dense ranking by row sums of a (possibly fractional) relation ``x``."""
    return np.unique(-x.sum(axis=1), return_inverse=True)[1].ravel()


def _levels_value(levels: np.ndarray, d: np.ndarray, s: np.ndarray) -> float:
    """The objective of the weak order ``levels``."""
    above = levels[:, None] < levels[None, :]
    tied = levels[:, None] == levels[None, :]
    np.fill_diagonal(tied, False)
    return float(d[above].sum() + 0.5 * s[tied].sum())


def _pairwise_best(d: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Each pair at its own best (a tie when that is at least as good as either order).

    The optimum of the relaxation without transitivity; when it is transitive it is the optimum.
    A strict order worth as much either way (d = 0, a tie worse: possible only for a ``c`` that
    no voters gave, s < 0) puts the lower index first, so that every pair is ordered or tied.
    """
    first = (d > 0) | ((d == 0) & np.triu(np.ones(d.shape, dtype=bool), 1))
    x = np.where(s >= np.abs(d), 1.0, first.astype(float))
    np.fill_diagonal(x, 1.0)
    return x


def _local_search(levels: np.ndarray, d: np.ndarray, s: np.ndarray, tol: float) -> np.ndarray:
    """Improve a weak order by moving one item at a time, best move first, until none helps.

    A move puts an item into another tier or into a new tier of its own anywhere in the order;
    every move of every item is scored at once from the per-tier sums of d and s. Only used for
    incumbents (lower bounds): optimality is always proved by the LP bound.
    """
    n = d.shape[0]
    levels = np.unique(levels, return_inverse=True)[1].ravel()
    items = np.arange(n)
    for _ in range(4 * n * n):
        k = int(levels.max()) + 1
        member = np.zeros((n, k))
        member[items, levels] = 1.0
        by_d = d @ member  # by_d[i, l] = sum of d_ij over j in tier l (d_ii = 0)
        by_s = s @ member
        above = np.concatenate([np.zeros((n, 1)), np.cumsum(by_d, axis=1)], axis=1)  # tiers < l
        total = above[:, -1:]
        # gain of i in tier l: tiers above it count -d, its tier s, tiers below d
        join = -above[:, :k] + by_s + (total - above[:, 1:])  # s_ii = 0
        alone = total - 2.0 * above  # a new tier just above tier l (l = k: at the bottom)
        current = join[items, levels]
        best_join, best_alone = join.max(axis=1), alone.max(axis=1)
        gain = np.maximum(best_join, best_alone) - current
        i = int(np.argmax(gain))
        if gain[i] <= tol:
            break
        if best_join[i] >= best_alone[i]:
            levels[i] = int(np.argmax(join[i]))
        else:
            target = int(np.argmax(alone[i]))
            levels = np.where(levels >= target, 2 * levels + 2, 2 * levels)
            levels[i] = 2 * target + 1
        levels = np.unique(levels, return_inverse=True)[1].ravel()
    return levels


def dominance_components(c: np.ndarray) -> list[np.ndarray]:
    """Blocks of encoders that every Kemeny optimum ranks one above the other, best block first.

    Encoder a *dominates* b when a strictly above b is worth more than a tie and more than b
    above a (``d_ab > max(s_ab, 0)``). Take the graph with an edge u -> v unless v dominates u:
    between any two of its strongly connected components, every member of the earlier one
    dominates every member of the later one. Moving a later block's members below the earlier
    ones then strictly improves any weak order where they are not, so every optimum ranks the
    blocks in this order and the optimum is the concatenation of each block's own optimum
    (Truchon's extended Condorcet criterion, here with ties). The set of optima is unchanged.

    Parameters
    ----------
    c : numpy.ndarray
        ``(n, n)`` agreement matrix (see :func:`kemeny_weights`).

    Returns
    -------
    list of numpy.ndarray
        Encoder indices of each block (sorted), best block first.
    """
    c = np.asarray(c, dtype=float)
    n = c.shape[0]
    if n == 0:
        return []
    d, s = c - c.T, c + c.T
    dominates = d > np.maximum(s, 0.0)
    # reach[u, v]: v can be reached from u along edges u -> v (v does not dominate u);
    # transitive closure by repeated squaring (n is small)
    reach = ~dominates.T | np.eye(n, dtype=bool)
    while True:
        wider = (reach.astype(np.float32) @ reach.astype(np.float32)) > 0
        if np.array_equal(wider, reach):
            break
        reach = wider
    mutual = reach & reach.T  # same strongly connected component
    first = np.argmax(mutual, axis=1)  # each encoder's block, named by its first member
    blocks = [np.flatnonzero(first == b) for b in np.unique(first)]
    return sorted(blocks, key=lambda block: -int(dominates[block[0]].sum() - dominates[block[0], block].sum()))


def _lp_with_rows(highs, col: np.ndarray, n: int, deadline: float | None, info: dict,
                  cutoff: float) -> tuple[str, float, np.ndarray | None]:
    """Solve the LP under the current bounds, adding violated transitivity rows until none is.

    ``cutoff`` is the value (in the LP's terms, ``sum 2 c_ij X_ij``) the LP must beat to matter:
    an LP with only some of the rows is still a relaxation, so once its optimum is at most the
    cutoff no solution under these bounds beats the incumbent and the rounds stop there (the
    dual simplex is told too: its objective only worsens, so it stops early).

    Returns ``(status, bound, x)``: status ``"optimal"``, ``"cutoff"`` (bound <= cutoff, x not
    usable), ``"infeasible"`` (bound -inf) or ``"time"`` (the deadline passed; not usable).
    """
    import highspy

    off = ~np.eye(n, dtype=bool)
    highs.setOptionValue("objective_bound", -cutoff)  # HiGHS minimises -sum 2 c_ij X_ij
    while True:
        if deadline is not None:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return "time", float("nan"), None
            highs.setOptionValue("time_limit", float(remaining))
        highs.run()
        info["n_rounds"] += 1
        status = highs.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return "infeasible", -np.inf, None
        if status == highspy.HighsModelStatus.kTimeLimit:
            return "time", float("nan"), None
        if status == highspy.HighsModelStatus.kObjectiveBound:
            return "cutoff", cutoff, None
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"HiGHS did not solve the Kemeny problem: got status {status!r}")
        bound = -highs.getInfo().objective_function_value
        if bound <= cutoff:
            return "cutoff", bound, None
        x = np.eye(n)
        x[off] = highs.getSolution().col_value
        triples = _violated_triples(x, _MAX_ROWS_PER_ROUND)
        if len(triples) == 0:
            return "optimal", bound, x
        _add_transitivity_rows(highs, col, triples)
        info["n_transitivity_rows"] += len(triples)


def _solve_block(c: np.ndarray, deadline: float | None, info: dict) -> tuple[np.ndarray, bool]:
    """Levels of an optimal weak order for ``c`` and whether optimality was proved (branch and cut)."""
    import highspy

    n = c.shape[0]
    d, s = c - c.T, c + c.T
    x0 = _pairwise_best(d, s)
    start_rows = _violated_triples(x0, n ** 3)
    if len(start_rows) == 0:  # every pair at its best, transitively: nothing can beat it
        return _levels_from_wins(x0), True
    # Incumbent (lower bound) from the pairwise optimum, improved by local search.
    scale = max(1.0, float(np.abs(c).sum()))
    best = _local_search(_levels_from_wins(x0), d, s, _OBJECTIVE_RTOL * scale)
    best_value = _levels_value(best, d, s)
    tol = _OBJECTIVE_RTOL * max(1.0, abs(best_value))

    off = ~np.eye(n, dtype=bool)
    m = n * (n - 1)
    col = np.full((n, n), -1, dtype=np.int32)
    col[off] = np.arange(m, dtype=np.int32)
    constant = -float(c[off].sum())  # objective = sum 2 c_ij X_ij - sum c_ij
    highs = _new_highs()
    highs.setOptionValue("presolve", "off")  # every solve is a small warm-started re-solve
    highs.addCols(m, -2.0 * c[off], np.zeros(m), np.ones(m), 0,
                  np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
    iu, ju = np.triu_indices(n, 1)
    n_pairs = iu.size
    highs.addRows(n_pairs, np.ones(n_pairs), np.full(n_pairs, highspy.kHighsInf), 2 * n_pairs,
                  np.arange(0, 2 * n_pairs, 2, dtype=np.int32),
                  np.column_stack([col[iu, ju], col[ju, iu]]).ravel().astype(np.int32),
                  np.ones(2 * n_pairs))
    # First rows: those the pairwise optimum violates and the incumbent meets with equality,
    # i.e. that can be binding at an optimum near the incumbent (fewer rows, same result: the
    # loop adds whatever else is violated).
    xb = _relation(best)
    tight = xb[start_rows[:, 0], start_rows[:, 1]] + xb[start_rows[:, 1], start_rows[:, 2]] \
        - xb[start_rows[:, 0], start_rows[:, 2]] == 1
    first = start_rows[tight][:_MAX_ROWS_PER_ROUND]
    if len(first):
        _add_transitivity_rows(highs, col, first)
        info["n_transitivity_rows"] += len(first)

    def cutoff() -> float:  # the LP value (sum 2 c_ij X_ij) a node must beat
        return best_value + tol - constant

    status, bound, x = _lp_with_rows(highs, col, n, deadline, info, cutoff())
    if status == "time":
        return best, False
    if status == "cutoff":
        return best, True  # the LP bound meets the incumbent
    values = x[off]
    if np.all(np.abs(values - np.round(values)) <= _INTEGRALITY_TOL):
        return _levels_from_wins(np.round(x)), True  # integral and transitive: optimal
    info["fractional_root"] = True
    # Branch and cut, depth first: each node fixes some X_ij to 0 or 1 and solves the LP with
    # lazy transitivity rows (rows are valid everywhere, so they stay for every node). A node is
    # pruned when its bound does not beat the incumbent; the incumbent improves from integral
    # nodes and from local search started at each node's LP solution.
    lower, upper = np.zeros(m), np.ones(m)
    every = np.arange(m, dtype=np.int32)
    stack: list[tuple[tuple[int, float], ...]] = [()]
    root = True
    while stack:
        fixed = stack.pop()
        if not root:
            if deadline is not None and time.perf_counter() >= deadline:
                return best, False
            lower[:], upper[:] = 0.0, 1.0
            for j, v in fixed:
                lower[j] = upper[j] = v
            highs.changeColsBounds(m, every, lower, upper)
            info["n_nodes"] += 1
            status, bound, x = _lp_with_rows(highs, col, n, deadline, info, cutoff())
            if status == "time":
                return best, False
            if status != "optimal":  # infeasible, or cannot beat the incumbent
                continue
            values = x[off]
        root = False
        integral = bool(np.all(np.abs(values - np.round(values)) <= _INTEGRALITY_TOL))
        # an integral node's LP solution is its optimum (a weak order better than the incumbent)
        candidate = _levels_from_wins(np.round(x)) if integral else _local_search(_levels_from_wins(x), d, s, tol)
        value = _levels_value(candidate, d, s)
        if value > best_value + tol:
            best, best_value = candidate, value
        if integral or bound + constant <= best_value + tol:
            continue
        # Branch on the X_ij with the largest fractionality x weight |c_ij| (on the 90 problems
        # of the Replicability default figure that branch: 294 nodes, against 422 for the most
        # fractional X_ij alone)
        score = np.abs(values - np.round(values)) * np.abs(c[off])
        j = int(np.argmax(score)) if score.max() > 0 else int(np.argmin(np.abs(values - 0.5)))
        near = 1.0 if values[j] >= 0.5 else 0.0
        stack.append((*fixed, (j, 1.0 - near)))
        stack.append((*fixed, (j, near)))  # explored first
    return best, True


def solve_kemeny(c: np.ndarray, *, time_limit: float | None = None) -> tuple[np.ndarray, dict]:
    """Solve the Kemeny weak-order problem for the agreement matrix ``c`` exactly.

    The encoders are split into :func:`dominance_components`, and each block is solved by branch
    and cut (module docstring).

    Parameters
    ----------
    c : numpy.ndarray
        ``(n, n)`` agreement matrix (see :func:`kemeny_weights`).
    time_limit : float, optional
        Seconds; when reached the best weak order found so far is returned with
        ``optimal=False`` in the info dict.

    Returns
    -------
    x : numpy.ndarray
        ``(n, n)`` 0/1 int matrix, ``x[i, j] = 1`` when i is ranked at least as well as j (ones on
        the diagonal).
    info : dict
        ``objective, optimal, n_rounds, n_transitivity_rows, fractional_root, n_nodes, n_components``.
    """
    c = np.array(c, dtype=float)
    np.fill_diagonal(c, 0.0)  # the objective has no diagonal terms
    n = c.shape[0]
    info = {"optimal": True, "n_rounds": 0, "n_transitivity_rows": 0, "fractional_root": False,
            "n_nodes": 0, "n_components": min(n, 1)}
    if n <= 1:
        x = np.ones((n, n), dtype=np.int64)
        return x, {**info, "objective": 0.0}
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    blocks = dominance_components(c)
    info["n_components"] = len(blocks)
    levels = np.zeros(n, dtype=np.int64)
    offset = 0
    for block in blocks:
        if block.size == 1:
            block_levels, proved = np.zeros(1, dtype=np.int64), True
        else:
            block_levels, proved = _solve_block(c[np.ix_(block, block)], deadline, info)
        levels[block] = block_levels + offset
        offset += int(block_levels.max()) + 1
        info["optimal"] = info["optimal"] and proved
    x = _relation(levels)
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
                        n_transitivity_rows=info["n_transitivity_rows"], fractional_root=info["fractional_root"],
                        max_objective=kemeny_max_objective(ranks), n_nodes=info["n_nodes"],
                        n_components=info["n_components"])
