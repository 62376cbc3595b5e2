"""Data-constraining wrappers: cross-validated (CV) and BlowUp (BU) versions of an encoder.

``CrossValidatedEncoder(encoder=MeanTargetEncoder(), n_splits=5)`` is CVMT_5;
``BlowUpEncoder(encoder=GLMMEncoder(), n_splits=2)`` is BUGLMM_2 (docs/ARCHITECTURE.md, Encoders).

Folds are Folds are ``StratifiedKFold(n_splits, shuffle=True, random_state)`` on y, as the study's
``CVRegularized`` and ``CVBlowUp`` (the registry passes the study's seed, 1444), whenever
scikit-learn can stratify (some class has at least ``n_splits`` rows; a rarer class is then
spread over fewer folds); plain shuffled K-fold with the same seed otherwise (a continuous y:
fractions or more than :data:`MAX_CLASSES` distinct values; a tiny training set), and
``n_splits`` is capped at the number of rows.

``OneVsRestEncoder(encoder=MeanTargetEncoder())`` is MT for a multiclass target: one
encoder per class ``k`` fitted on ``y == k``, one column per class, as scikit-learn's
``TargetEncoder(target_type="multiclass")``.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils.validation import check_is_fitted

from ._base import CategoricalEncoder
from .unsupervised import _check_sparse_output, _SparseOutput

__all__ = ["CrossValidatedEncoder", "BlowUpEncoder", "OneVsRestEncoder", "make_folds", "MAX_CLASSES"]

#: a y with more distinct values than this (or with fractions) is continuous: folds are not
#: stratified on it
MAX_CLASSES = 50


def make_folds(y: np.ndarray, n_splits: int, random_state) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, held-out) row indices of ``n_splits`` folds, stratified on y when possible.

    Raises
    ------
    ValueError
        If ``n_splits`` is not an integer >= 2 or there are fewer than 2 rows.
    """
    _check_n_splits(n_splits)
    n_rows = len(y)
    if n_rows < 2:
        raise ValueError(f"cross-validated encoding needs at least 2 rows, got n_samples={n_rows}")
    k = min(int(n_splits), n_rows)
    _, class_counts = np.unique(y, return_counts=True)
    is_labels = bool(np.all(np.equal(np.mod(y, 1), 0))) and len(class_counts) <= MAX_CLASSES
    if is_labels and class_counts.max() >= k:
        splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=random_state)
    else:
        splitter = KFold(n_splits=k, shuffle=True, random_state=random_state)
    placeholder = np.zeros((n_rows, 1))
    return list(splitter.split(placeholder, y))


def _check_n_splits(n_splits):
    if not (isinstance(n_splits, numbers.Integral) and not isinstance(n_splits, bool) and n_splits >= 2):
        raise ValueError(f"n_splits must be an integer >= 2, got {n_splits!r}")


def _positional(frame):
    """The frame with integer column labels: inner encoders then name their outputs from the
    names the wrapper passes to ``get_feature_names_out`` (the wrapper's own input names)."""
    return frame.set_axis(range(frame.shape[1]), axis=1)


def _check_encoder(encoder, owner):
    if encoder is None or not hasattr(encoder, "fit") or not hasattr(encoder, "transform"):
        raise ValueError(f"{owner} needs an encoder with fit/transform, got {encoder!r}")


class _FoldWrapper(CategoricalEncoder):
    """Parameters shared by the CV and BlowUp wrappers (a supervised encoder, folds, seed)."""

    _supervised = True

    def __init__(self, *, encoder=None, n_splits=5, random_state=None):
        self.encoder = encoder
        self.n_splits = n_splits
        self.random_state = random_state

    def _check_params(self):
        _check_encoder(self.encoder, type(self).__name__)
        _check_n_splits(self.n_splits)


