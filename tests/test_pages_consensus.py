"""AppTest: the Consensus page recomputes live, restores its state from the URL, never crashes.

The page's wiring runs on the small database (tests/small_db.py), its numbers compared with the
library's on the same rows; the tests marked ``published`` check what the page says of the
published benchmark itself, on the full published database.
"""
from __future__ import annotations

import os

import pandas as pd
import pytest
from pagetest import charts, open_exports, open_page, summary_line, texts

from encbench import vocab
from encbench.stats import consensus as consensus_ranks
from encbench.store import Reader, queries
from encbench.views import consensus


@pytest.fixture(autouse=True)
def small_env(small_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))


@pytest.fixture()
def published(published_db, monkeypatch):
    """The full published database instead: for what the page says of the published benchmark."""
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))


def _wide(at):
    return at.dataframe[0].value


def _tab(query: dict | None, tab: str):
    """The page opened by a link to one of its tabs (``?section=Rank+intervals``)."""
    return open_page("consensus", {**(query or {}), "section": tab})


def _switch(at, tab: str):
    """Open another tab of a running page, as a click on it does (it sets the tabs' state).

    Not through ``at.query_params``: AppTest sends its URL on every run, where a bound value
    outranks the state, and Streamlit drops ``?section=Rankings`` (the default) before reading it."""
    at.query_params.pop("section", None)
    at.session_state["section"] = tab
    at.run()
    assert not at.exception, at.exception
    return at


def _keys(at, kind: str) -> list[str]:
    return [w.key for w in getattr(at, kind)]


def _tabs(at) -> list[str]:
    return [t.label for t in at.tabs]


def test_default_view_is_the_worked_example(published):
    at = open_page("consensus")
    wide = _wide(at)
    assert list(wide.columns) == ["encoder", "family", "R-M", "Q-M", "R-Nem (alpha=0.05)"]
    assert wide["encoder"].head(5).tolist() == ["Sum", "OH", "WoE", "Bin", "BUMT_5"]
    assert summary_line(at).startswith("Best by **R-M**: **Sum**")
    assert len(charts(at)) == 1                                     # the rank matrix
    cd = _switch(at, "Critical difference")
    assert len(charts(cd)) == 1 and "CD = " in texts(cd)


def test_the_default_view_draws_only_the_rankings_tab():
    """A filter change redrew every section; now only the open tab's content
    runs and is sent (the browser's drawing was most of the 0.75 s)."""
    at = open_page("consensus")
    assert _tabs(at) == ["Rankings", "Critical difference", "Rank intervals", "Pairwise tests", "Bayesian test",
                         "Win rates and Elo", "Agreement"]
    assert len(at.dataframe) == 1 and len(charts(at)) == 1          # rankings table, rank matrix
    assert not {"detail", "blocks", "istrategy"} & set(_keys(at, "selectbox"))
    assert "wilcoxon" not in _keys(at, "multiselect") and not _keys(at, "number_input")
    assert not at.download_button                                       # built when a menu opens
    open_exports(at, "table-rankings", "chart-rank-matrix")
    assert {b.key for b in at.download_button} == {
        f"dl-{kind}-{item}-{fmt}" for kind, item, formats in (("table", "rankings", ("csv", "parquet", "latex",
                                                                                  "provenance")),
                                                             ("chart", "rank-matrix", ("png", "svg")))
        for fmt in formats}
    shown = texts(at)
    assert "CD = " not in shown and "Spearman's rho" not in shown and "bootstrap interval" not in shown
    assert "section" not in at.query_params                            # the default tab keeps the URL clean


