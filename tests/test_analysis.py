"""encbench.analysis: one call from a database to a ranking, its tests and a CD diagram."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench import analysis, stats


def _scores(n_datasets: int = 8, encoders=("A", "B", "C", "D"), *, scoring: str = "AUC", model: str = "DT",
            seed: int = 0, drop=()) -> pd.DataFrame:
    """A seeded long frame of one setting: encoder A best, D worst, some noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_datasets):
        for i, e in enumerate(encoders):
            if (f"d{d}", e) in drop:
                continue
            rows.append({"dataset": f"d{d}", "encoder": e, "model": model, "tuning": "no",
                         "scoring": scoring, "cv_score": 0.9 - 0.05 * i + rng.normal(0, 0.03)})
    return pd.DataFrame(rows)


def test_ranking_and_tests_are_the_library_calls():
    """The ranking is stats.consensus of the strategy, the mean ranks and the critical
    difference are stats.nemenyi's on the same (complete) scores, and the control defaults to
    the encoder of best mean rank."""
    scores = _scores()
    result = analysis.analyse(scores, "R-M")
    expected = stats.consensus(scores[["dataset", "encoder", "cv_score", "scoring"]], "R-M")
    assert dict(zip(result.ranking["encoder"], result.ranking["rank"])) == expected.to_dict()
    nemenyi = stats.nemenyi(scores[["dataset", "encoder", "cv_score", "scoring"]])
    pd.testing.assert_series_equal(result.nemenyi.mean_ranks, nemenyi.mean_ranks)
    assert result.nemenyi.critical_difference == pytest.approx(nemenyi.critical_difference)
    assert result.control.control == nemenyi.mean_ranks.index[0]
    assert result.design.design == "complete-datasets"
    assert list(result.ranking["n_datasets"]) == [8, 8, 8, 8]
    assert "Friedman" in str(result) and "R-M: 1. A" in str(result)


def test_mean_rank_is_a_hand_computed_friedman_rank():
    """Two datasets, scores chosen so that the Friedman ranks are known: A (1, 2), B (2, 1),
    C (3, 3) -> mean ranks 1.5, 1.5, 3."""
    rows = [("d0", "A", 0.9), ("d0", "B", 0.8), ("d0", "C", 0.7),
            ("d1", "A", 0.8), ("d1", "B", 0.9), ("d1", "C", 0.7)]
    scores = pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])
    result = analysis.analyse(scores)
    assert result.ranking.set_index("encoder")["mean_rank"].to_dict() == {"A": 1.5, "B": 1.5, "C": 3.0}


def test_other_strategy_and_parameters_pass_through():
    """Any strategy of the registry, with its parameters, gives stats.consensus's ranking."""
    scores = _scores(seed=3)
    frame = scores[["dataset", "encoder", "cv_score", "scoring"]]
    result = analysis.analyse(scores, "Q-Th", theta=0.9)
    assert result.strategy == "Q-Th"
    expected = stats.consensus(frame, "Q-Th", theta=0.9)
    assert dict(zip(result.ranking["encoder"], result.ranking["rank"])) == expected.to_dict()


def test_auto_design_names_what_it_tested_on():
    """With no complete dataset, 'auto' falls back to the encoders present everywhere, and the
    design says so; an explicit design is used as given."""
    drop = {(f"d{d}", "D") for d in range(8) if d % 2} | {("d0", "C")}
    scores = _scores(drop=drop)
    result = analysis.analyse(scores)
    assert result.design.design == "complete-datasets"  # d2, d4, d6 still hold all four
    drop |= {(f"d{d}", "C") for d in (2, 4, 6)}
    result = analysis.analyse(_scores(drop=drop))
    assert result.design.design == "common-encoders"
    assert set(result.nemenyi.mean_ranks.index) == {"A", "B"}
    assert analysis.analyse(_scores(drop=drop), design="impute").design.design == "impute"


def test_settings_are_pooled_as_voters_and_directions_oriented():
    """Two metrics of opposite directions (RMSE and R2) pool: each (dataset, setting) is a
    voter and RMSE's smallest error ranks first, so the best encoder is the same in both."""
    r2 = _scores(scoring="R2", seed=1)
    rmse = _scores(scoring="RMSE", seed=2).assign(cv_score=lambda t: 1 - t["cv_score"])  # A smallest
    result = analysis.analyse(pd.concat([r2, rmse], ignore_index=True))
    assert result.nemenyi.n_datasets == 16
    assert len(result.settings) == 2
    assert result.ranking["encoder"].iloc[0] == "A"


def test_refuses_several_tasks_and_empty_input():
    """Tasks (and splits) are never pooled; an empty frame says which call to check."""
    scores = pd.concat([_scores().assign(task="binary"), _scores().assign(task="multiclass")])
    with pytest.raises(ValueError, match="never pooled"):
        analysis.analyse(scores)
    with pytest.raises(ValueError, match="no scores"):
        analysis.analyse(_scores().iloc[:0])


def test_load_scores_reads_one_setting_of_a_database(published_db):
    """load_scores reads the database's snapshot with the filters given, one score per
    experiment, and the analysis of the published LogReg / AUC setting ranks the 32."""
    scores = analysis.load_scores(published_db, models="LogReg", scorings="AUC", origins="published")
    assert set(scores["model"]) == {"LogReg"} and set(scores["scoring"]) == {"AUC"}
    assert set(scores["tuning"]) == {"no"} and scores["dataset"].nunique() == 50
    assert not scores.duplicated(["dataset", "encoder"]).any()
    result = analysis.analyse(scores)
    assert len(result.ranking) == 32
    chart = result.cd_diagram()
    assert "Nemenyi" in str(chart.to_dict())
