"""Meta-features of a dataset: cheap descriptions that need no model fitted.

They say what a table looks like to an encoder: how many rows, how many categorical and numerical
columns, how many levels the categorical columns have (the largest, the median, and the share of
levels seen only once, which a target encoder estimates from a single row), how much is missing,
and how balanced the target is. :mod:`encbench.recommend` finds the published datasets closest to
a user's table by them.

Definitions (on the validated table: rows without a target, empty rows and empty columns dropped,
the protocol's column treatment):

- ``n_rows``; ``n_categorical`` and ``n_numeric`` feature columns;
- ``max_cardinality`` and ``median_cardinality``: distinct non-missing levels per categorical
  column, the largest and the median over the columns (0 without categorical columns);
- ``singleton_share``: levels seen in exactly one row over all levels, pooled over the categorical
  columns (so a wide-cardinality column weighs as many levels as it has; 0 without categorical
  columns);
- ``missing_share``: missing feature cells over all feature cells;
- the target's features, by task: ``minority_share`` (rows of the rarer class over all rows) for
  a binary target. The task is a factor that is never pooled: :data:`TARGET_FEATURES` maps each
  task to the function describing its target and :data:`DISTANCE_FEATURES` to the features its
  datasets are compared by; a regression task adds its entry there (e.g. ``target_spread``, the
  target's interquartile range over its median absolute value) and nothing else changes.

The published datasets' meta-features are shipped in ``db/seed/published_metafeatures.csv``
(:func:`published_metafeatures`), regenerated from the dataset files by
``benchmarks/published_metafeatures.py``; its ``source`` column says which file each row comes
from, or that the dataset is not available here.
"""
from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from encbench.resources import resource_dir

logger = logging.getLogger(__name__)

#: the shipped table of the published datasets' meta-features (in the ``seed`` resource)
PUBLISHED_FILE = "published_metafeatures.csv"

#: every meta-feature, in display order, with what it means (pages and the CLI read it)
DESCRIPTIONS: dict[str, str] = {
    "n_rows": "rows",
    "n_categorical": "categorical columns",
    "n_numeric": "numerical columns",
    "max_cardinality": "levels of the widest categorical column",
    "median_cardinality": "median levels of a categorical column",
    "singleton_share": "share of levels seen in one row only",
    "missing_share": "share of missing feature cells",
    "minority_share": "share of rows in the rarer class",
    "target_spread": "spread of a regression target (not yet used)",
}
#: the meta-features that are counts (compared on a log scale by :mod:`encbench.recommend`)
COUNT_FEATURES: tuple[str, ...] = ("n_rows", "n_categorical", "n_numeric", "max_cardinality",
                                   "median_cardinality")
#: the features datasets of each task are compared by
DISTANCE_FEATURES: dict[str, tuple[str, ...]] = {
    "binary": ("n_rows", "n_categorical", "n_numeric", "max_cardinality", "median_cardinality",
               "singleton_share", "missing_share", "minority_share"),
}


@dataclass(frozen=True)
class MetaFeatures:
    """The meta-features of one dataset (see the module docstring for the definitions).

    Attributes
    ----------
    task : str
        ``"binary"`` (a value of :data:`encbench.vocab.TASKS`).
    n_rows, n_categorical, n_numeric, max_cardinality : int
    median_cardinality, singleton_share, missing_share : float
    minority_share : float or None
        Binary targets only.
    target_spread : float or None
        Regression targets only (not computed yet: no regression task is published).
    """

    task: str
    n_rows: int
    n_categorical: int
    n_numeric: int
    max_cardinality: int
    median_cardinality: float
    singleton_share: float
    missing_share: float
    minority_share: float | None = None
    target_spread: float | None = None

    def as_dict(self) -> dict:
        """Field name -> value (``task`` first)."""
        return asdict(self)

    def vector(self) -> pd.Series:
        """The task's distance features (:data:`DISTANCE_FEATURES`) as a float Series."""
        names = DISTANCE_FEATURES[self.task]
        return pd.Series({n: float(getattr(self, n)) for n in names}, dtype=float)


def _binary_target(y: np.ndarray) -> dict:
    y = np.asarray(y)
    values, counts = np.unique(y, return_counts=True)
    if len(values) != 2:
        raise ValueError(f"a binary target has two classes: got {len(values)} ({values[:5].tolist()!r})")
    return {"minority_share": float(counts.min() / counts.sum())}


#: task -> function of the target returning its meta-features (a dict of MetaFeatures fields)
TARGET_FEATURES: dict[str, Callable[[np.ndarray], dict]] = {"binary": _binary_target}


