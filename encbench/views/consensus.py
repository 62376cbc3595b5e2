"""Consensus rankings: per combination or pooled, the exact Kemeny-Young order, their
agreement and the inputs of a critical-difference diagram.

Two ways to aggregate several factor combinations (model x tuning x metric), named on the page:

``per-combination``
    One consensus per combination, as the study does; the rankings are shown side by side.
``pooled``
    One consensus over all selected combinations: every (dataset, combination) is a voter. Scores
    are oriented first (a lower-is-better metric negated), so rank aggregations pool any metrics;
    quality aggregations average raw scores, so they are refused over metrics of different
    scales (:func:`refused_for_pooling`).
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from encbench import stats
from encbench.experiment import settings_of
from encbench.metrics import METRIC_REGISTRY, greater_is_better
from encbench.stats.similarity import agreement_matrices
from encbench.views.labels import combination_label, encoder_families, strategy_label
from encbench.vocab import FACTORS, STRATEGY_REGISTRY, ordered

MODES: tuple[str, ...] = ("per-combination", "pooled")
POOLED = "pooled"


def pool_combinations(scores: pd.DataFrame) -> pd.DataFrame:
    """Scores where every (dataset, combination) is its own voter ("pooled" mode): the dataset
    column becomes ``dataset|model|tuning|scoring``, one part per factor of :data:`FACTORS`."""
    frame = scores.copy()
    voter = frame["dataset"].astype(str)
    for factor in FACTORS:
        voter = voter + "|" + frame[factor].astype(str)
    frame["dataset"] = voter
    return frame


def oriented(scores: pd.DataFrame) -> pd.DataFrame:
    """``scores`` higher-is-better without a ``scoring`` column: the scores of a lower-is-better
    metric (RMSE, MAE) negated.

    For pooled voters that each hold one metric (a task's RMSE and R2 pooled): ranks within a
    voter are then the metric's own, best first, so any rank-based strategy pools them (the
    statistics refuse to pool scores by metric name when the directions differ, since they
    cannot tell which voter holds which)."""
    if "scoring" not in scores.columns:
        return scores
    lower = ~scores["scoring"].astype(str).map(greater_is_better).to_numpy(dtype=bool)
    out = scores.drop(columns="scoring")
    if lower.any():
        out = out.assign(cv_score=np.where(lower, -out["cv_score"].to_numpy(dtype=float),
                                           out["cv_score"].to_numpy(dtype=float)))
    return out


def _scale(metric: str) -> tuple:
    """What a metric's scores can be averaged with: its direction and its bounds (AUC, accuracy
    and F1 share [0, 1], higher is better); an unbounded metric only with itself."""
    spec = METRIC_REGISTRY.get(metric)
    if spec is None or spec.bounds is None:
        return (metric,)
    return (spec.greater_is_better, spec.bounds)


def mixed_scales(scores: pd.DataFrame) -> list[str]:
    """The metrics of ``scores`` when they are of different scales (:func:`_scale`: RMSE and R2,
    RMSE and MAE), else an empty list (one metric, or AUC with accuracy)."""
    if "scoring" not in scores.columns:
        return []
    metrics = ordered("scoring", scores["scoring"].astype(str).unique())
    return metrics if len({_scale(m) for m in metrics}) > 1 else []


#: strategies that compare scores only within a voter (ranks, pairwise wins, Q-RM's per-voter
#: rescaling), so voters of different metrics can be pooled once each is oriented
SCALE_FREE = frozenset({"Q-RM"})


def refused_for_pooling(scores: pd.DataFrame, strategies: Sequence[str], mode: str) -> tuple[list[str], str]:
    """The strategies that cannot pool ``scores``' voters, and why (markdown; empty when none).

    Pooling several metrics is fine for a rank-based strategy: the scores are oriented first
    (:func:`oriented`), so every voter ranks its encoders best first. A strategy that averages or
    thresholds raw scores across voters (Q-M, Q-Md, Q-Th, Q-Imp) means nothing over metrics of
    different scales (an RMSE beside an R2) and is refused there.
    """
    if mode != POOLED:
        return [], ""
    metrics = mixed_scales(scores)
    refused = [s for s in strategies if s in STRATEGY_REGISTRY and STRATEGY_REGISTRY[s].uses_scores
               and s not in SCALE_FREE]
    if not metrics or not refused:
        return [], ""
    return refused, (f"{', '.join(refused)} left out: {'it averages' if len(refused) == 1 else 'they average'} "
                     f"or threshold raw scores across voters, and the pooled voters hold metrics of different "
                     f"scales ({', '.join(metrics)}). Rank strategies "
                     f"({', '.join(n for n, s in STRATEGY_REGISTRY.items() if not s.uses_scores)}) "
                     f"and Q-RM pool them: each voter's scores are oriented (lower-is-better negated) and "
                     f"compared within the voter. Or choose *per-combination*.")


def pooled_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """:func:`pool_combinations`, oriented (:func:`oriented`) when the metrics pooled point in
    both directions (RMSE with R2): each voter then ranks its encoders best first, which the
    statistics cannot do by metric name once voters of opposite directions share a ranking. One
    metric, or metrics of one direction, keep their ``scoring`` column (the statistics orient
    them and check a strategy against them)."""
    frame = pool_combinations(scores)
    if "scoring" in frame.columns and frame["scoring"].astype(str).map(greater_is_better).nunique() > 1:
        return oriented(frame)
    return frame


def combinations_of(scores: pd.DataFrame) -> list[tuple[str, ...]]:
    """The combinations (one value per factor of :data:`FACTORS`) present, in vocabulary order."""
    return settings_of(scores)


def subset_for(scores: pd.DataFrame, combination: str, mode: str) -> pd.DataFrame:
    """The rows a single consensus of ``combination`` is computed on (its own, or all pooled)."""
    if mode == "pooled":
        return pooled_scores(scores)
    for combo in combinations_of(scores):
        if combination_label(*combo) == combination:
            mask = np.ones(len(scores), dtype=bool)
            for factor, value in zip(FACTORS, combo):
                mask &= (scores[factor] == value).to_numpy()
            return scores[mask]
    raise ValueError(f"unknown combination {combination!r}")


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES!r}: got {mode!r}")
    return mode


#: the strategy :func:`kemeny_ranks` solves with its solver's facts (the Consensus page's
#: Kemeny-Young tab); :func:`consensus_ranks` leaves it to that function
KEMENY_STRATEGY = "R-Kem"


def consensus_ranks(scores: pd.DataFrame, strategies: Sequence[str], *, mode: str,
                    params: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Consensus rankings of every strategy but :data:`KEMENY_STRATEGY`, per combination or pooled.

    Returns
    -------
    pandas.DataFrame
        Long: ``combination, strategy, encoder, rank`` (``combination`` is a label, or
        :data:`POOLED`).
    """
    _check_mode(mode)
    strategies = [s for s in strategies if s != KEMENY_STRATEGY]
    columns = ["combination", "strategy", "encoder", "rank"]
    if not strategies:
        return pd.DataFrame(columns=columns)
    params = stats.params_for(strategies, params)
    if mode == "pooled":
        table = stats.consensus_table(pooled_scores(scores), strategies=strategies, by=(), **params)
        table.insert(0, "combination", POOLED)
    else:
        table = stats.consensus_table(scores, strategies=strategies, by=FACTORS, **params)
        labels = [combination_label(*values) for values in zip(*(table[f] for f in FACTORS))]
        table = table.drop(columns=list(FACTORS))
        table.insert(0, "combination", labels)
    return table[columns]


