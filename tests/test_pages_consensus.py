"""AppTest: the Consensus page recomputes live, restores its state from the URL, never crashes."""
from __future__ import annotations

import pandas as pd
import pytest
from pagetest import charts, open_page, summary_line, texts

from encbench import dashboard, vocab


@pytest.fixture(autouse=True)
def published_env(published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))


def _wide(at):
    return at.dataframe[0].value


def test_default_view_is_the_worked_example():
    at = open_page("consensus")
    wide = _wide(at)
    assert list(wide.columns) == ["encoder", "family", "R-M", "Q-M", "R-Nem (alpha=0.05)"]
    assert wide["encoder"].head(5).tolist() == ["Sum", "OH", "WoE", "Bin", "BUMT_5"]
    assert summary_line(at).startswith("Best by **R-M**: **Sum**")
    # rank matrix, two agreement heatmaps, CD diagram, rank intervals
    assert len(charts(at)) == 5
    assert "CD = " in texts(at)


def test_switching_the_model_changes_the_ranking():
    at = open_page("consensus")
    before = _wide(at)["encoder"].tolist()
    at.multiselect(key="model").set_value(["DT"]).run()
    after = _wide(at)["encoder"].tolist()
    assert after != before and summary_line(at).startswith("Best by **R-M**: **WoE**")


def test_theta_changes_q_th_and_is_restored_from_the_url():
    at = open_page("consensus", {"strategy": ["Q-Th"], "theta": "0.9"})
    assert list(_wide(at).columns)[-1] == "Q-Th (theta=0.9)"
    ranks_090 = _wide(at).set_index("encoder")["Q-Th (theta=0.9)"]
    at.slider(key="theta").set_value(0.99).run()
    ranks_099 = _wide(at).set_index("encoder")["Q-Th (theta=0.99)"]
    assert not ranks_090.sort_index().equals(ranks_099.sort_index())


def test_kemeny_shows_solve_time_and_objective():
    at = open_page("consensus", {"strategy": ["R-M", "R-Kem"]})
    assert "solved with HiGHS in" in texts(at)
    info = next(d.value for d in at.dataframe if "solve_time_s" in d.value.columns)
    assert bool(info["optimal"].all()) and info["objective"].iloc[0] > 0


def test_several_combinations_side_by_side_or_pooled():
    at = open_page("consensus", {"model": ["LogReg", "DT"]})
    assert "LogReg / no / AUC | R-M" in _wide(at).columns
    assert at.selectbox(key="detail").options == ["DT / no / AUC", "LogReg / no / AUC"]
    at.radio(key="mode").set_value("pooled").run()
    assert list(_wide(at).columns)[2:] == ["R-M", "Q-M", "R-Nem (alpha=0.05)"]
    assert "every (dataset, combination) is a voter" in texts(at)


def test_empty_selections_and_missing_data_get_messages():
    at = open_page("consensus")
    at.multiselect(key="strategy").set_value([]).run()
    assert "Select at least one value for: strategy" in texts(at)
    at = open_page("consensus", {"model": "LGBM", "tuning": "model"})
    assert "No results for this combination" in texts(at)
    assert not at.dataframe


def test_an_unexpected_error_becomes_a_message(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("simulated failure")

    monkeypatch.setattr(dashboard, "best_summary", boom)  # called on every run (the view is cached)
    at = open_page("consensus")
    assert not at.exception
    assert "could not be shown: RuntimeError: simulated failure" in texts(at)


def test_link_with_unknown_values_is_flagged_not_silently_replaced(published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))
    at = open_page("consensus", {"model": "Foo"})
    warnings = [w.value for w in at.warning]
    assert any("The link sets model to 'Foo'" in w and "LogReg" in w for w in warnings), warnings


def test_cd_diagram_says_how_complete_the_data_are_and_which_design_it_used(published_env):
    at = open_page("consensus")
    shown = texts(at)
    assert "**0 of 50** datasets have a result for every one of the 32 encoders" in shown
    assert "**1 of 32** encoders have a result on every dataset" in shown
    assert "Blocks: incomplete blocks: 0 of 50 datasets have every encoder" in shown
    assert "the test assumes complete blocks" in shown
    imputed = open_page("consensus", {"blocks": "impute"})
    shown = texts(imputed)
    assert "missing scores imputed (Q-Imp model)" in shown and "Friedman chi2 =" in shown
    assert "N = 50 datasets, k = 32 encoders" in shown
    complete = open_page("consensus", {"blocks": "complete-datasets"})
    assert "No critical-difference diagram" in texts(complete)
    assert not complete.exception


