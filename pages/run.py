"""Run on your data: upload (or pick a bundled dataset), validate, choose the grid, queue, watch."""
from __future__ import annotations

import dataclasses
import os
import re

import pandas as pd
import streamlit as st

from encbench import custom, vocab
from encbench.data import BUNDLED_DIR, DEFAULT_MAX_BYTES, DatasetError, list_bundled, prepare, read_table
from encbench.data.bundled import find_bundled
from encbench.data.fingerprint import match_published, recognise
from encbench.data.target import target_task
from encbench.encoders import ALL_REGISTRY, BEYOND_FAMILY, FAMILIES, applies_to_task
from encbench.encoders.registry import BEYOND_REGISTRY
from encbench.engine.grid import Grid
from encbench.engine.queue_requests import SPLIT_MODES, default_workers
from encbench.engine.splits import late_level_warnings, time_column_candidates
from encbench.metrics import metrics_for
from encbench.models import models_for
from encbench.run_form import RunForm, positive_class_choice
from encbench.uploads import previous_upload, stage_upload
from encbench.views.run_result import cv_folds
from pages import run_advice
from pages.ui import run_panels, store
from pages.ui.navigation import ensure_routed, guarded
from pages.ui.session import read_only, read_only_notice, session_owner
from pages.ui.text import md_code, md_text

ensure_routed()

MAX_MB = DEFAULT_MAX_BYTES // 1_000_000
FILE_TYPES = ["csv", "tsv", "txt", "parquet", "pq", "arff", "gz"]
N_FOLDS = Grid.n_folds  # the page runs the published protocol's folds


@st.cache_data(show_spinner="Reading the file ...", max_entries=4)
def _stage(data: bytes, filename: str, db: str):
    return stage_upload(data, filename, db_path=db)


@st.cache_data(show_spinner=False, max_entries=32)
def _bundled_frame(name: str) -> pd.DataFrame:
    return read_table(BUNDLED_DIR / find_bundled(name).file)


@st.cache_data(show_spinner=False, max_entries=16)
def _recognise(sha256: str, _frame: pd.DataFrame):
    """The published dataset an upload is a copy of, and its target column (by content hash)."""
    return recognise(_frame)


# The checks of an upload, cached by its content hash (and the choices they depend on): a widget
# change elsewhere on the page reruns the script, not the checks (seconds on a wide file).
@st.cache_data(show_spinner="Checking the columns ...", max_entries=32)
def _check(sha256: str, filename: str, target: str, positive, categorical: tuple | None, drop: tuple,
           time_column: str | None, _staged, task: str = "binary"):
    """The validation report of an upload for these choices and task type (see
    ``uploads.check_upload``); the file name is part of the key because the messages name it."""
    frame = _staged.frame.drop(columns=[*drop, *([time_column] if time_column else [])])
    return prepare(frame, target, positive, list(categorical) if categorical else None, N_FOLDS,
                   source=_staged.filename, task=task).report


@st.cache_data(show_spinner=False, max_entries=32)
def _inferred_task(sha256: str, target: str, _frame: pd.DataFrame) -> str:
    """The task type the target reads as (a target of one class counts as binary, whose check
    then says what is wrong with it)."""
    inferred = target_task(_frame[target])
    return "binary" if inferred == "single" else inferred


TASK_TEXT = {"binary": "binary classification (the published study's task)",
             "multiclass": "multiclass classification", "regression": "regression"}


def _default_models(task: str) -> list[str]:
    """The model a run starts with: LogReg (the page's binary default), else the task's first."""
    served = list(models_for(task))
    return ["LogReg"] if "LogReg" in served else ["Ridge"] if "Ridge" in served else served[:1]


def _cv_folds(task: str) -> str:
    """The outer folds of the cv split for ``task`` (:func:`encbench.views.run_result.cv_folds`),
    naming scikit-learn's KFold for a regression target."""
    return cv_folds(task) + (" (KFold)" if task == "regression" else "")


