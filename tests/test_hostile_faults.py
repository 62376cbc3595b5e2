"""Hostile faults: broken queue files, dying workers, lost Dask workers, damaged databases, a full
disk and hostile custom encoders. Each fault gets a message saying what is wrong (and what to do),
no traceback, and nothing written or lost.

The sibling of tests/test_hostile_inputs.py (bad files and options). Real parts throughout: queue
workers, Dask schedulers and workers are their own processes, the database is a real DuckDB file
damaged on disk, the full disk is the kernel's ``EFBIG`` under ``RLIMIT_FSIZE``.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from encbench.engine.grid import Grid
from encbench.engine.queue import MAX_ATTEMPTS, RunQueue
from encbench.engine.queue_worker import STAGE_RUN
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
    owner = "a" * 32                                          # the app session that launched it
    with Writer(db) as w:
        w.ensure_run("local-doomed", origin="local", label="to delete", owner=owner)
    queue = RunQueue(db)
    planted = _plant_unreadable(queue, "w")
    queue.submit("delete", {"run_id": "local-doomed", "owner": owner})

    # a real worker process: it quarantines `{}` and drains the rest instead of exiting on it
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
    # the tasks run in the queue worker itself (workers 0): each attempt starts no task process
    queue.submit("run", {"run_id": grid.run_id, "grid": grid.to_dict(), "workers": 0})

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

    queue.submit("delete", {"run_id": "local-unknown", "owner": "b" * 32})   # not blocked behind it
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


@pytest.fixture(scope="module")
def lost_workers_cluster(tmp_path_factory):
    """One ``dask scheduler`` and two ``dask worker`` processes for the lost-worker tests:
    (address, folder, environment). The workers import KILLER's module from their PYTHONPATH, and
    a worker's death fails the task it ran at once (no retries by the scheduler)."""
    pytest.importorskip("distributed")
    from test_engine_cluster import BIN, _clean_env, dask_cluster

    folder = tmp_path_factory.mktemp("lost_workers")
    modules = folder / "modules"
    modules.mkdir()
    (modules / "hostile_killer.py").write_text(KILLER)
    env = dict(_clean_env(), PYTHONPATH=str(modules), DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0")
    with dask_cluster(folder / "cluster", [BIN / "python", BIN / "python"], env=env) as address:
        yield address, folder, env


@pytest.mark.slow
def test_results_lost_with_a_killed_dask_worker_are_computed_again(lost_workers_cluster):
    """A worker SIGKILLed while it holds finished results the client has not read yet: Dask cancels
    them (and may lose the scattered dataset). They are sent again, not recorded as failed, and
    give the local scores bit for bit."""
    import distributed

    from encbench.engine.dask_executor import DaskExecutor
    from encbench.engine.local_pool import LocalExecutor

    address, _, _ = lost_workers_cluster
    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "Ord", "Count", "MT"], models=["LogReg", "DT"],
                scorings=["AUC"], n_folds=2)
    tasks, payloads = _tasks_and_payloads(grid)

    def all_finished(dask_scheduler) -> bool:  # runs on the scheduler (pickled by value)
        return not any(ts.state in ("queued", "waiting", "processing", "no-worker")
                       for key, ts in dask_scheduler.tasks.items() if str(key).startswith("encbench-"))

    with distributed.Client(address, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=120)            # a worker killed by the other test is back
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


