"""The advisor on datasets it has never seen: the items reserved out of every suite.

``encbench.data.rdatasets_source.RESERVED`` keeps three R datasets out of every suite, so that what
the suites teach can be checked on data that shaped none of it. The leave-one-dataset-out
validation (``benchmarks/bench_recommend.py``) holds out suite datasets whose results also chose the
advisor's policies; this script is the check that owes nothing to them.

For each reserved item with a target here (:data:`TARGETS`), it runs the grid of encbench's own
benchmark (``benchmarks/run_suites.py``: every encoder x every model x every metric of the task, no
tuning, 5 folds, the same grids and per-task timeout) into a database of its own, then asks the
shipped advisor for every setting, as ``encbench recommend`` does (the shipped reference scores,
meta-features and validation), and measures on the reserved dataset the regret
(:func:`encbench.advisor.regrets_of`) of

- what is recommended (the setting's validated policy: the global winner, OH or the neighbours),
- the neighbours' consensus (the advisor's own ranking, followed or not),
- the global winner, always OH, and a random encoder.

``nycflights13::flights`` has no target here: it has no binary target of its own, and the binary
advisor is validated on 42 held-out datasets already; it stays reserved.

Results (with the provenance of ``run_suites.py``: versions, command, CPU kind) go to
``benchmarks/results/advisor_reserved.parquet``, which nothing in the app reads; the findings to
``docs/findings/<date>-advisor-reserved.md``. The run resumes: a dataset in the results file is not
run again, and a stopped one resumes from the tasks its database holds; ``--retry-failed``
computes again the encoder x model pairs with a failed or timed-out row (after a fix) and replaces
their rows. The findings list the rows that are still not ``ok``.

Usage::

    nohup nice -n 19 .venv/bin/python benchmarks/advisor_reserved.py >> /tmp/advisor_reserved.log 2>&1 &
    .venv/bin/python benchmarks/advisor_reserved.py --evaluate      # findings from the results file only
"""
from __future__ import annotations

import argparse
import datetime as dt
import logging
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import run_suites  # noqa: E402
from encbench import advisor, metafeatures, vocab  # noqa: E402
from encbench.data import load_dataset  # noqa: E402
from encbench.data.rdatasets_source import PREFIX, RESERVED  # noqa: E402
from encbench.engine import Grid, run_grid  # noqa: E402

#: reserved (package, item) -> the target evaluated on it
TARGETS = {("AER", "BankWages"): "job", ("modeldata", "hotel_rates"): "avg_price_per_room"}
RESULTS = ROOT / "benchmarks" / "results" / "advisor_reserved.parquet"
DEFAULT_DB = Path("/tmp/encbench_reserved.duckdb")
#: the orders whose regret is measured, in the findings' column order
POLICIES = ("recommended", "neighbours", "global", "OH")


def references() -> list[str]:
    unknown = sorted(set(TARGETS) - set(RESERVED))
    if unknown:
        raise ValueError(f"TARGETS names items that are not reserved: {unknown}")
    return [f"{PREFIX}{package}/{item}:{target}" for (package, item), target in sorted(TARGETS.items())]


