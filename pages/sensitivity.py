"""Sensitivity: how much consensus rankings change when one factor of the experiment changes."""
import streamlit as st

from encbench import plots, stats, vocab
from encbench.views import sensitivity
from pages.ui.exports import provenance, show_chart, show_table
from pages.ui.filters import FACTOR_LABELS, SPLIT_HELP, origin_banner, origin_filter, task_levels, task_options
from pages.ui.navigation import ensure_routed
from pages.ui.store import data_key, scores
from pages.ui.text import md_text
from pages.ui.widgets import multiselect, parameter_inputs, selectbox, warn_bad_parameters

ensure_routed()

VARY_LABELS = {"model": "model", "scoring": "metric", "tuning": "tuning", "split": "split",
               "strategy": "strategy"}
SPLIT_LABEL = {"split": "Split"}
# Side by side while both maps fit half the page; stacked (each at full width, legend visible)
# for many labels: with all 11 strategies two maps overflowed their columns.
SIDE_BY_SIDE_MAX = 6


@st.cache_data(show_spinner=False, max_entries=32)
def compute(db: str, version: tuple, vary: str, fixed: tuple, strategy, strategies: tuple,
            labels, params: tuple, origins: tuple, prefer: str, splits: tuple | None,
            tasks: tuple = ("binary",)):
    rows = scores(db, version, origins=origins, prefer=prefer, splits=splits, tasks=tasks)
    return sensitivity.sensitivity_view(rows, vary, dict(fixed), strategy=strategy or "R-M",
                                        strategies=list(strategies), labels=labels, params=dict(params))


# Charts are cached as Vega-Lite specs, as on the other pages: building and serialising the two
# Altair heatmaps cost more than the cached similarities behind them.
@st.cache_data(show_spinner=False, max_entries=32)
def heatmaps(key: tuple) -> dict[str, dict]:
    result = compute(*key)
    varied = VARY_LABELS[key[2]]
    return {"jaccard-heatmap": plots.similarity_heatmap(
                result.jaccard, measure="Jaccard", domain=(0.0, 1.0),
                title=f"Jaccard of best sets as {varied} varies").to_dict(validate=False),
            "spearman-heatmap": plots.similarity_heatmap(
                result.spearman, measure="Spearman rho",
                title=f"Spearman rho as {varied} varies").to_dict(validate=False)}


def _similarities(result, compute_key: tuple, page_provenance) -> None:
    """The two similarity heatmaps (their matrices in their Download menus) and, for one setting, the rankings."""
    n_labels = len(result.jaccard.columns)
    left, right = st.columns(2) if n_labels <= SIDE_BY_SIDE_MAX else (st.container(), st.container())
    drawn = heatmaps(compute_key)
    # Each heatmap's Download menu holds its matrix as a table too (CSV, Parquet, LaTeX): one menu
    # under a chart instead of two, the browser redrawing every menu on each filter change.
    with left:
        show_chart(drawn["jaccard-heatmap"], "jaccard-heatmap", page_provenance, width="content",
                   table=(sensitivity.similarity_table(result.jaccard, "jaccard"), "jaccard-matrix"))
    with right:
        show_chart(drawn["spearman-heatmap"], "spearman-heatmap", page_provenance, width="content",
                   table=(sensitivity.similarity_table(result.spearman, "spearman"), "spearman-matrix"))

    if result.n_settings == 1 and result.rankings is not None:
        st.subheader("The rankings compared")
        rankings = result.rankings.copy()
        rankings.columns = [str(c) for c in rankings.columns]
        rankings = rankings.reset_index().rename(columns={"index": "encoder"})
        show_table(rankings, "rankings-compared", page_provenance)


