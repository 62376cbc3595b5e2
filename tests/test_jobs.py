"""BackgroundJob: a function on a thread, with progress, cancellation and its error kept."""
from __future__ import annotations

import threading

from encbench.jobs import BackgroundJob


def _steps(n, *, progress, should_stop, gate=None):
    for i in range(n):
        if gate is not None:
            gate.wait(10)
        if should_stop():
            return "stopped"
        progress(i + 1, n)
    return sum(range(n))


def test_the_result_and_the_progress_of_a_finished_job():
    job = BackgroundJob(_steps, 5)
    assert job.wait(10) and job.finished and not job.cancelled
    assert job.result == 10 and job.error is None
    assert (job.done, job.total, job.fraction) == (5, 5, 1.0)


def test_cancel_is_seen_by_the_function():
    gate = threading.Event()
    job = BackgroundJob(_steps, 1000, gate=gate)
    assert job.fraction == 0.0 and not job.finished
    job.cancel()
    gate.set()
    assert job.wait(10) and job.cancelled and job.result == "stopped"
    assert job.done < 1000


def test_an_error_is_kept_not_raised():
    def broken(*, progress, should_stop):
        progress(1, 4)
        raise ValueError("column 'x' is empty: got 0 rows")

    job = BackgroundJob(broken)
    assert job.wait(10)
    assert isinstance(job.error, ValueError) and "column 'x'" in str(job.error)
    assert job.result is None and job.fraction == 0.25
