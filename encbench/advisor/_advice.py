"""The advice for one table: which encoders to use (:func:`recommend`), and whether it held (:func:`verify`).

The advisor finds the ``k`` reference datasets of the table's task nearest to it and ranks the
encoders by their R-M consensus (mean rank) over those datasets, with bootstrap rank intervals
(:func:`encbench.stats.rank_intervals`), next to the global consensus over every reference dataset
of the task. It follows the policy its validation supports (:func:`choose_policy`): where the
advisor's mean regret is not below the global winner's, :func:`recommend` says so and recommends the
global winner. A setting validated on fewer than :data:`MIN_VALIDATED` held-out datasets (a task
whose suite results are still few) is not followed either: the recommendation is the task's global
consensus, and the message says how many datasets it rests on.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import metafeatures, vocab
from encbench.advisor._neighbours import encoder_order, feature_matrix, nearest
from encbench.advisor._reference import ALPHA, BASELINE_ENCODER, reference_label, validation_summary
from encbench.metafeatures import MetaFeatures
from encbench.metrics import greater_is_better, metrics_for
from encbench.models import models_for
from encbench.stats import rank_intervals


#: the encoders recommended (and run by the Run page's check)
N_TOP = 3
#: a setting's validation is followed (OH or the advisor over the global winner) only when it
#: held out at least this many datasets; below it the global consensus of the task is advised
MIN_VALIDATED = 8


@dataclass(frozen=True)
class Recommendation:
    """What :func:`recommend` advises for one dataset and setting.

    Attributes
    ----------
    model, tuning, scoring : str
    features : MetaFeatures
        The user's dataset (its ``task`` chose the reference datasets).
    neighbours : pandas.DataFrame
        ``dataset, name, distance`` of the ``k`` nearest reference datasets, nearest first.
    local : pandas.DataFrame
        R-M over the neighbours: ``encoder, rank, low, high`` (bootstrap interval), best first.
    overall : pandas.DataFrame
        The global R-M over every reference dataset of the task and setting, same columns.
    validation : dict or None
        The setting's row of the validation summary (None: not validated).
    use : {'neighbours', 'global', 'OH'}
        Which policy the recommendation follows (:func:`choose_policy`): the one of lowest
        mean regret in the setting's validation among the global winner, always OH and the
        advisor, the advisor only where it also beats the global winner clearly
        (``advisor_used``: lower regret, at :data:`~encbench.advisor.ALPHA`); the global winner where the
        validation held out fewer than :data:`MIN_VALIDATED` datasets.
    recommended : tuple of str
        The first :data:`N_TOP` encoders of that ranking (for ``OH``: OH, then the global
        order).
    message : str
        The verdict in words, for the page and the command line.
    n_reference : int
        Reference datasets with scores in the setting (those the global consensus ranks over).
    """

    model: str
    tuning: str
    scoring: str
    features: MetaFeatures
    neighbours: pd.DataFrame
    local: pd.DataFrame
    overall: pd.DataFrame
    validation: dict | None
    use: str
    recommended: tuple[str, ...]
    message: str
    n_reference: int = 0

    @property
    def k(self) -> int:
        return len(self.neighbours)

    @property
    def task(self) -> str:
        return self.features.task


def _ordered_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    order = {e: i for i, e in enumerate(encoder_order(frame))}
    return frame.iloc[sorted(range(len(frame)), key=lambda i: order[frame["encoder"].iloc[i]])].reset_index(drop=True)


def recommend(features: MetaFeatures, scores: pd.DataFrame, *, model: str, scoring: str, tuning: str = "no",
              reference: pd.DataFrame | None = None, validation: pd.DataFrame | None = None,
              k: int | None = None, n_top: int = N_TOP, B: int = 1000, seed: int = 0) -> Recommendation:
    """Recommend encoders for a dataset from the reference datasets of its task most like it.

    Parameters
    ----------
    features : MetaFeatures
        The user's dataset (:func:`encbench.metafeatures.compute`); its ``task`` is the task
        advised on.
    scores : pandas.DataFrame
        Reference scores (``dataset, model, tuning, scoring, encoder, cv_score``), e.g.
        :func:`~encbench.advisor.reference_scores` of the task; a ``task`` column keeps the rows of the task.
    model, scoring, tuning : str
        The setting (canonical names; the model and metric serve the task).
    reference : pandas.DataFrame, optional
        Meta-features of the reference datasets; default the task's complete rows
        (:func:`encbench.metafeatures.reference_metafeatures`).
    validation : pandas.DataFrame, optional
        The validation summary; default the shipped one (:func:`~encbench.advisor.validation_summary`).
    k : int, optional
        Neighbours; default the validated ``k`` of the setting (8 when it is not validated), at
        most the reference datasets there are.
    n_top : int, default :data:`N_TOP`
    B, seed
        Bootstrap resamples and seed of the rank intervals.

    Returns
    -------
    Recommendation

    Raises
    ------
    ValueError
        An unknown model, tuning or scoring, one that does not serve the task, or no reference
        scores for the setting.
    """
    task = features.task
    for factor, value in (("model", model), ("tuning", tuning), ("scoring", scoring)):
        if value not in vocab.ORDERS[factor]:
            raise ValueError(f"unknown {factor}: got {value!r}; known: {', '.join(vocab.ORDERS[factor])}")
    for factor, value, serving in (("model", model, models_for(task)), ("metric", scoring, metrics_for(task))):
        if value not in serving:
            raise ValueError(f"the {factor} {value!r} does not serve a {task} target: use one of {', '.join(serving)}")
    if "task" in scores.columns:
        scores = scores[scores["task"].fillna("binary") == task]
    setting = scores[(scores["model"] == model) & (scores["tuning"] == tuning) & (scores["scoring"] == scoring)]
    setting = setting.assign(dataset=setting["dataset"].astype(str))
    if setting.empty:
        raise ValueError(f"no reference scores for a {task} target with model {model!r}, tuning {tuning!r}, "
                         f"scoring {scoring!r}; models with {task} reference scores: "
                         f"{vocab.ordered('model', scores['model'].unique())}")
    if reference is None:
        reference = metafeatures.reference_metafeatures(task)
    reference = reference[reference["dataset"].astype(str).isin(set(setting["dataset"]))]
    validation = validation_summary() if validation is None else validation
    match = validation[(validation["model"] == model) & (validation["tuning"] == tuning)
                       & (validation["scoring"] == scoring)]
    if "task" in match.columns:
        match = match[match["task"].fillna("binary") == task]
    elif task != "binary":  # a summary without a task column validated the binary task only
        match = match.iloc[0:0]
    checked = match.iloc[0].to_dict() if len(match) else None
    if k is None:
        k = int(checked["k"]) if checked is not None else 8
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive number of neighbours: got {k!r}")
    if not isinstance(n_top, (int, np.integer)) or n_top < 1:
        raise ValueError(f"n_top must be a positive integer: got {n_top!r}")
    if len(reference):
        features_ref = feature_matrix(reference, task)
        query = feature_matrix(pd.DataFrame([{"dataset": "yours", **features.vector()}]), task).iloc[0]
        found = nearest(query, features_ref, int(k))
    else:  # no reference dataset of the setting has meta-features: no neighbours to show
        found = pd.Series(dtype=float, index=pd.Index([], name="dataset"), name="distance")
    names = reference.set_index(reference["dataset"].astype(str))["name"]
    neighbours = pd.DataFrame({"dataset": list(found.index), "name": [names[d] for d in found.index],
                               "distance": found.to_numpy()})
    near = setting[setting["dataset"].isin(set(found.index))]
    local = (_ordered_intervals(rank_intervals(near, B=B, seed=seed)) if len(near)
             else pd.DataFrame(columns=["encoder", "rank", "low", "high"]))
    overall = _ordered_intervals(rank_intervals(setting, B=B, seed=seed))
    use = choose_policy(checked)
    if use == BASELINE_ENCODER:
        order = [BASELINE_ENCODER, *[e for e in overall["encoder"] if e != BASELINE_ENCODER]]
        recommended = tuple(order[:n_top])
    else:
        recommended = tuple((local if use == "neighbours" else overall)["encoder"].head(n_top))
    n_reference = int(setting["dataset"].nunique())
    message = _message(checked, use, recommended, model, tuning, scoring, len(neighbours), n_reference, task)
    outside = outside_reference(features, reference)
    if outside:
        message += (" Your data lies outside every reference dataset on " + "; ".join(outside)
                    + ": the advice extrapolates from datasets unlike yours there.")
    return Recommendation(model, tuning, scoring, features, neighbours, local, overall, checked, use,
                          recommended, message, n_reference)


def outside_reference(features: MetaFeatures, reference: pd.DataFrame) -> list[str]:
    """The meta-features of ``features`` outside the range of the reference datasets
    (``"max_cardinality 10,000 (reference 2 to 7,518)"``), in the task's distance-feature order."""
    out = []
    for name, value in features.vector().items():
        if name not in reference.columns:
            continue
        known = pd.to_numeric(reference[name], errors="coerce").dropna()
        if not len(known) or known.min() <= value <= known.max():
            continue
        integral = name in metafeatures.COUNT_FEATURES
        shown = (lambda v: f"{v:,.0f}") if integral else (lambda v: f"{v:.3g}")
        out.append(f"{name} {shown(value)} (reference {shown(known.min())} to {shown(known.max())})")
    return out