def _write(rows: pd.DataFrame) -> None:
    """Replace the results file with ``rows`` (written beside it, then renamed into place)."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    tmp = RESULTS.with_suffix(".tmp")
    rows.sort_values(["dataset", "encoder", "model", "scoring", "fold"]).to_parquet(tmp, index=False)
    tmp.replace(RESULTS)


def run(args, command: str) -> None:
    """Run the grids of every reference not in the results file yet, and add its rows."""
    have = pd.read_parquet(RESULTS) if RESULTS.exists() else None
    done = set() if have is None else set(have["dataset"])
    meta = run_suites.provenance(command)
    for ref in references():
        if ref in done:
            logging.warning("%s: in %s already", ref, RESULTS.name)
            continue
        dataset = load_dataset(ref)
        start = time.perf_counter()
        rows, _ = run_suites.run_dataset(dataset.task, ref, dataset.n_rows, args)
        if rows is None:
            logging.warning("%s: unfinished; resumes on the next start", ref)
            continue
        for key, value in meta.items():
            rows[key] = value
        have = rows if have is None else pd.concat([have[have["dataset"] != ref], rows[have.columns]],
                                                   ignore_index=True)
        _write(have)
        logging.warning("%s (%s, %d rows): %.0f s wall, %.0f s in tasks; %s", ref, dataset.task, dataset.n_rows,
                        time.perf_counter() - start, run_suites.fit_seconds(rows)["time"].sum(),
                        rows["status"].value_counts().to_dict())


def retry_failed(args, command: str) -> None:
    """Compute again the (encoder, model) pairs of the results file with a row that is not ``ok``
    (a failure fixed since), and replace their rows."""
    if not RESULTS.exists():
        return
    have = pd.read_parquet(RESULTS)
    bad = have[have["status"] != "ok"]
    meta = run_suites.provenance(command)
    for ref, rows in bad.groupby("dataset"):
        task = rows["task"].iloc[0]
        pairs = set(zip(rows["encoder"], rows["model"]))
        grid = Grid(datasets=(ref,), encoders=tuple(sorted({e for e, _ in pairs})),
                    models=tuple(sorted({m for _, m in pairs})), scorings=run_suites.metrics_of(task), tuning="no",
                    n_folds=5, timeout=args.timeout, label=f"{run_suites.LABEL} ({task}, retried)")
        logging.warning("%s: computing again %s", ref, ", ".join(f"{e} x {m}" for e, m in sorted(pairs)))
        run_grid(grid, db_path=args.db, workers=args.workers)
        new, _ = run_suites.collect(args.db, [grid], task)
        if new is None:
            logging.warning("%s: the retry is unfinished; the old rows stay", ref)
            continue
        new = new[[(e, m) in pairs for e, m in zip(new["encoder"], new["model"])]]
        for key, value in meta.items():
            new[key] = value
        again = [(e, m) in pairs and d == ref for d, e, m in zip(have["dataset"], have["encoder"], have["model"])]
        have = pd.concat([have[~pd.Series(again, index=have.index)], new[have.columns]], ignore_index=True)
        _write(have)
        logging.warning("%s: %d rows computed again: %s", ref, len(new), new["status"].value_counts().to_dict())


def evaluate(results: Path) -> tuple[pd.DataFrame, list[dict]]:
    """One row per (reserved dataset, setting): the encoders each policy picks and their regrets."""
    rows, described = [], []
    have = set(pd.read_parquet(results, columns=["dataset"])["dataset"])
    for ref in references():
        if ref not in have:
            continue
        dataset = load_dataset(ref)
        task = dataset.task
        features = metafeatures.from_dataset(dataset)
        reference = advisor.reference_scores(task)
        reference = reference[reference["tuning"] == "no"]
        # the reserved results read as the suites' are (an experiment counts when all its folds are ok)
        scores = advisor.reference_scores(task, suites=results)
        scores = scores[(scores["dataset"] == ref) & (scores["tuning"] == "no")]
        described.append({"dataset": ref, "name": dataset.name, "task": task, "rows": dataset.n_rows,
                          "categorical": dataset.n_categorical, "max_cardinality": features.max_cardinality,
                          "outside": advisor.outside_reference(features,
                                                               metafeatures.reference_metafeatures(task))})
        settings = scores[["model", "scoring"]].drop_duplicates()
        for model, scoring in sorted(settings.itertuples(index=False, name=None),
                                     key=lambda s: (vocab.order_key("model", s[0]), vocab.order_key("scoring", s[1]))):
            if not ((reference["model"] == model) & (reference["scoring"] == scoring)).any():
                continue
            rec = advisor.recommend(features, reference, model=model, scoring=scoring)
            overall = list(rec.overall["encoder"])
            orders = {"recommended": list(rec.recommended), "neighbours": list(rec.local["encoder"]),
                      "global": overall, "OH": [advisor.BASELINE_ENCODER, *overall]}
            mine = scores[(scores["model"] == model) & (scores["scoring"] == scoring)]
            got = advisor.regrets_of(mine[["dataset", "encoder", "cv_score"]], scoring, orders).iloc[0].to_dict()
            ranked = _ranks(mine, scoring)
            rows.append({"task": task, "dataset": dataset.name, "model": model, "scoring": scoring, "use": rec.use,
                         "k": rec.k, **{p: got[p] for p in POLICIES},
                         **{f"regret_{p}": got[f"regret_{p}"] for p in (*POLICIES, "random")},
                         "rank_recommended": ranked[got["recommended"]], "encoders": len(ranked)})
    return pd.DataFrame(rows), described


def _ranks(scores: pd.DataFrame, scoring: str) -> dict[str, int]:
    """Each encoder's rank on the dataset: 1 + the encoders with a strictly better score."""
    from encbench.metrics import greater_is_better

    values = scores.set_index("encoder")["cv_score"]
    ranks = values.rank(method="min", ascending=not greater_is_better(scoring))
    return {e: int(r) for e, r in ranks.items()}


