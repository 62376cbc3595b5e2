"""The page tests' small database (tests/small_db.py) holds what it says, read off the seed files."""
from __future__ import annotations

import pandas as pd
import pytest
from small_db import LOCAL_GRID, LOCAL_RUN_ID, PUBLISHED_DATASETS, SUITE_DATASETS_PER_TASK, SUITE_SETTINGS

from encbench import vocab
from encbench.store import Reader, queries
from encbench.store.importer import ENCBENCH_RUN_ID, PUBLISHED_RUN_ID, SUITES_RUN_ID
from encbench.store.published import load_published_results


@pytest.fixture(scope="module")
def small(small_db):
    reader = Reader(small_db)
    yield reader
    reader.close()


def test_its_published_rows_are_the_seed_file_s_rows_of_its_datasets(small):
    """Every published row of the kept datasets, every model, tuning, metric and encoder."""
    stored = queries.load_scores(small, origins=["published"])
    seed = load_published_results()
    seed = seed[seed["dataset"].isin(PUBLISHED_DATASETS)]
    key = ["dataset", "model", "tuning", "scoring", "encoder"]
    merged = stored.merge(seed, on=key, suffixes=("", "_seed"), validate="one_to_one")
    assert len(merged) == len(stored) == len(seed)
    assert merged["cv_score"].tolist() == pytest.approx(merged["cv_score_seed"].tolist())
    assert set(stored["encoder"]) == set(vocab.ENCODERS) and set(stored["model"]) == set(vocab.STUDY_MODELS)
    assert set(stored["tuning"]) == {"no", "model", "full"}


def test_it_holds_every_origin_and_task_with_the_runs_it_names(small):
    runs = queries.list_runs(small).set_index("run_id")
    assert {PUBLISHED_RUN_ID, ENCBENCH_RUN_ID, SUITES_RUN_ID, LOCAL_RUN_ID} == set(runs.index)
    assert set(runs["status"]) == {"done"}
    scores = queries.load_scores(small, origins=None, tasks=None)
    suites = scores[scores["run_id"] == SUITES_RUN_ID]
    for task, (models, metrics) in SUITE_SETTINGS.items():
        of_task = suites[suites["task"] == task]
        assert of_task["dataset"].nunique() == SUITE_DATASETS_PER_TASK, task
        assert set(of_task["model"]) == set(models) and set(of_task["scoring"]) == set(metrics), task
    beyond = scores[scores["run_id"] == ENCBENCH_RUN_ID]
    assert set(beyond["dataset"]) < set(PUBLISHED_DATASETS)
    assert set(vocab.ALL_ENCODERS) - set(vocab.ENCODERS) & set(beyond["encoder"])
    local = scores[scores["run_id"] == LOCAL_RUN_ID]
    assert set(local["encoder"]) == set(LOCAL_GRID["encoders"]) and set(local["dataset"]) == {"50"}
    # the local run's scores are encbench's own of the same experiments (a seeded protocol)
    own = beyond.set_index(["encoder"]).loc[LOCAL_GRID["encoders"]]
    own = own[(own["model"] == "LogReg") & (own["tuning"] == "no") & (own["scoring"] == "AUC")
              & (own["dataset"] == "50")]
    pd.testing.assert_series_equal(local.set_index("encoder")["cv_score"].sort_index(),
                                   own["cv_score"].sort_index())
