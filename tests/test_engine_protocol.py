"""The protocol of docs/ARCHITECTURE.md, Protocol, one task in this process (no task processes, no DB)."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, RobustScaler

from encbench.data import load_dataset
from encbench.engine import Task
from encbench.engine import protocol, sparse
from encbench.engine.protocol import Payload, bayes_n_iter, bayes_space, fold_indices, run_task


@pytest.fixture(scope="module")
def credit():
    return Payload.from_dataset(load_dataset("bundled:credit-g"))


@pytest.fixture(scope="module")
def tictactoe():
    return Payload.from_dataset(load_dataset("bundled:tic-tac-toe"))


def _by(rows):
    return {(r["model"], r["scoring"]): r for r in rows}


def test_folds_are_stratified_kfold_without_shuffling(credit):
    expected = list(StratifiedKFold(5).split(np.zeros(len(credit.y)), credit.y))
    for fold in range(5):
        train, test = fold_indices(credit.y, 5, fold)
        assert np.array_equal(test, expected[fold][1]) and np.array_equal(train, expected[fold][0])
    with pytest.raises(ValueError, match="5"):
        fold_indices(credit.y, 5, 5)


def test_no_tuning_logreg_one_hot_matches_a_naive_sklearn_pipeline(credit):
    """Naive reference: sklearn's own one-hot encoder in the same preprocessing."""
    task = Task(credit.key, "OH", 2, 5, ("LogReg",), ("AUC", "BAcc"), "no")
    rows = _by(run_task(task, credit))
    train, test = fold_indices(credit.y, 5, 2)
    cats = list(credit.categorical)
    nums = [c for c in credit.X.columns if c not in cats]
    reference = ColumnTransformer([
        ("c", Pipeline([("i", SimpleImputer(strategy="most_frequent")),
                        ("e", OneHotEncoder(handle_unknown="ignore"))]), cats),
        ("n", Pipeline([("i", SimpleImputer(strategy="median")), ("s", RobustScaler())]), nums),
    ], sparse_threshold=0)
    X_train = reference.fit_transform(credit.X.iloc[train])
    model = LogisticRegression(solver="lbfgs", max_iter=100, random_state=7).fit(X_train, credit.y[train])
    X_test = reference.transform(credit.X.iloc[test])
    auc = roc_auc_score(credit.y[test], model.predict_proba(X_test)[:, 1])
    bacc = balanced_accuracy_score(credit.y[test], model.predict(X_test))
    assert rows[("LogReg", "AUC")]["status"] == "ok"
    # identical today on all five folds; the slack only allows for a change of column order
    # moving lbfgs' stopping point
    assert rows[("LogReg", "AUC")]["cv_score"] == pytest.approx(auc, abs=1e-6)
    assert rows[("LogReg", "BAcc")]["cv_score"] == pytest.approx(bacc, abs=1e-6)


def test_no_tuning_all_models_and_metrics(tictactoe):
    task = Task(tictactoe.key, "MT", 0, 5, ("DT", "LGBM", "SVM", "kNN", "LogReg"),
                ("BAcc", "F1", "Acc", "AUC"), "no")
    rows = run_task(task, tictactoe)
    assert len(rows) == 20
    for row in rows:
        assert row["status"] == "ok", row
        assert 0.0 <= row["cv_score"] <= 1.0 and row["time"] > 0
        assert (row["dataset"], row["fold"], row["n_folds"], row["tuning"]) == ("50", 0, 5, "no")
    # deterministic: the same task gives the same scores
    again = run_task(task, tictactoe)
    assert [r["cv_score"] for r in again] == [r["cv_score"] for r in rows]


def test_model_and_full_tuning_run(tictactoe):
    model_rows = run_task(Task("50", "OH", 1, 5, ("DT", "kNN"), ("AUC",), "model"), tictactoe)
    full_rows = run_task(Task("50", "OH", 1, 5, ("DT",), ("BAcc",), "full"), tictactoe)
    assert [r["status"] for r in model_rows + full_rows] == ["ok"] * 3
    assert all(r["tuning"] == "model" for r in model_rows) and full_rows[0]["tuning"] == "full"


