"""Heavy work beside other visitors: one browser session computes R-Kem replicability while the
others change filters on Consensus.

One ``streamlit run serve.py`` on the app's database (a temporary copy of the published results
if it lacks them) and one Debian chromium with ``--sessions`` browser contexts. Session 0 opens
Replicability with R-Kem (``--pairs`` sample pairs per size, sizes 5, 10, ... 25: 2 x pairs x 5
exact Kemeny problems) and waits for the R-Kem line to join its figure. As soon as its
computation has started, the other sessions open ``/consensus?metric=AUC`` and add and remove
the Acc metric ``--changes`` times each, timed as ``bench_soak.py`` times them (click to new
state shown, nothing stale, the running indicator gone).

Prints the median and the worst filter change and first page load of the other sessions, how
many of their changes ended while R-Kem was still computing, R-Kem's own time, and the load
average. To compare with an earlier version, run this file from a ``git worktree`` of it (copy
the file there): the server is the worktree's ``serve.py``.

Measured (2 cores, 8 sessions, 4 changes each, 300 pairs; the previous version first, load 10-22,
then this one, load 18-19): R-Kem on a thread of the server: the other 7 sessions' filter change
median 17.5 s, worst 42.4 s, first load median 41.1 s; R-Kem in a niced worker process: median
5.3 s, worst 7.9 s, first load 20.5 s (R-Kem itself 126 s then, 110 s now).

Usage: ``.venv/bin/python benchmarks/bench_concurrency.py [--sessions 8] [--changes 4] [--pairs 100]``
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil  # a dependency of dask's distributed scheduler, installed with encbench

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from browsertest import CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402

from bench_pages import published_db  # noqa: E402 - this folder is on sys.path when run as a script
from bench_soak import Session, cpu_s, one_session, server_process  # noqa: E402


async def kemeny_session(browser, url: str, pairs: int, timeout_s: float, out: dict,
                         started: asyncio.Event) -> None:
    """Session 0: Replicability with R-Kem until the R-Kem line has joined the figure."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1600})
    try:
        page = await context.new_page()
        page.set_default_timeout(timeout_s * 1000)
        start = time.perf_counter()
        await page.goto(f"{url}/replicability?strategy=R-Kem&n_pairs={pairs}&step=5")
        progress = page.locator(".st-key-kem-progress")
        await progress.wait_for()
        out["started_s"] = time.perf_counter() - start
        started.set()
        await progress.wait_for(state="detached")
        await page.get_by_text("R-Kem", exact=True).first.wait_for()
        out["done_s"] = time.perf_counter() - start
        out["done_at"] = time.perf_counter()
    except Exception as exc:  # noqa: BLE001 - reported, the other sessions' figures still count
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    finally:
        started.set()
        await context.close()


async def others(browser, url: str, n: int, changes: int, timeout_s: float,
                 started: asyncio.Event) -> list[Session]:
    await started.wait()
    results = [Session(i) for i in range(1, n + 1)]
    await asyncio.gather(*(one_session(browser, url, changes, timeout_s, r) for r in results))
    return results


async def run(url: str, sessions: int, changes: int, pairs: int, timeout_s: float) -> tuple[dict, list[Session], float]:
    from playwright.async_api import async_playwright

    kem: dict = {}
    started = asyncio.Event()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            heavy = asyncio.create_task(kemeny_session(browser, url, pairs, timeout_s * 10, kem, started))
            results = await others(browser, url, sessions - 1, changes, timeout_s, started)
            ended = time.perf_counter()
            await heavy
        finally:
            await browser.close()
    return kem, results, ended


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8, help="browser sessions, R-Kem's included")
    parser.add_argument("--changes", type=int, default=4, help="filter changes per other session")
    parser.add_argument("--pairs", type=int, default=100, help="R-Kem's sample pairs per size")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds one change may take")
    args = parser.parse_args(argv)
    if args.sessions < 2 or args.changes < 1 or args.pairs < 10:
        raise SystemExit(f"--sessions must be >= 2, --changes >= 1, --pairs >= 10: got "
                         f"{args.sessions}, {args.changes}, {args.pairs}")
    with tempfile.TemporaryDirectory() as tmp:
        db = published_db(Path(tmp))
        with streamlit_server(db, Path(tmp), ENCBENCH_WORKER_IDLE_EXIT="0") as url:
            server = server_process()
            time.sleep(2.0)                                      # the warm-up's loads settle
            load_before, cpu_before = psutil.getloadavg(), cpu_s(server)
            start = time.perf_counter()
            kem, results, others_ended = asyncio.run(run(url, args.sessions, args.changes, args.pairs,
                                                         args.timeout))
            wall, server_cpu = time.perf_counter() - start, cpu_s(server) - cpu_before
            load_after = psutil.getloadavg()

    changes = [t for r in results for t in r.changes_s]
    loads = [r.load_s for r in results if r.load_s is not None]
    failures = [(r.index, f) for r in results for f in r.failures]
    print(f"concurrency: session 0 computes R-Kem replicability ({args.pairs} pairs x 5 sizes), "
          f"{args.sessions - 1} sessions x {args.changes} Consensus filter changes meanwhile; "
          f"one streamlit run serve.py ({REPO}), one chromium")
    print(f"machine: {psutil.cpu_count()} cores, load average {_load(load_before)} before, "
          f"{_load(load_after)} after; wall {wall:.0f} s, server CPU {server_cpu:.1f} s")
    if "error" in kem:
        print(f"R-Kem session: {kem['error']}")
    else:
        running = kem["done_at"] > others_ended
        print(f"R-Kem: computing {kem['started_s']:.1f} s after its page opened, done after "
              f"{kem['done_s']:.1f} s ({'still computing when' if running else 'done before'} the "
              f"other sessions finished)")
    print(f"other sessions: {len(changes)} of {len(results) * args.changes} changes shown, "
          f"{len(failures)} failed")
    if changes:
        print(f"filter change:  median {statistics.median(changes):6.2f} s, worst {max(changes):6.2f} s "
              f"(n={len(changes)})")
    if loads:
        print(f"first load:     median {statistics.median(loads):6.2f} s, worst {max(loads):6.2f} s "
              f"(n={len(loads)})")
    for index, failure in failures[:20]:
        print(f"  session {index}: {failure}")


def _load(avg: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.1f}" for x in avg)


if __name__ == "__main__":
    main()
