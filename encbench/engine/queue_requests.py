"""Typed requests of the run queue, built in one place.

The app never writes the database: it asks the background worker (:mod:`encbench.engine.queue_worker`)
through the file queue of :mod:`encbench.engine.queue`, one JSON request at a time. This module
is the one place that knows what a request carries and how one is made from a user's choices;
the pages and :func:`encbench.uploads.queue_upload_run` build their requests here and the worker
reads them back here.

- :class:`RunRequest`: run a :class:`~encbench.engine.grid.Grid` (re-queueing the same grid
  resumes its run) with some task processes; :meth:`RunRequest.bundled` for a bundled dataset,
  :meth:`RunRequest.resume` to queue a recorded run again as it was first queued.
- :func:`dataset_source_problem`: why a queued run may not read a dataset reference (a file
  outside the uploads folder), checked when a request is queued and again by the worker.
- :func:`custom_encoder_problems`: why a queued run may not build a custom encoder (an import
  path that is not an installed plugin's), checked when a request is queued and again by the
  worker, before anything is imported.
- :class:`DeleteRequest`: delete a run and its results.
- :func:`evaluation_splits`: the grids' ``split`` and ``gap`` for an evaluation choice
  (stratified folds, forward folds over a time column, or both).
- :class:`RunForm`: the Run page's choices (a bundled dataset or an upload, the grid, the
  evaluation) and the rules that turn them into queued runs, one per split;
  :func:`positive_class_choice`, the positive classes a target offers and the default.

The number of folds is the grid's (:attr:`Grid.n_folds <encbench.engine.grid.Grid>`, the
published protocol's 5 unless a grid says otherwise); nothing here restates it.

Examples
--------
>>> from encbench.engine.grid import Grid
>>> request = RunRequest(Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], models=["LogReg"]),
...                      workers=2)
>>> sorted(request.payload())
['grid', 'run_id', 'workers']
>>> RunRequest.from_payload(request.payload()) == request
True
>>> evaluation_splits("both", "day", gap=3)
[('cv:day', 0), ('time:day', 3)]
"""
from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import ClassVar

from encbench import custom, suites
from encbench.data import find_bundled
from encbench.data.rdatasets_source import PREFIX as RDATASETS
from encbench.engine.local_pool import check_workers
from encbench.engine.grid import Grid, plan
from encbench.engine.queue import Request, RunQueue, upload_dir

#: Task processes of a run when nobody chose (the Run page's default, and a resumed run's when
#: the queue does not hold the run's earlier request); at most one per core.
DEFAULT_WORKERS = 2

#: Evaluation choices of :func:`evaluation_splits`.
SPLIT_MODES = ("cv", "time", "both")


def default_workers() -> int:
    """:data:`DEFAULT_WORKERS`, or fewer on a machine with fewer cores."""
    return max(1, min(DEFAULT_WORKERS, os.cpu_count() or 1))


def evaluation_splits(mode: str, time_column: str | None = None, *, gap: int = 0) -> list[tuple[str, int]]:
    """``(split, gap)`` of each grid to queue for an evaluation choice.

    Parameters
    ----------
    mode : {'cv', 'time', 'both'}
        ``'cv'``: the published stratified folds; ``'time'``: forward folds over ``time_column``;
        ``'both'``: one grid of each, to compare. Under ``'both'`` the cv grid sets the time
        column aside too (``'cv:COLUMN'``), so the two see the same features.
    time_column : str, optional
        The column that orders the rows in time; required unless ``mode`` is ``'cv'``.
    gap : int
        Training rows left out before each test block; forward folds only (cv grids get 0).

    Returns
    -------
    list of (str, int)
        :class:`~encbench.engine.grid.Grid` ``split`` and ``gap`` values, cv first.
    """
    if mode not in SPLIT_MODES:
        raise ValueError(f"evaluation must be one of {', '.join(SPLIT_MODES)}: got {mode!r}")
    if mode == "cv":
        return [("cv", 0)]
    if not time_column:
        raise ValueError(f"evaluation {mode!r} needs a time column: got {time_column!r}")
    time_split = (f"time:{time_column}", gap)
    return [time_split] if mode == "time" else [(f"cv:{time_column}", 0), time_split]


def grid_from_config(config: Mapping) -> Grid:
    """The grid of a run's recorded ``config`` (``runs.config``: the grid's fields and more).

    Raises
    ------
    ValueError
        If the config does not describe a grid (e.g. the published run).
    """
    names = {f.name for f in fields(Grid)}
    kwargs = {k: v for k, v in config.items() if k in names}
    if not kwargs.get("datasets"):
        raise ValueError(f"run config does not describe a grid: got keys {sorted(config)!r}")
    return Grid(**kwargs)


