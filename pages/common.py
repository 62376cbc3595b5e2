"""Shared UI plumbing for the pages: the cached store, cached loads, URL-bound filters, exports.

Caching (docs/ARCHITECTURE.md, Layers): one ``@st.cache_resource`` Reader per database path (so tests or
users pointing ``ENCBENCH_DB`` at another file never get a stale reader), and ``@st.cache_data``
functions keyed on ``(db path, snapshot version, arguments)``: a new snapshot published by the
writer changes the version and so invalidates every cached load and computation.
"""
from __future__ import annotations

import functools
import hmac
import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from typing import Literal

import pandas as pd
import streamlit as st

from encbench import dashboard, export, vocab
from encbench.dashboard import ordered
from encbench.store import Reader, SnapshotMissing, default_db_path, queries

log = logging.getLogger(__name__)


def guarded(func: Callable) -> Callable:
    """Show an error message instead of a traceback when ``func`` raises.

    For ``st.fragment`` bodies: a fragment rerun does not pass through ``app.py``'s last line of
    defence. Streamlit's own control flow (``st.rerun``, ``st.stop``) is not an ``Exception`` and
    passes through.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as exc:  # shown to the user, logged with its traceback
            log.exception("%s failed", func.__name__)
            st.error(f"This part of the page could not be shown: {type(exc).__name__}: {md_text(exc)}")
    return wrapper


class BackgroundJob:
    """``func(*args, progress=..., should_stop=..., **kwargs)`` on a daemon thread.

    Long computations run here so the page stays usable: the script run that starts the job
    ends at once, a fragment polls :attr:`fraction` and offers :meth:`cancel`, and a later run
    picks up :attr:`result` (or :attr:`error`). ``func`` reports ``progress(done, total)`` and
    polls ``should_stop()``; it must not call Streamlit (it runs outside any script run).
    """

    def __init__(self, func: Callable, *args, **kwargs):
        self.done, self.total = 0, 0
        self.result, self.error = None, None
        self._stop, self._finished = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._work, args=(func, args, kwargs), daemon=True,
                                        name=f"encbench-{getattr(func, '__name__', 'job')}")
        self._thread.start()

    def _work(self, func: Callable, args: tuple, kwargs: dict) -> None:
        try:
            self.result = func(*args, progress=self._progress, should_stop=self._stop.is_set, **kwargs)
        except Exception as exc:  # noqa: BLE001 - handed to the page, which shows it
            log.info("background job %s ended: %r", self._thread.name, exc)
            self.error = exc
        finally:
            self._finished.set()

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def cancel(self) -> None:
        self._stop.set()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    @property
    def fraction(self) -> float:
        return min(self.done / self.total, 1.0) if self.total else 0.0

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (tests); True if it did within ``timeout`` seconds."""
        return self._finished.wait(timeout)


# --------------------------------------------------------------------------- routing

#: The app's pages, in menu order: (file, title, material icon, url path); the first is the
#: home page. ``app.py`` routes with them: add a page by adding its file and a line here. The
#: url path names the page in a shared link (``/consensus?model=LogReg``) and is the file's
#: name, which is also how Streamlit's ``pages/`` folder names it (see :func:`ensure_routed`).
PAGES = (
    ("pages/overview.py", "Overview", "home", "overview"),
    ("pages/explorer.py", "Results explorer", "table_view", "explorer"),
    ("pages/consensus.py", "Consensus rankings", "leaderboard", "consensus"),
    ("pages/sensitivity.py", "Sensitivity", "grid_on", "sensitivity"),
    ("pages/replicability.py", "Replicability", "stacked_line_chart", "replicability"),
    ("pages/run.py", "Run on your data", "upload_file", "run"),
    ("pages/runs.py", "Runs", "pending_actions", "runs"),
    ("pages/new_encoder.py", "New encoder", "add_chart", "new_encoder"),
)

_ROUTED = "_encbench_routed"  # session state: this session's runs go through app.py


def navigation(*, position: Literal["sidebar", "hidden"] = "sidebar") -> st.Page:
    """Declare the app's pages with ``st.navigation``; return the page the URL asks for.

    ``app.py`` calls it once per run, then runs the returned page.
    """
    st.session_state[_ROUTED] = True
    return st.navigation([
        st.Page(path, title=title, icon=f":material/{icon}:", url_path=url, default=(i == 0))
        for i, (path, title, icon, url) in enumerate(PAGES)
    ], position=position)


