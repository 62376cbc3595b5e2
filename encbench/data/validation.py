"""Validation and preparation of a table for the benchmark protocol (docs/ARCHITECTURE.md, Protocol).

The protocol, as published: rows whose target is missing are dropped, then columns and rows that
are entirely empty; the target must suit its task (:mod:`encbench.data.target`: a binary one has
exactly two classes, label-encoded to {0, 1} with scikit-learn's ``LabelEncoder`` convention unless
the user names the positive class); categorical columns are the text-like ones
(:mod:`encbench.data.columns`) unless the user lists them; 5-fold stratified CV needs at least
2 rows of each class per fold. Columns that look like row IDs or leak the target
(:mod:`encbench.data.leakage`) are warned about.

:func:`validate` reports every problem at once, each message naming the column or value at
fault; :func:`prepare` also returns the cleaned features and the target.
"""
from __future__ import annotations

import difflib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from encbench.data import readers
from encbench.data.columns import as_category_text, distinct_counts, infer_column_types, is_plain_str, is_text_dtype
from encbench.data.errors import MAX_LISTED, listed_names
from encbench.data.leakage import BINNED_MAX_LEVELS, LEAK_AUC, binned_target, leak_scores, recoded_target
from encbench.data.readers import MISSING_MARKS_ATTR, SHORT_ROWS_ATTR
from encbench.data.target import grouped_numbers, grouped_numbers_hint, regression_target, target_classes, task_of
from encbench.tasks import TASKS, get_task

logger = logging.getLogger(__name__)


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
        the target reads as (:func:`~encbench.data.target.target_task`); None when the target is unusable.
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


