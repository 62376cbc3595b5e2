"""GLMM encoder: one-way linear mixed model ``y ~ 1 + (1 | A)`` fitted by REML, per column.

This is the model the study fitted with ``lme4::lmer`` (docs/ARCHITECTURE.md, Encoders), solved in closed
form from per-level counts, means and within-level sums of squares.

Model: ``y_ij = mu + b_i + e_ij`` with ``b_i ~ N(0, s_b^2)``, ``e_ij ~ N(0, s^2)``, levels
``i = 1..L`` with ``n_i`` rows, ``N`` rows in all; ``g = s_b^2 / s^2`` (lme4's ``theta^2``).
With ``w_i = n_i / (1 + g n_i)``:

* GLS intercept ``mu(g) = sum w_i ybar_i / sum w_i``;
* penalised residual sum of squares ``RSS(g) = SSW + sum w_i (ybar_i - mu)^2`` with SSW the
  within-level sum of squares;
* REML deviance profiled over ``s^2`` (lme4's criterion up to a constant)::

      D(g) = (N - 1) log RSS(g) + sum log(1 + g n_i) + log sum w_i

* its derivative (``dw_i/dg = -w_i^2``; mu's own derivative drops out because mu minimises the
  weighted sum of squares)::

      D'(g) = -(N - 1) sum w_i^2 (ybar_i - mu)^2 / RSS + sum w_i - sum w_i^2 / sum w_i

* the encoding of level i is lme4's ``coef``: ``mu + g n_i / (1 + g n_i) (ybar_i - mu)``
  (fixed intercept plus BLUP).

``D`` is minimised over ``g >= 0`` for all columns at once: a grid on ``log10 g`` in
[-10, 10] plus the boundary ``g = 0`` locates the minimum, bisection on the sign of ``D'``
refines it. An optimum at ``g = 0`` (lme4's singular fit, ``theta = 0``) encodes every level
with the overall mean; at the top of the grid (``SSW = 0``: each level pure) the shrinkage
factor differs from 1 by less than 1e-10, i.e. the level means.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._base import TableEncoder
from .target import check_unknown_value, level_stats

__all__ = ["GLMMEncoder", "OneWayREML", "one_way_reml"]

_LOG10_GRID = np.linspace(-10.0, 10.0, 81)
_BISECTION_STEPS = 56


@dataclass(frozen=True)
class OneWayREML:
    """REML fit of ``y ~ 1 + (1 | A)`` for several columns (one entry per column).

    Attributes
    ----------
    ratio : array
        ``g = sigma_b^2 / sigma^2`` at the REML optimum (0 on the boundary).
    intercept : array
        Fixed intercept ``mu(g)`` (lme4's ``fixef``); the encoding of unseen levels.
    """

    ratio: np.ndarray
    intercept: np.ndarray

    def encode(self, column: int, counts: np.ndarray, means: np.ndarray) -> np.ndarray:
        """Fixed intercept plus BLUP for levels with the given counts and means."""
        g, mu = self.ratio[column], self.intercept[column]
        shrink = counts * g / (1.0 + counts * g)
        return mu + shrink * (means - mu)


def one_way_reml(
    n_levels: np.ndarray, counts: np.ndarray, means: np.ndarray, ssw: np.ndarray
) -> OneWayREML:
    """Fit the one-way REML model for many columns at once.

    Parameters
    ----------
    n_levels : int array (C,)
        Number of levels of each column (each >= 1).
    counts, means : float arrays (T,), T = n_levels.sum()
        Rows and mean of y per level, the levels of column 0 first, then column 1, ...
    ssw : float array (C,)
        Within-level sum of squares of y per column.

    Returns
    -------
    OneWayREML
    """
    n_levels = np.asarray(n_levels, dtype=np.intp)
    counts = np.asarray(counts, dtype=float)
    means = np.asarray(means, dtype=float)
    ssw = np.maximum(np.asarray(ssw, dtype=float), 0.0)
    n_columns = len(n_levels)
    starts = np.r_[0, np.cumsum(n_levels)[:-1]]
    segment = np.repeat(np.arange(n_columns), n_levels)
    n_rows = np.add.reduceat(counts, starts)
    grand_mean = np.add.reduceat(counts * means, starts) / n_rows

    def reduce(values):
        return np.add.reduceat(values, starts, axis=0)

    # Columns where the model is degenerate get g = 0 (every level -> overall mean): one level
    # (no random effect to estimate), a constant target (RSS = 0) and one row per level
    # (D is flat in g: level effects and noise are not separable; lme4 refuses to fit).
    sst = ssw + reduce(counts * (means - grand_mean[segment]) ** 2)
    degenerate = (
        (n_levels < 2)
        | (sst <= 1e-12 * np.maximum(n_rows, 1.0))
        | (reduce((counts > 1).astype(float)) == 0)
    )

    def statistics(g):
        """w, sum w, mu and the level deviations for g of shape (C, K)."""
        n = counts[:, None]
        w = n / (1.0 + n * g[segment])
        sum_w = reduce(w)
        mu = reduce(w * means[:, None]) / sum_w
        deviation = means[:, None] - mu[segment]
        rss = ssw[:, None] + reduce(w * deviation**2)
        return w, sum_w, mu, deviation, rss

    def deviance(g):
        w, sum_w, _, _, rss = statistics(g)
        with np.errstate(divide="ignore"):
            return (
                (n_rows[:, None] - 1.0) * np.log(rss)
                + reduce(np.log1p(counts[:, None] * g[segment]))
                + np.log(sum_w)
            )

    def slope(g):
        w, sum_w, _, deviation, rss = statistics(g)
        w2 = w * w
        rss = np.where(rss > 0, rss, 1.0)  # degenerate columns (RSS = 0) are not refined
        return (
            -(n_rows[:, None] - 1.0) * reduce(w2 * deviation**2) / rss
            + sum_w
            - reduce(w2) / sum_w
        )

    grid = np.r_[0.0, 10.0**_LOG10_GRID]
    values = deviance(np.broadcast_to(grid, (n_columns, len(grid))))
    values[degenerate] = 0.0
    best = np.argmin(values, axis=1)  # first minimum: ties (flat D) go to the boundary g = 0

    interior = (best > 0) & (best < len(grid) - 1) & ~degenerate
    # Bisection in log10 g on the sign of D' between the grid neighbours of the minimum.
    low = _LOG10_GRID[np.clip(best - 2, 0, None)]  # grid index k >= 1 is _LOG10_GRID[k - 1]
    high = _LOG10_GRID[np.clip(best, 0, len(_LOG10_GRID) - 1)]
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        rising = slope(10.0 ** middle[:, None])[:, 0] > 0
        high = np.where(rising, middle, high)
        low = np.where(rising, low, middle)
    ratio = np.where(interior, 10.0 ** (0.5 * (low + high)), grid[best])
    ratio[degenerate] = 0.0
    _, _, mu, _, _ = statistics(ratio[:, None])
    return OneWayREML(ratio=ratio, intercept=mu[:, 0])


class GLMMEncoder(TableEncoder):
    """Generalized Linear Mixed Model encoder (GLMM), as the study implemented it with lmer.

    For each column A separately, the linear mixed model ``y ~ 1 + (1 | A)`` is fitted by REML
    on the 0/1 target and each level is encoded by the fixed intercept plus its predicted random
    effect (lme4's ``coef``): the level mean shrunk towards the intercept by
    ``n_l g / (1 + n_l g)``, ``g = sigma_b^2 / sigma^2`` (see :mod:`encbench.encoders.glmm`).
    Matches ``lme4::lmer`` to 1e-5. Unseen levels (and missing values when fit saw none) get
    ``unknown_value``. A column with a constant target or one row per level is encoded by the
    overall mean (``g = 0``). A column with a single level carries no information; as in the
    study's code, all its values (unseen ones included) are encoded as 0.

    ``fit_transform`` equals ``fit(X, y).transform(X)`` (use ``CrossValidatedEncoder`` for
    out-of-fold encodings).

    Parameters
    ----------
    unknown_value : "prior" or float, default="prior"
        Encoding of levels not seen in fit: ``"prior"`` is the fixed intercept (the model's
        prediction for a new level); the study's code used ``-1``, which the registry's
        configuration reproduces.

    Fitted attributes: ``reml_`` (:class:`OneWayREML`: ``ratio`` and ``intercept`` per column).

    Attributes
    ----------
    reml_ : OneWayREML
        REML variance ratio and fixed intercept per column.
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
    >>> from encbench.encoders import GLMMEncoder
    >>> GLMMEncoder().fit(X, y).transform(X)["color"].round(3).tolist()
    [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    """

    _supervised = True

    def __init__(self, *, unknown_value="prior"):
        self.unknown_value = unknown_value

    def _check_params(self):
        check_unknown_value(self.unknown_value, type(self).__name__)

    def _fit_tables(self, codes, y):
        per_level = []
        ssw = np.empty(len(codes))
        for j, column_codes in enumerate(codes):
            counts, sums = level_stats(column_codes, len(self.levels_[j]), y)
            means = sums / counts
            ssw[j] = float(np.sum((y - means[column_codes]) ** 2))
            per_level.append((counts, means))
        self.reml_ = one_way_reml(
            np.array([len(c) for c, _ in per_level]),
            np.concatenate([c for c, _ in per_level]),
            np.concatenate([m for _, m in per_level]),
            ssw,
        )
        self.prior_ = float(np.mean(y))
        tables = []
        for j, (counts, means) in enumerate(per_level):
            if len(counts) == 1:
                table = np.zeros(2)  # a single level: 0 for everything, as the study
            else:
                unknown = self.reml_.intercept[j]
                if not isinstance(self.unknown_value, str):
                    unknown = float(self.unknown_value)
                table = np.append(self.reml_.encode(j, counts, means), unknown)
            tables.append(table[:, None])
        self.tables_ = tables
        self.output_spec_ = [(j, None) for j in range(len(codes))]
