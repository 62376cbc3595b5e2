"""End to end in a real browser: from a CSV on disk to a ranking of encoders on it.

One server for the module, on a private copy of the small database's published results
(tests/small_db.py: tic-tac-toe among them, with the 32 encoders; the worker writes to it), with an
encoder plugin installed: the test suite's frequency-rank encoder declared by a dist-info
directory on the server's PYTHONPATH (what ``pip install`` of a package with an
``encbench.encoders`` entry point leaves behind); the app imports nothing from the upload.

- A CSV made from a bundled dataset, its published target kept: 3 encoders (the controls OH and
  MT, the plugin) are launched (1 model, no tuning), the page follows the background worker to the
  end, the result is read and downloaded, and "New encoder" ranks the plugin among the published 32.
- A regression CSV: run and ranked within its task (lower RMSE first), no published reference claimed.
"""
from __future__ import annotations

import io
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from browsertest import (
    REPO,
    browser_page,
    chromium_per_module,  # noqa: F401 - the module's one chromium (an autouse fixture)
    download_button,
    needs_chromium,
    private_copy,
    streamlit_server,
)
from encbench.data import BUNDLED_DIR, read_table
from encbench.engine.queue import RunQueue

pytestmark = [pytest.mark.browser, needs_chromium]
#: ms an expectation waits (Playwright's default 5 s failed on a loaded 2-core machine)
WAIT = 60_000


@pytest.fixture(scope="module")
def server(small_published_db, tmp_path_factory):
    """The app on a free port with a private copy of the small published database and the plugin
    installed; yields (url, database path)."""
    folder = tmp_path_factory.mktemp("run_server")
    db = private_copy(small_published_db, folder)
    plugin_root = folder / "site"
    info = plugin_root / "freq_plugin-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: freq-plugin\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(
        "[encbench.encoders]\nFreqRank = tests.byo_encoders:make_frequency_rank\n")
    path = os.pathsep.join(filter(None, [str(plugin_root), str(REPO), os.environ.get("PYTHONPATH")]))
    with streamlit_server(db, folder, ENCBENCH_WORKER_IDLE_EXIT="2", PYTHONPATH=path) as url:
        yield url, db


def test_upload_run_download_then_rank_the_plugin_among_the_32(server, tmp_path):
    """A CSV copy of published dataset 50 is recognised as it, runs with the plugin beside the
    controls OH and MT, its whole result downloads as a plain CSV, and New encoder places the
    plugin among the 32 (controls reproduce the published cells; provenance names the plugin)."""
    from playwright.sync_api import expect

    url, db = server
    csv = tmp_path / "tictactoe.csv"
    read_table(BUNDLED_DIR / "50_tic-tac-toe.arff").to_csv(csv, index=False)
    with browser_page(height=2400, timeout_ms=WAIT, downloads=True) as page:
        page.goto(f"{url}/run")
        page.locator("input[type=file]").set_input_files(str(csv))
        expect(page.get_by_text("958 rows x 10 columns")).to_be_visible()
        # a CSV copy of published dataset 50 is recognised: its results go under that dataset
        expect(page.locator(".st-key-published-copy")).to_contain_text(
            "This file is the published dataset OpenML 50 (tic-tac-toe)")
        expect(page.get_by_text(re.compile("The app never imports code from an upload"))).to_be_visible()
        launch = page.get_by_role("button", name="Launch run")
        expect(launch).to_be_visible()

        page.locator(".st-key-enc-none button").click()
        expect(page.get_by_text("Choose at least one of: encoders")).to_be_visible()
        for family, encoder, count in (("identifier", "OH", 4), ("simple target", "MT", 8),
                                       ("plugins", "FreqRank", 12)):
            group = page.locator(f".st-key-enc-{family.replace(' ', '-')}")
            group.get_by_role("button", name=encoder, exact=True).click()
            # each click reruns the page: wait for its own count before the next click
            expect(page.get_by_text(re.compile(rf"^{count} experiments"))).to_be_visible()
        expect(page.locator(".st-key-models")).to_contain_text("LogReg")
        expect(page.get_by_text("12 experiments (3 encoders x 1 model x 4 metrics")).to_be_visible()

        launch.click()
        expect(page.get_by_text(re.compile("Queued run local-"))).to_be_visible()
        # the worker runs in the background; the page follows it until every row is in
        expect(page.get_by_text("done: 60 / 60 result rows")).to_be_visible(timeout=240_000)
        # one answer for the run, then one Download menu for the whole result (chart and table)
        expect(page.locator("[class*=st-key-answer-]").first).to_contain_text("Which encoder for this data?")
        with page.expect_download() as info:
            download_button(page, "dl-chart-result-csv").click()
        result_name = info.value.suggested_filename
        result = Path(info.value.path()).read_bytes()
        page.screenshot(path=str(tmp_path / "run.png"), full_page=True)

        page.goto(f"{url}/new_encoder")
        expect(page.get_by_text(re.compile(r"Controls: 8 of 8 cells \(100\.0%\) within 0\.005"))).to_be_visible(
            timeout=120_000)
        expect(page.get_by_text(re.compile(r"FreqRank pooled over 1 model\(s\) x 4 metric\(s\) \(4 voters\), "
                                           r"rank among 33 encoders"))).to_be_visible()
        expect(page.get_by_text(re.compile("freq-plugin 0.3"))).to_be_visible()
        expect(page.locator(".vega-embed").first).to_be_visible()
        with page.expect_download() as info:
            download_button(page, "dl-table-ranks-csv").click()
        ranks = Path(info.value.path()).read_text()
        # the plain CSV's provenance (the plugin, its version) is the sidecar download beside it
        with page.expect_download() as info:
            download_button(page, "dl-table-ranks-provenance").click()
        provenance = Path(info.value.path()).read_text()
        page.screenshot(path=str(tmp_path / "new_encoder.png"), full_page=True)
        assert not page.locator(".stException").count()

    assert result_name.startswith("encbench_run-result_result_dataset=tic-tac-toe_run=local-")
    assert "model=LogReg" in result_name
    table = pd.read_csv(io.BytesIO(result))                    # a plain CSV, its provenance beside it
    # the whole result: every metric and encoder, its fold spread, its ranks in the setting, in the
    # reference consensus (the advice's: the published encoders only) and over the run
    assert len(table) == 12 and set(table["encoder"]) == {"OH", "MT", "FreqRank"}
    assert set(table["scoring"]) == {"BAcc", "F1", "Acc", "AUC"} and (table["n_folds"] == 5).all()
    assert table["score_mean"].between(0.0, 1.0).all() and table["score_fold_sd"].notna().all()
    assert (table.groupby("scoring")["rank_in_setting"].min() == 1).all()
    reference = table.set_index("encoder")["reference_R-M_rank"]
    assert reference.drop("FreqRank").notna().all() and reference["FreqRank"].isna().all()
    assert table["pooled_rank"].min() == 1
    # the upload was kept once, by content hash, beside the database
    stored = [f for f in (db.parent / "uploads").iterdir() if f.read_bytes() == csv.read_bytes()]
    assert len(stored) == 1
    assert not RunQueue(db).pending()

    assert "tests.byo_encoders:make_frequency_rank" in provenance and "freq-plugin 0.3" in provenance
    assert "FreqRank" in ranks and "R-Kem" in ranks.splitlines()[0]


