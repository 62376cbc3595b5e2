"""Wide encoders (OH, Sum, Bin) with sparse output: are the models' results bit-identical, and
what does sparse output save in memory?

``identity``: per dataset, outer fold, encoder and model configuration, fits the model on the
dense encoding and on the sparse (CSR) encoding of the same training fold, as the engine builds
them (:func:`encbench.engine.protocol.make_preprocessor`), and compares the predicted labels and
probabilities of the test fold bit for bit (so the four scores too). Model configurations: the
published defaults (no tuning; LightGBM with early stopping on AUC and on Acc) and the values
model tuning's grids and full tuning's ranges visit. Datasets: bundled tic-tac-toe, credit-g,
kr-vs-kp, nursery and adult (seeded row samples of ``--max-rows``) and a seeded synthetic set
with columns of 300, 40 and 4 levels, missing values and numerical columns.

``memory``: the 20,000-level case, 20,000 levels on 30,000 rows (seeded numpy, as
tests/test_hostile_inputs.py builds it), one no-tuning task (fold 0) of OH with the given model
in a fresh interpreter, dense (the published path, forced) and sparse (what the engine does for
DT and LGBM at any size, and for every model that takes sparse input above
``encbench.engine.sparse.SPARSE_ABOVE_BYTES``); prints peak RSS, wall time and the memory guard's estimate of
each.

``differences``: every bundled dataset (seeded row samples of ``--max-rows``), OH and Sum, 5
folds, no tuning, with the given models (LogReg, SVM, kNN), through the engine's ``run_task``
with the size threshold forced to 0 (sparse) and to infinity (dense); prints per (model,
metric) the cells, how many are bit-identical and the largest difference.

Measured (2-core machine at load 3-9, scikit-learn 1.9.1, LightGBM 4.7.0): ``identity`` with
``--models DT,LGBM --max-rows 3000``: 150 of 150 fits bit-identical per (encoder, model);
kNN, LogReg and SVM differ (see ``SPARSE_MODELS`` in encbench/engine/sparse.py). ``memory``:
OH + DT dense 8,866 MB and 132 s, sparse 240 MB and 3-5 s; OH + LGBM dense 11,217 MB and 276 s,
sparse 256 MB and 5 s (same scores). OH + LogReg, sparse since the size threshold (load 19):
246 MB and 4.4 s. ``differences`` (17 datasets, 3,000 rows at most, load 13-24): SVM identical
in 680 of 680 cells; LogReg 636 of 680, at most 0.025 apart; kNN 393 of 680, up to 0.25 apart.

Usage: ``.venv/bin/python benchmarks/bench_wide.py identity [--models DT,kNN] [--max-rows 3000]
[--folds 0,1,2,3,4]``, ``.venv/bin/python benchmarks/bench_wide.py memory [--model LogReg]`` and
``.venv/bin/python benchmarks/bench_wide.py differences [--models LogReg,SVM,kNN] [--datasets a,b]``
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from encbench.engine import protocol  # noqa: E402
from encbench.engine import sparse as sparse_policy  # noqa: E402
from encbench.engine.protocol import run_task  # noqa: E402

DEFAULT_THRESHOLD = sparse_policy.SPARSE_ABOVE_BYTES

ENCODERS = ("OH", "Sum", "Bin")
BUNDLED = ("tic-tac-toe", "credit-g", "kr-vs-kp", "nursery", "adult")
SCORINGS = ("AUC", "BAcc", "F1", "Acc")


# -- data ---------------------------------------------------------------------------------------
def synthetic(n: int = 2000, seed: int = 0):
    """Columns of 300 (Zipf-like), 40 and 4 levels (5 % missing), two numerical columns."""
    rng = np.random.default_rng(seed)
    hi = np.minimum(rng.zipf(1.3, n), 300).astype(str)
    mid = rng.integers(0, 40, n).astype(str)
    lo = rng.choice(["a", "b", "c", "d"], n).astype(object)
    lo[rng.random(n) < 0.05] = np.nan
    num = rng.normal(size=n)
    num2 = rng.exponential(size=n)
    num2[rng.random(n) < 0.05] = np.nan
    effect = {level: rng.normal() for level in np.unique(np.concatenate([hi, mid]))}
    logit = np.array([effect[a] + effect[b] for a, b in zip(hi, mid)]) + num
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    X = pd.DataFrame({"hi": hi.astype(object), "mid": mid.astype(object), "lo": lo, "num": num,
                      "num2": num2})
    return X, y, ["hi", "mid", "lo"]


def cases(max_rows: int):
    from encbench.data import load_dataset

    for name in BUNDLED:
        ds = load_dataset(f"bundled:{name}")
        X, y = ds.X, np.asarray(ds.y)
        if len(X) > max_rows:  # a seeded sample, rows kept in file order
            keep = np.sort(np.random.default_rng(0).choice(len(X), max_rows, replace=False))
            X, y = X.iloc[keep].reset_index(drop=True), y[keep]
        yield name, X, y, list(ds.categorical)
    yield "synthetic", *synthetic()


# -- model configurations -----------------------------------------------------------------------
def configurations(model: str):
    """(label, make) pairs: no tuning's model, then the values the tunings visit."""
    base = lambda **kw: (lambda: protocol.make_model(model).set_params(**kw))  # noqa: E731
    if model == "DT":
        return [(f"max_depth={d}", base(max_depth=d)) for d in (5, 2, 3, 4, None)]
    if model == "kNN":
        return [(f"n_neighbors={k}", base(n_neighbors=k)) for k in (5, 2, 3, 7, 10)]
    if model == "LogReg":
        return [(f"C={c}", base(C=c)) for c in (1.0, 0.1, 0.2, 5.0, 10.0)]
    if model == "SVM":
        return [("C=1,gamma=scale", base())] + [
            (f"C={c},gamma={g}", base(C=c, gamma=g)) for c, g in ((1, 1), (0.1, 10), (2, 100))]
    if model == "LGBM":
        plain = lambda n: (lambda: protocol.make_model("LGBM", tuning="full").set_params(n_estimators=n))  # noqa: E731
        return [("early stopping AUC", "AUC"), ("early stopping Acc", "Acc")] + [
            (f"n_estimators={n}", plain(n)) for n in (1, 30, 300)]
    raise ValueError(f"unknown model: got {model!r}")


