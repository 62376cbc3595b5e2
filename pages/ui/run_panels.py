"""The Run and Runs pages' shared pieces: the queue, each run's progress bar, its result beside
the published consensus, and whether its best encoders change between splits."""
from __future__ import annotations


import pandas as pd
import streamlit as st

from encbench.engine.queue import RunQueue
from encbench import plots
from encbench.advisor import reference_scores
from encbench.experiment import SETTING
from encbench.views.run_result import (
    ALPHA, DECIMALS, DROP, RunAnswer, compare_splits, compare_with_published, pool_run, published_agreement,
    setting_label, split_headline, vocab_sorted,
)
from encbench.views.run_tasks import config_of
from encbench.views.runs import format_duration, progress_table
from encbench.store import queries
from pages.ui import exports, session, store, text



def queue() -> RunQueue:
    """The database's run queue; read-only on a read-only server, which creates no file."""
    return RunQueue(store.db_path(), read_only=session.read_only())


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
    done, total = int(row["done"]), int(row["total"]) if pd.notna(row["total"]) else 0
    label = f"{row['status']}: {done:,} / {total:,} result rows"
    eta = format_duration(row.get("eta_s"))
    if eta:
        label += f", about {eta} left"
    if row.get("n_failed", 0) or row.get("n_timeout", 0):
        label += f" ({int(row['n_failed'])} failed, {int(row['n_timeout'])} timed out)"
    st.progress(min(done / total, 1.0) if total else 0.0, text=label)
    if row.get("status") == "failed" and isinstance(row.get("error"), str) and row["error"]:
        st.error(f"The run failed: {text.md_text(row['error'])}")


def show_result(run_id: str, *, strategy: str = "R-M", n_classes: int | None = None) -> None:
    """The run's answer per dataset: which encoder, how sure, the warnings, a chart of the
    scores with their fold spread and one export of the whole result; then the detail of each
    setting beside the published consensus. ``n_classes``: the target's classes, for the chance
    level of a multiclass balanced accuracy (unknown: that check is left out)."""
    db, version = store.data_key()
    reader = store.get_reader(db)
    local = queries.load_scores(reader, run_ids=[run_id])
    if local.empty:
        st.info("No finished experiment yet: results appear here as folds complete.")
        return
    published = store.scores(db, version, origins=("published",),
                              models=tuple(local["model"].unique()),
                              tunings=tuple(local["tuning"].unique()),
                              scorings=tuple(local["scoring"].unique()))
    reference = _reference(tuple(local["model"].unique()), tuple(local["tuning"].unique()),
                           tuple(local["scoring"].unique()))
    names = store.datasets_table(db, version).set_index("dataset")["name"]
    several = local["dataset"].nunique() > 1
    for dataset, rows in local.groupby("dataset"):
        name = str(names.get(dataset, dataset))
        st.subheader(f"Dataset {text.md_text(name)}")
        # beside the run: the advice's own global consensus (its reference datasets); the
        # agreement banner compares with the published cells alone
        comparisons = compare_with_published(rows, reference, strategy=strategy)
        answer = _answer(db, version, run_id, str(dataset), n_classes)
        item = f"result-{dataset}" if several else "result"   # keys and file names apart per dataset
        whole = result_table(answer, comparisons, name, strategy) if answer is not None else None
        if answer is not None:  # the answer first, then what qualifies it
            _show_answer(answer, dataset)
        show_agreement(dataset, rows, published, name)
        show_split_change(dataset)
        if answer is not None:
            filters = result_filters(run_id, name, dataset, rows)
            provenance = exports.provenance("run-result", filters, rows.assign(origin="local"), version,
                                      task=str(rows["task"].iloc[0]) if "task" in rows else None)
            chart = plots.run_scores_chart(
                answer.per_setting.assign(setting=[setting_label(s) for s in
                                                   answer.per_setting[list(SETTING)].to_dict("records")]),
                order=answer.ranking["encoder"].tolist(), best=answer.best)
            exports.show_chart(chart, item, provenance, table=(whole, item))
            st.caption("Each panel is one setting: the mean score over the outer folds and one standard "
                       "deviation either side; highlighted, the encoders the paired test cannot tell from "
                       "the best. The download holds the chart and the whole result (every setting and "
                       "encoder, with the pooled ranking) as one table.")
        st.markdown("**Per setting**")
        for comp in comparisons:
            _show_setting(comp, rows, answer)


