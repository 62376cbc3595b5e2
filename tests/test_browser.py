"""End to end in a real browser: ``streamlit run`` + Debian chromium driven by Playwright.

Opens the Consensus page, changes the model through the UI, waits for the ranking to change,
downloads the rankings CSV and checks its content, and saves a screenshot under the test's tmp
dir. Skipped only outside CI when ``/usr/bin/chromium`` is absent; with ``CI=true`` it must run.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest

from browsertest import browser_page, needs_chromium, streamlit_server

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture()
def server(published_db, tmp_path):
    """The app on a free port, reading the published test database."""
    with streamlit_server(published_db, tmp_path, ENCBENCH_WORKER_IDLE_EXIT="0") as url:
        yield url


def test_consensus_model_change_download_and_screenshot(server, tmp_path):
    from playwright.sync_api import expect

    with browser_page(height=2200, timeout_ms=60_000, downloads=True) as page:
        page.goto(f"{server}/consensus")
        summary = page.locator(".st-key-ranking-summary")
        # The page renders client-side: wait for the computed ranking, not for "load".
        expect(summary).to_contain_text("Best by R-M: Sum", timeout=90_000)

        model = page.locator(".st-key-model")
        field = model.locator("input")
        field.click()
        field.press("Backspace")                               # remove the LogReg chip
        expect(page.get_by_text("Select at least one value for: Model")).to_be_visible()
        field.click()
        field.fill("DT")
        page.get_by_role("option", name="DT", exact=True).click()
        page.keyboard.press("Escape")
        expect(summary).to_contain_text("Best by R-M: WoE")     # the ranking changed
        expect(page).to_have_url(re.compile(r"[?&]model=DT(&|$)"))  # filter state in the URL

        button = page.locator(".st-key-dl-table-rankings-csv button")
        with page.expect_download() as info:
            button.click()
        download = info.value
        assert download.suggested_filename.startswith("encbench_consensus_rankings_model=DT_")
        data = Path(download.path()).read_bytes()
        page.screenshot(path=str(tmp_path / "consensus.png"), full_page=True)

    text = data.decode("utf-8")
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any(line == '# filter model: ["DT"]' for line in header)
    assert any(line.startswith("# run_ids: published-") for line in header)
    table = pd.read_csv(io.BytesIO(data), comment="#")
    assert list(table.columns) == ["encoder", "family", "R-M", "Q-M", "R-Nem (alpha=0.05)"]
    assert len(table) == 32 and table.loc[0, "encoder"] == "WoE" and table.loc[0, "R-M"] == 1
    assert (tmp_path / "consensus.png").stat().st_size > 10_000


def test_overview_shows_the_loaded_counts(server):
    """The first page a user sees says what is loaded: the published benchmark's counts."""
    from playwright.sync_api import expect

    with browser_page(height=1600, timeout_ms=60_000) as page:
        page.goto(server)
        metrics = page.locator("[data-testid='stMetric']")
        expect(metrics.first).to_be_visible()
        shown = {}
        for text in metrics.all_inner_texts():  # "label\nvalue"
            label, _, value = text.strip().partition("\n")
            shown[label.strip()] = value.strip()
    assert shown["Results"] == "61,812", shown
    assert shown["Datasets"] == "50" and shown["Encoders"] == "32" and shown["Models"] == "5", shown


PAGES = [("", "encbench"), ("explorer", "Results explorer"), ("consensus", "Consensus"),
         ("sensitivity", "Sensitivity"), ("replicability", "Replicability"),
         ("run", "Run on your data"), ("runs", "Runs")]


def test_every_page_renders_in_the_browser_without_an_exception(server):
    from playwright.sync_api import expect

    with browser_page(height=1600, timeout_ms=90_000) as page:
        for path, title in PAGES:
            page.goto(f"{server}/{path}")
            expect(page.locator("h1").first).to_contain_text(title)
            # let the script run finish (the status widget shows while it runs), then look
            page.wait_for_timeout(1000)
            expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0)
            assert page.locator("[data-testid='stException']").count() == 0, path
            errors = page.locator("[data-testid='stAlertContentError']").all_inner_texts()
            assert not errors, (path, errors)
