"""Consensus rankings: choose factors and aggregation strategies; the rankings recompute live."""
import pandas as pd
import streamlit as st

from encbench import dashboard, plots, stats, vocab
from pages import common

common.ensure_routed()

MAX_DRAWN = 40  # rankings drawn in the side-by-side charts (tables and exports hold all)
MODE_TEXT = {
    "per-combination": "one consensus per model/tuning/metric combination, shown side by side",
    "pooled": "one consensus over all selected combinations: every (dataset, combination) is a voter",
}

st.title("Consensus rankings")
st.caption("Aggregate the per-dataset rankings of encoders into one consensus per strategy "
           "(1 = best; ties share a rank). Everything below follows the filters, which are kept "
           "in the URL.")

db, version = common.data_key()
lv = common.levels(db, version)

common.warn_bad_parameters()
common.warn_bad_number("B", low=50, high=2000, integer=True)
with st.container(border=True):
    selected = common.factor_filters(lv, {"model": ["LogReg"], "tuning": ["no"], "scoring": ["AUC"]})
    c1, c2, c3 = st.columns([3, 2, 2])
    with c1:
        strategies = common.multiselect(
            "Aggregation strategies", list(stats.STRATEGIES), key="strategy",
            default=["R-M", "Q-M", "R-Nem"], help=vocab.strategy_help())
    with c2:
        # alpha stays enabled without R-Nem: the CD diagram and the pairwise tests below use it
        values = common.parameter_inputs(strategies, keep_enabled=("alpha",))
    alpha = values["alpha"]
    with c3:
        mode = st.radio("Several combinations", list(dashboard.MODES), key="mode",
                        bind="query-params",
                        help="; ".join(f"{k}: {v}" for k, v in MODE_TEXT.items()))
    choice, origins, prefer = common.origin_filter(lv)
    split = common.split_filter(lv)

missing = common.empty_selection({**selected, "strategy": strategies})
if missing:
    st.warning(f"Select at least one value for: {', '.join(missing)}.")
    st.stop()

filter_key = (("models", tuple(selected["model"])), ("tunings", tuple(selected["tuning"])),
              ("scorings", tuple(selected["scoring"])), ("splits", (split,)))
common.origin_banner(choice, prefer, **dict(filter_key))
load_key = (*filter_key, ("origins", origins), ("prefer", prefer))
rows = common.scores(db, version, **dict(load_key))
if rows.empty:
    st.info("No results for this combination of model, tuning and metric. "
            "(In the published data LGBM was run without tuning only, and SVM without model tuning.)")
    st.stop()

combos = dashboard.combinations_of(rows)
params = stats.params_for(strategies, values)
st.markdown(f"**Aggregation:** {MODE_TEXT[mode if len(combos) > 1 else 'per-combination']}. "
            f"{len(combos)} combination(s), {rows['dataset'].nunique()} datasets, "
            f"{rows['encoder'].nunique()} encoders.")
if (mode == "pooled" and len(combos) > 1 and len(selected["scoring"]) > 1
        and any(vocab.STRATEGY_REGISTRY[s].uses_scores for s in strategies)):
    st.caption("Note: quality strategies (Q-*) pool raw scores of different metrics.")


@st.cache_data(show_spinner=False, max_entries=64)
def heuristic_ranks(db: str, version: tuple, load_key: tuple, strategies: tuple, mode: str,
                    params: tuple) -> pd.DataFrame:
    frame = common.scores(db, version, **dict(load_key))
    return dashboard.consensus_ranks(frame, list(strategies), mode=mode, params=dict(params))


@st.cache_data(show_spinner=False, max_entries=32)
def kemeny_ranks(db: str, version: tuple, load_key: tuple, mode: str):
    frame = common.scores(db, version, **dict(load_key))
    return dashboard.kemeny_ranks(frame, mode=mode)


@st.cache_data(show_spinner=False, max_entries=64)
def block_design(db: str, version: tuple, load_key: tuple, combination: str, mode: str, design: str):
    frame = common.scores(db, version, **dict(load_key))
    return stats.block_design(dashboard.subset_for(frame, combination, mode)[["dataset", "encoder", "cv_score"]],
                              design)


