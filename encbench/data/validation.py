"""Validation of a table for the benchmark protocol (docs/ARCHITECTURE.md, Protocol).

The protocol, as published: rows whose target is missing are dropped, then columns and rows that
are entirely empty; the target must have exactly two classes, label-encoded to {0, 1} with
scikit-learn's ``LabelEncoder`` convention (classes sorted, the second one is positive) unless
the user names the positive class; categorical columns are the text-like ones
(object/str/category dtypes) unless the user lists them; 5-fold stratified CV needs at least
2 rows of each class per fold.

:func:`validate` reports every problem at once, each message naming the column or value at
fault; :func:`prepare` also returns the cleaned features and the 0/1 target.
"""
from __future__ import annotations

import difflib
import logging
import re
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from encbench.data import readers
from encbench.data.readers import MISSING_MARKS_ATTR
from encbench.tasks import TASKS, get_task

logger = logging.getLogger(__name__)

_MAX_LISTED = 10
#: a categorical column with at least this share of distinct values is flagged as ID-like ...
ID_SHARE = 0.5
#: ... in a table of at least this many rows (with fewer the share says little)
ID_MIN_ROWS = 20


@dataclass(frozen=True)
class ValidationReport:
    """Outcome of :func:`validate`.

    Attributes
    ----------
    errors : list of str
        Problems that make the table unusable; empty when it is usable.
    warnings : list of str
        Things worth a look that do not stop a run (ID-like columns, likely target leakage,
        dropped rows/columns).
    categorical, numerical : list of str
        Feature columns by treatment, in table order (the target is in neither).
    classes : dict
        Target class (as text) -> number of rows, after the drops, in label-encoding order
        (sorted values; with two classes the second is the default positive class).
    positive_class : str or None
        The positive class (as text), None when the target is unusable.
    target : str or None
        The target column.
    n_rows : int
        Rows kept after the drops.
    dropped_rows : int
        Rows dropped (missing target or entirely empty).
    dropped_columns : list of str
        Columns dropped because they are entirely empty.
    task : str or None
        ``'binary'``, ``'multiclass'`` or ``'regression'``: the one asked for, else the one
        the target reads as (:func:`target_task`); None when the target is unusable.
    """

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    categorical: list[str] = field(default_factory=list)
    numerical: list[str] = field(default_factory=list)
    classes: dict[str, int] = field(default_factory=dict)
    positive_class: str | None = None
    target: str | None = None
    n_rows: int = 0
    dropped_rows: int = 0
    dropped_columns: list[str] = field(default_factory=list)
    suspect_columns: list[str] = field(default_factory=list)  # ID-like or leaking: worth dropping
    task: str | None = None

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not self.errors


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


#: a single feature with at least this AUC (either direction) is flagged as likely leakage
LEAK_AUC = 0.99
#: rows used to estimate a single-feature AUC (a seeded sample beyond this) ...
LEAK_SAMPLE = 20_000
#: ... and at most this many cells (sampled rows x columns) in all: a wide table is checked on
#: fewer rows (never under :data:`LEAK_MIN_ROWS`), so the check stays within about a second
LEAK_CELLS = 4_000_000
LEAK_MIN_ROWS = 500
#: columns scored at once (bounds the memory of the rank matrices)
_LEAK_BLOCK = 256