#: the policies :func:`recommend` chooses between, as ``use`` names them, and their regret column
POLICIES = {"global": "regret_global", BASELINE_ENCODER: f"regret_{BASELINE_ENCODER}", "neighbours": "regret_advisor"}


def _thin(checked: dict | None) -> bool:
    """A validation that held out too few datasets to follow (:data:`MIN_VALIDATED`)."""
    n = checked.get("n_datasets") if checked is not None else None
    return n is not None and not pd.isna(n) and int(n) < MIN_VALIDATED


def choose_policy(checked: dict | None) -> str:
    """What the validation of a setting supports: ``global`` (the global R-M winner), ``OH``
    (always the study's reference encoder) or ``neighbours`` (the advisor).

    The policy of lowest mean regret over the held-out datasets; the advisor competes only where
    it beats the global winner clearly (``advisor_used``), equal regrets go to the global winner,
    then OH. Without a validation row, or with one that held out fewer than
    :data:`MIN_VALIDATED` datasets: the global winner.
    """
    if checked is None or _thin(checked):
        return "global"
    candidates = ["global", BASELINE_ENCODER] + (["neighbours"] if bool(checked.get("advisor_used")) else [])
    regrets = {c: float(checked[POLICIES[c]]) for c in candidates}
    best = "global"
    for name in candidates[1:]:
        if regrets[name] < regrets[best] - 1e-12:
            best = name
    return best


