"""Comparison of every encoder with one control encoder from Friedman mean ranks (Demsar 2006, 3.2.2).

When the question is "which encoders differ from this one" (a baseline such as one-hot, or a new
encoder), testing only the ``k - 1`` comparisons with the control is more powerful than Nemenyi's
all ``k (k - 1) / 2`` pairs. With ``R_i`` the mean Friedman ranks over ``N`` datasets (as in
:mod:`encbench.stats.nemenyi`),

    z_i = (R_i - R_control) / sqrt(k (k + 1) / (6 N)),   p_i = 2 (1 - Phi(|z_i|)),

and two procedures control the family-wise error of the ``k - 1`` tests:

- **Bonferroni-Dunn**: ``i`` differs from the control when ``|R_i - R_control| > CD`` with
  ``CD = q_alpha sqrt(k (k + 1) / (6 N))`` and ``q_alpha = Phi^-1(1 - alpha / (2 (k - 1)))``, the
  two-sided normal quantile at ``alpha / (k - 1)`` (Demsar's Table 5b), i.e. ``p_i < alpha / (k - 1)``.
- **Holm** step-down: with the ``p`` sorted ascending, reject while ``p_(j) < alpha / (k - j)``
  (Demsar's ``alpha / (k - i)``); the Holm-adjusted p-values ``p_holm < alpha`` say the same. Holm
  rejects everything Bonferroni-Dunn rejects and possibly more.

A negative ``R_i - R_control`` (a lower mean rank) means ``i`` is better than the control.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench.stats._checks import check_alpha
from encbench.stats._cube import build_cube
from encbench.stats.nemenyi import _nemenyi_from_cube
from encbench.stats.pairwise import holm

COLUMNS = ["encoder", "mean_rank", "difference", "z", "p_value", "p_bonferroni", "p_holm",
           "significant_bd", "significant_holm", "direction"]


def _normal():
    from scipy.stats import norm

    return norm


def bonferroni_dunn_q(k: int, alpha: float) -> float:
    """Demsar's ``q_alpha`` for Bonferroni-Dunn: the normal quantile ``1 - alpha / (2 (k - 1))``."""
    if k < 2:
        return float("nan")
    return float(_normal().ppf(1.0 - alpha / (2.0 * (k - 1))))


def bonferroni_dunn_critical_difference(k: int, n: int, alpha: float) -> float:
    """Critical difference of mean ranks against a control (NaN if ``k < 2`` or ``n < 1``)."""
    if k < 2 or n < 1:
        return float("nan")
    return bonferroni_dunn_q(k, alpha) * float(np.sqrt(k * (k + 1.0) / (6.0 * n)))


@dataclass(frozen=True)
class ControlResult:
    """Every encoder against a control: Bonferroni-Dunn and Holm from Friedman mean ranks.

    Attributes
    ----------
    control : str
        The control encoder.
    alpha : float
        Family-wise significance level of the ``k - 1`` comparisons.
    mean_ranks : pandas.Series
        Mean Friedman rank per encoder (index ``encoder``), best first (those of the CD diagram).
    n_datasets : int
        Datasets ranked (``N``).
    critical_difference : float
        Bonferroni-Dunn critical difference; ``q_alpha`` its normal quantile.
    q_alpha : float
    table : pandas.DataFrame
        One row per encoder other than the control, by mean rank, columns :data:`COLUMNS`:
        ``difference = R_i - R_control`` (negative: better than the control), ``z``, the
        two-sided ``p_value``, ``p_bonferroni = min(1, (k - 1) p)``, the Holm-adjusted
        ``p_holm``, whether each procedure finds a difference at ``alpha``, and ``direction``
        ("better" or "worse" than the control where Holm finds one, else "").
    friedman_statistic, friedman_pvalue : float
        As in :class:`encbench.stats.NemenyiResult`.
    """

    control: str
    alpha: float
    mean_ranks: pd.Series
    n_datasets: int
    critical_difference: float
    q_alpha: float
    table: pd.DataFrame
    friedman_statistic: float
    friedman_pvalue: float

    @property
    def n_encoders(self) -> int:
        """Number of encoders compared (the control included)."""
        return len(self.mean_ranks)

    def differing(self, method: str = "holm") -> list[str]:
        """Encoders that differ significantly from the control (``"holm"`` or ``"bonferroni-dunn"``)."""
        if method not in ("holm", "bonferroni-dunn"):
            raise ValueError(f"method must be 'holm' or 'bonferroni-dunn': got {method!r}")
        column = "significant_holm" if method == "holm" else "significant_bd"
        return self.table.loc[self.table[column], "encoder"].tolist()


def control_test(scores: pd.DataFrame, control: str, alpha: float = 0.05) -> ControlResult:
    """Compare every encoder with ``control`` (Bonferroni-Dunn and Holm on Friedman mean ranks).

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` (higher is better; a ``scoring`` column naming a
        lower-is-better metric is oriented first) for one factor combination.
    control : str
        The encoder the others are compared with.
    alpha : float, default 0.05
        Family-wise significance level.

    Returns
    -------
    ControlResult

    Raises
    ------
    ValueError
        On invalid scores or alpha, a control without results, or fewer than two encoders.

    Examples
    --------
    >>> control_test(scores, "OH", alpha=0.05).differing()  # doctest: +SKIP
    """
    alpha = check_alpha(alpha)
    cube = build_cube(scores)
    names = [str(e) for e in cube.encoders]
    if str(control) not in names:
        raise ValueError(f"control encoder {control!r} has no result in these scores; present: {sorted(names)!r}")
    if len(names) < 2:
        raise ValueError(f"a comparison with a control needs at least two encoders: got {names!r}")
    friedman = _nemenyi_from_cube(cube, alpha)
    mean = friedman.mean_ranks.rename(index=str)
    k, n = len(mean), friedman.n_datasets
    se = float(np.sqrt(k * (k + 1.0) / (6.0 * n)))
    q = bonferroni_dunn_q(k, alpha)
    cd = q * se
    others = mean.drop(str(control))
    difference = others.to_numpy() - float(mean[str(control)])
    z = difference / se
    p = 2.0 * _normal().sf(np.abs(z))
    p_holm = holm(p)
    table = pd.DataFrame({
        "encoder": others.index.astype(object), "mean_rank": others.to_numpy(), "difference": difference,
        "z": z, "p_value": p, "p_bonferroni": np.minimum(1.0, (k - 1) * p), "p_holm": p_holm,
        # the same test as the diagram's interval: |R_i - R_control| > CD (equivalent to p < alpha / (k - 1))
        "significant_bd": np.abs(difference) > cd, "significant_holm": p_holm < alpha,
    })
    table["direction"] = np.where(table["significant_holm"], np.where(difference < 0, "better", "worse"), "")
    return ControlResult(control=str(control), alpha=alpha, mean_ranks=mean, n_datasets=int(n),
                         critical_difference=float(cd), q_alpha=float(q), table=table[COLUMNS],
                         friedman_statistic=friedman.friedman_statistic,
                         friedman_pvalue=friedman.friedman_pvalue)
