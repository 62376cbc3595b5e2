"""Import the published benchmark into the results store as one run with origin 'published'."""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from encbench import vocab
from encbench.store.published import (
    DATASETS_FILE, RESULTS_FILE, load_published_datasets, load_published_results,
)
from encbench.store.writer import DATASET_COLUMNS, Writer

log = logging.getLogger(__name__)

PUBLISHED_RUN_ID = "published-matteucci2023"
PUBLISHED_LABEL = "Matteucci et al. 2023 (published)"
PUBLISHED_FOLD = -1  # published scores are already averaged over the 5 folds


def import_published(writer: Writer, results_file: Path | str = RESULTS_FILE,
                     datasets_file: Path | str = DATASETS_FILE) -> int:
    """Import the published results; return the number of new result rows.

    Idempotent: re-running inserts nothing (the results primary key holds the run id and the
    experiment coordinates). Codes are mapped to canonical names first, so an unknown code fails
    before anything is written, with the code in the message.
    """
    results = load_published_results(results_file)
    datasets = load_published_datasets(datasets_file)
    unknown = sorted(set(results["dataset"].unique()) - set(datasets["openml_id"]))
    if unknown:
        raise ValueError(f"published results name datasets absent from {str(datasets_file)!r}: {unknown!r}")

    writer.upsert_datasets({"dataset": row.openml_id, "name": row.name, "source": "openml",
                            "openml_id": int(row.openml_id)} for row in datasets.itertuples(index=False))
    writer.ensure_run(
        PUBLISHED_RUN_ID, origin="published", label=PUBLISHED_LABEL, status="running",
        config={"source": "DrCohomology/EncoderBenchmarking@1e288af", "file": Path(results_file).name},
        n_expected=len(results),
    )
    results = results.assign(
        run_id=PUBLISHED_RUN_ID, fold=PUBLISHED_FOLD, n_folds=1, status="ok", error=None,
        # the published time is the mean per fold of the training-fold encoding (docs/ARCHITECTURE.md, Protocol)
        encode_time=results["time"],
    )
    inserted = writer.write_results(results)
    writer.set_run_status(PUBLISHED_RUN_ID, "done")
    log.info("published import: %d new rows (%d in file)", inserted, len(results))
    return inserted


#: run id and label of encbench's own results shipped in ``db/seed/`` (origin ``encbench``)
ENCBENCH_RUN_ID = "encbench-beyond-the-study"
ENCBENCH_LABEL = "Encoders beyond the study (encbench's own results)"
#: the seed files ``benchmarks/run_beyond.py`` writes
ENCBENCH_RESULTS_FILE = Path(RESULTS_FILE).with_name("encbench_beyond_results.parquet")
#: encbench's own benchmark on the R suites of every task (``benchmarks/run_suites.py``)
SUITES_RUN_ID = "encbench-suites"
SUITES_LABEL = "encbench's own benchmark on R datasets of every task"
SUITES_RESULTS_FILE = Path(RESULTS_FILE).with_name("encbench_suites_results.parquet")
#: provenance columns of the seed file, kept in the run's config (not result columns)
_PROVENANCE = ("encbench_version", "library_versions", "command", "python", "grid")
#: provenance columns a seed file may carry besides (the CPU kind the rows were computed on)
_OPTIONAL_PROVENANCE = ("cpu",)


@dataclass(frozen=True)
class ShippedRun:
    """A file of encbench's own results shipped in ``db/seed/`` and imported by ``db init`` as
    one run of origin ``encbench``; its datasets' names and shapes are in the file beside it
    (``*_datasets.parquet``)."""

    run_id: str
    label: str
    results_file: Path


#: every shipped file of encbench's own results, in import order
SHIPPED_RUNS = (ShippedRun(ENCBENCH_RUN_ID, ENCBENCH_LABEL, ENCBENCH_RESULTS_FILE),
                ShippedRun(SUITES_RUN_ID, SUITES_LABEL, SUITES_RESULTS_FILE))


def shipped_runs() -> tuple[ShippedRun, ...]:
    """The shipped runs whose file this installation has."""
    return tuple(run for run in SHIPPED_RUNS if run.results_file.exists())


