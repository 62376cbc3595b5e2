"""The queue worker end to end: a real run drained from the queue, a SIGKILLed worker restarted by
the app, and the run resumed without duplicates."""
from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from encbench.engine.grid import Grid
from encbench.engine.queue import RunQueue
from encbench.engine.queue_requests import RunRequest, new_owner_token
from encbench.engine.queue_worker import serve
from encbench.store import Reader, Writer

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def db(private_db):
    return private_db


def _result_counts(path) -> tuple[int, int, int]:
    with Writer(path, publish=False) as w:
        row = w.query("SELECT count(*) AS n, "
                      "count(DISTINCT (dataset, encoder, model, tuning, scoring, fold)) AS k, "
                      "count(*) FILTER (WHERE status = 'ok') AS ok "
                      "FROM results WHERE run_id <> 'published-matteucci2023'").iloc[0]
    return int(row["n"]), int(row["k"]), int(row["ok"])


def test_worker_drains_a_run_request(db):
    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "CB"], models=["LogReg"],
                scorings=["AUC", "BAcc"])
    queue = RunQueue(db)
    token = new_owner_token()
    RunRequest(grid, workers=0, owner=token).submit(queue)       # launched by an app session; tasks in the worker
    assert serve(db, idle_exit=0, poll=0.01) == 0
    n, distinct, ok = _result_counts(db)
    assert n == distinct == ok == 2 * 1 * 2 * 5
    with Reader(db) as reader:
        assert reader.query("SELECT owner FROM runs WHERE run_id = ?", [grid.run_id])["owner"].iloc[0] == token
        status = reader.query("SELECT status FROM runs WHERE run_id = ?", [grid.run_id])["status"].iloc[0]
        scores = reader.query("SELECT count(*) AS n FROM scores WHERE run_id = ?", [grid.run_id])["n"].iloc[0]
    assert status == "done" and scores == 4
    assert [r.run_id for r in queue.done()] == [grid.run_id]


def test_a_request_queued_while_the_worker_exits_is_drained(db, monkeypatch):
    """The app starts no worker while one holds the lock: a request queued after the worker's
    last look at an empty queue, but before it lets the lock go, is still handled."""
    queued = []
    look = RunQueue.claim_next

    def claim_next(self):
        request = look(self)
        if request is None and not queued:     # the queue looked empty: the app queues right now
            queued.append(RunQueue(db).submit("delete", {"run_id": "local-unknown", "owner": "b" * 32}))
        return request

    monkeypatch.setattr(RunQueue, "claim_next", claim_next)
    assert serve(db, idle_exit=0, poll=0.01) == 0
    queue = RunQueue(db)
    assert [(r.kind, r.outcome) for r in queue.done()] == [("delete", "failed")]
    assert "unknown run" in queue.done()[0].error and not queue.pending()


def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_killed_worker_is_restarted_by_the_app_and_resumes(db):
    # SVM with probability estimates makes each of the 20 fold tasks take a moment on credit-g
    # (0.15 s of CPU; DT adds 0.04 s); the worker is killed as soon as its log reports the first
    # finished task.
    grid = Grid(datasets=["bundled:credit-g"], encoders=["OH", "MT", "CB", "Count"],
                models=["SVM", "DT"], scorings=["AUC"])
    expected = 4 * 2 * 1 * 5
    queue = RunQueue(db)
    # the tasks run in the queue worker itself (workers 0): neither worker starts a task process
    queue.submit("run", {"run_id": grid.run_id, "grid": grid.to_dict(), "workers": 0})
    assert queue.ensure_worker(idle_exit=1)
    _wait(lambda: queue.worker_pid() is not None, 30, "the worker to start")
    pid = queue.worker_pid()
    first_task = re.compile(r"\[1/20\] .* ok")
    _wait(lambda: first_task.search(queue.log_path.read_text()), 120, "the first finished task")
    os.kill(pid, signal.SIGKILL)
    _wait(lambda: not queue.worker_running(), 10, "the killed worker to release its lock")
    n_before, _, _ = _result_counts(db)
    assert 0 < n_before < expected, n_before                          # killed mid-run
    assert [r.run_id for r in queue.active()] == [grid.run_id]       # the request is not lost

    # Opening the Runs page notices the orphaned request and starts a new worker.
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    _wait(lambda: not queue.active() and not queue.worker_running(), 240, "the resumed run to finish")

    n, distinct, ok = _result_counts(db)
    assert n == distinct == ok == expected                              # complete, no duplicates
    with Writer(db, publish=False) as w:
        assert w.run_status(grid.run_id) == "done"
    log = queue.log_path.read_text()
    starts = [line for line in log.splitlines() if re.search(r"worker \d+ draining", line)]
    assert len(starts) == 2 and str(pid) in starts[0] and str(pid) not in starts[1]   # a new worker
    assert "finished before" in log or "skipped" in log


