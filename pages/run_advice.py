"""The Run page's advice before running: which encoder for this dataset (not a page itself).

:func:`show` draws one expander: the recommendation of :func:`encbench.advisor.recommend` for a
model, metric and tuning, the similar reference datasets of the target's task (binary: the
published datasets and encbench's binary R suite; multiclass, regression: encbench's own benchmark
on its R suite of the task), the dataset's meta-features beside the reference range, the
leave-one-dataset-out validation of the advisor, and one button that runs the recommended
encoders plus OH on the data (the published protocol) through the run queue, then says whether
the recommendation held.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from encbench import advisor, metafeatures, vocab
from encbench.data import DatasetError
from encbench.engine.queue_requests import RunRequest, default_workers
from encbench.store import queries
from pages.ui import run_panels, store
from pages.ui.navigation import ensure_routed, guarded
from pages.ui.session import session_owner
from pages.ui.store import data_key, get_reader
from pages.ui.text import md_text

if __name__ == "__main__":  # opened as a page (/run_advice, before app.py's navigation ran)
    ensure_routed()

#: encoders shown per ranking
SHOWN = 10
#: the verification run's timeout per fold task (the Run page's default)
TIMEOUT = 600.0
_CHECKS = "advice-checks"  # session state: run id -> what that verification run checks


@st.cache_data(show_spinner="Describing your data ...", max_entries=16)
def _features(data_id: str, target: str, positive, categorical: tuple | None, drop: tuple,
              _frame: pd.DataFrame, task: str | None = None) -> metafeatures.MetaFeatures:
    """The meta-features of the table as the run would see it (cached by content and choices)."""
    kept = _frame.drop(columns=[c for c in drop if c in _frame.columns])
    return metafeatures.from_frame(kept, target, positive, list(categorical) if categorical else None, task=task)


def _reference(task: str) -> pd.DataFrame:
    """The task's reference scores (the shipped files: published results and the R suites'; cached
    by the library until a file changes)."""
    return advisor.reference_scores(task)


@st.cache_data(show_spinner="Finding similar reference datasets ...", max_entries=64)
def _advice(db: str, version: tuple, features: metafeatures.MetaFeatures, model: str, scoring: str,
            tuning: str) -> advisor.Recommendation:
    scores = _reference(features.task)
    return advisor.recommend(features, scores[scores["tuning"] == tuning], model=model, scoring=scoring,
                             tuning=tuning)


def _interval_table(frame: pd.DataFrame) -> pd.DataFrame:
    shown = frame.head(SHOWN).copy()
    shown["95% interval"] = [f"{int(lo)}-{int(hi)}" if pd.notna(lo) else ""
                             for lo, hi in zip(shown["low"], shown["high"])]
    return shown[["encoder", "rank", "95% interval"]]


def _validation_table(tuning: str, model: str, scoring: str, task: str = "binary") -> pd.DataFrame:
    table = advisor.validation_summary(task=task)
    table = table[table["tuning"] == tuning]
    return pd.DataFrame({
        "model": table["model"], "metric": table["scoring"], "datasets": table["n_datasets"], "k": table["k"],
        "advisor": table["regret_advisor"], "global winner": table["regret_global"], "OH": table["regret_OH"],
        "random": table["regret_random"], "W/T/L": [f"{w}/{t}/{lo}" for w, t, lo in
                                                    zip(table["wins"], table["ties"], table["losses"])],
        "p": table["p_value"],
        "recommends": [{"neighbours": "advisor", "global": "global winner"}.get(p, p)
                       for p in (advisor.choose_policy(row) for row in table.to_dict("records"))],
        "this": (table["model"] == model) & (table["scoring"] == scoring),
    })


def _queue_check(result: advisor.Recommendation, *, staged, bundled: str | None, target: str, positive,
                 categorical, drop: list[str], time_column: str | None, data_id: str) -> None:
    from encbench.metrics import metrics_for
    from encbench.uploads import queue_upload_run

    encoders = list(dict.fromkeys([*result.recommended, advisor.BASELINE_ENCODER]))
    kwargs = dict(encoders=encoders, models=[result.model], scorings=list(metrics_for(result.task)),
                  tuning=result.tuning,
                  timeout=TIMEOUT, workers=default_workers(), owner=session_owner())
    queue = run_panels.queue()
    try:
        if bundled is not None:
            request = RunRequest.bundled(bundled, **kwargs)
            request.submit(queue)
            grid = request.grid
        else:  # the published stratified folds; a time column chosen above is set aside, as in the advice
            grid = queue_upload_run(staged, target=target, positive_class=positive, categorical=categorical,
                                    drop=drop, db_path=store.db_path(), task=result.task,
                                    split=f"cv:{time_column}" if time_column else "cv", **kwargs)
    except (DatasetError, ValueError) as exc:
        st.error(md_text(exc))
        return
    queue.ensure_worker()
    st.session_state.setdefault(_CHECKS, {})[grid.run_id] = {
        "data": data_id, "recommended": list(result.recommended), "model": result.model,
        "scoring": result.scoring, "tuning": result.tuning}
    st.session_state["last_run"] = grid.run_id  # the page's "Your run" follows it
    st.session_state["last_runs"] = [grid.run_id]


@st.fragment(run_every=2.0)
@guarded
def _verdict(run_id: str, check: dict) -> None:
    db, _ = data_key()
    rows = queries.load_scores(get_reader(db), run_ids=[run_id])
    rows = rows[(rows["model"] == check["model"]) & (rows["tuning"] == check["tuning"])]
    outcome = advisor.verify(rows, check["recommended"], scoring=check["scoring"])
    show = {"held": st.success, "partly": st.info, "not held": st.warning, "incomplete": st.caption}[outcome.verdict]
    with st.container(key=f"advice-verdict-{outcome.verdict.replace(' ', '-')}"):
        show(outcome.message)
        table = outcome.table.assign(recommended=[str(p) if p else "baseline" for p in outcome.table["recommended"]])
        st.dataframe(table.rename(columns={"cv_score": f"{check['scoring']} on your data",
                                           "rank": "rank among those run"}),
                     hide_index=True, width="stretch")
    st.caption(f"Run `{run_id}` ({check['model']}, {check['tuning']} tuning, every metric); its full result "
               f"is under *Your run* below.")


@guarded
def show(frame: pd.DataFrame, target: str, positive=None, categorical=None, *, data_id: str, staged=None,
         bundled: str | None = None, drop=(), time_column: str | None = None, task: str | None = None) -> None:
    """The advice expander for a validated table.

    Parameters
    ----------
    frame : pandas.DataFrame
        The whole table as read (target included).
    target, positive, categorical
        The choices made on the page (``categorical`` None: inferred).
    data_id : str
        Names the data for the caches and the verification runs (content hash or bundled name).
    staged, bundled
        The staged upload or the bundled dataset's name: where the verification run reads from.
    drop, time_column
        Columns the run leaves out (a time column is set aside under the published folds).
    task : str, optional
        The task chosen on the page (default: inferred from the target).
    """
    drop = [*drop, *([time_column] if time_column else [])]
    with st.expander("Which encoder for my data? Advice from the reference results, before running",
                     expanded=True, icon=":material/recommend:"):
        try:
            features = _features(data_id, target, positive, tuple(categorical) if categorical else None,
                                 tuple(drop), frame, task)
        except ValueError as exc:
            st.warning(f"No advice for this table: {md_text(exc)}")
            return
        task = features.task
        reference = _reference(task)
        if reference.empty:
            st.info(f"No reference results for a {task} target yet ({advisor.reference_label(task)}).")
            return
        c1, c2, c3 = st.columns(3)
        # binary: the study's models and metrics; other tasks: those the suite's results hold
        models = (list(vocab.STUDY_MODELS) if task == "binary"
                  else vocab.ordered("model", reference["model"].unique()))
        metrics = list(vocab.METRICS) if task == "binary" else vocab.ordered("scoring", reference["scoring"].unique())
        suffix = "" if task == "binary" else f"-{task}"  # each task's own choices
        # the linear model and the study's metric first (a regression target: Ridge and RMSE)
        first_model = next((models.index(m) for m in ("LogReg", "Ridge") if m in models), 0)
        first_metric = next((metrics.index(m) for m in ("AUC", "RMSE") if m in metrics), 0)
        model = c1.selectbox("Model", models, index=first_model, key=f"advice-model{suffix}")
        scoring = c2.selectbox("Metric", metrics, index=first_metric, key=f"advice-metric{suffix}")
        tuning = c3.selectbox("Tuning", vocab.ordered("tuning", reference["tuning"].unique()),
                              key=f"advice-tuning{suffix}")
        db, version = data_key()
        try:
            result = _advice(db, version, features, model, scoring, tuning)
        except ValueError as exc:
            st.warning(md_text(exc))
            return
        n_reference = len(metafeatures.reference_metafeatures(task))
        source = {"neighbours": "from the similar datasets", "global": "the global consensus",
                  advisor.BASELINE_ENCODER: f"{advisor.BASELINE_ENCODER} first: the validation's best policy"}
        with st.container(key=f"advice-{result.use}"):
            st.markdown(f"**Recommended: {', '.join(result.recommended)}** ({source[result.use]})")
            (st.success if result.use == "neighbours" else st.info)(result.message)
        names = ", ".join(md_text(n) for n in result.neighbours["name"].head(8))
        more = f" and {result.k - 8} more" if result.k > 8 else ""
        known = f"known for {n_reference} reference datasets ({advisor.reference_label(task)}"
        if task == "binary":
            published = metafeatures.published_metafeatures()
            complete = len(metafeatures.published_metafeatures(complete=True))
            known += f"; {complete} of the {len(published)} published ones: the others have no file here"
        known += ")"
        st.caption(f"The {result.k} similar datasets, nearest first: {names}{more}. "
                   f"Similarity is by meta-features, {known}; the global consensus uses all "
                   f"{result.n_reference} with scores.")
        rankings, similar, yours, validation = st.tabs(["Rankings", "Similar datasets", "Your data", "Validation"])
        with rankings:
            left, right = st.columns(2)
            left.markdown(f"R-M over the {result.k} similar datasets")
            left.dataframe(_interval_table(result.local), hide_index=True, width="stretch")
            right.markdown(f"Global R-M over every reference {task} dataset")
            right.dataframe(_interval_table(result.overall), hide_index=True, width="stretch")
            st.caption("Rank 1 is best; the interval is the central 95% of the ranks over 1,000 bootstrap "
                       "resamples of the datasets.")
        with similar:
            st.dataframe(result.neighbours, hide_index=True, width="stretch")
        with yours:
            st.dataframe(metafeatures.comparison_table(features), hide_index=True, width="stretch")
        with validation:
            st.caption(f"Leave-one-dataset-out over the reference {task} datasets with meta-features "
                       f"(a setting held out on fewer than {advisor.MIN_VALIDATED} is not followed): mean regret "
                       "(the held-out dataset's best score minus the score of the encoder picked without "
                       "it) of the advisor, the global R-M winner, OH and a random encoder; W/T/L counts "
                       "the datasets where the advisor did better, as well, worse than the global winner; "
                       "the recommendation follows the policy of lowest mean regret among the global winner, "
                       f"always OH and the advisor, the advisor only where it beats the global winner at "
                       f"p < {advisor.ALPHA:g} (Wilcoxon). The row of this setting is marked.")
            st.dataframe(_validation_table(tuning, model, scoring, task), hide_index=True, width="stretch")
        encoders = list(dict.fromkeys([*result.recommended, advisor.BASELINE_ENCODER]))
        folds = "shuffled" if task == "regression" else "stratified"
        if st.button(f"Verify on your data: run {', '.join(encoders)} with {model}", key="advice-verify",
                     help=f"The published protocol ({tuning} tuning, 5 {folds} folds, every metric of the "
                          f"task) through "
                          f"the run queue; then the recommended encoders' rank among those run."):
            _queue_check(result, staged=staged, bundled=bundled, target=target, positive=positive,
                         categorical=categorical, drop=[c for c in drop if c != time_column],
                         time_column=time_column, data_id=data_id)
        checks = [(run_id, c) for run_id, c in st.session_state.get(_CHECKS, {}).items() if c["data"] == data_id]
        if checks:
            _verdict(*checks[-1])