@dataclass(frozen=True)
class RunRequest:
    """Run (or resume) a grid: what the worker passes to :func:`~encbench.engine.runner.run_grid`.

    Parameters
    ----------
    grid : Grid
        What to run; its :attr:`~encbench.engine.grid.Grid.run_id` names the run.
    workers : int
        Task processes running folds in parallel (0: in the worker's own process). A request
        written without one runs with 1, as the worker always did.
    memory_budget : int or str, optional
        As ``run_grid``'s; default the worker's (``$ENCBENCH_MEMORY_BUDGET`` or half the memory).
    owner : str, optional
        The token of the app session asking (see :func:`new_owner_token`): the run's owner when
        this request creates it, the one session that may delete it from the app.
    """

    grid: Grid
    workers: int = 1
    memory_budget: int | str | None = None
    owner: str | None = None

    kind: ClassVar[str] = "run"

    def __post_init__(self):
        if not isinstance(self.grid, Grid):
            raise ValueError(f"grid must be an encbench.engine.grid.Grid: got {self.grid!r}")
        check_workers(self.workers)
        check_owner(self.owner)

    @property
    def run_id(self) -> str:
        return self.grid.run_id

    # -- the queue's JSON ---------------------------------------------------------------------
    def payload(self) -> dict:
        """The request's JSON payload (the queue's file format)."""
        payload = {"run_id": self.run_id, "grid": self.grid.to_dict(), "workers": self.workers}
        if self.memory_budget is not None:
            payload["memory_budget"] = self.memory_budget
        if self.owner is not None:
            payload["owner"] = self.owner
        return payload

    @classmethod
    def from_payload(cls, payload: Mapping) -> RunRequest:
        """Read a queued ``run`` request back (the inverse of :meth:`payload`)."""
        return cls(Grid(**payload["grid"]), **_run_options(payload), owner=payload.get("owner"))

    def checked(self) -> RunRequest:
        """This request, once a grid with encoders of your own passes their pre-run check.

        Each custom encoder is fitted and applied on a sample of the data
        (:func:`~encbench.engine.grid.plan`), so one that cannot run is refused before anything
        is queued, with the reason; a grid of the 32 only is returned as it is (no data loaded).

        Raises
        ------
        encbench.data.DatasetError, ValueError
            If a custom encoder is not an installed plugin (:meth:`check_encoders`, before
            anything is imported); from :func:`~encbench.engine.grid.plan`.
        """
        if self.grid.custom_encoders:
            self.check_encoders()  # the check imports the encoders: only installed plugins
            plan(self.grid)
        return self

    def check_encoders(self) -> RunRequest:
        """This request, once every custom encoder it names is an installed plugin.

        See :func:`custom_encoder_problems`. Nothing is imported: a refused encoder's module is
        never loaded, by this process or by a task process.

        Raises
        ------
        ValueError
            Naming each refused encoder, its import path and what a queued run may name instead.
        """
        problems = custom_encoder_problems(self.grid.custom_encoders)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def check_sources(self, db_path) -> RunRequest:
        """This request, once every dataset it names is one a queued run may read.

        See :func:`dataset_source_problem`; ``db_path`` is the queue's database, beside which the
        uploads folder is. Nothing is opened: a refused file's content is never read.

        Raises
        ------
        ValueError
            Naming each refused reference and what a queued run may name instead.
        """
        problems = [p for spec in self.grid.datasets if (p := dataset_source_problem(spec, db_path))]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def submit(self, queue: RunQueue) -> Request:
        """Queue the request (its custom encoders checked by :meth:`check_encoders`, its datasets
        by :meth:`check_sources`); the worker picks it up (start one with ``queue.ensure_worker()``).

        Raises
        ------
        ValueError
            If the grid names a custom encoder a queued run may not build or a dataset it may not
            read (nothing is queued).
        """
        self.check_encoders().check_sources(queue.db_path)
        return queue.submit(self.kind, self.payload())

    # -- builders -----------------------------------------------------------------------------
    @classmethod
    def bundled(cls, name: str, *, encoders: Sequence[str], models: Sequence[str],
                scorings: Sequence[str], tuning: str, timeout: float, custom_encoders=(),
                workers: int | None = None, owner: str | None = None) -> RunRequest:
        """A run on the bundled copy of a published dataset (``bundled:NAME``, also its label).

        ``workers`` defaults to :func:`default_workers`; ``custom_encoders`` are installed
        plugins (:func:`encbench.custom.plugins`) run besides ``encoders``, checked here
        (:meth:`checked`); ``owner`` is the asking app session's token.

        Raises
        ------
        encbench.data.DatasetError, ValueError
            If a choice is invalid or a plugin fails its pre-run check.
        """
        spec = f"bundled:{name}"
        grid = Grid(datasets=[spec], encoders=encoders, models=models, scorings=scorings, tuning=tuning,
                    timeout=float(timeout), label=spec, custom_encoders=list(custom_encoders))
        return cls(grid, workers=default_workers() if workers is None else workers, owner=owner).checked()

    @classmethod
    def resume(cls, config: Mapping, queue: RunQueue, *, workers: int | None = None) -> RunRequest:
        """Queue a recorded run again: its unfinished experiments run, finished ones are kept.

        The grid comes from the run's recorded ``config``; the worker count and memory budget
        from the run's latest request still in ``queue`` (as the run was first queued), else
        ``workers`` or :func:`default_workers`. An explicit ``workers`` wins.

        Raises
        ------
        ValueError
            If ``config`` does not describe a grid (e.g. the published run).
        """
        grid = grid_from_config(config)
        options = _last_run_options(queue, grid.run_id) or {"workers": default_workers()}
        if workers is not None:
            options["workers"] = workers
        return cls(grid, **options)