def rank_auc(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """ROC AUC of each column of ``scores`` for the labels ``positive``, from ranks.

    The Mann-Whitney statistic of the positives' average ranks (ties count one half), which is
    the area under the ROC curve that :func:`sklearn.metrics.roc_auc_score` computes, for every
    column at once.

    Parameters
    ----------
    scores : array of shape (n_rows,) or (n_rows, n_columns)
        Higher means more likely positive; no NaN.
    positive : bool array of shape (n_rows,)
        Both classes present.

    Returns
    -------
    numpy.ndarray of shape (n_columns,)
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim == 1:
        scores = scores[:, None]
    positive = np.asarray(positive, dtype=bool)
    n, k = scores.shape
    n_pos = int(positive.sum())
    n_neg = n - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"rank_auc needs both classes, got {n_pos} positive and {n_neg} negative rows")
    order = np.argsort(scores, axis=0, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=0)
    # tied values form a group; every member of a group gets the group's average rank
    starts = np.ones((n, k), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    group = np.cumsum(starts, axis=0) - 1 + np.arange(k) * n      # distinct ids across columns
    position = np.broadcast_to(np.arange(1, n + 1, dtype=float)[:, None], (n, k))
    size = np.bincount(group.ravel(), minlength=n * k)
    average = np.bincount(group.ravel(), weights=position.ravel(), minlength=n * k) / np.maximum(size, 1)
    positive_rank_sum = np.where(positive[order], average[group], 0.0).sum(axis=0)
    return (positive_rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _leak_rows(n_rows: int, n_columns: int) -> np.ndarray | None:
    """The seeded rows the single-feature AUCs use (None: all of them)."""
    limit = min(LEAK_SAMPLE, max(LEAK_MIN_ROWS, LEAK_CELLS // max(n_columns, 1)))
    if n_rows <= limit:
        return None
    return np.sort(np.random.default_rng(0).choice(n_rows, limit, replace=False))


def _numeric_aucs(frame: pd.DataFrame, positive: np.ndarray) -> np.ndarray:
    """max(AUC, 1 - AUC) of each column as its own score (missing at the median); NaN where a
    column is all missing or constant."""
    values = np.column_stack([pd.to_numeric(frame.iloc[:, i], errors="coerce").to_numpy(dtype=float)
                              for i in range(frame.shape[1])])
    out = np.full(values.shape[1], np.nan)
    missing = np.isnan(values)
    usable = ~missing.all(axis=0)
    if not usable.any():
        return out
    values = values[:, usable]
    with warnings.catch_warnings():  # an all-missing column was left out above
        warnings.simplefilter("ignore", RuntimeWarning)
        medians = np.nanmedian(values, axis=0)
    values = np.where(np.isnan(values), medians, values)
    varies = (values != values[0]).any(axis=0)
    auc = np.full(values.shape[1], np.nan)
    if varies.any():
        auc[varies] = rank_auc(values[:, varies], positive)
    out[usable] = np.maximum(auc, 1.0 - auc)
    return out


_STR_DTYPE = pd.Series([], dtype="str").dtype


def _is_plain_str(dtype) -> bool:
    """The ``str`` dtype the readers give text columns (already as :func:`as_category_text`
    spells it)."""
    return isinstance(dtype, pd.StringDtype) and dtype == _STR_DTYPE


def _level_codes(frame: pd.DataFrame, *, spelled: bool = True) -> np.ndarray:
    """Integer codes of each column's levels (rows x columns), missing values one more level.

    ``spelled``: levels as :func:`as_category_text` spells them (1.0 and 1 are one level), else
    the raw values (as ``nunique`` counts them). ``str`` columns are converted in one block:
    column by column, pandas' per-call cost dominates on a wide table.
    """
    dtypes = frame.dtypes.tolist()
    codes = np.empty(frame.shape, dtype=np.int64)
    plain = [i for i, d in enumerate(dtypes) if _is_plain_str(d)]
    if plain:
        block = frame.iloc[:, plain].to_numpy(dtype=object)
        for j, i in enumerate(plain):
            codes[:, i] = pd.factorize(block[:, j], use_na_sentinel=False)[0]
    for i, dtype in enumerate(dtypes):
        if not _is_plain_str(dtype):
            column = frame.iloc[:, i]
            codes[:, i] = pd.factorize(as_category_text(column) if spelled else column,
                                       use_na_sentinel=False)[0]
    return codes


def _distinct_counts(frame: pd.DataFrame, *, dropna: bool) -> pd.Series:
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
        codes = _level_codes(sub, spelled=False)
        found = codes.max(axis=0) + 1
        if dropna:
            found -= sub.isna().any().to_numpy()
        counts[rest] = found
    return pd.Series(counts, index=frame.columns)


def _categorical_aucs(frame: pd.DataFrame, positive: np.ndarray) -> np.ndarray:
    """max(AUC, 1 - AUC) of each column scored by its levels' positive rate on the other half.

    Seeded random halves (the same for every column); a level unseen in the other half gets
    that half's rate; the AUC is computed within each half and the two are averaged. NaN where
    no half has both classes.
    """
    n = len(positive)
    half = np.random.default_rng(1).permutation(n) % 2 == 0
    codes = _level_codes(frame)
    # one bincount over every column: column j's levels are numbered from offsets[j]
    offsets = np.concatenate([[0], np.cumsum(codes.max(axis=0) + 1)[:-1]])
    flat = codes + offsets
    n_levels = int(flat.max()) + 1
    aucs = []
    for part in (half, ~half):
        other = ~part
        if not other.any() or positive[part].all() or not positive[part].any():
            continue
        seen = np.bincount(flat[other].ravel(), minlength=n_levels)
        hits = np.bincount(flat[other].ravel(),
                           weights=np.repeat(positive[other], flat.shape[1]).astype(float),
                           minlength=n_levels)
        rates = np.where(seen > 0, hits / np.maximum(seen, 1), positive[other].mean())
        score = rates[flat[part]]
        varies = (score != score[0]).any(axis=0)
        auc = np.full(flat.shape[1], 0.5)
        if varies.any():
            auc[varies] = rank_auc(score[:, varies], positive[part])
        aucs.append(auc)
    if not aucs:
        return np.full(frame.shape[1], np.nan)
    auc = np.mean(aucs, axis=0)
    return np.maximum(auc, 1.0 - auc)


def single_feature_aucs(frame: pd.DataFrame, positive: np.ndarray,
                        categorical: Sequence[str] = ()) -> pd.Series:
    """How well each column alone ranks the positive class: max(AUC, 1 - AUC), NaN if unknown.

    A numeric column is its own score (missing values at the median). A categorical column
    (those named in ``categorical``) is scored by its level's positive rate estimated on the
    *other* half of the rows (seeded random halves; a level unseen there gets that half's rate),
    so a column with many rare levels does not look predictive just because each level
    memorises its own rows; the AUC is computed within each half and averaged.

    Vectorised over columns (:func:`rank_auc`, in blocks of columns) and bounded: beyond
    :data:`LEAK_SAMPLE` rows, or :data:`LEAK_CELLS` cells, a seeded sample of the rows is used.

    Parameters
    ----------
    frame : pandas.DataFrame
        The feature columns (unique names).
    positive : bool array of shape (len(frame),)
    categorical : sequence of str
        Columns scored as categorical.

    Returns
    -------
    pandas.Series
        Indexed by column, in ``frame``'s order.
    """
    positive = np.asarray(positive, dtype=bool)
    result = pd.Series(np.nan, index=frame.columns, dtype=float)
    keep = _leak_rows(len(positive), frame.shape[1])
    if keep is not None:
        frame, positive = frame.iloc[keep], positive[keep]
    if frame.shape[1] == 0 or positive.all() or not positive.any():
        return result
    cat_set = set(categorical)
    for kind, scorer in ((True, _categorical_aucs), (False, _numeric_aucs)):
        names = [c for c in frame.columns if (c in cat_set) == kind]
        for start in range(0, len(names), _LEAK_BLOCK):
            block = names[start:start + _LEAK_BLOCK]
            result[block] = scorer(frame[block], positive)
    return result


def single_feature_auc(column: pd.Series, positive: np.ndarray, *, categorical: bool) -> float | None:
    """:func:`single_feature_aucs` of one column: max(AUC, 1 - AUC), or None when unknown."""
    name = column.name if column.name is not None else 0
    auc = single_feature_aucs(column.to_frame(name), positive, [name] if categorical else ())
    value = float(auc.iloc[0])
    return None if np.isnan(value) else value


def label_text(value) -> str:
    """A class label as text; integral floats lose their '.0' (1.0 -> '1')."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (np.generic,)):
        value = value.item()
    return str(value)


def _sorted_uniques(values: pd.Series) -> list:
    """The distinct non-missing values in label-encoding order (sorted; by text when mixed)."""
    uniques = pd.unique(values.dropna().to_numpy(dtype=object))
    try:
        return sorted(uniques)
    except TypeError:  # mixed types in a user frame: order by text
        return sorted(uniques, key=label_text)


def class_order(values: pd.Series) -> list[str]:
    """A target's classes as text, in label-encoding order: with two classes the second is
    the protocol's positive class (as the published study's ``LabelEncoder``).

    Examples
    --------
    >>> class_order(pd.Series([2.0, 10.0, None, 2.0]))
    ['2', '10']
    """
    return [label_text(v) for v in _sorted_uniques(values)]


def _names(values: Sequence, limit: int = _MAX_LISTED) -> str:
    values = list(values)
    text = ", ".join(repr(v) for v in values[:limit])
    if len(values) > limit:
        text += f", ... ({len(values) - limit} more)"
    return text


#: a numeric target with more distinct values than this (or with fractions) reads as regression
REGRESSION_MIN_VALUES = 20


def target_task(values: pd.Series) -> str:
    """The task a target column stands for: ``'binary'``, ``'multiclass'``, ``'regression'``
    (numbers with fractions or more than :data:`REGRESSION_MIN_VALUES` distinct values) or
    ``'single'`` (one class); missing values are not counted.

    Examples
    --------
    >>> [target_task(pd.Series(v)) for v in (["a", "b"], ["a", "b", "c"], [0.5, 1.5, 2.0], [1, 1])]
    ['binary', 'multiclass', 'regression', 'single']
    """
    values = values.dropna()
    distinct = values.nunique()
    if distinct <= 2:
        return "binary" if distinct == 2 else "single"
    numbers = _as_numbers(values)
    if numbers is not None and (distinct > REGRESSION_MIN_VALUES or not (numbers == numbers.round()).all()):
        return "regression"
    return "multiclass"


def _as_numbers(values: pd.Series) -> pd.Series | None:
    """``values`` as floats when every one is a number (numbers stored as text too), else None."""
    if pd.api.types.is_bool_dtype(values.dtype):
        return None
    if not pd.api.types.is_numeric_dtype(values.dtype):
        values = pd.to_numeric(values.astype(str).str.strip(), errors="coerce")
        if values.isna().any():
            return None
    return values.astype(float)


#: thousands separators and the decimal mark written with each, as spreadsheets of different
#: locales write numbers: 63,541.48; 63.541,48; 63 541,48; 63'541.48 (and no-break spaces)
_GROUPINGS = ((",", "."), (".", ","), (" ", ","), (" ", "."), ("'", "."), ("\u00a0", ","), ("\u202f", ","))


def _grouped_numbers(values: pd.Series) -> tuple[str, str] | None:
    """``(a value as written, the same number without separators)`` when every value of a text
    column is a number and some are written with thousands separators (which makes the column
    text, not numbers), else None.

    Examples
    --------
    >>> _grouped_numbers(pd.Series(["63,541.48", "999.50", None]))
    ('63,541.48', '63541.48')
    >>> _grouped_numbers(pd.Series(["1.234,5", "7"]))
    ('1.234,5', '1234.5')
    >>> _grouped_numbers(pd.Series(["red", "1,000"])) is None
    True
    """
    if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
        return None
    distinct = pd.Series(pd.unique(values.dropna().astype(str).str.strip()), dtype=object)
    if distinct.empty:
        return None
    for group, decimal in _GROUPINGS:
        g, d = re.escape(group), re.escape(decimal)
        grouped = re.compile(rf"[+-]?\d{{1,3}}(?:{g}\d{{3}})+(?:{d}\d+)?")
        number = re.compile(rf"{grouped.pattern}|[+-]?\d+(?:{d}\d+)?|[+-]?{d}\d+")
        # a sample first: most text columns fail on their first values, at little cost
        for part in (distinct[:200], distinct):
            if not part.str.fullmatch(number).all():
                break
        else:
            is_grouped = distinct.str.fullmatch(grouped)
            if is_grouped.any():
                example = distinct[is_grouped].iloc[0]
                return example, example.replace(group, "").replace(decimal, ".")
    return None


def _grouped_numbers_hint(target: str, where: str, example: str, plain: str) -> str:
    """What to do about a target of numbers written with thousands separators."""
    return (f"target column {target!r} of {where} holds numbers written with thousands separators "
            f"(e.g. {example!r}), so it reads as text, not numbers: remove the separators in the file "
            f"(write {plain!r}, e.g. with a plain number format in the spreadsheet before saving); to "
            f"predict the number, load it with task='regression'")


#: the most classes a multiclass target may have (each becomes a column per supervised encoder)
MAX_CLASSES = 50


def _not_binary(values: pd.Series, target: str, classes: dict[str, int]) -> str:
    """The error for a target asked to be binary that is not: what it is, and what to do."""
    task = target_task(values)
    if task == "regression":  # not "578 classes"
        numbers = _as_numbers(values.dropna())
        return (f"target column {target!r} is numeric with {len(classes)} distinct values (from "
                f"{numbers.min():g} to {numbers.max():g}): a regression target, not a binary one; "
                f"load it with task='regression' (or leave the task to be inferred), or make it "
                f"binary in the file (e.g. above or below a threshold)")
    noun = "class" if len(classes) == 1 else "classes"
    text = (f"target column {target!r} has {len(classes)} {noun}, a binary target needs exactly 2: "
            f"{_class_list(classes)}")
    if task == "multiclass":
        text += (". This is a multiclass target: load it with task='multiclass' (or leave the task "
                 "to be inferred), or merge its classes into two in the file (e.g. one class against "
                 "the rest)")
    return text


def _class_list(counts: dict[str, int]) -> str:
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])
    text = ", ".join(f"{k!r} ({v} rows)" for k, v in ordered[:_MAX_LISTED])
    if len(ordered) > _MAX_LISTED:
        text += f", ... ({len(ordered) - _MAX_LISTED} more classes)"
    return text


