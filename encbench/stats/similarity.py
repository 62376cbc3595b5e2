"""Similarity between consensus rankings, and sensitivity to one factor (docs/ARCHITECTURE.md, Consensus rankings).

Two measures (study section 5.1): the Jaccard index of the sets of rank-1 encoders (do two
experiments agree on the best encoders?) and Spearman's rho over the whole ranking. Both are
computed over the encoders the two rankings have in common.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import vocab
from encbench.stats._arrays import rank_last_axis
from encbench.stats._cube import SCORE_COLUMNS, check_scores
from encbench.stats.consensus import (
    DEFAULT_BY,
    HEURISTIC_STRATEGIES,
    check_params,
    check_strategies,
    consensus_table,
)

#: what :func:`sensitivity` is documented to vary (named in its error message): the data factors
#: and the aggregation strategy; any other column of ``scores`` is accepted too
VARIED: tuple[str, ...] = ("model", "scoring", "tuning", "strategy")


def _as_ranking(ranking: object, name: str) -> pd.Series:
    if not isinstance(ranking, pd.Series):
        raise ValueError(f"{name} must be a pandas Series (index encoder, rank): got {type(ranking).__name__!r}")
    if not ranking.index.is_unique:
        duplicated = ranking.index[ranking.index.duplicated()][0]
        raise ValueError(f"{name} has encoder {duplicated!r} more than once")
    if not pd.api.types.is_numeric_dtype(ranking) or pd.api.types.is_bool_dtype(ranking):
        raise ValueError(f"{name} must hold numeric ranks: got dtype {str(ranking.dtype)!r}")
    return ranking.dropna()


def jaccard_best(r1: pd.Series, r2: pd.Series) -> float:
    """Jaccard index of the best encoders of two rankings.

    Parameters
    ----------
    r1, r2 : pandas.Series
        Rankings (index encoder, lower rank = better), e.g. from :func:`consensus`.

    Returns
    -------
    float
        ``|B1 & B2| / |B1 | B2|`` where ``Bk`` is the set of encoders holding the best (lowest)
        rank of ranking ``k`` among the encoders both rankings contain; NaN if they share none.
    """
    r1, r2 = _as_ranking(r1, "r1"), _as_ranking(r2, "r2")
    common = r1.index.intersection(r2.index)
    if len(common) == 0:
        return float("nan")
    a, b = r1[common], r2[common]
    best1 = set(a.index[a == a.min()])
    best2 = set(b.index[b == b.min()])
    return len(best1 & best2) / len(best1 | best2)


def spearman(r1: pd.Series, r2: pd.Series) -> float:
    """Spearman's rho between two rankings over their common encoders.

    Ties are given their average rank (as ``scipy.stats.spearmanr`` does). NaN when fewer than
    two encoders are shared or when either ranking is constant on them.
    """
    r1, r2 = _as_ranking(r1, "r1"), _as_ranking(r2, "r2")
    common = r1.index.intersection(r2.index)
    if len(common) < 2:
        return float("nan")
    stacked = np.vstack([r1[common].to_numpy(float), r2[common].to_numpy(float)])
    return float(spearman_rows(stacked[:1], stacked[1:])[0])


def spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman's rho between matching rows of ``a`` and ``b`` (``(P, E)``; NaN = absent).

    Each pair of rows is compared over the columns both have; returns ``(P,)``.
    """
    common = ~np.isnan(a) & ~np.isnan(b)
    _, ra = rank_last_axis(np.where(common, a, np.nan), descending=False)
    _, rb = rank_last_axis(np.where(common, b, np.nan), descending=False)
    n = common.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ma = np.nansum(ra, axis=1) / n
        mb = np.nansum(rb, axis=1) / n
        da = np.where(common, ra - ma[:, None], 0.0)
        db = np.where(common, rb - mb[:, None], 0.0)
        num = (da * db).sum(axis=1)
        den = np.sqrt((da * da).sum(axis=1) * (db * db).sum(axis=1))
        rho = num / den
    rho = np.where((n >= 2) & (den > 0), rho, np.nan)
    return np.clip(rho, -1.0, 1.0)


def jaccard_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Jaccard index of the rank-1 sets of matching rows (``(P, E)``, NaN = absent)."""
    common = ~np.isnan(a) & ~np.isnan(b)
    a = np.where(common, a, np.inf)
    b = np.where(common, b, np.inf)
    best_a = common & (a == a.min(axis=1, keepdims=True))
    best_b = common & (b == b.min(axis=1, keepdims=True))
    union = (best_a | best_b).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, (best_a & best_b).sum(axis=1) / union, np.nan)


@dataclass(frozen=True)
class SensitivityResult:
    """Pairwise similarity of consensus rankings that differ in one factor.

    Attributes
    ----------
    vary : str
        The factor that varies (``model``, ``scoring``, ``tuning`` or ``strategy``).
    fixed : dict
        The values the other factors were fixed to.
    labels : tuple of str
        The values of ``vary`` compared (matrix order).
    rankings : pandas.DataFrame
        Encoder x label consensus ranks (NaN where an encoder is absent from that ranking).
    jaccard, spearman : pandas.DataFrame
        Label x label similarity matrices (symmetric, 1 on the diagonal unless undefined).
    """

    vary: str
    fixed: dict
    labels: tuple[str, ...]
    rankings: pd.DataFrame
    jaccard: pd.DataFrame
    spearman: pd.DataFrame


def agreement_matrices(rankings: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairwise Spearman rho and Jaccard (best sets) between the columns of ``rankings``.

    Parameters
    ----------
    rankings : pandas.DataFrame
        Encoder x ranking (lower = better, NaN = encoder absent from that ranking).

    Returns
    -------
    spearman, jaccard : pandas.DataFrame
        Column x column matrices, in that order. Vectorised over all pairs with the row-wise
        measures: each pair is compared over the encoders both rankings contain, as
        :func:`spearman` and :func:`jaccard_best` do.
    """
    values = rankings.to_numpy(dtype=float).T  # (L, E)
    n = values.shape[0]
    i, j = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    rho = spearman_rows(values[i], values[j]).reshape(n, n)
    jac = jaccard_rows(values[i], values[j]).reshape(n, n)
    labels = pd.Index(rankings.columns, name=None)
    return (pd.DataFrame(rho, index=labels, columns=labels),
            pd.DataFrame(jac, index=labels, columns=labels))