@pytest.mark.slow
def test_a_task_that_keeps_losing_its_dask_worker_ends_the_run_incomplete(lost_workers_cluster, published_db):
    """Every worker that runs the task dies: after the resubmissions its rows are failed with the
    reason, the run is marked failed and the command exits non-zero with what to do; no
    'NoneType' anywhere. (That the rest of a run completes is the test above.)"""
    import shutil

    import duckdb
    from test_engine_cluster import _encbench

    from encbench.engine.dask_executor import MAX_RESUBMITS

    address, folder, env = lost_workers_cluster
    db = folder / "lost.duckdb"
    shutil.copyfile(published_db, db)             # the published rows are there: not imported again
    done = _encbench("run", "--datasets", "bundled:tic-tac-toe", "--encoders", "Killer=hostile_killer:make",
                     "--controls", "none", "--models", "LogReg", "--metrics", "AUC", "--folds", "2",
                     "--scheduler", address, "--db", str(db), cwd=folder, env=env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "NoneType" not in done.stderr, done.stderr
    assert re.search(r"error: run local-\w+ is incomplete: 2 of 2 tasks were lost with their Dask workers "
                     r"\(their rows are recorded as failed\); check the workers, then re-run the same "
                     r"command to resume them", done.stderr), done.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT encoder, fold, status, error FROM results WHERE fold >= 0 "
                           "ORDER BY encoder, fold").fetchall()
        status, error = con.execute("SELECT status, error FROM runs WHERE origin = 'local'").fetchone()
    assert [(e, f, s) for e, f, s, _ in rows] == [("Killer", 0, "failed"), ("Killer", 1, "failed")]
    for _, _, _, message in rows:
        assert message.startswith(f"Dask worker lost: the task was sent {MAX_RESUBMITS + 1} times"), message
    assert status == "failed" and "is incomplete: 2 of 2 tasks were lost" in error


# -- hostile custom encoders ---------------------------------------------------------------------
#: custom encoders that misbehave; "on full data" ones pass the pre-run check (a 300-row sample,
#: 200 rows to fit) and misbehave in the tasks (766 rows of tic-tac-toe to fit)
HOSTILE = r'''
import os
import subprocess
import sys
import time

import numpy as np
from sklearn.preprocessing import OrdinalEncoder

FULL = 400   # more rows than the pre-run check fits


class Base(OrdinalEncoder):
    def __init__(self, *, pidfile=None):
        super().__init__(handle_unknown="use_encoded_value", unknown_value=-1)
        self.pidfile = pidfile

    def get_params(self, deep=True):
        return {"pidfile": self.pidfile}


class Hang(Base):
    def fit(self, X, y=None):
        time.sleep(3600)


class Exit3(Base):
    def fit(self, X, y=None):
        sys.exit(3)


class Greedy(Base):
    def fit(self, X, y=None):
        self.hoard_ = np.ones((4, 2**30), dtype=np.uint8)   # 4 GiB, twice the cap below
        return super().fit(X, y)


class NaNOnFull(Base):
    def transform(self, X):
        out = super().transform(X).astype(float)
        if len(X) > FULL // 2:
            out[::7, 0] = np.nan
        return out


class GreedyOnFull(Base):
    def fit(self, X, y=None):
        if len(X) > FULL:
            self.hoard_ = np.empty((6, 2**30), dtype=np.uint8)   # 6 GiB of address space
        return super().fit(X, y)


class ExitOnFull(Base):
    def fit(self, X, y=None):
        if len(X) > FULL:
            sys.exit(3)
        return super().fit(X, y)


class ForkOnFull(Base):
    def fit(self, X, y=None):
        if len(X) > FULL:
            child = subprocess.Popen(["sleep", "600"])
            with open(self.pidfile, "a") as fh:
                fh.write(f"{child.pid}\n")
            time.sleep(3600)
        return super().fit(X, y)


class Noisy(Base):
    def fit(self, X, y=None):
        sys.stderr.write("x" * 2_000_000 + "\nend of the noise\n")
        sys.stderr.flush()
        return super().fit(X, y)
'''

#: a module that does something as soon as it is imported
IMPORT_MARKER = r'''
import pathlib

pathlib.Path(__file__).with_name("imported.marker").write_text("imported")


def make():
    from sklearn.preprocessing import OrdinalEncoder

    return OrdinalEncoder()
'''


@pytest.fixture()
def hostile_dir(tmp_path, monkeypatch):
    """A directory holding the hostile modules, as the working directory (the command line puts
    it on its task processes' PYTHONPATH) and on PYTHONPATH (as an installed plugin would be)."""
    (tmp_path / "hostile_encoders.py").write_text(HOSTILE)
    (tmp_path / "hostile_import.py").write_text(IMPORT_MARKER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    return tmp_path


def _run(*args: str, db: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "encbench", "run", "--datasets", "bundled:tic-tac-toe", "--controls", "none",
                           "--models", "DT", "--metrics", "AUC", "--folds", "2", "--db", str(db), *args],
                          capture_output=True, text=True, timeout=timeout)


