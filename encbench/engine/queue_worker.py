"""The queue worker: the single process that drains the app's run requests into the database.

Started by the app (``RunQueue.ensure_worker``) or by hand with ``python -m encbench worker``.
Only one runs per queue: it holds an exclusive ``flock`` on ``queue/worker.lock`` for its whole
life, which the kernel releases if the process dies, so a killed worker never blocks its
successor. A request interrupted by a kill stays in ``active/`` and is resumed first by the next
worker; since runs resume (finished experiments are skipped, keys are unique), nothing is
duplicated. A request that workers died on :data:`~encbench.engine.queue.MAX_ATTEMPTS` times is
failed instead (its run marked failed with the reason), so it cannot kill every new worker.

A request file is input like any other: before a run request opens a dataset or imports a
custom encoder, the worker checks that it names only what the app may queue (stored uploads and
packaged datasets, :func:`~encbench.engine.queue_requests.dataset_source_problem`; installed
encoder plugins, :func:`~encbench.engine.queue_requests.custom_encoder_problems`).
"""
from __future__ import annotations

import fcntl
import logging
import os
import time
import traceback
from pathlib import Path

from encbench.engine.grid import plan
from encbench.engine.queue import Request, RunQueue, upload_dir
from encbench.engine.queue_requests import RunRequest
from encbench.engine.runner import run_grid
from encbench.store.writer import DatabaseBusy, Writer

log = logging.getLogger(__name__)


#: seconds between attempts to open a busy database: doubling from the first, capped at the last.
BUSY_BACKOFF = (1.0, 30.0)
WAITING_FOR_DATABASE = "waiting for the database"


def _until_database_free(queue: RunQueue, request: Request, attempt, *, run_id: str | None = None,
                         sleep=time.sleep) -> str | None:
    """Call ``attempt()`` until the database is free; never fail a request because it is busy.

    While another process (e.g. a command-line run) holds the database, the request is marked
    "waiting for the database" and retried with exponential backoff. Returns ``attempt()``'s
    value, or "cancelled" if the run is cancelled while waiting.
    """
    first, cap = BUSY_BACKOFF
    tries = 0
    while True:
        try:
            outcome = attempt()
        except DatabaseBusy as exc:
            tries += 1
            delay = min(cap, first * 2 ** (tries - 1))
            if tries == 1:
                log.info("request %s: %s; retrying until it is free", request.request_id, exc)
            request = queue.set_waiting(request, f"{WAITING_FOR_DATABASE}: {exc}", attempt=tries,
                                        retry_in=delay)
            waited = 0.0
            while waited < delay:  # a cancel while waiting ends the wait at once
                if run_id is not None and queue.is_cancelled(run_id):
                    queue.set_waiting(request, None)
                    return "cancelled"
                step = min(0.5, delay - waited)
                sleep(step)
                waited += step
            continue
        if tries:
            queue.set_waiting(request, None)
        return outcome


#: what the worker records on a run request while it works on it (named if the worker dies)
STAGE_PLAN = "loading the datasets and checking custom encoders"
STAGE_RUN = "running its tasks"


def _handle_run(queue: RunQueue, request: Request) -> str:
    if not isinstance(request.payload.get("grid"), dict):
        raise ValueError(f"a run request's payload holds a 'grid' object: got keys "
                         f"{sorted(request.payload)!r} in {request.path.name!r}")
    # a request file names what the worker reads and imports: only what the app may queue,
    # checked before any dataset is opened or any custom encoder's module imported (the app
    # checked it too, but anything that can write the queue can write a request)
    run = RunRequest.from_payload(request.payload).check_encoders().check_sources(queue.db_path)
    grid = run.grid
    if queue.is_cancelled(grid.run_id):
        return "cancelled"
    request = queue.set_stage(request, STAGE_PLAN)
    prepared = plan(grid)
    request = queue.set_stage(request, STAGE_RUN)

    def attempt() -> str:
        run_grid(
            grid,
            db_path=queue.db_path,
            workers=run.workers,
            should_stop=lambda: queue.is_cancelled(grid.run_id),
            memory_budget=run.memory_budget,
            prepared=prepared,
            owner=run.owner,
        )
        return "cancelled" if queue.is_cancelled(grid.run_id) else "done"

    return _until_database_free(queue, request, attempt, run_id=grid.run_id)


