"""Encoders beyond the study: what practitioners use today, wrapped with the zoo's conventions.

Each class here wraps the library that owns the encoder (scikit-learn, skrub,
category_encoders) and keeps the conventions of :mod:`encbench.encoders._base`: a keyword-only
constructor that only stores its arguments, input as text columns, missing values as one more
level, unseen levels encoded without an exception or NaN, float64 output with
``get_feature_names_out``. None of them is one of the study's 32 configurations: the registry
lists them under the family ``beyond the study`` and the published slice never contains them.

``Native`` is no encoding at all: it hands each column to a model that takes categories itself
(LightGBM, HistGradientBoosting) as a pandas categorical of level ids.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ._base import CategoricalEncoder, TableEncoder

__all__ = [
    "BackwardDifferenceEncoder", "GapEncoder", "HashingEncoder", "HelmertEncoder",
    "JamesSteinEncoder", "LeaveOneOutEncoder", "NativeEncoder", "QuantileEncoder",
    "SklearnTargetEncoder", "StringEncoder", "SummaryEncoder",
]


def _quiet(function, *args, **kwargs):
    """Call a library function with its deprecation and pandas warnings silenced (noise of
    category_encoders under pandas 3, not errors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


class _LibraryEncoder(CategoricalEncoder):
    """Base of the wrappers of a library encoder that takes all columns at once.

    Subclasses implement ``_make()`` (a new, unfitted library encoder). The library sees the
    input as text columns, missing values replaced by the token ``"<NA>"`` so that they are one
    more level whatever the library does with NaN.
    """

    _missing_token = "<NA>"

    def _library_frame(self, frame: pd.DataFrame) -> pd.DataFrame:
        return frame.astype(object).where(frame.notna(), self._missing_token)

    def _fit(self, frame, y):
        self.encoder_ = self._make()
        out = _quiet(self.encoder_.fit_transform, self._library_frame(frame), y)
        self._set_spec(frame, out)

    def _set_spec(self, frame: pd.DataFrame, out) -> None:
        inputs = list(frame.columns)
        if hasattr(out, "columns"):
            names = [str(c) for c in out.columns]
        else:  # a numpy result (scikit-learn's): the library names its columns from the inputs
            names = [str(c) for c in self.encoder_.get_feature_names_out(inputs)]
        spec = []
        for name in names:
            # category_encoders names outputs after their input ("colour_0"): keep that link
            owner = next((j for j, c in enumerate(inputs) if name == c or name.startswith(f"{c}_")), -1)
            if owner >= 0:
                suffix = None if name == inputs[owner] else name[len(inputs[owner]) + 1:]
                spec.append((owner, suffix))
            else:
                spec.append((-1, name))
        self.output_spec_ = spec

    def _transform(self, frame):
        check_is_fitted(self, "encoder_")
        out = _quiet(self.encoder_.transform, self._library_frame(frame))
        return np.nan_to_num(np.asarray(out, dtype=float), nan=0.0)


class _SupervisedLibraryEncoder(_LibraryEncoder):
    """A supervised wrapper whose ``fit_transform`` is the library's (it may differ from
    ``fit().transform()``: cross-fitting, leave-one-out)."""

    _supervised = True

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on ``X, y`` and encode the training rows as the library does when fitting."""
        frame = self._validate_X(X, reset=True)
        target = self._check_y(y, frame.shape[0])
        self.encoder_ = self._make()
        out = _quiet(self.encoder_.fit_transform, self._library_frame(frame), target)
        self._set_spec(frame, out)
        values = np.nan_to_num(np.asarray(out, dtype=float), nan=0.0)
        return self._output(values, frame.index)


class SklearnTargetEncoder(_SupervisedLibraryEncoder):
    """scikit-learn's ``TargetEncoder``: cross-fitted target means with ``smooth="auto"``.

    ``fit_transform`` encodes each training row by the encoder fitted on the other folds
    (``StratifiedKFold(cv, shuffle=True, random_state)``; ``KFold`` with the same seed for a
    continuous target), so it differs from ``fit().transform()``, which uses all training rows;
    unseen levels get the target mean.

    Parameters
    ----------
    cv : int, default=5
        Folds of the cross-fitting.
    smooth : "auto" or float, default="auto"
        scikit-learn's empirical-Bayes shrinkage (``"auto"``) or a fixed strength.
    random_state : int, default=1444
        Seed of the folds (the study's seed of its own cross-fitted encoders).
    target_type : {"binary", "multiclass", "continuous"}, default="binary"
        scikit-learn's ``target_type``: a multiclass target gives one column per class and
        input column, a continuous one (regression) the shrunk mean of y.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"colour": ["red", "blue"] * 10})
    >>> SklearnTargetEncoder().fit_transform(X, [1, 0] * 10).shape
    (20, 1)
    """

    def __init__(self, *, cv=5, smooth="auto", random_state=1444, target_type="binary"):
        self.cv = cv
        self.smooth = smooth
        self.random_state = random_state
        self.target_type = target_type

    def _check_params(self):
        if self.target_type not in ("binary", "multiclass", "continuous"):
            raise ValueError(f"target_type must be 'binary', 'multiclass' or 'continuous': got "
                             f"{self.target_type!r}")

    def _make(self):
        from sklearn.model_selection import KFold, StratifiedKFold
        from sklearn.preprocessing import TargetEncoder

        splitter = KFold if self.target_type == "continuous" else StratifiedKFold
        folds = splitter(self.cv, shuffle=True, random_state=self.random_state)
        return TargetEncoder(smooth=self.smooth, cv=folds, target_type=self.target_type)


class JamesSteinEncoder(_SupervisedLibraryEncoder):
    """category_encoders' ``JamesSteinEncoder``: level means shrunk to the overall mean by the
    James-Stein estimator; unseen levels get the overall mean.

    Parameters
    ----------
    model : {"independent", "pooled", "beta", "binary"}, default="independent"
        category_encoders' estimate of the variances (its default).
    """

    def __init__(self, *, model="independent"):
        self.model = model

    def _make(self):
        from category_encoders import JamesSteinEncoder as Library

        return Library(model=self.model, handle_unknown="value", handle_missing="value")


class LeaveOneOutEncoder(_SupervisedLibraryEncoder):
    """category_encoders' ``LeaveOneOutEncoder``: a training row gets the mean of y over the
    other rows of its level (``fit_transform``); new rows get the level mean
    (``fit().transform()`` differs); unseen levels get the overall mean.

    Parameters
    ----------
    sigma : float or None, default=None
        Standard deviation of the Gaussian noise category_encoders adds to training encodings
        (None: no noise, deterministic).
    """

    def __init__(self, *, sigma=None):
        self.sigma = sigma

    def _make(self):
        from category_encoders import LeaveOneOutEncoder as Library

        return Library(sigma=self.sigma, handle_unknown="value", handle_missing="value")


class QuantileEncoder(_SupervisedLibraryEncoder):
    """category_encoders' ``QuantileEncoder``: the level's median of y, smoothed towards the
    overall median with strength ``m``."""

    def __init__(self, *, quantile=0.5, m=1.0):
        self.quantile = quantile
        self.m = m

    def _make(self):
        from category_encoders import QuantileEncoder as Library

        return Library(quantile=self.quantile, m=self.m, handle_unknown="value", handle_missing="value")


class SummaryEncoder(_SupervisedLibraryEncoder):
    """category_encoders' ``SummaryEncoder``: one smoothed quantile encoding of y per quantile
    (the first and third quartiles by default; two columns per input)."""

    def __init__(self, *, quantiles=(0.25, 0.75), m=1.0):
        self.quantiles = quantiles
        self.m = m

    def _make(self):
        from category_encoders import SummaryEncoder as Library

        return Library(quantiles=list(self.quantiles), m=self.m, handle_unknown="value",
                       handle_missing="value")


class HelmertEncoder(_LibraryEncoder):
    """category_encoders' ``HelmertEncoder``: each level contrasted with the mean of the
    previous ones (L-1 columns per input); unseen levels are all zeros."""

    def __init__(self):
        pass  # no parameters: scikit-learn's clone and get_params need an explicit signature

    def _make(self):
        from category_encoders import HelmertEncoder as Library

        return Library(handle_unknown="value", handle_missing="value")


class BackwardDifferenceEncoder(_LibraryEncoder):
    """category_encoders' ``BackwardDifferenceEncoder``: each level contrasted with the previous
    one (L-1 columns per input); unseen levels are all zeros."""

    def __init__(self):
        pass  # no parameters: scikit-learn's clone and get_params need an explicit signature

    def _make(self):
        from category_encoders import BackwardDifferenceEncoder as Library

        return Library(handle_unknown="value", handle_missing="value")


class HashingEncoder(_LibraryEncoder):
    """category_encoders' ``HashingEncoder``: the feature-hashing trick, ``n_components``
    columns for all inputs together (md5); an unseen level is hashed like any other."""

    def __init__(self, *, n_components=8):
        self.n_components = n_components

    def _check_params(self):
        if not (isinstance(self.n_components, (int, np.integer)) and self.n_components >= 1):
            raise ValueError(f"n_components must be a positive integer, got {self.n_components!r}")

    def _make(self):
        from category_encoders import HashingEncoder as Library

        # one process: task processes already run in parallel
        return Library(n_components=self.n_components, max_process=1)


class _PerColumnSkrubEncoder(CategoricalEncoder):
    """A skrub single-column encoder applied to each column separately (skrub's string
    encoders take one column); missing values are the empty string's encoding."""

    def _fit(self, frame, y):
        self.encoders_ = []
        spec = []
        for j, name in enumerate(frame.columns):
            encoder = self._make()
            out = _quiet(encoder.fit_transform, frame[name].fillna(""))
            self.encoders_.append(encoder)
            spec.extend((j, f"{i:02d}") for i in range(np.asarray(out).shape[1]))
        self.output_spec_ = spec

    def _transform(self, frame):
        check_is_fitted(self, "encoders_")
        blocks = [np.asarray(_quiet(encoder.transform, frame[name].fillna("")), dtype=float)
                  for encoder, name in zip(self.encoders_, frame.columns)]
        return np.nan_to_num(np.hstack(blocks), nan=0.0) if blocks else np.empty((len(frame), 0))


