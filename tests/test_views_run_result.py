"""The user's ranking next to the published consensus."""
from __future__ import annotations

import pandas as pd
import pytest

from encbench.views.run_result import compare_with_published


def _published():
    # two datasets, three encoders; R-M: A mean rank 1, B 2.5, C 2.5 -> A=1, B=2, C=2
    rows = [("d1", "A", 0.9), ("d1", "B", 0.8), ("d1", "C", 0.7),
            ("d2", "A", 0.9), ("d2", "B", 0.6), ("d2", "C", 0.8)]
    return pd.DataFrame([dict(dataset=d, model="LogReg", tuning="no", scoring="AUC", encoder=e, cv_score=s)
                         for d, e, s in rows])


def test_hand_computed_comparison():
    local = pd.DataFrame(dict(model="LogReg", tuning="no", scoring="AUC", dataset="file:x",
                              encoder=["A", "B", "C"], cv_score=[0.70, 0.75, 0.75]))
    (comp,) = compare_with_published(local, _published())
    table = comp.table.set_index("encoder")
    assert table["rank"].to_dict() == {"A": 2, "B": 1, "C": 1}
    assert table["published_rank"].astype(int).to_dict() == {"A": 1, "B": 2, "C": 2}
    # Spearman between (2,1,1) and (1,2,2): perfectly reversed -> -1; best sets {B,C} vs {A} -> 0
    assert comp.rho == pytest.approx(-1.0)
    assert comp.jaccard == 0.0
    assert comp.n_published_datasets == 2
    assert "B, C" in comp.summary and "ranks first among these: A" in comp.summary


def test_agreement_is_reported_only_over_enough_shared_encoders():
    """"Agreement: Spearman rho 1.00" was computed on two shared encoders."""
    from encbench.views.run_result import MIN_SHARED

    local = pd.DataFrame(dict(model="LogReg", tuning="no", scoring="AUC", dataset="file:x",
                              encoder=["A", "B", "C"], cv_score=[0.70, 0.75, 0.75]))
    (few,) = compare_with_published(local, _published())
    assert few.n_shared == 3 and few.rho is not None and not few.agreement_shown
    assert "Spearman" not in few.summary and "share 3 encoders, too few" in few.summary
    # five encoders on five datasets: ranked in the same order everywhere, so rho = 1 (hand-computed)
    encoders = ["A", "B", "C", "D", "E"]
    published = pd.DataFrame([dict(dataset=f"d{d}", model="LogReg", tuning="no", scoring="AUC", encoder=e,
                                   cv_score=0.9 - 0.1 * i) for d in range(5) for i, e in enumerate(encoders)])
    mine = pd.DataFrame(dict(model="LogReg", tuning="no", scoring="AUC", encoder=encoders,
                             cv_score=[0.8, 0.7, 0.6, 0.5, 0.4]))
    (enough,) = compare_with_published(mine, published)
    assert MIN_SHARED == 5 and enough.n_shared == 5 and enough.agreement_shown
    assert enough.rho == pytest.approx(1.0) and enough.jaccard == 1.0
    assert "Agreement over the 5 encoders both rank: Spearman rho 1.00" in enough.summary


def test_restricts_published_consensus_to_the_run_encoders():
    local = pd.DataFrame(dict(model="LogReg", tuning="no", scoring="AUC", encoder=["B", "C"],
                              cv_score=[0.5, 0.6]))
    (comp,) = compare_with_published(local, _published())
    # without A, B and C tie in the published consensus
    assert comp.table.set_index("encoder")["published_rank"].astype(int).to_dict() == {"B": 1, "C": 1}
    assert comp.jaccard == pytest.approx(0.5)


def test_factors_without_published_results_say_so():
    local = pd.DataFrame(dict(model="SVM", tuning="full", scoring="F1", encoder=["A", "B"],
                              cv_score=[0.5, 0.6]))
    (comp,) = compare_with_published(local, _published())
    assert comp.rho is None and comp.n_published_datasets == 0
    assert comp.table["published_rank"].isna().all()
    assert "no results for these factors" in comp.summary


