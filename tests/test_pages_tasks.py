"""AppTest of the Task select on a database holding regression rows beside the published ones:
a regression ranking orders by RMSE lowest first, binary stays the default and unchanged."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.engine import Grid, run_grid
from encbench.store import Reader, queries
from pagetest import open_page, summary_line, texts


def _regression_csv(tmp_path, name: str, seed: int) -> str:
    rng = np.random.default_rng(seed)
    colour = rng.choice([f"c{i}" for i in range(8)], 120)
    y = np.round(pd.Series(colour).str[1:].astype(int).to_numpy() * 2.0 + rng.normal(size=120), 3)
    path = tmp_path / f"{name}.csv"
    pd.DataFrame({"colour": colour, "y": y}).to_csv(path, index=False)
    return f"{path}:y"


@pytest.fixture()
def regression_db(private_db, tmp_path):
    grid = Grid(datasets=[_regression_csv(tmp_path, "amounts", 1), _regression_csv(tmp_path, "prices", 2)],
                encoders=["Drop", "OH", "MT"], models=["Ridge"], scorings=["RMSE"])
    run_grid(grid, db_path=private_db, workers=0)
    return private_db


def test_regression_ranks_lowest_rmse_first_and_binary_stays_the_default(regression_db):
    reader = Reader(regression_db)
    rows = queries.load_scores(reader, tasks=["regression"])
    reader.close()
    assert set(rows["scoring"]) == {"RMSE"} and rows["dataset"].nunique() == 2
    # by hand: per dataset the lowest RMSE ranks 1 (dense), then the mean over datasets
    ranks = rows.groupby("dataset")["cv_score"].rank(method="dense", ascending=True)
    expected = ranks.groupby(rows["encoder"]).mean().sort_values()
    assert expected.index[0] == "MT" and expected.index[-1] == "Drop"   # the colour carries y

    at = open_page("consensus", {"task": "regression", "strategy": "R-M"})
    assert at.sidebar.selectbox(key="task").value == "regression"
    assert at.multiselect(key="model").value == ["Ridge"] and at.multiselect(key="metric").value == ["RMSE"]
    wide = at.dataframe[0].value
    assert wide["encoder"].iloc[0] == expected.index[0]
    assert wide.set_index("encoder").iloc[:, -1].astype(float).idxmax() == expected.index[-1]

    binary = open_page("consensus")                                  # no task in the link: binary
    assert binary.sidebar.selectbox(key="task").value == "binary"
    assert binary.multiselect(key="metric").value == ["AUC"]
    published = open_page("consensus", {"task": "binary"})
    assert summary_line(binary) == summary_line(published)
    assert "Ridge" not in binary.multiselect(key="model").options


def test_a_task_without_results_says_so(regression_db):
    at = open_page("explorer", {"task": "multiclass"})
    assert "No results for multiclass yet" in texts(at)


def test_pairwise_tests_and_cd_read_rmse_lower_is_better(regression_db):
    """By hand: MT's RMSE is below Drop's on both datasets, so MT (A) wins both pairs and its
    oriented median difference is positive; the CD diagram's mean rank of MT is 1."""
    reader = Reader(regression_db)
    rows = queries.load_scores(reader, tasks=["regression"]).pivot(index="dataset", columns="encoder",
                                                                     values="cv_score")
    reader.close()
    assert (rows["MT"] < rows["Drop"]).all()
    at = open_page("consensus", {"task": "regression", "strategy": "R-M", "section": "Pairwise tests",
                                 "wilcoxon": ["MT", "Drop"]})
    table = at.dataframe[-1].value
    row = table.iloc[0]
    assert (row["encoder_a"], row["encoder_b"]) == ("MT", "Drop")
    assert row["wins_a"] == 2 and row["wins_b"] == 0
    assert row["median_difference"] == pytest.approx(float(np.median(rows["Drop"] - rows["MT"])))
    cd = open_page("consensus", {"task": "regression", "strategy": "R-M", "section": "Critical difference"})
    assert not cd.exception
    assert "MT" in texts(cd) or cd.get("vega_lite_chart")


@pytest.fixture()
def rmse_r2_db(private_db, tmp_path):
    grid = Grid(datasets=[_regression_csv(tmp_path, "amounts", 1), _regression_csv(tmp_path, "prices", 2)],
                encoders=["Drop", "OH", "MT"], models=["Ridge"], scorings=["RMSE", "R2"])
    run_grid(grid, db_path=private_db, workers=0)
    return private_db


def test_consensus_pools_rmse_with_r2_for_rank_strategies_and_refuses_score_means(rmse_r2_db):
    """Pooled RMSE and R2 were refused outright ("metrics of opposite directions") while the
    Overview pools them: the scores are now oriented before ranking, so R-M pools the 4 voters
    (MT first, by hand: lowest RMSE and highest R2 on both datasets), and only Q-M, which
    averages raw scores, is left out with a message naming the metrics; the Wilcoxon tab says
    why it has no tests here."""
    reader = Reader(rmse_r2_db)
    rows = queries.load_scores(reader, tasks=["regression"])
    reader.close()
    oriented = rows.assign(cv_score=rows["cv_score"].where(rows["scoring"] == "R2", -rows["cv_score"]))
    voter = oriented["dataset"] + oriented["scoring"]
    ranks = oriented.groupby(voter)["cv_score"].rank(method="dense", ascending=False)
    expected = ranks.groupby(oriented["encoder"]).mean().sort_values()
    query = {"task": "regression", "metric": ["RMSE", "R2"], "mode": "pooled", "strategy": ["R-M", "Q-M"]}
    at = open_page("consensus", query)
    assert "opposite directions" not in texts(at) and "No consensus" not in texts(at)
    wide = at.dataframe[0].value
    assert list(wide.columns) == ["encoder", "family", "R-M"]
    assert wide["encoder"].tolist() == expected.index.tolist() and wide["encoder"].iloc[0] == "MT"
    refused = at.get("warning")
    assert any("Q-M left out" in w.value and "RMSE, R2" in w.value for w in refused)
    pairwise = open_page("consensus", {**query, "section": "Pairwise tests"})
    assert "means nothing across the pooled metrics of different scales (RMSE, R2)" in texts(pairwise)
