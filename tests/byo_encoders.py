"""Encoders written in the test suite to exercise "bring your own encoder".

Imported by import path (``tests.byo_encoders:FrequencyRankEncoder``) in the task processes,
which run from the checkout's root.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin


class FrequencyRankEncoder(TransformerMixin, BaseEstimator):
    """Each level becomes the rank of its training frequency (1 = most frequent; ties by name).

    Unseen levels get ``unknown_value`` (default 0). ``scale=True`` divides by the number of
    levels of the column, so every column lies in (0, 1].
    """

    def __init__(self, *, scale=False, unknown_value=0.0):
        self.scale = scale
        self.unknown_value = unknown_value

    def fit(self, X, y=None):
        X = pd.DataFrame(X)
        self.columns_ = [str(c) for c in X.columns]
        self.maps_ = []
        for column in X.columns:
            counts = X[column].astype(str).value_counts()
            order = sorted(counts.index, key=lambda level: (-counts[level], level))
            ranks = {level: float(i + 1) for i, level in enumerate(order)}
            if self.scale:
                ranks = {k: v / len(order) for k, v in ranks.items()}
            self.maps_.append(ranks)
        return self

    def transform(self, X):
        X = pd.DataFrame(X)
        out = {col: X[c].astype(str).map(m).fillna(self.unknown_value).astype(float).to_numpy()
               for col, c, m in zip(self.columns_, X.columns, self.maps_)}
        return pd.DataFrame(out, index=X.index)

    def get_feature_names_out(self, input_features=None):
        return np.asarray(self.columns_, dtype=object)


def make_frequency_rank(scale=True):
    """A factory: the scaled frequency-rank encoder."""
    return FrequencyRankEncoder(scale=scale)


class LeakyEncoder(FrequencyRankEncoder):
    """Returns the stored training targets for inputs of the training length: leaks the target."""

    def fit(self, X, y=None):
        super().fit(X, y)
        self.y_ = np.asarray(y, dtype=float)
        return self

    def transform(self, X):
        out = super().transform(X)
        if len(out) == len(self.y_):
            out.iloc[:, 0] = self.y_
        return out


class NaNEncoder(FrequencyRankEncoder):
    """Leaves unseen levels as NaN."""

    def transform(self, X):
        X = pd.DataFrame(X)
        return pd.DataFrame({col: X[c].astype(str).map(m).astype(float).to_numpy()
                             for col, c, m in zip(self.columns_, X.columns, self.maps_)}, index=X.index)
