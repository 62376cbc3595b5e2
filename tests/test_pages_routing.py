"""The page table of ``pages.ui.navigation`` and the routing of page runs through ``app.py`` (pages
opened on the small database, tests/small_db.py)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pagetest import new_app, open_page
from pages.ui.navigation import PAGES

REPO = Path(__file__).resolve().parents[1]
HELPERS = {"__init__.py", "run_advice.py"}  # modules of pages/ that are not pages


def test_every_page_file_is_routed_under_its_own_name():
    """A link is matched by file name before ``st.navigation`` has run (ensure_routed), so each
    url path must be its file's name; every file of pages/ but the helpers is a page."""
    for path, title, icon, url in PAGES:
        assert (REPO / path).is_file(), path
        assert Path(path).stem == url, (path, url)
        assert title and icon
    assert len({url for *_, url in PAGES}) == len(PAGES)
    files = {p.name for p in (REPO / "pages").glob("*.py")} - HELPERS
    assert files == {Path(path).name for path, *_ in PAGES}


def test_every_page_calls_ensure_routed_before_drawing_anything():
    for path, *_ in PAGES:
        tree = ast.parse((REPO / path).read_text())
        calls = [ast.unparse(node.value.func) for node in tree.body
                 if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)]
        assert calls and calls[0] == "ensure_routed", (path, calls[:2])


def test_a_rerouted_first_run_keeps_the_link_filters(small_db, monkeypatch):
    """AppTest serves pages/ the old way on every run, so its first run of a page is rerouted
    (the browser side, page config and sidebar included: tests/test_browser_direct_link.py)."""
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))
    at = open_page("consensus", {"model": "DT"})
    assert at.multiselect(key="model").value == ["DT"]
    assert [t.value for t in at.title] == ["Consensus rankings"]


def test_a_helper_module_opened_as_a_page_lands_on_the_home_page(small_db, monkeypatch):
    """Before app.py's navigation runs, Streamlit serves /run_advice too (a helper module of the
    Run page): it sends the run to app.py, which has no such page and shows its home page."""
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))
    for helper in sorted(HELPERS - {"__init__.py"}):
        at = new_app(60)
        at.switch_page(f"pages/{helper}")
        at.run()
        assert not at.exception, (helper, at.exception)
        assert [t.value for t in at.title] == ["encbench"], helper


def _as_if_the_browser_asked_for(monkeypatch, url_path: str) -> list:
    """Make a run with no page hash carry ``url_path`` as its page name, as a browser's first
    request for ``/<url_path>`` does (AppTest sends a page hash only); return the list that
    collects Streamlit's "Page not found" answers."""
    from streamlit.commands import navigation as st_navigation
    from streamlit.runtime.pages_manager import PagesManager

    set_intent = PagesManager.set_script_intent
    monkeypatch.setattr(PagesManager, "set_script_intent",
                        lambda self, page_hash, page_name: set_intent(self, page_hash, page_name or url_path))
    not_found = []
    original = st_navigation.send_page_not_found
    monkeypatch.setattr(st_navigation, "send_page_not_found",
                        lambda ctx: (not_found.append(url_path), original(ctx)))
    return not_found


@pytest.mark.parametrize("page", [(path, url) for path, *_, url in PAGES])
def test_every_url_path_opens_its_page_as_the_first_request(small_db, monkeypatch, page):
    """``/overview`` (the home page's own url path, which its menu link does not show) answered
    "Page not found": the home page is served at ``/``, and st.navigation matches a URL against
    the url path of each page but the home page. Every page's url path opens it."""
    path, url = page
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))
    not_found = _as_if_the_browser_asked_for(monkeypatch, url)
    at = new_app(60)
    at.run()
    assert not at.exception, at.exception
    assert not not_found, f"/{url} answered Page not found"
    title = {"pages/overview.py": "encbench"}.get(path, next(t for p, t, *_ in PAGES if p == path))
    assert [t.value for t in at.title][:1] == [title], (url, [t.value for t in at.title])
