"""One loader for every dataset source: bundled copies, OpenML ids and local files."""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from encbench.data import rdatasets_source
from encbench.data.bundled import QUESTION_MARK_LEVELS, BundledEntry, bundled_names, find_bundled
from encbench.data.errors import DatasetError
from encbench.data.fingerprint import column_key, match_published
from encbench.data.openml_source import fetch_openml
from encbench.data.readers import DEFAULT_MAX_BYTES, MISSING_MARKS_ATTR, read_table_and_hash
from encbench.data.target import label_text
from encbench.data.validation import ValidationReport, prepare

logger = logging.getLogger(__name__)

#: How the target is paired with the feature rows (``load_dataset(target_alignment=...)``):
#: ``'row'``, each row keeps its own label (the protocol, and every run); ``'study'``, the
#: labels are taken by position after the empty rows are dropped, as the published study's
#: no-tuning and model-tuning scripts did, which reproduces its cells of such a dataset.
TARGET_ALIGNMENTS = ("row", "study")


@dataclass(frozen=True, eq=False)
class Dataset:
    """A validated dataset (binary, multiclass or regression target), ready for the protocol.

    Attributes
    ----------
    key : str
        Database key (``datasets.dataset``): the OpenML id as text for OpenML and bundled
        datasets (``"31"``) and for files that are a copy of a published dataset (recognised
        by :func:`encbench.data.fingerprint.match_published`), else
        ``"file:<first 12 hex digits of sha256>"`` for files.
    name : str
        Human-readable name (OpenML name, or the file name without extensions).
    source : {'openml', 'bundled', 'upload', 'rdatasets'}
        Where the data came from.
    openml_id : int or None
        OpenML id; for files, that of the published dataset they are a copy of, else None.
    target : str
        Target column.
    positive_class : str or None
        The class encoded as 1 (as text); None for a multiclass or regression target.
    sha256 : str
        SHA-256 of the file's bytes (as stored), so a changed file is noticed.
    X : pandas.DataFrame
        Features in file order: categorical columns as ``str`` with NaN for missing, numerical
        columns as numbers. Rows with a missing target, empty rows and empty columns dropped.
    y : numpy.ndarray
        The target, aligned with ``X``: 0/1 int64 (1 = ``positive_class``) for a binary task,
        the class codes 0..K-1 (int64, in ``classes`` order) for a multiclass one, float64 for
        regression.
    categorical : list of str
        Categorical feature columns.
    classes : tuple of str
        (negative class, positive class), as text; every class in code order for a multiclass
        target; () for regression.
    path : pathlib.Path or None
        The file read.
    warnings : list of str
        Validation warnings (ID-like columns, likely leakage, dropped rows/columns).
    report : ValidationReport
        The full validation report.
    task : {'binary', 'multiclass', 'regression'}
        The task type: inferred from the target (:func:`encbench.data.target.target_task`)
        unless ``load_dataset(task=...)`` says.
    """

    key: str
    name: str
    source: str
    openml_id: int | None
    target: str
    positive_class: str
    sha256: str
    X: pd.DataFrame
    y: np.ndarray
    categorical: list[str]
    classes: tuple[str, str]
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)
    report: ValidationReport | None = None
    task: str = "binary"

    @property
    def numerical(self) -> list[str]:
        """Numerical feature columns."""
        cats = set(self.categorical)
        return [c for c in self.X.columns if c not in cats]

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_categorical(self) -> int:
        return len(self.categorical)

    def as_record(self) -> dict:
        """The row of the ``datasets`` table (docs/ARCHITECTURE.md, Results database), without ``added_at``."""
        return {
            "dataset": self.key, "name": self.name, "source": self.source,
            "openml_id": self.openml_id, "n_rows": self.n_rows, "n_features": self.n_features,
            "n_categorical": self.n_categorical, "target": self.target,
            "positive_class": self.positive_class, "sha256": self.sha256, "task": self.task,
        }

    def __repr__(self) -> str:
        return (f"Dataset(key={self.key!r}, name={self.name!r}, source={self.source!r}, "
                f"rows={self.n_rows}, features={self.n_features}, "
                f"categorical={self.n_categorical}, target={self.target!r}, "
                f"positive_class={self.positive_class!r}, task={self.task!r})")


