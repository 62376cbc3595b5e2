"""Runs: the runs of the sidebar's task with status and progress; errors; cancel, resume, delete;
results."""
from __future__ import annotations

import streamlit as st

from encbench import vocab
from encbench.engine.queue_requests import DeleteRequest, RunRequest, custom_encoder_problems, dataset_source_problem
from encbench.store import queries
from encbench.views.run_tasks import run_tasks, runs_of_task, task_label
from encbench.views.runs import WAITING, error_for_others, format_duration, hide_upload_paths, upload_paths
from pages.ui import run_panels
from pages.ui.exports import MISSING
from pages.ui.filters import DEFAULT_TASK, task_filter
from pages.ui.navigation import ensure_routed, guarded
from pages.ui.session import owns, read_only, read_only_notice, session_owner
from pages.ui.store import data_key, datasets_table, get_reader, runs_table
from pages.ui.text import md_code

ensure_routed()

ACTIVE = ("queued", "running", WAITING)  # WAITING: the worker retries a busy database


def _tasks(table, read) -> dict[str, tuple[str, ...] | None]:
    """Each listed run's task types (None while not known: queued, its target not read yet),
    from the queue's requests ``read`` for the progress table."""
    db, version = data_key()
    runs = runs_table(db, version)[["run_id", "config"]]
    requests = {r.run_id: r.payload.get("grid", {}) for r in (*read[0], *read[1], *read[2]) if r.kind == "run"}
    return run_tasks(table[["run_id", "origin"]].merge(runs, on="run_id", how="left"),
                     datasets_table(db, version), requests)


def _of_task(table, task: str, read):
    """The rows of ``table`` listed under ``task``, with a ``task`` column; and how many runs of
    other tasks are left out, per task."""
    tasks = _tasks(table, read)
    kept = table[table["run_id"].isin(runs_of_task(tasks, task))]
    others: dict[str, int] = {}
    for run_id in set(table["run_id"]) - set(kept["run_id"]):
        for other in tasks[run_id] or ():
            others[other] = others.get(other, 0) + 1
    return kept.assign(task=[task_label(tasks[r]) for r in kept["run_id"]]), others


@st.fragment(run_every=3.0)
@guarded
def _overview(queue, task: str) -> None:
    """The runs of ``task`` with their progress, and the background worker's state; every 3 s."""
    read = run_panels.requests(queue)       # once per rerun, for the progress and the tasks
    table = run_panels.progress(queue, read)
    running = queue.worker_running()
    pid = queue.worker_pid()
    state = f"running (pid {pid})" if running else "idle (starts when a run is queued)"
    st.caption(f"Background worker: {state}.")
    if table.empty:
        st.info("No runs yet.")
        return
    table, others = _of_task(table, task, read)
    table["task"] = table["task"].fillna(MISSING)
    if others:
        st.caption("Not listed: " + ", ".join(f"{n} {t} run{'s' if n > 1 else ''}" for t, n in
                                            sorted(others.items(), key=lambda kv: vocab.TASKS.index(kv[0])))
                   + " (choose the task in the sidebar).")
    if table.empty:
        st.info(f"No {task} runs yet: launch one on the Run page, or choose another task in the sidebar.")
        return
    shown = table.assign(
        # a run started without --label (from the command line) has none: a dash, not "None"
        label=[lab if isinstance(lab, str) and lab.strip() else MISSING for lab in table["label"]],
        progress=[d / t if t else None for d, t in zip(table["done"], table["total"])],
        rows=[f"{d:,} / {t:,}" if t else f"{d:,}" for d, t in zip(table["done"], table["total"])],
        eta=[format_duration(e) for e in table["eta_s"]],
    )[["label", "status", "progress", "rows", "n_failed", "n_timeout", "eta", "created_at",
       "finished_at", "task", "run_id"]]
    # Explicit widths that add up to less than the page's column (938 px at 1400 px): sized to
    # their content the columns took 1,205 px and "cancelled" was cut to "cancellec".
    # The origin is in the run id (published-/local-); done/total read as one "rows" column.
    st.dataframe(shown, hide_index=True, width="stretch", column_config={
        "label": st.column_config.TextColumn("label", width=130,
                                             help="The name given with encbench run --label; a dash when it has none."),
        "status": st.column_config.TextColumn("status", width=95),
        "progress": st.column_config.ProgressColumn("progress", min_value=0.0, max_value=1.0,
                                                    format="percent", width=85),
        "rows": st.column_config.TextColumn("rows", width=95, help="result rows done / expected"),
        "n_failed": st.column_config.NumberColumn("failed", width=55),
        "n_timeout": st.column_config.NumberColumn("timeout", width=62),
        "eta": st.column_config.TextColumn("eta", width=62, help="estimated time left"),
        **{c: st.column_config.DatetimeColumn(c.replace("_at", ""), format="MM-DD HH:mm", width=90)
           for c in ("created_at", "finished_at")},
        "task": st.column_config.TextColumn("task", width=70,
                                            help="The run's task type; a dash while it is not known yet."),
        "run_id": st.column_config.TextColumn("run", width=100),
    })


