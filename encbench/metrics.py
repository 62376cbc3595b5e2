"""The metric registry: one :class:`MetricSpec` per quality metric.

Everything that needs to know a metric reads its entry here: the engine's test-fold score
(:meth:`MetricSpec.score`), the scorer of the inner cross-validation in tuning
(:attr:`MetricSpec.inner_scorer`), LightGBM's early-stopping criterion
(:meth:`MetricSpec.stopping_value`), the consensus statistics (:attr:`MetricSpec.greater_is_better`
orients scores so that rank 1 is the best encoder; :attr:`MetricSpec.bounds` decides whether a
ratio to the best score means anything) and the labels of pages and exports
(:attr:`MetricSpec.label`).

Adding a metric: one entry in :data:`METRIC_REGISTRY` (its scorer as a function of the true and
predicted values) and a test in ``tests/test_metrics.py`` against a hand-computed example.

This module imports nothing heavy: scikit-learn is imported when a score is computed.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from encbench.tasks import CLASSIFICATION


def _balanced_accuracy(y_true, y_pred) -> float:
    from sklearn.metrics import balanced_accuracy_score

    return float(balanced_accuracy_score(y_true, y_pred))


def _f1(y_true, y_pred) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(y_true, y_pred, zero_division=0.0))


def _f1_macro(y_true, y_pred) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(y_true, y_pred, average="macro", zero_division=0.0))


def _accuracy(y_true, y_pred) -> float:
    from sklearn.metrics import accuracy_score

    return float(accuracy_score(y_true, y_pred))


def _roc_auc(y_true, y_score) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y_true, y_score))


def _roc_auc_ovr(y_true, y_score) -> float:
    """Macro one-vs-rest AUC on the probability matrix (one column per class 0..K-1); the
    labels are passed so that a test fold missing a class still reads the matrix right."""
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y_true, y_score, multi_class="ovr", average="macro",
                               labels=np.arange(np.shape(y_score)[1])))


#: per task, the function, inner scorer and description of a metric whose definition depends on
#: the task (F1 and AUC of a multiclass target: macro averages)
_MULTICLASS = {
    "F1": (_f1_macro, "f1_macro", "macro F1: the mean of each class's F1"),
    "AUC": (_roc_auc_ovr, "roc_auc_ovr",
            "one-vs-rest AUC of each class on its predicted probability, macro-averaged"),
}


def _rmse(y_true, y_pred) -> float:
    from sklearn.metrics import root_mean_squared_error

    return float(root_mean_squared_error(y_true, y_pred))


def _mae(y_true, y_pred) -> float:
    from sklearn.metrics import mean_absolute_error

    return float(mean_absolute_error(y_true, y_pred))


def _r2(y_true, y_pred) -> float:
    from sklearn.metrics import r2_score

    return float(r2_score(y_true, y_pred))


# -- LightGBM's stopping criterion, evaluated every boosting round ----------------------------------
# scikit-learn's metric functions spend milliseconds per call validating their input, which LightGBM
# pays once per round and metric. These compute the same numbers with the same floating-point
# operations in the same order (tests/test_metrics.py compares them with ``==``) and hand any input
# outside their plain case (other labels, a missing class, non-finite scores) to scikit-learn.
def _codes(y_true, y_pred):
    """The sorted union of the labels and both arrays as indices into it."""
    labels = np.union1d(y_true, y_pred)
    return labels, np.searchsorted(labels, y_true), np.searchsorted(labels, y_pred)


def _confusion(y_true, y_pred) -> np.ndarray:
    labels, t, p = _codes(y_true, y_pred)
    k = len(labels)
    return np.bincount(t * k + p, minlength=k * k).reshape(k, k)


def _accuracy_fast(y_true, y_pred) -> float:
    # a mean of 0/1 values: exact whatever the order of the sum
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def _balanced_accuracy_fast(y_true, y_pred) -> float:
    C = _confusion(np.asarray(y_true), np.asarray(y_pred))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.diagonal(C) / C.sum(axis=1)
    per_class = per_class[~np.isnan(per_class)]  # classes predicted, never true
    return float(np.mean(per_class))


def _f_scores(tp, true, pred) -> np.ndarray:
    denominator = 1.0 * true.astype(np.float64) + pred.astype(np.float64)
    zero = denominator == 0
    f = 2.0 * tp.astype(np.float64) / np.where(zero, 1.0, denominator)
    f[zero] = 0.0
    return f


def _f1_fast(y_true, y_pred) -> float:
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if not (np.isin(y_true, (0, 1)).all() and np.isin(y_pred, (0, 1)).all()):
        return _f1(y_true, y_pred)
    t, p = y_true == 1, y_pred == 1
    f = _f_scores(np.array([np.sum(t & p)]), np.array([np.sum(t)]), np.array([np.sum(p)]))
    return float(f[0])


def _f1_macro_fast(y_true, y_pred) -> float:
    C = _confusion(np.asarray(y_true), np.asarray(y_pred))
    return float(np.mean(_f_scores(np.diagonal(C), C.sum(axis=1), C.sum(axis=0))))


def _auc_of(positive: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve of a 0/1 target with both classes, by the trapezoidal rule over
    the curve's corners (the points between collinear neighbours dropped)."""
    from scipy.integrate import trapezoid

    order = np.argsort(score, kind="stable")[::-1]
    ranked, hits = score[order], positive[order].astype(np.float64)
    thresholds = np.concatenate([np.nonzero(np.diff(ranked))[0], [hits.size - 1]])
    tps = np.cumsum(hits, dtype=np.float64)[thresholds]
    fps = 1 + thresholds.astype(np.float64) - tps
    if fps.shape[0] > 2:
        corners = np.nonzero(np.concatenate(
            [[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]]))[0]
        fps, tps = fps[corners], tps[corners]
    fps, tps = np.concatenate([[0.0], fps]), np.concatenate([[0.0], tps])
    return float(1 * trapezoid(tps / tps[-1], fps / fps[-1]))


