"""Incomplete blocks for Friedman/Nemenyi: counts, the four designs, naive references."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench import stats
from encbench.views import consensus


def _sparse(seed=0, n_datasets=8, encoders=("A", "B", "C", "D"), holes=((0, "D"), (1, "D"), (2, "C"))):
    rng = np.random.default_rng(seed)
    rows = [(f"d{d}", e, float(rng.uniform(0.5, 1.0))) for d in range(n_datasets) for e in encoders
            if (d, e) not in holes]
    return pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])


def test_counts_of_complete_datasets_and_common_encoders():
    scores = _sparse()
    design = stats.block_design(scores, "all")
    assert (design.n_datasets, design.n_encoders) == (8, 4)
    # naive: a dataset is complete when it has all 4 encoders; an encoder is common when on all 8
    per_dataset = scores.groupby("dataset")["encoder"].nunique()
    per_encoder = scores.groupby("encoder")["dataset"].nunique()
    assert design.n_complete_datasets == int((per_dataset == 4).sum()) == 5
    assert design.n_common_encoders == int((per_encoder == 8).sum()) == 2
    assert len(design.scores) == len(scores) and not design.complete
    assert "5 of 8 datasets have every encoder" in design.description


def test_each_design_keeps_the_rows_it_says():
    scores = _sparse()
    complete = stats.block_design(scores, "complete-datasets")
    assert sorted(complete.scores["dataset"].unique()) == [f"d{d}" for d in range(3, 8)]
    assert len(complete.scores) == 5 * 4 and complete.description.startswith("complete datasets only (5 of 8")
    common = stats.block_design(scores, "common-encoders")
    assert sorted(common.scores["encoder"].unique()) == ["A", "B"] and len(common.scores) == 16
    imputed = stats.block_design(scores, "impute")
    assert len(imputed.scores) == 32 and imputed.n_imputed == 3
    observed = scores.merge(imputed.scores, on=["dataset", "encoder"], suffixes=("", "_used"))
    assert np.allclose(observed["cv_score"], observed["cv_score_used"])     # observed cells unchanged
    expected = stats.impute_scores(scores).completed.loc["d0", "D"]
    got = imputed.scores.set_index(["dataset", "encoder"]).loc[("d0", "D"), "cv_score"]
    assert got == pytest.approx(expected)


def test_friedman_is_defined_on_the_complete_designs_and_the_subtitle_says_which():
    scores = _sparse(n_datasets=12)
    for name in ("complete-datasets", "impute"):
        design = stats.block_design(scores, name)
        result = stats.nemenyi(design.scores, alpha=0.1)
        assert np.isfinite(result.friedman_statistic), name
        lines = consensus.cd_subtitle(result, design)
        assert f"alpha = 0.1, N = {result.n_datasets} datasets, k = 4 encoders" in lines[0]
        assert lines[1] == f"Blocks: {design.description}"
    everything = stats.block_design(scores, "all")
    lines = consensus.cd_subtitle(stats.nemenyi(everything.scores), everything)
    assert "the test assumes complete blocks" in lines[1]


def test_complete_data_is_said_to_be_complete_and_a_bad_design_is_named():
    scores = _sparse(holes=())
    design = stats.block_design(scores, "all")
    assert design.complete and design.description == "complete blocks"
    with pytest.raises(ValueError, match="'drop'"):
        stats.block_design(scores, "drop")
