"""End to end in a real browser: an installed encoder plugin is offered on "Run on your
data", runs beside the controls OH and MT, and "New encoder" ranks it among the published 32.

The plugin is the test suite's frequency-rank encoder declared by a dist-info directory on the
server's PYTHONPATH (what ``pip install`` of a package with an ``encbench.encoders`` entry point
leaves behind); the app imports nothing from the upload.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from browsertest import REPO, browser_page, download_button, needs_chromium, streamlit_server
from encbench.data import BUNDLED_DIR, read_table

pytestmark = [pytest.mark.browser, needs_chromium]
#: ms an expectation waits (Playwright's default 5 s failed on a loaded 2-core machine)
WAIT = 60_000


@pytest.fixture()
def server(private_db, tmp_path):
    plugin_root = tmp_path / "site"
    info = plugin_root / "freq_plugin-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: freq-plugin\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(
        "[encbench.encoders]\nFreqRank = tests.byo_encoders:make_frequency_rank\n")
    path = os.pathsep.join(filter(None, [str(plugin_root), str(REPO), os.environ.get("PYTHONPATH")]))
    with streamlit_server(private_db, tmp_path, ENCBENCH_WORKER_IDLE_EXIT="2", PYTHONPATH=path) as url:
        yield url


def test_plugin_run_then_rank_among_the_32(server, tmp_path):
    from playwright.sync_api import expect

    csv = tmp_path / "tictactoe.csv"
    read_table(BUNDLED_DIR / "50_tic-tac-toe.arff").to_csv(csv, index=False)
    with browser_page(height=2400, timeout_ms=60_000, downloads=True) as page:
        page.goto(f"{server}/run")
        page.locator("input[type=file]").set_input_files(str(csv))
        expect(page.get_by_text("958 rows x 10 columns")).to_be_visible(timeout=WAIT)
        expect(page.get_by_text(re.compile("The app never imports code from an upload"))).to_be_visible(timeout=WAIT)
        page.locator(".st-key-enc-none button").click()
        expect(page.get_by_text("Choose at least one of: encoders")).to_be_visible(timeout=WAIT)
        for family, encoder, count in (("identifier", "OH", 4), ("simple target", "MT", 8)):
            page.locator(f".st-key-enc-{family.replace(' ', '-')}").get_by_role(
                "button", name=encoder, exact=True).click()
            # each click reruns the page: wait for its own count before the next click
            expect(page.get_by_text(re.compile(rf"^{count} experiments"))).to_be_visible(timeout=WAIT)
        page.locator(".st-key-enc-plugins").get_by_role("button", name="FreqRank", exact=True).click()
        expect(page.get_by_text("12 experiments (3 encoders x 1 model x 4 metrics")).to_be_visible(timeout=WAIT)
        page.get_by_role("button", name="Launch run").click()
        expect(page.get_by_text(re.compile("Queued run local-"))).to_be_visible(timeout=WAIT)
        expect(page.get_by_text("done: 60 / 60 result rows")).to_be_visible(timeout=240_000)

        page.goto(f"{server}/new_encoder")
        expect(page.get_by_text(re.compile(r"Controls: 8 of 8 cells \(100\.0%\) within 0\.005"))).to_be_visible(
            timeout=120_000)
        expect(page.get_by_text(re.compile(r"FreqRank pooled over 1 model\(s\) x 4 metric\(s\) \(4 voters\), "
                                           r"rank among 33 encoders"))).to_be_visible(timeout=WAIT)
        expect(page.get_by_text(re.compile("freq-plugin 0.3"))).to_be_visible(timeout=WAIT)
        expect(page.locator(".vega-embed").first).to_be_visible(timeout=WAIT)
        with page.expect_download() as info:
            download_button(page, "dl-table-ranks-csv").click()
        data = Path(info.value.path()).read_text()
        # the plain CSV's provenance (the plugin, its version) is the sidecar download beside it
        with page.expect_download() as info:
            download_button(page, "dl-table-ranks-provenance").click()
        provenance = Path(info.value.path()).read_text()
        page.screenshot(path=str(tmp_path / "new_encoder.png"), full_page=True)
        assert not page.locator(".stException").count()
    assert "tests.byo_encoders:make_frequency_rank" in provenance and "freq-plugin 0.3" in provenance
    assert "FreqRank" in data and "R-Kem" in data.splitlines()[0]