def _prices(path: Path) -> Path:
    """200 rows whose price is mostly a level's effect: MT must beat dropping the column. The noise
    keeps the town from predicting the price almost perfectly (the validation would propose
    leaving it out as a likely leak: its above-median AUC is 0.993 with a noise of 2)."""
    rng = np.random.default_rng(8)
    town = rng.choice([f"t{i:02d}" for i in range(12)], 200)
    effect = pd.Series(town).str[1:].astype(int).to_numpy()
    pd.DataFrame({"town": town, "rooms": rng.integers(1, 6, 200),
                  "price": np.round(100 + 10 * effect + rng.normal(0, 6, 200), 2)}).sort_values(
        "price").to_csv(path, index=False)
    return path


def test_a_regression_upload_runs_and_ranks_within_its_task(server, tmp_path):
    """A regression CSV uploaded on the Run page, run, and ranked within its task (lower RMSE
    first), with no published reference claimed."""
    from playwright.sync_api import expect

    url, _ = server
    csv = _prices(tmp_path / "prices.csv")
    with browser_page(height=2400, timeout_ms=WAIT, downloads=True) as page:
        page.goto(f"{url}/run")
        page.locator("input[type=file]").set_input_files(str(csv))
        expect(page.get_by_text("200 rows x 3 columns")).to_be_visible()
        # the target is chosen (none is guessed): numeric with many values, so regression
        page.locator(".st-key-target input").click()
        page.get_by_role("option", name="price", exact=True).click()
        expect(page.locator(".st-key-task-choice")).to_contain_text("regression")
        expect(page.get_by_text(re.compile("No published reference exists for regression")).first).to_be_visible()
        page.locator(".st-key-enc-none button").click()
        # each click reruns the page: wait for its own count, not one already on the page
        expect(page.get_by_text("Choose at least one of: encoders")).to_be_visible()
        for family, encoder, count in (("simple target", "MT", 3), ("baseline", "Drop", 6)):
            group = page.locator(f".st-key-enc-{family.replace(' ', '-')}")
            group.get_by_role("button", name=encoder, exact=True).click()
            expect(page.get_by_text(re.compile(rf"^{count} experiments"))).to_be_visible()
        expect(page.get_by_text(re.compile(r"^6 experiments \(2 encoders x 1 model x 3 metrics"))).to_be_visible()
        page.get_by_role("button", name="Launch run").click()
        expect(page.get_by_text(re.compile("Queued run local-"))).to_be_visible()
        expect(page.get_by_text("done: 30 / 30 result rows")).to_be_visible(timeout=240_000)
        answer = page.locator("[class*=st-key-answer-]").first
        expect(answer).to_contain_text("Use MT")
        with page.expect_download() as info:
            download_button(page, "dl-chart-result-csv").click()
        download = info.value
        data = Path(download.path()).read_bytes()
    table = pd.read_csv(io.BytesIO(data))
    assert "reference_R-M_rank" not in table.columns
    ranked = table[table["scoring"] == "RMSE"].sort_values("rank_in_setting")
    assert ranked["encoder"].tolist() == ["MT", "Drop"]                  # lower RMSE ranks first
    assert ranked["score_mean"].iloc[0] < ranked["score_mean"].iloc[1]
    assert "regression" in download.suggested_filename
