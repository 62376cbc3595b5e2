"""A shared link opened as the very first request of a fresh server goes through ``app.py``.

Until some session calls ``st.navigation``, Streamlit serves the ``pages/`` folder beside
``app.py`` as its older multipage app, and ``/consensus`` would run ``pages/consensus.py`` on its
own: no page config (tab title "consensus", centred layout), every file of ``pages/`` in the
sidebar. ``pages.common.ensure_routed`` reroutes such a run through ``app.py`` with public API
only; this test fails if Streamlit changes what that relies on.
"""
from __future__ import annotations

import re

import pytest

from browsertest import browser_page, needs_chromium, streamlit_server
from pages.common import PAGES

pytestmark = [pytest.mark.browser, needs_chromium]


def test_a_direct_link_first_after_a_server_start_keeps_config_sidebar_and_filters(published_db, tmp_path):
    from playwright.sync_api import expect

    with streamlit_server(published_db, tmp_path, ENCBENCH_WORKER_IDLE_EXIT="0") as url, \
            browser_page(height=1600, timeout_ms=90_000) as page:
        page.goto(f"{url}/consensus?model=DT")                  # nothing else has run on this server
        expect(page.locator(".st-key-ranking-summary")).to_contain_text("Best by", timeout=120_000)

        # app.py's page config: title and wide layout
        expect(page).to_have_title("encbench")
        expect(page.locator("[data-testid='stAppViewContainer']")).to_have_attribute("data-layout", "wide")
        # app.py's navigation: the eight pages by title (not the files of pages/), this one current
        links = page.locator("[data-testid='stSidebarNavLink']")
        expect(links).to_have_count(len(PAGES))
        for link, (_, title, _, _) in zip(links.all(), PAGES):
            expect(link).to_contain_text(title)
        expect(page.locator("[data-testid='stSidebarNav']")).not_to_contain_text("common")
        expect(page.locator("[data-testid='stSidebarNavLink'][aria-current='page']")).to_contain_text(
            "Consensus rankings")
        # the link's filter: DT, alone, and still in the URL
        model = page.locator(".st-key-model")
        expect(model).to_contain_text("DT")
        expect(model).not_to_contain_text("LogReg")
        expect(page).to_have_url(re.compile(r"/consensus\?model=DT$"))
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
