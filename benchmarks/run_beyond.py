"""encbench's own results for the encoders beyond the study, shipped in ``db/seed/``.

Runs the encoders of :data:`encbench.vocab.BEYOND_ENCODERS` with the published protocol (no
tuning, the study's five models, its four metrics, 5 outer folds) and the controls OH and MT beside
them, on the bundled datasets of at most ``--max-rows`` rows, into a results database of its own
(resumable: run it again after a crash), then writes every result row with its provenance to
``db/seed/encbench_beyond_results.parquet``, which ``encbench db init`` imports as the origin
``encbench``. The controls' agreement with the published cells is printed at the end.

Usage::

    .venv/bin/python benchmarks/run_beyond.py [--workers 2] [--max-rows 1400] [--db /tmp/beyond.duckdb]

The run adds to the shipped results: datasets already complete in the seed file are not run
again, and their rows (with the provenance they were computed with) are kept beside the new
ones. ``--fresh`` computes every dataset again, ``--redo 43922`` the datasets named (after a
change to how they load).

Datasets above ``--max-rows`` (1,000 by default: Titanic, kr-vs-kp, sick, mushroom, nursery and
adult) are left out. The shipped results cover every bundled dataset but adult (``--max-rows
12960``); SVM with probability estimates grows with about the square of the rows, and adult's
48,842 would take an estimated five hours or more on one core. Datasets run smallest first; only
datasets whose every task finished are exported.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from encbench import __version__, vocab  # noqa: E402
from encbench.data import bundled_entries  # noqa: E402
from encbench.encoders import applies_to  # noqa: E402
from encbench.engine import Grid, run_grid  # noqa: E402
from encbench.store import Reader  # noqa: E402

SEED_FILE = REPO / "db" / "seed" / "encbench_beyond_results.parquet"
CONTROLS = ("OH", "MT")
LIBRARIES = ("scikit-learn", "skrub", "category_encoders", "lightgbm", "numpy", "pandas", "scipy")


def shipped_rows():
    """The result rows in the seed file, or None when there is none."""
    import pandas as pd

    return pd.read_parquet(SEED_FILE) if SEED_FILE.exists() else None


def grid_for(max_rows: int, skip: frozenset = frozenset()) -> Grid:
    """The grid over the bundled datasets of at most ``max_rows`` rows whose dataset key is not
    in ``skip`` (the ones already shipped)."""
    # smallest first: an interrupted run has finished the most datasets
    entries = sorted((e for e in bundled_entries() if e.rows <= max_rows), key=lambda e: (e.rows, e.name))
    datasets = [f"bundled:{entry.name}" for entry in entries if entry.key not in skip]
    return Grid(datasets=datasets, encoders=CONTROLS + vocab.BEYOND_ENCODERS,
                models=vocab.STUDY_MODELS, scorings=vocab.METRICS, tuning="no",
                label="encoders beyond the study (encbench's own results)")


def provenance(command: str) -> dict:
    """What produced the rows: encbench's and the libraries' versions, and the command."""
    versions = {name: importlib.metadata.version(name) for name in LIBRARIES}
    return {"encbench_version": __version__, "library_versions": json.dumps(versions, sort_keys=True),
            "command": command, "python": sys.version.split()[0]}


def export(db: Path, grid: Grid, command: str, keep=None) -> int:
    """Write the run's result rows with their provenance to :data:`SEED_FILE`, beside the rows of
    ``keep`` (shipped rows of other datasets, kept with their own provenance); returns the rows.

    Only datasets whose every task has finished are written (a run stopped early ships the
    datasets it completed, never part of one).
    """
    import pandas as pd

    # the read snapshot: a run still in progress holds the database itself
    with Reader(db) as reader:
        rows = reader.query("SELECT * FROM results WHERE run_id = ? ORDER BY dataset, encoder, model, "
                            "scoring, fold", [grid.run_id])
        datasets = reader.query("SELECT * FROM datasets WHERE dataset IN "
                                "(SELECT DISTINCT dataset FROM results WHERE run_id = ?)", [grid.run_id])
        config = reader.query("SELECT config FROM runs WHERE run_id = ?", [grid.run_id])["config"].iloc[0]
    per_dataset = len(grid.scorings) * grid.n_folds * sum(
        len([m for m in grid.models if applies_to(e, m)]) for e in grid.encoders)
    finished = rows[rows["status"] == "ok"].groupby("dataset")["status"].count()
    complete = sorted(finished[finished == per_dataset].index)
    left = sorted(set(rows["dataset"]) - set(complete))
    if left:
        logging.warning("left out %d dataset(s) with unfinished or failed tasks: %s", len(left),
                        ", ".join(left))
    rows = rows[rows["dataset"].isin(complete)].copy()
    for key, value in provenance(command).items():
        rows[key] = value
    rows["grid"] = config
    rows = rows.drop(columns=["finished_at"], errors="ignore")
    datasets = datasets[datasets["dataset"].isin(complete)].drop(columns=["added_at"], errors="ignore")
    datasets_file = SEED_FILE.with_name("encbench_beyond_datasets.parquet")
    if keep is not None and len(keep):
        keep = keep[~keep["dataset"].isin(complete)]
        rows = pd.concat([keep, rows[[c for c in keep.columns if c in rows.columns]]], ignore_index=True)
        if datasets_file.exists():
            shipped = pd.read_parquet(datasets_file)
            shipped = shipped[shipped["dataset"].isin(set(keep["dataset"]))]
            datasets = pd.concat([shipped, datasets[shipped.columns]], ignore_index=True)
    rows = rows.sort_values(["dataset", "encoder", "model", "scoring", "fold"], ignore_index=True)
    SEED_FILE.parent.mkdir(parents=True, exist_ok=True)
    rows.to_parquet(SEED_FILE, index=False)
    datasets.sort_values("dataset").to_parquet(datasets_file, index=False)
    return len(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-rows", type=int, default=1000)
    parser.add_argument("--db", type=Path, default=Path("/tmp/encbench_beyond.duckdb"))
    parser.add_argument("--fresh", action="store_true",
                        help="compute every dataset again instead of adding to the shipped results")
    parser.add_argument("--redo", default="",
                        help="comma-separated dataset ids to compute again (their loading changed)")
    parser.add_argument("--export-only", action="store_true", help="write the seed file from --db")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    keep = None if args.fresh else shipped_rows()
    redo = {d.strip() for d in args.redo.split(",") if d.strip()}
    if redo and args.fresh:
        parser.error("--redo names datasets to compute again beside the shipped ones; --fresh computes all")
    if keep is not None and redo:
        unknown = sorted(redo - set(keep["dataset"]))
        if unknown:
            parser.error(f"--redo: not shipped: {', '.join(unknown)} (shipped: "
                         f"{', '.join(sorted(set(keep['dataset'])))})")
        keep = keep[~keep["dataset"].isin(redo)]
    shipped = frozenset() if keep is None else frozenset(keep["dataset"])
    if all(e.key in shipped for e in bundled_entries() if e.rows <= args.max_rows):
        print(f"every bundled dataset of at most {args.max_rows:,} rows is shipped already")
        return 0
    grid = grid_for(args.max_rows, shipped)
    command = "python benchmarks/run_beyond.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    print(f"{len(grid.datasets)} datasets x {len(grid.encoders)} encoders x {len(grid.models)} models "
          f"x {len(grid.scorings)} metrics; run {grid.run_id}"
          + ("" if keep is None else f"; keeping {keep['dataset'].nunique()} shipped datasets"))
    start = time.perf_counter()
    if not args.export_only:
        run_grid(grid, db_path=args.db, workers=args.workers)
    n = export(args.db, grid, command, keep)
    print(f"{n} result rows -> {SEED_FILE} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
