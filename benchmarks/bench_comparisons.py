"""Timing and cross-checks of the comparison statistics on the published results.

Prints, on the published LogReg / no tuning / AUC combination (50 datasets, 32 encoders) unless
said otherwise (median of ``--repeats`` runs):

- the Bayesian signed-rank test (50,000 draws) for 50 datasets and for synthetic 500 and 2,400
  paired differences (the size of a pooled view), beside baycomp 1.0.3's ``SignedRankTest`` on
  the same inputs (if installed) and the largest gap between their posterior means and
  probabilities;
- Elo with B = 200 and B = 1,000 bootstrap resamples; the Elo strategy over all 48 combinations
  in one ``consensus_table`` call;
- the comparison with a control (OH) and the effect sizes of ``wilcoxon_pairs`` for 31 pairs.

Usage: ``.venv/bin/python benchmarks/bench_comparisons.py [--repeats 3]``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from encbench.stats import (bayesian_signed_rank, consensus_table, control_test, elo,
                            signed_rank_posterior, wilcoxon_pairs)
from encbench.stats.bayesian import outcome_probabilities
from encbench.store.published import load_published_results


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _baycomp_gap(diff_x: np.ndarray, diff_y: np.ndarray, rope: float, repeats: int) -> str:
    try:
        from baycomp import SignedRankTest
    except ImportError:
        return "baycomp not installed"
    mine = signed_rank_posterior(diff_x - diff_y, rope, n_samples=50_000, seed=1)
    spent = _median(lambda: SignedRankTest.sample(diff_x, diff_y, rope, nsamples=50_000, random_state=2), repeats)
    theirs = SignedRankTest.sample(diff_x, diff_y, rope, nsamples=50_000, random_state=2)
    mean_gap = np.abs(mine.mean(axis=0) - theirs.mean(axis=0)).max()
    winners = np.bincount(np.argmax(theirs, axis=1), minlength=3) / len(theirs)
    prob_gap = np.abs(np.array(outcome_probabilities(mine)) - winners).max()
    return (f"baycomp {spent:.3f} s; max |mean theta gap| {mean_gap:.4f}, max |P gap| {prob_gap:.4f} "
            f"(P mine {np.round(outcome_probabilities(mine), 4).tolist()}, baycomp {np.round(winners, 4).tolist()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    scores = load_published_results()
    combo = scores[(scores["model"] == "LogReg") & (scores["tuning"] == "no") & (scores["scoring"] == "AUC")]
    combo = combo[["scoring", "dataset", "encoder", "cv_score"]]
    print(f"LogReg/no/AUC: {combo['dataset'].nunique()} datasets, {combo['encoder'].nunique()} encoders")

    wide = combo.pivot(index="dataset", columns="encoder", values="cv_score").dropna(subset=["MT", "OH"])
    t = _median(lambda: bayesian_signed_rank(combo, "MT", "OH", rope=0.01), args.repeats)
    result = bayesian_signed_rank(combo, "MT", "OH", rope=0.01)
    print(f"Bayesian MT vs OH, ROPE 0.01, n = {result.n_datasets}: {t:.3f} s; P = "
          f"{result.p_a_better:.4f} / {result.p_equivalent:.4f} / {result.p_b_better:.4f}; "
          + _baycomp_gap(wide["MT"].to_numpy(), wide["OH"].to_numpy(), 0.01, args.repeats))
    rng = np.random.default_rng(0)
    for n in (500, 2400):
        x = rng.uniform(0.7, 0.9, n)
        y = x - 0.004 + rng.normal(0, 0.01, n)
        t = _median(lambda x=x, y=y: signed_rank_posterior(x - y, 0.005, n_samples=50_000), args.repeats)
        print(f"Bayesian posterior, n = {n}: {t:.3f} s; "
              + (_baycomp_gap(x, y, 0.005, 1) if n <= 500 else "baycomp not timed (O(n^2) per draw)"))

    for B in (200, 1000):
        t = _median(lambda B=B: elo(combo, reference="OH", B=B), args.repeats)
        print(f"Elo, 32 encoders, B = {B}: {t:.3f} s")
    print("Elo top 5:", elo(combo, reference="OH", B=200).table.head(5)[["encoder", "elo", "low", "high",
                                                                             "win_rate"]].round(3).to_dict("records"))
    t = _median(lambda: consensus_table(scores, ["Elo"]), args.repeats)
    print(f"Elo strategy, consensus_table over 48 combinations: {t:.3f} s")
    t = _median(lambda: control_test(combo, "OH"), args.repeats)
    control = control_test(combo, "OH")
    print(f"Control test against OH: {t:.4f} s; CD = {control.critical_difference:.3f}; Holm finds "
          f"{len(control.differing('holm'))}, Bonferroni-Dunn {len(control.differing('bonferroni-dunn'))}")
    others = [e for e in sorted(combo["encoder"].unique()) if e != "OH"]
    t = _median(lambda: wilcoxon_pairs(combo, pairs=[("OH", e) for e in others]), args.repeats)
    print(f"wilcoxon_pairs with effect sizes, 31 pairs, 1,000 bootstrap resamples each: {t:.3f} s")


if __name__ == "__main__":
    main()