def _split_labels(task: str) -> dict[str, str]:
    cv = ("cv: shuffled folds (KFold; a regression target has no classes to stratify)"
          if task == "regression" else "cv: stratified folds (published protocol)")
    return {"cv": cv, "time": "time: forward folds over a time column", "both": "both, to compare"}


@st.cache_data(show_spinner=False, max_entries=16)
def _column_types(sha256: str, _staged) -> pd.DataFrame:
    return _staged.column_types()


@st.cache_data(show_spinner=False, max_entries=16)
def _time_candidates(sha256: str, target: str, _frame: pd.DataFrame) -> list[str]:
    return time_column_candidates(_frame, exclude=[target])


def _row_number(column: pd.Series) -> bool:
    """Whether a column counts rows: whole numbers that step by one (1, 2, 3, ... or down)."""
    numbers = pd.to_numeric(column, errors="coerce")
    if numbers.isna().any() or len(numbers) < 2:
        return False
    steps = numbers.diff().dropna().abs()
    return bool((numbers == numbers.round()).all() and (steps == 1).all())


@st.cache_data(show_spinner=False, max_entries=16)
def _published_copy(sha256: str, target: str, drop: tuple, _frame: pd.DataFrame):
    return match_published(_frame, target)


#: beyond this many feature columns, one filterable table of checkboxes replaces the two chip lists
COMPACT_PICKER = 50


def _column_picker(types: pd.DataFrame, features: list[str], suspects: list[str], key: str) -> list[str]:
    """Columns to leave out and categorical columns of a wide file, from a filterable table.

    The choices live in the session (so a filter change keeps them); the table shows the columns
    whose name contains the filter text, each with two checkboxes. Returns the columns left out;
    the categorical ones are in ``st.session_state[key + "-choice"]["categorical"]``.
    """
    inferred = set(types.loc[types["type"] == "categorical", "column"])
    choice = st.session_state.setdefault(f"{key}-choice", {
        "drop": set(suspects), "categorical": {c for c in features if c in inferred}})
    text = st.text_input("Filter columns", key=f"{key}-filter", placeholder="part of a column name",
                         help="Shows the columns whose name contains this text; the choices of the "
                              "others are kept.")
    shown = [c for c in features if text.strip().lower() in c.lower()]
    info = types.set_index("column")
    table = pd.DataFrame({
        "column": shown,
        "leave out": [c in choice["drop"] for c in shown],
        "categorical": [c in choice["categorical"] for c in shown],
        "type": info["type"].reindex(shown).tolist(),
        "distinct": info["distinct"].reindex(shown).tolist(),
        "missing": info["missing"].reindex(shown).tolist(),
    })
    edited = st.data_editor(
        table, key=f"{key}-table-{text.strip()}", hide_index=True, width="stretch", height=350,
        disabled=["column", "type", "distinct", "missing"],
        column_config={"leave out": st.column_config.CheckboxColumn(
                           help="Not a feature of the run (pre-checked: columns that look like IDs or "
                                "leak the target)."),
                       "categorical": st.column_config.CheckboxColumn(
                           help="Encoded by the encoders (inferred: text columns); other columns are "
                                "numbers.")})
    for name, out, cat in zip(edited["column"], edited["leave out"], edited["categorical"]):
        (choice["drop"].add if out else choice["drop"].discard)(name)
        (choice["categorical"].add if cat else choice["categorical"].discard)(name)
    n_drop = sum(c in choice["drop"] for c in features)
    n_cat = sum(c in choice["categorical"] and c not in choice["drop"] for c in features)
    st.caption(f"{len(features):,} feature columns: {n_drop:,} left out, {n_cat:,} categorical; "
               f"{len(shown):,} shown.")
    return [c for c in features if c in choice["drop"]]


def _select_all_encoders(on: bool) -> None:
    """All the study's encoders (``on``), or none at all (the beyond-study ones included)."""
    for family, names in FAMILIES.items():
        st.session_state[f"enc-{family}"] = list(names) if on else []
    if not on:
        st.session_state[f"enc-{BEYOND_FAMILY}"] = []