def compute(X: pd.DataFrame, y, categorical: Sequence[str], *, task: str = "binary") -> MetaFeatures:
    """The meta-features of a validated table.

    Parameters
    ----------
    X : pandas.DataFrame
        The feature columns (target left out), as :func:`encbench.data.prepare` returns them.
    y : array-like
        The target, one value per row of ``X``.
    categorical : sequence of str
        The categorical columns of ``X``; every other column counts as numerical.
    task : str, default "binary"
        A task of :data:`TARGET_FEATURES`.

    Returns
    -------
    MetaFeatures

    Raises
    ------
    ValueError
        An unknown task, a categorical column not in ``X``, a target whose length differs from
        the rows', or a target that does not fit the task.

    Examples
    --------
    >>> X = pd.DataFrame({"colour": ["red", "red", "blue", None], "size": [1.0, 2.0, None, 4.0]})
    >>> mf = compute(X, [0, 1, 0, 0], ["colour"])
    >>> mf.max_cardinality, mf.singleton_share, mf.missing_share, mf.minority_share
    (2, 0.5, 0.25, 0.25)
    """
    if task not in TARGET_FEATURES:
        raise ValueError(f"meta-features are defined for the tasks {sorted(TARGET_FEATURES)}: got task {task!r}")
    columns = [str(c) for c in X.columns]
    unknown = [c for c in categorical if str(c) not in columns]
    if unknown:
        raise ValueError(f"categorical columns not in the table: got {unknown!r}; columns are {columns[:20]!r}")
    y = np.asarray(y)
    if len(y) != len(X):
        raise ValueError(f"the target has {len(y)} values for {len(X)} rows: got {len(y)!r}")
    frame = X.set_axis(columns, axis=1)
    cats = [str(c) for c in categorical]
    cardinalities, singletons = [], 0
    for c in cats:
        counts = frame[c].dropna().value_counts()
        cardinalities.append(int(len(counts)))
        singletons += int((counts == 1).sum())
    levels = sum(cardinalities)
    cells = frame.shape[0] * frame.shape[1]
    return MetaFeatures(
        task=task,
        n_rows=int(len(frame)),
        n_categorical=len(cats),
        n_numeric=int(frame.shape[1] - len(cats)),
        max_cardinality=max(cardinalities, default=0),
        median_cardinality=float(np.median(cardinalities)) if cardinalities else 0.0,
        singleton_share=singletons / levels if levels else 0.0,
        missing_share=float(frame.isna().to_numpy().sum() / cells) if cells else 0.0,
        **TARGET_FEATURES[task](y),
    )


def from_dataset(dataset) -> MetaFeatures:
    """The meta-features of a loaded :class:`encbench.data.Dataset` (binary)."""
    return compute(dataset.X, dataset.y, dataset.categorical, task="binary")


def from_frame(frame: pd.DataFrame, target: str, positive_class=None,
               categorical: Sequence[str] | None = None, *, source: str | None = None) -> MetaFeatures:
    """Validate a whole table (target included) as the protocol does, then compute its meta-features.

    Parameters are those of :func:`encbench.data.prepare`.

    Raises
    ------
    ValueError
        If the table does not validate (the message lists the validation errors).
    """
    from encbench.data.validation import prepare

    prepared = prepare(frame, target, positive_class, categorical, source=source)
    if prepared.report.errors:
        raise ValueError(f"meta-features need a valid table: got {'; '.join(prepared.report.errors)}")
    return compute(prepared.X, prepared.y, prepared.report.categorical)


#: columns of the shipped published table, in order
PUBLISHED_COLUMNS: tuple[str, ...] = ("dataset", "name", *MetaFeatures.__dataclass_fields__, "source")


def published_record(dataset: str, name: str, features: MetaFeatures | None, source: str, **known) -> dict:
    """One row of the published table: the meta-features (or NaN), where they come from.

    ``known`` fills single fields when only some are known (e.g. rows and class balance from a
    dataset's fingerprint, without its file).
    """
    row = {"dataset": str(dataset), "name": name}
    values = features.as_dict() if features is not None else {f: None for f in MetaFeatures.__dataclass_fields__}
    unknown = [k for k in known if k not in values]
    if unknown:
        raise ValueError(f"not meta-features: got {unknown!r}")
    values.update(known)
    row.update(values)
    row["source"] = source
    return row


@functools.lru_cache(maxsize=4)
def _read_published(path: str) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype={"dataset": str, "name": str, "task": str, "source": str})
    missing = [c for c in PUBLISHED_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"meta-feature table {path!r} lacks columns: got {missing!r}")
    return frame.loc[:, list(PUBLISHED_COLUMNS)]


def published_metafeatures(path=None, *, complete: bool = False, task: str = "binary") -> pd.DataFrame:
    """The published datasets' meta-features (one row per dataset, the 50 of the study).

    Parameters
    ----------
    path : path-like, optional
        Default: the shipped ``db/seed/published_metafeatures.csv``.
    complete : bool, default False
        Only the datasets whose every distance feature of ``task`` is known (those whose file
        was available when the table was made).
    task : str, default "binary"

    Returns
    -------
    pandas.DataFrame
        Columns :data:`PUBLISHED_COLUMNS` (a copy; NaN where a value is unknown).
    """
    if task not in DISTANCE_FEATURES:
        raise ValueError(f"no distance features for task {task!r}: known {sorted(DISTANCE_FEATURES)}")
    frame = _read_published(str(path or resource_dir("seed") / PUBLISHED_FILE)).copy()
    if complete:
        features = list(DISTANCE_FEATURES[task])
        frame = frame[(frame["task"] == task) & frame[features].notna().all(axis=1)]
    return frame.reset_index(drop=True)


def comparison_table(features: MetaFeatures, published: pd.DataFrame | None = None) -> pd.DataFrame:
    """The dataset's meta-features beside the published datasets' range.

    Returns
    -------
    pandas.DataFrame
        One row per distance feature of the task: ``feature, description, value, published_min,
        published_median, published_max, published_n`` (the datasets with that value known).
    """
    published = published_metafeatures(task=features.task) if published is None else published
    rows = []
    for name in DISTANCE_FEATURES[features.task]:
        known = pd.to_numeric(published[name], errors="coerce").dropna()
        value = getattr(features, name)
        rows.append({"feature": name, "description": DESCRIPTIONS[name],
                     "value": float(value) if value is not None else math.nan,
                     "published_min": known.min() if len(known) else math.nan,
                     "published_median": known.median() if len(known) else math.nan,
                     "published_max": known.max() if len(known) else math.nan,
                     "published_n": int(len(known))})
    return pd.DataFrame(rows)
