"""Regenerate ``db/seed/published_metafeatures.csv``: the 50 published datasets' meta-features.

For each of the study's datasets (``db/seed/datasets.csv``) the meta-features
(:mod:`encbench.metafeatures`) come from the first of:

1. its file: the bundled copy (``data/bundled/``), else the project's shared copies
   (``../shared/data/datasets/``), loaded with the published target and the protocol's
   validation, with the column roles OpenML gives where the file does not carry them
   (:data:`COLUMN_ROLES`); ``source`` names the file;
2. its fingerprint (``db/seed/dataset_fingerprints.csv``: rows and class counts of a copy
   seen earlier): ``n_rows`` and ``minority_share`` only, the rest unknown;
3. nothing: the published results table holds scores only, so every value is unknown and
   ``source`` says ``not available``.

The advisor (:mod:`encbench.advisor`) uses the datasets whose every meta-feature is known.

Run from the checkout root::

    .venv/bin/python benchmarks/published_metafeatures.py            # rewrite the table, print it
    .venv/bin/python benchmarks/published_metafeatures.py --check    # exit 1 if it would change
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_fidelity import NOT_OPENML_COPIES, OPENML_COLUMN_ROLES  # noqa: E402

from encbench.data import load_dataset, read_table  # noqa: E402
from encbench.metafeatures import (  # noqa: E402
    PUBLISHED_COLUMNS, PUBLISHED_FILE, from_dataset, published_record,
)
from encbench.resources import resource_dir  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "datasets"
DATA_DIRS = (("bundled", ROOT / "data" / "bundled"), ("shared", SHARED))
SEED = resource_dir("seed")
OUT = SEED / PUBLISHED_FILE
FLOAT_FORMAT = "%.6g"

#: Column roles of OpenML's version that a local file does not carry: :data:`OPENML_COLUMN_ROLES`
#: of the fidelity benchmark, plus 43900 (amazon_employee_access), whose nine features are
#: categorical IDs stored as integers in the CSV (its manifest says so, and the published scores
#: of the 32 encoders differ on it, so the study encoded them).
COLUMN_ROLES = {**OPENML_COLUMN_ROLES, "43900": {"categorical": "all"}}
#: Why a file's meta-features may differ from OpenML's copy (the fidelity benchmark leaves these
#: datasets out for the same reasons).
APPROXIMATE = {
    "956": "target constructed differently from OpenML's (class balance may differ)",
    "43892": "rebuilt from another source, target constructed differently (class balance differs)",
    "40945": "the study's encoders saw the gaps of its string columns, which are imputed here",
    "43922": "OpenML 24's mushroom file, stalk-root's '?' read as a level as the scores of 43922 show",
}


def _files() -> dict[str, tuple[str, Path, str]]:
    """OpenML id -> (where, path, target), the bundled copy first."""
    found = {}
    for where, folder in DATA_DIRS:
        manifest = folder / "MANIFEST.csv"
        if not manifest.exists():
            continue
        for entry in pd.read_csv(manifest, dtype=str).to_dict("records"):
            found.setdefault(entry["openml_id"], (where, folder / entry["file"], entry["target"]))
    return found


def _from_file(key: str, path: Path, target: str, where: str):
    if where == "bundled" and key not in COLUMN_ROLES:
        return from_dataset(load_dataset(f"bundled:{key}"))   # as runs read it (QUESTION_MARK_LEVELS)
    roles = COLUMN_ROLES.get(key, {})
    if roles.get("categorical") == "all":  # no column is categorical by type: name them all
        columns = read_table(path).columns
        return from_dataset(load_dataset(f"{path}:{target}", max_bytes=None,
                                         categorical=[str(c) for c in columns if str(c) != target]))
    dataset = load_dataset(f"{path}:{target}", max_bytes=None)
    if roles:
        categorical = [*dataset.categorical, *roles.get("categorical", ())]
        dataset = load_dataset(f"{path}:{target}", categorical=categorical, max_bytes=None)
        drop = [c for c in roles.get("drop", ()) if c in dataset.X.columns]
        if drop:
            dataset = dataclasses.replace(dataset, X=dataset.X.drop(columns=drop),
                                          categorical=[c for c in dataset.categorical if c not in drop])
    return from_dataset(dataset)


def build() -> pd.DataFrame:
    datasets = pd.read_csv(SEED / "datasets.csv", dtype=str)
    fingerprints = pd.read_csv(SEED / "dataset_fingerprints.csv", dtype=str).set_index("openml_id")
    files = _files()
    rows = []
    for key, name in zip(datasets["openml_id"], datasets["name"]):
        if key in files:
            where, path, target = files[key]
            started = time.perf_counter()
            features = _from_file(key, path, target, where)
            source = f"{where} file {path.name}"
            roles = COLUMN_ROLES.get(key)
            if roles:
                source += f" with OpenML's column roles {json.dumps(roles, sort_keys=True)}"
            if key in APPROXIMATE:
                source += f"; approximate: {APPROXIMATE[key]}"
            rows.append(published_record(key, name, features, source))
            print(f"{key:>6} {name:<40} {time.perf_counter() - started:5.1f} s  {where}", file=sys.stderr)
        elif key in fingerprints.index:
            counts = json.loads(fingerprints.loc[key, "class_counts"])
            total = sum(counts.values())
            rows.append(published_record(
                key, name, None, "fingerprint only (db/seed/dataset_fingerprints.csv): rows and class "
                                 "counts as read from an earlier copy; no file here",
                task="binary", n_rows=int(fingerprints.loc[key, "n_rows"]),
                minority_share=min(counts.values()) / total))
        else:
            rows.append(published_record(key, name, None, "not available: no file and no fingerprint "
                                                           "here (the published table holds scores only)",
                                         task="binary"))
    return pd.DataFrame(rows, columns=list(PUBLISHED_COLUMNS))


def check_table(table: pd.DataFrame, out: Path) -> int:
    """0 when ``out`` holds the text ``table`` would be written as (values to 6 significant
    digits), else 1; says which."""
    same = out.exists() and out.read_text() == table.to_csv(index=False, float_format=FLOAT_FORMAT)
    print("unchanged" if same else f"{out} would change")
    return 0 if same else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the table")
    parser.add_argument("--check", action="store_true", help="compare with the file at --out, write nothing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    warnings.simplefilter("ignore")
    table = build()
    if args.check:
        return check_table(table, args.out)
    table.to_csv(args.out, index=False, float_format=FLOAT_FORMAT)
    complete = table.dropna(subset=["n_categorical", "minority_share"])
    partial = table[table["n_rows"].notna() & table["n_categorical"].isna()]
    missing = table[table["n_rows"].isna()]
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 60):
        shown = table.drop(columns=["source", "task", "target_spread", "n_classes", "target_skew"])
        print(shown.to_string(index=False))
    print(f"\nwrote {args.out}: {len(complete)} datasets from files, {len(partial)} from fingerprints "
          f"only ({', '.join(partial['name'])}), {len(missing)} not available "
          f"({', '.join(missing['name'])})")
    print(f"approximate (file differs from OpenML's): {', '.join(sorted(APPROXIMATE))}; "
          f"fidelity's NOT_OPENML_COPIES: {sorted(NOT_OPENML_COPIES)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
