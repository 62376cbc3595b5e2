"""Task processes: exit statuses named as they are, a whole process group killed on timeout,
bounded calls, and stderr kept to its last STDERR_TAIL bytes per task."""
from __future__ import annotations

import logging
import signal
import time
from pathlib import Path

import pytest

from encbench.engine.executors import STDERR_TAIL, ChildFailed, TaskProcess, exit_reason


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


@pytest.fixture()
def proc():
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
    caplog.set_level(logging.WARNING, logger="encbench.engine.executors")
    n = 3 * STDERR_TAIL + 11
    assert proc.call("os:system", (f"head -c {n - 4} /dev/zero | tr '\\0' x >&2; printf 'end\\n' >&2",), 30) == 0
    (record,) = [r for r in caplog.records if "bytes to stderr" in r.getMessage()]
    message = record.getMessage()
    assert message.startswith(f"call os:system wrote {n} bytes to stderr, the first {n - STDERR_TAIL} bytes dropped:")
    body = message.split(":\n", 1)[1]
    assert body == "x" * (STDERR_TAIL - 4) + "end"                  # the tail, without the newline
