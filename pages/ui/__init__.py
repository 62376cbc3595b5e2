"""UI helpers of the pages, by concern (not pages themselves: Streamlit lists only the files of
``pages/``, not this package).

- :mod:`pages.ui.navigation`: the page table, ``st.navigation``, routing through ``app.py``
- :mod:`pages.ui.store`: the cached Reader and cached loads
- :mod:`pages.ui.widgets`: URL-bound widgets and the strategy parameters' widgets
- :mod:`pages.ui.filters`: factor, origin and split filters and the origin banner
- :mod:`pages.ui.exports`: tables and charts with their download buttons
- :mod:`pages.ui.text`: user-controlled text shown as text
- :mod:`pages.ui.session`: the session's owner token and the read-only mode
- :mod:`pages.ui.run_panels`: what the Run and Runs pages show of a run: progress, result
- :mod:`pages.ui.jobs`: a page's heavy work in a worker process: progress, cancel, restart
"""
