"""Replicability with R-Kem on the published results: the Replicability page's default figure.

LogReg / no tuning / AUC, sample sizes 5, 10, ..., 25, 100 pairs per size (1,000 exact Kemeny
problems). Prints, in one process, the wall time of

- before: one process, branch and bound started from the rows the LP relaxation violated
  (``kemeny._NEAR_SLACK = None``, the solver as it was);
- after: the rows the relaxation nearly meets added before branch and bound, and the samples
  solved on ``--jobs`` processes;

the medians, their ratio, and whether the two give the same figure (rho and J per pair).

Usage: ``.venv/bin/python benchmarks/bench_replicability.py [--repeats 3] [--before-repeats 1]``
"""
from __future__ import annotations

import argparse
import importlib
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
    kemeny._NEAR_SLACK = near
    start = time.perf_counter()
    result = replicability(scores, sizes, n_pairs=n_pairs, seed=0, strategy="R-Kem", n_jobs=n_jobs)
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before-repeats", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=100)
    args = parser.parse_args(argv)
    published = load_published_results()
    scores = published[(published.model == "LogReg") & (published.tuning == "no") & (published.scoring == "AUC")]
    sizes = [5, 10, 15, 20, 25]
    near = kemeny._NEAR_SLACK
    print(f"R-Kem replicability, LogReg/no/AUC, sizes {sizes}, {args.pairs} pairs per size "
          f"({2 * args.pairs * len(sizes):,} exact problems)")
    after = [run(scores, sizes, args.pairs, args.jobs, near) for _ in range(args.repeats)]
    before = [run(scores, sizes, args.pairs, 1, None) for _ in range(args.before_repeats)]
    t_before = statistics.median(t for t, _ in before)
    t_after = statistics.median(t for t, _ in after)
    old, new = before[0][1].pairs, after[0][1].pairs
    same = np.allclose(old[["rho", "J"]], new[["rho", "J"]], equal_nan=True)
    print(f"before (1 process, rows as violated):        {t_before:8.1f} s  (median of {len(before)})")
    print(f"after  ({args.jobs} processes, near rows first):       {t_after:8.1f} s  (median of {len(after)}; target < 20 s)")
    print(f"speed-up: {t_before / t_after:.1f} x; same rho and J for every pair: {same}")
    if not same:
        diff = (old[["rho", "J"]] - new[["rho", "J"]]).abs().max()
        print(f"largest difference per pair (another optimum of equal objective): {diff.to_dict()}")
    print(before[0][1].summary.round(4).to_string(index=False))
    print(after[0][1].summary.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
