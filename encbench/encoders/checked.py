"""The wrapper a custom encoder runs in inside a task: every output checked for NaN and infinity.

Apart from :mod:`encbench.custom` (which the command line imports at start) because it needs
scikit-learn, which only the task processes do.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.metaestimators import available_if

from encbench.custom import build


class CheckedEncoder(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """A custom encoder whose every output is checked for NaN and infinity, on all the data.

    The pre-run check fits the encoder on a sample; an encoder that returns NaN only on the
    full data (a level the sample lacks, a count that overflows) would reach the model, and
    models that accept NaN (DT) would score it. In a task, every ``fit_transform`` and
    ``transform`` output is checked, and one holding NaN or infinity fails the task with the
    count and the column. Outputs pass through unchanged, so scores are those of the encoder.

    Parameters
    ----------
    encoder : estimator
        The custom encoder; fitted in place (as a :class:`~sklearn.pipeline.Pipeline` fits its
        steps), so ``fit_transform`` is the encoder's own (a supervised encoder's may differ
        from ``fit().transform()``).
    name : str
        How errors name it (its import path).

    Attributes
    ----------
    n_features_in_ : int
        Columns seen in fit.

    Examples
    --------
    >>> import json

import numpy as np
import pandas as pd
    >>> from sklearn.preprocessing import FunctionTransformer
    >>> positive = FunctionTransformer(lambda X: np.where(X > 0, X, np.nan))
    >>> enc = CheckedEncoder(encoder=positive, name="mypkg:positive")
    >>> enc.fit_transform(np.array([[1.0], [2.0]])).ravel().tolist()
    [1.0, 2.0]
    >>> enc.transform(np.array([[1.0, 0.0]]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: transform of encoder 'mypkg:positive' returned 1 NaN or infinite values in 1 rows ...
    """

    def __init__(self, *, encoder=None, name: str = "custom"):
        self.encoder = encoder
        self.name = name

    def fit(self, X, y=None, **fit_params):
        self.encoder.fit(X, y, **fit_params)
        self.n_features_in_ = np.shape(X)[1]
        return self

    def fit_transform(self, X, y=None, **fit_params):
        self.n_features_in_ = np.shape(X)[1]
        if hasattr(self.encoder, "fit_transform"):
            output = self.encoder.fit_transform(X, y, **fit_params)
        else:
            output = self.encoder.fit(X, y, **fit_params).transform(X)
        return self._checked(output, "fit_transform")

    def transform(self, X):
        return self._checked(self.encoder.transform(X), "transform")

    @available_if(lambda self: hasattr(self.encoder, "get_feature_names_out"))
    def get_feature_names_out(self, input_features=None):
        return self.encoder.get_feature_names_out(input_features)

    def _checked(self, output, what: str):
        count, column = non_finite(output)
        if count:
            raise ValueError(
                f"{what} of encoder {self.name!r} returned {count} NaN or infinite values in "
                f"{output.shape[0]} rows (e.g. in output column {column}); the pre-run check fits a "
                f"sample only: encode missing, unseen and rare levels as finite numbers")
        return output


def build_from_json(text: str):
    """Build the encoder a task carries (:meth:`CustomEncoder.to_json`), wrapped in a
    :class:`~encbench.encoders.checked.CheckedEncoder` that checks every output it gives."""
    data = json.loads(text)
    return CheckedEncoder(encoder=build(data["import"], data.get("params")), name=data["import"])


#: rows of an encoder output checked for NaN and infinity at a time (bounds the check's memory).
_CHECK_CHUNK = 1 << 16


def non_finite(output) -> tuple[int, int | None]:
    """NaN and infinite values in an encoder's output, and the first column holding one.

    Sparse matrices, data frames (column by column) and arrays (by chunks of rows) are checked
    without a full dense copy; columns that are not numeric are not counted (a model refuses
    them with its own error).
    """
    if hasattr(output, "tocsc") and hasattr(output, "data"):  # scipy.sparse
        csc = output.tocsc()
        bad = ~np.isfinite(csc.data.astype(float, copy=False))
        if not bad.any():
            return 0, None
        column = int(np.searchsorted(csc.indptr, np.flatnonzero(bad)[0], side="right") - 1)
        return int(bad.sum()), column
    if isinstance(output, pd.DataFrame):
        total, first = 0, None
        for j in range(output.shape[1]):
            try:
                values = np.asarray(output.iloc[:, j], dtype=float)
            except (TypeError, ValueError):
                continue
            n = int((~np.isfinite(values)).sum())
            if n and first is None:
                first = j
            total += n
        return total, first
    array = np.asarray(output)
    if array.dtype.kind in "biu" or array.ndim == 0:
        return 0, None
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    total, first = 0, None
    for start in range(0, len(array), _CHECK_CHUNK):
        try:
            chunk = np.asarray(array[start:start + _CHECK_CHUNK], dtype=float)
        except (TypeError, ValueError):
            return total, first
        bad = ~np.isfinite(chunk)
        if bad.any():
            if first is None:
                first = int(np.argwhere(bad)[0][-1])
            total += int(bad.sum())
    return total, first
