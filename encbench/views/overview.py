"""The Overview page: what a view counts, its datasets, the headline consensus."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from encbench import stats
from encbench.metrics import greater_is_better
from encbench.views.consensus import pool_combinations
from encbench.views.labels import encoder_families
from encbench.vocab import ordered


@dataclass(frozen=True)
class ScoreCounts:
    """What a view's collapsed scores hold: distinct datasets, encoders, models, scorings and
    tunings, and ``results`` (score rows)."""

    datasets: int
    encoders: int
    models: int
    scorings: int
    tunings: int
    results: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def score_counts(scores: pd.DataFrame) -> ScoreCounts:
    """Datasets, encoders, models, scorings, tunings and results (rows) of collapsed scores."""
    return ScoreCounts(datasets=int(scores["dataset"].nunique()), encoders=int(scores["encoder"].nunique()),
                       models=int(scores["model"].nunique()), scorings=int(scores["scoring"].nunique()),
                       tunings=int(scores["tuning"].nunique()), results=int(len(scores)))


def datasets_in_view(datasets: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``datasets`` that ``scores`` (a view's collapsed scores) has results for, in
    the order of ``datasets``, with ``results`` = the view's score rows of each.

    A view's dataset list must count what the view counts: not datasets of other origins, and
    not a local re-run of a published experiment a second time.

    Examples
    --------
    >>> datasets = pd.DataFrame({"dataset": ["31", "50", "file:ab"], "results": [9, 9, 9]})
    >>> scores = pd.DataFrame({"dataset": ["50", "31", "50"]})
    >>> datasets_in_view(datasets, scores)[["dataset", "results"]].values.tolist()
    [['31', 1], ['50', 2]]
    """
    counts = scores["dataset"].astype(str).value_counts()
    shown = datasets[datasets["dataset"].astype(str).isin(counts.index)].copy()
    shown["results"] = shown["dataset"].astype(str).map(counts).astype(int)
    return shown.reset_index(drop=True)


#: the Overview's headline strategy: a mean rank, which the headline table also shows
HEADLINE_STRATEGY = "R-M"


def oriented(scores: pd.DataFrame) -> pd.DataFrame:
    """``scores`` higher-is-better without a ``scoring`` column: the scores of a lower-is-better
    metric (RMSE, MAE) negated. For a pooled rank strategy whose voters each hold one metric
    (a task's RMSE and R2 pooled): ranks within a voter are then the metric's own, which the
    statistics refuse to pool by metric name since the directions differ."""
    if "scoring" not in scores.columns:
        return scores
    lower = ~scores["scoring"].astype(str).map(greater_is_better).to_numpy(dtype=bool)
    out = scores.drop(columns="scoring")
    if lower.any():
        out = out.assign(cv_score=np.where(lower, -out["cv_score"].to_numpy(dtype=float),
                                           out["cv_score"].to_numpy(dtype=float)))
    return out


def headline_consensus(scores: pd.DataFrame) -> pd.DataFrame:
    """:data:`HEADLINE_STRATEGY` (R-M) over everything: every (dataset, model, tuning, metric) is a voter.

    Returns
    -------
    pandas.DataFrame
        ``encoder, rank, mean_rank, n_voters, family``, best first.
    """
    pooled = oriented(pool_combinations(scores))
    ranking = stats.consensus(pooled, HEADLINE_STRATEGY)
    ranks = stats.dataset_ranks(pooled)
    per_encoder = ranks.groupby("encoder")["rank"].agg(mean_rank="mean", n_voters="size")
    out = ranking.rename("rank").to_frame().join(per_encoder).reset_index()
    out["family"] = encoder_families(out["encoder"]).to_numpy()
    return out.sort_values(["rank", "encoder"], kind="stable").reset_index(drop=True)


def counts_by_pair(scores: pd.DataFrame, x: str, color: str) -> pd.DataFrame:
    """Number of score rows per (x, color), both factors in vocabulary order."""
    counts = scores.groupby([x, color], observed=True).size().rename("results").reset_index()
    counts[x] = pd.Categorical(counts[x], ordered(x, counts[x]), ordered=True)
    counts[color] = pd.Categorical(counts[color], ordered(color, counts[color]), ordered=True)
    counts = counts.sort_values([x, color]).reset_index(drop=True)
    counts[x] = counts[x].astype(str)
    counts[color] = counts[color].astype(str)
    return counts
