"""New encoder: where a run's custom encoder ranks among the published 32.

Reads a comparison run (``encbench run --encoders OH,MT,module:Class``); the logic lives in
:mod:`encbench.placement`. The app never imports code from an upload: custom encoders come
from the command line or from installed plugins.
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from encbench import custom, placement, vocab
from encbench.stats import STRATEGIES
from pages.ui.exports import show_chart, show_table
from pages.ui.filters import DEFAULT_TASK, task_filter
from pages.ui.navigation import ensure_routed, guarded
from pages.ui.store import data_key, get_reader, snapshot_label
from pages.ui.text import md_code, md_text

ensure_routed()


@st.cache_data(show_spinner=False, max_entries=8)
def _runs(db: str, version: tuple):
    return placement.comparison_runs(get_reader(db))


@st.cache_data(show_spinner="Ranking the new encoder among the 32 under every strategy...", max_entries=8)
def _place(db: str, version: tuple, run_id: str, strategies: tuple, alpha: float):
    return placement.place(get_reader(db), run_id, strategies=list(strategies), alpha=alpha)


@st.cache_data(show_spinner=False, max_entries=32)
def _cd(db: str, version: tuple, run_id: str, strategies: tuple, alpha: float, model: str, scoring: str,
        design: str):
    result = _place(db, version, run_id, strategies, alpha)
    chart, nem, description = placement.cd_diagram(result, model, scoring, alpha=alpha, design=design)
    return chart, nem.n_datasets, description


def _plugins_note() -> None:
    found = custom.plugins()
    with st.expander(f"Installed encoder plugins: {len(found) or 'none'}"):
        if found:
            st.dataframe([{"name": p.name, "import": p.target, "package": p.package, "version": p.version}
                          for p in found], hide_index=True)
        st.caption("A package declares a plugin in its pyproject.toml: "
                   "`[project.entry-points.\"encbench.encoders\"]` then `MyEnc = \"mypkg.encoders:MyEncoder\"`. "
                   "See docs/user-guide.md, 'Bring your own encoder'.")


@guarded
def main() -> None:
    """The page: a comparison run's controls, its encoder's rank among the 32, its CD diagram and
    its test against the best published encoder."""
    st.title("New encoder")
    st.caption(
        "Rank an encoder of your own among the study's 32 without re-running them: its scores on "
        "published datasets are merged with the published scores of the same datasets, models, metrics "
        "and tuning (published scores count for the 32). Run it from the command line "
        "(`python -m encbench run --datasets suite:matteucci2023 --encoders mypkg.encoders:FancyEncoder`) "
        "or, for an installed plugin, from *Run on your data*. The app never imports code from an upload: "
        "only installed plugins (entry points `encbench.encoders`) are offered.")
    db, version = data_key()
    task = task_filter()
    if task != DEFAULT_TASK:
        # the 32 are placed by their published scores, which exist for binary targets only
        with st.container(key="no-published-reference"):
            st.info(f"No published reference for {task}: this page ranks an encoder among the study's 32 by "
                    f"their published scores, which exist for binary classification only. Rank encoders on "
                    f"your {task} runs on the Consensus rankings page (task {task}, results: local).")
        return
    _plugins_note()
    runs = _runs(db, version)
    if runs.empty:
        st.info("No run with a custom encoder yet. Start one with `python -m encbench run --encoders "
                "OH,MT,mypkg.encoders:FancyEncoder --datasets suite:matteucci2023 --models DT,LogReg` "
                "(docs/user-guide.md: 'Bring your own encoder').")
        return
    labels = {r.run_id: f"{r.encoders} · {r.label or r.run_id} ({r.status})" for r in runs.itertuples()}
    run_ids = list(labels)
    wanted = st.query_params.get("run")
    if wanted and wanted not in run_ids:
        st.warning(f"The link names run {md_code(wanted)}, which holds no custom encoder; "
                   "showing the newest one.")
    run_id = st.selectbox("Comparison run", run_ids, index=run_ids.index(wanted) if wanted in run_ids else 0,
                          format_func=labels.get, key="byo_run")
    st.query_params["run"] = run_id
    with st.container(horizontal=True):
        strategies = st.multiselect("Aggregation strategies", list(STRATEGIES), default=list(STRATEGIES),
                                    key="byo_strategies") or list(STRATEGIES)
        alpha = st.select_slider("alpha (R-Nem, CD diagram)", options=list(vocab.ALPHA.options),
                                 value=vocab.ALPHA.default, key="byo_alpha", help=vocab.ALPHA.help)
    result = _place(db, version, run_id, tuple(strategies), float(alpha))
    info = result.info
    page_provenance = dataclasses.replace(result.provenance(), snapshot=snapshot_label(version), task=task)

    for c in info.customs:
        p = c.provenance()
        package = " ".join(filter(None, [p["package"], p["version"]])) or "package and version unknown"
        st.markdown(f"**{md_text(c.name)}**: {md_code(p['import'])} ({md_text(package)}), "
                    f"parameters {md_code(p['params'])}")

    st.subheader("1. Controls: does the local protocol reproduce the published numbers here?")
    agreement = result.agreement
    if agreement.warning:
        st.warning(agreement.warning, icon=":material/warning:")
    else:
        st.success(agreement.headline().capitalize(), icon=":material/check_circle:")
    if len(agreement.by_encoder_model):
        show_table(agreement.by_encoder_model, "controls", page_provenance,
                   column_config={"share": st.column_config.NumberColumn(format="percent")})
    if result.unpublished:
        st.caption(f"Left out (no published results): {md_text(', '.join(result.unpublished))}.")
    if result.ranks.empty:
        st.info("The new encoder has no finished score on a published dataset yet.")
        return

    st.subheader("2. Rank among the 32 (1 = best)")
    st.caption("Each strategy ranks densely: encoders it cannot tell apart share a tier, so "
               "\"1 of 1 tier, shared by 33\" means the strategy tells no encoder apart, not first "
               "place; \"3 of 33\" is a rank without ties.")
    for line in result.summary_lines():
        st.markdown(f"- {line.strip()}")
    show_table(result.rank_table(), "ranks", page_provenance)

    st.subheader("3. Critical-difference diagram against the 32")
    combos = [(placement.POOLED, placement.POOLED)] + sorted(
        {(m, s) for m, s in zip(result.ranks["model"], result.ranks["scoring"]) if m != placement.POOLED},
        key=lambda ms: (vocab.MODELS.index(ms[0]), vocab.METRICS.index(ms[1])))
    names = {c: ("pooled over models and metrics" if c[0] == placement.POOLED else f"{c[0]} / {c[1]}")
             for c in combos}
    with st.container(horizontal=True):
        combo = st.selectbox("Combination", combos, format_func=names.get, key="byo_combo")
        design = st.selectbox("Datasets ranked", ["all", "complete-datasets", "common-encoders"],
                              key="byo_design",
                              help="Friedman/Nemenyi assume every dataset ranks every encoder: use all "
                                   "voters, only complete datasets, or only the encoders present everywhere.")
    try:
        chart, _, description = _cd(db, version, run_id, tuple(strategies), float(alpha), combo[0], combo[1], design)
    except ValueError as exc:
        st.info(f"No CD diagram for this choice: {exc}")
    else:
        st.caption(f"{description.rstrip('.')}. The new encoder is drawn in orange, its label in bold.")
        # at its own width: stretched, the right-hand labels (where a weak new encoder hangs) ran off
        show_chart(chart, "cd", page_provenance.with_filters(combination=names[combo], design=design),
                   width="content", scroll=True)

    st.subheader("4. Against the best published encoder")
    st.caption("Wilcoxon signed-rank test over datasets (pooled: over dataset x model x metric, which are "
               "not independent: read its p-value as descriptive). The best published encoder is the R-M "
               "winner among the 32 on the same datasets.")
    show_table(result.wilcoxon.drop(columns=["tuning"]), "wilcoxon", page_provenance,
               column_config={"median_difference": st.column_config.NumberColumn(format="%.4f"),
                              "pvalue": st.column_config.NumberColumn(format="%.3g")})


main()
