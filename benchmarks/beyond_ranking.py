"""Where do today's encoders rank? The pooled R-M ranking of the 32 and the encoders beyond the study.

Reads encbench's own results (``db/seed/encbench_beyond_results.parquet``, written by
``benchmarks/run_beyond.py``) and the published results of the same datasets, no tuning, the
study's five models and four metrics. Every (dataset, model, metric) is one voter: the 32 with
their published scores, the encoders beyond the study with encbench's. Prints the R-M ranking
as a Markdown table (with bootstrap rank intervals over voters), the controls' agreement with
the published cells, and writes the critical-difference diagram (Friedman + Nemenyi, alpha
0.05) to ``docs/beyond_cd.svg``.

Usage: ``.venv/bin/python benchmarks/beyond_ranking.py [--svg docs/beyond_cd.svg]``
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from encbench import vocab  # noqa: E402
from encbench.reproduction import compare_to_published  # noqa: E402
from encbench.stats import consensus, nemenyi, rank_intervals  # noqa: E402
from encbench.store.importer import ENCBENCH_RESULTS_FILE  # noqa: E402
from encbench.store.published import load_published_results  # noqa: E402


def pooled_scores() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(voters' scores of the 32 and the encoders beyond, encbench's control rows, published rows)."""
    ours = pd.read_parquet(ENCBENCH_RESULTS_FILE)
    ours = ours[ours["status"] == "ok"]
    ours = (ours.groupby(["dataset", "encoder", "model", "tuning", "scoring"], as_index=False)["cv_score"]
            .mean().assign(split="cv"))
    published = load_published_results()
    published = published[(published["tuning"] == "no") & published["dataset"].isin(set(ours["dataset"]))
                          & published["model"].isin(vocab.STUDY_MODELS)].assign(split="cv")
    beyond = ours[ours["encoder"].isin(vocab.BEYOND_ENCODERS)]
    rows = pd.concat([published[["dataset", "encoder", "model", "tuning", "scoring", "cv_score"]],
                      beyond[["dataset", "encoder", "model", "tuning", "scoring", "cv_score"]]])
    rows = rows.assign(dataset=rows["dataset"] + "/" + rows["model"] + "/" + rows["scoring"])
    return rows, ours[ours["encoder"].isin(vocab.ENCODERS)], published


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", type=Path, default=REPO / "docs" / "beyond_cd.svg")
    args = parser.parse_args(argv)
    voters, controls, published = pooled_scores()
    n_datasets = len({v.split("/")[0] for v in voters["dataset"]})
    print(f"{n_datasets} datasets, {voters['dataset'].nunique()} voters (dataset x model x metric), "
          f"{voters['encoder'].nunique()} encoders")
    pairs = compare_to_published(controls, published)
    print(f"controls (OH, MT): {pairs.n_within} of {pairs.n_cells} cells within {pairs.tolerance:g} "
          f"of the published ones")
    ranking = consensus(voters, "R-M")
    intervals = rank_intervals(voters, "R-M", B=1000, seed=0).set_index("encoder")
    mean_rank = voters.assign(rank=voters.groupby("dataset")["cv_score"].rank(method="dense", ascending=False)
                              ).groupby("encoder")["rank"].mean()
    print("\n| rank | encoder | mean rank | 95 % interval | beyond the study |\n|---:|---|---:|---|:---:|")
    for encoder, rank in ranking.items():
        low, high = intervals.loc[encoder, "low"], intervals.loc[encoder, "high"]
        mark = "yes" if encoder in vocab.BEYOND_ENCODERS else ""
        print(f"| {rank} | {encoder} | {mean_rank[encoder]:.2f} | {int(low)}-{int(high)} | {mark} |")
    result = nemenyi(voters, alpha=0.05)
    from encbench.export import Provenance, chart_bytes
    from encbench.plots import cd_diagram

    significant = {frozenset((row.better, row.worse)) for row in result.significant_pairs.itertuples()}
    chart = cd_diagram(result.mean_ranks, result.critical_difference, significant,
                       title="The 32 and the encoders beyond the study (no tuning, pooled)",
                       subtitle=[f"Friedman + Nemenyi, alpha 0.05, {result.n_datasets} voters "
                                 f"({n_datasets} datasets x 5 models x 4 metrics)"],
                       highlight=[e for e in vocab.BEYOND_ENCODERS if e in result.mean_ranks.index])
    args.svg.parent.mkdir(parents=True, exist_ok=True)
    provenance = Provenance(view="beyond ranking", filters={"tuning": "no", "strategy": "R-Nem"},
                            origins=("published", "encbench"))
    args.svg.write_bytes(chart_bytes(chart, "svg", provenance))
    print(f"\nCD = {result.critical_difference:.2f}; diagram -> {args.svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
