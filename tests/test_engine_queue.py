"""Run queue: atomic requests, ordering, cancellation, recovery of a dead worker's request, lock."""
from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

import pytest
from conftest import file_mode

from encbench.engine.queue import RunQueue, queue_dir, upload_dir
from encbench.engine.queue_worker import serve
from encbench.store import Writer, queries

REPO = Path(__file__).resolve().parents[1]
#: the app session that launched the runs these tests delete (requests.new_owner_token's format)
OWNER = "0123456789abcdef" * 2


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


@pytest.mark.parametrize(("content", "reason"), [
    (b"{not json", "not a JSON request (JSONDecodeError"),
    (b"{}", "a request has a 'kind' (run, delete): got keys []"),
    (b"[1, 2]", "a request is a JSON object: got list"),
    (b'{"kind": "launch", "request_id": "x", "created_at": 1}', "'kind' of run, delete: got 'launch'"),
    (b'{"kind": "run", "request_id": "x", "created_at": "today"}', "numeric 'created_at': got 'today'"),
    (b'{"kind": "delete", "request_id": "x", "created_at": 1, "payload": {}}', "names a 'run_id' string"),
    (b'{"kind": "run", "request_id": "x", "created_at": 1, "payload": [1]}', "'payload' is a JSON object"),
    (b"\xff\xfe{", "UnicodeDecodeError"),
])
def test_an_unreadable_request_is_quarantined_with_its_reason(queue, content, reason):
    (queue.root / "pending" / "0000-bad.json").write_bytes(content)
    (queue.root / "active" / "0001-bad.json").write_bytes(content)
    queue.submit("run", {"run_id": "ok"})
    assert [r.run_id for r in queue.pending()] == ["ok"]      # listing never raises
    assert queue.claim_next().run_id == "ok"
    assert queue.active()[0].run_id == "ok"
    found = {path.name: text for path, text in queue.quarantined()}
    assert set(found) == {"pending-0000-bad.json", "active-0001-bad.json"}
    assert reason in found["pending-0000-bad.json"]
    assert (queue.root / "quarantine" / "pending-0000-bad.json").read_bytes() == content   # kept as it was


def test_claims_count_attempts_and_a_request_workers_died_on_is_failed(queue):
    from encbench.engine.queue import MAX_ATTEMPTS

    queue.submit("run", {"run_id": "a"})
    queue.submit("run", {"run_id": "b"})
    first = queue.claim_next()
    assert first.attempts == 1
    assert json.loads(first.path.read_text())["attempts"] == 1
    staged = queue.set_stage(first, "running its tasks")
    queue.set_waiting(staged, "busy", attempt=1, retry_in=1.0)   # waiting keeps the count and stage
    for attempt in range(2, MAX_ATTEMPTS + 1):                    # each claim of a left-over: a dead worker
        again = queue.claim_next()
        assert (again.run_id, again.attempts, again.stage) == ("a", attempt, None)   # this attempt's stage
        assert json.loads(again.path.read_text())["attempts"] == attempt
        queue.set_stage(again, "running its tasks" if attempt == MAX_ATTEMPTS else "loading")
    nxt = queue.claim_next()                                      # the limit: failed, the next one taken
    assert nxt.run_id == "b" and nxt.attempts == 1
    (failed,) = queue.done()
    assert failed.run_id == "a" and failed.outcome == "failed"
    assert failed.error.startswith(f"the queue worker died {MAX_ATTEMPTS} times while handling this "
                                   f"request (running its tasks)")
    assert str(queue.log_path) in failed.error


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
        w.ensure_run("r1", origin="local", owner=OWNER)
        w.write_results([dict(run_id="r1", dataset="file:abc123", encoder="OH", model="DT", tuning="no",
                              scoring="AUC", fold=0, n_folds=1, cv_score=0.5, time=0.1, status="ok")])
    queue = RunQueue(db)
    queue.submit("delete", {"run_id": "r1", "owner": OWNER})
    assert serve(db, idle_exit=0, poll=0.01) == 0
    with Writer(db, publish=False) as w:
        assert w.run_status("r1") is None
        assert len(queries.list_datasets(w)) == 0
    assert not (uploads / "abc123.csv").exists()
    assert json.loads(queue.done()[0].path.read_text())["outcome"] == "done"


def test_ensure_worker_starts_a_detached_process_that_drains_and_exits(tmp_path):
    db = tmp_path / "d.duckdb"
    with Writer(db) as w:
        w.ensure_run("r1", origin="local", owner=OWNER)
    queue = RunQueue(db)
    queue.submit("delete", {"run_id": "r1", "owner": OWNER})
    assert queue.ensure_worker(idle_exit=0.5)
    deadline = time.time() + 60
    while (queue.pending() or queue.active()) and time.time() < deadline:
        time.sleep(0.1)
    assert queue.done() and not queue.pending() and not queue.active()
    while queue.worker_running() and time.time() < deadline:  # then it exits when idle
        time.sleep(0.1)
    assert not queue.worker_running()
    assert "deleted run r1" in queue.log_path.read_text()


