"""AppTest: the Overview page, its messages, and the per-database cache.

What the Overview says of the published benchmark (its counts, best encoder, voters) is checked
on the full published database; the rest of its wiring on the small one (tests/small_db.py),
against counts read off that database."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pagetest import charts, open_exports, open_page, texts

from encbench.store import Reader, Writer, queries


@pytest.fixture()
def published_env(published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))
    return published_db


@pytest.fixture()
def small_env(small_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))
    return small_db


def _published_counts(db) -> tuple[int, int]:
    """(results, datasets) of the published rows of ``db``: the Overview's default view."""
    with Reader(db) as reader:
        rows = queries.load_scores(reader, origins=["published"])
    return len(rows), rows["dataset"].nunique()


def test_overview_shows_contents_and_headline(published_env):
    at = open_page("overview")
    assert [t.value for t in at.title] == ["encbench"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Results"] == "61,812" and metrics["Datasets"] == "50" and metrics["Encoders"] == "32"
    assert "Best overall: **WoE**" in texts(at)
    # every encoder's mean rank covers the same voters, and the line says which
    assert "each of the 32 encoders over the same 1,311 voters" in texts(at)
    assert len(charts(at)) == 2                       # headline consensus + counts
    headline = at.dataframe[0].value
    assert len(headline) == 32 and headline["rank"].iloc[0] == 1 and set(headline["n_voters"]) == {1311}
    open_exports(at, "chart-headline-consensus", "table-headline-consensus")
    labels = {b.proto.label for b in at.download_button}
    assert {"CSV", "Parquet", "LaTeX", "Provenance", "PNG", "SVG"} <= labels


def test_empty_database_gets_a_message_and_caches_do_not_leak(small_env, tmp_path, monkeypatch):
    results, _ = _published_counts(small_env)
    assert {m.label: m.value for m in open_page("overview").metric}["Results"] == f"{results:,}"
    empty = tmp_path / "empty.duckdb"
    with Writer(empty):
        pass                                           # migrations only, snapshot published
    monkeypatch.setenv("ENCBENCH_DB", str(empty))
    at = open_page("overview")
    assert "holds no results" in texts(at)
    assert not at.metric                              # nothing cached from the other DB
    monkeypatch.setenv("ENCBENCH_DB", str(small_env))
    assert {m.label: m.value for m in open_page("overview").metric}["Results"] == f"{results:,}"


def test_missing_snapshot_is_explained(tmp_path, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(tmp_path / "nothing.duckdb"))
    at = open_page("overview")
    assert "no read snapshot" in "\n".join(e.value for e in at.error)


def test_first_visit_imports_no_encoder_library(small_env):
    """The first page a visitor sees reads encoder names and families, never builds an encoder:
    scikit-learn, SciPy and the encoder libraries stay unimported (about 2 s of a first visit on
    2 cores). Run in a fresh interpreter: this one has imported them already."""
    code = ("import sys; from pagetest import REPO; from streamlit.testing.v1 import AppTest; "
            "at = AppTest.from_file(str(REPO / 'app.py'), default_timeout=120); at.run(); "
            "assert not at.exception, at.exception; assert at.metric, 'the Overview was not shown'; "
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'scipy', "
            "'category_encoders', 'skrub', 'lightgbm', 'skopt'}); assert not heavy, heavy")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parent, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def _table_columns(at) -> list[list[str]]:
    return [list(frame.value.columns) for frame in at.dataframe]


def test_sections_below_the_headline_are_drawn_only_when_open(small_env):
    """The tabs below the headline are lazy; a first visit draws the headline and
    the open tab (results per model) only, and a link opens another tab with its own content."""
    at = open_page("overview")
    assert [t.label for t in at.tabs] == ["Results per model and tuning", "Runs", "Datasets"]
    columns = _table_columns(at)
    assert len(columns) == 2 and "mean_rank" in columns[0]      # headline + results per metric
    assert not any("run_id" in c or "n_rows" in c for c in columns)

    runs = open_page("overview", {"section": "Runs"})
    columns = _table_columns(runs)
    assert len(columns) == 2 and "run_id" in columns[1]
    assert len(charts(runs)) == 1                                # the headline chart only
    with Reader(small_env) as reader:                  # the runs of the database's binary results
        run_ids = set(queries.load_scores(reader, tasks=["binary"])["run_id"])
    assert set(runs.dataframe[1].value["run_id"]) == run_ids and "published-matteucci2023" in run_ids

    datasets = open_page("overview", {"section": "Datasets"})
    table = datasets.dataframe[1].value
    results, n_datasets = _published_counts(small_env)
    assert len(table) == n_datasets and "n_rows" in table.columns and table["results"].sum() == results
    assert f"{n_datasets} datasets with results in this view" in texts(datasets)


def test_a_link_to_a_section_that_does_not_exist_opens_the_first(small_env):
    at = open_page("overview", {"section": "Nothing"})
    assert len(charts(at)) == 2 and len(at.dataframe) == 2


def test_a_newcomer_gets_next_steps_and_plain_words(small_env):
    """The Overview said "Benchmark categorical encoders (binary targets; ...)" and offered no next
    step: it now says what encbench answers in plain words and links the Run page, the rankings
    and the paper, with a guide to reading it."""
    at = open_page("overview")
    shown = texts(at)
    assert "binary targets" not in shown
    assert "Which encoder should turn your categorical columns into numbers?" in shown
    with Reader(small_env) as reader:                  # binary datasets with results of any origin
        n_datasets = queries.load_scores(reader, tasks=["binary"])["dataset"].nunique()
    assert f"Shown: binary classification (a yes/no target), {n_datasets} dataset(s)" in shown
    links = {(p.proto.label, p.proto.page) for p in at.get("page_link")}
    labels = {label for label, _ in links}
    assert {"Run the encoders on your data", "Rankings per model and metric", "The paper (arXiv:2307.09191)"} <= labels
    assert any(page.endswith("arxiv.org/abs/2307.09191") for _, page in links)
    assert any("How to read this page" in e.label for e in at.expander)


def test_a_headline_row_leads_to_that_encoder_s_scores_per_dataset(small_env):
    """Selecting a row of the headline table offers a link to the Results explorer's drill-down
    on that encoder, over every model, tuning and metric the headline pooled."""
    at = open_page("overview")
    assert "Select a row to see that encoder's scores" in texts(at)
    at.session_state["select-headline-consensus"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    second = at.dataframe[0].value["encoder"].iloc[1]
    link = next(p.proto for p in at.get("page_link") if p.proto.page == "explorer")
    assert link.label.startswith(f"{second}: its scores dataset by dataset")
    query = link.query_string
    assert f"drill_encoder={second}" in query and "section=Drill+down" in query
    assert "tuning=full" in query and "metric=Acc" in query and "model=LogReg" in query