@pytest.mark.parametrize(("tab", "n_charts", "present"), [
    ("Agreement", 2, "Spearman's rho over the encoders two rankings share"),
    ("Critical difference", 1, "CD = "),
    ("Rank intervals", 1, "R-M consensus rank with its 95% bootstrap interval"),
    ("Pairwise tests", 0, "Wilcoxon signed-rank test"),
    ("Bayesian test", 1, "Bayesian signed-rank test with a Dirichlet-process prior"),
    ("Win rates and Elo", 2, "Win rates and Elo as TabArena reports them"),
    ("Kemeny-Young", 0, "solved with HiGHS in"),
])
def test_a_link_to_a_tab_opens_it_with_its_content_only(tab, n_charts, present):
    query = {"strategy": ["R-M", "R-Kem"]} if tab == "Kemeny-Young" else {}
    at = _tab(query, tab)
    assert not at.error, [e.value for e in at.error]
    assert tab in _tabs(at) and at.session_state["section"] == tab
    assert len(charts(at)) == n_charts and present in texts(at)
    assert "Exact Kemeny-Young" not in texts(at) or tab == "Kemeny-Young"
    # the rankings table is the Rankings tab's: not drawn under another tab
    assert not any("encoder" in d.value.columns and "family" in d.value.columns for d in at.dataframe)
    assert summary_line(at).startswith("Best by **R-M**")          # the summary is above the tabs


def test_a_link_to_a_tab_the_view_lacks_falls_back_to_rankings():
    """The Kemeny-Young tab exists with R-Kem only, Agreement with two rankings or more."""
    best = _best_by_r_m(_published_rows())
    for query, tab in (({}, "Kemeny-Young"), ({"strategy": ["R-M"]}, "Agreement"), ({}, "Nonsense")):
        at = _tab(query, tab)
        assert not at.exception and not at.error, (tab, [e.value for e in at.error])
        assert tab not in _tabs(at) and len(charts(at)) == 1 and _wide(at)["encoder"].iloc[0] == best
        assert f"This view has no `{tab}` tab" in texts(at)
        assert "section" not in at.query_params                         # Streamlit drops the bad value


def test_removing_r_kem_while_its_tab_is_open_falls_back_to_rankings():
    at = _tab({"strategy": ["R-M", "R-Kem"]}, "Kemeny-Young")
    assert "solved with HiGHS in" in texts(at)
    at.multiselect(key="strategy").set_value(["R-M"]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert _tabs(at) == ["Rankings", "Critical difference", "Rank intervals", "Pairwise tests", "Bayesian test",
                         "Win rates and Elo"]
    assert "solved with HiGHS in" not in texts(at) and list(_wide(at).columns) == ["encoder", "family", "R-M"]


def test_the_combination_choice_is_shared_by_the_tabs_that_use_it():
    at = _tab({"model": ["LogReg", "DT"]}, "Critical difference")
    assert at.selectbox(key="detail").value == "DT / no / AUC"
    at.selectbox(key="detail").set_value("LogReg / no / AUC").run()
    assert "Critical difference: LogReg / no / AUC" in charts(at)[0].proto.spec
    for tab in ("Rank intervals", "Pairwise tests", "Rankings", "Critical difference"):
        _switch(at, tab)
        if tab != "Rankings":
            assert at.selectbox(key="detail").value == "LogReg / no / AUC", tab
    assert "Critical difference: LogReg / no / AUC" in charts(at)[0].proto.spec
    # the choice kept while its tabs were closed names a combination the new view lacks
    _switch(at, "Rankings")
    at.multiselect(key="model").set_value(["DT", "SVM"]).run()
    _switch(at, "Rank intervals")
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="detail").options == ["DT / no / AUC", "SVM / no / AUC"]
    assert at.selectbox(key="detail").value == "DT / no / AUC"


def test_a_select_inside_a_tab_keeps_the_tab_open():
    """The interval strategy (a bootstrap) is a select of its tab. (Its fragment, which reruns that
    tab only, is the browser's: AppTest reruns the whole page on every widget change.)"""
    at = _tab(None, "Rank intervals")
    at.selectbox(key="istrategy").set_value("Q-M").run()
    assert not at.exception
    assert "Q-M consensus rank with its 95% bootstrap interval" in texts(at)
    assert at.session_state["section"] == "Rank intervals" and len(charts(at)) == 1


