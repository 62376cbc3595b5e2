"""Pairwise Wilcoxon signed-rank tests with Holm's correction."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

from encbench.stats import holm, wilcoxon_pairs


def _scores(seed: int = 0, n_datasets: int = 20) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.6, 0.9, n_datasets)
    rows = []
    for d in range(n_datasets):
        for encoder, shift in (("OH", 0.0), ("MT", 0.02), ("CB", 0.021), ("Drop", -0.05)):
            rows.append((str(d), encoder, base[d] + shift + rng.normal(0, 0.01)))
    frame = pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])
    return frame[~((frame["encoder"] == "CB") & (frame["dataset"].isin(["0", "1"])))]   # CB misses 2


def test_one_pair_matches_scipy_on_the_shared_datasets():
    frame = _scores()
    result = wilcoxon_pairs(frame, pairs=[("MT", "CB")])
    row = result.table.iloc[0]
    wide = frame.pivot(index="dataset", columns="encoder", values="cv_score").dropna(subset=["MT", "CB"])
    diff = wide["MT"] - wide["CB"]
    expected = wilcoxon(diff)
    assert row["n_datasets"] == 18 and row["wins_a"] + row["wins_b"] + row["ties"] == 18
    assert row["wins_a"] == (diff > 0).sum() and row["median_difference"] == pytest.approx(diff.median())
    assert row["p_value"] == pytest.approx(expected.pvalue) and row["statistic"] == pytest.approx(expected.statistic)
    assert row["p_holm"] == pytest.approx(row["p_value"])            # one pair: nothing to correct


def test_several_pairs_are_holm_corrected():
    frame = _scores()
    result = wilcoxon_pairs(frame, encoders=["OH", "MT", "Drop"], alpha=0.05)
    table = result.table
    assert list(zip(table["encoder_a"], table["encoder_b"])) == [("OH", "MT"), ("OH", "Drop"), ("MT", "Drop")]
    p = table["p_value"].to_numpy()
    order = np.argsort(p)
    naive = np.empty(3)
    running = 0.0
    for i, j in enumerate(order):                                   # Holm step-down by hand
        running = max(running, min(1.0, (3 - i) * p[j]))
        naive[j] = running
    np.testing.assert_allclose(table["p_holm"], naive)
    assert (table["p_holm"] >= table["p_value"]).all()
    assert table.loc[table["encoder_b"] == "Drop", "significant"].all()   # Drop is clearly worse


def test_holm_by_hand_and_nan():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    out = holm([0.02, np.nan, 0.5])
    assert np.isnan(out[1]) and out[0] == pytest.approx(0.04) and out[2] == pytest.approx(0.5)


def test_identical_encoders_give_p_one():
    frame = _scores()
    same = pd.concat([frame, frame[frame["encoder"] == "OH"].assign(encoder="Ord")])
    row = wilcoxon_pairs(same, pairs=[("OH", "Ord")]).table.iloc[0]
    assert row["p_value"] == 1.0 and row["ties"] == row["n_datasets"] == 20 and not row["significant"]


@pytest.mark.parametrize("kwargs, match", [
    ({"pairs": [("OH", "OH")]}, "two different"),
    ({"pairs": [("OH", "GLMM")]}, "'GLMM'"),
    ({"encoders": ["OH"]}, "at least one pair"),
    ({}, "exactly one"),
    ({"encoders": ["OH", "MT"], "alpha": 1.5}, "alpha"),
])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        wilcoxon_pairs(_scores(), **kwargs)


# --- effect sizes beside the tests ---------------------------------------------------------

def _naive_rank_biserial(diff: np.ndarray) -> float:
    from scipy.stats import rankdata

    d = diff[diff != 0]
    if d.size == 0:
        return 0.0
    ranks = rankdata(np.abs(d))
    plus, minus = ranks[d > 0].sum(), ranks[d < 0].sum()
    return (plus - minus) / (plus + minus)


def test_median_interval_by_hand_and_its_coverage_formula():
    from encbench.stats.pairwise import median_interval

    d = np.array([0.5, -0.1, 0.3, 0.2, 0.9, 0.0, 0.4, -0.3, 0.7, 0.1])
    # n = 10: P(Bin(10, 1/2) <= 1) = 11/1024, so [d_(2), d_(9)] covers 1 - 22/1024 = 97.9% >= 95%,
    # and [d_(3), d_(8)] only 1 - 2 * 56/1024 = 89.1%.
    s = np.sort(d)
    assert median_interval(d, 0.95) == (s[1], s[8])
    assert median_interval(d, 0.85) == (s[2], s[7])


def test_median_interval_edge_cases():
    from encbench.stats.pairwise import median_interval

    assert all(np.isnan(median_interval(np.array([]), 0.95)))
    assert all(np.isnan(median_interval(np.arange(5.0), 0.95)))   # 1 - 2/32 = 93.75% < 95%
    assert median_interval(np.arange(6.0), 0.95) == (0.0, 5.0)    # 1 - 2/64 = 96.9%


def test_rank_biserial_matches_a_naive_reference_and_the_wilcoxon_sums():
    from encbench.stats.pairwise import rank_biserial

    rng = np.random.default_rng(3)
    for _ in range(50):
        d = np.round(rng.normal(0.01, 0.02, rng.integers(1, 30)), 3)   # rounding makes ties and zeros
        assert rank_biserial(d) == pytest.approx(_naive_rank_biserial(d))
    assert rank_biserial(np.array([0.1, 0.2, 0.3])) == 1.0 and rank_biserial(np.array([-0.1, -0.2])) == -1.0
    assert rank_biserial(np.zeros(4)) == 0.0
    # r = 1 - 2 T- / S with T- = scipy's two-sided statistic when B has the smaller rank sum
    d = np.array([0.05, 0.02, -0.01, 0.04, 0.03, -0.02, 0.06, 0.01, 0.07])
    n = d.size
    assert rank_biserial(d) == pytest.approx(1 - 2 * wilcoxon(d).statistic / (n * (n + 1) / 2))


def test_effect_sizes_in_the_pairwise_table():
    frame = _scores()
    result = wilcoxon_pairs(frame, pairs=[("MT", "Drop"), ("MT", "CB")], n_boot=500, seed=1)
    table = result.table
    assert list(table.columns)[-5:] == ["median_low", "median_high", "rank_biserial",
                                        "rank_biserial_low", "rank_biserial_high"]
    assert result.level == 0.95 and result.n_boot == 500
    wide = frame.pivot(index="dataset", columns="encoder", values="cv_score")
    rng = np.random.default_rng(1)                              # the pairs draw in turn from one rng
    for _, row in table.iterrows():
        both = wide[[row["encoder_a"], row["encoder_b"]]].dropna()
        diff = (both.iloc[:, 0] - both.iloc[:, 1]).to_numpy()
        s = np.sort(diff)
        assert row["median_low"] <= row["median_difference"] <= row["median_high"]
        assert {row["median_low"], row["median_high"]} <= set(s)
        assert row["rank_biserial"] == pytest.approx(_naive_rank_biserial(diff))
        index = rng.integers(0, diff.size, size=(500, diff.size))
        naive = [_naive_rank_biserial(diff[i]) for i in index]   # a loop over the resamples
        low, high = np.quantile(naive, [0.025, 0.975])
        assert row["rank_biserial_low"] == pytest.approx(low) and row["rank_biserial_high"] == pytest.approx(high)
        assert row["rank_biserial_low"] <= row["rank_biserial"] <= row["rank_biserial_high"]
    drop = table.iloc[0]
    assert drop["rank_biserial"] == 1.0 and drop["median_low"] > 0   # MT beats Drop everywhere
    again = wilcoxon_pairs(frame, pairs=[("MT", "Drop"), ("MT", "CB")], n_boot=500, seed=1).table
    pd.testing.assert_frame_equal(table, again)                  # seeded


def test_bad_effect_size_arguments_are_named():
    with pytest.raises(ValueError, match="level"):
        wilcoxon_pairs(_scores(), encoders=["OH", "MT"], level=1.0)
    with pytest.raises(ValueError, match="n_boot"):
        wilcoxon_pairs(_scores(), encoders=["OH", "MT"], n_boot=0)


def test_each_finding_names_the_encoder_that_scores_higher():
    """'significant' did not say which way (Sum vs OH: p = 0.039, OH ahead)."""
    from scipy.stats import rankdata

    from encbench.stats.pairwise import finding

    frame = _scores()
    one = wilcoxon_pairs(frame, pairs=[("OH", "Drop")]).table.iloc[0]
    assert one["significant"] and one["finding"] == f"OH better, p = {one['p_holm']:.2g}"
    flipped = wilcoxon_pairs(frame, pairs=[("Drop", "OH")]).table.iloc[0]
    assert flipped["finding"] == f"OH better, p = {flipped['p_holm']:.2g}"
    table = wilcoxon_pairs(frame, encoders=["OH", "MT", "CB", "Drop"]).table
    wide = frame.pivot(index="dataset", columns="encoder", values="cv_score")
    for row in table.itertuples():
        if not row.significant:
            assert row.finding == f"no significant difference, Holm p = {row.p_holm:.2g}"
            continue
        # naive direction: the signed-rank sums of the non-zero differences
        diff = (wide[row.encoder_a] - wide[row.encoder_b]).dropna()
        diff = diff[diff != 0]
        ranks = rankdata(diff.abs())
        higher = row.encoder_a if ranks[diff > 0].sum() > ranks[diff < 0].sum() else row.encoder_b
        assert row.finding == f"{higher} better, Holm p = {row.p_holm:.2g}"
    assert (~table["significant"]).any() and table["significant"].any()    # both kinds were checked
    assert finding("A", "B", float("nan"), False, float("nan")) == "not tested: no dataset with both"
    assert list(table.columns).index("finding") == list(table.columns).index("significant") + 1
