"""Supervised encoders beyond binary targets: one column per class (multiclass), the mean of a
float y (regression), GLMM on a continuous y against an independent REML fit, WoE refused."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar

from encbench.encoders import (
    GLMMEncoder,
    MeanTargetEncoder,
    OneVsRestEncoder,
    applies_to,
    applies_to_task,
    make_encoder,
)
from encbench.encoders.wrappers import make_folds

X_TOY = pd.DataFrame({"colour": ["red", "blue", "red", "green", "blue", "red"]})
Y_CLASSES = np.array([0, 1, 2, 1, 0, 0])


def test_multiclass_mt_has_one_column_per_class_with_hand_computed_shares():
    out = make_encoder("MT", task="multiclass").fit(X_TOY, Y_CLASSES).transform(X_TOY)
    assert list(out.columns) == ["colour_0", "colour_1", "colour_2"]
    # red: rows 0, 2, 5 with classes 0, 2, 0; blue: rows 1, 4 with 1, 0; green: row 3 with 1
    expected = {"red": (2 / 3, 0.0, 1 / 3), "blue": (0.5, 0.5, 0.0), "green": (0.0, 1.0, 0.0)}
    for row, level in enumerate(X_TOY["colour"]):
        assert out.iloc[row].tolist() == pytest.approx(expected[level])
    # an unseen level: the study's configuration's -1 in every column; with the prior, each
    # class's share of the rows (3/6, 2/6, 1/6)
    violet = pd.DataFrame({"colour": ["violet"]})
    unseen = make_encoder("MT", task="multiclass").fit(X_TOY, Y_CLASSES).transform(violet)
    assert unseen.iloc[0].tolist() == [-1.0, -1.0, -1.0]
    prior = OneVsRestEncoder(encoder=MeanTargetEncoder()).fit(X_TOY, Y_CLASSES).transform(violet)
    assert prior.iloc[0].tolist() == pytest.approx([0.5, 1 / 3, 1 / 6])


def test_one_vs_rest_equals_the_binary_encoder_on_each_class():
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.choice(list("pqrst"), 80), "b": rng.choice(list("xyz"), 80)})
    y = rng.integers(0, 4, 80)
    wrapped = OneVsRestEncoder(encoder=make_encoder("CVMT_5")).fit_transform(X, y)
    for k in range(4):
        alone = make_encoder("CVMT_5").fit_transform(X, (y == k).astype(float))
        assert np.array_equal(wrapped[[f"a_{k}", f"b_{k}"]].to_numpy(), alone.to_numpy())
    assert wrapped.shape == (80, 8)


def test_regression_mt_is_the_mean_of_y_per_level():
    y = np.array([1.5, -2.0, 3.5, 10.0, 4.0, 0.25])
    out = make_encoder("MT", task="regression").fit(X_TOY, y).transform(X_TOY)["colour"]
    expected = {"red": (1.5 + 3.5 + 0.25) / 3, "blue": (-2.0 + 4.0) / 2, "green": 10.0}
    assert out.tolist() == pytest.approx([expected[v] for v in X_TOY["colour"]])


@pytest.mark.parametrize("name", ["MT", "ME_1", "PBMT_0.01", "DMT_5", "CB", "GLMM", "CVMT_5",
                                  "BUMT_2", "CVGLMM_5", "SkTE"])
def test_target_family_encodes_a_float_y_and_multiclass_gives_k_columns(name):
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.choice([f"l{i}" for i in range(12)], 120)})
    y_float = rng.normal(size=120) * 3 + 1
    reg = make_encoder(name, task="regression").fit(X, y_float)
    values = np.asarray(reg.transform(X), dtype=float)
    assert np.isfinite(values).all()
    assert values.min() >= y_float.min() - 1e-9 and values.max() <= y_float.max() + 1e-9
    y_class = rng.integers(0, 3, 120)
    multi = make_encoder(name, task="multiclass").fit_transform(X, y_class)
    single = make_encoder(name).fit_transform(X, (y_class == 0).astype(float))
    assert multi.shape[1] == 3 * single.shape[1]


def test_regression_folds_of_the_wrappers_are_not_stratified_on_a_continuous_y():
    y = np.arange(100, dtype=float)  # 100 distinct values: a continuous target
    folds = make_folds(y, 5, 1444)
    from sklearn.model_selection import KFold

    expected = list(KFold(5, shuffle=True, random_state=1444).split(np.zeros((100, 1))))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, expected))


def _reml_by_likelihood(codes: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``(ratio, intercept)`` of ``y ~ 1 + (1 | A)`` by maximising the REML likelihood written
    with the full N x N covariance matrix, independent of the encoder's closed form."""
    n = len(y)
    Z = np.eye(codes.max() + 1)[codes]
    X = np.ones((n, 1))

    def profiled(log_g):
        g = np.exp(log_g)
        V = np.eye(n) + g * Z @ Z.T  # covariance divided by sigma^2
        Vinv = np.linalg.inv(V)
        beta = np.linalg.solve(X.T @ Vinv @ X, X.T @ Vinv @ y)
        r = y - X @ beta
        rss = float(r @ Vinv @ r)
        _, logdet_v = np.linalg.slogdet(V)
        _, logdet_x = np.linalg.slogdet(X.T @ Vinv @ X)
        return (n - 1) * np.log(rss) + logdet_v + logdet_x  # sigma^2 profiled out

    fit = minimize_scalar(profiled, bounds=(-12, 8), method="bounded", options={"xatol": 1e-10})
    g = float(np.exp(fit.x))
    Vinv = np.linalg.inv(np.eye(n) + g * Z @ Z.T)
    intercept = float((X.T @ Vinv @ y)[0] / (X.T @ Vinv @ X)[0, 0])
    return g, intercept


