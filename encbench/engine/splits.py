"""Outer evaluation schemes: the published stratified folds (``cv``) and forward folds over time.

``cv`` is the published protocol (docs/ARCHITECTURE.md, Protocol): ``StratifiedKFold`` without shuffling.
``cv:COLUMN`` is the same folds with ``COLUMN`` set aside (not a feature): the cv run to compare
with a ``time:COLUMN`` run on the same file, so both see the same features and only the folds
differ.

``time`` (after TabReD, Rubachev et al. 2024): when rows have a time order, random or
stratified folds put future rows into the training data, and a target encoder then encodes a
level with targets it could not have known. Forward validation trains on the past and tests on
what follows: the rows are ordered by the time column (stable, so rows of equal time keep their
file order) and cut into ``k + 1`` consecutive blocks; fold ``i`` tests on block ``i + 1`` and
trains on every earlier block (an expanding window), minus the last ``gap`` training rows (the
``gap`` of scikit-learn's ``TimeSeriesSplit``: rows between training and test that neither
uses). Rows sharing a time value are never split between two blocks, so no training row is
later than, or as late as, a row of its test block. The time column is not a feature.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench import vocab

#: the evaluation schemes, in display order: the published one first (the default).
SPLITS: tuple[str, ...] = vocab.SPLITS
SPLIT_LABELS = {"cv": "cv (stratified folds, as published)",
                "time": "time (forward folds: train on the past, test on what follows)"}


@dataclass(frozen=True)
class SplitSpec:
    """A parsed ``--split`` value.

    Attributes
    ----------
    kind : {'cv', 'time'}
    column : str or None
        The time column: orders the forward folds (``time``), is never a feature (both).
    """

    kind: str = "cv"
    column: str | None = None

    def __str__(self) -> str:
        return self.kind if self.column is None else f"{self.kind}:{self.column}"


def parse_split(text: str | None) -> SplitSpec:
    """Parse ``"cv"``, ``"cv:COLUMN"`` or ``"time:COLUMN"`` (``None`` and ``""`` are ``cv``).

    Raises
    ------
    ValueError
        Another scheme, or ``time`` without a column.
    """
    if text is None or str(text).strip() in ("", "cv"):
        return SplitSpec()
    text = str(text).strip()
    kind, _, column = text.partition(":")
    kind, column = kind.strip(), column.strip()
    if kind not in SPLITS:
        raise ValueError(f"split must be 'cv', 'cv:COLUMN' or 'time:COLUMN': got {text!r}")
    if kind == "time" and not column:
        raise ValueError(f"a time split names its time column, e.g. 'time:date': got {text!r}")
    return SplitSpec(kind, column or None)


def time_values(column: pd.Series) -> np.ndarray:
    """The time order of a column as float64 (NaN where missing).

    Numbers are used as they are; datetimes as nanoseconds; text is read as numbers when every
    value is one, else as dates.

    Raises
    ------
    ValueError
        Text that is neither numbers nor dates; the message names the column and an example.
    """
    name = column.name
    if pd.api.types.is_bool_dtype(column):
        raise ValueError(f"time column {name!r} is boolean, not a time: got dtype {column.dtype}")
    if pd.api.types.is_numeric_dtype(column):
        return column.to_numpy(dtype="float64", na_value=np.nan)
    if pd.api.types.is_datetime64_any_dtype(column):
        stamps = pd.to_datetime(column)
        if getattr(stamps.dt, "tz", None) is not None:
            stamps = stamps.dt.tz_convert("UTC").dt.tz_localize(None)
        return _nanoseconds(stamps)
    text = column.astype("string").str.strip()
    present = text.notna() & (text != "")
    numbers = pd.to_numeric(text.where(present), errors="coerce")
    if numbers[present].notna().all():
        return numbers.to_numpy(dtype="float64", na_value=np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "could not infer format": mixed formats are parsed one by one
        try:
            stamps = pd.to_datetime(text.where(present), errors="coerce", format="mixed", utc=True)
        except (TypeError, ValueError):
            stamps = pd.Series(pd.NaT, index=text.index)
    bad = present & stamps.isna()
    if bad.any():
        example = text[bad].iloc[0]
        raise ValueError(f"time column {name!r} has {int(bad.sum())} value(s) that are neither numbers "
                         f"nor dates: got {example!r}")
    return _nanoseconds(stamps.dt.tz_localize(None))


def _nanoseconds(stamps: pd.Series) -> np.ndarray:
    out = np.full(len(stamps), np.nan)
    present = stamps.notna().to_numpy()
    out[present] = stamps[present].astype("int64").to_numpy(dtype="float64")
    return out


def check_time_column(X: pd.DataFrame, column: str) -> np.ndarray:
    """The time values of ``X[column]``, refusing a missing column or missing times.

    Raises
    ------
    ValueError
        The column does not exist, is not a time, or has missing values (the message names the
        column and how many rows miss a time).
    """
    if column not in X.columns:
        raise ValueError(f"time column {column!r} is not a column of the data (the target cannot be "
                         f"one); columns: {', '.join(map(str, X.columns))}")
    values = time_values(X[column])
    missing = int(np.isnan(values).sum())
    if missing:
        raise ValueError(f"time column {column!r} has {missing} row(s) without a time; a forward split "
                         f"cannot place them: fill or drop those rows")
    return values


def block_bounds(times: np.ndarray, n_folds: int) -> np.ndarray:
    """Start positions (in time order) of the ``n_folds + 1`` blocks, and ``len(times)`` last.

    Block boundaries sit at equal row counts, moved back to the first row of a run of equal
    times, so one time value never spans two blocks.

    Raises
    ------
    ValueError
        Too few distinct times for ``n_folds`` forward folds.
    """
    times = np.asarray(times, dtype="float64")
    n = len(times)
    ordered = np.sort(times, kind="stable")
    cuts = [int(round(j * n / (n_folds + 1))) for j in range(1, n_folds + 1)]
    cuts = [int(np.searchsorted(ordered, ordered[c], side="left")) if c < n else n for c in cuts]
    bounds = np.array([0, *cuts, n])
    if np.any(np.diff(bounds) <= 0):
        raise ValueError(f"{n_folds} forward folds need {n_folds + 1} blocks of distinct times: got "
                         f"{len(np.unique(ordered))} distinct time value(s) in {n} rows")
    return bounds


def forward_fold_indices(times: np.ndarray, n_folds: int, fold: int, *, gap: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Train and test row indices of forward fold ``fold`` (0-based), both in time order.

    Fold ``i`` tests on block ``i + 1`` and trains on blocks ``0..i`` without their last ``gap``
    rows. Indices come in time order (ties in row order), so an order-dependent encoder (CB's
    ordered target statistics) follows time too.

    Raises
    ------
    ValueError
        A fold out of range, a negative gap, a gap that leaves no training row, or too few
        distinct times.
    """
    if not 0 <= fold < n_folds:
        raise ValueError(f"fold must be in [0, {n_folds}): got {fold!r}")
    if isinstance(gap, bool) or not isinstance(gap, (int, np.integer)) or gap < 0:
        raise ValueError(f"gap must be a whole number of rows >= 0: got {gap!r}")
    times = np.asarray(times, dtype="float64")
    if np.isnan(times).any():
        raise ValueError(f"times must not be missing: got {int(np.isnan(times).sum())} missing")
    order = np.argsort(times, kind="stable")
    bounds = block_bounds(times, n_folds)
    end_train = bounds[fold + 1] - gap
    if end_train <= 0:
        raise ValueError(f"gap {gap} leaves fold {fold + 1} without training rows (its past has "
                         f"{bounds[fold + 1]} rows)")
    return order[:end_train], order[bounds[fold + 1]:bounds[fold + 2]]


