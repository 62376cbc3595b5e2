"""Bootstrap rank intervals against a naive loop over resamples."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.stats import consensus, rank_intervals


def _scores(seed: int, n_datasets: int = 12, n_encoders: int = 6, missing: float = 0.15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.0, 0.2, n_encoders)
    rows = [(f"d{d:02d}", f"E{e}", float(np.round(rng.random() * 0.4 + quality[e], 2)))
            for d in range(n_datasets) for e in range(n_encoders) if rng.random() >= missing]
    return pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])


def _naive(frame: pd.DataFrame, strategy: str, B: int, seed: int, level: float = 0.95, **params):
    """Same draws as rank_intervals, one consensus() call per resample on relabelled datasets."""
    datasets = np.sort(frame.dataset.unique())
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(datasets), size=(B, len(datasets)))
    draws = []
    for row in index:
        parts = [frame[frame.dataset == datasets[d]].assign(dataset=f"draw{i}") for i, d in enumerate(row)]
        draws.append(consensus(pd.concat(parts), strategy, **params))
    ranks = pd.DataFrame(draws).reset_index(drop=True)  # (B, encoders), NaN if absent
    tail = (1 - level) / 2
    low = ranks.apply(lambda c: np.quantile(c.dropna(), tail, method="inverted_cdf"))
    high = ranks.apply(lambda c: np.quantile(c.dropna(), 1 - tail, method="inverted_cdf"))
    return low, high


@pytest.mark.parametrize("strategy, params", [("R-M", {}), ("Q-RM", {}), ("R-Nem", {"alpha": 0.2}), ("R-Kem", {})])
def test_matches_naive_resampling_loop(strategy, params):
    frame = _scores(1)
    result = rank_intervals(frame, strategy, B=40, seed=3, **params)
    low, high = _naive(frame, strategy, B=40, seed=3, **params)
    result = result.set_index("encoder")
    pd.testing.assert_series_equal(result["low"], low.reindex(result.index).astype(float), check_names=False)
    pd.testing.assert_series_equal(result["high"], high.reindex(result.index).astype(float), check_names=False)
    point = consensus(frame, strategy, **params)
    assert result["rank"].to_dict() == point.to_dict()


def test_seeded_and_sensible():
    frame = _scores(2, n_datasets=25, n_encoders=8, missing=0.0)
    a = rank_intervals(frame, "R-M", B=300, seed=7)
    b = rank_intervals(frame, "R-M", B=300, seed=7)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["encoder", "rank", "low", "high"]
    assert (a["low"] <= a["high"]).all()
    assert list(a["rank"]) == sorted(a["rank"])
    # Wider intervals for a lower level never happen.
    narrow = rank_intervals(frame, "R-M", B=300, seed=7, level=0.5).set_index("encoder")
    wide = a.set_index("encoder")
    assert (narrow["low"] >= wide["low"]).all() and (narrow["high"] <= wide["high"]).all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(strategy="R-Best"), "unknown strategy 'R-Best'"),
        (dict(B=0), "B must be a positive integer: got 0"),
        (dict(level=1.0), "level must be a number in \\(0, 1\\): got 1.0"),
        (dict(theta=0.9), "unknown parameter 'theta'"),
    ],
)
def test_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rank_intervals(_scores(0), **kwargs)