@dataclass(frozen=True)
class DatasetSpec:
    """A parsed dataset reference (see :func:`parse_dataset_spec`)."""

    kind: str  # 'bundled' | 'openml' | 'file' | 'rdatasets'
    value: str  # bundled name/id, OpenML id, file path, or '<R package>/<item>'
    target: str | None = None
    positive_class: str | None = None


def parse_dataset_spec(spec: str | os.PathLike) -> DatasetSpec:
    """Parse a dataset reference as used by ``load_dataset`` and ``--datasets``.

    Forms: ``bundled:<name or id>``; ``<OpenML id>`` or ``openml:<id>``;
    ``rdatasets:<package>/<item>[:<target>]`` or ``rdatasets:<manifest name>``
    (:mod:`encbench.data.rdatasets_source`); a file path, optionally
    followed by ``:<target>`` or ``:<target>:<positive class>`` (the path is the longest
    prefix that exists as a file; use keyword arguments for column names containing ':').
    """
    if isinstance(spec, os.PathLike):
        return DatasetSpec("file", os.fspath(spec))
    if not isinstance(spec, str):
        raise DatasetError(f"a dataset reference is a string or a path, got {spec!r}")
    text = spec.strip()
    if not text:
        raise DatasetError("empty dataset reference")
    lower = text.lower()
    if lower.startswith("bundled:"):
        return DatasetSpec("bundled", text.split(":", 1)[1].strip())
    if lower.startswith("openml:"):
        return DatasetSpec("openml", text.split(":", 1)[1].strip())
    if lower.startswith(rdatasets_source.PREFIX):
        package, item, target = rdatasets_source.parse_reference(text)
        return DatasetSpec("rdatasets", f"{package}/{item}", target)
    if re.fullmatch(r"\d+", text):
        return DatasetSpec("openml", text)
    if Path(text).is_file():
        return DatasetSpec("file", text)
    # 'path:target' or 'path:target:positive': the longest prefix that is a file.
    for match in reversed([m.start() for m in re.finditer(":", text)]):
        prefix = text[:match]
        if prefix and Path(prefix).is_file():
            rest = text[match + 1:]
            target, _, positive = rest.partition(":")
            return DatasetSpec("file", prefix, target or None, positive or None)
    # Not a file: say what might have been meant.
    base = text.split(":", 1)[0]
    hint = ""
    if find_bundled(base) is not None:
        hint = f"; did you mean 'bundled:{base}'?"
    raise DatasetError(
        f"no dataset {text!r}: not a file, an OpenML id or 'bundled:<name>'{hint} "
        f"(bundled: {bundled_names()})")


def _file_stem(path: Path) -> str:
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    return os.path.splitext(name)[0] or path.name


def _build(frame: pd.DataFrame, *, key: str | None, name: str, source: str,
           openml_id: int | None, target: str | None, positive_class, categorical,
           n_folds: int, sha256: str, path: Path | None, label: str,
           in_file: bool = True, task: str | None = None) -> Dataset:
    prepared = prepare(frame, target, positive_class, categorical, n_folds,
                       source=label if in_file else None, task=task)
    report = prepared.report
    if report.errors:
        headline = None
        if len(report.errors) > 1:
            headline = f"dataset {label!r} cannot be used ({len(report.errors)} problems)"
        raise DatasetError(report.errors, headline=headline)
    for message in report.warnings:
        logger.warning("%s: %s", label, message)
    return Dataset(
        key=key or f"file:{sha256[:12]}", name=name, source=source, openml_id=openml_id,
        target=str(target),
        positive_class=None if report.positive_class is None else str(report.positive_class),
        sha256=sha256, X=prepared.X, y=prepared.y, categorical=list(report.categorical),
        classes=prepared.classes, path=path, warnings=list(report.warnings), report=report,
        task=report.task)


