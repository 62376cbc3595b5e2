"""End to end in a real browser: ``streamlit run`` + Debian chromium driven by Playwright.

Every page renders; Consensus tabs; the Overview's counts and tables; local runs opt-in; wide
charts and tables fit. (A model changed on Consensus, the ranking, URL and download it changes:
tests/test_browser_exports.py, which visits Consensus to download its tables anyway.) Skipped only
outside CI when ``/usr/bin/chromium`` is absent; with ``CI=true`` it must run.
"""
from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image

from browsertest import (
    browser_page,
    chromium_per_module,  # noqa: F401 - the module's one chromium (an autouse fixture)
    needs_chromium,
    private_copy,
    settled,
    steady_box,
    streamlit_server,
)

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture()
def server(published_server):
    """The app on a free port, reading the published test database (one server per session)."""
    return published_server


def test_consensus_tabs_draw_the_open_one_and_stay_put_when_the_set_changes(server):
    """The Consensus sections are tabs, only the open one drawn, its label in the
    URL. Its selects rerun it alone (a fragment); adding R-Kem adds tabs after it and leaves it
    open; removing R-Kem while its tab is open goes back to Rankings."""
    from playwright.sync_api import expect

    def selected():
        return page.locator("[role='tab'][aria-selected='true']")

    with browser_page(height=1600, timeout_ms=90_000) as page:
        page.goto(f"{server}/consensus?section=Rank+intervals")
        expect(selected()).to_have_text("Rank intervals", timeout=90_000)
        expect(page.get_by_text("R-M consensus rank with its 95% bootstrap interval")).to_be_visible()
        expect(page.locator(".st-key-exports-table-rankings")).to_have_count(0)   # Rankings is closed

        field = page.locator(".st-key-istrategy input")
        field.click()
        field.fill("Q-M")
        page.get_by_role("option", name="Q-M", exact=True).click()
        expect(page.get_by_text("Q-M consensus rank with its 95% bootstrap interval")).to_be_visible()
        expect(page).to_have_url(re.compile(r"[?&]istrategy=Q-M(&|$)"))

        page.get_by_role("tab", name="Pairwise tests").click()
        expect(page.locator(".st-key-wilcoxon")).to_be_visible()
        expect(page.locator(".st-key-istrategy")).to_have_count(0)
        expect(page).to_have_url(re.compile(r"[?&]section=Pairwise\+tests(&|$)"))

        field = page.locator(".st-key-strategy input")
        field.click()
        field.fill("R-Kem")
        page.get_by_role("option", name="R-Kem", exact=True).click()
        page.keyboard.press("Escape")
        expect(page.get_by_role("tab", name="Kemeny-Young")).to_be_visible()
        expect(selected()).to_have_text("Pairwise tests")
        expect(page.locator(".st-key-wilcoxon")).to_be_visible()

        page.get_by_role("tab", name="Kemeny-Young").click()
        expect(page.get_by_text(re.compile("solved with HiGHS in"))).to_be_visible()
        page.locator(".st-key-strategy").get_by_role("button", name="Remove R-Kem").click()
        expect(page.get_by_role("tab", name="Kemeny-Young")).to_have_count(0)
        expect(selected()).to_have_text("Rankings")
        expect(page.locator(".st-key-exports-table-rankings")).to_be_visible()
        expect(page).not_to_have_url(re.compile(r"[?&]section="))
        assert page.locator("[data-testid='stException']").count() == 0
        assert not page.locator("[data-testid='stAlertContentError']").all_inner_texts()


PAGES = [("explorer", "Results explorer"), ("consensus", "Consensus"), ("sensitivity", "Sensitivity"),
         ("replicability", "Replicability"), ("run", "Run on your data"), ("runs", "Runs")]


def test_every_page_renders_in_the_browser_without_an_exception(server):
    """Each page but the Overview (test_overview_counts_tables_and_no_exception) draws its title
    and finishes its run with no exception and no error: the first opened by its link, the
    others by their menu entries (a page switch in the loaded app, as a visitor moves)."""
    from playwright.sync_api import expect

    from pages.ui.navigation import PAGES as MENU

    menu = {path: title for _, title, _, path in MENU}
    with browser_page(height=1600, timeout_ms=90_000) as page:
        page.goto(f"{server}/{PAGES[0][0]}")
        for i, (path, title) in enumerate(PAGES):
            if i:
                page.locator("[data-testid='stSidebarNavLink']").filter(
                    has=page.get_by_text(menu[path], exact=True)).click()
            expect(page).to_have_url(re.compile(rf"/{path}(\?|$)"))
            # the first page of a fresh server imports the libraries: no speed check here
            expect(page.locator("h1").first).to_contain_text(title, timeout=60_000)
            settled(page)                      # the script run is over: look at what it drew
            expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0)
            assert page.locator("[data-testid='stException']").count() == 0, path
            errors = page.locator("[data-testid='stAlertContentError']").all_inner_texts()
            assert not errors, (path, errors)