def _fit_predict(make, prep, X_train, y_train, X_test):
    """(labels, probabilities) of a model fitted on ``prep``'s encoding of the training fold."""
    if isinstance(make, str):  # LightGBM with early stopping on metric ``make`` (the engine's)
        import lightgbm
        from sklearn.model_selection import train_test_split

        from encbench.models import LGBM_EARLY_STOPPING as stopping

        X_fit, X_val, y_fit, y_val = train_test_split(
            X_train, y_train, test_size=stopping.validation_fraction,
            random_state=stopping.validation_seed)
        E_fit = prep.fit_transform(X_fit, y_fit)
        E_val, E_test = prep.transform(X_val), prep.transform(X_test)
        model = protocol.make_model("LGBM").fit(
            E_fit, y_fit, eval_X=E_val, eval_y=y_val, eval_metric=protocol._lgbm_metric(make),
            callbacks=[lightgbm.early_stopping(stopping.patience, first_metric_only=True,
                                               verbose=False)])
    else:
        E_train = prep.fit_transform(X_train, y_train)
        E_test = prep.transform(X_test)
        model = make().fit(E_train, y_train)
    return model.predict(E_test), model.predict_proba(E_test)[:, 1]


def _scores(y, labels, probabilities):
    class P:  # the engine's scorer reads predictions through this interface
        def labels(self):
            return labels

        def scores(self):
            return probabilities

    return [protocol.score(s, y, P()) for s in SCORINGS]


