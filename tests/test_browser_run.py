"""End to end in a real browser: from a CSV on disk to a ranking of encoders on it.

Uploads a CSV made from a bundled dataset, keeps its published target, picks 3 encoders, launches
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
        # one answer for the run, then one Download menu for the whole result (chart and table)
        expect(page.locator("[class*=st-key-answer-]").first).to_contain_text("Which encoder for this data?")
        button = download_button(page, "dl-chart-result-csv")
        with page.expect_download() as info:
            button.click()
        download = info.value
        data = Path(download.path()).read_bytes()
        page.screenshot(path=str(tmp_path / "run.png"), full_page=True)

    assert download.suggested_filename.startswith("encbench_run-result_result_dataset=tic-tac-toe_run=local-")
    assert "model=LogReg" in download.suggested_filename
    table = pd.read_csv(io.BytesIO(data))                       # a plain CSV, its provenance beside it
    # the whole result: every metric and encoder, its fold spread, its ranks in the setting, in the
    # reference consensus (the advice's) and over the run
    assert len(table) == 12 and set(table["encoder"]) == {"OH", "MT", "CB"}
    assert set(table["scoring"]) == {"BAcc", "F1", "Acc", "AUC"} and (table["n_folds"] == 5).all()
    assert table["score_mean"].between(0.0, 1.0).all() and table["score_fold_sd"].notna().all()
    assert (table.groupby("scoring")["rank_in_setting"].min() == 1).all()
    assert table["reference_R-M_rank"].notna().all() and table["pooled_rank"].min() == 1
    # the upload was kept once, by content hash, beside the database
    stored = list((db.parent / "uploads").iterdir())
    assert len(stored) == 1 and stored[0].read_bytes() == csv.read_bytes()
    assert not RunQueue(db).pending()
