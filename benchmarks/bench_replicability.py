"""Replicability with R-Kem on the published results: the Replicability page's default figure.

LogReg / no tuning / AUC, sample sizes 5, 10, ..., 25, 100 pairs per size (1,000 exact Kemeny
problems). Prints, in one process, the wall time of

- before: one process (``n_jobs=1``), as the page computed it;
- after: the samples solved on ``--jobs`` processes; and, with ``--near -0.5``, the solver
  variant that adds the rows the LP relaxation nearly meets before branch and bound
  (``kemeny._NEAR_SLACK``), on one process (CPU time: comparable on a loaded machine);

the medians, their ratio, and whether the two give the same figure (rho and J per pair).

Usage: ``.venv/bin/python benchmarks/bench_replicability.py [--repeats 3] [--before-repeats 1]``
"""
from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from encbench.stats import replicability  # noqa: E402
from encbench.store.published import load_published_results  # noqa: E402

kemeny = importlib.import_module("encbench.stats.kemeny")  # the module, not the function


def run(scores, sizes, n_pairs, n_jobs, near):
    """Wall seconds, CPU seconds of this process (meaningful for n_jobs=1) and the result."""
    kemeny._NEAR_SLACK = near
    start, cpu = time.perf_counter(), time.process_time()
    result = replicability(scores, sizes, n_pairs=n_pairs, seed=0, strategy="R-Kem", n_jobs=n_jobs)
    return time.perf_counter() - start, time.process_time() - cpu, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before-repeats", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--near", type=float, default=None,
                        help="slack threshold of the near-rows variant (default: the solver's own)")
    args = parser.parse_args(argv)
    published = load_published_results()
    scores = published[(published.model == "LogReg") & (published.tuning == "no") & (published.scoring == "AUC")]
    sizes = [5, 10, 15, 20, 25]
    near = kemeny._NEAR_SLACK if args.near is None else args.near
    default = kemeny._NEAR_SLACK
    print(f"R-Kem replicability, LogReg/no/AUC, sizes {sizes}, {args.pairs} pairs per size "
          f"({2 * args.pairs * len(sizes):,} exact problems)")
    load = os.getloadavg()[0]
    after = [run(scores, sizes, args.pairs, args.jobs, near) for _ in range(args.repeats)]
    serial = run(scores, sizes, args.pairs, 1, near)
    before = [run(scores, sizes, args.pairs, 1, default) for _ in range(args.before_repeats)]
    t_before = statistics.median(t for t, _, _ in before)
    t_after = statistics.median(t for t, _, _ in after)
    old, new = before[0][2].pairs, after[0][2].pairs
    same = np.allclose(old[["rho", "J"]], new[["rho", "J"]], equal_nan=True)
    print(f"load average at start: {load:.1f}, at end: {os.getloadavg()[0]:.1f} (2 cores)")
    print(f"before, 1 process (near rows {default}):  {t_before:8.1f} s wall, {before[0][1]:7.1f} s CPU  (median of {len(before)})")
    print(f"after, 1 process (near rows {near}):      {serial[0]:8.1f} s wall, {serial[1]:7.1f} s CPU")
    print(f"after, {args.jobs} processes (near rows {near}):     {t_after:8.1f} s wall  (median of {len(after)}; target < 20 s)")
    print(f"speed-up: {t_before / t_after:.1f} x wall; solver CPU {before[0][1] / serial[1]:.1f} x less; "
          f"same rho and J for every pair: {same}")
    if not same:
        diff = (old[["rho", "J"]] - new[["rho", "J"]]).abs().max()
        n_diff = int(((old[["rho", "J"]] - new[["rho", "J"]]).abs() > 1e-12).any(axis=1).sum())
        print(f"{n_diff} pair(s) differ, by at most {diff.to_dict()}: another optimum of the same "
              f"objective (ties among optimal weak orders are broken by the solver's path)")
    print(before[0][2].summary.round(4).to_string(index=False))
    print(after[0][2].summary.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
