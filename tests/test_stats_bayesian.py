"""Bayesian signed-rank test with a ROPE (Benavoli et al. 2017): against a naive O(n^2) reference on
the same draws, a hand-computed one-dataset posterior, and baycomp (test-only) within Monte-Carlo
tolerance."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.stats import BayesianResult, bayesian_signed_rank, signed_rank_posterior
from encbench.stats.bayesian import outcome_probabilities


def _naive(diff: np.ndarray, rope: float, prior: float, weights: np.ndarray) -> np.ndarray:
    """theta per draw from the full matrix of Walsh sums, as the paper writes it (an edge, up to
    rounding, counts half)."""
    z = np.concatenate([[0.0], diff])
    sums = z[:, None] + z[None, :]
    edge_a, edge_b = np.isclose(sums, 2 * rope, rtol=0, atol=1e-12), np.isclose(sums, -2 * rope, rtol=0, atol=1e-12)
    right = (sums > 2 * rope) * ~edge_a + 0.5 * edge_a
    left = (sums < -2 * rope) * ~edge_b + 0.5 * edge_b
    out = np.empty((len(weights), 3))
    for s, w in enumerate(weights):
        out[s, 0] = w @ right @ w
        out[s, 2] = w @ left @ w
    out[:, 1] = 1 - out[:, 0] - out[:, 2]
    return out


@pytest.mark.parametrize(("diff", "rope"), [
    (np.array([0.02, -0.01, 0.03, 0.0, 0.015, 0.02, -0.005]), 0.01),
    (np.array([0.0, 0.0, 0.01, -0.01, 0.02, 0.0]), 0.0),      # zeros and ties, no ROPE
    (np.round(np.random.default_rng(5).normal(0.004, 0.01, 25), 4), 0.0025),
])
def test_posterior_equals_the_naive_double_sum_on_the_same_draws(diff, rope):
    got = signed_rank_posterior(diff, rope, prior=0.5, n_samples=400, seed=11)
    # The weights the function draws: Exp(1) per value in sorted order, Gamma(1/2) for z_0 = 0,
    # normalised: Dirichlet(1/2, 1, ..., 1) on (z_0, z_1, ..., z_n).
    rng = np.random.default_rng(11)
    values = np.concatenate([[0.0], diff])
    order = np.argsort(values, kind="stable")
    raw = rng.standard_exponential(size=(400, values.size))
    raw[:, np.flatnonzero(order == 0)[0]] = rng.standard_gamma(0.5, size=400)
    weights = np.empty_like(raw)
    weights[:, order] = raw / raw.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, _naive(diff, rope, 0.5, weights), atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_one_dataset_by_hand():
    # One difference z = 0.05 beyond a ROPE of 0.01: with (w0, w1) ~ Dirichlet(s, 1) only the
    # prior's pair (z0 + z0 = 0) lies in the ROPE, so theta_rope = w0^2 and theta_A = 1 - w0^2.
    # w0 ~ Beta(1/2, 1): E[w0^2] = s / (s + 2) = 0.2, and A is the most probable outcome when
    # w0^2 < 1/2, with probability P(w0 < 2^-1/2) = (2^-1/2)^(1/2) = 2^-1/4 = 0.8409.
    samples = signed_rank_posterior([0.05], 0.01, prior=0.5, n_samples=200_000, seed=0)
    assert samples[:, 2].max() == 0.0
    se = samples[:, 1].std() / np.sqrt(len(samples))
    assert samples[:, 1].mean() == pytest.approx(0.2, abs=4 * se)
    p_a, p_rope, p_b = outcome_probabilities(samples)
    assert p_a == pytest.approx(2 ** -0.25, abs=4 * np.sqrt(0.16 / 200_000)) and p_b == 0.0
    assert p_a + p_rope == pytest.approx(1.0)


def test_ties_for_the_largest_are_split():
    assert outcome_probabilities(np.array([[0.5, 0.0, 0.5], [1.0, 0.0, 0.0]])) == (0.75, 0.0, 0.25)
    # every difference zero, no ROPE: A and B are exchangeable, each draw splits 1/2 - 1/2
    p = outcome_probabilities(signed_rank_posterior(np.zeros(8), 0.0, n_samples=100))
    assert p == (0.5, 0.0, 0.5)


CASES = [  # (n datasets, true shift of A over B, noise, rope)
    (20, 0.005, 0.01, 0.01),
    (30, 0.02, 0.01, 0.01),
    (12, -0.01, 0.01, 0.005),
    (40, 0.0, 0.01, 0.0),
    (25, 0.004, 0.01, 0.0),
    (15, 0.008, 0.004, 0.01),   # the ROPE edge matters: P(equivalent) and P(A better) both sizable
]


@pytest.mark.parametrize(("n", "shift", "noise", "rope"), CASES)
def test_agrees_with_baycomp_within_monte_carlo_tolerance(n, shift, noise, rope):
    from baycomp import SignedRankTest

    rng = np.random.default_rng(n)
    x = rng.uniform(0.7, 0.9, n)
    y = x - shift + rng.normal(0, noise, n)
    draws = 50_000
    mine = signed_rank_posterior(x - y, rope, prior=0.5, n_samples=draws, seed=1)
    theirs = SignedRankTest.sample(x, y, rope, prior=0.5, nsamples=draws, random_state=2)
    # baycomp's columns are (left = x better, rope, right = y better): the same order as ours
    for k in range(3):
        se = np.sqrt(mine[:, k].var() / draws + theirs[:, k].var() / draws)
        assert abs(mine[:, k].mean() - theirs[:, k].mean()) <= 4 * se + 1e-9, k
    p_mine = np.array(outcome_probabilities(mine))
    winners = np.bincount(np.argmax(theirs, axis=1), minlength=3) / draws
    se = np.sqrt(p_mine * (1 - p_mine) / draws + winners * (1 - winners) / draws)
    np.testing.assert_array_less(np.abs(p_mine - winners), 4 * se + 1e-9)


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    base = rng.uniform(0.6, 0.9, 24)
    rows = []
    for d in range(24):
        for encoder, shift in (("OH", 0.0), ("MT", 0.03), ("CB", 0.001)):
            rows.append(("AUC", str(d), encoder, base[d] + shift + rng.normal(0, 0.005)))
    frame = pd.DataFrame(rows, columns=["scoring", "dataset", "encoder", "cv_score"])
    return frame[~((frame["encoder"] == "CB") & frame["dataset"].isin(["0", "1", "2"]))]


def test_result_from_scores_uses_the_shared_datasets_and_is_seeded():
    frame = _frame()
    result = bayesian_signed_rank(frame, "MT", "OH", rope=0.01)
    assert isinstance(result, BayesianResult) and result.n_datasets == 24 and result.seed == 0
    assert result.p_a_better > 0.99                          # MT is 0.03 AUC better everywhere
    assert result.p_a_better + result.p_equivalent + result.p_b_better == pytest.approx(1.0)
    near = bayesian_signed_rank(frame, "CB", "OH", rope=0.01)
    assert near.n_datasets == 21 and near.p_equivalent > 0.99   # 0.001 apart: practically equivalent
    wide = frame.pivot(index="dataset", columns="encoder", values="cv_score").dropna()
    direct = signed_rank_posterior((wide["CB"] - wide["OH"]).to_numpy(), 0.01, n_samples=50_000, seed=0)
    np.testing.assert_array_equal(near.samples, direct)
    again = bayesian_signed_rank(frame, "CB", "OH", rope=0.01)
    np.testing.assert_array_equal(near.samples, again.samples)
    table = near.table
    assert table.loc[0, "n_samples"] == 50_000 and table.loc[0, "p_equivalent"] == near.p_equivalent
    frame_draws = near.sample_frame(100)
    assert list(frame_draws.columns) == ["theta_a", "theta_rope", "theta_b", "outcome"] and len(frame_draws) == 100
    assert set(frame_draws["outcome"]) <= {"A better", "equivalent", "B better"}


def test_a_lower_is_better_metric_is_oriented():
    frame = _frame()
    errors = frame.assign(scoring="RMSE", cv_score=1 - frame["cv_score"])  # MT now has the lower error
    result = bayesian_signed_rank(errors, "MT", "OH", rope=0.01)
    assert result.p_a_better > 0.99                                        # lower RMSE is better


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"encoder_a": "OH", "encoder_b": "OH"}, "two different"),
    ({"encoder_a": "OH", "encoder_b": "GLMM"}, "'GLMM'"),
    ({"encoder_a": "OH", "encoder_b": "MT", "rope": -0.1}, "rope"),
    ({"encoder_a": "OH", "encoder_b": "MT", "prior": 0}, "prior"),
    ({"encoder_a": "OH", "encoder_b": "MT", "n_samples": 0}, "n_samples"),
])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bayesian_signed_rank(_frame(), **kwargs)


def test_encoders_without_a_shared_dataset_are_refused():
    frame = pd.DataFrame({"dataset": ["a", "b"], "encoder": ["OH", "MT"], "cv_score": [0.8, 0.7]})
    with pytest.raises(ValueError, match="share no dataset"):
        bayesian_signed_rank(frame, "OH", "MT")
    with pytest.raises(ValueError, match="finite"):
        signed_rank_posterior([0.1, np.nan])
