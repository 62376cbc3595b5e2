"""The Dask executor on a LocalCluster gives the same results as the local task processes."""
from __future__ import annotations

import logging
import shutil

import pytest

from encbench.engine import Grid, run_grid
from encbench.store import Writer

distributed = pytest.importorskip("distributed")


@pytest.fixture()
def engine_db(published_db, tmp_path):
    path = tmp_path / "engine.duckdb"
    shutil.copyfile(published_db, path)
    return path


def _results(db, run_id):
    with Writer(db, publish=False) as writer:
        return writer.query(
            "SELECT dataset, encoder, model, tuning, scoring, fold, cv_score, status FROM results "
            "WHERE run_id = ? ORDER BY dataset, encoder, model, scoring, fold", [run_id])


def test_local_cluster_scores_equal_local_scores(engine_db, tmp_path):
    # one dataset with numerical and categorical columns (the real cluster's test runs two)
    grid = Grid(datasets=["bundled:credit-g"], encoders=["OH", "CB"],
                models=["LogReg", "LGBM"], scorings=["AUC", "BAcc"], n_folds=2)
    local_db = tmp_path / "local.duckdb"
    shutil.copyfile(engine_db, local_db)
    run_grid(grid, db_path=local_db, workers=1)
    seen = []
    logging.getLogger("distributed").setLevel(logging.WARNING)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        run_id = run_grid(grid, db_path=engine_db, scheduler=cluster.scheduler_address,
                          progress=lambda done, total, info: seen.append(info))
    ours, theirs = _results(engine_db, run_id), _results(local_db, run_id)
    assert len(ours) == 2 * 2 * 2 * 2 and set(ours["status"]) == {"ok"}
    assert ours.equals(theirs)                        # bit for bit: same code, seeds, one thread
    # results streamed back from both workers, one progress call per task
    assert len(seen) == 1 + 4
    assert len({info["where"] for info in seen[1:]}) == 2