def check_forward_folds(times: np.ndarray, y: np.ndarray, n_folds: int, *, gap: int = 0) -> list[str]:
    """Problems that would make forward folds fail: a training part with one class only.

    Returns a list of messages (empty when every fold can be fitted).
    """
    problems = []
    y = np.asarray(y)
    for fold in range(n_folds):
        try:
            train, test = forward_fold_indices(times, n_folds, fold, gap=gap)
        except ValueError as exc:
            return [str(exc)]
        if len(np.unique(y[train])) < 2:
            problems.append(f"forward fold {fold + 1} of {n_folds} trains on {len(train)} rows of one "
                            f"class only; use fewer folds")
    return problems


#: a text column is read as dates when this share of a sample of its values parses as one
_DATE_SHARE = 0.95
_SAMPLE = 200
#: digitless texts that pandas may still read as numbers (so they do not rule a column out)
_NUMBER_WORDS = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan",
                           "-nan"})
_DIGIT = re.compile(r"\d")


def _surely_not_time(head: np.ndarray) -> bool:
    """Whether a text column is ruled out by a digitless value among its first non-empty ones.

    The same verdict :func:`time_column_candidates` reaches through its sample (a digitless value
    is not a number, so the column is not numeric, and a sample with one is not dates), found in
    plain Python on the column's head: on a file of 1,000 text columns the pandas string calls
    took seconds.
    """
    seen = 0
    for value in head:
        if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
            continue
        text = str(value).strip()
        if not text:
            continue
        if not _DIGIT.search(text) and text.lower() not in _NUMBER_WORDS:
            return True
        seen += 1
        if seen >= _SAMPLE:
            break
    return False