class KemenyRanks(NamedTuple):
    """Exact Kemeny-Young rankings and the solver's facts (unpacks as ``ranks, info``)."""

    ranks: pd.DataFrame
    info: pd.DataFrame


def kemeny_ranks(scores: pd.DataFrame, *, mode: str) -> KemenyRanks:
    """Exact Kemeny-Young consensus per combination (or pooled), with solver facts.

    Returns
    -------
    ranks : pandas.DataFrame
        ``combination, strategy, encoder, rank`` with strategy :data:`KEMENY_STRATEGY`.
    info : pandas.DataFrame
        ``combination, agreement, objective, max_objective, solve_time_s, optimal, voters,
        encoders`` (``agreement`` = objective / max_objective, comparable across combinations).
    """
    _check_mode(mode)
    if mode == "pooled":
        jobs = [(POOLED, pooled_scores(scores))]
    else:
        jobs = [(combination_label(*c), subset_for(scores, combination_label(*c), mode))
                for c in combinations_of(scores)]
    rank_frames, info = [], []
    for label, subset in jobs:
        result = stats.kemeny(subset)
        ranking = result.ranking
        rank_frames.append(pd.DataFrame({"combination": label, "strategy": KEMENY_STRATEGY,
                                         "encoder": ranking.index.astype(str),
                                         "rank": ranking.to_numpy()}))
        info.append({"combination": label, "agreement": result.agreement, "objective": result.objective,
                     "max_objective": result.max_objective,
                     "solve_time_s": result.solve_time, "optimal": result.optimal,
                     "voters": int(subset["dataset"].nunique()), "encoders": len(ranking)})
    ranks = pd.concat(rank_frames, ignore_index=True) if rank_frames else pd.DataFrame(
        columns=["combination", "strategy", "encoder", "rank"])
    return KemenyRanks(ranks, pd.DataFrame(info))


