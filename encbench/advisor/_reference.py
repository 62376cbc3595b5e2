"""What the advice and its validation share: the reference scores, the shipped validation summary,
the baseline encoder and the test's level.

Reference datasets, per task (the task is never pooled): for a binary target the study's published
datasets and encbench's binary R suite; for a multiclass or regression target encbench's R suite of
that task (:func:`encbench.metafeatures.reference_metafeatures` for their meta-features,
:func:`reference_scores` for their scores: the published results and the ``encbench-suites`` run,
``db/seed/encbench_suites_results.parquet``). The binary suite's rows keep the encoders of the
published study only, so that every binary dataset ranks the same encoders.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from encbench.metafeatures import DISTANCE_FEATURES
from encbench.resources import resource_dir
from encbench.stats import consensus
from encbench.store.importer import SUITES_RESULTS_FILE
from encbench.store.published import load_published_results


#: the shipped validation summary (in the ``seed`` resource)
VALIDATION_FILE = "advisor_validation.csv"
#: the advisor is used for a setting only where its regrets are lower than the global winner's
#: and a Wilcoxon signed-rank test over the held-out datasets says so at this level: choosing
#: between the two by their validation figures alone would follow noise on 20-27 datasets
ALPHA = 0.05
#: the reference encoder of the study's practice
BASELINE_ENCODER = "OH"


def published_consensus(scores: pd.DataFrame, *, model: str, tuning: str, scoring: str) -> pd.Series:
    """The published consensus of one setting: what the advice and a run's result both call it.

    R-M (mean rank) over every published dataset of the setting and every encoder with a
    published result there (:func:`encbench.stats.consensus`), not over a subset of encoders: a
    run of a few encoders reads its published ranks off this ranking (re-ranked among them, the
    order kept), so the advice's global order and a run's "published rank" never disagree.

    Parameters
    ----------
    scores : pandas.DataFrame
        Published ``scores`` rows (``dataset, model, tuning, scoring, encoder, cv_score``; a
        ``split`` or ``task`` column keeps its ``cv`` / ``binary`` rows, the published ones).

    Returns
    -------
    pandas.Series
        Index ``encoder``, the dense rank (1 = best); empty when the setting has no published
        scores.
    """
    keep = (scores["model"] == model) & (scores["tuning"] == tuning) & (scores["scoring"] == scoring)
    if "split" in scores.columns:
        keep &= scores["split"].fillna("cv") == "cv"
    if "task" in scores.columns:
        keep &= scores["task"].fillna("binary") == "binary"
    rows = scores.loc[keep, ["dataset", "encoder", "cv_score", "scoring"]]
    if rows.empty:
        return pd.Series(dtype="int64", name="rank").rename_axis("encoder")
    rows = rows.assign(dataset=rows["dataset"].astype(str))
    return consensus(rows, "R-M")


@functools.lru_cache(maxsize=4)
def _read_validation(path: str) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype={"task": str, "model": str, "tuning": str, "scoring": str})
    if "task" not in frame.columns:  # a summary written before every task was validated: binary
        frame.insert(0, "task", "binary")
    return frame


def validation_summary(path=None, *, task: str | None = None) -> pd.DataFrame:
    """The shipped validation summary (``summary`` of :func:`~encbench.advisor.validate_advisor`, every task), a copy;
    only ``task``'s rows when it is given."""
    frame = _read_validation(str(path or resource_dir("seed") / VALIDATION_FILE)).copy()
    if task is not None:
        frame = frame[frame["task"] == task].reset_index(drop=True)
    return frame


@functools.lru_cache(maxsize=8)
def _reference_scores(task: str, published: str | None, suites: str, stamp: int | None) -> pd.DataFrame:
    """``stamp``: the suites file's modification time, so a file rewritten since is read again."""
    columns = ["dataset", "model", "tuning", "scoring", "encoder", "cv_score"]
    parts = []
    encoders = None
    if task == "binary":
        given = load_published_results(published) if published else load_published_results()
        parts.append(given[columns])
        encoders = set(given["encoder"])
    path = Path(suites)
    if stamp is not None:
        rows = pd.read_parquet(path, columns=[*columns, "fold", "n_folds", "status", "task", "split"])
        rows = rows[(rows["task"] == task) & (rows["split"].fillna("cv") == "cv")]
        if encoders is not None:
            rows = rows[rows["encoder"].isin(encoders)]
        key = ["dataset", "model", "tuning", "scoring", "encoder"]
        # as the scores view: an experiment counts when every one of its folds is ok
        grouped = rows.assign(ok=rows["status"] == "ok").groupby(key, sort=False)
        done = grouped.agg(cv_score=("cv_score", "mean"), ok=("ok", "all"), folds=("fold", "size"),
                           n_folds=("n_folds", "max")).reset_index()
        done = done[done["ok"] & (done["folds"] == done["n_folds"])]
        parts.append(done[columns])
    parts = [part for part in parts if len(part)]
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    frame = frame.assign(dataset=frame["dataset"].astype(str), cv_score=frame["cv_score"].astype(float),
                         task=task)
    return frame


def reference_scores(task: str = "binary", *, published=None, suites=None) -> pd.DataFrame:
    """The scores the advisor ranks a task's encoders by: one row per experiment, folds averaged.

    Binary: the published results (the study's 50 datasets) and the binary rows of encbench's own
    benchmark on R datasets, restricted to the published encoders; multiclass and regression:
    that benchmark's rows of the task. An experiment of the benchmark counts when every fold is
    ``ok`` (as the ``scores`` view has it); the outer split is ``cv``.

    Parameters
    ----------
    task : str, default "binary"
    published, suites : path-like, optional
        The published results and the suites' results (default: the shipped files; a missing
        suites file adds nothing; one rewritten since the last call is read again).

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, tuning, scoring, encoder, cv_score, task`` (a copy).
    """
    if task not in DISTANCE_FEATURES:
        raise ValueError(f"the advisor serves the tasks {', '.join(DISTANCE_FEATURES)}: got {task!r}")
    path = Path(suites) if suites else SUITES_RESULTS_FILE
    stamp = path.stat().st_mtime_ns if path.exists() else None
    return _reference_scores(task, str(published) if published else None, str(path), stamp).copy()


def reference_label(task: str) -> str:
    """What the reference datasets of a task are, in words."""
    if task == "binary":
        return "the study's published datasets and encbench's binary suite of R datasets"
    return f"encbench's own benchmark on its {task} suite of R datasets"