def test_two_uploads_launched_at_once_both_complete(db, tmp_path):
    """Two users launch at the same moment: both requests queue, one worker runs both."""
    import numpy as np
    import pandas as pd

    from encbench.uploads import queue_upload_run, stage_upload

    grids = []
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        frame = pd.DataFrame({"shape": rng.choice(["a", "b", "c", "d"], 120), "w": rng.normal(size=120),
                              "label": rng.choice(["no", "yes"], 120)})
        staged = stage_upload(frame.to_csv(index=False).encode(), f"upload{seed}.csv", db_path=db)
        grids.append(queue_upload_run(staged, target="label", encoders=["OH", "MT"], models=["LogReg"],
                                      scorings=["AUC"], tuning="no", db_path=db))
    queue = RunQueue(db)
    assert len(queue.pending()) == 2
    # both launches start a worker before either holds the lock: the loser exits at once
    assert queue.ensure_worker(idle_exit=1)
    queue.ensure_worker(idle_exit=1)
    _wait(lambda: not queue.pending() and not queue.active() and not queue.worker_running(), 120,
          "both runs")
    with Reader(db) as reader:
        runs = reader.query("SELECT run_id, status, n_expected FROM runs WHERE origin = 'local'")
        datasets = reader.query("SELECT dataset, name, source FROM datasets WHERE source = 'upload'")
    assert sorted(runs["run_id"]) == sorted(g.run_id for g in grids)
    assert set(runs["status"]) == {"done"}
    assert sorted(datasets["name"]) == ["upload1.csv", "upload2.csv"]
    n, distinct, ok = _result_counts(db)
    assert n == distinct == ok == 2 * (2 * 1 * 1 * 5)
    assert len(re.findall(r"worker \d+ draining", queue.log_path.read_text())) == 1   # one writer


# -- hostile requests: a request file names what the worker reads ----------------------------------
SECRET = "root:x:0:0:SECRET-LINE-OF-A-PRIVATE-FILE"


def _hostile_requests(tmp_path: Path, db: Path) -> dict[str, str]:
    """Dataset references a request file written past the app (anything that can write the queue
    can) may hold; each names a private file whose second line would be quoted by a parse error."""
    secret = tmp_path / "private" / "passwd"
    secret.parent.mkdir()
    secret.write_text(f"user,shell\n{SECRET},/bin/sh,more,fields\n")
    uploads = db.parent / "uploads"
    uploads.mkdir(exist_ok=True)
    (uploads / ("cd" * 32 + ".csv")).symlink_to(secret)
    return {"a private file": f"{secret}:user",
            "a climb out of the uploads": f"{uploads}/../../private/passwd:user",
            "a symlink in the uploads": f"{uploads / ('cd' * 32 + '.csv')}:user"}


