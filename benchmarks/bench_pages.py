"""Latency of the Consensus page on the full published results (61,812 rows), per strategy.

A "filter change" is switching the model (cycling DT -> LGBM -> SVM -> kNN -> LogReg, tuning no,
metric AUC) with one aggregation strategy selected. Two measurements, medians of 5 changes:

- ``compute``: what the page computes after the change, uncached, called directly: the SQL load
  of the new filter, the consensus, the agreement view, Friedman-Nemenyi for the CD diagram,
  bootstrap rank intervals (B = 200, the page default) and building + serialising the four
  charts. This is the page's work minus Streamlit.
- ``rerun``: the whole page script rerun by Streamlit's AppTest after setting the model widget
  (widgets, dataframes, charts and download buttons serialised to the frontend protocol).
  AppTest gives every run fresh ``st.cache_data`` storage, so this is the uncached worst case; a
  browser only adds drawing.

Also measured: the default view (R-M, Q-M, R-Nem side by side) and R-Kem (exact Kemeny) and
Q-Imp, which are not heuristics. Usage: ``.venv/bin/python benchmarks/bench_pages.py [--repeat 5]``.

Growth (``--grow 1e6 [--baseline REV]``): a database of the published results grown to that many
result rows (``benchmarks/growth.py``: new dataset ids, perturbed scores, written by the
``Writer``), and the pages' first queries on a freshly opened snapshot, as a first visit after a
new snapshot runs them: the filter options (``factor_levels``, target <= 0.3 s at 1M rows), the
headline counts, the datasets of the view and one setting's scores. ``--baseline REV`` times
the same queries on a copy of that database whose ``scores`` view is the one of git revision
REV, alternating with the current one in this process, and checks both give the same rows.
"""
from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from encbench import plots, stats  # noqa: E402
from encbench.views import consensus  # noqa: E402
from encbench.views.labels import combination_label  # noqa: E402
from encbench.store import Reader, Writer, default_db_path, import_published, queries, snapshot_path  # noqa: E402

MODELS = ["DT", "LGBM", "SVM", "kNN", "LogReg"]
HEURISTICS = list(stats.HEURISTIC_STRATEGIES)
EXTRA = ["R-Kem", "Q-Imp"]
B = 200


def published_db(workdir: Path) -> Path:
    """The app's database if it holds the published results, else a fresh temporary copy."""
    path = default_db_path()
    if snapshot_path(path).exists():
        with Reader(path) as reader:
            if queries.summary(reader)["results"] >= 61_812:
                return path
    path = workdir / "encbench.duckdb"
    with Writer(path) as writer:
        import_published(writer)
    return path


def page_compute(reader: Reader, model: str, strategies: list[str]) -> None:
    """The Consensus page's computation for one filter state (no caching, no Streamlit)."""
    rows = queries.one_score_per_experiment(
        queries.load_scores(reader, models=[model], tunings=["no"], scorings=["AUC"], origins=["published"]))
    params = stats.params_for(strategies, {"theta": 0.95, "alpha": 0.05})
    ranks = consensus.consensus_ranks(rows, strategies, mode="per-combination", params=params)
    if "R-Kem" in strategies:
        kem, _info = consensus.kemeny_ranks(rows, mode="per-combination")
        ranks = kem if ranks.empty else pd.concat([ranks, kem], ignore_index=True)
    view = consensus.assemble(ranks, strategies, params)
    combo = combination_label(model, "no", "AUC")
    subset = consensus.subset_for(rows, combo, "per-combination")
    nem = stats.nemenyi(subset, alpha=0.05)
    interval_strategy = next((s for s in strategies if s != "R-Kem"), "R-M")
    use = stats.params_for(interval_strategy, params)
    iv = stats.rank_intervals(subset, interval_strategy, B=B, seed=0, **use)
    charts = [plots.rank_matrix(view.ranks, column="column"),
              plots.cd_diagram(*consensus.cd_inputs(nem)),
              plots.rank_intervals_chart(iv)]
    if len(view.columns) > 1:
        charts += [plots.similarity_heatmap(view.spearman, measure="rho"),
                   plots.similarity_heatmap(view.jaccard, measure="J")]
    for chart in charts:
        chart.to_json()


def time_compute(reader: Reader, strategies: list[str], repeat: int) -> float:
    page_compute(reader, "LogReg", strategies)  # warm imports and the solver
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        page_compute(reader, MODELS[i % len(MODELS)], strategies)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def time_rerun(strategies: list[str], repeat: int) -> float:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["strategy"] = strategies
    at.switch_page("pages/consensus.py")
    at.run()
    assert not at.exception, at.exception
    times = []
    for i in range(repeat):
        at.multiselect(key="model").set_value([MODELS[i % len(MODELS)]])
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
        assert any(m.value.startswith("Best by ") for m in at.markdown), "the ranking was not shown"
    return statistics.median(times)


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def grown_db(workdir: Path, rows: int) -> Path:
    """A database of the published results plus grown copies, ``rows`` result rows in all."""
    from growth import grow

    from encbench.store.importer import PUBLISHED_RUN_ID
    from encbench.store.published import load_published_results

    path = workdir / "grown.duckdb"
    with Writer(path) as writer:
        import_published(writer)
        extra = grow(load_published_results(), rows)
        extra = extra[extra["dataset"].str.contains("~", regex=False)]
        for dataset in sorted(set(extra["dataset"])):
            writer.upsert_dataset({"dataset": dataset, "name": dataset, "source": "upload"})
        writer.write_results(extra.assign(run_id=PUBLISHED_RUN_ID, fold=-1, n_folds=1, status="ok",
                                          error=None, encode_time=extra["time"]))
    return path


