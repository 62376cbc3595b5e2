"""``serve.py``: the server entry point warms the process for the first visitor."""
from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import sys
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


# -- where the server listens ------------------------------------------------------------------

def test_the_repository_config_serves_to_this_machine_only():
    """``.streamlit/config.toml`` beside serve.py and app.py: loopback, headless, no usage stats."""
    import tomllib

    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["server"]["headless"] is True
    assert config["browser"]["gatherUsageStats"] is False


def _other_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback (where a wildcard bind would answer)."""
    import ipaddress

    import psutil

    return [a.address for addrs in psutil.net_if_addrs().values() for a in addrs
            if a.family == socket.AF_INET and not ipaddress.ip_address(a.address).is_loopback]


@pytest.mark.parametrize("script", ["serve.py", "app.py"])
def test_streamlit_run_without_an_address_listens_on_loopback_only(published_db, tmp_path, script):
    """``streamlit run <script>`` with no address flag, started from another directory: the
    config beside the script binds it to 127.0.0.1, and no other address of this machine answers."""
    import psutil
    from browsertest import free_port, stop, wait_healthy

    port = free_port()
    env = {**os.environ, "ENCBENCH_DB": str(published_db), "ENCBENCH_WORKER_IDLE_EXIT": "0"}
    with open(tmp_path / "streamlit.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(REPO / script),
                                 "--server.port", str(port), "--server.fileWatcherType", "none"],
                                cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_healthy(f"http://127.0.0.1:{port}", proc)
            listening = {c.laddr for c in psutil.Process(proc.pid).net_connections(kind="inet")
                         if c.status == psutil.CONN_LISTEN}
            assert listening == {("127.0.0.1", port)}, listening
            for address in _other_addresses():
                with socket.socket() as s, pytest.raises(ConnectionRefusedError):
                    s.settimeout(5)
                    s.connect((address, port))
        finally:
            stop(proc)
    assert "0.0.0.0" not in (tmp_path / "streamlit.log").read_text()
