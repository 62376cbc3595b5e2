"""Shared machinery of the encoder zoo: input validation, level coding, output frames.

Every encoder of :mod:`encbench.encoders` follows the same conventions (docs/ARCHITECTURE.md, Encoders):

* input: a pandas DataFrame of categorical columns (object, pandas ``str`` or ``category`` dtype),
  or a 2-D numpy array (columns are then named ``x0, x1, ...`` as scikit-learn does). Values are
  compared as strings (``str(value)``), so ``category`` columns with integer categories, object
  columns and pandas ``str`` columns holding the same text encode identically.
* missing values (``None``, ``NaN``, ``pd.NA``) are **one more level**: if the training data has
  missing values they get their own encoding like any level; if it has none, a missing value at
  transform time is an unseen level.
* unseen levels at transform time get a documented value (per encoder), never an exception and
  never NaN.
* output: a float64 DataFrame with the input's index and column names
  ``get_feature_names_out()`` (a numpy array after ``set_output(transform="default")``).
* sparse and complex input are refused; parameters are validated before ``fit`` sets any
  attribute; messages use scikit-learn's wording (``tests/test_encoders_sklearn_checks.py``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

__all__ = ["CategoricalEncoder", "TableEncoder", "as_string_frame", "check_target"]


def _input_frame(X) -> pd.DataFrame:
    """Return ``X`` as a DataFrame (numpy 2-D arrays get positional integer column labels).

    Sparse and complex input are refused (a level is a value compared as text: a sparse
    matrix's implicit zeros and complex numbers are not categorical data); the messages use
    scikit-learn's wording so that generic tools recognise them.
    """
    if sp.issparse(X):
        raise TypeError(
            f"sparse input is not supported (categorical columns are compared as text): got "
            f"{type(X).__name__}; pass a dense array or a DataFrame"
        )
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        if any(getattr(dtype, "kind", None) == "c" for dtype in X.dtypes):
            raise ValueError(f"Complex data not supported: got dtypes {list(map(str, X.dtypes))!r}")
        return X
    kind = getattr(getattr(X, "dtype", None), "kind", None)
    array = np.asarray(X, dtype=object)
    if kind == "c" or (kind is None and any(isinstance(v, complex) for v in array.ravel()[:1000])):
        raise ValueError(f"Complex data not supported: got {np.asarray(X).dtype}")
    if array.ndim != 2:
        raise ValueError(
            f"expected a 2-D array or DataFrame of categorical columns, got shape {array.shape!r}. "
            "Reshape your data either using array.reshape(-1, 1) if your data has a single "
            "feature or array.reshape(1, -1) if it contains a single sample."
        )
    return pd.DataFrame(array)


def as_string_frame(X, names) -> pd.DataFrame:
    """Convert the columns of ``X`` to the pandas ``str`` dtype, missing values kept as NaN.

    Parameters
    ----------
    X : DataFrame
        Categorical columns in the order of ``names``.
    names : sequence of str
        Column names of the result.
    """
    columns = {}
    for position, name in enumerate(names):
        column = X.iloc[:, position]
        # Categorical -> object first: astype("str") on a category column keeps the categorical
        # machinery around; going through object yields a plain str column in every case.
        if isinstance(column.dtype, pd.CategoricalDtype):
            column = column.astype(object)
        # Keep the str extension array itself: a numpy round trip would make pandas infer and
        # convert every column again (most of a simple encoder's time on data already in str).
        columns[name] = column.astype("str").array
    return pd.DataFrame(columns, index=X.index, columns=list(names))


def check_target(y, n_rows: int, owner: str) -> np.ndarray:
    """Return the target as a 1-D float array of length ``n_rows``.

    Raises
    ------
    ValueError
        If ``y`` is missing, has the wrong length, is not numeric or contains NaN.
    """
    if y is None:
        raise ValueError(f"{owner} is supervised: it requires y to be passed, but the target y is None")
    values = y.to_numpy() if hasattr(y, "to_numpy") else y
    try:
        values = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"{owner} needs a numeric 0/1 target, got values such as {np.asarray(values)[:3]!r}"
        ) from None
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1 or values.shape[0] != n_rows:
        raise ValueError(
            f"{owner}: y must be 1-D with one value per row ({n_rows}), got shape {values.shape!r}"
        )
    if np.isnan(values).any():
        raise ValueError(f"{owner}: y contains NaN at rows {np.flatnonzero(np.isnan(values))[:5]!r}")
    return values


def unique_names(names: list[str]) -> list[str]:
    """Make names unique by suffixing repeats with ``_1``, ``_2``, ... (first occurrence kept)."""
    seen: set[str] = set()
    result = []
    for name in names:
        candidate, k = name, 0
        while candidate in seen:
            k += 1
            candidate = f"{name}_{k}"
        seen.add(candidate)
        result.append(candidate)
    return result


class CategoricalEncoder(TransformerMixin, BaseEstimator):
    """Base class: input checks, feature names and output frames shared by every encoder.

    Subclasses implement ``_fit(frame, y)`` (``frame``: str-dtype DataFrame whose columns are the
    input names; returns nothing) and ``_transform(frame)`` (returns a float 2-D array), and set
    ``self.output_spec_``: one ``(input_position, suffix)`` pair per output column. The output name
    is the input name if ``suffix`` is None, ``f"{input}_{suffix}"`` otherwise, and just ``suffix``
    when ``input_position`` is -1 (a column not tied to an input, like Sum's intercept).
    """

    #: supervised encoders need y in ``fit`` and set ``target_tags.required``.
    _supervised = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        tags.target_tags.required = self._supervised
        return tags

    # -- input validation -------------------------------------------------------------------
    def _check_params(self) -> None:
        """Validate the constructor's parameters; called before fitting sets any attribute.

        Subclasses with parameters override this and raise ``ValueError`` naming the value.
        """

    def _validate_X(self, X, *, reset: bool) -> pd.DataFrame:
        if reset:
            self._check_params()  # before any state is set (scikit-learn's convention)
        frame = _input_frame(X)
        if reset:
            if frame.shape[0] == 0 or frame.shape[1] == 0:
                what = "sample" if frame.shape[0] == 0 else "feature"
                n = frame.shape[0] if frame.shape[0] == 0 else frame.shape[1]
                raise ValueError(
                    f"{type(self).__name__} needs at least one row and one column: found {n} "
                    f"{what}(s) (shape={frame.shape!r}) while a minimum of 1 is required."
                )
            labels = list(frame.columns)
            if all(isinstance(c, str) for c in labels):
                if len(set(labels)) != len(labels):
                    raise ValueError(f"duplicate column names in X: got {labels!r}")
                self.feature_names_in_ = np.asarray(labels, dtype=object)
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            self.n_features_in_ = frame.shape[1]
        else:
            names_in = getattr(self, "feature_names_in_", None)
            if names_in is not None and isinstance(X, pd.DataFrame):
                missing = [c for c in names_in if c not in frame.columns]
                if missing:
                    raise ValueError(f"columns seen in fit are missing from X: got {missing!r}")
                frame = frame.loc[:, list(names_in)]
            if frame.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {frame.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input (got {frame.shape[1]} columns, it "
                    f"was fitted on {self.n_features_in_})"
                )
        return as_string_frame(frame, self._input_names())

    def _input_names(self, input_features=None) -> list[str]:
        if input_features is not None:
            names = [str(f) for f in input_features]
            if len(names) != self.n_features_in_:
                raise ValueError(
                    f"input_features should have {self.n_features_in_} names, got {names!r}"
                )
            names_in = getattr(self, "feature_names_in_", None)
            if names_in is not None and list(names_in) != names:
                raise ValueError(
                    f"input_features differ from the names seen in fit: got {names!r}, "
                    f"expected {list(names_in)!r}"
                )
            return names
        names_in = getattr(self, "feature_names_in_", None)
        if names_in is not None:
            return [str(n) for n in names_in]
        return [f"x{i}" for i in range(self.n_features_in_)]

    def _check_y(self, y, n_rows: int) -> np.ndarray:
        return check_target(y, n_rows, type(self).__name__)

    # -- public API -------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit the encoder on the categorical columns ``X`` (and the 0/1 target ``y``).

        Returns
        -------
        self
        """
        frame = self._validate_X(X, reset=True)
        target = self._check_y(y, frame.shape[0]) if self._supervised else None
        self._fit(frame, target)
        return self

    def transform(self, X):
        """Encode ``X`` with the fitted encoder.

        Returns
        -------
        DataFrame
            float64, same index as ``X``, columns ``get_feature_names_out()``, no NaN (a
            float64 numpy array after ``set_output(transform="default")``).
        """
        check_is_fitted(self, "output_spec_")
        frame = self._validate_X(X, reset=False)
        return self._output(self._transform(frame), frame.index)

    def get_feature_names_out(self, input_features=None):
        """Output column names, built from the input names (see the class docstring)."""
        check_is_fitted(self, "output_spec_")
        base = self._input_names(input_features)
        names = []
        for position, suffix in self.output_spec_:
            if position < 0:
                names.append(str(suffix))
            elif suffix is None:
                names.append(base[position])
            else:
                names.append(f"{base[position]}_{suffix}")
        return np.asarray(unique_names(names), dtype=object)

    def _output(self, values: np.ndarray, index):
        values = np.asarray(values, dtype=float)
        # A DataFrame unless the user asked for scikit-learn's default container explicitly
        # (``set_output(transform="default")``: a numpy array, as scikit-learn's transformers).
        if getattr(self, "_sklearn_output_config", {}).get("transform") == "default":
            return values
        return pd.DataFrame(values, index=index, columns=list(self.get_feature_names_out()))

    # -- to implement -----------------------------------------------------------------------
    def _fit(self, frame: pd.DataFrame, y: np.ndarray | None) -> None:  # pragma: no cover
        raise NotImplementedError

    def _transform(self, frame: pd.DataFrame) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class TableEncoder(CategoricalEncoder):
    """An encoder that maps each level of each column to a fixed vector.

    ``_fit_column(codes, n_levels, y)`` returns a table of shape ``(n_levels + 1, k)``: row ``i``
    encodes level ``i`` (levels numbered in order of first appearance, missing values included),
    the last row encodes every level not seen in fit. ``_column_suffixes(j, table)`` names the
    ``k`` output columns of input column ``j``.

    Fitted attributes: ``levels_`` (one pandas Index of training levels per column, NaN included
    when present) and ``tables_``.
    """

    #: name of a constant column of ones prepended to the output (Sum's intercept), or None.
    _intercept: str | None = None

    def _fit_levels(self, frame: pd.DataFrame) -> list[np.ndarray]:
        codes_per_column, levels = [], []
        for name in frame.columns:
            codes, uniques = pd.factorize(frame[name], use_na_sentinel=False)
            codes_per_column.append(codes.astype(np.intp, copy=False))
            levels.append(pd.Index(uniques))
        self.levels_ = levels
        return codes_per_column

    def _codes(self, frame: pd.DataFrame) -> list[np.ndarray]:
        # get_indexer gives -1 for levels not seen in fit: exactly the "unseen" row of a table.
        return [
            self.levels_[j].get_indexer(frame.iloc[:, j]).astype(np.intp, copy=False)
            for j in range(frame.shape[1])
        ]

    def _fit(self, frame, y):
        codes = self._fit_levels(frame)
        self._fit_tables(codes, y)

    def _fit_tables(self, codes: list[np.ndarray], y) -> None:
        tables, spec = [], []
        if self._intercept is not None:
            spec.append((-1, self._intercept))
        for j, column_codes in enumerate(codes):
            table = np.asarray(
                self._fit_column(column_codes, len(self.levels_[j]), y), dtype=float
            )
            if table.ndim == 1:
                table = table[:, None]
            tables.append(table)
            spec.extend((j, s) for s in self._column_suffixes(j, table))
        self.tables_ = tables
        self.output_spec_ = spec

    def _lookup(self, codes: list[np.ndarray], n_rows: int) -> np.ndarray:
        blocks = [self.tables_[j][c] for j, c in enumerate(codes)]
        if self._intercept is not None:
            blocks.insert(0, np.ones((n_rows, 1)))
        if not blocks:
            return np.empty((n_rows, 0))
        return np.hstack(blocks)

    def _transform(self, frame):
        return self._lookup(self._codes(frame), frame.shape[0])

    def fit_transform(self, X, y=None, **fit_params):
        """Fit, then encode the training data (same result as ``fit(X, y).transform(X)``)."""
        frame = self._validate_X(X, reset=True)
        target = self._check_y(y, frame.shape[0]) if self._supervised else None
        codes = self._fit_levels(frame)
        self._fit_tables(codes, target)
        return self._output(self._lookup(codes, frame.shape[0]), frame.index)

    def _column_suffixes(self, j: int, table: np.ndarray) -> list:
        # One output column per input column, named like the input.
        return [None] * table.shape[1]

    def _fit_column(self, codes, n_levels, y):  # pragma: no cover
        raise NotImplementedError