def _reference(models: tuple, tunings: tuple, scorings: tuple) -> pd.DataFrame:
    """The binary reference scores the advice ranks by (:func:`encbench.advisor.reference_scores`:
    the published datasets and encbench's binary suite) for these settings."""
    scores = reference_scores("binary")
    return scores[scores["model"].isin(models) & scores["tuning"].isin(tunings) & scores["scoring"].isin(scorings)]


@st.cache_data(show_spinner=False, max_entries=32)
def _answer(db: str, version: tuple, run_id: str, dataset: str, n_classes: int | None) -> RunAnswer | None:
    """The run's pooled answer on one dataset (None before a complete experiment), computed once
    per snapshot: the page polls every 2 s, the snapshot changes only when results arrive."""
    folds = queries.fold_scores(store.get_reader(db), [run_id])
    mine = folds[folds["dataset"].astype(str) == dataset]
    return pool_run(mine, n_classes=n_classes) if not mine.empty else None


def _show_answer(answer: RunAnswer, dataset: str) -> None:
    """The pooled answer: the headline, its warnings, the pooled ranking."""
    with st.container(border=True, key=f"answer-{dataset}"):
        st.markdown(f"**Which encoder for this data?** {text.md_text(answer.headline)}")
        for check in answer.baselines:
            st.warning(text.md_text(check.message), icon=":material/warning:")
        if DROP not in set(answer.ranking["encoder"]):
            st.caption(f"{DROP} (the categorical columns left out) was not run: add it to see whether "
                       f"encoding them helps at all.")
        table = answer.ranking.assign(
            vs_best=[("" if e == answer.winner else f"{a} above / {b} below")
                     for e, a, b in zip(answer.ranking["encoder"], answer.ranking["above_winner"],
                                        answer.ranking["below_winner"])],
            told_apart=[("best" if e == answer.winner else "no" if e in answer.best else "yes")
                        for e in answer.ranking["encoder"]])
        shown = table[["encoder", "rank", "mean_rank", "vs_best", "p_vs_winner", "told_apart", "mean_sd"]]
        st.dataframe(shown, hide_index=True, width="stretch", column_config={
            "rank": st.column_config.NumberColumn("pooled rank", help="1 = best, by the mean rank."),
            "mean_rank": st.column_config.NumberColumn(
                "mean rank", format="%.2f",
                help=f"Mean of the encoder's rank in each setting x fold ({answer.n_settings} x {answer.n_folds})."),
            "vs_best": st.column_config.TextColumn(
                f"vs {answer.winner}", help="Setting x fold blocks where it ranks above / below the best."),
            "p_vs_winner": st.column_config.NumberColumn(
                "p", format="%.3f", help="Paired t-test over folds of the rank difference with the best, "
                                         "corrected for the overlap of training folds (Nadeau-Bengio)."),
            "told_apart": st.column_config.TextColumn(
                "worse than the best?", help=f"yes: p < {ALPHA:g}; no: the data cannot tell it from the best."),
            "mean_sd": st.column_config.NumberColumn(
                "fold sd", format="%.4f", help="Standard deviation of its score over folds, averaged "
                                               "over the settings."),
        })


