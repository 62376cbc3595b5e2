"""Read queries over the results store. All SQL of the app lives here.

Every function takes a *source*: anything with ``query(sql, params) -> DataFrame`` (a
:class:`~encbench.store.reader.Reader` or a :class:`~encbench.store.writer.Writer`). Filters are
bound as lists; ``None`` means "no filter".
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pandas as pd

from encbench import vocab
from encbench.experiment import EXPERIMENT_KEY, RESULT_KEY, SETTING_EXTRAS, key_columns


class Source(Protocol):
    def query(self, sql: str, params: list | tuple | None = None) -> pd.DataFrame: ...


def _as_list(values: Sequence[str] | str | int | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, (str, int)):
        return [str(values)]
    return [str(v) for v in values]


# Filters over a closed vocabulary: an unknown value is a mistake, not an empty selection.
_VOCABULARY = {"models": vocab.ALL_MODELS, "tunings": vocab.TUNINGS, "scorings": vocab.ALL_METRICS,
               "encoders": vocab.ALL_ENCODERS, "origins": ("published", "local", "encbench"),
               "splits": vocab.SPLITS, "tasks": vocab.TASKS}


def _check_vocabulary(name: str, values: list[str] | None) -> None:
    allowed = _VOCABULARY.get(name)
    if allowed is None or values is None:
        return
    unknown = [v for v in values if v not in allowed]
    if unknown:
        raise ValueError(f"unknown {name[:-1]} {unknown[0]!r} in the {name} filter; known: {', '.join(allowed)}")


# Each filter is "(?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], column))" with the list bound
# twice; the column names come from this allowlist (the experiment key, the origin and the run),
# never from the caller.
_SCORE_FILTERS = (*EXPERIMENT_KEY, "origin", "run_id")
#: the columns of :func:`load_scores`, in their order
SCORE_COLUMNS = ("dataset", *vocab.FACTORS, "encoder", "cv_score", "time", "origin", "run_id",
                 *SETTING_EXTRAS, "encode_time")
_SCORES_SQL = (
    f"SELECT {', '.join(SCORE_COLUMNS)} FROM scores WHERE "
    + " AND ".join(f"(?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], {c}))" for c in _SCORE_FILTERS)
    + f" ORDER BY {', '.join((*vocab.FACTORS, 'dataset', 'encoder'))}"
)


def load_scores(source: Source, *, datasets=None, models=None, tunings=None, scorings=None,
                encoders=None, origins=None, run_ids=None, splits=None, tasks=None) -> pd.DataFrame:
    """Rows of the ``scores`` view (one per experiment and run), filtered.

    Returns columns ``dataset, model, tuning, scoring, encoder, cv_score, time, origin, run_id,
    split, task, encode_time``; ``tasks`` keeps the rows of some task types (binary,
    multiclass, regression; None: every task). ``encode_time`` is the mean per fold of the training-fold encoding
    time (the published ``time`` is that quantity, on the study's hardware); a local ``time``
    is the total of encoding, fitting or tuning and predicting over the folds. Values are
    canonical names (``encbench.vocab``); an unknown model, tuning, scoring, encoder, origin or
    split raises ValueError. Datasets are keys (OpenML ids as text; an int is accepted).
    Use :func:`one_score_per_experiment` before ranking when several runs may hold the same
    experiment.
    """
    filters = {"dataset": datasets, "model": models, "tuning": tunings, "scoring": scorings,
               "encoder": encoders, "origin": origins, "run_id": run_ids, "split": splits,
               "task": tasks}
    params: list = []
    for column in _SCORE_FILTERS:
        values = _as_list(filters[column])
        _check_vocabulary(f"{column}s", values)
        params += [values, values]
    return source.query(_SCORES_SQL, params)


#: Which score counts when an experiment has both a published and a local score.
PREFERENCES: tuple[str, ...] = ("published", "local")


def one_score_per_experiment(scores: pd.DataFrame, prefer: str | None = None) -> pd.DataFrame:
    """One score per experiment (:data:`encbench.experiment.EXPERIMENT_KEY`), as rankings need.

    Parameters
    ----------
    scores : pandas.DataFrame
        Rows of :func:`load_scores` (several runs may hold the same experiment).
    prefer : {'published', 'local'} or None
        Where an experiment has a score of both origins, keep only the rows of this origin (a
        local re-run of a published dataset then either replaces the published score or not,
        it is never mixed in). None averages every row of the experiment (the origins are
        joined, e.g. ``"local,published"``). Several runs of the kept origin are averaged.

    Raises
    ------
    ValueError
        If ``prefer`` is not one of :data:`PREFERENCES` or None.
    """
    if prefer is not None and prefer not in PREFERENCES:
        raise ValueError(f"prefer must be one of {PREFERENCES} or None: got {prefer!r}")
    # the evaluation scheme is part of the experiment: a cv and a time score are never merged
    experiment = key_columns(scores)
    if not scores.duplicated(experiment).any():
        return scores
    if prefer is not None and "origin" in scores.columns:
        # keep the rows of the first origin present, in the order: prefer, then published, local,
        # encbench (encbench's own control rows never outvote a published or local score)
        order = {o: i for i, o in enumerate(dict.fromkeys((prefer, "published", "local", "encbench")))}
        rank = scores["origin"].map(order).fillna(len(order)).to_numpy()
        best = pd.Series(rank, index=scores.index).groupby(
            [scores[k] for k in experiment], observed=True, sort=False).transform("min")
        scores = scores[rank == best.to_numpy()]
        if not scores.duplicated(experiment).any():
            return scores
    out = scores.groupby(experiment, as_index=False, observed=True, sort=False).agg(
        cv_score=("cv_score", "mean"), time=("time", "mean"),
        origin=("origin", lambda s: ",".join(sorted(set(s)))),
        run_id=("run_id", lambda s: ",".join(sorted(set(s)))),
    )
    # the key columns where the rows had them (not in key order), then the aggregates
    key_first = [c for c in scores.columns if c in experiment]
    return out[key_first + [c for c in out.columns if c not in experiment]]


def summary(source: Source, origins: Sequence[str] | None = None) -> dict[str, int]:
    """Headline counts of the ``scores`` rows of ``origins`` (None: every origin).

    Returns datasets, encoders, models, scorings, tunings with results; results (score rows);
    runs (of those origins, with scores: the runs the results come from).
    """
    values = _as_list(origins)
    _check_vocabulary("origins", values)
    row = source.query(
        "SELECT count(DISTINCT dataset) AS datasets, count(DISTINCT encoder) AS encoders, "
        "count(DISTINCT model) AS models, count(DISTINCT scoring) AS scorings, "
        "count(DISTINCT tuning) AS tunings, count(*) AS results, "
        "count(DISTINCT run_id) AS runs "
        "FROM scores WHERE ?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], origin)",
        [values, values],
    ).iloc[0]
    return {k: int(v) for k, v in row.items()}


def local_overview(source: Source) -> dict[str, int]:
    """What local results exist, for the note that says they are left out of a view.

    Returns ``rows`` (local score rows), ``datasets`` (datasets with local scores),
    ``published_datasets`` (of those, datasets the published benchmark also has) and
    ``runs`` (local runs with scores).
    """
    row = source.query(
        "SELECT count(*) AS rows, count(DISTINCT dataset) AS datasets, count(DISTINCT run_id) AS runs, "
        "count(DISTINCT dataset) FILTER (WHERE dataset IN "
        "  (SELECT dataset FROM scores WHERE origin = 'published')) AS published_datasets "
        "FROM scores WHERE origin = 'local'"
    ).iloc[0]
    return {k: int(v) for k, v in row.items()}


def counts_by(source: Source, column: str) -> pd.DataFrame:
    """Number of ``scores`` rows per origin and value of one factor column."""
    allowed = EXPERIMENT_KEY
    if column not in allowed:
        raise ValueError(f"column must be one of {allowed}: got {column!r}")
    sql = (
        f"SELECT origin, {column}, count(*) AS results FROM scores "
        f"GROUP BY origin, {column} ORDER BY origin, {column}"
    )
    return source.query(sql)


def factor_levels(source: Source, tasks: Sequence[str] | None = None) -> dict[str, list[str]]:
    """Distinct values with results, per factor (for filter widgets), and under ``own_runs`` the
    runs of encbench's own results (origin ``encbench``) that have some; ``tasks`` keeps the rows
    of some task types (None: every task)."""
    # One pass over the view (it aggregates every result row each time it is read): a query per
    # factor read it seven times, the largest part of the app's first page load after imports.
    values = _as_list(tasks)
    _check_vocabulary("tasks", values)
    columns = (*EXPERIMENT_KEY, "origin")
    row = source.query("SELECT " + ", ".join(f"list(DISTINCT {c}) AS {c}" for c in columns)
                       + ", list(DISTINCT run_id) FILTER (WHERE origin = 'encbench') AS own_runs"
                       + " FROM scores WHERE ?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], task)",
                       [values, values]).iloc[0]
    # an empty view gives NULL lists (None, NaN or pandas.NA depending on the column's type)
    return {c: sorted(str(v) for v in row[c]) if isinstance(row[c], (list, tuple, np.ndarray)) else []
            for c in (*columns, "own_runs")}


def fold_spread(source: Source, run_ids: Sequence[str]) -> pd.DataFrame:
    """Per-fold spread of the scores of runs: one row per experiment and run.

    Returns columns ``run_id``, the experiment key (:data:`encbench.experiment.EXPERIMENT_KEY`),
    ``n_folds, cv_std``: the sample standard deviation of ``cv_score`` over the experiment's folds (NaN
    with one fold). Only complete experiments count (every fold ok), as in the ``scores`` view.
    Published rows come averaged over folds (one row, fold -1): they have no spread and are
    left out.
    """
    values = _as_list(run_ids)
    key = ", ".join(("run_id", *EXPERIMENT_KEY))
    return source.query(
        f"SELECT {key}, count(*) AS n_folds, stddev_samp(cv_score) AS cv_std FROM results "
        f"WHERE fold >= 0 AND list_contains(?::VARCHAR[], run_id) GROUP BY {key} "
        f"HAVING bool_and(status = 'ok') AND count(*) = max(n_folds)",
        [values or []])


def fold_scores(source: Source, run_ids: Sequence[str]) -> pd.DataFrame:
    """The per-fold scores of runs: one row per experiment, run and outer fold.

    Returns columns ``run_id``, the result key (:data:`encbench.experiment.RESULT_KEY`: the
    experiment key and ``fold``) and ``cv_score``, for the complete experiments only (every fold
    ok), as in the ``scores`` view and :func:`fold_spread`. Published rows (one averaged row, fold
    -1) are left out: they have no folds.
    """
    values = _as_list(run_ids)
    key = ", ".join(("run_id", *EXPERIMENT_KEY))
    return source.query(
        f"SELECT r.run_id, {', '.join('r.' + c for c in RESULT_KEY)}, r.cv_score FROM results AS r "
        f"JOIN (SELECT {key} FROM results WHERE fold >= 0 AND list_contains(?::VARCHAR[], run_id) "
        f"      GROUP BY {key} HAVING bool_and(status = 'ok') AND count(*) = max(n_folds)) AS c "
        f"USING ({key}) WHERE r.fold >= 0 "
        f"ORDER BY r.run_id, {', '.join('r.' + c for c in RESULT_KEY)}",
        [values or []])


def datasets_with_scores(source: Source, origins: Sequence[str] | None = None) -> list[str]:
    """Dataset keys with ``scores`` rows of ``origins`` (None: every origin), sorted as text."""
    values = _as_list(origins)
    _check_vocabulary("origins", values)
    return source.query(
        "SELECT DISTINCT dataset FROM scores WHERE ?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], origin) "
        "ORDER BY dataset", [values, values])["dataset"].astype(str).tolist()


def list_datasets(source: Source) -> pd.DataFrame:
    """The ``datasets`` table with the number of ``scores`` rows per dataset."""
    return source.query(
        "SELECT d.*, coalesce(s.results, 0) AS results FROM datasets AS d "
        "LEFT JOIN (SELECT dataset, count(*) AS results FROM scores GROUP BY dataset) AS s USING (dataset) "
        "ORDER BY try_cast(d.dataset AS INTEGER) NULLS LAST, d.dataset"
    )


def list_runs(source: Source) -> pd.DataFrame:
    """Every run with its progress: rows ok / failed / timeout and expected."""
    return source.query(
        "SELECT u.run_id, u.label, u.origin, u.status, u.created_at, u.finished_at, u.n_expected, "
        "u.error, u.config, u.runner_host, u.runner_pid, u.heartbeat_at, u.owner, "
        "coalesce(r.n_ok, 0) AS n_ok, coalesce(r.n_failed, 0) AS n_failed, "
        "coalesce(r.n_timeout, 0) AS n_timeout, r.last_result_at "
        "FROM runs AS u LEFT JOIN ("
        "  SELECT run_id, count(*) FILTER (WHERE status = 'ok') AS n_ok,"
        "         count(*) FILTER (WHERE status = 'failed') AS n_failed,"
        "         count(*) FILTER (WHERE status = 'timeout') AS n_timeout,"
        "         max(finished_at) AS last_result_at"
        "  FROM results GROUP BY run_id) AS r USING (run_id) "
        "ORDER BY u.created_at DESC"
    )


def run_errors(source: Source, run_id: str) -> pd.DataFrame:
    """Failed and timed-out result rows of one run (their result key), with their errors."""
    return source.query(
        f"SELECT {', '.join(RESULT_KEY)}, status, error FROM results "
        f"WHERE run_id = ? AND status <> 'ok' ORDER BY dataset, encoder, model, fold",
        [run_id],
    )


def runs_done(source: Source, run_ids: Sequence[str]) -> list[str]:
    """Those of ``run_ids`` whose run finished (status ``done``)."""
    return source.query("SELECT run_id FROM runs WHERE list_contains(?::VARCHAR[], run_id) AND status = ? "
                        "ORDER BY run_id", [_as_list(run_ids), "done"])["run_id"].tolist()


def schema_version(source: Source) -> int | None:
    """The latest migration applied to the database (None before any)."""
    version = source.query("SELECT max(version) AS v FROM schema_migrations")["v"].iloc[0]
    return None if pd.isna(version) else int(version)


def run_origins(source: Source) -> list[str]:
    """The origins that have runs, sorted."""
    return source.query("SELECT DISTINCT origin FROM runs ORDER BY origin")["origin"].tolist()


def encoders_with_scores(source: Source) -> list[str]:
    """Encoders with ``scores`` rows, sorted as text."""
    return source.query("SELECT DISTINCT encoder FROM scores ORDER BY encoder")["encoder"].tolist()


def run_config(source: Source, run_id: str) -> pd.DataFrame:
    """One run's ``run_id, status, label, config`` (no row when it is unknown)."""
    return source.query("SELECT run_id, status, label, config FROM runs WHERE run_id = ?", [run_id])


def runs_of_origin(source: Source, origin: str, *, newest_first: bool = False) -> pd.DataFrame:
    """``run_id, label, status, config, created_at`` of the runs of one origin, by creation time."""
    _check_vocabulary("origins", [origin])
    order = "DESC" if newest_first else "ASC"  # one of two fixed words, never the caller's text
    return source.query("SELECT run_id, label, status, config, created_at FROM runs WHERE origin = ? "
                        f"ORDER BY created_at {order}", [origin])
