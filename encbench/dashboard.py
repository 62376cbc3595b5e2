"""The computations behind the app's pages, as pure functions (no streamlit, no SQL).

Pages load rows through :mod:`encbench.store.queries`, pass them here and draw the results with
:mod:`encbench.plots`. Keeping this layer pure lets the benchmarks time exactly what a page does
and lets notebooks reproduce any view.

Two ways to aggregate several factor combinations (model x tuning x metric) on the Consensus
page, named on the page:

``per-combination``
    One consensus per combination, as the study does; the rankings are shown side by side.
``pooled``
    One consensus over all selected combinations: every (dataset, combination) is a voter. Rank
    aggregations then average ranks over all those voters; quality aggregations average raw
    scores, which mixes the scales of different metrics.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import stats, vocab
from encbench.encoders import REGISTRY
from encbench.experiment import key_columns, natural_key, setting_label, settings_of  # noqa: F401 - natural_key for the pages
from encbench.reproduction import compare_to_published, split_origins
from encbench.stats.similarity import agreement_matrices
# The factors and their order live in the vocabulary; imported here for the pages' convenience.
from encbench.vocab import FACTORS, ordered

MODES: tuple[str, ...] = ("per-combination", "pooled")
NOT_IN_REGISTRY = "(not in registry)"
POOLED = "pooled"
#: factors Sensitivity can vary: the data factors, the evaluation split (issue 15), the strategy
VARIABLE: tuple[str, ...] = (*FACTORS, "split", "strategy")


# --------------------------------------------------------------------------- labels and ordering


def combination_label(*values: str) -> str:
    """``"LogReg / no / AUC"``: how a combination (one value per factor of
    :data:`encbench.vocab.FACTORS`, in order) is named in tables and charts."""
    return setting_label(values)


def strategy_label(strategy: str, params: Mapping[str, object] | None = None) -> str:
    """A strategy with the parameters that change its meaning, e.g. ``"Q-Th (theta=0.95)"``.

    Which parameters those are is the registry's ``in_label`` (:data:`encbench.vocab.STRATEGY_REGISTRY`);
    a parameter not in ``params`` is not named.
    """
    params = params or {}
    spec = vocab.STRATEGY_REGISTRY.get(strategy)
    shown = [f"{p.name}={float(params[p.name]):g}" for p in (spec.params if spec else ())
             if p.in_label and p.name in params]
    return f"{strategy} ({', '.join(shown)})" if shown else strategy


def encoder_families(encoders: Iterable[str]) -> pd.Series:
    """Encoder -> family from the encoder registry (:data:`encbench.encoders.REGISTRY`).

    An encoder the registry does not know (e.g. results imported from elsewhere) is labelled
    :data:`NOT_IN_REGISTRY` rather than guessed.
    """
    names = list(dict.fromkeys(map(str, encoders)))
    return pd.Series(
        [REGISTRY[n].family if n in REGISTRY else NOT_IN_REGISTRY for n in names],
        index=pd.Index(names, name="encoder"), name="family", dtype=object,
    )


def encoders_of_families(families: Iterable[str]) -> list[str]:
    """Canonical encoders whose registry family is one of ``families`` (vocabulary order)."""
    wanted = set(families)
    return [name for name in vocab.ENCODERS if name in REGISTRY and REGISTRY[name].family in wanted]


def family_names() -> list[str]:
    """Families of the registry, in the order of first appearance in the vocabulary."""
    return list(dict.fromkeys(REGISTRY[n].family for n in vocab.ENCODERS if n in REGISTRY))


# --------------------------------------------------------------------------- origins

#: What a view shows: the published benchmark (default), published and local results, or local only.
ORIGIN_CHOICES: dict[str, tuple[str, ...]] = {
    "published": ("published",),
    "both": ("published", "local"),
    "local": ("local",),
}
ORIGIN_LABELS = {"published": "Published benchmark", "both": "Published + local runs",
                 "local": "Local runs only"}
def origins_of(choice: str) -> tuple[str, ...]:
    """The ``scores.origin`` values a view choice includes (see :data:`ORIGIN_CHOICES`)."""
    if choice not in ORIGIN_CHOICES:
        raise ValueError(f"origin choice must be one of {tuple(ORIGIN_CHOICES)}: got {choice!r}")
    return ORIGIN_CHOICES[choice]


@dataclass(frozen=True)
class OriginMix:
    """How local results enter a view (for the banner that announces them).

    Attributes
    ----------
    local_rows : int
        Local score rows in the selection (before one score per experiment is kept).
    local_datasets : int
        Datasets with local scores.
    shared_datasets : int
        Of those, datasets that also have published scores (a local run on a published dataset).
    both : int
        Experiments with both a published and a local score; only the preferred one counts.
    local_runs : int
        Local runs the rows come from.
    """

    local_rows: int
    local_datasets: int
    shared_datasets: int
    both: int
    local_runs: int


def origin_mix(scores: pd.DataFrame) -> OriginMix:
    """Count what local results add to ``scores`` (rows of every origin, not yet collapsed)."""
    if scores.empty:
        return OriginMix(0, 0, 0, 0, 0)
    local = scores[scores["origin"] == "local"]
    published = scores[scores["origin"] == "published"]
    local_sets = set(local["dataset"].astype(str))
    shared = local_sets & set(published["dataset"].astype(str))
    key = key_columns(scores)
    both = local[key].drop_duplicates().merge(published[key].drop_duplicates(), on=key, how="inner")
    runs = {r for v in local["run_id"].astype(str) for r in v.split(",")}
    return OriginMix(local_rows=int(len(local)), local_datasets=len(local_sets),
                     shared_datasets=len(shared), both=int(len(both)), local_runs=len(runs))


def origin_banner(choice: str, mix: OriginMix, prefer: str) -> str | None:
    """The sentence that announces local results in a view (None for the published view)."""
    if choice == "published":
        return None
    if choice == "local":
        return (f"Local runs only: {mix.local_rows:,} local score rows on {mix.local_datasets} "
                f"dataset(s), from {mix.local_runs} run(s). The published benchmark is left out.")
    text = (f"Local results are mixed in: {mix.local_rows:,} local score rows on "
            f"{mix.local_datasets} dataset(s) from {mix.local_runs} run(s)")
    if mix.shared_datasets:
        text += (f"; {mix.shared_datasets} of these datasets are published ones and are counted "
                 f"once, under their published key")
    text += "."
    if mix.both:
        text += (f" {mix.both:,} experiments have both a published and a local score: "
                 f"the {prefer} score counts.")
    return text


def score_counts(scores: pd.DataFrame) -> dict[str, int]:
    """Datasets, encoders, models, scorings, tunings and results (rows) of collapsed scores."""
    return {"datasets": int(scores["dataset"].nunique()), "encoders": int(scores["encoder"].nunique()),
            "models": int(scores["model"].nunique()), "scorings": int(scores["scoring"].nunique()),
            "tunings": int(scores["tuning"].nunique()), "results": int(len(scores))}


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


def published_vs_local(scores: pd.DataFrame) -> pd.DataFrame:
    """Each experiment with a published and a local score, side by side, with the difference.

    Parameters
    ----------
    scores : pandas.DataFrame
        Score rows of both origins (not collapsed); several local runs of one experiment are
        averaged.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, tuning, scoring, encoder, split, published, local, difference``
        (local minus published), ``within`` (of :data:`encbench.reproduction.TOLERANCE`),
        ``local_runs``, ``note`` (why the published score is no reference for the local one,
        see :func:`encbench.store.published.reproducibility_note`; ``''`` when it is);
        experiments with a score of only one origin are left out. Sorted by dataset, then
        factors and encoders in vocabulary order. The pairs of
        :func:`encbench.reproduction.compare_to_published`.
    """
    columns = ["dataset", *FACTORS, "encoder", "split", "published", "local", "difference", "within",
               "local_runs", "note"]
    if scores.empty or "origin" not in scores.columns:
        return pd.DataFrame(columns=columns)
    return compare_to_published(*split_origins(scores)).cells[columns]


# --------------------------------------------------------------------------- overview

#: the Overview's headline strategy: a mean rank, which the headline table also shows
HEADLINE_STRATEGY = "R-M"


def headline_consensus(scores: pd.DataFrame) -> pd.DataFrame:
    """:data:`HEADLINE_STRATEGY` (R-M) over everything: every (dataset, model, tuning, metric) is a voter.

    Returns
    -------
    pandas.DataFrame
        ``encoder, rank, mean_rank, n_voters, family``, best first.
    """
    pooled = pool_combinations(scores)
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


# --------------------------------------------------------------------------- explorer

def ranked_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """The score rows with each encoder's dense rank within its (dataset, combination) voter.

    Keeps ``origin``/``run_id``/``time`` when present; adds ``rank`` (1 = best) and ``family``.
    """
    if scores.empty:
        return scores.assign(rank=pd.Series(dtype="int64"), family=pd.Series(dtype=object))
    ranks = stats.dataset_ranks(scores, by=FACTORS)[[*FACTORS, "dataset", "encoder", "rank"]]
    out = scores.merge(ranks, on=[*FACTORS, "dataset", "encoder"], how="left", validate="one_to_one")
    out["family"] = encoder_families(out["encoder"]).reindex(out["encoder"]).to_numpy()
    return out


def encoder_dataset_matrix(ranked: pd.DataFrame, value: str) -> pd.DataFrame:
    """Mean of ``value`` per (encoder, dataset) over the selected combinations (long)."""
    if value not in ("rank", "cv_score"):
        raise ValueError(f"value must be 'rank' or 'cv_score': got {value!r}")
    return ranked.groupby(["encoder", "dataset"], observed=True)[value].mean().reset_index()


def coverage(ranked: pd.DataFrame, encoders: Sequence[str], datasets: Sequence[str]) -> dict[str, int]:
    """How many (encoder, dataset) cells of the grid have at least one result."""
    present = ranked[["encoder", "dataset"]].drop_duplicates()
    cells = len(encoders) * len(datasets)
    return {"cells": cells, "with_result": int(len(present)), "missing": int(cells - len(present))}


# --------------------------------------------------------------------------- consensus

def pool_combinations(scores: pd.DataFrame) -> pd.DataFrame:
    """Scores where every (dataset, combination) is its own voter ("pooled" mode): the dataset
    column becomes ``dataset|model|tuning|scoring``, one part per factor of :data:`FACTORS`."""
    frame = scores.copy()
    voter = frame["dataset"].astype(str)
    for factor in FACTORS:
        voter = voter + "|" + frame[factor].astype(str)
    frame["dataset"] = voter
    return frame


def combinations_of(scores: pd.DataFrame) -> list[tuple[str, ...]]:
    """The combinations (one value per factor of :data:`FACTORS`) present, in vocabulary order."""
    return settings_of(scores)


def subset_for(scores: pd.DataFrame, combination: str, mode: str) -> pd.DataFrame:
    """The rows a single consensus of ``combination`` is computed on (its own, or all pooled)."""
    if mode == "pooled":
        return pool_combinations(scores)
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


def consensus_ranks(scores: pd.DataFrame, strategies: Sequence[str], *, mode: str,
                    params: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Consensus rankings of every non-Kemeny strategy, per combination or pooled.

    Returns
    -------
    pandas.DataFrame
        Long: ``combination, strategy, encoder, rank`` (``combination`` is a label, or
        :data:`POOLED`).
    """
    _check_mode(mode)
    strategies = [s for s in strategies if s != "R-Kem"]
    columns = ["combination", "strategy", "encoder", "rank"]
    if not strategies:
        return pd.DataFrame(columns=columns)
    params = stats.params_for(strategies, params)
    if mode == "pooled":
        table = stats.consensus_table(pool_combinations(scores), strategies=strategies, by=(), **params)
        table.insert(0, "combination", POOLED)
    else:
        table = stats.consensus_table(scores, strategies=strategies, by=FACTORS, **params)
        labels = [combination_label(*values) for values in zip(*(table[f] for f in FACTORS))]
        table = table.drop(columns=list(FACTORS))
        table.insert(0, "combination", labels)
    return table[columns]