#: what each hostile encoder's failed check says (the run's --timeout is 4 s, its budget 2 GB)
CHECK_MESSAGES = {
    "Hang": re.escape("did not finish within the run's timeout of 4 s and was stopped: does fit or transform hang?"),
    "Exit3": re.escape("the check its process exited with status 3: the encoder ended the process (sys.exit or "
                       "os._exit) instead of raising an exception"),
    "Greedy": r"fit on 200 rows x 9 categorical columns raised MemoryError",
}


def _main_run(capsys, *args: str, db: Path) -> tuple[int, str, str]:
    """``_run`` through :func:`encbench.cli.main` in this process: (status, stdout, stderr)."""
    from encbench.cli import main

    capsys.readouterr()
    code = main(["run", "--datasets", "bundled:tic-tac-toe", "--controls", "none", "--models", "DT",
                 "--metrics", "AUC", "--folds", "2", "--db", str(db), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
@pytest.mark.parametrize("budget", ["environment", "option"])
def test_hostile_encoders_fail_their_bounded_check_and_nothing_is_written(budget, hostile_dir, monkeypatch, capsys):
    """Each hostile encoder fails its check (one process, killed after the run's timeout, capped
    at the memory budget), every failure is named in one message, and nothing is written. The
    budget comes from ENCBENCH_MEMORY_BUDGET, or from the run's own --memory-budget, which caps
    the check as the environment's does (the Greedy encoder alone shows that). The encoders'
    code runs in the check's process only, never in this one."""
    db = hostile_dir / "never.duckdb"
    names = list(CHECK_MESSAGES) if budget == "environment" else ["Greedy"]
    encoders = ",".join(f"{name}=hostile_encoders:{name}" for name in names)
    extra = ("--timeout", "4") + (("--memory-budget", "2GB") if budget == "option" else ())
    if budget == "environment":
        monkeypatch.setenv("ENCBENCH_MEMORY_BUDGET", "2GB")
    start = time.monotonic()
    code, _, err = _main_run(capsys, "--encoders", encoders, *extra, db=db)
    seconds = time.monotonic() - start
    assert code == 2, err
    assert "Traceback" not in err, err
    failed = re.findall(r"custom encoder '(\w+)' failed the check on 300 rows of dataset 'tic-tac-toe' \(50\):\n"
                        r"  - (.*)", err)
    assert [name for name, _ in failed] == names, err
    for name, problem in failed:
        assert re.search(CHECK_MESSAGES[name], problem), (name, problem)
    assert not db.exists() and not list(hostile_dir.glob("*.duckdb"))     # nothing written
    assert seconds < 120                                                  # bounded, not an hour
    assert "hostile_encoders" not in sys.modules


def test_the_app_server_checks_a_plugin_in_a_bounded_process(hostile_dir, monkeypatch):
    """What the Run page calls for an installed plugin: the check runs in a child process, killed
    after the run's timeout, and the server process never imports the plugin's module."""
    import sys as _sys

    from encbench.custom import CustomEncoder
    from encbench.engine.queue_requests import RunRequest

    # installed (a dist-info on sys.path): a queued run builds installed plugins only
    info = hostile_dir / "site" / "hostile-1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile\nVersion: 1\n")
    (info / "entry_points.txt").write_text("[encbench.encoders]\nHang = hostile_encoders:Hang\n")
    monkeypatch.syspath_prepend(str(info.parent))
    plugin = CustomEncoder("Hang", "hostile_encoders:Hang", plugin="Hang", package="hostile", version="1")
    start = time.monotonic()
    with pytest.raises(ValueError, match="did not finish within the run's timeout of 3 s and was stopped"):
        RunRequest.bundled("tic-tac-toe", encoders=[], models=["DT"], scorings=["AUC"], tuning="no",
                           timeout=3, custom_encoders=[plugin])
    assert time.monotonic() - start < 60
    assert "hostile_encoders" not in _sys.modules


def test_a_dry_run_imports_and_runs_no_code_of_a_custom_encoder(hostile_dir, capsys):
    marker = hostile_dir / "imported.marker"
    code, out, err = _main_run(capsys, "--encoders", "Mine=hostile_import:make,Shell=os:system", "--encoder-params",
                               json.dumps({"Shell": {"command": f"touch {hostile_dir / 'shell.marker'}"}}),
                               "--dry-run", db=hostile_dir / "dry.duckdb")
    assert code == 0, err
    assert not marker.exists() and not (hostile_dir / "shell.marker").exists()
    assert "hostile_import" not in sys.modules                 # not even in this process
    assert "custom encoder Mine (hostile_import:make): not imported, built or checked" in out
    assert "custom encoder Shell (os:system): not imported, built or checked" in out
    assert not (hostile_dir / "dry.duckdb").exists()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state          # a zombie waits only for its reaper


@pytest.mark.slow
def test_hostile_encoders_in_tasks_fail_with_the_reason_and_leave_nothing_behind(hostile_dir, published_db):
    import shutil

    pidfile = hostile_dir / "forked.pids"
    db = hostile_dir / "tasks.duckdb"
    shutil.copyfile(published_db, db)              # the published rows are there: not imported again
    encoders = ("NaN=hostile_encoders:NaNOnFull,Exit=hostile_encoders:ExitOnFull,"
                "Fork=hostile_encoders:ForkOnFull,Noisy=hostile_encoders:Noisy,"
                "Greedy=hostile_encoders:GreedyOnFull")
    done = _run("--encoders", encoders, "--encoder-params", json.dumps({"Fork": {"pidfile": str(pidfile)}}),
                "--timeout", "8", "--workers", "2", "--memory-budget", "2GB", db=db)
    assert done.returncode == 0, done.stderr[-5000:]
    assert "Traceback" not in done.stderr
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT encoder, fold, status, error FROM results WHERE fold >= 0 "
                           "ORDER BY encoder, fold").fetchall()
    by_encoder: dict = {}
    for encoder, _, status, error in rows:
        by_encoder.setdefault(encoder, []).append((status, error))
    assert sorted(by_encoder) == ["Exit", "Fork", "Greedy", "NaN", "Noisy"] and all(
        len(v) == 2 for v in by_encoder.values())
    # 6 GiB on the full data only (the check passed): its task process is held to the budget,
    # 2 GB plus 2.1 GB for the libraries
    for status, error in by_encoder["Greedy"]:
        assert status == "failed" and re.match(
            r"over the memory budget of 2\.0 GB per task: the task process may use 4\.1 GB of address space "
            r"\(the budget plus 2\.1 GB for its libraries\) and an allocation failed \(encoder Greedy: "
            r"MemoryError: Unable to allocate 6\.00 GiB .*\); raise --memory-budget, run fewer --workers, or "
            r"leave the encoder out", error), error
    # NaN on the full data only: the sample's check passed; every task output is checked
    for status, error in by_encoder["NaN"]:
        assert status == "failed" and re.search(
            r"fit_transform of encoder 'hostile_encoders:NaNOnFull' returned \d+ NaN or infinite values in "
            r"\d+ rows \(e\.g\. in output column 0\)", error), error
    # sys.exit(3) in fit: the task process's own exit status, not a SIGKILL
    for status, error in by_encoder["Exit"]:
        assert status == "failed" and error.startswith(
            "task process exited with status 3 (sys.exit or os._exit in the encoder, model or metric?)"), error
    # a forked process dies with its task at the timeout (the task's process group is killed)
    assert [s for s, _ in by_encoder["Fork"]] == ["timeout", "timeout"]
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2 and not any(_alive(pid) for pid in pids), pids
    # 2 MB on stderr in every fit: the log keeps the last 64 KB per task
    assert [s for s, _ in by_encoder["Noisy"]] == ["ok", "ok"]
    assert "end of the noise" in done.stderr
    logged = re.search(r"task 50/Noisy/fold 1/2 wrote (\d+) bytes to stderr, the first (\d+) bytes dropped",
                       done.stderr)
    assert logged, done.stderr[-3000:]
    written, dropped = map(int, logged.groups())
    assert written >= 2_000_018 and written - dropped == 64 * 1024
    assert len(done.stderr) < 400_000                                    # not 3 x 2 MB


