"""The DuckDB results store: migrations, the single writer, snapshot readers and queries.

>>> from encbench.store import Writer, Reader, queries
>>> with Writer("db/encbench.duckdb") as w:        # the only read-write process
...     import_published(w)                         # publishes a read snapshot on close
>>> r = Reader("db/encbench.duckdb")                # opens db/encbench.read.duckdb read-only
>>> queries.load_scores(r, models=["LogReg"])
"""
from encbench.store import queries
from encbench.store.db import apply_migrations, connect, default_db_path, publish_snapshot, snapshot_path
from encbench.store.importer import ENCBENCH_RUN_ID, PUBLISHED_RUN_ID, import_encbench, import_published
from encbench.store.reader import Reader, SnapshotDamaged, SnapshotMissing
from encbench.store.writer import DatabaseBusy, Writer

__all__ = [
    "DatabaseBusy", "ENCBENCH_RUN_ID", "PUBLISHED_RUN_ID", "Reader", "SnapshotDamaged", "SnapshotMissing", "Writer",
    "apply_migrations", "connect", "default_db_path", "import_encbench", "import_published",
    "publish_snapshot", "queries", "snapshot_path",
]
