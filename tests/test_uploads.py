"""Uploads: every bad input is rejected with a message naming the problem, and leaves no trace."""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from encbench.data import DatasetError
from encbench.engine.grid import Grid
from encbench.engine.queue import RunQueue, upload_dir
from encbench.uploads import check_upload, previous_upload, queue_upload_run, stage_upload, store_upload


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def _good(n=60, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], n),
                         "size": rng.normal(size=n).round(3),
                         "label": np.tile(["no", "yes"], n // 2)})


def _assert_no_trace(db):
    assert not upload_dir(db).exists() or not any(upload_dir(db).iterdir())
    assert RunQueue(db).pending() == []
    assert not db.exists()


A_TOKEN, B_TOKEN = "a" * 32, "b" * 32   # two browser sessions' owner tokens


def _launch(staged, db, target="label", owner=None):
    return queue_upload_run(staged, target=target, encoders=["OH"], models=["LogReg"], scorings=["AUC"],
                            tuning="no", db_path=db, owner=owner)


@pytest.mark.parametrize("name, data, target, message", [
    ("empty.csv", b"", "label", "file 'empty.csv' is empty"),
    ("broken.csv", b"a,label\nx,1\ny,0\n\"z,1\n", "label", "line 4"),
    ("dups.csv", b"a,a,label\nx,y,1\nx,y,0\n", "label", "duplicate column names"),
    ("nolabel.csv", None, "target", "target column 'target' not in file"),
])
def test_unreadable_or_unusable_files_are_named(tmp_path, name, data, target, message):
    db = tmp_path / "db" / "e.duckdb"
    data = _csv(_good()) if data is None else data
    staged = stage_upload(data, name, db_path=db)
    report = check_upload(staged, target)
    assert any(message in e for e in report.errors), report.errors
    with pytest.raises(DatasetError, match=message.split(" '")[0]):
        _launch(staged, db, target)
    _assert_no_trace(db)


def test_target_not_binary_lists_the_classes(tmp_path):
    db = tmp_path / "e.duckdb"
    frame = _good().assign(label=np.tile(["a", "b", "c"], 20))
    report = check_upload(stage_upload(_csv(frame), "three.csv", db_path=db), "label")
    (error,) = [e for e in report.errors if "classes" in e]
    assert "3 classes" in error and "'a'" in error and "'b'" in error and "'c'" in error
    _assert_no_trace(db)


def test_class_with_fewer_rows_than_folds(tmp_path):
    db = tmp_path / "e.duckdb"
    frame = _good()
    frame.loc[frame.index[:-7], "label"] = "no"
    frame.loc[frame.index[-7:], "label"] = "yes"
    frame.loc[frame.index[-3:], "label"] = "no"   # 4 'yes' rows < 2 per fold x 5 folds
    report = check_upload(stage_upload(_csv(frame), "rare.csv", db_path=db), "label")
    assert any("'yes'" in e and "has 4 rows" in e for e in report.errors), report.errors
    _assert_no_trace(db)


def test_no_categorical_column(tmp_path):
    db = tmp_path / "e.duckdb"
    frame = _good().drop(columns="colour")
    report = check_upload(stage_upload(_csv(frame), "num.csv", db_path=db), "label")
    assert any("categorical" in e for e in report.errors), report.errors
    _assert_no_trace(db)


def test_over_size_limit_names_the_size(tmp_path):
    db = tmp_path / "e.duckdb"
    staged = stage_upload(b"x" * 2_000_001, "big.csv", max_bytes=1_000_000, db_path=db)
    assert staged.errors == ["file 'big.csv' is 2.0 MB, over the 1 MB size limit"]
    assert staged.path is None                                    # not even staged
    _assert_no_trace(db)


def test_id_like_and_leaky_columns_are_warnings_only(tmp_path):
    db = tmp_path / "e.duckdb"
    frame = _good().assign(row_id=[f"id{i}" for i in range(60)])
    frame["copy"] = frame["label"].map({"no": "N", "yes": "Y"})
    report = check_upload(stage_upload(_csv(frame), "warn.csv", db_path=db), "label")
    assert report.errors == []
    assert any("row_id" in w for w in report.warnings), report.warnings
    assert any("copy" in w for w in report.warnings), report.warnings


def test_good_upload_is_stored_by_hash_recognised_and_queued(tmp_path):
    db = tmp_path / "e.duckdb"
    data = _csv(_good())
    staged = stage_upload(data, "mine.csv", db_path=db)
    assert staged.ok and staged.previous is None
    assert set(staged.column_types().set_index("column")["type"]) >= {"categorical", "numerical"}
    grid = _launch(staged, db, owner=A_TOKEN)
    stored = upload_dir(db) / f"{staged.sha256}.csv"
    assert stored.read_bytes() == data
    (request,) = RunQueue(db).pending()
    assert request.run_id == grid.run_id
    assert Grid(**request.payload["grid"]).run_id == grid.run_id    # the worker rebuilds the same grid
    again = stage_upload(data, "renamed.csv", db_path=db, owner=A_TOKEN)
    assert again.previous == stored                                  # the session that launched the run
    assert store_upload(again, db) == stored
    assert len(list(upload_dir(db).iterdir())) == 1


def test_dropped_columns_are_left_out_of_the_stored_file(tmp_path):
    db = tmp_path / "e.duckdb"
    frame = _good().assign(row_id=[f"id{i}" for i in range(60)])
    staged = stage_upload(_csv(frame), "ids.csv", db_path=db)
    report = check_upload(staged, "label")
    assert report.suspect_columns == ["row_id"]
    grid = queue_upload_run(staged, target="label", drop=report.suspect_columns, encoders=["OH"],
                            models=["LogReg"], scorings=["AUC"], tuning="no", db_path=db)
    (stored,) = upload_dir(db).iterdir()
    assert stored.suffix == ".parquet"
    kept = pd.read_parquet(stored)
    assert list(kept.columns) == ["colour", "size", "label"]
    assert kept["colour"].tolist() == frame["colour"].tolist()
    assert "without row_id" in grid.label and grid.datasets == (str(stored),)
    with pytest.raises(ValueError, match="'nope'"):
        queue_upload_run(staged, target="label", drop=["nope"], encoders=["OH"], models=["LogReg"],
                         scorings=["AUC"], tuning="no", db_path=db)


def test_dropping_a_column_the_file_lacks_names_the_file_and_its_columns(tmp_path):
    """The app's "Columns to leave out" and the command line's --drop-columns are one mechanism
    (uploads.drop_columns): an absent column is named with the file and the columns it has, and
    the derived copy is a Parquet file named after the upload."""
    from encbench.uploads import drop_columns, without_columns

    staged = stage_upload(_csv(_good()), "shapes.csv.gz", db_path=tmp_path / "e.duckdb")
    with pytest.raises(ValueError, match=r"^cannot drop columns absent from file 'shapes\.csv\.gz': got 'nope'; "
                                         r"its columns are 'colour', 'size', 'label'$"):
        without_columns(staged, ["nope"])
    with pytest.raises(ValueError, match=r"^--drop-columns names columns absent from file 'shapes\.csv\.gz'"):
        drop_columns(staged.frame, ["nope"], "shapes.csv.gz", option="--drop-columns")
    derived = drop_columns(staged.frame, ["size"], "shapes.csv.gz", db_path=tmp_path / "e.duckdb")
    assert derived.filename == "shapes.parquet" and list(derived.frame.columns) == ["colour", "label"]


def test_a_stored_upload_is_readable_by_this_user_only(tmp_path):
    """0600 in a 0700 directory; an older, looser directory and file are tightened."""
    import stat

    db = tmp_path / "p.duckdb"
    token = "c" * 32
    staged = stage_upload(_csv(_good()), "mine.csv", db_path=db)
    grid = queue_upload_run(staged, target="label", encoders=["OH"], models=["LogReg"], scorings=["AUC"],
                            tuning="no", db_path=db, owner=token)
    (stored,) = upload_dir(db).iterdir()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(upload_dir(db).stat().st_mode) == 0o700
    (request,) = RunQueue(db).pending()
    assert request.run_id == grid.run_id and request.payload["owner"] == token

    upload_dir(db).chmod(0o755)                                  # as stored before this rule
    stored.chmod(0o644)
    assert store_upload(staged, db) == stored
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(upload_dir(db).stat().st_mode) == 0o700


def test_column_types_count_distinct_and_missing_values_per_column(tmp_path):
    frame = _good()
    frame.loc[[1, 4, 9], "colour"] = np.nan
    frame.loc[[2], "size"] = np.nan
    staged = stage_upload(_csv(frame), "types.csv", db_path=tmp_path / "e.duckdb")
    types = staged.column_types()
    assert types["column"].tolist() == ["colour", "size", "label"]
    assert types["type"].tolist() == ["categorical", "numerical", "categorical"]
    # naive reference: Python sets of the present values, and the missing cells counted one by one
    for row, name in zip(types.itertuples(), frame.columns):
        present = [v for v in frame[name] if not pd.isna(v)]
        assert row.distinct == len(set(present)) and row.missing == len(frame) - len(present)
    assert types.loc[0, "missing"] == 3 and types.loc[1, "missing"] == 1 and types.loc[2, "distinct"] == 2


def test_an_earlier_upload_is_told_only_to_the_session_that_uploaded_it(tmp_path):
    """"Uploaded before (stored as <sha>.csv)" told any session that someone else uploaded the
    same bytes: only the session whose run stored them is told; another session, or none, is not."""
    db = tmp_path / "e.duckdb"
    data = _csv(_good())
    _launch(stage_upload(data, "mine.csv", db_path=db), db, owner=A_TOKEN)
    stored = upload_dir(db) / f"{hashlib.sha256(data).hexdigest()}.csv"
    assert stored.exists()
    assert stage_upload(data, "mine.csv", db_path=db, owner=A_TOKEN).previous == stored
    assert stage_upload(data, "mine.csv", db_path=db, owner=B_TOKEN).previous is None
    assert stage_upload(data, "mine.csv", db_path=db).previous is None
    assert previous_upload(hashlib.sha256(data).hexdigest(), B_TOKEN, db) is None


def test_a_custom_encoder_that_is_no_installed_plugin_is_refused_before_anything_is_stored(tmp_path):
    """A queued run may build only installed encoder plugins: a request naming another import
    path is refused, naming it, before the upload (or its reduced copy) is stored or queued."""
    db = tmp_path / "e.duckdb"
    frame = _good().assign(row_id=[f"id{i}" for i in range(60)])
    staged = stage_upload(_csv(frame), "mine.csv", db_path=db)
    shell = {"Shell": {"import": "os:system", "params": {"command": "true"}}}
    for drop in ([], ["row_id"]):
        with pytest.raises(ValueError, match="os:system"):
            queue_upload_run(staged, target="label", drop=drop, encoders=["OH"], models=["LogReg"],
                             scorings=["AUC"], tuning="no", db_path=db, custom_encoders=shell)
        _assert_no_trace(db)
