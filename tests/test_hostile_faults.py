"""Hostile faults: broken queue files, dying workers, lost Dask workers, damaged databases, a full
disk and hostile custom encoders. Each fault gets a message saying what is wrong (and what to do),
no traceback, and nothing written or lost.

The sibling of tests/test_hostile_inputs.py (bad files and options). Real parts throughout: queue
workers, Dask schedulers and workers are their own processes, the database is a real DuckDB file
damaged on disk, the full disk is the kernel's ``EFBIG`` under ``RLIMIT_FSIZE``.
"""
from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from encbench.engine.grid import Grid
from encbench.engine.queue import MAX_ATTEMPTS, RunQueue
from encbench.engine.worker import STAGE_RUN
from encbench.store import Writer

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _local_results(path) -> tuple[int, int]:
    """(result rows, distinct experiments) outside the published run."""
    with Writer(path, publish=False) as w:
        row = w.query("SELECT count(*) AS n, count(DISTINCT (run_id, dataset, encoder, model, tuning, "
                      "scoring, fold, split)) AS k FROM results "
                      "WHERE run_id <> 'published-matteucci2023'").iloc[0]
    return int(row["n"]), int(row["k"])


def _page_texts(at: AppTest) -> str:
    parts = []
    for kind in ("error", "warning", "info", "markdown", "caption", "exception"):
        parts += [str(getattr(e, "value", "")) for e in at.get(kind)]
    return "\n".join(parts)


# -- the queue -----------------------------------------------------------------------------------
#: files that are not requests, as a user, an editor or a crash could leave them (name, content)
UNREADABLE = [
    ("empty-object", b"{}"),
    ("not-json", b'{"kind": "run", '),
    ("a-list", b"[]"),
    ("unknown-kind", b'{"kind": "launch", "request_id": "x", "created_at": 1, "payload": {}}'),
    ("delete-without-run", b'{"kind": "delete", "request_id": "x", "created_at": 1, "payload": {}}'),
    ("binary", bytes(range(256))),
]


def _plant_unreadable(queue: RunQueue, tag: str) -> set[str]:
    names = set()
    for sub in ("pending", "active"):
        for name, content in UNREADABLE:
            path = queue.root / sub / f"0000-{tag}-{name}.json"
            path.write_bytes(content)
            names.add(f"{sub}-{path.name}")
    return names


@pytest.mark.slow
def test_unreadable_requests_are_quarantined_by_the_worker_and_the_pages(private_db):
    db = private_db
    with Writer(db) as w:
        w.ensure_run("local-doomed", origin="local", label="to delete")
    queue = RunQueue(db)
    planted = _plant_unreadable(queue, "w")
    queue.submit("delete", {"run_id": "local-doomed"})

    # a real worker process: it used to exit at every start on `{}` (KeyError: 'kind')
    assert queue.ensure_worker(idle_exit=0.5)
    _wait(lambda: queue.done(), 60, "the delete request")
    _wait(lambda: not queue.worker_running(), 30, "the worker to exit when idle")
    (request,) = queue.done()
    assert (request.kind, request.outcome, request.error) == ("delete", "done", None)
    with Writer(db, publish=False) as w:
        assert w.run_status("local-doomed") is None
    log = queue.log_path.read_text()
    assert "Traceback" not in log and "KeyError" not in log, log
    assert len(re.findall(r"worker \d+ draining", log)) == 1
    reasons = dict((p.name, r) for p, r in queue.quarantined())
    assert set(reasons) == planted                            # every bad file set aside, none lost
    assert "a request has a 'kind' (run, delete): got keys []" in reasons["pending-0000-w-empty-object.json"]
    assert "not a JSON request" in reasons["active-0000-w-not-json.json"]
    assert queue.pending() == [] and queue.active() == []

    # the pages read the queue too: new bad files never reach them as an exception
    planted |= _plant_unreadable(queue, "p")
    for page in ("pages/runs.py", "pages/run.py"):
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=90)
        at.switch_page(page)
        at.run()
        assert not at.exception, at.exception
        assert "KeyError" not in _page_texts(at)
    assert {p.name for p, _ in queue.quarantined()} == planted
    assert not queue.worker_running()                        # nothing runnable: no worker started


@pytest.mark.slow
def test_a_request_its_workers_keep_dying_on_is_failed_with_the_reason(private_db):
    """A request whose handling kills the worker (here SIGKILL, as the OOM killer sends) is taken
    again by the next worker only MAX_ATTEMPTS times; then it is failed, its run marked failed with
    the reason, the queue moves on, and the rows committed before are all still there."""
    db = private_db
    grid = Grid(datasets=["bundled:credit-g"], encoders=["OH", "MT", "CB", "Count"], models=["SVM"],
                scorings=["AUC"])
    queue = RunQueue(db)
    queue.submit("run", {"run_id": grid.run_id, "grid": grid.to_dict()})

    def active_request():
        active = queue.active()
        return active[0] if active else None

    for attempt in range(1, MAX_ATTEMPTS + 1):
        assert queue.ensure_worker(idle_exit=30)
        pid = _wait(queue.worker_pid, 30, "the worker to start")
        _wait(lambda a=attempt: (r := active_request()) and r.attempts == a and r.stage == STAGE_RUN,
              60, f"attempt {attempt} to run its tasks")
        if attempt == 1:   # the first worker gets as far as committing a result
            _wait(lambda: re.search(r"\[1/20\] .* ok", queue.log_path.read_text()), 120, "a first result")
        os.kill(pid, signal.SIGKILL)
        _wait(lambda: not queue.worker_running(), 10, "the killed worker to release its lock")
    n_before, distinct_before = _local_results(db)
    assert 0 < n_before == distinct_before

    queue.submit("delete", {"run_id": "local-unknown"})     # the queue is not blocked behind it
    assert queue.ensure_worker(idle_exit=0.5)
    _wait(lambda: len(queue.done()) == 2 and not queue.worker_running(), 60, "the last worker")
    outcomes = {r.kind: r for r in queue.done()}
    failed = outcomes["run"]
    assert failed.outcome == "failed" and failed.attempts == MAX_ATTEMPTS
    assert failed.error.startswith(f"the queue worker died {MAX_ATTEMPTS} times while handling this "
                                   f"request ({STAGE_RUN}), e.g. killed for using too much memory")
    assert "resume the run once fixed" in failed.error
    assert outcomes["delete"].outcome == "failed" and "unknown run" in outcomes["delete"].error
    assert _local_results(db) == (n_before, distinct_before)      # nothing lost, nothing duplicated
    with Writer(db, publish=False) as w:
        status, error = w.query("SELECT status, error FROM runs WHERE run_id = ?", [grid.run_id]).iloc[0]
    assert status == "failed" and error == failed.error
    log = queue.log_path.read_text()
    assert len(re.findall(r"worker \d+ draining", log)) == MAX_ATTEMPTS + 1
    assert f"request {failed.request_id} failed: the queue worker died" in log
