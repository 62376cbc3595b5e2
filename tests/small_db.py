"""A small results database for the page tests: a few datasets of every origin and task.

Built through the project's own importers (``encbench.store.importer``) from the shipped seed
files, filtered: no number here is typed by hand, and the same seed files always give the same
database. It holds

* the published results (origin ``published``, every model, tuning and metric, every encoder)
  of :data:`PUBLISHED_DATASETS`: complete and incomplete datasets, some in full tuning and one
  not, all but one among those encbench's own runs of the encoders beyond the study cover;
* encbench's own results shipped in ``db/seed/`` (origin ``encbench``, one run per
  :data:`encbench.store.importer.SHIPPED_RUNS` entry): the encoders beyond the study on those
  published datasets, and the R suites on :data:`SUITE_DATASETS_PER_TASK` datasets of each task
  (binary, multiclass, regression) with the models and metrics of :data:`SUITE_SETTINGS`, every
  encoder and fold;
* one finished local run (:data:`LOCAL_RUN_ID`): OH and MT with LogReg / no tuning / AUC on
  tic-tac-toe (50), five folds each. Its scores are encbench's own shipped scores of those
  experiments, which a user's run of the same grid reproduces (the protocol is seeded).

The read snapshot is published when the writer closes, as for the full published database.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from encbench.store import Writer, snapshot_path
from encbench.store.importer import (
    ENCBENCH_RUN_ID, SHIPPED_RUNS, SUITES_RUN_ID, import_encbench, import_published,
)
from encbench.store.published import DATASETS_FILE, RESULTS_FILE

#: published datasets kept (OpenML ids): kr-vs-kp, credit-approval, credit-g, tic-tac-toe,
#: heart-h (not in full tuning), vote (no run of the encoders beyond the study), monks-problems-2
#: and Titanic (25 of the 32 encoders)
PUBLISHED_DATASETS = ("3", "29", "31", "50", "51", "56", "334", "40945")
#: datasets of the R suites kept per task: the first ones in sorted order
SUITE_DATASETS_PER_TASK = 3
#: models and metrics of the R suites kept per task: each task's default (the pages' first
#: choice) and one more, so a view can pool or switch them
SUITE_SETTINGS = {
    "binary": (("LogReg", "DT"), ("AUC", "Acc")),
    "multiclass": (("LogReg", "DT"), ("AUC", "Acc")),
    "regression": (("Ridge", "DT"), ("RMSE", "R2")),
}
#: the local run: encoders, model, tuning, metric and dataset
LOCAL_RUN_ID = "local-5a11db0000000001"
LOCAL_GRID = {"datasets": ["50"], "encoders": ["OH", "MT"], "models": ["LogReg"], "scorings": ["AUC"],
              "tuning": "no", "n_folds": 5, "label": "tic-tac-toe: OH and MT"}


def _read_seed(path: Path, filters: list | None = None) -> pd.DataFrame:
    """The rows of the seed file ``path`` that ``filters`` keep (a parquet filter), as pandas
    reads the whole file.

    Read single-threaded (a test session's cores are busy: Arrow's reader threads cost more CPU
    than they save there), with text columns as dictionaries until the rows are filtered: the
    suites' file repeats long provenance texts on each of its 258,480 rows, and decoding them
    all was most of the small database's build."""
    schema = pq.read_schema(path)
    text = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    table = pq.read_table(path, filters=filters, read_dictionary=text, use_threads=False)
    return table.cast(schema).to_pandas()


def _published_files(folder: Path) -> tuple[Path, Path]:
    """The published seed files cut to :data:`PUBLISHED_DATASETS`, written into ``folder``."""
    results = _read_seed(RESULTS_FILE, [("dataset", "in", PUBLISHED_DATASETS)])
    datasets = pd.read_csv(DATASETS_FILE, dtype=str)
    datasets = datasets[datasets["openml_id"].isin(PUBLISHED_DATASETS)]
    assert set(results["dataset"].astype(str)) == set(datasets["openml_id"]) == set(PUBLISHED_DATASETS)
    results_file, datasets_file = folder / RESULTS_FILE.name, folder / DATASETS_FILE.name
    results.to_parquet(results_file, index=False)
    datasets.to_csv(datasets_file, index=False)
    return results_file, datasets_file