def test_clearing_a_filter_is_not_reported_as_an_unknown_link_value(published_env):
    """Issue 11: clearing Metric showed "The link sets metric to ''"."""
    at = open_page("consensus")
    at.multiselect(key="metric").set_value([]).run()
    assert not at.exception
    shown = texts(at)
    assert "Select at least one value for: Metric" in shown
    assert "The link sets" not in shown
    linked = open_page("consensus", {"metric": ""})
    assert "The link sets" not in texts(linked)


def test_invalid_numbers_in_a_link_are_named_and_a_stale_detail_is_dropped(published_env):
    """Issue 11: bad alpha/theta/B were dropped silently; detail= stayed in the URL."""
    at = open_page("consensus", {"alpha": "0.3", "theta": "2", "B": "abc",
                                 "detail": "DT / no / AUC"})
    warnings = " ".join(w.value for w in at.warning)
    assert "The link sets alpha to '0.3'" in warnings and "Accepted: 0.01, 0.05, 0.1" in warnings
    assert "The link sets theta to '2'" in warnings
    assert "The link sets B to 'abc'" in warnings
    assert "detail" not in at.query_params          # one combination: no detail to keep
    ok = open_page("consensus", {"alpha": "0.01", "B": "100"})
    assert "The link sets" not in texts(ok)


def test_r_kem_is_said_to_have_no_interval(published_env):
    at = open_page("consensus", {"strategy": ["R-M", "R-Kem"]})
    assert at.selectbox(key="istrategy").options == ["R-M"]
    assert "R-Kem has no bootstrap interval here" in texts(at)


def _wilcoxon_table(at):
    return next(d.value for d in at.dataframe if "p_holm" in d.value.columns)


def test_pairwise_wilcoxon_between_chosen_encoders_with_holm():
    """Issue 11 item 5: pairwise tests between two chosen encoders, Holm for several pairs."""
    from encbench.stats import wilcoxon_pairs
    from encbench.store import Reader, queries

    at = open_page("consensus")
    table = _wilcoxon_table(at)
    chosen = at.multiselect(key="wilcoxon").value
    assert len(chosen) == 2 and len(table) == 1
    assert table["p_holm"].iloc[0] == pytest.approx(table["p_value"].iloc[0])
    at.multiselect(key="wilcoxon").set_value(["WoE", "OH", "Drop"]).run()
    table = _wilcoxon_table(at)
    assert list(zip(table["encoder_a"], table["encoder_b"])) == [("WoE", "OH"), ("WoE", "Drop"), ("OH", "Drop")]
    import os
    reader = Reader(os.environ["ENCBENCH_DB"])
    try:
        rows = queries.load_scores(reader, models=["LogReg"], tunings=["no"], scorings=["AUC"], origins=["published"])
    finally:
        reader.close()
    expected = wilcoxon_pairs(rows[["dataset", "encoder", "cv_score"]], encoders=["WoE", "OH", "Drop"]).table
    pd.testing.assert_series_equal(table["p_holm"], expected["p_holm"], check_names=False)
    at.multiselect(key="wilcoxon").set_value(["WoE"]).run()
    assert "Choose two encoders or more" in texts(at)


def test_the_strategy_registry_drives_the_selector_and_the_parameter_widgets(published_env):
    """Issue 16: a strategy is added in encbench.vocab.STRATEGY_REGISTRY, never in a page."""
    at = open_page("consensus")
    selector = at.multiselect(key="strategy")
    assert selector.options == list(vocab.STRATEGY_REGISTRY)
    for spec in vocab.STRATEGY_REGISTRY.values():
        assert f"{spec.name}: {spec.description}" in selector.help
    for param, users in vocab.offered_parameters():
        widget = (at.select_slider if param.options is not None else at.slider)(key=param.name)
        assert widget.label == f"{param.name} ({', '.join(users)})"
        assert widget.value == param.default and widget.help == param.help
    assert at.slider(key="theta").disabled                   # Q-Th is not chosen
    assert not at.select_slider(key="alpha").disabled        # the CD diagram uses alpha too


def test_narrowing_to_one_combination_drops_the_detail_choice_without_an_error():
    """Back to one combination, the Combination select goes, and its detail= with it: Streamlit
    drops the URL parameter of a widget that is gone (deleting it by hand raised, once the
    select had been bound)."""
    at = open_page("consensus", {"metric": "AUC"})
    for metrics in (["AUC", "Acc"], ["AUC", "BAcc"], ["AUC"], ["AUC", "Acc"], ["AUC"]):
        at.multiselect(key="metric").set_value(metrics).run()
        assert not at.exception and not at.error, (metrics, [e.value for e in at.error])
        assert len(charts(at)) == 5
    assert "detail" not in at.query_params