def _as_published(dataset: Dataset, frame: pd.DataFrame) -> Dataset:
    """``dataset`` under its published key when the file is a copy of a published dataset.

    A copy (same rows, column set, target and class counts; any column order, quoting or
    missing marker) with the protocol's positive class is the published task: its results are
    stored under the OpenML id, so the dataset is never counted twice. Another positive class
    is another task and keeps its file key, as does a multiclass or regression task (every
    published dataset is binary).
    """
    if dataset.task != "binary":
        return dataset
    match = match_published(frame, dataset.target)
    if match is None:
        return dataset
    default_positive = list(dataset.report.classes)[1] if dataset.report is not None else None
    if dataset.positive_class != default_positive:
        logger.info("%s matches OpenML %d but uses positive class %r: kept as %s",
                    dataset.name, match.openml_id, dataset.positive_class, dataset.key)
        return dataset
    note = (f"this file is a copy of the published dataset OpenML {match.openml_id} "
            f"({match.name}); its results are stored under that dataset (key {match.key!r}), "
            f"next to the published ones, not as a new dataset")
    left_out = sorted(match.fingerprint.columns - {column_key(c) for c in frame.columns})
    if left_out:
        note += f" (columns left out: {', '.join(left_out)})"
    logger.info("%s: %s", dataset.name, note)
    return dataclasses.replace(dataset, key=match.key, name=match.name, openml_id=match.openml_id,
                               warnings=[*dataset.warnings, note])


def _study_aligned(dataset: Dataset, frame: pd.DataFrame) -> Dataset:
    """``dataset`` with its target paired with the rows as the study's scripts paired them.

    The study's ``main_no_tuning.py`` and ``main_model_tuning.py`` (DT, kNN, LogReg, SVM) drop
    the rows whose features are all missing, reset the index, and only then take the labels
    with that new index (``y[X.index]``), i.e. the first ``n`` labels of the file: every row
    after a dropped one carries the label of the row before it. Its full-tuning script (and
    LightGBM's rows) index the labels before resetting, as ``'row'`` alignment does. Only
    vote (OpenML 56, one empty row of 435, the 249th) among the local copies has such a row.
    """
    columns = [str(c) for c in frame.columns]
    target = dataset.target
    labelled = frame.set_axis(columns, axis=1)
    labelled = labelled[labelled[target].notna()]
    kept = labelled.drop(columns=[target]).notna().any(axis=1).to_numpy()
    n_dropped = int((~kept).sum())
    if not n_dropped:
        return dataset
    labels = labelled[target].map(label_text).to_numpy(dtype=object) == dataset.positive_class
    y = labels[: dataset.n_rows].astype(np.int64)
    moved = int((y != np.asarray(dataset.y)).sum())
    first = int(np.flatnonzero(~kept)[0])
    note = (f"target aligned as the study's no-tuning and model-tuning scripts did (for reproducing "
            f"their published cells, never for a run): after dropping {n_dropped} empty row(s) "
            f"(the first is row {first + 1} of the labelled rows) the labels are taken by position, "
            f"so {dataset.n_rows - first} rows carry the label of another row ({moved} a different "
            f"class)")
    logger.info("%s: %s", dataset.name, note)
    return dataclasses.replace(dataset, y=y, warnings=[*dataset.warnings, note])