def test_a_half_written_request_is_never_read_and_the_worker_removes_it(queue):
    """A writer killed between writing its temporary file and renaming it leaves ``.tmp-*.json``:
    not a request (the rename is the commit), and the next worker removes it."""
    queue.submit("run", {"run_id": "a"})
    claimed = queue.claim_next()
    leftover = queue.root / "active" / ".tmp-killed.json"
    leftover.write_text(json.dumps(dict(json.loads(claimed.path.read_text()), attempts=0)))
    old = queue.root / "done" / ".tmp-old.json"
    old.write_text("{")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    fresh = queue.root / "pending" / ".tmp-fresh.json"    # an app process may be writing it now
    fresh.write_text("{")
    assert [r.path for r in queue.active()] == [claimed.path]
    assert queue.claim_next().attempts == 2
    assert queue.remove_stale_tmp() == 2
    assert not leftover.exists() and not old.exists() and fresh.exists()


def test_queue_files_and_folders_are_owner_only(tmp_path, umask_022):
    """Requests carry upload paths and choices, the log their errors: files 0600, folders the
    queue creates 0700; a folder that was there already keeps its mode."""
    tmp_path.chmod(0o755)
    queue = RunQueue(tmp_path / "new" / "q.duckdb")
    assert file_mode(tmp_path / "new") == file_mode(queue.root) == 0o700
    for sub in ("pending", "active", "done", "cancel", "quarantine"):
        assert file_mode(queue.root / sub) == 0o700, sub
    assert file_mode(tmp_path) == 0o755
    request = queue.submit("run", {"run_id": "r1"})
    assert file_mode(request.path) == 0o600
    queue.cancel("r2")
    assert file_mode(queue.root / "cancel" / "r2") == 0o600
    done = queue.done()                                  # r1 is pending still; r2 had no request
    assert not done
    claimed = queue.claim_next()
    queue.complete(claimed)
    assert file_mode(queue.done()[0].path) == 0o600
    (queue.root / "pending" / "0000-bad.json").write_bytes(b"{not json")
    queue.pending()
    (reason,) = (queue.root / "quarantine").glob("*.reason")
    assert file_mode(reason) == 0o600
    assert not queue.worker_running()
    assert file_mode(queue.lock_path) == 0o600


def test_an_existing_queue_folder_keeps_itsfile_mode(tmp_path, umask_022):
    (tmp_path / "queue" / "pending").mkdir(parents=True, mode=0o755)
    queue = RunQueue(tmp_path / "q.duckdb")
    assert file_mode(queue.root) == file_mode(queue.root / "pending") == 0o755
    assert file_mode(queue.root / "done") == 0o700


def test_the_worker_log_is_owner_only_and_the_worker_creates_files_so(tmp_path, umask_022, monkeypatch):
    """The worker is started with umask 077: what it creates (the database's write-ahead log,
    its own files) is owner-only too."""
    import encbench.engine.queue as queue_module

    started = []
    monkeypatch.setattr(queue_module.subprocess, "Popen", lambda *a, **kw: started.append(kw))
    queue = RunQueue(tmp_path / "q.duckdb")
    assert queue.ensure_worker(idle_exit=0.5)
    assert file_mode(queue.log_path) == 0o600
    (kwargs,) = started
    assert kwargs["umask"] == 0o077


def test_a_read_only_queue_reads_creates_nothing_and_refuses_changes(tmp_path):
    """ENCBENCH_READ_ONLY's queue: a missing queue reads as empty with no worker, a file that is
    not a request is skipped where it lies, and every change says the queue is read-only."""
    from encbench.engine.queue import ReadOnlyQueue

    db = tmp_path / "q.duckdb"
    queue = RunQueue(db, read_only=True)
    assert (queue.pending(), queue.active(), queue.done(), queue.quarantined()) == ([], [], [], [])
    assert not queue.worker_running() and queue.worker_pid() is None
    assert list(tmp_path.iterdir()) == []
    RunQueue(db).submit("run", {"run_id": "r1"})
    bad = queue.root / "pending" / "0000-bad.json"
    bad.write_bytes(b"{not json")
    assert [r.run_id for r in queue.pending()] == ["r1"] and bad.exists()
    for change in (lambda: queue.submit("run", {"run_id": "r2"}), lambda: queue.cancel("r1"),
                   queue.claim_next, queue.ensure_worker):
        with pytest.raises(ReadOnlyQueue, match="is read-only \\(ENCBENCH_READ_ONLY=1\\): cannot"):
            change()
    assert not queue.lock_path.exists() and not queue.is_cancelled("r1")
