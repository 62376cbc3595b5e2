"""Run a grid into the results store: resume, single writer, snapshots, progress, cancellation.

The calling process is the only writer (docs/ARCHITECTURE.md, Results database). Tasks run elsewhere (an
executor); each finished task's rows are committed in their own transaction, so a killed runner
loses at most the tasks in flight, and a read snapshot is published every few seconds and at
the end so that readers (the app) see progress.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence

import pandas as pd

from encbench.data import DatasetError
from encbench.engine.budget import check_plan, parse_budget, task_memory_limit
from encbench.engine.dask_executor import DaskExecutor, WorkersLost
from encbench.engine.executors import InlineExecutor
from encbench.engine.grid import PROTOCOL_VERSION, Grid, Plan, plan
from encbench.engine.local_pool import LocalExecutor
from encbench.engine.protocol import Payload, unfinished_rows
from encbench.store import Writer, queries
from encbench.store.db import DatabaseDamaged, StoreWriteFailed

log = logging.getLogger(__name__)

#: seconds between read snapshots published during a run.
PUBLISH_EVERY = 5.0

ProgressCallback = Callable[[int, int, dict], None]


class RunIncomplete(ValueError):
    """The run ended with tasks that never finished (e.g. lost with their Dask workers).

    Their rows are recorded as failed and the run as ``failed`` with the same message; re-running
    the grid resumes them.
    """


def run_config(grid: Grid, grid_plan: Plan) -> dict:
    """What ``runs.config`` records: the grid, and each dataset's key and file hash."""
    config = grid.to_dict()
    config["run_id"] = grid.run_id
    config["protocol"] = PROTOCOL_VERSION
    config["resolved_datasets"] = {
        spec: {"key": ds.key, "name": ds.name, "sha256": ds.sha256}
        for spec, ds in grid_plan.datasets.items()
    }
    return config


def check_datasets(writer: Writer, grid_plan: Plan, run_id: str) -> None:
    """Refuse datasets whose file changed under a key the database already knows.

    A key's results must all come from the same data: if the file behind a registered key (or
    behind a dataset reference of a run being resumed) now hashes differently, or the key is
    registered with another target or positive class, the run stops before writing anything.

    Raises
    ------
    encbench.data.DatasetError
        Listing every such dataset, with both hashes and what to do.
    """
    registered = queries.list_datasets(writer).set_index("dataset")
    problems = []
    for spec, ds in grid_plan.datasets.items():
        if ds.key not in registered.index:
            continue
        row = registered.loc[ds.key]
        old = row["sha256"]
        # A user's file recognised as a copy of a published dataset (encbench.data.fingerprint) is
        # stored under the OpenML id beside the bundled/OpenML file of the same data: the same
        # dataset in another file, so its hash differs by design. A resumed run still refuses a
        # changed file (the per-run check below), and two bundled/OpenML files still must agree.
        copy = ((ds.source == "upload" and ds.openml_id is not None)
                or (row["source"] == "upload" and not _missing(row["openml_id"])))
        if not copy and isinstance(old, str) and old and old != ds.sha256:
            problems.append(
                f"dataset {ds.key!r} ({spec}) has changed: its file now has sha256 {ds.sha256[:16]}..., "
                f"the database registered {old[:16]}... for this key, so its results came from other data. "
                f"Restore the original file, or delete the runs using it and its dataset row before "
                f"re-running")
        for column, value in (("target", ds.target), ("positive_class", ds.positive_class)):
            old_value = row[column]
            if isinstance(old_value, str) and old_value and str(old_value) != str(value):
                problems.append(
                    f"dataset {ds.key!r} ({spec}) is registered with {column} {old_value!r}: got {value!r}; "
                    f"the same data with another {column} is another task, use a copy of the file")
        old_task = row["task"] if "task" in row.index else None
        if isinstance(old_task, str) and old_task != ds.task:
            problems.append(
                f"dataset {ds.key!r} ({spec}) is registered as a {old_task} task: got {ds.task!r}; a "
                f"dataset has one task type, so its results are never pooled with another's: run "
                f"--task {old_task}, or use a copy of the file for the {ds.task} task")
    runs = queries.list_runs(writer)
    mine = runs[runs["run_id"] == run_id]
    if len(mine) and isinstance(mine["config"].iloc[0], str):
        recorded = json.loads(mine["config"].iloc[0]).get("resolved_datasets", {})
        for spec, ds in grid_plan.datasets.items():
            before = recorded.get(spec)
            if before and (before.get("key"), before.get("sha256")) != (ds.key, ds.sha256):
                problems.append(
                    f"dataset {spec!r} changed since run {run_id} started: sha256 "
                    f"{str(before.get('sha256'))[:16]}... then, {ds.sha256[:16]}... now; resuming would mix "
                    f"two versions of the data. Restore the file, or delete the old run with "
                    f"`python -m encbench runs --delete {run_id}` and run again")
    if problems:
        raise DatasetError(problems, headline=f"{len(problems)} dataset problems" if len(problems) > 1 else None)


