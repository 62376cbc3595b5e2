"""Read-only access to the results store through its published snapshot.

Readers never open the writer's file (DuckDB would refuse them while the writer holds it); they
open the snapshot read-only and reopen it when the writer publishes a new one.
"""
from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import duckdb
import pandas as pd

from encbench.store.db import default_db_path, snapshot_path

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
        """Reopen if a new snapshot was published; return True when it reopened."""
        stamp = self._current_stamp()
        with self._lock:
            if self._con is not None and stamp == self._stamp:
                return False
            con = _open_snapshot(self.snapshot)
            old, self._con, self._stamp = self._con, con, stamp
        if old is not None:
            old.close()
        return True

    @property
    def version(self) -> tuple:
        """Identifies the snapshot in use (changes whenever a new one is opened); for cache keys."""
        return self._stamp

    def query(self, sql: str, params: list | tuple | None = None) -> pd.DataFrame:
        """Run a read query with bound parameters on the newest snapshot; return a DataFrame."""
        self.refresh()
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