def identity(models, max_rows: int, folds) -> None:
    import scipy.sparse as sp

    warnings.simplefilter("ignore")
    # (encoder, model, config) -> counters over (dataset, fold)
    table = defaultdict(lambda: {"n": 0, "labels": 0, "proba": 0, "scores": 0, "max_dp": 0.0,
                                 "where": set(), "seconds": [0.0, 0.0]})
    for name, X, y, categorical in cases(max_rows):
        numerical = [c for c in X.columns if c not in set(categorical)]
        for fold in folds:
            train, test = protocol.fold_indices(y, 5, fold)
            X_train, X_test = X.iloc[train].reset_index(drop=True), X.iloc[test].reset_index(drop=True)
            y_train, y_test = y[train], y[test]
            for encoder in ENCODERS:
                dense = functools.partial(protocol.make_preprocessor, encoder, categorical, numerical)
                sparse = functools.partial(dense, sparse=True)
                D, S = dense().fit_transform(X_train, y_train), sparse().fit_transform(X_train, y_train)
                assert sp.issparse(S) and np.array_equal(S.toarray(), D), (name, fold, encoder)
                for model in models:
                    for label, make in configurations(model):
                        start = time.perf_counter()
                        a = _fit_predict(make, dense(), X_train, y_train, X_test)
                        middle = time.perf_counter()
                        b = _fit_predict(make, sparse(), X_train, y_train, X_test)
                        end = time.perf_counter()
                        cell = table[(encoder, model, label)]
                        cell["n"] += 1
                        cell["seconds"][0] += middle - start
                        cell["seconds"][1] += end - middle
                        same_labels = np.array_equal(a[0], b[0])
                        same_proba = np.array_equal(a[1], b[1])
                        same_scores = _scores(y_test, *a) == _scores(y_test, *b)
                        cell["labels"] += same_labels
                        cell["proba"] += same_proba
                        cell["scores"] += same_scores
                        cell["max_dp"] = max(cell["max_dp"], float(np.max(np.abs(a[1] - b[1]))))
                        if not (same_labels and same_proba):
                            cell["where"].add(name)
            print(f"done {name} fold {fold}", file=sys.stderr, flush=True)
    print(f"{'encoder':7} {'model':6} {'configuration':22} {'n':>3} {'labels=':>7} {'proba=':>6} "
          f"{'scores=':>7} {'max|dp|':>9} {'s dense':>8} {'s sparse':>8}  datasets differing")
    for (encoder, model, label), c in table.items():
        print(f"{encoder:7} {model:6} {label:22} {c['n']:3d} {c['labels']:7d} {c['proba']:6d} "
              f"{c['scores']:7d} {c['max_dp']:9.2e} {c['seconds'][0]:8.1f} {c['seconds'][1]:8.1f}  "
              f"{','.join(sorted(c['where'])) or '-'}")
    summary = defaultdict(lambda: [0, 0])
    for (encoder, model, _), c in table.items():
        summary[(encoder, model)][0] += c["n"]
        summary[(encoder, model)][1] += min(c["labels"], c["proba"])
    print("\nper (encoder, model): bit-identical labels and probabilities in k of n fits")
    for (encoder, model), (n, k) in summary.items():
        print(f"{encoder:7} {model:6} {k:4d} / {n:<4d} {'IDENTICAL' if k == n else 'differs'}")


# -- memory -------------------------------------------------------------------------------------
def wide_csv(path: Path, seed: int = 12) -> Path:
    """The 20,000-level case (as tests/test_hostile_inputs.py builds it): 20,000 levels on 30,000
    rows, every level present, a yes/no label (298 KB; the issue's file had longer names)."""
    rng = np.random.default_rng(seed)
    levels = np.concatenate([np.arange(20_000), rng.integers(0, 20_000, 10_000)])
    frame = pd.DataFrame({"lvl": [f"L{i}" for i in rng.permutation(levels)],
                          "label": np.tile(["no", "yes"], 15_000)})
    frame.to_csv(path, index=False)
    return path


_CHILD = """
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
from encbench.data import load_dataset
from encbench.engine import Task
from encbench.engine import protocol
from encbench.engine.protocol import Payload, run_task
path, model, mode = sys.argv[1:4]
data = Payload.from_dataset(load_dataset(path + ":label"))
if mode == "dense":  # the published path, whatever the table of sparse pairs and the size say
    sparse_policy.SPARSE_MODELS = {}
    sparse_policy.SPARSE_ABOVE_BYTES = float("inf")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
task = Task(data.key, "OH", 0, 5, (model,), ("AUC", "Acc"), "no")
sparse = protocol._Fold(task, data).sparse
rows = run_task(task, data)
print(json.dumps({"seconds": time.perf_counter() - start, "loaded_kb": before, "sparse": sparse,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "rows": [(r["scoring"], r["status"], r["cv_score"], r["error"]) for r in rows]}))
"""


def memory(model: str, modes) -> None:
    import tempfile

    from encbench.engine import budget

    with tempfile.TemporaryDirectory() as tmp:
        path = wide_csv(Path(tmp) / "hicard.csv")
        print(f"file {path.stat().st_size / 1e3:.0f} KB: 30,000 rows, 20,000 levels; "
              f"one task of OH + {model}, no tuning, fold 0 of 5 (24,000 training rows)")
        for mode in modes:
            done = subprocess.run([sys.executable, "-c", _CHILD, str(path), model, mode],
                                  capture_output=True, text=True, cwd=ROOT, timeout=3600)
            if done.returncode:
                print(f"{mode}: failed (exit {done.returncode}): {done.stderr[-2000:]}")
                continue
            out = json.loads(done.stdout.strip().splitlines()[-1])
            estimate, _ = budget.estimate_task_bytes("OH", 30_000, {"lvl": 20_000}, 0,
                                                     sparse=(mode == "sparse"))
            print(f"{mode:6}: peak RSS {out['peak_kb'] / 1024:8.0f} MB (after loading the data "
                  f"{out['loaded_kb'] / 1024:.0f} MB), {out['seconds']:6.1f} s, encoded "
                  f"{'sparse' if out['sparse'] else 'dense'}, budget estimate "
                  f"{budget.size_text(estimate)}; rows {out['rows']}; load {_load()}")


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