def _where(source: str | None) -> str:
    return f"file {source!r}" if source else "the data"


def as_category_text(column: pd.Series) -> pd.Series:
    """A column as ``str`` dtype with NaN for missing; integral floats as '1' not '1.0'."""
    if _is_plain_str(column.dtype):
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


@dataclass(frozen=True)
class Prepared:
    """A validated table split into features and a 0/1 target (see :func:`prepare`)."""

    report: ValidationReport
    X: pd.DataFrame | None
    y: np.ndarray | None
    classes: tuple[str, str] | None


def prepare(frame: pd.DataFrame, target: str | None, positive_class=None,
            categorical: Sequence[str] | None = None, n_folds: int = 5, *,
            source: str | None = None, task: str | None = None) -> Prepared:
    """Validate ``frame`` and, when it is usable, return its features and target.

    Parameters are those of :func:`validate`. ``X`` and ``y`` are None when there are errors.
    ``y`` is 0/1 (int64, 1 = the positive class) for a binary target, the class codes 0..K-1
    in :attr:`ValidationReport.classes` order for a multiclass one, float64 for regression;
    ``classes`` is (negative, positive), every class in order, or () for regression.

    The steps, each adding its errors and warnings in this order: the load report, unique
    column names, the target column, the drops (rows without target, empty columns, empty
    rows), the target's classes, the columns' treatment, the suspect (ID-like or leaking)
    columns; then, without errors, the encoding of ``X`` and ``y``.
    """
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ValueError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    if task is not None and task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)} (or None: inferred from the "
                         f"target), got {task!r}")
    errors: list[str] = []
    warnings: list[str] = []
    where = _where(source)
    if frame.shape[1] > readers.MAX_COLUMNS:  # refused before any per-column work
        errors.append(f"{where} has {frame.shape[1]:,} columns, over the limit of "
                      f"{readers.MAX_COLUMNS:,} columns; keep the columns you need")
        return Prepared(_finish(errors, warnings, [], [], target=target), None, None, None)
    _report_missing_marks(frame, where, warnings)
    frame, columns = _unique_columns(frame, where, errors)
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        errors.append(f"{where} has no data (rows: {frame.shape[0]}, columns: {frame.shape[1]})")
        return Prepared(_finish(errors, warnings, [], [], target=target), None, None, None)

    target_ok = _check_target_column(target, columns, where, errors)
    every_row = frame  # ID-likeness is a property of the column: judged on every row
    frame, features, dropped_rows, dropped_columns = _drop_empty(frame, columns, target, target_ok,
                                                                 warnings)
    n_rows = len(frame)
    classes: dict[str, int] = {}
    positive_text: str | None = None
    y_text: pd.Series | None = None
    kind: str | None = None
    y_values: np.ndarray | None = None
    if target_ok:
        kind = _task_of(frame[target], task)
        if not get_task(kind).classes:
            y_values = _regression_target(frame[target], target, where, errors)
        else:
            n_errors = len(errors)
            classes, positive_text, y_text = _target_classes(frame[target], target, positive_class,
                                                             n_folds, where, errors, task=kind)
            grouped = _grouped_numbers(frame[target])
            if grouped is not None:  # the hint beside the refusal; a warning if classes were accepted
                (errors if len(errors) > n_errors else warnings).append(
                    _grouped_numbers_hint(target, where, *grouped))
    cat_cols, num_cols, converted = _column_treatment(frame, columns, features, target, categorical,
                                                      where, errors, warnings)
    suspects: list[str] = []
    if n_rows > 1:
        suspects = _id_like_columns(every_row, features, cat_cols, warnings)
        if y_text is not None and len(classes) == 2:
            _leaking_columns(frame, features, cat_cols, target, y_text, positive_text, suspects,
                             warnings)

    report = _finish(errors, warnings, cat_cols, num_cols, classes=classes,
                     positive_class=positive_text,
                     target=target, n_rows=n_rows, dropped_rows=dropped_rows,
                     dropped_columns=dropped_columns, suspect_columns=suspects,
                     task=kind)
    if errors:
        return Prepared(report, None, None, None)
    cat_set = set(cat_cols)
    X = frame[features]  # converted in place where needed: a per-column rebuild is slow when wide
    for i, (c, dtype) in enumerate(zip(features, X.dtypes.tolist())):
        if c in cat_set and not _is_plain_str(dtype):
            X.isetitem(i, as_category_text(X.iloc[:, i]))
        elif c in converted:
            X.isetitem(i, converted[c])
    X.index = pd.RangeIndex(n_rows)
    if not get_task(kind).classes:
        return Prepared(report, X, y_values, ())
    if not get_task(kind).positive_class:  # codes in class order, as a LabelEncoder
        codes = {name: i for i, name in enumerate(classes)}
        return Prepared(report, X, y_text.map(codes).to_numpy(dtype=np.int64), tuple(classes))
    y = (y_text.to_numpy(dtype=object) == positive_text).astype(np.int64)
    negative = next(k for k in classes if k != positive_text)
    return Prepared(report, X, y, (negative, positive_text))