def ensure_routed() -> None:
    """Send a page run without ``app.py`` through it; every page calls this first thing.

    Until some session calls ``st.navigation``, Streamlit serves a ``pages/`` folder beside the
    entry point as its older multipage app: the first link opened after a server (re)start, say
    ``/consensus?model=DT``, runs ``pages/consensus.py`` on its own (no page config; every file of
    ``pages/``, this module included, listed in the sidebar). Streamlit documents that calling
    ``st.navigation`` in any session switches the app to the ``st.navigation`` structure for all
    sessions ("Creating multipage apps using the pages/ directory"). So a page run outside
    ``app.py`` declares the app's pages (hidden, the rerun draws them) and reruns: ``st.rerun``
    keeps the page and the query parameters, and the rerun goes through ``app.py``.

    A session is rerouted once, on its first run (a page load, nothing clicked yet): AppTest
    turns the ``pages/`` folder back on before every run, and rerunning a later run would drop a
    button click.
    """
    if st.session_state.get(_ROUTED):
        return
    navigation(position="hidden")
    st.rerun()


if __name__ == "__main__":  # this module opened as a page (/common): to app.py, which has no such page
    ensure_routed()


FACTOR_LABELS = {"model": "Model", "tuning": "Tuning", "scoring": "Metric"}


# --------------------------------------------------------------------------- the store

def db_path() -> str:
    """The database the app reads (``ENCBENCH_DB`` or the default), as a cache key."""
    return str(default_db_path().resolve())


@st.cache_resource(show_spinner=False)
def get_reader(db: str) -> Reader:
    """The app's read-only connection to the newest snapshot of ``db`` (reopens on new snapshots)."""
    return Reader(db)


def reader_or_stop() -> Reader:
    """The reader (refreshed to the newest snapshot), or a clear message and a stopped page."""
    try:
        reader = get_reader(db_path())
        reader.refresh()
        return reader
    except SnapshotMissing as exc:
        st.error(md_text(exc))
        st.stop()


def data_key() -> tuple[str, tuple]:
    """``(db, version)``: the first two arguments of every cached function below."""
    reader = reader_or_stop()
    return db_path(), reader.version


def snapshot_label(version: tuple) -> str:
    """A short, stable name of a snapshot version for export metadata."""
    return "-".join(str(v) for v in version) if version else ""


@st.cache_data(show_spinner=False, max_entries=8)
def levels(db: str, version: tuple) -> dict[str, list[str]]:
    """Distinct values per factor that have results (filter options)."""
    return queries.factor_levels(get_reader(db))


@st.cache_data(show_spinner=False, max_entries=64)
def raw_scores(db: str, version: tuple, *, datasets: tuple | None = None, models: tuple | None = None,
               tunings: tuple | None = None, scorings: tuple | None = None,
               encoders: tuple | None = None, origins: tuple | None = ("published",),
               splits: tuple | None = ("cv",)) -> pd.DataFrame:
    """Score rows, filtered, one per experiment *and run* (an experiment may have several).

    ``splits`` defaults to the published protocol (``cv``): a time-split result enters a view
    only when the view asks for it (:func:`split_filter`)."""
    return queries.load_scores(get_reader(db), datasets=datasets, models=models, tunings=tunings,
                               scorings=scorings, encoders=encoders, origins=origins, splits=splits)


@st.cache_data(show_spinner=False, max_entries=64)
def scores(db: str, version: tuple, *, datasets: tuple | None = None, models: tuple | None = None,
           tunings: tuple | None = None, scorings: tuple | None = None,
           encoders: tuple | None = None, origins: tuple | None = ("published",),
           prefer: str = "published", splits: tuple | None = ("cv",)) -> pd.DataFrame:
    """Score rows, one per experiment, filtered; the published benchmark unless ``origins`` says.

    Where an experiment has a published and a local score, the ``prefer`` one counts; several
    runs of the same origin are averaged.
    """
    frame = raw_scores(db, version, datasets=datasets, models=models, tunings=tunings,
                       scorings=scorings, encoders=encoders, origins=origins, splits=splits)
    return queries.one_score_per_experiment(frame, prefer=prefer)


@st.cache_data(show_spinner=False, max_entries=8)
def local_overview(db: str, version: tuple) -> dict[str, int]:
    return queries.local_overview(get_reader(db))