def test_switching_the_model_changes_the_ranking():
    at = open_page("consensus")
    before = _wide(at)["encoder"].tolist()
    at.multiselect(key="model").set_value(["DT"]).run()
    after = _wide(at)["encoder"].tolist()
    best = _best_by_r_m(_published_rows(models=["DT"]))
    assert after != before and summary_line(at).startswith(f"Best by **R-M**: **{best}**")


def test_theta_changes_q_th_and_is_restored_from_the_url():
    at = open_page("consensus", {"strategy": ["Q-Th"], "theta": "0.9"})
    assert list(_wide(at).columns)[-1] == "Q-Th (theta=0.9)"
    ranks_090 = _wide(at).set_index("encoder")["Q-Th (theta=0.9)"]
    at.slider(key="theta").set_value(0.99).run()
    ranks_099 = _wide(at).set_index("encoder")["Q-Th (theta=0.99)"]
    assert not ranks_090.sort_index().equals(ranks_099.sort_index())


def test_kemeny_shows_solve_time_and_objective():
    at = _tab({"strategy": ["R-M", "R-Kem"]}, "Kemeny-Young")
    assert "solved with HiGHS in" in texts(at)
    info = next(d.value for d in at.dataframe if "solve_time_s" in d.value.columns)
    assert bool(info["optimal"].all()) and info["objective"].iloc[0] > 0


def test_several_combinations_side_by_side_or_pooled():
    at = open_page("consensus", {"model": ["LogReg", "DT"]})
    assert "LogReg / no / AUC | R-M" in _wide(at).columns
    _switch(at, "Critical difference")
    assert at.selectbox(key="detail").options == ["DT / no / AUC", "LogReg / no / AUC"]
    _switch(at, "Rankings")
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

    monkeypatch.setattr(consensus, "best_summary", boom)  # called on every run (the view is cached)
    at = open_page("consensus")
    assert not at.exception
    assert "could not be shown: RuntimeError: simulated failure" in texts(at)


def test_link_with_unknown_values_is_flagged_not_silently_replaced():
    at = open_page("consensus", {"model": "Foo"})
    warnings = [w.value for w in at.warning]
    assert any("The link sets model to `Foo`" in w and "LogReg" in w for w in warnings), warnings


def test_cd_diagram_says_how_complete_the_data_are_and_which_design_it_used():
    """The counts said are those of the view's rows, by hand: no dataset has every encoder (as in
    the published benchmark), and the encoders present on every dataset are counted."""
    rows = _published_rows()
    cells = rows.pivot_table(index="dataset", columns="encoder", values="cv_score", aggfunc="size")
    n_datasets, n_encoders = cells.shape
    complete_datasets = int(cells.notna().all(axis=1).sum())
    complete_encoders = int(cells.notna().all(axis=0).sum())
    assert complete_datasets == 0 and 0 < complete_encoders < n_encoders      # what the test needs
    at = _tab(None, "Critical difference")
    shown = texts(at)
    assert (f"**0 of {n_datasets}** datasets have a result for every one of the {n_encoders} encoders"
            in shown)
    assert f"**{complete_encoders} of {n_encoders}** encoders have a result on every dataset" in shown
    assert f"Blocks: incomplete blocks: 0 of {n_datasets} datasets have every encoder" in shown
    assert "the test assumes complete blocks" in shown
    imputed = _tab({"blocks": "impute"}, "Critical difference")
    shown = texts(imputed)
    assert "missing scores imputed (Q-Imp model)" in shown and "Friedman chi2 =" in shown
    assert f"N = {n_datasets} datasets, k = {n_encoders} encoders" in shown
    complete = _tab({"blocks": "complete-datasets"}, "Critical difference")
    assert "No critical-difference diagram" in texts(complete)
    assert not complete.exception


def test_clearing_a_filter_is_not_reported_as_an_unknown_link_value():
    """Clearing Metric showed "The link sets metric to ''"."""
    at = open_page("consensus")
    at.multiselect(key="metric").set_value([]).run()
    assert not at.exception
    shown = texts(at)
    assert "Select at least one value for: Metric" in shown
    assert "The link sets" not in shown
    linked = open_page("consensus", {"metric": ""})
    assert "The link sets" not in texts(linked)


