"""Take README's screenshot of the app from a real browser: docs/screenshot.png.

Builds a scratch database from the shipped results (``encbench db init``), starts the app as
``make run`` does (``streamlit run serve.py``, loopback only, a free port), opens a page in
headless Debian chromium through Playwright, waits until the script run is over and the charts
are drawn, and writes a palette PNG of the viewport (1280 x 800 by default). Nothing of the
user's ``db/`` is read or written.

    .venv/bin/python docs/screenshot.py               # Consensus rankings, its CD diagram in view
    .venv/bin/python docs/screenshot.py --path explorer --scroll 0 --out /tmp/explorer.png

Needs ``/usr/bin/chromium`` (Debian's ``chromium`` package; ``.ci/run`` installs it).
"""
from __future__ import annotations

import argparse
import io
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer {url}/_stcore/health within {timeout} s")


def _optimised_png(png: bytes) -> bytes:
    """The screenshot as a 256-colour palette PNG (a fifth of the size, text still sharp)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    out = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, format="PNG", optimize=True)
    return out.getvalue()


def take(path: str, out: Path, *, width: int, height: int, settle_ms: int, scroll: int = 0) -> int:
    """Serve the app on a scratch database and write the screenshot of ``path``; its size."""
    from playwright.sync_api import expect, sync_playwright

    with tempfile.TemporaryDirectory(prefix="encbench-screenshot-") as scratch:
        db = Path(scratch) / "encbench.duckdb"
        env = {**os.environ, "ENCBENCH_DB": str(db), "ENCBENCH_WORKER_IDLE_EXIT": "1"}
        subprocess.run([sys.executable, "-m", "encbench", "db", "init"], cwd=REPO, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        with open(Path(scratch) / "streamlit.log", "wb") as log:
            server = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", str(REPO / "serve.py"), "--server.headless", "true",
                 "--server.address", "127.0.0.1", "--server.port", str(port),
                 "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                _wait_healthy(url, server)
                expect.set_options(timeout=120_000)
                with sync_playwright() as p:
                    browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                    try:
                        page = browser.new_page(viewport={"width": width, "height": height},
                                                color_scheme="light")
                        page.set_default_timeout(120_000)
                        page.goto(f"{url}/{path}")
                        expect(page.locator("h1").first).to_be_visible()
                        page.wait_for_timeout(1500)
                        expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0)
                        page.locator("canvas, svg.marks").first.wait_for()
                        if scroll:  # the wheel over the main column scrolls it, sidebar kept
                            page.mouse.move(width * 0.6, height * 0.5)
                            page.mouse.wheel(0, scroll)
                        page.wait_for_timeout(settle_ms)  # let the charts' transitions end
                        png = page.screenshot(full_page=False)
                    finally:
                        browser.close()
            finally:
                server.terminate()
                try:
                    server.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    server.kill()
    data = _optimised_png(png)
    out.write_bytes(data)
    return len(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default="consensus?section=Critical+difference",
                        help="page and query after the server's URL")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshot.png")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    parser.add_argument("--settle-ms", type=int, default=2000)
    parser.add_argument("--scroll", type=int, default=880, help="pixels the page is scrolled down")
    args = parser.parse_args(argv)
    size = take(args.path, args.out, width=args.width, height=args.height, settle_ms=args.settle_ms,
                scroll=args.scroll)
    print(f"wrote {args.out} ({size / 1024:.0f} KiB, {args.width} x {args.height})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
