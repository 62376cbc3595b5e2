"""Exports as a visitor downloads them: plain CSVs with a provenance sidecar, paper-ready LaTeX;
and on Consensus, a model changed through the UI changes the ranking, the URL and the download."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from browsertest import (
    browser_page,
    chromium_per_module,  # noqa: F401 - the module's one chromium (an autouse fixture)
    download_button,
    needs_chromium,
    settled,
)
from encbench.store import Reader, queries
from encbench.views import sensitivity

pytestmark = [pytest.mark.browser, needs_chromium]


def _download(page, key: str):
    with page.expect_download() as info:
        download_button(page, key).click()
    download = info.value
    return download.suggested_filename, Path(download.path()).read_bytes()


def _change_model_to_dt(page, tmp_path):
    """On Consensus (LogReg, the default): the model changed to DT through the UI changes the
    ranking and the URL; returns the rankings CSV then downloaded, its provenance sidecar, and the
    page's screenshot path."""
    from playwright.sync_api import expect

    summary = page.locator(".st-key-ranking-summary")
    expect(summary).to_contain_text("Best by R-M: Sum")
    field = page.locator(".st-key-model input")
    field.click()
    field.press("Backspace")                               # remove the LogReg chip
    expect(page.get_by_text("Select at least one value for: Model")).to_be_visible()
    field.click()
    field.fill("DT")
    page.get_by_role("option", name="DT", exact=True).click()
    page.keyboard.press("Escape")
    expect(summary).to_contain_text("Best by R-M: WoE")     # the ranking changed
    expect(page).to_have_url(re.compile(r"[?&]model=DT(&|$)"))  # filter state in the URL
    settled(page)               # the run is over: the Download menu, open since, holds DT's table
    csv = _download(page, "dl-table-rankings-csv")          # in the table's Download menu
    sidecar = _download(page, "dl-table-rankings-provenance")
    page.screenshot(path=str(tmp_path / "consensus.png"), full_page=True)
    return csv, sidecar, tmp_path / "consensus.png"


def test_every_csv_reads_plainly_and_the_latex_is_paper_ready(published_server, published_db, tmp_path):
    """Every table shown on the Overview, Consensus and the explorer downloads as a plain CSV
    with its provenance sidecar, a heatmap's menu holds its matrix, the LaTeX is paper-ready; then
    Consensus with the model changed to DT (test_consensus_model_change_download_and_screenshot
    before) ranks WoE first and its download says so."""
    from playwright.sync_api import expect

    url = published_server
    with browser_page(height=1800, timeout_ms=90_000, downloads=True) as page:
        csvs, latex = {}, {}
        for path, ready in (("/", "Best overall"), ("/consensus", "Best by R-M"),
                            ("/explorer", "encoder x dataset cells")):
            page.goto(url + path)
            expect(page.get_by_text(ready).first).to_be_visible(timeout=120_000)
            rows = page.locator("[class*='st-key-exports-table-']")
            expect(rows.first).to_be_visible()
            # the export rows of what is shown (a closed tab's panel is inert)
            shown = rows.evaluate_all("els => els.filter(e => !e.closest('[inert]')).map(e => e.className)")
            keys = [re.search(r"st-key-exports-table-(\S+)", c).group(1) for c in shown]
            assert keys, path
            for item in keys:
                csvs[(path, item)] = (_download(page, f"dl-table-{item}-csv"),
                                      _download(page, f"dl-table-{item}-provenance"))
            if path != "/":
                item = "rankings" if path == "/consensus" else "scores"
                latex[path] = _download(page, f"dl-table-{item}-latex")[1].decode()
            if path == "/consensus":
                dt_csv, dt_sidecar, screenshot = _change_model_to_dt(page, tmp_path)
        # a heatmap's menu holds the matrix it draws, as a table
        page.goto(url + "/sensitivity?vary=strategy&fix_model=LogReg&fix_tuning=no&fix_metric=AUC"
                        "&strategies=R-M&strategies=Q-M&strategies=Elo")
        expect(page.locator(".st-key-exports-chart-jaccard-heatmap")).to_be_visible(timeout=120_000)
        heatmap = (_download(page, "dl-chart-jaccard-heatmap-csv"),
                   _download(page, "dl-chart-jaccard-heatmap-provenance"))

    assert len(csvs) >= 3
    for (path, item), ((name, data), (sidecar_name, sidecar)) in csvs.items():
        table = pd.read_csv(io.BytesIO(data))                            # no comment= needed
        doc = json.loads(sidecar)
        assert list(table.columns) == doc["table"]["columns"], (path, item)
        assert len(table) == doc["table"]["rows"] and name in doc["table"]["files"]
        assert sidecar_name == name.removesuffix(".csv") + ".provenance.json"
        assert doc["encbench.provenance"]["origins"] == ["published"]

    (name, data), (_, sidecar) = heatmap
    matrix, doc = pd.read_csv(io.BytesIO(data)), json.loads(sidecar)
    assert "_jaccard-matrix_" in name and list(matrix.columns) == doc["table"]["columns"]
    assert matrix.shape == (3, 4) and matrix.iloc[:, 1:].notna().all().all()
    assert doc["encbench.provenance"]["filters"]["strategies"] == ["R-M", "Q-M", "Elo"]
    with Reader(published_db) as reader:
        rows = queries.load_scores(reader, origins=["published"])
    view = sensitivity.sensitivity_view(rows, "strategy", {"model": "LogReg", "tuning": "no", "scoring": "AUC"},
                                        strategies=["R-M", "Q-M", "Elo"])
    pd.testing.assert_frame_equal(matrix, sensitivity.similarity_table(view.jaccard, "jaccard"),
                                  check_dtype=False, check_names=False, rtol=1e-12)

    labels = {path: re.search(r"\\label\{([^}]*)\}", text).group(1) for path, text in latex.items()}
    assert len(set(labels.values())) == len(labels)
    scores = latex["/explorer"]
    assert scores.startswith(r"% Needs \usepackage{booktabs}")
    header = next(line for line in scores.splitlines() if line.startswith("dataset & "))
    assert "run" not in header and "origin" not in header and "sd" not in header   # internal, one-valued, empty
    assert len(header.split(" & ")) <= 10
    assert r"\textbf{" in scores
    assert "|" not in latex["/consensus"].split(r"\begin{tabular}")[1]

    (name, data), (sidecar_name, sidecar) = dt_csv, dt_sidecar
    provenance = json.loads(sidecar)
    assert name.startswith("encbench_consensus_rankings_model=DT_")
    assert sidecar_name == name.removesuffix(".csv") + ".provenance.json"
    assert provenance["encbench.provenance"]["filters"]["model"] == ["DT"]
    assert provenance["encbench.provenance"]["run_ids"][0].startswith("published-")
    assert name in provenance["table"]["files"]
    table = pd.read_csv(io.BytesIO(data))                      # a plain CSV
    assert list(table.columns) == ["encoder", "family", "R-M", "Q-M", "R-Nem (alpha=0.05)"]
    assert len(table) == 32 and table.loc[0, "encoder"] == "WoE" and table.loc[0, "R-M"] == 1
    assert screenshot.stat().st_size > 10_000
