"""Consensus rankings: choose factors and aggregation strategies; the rankings recompute live."""
import contextlib
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from encbench import plots, stats, vocab
from encbench.jobs import JobCancelled, ProcessJob
from encbench.views import consensus
from encbench.views import consensus_analysis as ca
from encbench.views import rank_intervals as rank_iv
from pages.ui import exports, store
from pages.ui.exports import show_chart, show_table, table_exports
from pages.ui.filters import empty_selection, factor_filters, origin_banner, origin_filter, split_filter, task_levels
from pages.ui.jobs import cancel_other_jobs, forget_job, session_job
from pages.ui.navigation import drill_link, ensure_routed, guarded
from pages.ui.store import data_key
from pages.ui.text import md_code, md_text
from pages.ui.widgets import multiselect, parameter_inputs, selectbox, warn_bad_number, warn_bad_parameters

ensure_routed()

MAX_DRAWN = 40  # rankings drawn in the side-by-side charts (tables and exports hold all)
#: The page's tabs, in order; a label is the URL value that opens it (``?section=Rank+intervals``), so
#: renaming one breaks shared links. Agreement shows with two rankings or more, Kemeny-Young with R-Kem.
#: These two come last so that the other tabs keep their places when they come or go: a browser
#: still showing the old tabs when the new ones arrive can select a tab by its position, and would
#: open whichever tab then stands where the open one was.
TAB_KEY = "section"  # as on the Overview
RANKINGS, AGREEMENT, KEMENY = "Rankings", "Agreement", "Kemeny-Young"
CD, INTERVALS, PAIRWISE = "Critical difference", "Rank intervals", "Pairwise tests"
BAYES, ELO = "Bayesian test", "Win rates and Elo"
SECTIONS = (RANKINGS, CD, INTERVALS, PAIRWISE, BAYES, ELO, AGREEMENT, KEMENY)
_SECTIONS_SHOWN = "_consensus_sections"  # session state: the tab set of the last run
MODE_TEXT = {
    "per-combination": "one consensus per model/tuning/metric combination, shown side by side",
    "pooled": "one consensus over all selected combinations: every (dataset, combination) is a voter",
}

@st.cache_data(show_spinner=False, max_entries=64)
def heuristic_ranks(db: str, version: tuple, load_key: tuple, strategies: tuple, mode: str,
                    params: tuple) -> pd.DataFrame:
    frame = store.scores(db, version, **dict(load_key))
    return consensus.consensus_ranks(frame, list(strategies), mode=mode, params=dict(params))


@st.cache_data(show_spinner=False, max_entries=32)
def kemeny_ranks(db: str, version: tuple, load_key: tuple, mode: str):
    frame = store.scores(db, version, **dict(load_key))
    return consensus.kemeny_ranks(frame, mode=mode)


# The page draws encbench.views.consensus_analysis: its entry point gives the rankings every tab
# shares, its functions the tests of one combination. Each is cached here by plain values (the
# rankings' parts apart, so that adding a strategy solves no Kemeny problem again).
@st.cache_data(show_spinner=False, max_entries=64)
def block_design(db: str, version: tuple, load_key: tuple, combination: str, mode: str, design: str):
    return ca.block_design(store.scores(db, version, **dict(load_key)), combination, mode, design)


@st.cache_data(show_spinner=False, max_entries=64)
def critical_difference(db: str, version: tuple, load_key: tuple, combination: str, mode: str, alpha: float,
                        design: str) -> ca.CriticalDifference:
    return ca.critical_difference(store.scores(db, version, **dict(load_key)), combination, mode, design, alpha)


@st.cache_data(show_spinner=False, max_entries=64)
def intervals(db: str, version: tuple, load_key: tuple, combination: str, mode: str,
              strategy: str, B: int, params: tuple) -> pd.DataFrame:
    return ca.intervals(store.scores(db, version, **dict(load_key)), combination, mode, strategy, B, dict(params))


@st.cache_resource(show_spinner=False, max_entries=8)
def analysis_of(db: str, version: tuple, load_key: tuple, strategies: tuple, mode: str, values: tuple,
                alpha: float) -> ca.ConsensusAnalysis:
    """The analysis of a selection (shared, read-only: a resource is not copied on each read).

    Few are kept: each holds its selection's rows, and its parts (the ranks, Kemeny's solves, each
    tab's statistics) have caches of their own, so a selection seen again is assembled quickly."""
    frame = store.scores(db, version, **dict(load_key))
    mode = ca.used_mode(frame, mode)
    refused, _ = consensus.refused_for_pooling(frame, strategies, mode)
    kept = tuple(s for s in strategies if s not in refused)
    params = tuple(sorted(stats.params_for(kept, dict(values)).items())) if kept else ()
    ranks = heuristic_ranks(db, version, load_key, kept, mode, params) if kept else None
    solved = kemeny_ranks(db, version, load_key, mode) if consensus.KEMENY_STRATEGY in kept else None
    return ca.consensus_analysis(frame, strategies, mode=mode, params=dict(values), alpha=alpha, ranks=ranks,
                                 kemeny=solved)


# Charts are cached as Vega-Lite specs beside the numbers they draw: building and serialising an
# Altair chart costs more than the cached ranks behind it (about half of a rerun).
@st.cache_data(show_spinner=False, max_entries=64)
def view_charts(db: str, version: tuple, load_key: tuple, strategies: tuple, mode: str,
                params: tuple, alpha: float, section: str = RANKINGS) -> dict[str, dict]:
    """Specs of the charts a tab of the view draws: the rank matrix (``RANKINGS``) or the two
    agreement heatmaps (``AGREEMENT``); none when there are too many rankings to draw."""
    view = analysis_of(db, version, load_key, strategies, mode, params, alpha).rankings
    if len(view.columns) > MAX_DRAWN:
        return {}
    if section == RANKINGS:
        charts = {"rank-matrix": plots.rank_matrix(view.ranks, column="column", columns=view.columns,
                                                   encoders=view.wide["encoder"].astype(str).tolist(),
                                                   title="Consensus ranks side by side (1 = best)")}
    elif section == AGREEMENT and len(view.columns) > 1:
        charts = {"agreement-spearman": plots.similarity_heatmap(view.spearman, measure="Spearman rho",
                                                                 title="Spearman rho"),
                  "agreement-jaccard": plots.similarity_heatmap(view.jaccard, measure="Jaccard",
                                                                domain=(0.0, 1.0), title="Jaccard (best sets)")}
    else:
        charts = {}
    return {item: chart.to_dict(validate=False) for item, chart in charts.items()}


