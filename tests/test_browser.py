"""End to end in a real browser: ``streamlit run`` + Debian chromium driven by Playwright.

Opens the Consensus page, changes the model through the UI, waits for the ranking to change,
downloads the rankings CSV and checks its content, and saves a screenshot under the test's tmp
dir. Skipped only outside CI when ``/usr/bin/chromium`` is absent; with ``CI=true`` it must run.
"""
from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IN_CI = os.environ.get("CI", "").lower() == "true"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI,
                       reason="Debian chromium not installed at /usr/bin/chromium "
                              "(apt-get install -y chromium; CI installs it and runs this test)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"streamlit did not answer {url}/_stcore/health within {timeout} s")


@pytest.fixture()
def server(published_db, tmp_path):
    """``streamlit run app.py`` on a free port, reading the published test database."""
    assert CHROMIUM.exists(), "CI=true: the browser test must run, but /usr/bin/chromium is missing"
    port = _free_port()
    env = {**os.environ, "ENCBENCH_DB": str(published_db), "ENCBENCH_WORKER_IDLE_EXIT": "0"}
    log = open(tmp_path / "streamlit.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_consensus_model_change_download_and_screenshot(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2200}, accept_downloads=True)
            page.set_default_timeout(60_000)
            page.goto(f"{server}/consensus")
            summary = page.locator(".st-key-ranking-summary")
            # The page renders client-side: wait for the computed ranking, not for "load".
            expect(summary).to_contain_text("Best by R-M: Sum", timeout=90_000)

            model = page.locator(".st-key-model")
            field = model.locator("input")
            field.click()
            field.press("Backspace")                               # remove the LogReg chip
            expect(page.get_by_text("Select at least one value for: Model")).to_be_visible()
            field.click()
            field.fill("DT")
            page.get_by_role("option", name="DT", exact=True).click()
            page.keyboard.press("Escape")
            expect(summary).to_contain_text("Best by R-M: WoE")     # the ranking changed
            expect(page).to_have_url(re.compile(r"[?&]model=DT(&|$)"))  # filter state in the URL

            button = page.locator(".st-key-dl-table-rankings-csv button")
            with page.expect_download() as info:
                button.click()
            download = info.value
            assert download.suggested_filename.startswith("encbench_consensus_rankings_model=DT_")
            data = Path(download.path()).read_bytes()
            page.screenshot(path=str(tmp_path / "consensus.png"), full_page=True)
        finally:
            browser.close()

    text = data.decode("utf-8")
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any(line == '# filter model: ["DT"]' for line in header)
    assert any(line.startswith("# run_ids: published-") for line in header)
    table = pd.read_csv(io.BytesIO(data), comment="#")
    assert list(table.columns) == ["encoder", "family", "R-M", "Q-M", "R-Nem (alpha=0.05)"]
    assert len(table) == 32 and table.loc[0, "encoder"] == "WoE" and table.loc[0, "R-M"] == 1
    assert (tmp_path / "consensus.png").stat().st_size > 10_000
