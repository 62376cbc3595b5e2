"""The published experimental protocol, one task at a time.

:func:`run_task` evaluates one (dataset, encoder, outer fold) with every requested model and
scoring and returns one result row per (model, scoring). It never raises: an exception in the
encoder, a model or a metric becomes ``failed`` rows carrying the error text.

What a model or a metric is comes from the registries (:mod:`encbench.models`,
:mod:`encbench.metrics`): this module only carries the protocol around them. Seeds and
constants follow the study's code (Matteucci et al. 2023, repository
``DrCohomology/EncoderBenchmarking``, ``src/config.py`` and ``src/utils.py``): inner CV of grid
search ``StratifiedKFold(5, shuffle=True, random_state=1445)``; Bayesian search with
``StratifiedKFold(5, shuffle=True, random_state=1444)`` and ``random_state=1445``. A model with
early stopping (LightGBM) holds out part of the training fold as its registry entry says and
stops on the scored metric (:meth:`encbench.metrics.MetricSpec.stopping_value`).

Every task type (:attr:`encbench.engine.grid.Task.task`) follows the same protocol with its
own folds: a classification target (binary, multiclass) is label-encoded 0..K-1 and split by
the study's stratified folds; a regression target is a float and split by
``KFold(n_folds, shuffle=True, random_state=REGRESSION_FOLD_SEED)`` outside and by the same
shuffled ``KFold`` with the study's inner seeds inside tuning (a file sorted by the target
never gives folds by target range). A time split orders the rows whatever the task.
"""
from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from encbench.encoders import ALL_REGISTRY, applies_to, applies_to_task, make_encoder
from encbench.engine.budget import dense_bytes
from encbench.engine.sparse import SPARSE_ENCODERS, uses_sparse
from encbench.engine.splits import check_time_column, forward_fold_indices
from encbench.engine.task import Task
from encbench.metrics import get_metric
from encbench.models import MODEL_REGISTRY, get_model
from encbench.tasks import TASK_REGISTRY, get_task

log = logging.getLogger(__name__)

#: seed of the CV/BU wrappers' folds: None is the study's (encbench.encoders.STUDY_SEED).
ENCODER_SEED = None
GRID_CV_SEED = 1445
BAYES_CV_SEED = 1444
BAYES_SEED = 1445
INNER_FOLDS = 5
#: seed of the shuffled outer ``KFold`` of a regression target (the study's seed of its own
#: shuffled folds, ``config.py``'s 1444), from the task registry
REGRESSION_FOLD_SEED = TASK_REGISTRY["regression"].fold_seed
BAYES_MAX_ITER = 20

MAX_ERROR_CHARS = 2000


@dataclass(frozen=True)
class Payload:
    """The data a task needs, shipped once per worker: features, target, categorical columns.

    The target is 0/1 for a binary task, the class codes 0..K-1 for a multiclass one and a
    float for regression (as :attr:`encbench.data.Dataset.y`).

    Attributes
    ----------
    key, sha256 : str
        Dataset key and file hash; ``(key, sha256)`` identifies the payload in worker caches.
    X : pandas.DataFrame
    y : numpy.ndarray
    categorical : tuple of str
    """

    key: str
    sha256: str
    X: pd.DataFrame
    y: np.ndarray
    categorical: tuple[str, ...]

    @property
    def token(self) -> tuple[str, str]:
        return (self.key, self.sha256)

    @cached_property
    def levels(self) -> dict[str, int]:
        """``{categorical column: levels}`` over every row (missing values not counted),
        computed once per payload: the size a fold's dense encoding is estimated from."""
        return {c: int(self.X[c].nunique(dropna=True)) for c in self.categorical}

    @classmethod
    def from_dataset(cls, dataset) -> Payload:
        """Build from an :class:`encbench.data.Dataset`."""
        return cls(dataset.key, dataset.sha256, dataset.X, np.asarray(dataset.y),
                   tuple(dataset.categorical))


#: what :func:`warm_up` has built in this process: ``("scikit-learn",)``, ``("model", name,
#: task kind)``, ``("space", name)`` and ``("encoder", name, task kind)``
_warmed: set[tuple[str, ...]] = set()