def _check_published_task(label: str, default_target: str | None, target, categorical,
                          file_hint: str) -> str | None:
    """OpenML keys mean the published task: its target, the protocol's positive class."""
    if target is not None and default_target is not None and str(target) != default_target:
        raise DatasetError(
            f"{label} has target {default_target!r}; got target {target!r}. The OpenML key "
            f"stands for the published task; to use another target load the file itself: "
            f"{file_hint}")
    if categorical is not None:
        raise DatasetError(
            f"{label} uses the published column types; got categorical={list(categorical)!r}. "
            f"To override column types load the file itself: {file_hint}")
    return default_target if default_target is not None else target


def _published(frame, sha, *, label, key, name, source, openml_id, target, positive_class,
               n_folds, path, file_hint, target_alignment: str = "row",
               task: str | None = None) -> Dataset:
    if task not in (None, "binary"):
        raise DatasetError(f"{label} is a published binary task; got task={task!r}. To use "
                           f"another task load the file itself: {file_hint}")
    dataset = _build(frame, key=key, name=name, source=source, openml_id=openml_id,
                     target=target, positive_class=None, categorical=None, n_folds=n_folds,
                     sha256=sha, path=path, label=label, task="binary")
    if positive_class is not None and str(positive_class) != dataset.positive_class:
        raise DatasetError(
            f"{label} has positive class {dataset.positive_class!r} (the protocol's: second "
            f"class in sorted order); got positive_class={positive_class!r}. To choose another "
            f"positive class load the file itself: {file_hint}")
    return _study_aligned(dataset, frame) if target_alignment == "study" else dataset


def _load_bundled(entry: BundledEntry, target, positive_class, categorical,
                  n_folds: int, target_alignment: str = "row", task: str | None = None) -> Dataset:
    label = f"bundled:{entry.name}"
    file_hint = f"load_dataset({str(entry.path)!r}, target=..., positive_class=...)"
    target = _check_published_task(f"bundled dataset {entry.name!r} (OpenML {entry.openml_id})",
                                   entry.target, target, categorical, file_hint)
    frame, sha = read_table_and_hash(entry.path, max_bytes=None, max_cells=None, label=entry.file)
    levels = QUESTION_MARK_LEVELS.get(entry.openml_id, ())
    if levels:                                  # read as missing; a level of the published data
        marks = dict(frame.attrs.get(MISSING_MARKS_ATTR) or {})
        for column in levels:
            frame[column] = frame[column].astype(object).where(frame[column].notna(), "?")
            marks.pop(column, None)
        frame.attrs[MISSING_MARKS_ATTR] = marks
    return _published(frame, sha, label=label, key=entry.key, name=entry.name,
                      source="bundled", openml_id=entry.openml_id, target=target,
                      positive_class=positive_class, n_folds=n_folds, path=entry.path,
                      file_hint=file_hint, target_alignment=target_alignment, task=task)


def _load_rdatasets(value: str, target, positive_class, categorical, n_folds: int,
                    task: str | None) -> Dataset:
    """An R dataset of the ``rdatasets`` package (source ``'rdatasets'``), read offline."""
    package, item = value.split("/", 1)
    label = f"rdatasets:{package}/{item}"
    frame, sha, entry = rdatasets_source.read_item(package, item, target)
    if target is None:
        columns = ", ".join(repr(str(c)) for c in list(frame.columns)[:50])
        raise DatasetError(f"no target given for rdatasets item {package}/{item} (not in "
                           f"{rdatasets_source.MANIFEST_NAME}); name it as '{label}:<column>'; "
                           f"columns are {columns}")
    return _build(frame, key=f"{label}:{target}", name=entry.name if entry else f"{item}-{target}",
                  source="rdatasets", openml_id=None, target=target,
                  positive_class=positive_class, categorical=categorical, n_folds=n_folds,
                  sha256=sha, path=rdatasets_source.item_path(package, item), label=label,
                  task=task)


