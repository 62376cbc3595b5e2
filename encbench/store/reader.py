"""Read-only access to the results store through its published snapshot.

Readers never open the writer's file (DuckDB would refuse them while the writer holds it); they
open the snapshot read-only and reopen it when the writer publishes a new one. A snapshot that
cannot be read (truncated, damaged) is rebuilt from the database when the database is sound and
free (:func:`rebuild_snapshot`), or awaited from its writer; otherwise :class:`SnapshotDamaged`
says what is wrong and what to do.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import duckdb
import pandas as pd

from encbench.store.db import database_problem, damaged_message, default_db_path, is_damage, snapshot_path
from encbench.store.writer import DatabaseBusy, Writer

log = logging.getLogger(__name__)


def _open_snapshot(path: Path) -> duckdb.DuckDBPyConnection:
    """Open ``path`` read-only through a private in-memory instance.

    ``duckdb.connect(path)`` would reuse a database instance this process already holds for the
    same path, i.e. the *previous* snapshot whose file was replaced; ATTACH into a fresh in-memory
    instance always reads the file now at ``path``.
    """
    con = duckdb.connect(":memory:")
    con.execute("ATTACH ? AS snap (READ_ONLY)", [str(path)]).fetchall()
    con.execute("USE snap").fetchall()
    return con


class SnapshotMissing(FileNotFoundError):
    """No read snapshot has been published yet."""


class SnapshotDamaged(SnapshotMissing):
    """The read snapshot cannot be read and could not be rebuilt from the database (a kind of
    missing snapshot: whoever handles no snapshot handles this one too)."""


#: seconds to wait for the process writing the database to publish a sound snapshot (a run
#: publishes every few seconds, :data:`encbench.engine.runner.PUBLISH_EVERY`).
REBUILD_WAIT = 8.0
_REBUILD_LOCK = threading.Lock()  # one rebuild at a time in a process (the app's sessions)


def rebuild_snapshot(db_path: Path | str, *, wait: float | None = None) -> str | None:
    """Publish a fresh read snapshot of ``db_path``; None when done, else why it could not.

    A sound database nobody writes is opened as its writer for a moment (closing it publishes);
    while another process writes it, that process's next snapshot is awaited up to ``wait``
    seconds (default :data:`REBUILD_WAIT`). A damaged database is not touched.
    """
    wait = REBUILD_WAIT if wait is None else wait
    db_path = Path(db_path)
    snapshot = snapshot_path(db_path)
    problem = database_problem(db_path)
    if problem is not None:
        return damaged_message(db_path, problem)
    with _REBUILD_LOCK:
        before = _stamp_or_none(snapshot)
        try:
            with Writer(db_path):
                pass
        except DatabaseBusy:
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                stamp = _stamp_or_none(snapshot)
                if stamp is not None and stamp != before and database_problem(snapshot) is None:
                    return None
                time.sleep(0.25)
            return (f"another process (a run, or the app's queue worker) writes the database and has not "
                    f"published a new snapshot within {wait:g} s: reload in a moment")
        except (ValueError, OSError, duckdb.Error) as exc:
            return str(exc)
    log.warning("rebuilt the read snapshot %s from %s", snapshot, db_path)
    return None


def _stamp_or_none(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _open_checked(path: Path) -> duckdb.DuckDBPyConnection:
    """:func:`_open_snapshot`, after checking the file's headers and reading its catalog;
    ``_Unreadable`` with the reason if it cannot be used."""
    problem = database_problem(path)
    if problem is not None:
        raise _Unreadable(problem)
    try:
        con = _open_snapshot(path)
    except duckdb.Error as exc:
        raise _Unreadable(f"cannot be opened (DuckDB: {str(exc).strip().splitlines()[0]})") from None
    try:
        con.execute("SELECT count(*) FROM runs").fetchall()
    except duckdb.Error as exc:
        con.close()
        raise _Unreadable(f"cannot be read (DuckDB: {str(exc).strip().splitlines()[0]})") from None
    return con


class _Unreadable(Exception):
    """A snapshot file that cannot be used; the message says why."""


class Reader:
    """A read-only connection to the newest snapshot of a results database.

    Thread-safe: each query runs on its own cursor of the shared connection (threads of one
    process may share a DuckDB connection this way). :meth:`refresh` reopens the connection when
    a newer snapshot has been published; :meth:`query` calls it first.

    Parameters
    ----------
    db_path
        The writer's database file; the snapshot beside it is what is opened.
    snapshot
        Open this file directly instead (e.g. a test fixture).
    """

    def __init__(self, db_path: Path | str | None = None, *, snapshot: Path | str | None = None):
        self.db_path = Path(db_path) if db_path is not None else default_db_path()
        self.snapshot = Path(snapshot) if snapshot is not None else snapshot_path(self.db_path)
        self._lock = threading.Lock()
        self._con: duckdb.DuckDBPyConnection | None = None
        self._stamp: tuple | None = None
        self.refresh()

    def _current_stamp(self) -> tuple:
        try:
            st = os.stat(self.snapshot)
        except FileNotFoundError:
            raise SnapshotMissing(
                f"no read snapshot at {str(self.snapshot)!r}: build the database first "
                "(`python -m encbench db init`, which `make run` does)"
            ) from None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def refresh(self) -> bool:
        """Reopen if a new snapshot was published; return True when it reopened.

        Raises
        ------
        SnapshotMissing
            No snapshot was published yet.
        SnapshotDamaged
            The snapshot cannot be read and could not be rebuilt (the message says why and what
            to do).
        """
        stamp = self._current_stamp()
        with self._lock:
            if self._con is not None and stamp == self._stamp:
                return False
        try:
            con = _open_checked(self.snapshot)
        except _Unreadable as problem:
            con = self._rebuilt(str(problem))
            stamp = self._current_stamp()
        with self._lock:
            old, self._con, self._stamp = self._con, con, stamp
        if old is not None:
            old.close()
        return True

    def _rebuilt(self, problem: str) -> duckdb.DuckDBPyConnection:
        """A connection to a snapshot rebuilt from the database, replacing one that ``problem``s."""
        log.warning("the read snapshot %s %s; rebuilding it from %s", self.snapshot, problem, self.db_path)
        own = self.snapshot == snapshot_path(self.db_path) and self.db_path.exists()
        why = (rebuild_snapshot(self.db_path) if own
               else f"it is not the snapshot of a database here ({str(self.db_path)!r})")
        if why is None:
            try:
                return _open_checked(self.snapshot)
            except _Unreadable as again:
                why = f"the rebuilt snapshot {again}"
        raise SnapshotDamaged(
            f"the read snapshot {str(self.snapshot)!r} {problem}, and it could not be rebuilt from the "
            f"database: {why}")

    @property
    def version(self) -> tuple:
        """Identifies the snapshot in use (changes whenever a new one is opened); for cache keys."""
        return self._stamp

    def query(self, sql: str, params: list | tuple | None = None) -> pd.DataFrame:
        """Run a read query with bound parameters on the newest snapshot; return a DataFrame.

        A snapshot found damaged by the query (a block failing DuckDB's checksum) is rebuilt
        once, as in :meth:`refresh`, and the query run again.
        """
        self.refresh()
        try:
            return self._query(sql, params)
        except duckdb.Error as exc:
            if not is_damage(exc):
                raise
            con = self._rebuilt(f"cannot be read (DuckDB: {str(exc).strip().splitlines()[0]})")
            with self._lock:
                old, self._con, self._stamp = self._con, con, self._current_stamp()
            old.close()
            return self._query(sql, params)

    def _query(self, sql: str, params) -> pd.DataFrame:
        with self._lock:
            cursor = self._con.cursor()
        try:
            cursor.execute("USE snap").fetchall()  # a cursor starts in the default catalog
            return cursor.execute(sql, list(params or [])).df()
        finally:
            cursor.close()

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()
