"""The findings of encbench's own benchmark on the R suites, per task, as one dated Markdown document.

Reads the shipped results (``db/seed/encbench_suites_results.parquet``, written by
``benchmarks/run_suites.py``) and the manifest, and writes ``docs/findings/<date>-encbench-suites.md``
with a critical-difference diagram per task beside it. Per task:

- coverage: datasets, voters (dataset x model x metric), failed and timed-out cells listed;
- the R-M ranking of every encoder with a 95 % bootstrap interval of its rank (the datasets
  resampled with their voters, 1,000 draws, seed 0);
- the CD diagram (Friedman + Nemenyi, alpha 0.05, over the voters);
- the best encoder per model (Native, which needs a model that takes categories, is ranked
  among the others within LightGBM and HGB only);
- agreement with the published binary ranking (Spearman's rho over the study's encoders);
- Pargent et al. (2022)'s finding that regularised target encoding wins, by the cardinality
  band of a dataset's widest feature;
- replicability: Spearman's rho between the R-M rankings of disjoint halves of the datasets
  against the number of datasets per half (the Replicability page's computation, each dataset
  scored by its encoders' mean rank over its voters), and how many datasets a stable ranking
  needs: measured, or projected by the Spearman-Brown formula where the measured curve allows,
  and how far each dataset's ranking is from the others' (the datasets least and most alike);
- CPU seconds per dataset and per encoder.

Usage: ``.venv/bin/python benchmarks/suites_findings.py [--out docs/findings] [--date 2026-12-06]``
"""
from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from encbench import vocab  # noqa: E402
from encbench.data.rdatasets_source import manifest  # noqa: E402
from encbench.metrics import METRIC_REGISTRY  # noqa: E402
from encbench.stats import nemenyi, replicability  # noqa: E402
from encbench.views.replicability import datasets_needed_text  # noqa: E402
from encbench.store.importer import SUITES_RESULTS_FILE  # noqa: E402
from encbench.store.published import load_published_results  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))
from run_suites import fit_seconds  # noqa: E402

#: regularised target encoders in Pargent et al.'s sense: cross-fitted, smoothed or shrunk by a
#: mixed model (plain MT is the unregularised one)
REGULARISED = ("GLMM", "CVGLMM_2", "CVGLMM_5", "CVGLMM_10", "BUGLMM_2", "BUGLMM_5", "BUGLMM_10",
               "CVMT_2", "CVMT_5", "CVMT_10", "BUMT_2", "BUMT_5", "BUMT_10", "ME_0.1", "ME_1", "ME_10",
               "SkTE", "JS", "LOO")
BANDS = ((0, 9, "fewer than 10 levels"), (10, 49, "10 to 49 levels"), (50, 10 ** 9, "50 levels or more"))
B = 1000


def load() -> pd.DataFrame:
    """One score per (dataset, encoder, model, metric), folds averaged, ok experiments only;
    the score oriented so that higher is better (errors negated)."""
    rows = pd.read_parquet(SUITES_RESULTS_FILE)
    ok = rows.groupby(["task", "dataset", "encoder", "model", "scoring"])["status"].transform(
        lambda s: (s == "ok").all())
    cells = (rows[ok].groupby(["task", "dataset", "encoder", "model", "scoring"], as_index=False)["cv_score"]
             .mean())
    sign = cells["scoring"].map(lambda m: 1.0 if METRIC_REGISTRY[m].greater_is_better else -1.0)
    cells["score"] = cells["cv_score"] * sign
    cells["voter"] = cells["dataset"] + "|" + cells["model"] + "|" + cells["scoring"]
    return cells


def voter_ranks(cells: pd.DataFrame, encoders) -> pd.DataFrame:
    """Voters x encoders dense ranks (1 = best) over the voters where every one of ``encoders``
    has a score."""
    wide = cells[cells["encoder"].isin(encoders)].pivot_table(index="voter", columns="encoder",
                                                                values="score", aggfunc="first")
    wide = wide[list(encoders)].dropna()
    return wide.rank(axis=1, method="dense", ascending=False)


