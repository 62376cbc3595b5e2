"""Timing of the encoder zoo.

1. ``fit_transform`` + ``transform`` of every registry encoder on adult (48,842 rows, the 8
   categorical columns), median over ``--repeats`` runs;
2. our GLMM against category_encoders' ``GLMMEncoder`` (defaults) side by side on kr-vs-kp and
   adult, with the ratio;
3. if ``Rscript`` with lme4 is installed (optional, e.g. Debian ``r-cran-lme4``), lme4's
   ``lmer`` on the same columns (time of the fits inside R, excluding start-up and reading).

Run: ``.venv/bin/python benchmarks/bench_encoders.py [--repeats 3] [--ce-repeats 3]``.
"""
from __future__ import annotations

import argparse
import gzip
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from encbench.data import BUNDLED_DIR as DATASETS  # noqa: E402 - the repo's OpenML copies
from encbench.encoders import REGISTRY, GLMMEncoder, make_encoder  # noqa: E402

FILES = {
    "adult": ("1590_adult.arff.gz", "class", ">50K"),
    "kr-vs-kp": ("3_kr-vs-kp.arff", "class", "nowin"),
}


def load(name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The nominal columns and the 0/1 target of a shared ARFF dataset (liac-arff)."""
    import arff

    file, target, positive = FILES[name]
    path = DATASETS / file
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        data = arff.load(handle)
    frame = pd.DataFrame(data["data"], columns=[n for n, _ in data["attributes"]])
    nominal = [n for n, kind in data["attributes"] if isinstance(kind, list) and n != target]
    X = frame[nominal].astype("category")
    return X, (frame[target] == positive).astype(int).to_numpy()


def median_time(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_registry(X, y, repeats: int) -> pd.DataFrame:
    rows = []
    for name, spec in REGISTRY.items():
        fit_times, transform_times = [], []
        for _ in range(repeats):
            encoder = make_encoder(name, random_state=0)
            start = time.perf_counter()
            encoded = encoder.fit_transform(X, y)
            fit_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            encoder.transform(X)
            transform_times.append(time.perf_counter() - start)
        rows.append(
            {
                "encoder": name,
                "family": spec.family,
                "columns out": encoded.shape[1],
                "fit_transform s": statistics.median(fit_times),
                "transform s": statistics.median(transform_times),
            }
        )
    return pd.DataFrame(rows)


def category_encoders_glmm(X, y):
    import category_encoders as ce

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pandas4Warning, statsmodels convergence notes
        return ce.GLMMEncoder().fit_transform(X, y)


LME4_SCRIPT = r"""
suppressMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], colClasses = "character")
y <- as.numeric(d$y__)
cols <- setdiff(names(d), "y__")
repeats <- as.integer(args[2])
times <- numeric(repeats)
for (r in seq_len(repeats)) {
  start <- proc.time()[["elapsed"]]
  for (col in cols) {
    frame <- data.frame(x = factor(d[[col]]), y = y)
    if (nlevels(frame$x) < 2) next
    fit <- lmer(y ~ 1 + (1 | x), data = frame,
                control = lmerControl(check.conv.singular = .makeCC(action = "ignore", tol = 1e-4)))
    enc <- coef(fit)$x
  }
  times[r] <- proc.time()[["elapsed"]] - start
}
cat(median(times), "\n")
"""


def lme4_time(X, y, repeats: int) -> float | None:
    """Median seconds of lmer over all columns, or None without Rscript + lme4."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return None
    probe = subprocess.run([rscript, "-e", "library(lme4)"], capture_output=True)
    if probe.returncode != 0:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        data = X.astype(object).where(X.notna(), "NA_level").assign(y__=y)
        data.to_csv(Path(tmp) / "data.csv", index=False)
        (Path(tmp) / "bench.R").write_text(LME4_SCRIPT)
        result = subprocess.run(
            [rscript, str(Path(tmp) / "bench.R"), str(Path(tmp) / "data.csv"), str(repeats)],
            capture_output=True, text=True, check=True,
        )
    return float(result.stdout.split()[-1])


def bench_glmm(repeats: int, ce_repeats: int) -> pd.DataFrame:
    rows = []
    for name in ("kr-vs-kp", "adult"):
        X, y = load(name)
        # timed now, but bound as defaults so no lambda can see a later iteration's data
        ours = median_time(lambda X=X, y=y: GLMMEncoder().fit_transform(X, y), repeats)
        theirs = median_time(lambda X=X, y=y: category_encoders_glmm(X, y), ce_repeats)
        lme4 = lme4_time(X, y, max(1, ce_repeats))
        rows.append(
            {
                "dataset": name,
                "rows": len(X),
                "columns": X.shape[1],
                "ours s": ours,
                "category_encoders s": theirs,
                "ratio ce/ours": theirs / ours,
                "lme4 s": lme4,
                "ratio lme4/ours": None if lme4 is None else lme4 / ours,
            }
        )
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per encoder (median)")
    parser.add_argument("--ce-repeats", type=int, default=3,
                        help="runs of category_encoders' GLMMEncoder and lme4 (median)")
    parser.add_argument("--skip-registry", action="store_true")
    args = parser.parse_args(argv)

    if not (DATASETS / FILES["adult"][0]).exists():
        print(f"bundled datasets not found in {DATASETS}")
        return 1
    pd.set_option("display.width", 160)
    if not args.skip_registry:
        X, y = load("adult")
        print(f"## Registry on adult: {len(X)} rows, {X.shape[1]} categorical columns, "
              f"median of {args.repeats} runs\n")
        table = bench_registry(X, y, args.repeats)
        print(table.to_markdown(index=False, floatfmt=".3f") if _has_tabulate()
              else table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print(f"\ntotal fit_transform {table['fit_transform s'].sum():.2f} s, "
              f"transform {table['transform s'].sum():.2f} s\n")
    print(f"## GLMM: ours (median of {args.repeats}) vs category_encoders GLMMEncoder defaults "
          f"and lme4 (median of {args.ce_repeats})\n")
    glmm = bench_glmm(args.repeats, args.ce_repeats)
    print(glmm.to_markdown(index=False, floatfmt=".4g") if _has_tabulate()
          else glmm.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if glmm["lme4 s"].isna().all():
        print("\nlme4: Rscript with lme4 not installed (optional; Debian r-cran-lme4)")
    return 0


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