@dataclass(frozen=True)
class DeleteRequest:
    """Delete a run: its result rows, then uploaded datasets no run uses any more.

    ``owner`` is the token of the app session asking; the worker deletes only a run that
    session launched (the command line deletes directly, with ``encbench runs --delete``).
    """

    run_id: str
    owner: str

    kind: ClassVar[str] = "delete"

    def __post_init__(self):
        if not isinstance(self.run_id, str) or not self.run_id:
            raise ValueError(f"run_id must be a run's id: got {self.run_id!r}")
        if self.owner is None:
            raise ValueError(f"a delete request names the session asking: got owner {self.owner!r}")
        check_owner(self.owner)

    def payload(self) -> dict:
        return {"run_id": self.run_id, "owner": self.owner}

    def submit(self, queue: RunQueue) -> Request:
        """Cancel the run (a pending request is dropped, a running one stops) and queue the delete."""
        queue.cancel(self.run_id)
        return queue.submit(self.kind, self.payload())


#: What a queued run may name besides an uploaded file, for messages.
QUEUED_SOURCES = ("bundled:NAME, suite:NAME, rdatasets:PACKAGE/ITEM[:TARGET] or an OpenML id of the "
                  "published study")


def dataset_source_problem(spec: str, db_path) -> str | None:
    """Why a run queued from the app may not read dataset reference ``spec``, or None if it may.

    A run request comes from an app session, and the queue's worker reads what it names with the
    server's rights, so a request may name only: a file the app stored in the uploads folder
    beside the database (:func:`~encbench.engine.queue.upload_dir`, ``<sha256><suffixes>``,
    optionally followed by ``:target``), once symbolic links are resolved; a bundled dataset
    (``bundled:NAME``); a suite (``suite:NAME``, one of :data:`encbench.suites.SUITES`); an
    ``rdatasets:`` reference (an installed package's item, looked up by exact name); or an OpenML
    id of the published study (``31``, ``openml:31``). Any other path is refused before anything
    opens it: the message names the reference, never a line of the file. The command line
    (``encbench run``) reads any file its user names.

    Parameters
    ----------
    spec : str
        One of a grid's dataset references.
    db_path : path-like or None
        The queue's database (None: the default one).

    Examples
    --------
    >>> dataset_source_problem("bundled:tic-tac-toe", "db/encbench.duckdb") is None
    True
    >>> print(dataset_source_problem("/etc/passwd:root", "db/encbench.duckdb"))  # doctest: +ELLIPSIS
    dataset '/etc/passwd:root' is not a file uploaded through the app (...): ...
    """
    text = str(spec).strip()
    lower = text.lower()
    if lower.startswith("bundled:") or lower.startswith(RDATASETS):
        return None  # the package's own files, looked up by name
    if lower.startswith(suites.PREFIX):
        name = text[len(suites.PREFIX):].strip().lower()
        return None if name in suites.SUITES else (
            f"dataset {text!r} names no suite: known are {', '.join('suite:' + k for k in suites.SUITES)}")
    openml_id = text[len("openml:"):].strip() if lower.startswith("openml:") else text
    if re.fullmatch(r"\d+", openml_id):
        if find_bundled(openml_id) is not None or int(openml_id) in {d.openml_id for d in suites.study_datasets()}:
            return None
        return (f"dataset {text!r} is not an OpenML id of the published study: a queued run may name "
                f"{QUEUED_SOURCES}, or a file uploaded through the app; run other OpenML datasets from "
                f"the command line (encbench run --datasets {openml_id})")
    uploads = os.path.realpath(upload_dir(db_path))
    # the file load_dataset would read: the reference, else its longest prefix before a ':' that
    # is a file (then ':target' or ':target:positive' follows), as parse_dataset_spec picks it
    candidates = [text] + [text[:m.start()] for m in reversed(list(re.finditer(":", text)))]
    file = next((c for c in candidates if c and os.path.isfile(c)), None)
    if file is not None and os.path.dirname(os.path.realpath(file)) == uploads:
        return None
    return (f"dataset {text!r} is not a file uploaded through the app (those are kept in the "
            f"uploads folder beside the database): a queued run may name {QUEUED_SOURCES}, or an "
            f"uploaded file; run any other file from the command line (encbench run --datasets "
            f"PATH:TARGET)")


