"""What every executor is: where the tasks of a run execute, and what they report back.

Every executor has ``start()`` (connect; raises ValueError if it cannot), ``close()``, and
``run(tasks, payloads, timeout)``, a generator that yields an :class:`Outcome` whenever a task
finishes and ``None`` about every :data:`TICK` seconds while waiting, so the single writer (the
caller) can check for cancellation and publish snapshots. Closing the generator stops the work in
flight.

The executors: :class:`InlineExecutor` (in this process, no timeout), the pool of local task
processes (:class:`encbench.engine.local_pool.LocalExecutor`) and a Dask cluster
(:class:`encbench.engine.dask_executor.DaskExecutor`); :func:`encbench.engine.runner.make_executor`
chooses one for a run.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from encbench.engine.protocol import Payload, run_task
from encbench.engine.task import Task


#: seconds between ``None`` ticks while an executor waits for results.
TICK = 0.5


@dataclass(frozen=True)
class Outcome:
    """A finished task: its result rows, wall time and where it ran.

    ``lost`` marks a task that never finished because the Dask workers running it were lost
    (after :data:`MAX_RESUBMITS` resubmissions): its rows are ``failed`` with that reason, and the
    run is incomplete.
    """

    task: Task
    rows: list
    seconds: float
    where: str = "local"
    lost: bool = False


class InlineExecutor:
    """Run tasks in the calling process, one after another (debugging; timeouts not enforced)."""

    name = "inline"

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def run(self, tasks: Iterable[Task], payloads: Mapping[str, Payload], timeout: float) -> Iterator:
        for task in tasks:
            start = time.monotonic()
            rows = run_task(task, payloads[task.dataset])
            yield Outcome(task, rows, time.monotonic() - start, "inline")