def test_invalid_numbers_in_a_link_are_named_and_a_stale_detail_is_dropped():
    """Bad alpha/theta/B were dropped silently; detail= stayed in the URL."""
    at = open_page("consensus", {"alpha": "0.3", "theta": "2", "B": "abc",
                                 "detail": "DT / no / AUC"})
    warnings = " ".join(w.value for w in at.warning)
    assert "The link sets alpha to `0.3`" in warnings and "Accepted: 0.01, 0.05, 0.1" in warnings
    assert "The link sets theta to `2`" in warnings
    assert "The link sets B to `abc`" in warnings
    assert "detail" not in at.query_params          # one combination: no detail to keep
    ok = open_page("consensus", {"alpha": "0.01", "B": "100"})
    assert "The link sets" not in texts(ok)


def test_r_kem_is_said_to_have_no_interval():
    at = _tab({"strategy": ["R-M", "R-Kem"]}, "Rank intervals")
    assert at.selectbox(key="istrategy").options == ["R-M"]
    assert "R-Kem has no bootstrap interval here" in texts(at)


def _wilcoxon_table(at):
    return next(d.value for d in at.dataframe if "p_holm" in d.value.columns)


def test_pairwise_wilcoxon_between_chosen_encoders_with_holm():
    """Pairwise tests between two chosen encoders, Holm for several pairs."""
    from encbench.stats import wilcoxon_pairs

    at = _tab(None, "Pairwise tests")
    table = _wilcoxon_table(at)
    chosen = at.multiselect(key="wilcoxon").value
    assert len(chosen) == 2 and len(table) == 1
    assert table["p_holm"].iloc[0] == pytest.approx(table["p_value"].iloc[0])
    at.multiselect(key="wilcoxon").set_value(["WoE", "OH", "Drop"]).run()
    table = _wilcoxon_table(at)
    assert list(zip(table["encoder_a"], table["encoder_b"])) == [("WoE", "OH"), ("WoE", "Drop"), ("OH", "Drop")]
    rows = _published_rows()
    expected = wilcoxon_pairs(rows[["dataset", "encoder", "cv_score"]], encoders=["WoE", "OH", "Drop"]).table
    pd.testing.assert_series_equal(table["p_holm"], expected["p_holm"], check_names=False)
    at.multiselect(key="wilcoxon").set_value(["WoE"]).run()
    assert "Choose two encoders or more" in texts(at)


def test_the_strategy_registry_drives_the_selector_and_the_parameter_widgets():
    """A strategy is added in encbench.vocab.STRATEGY_REGISTRY, never in a page."""
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
    at = _tab({"metric": "AUC"}, "Critical difference")
    for metrics in (["AUC", "Acc"], ["AUC", "BAcc"], ["AUC"], ["AUC", "Acc"], ["AUC"]):
        at.multiselect(key="metric").set_value(metrics).run()
        assert not at.exception and not at.error, (metrics, [e.value for e in at.error])
        assert len(charts(at)) == 1 and "CD = " in texts(at)                 # the CD diagram
        assert ("detail" in _keys(at, "selectbox")) == (len(metrics) > 1)
    assert "detail" not in at.query_params


def test_pairwise_tests_show_effect_sizes_beside_the_p_values():
    """Every pairwise test comes with how much: the median difference's interval and the
    rank-biserial correlation with its bootstrap interval, as the library computes them."""
    from encbench.stats import wilcoxon_pairs

    at = _tab(None, "Pairwise tests")
    at.multiselect(key="wilcoxon").set_value(["Sum", "Drop"]).run()
    table = _wilcoxon_table(at)
    for column in ("median_low", "median_high", "rank_biserial", "rank_biserial_low", "rank_biserial_high"):
        assert column in table.columns
    row = table.iloc[0]
    assert row["median_low"] <= row["median_difference"] <= row["median_high"]
    assert row["rank_biserial_low"] <= row["rank_biserial"] <= row["rank_biserial_high"]
    expected = wilcoxon_pairs(_published_rows()[["dataset", "encoder", "cv_score"]], encoders=["Sum", "Drop"])
    assert row["rank_biserial"] == pytest.approx(expected.table["rank_biserial"].iloc[0])
    assert row["rank_biserial"] > 0.5                       # Sum beats Drop on most datasets
    assert "rank_biserial" in texts(at) and "bootstrap" in texts(at)


