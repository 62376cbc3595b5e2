"""The full registry on real datasets (mixed dtypes, missing values, unseen levels).

Three bundled datasets run always (subsampled for speed). Every dataset of the project's shared
data folder (``../shared/data/datasets``, outside the repo) runs at full size with
``ENCBENCH_ALL_DATASETS=1`` (slow: minutes).
"""
from __future__ import annotations

import csv
import gzip
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from encbench.encoders import REGISTRY, make_encoder

from encbench.data import BUNDLED_DIR

SHARED_DATASETS = Path(__file__).resolve().parents[2] / "shared" / "data" / "datasets"


def _manifest(directory: Path = BUNDLED_DIR) -> dict[str, dict]:
    path = directory / "MANIFEST.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as handle:
        return {row["file"]: row for row in csv.DictReader(handle)}


def _read(file: str, directory: Path = BUNDLED_DIR) -> tuple[pd.DataFrame, np.ndarray]:
    """Tiny local reader: the categorical columns and the 0/1 target of a listed dataset."""
    row = _manifest(directory)[file]
    path = directory / file
    target, positive = row["target"], row["positive_class"]
    opener = gzip.open if path.suffix == ".gz" else open
    if ".arff" in path.name:
        arff = pytest.importorskip("arff")
        with opener(path, "rt") as handle:
            data = arff.load(handle)
        names = [name for name, _ in data["attributes"]]
        frame = pd.DataFrame(data["data"], columns=names)
        categorical = [
            n for n, kind in data["attributes"]
            if (isinstance(kind, list) or str(kind).upper() == "STRING") and n != target
        ]
    else:
        with opener(path, "rt") as handle:
            frame = pd.read_csv(handle, na_values=["?"], keep_default_na=True)
        frame.columns = [c.strip("'") for c in frame.columns]
        categorical = [
            c for c in frame.columns
            if c != target and not pd.api.types.is_numeric_dtype(frame[c])
        ]
    y = (frame[target].astype(str) == positive).astype(int).to_numpy()
    return frame[categorical], y


def _mix_dtypes(X: pd.DataFrame) -> pd.DataFrame:
    """Columns alternate between category, object and pandas str dtypes."""
    mixed = {}
    for j, column in enumerate(X.columns):
        values = X[column].astype(object)
        values = values.where(values.notna(), np.nan)
        if j % 3 == 0:
            mixed[column] = values.astype("category")
        elif j % 3 == 1:
            mixed[column] = values.astype(object)
        else:
            mixed[column] = values.astype("str")
    return pd.DataFrame(mixed, index=X.index)


def _run_registry(X: pd.DataFrame, y: np.ndarray):
    cut = int(0.7 * len(X))
    train, test = X.iloc[:cut], X.iloc[cut:]
    for name in REGISTRY:
        encoder = make_encoder(name, random_state=0)
        encoded = encoder.fit_transform(train, y[:cut])
        encoded_test = encoder.transform(test)
        names = list(encoder.get_feature_names_out())
        for frame, source in ((encoded, train), (encoded_test, test)):
            assert frame.index.equals(source.index), name
            assert list(frame.columns) == names, name
            assert frame.shape[1] > 0, name
            assert np.isfinite(frame.to_numpy()).all(), name


@pytest.mark.parametrize(
    "file, rows",
    [("29_credit-approval.arff", None), ("1590_adult.arff.gz", 2500), ("40945_Titanic.csv", None)],
)
def test_full_registry_on_real_data_with_mixed_dtypes_and_missing_values(file, rows):
    X, y = _read(file)
    if rows is not None:
        # a random subsample keeps both classes and the rare levels' behaviour
        keep = np.sort(np.random.default_rng(0).choice(len(X), rows, replace=False))
        X, y = X.iloc[keep], y[keep]
    X = _mix_dtypes(X)
    assert X.isna().any().any(), "the datasets chosen have missing values"
    assert {str(d) for d in X.dtypes} >= {"category", "object", "str"}
    _run_registry(X, y)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ENCBENCH_ALL_DATASETS"),
                    reason="set ENCBENCH_ALL_DATASETS=1 to run every shared dataset (minutes)")
@pytest.mark.parametrize("file", sorted(_manifest(SHARED_DATASETS)))
def test_full_registry_on_every_shared_dataset(file):
    X, y = _read(file, SHARED_DATASETS)
    if X.shape[1] == 0:
        pytest.skip(f"{file} has no categorical column")
    _run_registry(_mix_dtypes(X), y)
