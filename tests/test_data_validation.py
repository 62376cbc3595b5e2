"""Protocol validation (docs/ARCHITECTURE.md, Protocol): one test per bad input, messages asserted."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.data import DatasetError, ValidationReport, load_dataset, validate, validate_file


def _frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "color": pd.Series(rng.choice(["red", "green", "blue"], n), dtype="str"),
        "size": rng.normal(size=n),
        "count": rng.integers(0, 5, n),
        "label": pd.Series(np.tile(["no", "yes"], n // 2), dtype="str"),
    })


def test_valid_frame_report():
    report = validate(_frame(), target="label")
    assert isinstance(report, ValidationReport)
    assert report.ok and report.errors == [] and report.warnings == []
    assert report.categorical == ["color"] and report.numerical == ["size", "count"]
    assert report.classes == {"no": 20, "yes": 20}
    assert report.positive_class == "yes" and report.n_rows == 40


def test_target_missing_names_file_and_columns(tmp_path):
    report = validate(_frame(), target="Label", source="f.csv")
    assert report.errors == [
        "target column 'Label' not in file 'f.csv' (did you mean 'label'?); columns are "
        "'color', 'size', 'count', 'label'"]
    path = tmp_path / "f.csv"
    _frame().to_csv(path, index=False)
    with pytest.raises(DatasetError, match=r"target column 'cls' not in file 'f.csv'; columns "
                                           r"are 'color', 'size', 'count', 'label'"):
        load_dataset(path, target="cls")
    with pytest.raises(DatasetError, match=r"no target column given for file 'f.csv'"):
        load_dataset(path)


def test_target_not_binary_lists_classes_with_counts():
    frame = _frame(60)
    frame["label"] = np.repeat(["a", "b", "c"], 20)
    frame.loc[:4, "label"] = "b"
    inferred = validate(frame, target="label")  # three classes: a multiclass target
    assert inferred.ok and inferred.task == "multiclass"
    report = validate(frame, target="label", task="binary")
    assert report.errors == [
        "target column 'label' has 3 classes, a binary target needs exactly 2: 'b' (25 rows), "
        "'c' (20 rows), 'a' (15 rows). This is a multiclass target: load it with task='multiclass' "
        "(or leave the task to be inferred), or merge its classes into two in the file (e.g. one "
        "class against the rest)"]
    assert report.classes == {"a": 15, "b": 25, "c": 20}
    frame["label"] = "only"
    assert validate(frame, target="label").errors == [
        "target column 'label' has 1 class, a binary target needs exactly 2: 'only' (60 rows)"]


def test_a_numeric_target_is_named_a_regression_target_not_a_count_of_classes():
    frame = _frame(40)
    frame["label"] = np.arange(40) / 4
    assert validate(frame, target="label").task == "regression"
    (message,) = validate(frame, target="label", task="binary").errors
    assert message == ("target column 'label' is numeric with 40 distinct values (from 0 to 9.75): a "
                       "regression target, not a binary one; load it with task='regression' (or leave "
                       "the task to be inferred), or make it binary in the file (e.g. above or below a "
                       "threshold)")
    frame["label"] = np.arange(40) % 25                          # 25 whole numbers: regression too
    assert validate(frame, target="label").task == "regression"
    assert "is numeric with 25 distinct values (from 0 to 24)" in validate(
        frame, target="label", task="binary").errors[0]
    frame["label"] = (np.arange(40) % 4).astype(str)             # 4 codes stored as text: classes
    assert validate(frame, target="label").task == "multiclass"
    (message,) = validate(frame, target="label", task="binary").errors
    assert message.startswith("target column 'label' has 4 classes") and "multiclass target" in message


def test_class_with_fewer_rows_than_two_per_fold():
    frame = _frame(40)
    frame["label"] = ["yes"] * 7 + ["no"] * 33
    report = validate(frame, target="label")
    assert report.errors == [
        "class 'yes' of target 'label' has 7 rows; 5-fold cross-validation needs at least 10 "
        "(2 per fold)"]
    assert validate(frame, target="label", n_folds=3).ok
    with pytest.raises(ValueError, match="n_folds must be an integer >= 2, got 1"):
        validate(frame, target="label", n_folds=1)


def test_no_categorical_column_and_the_override():
    frame = _frame().drop(columns="color")
    report = validate(frame, target="label")
    assert report.errors == [
        "no categorical column: every feature of the data is numeric ('size', 'count'); the "
        "benchmark compares categorical encoders, so at least one column must be categorical "
        "(list columns to treat as categorical)"]
    report = validate(frame, target="label", categorical=["count"])
    assert report.ok and report.categorical == ["count"] and report.numerical == ["size"]


def test_categorical_override_errors():
    frame = _frame()
    frame["code"] = pd.Series(["1", "2", "x"] * 13 + ["4"], dtype="str")
    frame["digits"] = pd.Series(["1", "2.5", "3"] * 13 + ["7"], dtype="str")
    report = validate(frame, target="label", categorical=["color", "nope"])
    assert "categorical column(s) 'nope' not in the data; columns are 'color', 'size', " \
           "'count', 'label', 'code', 'digits'" in report.errors
    assert "column 'code' is not numeric (e.g. 'x') but is not listed as categorical; list it " \
           "or drop it" in report.errors
    assert len(report.errors) == 2  # 'digits' holds numbers: converted, not an error
    report = validate(frame, target="label", categorical=["color", "code", "label"])
    assert report.ok and report.numerical == ["size", "count", "digits"]
    assert report.warnings == ["the target 'label' was listed as categorical; ignored"]


def test_duplicate_column_names_in_a_frame():
    frame = _frame()
    frame.columns = ["color", "size", "color", "label"]
    report = validate(frame, target="label", source="d.csv")
    assert report.errors == ["duplicate column names in file 'd.csv': 'color' (columns 1 and 3); "
                             "column names must be unique"]


def test_id_like_columns_are_warnings():
    frame = _frame()
    frame["customer"] = pd.Series([f"C{i:03d}" for i in range(40)], dtype="str")
    frame["row"] = np.arange(40)
    frame["noise"] = np.random.default_rng(1).normal(size=40)  # unique floats are not IDs
    report = validate(frame, target="label")
    assert report.ok
    assert report.warnings == [
        "column 'customer' looks like an ID: all 40 values are unique, so encoders cannot learn "
        "from it; consider dropping it",
        "column 'row' looks like an ID: all 40 values are unique, so encoders cannot learn from "
        "it; consider dropping it"]


def test_leakage_warnings():
    frame = _frame()
    frame["copy"] = frame["label"]
    frame["flag"] = np.where(frame["label"] == "yes", 1.0, 0.0)
    report = validate(frame, target="label")
    assert report.ok
    assert report.warnings == [
        "column 'copy' is identical to the target 'label': it leaks the answer; drop it",
        "column 'flag' maps one-to-one onto the target 'label' ('0' -> 'no', '1' -> 'yes'): "
        "it leaks the answer; drop it"]


def test_missing_targets_and_empty_rows_and_columns_are_dropped():
    frame = _frame(44)
    frame["empty"] = np.nan
    frame.loc[[0, 1], "label"] = np.nan
    frame.loc[[2, 3], ["color", "size", "count"]] = np.nan
    report = validate(frame, target="label")
    assert report.ok and report.n_rows == 40 and report.dropped_rows == 4
    assert report.dropped_columns == ["empty"] and "empty" not in report.numerical
    assert report.warnings == ["dropped 2 rows whose target 'label' is missing",
                               "dropped 1 entirely empty columns: 'empty'",
                               "dropped 2 rows whose features are all missing"]


def test_positive_class_default_is_second_in_sorted_order(tmp_path):
    frame = _frame()
    frame["label"] = np.tile(["good", "bad"], 20)
    path = tmp_path / "credit.csv"
    frame.to_csv(path, index=False)
    ds = load_dataset(f"{path}:label")
    assert ds.positive_class == "good" and ds.classes == ("bad", "good")
    assert ds.y.dtype == np.int64 and ds.y.tolist() == [1, 0] * 20
    ds = load_dataset(path, target="label", positive_class="bad")
    assert ds.positive_class == "bad" and ds.y.tolist() == [0, 1] * 20
    ds = load_dataset(f"{path}:label:bad")
    assert ds.positive_class == "bad"
    # Numbers sort as numbers (LabelEncoder on the values): 10 > 2.
    frame["label"] = np.tile([2, 10], 20)
    assert validate(frame, target="label").positive_class == "10"
    assert validate(frame, target="label", positive_class=2).positive_class == "2"
    assert validate(frame, target="label", positive_class="2").positive_class == "2"
    report = validate(frame, target="label", positive_class="3")
    assert report.errors == ["positive class '3' is not a class of target 'label'; classes are "
                             "'2' (20 rows), '10' (20 rows)"]


def test_dataset_features_and_types(tmp_path):
    frame = _frame()
    frame["code"] = np.tile([1.0, 2.0, np.nan, 4.0], 10)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    ds = load_dataset(path, target="label", categorical=["color", "code"])
    assert list(ds.X.columns) == ["color", "size", "count", "code"]
    assert ds.categorical == ["color", "code"] and ds.numerical == ["size", "count"]
    assert ds.X["code"].tolist()[:3] == ["1", "2", ds.X["code"][2]] and pd.isna(ds.X["code"][2])
    assert pd.api.types.is_string_dtype(ds.X["code"]) and ds.n_categorical == 2


def test_load_dataset_lists_every_error(tmp_path):
    frame = _frame().drop(columns="color")
    frame["label"] = ["a"] * 5 + ["b"] * 35
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DatasetError) as info:
        load_dataset(path, target="label")
    assert len(info.value.errors) == 2
    text = str(info.value)
    assert text.startswith("dataset 'bad.csv' cannot be used (2 problems):\n- ")
    assert "- class 'a' of target 'label' has 5 rows" in text
    assert "- no categorical column" in text


def test_validate_file_reports_read_errors_without_raising(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2,3\n")
    report = validate_file(path, target="b", label="upload.csv")
    assert not report.ok
    assert report.errors[0].startswith("cannot parse CSV file 'upload.csv': gave up at line 2")
    _frame().to_csv(path, index=False)
    assert validate_file(path, target="label").ok
    assert "over the 0.0001 MB size limit" in validate_file(path, "label", max_bytes=100).errors[0]


@pytest.mark.parametrize("frame", [pd.DataFrame({"y": []}), pd.DataFrame(index=range(3))])
def test_a_table_without_rows_or_columns_is_reported_not_a_crash(frame):
    from encbench.data.validation import prepare

    report = validate(frame, "y")  # was an AttributeError: prepare returned the bare report
    assert not report.ok and "the data has no data (rows: " in report.errors[0]
    prepared = prepare(frame, "y")
    assert prepared.report == report and prepared.X is None and prepared.y is None


def test_id_like_columns_are_judged_on_every_row_not_on_the_rows_a_target_leaves():
    """profb with its last column as target: 640 of 672 rows lack it; on the 32 left, 28 team
    names look like IDs, on all 672 rows they do not."""
    from profb import profb_frame

    frame = profb_frame()
    report = validate(frame, "Overtime")
    assert report.n_rows == 32 and report.dropped_rows == 640
    assert any("has 1 class" in e for e in report.errors)
    assert not [w for w in report.warnings if "looks like an ID" in w]
    few = validate(frame.dropna(subset=["Overtime"]), "Overtime")   # the same 32 rows as a file
    assert "Favorite_Name" in few.suspect_columns


def test_leak_warnings_on_a_wide_table():
    rng = np.random.default_rng(5)
    n, k = 300, 400
    label = np.tile(["no", "yes"], n // 2)
    frame = pd.DataFrame({f"c{j}": pd.Series(rng.choice(list("abcd"), n), dtype="str") for j in range(k)})
    frame["after"] = np.where(label == "yes", 2.0, 0.0) + rng.normal(0, 0.01, n)
    frame["label"] = pd.Series(label, dtype="str")
    report = validate(frame, target="label")
    leaks = [w for w in report.warnings if "single-feature AUC" in w]
    assert len(leaks) == 1 and leaks[0].startswith("column 'after' alone predicts the target 'label'")
    assert report.suspect_columns == ["after"]


def test_too_many_columns_are_refused_before_any_check(monkeypatch):
    from encbench.data import readers

    frame = _frame()
    monkeypatch.setattr(readers, "MAX_COLUMNS", 3)
    report = validate(frame, target="label", source="wide.csv")
    assert report.errors == ["file 'wide.csv' has 4 columns, over the limit of 3 columns; keep the columns "
                             "you need"]
    assert report.categorical == [] and report.warnings == []
    monkeypatch.setattr(readers, "MAX_COLUMNS", 4)
    assert validate(frame, target="label").ok


def test_target_classes_differing_only_in_spaces_are_refused_naming_both():
    frame = _frame()
    frame["label"] = pd.Series(np.where(frame["label"] == "no", " yes", "yes"), dtype="str")  # two classes
    report = validate(frame, target="label", source="f.csv")
    assert report.errors == [
        "target column 'label' has classes that differ only in leading or trailing spaces: ' yes' (20 rows) and "
        "'yes' (20 rows); they are most likely one class: strip the spaces in the file (or rename one class if "
        "they truly differ)"]
    frame.loc[frame["label"] == " yes", "label"] = "no"
    assert validate(frame, target="label").ok


def test_short_rows_are_a_warning_naming_the_file_the_count_and_the_lines(tmp_path):
    """Rows padded by the reader are reported, never silent: the file, how many rows, the
    header's fields and the lines, in the singular for one row."""
    path = tmp_path / "short.csv"
    body = "".join(f"{c},{i % 2}\n" for i, c in enumerate("abcabcabcabcabcabcab"))
    path.write_text("color,label,size\n" + body)
    warnings = validate_file(path, target="label").warnings
    assert any(w.startswith("20 rows have fewer fields than the header of file 'short.csv' (3): "
                            "their last cells were read as missing values (line 2, 3, 4, 5, 6, ...)")
               for w in warnings), warnings
    path.write_text("color,label,size\n" + "".join(f"{c},{i % 2},1\n" for i, c in enumerate("abcabcabcabcabcabcab"))
                    + "a,1\n")
    warnings = validate_file(path, target="label").warnings
    assert any(w.startswith("1 row has fewer fields than the header of file 'short.csv' (3): its "
                            "last cells were read as missing values (line 22); check") for w in warnings), warnings
