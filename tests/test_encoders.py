"""The registry and the behaviour every one of the 32 encoders shares."""
from __future__ import annotations

import dataclasses
import inspect
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline

from encbench.encoders import ALL_REGISTRY, FAMILIES, REGISTRY, make_encoder
from encbench.vocab import BEYOND_ENCODERS, ENCODERS

# the contract holds for the study's 32 and for the encoders beyond it; Native is left out: it
# hands categories to the model instead of numbers (tests/test_encoders_beyond.py)
NAMES = list(ENCODERS) + [n for n in BEYOND_ENCODERS if n != "Native"]
SUPERVISED = [n for n in NAMES if ALL_REGISTRY[n].supervised]
# MH, String, Gap and Hash encode a level from its text, so unseen levels differ from each other;
# every other encoder gives all unseen levels one shared encoding.
TEXT_BASED = {"MH", "String", "Gap", "Hash"}


def _train(n=120, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "-"], n).astype(object)
    colour[colour == "-"] = np.nan
    X = pd.DataFrame(
        {
            "colour": pd.Series(colour, index=pd.RangeIndex(1000, 1000 + n), dtype=object),
            "size": pd.Categorical(rng.choice(["S", "M", "L"], n)),
            "city": pd.array(rng.choice(["Paris", "Lyon", "Nice", "Lille", "Caen"], n), dtype="str"),
        },
        index=pd.RangeIndex(1000, 1000 + n),
    )
    X.loc[1000, "city"] = "Once"  # a level seen once
    assert X.notna().sum().min() > n // 2
    y = rng.integers(0, 2, n)
    return X, y


def _test_frame():
    return pd.DataFrame(
        {
            "colour": pd.Series(["red", "purple", None, "pink"], dtype=object),
            "size": pd.Categorical(["S", "XXL", None, "XS"]),
            "city": pd.Series(["Paris", "Rome", None, "Oslo"], dtype="str"),
        },
        index=["a", "b", "c", "d"],
    )


def _check_output(out, index, encoder):
    assert isinstance(out, pd.DataFrame)
    assert out.index.equals(index)
    assert list(out.columns) == list(encoder.get_feature_names_out())
    assert all(dtype == np.float64 for dtype in out.dtypes)
    assert not out.isna().to_numpy().any()
    assert np.isfinite(out.to_numpy()).all()
    assert len(set(out.columns)) == out.shape[1]


# -- registry -------------------------------------------------------------------------------


def test_registry_holds_the_32_canonical_names_in_order():
    assert list(REGISTRY) == list(ENCODERS)
    assert len(REGISTRY) == 32
    for name, spec in REGISTRY.items():
        assert spec.name == name
        assert isinstance(spec.supervised, bool)
        assert isinstance(spec.params, dict)
        assert spec.description and "\n" not in spec.description
        assert spec.family in FAMILIES and name in FAMILIES[spec.family]


def test_registry_checks_its_names_and_families_at_import():
    from encbench.encoders import registry

    specs = list(REGISTRY.values())
    assert list(registry._in_order(specs, ENCODERS)) == list(ENCODERS)
    with pytest.raises(ValueError, match="'OH' is configured twice"):
        registry._in_order(specs + [REGISTRY["OH"]], ENCODERS)
    with pytest.raises(ValueError, match=r"got \[\] not in it, \['Drop'\] missing"):
        registry._in_order(specs[1:], ENCODERS)
    with pytest.raises(ValueError, match=r"got \['Drop'\] not in it, \[\] missing"):
        registry._in_order(specs, ENCODERS[1:])
    with pytest.raises(ValueError, match="each name of encbench.vocab.ENCODERS once"):
        registry._in_order(specs, ENCODERS + ("OH",))
    assert registry._by_family(REGISTRY, registry._FAMILY_ORDER) == dict(FAMILIES)
    with pytest.raises(ValueError, match=r"unknown family: got \{'Drop': 'baseline'\}"):
        registry._by_family(REGISTRY, registry._FAMILY_ORDER[:-1])


