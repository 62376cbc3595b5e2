"""The task registry (encbench/tasks.py): its entries, the folds each task is evaluated on, and
that every other statement of the task types reads it."""
from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.model_selection import KFold, StratifiedKFold

from encbench import tasks, vocab
from encbench.metrics import METRIC_REGISTRY, metrics_for
from encbench.models import MODEL_REGISTRY, models_for
from encbench.resources import resource_dir
from encbench.tasks import CLASSIFICATION, TASK_REGISTRY, TASKS, get_task


def test_the_three_task_types_in_display_order():
    """Binary first (the study's), then multiclass and regression; classes for the first two."""
    assert TASKS == ("binary", "multiclass", "regression") == vocab.TASKS
    assert CLASSIFICATION == ("binary", "multiclass")
    assert [get_task(t).min_classes for t in TASKS] == [2, 3, 0]
    assert [get_task(t).positive_class for t in TASKS] == [True, False, False]
    assert [get_task(t).encoder_target for t in TASKS] == ["binary", "multiclass", "continuous"]
    assert [get_task(t).column_per_class for t in TASKS] == [False, True, False]
    with pytest.raises(ValueError, match="task must be one of binary, multiclass, regression: got 'ranking'"):
        get_task("ranking")


def _folds(splitter, y):
    return [test.tolist() for _, test in splitter.split(np.zeros(len(y)), y)]


def test_outer_and_inner_folds_are_the_protocols():
    """Classification: StratifiedKFold without shuffling outside (the file's row order), shuffled
    with the seed inside; regression: KFold shuffled with seed 1444 outside, with the seed inside.
    Compared with the splitters built by hand on a seeded target."""
    rng = np.random.default_rng(39)
    labels, numbers = rng.integers(0, 3, 60), rng.normal(size=60)
    for task in CLASSIFICATION:
        assert _folds(get_task(task).outer_folds(5), labels) == _folds(StratifiedKFold(5), labels)
        assert _folds(get_task(task).inner_folds(5, 1445), labels) == _folds(
            StratifiedKFold(5, shuffle=True, random_state=1445), labels)
    regression = get_task("regression")
    assert _folds(regression.outer_folds(5), numbers) == _folds(KFold(5, shuffle=True, random_state=1444), numbers)
    assert _folds(regression.inner_folds(5, 7), numbers) == _folds(KFold(5, shuffle=True, random_state=7), numbers)


def test_every_model_and_metric_serves_registered_tasks_and_every_task_is_served():
    """A model or metric names only registered tasks, and each task has a model and a metric."""
    for spec in (*MODEL_REGISTRY.values(), *METRIC_REGISTRY.values()):
        assert set(spec.tasks) <= set(TASKS), spec.name
    for task in TASK_REGISTRY:
        assert models_for(task) and metrics_for(task), task


def test_the_schema_allows_exactly_the_registered_tasks():
    """The results table's CHECK (migration 007) names the registry's tasks: a task added to the
    registry needs a migration, and this test says so."""
    sql = (resource_dir("migrations") / "007_task.sql").read_text()
    (allowed,) = re.findall(r"CHECK \(task IN \(([^)]*)\)\)", sql)
    assert tuple(v.strip().strip("'") for v in allowed.split(",")) == TASKS


def test_the_registry_imports_nothing_of_encbench():
    """The bottom layer: tasks.py imports no encbench module (every layer may read it)."""
    from pathlib import Path

    text = Path(tasks.__file__).read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import) encbench", text, flags=re.M)
