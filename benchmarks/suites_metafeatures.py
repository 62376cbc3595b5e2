"""Regenerate ``db/seed/suites_metafeatures.csv``: the meta-features of encbench's R suites' datasets.

For every entry of ``db/seed/rdatasets_manifest.csv`` (suites ``encbench-binary``,
``encbench-multiclass``, ``encbench-regression``) the dataset is loaded as the benchmark loads it
(``rdatasets:<package>/<item>:<target>``, offline, the manifest's columns left out and its
subsample kept, the manifest's task) and described by :mod:`encbench.metafeatures`. The ``dataset``
column is the key the results carry (``db/seed/encbench_suites_results.parquet``), so the advisor
(:mod:`encbench.advisor`) finds each dataset's scores by it; ``source`` names the R package and
item and the suite.

The manifest grows between sessions: ``--check`` says whether the shipped table still matches it.
Run from the checkout root::

    .venv/bin/python benchmarks/suites_metafeatures.py            # rewrite the table, print it
    .venv/bin/python benchmarks/suites_metafeatures.py --check    # exit 1 if it would change
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from encbench.data import load_dataset  # noqa: E402
from encbench.data.rdatasets_source import manifest  # noqa: E402
from encbench.metafeatures import PUBLISHED_COLUMNS, SUITES_FILE, from_dataset, published_record  # noqa: E402
from encbench.resources import resource_dir  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from published_metafeatures import FLOAT_FORMAT, check_table  # noqa: E402

OUT = resource_dir("seed") / SUITES_FILE


def build() -> pd.DataFrame:
    """One row per manifest entry, in manifest order."""
    rows = []
    for entry in manifest():
        started = time.perf_counter()
        dataset = load_dataset(entry.ref, task=entry.task)
        if dataset.key != entry.ref:
            raise ValueError(f"{entry.name}: loaded as key {dataset.key!r}, not {entry.ref!r}")
        source = f"rdatasets {entry.package}/{entry.item}, suite {entry.suite}"
        rows.append(published_record(dataset.key, entry.name, from_dataset(dataset), source))
        print(f"{entry.suite:<20} {entry.name:<36} {time.perf_counter() - started:5.1f} s", file=sys.stderr)
    return pd.DataFrame(rows, columns=list(PUBLISHED_COLUMNS))


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
    with pd.option_context("display.width", 220, "display.max_columns", 20, "display.max_rows", 200):
        print(table.drop(columns=["source"]).to_string(index=False))
    counts = table["task"].value_counts().reindex(["binary", "multiclass", "regression"], fill_value=0)
    print(f"\nwrote {args.out}: {len(table)} datasets ("
          + ", ".join(f"{n} {task}" for task, n in counts.items()) + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