def test_full_tuning_iterations_follow_the_published_rule():
    sizes = {m: bayes_n_iter(bayes_space(m)) for m in ("DT", "kNN", "LogReg", "SVM", "LGBM")}
    assert sizes == {"DT": 4, "kNN": 9, "LogReg": 3, "SVM": 9, "LGBM": 20}


def test_encoder_failure_fails_every_row_with_its_error(tictactoe, monkeypatch):
    def broken(name, random_state=0, task="binary"):
        raise RuntimeError(f"no such thing as {name}")

    monkeypatch.setattr("encbench.engine.protocol.make_encoder", broken)
    rows = run_task(Task("50", "MT", 0, 5, ("DT", "LGBM"), ("AUC", "F1"), "no"), tictactoe)
    assert {r["status"] for r in rows} == {"failed"} and len(rows) == 4
    assert all("encoder MT" in r["error"] and "no such thing as MT" in r["error"] for r in rows)
    assert all(r["cv_score"] is None for r in rows)


def test_model_failure_fails_only_that_model(tictactoe, monkeypatch):
    real = protocol.make_model

    class Exploding:
        def fit(self, X, y):
            raise ArithmeticError("model blew up")

    monkeypatch.setattr(protocol, "make_model", lambda name, **kw: Exploding() if name == "kNN" else real(name, **kw))
    rows = _by(run_task(Task("50", "OH", 0, 5, ("kNN", "DT"), ("AUC", "Acc"), "no"), tictactoe))
    assert rows[("kNN", "AUC")]["status"] == "failed"
    assert rows[("kNN", "Acc")]["error"] == "model kNN: ArithmeticError: model blew up"
    assert rows[("DT", "AUC")]["status"] == rows[("DT", "Acc")]["status"] == "ok"


def test_lgbm_validation_split_is_the_published_one():
    """Drop on monks-problems-1 (no numerical column) leaves LightGBM nothing to split on: each
    fold predicts the majority class of the 90 % it is fitted on, so the fold's F1 is 0 or
    2p / (1 + p). Which folds predict positive is set by the validation split alone; the
    published 0.5325 (4 positive folds of 5) needs ``train_test_split(..., random_state=2)``.
    """
    from encbench.store.published import load_published_results

    published = load_published_results()
    cell = published[(published["dataset"] == "333") & (published["encoder"] == "Drop")
                     & (published["model"] == "LGBM") & (published["tuning"] == "no")]
    monks = Payload.from_dataset(load_dataset("bundled:monks-problems-1"))
    scores = {}
    for fold in range(5):
        rows = run_task(Task(monks.key, "Drop", fold, 5, ("LGBM",), ("F1", "Acc"), "no"), monks)
        for row in rows:
            assert row["status"] == "ok", row["error"]
            assert 0 <= row["encode_time"] <= row["time"]
            scores.setdefault(row["scoring"], []).append(row["cv_score"])
    for scoring in ("F1", "Acc"):
        expected = cell.loc[cell["scoring"] == scoring, "cv_score"].iloc[0]
        assert np.mean(scores[scoring]) == pytest.approx(expected, abs=1e-9)
    assert sum(value > 0 for value in scores["F1"]) == 4


def test_rows_carry_the_encoding_time_apart(credit):
    rows = run_task(Task(credit.key, "MT", 0, 5, ("DT", "kNN"), ("Acc", "AUC"), "no"), credit)
    encode = {row["encode_time"] for row in rows}
    assert len(encode) == 1  # one training-fold encoding shared by every model and metric
    assert all(0 < row["encode_time"] <= row["time"] for row in rows)