def test_registry_names_each_class_it_builds_without_importing_it():
    """The registry's stand-ins resolve to the package's classes, and building goes through them."""
    import encbench.encoders as package
    from encbench.encoders import registry

    stand_ins = {v.name: v for v in vars(registry).values() if isinstance(v, registry._LazyClass)}
    built = ({type(make_encoder(n)).__name__ for n in [*NAMES, "Native"]}
             | {"GLMMEncoder", "MeanTargetEncoder"})
    assert set(stand_ins) == built                   # every class the registry builds, no other
    for name, ref in stand_ins.items():
        cls = ref.resolve()
        assert isinstance(cls, type) and cls.__name__ == name
        assert name in package.__all__ and getattr(package, name) is cls
        assert pickle.loads(pickle.dumps(ref)) == ref
    assert isinstance(registry.OneHotEncoder(), package.OneHotEncoder)


def test_package_exports_load_on_first_use():
    import encbench.encoders as package

    assert set(package.__all__) <= set(dir(package))
    assert all(getattr(package, name) is not None for name in package.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        package.Nope  # noqa: B018


def test_registry_imports_no_encoder_library():
    """Names, families and descriptions come without scikit-learn (the app's first visit reads them)."""
    code = ("import sys; from encbench.encoders import FAMILIES, REGISTRY, make_encoder; "
            "import encbench.views.consensus; "
            "assert len(REGISTRY) == 32 and REGISTRY['WoE'].family == 'simple target' and FAMILIES; "
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'scipy', 'category_encoders', "
            "'skrub', 'lightgbm', 'skopt'}); "
            "assert not heavy, heavy; make_encoder('OH'); assert 'sklearn' in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_registry_specs_are_frozen_and_read_only():
    spec = REGISTRY["CVMT_5"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "x"
    with pytest.raises(TypeError):
        REGISTRY["new"] = spec


def test_registry_families_and_supervision_follow_the_paper():
    assert FAMILIES["identifier"] == ("OH", "Ord", "Bin")
    assert FAMILIES["binning"] == ("DMT_2", "DMT_5", "DMT_10", "PBMT_0.001", "PBMT_0.01", "PBMT_0.1")
    assert set(FAMILIES["smoothing"]) == {"GLMM", "ME_0.1", "ME_1", "ME_10"}
    assert sorted(sum(FAMILIES.values(), ())) == sorted(ENCODERS)  # the 32; the others apart
    assert {n for n in ENCODERS if not REGISTRY[n].supervised} == {
        "Drop", "OH", "Ord", "Bin", "Count", "Sum", "MH"}
    assert REGISTRY["CVGLMM_10"].params == {"encoder": "GLMM", "n_splits": 10, "random_state": 1444}
    assert REGISTRY["ME_0.1"].params == {"m": 0.1, "unknown_value": -1.0}
    assert REGISTRY["PBMT_0.01"].params == {"threshold": 0.01, "unknown_value": -1.0}
    assert REGISTRY["DMT_5"].params == {"n_bins": 5, "unknown_value": -1.0}


def test_make_encoder_rejects_unknown_names():
    with pytest.raises(ValueError, match="'CVMT_3'"):
        make_encoder("CVMT_3")
    with pytest.raises(ValueError, match="None"):
        make_encoder(None)


def test_make_encoder_builds_fresh_configured_instances():
    a, b = make_encoder("CVGLMM_5", random_state=3), make_encoder("CVGLMM_5", random_state=3)
    assert a is not b and a.encoder is not b.encoder
    assert a.get_params()["n_splits"] == 5 and a.get_params()["random_state"] == 3
    assert type(a.encoder).__name__ == "GLMMEncoder"
    assert make_encoder("ME_10").m == 10.0
    assert make_encoder("PBMT_0.001").threshold == 0.001
    assert make_encoder("CB").shuffle is False  # the study's row order
    # the wrappers' folds default to the study's seed
    assert make_encoder("BUMT_5").random_state == 1444
    assert make_encoder("CVMT_2").encoder.unknown_value == -1.0


# -- shared behaviour, each encoder through the registry -------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_fit_transform_shape_names_and_values(name):
    X, y = _train()
    encoder = make_encoder(name, random_state=0)
    assert encoder.fit(X, y) is encoder
    out = encoder.transform(X)
    _check_output(out, X.index, encoder)
    out_ft = make_encoder(name, random_state=0).fit_transform(X, y)
    _check_output(out_ft, X.index, encoder)
    assert list(out_ft.columns) == list(out.columns)


@pytest.mark.parametrize("name", NAMES)
def test_unseen_levels_and_missing_values(name):
    X, y = _train()
    encoder = make_encoder(name, random_state=0).fit(X, y)
    test = _test_frame()
    out = encoder.transform(test)
    _check_output(out, test.index, encoder)
    if name not in TEXT_BASED:
        # "size" and "city" had no missing values in fit: NaN is an unseen level, and all
        # unseen levels share one encoding.
        columns = [c for c in out.columns if not c.startswith("colour") and c != "intercept"]
        rows = out.loc[["b", "c", "d"], columns].to_numpy()
        np.testing.assert_array_equal(rows[0], rows[1])
        np.testing.assert_array_equal(rows[0], rows[2])
    # "colour" had missing values in fit: NaN is a training level, encoded like in training.
    train_out = encoder.transform(X)
    missing_row = X.index[X["colour"].isna()][0]
    colour = [c for c in out.columns if c.startswith("colour")]
    np.testing.assert_allclose(out.loc["c", colour], train_out.loc[missing_row, colour])


@pytest.mark.parametrize("name", NAMES)
def test_clone_get_params_set_params_and_pickle(name):
    X, y = _train()
    encoder = make_encoder(name, random_state=0)
    params = encoder.get_params()
    twin = clone(encoder)
    assert type(twin) is type(encoder)
    assert twin.get_params().keys() == params.keys()
    assert twin.set_params(**{k: v for k, v in params.items() if "__" not in k}) is twin
    assert not hasattr(twin, "output_spec_")  # clone gives an unfitted copy
    # __init__ only stores its (keyword-only) arguments.
    for parameter in list(inspect.signature(type(encoder).__init__).parameters.values())[1:]:
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    encoder.fit(X, y)
    restored = pickle.loads(pickle.dumps(encoder))
    pd.testing.assert_frame_equal(restored.transform(_test_frame()), encoder.transform(_test_frame()))
    # a fitted encoder can be cloned again (BayesSearchCV does this)
    assert clone(encoder).get_params().keys() == params.keys()


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_under_random_state(name):
    X, y = _train()
    first = make_encoder(name, random_state=42)
    second = make_encoder(name, random_state=42)
    pd.testing.assert_frame_equal(first.fit_transform(X, y), second.fit_transform(X, y))
    pd.testing.assert_frame_equal(first.transform(_test_frame()), second.transform(_test_frame()))


@pytest.mark.parametrize("name", NAMES)
def test_one_level_column_and_levels_seen_once(name):
    n = 30
    rng = np.random.default_rng(1)
    X = pd.DataFrame(
        {
            "const": ["only"] * n,
            "ids": [f"id{i}" for i in range(n)],  # every level seen once
        }
    )
    y = rng.integers(0, 2, n)
    encoder = make_encoder(name, random_state=0)
    _check_output(encoder.fit_transform(X, y), X.index, encoder)
    test = pd.DataFrame({"const": ["only", "other"], "ids": ["id3", "new"]})
    _check_output(encoder.transform(test), test.index, encoder)


@pytest.mark.parametrize("name", SUPERVISED)
@pytest.mark.parametrize("label", [0, 1])
def test_single_class_target(name, label):
    X, _ = _train(n=40)
    y = np.full(len(X), label)
    encoder = make_encoder(name, random_state=0)
    _check_output(encoder.fit_transform(X, y), X.index, encoder)
    _check_output(encoder.transform(_test_frame()), _test_frame().index, encoder)


@pytest.mark.parametrize("name", SUPERVISED)
def test_supervised_encoders_need_y_and_transform_takes_none(name):
    X, _ = _train()
    encoder = make_encoder(name)
    with pytest.raises(ValueError, match="y"):
        encoder.fit(X)
    with pytest.raises(ValueError, match="one value per row"):
        encoder.fit(X, np.zeros(3))
    assert list(inspect.signature(encoder.transform).parameters) == ["X"]


@pytest.mark.parametrize("name", [n for n in NAMES if n not in SUPERVISED])
def test_unsupervised_encoders_ignore_y(name):
    X, y = _train()
    without = make_encoder(name).fit_transform(X)
    pd.testing.assert_frame_equal(without, make_encoder(name).fit(X, y).transform(X))


@pytest.mark.parametrize("name", NAMES)
def test_numpy_input_and_dtype_independence(name):
    X, y = _train()
    reference = make_encoder(name, random_state=0).fit(X, y)
    expected = reference.transform(_test_frame()).to_numpy()
    # a 2-D object array (what ColumnTransformer passes after SimpleImputer): generated names
    array_encoder = make_encoder(name, random_state=0).fit(X.to_numpy(dtype=object), y)
    out = array_encoder.transform(_test_frame().to_numpy(dtype=object))
    np.testing.assert_allclose(out.to_numpy(), expected)
    assert all(c.startswith(("x0", "x1", "x2", "intercept", "drop", "col_")) for c in out.columns)
    # get_feature_names_out(input_features) renames like a scikit-learn transformer
    renamed = array_encoder.get_feature_names_out(["colour", "size", "city"])
    assert list(renamed) == list(reference.get_feature_names_out())
    # the same data as object, pandas str or category columns encodes identically
    as_category = X.astype("category")
    as_str = X.astype(object).astype("str")
    for variant in (as_category, as_str):
        other = make_encoder(name, random_state=0).fit(variant, y)
        np.testing.assert_allclose(other.transform(_test_frame()).to_numpy(), expected)
    # columns are matched by name
    shuffled = _test_frame()[["city", "colour", "size"]]
    np.testing.assert_allclose(reference.transform(shuffled).to_numpy(), expected)


def test_transform_rejects_missing_columns_with_a_message():
    X, y = _train()
    encoder = make_encoder("MT").fit(X, y)
    with pytest.raises(ValueError, match="'size'"):
        encoder.transform(X.drop(columns="size"))
    with pytest.raises(ValueError, match="2 columns"):
        make_encoder("OH").fit(X.to_numpy(dtype=object)).transform(X.to_numpy(dtype=object)[:, :2])


@pytest.mark.parametrize("name", ["OH", "MH", "CVMT_5", "BUGLMM_2", "CB", "Sum"])
@pytest.mark.parametrize("output", ["default", "pandas"])
def test_inside_column_transformer_after_imputation(name, output):
    X, y = _train()
    X = X.assign(number=np.arange(len(X), dtype=float))
    categorical = ["colour", "size", "city"]
    transformer = ColumnTransformer(
        [
            ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"), make_encoder(name)),
             categorical),
            ("num", "passthrough", ["number"]),
        ]
    )
    if output == "pandas":
        transformer.set_output(transform="pandas")
    fitted = clone(transformer)
    train = fitted.fit_transform(X, y)
    test = fitted.transform(_test_frame().assign(number=1.0))
    names = fitted.get_feature_names_out()
    assert train.shape[1] == test.shape[1] == len(names)
    assert names[-1] == "num__number"
    if output == "pandas":
        assert list(test.columns) == list(names)
    assert not np.isnan(np.asarray(test, dtype=float)).any()
