"""``serve.py``: the server entry point warms the process for the first visitor."""
from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
import streamlit as st
from pagetest import REPO, open_page

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


def test_serves_the_app_beside_it():
    """``streamlit run serve.py`` resolves the script next to serve.py: the app's entry point."""
    assert serve.app.script_path == Path("app.py")
    assert (Path(serve.__file__).parent / serve.app.script_path).samefile(REPO / "app.py")


async def _start_and_stop() -> None:
    async with serve.lifespan(serve.app):
        pass


def test_the_first_overview_after_the_server_starts_loads_no_scores(published_db, monkeypatch, counted_loads):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))
    asyncio.run(_start_and_stop())                    # the server's start-up hook: the warm-up
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