def _task_of(values: pd.Series, task: str | None) -> str:
    """The task to validate a target for: the one asked for, else the one it reads as (a target
    of one class is validated as binary, whose message says so)."""
    if task is not None:
        return task
    inferred = target_task(values)
    return "binary" if inferred == "single" else inferred


def _regression_target(values: pd.Series, target: str, where: str,
                       errors: list[str]) -> np.ndarray | None:
    """A regression target as float64, checked: numbers only, finite, not constant."""
    if len(values) == 0:
        errors.append(f"target column {target!r} has no values: every row of {where} misses it")
        return None
    if pd.api.types.is_bool_dtype(values.dtype):
        errors.append(f"target column {target!r} holds true/false values, not numbers: a "
                      f"regression target needs numbers; load it with task='binary'")
        return None
    numbers = values if pd.api.types.is_numeric_dtype(values.dtype) else pd.to_numeric(
        values.astype(str).str.strip(), errors="coerce")
    text = values[numbers.isna()]
    if len(text) and (grouped := _grouped_numbers(values)) is not None:
        errors.append(_grouped_numbers_hint(target, where, *grouped))
        return None
    if len(text):
        shown = _names(pd.unique(text.astype(str)).tolist())
        errors.append(f"target column {target!r} of {where} is a regression target but has "
                      f"{len(text)} values that are not numbers: {shown} (first at row "
                      f"{int(text.index[0]) + 1} of the kept rows); fix them in the file, or load the "
                      f"column with task='multiclass' if it names classes")
        return None
    numbers = numbers.astype(float).to_numpy()
    infinite = ~np.isfinite(numbers)
    if infinite.any():
        errors.append(f"target column {target!r} of {where} has {int(infinite.sum())} infinite "
                      f"values (first at row {int(np.flatnonzero(infinite)[0]) + 1} of the kept "
                      f"rows): a regression target needs finite numbers")
        return None
    if np.unique(numbers).size < 2:
        errors.append(f"target column {target!r} of {where} is constant ({numbers[0]:g} in every "
                      f"row): there is nothing to predict")
        return None
    return numbers