def _mean(frame: pd.DataFrame, column: str) -> str:
    return f"{frame[column].mean():.4f}"


def tables(evaluated: pd.DataFrame) -> tuple[str, str]:
    """The findings' tables: the mean per dataset, then every setting."""
    head = ["| dataset | task | settings | recommended | neighbours | global winner | OH | random | "
            "recommended at or below the global winner's regret | recommended first on the dataset |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (name, task), g in evaluated.groupby(["dataset", "task"], sort=False):
        level = int((g["regret_recommended"] <= g["regret_global"] + 1e-12).sum())
        head.append(f"| {name} | {task} | {len(g)} | "
                    + " | ".join(_mean(g, f"regret_{p}") for p in (*POLICIES, "random"))
                    + f" | {level} of {len(g)} | {int((g['rank_recommended'] == 1).sum())} of {len(g)} |")
    every = ["| dataset | model | metric | policy | k | recommended | its rank | neighbours' first | "
             "global winner | regret: recommended | neighbours | global | OH | random |",
             "|---|---|---|---|---:|---|---:|---|---|---:|---:|---:|---:|---:|"]
    for r in evaluated.to_dict("records"):
        every.append(f"| {r['dataset']} | {r['model']} | {r['scoring']} | {r['use']} | {r['k']} | "
                     f"{r['recommended']} | {r['rank_recommended']} of {r['encoders']} | {r['neighbours']} | "
                     f"{r['global']} | "
                     + " | ".join(f"{r[f'regret_{p}']:.4f}" for p in (*POLICIES, "random")) + " |")
    return "\n".join(head), "\n".join(every)


def sentences(evaluated: pd.DataFrame, described: list[dict]) -> list[str]:
    """What the evaluation says, per dataset, computed from its rows."""
    out = []
    about = {d["name"]: d for d in described}
    for name, g in evaluated.groupby("dataset", sort=False):
        d = about[name]
        means = {p: g[f"regret_{p}"].mean() for p in (*POLICIES, "random")}
        best = min(POLICIES, key=lambda p: (means[p], POLICIES.index(p)))
        names = {"recommended": "the recommendation", "neighbours": "the neighbours' consensus",
                 "global": "the global winner", "OH": "always OH"}
        policies = g["use"].value_counts().to_dict()
        where = ("; it lies outside every reference dataset on " + "; ".join(d["outside"])) if d["outside"] else ""
        out.append(
            f"- **{name}** ({d['task']}, {d['rows']:,} rows, {d['categorical']} categorical columns, the widest "
            f"with {d['max_cardinality']:,} levels{where}): over {len(g)} settings the recommendation's mean "
            f"regret is {means['recommended']:.4f}, against {means['global']:.4f} for the global winner, "
            f"{means['OH']:.4f} for OH and {means['random']:.4f} for a random encoder; the neighbours' "
            f"consensus would have had {means['neighbours']:.4f}. Lowest: {names[best]}. The recommended "
            f"encoder ranked first on the dataset in {int((g['rank_recommended'] == 1).sum())} of {len(g)} "
            f"settings, and its "
            f"median rank is {g['rank_recommended'].median():g} of {int(g['encoders'].max())}. Policies "
            f"followed: " + ", ".join(f"{k} {v}" for k, v in sorted(policies.items())) + ".")
    return out


def status_text(results: Path) -> str:
    """The result rows' statuses, and which (dataset, encoder, model) are not ``ok``."""
    rows = pd.read_parquet(results, columns=["dataset", "encoder", "model", "status"])
    bad = rows[rows["status"] != "ok"]
    text = f"{len(rows):,} result rows, {len(rows) - len(bad):,} ok"
    if len(bad):
        text += "; not ok: " + "; ".join(f"{d} {e} x {m} {s} ({n} rows)" for (d, e, m, s), n in
                                         bad.groupby(["dataset", "encoder", "model", "status"]).size().items())
    return text + "."


def write_doc(path: Path, evaluated: pd.DataFrame, described: list[dict], commit: str, date: str,
              statuses: str) -> None:
    means, every = tables(evaluated)
    lines = [f"# The advisor on the reserved datasets ({date})", "",
             "The three R datasets reserved out of every suite were never a reference, a held-out dataset or a "
             "neighbour of the advisor, nor did they choose its policies: this is the check that owes nothing "
             "to the suites. Two have a target here; `nycflights13::flights` stays reserved (no binary "
             "target of its own, and the binary advisor is validated on 42 held-out datasets). Written by "
             f"`benchmarks/advisor_reserved.py` at commit {commit} from "
             "`benchmarks/results/advisor_reserved.parquet` (every encoder x model x metric of the task, no "
             "tuning, 5 folds, as the suites; provenance in its rows). The leave-one-dataset-out validation "
             f"is in [the advisor's validation](2026-12-06-advisor-validation.md). Results: {statuses}", "",
             "Regret: the dataset's best score minus the score of the encoder picked (for RMSE and MAE "
             "relative to the best error), as the validation counts it. *Recommended*: what `encbench "
             "recommend` advises, the setting's validated policy; *neighbours*: the consensus of the most "
             "similar reference datasets, whether followed or not; *its rank*: 1 + the number of encoders "
             "that scored strictly better on the dataset.", "",
             "Two datasets are two cases, not a validation: they say whether the advice holds on data it "
             "has never seen, not by how much on average.", "",
             "## What it says", "", *sentences(evaluated, described), "",
             "## Mean regret per dataset", "", means, "", "## Every setting", "", every, ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    run_suites.add_run_options(parser, DEFAULT_DB)
    parser.add_argument("--evaluate", action="store_true", help="only evaluate the results file")
    parser.add_argument("--retry-failed", action="store_true",
                        help="compute again the encoder x model pairs with a row that is not ok")
    parser.add_argument("--date", default=dt.date.today().isoformat(),
                        help="the findings document's date (docs/findings/<date>-advisor-reserved.md)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if not args.evaluate:
        command = "python benchmarks/advisor_reserved.py " + shlex.join(argv if argv is not None else sys.argv[1:])
        run(args, command)
        if args.retry_failed:
            retry_failed(args, command)
    if not RESULTS.exists():
        print(f"no results yet at {RESULTS}", file=sys.stderr)
        return 1
    evaluated, described = evaluate(RESULTS)
    means, every = tables(evaluated)
    print(means, every, *sentences(evaluated, described), sep="\n\n")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    doc = ROOT / "docs" / "findings" / f"{args.date}-advisor-reserved.md"
    write_doc(doc, evaluated, described, commit, args.date, status_text(RESULTS))
    print(f"\nwrote {doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
