"""The run queue between the app and the single writer (DESIGN.md section 3).

The app never writes the database. It drops *requests* (one JSON file each, written atomically)
into a queue directory beside the database; one worker process drains them and is the only
writer. Layout of ``<db dir>/queue/``::

    pending/<stamp>-<id>.json   waiting requests, oldest first
    active/<stamp>-<id>.json    the request the worker is on (left here if the worker dies, and
                                picked up first when a worker starts again)
    done/<stamp>-<id>.json      finished requests, with their outcome
    cancel/<run_id>             a cancel flag for a run (checked by the worker between tasks)
    worker.lock                 flock held by the running worker for its lifetime
    worker.log                  the worker's log

Request kinds: ``run`` (a grid; re-queueing the same grid resumes it) and ``delete`` (a run).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from encbench.resources import subprocess_cwd, subprocess_env
from encbench.store.db import default_db_path

KINDS = ("run", "delete")


def queue_dir(db_path: Path | str | None = None) -> Path:
    """The queue directory of a database: ``<db dir>/queue``."""
    db_path = Path(db_path) if db_path is not None else default_db_path()
    return db_path.parent / "queue"


def upload_dir(db_path: Path | str | None = None) -> Path:
    """Where uploaded datasets are kept, by content hash: ``<db dir>/uploads/<sha256><ext>``."""
    db_path = Path(db_path) if db_path is not None else default_db_path()
    return db_path.parent / "uploads"


def _atomic_write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(payload, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@dataclass(frozen=True)
class Request:
    """One queued request, as read back from its file."""

    path: Path
    kind: str
    request_id: str
    created_at: float
    payload: dict = field(default_factory=dict)
    outcome: str | None = None      # done requests: done, failed or cancelled
    error: str | None = None        # done requests that failed: why
    waiting: dict | None = None     # active requests held up (e.g. the database is busy): why, since

    @property
    def run_id(self) -> str | None:
        return self.payload.get("run_id")


class RunQueue:
    """File-based queue of run requests for one database."""

    def __init__(self, db_path: Path | str | None = None):
        self.db_path = Path(db_path) if db_path is not None else default_db_path()
        self.root = queue_dir(self.db_path)
        for sub in ("pending", "active", "done", "cancel"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    # -- producing -----------------------------------------------------------------------------
    def submit(self, kind: str, payload: dict) -> Request:
        """Write a request atomically into ``pending/`` and return it."""
        if kind not in KINDS:
            raise ValueError(f"request kind must be one of {KINDS}: got {kind!r}")
        created = time.time()
        request_id = uuid.uuid4().hex[:12]
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(created))
        name = f"{stamp}-{int(created * 1e6) % 10**6:06d}-{request_id}.json"
        path = self.root / "pending" / name
        if kind == "run" and payload.get("run_id"):
            self.clear_cancel(payload["run_id"])  # re-queueing resumes a cancelled run
        _atomic_write_json(path, {"kind": kind, "request_id": request_id, "created_at": created,
                                  "payload": payload})
        return Request(path, kind, request_id, created, payload)

    def cancel(self, run_id: str) -> None:
        """Flag a run as cancelled: a pending request for it is dropped, a running one stops."""
        flag = self.root / "cancel" / run_id
        flag.touch()
        for request in self.pending():
            if request.run_id == run_id:
                self._finish(request, outcome="cancelled")

    def clear_cancel(self, run_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.root / "cancel" / run_id).unlink()

    def is_cancelled(self, run_id: str) -> bool:
        return (self.root / "cancel" / run_id).exists()

    # -- consuming -----------------------------------------------------------------------------
    def _read(self, path: Path) -> Request | None:
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            # A corrupt request is moved aside with its error rather than blocking the queue.
            bad = self.root / "done" / (path.name + ".invalid")
            os.replace(path, bad)
            bad.with_suffix(".error").write_text(f"unreadable request {path.name!r}: {exc}")
            return None
        return Request(path, data["kind"], data["request_id"], data["created_at"], data.get("payload", {}),
                       data.get("outcome"), data.get("error"), data.get("waiting"))

    def _list(self, sub: str) -> list[Request]:
        requests = []
        for path in sorted((self.root / sub).glob("*.json")):
            request = self._read(path)
            if request is not None:
                requests.append(request)
        return requests

    def pending(self) -> list[Request]:
        return self._list("pending")

    def active(self) -> list[Request]:
        return self._list("active")

    def done(self) -> list[Request]:
        return self._list("done")

    def claim_next(self) -> Request | None:
        """Move the next request to ``active/`` and return it (active ones first: a dead worker's)."""
        leftover = self.active()
        if leftover:
            return leftover[0]
        for request in self.pending():
            target = self.root / "active" / request.path.name
            try:
                os.replace(request.path, target)
            except FileNotFoundError:  # cancelled meanwhile
                continue
            return Request(target, request.kind, request.request_id, request.created_at, request.payload)
        return None

    def _finish(self, request: Request, *, outcome: str, error: str | None = None) -> None:
        data = {"kind": request.kind, "request_id": request.request_id, "created_at": request.created_at,
                "payload": request.payload, "outcome": outcome, "error": error, "finished_at": time.time()}
        _atomic_write_json(self.root / "done" / request.path.name, data)
        with contextlib.suppress(FileNotFoundError):
            request.path.unlink()

    def set_waiting(self, request: Request, reason: str | None, *, attempt: int = 0,
                    retry_in: float | None = None) -> Request:
        """Record on an active request why it waits (``None``: it no longer waits).

        The request file is rewritten atomically with a ``waiting`` entry (reason, since, attempt,
        next retry), which the Runs page shows as the status "waiting for the database".
        """
        waiting = None
        if reason is not None:
            since = (request.waiting or {}).get("since", time.time())
            waiting = {"reason": reason, "since": since, "attempt": attempt,
                       "retry_at": None if retry_in is None else time.time() + retry_in}
        data = {"kind": request.kind, "request_id": request.request_id, "created_at": request.created_at,
                "payload": request.payload}
        if waiting is not None:
            data["waiting"] = waiting
        if request.path.exists():
            _atomic_write_json(request.path, data)
        return Request(request.path, request.kind, request.request_id, request.created_at,
                       request.payload, waiting=waiting)

    def complete(self, request: Request, *, outcome: str = "done", error: str | None = None) -> None:
        """Record the outcome of an active request and move it to ``done/``."""
        self._finish(request, outcome=outcome, error=error)

    # -- the worker process ----------------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        return self.root / "worker.lock"

    @property
    def log_path(self) -> Path:
        return self.root / "worker.log"

    def worker_running(self) -> bool:
        """True when some process holds the worker lock."""
        with open(self.lock_path, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
            return False

    def worker_pid(self) -> int | None:
        try:
            text = self.lock_path.read_text().strip()
        except FileNotFoundError:
            return None
        return int(text) if text.isdigit() and self.worker_running() else None

    def ensure_worker(self, *, idle_exit: float | None = None) -> bool:
        """Start a detached worker if none is running; return True when one was started.

        The worker runs in its own session, so it outlives page reloads, browser closes and the
        Streamlit process itself. Two callers racing both spawn; the loser exits at once because
        it cannot take the lock. ``idle_exit`` defaults to ``$ENCBENCH_WORKER_IDLE_EXIT`` or 300 s.
        """
        if self.worker_running():
            return False
        if idle_exit is None:
            idle_exit = float(os.environ.get("ENCBENCH_WORKER_IDLE_EXIT", "300"))
        env = subprocess_env(dict(os.environ, ENCBENCH_DB=str(self.db_path)))
        with open(self.log_path, "ab") as log:
            subprocess.Popen(
                [sys.executable, "-m", "encbench", "worker", "--db", str(self.db_path),
                 "--idle-exit", str(idle_exit)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=subprocess_cwd(), env=env, start_new_session=True,
            )
        return True
