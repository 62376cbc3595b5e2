"""Overview: what is in the results database, and the headline consensus (R-M over everything)."""
import pandas as pd
import streamlit as st

from encbench import plots, vocab
from encbench.views import overview
from pages.ui import store
from pages.ui.exports import provenance, show_chart, show_table
from pages.ui.filters import DEFAULT_TASK, origin_banner, origin_filter, task_levels
from pages.ui.navigation import drill_link, ensure_routed
from pages.ui.store import data_key, datasets_table, runs_table, summary

HEADLINE = overview.HEADLINE_STRATEGY
#: The tabs below the headline (labels are URL values: ?section=Runs).
SECTIONS = ("Results per model and tuning", "Runs", "Datasets")

ensure_routed()

#: where a newcomer goes next: the paper behind the published results
PAPER_URL = "https://arxiv.org/abs/2307.09191"
GUIDE = (
    "**How to read this page.** Each result is one encoder's cross-validated score on one dataset "
    "under one model, tuning strategy and metric. Within each such setting (a *voter*) the encoders "
    "are ranked, 1 = best; the headline below orders them by their mean rank over the voters. A lower "
    "mean rank is better; a gap of a few tenths is rarely meaningful, the *Consensus rankings* page "
    "says which differences are significant (critical-difference diagram, pairwise tests) and ranks "
    "one model and metric at a time. The *Results explorer* shows every score and drills down to one "
    "encoder, one dataset or two encoders head to head. *Run on your data* recommends encoders for "
    "your file before running anything, then runs them with the published protocol.")


@st.cache_data(show_spinner=False, max_entries=4)
def headline(db: str, version: tuple, origins: tuple, prefer: str,
             tasks: tuple = ("binary",)) -> overview.Headline:
    return overview.headline_consensus(store.scores(db, version, origins=origins, prefer=prefer, tasks=tasks))


@st.cache_data(show_spinner=False, max_entries=4)
def result_counts(db: str, version: tuple, origins: tuple, prefer: str,
                  tasks: tuple = ("binary",)) -> dict[str, pd.DataFrame]:
    everything = store.scores(db, version, origins=origins, prefer=prefer, tasks=tasks)
    return {"model": overview.counts_by_pair(everything, "model", "tuning"),
            "scoring": overview.counts_by_pair(everything, "scoring", "tuning")}


# Charts are cached as Vega-Lite specs, as on the other pages.
@st.cache_data(show_spinner=False, max_entries=4)
def charts(db: str, version: tuple, origins: tuple, prefer: str, tasks: tuple = ("binary",)) -> dict[str, dict]:
    table = headline(db, version, origins, prefer, tasks).table
    bars = plots.consensus_bars(table, value="mean_rank",
                                value_title=f"{vocab.STRATEGY_REGISTRY[HEADLINE].description} ({HEADLINE})",
                                color="family", title=f"Consensus over all results ({HEADLINE})")
    counts = plots.counts_bars(result_counts(db, version, origins, prefer, tasks)["model"], x="model", color="tuning",
                               title="Score rows per model, by tuning strategy")
    return {"headline-consensus": bars.to_dict(validate=False), "results-per-model": counts.to_dict(validate=False)}


def _sections(db: str, version: tuple, origins: tuple, prefer: str, tasks: tuple, info: dict,
              everything: pd.DataFrame, page_provenance: object) -> None:
    """The tabs below the headline; only the open one is drawn."""
    # Below the headline, one section at a time: only the open tab is drawn (stateful tabs, bound to
    # the URL as ?section=...), which keeps a first visit to two elements a browser must draw besides
    # the metrics (first visit <= 3 s).
    counts_tab, runs_tab, datasets_tab = st.tabs(list(SECTIONS), key="section", bind="query-params")
    if counts_tab.open:
        with counts_tab:
            c1, c2 = st.columns([3, 2])
            with c1:
                show_chart(charts(db, version, origins, prefer, tasks)["results-per-model"], "results-per-model",
                           page_provenance)
            with c2:
                show_table(result_counts(db, version, origins, prefer, tasks)["scoring"], "results-per-metric",
                           page_provenance)
    if runs_tab.open:
        with runs_tab:
            runs = runs_table(db, version)
            shown = runs[["run_id", "label", "origin", "status", "n_ok", "n_failed", "n_timeout", "created_at",
                          "finished_at"]]
            show_table(shown, "runs", page_provenance, column_config={
                "run_id": st.column_config.TextColumn("run", width="medium"),
                **{c: st.column_config.NumberColumn(c.removeprefix("n_"), width="small")
                   for c in ("n_ok", "n_failed", "n_timeout")},
                **{c: st.column_config.DatetimeColumn(c.replace("_at", ""), format="YYYY-MM-DD HH:mm", width="small")
                   for c in ("created_at", "finished_at")},
            })
    if datasets_tab.open:
        with datasets_tab:
            st.caption(f"{info['datasets']} datasets with results in this view; *results* counts the "
                       "view's score rows of each.")
            datasets = overview.datasets_in_view(datasets_table(db, version), everything)
            keep = [c for c in ("dataset", "name", "source", "openml_id", "n_rows", "n_features",
                                "n_categorical", "results") if c in datasets.columns]
            show_table(datasets[keep], "datasets", page_provenance)



