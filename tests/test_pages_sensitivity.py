"""AppTest: the Sensitivity page varies the chosen factor (on the small database, tests/small_db.py)."""
from __future__ import annotations

import json

import pytest
from pagetest import charts, open_page, texts

from encbench import vocab


@pytest.fixture(autouse=True)
def small_env(small_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))


def _labels(at) -> str:
    return json.dumps(json.loads(charts(at)[0].proto.spec))


def test_default_varies_models_averaged_over_the_rest(small_db):
    """Varying the model, the rest (tuning x metric settings of the published rows) are averaged."""
    from encbench.store import Reader, queries

    with Reader(small_db) as reader:
        rows = queries.load_scores(reader, origins=["published"])
    settings = len(rows.groupby(["tuning", "scoring"]))
    at = open_page("sensitivity")
    assert f"averaged over {settings} settings" in texts(at)
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


def _widget_places(node, path=()) -> dict[str, tuple]:
    """Key -> position in the page (indices from the root) of every keyed element."""
    places = {node.key: path} if getattr(node, "key", None) else {}
    for index, child in getattr(node, "children", {}).items():
        places.update(_widget_places(child, (*path, index)))
    return places


def test_every_control_keeps_its_place_whichever_factor_varies():
    """Vary=metric, then Tuning (fixed) = model left the URL at ?vary=metric. Streamlit's
    browser side drops the URL binding of a keyed widget that moves; Tuning's select moved a column
    when the varied factor changed. A browser test (test_browser_sensitivity.py) sees the URL."""
    seen: dict[str, set] = {}
    for vary in ("model", "metric", "tuning", "strategy"):
        at = open_page("sensitivity", {"vary": vary})
        for key, place in _widget_places(at._tree).items():
            if not key.startswith(("dl-", "exports-")):
                seen.setdefault(key, set()).add(place)
    moved = {key: places for key, places in seen.items() if len(places) > 1}
    assert not moved, moved
    assert {"fix_model", "fix_tuning", "fix_metric", "agg", "theta", "alpha"} <= set(seen)


def test_a_link_with_a_fixed_factor_restores_it():
    at = open_page("sensitivity", {"vary": "metric", "fix_tuning": "model"})
    assert at.selectbox(key="fix_tuning").value == "model"
    assert at.selectbox(key="fix_model").value == "(average over all)"
    assert "Varying **metric** (aggregation R-M), averaged over" in texts(at)
    assert "settings of Model." in texts(at)                     # tuning is fixed, not averaged
    at = open_page("sensitivity", {"vary": "metric", "fix_tuning": "model", "fix_model": "DT"})
    assert "for Model = DT, Tuning = model" in texts(at)


def test_elo_takes_part_in_the_strategy_agreement():
    """Elo is a registry strategy: choosing it puts its ranking beside the others and into both
    agreement heatmaps, with no edit of the page."""
    at = open_page("sensitivity", {"vary": "strategy", "fix_model": "LogReg", "fix_tuning": "no",
                                   "fix_metric": "AUC", "strategies": ["R-M", "Q-M", "Elo"]})
    assert not at.error, [e.value for e in at.error]
    assert list(at.dataframe[0].value.columns)[:4] == ["encoder", "R-M", "Q-M", "Elo"]
    assert len(charts(at)) == 2 and all('"Elo"' in json.dumps(json.loads(c.proto.spec)) for c in charts(at))


def test_each_heatmap_has_one_download_menu_with_its_matrix_as_a_table_too():
    """A heatmap had two Download menus under it, the chart's and its matrix's."""
    from pagetest import open_exports

    at = open_page("sensitivity", {"vary": "strategy", "fix_model": "LogReg", "fix_tuning": "no",
                                   "fix_metric": "AUC"})
    assert not at.download_button                                       # built when a menu opens
    open_exports(at, "chart-jaccard-heatmap", "chart-spearman-heatmap")
    assert {b.key for b in at.download_button} == {
        f"dl-chart-{item}-heatmap-{fmt}" for item in ("jaccard", "spearman")
        for fmt in ("png", "svg", "csv", "parquet", "latex", "provenance")}
    csv = next(b for b in at.download_button if b.key == "dl-chart-jaccard-heatmap-csv")
    assert csv.proto.label == "CSV"
