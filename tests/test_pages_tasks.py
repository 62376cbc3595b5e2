"""AppTest of the Task select on a database holding regression rows beside the published ones
(the small database, tests/small_db.py: encbench's own benchmark on R datasets of every task):
a regression ranking orders by RMSE lowest first, binary stays the default and unchanged."""
from __future__ import annotations

import numpy as np
import pytest

from encbench.store import Reader, queries
from encbench.vocab import ordered
from pagetest import open_page, summary_line, texts


@pytest.fixture()
def regression_db(small_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))
    return small_db


def _regression_rows(db, model=None, **filters):
    """The regression scores of ``db`` under ``model``, by default the model a regression view
    opens on: LogReg, the page's default, serves no regression, so the first of the task's
    models in vocabulary order."""
    reader = Reader(db)
    try:
        rows = queries.load_scores(reader, tasks=["regression"], **filters)
    finally:
        reader.close()
    return rows[rows["model"] == (model or ordered("model", rows["model"].unique())[0])]


def _in_order_of(shown, expected) -> bool:
    """Whether encoders ``shown`` in order have non-decreasing ``expected`` mean ranks (ties in
    any order), ``shown`` holding every encoder of ``expected``."""
    return sorted(shown) == sorted(expected.index) and expected.reindex(shown).is_monotonic_increasing


def test_regression_ranks_lowest_rmse_first_and_binary_stays_the_default(regression_db):
    rows = _regression_rows(regression_db, scorings=["RMSE"])
    assert rows["dataset"].nunique() > 1
    # by hand: per dataset the lowest RMSE ranks 1 (dense), then the mean over datasets
    ranks = rows.groupby("dataset")["cv_score"].rank(method="dense", ascending=True)
    expected = ranks.groupby(rows["encoder"]).mean().sort_values()
    assert expected.iloc[0] < expected.iloc[1]                        # one encoder first

    at = open_page("consensus", {"task": "regression", "strategy": "R-M"})
    assert at.sidebar.selectbox(key="task").value == "regression"
    assert at.multiselect(key="model").value == list(set(rows["model"])) and "LogReg" not in set(rows["model"])
    assert at.multiselect(key="metric").value == ["RMSE"]
    wide = at.dataframe[0].value
    assert wide["encoder"].iloc[0] == expected.index[0]
    assert _in_order_of(wide["encoder"].tolist(), expected)
    worst = wide.set_index("encoder").iloc[:, -1].astype(float).idxmax()
    assert expected[worst] == expected.max()

    binary = open_page("consensus")                                  # no task in the link: binary
    assert binary.sidebar.selectbox(key="task").value == "binary"
    assert binary.multiselect(key="metric").value == ["AUC"]
    published = open_page("consensus", {"task": "binary"})
    assert summary_line(binary) == summary_line(published)
    assert "Ridge" not in binary.multiselect(key="model").options             # a regression model


def test_a_task_without_results_says_so(small_published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(small_published_db))            # binary results only
    at = open_page("explorer", {"task": "multiclass"})
    assert "No results for multiclass yet" in texts(at)


def test_pairwise_tests_and_cd_read_rmse_lower_is_better(regression_db):
    """By hand: with Ridge, MT's RMSE is below Drop's on every dataset, so MT (A) wins every pair
    and its oriented median difference is positive."""
    rows = _regression_rows(regression_db, "Ridge", scorings=["RMSE"]).pivot(index="dataset", columns="encoder",
                                                                             values="cv_score")
    assert (rows["MT"] < rows["Drop"]).all()
    at = open_page("consensus", {"task": "regression", "model": "Ridge", "strategy": "R-M",
                                 "section": "Pairwise tests", "wilcoxon": ["MT", "Drop"]})
    table = at.dataframe[-1].value
    row = table.iloc[0]
    assert (row["encoder_a"], row["encoder_b"]) == ("MT", "Drop")
    assert row["wins_a"] == len(rows) and row["wins_b"] == 0
    assert row["median_difference"] == pytest.approx(float(np.median(rows["Drop"] - rows["MT"])))
    cd = open_page("consensus", {"task": "regression", "strategy": "R-M", "section": "Critical difference"})
    assert not cd.exception
    assert "MT" in texts(cd) or cd.get("vega_lite_chart")


def test_consensus_pools_rmse_with_r2_for_rank_strategies_and_refuses_score_means(regression_db):
    """Pooled RMSE and R2 were refused outright ("metrics of opposite directions") while the
    Overview pools them: the scores are now oriented before ranking, so R-M pools the
    (dataset, metric) voters (in the order computed by hand below), and only Q-M, which
    averages raw scores, is left out with a message naming the metrics; the Wilcoxon tab says
    why it has no tests here."""
    rows = _regression_rows(regression_db, scorings=["RMSE", "R2"])
    oriented = rows.assign(cv_score=rows["cv_score"].where(rows["scoring"] == "R2", -rows["cv_score"]))
    voter = oriented["dataset"] + oriented["scoring"]
    ranks = oriented.groupby(voter)["cv_score"].rank(method="dense", ascending=False)
    expected = ranks.groupby(oriented["encoder"]).mean().sort_values()
    query = {"task": "regression", "metric": ["RMSE", "R2"], "mode": "pooled", "strategy": ["R-M", "Q-M"]}
    at = open_page("consensus", query)
    assert "opposite directions" not in texts(at) and "No consensus" not in texts(at)
    wide = at.dataframe[0].value
    assert list(wide.columns) == ["encoder", "family", "R-M"]
    assert expected.iloc[0] < expected.iloc[1] and wide["encoder"].iloc[0] == expected.index[0]
    assert _in_order_of(wide["encoder"].tolist(), expected)
    refused = at.get("warning")
    assert any("Q-M left out" in w.value and "RMSE, R2" in w.value for w in refused)
    pairwise = open_page("consensus", {**query, "section": "Pairwise tests"})
    assert "means nothing across the pooled metrics of different scales (RMSE, R2)" in texts(pairwise)
