"""A run's tasks on a Dask distributed cluster (:class:`DaskExecutor`).

Each Dask worker thread drives its own task process (:func:`run_on_dask_worker`), so timeouts and
the memory limit hold on the cluster too. A task whose worker was lost is sent again, up to
:data:`MAX_RESUBMITS` times; a run whose cluster has no worker left for :data:`WORKERS_GRACE`
seconds stops (:class:`WorkersLost`), keeping what finished. ``distributed`` is imported by the
executor's methods only: it is an optional dependency, needed for a cluster alone.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError

from encbench.engine.cluster_probe import check_cluster
from encbench.engine.executors import TICK, Outcome
from encbench.engine.protocol import Payload, describe, imports_of, unfinished_rows
from encbench.engine.task import Task
from encbench.engine.task_process import TaskProcess

log = logging.getLogger(__name__)


# Task processes of the Dask worker threads of this process (one per thread).
_DASK_PROCS: dict[int, TaskProcess] = {}
_DASK_LOCK = threading.Lock()


def run_on_dask_worker(task: Task, payload: Payload, timeout: float,
                       memory_limit: int | None = None) -> tuple[list, float, str]:
    """Body of a Dask task: run ``task`` in this worker thread's task process, with the timeout
    and the memory limit (bytes of address space, None: none)."""
    ident = threading.get_ident()
    with _DASK_LOCK:
        proc = _DASK_PROCS.get(ident)
        if proc is None:
            proc = _DASK_PROCS[ident] = TaskProcess(die_with_parent=False, memory_limit=memory_limit,
                                                    warm=imports_of([task]))
    if proc.memory_limit != memory_limit:  # another run's limit: a new process gets this one
        proc.kill()
        proc.memory_limit = memory_limit
    if not proc.alive:
        proc.restart()
    start = time.monotonic()
    rows = proc.run(task, payload, timeout)
    return rows, time.monotonic() - start, f"{socket.gethostname()}:{os.getpid()}"


#: times a task whose Dask worker was lost is sent again before it is recorded as lost.
MAX_RESUBMITS = 2
#: seconds to wait for the result of a finished Dask task before waiting on other tasks (the
#: worker holding it may have died: Dask then recomputes it).
GATHER_TIMEOUT = 5.0
#: seconds a run waits for a Dask worker once the cluster has none left (a nanny restarts a killed
#: worker within seconds) before it stops, saying what happened and how to resume.
WORKERS_GRACE = 30.0
#: seconds between checks that the cluster still has workers while a run waits for results.
WORKERS_CHECK = 2.0


class WorkersLost(ValueError):
    """Every Dask worker was lost during a run and none came back within :data:`WORKERS_GRACE`;
    the message says how many tasks finished (their results are kept) and how to resume."""


def workers_lost_message(address: str, finished: int, total: int, grace: float, why: str = "") -> str:
    """What happened when the cluster has no workers left, and what to do."""
    return (f"every Dask worker of the scheduler {address} was lost{why} and none came back within "
            f"{grace:g} s: {finished} of the {total} tasks sent finished and their results are kept, "
            f"the other {total - finished} were not run. Start workers (`dask worker {address}`), then "
            f"re-run the same command to resume: finished tasks are not run again")


def lost_message(sent: int, why: str) -> str:
    """The error of a task whose Dask workers were lost every time it was sent."""
    return (f"Dask worker lost: the task was sent {sent} times and each time the worker running it "
            f"(or holding its result or data) died ({why}); re-run the same command to resume it")


class DaskExecutor:
    """Submit tasks to a Dask distributed cluster; results stream back as they complete.

    Parameters
    ----------
    scheduler : str or distributed.Client
        Scheduler address (``tcp://host:8786``) or a connected client (not closed here).

    Notes
    -----
    Each dataset is sent to every worker once (``scatter(broadcast=True)``); the workers and the
    scheduler need ``encbench`` importable (same version and sources as the caller), which
    :meth:`start` checks (:func:`check_cluster`) before any task is sent.
    """

    name = "dask"

    def __init__(self, scheduler, *, extra_modules: Sequence[str] = (), memory_limit: int | None = None):
        self.scheduler = scheduler
        self.extra_modules = tuple(extra_modules)
        self.memory_limit = memory_limit
        self.client = None
        self._own = False

    def start(self) -> None:
        """Connect to the scheduler (within 10 s); raise ValueError naming it if that fails."""
        from distributed import Client  # optional: a cluster's dependency

        if self.client is not None:
            return
        if isinstance(self.scheduler, str):
            try:
                self.client = Client(self.scheduler, set_as_default=False, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise ValueError(f"cannot reach the Dask scheduler {self.scheduler!r}: {exc}") from None
            self._own = True
        else:
            self.client = self.scheduler
        try:
            check_cluster(self.client, extra_modules=self.extra_modules)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._own and self.client is not None:
            self.client.close()
        self.client = None
        self._own = False

    def run(self, tasks: Iterable[Task], payloads: Mapping[str, Payload], timeout: float) -> Iterator:
        """Yield an :class:`Outcome` per task, ``None`` every :data:`TICK` seconds while waiting.

        A task whose worker dies is normally recomputed by Dask itself. When Dask gives it up
        instead (its future cancelled because the worker held the only copy of its result or
        data, or ``KilledWorker`` after the scheduler's own retries), it is sent again, with its
        dataset scattered again if that copy was lost too, up to :data:`MAX_RESUBMITS` times;
        then its rows are ``failed`` with the reason and the outcome is marked ``lost``.
        """
        from distributed import KilledWorker, as_completed  # optional: a cluster's dependency

        tasks = list(tasks)
        if not tasks:
            return
        self.start()
        client = self.client
        address = self.scheduler if isinstance(self.scheduler, str) else client.scheduler.address
        futures: dict = {}
        sent: dict[int, int] = {}
        finished = 0
        batch = uuid.uuid4().hex[:8]

        def scatter(key: str):
            # broadcast: every worker holds every dataset, so data locality never piles the
            # tasks of one dataset onto the worker that happened to receive it; with no worker
            # left Dask waits for one, then raises "No valid workers found"
            try:
                return client.scatter(payloads[key], hash=False, broadcast=True, timeout=WORKERS_GRACE)
            except TimeoutError:
                raise WorkersLost(workers_lost_message(address, finished, len(tasks), WORKERS_GRACE)) from None

        def no_workers_for() -> float:
            """Seconds the cluster has had no worker (0 while it has one)."""
            nonlocal no_workers_since
            try:
                workers = client.nthreads()
            except (OSError, TimeoutError):  # the scheduler does not answer: no worker either
                workers = {}
            if workers:
                no_workers_since = None
                return 0.0
            no_workers_since = no_workers_since or time.monotonic()
            return time.monotonic() - no_workers_since

        no_workers_since = None
        try:
            needed = {t.dataset for t in tasks}
            scattered = {key: scatter(key) for key in needed}

            def submit(index: int):
                task = tasks[index]
                data = scattered[task.dataset]
                if data.status != "finished":  # the dataset's copies went with the lost workers
                    data = scattered[task.dataset] = scatter(task.dataset)
                sent[index] = sent.get(index, 0) + 1
                retry = f"-retry{sent[index] - 1}" if sent[index] > 1 else ""
                future = client.submit(
                    run_on_dask_worker, task, data, timeout, self.memory_limit, pure=False,
                    key=f"encbench-{batch}-{index}-{task.encoder}-fold{task.fold}{retry}",
                )
                futures[future] = index
                return future

            completed = as_completed([submit(index) for index in range(len(tasks))], loop=client.loop)
            last_tick = last_check = time.monotonic()
            while not completed.is_empty():
                if not completed.has_ready():
                    time.sleep(0.05)
                    if time.monotonic() - last_tick >= TICK:
                        last_tick = time.monotonic()
                        yield None
                    # tasks wait for a worker forever once none is left: say so after a grace
                    if time.monotonic() - last_check >= WORKERS_CHECK:
                        last_check = time.monotonic()
                        if no_workers_for() >= WORKERS_GRACE:
                            raise WorkersLost(workers_lost_message(address, finished, len(tasks),
                                                                   WORKERS_GRACE))
                    continue
                for future in completed.next_batch(block=False):
                    index = futures.pop(future)
                    task = tasks[index]
                    lost = None
                    if future.status == "finished":
                        try:
                            rows, seconds, where = future.result(timeout=GATHER_TIMEOUT)
                        except TimeoutError:  # its holder died: Dask recomputes it, wait again
                            futures[future] = index
                            completed.add(future)
                            continue
                        except (CancelledError, KilledWorker) as exc:
                            lost = f"{type(exc).__name__}: {exc}"
                    elif future.status == "error" and not isinstance(future.exception(), KilledWorker) \
                            and future.exception() is not None:
                        exc = future.exception()
                        rows, seconds, where = unfinished_rows(task, "failed", describe("dask", exc)), 0.0, "dask"
                    else:  # cancelled (its result or data lost with a worker), or KilledWorker
                        exc = future.exception() if future.status == "error" else None
                        lost = (f"{type(exc).__name__}: {exc}" if exc is not None
                                else f"the future was {future.status}")
                    future.release()
                    if lost is not None:
                        if sent[index] <= MAX_RESUBMITS:
                            log.warning("task %s: its Dask worker was lost (%s); sending it again", task.name,
                                        lost)
                            completed.add(submit(index))
                            continue
                        log.error("task %s: lost with its Dask worker %d times; recorded as failed",
                                  task.name, sent[index])
                        rows = unfinished_rows(task, "failed", lost_message(sent[index], lost))
                        finished += 1
                        yield Outcome(task, rows, 0.0, "dask", lost=True)
                        continue
                    finished += 1
                    yield Outcome(task, rows, seconds, where)
        finally:
            if futures:
                client.cancel(list(futures))
