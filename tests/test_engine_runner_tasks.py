"""A multiclass and a regression dataset through ``run_grid`` into a real database: the task
is stored with every dataset and result, filters the scores, and a consensus ranks within it."""
from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from encbench.engine import Grid, run_grid
from encbench.stats import consensus
from encbench.store import Reader, Writer, queries


@pytest.fixture()
def engine_db(published_db, tmp_path):
    path = tmp_path / "engine.duckdb"
    shutil.copyfile(published_db, path)
    return path


def _write(tmp_path, name: str, task: str, seed: int) -> str:
    rng = np.random.default_rng(seed)
    n = 100
    colour = rng.choice([f"c{i}" for i in range(10)], n)
    effect = pd.Series(colour).str[1:].astype(int).to_numpy()
    noise = rng.normal(size=n)
    if task == "regression":
        y = np.round(effect * 2.0 + noise, 3)
    else:
        y = np.array(["a", "b", "c"])[np.clip((effect + noise) // 4, 0, 2).astype(int)]
    path = tmp_path / f"{name}.csv"
    pd.DataFrame({"colour": colour, "other": rng.choice(list("xyz"), n), "y": y}).sort_values(
        "y").to_csv(path, index=False)  # sorted by the target, as files often are
    return f"{path}:y"


def test_each_task_runs_is_stored_and_ranked_within_itself(engine_db, tmp_path):
    multiclass = _write(tmp_path, "three", "multiclass", 1)
    regression = _write(tmp_path, "amounts", "regression", 2)
    grid = Grid(datasets=[multiclass, regression], encoders=["Drop", "OH", "MT", "WoE"],
                models=["DT"], scorings=["Acc", "RMSE"])
    run_id = run_grid(grid, db_path=engine_db, workers=0)

    with Writer(engine_db, publish=False) as writer:
        tasks = writer.query("SELECT name, task FROM datasets WHERE name IN ('three', 'amounts') "
                             "ORDER BY name")
        rows = writer.query("SELECT task, scoring, encoder, status, count(*) AS n FROM results "
                            "WHERE run_id = ? GROUP BY ALL ORDER BY ALL", [run_id])
        published = writer.query("SELECT DISTINCT task FROM results WHERE run_id <> ?", [run_id])
    assert tasks.to_dict("list") == {"name": ["amounts", "three"], "task": ["regression", "multiclass"]}
    assert set(rows["status"]) == {"ok"} and set(rows["n"]) == {5}
    # WoE runs for no task here (both are beyond binary); each task gets its own metric
    assert set(zip(rows["task"], rows["scoring"])) == {("multiclass", "Acc"), ("regression", "RMSE")}
    assert "WoE" not in set(rows["encoder"])
    assert published["task"].tolist() == ["binary"]  # the published rows, migrated

    with Reader(engine_db) as reader:
        scores = queries.load_scores(reader, run_ids=[run_id], tasks=["regression"])
        assert queries.load_scores(reader, origins=["published"], tasks=["regression"]).empty
    assert set(scores["task"]) == {"regression"} and set(scores["scoring"]) == {"RMSE"}
    ranking = consensus(scores, "R-M")
    # one dataset: RMSE is lower-is-better, so the smallest error ranks first
    by_error = scores.set_index("encoder")["cv_score"].sort_values()
    assert list(ranking.index) == list(by_error.index)
    assert by_error["MT"] < by_error["Drop"]  # the colour carries the target


def test_a_dataset_registered_for_one_task_is_refused_for_another(engine_db, tmp_path):
    from encbench.data import DatasetError

    rng = np.random.default_rng(4)
    path = tmp_path / "grades.csv"   # grades 1-4: inferred multiclass, a valid regression target too
    pd.DataFrame({"colour": rng.choice(list("abcde"), 120), "y": np.tile([1, 2, 3, 4], 30)}).to_csv(
        path, index=False)
    spec = f"{path}:y"
    run_grid(Grid(datasets=[spec], encoders=["Drop"], models=["DT"], scorings=["Acc"]),
             db_path=engine_db, workers=0)
    with Writer(engine_db, publish=False) as writer:
        before = writer.query("SELECT count(*) AS n FROM results")["n"].iloc[0]
        assert writer.query("SELECT task FROM datasets WHERE name = 'grades'")["task"].tolist() == ["multiclass"]
    grid = Grid(datasets=[spec], encoders=["Drop"], models=["DT"], scorings=["RMSE"],
                dataset_options={spec: {"task": "regression"}})
    with pytest.raises(DatasetError, match=r"is registered as a multiclass task: got 'regression'.*"
                                           r"run --task multiclass"):
        run_grid(grid, db_path=engine_db, workers=0)
    with Writer(engine_db, publish=False) as writer:
        assert writer.query("SELECT count(*) AS n FROM results")["n"].iloc[0] == before
