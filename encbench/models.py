"""The model registry: one :class:`ModelSpec` per model.

Everything that needs to know a model reads its entry here: the engine builds it
(:meth:`ModelSpec.make`), tunes it (:attr:`ModelSpec.grid` for model tuning,
:meth:`ModelSpec.space` for full tuning), fits it (:attr:`ModelSpec.early_stopping`), decides
whether a fold may be encoded sparse for it (:attr:`ModelSpec.sparse_identical`, and
:attr:`ModelSpec.takes_sparse` above the engine's size threshold) and asks it for AUC's scores
(:attr:`ModelSpec.auc_scores`); the vocabulary (:data:`encbench.vocab.MODELS`), the pages' model
lists, ``warm_up`` and the memory guard read the registry.

The study's five models carry its defaults and seeds (Matteucci et al. 2023, repository
``DrCohomology/EncoderBenchmarking``, ``src/config.py``: ``RANDOM_STATE + {2, 4, 6, 3}`` with
``RANDOM_STATE = 1``). Models beyond the study (``in_study=False``) use their library's defaults
with a fixed seed, written in the entry and in docs/protocol.md.

Adding a model: one entry in :data:`MODEL_REGISTRY` and a test in ``tests/test_models.py``.

This module imports nothing heavy: the factories import their library when called.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from encbench.tasks import CLASSIFICATION, TASKS


@dataclass(frozen=True)
class EarlyStopping:
    """A model tuned by early stopping on a held-out part of the training fold.

    The preprocessing is fitted on the remaining rows, so the validation rows are encoded like
    unseen data; the scored metric is the stopping criterion.

    Attributes
    ----------
    validation_fraction : float
        Share of the training fold held out (``train_test_split(test_size=...)``).
    validation_seed : int
        ``random_state`` of that split.
    patience : int
        Rounds without improvement before stopping.
    """

    validation_fraction: float
    validation_seed: int
    patience: int

    def fit(self, estimator, X, y, X_val, y_val, metric, task: str = "binary"):
        """Fit ``estimator`` (LightGBM's scikit-learn API) with ``metric`` (a
        :class:`encbench.metrics.MetricSpec`) on the validation rows as stopping criterion,
        computed for ``task`` (:meth:`encbench.metrics.MetricSpec.stopping_value`)."""
        import lightgbm

        def criterion(y_true, y_pred):
            return metric.name, metric.stopping_value(y_true, y_pred, task), metric.greater_is_better

        return estimator.fit(X, y, eval_X=X_val, eval_y=y_val, eval_metric=criterion,
                             callbacks=[lightgbm.early_stopping(self.patience, first_metric_only=True,
                                                                verbose=False)])

    def fit_each(self, estimator, X, y, X_val, y_val, metrics, task: str = "binary") -> dict:
        """One fit of ``estimator`` that stops as :meth:`fit` would for each of ``metrics``.

        The boosting rounds do not depend on the metrics that watch them, so the first ``k``
        trees of one long fit are the trees of a fit stopped at ``k``. Each metric follows
        LightGBM's own early-stopping rule on its own (its best round is the first strictly
        better one; it stops ``patience`` rounds after it, or at the last round), and the fit
        ends once every metric has stopped.

        Returns
        -------
        dict
            Metric name -> the number of trees to predict with (its best round, counted from 1),
            or the exception its criterion raised on the validation rows.
        """
        failures = {}

        def criterion_of(metric):
            def criterion(y_true, y_pred):
                try:
                    value = metric.stopping_value(y_true, y_pred, task)
                except Exception as exc:  # noqa: BLE001 - this metric fails alone, as in its own fit
                    failures.setdefault(metric.name, exc)
                    value = float("nan")
                return metric.name, value, metric.greater_is_better
            return criterion

        watch = _EachMetricStopping(self.patience)
        estimator.fit(X, y, eval_X=X_val, eval_y=y_val,
                      eval_metric=[criterion_of(m) for m in metrics], callbacks=[watch])
        return {m.name: failures.get(m.name, watch.best_round.get(m.name, -1) + 1) for m in metrics}


class _EachMetricStopping:
    """LightGBM callback: ``lightgbm.early_stopping(patience, first_metric_only=True)``'s rule for
    every metric at once; training ends when the last metric stops.

    ``best_round`` holds each metric's best round (0-based) once it has stopped.
    """

    order = 30
    before_iteration = False

    def __init__(self, patience: int):
        self.patience = patience
        self.best_round: dict[str, int] = {}
        self._best: dict[str, tuple[float, int]] = {}

    def __call__(self, env) -> None:
        import lightgbm

        last = env.iteration == env.end_iteration - 1
        for result in env.evaluation_result_list:
            name, value, maximize = result.metric_name, result.metric_value, result.maximize
            if name in self.best_round:
                continue
            best = self._best.get(name)
            # the first round is the best so far whatever its value (NaN too), as in LightGBM
            if best is None or (value > best[0] if maximize else value < best[0]):
                best = self._best[name] = (value, env.iteration)
            if env.iteration - best[1] >= self.patience or last:
                self.best_round[name] = best[1]
        if len(self.best_round) == len({r.metric_name for r in env.evaluation_result_list}):
            round_ = max(self.best_round.values())
            raise lightgbm.callback.EarlyStopException(best_iteration=round_, best_score=[])


@dataclass(frozen=True)
class ModelSpec:
    """A model of the benchmark.

    Attributes
    ----------
    name : str
        Short name stored in the ``model`` column (``"LogReg"``).
    description : str
        The estimator and its configuration, in words.
    tasks : tuple of str
        The task types it serves.
    factory : callable
        ``factory(tuning, task) -> estimator``: a new, unfitted estimator with the defaults and
        seed for ``task`` (a classifier for ``"binary"`` and ``"multiclass"``, a regressor for
        ``"regression"``; ``tuning="full"`` may give another configuration, e.g. without early
        stopping).
    seed : int or None
        Its ``random_state`` (None: the estimator draws no random numbers).
    grid : mapping or None
        Model tuning: the ``GridSearchCV`` grid on the once-encoded training fold. None: the
        model is tuned by :attr:`early_stopping` instead.
    space : callable
        Full tuning: ``space() -> {parameter: skopt dimension}`` of ``BayesSearchCV``.
    early_stopping : EarlyStopping or None
        Set for a model tuned by early stopping under no and model tuning (LightGBM).
    sparse_identical : frozenset of str
        Encoders whose sparse (CSR) output gives this model the dense output's predictions bit
        for bit (measured by ``benchmarks/bench_wide.py identity``); a fold is encoded sparse
        at any size when every model of its task lists the encoder.
    takes_sparse : bool
        Accepts a scipy.sparse CSR matrix as input. A fold whose dense encoding would exceed
        :data:`encbench.engine.sparse.SPARSE_ABOVE_BYTES` is encoded sparse when every model
        of its task takes sparse input, whether or not its scores stay bit-identical.
    auc_scores : str
        The estimator method AUC is computed on (its column of the positive class).
    native_categories : bool
        Takes categorical columns as they are (pandas ``category`` dtype), so the ``Native``
        encoder (no encoding) applies to it.
    in_study : bool
        One of the published study's five models.
    """

    name: str
    description: str
    tasks: tuple[str, ...]
    factory: Callable[[str, str], object]
    seed: int | None
    grid: Mapping[str, list] | None
    space: Callable[[], dict]
    early_stopping: EarlyStopping | None = None
    sparse_identical: frozenset[str] = field(default_factory=frozenset)
    takes_sparse: bool = False
    auc_scores: str = "predict_proba"
    native_categories: bool = False
    in_study: bool = False

    def make(self, tuning: str = "no", task: str | None = None):
        """A new, unfitted estimator for ``task`` (see :attr:`factory`); None is the first task
        the model serves (binary for every model but Ridge).

        Raises
        ------
        ValueError
            If the model does not serve ``task``.
        """
        task = self.tasks[0] if task is None else task
        if task not in self.tasks:
            raise ValueError(f"model {self.name!r} does not serve task {task!r}: got task={task!r}; "
                             f"it serves {', '.join(self.tasks)}")
        return self.factory(tuning, task)


# -- the study's models ----------------------------------------------------------------------
#: Seeds as published: ``config.py``'s RANDOM_STATE + {2, 4, 6, 3} with RANDOM_STATE = 1.
#: LightGBM's default configuration draws no random numbers: its seed changes nothing.
_SEEDS = {"DT": 3, "SVM": 5, "LogReg": 7, "LGBM": 4, "HGB": 1}
#: LightGBM under no and model tuning: up to 3000 trees, early stopping after 50 rounds on a
#: 10 % validation split with random_state RANDOM_STATE + 1 = 2 (measured against the published
#: cells: the seed 1445 of the study's ``main6.py`` does not reproduce them).
LGBM_MAX_TREES = 3000
LGBM_EARLY_STOPPING = EarlyStopping(validation_fraction=0.1, validation_seed=2, patience=50)


def _decision_tree(tuning: str, task: str = "binary"):
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    if task == "regression":
        return DecisionTreeRegressor(max_depth=5, random_state=_SEEDS["DT"])
    return DecisionTreeClassifier(max_depth=5, random_state=_SEEDS["DT"])


def _svm(tuning: str, task: str = "binary"):
    from sklearn.svm import SVC, SVR

    if task == "regression":  # SVR draws no random numbers
        return SVR(kernel="rbf", C=1.0, gamma="scale")

    # probability=True is deprecated in scikit-learn 1.9 (removal in 1.11) but is what the study
    # used (libsvm's internal Platt scaling); the engine silences its FutureWarning.
    return SVC(kernel="rbf", C=1.0, gamma="scale", probability=True, random_state=_SEEDS["SVM"])


def _knn(tuning: str, task: str = "binary"):
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    if task == "regression":
        return KNeighborsRegressor(n_neighbors=5)
    return KNeighborsClassifier(n_neighbors=5)


def _logreg(tuning: str, task: str = "binary"):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(solver="lbfgs", max_iter=100, random_state=_SEEDS["LogReg"])


def _lgbm(tuning: str, task: str = "binary"):
    from lightgbm import LGBMClassifier, LGBMRegressor

    estimator = LGBMRegressor if task == "regression" else LGBMClassifier
    # n_jobs=1: task processes run in parallel already, and one thread keeps results identical
    # across executors.
    if tuning == "full":  # a plain estimator whose n_estimators the Bayesian search sets
        return estimator(random_state=_SEEDS["LGBM"], n_jobs=1, verbose=-1)
    # no built-in metric: the scored metric is the early-stopping criterion
    return estimator(n_estimators=LGBM_MAX_TREES, metric="None", random_state=_SEEDS["LGBM"],
                     n_jobs=1, verbose=-1)


def _hgb(tuning: str, task: str = "binary"):
    from encbench.hgb import HGBClassifier, HGBRegressor

    # scikit-learn's defaults (its own early stopping switches on above 10,000 rows, on a
    # validation split drawn with this seed); a category column wider than its 255 bins keeps
    # its 254 most frequent levels and groups the others (encbench.hgb)
    if task == "regression":
        return HGBRegressor(random_state=_SEEDS["HGB"])
    return HGBClassifier(random_state=_SEEDS["HGB"])


def _ridge(tuning: str, task: str = "regression"):
    from sklearn.linear_model import Ridge

    # the solver 'auto' is deterministic: no seed
    return Ridge(alpha=1.0)


def _integer(low: int, high: int, prior: str = "uniform"):
    from skopt.space import Integer

    return Integer(low, high, prior=prior)


def _real(low: float, high: float, prior: str = "uniform"):
    from skopt.space import Real

    return Real(low, high, prior=prior)


#: Encoders whose sparse output stores about one value per row and categorical column, so that
#: it saves memory whatever the number of levels (Bin's is about half ones: nothing saved); the
#: models whose predictions are unchanged on sparse input list them in ``sparse_identical``, and
#: :mod:`encbench.engine.sparse` encodes them sparse above its size threshold.
SPARSE_ENCODERS = frozenset({"OH", "Sum"})

#: Every model, in display order: the study's five (its order), then the models beyond it.
#: ``sparse_identical``: DT and LGBM give 150 of 150 fits identical per encoder on OH and Sum;
#: kNN (distance ties fall in another order), LogReg (lbfgs sums in another order) and SVM
#: (gamma='scale' is computed by another formula on sparse input) differ, so they stay dense;
#: HGB does not take sparse input. ``takes_sparse``: every model but HGB accepts CSR input.
MODEL_REGISTRY = MappingProxyType({m.name: m for m in (
    ModelSpec("DT", "decision tree, max_depth=5", TASKS, _decision_tree, _SEEDS["DT"],
              grid={"max_depth": [2, 5, None]}, space=lambda: {"max_depth": _integer(2, 5)},
              sparse_identical=SPARSE_ENCODERS, takes_sparse=True, in_study=True),
    ModelSpec("LGBM", "LightGBM, early stopping on a 10 % validation split", TASKS, _lgbm,
              _SEEDS["LGBM"], grid=None,
              space=lambda: {"n_estimators": _integer(1, 1000, "log-uniform")},
              early_stopping=LGBM_EARLY_STOPPING, sparse_identical=SPARSE_ENCODERS,
              takes_sparse=True, native_categories=True, in_study=True),
    ModelSpec("SVM", "support vector machine, RBF kernel, C=1, gamma='scale'", TASKS, _svm,
              _SEEDS["SVM"], grid={"C": [0.1, 1], "gamma": [0.1, 1, 10]},
              space=lambda: {"C": _real(0.1, 2), "gamma": _real(0.1, 100, "log-uniform")},
              takes_sparse=True, in_study=True),
    ModelSpec("kNN", "k nearest neighbours, k=5", TASKS, _knn, None,
              grid={"n_neighbors": [2, 5, 10]}, space=lambda: {"n_neighbors": _integer(2, 10)},
              takes_sparse=True, in_study=True),
    ModelSpec("LogReg", "logistic regression, lbfgs, 100 iterations", CLASSIFICATION, _logreg,
              _SEEDS["LogReg"], grid={"C": [0.1, 1, 10]}, space=lambda: {"C": _real(0.2, 5)},
              takes_sparse=True, in_study=True),
    ModelSpec("HGB", "scikit-learn's HistGradientBoostingClassifier, defaults", TASKS, _hgb,
              _SEEDS["HGB"], grid={"learning_rate": [0.05, 0.1, 0.2]},
              space=lambda: {"learning_rate": _real(0.01, 0.5, "log-uniform"),
                             "max_leaf_nodes": _integer(8, 64, "log-uniform")},
              native_categories=True),
    ModelSpec("Ridge", "ridge regression, alpha=1", ("regression",), _ridge, None,
              grid={"alpha": [0.1, 1, 10]}, space=lambda: {"alpha": _real(0.2, 5)},
              takes_sparse=True),
)})


def get_model(name: str) -> ModelSpec:
    """The registry entry of a model.

    Raises
    ------
    ValueError
        If ``name`` is not a registered model.
    """
    try:
        return MODEL_REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown model: got {name!r}; expected one of {list(MODEL_REGISTRY)}") from None


def models_for(task: str) -> tuple[str, ...]:
    """Names of the models that serve ``task``, in display order."""
    return tuple(name for name, spec in MODEL_REGISTRY.items() if task in spec.tasks)


def sparse_models() -> dict[str, frozenset[str]]:
    """``{encoder: models that take its sparse output unchanged}``, from the registry."""
    out: dict[str, set[str]] = {}
    for spec in MODEL_REGISTRY.values():
        for encoder in spec.sparse_identical:
            out.setdefault(encoder, set()).add(spec.name)
    return {encoder: frozenset(models) for encoder, models in out.items()}
