"""Replicability: would another sample of datasets give the same consensus ranking?"""
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from encbench import plots, stats, vocab
from encbench.jobs import ProcessJob
from encbench.views import replicability
from encbench.views.labels import combination_label
from pages.ui.exports import provenance, show_chart, show_table
from pages.ui.filters import origin_banner, origin_filter, split_filter, task_levels, task_options
from pages.ui.jobs import cancel_other_jobs, session_job
from pages.ui.navigation import ensure_routed
from pages.ui.store import data_key, scores
from pages.ui.text import md_text
from pages.ui.widgets import multiselect, parameter_inputs, selectbox, warn_bad_number, warn_bad_parameters

ensure_routed()


@dataclass(frozen=True)
class _Selection:
    """What a worker process's job computes from: the data key, the combination, the sampling and
    the rows of the combination."""

    db: str
    version: tuple
    task: str
    model: str
    tuning: str
    scoring: str
    origins: tuple
    prefer: str
    split: str
    sizes: list
    n_pairs: int
    params: dict
    rows: pd.DataFrame


@st.cache_data(show_spinner=False, max_entries=256)
def one_size(db: str, version: tuple, combo: tuple, strategy: str, size: int, n_pairs: int,
             params: tuple, origins: tuple = ("published",), prefer: str = "published",
             splits: tuple = ("cv",), tasks: tuple = ("binary",)):
    frame = scores(db, version, models=(combo[0],), tunings=(combo[1],), scorings=(combo[2],),
                   origins=origins, prefer=prefer, splits=splits, tasks=tasks)
    use = stats.params_for(strategy, dict(params))
    result = stats.replicability(frame, [size], n_pairs=n_pairs, seed=0, strategy=strategy, **use)
    return result.summary.assign(strategy=strategy), result.pairs.assign(strategy=strategy)


def worker_job(strategy: str, sel: _Selection):
    """The replicability of ``strategy`` from a worker process: the finished job, or None while it
    runs or once it is cancelled (each said on the page)."""
    spec = vocab.STRATEGY_REGISTRY[strategy]
    use = stats.params_for(strategy, sel.params)
    key = (sel.db, sel.version, sel.model, sel.tuning, sel.scoring, tuple(sel.sizes), int(sel.n_pairs),
           tuple(sorted(use.items())), sel.origins, sel.prefer, sel.split, sel.task)

    def start() -> ProcessJob:
        return ProcessJob(stats.replicability, sel.rows[["scoring", "dataset", "encoder", "cv_score"]].copy(),
                          sel.sizes, n_pairs=int(sel.n_pairs), seed=0, strategy=strategy, n_jobs=2, **use)

    def progress(job: ProcessJob) -> None:
        total = job.total or 2 * int(sel.n_pairs) * len(sel.sizes)
        text = (f"{strategy} waits for a free worker process (others are computing)." if job.queued else
                f"{strategy}: {job.done:,} of {total:,} samples solved in a worker process (one "
                f"{spec.cost} each).")
        st.progress(job.fraction, text=text + f" The page stays usable; the {strategy} line is added when "
                                              "they are done.")

    return session_job(f"replicability_{spec.worker}", key, start, prefix=spec.worker, progress=progress,
                       cancel_label=f"Cancel {strategy}", restart_label=f"Compute {strategy}",
                       cancelled_text=f"{strategy} was cancelled; the figure shows the other strategies.")


