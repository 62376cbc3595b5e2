"""DuckDB results store: paths, migrations, the single writer and snapshot readers.

DuckDB lets one process hold a file read-write and then refuses every other process, readers
included (docs/ARCHITECTURE.md, Results database). So the engine process is the only writer; after committing it
publishes a read snapshot (CHECKPOINT, copy to a temp file, ``os.replace``) that readers open
read-only. A reader therefore never meets the writer's lock.
"""
from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import struct
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb

from encbench import resources

log = logging.getLogger(__name__)

MIGRATIONS_DIR = resources.resource_dir("migrations")
_MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


class DatabaseDamaged(ValueError):
    """A database (or snapshot) file is truncated, has a damaged header or cannot be read."""


class StoreWriteFailed(ValueError):
    """The store could not write a file (a full disk, a file size limit, a read-only disk)."""


#: Modes of what the store and the queue create: the database, its snapshot, the queue's
#: requests and the uploads hold users' data, so they are for their owner only. Files and
#: folders that exist already keep their modes (a user may have shared a database on purpose).
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def make_private_dirs(path: Path | str) -> None:
    """Create the folder ``path`` and its missing parents, each one it creates owner-only
    (:data:`PRIVATE_DIR`; the umask can only take bits away); existing folders are left as they are."""
    path = Path(path)
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process: not ours
            folder.mkdir(mode=PRIVATE_DIR)


