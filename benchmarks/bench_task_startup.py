"""Start-up cost of a task process: CPU and wall seconds from its launch to 'ready'.

A task process (:mod:`encbench.engine.child`) imports its libraries before it says 'ready', so
that no task's clock includes import time. It used to import the whole ``encbench.engine``
package (the grid, the runner, the store and DuckDB) and build one estimator of every registered
model and every full-tuning search space; it now imports the protocol alone and what its run's
tasks use (:func:`encbench.engine.protocol.imports_of`), the encoders' modules included.

Each way is measured in fresh interpreters, interleaved, in this same run (the median of
``--repeat`` starts; CPU is the child's user + system time from ``wait4``):

- ``old``: the package's eager imports and ``warm_up()`` of every model and space, as before;
- ``new, <run>``: ``warm_up(imports_of(tasks))`` for the tasks of a typical run;
- ``TaskProcess, <run>``: a real :class:`encbench.engine.task_process.TaskProcess` of that run,
  launch to 'ready' (the parent's pipes and the child's argument parsing included).

Usage::

    .venv/bin/python benchmarks/bench_task_startup.py [--repeat 7]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from encbench.engine.task_process import TaskProcess, _child_env
from encbench.engine.protocol import imports_of
from encbench.engine.task import Task
from encbench.resources import subprocess_cwd

#: the old start-up: ``import encbench.engine.child`` ran the package's ``__init__`` (grid, task,
#: runner, so the store and DuckDB), then ``warm_up()`` built every model and search space
OLD = ("import encbench.engine.grid, encbench.engine.runner, encbench.engine.child\n"
       "from encbench.engine.protocol import warm_up\n"
       "warm_up(None)\n")
NEW = ("import json, sys\n"
       "import encbench.engine.child\n"
       "from encbench.engine.protocol import warm_up\n"
       "warm_up(json.loads(sys.argv[1]))\n")


def _tasks(encoders, models, tuning, task="binary"):
    return [Task("d", e, 0, 5, tuple(models), ("AUC",), tuning, task=task) for e in encoders]


#: typical runs: the README's quick start and most tests (two encoders, LogReg), the study's
#: five models under model tuning with a few encoders, full tuning of DT
RUNS = {
    "OH+MT, LogReg, no tuning": _tasks(("OH", "MT"), ("LogReg",), "no"),
    "5 encoders, 5 study models, model tuning": _tasks(("OH", "MT", "CVGLMM_5", "CB", "Count"),
                                                        ("DT", "LGBM", "SVM", "kNN", "LogReg"), "model"),
    "OH, DT, full tuning": _tasks(("OH",), ("DT",), "full"),
}


def _python(code: str, *args: str) -> tuple[float, float]:
    """Run ``python -c code args`` as a task process would be (its environment and directory);
    (CPU seconds, wall seconds) of the child."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], env=_child_env(), cwd=subprocess_cwd())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"start-up script failed with status {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, wall


def _task_process(warm: dict) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of a real TaskProcess from launch to 'ready' (CPU: the
    children's time this process gained, measured after the child exits)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = TaskProcess(die_with_parent=True, warm=warm)
    start = time.perf_counter()
    proc.start()
    wall = time.perf_counter() - start
    proc.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="starts of each way (default 7)")
    args = parser.parse_args(argv)
    ways = {"old: every model and space, eager package": lambda: _python(OLD)}
    for name, tasks in RUNS.items():
        needs = imports_of(tasks)
        ways[f"new, {name}"] = lambda needs=needs: _python(NEW, json.dumps(needs))
        ways[f"TaskProcess, {name}"] = lambda needs=needs: _task_process(needs)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for _ in range(args.repeat):  # interleaved: a change of the machine's load hits every way
        for name, start in ways.items():
            samples[name].append(start())
    old_cpu = statistics.median(cpu for cpu, _ in samples[next(iter(ways))])
    print(f"task process start-up, median of {args.repeat} (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"{'way':58s} {'CPU s':>7s} {'wall s':>7s} {'CPU vs old':>11s}")
    for name, values in samples.items():
        cpu = statistics.median(c for c, _ in values)
        wall = statistics.median(w for _, w in values)
        print(f"{name:58s} {cpu:7.2f} {wall:7.2f} {cpu / old_cpu - 1:+11.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