@st.cache_data(show_spinner=False, max_entries=64)
def nemenyi(db: str, version: tuple, load_key: tuple, combination: str, mode: str, alpha: float,
            design: str):
    return stats.nemenyi(block_design(db, version, load_key, combination, mode, design).scores, alpha=alpha)


@st.cache_data(show_spinner=False, max_entries=64)
def intervals(db: str, version: tuple, load_key: tuple, combination: str, mode: str,
              strategy: str, B: int, params: tuple) -> pd.DataFrame:
    frame = common.scores(db, version, **dict(load_key))
    use = stats.params_for(strategy, dict(params))
    return stats.rank_intervals(dashboard.subset_for(frame, combination, mode), strategy, B=B,
                                seed=0, **use)


@st.cache_data(show_spinner=False, max_entries=64)
def consensus_view(db: str, version: tuple, load_key: tuple, strategies: tuple, mode: str,
                   params: tuple) -> dashboard.ConsensusView:
    ranks = heuristic_ranks(db, version, load_key, strategies, mode, params)
    if "R-Kem" in strategies:
        ranks = pd.concat([ranks, kemeny_ranks(db, version, load_key, mode)[0]], ignore_index=True)
    return dashboard.assemble(ranks, list(strategies), dict(params))


# Charts are cached as Vega-Lite specs beside the numbers they draw: building and serialising an
# Altair chart costs more than the cached ranks behind it (about half of a rerun, issue 11 item 6).
@st.cache_data(show_spinner=False, max_entries=64)
def view_charts(db: str, version: tuple, load_key: tuple, strategies: tuple, mode: str,
                params: tuple) -> dict[str, dict]:
    """Specs of the rank matrix and the two agreement heatmaps (those the view draws)."""
    view = consensus_view(db, version, load_key, strategies, mode, params)
    if len(view.columns) > MAX_DRAWN:
        return {}
    charts = {"rank-matrix": plots.rank_matrix(view.ranks, column="column", columns=view.columns,
                                               encoders=view.wide["encoder"].astype(str).tolist(),
                                               title="Consensus ranks side by side (1 = best)")}
    if len(view.columns) > 1:
        charts["agreement-spearman"] = plots.similarity_heatmap(view.spearman, measure="Spearman rho",
                                                                title="Spearman rho")
        charts["agreement-jaccard"] = plots.similarity_heatmap(view.jaccard, measure="Jaccard",
                                                               domain=(0.0, 1.0), title="Jaccard (best sets)")
    return {item: chart.to_dict(validate=False) for item, chart in charts.items()}


@st.cache_data(show_spinner=False, max_entries=64)
def cd_chart(db: str, version: tuple, load_key: tuple, combination: str, mode: str, alpha: float,
             design: str) -> tuple[dict, list[str]]:
    """Spec of the CD diagram and its subtitle (test, alpha, N, block design)."""
    result = nemenyi(db, version, load_key, combination, mode, alpha, design)
    subtitle = dashboard.cd_subtitle(result, block_design(db, version, load_key, combination, mode, design))
    chart = plots.cd_diagram(*dashboard.cd_inputs(result), title=f"Critical difference: {combination}",
                             subtitle=subtitle)
    return chart.to_dict(validate=False), subtitle


@st.cache_data(show_spinner=False, max_entries=64)
def intervals_chart(db: str, version: tuple, load_key: tuple, combination: str, mode: str,
                    strategy: str, B: int, params: tuple) -> dict:
    iv = intervals(db, version, load_key, combination, mode, strategy, B, params)
    return plots.rank_intervals_chart(iv, title=f"Rank intervals: {strategy}, {combination}").to_dict(validate=False)


mode_used = mode if len(combos) > 1 else "per-combination"
view_key = (db, version, load_key, tuple(strategies), mode_used, tuple(sorted(params.items())))
kemeny_info = None
if "R-Kem" in strategies:
    with st.spinner("Solving Kemeny-Young exactly (HiGHS)...", show_time=True):
        kemeny_info = kemeny_ranks(db, version, load_key, mode_used)[1]
view = consensus_view(*view_key)
drawn = view_charts(*view_key)