def test_one_comparison_per_factor_combination_and_errors():
    local = pd.DataFrame(dict(model=["LogReg"] * 2 + ["DT"] * 2, tuning="no", scoring="AUC",
                              encoder=["A", "B"] * 2, cv_score=[0.1, 0.2, 0.3, 0.4]))
    assert [c.model for c in compare_with_published(local, _published())] == ["DT", "LogReg"]
    metrics = local.assign(model="DT", scoring=["AUC", "AUC", "BAcc", "BAcc"])
    assert [c.scoring for c in compare_with_published(metrics, _published())] == ["BAcc", "AUC"]
    with pytest.raises(ValueError, match="one dataset"):
        compare_with_published(local.assign(dataset=["a", "b", "a", "b"]), _published())
    with pytest.raises(ValueError, match="cv_score"):
        compare_with_published(local.drop(columns="cv_score"), _published())


def test_published_agreement_counts_cells_within_the_tolerance_per_dataset():
    """Hand-made cells: vote (56) agrees in 1 of 4 (low, its DT cells carry the shifted-label
    note), credit-g (31) in 2 of 2; time-split rows and unpublished datasets are not compared,
    two runs of one experiment are averaged."""
    from encbench.views.run_result import published_agreement

    def row(dataset, model, encoder, score, split="cv", scoring="AUC"):
        return {"dataset": dataset, "model": model, "tuning": "no", "scoring": scoring,
                "encoder": encoder, "cv_score": score, "split": split}

    published = pd.DataFrame([row("56", "DT", "OH", 0.75), row("56", "DT", "MT", 0.74),
                              row("56", "LGBM", "OH", 0.98), row("56", "LGBM", "MT", 0.98, scoring="Acc"),
                              row("31", "DT", "OH", 0.70), row("31", "DT", "MT", 0.72)])
    local = pd.DataFrame([row("56", "DT", "OH", 0.95), row("56", "DT", "MT", 0.94),
                          row("56", "LGBM", "OH", 0.982),                    # within 0.005
                          row("56", "LGBM", "MT", 0.96, scoring="Acc"),      # an earlier-run cell
                          row("56", "DT", "OH", 0.75, split="time"),         # not a cv result
                          row("31", "DT", "OH", 0.698), row("31", "DT", "MT", 0.719),
                          row("31", "DT", "MT", 0.725),                      # mean 0.722: within
                          row("file:ab", "DT", "OH", 0.5)])
    agreement = published_agreement(local, published)
    assert set(agreement) == {"56", "31"}
    vote, credit = agreement["56"], agreement["31"]
    assert (vote.cells, vote.within, vote.share, vote.low) == (4, 1, 0.25, True)
    assert (credit.cells, credit.within, credit.share, credit.low) == (2, 2, 1.0, False)
    known = vote.pairs.known()
    assert sum(known.values()) == 3 and len(known) == 2             # 2 shifted labels, 1 LightGBM
    text = vote.message("vote")
    assert "1 of 4 experiments (25%) are within 0.005" in text and "below the 90%" in text and "encbench place" in text
    assert "3 of the 3 cells off are published cells known not to be reproducible" in text
    assert published_agreement(local.iloc[:0], published) == {}


def test_published_ranks_are_the_advice_global_order_read_off_for_the_encoders_run():
    """"The advice says the global R-M order is Sum, OH, WoE; the card says the published
    consensus ranks OH 1": R-M recomputed over the encoders run alone reorders them. By hand:
    global mean ranks A (1+4+1)/3 = 2, B (2+1+2)/3 = 1.67, so B before A; over {A, B} alone A
    wins two datasets of three. The card must say B, as the advice's ranking does."""
    from encbench.advisor import published_consensus
    from encbench.stats import rank_intervals

    scores = {"d1": {"A": .9, "B": .8, "C": .7, "D": .6}, "d2": {"B": .9, "C": .85, "D": .84, "A": .8},
              "d3": {"A": .9, "B": .8, "C": .7, "D": .6}}
    published = pd.DataFrame([dict(dataset=d, model="LogReg", tuning="no", scoring="AUC", encoder=e, cv_score=v)
                              for d, row in scores.items() for e, v in row.items()])
    global_ranks = published_consensus(published, model="LogReg", tuning="no", scoring="AUC")
    assert global_ranks.to_dict() == {"B": 1, "A": 2, "C": 3, "D": 4}
    # the advice's global ranking (recommend's ``overall``) has the same point ranks
    advice = rank_intervals(published, B=10).set_index("encoder")["rank"]
    assert advice.to_dict() == global_ranks.to_dict()
    local = pd.DataFrame(dict(model="LogReg", tuning="no", scoring="AUC", encoder=["A", "B"], cv_score=[.7, .6]))
    (comp,) = compare_with_published(local, published)
    assert comp.table.set_index("encoder")["published_rank"].astype(int).to_dict() == {"B": 1, "A": 2}
    assert "ranks first among these: B" in comp.summary and comp.n_published_datasets == 3


