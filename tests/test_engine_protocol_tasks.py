"""The protocol beyond binary targets: regression folds that ignore a sorted file's order,
multiclass and regression tasks scored as an independent pipeline scores them, tuning and
early stopping for every task, WoE not applicable."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.metrics import accuracy_score, f1_score, mean_absolute_error, roc_auc_score
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import RobustScaler

from encbench.data import dataset_from_frame
from encbench.engine.grid import Grid, Task, plan
from encbench.engine.protocol import REGRESSION_FOLD_SEED, Payload, fold_indices, run_task


def _table(n: int, task: str, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    colour = rng.choice([f"c{i}" for i in range(8)], n)
    size = rng.normal(size=n)
    effect = pd.Series(colour).str[1:].astype(int).to_numpy()
    if task == "regression":
        y = effect * 1.5 + size + rng.normal(scale=0.5, size=n)
    else:
        y = np.array(["low", "mid", "top"])[np.clip((effect + size * 2) // 3, 0, 2).astype(int)]
    return pd.DataFrame({"colour": colour, "size": size, "y": y})


def test_regression_folds_of_a_file_sorted_by_the_target_mix_the_target_range():
    y = np.sort(np.random.default_rng(3).normal(size=200))
    quartiles = np.quantile(y, [0.25, 0.75])
    tests = [fold_indices(y, 5, k, task="regression")[1] for k in range(5)]
    assert sorted(np.concatenate(tests).tolist()) == list(range(200))
    for test in tests:  # every test fold holds low and high targets, not one range
        assert (y[test] < quartiles[0]).any() and (y[test] > quartiles[1]).any()
    expected = list(KFold(5, shuffle=True, random_state=REGRESSION_FOLD_SEED).split(np.zeros(200)))
    assert all(np.array_equal(t, e[1]) for t, e in zip(tests, expected))
    # classification keeps the published unshuffled stratified folds
    classes = np.repeat([0, 1, 2], 20)
    published = list(StratifiedKFold(5).split(np.zeros(60), classes))
    assert np.array_equal(fold_indices(classes, 5, 2, task="multiclass")[1], published[2][1])


def _independent(frame, task, fold, model, encoder):
    """The fold's test predictions from a pipeline built here by hand."""
    from encbench.encoders import make_encoder
    from encbench.models import get_model

    X, y_text = frame[["colour", "size"]], frame["y"]
    if task == "regression":
        y = y_text.to_numpy(dtype=float)
        splitter = KFold(5, shuffle=True, random_state=1444)
    else:
        y = pd.Index(sorted(y_text.unique())).get_indexer(y_text)
        splitter = StratifiedKFold(5)
    train, test = list(splitter.split(np.zeros(len(y)), y))[fold]
    prep = ColumnTransformer([
        ("categorical", Pipeline([("impute", SimpleImputer(strategy="most_frequent").set_output(transform="pandas")),
                                  ("encode", make_encoder(encoder, task=task))]), ["colour"]),
        ("numerical", Pipeline([("impute", SimpleImputer(strategy="median")), ("scale", RobustScaler())]),
         ["size"]),
    ])
    estimator = Pipeline([("prep", prep), ("model", get_model(model).make(task=task))])
    estimator.fit(X.iloc[train], y[train])
    return estimator, X.iloc[test], y[test]


def test_a_multiclass_task_scores_macro_metrics_on_one_column_per_class():
    frame = _table(150, "multiclass")
    dataset = dataset_from_frame(frame, "y", name="three")
    assert dataset.task == "multiclass"
    task = Task(dataset.key, "MT", 1, 5, ("DT", "LogReg"), ("Acc", "F1", "AUC"), "no",
                task="multiclass")
    rows = {(r["model"], r["scoring"]): r for r in run_task(task, Payload.from_dataset(dataset))}
    assert all(r["status"] == "ok" and r["task"] == "multiclass" for r in rows.values()), rows
    for model in ("DT", "LogReg"):
        estimator, X_test, y_test = _independent(frame, "multiclass", 1, model, "MT")
        labels, matrix = estimator.predict(X_test), estimator.predict_proba(X_test)
        assert rows[(model, "Acc")]["cv_score"] == pytest.approx(accuracy_score(y_test, labels))
        assert rows[(model, "F1")]["cv_score"] == pytest.approx(f1_score(y_test, labels, average="macro"))
        assert rows[(model, "AUC")]["cv_score"] == pytest.approx(
            roc_auc_score(y_test, matrix, multi_class="ovr", average="macro"))


def test_a_regression_task_scores_errors_of_a_regressor():
    frame = _table(150, "regression")
    dataset = dataset_from_frame(frame, "y", name="amounts")
    assert dataset.task == "regression"
    task = Task(dataset.key, "GLMM", 3, 5, ("Ridge", "DT"), ("RMSE", "MAE", "R2"), "no",
                task="regression")
    rows = {(r["model"], r["scoring"]): r for r in run_task(task, Payload.from_dataset(dataset))}
    assert all(r["status"] == "ok" for r in rows.values()), rows
    for model in ("Ridge", "DT"):
        estimator, X_test, y_test = _independent(frame, "regression", 3, model, "GLMM")
        predicted = estimator.predict(X_test)
        assert rows[(model, "MAE")]["cv_score"] == pytest.approx(mean_absolute_error(y_test, predicted))
        assert rows[(model, "RMSE")]["cv_score"] == pytest.approx(
            float(np.sqrt(np.mean((y_test - predicted) ** 2))))
    assert rows[("Ridge", "R2")]["cv_score"] > 0.5  # colour carries most of the signal


@pytest.mark.parametrize("kind", ["multiclass", "regression"])
def test_tuning_and_early_stopping_work_for_every_task(kind):
    dataset = dataset_from_frame(_table(120, kind, seed=5), "y", name=kind)
    scoring = ("RMSE",) if kind == "regression" else ("BAcc",)
    payload = Payload.from_dataset(dataset)
    for tuning, models in (("no", ("LGBM", "HGB")), ("model", ("kNN",))):
        task = Task(dataset.key, "CVMT_5", 0, 5, models, scoring, tuning, task=kind)
        rows = run_task(task, payload)
        assert [r["status"] for r in rows] == ["ok"] * len(models), rows


def test_woe_is_not_applicable_to_a_regression_dataset(tmp_path):
    path = tmp_path / "amounts.csv"
    _table(60, "regression").to_csv(path, index=False)
    grid = Grid(datasets=[f"{path}:y"], encoders=["OH", "WoE"], models=None, scorings=None)
    the_plan = plan(grid)
    (dataset,) = the_plan.datasets.values()
    assert the_plan.not_applicable_tasks == ((dataset.key, "WoE", "regression"),)
    assert {t.encoder for t in the_plan.tasks} == {"OH"}
    # the grid's defaults stand for every model and metric of the task
    assert the_plan.tasks[0].models == ("DT", "LGBM", "SVM", "kNN", "HGB", "Ridge")
    assert the_plan.tasks[0].scorings == ("RMSE", "MAE", "R2")
    assert the_plan.n_expected == 5 * 6 * 3
