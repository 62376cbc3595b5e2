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
    table = overview.headline_consensus(everything)
    assert sorted(table["encoder"]) == sorted(vocab.ENCODERS)
    assert table["rank"].iloc[0] == 1 and table["mean_rank"].is_monotonic_increasing
    expected = stats.consensus(pool_combinations(everything), "R-M")
    assert (table.set_index("encoder")["rank"].sort_index() == expected.sort_index()).all()


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
                                           results=len(everything))
    assert summary.as_dict()["results"] == len(everything)
