"""Helpers for the real-browser tests: a free port, a healthy streamlit server, chromium launch."""
from __future__ import annotations

import contextlib
import os
import shutil
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


def private_copy(db: Path, folder: Path) -> Path:
    """A writable copy of database ``db`` and its read snapshot in ``folder/db/`` (its uploads
    folder beside it), for a server whose worker writes or a test that adds runs first."""
    from encbench.store import snapshot_path

    path = folder / "db" / "encbench.duckdb"
    path.parent.mkdir(parents=True)
    shutil.copyfile(db, path)
    shutil.copyfile(snapshot_path(db), snapshot_path(path))
    return path


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


#: The chromium of the running ``shared_chromium`` block, which ``browser_page`` opens its pages in.
_SHARED: dict = {}


@contextlib.contextmanager
def shared_chromium():
    """One chromium for the block: each ``browser_page`` in it opens a fresh context (its own
    cookies, storage and downloads) instead of launching a browser, which costs about a second.

    Sync Playwright marks its event loop as running while it is started, so the block must end
    before a test of another module runs: see the module-scoped fixture ``chromium_per_module``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        _SHARED["browser"] = browser
        try:
            yield browser
        finally:
            _SHARED.pop("browser", None)
            browser.close()


@pytest.fixture(scope="module", autouse=True)
def chromium_per_module():
    """One chromium per test module (a module imports this fixture to use it), closed after its
    last test so that no other module's test runs while Playwright holds the thread's event loop."""
    with shared_chromium() as browser:
        yield browser


@contextlib.contextmanager
def browser_page(*, height: int = 1600, timeout_ms: int = 60_000, downloads: bool = False,
                 width: int = 1400, color_scheme: str = "light"):
    """A page of headless Debian chromium (``width`` px wide), in a fresh browser context closed
    on exit: in the running ``shared_chromium``, else in a browser launched for it.

    ``color_scheme="dark"`` makes the browser prefer dark: Streamlit then draws its dark theme."""
    from playwright.sync_api import expect, sync_playwright

    # expect() has its own 5 s default, apart from the page's: a loaded 2-core machine needs more
    # for a fresh server's first page.
    expect.set_options(timeout=timeout_ms)
    options = {"viewport": {"width": width, "height": height}, "accept_downloads": downloads,
               "color_scheme": color_scheme}
    with contextlib.ExitStack() as stack:
        browser = _SHARED.get("browser")
        if browser is None:
            p = stack.enter_context(sync_playwright())
            browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            stack.callback(browser.close)
        context = browser.new_context(**options)
        stack.callback(context.close)
        page = context.new_page()
        page.set_default_timeout(timeout_ms)
        yield page


def settled(page, timeout_ms: int | None = None) -> None:
    """Wait until the app's script run has finished (``.stApp``'s script state is
    ``notRunning``) and the browser has drawn two frames since: what the run sent is on screen."""
    from playwright.sync_api import expect

    expect(page.locator(".stApp[data-test-script-state='notRunning']")).to_have_count(1, timeout=timeout_ms)
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


#: Resolves with the element's box once it has kept the same size and place for 5 frames.
_STEADY = """el => new Promise(done => {
  let last = "", same = 0;
  const look = () => {
    const r = el.getBoundingClientRect(), now = [r.x, r.y, r.width, r.height].join();
    same = (now === last && r.width > 0) ? same + 1 : 0;
    last = now;
    if (same >= 5) done({x: r.x, y: r.y, width: r.width, height: r.height});
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})"""


def steady_box(locator) -> dict:
    """The bounding box of ``locator`` once drawn at its final size (a chart sizes itself to its
    container after it mounts): unchanged for five animation frames."""
    locator.wait_for()
    return locator.evaluate(_STEADY)


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
