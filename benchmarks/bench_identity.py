"""Scores of a fixed grid, to show that a refactor of the engine changes no score.

The grid: 14 encoders x 5 models x 4 metrics on three bundled datasets (tic-tac-toe,
monks-problems-2, credit-approval) with no tuning, plus model tuning on monks-problems-2, all
5 outer folds, run in this process through :func:`encbench.engine.protocol.run_task` (no
database). Every score is written to a JSON file; ``--compare`` reads an earlier file and
counts the cells whose scores are not bit-identical.

Usage::

    .venv/bin/python benchmarks/bench_identity.py --out /tmp/before.json
    # ... change the engine ...
    .venv/bin/python benchmarks/bench_identity.py --out /tmp/after.json --compare /tmp/before.json

It prints the number of cells, the wall time, and, with ``--compare``, the identical, differing
and missing cells (exit status 1 when any differ or are missing).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from encbench.data import load_dataset
from encbench.engine.grid import Task
from encbench.engine.protocol import Payload, run_task

ENCODERS = ("Drop", "OH", "Ord", "Bin", "Count", "Sum", "MT", "WoE", "GLMM", "CB", "ME_1",
            "DMT_5", "PBMT_0.01", "CVMT_5")
MODELS = ("DT", "LGBM", "SVM", "kNN", "LogReg")
METRICS = ("BAcc", "F1", "Acc", "AUC")
NO_TUNING = ("bundled:tic-tac-toe", "bundled:monks-problems-2", "bundled:credit-approval")
MODEL_TUNING = ("bundled:monks-problems-2",)
N_FOLDS = 5


def cells(tuning: str, datasets, folds=range(N_FOLDS)) -> dict[str, float | None]:
    """``{"dataset/encoder/model/tuning/scoring/fold": score}`` of one part of the grid."""
    out = {}
    for spec in datasets:
        dataset = load_dataset(spec)
        payload = Payload.from_dataset(dataset)
        for encoder in ENCODERS:
            for fold in folds:
                task = Task(dataset.key, encoder, fold, N_FOLDS, MODELS, METRICS, tuning)
                for row in run_task(task, payload):
                    key = "/".join(str(row[k]) for k in
                                   ("dataset", "encoder", "model", "tuning", "scoring", "fold"))
                    out[key] = row["cv_score"] if row["status"] == "ok" else f"failed: {row['error']}"
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON file the scores go to")
    parser.add_argument("--compare", type=Path, help="an earlier --out file to compare with")
    parser.add_argument("--folds", default=",".join(map(str, range(N_FOLDS))),
                        help="outer folds to run, 0-based and comma-separated (default: all 5)")
    args = parser.parse_args(argv)
    folds = [int(f) for f in args.folds.split(",")]
    start = time.perf_counter()
    scores = cells("no", NO_TUNING, folds)
    scores.update(cells("model", MODEL_TUNING, folds))
    seconds = time.perf_counter() - start
    args.out.write_text(json.dumps(scores, indent=0, sort_keys=True))
    failed = sum(isinstance(v, str) for v in scores.values())
    print(f"{len(scores)} cells ({failed} failed) in {seconds:.0f} s -> {args.out}")
    if args.compare is None:
        return 0
    before = json.loads(args.compare.read_text())
    same = sum(1 for k, v in scores.items() if k in before and before[k] == v)
    differ = [k for k, v in scores.items() if k in before and before[k] != v]
    missing = sorted(set(before) ^ set(scores))
    print(f"identical: {same} of {len(before)}; differing: {len(differ)}; missing: {len(missing)}")
    for key in (differ + missing)[:20]:
        print(f"  {key}: before {before.get(key)!r}, now {scores.get(key)!r}")
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
