"""The filters every view shares: model / tuning / metric, origins (published, local, both) and
the split, and the banner that says what a view mixes in or leaves out."""
from __future__ import annotations

import logging
from collections.abc import Sequence

import streamlit as st

from encbench import vocab
from encbench.store import queries
from encbench.experiment import EXPERIMENT_KEY
from encbench.views import origins as origin_views
from encbench.vocab import ordered
from pages.ui.navigation import CURRENT_PAGE
from pages.ui.store import beyond_view, data_key, datasets_table, levels, local_overview, raw_scores
from pages.ui.text import md_text
from pages.ui.widgets import _warn_unknown_url_values, multiselect

log = logging.getLogger(__name__)


FACTOR_LABELS = {"model": "Model", "tuning": "Tuning", "scoring": "Metric"}
#: a factor's URL key where it is not the factor's name (``?metric=AUC``)
URL_KEYS = {"scoring": "metric"}


def factor_filters(lv: dict[str, list[str]], defaults: dict[str, Sequence[str]], *,
                   keys: dict[str, str] | None = None, task: str | None = None) -> dict[str, list[str]]:
    """One multiselect per factor of :data:`encbench.vocab.FACTORS` (model / tuning / metric), in a
    row; returns ``{factor: selected values}``.

    The options are the values with results (``lv``, the levels of the view's task), those of
    ``task``'s registry entries (:func:`task_options`); a default the task does not have (LogReg
    or AUC for regression) falls back to the first option."""
    keys = keys or {f: URL_KEYS.get(f, f) for f in vocab.FACTORS}
    out = {}
    for column, factor in zip(st.columns(len(vocab.FACTORS)), vocab.FACTORS):
        options = task_options(factor, lv[factor], task)
        with column:
            out[factor] = multiselect(FACTOR_LABELS[factor], options, key=keys[factor],
                                      default=task_default(options, defaults.get(factor)))
    return out


# -- the task type ---------------------------------------------------------------------------------

#: the task of a view that does not choose one: the published study's
DEFAULT_TASK = "binary"
TASK_HELP = ("binary: binary classification, the published study's task and its results (the "
             "default). multiclass and regression: results of local runs on such targets, with "
             "their own models and metrics (regression: RMSE and MAE, lower is better, and R2). "
             "A view shows one task: rankings never pool two.")
#: widget keys (and URL parameters) whose values belong to one task: reset when the task changes,
#: so that the model and metric choices become the new task's
TASK_BOUND_KEYS = ("model", "tuning", "metric", "models", "tunings", "metrics", "fix_model",
                   "fix_tuning", "fix_metric", "detail", "control", "wilcoxon", "bayes_a", "bayes_b",
                   "elo_ref", "istrategy", "dataset", "drill_encoder", "drill_dataset", "drill_a", "drill_b")


def task_options(factor: str, values: Sequence[str], task: str | None) -> list[str]:
    """The values of ``factor`` with results, in vocabulary order, keeping for a model or a
    metric only those whose registry entry serves ``task`` (None: every value)."""
    served = {"model": vocab.MODEL_REGISTRY, "scoring": vocab.METRIC_REGISTRY}.get(factor)
    out = ordered(factor, values)
    if task is None or served is None:
        return out
    return [v for v in out if v not in served or task in served[v].tasks]


def task_default(options: Sequence[str], default: Sequence[str] | str | None):
    """``default`` where ``options`` have it, else the first option (a task's own first model or
    metric); None stays None (every option)."""
    if default is None or not options:
        return default
    if isinstance(default, str):
        return default if default in options else options[0]
    kept = [d for d in default if d in options]
    return kept or list(options[:1])


def _task_changed() -> None:
    for key in TASK_BOUND_KEYS:
        st.session_state.pop(key, None)


#: session state: the task the session's last view showed and that view's page; the next page
#: opened keeps the task
_TASK_KEPT = "_encbench_task"


