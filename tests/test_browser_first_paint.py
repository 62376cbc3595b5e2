"""The first visitor of a fresh server sees the app's own navigation only, from the first paint.

Until some session calls ``st.navigation``, Streamlit runs the entry point as its older
multipage app and lists every file of the ``pages/`` folder beside it in the sidebar ("app",
"common", ..., "run views") until ``app.py``'s ``st.navigation`` replaces that menu.
``.streamlit/config.toml`` sets ``client.showSidebarNavigation = false``, which hides that
auto-discovered menu, and ``app.py`` sets it back to true before its ``st.navigation`` (whose
sidebar obeys the same option). It also sets ``client.toolbarMode = "viewer"``: no Deploy button
or developer options. Both servers are tested: ``serve.py`` and ``app.py``.

A MutationObserver installed before the page's own scripts records every text the sidebar's
navigation ever held, so a listing shown for a few hundred milliseconds is caught too.
"""
from __future__ import annotations

import pytest

from browsertest import browser_page, needs_chromium, streamlit_server
from pages.common import PAGES

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


@pytest.mark.parametrize("script", ["serve.py", "app.py"])
def test_first_paint_of_a_fresh_server_shows_only_the_apps_navigation(published_db, tmp_path, script):
    from playwright.sync_api import expect

    with streamlit_server(published_db, tmp_path, script=script, ENCBENCH_WORKER_IDLE_EXIT="0") as url, \
            browser_page(height=1200, timeout_ms=90_000) as page:
        page.add_init_script(RECORD_NAV)
        page.goto(url)                                        # the first request this server sees
        links = page.locator("[data-testid='stSidebarNavLink']")
        expect(links).to_have_count(len(PAGES), timeout=120_000)
        expect(page.get_by_text("Results", exact=False).first).to_be_visible()
        page.wait_for_timeout(500)
        seen = page.evaluate("window.__navTexts")
        # a visitor's toolbar (client.toolbarMode = "viewer"): the menu, without Deploy
        expect(page.locator("[data-testid='stMainMenu']")).to_be_visible()
        deploy = page.get_by_role("button", name="Deploy").count()

    assert deploy == 0, "Streamlit's Deploy button is shown to visitors"
    assert seen, "the sidebar navigation never appeared"
    titles = [title for _, title, _, _ in PAGES]
    for text in seen:
        lines = [line.strip().lower() for line in text.splitlines() if line.strip()]
        leaked = [label for label in FILE_LABELS if label in lines]
        assert not leaked, f"the sidebar listed files of pages/ ({leaked!r}) at some point: {text!r}"
    assert all(title in seen[-1] for title in titles), seen[-1]
