"""``serve.py``: the server entry point warms the process for the first visitor."""
from __future__ import annotations

import logging

import pytest
import streamlit as st
from pagetest import open_page

import serve
from encbench.store import queries


@pytest.fixture()
def counted_loads(monkeypatch):
    """Count the score loads that reach the database (a cache miss of ``common.scores``)."""
    calls = []
    real = queries.load_scores

    def load(*args, **kwargs):
        calls.append(kwargs.get("origins"))
        return real(*args, **kwargs)

    monkeypatch.setattr(queries, "load_scores", load)
    st.cache_data.clear()
    yield calls
    st.cache_data.clear()


def test_serves_app_py():
    assert isinstance(serve.app, st.App)


def test_the_first_overview_after_the_warm_up_loads_no_scores(published_db, monkeypatch, counted_loads):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))
    serve.warm()
    assert counted_loads == [("published",)]
    at = open_page("overview")
    assert {m.label: m.value for m in at.metric}["Results"] == "61,812"
    assert counted_loads == [("published",)]          # the page found the warm-up's load in the cache


def test_a_database_that_cannot_be_read_is_logged_not_raised(tmp_path, monkeypatch, caplog, counted_loads):
    monkeypatch.setenv("ENCBENCH_DB", str(tmp_path / "nothing.duckdb"))
    with caplog.at_level(logging.WARNING, logger="encbench.serve"):
        serve.warm()
    assert "the database could not be loaded" in caplog.text
    assert counted_loads == []
