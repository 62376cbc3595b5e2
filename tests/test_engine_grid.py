"""Engine grid: normalisation, deterministic run ids, planning (no processes, no database)."""
from __future__ import annotations

import json

import pytest

from encbench import vocab
from encbench.data import DatasetError
from encbench.engine import Grid, Task, plan


def test_run_id_ignores_order_case_label_and_timeout():
    a = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "MT"], models=["LogReg"],
             scorings=["AUC", "BAcc"], tuning="no")
    b = Grid(datasets=["bundled:tic-tac-toe"], encoders="mt, oh", models=["logreg"],
             scorings=["bacc", "AUC", "AUC"], tuning="no", timeout=10, label="mine")
    assert a.run_id == b.run_id
    assert a.encoders == ("OH", "MT") and b.scorings == ("BAcc", "AUC")  # vocabulary order
    assert a.run_id != Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], models=["LogReg"],
                            scorings=["AUC", "BAcc"]).run_id
    assert a.run_id != Grid(**{**a.to_dict(), "n_folds": 3}).run_id
    assert a.run_id.startswith("local-")


def test_defaults_are_the_whole_vocabulary_and_none_means_all():
    g = Grid(datasets=["31"], encoders=None, models=None, scorings=None, timeout=None)
    assert g.encoders == vocab.ENCODERS and len(g.encoders) == 32
    assert g.models == vocab.MODELS and g.scorings == vocab.METRICS
    assert g.tuning == "no" and g.n_folds == 5 and g.timeout == 6000.0


def test_to_dict_round_trips_through_json():
    g = Grid(datasets=["x.csv:y", "bundled:credit-g"], encoders=["CB"], models=["DT"], scorings=["F1"],
             tuning="model", n_folds=3, timeout=60, label="demo",
             dataset_options={"x.csv:y": {"positive_class": "yes", "categorical": ["a", "b"]}})
    again = Grid(**json.loads(json.dumps(g.to_dict())))
    assert again == g and again.run_id == g.run_id
    assert g.load_options("x.csv:y") == {"categorical": ["a", "b"], "positive_class": "yes"}
    hash(g)  # frozen and hashable despite the options mapping


@pytest.mark.parametrize("kwargs, needle", [
    ({"encoders": ["OH", "XX"]}, "'XX'"),
    ({"models": ["RF"]}, "'RF'"),
    ({"scorings": ["MCC"]}, "'MCC'"),
    ({"tuning": "some"}, "'some'"),
    ({"n_folds": 1}, "1"),
    ({"timeout": -5}, "-5"),
    ({"datasets": []}, "[]"),
    ({"dataset_options": {"other.csv": {}}}, "'other.csv'"),
    ({"dataset_options": {"bundled:credit-g": {"sheet": 2}}}, "'sheet'"),
])
def test_bad_values_are_named(kwargs, needle):
    base = {"datasets": ["bundled:credit-g"]}
    with pytest.raises(ValueError) as info:
        Grid(**{**base, **kwargs})
    assert needle in str(info.value)


def test_plan_expands_tasks_and_counts_rows():
    g = Grid(datasets=["bundled:tic-tac-toe", "bundled:credit-g"], encoders=["OH", "MT", "CB"],
             models=["LogReg", "DT"], scorings=["AUC"], n_folds=4)
    p = plan(g)
    assert len(p.tasks) == 2 * 3 * 4
    assert p.n_expected == 2 * 3 * 2 * 1 * 4
    assert {t.dataset for t in p.tasks} == {"50", "31"}           # OpenML ids as keys
    assert p.tasks[0] == Task("50", "OH", 0, 4, ("DT", "LogReg"), ("AUC",), "no")
    assert set(p.by_key()) == {"50", "31"}


def test_plan_runs_a_dataset_once_when_two_references_name_it():
    p = plan(Grid(datasets=["bundled:credit-g", "31"], encoders=["OH"], models=["DT"], scorings=["AUC"]))
    assert list(p.datasets) == ["bundled:credit-g"] and len(p.tasks) == 5


def test_plan_lists_every_unusable_dataset(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,y\nx,1,0\n")
    g = Grid(datasets=["bundled:credit-g", f"{bad}:y", "bundled:nope"], encoders=["OH"])
    with pytest.raises(DatasetError) as info:
        plan(g)
    message = str(info.value)
    assert "2 of 3 datasets cannot be used" in message
    assert "bad.csv" in message and "'nope'" in message


def test_pending_skips_finished_and_narrows_models():
    p = plan(Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], models=["DT", "LogReg"],
                  scorings=["AUC", "BAcc"], n_folds=2))
    first, second = p.tasks
    finished = set(first.keys()) | {("50", "OH", "DT", "no", s, "cv", "binary", 1) for s in ("AUC", "BAcc")}
    todo = p.pending(finished)
    assert todo == [Task("50", "OH", 1, 2, ("LogReg",), ("BAcc", "AUC"), "no")]
    assert p.pending(set()) == list(p.tasks)


def test_grid_pickles():
    import pickle

    g = Grid(datasets=["x.csv:y"], dataset_options={"x.csv:y": {"categorical": ["a"]}})
    assert pickle.loads(pickle.dumps(g)) == g


def test_run_id_follows_what_the_datasets_resolve_to(tmp_path, monkeypatch):
    same = [Grid(datasets=[spec], encoders=["OH"]).run_id
            for spec in ("31", "openml:31", "bundled:credit-g", "bundled:31", "bundled:CREDIT-G")]
    assert len(set(same)) == 1
    assert Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"]).run_id != same[0]
    csv = tmp_path / "d.csv"
    csv.write_text("a,y\nx,0\n")
    monkeypatch.chdir(tmp_path)
    relative = Grid(datasets=["d.csv:y"], encoders=["OH"]).run_id
    assert relative == Grid(datasets=[f"{csv}:y"], encoders=["OH"]).run_id
    assert relative != Grid(datasets=[f"{csv}:a"], encoders=["OH"]).run_id
