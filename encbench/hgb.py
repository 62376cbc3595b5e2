"""scikit-learn's HistGradientBoosting models, taking category columns of any width.

HistGradientBoosting handles a pandas ``category`` column natively only up to ``max_bins``
categories (255 by default) and refuses a wider one ("expected to have a cardinality <= 255").
The ``Native`` encoder hands it every categorical column as a ``category`` column, so a dataset
with a wider column (hotel_rates' arrival dates, 426 levels) failed every Native x HGB cell.

:class:`HGBClassifier` and :class:`HGBRegressor` are the scikit-learn models with one step before
them, learnt on the training data: a ``category`` column with more than ``max_bins`` categories
keeps its ``max_bins - 1`` most frequent training levels (ties by category order) as categories
of their own, and its other levels share one more category, as scikit-learn's ``OrdinalEncoder``
with ``max_categories`` groups infrequent levels. A missing value stays missing. Columns within
the limit are untouched, so every result on such data is the scikit-learn model's own.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor


class _WideCategories:
    """The grouping of wide category columns (a mixin before the scikit-learn model)."""

    def _learn_wide(self, X) -> None:
        self.wide_categories_ = {}
        if not isinstance(X, pd.DataFrame):
            return
        keep = self.max_bins - 1
        for name in X.columns:
            column = X[name]
            if not isinstance(column.dtype, pd.CategoricalDtype) or len(column.cat.categories) <= self.max_bins:
                continue
            categories = column.cat.categories
            present = column.cat.codes.to_numpy()
            counts = np.bincount(present[present >= 0], minlength=len(categories))
            # most frequent first; equal counts in category order (a stable sort of -counts)
            kept = np.argsort(-counts, kind="stable")[:keep]
            codes = np.full(len(categories), keep, dtype=np.int64)  # the shared category
            codes[np.sort(kept)] = np.arange(keep)
            self.wide_categories_[name] = (categories, codes)

    def _narrow(self, X):
        wide = getattr(self, "wide_categories_", None)
        if not wide or not isinstance(X, pd.DataFrame):
            return X
        # a column with max_bins categories is narrowed already (a wide one had more when learnt):
        # scikit-learn may call one predicting method from another
        wide = {name: learnt for name, learnt in wide.items()
                if not (isinstance(X[name].dtype, pd.CategoricalDtype)
                        and len(X[name].cat.categories) == self.max_bins)}
        if not wide:
            return X
        X = X.copy()
        for name, (categories, codes) in wide.items():
            old = pd.Categorical(X[name], categories=categories).codes
            new = np.where(old >= 0, codes[np.maximum(old, 0)], -1)
            X[name] = pd.Categorical.from_codes(new, categories=np.arange(self.max_bins))
        return X

    def fit(self, X, y, sample_weight=None):
        self._learn_wide(X)
        return super().fit(self._narrow(X), y, sample_weight=sample_weight)

    def predict(self, X):
        return super().predict(self._narrow(X))


class HGBClassifier(_WideCategories, HistGradientBoostingClassifier):
    """``HistGradientBoostingClassifier`` whose category columns may be wider than ``max_bins``."""

    def predict_proba(self, X):
        return super().predict_proba(self._narrow(X))

    def decision_function(self, X):
        return super().decision_function(self._narrow(X))


class HGBRegressor(_WideCategories, HistGradientBoostingRegressor):
    """``HistGradientBoostingRegressor`` whose category columns may be wider than ``max_bins``."""
