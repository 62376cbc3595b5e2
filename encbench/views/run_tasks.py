"""Which task types a run is of, for the Runs page's task filter (a view shows one task).

A run's task is its datasets' (``datasets.task``, set when a dataset is loaded: from the
target, or as the run asked). A run that has loaded its datasets names their keys in its
configuration (``resolved_datasets``); a run still queued, or one whose loading failed, is
known by what its grid asks: a ``task`` in a dataset's options, or a bundled dataset (a
published one, binary). The published study's run is binary. Anything else is not known yet
(the target is read when the run starts) and is listed under every task.

A run may mix tasks (``encbench run`` over datasets of several types): it is listed under
each of them.
"""
from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from encbench import vocab

__all__ = ["config_of", "grid_tasks", "run_tasks", "runs_of_task", "task_label"]


def config_of(value) -> dict:
    """A run's ``config`` as a dict (the database holds it as JSON text; unreadable: empty)."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _ordered(tasks) -> tuple[str, ...]:
    tasks = set(tasks)
    return tuple(t for t in vocab.TASKS if t in tasks)


def grid_tasks(grid: Mapping) -> tuple[str, ...] | None:
    """The task types a grid asks for, when it says so for each of its datasets, else None.

    Examples
    --------
    >>> grid_tasks({"datasets": ["bundled:credit-g", "up.csv"],
    ...             "dataset_options": {"up.csv": {"task": "regression"}}})
    ('binary', 'regression')
    >>> grid_tasks({"datasets": ["31"]}) is None    # inferred from the target when it loads
    True
    """
    specs = grid.get("datasets") if isinstance(grid, Mapping) else None
    if not isinstance(specs, (list, tuple)) or not specs:
        return None
    options = grid.get("dataset_options") if isinstance(grid.get("dataset_options"), Mapping) else {}
    tasks = []
    for spec in specs:
        task = (options.get(spec) or {}).get("task") if isinstance(options.get(spec), Mapping) else None
        if task is None and isinstance(spec, str) and spec.startswith("bundled:"):
            task = "binary"
        if task not in vocab.TASKS:
            return None
        tasks.append(task)
    return _ordered(tasks)


def run_tasks(runs: pd.DataFrame, datasets: pd.DataFrame,
              requests: Mapping[str, Mapping] | None = None) -> dict[str, tuple[str, ...] | None]:
    """Each run's task types (vocabulary order), or None while they are not known.

    Parameters
    ----------
    runs
        :func:`encbench.store.queries.list_runs` output (``run_id, origin, config``), or the
        Runs page's progress table with a ``config`` column; runs without one are looked up in
        ``requests``.
    datasets
        :func:`encbench.store.queries.list_datasets` output (``dataset, task``).
    requests
        Run id -> the grid of its queued request (a run not in the database yet).
    """
    task_of = (dict(zip(datasets["dataset"].astype(str), datasets["task"]))
               if len(datasets) and "task" in datasets else {})
    requests = requests or {}
    found: dict[str, tuple[str, ...] | None] = {}
    for run in runs.itertuples(index=False):
        config = config_of(getattr(run, "config", None))
        resolved = config.get("resolved_datasets")
        keys = ([str(v.get("key")) for v in resolved.values() if isinstance(v, Mapping)]
                if isinstance(resolved, Mapping) else [])
        tasks = None
        if keys and all(k in task_of for k in keys):
            tasks = _ordered(task_of[k] for k in keys)
        if not tasks:
            grid = config.get("grid") if isinstance(config.get("grid"), Mapping) else config
            tasks = grid_tasks(grid) or grid_tasks(requests.get(run.run_id, {}))
        if not tasks and getattr(run, "origin", None) == "published":
            tasks = ("binary",)  # the study's task
        found[run.run_id] = tasks or None
    return found


def runs_of_task(tasks: Mapping[str, tuple[str, ...] | None], task: str) -> list[str]:
    """The runs listed under ``task``: those of it, and those whose task is not known yet."""
    return [run_id for run_id, of in tasks.items() if of is None or task in of]


def task_label(tasks: tuple[str, ...] | None) -> str | None:
    """A run's task types as shown (``binary, regression``); None while not known."""
    return ", ".join(tasks) if tasks else None