def _missing(value) -> bool:
    """A NULL of a DuckDB query result (None, NaN or pandas.NA)."""
    import pandas as pd

    return bool(pd.isna(value))


def _task_status(rows: list[dict]) -> str:
    statuses = {r["status"] for r in rows}
    if statuses == {"ok"}:
        return "ok"
    if "timeout" in statuses:
        return "timeout"
    return "failed" if statuses == {"failed"} else "partial"


def _first_error(rows: list[dict]) -> str | None:
    return next((r["error"] for r in rows if r.get("error")), None)


def _log_progress(done: int, total: int, info: dict) -> None:
    """Default progress report: one log line per task."""
    if "task" not in info:
        if info.get("skipped"):
            log.info("run %s: %d of %d tasks already finished, skipped", info["run_id"], info["skipped"], total)
        return
    eta = info.get("eta")
    eta_text = f", eta {format_duration(eta)}" if eta is not None else ""
    error = f": {info['error']}" if info.get("error") and info["status"] != "ok" else ""
    log.info("[%d/%d] %s %s in %.1f s%s%s", done, total, info["task"], info["status"], info["seconds"],
             eta_text, error)


def format_duration(seconds: float | None) -> str:
    """A short human duration: ``"45 s"``, ``"3 min 20 s"``, ``"2 h 05 min"``; ``""`` if unknown.

    The one formatter of durations: the runner's log lines and the app's run tables.
    """
    if seconds is None or pd.isna(seconds):
        return ""
    seconds = int(round(float(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


ON_OVERSIZE = ("refuse", "skip")


def guard_memory(grid_plan: Plan, memory_budget=None, *, workers: int = 1,
                 on_oversize: str = "refuse") -> dict[tuple[str, str], str]:
    """Check every (dataset, encoder) of a plan against the memory budget, before any work.

    Returns ``{(dataset key, encoder): reason}`` of those to skip (``on_oversize='skip'``);
    with ``'refuse'`` (the default) raises instead, so nothing is written.

    Raises
    ------
    ValueError
        Listing each encoder, dataset, column and its number of levels, with the estimate, the
        budget and what to do.
    """
    if on_oversize not in ON_OVERSIZE:
        raise ValueError(f"on_oversize must be one of {', '.join(ON_OVERSIZE)}: got {on_oversize!r}")
    budget = parse_budget(memory_budget, concurrent=max(1, workers))
    found = check_plan(grid_plan, budget)
    if not found:
        return {}
    if on_oversize == "skip":
        return {(item.dataset, item.encoder): f"skipped by the memory guard: {item.reason}" for item in found}
    reasons = "\n".join(f"- {item.reason}" for item in found)
    names = ",".join(dict.fromkeys(item.encoder for item in found))
    raise ValueError(
        f"{len(found)} encoder/dataset pair(s) would exceed the memory budget; nothing was run:\n"
        f"{reasons}\nLeave these encoders out (--encoders without {names}), drop the column "
        f"(--drop-columns), raise the budget (--memory-budget, e.g. 80%), or skip them with a "
        f"recorded reason (--skip-oversized)")


def make_executor(workers: int = 1, scheduler=None, *, extra_modules: Sequence[str] = (),
                  memory_limit: int | None = None):
    """The executor for ``workers`` (0 = in-process) or a Dask ``scheduler`` (whose workers must
    import ``extra_modules``, the modules of custom encoders, as well as encbench).

    ``memory_limit``: bytes of address space of each task process, locally and on the cluster's
    workers (:func:`encbench.engine.budget.task_memory_limit`); the in-process executor, for
    debugging, runs without one.
    """
    if scheduler is not None:
        return DaskExecutor(scheduler, extra_modules=extra_modules, memory_limit=memory_limit)
    if workers == 0:
        return InlineExecutor()
    return LocalExecutor(workers, memory_limit=memory_limit)


def run_grid(grid: Grid, db_path=None, workers: int = 1, scheduler=None,
             progress: ProgressCallback | None = None, should_stop: Callable[[], bool] | None = None,
             *, publish_every: float = PUBLISH_EVERY, memory_budget=None,
             on_oversize: str = "refuse", prepared: Plan | None = None, owner: str | None = None) -> str:
    """Run (or resume) a grid and write every result into the results store.

    Parameters
    ----------
    grid : Grid
    db_path : path, optional
        Results database (default: ``$ENCBENCH_DB`` or ``db/encbench.duckdb``). This process
        becomes its single writer for the duration of the run.
    workers : int
        Local task processes (default 1). ``0`` runs tasks in this process (no timeout; for
        debugging). Ignored with ``scheduler``.
    scheduler : str or distributed.Client, optional
        Run the tasks on a Dask cluster (``"tcp://host:8786"``) instead.
    progress : callable, optional
        ``progress(done_tasks, total_tasks, info)`` after each task (``info``: ``task``,
        ``dataset``, ``encoder``, ``fold``, ``status`` (ok, failed, partial, timeout),
        ``seconds``, ``error``, ``eta`` seconds, ``elapsed``, ``rows_ok``, ``rows_failed``,
        ``rows_timeout``, ``skipped``, ``run_id``); called once before the first task with
        ``done_tasks`` = the tasks already finished by an earlier attempt. Default: one log line
        per task.
    should_stop : callable, optional
        Checked between tasks (and about every half second while waiting); when it returns True
        the tasks in flight are abandoned, the run is marked ``cancelled`` and the results
        already written are kept.
    publish_every : float
        Seconds between read snapshots during the run (one is always published at the end).
    memory_budget : int or str, optional
        Memory one task may use (bytes, ``"4GB"`` or a share of the machine ``"50%"``, split
        between ``workers``); default ``$ENCBENCH_MEMORY_BUDGET`` or half the machine's memory.
        Checked before anything runs (see :mod:`encbench.engine.budget`), and each task process
        (local or on Dask workers) runs under a hard address-space limit derived from it
        (:func:`~encbench.engine.budget.task_memory_limit`): a task that outgrows it fails "over
        the memory budget".
    on_oversize : {'refuse', 'skip'}
        What to do with an encoder whose task would exceed the budget on a dataset: refuse the
        run (ValueError, nothing written), or record its results as failed with the reason.
    prepared : Plan, optional
        ``plan(grid)`` if the caller computed it already (not loaded twice).
    owner : str, optional
        The app session that launched the run (its token, from the run request); recorded when
        the run is created, it alone may delete the run from the app. None: the command line.

    Returns
    -------
    str
        The run id (``grid.run_id``).

    Raises
    ------
    encbench.data.DatasetError, ValueError
        Before anything is written, if a dataset cannot be used or has changed.
    RunIncomplete
        After the run, if some tasks were lost with their Dask workers (the run is then marked
        ``failed`` with the reason; re-running resumes them).

    Notes
    -----
    Re-running the same grid resumes it: tasks whose rows are all ``ok`` are skipped, a task
    with failed or timed-out rows is run again (for the models that lack a result), and the
    primary key of ``results`` guarantees that nothing is duplicated.
    """
    grid_plan = prepared if prepared is not None else plan(grid, memory_budget=memory_budget)
    if grid_plan.grid != grid:
        raise ValueError(f"the prepared plan is for another grid: got run {grid_plan.grid.run_id}, "
                         f"expected {grid.run_id}")
    concurrent = 1 if scheduler is not None else max(1, workers)
    skip = guard_memory(grid_plan, memory_budget, workers=concurrent, on_oversize=on_oversize)
    report = progress or _log_progress
    # a cluster's workers must import the custom encoders' modules too (checked before any task)
    custom_modules = [spec["import"].split(":", 1)[0] for spec in grid.custom_encoders.values()]
    # the estimate decides before the run; the hard limit holds each task process to the budget
    memory_limit = task_memory_limit(parse_budget(memory_budget, concurrent=concurrent))
    executor = make_executor(workers, scheduler, extra_modules=custom_modules, memory_limit=memory_limit)
    executor.start()  # e.g. an unreachable scheduler fails here, before anything is written
    try:
        return _run(grid_plan, executor, open_writer(db_path), report, should_stop, publish_every,
                    skip, owner)
    finally:
        executor.close()


def open_writer(db_path) -> Writer:
    """The single writer of ``db_path``; :class:`~encbench.store.writer.DatabaseBusy` (a
    ValueError naming the file) if another process holds it."""
    return Writer(db_path)


def _run(grid_plan: Plan, executor, writer: Writer, report, should_stop, publish_every: float,
         skip: dict | None = None, owner: str | None = None) -> str:
    grid = grid_plan.grid
    run_id = grid.run_id
    with writer:
        check_datasets(writer, grid_plan, run_id)
        for ds in grid_plan.datasets.values():
            writer.upsert_dataset(ds.as_record())
        writer.ensure_run(run_id, origin="local", config=run_config(grid, grid_plan), label=grid.label,
                          n_expected=grid_plan.n_expected, status="running", owner=owner)
        writer.set_run_status(run_id, "running")
        try:
            _run_tasks(grid_plan, executor, writer, report, should_stop, publish_every, skip)
        except RunIncomplete:
            raise
        except BaseException as exc:
            recorded = _record_stop(writer, run_id, exc)
            if isinstance(exc, (StoreWriteFailed, DatabaseDamaged)):
                note = ("the run is marked failed" if recorded else
                        "the run could not be marked failed (it shows as interrupted once this process ends)")
                raise type(exc)(f"run {run_id} stopped: {exc}; {note}") from exc
            raise
    return run_id


def _record_stop(writer: Writer, run_id: str, exc: BaseException) -> bool:
    """Mark a run that stopped on ``exc`` as cancelled (Ctrl-C) or failed, with the reason, so it
    is never left ``running``; True when recorded.

    A fatal DuckDB error (e.g. a checkpoint that found the disk full) invalidates the writer's
    connection; the mark is then written through a new one, which replays what was committed.
    """
    status, reason = (("cancelled", "interrupted") if isinstance(exc, KeyboardInterrupt)
                      else ("failed", f"{type(exc).__name__}: {exc}"))
    try:
        writer.set_run_status(run_id, status, error=reason)
        return True
    except Exception as first:  # noqa: BLE001 - tried again below, then logged
        log.warning("run %s: could not record that it %s (%s); trying a new connection", run_id, status, first)
    if str(writer.path) == ":memory:":
        return False
    writer.discard()
    try:
        with Writer(writer.path, publish=False) as again:
            again.set_run_status(run_id, status, error=reason)
        return True
    except Exception as second:  # noqa: BLE001 - the run's own error is what the caller reports
        log.error("run %s: could not record that it %s (%s); it shows as interrupted once this "
                  "process ends", run_id, status, second)
        return False


def _run_tasks(grid_plan: Plan, executor, writer: Writer, report, should_stop, publish_every: float,
               skip: dict | None) -> None:
    """The body of :func:`_run` once the run is marked running: the tasks, then its final status."""
    grid = grid_plan.grid
    run_id = grid.run_id
    todo = grid_plan.pending(writer.finished_keys(run_id))
    total = len(grid_plan.tasks)
    skipped = total - len(todo)
    if skip:  # over the memory budget: recorded as failed with the reason, never run
        guarded = [t for t in todo if (t.dataset, t.encoder) in skip]
        for task in guarded:
            writer.write_results([dict(row, run_id=run_id, split=grid.split_kind) for row in unfinished_rows(
                task, "failed", skip[(task.dataset, task.encoder)])])
        todo = [t for t in todo if (t.dataset, t.encoder) not in skip]
        skipped += len(guarded)
    writer.publish()
    log.info("run %s: %d tasks to run (%d finished before) on %s executor", run_id, len(todo),
             skipped, executor.name)
    report(skipped, total, {"run_id": run_id, "skipped": skipped, "todo": len(todo)})

    payloads = {ds.key: Payload.from_dataset(ds) for ds in grid_plan.datasets.values()}
    names = {ds.key: ds.name for ds in grid_plan.datasets.values()}
    stream = executor.run(todo, payloads, grid.timeout)
    started = time.monotonic()
    last_publish = started
    done = 0
    lost = 0
    cancelled = False
    try:
        for outcome in stream:
            if outcome is not None:
                rows = [dict(row, run_id=run_id, split=grid.split_kind) for row in outcome.rows]
                writer.write_results(rows)
                done += 1
                lost += bool(getattr(outcome, "lost", False))
                elapsed = time.monotonic() - started
                remaining = len(todo) - done
                counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "failed", "timeout")}
                task = outcome.task
                report(skipped + done, total, {
                    "run_id": run_id, "task": task.name, "dataset": task.dataset,
                    "dataset_name": names.get(task.dataset), "encoder": task.encoder,
                    "fold": task.fold, "status": _task_status(rows), "seconds": outcome.seconds,
                    "error": _first_error(rows), "elapsed": elapsed,
                    "eta": elapsed / done * remaining if remaining else 0.0,
                    "rows_ok": counts["ok"], "rows_failed": counts["failed"],
                    "rows_timeout": counts["timeout"], "skipped": skipped, "where": outcome.where,
                })
            if should_stop is not None and should_stop():
                cancelled = True
                log.info("run %s: stop requested after %d tasks", run_id, done)
                break
            if time.monotonic() - last_publish >= publish_every:
                writer.heartbeat(run_id)
                writer.publish()
                last_publish = time.monotonic()
    except WorkersLost as exc:  # what was committed stays; the same command resumes the rest
        message = f"run {run_id} is incomplete: {exc}"
        writer.set_run_status(run_id, "failed", error=message)
        log.error("%s", message)
        raise RunIncomplete(message) from None
    finally:
        stream.close()
    if lost and not cancelled:
        message = (f"run {run_id} is incomplete: {lost} of {len(todo)} tasks were lost with their "
                   f"Dask workers (their rows are recorded as failed); check the workers, then re-run "
                   f"the same command to resume them")
        writer.set_run_status(run_id, "failed", error=message)
        log.error("%s", message)
        raise RunIncomplete(message)
    writer.set_run_status(run_id, "cancelled" if cancelled else "done")
    log.info("run %s %s: %d tasks run, %d skipped", run_id, "cancelled" if cancelled else "done",
             done, skipped)