def main() -> None:
    """The page: the database's contents, the headline consensus and the open section."""
    st.title("encbench")
    db, version = data_key()
    task, levels = task_levels(db, version)
    st.markdown(f"Which encoder should turn your categorical columns into numbers? encbench compares "
                f"{len(vocab.ALL_ENCODERS)} encoders (the published benchmark's {len(vocab.ENCODERS)}, "
                f"Matteucci et al., NeurIPS 2023, and {len(vocab.BEYOND_ENCODERS)} practitioners use today) on "
                f"binary, multiclass and regression targets: the published datasets, encbench's own R datasets "
                f"and your own data.")
    st.caption(overview.task_holds(task, levels) + " What is in the database, and which encoders win overall.")
    with st.container(horizontal=True, key="next-steps"):
        st.page_link("pages/run.py", label="Run the encoders on your data", icon=":material/upload_file:")
        st.page_link("pages/consensus.py", label="Rankings per model and metric", icon=":material/leaderboard:")
        st.page_link(PAPER_URL, label="The paper (arXiv:2307.09191)", icon=":material/article:")
    with st.expander("New here? How to read this page", icon=":material/school:"):
        st.markdown(GUIDE)
    tasks = (task,)
    choice, origins, prefer = origin_filter(levels)
    info = summary(db, version, origins)
    if (choice != "published" or task != DEFAULT_TASK) and info["results"]:
        # one score per experiment (a local re-run of a published experiment is not a new result),
        # of the view's task only
        info = {**info, **overview.score_counts(store.scores(db, version, origins=origins, prefer=prefer,
                                                             tasks=tasks)).as_dict()}
    if info["results"] == 0:
        st.info("The database holds no results yet. Build it with `python -m encbench db init` "
                "(which `make run` does) or run experiments from *Run on your data*.")
        st.stop()

    cols = st.columns(6)
    for col, (label, key) in zip(cols, [("Datasets", "datasets"), ("Encoders", "encoders"),
                                        ("Models", "models"), ("Metrics", "scorings"),
                                        ("Results", "results"), ("Runs", "runs")]):
        col.metric(label, f"{info[key]:,}")
    origin_banner(choice, prefer, tasks=tasks)
    if choice != "published":
        st.caption("Results count one score per experiment: where a published and a local score "
                   f"exist, only the {prefer} one.")

    st.markdown(
        f"**Models** {', '.join(vocab.ordered('model', levels['model']))} · "
        f"**Metrics** {', '.join(vocab.ordered('scoring', levels['scoring']))} · "
        f"**Tuning** {', '.join(vocab.ordered('tuning', levels['tuning']))} · "
        f"**Origins in the database** {', '.join(levels['origin'])}"
    )

    everything = store.scores(db, version, origins=origins, prefer=prefer, tasks=tasks)

    st.subheader(f"Headline consensus: {HEADLINE} over everything")
    st.caption(
        "Every (dataset, model, tuning, metric) with results is one voter; within a voter encoders are "
        f"ranked by score (1 = best; a lower-is-better metric such as RMSE counts a lower score as better) "
        f"and the consensus orders them by their mean rank ({HEADLINE}). Every encoder is ranked over the "
        "same voters, those where all of them have a result: a mean over different voters would compare "
        "encoders on different questions. Per-combination rankings and other aggregations are on the "
        "*Consensus* page."
    )
    head = headline(db, version, origins, prefer, tasks)
    table = head.table
    page_provenance = provenance("overview", {"strategy": HEADLINE, "scope": "all results", "origin": choice,
                                              **({"prefer": prefer} if choice == "both" else {})},
                                 everything, version, task=task)
    best = head.best
    with st.container(key="headline-best"):
        st.markdown(f"Best overall: **{', '.join(best)}**{' (tied)' if len(best) > 1 else ''} (mean rank "
                    f"{table['mean_rank'].iloc[0]:.2f}; {head.coverage_text}).")
    left, right = st.columns([1, 1])  # 3:2 left the table too narrow for its five columns
    with left:
        show_chart(charts(db, version, origins, prefer, tasks)["headline-consensus"], "headline-consensus",
                   page_provenance)
    with right:
        # narrow number columns: the table fits its column without a horizontal scroll
        picked = show_table(table[["rank", "encoder", "family", "mean_rank", "n_voters"]],
                            "headline-consensus", page_provenance, height=420, best={"mean_rank": "min"}, select=True,
                            column_config={"mean_rank": st.column_config.NumberColumn("mean rank", format="%.3f"),
                                           "n_voters": st.column_config.NumberColumn("voters")})
        if picked is None:
            st.caption("Select a row to see that encoder's scores dataset by dataset.")
        else:
            # the headline pools every model, tuning and metric: the explorer opens on all of them
            drill_link(str(picked["encoder"]), task=task, models=levels["model"], tunings=levels["tuning"],
                       metrics=levels["scoring"], origin=choice, prefer=prefer,
                       beyond=bool(st.session_state.get("beyond")))
    if len(head.left_out):
        st.caption("Not in the headline ranking, as their results cover too few of the voters: their mean rank "
                   "over the voters they have, among the encoders each of those has, is not comparable with the "
                   "ranking above. The *Consensus* page ranks them per model, tuning and metric.")
        show_table(head.left_out, "headline-left-out", page_provenance,
                   column_config={"mean_rank": st.column_config.NumberColumn("own mean rank", format="%.3f"),
                                  "n_voters": st.column_config.NumberColumn("voters")})

    _sections(db, version, origins, prefer, tasks, info, everything, page_provenance)

main()
