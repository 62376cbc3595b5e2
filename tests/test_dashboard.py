"""The pure computations behind the pages, on the published results."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench import dashboard, stats, vocab
from encbench.encoders import REGISTRY
from encbench.stats.similarity import agreement_matrices
from encbench.store import queries

WORKED_R_M = ["Sum", "OH", "WoE", "Bin", "BUMT_5", "BUMT_10", "BUMT_2", "DMT_10", "DMT_5",
              "PBMT_0.001", "PBMT_0.01", "CVMT_2", "MT", "ME_0.1", "CVMT_10", "CVMT_5", "ME_1",
              "BUGLMM_2", "CB", "Ord", "MH", "CVGLMM_5", "BUGLMM_5", "ME_10", "DMT_2", "BUGLMM_10",
              "PBMT_0.1", "Count", "GLMM", "CVGLMM_10", "CVGLMM_2", "Drop"]


@pytest.fixture(scope="module")
def everything(published_reader):
    return queries.one_score_per_experiment(queries.load_scores(published_reader))


@pytest.fixture(scope="module")
def two_combos(everything):
    mask = (everything["model"].isin(["LogReg", "DT"]) & (everything["tuning"] == "no")
            & (everything["scoring"] == "AUC"))
    return everything[mask]


def test_per_combination_r_m_reproduces_the_worked_example(two_combos):
    ranks = dashboard.consensus_ranks(two_combos, ["R-M"], mode="per-combination")
    assert set(ranks["combination"]) == {"LogReg / no / AUC", "DT / no / AUC"}
    logreg = ranks[ranks["combination"] == "LogReg / no / AUC"].sort_values("rank")
    assert logreg["encoder"].tolist() == WORKED_R_M
    assert logreg["rank"].tolist() == list(range(1, 33))


def test_pooled_mode_makes_every_dataset_and_combination_a_voter(two_combos):
    pooled = dashboard.pool_combinations(two_combos)
    assert pooled["dataset"].nunique() == 2 * two_combos["dataset"].nunique()
    ranks = dashboard.consensus_ranks(two_combos, ["R-M", "Q-Th"], mode="pooled", params={"theta": 0.9})
    assert set(ranks["combination"]) == {dashboard.POOLED}
    expected = stats.consensus(pooled, "Q-Th", theta=0.9)
    got = ranks[ranks["strategy"] == "Q-Th"].set_index("encoder")["rank"]
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)
    with pytest.raises(ValueError, match="mode"):
        dashboard.consensus_ranks(two_combos, ["R-M"], mode="both")


def test_assemble_labels_orders_and_measures_agreement(two_combos):
    params = {"theta": 0.95, "alpha": 0.05}
    one = two_combos[two_combos["model"] == "LogReg"]
    ranks = dashboard.consensus_ranks(one, ["R-M", "Q-Th", "R-Nem"], mode="per-combination",
                                      params=params)
    view = dashboard.assemble(ranks, ["R-M", "Q-Th", "R-Nem"], params)
    assert view.columns == ("R-M", "Q-Th (theta=0.95)", "R-Nem (alpha=0.05)")
    assert view.wide["encoder"].head(4).tolist() == WORKED_R_M[:4]
    assert view.wide["family"].iloc[0] == REGISTRY["Sum"].family
    a, b = view.columns[0], view.columns[1]
    ra = view.wide.set_index("encoder")[a].astype(float)
    rb = view.wide.set_index("encoder")[b].astype(float)
    assert view.spearman.loc[a, b] == pytest.approx(stats.spearman(ra, rb))
    assert view.jaccard.loc[a, b] == pytest.approx(stats.jaccard_best(ra, rb))
    assert np.allclose(np.diag(view.spearman), 1.0)
    pairs = dashboard.agreement_long(view)
    assert len(pairs) == 3 and set(pairs.columns) == {"ranking_a", "ranking_b", "spearman", "jaccard"}

    both = dashboard.consensus_ranks(two_combos, ["R-M"], mode="per-combination")
    view2 = dashboard.assemble(both, ["R-M"])
    assert view2.columns == ("DT / no / AUC | R-M", "LogReg / no / AUC | R-M")
    with pytest.raises(ValueError, match="empty"):
        dashboard.assemble(both.iloc[:0], ["R-M"])


def test_agreement_handles_rankings_with_absent_encoders():
    rankings = pd.DataFrame({"x": [1, 2, 3, np.nan], "y": [2, 1, 3, 4]}, index=list("abcd"))
    rho, jac = agreement_matrices(rankings)
    assert rho.loc["x", "y"] == pytest.approx(stats.spearman(rankings["x"].dropna(), rankings["y"]))
    assert jac.loc["x", "y"] == 0.0


def test_kemeny_ranks_report_objective_and_time(two_combos):
    one = two_combos[two_combos["model"] == "LogReg"]
    ranks, info = dashboard.kemeny_ranks(one, mode="per-combination")
    expected = stats.kemeny(one)
    got = ranks.set_index("encoder")["rank"]
    assert (got.sort_index() == expected.ranking.sort_index()).all()
    (row,) = info.to_dict("records")
    assert row["optimal"] and row["solve_time_s"] > 0
    assert row["objective"] == pytest.approx(expected.objective)
    assert row["voters"] == one["dataset"].nunique() and row["encoders"] == 32


def test_sensitivity_view_fixed_matches_library(everything):
    fixed = {"tuning": "no", "scoring": "AUC"}
    view = dashboard.sensitivity_view(everything, "model", fixed)
    lib = stats.sensitivity(everything, "model", fixed=fixed)
    assert view["n_settings"] == 1
    pd.testing.assert_frame_equal(view["spearman"], lib.spearman, check_names=False)
    assert view["labels"] == tuple(vocab.STUDY_MODELS)


def test_sensitivity_view_averages_over_the_unfixed_factor(everything):
    view = dashboard.sensitivity_view(everything, "tuning", {"model": "LogReg",
                                                             "scoring": dashboard.AVERAGE_ALL})
    mats = [stats.sensitivity(everything, "tuning", fixed={"model": "LogReg", "scoring": m}).jaccard
            for m in vocab.METRICS]
    expected = sum(mats) / len(mats)
    assert view["n_settings"] == 4
    np.testing.assert_allclose(view["jaccard"].to_numpy(), expected.to_numpy())


def test_sensitivity_view_over_strategies_and_errors(everything):
    view = dashboard.sensitivity_view(everything, "strategy",
                                      {"model": "LogReg", "tuning": "no", "scoring": "AUC"},
                                      strategies=["R-M", "Q-M", "Q-Th"], params={"theta": 0.9, "alpha": 0.05})
    assert view["labels"] == ("R-M", "Q-M", "Q-Th")
    with pytest.raises(ValueError, match="two or more"):
        dashboard.sensitivity_view(everything, "model", {"tuning": "no", "scoring": "AUC"}, labels=["DT"])
    with pytest.raises(ValueError, match="vary"):
        dashboard.sensitivity_view(everything, "dataset", {})


def test_ranked_scores_and_families(two_combos):
    ranked = dashboard.ranked_scores(two_combos)
    assert len(ranked) == len(two_combos)
    lib = stats.dataset_ranks(two_combos, by=dashboard.FACTORS)
    merged = ranked.merge(lib, on=["model", "tuning", "scoring", "dataset", "encoder"], suffixes=("", "_lib"))
    assert (merged["rank"] == merged["rank_lib"]).all()
    assert (ranked["family"] == ranked["encoder"].map(lambda e: REGISTRY[e].family)).all()
    assert {"origin", "run_id"} <= set(ranked.columns)
    cells = dashboard.encoder_dataset_matrix(ranked, "rank")
    assert not cells.duplicated(["encoder", "dataset"]).any()
    grid = dashboard.coverage(ranked, vocab.ENCODERS, sorted(two_combos["dataset"].unique()))
    assert grid["cells"] == 32 * two_combos["dataset"].nunique() and grid["missing"] > 0


def test_family_helpers_use_the_registry():
    families = dashboard.family_names()
    assert set(families) == {spec.family for spec in REGISTRY.values()}
    assert dashboard.encoders_of_families(["identifier"]) == ["OH", "Ord", "Bin"]
    mapped = dashboard.encoder_families(["OH", "NotAnEncoder"])
    assert mapped["OH"] == REGISTRY["OH"].family and mapped["NotAnEncoder"] == dashboard.NOT_IN_REGISTRY


def test_small_helpers(everything):
    assert stats.params_for(["R-M"], {"theta": 0.9, "alpha": 0.05}) == {}
    assert stats.params_for(["Q-Th", "R-Nem"], {"theta": 0.9, "alpha": 0.1}) == {"theta": 0.9, "alpha": 0.1}
    assert dashboard.default_sample_sizes(50) == [5, 10, 15, 20, 25]
    assert dashboard.default_sample_sizes(13, step=5) == [5, 6]
    assert dashboard.default_sample_sizes(3) == []
    assert dashboard.ordered("tuning", ["full", "no", "zzz", "model"]) == ["no", "model", "full", "zzz"]
    assert sorted(["10", "9", "x"], key=dashboard.natural_key) == ["9", "10", "x"]
    counts = dashboard.counts_by_pair(everything, "model", "tuning")
    assert counts["results"].sum() == len(everything)
    summary = pd.DataFrame({"sample_size": [5], "rho_mean": [0.5], "rho_low": [0.4], "rho_high": [0.6],
                            "J_mean": [0.2], "J_low": [0.1], "J_high": [0.3]})
    long = dashboard.replicability_long(summary, "R-M")
    assert set(long["measure"]) == {"rho-replicability", "J-replicability"} and len(long) == 2


def test_headline_consensus_over_everything(everything):
    table = dashboard.headline_consensus(everything)
    assert sorted(table["encoder"]) == sorted(vocab.ENCODERS)
    assert table["rank"].iloc[0] == 1 and table["mean_rank"].is_monotonic_increasing
    expected = stats.consensus(dashboard.pool_combinations(everything), "R-M")
    assert (table.set_index("encoder")["rank"].sort_index() == expected.sort_index()).all()


def test_nemenyi_table_lists_the_pairs_behind_the_cd_diagram(two_combos):
    one = two_combos[two_combos["model"] == "LogReg"]
    result = stats.nemenyi(one, alpha=0.05)
    table = dashboard.nemenyi_table(result)
    assert table["encoder"].tolist() == list(result.mean_ranks.index)
    assert table["n_significantly_better"].sum() == len(result.significant_pairs)
    drop = table.set_index("encoder").loc["Drop"]
    assert drop["n_significantly_better"] == len(drop["significantly_worse_than"].split(", "))


# --------------------------------------------------------------------------- origins (issue 11)

def _origin_rows():
    rows = [("3", "OH", 0.8, "published", "p"), ("3", "OH", 0.9, "local", "l1"),
            ("3", "MT", 0.7, "published", "p"), ("3", "MT", 0.6, "local", "l1"),
            ("x", "OH", 0.6, "local", "l2"), ("31", "OH", 0.5, "published", "p")]
    frame = pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score", "origin", "run_id"])
    return frame.assign(model="DT", tuning="no", scoring="AUC", time=1.0)


def test_origin_mix_counts_what_local_results_add():
    mix = dashboard.origin_mix(_origin_rows())
    assert mix == dashboard.OriginMix(local_rows=3, local_datasets=2, shared_datasets=1, both=2, local_runs=2)
    text = dashboard.origin_banner("both", mix, "published")
    assert "3 local score rows on 2 dataset(s) from 2 run(s)" in text
    assert "2 experiments have both a published and a local score: the published score counts" in text
    assert dashboard.origin_banner("published", mix, "published") is None
    with pytest.raises(ValueError, match="'all'"):
        dashboard.origins_of("all")


def test_published_vs_local_pairs_each_local_score_with_its_published_value():
    pairs = dashboard.published_vs_local(_origin_rows())
    assert list(pairs["encoder"]) == ["OH", "MT"]                 # vocabulary order
    assert pairs["difference"].tolist() == pytest.approx([0.1, -0.1])
    assert set(pairs["dataset"]) == {"3"} and pairs["local_runs"].tolist() == ["l1", "l1"]
    assert pairs["note"].tolist() == ["", ""]
    only_published = _origin_rows()[lambda f: f["origin"] == "published"]
    assert dashboard.published_vs_local(only_published).empty


def test_published_vs_local_notes_published_cells_of_an_earlier_run():
    """LightGBM's label metrics of MT come from an earlier run of the study (issue 10): the pair
    says so; its AUC and ME_1's Acc are references."""
    rows = _origin_rows().assign(model="LGBM")
    rows = pd.concat([rows, rows.assign(scoring="Acc"), rows.assign(scoring="Acc", encoder="ME_1")])
    pairs = dashboard.published_vs_local(rows).set_index(["encoder", "scoring"])["note"]
    assert "earlier run" in pairs[("MT", "Acc")] and "earlier run" in pairs[("OH", "Acc")]
    assert pairs[("MT", "AUC")] == pairs[("ME_1", "Acc")] == ""


