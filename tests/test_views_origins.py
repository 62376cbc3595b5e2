"""Which origins a view shows, and the banner that announces local results."""
from __future__ import annotations

import pandas as pd
import pytest

from encbench.views import origins


def _origin_rows():
    rows = [("3", "OH", 0.8, "published", "p"), ("3", "OH", 0.9, "local", "l1"),
            ("3", "MT", 0.7, "published", "p"), ("3", "MT", 0.6, "local", "l1"),
            ("x", "OH", 0.6, "local", "l2"), ("31", "OH", 0.5, "published", "p")]
    frame = pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score", "origin", "run_id"])
    return frame.assign(model="DT", tuning="no", scoring="AUC", time=1.0)


def test_origin_mix_counts_what_local_results_add():
    mix = origins.origin_mix(_origin_rows())
    assert mix == origins.OriginMix(local_rows=3, local_datasets=2, shared_datasets=1, both=2, local_runs=2)
    text = origins.origin_banner("both", mix, "published")
    assert "3 local score rows on 2 dataset(s) from 2 run(s)" in text
    assert "2 experiments have both a published and a local score: the published score counts" in text
    assert origins.origin_banner("published", mix, "published") is None
    with pytest.raises(ValueError, match="'all'"):
        origins.origins_of("all")


def test_a_time_score_and_a_published_cv_score_are_not_the_same_experiment():
    rows = _origin_rows()
    rows = rows.assign(split=["cv", "time", "cv", "cv", "cv", "cv"])
    assert origins.origin_mix(rows).both == 1                     # only MT's cv scores pair up


def test_beyond_view_ranks_on_the_datasets_encbench_covers_and_checks_its_controls():
    rows = [("3", "OH", 0.80, "published"), ("3", "MT", 0.70, "published"), ("31", "OH", 0.50, "published"),
            ("3", "OH", 0.801, "encbench"), ("3", "MT", 0.75, "encbench"), ("3", "SkTE", 0.85, "encbench")]
    raw = pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score", "origin"]).assign(
        model="DT", tuning="no", scoring="AUC", time=1.0, run_id=lambda f: f["origin"])
    view = origins.beyond_view(raw)
    assert view.datasets == ("3",) and view.encoders == ("SkTE",)
    assert set(view.scores["dataset"]) == {"3"}  # dataset 31 has no encbench row: left out
    # OH within 0.005 of the published 0.80, MT 0.05 off
    assert (view.controls.n_cells, view.controls.n_within) == (2, 1)
    assert "1 of 2 within 0.005" in view.banner and "SkTE" in view.banner
    assert origins.with_beyond(("published",), True) == ("published", "encbench")
    assert origins.with_beyond(("published",), False) == ("published",)
    untouched = origins.beyond_view(raw[raw["origin"] == "published"])
    assert untouched.datasets == () and untouched.controls is None