@st.cache_data(show_spinner=False, max_entries=64)
def cd_chart(db: str, version: tuple, load_key: tuple, combination: str, mode: str, alpha: float,
             design: str) -> tuple[dict, list[str]]:
    """Spec of the CD diagram and its subtitle (test, alpha, N, block design)."""
    cd = critical_difference(db, version, load_key, combination, mode, alpha, design)
    chart = plots.cd_diagram(*consensus.cd_inputs(cd.result), title=f"Critical difference: {combination}",
                             subtitle=cd.subtitle)
    return chart.to_dict(validate=False), cd.subtitle


NO_CONTROL = "(none)"
CONTROL_HELP = (
    "Compare every encoder with this one only (Demsar 2006), e.g. a baseline: the k - 1 comparisons are "
    "more powerful than Nemenyi's all pairs. Critical difference: from the same Friedman mean ranks, "
    "the bar spans the control's mean rank +- the Bonferroni-Dunn critical difference (normal quantile "
    "at alpha / (k - 1)); the table adds Holm's step-down. Pairwise tests: a Wilcoxon test of the "
    "control against every other encoder, Holm-corrected over the k - 1. Both assume independent datasets.")


@st.cache_data(show_spinner=False, max_entries=64)
def control_result(db: str, version: tuple, load_key: tuple, combination: str, mode: str, alpha: float,
                   design: str, control: str) -> stats.ControlResult:
    return ca.control_test(store.scores(db, version, **dict(load_key)), combination, mode, design, alpha, control)


@st.cache_data(show_spinner=False, max_entries=64)
def control_chart(db: str, version: tuple, load_key: tuple, combination: str, mode: str, alpha: float,
                  design: str, control: str) -> tuple[dict, list[str]]:
    """Spec of the CD diagram against a control and its caption lines."""
    result = control_result(db, version, load_key, combination, mode, alpha, design, control)
    subtitle = ca.control_subtitle(result, block_design(db, version, load_key, combination, mode, design))
    chart = plots.cd_diagram(result.mean_ranks, result.critical_difference, [], control=control,
                             title=f"Against {control}: {combination}", subtitle=subtitle)
    return chart.to_dict(validate=False), subtitle


@st.cache_data(show_spinner=False, max_entries=64)
def control_wilcoxon(db: str, version: tuple, load_key: tuple, combination: str, mode: str, control: str,
                     others: tuple, alpha: float) -> pd.DataFrame:
    return ca.against_control(store.scores(db, version, **dict(load_key)), combination, mode, control, others,
                              alpha)


@st.cache_data(show_spinner=False, max_entries=64)
def intervals_chart(db: str, version: tuple, load_key: tuple, combination: str, mode: str,
                    strategy: str, B: int, params: tuple) -> dict:
    iv = intervals(db, version, load_key, combination, mode, strategy, B, params)
    return intervals_spec(iv, strategy, combination)


@st.cache_data(show_spinner=False, max_entries=16)
def intervals_spec(iv: pd.DataFrame, strategy: str, combination: str) -> dict:
    """Spec of the rank-interval chart of ``iv`` (also for intervals a worker process computed)."""
    return plots.rank_intervals_chart(iv, title=f"Rank intervals: {strategy}, {combination}").to_dict(validate=False)


@st.cache_data(show_spinner=False, max_entries=64)
def interval_cells(db: str, version: tuple, load_key: tuple, combination: str, mode: str, B: int) -> int:
    """``B x voters x encoders`` of the rank intervals of ``combination`` (what decides where they run)."""
    frame = store.scores(db, version, **dict(load_key))
    return rank_iv.bootstrap_cells(consensus.subset_for(frame, combination, mode), B)


class FinishedIntervals:
    """Rank intervals that worker processes computed, by the same inputs as :func:`intervals`; the
    newest :attr:`SIZE` are kept, for every session (a revisit, or another visitor, is instant)."""

    SIZE = 16

    def __init__(self):
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple, pd.DataFrame] = OrderedDict()

    def get(self, key: tuple) -> pd.DataFrame | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
            return self._items.get(key)

    def put(self, key: tuple, frame: pd.DataFrame) -> None:
        with self._lock:
            self._items[key] = frame
            self._items.move_to_end(key)
            while len(self._items) > self.SIZE:
                self._items.popitem(last=False)


@st.cache_resource
def finished_intervals() -> FinishedIntervals:
    return FinishedIntervals()


INTERVAL_JOBS = "consensus_interval_jobs"  # session state: {inputs: ProcessJob}


@st.cache_data(show_spinner=False, max_entries=64)
def pairwise_tests(db: str, version: tuple, load_key: tuple, combination: str, mode: str,
                   encoders: tuple, alpha: float) -> pd.DataFrame:
    return ca.pairwise(store.scores(db, version, **dict(load_key)), combination, mode, encoders, alpha)


# Posterior draws drawn on the simplex: up to 2,000 marks Streamlit draws a chart as SVG, whose
# axis and legend text stays readable by assistive technologies (a canvas beyond).
BAYES_DRAWN = 1_500


@st.cache_data(show_spinner=False, max_entries=32)
def bayesian_test(db: str, version: tuple, load_key: tuple, combination: str, mode: str,
                  encoder_a: str, encoder_b: str, rope: float) -> stats.BayesianResult:
    return ca.bayes(store.scores(db, version, **dict(load_key)), combination, mode, encoder_a, encoder_b, rope)


