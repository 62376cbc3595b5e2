"""AppTest of the "New encoder" page and the plugin offer on "Run on your data"."""
from __future__ import annotations

import pytest

from encbench.custom import CustomEncoder
from encbench.engine.grid import Grid
from pagetest import open_page, texts
from small_db import copy_db

FREQ = "tests.byo_encoders:FrequencyRankEncoder"


@pytest.fixture(scope="module")
def byo_db(small_published_db, tmp_path_factory):
    """A copy of the small database's published results (tic-tac-toe and monks-problems-2 among
    them) with a comparison run: FreqRank + controls OH, MT on those two datasets, DT and LogReg,
    no tuning (run in this process)."""
    from encbench.engine import run_grid

    path = copy_db(small_published_db, tmp_path_factory.mktemp("byo_pages") / "encbench.duckdb")
    grid = Grid(datasets=["bundled:tic-tac-toe", "bundled:monks-problems-2"], encoders=["OH", "MT"],
                models=["DT", "LogReg"], label="byo page test",
                custom_encoders=[CustomEncoder("FreqRank", FREQ, {"scale": True})])
    run_id = run_grid(grid, db_path=path, workers=0)
    return path, run_id


@pytest.fixture()
def app_db(byo_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(byo_db[0]))
    monkeypatch.setenv("ENCBENCH_WORKER_IDLE_EXIT", "1")
    return byo_db


def test_new_encoder_page_shows_controls_ranks_cd_and_wilcoxon(app_db):
    _, run_id = app_db
    at = open_page("new_encoder", {"run": run_id}, timeout=180)
    text = texts(at)
    assert "never imports code from an upload" in text
    assert "Controls: 32 of 32 cells (100.0%) within 0.005" in text  # OH and MT reproduce the study
    assert "FreqRank pooled over 2 model(s) x 4 metric(s) (16 voters), rank among 33 encoders" in text
    assert "`tests.byo_encoders:FrequencyRankEncoder`" in text and '{"scale": true}' in text
    assert at.selectbox(key="byo_run").value == run_id
    frames = [df.value for df in at.dataframe]
    ranks = next(f for f in frames if "R-Kem" in f.columns)
    assert set(ranks["model"]) == {"DT", "LogReg", "pooled"}
    wilcoxon = next(f for f in frames if "best_published" in f.columns)
    assert set(wilcoxon["n"]) == {2, 16}
    assert at.get("vega_lite_chart"), "the CD diagram is drawn"
    at.selectbox(key="byo_combo").set_value(("LogReg", "AUC")).run()
    assert not at.exception


def test_new_encoder_page_without_runs_says_how(small_private_db):
    at = open_page("new_encoder")
    assert "No run with a custom encoder yet" in texts(at)


def test_unknown_run_in_link_is_warned(app_db):
    at = open_page("new_encoder", {"run": "local-nope"}, timeout=180)
    assert any("holds no custom encoder" in w.value for w in at.warning)


def test_runs_page_links_a_comparison_run(app_db):
    _, run_id = app_db
    at = open_page("runs", {"run": run_id}, timeout=120)
    # two datasets: their result tables' export keys were the same (StreamlitDuplicateElementKey)
    assert not at.error, [e.value for e in at.error]
    assert any(d.value.shape[0] for d in at.dataframe)


def test_run_page_offers_installed_plugins_only(small_private_db, tmp_path, monkeypatch):
    info = tmp_path / "fancy_plugin-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fancy-plugin\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text("[encbench.encoders]\nFreqRank = tests.byo_encoders:make_frequency_rank\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    at = open_page("run")
    at.radio(key="source").set_value("Bundled dataset").run()
    at.selectbox(key="bundled").set_value("tic-tac-toe").run()
    plugins = next(g for g in at.button_group if g.key == "enc-plugins")
    assert list(plugins.options) == ["FreqRank"] or "FreqRank" in str(plugins.options)
    assert "never imports code from an upload" in texts(at)


def test_run_page_refuses_a_plugin_that_fails_its_check(small_private_db, tmp_path, monkeypatch):
    info = tmp_path / "leaky_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: leaky-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[encbench.encoders]\nLeaky = tests.byo_encoders:LeakyEncoder\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    at = open_page("run")
    at.radio(key="source").set_value("Bundled dataset").run()
    at.selectbox(key="bundled").set_value("tic-tac-toe").run()
    next(g for g in at.button_group if g.key == "enc-plugins").set_value(["Leaky"]).run()
    at.button(key="launch").click().run()
    assert not at.exception
    assert any("custom encoder 'Leaky' failed the check" in e.value and "leaks the target" in e.value
               for e in at.error), [e.value for e in at.error]
