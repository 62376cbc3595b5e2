"""The Results explorer: per-dataset ranks, the encoder x dataset matrix, coverage, and each
local score beside its published value."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import stats
from encbench.metrics import greater_is_better
from encbench.reproduction import compare_to_published, split_origins
from encbench.views.labels import encoder_families, natural_key
from encbench.vocab import FACTORS


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


@dataclass(frozen=True)
class Coverage:
    """How much of the encoder x dataset grid of a selection has results.

    Attributes
    ----------
    cells : int
        Encoders x datasets selected.
    with_result : int
        Cells with at least one result.
    missing : int
        Cells without any.
    """

    cells: int
    with_result: int
    missing: int


def coverage(ranked: pd.DataFrame, encoders: Sequence[str], datasets: Sequence[str]) -> Coverage:
    """How many (encoder, dataset) cells of the grid have at least one result."""
    present = ranked[["encoder", "dataset"]].drop_duplicates()
    cells = len(encoders) * len(datasets)
    return Coverage(cells=cells, with_result=int(len(present)), missing=int(cells - len(present)))


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


# --------------------------------------------------------------------------- drill-down

#: a voter: one dataset under one model, tuning and metric
VOTER = [*FACTORS, "dataset"]


def _higher_is_better(scoring: pd.Series) -> np.ndarray:
    """Per row, whether its metric counts a higher score as better (RMSE, MAE: lower)."""
    return scoring.astype(str).map(greater_is_better).to_numpy(dtype=bool)


def encoder_profile(ranked: pd.DataFrame, encoder: str, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One encoder's scores per dataset and setting, beside the best of that voter.

    Parameters
    ----------
    ranked : pandas.DataFrame
        :func:`ranked_scores` rows (every encoder of the view, so that the best is the view's).
    encoder : str
        The encoder drilled into.
    names : mapping, optional
        Dataset key -> name.

    Returns
    -------
    pandas.DataFrame
        ``dataset, name, model, tuning, scoring, cv_score, rank, n_encoders, best_score,
        best_encoders, behind``: its rank among the ``n_encoders`` of the voter, the voter's best
        score and the encoders that reach it, and how far below the best it is (in score units,
        0 for a best encoder; a lower-is-better metric's distance is counted the same way). Worst
        first (the datasets where it loses most), then dataset order.
    """
    columns = ["dataset", "name", *FACTORS, "cv_score", "rank", "n_encoders", "best_score", "best_encoders",
               "behind"]
    if ranked.empty or encoder not in set(ranked["encoder"]):
        return pd.DataFrame(columns=columns)
    frame = ranked[[*VOTER, "encoder", "cv_score", "rank"]]
    oriented = np.where(_higher_is_better(frame["scoring"]), frame["cv_score"], -frame["cv_score"])
    frame = frame.assign(_oriented=oriented)
    groups = frame.groupby(VOTER, observed=True)
    per_voter = pd.DataFrame({
        "n_encoders": groups.size(),
        "_best": groups["_oriented"].max(),
        "best_encoders": frame[frame["rank"] == 1].groupby(VOTER, observed=True)["encoder"].agg(
            lambda s: ", ".join(sorted(map(str, s)))),
    }).reset_index()
    mine = frame[frame["encoder"] == encoder].merge(per_voter, on=VOTER, how="left")
    mine["best_score"] = np.where(_higher_is_better(mine["scoring"]), mine["_best"], -mine["_best"])
    mine["behind"] = mine["_best"] - mine["_oriented"]
    mine["name"] = mine["dataset"].astype(str).map(dict(names or {}))
    mine = mine.assign(_key=mine["dataset"].astype(str).map(natural_key))
    mine = mine.sort_values(["behind", "_key", *FACTORS], ascending=[False, True, True, True, True], kind="stable")
    return mine[columns].reset_index(drop=True)