def _show_setting(comp, rows: pd.DataFrame, answer: RunAnswer | None) -> None:
    """One setting's detail, collapsed: its summary, its ranking with the fold spread and the
    published consensus (binary only)."""
    label = setting_label({**comp.setting, "split": comp.split})
    best = comp.table.loc[comp.table["rank"] == 1, "encoder"].tolist()
    with st.expander(f"{label}: best {', '.join(best)}"):
        st.write(comp.summary)
        if comp.split == "time" and comp.task == "binary":
            st.caption("These scores come from forward folds in time (split *time*); the published "
                       "consensus beside them, from the published stratified folds (*cv*).")
        table = comp.table
        if answer is not None:
            spread = answer.per_setting
            spread = spread[(spread["model"] == comp.model) & (spread["tuning"] == comp.tuning)
                            & (spread["scoring"] == comp.scoring) & (spread["split"] == comp.split)]
            table = table.merge(spread[["encoder", "sd", "n_folds"]], on="encoder", how="left")
        folds = "folds" if "n_folds" not in table else f"{int(table['n_folds'].max())} {comp.split} folds"
        score = f"{comp.scoring} (mean of {folds})"
        published_rank = f"reference {comp.strategy} rank"
        table = table.rename(columns={"cv_score": score, "sd": "fold sd", "n_folds": "folds",
                                      "rank": "rank on your data", "published_rank": published_rank})
        if comp.task != "binary":  # no published reference beyond the study's binary task
            table = table.drop(columns=[published_rank])
        # the score beside its spread, then the ranks
        table = table[[c for c in ("encoder", score, "fold sd", "folds", "rank on your data", published_rank)
                       if c in table.columns]]
        shown, as_text = exports.dash_missing(table, {published_rank: "{}"})
        config = {c: st.column_config.TextColumn(c, alignment="right") for c in as_text}
        if published_rank in table:
            about = ("The advice's global order over its reference datasets (the study's published ones "
                     "and encbench's binary suite), among the encoders run.")
            config[published_rank] = (st.column_config.TextColumn(published_rank, alignment="right", help=about)
                                      if published_rank in as_text else
                                      st.column_config.NumberColumn(published_rank, help=about))
        config[score] = st.column_config.NumberColumn(score, format=f"%.{DECIMALS}f")
        config["fold sd"] = st.column_config.NumberColumn("fold sd", format=f"%.{DECIMALS}f")
        st.dataframe(shown, hide_index=True, width="stretch", column_config=config)


def result_table(answer: RunAnswer, comparisons, name: str, strategy: str) -> pd.DataFrame:
    """The whole result of a run on one dataset as one table: a row per setting and encoder
    (the score, its fold spread, its rank in the setting and the published one), with the
    encoder's pooled rank and its test against the best."""
    table = answer.per_setting.rename(columns={"score": "score_mean", "sd": "score_fold_sd",
                                               "rank": "rank_in_setting"})
    # a published rank only where the study has a task to compare with (binary)
    binary = [c for c in comparisons if c.task == "binary"]
    published = pd.concat([c.table.assign(model=c.model, tuning=c.tuning, scoring=c.scoring, split=c.split)
                           for c in binary], ignore_index=True) if binary else None
    if published is not None and "published_rank" in published:
        table = table.merge(published[["model", "tuning", "scoring", "split", "encoder", "published_rank"]]
                            .rename(columns={"published_rank": f"reference_{strategy}_rank"}),
                            on=["model", "tuning", "scoring", "split", "encoder"], how="left")
    pooled = answer.ranking.rename(columns={"rank": "pooled_rank", "mean_rank": "pooled_mean_rank",
                                            "p_vs_winner": "pooled_p_vs_best"})
    table = table.merge(pooled[["encoder", "pooled_rank", "pooled_mean_rank", "pooled_p_vs_best"]],
                        on="encoder", how="left")
    return table.assign(dataset=name)[["dataset", *[c for c in table.columns]]]


def result_filters(run_id: str, name: str, dataset: str, rows: pd.DataFrame) -> dict:
    """What an export of a run's result was computed from, for its provenance and its file name:
    the dataset by its name (the file's, not its key), the run, the factors, and the split of its
    folds (cv, or time for forward folds); the dataset's key last."""
    def values(column):
        return vocab_sorted(rows[column].unique()) if column == "encoder" else sorted(map(str, rows[column].unique()))

    return {"dataset": name, "run": run_id, "model": values("model"), "metric": values("scoring"),
            "tuning": values("tuning"), "split": ",".join(sorted(set(rows["split"]))), "dataset_key": dataset}


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
