"""Helpers for the real-browser tests: a free port, a healthy streamlit server, chromium launch."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IN_CI = os.environ.get("CI", "").lower() == "true"

#: Skip only outside CI when chromium is absent; in CI (CI=true) the test must run and fail loudly.
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists() and not IN_CI,
    reason="Debian chromium not installed at /usr/bin/chromium "
           "(apt-get install -y chromium; CI installs it and runs this test)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Wait until streamlit answers its health endpoint (raises if it exits or times out)."""
    assert CHROMIUM.exists(), "CI=true: the browser test must run, but /usr/bin/chromium is missing"
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


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def streamlit_server(db: Path, log_dir: Path, *, script: str = "serve.py", **env_extra: str):
    """``streamlit run <script>`` on a free port against database ``db``; yields its URL.

    ``script`` is ``serve.py`` (what ``make run`` serves) or ``app.py`` (plain ``streamlit run``)."""
    port = free_port()
    env = {**os.environ, "ENCBENCH_DB": str(db), **env_extra}
    with open(log_dir / "streamlit.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(REPO / script), "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, proc)
            yield url
        finally:
            stop(proc)


@contextlib.contextmanager
def browser_page(*, height: int = 1600, timeout_ms: int = 60_000, downloads: bool = False,
                 width: int = 1400, color_scheme: str = "light"):
    """A page of headless Debian chromium (``width`` px wide), closed with its browser on exit.

    ``color_scheme="dark"`` makes the browser prefer dark: Streamlit then draws its dark theme."""
    from playwright.sync_api import expect, sync_playwright

    # expect() has its own 5 s default, apart from the page's: a loaded 2-core machine needs more
    # for a fresh server's first page.
    expect.set_options(timeout=timeout_ms)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height}, accept_downloads=downloads,
                                    color_scheme=color_scheme)
            page.set_default_timeout(timeout_ms)
            yield page
        finally:
            browser.close()


def download_button(page, key: str, *, attempts: int = 4, wait_ms: int = 20_000):
    """The download button ``key`` (``dl-table-rankings-csv``), its Download menu opened first
    (``exports-table-rankings``: the buttons are built while the menu is open).

    A click that lands while the page is still rerunning can be lost with the rerun: the menu is
    clicked again (up to ``attempts`` times) while its buttons are not built after ``wait_ms``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    button = page.locator(f".st-key-{key} button")
    if button.is_visible():
        return button
    menu = page.locator(f".st-key-exports-{key.removeprefix('dl-').rsplit('-', 1)[0]} button").first
    for _ in range(attempts):
        if button.count() == 0:
            menu.click()
        try:
            button.wait_for(timeout=wait_ms)
            return button
        except PlaywrightTimeout:
            continue
    button.wait_for()                             # the page's own timeout, then its call log
    return button
