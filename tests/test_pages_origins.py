"""AppTest: local results never silently enter the published views.

The database holds the small database's published results (tests/small_db.py) plus one local
run: 2 encoders x LogReg/no/AUC on a copy of published dataset 50 (stored under its key "50")
and on a dataset of its own. Counts are read off the database.
"""
from __future__ import annotations

import pytest
from pagetest import open_page, texts
from small_db import copy_db

from encbench.store import Reader, Writer, queries
from pages.ui.exports import MISSING

LOCAL_RUN = "local-test0000000001"
LOCAL_SCORES = {("50", "OH"): 0.75, ("50", "MT"): 0.99, ("file:abc123", "OH"): 0.6,
                ("file:abc123", "MT"): 0.7}


@pytest.fixture(scope="module")
def mixed_path(small_published_db, tmp_path_factory):
    """The database, written once: its tests only read it."""
    path = copy_db(small_published_db, tmp_path_factory.mktemp("mixed") / "mixed.duckdb")
    with Writer(path) as writer:
        writer.upsert_dataset({"dataset": "file:abc123", "name": "mine", "source": "upload",
                               "sha256": "abc123"})
        writer.ensure_run(LOCAL_RUN, origin="local", label="test run", status="done", n_expected=4)
        writer.write_results([
            dict(run_id=LOCAL_RUN, dataset=d, encoder=e, model="LogReg", tuning="no", scoring="AUC",
                 fold=0, n_folds=1, cv_score=v, time=0.1, status="ok", error=None)
            for (d, e), v in LOCAL_SCORES.items()])
    return path


@pytest.fixture()
def mixed_db(mixed_path, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(mixed_path))
    return mixed_path


def _published(db) -> tuple[int, int]:
    """(results, datasets) of the published rows of ``db``."""
    reader = Reader(db)
    try:
        rows = queries.load_scores(reader, origins=["published"])
    finally:
        reader.close()
    return len(rows), rows["dataset"].nunique()


def _published_auc(db, dataset, encoder) -> float:
    reader = Reader(db)
    try:
        rows = queries.load_scores(reader, datasets=[dataset], encoders=[encoder], models=["LogReg"],
                                   tunings=["no"], scorings=["AUC"], origins=["published"])
    finally:
        reader.close()
    return float(rows["cv_score"].iloc[0])


def test_overview_defaults_to_the_published_benchmark_and_says_what_is_left_out(mixed_db):
    results, datasets = _published(mixed_db)
    at = open_page("overview")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Datasets"] == str(datasets) and metrics["Results"] == f"{results:,}", metrics
    assert at.radio(key="origin").value == "published"
    assert "4 local score rows (2 dataset(s), 1 run(s)) are left out" in texts(at)
    assert not at.warning                                         # no banner in the published view


def test_the_datasets_tab_lists_and_counts_what_the_view_counts(mixed_db):
    """The published view lists the published datasets with their published rows only; mixing
    in local results adds the local-only dataset, and the re-run experiments of dataset 50
    replace published ones rather than count twice."""
    results, datasets = _published(mixed_db)
    published = open_page("overview", {"section": "Datasets"}).dataframe[1].value
    assert len(published) == datasets and "file:abc123" not in set(published["dataset"])
    assert published["results"].sum() == results
    both = open_page("overview", {"section": "Datasets", "origin": "both"}).dataframe[1].value
    assert len(both) == datasets + 1 and both["results"].sum() == results + 2
    counts = both.set_index("dataset")["results"]
    assert counts["file:abc123"] == 2
    assert counts["50"] == published.set_index("dataset")["results"]["50"]


def test_mixing_local_results_is_a_choice_announced_by_a_banner(mixed_db):
    results, datasets = _published(mixed_db)
    at = open_page("overview", {"origin": "both"})
    metrics = {m.label: m.value for m in at.metric}
    # the copy of dataset 50 is the published dataset: only the local-only dataset is new, and
    # only its 2 experiments are new results (the 2 on dataset 50 replace nothing by default)
    assert metrics["Datasets"] == str(datasets + 1) and metrics["Results"] == f"{results + 2:,}", metrics
    banner = " ".join(w.value for w in at.warning)
    assert "4 local score rows on 2 dataset(s) from 1 run(s)" in banner
    assert "1 of these datasets are published ones" in banner
    assert "2 experiments have both a published and a local score: the published score counts" in banner
    assert at.radio(key="prefer").value == "published"


def test_where_both_exist_the_user_chooses_which_score_counts(mixed_db):
    published = _published_auc(mixed_db, "50", "MT")
    query = {"model": "LogReg", "tuning": "no", "metric": "AUC", "all_datasets": "false",
             "dataset": "50: tic-tac-toe"}
    default = open_page("explorer", {**query, "origin": "both"})
    table = default.dataframe[0].value
    mt = table[table["encoder"] == "MT"]
    assert len(mt) == 1 and mt["cv_score"].iloc[0] == pytest.approx(published)
    assert mt["origin"].iloc[0] == "published"
    local = open_page("explorer", {**query, "origin": "both", "prefer": "local"})
    table = local.dataframe[0].value
    mt = table[table["encoder"] == "MT"]
    assert len(mt) == 1 and mt["cv_score"].iloc[0] == pytest.approx(0.99) and mt["origin"].iloc[0] == "local"
    assert "the local score counts" in " ".join(w.value for w in local.warning)


