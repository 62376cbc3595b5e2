"""The cached store: one read-only Reader per database, cached loads keyed on the snapshot.

One ``@st.cache_resource`` Reader per database path (so tests or users pointing ``ENCBENCH_DB``
at another file never get a stale reader), and ``@st.cache_data`` functions keyed on ``(db path,
snapshot version, arguments)``: a new snapshot published by the writer changes the version and
so invalidates every cached load and computation.
"""
from __future__ import annotations

import logging

import pandas as pd
import streamlit as st

from encbench.store import Reader, SnapshotMissing, default_db_path, queries
from encbench.views import origins as origin_views
from encbench.views.labels import natural_key
from pages.ui.text import md_text

log = logging.getLogger(__name__)


def db_path() -> str:
    """The database the app reads (``ENCBENCH_DB`` or the default), as a cache key."""
    return str(default_db_path().resolve())


@st.cache_resource(show_spinner=False)
def get_reader(db: str) -> Reader:
    """The app's read-only connection to the newest snapshot of ``db`` (reopens on new snapshots)."""
    return Reader(db)


def reader_or_stop() -> Reader:
    """The reader (refreshed to the newest snapshot), or a clear message and a stopped page."""
    try:
        reader = get_reader(db_path())
        reader.refresh()
        return reader
    except SnapshotMissing as exc:
        st.error(md_text(exc))
        st.stop()


def data_key() -> tuple[str, tuple]:
    """``(db, version)``: the first two arguments of every cached function below."""
    reader = reader_or_stop()
    return db_path(), reader.version


def snapshot_label(version: tuple) -> str:
    """A short, stable name of a snapshot version for export metadata."""
    return "-".join(str(v) for v in version) if version else ""


@st.cache_data(show_spinner=False, max_entries=8)
def levels(db: str, version: tuple, task: str | None = None) -> dict[str, list[str]]:
    """Distinct values per factor that have results (filter options), of one task type or (None)
    of every task."""
    every = _all_levels(db, version)
    if task is None or every["task"] == [task]:  # one task in the database: no second pass
        return every
    return queries.factor_levels(get_reader(db), tasks=(task,))


@st.cache_data(show_spinner=False, max_entries=8)
def _all_levels(db: str, version: tuple) -> dict[str, list[str]]:
    return queries.factor_levels(get_reader(db))


@st.cache_data(show_spinner=False, max_entries=64)
def raw_scores(db: str, version: tuple, *, datasets: tuple | None = None, models: tuple | None = None,
               tunings: tuple | None = None, scorings: tuple | None = None,
               encoders: tuple | None = None, origins: tuple | None = ("published",),
               splits: tuple | None = ("cv",), tasks: tuple | None = ("binary",)) -> pd.DataFrame:
    """Score rows, filtered, one per experiment *and run* (an experiment may have several).

    ``splits`` defaults to the published protocol (``cv``) and ``tasks`` to the published
    study's binary classification: a time-split result, or one of another task type, enters a
    view only when the view asks for it (:func:`split_filter`, :func:`task_filter`), so no view
    pools two tasks by default."""
    frame = queries.load_scores(get_reader(db), datasets=datasets, models=models, tunings=tunings,
                                scorings=scorings, encoders=encoders,
                                origins=origin_views.database_origins(origins), splits=splits, tasks=tasks)
    # encbench's own results: only the shipped runs the view chose (origin_views.OWN_RUNS)
    return origin_views.own_rows(frame, origins)


@st.cache_data(show_spinner=False, max_entries=64)
def scores(db: str, version: tuple, *, datasets: tuple | None = None, models: tuple | None = None,
           tunings: tuple | None = None, scorings: tuple | None = None,
           encoders: tuple | None = None, origins: tuple | None = ("published",),
           prefer: str = "published", splits: tuple | None = ("cv",),
           tasks: tuple | None = ("binary",)) -> pd.DataFrame:
    """Score rows, one per experiment, filtered; the published benchmark unless ``origins`` says.

    Where an experiment has a published and a local score, the ``prefer`` one counts; several
    runs of the same origin are averaged.
    """
    frame = raw_scores(db, version, datasets=datasets, models=models, tunings=tunings,
                       scorings=scorings, encoders=encoders, origins=origins, splits=splits, tasks=tasks)
    if origins is not None and origin_views.BEYOND_ORIGIN in origins and "published" in origins:
        # the encoders beyond the study rank among the 32 on the datasets they were run on
        frame = origin_views.beyond_view(frame).scores
    return queries.one_score_per_experiment(frame, prefer=prefer)


@st.cache_data(show_spinner=False, max_entries=16)
def beyond_view(db: str, version: tuple, filters: tuple) -> origin_views.BeyondView:
    """encbench's own results beside the published ones under ``filters`` (sorted ``(key,
    value)`` pairs of :func:`scores`' keyword filters): what the banner announces."""
    frame = raw_scores(db, version, **dict(filters), origins=("published", origin_views.BEYOND_ORIGIN))
    return origin_views.beyond_view(frame)


@st.cache_data(show_spinner=False, max_entries=8)
def local_overview(db: str, version: tuple) -> dict[str, int]:
    return queries.local_overview(get_reader(db))


@st.cache_data(show_spinner=False, max_entries=8)
def view_datasets(db: str, version: tuple, origins: tuple | None = ("published",)) -> list[str]:
    """Datasets with results in a view of ``origins`` (filter options follow the view)."""
    return sorted(queries.datasets_with_scores(get_reader(db), origins), key=natural_key)


@st.cache_data(show_spinner=False, max_entries=8)
def datasets_table(db: str, version: tuple) -> pd.DataFrame:
    return queries.list_datasets(get_reader(db))


@st.cache_data(show_spinner=False, max_entries=8)
def runs_table(db: str, version: tuple) -> pd.DataFrame:
    return queries.list_runs(get_reader(db))


@st.cache_data(show_spinner=False, max_entries=8)
def summary(db: str, version: tuple, origins: tuple | None = ("published",)) -> dict[str, int]:
    return queries.summary(get_reader(db), origins=origin_views.database_origins(origins))