def _on_page(message: str) -> str:
    """A validation message as the page says it: ``load it with task='regression'`` (the
    library's keyword) reads ``set the Task box above to regression``."""
    return re.sub(r"load (?:it|the column|a numeric target) with task='(\w+)'",
                  lambda m: f"set the Task box above to {m.group(1)}", message)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _column_roles(staged, frame: pd.DataFrame, columns: list[str]) -> tuple:
    """An upload's target, positive class, categorical columns, columns left out, split and task,
    as chosen on the page (each proposed from the file); stops the page while the checks refuse it."""
    split_mode, time_column, gap = "cv", None, 0  # the published protocol unless a time split is chosen
    # A copy of a published dataset opens on its published task, wherever its target column is.
    recognised = _recognise(staged.sha256, frame)
    # no guess otherwise: the last column was a binary flag of a multiclass file, a date of a
    # regression one; a wrong default target runs the wrong task without a word
    default_target = columns.index(str(recognised[1])) if recognised else None
    target = st.selectbox("Target column", columns, index=default_target, key="target",
                          placeholder="Choose the column to predict",
                          help="The column the models predict. Preset only for a copy of a published "
                               "dataset (its published target).")
    if target is None:
        st.info("Choose the target column: the column the models predict. Its values set the task "
                "(two classes: binary, more: multiclass, numbers: regression).")
        st.stop()
    if recognised and target == str(recognised[1]):
        st.caption(f"Target {target!r}: the published target of OpenML {recognised[0].openml_id} "
                   f"({recognised[0].name}), which this file is a copy of.")
    # The task type: inferred from the target, shown, and the user's to override.
    inferred = _inferred_task(staged.sha256, target, frame)
    with st.container(key="task-choice"):
        tasks = list(vocab.TASKS)
        task = st.selectbox("Task", tasks, index=tasks.index(inferred), key=f"task-{target}",
                            help="Inferred from the target column: two classes are binary, more are "
                                 "multiclass, numbers with fractions or over 20 distinct values are "
                                 "regression. The task sets the folds (stratified for classes, shuffled "
                                 "for regression), the models and the metrics.")
        st.caption(f"Task: **{TASK_TEXT[task]}**"
                   + (", inferred from the target" if task == inferred else
                      f", chosen (the target reads as {inferred})") + ".")
        if task != "binary":
            st.info(f"No published reference exists for {task}: the published study, and so its "
                    f"consensus and the controls of the New encoder page, cover binary classification only; "
                    f"the encoder advice reads encbench's own benchmark on R datasets of the task instead. "
                    f"The encoders are ranked on your data, within {task}.", icon=":material/info:")
    choice = positive_class_choice(frame[target]) if task == "binary" else None
    positive = None
    if choice is not None:  # any other target is refused below, with what it is and what to do
        positive = st.selectbox("Positive class", choice[0], index=choice[1], key="positive",
                                help="Default: the second class in sorted order (label encoding, as published). "
                                     "Matters for F1 only.")
    types = _column_types(staged.sha256, staged)
    with st.expander("Column types", expanded=False):
        st.dataframe(types, hide_index=True, width="stretch")
    # ID-like and leaking columns are proposed for dropping (the first check names them).
    first = _check(staged.sha256, staged.filename, target, positive, None, (), None, staged, task)
    # A column that orders the rows in time: propose a time split (not a row number, such as R's
    # ``rownames``: it is proposed for leaving out as an ID and orders the file, not time).
    candidates = [c for c in _time_candidates(staged.sha256, target, staged.frame)
                  if not (c in first.suspect_columns and _row_number(staged.frame[c]))]
    if candidates:
        with st.container(border=True, key="time-split"):
            st.markdown(f"**Evaluation split.** This file has a column that orders its rows in time "
                        f"({', '.join(md_code(c) for c in candidates)}). "
                        + ("Shuffled folds (cv: KFold, for a regression target)" if task == "regression"
                           else "Stratified folds (the published protocol)")
                        + " train on rows from the future of their test rows; a target encoder then "
                        "knows a level's later outcomes. A time split trains on the past and tests on what "
                        "follows; *both* runs the two and says whether the best encoders change.")
            c1, c2, c3 = st.columns([3, 2, 1])
            split_mode = c1.radio("Evaluate with", list(SPLIT_MODES), format_func=_split_labels(task).get,
                                  key="split-mode")
            if split_mode != "cv":
                time_column = c2.selectbox("Time column", candidates, key="time-column",
                                           help="Orders the rows; it is not a feature (under cv too, "
                                                "when both are run). Rows without a time are refused.")
                gap = int(c3.number_input("Gap (rows)", min_value=0, value=0, step=1, key="gap",
                                          help="Training rows left out between each training part "
                                               "and its test block."))
    # a time column is proposed for leaving out too: as a categorical feature its thousands of
    # time stamps would be encoded (and drive the advice's meta-features), not its order
    suspects = [c for c in dict.fromkeys([*first.suspect_columns, *candidates]) if c != time_column]
    features = [c for c in columns if c not in (target, time_column)]
    picker_key = f"{target}" + (f"-{time_column}" if time_column else "")
    if len(features) > COMPACT_PICKER:
        drop = _column_picker(types, features, suspects, key=f"columns-{picker_key}")
    else:
        drop = st.multiselect("Columns to leave out", features, default=suspects, key=f"drop-{picker_key}",
                              help="Pre-selected: columns that look like IDs or leak the target, and "
                                   "columns that order the rows in time (a time split uses them).")
    inferred = types.loc[(types["type"] == "categorical") & types["column"].isin(features)
                         & ~types["column"].isin(drop), "column"].tolist()
    if len(features) > COMPACT_PICKER:
        chosen_cat = st.session_state[f"columns-{picker_key}-choice"]["categorical"]
        categorical = [c for c in features if c in chosen_cat and c not in drop]
    else:
        categorical = st.multiselect("Categorical columns (encoded)", [c for c in features if c not in drop],
                                     default=inferred, key=f"categorical-{target}-{len(drop)}",
                                     help="Inferred from the column types; numbers stored as text are "
                                          "categorical. Add integer codes here to encode them.")
    frame_kept = staged.frame.drop(columns=drop)
    report = _check(staged.sha256, staged.filename, target, positive, tuple(categorical) if categorical else None,
                    tuple(drop), time_column, staged, task)
    for error in report.errors:
        st.error(md_text(_on_page(error)))
    for warning in report.warnings:
        st.warning(md_text(_on_page(warning)))
    if time_column:  # levels first seen late: warned, never refused
        for warning in late_level_warnings(frame_kept, time_column, report.categorical, N_FOLDS):
            st.warning(md_text(warning), icon=":material/schedule:")
    if report.errors:
        st.stop()
    copy_of = _published_copy(staged.sha256, target, tuple(drop), frame_kept) if task == "binary" else None
    if copy_of is not None and (positive is None or str(positive) == list(report.classes)[1]):
        with st.container(key="published-copy"):
            st.info(f"This file is the published dataset OpenML {copy_of.openml_id} ({copy_of.name}). "
                    f"Its results are stored under that dataset, not as a new one, and the Results "
                    f"explorer shows each of them next to its published value with the difference.",
                    icon=":material/fingerprint:")
    if categorical == inferred:
        categorical = None  # the default: keep the run id independent of widget order
    return target, positive, categorical, drop, split_mode, time_column, gap, task


