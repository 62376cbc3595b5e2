"""The engine's unit of work: one fold of one encoder on one dataset (docs/ARCHITECTURE.md, Scale-out).

:func:`encbench.engine.grid.plan` builds the tasks of a grid; :mod:`encbench.engine.protocol`
runs one; the executors carry them to task processes and Dask workers.
"""
from __future__ import annotations

from dataclasses import dataclass

from encbench.experiment import RESULT_KEY


@dataclass(frozen=True)
class Task:
    """The unit of work: one fold of one encoder on one dataset, with all its models and scorings.

    Attributes
    ----------
    dataset : str
        Dataset key (``datasets.dataset``).
    encoder : str
    fold : int
        0-based index of the outer fold.
    n_folds : int
    models, scorings : tuple of str
    tuning : str
    split : {'cv', 'time'}
        Outer evaluation scheme (:mod:`encbench.engine.splits`).
    time_column : str or None
        The column that orders the rows of a time split; with either split it is not a feature.
    gap : int
        Time split: training rows left out before each test block.
    custom : str or None
        A custom encoder's JSON spec (import path and parameters) that the task process builds;
        None for the canonical encoders (built by ``make_encoder``).
    task : {'binary', 'multiclass', 'regression'}
        The dataset's task type (:attr:`encbench.data.Dataset.task`): it sets the folds, the
        models' estimators, the metrics' definitions and the supervised encoders' targets.
    """

    dataset: str
    encoder: str
    fold: int
    n_folds: int
    models: tuple[str, ...]
    scorings: tuple[str, ...]
    tuning: str
    split: str = "cv"
    time_column: str | None = None
    gap: int = 0
    custom: str | None = None
    task: str = "binary"

    def key(self, model: str, scoring: str) -> tuple:
        """The result key (:data:`encbench.experiment.RESULT_KEY`) of the task's row for
        ``model`` and ``scoring``."""
        row = {"dataset": self.dataset, "encoder": self.encoder, "model": model, "tuning": self.tuning,
               "scoring": scoring, "split": self.split, "fold": self.fold,
               "task": self.task}
        return tuple(row[column] for column in RESULT_KEY)

    def keys(self) -> list[tuple]:
        """Result keys (:meth:`key`) of every row the task writes."""
        return [self.key(m, s) for m in self.models for s in self.scorings]

    @property
    def name(self) -> str:
        return f"{self.dataset}/{self.encoder}/fold {self.fold + 1}/{self.n_folds}"