def task_filter() -> str:
    """Which task type the view shows, in the sidebar and bound to the URL (``?task=regression``);
    :data:`DEFAULT_TASK` (binary, the published view) unless the user or a link picks another.
    Changing it resets the choices that belong to a task (:data:`TASK_BOUND_KEYS`).

    The task stays with the session from page to page: a click in the sidebar menu opens the next
    page without the query (Streamlit drops it on a page change), and a widget's state does not
    cross pages either, so a task set by a link (``/?task=multiclass``) fell back to binary. A
    page opened without ``?task=`` puts the session's task back into its URL before the select
    reads it (:func:`carry_task`, before the page runs)."""
    _warn_unknown_url_values("task", list(vocab.TASKS), None)
    with st.sidebar:
        # no format_func: the URL holds the option itself (?task=regression)
        task = st.selectbox("Task", list(vocab.TASKS), index=vocab.TASKS.index(DEFAULT_TASK), key="task",
                            bind="query-params", on_change=_task_changed, help=TASK_HELP)
    st.session_state[_TASK_KEPT] = (task or DEFAULT_TASK, st.session_state.get(CURRENT_PAGE))
    return task or DEFAULT_TASK


def carry_task() -> None:
    """Before a page runs (``app.py``): a page opened from another one without ``?task=`` starts
    from the task the session showed last, in its select and its URL.

    Through the session state, since the browser remembers the select of a page visited before and
    sends its old value back when the page is opened again, which would win over a default; a
    page that chooses the task itself (the Runs page, for the run a link names) sets it after this
    and keeps its choice."""
    kept, kept_on = st.session_state.get(_TASK_KEPT) or (None, None)  # (task, page it was shown on)
    here = st.session_state.get(CURRENT_PAGE)
    if kept not in vocab.TASKS or kept_on is None or kept_on == here or "task" in st.query_params:
        return
    st.session_state["task"] = kept
    if kept != DEFAULT_TASK:
        st.query_params["task"] = kept      # the URL says it too, for a link copied from the page


def no_results_text(task: str) -> str:
    """What a view says when the database holds nothing of ``task``."""
    return (f"No results for {task} yet: run some on the Run page or with "
            f"`encbench run --task {task}`.")


def task_levels(db: str, version: tuple) -> tuple[str, dict[str, list[str]]]:
    """The view's task (:func:`task_filter`) and the levels of its results (filter options);
    says so plainly and stops the page when the task has none while others have some (an empty
    database is each page's own message)."""
    task = task_filter()
    lv = levels(db, version, task)
    if not lv.get("dataset") and levels(db, version).get("dataset"):
        with st.container(key="no-task-results"):
            st.info(no_results_text(task))
        st.stop()
    return task, lv


def empty_selection(selected: dict[str, list[str]]) -> list[str]:
    """Names of the filters left empty (each needs at least one value)."""
    return [FACTOR_LABELS.get(k, k) for k, v in selected.items() if not v]


ORIGIN_HELP = ("published: the study's results (Matteucci et al. 2023), the default. "
               "both: your local runs are added; a run on a copy of a published dataset is "
               "counted under that dataset, never as a new one. local: just your runs.")


def origin_filter(lv: dict[str, list[str]]) -> tuple[str, tuple[str, ...], str]:
    """Which results the view shows, bound to the URL (``?origin=both&prefer=local``).

    The published benchmark is the default; the control is shown only when local results exist.

    Returns
    -------
    (choice, origins, prefer)
        The choice (a key of :data:`encbench.origin_views.ORIGIN_CHOICES`), the ``scores.origin``
        values it includes, and which score counts where an experiment has both.
    """
    if "published" not in lv.get("origin", []) and origin_views.SUITES_RUN_ID in lv.get("own_runs", []):
        return _own_reference(lv)
    if "local" not in lv.get("origin", []):
        return "published", _suites(lv, _beyond(lv, ("published",))), "published"
    if "published" not in lv["origin"]:  # a task without published results: local runs only
        st.caption("Local runs only: the published benchmark holds no results of this task.")
        return "local", origin_views.origins_of("local"), "published"
    choices = list(origin_views.ORIGIN_CHOICES)
    _warn_unknown_url_values("origin", choices, None)
    _warn_unknown_url_values("prefer", list(queries.PREFERENCES), None)
    left, right = st.columns([3, 2])
    with left:
        # no format_func: the URL holds the option itself (?origin=both), not a display label
        choice = st.radio("Results: published benchmark, both, or local runs only", choices,
                          key="origin", bind="query-params", horizontal=True, help=ORIGIN_HELP)
    prefer = "published"
    if choice == "both":
        with right:
            prefer = st.radio("Where an experiment has both scores, count the", list(queries.PREFERENCES),
                              key="prefer", bind="query-params", horizontal=True,
                              help="A local run on a published dataset repeats published experiments: "
                                   "only one score per experiment enters rankings and counts.")
    return choice, _suites(lv, _beyond(lv, origin_views.origins_of(choice))), prefer


