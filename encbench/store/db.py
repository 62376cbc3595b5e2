"""DuckDB results store: paths, migrations, the single writer and snapshot readers.

DuckDB lets one process hold a file read-write and then refuses every other process, readers
included (docs/ARCHITECTURE.md, Results database). So the engine process is the only writer; after committing it
publishes a read snapshot (CHECKPOINT, copy to a temp file, ``os.replace``) that readers open
read-only. A reader therefore never meets the writer's lock.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import duckdb

from encbench import resources

log = logging.getLogger(__name__)

MIGRATIONS_DIR = resources.resource_dir("migrations")
_MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


def default_db_path() -> Path:
    """The results database: ``$ENCBENCH_DB`` if set, else ``db/encbench.duckdb`` in a checkout
    or ``encbench.duckdb`` in the per-user data directory (:mod:`encbench.resources`)."""
    return resources.default_db_path()


def snapshot_path(db_path: Path | str) -> Path:
    """Where the read snapshot of ``db_path`` lives: ``<stem>.read.duckdb`` beside it."""
    db_path = Path(db_path)
    return db_path.with_name(f"{db_path.stem}.read{db_path.suffix or '.duckdb'}")


@contextlib.contextmanager
def connect(path: Path | str, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open a DuckDB connection and close it on exit (``":memory:"`` is allowed)."""
    if str(path) != ":memory:" and not read_only:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), read_only=read_only)
    try:
        yield con
    finally:
        con.close()


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[tuple[int, Path]]:
    """Numbered SQL migrations, in order. Raises on a misnamed or duplicated number."""
    found: dict[int, Path] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if not match:
            raise ValueError(f"migration file name must look like '001_name.sql': got {path.name!r}")
        version = int(match.group(1))
        if version in found:
            raise ValueError(f"two migrations share number {version}: {found[version].name!r}, {path.name!r}")
        found[version] = path
    return sorted(found.items())


def apply_migrations(con: duckdb.DuckDBPyConnection, directory: Path = MIGRATIONS_DIR) -> list[int]:
    """Apply every migration not yet recorded in ``schema_migrations``; return the versions applied.

    Each migration runs in its own transaction together with its bookkeeping row, so a failure
    leaves the database at the previous version.
    """
    con.execute(  # the bookkeeping table itself precedes every migration
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
        " applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    ).fetchall()
    done = {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}
    applied = []
    for version, path in migration_files(directory):
        if version in done:
            continue
        log.info("applying migration %s", path.name)
        con.execute("BEGIN TRANSACTION").fetchall()
        try:
            con.execute(path.read_text()).fetchall()
            con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [version, path.name]).fetchall()
            con.execute("COMMIT").fetchall()
        except Exception:
            con.execute("ROLLBACK").fetchall()
            raise
        applied.append(version)
    return applied


def _copy_from_fd(source_fd: int, destination_fd: int) -> None:
    """Copy a whole file from an open descriptor, by offset (the descriptor's position is unused)."""
    size = os.fstat(source_fd).st_size
    offset = 0
    while offset < size:
        try:
            copied = os.copy_file_range(source_fd, destination_fd, size - offset, offset_src=offset)
        except OSError:  # e.g. a file system without copy_file_range: plain reads and writes
            copied = os.write(destination_fd, os.pread(source_fd, min(1 << 20, size - offset), offset))
        if copied == 0:
            break
        offset += copied


def _snapshot_tmp_pattern(db_path: Path | str) -> str:
    return f".{snapshot_path(db_path).name}.*.tmp"


def remove_stale_snapshot_tmp(db_path: Path | str) -> int:
    """Remove temporary snapshot copies a killed publish left behind; return how many.

    Only the process holding the write lock may call this: it alone publishes, so no copy
    is in flight. Each left-over file is a full copy of the database (megabytes).
    """
    db_path = Path(db_path)
    removed = 0
    for path in db_path.parent.glob(_snapshot_tmp_pattern(db_path)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed += 1
    if removed:
        log.info("removed %d temporary snapshot files left by an interrupted publish", removed)
    return removed


def publish_snapshot(con: duckdb.DuckDBPyConnection, db_path: Path | str, source_fd: int) -> Path:
    """Publish a read-only snapshot of the writer's database file atomically.

    CHECKPOINT folds the WAL into the main file, which is then copied to a temporary file in the
    same directory and renamed over the snapshot. Readers holding the old snapshot keep reading
    their (unlinked) file; new opens see the new one.

    The copy reads through ``source_fd``, a descriptor of ``db_path`` the writer keeps open for
    its whole life: POSIX record locks (DuckDB's lock on the file) belong to the process and are
    all released when the process closes *any* descriptor of the file, so opening and closing the
    database file here (as ``shutil.copyfile`` would) would silently hand the write lock to the
    next process that asks.
    """
    db_path = Path(db_path)
    target = snapshot_path(db_path)
    con.execute("CHECKPOINT").fetchall()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        try:
            _copy_from_fd(source_fd, fd)
            os.fchmod(fd, 0o644)  # mkstemp creates 0600; readers may run as another user
        finally:
            os.close(fd)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return target
