"""Routing: the app's pages, ``st.navigation`` over them, sending a page run through ``app.py``,
and error containment for fragments."""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Literal

import streamlit as st

from pages.ui.text import md_text

log = logging.getLogger(__name__)


def guarded(func: Callable) -> Callable:
    """Show an error message instead of a traceback when ``func`` raises.

    For ``st.fragment`` bodies: a fragment rerun does not pass through ``app.py``'s last line of
    defence. Streamlit's own control flow (``st.rerun``, ``st.stop``) is not an ``Exception`` and
    passes through.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as exc:  # shown to the user, logged with its traceback
            log.exception("%s failed", func.__name__)
            st.error(f"This part of the page could not be shown: {type(exc).__name__}: {md_text(exc)}")
    return wrapper


#: The app's pages, in menu order: (file, title, material icon, url path); the first is the
#: home page. ``app.py`` routes with them: add a page by adding its file and a line here. The
#: url path names the page in a shared link (``/consensus?model=LogReg``) and is the file's
#: name, which is also how Streamlit's ``pages/`` folder names it (see :func:`ensure_routed`).
PAGES = (
    ("pages/overview.py", "Overview", "home", "overview"),
    ("pages/explorer.py", "Results explorer", "table_view", "explorer"),
    ("pages/consensus.py", "Consensus rankings", "leaderboard", "consensus"),
    ("pages/sensitivity.py", "Sensitivity", "grid_on", "sensitivity"),
    ("pages/replicability.py", "Replicability", "stacked_line_chart", "replicability"),
    ("pages/run.py", "Run on your data", "upload_file", "run"),
    ("pages/runs.py", "Runs", "pending_actions", "runs"),
    ("pages/new_encoder.py", "New encoder", "add_chart", "new_encoder"),
)


_ROUTED = "_encbench_routed"  # session state: this session's runs go through app.py
#: session state: the url path of the page this run shows (set by :func:`navigation`)
CURRENT_PAGE = "_encbench_page"


def navigation(*, position: Literal["sidebar", "hidden"] = "sidebar") -> st.Page:
    """Declare the app's pages with ``st.navigation``; return the page the URL asks for.

    ``app.py`` calls it once per run, then runs the returned page.

    The home page is served at ``/``, where its menu link points. Streamlit matches a URL against
    the url path of every page but the default one, so the home page's own url path
    (``/overview``, what a link by page name asks for) would answer "Page not found": a hidden page
    answers there and switches to the home page at ``/`` with the same query parameters, so that
    the menu marks the page shown (it marks the page asked for, and the hidden one is not in it).
    """
    st.session_state[_ROUTED] = True
    (home_path, home_title, home_icon, home_url), *others = PAGES
    home = {"title": home_title, "icon": f":material/{home_icon}:"}
    home_page = st.Page(home_path, **home, url_path="", default=True)
    page = st.navigation([
        home_page,
        *(st.Page(path, title=title, icon=f":material/{icon}:", url_path=url) for path, title, icon, url in others),
        st.Page(home_path, **home, url_path=home_url, visibility="hidden"),
    ], position=position)
    if page.url_path == home_url:
        st.switch_page(home_page, query_params={key: st.query_params.get_all(key) for key in st.query_params})
    st.session_state[CURRENT_PAGE] = page.url_path
    return page


def ensure_routed() -> None:
    """Send a page run without ``app.py`` through it; every page calls this first thing.

    Until some session calls ``st.navigation``, Streamlit serves a ``pages/`` folder beside the
    entry point as its older multipage app: the first link opened after a server (re)start, say
    ``/consensus?model=DT``, runs ``pages/consensus.py`` on its own (no page config; every file of
    ``pages/``, this module included, listed in the sidebar). Streamlit documents that calling
    ``st.navigation`` in any session switches the app to the ``st.navigation`` structure for all
    sessions ("Creating multipage apps using the pages/ directory"). So a page run outside
    ``app.py`` declares the app's pages (hidden, the rerun draws them) and reruns: ``st.rerun``
    keeps the page and the query parameters, and the rerun goes through ``app.py``.

    A session is rerouted once, on its first run (a page load, nothing clicked yet): AppTest
    turns the ``pages/`` folder back on before every run, and rerunning a later run would drop a
    button click.
    """
    if st.session_state.get(_ROUTED):
        return
    navigation(position="hidden")
    st.rerun()


def drill_link(encoder: str, *, task: str, models=None, tunings=None, metrics=None, origin: str | None = None,
               prefer: str | None = None, beyond: bool = False, key: str | None = None) -> None:
    """A link to the Results explorer's drill-down on ``encoder``, with the view's filters: its
    scores per dataset, where a ranking row or a heatmap cell was chosen.

    ``models``, ``tunings``, ``metrics`` (None: every value) are the filters the row was ranked
    under; ``origin``, ``prefer`` and ``beyond`` the results it was ranked on."""
    query: dict[str, object] = {"section": "Drill down", "drill_encoder": encoder, "drill_a": encoder}
    if task != "binary":
        query["task"] = task
    for name, values in (("model", models), ("tuning", tunings), ("metric", metrics)):
        if values is not None:
            query[name] = list(values)
    if origin and origin != "published":
        query["origin"] = origin
        if prefer and origin == "both":
            query["prefer"] = prefer
    if beyond:
        query["beyond"] = "true"
    with st.container(key=key or f"drill-link-{encoder}"):
        st.page_link("pages/explorer.py", label=f"{encoder}: its scores dataset by dataset, in the Results explorer",
                     icon=":material/zoom_in:", query_params=query)