@st.cache_data(show_spinner=False, max_entries=8)
def view_datasets(db: str, version: tuple, origins: tuple | None = ("published",)) -> list[str]:
    """Datasets with results in a view of ``origins`` (filter options follow the view)."""
    return sorted(queries.datasets_with_scores(get_reader(db), origins), key=dashboard.natural_key)


@st.cache_data(show_spinner=False, max_entries=8)
def datasets_table(db: str, version: tuple) -> pd.DataFrame:
    return queries.list_datasets(get_reader(db))


@st.cache_data(show_spinner=False, max_entries=8)
def runs_table(db: str, version: tuple) -> pd.DataFrame:
    return queries.list_runs(get_reader(db))


@st.cache_data(show_spinner=False, max_entries=8)
def summary(db: str, version: tuple, origins: tuple | None = ("published",)) -> dict[str, int]:
    return queries.summary(get_reader(db), origins=origins)


# --------------------------------------------------------------------------- URL-bound filters

def _warn_unknown_url_values(key: str, options: list, format_func: Callable | None) -> None:
    """Say so when a shared link names values this view does not have (they are ignored)."""
    # An emptied multiselect is written to the URL as "?key=" (an empty value): a selection of
    # nothing, not an unknown value.
    given = [v for v in st.query_params.get_all(key) if v != ""]
    if not given:
        return
    labels = {str(format_func(o)) if format_func else str(o) for o in options}
    unknown = [v for v in given if v not in labels]
    if unknown:
        st.warning(f"The link sets {key} to {', '.join(md_code(v) for v in unknown)}, which this view does "
                   f"not have; ignored. Available: {', '.join(md_text(v) for v in sorted(labels))}.")


def warn_bad_number(key: str, *, low: float, high: float, options: Sequence[float] | None = None,
                    integer: bool = False) -> None:
    """Say so when a shared link gives a numeric widget a value it cannot take (it is ignored).

    Streamlit drops such a value silently and shows the default; other link values get this
    warning from :func:`multiselect`/:func:`selectbox`, numbers get it here.
    """
    raw = st.query_params.get(key)
    if raw is None or raw == "":
        return
    try:
        value = float(raw)
        ok = low <= value <= high and (not integer or value.is_integer())
        if options is not None:
            ok = ok and any(abs(value - o) < 1e-9 for o in options)
    except ValueError:
        ok = False
    if not ok:
        accepted = (", ".join(f"{o:g}" for o in options) if options is not None
                    else f"{'a whole number ' if integer else 'a number '}from {low:g} to {high:g}")
        st.warning(f"The link sets {key} to {md_code(raw)}, which this view does not accept; ignored, the "
                   f"default is used. Accepted: {accepted}.")


def multiselect(label: str, options: Sequence[str], *, key: str, default: Sequence[str] | None = None,
                help: str | None = None, **kwargs) -> list[str]:
    """A multiselect whose value lives in the URL (``?key=a&key=b``) so a view can be shared."""
    options = list(options)
    _warn_unknown_url_values(key, options, kwargs.get("format_func"))
    default = [d for d in (default if default is not None else options) if d in options]
    return st.multiselect(label, options, default=default, key=key, bind="query-params",
                          help=help, **kwargs)


def selectbox(label: str, options: Sequence[str], *, key: str, default: str | None = None,
              help: str | None = None, **kwargs) -> str | None:
    """A selectbox bound to the URL parameter ``key``."""
    options = list(options)
    _warn_unknown_url_values(key, options, kwargs.get("format_func"))
    index = options.index(default) if default in options else 0
    return st.selectbox(label, options, index=index if options else None, key=key,
                        bind="query-params", help=help, **kwargs)


def factor_filters(lv: dict[str, list[str]], defaults: dict[str, Sequence[str]], *,
                   keys: dict[str, str] | None = None) -> dict[str, list[str]]:
    """Model / tuning / metric multiselects in a row; returns ``{factor: selected values}``."""
    keys = keys or {"model": "model", "tuning": "tuning", "scoring": "metric"}
    out = {}
    for column, factor in zip(st.columns(3), ("model", "tuning", "scoring")):
        with column:
            out[factor] = multiselect(FACTOR_LABELS[factor], ordered(factor, lv[factor]),
                                      key=keys[factor], default=defaults.get(factor))
    return out