@st.cache_data(show_spinner=False, max_entries=32)
def bayes_chart(db: str, version: tuple, load_key: tuple, combination: str, mode: str,
                encoder_a: str, encoder_b: str, rope: float) -> dict:
    result = bayesian_test(db, version, load_key, combination, mode, encoder_a, encoder_b, rope)
    chart = plots.posterior_simplex(result.sample_frame(BAYES_DRAWN), encoder_a=encoder_a, encoder_b=encoder_b,
                                    probabilities=result.probabilities.tolist(), rope=result.rope,
                                    title=f"Bayesian signed-rank test: {encoder_a} vs {encoder_b}",
                                    caption=ca.bayes_caption(result, combination, BAYES_DRAWN))
    return chart.to_dict(validate=False)


@st.cache_data(show_spinner=False, max_entries=32)
def elo_ratings(db: str, version: tuple, load_key: tuple, combination: str, mode: str, reference: str,
                B: int) -> stats.EloResult:
    return ca.elo(store.scores(db, version, **dict(load_key)), combination, mode, reference, B)


@st.cache_data(show_spinner=False, max_entries=32)
def elo_charts(db: str, version: tuple, load_key: tuple, combination: str, mode: str, reference: str,
               B: int) -> dict[str, dict]:
    result = elo_ratings(db, version, load_key, combination, mode, reference, B)
    caption = ca.elo_caption(result, combination)
    return {"elo": plots.elo_chart(result.table, reference=reference, title=f"Elo ratings: {combination}",
                                   caption=caption).to_dict(validate=False),
            "win-rates": plots.win_rate_heatmap(result.win_rates, title=f"Win rates (row beats column): "
                                                f"{combination}").to_dict(validate=False)}


LOWER_NOTE = (" Scores of a lower-is-better metric (RMSE, MAE) are negated first, as in the rankings: "
              "a positive difference, a win or a positive rank-biserial still means A is better "
              "(a lower error).")


@dataclass(frozen=True)
class _Page:
    """What the tabs draw: the data and selection (the keys of the cached computations), the
    analysis of the selection and the provenance of its exports."""

    db: str
    version: tuple
    task: str
    selected: dict
    choice: str
    prefer: str
    load_key: tuple
    view_key: tuple
    param_key: tuple
    alpha: float
    analysis: ca.ConsensusAnalysis
    provenance: object

    @property
    def mode(self) -> str:
        return self.analysis.mode

    @property
    def view(self) -> consensus.ConsensusView:
        return self.analysis.rankings  # type: ignore[return-value]


def _combination(targets: list[str]) -> str:
    """The combination the open section is about: one select, shared by the sections that need it."""
    if len(targets) == 1:
        return targets[0]
    return selectbox("Combination", targets, key="detail",
                     help="The critical-difference diagram, the rank intervals and the pairwise "
                          "tests are for one combination at a time (the same one in each tab).")


def _mixed_scale_pool(page: _Page, what: str) -> bool:
    """Say so and return True when a section comparing raw scores across voters is asked for
    pooled voters of metrics of different scales (RMSE with R2)."""
    metrics = consensus.mixed_scales(page.analysis.scores) if page.mode == consensus.POOLED else []
    if metrics:
        with st.container(key="mixed-scales"):
            st.info(f"{what}, which means nothing across the pooled metrics of different scales "
                    f"({', '.join(metrics)}). Choose *per-combination* above, or one metric; the rankings, "
                    "the critical-difference diagram and Elo (ranks and wins within each voter) pool them.")
    return bool(metrics)


def _control(encoders: list[str]) -> str | None:
    """The control encoder select, shared by the CD and the pairwise tabs (``?control=OH``)."""
    choice = selectbox("Control encoder", [NO_CONTROL, *sorted(encoders)], key="control",
                       default=NO_CONTROL, help=CONTROL_HELP)
    return None if choice in (None, NO_CONTROL) else choice


def _rankings_section(page: _Page) -> None:
    view, provenance, selected = page.view, page.provenance, page.selected
    # every strategy column holds consensus ranks (1 = best): LaTeX sets each column's best in bold
    picked = show_table(view.wide, "rankings", provenance, height=min(38 + 35 * len(view.wide), 700),
                        select=True,
                        best={c: "min" for c in view.wide.columns
                              if pd.api.types.is_numeric_dtype(view.wide[c])})
    if picked is None:
        st.caption("Select a row to see that encoder's scores dataset by dataset.")
    else:
        drill_link(str(picked["encoder"]), task=page.task, models=selected["model"], tunings=selected["tuning"],
                   metrics=selected["scoring"], origin=page.choice, prefer=page.prefer,
                   beyond=bool(st.session_state.get("beyond")))
    drawn = view_charts(*page.view_key, RANKINGS)
    if drawn:
        show_chart(drawn["rank-matrix"], "rank-matrix", provenance)
    else:
        st.info(f"{len(view.columns)} rankings are too many to draw; the table and its exports hold "
                "all of them. Narrow the selection or pool the combinations.")


def _agreement_section(page: _Page) -> None:
    view, provenance = page.view, page.provenance
    st.caption("Spearman's rho over the encoders two rankings share, and the Jaccard index of their "
               "sets of rank-1 encoders.")
    drawn = view_charts(*page.view_key, AGREEMENT)
    if drawn:
        # side by side while both fit; stacked (each at full width) for many rankings
        a, b = st.columns(2) if len(view.columns) <= 5 else (st.container(), st.container())
        with a:
            show_chart(drawn["agreement-spearman"], "agreement-spearman", provenance, width="content")
        with b:
            show_chart(drawn["agreement-jaccard"], "agreement-jaccard", provenance, width="content")
    show_table(page.analysis.agreement, "agreement", provenance)


