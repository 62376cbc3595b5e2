"""The metric registry, and the statistics reading its direction (hand-computed examples)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench import vocab
from encbench.metrics import METRIC_REGISTRY, get_metric, greater_is_better, metrics_for
from encbench.stats import block_design, consensus, consensus_table, dataset_ranks, replicability


def test_the_study_metrics_on_a_hand_computed_fold():
    y = np.array([0, 0, 1, 1, 1])
    labels = np.array([0, 1, 1, 1, 0])
    probs = np.array([0.1, 0.6, 0.7, 0.9, 0.4])
    value = {name: get_metric(name).score(y, lambda: labels, lambda: probs) for name in vocab.METRICS}
    # TP 2, FP 1, FN 1, TN 1: recall 2/3 and 1/2; precision 2/3
    assert value["Acc"] == pytest.approx(3 / 5)
    assert value["BAcc"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert value["F1"] == pytest.approx(2 / 3)
    # pairs (positive, negative) ranked correctly: 0.7, 0.9 beat both; 0.4 beats 0.1 only -> 5/6
    assert value["AUC"] == pytest.approx(5 / 6)
    assert vocab.METRICS == ("BAcc", "F1", "Acc", "AUC") == metrics_for("binary")
    assert all(METRIC_REGISTRY[m].in_study and METRIC_REGISTRY[m].ratio_scale for m in vocab.METRICS)


def test_regression_metrics_and_their_direction():
    y, pred = np.array([1.0, 2.0, 4.0]), np.array([2.0, 2.0, 1.0])
    assert get_metric("RMSE").score(y, lambda: pred, None) == pytest.approx(np.sqrt((1 + 0 + 9) / 3))
    assert get_metric("MAE").score(y, lambda: pred, None) == pytest.approx(4 / 3)
    ss_res, ss_tot = 10.0, ((y - y.mean()) ** 2).sum()
    assert get_metric("R2").score(y, lambda: pred, None) == pytest.approx(1 - ss_res / ss_tot)
    assert not greater_is_better("RMSE") and greater_is_better("R2") and greater_is_better("custom")
    assert get_metric("RMSE").label == "RMSE (lower is better)"
    assert not get_metric("R2").ratio_scale and not get_metric("MAE").ratio_scale
    assert metrics_for("regression") == ("RMSE", "MAE", "R2")
    with pytest.raises(ValueError, match="unknown scoring: got 'LogLoss'"):
        get_metric("LogLoss")


def test_lightgbm_stopping_value_rounds_labels_but_not_scores():
    y, probs = np.array([0, 1, 1]), np.array([0.4, 0.6, 0.45])
    assert get_metric("Acc").stopping_value(y, probs) == pytest.approx(2 / 3)  # 0, 1, 0
    assert get_metric("AUC").stopping_value(y, probs) == pytest.approx(1.0)


def _errors(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"dataset": f"d{d}", "encoder": e, "scoring": "RMSE", "cv_score": float(rng.uniform(1, 5))}
            for d in range(6) for e in ("A", "B", "C", "D")]
    return pd.DataFrame(rows)


def test_a_lower_is_better_metric_ranks_the_smallest_error_first():
    errors = _errors()
    # naive reference: per dataset rank ascending by error, then the mean rank
    naive = errors.assign(rank=errors.groupby("dataset")["cv_score"].rank(method="dense"))
    expected = naive.groupby("encoder")["rank"].mean().rank(method="dense").astype(int)
    got = consensus(errors, "R-M")
    assert got.sort_index().tolist() == expected.sort_index().tolist()
    # the same as the negated scores under "higher is better"
    flipped = errors.assign(cv_score=-errors["cv_score"]).drop(columns="scoring")
    for strategy in ("R-M", "R-B", "R-W", "Q-M", "Q-Md", "Q-RM", "R-Nem", "R-Kem"):
        assert consensus(errors, strategy).equals(consensus(flipped, strategy)), strategy
    ranks = dataset_ranks(errors)
    best = ranks.loc[ranks["rank"] == 1]
    assert (best.set_index("dataset")["cv_score"] == errors.groupby("dataset")["cv_score"].min()).all()
    # scores handed back are the errors as given, not negated
    assert block_design(errors).scores["cv_score"].min() > 0


def test_strategies_undefined_for_an_error_refuse_it():
    errors = _errors()
    for strategy in ("Q-Th", "Q-Imp"):
        with pytest.raises(ValueError, match=f"strategy '{strategy}' is undefined for scoring 'RMSE'"):
            consensus(errors, strategy)
    with pytest.raises(ValueError, match="undefined for scoring 'RMSE'"):
        consensus_table(errors, ["R-M", "Q-Th"], by=("scoring",))
    with pytest.raises(ValueError, match="undefined for scoring 'RMSE'"):
        replicability(errors, [2], n_pairs=2, strategy="Q-Th")


def test_pooling_opposite_directions_is_refused_but_each_metric_ranks_alone():
    errors = _errors()
    aucs = errors.assign(scoring="AUC", cv_score=1 - errors["cv_score"] / 10)
    both = pd.concat([errors, aucs])
    pooled = pd.concat([errors, aucs.assign(dataset=aucs["dataset"] + "-auc")])  # voters of both
    with pytest.raises(ValueError, match="opposite directions"):
        consensus_table(pooled, ["R-M"], by=())
    table = consensus_table(both, ["R-M"], by=("scoring",))
    per = {s: g.set_index("encoder")["rank"] for s, g in table.groupby("scoring")}
    # AUC = 1 - error/10: the same order as the errors, so the same ranking
    assert per["AUC"].sort_index().tolist() == per["RMSE"].sort_index().tolist()


def _stopping_cases():
    """Seeded validation folds as LightGBM's criterion sees them: few rows, many ties (scores
    rounded to a coarse grid), all-one-class predictions and classes missing from the fold."""
    rng = np.random.default_rng(7)
    for case in range(300):
        n = int(rng.integers(2, 60))
        k = int(rng.integers(2, 5))
        y = rng.integers(0, k, n)
        P = rng.dirichlet(np.ones(k), n)
        if case % 3 == 0:  # ties among the scores
            P = np.round(P, 1)
            P = P / P.sum(axis=1, keepdims=True)
        if case % 7 == 0:  # one predicted class everywhere
            P = np.tile(P[0], (n, 1))
        yield k, y, P


def test_the_stopping_criterion_equals_scikit_learns_metrics_exactly():
    """LightGBM's per-round criterion uses fast versions of the classification metrics; on
    binary and multiclass folds (ties, a constant prediction, a class missing) each returns
    the very float scikit-learn's function returns, or the same exception."""
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score, roc_auc_score

    def reference(name, task, y, values):
        if name == "Acc":
            return accuracy_score(y, values)
        if name == "BAcc":
            return balanced_accuracy_score(y, values)
        if name == "F1":
            return (f1_score(y, values, zero_division=0.0) if task == "binary"
                    else f1_score(y, values, average="macro", zero_division=0.0))
        if task == "binary":
            return roc_auc_score(y, values)
        return roc_auc_score(y, values, multi_class="ovr", average="macro",
                             labels=np.arange(values.shape[1]))

    compared = 0
    for k, y, P in _stopping_cases():
        task = "binary" if k == 2 else "multiclass"
        given = P[:, 1] if task == "binary" else P
        for name in ("Acc", "BAcc", "F1", "AUC"):
            values = (given if name == "AUC" else
                      np.round(given) if task == "binary" else np.argmax(P, axis=1))
            try:
                expected = float(reference(name, task, y, values))
            except ValueError as exc:
                with pytest.raises(ValueError, match=str(exc)[:30]):
                    get_metric(name).stopping_value(y, given, task)
                continue
            got = get_metric(name).stopping_value(y, given, task)
            assert got == expected or (np.isnan(got) and np.isnan(expected)), (name, task, y, given)
            compared += 1
    assert compared > 1000
