"""Validation per task type: binary, multiclass and regression targets, inferred or asked for,
each problem with a message that names it, and nothing loaded from a bad file."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.data import DatasetError, load_dataset
from encbench.data.target import MAX_CLASSES
from encbench.data.validation import prepare, validate


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


def _written(value: float, group: str, decimal: str) -> str:
    """``value`` with 2 decimals as a spreadsheet of a locale writes it (thousands separated)."""
    return f"{value:,.2f}".replace(",", "\0").replace(".", decimal).replace("\0", group)


@pytest.mark.parametrize("group, decimal", [(",", "."), (".", ","), (" ", ","), ("'", "."), ("\u00a0", ",")])
def test_a_target_written_with_thousands_separators_gets_a_hint(group, decimal):
    """Issue 36.9: a regression target written with thousands separators ('63,541.48') was refused
    as '60 values that are not numbers' (or read as 60 classes) without a hint. The message names
    the column, a value as written and without separators, and what to do; classes accepted from
    such a column get the same words as a warning."""
    rng = np.random.default_rng(3)
    values = [_written(v, group, decimal) for v in [63541.48, *rng.uniform(1e3, 9e4, 59)]]
    written = values[0]
    hint = (f"target column 'y' of the data holds numbers written with thousands separators (e.g. "
            f"{written!r}), so it reads as text, not numbers: remove the separators in the file (write "
            f"'63541.48'")
    for task in ("regression", None, "binary"):
        report = validate(_frame(values), "y", task=task)
        assert any(e.startswith(hint) and "task='regression'" in e for e in report.errors), (task, report.errors)
    regression = validate(_frame(values), "y", task="regression").errors
    assert len(regression) == 1                       # the hint instead of "values that are not numbers"


def test_thousands_separators_in_accepted_classes_are_warned_and_plain_columns_are_not():
    """Classes read from numbers written with separators get the hint as a warning; a negative
    whole number is one too; text and plain numbers get no such words."""
    few = validate(_frame(["1,000", "2,500", "-10,000"] * 20), "y")     # accepted as 3 classes
    assert few.ok and few.task == "multiclass"
    assert any("thousands separators (e.g. '1,000')" in w and "(write '1000'" in w for w in few.warnings)
    rng = np.random.default_rng(4)
    for plain_values in (["a", "b", "1,000"] * 20, list(rng.normal(size=60)), ["1.5", "2.25", "3"] * 20):
        report = validate(_frame(plain_values), "y")
        assert not any("thousands" in m for m in report.errors + report.warnings), plain_values


def _leak_report(target, extra: dict, seed=0):
    frame = _frame(target, seed=seed)
    for name, values in extra.items():
        frame[name] = values
    return validate(frame, "y")


def test_leaks_of_a_multiclass_target_are_warned_and_proposed_for_leaving_out():
    """A multiclass target: a column mapping one-to-one onto it and one refining it (a sub-grade:
    predicts it alone, each class against the rest, weighted) are warned about and proposed; a
    column with one
    value per class but coarser than the classes is warned about as possibly a class property,
    not proposed; noise is neither."""
    rng = np.random.default_rng(2)
    y = np.array(["a", "b", "c"] * 40)
    report = _leak_report(y, {
        "code": np.char.add("k", y),                                   # one-to-one
        "sub": np.char.add(y, rng.choice(list("12345"), 120)),         # the class refined
        "family": np.where(y == "c", "f2", "f1"),                      # two classes share f1
    })
    assert "column 'code' maps one-to-one onto the target 'y' ('ka' -> 'a', 'kb' -> 'b', 'kc' -> 'c')" \
        in " ".join(report.warnings)
    assert any(w.startswith("column 'sub' alone predicts the target 'y' almost perfectly (single-feature "
                            "AUC of each class against the rest, weighted by the classes' shares 1.000")
               for w in report.warnings), report.warnings
    assert any(w.startswith("column 'family' takes a single value within each class of the target 'y' "
                            "('a' -> 'f1', 'b' -> 'f1', 'c' -> 'f2'): either the target recoded")
               for w in report.warnings), report.warnings
    assert set(report.suspect_columns) == {"code", "sub"}


def test_leaks_of_a_regression_target_are_warned_with_the_ranges_or_the_statistic():
    """A numeric target: a column cutting it into ranges that do not overlap (the target binned,
    invisible to a median split when the cut is elsewhere) is named with its ranges; a monotone
    copy is flagged by the statistic; a coarse noisy column is not."""
    rng = np.random.default_rng(3)
    y = np.round(rng.normal(7, 1.5, 200), 2)
    report = _leak_report(y, {"low": np.where(y < 5.5, "low", "not low"), "log": np.log(y - y.min() + 1),
                              "band": rng.choice(["p", "q"], 200)})
    lo = y[y < 5.5]
    assert (f"column 'low' cuts the target 'y' into ranges that do not overlap ('low': {y.min():.4g} to "
            f"{lo.max():.4g}; 'not low': {y[y >= 5.5].min():.4g} to {y.max():.4g}): it is the target "
            f"binned") in " ".join(report.warnings)
    assert any(w.startswith("column 'log' alone predicts the target 'y' almost perfectly (single-feature AUC "
                            "of the target above its median against the rest 1.000") for w in report.warnings)
    assert set(report.suspect_columns) == {"low", "log"}


def test_a_column_missing_exactly_for_one_class_is_a_leak_by_its_gaps():
    """Where a column is missing can leak as its values do: a measurement taken only for the
    positive class is flagged by its gaps, with the statistic."""
    rng = np.random.default_rng(4)
    y = np.array(["no", "yes"] * 60)
    report = _leak_report(y, {"followup": np.where(y == "yes", rng.normal(size=120), np.nan)})
    assert any(w.startswith("where column 'followup' is missing predicts the target 'y' almost perfectly "
                            "(single-feature AUC 1.000 >= 0.99, of its gaps)") for w in report.warnings)
    assert "followup" in report.suspect_columns
