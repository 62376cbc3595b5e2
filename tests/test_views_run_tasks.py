"""A run's task types, for the Runs page's task filter (encbench.views.run_tasks)."""
from __future__ import annotations

import json

import pandas as pd

from encbench.views.run_tasks import config_of, grid_tasks, run_tasks, runs_of_task, task_label

DATASETS = pd.DataFrame({"dataset": ["31", "file:aa", "file:bb"], "task": ["binary", "regression", "multiclass"]})


def _runs(*rows):
    return pd.DataFrame(rows, columns=["run_id", "origin", "config"])


def test_a_loaded_run_is_of_its_datasets_tasks_and_a_mixed_one_of_each():
    runs = _runs(
        ("mixed", "local", json.dumps({"datasets": ["31", "a.csv"], "resolved_datasets": {
            "31": {"key": "31"}, "a.csv": {"key": "file:aa"}}})),
        # the dataset rows say what the target turned out to be, whatever the grid guessed
        ("loaded", "local", {"datasets": ["b.csv"], "dataset_options": {"b.csv": {"task": "binary"}},
                             "resolved_datasets": {"b.csv": {"key": "file:bb"}}}),
    )
    tasks = run_tasks(runs, DATASETS)
    assert tasks == {"mixed": ("binary", "regression"), "loaded": ("multiclass",)}
    assert task_label(tasks["mixed"]) == "binary, regression"
    assert runs_of_task(tasks, "binary") == ["mixed"]
    assert runs_of_task(tasks, "regression") == ["mixed"]
    assert runs_of_task(tasks, "multiclass") == ["loaded"]


def test_a_run_not_loaded_yet_is_known_by_its_grid_or_not_at_all():
    runs = _runs(
        ("asked", "local", {"datasets": ["p.csv"], "dataset_options": {"p.csv": {"task": "regression"}}}),
        ("bundled", "local", {"datasets": ["bundled:credit-g"]}),
        ("inferred", "local", {"datasets": ["31", "bundled:credit-g"]}),   # 31's target not read yet
        ("published-matteucci2023", "published", {"file": "x.parquet"}),
        ("encbench-own", "encbench", {"grid": {"datasets": ["bundled:irish"]}}),
        ("queued", "local", float("nan")),                                 # not in the database
        ("broken", "local", "{not json"),
    )
    requests = {"queued": {"datasets": ["q.csv"], "dataset_options": {"q.csv": {"task": "multiclass"}}}}
    tasks = run_tasks(runs, DATASETS, requests)
    assert tasks == {"asked": ("regression",), "bundled": ("binary",), "inferred": None,
                     "published-matteucci2023": ("binary",), "encbench-own": ("binary",),
                     "queued": ("multiclass",), "broken": None}
    # not known: listed under every task, never hidden
    assert runs_of_task(tasks, "regression") == ["asked", "inferred", "broken"]
    assert task_label(None) is None


def test_grid_tasks_and_config_of_refuse_what_they_cannot_read():
    assert grid_tasks({}) is None and grid_tasks({"datasets": []}) is None
    assert grid_tasks({"datasets": ["x"], "dataset_options": {"x": {"task": "ordinal"}}}) is None
    assert grid_tasks({"datasets": ["x"], "dataset_options": {"x": "regression"}}) is None
    assert config_of("[1, 2]") == {} and config_of(None) == {} and config_of('{"a": 1}') == {"a": 1}