def clustered_intervals(ranks: pd.DataFrame, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """R-M rank and its bootstrap interval, the datasets drawn with replacement with all their voters."""
    dataset = ranks.index.str.split("|").str[0]
    sums = ranks.groupby(dataset).sum()
    counts = ranks.groupby(dataset).size()
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(len(sums), np.full(len(sums), 1 / len(sums)), size=B)  # (B, datasets)
    means = (draws @ sums.to_numpy()) / (draws @ counts.to_numpy())[:, None]
    boot = pd.DataFrame(means, columns=ranks.columns).rank(axis=1, method="dense")
    mean = ranks.mean()
    tail = (1 - level) / 2
    return pd.DataFrame({"mean_rank": mean, "rank": mean.rank(method="dense").astype(int),
                         "low": boot.quantile(tail).round().astype(int),
                         "high": boot.quantile(1 - tail).round().astype(int)}).sort_values("mean_rank")


def published_ranking() -> pd.Series:
    """The study's R-M mean rank of its encoders: no tuning, its five models and four metrics."""
    published = load_published_results()
    published = published[(published["tuning"] == "no") & published["model"].isin(vocab.STUDY_MODELS)]
    voters = published.assign(voter=published["dataset"].astype(str) + "|" + published["model"] + "|"
                              + published["scoring"], score=published["cv_score"])
    return voter_ranks(voters, vocab.ENCODERS).mean()


def cd_svg(ranks: pd.DataFrame, task: str, out: Path, n_datasets: int) -> str:
    from encbench.export import Provenance, chart_bytes
    from encbench.plots import cd_diagram

    long = ranks.reset_index().melt(id_vars="voter", var_name="encoder", value_name="rank")
    long = long.assign(dataset=long["voter"], cv_score=-long["rank"])
    result = nemenyi(long[["dataset", "encoder", "cv_score"]], alpha=0.05)
    significant = {frozenset((r.better, r.worse)) for r in result.significant_pairs.itertuples()}
    chart = cd_diagram(result.mean_ranks, result.critical_difference, significant,
                       title=f"encbench's own benchmark, {task} (no tuning)",
                       subtitle=[f"Friedman + Nemenyi, alpha 0.05, {result.n_datasets} voters "
                                 f"({n_datasets} R datasets x models x metrics)"],
                       highlight=[e for e in vocab.BEYOND_ENCODERS if e in result.mean_ranks.index])
    path = out / f"encbench-suites-{task}-cd.svg"
    path.write_bytes(chart_bytes(chart, "svg", Provenance(view="encbench suites ranking",
                                                          filters={"tuning": "no", "task": task},
                                                          origins=("encbench",))))
    return f"CD = {result.critical_difference:.2f} over {result.n_datasets} voters; diagram: `{path.name}`"


def section(task: str, cells: pd.DataFrame, rows: pd.DataFrame, published: pd.Series, out: Path) -> list[str]:
    levels = {e.ref: e.max_levels for e in manifest()}
    names = {e.ref: e.name for e in manifest()}
    cells = cells[cells["task"] == task]
    lines = [f"## {task.capitalize()}", ""]
    if cells.empty:
        return lines + ["No finished dataset yet.", ""]
    encoders = [e for e in vocab.ALL_ENCODERS if e in set(cells["encoder"]) and e != "Native"]
    ranks = voter_ranks(cells, encoders)
    datasets = sorted(set(ranks.index.str.split("|").str[0]))
    all_voters = cells["voter"].nunique()
    in_suite = sum(1 for e in manifest() if e.task == task)
    lines += [f"{len(datasets)} of the suite's {in_suite} datasets finished"
              + ("" if len(datasets) == in_suite else " (the run resumes: `python benchmarks/run_suites.py`)")
              + f"; {len(ranks)} complete voters of {all_voters} "
              f"(a voter with a failed or timed-out encoder is left out), {len(encoders)} encoders "
              f"(Native is ranked within LightGBM and HGB below).", ""]
    bad = rows[(rows["task"] == task) & (rows["status"] != "ok")]
    if len(bad):
        lines += ["Cells not ok (dataset, encoder, model: status, folds):", ""]
        for (d, e, m, s), n in bad.groupby(["dataset", "encoder", "model", "status"]).size().items():
            folds = n // max(1, rows[(rows["dataset"] == d)]["scoring"].nunique())
            lines.append(f"- {names.get(d, d)}, {e}, {m}: {s}, {folds} fold(s)")
        lines.append("")
    table = clustered_intervals(ranks)
    lines += ["### R-M ranking with 95 % bootstrap intervals", "",
              "| rank | encoder | mean rank | 95 % interval | beyond the study |", "|---:|---|---:|---|:---:|"]
    for r in table.itertuples():
        lines.append(f"| {r.rank} | {r.Index} | {r.mean_rank:.2f} | {r.low}-{r.high} | "
                     f"{'yes' if r.Index in vocab.BEYOND_ENCODERS else ''} |")
    lines += ["", cd_svg(ranks, task, out, len(datasets)), ""]
    lines += ["### Best encoder per model", "", "| model | best (mean rank) | runner-up | OH | voters |",
              "|---|---|---|---|---:|"]
    for model in [m for m in vocab.ALL_MODELS if m in set(cells["model"])]:
        sub = cells[cells["model"] == model]
        pool = encoders + (["Native"] if "Native" in set(sub["encoder"]) else [])
        mr = voter_ranks(sub, pool)
        if mr.empty:
            continue
        mean = mr.mean().sort_values()
        lines.append(f"| {model} | {mean.index[0]} ({mean.iloc[0]:.2f}) | {mean.index[1]} ({mean.iloc[1]:.2f}) | "
                     f"{mean.get('OH', float('nan')):.2f} (rank {int(mean.rank(method='dense')['OH'])}) | {len(mr)} |")
    common = [e for e in vocab.ENCODERS if e in table.index and e in published.index]
    rho = table.loc[common, "mean_rank"].corr(published[common], method="spearman")
    lines += ["", "### Agreement with the published binary ranking", "",
              f"Spearman's rho between this ranking and the study's (R-M over its 50 binary datasets, "
              f"no tuning, five models, four metrics) over the {len(common)} study encoders: **{rho:.2f}**.", ""]
    lines += ["### Regularised target encoding by cardinality (Pargent et al. 2022)", "",
              "Regularised: " + ", ".join(e for e in REGULARISED if e in encoders) + ". Mean ranks over "
              "the voters of the datasets in each band (the band of a dataset's widest categorical feature).", "",
              "| widest feature | datasets | best encoder | best regularised TE | MT (plain) | OH | holds |",
              "|---|---:|---|---|---:|---:|:---:|"]
    for low, high, label in BANDS:
        in_band = [d for d in datasets if low <= levels.get(d, 0) <= high]
        if not in_band:
            lines.append(f"| {label} | 0 | | | | | |")
            continue
        mean = ranks[ranks.index.str.split("|").str[0].isin(in_band)].mean().sort_values()
        reg = mean[[e for e in REGULARISED if e in mean.index]].sort_values()
        holds = "yes" if reg.iloc[0] <= mean.iloc[0] + 1e-12 or reg.iloc[0] < min(mean["OH"], mean["MT"]) else "no"
        lines.append(f"| {label} | {len(in_band)} | {mean.index[0]} ({mean.iloc[0]:.2f}) | {reg.index[0]} "
                     f"({reg.iloc[0]:.2f}) | {mean['MT']:.2f} | {mean['OH']:.2f} | {holds} |")
    lines += ["", "'holds': a regularised target encoder ranks above both OH and plain MT in the band.", ""]
    per_dataset = ranks.groupby(ranks.index.str.split("|").str[0]).mean()
    scores = per_dataset.reset_index(names="dataset").melt(id_vars="dataset", var_name="encoder",
                                                          value_name="mean_rank")
    scores = scores.assign(cv_score=-scores["mean_rank"])[["dataset", "encoder", "cv_score"]]
    sizes = [s for s in (2, 4, 6, 8, 10, 12, 15, 20, 25, 30) if 2 * s <= len(datasets)]
    lines += ["### Replicability", ""]
    if sizes:
        result = replicability(scores, sizes, n_pairs=100, seed=0, strategy="R-M")
        lines += ["Spearman's rho between the R-M rankings of two disjoint samples of datasets (100 pairs "
                  "per size; 95 % interval of the mean):", "", "| datasets per sample | mean rho | 95 % interval |",
                  "|---:|---:|---|"]
        for r in result.summary.itertuples():
            lines.append(f"| {r.sample_size} | {r.rho_mean:.2f} | {r.rho_low:.2f} to {r.rho_high:.2f} |")
        lines += ["", datasets_needed_text(result.summary),
                  "", "Halves drawn without replacement from few datasets can agree less than chance (a "
                  "negative rho): each half holds what the other left out, so a split of datasets that "
                  "favour different encoders lands on opposite sides.", ""]
        # each dataset against the others: Spearman's rho of its mean ranks with their mean ranks
        alone = pd.Series({d: per_dataset.loc[d].corr(per_dataset.drop(index=d).mean(), method="spearman")
                           for d in per_dataset.index}).sort_values()
        low = ", ".join(f"{names.get(d, d)} ({v:.2f})" for d, v in alone.head(3).items())
        high = ", ".join(f"{names.get(d, d)} ({v:.2f})" for d, v in alone.tail(3)[::-1].items())
        lines += [f"One dataset's ranking against the R-M ranking of all the others (Spearman's rho): median "
                  f"{alone.median():.2f}, {int((alone < 0).sum())} of {len(alone)} below 0. Least alike: {low}; "
                  f"most alike: {high}."]
    else:
        lines.append("Too few datasets for two disjoint samples.")
    lines.append("")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "findings")
    parser.add_argument("--date", default=dt.date.today().isoformat())
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = pd.read_parquet(SUITES_RESULTS_FILE)
    cells = load()
    published = published_ranking()
    per_fit = fit_seconds(rows)
    names = {e.ref: e.name for e in manifest()}
    cpu = rows["cpu"].iloc[0] if "cpu" in rows.columns else "unknown"
    lines = [f"# encbench's own benchmark on R datasets ({args.date})", "",
             "Every encoder of the registry x every model x every metric of the task, no tuning, 5 outer "
             "folds (stratified for classification, shuffled for regression), on the R suites "
             "`suite:encbench-binary`, `suite:encbench-multiclass` and `suite:encbench-regression` "
             "(`db/seed/rdatasets_manifest.csv`). Regenerate with `python benchmarks/run_suites.py` (the "
             "results) and `python benchmarks/suites_findings.py` (this document). The columns each "
             "dataset leaves out, and why, are in the manifest's `drop_reason`; `db/seed/README.md` says "
             "which datasets to read with care (leaf_id_flavia's categorical columns describe the species, "
             "not the leaf).", "",
             f"Results: {rows['dataset'].nunique()} datasets, {len(rows):,} result rows "
             f"({rows['status'].value_counts().to_dict()}), {per_fit['time'].sum() / 3600:.1f} task-hours "
             f"on {cpu}.", ""]
    for task in ("binary", "multiclass", "regression"):
        lines += section(task, cells, rows, published, args.out)
    lines += ["## CPU time", "", "Task seconds (encoding once per fold and grid, plus each model's fit and "
              "predictions) per dataset. They are wall-clock seconds inside single-threaded task processes "
              "run at low priority (`nice`): where the machine did other work meanwhile, they overstate the "
              "CPU time.", "", "| task | dataset | rows | seconds |", "|---|---|---:|---:|"]
    rows_of = {e.ref: e.rows for e in manifest()}
    for (task, dataset), seconds in per_fit.groupby(["task", "dataset"])["time"].sum().sort_values().items():
        lines.append(f"| {task} | {names.get(dataset, dataset)} | {rows_of.get(dataset, '')} | {seconds:.0f} |")
    per_encoder = per_fit.groupby("encoder")["time"].sum().sort_values(ascending=False)
    per_model = per_fit.groupby("model")["time"].sum().sort_values(ascending=False)
    lines += ["", "Per encoder (all datasets): " + ", ".join(f"{e} {s:.0f} s" for e, s in per_encoder.items()),
              "", "Per model: " + ", ".join(f"{m} {s:.0f} s" for m, s in per_model.items()), ""]
    path = args.out / f"{args.date}-encbench-suites.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
