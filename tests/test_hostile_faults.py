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


# -- a lost Dask worker ----------------------------------------------------------------------------
def _tasks_and_payloads(grid: Grid):
    from encbench.engine.grid import plan
    from encbench.engine.protocol import Payload

    the_plan = plan(grid)
    return the_plan.tasks, {ds.key: Payload.from_dataset(ds) for ds in the_plan.datasets.values()}


def _scores(outcomes) -> dict:
    return {(o.task.encoder, o.task.fold, r["model"]): (r["status"], r["cv_score"]) for o in outcomes for r in o.rows}


@pytest.mark.slow
def test_results_lost_with_a_killed_dask_worker_are_computed_again(tmp_path):
    """A worker SIGKILLed while it holds finished results the client has not read yet: Dask cancels
    them (and may lose the scattered dataset). They used to be recorded as failed with
    'dask: NoneType: None'; they are sent again and give the local scores bit for bit."""
    distributed = pytest.importorskip("distributed")
    from test_engine_cluster import BIN, dask_cluster

    from encbench.engine.executors import DaskExecutor, LocalExecutor

    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "Ord", "Count", "MT"], models=["LogReg", "DT"],
                scorings=["AUC"])
    tasks, payloads = _tasks_and_payloads(grid)

    def all_finished(dask_scheduler) -> bool:  # runs on the scheduler (pickled by value)
        return not any(ts.state in ("queued", "waiting", "processing", "no-worker")
                       for key, ts in dask_scheduler.tasks.items() if str(key).startswith("encbench-"))

    with dask_cluster(tmp_path / "cluster", [BIN / "python", BIN / "python"]) as address, \
            distributed.Client(address, set_as_default=False) as client:
        victim_address, victim = next(iter(client.run(os.getpid).items()))
        stream = DaskExecutor(client).run(tasks, payloads, 600.0)
        try:
            outcomes = [_wait(lambda: next(stream), 120, "a first outcome")]
            # the client stops reading while the workers finish the rest and hold the results
            _wait(lambda: client.run_on_scheduler(all_finished), 120, "every task to finish")
            os.kill(victim, signal.SIGKILL)
            _wait(lambda: victim_address not in client.scheduler_info()["workers"], 30, "the worker to be lost")
            time.sleep(1.0)                                   # the client hears of the lost keys
            outcomes += [o for o in stream if o is not None]
        finally:
            stream.close()
    assert sorted((o.task.encoder, o.task.fold) for o in outcomes) == sorted((t.encoder, t.fold) for t in tasks)
    errors = [r["error"] for o in outcomes for r in o.rows if r["status"] != "ok"]
    assert errors == [] and not any(o.lost for o in outcomes)
    local = list(o for o in LocalExecutor(1).run(tasks, payloads, 600.0) if o is not None)
    assert _scores(outcomes) == _scores(local)                          # bit for bit


#: an encoder whose fit kills the Dask worker running it (as the OOM killer would), and nothing else
KILLER = r'''
import os
import signal

from sklearn.preprocessing import OrdinalEncoder


def _under_a_dask_worker():
    pid = os.getppid()           # the worker process, a child of the `dask worker` nanny
    for _ in range(3):
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if b"dask\x00worker" in fh.read():
                return True
        with open(f"/proc/{pid}/stat") as fh:
            pid = int(fh.read().rsplit(")", 1)[1].split()[1])
    return False


class WorkerKiller(OrdinalEncoder):
    def fit(self, X, y=None):
        if _under_a_dask_worker():
            os.kill(os.getppid(), signal.SIGKILL)
            os._exit(1)
        return super().fit(X, y)


def make():
    return WorkerKiller(handle_unknown="use_encoded_value", unknown_value=-1)
'''


@pytest.mark.slow
def test_a_task_that_keeps_losing_its_dask_worker_ends_the_run_incomplete(tmp_path, monkeypatch):
    """Every worker that runs the task dies: after the resubmissions its rows are failed with the
    reason, the run is marked failed and the command exits non-zero with what to do; no
    'NoneType' anywhere. (That the rest of a run completes is the test above.)"""
    pytest.importorskip("distributed")
    import test_engine_cluster
    from test_engine_cluster import BIN, dask_cluster

    from encbench.engine.executors import MAX_RESUBMITS

    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "hostile_killer.py").write_text(KILLER)
    clean = test_engine_cluster._clean_env
    # the workers import the module from PYTHONPATH; a worker death fails its task at once
    monkeypatch.setattr(test_engine_cluster, "_clean_env", lambda: dict(
        clean(), PYTHONPATH=str(modules), DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0"))
    db = tmp_path / "lost.duckdb"
    with dask_cluster(tmp_path / "cluster", [BIN / "python", BIN / "python"]) as address:
        done = test_engine_cluster._encbench(
            "run", "--datasets", "bundled:tic-tac-toe", "--encoders", "Killer=hostile_killer:make",
            "--controls", "none", "--models", "LogReg", "--metrics", "AUC", "--folds", "2",
            "--scheduler", address, "--db", str(db), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "NoneType" not in done.stderr, done.stderr
    assert re.search(r"error: run local-\w+ is incomplete: 2 of 2 tasks were lost with their Dask workers "
                     r"\(their rows are recorded as failed\); check the workers, then re-run the same "
                     r"command to resume them", done.stderr), done.stderr
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT encoder, fold, status, error FROM results WHERE fold >= 0 "
                           "ORDER BY encoder, fold").fetchall()
        status, error = con.execute("SELECT status, error FROM runs WHERE origin = 'local'").fetchone()
    assert [(e, f, s) for e, f, s, _ in rows] == [("Killer", 0, "failed"), ("Killer", 1, "failed")]
    for _, _, _, message in rows:
        assert message.startswith(f"Dask worker lost: the task was sent {MAX_RESUBMITS + 1} times"), message
    assert status == "failed" and "is incomplete: 2 of 2 tasks were lost" in error
