"""Replicability: the rows of its chart, the sample sizes it tries and how many datasets a stable
ranking needs."""
from __future__ import annotations

import pandas as pd

from encbench.stats import project_agreement


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


def datasets_needed_text(summary: pd.DataFrame, target: float = 0.9) -> str:
    """How many datasets per sample two samples' rankings need to agree at rho ``target``: measured
    where a sample size reached it, else projected by :func:`encbench.stats.project_agreement`,
    and said to be unreliable where the projection's curve leaves the largest size's interval."""
    reached = summary[summary["rho_mean"] >= target]
    if len(reached):
        return (f"Two samples' rankings agree at rho >= {target:g} from {int(reached['sample_size'].min())} "
                f"datasets per sample (measured).")
    size = int(summary["sample_size"].max())
    head = f"Agreement stays below rho {target:g} up to {size} datasets per sample"
    got = project_agreement(summary, target)
    if got.needed is None:
        return f"{head}, and does not grow with the sample: no number of datasets is projected."
    formula = "the Spearman-Brown formula n r / (1 + (n - 1) r) for datasets drawn alike"
    if got.fits:
        return (f"{head}. Projected by {formula}, fitted to the means (r = {got.r:.3f}): about {got.needed} "
                f"datasets per sample ({2 * got.needed} in all) for rho {target:g}.")
    how = ("agreement grows more slowly than the formula (the datasets are not drawn alike), so its "
           f"projection of {got.needed} per sample is at best a lower bound" if got.above else
           f"agreement grows faster than the formula, so its projection of {got.needed} per sample is at "
           "most an upper bound")
    return (f"{head}. Fitted to the means (r = {got.r:.3f}), {formula} leaves the measured interval at "
            f"{size}: {how}.")
