"""Q-Imp: consensus on sparse results by imputing missing (encoder, dataset) scores.

Model of Motl & Kordik, "Benchmarking classifier performance with sparse measurements"
(section 2, equation 1): ``score ~ alg * dat``, an encoder
quality ``alg`` times a dataset difficulty ``dat`` (no interaction). It is fitted by the paper's
alternating additive corrections on the observed cells only::

    alg = rowmean(acc);  dat = 1
    repeat n_iter times:
        dat = dat + colmean(acc - alg * dat)
        alg = alg + rowmean(acc - alg * dat)

where ``acc`` is the encoder x dataset score matrix and the means skip missing cells. The paper
finds 10 iterations sufficient. Encoders are ranked by the fitted ``alg`` (higher is better): unlike
the mean observed score (Q-M), it does not reward an encoder for having been run only on easy
datasets.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import vocab
from encbench.stats._arrays import nanmean
from encbench.stats._checks import check_n_iter
from encbench.stats._cube import build_cube

#: correction sweeps by default: Q-Imp's, from the strategy registry
DEFAULT_N_ITER: int = vocab.N_ITER.default  # type: ignore[assignment]


def fit_quality_difficulty(values: np.ndarray, n_iter: int = DEFAULT_N_ITER) -> tuple[np.ndarray, np.ndarray]:
    """Fit ``score ~ quality * difficulty`` on many score matrices at once.

    Parameters
    ----------
    values : numpy.ndarray
        ``(G, D, E)`` scores, NaN = missing.
    n_iter : int
        Correction sweeps.

    Returns
    -------
    quality : numpy.ndarray
        ``(G, E)``: fitted encoder quality (NaN for an encoder with no result in the group).
    difficulty : numpy.ndarray
        ``(G, D)``: fitted dataset factor (NaN for a dataset with no result in the group).
    """
    quality = nanmean(values, axis=1)  # rowmean(acc), encoders as rows in the paper
    difficulty = np.where((~np.isnan(values)).any(axis=2), 1.0, np.nan)
    for _ in range(n_iter):
        residual = values - difficulty[:, :, None] * quality[:, None, :]
        difficulty = difficulty + nanmean(residual, axis=2)
        residual = values - difficulty[:, :, None] * quality[:, None, :]
        quality = quality + nanmean(residual, axis=1)
    return quality, difficulty


@dataclass(frozen=True)
class ImputationResult:
    """The fitted Q-Imp model of one factor combination.

    Attributes
    ----------
    quality : pandas.Series
        Fitted encoder quality (index ``encoder``), sorted best first; Q-Imp ranks by it.
    difficulty : pandas.Series
        Fitted dataset factor (index ``dataset``): predicted score = quality x difficulty.
    completed : pandas.DataFrame
        Dataset x encoder scores: observed where available, predicted elsewhere.
    n_imputed : int
        Number of cells filled in.
    """

    quality: pd.Series
    difficulty: pd.Series
    completed: pd.DataFrame
    n_imputed: int


def impute_scores(scores: pd.DataFrame, n_iter: int = DEFAULT_N_ITER) -> ImputationResult:
    """Fit the quality x difficulty model and fill in the missing scores.

    Parameters
    ----------
    scores : pandas.DataFrame
        Columns ``dataset, encoder, cv_score`` for one factor combination (may be sparse).
    n_iter : int, default 10
        Correction sweeps of the fitting algorithm.

    Returns
    -------
    ImputationResult

    Raises
    ------
    ValueError
        On invalid ``scores`` or ``n_iter``.
    """
    n_iter = check_n_iter(n_iter)
    cube = build_cube(scores)
    quality, difficulty = fit_quality_difficulty(cube.values, n_iter)
    quality, difficulty = quality[0], difficulty[0]
    observed = cube.values[0]
    completed = np.where(np.isnan(observed), difficulty[:, None] * quality[None, :], observed)
    encoders = pd.Index(cube.encoders, name="encoder")
    datasets = pd.Index(cube.datasets, name="dataset")
    order = np.lexsort((cube.encoders.astype(str), -quality))
    return ImputationResult(
        quality=pd.Series(quality, index=encoders, name="quality").iloc[order],
        difficulty=pd.Series(difficulty, index=datasets, name="difficulty"),
        completed=pd.DataFrame(completed, index=datasets, columns=encoders),
        n_imputed=int(np.isnan(observed).sum()),
    )
