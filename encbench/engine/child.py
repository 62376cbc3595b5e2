"""The task process: ``main([FD_IN, FD_OUT, PARENT_PID, DIE_WITH_PARENT, MEMORY_LIMIT, WARM])``.

:class:`encbench.engine.task_process.TaskProcess` starts it as
``python -c "from encbench.engine.child import main; ..." FD_IN FD_OUT PID 0|1 BYTES WARM``.

Before it says ``ready`` the process imports what its tasks use (``WARM``, the JSON of
:func:`encbench.engine.protocol.imports_of` of the tasks the parent will send; none of the
store, the grid or DuckDB), and before each task what that task adds, if anything: a task's
clocks (``time``, ``encode_time``) never include import time.

The process receives ``(task, token, payload or None)`` messages on ``FD_IN`` and answers each with
``("rows", rows)`` on ``FD_OUT``; ``None`` or end-of-file ends it. Payloads are cached (least
recently used, :data:`CACHE_SIZE` datasets) under their token; the parent mirrors the cache so it
sends each dataset once. A ``("call", "module:function", args)`` message runs that function
(e.g. the pre-run check of a custom encoder) and answers ``("result", value)`` or
``("error", text)``. The parent kills this process (its whole process group) when a task or a
call overruns its timeout; ``MEMORY_LIMIT`` (bytes, 0 for none) caps its address space.
"""
from __future__ import annotations

import ctypes
import importlib
import json
import logging
import os
import resource
import signal
import sys
import warnings
from collections import OrderedDict
from multiprocessing.connection import Connection

from encbench.engine.budget import is_memory_error, over_budget_error
from encbench.engine.protocol import MAX_ERROR_CHARS, imports_of, run_task, unfinished_rows, warm_up

#: datasets a task process keeps in memory (the parent's mirror uses the same number).
CACHE_SIZE = 2
#: this process's address-space limit in bytes (``MEMORY_LIMIT``; 0: none)
_memory_limit = 0


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (a killed runner leaves no orphans)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:  # not fatal: end-of-file on the pipe also ends the process
        pass


def serve(conn_in: Connection, conn_out: Connection, parent_pid: int | None = None,
          warm: dict | None = None) -> None:
    """Answer task messages until ``None`` or end-of-file; ``warm``: what to import first
    (:func:`encbench.engine.protocol.imports_of`; None: every model)."""
    warnings.simplefilter("ignore")
    warm_up(warm)  # heavy imports before 'ready': the parent starts task clocks after it

    conn_out.send(("ready", os.getpid()))
    if parent_pid is not None and os.getppid() != parent_pid:
        return  # the parent died while we were importing
    cache: OrderedDict = OrderedDict()
    while True:
        try:
            message = conn_in.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        if message[0] == "call":
            reply = _call(*message[1:])
            try:
                conn_out.send(reply)
            except (BrokenPipeError, OSError):
                return
            continue
        task, token, payload = message
        if payload is not None:
            cache[token] = payload
        data = cache.get(token)
        if data is not None:
            cache.move_to_end(token)
            while len(cache) > CACHE_SIZE:
                cache.popitem(last=False)
        if data is None:
            rows = unfinished_rows(task, "failed", f"task process has no data for dataset {task.dataset!r}")
        else:
            warm_up(imports_of([task]))  # what the start-up left out (e.g. a Dask worker's next run)
            rows = _over_budget(run_task(task, data))
        try:
            conn_out.send(("rows", rows))
        except (BrokenPipeError, OSError):
            return


def _over_budget(rows: list[dict]) -> list[dict]:
    """Rows whose task ran out of this process's memory limit, failed "over the memory budget"
    with what it raised (:func:`encbench.engine.budget.over_budget_error`)."""
    if not _memory_limit:
        return rows
    for row in rows:
        if row.get("status") == "failed" and is_memory_error(row.get("error")):
            text = over_budget_error(_memory_limit, row["error"])
            row["error"] = text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 3] + "..."
    return rows


def _call(target: str, args: tuple) -> tuple[str, object]:
    """Run ``module:function(*args)``: ``("result", value)``, or ``("error", text)`` if it raised
    an exception (``SystemExit`` is not caught: the process exits with its status)."""
    module, _, name = target.partition(":")
    try:
        return "result", getattr(importlib.import_module(module), name)(*args)
    except Exception as exc:  # noqa: BLE001 - sent to the parent, which raises it
        return "error", f"{type(exc).__name__}: {exc}"


def _limit_memory(limit: int) -> None:
    """Cap this process's address space at ``limit`` bytes (allocations beyond it fail)."""
    global _memory_limit
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    _memory_limit = limit


def main(argv: list[str]) -> int:
    """``FD_IN FD_OUT PARENT_PID DIE_WITH_PARENT [MEMORY_LIMIT [WARM]]``; DIE_WITH_PARENT is 1 or 0,
    WARM the JSON of what the tasks import (without it: every registered model).

    Linux delivers the parent-death signal when the *thread* that started the process ends, so
    it is only asked for by a parent that starts task processes from its main thread.
    """
    if len(argv) not in (4, 5, 6):
        raise ValueError(f"task process arguments are FD_IN FD_OUT PARENT_PID 0|1 [BYTES [WARM]]: got {argv!r}")
    if argv[3] == "1":
        _die_with_parent()
    if len(argv) >= 5 and int(argv[4]) > 0:
        _limit_memory(int(argv[4]))
    # Ctrl-C reaches the whole process group; the parent decides what happens to its tasks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    conn_in = Connection(int(argv[0]), writable=False)
    conn_out = Connection(int(argv[1]), readable=False)
    serve(conn_in, conn_out, int(argv[2]), json.loads(argv[5]) if len(argv) == 6 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
