"""Recognise a local table that *is* one of the published datasets, by content.

A researcher often runs the engine on a copy of a dataset the published study used (downloaded
from OpenML, exported to CSV, columns reordered). Counting it as a new dataset beside the
published one would double its weight in every consensus, so such a copy is stored under the
published key (the OpenML id as text).

What identifies a copy is its *fingerprint*, taken from ``db/seed/dataset_fingerprints.csv``
(31 of the 50 published datasets; see ``db/seed/README.md``):

- the number of rows (rows that are entirely empty are not counted);
- the *set* of column names (so the column order does not matter), each name with surrounding
  whitespace and quotes removed (OpenML's CSV export single-quotes its headers); a copy may
  leave columns out (a user drops ID-like columns such as cylinder-bands' ``timestamp`` and
  ``cylinder_number``, which OpenML itself ignores), but has no column the original lacks;
- the target column's name;
- the class counts of the target, where ``'?'``, empty cells and NaN are missing (the OpenML/UCI
  convention), class labels compared as text (``1.0`` and ``"1"`` are the same label, quotes
  removed).

It is deliberately not a hash of the cells: a hash changes with the column order, the quoting
and the missing-value marker, all of which differ between copies of the same data.
"""
from __future__ import annotations

import csv
import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from encbench.resources import resource_dir

FINGERPRINTS_FILE = resource_dir("seed") / "dataset_fingerprints.csv"
MISSING_MARKERS = frozenset({"", "?"})


def _unquote(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    return text


def column_key(name: object) -> str:
    """A column name as compared: text, surrounding whitespace and quotes removed."""
    return _unquote(str(name))


def label_key(value: object) -> str | None:
    """A class label as compared (None when the cell is missing).

    Integral floats lose their ``.0`` (a CSV target of 0/1 read with a missing cell becomes float).
    """
    if value is None:
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer():
            return str(int(value))
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return label_key(value.item())
        except (TypeError, ValueError):
            pass
    if value is pd.NA or value is pd.NaT:
        return None
    text = _unquote(str(value))
    return None if text in MISSING_MARKERS else text


@dataclass(frozen=True)
class Fingerprint:
    """What identifies a table as a given dataset (see the module docstring).

    Attributes
    ----------
    n_rows : int
        Rows that are not entirely empty.
    columns : frozenset of str
        Column names (target included), unquoted.
    target : str
        Target column name, unquoted.
    class_counts : tuple of (str, int)
        Non-missing target values and their counts, sorted by label.
    """

    n_rows: int
    columns: frozenset[str]
    target: str
    class_counts: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class PublishedDataset:
    """A published dataset with a known fingerprint."""

    openml_id: int
    name: str
    fingerprint: Fingerprint

    @property
    def key(self) -> str:
        """The database key of the published dataset: the OpenML id as text."""
        return str(self.openml_id)


def fingerprint(frame: pd.DataFrame, target: str) -> Fingerprint:
    """The fingerprint of ``frame`` with target column ``target``.

    Raises
    ------
    ValueError
        If ``target`` is not a column of ``frame`` (after unquoting).
    """
    names = {column_key(c): c for c in frame.columns}
    wanted = column_key(target)
    if wanted not in names:
        raise ValueError(f"target {target!r} is not a column; columns are {sorted(names)!r}")
    cells = frame.astype(object).map(label_key) if len(frame) else frame
    n_rows = int(cells.notna().any(axis=1).sum()) if len(frame) else 0
    labels = cells[names[wanted]].dropna() if len(frame) else pd.Series(dtype=object)
    counts = labels.value_counts()
    return Fingerprint(
        n_rows=n_rows, columns=frozenset(names), target=wanted,
        class_counts=tuple(sorted((str(k), int(v)) for k, v in counts.items())),
    )


@functools.lru_cache(maxsize=4)
def published_fingerprints(path: str | Path = FINGERPRINTS_FILE) -> tuple[PublishedDataset, ...]:
    """Every published dataset whose fingerprint is known, ordered by OpenML id."""
    out = []
    with Path(path).open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            counts = json.loads(row["class_counts"])
            columns = frozenset(column_key(c) for c in json.loads(row["columns"]))
            if len(columns) != int(row["n_columns"]):
                raise ValueError(f"fingerprint of OpenML {row['openml_id']} lists {len(columns)} "
                                 f"distinct columns, its n_columns says {row['n_columns']!r}")
            out.append(PublishedDataset(
                openml_id=int(row["openml_id"]), name=row["name"],
                fingerprint=Fingerprint(
                    n_rows=int(row["n_rows"]), columns=columns, target=column_key(row["target"]),
                    class_counts=tuple(sorted((column_key(k), int(v)) for k, v in counts.items())))))
    return tuple(sorted(out, key=lambda d: d.openml_id))


def _cheap_match(frame: pd.DataFrame, target: str, known: Fingerprint) -> bool:
    """Shape and names first: most tables are ruled out without touching a cell."""
    columns = frozenset(column_key(c) for c in frame.columns)
    return (column_key(target) == known.target and len(columns) >= 2 and columns <= known.columns
            and len(frame) >= known.n_rows)


def same_data(mine: Fingerprint, known: Fingerprint) -> bool:
    """Whether ``mine`` is a copy of ``known``: same rows, target and class counts, and the same
    columns or some of them left out."""
    return (mine.n_rows == known.n_rows and mine.target == known.target
            and mine.class_counts == known.class_counts and mine.columns <= known.columns)


def match_published(frame: pd.DataFrame, target: str | None, *,
                    path: str | Path = FINGERPRINTS_FILE) -> PublishedDataset | None:
    """The published dataset ``frame`` (with this target) is a copy of, or None.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read (every column, before any is dropped).
    target : str or None
        The target column chosen; another target than the published one is another task, so
        never a match. Columns may have been left out (see the module docstring); the caller
        can name them with ``match.fingerprint.columns``.
    path : path-like
        The fingerprints file (default: the one shipped in ``db/seed/``).

    Examples
    --------
    >>> import pandas as pd
    >>> match_published(pd.DataFrame({"a": [1, 2], "y": [0, 1]}), "y") is None
    True
    """
    if target is None:
        return None
    candidates = [d for d in published_fingerprints(path) if _cheap_match(frame, target, d.fingerprint)]
    if not candidates:
        return None
    mine = fingerprint(frame, target)
    for candidate in candidates:
        if same_data(mine, candidate.fingerprint):
            return candidate
    return None


def recognise(frame: pd.DataFrame, *, path: str | Path = FINGERPRINTS_FILE) -> tuple[PublishedDataset, str] | None:
    """The published dataset ``frame`` is a copy of, whatever its target, and the column of
    ``frame`` that is the published target; None when it is none of them.

    For proposing a target before the user chose one: a copy is recognised by its published
    target's column (:func:`match_published` with that column), wherever the column stands.

    Examples
    --------
    >>> import pandas as pd
    >>> recognise(pd.DataFrame({"a": [1, 2], "y": [0, 1]})) is None
    True
    """
    columns = {column_key(c): c for c in frame.columns}
    for candidate in published_fingerprints(path):
        column = columns.get(candidate.fingerprint.target)
        if column is None or not _cheap_match(frame, column, candidate.fingerprint):
            continue
        if same_data(fingerprint(frame, column), candidate.fingerprint):
            return candidate, column
    return None