def main() -> None:
    """The page: the combination and the sampling, then the replicability of each strategy."""
    st.title("Replicability")
    st.caption("For each sample size s, draw pairs of disjoint samples of s datasets, compute the "
               "consensus of each sample and compare the two: rho-replicability is the mean Spearman "
               "rho, J-replicability the mean Jaccard index of the best encoders. Bands are "
               "bootstrapped 95% intervals of the means (the study's Figure 2).")

    db, version = data_key()
    task, levels = task_levels(db, version)
    tasks = (task,)

    warn_bad_number("n_pairs", low=10, high=1000, integer=True)
    warn_bad_number("step", low=1, high=10, integer=True)
    warn_bad_parameters()
    with st.container(border=True):
        c1, c2, c3 = st.columns(3)
        with c1:
            model = selectbox("Model", task_options("model", levels["model"], task), key="model",
                              default="LogReg")
        with c2:
            tuning = selectbox("Tuning", vocab.ordered("tuning", levels["tuning"]), key="tuning",
                               default="no")
        with c3:
            scoring = selectbox("Metric", task_options("scoring", levels["scoring"], task), key="metric",
                                default="AUC")
        # the last column holds two sliders side by side: at 2/8 "alpha (R-Nem)" wrapped
        s1, s2, s3, s4 = st.columns([3, 2, 1, 3])
        with s1:
            strategies = multiselect("Aggregation strategies", list(stats.STRATEGIES),
                                     key="strategy", default=["R-M", "Q-M"],
                                     help=vocab.strategy_help())
        with s2:
            n_pairs = st.number_input("Sample pairs per size", 10, 1000, 100, 10, key="n_pairs",
                                      bind="query-params")
        with s3:
            step = st.number_input("Size step", 1, 10, 5, 1, key="step", bind="query-params")
        with s4:
            values = parameter_inputs(strategies)
        choice, origins, prefer = origin_filter(levels)
        split = split_filter(levels)

    if not strategies:
        st.warning("Select at least one aggregation strategy.")
        st.stop()

    origin_banner(choice, prefer, models=(model,), tunings=(tuning,), scorings=(scoring,), splits=(split,),
                  tasks=tasks)
    rows = scores(db, version, models=(model,), tunings=(tuning,), scorings=(scoring,),
                  origins=origins, prefer=prefer, splits=(split,), tasks=tasks)
    if rows.empty:
        st.info(f"No results for {combination_label(model, tuning, scoring)}. "
                "(In the published data LGBM was run without tuning only, and SVM without model tuning.)")
        st.stop()
    n_datasets = rows["dataset"].nunique()
    sizes = replicability.default_sample_sizes(n_datasets, step=int(step))
    if not sizes:
        st.info(f"{n_datasets} dataset(s) with results: at least 4 are needed for two disjoint samples.")
        st.stop()
    st.markdown(f"**{combination_label(model, tuning, scoring)}**: {n_datasets} datasets; "
                f"sample sizes {', '.join(map(str, sizes))}; {int(n_pairs)} pairs per size.")
    params = stats.params_for(strategies, values)

    # A strategy the registry runs in a worker process (R-Kem: an exact solve per sample, 2 x pairs x
    # sizes of them) never runs on the server, so this page and every other visitor's stay usable:
    # a niced worker process (which spreads the solves over 2 processes) computes it, a fragment
    # shows its progress and a Cancel button, and its line joins the figure when done. The others
    # are computed here.
    in_worker = vocab.worker_strategies(strategies)
    jobs = [(s, size) for s in strategies if s not in in_worker for size in sizes]
    summaries, pairs = [], []
    if jobs:
        bar = st.progress(0.0, text="Computing replicability...")
        for done, (strategy, size) in enumerate(jobs, start=1):
            summary, pair_rows = one_size(db, version, (model, tuning, scoring), strategy, size, int(n_pairs),
                                          tuple(sorted(params.items())), origins, prefer, (split,), tasks)
            summaries.append(summary)
            pairs.append(pair_rows)
            bar.progress(done / len(jobs), text=f"{strategy}, {size} datasets per sample ({done}/{len(jobs)})")
        bar.empty()

    selection = _Selection(db, version, task, model, tuning, scoring, origins, prefer, split, sizes, n_pairs, params,
                           rows)
    for strategy in vocab.worker_strategies(vocab.AGGREGATIONS):
        if strategy not in in_worker:
            cancel_other_jobs(f"replicability_{vocab.STRATEGY_REGISTRY[strategy].worker}")  # left out: stop
            continue                                                                                # work nobody sees
        job = worker_job(strategy, selection)
        if job is not None and job.error is None:
            summaries.append(job.result.summary.assign(strategy=strategy))
            pairs.append(job.result.pairs.assign(strategy=strategy))
        elif job is not None:
            st.error(f"{strategy} could not be computed: {type(job.error).__name__}: {md_text(job.error)}")
    if in_worker and not summaries:
        st.stop()

    summary = pd.concat(summaries, ignore_index=True)
    shown = [s for s in strategies if s in set(summary["strategy"])]   # a worker's only once computed
    long = pd.concat([replicability.replicability_long(summary[summary["strategy"] == s], s) for s in shown],
                     ignore_index=True)
    filters = {"model": model, "tuning": tuning, "metric": scoring, "strategy": shown,
               "n_pairs": int(n_pairs), "sizes": sizes, **params, "seed": 0, "origin": choice,
               **({"prefer": prefer} if choice == "both" else {}),
               **({"split": split} if "time" in levels.get("split", []) else {})}
    page_provenance = provenance("replicability", filters, rows, version, task=task)

    title = f"Replicability: {combination_label(model, tuning, scoring)}"
    show_chart(plots.replicability_chart(long, color="strategy", title=title),
               "replicability", page_provenance, width="content")
    st.subheader("Summary")
    show_table(summary[["strategy", "sample_size", "n_pairs", "rho_mean", "rho_low", "rho_high",
                        "J_mean", "J_low", "J_high"]], "replicability-summary", page_provenance,
                      best={"rho_mean": "max", "J_mean": "max"})
    st.markdown("**How many datasets does a stable ranking need?**")
    for strategy in shown:
        st.markdown(f"- {strategy}: "
                    + md_text(replicability.datasets_needed_text(summary[summary["strategy"] == strategy])))
    with st.expander("Every sample pair"):
        show_table(pd.concat(pairs, ignore_index=True)[["strategy", "sample_size", "pair", "rho", "J"]],
                   "replicability-pairs", page_provenance)


main()
