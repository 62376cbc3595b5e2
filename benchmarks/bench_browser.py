"""Latency in a real browser: ``streamlit run`` + Debian chromium driven by Playwright.

Measures, on the app's database (``ENCBENCH_DB`` or ``db/encbench.duckdb``; built if missing):

- first visit: a freshly started server, the Overview page loaded until its script run is
  over (imports, the first queries and charts; DESIGN.md target <= 3 s);
- filter change: on Consensus, adding or removing a metric (AUC <-> AUC + Acc) through the
  multiselect, until the page has rerun and shows the new combination count (target <= 0.5 s
  median);
- bootstrap-driven select: on Consensus, the "Interval strategy" select (the rank intervals are a
  bootstrap of B = 200 resamples), until the rerun is over.

A change counts from the click to the moment the page shows the new state and Streamlit's
"running" indicator is gone. Each figure is the median over ``--repeat`` changes (first ones
included: a user pays for them too). The server runs with one process, as ``streamlit run`` does.

Usage: ``.venv/bin/python benchmarks/bench_browser.py [--repeat 8]``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from browsertest import browser_page, streamlit_server  # noqa: E402

from bench_pages import published_db  # noqa: E402 - this folder is on sys.path when run as a script

IDLE = "() => document.querySelectorAll('[data-testid=stStatusWidget]').length === 0"


def settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until the script run is over (the running indicator gone for two animation frames)."""
    page.wait_for_function(IDLE, timeout=timeout_ms, polling="raf")


def first_visit(page, url: str) -> float:
    start = time.perf_counter()
    page.goto(url)
    page.locator("[data-testid='stMetric']").first.wait_for(timeout=60_000)
    page.locator("[data-testid='stDataFrame']").nth(2).wait_for(timeout=60_000)
    settle(page)
    return time.perf_counter() - start


def _count_text(n: int) -> str:
    return f"{n} combination(s)"


def filter_changes(page, url: str, repeat: int) -> list[float]:
    """Add / remove the Acc metric on Consensus; time until the combination count changes."""
    page.goto(f"{url}/consensus?metric=AUC")
    page.get_by_text(_count_text(1)).first.wait_for(timeout=90_000)
    settle(page)
    times = []
    metric = page.locator(".st-key-metric")
    for i in range(repeat):
        if i % 2 == 0:                                   # add Acc
            field = metric.locator("input")
            field.click()
            field.fill("Acc")
            option = page.get_by_role("option", name="Acc", exact=True)
            option.wait_for()
            start = time.perf_counter()
            option.click()
            expected = _count_text(2)
        else:                                            # remove Acc, the last chip
            field = metric.locator("input")
            field.click()
            start = time.perf_counter()
            field.press("Backspace")
            expected = _count_text(1)
        page.get_by_text(expected).first.wait_for(timeout=60_000)
        settle(page)
        times.append(time.perf_counter() - start)
        page.keyboard.press("Escape")
        page.wait_for_timeout(300)
    return times


def interval_selects(page, url: str, repeat: int) -> list[float]:
    """Switch the bootstrap "Interval strategy" select between the selected strategies."""
    page.goto(f"{url}/consensus")
    page.locator(".st-key-istrategy").wait_for(timeout=90_000)
    settle(page)
    names = ["Q-M", "R-Nem", "R-M"]
    times = []
    for i in range(repeat):
        name = names[i % len(names)]
        field = page.locator(".st-key-istrategy input")
        field.click()
        field.fill(name)                                 # the combobox lists matching options
        option = page.get_by_role("option", name=name, exact=True)
        option.wait_for()
        start = time.perf_counter()
        option.click()
        page.get_by_text(f"{name} consensus rank with its 95% bootstrap interval").first.wait_for(timeout=60_000)
        settle(page)
        times.append(time.perf_counter() - start)
        page.wait_for_timeout(300)
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=8)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = published_db(Path(tmp))
        with streamlit_server(db, Path(tmp), ENCBENCH_WORKER_IDLE_EXIT="0") as url, \
                browser_page(height=1600, timeout_ms=90_000) as page:
            first = first_visit(page, url)
            filters = filter_changes(page, url, args.repeat)
            selects = interval_selects(page, url, args.repeat)
    med = statistics.median
    print(f"chromium + streamlit run, database {db}")
    print(f"first visit (fresh server, Overview):        {first:6.2f} s   (target <= 3 s)")
    print(f"filter change (Consensus metric), median:    {med(filters):6.2f} s   (target <= 0.5 s; "
          f"min {min(filters):.2f}, max {max(filters):.2f}, n={len(filters)})")
    print(f"bootstrap select (Interval strategy), median: {med(selects):6.2f} s   "
          f"(min {min(selects):.2f}, max {max(selects):.2f}, n={len(selects)})")


if __name__ == "__main__":
    main()