@dataclass(frozen=True)
class HeadToHead:
    """Two encoders over the voters (dataset, setting) where both have a result.

    Attributes
    ----------
    points : pandas.DataFrame
        ``dataset, name, model, tuning, scoring, score_a, score_b, winner`` (``winner`` is the
        encoder with the better score, by the metric's direction, or ``"tie"``).
    encoder_a, encoder_b : str
    """

    points: pd.DataFrame
    encoder_a: str
    encoder_b: str

    @property
    def wins(self) -> tuple[int, int, int]:
        """(voters A wins, voters B wins, ties)."""
        w = self.points["winner"]
        return int((w == self.encoder_a).sum()), int((w == self.encoder_b).sum()), int((w == "tie").sum())

    @property
    def summary(self) -> str:
        """One line (markdown)."""
        a, b, ties = self.wins
        n = len(self.points)
        datasets = self.points["dataset"].nunique()
        return (f"Over the {n:,} (dataset, setting) pairs on {datasets} datasets where both have a result: "
                f"**{self.encoder_a}** better on {a:,}, **{self.encoder_b}** better on {b:,}, equal on {ties:,}.")


def head_to_head(ranked: pd.DataFrame, encoder_a: str, encoder_b: str,
                 names: Mapping[str, str] | None = None) -> HeadToHead:
    """The scores of ``encoder_a`` and ``encoder_b`` side by side on each voter both have.

    Raises
    ------
    ValueError
        If the two encoders are the same.
    """
    if encoder_a == encoder_b:
        raise ValueError(f"a head-to-head needs two different encoders: got {encoder_a!r} twice")
    frame = ranked[[*VOTER, "encoder", "cv_score"]]
    a = frame[frame["encoder"] == encoder_a].drop(columns="encoder").rename(columns={"cv_score": "score_a"})
    b = frame[frame["encoder"] == encoder_b].drop(columns="encoder").rename(columns={"cv_score": "score_b"})
    both = a.merge(b, on=VOTER, how="inner")
    sign = np.where(_higher_is_better(both["scoring"]), 1.0, -1.0) if len(both) else np.array([])
    diff = sign * (both["score_a"].to_numpy(dtype=float) - both["score_b"].to_numpy(dtype=float))
    both["winner"] = np.select([diff > 0, diff < 0], [encoder_a, encoder_b], default="tie")
    both.insert(1, "name", both["dataset"].astype(str).map(dict(names or {})))
    columns = ["dataset", "name", *FACTORS, "score_a", "score_b", "winner"]
    return HeadToHead(both[columns].reset_index(drop=True), encoder_a, encoder_b)


def dataset_folds(folds: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The per-fold scores of one dataset (rows of :func:`encbench.store.queries.fold_scores`),
    one row per experiment and run with a column per fold and their mean and spread.

    Returns
    -------
    pandas.DataFrame
        ``encoder, model, tuning, scoring, run_id, fold_0 ... fold_k, mean, sd``, encoders best
        first within each setting (by mean); empty when the store holds no folds of it (the
        published scores come averaged over folds).
    """
    part = folds[folds["dataset"].astype(str) == str(dataset)] if len(folds) else folds
    keys = ["encoder", *FACTORS, "run_id"]
    if part is None or part.empty:
        return pd.DataFrame(columns=[*keys, "mean", "sd"])
    wide = part.pivot_table(index=keys, columns="fold", values="cv_score", aggfunc="first", observed=True)
    wide.columns = [f"fold_{int(c)}" for c in wide.columns]
    folds_only = wide.to_numpy(dtype=float)
    wide["mean"] = np.nanmean(folds_only, axis=1)
    wide["sd"] = np.nanstd(folds_only, axis=1, ddof=1) if folds_only.shape[1] > 1 else np.nan
    out = wide.reset_index()
    out["_order"] = np.where(_higher_is_better(out["scoring"]), -out["mean"], out["mean"])
    out = out.sort_values([*FACTORS, "_order", "encoder"], kind="stable").drop(columns="_order")
    return out.reset_index(drop=True)
