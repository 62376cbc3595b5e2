"""Runs: every run with status and progress; errors; cancel, resume, delete; results."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from encbench.runs import grid_from_config, progress_table
from encbench.store import queries
from pages import common, run_views

st.title("Runs")
queue = run_views.queue()
run_views.keep_worker_alive(queue)


@st.fragment(run_every=3.0)
def _overview() -> None:
    db, version = common.data_key()
    running = queue.worker_running()
    table = progress_table(common.runs_table(db, version), queue.pending(), queue.active(),
                           queue.done(), worker_running=running)
    pid = queue.worker_pid()
    st.caption(f"Background worker: {'running (pid ' + str(pid) + ')' if running else 'idle (starts when a run is queued)'}.")
    if table.empty:
        st.info("No runs yet.")
        return
    shown = table.assign(
        progress=[d / t if t else None for d, t in zip(table["done"], table["total"])],
        eta=[None if pd.isna(e) else str(pd.Timedelta(seconds=float(e)).round("s")) for e in table["eta_s"]],
    )[["label", "status", "progress", "done", "total", "n_failed", "n_timeout", "eta", "created_at",
       "finished_at", "origin", "run_id"]]
    st.dataframe(shown, hide_index=True, width="stretch", column_config={
        "progress": st.column_config.ProgressColumn("progress", min_value=0.0, max_value=1.0, format="percent"),
    })
    st.session_state["_runs_ids"] = table["run_id"].tolist()
    st.session_state["_runs_table"] = table


_overview()

table: pd.DataFrame = st.session_state.get("_runs_table", pd.DataFrame())
if table.empty:
    st.stop()
labels = {r.run_id: f"{r.label or r.run_id} [{r.status}]" for r in table.itertuples()}
run_id = common.selectbox("Run", list(labels), key="run", format_func=lambda r: labels.get(r, r),
                          default=st.session_state.get("last_run"))
row = table.set_index("run_id").loc[run_id]
db, version = common.data_key()
runs = common.runs_table(db, version).set_index("run_id")
config = run_views.run_config(runs.loc[run_id]) if run_id in runs.index else {}

with st.container(horizontal=True):
    is_published = row["origin"] == "published"
    can_cancel = row["status"] in ("queued", "running")
    can_resume = not is_published and row["status"] in ("cancelled", "failed", "interrupted", "done") \
        and bool(config.get("datasets"))
    if st.button("Cancel", key="cancel", disabled=not can_cancel):
        queue.cancel(run_id)
        st.toast("Cancel requested: the run stops after the tasks in flight.")
    if st.button("Resume", key="resume", disabled=not can_resume,
                 help="Queue the unfinished part again (finished experiments are kept)."):
        queue.submit("run", {"run_id": run_id, "grid": grid_from_config(config), "workers": 1})
        queue.ensure_worker()
        st.toast("Queued: finished experiments are skipped.")
    confirm = st.checkbox("Confirm delete", key="confirm_delete", disabled=is_published)
    if st.button("Delete", key="delete", disabled=is_published or not confirm,
                 help="Removes the run's results and, if no other run uses it, its uploaded file."):
        queue.cancel(run_id)
        queue.submit("delete", {"run_id": run_id})
        queue.ensure_worker()
        st.toast("Delete queued.")
if is_published:
    st.caption("The published results cannot be deleted from the app.")

run_views.show_progress(row)
with st.expander("Configuration"):
    st.json(config or {"note": "not recorded"})
errors = queries.run_errors(common.get_reader(db), run_id)
if len(errors):
    st.subheader(f"Failed experiments ({len(errors)})")
    st.dataframe(errors, hide_index=True, width="stretch")
if row["origin"] == "local":
    st.subheader("Result")
    run_views.show_result(run_id)
