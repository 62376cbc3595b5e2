"""A link whose query values are markdown plants no live link and fetches no outside image.

The pages echo an unknown link value back in a warning (which renders markdown). In chromium,
the values must show as text: no ``<a>`` or ``<img>`` pointing outside, no request leaving for the
outside host. GFM's autolinks are found after markdown escapes are read, so only the real
renderer tells whether escaping is enough.
"""
from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import pytest

from browsertest import (
    browser_page,
    chromium_per_module,  # noqa: F401 - the module's one chromium (an autouse fixture)
    needs_chromium,
    settled,
)

pytestmark = [pytest.mark.browser, needs_chromium]

OUTSIDE = "x.example"
QUERY = {"model": f"[click here](http://{OUTSIDE})", "alpha": f"![x](http://{OUTSIDE}/i.png)",
         "section": f"![y](https://{OUTSIDE}/j.png) www.{OUTSIDE}"}


def test_hostile_link_values_show_as_text_in_the_browser(published_server):
    from playwright.sync_api import expect

    url = published_server
    with browser_page(height=1600, timeout_ms=90_000) as page:
        requested = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{url}/consensus?{urlencode(QUERY)}")
        alerts = page.locator("[data-testid='stAlert']")
        for echo in ("The link sets model to", "The link sets alpha to", "This view has no"):
            expect(alerts.filter(has_text=echo)).to_have_count(1, timeout=120_000)
        for value in QUERY.values():                          # each value shown as it was given
            expect(alerts.filter(has_text=value)).to_have_count(1)
        settled(page)                 # the run is over and drawn: an outside image would be asked for
        assert page.locator(f"a[href*='{OUTSIDE}']").count() == 0
        assert page.locator(f"img[src*='{OUTSIDE}']").count() == 0
        assert alerts.locator("a").count() == 0
    assert requested and not [u for u in requested if (urlsplit(u).hostname or "").endswith(OUTSIDE)]
