"""The Run page's form: what a user asks for, checked in one place, and the runs it queues.

It sits above the engine's queue (:mod:`encbench.engine.queue_requests`) and the uploads
(:mod:`encbench.uploads`): a bundled dataset's run is a queue request, an upload's runs are
staged and validated by the uploads first.
"""
from __future__ import annotations

from dataclasses import dataclass

from encbench.data.target import class_order
from encbench.encoders import applicable_models
from encbench.engine.local_pool import check_workers
from encbench.engine.grid import Grid
from encbench.engine.queue import RunQueue
from encbench.models import models_for
from encbench.engine.queue_requests import (
    RunRequest, check_owner, custom_encoder_problems, evaluation_splits,
)
from encbench.uploads import queue_upload_run
from encbench.tasks import TASKS

__all__ = ["BINARY_CLASSES", "RunForm", "positive_class_choice"]

#: A target of this many classes is a binary one: its positive class is the user's choice.
BINARY_CLASSES = 2


def positive_class_choice(target) -> tuple[list[str], int] | None:
    """The classes a user may name positive, in label-encoding order, and the default's index.

    The default is the second class in sorted order, as label encoding makes it (the published
    protocol); it matters for F1 only. None when the target does not have exactly two classes:
    there is no choice to offer, and the upload's validation refuses such a target, saying why.

    Parameters
    ----------
    target : pandas.Series
        The target column as read (missing values are not a class).

    Examples
    --------
    >>> import pandas as pd
    >>> positive_class_choice(pd.Series(["yes", "no", "yes", None]))
    (['no', 'yes'], 1)
    >>> positive_class_choice(pd.Series(["a", "b", "c"])) is None
    True
    """
    classes = [str(c) for c in class_order(target)]
    return (classes, 1) if len(classes) == BINARY_CLASSES else None