class CrossValidatedEncoder(_FoldWrapper):
    """Cross-validated encoder (CVMT_k, CVGLMM_k): out-of-fold encodings of the training rows.

    ``fit_transform(X, y)`` splits the training rows into ``n_splits`` folds and encodes each
    fold with a clone of ``encoder`` fitted on the other folds, so **a training row's encoding
    never depends on its own target**. It also fits ``encoder_`` on all training rows, which
    ``transform`` (test data) uses. Hence ``fit_transform(X, y)`` differs from
    ``fit(X, y).transform(X)``; ``fit`` alone only fits ``encoder_``. Unseen levels and missing
    values follow the wrapped encoder (for MT and GLMM: the prior / the fixed intercept; in
    ``fit_transform``, a level absent from the other folds is unseen for that fold's encoder).

    Parameters
    ----------
    encoder : estimator
        A supervised encoder of this package (one output column per input column), e.g.
        ``MeanTargetEncoder()``.
    n_splits : int, default=5
        Number of folds (the study used 2, 5, 10).
    random_state : int, RandomState or None, default=None
        Seed of the fold assignment.

    Attributes
    ----------
    encoder_ : estimator
        Clone of ``encoder`` fitted on all training rows (used by ``transform``).
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Input column names seen in ``fit`` (only when they were all strings).
    output_spec_ : list of (int, str or None)
        One ``(input position, suffix)`` per output column (see ``get_feature_names_out``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"color": ["red", "blue", "red", "green", "blue", "red"]})
    >>> y = [1, 0, 1, 0, 1, 0]
    >>> from encbench.encoders import CrossValidatedEncoder
    >>> from encbench.encoders import MeanTargetEncoder
    >>> cv = CrossValidatedEncoder(encoder=MeanTargetEncoder(), n_splits=2, random_state=0)
    >>> cv.fit_transform(X, y)["color"].round(3).tolist()  # out-of-fold
    [1.0, 1.0, 0.5, 0.333, 0.0, 1.0]
    """

    def _fit(self, frame, y):
        _check_encoder(self.encoder, type(self).__name__)
        self.encoder_ = clone(self.encoder).fit(_positional(frame), y)
        self.output_spec_ = [
            (-1, name) for name in self.encoder_.get_feature_names_out(list(frame.columns))
        ]

    def _transform(self, frame):
        return np.asarray(self.encoder_.transform(_positional(frame)), dtype=float)

    def get_feature_names_out(self, input_features=None):
        """Output names: those of the wrapped encoder."""
        check_is_fitted(self, "encoder_")
        return self.encoder_.get_feature_names_out(self._input_names(input_features))

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on all rows and return the **out-of-fold** encodings of the training rows."""
        frame = self._validate_X(X, reset=True)
        target = self._check_y(y, frame.shape[0])
        self._fit(frame, target)
        folds = make_folds(target, self.n_splits, self.random_state)
        frame = _positional(frame)
        out = np.empty((frame.shape[0], len(self.output_spec_)))
        for train, held_out in folds:
            fold_encoder = clone(self.encoder).fit(frame.iloc[train], target[train])
            encoded = np.asarray(fold_encoder.transform(frame.iloc[held_out]), dtype=float)
            if encoded.shape[1] != out.shape[1]:
                raise ValueError(
                    f"{type(self.encoder).__name__} gave {encoded.shape[1]} columns on a fold "
                    f"but {out.shape[1]} on all rows: only fixed-width encoders can be "
                    "cross-validated"
                )
            out[held_out] = encoded
        return self._output(out, frame.index)


class BlowUpEncoder(_SparseOutput, _FoldWrapper):
    """BlowUp encoder (BUMT_k, BUGLMM_k): one encoder per fold, all k encodings side by side.

    ``fit`` splits the training rows into ``n_splits`` folds and fits one clone of ``encoder``
    on each fold's training part (the other k-1 folds). ``transform`` outputs the k encodings
    next to each other, for training and test data alike (``fit_transform`` equals
    ``fit(X, y).transform(X)``), so the output has k times the wrapped encoder's columns, named
    ``{name}_fold{i}``. Unseen levels and missing values follow the wrapped encoder (per fold: a
    level absent from a fold's training part is unseen for that fold's encoder).

    Parameters
    ----------
    encoder : estimator
        A supervised encoder of this package, e.g. ``MeanTargetEncoder()``.
    n_splits : int, default=5
        Number of folds and encoders (the study used 2, 5, 10).
    random_state : int, RandomState or None, default=None
        Seed of the fold assignment.
    sparse_output : bool, default=False
        Return a float64 scipy.sparse CSR matrix (same values) instead of a DataFrame. Useful
        with a wide wrapped encoder that outputs sparse blocks itself (e.g.
        ``OneHotEncoder(sparse_output=True)``): they are then never made dense. With False, the
        wrapped encoder's sparse blocks are made dense.

    Attributes
    ----------
    encoders_ : list of estimator
        One clone of ``encoder`` per fold, fitted on that fold's training part.
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Input column names seen in ``fit`` (only when they were all strings).
    output_spec_ : list of (int, str or None)
        One ``(input position, suffix)`` per output column (see ``get_feature_names_out``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"color": ["red", "blue", "red", "green", "blue", "red"]})
    >>> y = [1, 0, 1, 0, 1, 0]
    >>> from encbench.encoders import BlowUpEncoder
    >>> from encbench.encoders import MeanTargetEncoder
    >>> bu = BlowUpEncoder(encoder=MeanTargetEncoder(), n_splits=2, random_state=0)
    >>> bu.fit_transform(X, y).columns.tolist()
    ['color_fold0', 'color_fold1']
    """

    def __init__(self, *, encoder=None, n_splits=5, random_state=None, sparse_output=False):
        super().__init__(encoder=encoder, n_splits=n_splits, random_state=random_state)
        self.sparse_output = sparse_output

    def _check_params(self):
        super()._check_params()
        _check_sparse_output(self.sparse_output, type(self).__name__)

    def _fit(self, frame, y):
        _check_encoder(self.encoder, type(self).__name__)
        folds = make_folds(y, self.n_splits, self.random_state)
        names = list(frame.columns)
        frame = _positional(frame)
        self.encoders_ = [
            clone(self.encoder).fit(frame.iloc[train], y[train]) for train, _ in folds
        ]
        self.output_spec_ = [
            (-1, f"{name}_fold{i}")
            for i, encoder in enumerate(self.encoders_)
            for name in encoder.get_feature_names_out(names)
        ]

    def _transform(self, frame):
        frame = _positional(frame)
        blocks = [e.transform(frame) for e in self.encoders_]
        if self.sparse_output:
            return sp.hstack([b if sp.issparse(b) else sp.csr_matrix(np.asarray(b, dtype=float))
                              for b in blocks], format="csr")
        return np.hstack([b.toarray() if sp.issparse(b) else np.asarray(b, dtype=float)
                          for b in blocks])

    def get_feature_names_out(self, input_features=None):
        """Output names ``{name}_fold{i}``, fold by fold."""
        check_is_fitted(self, "encoders_")
        base = self._input_names(input_features)
        return np.asarray(
            [
                f"{name}_fold{i}"
                for i, encoder in enumerate(self.encoders_)
                for name in encoder.get_feature_names_out(base)
            ],
            dtype=object,
        )


class OneVsRestEncoder(CategoricalEncoder):
    """A supervised encoder for a multiclass target: one clone of ``encoder`` per class.

    ``fit`` fits, for each class ``k`` of y (sorted, as ``numpy.unique``), a clone of
    ``encoder`` on ``(X, y == k)`` (a 0/1 target); ``transform`` puts their encodings side by
    side, class by class, named ``{name}_{k}`` (``colour_0, colour_1, colour_2`` for one input
    column and three classes). ``fit_transform`` is each clone's ``fit_transform``, so the
    cross-validated and ordered encoders (CV, CB) keep their out-of-fold training encodings.
    A class absent from a later ``transform`` changes nothing: the columns are fixed at fit.

    Parameters
    ----------
    encoder : estimator
        A supervised encoder of this package, e.g. ``MeanTargetEncoder()``.

    Attributes
    ----------
    classes_ : ndarray
        The classes of the training target, in column order.
    encoders_ : list of estimator
        One fitted clone of ``encoder`` per class.
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Input column names seen in ``fit`` (only when they were all strings).
    output_spec_ : list of (int, str or None)
        One ``(input position, suffix)`` per output column (see ``get_feature_names_out``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"colour": ["red", "blue", "red", "blue"]})
    >>> from encbench.encoders import MeanTargetEncoder, OneVsRestEncoder
    >>> OneVsRestEncoder(encoder=MeanTargetEncoder()).fit_transform(X, [0, 1, 2, 1]).columns.tolist()
    ['colour_0', 'colour_1', 'colour_2']
    """

    _supervised = True

    def __init__(self, *, encoder=None):
        self.encoder = encoder

    def _check_params(self):
        _check_encoder(self.encoder, type(self).__name__)

    def _set_spec(self, names: list[str]) -> None:
        self.output_spec_ = [
            (-1, f"{name}_{_class_text(k)}")
            for k, encoder in zip(self.classes_, self.encoders_)
            for name in encoder.get_feature_names_out(names)
        ]

    def _fit(self, frame, y):
        self.classes_ = np.unique(y)
        positional = _positional(frame)
        self.encoders_ = [clone(self.encoder).fit(positional, (y == k).astype(float))
                          for k in self.classes_]
        self._set_spec(list(frame.columns))

    def _transform(self, frame):
        positional = _positional(frame)
        return np.hstack([np.asarray(e.transform(positional), dtype=float) for e in self.encoders_])

    def fit_transform(self, X, y=None, **fit_params):
        """Fit one clone per class and return each clone's own training encoding, side by side."""
        frame = self._validate_X(X, reset=True)
        target = self._check_y(y, frame.shape[0])
        self.classes_ = np.unique(target)
        positional = _positional(frame)
        self.encoders_, blocks = [], []
        for k in self.classes_:
            encoder = clone(self.encoder)
            blocks.append(np.asarray(encoder.fit_transform(positional, (target == k).astype(float)),
                                     dtype=float))
            self.encoders_.append(encoder)
        self._set_spec(list(frame.columns))
        return self._output(np.hstack(blocks), frame.index)

    def get_feature_names_out(self, input_features=None):
        """Output names ``{name}_{class}``, class by class."""
        check_is_fitted(self, "encoders_")
        base = self._input_names(input_features)
        return np.asarray([f"{name}_{_class_text(k)}" for k, encoder in zip(self.classes_, self.encoders_)
                           for name in encoder.get_feature_names_out(base)], dtype=object)


def _class_text(value) -> str:
    """A class as it appears in a column name: integral floats without '.0'."""
    value = float(value)
    return str(int(value)) if value.is_integer() else str(value)