def test_overview_counts_tables_and_no_exception(server):
    """The first page a user sees says what is loaded (the published benchmark's counts), renders
    with no exception or error, and its tables fit: columns of the Overview tables were off-screen
    (the grids scrolled sideways), on the headline + per-metric tab and on the Runs tab."""
    from playwright.sync_api import expect

    with browser_page(height=2400, timeout_ms=60_000) as page:
        for url in (server, f"{server}/?section=Runs"):        # headline + per metric, then the runs
            page.goto(url)
            frames = page.locator("[data-testid='stDataFrame']")
            expect(frames).to_have_count(2, timeout=60_000)
            settled(page)
            for i in range(2):
                widths = frames.nth(i).evaluate(
                    "el => { const s = el.querySelector('.dvn-scroller'); return [s.scrollWidth, s.clientWidth]; }")
                assert widths[0] <= widths[1] + 1, (url, i, widths)
            if url == server:
                shown = _metrics(page)
                assert page.locator("[data-testid='stException']").count() == 0
                errors = page.locator("[data-testid='stAlertContentError']").all_inner_texts()
                assert not errors, errors
        expect(page.get_by_role("tab", name="Runs")).to_have_attribute("aria-selected", "true")
    assert shown["Results"] == "61,812", shown
    assert shown["Datasets"] == "50" and shown["Encoders"] == "32" and shown["Models"] == "5", shown


def _metrics(page) -> dict[str, str]:
    """The page's metrics, label to value, read once its run is over (read when the first one
    showed, the others could still be missing: KeyError 'Datasets')."""
    from playwright.sync_api import expect

    metrics = page.locator("[data-testid='stMetric']")
    expect(metrics.first).to_be_visible()
    settled(page)
    shown = {}
    for text in metrics.all_inner_texts():  # "label\nvalue"
        label, _, value = text.strip().partition("\n")
        shown[label.strip()] = value.strip()
    return shown


@pytest.fixture(scope="module")
def local_server(published_db, tmp_path_factory):
    """The app on a private copy of the published database that holds a local run on a copy of
    a published dataset (2 score rows) and a cancelled local run without results; yields
    (url, folder)."""
    from encbench.data import BUNDLED_DIR, read_table
    from encbench.engine.grid import Grid
    from encbench.engine.runner import run_grid
    from encbench.store import Writer

    folder = tmp_path_factory.mktemp("local_server")
    db = private_copy(published_db, folder)
    # A copy of published dataset 1463 (blogger) as a user would have it: a CSV with the columns
    # in another order and '?' for missing cells (there are none: the marker must not matter).
    frame = read_table(BUNDLED_DIR / "1463_blogger.arff")
    copy = folder / "my blogger copy.csv"
    frame[list(reversed(frame.columns))].to_csv(copy, index=False, na_rep="?")
    grid = Grid(datasets=[f"{copy}:pb"], encoders=["OH", "MT"], models=["LogReg"], scorings=["AUC"])
    run_grid(grid, db_path=db, workers=0)
    with Writer(db) as writer:
        writer.ensure_run("local-cancelled-0123456789ab", origin="local", label="my blogger copy.csv",
                          config={"datasets": ["x.csv:pb"]}, n_expected=1_000, status="cancelled")
        writer.set_run_status("local-cancelled-0123456789ab", "cancelled")
    with streamlit_server(db, folder, ENCBENCH_WORKER_IDLE_EXIT="0") as url:
        yield url, folder


