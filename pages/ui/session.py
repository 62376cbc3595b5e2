"""This browser session (its owner token) and the server's mode (read-only)."""
from __future__ import annotations

import hmac
import logging
import os

import streamlit as st


log = logging.getLogger(__name__)


#: session-state key of this browser session's owner token (see :func:`session_owner`)
_OWNER_KEY = "_encbench_owner"


#: environment variable that serves the app read-only (:func:`read_only`)
READ_ONLY_ENV = "ENCBENCH_READ_ONLY"


def session_owner() -> str:
    """This browser session's owner token: random, made on first use, kept in session state.

    Runs this session launches carry it (``runs.owner``), and only the session holding it may
    delete them from the app. It is never shown; a new session (a reload, another browser) gets
    a new token and owns nothing.
    """
    from encbench.engine.queue_requests import new_owner_token  # the engine: only pages that launch runs

    token = st.session_state.get(_OWNER_KEY)
    if not isinstance(token, str):
        token = st.session_state[_OWNER_KEY] = new_owner_token()
    return token


def owns(owner) -> bool:
    """True when ``owner`` (a run's ``owner``) is this session's token."""
    return isinstance(owner, str) and hmac.compare_digest(owner, session_owner())


def read_only() -> bool:
    """True when the app is served read-only (``ENCBENCH_READ_ONLY=1``, as ``make
    serve-readonly`` does): no uploads, no runs, no cancels, no deletes."""
    return os.environ.get(READ_ONLY_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def read_only_notice(what: str) -> None:
    """Say that this server is read-only and what that leaves out on this page."""
    st.info(f"This server is read-only ({READ_ONLY_ENV}=1): {what}", icon=":material/lock:")
