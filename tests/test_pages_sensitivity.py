"""AppTest: the Sensitivity page varies the chosen factor."""
from __future__ import annotations

import json

import pytest
from pagetest import charts, open_page, texts

from encbench import vocab


@pytest.fixture(autouse=True)
def published_env(published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))


def _labels(at) -> str:
    return json.dumps(json.loads(charts(at)[0].proto.spec))


def test_default_varies_models_averaged_over_the_rest():
    at = open_page("sensitivity")
    assert "averaged over 12 settings" in texts(at)
    assert len(charts(at)) == 2 and '"LogReg"' in _labels(at)


def test_varying_strategy_with_fixed_factors_shows_the_rankings():
    at = open_page("sensitivity", {"vary": "strategy", "fix_model": "LogReg", "fix_tuning": "no",
                                   "fix_metric": "AUC"})
    assert "for Model = LogReg, Tuning = no, Metric = AUC" in texts(at)
    assert '"Q-RM"' in _labels(at) and '"LogReg"' not in _labels(at)
    rankings = at.dataframe[0].value
    assert list(rankings.columns)[:3] == ["encoder", "R-M", "R-Md"]


def test_changing_the_factor_changes_the_heatmaps():
    at = open_page("sensitivity")
    at.radio(key="vary").set_value("tuning").run()
    assert '"full"' in _labels(at) and '"LogReg"' not in _labels(at)


def test_too_few_values_get_a_message():
    at = open_page("sensitivity")
    at.multiselect(key="models").set_value(["DT"]).run()
    assert "Select at least two model values" in texts(at)
    at = open_page("sensitivity", {"vary": "strategy"})
    at.multiselect(key="strategies").set_value(["R-M"]).run()
    assert "at least two strategies" in texts(at)


def test_strategy_choices_and_parameters_come_from_the_registry():
    at = open_page("sensitivity", {"vary": "strategy", "theta": "0.9"})
    assert at.multiselect(key="strategies").options == list(vocab.STRATEGY_REGISTRY)
    assert at.multiselect(key="strategies").value == [n for n, s in vocab.STRATEGY_REGISTRY.items() if s.heuristic]
    assert at.slider(key="theta").value == 0.9 and not at.slider(key="theta").disabled
    assert at.select_slider(key="alpha").label == "alpha (R-Nem)"