def _where(source: str | None) -> str:
    return f"file {source!r}" if source else "the data"


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
    _report_short_rows(frame, where, warnings)
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
        kind = task_of(frame[target], task)
        if not get_task(kind).classes:
            y_values = regression_target(frame[target], target, where, errors)
        else:
            n_errors = len(errors)
            classes, positive_text, y_text = target_classes(frame[target], target, positive_class,
                                                             n_folds, where, errors, task=kind)
            grouped = grouped_numbers(frame[target])
            if grouped is not None:  # the hint beside the refusal; a warning if classes were accepted
                (errors if len(errors) > n_errors else warnings).append(
                    grouped_numbers_hint(target, where, *grouped))
    cat_cols, num_cols, converted = _column_treatment(frame, columns, features, target, categorical,
                                                      where, errors, warnings)
    suspects: list[str] = []
    if n_rows > 1:
        suspects = _id_like_columns(every_row, features, cat_cols, warnings)
        if y_text is not None and len(classes) >= 2:
            _leaking_columns(frame, features, cat_cols, target, kind, y_text, suspects, warnings)
        elif y_values is not None:
            _leaking_columns(frame, features, cat_cols, target, kind, pd.Series(y_values), suspects,
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
        if c in cat_set and not is_plain_str(dtype):
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


def _report_missing_marks(frame: pd.DataFrame, where: str, warnings: list[str]) -> None:
    """The load report: '?' cells became missing values, said, never silent."""
    marks = frame.attrs.get(MISSING_MARKS_ATTR) or {}
    if marks:
        total = sum(marks.values())
        shown = ", ".join(f"{c!r} ({n})" for c, n in list(marks.items())[:MAX_LISTED])
        more = f", ... ({len(marks) - MAX_LISTED} more columns)" if len(marks) > MAX_LISTED else ""
        warnings.append(f"read {total} '?' cells of {where} as missing values (OpenML/UCI "
                        f"convention, quoted or not): {shown}{more}")


def _report_short_rows(frame: pd.DataFrame, where: str, warnings: list[str]) -> None:
    """The load report: rows with fewer fields than the header were padded, said, never silent."""
    short = frame.attrs.get(SHORT_ROWS_ATTR)
    if short:
        n, lines = short["count"], short["lines"]
        shown = ", ".join(str(line) for line in lines) + (", ..." if n > len(lines) else "")
        rows, their = ("row has", "its") if n == 1 else ("rows have", "their")
        warnings.append(f"{n} {rows} fewer fields than the header of {where} ({short['fields']}): "
                        f"{their} last cells were read as missing values (line {shown}); check "
                        f"that no field is missing from the middle of a row, which would shift "
                        f"the values after it into the wrong columns")


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
        errors.append(f"no target column given; columns of {where} are {listed_names(columns, 50)}")
        return False
    if target not in columns:
        hint = ""
        close = [c for c in columns if c.lower() == str(target).lower()] or \
            difflib.get_close_matches(str(target), columns, n=1)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
        errors.append(f"target column {target!r} not in {where}{hint}; columns are "
                      f"{listed_names(columns, 50)}")
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
        warnings.append(f"dropped {len(empty_cols)} entirely empty columns: {listed_names(empty_cols)}")
    if features and len(frame):
        empty_rows = frame[features].isna().all(axis=1).to_numpy()
        if empty_rows.any():
            n_empty = int(empty_rows.sum())
            dropped_rows += n_empty
            frame = frame.loc[~empty_rows]
            warnings.append(f"dropped {n_empty} rows whose features are all missing")
    return frame.reset_index(drop=True), features, dropped_rows, dropped_columns


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
            errors.append(f"categorical column(s) {listed_names(unknown)} not in {where}; columns are "
                          f"{listed_names(columns, 50)}")
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
            f"({listed_names(num_cols)}); the benchmark compares categorical encoders, so at least "
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
    n_distinct = distinct_counts(frame[counted], dropna=True)
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
                     kind: str, y: pd.Series, suspects: list[str], warnings: list[str]) -> None:
    """Add to ``suspects`` (and warn about) the columns that likely leak the target: the target
    recoded one-to-one (a class target) or binned (a numeric one), or a column that predicts it
    alone almost perfectly by its values or by where it is missing
    (:func:`~encbench.data.leakage.leak_scores` at :data:`~encbench.data.leakage.LEAK_AUC`). A
    column with one value per class but fewer values than classes is warned about only: it may
    be a property of the class rather than the target recoded.

    ``y``: the class labels as text, or the numeric target, row-aligned with ``frame``.
    """
    y = y.reset_index(drop=True)
    rows = frame.reset_index(drop=True)
    flagged_softly: list[str] = []  # warned about, not proposed for dropping
    if get_task(kind).classes:
        few = distinct_counts(rows[features], dropna=False) <= y.nunique()
        for c in [c for c in features if few[c]]:
            mapping = recoded_target(rows[c], y)
            if mapping is None:
                continue
            if all(k == v for k, v in mapping.items()):
                suspects.append(c)
                warnings.append(f"column {c!r} is identical to the target {target!r}: it "
                                f"leaks the answer; drop it")
            elif len(set(mapping.values())) == len(mapping):  # its value -> the class
                suspects.append(c)
                pairs = sorted(((v, k) for k, v in mapping.items()), key=str)
                warnings.append(f"column {c!r} maps one-to-one onto the target {target!r} "
                                f"({_pairs_text(pairs)}): it leaks the answer; drop it")
            else:  # coarser than the classes: a property of each class, or the target recoded
                flagged_softly.append(c)
                warnings.append(f"column {c!r} takes a single value within each class of the "
                                f"target {target!r} ({_pairs_text(list(mapping.items()))}): either "
                                f"the target recoded, which leaks the answer, or a property of "
                                f"each class (as a species' leaf shape); keep it only if it is "
                                f"observed on each row before the target is known")
    else:
        few = distinct_counts(rows[features], dropna=False) <= BINNED_MAX_LEVELS
        for c in [c for c in features if few[c]]:
            ranges = binned_target(rows[c], y.to_numpy(dtype=float))
            if ranges is None:
                continue
            suspects.append(c)
            shown = "; ".join(f"{level!r}: {lo:.4g} to {hi:.4g}" for level, lo, hi in ranges)
            warnings.append(f"column {c!r} cuts the target {target!r} into ranges that do not "
                            f"overlap ({shown}): it is the target binned, known only with it; "
                            f"drop it")
    flagged = {*suspects, *flagged_softly}
    rest = [c for c in features if c not in flagged]
    if not rest:
        return
    cat_set = set(cat_cols)
    scores = leak_scores(rows[rest], y, kind, [c for c in rest if c in cat_set])
    how = {"binary": "single-feature AUC",
           "multiclass": "single-feature AUC of each class against the rest, weighted by the classes' shares",
           "regression": "single-feature AUC of the target above its median against the rest"}[kind]
    for c in rest:
        by_values, by_gaps = float(scores.at[c, "values"]), float(scores.at[c, "missing"])
        if by_values >= LEAK_AUC:
            suspects.append(c)
            warnings.append(
                f"column {c!r} alone predicts the target {target!r} almost perfectly "
                f"({how} {by_values:.3f} >= {LEAK_AUC}): it likely leaks the answer "
                f"(known only with or after the target); drop it unless it is truly known "
                f"before")
        elif by_gaps >= LEAK_AUC:
            suspects.append(c)
            warnings.append(
                f"where column {c!r} is missing predicts the target {target!r} almost perfectly "
                f"({how} {by_gaps:.3f} >= {LEAK_AUC}, of its gaps): it likely leaks the answer "
                f"(given only for some outcomes); drop it unless it is truly known before")


def _pairs_text(pairs: list[tuple[str, str]]) -> str:
    """``'a' -> 'x', 'b' -> 'y'``, the first :data:`MAX_LISTED` pairs and how many more."""
    shown = ", ".join(f"{a!r} -> {b!r}" for a, b in pairs[:MAX_LISTED])
    return shown + (f", ... ({len(pairs) - MAX_LISTED} more)" if len(pairs) > MAX_LISTED else "")


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
        The task to validate for; None infers it from the target (:func:`~encbench.data.target.target_task`).

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
