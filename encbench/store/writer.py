"""The single writer of the results store.

Only one process may hold the database read-write (docs/ARCHITECTURE.md, Results database). Everything that changes
the database goes through :class:`Writer`; each call commits its own transaction, so a killed
process loses at most the call in flight.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
from collections.abc import Iterable, Mapping
from pathlib import Path

import duckdb
import pandas as pd

from encbench.experiment import DEFAULTS as KEY_DEFAULTS
from encbench.experiment import RESULT_KEY
from encbench.tasks import TASKS
from encbench.store.db import (
    PRIVATE_FILE, DatabaseDamaged, StoreWriteFailed, apply_migrations, damaged_message, default_db_path,
    is_damage, is_write_failure, make_private_dirs, publish_snapshot, remove_stale_snapshot_tmp,
    verify_database, write_failed_message,
)

log = logging.getLogger(__name__)

#: columns of a result row: the run, the result key (:data:`encbench.experiment.RESULT_KEY`)
#: and what was measured
RESULT_COLUMNS = (
    "run_id", *RESULT_KEY, "n_folds", "cv_score", "time", "status", "error", "encode_time",
)
DATASET_COLUMNS = (
    "dataset", "name", "source", "openml_id", "n_rows", "n_features", "n_categorical",
    "target", "positive_class", "sha256", "task",
)
RUN_STATUSES = ("queued", "running", "done", "failed", "cancelled")

# SQL built once from the column constants above (names only; values are always bound).
_UPSERT_DATASET_SQL = (
    f"INSERT INTO datasets ({', '.join(DATASET_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in DATASET_COLUMNS)}) ON CONFLICT (dataset) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in DATASET_COLUMNS[1:])
)
_KEY_SQL = ", ".join(("run_id", *RESULT_KEY))  # the primary key's columns
_DROP_UNFINISHED_SQL = (
    f"DELETE FROM results WHERE status <> 'ok' AND ({_KEY_SQL}) IN "
    f"(SELECT ({_KEY_SQL}) FROM incoming_results)"
)
_INSERT_RESULTS_SQL = (
    f"INSERT OR IGNORE INTO results ({', '.join(RESULT_COLUMNS)}) "
    f"SELECT {', '.join(RESULT_COLUMNS)} FROM incoming_results"
)
_FINISHED_KEYS_SQL = f"SELECT {', '.join(RESULT_KEY)} FROM results WHERE run_id = ? AND status = 'ok'"


class DatabaseBusy(ValueError):
    """Another process holds the database read-write (DuckDB allows one writer per file)."""


class Writer:
    """Read-write handle on the results database; use as a context manager.

    Parameters
    ----------
    path
        Database file (default: :func:`default_db_path`) or ``":memory:"``.
    publish
        Publish a read snapshot when the writer closes (ignored for ``":memory:"``).

    Raises
    ------
    DatabaseBusy
        Another process writes the database.
    encbench.store.db.DatabaseDamaged
        The file is truncated, its header damaged or DuckDB cannot read it (what to do is in
        the message); nothing is changed.
    encbench.store.db.StoreWriteFailed
        A write failed (a full disk, a file size limit), here or in a later call; what was
        committed before is kept. A database this call was creating is removed again.
    """

    def __init__(self, path: Path | str | None = None, *, publish: bool = True):
        self.path = Path(path) if path is not None and str(path) != ":memory:" else path
        if self.path is None:
            self.path = default_db_path()
        self._publish_on_close = publish and str(self.path) != ":memory:"
        self.con = None
        self._fd = None
        on_disk = str(self.path) != ":memory:"
        created = self._created = on_disk and not Path(self.path).exists()
        if on_disk:
            make_private_dirs(Path(self.path).parent)
            if not created:  # refuse a damaged file before DuckDB reads it (or replays a log onto
                # it), blocks included: every command that writes stops here with what to do, and
                # a damaged file never reaches a snapshot (publish_snapshot checks its copy too)
                verify_database(self.path, read=True)
        try:
            self.con = duckdb.connect(str(self.path))
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower():
                self._abort(created)
                raise self._translated(exc, "opening it") or exc from None
            raise DatabaseBusy(
                f"the database {str(self.path)!r} is in use by another writer (a run, or the app's "
                f"queue worker); wait for it to finish or use another database: {exc}") from None
        except duckdb.Error as exc:
            self._abort(created)
            raise self._translated(exc, "opening it") or exc from None
        try:
            if created:  # DuckDB creates it with the umask's mode: owner-only before any row
                os.chmod(self.path, PRIVATE_FILE)
            # Held open until close(): the snapshot copy reads through it (see publish_snapshot).
            self._fd = os.open(self.path, os.O_RDONLY) if on_disk else None
            if self._fd is not None:
                remove_stale_snapshot_tmp(self.path)  # we hold the write lock: no publish in flight
            apply_migrations(self.con)
        except BaseException as exc:
            self._abort(created)
            if isinstance(exc, (duckdb.Error, OSError)):
                translated = self._translated(exc, "creating its tables" if created else "migrating it")
                if translated is not None:
                    raise translated from exc
            raise

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> Writer:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
            return
        if isinstance(exc, (StoreWriteFailed, DatabaseDamaged)):
            # no snapshot of a disk that cannot take one; a database this writer was creating
            # holds nothing but what it wrote, and goes
            self._abort(self._created)
            if self._created:
                log.warning("removed the database %s this writer was creating", self.path)
            return
        try:  # the error in flight is the one to report; a failing publish after it is logged
            self.close()
        except Exception as closing:  # noqa: BLE001 - logged, the original error propagates
            log.warning("closing the database %s after %s failed too: %s", self.path, exc_type.__name__, closing)

    def close(self) -> None:
        if self.con is None:
            return
        try:
            if self._publish_on_close:
                self.publish()
        finally:
            self.discard()

    def discard(self) -> None:
        """Close without publishing a snapshot (e.g. after a failure that invalidated the
        connection); what was committed stays in the database."""
        if self.con is not None:
            con, self.con = self.con, None
            try:
                con.close()
            except duckdb.Error as exc:  # an invalidated database may fail its last checkpoint
                log.warning("closing the database %s: %s", self.path, exc)
        if self._fd is not None:
            os.close(self._fd)  # only now: closing it releases this process's file locks
            self._fd = None

    def _abort(self, created: bool) -> None:
        """Release what a failed ``__init__`` opened; remove the files it was creating."""
        self.discard()
        if created:
            for leftover in (Path(self.path), Path(f"{self.path}.wal")):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()

    def _translated(self, exc: BaseException, doing: str) -> Exception | None:
        """A full disk or a damaged file as :class:`StoreWriteFailed` / :class:`DatabaseDamaged`
        with what to do; None for other errors."""
        if is_write_failure(exc):
            return StoreWriteFailed(write_failed_message(self.path, exc, doing))
        if is_damage(exc):
            first = str(exc).strip().splitlines()[0]
            return DatabaseDamaged(damaged_message(self.path, f"cannot be read (DuckDB: {first})"))
        return None

    def publish(self) -> Path | None:
        """Publish the read snapshot now (no-op for an in-memory database)."""
        if str(self.path) == ":memory:":
            return None
        return publish_snapshot(self.con, self.path, self._fd)

    def _exec(self, sql: str, params: list | None = None) -> list:
        # DuckDB 2 refuses new work while a result is unread, so DML results are always drained.
        try:
            return self.con.execute(sql, params or []).fetchall()
        except duckdb.Error as exc:
            translated = self._translated(exc, "writing it")
            if translated is None:
                raise
            raise translated from exc

    def query(self, sql: str, params: list | tuple | None = None) -> pd.DataFrame:
        """Run a read query on the live database (the writer's own view, no snapshot)."""
        return self.con.execute(sql, list(params or [])).df()

    def _transaction(self):
        return _Transaction(self.con, self._translated)

    # -- datasets ----------------------------------------------------------------------------
    def upsert_dataset(self, record: Mapping) -> None:
        """Insert or update one ``datasets`` row (keys of :data:`DATASET_COLUMNS`).

        A published dataset's row (``source = 'openml'``) stays published: a local run on a copy
        of it (stored under its OpenML id, source ``upload`` or ``bundled``) keeps the row's
        source, name and OpenML id, and only fills columns the row does not have yet (rows,
        features, target, ...). The hash of an uploaded copy is not recorded there: the copy is
        another file of the same data, and a bundled/OpenML file must still match the key's hash.
        """
        self.upsert_datasets([record])

    def upsert_datasets(self, records: Iterable[Mapping]) -> None:
        """:meth:`upsert_dataset` for each record, in one transaction (one commit for all)."""
        records = list(records)
        for record in records:
            missing = [c for c in ("dataset", "name", "source") if record.get(c) is None]
            if missing:
                raise ValueError(f"dataset record lacks {missing!r}: got {dict(record)!r}")
        with self._transaction():
            for record in records:
                self._upsert_dataset_row(record)

    def _upsert_dataset_row(self, record: Mapping) -> None:
        values = {c: record.get(c) for c in DATASET_COLUMNS}
        if values["task"] is None:  # a record from before task types: the study's binary task
            values["task"] = KEY_DEFAULTS["task"]
        old = self.con.execute(
            f"SELECT {', '.join(DATASET_COLUMNS)} FROM datasets WHERE dataset = ?",
            [values["dataset"]]).fetchall()
        if old and old[0][DATASET_COLUMNS.index("source")] == "openml":
            kept, incoming = dict(zip(DATASET_COLUMNS, old[0])), values["source"]
            for column in DATASET_COLUMNS:
                if column in ("source", "name", "openml_id") or kept[column] is not None:
                    values[column] = kept[column]
                elif column == "sha256" and incoming == "upload":
                    values[column] = None
        self._exec(_UPSERT_DATASET_SQL, [values[c] for c in DATASET_COLUMNS])

    # -- runs --------------------------------------------------------------------------------
    def ensure_run(self, run_id: str, *, origin: str, config: Mapping | None = None,
                   label: str | None = None, n_expected: int | None = None,
                   status: str = "queued", owner: str | None = None) -> bool:
        """Create the run if it does not exist; return True when it was created.

        ``owner`` is the token of the app session that launched the run (None from the command
        line); it is recorded at creation only, so resuming a run never changes who owns it.
        """
        if status not in RUN_STATUSES:
            raise ValueError(f"run status must be one of {RUN_STATUSES}: got {status!r}")
        exists = self._exec("SELECT 1 FROM runs WHERE run_id = ?", [run_id])
        if exists:
            if n_expected is not None:
                with self._transaction():
                    self._exec("UPDATE runs SET n_expected = ? WHERE run_id = ?", [n_expected, run_id])
            return False
        with self._transaction():
            self._exec(
                "INSERT INTO runs (run_id, status, origin, config, label, n_expected, owner) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [run_id, status, origin, json.dumps(dict(config or {}), sort_keys=True), label, n_expected,
                 owner],
            )
        return True

    def set_run_status(self, run_id: str, status: str, *, error: str | None = None) -> None:
        """Move a run to ``status``; terminal states stamp ``finished_at``."""
        if status not in RUN_STATUSES:
            raise ValueError(f"run status must be one of {RUN_STATUSES}: got {status!r}")
        finished = status in ("done", "failed", "cancelled")
        with self._transaction():
            self._exec(
                "UPDATE runs SET status = ?, error = ?, "
                "finished_at = CASE WHEN ? THEN current_timestamp ELSE NULL END WHERE run_id = ?",
                [status, error, finished, run_id],
            )
            if status == "running":  # this process runs it: say who, for liveness checks
                self._exec(
                    "UPDATE runs SET runner_host = ?, runner_pid = ?, heartbeat_at = current_timestamp "
                    "WHERE run_id = ?", [socket.gethostname(), os.getpid(), run_id])

    def heartbeat(self, run_id: str) -> None:
        """Record that the process running ``run_id`` is alive (the runner calls it regularly)."""
        with self._transaction():
            self._exec("UPDATE runs SET heartbeat_at = current_timestamp WHERE run_id = ?", [run_id])

    def run_status(self, run_id: str) -> str | None:
        rows = self._exec("SELECT status FROM runs WHERE run_id = ?", [run_id])
        return rows[0][0] if rows else None

    def run_owner(self, run_id: str) -> str | None:
        """The token of the app session that launched ``run_id`` (None: the command line's)."""
        rows = self._exec("SELECT owner FROM runs WHERE run_id = ?", [run_id])
        return rows[0][0] if rows else None

    def delete_run(self, run_id: str) -> int:
        """Delete a run and its results; return the number of result rows removed."""
        with self._transaction():
            n = self._exec("SELECT count(*) FROM results WHERE run_id = ?", [run_id])[0][0]
            self._exec("DELETE FROM results WHERE run_id = ?", [run_id])
            self._exec("DELETE FROM runs WHERE run_id = ?", [run_id])
        return int(n)

    def delete_orphan_uploads(self) -> list[dict]:
        """Delete uploaded datasets no result refers to any more; return their records."""
        with self._transaction():
            orphans = self.query(
                "SELECT dataset, name, sha256 FROM datasets WHERE source = 'upload' "
                "AND dataset NOT IN (SELECT DISTINCT dataset FROM results)"
            )
            self._exec(
                "DELETE FROM datasets WHERE source = 'upload' "
                "AND dataset NOT IN (SELECT DISTINCT dataset FROM results)"
            )
        return orphans.to_dict("records")

    # -- results -----------------------------------------------------------------------------
    def write_results(self, rows: Iterable[Mapping] | pd.DataFrame) -> int:
        """Write result rows in one transaction; return how many rows were written.

        A row whose key already holds an ``ok`` result is ignored (a resumed run never duplicates
        or overwrites a finished experiment); a previous ``failed``/``timeout`` row is replaced,
        so a resumed run retries failures.
        """
        frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
        if frame.empty:
            return 0
        for column in RESULT_COLUMNS:
            if column not in frame.columns:
                if column in ("error", "cv_score", "time", "encode_time"):
                    frame[column] = None
                elif column in KEY_DEFAULTS:
                    frame[column] = KEY_DEFAULTS[column]
                else:
                    raise ValueError(f"result rows lack column {column!r}")
        frame = frame.loc[:, list(RESULT_COLUMNS)]
        for column, default in KEY_DEFAULTS.items():
            frame[column] = frame[column].where(frame[column].notna(), default)
        # distinct values first: a set of every row's value iterates the rows in Python
        bad = set(frame["status"].unique()) - {"ok", "failed", "timeout"}
        if bad:
            raise ValueError(f"result status must be ok, failed or timeout: got {sorted(bad)!r}")
        bad = set(frame["split"].unique()) - {"cv", "time"}
        if bad:
            raise ValueError(f"result split must be cv or time: got {sorted(map(str, bad))!r}")
        bad = set(frame["task"].unique()) - set(TASKS)
        if bad:
            raise ValueError(f"result task must be one of {', '.join(TASKS)}: got "
                             f"{sorted(map(str, bad))!r}")
        with self._transaction():
            self.con.register("incoming_results", frame)
            try:
                # Replace only rows that did not succeed before; keep existing ok rows.
                self._exec(_DROP_UNFINISHED_SQL)
                before = self._exec("SELECT count(*) FROM results")[0][0]
                self._exec(_INSERT_RESULTS_SQL)
                after = self._exec("SELECT count(*) FROM results")[0][0]
            finally:
                self.con.unregister("incoming_results")
        return int(after - before)

    def finished_keys(self, run_id: str) -> set[tuple]:
        """Result keys (:data:`~encbench.experiment.RESULT_KEY`) with an ok result in the run."""
        rows = self._exec(_FINISHED_KEYS_SQL, [run_id])
        return {tuple(r) for r in rows}


class _Transaction:
    """``BEGIN``/``COMMIT`` around a block, ``ROLLBACK`` if it raises."""

    def __init__(self, con: duckdb.DuckDBPyConnection, translate=None):
        self.con = con
        self.translate = translate or (lambda exc, doing: None)

    def __enter__(self):
        self.con.execute("BEGIN TRANSACTION").fetchall()
        return self.con

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self.con.execute("COMMIT").fetchall()
            except duckdb.Error as failed:
                translated = self.translate(failed, "committing to it")
                if translated is None:
                    raise
                raise translated from failed
            return False
        try:
            self.con.execute("ROLLBACK").fetchall()
        except duckdb.Error as rollback:  # e.g. a fatal error invalidated the database: report the first
            log.warning("rollback after %s failed: %s", exc_type.__name__, rollback)
        return False
