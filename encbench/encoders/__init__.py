"""The encoder zoo: the study's 32 encoder configurations, and the encoders beyond the study
(:mod:`encbench.encoders.beyond`), as scikit-learn transformers.

>>> from encbench.encoders import REGISTRY, make_encoder, FAMILIES
>>> enc = make_encoder("CVMT_5", random_state=0)   # configured, unfitted
>>> Xt = enc.fit_transform(X_cat, y)               # doctest: +SKIP

Every encoder takes a DataFrame (or 2-D numpy array) of categorical columns, missing values
allowed, and returns a float64 DataFrame with the same index and the columns
``get_feature_names_out()``; unseen levels and missing values never raise and never give NaN
(see each class for its documented value, and ``encbench.encoders._base`` for the shared rules).

Names are imported on first use (PEP 562 module ``__getattr__``): ``REGISTRY`` and ``FAMILIES``
import no encoder (:mod:`encbench.encoders.registry`), so the app's pages read the encoders'
names and families without importing scikit-learn; an encoder class, or building an encoder,
imports its module.
"""
from __future__ import annotations

import importlib

#: module of this package -> the public names it provides here
_EXPORTS: dict[str, tuple[str, ...]] = {
    "registry": ("REGISTRY", "FAMILIES", "EncoderSpec", "make_encoder", "BEYOND_REGISTRY",
                 "ALL_REGISTRY", "BEYOND_FAMILY", "applicable_models", "applies_to", "applies_to_task"),
    "unsupervised": ("DropEncoder", "OneHotEncoder", "OrdinalEncoder", "BinaryEncoder", "CountEncoder",
                     "SumEncoder", "MinHashEncoder"),
    "target": ("MeanTargetEncoder", "WoEEncoder", "MeanEstimateEncoder", "PreBinnedMeanTargetEncoder",
               "DiscretizedMeanTargetEncoder", "CatBoostEncoder"),
    "glmm": ("GLMMEncoder", "OneWayREML", "one_way_reml"),
    "wrappers": ("CrossValidatedEncoder", "BlowUpEncoder", "OneVsRestEncoder"),
    "beyond": ("SklearnTargetEncoder", "StringEncoder", "GapEncoder", "JamesSteinEncoder",
               "LeaveOneOutEncoder", "QuantileEncoder", "SummaryEncoder", "HelmertEncoder",
               "BackwardDifferenceEncoder", "HashingEncoder", "NativeEncoder"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = list(_MODULE_OF)


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