def _roc_auc_fast(y_true, y_score) -> float:
    y_true, y_score = np.asarray(y_true), np.asarray(y_score, dtype=np.float64)
    present = np.unique(y_true)
    if len(present) != 2 or y_score.ndim != 1 or not np.isfinite(y_score).all():
        return _roc_auc(y_true, y_score)
    return _auc_of(y_true == present[1], y_score)


def _roc_auc_ovr_fast(y_true, y_score) -> float:
    y_true, y_score = np.asarray(y_true), np.asarray(y_score, dtype=np.float64)
    k = y_score.shape[1] if y_score.ndim == 2 else 0
    if (k < 3 or not np.array_equal(np.unique(y_true), np.arange(k)) or not np.isfinite(y_score).all()
            or not np.allclose(1, y_score.sum(axis=1))):
        return _roc_auc_ovr(y_true, y_score)
    return float(np.mean(np.array([_auc_of(y_true == c, y_score[:, c]) for c in range(k)])))


#: scikit-learn's metric function -> the exact fast version LightGBM's criterion uses
_STOPPING = {_accuracy: _accuracy_fast, _balanced_accuracy: _balanced_accuracy_fast,
             _f1: _f1_fast, _f1_macro: _f1_macro_fast, _roc_auc: _roc_auc_fast,
             _roc_auc_ovr: _roc_auc_ovr_fast}


