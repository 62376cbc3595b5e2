"""The bundled datasets: offline copies of OpenML datasets shipped in ``data/bundled/``.

``data/bundled/MANIFEST.csv`` holds the rows of the shared manifest for the shipped files
(unchanged): OpenML id, name, file, shape, default target and provenance. A bundled dataset is
addressed as ``bundled:<name>`` (or ``bundled:<id>``) and by its OpenML id, so that offline runs
of the published datasets need no network.

Note: the manifest's ``positive_class`` column is provenance only; the positive class used is
the protocol's (second class in sorted order, as the published study label-encoded targets).
"""
from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from encbench.resources import resource_dir

BUNDLED_DIR = resource_dir("bundled")
MANIFEST_FILE = BUNDLED_DIR / "MANIFEST.csv"

#: Columns of a bundled file whose ``?`` is a level of the published dataset, not a missing value.
#: mushroom's file is OpenML 24's, where ``?`` in stalk-root (2,480 of 8,124 rows) is missing; the
#: study ran OpenML 43922, whose scores it reproduces only with ``?`` as a level of its own (with
#: ``?`` imputed, 147 of 185 cells of 32 encoders x DT, LogReg, kNN x AUC, Acc agree within 0.005;
#: with ``?`` a level, 181).
QUESTION_MARK_LEVELS: dict[int, tuple[str, ...]] = {43922: ("stalk-root",)}


@dataclass(frozen=True)
class BundledEntry:
    """One row of the bundled manifest."""

    openml_id: int
    name: str
    file: str
    rows: int
    cols: int
    target: str
    n_categorical: int
    license_note: str

    @property
    def key(self) -> str:
        """The database key: the OpenML id as text."""
        return str(self.openml_id)

    @property
    def path(self) -> Path:
        return BUNDLED_DIR / self.file


@functools.lru_cache(maxsize=1)
def bundled_entries() -> tuple[BundledEntry, ...]:
    """Every bundled dataset, ordered by OpenML id."""
    entries = []
    with MANIFEST_FILE.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            entries.append(BundledEntry(
                openml_id=int(row["openml_id"]), name=row["name"], file=row["file"],
                rows=int(row["rows"]), cols=int(row["cols"]), target=row["target"],
                n_categorical=int(row["n_categorical"]), license_note=row["license_note"]))
    return tuple(sorted(entries, key=lambda e: e.openml_id))


def find_bundled(ref: str | int) -> BundledEntry | None:
    """The bundled dataset with this OpenML id or name (case-insensitive), or None."""
    text = str(ref).strip()
    for entry in bundled_entries():
        if text == entry.key or text.lower() == entry.name.lower():
            return entry
    return None


def bundled_names() -> str:
    """'credit-g (31), tic-tac-toe (50), ...' for messages."""
    return ", ".join(f"{e.name} ({e.openml_id})" for e in bundled_entries())


def list_bundled() -> pd.DataFrame:
    """The bundled datasets, one row each, for the app and the CLI.

    Returns
    -------
    pandas.DataFrame
        Columns ``key`` (OpenML id as text), ``name``, ``rows``, ``cols`` (target included),
        ``target``, ``n_categorical``, ``file``, ``size_bytes``; ordered by OpenML id.
    """
    rows = [{
        "key": e.key, "name": e.name, "rows": e.rows, "cols": e.cols, "target": e.target,
        "n_categorical": e.n_categorical, "file": e.file,
        "size_bytes": e.path.stat().st_size if e.path.exists() else None,
    } for e in bundled_entries()]
    return pd.DataFrame(rows, columns=["key", "name", "rows", "cols", "target",
                                       "n_categorical", "file", "size_bytes"])