def _own_reference(lv: dict[str, list[str]]) -> tuple[str, tuple[str, ...], str]:
    """The choice of a task the published study lacks: encbench's own benchmark (the default),
    with local runs, or local runs only; where an experiment has both, the local score counts."""
    task = (lv.get("task") or [DEFAULT_TASK])[0]
    if "local" not in lv.get("origin", []):
        st.caption(origin_views.OWN_CAPTION.format(task=task))
        return "own", origin_views.OWN_CHOICES["own"], "local"
    choices = list(origin_views.OWN_CHOICES)
    _warn_unknown_url_values("origin", choices, None)
    choice = st.radio("Results: encbench's own benchmark, both, or local runs only", choices, key="origin",
                      bind="query-params", horizontal=True,
                      help=(f"own: encbench's runs on the R datasets of its {task} suite, the default "
                            f"(the published study has no {task} results). both: your local runs are "
                            f"added; where you ran an experiment encbench ran too, your score counts. "
                            f"local: just your runs."))
    return choice or "own", origin_views.OWN_CHOICES[choice or "own"], "local"


def _suites(lv: dict[str, list[str]], origins: tuple[str, ...]) -> tuple[str, ...]:
    """``origins``, plus the binary R datasets of encbench's own benchmark when the (URL-bound)
    choice to add them is on; off by default, offered beside the published benchmark when the
    database holds them."""
    if "published" not in origins or origin_views.SUITES_RUN_ID not in lv.get("own_runs", []):
        return origins
    add = st.checkbox("Add encbench's own binary datasets (R datasets beyond the study's 50)", key="suites",
                      bind="query-params", help=origin_views.SUITES_HELP)
    return (*origins, origin_views.SUITES_CHOICE) if add else origins


def _beyond(lv: dict[str, list[str]], origins: tuple[str, ...]) -> tuple[str, ...]:
    """``origins``, plus encbench's own results when the (URL-bound) choice to add the encoders
    beyond the study is on; off by default, offered when the database holds them."""
    if not set(origin_views.OWN_RUNS.values()) & set(lv.get("own_runs", [])):
        return origins
    beyond = st.checkbox("Add the encoders beyond the study (encbench's own results)", key="beyond",
                         bind="query-params", help=origin_views.BEYOND_HELP)
    return origin_views.with_beyond(origins, beyond)


SPLIT_HELP = ("cv: the published protocol, stratified folds in file order. time: forward folds "
              "over a time column (train on the past, test on what follows), from local runs "
              "with --split time:COLUMN; a target encoder that looked good under cv may not be.")


def split_filter(lv: dict[str, list[str]]) -> str:
    """Which evaluation scheme the view shows, bound to the URL (``?split=time``); ``cv`` (the
    published protocol) unless time-split results exist and the user picks them."""
    if "time" not in lv.get("split", []):
        return "cv"
    choices = [s for s in vocab.SPLITS if s in lv["split"]]
    _warn_unknown_url_values("split", choices, None)
    return st.radio("Evaluation split", choices, key="split", bind="query-params", horizontal=True,
                    help=SPLIT_HELP)


@st.cache_data(show_spinner=False, max_entries=32)
def _mix(db: str, version: tuple, filters: tuple) -> origin_views.OriginMix:
    return origin_views.origin_mix(raw_scores(db, version, **dict(filters), origins=("published", "local")))


