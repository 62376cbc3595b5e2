"""Pairwise Wilcoxon signed-rank tests between encoders over datasets, with Holm's correction.

For two encoders A and B of one factor combination, the paired samples are their scores on the
datasets where both have a result; the test asks whether the median of ``score_A - score_B`` is
0 (two-sided; zero differences are dropped, as in Wilcoxon's original test and
``scipy.stats.wilcoxon``'s default). When several pairs are tested at once, Holm's step-down
procedure controls the family-wise error rate: with the ``m`` p-values sorted ascending,
``p_holm_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))`` (Holm 1979).

Every test comes with its effect size, so that "significant" never stands without "how much":

- the median of ``score_A - score_B`` with an exact, distribution-free interval: with the ``n``
  differences sorted, ``[d_(k), d_(n+1-k)]`` covers the population median with probability
  ``1 - 2 P(Bin(n, 1/2) <= k - 1)``; ``k`` is the largest order for which that is at least
  ``level`` (Conover 1999, section 3.2). Fewer than 6 datasets cannot give 95%: NaN bounds.
- the matched-pairs rank-biserial correlation ``r = (T+ - T-) / (T+ + T-)`` (Kerby 2014), with
  ``T+`` and ``T-`` the sums of the ranks of ``|d|`` over the positive and the negative differences,
  zero differences dropped as in the test: +1 when A scores higher on every dataset where they
  differ, -1 when B does, 0 when the signed ranks balance. Its interval is the percentile bootstrap
  over datasets (``n_boot`` resamples, seeded).
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench.stats._arrays import rank_last_axis
from encbench.stats._checks import check_alpha, check_level, check_positive_int
from encbench.stats._cube import build_cube

#: the effect sizes beside each test (see the module docstring)
EFFECT_COLUMNS = ["median_low", "median_high", "rank_biserial", "rank_biserial_low", "rank_biserial_high"]
COLUMNS = ["encoder_a", "encoder_b", "n_datasets", "wins_a", "wins_b", "ties", "median_difference",
           "statistic", "p_value", "p_holm", "significant", "finding", *EFFECT_COLUMNS]
_TESTED = COLUMNS[:COLUMNS.index("p_holm")]  # what one pair's test computes


@dataclass(frozen=True)
class PairwiseResult:
    """Wilcoxon signed-rank tests of encoder pairs over datasets.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per pair, columns :data:`COLUMNS`: the datasets both encoders have
        (``n_datasets``), on how many A scores higher / lower / the same, the median of
        ``score_A - score_B``, the Wilcoxon statistic, the raw two-sided p-value, the
        Holm-adjusted one (equal to it for a single pair), ``p_holm < alpha`` and the
        ``finding`` in words, which way included (:func:`finding`); then the effect sizes:
        ``median_low, median_high`` (exact interval of the median difference), ``rank_biserial``
        and its bootstrap interval ``rank_biserial_low, rank_biserial_high``.
        A pair with no non-zero difference has p-value 1 and rank-biserial 0; one without a
        shared dataset has NaN.
    alpha : float
        Family-wise significance level.
    level : float
        Coverage of the effect-size intervals.
    n_boot : int
        Bootstrap resamples behind the rank-biserial interval.
    """

    table: pd.DataFrame
    alpha: float
    level: float = 0.95
    n_boot: int = 1000


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


def median_interval(diff: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Exact distribution-free interval of the median of ``diff`` (order statistics, binomial).

    Returns ``(d_(k), d_(n+1-k))`` for the largest ``k`` whose coverage
    ``1 - 2 P(Bin(n, 1/2) <= k - 1)`` is at least ``level``; ``(nan, nan)`` when even
    ``k = 1`` covers less (too few values) or ``diff`` is empty.
    """
    from scipy.stats import binom

    d = np.sort(np.asarray(diff, dtype=float))
    n = d.size
    if n == 0:
        return float("nan"), float("nan")
    orders = np.arange(1, n // 2 + 1 + n % 2)  # k = 1 .. ceil(n / 2)
    coverage = 1.0 - 2.0 * binom.cdf(orders - 1, n, 0.5)
    ok = orders[coverage >= level - 1e-12]
    if ok.size == 0:
        return float("nan"), float("nan")
    k = int(ok.max())
    return float(d[k - 1]), float(d[n - k])


def rank_biserial(diff: np.ndarray) -> np.ndarray:
    """Matched-pairs rank-biserial correlation of the last axis of ``diff`` (zeros and NaN dropped).

    ``(T+ - T-) / (T+ + T-)`` with the average ranks of ``|d|`` among the non-zero differences;
    0 where every difference is zero, NaN where none is given.
    """
    d = np.asarray(diff, dtype=float)
    nonzero = np.where(d == 0.0, np.nan, d)
    _, ranks = rank_last_axis(np.abs(nonzero), descending=False)
    signed = np.where(np.isnan(ranks), 0.0, np.sign(nonzero) * np.nan_to_num(ranks))
    total = np.where(np.isnan(ranks), 0.0, ranks).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = signed.sum(axis=-1) / total
    given = (~np.isnan(d)).any(axis=-1)
    return np.where(given, np.where(total > 0, r, 0.0), np.nan)


def _effects(diff: np.ndarray, level: float, rng: np.random.Generator, n_boot: int) -> tuple:
    n = diff.size
    if n == 0:
        return (np.nan,) * 5
    low, high = median_interval(diff, level)
    r = float(rank_biserial(diff))
    # Percentile bootstrap over datasets: each resample redraws n differences with replacement.
    draws = rank_biserial(diff[rng.integers(0, n, size=(n_boot, n))])
    tail = (1.0 - level) / 2.0
    r_low, r_high = np.quantile(draws, [tail, 1.0 - tail])
    return low, high, r, float(r_low), float(r_high)


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


def finding(a: str, b: str, p: float, significant: bool, rank_biserial: float, *, holm: bool = False) -> str:
    """One pair's test in words, naming the encoder that scores higher when the difference is
    significant: ``"OH better, p = 0.039"``, ``"no significant difference, p = 0.41"``.

    The direction is the sign of the rank-biserial correlation, the test's own (its signed
    ranks), not the count of wins: OH can win on fewer datasets and still carry the larger
    differences. ``holm`` names the p-value as Holm-adjusted (several pairs tested at once).
    """
    if p != p:  # NaN: the two encoders share no dataset
        return "not tested: no dataset with both"
    shown = f"{'Holm ' if holm else ''}p = {p:.2g}"
    if not significant or rank_biserial == 0:
        return f"no significant difference, {shown}"
    return f"{a if rank_biserial > 0 else b} better, {shown}"


def wilcoxon_pairs(scores: pd.DataFrame, encoders: Iterable[str] | None = None,
                   pairs: Iterable[tuple[str, str]] | None = None, *, alpha: float = 0.05,
                   level: float = 0.95, n_boot: int = 1000,
                   seed: int | np.random.Generator | None = 0) -> PairwiseResult:
    """Wilcoxon signed-rank test over datasets for pairs of encoders, Holm-corrected, with effect sizes.

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
    level : float, default 0.95
        Coverage of the intervals of the median difference and the rank-biserial correlation.
    n_boot : int, default 1000
        Bootstrap resamples of the datasets for the rank-biserial interval.
    seed : int, numpy.random.Generator or None, default 0
        Seed of ``numpy.random.default_rng`` for the bootstrap (the pairs draw in turn from it).

    Returns
    -------
    PairwiseResult

    Raises
    ------
    ValueError
        On invalid scores, alpha, level or n_boot, an encoder without results, a pair of an encoder with
        itself, fewer than one pair, or both/neither of ``encoders`` and ``pairs``.
    """
    alpha = check_alpha(alpha)
    level = check_level(level)
    n_boot = check_positive_int(n_boot, "n_boot")
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
    rng = np.random.default_rng(seed)
    rows, effects = [], []
    for a, b in pair_list:
        x, y = values[:, column[a]], values[:, column[b]]
        rows.append((a, b, *_one_pair(x, y)))
        both = ~np.isnan(x) & ~np.isnan(y)
        effects.append(_effects(x[both] - y[both], level, rng, n_boot))
    table = pd.DataFrame(rows, columns=_TESTED)
    table["p_holm"] = holm(table["p_value"].to_numpy())
    table["significant"] = table["p_holm"] < alpha
    table[EFFECT_COLUMNS] = pd.DataFrame(effects, columns=EFFECT_COLUMNS, index=table.index)
    holm_named = len(table) > 1
    table["finding"] = [finding(r.encoder_a, r.encoder_b, r.p_holm, r.significant, r.rank_biserial,
                                holm=holm_named) for r in table.itertuples()]
    table = table[COLUMNS]
    return PairwiseResult(table=table, alpha=alpha, level=level, n_boot=n_boot)