# -- damaged databases and snapshots ---------------------------------------------------------------
def _digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _truncate_half(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _truncate_at_a_block(path: Path) -> None:
    """Cut the file at a block boundary, as DuckDB itself never cuts a used block: only reading
    the blocks finds it."""
    os.truncate(path, 3 * 4096 + 10 * 262_144)


def _flip_header_iteration(path: Path) -> None:
    """Change the iteration counter of the first database header (its checksum no longer matches)."""
    with open(path, "r+b") as fh:
        fh.seek(4096 + 8)
        value = fh.read(1)
        fh.seek(4096 + 8)
        fh.write(bytes([value[0] ^ 0xFF]))


def _zero_main_header(path: Path) -> None:
    with open(path, "r+b") as fh:
        fh.write(b"\0" * 4096)


def _damage_result_blocks(path: Path, con=None) -> None:
    """Flip one byte in each of the first blocks holding the results table: the headers, the
    catalog and the tables read when the file is opened stay sound, only reading the results
    finds it (a disk fault under a database). ``con``: a connection this process holds on it."""
    import contextlib

    import duckdb

    with contextlib.nullcontext(con) if con is not None else duckdb.connect(str(path), read_only=True) as con:
        blocks = [b for (b,) in con.execute("SELECT DISTINCT block_id FROM pragma_storage_info('results') "
                                            "WHERE block_id >= 0 ORDER BY block_id").fetchall()][:3]
        block_size = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]
    with open(path, "r+b") as fh:
        for block in blocks:
            offset = 3 * 4096 + block * block_size + 100
            fh.seek(offset)
            byte = fh.read(1)
            fh.seek(offset)
            fh.write(bytes([byte[0] ^ 0xFF]))


