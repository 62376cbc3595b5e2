"""Long computations off the script run, with progress and cancellation, for the app.

A page that must not block (an exact Kemeny solve per sample size, say) starts a job: the
script run that starts it ends at once, a fragment polls its ``fraction`` and offers
``cancel()``, and a later run picks up its ``result`` (or ``error``). Two kinds share that
interface:

- :class:`BackgroundJob` runs the function on a thread of this process: for work of a second or
  two, which a thread costs nothing to start.
- :class:`ProcessJob` runs it in a worker process of its own at a lower CPU priority
  (:data:`WORKER_NICE`), at most :data:`MAX_PROCESS_JOBS` at a time (the others wait their
  turn): for heavy work, which on a thread of the app's server took the CPU and the GIL from
  every other visitor (one browser computing R-Kem replicability made another's page load take
  over 30 s). Progress comes back through a queue that a thread of this process reads.

Nothing here imports streamlit; the job's function must not call it either (it runs outside any
script run), and a :class:`ProcessJob`'s function and arguments must pickle (a module-level
function, data frames).

Examples
--------
>>> def count(n, *, progress, should_stop):
...     for i in range(n):
...         if should_stop():
...             return None
...         progress(i + 1, n)
...     return n
>>> job = BackgroundJob(count, 3)
>>> job.wait(10), job.result, job.fraction
(True, 3, 1.0)
"""
from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import os
import pickle
import queue
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

#: niceness added to a :class:`ProcessJob`'s worker process (and the processes it starts): the
#: server's threads, at the default priority, get the CPU first
WORKER_NICE = 10
#: worker processes running at once; a job submitted beyond them waits for a free one
MAX_PROCESS_JOBS = 2
#: seconds a cancelled worker gets to stop by itself before it is terminated
CANCEL_GRACE = 5.0
#: fewest seconds between two progress messages of a worker (the last one always goes)
PROGRESS_EVERY = 0.1

_SLOTS = threading.BoundedSemaphore(MAX_PROCESS_JOBS)
_LIVE: set = set()  # the worker processes running
_LIVE_LOCK = threading.Lock()


def _end_workers() -> None:
    """Terminate the workers still running when this process exits (multiprocessing would wait
    for them to finish otherwise)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        with contextlib.suppress(Exception):
            process.terminate()
            process.join(2)


atexit.register(_end_workers)  # registered after multiprocessing's own handler, so it runs first


class JobCancelled(Exception):
    """The :attr:`error` of a :class:`ProcessJob` cancelled before or without its function's own
    answer to ``should_stop()`` (waiting for a worker, or stopped after its cancel grace)."""


class BackgroundJob:
    """``func(*args, progress=..., should_stop=..., **kwargs)`` on a daemon thread.

    ``func`` reports ``progress(done, total)`` and polls ``should_stop()``, which turns true
    once :meth:`cancel` is called. An exception ``func`` raises is kept in :attr:`error`
    (and logged), never raised in the caller.

    Attributes
    ----------
    done, total : int
        The latest progress reported.
    result : object
        What ``func`` returned (None until it has).
    error : Exception or None
        What ``func`` raised, if it did.
    started : float
        ``time.monotonic()`` when the job was created.
    """

    def __init__(self, func: Callable, *args, **kwargs):
        self.started = time.monotonic()
        self.done, self.total = 0, 0
        self.result, self.error = None, None
        self._stop, self._finished = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._work, args=(func, args, kwargs), daemon=True,
                                        name=f"encbench-{getattr(func, '__name__', 'job')}")
        self._thread.start()

    def _work(self, func: Callable, args: tuple, kwargs: dict) -> None:
        try:
            self.result = func(*args, progress=self._progress, should_stop=self._stop.is_set, **kwargs)
        except Exception as exc:  # noqa: BLE001 - handed to the page, which shows it
            log.info("background job %s ended: %r", self._thread.name, exc)
            self.error = exc
        finally:
            self._finished.set()

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def cancel(self) -> None:
        """Ask ``func`` to stop (it sees ``should_stop()`` turn true)."""
        self._stop.set()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    @property
    def fraction(self) -> float:
        """Share done, in [0, 1] (0 before the first report)."""
        return min(self.done / self.total, 1.0) if self.total else 0.0

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends; True if it did within ``timeout`` seconds."""
        return self._finished.wait(timeout)