def _kemeny_section(page: _Page) -> None:
    kemeny_info, provenance = page.analysis.kemeny, page.provenance
    total = kemeny_info["solve_time_s"].sum()
    st.markdown(f"Exact Kemeny-Young consensus solved with HiGHS in **{total:.3f} s** "
                f"({len(kemeny_info)} problem(s); all optimal: {bool(kemeny_info['optimal'].all())}).")
    st.caption("Reading it: a voter (dataset) that ties two encoders counts as agreeing with either "
               "order, so a shared rank can score better than any strict order. With models that "
               "often tie encoders (DT, or datasets where every encoder scores the same) many "
               "encoders can share rank 1. That follows from the study's definition of the consensus, not a "
               "solver artefact: every solve above is proven optimal.")
    st.caption("**agreement** = objective / max objective, from -1 to 1 (1: the consensus agrees with "
               "every dataset on every pair of encoders). Compare it, not the raw objective: when some "
               "dataset lacks encoders each dataset's pairs are divided by w (w - 1) (w = encoders it "
               "ranks), so the objective is at most the number of datasets; on complete data it is a "
               "sum of +-1 over every dataset and pair, and runs into the thousands.")
    show_table(kemeny_info, "kemeny", provenance,
               column_config={"solve_time_s": st.column_config.NumberColumn("solve time (s)", format="%.4f"),
                              "agreement": st.column_config.NumberColumn(format="%.3f"),
                              "objective": st.column_config.NumberColumn(format="%.4f"),
                              "max_objective": st.column_config.NumberColumn("max objective", format="%.4g")})


# The sections about one combination have selects of their own (combination, incomplete-data
# design, interval strategy, bootstrap B, encoders): each is a fragment, so changing one of them
# reruns that section only, not the page above it (a bootstrap-driven select).
# The tabs themselves are outside every fragment: switching tabs reruns the page.
@st.fragment
@guarded
def _cd_section(page: _Page) -> None:
    db, version, load_key, mode_used, alpha, provenance = (page.db, page.version, page.load_key, page.mode,
                                                           page.alpha, page.provenance)
    targets = page.analysis.targets
    d1, d2, d3 = st.columns(3)
    with d1:
        target = _combination(targets)
    with d2:
        design_name = selectbox(
            "Incomplete datasets (Friedman/Nemenyi)", list(stats.BLOCK_DESIGNS), key="blocks", default="all",
            help="The Friedman test and the Nemenyi CD assume every dataset ranks every encoder. "
                 + "; ".join(f"{k}: {v}" for k, v in stats.BLOCK_DESIGNS.items()) + ".")
    with d3:
        control = _control(sorted(set(consensus.subset_for(page.analysis.scores, target,
                                                           mode_used)["encoder"].astype(str))))
    design = block_design(db, version, load_key, target, mode_used, design_name)
    with st.container(key="cd-completeness"):
        st.markdown(f"**{design.n_complete_datasets} of {design.n_datasets}** datasets have a result for "
                    f"every one of the {design.n_encoders} encoders; **{design.n_common_encoders} of "
                    f"{design.n_encoders}** encoders have a result on every dataset.")
    if design.scores.empty or design.scores["encoder"].nunique() < 2:
        st.info(f"No critical-difference diagram for {target} with *{design_name}*: {design.description}"
                " leaves fewer than two encoders or no dataset. Choose another option above.")
        return
    try:
        cd = critical_difference(db, version, load_key, target, mode_used, float(alpha), design_name)
        result = cd.result
    except ValueError as exc:
        st.info(f"No critical-difference diagram for {target}: {md_text(exc)}")
        return
    if control is not None and control not in set(result.mean_ranks.index.astype(str)):
        st.info(f"The control {md_code(control)} has no result in *{design_name}*: showing the "
                "Nemenyi diagram of all pairs.")
        control = None
    if control is not None:
        _control_diagram(page, target, design_name, control)
        return
    spec, subtitle = cd_chart(db, version, load_key, target, mode_used, float(alpha), design_name)
    st.caption(" · ".join(subtitle) + ". Red bars join encoders not significantly different.")
    with st.container(key="cd-ties"):
        st.caption(cd.ties.text() + ("" if design_name == "all" else
                                  f" (R-M on the Rankings tab ranks every voter; this diagram *{design_name}*.)"))
    cd_provenance = provenance.with_filters(detail=target, blocks=design_name)
    # one Download menu under the diagram: its picture and its numbers
    show_chart(spec, "cd-diagram", cd_provenance, width="content", scroll=True, table=(cd.table, "nemenyi"))


def _control_diagram(page: _Page, target: str, design_name: str, control: str) -> None:
    """The CD diagram against a control (Demsar's Fig. 2) and the table of the k - 1 tests."""
    db, version, load_key, mode_used, alpha, provenance = (page.db, page.version, page.load_key, page.mode,
                                                           page.alpha, page.provenance)
    result = control_result(db, version, load_key, target, mode_used, alpha, design_name, control)
    spec, subtitle = control_chart(db, version, load_key, target, mode_used, alpha, design_name, control)
    st.caption(" · ".join(subtitle) + f". Encoders whose mean rank lies outside the orange bar differ "
               f"significantly from {control} (Bonferroni-Dunn).")
    control_provenance = provenance.with_filters(detail=target, blocks=design_name, control=control)
    show_chart(spec, "cd-control", control_provenance, width="content")
    show_table(result.table, "control-test", control_provenance, best={"p_holm": "min"}, column_config={
        c: st.column_config.NumberColumn(format="%.4g") for c in ("difference", "z", "p_value", "p_bonferroni",
                                                                  "p_holm")})
    st.caption(f"difference = mean rank - {control}'s (negative: better than {control}); significant_bd: "
               f"|difference| > CD (Bonferroni-Dunn); significant_holm: Holm-adjusted p < alpha = {alpha:g}.")


