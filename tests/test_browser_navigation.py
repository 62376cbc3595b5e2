"""Moving between pages in a real browser: what a link set stays set after a click in the menu;
a link naming the home page lands on it.

AppTest keeps a widget's state across a page switch and never drops the query, so only a
browser shows that a menu click lost the link's task."""
from __future__ import annotations

import re

import pytest

from browsertest import (
    browser_page,
    chromium_per_module,  # noqa: F401 - the module's one chromium (an autouse fixture)
    needs_chromium,
)

pytestmark = [pytest.mark.browser, needs_chromium]


def test_a_task_set_by_a_link_survives_clicks_in_the_menu(published_server):
    """/?task=multiclass, then Consensus rankings and Results explorer from the sidebar: the task
    stayed multiclass only on the first page (Streamlit drops the query on a page change and a
    widget's state does not cross pages); it now follows the session until the user changes it."""
    from playwright.sync_api import expect

    with browser_page(height=1400, timeout_ms=90_000) as page:
        page.goto(f"{published_server}/?task=multiclass")
        task = page.locator(".st-key-task input[role=combobox]")
        expect(task).to_have_value("multiclass")
        for title, path in (("Consensus rankings", "consensus"), ("Results explorer", "explorer")):
            page.locator("[data-testid='stSidebarNavLink']", has_text=title).click()
            expect(page).to_have_url(re.compile(rf"/{path}\?task=multiclass$"))
            expect(task).to_have_value("multiclass")
            expect(page.locator(".st-key-no-task-results")).to_contain_text("No results for multiclass")
        # changed by the user, the new task is the one that follows
        task.click()
        page.get_by_role("option", name="binary", exact=True).click()
        # the explorer's binary view is drawn: the change has run (a click racing it is another matter)
        expect(page.get_by_text(re.compile(r"encoder x dataset cells without any result"))).to_be_visible()
        expect(page.locator(".st-key-no-task-results")).to_have_count(0)
        page.locator("[data-testid='stSidebarNavLink']", has_text="Overview").click()
        expect(task).to_have_value("binary")
        expect(page.locator("[data-testid='stMetric']").first).to_be_visible()
        assert page.locator("[data-testid='stException']").count() == 0


def test_the_home_pages_own_path_lands_on_the_home_page_with_its_query_and_menu_mark(published_server):
    # /overview (a link naming the page) is answered by a hidden alias of the home page: it moves
    # to / with the same query, so the menu marks Overview and the open tab stays the one asked for
    from playwright.sync_api import expect

    with browser_page(height=1600, timeout_ms=90_000) as page:
        page.goto(f"{published_server}/overview?section=Datasets")
        expect(page).to_have_url(re.compile(r"/\?section=Datasets$"))
        expect(page.locator("[data-testid='stSidebarNavLink'][aria-current='page']")).to_contain_text("Overview")
        expect(page.get_by_role("tab", name="Datasets")).to_have_attribute("aria-selected", "true")
        expect(page.locator("[data-testid='stMetric']").first).to_be_visible()
        assert page.locator("[data-testid='stException']").count() == 0
