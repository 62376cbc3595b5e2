"""Canonical vocabulary of encbench and the mapping from published codes (docs/ARCHITECTURE.md,
Vocabulary and registries).

Every name used in the database, the API, the UI and exports comes from here: the factors of an
experiment and the order of their values (:data:`FACTORS`, :func:`ordered`), and the registry of
aggregation strategies (:data:`STRATEGY_REGISTRY`: name, description, direction, parameters), which
the consensus code in :mod:`encbench.stats.consensus`, the pages and the exports read.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType

from encbench import tasks
from encbench.constraints import OPEN_UNIT, POSITIVE_INT, UNIT_RIGHT, Interval
from encbench.metrics import METRIC_REGISTRY, metrics_for
from encbench.models import MODEL_REGISTRY, models_for

ENCODERS: tuple[str, ...] = (
    "Drop", "OH", "Ord", "Bin", "Count", "Sum", "MH", "MT", "WoE", "GLMM", "CB",
    "ME_0.1", "ME_1", "ME_10", "DMT_2", "DMT_5", "DMT_10",
    "PBMT_0.001", "PBMT_0.01", "PBMT_0.1",
    "CVMT_2", "CVMT_5", "CVMT_10", "BUMT_2", "BUMT_5", "BUMT_10",
    "CVGLMM_2", "CVGLMM_5", "CVGLMM_10", "BUGLMM_2", "BUGLMM_5", "BUGLMM_10",
)
#: encoders beyond the study (practitioners' encoders of today), never mixed into the 32
BEYOND_ENCODERS: tuple[str, ...] = (
    "SkTE", "String", "Gap", "JS", "LOO", "Quantile", "Summary", "Helmert", "BackDiff", "Hash",
    "Native",
)
#: every encoder name a grid accepts: the study's 32, then those beyond it
ALL_ENCODERS: tuple[str, ...] = ENCODERS + BEYOND_ENCODERS
#: task types, read off the task registry (:mod:`encbench.tasks`): the study's binary
#: classification, multiclass classification and regression; a consensus ranks within one task
TASKS: tuple[str, ...] = tasks.TASKS
#: every model of the registry (:mod:`encbench.models`) that serves binary targets, in display
#: order: the study's five, then those beyond it (HGB)
MODELS: tuple[str, ...] = models_for("binary")
#: the published study's five models
STUDY_MODELS: tuple[str, ...] = tuple(m for m in MODELS if MODEL_REGISTRY[m].in_study)
#: every metric of the registry (:mod:`encbench.metrics`) that serves binary targets: the study's four
METRICS: tuple[str, ...] = metrics_for("binary")
#: every model of the registry, whatever its task (what a grid accepts)
ALL_MODELS: tuple[str, ...] = tuple(MODEL_REGISTRY)
#: every metric of the registry, whatever its task (what a grid accepts)
ALL_METRICS: tuple[str, ...] = tuple(METRIC_REGISTRY)
TUNINGS: tuple[str, ...] = ("no", "model", "full")
#: outer evaluation schemes: the published stratified folds, forward folds over time
SPLITS: tuple[str, ...] = ("cv", "time")
#: the columns that define one experiment setting (a "combination"), in display order
FACTORS: tuple[str, ...] = ("model", "tuning", "scoring")


# --------------------------------------------------------------------------- aggregation strategies

@dataclass(frozen=True)
class StrategyParameter:
    """A keyword parameter of an aggregation strategy, its constraint and its widget.

    Attributes
    ----------
    name : str
        The keyword (``consensus(scores, "Q-Th", theta=0.9)``), also the URL key of its widget.
    default : float, int or None
        The value used when the parameter is not given.
    constraint : encbench.constraints.Interval
        The values the library accepts: the check (:meth:`validate`, which
        :func:`encbench.stats.params_for` and the statistics apply), its message and its words
        (:attr:`valid`).
    help : str
        What it means (the widget's tooltip, the CLI's help).
    in_label : bool
        Whether it changes what a ranking means, and so is named in the ranking's label
        (``"Q-Th (theta=0.95)"``) in tables, charts and exports.
    low, high, step : float or None
        The range a slider in the app offers; or
    options : tuple of float or None
        the values a select slider offers. All None: the app does not offer the parameter.
        What the app offers lies inside :attr:`constraint`, and so does the default (checked
        when the entry is made).
    """

    name: str
    default: float | int | None
    constraint: Interval
    help: str
    in_label: bool = False
    low: float | None = None
    high: float | None = None
    step: float | None = None
    options: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        self.constraint.check(self.default, f"the default of {self.name}")
        if self.options is not None:
            for option in self.options:
                self.constraint.check(option, f"an option of {self.name}")
        elif self.low is not None:
            if self.high is None or self.step is None or not self.step > 0:
                raise ValueError(f"the slider of {self.name} needs low, high and a positive step: got "
                                 f"{self.low!r}, {self.high!r}, {self.step!r}")
            if not self.constraint.accepts_range(self.low, self.high):
                raise ValueError(f"the slider of {self.name} offers {self.low:g} to {self.high:g}, outside "
                                 f"{self.constraint.describe()}")

    @property
    def offered(self) -> bool:
        """Whether the app offers a widget for this parameter."""
        return self.options is not None or self.low is not None

    @property
    def valid(self) -> str:
        """The values the library accepts, in words (``"a number in (0, 1]"``)."""
        return self.constraint.describe()

    @property
    def bounds(self) -> tuple[float, float] | None:
        """The lowest and highest value its widget offers; None when the app offers none."""
        if self.options is not None:
            return min(self.options), max(self.options)
        return (self.low, self.high) if self.low is not None else None  # type: ignore[return-value]

    def validate(self, value: object, strategy: str | Iterable[str] | None = None) -> float | int | None:
        """``value`` checked and converted (``int`` or ``float``).

        Parameters
        ----------
        value : object
            What a caller passed.
        strategy : str or iterable of str, optional
            The strategy (or strategies) the value is for, named in the error.

        Raises
        ------
        ValueError
            Naming the strategy (when given), the parameter, what it accepts and the value:
            ``"strategy 'Q-Th': theta must be a number in (0, 1]: got 1.5"``.
        """
        names = [strategy] if isinstance(strategy, str) else list(strategy or ())
        owner = (f"strateg{'y' if len(names) == 1 else 'ies'} {', '.join(map(repr, names))}"
                 if names else None)
        return self.constraint.check(value, self.name, owner=owner)


@dataclass(frozen=True)
class Strategy:
    """An aggregation strategy: per-dataset results of encoders -> one consensus ranking.

    Attributes
    ----------
    name : str
        Short name (``"R-M"``): R- aggregates ranks, Q- aggregates scores (the study's naming).
    description : str
        One phrase for help texts (``"mean per-dataset rank"``).
    higher_is_better : bool or None
        Direction of the per-encoder aggregate the strategy computes (mean rank: lower is
        better; mean score: higher). None: the strategy yields an order directly (R-Kem).
    uses_scores : bool
        Aggregates raw scores rather than ranks, so pooling several metrics mixes their scales.
    heuristic : bool
        One of the study's heuristics, vectorised over combinations and in the default sets;
        False for the exact Kemeny-Young solve and the fitted models (Q-Imp's imputation model,
        Elo's Bradley-Terry ratings).
    params : tuple of StrategyParameter
        Its keyword parameters.
    ratio_scale : bool
        Only defined for a bounded, non-negative, higher-is-better metric (accuracies, AUC:
        :attr:`encbench.metrics.MetricSpec.ratio_scale`): Q-Th's ``theta x best`` and Q-Imp's
        ``quality x difficulty`` mean nothing on an error such as RMSE, so the statistics refuse
        such a metric for them.
    cost : str or None
        None for a strategy computed by array operations over many rankings at once. Otherwise
        the work one ranking takes, in words (``"exact Kemeny solve"``): the strategy is
        :attr:`expensive`, solved one ranking at a time, so pages show a spinner while it runs
        and leave it out of bootstrap intervals (a solve per resample), and
        :func:`encbench.stats.replicability` spreads its samples over processes.
    worker : str or None
        Set for a strategy that pages computing it over many samples (Replicability) run in a
        worker process, with progress and a Cancel button, never in the server: the key naming
        its jobs and buttons there (``"kem"``: ``kem-cancel``). None: computed in the page.
    """

    name: str
    description: str
    higher_is_better: bool | None
    uses_scores: bool
    heuristic: bool = True
    params: tuple[StrategyParameter, ...] = ()
    ratio_scale: bool = False
    cost: str | None = None
    worker: str | None = None

    def __post_init__(self) -> None:
        if self.worker is not None and self.cost is None:
            raise ValueError(f"strategy {self.name!r} runs in a worker process but declares no cost: "
                             "say what one ranking takes (cost=...)")

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def expensive(self) -> bool:
        """Solved one ranking at a time (:attr:`cost`), too slow for a bootstrap in the page."""
        return self.cost is not None

    @property
    def in_worker(self) -> bool:
        """Run in a worker process by the pages that compute it over many samples."""
        return self.worker is not None


THETA = StrategyParameter(
    "theta", 0.95, UNIT_RIGHT,
    "Q-Th counts the datasets where an encoder scores at least theta times the best score.",
    in_label=True, low=0.50, high=1.00, step=0.01)
ALPHA = StrategyParameter(
    "alpha", 0.05, OPEN_UNIT,
    "Significance level of the Nemenyi tests (R-Nem and the CD diagram).",
    in_label=True, options=(0.01, 0.05, 0.1))
TIME_LIMIT = StrategyParameter(
    "time_limit", None, Interval(float, 0, None, none="no limit", unit="seconds"),
    "Time limit of each exact Kemeny-Young solve (HiGHS).")
N_ITER = StrategyParameter(
    "n_iter", 10, POSITIVE_INT,
    "Correction sweeps when fitting score ~ encoder quality x dataset difficulty.")

#: Every aggregation strategy, in display order (docs/ARCHITECTURE.md, Consensus rankings). Adding one: an entry here,
#: its computation in :mod:`encbench.stats.consensus` (``@_computes(name)``) and its test.
STRATEGY_REGISTRY = MappingProxyType({s.name: s for s in (
    Strategy("R-M", "mean per-dataset rank", higher_is_better=False, uses_scores=False),
    Strategy("R-Md", "median per-dataset rank", higher_is_better=False, uses_scores=False),
    Strategy("R-B", "times in the best tier", higher_is_better=True, uses_scores=False),
    Strategy("R-W", "times in the worst tier (fewer is better)", higher_is_better=False,
             uses_scores=False),
    Strategy("Q-M", "mean score", higher_is_better=True, uses_scores=True),
    Strategy("Q-Md", "median score", higher_is_better=True, uses_scores=True),
    Strategy("Q-RM", "mean IQR-rescaled score", higher_is_better=True, uses_scores=True),
    Strategy("Q-Th", "times within theta of the dataset's best score", higher_is_better=True,
             uses_scores=True, params=(THETA,), ratio_scale=True),
    Strategy("R-Nem", "encoders significantly better (Friedman + Nemenyi at alpha; fewer is better)",
             higher_is_better=False, uses_scores=False, params=(ALPHA,)),
    Strategy("R-Kem", "exact Kemeny-Young weak order (HiGHS)", higher_is_better=None,
             uses_scores=False, heuristic=False, params=(TIME_LIMIT,), cost="exact Kemeny solve",
             worker="kem"),
    Strategy("Q-Imp", "quality of the score ~ encoder quality x dataset difficulty model (imputes missing)",
             higher_is_better=True, uses_scores=True, heuristic=False, params=(N_ITER,),
             ratio_scale=True),
    Strategy("Elo", "Elo rating: Bradley-Terry fit to the pairwise wins over datasets (ties half)",
             higher_is_better=True, uses_scores=False, heuristic=False),
)})
#: strategy names in display order
AGGREGATIONS: tuple[str, ...] = tuple(STRATEGY_REGISTRY)


def strategy_help() -> str:
    """Every strategy with its description, for a selector's help (``"R-M: mean ...; R-Md: ..."``)."""
    return "; ".join(f"{s.name}: {s.description}" for s in STRATEGY_REGISTRY.values())


def expensive_strategies(strategies: Iterable[str]) -> list[str]:
    """The strategies among ``strategies`` solved one ranking at a time (:attr:`Strategy.expensive`),
    in their order; names the registry lacks are left out."""
    return [s for s in strategies if s in STRATEGY_REGISTRY and STRATEGY_REGISTRY[s].expensive]


def worker_strategies(strategies: Iterable[str]) -> list[str]:
    """The strategies among ``strategies`` that pages run in a worker process
    (:attr:`Strategy.in_worker`), in their order; names the registry lacks are left out."""
    return [s for s in strategies if s in STRATEGY_REGISTRY and STRATEGY_REGISTRY[s].in_worker]


def offered_parameters() -> list[tuple[StrategyParameter, tuple[str, ...]]]:
    """The parameters the app offers a widget for, each with the strategies that use it."""
    out: dict[str, tuple[StrategyParameter, tuple[str, ...]]] = {}
    for strategy in STRATEGY_REGISTRY.values():
        for param in strategy.params:
            if param.offered:
                users = out[param.name][1] if param.name in out else ()
                out[param.name] = (param, (*users, strategy.name))
    return list(out.values())


# --------------------------------------------------------------------------- vocabulary order

#: the order in which each factor's values are listed (tables, charts, filters)
ORDERS: dict[str, tuple[str, ...]] = {
    "model": tuple(MODEL_REGISTRY), "tuning": TUNINGS, "scoring": tuple(METRIC_REGISTRY),
    "split": SPLITS, "strategy": AGGREGATIONS, "task": TASKS,
}


def order_key(factor: str, value: object) -> tuple[int, str]:
    """Sort key of a factor value: its place in :data:`ORDERS`, unknown values after, by text."""
    order = ORDERS.get(factor, ())
    text = str(value)
    return (order.index(text), "") if text in order else (len(order), text)


def ordered(factor: str, values: Iterable[object]) -> list[str]:
    """Distinct values of a factor, as text, in vocabulary order (e.g. tuning: no, model, full).

    Values the vocabulary does not know come after, sorted.
    """
    return sorted(dict.fromkeys(map(str, values)), key=lambda v: order_key(factor, v))

# Published codes -> canonical names (docs/ARCHITECTURE.md, Vocabulary and registries).
_FIXED_ENCODER_CODES = {
    "BE": "Bin", "CBE": "CB", "CE": "Count", "DE": "Drop", "MHE": "MH", "OE": "Ord",
    "OHE": "OH", "RGLMME": "GLMM", "SE": "Sum", "TE": "MT", "WOEE": "WoE",
    "ME01E": "ME_0.1", "ME1E": "ME_1", "ME10E": "ME_10",
    "PBTE0001": "PBMT_0.001", "PBTE001": "PBMT_0.01", "PBTE01": "PBMT_0.1",
}
_PATTERN_ENCODER_CODES = (
    (re.compile(r"^DTEM(\d+)$"), "DMT_{}"),
    (re.compile(r"^BUCV(\d+)RGLMME$"), "BUGLMM_{}"),
    (re.compile(r"^BUCV(\d+)TE$"), "BUMT_{}"),
    (re.compile(r"^CV(\d+)RGLMME$"), "CVGLMM_{}"),
    (re.compile(r"^CV(\d+)TE$"), "CVMT_{}"),
)
MODEL_CODES = {"DTC": "DT", "LGBMC": "LGBM", "SVC": "SVM", "KNC": "kNN", "LR": "LogReg"}
METRIC_CODES = {"BACC": "BAcc", "ACC": "Acc", "F1": "F1", "AUC": "AUC"}
TUNING_CODES = {t: t for t in TUNINGS}


def encoder_from_code(code: str) -> str:
    """Map a published encoder code (e.g. ``"CV5TE"``) to its canonical name (``"CVMT_5"``).

    Raises
    ------
    ValueError
        If the code is not one of the study's codes or maps to a name outside :data:`ENCODERS`.
    """
    name = _FIXED_ENCODER_CODES.get(code)
    if name is None:
        for pattern, template in _PATTERN_ENCODER_CODES:
            match = pattern.match(code)
            if match:
                name = template.format(match.group(1))
                break
    if name is None or name not in ENCODERS:
        raise ValueError(f"unknown published encoder code: got {code!r}")
    return name


def _lookup(table: dict[str, str], code: str, kind: str) -> str:
    try:
        return table[code]
    except KeyError:
        raise ValueError(f"unknown published {kind} code: got {code!r}") from None


def model_from_code(code: str) -> str:
    """Map a published model code (``"LR"``) to its canonical name (``"LogReg"``)."""
    return _lookup(MODEL_CODES, code, "model")


def metric_from_code(code: str) -> str:
    """Map a published scoring code (``"BACC"``) to its canonical name (``"BAcc"``)."""
    return _lookup(METRIC_CODES, code, "scoring")


def tuning_from_code(code: str) -> str:
    """Validate a published tuning value (already canonical: no, model, full)."""
    return _lookup(TUNING_CODES, code, "tuning")


def _check_registries() -> None:
    """Every model and metric serves known task types (checked at import)."""
    for kind, registry in (("model", MODEL_REGISTRY), ("metric", METRIC_REGISTRY)):
        for name, spec in registry.items():
            unknown = [t for t in spec.tasks if t not in TASKS]
            if unknown or not spec.tasks:
                raise ValueError(f"{kind} {name!r} serves unknown task types: got {spec.tasks!r}")


_check_registries()
