"""The Sensitivity page's view: similarity of rankings as one factor varies."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench import stats, vocab
from encbench.store import queries
from encbench.views import sensitivity


@pytest.fixture(scope="module")
def everything(published_reader):
    return queries.one_score_per_experiment(queries.load_scores(published_reader))


def test_sensitivity_view_fixed_matches_library(everything):
    fixed = {"tuning": "no", "scoring": "AUC"}
    view = sensitivity.sensitivity_view(everything, "model", fixed)
    lib = stats.sensitivity(everything, "model", fixed=fixed)
    assert view.n_settings == 1
    pd.testing.assert_frame_equal(view.spearman, lib.spearman, check_names=False)
    assert view.labels == tuple(vocab.STUDY_MODELS)


def test_sensitivity_view_averages_over_the_unfixed_factor(everything):
    view = sensitivity.sensitivity_view(everything, "tuning", {"model": "LogReg",
                                                             "scoring": sensitivity.AVERAGE_ALL})
    mats = [stats.sensitivity(everything, "tuning", fixed={"model": "LogReg", "scoring": m}).jaccard
            for m in vocab.METRICS]
    expected = sum(mats) / len(mats)
    assert view.n_settings == 4
    np.testing.assert_allclose(view.jaccard.to_numpy(), expected.to_numpy())


def test_sensitivity_view_over_strategies_and_errors(everything):
    view = sensitivity.sensitivity_view(everything, "strategy",
                                      {"model": "LogReg", "tuning": "no", "scoring": "AUC"},
                                      strategies=["R-M", "Q-M", "Q-Th"], params={"theta": 0.9, "alpha": 0.05})
    assert view.labels == ("R-M", "Q-M", "Q-Th")
    with pytest.raises(ValueError, match="two or more"):
        sensitivity.sensitivity_view(everything, "model", {"tuning": "no", "scoring": "AUC"}, labels=["DT"])
    with pytest.raises(ValueError, match="vary"):
        sensitivity.sensitivity_view(everything, "dataset", {})
