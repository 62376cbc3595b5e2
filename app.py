"""encbench Streamlit entry point: page setup and navigation only (docs/ARCHITECTURE.md, Layers).

With ``st.navigation`` the ``pages/`` folder is not auto-discovered: every page is listed in
``pages.ui.navigation.PAGES`` (add a page by adding a line there). Its url path names the page
in the URL (``/consensus?model=LogReg``), so a shared link opens the same page with the same filters,
also as the first request after a server start (``pages.ui.navigation.ensure_routed``).
"""
import logging

import streamlit as st

from pages.ui.filters import carry_task
from pages.ui.navigation import navigation
from pages.ui.text import md_text

st.set_page_config(page_title="encbench", page_icon=":bar_chart:", layout="wide")
# .streamlit/config.toml turns the sidebar menu off so that a fresh server's first run, which
# Streamlit makes as its older pages/-folder app, does not list the files of pages/; the app's
# own menu turns it back on (st.navigation's sidebar obeys the same option).
st.set_option("client.showSidebarNavigation", True)

page = navigation()
carry_task()   # the task a link set follows the session from page to page
try:
    page.run()
except Exception as exc:  # last line of defence: no traceback reaches the user
    # st.stop()/st.rerun() raise BaseException subclasses and pass through untouched.
    logging.getLogger("encbench.app").exception("page %s failed", page.title)
    st.error(f"This view could not be shown: {type(exc).__name__}: {md_text(exc)}")