def custom_encoder_problems(custom_encoders) -> list[str]:
    """Why a run queued from the app may not build each of ``custom_encoders``; empty if it may.

    The worker builds a custom encoder by importing its module and calling what its import path
    names, with its parameters (in the pre-run check's and the tasks' processes), so a request
    naming ``os:system`` or a module of its own would run that code with the server's rights. A
    queued run may therefore build only what the app offers, the Run page's choices: installed
    encoder plugins (:func:`encbench.custom.plugins`, entry points of group
    :data:`encbench.custom.ENTRY_POINT_GROUP`), as the process checking finds them. The rule is
    on the import path: it must be, exactly, an installed plugin's entry-point value. The name
    the results give the encoder and its parameters (JSON values, passed to the plugin's own
    class or factory) may differ, as a command-line run resumed from the app has them; a
    ``plugin`` field the request claims counts for nothing. Nothing is imported here. The command
    line (``encbench run --encoders module:attr``) builds any import path its user names.

    Parameters
    ----------
    custom_encoders : mapping or sequence
        A grid's :attr:`~encbench.engine.grid.Grid.custom_encoders` (name -> ``{"import": ...}``,
        as a run's recorded config holds them too), or :class:`~encbench.custom.CustomEncoder`
        objects.

    Returns
    -------
    list of str
        One message per refused encoder, naming it, its import path and what may be named
        instead.
    """
    if not custom_encoders:
        return []
    if isinstance(custom_encoders, Mapping):
        items = [(name, spec.get("import") if isinstance(spec, Mapping) else spec)
                 for name, spec in custom_encoders.items()]
    else:
        items = [(spec.name, spec.target) if isinstance(spec, custom.CustomEncoder) else
                 (spec.get("name"), spec.get("import")) if isinstance(spec, Mapping) else (None, spec)
                 for spec in custom_encoders]
    installed = custom.plugins()
    allowed = {plugin.target for plugin in installed}
    offered = (f"the installed plugins ({', '.join(f'{p.name} = {p.target}' for p in installed)})" if installed
               else f"installed plugins, and none is installed (a package declares one as an entry point "
                    f"of group {custom.ENTRY_POINT_GROUP!r})")
    return [f"custom encoder {name!r} ({target!r}) is not an installed encoder plugin: a run queued from the "
            f"app builds only {offered}; build any other import path from the command line "
            f"(encbench run --encoders NAME=module:attr)"
            for name, target in items if not isinstance(target, str) or target not in allowed]


def new_owner_token() -> str:
    """A fresh random token naming one app session as the owner of the runs it launches.

    128 random bits (:func:`secrets.token_hex`): another session cannot guess it, and it is
    never shown, so holding it is what makes a session the owner.
    """
    return secrets.token_hex(16)


def check_owner(owner) -> None:
    if owner is not None and (not isinstance(owner, str) or not re.fullmatch(r"[0-9a-f]{32}", owner)):
        raise ValueError(f"owner must be a session token of 32 hex digits (new_owner_token()) or None: "
                         f"got {owner!r}")


def _run_options(payload: Mapping) -> dict:
    """How a ``run`` payload asks to run: ``workers`` (1 when absent) and ``memory_budget``."""
    return {"workers": int(payload.get("workers", 1)), "memory_budget": payload.get("memory_budget")}


def _last_run_options(queue: RunQueue, run_id: str) -> dict | None:
    """:func:`_run_options` of the latest ``run`` request for ``run_id`` the queue holds
    (pending, active or done), or None."""
    requests = [r for r in queue.done() + queue.active() + queue.pending()
                if r.kind == RunRequest.kind and r.run_id == run_id]
    for request in sorted(requests, key=lambda r: r.created_at, reverse=True):
        try:
            return _run_options(request.payload)
        except (TypeError, ValueError):  # a hand-edited request: look further back
            continue
    return None
