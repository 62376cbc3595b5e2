"""What HGB's grouping of wide category columns (``encbench/hgb.py``) costs beyond scikit-learn.

Times ``fit`` on 80 % of a seeded table plus ``predict`` on the rest, alternating encbench's
``HGBRegressor`` and scikit-learn's ``HistGradientBoostingRegressor``, and prints the medians
over ``--repeats`` runs and their ratio:

- narrow: a 40-level category column and a numeric one, which both models take (the grouping
  only checks the columns: the ratio should be 1);
- wide: a 400-level column, which scikit-learn refuses; it is timed against scikit-learn on the
  same column grouped beforehand, so the ratio is the grouping's own cost.

Usage: ``.venv/bin/python benchmarks/bench_hgb_wide.py [--repeats 7] [--rows 15000]``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402

from encbench.hgb import HGBRegressor  # noqa: E402


def table(levels: int, rows: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, levels, rows)
    X = pd.DataFrame({"c": pd.Categorical(codes.astype(float), categories=np.arange(levels, dtype=float)),
                      "x": rng.normal(size=rows)})
    return X, (codes % 7) + X["x"].to_numpy() + rng.normal(size=rows)


def seconds(model, X_train, y_train, X_test) -> float:
    start = time.perf_counter()
    model.fit(X_train, y_train).predict(X_test)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rows", type=int, default=15_000)
    args = parser.parse_args(argv)
    cut = int(0.8 * args.rows)
    for label, levels in (("narrow", 40), ("wide", 400)):
        X, y = table(levels, args.rows)
        ours = HGBRegressor(random_state=1)
        theirs_X = X
        if levels > ours.max_bins:  # scikit-learn on the column grouped as ours groups it
            theirs_X = ours.fit(X.iloc[:cut], y[:cut])._narrow(X)
        times = {"encbench": [], "scikit-learn": []}
        for _ in range(args.repeats):
            times["encbench"].append(seconds(HGBRegressor(random_state=1), X.iloc[:cut], y[:cut], X.iloc[cut:]))
            times["scikit-learn"].append(seconds(HistGradientBoostingRegressor(random_state=1), theirs_X.iloc[:cut],
                                                 y[:cut], theirs_X.iloc[cut:]))
        median = {k: statistics.median(v) for k, v in times.items()}
        print(f"{label} ({levels} levels, {args.rows:,} rows): encbench {median['encbench']:.3f} s, "
              f"scikit-learn {median['scikit-learn']:.3f} s, ratio {median['encbench'] / median['scikit-learn']:.3f} "
              f"(medians of {args.repeats})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
