"""encbench.dashboard: the old names of the views, kept for one release."""
from __future__ import annotations

import pandas as pd

from encbench import dashboard
from encbench.store import queries
from encbench.views import consensus, explorer, overview, sensitivity


def test_every_old_name_is_still_there():
    assert all(getattr(dashboard, name) is not None for name in dashboard.__all__)
    assert dashboard.assemble is consensus.assemble and dashboard.ranked_scores is explorer.ranked_scores


def test_the_old_return_types_are_kept(published_reader):
    everything = queries.one_score_per_experiment(queries.load_scores(published_reader, models=["LogReg"]))
    assert dashboard.score_counts(everything) == overview.score_counts(everything).as_dict()
    ranked = explorer.ranked_scores(everything)
    one = ranked[(ranked["encoder"] == "OH") & (ranked["dataset"] == "31")]
    assert dashboard.coverage(one, ["OH", "MT"], ["31"]) == {"cells": 2, "with_result": 1, "missing": 1}
    fixed = {"model": "LogReg", "tuning": "no"}
    old = dashboard.sensitivity_view(everything, "scoring", fixed)
    new = sensitivity.sensitivity_view(everything, "scoring", fixed)
    assert old["labels"] == new.labels and old["n_settings"] == new.n_settings
    pd.testing.assert_frame_equal(old["jaccard"], new.jaccard)