def _view_sql(revision: str) -> str:
    """The newest ``CREATE VIEW scores`` statement among the migrations of git ``revision``."""
    import subprocess

    names = subprocess.run(["git", "ls-tree", "--name-only", revision, "db/migrations/"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in sorted(names, reverse=True):
        text = subprocess.run(["git", "show", f"{revision}:{name}"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout
        if "CREATE VIEW scores" in text:
            return text[text.index("CREATE VIEW scores"):]
    raise ValueError(f"no CREATE VIEW scores in the migrations of {revision!r}")


def first_queries(reader: Reader) -> dict[str, float]:
    """Seconds of each query a page's first visit runs, in order, on ``reader``."""
    steps = {
        "filter options (factor_levels)": lambda: queries.factor_levels(reader),
        "headline counts (summary)": lambda: queries.summary(reader, origins=["published"]),
        "view datasets": lambda: queries.datasets_with_scores(reader, ["published"]),
        "one setting's scores": lambda: queries.load_scores(
            reader, models=["LogReg"], tunings=["no"], scorings=["AUC"], origins=["published"],
            splits=["cv"]),
    }
    out = {}
    for label, step in steps.items():
        start = time.perf_counter()
        step()
        out[label] = time.perf_counter() - start
    return out


def growth(rows: int, repeat: int, baseline: str | None) -> None:
    import shutil

    import duckdb

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        path = grown_db(Path(tmp), rows)
        snapshots = {"current": snapshot_path(path)}
        print(f"grown database: {rows:,} result rows, written in {time.perf_counter() - start:.0f} s")
        if baseline:
            old = Path(tmp) / "baseline.read.duckdb"
            shutil.copyfile(snapshot_path(path), old)
            with duckdb.connect(str(old)) as con:
                con.execute("DROP VIEW scores")
                con.execute(_view_sql(baseline))
            snapshots = {f"baseline {baseline}": old, **snapshots}
            rows_of = {}
            for name, file in snapshots.items():
                with duckdb.connect(str(file), read_only=True) as con:
                    rows_of[name] = con.execute("SELECT * FROM scores ORDER BY ALL").fetchall()
            first, *others = rows_of.values()
            print(f"scores view rows identical across versions: {all(first == o for o in others)} "
                  f"({len(first):,} rows)")
        times: dict[str, list[dict[str, float]]] = {name: [] for name in snapshots}
        for _ in range(repeat):
            for name, file in snapshots.items():
                with duckdb.connect(str(file), read_only=True) as con:  # a fresh snapshot open
                    times[name].append(first_queries(_Connection(con)))
        labels = list(next(iter(times.values()))[0])
        print(f"first queries on a fresh snapshot, medians of {repeat} (load {_load()})")
        print(f"{'query':<34}" + "".join(f"{name:>22}" for name in snapshots))
        for label in labels:
            print(f"{label:<34}" + "".join(
                f"{statistics.median(t[label] for t in runs) * 1000:>19.0f} ms" for runs in times.values()))


class _Connection:
    """A DuckDB connection as a query source (``query(sql, params) -> DataFrame``)."""

    def __init__(self, con):
        self.con = con

    def query(self, sql, params=None):
        return self.con.execute(sql, params or []).df()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-rerun", action="store_true", help="only the compute path")
    parser.add_argument("--grow", type=float, default=0, help="result rows of a grown database, e.g. 1e6")
    parser.add_argument("--baseline", default=None, help="a git revision whose scores view to time beside")
    args = parser.parse_args()
    if args.grow:
        growth(int(args.grow), args.repeat, args.baseline)
        return 0
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        db = published_db(Path(tmp))
        os.environ["ENCBENCH_DB"] = str(db)
        reader = Reader(db)
        n = queries.summary(reader)["results"]
        print(f"Consensus page latency, {n:,} results ({db}); model change, tuning no, metric AUC; "
              f"medians of {args.repeat}; rank intervals B={B}")
        print(f"{'strategies':<22}{'compute (ms)':>14}{'rerun (ms)':>12}")
        cases = [[s] for s in HEURISTICS] + [["R-M", "Q-M", "R-Nem"]] + [[s] for s in EXTRA]
        worst = 0.0
        for strategies in cases:
            compute = time_compute(reader, strategies, args.repeat)
            rerun = float("nan") if args.skip_rerun else time_rerun(strategies, args.repeat)
            label = "+".join(strategies) + (" (default)" if len(strategies) == 3 else "")
            print(f"{label:<22}{compute * 1000:>14.0f}{rerun * 1000:>12.0f}", flush=True)
            if strategies[0] in HEURISTICS or len(strategies) > 1:
                worst = max(worst, rerun if not args.skip_rerun else compute)
        reader.close()
        print(f"worst heuristic case: {worst * 1000:.0f} ms (target: about 1 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
