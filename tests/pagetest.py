"""Helpers for the AppTest page tests (imported by tests/test_pages_*.py)."""
from __future__ import annotations

from pathlib import Path

from streamlit.components.v2.component_manager import BidiComponentManager
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest, app_test

REPO = Path(__file__).resolve().parents[1]

#: the installed Streamlit components, discovered once per process (:func:`new_app`)
_components: BidiComponentManager | None = None

# A Streamlit server keeps one ScriptCache (the compiled page scripts, with Streamlit's "magic"
# AST rewrite) for every session and rerun; AppTest made a new one for each run, so every run
# parsed, rewrote and compiled app.py and its page again (about a quarter of a Run page run).
# Every AppTest of this process shares one, as a server's sessions do. Tests never rewrite a
# script under the same path.
_SCRIPTS = ScriptCache()
if app_test.ScriptCache is ScriptCache:
    app_test.ScriptCache = lambda: _SCRIPTS


def new_app(timeout: float = 60) -> AppTest:
    """An AppTest of ``app.py``, not run yet.

    An AppTest discovers the installed Streamlit components on its first run, reading the
    metadata of every installed distribution: about 0.15 s of CPU, most of what a page run with
    warm caches costs. The installed distributions do not change during a test session, so
    every AppTest made here shares one discovery. (``_bidi_component_manager`` is where AppTest
    1.67 keeps it; an AppTest without that attribute discovers them itself, as before.)
    """
    global _components
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=timeout)
    if hasattr(at, "_bidi_component_manager"):
        if _components is None:
            _components = BidiComponentManager()
            _components.discover_and_register_components(start_file_watching=False)
        at._bidi_component_manager = _components
    return at


def open_page(page: str, query: dict | None = None, *, timeout: float = 60) -> AppTest:
    """Run ``app.py`` routed to ``pages/<page>.py`` (optionally with URL query parameters)."""
    at = new_app(timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    from pages.ui.navigation import PAGES  # here: a bare interpreter imports this module without the repo on its path

    if f"pages/{page}.py" != PAGES[0][0]:
        # the home page is app.py's default page; switching to its file would pick the page's
        # hidden alias at /overview, which moves to / (a second page change)
        at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    """All markdown, captions and alerts of a run, joined (for "is this message shown")."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for kind in ("info", "warning", "error", "success"):
        parts += [e.value for e in getattr(at, kind)]
    return "\n".join(parts)


def charts(at: AppTest) -> list:
    return list(at.get("vega_lite_chart"))


def summary_line(at: AppTest) -> str:
    """The Consensus page's one-line summary of the first ranking."""
    return next(m.value for m in at.markdown if m.value.startswith("Best by "))


def open_exports(at: AppTest, *items: str) -> AppTest:
    """Open the Download menus ``exports-{item}`` (``"table-rankings"``, ``"chart-elo"``) and rerun:
    their buttons are built only while a menu is open."""
    for item in items:
        at.session_state[f"exports-{item}"] = True
    return at.run()
