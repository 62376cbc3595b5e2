"""Per-dataset rankings against pandas' own dense/average ranks."""
from __future__ import annotations

import numpy as np
import pandas as pd

from encbench.stats import dataset_ranks


def test_matches_pandas_groupby_rank():
    rng = np.random.default_rng(0)
    rows = [(m, f"d{d}", f"E{e}", float(rng.integers(0, 5)) / 4)
            for m in ("DT", "SVM") for d in range(6) for e in range(7) if rng.random() > 0.2]
    frame = pd.DataFrame(rows, columns=["model", "dataset", "encoder", "cv_score"])
    got = dataset_ranks(frame, by="model")
    assert list(got.columns) == ["model", "dataset", "encoder", "cv_score", "rank", "average_rank"]
    assert len(got) == len(frame)
    ref = frame.assign(
        rank=frame.groupby(["model", "dataset"]).cv_score.rank(method="dense", ascending=False).astype(int),
        average_rank=frame.groupby(["model", "dataset"]).cv_score.rank(method="average", ascending=False),
    )
    merged = got.merge(ref, on=["model", "dataset", "encoder"], suffixes=("", "_ref"))
    assert len(merged) == len(frame)
    assert (merged["rank"] == merged["rank_ref"]).all()
    assert (merged["average_rank"] == merged["average_rank_ref"]).all()
    assert got["rank"].dtype == np.int64