def test_scores_that_read_the_same_share_a_rank():
    """OH 0.94581 and MT 0.94579 both read 0.9458: the table must not rank them 1 and 2."""
    from encbench.views.run_result import DECIMALS

    local = pd.DataFrame(dict(model="LogReg", tuning="no", scoring="AUC", encoder=["OH", "MT", "Count"],
                              cv_score=[0.94581, 0.94579, 0.9]))
    (comp,) = compare_with_published(local, _published())
    assert DECIMALS == 4
    assert comp.table.set_index("encoder")["rank"].to_dict() == {"OH": 1, "MT": 1, "Count": 2}


def _folds(cells, model="LogReg", scoring="AUC", split="cv", task="binary"):
    """Fold rows from ``{encoder: [score per fold]}``."""
    return pd.DataFrame([dict(model=model, tuning="no", scoring=scoring, split=split, task=task, encoder=e,
                              fold=f, cv_score=v) for e, values in cells.items() for f, v in enumerate(values)])


def test_pool_run_ranks_over_settings_and_folds_and_tests_the_winner_by_hand():
    """Two settings x 4 folds x 3 encoders. Ranks by hand: AUC folds: A>B>C, A>B>C, B>A>C, A>B>C;
    RMSE (lower is better) folds: A<B<C, B<A<C, A<B<C, A<B<C. Mean ranks A 10/8 = 1.25,
    B 14/8 = 1.75, C 3. A beats B in 6 blocks, loses 2. Per fold, B's rank minus A's averaged
    over the settings: [1, 0, 0, 1]; mean 0.5, sample var 1/3, corrected variance
    (1/4 + 1/3) x 1/3, t = 0.5 / sqrt(7/36) = 1.134 on 3 df, two-sided p = 0.339."""
    from scipy.stats import t as student

    from encbench.views.run_result import pool_run

    auc = _folds({"A": [.9, .9, .8, .9], "B": [.8, .8, .9, .8], "C": [.7, .7, .7, .7]})
    rmse = _folds({"A": [1., 2., 1., 1.], "B": [2., 1., 2., 2.], "C": [3., 3., 3., 3.]}, scoring="RMSE",
                  model="Ridge", task="regression")
    answer = pool_run(pd.concat([auc, rmse]))
    table = answer.ranking.set_index("encoder")
    assert table["mean_rank"].to_dict() == pytest.approx({"A": 1.25, "B": 1.75, "C": 3.0})
    assert table["rank"].to_dict() == {"A": 1, "B": 2, "C": 3}
    assert (answer.winner, answer.runner_up, answer.wins, answer.losses) == ("A", "B", 6, 2)
    t = 0.5 / (((1 / 4 + 1 / 3) * (1 / 3)) ** 0.5)
    assert answer.p_value == pytest.approx(2 * student.sf(t, 3))
    assert not answer.settled and answer.best == ("A", "B")          # C: every fold below A
    assert table.loc["C", "p_vs_winner"] < 0.05
    assert answer.headline.startswith("Use A: it ranks first over the run (2 settings x 4 folds; mean rank 1.25)")
    assert "not a clear lead. B cannot be told from A" in answer.headline
    # the fold spread, per setting and encoder: AUC of A is .9,.9,.8,.9 -> sd 0.05
    spread = answer.per_setting.set_index(["scoring", "encoder"])
    assert spread.loc[("AUC", "A"), "sd"] == pytest.approx(0.05) and spread.loc[("AUC", "A"), "n_folds"] == 4
    assert spread.loc[("RMSE", "A"), "rank"] == 1                     # lower is better


