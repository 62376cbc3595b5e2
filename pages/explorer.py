"""Results explorer: filter the score rows, see per-dataset scores and ranks, box plots, heatmap."""
import pandas as pd
import streamlit as st

from encbench import plots, vocab
from encbench.experiment import key_columns
from encbench.metrics import greater_is_better
from encbench.store import published, queries
from encbench.views import explorer, labels
from encbench.views import origins as origin_views
from encbench.views.run_result import published_agreement
from pages.ui import exports, store
from pages.ui.exports import dash_missing, show_chart, show_table
from pages.ui.filters import empty_selection, factor_filters, origin_banner, origin_filter, split_filter, task_levels
from pages.ui.navigation import ensure_routed
from pages.ui.store import data_key, datasets_table, get_reader, raw_scores, view_datasets
from pages.ui.text import md_text
from pages.ui.widgets import multiselect, selectbox

ensure_routed()

#: The tabs below the summary (labels are URL values: ?section=Distributions).
DRILL = "Drill down"
SECTIONS = ("Scores per dataset", "Distributions per encoder", "Encoder x dataset", DRILL)
#: the drill-down's selects (URL keys): an encoder, a dataset, two encoders head to head
DRILL_KEYS = ("drill_encoder", "drill_dataset", "drill_a", "drill_b")


def dataset_names(db: str, version: tuple) -> dict[str, str]:
    """Each dataset's name by its id (as a string)."""
    datasets_info = datasets_table(db, version)
    return dict(zip(datasets_info["dataset"].astype(str), datasets_info["name"].astype(str)))


@st.cache_data(show_spinner=False, max_entries=16)
def ranked(db: str, version: tuple, key: tuple):
    frame = store.scores(db, version, **dict(key))
    return explorer.ranked_scores(frame)


@st.cache_data(show_spinner=False, max_entries=16)
def fold_spread(db: str, version: tuple, run_ids: tuple) -> pd.DataFrame:
    return queries.fold_spread(get_reader(db), list(run_ids))


