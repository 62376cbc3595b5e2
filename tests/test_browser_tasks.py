"""End to end in a real browser: a regression CSV uploaded on the Run page, run, and ranked
within its task (lower RMSE first), with no published reference claimed."""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from browsertest import browser_page, download_button, needs_chromium, streamlit_server

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture()
def server(private_db, tmp_path):
    """The app on a free port with a private copy of the database (the worker writes to it)."""
    with streamlit_server(private_db, tmp_path, ENCBENCH_WORKER_IDLE_EXIT="2") as url:
        yield url, private_db


def _prices(path: Path) -> Path:
    """200 rows whose price is mostly a level's effect: MT must beat dropping the column."""
    rng = np.random.default_rng(8)
    town = rng.choice([f"t{i:02d}" for i in range(12)], 200)
    effect = pd.Series(town).str[1:].astype(int).to_numpy()
    pd.DataFrame({"town": town, "rooms": rng.integers(1, 6, 200),
                  "price": np.round(100 + 10 * effect + rng.normal(0, 2, 200), 2)}).sort_values(
        "price").to_csv(path, index=False)
    return path


def test_a_regression_upload_runs_and_ranks_within_its_task(server, tmp_path):
    from playwright.sync_api import expect

    url, _ = server
    csv = _prices(tmp_path / "prices.csv")
    with browser_page(height=2400, timeout_ms=60_000, downloads=True) as page:
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
        button = download_button(page, "dl-chart-result-csv")
        with page.expect_download() as info:
            button.click()
        download = info.value
        data = Path(download.path()).read_bytes()
    table = pd.read_csv(io.BytesIO(data))
    assert "reference_R-M_rank" not in table.columns
    ranked = table[table["scoring"] == "RMSE"].sort_values("rank_in_setting")
    assert ranked["encoder"].tolist() == ["MT", "Drop"]                  # lower RMSE ranks first
    assert ranked["score_mean"].iloc[0] < ranked["score_mean"].iloc[1]
    assert "regression" in download.suggested_filename
