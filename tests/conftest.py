"""Shared fixtures: a published-results database and a small database of every origin and task,
each built once per session; in-memory writers."""
from __future__ import annotations

import os
import shutil

import pytest

# One OpenMP and one BLAS thread per test process, as in task processes (their _child_env): the
# suite runs one process per core (pytest-xdist), where more threads spin-wait for a busy core
# (test_models' HGB tuning took 32 s of CPU for 4 s of work). Set before numpy, scikit-learn or
# LightGBM start their thread pools; the subprocesses the tests start inherit it.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from encbench.store import Reader, Writer, import_published, snapshot_path  # noqa: E402


@pytest.fixture(scope="session")
def published_db(tmp_path_factory):
    """Path of a database file holding the published results, with its read snapshot published."""
    path = tmp_path_factory.mktemp("published") / "encbench.duckdb"
    with Writer(path) as writer:
        import_published(writer)
    return path


@pytest.fixture(scope="session")
def small_db(tmp_path_factory):
    """Path of a small database (a few datasets of every origin and task: the published results,
    encbench's own shipped runs, one local run; see tests/small_db.py), its snapshot published.

    For tests of what a page wires (widgets, links, messages, exports) rather than of the
    published numbers: its pages compute in a fraction of the full database's time."""
    from small_db import build_small_db

    return build_small_db(tmp_path_factory.mktemp("small") / "encbench.duckdb")


@pytest.fixture(scope="session")
def small_published_db(tmp_path_factory):
    """The small database's published results only (no encbench or local run), for tests that
    write runs of their own into a copy (``small_db.copy_db``)."""
    from small_db import build_small_db

    return build_small_db(tmp_path_factory.mktemp("small_published") / "encbench.duckdb",
                          shipped=False, local=False)


@pytest.fixture()
def small_private_db(small_published_db, tmp_path, monkeypatch):
    """A writable copy of the small database's published results in ``tmp_path/db/``, as
    :func:`private_db` is of the full published database (``ENCBENCH_DB`` points at it; workers
    exit after 1 s without requests)."""
    from small_db import copy_db

    path = copy_db(small_published_db, tmp_path / "db" / "encbench.duckdb")
    monkeypatch.setenv("ENCBENCH_DB", str(path))
    monkeypatch.setenv("ENCBENCH_WORKER_IDLE_EXIT", "1")
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


@pytest.fixture()
def private_db(published_db, tmp_path, monkeypatch):
    """A writable copy of the published database (and its snapshot) in ``tmp_path/db/``.

    ``ENCBENCH_DB`` points at it, so the app, the queue and workers started from the test use it;
    workers started by the app exit after 1 s without requests.
    """
    path = tmp_path / "db" / "encbench.duckdb"
    path.parent.mkdir()
    shutil.copyfile(published_db, path)
    shutil.copyfile(snapshot_path(published_db), snapshot_path(path))
    monkeypatch.setenv("ENCBENCH_DB", str(path))
    monkeypatch.setenv("ENCBENCH_WORKER_IDLE_EXIT", "1")
    return path


@pytest.fixture(scope="session")
def published_server(published_db, tmp_path_factory):
    """One ``streamlit run serve.py`` on the published test database for the browser tests that
    only read it (a server start costs seconds on two cores); tests that need a fresh server or a
    private database start their own."""
    from browsertest import streamlit_server

    with streamlit_server(published_db, tmp_path_factory.mktemp("published_server"),
                          ENCBENCH_WORKER_IDLE_EXIT="0") as url:
        yield url


@pytest.fixture()
def umask_022():
    """The usual umask, under which a file is created world-readable unless asked otherwise."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture(autouse=True)
def keep_umask():
    """A command run in this process (`main(["run", ...])`, `main(["db", "init", ...])`) makes
    what it creates from then on owner-only (cli.private_files): the umask is put back after
    every test, so no later test of the same worker inherits it."""
    old = os.umask(0o022)
    os.umask(old)
    yield
    os.umask(old)


def file_mode(path) -> int:
    """The permission bits of ``path`` (0o600 for owner-only)."""
    return os.stat(path).st_mode & 0o777
