"""Replicability with R-Kem on the published results: the Replicability page's default figure.

LogReg / no tuning / AUC, sample sizes 5, 10, ..., 25, 100 pairs per size (1,000 exact Kemeny
problems). In one process, one after the other (so the same machine load applies to all):

- before: the Kemeny solver as it was at ``--baseline-rev`` (HiGHS's MIP solver in a loop of
  lazy rows; read with ``git show``), one process, as the page computed it at first;
- after, 1 process: the current solver (branch and cut, encbench/stats/kemeny.py);
- after, ``--jobs`` processes: what the page runs (median of ``--repeats``);

then the ratio, and whether the two solvers reach the same optimal objective on every one of the
1,000 problems (they must: both are exact) and give the same rho and J for every pair (they may
not, where a problem has several optimal weak orders and the two pick different ones).

CPU seconds count this process and its worker processes (spawned: their start-up, imports
included); wall seconds on a shared 2-core machine also measure the other load, so the load
average is printed with them.

Usage: ``.venv/bin/python benchmarks/bench_replicability.py [--repeats 3] [--before-repeats 1]``
"""
from __future__ import annotations

import argparse
import importlib
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from encbench.stats import replicability  # noqa: E402
from encbench.store.published import load_published_results  # noqa: E402

consensus_module = importlib.import_module("encbench.stats.consensus")  # the module, not the function

#: the last revision with the previous solver (HiGHS MIP solves in a loop of lazy rows)
BASELINE_REV = "a39a816"


def baseline_solver(rev: str):
    """The ``kemeny_rank_vector`` of encbench/stats/kemeny.py at git revision ``rev``."""
    try:
        source = subprocess.run(["git", "show", f"{rev}:encbench/stats/kemeny.py"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise SystemExit(f"cannot read the baseline solver at {rev!r} (needs a git checkout): {error}") from None
    module = types.ModuleType("kemeny_baseline")
    sys.modules[module.__name__] = module  # dataclasses look the module up
    exec(compile(source, f"kemeny.py@{rev}", "exec"), module.__dict__)
    return module.kemeny_rank_vector


def children_cpu() -> float:
    """CPU seconds of this process's finished child processes (the pool's workers, once joined)."""
    deadline = time.perf_counter() + 30
    while multiprocessing.active_children() and time.perf_counter() < deadline:  # joins them
        time.sleep(0.05)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(scores, sizes, n_pairs, n_jobs, solver=None):
    """Wall seconds, CPU seconds (this process and its workers), the result and, in-process,
    each problem's objective."""
    original = consensus_module.kemeny_rank_vector
    objectives: dict[bytes, float] = {}
    if n_jobs == 1:
        inner = solver or original

        def recording(ranks, *, time_limit=None):
            consensus, info = inner(ranks, time_limit=time_limit)
            objectives[np.ascontiguousarray(ranks).tobytes() + bytes(str(ranks.shape), "ascii")] = info["objective"]
            return consensus, info

        consensus_module.kemeny_rank_vector = recording
    try:
        start, cpu, workers = time.perf_counter(), time.process_time(), children_cpu()
        result = replicability(scores, sizes, n_pairs=n_pairs, seed=0, strategy="R-Kem", n_jobs=n_jobs)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        return wall, cpu + children_cpu() - workers, result, objectives
    finally:
        consensus_module.kemeny_rank_vector = original


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs on --jobs processes (median)")
    parser.add_argument("--before-repeats", type=int, default=1, help="runs of the baseline (0: skip it)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    args = parser.parse_args(argv)
    published = load_published_results()
    scores = published[(published.model == "LogReg") & (published.tuning == "no") & (published.scoring == "AUC")]
    sizes = [5, 10, 15, 20, 25]
    print(f"R-Kem replicability, LogReg/no/AUC, sizes {sizes}, {args.pairs} pairs per size "
          f"({2 * args.pairs * len(sizes):,} exact problems)")
    load = os.getloadavg()[0]
    after = [run(scores, sizes, args.pairs, args.jobs) for _ in range(args.repeats)]
    serial = run(scores, sizes, args.pairs, 1)
    old_solver = baseline_solver(args.baseline_rev) if args.before_repeats > 0 else None
    before = [run(scores, sizes, args.pairs, 1, old_solver) for _ in range(args.before_repeats)]
    t_after = statistics.median(t for t, *_ in after)
    print(f"load average at start: {load:.1f}, at end: {os.getloadavg()[0]:.1f} (2 cores)")
    if before:
        t_before = statistics.median(t for t, *_ in before)
        cpu_before = statistics.median(c for _, c, *_ in before)
        print(f"before ({args.baseline_rev}), 1 process: {t_before:8.1f} s wall, {cpu_before:7.1f} s CPU  "
              f"(median of {len(before)})")
    print(f"after, 1 process:             {serial[0]:8.1f} s wall, {serial[1]:7.1f} s CPU")
    print(f"after, {args.jobs} processes:           {t_after:8.1f} s wall, "
          f"{statistics.median(c for _, c, *_ in after):7.1f} s CPU of all processes (median of "
          f"{len(after)}: {', '.join(f'{t:.1f}' for t, *_ in after)} s wall; target < 20 s)")
    new = after[0][2].pairs
    same_parallel = all(a[2].pairs[["rho", "J"]].equals(new[["rho", "J"]]) for a in after) \
        and serial[2].pairs[["rho", "J"]].equals(new[["rho", "J"]])
    print(f"the same figure on 1 and {args.jobs} processes, every repeat: {same_parallel}")
    if not before:
        print(after[0][2].summary.round(4).to_string(index=False))
        return
    old_obj, new_obj = before[0][3], serial[3]
    common = old_obj.keys() & new_obj.keys()
    relative = [abs(old_obj[k] - new_obj[k]) / max(1.0, abs(old_obj[k])) for k in common]
    print(f"speed-up: {t_before / t_after:.1f} x wall; CPU {cpu_before / serial[1]:.1f} x less on 1 process; "
          f"same optimal objective on {sum(r <= 1e-9 for r in relative)} of {len(common)} problems "
          f"(largest relative difference {max(relative):.1e})")
    old = before[0][2].pairs
    differ = ((old[["rho", "J"]] - new[["rho", "J"]]).abs() > 1e-12).any(axis=1)
    print(f"pairs with another rho or J: {int(differ.sum())} of {len(old)} (where a sample has several "
          f"optimal weak orders, the solvers may return different ones)")
    print("before:")
    print(before[0][2].summary.round(4).to_string(index=False))
    print("after:")
    print(after[0][2].summary.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