@dataclass(frozen=True)
class Damage:
    name: str
    apply: object
    message: str


DAMAGES = [
    Damage("truncated", _truncate_half, r"is truncated: it holds [\d,]+ bytes, its header describes [\d,]+ blocks "
                                        r"of 262,144 bytes \([\d,]+ bytes\)"),
    Damage("truncated at a block", _truncate_at_a_block,
           r"cannot be read \(DuckDB: IO Error: Could not read enough bytes from file .*\)"),
    Damage("damaged header", _flip_header_iteration,
           r"has a damaged header: the checksum of its database header 1 \(bytes 4,096-8,191\) does not match"),
    Damage("not a database", _zero_main_header,
           r"is not a DuckDB database: its header is damaged \(no DuckDB signature at byte 8\)"),
    # `runs` must not republish the snapshot from it (the sound one would be lost), nor `run` crash
    Damage("damaged data blocks", _damage_result_blocks,
           r"cannot be read \(DuckDB: Corrupt database file: computed checksum \d+ does not match stored "
           r"checksum \d+ in block at location \d+\)"),
]


def _files(folder: Path) -> dict:
    return {p.name: _digest(p) for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda d: d.name)
def test_a_damaged_database_is_named_by_every_command_and_nothing_changes(damage, private_db, capsys):
    from encbench.cli import main
    from encbench.store import snapshot_path

    db = private_db
    damage.apply(db)
    before = _files(db.parent)
    commands = [["db", "info"], ["db", "init"], ["runs"], ["db", "import-published"],
                ["run", "--datasets", "bundled:tic-tac-toe", "--encoders", "OH", "--models", "DT", "--metrics", "AUC"],
                ["db", "info"]]                                  # still sound after the others
    for command in commands:
        capsys.readouterr()
        assert main([*command, "--db", str(db)]) == 2, command        # no traceback: main returned
        err = capsys.readouterr().err
        assert re.search(rf"error: the database '{re.escape(str(db))}' {damage.message}, so it cannot be used; "
                         rf"nothing was changed\. To recover: its read snapshot "
                         rf"'{re.escape(str(snapshot_path(db)))}' is sound", err), (command, err)
    assert _files(db.parent) == before                                # nothing written, nothing lost
    # what the message says to do works
    os.replace(db, db.with_name(db.name + ".damaged"))
    import shutil

    shutil.copyfile(snapshot_path(db), db)
    capsys.readouterr()
    assert main(["db", "info", "--db", str(db)]) == 0
    assert "published-matteucci2023" in capsys.readouterr().out