def load_dataset(spec: str | os.PathLike, target: str | None = None, positive_class=None, *,
                 categorical: Sequence[str] | None = None, n_folds: int = 5,
                 max_bytes: int | None = DEFAULT_MAX_BYTES, name: str | None = None,
                 label: str | None = None, format: str | None = None, sep: str | None = None,
                 prefer_bundled: bool = True, cache_dir: str | os.PathLike | None = None,
                 server: str | None = None, target_alignment: str = "row",
                 task: str | None = None) -> Dataset:
    """Load, validate and split a dataset for the benchmark.

    Parameters
    ----------
    spec : str or path-like
        ``"bundled:credit-g"`` (or ``"bundled:31"``); an OpenML id ``"31"`` / ``"openml:31"``
        (its bundled copy when there is one, else downloaded through ``openml``); a file path
        (CSV, Parquet, ARFF, each optionally ``.gz``), optionally ``"path.csv:target"`` or
        ``"path.csv:target:positive"``.
    target : str, optional
        Target column. Required for files (unless given in ``spec``); for OpenML/bundled
        datasets it defaults to, and must equal, the dataset's default target.
    positive_class : optional
        Class encoded as 1; default the second class in sorted order (``LabelEncoder``, as the
        published study). OpenML/bundled datasets always use the default.
    categorical : list of str, optional
        Override which columns are categorical (files only).
    n_folds : int
        Outer CV folds the dataset must support (2 rows of each class per fold).
    max_bytes : int or None
        Size limit for files (default 200 MB); None for none. Not applied to bundled/OpenML.
    name : str, optional
        Dataset name for files (default: file name without extensions).
    label : str, optional
        File name used in messages (e.g. the name a file was uploaded under).
    format, sep : str, optional
        Passed to :func:`~encbench.data.read_table`.
    prefer_bundled : bool
        Use the bundled copy of an OpenML id when there is one (no network). False forces the
        ``openml`` package (its cache, else the network).
    cache_dir, server : optional
        ``openml`` cache root (default ``db/cache/openml`` or ``$ENCBENCH_CACHE/openml``) and
        server URL.
    target_alignment : {'row', 'study'}
        ``'row'`` (default, the only one a run uses): every row keeps its own label. ``'study'``:
        after the empty rows are dropped the labels are taken by position, as the published
        study's no-tuning and model-tuning scripts did (see :data:`TARGET_ALIGNMENTS`); for a
        published dataset with an empty row (vote) this reproduces its published DT, kNN,
        LogReg and SVM cells of those tunings. Changes nothing without empty rows.
    task : {'binary', 'multiclass', 'regression'}, optional
        The task type; None (default) infers it from the target: two classes are binary, a
        numeric target with fractions or more than 20 distinct values is regression, other
        targets multiclass (3 to 50 classes). Bundled and OpenML datasets are binary.

    Returns
    -------
    Dataset

    Raises
    ------
    DatasetError
        Unreadable file, OpenML unreachable (within seconds; the message says how to use a local
        file or a bundled copy), or failed validation (the message lists every error).
    """
    if target_alignment not in TARGET_ALIGNMENTS:
        raise DatasetError(f"target_alignment must be one of {TARGET_ALIGNMENTS}: got {target_alignment!r}")
    parsed = parse_dataset_spec(spec)
    target = target if target is not None else parsed.target
    positive_class = positive_class if positive_class is not None else parsed.positive_class

    if parsed.kind == "bundled":
        entry = find_bundled(parsed.value)
        if entry is None:
            raise DatasetError(f"no bundled dataset {parsed.value!r}; bundled datasets are "
                               f"{bundled_names()}")
        return _load_bundled(entry, target, positive_class, categorical, n_folds, target_alignment,
                             task)

    if parsed.kind == "rdatasets":
        return _load_rdatasets(parsed.value, target, positive_class, categorical, n_folds, task)

    if parsed.kind == "openml":
        try:
            openml_id = int(parsed.value)
        except ValueError:
            raise DatasetError(f"an OpenML id is a whole number, got {parsed.value!r}") from None
        entry = find_bundled(openml_id)
        if entry is not None and prefer_bundled:
            logger.info("OpenML %d: using the bundled copy %s", openml_id, entry.file)
            return _load_bundled(entry, target, positive_class, categorical, n_folds, target_alignment,
                             task)
        fetched = fetch_openml(openml_id, cache_dir=cache_dir, server=server)
        label = f"OpenML {openml_id} ({fetched.name})"
        file_hint = f"load_dataset({str(fetched.path)!r}, target=..., positive_class=...)"
        target = _check_published_task(label, fetched.default_target, target, categorical,
                                       file_hint)
        if target is None:
            raise DatasetError(f"{label} has no default target; name one with target=...")
        frame, sha = read_table_and_hash(fetched.path, max_bytes=None, max_cells=None, format="arff",
                                         label=f"{fetched.path.name} of OpenML {openml_id}")
        drop = [c for c in (fetched.row_id_attribute, *fetched.ignore_attributes)
                if c and c in frame.columns and c != target]
        if drop:
            frame = frame.drop(columns=drop)
        return _published(frame, sha, label=label, key=str(openml_id), name=fetched.name,
                          source="openml", openml_id=openml_id, target=target,
                          positive_class=positive_class, n_folds=n_folds, path=fetched.path,
                          file_hint=file_hint, target_alignment=target_alignment, task=task)

    path = Path(parsed.value)
    label = label or path.name
    frame, sha = read_table_and_hash(path, format=format, sep=sep, max_bytes=max_bytes,
                                     label=label)
    if target is None:
        columns = ", ".join(repr(str(c)) for c in list(frame.columns)[:50])
        raise DatasetError(f"no target column given for file {label!r}; name it as "
                           f"'{parsed.value}:<column>' or with target=...; columns are {columns}")
    dataset = _build(frame, key=None, name=name or _file_stem(path), source="upload",
                     openml_id=None, target=target, positive_class=positive_class,
                     categorical=categorical, n_folds=n_folds, sha256=sha, path=path, label=label,
                     task=task)
    dataset = _as_published(dataset, frame)
    return _study_aligned(dataset, frame) if target_alignment == "study" else dataset