def _mark_run_failed(db_path: Path, run_id: str | None, error: str) -> None:
    """Record ``error`` on a run the worker gave up on (left as it is if the database is busy)."""
    if not run_id:
        return
    try:
        with Writer(db_path) as writer:
            if writer.run_status(run_id) not in (None, "done"):
                writer.set_run_status(run_id, "failed", error=error)
    except DatabaseBusy as exc:
        log.warning("run %s: could not record its failure (%s)", run_id, exc)
    except Exception:  # the request is failed already; a broken database must not stop the worker
        log.exception("run %s: could not record its failure", run_id)


def delete_run(db_path: Path | str, run_id: str, *, owner: str | None = None) -> tuple[int, int]:
    """Delete a run's rows, then uploaded datasets (rows and files) no run uses any more.

    Returns ``(result rows removed, uploaded datasets removed)``. Opens the database as its
    writer, so it raises ``DatabaseBusy`` while another process writes.

    ``owner`` is the token of the app session asking: only the run that session launched is
    deleted. None (the command line) may delete any run.

    Raises
    ------
    ValueError
        If the run is unknown, or ``owner`` is given and is not the run's owner (nothing is
        deleted).
    """
    with Writer(db_path) as writer:
        if writer.run_status(run_id) is None:
            raise ValueError(f"unknown run: got {run_id!r}")
        if owner is not None and writer.run_owner(run_id) != owner:
            raise ValueError(f"run {run_id!r} was launched by another app session or from the command "
                             f"line: only that session, or `encbench runs --delete {run_id}`, deletes it")
        removed = writer.delete_run(run_id)
        orphans = writer.delete_orphan_uploads()
    uploads = upload_dir(db_path)
    for record in orphans:
        for path in uploads.glob(f"{record['sha256']}.*") if record.get("sha256") else ():
            path.unlink()
            log.info("deleted uploaded file %s", path)
    log.info("deleted run %s (%d result rows, %d uploaded datasets)", run_id, removed, len(orphans))
    return removed, len(orphans)


def _handle_delete(queue: RunQueue, request: Request) -> str:
    run_id = request.payload["run_id"]
    owner = request.payload.get("owner")
    if not isinstance(owner, str) or not owner:  # queued deletes come from app sessions only
        raise ValueError(f"a delete request names the app session asking (its owner token): got "
                         f"{owner!r} in {request.path.name!r}; delete from the command line with "
                         f"`encbench runs --delete {run_id}`")
    _until_database_free(queue, request, lambda: delete_run(queue.db_path, run_id, owner=owner))
    queue.clear_cancel(run_id)
    return "done"


HANDLERS = {"run": _handle_run, "delete": _handle_delete}


def serve(db_path: Path | str | None = None, *, idle_exit: float = 300.0, poll: float = 0.5) -> int:
    """Drain the queue until it has been empty for ``idle_exit`` seconds; return an exit code.

    Returns 0 at once if another worker holds the lock.
    """
    queue = RunQueue(db_path)
    while _drain(queue, idle_exit, poll):
        # The app starts no worker while this one holds the lock, so a request queued between
        # the last look and the lock's release would wait for a worker that is gone: look again
        # once the lock is released, and drain it (unless a new worker took the lock meanwhile).
        if not queue.pending():
            return 0
        log.info("a request arrived while the worker was exiting; draining again")
    return 0


def _drain(queue: RunQueue, idle_exit: float, poll: float) -> bool:
    """Hold the worker lock and handle requests until the queue has been idle for ``idle_exit``
    seconds (True), or return False at once if another worker holds the lock."""
    with open(queue.lock_path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another worker is already draining %s; exiting", queue.root)
            return False
        lock.seek(0)
        lock.truncate()
        lock.write(str(os.getpid()))
        lock.flush()
        log.info("worker %d draining %s", os.getpid(), queue.root)
        queue.remove_stale_tmp()
        idle_since = time.monotonic()
        while True:
            for failed in queue.fail_abandoned():
                if failed.kind == "run":
                    _mark_run_failed(queue.db_path, failed.run_id, failed.error)
            request = queue.claim_next()
            if request is None:
                if time.monotonic() - idle_since > idle_exit:
                    log.info("queue idle for %.0f s; worker exiting", idle_exit)
                    return True
                time.sleep(poll)
                continue
            log.info("request %s (%s) started, attempt %d", request.request_id, request.kind, request.attempts)
            try:
                outcome = HANDLERS[request.kind](queue, request)
            except Exception as exc:  # noqa: BLE001 - a failed request is recorded, never kills the worker
                log.error("request %s failed: %s", request.request_id, traceback.format_exc())
                queue.complete(request, outcome="failed", error=f"{type(exc).__name__}: {exc}")
            else:
                queue.complete(request, outcome=outcome)
                log.info("request %s %s", request.request_id, outcome)
            idle_since = time.monotonic()
