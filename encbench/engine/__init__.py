"""The batch engine: experiment grids, the published protocol, executors and resumable runs.

>>> from encbench.engine import Grid, plan, run_grid
>>> grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "MT"], models=["LogReg"],
...             scorings=["AUC", "BAcc"], tuning="no")
>>> grid.run_id                    # deterministic: the same grid resumes the same run
>>> plan(grid).n_expected          # loads and validates the datasets; writes nothing
>>> run_grid(grid, workers=2)      # or scheduler="tcp://host:8786" for a Dask cluster

Modules: :mod:`~encbench.engine.grid` (Grid, Task, plan), :mod:`~encbench.engine.protocol`
(DESIGN.md section 5), :mod:`~encbench.engine.executors` (in-process, local task processes,
Dask), :mod:`~encbench.engine.runner` (run_grid), :mod:`~encbench.engine.queue`,
:mod:`~encbench.engine.requests` (its typed requests) and :mod:`~encbench.engine.worker` (the
app's queue). The ``run`` and ``runs`` commands are in :mod:`encbench.cli` with the others.
"""
from encbench.engine.grid import Grid, Plan, Task, plan
from encbench.engine.runner import run_grid

__all__ = ["Grid", "Plan", "Task", "plan", "run_grid"]
