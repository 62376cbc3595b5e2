"""Heavy work of a page in a worker process (:class:`encbench.jobs.ProcessJob`), as the page
shows it: started once per inputs and kept in the session, its progress and a Cancel button
in a fragment that polls it each second, a Restart button once cancelled, and the finished job
handed back to the page, which draws its result or says its error.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from encbench.jobs import ProcessJob


def session_job(state: str, key: tuple, start: Callable[[], ProcessJob], *, prefix: str,
                progress: Callable[[ProcessJob], None], cancel_label: str, cancelled_text: str,
                restart_label: str) -> ProcessJob | None:
    """The job of ``key`` among the session's jobs ``st.session_state[state]``, started by
    ``start()`` if there is none; the finished job, or None while it runs or once it is
    cancelled (said on the page).

    The session's other unfinished jobs in ``state`` are cancelled and forgotten (the view
    changed: nobody will see them); finished ones stay, so going back to their inputs shows
    them at once. While the job runs, ``progress(job)`` draws its state in a container keyed
    ``<prefix>-progress`` beside a ``<prefix>-cancel`` button, rerun each second, and the whole
    page reruns when the job ends. A cancelled job shows ``cancelled_text`` and a
    ``<prefix>-restart`` button that starts it again. A finished job may carry an
    :attr:`~encbench.jobs.BackgroundJob.error`: the page says it.
    """
    cancel_other_jobs(state, key)
    jobs = st.session_state.setdefault(state, {})
    job = jobs.get(key)
    if job is None:
        job = jobs[key] = start()
    if job.cancelled:
        with st.container(horizontal=True, key=f"{prefix}-cancelled"):
            st.info(cancelled_text)
            if st.button(restart_label, key=f"{prefix}-restart"):
                jobs.pop(key, None)
                st.rerun()
        return None
    if not job.finished:
        _progress(job, prefix, progress, cancel_label)
        return None
    return job


def cancel_other_jobs(state: str, key: tuple | None = None) -> None:
    """Cancel and forget the session's unfinished jobs in ``state`` other than ``key``'s: for a
    page whose view changed to inputs that need no job (nobody will see the others)."""
    jobs = st.session_state.get(state, {})
    for stale in [k for k, job in jobs.items() if k != key and not job.finished]:
        jobs.pop(stale).cancel()


def forget_job(state: str, key: tuple) -> None:
    """Drop the job of ``key`` from the session's jobs (its result is kept elsewhere)."""
    st.session_state.get(state, {}).pop(key, None)


@st.fragment(run_every=1.0)
def _progress(job: ProcessJob, prefix: str, progress: Callable[[ProcessJob], None], cancel_label: str) -> None:
    if job.finished or job.cancelled:
        st.rerun()                              # the whole page: it draws the result
    with st.container(key=f"{prefix}-progress"):
        progress(job)
        if st.button(cancel_label, key=f"{prefix}-cancel"):
            job.cancel()
            st.rerun()
