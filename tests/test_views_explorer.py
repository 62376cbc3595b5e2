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


def _voters():
    """Hand-built: two datasets under AUC and one under RMSE (lower is better), three encoders."""
    rows = [("1", "AUC", "A", 0.9), ("1", "AUC", "B", 0.8), ("1", "AUC", "C", 0.9),
            ("2", "AUC", "A", 0.6), ("2", "AUC", "B", 0.7), ("2", "AUC", "C", 0.5),
            ("3", "RMSE", "A", 2.0), ("3", "RMSE", "B", 1.0), ("3", "RMSE", "C", 3.0)]
    frame = pd.DataFrame(rows, columns=["dataset", "scoring", "encoder", "cv_score"])
    return explorer.ranked_scores(frame.assign(model="LogReg", tuning="no"))


def test_encoder_profile_puts_each_score_beside_the_voter_s_best():
    """By hand, encoder A: dataset 1 best (0.9, tied with C: 0 behind), dataset 2 second of three
    (0.1 behind B's 0.7), dataset 3 (RMSE) second, 1.0 behind B's 1.0: worst first."""
    profile = explorer.encoder_profile(_voters(), "A", {"1": "one", "2": "two"})
    assert profile["dataset"].tolist() == ["3", "2", "1"]
    assert profile["behind"].tolist() == pytest.approx([1.0, 0.1, 0.0])
    assert profile["best_score"].tolist() == pytest.approx([1.0, 0.7, 0.9])
    assert profile["best_encoders"].tolist() == ["B", "B", "A, C"]
    assert profile["rank"].tolist() == [2, 2, 1] and profile["n_encoders"].tolist() == [3, 3, 3]
    assert profile["name"].tolist()[1:] == ["two", "one"]
    assert explorer.encoder_profile(_voters(), "Z").empty


def test_head_to_head_counts_wins_by_each_metric_s_direction():
    """A against B: A better on dataset 1 (0.9 > 0.8), B on 2 (0.7 > 0.6) and on 3 (RMSE 1.0 <
    2.0): 1 win to 2; A against C: A on 2 and 3, tie on 1."""
    ranked = _voters()
    ab = explorer.head_to_head(ranked, "A", "B", {"1": "one"})
    assert ab.wins == (1, 2, 0) and ab.points["winner"].tolist() == ["A", "B", "B"]
    assert ab.points["name"].tolist()[0] == "one"
    assert "**A** better on 1, **B** better on 2, equal on 0" in ab.summary
    assert explorer.head_to_head(ranked, "A", "C").wins == (2, 0, 1)
    with pytest.raises(ValueError, match="two different encoders"):
        explorer.head_to_head(ranked, "A", "A")


def test_dataset_folds_spreads_each_experiment_over_its_folds():
    folds = pd.DataFrame([{"run_id": "r", "dataset": "d", "encoder": e, "model": "LogReg", "tuning": "no",
                           "scoring": "AUC", "split": "cv", "task": "binary", "fold": f, "cv_score": v}
                          for e, values in (("OH", (0.7, 0.8, 0.9)), ("MT", (0.9, 0.9, 0.9)))
                          for f, v in enumerate(values)])
    table = explorer.dataset_folds(folds, "d")
    assert table["encoder"].tolist() == ["MT", "OH"]                 # best mean first
    oh = table.set_index("encoder").loc["OH"]
    assert [oh["fold_0"], oh["fold_1"], oh["fold_2"]] == [0.7, 0.8, 0.9]
    assert oh["mean"] == pytest.approx(0.8) and oh["sd"] == pytest.approx(0.1)
    assert explorer.dataset_folds(folds, "other").empty
