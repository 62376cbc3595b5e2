"""Exact Kemeny-Young: brute force on small instances (ties, missing values), published data."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from encbench.stats import consensus, kemeny
from encbench.stats.kemeny import kemeny_objective, kemeny_weights
from encbench.store.published import load_published_results


def _naive_weights(ranks: np.ndarray) -> np.ndarray:
    """c_ij summed voter by voter with explicit loops (DESIGN.md section 7)."""
    n_voters, n = ranks.shape
    any_missing = np.isnan(ranks).any()
    c = np.zeros((n, n))
    for v in range(n_voters):
        present = [i for i in range(n) if not np.isnan(ranks[v, i])]
        w = len(present)
        for i in present:
            for j in present:
                if i == j:
                    continue
                y = 1.0 if ranks[v, i] <= ranks[v, j] else -1.0
                c[i, j] += y / (w * (w - 1)) if any_missing else y
    return c


def _weak_orders(n: int):
    """Every weak order on n items as a level vector (0 = best), each exactly once."""
    for levels in itertools.product(range(n), repeat=n):
        used = set(levels)
        if used == set(range(len(used))):
            yield np.array(levels)


def _brute_force(c: np.ndarray) -> float:
    n = c.shape[0]
    levels = np.array(list(_weak_orders(n)))  # (W, n)
    x = (levels[:, :, None] <= levels[:, None, :]).astype(float)
    off = ~np.eye(n, dtype=bool)
    return float(((2 * x - 1) * c)[:, off].sum(axis=1).max())


def _scores_from_ranks(ranks: np.ndarray) -> pd.DataFrame:
    rows = [(f"v{v}", f"e{i}", -ranks[v, i]) for v in range(ranks.shape[0])
            for i in range(ranks.shape[1]) if not np.isnan(ranks[v, i])]
    return pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])


def _relation(ranking: pd.Series, names: list[str]) -> np.ndarray:
    r = ranking.reindex(names).to_numpy()
    return (r[:, None] <= r[None, :]).astype(int)


def test_weak_order_count_is_fubini():
    assert [sum(1 for _ in _weak_orders(n)) for n in range(1, 6)] == [1, 3, 13, 75, 541]


def _check_against_brute_force(ranks: np.ndarray):
    c = _naive_weights(ranks)
    np.testing.assert_allclose(kemeny_weights(ranks), c, atol=1e-12)
    result = kemeny(_scores_from_ranks(ranks))
    names = [f"e{i}" for i in range(ranks.shape[1])]
    assert result.optimal
    assert result.objective == pytest.approx(_brute_force(c), abs=1e-9)
    # The returned ranking attains the reported objective.
    assert kemeny_objective(_relation(result.ranking, names), c) == pytest.approx(result.objective, abs=1e-9)
    assert set(result.ranking) == set(range(1, result.ranking.max() + 1))
    return result


@pytest.mark.parametrize("seed", range(30))
def test_optimal_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 2 + seed % 5  # 2..6 encoders
    n_voters = int(rng.integers(1, 8))
    ranks = rng.integers(1, n + 1, size=(n_voters, n)).astype(float)  # ties are common
    if seed % 2 == 0:  # half of the instances have missing results
        ranks[rng.random(ranks.shape) < 0.3] = np.nan
        for v in range(n_voters):
            if np.isnan(ranks[v]).all():
                ranks[v, rng.integers(0, n)] = 1.0
        # Every encoder must be ranked by someone to exist in the input.
        for i in range(n):
            if np.isnan(ranks[:, i]).all():
                ranks[rng.integers(0, n_voters), i] = 1.0
    _check_against_brute_force(ranks)


def test_fractional_relaxation_goes_through_integer_solves():
    # Found by search: 6 encoders, 5 voters with ties and missing results whose LP relaxation
    # stays fractional after every violated transitivity row is added.
    rng = np.random.default_rng(18)
    n_voters = int(rng.integers(2, 6))
    ranks = rng.integers(1, 4, size=(n_voters, 6)).astype(float)
    ranks[rng.random(ranks.shape) < 0.3] = np.nan
    result = _check_against_brute_force(ranks)
    assert result.used_mip


def test_hand_computed_three_voters():
    # Voters: A>B>C, A>B>C, B>C>A. Majorities A>B (2:1), B>C (3:0), A>C (2:1).
    ranks = np.array([[1, 2, 3], [1, 2, 3], [3, 1, 2]], dtype=float)
    result = kemeny(_scores_from_ranks(ranks))
    assert result.ranking.to_dict() == {"e0": 1, "e1": 2, "e2": 3}
    # c_AB = 1, c_AC = 1, c_BC = 3 (and negatives): objective 2 * (1 + 1 + 3) = 10.
    assert result.objective == pytest.approx(10.0)


def test_unanimous_ties_are_kept():
    ranks = np.array([[1, 1, 2], [1, 1, 2]], dtype=float)
    result = kemeny(_scores_from_ranks(ranks))
    assert result.ranking.to_dict() == {"e0": 1, "e1": 1, "e2": 2}
    assert consensus(_scores_from_ranks(ranks), "R-Kem").to_dict() == result.ranking.to_dict()


def test_single_encoder():
    frame = pd.DataFrame({"dataset": ["a", "b"], "encoder": ["X", "X"], "cv_score": [0.1, 0.2]})
    result = kemeny(frame)
    assert result.ranking.to_dict() == {"X": 1} and result.objective == 0.0


def test_all_published_combinations_are_solved_to_optimality():
    frame = load_published_results()
    total = 0.0
    for key, combo in frame.groupby(["model", "tuning", "scoring"]):
        result = kemeny(combo)
        assert result.optimal, key
        assert len(result.ranking) == combo.encoder.nunique()
        total += result.solve_time
        # Sanity: the optimum is at least as good as the R-M ranking read as a weak order.
        names = sorted(combo.encoder.unique())
        dense = combo.assign(r=combo.groupby("dataset").cv_score.rank(method="dense", ascending=False))
        ranks = dense.pivot(index="dataset", columns="encoder", values="r")[names].to_numpy()
        c = kemeny_weights(ranks)
        assert result.objective >= kemeny_objective(_relation(consensus(combo, "R-M"), names), c) - 1e-9
        assert result.objective == pytest.approx(kemeny_objective(_relation(result.ranking, names), c))
    assert total < 30  # target is 5 s on an idle machine; this only guards against blow-ups


def test_time_limit_is_validated():
    frame = _scores_from_ranks(np.array([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="time_limit .*: got 0"):
        kemeny(frame, time_limit=0)


def test_agreement_normalises_the_objective_with_and_without_missing_encoders():
    """Issue 11: objective 12.49 in one combination and 8422 in another, unexplained."""
    from encbench.stats.kemeny import kemeny_max_objective

    rng = np.random.default_rng(3)
    rows = [(f"d{d}", f"e{e}", float(rng.uniform())) for d in range(6) for e in range(5)]
    complete = pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])
    sparse = complete.drop(index=[0, 7]).reset_index(drop=True)
    for frame, bound in ((complete, 6 * 5 * 4), (sparse, 6)):
        result = kemeny(frame)
        assert result.max_objective == bound
        assert -1.0 <= result.agreement <= 1.0
        assert result.agreement == pytest.approx(result.objective / bound)
    # voters that all agree: the consensus reaches the bound
    same = complete.assign(cv_score=complete["encoder"].str[1:].astype(float))
    assert kemeny(same).agreement == pytest.approx(1.0)
    assert kemeny_max_objective(np.array([[1.0, 2.0, np.nan], [1.0, np.nan, np.nan]])) == 1.0
