"""The Consensus page's view: per-combination and pooled rankings, Kemeny, agreement, CD inputs."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import vl_convert

from encbench import stats
from encbench.encoders import REGISTRY
from encbench.stats.similarity import agreement_matrices
from encbench.store import queries
from encbench.views import consensus

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
    ranks = consensus.consensus_ranks(two_combos, ["R-M"], mode="per-combination")
    assert set(ranks["combination"]) == {"LogReg / no / AUC", "DT / no / AUC"}
    logreg = ranks[ranks["combination"] == "LogReg / no / AUC"].sort_values("rank")
    assert logreg["encoder"].tolist() == WORKED_R_M
    assert logreg["rank"].tolist() == list(range(1, 33))


def test_pooled_mode_makes_every_dataset_and_combination_a_voter(two_combos):
    pooled = consensus.pool_combinations(two_combos)
    assert pooled["dataset"].nunique() == 2 * two_combos["dataset"].nunique()
    ranks = consensus.consensus_ranks(two_combos, ["R-M", "Q-Th"], mode="pooled", params={"theta": 0.9})
    assert set(ranks["combination"]) == {consensus.POOLED}
    expected = stats.consensus(pooled, "Q-Th", theta=0.9)
    got = ranks[ranks["strategy"] == "Q-Th"].set_index("encoder")["rank"]
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)
    with pytest.raises(ValueError, match="mode"):
        consensus.consensus_ranks(two_combos, ["R-M"], mode="both")


def test_assemble_labels_orders_and_measures_agreement(two_combos):
    params = {"theta": 0.95, "alpha": 0.05}
    one = two_combos[two_combos["model"] == "LogReg"]
    ranks = consensus.consensus_ranks(one, ["R-M", "Q-Th", "R-Nem"], mode="per-combination",
                                      params=params)
    view = consensus.assemble(ranks, ["R-M", "Q-Th", "R-Nem"], params)
    assert view.columns == ("R-M", "Q-Th (theta=0.95)", "R-Nem (alpha=0.05)")
    assert view.wide["encoder"].head(4).tolist() == WORKED_R_M[:4]
    assert view.wide["family"].iloc[0] == REGISTRY["Sum"].family
    a, b = view.columns[0], view.columns[1]
    ra = view.wide.set_index("encoder")[a].astype(float)
    rb = view.wide.set_index("encoder")[b].astype(float)
    assert view.spearman.loc[a, b] == pytest.approx(stats.spearman(ra, rb))
    assert view.jaccard.loc[a, b] == pytest.approx(stats.jaccard_best(ra, rb))
    assert np.allclose(np.diag(view.spearman), 1.0)
    pairs = consensus.agreement_long(view)
    assert len(pairs) == 3 and set(pairs.columns) == {"ranking_a", "ranking_b", "spearman", "jaccard"}

    both = consensus.consensus_ranks(two_combos, ["R-M"], mode="per-combination")
    view2 = consensus.assemble(both, ["R-M"])
    assert view2.columns == ("DT / no / AUC | R-M", "LogReg / no / AUC | R-M")
    with pytest.raises(ValueError, match="empty"):
        consensus.assemble(both.iloc[:0], ["R-M"])


def test_agreement_handles_rankings_with_absent_encoders():
    rankings = pd.DataFrame({"x": [1, 2, 3, np.nan], "y": [2, 1, 3, 4]}, index=list("abcd"))
    rho, jac = agreement_matrices(rankings)
    assert rho.loc["x", "y"] == pytest.approx(stats.spearman(rankings["x"].dropna(), rankings["y"]))
    assert jac.loc["x", "y"] == 0.0


def test_kemeny_ranks_report_objective_and_time(two_combos):
    one = two_combos[two_combos["model"] == "LogReg"]
    ranks, info = consensus.kemeny_ranks(one, mode="per-combination")
    expected = stats.kemeny(one)
    got = ranks.set_index("encoder")["rank"]
    assert (got.sort_index() == expected.ranking.sort_index()).all()
    (row,) = info.to_dict("records")
    assert row["optimal"] and row["solve_time_s"] > 0
    assert row["objective"] == pytest.approx(expected.objective)
    assert row["voters"] == one["dataset"].nunique() and row["encoders"] == 32


def test_nemenyi_table_lists_the_pairs_behind_the_cd_diagram(two_combos):
    one = two_combos[two_combos["model"] == "LogReg"]
    result = stats.nemenyi(one, alpha=0.05)
    table = consensus.nemenyi_table(result)
    assert table["encoder"].tolist() == list(result.mean_ranks.index)
    assert table["n_significantly_better"].sum() == len(result.significant_pairs)
    drop = table.set_index("encoder").loc["Drop"]
    assert drop["n_significantly_better"] == len(drop["significantly_worse_than"].split(", "))


def test_best_summary_counts_first_places_over_many_combinations():
    """"Best by DT / full / AUC" in 48-combination mode described only the first column."""
    ranks = pd.DataFrame({
        "combination": ["a", "a", "b", "b", "c", "c"], "strategy": "R-M",
        "encoder": ["X", "Y", "X", "Y", "X", "Y"], "rank": [1, 2, 2, 1, 1, 2]})
    view = consensus.assemble(ranks, ["R-M"])
    line = consensus.best_summary(view)
    assert line.startswith("Best by **R-M** across 3 combinations") and "**X** (2), **Y** (1)" in line
    single = consensus.assemble(ranks[ranks["combination"] == "b"], ["R-M"])
    assert consensus.best_summary(single).startswith("Best by **R-M**: **Y**")


def _marks(node: dict, role: str) -> list[dict]:
    """The items of the marks of ``role`` in a Vega scenegraph."""
    found = []
    for item in node.get("items", []):
        found += item.get("items", []) if item.get("role") == role else []
        found += _marks(item, role)
    return found


def test_rank_matrix_follows_the_table_order():
    """The rank matrix's columns were in another order than the table's."""
    from encbench import plots

    ranks = pd.DataFrame({"column": ["q", "q", "p", "p"], "encoder": ["X", "Y", "X", "Y"], "rank": [2, 1, 1, 2]})
    spec = plots.rank_matrix(ranks, columns=["p", "q"], encoders=["Y", "X"]).to_dict()
    # the axes as drawn: column labels left to right, encoders top to bottom
    labels = [(item["x"], item["y"], item["text"])
              for item in _marks(vl_convert.vegalite_to_scenegraph(spec)["scenegraph"], "axis-label")]
    columns = sorted((x, text) for x, y, text in labels if text in ("p", "q"))
    encoders = sorted((y, text) for x, y, text in labels if text in ("X", "Y"))
    assert [t for _, t in columns] == ["p", "q"] and [t for _, t in encoders] == ["Y", "X"]


def test_rank_matrices_of_other_rankings_share_one_spec_but_their_data():
    """Streamlit swaps the data of a drawn chart whose spec is unchanged instead of building it
    again: the orders and the text colour of the cells are data, not part of the spec."""
    from encbench import plots

    one = pd.DataFrame({"column": ["p", "p"], "encoder": ["X", "Y"], "rank": [1, 2]})
    two = pd.DataFrame({"column": ["p", "p", "q", "q"], "encoder": ["X", "Y", "X", "Y"], "rank": [2, 1, 1, 4]})
    a = plots.rank_matrix(one, title="t").to_dict()
    b = plots.rank_matrix(two, columns=["q", "p"], encoders=["Y", "X"], title="t").to_dict()

    def shape(spec):
        return json.dumps({k: v for k, v in spec.items() if k not in ("datasets", "data", "width")}, sort_keys=True)

    assert shape(a) == shape(b)
    rows = next(iter(b["datasets"].values()))
    assert {(r["column"], r["column_order"]) for r in rows} == {("q", 0), ("p", 1)}
    assert {(r["encoder"], r["encoder_order"]) for r in rows} == {("Y", 0), ("X", 1)}
    assert {r["rank"]: r["dark"] for r in rows} == {1: False, 2: False, 4: True}


def test_strategy_parameters_reach_only_the_strategies_that_take_them():
    assert stats.params_for(["R-M"], {"theta": 0.9, "alpha": 0.05}) == {}
    assert stats.params_for(["Q-Th", "R-Nem"], {"theta": 0.9, "alpha": 0.1}) == {"theta": 0.9, "alpha": 0.1}


def _regression_rows() -> pd.DataFrame:
    """Three datasets scored by RMSE (lower is better) and R2: A has the lower RMSE and the
    higher R2 on each, B the opposite, C between."""
    rows = []
    for d in range(3):
        for encoder, rmse, r2 in (("A", 1.0 + d, 0.9), ("B", 3.0 + d, 0.2), ("C", 2.0 + d, 0.5)):
            rows += [dict(dataset=str(d), model="Ridge", tuning="no", scoring="RMSE", encoder=encoder, cv_score=rmse),
                     dict(dataset=str(d), model="Ridge", tuning="no", scoring="R2", encoder=encoder, cv_score=r2)]
    return pd.DataFrame(rows)


def test_pooling_metrics_of_both_directions_orients_them_before_ranking():
    """Pooled RMSE and R2 voters were refused ("metrics of opposite directions"); each voter's
    scores are now oriented first, so R-M, R-Kem and Elo rank A (best under both) first, C
    second, B last: mean dense rank 1, 2, 3 over the 6 voters, by hand."""
    rows = _regression_rows()
    ranks = consensus.consensus_ranks(rows, ["R-M", "Q-RM", "Elo"], mode="pooled")
    for strategy in ("R-M", "Q-RM", "Elo"):
        order = ranks[ranks["strategy"] == strategy].sort_values("rank")["encoder"].tolist()
        assert order == ["A", "C", "B"], strategy
    kem = consensus.kemeny_ranks(rows, mode="pooled").ranks.sort_values("rank")
    assert kem["encoder"].tolist() == ["A", "C", "B"]
    subset = consensus.subset_for(rows, consensus.POOLED, "pooled")
    assert "scoring" not in subset.columns and subset["dataset"].nunique() == 6
    nem = stats.nemenyi(subset)
    assert nem.mean_ranks.index.tolist() == ["A", "C", "B"] and nem.mean_ranks.tolist() == [1.0, 2.0, 3.0]


def test_score_averaging_strategies_are_refused_only_over_metrics_of_different_scales():
    """Q-M and Q-Th average or threshold raw scores across voters: refused, by name and with the
    metrics, when pooled voters hold RMSE and R2; rank strategies and Q-RM are not. AUC with
    accuracy (one scale, [0, 1]) and a per-combination view refuse nothing."""
    rows = _regression_rows()
    refused, why = consensus.refused_for_pooling(rows, ["R-M", "Q-M", "Q-RM", "Q-Th", "R-Kem"], "pooled")
    assert refused == ["Q-M", "Q-Th"]
    assert "RMSE, R2" in why and "different scales" in why and "per-combination" in why
    assert consensus.refused_for_pooling(rows, ["Q-M"], "per-combination") == ([], "")
    auc_acc = rows.assign(scoring=rows["scoring"].map({"RMSE": "AUC", "R2": "Acc"}))
    assert consensus.refused_for_pooling(auc_acc, ["Q-M"], "pooled") == ([], "")
    assert consensus.mixed_scales(rows) == ["RMSE", "R2"] and consensus.mixed_scales(auc_acc) == []


def test_tie_conventions_name_the_pairs_the_cd_diagram_and_r_m_order_differently():
    """By hand, encoders A B C D E on three voters: (2 2 2 1 2), (0 1 0 2 0), (2 0 2 1 2).
    Dense ranks: D 2, 1, 2 (mean 5/3), B 1, 2, 3 (mean 2); Friedman ranks: D 5, 1, 4 (10/3),
    B 2.5, 2, 5 (9.5/3). R-M puts D before B, the CD diagram B before D: the one pair swapped."""
    table = [(2, 2, 2, 1, 2), (0, 1, 0, 2, 0), (2, 0, 2, 1, 2)]
    rows = pd.DataFrame([{"dataset": str(v), "encoder": e, "cv_score": float(x)}
                         for v, scores in enumerate(table) for e, x in zip("ABCDE", scores)])
    ties = consensus.tie_conventions(rows)
    means = ties.means.set_index("encoder")
    assert means.loc["D", "dense_mean_rank"] == pytest.approx(5 / 3) and means.loc["B", "dense_mean_rank"] == 2
    assert means.loc["D", "friedman_mean_rank"] == pytest.approx(10 / 3)
    assert means.loc["B", "friedman_mean_rank"] == pytest.approx(9.5 / 3)
    assert ties.swapped == (("D", "B"),) and "D / B" in ties.text()
    same = consensus.tie_conventions(rows[rows["encoder"].isin(["A", "B"])])
    assert same.swapped == () and "same order" in same.text()


def test_tie_conventions_of_the_worked_example(everything):
    logreg = everything[(everything["model"] == "LogReg") & (everything["tuning"] == "no")
                        & (everything["scoring"] == "AUC")]
    ties = consensus.tie_conventions(logreg)
    assert ("BUMT_10", "BUMT_2") in ties.swapped and ("DMT_10", "PBMT_0.001") in ties.swapped
    nem = stats.nemenyi(logreg)
    assert ties.means["encoder"].tolist() == nem.mean_ranks.index.tolist()
    assert ties.means["friedman_mean_rank"].to_numpy() == pytest.approx(nem.mean_ranks.to_numpy())
    assert "BUMT_10 / BUMT_2" in ties.text()
