"""The Consensus page's analysis entry point and its result object (encbench/views/consensus_analysis.py)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench import stats
from encbench.views import consensus
from encbench.views import consensus_analysis as ca

ENCODERS = ["OH", "MT", "Ord", "Drop"]


def _scores(models=("LogReg", "DT"), metrics=("AUC",), n_datasets=8, seed=0) -> pd.DataFrame:
    """Seeded scores of four encoders on ``n_datasets`` datasets for each (model, no, metric);
    OH is best on average, Drop worst (RMSE: an error, so lower for the better encoders)."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in models:
        for metric in metrics:
            for d in range(n_datasets):
                for quality, encoder in zip((0.9, 0.85, 0.8, 0.7), ENCODERS):
                    score = quality + rng.normal(0, 0.03)
                    rows.append({"model": model, "tuning": "no", "scoring": metric, "dataset": f"d{d}",
                                 "encoder": encoder, "cv_score": 1 - score if metric == "RMSE" else score})
    return pd.DataFrame(rows)


def test_the_rankings_are_the_pieces_assembled():
    """The entry point's rankings are consensus_ranks (and Kemeny's) assembled, in the order
    asked; the summary and agreement are the view's of them."""
    scores = _scores()
    result = ca.consensus_analysis(scores, ["R-M", "R-Kem", "Q-Th"], params={"theta": 0.9, "alpha": 0.1})
    ranks = consensus.consensus_ranks(scores, ["R-M", "Q-Th"], mode="per-combination", params={"theta": 0.9})
    kemeny = consensus.kemeny_ranks(scores, mode="per-combination")
    expected = consensus.assemble(pd.concat([ranks, kemeny.ranks], ignore_index=True), ["R-M", "R-Kem", "Q-Th"],
                                  {"theta": 0.9})
    pd.testing.assert_frame_equal(result.rankings.wide, expected.wide)
    assert result.rankings.columns == expected.columns
    pd.testing.assert_frame_equal(result.kemeny.drop(columns="solve_time_s"), kemeny.info.drop(columns="solve_time_s"))
    assert result.params == {"theta": 0.9} and result.alpha == 0.1        # alpha: the tests' level
    assert result.summary == consensus.best_summary(expected, {"theta": 0.9})
    pd.testing.assert_frame_equal(result.agreement, consensus.agreement_long(expected))
    assert result.targets == ["DT / no / AUC", "LogReg / no / AUC"] and result.mode == "per-combination"
    assert ca.consensus_analysis(scores, ["R-M"]).kemeny is None


def test_precomputed_rankings_are_used_as_given():
    """A caller that caches the ranks passes them in; they are not computed again."""
    scores = _scores(models=("LogReg",))
    ranks = consensus.consensus_ranks(scores, ["R-M"], mode="per-combination")
    ranks = ranks.assign(rank=ranks["rank"].max() + 1 - ranks["rank"])     # reversed: visibly not recomputed
    result = ca.consensus_analysis(scores, ["R-M"], ranks=ranks)
    assert result.rankings.wide["encoder"].tolist() == ENCODERS[::-1]


def test_pooled_mode_needs_several_combinations_and_refuses_score_strategies_over_mixed_scales():
    """One combination is analysed per combination whatever was asked; pooled voters of metrics
    of different scales leave out the strategies that average raw scores, saying why."""
    one = _scores(models=("LogReg",))
    assert ca.consensus_analysis(one, ["R-M"], mode="pooled").mode == "per-combination"
    mixed = _scores(models=("LogReg",), metrics=("RMSE", "R2"))
    result = ca.consensus_analysis(mixed, ["R-M", "Q-M"], mode="pooled")
    assert result.mode == "pooled" and result.targets == [consensus.POOLED]
    assert result.strategies == ("R-M",) and result.refused == ("Q-M",) and "Q-M left out" in result.refused_why
    assert result.lower_is_better
    assert result.rankings.wide["encoder"].tolist()[0] == "OH"             # RMSE oriented: lowest error best
    everything_refused = ca.consensus_analysis(mixed, ["Q-M"], mode="pooled")
    assert everything_refused.rankings is None
    with pytest.raises(ValueError, match="every strategy was refused"):
        _ = everything_refused.summary


