"""Shared fixtures: a published-results database built once per session, in-memory writers."""
from __future__ import annotations

import pytest

from encbench.store import Reader, Writer, import_published


@pytest.fixture(scope="session")
def published_db(tmp_path_factory):
    """Path of a database file holding the published results, with its read snapshot published."""
    path = tmp_path_factory.mktemp("published") / "encbench.duckdb"
    with Writer(path) as writer:
        import_published(writer)
    return path


@pytest.fixture(scope="session")
def published_reader(published_db):
    reader = Reader(published_db)
    yield reader
    reader.close()


@pytest.fixture()
def mem_writer():
    """A migrated in-memory database (no snapshot)."""
    with Writer(":memory:") as writer:
        yield writer
