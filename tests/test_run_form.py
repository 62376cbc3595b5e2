"""The Run page's form (encbench/run_form.py): its counts, its refusals, and the runs it queues."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.engine.grid import Grid
from encbench.engine.queue import RunQueue, upload_dir
from encbench.engine.queue_requests import RunRequest
from encbench.run_form import RunForm, positive_class_choice


@pytest.fixture()
def queue(tmp_path):
    return RunQueue(tmp_path / "q.duckdb")


def test_the_positive_class_is_offered_for_a_binary_target_only():
    assert positive_class_choice(pd.Series(["yes", "no", "yes", None])) == (["no", "yes"], 1)
    assert positive_class_choice(pd.Series([1, 0, 1])) == (["0", "1"], 1)   # label-encoding order
    assert positive_class_choice(pd.Series(["a", "b", "c"])) is None
    assert positive_class_choice(pd.Series(["a", "a"])) is None


def _form(**kwargs):
    choices = dict(encoders=["OH", "MT"], models=["LogReg", "DT"], scorings=["AUC"], tuning="no", timeout=60.0,
                   workers=1)
    return RunForm(**{**choices, **kwargs})


def test_the_form_counts_what_it_queues():
    """Encoders, experiments, fold tasks and rows per run, as the run computes them."""
    form = _form(bundled="tic-tac-toe")
    assert (form.n_encoders, form.n_experiments, form.n_runs) == (2, 4, 1)
    assert (form.fold_tasks, form.result_rows) == (2 * Grid.n_folds, 4 * Grid.n_folds)
    assert form.splits == [("cv", 0)] and form.missing() == []
    assert _form(bundled="tic-tac-toe", encoders=[], scorings=[]).missing() == ["encoders", "metrics"]
    both = _form(upload=object(), target="label", evaluation="both", time_column="day", gap=2)
    assert both.n_runs == 2 and both.splits == [("cv:day", 0), ("time:day", 2)]
    # WoE is not applicable beyond binary targets: a regression run computes it for no row
    regression = _form(upload=object(), target="y", task="regression", encoders=["OH", "WoE", "MT"],
                       models=["Ridge"], scorings=["RMSE", "MAE"])
    assert (regression.n_encoders, regression.n_experiments, regression.result_rows) == (2, 4, 4 * Grid.n_folds)
    assert _form(upload=object(), target="y", encoders=["OH", "WoE"]).n_encoders == 2   # binary
    # Native runs with the models that take categories only: the pairs it skips are not counted
    native = _form(upload=object(), target="y", task="multiclass", encoders=["OH", "Native"],
                   models=["LogReg", "LGBM", "DT", "HGB"], scorings=["Acc", "AUC", "F1"])
    assert native.models_of == {"OH": ("LogReg", "LGBM", "DT", "HGB"), "Native": ("LGBM", "HGB")}
    assert native.partial_encoders == {"Native": ("LGBM", "HGB")}
    assert (native.n_encoders, native.n_experiments, native.fold_tasks, native.result_rows) == \
        (2, (4 + 2) * 3, 2 * Grid.n_folds, (4 + 2) * 3 * Grid.n_folds)
    alone = _form(bundled="tic-tac-toe", encoders=["Native"], models=["LogReg"])
    assert (alone.n_encoders, alone.n_experiments, alone.fold_tasks) == (0, 0, 0)
    assert alone.idle_encoders == {"Native": ("LGBM", "HGB")}      # the models it would run with
    woe = _form(upload=object(), target="y", task="regression", encoders=["WoE", "OH"], models=["Ridge"],
                scorings=["RMSE"])
    assert woe.idle_encoders == {"WoE": ()}                          # not defined beyond binary targets


@pytest.mark.parametrize("kwargs, message", [
    ({}, "one of the two"),
    ({"bundled": "tic-tac-toe", "upload": object()}, "one of the two"),
    ({"upload": object()}, "target"),
    ({"bundled": "tic-tac-toe", "evaluation": "time", "time_column": "day"}, "stratified folds"),
    ({"upload": object(), "target": "y", "evaluation": "weekly"}, "'weekly'"),
    ({"upload": object(), "target": "y", "evaluation": "time"}, "time column"),
    ({"bundled": "tic-tac-toe", "workers": -1}, "workers"),
])
def test_the_form_names_a_bad_choice(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _form(**kwargs)


def test_a_bundled_form_queues_the_bundled_request(queue):
    grids = _form(bundled="tic-tac-toe").submit(queue)
    expected = RunRequest.bundled("tic-tac-toe", encoders=["OH", "MT"], models=["LogReg", "DT"], scorings=["AUC"],
                                  tuning="no", timeout=60.0, workers=1)
    assert [g.run_id for g in grids] == [expected.run_id]
    (pending,) = queue.pending()
    assert RunRequest.from_payload(pending.payload) == expected
    with pytest.raises(ValueError, match="choose at least one of: models"):
        _form(bundled="tic-tac-toe", models=[]).submit(queue)


def test_an_upload_form_queues_one_run_per_split(tmp_path):
    from encbench.uploads import queue_upload_run, stage_upload

    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"day": np.arange(n), "colour": rng.choice(["red", "green", "blue"], n),
                          "label": np.tile(["no", "yes"], n // 2)})
    db = tmp_path / "e.duckdb"
    staged = stage_upload(frame.to_csv(index=False).encode(), "days.csv", db_path=db)
    queue = RunQueue(db)
    form = _form(upload=staged, target="label", positive_class="yes", evaluation="both", time_column="day",
                 encoders=["OH"], models=["LogReg"])
    grids = form.submit(queue)
    assert [g.split for g in grids] == ["cv:day", "time:day"]
    assert [r.run_id for r in queue.pending()] == [g.run_id for g in grids]
    # the same runs as the upload's own path queues for each split (resubmitting resumes them)
    direct = [queue_upload_run(staged, target="label", positive_class="yes", encoders=["OH"], models=["LogReg"],
                               scorings=["AUC"], tuning="no", timeout=60.0, db_path=db, workers=1,
                               split=split, gap=gap) for split, gap in form.splits]
    assert [g.run_id for g in direct] == [g.run_id for g in grids]


def test_the_form_refuses_a_custom_encoder_before_storing_the_upload(tmp_path):
    """An upload's form with a custom encoder that is no plugin stores no file and queues nothing."""
    from encbench.custom import CustomEncoder
    from encbench.uploads import stage_upload

    frame = pd.DataFrame({"colour": ["red", "green", "blue", "red"] * 10, "label": ["no", "yes"] * 20})
    db = tmp_path / "e.duckdb"
    staged = stage_upload(frame.to_csv(index=False).encode(), "colours.csv", db_path=db)
    queue = RunQueue(db)
    form = _form(upload=staged, target="label", custom_encoders=[CustomEncoder("Shell", "os:system")])
    with pytest.raises(ValueError, match="custom encoder 'Shell' \\('os:system'\\) is not an installed"):
        form.submit(queue)
    assert queue.pending() == []
    assert not upload_dir(db).exists() or not any(upload_dir(db).iterdir())


def test_the_form_s_counts_are_the_plan_s():
    """What the Run page announces is what the run's plan holds: its fold tasks and expected
    result rows, Native's pairs with models that do not take categories left out of both."""
    from encbench.engine import plan

    form = _form(bundled="tic-tac-toe", encoders=["OH", "Native", "MT"], models=["LogReg", "LGBM", "DT"],
                 scorings=["AUC", "F1"])
    grid_plan = plan(Grid(datasets=["bundled:tic-tac-toe"], encoders=form.encoders, models=form.models,
                          scorings=form.scorings))
    assert (form.fold_tasks, form.result_rows) == (len(grid_plan.tasks), grid_plan.n_expected) == \
        (3 * Grid.n_folds, (3 + 1 + 3) * 2 * Grid.n_folds)