def _message(checked: dict | None, use: str, recommended: tuple, model: str, tuning: str, scoring: str,
             k: int, n_global: int, task: str = "binary") -> str:
    top = ", ".join(recommended)
    setting = f"{model} / {scoring} / {tuning} tuning" + ("" if task == "binary" else f" ({task} target)")
    global_text = (f"the global R-M consensus over {n_global} reference {task} datasets "
                   f"({reference_label(task)}): {top}")
    if checked is None:
        thin = (f" ({n_global} reference datasets: too few to validate it, {MIN_VALIDATED} are needed)"
                if n_global < MIN_VALIDATED else "")
        return (f"{setting}: the advisor is not validated for this setting{thin}, so the recommendation "
                f"is {global_text}.")
    relative = "" if greater_is_better(scoring) else f" (relative to each dataset's best {scoring})"
    figures = (f"mean regret{relative} over {int(checked['n_datasets'])} held-out datasets: advisor "
               f"{checked['regret_advisor']:.4f}, global winner {checked['regret_global']:.4f}, "
               f"OH {checked['regret_OH']:.4f}, random encoder {checked['regret_random']:.4f}; "
               f"advisor better on {int(checked['wins'])}, equal on {int(checked['ties'])}, worse on "
               f"{int(checked['losses'])}")
    p_value = checked.get("p_value")
    p_text = "no difference to test" if p_value is None or pd.isna(p_value) else f"Wilcoxon p = {p_value:.3g}"
    figures += f"; {p_text}"
    if _thin(checked):
        return (f"{setting}: leave-one-dataset-out validation held out only {int(checked['n_datasets'])} "
                f"datasets, fewer than the {MIN_VALIDATED} it needs to say anything ({figures}), so the "
                f"recommendation is {global_text}. The similar datasets' own consensus is shown for "
                f"information.")
    if use == BASELINE_ENCODER:
        advisor = (" The advisor beat the global winner clearly, but always OH did better still."
                   if checked.get("advisor_used") else "")
        return (f"{setting}: in leave-one-dataset-out validation always picking {BASELINE_ENCODER} had the "
                f"lowest mean regret ({figures}): lower than following the global R-M consensus, whose winner "
                f"on the other datasets was a worse pick on the held-out one. So the recommendation is "
                f"{BASELINE_ENCODER}, then the global consensus: {top}.{advisor}")
    if use == "neighbours":
        return (f"{setting}: recommended from the {k} most similar reference datasets: {top}. In "
                f"leave-one-dataset-out validation the advisor beat always picking the global winner "
                f"({figures}).")
    if checked.get("advisor_beats_global"):
        verdict = f"the advisor's regret was lower than the global winner's, but not clearly (p not below {ALPHA:g})"
    else:
        verdict = "the advisor did not beat always picking the global winner"
    return (f"{setting}: in leave-one-dataset-out validation {verdict} ({figures}), so the recommendation "
            f"is {global_text}. The similar datasets' own consensus is shown for information.")