def test_best_summary_counts_first_places_over_many_combinations():
    """Issue 11: "Best by DT / full / AUC" in 48-combination mode described only the first column."""
    ranks = pd.DataFrame({
        "combination": ["a", "a", "b", "b", "c", "c"], "strategy": "R-M",
        "encoder": ["X", "Y", "X", "Y", "X", "Y"], "rank": [1, 2, 2, 1, 1, 2]})
    view = dashboard.assemble(ranks, ["R-M"])
    line = dashboard.best_summary(view)
    assert line.startswith("Best by **R-M** across 3 combinations") and "**X** (2), **Y** (1)" in line
    single = dashboard.assemble(ranks[ranks["combination"] == "b"], ["R-M"])
    assert dashboard.best_summary(single).startswith("Best by **R-M**: **Y**")


def test_rank_matrix_follows_the_table_order():
    """Issue 11: the rank matrix's columns were in another order than the table's."""
    from encbench import plots

    ranks = pd.DataFrame({"column": ["q", "q", "p", "p"], "encoder": ["X", "Y", "X", "Y"], "rank": [1, 2, 2, 1]})
    spec = plots.rank_matrix(ranks, columns=["p", "q"], encoders=["Y", "X"]).to_dict()
    layer = spec["layer"][0]
    assert layer["encoding"]["x"]["sort"] == ["p", "q"] and layer["encoding"]["y"]["sort"] == ["Y", "X"]


def test_datasets_in_view_keeps_the_view_s_datasets_and_counts_its_rows():
    datasets = pd.DataFrame({"dataset": ["31", "50", "file:ab"], "name": ["credit-g", "ttt", "mine"],
                             "results": [99, 99, 99]})
    scores = pd.DataFrame({"dataset": ["50", "31", "50", "50"], "encoder": ["OH", "OH", "MT", "CB"]})
    shown = dashboard.datasets_in_view(datasets, scores)
    assert shown[["dataset", "name", "results"]].values.tolist() == [["31", "credit-g", 1], ["50", "ttt", 3]]
    assert dashboard.datasets_in_view(datasets, scores.iloc[:0]).empty