def empty_selection(selected: dict[str, list[str]]) -> list[str]:
    """Names of the filters left empty (each needs at least one value)."""
    return [FACTOR_LABELS.get(k, k) for k, v in selected.items() if not v]


# --------------------------------------------------------------------------- strategy parameters

def warn_bad_parameters() -> None:
    """Flag link values of the strategy parameters (``?theta=2``) their widgets cannot take."""
    for param, _ in vocab.offered_parameters():
        if param.options is not None:
            warn_bad_number(param.name, low=min(param.options), high=max(param.options),
                            options=param.options)
        else:
            warn_bad_number(param.name, low=param.low, high=param.high)


def parameter_inputs(strategies: Sequence[str], *, keep_enabled: Sequence[str] = ()) -> dict[str, float]:
    """One widget per strategy parameter the app offers, side by side, bound to the URL (``?theta=0.9``).

    The parameters, their ranges, defaults and help come from the strategy registry
    (:data:`encbench.vocab.STRATEGY_REGISTRY`); each is labelled with the strategies that use it
    (``"theta (Q-Th)"``) and disabled while none of them is chosen, unless the page uses it
    elsewhere too (``keep_enabled``). Call it where the widgets go (e.g. inside a column).

    Parameters
    ----------
    strategies : sequence of str
        The strategies chosen on the page.
    keep_enabled : sequence of str
        Parameters that stay enabled whatever the strategies.

    Returns
    -------
    dict
        Every offered parameter's value; :func:`encbench.stats.params_for` keeps those the
        strategies use.
    """
    offered = vocab.offered_parameters()
    values: dict[str, float] = {}
    for box, (param, users) in zip(st.columns(len(offered)), offered):
        label = f"{param.name} ({', '.join(users)})"
        disabled = param.name not in keep_enabled and not any(s in strategies for s in users)
        with box:
            if param.options is not None:
                values[param.name] = st.select_slider(
                    label, options=list(param.options), value=param.default, key=param.name,
                    bind="query-params", disabled=disabled, help=param.help)
            else:
                values[param.name] = st.slider(
                    label, param.low, param.high, param.default, param.step, key=param.name,
                    bind="query-params", disabled=disabled, help=param.help)
    return values


# --------------------------------------------------------------------------- origins

ORIGIN_HELP = ("published: the study's results (Matteucci et al. 2023), the default. "
               "both: your local runs are added; a run on a copy of a published dataset is "
               "counted under that dataset, never as a new one. local: just your runs.")


def origin_filter(lv: dict[str, list[str]]) -> tuple[str, tuple[str, ...], str]:
    """Which results the view shows, bound to the URL (``?origin=both&prefer=local``).

    The published benchmark is the default; the control is shown only when local results exist.

    Returns
    -------
    (choice, origins, prefer)
        The choice (a key of :data:`encbench.dashboard.ORIGIN_CHOICES`), the ``scores.origin``
        values it includes, and which score counts where an experiment has both.
    """
    if "local" not in lv.get("origin", []):
        return "published", ("published",), "published"
    choices = list(dashboard.ORIGIN_CHOICES)
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
    return choice, dashboard.origins_of(choice), prefer


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
def _mix(db: str, version: tuple, filters: tuple) -> dashboard.OriginMix:
    return dashboard.origin_mix(raw_scores(db, version, **dict(filters), origins=("published", "local")))


@st.cache_data(show_spinner=False, max_entries=32)
def _other_split_rows(db: str, version: tuple, filters: tuple) -> dict[str, int]:
    """Local score rows matching ``filters`` except their split, per split not in the view."""
    shown = dict(filters).get("splits") or ("cv",)
    rows = raw_scores(db, version, **{k: v for k, v in filters if k != "splits"}, origins=("local",),
                      splits=None)
    counts = rows.loc[~rows["split"].isin(shown), "split"].value_counts()
    return {str(split): int(n) for split, n in counts.items()}


@st.cache_data(show_spinner=False, max_entries=32)
def _disagreeing(db: str, version: tuple, filters: tuple, prefer: str) -> list[tuple[str, str, int]]:
    """Published datasets whose local scores agree poorly with the published ones
    (:func:`encbench.compare.published_agreement`): ``(name, agreement text, local scores of
    it that count in a view that prefers ``prefer``)``."""
    from encbench.compare import published_agreement

    raw = raw_scores(db, version, **dict(filters), origins=("published", "local"))
    local, published = raw[raw["origin"] == "local"], raw[raw["origin"] == "published"]
    names = datasets_table(db, version).set_index("dataset")["name"]
    cell = ["dataset", "model", "tuning", "scoring", "encoder"]
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