@dataclass(frozen=True)
class ConsensusView:
    """Several consensus rankings side by side, with their pairwise agreement.

    Attributes
    ----------
    ranks : pandas.DataFrame
        Long: ``combination, strategy, column, encoder, rank`` (``column`` labels one ranking).
    wide : pandas.DataFrame
        ``encoder``, ``family`` and one rank column per ranking (NaN: encoder absent), sorted by
        the first ranking.
    columns : tuple of str
        Ranking labels in display order.
    spearman, jaccard : pandas.DataFrame
        Column x column agreement (Spearman rho; Jaccard index of the rank-1 sets).
    """

    ranks: pd.DataFrame
    wide: pd.DataFrame
    columns: tuple[str, ...]
    spearman: pd.DataFrame
    jaccard: pd.DataFrame


def assemble(ranks: pd.DataFrame, strategies: Sequence[str],
             params: Mapping[str, float] | None = None) -> ConsensusView:
    """Arrange long consensus ranks (from :func:`consensus_ranks`/:func:`kemeny_ranks`) for display.

    Columns are ordered by combination, then by the order of ``strategies``; a single
    combination is labelled by strategy alone.
    """
    if ranks.empty:
        raise ValueError("no consensus rankings to show: got an empty table")
    combos = list(dict.fromkeys(ranks["combination"]))
    order = {s: i for i, s in enumerate(strategies)}
    pairs = ranks[["combination", "strategy"]].drop_duplicates()
    pairs = sorted(pairs.itertuples(index=False, name=None),
                   key=lambda p: (combos.index(p[0]), order.get(p[1], len(order))))
    single = len(combos) == 1

    def label(combo: str, strategy: str) -> str:
        shown = strategy_label(strategy, params)
        return shown if single else f"{combo} | {shown}"

    labels = {p: label(*p) for p in pairs}
    ranks = ranks.assign(column=[labels[(c, s)] for c, s in zip(ranks["combination"], ranks["strategy"])])
    columns = tuple(labels[p] for p in pairs)
    wide = ranks.pivot(index="encoder", columns="column", values="rank").reindex(columns=list(columns))
    wide = wide.sort_values(list(columns), kind="stable", na_position="last")
    wide.columns.name = None
    wide = wide.reset_index()
    wide.insert(1, "family", encoder_families(wide["encoder"]).to_numpy())
    for column in columns:
        wide[column] = wide[column].astype("Int64")
    spearman, jaccard = agreement_matrices(wide.set_index("encoder")[list(columns)].astype("float64"))
    return ConsensusView(ranks=ranks[["combination", "strategy", "column", "encoder", "rank"]],
                         wide=wide, columns=columns, spearman=spearman, jaccard=jaccard)