def test_a_truncated_snapshot_is_rebuilt_from_the_database(private_db):
    from encbench.store import Reader, snapshot_path

    db, snapshot = private_db, snapshot_path(private_db)
    with Writer(db, publish=False) as w:
        expected = w.query("SELECT count(*) AS n, sum(cv_score) AS s FROM results").iloc[0].tolist()
    _truncate_half(snapshot)
    with Reader(db) as reader:                                        # rebuilt on opening
        assert reader.query("SELECT count(*) AS n, sum(cv_score) AS s FROM results").iloc[0].tolist() == expected
    assert snapshot.stat().st_size == db.stat().st_size


def test_a_snapshot_damaged_under_an_open_reader_is_rebuilt_at_the_next_query(private_db):
    """Bit rot in place (same file, size and time stamp): the reader's connection meets the bad
    blocks in a query, rebuilds the snapshot and answers from the new one."""
    from encbench.store import Reader, snapshot_path

    db, snapshot = private_db, snapshot_path(private_db)
    with Writer(db, publish=False) as w:
        expected = w.query("SELECT sum(cv_score) AS s FROM results")["s"].iloc[0]
    with Reader(db) as reader:
        reader.query("SELECT count(*) AS n FROM runs")
        stat = snapshot.stat()
        with open(snapshot, "r+b") as fh:                             # one byte in every data block
            for offset in range(3 * 4096 + 100, stat.st_size, 262_144):
                fh.seek(offset)
                byte = fh.read(1)
                fh.seek(offset)
                fh.write(bytes([byte[0] ^ 0xFF]))
        os.utime(snapshot, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert reader.query("SELECT sum(cv_score) AS s FROM results")["s"].iloc[0] == expected
    assert _digest(snapshot) != "" and snapshot.stat().st_ino != stat.st_ino   # a new file


@pytest.mark.slow
def test_every_page_says_what_is_wrong_when_the_snapshot_cannot_be_rebuilt(private_db):
    """Snapshot and database both damaged: no page can show data; each says why, and what to do."""
    from pagetest import texts

    from encbench.store import snapshot_path
    from pages.ui.navigation import PAGES

    _truncate_half(snapshot_path(private_db))
    _truncate_half(private_db)
    before = _files(private_db.parent)
    silent = []
    for path, *_ in PAGES:
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=90)
        at.switch_page(path)
        at.run()
        assert not at.exception, (path, at.exception)
        shown = texts(at).replace("\\", "")                     # markdown escapes off
        if "could not be rebuilt from the database" not in shown:
            silent.append(path)
            continue
        assert "is truncated" in shown and "To recover: restore it from a backup" in shown, (path, shown)
    # the Run page reads no results before a dataset is chosen: its form is all it shows
    assert silent == ["pages/run.py"], silent
    assert _files(private_db.parent) == before


