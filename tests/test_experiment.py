"""The experiment key and the helpers written over it."""
from __future__ import annotations

import pandas as pd
import pytest

from encbench import experiment, vocab
from encbench.experiment import EXPERIMENT_KEY, RESULT_KEY


def test_the_key_is_the_datasets_encoders_factors_split_and_task():
    assert EXPERIMENT_KEY == ("dataset", "encoder", *vocab.FACTORS, "split", "task")
    assert RESULT_KEY == (*EXPERIMENT_KEY, "fold")
    assert set(experiment.DEFAULTS) <= set(EXPERIMENT_KEY)


def test_the_store_keys_results_and_scores_on_it(mem_writer):
    """The migrations' primary key and the scores view are the key of this module."""
    pk = mem_writer.query(
        "SELECT constraint_column_names AS c FROM duckdb_constraints() "
        "WHERE table_name = 'results' AND constraint_type = 'PRIMARY KEY'")["c"].iloc[0]
    assert list(pk) == ["run_id", *RESULT_KEY]
    view = mem_writer.query("SELECT * FROM scores LIMIT 0").columns
    assert set(EXPERIMENT_KEY) <= set(view)


def test_key_columns_need_all_but_the_defaulted_ones():
    frame = pd.DataFrame(columns=["encoder", "dataset", "scoring", "tuning", "model", "cv_score"])
    assert experiment.key_columns(frame) == ["dataset", "encoder", "model", "tuning", "scoring"]
    assert experiment.key_columns(frame.assign(split="cv"))[-1] == "split"
    with pytest.raises(ValueError, match=r"\['tuning'\]"):
        experiment.key_columns(frame.drop(columns="tuning"))
    filled = experiment.with_key(pd.DataFrame({c: ["x"] for c in frame.columns}))
    assert filled["split"].tolist() == ["cv"]


def test_setting_labels_and_their_order():
    assert experiment.setting_label(("DT", "model", "F1")) == "DT / model / F1"
    assert experiment.setting_label({"scoring": "AUC", "model": "kNN", "tuning": "no"}) == "kNN / no / AUC"
    with pytest.raises(ValueError, match="one value per factor"):
        experiment.setting_label(("DT", "no"))
    frame = pd.DataFrame({"model": ["LogReg", "DT", "LogReg", "DT"], "tuning": ["no", "full", "no", "no"],
                          "scoring": ["AUC", "AUC", "BAcc", "AUC"], "v": [1, 2, 3, 4]})
    # vocabulary order: DT before LogReg, tuning no before full, BAcc before AUC
    expected = [("DT", "no", "AUC"), ("DT", "full", "AUC"), ("LogReg", "no", "BAcc"), ("LogReg", "no", "AUC")]
    assert experiment.settings_of(frame) == expected
    groups = list(experiment.group_settings(frame))
    assert [tuple(s.values()) for s, _ in groups] == expected
    assert [rows["v"].tolist() for _, rows in groups] == [[4], [2], [3], [1]]


def test_sort_experiments_orders_each_column_as_displayed():
    frame = pd.DataFrame({
        "dataset": ["50", "31", "file:b", "31", "31"],
        "encoder": ["MT", "MT", "OH", "Zeta", "OH"],
        "model": ["DT", "LogReg", "DT", "DT", "DT"], "tuning": "no", "scoring": "AUC"})
    got = experiment.sort_experiments(frame)
    # 31 before 50 (numerically), file datasets after; DT before LogReg; OH before MT; unknown last
    assert list(zip(got["dataset"], got["model"], got["encoder"])) == [
        ("31", "DT", "OH"), ("31", "DT", "Zeta"), ("31", "LogReg", "MT"), ("50", "DT", "MT"),
        ("file:b", "DT", "OH")]
    assert experiment.sort_experiments(frame.iloc[:0]).empty