def main() -> None:
    """The page: the factor to vary and the fixed ones, then the similarities of the rankings."""
    st.title("Sensitivity")
    st.caption("Similarity between consensus rankings that differ in one factor only: Jaccard index of "
               "their sets of best encoders and Spearman's rho of the whole rankings. Choose the factor "
               "to vary; fix each other factor to one value or average the similarity over all its values.")

    db, version = data_key()
    task, levels = task_levels(db, version)
    tasks = (task,)
    # The split (cv / time) is a factor once time-split results exist; before, it is not offered.
    has_time = "time" in levels.get("split", [])
    factor_of = {label: factor for factor, label in VARY_LABELS.items() if has_time or factor != "split"}

    warn_bad_parameters()
    with st.container(border=True):
        # The options are the labels shown, so the URL reads ?vary=metric.
        vary = factor_of[st.radio("Factor to vary", list(factor_of), horizontal=True, key="vary",
                                  bind="query-params")]
        # Every widget keeps its place whichever factor varies: Streamlit's browser side drops the URL
        # binding of a keyed widget that moves to another place on the page (with one column per
        # fixed factor, Tuning moved a column when the varied factor changed, and its choice never
        # reached the URL). The varied factor's column holds the values compared instead.
        cols = st.columns(len(vocab.FACTORS) + 1)
        fixed, labels = {}, None
        for col, factor in zip(cols, vocab.FACTORS):
            with col:
                if factor == vary:
                    labels = multiselect(f"{FACTOR_LABELS[factor]} values compared",
                                         task_options(factor, levels[factor], task),
                                         key=f"{VARY_LABELS[factor]}s")
                else:
                    fixed[factor] = selectbox(
                        f"{FACTOR_LABELS[factor]} (fixed)",
                        [sensitivity.AVERAGE_ALL] + task_options(factor, levels[factor], task),
                        key=f"fix_{VARY_LABELS[factor]}", default=sensitivity.AVERAGE_ALL)
        with cols[-1]:
            if vary == "strategy":
                strategies = multiselect("Strategies compared", list(stats.STRATEGIES),
                                         key="strategies", default=list(stats.HEURISTIC_STRATEGIES),
                                         help=vocab.strategy_help())
                strategy = None
            else:
                strategy = selectbox("Aggregation", list(stats.STRATEGIES), key="agg", default="R-M",
                                     help=vocab.strategy_help())
                strategies = [strategy]
        split = "cv"
        if has_time and vary == "split":   # in the place of the fixed split
            labels = multiselect(f"{SPLIT_LABEL['split']} values compared", vocab.ordered("split", levels["split"]),
                                 key="splits")
        elif has_time:
            split = selectbox("Split (fixed)", vocab.ordered("split", levels["split"]),
                              key="fix_split", default="cv", help=SPLIT_HELP)
        values = parameter_inputs(strategies)
        choice, origins, prefer = origin_filter(levels)

    if vary == "strategy" and len(strategies) < 2:
        st.warning("Select at least two strategies to compare.")
        st.stop()
    if labels is not None and len(labels) < 2:
        st.warning(f"Select at least two {VARY_LABELS[vary]} values to compare.")
        st.stop()

    params = stats.params_for(strategies, values)
    splits = None if vary == "split" else (split,)
    origin_banner(choice, prefer, splits=splits, tasks=tasks)

    expensive = vocab.expensive_strategies(strategies)   # solved one ranking at a time: say it is working
    compute_key = (db, version, vary, tuple(sorted(fixed.items())), strategy, tuple(strategies),
                   tuple(labels) if labels is not None else None, tuple(sorted(params.items())), origins, prefer,
                   splits, tasks)
    with st.spinner("Computing consensus rankings...", show_time=True) if expensive else st.empty():
        try:
            result = compute(*compute_key)
        except ValueError as exc:
            hint = (" Time-split results come from local runs: choose *both* or *local* under *Results*; "
                    "only datasets run under both splits are compared." if vary == "split" else "")
            st.info(f"Nothing to compare with these choices: {md_text(exc)}.{hint}")
            st.stop()

    averaged = [FACTOR_LABELS[f] for f, v in fixed.items() if v == sensitivity.AVERAGE_ALL]
    what = (f"averaged over {result.n_settings} settings of {', '.join(averaged)}" if averaged
            else "for " + ", ".join(f"{FACTOR_LABELS[f]} = {v}" for f, v in fixed.items()))
    st.markdown(f"Varying **{VARY_LABELS[vary]}** "
                f"({'aggregation ' + strategy if strategy else 'each strategy on the same data'}), {what}.")

    filters = {"vary": vary, **{f"fixed_{k}": v for k, v in fixed.items()},
               "strategy" if vary != "strategy" else "strategies": strategy if strategy else strategies,
               "values": labels if labels is not None else "all", **params, "origin": choice,
               **({"prefer": prefer} if choice == "both" else {}),
               **({"split": split if vary != "split" else "varied"} if has_time else {})}
    used = scores(db, version, origins=origins, prefer=prefer, splits=splits, tasks=tasks)
    for factor, value in fixed.items():
        if value != sensitivity.AVERAGE_ALL:
            used = used[used[factor] == value]
    page_provenance = provenance("sensitivity", filters, used, version, task=task)

    _similarities(result, compute_key, page_provenance)


main()
