"""Leave-one-dataset-out validation of the encoder advisor (:mod:`encbench.recommend`).

For every published setting (model x metric, per tuning): each published dataset with complete
meta-features is held out in turn; the advisor, seeing only the other datasets, picks ``k`` by
an inner leave-one-out on them and recommends one encoder; its regret (the held-out dataset's
best score minus the recommended encoder's) is compared with always picking the global R-M
winner (of the other published datasets), OH, and a random encoder. Prints the figures, writes
the summary shipped with the package (``db/seed/advisor_validation.csv``, read by the Run page
and ``encbench recommend``) and the per-dataset rows (``benchmarks/out/advisor_validation_rows.csv``),
and the Markdown table of README's section "Which encoder for my data?".

    .venv/bin/python benchmarks/bench_recommend.py                 # every tuning
    .venv/bin/python benchmarks/bench_recommend.py --tunings no    # the no-tuning slice only
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from encbench import vocab  # noqa: E402
from encbench.metafeatures import published_metafeatures  # noqa: E402
from encbench.recommend import ALPHA, K_GRID, VALIDATION_FILE, choose_policy, validate_advisor  # noqa: E402
from encbench.resources import resource_dir  # noqa: E402
from encbench.store.published import load_published_results  # noqa: E402

OUT = resource_dir("seed") / VALIDATION_FILE
ROWS = ROOT / "benchmarks" / "out" / "advisor_validation_rows.csv"
REGRETS = ("regret_advisor", "regret_global", "regret_OH", "regret_random")


def _policy_text(row: dict) -> str:
    """What the advisor recommends for a setting (:func:`encbench.recommend.choose_policy`)."""
    return {"neighbours": "**advisor**", "global": "global winner", "OH": "OH"}[choose_policy(row)]


def markdown(summary: pd.DataFrame) -> str:
    """README's table: one row per setting, then the mean over settings."""
    lines = ["| tuning | model | metric | datasets | k | advisor | global winner | OH | random | "
             "advisor vs global (W/T/L) | Wilcoxon p | recommends |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for r in summary.itertuples(index=False):
        lines.append(f"| {r.tuning} | {r.model} | {r.scoring} | {r.n_datasets} | {r.k} | "
                     f"{r.regret_advisor:.4f} | {r.regret_global:.4f} | {r.regret_OH:.4f} | "
                     f"{r.regret_random:.4f} | {r.wins}/{r.ties}/{r.losses} | "
                     f"{'-' if pd.isna(r.p_value) else f'{r.p_value:.2g}'} | "
                     f"{_policy_text(r._asdict())} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tunings", default=",".join(vocab.TUNINGS), help="comma-separated tunings")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the summary")
    parser.add_argument("--rows", type=Path, default=ROWS, help="where to write the per-dataset rows")
    args = parser.parse_args(argv)
    tunings = [t.strip() for t in args.tunings.split(",") if t.strip()]
    scores = load_published_results()
    scores = scores[scores["tuning"].isin(tunings)]
    reference = published_metafeatures(complete=True)
    started = time.perf_counter()
    result = validate_advisor(scores, reference,
                              progress=lambda done, total: print(f"\r{done}/{total} settings", end="",
                                                                 file=sys.stderr))
    elapsed = time.perf_counter() - started
    print(file=sys.stderr)
    summary = result.summary
    args.out.parent.mkdir(parents=True, exist_ok=True)
    summary.to_csv(args.out, index=False, float_format="%.6g")
    args.rows.parent.mkdir(parents=True, exist_ok=True)
    result.per_dataset.to_csv(args.rows, index=False, float_format="%.6g")

    print(f"{len(summary)} settings, {len(result.per_dataset)} held-out cases, {len(reference)} datasets "
          f"with meta-features, k grid {K_GRID} (None: all), {elapsed:.1f} s\n")
    print(markdown(summary))
    print("\nmean regret per tuning (mean over settings of the mean over held-out datasets):")
    per_tuning = summary.groupby("tuning", sort=False)[list(REGRETS)].mean()
    by_tuning = summary.groupby("tuning", sort=False)
    per_tuning["advisor lower"] = by_tuning["advisor_beats_global"].sum().astype(int)
    per_tuning[f"advisor used (p < {ALPHA:g})"] = by_tuning["advisor_used"].sum().astype(int)
    per_tuning["settings"] = by_tuning.size()
    with pd.option_context("display.width", 200, "display.float_format", "{:.4f}".format):
        print(per_tuning.to_string())
        pooled = result.per_dataset
        wins = (pooled["regret_advisor"] < pooled["regret_global"] - 1e-12).sum()
        losses = (pooled["regret_advisor"] > pooled["regret_global"] + 1e-12).sum()
        print(f"\nall held-out cases: advisor below the global winner's regret in {wins}, above in {losses}, "
              f"equal in {len(pooled) - wins - losses}")
        print(f"chosen k (outer folds): {pooled['k'].value_counts().sort_index().to_dict()}")
    print(f"\nwrote {args.out} and {args.rows}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
