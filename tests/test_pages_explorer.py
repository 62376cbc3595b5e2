"""AppTest: the Results explorer's filters change what is shown; empty choices get messages."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from pagetest import charts, open_page, texts


@pytest.fixture(autouse=True)
def published_env(published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))


def _table(at):
    return at.dataframe[0].value


def test_explorer_renders_scores_boxes_and_heatmap():
    at = open_page("explorer")
    assert [t.label for t in at.tabs] == ["Scores per dataset", "Distributions per encoder", "Encoder x dataset"]
    table = _table(at)
    assert set(table["tuning"]) == {"no"} and set(table["metric"]) == {"AUC"}
    assert set(table["model"]) == {"DT", "LGBM", "SVM", "kNN", "LogReg"}
    assert table["rank"].min() == 1 and table["family"].notna().all()
    assert "cells without any result" in texts(at)
    assert not charts(at)                              # closed tabs are not drawn

    boxes = open_page("explorer", {"section": "Distributions per encoder"})
    assert len(charts(boxes)) == 2 and not boxes.dataframe
    assert "per-dataset rank" in json.dumps(charts(boxes)[1].proto.spec)
    heatmap = open_page("explorer", {"section": "Encoder x dataset"})
    assert len(charts(heatmap)) == 1 and not heatmap.dataframe
    assert "mean rank" in json.dumps(charts(heatmap)[0].proto.spec)


def test_model_and_family_filters_narrow_the_rows():
    at = open_page("explorer")
    before = len(_table(at))
    at.multiselect(key="model").set_value(["LogReg"]).run()
    after = _table(at)
    assert set(after["model"]) == {"LogReg"} and len(after) < before
    at.multiselect(key="family").set_value(["identifier"]).run()
    assert set(_table(at)["encoder"]) == {"OH", "Ord", "Bin"}


def test_heatmap_value_switches_to_scores():
    at = open_page("explorer", {"section": "Encoder x dataset"})
    at.radio(key="cell").set_value("score").run()
    spec = json.dumps(charts(at)[-1].proto.spec)
    assert "mean score" in spec


def test_dataset_selection_from_the_url():
    at = open_page("explorer", {"all_datasets": "false", "dataset": ["31: credit-g", "50: tic-tac-toe"],
                                    "model": "DT"})
    table = _table(at)
    assert set(table["dataset"]) == {"31", "50"} and set(table["model"]) == {"DT"}
    assert set(table["name"]) == {"credit-g", "tic-tac-toe"}


def test_empty_selection_and_missing_combination_get_messages():
    at = open_page("explorer")
    at.multiselect(key="metric").set_value([]).run()
    assert "Select at least one value for: Metric" in texts(at)
    assert not at.dataframe
    at = open_page("explorer", {"model": "LGBM", "tuning": "full"})
    assert "No results for this combination" in texts(at)


def test_scores_table_shows_the_encoding_time_comparable_with_the_published_time():
    # The published time is the mean per fold of the training-fold encoding; it is shown as the
    # encoding time (AUC rows have none in the published data).
    at = open_page("explorer", {"metric": "Acc", "model": "DT"})
    table = _table(at)
    assert "encode_time" in table.columns
    assert table["encode_time"].notna().all() and (table["encode_time"] > 0).all()
    at = open_page("explorer")  # AUC
    assert (_table(at)["encode_time"] == "\u2014").all()      # none: a dash, not "None"


def test_scores_table_shows_missing_values_as_a_dash_and_keeps_the_numbers_in_its_exports():
    """Published rows (no fold sd) and AUC rows (no encoding time) read "None"."""
    from pages.common import MISSING, dash_missing

    at = open_page("explorer", {"metric": "Acc", "model": "DT"})
    table = _table(at)
    assert (table["cv_std"] == MISSING).all()                     # the published scores have none
    assert table["encode_time"].notna().all() and (table["encode_time"] > 0).all()   # all present: numbers
    # the helper: right-padded numbers that sort as numbers, the missing last
    shown, changed = dash_missing(pd.DataFrame({"t": [12.5, None, 3.25, 0.5], "n": [1, 2, 3, 4]}),
                                  {"t": "{:.2f}", "n": "{:d}"})
    assert changed == ["t"] and shown["t"].tolist() == ["12.50", MISSING, " 3.25", " 0.50"]
    assert sorted(shown["t"]) == [" 0.50", " 3.25", "12.50", MISSING]
    assert shown["n"].tolist() == [1, 2, 3, 4]                     # nothing missing: left as numbers
