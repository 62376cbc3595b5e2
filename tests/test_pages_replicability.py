"""AppTest: the Replicability page computes bands per sample size; n_pairs is a control.

On the small database (tests/small_db.py): its few published datasets give sample sizes up to
half of them, which :func:`encbench.views.replicability.default_sample_sizes` lists. Below the
summary, each strategy says how many datasets a stable ranking needs."""
from __future__ import annotations

import pytest
from pagetest import charts, open_page, texts

from encbench import vocab
from encbench.store import Reader, queries
from encbench.views.replicability import datasets_needed_text, default_sample_sizes
from pages.ui.text import md_text


@pytest.fixture(autouse=True)
def small_env(small_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))


@pytest.fixture(scope="module")
def n_datasets(small_db) -> int:
    """Published datasets of the default view (LogReg / no / AUC)."""
    with Reader(small_db) as reader:
        rows = queries.load_scores(reader, models=["LogReg"], tunings=["no"], scorings=["AUC"], origins=["published"])
    return rows["dataset"].nunique()


def test_replicability_defaults_and_pairs_control(n_datasets):
    at = open_page("replicability", {"n_pairs": "20"})
    assert at.number_input(key="n_pairs").value == 20
    summary = at.dataframe[0].value
    assert set(summary["strategy"]) == {"R-M", "Q-M"}
    assert summary["sample_size"].unique().tolist() == default_sample_sizes(n_datasets)
    assert (summary["n_pairs"] == 20).all()
    assert (summary["rho_low"] <= summary["rho_mean"]).all() and (summary["rho_mean"] <= summary["rho_high"]).all()
    assert len(charts(at)) == 1
    # how many datasets a stable ranking needs, per strategy, as the view words it
    for strategy in ("R-M", "Q-M"):
        want = datasets_needed_text(summary[summary["strategy"] == strategy])
        assert f"- {strategy}: {md_text(want)}" in [m.value for m in at.markdown], strategy
    at.number_input(key="n_pairs").set_value(30).run()
    assert (at.dataframe[0].value["n_pairs"] == 30).all()


def test_default_pairs_is_100(n_datasets):
    at = open_page("replicability", {"strategy": "R-M", "step": "2"})
    assert at.number_input(key="n_pairs").value == 100
    sizes = default_sample_sizes(n_datasets, step=2)
    assert sizes != default_sample_sizes(n_datasets) and len(sizes) > 1       # the link's step counts
    assert at.dataframe[0].value["sample_size"].tolist() == sizes


def test_messages_for_empty_choices():
    at = open_page("replicability", {"model": "LGBM", "tuning": "model"})
    assert "No results for LGBM / model / AUC" in texts(at)
    at = open_page("replicability")
    at.multiselect(key="strategy").set_value([]).run()
    assert "Select at least one aggregation strategy" in texts(at)


def test_r_kem_runs_in_the_background_with_progress_and_joins_the_figure(n_datasets):
    """R-Kem blocked the page; now a background job with progress and a cancel."""
    at = open_page("replicability", {"strategy": ["R-M", "R-Kem"], "n_pairs": "10", "step": "2"})
    # the page is usable at once: R-M is drawn, R-Kem shows its progress and a Cancel button
    assert set(at.dataframe[0].value["strategy"]) == {"R-M"}
    assert at.button(key="kem-cancel") is not None
    job = next(iter(at.session_state["replicability_kem"].values()))
    assert job.wait(120) and job.error is None
    at.run()
    summary = at.dataframe[0].value
    assert set(summary["strategy"]) == {"R-M", "R-Kem"}
    kem = summary[summary["strategy"] == "R-Kem"]
    assert kem["sample_size"].tolist() == default_sample_sizes(n_datasets, step=2) and (kem["n_pairs"] == 10).all()


def test_r_kem_can_be_cancelled_and_restarted():
    at = open_page("replicability", {"strategy": ["R-Kem"], "n_pairs": "200", "step": "5"})
    at.button(key="kem-cancel").click().run()
    job = next(iter(at.session_state["replicability_kem"].values()))
    assert job.cancelled and job.wait(60)
    at.run()
    assert "R-Kem was cancelled" in texts(at)
    at.button(key="kem-restart").click().run()
    job = next(iter(at.session_state["replicability_kem"].values()))
    assert not job.cancelled
    job.cancel()
    job.wait(60)


def test_r_kem_left_out_of_the_strategies_is_cancelled():
    at = open_page("replicability", {"strategy": ["R-M", "R-Kem"], "n_pairs": "200", "step": "5"})
    job = next(iter(at.session_state["replicability_kem"].values()))
    assert not job.cancelled
    at.multiselect(key="strategy").set_value(["R-M"]).run()
    assert not at.exception and job.cancelled and not at.session_state["replicability_kem"]
    assert job.wait(60) and set(at.dataframe[0].value["strategy"]) == {"R-M"}


def test_strategy_parameters_come_from_the_shared_widget():
    """Alpha was fixed at 0.05 here; the page now has the same theta/alpha widget."""
    at = open_page("replicability", {"strategy": "R-Nem", "alpha": "0.1", "n_pairs": "10", "step": "10"})
    assert at.multiselect(key="strategy").options == list(vocab.STRATEGY_REGISTRY)
    assert at.select_slider(key="alpha").value == 0.1 and not at.select_slider(key="alpha").disabled
    assert at.slider(key="theta").value == vocab.THETA.default and at.slider(key="theta").disabled
    assert set(at.dataframe[0].value["strategy"]) == {"R-Nem"}
