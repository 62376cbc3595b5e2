"""Bayesian signed-rank test of two encoders over datasets, with a region of practical equivalence.

Benavoli, Corani, Demsar and Zaffalon (2017), "Time for a change: a tutorial for comparing
multiple classifiers through Bayesian analysis", JMLR 18(77), section 5.2 (the test itself:
Benavoli et al. 2014, "A Bayesian Wilcoxon signed-rank test based on the Dirichlet process").

For the ``n`` datasets where both encoders have a result, let ``z_i = score_A - score_B``. The
test puts a Dirichlet process prior on the distribution of ``z`` whose base measure is a single
pseudo-observation ``z_0 = 0`` of strength ``s`` (``prior``, 0.5 in the paper). Its posterior is
approximated by weights ``w ~ Dirichlet(s, 1, ..., 1)`` on ``z_0, z_1, ..., z_n``, and each draw of
``w`` gives a point of the simplex:

    theta_A    = sum_{i,j} w_i w_j [z_i + z_j > 2 r]
    theta_rope = sum_{i,j} w_i w_j [|z_i + z_j| <= 2 r]
    theta_B    = sum_{i,j} w_i w_j [z_i + z_j < -2 r],

the posterior probability that a Walsh average ``(z_i + z_j) / 2`` lies right of, inside or left
of the ROPE ``[-r, r]`` (the Bayesian counterpart of Wilcoxon's statistic). A Walsh average on an
edge of the ROPE (up to rounding, :data:`EDGE_TOLERANCE`) counts half to each side, so that with
``r = 0`` a zero average (the prior's pseudo-observation with itself, tied scores) is split evenly
between A and B. The reported probabilities are the shares of posterior draws in which each of
the three is the largest (a draw where several tie for the largest counts equally to each).

The sums need no ``n x n`` matrix per draw: with the ``z`` sorted, the ``j`` with ``z_j > t`` form a
suffix, so each draw costs a cumulative sum and a gather, ``O(n)`` instead of ``O(n^2)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench.stats._checks import check_positive_int
from encbench.stats._cube import build_cube

#: the three outcomes, in the order of :attr:`BayesianResult.samples` columns
OUTCOMES: tuple[str, ...] = ("A better", "equivalent", "B better")
_CHUNK_CELLS = 1_000_000
#: a Walsh sum within this much (relative to the largest |difference|, at least 1) of the ROPE's
#: edge counts as on it
EDGE_TOLERANCE = 1e-12  # draws x (n + 1) weights computed at once, to bound memory


@dataclass(frozen=True)
class BayesianResult:
    """Posterior of the Bayesian signed-rank test for encoders A and B.

    Attributes
    ----------
    encoder_a, encoder_b : str
        The encoders compared; "A better" means ``encoder_a`` scores higher by more than the ROPE.
    rope : float
        Half-width ``r`` of the region of practical equivalence, in score units.
    prior : float
        Strength ``s`` of the prior pseudo-observation at 0.
    n_datasets : int
        Datasets both encoders have a result on.
    p_a_better, p_equivalent, p_b_better : float
        Posterior probability that each outcome is the most probable one (they sum to 1).
    samples : numpy.ndarray
        ``(n_samples, 3)`` posterior draws of ``(theta_A, theta_rope, theta_B)``; each row sums to 1.
    seed : int or None
        Seed of the draws (None: a Generator was given or none was).
    """

    encoder_a: str
    encoder_b: str
    rope: float
    prior: float
    n_datasets: int
    p_a_better: float
    p_equivalent: float
    p_b_better: float
    samples: np.ndarray
    seed: int | None = None

    @property
    def probabilities(self) -> pd.Series:
        """``p_a_better, p_equivalent, p_b_better`` indexed by :data:`OUTCOMES`."""
        return pd.Series([self.p_a_better, self.p_equivalent, self.p_b_better], index=list(OUTCOMES),
                         name="probability")

    @property
    def table(self) -> pd.DataFrame:
        """One row for tables and exports: the encoders, the ROPE, N and the three probabilities,
        with the posterior means of the three thetas."""
        mean = self.samples.mean(axis=0)
        return pd.DataFrame([{
            "encoder_a": self.encoder_a, "encoder_b": self.encoder_b, "rope": self.rope,
            "prior": self.prior, "n_datasets": self.n_datasets, "n_samples": int(self.samples.shape[0]),
            "p_a_better": self.p_a_better, "p_equivalent": self.p_equivalent, "p_b_better": self.p_b_better,
            "mean_theta_a": mean[0], "mean_theta_rope": mean[1], "mean_theta_b": mean[2],
        }])

    def sample_frame(self, limit: int | None = None) -> pd.DataFrame:
        """The first ``limit`` draws (all by default) as ``theta_a, theta_rope, theta_b, outcome``,
        ``outcome`` naming the largest of the three (the draws are independent, so the first
        ``limit`` are a random subsample)."""
        draws = self.samples if limit is None else self.samples[:limit]
        frame = pd.DataFrame(draws, columns=["theta_a", "theta_rope", "theta_b"])
        frame["outcome"] = np.asarray(OUTCOMES, dtype=object)[np.argmax(draws, axis=1)]
        return frame


def _check_rope(rope: object) -> float:
    try:
        value = float(rope)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"rope must be a number >= 0 (score units): got {rope!r}") from None
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"rope must be a number >= 0 (score units): got {rope!r}")
    return value


def _check_prior(prior: object) -> float:
    try:
        value = float(prior)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"prior must be a positive number: got {prior!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"prior must be a positive number: got {prior!r}")
    return value


def signed_rank_posterior(diff: np.ndarray, rope: float = 0.0, *, prior: float = 0.5,
                          n_samples: int = 50_000,
                          seed: int | np.random.Generator | None = 0) -> np.ndarray:
    """Posterior draws of ``(theta_A, theta_rope, theta_B)`` for paired differences ``A - B``.

    Parameters
    ----------
    diff : array-like of float
        ``score_A - score_B`` per dataset (finite; at least one).
    rope : float, default 0.0
        Half-width of the region of practical equivalence, in score units.
    prior : float, default 0.5
        Strength of the prior pseudo-observation at 0 (the paper's ``s``).
    n_samples : int, default 50000
        Posterior draws.
    seed : int, numpy.random.Generator or None, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray
        ``(n_samples, 3)``; each row sums to 1 (up to rounding).

    Raises
    ------
    ValueError
        On an empty or non-finite ``diff``, a negative ``rope``, a non-positive ``prior`` or
        ``n_samples``.
    """
    rope, prior = _check_rope(rope), _check_prior(prior)
    n_samples = check_positive_int(n_samples, "n_samples")
    z = np.asarray(diff, dtype=float).ravel()
    if z.size == 0 or not np.isfinite(z).all():
        raise ValueError(f"diff needs at least one finite difference: got {z.tolist()!r}")
    rng = np.random.default_rng(seed)
    values = np.concatenate([[0.0], z])              # z_0 = 0, the prior's pseudo-observation
    order = np.argsort(values, kind="stable")
    zs = values[order]
    prior_at = int(np.flatnonzero(order == 0)[0])     # where z_0 sits among the sorted values
    # theta_A: pairs with z_i + z_j > 2r, i.e. z_j > 2r - z_i: the suffix from a_strict (from
    # a_edge with the edge z_j = 2r - z_i). theta_B: z_j < -2r - z_i, the prefix up to b_strict.
    # "On the edge" allows for rounding (EDGE_TOLERANCE): scores given to a few decimals put
    # Walsh sums exactly on 2r, which float subtraction misses by ~1e-17 either way.
    tol = EDGE_TOLERANCE * max(1.0, float(np.abs(zs).max()), rope)
    a_strict = np.searchsorted(zs, 2.0 * rope - zs + tol, side="right")
    a_edge = np.searchsorted(zs, 2.0 * rope - zs - tol, side="left")
    b_strict = np.searchsorted(zs, -2.0 * rope - zs - tol, side="left")
    b_edge = np.searchsorted(zs, -2.0 * rope - zs + tol, side="right")
    same_a, same_b = bool(np.array_equal(a_strict, a_edge)), bool(np.array_equal(b_strict, b_edge))
    out = np.empty((n_samples, 3))
    chunk = max(1, _CHUNK_CELLS // values.size)
    for start in range(0, n_samples, chunk):
        stop = min(n_samples, start + chunk)
        # Dirichlet(s, 1, ..., 1) as normalised Gamma(s) and Exp(1) = Gamma(1) variates, drawn
        # straight in sorted order (exponentials are several times cheaper than gamma draws).
        w = rng.standard_exponential(size=(stop - start, values.size))
        w[:, prior_at] = rng.standard_gamma(prior, size=stop - start)
        w /= w.sum(axis=1, keepdims=True)
        # lower[:, k] = sum of w_j for j < k (k = 0 .. n + 1); the suffix sums are 1 - lower.
        lower = np.zeros((w.shape[0], w.shape[1] + 1))
        np.cumsum(w, axis=1, out=lower[:, 1:])
        # A Walsh average on the ROPE's edge counts half (without any edge, one gather suffices).
        right = 1.0 - (np.take(lower, a_strict, axis=1) if same_a else
                       0.5 * (np.take(lower, a_strict, axis=1) + np.take(lower, a_edge, axis=1)))
        left = (np.take(lower, b_strict, axis=1) if same_b else
                0.5 * (np.take(lower, b_strict, axis=1) + np.take(lower, b_edge, axis=1)))
        theta_a = np.einsum("si,si->s", w, right)
        theta_b = np.einsum("si,si->s", w, left)
        out[start:stop, 0] = theta_a
        out[start:stop, 2] = theta_b
        out[start:stop, 1] = np.clip(1.0 - theta_a - theta_b, 0.0, 1.0)
    return out


def outcome_probabilities(samples: np.ndarray) -> tuple[float, float, float]:
    """Shares of draws in which ``theta_A``, ``theta_rope``, ``theta_B`` is the largest (ties split)."""
    s = np.asarray(samples, dtype=float)
    top = s >= s.max(axis=1, keepdims=True) - 1e-12
    share = top / top.sum(axis=1, keepdims=True)
    p = share.mean(axis=0)
    return float(p[0]), float(p[1]), float(p[2])


def bayesian_signed_rank(scores: pd.DataFrame, encoder_a: str, encoder_b: str, *, rope: float = 0.01,
                         prior: float = 0.5, n_samples: int = 50_000,
                         seed: int | np.random.Generator | None = 0) -> BayesianResult:
    """Bayesian signed-rank test with a ROPE between two encoders over the datasets they share.

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` for ONE factor combination (a ``scoring`` column
        naming a lower-is-better metric is oriented first, so "better" always means better).
    encoder_a, encoder_b : str
        The two encoders (different, each with a result).
    rope : float, default 0.01
        Half-width of the region of practical equivalence in score units: differences of at most
        ``rope`` (e.g. 0.01 AUC) count as "no practical difference".
    prior : float, default 0.5
        Strength of the prior pseudo-observation at 0 (Benavoli et al.'s default).
    n_samples : int, default 50000
        Posterior draws.
    seed : int, numpy.random.Generator or None, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    BayesianResult

    Raises
    ------
    ValueError
        On invalid scores or parameters, an unknown encoder, A = B, or no shared dataset.

    Examples
    --------
    >>> result = bayesian_signed_rank(scores, "MT", "OH", rope=0.01)  # doctest: +SKIP
    >>> result.p_a_better, result.p_equivalent, result.p_b_better  # doctest: +SKIP
    """
    a, b = str(encoder_a), str(encoder_b)
    if a == b:
        raise ValueError(f"the test needs two different encoders: got {(encoder_a, encoder_b)!r}")
    cube = build_cube(scores)
    column = {str(e): i for i, e in enumerate(cube.encoders)}
    for name in (a, b):
        if name not in column:
            raise ValueError(f"encoder {name!r} has no result in these scores; present: {sorted(column)!r}")
    x, y = cube.values[0][:, column[a]], cube.values[0][:, column[b]]
    both = ~np.isnan(x) & ~np.isnan(y)
    if not both.any():
        raise ValueError(f"encoders {a!r} and {b!r} share no dataset: the test needs at least one")
    samples = signed_rank_posterior(x[both] - y[both], rope, prior=prior, n_samples=n_samples, seed=seed)
    p_a, p_rope, p_b = outcome_probabilities(samples)
    return BayesianResult(encoder_a=a, encoder_b=b, rope=_check_rope(rope), prior=_check_prior(prior),
                          n_datasets=int(both.sum()), p_a_better=p_a, p_equivalent=p_rope, p_b_better=p_b,
                          samples=samples, seed=seed if isinstance(seed, int) else None)
