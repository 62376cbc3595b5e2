"""The Run and Runs pages' shared pieces: the queue, each run's progress bar, its result beside
the published consensus, and whether its best encoders change between splits."""
from __future__ import annotations


import pandas as pd
import streamlit as st

from encbench.engine.queue import RunQueue
from encbench.views.run_result import (
    MIN_SHARED, compare_splits, compare_with_published, published_agreement, split_headline,
)
from encbench.views.run_tasks import config_of
from encbench.views.runs import format_duration, progress_table
from encbench.store import queries
from pages.ui import exports, session, store, text



def queue() -> RunQueue:
    return RunQueue(store.db_path())


def keep_worker_alive(q: RunQueue) -> None:
    """Start the worker when requests wait and none is running (e.g. it was killed); never on a
    read-only server, which starts no process."""
    if session.read_only():
        return
    if (q.pending() or q.active()) and q.ensure_worker():
        st.toast("Started the background worker for queued runs.", icon=":material/play_circle:")


def requests(q: RunQueue) -> tuple[list, list, list]:
    """The queue's pending, active and done requests, read from its files now."""
    return q.pending(), q.active(), q.done()


def progress(q: RunQueue, read: tuple[list, list, list] | None = None) -> pd.DataFrame:
    """Every run's progress, from the newest snapshot and the queue's requests (``read`` by
    :func:`requests`, or read fresh)."""
    db, version = store.data_key()
    return progress_table(store.runs_table(db, version), *(read or requests(q)),
                          worker_running=q.worker_running())


def run_progress(run_id: str) -> pd.Series | None:
    """The progress row of one run, or None if it is neither queued nor in the database."""
    table = progress(queue())
    rows = table[table["run_id"] == run_id]
    return rows.iloc[0] if len(rows) else None


def show_progress(row: pd.Series) -> None:
    done, total = int(row["done"]), int(row["total"] or 0)
    label = f"{row['status']}: {done:,} / {total:,} result rows"
    eta = format_duration(row.get("eta_s"))
    if eta:
        label += f", about {eta} left"
    if row.get("n_failed", 0) or row.get("n_timeout", 0):
        label += f" ({int(row['n_failed'])} failed, {int(row['n_timeout'])} timed out)"
    st.progress(min(done / total, 1.0) if total else 0.0, text=label)
    if row.get("status") == "failed" and isinstance(row.get("error"), str) and row["error"]:
        st.error(f"The run failed: {text.md_text(row['error'])}")


def show_result(run_id: str, *, strategy: str = "R-M") -> None:
    """The run's encoder ranking per model/metric next to the published consensus."""
    db, version = store.data_key()
    local = queries.load_scores(store.get_reader(db), run_ids=[run_id])
    if local.empty:
        st.info("No finished experiment yet: results appear here as folds complete.")
        return
    published = store.scores(db, version, origins=("published",),
                              models=tuple(local["model"].unique()),
                              tunings=tuple(local["tuning"].unique()),
                              scorings=tuple(local["scoring"].unique()))
    names = store.datasets_table(db, version).set_index("dataset")["name"]
    for dataset, rows in local.groupby("dataset"):
        st.subheader(f"Dataset {text.md_text(names.get(dataset, dataset))}")
        show_split_change(dataset)
        show_agreement(dataset, rows, published, str(names.get(dataset, dataset)))
        if set(rows["split"]) == {"time"}:
            st.caption("This run used forward folds in time (split *time*); the published consensus "
                       "beside it comes from stratified folds (*cv*).")
        for comp in compare_with_published(rows, published, strategy=strategy):
            with st.container(border=True):
                st.markdown(f"**{comp.model} / {comp.scoring} / {comp.tuning} tuning** · task {comp.task}")
                st.write(comp.summary)
                cols = st.columns(2)
                few = (None if comp.agreement_shown else
                       f"{comp.n_shared} shared encoder(s): too few for a rank correlation "
                       f"(at least {MIN_SHARED})")
                cols[0].metric("Spearman rho", f"{comp.rho:.2f}" if comp.agreement_shown else "n/a", help=few)
                cols[1].metric("Jaccard of best sets", f"{comp.jaccard:.2f}" if comp.agreement_shown else "n/a",
                               help=few)
                filters = result_filters(run_id, dataset, comp, rows)
                prov = exports.provenance("run-result", filters, rows.assign(origin="local"), version,
                                          task=comp.task)
                published_rank = f"published {strategy} rank"
                table = comp.table.rename(columns={"rank": "rank on your data", "published_rank": published_rank})
                if comp.task != "binary":  # no published reference beyond the study's binary task
                    table = table.drop(columns=[published_rank])
                # an encoder the study did not run has no published rank: a dash, not "None"
                shown, as_text = exports.dash_missing(table, {published_rank: "{}"})
                exports.show_table(
                    table,
                    # several datasets (a command-line run): the dataset keeps keys and file names apart
                    f"result-{comp.model}-{comp.scoring}" if local["dataset"].nunique() == 1
                    else f"result-{dataset}-{comp.model}-{comp.scoring}", prov, shown=shown,
                    column_config={c: st.column_config.TextColumn(c, alignment="right") for c in as_text})


def result_filters(run_id: str, dataset: str, comp, rows: pd.DataFrame) -> dict:
    """What an export of one run result was computed from, for its provenance header: the run,
    the dataset, the factors, and the split of its folds (cv, or time for forward folds)."""
    return {"run": run_id, "dataset": dataset, "model": comp.model, "metric": comp.scoring,
            "tuning": comp.tuning, "split": ",".join(sorted(set(rows["split"])))}


def show_split_change(dataset: str) -> None:
    """Say plainly whether the best encoders change between cv and time on ``dataset``,
    when local runs evaluated it under both splits."""
    db, _ = store.data_key()
    rows = queries.load_scores(store.get_reader(db), datasets=[dataset], origins=["local"])
    if not {"cv", "time"} <= set(rows["split"]):
        return
    comparisons = compare_splits(rows)
    with st.container(border=True, key=f"split-change-{dataset}"):
        st.markdown(f"**cv or time?** {split_headline(comparisons)}")
        for comp in comparisons:
            st.markdown(f"- {comp.summary}")


def show_agreement(dataset: str, local: pd.DataFrame, published: pd.DataFrame, name: str) -> None:
    """On a published dataset: how the run's scores agree with the published cells, as a
    warning when the agreement is low (:func:`encbench.views.run_result.published_agreement`)."""
    agreement = published_agreement(local, published).get(str(dataset))
    if agreement is None:
        return
    with st.container(key=f"agreement-{dataset}"):
        if agreement.low:
            st.warning(agreement.message(text.md_text(name)), icon=":material/rule:")
        else:
            st.caption(f"Published dataset: {agreement.within} of {agreement.cells} experiments "
                       f"({agreement.share:.0%}) are within {agreement.tolerance:g} of their published score.")


def run_config(row: pd.Series) -> dict:
    """A run's configuration as a dict (``{}`` when it has none or it does not read)."""
    return config_of(row.get("config"))
