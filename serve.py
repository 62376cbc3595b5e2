"""The app's server: ``streamlit run serve.py`` serves ``app.py`` (what ``make run`` does).

It is ``streamlit run app.py`` with one addition: before the server takes its first request it
warms the process, so the first visitor does not wait for it (target: a first visit
within 3 s). A fresh server otherwise spends about 0.8 s of the first page run importing pandas,
Altair and the app's modules, and 0.4 s loading the published scores that the home page shows.
The warm-up loads the same cached values a first visit to the Overview asks for, with the same
arguments, so that visit finds them in Streamlit's cache.

The warm-up is best effort: a database that is missing or cannot be read is logged and left to
the pages, which say what is wrong. ``streamlit run app.py`` still works, without the warm-up.
"""
import asyncio
import logging
import time
from contextlib import asynccontextmanager

import streamlit as st

log = logging.getLogger("encbench.serve")


def warm() -> None:
    """Import what every page imports; load what the Overview's published view loads first."""
    start = time.perf_counter()
    from encbench import plots  # noqa: F401 - Altair, for every page with a chart
    from encbench.views import consensus, explorer, overview  # noqa: F401 - the pages' views
    from encbench.views.origins import origins_of
    from pages.ui import exports, filters, jobs, navigation, session, text, widgets  # noqa: F401 - every page's helpers
    from pages.ui.store import db_path, get_reader, levels, scores, summary  # pandas, the store

    try:
        db = db_path()
        version = get_reader(db).version
        origins = origins_of("published")  # the default view (pages/overview.py)
        levels(db, version)
        summary(db, version, origins)
        scores(db, version, origins=origins, prefer="published")
    except Exception:  # the pages report a bad database to the user
        log.warning("warm-up: the database could not be loaded; pages will say why", exc_info=True)
    log.info("warm-up done in %.2f s", time.perf_counter() - start)


@asynccontextmanager
async def lifespan(app):
    await asyncio.to_thread(warm)
    yield


app = st.App("app.py", lifespan=lifespan)
