"""The encoder advisor: distances and rankings against naive references, the leave-one-out
validation against a naive loop, a proof that it never sees the held-out dataset, and the
recommendation on the shipped tables."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from encbench import recommend as rec
from encbench.metafeatures import DISTANCE_FEATURES, MetaFeatures, published_metafeatures
from encbench.recommend import (
    distances, encoder_order, feature_matrix, recommend, validate_advisor, validation_summary,
)
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
    setting = rec._Setting(scores, "AUC")
    rng = np.random.default_rng(seed)
    subsets = {("s", i): list(rng.choice(datasets, int(rng.integers(1, 12)), replace=False)) for i in range(30)}
    got = setting.rank_subsets(subsets)
    for label, pool in subsets.items():
        assert got[label] == _naive_order(scores, pool), label


def test_regret_falls_back_to_the_next_encoder_with_a_result():
    scores = pd.DataFrame({"dataset": ["1"] * 3, "encoder": ["OH", "MT", "CB"], "cv_score": [0.70, 0.80, 0.75],
                           "scoring": "AUC"})
    setting = rec._Setting(scores, "AUC")
    assert setting.regret("1", ["Count", "CB", "OH"]) == (pytest.approx(0.05), "CB")
    assert setting.random_regret("1") == pytest.approx((0.10 + 0.0 + 0.05) / 3)
    lower = rec._Setting(scores.assign(scoring="RMSE"), "RMSE")  # lower is better: OH is best
    assert lower.regret("1", ["MT"]) == (pytest.approx(0.10), "MT")


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
    scores = load_published_results()
    reference = published_metafeatures(complete=True)
    row = reference.set_index("dataset").loc["31"]
    features = MetaFeatures(task="binary", **{f: row[f] for f in FEATURES})
    shipped = validation_summary()
    for model, scoring in (("LogReg", "AUC"), ("SVM", "F1")):
        got = recommend(features, scores, model=model, scoring=scoring, B=100)
        expected = shipped[(shipped["model"] == model) & (shipped["tuning"] == "no")
                           & (shipped["scoring"] == scoring)].iloc[0]
        assert got.k == expected["k"] and got.neighbours["name"].iloc[0] == "credit-g"
        assert got.use == rec.choose_policy(expected.to_dict())
    with pytest.raises(ValueError, match="no published scores for model 'HGB'"):
        recommend(features, scores, model="HGB", scoring="AUC")
    with pytest.raises(ValueError, match="unknown model: got 'XGB'"):
        recommend(features, scores, model="XGB", scoring="AUC")


def test_recommend_follows_what_the_validation_supports_always_oh_included():
    """LogReg / AUC / no tuning: always OH had a lower mean regret (0.0157) than the global winner
    (0.0200) in the shipped validation, yet the global winner was recommended. The policy of
    lowest regret is followed, and the message says why; the advisor competes only where it
    beats the global winner clearly."""
    shipped = validation_summary().set_index(["model", "tuning", "scoring"])
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
    shipped = validation_summary()
    no = shipped[shipped["tuning"] == "no"]
    assert len(no) == 20 and set(no["model"]) == {"DT", "LGBM", "SVM", "kNN", "LogReg"}
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
