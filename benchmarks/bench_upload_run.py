"""From a CSV on disk to a ranking of encoders on it: the "Run on your data" path, timed.

A 10,000-row CSV (a seeded sample of the bundled adult dataset: 8 categorical, 6 numerical
columns) goes through what the app does when a user uploads it and clicks "Launch run": stage and
validate the upload, store it by hash, queue the grid (all 32 encoders x LogReg x 4 metrics, no
tuning, 5 folds), start the background worker process, and wait until every result is in the read
snapshot and the comparison with the published consensus can be computed.

Prints the phases' wall times, the slowest encoders (sum of their fold times) and the best
encoders on the data. Usage: ``.venv/bin/python benchmarks/bench_upload_run.py [--rows 10000]``
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from encbench import vocab
from encbench.views.run_result import compare_with_published
from encbench.data import BUNDLED_DIR, read_table
from encbench.engine.queue import RunQueue
from encbench.store import Reader, Writer, import_published, queries
from encbench.uploads import queue_upload_run, stage_upload


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--models", default="LogReg")
    parser.add_argument("--workers", type=int, default=2, help="task processes (the app's default: 2)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="encbench-bench-upload-"))
    db = tmp / "encbench.duckdb"
    with Writer(db) as writer:
        import_published(writer)
    adult = read_table(BUNDLED_DIR / "1590_adult.arff.gz")
    csv = tmp / f"adult_{args.rows}.csv"
    adult.sample(n=args.rows, random_state=0).to_csv(csv, index=False)
    print(f"dataset: {csv.name}, {args.rows} rows x {adult.shape[1]} columns, {csv.stat().st_size / 1e6:.1f} MB")

    t0 = time.perf_counter()
    staged = stage_upload(csv.read_bytes(), csv.name, db_path=db)
    assert staged.ok, staged.errors
    grid = queue_upload_run(staged, target="class", encoders=list(vocab.ENCODERS), models=args.models.split(","),
                            scorings=list(vocab.METRICS), tuning="no", db_path=db,
                            workers=args.workers)
    t_queued = time.perf_counter()
    queue = RunQueue(db)
    queue.ensure_worker(idle_exit=1)
    reader = None
    while True:
        time.sleep(1)
        if reader is None and (db.parent / "encbench.read.duckdb").exists():
            reader = Reader(db)
        if reader is None:
            continue
        runs = queries.list_runs(reader).set_index("run_id")
        if grid.run_id in runs.index and runs.loc[grid.run_id, "status"] in ("done", "failed", "cancelled"):
            break
    t_done = time.perf_counter()
    local = queries.load_scores(reader, run_ids=[grid.run_id])
    published = queries.load_scores(reader, origins=["published"], models=args.models.split(","), tunings=["no"])
    comparisons = compare_with_published(local, published)
    t_ranked = time.perf_counter()

    run = runs.loc[grid.run_id]
    print(f"run {grid.run_id}: status {run['status']}, {int(run['n_ok'])} ok / {int(run['n_expected'])} rows, "
          f"{int(run['n_failed'])} failed, {int(run['n_timeout'])} timed out")
    print(f"upload staged, validated, stored and queued: {t_queued - t0:6.2f} s")
    print(f"worker start + 32 encoders x 5 folds ({args.workers} proc): {t_done - t_queued:6.2f} s")
    print(f"ranking + comparison with published:         {t_ranked - t_done:6.2f} s")
    print(f"total, CSV on disk to ranking:               {t_ranked - t0:6.2f} s")
    per_encoder = (local[local["scoring"] == "AUC"].groupby("encoder")["time"].sum().sort_values(ascending=False))
    print("\nslowest encoders (sum over folds of the task time, LogReg, AUC row):")
    print(per_encoder.head(8).round(2).to_string())
    for comp in comparisons:
        print("\n" + comp.summary)
    reader.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
