"""The target and its task (encbench/data/target.py): the task a column reads as, the label-encoding order."""
from __future__ import annotations

import pandas as pd

from encbench.data.target import class_order, target_task


def test_target_task_names_the_task_of_a_target():
    assert target_task(pd.Series(["a", "b", None])) == "binary"
    assert target_task(pd.Series(["1.5", "2", "3"])) == "regression"      # numbers stored as text
    assert target_task(pd.Series(range(21))) == "regression"
    assert target_task(pd.Series(range(20))) == "multiclass"
    assert target_task(pd.Series([True, False, True])) == "binary"
    assert target_task(pd.Series([None, "x"])) == "single"


def test_class_order_is_the_label_encoding_order():
    assert class_order(pd.Series([10, 2, 2, None])) == ["2", "10"]   # numbers in numeric order
    assert class_order(pd.Series(["b", "a", "b"])) == ["a", "b"]
    assert class_order(pd.Series([1.0, 0.0])) == ["0", "1"]          # integral floats as integers