def _what_to_run(task: str) -> tuple:
    """The grid's choices: encoders (by family, and installed plugins), models, metrics, tuning,
    timeout and parallel task processes."""
    # -- the grid ----------------------------------------------------------------------------------
    st.subheader("What to run")

    st.markdown("**Encoders**, by family")
    with st.container(horizontal=True):
        st.button("All 32", key="enc-all", on_click=_select_all_encoders, args=(True,), type="tertiary")
        st.button("None", key="enc-none", on_click=_select_all_encoders, args=(False,), type="tertiary")
    chosen = set()
    families = {**FAMILIES, BEYOND_FAMILY: tuple(BEYOND_REGISTRY)}
    for family, names in families.items():
        # default: every encoder of the study, none beyond it; an encoder the task has no use for
        # (WoE beyond a binary target) is not offered, and not left chosen
        offered = [n for n in names if applies_to_task(n, task)]
        if not offered:
            continue
        key = f"enc-{family}"
        st.session_state.setdefault(key, [] if family == BEYOND_FAMILY else list(names))
        st.session_state[key] = [n for n in st.session_state[key] if n in offered]
        chosen.update(st.pills(family, offered, selection_mode="multi", key=key,
                               help="; ".join(f"{n}: {ALL_REGISTRY[n].description}" for n in offered)) or [])
    encoders = [name for name in vocab.ALL_ENCODERS if name in chosen]
    # Encoders of your own: installed plugins only; the app never imports code from an upload.
    plugins = {p.name: p for p in custom.plugins()}
    if plugins:
        picked = st.pills("Installed plugins", list(plugins), selection_mode="multi", key="enc-plugins",
                          help="; ".join(f"{p.name}: {p.target} ({p.package or '?'} {p.version or ''})"
                                         for p in plugins.values())) or []
        chosen_plugins = [plugins[name] for name in picked]
    else:
        chosen_plugins = []
    st.caption(f"*{BEYOND_FAMILY}*: today's practitioners' encoders, not in the published study (no published "
               "rank beside them). Your own encoder: install it as a plugin (entry point group "
               "`encbench.encoders`) and it is offered here, or run it from the command line (`--encoders "
               "module:attr`). The app never imports code from an upload. Its place among the 32: page "
               "*New encoder*.")
    ordered_encoders = [name for names in families.values() for name in names]
    with st.expander("What the encoders do"):
        st.dataframe(pd.DataFrame([{"encoder": n, "family": ALL_REGISTRY[n].family,
                                    "supervised": ALL_REGISTRY[n].supervised,
                                    "description": ALL_REGISTRY[n].description} for n in ordered_encoders]),
                     hide_index=True, width="stretch")
    cols = st.columns(3)
    # the task's own models and metrics (a binary run keeps the keys, and so the links, it had)
    suffix = "" if task == "binary" else f"-{task}"
    with cols[0].container(key="run-models"):
        models = st.multiselect("Models", list(models_for(task)), default=_default_models(task), key=f"models{suffix}")
    scorings = cols[1].multiselect("Metrics", list(metrics_for(task)), default=list(metrics_for(task)),
                                   key=f"metrics{suffix}",
                                   help="RMSE and MAE: lower is better; the ranking follows each metric's "
                                        "direction." if task == "regression" else None)
    tuning = cols[2].selectbox("Tuning", list(vocab.TUNINGS), index=0, key="tuning",
                               help="no: default hyperparameters; model: grid search on the encoded data; "
                                    "full: Bayesian search over the whole pipeline (slow).")
    cols = st.columns(2)
    timeout = cols[0].number_input("Timeout per fold task (seconds)", min_value=10, max_value=100_000,
                                   value=600, step=60, key="timeout")
    cores = os.cpu_count() or 1
    workers = cols[1].number_input("Parallel task processes", min_value=1, max_value=cores, value=default_workers(),
                                   key="workers", help=f"Fold tasks run in parallel, one per process; "
                                                       f"this machine has {cores} cores.")
    return encoders, chosen_plugins, models, scorings, tuning, timeout, workers


