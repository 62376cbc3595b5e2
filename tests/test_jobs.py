"""BackgroundJob: a function on a thread, with progress, cancellation and its error kept."""
from __future__ import annotations

import threading
import time

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


# -- ProcessJob: the same interface, the work in a niced worker process ---------------------------
def _nice_and_pid(*, progress, should_stop):
    import os

    progress(1, 1)
    return os.nice(0), os.getpid()


def _wait_for_stop(*, progress, should_stop):
    import time

    for i in range(600):
        if should_stop():
            return f"stopped after {i} steps"
        progress(i, 600)
        time.sleep(0.05)
    return "never stopped"


def _ignore_stop(*, progress, should_stop):
    import time

    time.sleep(120)


def _exit_hard(*, progress, should_stop):
    import os

    os._exit(3)


def _broken(*, progress, should_stop):
    progress(1, 4)
    raise ValueError("column 'x' is empty: got 0 rows")


def test_a_process_job_gives_the_in_process_result_of_replicability():
    """R-Kem replicability in a worker process: the same summary and pairs, bit for bit, as the
    same call in this process; progress reaches the total."""
    import os

    import numpy as np
    import pandas as pd
    from pandas.testing import assert_frame_equal

    from encbench.jobs import ProcessJob
    from encbench.stats import replicability

    rng = np.random.default_rng(5)
    scores = pd.DataFrame([(f"d{d}", f"e{e}", float(rng.random())) for d in range(12) for e in range(6)],
                          columns=["dataset", "encoder", "cv_score"])
    here = replicability(scores, [3, 6], n_pairs=8, seed=0, strategy="R-Kem")
    job = ProcessJob(replicability, scores, [3, 6], n_pairs=8, seed=0, strategy="R-Kem")
    assert job.wait(300) and job.error is None, job.error
    assert_frame_equal(job.result.summary, here.summary)
    assert_frame_equal(job.result.pairs, here.pairs)
    assert (job.done, job.total) == (32, 32) and not job.queued
    job = ProcessJob(_nice_and_pid)
    assert job.wait(120) and job.error is None
    niceness, pid = job.result
    assert pid != os.getpid() and niceness >= os.nice(0) + min(10, 19 - os.nice(0))


def test_a_process_job_is_cancelled_by_its_function_or_stopped():
    from encbench.jobs import JobCancelled, ProcessJob

    job = ProcessJob(_wait_for_stop)
    deadline = time.monotonic() + 120
    while job.done < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    job.cancel()
    assert job.wait(60) and job.cancelled and job.result.startswith("stopped after")
    # a function that never polls should_stop: terminated once its grace is over, here at once
    stubborn = ProcessJob(_ignore_stop, cancel_grace=0)
    while stubborn.queued and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)                             # in _ignore_stop's sleep by now
    stubborn.cancel()
    assert stubborn.wait(120) and isinstance(stubborn.error, JobCancelled)
    assert str(stubborn.error) == "cancelled: the worker was stopped after 0 s"
    assert stubborn._process.exitcode == -15                    # SIGTERM, not its own end


def test_a_process_job_keeps_errors_and_a_dead_worker():
    from encbench.jobs import ProcessJob

    job = ProcessJob(_broken)
    assert job.wait(120)
    assert isinstance(job.error, ValueError) and "column 'x'" in str(job.error)
    assert job.result is None and job.fraction == 0.25
    dead = ProcessJob(_exit_hard)
    assert dead.wait(120) and isinstance(dead.error, RuntimeError)
    assert "exited with status 3" in str(dead.error)
