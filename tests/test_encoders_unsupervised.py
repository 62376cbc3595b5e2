"""Drop, OH, Ord, Bin, Count, Sum, MH: hand-computed values and equality with the libraries
the study used (category_encoders, skrub)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from encbench.encoders import (
    BinaryEncoder, CountEncoder, DropEncoder, MinHashEncoder, OneHotEncoder, OrdinalEncoder,
    SumEncoder,
)

X = pd.DataFrame({"a": ["x", "y", "x", "z", "x", "y"], "b": ["p", "p", "q", "p", "q", "p"]})
TEST = pd.DataFrame({"a": ["z", "new", np.nan], "b": ["q", "p", "r"]}, index=[7, 8, 9])


def test_drop_is_one_constant_column_whatever_the_number_of_inputs():
    # the study's DropEncoder: a single column of ones in total (not one per input column)
    out = DropEncoder().fit(X).transform(TEST)
    assert list(out.columns) == ["drop"]
    assert out.shape == (len(TEST), 1) and (out.to_numpy() == 1.0).all()


def test_one_hot_hand_computed():
    encoder = OneHotEncoder().fit(X)
    assert list(encoder.get_feature_names_out()) == ["a_x", "a_y", "a_z", "b_p", "b_q"]
    np.testing.assert_array_equal(
        encoder.transform(TEST).to_numpy(),
        [[0, 0, 1, 0, 1], [0, 0, 0, 1, 0], [0, 0, 0, 0, 0]],  # unseen / missing: all zeros
    )


def test_one_hot_names_stay_unique_when_levels_collide():
    frame = pd.DataFrame({"a": ["nan", np.nan, "1"], "a_1": ["u", "v", "u"]})
    names = list(OneHotEncoder().fit(frame).get_feature_names_out())
    assert len(set(names)) == len(names) == 5


def test_ordinal_and_count_hand_computed():
    np.testing.assert_array_equal(
        OrdinalEncoder().fit(X).transform(TEST).to_numpy(), [[3, 2], [-1, 1], [-1, -1]]
    )
    np.testing.assert_array_equal(
        CountEncoder().fit(X).transform(TEST).to_numpy(), [[1, 2], [0, 4], [0, 0]]
    )


def test_binary_hand_computed():
    # a: x=1 -> 01, y=2 -> 10, z=3 -> 11 (3 levels: 2 digits); unseen -> 00
    encoder = BinaryEncoder().fit(X)
    assert list(encoder.get_feature_names_out()) == ["a_0", "a_1", "b_0", "b_1"]
    np.testing.assert_array_equal(
        encoder.transform(TEST).to_numpy(), [[1, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]]
    )


def test_sum_hand_computed_with_intercept():
    encoder = SumEncoder().fit(X)
    assert list(encoder.get_feature_names_out()) == ["intercept", "a_0", "a_1", "b_0"]
    np.testing.assert_array_equal(
        encoder.transform(TEST).to_numpy(),
        [[1, -1, -1, -1], [1, 0, 0, 1], [1, 0, 0, 0]],
    )
    # the encodings of the L levels of a column sum to zero
    levels = encoder.transform(pd.DataFrame({"a": ["x", "y", "z"], "b": ["p", "q", "p"]}))
    np.testing.assert_array_equal(levels[["a_0", "a_1"]].sum().to_numpy(), [0, 0])


def _category_encoders():
    ce = pytest.importorskip("category_encoders")
    return ce


@pytest.mark.parametrize(
    "ours, theirs, drop_intercept",
    [
        (OneHotEncoder, "OneHotEncoder", False),
        (OrdinalEncoder, "OrdinalEncoder", False),
        (BinaryEncoder, "BinaryEncoder", False),
        (CountEncoder, "CountEncoder", False),
        (SumEncoder, "SumEncoder", True),
    ],
)
def test_equal_to_category_encoders_without_missing_values(ours, theirs, drop_intercept):
    ce = _category_encoders()
    rng = np.random.default_rng(5)
    train = pd.DataFrame(
        {f"c{k}": rng.choice([f"v{i}" for i in range(k + 1)], 200) for k in range(1, 9)}
    )
    test = pd.DataFrame(
        {f"c{k}": rng.choice([f"v{i}" for i in range(k + 3)], 50) for k in range(1, 9)}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # category_encoders' Pandas4Warning
        reference = getattr(ce, theirs)().fit(train)
        expected_train = reference.transform(train).to_numpy(dtype=float)
        expected_test = reference.transform(test).to_numpy(dtype=float)
    encoder = ours().fit(train)
    got_train, got_test = encoder.transform(train), encoder.transform(test)
    if drop_intercept:
        got_train, got_test = got_train.drop(columns="intercept"), got_test.drop(columns="intercept")
    np.testing.assert_array_equal(got_train.to_numpy(), expected_train)
    np.testing.assert_array_equal(got_test.to_numpy(), expected_test)


def test_min_hash_matches_skrub_per_column():
    skrub = pytest.importorskip("skrub")
    train = pd.DataFrame({"city": ["Paris", "Lyon", "Paris"], "code": ["ab-1", "ab-2", "zz"]})
    test = pd.DataFrame({"city": ["Pariss", np.nan], "code": ["ab-3", ""]})
    encoder = MinHashEncoder().fit(train)
    out = encoder.transform(test)
    assert out.shape == (2, 60)
    assert list(out.columns[:2]) == ["city_00", "city_01"] and out.columns[-1] == "code_29"
    for column in train.columns:
        reference = skrub.MinHashEncoder(n_components=30).fit(train[column].astype("str"))
        expected = reference.transform(test[column].astype("str")).to_numpy(dtype=float)
        # skrub returns float32, which rounds the 32-bit hashes; ours keep them exact (float64)
        np.testing.assert_allclose(out.filter(like=f"{column}_").to_numpy(), expected, rtol=1e-7)
        assert (out.filter(like=f"{column}_").to_numpy() % 1 == 0).all()
    # missing values and empty strings: all zeros (skrub's convention)
    assert (out.loc[1, [c for c in out.columns if c.startswith("city")]] == 0).all()
    # similar strings share many min-hashes, unrelated ones few
    close = encoder.transform(pd.DataFrame({"city": ["Paris", "Pariss"], "code": ["x", "x"]}))
    shared = (close.iloc[0, :30] == close.iloc[1, :30]).mean()
    assert shared > 0.4


def _study_fast_min_hash(text: str, seed: int) -> int:
    """Naive reference of the study's dirty_cat 0.3.0 fast min-hash: the minimum over every
    character n-gram of lengths 2 and 3 (its loop ran over range(2, 4), upper bound excluded)
    of the dot product of the n-gram's bytes with a random int32 vector, wrapping at 32 bits."""
    codes = list(np.frombuffer(text.encode(), dtype=np.int8))  # signed bytes, as the study
    best = None
    for n in (2, 3):
        atom = np.random.RandomState(seed).randint(-(2**31 - 1), 2**31 - 1, size=n, dtype=np.int32)
        for start in range(len(codes) - n + 1):
            total = sum(int(codes[start + k]) * int(atom[k]) for k in range(n))
            wrapped = (total + 2**31) % 2**32 - 2**31  # int32 overflow
            best = wrapped if best is None else min(best, wrapped)
    return best


