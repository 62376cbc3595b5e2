"""The batch engine: experiment grids, the published protocol, executors and resumable runs.

>>> from encbench.engine import Grid, plan, run_grid
>>> grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "MT"], models=["LogReg"],
...             scorings=["AUC", "BAcc"], tuning="no")
>>> grid.run_id                    # deterministic: the same grid resumes the same run
>>> plan(grid).n_expected          # loads and validates the datasets; writes nothing
>>> run_grid(grid, workers=2)      # or scheduler="tcp://host:8786" for a Dask cluster

Modules: :mod:`~encbench.engine.grid` (Grid, Task, plan), :mod:`~encbench.engine.protocol`
(the published protocol, one task at a time), :mod:`~encbench.engine.task_process` (a task's
child process), the executors (:mod:`~encbench.engine.executors`: the interface and in-process;
:mod:`~encbench.engine.local_pool`, :mod:`~encbench.engine.dask_executor` and its
:mod:`~encbench.engine.cluster_probe`), :mod:`~encbench.engine.runner` (run_grid: a grid into the
store), and the app's run queue: :mod:`~encbench.engine.queue` (request files),
:mod:`~encbench.engine.queue_requests` (what a request carries) and
:mod:`~encbench.engine.queue_worker` (the one process that drains it). The ``run`` and ``runs``
commands are in :mod:`encbench.cli` with the others.

The names above are imported when first asked for (PEP 562): a task process
(:mod:`encbench.engine.child`) imports the protocol through this package and must not pay for
the grid's data readers, the runner, the store and DuckDB, which it never uses.
"""
from __future__ import annotations

__all__ = ["Grid", "Plan", "Task", "plan", "run_grid"]


def __getattr__(name: str):
    # heavy: the grid reads datasets (pandas, OpenML), the runner opens the store (DuckDB)
    if name in ("Grid", "Plan", "plan"):
        from encbench.engine import grid

        return getattr(grid, name)
    if name == "Task":
        from encbench.engine.task import Task

        return Task
    if name == "run_grid":
        from encbench.engine.runner import run_grid

        return run_grid
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