class ProcessJob(BackgroundJob):
    """``func(*args, progress=..., should_stop=..., **kwargs)`` in a worker process.

    Same attributes and methods as :class:`BackgroundJob`. The worker is a fresh interpreter
    (``spawn``: the server has threads, which ``fork`` would copy mid-lock), niced by
    :data:`WORKER_NICE`; at most :data:`MAX_PROCESS_JOBS` run at once. ``should_stop()`` turns
    true in the worker once :meth:`cancel` is called; a worker that has not ended
    ``cancel_grace`` seconds later (:data:`CANCEL_GRACE` by default) is terminated. A function
    that never polls ``should_stop()`` once it runs is better ended at once: pass
    ``cancel_grace=0``. A worker that dies without a result leaves a ``RuntimeError`` naming its
    exit status in :attr:`error`.

    Attributes
    ----------
    queued : bool
        True while the job waits for a free worker.
    """

    def __init__(self, func: Callable, *args, cancel_grace: float = CANCEL_GRACE, **kwargs):
        self.queued = True
        self._process = None
        self._grace = cancel_grace
        super().__init__(func, *args, **kwargs)

    def _work(self, func: Callable, args: tuple, kwargs: dict) -> None:
        try:
            while not _SLOTS.acquire(timeout=0.2):
                if self._stop.is_set():
                    raise JobCancelled("cancelled before a worker was free")
            try:
                self.queued = False
                context = multiprocessing.get_context("spawn")
                messages, stop = context.Queue(), context.Event()
                # not a daemon: a daemonic process may not start the processes the function may use
                # (R-Kem's pool); the worker stops when this process ends (_end_workers, and it
                # watches its parent)
                self._process = context.Process(target=_worker, args=(func, args, kwargs, messages, stop),
                                                name=self._thread.name)
                with _LIVE_LOCK:
                    _LIVE.add(self._process)
                self._process.start()
                self._follow(messages, stop)
            finally:
                with _LIVE_LOCK:
                    _LIVE.discard(self._process)
                _SLOTS.release()
        except Exception as exc:  # noqa: BLE001 - handed to the page, which shows it
            log.info("process job %s ended: %r", self._thread.name, exc)
            self.error = exc
        finally:
            self._finished.set()

    def _follow(self, messages, stop) -> None:
        """Read the worker's messages until its result or error, or until it dies."""
        cancelled_at = None
        while True:
            if self._stop.is_set() and cancelled_at is None:
                stop.set()
                cancelled_at = time.monotonic()
            try:
                kind, *payload = messages.get(timeout=0.2)
            except queue.Empty:
                if not self._process.is_alive():
                    try:  # a message may have landed between the timeout and the death
                        kind, *payload = messages.get(timeout=1.0)
                    except queue.Empty:
                        raise RuntimeError(f"the worker process of {self._thread.name} exited with status "
                                           f"{self._process.exitcode} before it returned") from None
                elif cancelled_at is not None and time.monotonic() - cancelled_at >= self._grace:
                    self._process.terminate()
                    self._process.join(5)
                    raise JobCancelled(f"cancelled: the worker was stopped after {self._grace:g} s") from None
                else:
                    continue
            if kind == "progress":
                self._progress(*payload)
            elif kind == "result":
                self.result = pickle.loads(payload[0])
                break
            else:
                raise pickle.loads(payload[0])
        self._process.join(5)


def _worker(func: Callable, args: tuple, kwargs: dict, messages, stop) -> None:
    """A :class:`ProcessJob`'s process: run ``func`` niced, send progress and the outcome."""
    with contextlib.suppress(OSError):  # a platform without nice: the same priority then
        os.nice(WORKER_NICE)
    parent = os.getppid()
    last = [0.0]

    def should_stop() -> bool:  # cancelled, or the app that started it is gone
        return stop.is_set() or os.getppid() != parent

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= PROGRESS_EVERY:
            last[0] = now
            messages.put(("progress", done, total))

    # pickled here, not in the queue's feeder thread, so that what does not pickle is reported
    try:
        message = ("result", pickle.dumps(func(*args, progress=progress, should_stop=should_stop, **kwargs)))
    except Exception as exc:  # noqa: BLE001 - sent to the parent, which keeps it in .error
        try:
            message = ("error", pickle.dumps(exc))
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text then
            message = ("error", pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}")))
    messages.put(message)
    messages.close()
    messages.join_thread()