@dataclass(frozen=True)
class MetricSpec:
    """A quality metric of a test fold.

    Attributes
    ----------
    name : str
        Short name stored in the ``scoring`` column (``"AUC"``).
    description : str
        What it measures, in words, for help texts and labels.
    function : callable
        ``function(y_true, values) -> float`` where ``values`` are predicted labels (or values,
        for regression), or, with ``needs_scores``, the predicted probability of the positive
        class (binary) or the whole probability matrix (multiclass).
    needs_scores : bool
        Computed from probabilities (``predict_proba[:, 1]``; for a multiclass target the whole
        ``predict_proba`` matrix) instead of predicted labels.
    greater_is_better : bool
        Direction: True for accuracies and AUC, False for errors (RMSE, MAE).
    tasks : tuple of str
        The task types it serves (``"binary"``, ``"multiclass"``, ``"regression"``).
    bounds : tuple of float or None
        ``(low, high)`` when the metric is bounded (AUC in [0, 1]); None when it is not (RMSE).
    inner_scorer : str
        scikit-learn's scorer name used inside tuning (``GridSearchCV``, ``BayesSearchCV``) for a
        binary target (:meth:`scorer_for` gives it per task).
    in_study : bool
        One of the published study's four metrics.
    chance : callable or None
        ``chance(n_classes)``: the score of a model that has learnt nothing, where it depends on
        the number of classes alone (AUC 0.5, balanced accuracy ``1 / n_classes``, R2 0 for
        predicting the mean); None where it depends on the data further (accuracy and F1 on the
        class shares, RMSE and MAE on the target's spread). ``n_classes`` is None for regression.
    """

    name: str
    description: str
    function: Callable[..., float]
    needs_scores: bool
    greater_is_better: bool
    tasks: tuple[str, ...]
    bounds: tuple[float, float] | None
    inner_scorer: str
    in_study: bool = False
    chance: Callable[[int | None], float] | None = None

    @property
    def label(self) -> str:
        """The name with its direction (``"RMSE (lower is better)"``), for axes and tables."""
        return f"{self.name} ({'higher' if self.greater_is_better else 'lower'} is better)"

    @property
    def ratio_scale(self) -> bool:
        """Whether ``theta x best score`` means "within a fraction of the best": a bounded,
        non-negative, higher-is-better metric (accuracies, F1, AUC)."""
        return self.greater_is_better and self.bounds is not None and self.bounds[0] >= 0

    def function_for(self, task: str = "binary") -> Callable[..., float]:
        """The scoring function for ``task`` (macro averages for a multiclass F1 and AUC)."""
        if task == "multiclass" and self.name in _MULTICLASS:
            return _MULTICLASS[self.name][0]
        return self.function

    def scorer_for(self, task: str = "binary") -> str:
        """scikit-learn's scorer name inside tuning for ``task`` (``"f1_macro"`` and
        ``"roc_auc_ovr"`` for a multiclass F1 and AUC)."""
        if task == "multiclass" and self.name in _MULTICLASS:
            return _MULTICLASS[self.name][1]
        return self.inner_scorer

    def describe(self, task: str = "binary") -> str:
        """What it measures for ``task``, in words."""
        if task == "multiclass" and self.name in _MULTICLASS:
            return _MULTICLASS[self.name][2]
        return self.description

    def score(self, y_true, labels: Callable[[], np.ndarray], scores: Callable[[], np.ndarray],
              task: str = "binary") -> float:
        """The metric on a test fold; ``labels()`` and ``scores()`` compute the predictions
        lazily (each at most once per fitted model, whatever the number of metrics).
        ``scores()`` gives the positive class's column for a binary target and the whole
        probability matrix for a multiclass one."""
        return self.function_for(task)(y_true, scores() if self.needs_scores else labels())

    def stopping_value(self, y_true, probabilities: np.ndarray, task: str = "binary") -> float:
        """The early-stopping criterion of LightGBM: the metric on validation predictions.

        Binary: the positive class's probabilities, as is for ``needs_scores`` metrics and
        rounded to labels for the others. Multiclass: LightGBM passes the probability matrix
        (rows x classes), used as is or reduced to its most probable class. Regression: the
        predicted values, as they are.
        """
        function = self.function_for(task)
        function = _STOPPING.get(function, function)
        if task == "regression":
            return function(y_true, probabilities)
        if task == "multiclass":
            matrix = np.asarray(probabilities)
            if matrix.ndim == 1:  # older LightGBM: class-major flat array
                matrix = matrix.reshape(-1, len(y_true)).T
            return function(y_true, matrix if self.needs_scores else np.argmax(matrix, axis=1))
        return function(y_true, probabilities if self.needs_scores else np.round(probabilities))




