"""Timing of the consensus library on the published results (61,812 rows, 48 combinations).

Prints medians of 5 runs of:
- ``consensus_table`` for the nine heuristic strategies over all 48 (model, tuning, scoring)
  combinations (target <= 0.5 s);
- the naive baseline: a Python loop over the combinations calling ``consensus`` per strategy;
- exact Kemeny over all 48 combinations, total and worst single combination (target <= 5 s total),
  checking every solve is optimal.

Growth (``--grow 1e6,7.7e6``): the published table replicated to that many rows with new dataset
ids and perturbed scores (``benchmarks/growth.py``), the nine heuristics over the 48 combinations
(target <= 0.5 s at 7.7M rows), with the key columns as text and as pandas categories (codes, as
a caller holding them passes them). ``--baseline REV`` times the ``encbench.stats`` of git
revision REV in the same process, alternating with the current one, and checks that both give
the same table. Wall and CPU seconds are printed with the load average: on a shared machine the
CPU time of this process is the steadier figure. Measured against the previous cube (load
10-17, 7.7M rows, 6,228 datasets, medians of 3, identical tables): text keys 5.64 -> 4.39 s wall,
4.59 -> 3.09 s CPU; category keys 4.61 -> 3.18 s wall, 4.17 -> 2.35 s CPU (1M rows: 0.41 ->
0.21 s CPU). What is left is the per-dataset ranking (an argsort per dataset row, about 0.7 s
CPU), hashing text keys (about 0.1 s per column) and the medians and quantiles (sorts).
Rankings from one sort of packed keys, rank counts by bincount and text runs factorized from
their first rows, against 6dcba93 (load 0.4-1.0, medians of 3, identical tables): 7.7M rows
text 2.25 -> 1.83 s CPU, codes 1.71 -> 1.31; 1M rows text 0.30 -> 0.21, codes 0.20 -> 0.14.
Alone in a process (cProfile script, load under 1) 7.7M text went 3.07 -> 1.57 s CPU.
Fewer passes and fewer fresh arrays of the cube's size (a fresh 76 MB array costs about as much
as a pass over it): average ranks summed from positions, Q-Md by partition, rank counts in
16-bit bins per combination, one NaN mask and one scratch array, codes sorted per row instead
of the cube. Against 7ff90c7 at 7.7M rows (medians of 3, identical tables; load 5-6 on 2 cores):
codes 2.14 -> 0.61 s wall, 1.33 -> 0.53 s CPU; text 2.14 -> 0.97 s wall, 1.97 -> 0.88 s CPU;
the published table 27 -> 25 ms. Left (codes, quiet machine): the cube about 0.13 s, the
per-dataset sort and its passes 0.15 s, Q-Md's partitions 0.1 s; text adds about 0.25 s of
comparing and hashing the key columns.
Two threads for a cube of 2M cells or more (half of the combinations each; the text key columns
coded in two threads), against a7a4a06 on another 2-core machine (load 1.4, medians of 5,
identical tables): 7.7M rows codes 0.65 -> 0.49 s wall (CPU 0.65 -> 0.71 s, the threads' sum),
text 1.04 -> 0.77 s wall; 1M rows (1.2M cells, one thread) 0.11 / 0.15 s as before. A glibc
malloc that keeps freed arrays for reuse (mmap threshold 1 GiB) saved up to 20% CPU more but no
steady wall time beside the threads, for 700 MB more peak memory: not used.

Usage: ``.venv/bin/python benchmarks/bench_stats.py [--repeats 5]`` and
``.venv/bin/python benchmarks/bench_stats.py --grow 1e6,7.7e6 --baseline HEAD~1 [--repeats 3]``
"""
from __future__ import annotations

import argparse
import os
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


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _clock(fn, *args):
    """(wall seconds, CPU seconds, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def growth(sizes: list[int], repeats: int, baseline: str | None) -> None:
    """The nine heuristics over every combination of the grown table, current vs baseline."""
    from growth import baseline_modules, grow

    versions = {"current": consensus_table}
    if baseline:
        versions = {f"baseline {baseline}": baseline_modules(baseline, ("encbench.stats",))[
            "encbench.stats"].consensus_table, **versions}
    published = load_published_results()
    print(f"growth: the published {len(published):,} rows replicated with new dataset ids and "
          f"perturbed scores; 9 heuristics over every combination; medians of {repeats}")
    print(f"{'rows':>10} {'datasets':>8} {'keys':<6} {'version':<18} {'wall s':>8} {'CPU s':>7}  load")
    for rows in sizes:
        for categorical in (False, True):
            frame = grow(published, rows, categorical=categorical)
            n_datasets = frame["dataset"].nunique()
            tables, times = {}, {name: [] for name in versions}
            for table in versions.values():  # warm-up
                table(frame.iloc[:50_000], HEURISTIC_STRATEGIES)
            for _ in range(repeats):
                for name, table in versions.items():
                    wall, cpu, tables[name] = _clock(table, frame, HEURISTIC_STRATEGIES)
                    times[name].append((wall, cpu))
            for name, pairs in times.items():
                wall = statistics.median(p[0] for p in pairs)
                cpu = statistics.median(p[1] for p in pairs)
                print(f"{rows:>10,} {n_datasets:>8,} {'codes' if categorical else 'text':<6} {name:<18} "
                      f"{wall:>8.2f} {cpu:>7.2f}  {_load()}", flush=True)
            if len(tables) > 1:
                first, *others = tables.values()
                same = all(first.equals(other) for other in others)
                print(f"{'':>10} tables identical across versions: {same}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--grow", default="", help="comma-separated row counts, e.g. 1e6,7.7e6")
    parser.add_argument("--baseline", default=None, help="a git revision to time beside the current code")
    args = parser.parse_args(argv)
    if args.grow:
        growth([int(float(x)) for x in args.grow.split(",")], args.repeats, args.baseline)
        return
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