@st.fragment
@guarded
def _intervals_section(page: _Page) -> None:
    db, version, load_key, mode_used, param_key, provenance = (page.db, page.version, page.load_key, page.mode,
                                                               page.param_key, page.provenance)
    targets, strategies = page.analysis.targets, list(page.analysis.strategies)
    d1, d2, d3 = st.columns([2, 1, 1])
    with d1:
        target = _combination(targets)
    interval_options, left_out = ca.interval_strategies(strategies)   # expensive ones left out
    with d2:
        interval_strategy = selectbox(
            "Interval strategy", interval_options, key="istrategy",
            help="Bootstrap intervals need one consensus per resample; "
                 + ", ".join(f"{s} (one {vocab.STRATEGY_REGISTRY[s].cost} each)" for s in left_out)
                 + f" {'is' if len(left_out) == 1 else 'are'} left out as too slow for that." if left_out else None)
        for s in left_out:
            st.caption(f"{s} has no bootstrap interval here: it would need one {vocab.STRATEGY_REGISTRY[s].cost} "
                       "per resample.")
    with d3:
        B = st.number_input("Bootstrap resamples", 50, 2000, 200, 50, key="B", bind="query-params")
    key = (db, version, load_key, target, mode_used, interval_strategy, int(B), param_key)
    cancel_other_jobs(INTERVAL_JOBS, key)   # the view changed: stop work nobody will see
    try:
        cells = interval_cells(*key[:5], int(B))
        if rank_iv.in_worker(cells):
            iv = _worker_intervals(key, cells)
            if iv is None:
                return                          # in progress, cancelled or failed: said so
            spec = intervals_spec(iv, interval_strategy, target)
        else:
            iv = intervals(*key)
            spec = intervals_chart(*key)
    except ValueError as exc:
        st.info(f"No rank intervals for {target}: {md_text(exc)}")
        return
    st.caption(f"{interval_strategy} consensus rank with its 95% bootstrap interval "
               f"({int(B)} resamples of the voters, seed 0).")
    intervals_provenance = provenance.with_filters(detail=target, interval_strategy=interval_strategy, B=int(B))
    show_chart(spec, "rank-intervals", intervals_provenance, table=(iv, "rank-intervals"))


def _worker_intervals(key: tuple, cells: int) -> pd.DataFrame | None:
    """The rank intervals of ``key`` from a worker process: kept from an earlier job, or from a
    job of this session (started if needed) once it is done. None while they are not there (in
    progress, cancelled, or failed, each said).

    Raises
    ------
    ValueError
        What the bootstrap raised on these inputs (the page says it as for an in-page one).
    """
    finished = finished_intervals()
    iv = finished.get(key)
    if iv is not None:
        return iv
    target, mode_used, strategy, B, param_key = key[3:]

    def start() -> ProcessJob:
        frame = consensus.subset_for(store.scores(*key[:2], **dict(key[2])), target, mode_used)
        return ProcessJob(rank_iv.rank_intervals_job, rank_iv.job_scores(frame), strategy, B, param_key,
                          cancel_grace=0)

    def progress(job: ProcessJob) -> None:
        if job.queued:
            text = f"The {strategy} rank intervals wait for a free worker process (others are computing)."
        else:
            text = (f"Computing the {strategy} rank intervals in a worker process: {B:,} resamples, "
                    f"{cells:,} ranks ({time.monotonic() - job.started:.0f} s so far).")
        st.info(text + " The page stays usable; the chart appears when they are done.",
                icon=":material/hourglass_top:")

    job = session_job(INTERVAL_JOBS, key, start, prefix="intervals", progress=progress,
                      cancel_label="Cancel", restart_label="Compute them",
                      cancelled_text=f"The {strategy} rank intervals ({B:,} resamples) were cancelled.")
    if job is None:
        return None
    if job.error is None and job.result is not None:
        forget_job(INTERVAL_JOBS, key)   # kept by its inputs for every session
        finished.put(key, job.result)
        return job.result
    if isinstance(job.error, ValueError):
        raise job.error
    error = job.error or JobCancelled("the worker returned no intervals")
    st.error(f"The {strategy} rank intervals could not be computed: {type(error).__name__}: "
             f"{md_text(error)}")
    return None


#: what the effect-size columns of the pairwise table are and what they assume
EFFECT_HELP = (
    "How much, beside whether: **median_low, median_high** bound the median of score A - score B "
    "(exact 95% interval from the order statistics, assuming only independent datasets; blank below "
    "6 datasets). **rank_biserial** = (T+ - T-) / (T+ + T-) from the signed ranks the test uses "
    "(+1: A higher on every dataset where they differ, -1: B; 0: balanced), with a 95% percentile "
    "bootstrap interval over datasets (1,000 resamples, seed 0).")


def _effect_columns() -> dict:
    """Formats and help of the effect-size columns of the pairwise table."""
    median = "Exact 95% interval of the median difference (order statistics; blank below 6 datasets)."
    rb = "Matched-pairs rank-biserial correlation, -1 to 1 (positive: A scores higher)."
    return {"median_low": st.column_config.NumberColumn(format="%.4g", help=median),
            "median_high": st.column_config.NumberColumn(format="%.4g", help=median),
            "rank_biserial": st.column_config.NumberColumn(format="%.3f", help=rb),
            "rank_biserial_low": st.column_config.NumberColumn(format="%.3f", help="95% bootstrap interval: low"),
            "rank_biserial_high": st.column_config.NumberColumn(format="%.3f", help="95% bootstrap interval: high")}