def test_glmm_on_a_continuous_y_matches_a_naive_mixed_model_fit():
    rng = np.random.default_rng(11)
    levels = np.array([f"g{i}" for i in range(6)])
    codes = rng.integers(0, 6, 60)
    effects = rng.normal(scale=2.0, size=6)
    y = 5.0 + effects[codes] + rng.normal(scale=1.5, size=60)
    X = pd.DataFrame({"group": levels[codes]})
    encoder = GLMMEncoder().fit(X, y)
    ordered = pd.Index(levels).get_indexer(X["group"])  # codes with level i for 'g{i}'
    g, intercept = _reml_by_likelihood(ordered, y)
    assert encoder.reml_.ratio[0] == pytest.approx(g, rel=1e-4)
    assert encoder.reml_.intercept[0] == pytest.approx(intercept, rel=1e-6)
    out = encoder.transform(pd.DataFrame({"group": levels}))["group"].to_numpy()
    for i in range(6):  # lme4's coef: intercept + shrunk deviation of the level mean
        rows = y[ordered == i]
        shrink = g * len(rows) / (1 + g * len(rows))
        assert out[i] == pytest.approx(intercept + shrink * (rows.mean() - intercept), rel=1e-5)


def test_woe_applies_to_binary_targets_only():
    assert applies_to_task("WoE", "binary") and not applies_to_task("WoE", "regression")
    assert not applies_to("WoE", "DT", task="multiclass") and applies_to("MT", "DT", task="multiclass")
    with pytest.raises(ValueError, match="binary target only"):
        make_encoder("WoE", task="multiclass")


def test_the_models_an_encoder_runs_with_follow_the_task_and_the_model():
    """applicable_models keeps the chosen models' order: all of them for an ordinary encoder,
    the models taking categories for Native, none for WoE beyond binary targets; a custom name
    runs with every model."""
    from encbench.encoders import applicable_models

    models = ["LogReg", "LGBM", "DT", "HGB"]
    assert applicable_models("OH", models, "regression") == tuple(models)
    assert applicable_models("Native", models, "multiclass") == ("LGBM", "HGB")
    assert applicable_models("WoE", models, "multiclass") == () and applicable_models("WoE", models) == tuple(models)
    assert applicable_models("my_plugin:Enc", models, "regression") == tuple(models)


def test_sklearn_target_encoder_follows_the_task():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.choice(list("abcdef"), 90)})
    multi = make_encoder("SkTE", task="multiclass")
    assert multi.get_params()["target_type"] == "multiclass"
    assert multi.fit_transform(X, rng.integers(0, 3, 90)).shape == (90, 3)
    reg = make_encoder("SkTE", task="regression")
    assert reg.get_params()["target_type"] == "continuous"
    assert reg.fit_transform(X, rng.normal(size=90)).shape == (90, 1)


def test_unsupervised_encoders_are_unchanged_by_the_task():
    for task in ("multiclass", "regression"):
        encoder = make_encoder("OH", task=task)
        assert not isinstance(encoder, OneVsRestEncoder)
        assert type(encoder) is type(make_encoder("OH"))
    assert isinstance(make_encoder("MT", task="regression"), MeanTargetEncoder)
