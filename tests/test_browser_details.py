"""Small things only a browser shows: typing a name into a picker, wrapped labels, table heights."""
from __future__ import annotations

import re

import pytest

from browsertest import (
    browser_page,
    chromium_per_module,  # noqa: F401 - the module's one chromium (an autouse fixture)
    needs_chromium,
)

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture()
def server(published_server):
    return published_server


def test_typing_an_encoder_name_and_enter_adds_that_encoder_only(server):
    """"MT" + Enter in "Encoders to compare" adds the encoder MT only, not every encoder whose
    name contains MT."""
    from playwright.sync_api import expect

    with browser_page(height=1400, timeout_ms=90_000) as page:
        page.goto(f"{server}/consensus?section=Pairwise+tests")
        field = page.locator(".st-key-wilcoxon input")
        expect(field).to_be_visible(timeout=120_000)
        field.click()
        field.fill("MT")
        options = page.get_by_role("option")
        expect(options.first).to_have_text("MT")                 # the exact match first, no "Select N"
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        expect(page).to_have_url(re.compile(r"wilcoxon=MT(&|$)"))
        chosen = re.findall(r"wilcoxon=([^&]+)", page.url)
        assert chosen == ["Sum", "OH", "MT"], chosen                # the two defaults, then MT alone


def test_replicability_parameter_labels_stay_on_one_line(server):
    """"alpha (R-Nem)" stays on one line beside the other controls."""
    from playwright.sync_api import expect

    with browser_page(height=1400, timeout_ms=90_000) as page:
        page.goto(f"{server}/replicability")
        label = page.locator(".st-key-alpha [data-testid='stWidgetLabel'] p")
        expect(label).to_have_text("alpha (R-Nem)", timeout=120_000)
        line = page.locator(".st-key-n_pairs [data-testid='stWidgetLabel'] p")   # a one-line label
        assert label.bounding_box()["height"] <= line.bounding_box()["height"] * 1.2


def test_the_explorer_table_shows_twenty_rows_on_a_tall_screen(server):
    """On a tall window the explorer's score table shows twenty rows, not a fixed few."""
    from playwright.sync_api import expect

    with browser_page(height=1800, timeout_ms=90_000) as page:
        page.goto(f"{server}/explorer")
        table = page.locator("[data-testid='stDataFrame']").first
        expect(table).to_be_visible(timeout=120_000)
        assert table.bounding_box()["height"] >= 38 + 35 * 20 - 5
