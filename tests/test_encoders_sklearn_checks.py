"""scikit-learn's estimator checks over the 32 registry encoders.

Every check runs; those expected to fail by design are listed in :data:`EXPECTED_FAILURES` with
the reason, and run as strict expected failures (a check that starts passing must leave the
table). Checks not in the table must pass.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from encbench.encoders import make_encoder
from encbench.encoders.wrappers import CrossValidatedEncoder
from encbench.vocab import ENCODERS

# -- reasons, each stated once ---------------------------------------------------------------------
CROSS_FITTING = ("fit_transform encodes each training row without its own target (out-of-fold), so "
                 "it differs from fit().transform() by design (section 6: CV encoders)")
ORDERED = ("fit_transform gives CatBoost's ordered target statistics (each row sees only earlier "
           "rows, as the study), so it differs from fit().transform() by design (section 6: CB)")

#: check name -> reason, per registry encoder name (encoders not listed pass every check).
EXPECTED_FAILURES: dict[str, dict[str, str]] = {}


def _expect(names, check, reason):
    for name in names:
        EXPECTED_FAILURES.setdefault(name, {})[check] = reason


# fit_transform differs from fit().transform() on the training rows (checked on the checks'
# 30-row float data, whose levels are all distinct: with 2 folds a level is unseen in the other
# fold, so its out-of-fold encoding is the unseen value while transform gives its own mean)
_expect(["CB"], "check_transformer_general", ORDERED)
_expect(["CB"], "check_transformer_data_not_an_array", ORDERED)
_expect(["CVMT_2", "CVGLMM_2"], "check_transformer_general", CROSS_FITTING)
_expect(["CVMT_2", "CVGLMM_2"], "check_transformer_data_not_an_array", CROSS_FITTING)

# WoE is defined for a binary target only (log P(level | y=1) / P(level | y=0)); these checks fit
# with 3 or 4 classes, which WoE refuses with a message naming the values
BINARY_ONLY = "WoE is defined for a binary target; this check fits with 3-4 classes, which WoE refuses"
_expect(["WoE"], "check_dict_unchanged", BINARY_ONLY)
_expect(["WoE"], "check_dont_overwrite_parameters", BINARY_ONLY)
_expect(["WoE"], "check_dtype_object", BINARY_ONLY)
_expect(["WoE"], "check_estimators_fit_returns_self", BINARY_ONLY)
_expect(["WoE"], "check_estimators_overwrite_params", BINARY_ONLY)
_expect(["WoE"], "check_f_contiguous_array_estimator", BINARY_ONLY)
_expect(["WoE"], "check_fit2d_1feature", BINARY_ONLY)
_expect(["WoE"], "check_fit2d_predict1d", BINARY_ONLY)
_expect(["WoE"], "check_fit_score_takes_y", BINARY_ONLY)
_expect(["WoE"], "check_methods_sample_order_invariance", BINARY_ONLY)
_expect(["WoE"], "check_methods_subset_invariance", BINARY_ONLY)
_expect(["WoE"], "check_n_features_in_after_fitting", BINARY_ONLY)
_expect(["WoE"], "check_positive_only_tag_during_fit", BINARY_ONLY)
_expect(["WoE"], "check_readonly_memmap_input", BINARY_ONLY)

_BY_ID: dict[int, str] = {}


def _encoders():
    for name in ENCODERS:
        encoder = make_encoder(name)
        _BY_ID[id(encoder)] = name
        yield encoder


def _expected_failed_checks(encoder):
    return EXPECTED_FAILURES.get(_BY_ID.get(id(encoder)), {})


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # category_encoders' Pandas4Warning, small-fold warnings
        yield


@parametrize_with_checks(list(_encoders()), expected_failed_checks=_expected_failed_checks,
                         xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _sparse_variants():
    from encbench.encoders import BinaryEncoder, BlowUpEncoder, OneHotEncoder, SumEncoder

    yield from (cls(sparse_output=True) for cls in (OneHotEncoder, SumEncoder, BinaryEncoder))
    yield BlowUpEncoder(encoder=OneHotEncoder(sparse_output=True), n_splits=2, sparse_output=True)


@parametrize_with_checks(list(_sparse_variants()))
def test_sklearn_estimator_checks_with_sparse_output(estimator, check):
    check(estimator)


# -- the conformance fixes, stated directly -------------------------------------------------------
def test_parameters_are_validated_before_any_state_is_set():
    from encbench.encoders.target import WoEEncoder

    X, y = np.array([["a"], ["b"], ["a"], ["b"]], dtype=object), np.array([0, 1, 1, 0])
    for encoder, message in ((WoEEncoder(regularization=-1), "regularization must be > 0"),
                             (CrossValidatedEncoder(encoder=make_encoder("MT"), n_splits=1),
                              "n_splits must be an integer >= 2")):
        for method in (encoder.fit, encoder.fit_transform):
            with pytest.raises(ValueError, match=message):
                method(X, y)
            assert not [k for k in vars(encoder) if k.endswith("_") and not k.startswith("_")]


def test_woe_accepts_any_binary_target_like_the_0_1_one():
    from encbench.encoders.target import WoEEncoder

    X = np.array([["a"], ["b"], ["a"], ["b"], ["a"], ["c"]], dtype=object)
    y01 = np.array([0, 1, 1, 0, 1, 0])
    reference = WoEEncoder().fit(X, y01).transform(X)
    for y in (y01 * 5 + 2, np.where(y01 == 1, 1.0, -1.0)):
        assert WoEEncoder().fit(X, y).transform(X).equals(reference)
    with pytest.raises(ValueError, match="binary target"):
        WoEEncoder().fit(X, np.arange(6) % 3)


def test_set_output_default_gives_numpy_and_pandas_a_frame():
    X, y = np.array([["a"], ["b"], ["a"], ["b"]], dtype=object), np.array([0, 1, 1, 0])
    encoder = make_encoder("MT")
    frame = encoder.fit(X, y).transform(X)           # our default: a DataFrame
    array = encoder.set_output(transform="default").transform(X)
    assert isinstance(array, np.ndarray) and array.dtype == np.float64
    np.testing.assert_array_equal(array, frame.to_numpy())
    assert encoder.set_output(transform="pandas").transform(X).equals(frame)


@pytest.mark.parametrize("module", ["unsupervised", "target", "glmm", "wrappers"])
def test_every_encoder_class_documents_attributes_and_a_runnable_example(module):
    import doctest
    import importlib
    import inspect

    mod = importlib.import_module(f"encbench.encoders.{module}")
    classes = [c for n, c in inspect.getmembers(mod, inspect.isclass)
               if c.__module__ == mod.__name__ and n.endswith("Encoder") and not n.startswith("_")]
    assert classes
    for cls in classes:
        assert "\n    Attributes\n    ----------\n" in cls.__doc__, cls.__name__
        assert "\n    Examples\n    --------\n" in cls.__doc__, cls.__name__
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 4 * len(classes)
