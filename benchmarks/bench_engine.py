"""Throughput of the batch engine: experiments per minute, local pool vs Dask, side by side.

Fixed grid (no tuning, 5 outer folds): credit-g and tic-tac-toe x 8 encoders x 4 models
(DT, kNN, LogReg, LGBM with early stopping) x 4 metrics = 256 experiments, 80 tasks (a task is one
(dataset, encoder, fold) with all models and metrics). Each configuration runs the whole grid
into a fresh temporary database:

- ``local x1`` / ``local x2``: one / two local task processes (``run_grid(workers=...)``);
- ``dask 2x1``: a ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``;
- ``cluster 2x1``: a real cluster as docs/user-guide.md, "Running on a cluster", starts it: ``dask scheduler`` and
  two ``dask worker --nthreads 1`` processes of their own (no PYTHONPATH, another working
  directory: encbench is imported because it is installed), reached at ``tcp://127.0.0.1:PORT``.

Wall time includes starting the local task processes (about 2-3 s each, importing
scikit-learn, LightGBM and scikit-optimize) at every run; the Dask workers keep theirs between
runs, so only the first Dask run pays it (the cluster start-ups are reported separately). An experiment is
one (dataset, encoder, model, metric) with all its folds; "rows/min" counts result rows
(experiments x folds).

Each executor runs the grid ``--repeats`` times (default 2) in alternating order, with the
LocalCluster alive throughout, and the best time is reported: the machine is shared, and the
alternation spreads background load over all executors.

Usage: ``.venv/bin/python benchmarks/bench_engine.py [--encoders OH,MT,...] [--repeats 2] [--skip-dask]
[--configs "local x2,cluster 2x1"]``
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from encbench.engine import Grid, run_grid
from encbench.store import Writer

ENCODERS = ["OH", "Ord", "Count", "MT", "WoE", "CB", "ME_1", "CVMT_5"]
MODELS = ["DT", "kNN", "LogReg", "LGBM"]
DATASETS = ["bundled:credit-g", "bundled:tic-tac-toe"]


def _check(db: Path, run_id: str, expected: int) -> dict:
    with Writer(db, publish=False) as writer:
        rows = writer.query("SELECT status, count(*) AS n, sum(cv_score) AS s FROM results "
                            "WHERE run_id = ? GROUP BY status", [run_id])
    counts = dict(zip(rows["status"], rows["n"]))
    if counts.get("ok", 0) != expected:
        raise SystemExit(f"expected {expected} ok rows, got {counts}")
    return {"checksum": float(rows.loc[rows["status"] == "ok", "s"].iloc[0])}


@contextlib.contextmanager
def real_cluster(workdir: Path, n_workers: int = 2):
    """``dask scheduler`` + ``n_workers`` single-threaded ``dask worker`` processes; yield the address."""
    from distributed import Client

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    bindir = Path(sys.executable).parent
    commands = [[str(bindir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]]
    commands += [[str(bindir / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard",
                  "--local-directory", str(workdir / f"worker{i}")] for i in range(n_workers)]
    procs = [subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for cmd in commands]
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with Client(address, timeout="5s", set_as_default=False) as client:
                    client.wait_for_workers(n_workers, timeout=60)
                break
            except (OSError, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _quiet_dask() -> None:
    for name in list(logging.root.manager.loggerDict):
        if name.startswith(("distributed", "dask")):
            logging.getLogger(name).setLevel(logging.ERROR)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoders", default=",".join(ENCODERS))
    parser.add_argument("--repeats", type=int, default=2,
                        help="runs per executor, in alternating order; the best is reported")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--configs", default="local x1,local x2,dask 2x1,cluster 2x1",
                        help="comma-separated executors to run (the speed-up is against the first)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    grid = Grid(datasets=DATASETS, encoders=args.encoders.split(","), models=MODELS, tuning="no")
    n_tasks = len(DATASETS) * len(grid.encoders) * grid.n_folds
    n_experiments = len(DATASETS) * len(grid.encoders) * len(grid.models) * len(grid.scorings)
    n_rows = n_experiments * grid.n_folds
    print(f"grid: {len(DATASETS)} datasets x {len(grid.encoders)} encoders x {len(grid.models)} models "
          f"x {len(grid.scorings)} metrics, tuning no, {grid.n_folds} folds: {n_experiments} experiments, "
          f"{n_tasks} tasks, {n_rows} result rows; best of {args.repeats} alternating runs")

    load_before = os.getloadavg()[0]
    times: dict[str, list[float]] = {}
    checksums = set()
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        wanted = [c.strip() for c in args.configs.split(",")]
        if args.skip_dask:
            wanted = [c for c in wanted if c.startswith("local")]
        configs = [(name, {"workers": int(name[-1])}) for name in wanted if name in ("local x1", "local x2")]
        startups = {}
        # clusters stay alive during every run, so that all executors see the same background
        if "dask 2x1" in wanted:
            from distributed import LocalCluster

            _quiet_dask()
            start = time.perf_counter()
            cluster = stack.enter_context(LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                silence_logs=logging.ERROR))
            startups["LocalCluster"] = time.perf_counter() - start
            _quiet_dask()
            configs.append(("dask 2x1", {"scheduler": cluster.scheduler_address}))
        if "cluster 2x1" in wanted:
            (tmp / "cluster").mkdir()
            _quiet_dask()
            start = time.perf_counter()
            address = stack.enter_context(real_cluster(tmp / "cluster", 2))
            startups["dask scheduler + 2 dask worker processes"] = time.perf_counter() - start
            configs.append(("cluster 2x1", {"scheduler": address}))
        configs.sort(key=lambda c: wanted.index(c[0]))
        for repeat in range(args.repeats):
            for name, kwargs in configs if repeat % 2 == 0 else configs[::-1]:
                db = tmp / f"{name.replace(' ', '_')}-{repeat}.duckdb"
                start = time.perf_counter()
                run_id = run_grid(grid, db_path=db, progress=lambda *a: None, **kwargs)
                seconds = time.perf_counter() - start
                times.setdefault(name, []).append(seconds)
                checksums.add(round(_check(db, run_id, n_rows)["checksum"], 9))
                print(f"  {name}: {seconds:.1f} s", flush=True)

    print()
    print(f"{'executor':<11} {'wall s':>8} {'experiments/min':>16} {'tasks/min':>10} {'rows/min':>9} "
          f"{'speed-up':>9}")
    base = min(next(iter(times.values())))
    for name, runs in times.items():
        seconds = min(runs)
        print(f"{name:<11} {seconds:>8.1f} {n_experiments / seconds * 60:>16.1f} "
              f"{n_tasks / seconds * 60:>10.1f} {n_rows / seconds * 60:>9.0f} {base / seconds:>8.2f}x")
    for what, seconds in startups.items():
        print(f"({what} start-up, not included above: {seconds:.1f} s)")
    print(f"1-min load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on "
          f"{os.cpu_count()} cores (other processes share them: compare rows of one invocation only)")
    print("same scores from every executor:", "yes" if len(checksums) == 1 else f"NO {checksums}")
    return 0 if len(checksums) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