def encbench_seed_sha256(results_file: Path | str = ENCBENCH_RESULTS_FILE) -> str | None:
    """SHA-256 of the shipped file of encbench's own results (None when it is not shipped)."""
    path = Path(results_file)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def encbench_import_current(db, results_file: Path | str = ENCBENCH_RESULTS_FILE, *,
                            run_id: str = ENCBENCH_RUN_ID) -> bool:
    """True when ``db`` (a Reader or a Writer) holds the finished import of this very file."""
    run = db.query("SELECT status, config FROM runs WHERE run_id = ?", [run_id])
    if not len(run) or run["status"].iloc[0] != "done":
        return False
    return json.loads(run["config"].iloc[0] or "{}").get("sha256") == encbench_seed_sha256(results_file)


def import_encbench(writer: Writer, results_file: Path | str = ENCBENCH_RESULTS_FILE, *,
                    run_id: str = ENCBENCH_RUN_ID, label: str = ENCBENCH_LABEL) -> int:
    """Import a file of encbench's own results (by default the encoders beyond the study, with
    the controls OH and MT; :data:`SHIPPED_RUNS` lists them all) as the run ``run_id`` with
    origin ``encbench``; return the number of new result rows.

    Idempotent, like :func:`import_published`. The rows keep their folds (they are not averaged
    like the published ones); their provenance (encbench and library versions, the command that
    reproduces them) and the file's SHA-256 go into the run's config. A seed file that changed
    since the last import (a dataset computed again) replaces the run's rows: this origin is the
    shipped file's, never edited in the database. A missing seed file imports nothing.

    Raises
    ------
    ValueError
        If the file lacks a result or provenance column, or names an encoder, model or metric
        encbench does not know.
    """
    import pandas as pd

    path = Path(results_file)
    if not path.exists():
        log.info("no encbench results file at %s: nothing to import", path)
        return 0
    rows = pd.read_parquet(path)
    needed = ("dataset", "encoder", "model", "tuning", "scoring", "fold", "n_folds", "cv_score",
              "status", *_PROVENANCE)
    missing = [c for c in needed if c not in rows.columns]
    if missing:
        raise ValueError(f"{str(path)!r} lacks the columns {missing!r}: got {list(rows.columns)!r}")
    for column, known in (("encoder", vocab.ALL_ENCODERS), ("model", vocab.ALL_MODELS),
                          ("scoring", vocab.ALL_METRICS)):
        unknown = sorted(set(rows[column]) - set(known))
        if unknown:
            raise ValueError(f"{str(path)!r} names unknown {column} values: got {unknown!r}")
    first = rows.iloc[0]
    provenance = _PROVENANCE + tuple(c for c in _OPTIONAL_PROVENANCE if c in rows.columns)
    config = {key: first[key] for key in provenance}
    config["grid"] = _json(config["grid"])
    config["library_versions"] = _json(config["library_versions"])
    config["file"] = path.name
    config["sha256"] = encbench_seed_sha256(path)
    # a file grown by several commands (datasets added later) records each part's provenance
    parts = rows.groupby(list(provenance), sort=False)["dataset"].unique()
    if len(parts) > 1:
        config["parts"] = [
            {**dict(zip(provenance, key)), "grid": _json(key[provenance.index("grid")]),
             "library_versions": _json(key[provenance.index("library_versions")]),
             "datasets": sorted(map(str, datasets))}
            for key, datasets in parts.items()]
    # names and shapes from the datasets file beside it; a published dataset's row stays published
    datasets_file = path.with_name(path.name.replace("_results", "_datasets"))
    records = (pd.read_parquet(datasets_file).to_dict("records") if datasets_file.exists()
               else [{"dataset": d, "name": d, "source": "bundled"} for d in sorted(set(rows["dataset"]))])
    writer.upsert_datasets({k: (None if pd.isna(v) else v) for k, v in record.items() if k in DATASET_COLUMNS}
                           for record in records)
    stored = writer.query("SELECT config FROM runs WHERE run_id = ?", [run_id])
    if len(stored) and json.loads(stored["config"].iloc[0] or "{}").get("sha256") != config["sha256"]:
        removed = writer.delete_run(run_id)
        log.info("encbench results file %s changed since its import: its %d rows are replaced", path, removed)
    writer.ensure_run(run_id, origin="encbench", label=label, status="running",
                      config=config, n_expected=len(rows))
    results = rows.drop(columns=[c for c in (*provenance, "run_id") if c in rows.columns])
    inserted = writer.write_results(results.assign(run_id=run_id))
    writer.set_run_status(run_id, "done")
    log.info("encbench results import: %d new rows (%d in file)", inserted, len(rows))
    return inserted


def _json(value):
    return json.loads(value) if isinstance(value, str) else value
