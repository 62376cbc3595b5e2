"""Sensitivity: how similar consensus rankings are as one factor varies, the others fixed or
averaged over."""
from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import stats
from encbench.vocab import FACTORS, ordered

#: factors Sensitivity can vary: the data factors, the evaluation split, the strategy
VARIABLE: tuple[str, ...] = (*FACTORS, "split", "strategy")
#: the value of a fixed factor that loops over its values and averages the matrices
AVERAGE_ALL = "(average over all)"


@dataclass(frozen=True)
class SensitivityView:
    """Similarity of consensus rankings as one factor varies.

    Attributes
    ----------
    jaccard, spearman : pandas.DataFrame
        Label x label similarity (Jaccard index of the rank-1 sets; Spearman's rho), averaged
        over the settings of the factors set to :data:`AVERAGE_ALL`.
    rankings : pandas.DataFrame
        Encoder x label consensus ranks of the first setting.
    n_settings : int
        Matrices averaged.
    labels : tuple of str
        The values of the varied factor (or the strategies), in display order.
    """

    jaccard: pd.DataFrame
    spearman: pd.DataFrame
    rankings: pd.DataFrame
    n_settings: int
    labels: tuple[str, ...]


def sensitivity_view(scores: pd.DataFrame, vary: str, fixed: Mapping[str, str], *,
                     strategy: str = "R-M", strategies: Sequence[str] | None = None,
                     labels: Sequence[str] | None = None,
                     params: Mapping[str, float] | None = None) -> SensitivityView:
    """Similarity of consensus rankings as ``vary`` changes, the other factors fixed or averaged.

    A fixed factor set to :data:`AVERAGE_ALL` is looped over: one similarity matrix per value
    (per combination of such factors) and their element-wise mean (NaN-aware) is returned, as in
    the study's sensitivity figures.

    Returns
    -------
    SensitivityView

    Raises
    ------
    ValueError
        When no setting has data for at least two labels.
    """
    if vary not in VARIABLE:
        raise ValueError(f"vary must be one of {', '.join(VARIABLE)}: got {vary!r}")
    if vary != "split" and "split" in scores.columns and scores["split"].nunique() > 1:
        raise ValueError(f"scores mix the splits {sorted(scores['split'].unique())!r}; vary the split "
                         f"or keep one: got vary={vary!r}")
    others = [f for f in FACTORS if f != vary]
    loops = {f: ordered(f, scores[f].unique()) if fixed.get(f) == AVERAGE_ALL else [fixed[f]]
             for f in others}
    data = scores
    if labels is not None and vary != "strategy":
        data = data[data[vary].isin(list(labels))]
    if vary == "split":
        # Only datasets evaluated under every split compared: otherwise the cv ranking would
        # rest on the published benchmark and the time ranking on the user's few datasets.
        per_split = [set(group) for _, group in data.groupby("split", observed=True)["dataset"]]
        shared = set.intersection(*per_split) if per_split else set()
        data = data[data["dataset"].isin(shared)]
    names = list(strategies) if vary == "strategy" else [strategy]
    use_params = stats.params_for(names, params)
    jac_sum = rho_sum = None
    jac_n = rho_n = None
    first_rankings = None
    n_settings = 0
    all_labels: list[str] = []
    for values in itertools.product(*(loops[f] for f in others)):
        setting = dict(zip(others, values))
        mask = np.ones(len(data), dtype=bool)
        for f, v in setting.items():
            mask &= (data[f] == v).to_numpy()
        subset = data[mask]
        if subset.empty or (vary != "strategy" and subset[vary].nunique() < 2):
            continue
        if vary == "strategy":
            result = stats.sensitivity(subset, "strategy", fixed=setting, strategies=names, **use_params)
        else:
            result = stats.sensitivity(subset, vary, fixed=setting, strategy=strategy, **use_params)
        if first_rankings is None:
            first_rankings = result.rankings
        all_labels = ordered(vary, list(all_labels) + list(result.labels)) if vary != "strategy" \
            else list(dict.fromkeys(list(all_labels) + list(result.labels)))
        jac = result.jaccard.reindex(index=all_labels, columns=all_labels)
        rho = result.spearman.reindex(index=all_labels, columns=all_labels)
        if jac_sum is None:
            jac_sum, rho_sum = jac.fillna(0.0), rho.fillna(0.0)
            jac_n, rho_n = jac.notna().astype(int), rho.notna().astype(int)
        else:
            jac_sum = jac_sum.reindex(index=all_labels, columns=all_labels, fill_value=0.0) + jac.fillna(0.0)
            rho_sum = rho_sum.reindex(index=all_labels, columns=all_labels, fill_value=0.0) + rho.fillna(0.0)
            jac_n = jac_n.reindex(index=all_labels, columns=all_labels, fill_value=0) + jac.notna().astype(int)
            rho_n = rho_n.reindex(index=all_labels, columns=all_labels, fill_value=0) + rho.notna().astype(int)
        n_settings += 1
    if n_settings == 0:
        raise ValueError(f"no setting of the fixed factors has results for two or more {vary} values")
    jaccard = (jac_sum / jac_n.where(jac_n > 0)).astype(float)
    spearman = (rho_sum / rho_n.where(rho_n > 0)).astype(float)
    return SensitivityView(jaccard=jaccard, spearman=spearman, rankings=first_rankings,
                           n_settings=n_settings, labels=tuple(all_labels))


def similarity_table(matrix: pd.DataFrame, measure: str) -> pd.DataFrame:
    """A square similarity matrix as an exportable table (first column: the row label)."""
    out = matrix.copy()
    out.index.name = measure
    return out.reset_index()
