"""Time to rank one new encoder vs re-running the study's 32.

Phase 1 (``suite``): the test suite's frequency-rank encoder plus the controls OH and MT on the
bundled datasets of the study's suite, no tuning, every model and metric, ``--workers`` task
processes: the wall time of the comparison run and each encoder's summed task time.

Phase 2 (``calibrate``): all 32 encoders on a few small bundled datasets, same models: each
encoder's task time relative to OH + MT.

Estimate: the 32 on the suite would take (OH + MT time on the suite) x (sum of the 32's task time /
OH + MT's task time on the calibration datasets). On a shared machine wall time says little (other
load stretches it), so the CPU time of the run and its task processes is reported too; on idle
cores, wall time is about CPU time / workers (tasks are single-threaded).

    .venv/bin/python benchmarks/bench_byo.py --phase suite --exclude 1590
    .venv/bin/python benchmarks/bench_byo.py --phase calibrate --calibration 50,31
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from encbench import vocab
from encbench.custom import CustomEncoder
from encbench.engine import Grid, run_grid
from encbench.store import Writer, import_published
from encbench.suites import resolve_suite

FREQ = CustomEncoder("FreqRank", "tests.byo_encoders:FrequencyRankEncoder", {"scale": True})


def _cpu_seconds() -> float:
    """CPU time of this process and its reaped task processes (robust to other load, unlike wall time)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed_run(grid: Grid, db: Path, workers: int) -> tuple[float, float, dict[str, float]]:
    per_encoder: dict[str, float] = defaultdict(float)

    def progress(done, total, info):
        if info.get("seconds") is not None and info.get("encoder"):
            per_encoder[info["encoder"]] += float(info["seconds"])

    start, cpu = time.perf_counter(), _cpu_seconds()
    run_grid(grid, db_path=db, workers=workers, progress=progress)
    return time.perf_counter() - start, _cpu_seconds() - cpu, dict(per_encoder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--phase", choices=["suite", "calibrate"], required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--models", default=",".join(vocab.MODELS))
    parser.add_argument("--exclude", default="", help="OpenML ids of suite datasets to leave out")
    parser.add_argument("--calibration", default="50,31", help="datasets of phase 2")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()

    models = args.models.split(",")
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.duckdb"
        with Writer(db) as writer:
            import_published(writer)
        if args.phase == "suite":
            excluded = {e.strip() for e in args.exclude.split(",") if e.strip()}
            datasets = [d for d in resolve_suite("matteucci2023", reachable=lambda: "offline").available
                        if d not in excluded]
            grid = Grid(datasets=datasets, encoders=["OH", "MT"], models=models, custom_encoders=[FREQ])
        else:
            datasets = args.calibration.split(",")
            grid = Grid(datasets=datasets, encoders=list(vocab.ENCODERS), models=models)
        wall, cpu, per_encoder = _timed_run(grid, db, args.workers)
    task_total = sum(per_encoder.values())
    figures = {"phase": args.phase, "datasets": datasets, "models": models, "workers": args.workers,
               "wall_s": wall, "cpu_s": cpu, "task_s": per_encoder, "efficiency": task_total / wall}
    print(f"phase {args.phase}: {len(datasets)} datasets, models {', '.join(models)}, {args.workers} workers")
    print(f"  wall {wall:.0f} s, CPU {cpu:.0f} s (idle {args.workers} cores: about {cpu / args.workers:.0f} s wall); "
          f"task seconds {task_total:.0f}")
    for encoder, seconds in sorted(per_encoder.items(), key=lambda kv: -kv[1]):
        print(f"  {encoder:<12} {seconds:8.1f} task-s")
    if args.phase == "calibrate":
        base = per_encoder.get("OH", 0) + per_encoder.get("MT", 0)
        print(f"  sum of the 32 / (OH + MT) = {task_total / base:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
