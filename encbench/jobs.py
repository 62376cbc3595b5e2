"""Long computations on a background thread, with progress and cancellation, for the app.

A page that must not block (an exact Kemeny solve per sample size, say) starts a
:class:`BackgroundJob`: the script run that starts it ends at once, a fragment polls
:attr:`BackgroundJob.fraction` and offers :meth:`BackgroundJob.cancel`, and a later run picks
up :attr:`BackgroundJob.result` (or :attr:`BackgroundJob.error`). Nothing here imports
streamlit; the job's function must not call it either (it runs outside any script run).

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

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


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
    """

    def __init__(self, func: Callable, *args, **kwargs):
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