def test_the_worker_refuses_a_request_naming_a_file_outside_the_uploads(db, tmp_path, caplog):
    """Issue 36.4: a run request naming /etc/passwd was read by the worker and a line of it quoted
    in the error every visitor of the Runs page sees. The worker now refuses every reference
    outside the uploads folder before opening it: the request fails naming the reference, its
    error holds no line of the file, and no run is recorded."""
    hostile = _hostile_requests(tmp_path, db)
    queue = RunQueue(db)
    for spec in hostile.values():   # written straight to the queue, past RunRequest.submit's check
        grid = Grid(datasets=[spec], encoders=["OH"], models=["LogReg"], scorings=["AUC"])
        queue.submit("run", {"run_id": grid.run_id, "grid": grid.to_dict(), "owner": new_owner_token()})
    assert serve(db, idle_exit=0, poll=0.01) == 0
    done = {r.payload["grid"]["datasets"][0]: r for r in queue.done()}
    assert set(done) == set(hostile.values())
    for spec, request in done.items():
        assert request.outcome == "failed", spec
        assert f"dataset {spec!r} is not a file uploaded through the app" in request.error
        assert SECRET not in request.error
    assert "SECRET" not in caplog.text                          # nor in the worker's log
    with Reader(db) as reader:
        assert reader.query("SELECT count(*) AS n FROM runs WHERE origin = 'local'")["n"].iloc[0] == 0


# -- hostile requests: a request file names what the worker imports ---------------------------------
PROBE = ("import pathlib\npathlib.Path(__file__).with_name('imported.marker').touch()\n"
         "class Encoder:\n    def fit(self, X, y=None):\n        return self\n"
         "    def transform(self, X):\n        return X\n")


def test_the_worker_imports_no_custom_encoder_but_an_installed_plugin(db, tmp_path, monkeypatch):
    """Issue 36.4 follow-up: a run request's custom encoder was imported from whatever path it
    named. Written straight to the queue, a request naming a module of its own (importing it
    leaves a marker; it is on the task processes' path) or ``os:system`` claiming to be a plugin
    is failed by the worker before anything is imported: the error names the encoder and its
    path, no marker appears, no run is recorded. An installed plugin still runs."""
    (tmp_path / "worker_probe.py").write_text(PROBE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    info = tmp_path / "site" / "freq_plugin-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: freq-plugin\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text("[encbench.encoders]\nFreqRank = tests.byo_encoders:make_frequency_rank\n")
    monkeypatch.syspath_prepend(str(info.parent))
    hostile = {"Probe": {"import": "worker_probe:Encoder"},
               "Shell": {"import": "os:system", "plugin": "FreqRank",
                         "params": {"command": f"touch {tmp_path / 'shell.marker'}"}}}
    queue = RunQueue(db)
    for name, spec in hostile.items():   # past RunRequest.submit's check
        grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], models=["DT"], scorings=["AUC"],
                    custom_encoders={name: spec})
        queue.submit("run", {"run_id": grid.run_id, "grid": grid.to_dict(), "owner": new_owner_token()})
    plugin = Grid(datasets=["bundled:tic-tac-toe"], encoders=[], models=["DT"], scorings=["AUC"], n_folds=2,
                  custom_encoders={"FreqRank": {"import": "tests.byo_encoders:make_frequency_rank"}})
    RunRequest(plugin, workers=0, owner=new_owner_token()).submit(queue)   # tasks in the worker
    assert serve(db, idle_exit=0, poll=0.01) == 0
    done = {next(iter(r.payload["grid"].get("custom_encoders", {}))): r for r in queue.done()}
    for name, spec in hostile.items():
        assert done[name].outcome == "failed"
        assert (f"custom encoder {name!r} ({spec['import']!r}) is not an installed encoder plugin: a run queued "
                f"from the app builds only the installed plugins (FreqRank = tests.byo_encoders:make_frequency_rank)"
                in done[name].error), done[name].error
    assert not list(tmp_path.glob("*.marker"))
    assert done["FreqRank"].outcome == "done", done["FreqRank"].error
    with Reader(db) as reader:
        runs = reader.query("SELECT run_id, status FROM runs WHERE origin = 'local'")
    assert runs.values.tolist() == [[plugin.run_id, "done"]]