# -- sparse output of the wide encoders ------------------------------------------
def _many_levels_payload(n=600, seed=3):
    """Seeded data: a column of ~250 levels (Zipf-like), one of 30, one of 4 with missing
    values, and two numerical columns (one with missing values)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    hi = np.minimum(rng.zipf(1.4, n), 250).astype(str).astype(object)
    mid = rng.integers(0, 30, n).astype(str).astype(object)
    lo = rng.choice(["a", "b", "c", "d"], n).astype(object)
    lo[rng.random(n) < 0.05] = np.nan
    num = rng.normal(size=n)
    num2 = rng.exponential(size=n)
    num2[rng.random(n) < 0.05] = np.nan
    effect = {level: rng.normal() for level in set(hi) | set(mid)}
    logit = np.array([effect[a] + effect[b] for a, b in zip(hi, mid)]) + num
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    X = pd.DataFrame({"hi": hi, "mid": mid, "lo": lo, "num": num, "num2": num2})
    return Payload("many-levels", "seeded", X, y, ("hi", "mid", "lo"))


def test_sparse_output_only_where_every_model_of_the_task_accepts_it():
    from encbench.engine.sparse import SPARSE_MODELS, uses_sparse

    assert SPARSE_MODELS == {"OH": {"DT", "LGBM"}, "Sum": {"DT", "LGBM"}}
    assert uses_sparse("OH", ("DT",)) and uses_sparse("Sum", ("LGBM", "DT"))
    assert not uses_sparse("OH", ("DT", "kNN"))        # one dense model: the fold stays dense
    for model in ("kNN", "LogReg", "SVM"):
        assert not uses_sparse("OH", (model,))
    assert not uses_sparse("Bin", ("DT",)) and not uses_sparse("MT", ("DT",))
    assert not uses_sparse("OH", ()) and not uses_sparse("OH", ("DT",), custom='{"import": "x:y"}')


@pytest.mark.parametrize("encoder", ["OH", "Sum"])
@pytest.mark.parametrize("model, tuning, folds", [
    ("DT", "no", range(5)), ("DT", "model", [1]), ("DT", "full", [2]), ("LGBM", "no", [0, 3]),
])
def test_sparse_pairs_score_exactly_as_dense(encoder, model, tuning, folds, monkeypatch):
    """Each pair of SPARSE_MODELS gives the engine's dense scores bit for bit (the measurement
    behind the table: benchmarks/bench_wide.py identity, which also covers LightGBM's full
    tuning values, too slow here: 100 s a task)."""
    import scipy.sparse as sp

    data = _many_levels_payload()
    scorings = ("AUC", "BAcc", "F1", "Acc") if tuning == "no" else ("AUC",)
    for fold in folds:
        task = Task(data.key, encoder, fold, 5, (model,), scorings, tuning)
        train, _, _ = protocol._Fold(task, data).encoded()
        assert sp.issparse(train) and train.nnz < train.shape[0] * train.shape[1] / 10
        sparse_rows = run_task(task, data)
        with monkeypatch.context() as patch:
            patch.setattr(sparse, "SPARSE_MODELS", {})
            assert not sp.issparse(protocol._Fold(task, data).encoded()[0])
            dense_rows = run_task(task, data)
        assert [r["status"] for r in sparse_rows] == ["ok"] * len(scorings)
        assert [r["cv_score"] for r in sparse_rows] == [r["cv_score"] for r in dense_rows]


# -- sparse for every model that takes it, above a size -------------------------------------------
def _dense_size(data):
    """The dense encoding of every row under OH, by hand: one column per level of each
    categorical column plus one per numerical column, 8 bytes a cell."""
    columns = sum(data.X[c].nunique() for c in data.categorical) + data.X.shape[1] - len(data.categorical)
    return len(data.y) * columns * 8


def test_sparse_above_the_size_threshold_for_every_model_that_takes_it():
    from encbench.engine.sparse import SPARSE_ABOVE_BYTES, uses_sparse

    above = SPARSE_ABOVE_BYTES + 1
    for model in ("LogReg", "SVM", "kNN"):
        assert uses_sparse("OH", (model,), dense_bytes=above) and uses_sparse("Sum", (model,), dense_bytes=above)
        assert not uses_sparse("OH", (model,), dense_bytes=SPARSE_ABOVE_BYTES)   # at it: dense
    assert uses_sparse("OH", ("DT", "LGBM", "SVM", "kNN", "LogReg"), dense_bytes=above)
    assert not uses_sparse("OH", ("LogReg", "HGB"), dense_bytes=above)           # HGB takes no CSR
    assert not uses_sparse("Bin", ("LogReg",), dense_bytes=above)                # nothing to save
    assert not uses_sparse("MT", ("LogReg",), dense_bytes=above)
    assert not uses_sparse("OH", ("LogReg",), custom='{"import": "x:y"}', dense_bytes=above)


def test_a_fold_switches_to_sparse_when_the_dense_encoding_exceeds_the_threshold(monkeypatch):
    """Every fold of one experiment decides on the whole dataset's size, so they all agree."""
    import scipy.sparse as sp

    data = _many_levels_payload()
    size = _dense_size(data)
    assert size == 600 * (data.X["hi"].nunique() + 30 + 4 + 2) * 8
    task = lambda fold: Task(data.key, "OH", fold, 5, ("LogReg", "kNN"), ("AUC",), "no")  # noqa: E731
    monkeypatch.setattr(sparse, "SPARSE_ABOVE_BYTES", size)
    assert not any(sp.issparse(protocol._Fold(task(f), data).encoded()[0]) for f in range(5))
    monkeypatch.setattr(sparse, "SPARSE_ABOVE_BYTES", size - 1)
    assert all(sp.issparse(protocol._Fold(task(f), data).encoded()[0]) for f in range(5))
    # with HGB in the task, the fold stays dense whatever its size
    monkeypatch.setattr(sparse, "SPARSE_ABOVE_BYTES", 0)
    hgb = Task(data.key, "OH", 0, 5, ("LogReg", "HGB"), ("AUC",), "no")
    assert not sp.issparse(protocol._Fold(hgb, data).encoded()[0])


