"""Task processes: exit statuses named as they are, a whole process group killed on timeout,
bounded calls, and stderr kept to its last STDERR_TAIL bytes per task."""
from __future__ import annotations

import logging
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from encbench.engine.task_process import STDERR_TAIL, ChildFailed, TaskProcess, _StderrTail, exit_reason


def test_exit_reasons_name_the_status_or_the_signal():
    assert exit_reason(3) == "exited with status 3"
    assert exit_reason(-signal.SIGKILL) == "was killed by signal 9 (SIGKILL), e.g. out of memory"
    assert exit_reason(-signal.SIGSEGV) == "was killed by signal 11 (SIGSEGV)"
    assert exit_reason(None) == "ended without an exit status"


def _alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


@pytest.fixture(scope="module")
def proc():
    """One task process for the call tests (a start costs over a second of CPU): a call that
    ends or times out leaves it to start a fresh process on the next call, as a run would."""
    process = TaskProcess(die_with_parent=True)
    process.start()
    yield process
    process.stop()


def test_a_call_returns_its_value_or_raises_its_error(proc):
    assert proc.call("math:hypot", (3.0, 4.0), 30) == 5.0
    with pytest.raises(ValueError, match=r"ValueError: math domain error"):
        proc.call("math:sqrt", (-1.0,), 30)


def test_a_call_that_ends_its_process_reports_the_status(proc):
    with pytest.raises(ChildFailed, match=r"^its process exited with status 3$") as info:
        proc.call("os:_exit", (3,), 30)
    assert info.value.code == 3 and not info.value.timed_out
    assert proc.call("math:hypot", (6.0, 8.0), 30) == 10.0         # a fresh process takes over


def test_a_timeout_kills_what_the_call_started_too(proc, tmp_path):
    pidfile = tmp_path / "pid"
    start = time.monotonic()
    with pytest.raises(ChildFailed, match=r"did not finish within 2 s and was stopped") as info:
        proc.call("os:system", (f"sleep 600 & echo $! > {pidfile}; wait",), 2)
    assert info.value.timed_out and time.monotonic() - start < 30
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid)                                           # the forked sleep went with it


def test_stderr_keeps_the_last_bytes_of_each_call(proc, caplog):
    caplog.set_level(logging.WARNING, logger="encbench.engine.task_process")
    n = 3 * STDERR_TAIL + 11
    assert proc.call("os:system", (f"head -c {n - 4} /dev/zero | tr '\\0' x >&2; printf 'end\\n' >&2",), 30) == 0
    (record,) = [r for r in caplog.records if "bytes to stderr" in r.getMessage()]
    message = record.getMessage()
    assert message.startswith(f"call os:system wrote {n} bytes to stderr, the first {n - STDERR_TAIL} bytes dropped:")
    body = message.split(":\n", 1)[1]
    assert body == "x" * (STDERR_TAIL - 4) + "end"                  # the tail, without the newline


def test_what_is_in_the_pipe_when_taken_is_counted_then_in_order():
    """take() returns every byte written to the pipe before it was called, even when the reader
    thread has not run yet (a loaded machine), and the pieces come back in the order written."""
    read_end, write_end = os.pipe()
    tail = _StderrTail(read_end)
    try:
        for i in range(300):
            piece = f"{i:04d}".encode() * 3
            os.write(write_end, piece)
            assert tail.take() == (piece.decode(), len(piece))
        os.write(write_end, b"a" * (STDERR_TAIL + 5))
        os.write(write_end, b"end")
        text, total = tail.take()
        assert total == STDERR_TAIL + 8 and text == "a" * (STDERR_TAIL - 3) + "end"
    finally:
        os.close(write_end)
        assert tail.close() == ("", 0)


def _as_limit(pid: int) -> str:
    """The soft 'Max address space' of a process, as /proc/PID/limits shows it."""
    line = next(x for x in Path(f"/proc/{pid}/limits").read_text().splitlines() if x.startswith("Max address space"))
    return line.split()[3]


def test_every_task_process_of_a_run_has_the_hard_limit_the_budget_gives(tmp_path):
    """Each of a run's task processes is capped at the budget per task plus TASK_BASE_BYTES
    (RLIMIT_AS), and an ordinary grid runs under it."""
    import os

    from encbench.engine.budget import TASK_BASE_BYTES, parse_budget, task_memory_limit
    from encbench.engine.grid import Grid
    from encbench.engine.runner import run_grid

    assert task_memory_limit(3_000_000_000) == 3_000_000_000 + 2 * 2**30 == 3_000_000_000 + TASK_BASE_BYTES
    seen: dict[int, str] = {}

    def task_processes() -> set[int]:
        return {int(pid) for task in Path(f"/proc/{os.getpid()}/task").iterdir()
                for pid in (task / "children").read_text().split()
                if "encbench.engine.child" in Path(f"/proc/{pid}/cmdline").read_text()}

    others = task_processes()                          # e.g. the module's `proc`, not the run's

    def children_limits(done, total, info):
        for pid in task_processes() - others:
            seen[pid] = _as_limit(pid)

    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "MT"], models=["LogReg"], scorings=["AUC"],
                n_folds=2)
    run_grid(grid, tmp_path / "r.duckdb", workers=2, memory_budget="1GB", progress=children_limits)
    budget = parse_budget("1GB", concurrent=2)          # a size is per task already
    assert len(seen) == 2 and set(seen.values()) == {str(budget + TASK_BASE_BYTES)}, seen