def _report_missing_marks(frame: pd.DataFrame, where: str, warnings: list[str]) -> None:
    """The load report: '?' cells became missing values, said, never silent."""
    marks = frame.attrs.get(MISSING_MARKS_ATTR) or {}
    if marks:
        total = sum(marks.values())
        shown = ", ".join(f"{c!r} ({n})" for c, n in list(marks.items())[:_MAX_LISTED])
        more = f", ... ({len(marks) - _MAX_LISTED} more columns)" if len(marks) > _MAX_LISTED else ""
        warnings.append(f"read {total} '?' cells of {where} as missing values (OpenML/UCI "
                        f"convention, quoted or not): {shown}{more}")


def _unique_columns(frame: pd.DataFrame, where: str, errors: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """A copy with text column names; duplicate names are reported, then the first of each is
    kept for the other checks."""
    columns = [str(c) for c in frame.columns]
    frame = frame.copy()
    frame.columns = columns
    frame.attrs = {}  # the load report is read; pandas would deep-copy it on every column access
    positions: dict[str, list[int]] = {}
    for i, name in enumerate(columns, start=1):
        positions.setdefault(name, []).append(i)
    dups = {n: p for n, p in positions.items() if len(p) > 1}
    if dups:
        parts = ", ".join(f"{n!r} (columns {', '.join(map(str, p[:-1]))} and {p[-1]})"
                          for n, p in dups.items())
        errors.append(f"duplicate column names in {where}: {parts}; column names must be unique")
        frame = frame.loc[:, ~pd.Index(columns).duplicated()]
        columns = list(frame.columns)
    return frame, columns


def _check_target_column(target: str | None, columns: list[str], where: str, errors: list[str]) -> bool:
    """Whether the target is one of ``columns`` (else an error, with a close name as a hint)."""
    if target is None:
        errors.append(f"no target column given; columns of {where} are {_names(columns, 50)}")
        return False
    if target not in columns:
        hint = ""
        close = [c for c in columns if c.lower() == str(target).lower()] or \
            difflib.get_close_matches(str(target), columns, n=1)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
        errors.append(f"target column {target!r} not in {where}{hint}; columns are "
                      f"{_names(columns, 50)}")
        return False
    return True


def _drop_empty(frame: pd.DataFrame, columns: list[str], target: str | None, target_ok: bool,
                warnings: list[str]) -> tuple[pd.DataFrame, list[str], int, list[str]]:
    """The protocol's drops, in its order: rows without target, entirely empty columns, rows
    whose features are all missing.

    Returns the frame (new index), the feature columns kept, the rows dropped and the columns
    dropped.
    """
    dropped_rows = 0
    dropped_columns: list[str] = []
    if target_ok:
        missing_target = frame[target].isna().to_numpy()
        if missing_target.any():
            n_missing = int(missing_target.sum())
            dropped_rows += n_missing
            frame = frame.loc[~missing_target]
            warnings.append(f"dropped {n_missing} rows whose target {target!r} is missing")
    features = [c for c in columns if c != target]
    empty_cols = []
    if len(frame) and features:
        all_missing = frame[features].isna().all()
        empty_cols = [c for c in features if all_missing[c]]
    if empty_cols:
        dropped_columns = empty_cols
        features = [c for c in features if c not in set(empty_cols)]
        warnings.append(f"dropped {len(empty_cols)} entirely empty columns: {_names(empty_cols)}")
    if features and len(frame):
        empty_rows = frame[features].isna().all(axis=1).to_numpy()
        if empty_rows.any():
            n_empty = int(empty_rows.sum())
            dropped_rows += n_empty
            frame = frame.loc[~empty_rows]
            warnings.append(f"dropped {n_empty} rows whose features are all missing")
    return frame.reset_index(drop=True), features, dropped_rows, dropped_columns


def _spaced_classes(classes: dict[str, int]) -> str:
    """The classes that are equal once stripped of spaces, with their rows ('' when none)."""
    groups: dict[str, list[str]] = {}
    for name in classes:
        groups.setdefault(name.strip(), []).append(name)
    return "; ".join(" and ".join(f"{n!r} ({classes[n]} rows)" for n in group)
                     for group in groups.values() if len(group) > 1)


def _target_classes(values: pd.Series, target: str, positive_class, n_folds: int, where: str,
                    errors: list[str], *, task: str = "binary"
                    ) -> tuple[dict[str, int], str | None, pd.Series | None]:
    """The target's classes in LabelEncoder order (sorted values), checked for the protocol
    of ``task`` (``'binary'``: exactly two classes, each with two rows per fold;
    ``'multiclass'``: 3 to :data:`MAX_CLASSES` classes, each with a row per fold).

    Returns class (as text) -> rows, the positive class (None unless binary with exactly two
    classes and a valid choice) and the target as text (None without rows).
    """
    if len(values) == 0:
        errors.append(f"target column {target!r} has no values: every row of {where} "
                      f"misses it")
        return {}, None, None
    ordered = _sorted_uniques(values)
    texts = [label_text(v) for v in ordered]
    mapping = dict(zip(ordered, texts))
    y_text = values.map(mapping)
    counts = y_text.value_counts()
    classes = {t: int(counts.get(t, 0)) for t in dict.fromkeys(texts)}
    positive_text: str | None = None
    spaced = _spaced_classes(classes)
    if spaced:  # 'yes' and ' yes' are one class typed twice, not two classes
        errors.append(f"target column {target!r} has classes that differ only in leading or "
                      f"trailing spaces: {spaced}; they are most likely one class: strip the "
                      f"spaces in the file (or rename one class if they truly differ)")
    if task == "multiclass":
        _check_multiclass(classes, target, positive_class, n_folds, errors)
        return classes, None, y_text
    if len(classes) != 2:
        errors.append(_not_binary(values, target, classes))
        return classes, None, y_text
    if positive_class is None:
        positive_text = list(classes)[1]
    else:
        wanted = label_text(positive_class)
        if wanted in classes:
            positive_text = wanted
        else:
            errors.append(f"positive class {positive_class!r} is not a class of "
                          f"target {target!r}; classes are {_class_list(classes)}")
    need = 2 * n_folds
    for cls, count in classes.items():
        if count < need:
            errors.append(
                f"class {cls!r} of target {target!r} has {count} rows; {n_folds}-fold "
                f"cross-validation needs at least {need} (2 per fold)")
    return classes, positive_text, y_text


def _check_multiclass(classes: dict[str, int], target: str, positive_class, n_folds: int,
                      errors: list[str]) -> None:
    """A multiclass target's checks: 3 to :data:`MAX_CLASSES` classes, every class with at
    least ``n_folds`` rows (one per stratified fold), no positive class."""
    if positive_class is not None:
        errors.append(f"a multiclass target has no positive class: got positive_class="
                      f"{positive_class!r} for target {target!r}")
    if len(classes) < 3:
        errors.append(f"target column {target!r} has {len(classes)} classes, a multiclass target "
                      f"needs 3 to {MAX_CLASSES}: {_class_list(classes)}"
                      + ("; with 2 classes load it with task='binary'" if len(classes) == 2 else ""))
        return
    if len(classes) > MAX_CLASSES:
        errors.append(f"target column {target!r} has {len(classes)} classes, over the limit of "
                      f"{MAX_CLASSES} for a multiclass target (every supervised encoder gives one "
                      f"column per class): {_class_list(classes)}; merge rare classes in the file, "
                      f"or load a numeric target with task='regression'")
        return
    rare = {cls: count for cls, count in classes.items() if count < n_folds}
    if rare:
        listed = ", ".join(f"{cls!r} ({count} rows)" for cls, count in rare.items())
        errors.append(f"target column {target!r} has {len(rare)} classes with fewer rows than the "
                      f"{n_folds} folds (each fold needs a row of every class): {listed}; merge "
                      f"them into another class (e.g. 'other') in the file, or drop their rows")


def _column_treatment(frame: pd.DataFrame, columns: list[str], features: list[str], target: str | None,
                      categorical: Sequence[str] | None, where: str, errors: list[str],
                      warnings: list[str]) -> tuple[list[str], list[str], dict[str, pd.Series]]:
    """(categorical, numerical, text columns converted to numbers) of the features.

    By dtype unless ``categorical`` lists the categorical columns; then every other feature
    must hold numbers. At least one feature must be categorical.
    """
    cat_auto, num_auto, other = infer_column_types(frame[features])
    cat_cols: list[str]
    num_cols: list[str]
    converted: dict[str, pd.Series] = {}
    if categorical is None:
        cat_cols, num_cols = cat_auto, num_auto
        for c in other:
            errors.append(f"column {c!r} has dtype {frame[c].dtype}, neither text nor numbers; "
                          f"convert it or list it as categorical")
    else:
        listed = [str(c) for c in categorical]
        unknown = [c for c in listed if c not in columns]
        if unknown:
            errors.append(f"categorical column(s) {_names(unknown)} not in {where}; columns are "
                          f"{_names(columns, 50)}")
        if target is not None and target in listed:
            warnings.append(f"the target {target!r} was listed as categorical; ignored")
        wanted = set(listed)
        cat_cols = [c for c in features if c in wanted]
        num_cols = []
        for c in features:
            if c in wanted:
                continue
            column = frame[c]
            if pd.api.types.is_numeric_dtype(column.dtype):
                num_cols.append(c)
                continue
            numbers = pd.to_numeric(column, errors="coerce") if is_text_dtype(column.dtype) \
                else None
            bad = None if numbers is None else column[numbers.isna() & column.notna()]
            if numbers is not None and len(bad) == 0:
                converted[c] = numbers
                num_cols.append(c)
            else:
                example = f" (e.g. {bad.iloc[0]!r})" if bad is not None else \
                    f" (dtype {column.dtype})"
                errors.append(f"column {c!r} is not numeric{example} but is not listed as "
                              f"categorical; list it or drop it")
    if not features:
        errors.append(f"{where} has no feature columns besides the target {target!r}")
    elif not cat_cols:
        errors.append(
            f"no categorical column: every feature of {where} is numeric "
            f"({_names(num_cols)}); the benchmark compares categorical encoders, so at least "
            f"one column must be categorical (list columns to treat as categorical)")
    return cat_cols, num_cols, converted


def _id_like_columns(frame: pd.DataFrame, features: list[str], cat_cols: list[str],
                     warnings: list[str]) -> list[str]:
    """Columns that look like row IDs (warned, not refused): all values unique, or a
    categorical column with mostly distinct values."""
    n_rows = len(frame)
    suspects = []
    cat_set = set(cat_cols)
    dtypes = dict(zip(frame.columns, frame.dtypes.tolist()))
    counted = [c for c in features if c in cat_set or pd.api.types.is_integer_dtype(dtypes[c])]
    n_distinct = _distinct_counts(frame[counted], dropna=True)
    for c in features:
        distinct = int(n_distinct[c]) if c in n_distinct.index else 0
        if distinct == n_rows:
            warnings.append(f"column {c!r} looks like an ID: all {n_rows} values are "
                            f"unique, so encoders cannot learn from it; consider dropping it")
            suspects.append(c)
        elif c in cat_set and n_rows >= ID_MIN_ROWS and distinct >= ID_SHARE * n_rows:
            # OpenML marks such columns (row ids, timestamps) as ignored attributes and its
            # loader drops them; a local copy keeps them, so they are flagged instead.
            warnings.append(
                f"column {c!r} looks like an ID: {distinct} distinct values in {n_rows} rows "
                f"({100 * distinct // n_rows}%), so encoders can hardly learn from it; consider "
                f"dropping it (command line: --drop-columns {c})")
            suspects.append(c)
    return suspects


def _leaking_columns(frame: pd.DataFrame, features: list[str], cat_cols: list[str], target: str,
                     y_text: pd.Series, positive_text: str | None, suspects: list[str],
                     warnings: list[str]) -> None:
    """Add to ``suspects`` (and warn about) the columns that likely leak the target: one-to-one
    with it, or predicting it alone almost perfectly (:data:`LEAK_AUC`)."""
    y_values = y_text.to_numpy(dtype=object)
    two_values = _distinct_counts(frame[features], dropna=False) == 2
    for c in features:
        if not two_values[c]:
            continue
        text = as_category_text(frame[c]).fillna("<missing>").to_numpy(dtype=object)
        pairs = set(zip(text, y_values))
        if len(pairs) != 2:
            continue
        suspects.append(c)
        if all(a == b for a, b in pairs):
            warnings.append(f"column {c!r} is identical to the target {target!r}: it "
                            f"leaks the answer; drop it")
        else:
            shown = ", ".join(f"{a!r} -> {b!r}" for a, b in sorted(pairs, key=str))
            warnings.append(f"column {c!r} maps one-to-one onto the target {target!r} "
                            f"({shown}): it leaks the answer; drop it")
    if positive_text is None:
        return
    flagged = set(suspects)
    rest = [c for c in features if c not in flagged]
    cat_set = set(cat_cols)
    aucs = single_feature_aucs(frame[rest], y_values == positive_text,
                               [c for c in rest if c in cat_set])
    for c in rest:
        auc = float(aucs[c])
        if auc >= LEAK_AUC:  # NaN (unknown) compares False
            suspects.append(c)
            warnings.append(
                f"column {c!r} alone predicts the target {target!r} almost perfectly "
                f"(single-feature AUC {auc:.3f} >= {LEAK_AUC}): it likely leaks the answer "
                f"(known only with or after the target); drop it unless it is truly known "
                f"before")


def _finish(errors, warnings, categorical, numerical, **kwargs) -> ValidationReport:
    for message in errors:
        logger.debug("validation error: %s", message)
    return ValidationReport(errors=list(errors), warnings=list(warnings),
                            categorical=list(categorical), numerical=list(numerical), **kwargs)


def validate(frame: pd.DataFrame, target: str | None, positive_class=None,
             categorical: Sequence[str] | None = None, n_folds: int = 5, *,
             source: str | None = None, task: str | None = None) -> ValidationReport:
    """Check a table against the benchmark protocol and report every problem found.

    Parameters
    ----------
    frame : pandas.DataFrame
        The whole table, target included (e.g. from :func:`~encbench.data.read_table`).
    target : str
        Name of the target column.
    positive_class : optional
        The class encoded as 1 (compared as text, so ``1`` and ``"1"`` both work). Default:
        the second class in sorted order (scikit-learn ``LabelEncoder``, as the published study).
    categorical : list of str, optional
        Columns to treat as categorical, overriding the dtype rule (object/str/category). Other
        text columns must then hold numbers.
    n_folds : int
        Folds of the outer cross-validation; every class of a binary target needs at least
        ``2 * n_folds`` rows, every class of a multiclass one ``n_folds``.
    source : str, optional
        File name used in messages ("target column 'x' not in file 'f.csv'").
    task : {'binary', 'multiclass', 'regression'}, optional
        The task to validate for; None infers it from the target (:func:`target_task`).

    Returns
    -------
    ValidationReport
        ``errors`` (empty when usable), ``warnings``, the column treatment and the classes.

    Examples
    --------
    >>> report = validate(frame, target="class")
    >>> report.ok, report.positive_class, report.classes
    """
    return prepare(frame, target, positive_class, categorical, n_folds, source=source, task=task).report
