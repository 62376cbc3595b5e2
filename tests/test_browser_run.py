"""End to end in a real browser: from a CSV on disk to a ranking of encoders on it.

Uploads a CSV made from a bundled dataset, keeps the default target, picks 3 encoders, launches
(1 model, no tuning), waits for the background worker to finish the run, reads the result and
downloads it. Runs against a private copy of the database (the worker writes to it).
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest

from browsertest import browser_page, download_button, needs_chromium, streamlit_server
from encbench.data import BUNDLED_DIR, read_table
from encbench.engine.queue import RunQueue
pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture()
def server(private_db, tmp_path):
    """The app on a free port with a private copy of the database (the worker writes to it)."""
    with streamlit_server(private_db, tmp_path, ENCBENCH_WORKER_IDLE_EXIT="2") as url:
        yield url, private_db


def test_upload_run_and_download_result(server, tmp_path):
    from playwright.sync_api import expect

    url, db = server
    csv = tmp_path / "tictactoe.csv"
    read_table(BUNDLED_DIR / "50_tic-tac-toe.arff").to_csv(csv, index=False)

    with browser_page(height=2400, timeout_ms=60_000, downloads=True) as page:
        page.goto(f"{url}/run")
        page.locator("input[type=file]").set_input_files(str(csv))
        expect(page.get_by_text("958 rows x 10 columns")).to_be_visible()
        # a CSV copy of published dataset 50 is recognised: its results go under that dataset
        expect(page.locator(".st-key-published-copy")).to_contain_text(
            "This file is the published dataset OpenML 50 (tic-tac-toe)")
        launch = page.get_by_role("button", name="Launch run")
        expect(launch).to_be_visible()

        page.locator(".st-key-enc-none button").click()
        expect(page.get_by_text("Choose at least one of: encoders")).to_be_visible()
        for family, encoder, count in (("identifier", "OH", 4), ("simple target", "MT", 8),
                                       ("data-constraining", "CB", 12)):
            group = page.locator(f".st-key-enc-{family.replace(' ', '-')}")
            group.get_by_role("button", name=encoder, exact=True).click()
            # each click reruns the page: wait for its own count before the next click
            expect(page.get_by_text(re.compile(rf"^{count} experiments"))).to_be_visible()
        models = page.locator(".st-key-models")
        expect(models).to_contain_text("LogReg")
        expect(page.get_by_text("12 experiments (3 encoders x 1 model x 4 metrics")).to_be_visible()

        launch.click()
        expect(page.get_by_text(re.compile("Queued run local-"))).to_be_visible()
        # the worker runs in the background; the page follows it until every row is in
        expect(page.get_by_text("done: 60 / 60 result rows")).to_be_visible(timeout=240_000)
        expect(page.get_by_text(re.compile("On your data the best encoder")).first).to_be_visible()

        button = download_button(page, "dl-table-result-LogReg-AUC-csv")
        with page.expect_download() as info:
            button.click()
        download = info.value
        data = Path(download.path()).read_bytes()
        page.screenshot(path=str(tmp_path / "run.png"), full_page=True)

    assert download.suggested_filename.startswith("encbench_run-result_")
    assert "model=LogReg" in download.suggested_filename
    table = pd.read_csv(io.BytesIO(data))                       # a plain CSV, its provenance beside it
    assert list(table.columns) == ["encoder", "cv_score", "rank on your data", "published R-M rank"]
    assert set(table["encoder"]) == {"OH", "MT", "CB"}
    assert table["cv_score"].between(0.5, 1.0).all()
    assert table["rank on your data"].min() == 1
    # the upload was kept once, by content hash, beside the database
    stored = list((db.parent / "uploads").iterdir())
    assert len(stored) == 1 and stored[0].read_bytes() == csv.read_bytes()
    assert not RunQueue(db).pending()
