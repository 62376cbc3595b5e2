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
    assert "B, C" in comp.summary and "recommends A" in comp.summary


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