#: outcomes of :func:`verify`
VERDICTS = ("held", "partly", "not held", "incomplete")


@dataclass(frozen=True)
class Verification:
    """Whether a recommendation held on the user's data (:func:`verify`).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per encoder run: ``encoder, recommended`` (its place in the recommendation, 0 for
        the baseline that was not recommended), ``cv_score`` (NaN while it has no result) and
        ``rank`` (dense among those with a result, 1 = best), best first.
    verdict : str
        One of :data:`VERDICTS`: ``held`` (the first recommended encoder is the best of those
        run, ties included), ``partly`` (another recommended one is), ``not held`` (the
        baseline beat every recommended encoder), ``incomplete`` (not every encoder has a
        result yet, or some failed).
    message : str
    """

    table: pd.DataFrame
    verdict: str
    message: str


def verify(scores: pd.DataFrame, recommended: Sequence[str], *, scoring: str,
           baseline: str = BASELINE_ENCODER) -> Verification:
    """Rank the recommended encoders (and the baseline) by their scores on the user's data.

    Parameters
    ----------
    scores : pandas.DataFrame
        The run's rows for one dataset, model and tuning: ``encoder, scoring, cv_score``.
    recommended : sequence of str
        The recommendation, best first.
    scoring : str
        The metric the recommendation was made for.
    baseline : str, default "OH"

    Returns
    -------
    Verification
    """
    recommended = list(dict.fromkeys(recommended))
    if not recommended:
        raise ValueError(f"nothing recommended to verify: got {recommended!r}")
    encoders = recommended + ([baseline] if baseline not in recommended else [])
    rows = scores[scores["scoring"] == scoring] if "scoring" in scores.columns else scores
    got = rows.groupby("encoder")["cv_score"].mean()
    sign = 1.0 if greater_is_better(scoring) else -1.0
    table = pd.DataFrame({"encoder": encoders,
                          "recommended": [recommended.index(e) + 1 if e in recommended else 0 for e in encoders],
                          "cv_score": [float(got[e]) if e in got.index else math.nan for e in encoders]})
    table["rank"] = (sign * table["cv_score"]).rank(method="dense", ascending=False).astype("Int64")
    place = table["recommended"].where(table["recommended"] > 0, len(encoders))  # the baseline after ties
    table = table.iloc[np.lexsort((place.to_numpy(), table["rank"].fillna(len(encoders) + 1).to_numpy()))]
    table = table.reset_index(drop=True)
    n_done = int(table["cv_score"].notna().sum())
    first = recommended[0]
    if n_done < len(encoders):
        return Verification(table, "incomplete", f"{n_done} of {len(encoders)} encoders have {scoring} "
                                                 f"results on your data so far.")
    rank = table.set_index("encoder")["rank"]
    best = table.loc[table["rank"] == 1, "encoder"].tolist()
    detail = (f"{first}, recommended first, ranks {int(rank[first])} of {len(encoders)} on your data by {scoring}"
              + (f"; {baseline} ranks {int(rank[baseline])}" if baseline != first else ""))
    if rank[first] == 1:
        return Verification(table, "held", f"The recommendation held: {detail}.")
    if any(e in best for e in recommended):
        winner = next(e for e in recommended if e in best)
        return Verification(table, "partly", f"The recommendation partly held: {winner} (recommended "
                                             f"{recommended.index(winner) + 1}.) is the best; {detail}.")
    return Verification(table, "not held", f"The recommendation did not hold: {baseline} beat every "
                                           f"recommended encoder; {detail}.")