@st.fragment
@guarded
def _pairwise_section(page: _Page) -> None:
    db, version, load_key, mode_used, alpha = page.db, page.version, page.load_key, page.mode, page.alpha
    lower_is_better = page.analysis.lower_is_better
    target = _combination(page.analysis.targets)
    if _mixed_scale_pool(page, "The Wilcoxon tests rank score differences across voters"):
        return
    st.caption(f"Wilcoxon signed-rank test over the datasets where both encoders have a result "
               f"({target}; two-sided, zero differences dropped). With more than two encoders every "
               f"pair is tested and the p-values are Holm-corrected (family-wise alpha = {alpha})."
               + LOWER_NOTE * lower_is_better)
    present = page.analysis.encoders(target)
    control = _control(present)
    if control is not None:
        _control_pairs(page, target, control, [e for e in present if e != control])
        return
    # No "Select all" row: while the user types, Streamlit puts "Select N matches" first, so
    # typing MT + Enter added the 13 encoders whose names contain MT instead of MT.
    chosen = multiselect("Encoders to compare", present, key="wilcoxon", default=present[:2],
                         help="A is the encoder listed first; a positive median difference "
                              "means A scores higher.", select_all=False)
    if len(chosen) < 2:
        st.info("Choose two encoders or more to test.")
        return
    table = pairwise_tests(db, version, load_key, target, mode_used, tuple(chosen), float(alpha))
    wilcoxon_provenance = page.provenance.with_filters(detail=target, wilcoxon=list(chosen))
    show_table(table, "wilcoxon", wilcoxon_provenance, best={"p_holm": "min"}, column_config={
        c: st.column_config.NumberColumn(format="%.4g") for c in ("median_difference", "p_value", "p_holm")}
        | _effect_columns())
    st.caption(EFFECT_HELP)


def _control_pairs(page: _Page, target: str, control: str, others: list[str]) -> None:
    """Wilcoxon tests of the control against every other encoder, Holm-corrected over them."""
    db, version, load_key, mode_used, alpha = page.db, page.version, page.load_key, page.mode, page.alpha
    lower_is_better = page.analysis.lower_is_better
    if not others:
        st.info(f"{target} has no encoder besides {md_code(control)} to compare with it.")
        return
    table = control_wilcoxon(db, version, load_key, target, mode_used, control, tuple(others), float(alpha))
    differ = table[table["significant"]]
    # oriented scores: under RMSE "better" is a lower error, never a higher score
    better_word, worse_word = ("do better", "worse") if lower_is_better else ("score higher", "lower")
    better = differ.loc[differ["rank_biserial"] < 0, "encoder_b"].tolist()
    worse = differ.loc[differ["rank_biserial"] > 0, "encoder_b"].tolist()
    with st.container(key="control-summary"):
        st.markdown(f"Against **{control}** ({len(others)} Wilcoxon tests, Holm, alpha = {alpha:g}): "
                    f"**{len(better)}** {better_word} ({', '.join(better) or 'none'}), **{len(worse)}** {worse_word} "
                    f"({', '.join(worse) or 'none'}); the other {len(others) - len(differ)} do not differ "
                    f"significantly.")
    control_provenance = page.provenance.with_filters(detail=target, control=control)
    show_table(table, "wilcoxon-control", control_provenance, best={"p_holm": "min"}, column_config={
        c: st.column_config.NumberColumn(format="%.4g") for c in ("median_difference", "p_value", "p_holm")}
        | _effect_columns())
    st.caption(f"A is the control, {control}: a negative median difference or rank-biserial means the other "
               f"encoder does better. " + EFFECT_HELP + LOWER_NOTE * lower_is_better)


#: what the Bayesian test computes and assumes (the tab's help)
BAYES_HELP = (
    "For two encoders over the datasets both have, the posterior probability that A is practically "
    "better (the difference A - B beyond the ROPE), that they are practically equivalent (within "
    "+-ROPE), or that B is better: a Bayesian signed-rank test with a Dirichlet-process prior "
    "(Benavoli et al. 2017, JMLR 18). Unlike a p-value it can say that two encoders are equivalent. "
    "It assumes the datasets are independent (pooled combinations are not) and that a difference "
    "of at most the ROPE, in score units (e.g. 0.01 AUC), does not matter in practice; each point "
    "of the triangle is one posterior draw, coloured by its most probable outcome.")


@st.fragment
@guarded
def _bayes_section(page: _Page) -> None:
    db, version, load_key, mode_used = page.db, page.version, page.load_key, page.mode
    st.caption(BAYES_HELP)
    warn_bad_number("rope", low=0.0, high=0.5)
    d1, d2, d3, d4 = st.columns([2, 1, 1, 1])
    with d1:
        target = _combination(page.analysis.targets)
    if _mixed_scale_pool(page, "The Bayesian test reads score differences in score units (its ROPE)"):
        return
    present = page.analysis.encoders(target)
    if len(present) < 2:
        st.info(f"{target} has fewer than two encoders with results: nothing to compare.")
        return
    with d2:
        a = selectbox("Encoder A", present, key="bayes_a", default=present[0])
    with d3:
        b = selectbox("Encoder B", [e for e in present if e != a], key="bayes_b", default=present[1])
    with d4:
        rope = st.number_input("ROPE (score units)", 0.0, 0.5, 0.01, 0.001, format="%.3f", key="rope",
                               bind="query-params",
                               help="Half-width of the region of practical equivalence: differences of "
                                    "at most this much (e.g. 0.01 AUC) count as none.")
    if mode_used == "pooled":
        st.caption("Pooled: every (dataset, combination) counts as a dataset here, but one dataset's "
                   "combinations are not independent, so the probabilities are overconfident.")
    try:
        result = bayesian_test(db, version, load_key, target, mode_used, a, b, float(rope))
    except ValueError as exc:
        st.info(f"No Bayesian test for {target}: {md_text(exc)}")
        return
    with st.container(key="bayes-probabilities"):
        st.markdown(f"P({a} better) = **{result.p_a_better:.3f}** · P(equivalent) = **{result.p_equivalent:.3f}** "
                    f"· P({b} better) = **{result.p_b_better:.3f}** ({ca.n_text(result.n_datasets, mode_used)}, "
                    f"ROPE = +-{result.rope:g})")
    bayes_provenance = page.provenance.with_filters(detail=target, bayes_a=a, bayes_b=b, rope=float(rope))
    show_chart(bayes_chart(db, version, load_key, target, mode_used, a, b, float(rope)),
               "bayesian-simplex", bayes_provenance, width="content")
    show_table(result.table, "bayesian", bayes_provenance, column_config={
        c: st.column_config.NumberColumn(format="%.4f") for c in result.table.columns if c.startswith(("p_", "mean_"))})
    st.caption(f"The {result.samples.shape[0]:,} posterior draws behind it:")
    table_exports(result.sample_frame(), "bayesian-draws", bayes_provenance)