def _launch(form: RunForm, queue, frame: pd.DataFrame, target: str, task: str) -> None:
    """The Launch button: queues the form's runs (one per split) and remembers them in the session."""
    if st.button("Launch run", type="primary", key="launch"):
        try:
            # an upload that does not validate, or a plugin that fails on a sample of the data, is
            # refused here with the reason; one run is queued per split
            grids = dataclasses.replace(form, owner=session_owner()).submit(queue)
        except (DatasetError, ValueError) as exc:
            st.error(md_text(exc))
            st.stop()
        queue.ensure_worker()
        st.session_state["last_run"] = grids[0].run_id
        st.session_state["last_runs"] = [g.run_id for g in grids]
        # the classes of a multiclass target: the chance level of its balanced accuracy (1 / classes)
        st.session_state["last_run_classes"] = (int(frame[target].nunique()) if task == "multiclass" else None)
        if len(grids) == 1:
            st.success(f"Queued run `{grids[0].run_id}`. It keeps running if you close the page; "
                       "follow it here or on the Runs page.")
        else:
            named = " and ".join(f"`{g.run_id}` ({g.split_kind}, {form.result_rows:,} result rows)"
                                 for g in grids)
            st.success(f"Queued {len(grids)} runs, one per split: {named}. They keep running if you close "
                       "the page; follow them here or on the Runs page.")