def origin_banner(choice: str, prefer: str, **filters) -> None:
    """Announce local results in a view, or say that local results exist but are left out.

    ``filters`` are the keyword filters of :func:`scores` (without ``origins``/``prefer``).
    """
    db, version = data_key()
    if choice == "published":
        local = local_overview(db, version)
        if local["rows"]:
            st.caption(f"Published benchmark only. {local['rows']:,} local score rows "
                       f"({local['datasets']} dataset(s), {local['runs']} run(s)) are left out; "
                       f"choose *both* under *Results* to include them.")
        return
    key = tuple(sorted((k, v) for k, v in filters.items()))
    text = dashboard.origin_banner(choice, _mix(db, version, key), prefer)
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
        for name, agreement, counted in _disagreeing(db, version, key, prefer):
            with st.container(key=f"origin-disagreement-{name}"):
                st.warning(
                    f"Local scores on {name} disagree with its published scores ({agreement}; README, "
                    f"'Differences from the published study'): "
                    + (f"{counted:,} of this view's scores on {name} come from those local runs"
                       + (", each replacing the published score of the same experiment." if prefer == "local"
                          else ", experiments the published benchmark lacks.")
                       if counted else
                       "none of them enters this view, the published scores count where both exist."),
                    icon=":material/rule:")


# --------------------------------------------------------------------------- exports

def _download_row(key: str, items: list[tuple[str, str, Callable[[], bytes], str]]) -> None:
    with st.container(horizontal=True, gap="small", key=f"exports-{key}"):
        for label, file_name, make, mime in items:
            st.download_button(label, data=make, file_name=file_name, mime=mime,
                               key=f"dl-{key}-{label.lower()}", on_click="ignore",
                               type="tertiary", icon=":material/download:")


def table_exports(frame: pd.DataFrame, item: str, provenance: export.Provenance, *,
                  best: dict[str, str] | None = None, latex: dict | None = None) -> None:
    """CSV / Parquet / LaTeX / provenance download buttons for ``frame`` (generated when clicked).

    The CSV is plain; its provenance is the JSON sidecar beside it (``<name>.provenance.json``).
    ``best`` (column -> ``"min"``/``"max"``) sets each column's best value in bold in LaTeX;
    ``latex`` holds further keywords of :func:`encbench.export.table_to_latex` (``best_within``,
    ``drop``, ``decimals``)."""
    _download_row(f"table-{item}", [
        (export.FORMAT_LABELS[fmt],
         provenance.file_name(item, fmt),
         (lambda fmt=fmt: export.table_bytes(frame, fmt, provenance, best=best, item=item,
                                             **(latex or {}) if fmt == "latex" else {})),
         export.MIME[fmt])
        for fmt in export.TABLE_FORMATS
    ])


def chart_exports(chart, item: str, provenance: export.Provenance) -> None:
    """PNG / SVG download buttons for an Altair chart or a Vega-Lite spec (rendered by vl-convert when clicked)."""
    _download_row(f"chart-{item}", [
        (export.FORMAT_LABELS[fmt], provenance.file_name(item, fmt),
         (lambda fmt=fmt: export.chart_bytes(chart, fmt, provenance)), export.MIME[fmt])
        for fmt in export.CHART_FORMATS
    ])


def show_table(frame: pd.DataFrame, item: str, provenance: export.Provenance, *,
               best: dict[str, str] | None = None, latex: dict | None = None,
               shown: pd.DataFrame | None = None, **kwargs) -> None:
    """A dataframe with its export buttons underneath (``best``, ``latex``: see :func:`table_exports`).

    ``shown`` is drawn instead of ``frame`` (e.g. :func:`dash_missing`'s copy); the exports are
    always of ``frame``."""
    st.dataframe(frame if shown is None else shown, hide_index=True, width="stretch", **kwargs)
    table_exports(frame, item, provenance, best=best, latex=latex)


MISSING = "\u2014"  # an em dash: how a table shows a value that does not exist


