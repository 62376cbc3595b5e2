"""Replicability: the rows of its chart and the sample sizes it tries."""
from __future__ import annotations

import pandas as pd


def replicability_long(summary: pd.DataFrame, strategy: str) -> pd.DataFrame:
    """A replicability summary as long rows for the chart: ``sample_size, measure, mean, low, high``."""
    rows = []
    for measure in ("rho", "J"):
        part = summary[["sample_size", f"{measure}_mean", f"{measure}_low", f"{measure}_high"]]
        part = part.set_axis(["sample_size", "mean", "low", "high"], axis=1)
        rows.append(part.assign(measure=f"{measure}-replicability", strategy=strategy))
    return pd.concat(rows, ignore_index=True)


def default_sample_sizes(n_datasets: int, *, step: int = 5) -> list[int]:
    """Sample sizes from 5 to half the datasets (two disjoint samples must fit)."""
    top = n_datasets // 2
    if top < 2:
        return []
    sizes = list(range(min(step, top), top + 1, step))
    if sizes[-1] != top:
        sizes.append(top)
    return sizes
