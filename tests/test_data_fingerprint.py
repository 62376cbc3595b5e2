"""A local copy of a published dataset is recognised by content and stored under its OpenML id."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.data import BUNDLED_DIR, dataset_from_frame, load_dataset, read_table
from encbench.data.fingerprint import (
    column_key, fingerprint, label_key, match_published, published_fingerprints,
)

TICTACTOE = BUNDLED_DIR / "50_tic-tac-toe.arff"
CREDIT_APPROVAL = BUNDLED_DIR / "29_credit-approval.arff"  # has '?' missing cells


@pytest.fixture(scope="module")
def tictactoe() -> pd.DataFrame:
    return read_table(TICTACTOE)


def test_shipped_fingerprints_cover_31_published_datasets_with_their_published_keys():
    known = published_fingerprints()
    assert len(known) == 31
    keys = {d.key for d in known}
    assert {"470", "6332", "31", "50"} <= keys
    bands = next(d for d in known if d.key == "6332")
    assert bands.name == "cylinder-bands" and bands.fingerprint.n_rows == 540
    assert {"timestamp", "cylinder_number"} <= bands.fingerprint.columns
    assert dict(bands.fingerprint.class_counts) == {"band": 228, "noband": 312}


def test_a_copy_is_recognised_whatever_the_column_order_quoting_and_missing_marker(tictactoe, tmp_path):
    rng = np.random.default_rng(0)
    shuffled = tictactoe[list(rng.permutation(tictactoe.columns))]
    quoted = shuffled.rename(columns=lambda c: f"'{c}'")
    assert match_published(tictactoe, "Class").key == "50"
    assert match_published(shuffled, "Class").key == "50"
    assert match_published(quoted, "'Class'").key == "50"
    path = tmp_path / "copy.csv"
    quoted.to_csv(path, index=False)
    ds = load_dataset(f"{path}:Class")  # the reader unquotes OpenML's header
    assert ds.key == "50" and ds.openml_id == 50 and ds.name == "tic-tac-toe"
    assert any("copy of the published dataset OpenML 50" in w for w in ds.warnings)


def test_missing_markers_question_mark_and_empty_give_the_same_fingerprint(tmp_path):
    frame = read_table(CREDIT_APPROVAL)
    assert frame.isna().to_numpy().any()  # the fixture really has missing cells
    as_question = frame.astype(object).where(frame.notna(), "?")
    as_empty = frame.astype(object).where(frame.notna(), "")
    assert fingerprint(as_question, "class") == fingerprint(as_empty, "class") == fingerprint(frame, "class")
    for marker, table in (("question", as_question), ("empty", as_empty)):
        path = tmp_path / f"{marker}.csv"
        table.to_csv(path, index=False)
        assert load_dataset(path, target="class").key == "29", marker


def test_other_data_or_another_task_keeps_its_file_key(tictactoe):
    one_row_less = tictactoe.iloc[1:]
    assert match_published(one_row_less, "Class") is None
    flipped = tictactoe.copy()
    flipped.loc[flipped.index[0], "Class"] = "negative" if flipped["Class"].iloc[0] == "positive" else "positive"
    assert match_published(flipped, "Class") is None          # class counts differ
    renamed = tictactoe.rename(columns={"top-left-square": "tl"})
    assert match_published(renamed, "Class") is None          # a column the original lacks
    assert match_published(tictactoe, "top-left-square") is None  # another target: another task
    ds = dataset_from_frame(one_row_less.reset_index(drop=True), "Class", name="ttt")
    assert ds.key.startswith("file:") and ds.openml_id is None


def test_a_copy_with_another_positive_class_is_another_task(tictactoe):
    default = dataset_from_frame(tictactoe, "Class", name="ttt")
    assert default.key == "50" and default.positive_class == "positive"
    other = dataset_from_frame(tictactoe, "Class", positive_class="negative", name="ttt")
    assert other.key.startswith("file:")


def test_labels_and_names_are_compared_as_text():
    assert label_key(1.0) == "1" and label_key(np.int64(2)) == "2" and label_key("'a'") == "a"
    assert label_key("?") is None and label_key(" ") is None and label_key(float("nan")) is None
    assert column_key(' "Class" ') == "Class"
    with pytest.raises(ValueError, match="'nope'"):
        fingerprint(pd.DataFrame({"a": [1]}), "nope")


def test_copies_of_a_published_dataset_and_its_bundled_file_run_under_one_key(tmp_path):
    """Several files of the same published data (bundled ARFF, CSV copies) are one dataset."""
    from encbench.engine.grid import Grid
    from encbench.engine.runner import run_grid
    from encbench.store import Writer, queries

    db = tmp_path / "e.duckdb"
    with Writer(db):
        pass
    frame = read_table(BUNDLED_DIR / "1463_blogger.arff")
    frame.to_csv(tmp_path / "a.csv", index=False)
    frame[list(reversed(frame.columns))].to_csv(tmp_path / "b.csv", index=False, na_rep="?")
    for spec in (f"{tmp_path / 'a.csv'}:pb", "bundled:blogger", f"{tmp_path / 'b.csv'}:pb"):
        run_grid(Grid(datasets=[spec], encoders=["OH"], models=["DT"], scorings=["AUC"]),
                 db_path=db, workers=0)
    with Writer(db, publish=False) as writer:
        scores = queries.load_scores(writer)
        datasets = queries.list_datasets(writer)
    assert set(scores["dataset"]) == {"1463"} and scores["run_id"].nunique() == 3
    assert list(datasets["dataset"]) == ["1463"] and datasets["openml_id"].iloc[0] == 1463


def test_a_copy_with_columns_left_out_is_still_the_published_dataset(tictactoe):
    """Users drop ID-like columns (cylinder-bands' timestamp, cylinder_number) before a run."""
    fewer = tictactoe.drop(columns=["top-left-square", "top-middle-square"])
    assert match_published(fewer, "Class").key == "50"
    ds = dataset_from_frame(fewer, "Class", name="ttt")
    assert ds.key == "50"
    assert any("columns left out: top-left-square, top-middle-square" in w for w in ds.warnings)
    assert match_published(tictactoe[["Class"]], "Class") is None  # the target alone is no copy


def test_a_copy_is_recognised_by_its_published_target_wherever_that_column_stands():
    from profb import profb_frame

    from encbench.data.fingerprint import recognise

    frame = profb_frame()
    match, column = recognise(frame)
    assert (match.openml_id, match.name, column) == (470, "profb", "Home/Away")
    moved = frame[[*frame.columns[1:], "Home/Away"]]                 # the target last
    assert recognise(moved)[1] == "Home/Away"
    assert recognise(frame.iloc[1:]) is None                         # another row count: other data
    assert recognise(frame.rename(columns={"Home/Away": "where"})) is None