@guarded
def _detail(queue, run_id: str, deleting: set[str]) -> None:
    """One run: its controls (cancel, resume, delete), progress, configuration, errors and result.
    A fragment, refreshed every 3 s while the run changes (see main())."""
    row = run_panels.run_progress(run_id)
    if row is None:
        st.info(f"Run {run_id} was deleted.")
        return
    db, version = data_key()
    runs = runs_table(db, version).set_index("run_id")
    config = run_panels.run_config(runs.loc[run_id]) if run_id in runs.index else {}
    is_published = row["origin"] == "published"
    cancel_requested = queue.is_cancelled(run_id) and row["status"] in ACTIVE
    # Stopping or removing a run belongs to the session that launched it (or the command line);
    # anyone may look at it, and resume it (which adds results, never removes any).
    owned = owns(row["owner"]) and not is_published
    shown_config = config
    if not owned:  # nor may anyone else learn where its uploaded file is kept
        paths = upload_paths(config)
        shown_config = hide_upload_paths(config, paths)
        row = row.copy()
        # nor read an error that may quote its data file (a parse error quotes a line)
        row["error"] = hide_upload_paths(error_for_others(row["error"], config, row["origin"]), paths)

    if not read_only():
        with st.container(horizontal=True):
            if owned and st.button("Cancel", key="cancel",
                                   disabled=row["status"] not in ACTIVE or cancel_requested):
                queue.cancel(run_id)
                st.rerun(scope="fragment")
            # a command-line run on a file outside the uploads, or with a custom encoder that is no
            # installed plugin, resumes from the command line only
            queueable = (not any(dataset_source_problem(d, queue.db_path) for d in config.get("datasets") or ())
                         and not custom_encoder_problems(config.get("custom_encoders")))
            can_resume = (not is_published and row["status"] in ("cancelled", "failed", "interrupted", "done")
                          and bool(config.get("datasets")) and queueable)
            if st.button("Resume", key="resume", disabled=not can_resume,
                         help="Queue the unfinished part again (finished experiments are kept), with as "
                              "many parallel task processes as the run had." + (
                                  "" if queueable else " This run reads a file the app did not store, or "
                                  "builds an encoder that is no installed plugin: resume it from the command "
                                  "line (encbench run, same options).")):
                RunRequest.resume(config, queue).submit(queue)
                queue.ensure_worker()
                st.rerun()
            if owned:
                confirm = st.checkbox(f"Confirm: delete run {run_id}", key="confirm_delete")
                if st.button("Delete", key="delete", disabled=not confirm,
                             help="Removes the run's results and, if no other run uses it, its uploaded file."):
                    DeleteRequest(run_id, owner=session_owner()).submit(queue)
                    queue.ensure_worker()
                    st.rerun()
    if is_published:
        st.caption("The published results cannot be deleted from the app.")
    elif not owned and not read_only():
        st.caption(f"Only the browser session that launched this run can cancel or delete it (from the "
                   f"command line: `encbench runs --delete {run_id}`).")
    if cancel_requested:
        st.caption("Cancel requested: the run stops after the tasks in flight.")
    if run_id in deleting:
        st.caption("Delete requested: the background worker removes the run's rows shortly.")

    run_panels.show_progress(row)
    with st.expander("Configuration"):
        st.json(shown_config or {"note": "not recorded"})
    errors = queries.run_errors(get_reader(db), run_id)
    if len(errors) and not owned:
        errors = errors.assign(error=[hide_upload_paths(error_for_others(e, config, row["origin"]), paths)
                                      for e in errors["error"]])
    if len(errors):
        st.subheader(f"Failed experiments ({len(errors)})")
        st.dataframe(errors, hide_index=True, width="stretch")
    if config.get("custom_encoders"):  # the new encoder's place among the published 32
        st.page_link("pages/new_encoder.py", label=f"Where {', '.join(config['custom_encoders'])} ranks "
                     f"among the published 32", icon=":material/add_chart:", query_params={"run": run_id})
    if row["origin"] == "local":
        st.subheader("Result")
        run_panels.show_result(run_id)


