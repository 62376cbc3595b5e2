"""Column kinds: which columns of a table the protocol treats as categorical, and their levels.

Categorical columns are the text-like ones (object, str/string and category dtypes) unless the user
lists them (docs/ARCHITECTURE.md, Protocol). A categorical column's levels are its values as text
(:func:`as_category_text`: 1.0 and 1 are one level); :func:`level_codes` and
:func:`distinct_counts` count them on numpy blocks, fast on wide tables.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd


def is_text_dtype(dtype) -> bool:
    """Object, str/string and category dtypes: the protocol's categorical columns."""
    return (isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(dtype)
            or pd.api.types.is_string_dtype(dtype))


def infer_column_types(frame: pd.DataFrame, exclude: Sequence[Hashable] = ()) -> tuple[list[str], list[str], list[str]]:
    """Split columns by dtype into (categorical, numerical, other), as the protocol does.

    ``other`` holds columns that are neither (datetimes, ...); ``exclude`` (e.g. the target) is
    left out of all three.
    """
    categorical, numerical, other = [], [], []
    seen = set()
    excluded = set(exclude)
    dtypes = frame.dtypes.tolist()  # one lookup: per-column access costs ~0.2 ms each
    for name, dtype in zip(frame.columns, dtypes):
        if name in excluded or name in seen:
            continue
        seen.add(name)
        if is_text_dtype(dtype):
            categorical.append(name)
        elif pd.api.types.is_numeric_dtype(dtype):  # includes bool
            numerical.append(name)
        else:
            other.append(name)
    return categorical, numerical, other


_STR_DTYPE = pd.Series([], dtype="str").dtype


def is_plain_str(dtype) -> bool:
    """The ``str`` dtype the readers give text columns (already as :func:`as_category_text`
    spells it)."""
    return isinstance(dtype, pd.StringDtype) and dtype == _STR_DTYPE


def level_codes(frame: pd.DataFrame, *, spelled: bool = True) -> np.ndarray:
    """Integer codes of each column's levels (rows x columns), missing values one more level.

    ``spelled``: levels as :func:`as_category_text` spells them (1.0 and 1 are one level), else
    the raw values (as ``nunique`` counts them). ``str`` columns are converted in one block:
    column by column, pandas' per-call cost dominates on a wide table.
    """
    dtypes = frame.dtypes.tolist()
    codes = np.empty(frame.shape, dtype=np.int64)
    plain = [i for i, d in enumerate(dtypes) if is_plain_str(d)]
    if plain:
        block = frame.iloc[:, plain].to_numpy(dtype=object)
        for j, i in enumerate(plain):
            codes[:, i] = pd.factorize(block[:, j], use_na_sentinel=False)[0]
    for i, dtype in enumerate(dtypes):
        if not is_plain_str(dtype):
            column = frame.iloc[:, i]
            codes[:, i] = pd.factorize(as_category_text(column) if spelled else column,
                                       use_na_sentinel=False)[0]
    return codes


def distinct_counts(frame: pd.DataFrame, *, dropna: bool) -> pd.Series:
    """``frame.nunique(dropna=dropna)``, computed on numpy blocks (numbers sorted, text coded)."""
    n, k = frame.shape
    counts = np.zeros(k, dtype=np.int64)
    groups: dict[np.dtype, list[int]] = {}
    rest = []
    for i, dtype in enumerate(frame.dtypes.tolist()):
        if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
            groups.setdefault(dtype, []).append(i)
        else:
            rest.append(i)
    for dtype, positions in groups.items():
        if n == 0:
            continue
        values = np.sort(frame.iloc[:, positions].to_numpy(dtype=dtype), axis=0)
        if dtype.kind == "f":  # NaN sorts last and is one value (or none)
            present = ~np.isnan(values)
            found = present[0].astype(np.int64) + ((values[1:] != values[:-1]) & present[1:]).sum(axis=0)
            if not dropna:
                found += (~present).any(axis=0)
        else:
            found = 1 + (values[1:] != values[:-1]).sum(axis=0)
        counts[positions] = found
    if rest and n:
        sub = frame.iloc[:, rest]
        codes = level_codes(sub, spelled=False)
        found = codes.max(axis=0) + 1
        if dropna:
            found -= sub.isna().any().to_numpy()
        counts[rest] = found
    return pd.Series(counts, index=frame.columns)


def as_category_text(column: pd.Series) -> pd.Series:
    """A column as ``str`` dtype with NaN for missing; integral floats as '1' not '1.0'."""
    if is_plain_str(column.dtype):
        return column
    if is_text_dtype(column.dtype):
        if isinstance(column.dtype, pd.CategoricalDtype):
            column = column.astype(object)
        return column.astype("str")
    if pd.api.types.is_float_dtype(column.dtype):
        values = column.to_numpy(dtype=float)
        finite = values[~np.isnan(values)]
        if np.isfinite(finite).all() and (finite == np.round(finite)).all():
            return column.astype("Int64").astype("str")
    return column.astype("str")
