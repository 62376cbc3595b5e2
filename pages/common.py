"""Shared UI plumbing for the pages: the one cached read-only store."""
from __future__ import annotations

import streamlit as st

from encbench.store import Reader, SnapshotMissing


@st.cache_resource
def get_reader() -> Reader:
    """The app's single read-only connection to the newest snapshot (reopens on new snapshots)."""
    return Reader()


def reader_or_stop() -> Reader:
    """The reader, or a clear message and a stopped page when no database was built yet."""
    try:
        return get_reader()
    except SnapshotMissing as exc:
        st.error(str(exc))
        st.stop()
