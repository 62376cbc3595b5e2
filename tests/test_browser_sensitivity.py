"""A Sensitivity view shared as a link keeps its fixed factors (seen only in a browser).

Streamlit writes a bound widget's value to the URL from the browser; AppTest does not see it.
When the varied factor changes, a fixed factor's select keeps its URL binding: vary=metric,
then Tuning (fixed) = model, puts both in the URL.
"""
from __future__ import annotations

import re

import pytest

from browsertest import (
    browser_page,
    chromium_per_module,  # noqa: F401 - the module's one chromium (an autouse fixture)
    needs_chromium,
)

pytestmark = [pytest.mark.browser, needs_chromium]


def _choose(page, key: str, option: str) -> None:
    page.locator(f".st-key-{key}").click()
    page.get_by_role("option", name=option, exact=True).click()


def test_a_fixed_factor_chosen_after_changing_the_varied_one_reaches_the_url(published_server):
    from playwright.sync_api import expect

    url = published_server
    with browser_page(height=1400, timeout_ms=90_000) as page:
        page.goto(f"{url}/sensitivity")
        sentence = page.get_by_text(re.compile("^Varying "))
        expect(sentence).to_contain_text("Varying model", timeout=120_000)
        page.locator(".st-key-vary").get_by_text("metric", exact=True).click()
        expect(sentence).to_contain_text("Varying metric")
        _choose(page, "fix_tuning", "model")
        expect(page).to_have_url(re.compile(r"[?&]fix_tuning=model(&|$)"))
        _choose(page, "fix_model", "DT")
        expect(sentence).to_contain_text("for Model = DT, Tuning = model")
        expect(page).to_have_url(re.compile(r"[?&]fix_model=DT(&|$)"))
        expect(page).to_have_url(re.compile(r"[?&]fix_tuning=model(&|$)"))
        link = page.url

    with browser_page(height=1400, timeout_ms=90_000) as fresh:       # someone opening the link
        fresh.goto(link)
        expect(fresh.get_by_text(re.compile("^Varying "))).to_contain_text(
            "Varying metric (aggregation R-M), for Model = DT, Tuning = model", timeout=120_000)
        expect(fresh.get_by_role("combobox", name="Tuning (fixed)")).to_have_value("model")
        assert fresh.get_by_text("(average over all)").count() == 0
