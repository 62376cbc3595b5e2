"""The task registry: the types of target encbench benchmarks (docs/ARCHITECTURE.md, Vocabulary
and registries).

One :class:`TaskSpec` per task type says what the target is (classes or numbers, how many
classes), how it is prepared for the models and the supervised encoders, and which outer and
inner folds evaluate it. The models and metrics that serve a task are those whose registry
entries name it (``ModelSpec.tasks``, ``MetricSpec.tasks``: :func:`encbench.models.models_for`,
:func:`encbench.metrics.metrics_for`); the encoders that do not serve it are those the encoder
registry marks (``BINARY_ONLY``). This module is at the bottom of the library: it imports
nothing of encbench, so every layer reads it.

>>> TASKS
('binary', 'multiclass', 'regression')
>>> get_task("regression").stratified
False
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["CLASSIFICATION", "TASKS", "TASK_REGISTRY", "TaskSpec", "get_task"]


@dataclass(frozen=True)
class TaskSpec:
    """One task type.

    Attributes
    ----------
    name : str
        The value of the ``task`` column and of every ``task`` argument.
    description : str
        What the target is, in a few words.
    classes : bool
        The target is classes, label-encoded (see ``positive_class``); otherwise it is
        numbers, read as floats.
    min_classes : int
        The fewest classes a target of this task has (0 for numbers).
    positive_class : bool
        One class is the positive one (coded 1, the others' 0: by default the second in
        sorted order, as the study's label encoding makes it); otherwise classes are coded
        0, 1, ... in class order.
    column_per_class : bool
        A supervised encoder encodes one column per class (one class against the rest), so
        its width is multiplied by the classes.
    encoder_target : str
        The ``target_type`` of an encoder that encodes every task itself (scikit-learn's
        ``TargetEncoder``): ``binary``, ``multiclass`` or ``continuous``.
    fold_seed : int or None
        Outer folds: None for ``StratifiedKFold`` without shuffling (the folds follow the
        file's row order, as the study's); a seed for ``KFold`` shuffled with it (a file
        sorted by the target does not give folds by target range).
    """

    name: str
    description: str
    classes: bool
    min_classes: int
    positive_class: bool
    column_per_class: bool
    encoder_target: str
    fold_seed: int | None = None

    @property
    def stratified(self) -> bool:
        """Outer and inner folds are stratified by class (a classification task)."""
        return self.classes

    def outer_folds(self, n_folds: int):
        """The splitter of the outer evaluation's ``n_folds`` folds (docs/protocol.md)."""
        # heavy: scikit-learn is imported where folds are split, never by the registries' readers
        from sklearn.model_selection import KFold, StratifiedKFold

        if self.fold_seed is None:
            return StratifiedKFold(n_splits=n_folds)
        return KFold(n_splits=n_folds, shuffle=True, random_state=self.fold_seed)

    def inner_folds(self, n_folds: int, seed: int):
        """The splitter of tuning's inner folds: shuffled with ``seed``, stratified for classes."""
        from sklearn.model_selection import KFold, StratifiedKFold  # heavy, as above

        splitter = StratifiedKFold if self.stratified else KFold
        return splitter(n_folds, shuffle=True, random_state=seed)


#: Every task type, in display order: the study's binary classification first.
TASK_REGISTRY = MappingProxyType({t.name: t for t in (
    TaskSpec("binary", "two classes", classes=True, min_classes=2, positive_class=True,
             column_per_class=False, encoder_target="binary"),
    TaskSpec("multiclass", "three classes or more", classes=True, min_classes=3,
             positive_class=False, column_per_class=True, encoder_target="multiclass"),
    TaskSpec("regression", "numbers", classes=False, min_classes=0, positive_class=False,
             column_per_class=False, encoder_target="continuous", fold_seed=1444),
)})
#: task names; a consensus ranks within one task
TASKS: tuple[str, ...] = tuple(TASK_REGISTRY)
#: the tasks whose target is classes
CLASSIFICATION: tuple[str, ...] = tuple(n for n, t in TASK_REGISTRY.items() if t.classes)


def get_task(name: str) -> TaskSpec:
    """The entry of ``name``; ValueError naming the known tasks otherwise."""
    spec = TASK_REGISTRY.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"task must be one of {', '.join(TASKS)}: got {name!r}")
    return spec