def test_pool_run_warns_when_the_best_is_no_better_than_chance_or_drop():
    """LogReg at chance (BAcc 0.503 with a fold spread of 0.01), Ridge with R2 -2.2 under a time
    split, and an encoder that does not beat Drop: each gets its warning; a clear winner none."""
    from encbench.views.run_result import pool_run

    chance = _folds({"Drop": [.49, .51, .50, .52, .48], "OH": [.50, .51, .49, .52, .495]}, scoring="BAcc")
    answer = pool_run(chance)
    (check,) = answer.baselines
    assert check.kind == "chance" and check.best == "OH" and check.reference == 0.5
    assert "not clearly above chance (BAcc 0.5; p = " in check.message
    r2 = _folds({"OH": [-2.0, -2.4, -2.2, -2.1, -2.3], "MT": [-3.0] * 5}, model="Ridge", scoring="R2",
                split="time", task="regression")
    (check,) = pool_run(r2).baselines
    assert check.kind == "chance" and "worse than predicting the mean (R2 0)" in check.message
    assert check.message.startswith("Ridge / R2 / no tuning, time split: the best encoder, OH, scores R2 -2.2000")
    drop = _folds({"Drop": [.80, .82, .81, .79, .80], "OH": [.81, .81, .82, .80, .79]})
    (check,) = pool_run(drop).baselines
    assert check.kind == "drop" and "not clearly better than Drop" in check.message
    clear = _folds({"Drop": [.70, .72, .71, .69, .70], "OH": [.81, .83, .82, .80, .81]})
    assert pool_run(clear).baselines == ()
    # a multiclass balanced accuracy needs the number of classes for its chance level (1/3)
    multi = _folds({"OH": [.34, .33, .35, .32, .33]}, scoring="BAcc", task="multiclass")
    assert pool_run(multi).baselines == ()
    assert pool_run(multi).headline.startswith("Only OH has complete results so far")
    (check,) = pool_run(multi, n_classes=3).baselines
    assert check.reference == pytest.approx(1 / 3)


def test_fold_scores_reads_the_folds_of_complete_experiments(mem_writer):
    """The per-fold rows of a run, as the pooled answer reads them; an experiment with a failed
    fold is left out, as the scores view leaves it out."""
    from encbench.store import queries

    mem_writer.ensure_run("r1", origin="local", status="done")
    rows = [dict(run_id="r1", dataset="file:x", encoder=e, model="LogReg", tuning="no", scoring="AUC", fold=f,
                 n_folds=2, cv_score=0.5 + 0.1 * f, time=0.1, status="ok" if (e, f) != ("MT", 1) else "failed",
                 error=None) for e in ("OH", "MT") for f in (0, 1)]
    mem_writer.write_results(rows)
    got = queries.fold_scores(mem_writer, ["r1"])
    assert got["encoder"].tolist() == ["OH", "OH"] and got["fold"].tolist() == [0, 1]
    assert got["cv_score"].tolist() == pytest.approx([0.5, 0.6])
    assert {"split", "task", "run_id"} <= set(got.columns)


def test_a_regression_split_change_names_its_shuffled_folds():
    """The regression "cv or time?" box said "stratified folds": a regression target's cv folds
    are shuffled KFold (a binary one's stay stratified, as published)."""
    from encbench.views.run_result import compare_splits, split_headline

    def rows(task, scoring):
        return pd.DataFrame([dict(dataset="file:x", model="Ridge", tuning="no", scoring=scoring, task=task,
                                  split=split, encoder=e, cv_score=v)
                             for split, order in (("cv", {"OH": .9, "MT": .8}), ("time", {"OH": .7, "MT": .8}))
                             for e, v in order.items()])

    (reg,) = compare_splits(rows("regression", "R2"))
    assert "Under cv (shuffled folds) the best is OH" in reg.summary and "stratified" not in reg.summary
    assert "shuffled folds let future rows" in split_headline([reg])
    (binary,) = compare_splits(rows("binary", "AUC"))
    assert "Under cv (stratified folds)" in binary.summary and "stratified folds let" in split_headline([binary])