def kemeny_ranks(scores: pd.DataFrame, *, mode: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exact Kemeny-Young consensus per combination (or pooled), with solver facts.

    Returns
    -------
    ranks : pandas.DataFrame
        ``combination, strategy, encoder, rank`` with strategy ``R-Kem``.
    info : pandas.DataFrame
        ``combination, agreement, objective, max_objective, solve_time_s, optimal, voters,
        encoders`` (``agreement`` = objective / max_objective, comparable across combinations).
    """
    _check_mode(mode)
    if mode == "pooled":
        jobs = [(POOLED, pool_combinations(scores))]
    else:
        jobs = [(combination_label(*c), subset_for(scores, combination_label(*c), mode))
                for c in combinations_of(scores)]
    rank_frames, info = [], []
    for label, subset in jobs:
        result = stats.kemeny(subset)
        ranking = result.ranking
        rank_frames.append(pd.DataFrame({"combination": label, "strategy": "R-Kem",
                                         "encoder": ranking.index.astype(str),
                                         "rank": ranking.to_numpy()}))
        info.append({"combination": label, "agreement": result.agreement, "objective": result.objective,
                     "max_objective": result.max_objective,
                     "solve_time_s": result.solve_time, "optimal": result.optimal,
                     "voters": int(subset["dataset"].nunique()), "encoders": len(ranking)})
    ranks = pd.concat(rank_frames, ignore_index=True) if rank_frames else pd.DataFrame(
        columns=["combination", "strategy", "encoder", "rank"])
    return ranks, pd.DataFrame(info)


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


def cd_subtitle(result: stats.NemenyiResult, design: stats.BlockDesign) -> list[str]:
    """What a critical-difference diagram shows, for its subtitle (and so for its exports).

    Names the test, alpha, N (datasets ranked) and k, the Friedman outcome, and how incomplete
    blocks were handled (DESIGN.md section 7).
    """
    fried = (f"Friedman chi2 = {result.friedman_statistic:.1f}, p = {result.friedman_pvalue:.2g}"
             if pd.notna(result.friedman_statistic)
             else "Friedman test not defined (fewer than 2 complete datasets)")
    lines = [f"Nemenyi, alpha = {result.alpha:g}, N = {result.n_datasets} datasets, "
             f"k = {result.n_encoders} encoders, CD = {result.critical_difference:.2f}; {fried}",
             f"Blocks: {design.description}"]
    if design.design == "all" and not design.complete:
        lines[-1] += " - encoders are ranked on different subsets; the test assumes complete blocks"
    return lines


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


# --------------------------------------------------------------------------- sensitivity

AVERAGE_ALL = "(average over all)"


def sensitivity_view(scores: pd.DataFrame, vary: str, fixed: Mapping[str, str], *,
                     strategy: str = "R-M", strategies: Sequence[str] | None = None,
                     labels: Sequence[str] | None = None,
                     params: Mapping[str, float] | None = None) -> dict[str, object]:
    """Similarity of consensus rankings as ``vary`` changes, the other factors fixed or averaged.

    A fixed factor set to :data:`AVERAGE_ALL` is looped over: one similarity matrix per value
    (per combination of such factors) and their element-wise mean (NaN-aware) is returned, as in
    the study's sensitivity figures.

    Returns
    -------
    dict
        ``jaccard``, ``spearman`` (label x label DataFrames), ``rankings`` (encoder x label for
        the first fixed setting), ``n_settings`` (matrices averaged), ``labels``.

    Raises
    ------
    ValueError
        When no setting has data for at least two labels.
    """
    if vary not in VARIABLE:
        raise ValueError(f"vary must be one of {', '.join(VARIABLE)}: got {vary!r}")
    if vary != "split" and "split" in scores.columns and scores["split"].nunique() > 1:
        raise ValueError(f"scores mix the splits {sorted(scores['split'].unique())!r}; vary the split "
                         f"or keep one: got vary={vary!r}")
    others = [f for f in FACTORS if f != vary]
    loops = {f: ordered(f, scores[f].unique()) if fixed.get(f) == AVERAGE_ALL else [fixed[f]]
             for f in others}
    data = scores
    if labels is not None and vary != "strategy":
        data = data[data[vary].isin(list(labels))]
    if vary == "split":
        # Only datasets evaluated under every split compared: otherwise the cv ranking would
        # rest on the published benchmark and the time ranking on the user's few datasets.
        per_split = [set(group) for _, group in data.groupby("split", observed=True)["dataset"]]
        shared = set.intersection(*per_split) if per_split else set()
        data = data[data["dataset"].isin(shared)]
    names = list(strategies) if vary == "strategy" else [strategy]
    use_params = stats.params_for(names, params)
    jac_sum = rho_sum = None
    jac_n = rho_n = None
    first_rankings = None
    n_settings = 0
    all_labels: list[str] = []
    for values in itertools.product(*(loops[f] for f in others)):
        setting = dict(zip(others, values))
        mask = np.ones(len(data), dtype=bool)
        for f, v in setting.items():
            mask &= (data[f] == v).to_numpy()
        subset = data[mask]
        if subset.empty or (vary != "strategy" and subset[vary].nunique() < 2):
            continue
        if vary == "strategy":
            result = stats.sensitivity(subset, "strategy", fixed=setting, strategies=names, **use_params)
        else:
            result = stats.sensitivity(subset, vary, fixed=setting, strategy=strategy, **use_params)
        if first_rankings is None:
            first_rankings = result.rankings
        all_labels = ordered(vary, list(all_labels) + list(result.labels)) if vary != "strategy" \
            else list(dict.fromkeys(list(all_labels) + list(result.labels)))
        jac = result.jaccard.reindex(index=all_labels, columns=all_labels)
        rho = result.spearman.reindex(index=all_labels, columns=all_labels)
        if jac_sum is None:
            jac_sum, rho_sum = jac.fillna(0.0), rho.fillna(0.0)
            jac_n, rho_n = jac.notna().astype(int), rho.notna().astype(int)
        else:
            jac_sum = jac_sum.reindex(index=all_labels, columns=all_labels, fill_value=0.0) + jac.fillna(0.0)
            rho_sum = rho_sum.reindex(index=all_labels, columns=all_labels, fill_value=0.0) + rho.fillna(0.0)
            jac_n = jac_n.reindex(index=all_labels, columns=all_labels, fill_value=0) + jac.notna().astype(int)
            rho_n = rho_n.reindex(index=all_labels, columns=all_labels, fill_value=0) + rho.notna().astype(int)
        n_settings += 1
    if n_settings == 0:
        raise ValueError(f"no setting of the fixed factors has results for two or more {vary} values")
    jaccard = (jac_sum / jac_n.where(jac_n > 0)).astype(float)
    spearman = (rho_sum / rho_n.where(rho_n > 0)).astype(float)
    return {"jaccard": jaccard, "spearman": spearman, "rankings": first_rankings,
            "n_settings": n_settings, "labels": tuple(all_labels)}


def similarity_table(matrix: pd.DataFrame, measure: str) -> pd.DataFrame:
    """A square similarity matrix as an exportable table (first column: the row label)."""
    out = matrix.copy()
    out.index.name = measure
    return out.reset_index()


# --------------------------------------------------------------------------- replicability

def replicability_long(summary: pd.DataFrame, strategy: str) -> pd.DataFrame:
    """A replicability summary as long rows for the chart: ``sample_size, measure, mean, low, high``."""
    rows = []
    for measure in ("rho", "J"):
        part = summary[["sample_size", f"{measure}_mean", f"{measure}_low", f"{measure}_high"]]
        part = part.set_axis(["sample_size", "mean", "low", "high"], axis=1)
        rows.append(part.assign(measure=f"{measure}-replicability", strategy=strategy))
    return pd.concat(rows, ignore_index=True)


def default_sample_sizes(n_datasets: int, *, step: int = 5) -> list[int]:
    """Sample sizes from 5 to half the datasets (two disjoint samples must fit)."""
    top = n_datasets // 2
    if top < 2:
        return []
    sizes = list(range(min(step, top), top + 1, step))
    if sizes[-1] != top:
        sizes.append(top)
    return sizes
