"""Encoders beyond the study: hand-computed cases, the library each wraps, Native in the engine."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench import vocab
from encbench.encoders import ALL_REGISTRY, BEYOND_FAMILY, BEYOND_REGISTRY, REGISTRY, applies_to, make_encoder
from encbench.engine import Grid, plan
from encbench.engine.grid import Task
from encbench.engine.protocol import Payload, run_task


def test_the_registry_keeps_them_apart_from_the_32():
    assert list(BEYOND_REGISTRY) == list(vocab.BEYOND_ENCODERS)
    assert len(vocab.BEYOND_ENCODERS) == 11 and not set(vocab.BEYOND_ENCODERS) & set(REGISTRY)
    assert list(ALL_REGISTRY) == list(vocab.ALL_ENCODERS) == list(vocab.ENCODERS) + list(vocab.BEYOND_ENCODERS)
    for spec in BEYOND_REGISTRY.values():
        assert spec.family == BEYOND_FAMILY and not spec.in_study and spec.library
    assert all(spec.in_study for spec in REGISTRY.values())
    assert Grid(datasets=["bundled:tic-tac-toe"]).encoders == vocab.ENCODERS  # "all" is the 32


def test_sklearn_target_encoder_is_scikit_learns_with_the_fixed_folds():
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import TargetEncoder

    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.choice(list("pqrs"), 80), "b": rng.choice(list("xy"), 80)})
    y = rng.integers(0, 2, 80)
    ours = make_encoder("SkTE")
    theirs = TargetEncoder(cv=StratifiedKFold(5, shuffle=True, random_state=1444), target_type="binary")
    np.testing.assert_array_equal(ours.fit_transform(X, y).to_numpy(), theirs.fit_transform(X, y))
    test = pd.DataFrame({"a": ["p", "new"], "b": ["y", "x"]})
    np.testing.assert_array_equal(ours.transform(test).to_numpy(), theirs.transform(test))
    assert list(ours.get_feature_names_out()) == ["a", "b"]


def test_leave_one_out_by_hand():
    X = pd.DataFrame({"c": ["a", "a", "a", "b", "b"]})
    y = np.array([1, 0, 1, 0, 1])
    encoder = make_encoder("LOO")
    # training rows: the mean of y over the other rows of the level
    np.testing.assert_allclose(encoder.fit_transform(X, y)["c"], [0.5, 1.0, 0.5, 1.0, 0.0])
    # new rows: the level's mean; an unseen level: the overall mean 3/5
    np.testing.assert_allclose(encoder.transform(pd.DataFrame({"c": ["a", "b", "z"]}))["c"],
                               [2 / 3, 0.5, 0.6])


def test_contrasts_and_hashing_shapes():
    X = pd.DataFrame({"c": ["a", "b", "c", "a"], "d": ["u", "v", "u", "v"]})
    for name in ("Helmert", "BackDiff"):
        out = make_encoder(name).fit_transform(X)
        assert out.shape == (4, 2 + 1)  # L - 1 columns per input
        # an unseen level is all zeros
        assert (make_encoder(name).fit(X).transform(pd.DataFrame({"c": ["zz"], "d": ["u"]}))
                .filter(like="c_").to_numpy() == 0).all()
    assert make_encoder("Hash").fit_transform(X).shape == (4, 8)


def test_native_gives_level_ids_as_categories():
    X = pd.DataFrame({"c": ["b", "a", "b", None]})
    encoder = make_encoder("Native").fit(X)
    out = encoder.transform(pd.DataFrame({"c": ["a", "b", None, "new"]}))
    assert isinstance(out["c"].dtype, pd.CategoricalDtype)
    assert list(out["c"].cat.categories) == [0.0, 1.0, 2.0]  # b, a, missing: first appearance
    assert out["c"].tolist()[:3] == [1.0, 0.0, 2.0] and pd.isna(out["c"].iloc[3])  # unseen: missing
    assert applies_to("Native", "LGBM") and applies_to("Native", "HGB")
    assert not any(applies_to("Native", m) for m in ("DT", "SVM", "kNN", "LogReg"))
    assert applies_to("OH", "DT") and applies_to("my.module:Encoder", "DT")


def test_native_is_not_applicable_to_models_without_categories_and_never_fails():
    p = plan(Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "Native"], models=["DT", "LGBM"],
                  scorings=["AUC"], n_folds=2))
    assert p.not_applicable == (("Native", "DT"),)
    assert {(t.encoder, t.models) for t in p.tasks} == {("OH", ("DT", "LGBM")), ("Native", ("LGBM",))}
    assert p.n_expected == 2 * 2 + 2 * 1
    ds = p.datasets["bundled:tic-tac-toe"]
    payload = Payload.from_dataset(ds)
    rows = run_task(Task(ds.key, "Native", 0, 2, ("LGBM", "HGB"), ("AUC",), "no"), payload)
    assert [r["status"] for r in rows] == ["ok", "ok"], [r["error"] for r in rows]
    assert all(0.5 < r["cv_score"] <= 1 for r in rows)
    # a hand-built task with a model that takes no categories says why, naming both
    bad = run_task(Task(ds.key, "Native", 0, 2, ("DT",), ("AUC",), "no"), payload)
    assert bad[0]["status"] == "failed" and "'Native' does not apply to model 'DT'" in bad[0]["error"]


def test_native_runs_with_hgb_on_a_column_wider_than_its_255_bins():
    """A 400-level column (hotel_rates' arrival dates have 426) failed every Native x HGB cell:
    scikit-learn's HGB takes at most 255 categories. Through the engine it now runs, for a
    class target and a numeric one, and learns from the column: its score is above the one of the
    same model without it (Drop)."""
    rng = np.random.default_rng(5)
    n = 8000   # 20 rows a level: as many as HGB's smallest leaf
    levels = rng.integers(0, 400, n)
    X = pd.DataFrame({"day": pd.Series([f"d{v:03d}" for v in levels], dtype=object), "x": rng.normal(size=n)})
    for task, y, scorings in (("binary", (levels % 2 == 0).astype(int), ("AUC",)),
                              ("regression", levels % 7 + rng.normal(size=n), ("R2",))):
        payload = Payload("wide", "1" * 64, X, y, ("day",))
        rows = run_task(Task("wide", "Native", 0, 5, ("LGBM", "HGB"), scorings, "no", task=task), payload)
        assert [r["status"] for r in rows] == ["ok", "ok"], [r["error"] for r in rows]
        dropped = run_task(Task("wide", "Drop", 0, 5, ("HGB",), scorings, "no", task=task), payload)[0]
        hgb = next(r for r in rows if r["model"] == "HGB")
        assert hgb["cv_score"] > dropped["cv_score"] + 0.05, (task, hgb["cv_score"], dropped["cv_score"])


@pytest.mark.parametrize("name", ["String", "Gap"])
def test_string_encoders_encode_similar_text_alike(name):
    X = pd.DataFrame({"c": ["London", "Londres", "Paris", "Parigi", "Berlin"] * 4})
    encoder = make_encoder(name).fit(X)
    out = encoder.transform(pd.DataFrame({"c": ["London", "Londres", "Berlin"]})).to_numpy()
    close, far = np.linalg.norm(out[0] - out[1]), np.linalg.norm(out[0] - out[2])
    assert close < far