def sensitivity(
    scores: pd.DataFrame,
    vary: str,
    fixed: Mapping[str, object] | None = None,
    strategy: str = "R-M",
    *,
    strategies: Iterable[str] | None = None,
    factors: Iterable[str] = DEFAULT_BY,
    **params: object,
) -> SensitivityResult:
    """Similarity between consensus rankings as one factor varies and the others stay fixed.

    Parameters
    ----------
    scores : pandas.DataFrame
        Long table with ``dataset, encoder, cv_score`` and the factor columns.
    vary : {"model", "scoring", "tuning", "strategy"}
        The factor compared across; any other factor column name is accepted too.
    fixed : mapping, optional
        Values of the other factors, e.g. ``{"model": "LogReg", "tuning": "no"}``. Every factor
        column (of ``factors``) other than ``vary`` that still has several values after this
        filter raises ``ValueError``.
    strategy : str, default "R-M"
        Aggregation used when ``vary`` is a data factor.
    strategies : iterable of str, optional
        Strategies compared when ``vary == "strategy"`` (default the nine heuristics).
    factors : iterable of str, default ("model", "tuning", "scoring")
        The factor columns of ``scores``.
    **params
        Strategy parameters (see :func:`consensus`).

    Returns
    -------
    SensitivityResult
        Labels, the consensus rankings, and Jaccard and Spearman matrices as DataFrames.

    Raises
    ------
    ValueError
        Unknown ``vary`` or strategy, a ``fixed`` column or value not in ``scores``, a factor
        left unfixed, fewer than one label, or invalid ``scores``.
    """
    factors = tuple(factors)
    fixed = dict(fixed or {})
    data_factors = tuple(dict.fromkeys(factors + tuple(c for c in (vary,) if c != "strategy")))
    if not isinstance(vary, str):
        raise ValueError(f"vary must be a factor name: got {vary!r}")
    if vary != "strategy" and vary not in (scores.columns if isinstance(scores, pd.DataFrame) else ()):
        raise ValueError(f"unknown factor to vary {vary!r}: expected one of {list(VARIED)!r} "
                         f"or a column of scores")
    if vary in fixed:
        raise ValueError(f"factor {vary!r} cannot be both varied and fixed: got fixed={fixed!r}")
    present_factors = tuple(c for c in data_factors
                            if isinstance(scores, pd.DataFrame) and c in scores.columns)
    frame = check_scores(scores, tuple(dict.fromkeys(present_factors + tuple(fixed))))
    for column, value in fixed.items():
        if column not in frame.columns:
            raise ValueError(f"fixed column {column!r} is not in scores: got columns {list(scores.columns)!r}")
        mask = frame[column] == value
        if not mask.any():
            raise ValueError(f"no rows with {column}={value!r}: values are {sorted(frame[column].unique().tolist())!r}")
        frame = frame[mask]
    for column in present_factors:
        if column != vary and column not in fixed and frame[column].nunique() > 1:
            raise ValueError(
                f"factor {column!r} is not fixed and has several values "
                f"{sorted(frame[column].unique().tolist())!r}: add it to fixed"
            )
    if vary == "strategy":
        names = check_strategies(strategies if strategies is not None else HEURISTIC_STRATEGIES)
        checked = check_params(names, params)
        table = consensus_table(frame.loc[:, list(SCORE_COLUMNS)], strategies=names, by=(), **checked)
        rankings = table.pivot(index="encoder", columns="strategy", values="rank").loc[:, names]
    else:
        names = check_strategies(strategy)
        checked = check_params(names, params)
        table = consensus_table(frame, strategies=names, by=(vary,), **checked)
        rankings = table.pivot(index="encoder", columns=vary, values="rank")
        rankings.columns = [str(c) for c in rankings.columns]
        rankings = rankings.loc[:, vocab.ordered(vary, rankings.columns)]
    rankings.columns = pd.Index([str(c) for c in rankings.columns], name=vary)
    rho, jac = agreement_matrices(rankings)
    return SensitivityResult(vary=vary, fixed=fixed, labels=tuple(rankings.columns),
                             rankings=rankings, jaccard=jac, spearman=rho)