def imports_of(tasks: Iterable[Task]) -> dict[str, list]:
    """What running ``tasks`` imports, for :func:`warm_up` (JSON-ready, so a parent can name it
    on a task process's command line): ``{"models": [[model, task kind], ...], "spaces":
    [model, ...], "encoders": [[encoder, task kind], ...]}``, the spaces those of full tuning.

    A custom encoder is left out: its module is the user's code, which its task builds (and
    imports) under the task's timeout.
    """
    models, spaces, encoders = set(), set(), set()
    for task in tasks:
        models.update((model, task.task) for model in task.models)
        if task.tuning == "full":
            spaces.update(task.models)
        if task.custom is None:
            encoders.add((task.encoder, task.task))
    return {"models": [list(m) for m in sorted(models)], "spaces": sorted(spaces),
            "encoders": [list(e) for e in sorted(encoders)]}


def warm_up(needs: Mapping[str, list] | None = None) -> None:
    """Import every library the tasks use, so that no task's clock includes import time.

    ``needs`` is :func:`imports_of` of the tasks: one estimator of each of their models (which
    imports its library) for each task type, the search space and the Bayesian search of a model
    under full tuning (scikit-optimize), one of each of their encoders (its module). None builds
    one estimator of every registered model and every search space (a process that does not know
    its tasks). What a call built is remembered: calling it again before each task costs nothing
    but what that task adds. A name that does not build (unknown, or a library that fails to
    import) is left for its task, which reports the failure in its rows with the stage.
    """
    _once(("scikit-learn",), _every_task)
    if needs is None:
        needs = {"models": [(name, task) for name, spec in MODEL_REGISTRY.items() for task in spec.tasks],
                 "spaces": list(MODEL_REGISTRY), "encoders": []}
    for name, task in needs.get("models", ()):
        _once(("model", name, task), make_model, name, task=task)
    for name in needs.get("spaces", ()):
        _once(("space", name), _search, name)
    for name, task in needs.get("encoders", ()):
        _once(("encoder", name, task), make_encoder, name, task=task)


def _once(key: tuple[str, ...], build, *args, **kwargs) -> None:
    """``build(*args, **kwargs)`` unless a warm-up did it already (see :data:`_warmed`)."""
    if key in _warmed:
        return
    _warmed.add(key)
    try:
        build(*args, **kwargs)
    except Exception:  # the task that needs it fails on it and reports it, with its stage
        log.debug("warm-up of %s failed", key, exc_info=True)


def _every_task() -> None:
    """Import what every task uses: scikit-learn's pipelines, preprocessing, folds and metrics."""
    import sklearn.compose
    import sklearn.metrics
    import sklearn.model_selection
    import sklearn.pipeline
    import sklearn.preprocessing  # noqa: F401
    from sklearn.impute import SimpleImputer

    # the first transform to pandas imports narwhals' pandas backend (every task does one)
    SimpleImputer(strategy="most_frequent").set_output(transform="pandas").fit_transform(
        pd.DataFrame({"level": ["a"]}))


def _search(model: str) -> None:
    """Build the full-tuning search space of ``model`` and import the Bayesian search."""
    from skopt import BayesSearchCV  # noqa: F401

    bayes_space(model)


# -- building blocks -----------------------------------------------------------------------------
def make_model(name: str, *, tuning: str = "no", task: str = "binary"):
    """A new, unfitted model with its registry defaults and seed (:mod:`encbench.models`), a
    classifier or, for ``task='regression'``, a regressor.

    ``tuning='full'`` gives the configuration the Bayesian search tunes (for LGBM a plain
    estimator whose ``n_estimators`` it sets, instead of the early-stopping configuration).
    """
    return get_model(name).make(tuning, task)


def bayes_space(name: str) -> dict:
    """Full-tuning search space of a model (its registry entry), keys without prefix."""
    return get_model(name).space()


def bayes_n_iter(space: dict) -> int:
    """``min(20, size of the grid implied by the space)``, a real dimension counting 3 points."""
    from skopt.space import Integer

    size = 1
    for dimension in space.values():
        if isinstance(dimension, Integer):
            low, high = dimension.bounds
            size *= high - low + 1
        else:
            size *= 3
    return min(BAYES_MAX_ITER, size)