class StringEncoder(_PerColumnSkrubEncoder):
    """skrub's ``StringEncoder`` (skrub's default for high-cardinality columns): tf-idf of the
    level's character n-grams reduced by a truncated SVD to at most ``n_components`` columns per
    input (fewer when the column has fewer distinct levels)."""

    def __init__(self, *, n_components=30, random_state=1444):
        self.n_components = n_components
        self.random_state = random_state

    def _make(self):
        from skrub import StringEncoder as Library

        return Library(n_components=self.n_components, random_state=self.random_state)


class GapEncoder(_PerColumnSkrubEncoder):
    """skrub's ``GapEncoder``: a Gamma-Poisson factorisation of the level's character n-gram
    counts into ``n_components`` topic activations per input. N-grams of 1 to 4 characters
    (skrub's default starts at 2, which leaves one-character levels without a vocabulary)."""

    def __init__(self, *, n_components=10, random_state=1444):
        self.n_components = n_components
        self.random_state = random_state

    def _make(self):
        from skrub import GapEncoder as Library

        return Library(n_components=self.n_components, ngram_range=(1, 4),
                       random_state=self.random_state)


class NativeEncoder(TableEncoder):
    """No encoding: each column becomes a pandas categorical of level ids, for a model that
    handles categories itself (LightGBM's and HistGradientBoosting's native handling).

    Levels are numbered in order of first appearance in the training data (missing values are one
    more level when fit saw them); an unseen level becomes a missing category, which both models
    send down their learned missing-value branch. The output is a DataFrame of ``category``
    columns whose categories are ``0 .. L-1``, the same for training and test data, so both models
    see one category set (``set_output(transform="default")`` gives the float ids, NaN unseen).
    """

    def __init__(self):
        pass  # no parameters: scikit-learn's clone and get_params need an explicit signature

    def _fit_column(self, codes, n_levels, y):
        # the last row is the unseen level: NaN (missing category)
        return np.append(np.arange(n_levels, dtype=float), np.nan)

    def _output(self, values, index):
        values = np.asarray(values, dtype=float)
        if getattr(self, "_sklearn_output_config", {}).get("transform") == "default":
            return values
        names = list(self.get_feature_names_out())
        columns = {}
        for j, name in enumerate(names):
            categories = np.arange(len(self.levels_[j]), dtype=float)
            columns[name] = pd.Categorical(values[:, j], categories=categories)
        return pd.DataFrame(columns, index=index)