# -- score differences ----------------------------------------------------------------------------
def differences(models, encoders, max_rows: int, folds, datasets) -> None:
    """Scores of each bundled dataset's tasks with the fold encoded dense and encoded sparse
    (the size threshold forced to 0), through :func:`encbench.engine.protocol.run_task`; prints
    per (model, metric) the cells, how many are bit-identical and the largest difference."""
    from encbench.data import list_bundled, load_dataset

    warnings.simplefilter("ignore")
    names = datasets or list(list_bundled()["name"])
    table = defaultdict(lambda: {"n": 0, "same": 0, "max": 0.0, "where": ""})
    seconds = {"dense": 0.0, "sparse": 0.0}
    for name in names:
        ds = load_dataset(f"bundled:{name}")
        X, y = ds.X, np.asarray(ds.y)
        if len(X) > max_rows:  # a seeded sample, rows kept in file order
            keep = np.sort(np.random.default_rng(0).choice(len(X), max_rows, replace=False))
            X, y = X.iloc[keep].reset_index(drop=True), y[keep]
        data = protocol.Payload(ds.key, f"{ds.sha256}:{len(X)}", X, y, tuple(ds.categorical))
        for encoder in encoders:
            for fold in folds:
                task = protocol.Task(data.key, encoder, fold, 5, tuple(models), SCORINGS, "no")
                runs = {}
                for mode, threshold in (("dense", float("inf")), ("sparse", 0)):
                    sparse_policy.SPARSE_ABOVE_BYTES = threshold
                    start = time.perf_counter()
                    runs[mode] = {(r["model"], r["scoring"]): r["cv_score"] for r in run_task(task, data)}
                    seconds[mode] += time.perf_counter() - start
                for key, dense in runs["dense"].items():
                    sparse, cell = runs["sparse"][key], table[key]
                    if dense is None or sparse is None:
                        continue
                    cell["n"] += 1
                    cell["same"] += dense == sparse
                    if abs(dense - sparse) > cell["max"]:
                        cell["max"], cell["where"] = abs(dense - sparse), f"{name}/{encoder}/fold {fold}"
        print(f"done {name} ({len(X)} rows), load {_load()}", file=sys.stderr, flush=True)
    sparse_policy.SPARSE_ABOVE_BYTES = DEFAULT_THRESHOLD
    print(f"{len(names)} bundled datasets (at most {max_rows:,} rows each), encoders "
          f"{', '.join(encoders)}, folds {', '.join(map(str, folds))}, no tuning; dense "
          f"{seconds['dense']:.0f} s, sparse {seconds['sparse']:.0f} s; load {_load()}")
    print(f"{'model':6} {'metric':6} {'cells':>5} {'identical':>9} {'max |sparse - dense|':>20}  where")
    for model in models:
        for scoring in SCORINGS:
            c = table[(model, scoring)]
            print(f"{model:6} {scoring:6} {c['n']:5d} {c['same']:9d} {c['max']:20.2e}  {c['where'] or '-'}")
        worst = max(table[(model, s)]["max"] for s in SCORINGS)
        print(f"{model:6} {'any':6} max abs difference {worst:.2e}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("identity")
    one.add_argument("--models", default="DT,kNN,LogReg,SVM,LGBM")
    one.add_argument("--max-rows", type=int, default=3000)
    one.add_argument("--folds", default="0,1,2,3,4")
    two = sub.add_parser("memory")
    two.add_argument("--model", default="LogReg")
    two.add_argument("--modes", default="sparse,dense")
    three = sub.add_parser("differences")
    three.add_argument("--models", default="LogReg,SVM,kNN")
    three.add_argument("--encoders", default="OH,Sum")
    three.add_argument("--max-rows", type=int, default=3000)
    three.add_argument("--folds", default="0,1,2,3,4")
    three.add_argument("--datasets", default="", help="bundled names (default: every one)")
    args = parser.parse_args(argv)
    if args.command == "identity":
        identity(args.models.split(","), args.max_rows, [int(f) for f in args.folds.split(",")])
    elif args.command == "differences":
        differences(args.models.split(","), args.encoders.split(","), args.max_rows,
                    [int(f) for f in args.folds.split(",")],
                    [d for d in args.datasets.split(",") if d])
    else:
        memory(args.model, args.modes.split(","))


if __name__ == "__main__":
    main()