#: an encoder whose fit never returns: a task of it is still running whenever a signal comes
SLEEPER = """
import time

from sklearn.preprocessing import OrdinalEncoder


class Sleeper(OrdinalEncoder):
    def fit(self, X, y=None):
        time.sleep(600)
"""


def test_a_task_process_that_dies_under_its_limit_is_said_to_be_over_the_memory_budget(tmp_path, monkeypatch):
    """An allocation failing in C or C++ code may abort the process instead of raising: the task's
    rows name the limit and say "over the memory budget", as a MemoryError's do (the abort is
    sent here, while the task runs: its encoder sleeps, so the task cannot have finished and
    answered before the signal, as a quick task could on a loaded machine)."""
    import os

    from encbench.engine.grid import Grid, plan
    from encbench.engine.protocol import Payload

    (tmp_path / "sleeping_encoder.py").write_text(SLEEPER)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    the_plan = plan(Grid(datasets=["bundled:tic-tac-toe"], encoders=[], models=["SVM"], scorings=["AUC"],
                         n_folds=2, custom_encoders={"Sleeper": {"import": "sleeping_encoder:Sleeper"}}),
                    check_custom=False)
    task = the_plan.tasks[0]
    proc = TaskProcess(die_with_parent=True, memory_limit=3 * 2**30)
    proc.start()
    try:
        assert _as_limit(proc.proc.pid) == str(3 * 2**30)
        proc.submit(task, Payload.from_dataset(next(iter(the_plan.datasets.values()))), 600.0)
        os.kill(proc.proc.pid, signal.SIGABRT)
        with pytest.raises(EOFError):
            proc.receive()
        (row,) = proc.died(task)
    finally:
        proc.stop()
    assert row["status"] == "failed" and row["error"] == (
        "task process was killed by signal 6 (SIGABRT) under its memory limit of 3.2 GB: probably over the "
        "memory budget (raise --memory-budget, run fewer --workers, or leave the encoder out)")


def test_a_dask_worker_s_task_process_gets_the_run_s_limit_and_a_new_one_for_another():
    """The body of a Dask task (called here as a worker thread calls it) runs its task in a task
    process capped at the limit the run sent; a run with another limit gets a new process."""
    from encbench.engine import dask_executor as executors
    from encbench.engine.grid import Grid, plan
    from encbench.engine.protocol import Payload

    the_plan = plan(Grid(datasets=["bundled:tic-tac-toe"], encoders=["Ord"], models=["DT"], scorings=["AUC"],
                         n_folds=2))
    payload = Payload.from_dataset(next(iter(the_plan.datasets.values())))
    limits = []
    try:
        for limit in (3 * 2**30, 4 * 2**30):
            rows, _, _ = executors.run_on_dask_worker(the_plan.tasks[0], payload, 600.0, limit)
            assert [r["status"] for r in rows] == ["ok"]
            proc = executors._DASK_PROCS[threading.get_ident()]
            limits.append((proc.proc.pid, _as_limit(proc.proc.pid)))
    finally:
        executors._DASK_PROCS.pop(threading.get_ident()).stop()
    assert [limit for _, limit in limits] == [str(3 * 2**30), str(4 * 2**30)]
    assert limits[0][0] != limits[1][0]


def test_a_replacement_that_does_not_start_gets_one_more_attempt(tmp_path, monkeypatch, caplog):
    """A child that ended mid-run is replaced; when the replacement exits before it is ready,
    one more is started with a warning (a passing failure must not end a long run), and two
    failures in a row raise with the child's exit status."""
    import encbench.engine.task_process as task_process

    fails = tmp_path / "fails"  # how many of the next children exit at once
    monkeypatch.setattr(task_process, "_CHILD_MAIN", "\n".join([
        "import pathlib, sys",
        f"p = pathlib.Path({str(fails)!r})",
        "n = int(p.read_text()) if p.exists() else 0",
        "if n:",
        "    p.write_text(str(n - 1))",
        "    sys.exit(7)",
        "from encbench.engine.child import main",
        "sys.exit(main(sys.argv[1:]))"]))
    proc = TaskProcess(die_with_parent=True)
    proc.start()
    try:
        proc.kill()
        fails.write_text("1")
        with caplog.at_level(logging.WARNING, logger="encbench.engine.task_process"):
            assert proc.call("math:hypot", (3.0, 4.0), 30) == 5.0
        assert "task process did not start: it exited with status 7" in caplog.text
        assert "; starting another task process" in caplog.text and fails.read_text() == "0"
        proc.kill()
        fails.write_text("2")
        with pytest.raises(RuntimeError, match=r"^task process did not start: it exited with status 7"):
            proc.call("math:hypot", (3.0, 4.0), 30)
        assert fails.read_text() == "0"
    finally:
        proc.kill()
