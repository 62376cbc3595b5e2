"""Timing of the consensus library on the published results (61,812 rows, 48 combinations).

Prints medians of 5 runs of:
- ``consensus_table`` for the nine heuristic strategies over all 48 (model, tuning, scoring)
  combinations (target <= 0.5 s);
- the naive baseline: a Python loop over the combinations calling ``consensus`` per strategy;
- exact Kemeny over all 48 combinations, total and worst single combination (target <= 5 s total),
  checking every solve is optimal.

Usage: ``.venv/bin/python benchmarks/bench_stats.py [--repeats 5]``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from encbench.stats import HEURISTIC_STRATEGIES, consensus, consensus_table, kemeny
from encbench.store.published import load_published_results

FACTORS = ["model", "tuning", "scoring"]


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def naive_table(scores):
    """The baseline: one consensus() call per (combination, strategy)."""
    out = {}
    for key, combo in scores.groupby(FACTORS):
        for strategy in HEURISTIC_STRATEGIES:
            out[key + (strategy,)] = consensus(combo, strategy)
    return out


def kemeny_all(scores) -> tuple[float, float]:
    """Total and worst solve time over all combinations; asserts optimality."""
    times = []
    for key, combo in scores.groupby(FACTORS):
        result = kemeny(combo)
        if not result.optimal:
            raise RuntimeError(f"Kemeny not optimal for {key!r}")
        times.append(result.solve_time)
    return sum(times), max(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    scores = load_published_results()
    n_combos = scores.groupby(FACTORS).ngroups
    print(f"published results: {len(scores):,} rows, {n_combos} combinations, "
          f"{scores.encoder.nunique()} encoders; medians of {args.repeats} runs")

    # Warm-up (imports, scipy's studentized range quantile cache, HiGHS load).
    consensus_table(scores)
    kemeny(scores[(scores.model == "DT") & (scores.tuning == "no") & (scores.scoring == "Acc")])

    table = [_time(lambda: consensus_table(scores, HEURISTIC_STRATEGIES)) for _ in range(args.repeats)]
    naive = [_time(lambda: naive_table(scores)) for _ in range(args.repeats)]
    kem = [kemeny_all(scores) for _ in range(args.repeats)]

    t_table, t_naive = statistics.median(table), statistics.median(naive)
    k_total = statistics.median(k[0] for k in kem)
    k_worst = statistics.median(k[1] for k in kem)
    print(f"consensus_table, 9 heuristics x {n_combos} combinations: {t_table * 1e3:8.1f} ms  (target <= 500 ms)")
    print(f"naive loop calling consensus() ({9 * n_combos} calls):     {t_naive * 1e3:8.1f} ms")
    print(f"speed-up of consensus_table over the naive loop:      {t_naive / t_table:8.1f} x")
    print(f"Kemeny, exact, all {n_combos} combinations: total      {k_total * 1e3:8.1f} ms  (target <= 5000 ms)")
    print(f"Kemeny, worst single combination:                     {k_worst * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