def best_summary(view: ConsensusView, params: Mapping[str, float] | None = None, *, top: int = 5) -> str:
    """One line naming the best encoders (markdown), starting with ``"Best by "``.

    One combination: the rank-1 encoders of the first ranking and its top ``top``. Several
    combinations: for the first strategy, how many combinations rank each encoder first (a
    single column would only describe the first combination).
    """
    first = view.columns[0]
    combos = list(dict.fromkeys(view.ranks["combination"]))
    if len(combos) == 1:
        ordered_rows = view.wide.sort_values(first, kind="stable")
        best = ordered_rows.loc[ordered_rows[first] == ordered_rows[first].min(), "encoder"].tolist()
        return (f"Best by **{first}**: **{', '.join(best)}** · top {top}: "
                f"{', '.join(ordered_rows['encoder'].head(top))}")
    strategy = view.ranks.loc[view.ranks["column"] == first, "strategy"].iloc[0]
    part = view.ranks[view.ranks["strategy"] == strategy]
    wins = part[part["rank"] == 1].groupby("encoder").size()
    wins = wins.sort_values(ascending=False, kind="stable")
    wins = wins.loc[sorted(wins.index, key=lambda e: (-wins[e], str(e)))]
    shown = ", ".join(f"**{e}** ({n})" for e, n in wins.head(top).items())
    more = f", {len(wins) - top} more" if len(wins) > top else ""
    return (f"Best by **{strategy_label(strategy, params)}** across {len(combos)} combinations "
            f"(how many rank it first): {shown}{more}")


def agreement_long(view: ConsensusView) -> pd.DataFrame:
    """The off-diagonal agreement pairs as a table: ``ranking_a, ranking_b, spearman, jaccard``."""
    rows = []
    for a, b in itertools.combinations(view.columns, 2):
        rows.append({"ranking_a": a, "ranking_b": b, "spearman": view.spearman.loc[a, b],
                     "jaccard": view.jaccard.loc[a, b]})
    return pd.DataFrame(rows, columns=["ranking_a", "ranking_b", "spearman", "jaccard"])


def cd_inputs(result: stats.NemenyiResult) -> tuple[pd.Series, float, list[tuple[str, str]]]:
    """Mean ranks, critical difference and significant pairs of a Nemenyi result, for plotting."""
    pairs = list(zip(result.significant_pairs["better"].astype(str),
                     result.significant_pairs["worse"].astype(str)))
    return result.mean_ranks, float(result.critical_difference), pairs


def voters_text(n: int, voters: pd.Series | pd.Index | None = None) -> str:
    """``N`` named for what it counts: ``"16 datasets"``, or for pooled voters (ids
    ``dataset|model|tuning|scoring``, :func:`pool_combinations`) ``"32 voters ((dataset,
    combination) pairs on 16 datasets)"``: a pooled N is not a number of datasets."""
    ids = pd.Series([] if voters is None else voters, dtype=object).astype(str).drop_duplicates()
    if len(ids) and ids.str.count(r"\|").eq(len(FACTORS)).all():
        datasets = ids.str.split("|", n=1).str[0].nunique()
        return f"{n} voters ((dataset, combination) pairs on {datasets} datasets)"
    return f"{n} datasets"


def cd_subtitle(result: stats.NemenyiResult, design: stats.BlockDesign) -> list[str]:
    """What a critical-difference diagram shows, for its subtitle (and so for its exports).

    Names the test, alpha, N (datasets ranked, or pooled voters and the datasets they come from:
    :func:`voters_text`) and k, the Friedman outcome, and how incomplete blocks were handled
    (:func:`encbench.stats.block_design`).
    """
    fried = (f"Friedman chi2 = {result.friedman_statistic:.1f}, p = {result.friedman_pvalue:.2g}"
             if pd.notna(result.friedman_statistic)
             else "Friedman test not defined (fewer than 2 complete datasets)")
    lines = [f"Nemenyi, alpha = {result.alpha:g}, N = {voters_text(result.n_datasets, design.scores['dataset'])}, "
             f"k = {result.n_encoders} encoders, CD = {result.critical_difference:.2f}; {fried}",
             f"Blocks: {design.description}"]
    if design.design == "all" and not design.complete:
        lines[-1] += " - encoders are ranked on different subsets; the test assumes complete blocks"
    return lines


