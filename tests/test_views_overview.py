"""The Overview page's view: counts, datasets in the view, the headline consensus."""
from __future__ import annotations

import pandas as pd
import pytest

from encbench import stats, vocab
from encbench.store import queries
from encbench.views import overview
from encbench.views.consensus import pool_combinations


@pytest.fixture(scope="module")
def everything(published_reader):
    return queries.one_score_per_experiment(queries.load_scores(published_reader))


def test_headline_consensus_over_everything(everything):
    """The headline ranks all 32 encoders over the voters where every one of them has a result
    (the published data: 1,311 of 2,036), each encoder's mean rank over those same voters, and
    equals R-M computed naively on them."""
    head = overview.headline_consensus(everything)
    table = head.table
    assert sorted(table["encoder"]) == sorted(vocab.ENCODERS) and head.left_out.empty
    assert table["rank"].iloc[0] == 1 and table["mean_rank"].is_monotonic_increasing
    assert set(table["n_voters"]) == {head.n_voters} and (head.n_voters, head.n_all_voters) == (1311, 2036)
    pooled = pool_combinations(everything)
    complete = pooled.groupby("dataset")["encoder"].nunique() == 32
    shared = pooled[pooled["dataset"].isin(complete.index[complete])]
    expected = stats.consensus(shared, "R-M")
    assert (table.set_index("encoder")["rank"].sort_index() == expected.sort_index()).all()
    # a naive mean of dense ranks per voter
    dense = shared.groupby("dataset")["cv_score"].rank(method="dense", ascending=False)
    naive = dense.groupby(shared["encoder"]).mean()
    assert table.set_index("encoder")["mean_rank"].sort_index().to_numpy() == pytest.approx(
        naive.sort_index().to_numpy())
    assert head.best == ["WoE"] and "same 1,311 voters" in head.coverage_text


def test_an_encoder_on_few_voters_is_left_out_of_the_headline_and_listed():
    """An encoder with results on few voters (as Native, run with two models only) would shrink
    the comparison to them: it is left out and listed with its own voters, and the others are
    ranked over the voters they all have. Hand-built: X beats Y everywhere, Z only on voter a."""
    rows = []
    for d in range(6):
        rows += [dict(dataset=str(d), model="LogReg", tuning="no", scoring="AUC", encoder="X", cv_score=0.9),
                 dict(dataset=str(d), model="LogReg", tuning="no", scoring="AUC", encoder="Y", cv_score=0.8)]
    rows.append(dict(dataset="0", model="LogReg", tuning="no", scoring="AUC", encoder="Z", cv_score=1.0))
    head = overview.headline_consensus(pd.DataFrame(rows))
    assert head.table["encoder"].tolist() == ["X", "Y"] and head.table["mean_rank"].tolist() == [1.0, 2.0]
    assert head.n_voters == 6 and set(head.table["n_voters"]) == {6}
    assert head.left_out[["encoder", "n_voters", "mean_rank"]].values.tolist() == [["Z", 1, 1.0]]
    assert "Z (1 voters)" in head.coverage_text


def test_the_headline_pools_metrics_of_both_directions_oriented():
    """RMSE (lower is better) and R2 pooled: each voter ranks its encoders best first, so A, the
    lower RMSE and the higher R2, is first under both."""
    rows = []
    for d in range(3):
        rows += [dict(dataset=str(d), model="LogReg", tuning="no", scoring="RMSE", encoder="A", cv_score=1.0),
                 dict(dataset=str(d), model="LogReg", tuning="no", scoring="RMSE", encoder="B", cv_score=2.0),
                 dict(dataset=str(d), model="LogReg", tuning="no", scoring="R2", encoder="A", cv_score=0.9),
                 dict(dataset=str(d), model="LogReg", tuning="no", scoring="R2", encoder="B", cv_score=0.5)]
    head = overview.headline_consensus(pd.DataFrame(rows))
    assert head.best == ["A"] and head.table["mean_rank"].tolist() == [1.0, 2.0] and head.n_voters == 6


def test_datasets_in_view_keeps_the_view_s_datasets_and_counts_its_rows():
    datasets = pd.DataFrame({"dataset": ["31", "50", "file:ab"], "name": ["credit-g", "ttt", "mine"],
                             "results": [99, 99, 99]})
    scores = pd.DataFrame({"dataset": ["50", "31", "50", "50"], "encoder": ["OH", "OH", "MT", "CB"]})
    shown = overview.datasets_in_view(datasets, scores)
    assert shown[["dataset", "name", "results"]].values.tolist() == [["31", "credit-g", 1], ["50", "ttt", 3]]
    assert overview.datasets_in_view(datasets, scores.iloc[:0]).empty


def test_counts_of_the_view(everything):
    counts = overview.counts_by_pair(everything, "model", "tuning")
    assert counts["results"].sum() == len(everything)
    assert counts[["model", "tuning"]].drop_duplicates().shape[0] == len(counts)
    assert counts["model"].iloc[0] == "DT" and counts["tuning"].iloc[0] == "no"      # vocabulary order
    summary = overview.score_counts(everything)
    assert summary == overview.ScoreCounts(datasets=50, encoders=32, models=5, scorings=4, tunings=3,
                                           results=len(everything), runs=everything["run_id"].nunique())
    assert summary.as_dict()["results"] == len(everything)


def test_the_overview_says_what_each_task_holds():
    """The caption names the sources a task's results come from: the published study for binary,
    encbench's own benchmark for a task the study lacks, local runs when there are some."""
    from encbench.views.overview import task_holds

    binary = task_holds("binary", {"origin": ["encbench", "local", "published"], "dataset": list("abc")})
    assert binary.startswith("Shown: binary classification (a yes/no target), 3 dataset(s) with results: "
                             "the published study's")
    assert binary.endswith("and your local runs.")
    multiclass = task_holds("multiclass", {"origin": ["encbench"], "dataset": ["x", "y"]})
    assert multiclass == ("Shown: multiclass classification (a target of several classes), 2 dataset(s) with "
                          "results: encbench's own benchmark (R datasets, every encoder).")
    assert task_holds("regression", {"origin": [], "dataset": []}).endswith("results: nothing yet.")