def test_registry_mh_hashes_the_study_ngram_lengths_2_and_3():
    from encbench.encoders import make_encoder

    X = pd.DataFrame({"a": ["hello", "world", "credit"], "b": ["A11", "A12", "A14"]})
    out = make_encoder("MH").fit(X).transform(X)
    assert out.shape == (3, 60)
    for row, text in enumerate(X["a"]):
        for seed in (0, 1, 17, 29):
            assert out.iloc[row, seed] == _study_fast_min_hash(text, seed)
    for row, text in enumerate(X["b"]):
        assert out.iloc[row, 30 + 5] == _study_fast_min_hash(text, 5)


# -- sparse output ---------------------------------------------------------------
def _many_levels(n=3000, seed=11):
    """Seeded frame with a high-cardinality column, missing values, a one-level column and a
    column of levels seen once; and a test frame with unseen levels and missing values."""
    rng = np.random.default_rng(seed)
    wide = rng.integers(0, 800, n).astype(str).astype(object)
    wide[rng.random(n) < 0.05] = np.nan
    train = pd.DataFrame({"wide": wide, "few": rng.choice(["a", "b", "c"], n), "one": ["k"] * n,
                          "ids": [f"id{i}" for i in range(n)]}, index=pd.RangeIndex(10, 10 + n))
    test = pd.DataFrame({"wide": rng.integers(0, 1000, 400).astype(str),
                         "few": rng.choice(["a", "b", "z", None], 400), "one": ["k"] * 399 + ["q"],
                         "ids": [f"id{i}" for i in range(0, 4000, 10)]}, index=pd.RangeIndex(400))
    return train, test


@pytest.mark.parametrize("cls", [OneHotEncoder, SumEncoder, BinaryEncoder])
def test_sparse_output_has_the_values_of_the_dense_output(cls):
    import scipy.sparse as sp

    train, test = _many_levels()
    dense, sparse = cls(), cls(sparse_output=True)
    pairs = [(dense.fit_transform(train), sparse.fit_transform(train))]
    pairs += [(dense.transform(frame), sparse.transform(frame)) for frame in (train, test)]
    for expected, got in pairs:
        assert type(got) is sp.csr_matrix and got.dtype == np.float64
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got.toarray(), expected.to_numpy())  # bit-identical
        assert (got.data != 0).all()  # zeros are implicit
    assert list(sparse.get_feature_names_out()) == list(dense.get_feature_names_out())
    assert all(sp.issparse(table) for table in sparse.tables_)
    # numpy input too
    np.testing.assert_array_equal(
        cls(sparse_output=True).fit(train.to_numpy()).transform(test.to_numpy()).toarray(),
        dense.transform(test).to_numpy())


def test_sparse_one_hot_stores_one_value_per_seen_cell():
    train, test = _many_levels()
    out = OneHotEncoder(sparse_output=True).fit(train).transform(test)
    seen = sum(test[c].isin(train[c].dropna().unique()).sum() for c in ("wide", "few", "one"))
    seen += test["ids"].isin(train["ids"]).sum() + test["wide"].isna().sum()
    assert out.nnz == seen and out.shape[1] == sum(train[c].nunique(dropna=False) for c in train)


def test_sparse_output_parameter_is_checked_and_refuses_pandas_output():
    with pytest.raises(ValueError, match="sparse_output must be True or False, got 'yes'"):
        OneHotEncoder(sparse_output="yes").fit(X)
    assert OneHotEncoder().get_params() == {"sparse_output": False}
    with pytest.raises(ValueError, match="sparse"):
        SumEncoder(sparse_output=True).set_output(transform="pandas").fit_transform(X)
