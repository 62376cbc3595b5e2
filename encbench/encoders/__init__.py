"""The encoder zoo: the study's 32 encoder configurations as scikit-learn transformers.

>>> from encbench.encoders import REGISTRY, make_encoder, FAMILIES
>>> enc = make_encoder("CVMT_5", random_state=0)   # configured, unfitted
>>> Xt = enc.fit_transform(X_cat, y)               # doctest: +SKIP

Every encoder takes a DataFrame (or 2-D numpy array) of categorical columns, missing values
allowed, and returns a float64 DataFrame with the same index and the columns
``get_feature_names_out()``; unseen levels and missing values never raise and never give NaN
(see each class for its documented value, and ``encbench.encoders._base`` for the shared rules).
"""
from .glmm import GLMMEncoder, OneWayREML, one_way_reml
from .registry import FAMILIES, REGISTRY, EncoderSpec, make_encoder
from .target import (
    CatBoostEncoder, DiscretizedMeanTargetEncoder, MeanEstimateEncoder, MeanTargetEncoder,
    PreBinnedMeanTargetEncoder, WoEEncoder,
)
from .unsupervised import (
    BinaryEncoder, CountEncoder, DropEncoder, MinHashEncoder, OneHotEncoder, OrdinalEncoder,
    SumEncoder,
)
from .wrappers import BlowUpEncoder, CrossValidatedEncoder

__all__ = [
    "REGISTRY", "FAMILIES", "EncoderSpec", "make_encoder",
    "DropEncoder", "OneHotEncoder", "OrdinalEncoder", "BinaryEncoder", "CountEncoder",
    "SumEncoder", "MinHashEncoder", "MeanTargetEncoder", "WoEEncoder", "MeanEstimateEncoder",
    "PreBinnedMeanTargetEncoder", "DiscretizedMeanTargetEncoder", "CatBoostEncoder",
    "GLMMEncoder", "OneWayREML", "one_way_reml", "CrossValidatedEncoder", "BlowUpEncoder",
]
