"""Synthetic growth of the published results, for the benchmarks that time the statistics and
the pages on a benchmark larger than the study's 61,812 rows.

:func:`grow` replicates the published table: copy 0 is the table itself, copy ``i`` gives every
dataset the new id ``{dataset}~{i}`` and every score a seeded perturbation (Gaussian, standard
deviation 0.01, clipped to [0, 1], the range of the published metrics), so that a copy ranks
the encoders a little differently and the rows stop at exactly ``rows``. The combinations
(model, tuning, scoring) and the encoders stay the study's: growth adds datasets, as new tasks
and users' runs do.

:func:`baseline_modules` loads the ``encbench`` package of an earlier commit beside the current
one, so that a benchmark times both in one process (the machine's load then affects both
alike).
"""
from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
KEY_COLUMNS = ("dataset", "model", "tuning", "scoring", "encoder")
NOISE = 0.01


def grow(base: pd.DataFrame, rows: int, *, seed: int = 0, categorical: bool = False) -> pd.DataFrame:
    """``rows`` rows made of copies of ``base`` with new dataset ids and perturbed scores.

    Parameters
    ----------
    base : pandas.DataFrame
        Long scores with at least ``dataset`` and ``cv_score`` (the published results).
    rows : int
        Rows of the result (the last copy is cut short; ``rows <= len(base)`` gives a prefix).
    seed : int
        Seed of the perturbations (``numpy.random.default_rng``).
    categorical : bool
        Key columns (dataset, model, tuning, scoring, encoder) as pandas ``category`` dtype,
        as a caller holding codes would pass them, instead of text.
    """
    if rows < 1:
        raise ValueError(f"rows must be at least 1: got {rows!r}")
    rng = np.random.default_rng(seed)
    copies = -(-rows // len(base))
    n = len(base)
    index = np.tile(np.arange(n), copies)[:rows]
    copy = np.repeat(np.arange(copies), n)[:rows]
    out = base.iloc[index].reset_index(drop=True)
    datasets = base["dataset"].astype(str).to_numpy()
    suffix = np.char.add("~", copy.astype(str))
    out["dataset"] = np.where(copy == 0, datasets[index], np.char.add(datasets[index].astype(str), suffix))
    noise = rng.normal(0.0, NOISE, rows)
    noise[copy == 0] = 0.0
    out["cv_score"] = np.clip(out["cv_score"].to_numpy() + noise, 0.0, 1.0)
    if categorical:
        out = out.astype({c: "category" for c in KEY_COLUMNS if c in out.columns})
    else:
        out = out.astype({c: "str" for c in KEY_COLUMNS if c in out.columns})
    return out


def baseline_modules(revision: str, names: tuple[str, ...]) -> dict[str, object]:
    """The modules ``names`` (``"encbench.stats"``, ...) as they were at git ``revision``.

    The package of that commit is extracted to a temporary directory and imported while the
    current ``encbench`` modules are set aside, then the current ones are put back: the
    functions of both keep their own module globals, so both can be called in one process.
    """
    archive = subprocess.run(["git", "archive", revision, "encbench"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    target = Path(tempfile.mkdtemp(prefix="encbench-baseline-"))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    current = {k: v for k, v in sys.modules.items() if k == "encbench" or k.startswith("encbench.")}
    for key in current:
        del sys.modules[key]
    sys.path.insert(0, str(target))
    try:
        loaded = {name: importlib.import_module(name) for name in names}
    finally:
        sys.path.remove(str(target))
        for key in [k for k in sys.modules if k == "encbench" or k.startswith("encbench.")]:
            del sys.modules[key]
        sys.modules.update(current)
    return loaded
