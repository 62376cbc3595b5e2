"""Pairwise Wilcoxon signed-rank tests between encoders over datasets, with Holm's correction.

For two encoders A and B of one factor combination, the paired samples are their scores on the
datasets where both have a result; the test asks whether the median of ``score_A - score_B`` is
0 (two-sided; zero differences are dropped, as in Wilcoxon's original test and
``scipy.stats.wilcoxon``'s default). When several pairs are tested at once, Holm's step-down
procedure controls the family-wise error rate: with the ``m`` p-values sorted ascending,
``p_holm_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))`` (Holm 1979).
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench.stats._checks import check_alpha
from encbench.stats._cube import build_cube

COLUMNS = ["encoder_a", "encoder_b", "n_datasets", "wins_a", "wins_b", "ties", "median_difference",
           "statistic", "p_value", "p_holm", "significant"]


@dataclass(frozen=True)
class PairwiseResult:
    """Wilcoxon signed-rank tests of encoder pairs over datasets.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per pair, columns :data:`COLUMNS`: the datasets both encoders have
        (``n_datasets``), on how many A scores higher / lower / the same, the median of
        ``score_A - score_B``, the Wilcoxon statistic, the raw two-sided p-value, the
        Holm-adjusted one (equal to it for a single pair) and ``p_holm < alpha``. A pair with
        no non-zero difference has p-value 1; one without a shared dataset has NaN.
    alpha : float
        Family-wise significance level.
    """

    table: pd.DataFrame
    alpha: float


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values (same order as given; NaN stays NaN and does not count in ``m``)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    if valid.size == 0:
        return out
    order = valid[np.argsort(p[valid], kind="stable")]
    m = order.size
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


def _one_pair(a: np.ndarray, b: np.ndarray) -> tuple:
    from scipy.stats import wilcoxon

    both = ~np.isnan(a) & ~np.isnan(b)
    diff = a[both] - b[both]
    n = int(diff.size)
    wins_a, wins_b = int((diff > 0).sum()), int((diff < 0).sum())
    ties = n - wins_a - wins_b
    if n == 0:
        return n, wins_a, wins_b, ties, np.nan, np.nan, np.nan
    median = float(np.median(diff))
    if wins_a + wins_b == 0:  # every difference is 0: no evidence of any difference
        return n, wins_a, wins_b, ties, median, 0.0, 1.0
    result = wilcoxon(diff, zero_method="wilcox", alternative="two-sided")
    return n, wins_a, wins_b, ties, median, float(result.statistic), float(result.pvalue)


def wilcoxon_pairs(scores: pd.DataFrame, encoders: Iterable[str] | None = None,
                   pairs: Iterable[tuple[str, str]] | None = None, *, alpha: float = 0.05) -> PairwiseResult:
    """Wilcoxon signed-rank test over datasets for pairs of encoders, Holm-corrected.

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` for ONE factor combination (one row per
        dataset and encoder).
    encoders : iterable of str, optional
        Test every pair of these encoders (in the given order: A is the earlier one).
    pairs : iterable of (str, str), optional
        Or these pairs. Exactly one of ``encoders`` and ``pairs`` is needed.
    alpha : float, default 0.05
        Family-wise significance level for ``significant``.

    Returns
    -------
    PairwiseResult

    Raises
    ------
    ValueError
        On invalid scores or alpha, an encoder without results, a pair of an encoder with
        itself, fewer than one pair, or both/neither of ``encoders`` and ``pairs``.
    """
    alpha = check_alpha(alpha)
    if (encoders is None) == (pairs is None):
        raise ValueError(f"give exactly one of encoders and pairs: got encoders={encoders!r}, pairs={pairs!r}")
    if encoders is not None:
        names = list(dict.fromkeys(str(e) for e in encoders))
        pair_list = list(itertools.combinations(names, 2))
    else:
        pair_list = [(str(a), str(b)) for a, b in pairs]
    if not pair_list:
        raise ValueError(f"at least one pair of two different encoders is needed: got {encoders or pairs!r}")
    cube = build_cube(scores)
    column = {str(e): i for i, e in enumerate(cube.encoders)}
    for a, b in pair_list:
        if a == b:
            raise ValueError(f"a pair needs two different encoders: got {(a, b)!r}")
        for name in (a, b):
            if name not in column:
                raise ValueError(f"encoder {name!r} has no result in these scores; present: {sorted(column)!r}")
    values = cube.values[0]
    rows = [(a, b, *_one_pair(values[:, column[a]], values[:, column[b]])) for a, b in pair_list]
    table = pd.DataFrame(rows, columns=COLUMNS[:-2])
    table["p_holm"] = holm(table["p_value"].to_numpy())
    table["significant"] = table["p_holm"] < alpha
    return PairwiseResult(table=table, alpha=alpha)