def test_a_local_run_on_a_copy_of_a_published_dataset_leaves_the_default_overview_published(local_server):
    """A copy of a published dataset is that dataset, and local results are opt-in (a cancelled
    run without results adds nothing)."""
    from playwright.sync_api import expect

    url, folder = local_server
    with browser_page(height=1800, timeout_ms=60_000) as page:
        page.goto(url)
        shown = _metrics(page)
        assert shown["Datasets"] == "50" and shown["Results"] == "61,812", shown
        local_rows = re.compile(r"Published benchmark only\. 2 local score rows \(1 dataset")
        expect(page.get_by_text(local_rows)).to_be_visible()

        page.locator(".st-key-origin").get_by_text("both", exact=True).click()
        banner = page.locator(".st-key-origin-banner")
        expect(banner).to_contain_text("2 local score rows on 1 dataset(s) from 1 run(s)")
        expect(banner).to_contain_text("1 of these datasets are published ones")
        expect(banner).to_contain_text("the published score counts")
        expect(page).to_have_url(re.compile(r"[?&]origin=both(&|$)"))
        shown = _metrics(page)
        # stored under the published key: still 50 datasets, and no experiment counted twice
        assert shown["Datasets"] == "50" and shown["Results"] == "61,812", shown

        page.goto(f"{url}/explorer?model=LogReg&tuning=no&metric=AUC")
        expect(page.get_by_role("heading", name="Published vs local")).to_be_visible()
        expect(page.get_by_text(re.compile(r"^2 experiments of this selection have both"))).to_be_visible()
        page.screenshot(path=str(folder / "published-vs-local.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0


def test_sensitivity_heatmaps_with_all_strategies_stay_on_the_page(server):
    """With all 11 strategies the two heatmaps overflowed their columns (legend hidden)."""
    from playwright.sync_api import expect

    from encbench import stats

    query = "&".join(["vary=strategy", "fix_model=LogReg", "fix_tuning=no", "fix_metric=AUC"]
                     + [f"strategies={s}" for s in stats.STRATEGIES])
    with browser_page(height=2400, timeout_ms=120_000) as page:
        page.goto(f"{server}/sensitivity?{query}")
        charts = page.locator("[data-testid='stVegaLiteChart']")
        expect(charts).to_have_count(2, timeout=120_000)
        settled(page, timeout_ms=120_000)
        for i in range(2):                      # each chart drawn (legend included) at its final size
            steady_box(charts.nth(i).locator("svg, canvas").first)
        width = page.viewport_size["width"]
        main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
        for i in range(2):
            chart = charts.nth(i)
            drawn = chart.locator("svg, canvas").first.bounding_box()   # legend included
            column = chart.locator("xpath=ancestor::div[@data-testid='stColumn']")
            room = column.first.bounding_box() if column.count() else main
            right = min(width, room["x"] + room["width"], main["x"] + main["width"])
            assert drawn["x"] + drawn["width"] <= right + 1, (i, drawn, room)
            assert drawn["x"] >= room["x"] - 1, (i, drawn, room)
        page.screenshot(path="/tmp/sensitivity-11.png", full_page=True)


def test_runs_table_fits_and_shows_whole_statuses(local_server):
    """The Runs table scrolled sideways (1,205 px in a 938 px column) and its status
    column was too narrow for "cancelled" (drawn as "cancellec")."""
    from playwright.sync_api import expect

    url, _ = local_server
    with browser_page(height=1600, timeout_ms=60_000) as page:
        page.goto(f"{url}/runs")
        frame = page.locator("[data-testid='stDataFrame']").first
        expect(frame).to_be_visible(timeout=60_000)
        settled(page)
        widths = frame.evaluate(
            "el => { const s = el.querySelector('.dvn-scroller'); return [s.scrollWidth, s.clientWidth]; }")
        assert widths[0] <= widths[1] + 1, widths
        # glide draws the grid on a canvas: find the column borders in a screenshot of the header
        # (the light vertical lines) and measure the status text with the page's font
        shot = np.asarray(Image.open(io.BytesIO(frame.screenshot())).convert("L")).astype(int)
        line = shot[5]
        borders = [x for x in range(1, len(line) - 1) if line[x] < line[x - 1] - 3 and line[x] < line[x + 1] - 3]
        status_width = borders[1] - borders[0]                # label | status | progress ...
        text = page.evaluate("""() => {
            const ctx = document.createElement('canvas').getContext('2d');
            ctx.font = '14px "Source Sans", sans-serif';
            return Math.max(...['cancelled', 'interrupted'].map(t => ctx.measureText(t).width));
        }""")
        assert status_width >= text + 16, (borders, text)     # text plus the cell's padding
