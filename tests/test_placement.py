"""Placement of a new encoder among the 32: how its ranks read, and its CD diagram.

The end-to-end placement (a real run, the ``place`` command) is tested in
tests/test_custom_encoders.py; here, hand-made consensus tables check what a reader sees.
"""
from __future__ import annotations

import doctest

import numpy as np
import pandas as pd

from encbench import placement
from encbench.custom import CustomEncoder
from encbench.placement import POOLED, Placement, RunInfo, rank_text


def test_rank_text_examples_and_doctest():
    assert rank_text(3, 33, 1, 33) == "3 of 33"
    assert rank_text(1, 1, 33, 33) == "1 of 1 tier, shared by 33"        # R-Nem: no pair significant
    assert rank_text(2, 2, 20, 33) == "2 of 2 tiers, shared by 20"       # R-B: read "2/2" before
    assert rank_text(2, 5, 1, 33) == "2 of 5 tiers"
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(rank_text, "rank_text", globs={"rank_text": rank_text}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0 and runner.summarize(verbose=False).attempted == 3


def _table():
    """A consensus table of 4 encoders ('New' the custom one) under two strategies."""
    rows = []
    for strategy, ranks in (("R-M", {"A": 1, "B": 2, "New": 3, "C": 4}),
                            ("R-Nem", {"A": 1, "B": 1, "New": 1, "C": 1})):
        for encoder, rank in ranks.items():
            rows.append({"model": "DT", "tuning": "no", "scoring": "AUC", "strategy": strategy,
                         "encoder": encoder, "rank": rank})
    return pd.DataFrame(rows)


def test_custom_ranks_count_the_encoders_sharing_the_rank():
    table = _table()
    scores = pd.DataFrame({"model": "DT", "tuning": "no", "scoring": "AUC", "dataset": ["1", "2"],
                           "encoder": "New", "cv_score": [0.5, 0.6]})
    ranks = placement._custom_ranks(table, scores, ["New"]).set_index("strategy")
    # naive: count the rows of the table with the same strategy and rank
    for strategy in ("R-M", "R-Nem"):
        mine = table[(table["strategy"] == strategy) & (table["encoder"] == "New")]["rank"].iloc[0]
        naive = int(((table["strategy"] == strategy) & (table["rank"] == mine)).sum())
        assert ranks.loc[strategy, "tied"] == naive
    assert ranks.loc["R-M", ["rank", "last_rank", "tied", "n_encoders"]].tolist() == [3, 4, 1, 4]
    assert ranks.loc["R-Nem", ["rank", "last_rank", "tied", "n_encoders"]].tolist() == [1, 1, 4, 4]


def _placement(ranks: pd.DataFrame, scores: pd.DataFrame | None = None) -> Placement:
    info = RunInfo(run_id="local-x", label=None, customs=(CustomEncoder("New", "mypkg:New"),),
                   controls=("OH",), datasets=("1", "2"), models=("DT",), scorings=("AUC",),
                   tuning="no", status="done")
    return Placement(info, None, scores if scores is not None else pd.DataFrame(), ranks,
                     pd.DataFrame(columns=["encoder", "model"]), (), ("R-M", "R-Nem"))


def test_rank_table_and_summary_show_tiers_not_first_place():
    table = _table()
    pooled = table.assign(model=POOLED, scoring=POOLED)
    scores = pd.DataFrame({"model": "DT", "tuning": "no", "scoring": "AUC", "dataset": ["1", "2"],
                           "encoder": "New", "cv_score": [0.5, 0.6]})
    both = pd.concat([scores, scores.assign(model=POOLED, scoring=POOLED)])
    ranks = placement._custom_ranks(pd.concat([table, pooled]), both, ["New"])
    result = _placement(ranks)
    shown = result.rank_table()
    assert shown.loc[0, "R-M"] == "3 of 4" and shown.loc[0, "R-Nem"] == "1 of 1 tier, shared by 4"
    line = result.summary_lines()[0]
    assert "R-Nem 1 of 1 tier, shared by 4" in line and "1/1" not in line


def test_cd_diagram_of_a_placement_highlights_the_new_encoder():
    from encbench import plots

    rng = np.random.default_rng(3)
    rows = [{"dataset": str(d), "model": "DT", "tuning": "no", "scoring": "AUC", "encoder": e,
             "cv_score": float(rng.uniform(0.5, 1.0)), "origin": "published" if e != "New" else "local"}
            for d in range(8) for e in ("OH", "MT", "Sum", "New")]
    result = _placement(pd.DataFrame(), pd.DataFrame(rows))
    chart, nem, _ = placement.cd_diagram(result, "DT", "AUC")
    spec = chart.to_dict()
    marked = [layer for layer in spec["layer"] if isinstance(layer.get("mark"), dict)
              and layer["mark"].get("color") == plots.HIGHLIGHT]
    assert marked and {r["encoder"] for layer in marked for r in spec["datasets"][layer["data"]["name"]]} == {"New"}
    assert nem.n_datasets == 8
