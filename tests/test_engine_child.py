"""The task process (encbench/engine/child.py): what it imports before it is ready and before each
task, in real processes (a fresh interpreter, whose modules are its own)."""
from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from encbench.data import load_dataset
from encbench.engine.task_process import TaskProcess
from encbench.engine.protocol import Payload, imports_of
from encbench.engine.task import Task
from encbench.resources import subprocess_cwd, subprocess_env

#: In a fresh interpreter, as serve() does: import the task process's module, warm up for the
#: first task, run it, then warm up for each later task (as for a task of a later run) and run
#: it. Prints the modules imported at each step.
SCRIPT = """
import json, pickle, sys
import encbench.engine.child
from encbench.engine.protocol import imports_of, run_task, warm_up
data, tasks = pickle.load(open(sys.argv[1], "rb"))
steps = {"child": sorted(sys.modules)}
for index, task in enumerate(tasks):
    before = set(sys.modules)
    warm_up(imports_of([task]))
    steps[f"warm {index}"] = sorted(set(sys.modules) - before)
    before = set(sys.modules)
    rows = run_task(task, data)
    assert all(r["status"] == "ok" for r in rows), rows
    steps[f"run {index}"] = sorted(set(sys.modules) - before)
print(json.dumps(steps))
"""

#: the libraries of a task: none of their modules may be imported while it runs (its clock)
LIBRARIES = ("encbench", "sklearn", "scipy", "lightgbm", "skopt", "category_encoders", "narwhals", "pyarrow")


def _of(modules, *packages):
    return sorted(m for m in modules if m.split(".")[0] in packages or m.startswith(packages))


@pytest.fixture(scope="module")
def tictactoe():
    return Payload.from_dataset(load_dataset("bundled:tic-tac-toe"))


def test_a_task_imports_nothing_in_its_clock_and_the_process_only_what_its_tasks_use(tictactoe, tmp_path):
    """A task process imports neither the store (DuckDB), the runner, the grid nor the data
    readers; its warm-up for a task of LogReg with MT imports MT's module but neither LightGBM,
    scikit-optimize nor the CV wrappers; each task then imports no module of its libraries while
    it runs (its clocks): the first, and the later ones whose LightGBM, CV-wrapped encoder and
    full tuning's Bayesian search the warm-up before each imported."""
    tasks = [Task(tictactoe.key, "MT", 0, 5, ("LogReg",), ("AUC",), "no"),
             Task(tictactoe.key, "CVMT_5", 1, 5, ("LGBM",), ("AUC",), "no"),
             Task(tictactoe.key, "OH", 2, 5, ("DT",), ("AUC",), "full")]
    path = tmp_path / "tasks.pickle"
    path.write_bytes(pickle.dumps((tictactoe, tasks)))
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], capture_output=True, text=True,
                          env=subprocess_env(), cwd=subprocess_cwd(), timeout=600)
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)
    assert _of(steps["child"], "duckdb", "encbench.store", "encbench.engine.runner",
               "encbench.engine.grid", "encbench.data", "lightgbm", "skopt") == []
    assert "encbench.encoders.target" in steps["warm 0"]
    assert _of(steps["warm 0"], "lightgbm", "skopt", "encbench.encoders.wrappers") == []
    assert {"lightgbm", "encbench.encoders.wrappers"} <= set(steps["warm 1"]) and "skopt" in steps["warm 2"]
    for index in range(len(tasks)):
        assert _of(steps[f"run {index}"], *LIBRARIES) == []


def test_a_task_process_is_ready_with_the_libraries_its_parent_names(tictactoe):
    """TaskProcess(warm=...) hands the child what its tasks import: LightGBM's library is loaded
    before any task is sent, DuckDB's is not; a task then runs as usual."""
    task = Task(tictactoe.key, "OH", 0, 5, ("LGBM",), ("AUC",), "no")
    proc = TaskProcess(die_with_parent=True, warm=imports_of([task]))
    proc.start()
    try:
        maps = Path(f"/proc/{proc.proc.pid}/maps").read_text()
        assert "lib_lightgbm" in maps and "duckdb" not in maps
        (row,) = proc.run(task, tictactoe, 600.0)
        assert row["status"] == "ok" and 0.5 < row["cv_score"] <= 1.0
    finally:
        proc.stop()
