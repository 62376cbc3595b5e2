"""AppTest: the Results explorer's filters change what is shown; empty choices get messages.

On the small database (tests/small_db.py): the published results of a few datasets and a local
run with its five folds."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from pagetest import charts, open_page, texts


@pytest.fixture(autouse=True)
def small_env(small_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))


def _table(at):
    return at.dataframe[0].value


def test_explorer_renders_scores_boxes_and_heatmap(small_published_db, monkeypatch):
    """(On published results only: local results add their comparison table above the tabs.)"""
    monkeypatch.setenv("ENCBENCH_DB", str(small_published_db))
    at = open_page("explorer")
    assert [t.label for t in at.tabs] == ["Scores per dataset", "Distributions per encoder", "Encoder x dataset",
                                         "Drill down"]
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
    from pages.ui.exports import MISSING, dash_missing

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


def _query(**extra):
    return {"model": "LogReg", "tuning": "no", "metric": "AUC", "section": "Drill down", **extra}


def test_drill_down_from_an_encoder_to_its_scores_per_dataset(small_db):
    """Picking an encoder lists its score on every dataset of the selection beside the best
    there, as encbench.views.explorer.encoder_profile computes it, worst gap first, with the
    datasets' names."""
    from encbench.store import Reader, queries
    from encbench.views import explorer

    at = open_page("explorer", _query(drill_encoder="MT"))
    assert at.selectbox(key="drill_encoder").value == "MT"
    shown = at.dataframe[0].value
    reader = Reader(small_db)
    try:
        rows = queries.one_score_per_experiment(queries.load_scores(
            reader, models=["LogReg"], tunings=["no"], scorings=["AUC"], origins=["published"]))
        names = queries.list_datasets(reader).set_index("dataset")["name"].astype(str).to_dict()
    finally:
        reader.close()
    expected = explorer.encoder_profile(explorer.ranked_scores(rows), "MT", names)
    assert shown["dataset"].tolist() == expected["dataset"].tolist()
    assert shown["behind"].to_numpy() == pytest.approx(expected["behind"].to_numpy())
    assert shown["name"].notna().all() and "credit-g" in set(shown["name"])
    summary = next(m.value for m in at.markdown if m.value.startswith("**MT** is best on"))
    assert f"of {len(expected):,} (dataset, setting) pairs" in summary


def test_drill_down_two_encoders_head_to_head_with_dataset_names():
    """Two encoders give a scatter over the datasets both have, named by dataset in its data and
    tooltips, the wins of each counted; the heatmap's axis names its datasets too."""
    at = open_page("explorer", _query(drill_a="OH", drill_b="MT"))
    summary = next(m.value for m in at.markdown if m.value.startswith("Over the "))
    assert "**OH** better on" in summary and "**MT** better on" in summary
    scatter = next(c for c in charts(at) if "OH score" in json.dumps(c.proto.spec))
    assert "credit-g" in json.dumps(scatter.proto.spec) or "credit-g" in str(scatter.proto)
    heatmap = open_page("explorer", {"section": "Encoder x dataset"})
    assert "credit-g" in json.dumps(charts(heatmap)[0].proto.spec)


def test_drill_down_says_the_published_scores_have_no_folds():
    at = open_page("explorer", _query(drill_dataset="credit-g (31)"))
    assert "No per-fold scores of credit" in texts(at)


def test_drill_down_from_a_dataset_to_its_per_fold_scores(small_db):
    """The store keeps every fold of a local run and no page showed them: the drill-down lists
    each experiment's five fold scores, their mean (the view's score) and spread. (The small
    database's local run: OH and MT, LogReg / no / AUC, 5 folds.)"""
    from encbench.store import Reader, queries

    reader = Reader(small_db)
    try:
        rows = queries.load_scores(reader, origins=["local"])
        folds = queries.fold_scores(reader, sorted(set(rows["run_id"])))
    finally:
        reader.close()
    at = open_page("explorer", {**_query(), "origin": "local"})
    assert not at.exception and "No per-fold scores" not in texts(at)
    table = next(d.value for d in at.dataframe if "fold_0" in d.value.columns)
    assert [c for c in table.columns if c.startswith("fold_")] == [f"fold_{k}" for k in range(5)]
    assert sorted(table["encoder"]) == ["MT", "OH"]
    for _, row in table.iterrows():
        mine = folds[folds["encoder"] == row["encoder"]].sort_values("fold")["cv_score"].to_numpy()
        assert [row[f"fold_{k}"] for k in range(5)] == pytest.approx(mine.tolist())
        assert row["mean"] == pytest.approx(rows.loc[rows["encoder"] == row["encoder"], "cv_score"].item())
        assert row["sd"] == pytest.approx(float(pd.Series(mine).std()))


def test_a_heatmap_cell_opens_the_drill_down_on_its_encoder_and_dataset():
    """A click on a heatmap cell (its selection) offers a button that opens the Drill down tab on
    that encoder and that dataset; the heatmap's spec holds the click selection."""
    at = open_page("explorer", {"section": "Encoder x dataset"})
    assert "Click a cell to drill down" in texts(at)
    spec = json.loads(charts(at)[0].proto.spec)
    assert [param["name"] for param in spec.get("params", [])] == ["cell"]
    at.session_state["select-heatmap-rank"] = {"selection": {"cell": [{"encoder": "MT", "dataset": "31"}]}}
    at.run()
    at.button(key="drill-cell").click().run()
    assert not at.exception
    assert at.session_state["section"] == "Drill down"
    assert at.selectbox(key="drill_encoder").value == "MT"
    assert at.selectbox(key="drill_dataset").value == "credit-g (31)"
    assert any(m.value.startswith("**MT** is best on") for m in at.markdown)