def test_explorer_shows_published_and_local_side_by_side_with_the_difference(mixed_db):
    at = open_page("explorer", {"model": "LogReg", "tuning": "no", "metric": "AUC"})
    assert at.radio(key="origin").value == "published"
    assert "Published vs local" in [s.value for s in at.subheader]
    pairs = at.dataframe[1].value
    assert list(pairs["encoder"]) == ["OH", "MT"] and set(pairs["dataset"]) == {"50"}
    for encoder, local in (("OH", 0.75), ("MT", 0.99)):
        row = pairs[pairs["encoder"] == encoder].iloc[0]
        published = _published_auc(mixed_db, "50", encoder)
        assert row["published"] == pytest.approx(published) and row["local"] == pytest.approx(local)
        assert row["difference"] == pytest.approx(local - published)
    assert "2 experiments of this selection have both" in texts(at)


def test_consensus_defaults_to_published_and_counts_a_published_copy_once(mixed_db):
    _, datasets = _published(mixed_db)                 # every one has LogReg / no / AUC scores
    at = open_page("consensus")
    assert f" {datasets} datasets" in texts(at)
    mixed = open_page("consensus", {"origin": "both"})
    assert f" {datasets + 1} datasets" in texts(mixed)    # the copy of 50 is not one more dataset
    local_only = open_page("consensus", {"origin": "local"})
    assert "2 datasets" in texts(local_only) and "Local runs only" in " ".join(w.value for w in local_only.warning)


def test_an_unknown_origin_in_a_link_is_named(mixed_db):
    results, _ = _published(mixed_db)
    at = open_page("overview", {"origin": "everything"})
    assert "`everything`" in texts(at)
    assert {m.label: m.value for m in at.metric}["Results"] == f"{results:,}"


def test_without_local_results_there_is_no_origin_control(small_published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(small_published_db))
    at = open_page("explorer")
    assert not [r for r in at.radio if r.key == "origin"]
    assert "Published vs local" not in [s.value for s in at.subheader]


def test_explorer_dataset_picker_lists_the_datasets_of_the_view(mixed_db):
    """In the published view the picker offered the local-only upload too."""
    query = {"model": "LogReg", "tuning": "no", "metric": "AUC", "all_datasets": "false"}
    _, datasets = _published(mixed_db)
    published = open_page("explorer", query).multiselect(key="dataset").options
    assert len(published) == datasets and not any(o.startswith("file:") for o in published)
    assert "50: tic-tac-toe" in published
    both = open_page("explorer", {**query, "origin": "both"}).multiselect(key="dataset").options
    assert len(both) == datasets + 1 and "file:abc123: mine" in both
    local = open_page("explorer", {**query, "origin": "local"}).multiselect(key="dataset").options
    assert sorted(local) == ["50: tic-tac-toe", "file:abc123: mine"]


def test_explorer_shows_the_per_fold_spread_of_local_scores(small_published_db, tmp_path, monkeypatch):
    """The per-fold standard deviation of a local score, in the table and exports."""
    import numpy as np

    path = copy_db(small_published_db, tmp_path / "folds.duckdb")
    folds = {"OH": [0.7, 0.8, 0.9], "MT": [0.5, 0.5, 0.5]}
    with Writer(path) as writer:
        writer.upsert_dataset({"dataset": "file:f00", "name": "folds", "source": "upload", "sha256": "f00"})
        writer.ensure_run("local-folds", origin="local", label="folds", status="done", n_expected=6)
        writer.write_results([
            dict(run_id="local-folds", dataset="file:f00", encoder=e, model="LogReg", tuning="no",
                 scoring="AUC", fold=k, n_folds=3, cv_score=v, time=0.1, status="ok", error=None)
            for e, values in folds.items() for k, v in enumerate(values)])
    monkeypatch.setenv("ENCBENCH_DB", str(path))
    at = open_page("explorer", {"model": "LogReg", "tuning": "no", "metric": "AUC", "origin": "both"})
    table = at.dataframe[0].value
    local = table[table["origin"] == "local"].set_index("encoder")
    # shown as text with 4 decimals where some cells lack a value (published rows: a dash)
    assert float(local.loc["OH", "cv_std"]) == pytest.approx(np.std(folds["OH"], ddof=1), abs=5e-5)
    assert float(local.loc["MT", "cv_std"]) == pytest.approx(0.0)
    assert (table.loc[table["origin"] == "published", "cv_std"] == MISSING).all()


def test_explorer_marks_published_cells_of_an_earlier_run(small_published_db, tmp_path, monkeypatch):
    """LightGBM's published Acc of MT comes from an earlier run of the study's code; the
    pair says so and the summary leaves it out, ME_1's pair is a plain reference."""
    path = copy_db(small_published_db, tmp_path / "lgbm.duckdb")
    with Writer(path) as writer:
        writer.ensure_run(LOCAL_RUN, origin="local", label="lgbm run", status="done", n_expected=2)
        writer.write_results([
            dict(run_id=LOCAL_RUN, dataset="50", encoder=e, model="LGBM", tuning="no", scoring="Acc",
                 fold=0, n_folds=1, cv_score=0.8, time=0.1, status="ok", error=None)
            for e in ("MT", "ME_1")])
    monkeypatch.setenv("ENCBENCH_DB", str(path))
    at = open_page("explorer", {"model": "LGBM", "tuning": "no", "metric": "Acc"})
    pairs = at.dataframe[1].value.set_index("encoder")
    assert "earlier run" in pairs.loc["MT", "note"] and pairs.loc["ME_1", "note"] == ""
    info = " ".join(i.value for i in at.info)
    assert "1 of these published scores were not produced the way encbench runs the study's final code" in info
    assert "1 LightGBM label metrics (Acc, BAcc, F1) from an earlier run" in info
    kept = abs(0.8 - pairs.loc["ME_1", "published"])
    assert f"mean absolute difference **{kept:.4f}**" in info
