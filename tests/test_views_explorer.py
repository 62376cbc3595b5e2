"""The Results explorer's view: per-dataset ranks, heatmap cells, coverage, published vs local."""
from __future__ import annotations

import pandas as pd
import pytest

from encbench import stats, vocab
from encbench.encoders import REGISTRY
from encbench.store import queries
from encbench.views import explorer


@pytest.fixture(scope="module")
def everything(published_reader):
    return queries.one_score_per_experiment(queries.load_scores(published_reader))


@pytest.fixture(scope="module")
def two_combos(everything):
    mask = (everything["model"].isin(["LogReg", "DT"]) & (everything["tuning"] == "no")
            & (everything["scoring"] == "AUC"))
    return everything[mask]


def _origin_rows():
    rows = [("3", "OH", 0.8, "published", "p"), ("3", "OH", 0.9, "local", "l1"),
            ("3", "MT", 0.7, "published", "p"), ("3", "MT", 0.6, "local", "l1"),
            ("x", "OH", 0.6, "local", "l2"), ("31", "OH", 0.5, "published", "p")]
    frame = pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score", "origin", "run_id"])
    return frame.assign(model="DT", tuning="no", scoring="AUC", time=1.0)


def test_ranked_scores_and_families(two_combos):
    ranked = explorer.ranked_scores(two_combos)
    assert len(ranked) == len(two_combos)
    lib = stats.dataset_ranks(two_combos, by=vocab.FACTORS)
    merged = ranked.merge(lib, on=["model", "tuning", "scoring", "dataset", "encoder"], suffixes=("", "_lib"))
    assert (merged["rank"] == merged["rank_lib"]).all()
    assert (ranked["family"] == ranked["encoder"].map(lambda e: REGISTRY[e].family)).all()
    assert {"origin", "run_id"} <= set(ranked.columns)
    cells = explorer.encoder_dataset_matrix(ranked, "rank")
    assert not cells.duplicated(["encoder", "dataset"]).any()
    grid = explorer.coverage(ranked, vocab.ENCODERS, sorted(two_combos["dataset"].unique()))
    assert grid.cells == 32 * two_combos["dataset"].nunique() and grid.missing > 0


def test_published_vs_local_pairs_each_local_score_with_its_published_value():
    pairs = explorer.published_vs_local(_origin_rows())
    assert list(pairs["encoder"]) == ["OH", "MT"]                 # vocabulary order
    assert pairs["difference"].tolist() == pytest.approx([0.1, -0.1])
    assert set(pairs["dataset"]) == {"3"} and pairs["local_runs"].tolist() == ["l1", "l1"]
    assert pairs["note"].tolist() == ["", ""]
    only_published = _origin_rows()[lambda f: f["origin"] == "published"]
    assert explorer.published_vs_local(only_published).empty


def test_published_vs_local_notes_published_cells_of_an_earlier_run():
    """LightGBM's label metrics of MT come from an earlier run of the study: the pair
    says so; its AUC and ME_1's Acc are references."""
    rows = _origin_rows().assign(model="LGBM")
    rows = pd.concat([rows, rows.assign(scoring="Acc"), rows.assign(scoring="Acc", encoder="ME_1")])
    pairs = explorer.published_vs_local(rows).set_index(["encoder", "scoring"])["note"]
    assert "earlier run" in pairs[("MT", "Acc")] and "earlier run" in pairs[("OH", "Acc")]
    assert pairs[("MT", "AUC")] == pairs[("ME_1", "Acc")] == ""