def test_a_snapshot_is_awaited_while_another_process_writes_the_database(private_db, monkeypatch):
    """A writer holds the database: the reader does not fight for the lock; it waits for that
    writer's next snapshot, and says so if none comes."""
    from encbench.store import Reader, SnapshotDamaged, reader, snapshot_path

    monkeypatch.setattr(reader, "REBUILD_WAIT", 1.0)
    holder = subprocess.Popen([PY, "-c", "import sys, time; from encbench.store import Writer; "
                               "w = Writer(sys.argv[1], publish=False); print('held', flush=True); time.sleep(60)",
                               str(private_db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        _truncate_half(snapshot_path(private_db))
        with pytest.raises(SnapshotDamaged, match=r"is truncated: .*, and it could not be rebuilt from the database: "
                                                  r"another process \(a run, or the app's queue worker\) writes the "
                                                  r"database and has not published a new snapshot within 1 s"):
            Reader(private_db)
    finally:
        holder.kill()
        holder.wait()


# -- a full disk ---------------------------------------------------------------------------------
#: run a module's command line under a file size limit: writes beyond it fail with EFBIG, as on a
#: full disk (the kernel's own error; Python ignores SIGXFSZ)
LIMITED = ("import resource, runpy, sys; limit = int(sys.argv.pop(1)); "
           "resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)); "
           "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)")


def _limited(limit: int, module: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-c", LIMITED, str(limit), module, *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def test_a_full_disk_before_a_run_is_named_and_nothing_changes(private_db, tmp_path):
    run = ["run", "--datasets", "bundled:tic-tac-toe", "--encoders", "OH", "--models", "DT", "--metrics", "AUC"]
    before = _files(private_db.parent)
    done = _limited(1_000_000, "encbench", *run, "--db", str(private_db))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert re.search(r"error: could not write '.*encbench\.read\.duckdb' while publishing the read snapshot "
                     r"\(File too large\): the disk is full, or a file size limit or a read-only disk stops it\. "
                     r"What was committed before is kept; free space \(df -h .*\) and run the same command again",
                     done.stderr), done.stderr
    assert _files(private_db.parent) == before                     # no temporary copy left either
    fresh = tmp_path / "fresh" / "new.duckdb"
    done = _limited(1_000_000, "encbench", *run, "--db", str(fresh))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "could not write" in done.stderr and "File too large" in done.stderr
    assert not fresh.exists() and not list(fresh.parent.glob("new*"))   # the half-made database is gone


GRID_SCRIPT = r'''
import json, sys
from encbench.engine import Grid, run_grid
grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "Ord", "Count", "MT"], models=["DT"], scorings=["AUC"],
            n_folds=2)
sizes = []
def progress(done, total, info):
    import os
    sizes.append(os.path.getsize(sys.argv[1]))
try:
    run_grid(grid, db_path=sys.argv[1], workers=0, publish_every=0, progress=progress)   # no task process
except ValueError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
print(json.dumps({"run_id": grid.run_id, "sizes": sizes}))
'''


@pytest.mark.slow
def test_a_full_disk_mid_run_marks_the_run_failed_with_the_reason_and_it_resumes(tmp_path):
    """The database grows as checkpoints fold results in; a limit between its size at the start
    and its size later makes a checkpoint fail mid-run (a fatal DuckDB error that invalidates the
    connection). The run is marked failed with the reason, committed results survive, and
    running the grid again completes it without duplicates."""
    (tmp_path / "limited_grid.py").write_text(GRID_SCRIPT)
    probe, db = tmp_path / "probe" / "p.duckdb", tmp_path / "real" / "r.duckdb"
    for path in (probe, db):
        path.parent.mkdir()
        with Writer(path):
            pass

    def grid(*prefix: str, path: Path) -> subprocess.CompletedProcess:
        return subprocess.run([PY, *prefix, str(path)], capture_output=True, text=True, timeout=600, cwd=REPO,
                              env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)])))

    free = grid(str(tmp_path / "limited_grid.py"), path=probe)
    assert free.returncode == 0, free.stderr
    sizes = json.loads(free.stdout.strip().splitlines()[-1])["sizes"]
    start, later = sizes[0], max(sizes)
    assert later > start, sizes                                     # the file grows during the run
    stopped = grid("-c", LIMITED, str((start + later) // 2), "limited_grid", path=db)
    assert stopped.returncode == 2, stopped.stderr[-3000:]
    assert "Traceback" not in stopped.stderr
    assert re.search(r"error: run local-\w+ stopped: could not write .* \(.*File too large.*\): the disk is full.*"
                     r"run the same command again; the run is marked failed", stopped.stderr), stopped.stderr[-3000:]
    with Writer(db, publish=False) as w:
        status, error = w.query("SELECT status, error FROM runs WHERE origin = 'local'").iloc[0]
        n, distinct = w.query("SELECT count(*), count(DISTINCT (dataset, encoder, fold)) FROM results").iloc[0]
    assert status == "failed" and "File too large" in error
    assert 0 < n == distinct < 8                                      # committed rows kept, the run unfinished

    resumed = grid(str(tmp_path / "limited_grid.py"), path=db)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    with Writer(db, publish=False) as w:
        status = w.query("SELECT status FROM runs WHERE origin = 'local'")["status"].iloc[0]
        n, distinct, ok = w.query("SELECT count(*), count(DISTINCT (dataset, encoder, fold)), "
                                  "count(*) FILTER (WHERE status = 'ok') FROM results").iloc[0]
    assert status == "done" and n == distinct == ok == 8
