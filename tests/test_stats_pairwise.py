"""Pairwise Wilcoxon signed-rank tests with Holm's correction (issue 11 item 5)."""
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
