"""Datasets for encbench: bundled OpenML copies, OpenML ids and local files, validated.

>>> from encbench.data import load_dataset
>>> ds = load_dataset("bundled:credit-g")      # or "31", or "path/to/file.csv:target"
>>> ds.key, ds.X.shape, ds.y.mean(), ds.as_record()

See docs/ARCHITECTURE.md, Protocol for the protocol the validation enforces.
"""
from encbench.data.bundled import BUNDLED_DIR, BundledEntry, bundled_entries, find_bundled, list_bundled
from encbench.data.dataset import (
    Dataset,
    DatasetSpec,
    dataset_from_frame,
    load_dataset,
    parse_dataset_spec,
    validate_file,
)
from encbench.data.errors import DatasetError
from encbench.data.openml_source import cache_root, fetch_openml, openml_cache_dir
from encbench.data.readers import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_CELLS,
    FORMATS,
    MAX_COLUMNS,
    read_table,
    read_table_and_hash,
    sha256_file,
)
from encbench.data.columns import infer_column_types
from encbench.data.validation import ValidationReport, prepare, validate

__all__ = [
    "BUNDLED_DIR", "BundledEntry", "DEFAULT_MAX_BYTES", "DEFAULT_MAX_CELLS", "Dataset", "DatasetError",
    "DatasetSpec", "FORMATS", "MAX_COLUMNS", "dataset_from_frame", "ValidationReport", "bundled_entries", "cache_root",
    "fetch_openml", "find_bundled", "infer_column_types", "list_bundled", "load_dataset",
    "openml_cache_dir", "parse_dataset_spec", "prepare", "read_table", "read_table_and_hash",
    "sha256_file", "validate", "validate_file",
]