def test_bayesian_tab_draws_the_posterior_of_two_chosen_encoders_with_a_url_bound_rope():
    """P(A better), P(equivalent), P(B better) as the library computes them, the simplex, the
    exports of the figure, the row and the draws; the ROPE comes from the link."""
    from encbench.stats import bayesian_signed_rank

    at = _tab({"bayes_a": "Sum", "bayes_b": "Drop", "rope": "0.005"}, "Bayesian test")
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="bayes_a").value == "Sum" and at.selectbox(key="bayes_b").value == "Drop"
    assert at.number_input(key="rope").value == pytest.approx(0.005)
    rows = _published_rows()
    expected = bayesian_signed_rank(rows[["scoring", "dataset", "encoder", "cv_score"]], "Sum", "Drop", rope=0.005)
    shown = texts(at)
    assert f"P(Sum better) = **{expected.p_a_better:.3f}**" in shown
    assert f"P(equivalent) = **{expected.p_equivalent:.3f}**" in shown
    table = next(d.value for d in at.dataframe if "p_equivalent" in d.value.columns)
    assert table["p_a_better"].iloc[0] == pytest.approx(expected.p_a_better)
    assert len(charts(at)) == 1 and "assumes the datasets are independent" in shown
    assert "Assumes independent datasets" in charts(at)[0].proto.spec          # the figure says it too
    open_exports(at, "chart-bayesian-simplex", "table-bayesian", "table-bayesian-draws")
    keys = {b.key for b in at.download_button}
    assert {"dl-chart-bayesian-simplex-png", "dl-table-bayesian-csv", "dl-table-bayesian-draws-csv"} <= keys
    at.number_input(key="rope").set_value(0.0).run()
    table = next(d.value for d in at.dataframe if "p_equivalent" in d.value.columns)
    assert table["p_equivalent"].iloc[0] == 0.0                      # no ROPE: nothing is equivalent


def test_elo_tab_shows_ratings_calibrated_to_the_reference_and_the_win_rates():
    """The Elo ratings with their intervals and the win-rate matrix, as the library computes them,
    each with its exports; the reference and B come from the link; Elo is a strategy too."""
    from encbench.stats import elo

    at = _tab({"elo_ref": "Drop", "elo_B": "100"}, "Win rates and Elo")
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="elo_ref").value == "Drop" and at.number_input(key="elo_B").value == 100
    rows = _published_rows()
    expected = elo(rows[["scoring", "dataset", "encoder", "cv_score"]], reference="Drop", B=100)
    table = next(d.value for d in at.dataframe if "elo" in d.value.columns)
    pd.testing.assert_frame_equal(table.reset_index(drop=True), expected.table)
    assert table.loc[table["encoder"] == "Drop", "elo"].item() == 1000.0
    assert len(charts(at)) == 2 and "Highest Elo: " in texts(at)
    open_exports(at, "chart-elo", "table-elo", "chart-win-rates")
    keys = {b.key for b in at.download_button}
    assert {"dl-chart-elo-png", "dl-table-elo-csv", "dl-chart-win-rates-svg", "dl-chart-win-rates-parquet"} <= keys
    at.selectbox(key="elo_ref").set_value("OH").run()
    again = next(d.value for d in at.dataframe if "elo" in d.value.columns).set_index("encoder")
    shift = table.set_index("encoder")["elo"] - again["elo"].reindex(table["encoder"]).to_numpy()
    assert shift.std() < 1e-6 and again.loc["OH", "elo"] == 1000.0      # the reference only shifts
    ranked = open_page("consensus", {"strategy": ["R-M", "Elo"]})
    assert "Elo" in _wide(ranked).columns and not ranked.error


