"""Where tasks run: in-process, on a pool of local task processes, or on a Dask cluster.

Every executor has ``start()`` (connect; raises ValueError if it cannot), ``close()``, and
``run(tasks, payloads, timeout)``, a generator that yields an :class:`Outcome` whenever a task
finishes and ``None`` about every :data:`TICK` seconds while waiting, so the single writer (the
caller) can check for cancellation and publish snapshots. Closing the generator stops the work in
flight.

Tasks run in *task processes* (:class:`TaskProcess`, a child Python process executing
:mod:`encbench.engine.child`): a task that overruns its timeout is killed with its process, which
is then replaced. Locally the parent drives a pool of them; on Dask each worker thread drives its
own, so timeouts are enforced on the cluster too. Each task process leads its own process group,
so a kill also ends whatever the task started (e.g. processes an encoder forked), and its stderr
is read through a pipe of which only the last :data:`STDERR_TAIL` bytes per task reach the log.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from encbench import __version__
from encbench.engine.budget import OVER_BUDGET, size_text
from encbench.engine.child import CACHE_SIZE
from encbench.engine.task import Task
from encbench.engine.protocol import Payload, describe, imports_of, run_task, unfinished_rows
from encbench.resources import checkout_root, subprocess_cwd, subprocess_env

log = logging.getLogger(__name__)

#: seconds between ``None`` ticks while an executor waits for results.
TICK = 0.5
#: seconds a new task process may take to import its libraries.
STARTUP_TIMEOUT = 300.0
#: bytes of a task process's stderr kept per task (older output is dropped and counted).
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


STDERR_TAIL = 64 * 1024
#: characters of that output quoted in the error of a task whose process died.
QUOTED_TAIL = 300
_CHILD_MAIN = "import sys; from encbench.engine.child import main; sys.exit(main(sys.argv[1:]))"


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
            self.kill()
            self.start()
        token = payload.token
        fresh = token not in self._cached
        try:
            self._send.send((task, token, payload if fresh else None))
        except (BrokenPipeError, OSError):  # the child died while idle: one restart
            self.kill()
            self.start()
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
            self.kill()
            self.start()
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


# -- executors -------------------------------------------------------------------------------------
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
        proc.kill()
        proc.start()
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


#: modules a Dask worker (and the scheduler, which unpickles the task graph) must import.
CLUSTER_MODULES = ("encbench", "numpy", "pandas", "sklearn", "scipy", "category_encoders", "lightgbm",
                   "skrub", "skopt")


def _make_probe():
    """A function describing the environment it runs in (pickled by value: it must run even
    where ``encbench`` cannot be imported, to say so)."""

    def probe(modules):
        import hashlib
        import importlib
        import pathlib
        import platform
        import sys

        found = {}
        for name in modules:
            try:
                module = importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                found[name] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            found[name] = {"version": str(getattr(module, "__version__", "?"))}
            if name == "encbench":  # same version string, other code? compare the sources
                digest = hashlib.sha256()
                root = pathlib.Path(module.__file__).parent
                for path in sorted(root.rglob("*.py")):
                    digest.update(str(path.relative_to(root)).encode())
                    digest.update(path.read_bytes())
                found[name]["sources"] = digest.hexdigest()[:16]
        return {"python": platform.python_version(), "executable": sys.executable, "modules": found}

    return probe


def environment_problems(local: dict, remote: Mapping[str, dict]) -> tuple[list[str], list[str]]:
    """Compare probe results of cluster processes with this process's: (errors, warnings).

    Errors: a module that does not import, another encbench (version or sources), another Python
    minor version (pickles may not load). Warnings: other versions of the other libraries.
    """
    errors, warnings = [], []
    py = ".".join(local["python"].split(".")[:2])
    for where, info in remote.items():
        if isinstance(info, BaseException) or not isinstance(info, Mapping):
            errors.append(f"{where}: the environment check failed: {info!r}")
            continue
        if ".".join(info["python"].split(".")[:2]) != py:
            errors.append(f"{where}: Python {info['python']} ({info['executable']}), this process "
                          f"runs {local['python']}")
        for name, mine in local["modules"].items():
            theirs = info["modules"].get(name)
            if theirs is None:              # not probed there (custom encoders: workers only)
                continue
            if "error" in theirs:
                errors.append(f"{where}: cannot import {name} ({theirs['error']}) in {info['executable']}")
            elif name == "encbench" and (theirs["version"], theirs.get("sources")) != (
                    mine["version"], mine.get("sources")):
                errors.append(f"{where}: encbench {theirs['version']} (sources {theirs.get('sources')}), "
                              f"this process has {mine['version']} (sources {mine.get('sources')})")
            elif theirs["version"] != mine["version"]:
                warnings.append(f"{where}: {name} {theirs['version']}, this process has {mine['version']}")
    return errors, warnings


def check_cluster(client, *, wait_for_workers: float = 10.0, extra_modules: Sequence[str] = ()) -> None:
    """Stop before any task is sent if the cluster cannot run encbench's tasks.

    Every worker and the scheduler run a small probe; a process that cannot import encbench or
    a library it needs, or holds another encbench, makes this raise one ValueError listing
    what is missing where and how to install it. Other library versions are logged warnings.
    ``extra_modules`` (the modules of a grid's custom encoders) must import on every worker
    too; the scheduler only routes tasks and is not asked for them.
    """
    extra_modules = tuple(m for m in dict.fromkeys(extra_modules) if m not in CLUSTER_MODULES)
    probe = _make_probe()
    try:
        client.wait_for_workers(1, timeout=wait_for_workers)
    except (TimeoutError, OSError) as exc:
        raise ValueError(f"the Dask scheduler has no workers (waited {wait_for_workers:g} s): {exc}; "
                         f"start some with `dask worker <scheduler address>`") from None
    for _ in range(3):
        # the probes import every library once per process (seconds each): the workers', the
        # scheduler's and this process's run at the same time
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            on_workers = pool.submit(client.run, probe, CLUSTER_MODULES + extra_modules, on_error="return")
            on_scheduler = pool.submit(client.run_on_scheduler, probe, CLUSTER_MODULES)
            local = probe(CLUSTER_MODULES + extra_modules)
            remote = {f"worker {addr}": info for addr, info in dict(on_workers.result()).items()}
            try:
                remote["scheduler"] = on_scheduler.result()
            except Exception as exc:  # noqa: BLE001 - reported with the rest
                remote["scheduler"] = exc
        errors, warnings = environment_problems(local, remote)
        # Nodes sharing one source tree (an editable install on a shared disk) hash it at
        # slightly different moments: a file saved in between looks like another encbench.
        # Probe again before calling that a mismatch; real differences persist.
        if not errors or not all("(sources " in e for e in errors):
            break
        log.info("Dask cluster: encbench sources differ, probing again (files being edited?)")
        time.sleep(1.0)
    for message in warnings:
        log.warning("Dask cluster: %s", message)
    if errors:
        listed = "\n".join(f"- {e}" for e in errors)
        custom = [m for m in extra_modules if any(isinstance(info, Mapping) and "error" in info["modules"].get(m, {})
                                                  for info in remote.values())]
        hint = (f"Custom encoder module(s) {', '.join(custom)}: install their package in every "
                f"worker's environment, or put them on the workers' PYTHONPATH. " if custom else "")
        raise ValueError(
            f"the Dask cluster cannot run encbench tasks ({len(errors)} problems):\n{listed}\n"
            f"{hint}{install_hint(local['python'])}; then restart the scheduler and the workers "
            f"(docs/user-guide.md: 'Running on a cluster')")


def install_hint(python: str) -> str:
    """How to put this encbench on a cluster node (a checkout's commands, or the wheel's)."""
    root = checkout_root()
    if root is not None:
        how = (f"`pip install -r {root / 'requirements.txt'}` and `pip install --no-deps -e {root}` "
               f"(or a wheel built by `pip wheel --no-deps {root}`)")
    else:
        how = (f"`pip install encbench-{__version__}-py3-none-any.whl` (the wheel this process was "
               f"installed from, built by `make wheel` in a checkout)")
    return (f"Install the same encbench in every worker's and the scheduler's environment, with "
            f"Python {python}: {how}")


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
        from distributed import Client

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
        import uuid
        from concurrent.futures import CancelledError

        from distributed import KilledWorker, as_completed

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


def make_executor(workers: int = 1, scheduler=None, *, extra_modules: Sequence[str] = (),
                  memory_limit: int | None = None):
    """The executor for ``workers`` (0 = in-process) or a Dask ``scheduler`` (whose workers must
    import ``extra_modules``, the modules of custom encoders, as well as encbench).

    ``memory_limit``: bytes of address space of each task process, locally and on the cluster's
    workers (:func:`encbench.engine.budget.task_memory_limit`); the in-process executor, for
    debugging, runs without one.
    """
    if scheduler is not None:
        return DaskExecutor(scheduler, extra_modules=extra_modules, memory_limit=memory_limit)
    if workers == 0:
        return InlineExecutor()
    return LocalExecutor(workers, memory_limit=memory_limit)