def test_the_tests_of_one_combination_match_the_statistics_on_its_scores():
    """Each per-combination test is the statistic run on that combination's scores (metric kept
    to orient it), at the analysis' alpha."""
    scores = _scores()
    result = ca.consensus_analysis(scores, ["R-M"], params={"alpha": 0.1})
    target = "LogReg / no / AUC"
    own = scores[scores["model"] == "LogReg"][list(ca.TEST_COLUMNS)]
    cd = result.critical_difference(target)
    expected = stats.nemenyi(own, alpha=0.1)
    assert cd.result.critical_difference == pytest.approx(expected.critical_difference)
    pd.testing.assert_series_equal(cd.result.mean_ranks, expected.mean_ranks)
    assert cd.table["encoder"].tolist() == expected.mean_ranks.index.tolist() and "dense_mean_rank" in cd.table
    assert cd.subtitle[0].startswith("Nemenyi, alpha = 0.1, N = 8 datasets, k = 4 encoders")
    control = result.control(target, "Drop")
    assert control.control == "Drop" and control.alpha == 0.1
    assert ca.control_subtitle(control, cd.design)[0].startswith("Bonferroni-Dunn against Drop, alpha = 0.1")
    pd.testing.assert_frame_equal(result.pairwise(target, ["OH", "MT"]),
                                  stats.wilcoxon_pairs(own, encoders=["OH", "MT"], alpha=0.1).table)
    pd.testing.assert_frame_equal(result.against_control(target, "OH", ["MT", "Drop"]),
                                  stats.wilcoxon_pairs(own, pairs=[("OH", "MT"), ("OH", "Drop")], alpha=0.1).table)
    bayes = result.bayes(target, "OH", "Drop", rope=0.01)
    assert bayes.p_a_better == stats.bayesian_signed_rank(own, "OH", "Drop", rope=0.01, n_samples=ca.BAYES_DRAWS,
                                                          seed=0).p_a_better
    assert "N = 8 datasets both encoders have" in ca.bayes_caption(bayes, target, 100)[0]
    elo = result.elo(target, reference="OH", B=50)
    pd.testing.assert_frame_equal(elo.table, stats.elo(own, reference="OH", B=50, seed=0).table)
    assert ca.elo_caption(elo, target)[1].endswith("(50 resamples, seed 0)")
    assert result.encoders(target) == ENCODERS


def test_intervals_use_the_strategy_own_parameters_and_leave_expensive_strategies_out():
    """Rank intervals pass a strategy only its own parameters; an expensive strategy (one solve
    per resample) is not offered, R-M stands in when nothing else is."""
    scores = _scores(models=("LogReg",))
    result = ca.consensus_analysis(scores, ["Q-Th", "R-M"], params={"theta": 0.9, "alpha": 0.05})
    pd.testing.assert_frame_equal(result.intervals("LogReg / no / AUC", "Q-Th", B=30),
                                  stats.rank_intervals(scores, "Q-Th", B=30, seed=0, theta=0.9))
    assert ca.interval_strategies(["R-Kem", "Q-M"]) == (["Q-M"], ["R-Kem"])
    assert ca.interval_strategies(["R-Kem"]) == (["R-M"], ["R-Kem"])


def test_bad_inputs_raise_naming_them():
    """A bad strategy parameter or alpha is refused by the registry's constraint."""
    with pytest.raises(ValueError, match="strategy 'Q-Th': theta must be a number in"):
        ca.consensus_analysis(_scores(), ["Q-Th"], params={"theta": 2})
    with pytest.raises(ValueError, match="alpha must be a number in \\(0, 1\\): got 1.5"):
        ca.consensus_analysis(_scores(), ["R-M"], alpha=1.5)
