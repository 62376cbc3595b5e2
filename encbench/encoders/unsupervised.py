"""Unsupervised encoders: Drop, One-Hot, Ordinal, Binary, Count, Sum and Min-Hash.

Levels are numbered in order of first appearance in the training data, as category_encoders
(which the study used for OH, Ord, Bin, Count and Sum) numbers them; the tests check equality
with category_encoders' output on data without missing values.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ._base import CategoricalEncoder, TableEncoder

__all__ = [
    "DropEncoder", "OneHotEncoder", "OrdinalEncoder", "BinaryEncoder", "CountEncoder",
    "SumEncoder", "MinHashEncoder",
]


def _check_sparse_output(value, owner: str) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{owner}: sparse_output must be True or False, got {value!r}")


class _SparseOutput:
    """Mixin of the encoders with ``sparse_output``: a sparse result is returned as a float64
    scipy.sparse CSR matrix (never a DataFrame, whatever the output container: like
    scikit-learn's ``OneHotEncoder(sparse_output=True)``, pandas output then raises)."""

    def _output(self, values, index):
        if sp.issparse(values):
            return sp.csr_matrix(values, dtype=np.float64)
        return super()._output(values, index)


class _WideTableEncoder(_SparseOutput, TableEncoder):
    """A table encoder whose output grows with the number of levels (OH, Sum, Bin).

    With ``sparse_output=True`` the tables are scipy.sparse CSR matrices (never built dense:
    OH's dense table of 20,000 levels alone is 3.2 GB) and the output is CSR with the values of
    the dense output, zeros left implicit.
    """

    def __init__(self, *, sparse_output=False):
        self.sparse_output = sparse_output

    def _check_params(self):
        _check_sparse_output(self.sparse_output, type(self).__name__)

    def _sparse_table(self, codes, n_levels, y):
        """The table of ``_fit_column`` as CSR (overridden where the dense table is large)."""
        return sp.csr_matrix(np.asarray(self._fit_column(codes, n_levels, y), dtype=float))

    def _fit_tables(self, codes, y):
        if not self.sparse_output:
            return super()._fit_tables(codes, y)
        tables, spec = [], []
        if self._intercept is not None:
            spec.append((-1, self._intercept))
        for j, column_codes in enumerate(codes):
            table = sp.csr_matrix(self._sparse_table(column_codes, len(self.levels_[j]), y),
                                  dtype=np.float64)
            tables.append(table)
            spec.extend((j, s) for s in self._column_suffixes(j, table))
        self.tables_ = tables
        self.output_spec_ = spec

    def _lookup(self, codes, n_rows):
        if not self.sparse_output:
            return super()._lookup(codes, n_rows)
        # code -1 (unseen) selects the table's last row, as in the dense lookup
        blocks = [self.tables_[j][c] for j, c in enumerate(codes)]
        if self._intercept is not None:
            blocks.insert(0, sp.csr_matrix(np.ones((n_rows, 1))))
        if not blocks:
            return sp.csr_matrix((n_rows, 0))
        return sp.hstack(blocks, format="csr")


class DropEncoder(CategoricalEncoder):
    """Drop: the categorical information is thrown away.

    The study's baseline (its ``DropEncoder``): whatever the number of input columns, the
    output is **one** constant column of ones, named ``drop``. (One constant column per input
    column would change models that look at the number or scale of features, e.g. SVM's
    ``gamma='scale'``, and so would not reproduce the published numbers.)

    Attributes
    ----------
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
    >>> from encbench.encoders import DropEncoder
    >>> DropEncoder().fit_transform(X).iloc[:, 0].tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """

    def __init__(self):
        pass

    def _fit(self, frame, y):
        self.output_spec_ = [(-1, "drop")]

    def _transform(self, frame):
        return np.ones((frame.shape[0], 1))


class OneHotEncoder(_WideTableEncoder):
    """One-Hot (OH): one 0/1 indicator column per training level.

    Columns are named ``{column}_{level}`` (``{column}_nan`` for missing values seen in fit).
    Unseen levels (and missing values when fit saw none) are encoded as all zeros, like
    category_encoders' ``handle_unknown="value"``.

    Parameters
    ----------
    sparse_output : bool, default=False
        Return a float64 scipy.sparse CSR matrix (same values, zeros implicit) instead of a
        DataFrame, and keep the fitted tables sparse: memory grows with the number of rows
        instead of rows x levels. (scikit-learn's name; models that accept sparse input give
        the same scores only for some of them: see ``encbench.engine.protocol``.)

    Attributes
    ----------
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray or scipy.sparse.csr_matrix
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
        (sparse with ``sparse_output=True``).
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
    >>> from encbench.encoders import OneHotEncoder
    >>> OneHotEncoder().fit_transform(X).columns.tolist()
    ['color_red', 'color_blue', 'color_green']
    >>> OneHotEncoder(sparse_output=True).fit_transform(X).nnz
    6
    """

    def _fit_column(self, codes, n_levels, y):
        return np.vstack([np.eye(n_levels), np.zeros((1, n_levels))])

    def _sparse_table(self, codes, n_levels, y):
        return sp.vstack([sp.identity(n_levels, format="csr"), sp.csr_matrix((1, n_levels))])

    def _column_suffixes(self, j, table):
        return [str(level) for level in self.levels_[j]]


class OrdinalEncoder(TableEncoder):
    """Ordinal (Ord): consecutive integer ids 1, 2, ... in order of first appearance.

    Unseen levels (and missing values when fit saw none) get -1, category_encoders' value for
    unknown levels.

    Attributes
    ----------
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
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
    >>> from encbench.encoders import OrdinalEncoder
    >>> OrdinalEncoder().fit(X).transform(pd.DataFrame({"color": ["blue", "pink"]}))["color"].tolist()
    [2.0, -1.0]
    """

    def __init__(self):
        pass

    def _fit_column(self, codes, n_levels, y):
        return np.append(np.arange(1, n_levels + 1, dtype=float), -1.0)


class BinaryEncoder(_WideTableEncoder):
    """Binary (Bin): the base-2 digits of the Ordinal id (most significant first).

    A column with L levels gives ``L.bit_length()`` columns ``{column}_0, {column}_1, ...``
    (as category_encoders). Unseen levels (and missing values when fit saw none) are all zeros,
    i.e. the digits of id 0, which no training level has.

    Parameters
    ----------
    sparse_output : bool, default=False
        Return a float64 scipy.sparse CSR matrix (same values, zeros implicit) instead of a
        DataFrame, and keep the fitted tables sparse: memory grows with the number of rows
        instead of rows x levels. (scikit-learn's name; models that accept sparse input give
        the same scores only for some of them: see ``encbench.engine.protocol``.)

    Attributes
    ----------
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray or scipy.sparse.csr_matrix
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
        (sparse with ``sparse_output=True``).
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
    >>> from encbench.encoders import BinaryEncoder
    >>> BinaryEncoder().fit_transform(X).to_numpy().tolist()[:3]
    [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]
    """

    def _fit_column(self, codes, n_levels, y):
        n_digits = max(int(n_levels).bit_length(), 1)
        ids = np.append(np.arange(1, n_levels + 1), 0)
        shifts = np.arange(n_digits - 1, -1, -1)
        return (ids[:, None] >> shifts[None, :]) & 1

    def _column_suffixes(self, j, table):
        return [str(i) for i in range(table.shape[1])]


class CountEncoder(TableEncoder):
    """Count: the absolute frequency of the level in the training data.

    Unseen levels (and missing values when fit saw none) get 0.

    Attributes
    ----------
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
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
    >>> from encbench.encoders import CountEncoder
    >>> CountEncoder().fit_transform(X)["color"].tolist()
    [3.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    """

    def __init__(self):
        pass

    def _fit_column(self, codes, n_levels, y):
        return np.append(np.bincount(codes, minlength=n_levels).astype(float), 0.0)


class SumEncoder(_WideTableEncoder):
    """Sum (deviation) contrast coding: L-1 columns per column plus one ``intercept`` column.

    Level i < L-1 is the i-th unit vector, the last level (in order of first appearance) is all
    -1, so the encodings of the L levels sum to zero (paper, section 3). Unseen levels (and
    missing values when fit saw none) are all zeros, the average of the level encodings. A column
    with a single level contributes no column. The intercept (a constant 1) is the study's
    convention, kept here though category_encoders 2.11 does not emit it. (Sparse output stores the last
    level's L-1 entries of -1 explicitly: its rows are dense.)

    Parameters
    ----------
    sparse_output : bool, default=False
        Return a float64 scipy.sparse CSR matrix (same values, zeros implicit) instead of a
        DataFrame, and keep the fitted tables sparse: memory grows with the number of rows
        instead of rows x levels. (scikit-learn's name; models that accept sparse input give
        the same scores only for some of them: see ``encbench.engine.protocol``.)

    Attributes
    ----------
    levels_ : list of pandas.Index
        Training levels of each column, in order of first appearance (NaN included when present).
    tables_ : list of ndarray or scipy.sparse.csr_matrix
        Per column, the encoding of each level (rows in ``levels_`` order) and, last row, of unseen levels.
        (sparse with ``sparse_output=True``).
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
    >>> from encbench.encoders import SumEncoder
    >>> SumEncoder().fit_transform(X).columns.tolist()
    ['intercept', 'color_0', 'color_1']
    """

    _intercept = "intercept"

    def _fit_column(self, codes, n_levels, y):
        contrasts = np.vstack([np.eye(n_levels - 1), -np.ones((1, n_levels - 1))])
        return np.vstack([contrasts, np.zeros((1, n_levels - 1))])

    def _sparse_table(self, codes, n_levels, y):
        width = n_levels - 1
        return sp.vstack([sp.identity(width, format="csr"), sp.csr_matrix(-np.ones((1, width))),
                          sp.csr_matrix((1, width))])

    def _column_suffixes(self, j, table):
        return [str(i) for i in range(table.shape[1])]


class MinHashEncoder(CategoricalEncoder):
    """Min-Hash (MH): skrub's ``MinHashEncoder`` algorithm applied to each column separately.

    Each level (as a string) is decomposed into character n-grams and encoded by
    ``n_components`` min-hashes (Cerda and Varoquaux), so similar strings get similar
    encodings. Output columns ``{column}_00 ... {column}_29``. Unseen levels are hashed like any
    other string (the encoding depends only on the level's text); missing values and empty
    strings are encoded as all zeros (skrub's convention).

    Parameters
    ----------
    n_components : int, default=30
        Number of hash functions (skrub's default, as the study used).
    ngram_range : tuple of int, default=(2, 4)
        Range of character n-gram lengths.
    hashing : {"fast", "murmur"}, default="fast"
        Hashing function: ``"fast"`` is computed here (skrub's fast hash, in float64);
        ``"murmur"`` uses skrub's ``MinHashEncoder``.

    Attributes
    ----------
    encoders_ : list of skrub.MinHashEncoder or None
        With ``hashing="murmur"``, one fitted skrub encoder per input column; None with
        ``hashing="fast"`` (computed here, nothing to fit).
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
    >>> from encbench.encoders import MinHashEncoder
    >>> MinHashEncoder(n_components=2).fit_transform(X).shape
    (6, 2)
    """

    def __init__(self, *, n_components=30, ngram_range=(2, 4), hashing="fast"):
        self.n_components = n_components
        self.ngram_range = ngram_range
        self.hashing = hashing

    def _make(self):
        # Imported lazily: skrub is heavy and only the murmur hashing needs it.
        from skrub import MinHashEncoder as SkrubMinHash

        return SkrubMinHash(
            n_components=self.n_components, ngram_range=tuple(self.ngram_range),
            hashing=self.hashing,
        )

    def _check_params(self):
        if not (isinstance(self.n_components, (int, np.integer)) and self.n_components >= 1):
            raise ValueError(f"n_components must be a positive integer, got {self.n_components!r}")

    def _fit(self, frame, y):
        # "fast" is computed here (below), in float64 like the study's dirty_cat: skrub's output
        # is float32, which rounds the 32-bit hashes (e.g. -1814148148 -> -1814148096).
        self.encoders_ = (None if self.hashing == "fast"
                          else [self._make().fit(frame[name]) for name in frame.columns])
        width = len(str(self.n_components - 1))
        self.output_spec_ = [
            (j, str(i).zfill(width))
            for j in range(frame.shape[1])
            for i in range(self.n_components)
        ]

    def _transform(self, frame):
        check_is_fitted(self, "output_spec_")
        if self.encoders_ is None:
            low, high = (int(v) for v in self.ngram_range)
            lengths = range(low, high + 1)
            blocks = [_fast_min_hash_column(frame[name], int(self.n_components), lengths)
                      for name in frame.columns]
        else:
            blocks = [np.asarray(encoder.transform(frame[name]), dtype=float)
                      for encoder, name in zip(self.encoders_, frame.columns)]
        return np.hstack(blocks)


_INT32_MAX = 2**31 - 1


@functools.lru_cache(maxsize=4096)
def _hash_vector(length: int, seed: int) -> np.ndarray:
    """The random int32 vector of hash function ``seed`` for n-grams of ``length`` characters
    (Cerda and Varoquaux's fast min-hash: an n-gram's hash is its dot product with it)."""
    rng = np.random.RandomState(seed)
    return rng.randint(-_INT32_MAX, _INT32_MAX, size=length, dtype=np.int32)


def fast_min_hash(text: str, n_components: int, lengths) -> np.ndarray:
    """Min-hashes of ``text``: for each of ``n_components`` hash functions, the smallest hash
    over its character n-grams of the given lengths (wrapping 32-bit dot products of the
    characters' signed bytes with :func:`_hash_vector`). The empty string encodes as zeros."""
    codes = np.frombuffer(text.encode(), dtype=np.int8, count=len(text))
    out = np.zeros(n_components)
    if codes.size == 0:
        return out
    for seed in range(n_components):
        out[seed] = min(int(np.correlate(codes, _hash_vector(n, seed)).min()) for n in lengths)
    return out


def _fast_min_hash_column(column, n_components: int, lengths) -> np.ndarray:
    """Min-hashes of a str column (NaN: zeros), each distinct level hashed once."""
    codes, uniques = pd.factorize(column.to_numpy(dtype=object), use_na_sentinel=True)
    # the last row is for NaN, whose code is -1
    table = np.vstack([fast_min_hash(str(level), n_components, lengths) for level in uniques]
                      + [np.zeros(n_components)])
    return table[codes]
