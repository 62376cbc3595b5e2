"""The local pool: a run's tasks on task processes of this machine (:class:`LocalExecutor`).

The parent drives up to ``workers`` task processes (:class:`encbench.engine.task_process.TaskProcess`),
enforcing each task's timeout, and replaces a process that died or overran. How many a run may
ask for (:func:`check_workers`: at most :data:`MAX_WORKERS_PER_CORE` per core) is the one rule
of the command line's ``--workers`` and of a queued run.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from multiprocessing.connection import wait

from encbench.engine.executors import TICK, Outcome
from encbench.engine.protocol import Payload, imports_of, unfinished_rows
from encbench.engine.task import Task
from encbench.engine.task_process import TaskProcess, timeout_message

log = logging.getLogger(__name__)


#: at most this many local task processes per core: tasks are CPU-bound, and each process costs
#: about 225 MB before its task, which the memory budget does not count
MAX_WORKERS_PER_CORE = 4


def max_workers() -> int:
    """The most local task processes a run may ask for: :data:`MAX_WORKERS_PER_CORE` per core."""
    return MAX_WORKERS_PER_CORE * (os.cpu_count() or 1)


def check_workers(workers, *, option: str = "workers", process: str = "the worker's process") -> int:
    """``workers`` if it is a number of local task processes a run may use (0: tasks run in
    ``process``, the caller's), the same rule for the command line's ``--workers`` (``option``)
    and a queued run's; ValueError saying why otherwise."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ValueError(f"{option} must be 0 (in {process}) or a positive number: got {workers!r}")
    if workers > max_workers():
        raise ValueError(f"{option} {workers} is more than {max_workers()} ({MAX_WORKERS_PER_CORE} per core "
                         f"of this machine's {os.cpu_count() or 1}): each worker is a process of about 225 MB "
                         f"before its task; use at most {max_workers()}, or a Dask cluster (--scheduler) for more")
    return workers


class LocalExecutor:
    """A pool of ``workers`` task processes driven by the calling process.

    A task that runs longer than ``timeout`` seconds is killed with its process and recorded as
    ``timeout``; a process that dies (e.g. out of memory) records its task as ``failed``. Both
    are replaced by a fresh process. ``memory_limit``: bytes of address space each task process
    may use (:func:`encbench.engine.budget.task_memory_limit`); None: no limit.
    """

    name = "local"

    def __init__(self, workers: int = 1, *, memory_limit: int | None = None):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive integer: got {workers!r}")
        self.workers = workers
        self.memory_limit = memory_limit

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def run(self, tasks: Iterable[Task], payloads: Mapping[str, Payload], timeout: float) -> Iterator:
        pending = deque(tasks)
        if not pending:
            return
        warm = imports_of(pending)  # what any of them may run
        procs = [TaskProcess(die_with_parent=threading.current_thread() is threading.main_thread(),
                             memory_limit=self.memory_limit, warm=warm)
                 for _ in range(min(self.workers, len(pending)))]
        busy: dict[TaskProcess, Task] = {}
        try:
            for proc in procs:
                proc.launch()
            for proc in procs:  # the children import in parallel
                proc.wait_ready()
            while pending or busy:
                for proc in procs:
                    if proc not in busy and pending:
                        task = pending.popleft()
                        proc.submit(task, payloads[task.dataset], timeout)
                        busy[proc] = task
                now = time.monotonic()
                wait_for = min([TICK] + [p.deadline - now for p in busy])
                by_conn = {p._recv: p for p in busy}
                ready = wait(list(by_conn), timeout=max(0.0, wait_for))
                for conn in ready:
                    proc = by_conn[conn]
                    task = busy.pop(proc)
                    seconds = time.monotonic() - proc.started_at
                    try:
                        rows = proc.receive()
                    except (EOFError, OSError):
                        rows = proc.died(task)
                        log.warning("task process died during %s", task.name)
                    yield Outcome(task, rows, seconds, "local")
                now = time.monotonic()
                for proc in [p for p, _ in busy.items() if p.deadline <= now]:
                    task = busy.pop(proc)
                    seconds = now - proc.started_at
                    proc.log_output(f"task {task.name}")
                    proc.kill()
                    log.info("task %s killed after %.1f s (timeout %g s)", task.name, seconds, timeout)
                    yield Outcome(task, unfinished_rows(task, "timeout", timeout_message(timeout),
                                                        seconds=seconds), seconds, "local")
                if not ready:
                    yield None
        finally:
            for proc in procs:
                if proc in busy:
                    proc.kill()
                else:
                    proc.stop()
