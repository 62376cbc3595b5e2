"""The model registry: every model's entry, and HGB run through the engine like the study's five."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench import vocab
from encbench.engine.grid import Task
from encbench.engine.protocol import Payload, bayes_n_iter, make_model, run_task
from encbench.engine.sparse import uses_sparse
from encbench.models import MODEL_REGISTRY, get_model, models_for, sparse_models


def test_the_study_models_keep_their_published_configuration():
    assert vocab.STUDY_MODELS == ("DT", "LGBM", "SVM", "kNN", "LogReg")
    dt, svm, logreg = make_model("DT"), make_model("SVM"), make_model("LogReg")
    assert (dt.max_depth, dt.random_state) == (5, 3)
    assert (svm.kernel, svm.C, svm.gamma, svm.probability, svm.random_state) == ("rbf", 1.0, "scale", True, 5)
    assert (logreg.solver, logreg.max_iter, logreg.random_state) == ("lbfgs", 100, 7)
    assert make_model("kNN").n_neighbors == 5
    lgbm = make_model("LGBM")
    assert (lgbm.n_estimators, lgbm.random_state, lgbm.n_jobs) == (3000, 4, 1)
    assert make_model("LGBM", tuning="full").n_estimators == 100  # the search sets it
    stopping = get_model("LGBM").early_stopping
    assert (stopping.validation_fraction, stopping.validation_seed, stopping.patience) == (0.1, 2, 50)
    assert get_model("LGBM").grid is None and all(
        get_model(m).early_stopping is None for m in ("DT", "SVM", "kNN", "LogReg", "HGB"))


def test_every_entry_is_complete_and_builds_fresh_estimators():
    for name, spec in MODEL_REGISTRY.items():
        assert spec.name == name and spec.tasks and spec.description
        first, second = spec.make(), spec.make()
        assert first is not second and hasattr(first, "fit")
        assert hasattr(first, "predict_proba") or "binary" not in spec.tasks, name
        assert spec.space(), name
        if spec.grid is not None:
            params = first.get_params()
            assert set(spec.grid) <= set(params), name
        assert all(k in spec.make("full").get_params() for k in spec.space()), name
    assert models_for("binary") == vocab.MODELS
    assert "HGB" in vocab.MODELS and "HGB" not in vocab.STUDY_MODELS
    with pytest.raises(ValueError, match="unknown model: got 'XGB'"):
        get_model("XGB")


def test_sparse_encoding_is_derived_from_the_entries():
    assert sparse_models() == {"OH": {"DT", "LGBM"}, "Sum": {"DT", "LGBM"}}
    assert not uses_sparse("OH", ("DT", "HGB"))  # HGB takes no sparse input


def test_takes_sparse_says_which_estimators_fit_on_csr_input():
    """The flag against the estimators themselves: those that take sparse fit and predict on a
    CSR matrix with the dense matrix's shape; the others refuse it."""
    import scipy.sparse as sp

    rng = np.random.default_rng(4)
    dense = (rng.random((120, 6)) < 0.3).astype(float)
    y = (dense[:, 0] + rng.random(120) > 0.8).astype(int)
    assert {"DT", "LGBM", "SVM", "kNN", "LogReg"} <= \
        {n for n, spec in MODEL_REGISTRY.items() if spec.takes_sparse} and not get_model("HGB").takes_sparse
    for name, spec in MODEL_REGISTRY.items():
        if "binary" not in spec.tasks:
            continue
        estimator = spec.make("full")
        if spec.takes_sparse:
            fitted = estimator.fit(sp.csr_matrix(dense), y)
            assert fitted.predict(sp.csr_matrix(dense)).shape == (120,), name
        else:
            with pytest.raises((TypeError, ValueError)):
                estimator.fit(sp.csr_matrix(dense), y)
    assert uses_sparse("OH", ("LogReg", "kNN"), dense_bytes=10**12)
    assert not uses_sparse("OH", ("LogReg", "HGB"), dense_bytes=10**12)


def test_search_sizes_follow_the_published_rule():
    # Integer dimensions count their values, a real one 3 points, capped at 20
    assert bayes_n_iter(get_model("DT").space()) == 4
    assert bayes_n_iter(get_model("kNN").space()) == 9
    assert bayes_n_iter(get_model("HGB").space()) == 20