#: what the Elo tab computes and assumes (its help)
ELO_HELP = (
    "Win rates and Elo as TabArena reports them: every dataset is a match between every pair of "
    "encoders that both have a result on it (the higher score wins, equal scores tie and count half). "
    "The win rate is the share of matches won; the Elo ratings are the Bradley-Terry model "
    "P(A beats B) = 1 / (1 + 10^((R_B - R_A) / 400)) fitted by maximum likelihood, with one virtual "
    "dataset on which all encoders tie as a weak prior (it keeps the rating of an encoder that wins "
    "every match finite), shifted so that the reference encoder has 1000. The intervals resample "
    "whole datasets; they assume the datasets are independent draws from the datasets one cares "
    "about. The Elo strategy among the aggregation strategies ranks by the same ratings.")


@st.fragment
@guarded
def _elo_section(page: _Page) -> None:
    db, version, load_key, mode_used = page.db, page.version, page.load_key, page.mode
    st.caption(ELO_HELP)
    warn_bad_number("elo_B", low=50, high=2000, integer=True)
    d1, d2, d3 = st.columns([2, 1, 1])
    with d1:
        target = _combination(page.analysis.targets)
    scored = sorted(set(consensus.subset_for(page.analysis.scores, target, mode_used)["encoder"].astype(str)))
    with d2:
        reference = selectbox("Reference encoder (Elo 1000)", scored, key="elo_ref", default="OH",
                              help="The ratings are shifted so that this encoder has 1000; "
                                   "differences between encoders do not depend on it.")
    with d3:
        B = st.number_input("Bootstrap resamples", 50, 2000, 200, 50, key="elo_B", bind="query-params")
    if mode_used == "pooled":
        st.caption("Pooled: every (dataset, combination) plays as a dataset of its own, but one dataset's "
                   "combinations are not independent, so the intervals are too narrow.")
    try:
        result = elo_ratings(db, version, load_key, target, mode_used, reference, int(B))
    except ValueError as exc:
        st.info(f"No Elo ratings for {target}: {md_text(exc)}")
        return
    best = result.table.iloc[0]
    # ratings that show the same (rounded to a point) are a tie, not a winner
    top = result.table.loc[result.table["elo"].round() == round(float(best["elo"])), "encoder"].astype(str).tolist()
    with st.container(key="elo-summary"):
        if len(top) > 1:
            head = (f"Highest Elo: a tie of **{', '.join(top)}** (each {best['elo']:.0f} to the point: no single "
                    f"encoder is rated highest; see the intervals below)")
        else:
            head = (f"Highest Elo: **{best['encoder']}** ({best['elo']:.0f}, {result.level:.0%} interval "
                    f"{best['low']:.0f} to {best['high']:.0f}; win rate {best['win_rate']:.3f})")
        st.markdown(f"{head} · {result.reference} = 1000 (the reference) · {ca.n_text(result.n_datasets, mode_used)}")
    elo_provenance = page.provenance.with_filters(detail=target, elo_ref=reference, elo_B=int(B))
    drawn = elo_charts(db, version, load_key, target, mode_used, reference, int(B))
    show_chart(drawn["elo"], "elo", elo_provenance)
    show_table(result.table, "elo", elo_provenance, best={"elo": "max", "win_rate": "max"}, column_config={
        "elo": st.column_config.NumberColumn("Elo", format="%.0f"),
        "low": st.column_config.NumberColumn(format="%.0f"), "high": st.column_config.NumberColumn(format="%.0f"),
        "win_rate": st.column_config.NumberColumn("win rate", format="%.3f"),
        "wins": st.column_config.NumberColumn(help="matches won, ties counting half", format="%g")})
    st.caption("Win rates: the share of their shared datasets on which the row encoder beats the column "
               "one (ties half); grey: the diagonal, and pairs that never meet.")
    show_chart(drawn["win-rates"], "win-rates", elo_provenance, width="content",
               table=(result.win_rates.reset_index(), "win-rates"))


def _tabs(page: _Page) -> None:
    """The tab set (the sections this view has) and the open tab, drawn."""
    # The combinations the CD diagram, the rank intervals and the pairwise tests can be about.
    targets = page.analysis.targets
    if len(targets) == 1 and "detail" in st.query_params and "detail" not in st.session_state:
        # A link's detail= names a combination this view does not have: drop it. When the
        # Combination select was shown on an earlier run, its URL binding is Streamlit's (deleting
        # raises); Streamlit drops the parameter of a widget that is gone.
        del st.query_params["detail"]

    # Each section is a tab, and only the open one runs and is drawn (the browser's
    # drawing of every section was most of a filter change). The open tab is in the URL (?section=...).
    sections = [s for s in SECTIONS if (s != AGREEMENT or len(page.view.columns) > 1)
                and (s != KEMENY or page.analysis.kemeny is not None)]
    asked = st.query_params.get(TAB_KEY)
    with st.container():   # always there (empty as a rule), so the tabs below keep their place
        if asked and asked not in sections:   # Streamlit drops it and opens the first tab
            needs = {AGREEMENT: " (it needs two rankings or more)",
                     KEMENY: f" (it needs {consensus.KEMENY_STRATEGY} among the strategies)"}
            st.info(f"This view has no {md_code(asked)} tab{needs.get(asked, '')}: showing *{RANKINGS}*.")
    # Streamlit identifies a tab set by its labels: another set is another widget, which can come
    # back with the tab last open in *that* set. So when the set changes (a filter changed, no tab
    # was clicked) the tab open until now stays open if the new set has it, and Rankings otherwise.
    if st.session_state.get(_SECTIONS_SHOWN, sections) != sections:
        st.session_state[TAB_KEY] = asked if asked in sections else RANKINGS
    st.session_state[_SECTIONS_SHOWN] = sections
    tab = dict(zip(sections, st.tabs(sections, key=TAB_KEY, bind="query-params")))

    if tab[RANKINGS].open:
        with tab[RANKINGS]:
            _rankings_section(page)
    if AGREEMENT in tab and tab[AGREEMENT].open:
        with tab[AGREEMENT]:
            _agreement_section(page)
    if KEMENY in tab and tab[KEMENY].open:
        with tab[KEMENY]:
            _kemeny_section(page)
    if tab[CD].open:
        with tab[CD]:
            _cd_section(page)
    if tab[INTERVALS].open:
        with tab[INTERVALS]:
            _intervals_section(page)
    if tab[PAIRWISE].open:
        with tab[PAIRWISE]:
            _pairwise_section(page)
    if tab[BAYES].open:
        with tab[BAYES]:
            _bayes_section(page)
    if tab[ELO].open:
        with tab[ELO]:
            _elo_section(page)


