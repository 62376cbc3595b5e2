"""encbench Streamlit entry point: page setup and navigation only (DESIGN.md section 11).

With ``st.navigation`` the ``pages/`` folder is not auto-discovered: every page is listed in
``PAGES`` (add a page by adding a line). ``url_path`` names the page in the URL
(``/consensus?model=LogReg``), so a shared link opens the same page with the same filters.
"""
import logging

import streamlit as st

st.set_page_config(page_title="encbench", page_icon=":bar_chart:", layout="wide")

# (file, title, material icon, url path)
PAGES = [
    ("pages/overview.py", "Overview", "home", "overview"),
    ("pages/explorer.py", "Results explorer", "table_view", "explorer"),
    ("pages/consensus.py", "Consensus rankings", "leaderboard", "consensus"),
    ("pages/sensitivity.py", "Sensitivity", "grid_on", "sensitivity"),
    ("pages/replicability.py", "Replicability", "stacked_line_chart", "replicability"),
    ("pages/run.py", "Run on your data", "upload_file", "run"),
    ("pages/runs.py", "Runs", "pending_actions", "runs"),
    ("pages/new_encoder.py", "New encoder", "add_chart", "new_encoder"),
]

page = st.navigation([
    st.Page(path, title=title, icon=f":material/{icon}:", url_path=url, default=(i == 0))
    for i, (path, title, icon, url) in enumerate(PAGES)
])
try:
    page.run()
except Exception as exc:  # noqa: BLE001 - last line of defence: no traceback reaches the user
    # st.stop()/st.rerun() raise BaseException subclasses and pass through untouched.
    logging.getLogger("encbench.app").exception("page %s failed", page.title)
    st.error(f"This view could not be shown: {type(exc).__name__}: {exc}")
