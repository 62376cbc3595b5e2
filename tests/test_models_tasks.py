"""The model registry per task: a classifier for binary and multiclass targets, a regressor for
regression, the binary configurations unchanged."""
from __future__ import annotations

import pytest

from encbench.models import MODEL_REGISTRY, get_model, models_for


def test_each_task_has_its_models():
    assert models_for("multiclass") == ("DT", "LGBM", "SVM", "kNN", "LogReg", "HGB")
    assert models_for("regression") == ("DT", "LGBM", "SVM", "kNN", "HGB", "Ridge")


@pytest.mark.parametrize(("name", "cls", "params"), [
    ("DT", "DecisionTreeRegressor", {"max_depth": 5, "random_state": 3}),
    ("kNN", "KNeighborsRegressor", {"n_neighbors": 5}),
    ("SVM", "SVR", {"kernel": "rbf", "C": 1.0, "gamma": "scale"}),
    ("LGBM", "LGBMRegressor", {"n_estimators": 3000, "metric": "None", "random_state": 4, "n_jobs": 1}),
    ("HGB", "HGBRegressor", {"random_state": 1}),  # scikit-learn's, wide categories grouped (encbench.hgb)
    ("Ridge", "Ridge", {"alpha": 1.0}),
])
def test_the_regressors_and_their_configuration(name, cls, params):
    estimator = get_model(name).make(task="regression")
    assert type(estimator).__name__ == cls
    assert {k: estimator.get_params()[k] for k in params} == params
    if name == "HGB":
        from sklearn.ensemble import HistGradientBoostingRegressor

        assert isinstance(estimator, HistGradientBoostingRegressor)


def test_binary_and_multiclass_build_the_same_classifier_and_ridge_serves_regression_only():
    for name in models_for("multiclass"):
        spec = MODEL_REGISTRY[name]
        assert repr(spec.make(task="multiclass")) == repr(spec.make(task="binary")) == repr(spec.make())
    ridge = get_model("Ridge")
    assert ridge.grid == {"alpha": [0.1, 1, 10]} and ridge.space()["alpha"].bounds == (0.2, 5)
    assert type(ridge.make()).__name__ == "Ridge"  # its first (only) task
    with pytest.raises(ValueError, match="does not serve task 'binary'"):
        ridge.make(task="binary")
    with pytest.raises(ValueError, match="does not serve task 'regression'"):
        get_model("LogReg").make(task="regression")
    full = get_model("LGBM").make("full", task="regression")
    assert type(full).__name__ == "LGBMRegressor" and full.get_params()["n_estimators"] == 100