def validate_file(path: str | os.PathLike, target: str | None, positive_class=None, *,
                  categorical: Sequence[str] | None = None, n_folds: int = 5,
                  max_bytes: int | None = DEFAULT_MAX_BYTES, label: str | None = None,
                  format: str | None = None, sep: str | None = None,
                  task: str | None = None) -> ValidationReport:
    """Read and validate a file without raising: read errors become report errors.

    For an upload page: every problem (empty, unparseable with line number, over the size
    limit, duplicate columns, target missing or not binary, ...) comes back as a message.
    """
    path = Path(path)
    label = label or path.name
    try:
        frame, _ = read_table_and_hash(path, format=format, sep=sep, max_bytes=max_bytes,
                                       label=label)
    except DatasetError as exc:
        return ValidationReport(errors=list(exc.errors), target=target)
    return prepare(frame, target, positive_class, categorical, n_folds, source=label, task=task).report


def dataset_from_frame(frame: pd.DataFrame, target: str, positive_class=None, *,
                       categorical: Sequence[str] | None = None, n_folds: int = 5,
                       name: str = "frame", task: str | None = None) -> Dataset:
    """Validate an in-memory table and return it as a :class:`Dataset` (source ``'upload'``).

    ``sha256`` is that of ``frame.to_csv(index=False)`` encoded as UTF-8, so the key equals
    the one of that CSV file loaded with :func:`load_dataset`. Handy for tests and synthetic data.
    """
    sha = hashlib.sha256(frame.to_csv(index=False).encode("utf-8")).hexdigest()
    dataset = _build(frame, key=None, name=name, source="upload", openml_id=None, target=target,
                     positive_class=positive_class, categorical=categorical, n_folds=n_folds,
                     sha256=sha, path=None, label=name, in_file=False, task=task)
    return _as_published(dataset, frame)
