"""The registry of encoder configurations: the study's 32, then those beyond it.

Engine, app and tests all read :data:`REGISTRY` (the study's 32, in
:data:`encbench.vocab.ENCODERS` order), :data:`BEYOND_REGISTRY` (the encoders practitioners use
today, :data:`encbench.vocab.BEYOND_ENCODERS`, family ``beyond the study``) or
:data:`ALL_REGISTRY` (both); :func:`make_encoder` builds a configured, unfitted encoder from a
name of either. The study's configurations are never mixed with the others: "the 32" is
:data:`REGISTRY`.

Importing this module imports no encoder: the classes are named here (:class:`_LazyClass`) and
imported when an encoder is first built. The app's pages read the names, families and
descriptions on every first visit, and the encoders' modules import scikit-learn, SciPy and
skrub (about 2 s on a 2-core machine, the larger part of a first page load).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any

from ..tasks import get_task
from ..vocab import BEYOND_ENCODERS, ENCODERS

__all__ = ["ALL_REGISTRY", "BEYOND_FAMILY", "BEYOND_REGISTRY", "EncoderSpec", "REGISTRY", "FAMILIES",
           "STUDY_SEED", "STUDY_UNKNOWN", "applicable_models", "applies_to", "applies_to_task",
           "make_encoder"]


@dataclass(frozen=True)
class EncoderSpec:
    """One encoder configuration of the study.

    Attributes
    ----------
    name : str
        Canonical name (:data:`encbench.vocab.ENCODERS`).
    family : str
        One of :data:`FAMILIES`.
    supervised : bool
        Whether ``fit`` needs the target.
    params : dict
        Hyperparameters of the configuration (for display; the factory applies them).
    description : str
        One line for the app.
    factory : callable
        ``factory(random_state=...)`` returns a new configured, unfitted encoder (None: the
        study's seed).
    in_study : bool
        One of the published study's 32 configurations.
    native : bool
        No encoding: the columns go to a model that takes categories itself
        (:attr:`encbench.models.ModelSpec.native_categories`); not applicable to the others.
    library : str or None
        The library that owns the encoder (beyond the study), for provenance.
    """

    name: str
    family: str
    supervised: bool
    params: dict = field(hash=False)
    description: str
    factory: Callable[..., Any] = field(repr=False, compare=False)
    in_study: bool = True
    native: bool = False
    library: str | None = None

    def make(self, random_state=None):
        """A new configured, unfitted encoder (same as ``make_encoder(self.name, ...)``)."""
        return self.factory(random_state=random_state)


@dataclass(frozen=True)
class _LazyClass:
    """An encoder class of this package, named by module and class, imported when first called.

    Calling it calls the class (``_LazyClass("target", "WoEEncoder")(regularization=1.0)``); it
    pickles by name, as a class does.
    """

    module: str
    name: str

    def resolve(self) -> type:
        """The class itself (imports its module)."""
        return getattr(importlib.import_module(f"{__package__}.{self.module}"), self.name)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)


# Stand-ins for the classes, under their names so the entries below read as the classes they
# build; unit tests check each names a class of encbench.encoders.__all__.
DropEncoder = _LazyClass("unsupervised", "DropEncoder")
OneHotEncoder = _LazyClass("unsupervised", "OneHotEncoder")
OrdinalEncoder = _LazyClass("unsupervised", "OrdinalEncoder")
BinaryEncoder = _LazyClass("unsupervised", "BinaryEncoder")
CountEncoder = _LazyClass("unsupervised", "CountEncoder")
SumEncoder = _LazyClass("unsupervised", "SumEncoder")
MinHashEncoder = _LazyClass("unsupervised", "MinHashEncoder")
MeanTargetEncoder = _LazyClass("target", "MeanTargetEncoder")
WoEEncoder = _LazyClass("target", "WoEEncoder")
MeanEstimateEncoder = _LazyClass("target", "MeanEstimateEncoder")
DiscretizedMeanTargetEncoder = _LazyClass("target", "DiscretizedMeanTargetEncoder")
PreBinnedMeanTargetEncoder = _LazyClass("target", "PreBinnedMeanTargetEncoder")
CatBoostEncoder = _LazyClass("target", "CatBoostEncoder")
GLMMEncoder = _LazyClass("glmm", "GLMMEncoder")
CrossValidatedEncoder = _LazyClass("wrappers", "CrossValidatedEncoder")
BlowUpEncoder = _LazyClass("wrappers", "BlowUpEncoder")


#: The study's seed of the CV and BlowUp wrappers' ``StratifiedKFold(shuffle=True)``
#: (``random_state=1444`` in its ``CVRegularized`` and ``CVBlowUp``).
STUDY_SEED = 1444

#: How the study's own target encoders (MT, ME, PBMT, DMT, GLMM; its ``Encoder`` base class
#: ``default=-1``) encode a level absent from the data they were fitted on.
STUDY_UNKNOWN = -1.0


def _build(cls, params, random_state=None, seeded=False, inner=None):
    """Instantiate ``cls(**params)``; seeded classes get ``random_state`` (None: the study's
    seed), wrappers a new inner encoder built by ``inner()``."""
    kwargs = dict(params)
    if inner is not None:
        kwargs["encoder"] = inner()
    if seeded:
        kwargs["random_state"] = STUDY_SEED if random_state is None else random_state
    return cls(**kwargs)


def _study(cls, **params):
    """A factory of the study's configuration of one of its own target encoders."""
    return partial(cls, unknown_value=STUDY_UNKNOWN, **params)


_specs: list[EncoderSpec] = []
_beyond: list[EncoderSpec] = []

#: the family of every encoder beyond the study
BEYOND_FAMILY = "beyond the study"


def _add(name, family, supervised, description, cls, params=None, *, shown=None, seeded=False,
         inner=None, library=None, native=False):
    params = dict(params or {})
    in_study = library is None
    (_specs if in_study else _beyond).append(
        EncoderSpec(
            name=name,
            family=family,
            supervised=supervised,
            params=dict(params if shown is None else shown),
            description=description,
            factory=partial(_build, cls, params, seeded=seeded, inner=inner),
            in_study=in_study,
            native=native,
            library=library,
        )
    )


_add("Drop", "baseline", False, "Drops the column: every level is encoded as 1.", DropEncoder)
_add("OH", "identifier", False, "One-Hot: one 0/1 indicator column per level.", OneHotEncoder)
_add("Ord", "identifier", False, "Ordinal: consecutive integer id per level.", OrdinalEncoder)
_add("Bin", "identifier", False, "Binary: base-2 digits of the ordinal id.", BinaryEncoder)
_add("Count", "frequency", False, "Count: number of training rows with the level.", CountEncoder)
_add("Sum", "contrast", False, "Sum contrasts: L-1 columns summing to zero, plus intercept.",
     SumEncoder)
# The study's dirty_cat 0.3.0 MinHashEncoder(ngram_range=(2, 4)) hashed n-grams of lengths 2 and
# 3 only: its fast hash looped over range(2, 4), an exclusive upper bound that skrub later made
# inclusive. skrub's ngram_range=(2, 3) gives the same hashes (same seeds, same n-gram lengths).
_add("MH", "similarity", False,
     "Min-Hash of the level's character 2- and 3-grams (30 components), as the study's dirty_cat.",
     MinHashEncoder, {"n_components": 30, "ngram_range": (2, 3)})
_add("MT", "simple target", True, "Mean-Target: mean of y over the level's rows.",
     MeanTargetEncoder, {"unknown_value": STUDY_UNKNOWN})
_add("WoE", "simple target", True, "Weight of Evidence: regularised log P(l|y=1)/P(l|y=0).",
     WoEEncoder, {"regularization": 1.0})
_add("GLMM", "smoothing", True,
     "Mixed model y ~ 1 + (1|A) by REML: level mean shrunk to the intercept (as lme4::lmer).",
     GLMMEncoder, {"unknown_value": STUDY_UNKNOWN})
_add("CB", "data-constraining", True,
     "CatBoost: ordered target statistics of the training rows, in their order in the data.",
     CatBoostEncoder, {"a": 1.0, "shuffle": False})
for _m in (0.1, 1, 10):
    _add(f"ME_{_m}", "smoothing", True,
         f"Mean-Estimate: MT blended with the prior, strength m = {_m}.",
         MeanEstimateEncoder, {"m": float(_m), "unknown_value": STUDY_UNKNOWN})
for _n in (2, 5, 10):
    _add(f"DMT_{_n}", "binning", True,
         f"Discretized MT: lower bound of the MT value's interval, {_n} equal intervals.",
         DiscretizedMeanTargetEncoder, {"n_bins": _n, "unknown_value": STUDY_UNKNOWN})
for _t in (0.001, 0.01, 0.1):
    _add(f"PBMT_{_t}", "binning", True,
         f"Pre-Binned MT: rare levels binned until each bin holds >= {_t:g} of rows, then MT.",
         PreBinnedMeanTargetEncoder, {"threshold": _t, "unknown_value": STUDY_UNKNOWN})
for _inner_name, _inner in (("MT", _study(MeanTargetEncoder)), ("GLMM", _study(GLMMEncoder))):
    for _k in (2, 5, 10):
        _add(f"CV{_inner_name}_{_k}", "data-constraining", True,
             f"Cross-validated {_inner_name}: training rows encoded out-of-fold, {_k} folds.",
             CrossValidatedEncoder, {"n_splits": _k},
             shown={"encoder": _inner_name, "n_splits": _k, "random_state": STUDY_SEED},
             seeded=True, inner=_inner)
    for _k in (2, 5, 10):
        _add(f"BU{_inner_name}_{_k}", "data-constraining", True,
             f"BlowUp {_inner_name}: {_k} fold-wise {_inner_name} encodings side by side.",
             BlowUpEncoder, {"n_splits": _k},
             shown={"encoder": _inner_name, "n_splits": _k, "random_state": STUDY_SEED},
             seeded=True, inner=_inner)


SklearnTargetEncoder = _LazyClass("beyond", "SklearnTargetEncoder")
StringEncoder = _LazyClass("beyond", "StringEncoder")
GapEncoder = _LazyClass("beyond", "GapEncoder")
JamesSteinEncoder = _LazyClass("beyond", "JamesSteinEncoder")
LeaveOneOutEncoder = _LazyClass("beyond", "LeaveOneOutEncoder")
QuantileEncoder = _LazyClass("beyond", "QuantileEncoder")
SummaryEncoder = _LazyClass("beyond", "SummaryEncoder")
HelmertEncoder = _LazyClass("beyond", "HelmertEncoder")
BackwardDifferenceEncoder = _LazyClass("beyond", "BackwardDifferenceEncoder")
HashingEncoder = _LazyClass("beyond", "HashingEncoder")
NativeEncoder = _LazyClass("beyond", "NativeEncoder")

_SK, _SKRUB, _CE = "scikit-learn", "skrub", "category_encoders"
_add("SkTE", BEYOND_FAMILY, True,
     "scikit-learn's TargetEncoder: cross-fitted target means, smooth='auto', 5 stratified folds.",
     SklearnTargetEncoder, {"cv": 5, "smooth": "auto"}, shown={"cv": 5, "smooth": "auto",
                                                                "random_state": STUDY_SEED},
     library=_SK)
_add("String", BEYOND_FAMILY, False,
     "skrub's StringEncoder: tf-idf of character n-grams, truncated SVD to 30 columns.",
     StringEncoder, {"n_components": 30}, library=_SKRUB)
_add("Gap", BEYOND_FAMILY, False,
     "skrub's GapEncoder: Gamma-Poisson factorisation of n-gram counts, 10 topics.",
     GapEncoder, {"n_components": 10}, library=_SKRUB)
_add("JS", BEYOND_FAMILY, True, "category_encoders' James-Stein: level means shrunk to the mean.",
     JamesSteinEncoder, library=_CE)
_add("LOO", BEYOND_FAMILY, True,
     "category_encoders' Leave-One-Out: training rows get their level's mean without themselves.",
     LeaveOneOutEncoder, library=_CE)
_add("Quantile", BEYOND_FAMILY, True,
     "category_encoders' Quantile: the level's median of y, smoothed to the overall median.",
     QuantileEncoder, {"quantile": 0.5, "m": 1.0}, library=_CE)
_add("Summary", BEYOND_FAMILY, True,
     "category_encoders' Summary: smoothed first and third quartiles of y per level.",
     SummaryEncoder, {"quantiles": (0.25, 0.75), "m": 1.0}, library=_CE)
_add("Helmert", BEYOND_FAMILY, False,
     "category_encoders' Helmert contrasts: each level against the mean of the previous ones.",
     HelmertEncoder, library=_CE)
_add("BackDiff", BEYOND_FAMILY, False,
     "category_encoders' backward-difference contrasts: each level against the previous one.",
     BackwardDifferenceEncoder, library=_CE)
_add("Hash", BEYOND_FAMILY, False, "category_encoders' Hashing: feature hashing into 8 columns.",
     HashingEncoder, {"n_components": 8}, library=_CE)
_add("Native", BEYOND_FAMILY, False,
     "No encoding: the model's own categorical handling (LightGBM, HistGradientBoosting only).",
     NativeEncoder, library="the model", native=True)


def _in_order(specs: list[EncoderSpec], names: tuple[str, ...]) -> dict[str, EncoderSpec]:
    """name -> spec in the order of ``names``, checked at import: each name configured once.

    Raises
    ------
    ValueError
        If a name is configured twice, not at all, or is not in ``names``.
    """
    by_name: dict[str, EncoderSpec] = {}
    for spec in specs:
        if spec.name in by_name:
            raise ValueError(f"encoder {spec.name!r} is configured twice in the registry")
        by_name[spec.name] = spec
    missing = [name for name in names if name not in by_name]
    unknown = [name for name in by_name if name not in names]
    if missing or unknown or len(set(names)) != len(names):
        raise ValueError(f"the registry must configure each name of encbench.vocab.ENCODERS once: "
                         f"got {unknown!r} not in it, {missing!r} missing, names {list(names)!r}")
    return {name: by_name[name] for name in names}


#: name -> :class:`EncoderSpec`, the 32 canonical names in :data:`encbench.vocab.ENCODERS` order.
REGISTRY: MappingProxyType = MappingProxyType(_in_order(_specs, ENCODERS))

#: family -> names of its encoders, in the paper's order of families (section 3), then the
#: baseline Drop.
_FAMILY_ORDER = ("identifier", "frequency", "contrast", "similarity", "simple target", "binning",
                 "smoothing", "data-constraining", "baseline")


def _by_family(registry, families: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """family -> names of its encoders, checked at import: every encoder is in one of ``families``.

    Raises
    ------
    ValueError
        If an encoder's family is not one of ``families``.
    """
    strays = {spec.name: spec.family for spec in registry.values() if spec.family not in families}
    if strays:
        raise ValueError(f"encoders of an unknown family: got {strays!r}; families: {list(families)!r}")
    return {family: tuple(spec.name for spec in registry.values() if spec.family == family)
            for family in families}


FAMILIES: MappingProxyType = MappingProxyType(_by_family(REGISTRY, _FAMILY_ORDER))

#: name -> :class:`EncoderSpec` of the encoders beyond the study, in
#: :data:`encbench.vocab.BEYOND_ENCODERS` order.
BEYOND_REGISTRY: MappingProxyType = MappingProxyType(_in_order(_beyond, BEYOND_ENCODERS))
#: every encoder: the study's 32, then those beyond it.
ALL_REGISTRY: MappingProxyType = MappingProxyType({**REGISTRY, **BEYOND_REGISTRY})


def applies_to(encoder: str, model: str | None = None, task: str = "binary") -> bool:
    """Whether ``model`` can be run with ``encoder`` on a target of ``task``: a native encoder
    needs a model that takes categories (:attr:`encbench.models.ModelSpec.native_categories`),
    WoE a binary target (:func:`applies_to_task`); every other pair applies, custom encoders
    included. ``model=None`` asks about the task alone."""
    from ..models import MODEL_REGISTRY

    if not applies_to_task(encoder, task):
        return False
    if model is None:
        return True
    spec = ALL_REGISTRY.get(encoder)
    if spec is None or not spec.native:
        return True
    model_spec = MODEL_REGISTRY.get(model)
    return bool(model_spec is not None and model_spec.native_categories)


def applicable_models(encoder: str, models, task: str = "binary") -> tuple[str, ...]:
    """The models of ``models`` (in their order) that run with ``encoder`` on a target of
    ``task`` (:func:`applies_to`): what a run computes for that encoder, and what a form counts;
    empty when the encoder is not defined for the task."""
    return tuple(m for m in models if applies_to(encoder, m, task))


#: encoders defined for a binary target only (WoE: the log odds of the positive class)
BINARY_ONLY = frozenset({"WoE"})


def applies_to_task(encoder: str, task: str) -> bool:
    """Whether ``encoder`` is defined for a target of ``task`` (``"binary"``, ``"multiclass"``,
    ``"regression"``): every encoder but WoE (:data:`BINARY_ONLY`) serves every task; a custom
    encoder always applies."""
    return task == "binary" or encoder not in BINARY_ONLY


def make_encoder(name: str, random_state=None, task: str = "binary"):
    """A configured, unfitted encoder for the canonical name ``name``.

    Parameters
    ----------
    name : str
        One of :data:`encbench.vocab.ENCODERS` (e.g. ``"CVMT_5"``) or
        :data:`encbench.vocab.BEYOND_ENCODERS` (e.g. ``"SkTE"``).
    random_state : int, RandomState or None, default=None
        Seed of the CV/BU wrappers' fold assignment; None means the study's seed
        (:data:`STUDY_SEED`), which reproduces the published numbers. Ignored by the other
        encoders (CB follows the row order, as the study's).
    task : {'binary', 'multiclass', 'regression'}, default='binary'
        The target's task. Binary and regression build the configuration as it is (a
        supervised encoder encodes the mean of a float y); multiclass wraps a supervised
        encoder in :class:`encbench.encoders.OneVsRestEncoder` (one column per class, on
        ``y == k``), except scikit-learn's ``TargetEncoder`` (SkTE), which encodes a
        multiclass target itself. SkTE follows the task (its ``target_type``).

    Raises
    ------
    ValueError
        If ``name`` is not a canonical encoder name, or the encoder does not apply to ``task``
        (:func:`applies_to_task`).
    """
    spec = ALL_REGISTRY.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"unknown encoder name: got {name!r}; known names: "
                         f"{', '.join(ENCODERS + BEYOND_ENCODERS)}")
    kind = get_task(task)
    if not applies_to_task(name, task):
        raise ValueError(f"encoder {name!r} is defined for a binary target only: got task={task!r}")
    encoder = spec.make(random_state=random_state)
    if task == "binary" or not spec.supervised:
        return encoder
    if "target_type" in encoder.get_params():  # encodes every task itself (SkTE)
        return encoder.set_params(target_type=kind.encoder_target)
    if kind.column_per_class:
        from .wrappers import OneVsRestEncoder

        return OneVsRestEncoder(encoder=encoder)
    return encoder