def _published_rows(models=("LogReg",)):
    """The published scores of the page's database (``ENCBENCH_DB``) under no tuning and AUC."""
    reader = Reader(os.environ["ENCBENCH_DB"])
    try:
        return queries.load_scores(reader, models=list(models), tunings=["no"], scorings=["AUC"],
                                   origins=["published"])
    finally:
        reader.close()


def _best_by_r_m(rows) -> str:
    """The encoder the library's R-M ranks first on ``rows`` (one, not a tie)."""
    ranks = consensus_ranks(rows[["dataset", "encoder", "cv_score"]], "R-M")
    (best,) = ranks.index[ranks == ranks.min()]
    return best


def test_cd_diagram_against_a_control_with_bonferroni_dunn_and_holm():
    """A control encoder (URL-bound, shared with the pairwise tab) turns the CD diagram into
    Demsar's comparison with a control: Bonferroni-Dunn's CD around it, Holm in the table."""
    from encbench.stats import control_test

    at = _tab({"control": "OH", "alpha": "0.1"}, "Critical difference")
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="control").value == "OH"
    expected = control_test(_published_rows()[["dataset", "encoder", "cv_score"]], "OH", alpha=0.1)
    table = next(d.value for d in at.dataframe if "significant_holm" in d.value.columns)
    pd.testing.assert_frame_equal(table.reset_index(drop=True), expected.table, check_dtype=False)
    shown = texts(at)
    assert "Bonferroni-Dunn against OH, alpha = 0.1" in shown and f"CD = {expected.critical_difference:.2f}" in shown
    others = _published_rows()["encoder"].nunique() - 1
    assert f"Holm finds {len(expected.differing())} of {others} different from OH" in shown
    assert len(charts(at)) == 1 and "Bonferroni-Dunn against OH" in charts(at)[0].proto.spec
    open_exports(at, "chart-cd-control", "table-control-test")
    keys = {b.key for b in at.download_button}
    assert {"dl-chart-cd-control-png", "dl-table-control-test-csv"} <= keys
    at.selectbox(key="control").set_value("(none)").run()
    assert "Nemenyi, alpha = 0.1" in texts(at) and not any("significant_holm" in d.value.columns for d in at.dataframe)


def test_pairwise_tab_against_a_control_tests_it_against_every_other_encoder():
    from encbench.stats import wilcoxon_pairs

    at = _tab({"control": "Drop"}, "Pairwise tests")
    assert not at.error, [e.value for e in at.error]
    table = _wilcoxon_table(at)
    rows = _published_rows()[["dataset", "encoder", "cv_score"]]
    others = rows["encoder"].nunique() - 1
    assert (table["encoder_a"] == "Drop").all() and len(table) == others
    expected = wilcoxon_pairs(rows, pairs=[("Drop", e) for e in table["encoder_b"]])
    pd.testing.assert_series_equal(table["p_holm"], expected.table["p_holm"], check_names=False)
    higher = int((expected.table["significant"] & (expected.table["rank_biserial"] < 0)).sum())
    assert f"Against **Drop** ({others} Wilcoxon tests, Holm, alpha = 0.05): **{higher}** score higher" in texts(at)
    assert "wilcoxon" not in _keys(at, "multiselect")                  # the control replaces the pair choice
    open_exports(at, "table-wilcoxon-control")
    assert "dl-table-wilcoxon-control-csv" in {b.key for b in at.download_button}


# Rank intervals beyond encbench.views.rank_intervals.IN_PAGE_CELLS run in a worker process.
INTERVAL_JOBS = "consensus_interval_jobs"


def _interval_jobs(at) -> dict:
    return at.session_state[INTERVAL_JOBS] if INTERVAL_JOBS in at.session_state else {}  # noqa: SIM401 - no .get


def _drawn_intervals(at) -> pd.DataFrame:
    """The encoder, rank, low and high the rank-interval chart draws (Streamlit sends the chart's
    data beside its spec, as Arrow)."""
    import pyarrow as pa

    (dataset,) = {d.data.data for d in charts(at)[0].proto.datasets}    # both layers draw one table
    return pa.ipc.open_stream(dataset).read_pandas()[["encoder", "rank", "low", "high"]]