def test_small_data_stays_dense_and_scores_as_before(credit):
    """The default threshold leaves a bundled dataset dense: the same scores as with sparse
    output switched off entirely (the study's path)."""
    import scipy.sparse as sp

    task = Task(credit.key, "OH", 1, 5, ("LogReg", "kNN", "SVM"), ("AUC", "Acc"), "no")
    assert _dense_size(credit) < sparse.SPARSE_ABOVE_BYTES
    assert not sp.issparse(protocol._Fold(task, credit).encoded()[0])
    rows = run_task(task, credit)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sparse, "SPARSE_ABOVE_BYTES", float("inf"))
        patch.setattr(sparse, "SPARSE_MODELS", {})
        reference = run_task(task, credit)
    assert [r["cv_score"] for r in rows] == [r["cv_score"] for r in reference]


@pytest.mark.parametrize("model", ["LogReg", "SVM", "kNN"])
def test_sparse_scores_repeat_bit_for_bit_and_stay_near_dense(model, monkeypatch):
    """Forced sparse (threshold 0): two runs of a grid give the same scores bit for bit, and the
    scores are those of the dense encoding up to the order of floating-point sums (kNN: the
    order of distance ties)."""
    data = _many_levels_payload()
    tasks = [Task(data.key, encoder, fold, 5, (model,), ("AUC", "Acc"), "no")
             for encoder in ("OH", "Sum") for fold in (0, 3)]
    monkeypatch.setattr(sparse, "SPARSE_ABOVE_BYTES", 0)
    first = [r["cv_score"] for t in tasks for r in run_task(t, data)]
    second = [r["cv_score"] for t in tasks for r in run_task(t, data)]
    assert first == second and None not in first
    monkeypatch.setattr(sparse, "SPARSE_ABOVE_BYTES", float("inf"))
    dense = [r["cv_score"] for t in tasks for r in run_task(t, data)]
    assert np.max(np.abs(np.subtract(first, dense))) < 0.05, (first, dense)
