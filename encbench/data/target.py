"""The target and its task: what a target column stands for and whether the protocol can use it.

A target reads as binary (two classes), multiclass (3 to :data:`MAX_CLASSES` classes) or
regression (numbers with fractions, or more than :data:`REGRESSION_MIN_VALUES` distinct ones):
:func:`target_task`. Classes are label-encoded as scikit-learn's ``LabelEncoder`` does (sorted
values; with two classes the second is the positive one, as in the published study):
:func:`class_order`. :func:`target_classes` and :func:`regression_target` check a target for
the protocol of its task, adding every problem to a list of errors, each naming the column and
the values at fault.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from encbench.data.errors import MAX_LISTED, listed_names


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


def grouped_numbers(values: pd.Series) -> tuple[str, str] | None:
    """``(a value as written, the same number without separators)`` when every value of a text
    column is a number and some are written with thousands separators (which makes the column
    text, not numbers), else None.

    Examples
    --------
    >>> grouped_numbers(pd.Series(["63,541.48", "999.50", None]))
    ('63,541.48', '63541.48')
    >>> grouped_numbers(pd.Series(["1.234,5", "7"]))
    ('1.234,5', '1234.5')
    >>> grouped_numbers(pd.Series(["red", "1,000"])) is None
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


def grouped_numbers_hint(target: str, where: str, example: str, plain: str) -> str:
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
    text = ", ".join(f"{k!r} ({v} rows)" for k, v in ordered[:MAX_LISTED])
    if len(ordered) > MAX_LISTED:
        text += f", ... ({len(ordered) - MAX_LISTED} more classes)"
    return text


def task_of(values: pd.Series, task: str | None) -> str:
    """The task to validate a target for: the one asked for, else the one it reads as (a target
    of one class is validated as binary, whose message says so)."""
    if task is not None:
        return task
    inferred = target_task(values)
    return "binary" if inferred == "single" else inferred


def regression_target(values: pd.Series, target: str, where: str,
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
    if len(text) and (grouped := grouped_numbers(values)) is not None:
        errors.append(grouped_numbers_hint(target, where, *grouped))
        return None
    if len(text):
        shown = listed_names(pd.unique(text.astype(str)).tolist())
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


def _spaced_classes(classes: dict[str, int]) -> str:
    """The classes that are equal once stripped of spaces, with their rows ('' when none)."""
    groups: dict[str, list[str]] = {}
    for name in classes:
        groups.setdefault(name.strip(), []).append(name)
    return "; ".join(" and ".join(f"{n!r} ({classes[n]} rows)" for n in group)
                     for group in groups.values() if len(group) > 1)


def target_classes(values: pd.Series, target: str, positive_class, n_folds: int, where: str,
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