@st.fragment(run_every=2.0)
@guarded
def _watch(run_id: str, results: bool = True) -> None:
    run_panels.keep_worker_alive(run_panels.queue())   # a worker killed mid-run is started again
    row = run_panels.run_progress(run_id)
    if row is None:
        st.caption("Waiting for the worker to start the run ...")
        return
    run_panels.show_progress(row)
    if results:
        run_panels.show_result(run_id, n_classes=st.session_state.get("last_run_classes"))


def _your_runs() -> None:
    """The progress of the runs this session launched last, and the first one's result."""
    if st.session_state.get("last_run"):
        st.subheader("Your run")
        # the link opens this run on the Runs page, not the one chosen there before
        st.page_link("pages/runs.py", label="This run on the Runs page", icon=":material/list:",
                     query_params={"run": st.session_state["last_run"]})
        _watch(st.session_state["last_run"])
        # the other runs of the same launch (one per split): progress here, results on the Runs page;
        # the first run's result already says whether the best encoders change between the splits
        launched = st.session_state.get("last_runs") or []
        for other in launched[1:] if launched[:1] == [st.session_state["last_run"]] else []:
            st.subheader(f"Your run `{other}`")
            st.page_link("pages/runs.py", label="This run on the Runs page", icon=":material/list:",
                         query_params={"run": other})
            _watch(other, results=False)


