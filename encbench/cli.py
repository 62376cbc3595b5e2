"""Command line: ``python -m encbench <command>``.

Commands
--------
db init             create the database (migrations) and import the published results if absent
db import-published import (or re-import, idempotently) the published results
db info             what the database holds
run ...             run a grid of experiments (see ``python -m encbench run --help``)
runs                list runs with status and counts
worker              drain the app's run queue (started by the app; one at a time)
encoders            list the study's 32 encoders and the installed encoder plugins
compare RUN_ID      where a run's custom encoder ranks among the published 32
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import duckdb

from encbench import __version__
from encbench.store import (
    PUBLISHED_RUN_ID, Reader, SnapshotMissing, Writer, default_db_path, import_published, queries,
)
from encbench.store.db import migration_files

log = logging.getLogger("encbench")


def _db_path(args) -> Path:
    return Path(args.db) if getattr(args, "db", None) else default_db_path()


def _snapshot_up_to_date(db_path: Path) -> bool:
    """True when the read snapshot has every migration and the finished published import."""
    try:
        with Reader(db_path) as reader:
            runs = reader.query("SELECT status FROM runs WHERE run_id = ?", [PUBLISHED_RUN_ID])
            version = reader.query("SELECT max(version) AS v FROM schema_migrations")["v"].iloc[0]
    except (SnapshotMissing, duckdb.Error):
        return False
    latest = max(v for v, _ in migration_files())
    return len(runs) == 1 and runs["status"].iloc[0] == "done" and version == latest


def cmd_db_init(args) -> int:
    db_path = _db_path(args)
    if not args.force and db_path.exists() and _snapshot_up_to_date(db_path):
        # Nothing to do, and no need for the write lock (a queue worker may hold it).
        print(f"{db_path}: up to date (published results present)")
        return 0
    with Writer(db_path) as writer:
        has_published = writer.run_status(PUBLISHED_RUN_ID) == "done"
        if has_published and not args.force:
            print(f"{writer.path}: up to date (published results present)")
        else:
            n = import_published(writer)
            print(f"{writer.path}: imported {n} published result rows")
    return 0


def cmd_db_import_published(args) -> int:
    with Writer(_db_path(args)) as writer:
        n = import_published(writer)
        print(f"{writer.path}: {n} new published result rows")
    return 0


def cmd_db_info(args) -> int:
    db_path = _db_path(args)
    if not db_path.exists():
        raise ValueError(f"no database at {str(db_path)!r}: build it with `python -m encbench db init` "
                         "(or check --db / ENCBENCH_DB)")
    try:  # read the snapshot: works while a run or the queue worker holds the database
        source = Reader(db_path)
    except SnapshotMissing:
        source = Writer(db_path)  # an old database without snapshot: publish one on close
    with source:
        info = queries.summary(source)
        print(f"database: {db_path}")
        print("  " + ", ".join(f"{k}: {v}" for k, v in info.items()))
        for column in ("tuning", "model"):
            table = queries.counts_by(source, column)
            print(f"\nscores per origin and {column}:")
            print(table.to_string(index=False))
        runs = queries.list_runs(source)
        print("\nruns:")
        cols = ["run_id", "origin", "status", "n_ok", "n_failed", "n_timeout", "n_expected"]
        print(runs[cols].to_string(index=False) if len(runs) else "  (none)")
        datasets = queries.list_datasets(source)
        print(f"\ndatasets: {len(datasets)} ({', '.join(datasets['name'].head(8))}{', ...' if len(datasets) > 8 else ''})")
        encoders = source.query("SELECT DISTINCT encoder FROM scores ORDER BY encoder")["encoder"]
        print(f"encoders: {len(encoders)} ({', '.join(encoders)})")
    return 0


def cmd_worker(args) -> int:
    from encbench.engine.worker import serve

    return serve(_db_path(args), idle_exit=args.idle_exit)


def cmd_encoders(args) -> int:
    from encbench.custom import ENTRY_POINT_GROUP, plugins
    from encbench.encoders import REGISTRY

    print(f"the study's {len(REGISTRY)} encoders:")
    for spec in REGISTRY.values():
        print(f"  {spec.name:<11} {spec.family:<18} {spec.description}")
    found = plugins()
    print(f"\nplugins (entry points in group {ENTRY_POINT_GROUP!r}): {len(found) or 'none installed'}")
    for plugin in found:
        package = f"{plugin.package} {plugin.version}" if plugin.package else "?"
        print(f"  {plugin.name:<11} {plugin.target}  ({package})")
    print("\nany other encoder: --encoders module:attr or NAME=module:attr (python -m encbench run --help)")
    return 0


def cmd_compare(args) -> int:
    from encbench import placement

    db_path = _db_path(args)
    if not db_path.exists():
        raise ValueError(f"no database at {str(db_path)!r} (check --db / ENCBENCH_DB)")
    strategies = [s.strip() for s in args.strategies.split(",")] if args.strategies else None
    with Reader(db_path) as reader:
        result = placement.place(reader, args.run_id, strategies=strategies, alpha=args.alpha)
    return placement.print_report(result, out=args.out, alpha=args.alpha)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m encbench", description="Benchmark categorical encoders.")
    parser.add_argument("--version", action="version", version=f"encbench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    db = sub.add_parser("db", help="manage the results database")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    for name, func, text in (
        ("init", cmd_db_init, "create the database and import the published results if absent"),
        ("import-published", cmd_db_import_published, "import the published results (idempotent)"),
        ("info", cmd_db_info, "print what the database holds"),
    ):
        p = db_sub.add_parser(name, help=text)
        p.add_argument("--db", help="database file (default: $ENCBENCH_DB, else db/encbench.duckdb in a checkout or encbench.duckdb in the per-user data directory)")
        if name == "init":
            p.add_argument("--force", action="store_true", help="re-run the import even if present")
        p.set_defaults(func=func)

    worker = sub.add_parser("worker", help="drain the app's run queue (one worker per database)")
    worker.add_argument("--db", help="database file (default: $ENCBENCH_DB, else db/encbench.duckdb in a checkout or encbench.duckdb in the per-user data directory)")
    worker.add_argument("--idle-exit", type=float, default=300.0,
                        help="exit after the queue has been empty this many seconds (default 300)")
    worker.set_defaults(func=cmd_worker)

    encoders = sub.add_parser("encoders", help="list the study's encoders and installed encoder plugins")
    encoders.set_defaults(func=cmd_encoders)

    compare = sub.add_parser(
        "compare", help="rank a run's custom encoder among the published 32",
        description="Merge the custom encoder's scores of a run with the published scores of the same "
                    "datasets, models, metrics and tuning (published scores count for the 32; the "
                    "run's control encoders are only checked against them), then rank it under every "
                    "aggregation strategy, per model and metric and pooled, and test it against the "
                    "best published encoder (Wilcoxon signed-rank over datasets).")
    compare.add_argument("run_id", metavar="RUN_ID", help="a run made with a custom encoder")
    compare.add_argument("--db", help="database file (default: $ENCBENCH_DB, else db/encbench.duckdb in a checkout or encbench.duckdb in the per-user data directory)")
    compare.add_argument("--strategies", help="comma-separated aggregation strategies (default: all)")
    compare.add_argument("--alpha", type=float, default=0.05, help="significance level of R-Nem and the CD diagram")
    compare.add_argument("--out", metavar="DIR",
                         help="write the rank table, Wilcoxon tests and control cells (CSV, LaTeX) and the "
                              "pooled CD diagram (SVG) there, each with its provenance")
    compare.set_defaults(func=cmd_compare)

    try:  # the engine adds its commands (run, runs) when it is installed
        from encbench.engine.cli import add_commands
    except ImportError as exc:
        if "encbench.engine" not in str(exc):
            raise
    else:
        add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