@st.cache_data(show_spinner=False, max_entries=32)
def _disagreeing(db: str, version: tuple, filters: tuple, prefer: str) -> list[tuple[str, str, int]]:
    """Published datasets whose local scores agree poorly with the published ones
    (:func:`encbench.views.run_result.published_agreement`): ``(name, agreement text, local scores of
    it that count in a view that prefers ``prefer``)``."""
    from encbench.views.run_result import published_agreement

    raw = raw_scores(db, version, **dict(filters), origins=("published", "local"))
    local, published = raw[raw["origin"] == "local"], raw[raw["origin"] == "published"]
    names = datasets_table(db, version).set_index("dataset")["name"]
    cell = list(EXPERIMENT_KEY)
    out = []
    for dataset, agreement in published_agreement(local, published).items():
        if not agreement.low:
            continue
        mine = local.loc[local["dataset"] == dataset, cell].drop_duplicates()
        if prefer != "local":  # only the local experiments the published benchmark lacks count
            mine = mine.merge(published[cell].drop_duplicates(), on=cell, how="left", indicator=True)
            mine = mine[mine["_merge"] == "left_only"]
        out.append((str(names.get(dataset, dataset)),
                    f"{agreement.within} of {agreement.cells} experiments within {agreement.tolerance:g}",
                    len(mine)))
    return out


@st.cache_data(show_spinner=False, max_entries=32)
def _other_split_rows(db: str, version: tuple, filters: tuple) -> dict[str, int]:
    """Local score rows matching ``filters`` except their split, per split not in the view."""
    shown = dict(filters).get("splits") or ("cv",)
    rows = raw_scores(db, version, **{k: v for k, v in filters if k != "splits"}, origins=("local",),
                      splits=None)
    counts = rows.loc[~rows["split"].isin(shown), "split"].value_counts()
    return {str(split): int(n) for split, n in counts.items()}


def origin_banner(choice: str, prefer: str, **filters) -> None:
    """Announce local results in a view, or say that local results exist but are left out.

    ``filters`` are the keyword filters of :func:`scores` (without ``origins``/``prefer``).
    """
    db, version = data_key()
    if choice == "own":  # said by the origin control (encbench's own benchmark, no published rows)
        return
    if st.session_state.get("suites"):
        st.info("encbench's own binary R datasets are added to the published ones: their scores are "
                "encbench's runs of the published protocol, not the study's.")
    if st.session_state.get("beyond"):
        view = beyond_view(db, version, tuple(sorted((k, v) for k, v in filters.items())))
        if view.datasets:
            st.info(view.banner)
    if choice == "published":
        local = local_overview(db, version)
        if local["rows"]:
            shown = ("The published benchmark and encbench's own results for the encoders beyond the study"
                     if st.session_state.get("beyond") else "Published benchmark only")
            st.caption(f"{shown}. {local['rows']:,} local score rows "
                       f"({local['datasets']} dataset(s), {local['runs']} run(s)) are left out; "
                       f"choose *both* under *Results* to include them.")
        return
    key = tuple(sorted((k, v) for k, v in filters.items()))
    text = origin_views.origin_banner(choice, _mix(db, version, key), prefer)
    other = _other_split_rows(db, version, key)
    if other:  # never left out without a word: a view shows one split
        shown = "/".join(filters.get("splits") or ("cv",))
        text += (f" {sum(other.values()):,} local score rows of another split "
                 f"({', '.join(f'{n:,} {s}' for s, n in other.items())}) are left out: this view shows "
                 f"split {shown}" + (", the other is chosen under *Evaluation split*." if "splits" in filters
                                     else "; the Results explorer and Consensus rankings show them under "
                                          "*Evaluation split*."))
    with st.container(key="origin-banner"):
        st.warning(text, icon=":material/merge_type:")
    if choice == "both":  # never mix silently scores that disagree with the published ones
        for raw_name, agreement, counted in _disagreeing(db, version, key, prefer):
            name = md_text(raw_name)
            with st.container(key=f"origin-disagreement-{raw_name}"):
                st.warning(
                    f"Local scores on {name} disagree with its published scores ({agreement}; docs/protocol.md, "
                    f"'Differences from the published study'): "
                    + (f"{counted:,} of this view's scores on {name} come from those local runs"
                       + (", each replacing the published score of the same experiment." if prefer == "local"
                          else ", experiments the published benchmark lacks.")
                       if counted else
                       "none of them enters this view, the published scores count where both exist."),
                    icon=":material/rule:")