def main() -> None:
    """The page: the runs of the sidebar's task, then the chosen run in detail."""
    st.title("Runs")
    if read_only():
        read_only_notice("runs are listed with their results, but none can be cancelled, resumed "
                         "or deleted.")
    queue = run_panels.queue()
    run_panels.keep_worker_alive(queue)

    # A link naming a run of another task than the one shown (the Run page's link to a regression
    # run, a bookmark) opens on that run's task, so the run it names is listed and chosen; so does
    # the menu's link after a launch, for the run launched, unless a task was chosen.
    linked = st.query_params.get("run")
    wanted = (linked if linked and linked != st.session_state.get("runs-url-run")
              else None if "task" in st.query_params or "task" in st.session_state
              else st.session_state.get("last_run"))
    if wanted:
        read = run_panels.requests(queue)
        wanted_tasks = _tasks(run_panels.progress(queue, read), read).get(wanted)
        shown_task = st.session_state.get("task", st.query_params.get("task", DEFAULT_TASK))
        if wanted_tasks and shown_task not in wanted_tasks:
            st.session_state["task"] = wanted_tasks[0]
    task = task_filter()
    st.caption(f"Runs of **{task}** tasks, as the sidebar's Task says, and runs whose task is not known "
               f"yet (queued, their target not read); a run over datasets of several tasks is listed "
               f"under each.")

    _overview(queue, task)

    read = run_panels.requests(queue)
    table, _ = _of_task(run_panels.progress(queue, read), task, read)
    if table.empty:
        st.stop()
    labels = {r.run_id: f"{r.label or 'unnamed run'} · {r.run_id}" for r in table.itertuples()}
    run_ids = list(labels)
    # The chosen run lives in the URL by its id (labels can repeat and statuses change). A run the
    # URL names that this page did not put there (a link, the Run page's "Queued run") wins over the
    # choice the widget remembers from an earlier visit; one that does not exist is said, not hidden.
    if linked and linked != st.session_state.get("runs-url-run"):
        if linked in run_ids:
            st.session_state["run_choice"] = linked
        else:
            st.warning(f"The link names run {md_code(linked)}, which this database does not have "
                       f"(deleted, or from another database); ignored.")
    if st.session_state.get("run_choice") not in run_ids:  # first visit, or the run was deleted
        st.session_state.pop("run_choice", None)
        if st.session_state.get("last_run") in run_ids:
            st.session_state["run_choice"] = st.session_state["last_run"]
    run_id = st.selectbox("Run", run_ids, format_func=labels.get, key="run_choice")
    st.query_params["run"] = run_id
    st.session_state["runs-url-run"] = run_id
    deleting = {r.run_id for r in queue.pending() + queue.active() if r.kind == "delete"}
    # refresh the detail while the run changes: running, queued, or about to be deleted
    is_active = table.set_index("run_id").loc[run_id, "status"] in ACTIVE or run_id in deleting
    st.fragment(run_every=3.0 if is_active else None)(_detail)(queue, run_id, deleting)


main()