filters = {"model": selected["model"], "tuning": selected["tuning"], "metric": selected["scoring"],
           "strategy": strategies, **params, "mode": mode_used, "origin": choice,
           **({"prefer": prefer} if choice == "both" else {}),
           **({"split": split} if "time" in lv.get("split", []) else {})}
prov = common.provenance("consensus", filters, rows, version)

with st.container(key="ranking-summary"):
    st.markdown(dashboard.best_summary(view, params))

st.subheader("Rankings")
# every strategy column holds consensus ranks (1 = best): LaTeX sets each column's best in bold
common.show_table(view.wide, "rankings", prov, height=min(38 + 35 * len(view.wide), 700),
                  best={c: "min" for c in view.wide.columns if pd.api.types.is_numeric_dtype(view.wide[c])})
if drawn:
    common.show_chart(drawn["rank-matrix"], "rank-matrix", prov)
else:
    st.info(f"{len(view.columns)} rankings are too many to draw; the table and its exports hold "
            "all of them. Narrow the selection or pool the combinations.")

if kemeny_info is not None:
    st.subheader("Kemeny-Young")
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
    common.show_table(kemeny_info, "kemeny", prov,
                      column_config={"solve_time_s": st.column_config.NumberColumn("solve time (s)", format="%.4f"),
                                     "agreement": st.column_config.NumberColumn(format="%.3f"),
                                     "objective": st.column_config.NumberColumn(format="%.4f"),
                                     "max_objective": st.column_config.NumberColumn("max objective", format="%.4g")})

if len(view.columns) > 1:
    st.subheader("Agreement between rankings")
    st.caption("Spearman's rho over the encoders two rankings share, and the Jaccard index of their "
               "sets of rank-1 encoders.")
    if len(view.columns) <= MAX_DRAWN:
        # side by side while both fit; stacked (each at full width) for many rankings
        a, b = st.columns(2) if len(view.columns) <= 5 else (st.container(), st.container())
        with a:
            common.show_chart(drawn["agreement-spearman"], "agreement-spearman", prov, width="content")
        with b:
            common.show_chart(drawn["agreement-jaccard"], "agreement-jaccard", prov, width="content")
    common.show_table(dashboard.agreement_long(view), "agreement", prov)