def dash_missing(frame: pd.DataFrame, formats: dict[str, str]) -> tuple[pd.DataFrame, list[str]]:
    """A copy to show where the numeric ``formats`` columns that lack values read as text.

    Streamlit's tables draw a missing number as "None"; these columns become right-aligned text,
    the number as ``formats[column]`` gives it (``"{:.4f}"``) or :data:`MISSING`. Numbers are
    padded on the left with spaces to one width, so sorting the text sorts the numbers
    (non-negative ones) and puts the missing last. Returns the copy and the columns changed
    (give them ``st.column_config.TextColumn(alignment="right")``).
    """
    shown, changed = frame.copy(), []
    for column, fmt in formats.items():
        if column not in shown or not shown[column].isna().any():
            continue
        text = [None if pd.isna(v) else fmt.format(v) for v in shown[column]]
        width = max((len(t) for t in text if t is not None), default=0)
        shown[column] = [MISSING if t is None else t.rjust(width) for t in text]
        changed.append(column)
    return shown, changed


def show_chart(chart, item: str, provenance: export.Provenance, *, width: str = "stretch",
               scroll: bool = False) -> None:
    """An Altair chart, or its Vega-Lite spec (a dict, e.g. cached), with its export buttons underneath.

    ``scroll=True`` (for a chart of fixed width, ``width="content"``, such as the CD diagram):
    on a screen narrower than the chart, the chart scrolls sideways inside its own row instead of
    widening the page."""
    # The spec without Altair's JSON-schema validation (st.altair_chart validates on every rerun,
    # about half of a chart's cost: 400 of 800 ms per Consensus rerun). Chart builders are
    # validated by tests/test_plots.py, and exports of a chart still validate when clicked.
    spec = chart if isinstance(chart, dict) else chart.to_dict(validate=False)
    if scroll:
        with st.container(horizontal=True, wrap=False, key=f"scroll-{item}"):
            st.vega_lite_chart(spec, width=width)
    else:
        st.vega_lite_chart(spec, width=width)
    chart_exports(chart, item, provenance)


def provenance(view: str, filters: dict, rows: pd.DataFrame | None, version: tuple) -> export.Provenance:
    """Provenance of an export from the filter state and the rows used."""
    return export.Provenance.from_scores(view, filters, rows, snapshot=snapshot_label(version))


# --------------------------------------------------------------------------- text from users

#: What :func:`md_text` escapes: the ASCII punctuation that markdown (CommonMark, GFM, Streamlit's
#: directives) gives a meaning; quotes, commas, ``?``, ``/``, ``@``, ``%`` and ``;`` stay as they are.
_MD_PUNCTUATION = re.compile(r"[\\`*_{}\[\]()<>#+\-.!|~:$&=]")
#: Where GFM autolink literals start, in escaped text: the ``:`` of ``://``, ``www`` before a
#: ``.``, and ``@``; :func:`md_text` puts a word joiner after each.
_AUTOLINK_START = re.compile(r"\\:(?=//)|(?i:www)(?=\\\.)|@")
_WORD_JOINER = "\u2060"


def md_text(value) -> str:
    """``value`` as literal text inside markdown: its markdown punctuation backslash-escaped and
    its autolinks broken.

    Alerts, captions and ``st.markdown`` render markdown, so a value a user controls (a link's
    query value, a file, column or dataset name, an error message quoting one) must not form a
    link (``[x](http://...)``), an image the browser fetches (``![x](http://...)``), emphasis,
    Streamlit's ``:color[...]`` or ``$math$``: a backslash before ASCII punctuation is
    CommonMark's escape, and the text renders as the original characters. GFM's autolinks
    (``http://...``, ``www.``, ``a@b.c``) are found in the text after escapes are read, so an
    invisible word joiner (U+2060) goes where they start: after the ``:`` of ``://``, between
    ``www`` and its ``.``, and after ``@``.
    Streamlit's ``:icon:`` shortcodes still render (an icon of its own font, nothing fetched).
    """
    text = _MD_PUNCTUATION.sub(r"\\\g<0>", str(value))
    return _AUTOLINK_START.sub(lambda m: m.group(0) + _WORD_JOINER, text)


def md_code(value) -> str:
    """``value`` as an inline code span: shown verbatim, never read as markdown.

    The fence is one backtick longer than the longest run of backticks in ``value`` (so none
    closes it early), padded with spaces when ``value`` starts or ends with a backtick; line
    breaks become spaces, as they would inside a code span anyway.
    """
    text = " ".join(str(value).splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# --------------------------------------------------------------------------- sessions and modes

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
    from encbench.engine.requests import new_owner_token  # the engine: only pages that launch runs

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
