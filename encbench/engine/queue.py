"""The run queue between the app and the single writer (docs/ARCHITECTURE.md, Results database).

The app never writes the database. It drops *requests* (one JSON file each, written atomically)
into a queue directory beside the database; one worker process drains them and is the only
writer. Layout of ``<db dir>/queue/``::

    pending/<stamp>-<id>.json   waiting requests, oldest first
    active/<stamp>-<id>.json    the request the worker is on (left here if the worker dies, and
                                picked up first when a worker starts again)
    done/<stamp>-<id>.json      finished requests, with their outcome
    quarantine/<name>           files that are not requests (invalid JSON, no ``kind``, ...), moved
                                aside with ``<name>.reason`` saying why, so no reader trips on them
    cancel/<run_id>             a cancel flag for a run (checked by the worker between tasks)
    worker.lock                 flock held by the running worker for its lifetime
    worker.log                  the worker's log

Request kinds: ``run`` (a grid; re-queueing the same grid resumes it) and ``delete`` (a run).

Each claim of a request counts an *attempt* in its file. A request left in ``active/`` was being
handled by a worker that died; the next worker takes it again, unless :data:`MAX_ATTEMPTS`
workers already died on it: then it is failed with that reason (and the stage it was in), so a
request that kills its worker (e.g. out of memory) cannot block the queue.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from encbench.resources import subprocess_cwd, subprocess_env
from encbench.store.db import PRIVATE_DIR, PRIVATE_FILE, default_db_path, make_private_dirs, open_private

log = logging.getLogger(__name__)

KINDS = ("run", "delete")
#: workers that may die on one request before it is failed instead of taken again.
MAX_ATTEMPTS = 3


def queue_dir(db_path: Path | str | None = None) -> Path:
    """The queue directory of a database: ``<db dir>/queue``."""
    db_path = Path(db_path) if db_path is not None else default_db_path()
    return db_path.parent / "queue"


def upload_dir(db_path: Path | str | None = None) -> Path:
    """Where uploaded datasets are kept, by content hash: ``<db dir>/uploads/<sha256><ext>``."""
    db_path = Path(db_path) if db_path is not None else default_db_path()
    return db_path.parent / "uploads"


def _atomic_write_json(path: Path, payload: dict) -> None:
    make_private_dirs(path.parent)
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
    attempts: int = 0               # workers that took it (active requests)
    stage: str | None = None        # what the worker was doing with it (active requests)

    @property
    def run_id(self) -> str | None:
        return self.payload.get("run_id")

    def _data(self) -> dict:
        """The request file's content (without the outcome of a finished request)."""
        data = {"kind": self.kind, "request_id": self.request_id, "created_at": self.created_at,
                "payload": self.payload}
        if self.attempts:
            data["attempts"] = self.attempts
        if self.stage is not None:
            data["stage"] = self.stage
        if self.waiting is not None:
            data["waiting"] = self.waiting
        return data


def request_problem(data) -> str | None:
    """Why parsed JSON is not a request (``None``: it is one)."""
    if not isinstance(data, dict):
        return f"a request is a JSON object: got {type(data).__name__}"
    kind = data.get("kind")
    if kind not in KINDS:
        return (f"a request has a 'kind' of {', '.join(KINDS)}: got {kind!r}" if "kind" in data
                else f"a request has a 'kind' ({', '.join(KINDS)}): got keys {sorted(data)!r}")
    if not isinstance(data.get("request_id"), str) or not data["request_id"]:
        return f"a request has a 'request_id' string: got {data.get('request_id')!r}"
    created = data.get("created_at")
    if isinstance(created, bool) or not isinstance(created, (int, float)):
        return f"a request has a numeric 'created_at': got {created!r}"
    payload = data.get("payload", {})
    if not isinstance(payload, dict):
        return f"a request's 'payload' is a JSON object: got {payload!r}"[:300]
    run_id = payload.get("run_id")
    if (kind == "delete" or run_id is not None) and (not isinstance(run_id, str) or not run_id):
        return f"a {kind} request's payload names a 'run_id' string: got {run_id!r}"
    attempts = data.get("attempts", 0)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 0:
        return f"a request's 'attempts' is a count: got {attempts!r}"
    return None


class ReadOnlyQueue(PermissionError):
    """A change asked of a queue opened read-only (a server with ``ENCBENCH_READ_ONLY=1``)."""