def with_fold_spread(db: str, version: tuple, table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with ``cv_std``, the per-fold standard deviation of each local score; NaN for
    published scores, which come averaged over folds, and for scores averaged
    over several runs (their run ids are joined by commas)."""
    local = sorted({r for r in table.loc[table["origin"] == "local", "run_id"].astype(str) if "," not in r})
    if not local:
        return table.assign(cv_std=float("nan"))
    spread = fold_spread(db, version, tuple(local))
    keys = ["run_id", *key_columns(table)]
    return table.merge(spread[keys + ["cv_std"]], on=keys, how="left")


# Charts are cached as Vega-Lite specs: building and serialising them cost more than the cached
# rows behind them.
@st.cache_data(show_spinner=False, max_entries=16)
def box_charts(db: str, version: tuple, key: tuple) -> dict[str, dict]:
    """Box plots of the scores and of the per-dataset ranks per encoder."""
    table = ranked(db, version, key)
    charts = {
        "box-scores": plots.box_by_encoder(table, value="cv_score", value_title="score", color="family",
                                           title="Scores per encoder"),
        "box-ranks": plots.box_by_encoder(table, value="rank", value_title="per-dataset rank (1 = best)",
                                          color="family", reverse=True, title="Per-dataset ranks per encoder"),
    }
    return {item: chart.to_dict(validate=False) for item, chart in charts.items()}


def cells_metrics(key: tuple) -> tuple:
    """The metrics a load key asks for (their direction colours the mean score)."""
    return dict(key).get("scorings") or ()


@st.cache_data(show_spinner=False, max_entries=32)
def heatmap_chart(db: str, version: tuple, key: tuple, field: str, encoders: tuple, datasets: tuple) -> dict:
    """Encoder x dataset heatmap of the mean ``field``, encoders best first (then those without results)."""
    cells = explorer.encoder_dataset_matrix(ranked(db, version, key), field)
    lower = field == "rank" or not all(greater_is_better(m) for m in cells_metrics(key))
    order = (cells.groupby("encoder")[field].mean()
             .sort_values(ascending=lower, kind="stable").index.tolist())
    order += [e for e in encoders if e not in order]
    return plots.encoder_dataset_heatmap(
        cells, value=field, value_title="mean rank" if field == "rank" else "mean score",
        encoders=order, datasets=list(datasets), lower_is_better=lower, dataset_names=dataset_names(db, version),
        select=CELL,
        title="Grey cells: no result for that encoder on that dataset").to_dict(validate=False)


@st.cache_data(show_spinner=False, max_entries=16)
def side_by_side(db: str, version: tuple, key: tuple):
    both = raw_scores(db, version, **dict(key), origins=("published", "local"))
    return explorer.published_vs_local(both)


@st.cache_data(show_spinner=False, max_entries=16)
def agreements(db: str, version: tuple, key: tuple):
    """Per published dataset with local scores: how they agree with the published ones."""
    both = raw_scores(db, version, **dict(key), origins=("published", "local"))
    return published_agreement(both[both["origin"] == "local"], both[both["origin"] == "published"])


@st.cache_data(show_spinner=False, max_entries=16)
def fold_rows(db: str, version: tuple, run_ids: tuple) -> pd.DataFrame:
    """The per-fold scores of local runs (the published ones come averaged over folds)."""
    return queries.fold_scores(get_reader(db), list(run_ids))


def dataset_label(dataset: str, names: dict[str, str]) -> str:
    """How a dataset is offered in a select and named in the URL: ``"credit-g (31)"``."""
    name = names.get(dataset)
    return f"{name} ({dataset})" if name and name != dataset else str(dataset)


#: the heatmap's click selection of one cell
CELL = "cell"


def open_drill(encoder: str, dataset: str) -> None:
    """Open the drill-down tab on ``encoder`` and ``dataset`` (a label of the dataset select);
    a callback, so it runs before the tabs and selects are drawn."""
    st.session_state["section"] = DRILL
    st.session_state["drill_encoder"] = encoder
    st.session_state["drill_a"] = encoder
    st.session_state["drill_dataset"] = dataset


def drill_down(db: str, version: tuple, table: pd.DataFrame, encoders: list[str], chosen_datasets: list[str],
               names: dict[str, str], page_provenance) -> None:
    """From an encoder to its scores per dataset, from a dataset to its per-fold scores, and two
    encoders head to head over the datasets: each chosen in a select bound to the URL."""
    present = [e for e in encoders if e in set(table["encoder"])]
    st.caption("Pick an encoder to see where it wins and loses, a dataset to see its scores fold by fold, "
               "two encoders to compare them dataset by dataset. The filters above apply.")
    st.subheader("An encoder, dataset by dataset")
    encoder = selectbox("Encoder", present, key="drill_encoder", default=present[0] if present else None)
    if encoder:
        profile = explorer.encoder_profile(table, encoder, names)
        best = int((profile["rank"] == 1).sum())
        with st.container(key="drill-encoder-summary"):
            st.markdown(f"**{encoder}** is best on **{best}** of {len(profile):,} (dataset, setting) pairs on "
                        f"{profile['dataset'].nunique()} datasets; its median rank is "
                        f"{profile['rank'].median():g}. Largest gaps to the best first.")
        show_table(profile.rename(columns={"scoring": "metric"}), "drill-encoder",
                   page_provenance.with_filters(drill_encoder=encoder), height=min(38 + 35 * max(len(profile), 1), 420),
                   column_config={
                       "cv_score": st.column_config.NumberColumn("score", format="%.4f"),
                       "best_score": st.column_config.NumberColumn("best score", format="%.4f"),
                       "best_encoders": st.column_config.TextColumn("best encoder(s)"),
                       "n_encoders": st.column_config.NumberColumn("encoders ranked"),
                       "behind": st.column_config.NumberColumn(
                           "behind the best", format="%.4f",
                           help="How far its score is from the best of that dataset and setting, in "
                                "score units (a lower-is-better metric counted the same way).")})

    st.subheader("A dataset, fold by fold")
    shown_datasets = [d for d in chosen_datasets if d in set(table["dataset"].astype(str))]
    label_of = {d: dataset_label(d, names) for d in shown_datasets}
    picked = selectbox("Dataset", list(label_of.values()), key="drill_dataset")
    dataset = next((d for d, label in label_of.items() if label == picked), None)
    if dataset is not None:
        local = sorted({r for r in table.loc[(table["dataset"].astype(str) == dataset)
                                             & (table.get("origin", "") == "local"), "run_id"].astype(str)
                        if "," not in r}) if "origin" in table.columns else []
        folds = fold_rows(db, version, tuple(local)) if local else pd.DataFrame()
        if len(folds):  # the folds of the experiments this view counts
            keys = ["run_id", *key_columns(table)]
            folds = folds.merge(table[keys].drop_duplicates(), on=keys, how="inner")
        per_fold = explorer.dataset_folds(folds, dataset)
        if per_fold.empty:
            with st.container(key="drill-no-folds"):
                st.info(f"No per-fold scores of {md_text(dataset_label(dataset, names))} in this view: the published "
                        "scores come averaged over their 5 folds, and only local runs keep each fold. Its "
                        "scores per encoder are below; run it on the Run page (or choose *both* or *local* "
                        "under *Results*) to see the folds.")
            mine = table[table["dataset"].astype(str) == dataset]
            mine = mine[[c for c in ("encoder", "family", "model", "tuning", "scoring", "cv_score", "rank", "origin")
                         if c in mine.columns]].sort_values([*vocab.FACTORS, "rank"], kind="stable")
            show_table(mine.rename(columns={"scoring": "metric"}), "drill-dataset",
                       page_provenance.with_filters(drill_dataset=dataset),
                       height=min(38 + 35 * max(len(mine), 1), 420),
                       column_config={"cv_score": st.column_config.NumberColumn("score", format="%.4f")})
        else:
            fold_columns = [c for c in per_fold.columns if c.startswith("fold_")]
            st.caption(f"{len(per_fold):,} experiments of local runs, {len(fold_columns)} folds each; mean and sample "
                       "standard deviation over the folds. Best mean first within each setting.")
            show_table(per_fold.rename(columns={"scoring": "metric"}), "drill-folds",
                       page_provenance.with_filters(drill_dataset=dataset),
                       column_config={c: st.column_config.NumberColumn(format="%.4f")
                                      for c in [*fold_columns, "mean", "sd"]})

    st.subheader("Two encoders, head to head")
    if len(present) < 2:
        st.info("This selection has fewer than two encoders.")
        return
    a_col, b_col = st.columns(2)
    with a_col:
        a = selectbox("Encoder A", present, key="drill_a", default=present[0])
    with b_col:
        b = selectbox("Encoder B", [e for e in present if e != a], key="drill_b",
                      default=present[1] if present[1] != a else present[0])
    duel = explorer.head_to_head(table, a, b, names)
    if duel.points.empty:
        st.info(f"{a} and {b} have no dataset and setting in common in this selection.")
        return
    with st.container(key="drill-duel-summary"):
        st.markdown(duel.summary)
    duel_provenance = page_provenance.with_filters(drill_a=a, drill_b=b)
    chart = plots.head_to_head_scatter(duel.points.assign(name=duel.points["name"].fillna(duel.points["dataset"])),
                                       encoder_a=a, encoder_b=b, title=f"{a} vs {b}: one point per dataset and setting")
    show_chart(chart, "head-to-head", duel_provenance, width="content",
               table=(duel.points.rename(columns={"scoring": "metric"}), "head-to-head"))
    st.caption(f"Above the dashed diagonal {b} scores higher, below it {a} (for a lower-is-better metric the "
               "better one is the lower score: the colour says which is better).")


def _scores_section(table: pd.DataFrame, page_provenance, score_best: str | None) -> None:
    """Every score row of the selection, with its rank."""
    columns = ["dataset", "name", "model", "tuning", "scoring", "encoder", "family", "cv_score", "cv_std",
               "rank", "encode_time", "origin", "run_id"]
    columns = [c for c in columns if c in table.columns]
    listed = table[columns].rename(columns={"scoring": "metric"})
    # LaTeX, for a paper: without the run ids (the provenance names them) or a one-valued
    # origin; the best score and rank of each dataset and setting in bold.
    internal = ["run_id"] + (["origin"] if "origin" in listed and listed["origin"].nunique() <= 1 else [])
    # Published rows have no fold sd and AUC rows no encoding time: a dash, not "None".
    optional = {"cv_std": ("fold sd", "{:.4f}", "%.4f",
                           "Standard deviation of the score over the folds (local runs; the published "
                           "scores come averaged over folds, so they have none). Exports carry it as cv_std."),
                "encode_time": ("encoding time (s)", "{:.3f}", "%.3f",
                                "Mean per fold of the time to encode the training fold, the quantity the "
                                "published 'time' reports (measured on the study's hardware; none for AUC "
                                "rows). Local runs record the same quantity here, so the two compare like "
                                "with like; their total time (encoding + fitting or tuning + predicting) "
                                "is kept apart.")}
    shown, as_text = dash_missing(listed, {c: spec[1] for c, spec in optional.items()})
    optional_config = {
        c: (st.column_config.TextColumn(label, help=text, alignment="right") if c in as_text
            else st.column_config.NumberColumn(label, format=printf, help=text))
        for c, (label, _, printf, text) in optional.items()}
    # 20 rows when there are as many (Streamlit's default shows 10 in any window)
    show_table(
        listed, "scores", page_provenance, shown=shown, height=min(38 + 35 * max(len(listed), 1), 38 + 35 * 20),
        best={c: d for c, d in (("cv_score", score_best), ("rank", "min")) if c in listed and d},
        latex={"best_within": [c for c in ("dataset", "model", "tuning", "metric") if c in listed],
               "drop": [c for c in internal if c in listed]},
        column_config={"cv_score": st.column_config.NumberColumn("score", format="%.4f"), **optional_config})


def _heatmap_section(db: str, version: tuple, load_key: tuple, encoders: list[str], chosen_datasets: list[str],
                     names: dict[str, str], page_provenance) -> None:
    """The encoder x dataset heatmap; a clicked cell offers the drill-down."""
    value = st.radio("Cell value", ["rank", "score"], horizontal=True, key="cell", bind="query-params",
                     help="Mean over the selected model/tuning/metric combinations.")
    field = "rank" if value == "rank" else "cv_score"
    clicked = show_chart(heatmap_chart(db, version, load_key, field, tuple(encoders),
                                       tuple(chosen_datasets)), f"heatmap-{value}", page_provenance, select=CELL)
    if clicked:
        cell_encoder, cell_dataset = str(clicked[0]["encoder"]), str(clicked[0]["dataset"])
        cell_label = dataset_label(cell_dataset, names)
        st.button(f"Drill down: {cell_encoder} dataset by dataset, and {cell_label} fold by fold",
                  key="drill-cell", icon=":material/zoom_in:", on_click=open_drill, args=(cell_encoder, cell_label))
    else:
        st.caption("Click a cell to drill down into that encoder and that dataset.")


def _published_vs_local(db: str, version: tuple, filter_args: dict, filter_key: tuple, filters: dict,
                        names: dict[str, str], choice: str, prefer: str) -> None:
    """Local scores next to the published ones of the same experiments, when the selection has both."""
    pairs = side_by_side(db, version, filter_key)
    if not pairs.empty:
        st.subheader("Published vs local")
        st.caption(
            f"{len(pairs):,} experiments of this selection have both a published score and a score from a "
            f"local run (on a copy of a published dataset, stored under its OpenML id): each local score "
            f"next to its published value, difference = local - published. Which of the two enters the "
            f"views above is chosen with *Results* (now: "
            f"{'the ' + prefer + ' score' if choice == 'both' else origin_views.ORIGIN_LABELS[choice]})."
        )
        for dataset, agreement in agreements(db, version, filter_key).items():
            if agreement.low:
                with st.container(key=f"agreement-{dataset}"):
                    st.warning(agreement.message(md_text(names.get(dataset, dataset))), icon=":material/rule:")
        diff = pairs["difference"]
        st.markdown(f"Mean difference **{diff.mean():+.4f}**, mean absolute difference "
                    f"**{diff.abs().mean():.4f}**, largest **{diff.abs().max():.4f}** "
                    f"({(diff.abs() <= 1e-9).sum():,} of {len(pairs):,} identical).")
        earlier = pairs["note"] != ""
        if earlier.any():
            kept = diff[~earlier]
            kinds = pairs.loc[earlier, "note"].map(published.NOTE_SUMMARIES).value_counts()
            st.info(
                f"{earlier.sum():,} of these published scores were not produced the way encbench runs the "
                f"study's final code: " + "; ".join(f"{n:,} {kind}" for kind, n in kinds.items())
                + ". No local run reproduces them (docs/protocol.md, 'Differences from the published study'); their "
                "*note* column says why. Leaving them out: "
                + (f"mean absolute difference **{kept.abs().mean():.4f}**, largest **{kept.abs().max():.4f}**."
                   if len(kept) else "nothing is left."))
        shown = pairs.assign(name=pairs["dataset"].map(names)).rename(columns={"scoring": "metric"})
        shown = shown[["dataset", "name", "model", "tuning", "metric", "encoder", "published", "local",
                       "difference", "note", "local_runs"]]
        pair_provenance = exports.provenance("explorer-published-vs-local", {**filters, "origin": "both"},
                                      raw_scores(db, version, **filter_args, origins=("published", "local")),
                                      version)
        show_table(shown, "published-vs-local", pair_provenance, height=min(38 + 35 * len(shown), 420),
                   column_config={c: st.column_config.NumberColumn(format="%.4f")
                                  for c in ("published", "local")}
                   | {"difference": st.column_config.NumberColumn(format="%+.4f")})


def main() -> None:
    """The page: the filters, the summary of the selection, the open tab and published vs local."""
    st.title("Results explorer")
    st.caption("Scores per dataset, filtered. Ranks are computed within each (dataset, model, tuning, "
               "metric): 1 = best score. Filters are kept in the URL: share it to share this view.")

    db, version = data_key()
    task, levels = task_levels(db, version)
    names = dataset_names(db, version)

    with st.container(border=True):
        selected = factor_filters(levels, {"model": None, "tuning": ["no"], "scoring": ["AUC"]}, task=task)
        choice, origins, prefer = origin_filter(levels)
        split = split_filter(levels)
        # the picker offers the datasets of this view only (local-only uploads are not published ones)
        task_datasets = set(levels["dataset"])  # the datasets of this task
        all_datasets = [d for d in view_datasets(db, version, origins) if d in task_datasets]
        c1, c3 = st.columns([4, 1])
        with c1:
            # the encoders beyond the study are a family of the registry's, offered while they are added
            families = multiselect("Encoder family",
                                   labels.family_names(beyond=origin_views.BEYOND_ORIGIN in origins),
                                   key="family", help="Families from the encoder registry.")
        with c3:
            every = st.toggle("All datasets", value=True, key="all_datasets", bind="query-params")
        if every:
            chosen_datasets = all_datasets
        else:
            # Options are "id: name" as shown, so the URL holds readable values (?dataset=31: credit-g).
            label_of = {d: f"{d}: {names.get(d, '?')}" for d in all_datasets}
            id_of = {v: k for k, v in label_of.items()}
            picked = multiselect("Datasets", list(label_of.values()), key="dataset",
                                 default=[label_of[d] for d in all_datasets[:5]])
            chosen_datasets = [id_of[p] for p in picked]

    missing = empty_selection({**selected, "family": families, "dataset": chosen_datasets})
    if missing:
        st.warning(f"Select at least one value for: {', '.join(missing)}.")
        st.stop()

    # the study's 32 and, while they are added, the encoders beyond it (a local run of one of those
    # counts too: it is in the view's rows)
    encoders = [e for e in labels.encoders_of_families(families) if e in levels["encoder"]]
    if not encoders:
        st.info("No encoder of the chosen families has results.")
        st.stop()

    filter_args = dict(datasets=None if every else tuple(chosen_datasets), models=tuple(selected["model"]),
                       tunings=tuple(selected["tuning"]), scorings=tuple(selected["scoring"]),
                       encoders=tuple(encoders), splits=(split,), tasks=(task,))
    origin_banner(choice, prefer, **filter_args)
    rows = store.scores(db, version, **filter_args, origins=origins, prefer=prefer)
    # the coverage grid and the heatmap hold the study's encoders and those of the view's rows, not
    # an encoder whose results this view leaves out (beyond the study while they are not added)
    encoders = [e for e in encoders if e in vocab.ENCODERS or e in set(rows["encoder"])]
    if rows.empty:
        st.info("No results for this combination of filters. Widen the selection "
                "(e.g. LGBM has results only without tuning, SVM none with model tuning).")
        st.stop()

    filter_key = tuple(filter_args.items())
    # the best score of a dataset and setting: the highest, the lowest of a lower-is-better metric
    # (RMSE, MAE); none in bold when the chosen metrics point both ways
    directions = {greater_is_better(m) for m in selected["scoring"]}
    score_best = None if len(directions) > 1 else ("max" if directions == {True} else "min")
    load_key = (*filter_key, ("origins", origins), ("prefer", prefer))
    table = ranked(db, version, load_key)
    table = table.assign(name=table["dataset"].map(names))
    table = with_fold_spread(db, version, table)
    filters = {"model": selected["model"], "tuning": selected["tuning"], "metric": selected["scoring"],
               "family": families, "origin": choice, **({"prefer": prefer} if choice == "both" else {}),
               "dataset": "all" if every else chosen_datasets,
               **({"split": split} if "time" in levels.get("split", []) else {})}
    page_provenance = exports.provenance("explorer", filters, table, version, task=task)

    grid = explorer.coverage(table, encoders, chosen_datasets)
    n_combos = table[list(vocab.FACTORS)].drop_duplicates().shape[0]
    st.markdown(
        f"**{len(table):,}** results · {table['dataset'].nunique()} datasets · "
        f"{table['encoder'].nunique()} encoders · {n_combos} model/tuning/metric combinations · "
        f"{grid.missing:,} of {grid.cells:,} encoder x dataset cells without any result"
    )

    # One section at a time: only the open tab is drawn (stateful tabs bound to the URL as
    # ?section=..., as on the Overview and Consensus pages), so a filter change redraws the summary
    # and one section, not a table, two box plots over every score and a heatmap.
    scores_tab, distributions_tab, heatmap_tab, drill_tab = st.tabs(list(SECTIONS), key="section",
                                                                     bind="query-params")
    if scores_tab.open:
        with scores_tab:
            _scores_section(table, page_provenance, score_best)
    if distributions_tab.open:
        with distributions_tab:
            for column, (item, spec) in zip(st.columns(2), box_charts(db, version, load_key).items()):
                with column:
                    show_chart(spec, item, page_provenance)
    if heatmap_tab.open:
        with heatmap_tab:
            _heatmap_section(db, version, load_key, encoders, chosen_datasets, names, page_provenance)
    if drill_tab.open:
        with drill_tab:
            drill_down(db, version, table, encoders, chosen_datasets, names, page_provenance)

    _published_vs_local(db, version, filter_args, filter_key, filters, names, choice, prefer)


main()