# chance levels (MetricSpec.chance): module functions, so that a spec pickles
def _half(n_classes: int | None) -> float:
    return 0.5


def _one_in_classes(n_classes: int | None) -> float:
    return 1.0 / n_classes


def _zero(n_classes: int | None) -> float:
    return 0.0

#: Every metric, in display order: the study's four first (binary; their order is the published
#: one), then those of the other task types.
METRIC_REGISTRY = MappingProxyType({m.name: m for m in (
    MetricSpec("BAcc", "balanced accuracy: the mean of the recall of each class", _balanced_accuracy,
               needs_scores=False, greater_is_better=True, tasks=CLASSIFICATION, bounds=(0.0, 1.0),
               inner_scorer="balanced_accuracy", in_study=True, chance=_one_in_classes),
    MetricSpec("F1", "F1 score of the positive class", _f1, needs_scores=False,
               greater_is_better=True, tasks=CLASSIFICATION, bounds=(0.0, 1.0), inner_scorer="f1",
               in_study=True),
    MetricSpec("Acc", "accuracy: the share of correctly predicted rows", _accuracy,
               needs_scores=False, greater_is_better=True, tasks=CLASSIFICATION, bounds=(0.0, 1.0),
               inner_scorer="accuracy", in_study=True),
    MetricSpec("AUC", "area under the ROC curve, on the predicted probability of the positive class",
               _roc_auc, needs_scores=True, greater_is_better=True, tasks=CLASSIFICATION,
               bounds=(0.0, 1.0), inner_scorer="roc_auc", in_study=True, chance=_half),
    MetricSpec("RMSE", "root mean squared error", _rmse, needs_scores=False,
               greater_is_better=False, tasks=("regression",), bounds=None,
               inner_scorer="neg_root_mean_squared_error"),
    MetricSpec("MAE", "mean absolute error", _mae, needs_scores=False, greater_is_better=False,
               tasks=("regression",), bounds=None, inner_scorer="neg_mean_absolute_error"),
    MetricSpec("R2", "coefficient of determination (1 is perfect, below 0 worse than the mean)",
               _r2, needs_scores=False, greater_is_better=True, tasks=("regression",),
               bounds=None, inner_scorer="r2", chance=_zero),
)})


def get_metric(name: str) -> MetricSpec:
    """The registry entry of a metric.

    Raises
    ------
    ValueError
        If ``name`` is not a registered metric.
    """
    try:
        return METRIC_REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown scoring: got {name!r}; expected one of {list(METRIC_REGISTRY)}") from None


def metrics_for(task: str) -> tuple[str, ...]:
    """Names of the metrics that serve ``task``, in display order."""
    return tuple(name for name, spec in METRIC_REGISTRY.items() if task in spec.tasks)


def chance_level(name: str, n_classes: int | None = None) -> float | None:
    """The score of a model that has learnt nothing (:attr:`MetricSpec.chance`), or None where
    the registry does not know it: a metric without one, a custom metric, or a classification
    metric asked without its number of classes."""
    spec = METRIC_REGISTRY.get(name)
    if spec is None or spec.chance is None:
        return None
    if "regression" not in spec.tasks and not n_classes:
        return None
    return float(spec.chance(n_classes))


def greater_is_better(name: str) -> bool:
    """Direction of a metric; a name the registry does not know counts as higher-is-better
    (scores of a custom metric computed outside encbench)."""
    spec = METRIC_REGISTRY.get(name)
    return True if spec is None else spec.greater_is_better
