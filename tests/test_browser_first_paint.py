"""The first visitor of a fresh server sees the app's own navigation only, from the first paint,
and a shared link opened as that first request keeps the app's config, sidebar and filters.

Until some session calls ``st.navigation``, Streamlit runs the entry point as its older
multipage app and lists every file of the ``pages/`` folder beside it in the sidebar ("app",
"common", ..., "run views") until ``app.py``'s ``st.navigation`` replaces that menu.
``.streamlit/config.toml`` sets ``client.showSidebarNavigation = false``, which hides that
auto-discovered menu, and ``app.py`` sets it back to true before its ``st.navigation`` (whose
sidebar obeys the same option). It also sets ``client.toolbarMode = "viewer"``: no Deploy button
or developer options. Both servers are tested: ``serve.py`` and ``app.py``.

A MutationObserver installed before the page's own scripts records every text the sidebar's
navigation ever held, so a listing shown for a few hundred milliseconds is caught too.

A shared link as the first request: until some session calls ``st.navigation``, ``/consensus``
would run ``pages/consensus.py`` on its own: no page config (tab title "consensus", centred
layout), every file of ``pages/`` in the sidebar. ``pages.ui.navigation.ensure_routed`` reroutes such a
run through ``app.py`` with public API only; the ``serve.py`` case opens such a link first and
fails if Streamlit changes what that relies on. The ``app.py`` case opens the home page first.
"""
from __future__ import annotations

import re

import pytest

from browsertest import (
    browser_page,
    chromium_per_module,  # noqa: F401 - the module's one chromium (an autouse fixture)
    needs_chromium,
    settled,
    streamlit_server,
)
from pages.ui.navigation import PAGES

pytestmark = [pytest.mark.browser, needs_chromium]

RECORD_NAV = """
window.__navTexts = [];
const record = () => {
  for (const nav of document.querySelectorAll("[data-testid='stSidebarNav']")) {
    const text = nav.innerText;
    if (text && window.__navTexts[window.__navTexts.length - 1] !== text) window.__navTexts.push(text);
  }
};
new MutationObserver(record).observe(document, {subtree: true, childList: true, characterData: true});
"""

#: Labels Streamlit gives files of ``pages/`` that are not pages of the app's navigation.
FILE_LABELS = ("common", "run views", "run_views", "app")


@pytest.mark.parametrize(("script", "path", "current"), [
    ("serve.py", "/consensus?model=DT", "Consensus rankings"),   # a shared link, the first request
    ("app.py", "/", "Overview"),
])
def test_first_paint_of_a_fresh_server_shows_only_the_apps_navigation(published_db, tmp_path, script, path,
                                                                      current):
    from playwright.sync_api import expect

    with streamlit_server(published_db, tmp_path, script=script, ENCBENCH_WORKER_IDLE_EXIT="0") as url, \
            browser_page(height=1600, timeout_ms=90_000) as page:
        page.add_init_script(RECORD_NAV)
        page.goto(url + path)                                 # the first request this server sees
        links = page.locator("[data-testid='stSidebarNavLink']")
        expect(links).to_have_count(len(PAGES), timeout=120_000)
        if path == "/":
            expect(page.get_by_text("Results", exact=False).first).to_be_visible()
        else:
            expect(page.locator(".st-key-ranking-summary")).to_contain_text("Best by", timeout=120_000)
        settled(page)
        seen = page.evaluate("window.__navTexts")
        # a visitor's toolbar (client.toolbarMode = "viewer"): the menu, without Deploy
        expect(page.locator("[data-testid='stMainMenu']")).to_be_visible()
        deploy = page.get_by_role("button", name="Deploy").count()

        # app.py's page config: title and wide layout
        expect(page).to_have_title("encbench")
        expect(page.locator("[data-testid='stAppViewContainer']")).to_have_attribute("data-layout", "wide")
        # app.py's navigation: the pages by title (not the files of pages/), this one current
        for link, (_, title, _, _) in zip(links.all(), PAGES):
            expect(link).to_contain_text(title)
        expect(page.locator("[data-testid='stSidebarNav']")).not_to_contain_text("common")
        expect(page.locator("[data-testid='stSidebarNavLink'][aria-current='page']")).to_contain_text(current)
        if path != "/":
            # the link's filter: DT, alone, and still in the URL
            model = page.locator(".st-key-model")
            expect(model).to_contain_text("DT")
            expect(model).not_to_contain_text("LogReg")
            expect(page).to_have_url(re.compile(r"/consensus\?model=DT$"))
        assert page.locator("[data-testid='stException']").count() == 0

    assert deploy == 0, "Streamlit's Deploy button is shown to visitors"
    assert seen, "the sidebar navigation never appeared"
    titles = [title for _, title, _, _ in PAGES]
    for text in seen:
        lines = [line.strip().lower() for line in text.splitlines() if line.strip()]
        leaked = [label for label in FILE_LABELS if label in lines]
        assert not leaked, f"the sidebar listed files of pages/ ({leaked!r}) at some point: {text!r}"
    assert all(title in seen[-1] for title in titles), seen[-1]