def _until_drawn(at, *, timeout: float = 60.0):
    """Rerun the page (as the progress fragment does each second) until a chart is drawn."""
    import time

    deadline = time.monotonic() + timeout
    while not charts(at):
        assert time.monotonic() < deadline, texts(at)
        time.sleep(0.2)
        at.run()
        assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_a_large_bootstrap_runs_in_a_worker_process_and_draws_the_same_intervals():
    """Pooled over two models, the small database's voters make a bootstrap of 2000 resamples
    larger than a page computes itself."""
    from encbench.stats import rank_intervals
    from encbench.views import rank_intervals as rank_iv

    pooled = consensus.pooled_scores(_published_rows(models=["LogReg", "DT"]))
    assert rank_iv.in_worker(rank_iv.bootstrap_cells(pooled, 2000))
    query = {"model": ["LogReg", "DT"], "mode": "pooled", "istrategy": "Q-M", "B": "2000"}
    at = _tab(query, "Rank intervals")
    assert not at.error, [e.value for e in at.error]
    assert "Computing the Q-M rank intervals in a worker process: 2,000 resamples" in texts(at)
    assert at.button(key="intervals-cancel") is not None and not charts(at)
    (job,) = _interval_jobs(at).values()
    _until_drawn(at)
    assert "Q-M consensus rank with its 95% bootstrap interval (2000 resamples" in texts(at)
    expected = rank_intervals(pooled, "Q-M", B=2000, seed=0)
    drawn = _drawn_intervals(at).sort_values(["rank", "encoder"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(drawn, expected, check_dtype=False)
    assert job.result is not None and not _interval_jobs(at)            # kept by its inputs, not the session
    again = _tab(query, "Rank intervals")                                 # a revisit: drawn at once, no job
    assert len(charts(again)) == 1 and not _interval_jobs(again)
    pd.testing.assert_frame_equal(_drawn_intervals(again), _drawn_intervals(at))


def test_a_worker_bootstrap_can_be_cancelled_and_restarted():
    """(Pooled over three models: the small database's voters make 1950 resamples a worker's.)"""
    at = _tab({"model": ["LogReg", "DT", "SVM"], "mode": "pooled", "istrategy": "R-M", "B": "1950"},
              "Rank intervals")
    (job,) = _interval_jobs(at).values()
    at.button(key="intervals-cancel").click().run()
    assert not at.exception and job.cancelled
    assert "The R-M rank intervals (1,950 resamples) were cancelled." in texts(at)
    assert not charts(at) and "Computing the R-M" not in texts(at)
    assert job.wait(30) and job.result is None                          # the bootstrap stops at once
    assert job.error is None or str(job.error).endswith("stopped after 0 s"), job.error
    at.run()
    assert "were cancelled" in texts(at) and not charts(at)               # stays cancelled
    at.button(key="intervals-restart").click().run()
    (restarted,) = _interval_jobs(at).values()
    assert restarted is not job and not restarted.cancelled
    assert "Computing the R-M rank intervals in a worker process" in texts(at)
    at.number_input(key="B").set_value(200).run()                         # the view changed: stopped
    assert restarted.cancelled and not _interval_jobs(at) and len(charts(at)) == 1
    assert restarted.wait(30)


def test_the_default_bootstrap_stays_in_the_page(published):
    from encbench.views import rank_intervals as rank_iv

    at = _tab(None, "Rank intervals")
    assert at.number_input(key="B").value == 200
    assert rank_iv.bootstrap_cells(_published_rows(), 200) == 200 * 50 * 32 <= rank_iv.IN_PAGE_CELLS
    assert not _interval_jobs(at) and len(charts(at)) == 1
    assert "worker process" not in texts(at) and "R-M consensus rank with its 95% bootstrap interval" in texts(at)


def test_elo_summary_calls_ratings_equal_to_the_point_a_tie(published):
    """LogReg / no / AUC: Sum is rated 1000.48 and the reference OH 1000.00; the summary said
    "Highest Elo: Sum (1000) · OH = 1000", naming a winner of a tie as shown. It now names both."""
    at = _tab(None, "Win rates and Elo")
    table = next(d.value for d in at.dataframe if "elo" in d.value.columns)
    assert table["elo"].round().head(2).tolist() == [1000.0, 1000.0] and table["elo"].iloc[2].round() < 1000
    summary = texts(at)
    assert "Highest Elo: a tie of **Sum, OH**" in summary and "Highest Elo: **Sum**" not in summary


def test_cd_tab_explains_why_its_order_differs_from_r_m(published):
    """The CD diagram (Friedman mean ranks) and R-M (dense mean ranks) order BUMT_10 / BUMT_2 and
    DMT_10 / PBMT_0.001 differently in the default view: the tab says why and names the pairs,
    and the Nemenyi export carries both means."""
    at = _tab(None, "Critical difference")
    note = next(c.value for c in at.caption if "mean Friedman rank" in c.value)
    assert "BUMT_10 / BUMT_2" in note and "DMT_10 / PBMT_0.001" in note and "dense ranks" in note
    wide = _wide(open_page("consensus"))
    order = wide["encoder"].tolist()
    assert order.index("BUMT_10") < order.index("BUMT_2") and order.index("DMT_10") < order.index("PBMT_0.001")


def test_a_pooled_n_counts_voters_not_datasets():
    """Pooled, the CD diagram's N counts (dataset, combination) voters and says on how many
    datasets; it said "N = 100 datasets" for 2 combinations on 50 datasets."""
    at = _tab({"model": ["LogReg", "DT"], "mode": "pooled"}, "Critical difference")
    shown = texts(at)
    rows = _published_rows(models=["LogReg", "DT"])
    voters, datasets = len(rows.groupby(["dataset", "model"])), rows["dataset"].nunique()
    assert voters == 2 * datasets
    assert f"N = {voters} voters ((dataset, combination) pairs on {datasets} datasets)" in shown
    assert f"N = {voters} datasets" not in shown


@pytest.mark.parametrize("tab, item", [("Critical difference", "cd-diagram"), ("Rank intervals", "rank-intervals"),
                                       ("Win rates and Elo", "win-rates")])
def test_a_chart_and_its_numbers_share_one_labelled_download_menu(tab, item):
    """Under the CD diagram, the rank intervals and the win-rate matrix two menus both labelled
    "Download" were stacked, the chart's and its table's: one menu now, labelled, holds both."""
    at = _tab(None, tab)
    menus = [p for p in at.get("popover") if "exports-" in str(p.proto)]
    shown = "\n".join(str(p.proto) for p in menus)
    assert 'label: "Download"\n' not in shown and 'label: "Download chart and its data"' in shown
    assert not any(f"exports-table-{name}" in str(p.proto) for p in menus
                   for name in ("nemenyi", "rank-intervals", "win-rates"))
    open_exports(at, f"chart-{item}")
    keys = {b.key for b in at.download_button}
    assert {f"dl-chart-{item}-png", f"dl-chart-{item}-csv", f"dl-chart-{item}-provenance"} <= keys


def test_a_ranking_row_leads_to_that_encoder_s_scores_under_the_same_filters():
    """Selecting a row of the rankings links the drill-down on its encoder, with the view's
    model, tuning and metric; the link's page opens on that encoder."""
    at = open_page("consensus", {"model": "DT"})
    at.session_state["select-rankings"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    first = _wide(at)["encoder"].iloc[0]
    link = next(p.proto for p in at.get("page_link") if p.proto.page == "explorer")
    assert f"drill_encoder={first}" in link.query_string and "model=DT" in link.query_string
    assert "metric=AUC" in link.query_string and "tuning=no" in link.query_string
    query = dict(item.split("=") for item in link.query_string.split("&"))
    drill = open_page("explorer", {**query, "section": "Drill down"})
    assert drill.selectbox(key="drill_encoder").value == first
    assert set(drill.dataframe[0].value["model"]) == {"DT"}
