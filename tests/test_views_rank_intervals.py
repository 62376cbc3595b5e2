"""Where the Consensus page computes rank intervals, and the function its worker process runs."""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd

from encbench import stats
from encbench.views import rank_intervals as rank_iv


def _scores(n_datasets: int = 6, n_encoders: int = 4, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"scoring": "AUC", "dataset": f"d{d}", "encoder": f"e{e}", "cv_score": rng.uniform(),
             "time": 1.0} for d in range(n_datasets) for e in range(n_encoders)]
    return pd.DataFrame(rows).iloc[1:]          # d0 lacks e0: counts are of distinct voters and encoders


def test_cells_are_resamples_times_voters_times_encoders():
    assert rank_iv.bootstrap_cells(_scores(), 200) == 200 * 6 * 4
    assert not rank_iv.in_worker(rank_iv.IN_PAGE_CELLS) and rank_iv.in_worker(rank_iv.IN_PAGE_CELLS + 1)
    # the shipped combination's 50 datasets and 32 encoders: B = 200 in the page, B = 2000 not
    assert not rank_iv.in_worker(200 * 50 * 32) and rank_iv.in_worker(2000 * 50 * 32)


def test_the_job_is_the_bootstrap_with_the_strategy_s_parameters_and_seed_0():
    scores = _scores()
    reports = []
    params = (("alpha", 0.1), ("theta", 0.9))                 # theta is not R-Nem's: left out
    got = rank_iv.rank_intervals_job(rank_iv.job_scores(scores), "R-Nem", 300, params,
                                     progress=lambda d, t: reports.append((d, t)), should_stop=lambda: False)
    pd.testing.assert_frame_equal(got, stats.rank_intervals(scores, "R-Nem", B=300, seed=0, alpha=0.1))
    assert reports == [(1, 1)]
    assert list(rank_iv.job_scores(scores).columns) == ["scoring", "dataset", "encoder", "cv_score"]
    assert pickle.loads(pickle.dumps(rank_iv.rank_intervals_job)) is rank_iv.rank_intervals_job


def test_a_job_stopped_before_it_starts_returns_nothing():
    assert rank_iv.rank_intervals_job(_scores(), "R-M", 100, progress=lambda d, t: None,
                                      should_stop=lambda: True) is None