def main() -> None:
    """The page: the dataset and its columns, the advice, the grid, the launch and the runs launched."""
    st.title("Run on your data")
    st.caption("Which encoder should I use on my dataset? Upload it, run the encoders, and compare "
               "their ranking on your data with the published consensus.")
    if read_only():  # nothing is uploaded, stored or queued on a server shared read-only
        read_only_notice("uploads and runs are turned off. The Runs page lists the runs made so far; "
                         "to run the encoders on your data, start encbench on your own machine.")
        st.stop()
    queue = run_panels.queue()
    run_panels.keep_worker_alive(queue)

    source = st.radio("Dataset", ["Upload a file", "Bundled dataset"], horizontal=True, key="source")
    bundled_name = staged = None
    drop: list[str] = []
    split_mode, time_column, gap = "cv", None, 0  # the published protocol unless a time split is chosen
    if source == "Upload a file":
        st.caption(f"CSV/TSV, Parquet or ARFF, optionally gzipped; at most {MAX_MB} MB. The file stays "
                   "on this machine; it is kept (by content hash) only when you launch a run.")
        upload = st.file_uploader("Your dataset", type=FILE_TYPES, key="upload")
        if upload is None:
            st.info("Choose a file to start, or pick a bundled dataset.")
            st.stop()
        staged = _stage(upload.getvalue(), upload.name, store.db_path())
        if not staged.ok:
            for error in staged.errors:
                st.error(md_text(error))
            st.stop()
        # said only to the session that launched a run on these bytes: to any other it would tell
        # that someone else uploaded them (the staged file is cached for every session, so asked here)
        previous = previous_upload(staged.sha256, session_owner(), store.db_path())
        if previous is not None:
            st.info(f"You uploaded this exact file before (stored as `{previous.name}`); "
                    "a run with the same choices resumes instead of starting over.")
        frame = staged.frame
    else:
        table = list_bundled()
        bundled_name = st.selectbox("Bundled dataset", table["name"].tolist(), key="bundled",
                                    format_func=lambda n: f"{n} ({int(table.set_index('name').loc[n, 'rows']):,} rows)")
        frame = _bundled_frame(bundled_name)

    st.subheader("Preview")
    st.dataframe(frame.head(20), width="stretch")
    st.caption(f"{len(frame):,} rows x {frame.shape[1]} columns")

    # -- target and column roles -------------------------------------------------------------------
    columns = [str(c) for c in frame.columns]
    task = "binary"  # a bundled dataset is a published one: binary
    if bundled_name is not None:
        entry = find_bundled(bundled_name)
        target, positive, categorical = entry.target, None, None
        st.markdown(f"Target: **{target}** (the published task; positive class by label-encoding order).")
    else:
        target, positive, categorical, drop, split_mode, time_column, gap, task = _column_roles(staged, frame, columns)

    # the advice reads the reference results of the task (binary: the published ones and the binary suite)
    run_advice.show(frame, target, positive, categorical, staged=staged, bundled=bundled_name, drop=drop,
                    time_column=time_column, data_id=staged.sha256 if staged is not None else f"bundled:{bundled_name}",
                    task=task)

    encoders, chosen_plugins, models, scorings, tuning, timeout, workers = _what_to_run(task)

    # The page's choices as one form: the library counts what it queues and queues it.
    dataset = ({"bundled": bundled_name} if bundled_name is not None else
               {"upload": staged, "target": target, "positive_class": positive, "categorical": categorical,
                "drop": drop, "evaluation": split_mode, "time_column": time_column, "gap": gap, "task": task})
    form = RunForm(encoders=encoders, models=models, scorings=scorings, tuning=tuning, timeout=float(timeout),
                   workers=int(workers), custom_encoders=chosen_plugins, **dataset)
    if form.missing():
        st.warning(f"Choose at least one of: {', '.join(form.missing())}.")
        st.stop()
    n_encoders, n_experiments, n_splits = form.n_encoders, form.n_experiments, form.n_runs
    if n_experiments == 0:  # e.g. Native alone with models that take no categories
        why = "; ".join(f"{e} runs only with {', '.join(ms)}" if ms else f"{e} is not defined for a {task} target"
                        for e, ms in form.idle_encoders.items())
        st.warning(f"None of the chosen encoders runs with the chosen models: {why}. "
                   "Choose another model or encoder.")
        st.stop()
    folds_text = {"cv": f"each {N_FOLDS}-fold cross-validated",
                  "time": f"each on {N_FOLDS} forward folds over {time_column}",
                  "both": f"each {N_FOLDS}-fold cross-validated and on {N_FOLDS} forward folds over {time_column}"
                  }[split_mode]
    partial = "".join(f"; {e} runs with {', '.join(ms)} only" for e, ms in form.partial_encoders.items())
    grid_text = (f"{n_experiments:,} experiments ({_count(n_encoders, 'encoder')} x {_count(len(models), 'model')} x "
                 f"{_count(len(scorings), 'metric')}, {tuning} tuning{partial})")
    if n_splits == 1:
        st.info(f"{grid_text}, {folds_text}: {form.fold_tasks} fold tasks, {form.result_rows:,} result rows.")
    else:  # one run per split: say what each run holds, as the Runs page counts it
        st.info(f"{n_splits} runs, one per split (cv: {N_FOLDS} {_cv_folds(task)}; time: {N_FOLDS} forward folds "
                f"over {time_column}), each of {grid_text}: {form.fold_tasks} fold tasks and "
                f"{form.result_rows:,} result rows per run, {form.result_rows * n_splits:,} "
                f"result rows in all.")

    _launch(form, queue, frame, target, task)
    _your_runs()


main()