# The CD diagram and the rank intervals have selects of their own (combination, interval
# strategy, bootstrap B, incomplete-data design): in a fragment, changing one reruns this part
# only, not the rankings, charts and tables above (issue 11 item 6: a bootstrap-driven select).
@st.fragment
@common.guarded
def _cd_and_intervals(strategies: list[str], combos: list, mode_used: str, load_key: tuple,
                      params: dict, alpha: float, prov, view_encoders: list[str]) -> None:
    st.subheader("Critical-difference diagram and rank intervals")
    targets = [dashboard.POOLED] if mode_used == "pooled" else [dashboard.combination_label(*c) for c in combos]
    d1, d2, d3 = st.columns([2, 1, 1])
    with d1:
        if len(targets) > 1:
            target = common.selectbox("Combination", targets, key="detail")
        else:
            target = targets[0]
            # A link's detail= names a combination this view does not have: drop it. When the
            # Combination select was shown on the previous run, its URL binding is Streamlit's
            # (deleting raises); Streamlit drops the parameter of a widget that is gone.
            if "detail" in st.query_params and "detail" not in st.session_state:
                del st.query_params["detail"]
    interval_options = [s for s in strategies if s != "R-Kem"] or ["R-M"]
    with d2:
        interval_strategy = common.selectbox(
            "Interval strategy", interval_options, key="istrategy",
            help="Bootstrap intervals need one consensus per resample; R-Kem (an exact Kemeny solve each) "
                 "is left out as too slow for that." if "R-Kem" in strategies else None)
        if "R-Kem" in strategies:
            st.caption("R-Kem has no bootstrap interval here: it would need one exact Kemeny solve per "
                       "resample.")
    with d3:
        B = st.number_input("Bootstrap resamples", 50, 2000, 200, 50, key="B", bind="query-params")

    left, right = st.container(), st.container()
    with left:
        design_name = common.selectbox(
            "Incomplete datasets (Friedman/Nemenyi)", list(stats.BLOCK_DESIGNS), key="blocks", default="all",
            help="The Friedman test and the Nemenyi CD assume every dataset ranks every encoder. "
                 + "; ".join(f"{k}: {v}" for k, v in stats.BLOCK_DESIGNS.items()) + ".")
        design = block_design(db, version, load_key, target, mode_used, design_name)
        with st.container(key="cd-completeness"):
            st.markdown(f"**{design.n_complete_datasets} of {design.n_datasets}** datasets have a result for "
                        f"every one of the {design.n_encoders} encoders; **{design.n_common_encoders} of "
                        f"{design.n_encoders}** encoders have a result on every dataset.")
        if design.scores.empty or design.scores["encoder"].nunique() < 2:
            st.info(f"No critical-difference diagram for {target} with *{design_name}*: {design.description}"
                    " leaves fewer than two encoders or no dataset. Choose another option above.")
        else:
            try:
                result = nemenyi(db, version, load_key, target, mode_used, float(alpha), design_name)
            except ValueError as exc:
                st.info(f"No critical-difference diagram for {target}: {exc}")
            else:
                spec, subtitle = cd_chart(db, version, load_key, target, mode_used, float(alpha), design_name)
                st.caption(" · ".join(subtitle) + ". Red bars join encoders not significantly different.")
                cd_prov = prov.with_filters(detail=target, blocks=design_name)
                common.show_chart(spec, "cd-diagram", cd_prov, width="content")
                common.table_exports(dashboard.nemenyi_table(result), "nemenyi", cd_prov)
    with right:
        try:
            iv = intervals(db, version, load_key, target, mode_used, interval_strategy, int(B),
                           tuple(sorted(params.items())))
        except ValueError as exc:
            st.info(f"No rank intervals for {target}: {exc}")
        else:
            st.caption(f"{interval_strategy} consensus rank with its 95% bootstrap interval "
                       f"({int(B)} resamples of the voters, seed 0).")
            iprov = prov.with_filters(detail=target, interval_strategy=interval_strategy, B=int(B))
            common.show_chart(intervals_chart(db, version, load_key, target, mode_used, interval_strategy,
                                              int(B), tuple(sorted(params.items()))),
                              "rank-intervals", iprov)
            common.table_exports(iv, "rank-intervals", iprov)

    st.subheader("Pairwise tests")
    st.caption(f"Wilcoxon signed-rank test over the datasets where both encoders have a result "
               f"({target}; two-sided, zero differences dropped). With more than two encoders every "
               f"pair is tested and the p-values are Holm-corrected (family-wise alpha = {alpha}).")
    scored = set(dashboard.subset_for(common.scores(db, version, **dict(load_key)), target, mode_used)["encoder"])
    present = [e for e in view_encoders if e in scored]
    chosen = common.multiselect("Encoders to compare", present, key="wilcoxon", default=present[:2],
                                help="A is the encoder listed first; a positive median difference "
                                     "means A scores higher.")
    if len(chosen) < 2:
        st.info("Choose two encoders or more to test.")
        return
    table = pairwise_tests(db, version, load_key, target, mode_used, tuple(chosen), float(alpha))
    wprov = prov.with_filters(detail=target, wilcoxon=list(chosen))
    common.show_table(table, "wilcoxon", wprov, best={"p_holm": "min"}, column_config={
        c: st.column_config.NumberColumn(format="%.4g") for c in ("median_difference", "p_value", "p_holm")})


@st.cache_data(show_spinner=False, max_entries=64)
def pairwise_tests(db: str, version: tuple, load_key: tuple, combination: str, mode: str,
                   encoders: tuple, alpha: float) -> pd.DataFrame:
    frame = common.scores(db, version, **dict(load_key))
    subset = dashboard.subset_for(frame, combination, mode)[["dataset", "encoder", "cv_score"]]
    return stats.wilcoxon_pairs(subset, encoders=list(encoders), alpha=alpha).table


_cd_and_intervals(strategies, combos, mode_used, load_key, params, alpha, prov,
                  view.wide["encoder"].astype(str).tolist())