def _toy_payload(seed: int = 0) -> Payload:
    rng = np.random.default_rng(seed)
    n = 200
    colour = rng.choice(["red", "green", "blue", "grey"], size=n)
    size = rng.normal(size=n)
    logit = (colour == "red") * 1.5 - (colour == "blue") + size
    y = (logit + rng.normal(scale=0.7, size=n) > 0).astype(int)
    X = pd.DataFrame({"colour": pd.Series(colour, dtype=object), "size": size})
    return Payload("toy", "0" * 64, X, y, ("colour",))


def test_hgb_runs_through_the_engine_as_a_hand_built_pipeline_scores():
    """HGB's engine scores equal a hand-built fit: one-hot colour, robust-scaled size."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import accuracy_score, roc_auc_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import RobustScaler

    data = _toy_payload()
    rows = run_task(Task("toy", "OH", 1, 5, ("HGB",), ("AUC", "Acc"), "no"), data)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    train, test = list(StratifiedKFold(5).split(data.X, data.y))[1]

    def features(index, levels, scaler):
        X = data.X.iloc[index]
        dummies = np.column_stack([(X["colour"] == level).to_numpy() for level in levels])
        return np.column_stack([dummies, scaler.transform(X[["size"]])])

    levels = list(dict.fromkeys(data.X["colour"].iloc[train]))  # OH: order of first appearance
    scaler = RobustScaler().fit(data.X[["size"]].iloc[train])
    model = HistGradientBoostingClassifier(random_state=1).fit(features(train, levels, scaler), data.y[train])
    X_test = features(test, levels, scaler)
    expected = {"AUC": roc_auc_score(data.y[test], model.predict_proba(X_test)[:, 1]),
                "Acc": accuracy_score(data.y[test], model.predict(X_test))}
    got = {r["scoring"]: r["cv_score"] for r in rows}
    assert got == pytest.approx(expected, abs=1e-12)


def test_hgb_is_tuned_like_the_others(monkeypatch):
    from encbench.engine import protocol

    # the search itself is the study's (20 points for HGB's space, 5 inner folds); 3 points and
    # 2 folds exercise the same path
    assert protocol.bayes_n_iter(protocol.bayes_space("HGB")) == 20 and protocol.INNER_FOLDS == 5
    monkeypatch.setattr(protocol, "bayes_n_iter", lambda space: 3)
    monkeypatch.setattr(protocol, "INNER_FOLDS", 2)
    data = _toy_payload(1)
    for tuning in ("model", "full"):
        rows = run_task(Task("toy", "MT", 0, 5, ("HGB",), ("BAcc",), tuning), data)
        assert rows[0]["status"] == "ok", rows[0]["error"]
        assert 0.5 < rows[0]["cv_score"] <= 1.0


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_one_lightgbm_fit_predicts_as_a_fit_stopped_by_each_metric(task):
    """EarlyStopping.fit_each fits once and gives each metric the number of trees a fit stopped
    by that metric alone keeps: its predictions with them equal the separate fit's, bit for bit."""
    from encbench.metrics import get_metric, metrics_for

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    signal = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=1.0, size=300)
    y = (signal if task == "regression" else
         (signal > 0).astype(int) if task == "binary" else np.digitize(signal, [-0.7, 0.7]))
    fit_rows, val_rows, test_rows = slice(0, 200), slice(200, 240), slice(240, 300)
    stopping = get_model("LGBM").early_stopping
    metrics = [get_metric(m) for m in metrics_for(task)]
    joint = make_model("LGBM", task=task)
    trees = stopping.fit_each(joint, X[fit_rows], y[fit_rows], X[val_rows], y[val_rows], metrics, task)
    predict = "predict" if task == "regression" else "predict_proba"
    for metric in metrics:
        alone = stopping.fit(make_model("LGBM", task=task), X[fit_rows], y[fit_rows], X[val_rows],
                             y[val_rows], metric, task)
        assert trees[metric.name] == alone.best_iteration_, metric.name
        np.testing.assert_array_equal(getattr(joint, predict)(X[test_rows], num_iteration=trees[metric.name]),
                                      getattr(alone, predict)(X[test_rows]))
