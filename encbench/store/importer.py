"""Import the published benchmark into the results store as one run with origin 'published'."""
from __future__ import annotations

import logging
from pathlib import Path

from encbench.store.published import (
    DATASETS_FILE, RESULTS_FILE, load_published_datasets, load_published_results,
)
from encbench.store.writer import Writer

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
    unknown = sorted(set(results["dataset"]) - set(datasets["openml_id"]))
    if unknown:
        raise ValueError(f"published results name datasets absent from {str(datasets_file)!r}: {unknown!r}")

    for row in datasets.itertuples(index=False):
        writer.upsert_dataset({
            "dataset": row.openml_id, "name": row.name, "source": "openml",
            "openml_id": int(row.openml_id),
        })
    writer.ensure_run(
        PUBLISHED_RUN_ID, origin="published", label=PUBLISHED_LABEL, status="running",
        config={"source": "DrCohomology/EncoderBenchmarking@1e288af", "file": Path(results_file).name},
        n_expected=len(results),
    )
    results = results.assign(
        run_id=PUBLISHED_RUN_ID, fold=PUBLISHED_FOLD, n_folds=1, status="ok", error=None,
        # the published time is the mean per fold of the training-fold encoding (DESIGN 5)
        encode_time=results["time"],
    )
    inserted = writer.write_results(results)
    writer.set_run_status(PUBLISHED_RUN_ID, "done")
    log.info("published import: %d new rows (%d in file)", inserted, len(results))
    return inserted
