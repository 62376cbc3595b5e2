"""The published benchmark (Matteucci et al., NeurIPS 2023) as a canonical long DataFrame.

The seed files live in ``db/seed/`` with their licence (MIT) and attribution; see ``db/seed/README.md``.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from encbench import vocab
from encbench.resources import resource_dir

SEED_DIR = resource_dir("seed")
RESULTS_FILE = SEED_DIR / "matteucci2023_results.parquet"
DATASETS_FILE = SEED_DIR / "datasets.csv"

_COLUMNS = ("dataset", "model", "scoring", "tuning", "encoder", "cv_score", "time")


def _map_column(values: pd.Series, mapper) -> pd.Series:
    # Map each distinct code once (61,812 rows, a few dozen distinct codes).
    mapping = {code: mapper(code) for code in values.unique()}
    return values.map(mapping).astype(str)


def load_published_results(path: Path | str = RESULTS_FILE) -> pd.DataFrame:
    """Read the published results and map every code to its canonical name.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, scoring, tuning, encoder, cv_score, time``; one row per published
        experiment (scores already averaged over the 5 folds).

    Raises
    ------
    ValueError
        If a column is missing or a code is unknown (the message names the code).
    """
    frame = pd.read_parquet(path)
    missing = [c for c in _COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"published results file {str(path)!r} lacks columns {missing!r}")
    frame = frame.loc[:, list(_COLUMNS)].copy()
    frame["dataset"] = frame["dataset"].astype(str)
    frame["encoder"] = _map_column(frame["encoder"], vocab.encoder_from_code)
    frame["model"] = _map_column(frame["model"], vocab.model_from_code)
    frame["scoring"] = _map_column(frame["scoring"], vocab.metric_from_code)
    frame["tuning"] = _map_column(frame["tuning"], vocab.tuning_from_code)
    frame["cv_score"] = frame["cv_score"].astype(float)
    frame["time"] = frame["time"].astype(float)
    return frame.reset_index(drop=True)


def load_published_datasets(path: Path | str = DATASETS_FILE) -> pd.DataFrame:
    """The 50 published datasets: ``openml_id, name, in_full_tuning, published_rows``."""
    frame = pd.read_csv(path, dtype={"openml_id": str, "name": str})
    frame["in_full_tuning"] = frame["in_full_tuning"].eq("yes")
    return frame
