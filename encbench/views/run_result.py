"""A run's result on the user's data (the Run and Runs pages): the encoders ranked on one dataset
beside the published consensus, whether the best encoders change between the cv and time splits,
and how the local scores of a published dataset agree with its published cells."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from encbench import vocab
from encbench.experiment import DEFAULT_SPLIT, DEFAULT_TASK, SETTING, group_settings, with_key
from encbench.metrics import greater_is_better
from encbench.reproduction import TOLERANCE, WARN_SHARE, Reproduction, compare_to_published
from encbench.stats import consensus, jaccard_best, spearman
from encbench.vocab import FACTORS


class _Setting:
    """``model``, ``tuning`` and ``scoring`` read from ``setting`` (one value per factor)."""

    setting: Mapping[str, str]

    @property
    def model(self) -> str:
        return self.setting["model"]

    @property
    def tuning(self) -> str:
        return self.setting["tuning"]

    @property
    def scoring(self) -> str:
        return self.setting["scoring"]

    @property
    def task(self) -> str:
        """The task type of the setting (binary, the published study's, when it does not say)."""
        return self.setting.get("task", DEFAULT_TASK)


@dataclass(frozen=True)
class Comparison(_Setting):
    """One setting (model, tuning, scoring): the user's ranking next to the published consensus.

    Attributes
    ----------
    setting
        The value of each factor of :data:`encbench.vocab.FACTORS` (also read as ``model``,
        ``tuning``, ``scoring``).
    table
        One row per encoder run on the user's data: ``encoder, cv_score, rank`` (dense, 1 = best
        on the user's dataset) and ``published_rank`` (the published consensus restricted to the
        same encoders and re-ranked densely; NaN when the study has no result for it).
    rho, jaccard
        Spearman rho and Jaccard index of the rank-1 sets between the two rankings over the
        encoders both hold (None when fewer than two encoders are shared).
    n_shared
        How many encoders both rankings hold. The summary and the app report rho and Jaccard
        only from :data:`MIN_SHARED` shared encoders: over two or three, rho is 1 or -1 by chance
        alone.
    n_published_datasets
        How many published datasets the consensus aggregates (0 = none for these factors).
    split
        The split of the user's scores (``cv`` or ``time``); the published consensus is ``cv``.
    """

    setting: Mapping[str, str]
    strategy: str
    table: pd.DataFrame
    rho: float | None
    jaccard: float | None
    n_published_datasets: int
    summary: str
    split: str = DEFAULT_SPLIT
    n_shared: int = 0

    @property
    def agreement_shown(self) -> bool:
        """Whether enough encoders are shared for rho and Jaccard to mean something."""
        return self.rho is not None and self.n_shared >= MIN_SHARED


#: Fewest shared encoders for which a comparison reports Spearman rho and Jaccard: with n
#: encoders, a random pair of rankings reaches |rho| = 1 with probability 2 / n! (1 for n = 2,
#: 1/3 for n = 3, 1/12 for n = 4, 1/60 for n = 5).
MIN_SHARED = 5


def _dense_rank(values: pd.Series) -> pd.Series:
    return values.rank(method="dense").astype(int)


def _score_rank(scores: pd.Series, scoring: str) -> pd.Series:
    """Dense ranks of one metric's scores, 1 = best: the highest score, or the lowest of a
    lower-is-better metric (RMSE, MAE)."""
    return _dense_rank(-scores if greater_is_better(scoring) else scores)


def _names(encoders) -> str:
    encoders = list(encoders)
    return ", ".join(encoders[:4]) + (f" and {len(encoders) - 4} more" if len(encoders) > 4 else "")


def compare_with_published(local: pd.DataFrame, published: pd.DataFrame, *,
                           strategy: str = "R-M") -> list[Comparison]:
    """Compare per-encoder scores on one user dataset with the published consensus.

    Parameters
    ----------
    local
        ``scores`` rows of the user's run on ONE dataset: columns ``model, tuning, scoring,
        encoder, cv_score`` (``dataset`` and ``split`` optional). Each split is compared on its
        own (one :class:`Comparison` per setting and split).
    published
        Published ``scores`` rows (columns ``dataset, model, tuning, scoring, encoder, cv_score``).
    strategy
        Consensus strategy for the published side (default: mean rank, R-M).

    Notes
    -----
    The published side is the published scores of the same setting and encoders on every
    published dataset, paired by :func:`encbench.reproduction.compare_to_published` across
    datasets and splits: the published benchmark is ``cv`` only, so a ``time`` ranking is set
    beside the ``cv`` consensus (:attr:`Comparison.split` says which split the user's ranking
    has). Reproducibility notes do not apply: the consensus ranks published scores as published.
    """
    needed = set(FACTORS) | {"encoder", "cv_score"}
    missing = needed - set(local.columns)
    if missing:
        raise ValueError(f"local scores lack columns {sorted(missing)!r}")
    if "dataset" in local.columns and local["dataset"].nunique() > 1:
        raise ValueError(f"local scores must hold one dataset: got {sorted(local['dataset'].unique())!r}")
    comparisons = []
    # in vocabulary order (models, then tuning, then metrics), as everywhere in the app
    for setting, rows in group_settings(with_key(local, SETTING), SETTING):
        split = setting.pop("split")
        mine = rows.groupby("encoder", as_index=False)["cv_score"].mean()
        mine["rank"] = _score_rank(mine["cv_score"], setting["scoring"])
        pairs = compare_to_published(rows, published, across=("dataset", "split")).cells
        theirs = pairs[["dataset", "encoder", "published"]].rename(columns={"published": "cv_score"})
        n_datasets = int(theirs["dataset"].nunique())
        table = mine.sort_values(["rank", "encoder"]).reset_index(drop=True)
        rho = jac = None
        n_shared = 0
        if n_datasets:
            cons = consensus(theirs[["dataset", "encoder", "cv_score"]], strategy)
            table["published_rank"] = table["encoder"].map(_dense_rank(cons)).astype("Int64")
            shared = table.dropna(subset=["published_rank"])
            n_shared = len(shared)
            if len(shared) >= 2:
                ours = shared.set_index("encoder")["rank"]
                pub = _dense_rank(shared.set_index("encoder")["published_rank"].astype(float))
                rho = float(spearman(ours, pub))
                jac = float(jaccard_best(ours, pub))
        else:
            table["published_rank"] = pd.Series(pd.NA, index=table.index, dtype="Int64")
        comparisons.append(Comparison(setting, strategy, table, rho, jac, n_datasets,
                                      _summary(setting, strategy, table, rho, jac, n_datasets, n_shared),
                                      split, n_shared))
    return comparisons


def _setting_text(setting: Mapping[str, str]) -> str:
    """``"LogReg/AUC (no tuning)"``: a setting as the summaries name it (the metric's direction
    when lower is better: ``"Ridge/RMSE, lower is better (no tuning)"``)."""
    lower = "" if greater_is_better(setting["scoring"]) else ", lower is better"
    return f"{setting['model']}/{setting['scoring']}{lower} ({setting['tuning']} tuning)"


def _summary(setting, strategy, table, rho, jac, n_datasets, n_shared) -> str:
    best = table[table["rank"] == 1]
    text = (f"On your data the best encoder{'s' if len(best) > 1 else ''} for {_setting_text(setting)} "
            f"{'were' if len(best) > 1 else 'was'} {_names(best['encoder'])} "
            f"(score {best['cv_score'].iloc[0]:.4f}).")
    task = setting.get("task", DEFAULT_TASK)
    if task != DEFAULT_TASK:
        return text + (f" No published reference exists for {task}: the published study, and so its "
                       f"consensus, covers binary classification only; this ranking is of your "
                       f"{task} runs alone.")
    if not n_datasets:
        return text + " The published benchmark has no results for these factors."
    pub_best = table[table["published_rank"] == 1]["encoder"]
    text += (f" Among the same encoders, the published consensus ({strategy} over {n_datasets} "
             f"datasets) recommends {_names(pub_best)}.")
    if rho is not None and n_shared >= MIN_SHARED:
        text += (f" Agreement over the {n_shared} encoders both rank: Spearman rho {rho:.2f}, "
                 f"Jaccard of best sets {jac:.2f}.")
    elif n_shared:
        text += (f" No agreement measure: the two rankings share {n_shared} encoder"
                 f"{'s' if n_shared > 1 else ''}, too few for a rank correlation (at least {MIN_SHARED}).")
    return text


@dataclass(frozen=True)
class SplitComparison(_Setting):
    """One setting (model, tuning, scoring) of one dataset evaluated under both splits.

    Attributes
    ----------
    setting
        The value of each factor of :data:`encbench.vocab.FACTORS` (also read as ``model``,
        ``tuning``, ``scoring``).
    best_cv, best_time : tuple of str
        The rank-1 encoders under stratified folds (``cv``) and forward folds in time (``time``).
    changed : bool
        Whether the sets of best encoders differ.
    rho, jaccard : float or None
        Spearman rho of the two rankings and Jaccard index of their best sets, over the
        encoders both hold (None when fewer than two are shared).
    """

    setting: Mapping[str, str]
    best_cv: tuple[str, ...]
    best_time: tuple[str, ...]
    changed: bool
    rho: float | None
    jaccard: float | None
    summary: str


def compare_splits(scores: pd.DataFrame) -> list[SplitComparison]:
    """Do the best encoders change between ``cv`` and ``time`` on one dataset?

    Parameters
    ----------
    scores
        ``scores`` rows of ONE dataset with a ``split`` column (several runs are averaged per
        split). Factor combinations without results under both splits are skipped.
    """
    needed = set(FACTORS) | {"encoder", "cv_score", "split"}
    missing = needed - set(scores.columns)
    if missing:
        raise ValueError(f"scores lack columns {sorted(missing)!r}")
    if "dataset" in scores.columns and scores["dataset"].nunique() > 1:
        raise ValueError(f"scores must hold one dataset: got {sorted(scores['dataset'].unique())!r}")
    out = []
    for setting, rows in group_settings(scores):
        means = rows.groupby(["split", "encoder"])["cv_score"].mean().unstack("split")
        if not {"cv", "time"} <= set(means.columns):
            continue
        means = means[["cv", "time"]].dropna()
        if means.empty:
            continue
        ranks = {s: _score_rank(means[s], setting["scoring"]) for s in ("cv", "time")}
        best = {s: tuple(e for e in vocab_sorted(ranks[s][ranks[s] == 1].index)) for s in ("cv", "time")}
        rho = jac = None
        if len(means) >= 2:
            rho = float(spearman(ranks["cv"], ranks["time"]))
            jac = float(jaccard_best(ranks["cv"], ranks["time"]))
        changed = set(best["cv"]) != set(best["time"])
        text = (f"{_setting_text(setting)}: " + (
            f"the best encoders change. Under cv (stratified folds) the best "
            f"{'are' if len(best['cv']) > 1 else 'is'} {_names(best['cv'])}; forward in time "
            f"{'they are' if len(best['time']) > 1 else 'it is'} {_names(best['time'])}"
            if changed else
            f"the best encoder{'s are' if len(best['cv']) > 1 else ' is'} the same under both "
            f"splits: {_names(best['cv'])}"))
        text += "." if rho is None else f" (Spearman rho {rho:.2f} over {len(means)} encoders)."
        out.append(SplitComparison(setting, best["cv"], best["time"], changed, rho, jac, text))
    return out


def split_headline(comparisons: list[SplitComparison]) -> str:
    """One plain sentence over all combinations of :func:`compare_splits`."""
    if not comparisons:
        return "No combination has results under both splits yet."
    n_changed = sum(c.changed for c in comparisons)
    n = len(comparisons)
    if n_changed == 0:
        return (f"The best encoders do not change between cv and the time split on your data "
                f"(all {n} combination{'s' if n > 1 else ''}).")
    if n_changed == n:
        return (f"The best encoders change between cv and the time split on your data in every "
                f"combination ({n}): stratified folds let future rows inform the training, and "
                f"the ranking does not survive training on the past only.")
    return (f"The best encoders change between cv and the time split in {n_changed} of {n} "
            f"combinations on your data.")


def vocab_sorted(encoders) -> list[str]:
    """Encoders in vocabulary order (unknown names after, alphabetically)."""
    encoders = list(encoders)
    order = {e: i for i, e in enumerate(vocab.ENCODERS)}
    return sorted(encoders, key=lambda e: (order.get(e, len(order)), e))


@dataclass(frozen=True)
class DatasetAgreement:
    """How the local scores of one published dataset agree with its published scores.

    Attributes
    ----------
    dataset : str
        Dataset key (the OpenML id as text).
    pairs : Reproduction
        Its local experiments paired with the published ones
        (:func:`encbench.reproduction.compare_to_published`).
    threshold : float
        Agreement is *low* below this share of cells within the tolerance: the threshold the
        controls of ``encbench place`` are held to (:data:`encbench.reproduction.WARN_SHARE`).
    """

    dataset: str
    pairs: Reproduction
    threshold: float = WARN_SHARE

    @property
    def cells(self) -> int:
        return self.pairs.n_cells

    @property
    def within(self) -> int:
        return self.pairs.n_within

    @property
    def share(self) -> float:
        return float(self.pairs.share)

    @property
    def tolerance(self) -> float:
        return self.pairs.tolerance

    @property
    def low(self) -> bool:
        return self.share < self.threshold

    def message(self, name: str) -> str:
        """The banner: how many cells agree, the known reasons for the others, what follows."""
        text = (f"Your scores on {name} disagree with the published ones: {self.within} of "
                f"{self.cells} experiments ({self.share:.0%}) are within {self.tolerance:g} of their "
                f"published score, below the {self.threshold:.0%} that `encbench place` asks of its "
                f"control encoders.")
        if self.pairs.known_text():
            text += f" {self.pairs.known_text()}."
        return text + (" These local scores are not interchangeable with the published ones (README, "
                       "'Differences from the published study').")


def published_agreement(local: pd.DataFrame, published: pd.DataFrame, *, tolerance: float = TOLERANCE,
                        threshold: float = WARN_SHARE) -> dict[str, DatasetAgreement]:
    """Per published dataset of ``local``: how its local scores agree with the published ones,
    by :func:`encbench.reproduction.compare_to_published` (so a ``time`` score, which has no
    published counterpart, is not compared).

    Returns
    -------
    dict
        Dataset key -> :class:`DatasetAgreement`, for the datasets with at least one pair.
    """
    if local.empty or published.empty:
        return {}
    pairs = compare_to_published(local, published[published["dataset"].isin(set(local["dataset"]))],
                                 tolerance=tolerance)
    return {str(dataset): DatasetAgreement(str(dataset), Reproduction(cells, tolerance), threshold)
            for dataset, cells in pairs.cells.groupby("dataset", sort=False, observed=True)}
