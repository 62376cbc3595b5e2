"""MT, WoE, ME_m, PBMT_t, DMT_n and CB against hand-computed values and naive references."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from encbench.encoders import (
    CatBoostEncoder, DiscretizedMeanTargetEncoder, MeanEstimateEncoder, MeanTargetEncoder,
    PreBinnedMeanTargetEncoder, WoEEncoder,
)
from encbench.encoders import make_encoder
from encbench.encoders.target import discretize, ordered_statistics, prebin_levels

# a: x -> y = 1, 0 ; y -> 1, 1, 0 ; z -> 1 (seen once). prior = 4/6.
X = pd.DataFrame({"a": ["x", "x", "y", "y", "y", "z"]})
Y = np.array([1, 0, 1, 1, 0, 1])
TEST = pd.DataFrame({"a": ["x", "y", "z", "unseen", np.nan]})
PRIOR = 4 / 6


def test_mean_target_hand_computed():
    out = MeanTargetEncoder().fit(X, Y).transform(TEST)["a"].to_numpy()
    np.testing.assert_allclose(out, [1 / 2, 2 / 3, 1, PRIOR, PRIOR])


@pytest.mark.parametrize(
    "m, expected",
    [
        (0.1, [(1 + 0.1 * PRIOR) / 2.1, (2 + 0.1 * PRIOR) / 3.1, (1 + 0.1 * PRIOR) / 1.1]),
        (1, [5 / 9, 2 / 3, 5 / 6]),
        (10, [23 / 36, (2 + 10 * PRIOR) / 13, (1 + 10 * PRIOR) / 11]),
    ],
)
def test_mean_estimate_formula(m, expected):
    out = MeanEstimateEncoder(m=m).fit(X, Y).transform(TEST)["a"].to_numpy()
    np.testing.assert_allclose(out, expected + [PRIOR, PRIOR])


def test_mean_estimate_with_m_zero_is_mean_target():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.choice(list("abcdef"), 100)})
    y = rng.integers(0, 2, 100)
    pd.testing.assert_frame_equal(
        MeanEstimateEncoder(m=0).fit_transform(frame, y), MeanTargetEncoder().fit_transform(frame, y)
    )


def test_weight_of_evidence_hand_computed():
    # P = 4 positives, N = 2 negatives, regularisation 1:
    # x: log((1+1)/(4+2) / ((1+1)/(2+2))) = log(2/3); y: log((3/6) / (2/4)) = 0;
    # z is seen once -> 0 (category_encoders' rule); unseen and missing -> 0.
    out = WoEEncoder().fit(X, Y).transform(TEST)["a"].to_numpy()
    np.testing.assert_allclose(out, [np.log(2 / 3), 0.0, 0.0, 0.0, 0.0], atol=1e-15)


def test_weight_of_evidence_needs_a_binary_target():
    with pytest.raises(ValueError, match="0/1"):
        WoEEncoder().fit(X, np.array([0, 1, 2, 0, 1, 0]))


def test_weight_of_evidence_equals_category_encoders():
    ce = pytest.importorskip("category_encoders")
    rng = np.random.default_rng(3)
    train = pd.DataFrame({"a": rng.choice([f"l{i}" for i in range(12)], 300),
                          "b": rng.choice(["u", "v"], 300)})
    y = (rng.random(300) < 0.3).astype(int)
    test = pd.DataFrame({"a": rng.choice([f"l{i}" for i in range(15)], 40), "b": ["u"] * 40})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = ce.WOEEncoder().fit(train, y)
        expected = reference.transform(test).to_numpy(dtype=float)
    np.testing.assert_allclose(WoEEncoder().fit(train, y).transform(test).to_numpy(), expected)


# -- PBMT ----------------------------------------------------------------------------------


def _partition(bins):
    return sorted(sorted(np.flatnonzero(bins == b).tolist()) for b in np.unique(bins))


@pytest.mark.parametrize(
    "counts, threshold, partition",
    [
        # 50, 30 and 10 reach 0.1 alone; 2 + 3 + 5 = 0.1 is the last bin
        ([50, 30, 10, 5, 3, 2], 0.1, [[0], [1], [2], [3, 4, 5]]),
        # after 50 and 30, the rest (0.2) is below 2t: one last bin
        ([50, 30, 10, 5, 3, 2], 0.2, [[0], [1], [2, 3, 4, 5]]),
        ([50, 30, 10, 5, 3, 2], 0.001, [[0], [1], [2], [3], [4], [5]]),
        ([50, 30, 10, 5, 3, 2], 0.5, [[0], [1, 2, 3, 4, 5]]),
        ([50, 30, 10, 5, 3, 2], 0.6, [[0, 1, 2, 3, 4, 5]]),
        # 37 is completed by the smallest level that suffices (20, skipping 22 and 21); the
        # rest (0.43) is below 0.45, so everything is one bin
        ([20, 21, 22, 37], 0.45, [[0, 1, 2, 3]]),
        # 0.25 + 0.25: the most frequent (last in level order) pairs with the rarest
        ([5, 5, 5, 5], 0.5, [[0, 3], [1, 2]]),
        ([7], 0.1, [[0]]),
        # greedy from rare to frequent finds 4 bins here; the maximum is 5:
        # {44}, {23}, {16}, {10, 5} (10 completed by the rarest 5), {6, 5}
        ([44, 5, 6, 23, 5, 10, 16], 0.1, [[0], [1, 5], [2, 4], [3], [6]]),
    ],
)
def test_prebinning_rule_hand_computed(counts, threshold, partition):
    assert _partition(prebin_levels(np.array(counts), threshold)) == partition


def _naive_prebinning(counts, threshold):
    """The binning rule written as a plain loop over Python lists (naive reference)."""
    remaining = sorted(range(len(counts)), key=lambda level: (counts[level], level))
    target, tolerance = threshold * sum(counts), 1e-10 * sum(counts)
    bins = []
    while True:
        sizes = [counts[level] for level in remaining]
        if len(remaining) == 1 or sum(sizes) < 2 * target:
            return bins + [sorted(remaining)]
        chosen, filled = [len(remaining) - 1], sizes[-1]
        for i in range(len(remaining) - 2, -1, -1):
            if filled + tolerance >= target:
                break
            if (i == 0 or filled + sizes[i] + tolerance < target
                    or filled + sum(sizes[:i]) + tolerance < target):
                chosen.append(i)
                filled += sizes[i]
        if sum(sizes) - filled < target:
            return bins + [sorted(remaining)]
        bins.append(sorted(remaining[i] for i in chosen))
        remaining = [level for i, level in enumerate(remaining) if i not in chosen]


def _brute_force_max_bins(counts, threshold):
    """Largest number of groups of a partition of the levels with every group >= threshold."""
    total, best = sum(counts), 1
    n = len(counts)
    for labels in itertools.product(range(n), repeat=n):
        groups = {}
        for level, label in enumerate(labels):
            groups[label] = groups.get(label, 0) + counts[level]
        if all(g >= threshold * total - 1e-9 for g in groups.values()):
            best = max(best, len(groups))
    return best


def test_prebinning_every_bin_reaches_the_threshold_and_matches_the_naive_rule():
    rng = np.random.default_rng(11)
    for _ in range(300):
        counts = rng.integers(1, int(rng.choice([5, 60, 1000])), rng.integers(1, 30))
        threshold = float(rng.choice([0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5]))
        bins = prebin_levels(counts, threshold)
        share = np.bincount(bins, weights=counts) / counts.sum()
        assert (share >= threshold - 1e-9).all() or len(share) == 1
        assert _partition(bins) == sorted(_naive_prebinning(counts.tolist(), threshold))


def test_prebinning_reaches_the_maximum_number_of_bins_on_small_cases():
    rng = np.random.default_rng(5)
    for _ in range(60):
        counts = rng.integers(1, 60, rng.integers(2, 7)).tolist()
        threshold = float(rng.choice([0.05, 0.1, 0.2, 0.3]))
        assert prebin_levels(np.array(counts), threshold).max() + 1 == _brute_force_max_bins(
            counts, threshold
        )


def test_prebinning_is_fast_with_thousands_of_levels():
    counts = np.random.default_rng(0).integers(1, 40, 8000)
    bins = prebin_levels(counts, 0.001)
    assert (np.bincount(bins, weights=counts) / counts.sum() >= 0.001 - 1e-9).all()


def test_pre_binned_mean_target_encodes_bins():
    # counts a:6, b:2, c:1, d:1 (N = 10); t = 0.2: c + d = 0.2 -> bin, b = 0.2 -> bin, a -> bin
    frame = pd.DataFrame({"a": list("aaaaaabbcd")})
    y = np.array([1, 1, 1, 0, 0, 0, 1, 1, 0, 1])
    encoder = PreBinnedMeanTargetEncoder(threshold=0.2).fit(frame, y)
    out = encoder.transform(pd.DataFrame({"a": ["a", "b", "c", "d", "e"]}))["a"].to_numpy()
    np.testing.assert_allclose(out, [0.5, 1.0, 0.5, 0.5, 0.6])  # c, d share a bin; e: prior
    # t = 0.3: c + d + b = 0.4 -> one bin, a alone
    out = PreBinnedMeanTargetEncoder(threshold=0.3).fit(frame, y).transform(frame)["a"]
    np.testing.assert_allclose(out.to_numpy()[6:], [0.75] * 4)


# -- DMT -----------------------------------------------------------------------------------

# level means: A 0, B 0.25, C 0.5, D 0.8, E 1.0; prior 9/19
DMT_X = pd.DataFrame({"a": list("AAAA" "BBBB" "CCCC" "DDDDD" "EE")})
DMT_Y = np.array([0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1])


@pytest.mark.parametrize(
    "n_bins, expected",
    [
        # MT: A 0, B 0.25, C 0.5, D 0.8, E 1.0; prior 9/19 = 0.474 (unseen, "prior" default)
        (2, [0.0, 0.0, 0.5, 0.5, 1.0, 0.0]),
        (5, [0.0, 0.2, 0.4, 0.8, 1.0, 0.4]),  # 0.8 sits on a boundary: lower bound 0.8
        (10, [0.0, 0.2, 0.5, 0.8, 1.0, 0.4]),  # the maximum keeps its own value (the study's)
    ],
)
def test_discretized_mean_target_lower_bounds(n_bins, expected):
    encoder = DiscretizedMeanTargetEncoder(n_bins=n_bins).fit(DMT_X, DMT_Y)
    out = encoder.transform(pd.DataFrame({"a": list("ABCDE") + ["unseen"]}))["a"].to_numpy()
    np.testing.assert_allclose(out, expected, atol=1e-12)


def test_dmt_follows_the_study_minmaxbins_rule_and_unseen_is_minus_one():
    # Study (Discretized(how="minmaxbins")): v -> m + (M - m) floor(n (v - m) / (M - m)) / n.
    # MT values 0.2, 0.3, 0.6 (m = 0.2, M = 0.6), n = 2: 0.3 -> floor(0.5) = 0 -> 0.2;
    # 0.6 -> floor(2) / 2 = 1 -> 0.6 (the maximum is not merged into [0.4, 0.6)).
    X = pd.DataFrame({"a": ["p"] * 5 + ["q"] * 10 + ["r"] * 5})
    y = np.array([1, 0, 0, 0, 0] + [1, 1, 1, 0, 0, 0, 0, 0, 0, 0] + [1, 1, 1, 0, 0])
    encoder = make_encoder("DMT_2").fit(X, y)
    out = encoder.transform(pd.DataFrame({"a": ["p", "q", "r", "new"]}))["a"].to_numpy()
    np.testing.assert_allclose(out, [0.2, 0.2, 0.6, -1.0], atol=1e-12)
    # m == M: every level becomes 1.0 (not the common value), unseen stays -1
    same = make_encoder("DMT_5").fit(pd.DataFrame({"a": list("aabb")}), np.array([1, 0, 1, 0]))
    np.testing.assert_array_equal(
        same.transform(pd.DataFrame({"a": ["a", "b", "c"]}))["a"].to_numpy(), [1.0, 1.0, -1.0])


def test_discretize_against_a_naive_reference():
    rng = np.random.default_rng(2)
    values = rng.random(500)
    low, high, n = values.min(), values.max(), 7
    width = (high - low) / n
    naive = np.array([high if v == high else low + int((v - low) // width) * width
                      for v in values])
    got = discretize(values, n)
    # away from boundaries the two agree (up to rounding)
    np.testing.assert_allclose(got, naive, atol=1e-12)
    assert got[values.argmax()] == high and got[values.argmin()] == low
    assert len(set(np.round(got, 12))) <= n + 1
    np.testing.assert_array_equal(discretize(np.array([0.3, 0.3]), 5), [1.0, 1.0])


def test_study_target_encoders_encode_unseen_levels_as_minus_one():
    # The study's own target encoders (Encoder base class default=-1): MT, ME, PBMT, GLMM.
    X = pd.DataFrame({"a": list("aabbb")})
    y = np.array([1, 0, 1, 1, 0])
    test = pd.DataFrame({"a": ["a", "zzz"]})
    for name in ("MT", "ME_1", "PBMT_0.01", "GLMM", "DMT_5"):
        out = make_encoder(name).fit(X, y).transform(test)["a"].to_numpy()
        assert out[1] == -1.0, name
        assert out[0] != -1.0, name
    # the library default stays the prior: mean(y) = 0.6
    assert MeanTargetEncoder().fit(X, y).transform(test)["a"].iloc[1] == pytest.approx(0.6)
    assert MeanTargetEncoder(unknown_value=0.0).fit(X, y).transform(test)["a"].iloc[1] == 0.0
    with pytest.raises(ValueError, match="unknown_value"):
        MeanTargetEncoder(unknown_value="median").fit(X, y)


# -- CatBoost ------------------------------------------------------------------------------


def _naive_ordered_encoding(codes, y, order, a, prior):
    out = np.empty(len(codes))
    sums, counts = {}, {}
    for row in order:
        level = codes[row]
        out[row] = (sums.get(level, 0.0) + a * prior) / (counts.get(level, 0) + a)
        sums[level] = sums.get(level, 0.0) + y[row]
        counts[level] = counts.get(level, 0) + 1
    return out


def test_catboost_ordered_statistics_on_its_permutation():
    frame = pd.DataFrame({"a": ["x", "x", "x", "y"]})
    y = np.array([1, 0, 1, 1])
    encoder = CatBoostEncoder(shuffle=True, random_state=4)
    out = encoder.fit_transform(frame, y)["a"].to_numpy()
    order = encoder.permutation_
    assert sorted(order) == [0, 1, 2, 3]
    prior = 0.75
    x_rows = [r for r in order if r != 3]  # the x rows in permutation order
    # first x row: (0 + prior) / 1; second: (y_first + prior) / 2; third: (y1 + y2 + prior) / 3
    assert out[x_rows[0]] == pytest.approx(prior)
    assert out[x_rows[1]] == pytest.approx((y[x_rows[0]] + prior) / 2)
    assert out[x_rows[2]] == pytest.approx((y[x_rows[0]] + y[x_rows[1]] + prior) / 3)
    assert out[3] == pytest.approx(prior)  # y's only row has no earlier row
    # test data uses all training rows; unseen -> prior
    test = encoder.transform(pd.DataFrame({"a": ["x", "y", "z"]}))["a"].to_numpy()
    np.testing.assert_allclose(test, [(2 + prior) / 4, (1 + prior) / 2, prior])


def test_catboost_matches_naive_loop_and_category_encoders_on_permuted_rows():
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"a": rng.choice(list("abcdefg"), 300), "b": rng.choice(["u", "v"], 300)})
    y = rng.integers(0, 2, 300)
    encoder = CatBoostEncoder(shuffle=True, random_state=np.random.RandomState(123))
    out = encoder.fit_transform(frame, y)
    order = encoder.permutation_
    prior = y.mean()
    for column in frame.columns:
        codes = frame[column].to_numpy()
        np.testing.assert_allclose(out[column], _naive_ordered_encoding(codes, y, order, 1.0, prior))
    ce = pytest.importorskip("category_encoders")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = ce.CatBoostEncoder().fit_transform(frame.iloc[order], y[order])
    np.testing.assert_allclose(out.to_numpy()[order], reference.to_numpy(dtype=float))


def test_registry_cb_follows_the_row_order_as_the_study():
    # category_encoders' CatBoostEncoder (the study's CB) in the data's row order, by hand:
    # prior = 3/5; rows x, x, y, x, y with y = 1, 0, 1, 1, 0
    frame = pd.DataFrame({"a": ["x", "x", "y", "x", "y"]})
    y = np.array([1, 0, 1, 1, 0])
    prior = 0.6
    out = make_encoder("CB").fit_transform(frame, y)["a"].to_numpy()
    expected = [prior / 1, (1 + prior) / 2, prior / 1, (1 + 0 + prior) / 3, (1 + prior) / 2]
    np.testing.assert_allclose(out, expected)
    ce = pytest.importorskip("category_encoders")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = ce.CatBoostEncoder().fit_transform(frame, pd.Series(y))
    np.testing.assert_allclose(out, reference["a"].to_numpy(dtype=float))


def test_catboost_with_the_plus_one_over_plus_two_variant():
    # (a_ij + 1) / (b_ij + 2) of the CatBoost benchmarks: a = 2, prior = 0.5
    frame = pd.DataFrame({"a": ["x", "x", "y"]})
    y = np.array([1, 1, 0])
    encoder = CatBoostEncoder(a=2, prior=0.5, shuffle=True, random_state=0)
    out = encoder.fit_transform(frame, y)["a"].to_numpy()
    first, second = [r for r in encoder.permutation_ if r != 2]
    np.testing.assert_allclose(out[[first, second, 2]], [1 / 2, 2 / 3, 1 / 2])
    test = encoder.transform(pd.DataFrame({"a": ["x", "y", "new"]}))["a"].to_numpy()
    np.testing.assert_allclose(test, [3 / 4, 1 / 3, 1 / 2])


def test_catboost_fit_transform_differs_from_fit_then_transform():
    frame = pd.DataFrame({"a": ["x"] * 10})
    y = np.arange(10) % 2
    encoder = CatBoostEncoder(shuffle=True, random_state=0)
    ordered = encoder.fit_transform(frame, y)
    full = encoder.transform(frame)
    assert ordered["a"].nunique() > 1 and full["a"].nunique() == 1


def test_ordered_statistics_vectorised_equals_loop():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 5, 200)
    y = rng.random(200)
    sums, counts = ordered_statistics(codes, y)
    for row in range(200):
        earlier = codes[:row] == codes[row]
        assert counts[row] == earlier.sum()
        assert sums[row] == pytest.approx(y[:row][earlier].sum())
