"""Task processes: child Python processes that run tasks one at a time (:mod:`encbench.engine.child`).

A task that overruns its timeout is killed with its process, which is then replaced; so is one
that dies (out of memory under its address-space limit, a crash in C code). Each task process
leads its own process group, so a kill also ends whatever the task started (e.g. processes an
encoder forked), and its stderr is read through a pipe of which only the last
:data:`STDERR_TAIL` bytes per task reach the log. The local pool
(:mod:`encbench.engine.local_pool`), each Dask worker thread (:mod:`encbench.engine.dask_executor`)
and a custom encoder's pre-run check (:mod:`encbench.engine.custom_check`) drive them.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from multiprocessing.connection import Connection

from encbench.engine.budget import OVER_BUDGET, size_text
from encbench.engine.child import CACHE_SIZE
from encbench.engine.protocol import Payload, unfinished_rows
from encbench.engine.task import Task
from encbench.resources import subprocess_cwd, subprocess_env

log = logging.getLogger(__name__)


#: seconds a new task process may take to import its libraries.
STARTUP_TIMEOUT = 300.0
#: bytes of a task process's stderr kept per task (older output is dropped and counted).
STDERR_TAIL = 64 * 1024
#: characters of that output quoted in the error of a task whose process died.
QUOTED_TAIL = 300
_CHILD_MAIN = "import sys; from encbench.engine.child import main; sys.exit(main(sys.argv[1:]))"


def timeout_message(timeout: float) -> str:
    return f"task exceeded the timeout of {timeout:g} s and was killed"


def exit_reason(code: int | None) -> str:
    """How a child process ended, from its return code: ``exited with status 3``, ``was killed
    by signal 9 (SIGKILL), e.g. out of memory``."""
    if code is None:
        return "ended without an exit status"
    if code < 0:
        try:
            name = f" ({signal.Signals(-code).name})"
        except ValueError:
            name = ""
        hint = ", e.g. out of memory" if -code == signal.SIGKILL else ""
        return f"was killed by signal {-code}{name}{hint}"
    return f"exited with status {code}"


class ChildFailed(RuntimeError):
    """A call in a task process did not return: it died or overran its timeout.

    Attributes
    ----------
    code : int or None
        The process's return code (None after a timeout).
    timed_out : bool
    output : str
        The last of what it wrote to stderr.
    """

    def __init__(self, message: str, *, code: int | None = None, timed_out: bool = False, output: str = ""):
        super().__init__(message)
        self.code, self.timed_out, self.output = code, timed_out, output


class _StderrTail:
    """Drain a child's stderr pipe in a thread, keeping only the last :data:`STDERR_TAIL` bytes.

    Every read happens under the lock, from a non-blocking pipe: :meth:`take` first reads what
    the pipe still holds, so output written before a task's reply is counted with that task
    however late the thread is scheduled, and in order.
    """

    def __init__(self, fd: int):
        self._fd = fd
        os.set_blocking(fd, False)
        self._lock = threading.Lock()
        self._buffer = bytearray()
        self._total = 0
        self._eof = False
        self._thread = threading.Thread(target=self._drain, name="task-process-stderr", daemon=True)
        self._thread.start()

    def _read_available(self) -> None:
        """Append what the pipe holds now (the lock is held); note its end."""
        while not self._eof:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                self._eof = True
                return
            if not chunk:
                self._eof = True
                return
            self._buffer += chunk
            self._total += len(chunk)
            if len(self._buffer) > STDERR_TAIL:
                del self._buffer[:-STDERR_TAIL]

    def _drain(self) -> None:
        while True:
            try:
                select.select([self._fd], [], [])
            except (OSError, ValueError):
                return
            with self._lock:
                self._read_available()
                if self._eof:
                    return

    def take(self) -> tuple[str, int]:
        """What was kept since the last call, and how many bytes were written meanwhile."""
        with self._lock:
            self._read_available()
            data, total = bytes(self._buffer), self._total
            self._buffer.clear()
            self._total = 0
        return data.decode("utf-8", errors="replace"), total

    def close(self) -> tuple[str, int]:
        """Wait briefly for the end of the pipe (the process is gone), close it; the last output."""
        self._thread.join(timeout=2.0)
        text = self.take()
        with self._lock:
            self._eof = True
            with contextlib.suppress(OSError):
                os.close(self._fd)
        return text


def _child_env() -> dict:
    env = subprocess_env()
    # One thread per task process, as the study ran (OMP/BLAS threads would oversubscribe the
    # cores the pool already uses, and thread counts can change floating-point results).
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        env[var] = "1"
    return env


class TaskProcess:
    """A child process that runs tasks one at a time; killable, and restartable after a kill.

    Parameters
    ----------
    die_with_parent : bool
        Ask the kernel to kill the child when the starting thread ends (only safe when that is
        the main thread).
    memory_limit : int, optional
        Bytes of address space the child may use (``RLIMIT_AS``); beyond it allocations fail.
    warm : dict, optional
        What the child imports before it is ready: :func:`encbench.engine.protocol.imports_of`
        of the tasks it will run. None: scikit-learn only; the child still imports what a task
        needs before that task's clocks start (inside its timeout).
    """

    def __init__(self, *, die_with_parent: bool = True, memory_limit: int | None = None,
                 warm: Mapping | None = None):
        self.die_with_parent = die_with_parent
        self.memory_limit = memory_limit
        self.warm = warm
        self.proc: subprocess.Popen | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None
        self._stderr: _StderrTail | None = None
        self._cached: OrderedDict = OrderedDict()  # mirror of the child's payload cache
        self.task: Task | None = None
        self.started_at = 0.0
        self.deadline = float("inf")
        self.started_before = False  # a child of this object was ready once

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def launch(self) -> None:
        """Start the child without waiting for it to be ready (see :meth:`wait_ready`)."""
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                # -c rather than -m: runpy would warn that the package imported the module first
                [sys.executable, "-c", _CHILD_MAIN, str(to_child_r), str(from_child_w),
                 str(os.getpid()), "1" if self.die_with_parent else "0", str(self.memory_limit or 0),
                 json.dumps(self.warm or {})],
                pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=err_w, env=_child_env(), cwd=subprocess_cwd(),
                # its own process group: a kill reaches what the task forks (Ctrl-C does not,
                # the parent decides what happens to its tasks)
                start_new_session=True,
            )
        except BaseException:
            os.close(err_r)
            raise
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
            os.close(err_w)
        self._send = Connection(to_child_w, readable=False)
        self._recv = Connection(from_child_r, writable=False)
        self._stderr = _StderrTail(err_r)
        self._cached.clear()

    def wait_ready(self) -> None:
        """Wait until the child has imported its libraries (not counted in any timeout)."""
        ok = False
        try:
            if self._recv.poll(STARTUP_TIMEOUT):
                ok = self._recv.recv()[0] == "ready"
        except (EOFError, OSError):
            pass
        if not ok:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)  # it is exiting: let it report its own status
            output, total = self._close_stderr()
            self._log_stderr("task process start-up", output, total)
            code = self.kill()
            raise RuntimeError(f"task process did not start: it {exit_reason(code)}; its last output: "
                               f"{output[-QUOTED_TAIL * 4:].strip()!r}; check that `{sys.executable} -c "
                               f"'import encbench.engine.child'` works")
        self.started_before = True
        self.log_output("task process start-up")

    def log_output(self, what: str) -> str:
        """Log what the child wrote to stderr since the last call (at most :data:`STDERR_TAIL`
        bytes, with how much was dropped); return it."""
        if self._stderr is None:
            return ""
        text, total = self._stderr.take()
        self._log_stderr(what, text, total)
        return text

    def _close_stderr(self) -> tuple[str, int]:
        """End the stderr reader (the process is gone or going): its last output, bytes written."""
        if self._stderr is None:
            return "", 0
        stderr, self._stderr = self._stderr, None
        return stderr.close()

    @staticmethod
    def _log_stderr(what: str, text: str, total: int) -> None:
        if total:
            dropped = f", the first {total - len(text.encode())} bytes dropped" if total > STDERR_TAIL else ""
            log.warning("%s wrote %d bytes to stderr%s:\n%s", what, total, dropped, text.rstrip())

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def restart(self) -> None:
        """Start the child, or replace one that died or was killed. A replacement that does not
        start gets one more attempt: the first start proved the environment, so this is a
        passing failure (a machine short of memory or CPU for a moment) that must not end a run
        of hours; a second failure raises, as a first start that fails does."""
        self.kill()
        if not self.started_before:
            self.start()
            return
        try:
            self.start()
        except RuntimeError as exc:
            log.warning("%s; starting another task process", exc)
            self.kill()
            self.start()

    def kill(self) -> int | None:
        """Kill the child and its process group at once; return its exit code."""
        code = None
        if self.proc is not None:
            # the group first, while its leader (alive or not yet reaped) still holds the id
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            code = self.proc.wait()
        for conn in (self._send, self._recv):
            if conn is not None:
                conn.close()
        self._log_stderr("task process", *self._close_stderr())
        self.proc = self._send = self._recv = None
        self._cached.clear()
        self.task = None
        return code

    def _ended(self) -> tuple[int | None, str]:
        """Exit code and last output of a child whose pipe closed (it exits on its own; then its
        group is killed)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)   # the status it exits with, not the SIGKILL of kill()
        output, total = self._close_stderr()
        self._log_stderr("task process", output, total)
        return self.kill(), output

    def stop(self) -> None:
        """Ask an idle child to exit; kill it if it is busy or does not exit within 5 s."""
        if self.proc is None:
            return
        if self.task is None and self.alive:
            try:
                self._send.send(None)
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    # -- tasks -----------------------------------------------------------------------------------
    def submit(self, task: Task, payload: Payload, timeout: float) -> None:
        """Send a task (and its dataset, unless the child holds it) and start its clock."""
        if not self.alive:
            self.restart()
        token = payload.token
        fresh = token not in self._cached
        try:
            self._send.send((task, token, payload if fresh else None))
        except (BrokenPipeError, OSError):  # the child died while idle: one restart
            self.restart()
            self._send.send((task, token, payload))
        self._cached[token] = True
        self._cached.move_to_end(token)
        while len(self._cached) > CACHE_SIZE:
            self._cached.popitem(last=False)
        self.task = task
        self.started_at = time.monotonic()
        self.deadline = self.started_at + timeout

    def fileno(self) -> int:
        return self._recv.fileno()

    def receive(self) -> list:
        """The rows of the task in flight (raises EOFError if the child died)."""
        kind, rows = self._recv.recv()
        if kind != "rows":
            raise RuntimeError(f"unexpected message from task process: got {kind!r}")
        if self.task is not None:
            self.log_output(f"task {self.task.name}")
        self.task = None
        return rows

    def died(self, task: Task) -> list:
        """Failed rows for a task whose process died, after cleaning up; the process is gone."""
        seconds = time.monotonic() - self.started_at
        code, output = self._ended()
        quoted = output.strip()[-QUOTED_TAIL:]
        said = f"; its last output: {quoted!r}" if quoted else ""
        hint = (" (sys.exit or os._exit in the encoder, model or metric?)"
                if code is not None and code > 0 else "")
        if self.memory_limit and code is not None and code < 0:
            # an allocation that fails in C or C++ code may abort instead of raising
            hint = (f" under its memory limit of {size_text(self.memory_limit)}: probably {OVER_BUDGET} "
                    f"(raise --memory-budget, run fewer --workers, or leave the encoder out)")
        return unfinished_rows(task, "failed", f"task process {exit_reason(code)}{hint}{said}",
                               seconds=seconds)

    def call(self, target: str, args: tuple, timeout: float):
        """Run ``module:function(*args)`` in the child, bounded by ``timeout`` seconds; its value.

        Raises
        ------
        ChildFailed
            If the call overran ``timeout`` (the process group is killed) or the process died
            (e.g. past its memory limit, or ``sys.exit`` in the call), with its exit status.
        ValueError
            The call's own exception, as text.
        """
        if not self.alive:
            self.restart()
        self._send.send(("call", target, args))
        try:
            finished = self._recv.poll(timeout)
        except (EOFError, OSError):
            finished = True
        if not finished:
            output = self.log_output(f"call {target}")
            self.kill()
            raise ChildFailed(f"did not finish within {timeout:g} s and was stopped", timed_out=True,
                              output=output)
        try:
            kind, value = self._recv.recv()
        except (EOFError, OSError):
            code, output = self._ended()
            raise ChildFailed(f"its process {exit_reason(code)}", code=code, output=output) from None
        self.log_output(f"call {target}")
        if kind == "error":
            raise ValueError(value)
        return value

    def run(self, task: Task, payload: Payload, timeout: float) -> list:
        """Run one task to completion or timeout (blocking); return its rows."""
        self.submit(task, payload, timeout)
        try:
            finished = self._recv.poll(timeout)
        except (EOFError, OSError):
            finished = True
        if not finished:
            elapsed = time.monotonic() - self.started_at
            self.log_output(f"task {task.name}")
            self.kill()
            return unfinished_rows(task, "timeout", timeout_message(timeout), seconds=elapsed)
        try:
            return self.receive()
        except (EOFError, OSError):
            return self.died(task)
