"""Validation per task type: binary, multiclass and regression targets, inferred or asked for,
each problem with a message that names it, and nothing loaded from a bad file."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.data import DatasetError, load_dataset
from encbench.data.validation import MAX_CLASSES, prepare, validate


def _frame(target, n=None, seed=0):
    n = len(target) if n is None else n
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"colour": rng.choice(list("abcd"), n), "size": rng.normal(size=n),
                         "y": target})


def test_the_task_is_inferred_from_the_target():
    assert validate(_frame(["no", "yes"] * 20), "y").task == "binary"
    assert validate(_frame(["a", "b", "c"] * 20), "y").task == "multiclass"
    assert validate(_frame(np.linspace(0, 1, 60)), "y").task == "regression"
    # whole numbers: a few distinct values are classes, many are a quantity
    assert validate(_frame(list(range(5)) * 12), "y").task == "multiclass"
    assert validate(_frame(list(range(30)) * 2), "y").task == "regression"


def test_a_multiclass_target_is_coded_in_class_order():
    prepared = prepare(_frame(["b", "c", "a"] * 10), "y")
    assert prepared.report.task == "multiclass" and prepared.report.positive_class is None
    assert prepared.classes == ("a", "b", "c")
    assert prepared.y.tolist() == [1, 2, 0] * 10 and prepared.y.dtype == np.int64


def test_a_regression_target_is_a_float_and_an_override_wins():
    values = [0, 1, 2, 3, 4] * 12  # inferred multiclass ...
    prepared = prepare(_frame(values), "y", task="regression")  # ... asked for as regression
    assert prepared.report.task == "regression" and prepared.classes == ()
    assert prepared.y.dtype == np.float64 and prepared.y.tolist() == [float(v) for v in values]


def test_a_class_with_fewer_rows_than_folds_is_named():
    target = ["a"] * 20 + ["b"] * 20 + ["rare"] * 3
    report = validate(_frame(target), "y", n_folds=5)
    assert not report.ok
    assert any("'rare' (3 rows)" in e and "fewer rows than the 5 folds" in e and "merge" in e
               for e in report.errors), report.errors


def test_more_than_fifty_classes_are_refused():
    target = [f"c{i}" for i in range(MAX_CLASSES + 1)] * 6
    report = validate(_frame(target), "y")
    assert any(f"{MAX_CLASSES + 1} classes, over the limit of {MAX_CLASSES}" in e
               for e in report.errors), report.errors


def test_regression_targets_with_text_infinity_or_one_value_are_refused():
    text = validate(_frame(["1.5", "2.5", "high"] * 10), "y", task="regression")
    assert any("not numbers: 'high'" in e for e in text.errors), text.errors
    infinite = validate(_frame([1.0, 2.0, np.inf] * 10), "y", task="regression")
    assert any("10 infinite values" in e for e in infinite.errors), infinite.errors
    constant = validate(_frame([2.5] * 30), "y", task="regression")
    assert any("is constant (2.5 in every row)" in e for e in constant.errors), constant.errors


def test_rows_with_a_missing_target_are_dropped_and_counted():
    target = list(np.linspace(0, 10, 40)) + [np.nan] * 3
    report = validate(_frame(target), "y")
    assert report.ok and report.task == "regression"
    assert report.dropped_rows == 3 and report.n_rows == 40
    assert any("dropped 3 rows whose target 'y' is missing" in w for w in report.warnings)


def test_a_binary_request_of_another_target_says_which_task_it_is():
    report = validate(_frame(["a", "b", "c"] * 20), "y", task="binary")
    assert any("task='multiclass'" in e for e in report.errors), report.errors
    report = validate(_frame(np.linspace(0, 1, 60)), "y", task="binary")
    assert any("task='regression'" in e for e in report.errors), report.errors
    report = validate(_frame(["a", "b"] * 20), "y", task="multiclass")
    assert any("task='binary'" in e for e in report.errors), report.errors


def test_load_dataset_carries_the_task(tmp_path):
    path = tmp_path / "prices.csv"
    _frame(np.round(np.linspace(1, 50, 60), 2)).to_csv(path, index=False)
    dataset = load_dataset(f"{path}:y")
    assert dataset.task == "regression" and dataset.positive_class is None
    assert dataset.as_record()["task"] == "regression"


def test_load_dataset_refuses_a_multiclass_request_over_the_limit(tmp_path):
    path = tmp_path / "prices.csv"
    _frame(np.round(np.linspace(1, 50, 60), 2)).to_csv(path, index=False)
    with pytest.raises(DatasetError, match="over the limit of 50"):
        load_dataset(f"{path}:y", task="multiclass")
    with pytest.raises(DatasetError, match="published binary task"):
        load_dataset("bundled:tic-tac-toe", task="regression")
