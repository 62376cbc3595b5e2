"""Run queue: atomic requests, ordering, cancellation, recovery of a dead worker's request, lock."""
from __future__ import annotations

import fcntl
import json
import time
from pathlib import Path

import pytest

from encbench.engine.queue import RunQueue, queue_dir, upload_dir
from encbench.engine.worker import serve
from encbench.store import Writer, queries

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def queue(tmp_path):
    return RunQueue(tmp_path / "q.duckdb")


def test_layout_is_beside_the_database(tmp_path):
    assert queue_dir(tmp_path / "x.duckdb") == tmp_path / "queue"
    assert upload_dir(tmp_path / "x.duckdb") == tmp_path / "uploads"


def test_requests_are_atomic_and_claimed_oldest_first(queue):
    a = queue.submit("run", {"run_id": "a"})
    b = queue.submit("run", {"run_id": "b"})
    assert [r.run_id for r in queue.pending()] == ["a", "b"]
    assert not list(queue.root.rglob(".tmp-*"))               # no half-written file left behind
    assert json.loads(a.path.read_text())["payload"] == {"run_id": "a"}
    first = queue.claim_next()
    assert first.run_id == "a" and first.path.parent.name == "active"
    # a dead worker's active request is picked up again before anything pending
    assert queue.claim_next().run_id == "a"
    queue.complete(first, outcome="done")
    assert queue.claim_next().run_id == "b"
    assert [r.run_id for r in queue.done()] == ["a"]
    assert b.request_id != a.request_id


def test_unknown_kind_is_named(queue):
    with pytest.raises(ValueError, match="'launch'"):
        queue.submit("launch", {})


def test_cancel_drops_pending_and_flags_running(queue):
    queue.submit("run", {"run_id": "a"})
    queue.cancel("a")
    assert queue.pending() == []
    assert queue.is_cancelled("a")
    assert json.loads(queue.done()[0].path.read_text())["outcome"] == "cancelled"
    queue.submit("run", {"run_id": "a"})                     # re-queueing resumes
    assert not queue.is_cancelled("a")


def test_corrupt_request_is_moved_aside(queue):
    (queue.root / "pending" / "0000-bad.json").write_text("{not json")
    queue.submit("run", {"run_id": "ok"})
    assert queue.claim_next().run_id == "ok"
    assert (queue.root / "done" / "0000-bad.json.invalid").exists()


def test_only_one_worker_holds_the_lock(queue):
    assert not queue.worker_running()
    with open(queue.lock_path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert queue.worker_running()
        assert serve(queue.db_path, idle_exit=0) == 0        # exits at once, leaves the queue alone
    assert not queue.worker_running()


def test_worker_deletes_a_run_and_its_orphan_upload(tmp_path):
    db = tmp_path / "w.duckdb"
    uploads = upload_dir(db)
    uploads.mkdir()
    (uploads / "abc123.csv").write_text("a,b\n")
    with Writer(db) as w:
        w.upsert_dataset({"dataset": "file:abc123", "name": "mine", "source": "upload", "sha256": "abc123"})
        w.ensure_run("r1", origin="local")
        w.write_results([dict(run_id="r1", dataset="file:abc123", encoder="OH", model="DT", tuning="no",
                              scoring="AUC", fold=0, n_folds=1, cv_score=0.5, time=0.1, status="ok")])
    queue = RunQueue(db)
    queue.submit("delete", {"run_id": "r1"})
    assert serve(db, idle_exit=0, poll=0.01) == 0
    with Writer(db, publish=False) as w:
        assert w.run_status("r1") is None
        assert len(queries.list_datasets(w)) == 0
    assert not (uploads / "abc123.csv").exists()
    assert json.loads(queue.done()[0].path.read_text())["outcome"] == "done"


def test_ensure_worker_starts_a_detached_process_that_drains_and_exits(tmp_path):
    db = tmp_path / "d.duckdb"
    with Writer(db) as w:
        w.ensure_run("r1", origin="local")
    queue = RunQueue(db)
    queue.submit("delete", {"run_id": "r1"})
    assert queue.ensure_worker(idle_exit=0.5)
    deadline = time.time() + 60
    while (queue.pending() or queue.active()) and time.time() < deadline:
        time.sleep(0.1)
    assert queue.done() and not queue.pending() and not queue.active()
    while queue.worker_running() and time.time() < deadline:  # then it exits when idle
        time.sleep(0.1)
    assert not queue.worker_running()
    assert "deleted run r1" in queue.log_path.read_text()
