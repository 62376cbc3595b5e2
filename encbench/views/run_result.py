"""A run's result on the user's data (the Run and Runs pages): the encoders ranked on one dataset
beside the published consensus, whether the best encoders change between the cv and time splits,
and how the local scores of a published dataset agree with its published cells."""
from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import vocab
from encbench.experiment import DEFAULT_SPLIT, DEFAULT_TASK, SETTING, group_settings, with_key
from encbench.metrics import chance_level, greater_is_better
from encbench.advisor import published_consensus
from encbench.reproduction import TOLERANCE, WARN_SHARE, Reproduction, compare_to_published
from encbench.stats import consensus, jaccard_best, spearman
from encbench.tasks import get_task
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
        on the user's dataset) and ``published_rank`` (the consensus of the reference scores
        passed, :func:`encbench.advisor.published_consensus`, restricted to the
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


#: digits a run's scores are shown with; scores equal at this precision share a rank
DECIMALS = 4


def _setting_rows(published: pd.DataFrame, setting: Mapping[str, str]) -> pd.DataFrame:
    """The published rows of one setting (its model, tuning and scoring; published rows are
    ``cv`` and binary)."""
    keep = pd.Series(True, index=published.index)
    for factor in FACTORS:
        keep &= published[factor] == setting[factor]
    return published[keep]


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
        The reference ``scores`` rows (columns ``dataset, model, tuning, scoring, encoder,
        cv_score``): the published ones, or the advisor's reference
        (:func:`encbench.advisor.reference_scores`: the published datasets and encbench's
        binary suite), whose consensus the advice shows.
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
        # ranked as shown: two scores that read the same at DECIMALS digits share a rank
        mine["rank"] = _score_rank(mine["cv_score"].round(DECIMALS), setting["scoring"])
        pairs = compare_to_published(rows, published, across=("dataset", "split")).cells
        theirs = pairs[["dataset", "encoder", "published"]].rename(columns={"published": "cv_score"})
        n_datasets = int(theirs["dataset"].nunique())
        table = mine.sort_values(["rank", "encoder"]).reset_index(drop=True)
        rho = jac = None
        n_shared = 0
        if n_datasets:
            # the published consensus of the setting over every published encoder (the advice's
            # global order), read off for the encoders run: R-M recomputed over those alone
            # would rank them differently from the advice
            cons = (published_consensus(published, **{f: setting[f] for f in FACTORS}) if strategy == "R-M"
                    else consensus(_setting_rows(published, setting)[["dataset", "encoder", "cv_score"]], strategy))
            cons = cons[cons.index.isin(set(table["encoder"]))]
            n_datasets = int(_setting_rows(published, setting)["dataset"].nunique())
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
        return text + " The reference datasets have no results for these factors."
    pub_best = table[table["published_rank"] == 1]["encoder"]
    text += (f" The reference consensus ({strategy} over {n_datasets} reference datasets and every "
             f"encoder ranked there, the advice's global order) ranks first among these: {_names(pub_best)}.")
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
        if "task" in rows.columns:  # one dataset: one task, which names its cv folds
            setting["task"] = str(rows["task"].iloc[0])
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
            f"the best encoders change. Under cv ({cv_folds(setting.get('task', DEFAULT_TASK))}) the best "
            f"{'are' if len(best['cv']) > 1 else 'is'} {_names(best['cv'])}; forward in time "
            f"{'they are' if len(best['time']) > 1 else 'it is'} {_names(best['time'])}"
            if changed else
            f"the best encoder{'s are' if len(best['cv']) > 1 else ' is'} the same under both "
            f"splits: {_names(best['cv'])}"))
        text += "." if rho is None else f" (Spearman rho {rho:.2f} over {len(means)} encoders)."
        out.append(SplitComparison(setting, best["cv"], best["time"], changed, rho, jac, text))
    return out