@guarded
def main() -> None:
    """The page: the filters, the analysis of the selection, and the open tab."""
    st.title("Consensus rankings")
    st.caption("Aggregate the per-dataset rankings of encoders into one consensus per strategy "
               "(1 = best; ties share a rank). Everything below follows the filters, which are kept "
               "in the URL.")

    db, version = data_key()
    task, levels = task_levels(db, version)

    warn_bad_parameters()
    warn_bad_number("B", low=50, high=2000, integer=True)
    with st.container(border=True):
        selected = factor_filters(levels, {"model": ["LogReg"], "tuning": ["no"], "scoring": ["AUC"]}, task=task)
        c1, c2, c3 = st.columns([3, 2, 2])
        with c1:
            strategies = multiselect(
                "Aggregation strategies", list(stats.STRATEGIES), key="strategy",
                default=["R-M", "Q-M", "R-Nem"], help=vocab.strategy_help())
        with c2:
            # alpha stays enabled without R-Nem: the CD diagram and the pairwise tests below use it
            values = parameter_inputs(strategies, keep_enabled=("alpha",))
        alpha = values["alpha"]
        with c3:
            mode = st.radio("Several combinations", list(consensus.MODES), key="mode",
                            bind="query-params",
                            help="; ".join(f"{k}: {v}" for k, v in MODE_TEXT.items()))
        choice, origins, prefer = origin_filter(levels)
        split = split_filter(levels)

    missing = empty_selection({**selected, "strategy": strategies})
    if missing:
        st.warning(f"Select at least one value for: {', '.join(missing)}.")
        st.stop()

    filter_key = (("models", tuple(selected["model"])), ("tunings", tuple(selected["tuning"])),
                  ("scorings", tuple(selected["scoring"])), ("splits", (split,)), ("tasks", (task,)))
    origin_banner(choice, prefer, **dict(filter_key))
    load_key = (*filter_key, ("origins", origins), ("prefer", prefer))
    rows = store.scores(db, version, **dict(load_key))
    if rows.empty:
        st.info("No results for this combination of model, tuning and metric. "
                "(In the published data LGBM was run without tuning only, and SVM without model tuning.)")
        st.stop()

    combos = consensus.combinations_of(rows)
    st.markdown(f"**Aggregation:** {MODE_TEXT[mode if len(combos) > 1 else 'per-combination']}. "
                f"{len(combos)} combination(s), {rows['dataset'].nunique()} datasets, "
                f"{rows['encoder'].nunique()} encoders.")
    if (mode == "pooled" and len(combos) > 1 and len(selected["scoring"]) > 1 and not consensus.mixed_scales(rows)
            and any(vocab.STRATEGY_REGISTRY[s].uses_scores for s in strategies)):
        st.caption("Note: quality strategies (Q-*) pool raw scores of different metrics (of one scale: "
                   f"{', '.join(selected['scoring'])}).")

    # Pooled voters of several metrics are oriented (lower-is-better negated), so rank strategies pool
    # them; a strategy that averages raw scores across voters is left out over metrics of different
    # scales (the analysis says which, and the page says so). The columns of the expensive strategies
    # (solved one ranking at a time) are part of the rankings: solved whatever the tab, with a spinner.
    expensive = vocab.expensive_strategies(strategies)
    view_key = (db, version, load_key, tuple(strategies), mode, tuple(sorted(values.items())), float(alpha))
    try:
        costs = ", ".join(vocab.STRATEGY_REGISTRY[s].cost for s in expensive)
        # no element without a spinner: an empty one would shift the tabs' place between runs
        with st.spinner(f"Solving {', '.join(expensive)} ({costs} per ranking)...", show_time=True) \
                if expensive else contextlib.nullcontext():
            analysis = analysis_of(*view_key)
    except ValueError as exc:  # e.g. Q-Th on RMSE (it needs a bounded, higher-is-better metric)
        st.warning(f"No consensus for this selection: {md_text(exc)}.")
        st.stop()
    mode_used = analysis.mode
    if analysis.refused:
        with st.container(key="pooling-refused"):
            st.warning(analysis.refused_why, icon=":material/block:")
        if not analysis.strategies:
            st.stop()
    strategies, params = list(analysis.strategies), analysis.params
    param_key = tuple(sorted(params.items()))

    filters = {"model": selected["model"], "tuning": selected["tuning"], "metric": selected["scoring"],
               "strategy": strategies, **params, "mode": mode_used, "origin": choice,
               **({"prefer": prefer} if choice == "both" else {}),
               **({"split": split} if "time" in levels.get("split", []) else {})}
    provenance = exports.provenance("consensus", filters, rows, version, task=task)
    page = _Page(db, version, task, selected, choice, prefer, load_key, view_key, param_key, float(alpha), analysis,
                 provenance)

    with st.container(key="ranking-summary"):
        st.markdown(analysis.summary)

    _tabs(page)


main()
