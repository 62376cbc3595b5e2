"""Win rates and Elo ratings of encoders over datasets, as TabArena reports them.

Every dataset is a match between every pair of encoders that both have a result on it: the
higher score wins, equal scores are a tie, which counts half a win for each (a pair one of whose
encoders lacks the dataset does not play). Over the datasets of a combination this gives, for
each ordered pair ``(i, j)``, the wins ``W_ij`` of ``i`` over ``j`` and the matches ``N_ij``.

- **Win rate** of ``i`` against ``j``: ``W_ij / N_ij``; an encoder's overall win rate is
  ``sum_j W_ij / sum_j N_ij``, its share of all the comparisons it took part in.
- **Elo**: the Bradley-Terry model ``P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400))`` fitted by
  maximum likelihood on those outcomes (Bradley and Terry 1952; Hunter 2004), i.e. a logistic
  model in ``beta = R ln(10) / 400``. The likelihood is maximised by Newton's method on the
  ``beta`` of the encoders present (step halving keeps every step uphill). A weak prior of
  ``prior_ties`` virtual datasets on which every pair of encoders ties keeps the ratings finite
  and unique when an encoder wins (or loses) every comparison, where the plain maximum does
  not exist. Ratings are calibrated so that the ``reference`` encoder (one-hot, ``OH``, by
  default) is at 1000: ``R_i = 1000 + 400 / ln(10) (beta_i - beta_ref)``.
- **Intervals**: the percentile bootstrap over datasets (a dataset drawn twice plays twice), the
  ratings refitted and recalibrated on each resample. Resampling whole datasets keeps the
  dependence of the matches of one dataset (they come from one ranking).

The win counts of a resample are the per-dataset counts weighted by how often each dataset was
drawn, so all resamples are fitted at once as a batch of combinations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench.stats._checks import check_level, check_positive_int
from encbench.stats._cube import build_cube

ELO_SCALE = 400.0 / np.log(10.0)  # Elo points per unit of natural log-odds
BASE_RATING = 1000.0
DEFAULT_PRIOR_TIES = 1.0
_MAX_NEWTON = 100
_BLOCK_CELLS = 4_000_000  # combinations x datasets x encoders^2 compared at once


def _check_prior_ties(prior_ties: object) -> float:
    try:
        value = float(prior_ties)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"prior_ties must be a positive number of virtual tied datasets: got {prior_ties!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"prior_ties must be a positive number of virtual tied datasets: got {prior_ties!r}")
    return value


def dataset_outcomes(values: np.ndarray) -> np.ndarray:
    """Per-dataset wins: ``(..., D, E) -> (..., D, E, E)``, entry ``[d, i, j]`` 1 if ``i`` beat ``j``
    on ``d``, 0.5 for a tie, 0 for a loss or when either has no result (NaN)."""
    v = np.asarray(values, dtype=float)
    a, b = v[..., :, None], v[..., None, :]
    with np.errstate(invalid="ignore"):
        return (a > b).astype(float) + 0.5 * (a == b)


def outcome_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wins ``W`` (ties half) and matches ``N`` per ordered pair: ``(G, D, E) -> (G, E, E)`` each.

    The diagonal is 0. Computed in blocks of combinations to bound memory.
    """
    v = np.asarray(values, dtype=float)
    g_total, d, e = v.shape
    wins = np.zeros((g_total, e, e))
    block = max(1, _BLOCK_CELLS // max(1, d * e * e))
    for start in range(0, g_total, block):
        wins[start:start + block] = dataset_outcomes(v[start:start + block]).sum(axis=1)
    present = (~np.isnan(v)).astype(float)
    matches = np.einsum("gdi,gdj->gij", present, present)
    index = np.arange(e)
    wins[:, index, index] = 0.0
    matches[:, index, index] = 0.0
    return wins, matches


def _log_likelihood(beta: np.ndarray, wins: np.ndarray) -> np.ndarray:
    gap = beta[:, :, None] - beta[:, None, :]
    return -(wins * np.logaddexp(0.0, -gap)).sum(axis=(1, 2))


def fit_bradley_terry(wins: np.ndarray, present: np.ndarray, *,
                      prior_ties: float = DEFAULT_PRIOR_TIES, tol: float = 1e-10) -> np.ndarray:
    """Bradley-Terry log-strengths of many combinations at once (Newton's method).

    Parameters
    ----------
    wins : numpy.ndarray
        ``(G, E, E)``: wins of ``i`` over ``j``, ties half (so ``i`` and ``j`` met
        ``wins[i, j] + wins[j, i]`` times).
    present : numpy.ndarray
        ``(G, E)`` bool: the encoders rated in each combination.
    prior_ties : float, default 1.0
        Virtual datasets on which every pair of present encoders ties (added to the counts).
    tol : float
        Stop when no strength moves by more than this.

    Returns
    -------
    numpy.ndarray
        ``(G, E)`` natural log-strengths, mean 0 over the present encoders; NaN for the absent.
    """
    present = np.asarray(present, dtype=bool)
    g_total, e = present.shape
    pair = (present[:, :, None] & present[:, None, :]) & ~np.eye(e, dtype=bool)
    w = np.where(pair, wins + 0.5 * prior_ties, 0.0)
    n = w + np.swapaxes(w, 1, 2)
    p_f = present.astype(float)
    # (L + p p^T + diag(1 - p)) is positive definite on a complete graph of the present encoders
    # (the prior makes it complete): the p p^T term fixes the translation, whose direction the
    # gradient never has, so the step keeps the strengths' sum at 0.
    fix = p_f[:, :, None] * p_f[:, None, :] + np.eye(e) * (1.0 - p_f)[:, :, None]
    beta = np.zeros((g_total, e))
    ll = _log_likelihood(beta, w)
    active = np.ones(g_total, dtype=bool)
    for _ in range(_MAX_NEWTON):
        if not active.any():
            break
        b = beta[active]
        prob = 1.0 / (1.0 + np.exp(-(b[:, :, None] - b[:, None, :])))
        grad = (w[active] - n[active] * prob).sum(axis=2)
        curvature = n[active] * prob * (1.0 - prob)
        laplacian = -curvature
        idx = np.arange(e)
        laplacian[:, idx, idx] = curvature.sum(axis=2)
        step = np.linalg.solve(laplacian + fix[active], grad[:, :, None])[:, :, 0]
        step = np.where(present[active], step, 0.0)
        # Step halving: the log-likelihood is concave, so a short enough Newton step always rises.
        scale = np.ones(len(b))
        old = ll[active]
        new = _log_likelihood(b + step, w[active])
        for _ in range(40):
            worse = new < old - 1e-12 * np.maximum(1.0, np.abs(old))
            if not worse.any():
                break
            scale[worse] /= 2.0
            new[worse] = _log_likelihood(b[worse] + scale[worse, None] * step[worse], w[active][worse])
        moved = scale[:, None] * step
        rows = np.flatnonzero(active)
        beta[rows] = b + moved
        ll[rows] = new
        active[rows] = np.abs(moved).max(axis=1) > tol
    beta = beta - (beta * p_f).sum(axis=1, keepdims=True) / np.maximum(p_f.sum(axis=1, keepdims=True), 1.0)
    beta[~present] = np.nan
    return beta


def snap_ties(x: np.ndarray, tol: float) -> np.ndarray:
    """``x`` with each run of values along the last axis that are within ``tol`` of their
    neighbour (sorted) set to the run's smallest value; NaN stays NaN."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, axis=-1, kind="stable")            # NaN last
    s = np.take_along_axis(x, order, axis=-1)
    starts = np.ones(s.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        starts[..., 1:] = ~(s[..., 1:] - s[..., :-1] <= tol)
    position = np.broadcast_to(np.arange(s.shape[-1]), s.shape)
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
    snapped = np.take_along_axis(s, first, axis=-1)
    snapped = np.where(np.isnan(s), np.nan, snapped)
    out = np.empty_like(x)
    np.put_along_axis(out, order, snapped, axis=-1)
    return out


def bradley_terry_strengths(values: np.ndarray, *, prior_ties: float = DEFAULT_PRIOR_TIES) -> np.ndarray:
    """Log-strengths ``(G, E)`` of the score cube ``values`` (``(G, D, E)``, higher is better, NaN =
    missing); NaN for encoders absent from a combination."""
    v = np.asarray(values, dtype=float)
    wins, _ = outcome_counts(v)
    return fit_bradley_terry(wins, (~np.isnan(v)).any(axis=1), prior_ties=prior_ties)


@dataclass(frozen=True)
class EloResult:
    """Elo ratings and win rates of the encoders of one combination.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per encoder, best Elo first: ``encoder, elo, low, high, win_rate, wins,
        matches`` (``low, high``: the bootstrap interval; ``wins`` counts ties half).
    win_rates : pandas.DataFrame
        Encoder x encoder (order of ``table``): the share of the datasets they share on which
        the row encoder beats the column one, ties half; NaN on the diagonal and for pairs that
        never meet.
    reference : str
        The encoder rated 1000.
    n_datasets : int
        Datasets with a result.
    B : int
        Bootstrap resamples (resamples without the reference are left out).
    level : float
        Coverage of the intervals.
    prior_ties : float
        Virtual all-tie datasets of the prior.
    """

    table: pd.DataFrame
    win_rates: pd.DataFrame
    reference: str
    n_datasets: int
    B: int
    level: float
    prior_ties: float

    @property
    def ratings(self) -> pd.Series:
        """Elo per encoder (index ``encoder``), best first."""
        return self.table.set_index("encoder")["elo"]


def win_rate_matrix(scores: pd.DataFrame) -> pd.DataFrame:
    """The pairwise win-rate matrix of one combination (row beats column; ties half; NaN where a
    pair shares no dataset), encoders in sorted order."""
    cube = build_cube(scores)
    wins, matches = outcome_counts(cube.values[:1])
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(matches[0] > 0, wins[0] / matches[0], np.nan)
    names = pd.Index(cube.encoders.astype(str), name="encoder")
    return pd.DataFrame(rate, index=names, columns=names.rename(None))


def elo(scores: pd.DataFrame, reference: str = "OH", *, B: int = 1000,
        seed: int | np.random.Generator | None = 0, level: float = 0.95,
        prior_ties: float = DEFAULT_PRIOR_TIES) -> EloResult:
    """Elo ratings (Bradley-Terry, calibrated to ``reference`` = 1000) with bootstrap intervals.

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` for ONE factor combination (a ``scoring`` column
        naming a lower-is-better metric is oriented first).
    reference : str, default "OH"
        The encoder rated 1000 (TabArena calibrates to a default baseline in the same way).
    B : int, default 1000
        Bootstrap resamples of the datasets.
    seed : int, numpy.random.Generator or None, default 0
        Seed of ``numpy.random.default_rng``.
    level : float, default 0.95
        Coverage of the percentile intervals.
    prior_ties : float, default 1.0
        Virtual datasets on which every pair ties (a weak prior toward equal ratings).

    Returns
    -------
    EloResult

    Raises
    ------
    ValueError
        On invalid scores or parameters, or a reference without results.

    Examples
    --------
    >>> elo(scores, reference="OH").table.head()  # doctest: +SKIP
    """
    B = check_positive_int(B, "B")
    level = check_level(level)
    prior_ties = _check_prior_ties(prior_ties)
    cube = build_cube(scores)
    names = cube.encoders.astype(str)
    if str(reference) not in set(names):
        raise ValueError(f"reference encoder {reference!r} has no result in these scores; "
                         f"present: {sorted(names)!r}")
    ref = int(np.flatnonzero(names == str(reference))[0])
    values = cube.values[0]
    values = values[(~np.isnan(values)).any(axis=1)]            # the datasets with a result
    n_datasets = values.shape[0]
    per_dataset = dataset_outcomes(values)                       # (D, E, E)
    present_d = ~np.isnan(values)
    index = np.arange(len(names))
    per_dataset[:, index, index] = 0.0
    wins = per_dataset.sum(axis=0)
    matches = present_d.astype(float).T @ present_d.astype(float)
    matches[index, index] = 0.0
    beta = fit_bradley_terry(wins[None], present_d.any(axis=0)[None], prior_ties=prior_ties)[0]
    rating = BASE_RATING + ELO_SCALE * (beta - beta[ref])

    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_datasets, size=(B, n_datasets))
    weights = np.zeros((B, n_datasets))
    np.add.at(weights, (np.repeat(np.arange(B), n_datasets), draws.ravel()), 1.0)
    boot_wins = np.einsum("bd,dij->bij", weights, per_dataset)
    boot_present = (weights @ present_d.astype(float)) > 0
    boot_beta = fit_bradley_terry(boot_wins, boot_present, prior_ties=prior_ties)
    boot = BASE_RATING + ELO_SCALE * (boot_beta - boot_beta[:, [ref]])   # NaN where ref is absent
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        seen = ~np.isnan(boot)
    low = np.array([np.quantile(boot[seen[:, k], k], tail) if seen[:, k].any() else np.nan
                    for k in range(len(names))])
    high = np.array([np.quantile(boot[seen[:, k], k], 1.0 - tail) if seen[:, k].any() else np.nan
                     for k in range(len(names))])

    total_wins, total_matches = wins.sum(axis=1), matches.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        overall = np.where(total_matches > 0, total_wins / total_matches, np.nan)
        rate = np.where(matches > 0, wins / matches, np.nan)
    order = np.lexsort((names, -rating))
    table = pd.DataFrame({"encoder": names[order], "elo": rating[order], "low": low[order], "high": high[order],
                          "win_rate": overall[order], "wins": total_wins[order],
                          "matches": total_matches[order].astype(np.int64)})
    ordered = pd.Index(names[order], name="encoder")
    win_rates = pd.DataFrame(rate[np.ix_(order, order)], index=ordered, columns=ordered.rename(None))
    return EloResult(table=table, win_rates=win_rates, reference=str(reference), n_datasets=int(n_datasets),
                     B=int(np.isfinite(boot[:, ref]).sum()), level=level, prior_ties=prior_ties)