def time_column_candidates(frame: pd.DataFrame, exclude=()) -> list[str]:
    """Columns that can order rows in time, for the Run page to propose a time split.

    A candidate is a date/time column (datetime dtype, or text whose sampled values are nearly
    all dates), or a numeric column that is monotone in file order with at least three distinct
    values (a running timestamp or sequence number). Numbers stored as text count as numbers.
    """
    out = []
    for name in frame.columns:
        if name in exclude:
            continue
        column = frame[name]
        if pd.api.types.is_bool_dtype(column):
            continue
        if pd.api.types.is_datetime64_any_dtype(column):
            out.append(name)
            continue
        if not pd.api.types.is_numeric_dtype(column) and \
                _surely_not_time(column.head(4 * _SAMPLE).to_numpy(dtype=object)):
            continue
        values = column.dropna()
        if pd.api.types.is_numeric_dtype(column):
            numbers = values
        else:
            text = values.astype(str).str.strip()
            text = text[text != ""]
            numbers = pd.to_numeric(text, errors="coerce")
            if numbers.isna().any():  # not all numbers: dates?
                sample = text.head(_SAMPLE)
                if sample.str.fullmatch(r"[0-9]+(\.[0-9]+)?").all() or not sample.str.contains(r"\d").all():
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
                    except (TypeError, ValueError):
                        continue
                if len(sample) and parsed.notna().mean() >= _DATE_SHARE:
                    out.append(name)
                continue
        if (numbers.is_monotonic_increasing or numbers.is_monotonic_decreasing) and numbers.nunique() >= 3:
            out.append(name)
    return out


def late_level_warnings(frame: pd.DataFrame, column: str, categorical, n_folds: int = 5, *,
                        min_share: float = 0.1) -> list[str]:
    """Warn about categorical levels that appear only after a point in time.

    The point is the end of the first forward training block: a level first seen later is
    unseen by at least one forward fold, while stratified folds know it from rows of the same
    period. A column is named when such levels cover at least ``min_share`` of the rows after
    that point. Warnings only: the data stays usable.
    """
    try:
        times = check_time_column(frame, column)
        bounds = block_bounds(times, n_folds)
    except ValueError:
        return []
    order = np.argsort(times, kind="stable")
    cutoff_pos = bounds[1]
    cutoff = frame[column].iloc[order[cutoff_pos]]
    out = []
    for name in categorical:
        if name == column or name not in frame.columns:
            continue
        values = frame[name].astype("string").fillna("<missing>").to_numpy(dtype=object)[order]
        early = set(values[:cutoff_pos])
        later = values[cutoff_pos:]
        new = [v for v in later if v not in early]
        if not len(later) or len(new) < min_share * len(later):
            continue
        n_levels = len(set(new))
        out.append(f"column {name!r}: {n_levels} level(s) appear only after {column} = {cutoff!s} "
                   f"({len(new)} of the {len(later)} later rows); forward folds meet them as unseen "
                   f"levels, stratified folds know them from rows of the same period, so a target "
                   f"encoder can look better under cv than it will be on future data")
    return out
