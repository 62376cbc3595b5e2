"""CV (out-of-fold) and BlowUp wrappers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.encoders import (
    BlowUpEncoder, CrossValidatedEncoder, GLMMEncoder, MeanTargetEncoder, make_encoder,
)
from encbench.encoders.wrappers import make_folds


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {"a": rng.choice(list("abcdefgh"), n), "b": rng.choice(["u", "v", "w"], n)},
        index=pd.RangeIndex(500, 500 + n),
    )
    y = rng.integers(0, 2, n)
    return X, y


@pytest.mark.parametrize("name", ["CVMT_2", "CVMT_5", "CVMT_10", "CVGLMM_5"])
def test_training_row_encoding_does_not_depend_on_its_own_target(name):
    # With a non-label target the folds do not depend on y (plain shuffled K-fold), so changing
    # one row's target must leave that row's out-of-fold encoding unchanged.
    X, _ = _data()
    rng = np.random.default_rng(1)
    y = rng.uniform(0.05, 0.95, len(X))
    base = make_encoder(name, random_state=3).fit_transform(X, y)
    for row in (0, 17, 123):
        perturbed = y.copy()
        perturbed[row] = 1.0 - y[row] + 0.013
        out = make_encoder(name, random_state=3).fit_transform(X, perturbed)
        np.testing.assert_array_equal(out.iloc[row].to_numpy(), base.iloc[row].to_numpy())
        # ... while the rows of other folds that share its levels do change
        assert not np.allclose(out.to_numpy(), base.to_numpy())


@pytest.mark.parametrize("inner", [MeanTargetEncoder, GLMMEncoder])
def test_each_fold_is_encoded_by_the_encoder_fitted_on_the_other_folds(inner):
    X, y = _data()
    encoder = CrossValidatedEncoder(encoder=inner(), n_splits=5, random_state=7)
    out = encoder.fit_transform(X, y)
    folds = make_folds(y, 5, 7)
    held = np.concatenate([test for _, test in folds])
    assert sorted(held) == list(range(len(X)))  # a partition of the rows
    for train, test in folds:
        # stratified: each fold keeps the class balance
        assert abs(y[test].mean() - y.mean()) < 0.05
        expected = inner().fit(X.iloc[train], y[train]).transform(X.iloc[test])
        np.testing.assert_allclose(out.iloc[test].to_numpy(), expected.to_numpy())
    # test data: the encoder fitted on all training rows
    pd.testing.assert_frame_equal(encoder.transform(X), inner().fit(X, y).transform(X))
    assert not np.allclose(out.to_numpy(), encoder.transform(X).to_numpy())


@pytest.mark.parametrize("k", [2, 5, 10])
@pytest.mark.parametrize("inner", ["MT", "GLMM"])
def test_blow_up_width_is_k_times_columns(k, inner):
    X, y = _data()
    encoder = make_encoder(f"BU{inner}_{k}", random_state=0)
    out = encoder.fit_transform(X, y)
    assert out.shape == (len(X), k * X.shape[1])
    assert list(out.columns[:2]) == ["a_fold0", "b_fold0"]
    assert out.columns[-1] == f"b_fold{k - 1}"
    # training and test rows are encoded alike (fit_transform == fit().transform())
    pd.testing.assert_frame_equal(out, encoder.transform(X))


def test_blow_up_fold_encoders_are_fitted_on_the_training_part_of_each_fold():
    X, y = _data()
    encoder = BlowUpEncoder(encoder=MeanTargetEncoder(), n_splits=3, random_state=2).fit(X, y)
    test = pd.DataFrame({"a": ["a", "h", "zz"], "b": ["u", "w", "u"]})
    out = encoder.transform(test)
    for i, (train, _) in enumerate(make_folds(y, 3, 2)):
        expected = MeanTargetEncoder().fit(X.iloc[train], y[train]).transform(test)
        np.testing.assert_allclose(out[[f"a_fold{i}", f"b_fold{i}"]].to_numpy(), expected.to_numpy())


def test_folds_fall_back_to_plain_k_fold_and_cap_k():
    # one class: stratification is meaningless; 3 rows: at most 3 folds
    folds = make_folds(np.ones(20), 5, 0)
    assert len(folds) == 5
    folds = make_folds(np.array([0, 1, 1]), 10, 0)
    assert len(folds) == 3
    # a class with fewer rows than folds: still stratified (as the study's StratifiedKFold)
    y = np.array([0] * 20 + [1] * 2)
    folds = make_folds(y, 5, 0)
    assert len(folds) == 5
    assert sum(int(y[held].sum() > 0) for _, held in folds) == 2  # the 2 positives spread
    # stratified with the study's seed: the same folds as StratifiedKFold(shuffle=True, 1444)
    from sklearn.model_selection import StratifiedKFold
    y = np.array([0, 1] * 15)
    expected = StratifiedKFold(5, shuffle=True, random_state=1444).split(np.zeros((30, 1)), y)
    for (_train, held), (_e_train, e_held) in zip(make_folds(y, 5, 1444), expected):
        np.testing.assert_array_equal(held, e_held)
    with pytest.raises(ValueError, match="n_splits"):
        make_folds(np.ones(10), 1, 0)
    with pytest.raises(ValueError, match="at least 2 rows"):
        make_folds(np.ones(1), 2, 0)


def test_cv_with_a_class_missing_from_a_fold_and_unseen_levels_in_folds():
    X = pd.DataFrame({"a": ["r1", "r2", "r3", "c", "c", "c", "c", "c", "c", "c"]})
    y = np.array([1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    out = make_encoder("CVGLMM_10", random_state=0).fit_transform(X, y)
    assert not out.isna().any().any()
    out = make_encoder("CVMT_5", random_state=0).fit_transform(X, y)
    # r1, r2, r3 are each seen once: out of fold they are unseen -> -1 (the study's default)
    np.testing.assert_array_equal(out["a"].iloc[:3].to_numpy(), [-1.0, -1.0, -1.0])


def test_wrappers_validate_their_encoder_and_report_it():
    X, y = _data()
    with pytest.raises(ValueError, match="encoder"):
        CrossValidatedEncoder().fit(X, y)
    with pytest.raises(ValueError, match="n_splits"):
        CrossValidatedEncoder(encoder=MeanTargetEncoder(), n_splits=1).fit_transform(X, y)
    encoder = make_encoder("CVMT_2")
    assert isinstance(encoder.get_params()["encoder"], MeanTargetEncoder)
    encoder.set_params(n_splits=3, encoder=GLMMEncoder())
    assert encoder.fit_transform(X, y).shape == X.shape


def test_blow_up_sparse_output_equals_dense_with_a_wide_inner_encoder():
    import scipy.sparse as sp

    from encbench.encoders import OneHotEncoder

    X, y = _data()
    X = X.assign(c=np.random.default_rng(4).integers(0, 150, len(X)).astype(str))
    test, _ = _data(60, seed=9)
    test = test.assign(c=np.random.default_rng(5).integers(0, 200, 60).astype(str))
    dense = BlowUpEncoder(encoder=OneHotEncoder(), n_splits=5, random_state=2).fit(X, y)
    expected = dense.transform(test).to_numpy()
    both = BlowUpEncoder(encoder=OneHotEncoder(sparse_output=True), n_splits=5, random_state=2,
                         sparse_output=True)
    got = both.fit(X, y).transform(test)
    assert type(got) is sp.csr_matrix and got.nnz < got.shape[0] * got.shape[1] / 10
    np.testing.assert_array_equal(got.toarray(), expected)
    np.testing.assert_array_equal(both.fit_transform(X, y).toarray(), dense.transform(X).to_numpy())
    # a narrow inner encoder made sparse by the wrapper, and sparse blocks made dense by it
    narrow = BlowUpEncoder(encoder=MeanTargetEncoder(), n_splits=2, random_state=2, sparse_output=True)
    np.testing.assert_array_equal(
        narrow.fit(X, y).transform(test).toarray(),
        BlowUpEncoder(encoder=MeanTargetEncoder(), n_splits=2, random_state=2).fit(X, y).transform(test).to_numpy())
    mixed = BlowUpEncoder(encoder=OneHotEncoder(sparse_output=True), n_splits=5, random_state=2)
    np.testing.assert_array_equal(mixed.fit(X, y).transform(test).to_numpy(), expected)
    with pytest.raises(ValueError, match="sparse_output must be True or False"):
        BlowUpEncoder(encoder=MeanTargetEncoder(), sparse_output=1).fit(X, y)