def cv_folds(task: str) -> str:
    """The outer folds of the cv split for ``task`` (the task registry's ``outer_folds``):
    stratified for classes, as published; shuffled KFold for a regression target."""
    return "stratified folds" if get_task(task).stratified else "shuffled folds"


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
        tasks = {c.task for c in comparisons}
        folds = cv_folds(tasks.pop()) if len(tasks) == 1 else "cv folds"
        return (f"The best encoders change between cv and the time split on your data in every "
                f"combination ({n}): {folds} let future rows inform the training, and "
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
        return text + (" These local scores are not interchangeable with the published ones "
                       "(docs/protocol.md, 'Differences from the published study').")


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


# --------------------------------------------------------------------------- one answer per run

#: level of the tests of :func:`pool_run` (an encoder below it against the best is "worse")
ALPHA = 0.05
#: the baseline that leaves the categorical columns out
DROP = "Drop"


def _corrected_t(diffs: np.ndarray, n_folds: int) -> tuple[float, float]:
    """Student's t of the mean of per-fold differences, its variance corrected for the overlap
    of the training folds (Nadeau and Bengio 2003: ``1/k + n_test/n_train``, ``1/(k-1)`` for
    k-fold cross-validation), and its degrees of freedom. NaN without spread."""
    diffs = diffs[~np.isnan(diffs)]
    k = len(diffs)
    if k < 2:
        return math.nan, math.nan
    var = float(np.var(diffs, ddof=1))
    if var <= 0.0:
        return math.nan, float(k - 1)
    correction = 1.0 / k + 1.0 / max(n_folds - 1, 1)
    return float(np.mean(diffs)) / math.sqrt(correction * var), float(k - 1)


def _p_greater(diffs: np.ndarray, n_folds: int) -> float:
    """One-sided p of "the differences are above 0" (:func:`_corrected_t`). Differences
    without spread give no t: then the exact sign-flip p, ``1 / 2**k`` when all ``k`` are above
    0 (p = 0 would claim too much from a few folds), else 1."""
    from scipy.stats import t as student

    diffs = diffs[~np.isnan(diffs)]
    if not len(diffs):
        return math.nan
    t, df = _corrected_t(diffs, n_folds)
    if math.isnan(t):
        return 0.5 ** len(diffs) if (diffs > 0).all() else 1.0
    return float(student.sf(t, df))


def _p_two_sided(diffs: np.ndarray, n_folds: int) -> float:
    p = _p_greater(diffs, n_folds)
    flipped = _p_greater(-diffs, n_folds)
    return float(min(1.0, 2.0 * min(p, flipped)))


def _dense_rows(values: np.ndarray) -> np.ndarray:
    """Dense ranks (1 = best = highest) of each row of ``values``; NaN stays NaN."""
    out = np.full(values.shape, np.nan)
    for i, row in enumerate(values):
        seen = ~np.isnan(row)
        if seen.any():
            levels = np.unique(-np.round(row[seen], 12))
            out[i, seen] = np.searchsorted(levels, -np.round(row[seen], 12)) + 1
    return out


@dataclass(frozen=True)
class BaselineCheck(_Setting):
    """Whether one setting's best encoder beats Drop and chance (:func:`pool_run`).

    ``kind`` is ``chance`` or ``drop``; ``best`` the setting's best encoder, ``score`` its mean
    over folds, ``reference`` the chance level or Drop's mean, ``p_value`` the one-sided
    corrected t-test over folds that the best is above it (NaN when it is not above at all).
    """

    setting: Mapping[str, str]
    kind: str
    best: str
    score: float
    reference: float
    p_value: float
    message: str


@dataclass(frozen=True)
class RunAnswer:
    """One answer for a run on one dataset, pooled over its settings (:func:`pool_run`).

    Attributes
    ----------
    ranking : pandas.DataFrame
        One row per encoder, best first: ``encoder, rank`` (dense rank of the mean rank),
        ``mean_rank`` (over every setting x fold block), ``n_blocks`` (blocks it has a score
        in), ``mean_sd`` (its fold standard deviation, averaged over the settings),
        ``above_winner, below_winner`` (blocks where it ranks above / below the winner) and
        ``p_vs_winner`` (the two-sided paired test over folds; NaN for the winner).
    per_setting : pandas.DataFrame
        One row per setting and encoder: the setting's columns (``model, tuning, scoring, split,
        task``), ``encoder, score`` (mean over folds), ``sd`` (sample standard deviation over
        folds), ``n_folds``, ``rank`` (dense, on the score shown at :data:`DECIMALS` digits).
    best : tuple of str
        The winner and the encoders the paired test cannot tell from it (p not below
        :data:`ALPHA`), best first.
    winner, runner_up : str or None
    p_value : float
        ``p_vs_winner`` of the runner-up; NaN when there is none.
    wins, losses : int
        Setting x fold blocks where the winner ranks above / below the runner-up.
    baselines : tuple of BaselineCheck
        The settings whose best encoder is no better than chance or than Drop.
    n_settings, n_folds : int
    headline : str
        The answer in words.
    """

    ranking: pd.DataFrame
    per_setting: pd.DataFrame
    best: tuple[str, ...]
    winner: str | None
    runner_up: str | None
    p_value: float
    wins: int
    losses: int
    baselines: tuple[BaselineCheck, ...]
    n_settings: int
    n_folds: int
    headline: str

    @property
    def settled(self) -> bool:
        """Whether the winner is clearly ahead of the runner-up (p below :data:`ALPHA`)."""
        return self.runner_up is not None and not math.isnan(self.p_value) and self.p_value < ALPHA


def setting_label(setting: Mapping[str, str]) -> str:
    """``"LogReg / AUC / no tuning"`` (``", time split"`` for forward folds): one setting's name
    on the page, in the chart and in the export."""
    text = f"{setting['model']} / {setting['scoring']} / {setting['tuning']} tuning"
    return text + (", time split" if setting.get("split", DEFAULT_SPLIT) == "time" else "")


def pool_run(folds: pd.DataFrame, *, n_classes: int | None = None) -> RunAnswer:
    """Which encoder for this dataset, and how sure: a run's settings pooled into one answer.

    Parameters
    ----------
    folds : pandas.DataFrame
        Per-fold scores of ONE dataset (:func:`encbench.store.queries.fold_scores`): columns
        ``model, tuning, scoring, encoder, fold, cv_score`` (``split``, ``task`` optional).
    n_classes : int, optional
        The target's classes, for the chance level of a multiclass balanced accuracy (a binary
        task has 2; without it that check is skipped).

    Notes
    -----
    Each setting (model, tuning, metric, split) x outer fold is a block in which the encoders
    are dense-ranked by score (its direction: 1 = best); the pooled ranking is the mean rank
    over blocks (R-M, with the folds in place of datasets), which needs no common scale across
    metrics. The folds are the random part (the settings are the user's choice): each encoder
    is tested against the winner by a paired t-test over folds of their rank difference averaged
    over the settings, its variance corrected for the overlap of the training folds (Nadeau and
    Bengio 2003), two-sided at :data:`ALPHA`; the encoders it cannot tell from the winner are
    ``best``. Baselines are checked per setting on the scores themselves: the best
    encoder's folds against the metric's chance level (:func:`encbench.metrics.chance_level`)
    and, paired, against Drop's, each one-sided at :data:`ALPHA` with the same correction.
    """
    needed = {"model", "tuning", "scoring", "encoder", "fold", "cv_score"}
    missing = needed - set(folds.columns)
    if missing:
        raise ValueError(f"fold scores lack columns {sorted(missing)!r}")
    if "dataset" in folds.columns and folds["dataset"].nunique() > 1:
        raise ValueError(f"fold scores must hold one dataset: got {sorted(folds['dataset'].unique())!r}")
    if folds.empty:
        raise ValueError("no fold scores to pool: got an empty table")
    frame = with_key(folds, SETTING)
    encoders = vocab_sorted(frame["encoder"].unique())
    fold_ids = sorted(frame["fold"].unique())
    # one cube of the fold scores, settings x folds x encoders (NaN: no score), in one pass
    settings = [setting for setting, _ in group_settings(frame[list(SETTING)].drop_duplicates(), SETTING)]
    means = frame.groupby([*SETTING, "fold", "encoder"], observed=True, sort=False)["cv_score"].mean()
    index = pd.MultiIndex.from_tuples([(*(setting[c] for c in SETTING), fold) for setting in settings
                                       for fold in fold_ids], names=[*SETTING, "fold"])
    raw = means.unstack("encoder").reindex(index=index, columns=encoders).to_numpy(dtype=float)
    raw = raw.reshape(len(settings), len(fold_ids), len(encoders))
    cubes, per_setting, baselines = [], [], []
    for setting, scores in zip(settings, raw):
        sign = 1.0 if greater_is_better(setting["scoring"]) else -1.0
        cubes.append(sign * scores)
        count = (~np.isnan(scores)).sum(axis=0)
        kept = [e for e, n in zip(encoders, count) if n]
        table = pd.DataFrame(scores[:, count > 0], index=fold_ids, columns=kept)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # one fold: no sd (NaN)
            stats = pd.DataFrame({"encoder": kept, "score": np.nanmean(table.to_numpy(), axis=0),
                                  "sd": np.nanstd(table.to_numpy(), axis=0, ddof=1),
                                  "n_folds": count[count > 0]})
        stats["rank"] = _score_rank(stats["score"].round(DECIMALS), setting["scoring"])
        per_setting.append(stats.assign(**setting))
        baselines += _baseline_checks(setting, table, stats, n_classes)
    oriented = np.stack(cubes)                                       # settings x folds x encoders
    n_settings, n_folds, n_enc = oriented.shape
    ranks = _dense_rows(oriented.reshape(-1, n_enc)).reshape(oriented.shape)
    has = ~np.isnan(ranks)
    fold_sum = np.where(has, ranks, 0.0).sum(axis=0)                 # folds x encoders
    fold_n = has.sum(axis=0).astype(float)
    with np.errstate(all="ignore"):
        mean_rank = fold_sum.sum(axis=0) / fold_n.sum(axis=0)
    point = _dense_rows(-mean_rank[None, :])[0]
    spread = pd.concat(per_setting).groupby("encoder")["sd"].mean()
    ranking = pd.DataFrame({"encoder": encoders, "rank": point, "mean_rank": mean_rank,
                            "n_blocks": has.sum(axis=(0, 1)), "mean_sd": spread.reindex(encoders).to_numpy()})
    ranking = ranking.dropna(subset=["rank"]).sort_values(["rank", "mean_rank"], kind="stable")  # ties: vocabulary
    ranking = ranking.astype({"rank": int, "n_blocks": int}).reset_index(drop=True)
    position = {e: i for i, e in enumerate(encoders)}
    winner = ranking["encoder"].iloc[0] if len(ranking) else None
    # each encoder against the winner: blocks above / below it, and the paired test over folds
    above, below, p_values = [], [], []
    for encoder in ranking["encoder"]:
        if encoder == winner:
            above.append(0), below.append(0), p_values.append(math.nan)
            continue
        w, e = position[winner], position[encoder]
        gap = np.where(has[:, :, w] & has[:, :, e], ranks[:, :, e] - ranks[:, :, w], np.nan)  # > 0: winner above
        with np.errstate(all="ignore"):
            per_fold = np.nanmean(gap, axis=0)
        above.append(int((gap < 0).sum())), below.append(int((gap > 0).sum()))
        p_values.append(_p_two_sided(per_fold, n_folds))
    ranking["above_winner"], ranking["below_winner"], ranking["p_vs_winner"] = above, below, p_values
    runner = ranking["encoder"].iloc[1] if len(ranking) > 1 else None
    p_value = float(ranking["p_vs_winner"].iloc[1]) if runner is not None else math.nan
    wins = int(ranking["below_winner"].iloc[1]) if runner is not None else 0
    losses = int(ranking["above_winner"].iloc[1]) if runner is not None else 0
    # the winner and every encoder the test cannot tell from it
    best = tuple(ranking.loc[(ranking["encoder"] == winner) | ~(ranking["p_vs_winner"] < ALPHA), "encoder"])
    per_setting_frame = pd.concat(per_setting, ignore_index=True)
    per_setting_frame = per_setting_frame[[*SETTING, "encoder", "score", "sd", "n_folds", "rank"]]
    answer = RunAnswer(ranking, per_setting_frame, best, winner, runner, p_value, wins, losses,
                       tuple(baselines), n_settings, n_folds, "")
    return dataclasses.replace(answer, headline=_headline(answer))


def _baseline_checks(setting: Mapping[str, str], table: pd.DataFrame, stats: pd.DataFrame,
                     n_classes: int | None) -> list[BaselineCheck]:
    """The setting's best encoder against chance and against Drop: a check for each it does
    not clearly beat."""
    scoring = setting["scoring"]
    sign = 1.0 if greater_is_better(scoring) else -1.0
    best_rows = stats[stats["rank"] == 1]
    if best_rows.empty:
        return []
    best = str(best_rows["encoder"].iloc[0])
    score = float(best_rows["score"].iloc[0])
    n_folds = len(table)
    out = []
    task = setting.get("task", DEFAULT_TASK)
    chance = chance_level(scoring, 2 if task == "binary" else n_classes)
    name = setting_label(setting)
    if chance is not None:
        p = _p_greater(sign * (table[best].to_numpy(dtype=float) - chance), n_folds)
        if sign * (score - chance) <= 0 or p >= ALPHA:
            below = sign * (score - chance) <= 0
            what = ("worse than predicting the mean" if scoring == "R2" else "at or below chance") if below \
                else "not clearly above chance"
            out.append(BaselineCheck(setting, "chance", best, score, chance, p if not below else math.nan,
                                     f"{name}: the best encoder, {best}, scores {scoring} {score:.{DECIMALS}f}, "
                                     f"{what} ({scoring} {chance:g}" + ("" if below else f"; p = {p:.2g} over "
                                     f"{n_folds} folds") + "). The model learns nothing usable here, "
                                     "whatever the encoder: its ranking is noise."))
    if DROP in table.columns and table[DROP].notna().any() and not out:  # chance first: one warning
        drop_score = float(stats.set_index("encoder").loc[DROP, "score"])
        if best == DROP:
            out.append(BaselineCheck(setting, "drop", best, score, drop_score, math.nan,
                                     f"{name}: {DROP}, which leaves the categorical columns out, is the best "
                                     f"(or ties it): encoding them did not help."))
        else:
            diffs = sign * (table[best].to_numpy(dtype=float) - table[DROP].to_numpy(dtype=float))
            p = _p_greater(diffs, n_folds)
            if p >= ALPHA:
                out.append(BaselineCheck(setting, "drop", best, score, drop_score, p,
                                         f"{name}: the best encoder, {best} ({score:.{DECIMALS}f}), is not "
                                         f"clearly better than {DROP} ({drop_score:.{DECIMALS}f}), which leaves "
                                         f"the categorical columns out (p = {p:.2g} over {n_folds} folds): "
                                         f"encoding them may not help."))
    return out


def _headline(answer: RunAnswer) -> str:
    if answer.winner is None:
        return "No encoder has a complete result yet."
    if answer.runner_up is None:
        return (f"Only {answer.winner} has complete results so far: there is nothing to compare it with "
                f"(yet).")
    table = answer.ranking.set_index("encoder")
    blocks = f"{answer.n_settings} setting{'s' if answer.n_settings > 1 else ''} x {answer.n_folds} folds"
    first = table.loc[answer.winner]
    text = (f"Use {answer.winner}: it ranks first over the run ({blocks}; mean rank "
            f"{first['mean_rank']:.2f}).")
    if answer.runner_up is None:
        return text
    second = table.loc[answer.runner_up]
    duel = (f"Against the runner-up, {answer.runner_up} (mean rank {second['mean_rank']:.2f}), it ranks above in "
            f"{answer.wins} and below in {answer.losses} of the setting x fold blocks")
    p = "" if math.isnan(answer.p_value) else f"; paired test over folds p = {answer.p_value:.2g}"
    if answer.settled:
        text += f" {duel}{p}: a clear lead."
    else:
        others = [e for e in answer.best if e != answer.winner]
        text += (f" {duel}{p}: not a clear lead. {_names(others)} cannot be told from {answer.winner} "
                 f"on this data (the fold spread is as large as the differences): choose among them by "
                 f"cost or simplicity.")
    return text