@dataclass(frozen=True)
class RunForm:
    """What the Run page asks for, and the runs it queues: one place for the page's rules.

    Above the engine and the uploads: it builds a queued run from either, so neither reaches up to
    the page's rules. Either ``bundled`` (a bundled copy of a published dataset, its published target and the
    stratified folds) or ``upload`` (a staged file, with its target, positive class and column
    roles, evaluated as ``evaluation`` says: one run per split).

    Parameters
    ----------
    encoders, models, scorings : sequence of str
        The grid's choices; ``custom_encoders`` are installed plugins run besides ``encoders``.
    tuning : str
        ``no``, ``model`` or ``full``.
    timeout : float
        Seconds one fold task may run.
    workers : int
        Task processes of each run.
    owner : str, optional
        The asking app session's token (:func:`encbench.engine.queue_requests.new_owner_token`).
    bundled : str, optional
        A bundled dataset's name.
    upload : encbench.uploads.StagedUpload, optional
        A staged upload (:func:`encbench.uploads.stage_upload`).
    target, positive_class, categorical, drop
        The upload's target, positive class (None: the default of
        :func:`positive_class_choice`), categorical columns (None: as inferred) and columns
        left out.
    evaluation : {'cv', 'time', 'both'}
        The outer evaluation (:func:`evaluation_splits`); ``time_column`` and ``gap`` for a
        time split. A bundled dataset is evaluated with the published stratified folds only.
    task : {'binary', 'multiclass', 'regression'}
        The upload's task type (the page infers it from the target and lets the user override
        it): its folds, models and metrics; binary by default. A bundled dataset is binary.

    Raises
    ------
    ValueError
        If neither or both of ``bundled`` and ``upload`` are given, an upload has no target,
        a bundled dataset asks for a time split or another task than binary, the task is not
        one of :data:`encbench.vocab.TASKS`, or the evaluation is not one of
        :data:`encbench.engine.queue_requests.SPLIT_MODES` (or lacks its time column).
    """

    encoders: tuple[str, ...]
    models: tuple[str, ...]
    scorings: tuple[str, ...]
    tuning: str
    timeout: float
    workers: int
    custom_encoders: tuple = ()
    owner: str | None = None
    bundled: str | None = None
    upload: object = None
    target: str | None = None
    positive_class: str | None = None
    categorical: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    evaluation: str = "cv"
    time_column: str | None = None
    gap: int = 0
    task: str = "binary"

    def __post_init__(self):
        for name in ("encoders", "models", "scorings", "custom_encoders", "drop"):
            object.__setattr__(self, name, tuple(getattr(self, name) or ()))
        if self.categorical is not None:
            object.__setattr__(self, "categorical", tuple(self.categorical))
        if (self.bundled is None) == (self.upload is None):
            raise ValueError(f"a run is on a bundled dataset or on an upload, one of the two: got "
                             f"bundled={self.bundled!r} and upload={getattr(self.upload, 'filename', self.upload)!r}")
        if self.upload is not None and not self.target:
            raise ValueError(f"an upload's run needs its target column: got target={self.target!r}")
        if self.bundled is not None and self.evaluation != "cv":
            raise ValueError(f"a bundled dataset runs the published stratified folds: got evaluation "
                             f"{self.evaluation!r}")
        evaluation_splits(self.evaluation, self.time_column, gap=self.gap)  # checks the choice
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}: got {self.task!r}")
        if self.bundled is not None and self.task != "binary":
            raise ValueError(f"a bundled dataset is a published one, a binary task: got task {self.task!r}")
        check_workers(self.workers)
        check_owner(self.owner)

    # -- what it asks for ----------------------------------------------------------------------
    @property
    def splits(self) -> list[tuple[str, int]]:
        """``(split, gap)`` of each run to queue, cv first (:func:`evaluation_splits`)."""
        return evaluation_splits(self.evaluation, self.time_column, gap=self.gap)

    def missing(self) -> list[str]:
        """The choices left empty (each needs one value at least): ``encoders``, ``models``, ``metrics``."""
        return [label for label, chosen in (("encoders", self.encoders + self.custom_encoders),
                                            ("models", self.models), ("metrics", self.scorings))
                if not chosen]

    @property
    def models_of(self) -> dict[str, tuple[str, ...]]:
        """Each encoder the run computes -> the chosen models it runs with, as the run's plan
        pairs them (:func:`encbench.encoders.applicable_models`): WoE is binary only, so it adds
        no task or row to another task; Native runs only with the models that take categories;
        a custom encoder runs with every model."""
        pairs = {e: applicable_models(e, self.models, self.task) for e in self.encoders}
        pairs.update({name: tuple(self.models) for name in self.custom_encoders})
        return {e: models for e, models in pairs.items() if models}

    @property
    def idle_encoders(self) -> dict[str, tuple[str, ...]]:
        """The chosen encoders the run computes nothing for -> the models of the task they would run
        with (empty: the encoder is not defined for the task, as WoE beyond binary targets)."""
        return {e: applicable_models(e, models_for(self.task), self.task)
                for e in self.encoders if e not in self.models_of}

    @property
    def partial_encoders(self) -> dict[str, tuple[str, ...]]:
        """The encoders the run computes with some of the chosen models only -> those models."""
        return {e: models for e, models in self.models_of.items() if len(models) < len(self.models)}

    @property
    def n_encoders(self) -> int:
        """Encoders the run computes (:attr:`models_of`)."""
        return len(self.models_of)

    @property
    def n_experiments(self) -> int:
        """Experiments of each run: (encoder, model) pairs that apply x metrics."""
        return sum(len(models) for models in self.models_of.values()) * len(self.scorings)

    @property
    def n_runs(self) -> int:
        """Runs queued: one per split."""
        return len(self.splits)

    @property
    def fold_tasks(self) -> int:
        """Fold tasks of each run (one per encoder and outer fold)."""
        return self.n_encoders * Grid.n_folds

    @property
    def result_rows(self) -> int:
        """Result rows of each run (one per experiment and outer fold)."""
        return self.n_experiments * Grid.n_folds

    # -- queueing ------------------------------------------------------------------------------
    def submit(self, queue: RunQueue) -> list[Grid]:
        """Validate the choices, store the upload, queue one run per split; return their grids.

        A bundled dataset's run is :meth:`~encbench.engine.queue_requests.RunRequest.bundled`; an upload's runs are
        :func:`encbench.uploads.queue_upload_run` (validated for these choices, stored beside
        the database only if valid), into ``queue``'s database. Start a worker afterwards
        (``queue.ensure_worker()``).

        Raises
        ------
        encbench.data.DatasetError, ValueError
            If the upload does not validate for these choices or a plugin fails its pre-run
            check; nothing of a refused run is stored or queued.
        """
        if self.missing():
            raise ValueError(f"choose at least one of: {', '.join(self.missing())}")
        # refused before an upload is stored or a plugin is checked (the check imports it)
        problems = custom_encoder_problems(self.custom_encoders)
        if problems:
            raise ValueError("; ".join(problems))
        if self.bundled is not None:
            request = RunRequest.bundled(self.bundled, encoders=self.encoders, models=self.models,
                                         scorings=self.scorings, tuning=self.tuning, timeout=float(self.timeout),
                                         custom_encoders=self.custom_encoders, workers=self.workers,
                                         owner=self.owner)
            request.submit(queue)
            return [request.grid]
        return [queue_upload_run(self.upload, target=self.target, positive_class=self.positive_class,
                                 categorical=list(self.categorical) if self.categorical is not None else None,
                                 drop=list(self.drop), encoders=self.encoders, models=self.models,
                                 scorings=self.scorings, tuning=self.tuning, timeout=float(self.timeout),
                                 db_path=queue.db_path, workers=self.workers, split=split, gap=split_gap,
                                 custom_encoders=self.custom_encoders, owner=self.owner, task=self.task)
                for split, split_gap in self.splits]