def open_private(path: Path | str, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """A descriptor of ``path`` opened with ``flags``, the file created owner-only
    (:data:`PRIVATE_FILE`) if it does not exist; an existing file keeps its mode."""
    return os.open(path, flags | os.O_CREAT, PRIVATE_FILE)


#: DuckDB's file layout: a main header and two alternating database headers of this size each,
#: then the blocks; each header starts with the checksum of the rest of it.
_HEADER_SIZE = 4096
_MAGIC = b"DUCK"


def _header_checksum(block: bytes) -> int:
    """DuckDB's checksum of a header's last 4088 bytes (XOR of each 8-byte word times a constant,
    seeded with 5381)."""
    total = 5381
    for (word,) in struct.iter_unpack("<Q", block[8:_HEADER_SIZE]):
        total ^= (word * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    return total


def database_problem(path: Path | str) -> str | None:
    """What is wrong with a DuckDB file, read from its headers without opening it; None if nothing.

    Checks that the file holds the three headers, that the main header carries DuckDB's
    signature, that every header's checksum matches, and that the file is as long as the newest
    database header's block count says (a truncated copy or a half-written disk is shorter).
    Damage inside the blocks is found by DuckDB's own block checksums when they are read.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(3 * _HEADER_SIZE)
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if size < 3 * _HEADER_SIZE:
        return (f"is truncated: it holds {size:,} bytes, less than DuckDB's {3 * _HEADER_SIZE:,} bytes "
                f"of headers")
    if head[8:12] != _MAGIC:
        return "is not a DuckDB database: its header is damaged (no DuckDB signature at byte 8)"
    headers = []
    for index in range(3):
        block = head[index * _HEADER_SIZE:(index + 1) * _HEADER_SIZE]
        if struct.unpack_from("<Q", block)[0] != _header_checksum(block):
            where = "main header" if index == 0 else f"database header {index}"
            return (f"has a damaged header: the checksum of its {where} (bytes "
                    f"{index * _HEADER_SIZE:,}-{(index + 1) * _HEADER_SIZE - 1:,}) does not match")
        headers.append(block)
    # database header: checksum, iteration, meta block, free list, block count, block size, ...
    iteration, block_count, block_size = max(
        (struct.unpack_from("<Q", b, 8)[0], *struct.unpack_from("<QQ", b, 32)) for b in headers[1:])
    expected = 3 * _HEADER_SIZE + block_count * block_size
    # DuckDB may cut free blocks off the end of the file, never part of a block: a file ending
    # inside a block was cut short (a copy or a write that stopped)
    if 0 < block_size and size < expected and (size - 3 * _HEADER_SIZE) % block_size:
        return (f"is truncated: it holds {size:,} bytes, its header describes {block_count:,} blocks of "
                f"{block_size:,} bytes ({expected:,} bytes)")
    return None


#: one full read of each table of the store (hash(row) reads every column), by table name
_READ_CHECKS = {
    "schema_migrations": "SELECT count(*), max(hash(t)) FROM checked.main.schema_migrations AS t",
    "datasets": "SELECT count(*), max(hash(t)) FROM checked.main.datasets AS t",
    "runs": "SELECT count(*), max(hash(t)) FROM checked.main.runs AS t",
    "results": "SELECT count(*), max(hash(t)) FROM checked.main.results AS t",
}


#: what DuckDB says when another process (a lock) or this one (an attached file) holds a file
_IN_USE = re.compile(r"lock|already attached", re.IGNORECASE)


def read_problem(path: Path | str) -> str | None:
    """Read every table of a DuckDB file (read-only, through a private instance); what DuckDB
    says if a block is missing or damaged, None if all reads (or the file is held by a writer,
    another process or this one, whose own reads would say so)."""
    con = duckdb.connect(":memory:")
    try:
        try:
            con.execute("ATTACH ? AS checked (READ_ONLY)", [str(path)]).fetchall()
        except duckdb.Error as exc:
            if _IN_USE.search(str(exc)):
                return None
            raise
        tables = {row[0] for row in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'checked'").fetchall()}
        for table, sql in _READ_CHECKS.items():  # the store's tables only (an allowlist)
            if table in tables:
                con.execute(sql).fetchall()
    except duckdb.Error as exc:
        return f"cannot be read (DuckDB: {str(exc).strip().splitlines()[0]})"
    finally:
        con.close()
    return None


#: what DuckDB says when a file it reads is damaged
_DAMAGE_WORDS = ("not a valid duckdb database", "corrupt", "could not read enough bytes", "checksum",
                 "failed to read", "serialization")
#: errno values of a disk that cannot take more data
_FULL_ERRNOS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS}
_FULL_WORDS = ("no space left", "file too large", "disk quota", "read-only file system",
               "could not write", "failed to create checkpoint", "could not truncate")


def is_write_failure(exc: BaseException) -> bool:
    """True for an error of a disk that cannot take more data (full, size limit, read-only)."""
    if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
        return True
    text = str(exc).lower()
    return isinstance(exc, (duckdb.Error, OSError)) and any(w in text for w in _FULL_WORDS)


def is_damage(exc: BaseException) -> bool:
    """True for a DuckDB error saying a file it read is damaged."""
    text = str(exc).lower()
    return isinstance(exc, duckdb.Error) and any(w in text for w in _DAMAGE_WORDS)


def file_problem(path: Path | str) -> str | None:
    """What is wrong with a DuckDB file: its headers (:func:`database_problem`), then every table
    read (:func:`read_problem`); None if it is sound."""
    return database_problem(path) or read_problem(path)


def _healthy_snapshot(db_path: Path) -> Path | None:
    """The read snapshot of ``db_path`` if it is sound, headers and every block read (a snapshot
    whose headers are sound may have been copied from a database already damaged inside)."""
    snapshot = snapshot_path(db_path)
    return snapshot if snapshot.exists() and file_problem(snapshot) is None else None


def damaged_message(db_path: Path | str, problem: str) -> str:
    """What is wrong with a damaged database and what to do: copy its sound read snapshot over it
    (what was published last), else restore a backup or rebuild the published results."""
    db_path = Path(db_path)
    snapshot = _healthy_snapshot(db_path)
    wal = db_path.with_name(db_path.name + ".wal")
    aside = f"mv {db_path} {db_path}.damaged"
    if wal.exists():  # its log belongs to the damaged file: never replay it onto another
        aside += f" && mv {wal} {wal}.damaged"
    if snapshot is not None:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(snapshot.stat().st_mtime))
        what = (f"its read snapshot {str(snapshot)!r} is sound and holds the database as last published "
                f"({when}): stop the app's worker and any run using it, then `{aside} && cp {snapshot} "
                f"{db_path}`; results committed after that publication are lost")
    else:
        what = (f"restore it from a backup, or move it aside (`{aside}`) and rebuild the published "
                f"results with `python -m encbench db init --db {db_path}` (local runs are then lost)")
    return f"the database {str(db_path)!r} {problem}, so it cannot be used; nothing was changed. To recover: {what}"


def verify_database(db_path: Path | str, *, read: bool = False) -> None:
    """Raise :class:`DatabaseDamaged` (with what to do) if ``db_path`` exists and is damaged.

    The headers are always checked (:func:`database_problem`); ``read=True`` also reads every
    table (:func:`read_problem`, about 0.1 s for the published results), which finds blocks
    missing from a file cut at a block boundary or damaged inside.
    """
    db_path = Path(db_path)
    if not db_path.exists():
        return
    problem = database_problem(db_path)
    if problem is None and read:
        problem = read_problem(db_path)
    if problem is not None:
        raise DatabaseDamaged(damaged_message(db_path, problem))


def write_failed_message(path: Path | str, exc: BaseException, doing: str) -> str:
    """What a failed write means and what to do (free space, then the same command)."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        reason = exc.strerror
    return (f"could not write {str(path)!r} while {doing} ({reason}): the disk is full, or a file size "
            f"limit or a read-only disk stops it. What was committed before is kept; free space "
            f"(df -h {Path(path).parent}) and run the same command again")


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
    created = str(path) != ":memory:" and not read_only and not Path(path).exists()
    if created:
        make_private_dirs(Path(path).parent)
    con = duckdb.connect(str(path), read_only=read_only)
    if created:  # DuckDB creates it with the umask's mode: owner-only before anything is written
        os.chmod(path, PRIVATE_FILE)
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
    try:
        con.execute("CHECKPOINT").fetchall()
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except (duckdb.Error, OSError) as exc:
        if is_write_failure(exc):
            raise StoreWriteFailed(write_failed_message(db_path, exc, "publishing the read snapshot")) from exc
        raise
    try:
        try:
            _copy_from_fd(source_fd, fd)
            # as readable as the database (mkstemp creates 0600): a database shared on purpose
            # with readers running as another user shares its snapshot, a private one does not
            os.fchmod(fd, os.fstat(source_fd).st_mode & 0o777)
        finally:
            os.close(fd)
        # the snapshot is the copy to recover from: a copy of a database damaged on disk (blocks
        # the writer never read) never replaces it (about 0.02 s for the published results)
        problem = file_problem(tmp_name)
        if problem is not None:
            raise DatabaseDamaged(damaged_message(db_path, problem.replace(tmp_name, str(db_path))))
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError) and is_write_failure(exc):
            raise StoreWriteFailed(write_failed_message(target, exc, "publishing the read snapshot")) from exc
        raise
    return target
