"""Friedman/Nemenyi on incomplete results: say how incomplete, and choose an honest design.

The Friedman test and the Nemenyi critical difference assume *complete blocks*: every dataset
(block) ranks every encoder (Demsar 2006, section 3.2.2). The published results are not complete
(in LogReg / no tuning / AUC no dataset has all 32 encoders; GLMM has 21 of 50), so a diagram
over every voter ranks encoders on different subsets and its N is not the N of the test. The
options of docs/ARCHITECTURE.md, Consensus rankings, each named on the page and on the figure:

``all``
    Every dataset, each ranking the encoders it has (the study's voter convention). Not a
    valid Friedman design when blocks are incomplete; shown with that caveat.
``complete-datasets``
    Only the datasets that have a result for every encoder.
``common-encoders``
    Only the encoders that have a result on every dataset.
``impute``
    Every dataset and encoder, missing scores filled in by Q-Imp's model (score ~ encoder
    quality x dataset difficulty, :func:`encbench.stats.impute_scores`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench.stats._cube import build_cube
from encbench.stats.impute import impute_scores

BLOCK_DESIGNS: dict[str, str] = {
    "all": "all datasets, each ranking the encoders it has (incomplete blocks)",
    "complete-datasets": "complete datasets only",
    "common-encoders": "encoders present on every dataset only",
    "impute": "missing scores imputed (Q-Imp model)",
}


@dataclass(frozen=True)
class BlockDesign:
    """The rows a Friedman/Nemenyi analysis uses, and how complete the data were.

    Attributes
    ----------
    design : str
        A key of :data:`BLOCK_DESIGNS`.
    scores : pandas.DataFrame
        ``dataset, encoder, cv_score`` rows to analyse (imputed rows included for ``impute``).
    n_datasets, n_encoders : int
        Datasets and encoders with results before the design is applied.
    n_complete_datasets : int
        Datasets with a result for every encoder.
    n_common_encoders : int
        Encoders with a result on every dataset.
    n_imputed : int
        Scores filled in (``impute`` only, else 0).
    """

    design: str
    scores: pd.DataFrame
    n_datasets: int
    n_encoders: int
    n_complete_datasets: int
    n_common_encoders: int
    n_imputed: int = 0

    @property
    def complete(self) -> bool:
        """True when every dataset has every encoder (all designs then coincide)."""
        return self.n_complete_datasets == self.n_datasets

    @property
    def description(self) -> str:
        """What the analysis ran on, e.g. ``"complete datasets only (21 of 50 datasets)"``."""
        if self.design == "complete-datasets":
            return f"complete datasets only ({self.n_complete_datasets} of {self.n_datasets} datasets)"
        if self.design == "common-encoders":
            return (f"encoders present on every dataset only ({self.n_common_encoders} of "
                    f"{self.n_encoders} encoders)")
        if self.design == "impute":
            return f"{self.n_imputed:,} missing scores imputed (Q-Imp model)"
        if self.complete:
            return "complete blocks"
        return (f"incomplete blocks: {self.n_complete_datasets} of {self.n_datasets} datasets "
                f"have every encoder")


def block_design(scores: pd.DataFrame, design: str = "all") -> BlockDesign:
    """Apply a design for incomplete blocks to one factor combination's scores.

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` (one combination; voters may be pooled ids).
    design : str
        One of :data:`BLOCK_DESIGNS`.

    Returns
    -------
    BlockDesign
        ``scores`` may be empty (no complete dataset, no common encoder): the caller says so.

    Raises
    ------
    ValueError
        If ``design`` is unknown, or ``scores`` is invalid (see :func:`encbench.stats.consensus`).
    """
    if design not in BLOCK_DESIGNS:
        raise ValueError(f"design must be one of {tuple(BLOCK_DESIGNS)}: got {design!r}")
    cube = build_cube(scores)
    present = ~np.isnan(cube.values[0])  # (D, E)
    complete_rows = present.all(axis=1)
    common_columns = present.all(axis=0)
    datasets = pd.Index(cube.datasets, name="dataset")
    encoders = pd.Index(cube.encoders, name="encoder")
    long = pd.DataFrame(cube.original()[0], index=datasets, columns=encoders).stack().rename("cv_score")
    long = long.reset_index().dropna(subset=["cv_score"])
    n_imputed = 0
    if design == "complete-datasets":
        long = long[long["dataset"].isin(datasets[complete_rows])]
    elif design == "common-encoders":
        long = long[long["encoder"].isin(encoders[common_columns])]
    elif design == "impute":
        result = impute_scores(long)
        n_imputed = result.n_imputed
        long = result.completed.stack().rename("cv_score").reset_index()
    if cube.metrics and cube.metrics[0]:  # keeps the metric's direction for the tests downstream
        long.insert(0, "scoring", cube.metrics[0][0])
    return BlockDesign(design=design, scores=long.reset_index(drop=True), n_datasets=len(datasets),
                       n_encoders=len(encoders), n_complete_datasets=int(complete_rows.sum()),
                       n_common_encoders=int(common_columns.sum()), n_imputed=int(n_imputed))