@dataclass(frozen=True)
class TieConventions:
    """Where the CD diagram's order and R-M's differ, and why: the tie convention.

    The CD diagram (Friedman, Nemenyi) places an encoder at its mean *Friedman* rank: tied
    encoders share the mean of their positions (two tied for first get 1.5 each). R-M, the
    study's mean rank, averages *dense* ranks: tied encoders share the best position and the next
    encoder follows at once (1, 1, 2). Encoders close together can therefore swap between the
    two orders, most where an encoder often ties with others.

    Attributes
    ----------
    means : pandas.DataFrame
        ``encoder, friedman_mean_rank, dense_mean_rank``, in the CD diagram's order.
    swapped : tuple of (str, str)
        Pairs ``(a, b)`` R-M orders a before b and the CD diagram b before a, R-M's order.
    """

    means: pd.DataFrame
    swapped: tuple[tuple[str, str], ...]

    def text(self, limit: int = 6) -> str:
        """What the page says (markdown)."""
        text = ("The diagram places each encoder at its mean Friedman rank (tied encoders share the mean "
                "of their positions: two tied for first get 1.5 each); R-M averages dense ranks, the "
                "study's convention (the two get 1 and the next encoder 2).")
        if not self.swapped:
            return text + " On these voters both give the same order."
        shown = ", ".join(f"{a} / {b}" for a, b in self.swapped[:limit])
        more = f" and {len(self.swapped) - limit} more pairs" if len(self.swapped) > limit else ""
        return (text + f" So close encoders can swap: R-M orders {shown}{more} the other way round "
                "from this diagram. Neither is wrong; the table in the Download menu gives both means "
                "(dense_mean_rank is R-M's).")


def tie_conventions(scores: pd.DataFrame) -> TieConventions:
    """Both mean ranks of ``scores`` (one combination or pooled voters, as the CD diagram's
    rows) and the pairs of encoders they order differently (:class:`TieConventions`)."""
    ranks = stats.dataset_ranks(scores)
    means = (ranks.groupby("encoder")[["average_rank", "rank"]].mean()
             .rename(columns={"average_rank": "friedman_mean_rank", "rank": "dense_mean_rank"}))
    means = means.sort_values(["friedman_mean_rank"], kind="stable")
    by_dense = means.sort_values(["dense_mean_rank"], kind="stable")
    friedman = means["friedman_mean_rank"]
    dense = means["dense_mean_rank"]
    order = by_dense.index.tolist()
    swapped = tuple((a, b) for i, a in enumerate(order) for b in order[i + 1:]
                    if dense[a] < dense[b] and friedman[a] > friedman[b])
    return TieConventions(means=means.reset_index(), swapped=swapped)


def nemenyi_table(result: stats.NemenyiResult) -> pd.DataFrame:
    """A Nemenyi result as an exportable table, one row per encoder (best mean rank first).

    Columns ``encoder, mean_rank, n_significantly_better, significantly_worse_than``: the last
    lists the encoders that beat it significantly (the pairs behind the CD diagram and R-Nem).
    """
    pairs = result.significant_pairs
    beaten_by = pairs.groupby("worse")["better"].agg(lambda s: ", ".join(map(str, s)))
    return pd.DataFrame({
        "encoder": result.mean_ranks.index.astype(str),
        "mean_rank": result.mean_ranks.to_numpy(),
        "n_significantly_better": result.better_counts.reindex(result.mean_ranks.index).to_numpy(),
        "significantly_worse_than": [beaten_by.get(e, "") for e in result.mean_ranks.index],
    })
