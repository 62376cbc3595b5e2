"""Many users at once: N browser sessions, each making M filter changes on Consensus, concurrently.

One ``streamlit run serve.py`` (one server process, as ``make run`` starts it) on the app's
database (``ENCBENCH_DB`` or ``db/encbench.duckdb``; a temporary copy of the published results if
it lacks them), and one Debian chromium with N browser contexts: N Streamlit sessions, each with
its own websocket and session state, as N people would have. Every session opens
``/consensus?metric=AUC`` and then adds and removes the Acc metric in turn, M times; all sessions
run at the same time (asyncio, Playwright's async API).

A change counts from the click to the moment that session's page shows the new state: the new
combination count, nothing left ``data-stale`` and Streamlit's running indicator gone (the end of
``bench_browser.py``'s filter change). A change that does not get there within ``--timeout``
seconds, or a page that shows an exception, is a failed render.

Prints the renders that succeeded, the median, 90th percentile and largest latency of a change
over all sessions, the first page load's, the server's resident memory (RSS) before the first
session, at its peak (sampled every 0.25 s) and after the sessions ended, and the server's CPU
seconds. A benchmark, bounded by ``--sessions``, ``--changes`` and ``--timeout``; nothing is
asserted. The machine's other load distorts wall times: the load average is printed beside them.

Usage: ``.venv/bin/python benchmarks/bench_soak.py [--sessions 5] [--changes 5] [--timeout 180]``
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil  # a dependency of dask's distributed scheduler, installed with encbench

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from browsertest import CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402

from bench_browser import IDLE  # noqa: E402 - this folder is on sys.path when run as a script
from bench_pages import published_db  # noqa: E402

PATH = "consensus?metric=AUC"
SHOWN = {False: "1 combination(s)", True: "2 combination(s)"}   # without / with Acc


@dataclass
class Session:
    """What one browser session measured."""

    index: int
    load_s: float | None = None
    changes_s: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


class MemorySampler:
    """The server's RSS (MB), sampled on a thread until stopped; ``peak`` is the largest seen."""

    def __init__(self, proc: psutil.Process, every: float = 0.25):
        self.proc, self.every, self.peak = proc, every, rss_mb(proc)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.peak = max(self.peak, rss_mb(self.proc))
            except psutil.Error:
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def rss_mb(proc: psutil.Process) -> float:
    return proc.memory_info().rss / 1e6


def server_process() -> psutil.Process:
    """The ``streamlit run`` process this benchmark started (a child of this process)."""
    found = [p for p in psutil.Process().children(recursive=True)
             if "streamlit" in " ".join(p.cmdline())]
    if len(found) != 1:
        raise RuntimeError(f"expected one streamlit server among this process's children: got {len(found)}")
    return found[0]


def cpu_s(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


async def settle(page, timeout_ms: float) -> None:
    # a fixed interval, not requestAnimationFrame: N pages share one headless browser
    await page.wait_for_function(IDLE, timeout=timeout_ms, polling=100)


async def one_session(browser, url: str, changes: int, timeout_s: float, result: Session) -> None:
    timeout_ms = timeout_s * 1000
    context = await browser.new_context(viewport={"width": 1400, "height": 1600})
    try:
        page = await context.new_page()
        page.set_default_timeout(timeout_ms)
        start = time.perf_counter()
        await page.goto(f"{url}/{PATH}")
        await page.get_by_text(SHOWN[False]).first.wait_for()
        await settle(page, timeout_ms)
        result.load_s = time.perf_counter() - start
        metric = page.locator(".st-key-metric")
        for i in range(changes):
            with_acc = i % 2 == 0
            field = metric.locator("input")
            try:
                await field.click()
                if with_acc:                                     # add Acc
                    await field.fill("Acc")
                    option = page.get_by_role("option", name="Acc", exact=True)
                    await option.wait_for()
                    start = time.perf_counter()
                    await option.click()
                else:                                            # remove Acc, the last chip
                    start = time.perf_counter()
                    await field.press("Backspace")
                await page.get_by_text(SHOWN[with_acc]).first.wait_for()
                await settle(page, timeout_ms)
                elapsed = time.perf_counter() - start
                if await page.locator("[data-testid='stException']").count():
                    result.failures.append(f"change {i + 1}: the page shows an exception")
                else:
                    result.changes_s.append(elapsed)
                await page.keyboard.press("Escape")
                await page.wait_for_timeout(300)
            except Exception as exc:  # noqa: BLE001 - a timeout or a vanished element: a failed render
                result.failures.append(f"change {i + 1}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    except Exception as exc:  # noqa: BLE001 - the session never loaded: counted, the others go on
        result.failures.append(f"first load: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    finally:
        await context.close()


async def soak(url: str, sessions: int, changes: int, timeout_s: float) -> list[Session]:
    from playwright.async_api import async_playwright

    results = [Session(i) for i in range(sessions)]
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            await asyncio.gather(*(one_session(browser, url, changes, timeout_s, r) for r in results))
        finally:
            await browser.close()
    return results


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation between order statistics."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5, help="browser sessions at once")
    parser.add_argument("--changes", type=int, default=5, help="filter changes per session")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds one change may take")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.changes < 1 or args.timeout <= 0:
        raise SystemExit(f"--sessions and --changes must be >= 1 and --timeout > 0: got "
                         f"{args.sessions}, {args.changes}, {args.timeout}")
    with tempfile.TemporaryDirectory() as tmp:
        db = published_db(Path(tmp))
        with streamlit_server(db, Path(tmp), ENCBENCH_WORKER_IDLE_EXIT="0") as url:
            server = server_process()
            time.sleep(2.0)                                      # the warm-up's loads settle
            before, cpu_before, load_before = rss_mb(server), cpu_s(server), psutil.getloadavg()
            start = time.perf_counter()
            with MemorySampler(server) as memory:
                results = asyncio.run(soak(url, args.sessions, args.changes, args.timeout))
            wall = time.perf_counter() - start
            after, cpu_used = rss_mb(server), cpu_s(server) - cpu_before
            time.sleep(5.0)                                      # sessions closed: what stays
            settled = rss_mb(server)
            load_after = psutil.getloadavg()

    changes = [t for r in results for t in r.changes_s]
    loads = [r.load_s for r in results if r.load_s is not None]
    failures = [(r.index, f) for r in results for f in r.failures]
    total = args.sessions * args.changes
    print(f"soak: {args.sessions} sessions x {args.changes} Consensus filter changes at once, one "
          f"streamlit run serve.py, one chromium; database {db}")
    print(f"machine: {psutil.cpu_count()} cores, load average {_load(load_before)} before, "
          f"{_load(load_after)} after; soak wall time {wall:.1f} s")
    print(f"renders:        {len(changes)} / {total} changes shown, {len(failures)} failed")
    if changes:
        print(f"filter change:  median {statistics.median(changes):6.2f} s, p90 {percentile(changes, 90):6.2f} s, "
              f"max {max(changes):6.2f} s (n={len(changes)})")
    if loads:
        print(f"first load:     median {statistics.median(loads):6.2f} s, max {max(loads):6.2f} s "
              f"(n={len(loads)})")
    print(f"server RSS:     {before:,.0f} MB before, peak {memory.peak:,.0f} MB, {after:,.0f} MB after the "
          f"sessions, {settled:,.0f} MB 5 s later")
    print(f"server CPU:     {cpu_used:.1f} s over the soak ({cpu_used / max(total, 1):.2f} s per change, "
          f"first loads included)")
    for index, failure in failures[:20]:
        print(f"  session {index}: {failure}")


def _load(avg: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.1f}" for x in avg)


if __name__ == "__main__":
    main()
