"""The Results explorer: per-dataset ranks, the encoder x dataset matrix, coverage, and each
local score beside its published value."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from encbench import stats
from encbench.reproduction import compare_to_published, split_origins
from encbench.views.labels import encoder_families
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