def _suite_filters(path: Path) -> list[list[tuple]]:
    """The R suites' rows kept, as a parquet filter (read only those rows: the file is large):
    :data:`SUITE_DATASETS_PER_TASK` datasets per task, with the models and metrics of
    :data:`SUITE_SETTINGS`."""
    tasks = pq.read_table(path, columns=["task", "dataset"], use_threads=False).to_pandas().drop_duplicates()
    filters = []
    for task, (models, metrics) in SUITE_SETTINGS.items():
        datasets = sorted(tasks.loc[tasks["task"] == task, "dataset"])[:SUITE_DATASETS_PER_TASK]
        filters.append([("dataset", "in", datasets), ("model", "in", models), ("scoring", "in", metrics)])
    return filters


def _shipped_file(run, folder: Path) -> Path:
    """A shipped run's seed file (and its datasets file) cut to the small database's datasets."""
    filters = (_suite_filters(run.results_file) if run.run_id == SUITES_RUN_ID
               else [("dataset", "in", PUBLISHED_DATASETS)])
    rows = _read_seed(run.results_file, filters)
    assert len(rows), run.run_id
    results_file = folder / run.results_file.name
    rows.to_parquet(results_file, index=False)
    datasets_name = run.results_file.name.replace("_results", "_datasets")
    datasets = _read_seed(run.results_file.with_name(datasets_name))
    datasets[datasets["dataset"].isin(set(rows["dataset"]))].to_parquet(folder / datasets_name, index=False)
    return results_file


def _local_rows() -> pd.DataFrame:
    """The local run's rows: encbench's own shipped scores of :data:`LOCAL_GRID`'s experiments."""
    rows = _read_seed(next(r for r in SHIPPED_RUNS if r.run_id == ENCBENCH_RUN_ID).results_file, [
        ("dataset", "in", LOCAL_GRID["datasets"]), ("encoder", "in", LOCAL_GRID["encoders"]),
        ("model", "in", LOCAL_GRID["models"]), ("scoring", "in", LOCAL_GRID["scorings"]),
        ("tuning", "==", LOCAL_GRID["tuning"])])
    columns = ["dataset", "encoder", "model", "tuning", "scoring", "fold", "n_folds", "cv_score", "time",
               "encode_time", "status", "error", "split"]
    assert len(rows) == len(LOCAL_GRID["encoders"]) * LOCAL_GRID["n_folds"], len(rows)
    return rows[columns].assign(run_id=LOCAL_RUN_ID)


def build_small_db(path: Path, *, shipped: bool = True, local: bool = True) -> Path:
    """Write the small database at ``path`` (a new file) and publish its read snapshot.

    ``shipped=False`` leaves out encbench's own runs and ``local=False`` the local run (for
    tests that add rows of their own under those run ids, or need a database without them).
    """
    folder = path.parent / f"{path.stem}-seed"
    folder.mkdir()
    with Writer(path) as writer:
        import_published(writer, *_published_files(folder))
        if shipped:
            for run in SHIPPED_RUNS:
                import_encbench(writer, _shipped_file(run, folder), run_id=run.run_id, label=run.label)
        if local:
            writer.ensure_run(LOCAL_RUN_ID, origin="local", label=LOCAL_GRID["label"], status="running",
                              config=LOCAL_GRID, n_expected=len(LOCAL_GRID["encoders"]) * LOCAL_GRID["n_folds"])
            writer.write_results(_local_rows())
            writer.set_run_status(LOCAL_RUN_ID, "done")
    return path


def copy_db(source: Path, path: Path) -> Path:
    """Copy the database ``source`` and its read snapshot to ``path``; return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, path)
    shutil.copyfile(snapshot_path(source), snapshot_path(path))
    return path
