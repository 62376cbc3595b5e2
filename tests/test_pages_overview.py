"""AppTest: the Overview page, its messages, and the per-database cache."""
from __future__ import annotations

import pytest
from pagetest import charts, open_page, texts

from encbench.store import Writer


@pytest.fixture()
def published_env(published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))
    return published_db


def test_overview_shows_contents_and_headline(published_env):
    at = open_page("overview")
    assert [t.value for t in at.title] == ["encbench"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Results"] == "61,812" and metrics["Datasets"] == "50" and metrics["Encoders"] == "32"
    assert "Best overall: **WoE**" in texts(at)
    assert len(charts(at)) == 2                       # headline consensus + counts
    headline = at.dataframe[0].value
    assert len(headline) == 32 and headline["rank"].iloc[0] == 1
    labels = {b.proto.label for b in at.download_button}
    assert {"CSV", "PARQUET", "LaTeX", "PNG", "SVG"} <= labels


def test_empty_database_gets_a_message_and_caches_do_not_leak(published_env, tmp_path, monkeypatch):
    empty = tmp_path / "empty.duckdb"
    with Writer(empty):
        pass                                           # migrations only, snapshot published
    monkeypatch.setenv("ENCBENCH_DB", str(empty))
    at = open_page("overview")
    assert "holds no results" in texts(at)
    assert not at.metric                              # nothing cached from the published DB
    monkeypatch.setenv("ENCBENCH_DB", str(published_env))
    assert {m.label: m.value for m in open_page("overview").metric}["Results"] == "61,812"


def test_missing_snapshot_is_explained(tmp_path, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(tmp_path / "nothing.duckdb"))
    at = open_page("overview")
    assert "no read snapshot" in "\n".join(e.value for e in at.error)
