"""Win rates and Elo ratings (Bradley-Terry, calibrated to a reference): hand-computed win rates, a
naive likelihood maximised by scipy, a naive bootstrap loop, and known strengths recovered from
simulated data."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from encbench.stats import consensus, consensus_table, elo, win_rate_matrix
from encbench.stats.elo import ELO_SCALE

# d1: A > B > C; d2: C > A = B; d3: B > A, C missing; d4: A = C > B
TOY = pd.DataFrame([
    ("d1", "A", 0.9), ("d1", "B", 0.8), ("d1", "C", 0.7),
    ("d2", "A", 0.7), ("d2", "B", 0.7), ("d2", "C", 0.9),
    ("d3", "A", 0.8), ("d3", "B", 0.9),
    ("d4", "A", 0.6), ("d4", "B", 0.5), ("d4", "C", 0.6),
], columns=["dataset", "encoder", "cv_score"])


def test_win_rates_of_the_toy_by_hand():
    rates = win_rate_matrix(TOY)
    # A-B meet on 4 datasets: A wins d1, d4, ties d2, loses d3 -> 2.5 / 4. A-C on 3: win, loss,
    # tie -> 1.5 / 3. B-C on 3: B wins d1 only -> 1 / 3.
    expected = pd.DataFrame([[np.nan, 2.5 / 4, 1.5 / 3], [1.5 / 4, np.nan, 1 / 3], [1.5 / 3, 2 / 3, np.nan]],
                            index=["A", "B", "C"], columns=["A", "B", "C"])
    np.testing.assert_allclose(rates.to_numpy(), expected.to_numpy())
    table = elo(TOY, reference="A", B=50).table.set_index("encoder")
    assert table.loc["A", "win_rate"] == pytest.approx(4 / 7)      # (2.5 + 1.5) of 7 matches
    assert table.loc["B", "win_rate"] == pytest.approx(2.5 / 7)
    assert table.loc["C", "win_rate"] == pytest.approx(3.5 / 6)
    assert table.loc["A", "matches"] == 7 and table.loc["C", "wins"] == 3.5


def _naive_elo(frame: pd.DataFrame, reference: str, prior_ties: float = 1.0) -> pd.Series:
    """Maximise the Bradley-Terry likelihood pair by pair with scipy (one virtual all-tie dataset
    per unit of prior), then calibrate."""
    wide = frame.pivot(index="dataset", columns="encoder", values="cv_score")
    names = list(wide.columns)
    wins = {}
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                both = wide[[a, b]].dropna()
                wins[i, j] = float((both[a] > both[b]).sum() + 0.5 * (both[a] == both[b]).sum()) + prior_ties / 2

    def negative_ll(beta):
        return sum(w * np.logaddexp(0.0, -(beta[i] - beta[j])) for (i, j), w in wins.items())

    beta = minimize(negative_ll, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-10}).x
    ref = names.index(reference)
    return pd.Series(1000 + ELO_SCALE * (beta - beta[ref]), index=names)


def _random(seed: int, n_datasets: int = 15, n_encoders: int = 5, missing: float = 0.2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(f"d{d}", f"E{e}", round(float(rng.normal(0.1 * e, 0.3)), 1))   # rounding makes ties
            for d in range(n_datasets) for e in range(n_encoders) if rng.random() > missing or e == 0]
    return pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ratings_equal_a_naive_maximum_likelihood(seed):
    frame = _random(seed)
    got = elo(frame, reference="E0", B=20).ratings
    naive = _naive_elo(frame, "E0")
    pd.testing.assert_series_equal(got.sort_index(), naive.sort_index(), check_names=False, atol=1e-4)
    assert got["E0"] == 1000.0


def test_the_toy_against_the_naive_fit_and_the_prior():
    for prior in (1.0, 0.25):
        got = elo(TOY, reference="B", B=10, prior_ties=prior).ratings
        pd.testing.assert_series_equal(got.sort_index(), _naive_elo(TOY, "B", prior).sort_index(),
                                       check_names=False, atol=1e-4)


def test_bootstrap_intervals_equal_a_naive_loop_over_resamples():
    frame = _random(3, n_datasets=12)
    B = 15
    result = elo(frame, reference="E0", B=B, seed=7, level=0.9)
    datasets = np.array(sorted(frame["dataset"].unique()))
    draws = np.random.default_rng(7).integers(0, len(datasets), size=(B, len(datasets)))
    boot = []
    for b in range(B):                     # each resample as its own frame: a dataset drawn twice plays twice
        parts = [frame[frame["dataset"] == datasets[k]].assign(dataset=f"r{pos}") for pos, k in enumerate(draws[b])]
        sample = pd.concat(parts)
        boot.append(_naive_elo(sample, "E0").reindex(result.ratings.index))
    boot = pd.DataFrame(boot)
    table = result.table.set_index("encoder")
    np.testing.assert_allclose(table["low"], boot.quantile(0.05).reindex(table.index), atol=1e-3)
    np.testing.assert_allclose(table["high"], boot.quantile(0.95).reindex(table.index), atol=1e-3)
    assert result.B == B and result.level == 0.9


def test_known_strengths_are_recovered_from_simulated_datasets():
    # Gumbel noise: score_i - score_j is logistic, so P(i beats j) = 1 / (1 + exp(beta_j - beta_i))
    # exactly, the Bradley-Terry model with Elo = 1000 + 400 / ln 10 (beta_i - beta_ref).
    rng = np.random.default_rng(42)
    beta = np.array([0.0, 0.5, -0.3, 1.0, 0.2])
    names = ["OH", "MT", "Drop", "CB", "Sum"]
    scores = beta + rng.gumbel(size=(2000, len(beta)))
    frame = pd.DataFrame([(f"d{d}", names[e], scores[d, e]) for d in range(2000) for e in range(len(beta))],
                         columns=["dataset", "encoder", "cv_score"])
    result = elo(frame, B=200)                        # reference OH
    true = pd.Series(1000 + ELO_SCALE * (beta - beta[0]), index=names)
    table = result.table.set_index("encoder")
    true = true.reindex(table.index)
    error = (table["elo"] - true).abs()
    assert error.max() < 20, error                    # standard errors are about 6 Elo points
    assert ((table["low"] <= true) & (true <= table["high"])).sum() >= 4
    assert list(table.index) == ["CB", "MT", "Sum", "OH", "Drop"]
    assert table.loc["OH", ["elo", "low", "high"]].tolist() == [1000.0, 1000.0, 1000.0]


def test_an_encoder_that_always_wins_gets_a_finite_rating():
    frame = pd.DataFrame([(f"d{d}", e, s) for d in range(10) for e, s in (("A", 0.9), ("B", 0.5 + 0.01 * d),
                                                                          ("C", 0.6 - 0.01 * d))],
                         columns=["dataset", "encoder", "cv_score"])
    weak = elo(frame, reference="B", B=20).ratings
    strong = elo(frame, reference="B", B=20, prior_ties=0.1).ratings
    assert np.isfinite(weak).all() and weak["A"] > weak.drop("A").max()
    assert strong["A"] > weak["A"]                    # a weaker prior lets the winner run further


def test_the_reference_only_shifts_the_ratings():
    frame = _random(5)
    a = elo(frame, reference="E0", B=30).table.set_index("encoder")
    b = elo(frame, reference="E3", B=30).table.set_index("encoder").reindex(a.index)
    shift = a.loc["E3", "elo"] - 1000.0
    np.testing.assert_allclose(b["elo"], a["elo"] - shift, atol=1e-8)
    assert b.loc["E3", "elo"] == 1000.0


def test_elo_strategy_ranks_by_the_fitted_ratings_and_ties_equal_encoders():
    frame = _random(6, n_datasets=20, missing=0.1)
    twin = frame[frame["encoder"] == "E2"].assign(encoder="E2bis")      # the same scores as E2
    frame = pd.concat([frame, twin], ignore_index=True)
    ranking = consensus(frame, "Elo")
    ratings = elo(frame, reference="E0", B=10).ratings
    assert ranking["E2"] == ranking["E2bis"]
    ordered = ratings.drop("E2bis").sort_values(ascending=False)
    assert [ranking[e] for e in ordered.index] == sorted(ranking.drop("E2bis"))
    assert list(ranking.drop("E2bis").sort_values(kind="stable").index) == list(ordered.index)


def test_elo_strategy_over_many_combinations_equals_each_one():
    frames = [_random(s).assign(model=m) for s, m in ((7, "DT"), (8, "LogReg"), (9, "kNN"))]
    frame = pd.concat(frames, ignore_index=True).assign(tuning="no", scoring="AUC")
    table = consensus_table(frame, ["Elo"])
    for model, part in frame.groupby("model"):
        got = table[table["model"] == model].set_index("encoder")["rank"]
        pd.testing.assert_series_equal(got, consensus(part, "Elo"), check_names=False)


def test_a_lower_is_better_metric_is_oriented():
    frame = _random(10).assign(scoring="RMSE")
    flipped = frame.assign(cv_score=-frame["cv_score"], scoring="AUC")
    pd.testing.assert_frame_equal(elo(frame, reference="E0", B=10).table, elo(flipped, reference="E0", B=10).table)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"reference": "GLMM"}, "reference encoder 'GLMM'"),
    ({"B": 0}, "B must be a positive integer"),
    ({"level": 1.5}, "level"),
    ({"prior_ties": 0.0}, "prior_ties"),
    ({"prior_ties": "x"}, "prior_ties"),
])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        elo(TOY, **{"reference": "A", **kwargs})