def make_preprocessor(encoder: str, categorical, numerical, custom: str | None = None, *,
                      sparse: bool = False, task: str = "binary"):
    """Categorical: impute most frequent, then encode; numerical: impute median, RobustScaler.

    ``custom`` is a custom encoder's JSON spec (:mod:`encbench.custom`); the 32 canonical
    encoders (``custom`` None) are built by ``make_encoder`` as always, for ``task`` (a
    supervised encoder of a multiclass target encodes one column per class). ``sparse=True``
    (an encoder with ``sparse_output``) gives a CSR matrix with the dense output's values.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import RobustScaler

    encode = (make_encoder(encoder, random_state=ENCODER_SEED, task=task) if custom is None
              else _custom_encoder(custom))
    native = custom is None and ALL_REGISTRY[encoder].native
    if sparse:
        encode.set_params(sparse_output=True)
    categorical_pipe = Pipeline([
        # pandas output keeps column names for the encoders
        ("impute", SimpleImputer(strategy="most_frequent").set_output(transform="pandas")),
        ("encode", encode),
    ])
    transformers = [("categorical", categorical_pipe, list(categorical))]
    if len(numerical):
        numerical_pipe = Pipeline([("impute", SimpleImputer(strategy="median")), ("scale", RobustScaler())])
        transformers.append(("numerical", numerical_pipe, list(numerical)))
    # sparse: stack to CSR whatever the density (scikit-learn's default threshold, 0.3, would
    # pick dense or sparse by density and the memory estimate could count on neither)
    prep = ColumnTransformer(transformers, remainder="drop", sparse_threshold=1.0 if sparse else 0.3)
    # no encoding: a frame keeps the category dtype the model reads the categories from
    return prep.set_output(transform="pandas") if native else prep


def _custom_encoder(spec: str):
    # heavy: the wrapper is a scikit-learn estimator, imported where a custom encoder is built
    from encbench.encoders.checked import build_from_json

    return build_from_json(spec)


def fold_indices(y: np.ndarray, n_folds: int, fold: int, *, split: str = "cv",
                 times: np.ndarray | None = None, gap: int = 0,
                 task: str = "binary") -> tuple[np.ndarray, np.ndarray]:
    """Train and test indices of outer fold ``fold``.

    ``split='cv'`` (published): for a classification ``task`` ``StratifiedKFold(n_folds)``
    without shuffling, so the folds follow the row order of the file; for ``'regression'``
    ``KFold(n_folds, shuffle=True, random_state=REGRESSION_FOLD_SEED)``, so a file sorted by
    the target does not give folds by target range. ``split='time'``: forward folds over
    ``times`` (:func:`encbench.engine.splits.forward_fold_indices`; ``gap`` training rows left
    out), for every task.
    """
    if split == "time":
        if times is None:
            raise ValueError("a time split needs the time of every row: got times=None")
        return forward_fold_indices(times, n_folds, fold, gap=gap)
    if split != "cv":
        raise ValueError(f"split must be 'cv' or 'time': got {split!r}")
    if not 0 <= fold < n_folds:
        raise ValueError(f"fold must be in [0, {n_folds}): got {fold!r}")
    splitter = get_task(task).outer_folds(n_folds)  # the task registry's (encbench/tasks.py)
    for index, split in enumerate(splitter.split(np.zeros(len(y)), y)):
        if index == fold:
            return split
    raise AssertionError("unreachable")


def inner_cv(task: str, seed: int):
    """The inner cross-validation of tuning: ``StratifiedKFold(5, shuffle=True, seed)`` for a
    classification task (the study's), ``KFold`` with the same folds count and seed for
    regression."""
    return get_task(task).inner_folds(INNER_FOLDS, seed)


class _Predictions:
    """Predictions of one fitted estimator on one test set, computed once per kind."""

    def __init__(self, estimator, X, method: str = "predict_proba", task: str = "binary"):
        self.estimator, self.X, self.method, self.task = estimator, X, method, task
        self._labels = self._scores = None

    def labels(self):
        if self._labels is None:
            self._labels = self.estimator.predict(self.X)
        return self._labels

    def scores(self):
        """The score of the positive class (column 1 of ``predict_proba``); for a multiclass
        task the whole matrix (one column per class)."""
        if self._scores is None:
            matrix = getattr(self.estimator, self.method)(self.X)
            self._scores = matrix if self.task == "multiclass" else matrix[:, 1]
        return self._scores


def score(scoring: str, y_true, predictions: _Predictions) -> float:
    """The metric on the test fold, from the metric registry: on probabilities for the metrics
    that need them (AUC: ``predict_proba[:, 1]``, the matrix for a multiclass task), on
    ``predict`` for the others."""
    return get_metric(scoring).score(y_true, predictions.labels, predictions.scores,
                                     predictions.task)


def _lgbm_metric(scoring: str, task: str = "binary"):
    """The scored metric as a LightGBM evaluation function (the early-stopping criterion).

    AUC is computed on the predicted probabilities and the other metrics on the probabilities
    rounded to labels (measured: rounding for AUC too, as the study's ``get_lgbm_scoring``
    reads, matches no published AUC cell; probabilities match them all).
    """
    metric = get_metric(scoring)

    def criterion(y_true, y_pred):
        return metric.name, metric.stopping_value(y_true, y_pred, task), metric.greater_is_better

    return criterion


def describe(stage: str, exc: BaseException) -> str:
    """Error text of a result row: where it failed, the exception type and message."""
    text = f"{stage}: {type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 3] + "..."


def result_row(task: Task, model: str, scoring: str, *, cv_score=None, seconds=None,
               status: str = "ok", error: str | None = None, encode_seconds=None) -> dict:
    """One row of the ``results`` table without ``run_id``.

    ``seconds`` (column ``time``) is the wall time of encoding + fitting or tuning +
    predicting; ``encode_seconds`` (column ``encode_time``) the time of encoding the training
    data alone, the quantity the published ``time`` reports.
    """
    if cv_score is not None and not math.isfinite(cv_score):
        status, error, cv_score = "failed", error or f"{scoring} is not finite: got {cv_score!r}", None
    return {
        "dataset": task.dataset, "encoder": task.encoder, "model": model, "tuning": task.tuning,
        "scoring": scoring, "fold": task.fold, "n_folds": task.n_folds, "cv_score": cv_score,
        "time": seconds, "status": status, "error": error, "encode_time": encode_seconds,
        "task": task.task,
    }


def unfinished_rows(task: Task, status: str, error: str, seconds: float | None = None) -> list[dict]:
    """Rows of a whole task that did not finish (``failed`` or ``timeout``)."""
    return [result_row(task, m, s, seconds=seconds, status=status, error=error)
            for m in task.models for s in task.scorings]


# -- the task ------------------------------------------------------------------------------------
class _Fold:
    """One outer fold of a dataset, with the training fold encoded at most once."""

    def __init__(self, task: Task, data: Payload):
        self.task, self.data = task, data
        X, categorical = data.X, list(data.categorical)
        split, times, time_column = task.split, None, task.time_column
        if split == "time":  # the time column orders the rows
            times = check_time_column(X, time_column)
        if time_column is not None and time_column in X.columns:  # and is never a feature
            X = X.drop(columns=[time_column])
            categorical = [c for c in categorical if c != time_column]
        self.kind = task.task  # binary, multiclass or regression
        train, test = fold_indices(data.y, task.n_folds, task.fold, split=split, times=times,
                                   gap=task.gap, task=self.kind)
        self.X_train = X.iloc[train].reset_index(drop=True)
        self.X_test = X.iloc[test].reset_index(drop=True)
        self.y_train, self.y_test = data.y[train], data.y[test]
        self.categorical = categorical
        cats = set(self.categorical)
        self.numerical = [c for c in X.columns if c not in cats]
        self._encoded = None

    def preprocessor(self):
        custom = self.task.custom
        return make_preprocessor(self.task.encoder, self.categorical, self.numerical, custom,
                                 sparse=self.sparse, task=self.kind)

    @cached_property
    def sparse(self) -> bool:
        """Whether this task encodes sparse (:func:`uses_sparse`); the dense size is estimated
        over every row of the dataset, so that every fold of an experiment decides alike."""
        task, custom = self.task, self.task.custom
        size = 0
        if task.encoder in SPARSE_ENCODERS and custom is None:  # nothing to count otherwise
            encoded = set(self.categorical)
            levels = {c: n for c, n in self.data.levels.items() if c in encoded}
            size = dense_bytes(task.encoder, len(self.data.y), levels, len(self.numerical))
        return uses_sparse(task.encoder, task.models, custom, dense_bytes=size)

    def encoded(self):
        """``(X_train_encoded, X_test_encoded, seconds)``; raises the encoder's exception."""
        if self._encoded is None:
            start = time.perf_counter()
            try:
                prep = self.preprocessor()
                train = prep.fit_transform(self.X_train, self.y_train)
                test = prep.transform(self.X_test)
            except Exception as exc:  # noqa: BLE001 - any encoder failure is recorded in the task's rows
                self._encoded = exc
            else:
                self._encoded = (train, test, time.perf_counter() - start)
        if isinstance(self._encoded, Exception):
            raise _StageError(f"encoder {self.task.encoder}", self._encoded)
        return self._encoded


class _StageError(Exception):
    """An exception with the stage of the protocol where it happened."""

    def __init__(self, stage: str, cause: BaseException):
        super().__init__(describe(stage, cause))
        self.cause = cause


def _fit(stage: str, function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except _StageError:
        raise
    except Exception as exc:
        raise _StageError(stage, exc) from exc


def _evaluate(fold: _Fold, scoring: str, estimator, X_test, model: str) -> float:
    predictions = _Predictions(estimator, X_test, get_model(model).auc_scores, fold.kind)
    return _fit(f"scoring {scoring}", score, scoring, fold.y_test, predictions)


def _no_tuning(fold: _Fold, model: str, scorings) -> dict:
    """Fit once on the encoded training fold; every scoring from the same fit."""
    train, test, encode_seconds = fold.encoded()
    start = time.perf_counter()
    estimator = _fit(f"model {model}", make_model(model, task=fold.kind).fit, train, fold.y_train)
    predictions = _Predictions(estimator, test, get_model(model).auc_scores, fold.kind)
    out = {}
    for scoring in scorings:
        try:
            value = _fit(f"scoring {scoring}", score, scoring, fold.y_test, predictions)
        except _StageError as exc:
            value = exc
        out[scoring] = (value, encode_seconds + time.perf_counter() - start, encode_seconds)
    return out


def _grid_search(fold: _Fold, model: str, scorings) -> dict:
    """Model tuning: GridSearchCV (inner stratified 5-fold; shuffled 5-fold for regression) on
    the once-encoded training fold, one search per scoring (the scoring is the search's
    criterion)."""
    from sklearn.model_selection import GridSearchCV

    train, test, encode_seconds = fold.encoded()
    out = {}
    for scoring in scorings:
        start = time.perf_counter()
        try:
            search = GridSearchCV(
                make_model(model, task=fold.kind), get_model(model).grid,
                scoring=get_metric(scoring).scorer_for(fold.kind), cv=inner_cv(fold.kind, GRID_CV_SEED),
                refit=True, n_jobs=1, error_score="raise",
            )
            _fit(f"model {model} (grid search)", search.fit, train, fold.y_train)
            value = _evaluate(fold, scoring, search.best_estimator_, test, model)
        except _StageError as exc:
            value = exc
        out[scoring] = (value, encode_seconds + time.perf_counter() - start, encode_seconds)
    return out


def _early_stopping(fold: _Fold, model: str, scorings) -> dict:
    """A model tuned by early stopping (LightGBM): part of the training fold is held out as the
    model's :class:`encbench.models.EarlyStopping` says, and the scored metric stops it.

    The preprocessing is fitted on the remaining rows, as in the study's code, so the
    validation rows are encoded like unseen data. One fit serves every scored metric
    (:meth:`encbench.models.EarlyStopping.fit_each`): each metric's score is the prediction of
    the trees up to its own best round, as a fit stopped by that metric alone would give.
    """
    from sklearn.model_selection import train_test_split

    stopping = get_model(model).early_stopping
    start = time.perf_counter()
    encode_seconds = None
    try:
        X_fit, X_val, y_fit, y_val = train_test_split(
            fold.X_train, fold.y_train, test_size=stopping.validation_fraction,
            random_state=stopping.validation_seed)
        try:
            prep = fold.preprocessor()
            encode_start = time.perf_counter()
            E_fit = prep.fit_transform(X_fit, y_fit)
            encode_seconds = time.perf_counter() - encode_start
            E_val, E_test = prep.transform(X_val), prep.transform(fold.X_test)
        except Exception as exc:
            raise _StageError(f"encoder {fold.task.encoder}", exc) from exc
        estimator = make_model(model, task=fold.kind)
        trees = _fit(f"model {model}", stopping.fit_each, estimator, E_fit, y_fit, E_val, y_val,
                     [get_metric(s) for s in scorings], fold.kind)
    except _StageError as exc:
        return {s: (exc, time.perf_counter() - start, encode_seconds) for s in scorings}
    values = {}
    for scoring in scorings:
        try:
            if isinstance(trees[scoring], Exception):
                raise _StageError(f"model {model}", trees[scoring])
            values[scoring] = _evaluate(fold, scoring, _FirstTrees(estimator, trees[scoring]), E_test, model)
        except _StageError as exc:
            values[scoring] = exc
    seconds = time.perf_counter() - start
    return {s: (values[s], seconds, encode_seconds) for s in scorings}


class _FirstTrees:
    """A fitted LightGBM estimator that predicts with its first ``n`` trees."""

    def __init__(self, estimator, n: int):
        self.estimator, self.n = estimator, n

    def predict(self, X):
        return self.estimator.predict(X, num_iteration=self.n)

    def predict_proba(self, X):
        return self.estimator.predict_proba(X, num_iteration=self.n)


def _bayes_search(fold: _Fold, model: str, scorings) -> dict:
    """Full tuning: BayesSearchCV over the whole pipeline (encoder inside), so each inner
    training fold is encoded independently; one search per scoring."""
    from sklearn.pipeline import Pipeline
    from skopt import BayesSearchCV

    space = {f"model__{k}": v for k, v in bayes_space(model).items()}
    out = {}
    for scoring in scorings:
        start = time.perf_counter()
        try:
            pipe = Pipeline([("preprocess", fold.preprocessor()),
                             ("model", make_model(model, tuning="full", task=fold.kind))])
            search = BayesSearchCV(
                pipe, space, n_iter=bayes_n_iter(space), scoring=get_metric(scoring).scorer_for(fold.kind),
                cv=inner_cv(fold.kind, BAYES_CV_SEED),
                random_state=BAYES_SEED, refit=True, n_jobs=1, error_score="raise",
            )
            _fit(f"model {model} with encoder {fold.task.encoder} (Bayesian search)", search.fit,
                 fold.X_train, fold.y_train)
            value = _evaluate(fold, scoring, search.best_estimator_, fold.X_test, model)
        except _StageError as exc:
            value = exc
        # The search encodes many inner folds: there is no single training-fold encoding time.
        out[scoring] = (value, time.perf_counter() - start, None)
    return out


def _strategy(model: str, tuning: str, encoder: str | None = None, task: str = "binary"):
    if encoder is not None and not applies_to_task(encoder, task):
        raise _StageError(f"encoder {encoder}", ValueError(
            f"encoder {encoder!r} does not apply to a {task} target: got task={task!r}"))
    if encoder is not None and not applies_to(encoder, model):
        takers = ", ".join(n for n, spec in MODEL_REGISTRY.items() if spec.native_categories)
        raise _StageError(f"model {model}", ValueError(
            f"encoder {encoder!r} does not apply to model {model!r}: it needs a model that takes "
            f"categories ({takers})"))
    if tuning == "full":
        return _bayes_search
    if get_model(model).early_stopping is not None:  # its tuning under 'no' and 'model'
        return _early_stopping
    return _grid_search if tuning == "model" else _no_tuning


def run_task(task: Task, data: Payload) -> list[dict]:
    """Evaluate one task; return one row per (model, scoring), never raise.

    Parameters
    ----------
    task : Task
    data : Payload
        The task's dataset.

    Returns
    -------
    list of dict
        Rows with the columns of ``results`` except ``run_id``. ``time`` is the wall time in
        seconds of encoding the training fold plus fitting (or tuning) the model and predicting;
        with full tuning and for LightGBM it covers the whole search, encodings included.
        ``encode_time`` is the time of encoding the training fold alone (for LightGBM, the 90 %
        it is fitted on; None with full tuning), comparable with the published ``time``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence, deprecation and pandas noise of the zoo
        try:
            fold = _Fold(task, data)
        except Exception as exc:
            log.debug("task %s could not split its fold", task.name, exc_info=True)
            return unfinished_rows(task, "failed", describe("outer fold", exc))
        rows = []
        for model in task.models:
            start = time.perf_counter()
            try:
                results = _strategy(model, task.tuning, None if task.custom
                                    else task.encoder, fold.kind)(fold, model, task.scorings)
            except _StageError as exc:
                seconds = time.perf_counter() - start
                results = {s: (exc, seconds, None) for s in task.scorings}
            except Exception as exc:  # a bug of ours: still a recorded failure, never a crash
                log.debug("task %s model %s", task.name, model, exc_info=True)
                seconds = time.perf_counter() - start
                results = {s: (_StageError(f"model {model}", exc), seconds, None)
                           for s in task.scorings}
            for scoring in task.scorings:
                value, seconds, encode_seconds = results[scoring]
                if isinstance(value, Exception):
                    rows.append(result_row(task, model, scoring, seconds=seconds, status="failed",
                                           error=str(value), encode_seconds=encode_seconds))
                else:
                    rows.append(result_row(task, model, scoring, cv_score=value, seconds=seconds,
                                           encode_seconds=encode_seconds))
        return rows