class RunQueue:
    """File-based queue of run requests for one database.

    Parameters
    ----------
    db_path
        The database whose queue it is (default: :func:`default_db_path`).
    read_only
        Only read what is there (a server with ``ENCBENCH_READ_ONLY=1``, possibly on a read-only
        disk): nothing is created, not even the queue's folders or the worker's lock file; a
        missing folder reads as empty, a file that is not a request is skipped instead of moved
        aside, and every change raises :class:`ReadOnlyQueue`.
    """

    def __init__(self, db_path: Path | str | None = None, *, read_only: bool = False):
        self.db_path = Path(db_path) if db_path is not None else default_db_path()
        self.root = queue_dir(self.db_path)
        self.read_only = read_only
        if read_only:
            return
        # requests name uploads and carry their choices: folders the queue creates are owner-only
        for sub in ("pending", "active", "done", "cancel", "quarantine"):
            make_private_dirs(self.root / sub)

    def _writable(self, doing: str) -> None:
        if self.read_only:
            raise ReadOnlyQueue(f"the run queue {str(self.root)!r} is read-only (ENCBENCH_READ_ONLY=1): "
                                f"cannot {doing}")

    # -- producing -----------------------------------------------------------------------------
    def submit(self, kind: str, payload: dict) -> Request:
        """Write a request atomically into ``pending/`` and return it."""
        self._writable("queue a request")
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
        self._writable("cancel a run")
        flag = self.root / "cancel" / run_id
        flag.touch(mode=PRIVATE_FILE)
        for request in self.pending():
            if request.run_id == run_id:
                self._finish(request, outcome="cancelled")

    def clear_cancel(self, run_id: str) -> None:
        self._writable("clear a cancel flag")
        with contextlib.suppress(FileNotFoundError):
            (self.root / "cancel" / run_id).unlink()

    def is_cancelled(self, run_id: str) -> bool:
        return (self.root / "cancel" / run_id).exists()

    # -- consuming -----------------------------------------------------------------------------
    def _read(self, path: Path) -> Request | None:
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            self._quarantine(path, f"not a JSON request ({type(exc).__name__}: {exc})")
            return None
        problem = request_problem(data)
        if problem is not None:
            self._quarantine(path, problem)
            return None
        return Request(path, data["kind"], data["request_id"], data["created_at"], data.get("payload", {}),
                       data.get("outcome"), data.get("error"), data.get("waiting"),
                       data.get("attempts", 0), data.get("stage"))

    def _quarantine(self, path: Path, reason: str) -> None:
        """Move an unreadable request file aside with the reason, so no reader meets it again
        (a read-only queue only skips it)."""
        if self.read_only:
            log.debug("queue file %s/%s skipped: %s", path.parent.name, path.name, reason)
            return
        target = self.root / "quarantine" / f"{path.parent.name}-{path.name}"
        try:
            os.replace(path, target)
        except FileNotFoundError:  # another reader moved it first
            return
        with os.fdopen(open_private(target.parent / f"{target.name}.reason", os.O_WRONLY | os.O_TRUNC), "w") as fh:
            fh.write(f"{path.parent.name}/{path.name} is not a request of this queue and was set aside: {reason}\n")
        log.warning("queue file %s/%s set aside in %s: %s", path.parent.name, path.name, target.parent, reason)

    def quarantined(self) -> list[tuple[Path, str]]:
        """Files set aside as unreadable, each with the reason, oldest name first."""
        found = []
        folder = self.root / "quarantine"
        for path in sorted(folder.iterdir() if folder.is_dir() else ()):
            if path.suffix == ".reason":
                continue
            reason_file = path.with_name(path.name + ".reason")
            reason = reason_file.read_text().strip() if reason_file.exists() else "no reason recorded"
            found.append((path, reason))
        return found

    def _list(self, sub: str) -> list[Request]:
        requests = []
        # not the hidden ".tmp-*.json" of a write in flight (or of a writer killed mid-write)
        for path in sorted((self.root / sub).glob("[!.]*.json")):
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
        """Move the next request to ``active/``, count the attempt and return it.

        A request already in ``active/`` was taken by a worker that died; it comes first, unless
        :data:`MAX_ATTEMPTS` workers died on it (:meth:`fail_abandoned` fails it first).
        """
        self._writable("take a request")
        self.fail_abandoned()
        for request in self.active():
            return self._record(replace(request, attempts=request.attempts + 1, waiting=None, stage=None))
        for request in self.pending():
            target = self.root / "active" / request.path.name
            try:
                os.replace(request.path, target)
            except FileNotFoundError:  # cancelled meanwhile
                continue
            return self._record(replace(request, path=target, attempts=request.attempts + 1))
        return None

    def remove_stale_tmp(self, *, older_than: float = 3600.0) -> int:
        """Remove temporary files of writes a killed process left; return how many.

        Only the worker holding the lock may call this: it alone writes ``active/``, whose
        left-overs all go; in ``pending/`` and ``done/`` (which the app writes too) only those
        older than ``older_than`` seconds.
        """
        removed = 0
        now = time.time()
        for sub in ("pending", "active", "done"):
            for path in (self.root / sub).glob(".tmp-*.json"):
                with contextlib.suppress(FileNotFoundError):
                    if sub == "active" or now - path.stat().st_mtime > older_than:
                        path.unlink()
                        removed += 1
        if removed:
            log.info("removed %d temporary queue files left by interrupted writes", removed)
        return removed

    def fail_abandoned(self) -> list[Request]:
        """Fail the active requests :data:`MAX_ATTEMPTS` workers died on; return them.

        Only the worker holding the lock may call this, between requests: any request then in
        ``active/`` belongs to a worker that died.
        """
        failed = []
        for request in self.active():
            if request.attempts >= MAX_ATTEMPTS:
                error = self.abandoned(request)
                self._finish(request, outcome="failed", error=error)
                log.error("request %s failed: %s", request.request_id, error)
                failed.append(replace(request, outcome="failed", error=error))
        return failed

    def abandoned(self, request: Request) -> str:
        """The error of a request its workers died on :data:`MAX_ATTEMPTS` times."""
        stage = f" ({request.stage})" if request.stage else ""
        what = ("resume the run once fixed (e.g. with fewer task processes, or without the encoder "
                "that fails)" if request.kind == "run" else "queue it again once fixed")
        return (f"the queue worker died {request.attempts} times while handling this request{stage}, "
                f"e.g. killed for using too much memory, so it is not taken again; the worker log "
                f"{str(self.log_path)!r} may say why; {what}")

    def _record(self, request: Request) -> Request:
        """Rewrite an active request's file atomically (attempts, stage, waiting); return it."""
        self._writable("record a request's state")
        if request.path.exists():
            _atomic_write_json(request.path, request._data())
        return request

    def set_stage(self, request: Request, stage: str | None) -> Request:
        """Record what the worker is doing with an active request (named if the worker dies)."""
        return self._record(replace(request, stage=stage))

    def _finish(self, request: Request, *, outcome: str, error: str | None = None) -> None:
        self._writable("finish a request")
        data = dict(request._data(), outcome=outcome, error=error, finished_at=time.time())
        data.pop("waiting", None)
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
        return self._record(replace(request, waiting=waiting))

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
        """True when some process holds the worker lock.

        A read-only queue creates nothing: without a lock file no worker ever ran, and the file
        is opened read-only (``flock`` needs no write access), which a read-only disk allows.
        """
        try:
            fd = (os.open(self.lock_path, os.O_RDONLY) if self.read_only
                  else open_private(self.lock_path, os.O_RDWR | os.O_APPEND))
        except FileNotFoundError:
            return False
        with os.fdopen(fd, "rb") as fh:
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
        self._writable("start a worker")
        if self.worker_running():
            return False
        if idle_exit is None:
            idle_exit = float(os.environ.get("ENCBENCH_WORKER_IDLE_EXIT", "300"))
        env = subprocess_env(dict(os.environ, ENCBENCH_DB=str(self.db_path)))
        # umask 077: what the worker creates (the database's write-ahead log, its snapshots'
        # temporary copies, its task processes' files) is owner-only, as the files made here
        with os.fdopen(open_private(self.log_path), "ab") as log:
            subprocess.Popen(
                [sys.executable, "-m", "encbench", "worker", "--db", str(self.db_path),
                 "--idle-exit", str(idle_exit)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=subprocess_cwd(), env=env, start_new_session=True, umask=0o777 & ~PRIVATE_DIR,
            )
        return True
