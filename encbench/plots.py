"""Altair chart builders for the app and for notebooks: pure functions, data in, chart out.

Every function takes plain pandas objects (no store, no streamlit) and returns an Altair chart
with a fixed pixel size, so the same chart renders in the app (which may stretch it) and exports
to PNG/SVG through vl-convert unchanged (:mod:`encbench.export`).

Conventions: ranks are "1 = best"; rank axes therefore run best-first; encoders are ordered by
the ranking being shown; a missing (encoder, dataset) result is drawn as a grey "missing" cell,
never as a zero. Encodings are channel objects (``text=alt.Text("label:N")``), never bare strings
(``text="label:N"``) or dicts: Altair turns each of those into a channel through ``from_dict``,
which hashes its whole Vega-Lite schema every time (about 10 ms each, half the time of building
the Consensus page's charts). Same spec either way.
"""
from __future__ import annotations

import json
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from encbench.views.labels import family_order

MISSING_COLOR = "#d9d9d9"
#: Grey of lines and points drawn on the page background (axes, leader lines, whiskers): at least
#: 3:1 contrast (WCAG for graphics) on white and on Streamlit's dark backgrounds (#0e1117, #171614), so a
#: chart reads in both themes. Text on the page background is never given a colour: it is drawn
#: as axis, legend or title text, which Streamlit colours by the theme (a text mark would be
#: black in both).
LINE_GREY = "#8c8c8c"
#: Colour of a highlighted encoder (e.g. the new encoder in its CD diagram); 3:1 on both themes.
HIGHLIGHT = "#e8590c"


def _label_expr(values: Sequence[object], labels: Sequence[str]) -> str:
    """A Vega expression giving the label of each axis value (numbers or category names)."""
    return f"{json.dumps([str(t) for t in labels])}[indexof({json.dumps(list(values))}, datum.value)]"


_ROW_PX = 16  # height of one encoder row in per-encoder charts


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{what} needs a pandas DataFrame: got {type(frame).__name__!r}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} needs column(s) {missing!r}: got {list(frame.columns)!r}")


# Sizes are those of the plotting area. "fit-x" lets the app stretch a chart to its column
# width while the height stays as given (axes and legends added around it); "pad" keeps the
# natural size (square heatmaps, the CD diagram). Both export unchanged through vl-convert.
FIT_X = alt.AutoSizeParams(type="fit-x", contains="padding")
PAD = alt.AutoSizeParams(type="pad", contains="padding")


# Category axes show every label (Vega would drop overlapping ones, e.g. every other encoder).
_LABEL_AXIS_X = alt.Axis(labelAngle=-40, labelLimit=260, labelOverlap=False)
_LABEL_AXIS_Y = alt.Axis(labelLimit=260, labelOverlap=False)


def _height(n_rows: int, minimum: int = 120) -> int:
    return max(minimum, _ROW_PX * int(n_rows))


def _title_width(title: object) -> int:
    """About the pixels a chart title takes (Vega's 13 px bold: at most 7.5 px a character), so a
    chart held to its width ("fit-x") can be made wide enough not to cut it."""
    text = " ".join(title) if isinstance(title, (list, tuple)) else str(title or "")
    return int(7.5 * len(text)) + 10 if text else 0


#: Colours of the encoder families, in the order of :func:`encbench.views.labels.family_order`
#: (Tableau 10, then grey for an encoder the registry does not know): a family has one colour in
#: every chart, whichever families a view happens to show.
FAMILY_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                 "#ff9da7", "#9c755f", "#17becf", "#8c8c8c")


def _color(field: str, values: Sequence[object] = ()) -> alt.Color:
    """The colour channel of a categorical ``field``; the encoder family gets its fixed colour
    (:data:`FAMILY_COLORS`) whatever other families ``values`` (the data's) hold, and the legend
    lists only those."""
    if field != "family":
        return alt.Color(f"{field}:N", title=field)
    order = family_order()
    present = {str(v) for v in values}
    domain = [f for f in order if f in present] + sorted(present - set(order))
    palette = {f: FAMILY_COLORS[min(i, len(FAMILY_COLORS) - 1)] for i, f in enumerate(order)}
    return alt.Color("family:N", title="family",
                     scale=alt.Scale(domain=domain, range=[palette.get(f, FAMILY_COLORS[-1]) for f in domain]))


def consensus_bars(ranking: pd.DataFrame, *, value: str = "rank", value_title: str | None = None,
                   color: str | None = None, title: str = "") -> alt.Chart:
    """Horizontal bars, one per encoder, ordered by consensus rank (best at the top).

    Parameters
    ----------
    ranking : pandas.DataFrame
        Columns ``encoder``, ``rank`` (1 = best) and, if different, ``value`` (the bar length,
        e.g. the mean per-dataset rank behind an R-M consensus). Optional ``color`` column
        (e.g. the encoder family) colours the bars.
    """
    columns = ["encoder", "rank"] + ([value] if value != "rank" else []) + ([color] if color else [])
    _require(ranking, columns, "consensus_bars")
    data = ranking.sort_values(["rank", "encoder"]).reset_index(drop=True)
    order = data["encoder"].tolist()
    tooltip = [alt.Tooltip("encoder:N"), alt.Tooltip("rank:Q", title="consensus rank")]
    if value != "rank":
        tooltip.append(alt.Tooltip(f"{value}:Q", title=value_title or value, format=".3f"))
    if color:
        tooltip.append(alt.Tooltip(f"{color}:N"))
    encoding = {
        "y": alt.Y("encoder:N", sort=order, title=None, axis=_LABEL_AXIS_Y),
        "x": alt.X(f"{value}:Q", title=value_title or value),
        "tooltip": tooltip,
    }
    if color:
        encoding["color"] = _color(color, data[color])
    bars = alt.Chart(data).mark_bar().encode(**encoding)
    # The ranks as labels of a second y axis on the right: axis text takes the theme's colour, a
    # text mark would be black on the dark theme's background.
    ranks = [f"{r:g}" for r in data["rank"]]
    rank_axis = alt.Axis(orient="right", title=None, labelExpr=_label_expr(order, ranks), ticks=False,
                         domain=False, labelPadding=4, labelFontSize=10, labelOverlap=False, labelFlush=False)
    labels = alt.Chart(data).mark_tick(opacity=0).encode(
        y=alt.Y("encoder:N", sort=order, axis=rank_axis), x=alt.X(f"{value}:Q"))
    return (bars + labels).resolve_axis(y="independent").properties(
        width=420, height=_height(len(order)), title=title, autosize=FIT_X)


def rank_matrix(ranks: pd.DataFrame, *, column: str = "column", title: str = "",
                columns: Sequence[str] | None = None, encoders: Sequence[str] | None = None) -> alt.Chart:
    """Encoders x rankings heatmap with the rank printed in each cell (several rankings side by side).

    Parameters
    ----------
    ranks : pandas.DataFrame
        Long: ``encoder``, ``column`` (the ranking's label, e.g. "LogReg/no/AUC R-M"), ``rank``.
        NaN ranks are "missing".
    columns, encoders : sequence of str, optional
        Column and row order, e.g. those of the table shown beside the chart. By default columns
        follow their first appearance in ``ranks`` and encoders the first ranking, ties by their
        mean rank over the columns.
    """
    _require(ranks, ["encoder", column, "rank"], "rank_matrix")
    data = ranks[["encoder", column, "rank"]].copy()
    present = list(dict.fromkeys(data[column].tolist()))
    columns = ([c for c in columns if c in set(present)] + [c for c in present if c not in set(columns)]
               if columns is not None else present)
    # Encoders in the order of the first ranking (as the table beside it), ties by mean rank.
    first = data[data[column] == columns[0]].set_index("encoder")["rank"] if columns else pd.Series(dtype=float)
    keys = pd.DataFrame({"first": first, "mean": data.groupby("encoder")["rank"].mean()})
    order = keys.sort_values(["first", "mean"], kind="stable", na_position="last").index.tolist()
    if encoders is not None:
        given = [e for e in map(str, encoders) if e in set(order)]
        order = given + [e for e in order if e not in set(given)]
    data["label"] = data["rank"].map(lambda r: "–" if pd.isna(r) else f"{int(r)}")
    data["missing"] = data["rank"].isna()
    # The orders and the text colour are columns of the data, not lists and numbers in the spec:
    # charts of other rankings then share one spec, and Streamlit's browser side swaps the data
    # of the chart drawn instead of compiling and building it again (most of its cost).
    data["column_order"] = data[column].map({c: i for i, c in enumerate(columns)})
    data["encoder_order"] = data["encoder"].astype(str).map({str(e): i for i, e in enumerate(order)})
    threshold = float(np.nanmax(data["rank"])) / 2 if data["rank"].notna().any() else 0.0
    data["dark"] = data["rank"] > threshold
    base = alt.Chart(data).encode(
        x=alt.X(f"{column}:N", sort=alt.EncodingSortField("column_order", op="min"), title=None,
                axis=_LABEL_AXIS_X),
        y=alt.Y("encoder:N", sort=alt.EncodingSortField("encoder_order", op="min"), title=None,
                axis=_LABEL_AXIS_Y),
    )
    cells = _with_missing(base, alt.Color("rank:Q", scale=alt.Scale(scheme="viridis", reverse=True),
                                          title="rank", legend=alt.Legend(titleLimit=300)),
                          [alt.Tooltip("encoder:N"), alt.Tooltip(f"{column}:N"), alt.Tooltip("label:N")])
    text = base.mark_text(fontSize=9).encode(text=alt.Text("label:N"), color=_ink(alt.datum.dark))
    # wide enough for the title too: an exported image is cut to the chart's width
    width = max(160, 70 * len(columns), int(6.5 * len(title)))
    return (cells + text).properties(width=width, height=_height(len(order)), title=title,
                                     autosize=FIT_X)


def similarity_heatmap(matrix: pd.DataFrame, *, measure: str, title: str = "",
                       domain: tuple[float, float] | None = None) -> alt.Chart:
    """Square heatmap of a similarity matrix (e.g. Spearman rho or Jaccard between rankings).

    Parameters
    ----------
    matrix : pandas.DataFrame
        Square, index and columns the compared rankings' labels, values in the measure's range
        (NaN allowed: shown as missing).
    measure : str
        Name of the measure (legend title and tooltip).
    domain : (float, float), optional
        Colour scale domain; default (-1, 1) for measures that can be negative, else (0, 1).
    """
    if not isinstance(matrix, pd.DataFrame):
        raise ValueError(f"similarity_heatmap needs a DataFrame: got {type(matrix).__name__!r}")
    labels = [str(c) for c in matrix.columns]
    rows = [str(i) for i in matrix.index]
    values = matrix.to_numpy(dtype=float)
    long = pd.DataFrame({
        "a": np.repeat(rows, len(labels)),
        "b": np.tile(labels, len(rows)),
        "value": values.reshape(-1),
    })
    long["missing"] = long["value"].isna()
    long["label"] = long["value"].map(lambda v: "n/a" if pd.isna(v) else f"{v:.2f}")
    if domain is None:
        domain = (-1.0, 1.0) if (long["value"].min(skipna=True) < 0) else (0.0, 1.0)
    base = alt.Chart(long).encode(
        x=alt.X("b:N", sort=labels, title=None, axis=_LABEL_AXIS_X),
        y=alt.Y("a:N", sort=rows, title=None, axis=_LABEL_AXIS_Y),
    )
    cells = _with_missing(base, alt.Color("value:Q", scale=alt.Scale(scheme="blues", domain=list(domain)),
                                          title=measure, legend=alt.Legend(titleLimit=300)),
                          [alt.Tooltip("a:N", title="ranking"), alt.Tooltip("b:N", title="vs"),
                           alt.Tooltip("label:N", title=measure)])
    midpoint = (domain[0] + domain[1]) / 2
    text = base.mark_text(fontSize=10).encode(
        text=alt.Text("label:N"), color=_ink(alt.datum.value > midpoint))
    side = max(160, min(520, 48 * len(labels)))
    return (cells + text).properties(width=side, height=side, title=title, autosize=PAD)


def box_stats(data: pd.DataFrame, *, value: str, group: str = "encoder") -> pd.DataFrame:
    """Tukey box-plot statistics of ``value`` per ``group`` (NaN values are not values).

    Returns ``group, n, q1, median, q3, low, high`` where ``low``/``high`` are the whisker ends:
    the most extreme values within 1.5 IQR of the box. Computing them here keeps the chart small
    (a few numbers per encoder instead of every score row).
    """
    frame = data.loc[data[value].notna(), [group, value]]
    rows = []
    for name, values in frame.groupby(group, observed=True, sort=False)[value]:
        v = np.sort(values.to_numpy(dtype=float))
        q1, median, q3 = np.quantile(v, [0.25, 0.5, 0.75])
        reach = 1.5 * (q3 - q1)
        inside = v[(v >= q1 - reach) & (v <= q3 + reach)]
        rows.append({group: name, "n": int(v.size), "q1": q1, "median": median, "q3": q3,
                     "low": float(inside.min()), "high": float(inside.max())})
    return pd.DataFrame(rows, columns=[group, "n", "q1", "median", "q3", "low", "high"])


def box_by_encoder(data: pd.DataFrame, *, value: str, value_title: str | None = None,
                   order: Sequence[str] | None = None, color: str | None = None,
                   reverse: bool = False, title: str = "") -> alt.Chart:
    """Box plots of ``value`` per encoder (one box per encoder, encoders on the y axis).

    Whiskers reach the most extreme values within 1.5 IQR (outliers are not drawn).

    Parameters
    ----------
    data : pandas.DataFrame
        Long: ``encoder`` and ``value`` columns (NaN rows are dropped: a missing result is not a
        value); optional ``color`` (e.g. family; one value per encoder).
    order : sequence of str, optional
        Encoder order (default: by median, best first; ``reverse=True`` when lower is better).
    """
    columns = ["encoder", value] + ([color] if color else [])
    _require(data, columns, "box_by_encoder")
    boxes = box_stats(data, value=value)
    if color:
        colors = data.drop_duplicates("encoder").set_index("encoder")[color]
        boxes[color] = colors.reindex(boxes["encoder"]).to_numpy()
    if order is None:
        order = boxes.sort_values("median", ascending=reverse, kind="stable")["encoder"].tolist()
    y = alt.Y("encoder:N", sort=list(order), title=None, axis=_LABEL_AXIS_Y)
    title_x = value_title or value
    tooltip = [alt.Tooltip("encoder:N"), alt.Tooltip("n:Q", title="results"),
               alt.Tooltip("low:Q", format=".4g", title="whisker low"),
               alt.Tooltip("q1:Q", format=".4g"), alt.Tooltip("median:Q", format=".4g"),
               alt.Tooltip("q3:Q", format=".4g"),
               alt.Tooltip("high:Q", format=".4g", title="whisker high")]
    base = alt.Chart(boxes).encode(y=y, tooltip=tooltip)
    whisker = base.mark_rule(color=LINE_GREY).encode(
        x=alt.X("low:Q", title=title_x, scale=alt.Scale(zero=False)), x2=alt.X2("high"))
    box_encoding = {"x": alt.X("q1:Q"), "x2": alt.X2("q3")}
    if color:
        box_encoding["color"] = _color(color, boxes[color])
    box = base.mark_bar(size=10).encode(**box_encoding)
    # black on the box (the box's colour, not the page's, is behind it)
    median = base.mark_tick(color="black", thickness=2, size=10).encode(x=alt.X("median:Q"))
    return (whisker + box + median).properties(width=420, height=_height(len(order)), title=title,
                                               autosize=FIT_X)


def encoder_dataset_heatmap(data: pd.DataFrame, *, value: str, value_title: str | None = None,
                            encoders: Sequence[str] | None = None,
                            datasets: Sequence[str] | None = None, lower_is_better: bool = False,
                            title: str = "", dataset_names: dict[str, str] | None = None,
                            select: str | None = None) -> alt.Chart:
    """Encoder x dataset heatmap of ``value``; combinations without a result are grey "missing".

    Parameters
    ----------
    data : pandas.DataFrame
        Long: ``encoder``, ``dataset``, ``value`` (at most one row per cell; NaN = missing).
    encoders, datasets : sequence of str, optional
        The full grid to draw (default: the values present). Cells of the grid without a row are
        drawn as missing, so absent results stay visible instead of silently disappearing.
    dataset_names : dict, optional
        Dataset key -> name: the axis and the tooltips show names (a key without a name shows
        itself); the cells stay keyed by dataset.
    select : str, optional
        The name of a click selection of one cell with a result (its ``encoder`` and
        ``dataset``), for an app that drills into it.
    """
    _require(data, ["encoder", "dataset", value], "encoder_dataset_heatmap")
    if data.duplicated(["encoder", "dataset"]).any():
        raise ValueError("encoder_dataset_heatmap needs one row per (encoder, dataset): got duplicates")
    encoders = list(encoders) if encoders is not None else sorted(data["encoder"].unique())
    datasets = list(datasets) if datasets is not None else sorted(data["dataset"].unique(), key=_natural)
    grid = pd.MultiIndex.from_product([encoders, datasets], names=["encoder", "dataset"])
    frame = data.set_index(["encoder", "dataset"])[[value]].reindex(grid).reset_index()
    frame["missing"] = frame[value].isna()
    frame["shown"] = frame[value].map(lambda v: "missing" if pd.isna(v) else f"{v:.4g}")
    labels = [str((dataset_names or {}).get(d) or d) for d in datasets]
    frame["name"] = frame["dataset"].map(dict(zip(datasets, labels)))
    x_axis = alt.Axis(labelAngle=-90, labelOverlap=False, labelLimit=160)
    if dataset_names:
        x_axis = alt.Axis(labelAngle=-90, labelOverlap=False, labelLimit=160,
                          labelExpr=_label_expr(datasets, labels))
    base = alt.Chart(frame).encode(
        x=alt.X("dataset:N", sort=datasets, title="dataset", axis=x_axis),
        y=alt.Y("encoder:N", sort=encoders, title=None, axis=_LABEL_AXIS_Y),
    )
    cells = _with_missing(base, alt.Color(f"{value}:Q", title=value_title or value,
                                          scale=alt.Scale(scheme="viridis", reverse=lower_is_better)),
                          [alt.Tooltip("encoder:N"), alt.Tooltip("name:N", title="dataset"),
                           alt.Tooltip("shown:N", title=value_title or value)])
    if select:
        cells.layer[1] = cells.layer[1].add_params(
            alt.selection_point(name=select, fields=["encoder", "dataset"], on="click", toggle=False))
    # never narrower than its title: "fit-x" holds the chart to its width, title included, and a
    # PNG of a few datasets cut the title at both ends
    width = max(200, min(1100, 14 * len(datasets)), _title_width(title))
    return cells.properties(width=width, height=_height(len(encoders)), title=title,
                            autosize=FIT_X)


def head_to_head_scatter(points: pd.DataFrame, *, encoder_a: str, encoder_b: str,
                         title: str = "") -> alt.LayerChart:
    """Two encoders' scores against each other, one point per (dataset, setting), with the
    diagonal of equal scores; the tooltip names the dataset.

    Parameters
    ----------
    points : pandas.DataFrame
        ``name`` (the dataset's name, or its key), ``score_a``, ``score_b``, ``scoring``,
        ``winner`` (as :func:`encbench.views.explorer.head_to_head` gives), and optionally
        ``model``, ``tuning``.
    """
    _require(points, ["name", "score_a", "score_b", "scoring", "winner"], "head_to_head_scatter")
    data = points.assign(name=points["name"].astype(str))
    values = pd.concat([data["score_a"], data["score_b"]]).astype(float)
    low, high = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    pad = (high - low) * 0.03 or 0.01
    domain = [low - pad, high + pad]
    scale = alt.Scale(domain=domain, zero=False, nice=False)
    tooltip = [alt.Tooltip("name:N", title="dataset")] + [
        alt.Tooltip(f"{c}:N") for c in ("model", "tuning") if c in data.columns] + [
        alt.Tooltip("scoring:N", title="metric"), alt.Tooltip("score_a:Q", title=encoder_a, format=".4f"),
        alt.Tooltip("score_b:Q", title=encoder_b, format=".4f"), alt.Tooltip("winner:N", title="better")]
    diagonal = alt.Chart(pd.DataFrame({"a": domain, "b": domain})).mark_line(
        color=LINE_GREY, strokeDash=[4, 3]).encode(x=alt.X("a:Q", scale=scale), y=alt.Y("b:Q", scale=scale))
    dots = alt.Chart(data).mark_point(filled=True, size=45, opacity=0.8).encode(
        x=alt.X("score_a:Q", title=f"{encoder_a} score", scale=scale),
        y=alt.Y("score_b:Q", title=f"{encoder_b} score", scale=scale),
        color=alt.Color("winner:N", title="better", scale=alt.Scale(
            domain=[encoder_a, encoder_b, "tie"], range=[SERIES_COLORS[0], HIGHLIGHT, LINE_GREY])),
        shape=alt.Shape("scoring:N", title="metric"),
        tooltip=tooltip)
    return (diagonal + dots).properties(width=380, height=380, title=title, autosize=PAD)


def _ink(dark: object) -> alt.ColorValue:
    """White text where ``dark`` (a Vega expression on the datum) holds, black elsewhere.

    A channel object, not the dict ``alt.when(...)`` gives (see the module docstring)."""
    return alt.ColorValue(**alt.when(dark).then(alt.value("white")).otherwise(alt.value("black")))


def _with_missing(base: alt.Chart, color: alt.Color, tooltip: list) -> alt.LayerChart:
    """Grey cells where the value is missing, under the coloured cells of the values present.

    Vega-Lite drops marks whose continuous colour is null, so a missing value would otherwise
    leave a blank (white) cell, indistinguishable from the background. The grey layer holds the
    missing cells only: a grey cell under every coloured one was hidden by it, and doubled what
    the browser computes and draws for a chart (a filter change redraws every cell).
    """
    field = json.dumps(color.to_dict()["field"])
    missing = base.mark_rect(color=MISSING_COLOR).encode(tooltip=tooltip).transform_filter(
        f"!isValid(datum[{field}]) || !isFinite(datum[{field}])")
    present = base.mark_rect().encode(color=color, tooltip=tooltip)
    return missing + present


def _natural(label: str) -> tuple:
    """Sort key putting numeric dataset ids in numeric order, then the others."""
    text = str(label)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def counts_bars(counts: pd.DataFrame, *, x: str, color: str, value: str = "results",
                title: str = "") -> alt.Chart:
    """Stacked bars of result counts (e.g. per model, coloured by tuning)."""
    _require(counts, [x, color, value], "counts_bars")
    chart = alt.Chart(counts).mark_bar().encode(
        x=alt.X(f"{x}:N", title=x, axis=alt.Axis(labelAngle=0)),
        y=alt.Y(f"{value}:Q", title=value),
        color=alt.Color(f"{color}:N", title=color),
        tooltip=[alt.Tooltip(f"{x}:N"), alt.Tooltip(f"{color}:N"), alt.Tooltip(f"{value}:Q", format=",")],
    )
    return chart.properties(width=360, height=220, title=title, autosize=FIT_X)


def rank_intervals_chart(intervals: pd.DataFrame, *, title: str = "") -> alt.Chart:
    """Point (consensus rank) and bar (bootstrap interval) per encoder, best at the top.

    Parameters
    ----------
    intervals : pandas.DataFrame
        Columns ``encoder``, ``rank``, ``low``, ``high``.
    """
    _require(intervals, ["encoder", "rank", "low", "high"], "rank_intervals_chart")
    data = intervals.sort_values(["rank", "low", "encoder"]).reset_index(drop=True)
    order = data["encoder"].tolist()
    y = alt.Y("encoder:N", sort=order, title=None, axis=_LABEL_AXIS_Y)
    rule = alt.Chart(data).mark_rule(strokeWidth=2, color="#4292c6").encode(
        y=y, x=alt.X("low:Q", title="consensus rank (1 = best)", scale=alt.Scale(zero=False)),
        x2=alt.X2("high"),
        tooltip=[alt.Tooltip("encoder:N"), alt.Tooltip("rank:Q"), alt.Tooltip("low:Q", title="95% low"),
                 alt.Tooltip("high:Q", title="95% high")],
    )
    point = alt.Chart(data).mark_point(filled=True, color=HIGHLIGHT, size=40).encode(
        y=y, x=alt.X("rank:Q"), tooltip=[alt.Tooltip("encoder:N"), alt.Tooltip("rank:Q")],
    )
    return (rule + point).properties(width=420, height=_height(len(order)), title=title,
                                    autosize=FIT_X)


#: Colours of line series (e.g. one per strategy): each has at least 3:1 contrast (WCAG for
#: graphics) on white and on Streamlit's dark background. Streamlit's default theme gives the
#: second series a pale blue (#83c9ff, 1.8:1 on white), so series charts set their palette.
SERIES_COLORS: tuple[str, ...] = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#c2185b",
                                  "#757575", "#9a6b00", "#00796b", "#6a6db8", "#e65100")


#: the y range of a replicability panel: a Jaccard index lies in [0, 1]; Spearman's rho can be
#: negative, its axis starts at -0.2 (or lower, where a band reaches lower)
SIMILARITY_DOMAINS = {"J": (0.0, 1.0), "Jaccard": (0.0, 1.0)}


def replicability_chart(data: pd.DataFrame, *, x: str = "sample_size", y: str = "mean",
                        low: str = "low", high: str = "high", measure: str = "measure",
                        color: str | None = None, title: str = "") -> alt.HConcatChart:
    """Mean similarity against sample size with a shaded 95% band, one panel per measure.

    Each panel has its measure's range (:data:`SIMILARITY_DOMAINS`): a Jaccard index's axis runs
    from 0 to 1, Spearman's rho's from -0.2 (lower where its band reaches lower) to 1.

    Parameters
    ----------
    data : pandas.DataFrame
        Long: ``x``, ``y``, ``low``, ``high``, ``measure`` (e.g. "rho", "J") and optionally
        ``color`` (the series, e.g. the strategy).
    """
    columns = [x, y, low, high, measure] + ([color] if color else [])
    _require(data, columns, "replicability_chart")
    # The legend (of bands and lines) draws full-colour strokes: by default it takes the bands'
    # 25 % opacity, and its swatches would be paler than the lines they name.
    legend = alt.Legend(symbolType="stroke", symbolStrokeWidth=3, symbolOpacity=1, titleLimit=300)
    enc_color = {"color": alt.Color(f"{color}:N", title=color, legend=legend,
                                    scale=alt.Scale(range=list(SERIES_COLORS)))} if color else {}
    panels = []
    for name in dict.fromkeys(data[measure].astype(str)):
        part = data[data[measure].astype(str) == name]
        lowest = float(np.nanmin(part[low].to_numpy(dtype=float))) if len(part) else 0.0
        # "J-replicability" is a Jaccard index too
        domain = (SIMILARITY_DOMAINS.get(name.split("-")[0])
                  or (min(-0.2, float(np.floor(lowest * 10) / 10)), 1.0))
        base = alt.Chart(part).encode(x=alt.X(f"{x}:Q", title="datasets per sample"), **enc_color)
        band = base.mark_area(opacity=0.25).encode(
            y=alt.Y(f"{low}:Q", title="mean similarity", scale=alt.Scale(domain=list(domain))),
            y2=alt.Y2(high),
        )
        line = base.mark_line(point=True).encode(
            y=alt.Y(f"{y}:Q"),
            tooltip=[alt.Tooltip(f"{x}:Q"), alt.Tooltip(f"{y}:Q", format=".3f"),
                     alt.Tooltip(f"{low}:Q", format=".3f"), alt.Tooltip(f"{high}:Q", format=".3f")]
            + ([alt.Tooltip(f"{color}:N")] if color else []),
        )
        panels.append((band + line).properties(width=320, height=240, title=name))
    return alt.hconcat(*panels).properties(title=title, autosize=PAD)


def cd_cliques(mean_ranks: pd.Series, significant: set[frozenset]) -> list[tuple[int, int]]:
    """Maximal runs of encoders (by mean rank) whose pairs are all not significantly different.

    Parameters
    ----------
    mean_ranks : pandas.Series
        Encoder -> mean rank.
    significant : set of frozenset
        Pairs ``frozenset({a, b})`` that differ significantly.

    Returns
    -------
    list of (int, int)
        Index intervals ``[start, end]`` (inclusive, ``end > start``) into the encoders sorted by
        mean rank; none is contained in another.
    """
    names = mean_ranks.sort_values(kind="stable").index.tolist()
    cliques: list[tuple[int, int]] = []
    furthest = -1
    for start in range(len(names)):
        end = start
        while end + 1 < len(names) and all(
            frozenset((names[i], names[end + 1])) not in significant for i in range(start, end + 1)
        ):
            end += 1
        if end > start and end > furthest:
            cliques.append((start, end))
            furthest = end
    return cliques


CD_ROW = -1.9  # y of the critical-difference bar in cd_diagram (the rank axis is at 0)

def cd_diagram(mean_ranks: pd.Series, cd: float, significant: set[frozenset] | Sequence, *,
               title: str = "", subtitle: str | Sequence[str] | None = None,
               highlight: Sequence[str] = (), control: str | None = None) -> alt.LayerChart:
    """Critical-difference diagram (Demsar 2006, Fig. 1) of a Friedman-Nemenyi analysis.

    The rank axis runs best (1) to worst; each encoder hangs from its mean rank, the better half
    labelled on the left, the other half on the right; thick bars join groups of encoders whose
    mean ranks are not significantly different; the bar above the axis has the length of the
    critical difference.

    Every text (tick labels, encoder labels, the CD label, the lines under the diagram) is axis
    text, which the app's theme colours (light or dark); lines are :data:`LINE_GREY`, readable on
    both.

    Parameters
    ----------
    mean_ranks : pandas.Series
        Encoder -> mean (Friedman) rank.
    cd : float
        Critical difference (NaN: no bar drawn).
    significant : iterable of pairs
        Encoder pairs that differ significantly.
    title : str
        Chart title.
    subtitle : str or sequence of str, optional
        Lines under the diagram, e.g. the test, alpha, N and how incomplete blocks were handled
        (so that an exported figure states them).
    highlight : sequence of str, optional
        Encoders drawn in :data:`HIGHLIGHT` with a bold label (e.g. a new encoder among the 32).
    control : str, optional
        Comparison with a control (Demsar 2006, Fig. 2): ``cd`` is then the control test's
        critical difference (Bonferroni-Dunn), the control is highlighted, and instead of the
        groups one bar spans ``control's mean rank +- cd``: the encoders whose mean rank lies
        outside it differ significantly from the control (``significant`` is not drawn).
    """
    if not isinstance(mean_ranks, pd.Series) or mean_ranks.empty:
        raise ValueError("cd_diagram needs a non-empty Series of mean ranks per encoder")
    sig = {frozenset(map(str, pair)) for pair in significant}
    marked = {str(h) for h in highlight}
    if control is not None:
        if str(control) not in set(mean_ranks.index.map(str)):
            raise ValueError(f"cd_diagram: control {control!r} is not among the encoders: got "
                             f"{sorted(mean_ranks.index.map(str))!r}")
        marked.add(str(control))
    ranks = mean_ranks.astype(float).copy()
    ranks.index = ranks.index.map(str)
    ranks = ranks.sort_values(kind="stable")
    names = ranks.index.tolist()
    k = len(names)
    # The axis spans the observed mean ranks (whole numbers around them), not 1..k: mean ranks
    # cluster, and zooming keeps the hanging lines apart. It always fits the CD bar.
    lo = float(max(1.0, np.floor(ranks.min())))
    hi = float(max(np.ceil(ranks.max()), lo + 1.0))
    has_cd = cd is not None and np.isfinite(cd) and cd > 0
    if has_cd:
        hi = float(max(hi, np.ceil(lo + cd)))
    cliques = cd_cliques(ranks, sig) if control is None else []
    clique_step = 0.35
    label_top = 1.0 + clique_step * (max(len(cliques), control is not None) + 1)
    half = (k + 1) // 2
    # The leader lines end at the plot's left and right edges, where two y axes write the labels.
    left_edge = lo - 0.05 * (hi - lo) - 0.3
    right_edge = hi + 0.05 * (hi - lo) + 0.3

    lines, labels = [], []
    for i, name in enumerate(names):
        left = i < half
        level = round(label_top + (i if left else k - 1 - i), 6)
        edge = left_edge if left else right_edge
        r = float(ranks.iloc[i])
        for order, (x, y) in enumerate([(r, 0.0), (r, level), (edge, level)]):
            lines.append({"encoder": name, "x": x, "y": y, "order": order, "new": name in marked})
        labels.append({"encoder": name, "x": edge, "y": level, "side": "left" if left else "right",
                       "text": f"{name} ({r:.2f})", "mean_rank": r, "new": name in marked})
    lines_df, labels_df = pd.DataFrame(lines), pd.DataFrame(labels)
    height = int(22 * (label_top + half + 1 - (CD_ROW + 1.6)))
    y_low, y_high = CD_ROW - 0.6, label_top + half

    def pixel(y_value: float) -> float:  # y scale reversed: y_low at the top of the plot
        return (y_value - y_low) / (y_high - y_low) * height

    scale_x = alt.Scale(domain=[left_edge, right_edge], nice=False, zero=False)
    # y < 0 is above the axis: tick labels, then the CD bar and its label on a row of their own.
    scale_y = alt.Scale(domain=[y_low, y_high], reverse=True, nice=False, zero=False)
    x = alt.X("x:Q", scale=scale_x, axis=None)
    y = alt.Y("y:Q", scale=scale_y, axis=None)
    # Axes: the theme's label colour, none of Streamlit's defaults that drop or cut labels.
    common = dict(title=None, grid=False, domain=False, labelOverlap=False, labelFlush=False,
                  labelBound=False, labelLimit=400)
    ticks = [float(v) for v in np.arange(lo, hi + 0.5, 1.0)]
    rank_axis = alt.Axis(orient="top", offset=-pixel(0.0), values=ticks, format="~g", ticks=True,
                         tickSize=6, tickColor=LINE_GREY, tickWidth=1, labelPadding=2, labelFontSize=10,
                         **common)
    axis_line = alt.Chart(pd.DataFrame({"x": [lo], "x2": [hi], "y": [0.0]})).mark_rule(
        color=LINE_GREY).encode(x=alt.X("x:Q", scale=scale_x, axis=rank_axis), x2=alt.X2("x2"), y=y)
    plain, new = lines_df[~lines_df["new"]], lines_df[lines_df["new"]]
    layers = [axis_line]
    for part, colour, width in ((plain, LINE_GREY, 1), (new, HIGHLIGHT, 2)):
        if len(part):
            layers.append(alt.Chart(part).mark_line(color=colour, strokeWidth=width).encode(
                x=x, y=y, detail=alt.Detail("encoder:N"), order=alt.Order("order:Q")))
    for part, colour in ((labels_df[~labels_df["new"]], LINE_GREY), (labels_df[labels_df["new"]], HIGHLIGHT)):
        if len(part):
            layers.append(alt.Chart(part.assign(y=0.0)).mark_point(filled=True, size=25, color=colour).encode(
                x=alt.X("mean_rank:Q", scale=scale_x, axis=None), y=y,
                tooltip=[alt.Tooltip("encoder:N"), alt.Tooltip("mean_rank:Q", format=".3f", title="mean rank")]))
    for side in ("left", "right"):
        part = labels_df[labels_df["side"] == side]
        levels, texts = part["y"].tolist(), part["text"].tolist()
        bold = [level for level, n in zip(levels, part["new"]) if n]
        weight = ({"condition": {"test": f"indexof({[float(b) for b in bold]!r}, datum.value) >= 0",
                                 "value": "bold"}, "value": "normal"} if bold else "normal")
        axis = alt.Axis(orient=side, values=levels, labelExpr=_label_expr(levels, texts), ticks=False,
                        labelPadding=4, labelFontSize=11, labelFontWeight=weight, **common)
        layers.append(alt.Chart(part).mark_point(opacity=0, size=1).encode(
            x=x, y=alt.Y("y:Q", scale=scale_y, axis=axis)))
    if cliques:
        bars = pd.DataFrame([
            {"x": float(ranks.iloc[a]) - 0.05, "x2": float(ranks.iloc[b]) + 0.05,
             "y": 0.4 + clique_step * j,
             "group": ", ".join(names[a:b + 1])}
            for j, (a, b) in enumerate(cliques)
        ])
        layers.append(alt.Chart(bars).mark_rule(strokeWidth=4, color="#d62728").encode(
            x=x, x2=alt.X2("x2"), y=y, tooltip=alt.Tooltip("group:N", title="not significantly different")))
    if control is not None and has_cd:
        # Demsar's Fig. 2: the interval of mean ranks within CD of the control's (cut to the axis).
        centre = float(ranks[str(control)])
        reach = pd.DataFrame({"x": [max(lo, centre - float(cd))], "x2": [min(hi, centre + float(cd))],
                              "y": [0.4], "group": [f"within CD = {float(cd):.2f} of {control}: not "
                                                    f"significantly different from it"]})
        layers.append(alt.Chart(reach).mark_rule(strokeWidth=4, color=HIGHLIGHT).encode(
            x=x, x2=alt.X2("x2"), y=y, tooltip=alt.Tooltip("group:N", title="control")))
    if has_cd:
        cd_bar = pd.DataFrame({"x": [lo], "x2": [lo + float(cd)], "y": [CD_ROW]})
        label_axis = alt.Axis(orient="top", offset=-pixel(CD_ROW), values=[lo + float(cd)],
                              labelExpr=f"'CD = {float(cd):.2f}'", ticks=False, labelAlign="left",
                              labelBaseline="middle", labelPadding=0, labelOffset=6, labelFontSize=11,
                              **common)
        layers.append(alt.Chart(cd_bar).mark_rule(strokeWidth=2, color=LINE_GREY).encode(
            x=alt.X("x:Q", scale=scale_x, axis=None), x2=alt.X2("x2"), y=y))
        layers.append(alt.Chart(cd_bar).mark_point(opacity=0, size=1).encode(
            x=alt.X("x2:Q", scale=scale_x, axis=label_axis), y=y))
    if subtitle:
        # Under the diagram as the title of an axis without ticks: Streamlit colours axis titles
        # by the theme, not a chart's subtitle (black on the dark theme's near-black).
        lines_below = [subtitle] if isinstance(subtitle, str) else [str(line) for line in subtitle]
        caption = alt.Axis(orient="bottom", values=[], title=lines_below, titleAnchor="start",
                           titleAlign="left", titleFontWeight="normal", titleFontSize=11, titlePadding=10,
                           labels=False, ticks=False, domain=False, grid=False)
        layers.append(alt.Chart(cd_bar if has_cd else lines_df.head(1)).mark_point(opacity=0, size=1).encode(
            x=alt.X("x:Q", scale=scale_x, axis=caption), y=y))
    return (alt.layer(*layers).resolve_axis(x="independent", y="independent")
            .properties(width=520, height=height, title=alt.TitleParams(text=title, anchor="start"),
                        autosize=PAD).configure_view(stroke=None))


#: Colours of the three outcomes of a Bayesian comparison (A better, equivalent, B better):
#: 3:1 contrast on white and on Streamlit's dark background, as :data:`SERIES_COLORS`.
OUTCOME_COLORS: tuple[str, str, str] = ("#1f77b4", "#757575", "#d62728")
_SQRT3_2 = float(np.sqrt(3.0) / 2.0)


def _eq(p: float) -> str:
    """``"= 0.270"``, ``"< 0.001"``: a probability after its P."""
    text = _probability_text(p)
    return text if text[0] in "<>" else f"= {text}"


def _probability_text(p: float) -> str:
    """A probability to three decimals, "< 0.001" / "> 0.999" rather than a rounded 0 or 1."""
    if 0.0 < p < 0.0005:
        return "< 0.001"
    if 0.9995 < p < 1.0:
        return "> 0.999"
    return f"{p:.3f}"


def posterior_simplex(samples: pd.DataFrame, *, encoder_a: str, encoder_b: str,
                      probabilities: Sequence[float], rope: float, title: str = "",
                      caption: str | Sequence[str] | None = None) -> alt.LayerChart:
    """Posterior draws of a Bayesian comparison of two encoders on the simplex (Benavoli et al. 2017, Fig. 6).

    Each draw ``(theta_A, theta_rope, theta_B)`` is a point of the triangle in its ternary
    projection to 2-D: ``A better`` at the bottom left, ``B better`` at the bottom right,
    ``equivalent`` at the top, ``x = theta_B + theta_rope / 2`` and ``y = sqrt(3) / 2 theta_rope``.
    Dashed lines from the centre to the edges' midpoints bound the three regions in which one
    outcome is the most probable; a point is coloured by its region (:data:`OUTCOME_COLORS`).
    The vertex labels (axis text, coloured by the app's theme) carry the posterior probabilities.

    Parameters
    ----------
    samples : pandas.DataFrame
        Columns ``theta_a, theta_rope, theta_b, outcome`` (e.g.
        :meth:`encbench.stats.BayesianResult.sample_frame`; a few thousand draws are plenty).
    encoder_a, encoder_b : str
        Names for the vertex labels.
    probabilities : sequence of three floats
        P(A better), P(equivalent), P(B better), written on the vertices.
    rope : float
        The ROPE half-width, named on the top vertex.
    title : str, optional
    caption : str or sequence of str, optional
        Lines under the triangle (what the test assumes), so that an export states them.
    """
    _require(samples, ["theta_a", "theta_rope", "theta_b", "outcome"], "posterior_simplex")
    if len(probabilities) != 3:
        raise ValueError(f"posterior_simplex needs three probabilities: got {list(probabilities)!r}")
    p_a, p_rope, p_b = (float(p) for p in probabilities)
    outcomes = ["A better", "equivalent", "B better"]
    points = pd.DataFrame({
        "x": samples["theta_b"].to_numpy(float) + 0.5 * samples["theta_rope"].to_numpy(float),
        "y": _SQRT3_2 * samples["theta_rope"].to_numpy(float),
        "outcome": samples["outcome"].astype(str).to_numpy(),
        "theta_a": samples["theta_a"].to_numpy(float), "theta_rope": samples["theta_rope"].to_numpy(float),
        "theta_b": samples["theta_b"].to_numpy(float)})
    scale_x = alt.Scale(domain=[0.0, 1.0], nice=False, zero=False)
    scale_y = alt.Scale(domain=[0.0, _SQRT3_2], nice=False, zero=False)
    y = alt.Y("y:Q", scale=scale_y, axis=None)
    common = dict(grid=False, domain=False, ticks=False, labelOverlap=False, labelBound=False,
                  labelLimit=400, labelFontSize=11, labelPadding=6)
    corners = [0.0, 1.0]
    # The caption goes under the triangle as the bottom axis's title: Streamlit colours axis
    # titles by the theme (a subtitle would stay black on the dark theme).
    lines_below = ([caption] if isinstance(caption, str) else [str(c) for c in caption]) if caption else None
    bottom = alt.Axis(orient="bottom", values=corners, labelFlush=True, labelExpr=_label_expr(
        corners, [f"{encoder_a} better: P {_eq(p_a)}", f"{encoder_b} better: P {_eq(p_b)}"]),
        title=lines_below, titleAnchor="start", titleAlign="left", titleFontWeight="normal", titleFontSize=11,
        titlePadding=10, **common)
    top = alt.Axis(orient="top", values=[0.5], title=None, labelExpr=_label_expr(
        [0.5], [f"equivalent (|difference| <= {rope:g}): P {_eq(p_rope)}"]), **common)
    outline = pd.DataFrame({"x": [0.0, 1.0, 0.5, 0.0], "y": [0.0, 0.0, _SQRT3_2, 0.0], "order": range(4)})
    centre = (0.5, _SQRT3_2 / 3.0)
    borders = pd.DataFrame([{"x": centre[0], "y": centre[1], "x2": mx, "y2": my}
                            for mx, my in ((0.5, 0.0), (0.25, _SQRT3_2 / 2.0), (0.75, _SQRT3_2 / 2.0))])
    layers = [
        alt.Chart(outline).mark_line(color=LINE_GREY, strokeWidth=1).encode(
            x=alt.X("x:Q", scale=scale_x, axis=bottom), y=y, order=alt.Order("order:Q")),
        alt.Chart(outline.head(1).assign(x=0.5)).mark_point(opacity=0, size=1).encode(
            x=alt.X("x:Q", scale=scale_x, axis=top), y=y),
        alt.Chart(borders).mark_rule(color=LINE_GREY, strokeDash=[4, 3]).encode(
            x=alt.X("x:Q", scale=scale_x, axis=None), y=y, x2=alt.X2("x2"), y2=alt.Y2("y2")),
        alt.Chart(points).mark_circle(size=10, opacity=0.35).encode(
            x=alt.X("x:Q", scale=scale_x, axis=None), y=y,
            color=alt.Color("outcome:N", title="most probable",
                            scale=alt.Scale(domain=outcomes, range=list(OUTCOME_COLORS)),
                            legend=alt.Legend(orient="right", symbolOpacity=1.0, labelExpr=_label_expr(
                                outcomes, [f"{encoder_a} better", "equivalent", f"{encoder_b} better"]))),
            tooltip=[alt.Tooltip("theta_a:Q", format=".3f", title=f"P({encoder_a} better)"),
                     alt.Tooltip("theta_rope:Q", format=".3f", title="P(equivalent)"),
                     alt.Tooltip("theta_b:Q", format=".3f", title=f"P({encoder_b} better)")]),
    ]
    width = 420
    return (alt.layer(*layers).resolve_axis(x="independent")
            .properties(width=width, height=int(round(width * _SQRT3_2)),
                        title=alt.TitleParams(text=title, anchor="start"), autosize=PAD)
            .configure_view(stroke=None))


def elo_chart(table: pd.DataFrame, *, reference: str, title: str = "",
              caption: str | Sequence[str] | None = None) -> alt.LayerChart:
    """Elo rating (point) and its bootstrap interval (bar) per encoder, best at the top; a dashed
    line at 1000 marks the ``reference`` encoder's rating.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``encoder, elo, low, high`` (and optionally ``win_rate``), e.g.
        :attr:`encbench.stats.EloResult.table`.
    reference : str
        The encoder rated 1000 (named on the axis).
    caption : str or sequence of str, optional
        Lines under the chart (what the ratings assume), so that an export states them.
    """
    _require(table, ["encoder", "elo", "low", "high"], "elo_chart")
    data = table.sort_values(["elo", "encoder"], ascending=[False, True]).reset_index(drop=True)
    data["encoder"] = data["encoder"].astype(str)
    order = data["encoder"].tolist()
    lines_below = ([caption] if isinstance(caption, str) else [str(c) for c in caption]) if caption else None
    x_axis = alt.Axis(title=[f"Elo ({reference} = 1000)"] + (lines_below or []), titleAnchor="start",
                      titleAlign="left", titleFontWeight="normal")
    y = alt.Y("encoder:N", sort=order, title=None, axis=_LABEL_AXIS_Y)
    scale = alt.Scale(zero=False)
    tooltip = [alt.Tooltip("encoder:N"), alt.Tooltip("elo:Q", format=".0f", title="Elo"),
               alt.Tooltip("low:Q", format=".0f", title="low"), alt.Tooltip("high:Q", format=".0f", title="high")]
    if "win_rate" in data.columns:
        tooltip.append(alt.Tooltip("win_rate:Q", format=".3f", title="win rate"))
    rule = alt.Chart(data).mark_rule(strokeWidth=2, color="#4292c6").encode(
        y=y, x=alt.X("low:Q", scale=scale, axis=x_axis), x2=alt.X2("high"), tooltip=tooltip)
    point = alt.Chart(data).mark_point(filled=True, color=HIGHLIGHT, size=40).encode(
        y=y, x=alt.X("elo:Q", scale=scale), tooltip=tooltip)
    base = alt.Chart(pd.DataFrame({"elo": [1000.0]})).mark_rule(color=LINE_GREY, strokeDash=[4, 3]).encode(
        x=alt.X("elo:Q", scale=scale))
    return (base + rule + point).properties(width=420, height=_height(len(order)), title=title, autosize=FIT_X)


def win_rate_heatmap(matrix: pd.DataFrame, *, title: str = "", max_labels: int = 20) -> alt.LayerChart:
    """Heatmap of a pairwise win-rate matrix: the cell (row, column) is the share of their shared
    datasets on which the row encoder beats the column one (ties half); 0.5 is white.

    Parameters
    ----------
    matrix : pandas.DataFrame
        Square, encoders on both axes in display order (e.g. best Elo first), values in [0, 1],
        NaN where a pair never meets (and on the diagonal): drawn as missing.
    max_labels : int, default 20
        Cells carry their value as text up to this many encoders.
    """
    if not isinstance(matrix, pd.DataFrame):
        raise ValueError(f"win_rate_heatmap needs a DataFrame: got {type(matrix).__name__!r}")
    rows = [str(i) for i in matrix.index]
    columns = [str(c) for c in matrix.columns]
    long = pd.DataFrame({"row": np.repeat(rows, len(columns)), "column": np.tile(columns, len(rows)),
                         "value": matrix.to_numpy(dtype=float).reshape(-1)})
    long["label"] = long["value"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    base = alt.Chart(long).encode(
        x=alt.X("column:N", sort=columns, title="against", axis=_LABEL_AXIS_X),
        y=alt.Y("row:N", sort=rows, title="encoder", axis=_LABEL_AXIS_Y))
    tooltip = [alt.Tooltip("row:N", title="encoder"), alt.Tooltip("column:N", title="against"),
               alt.Tooltip("label:N", title="win rate")]
    chart = _with_missing(base, alt.Color("value:Q", title="win rate", legend=alt.Legend(titleLimit=300),
                                          scale=alt.Scale(scheme="redblue", domain=[0.0, 1.0], domainMid=0.5)),
                          tooltip)
    if len(rows) <= max_labels:
        chart = chart + base.mark_text(fontSize=9).encode(
            text=alt.Text("label:N"), color=_ink((alt.datum.value > 0.8) | (alt.datum.value < 0.2)))
    side = max(160, min(560, 26 * len(columns)))
    return chart.properties(width=side, height=side, title=title, autosize=PAD)


def run_scores_chart(per_setting: pd.DataFrame, *, order: Sequence[str] | None = None,
                     best: Sequence[str] = (), title: str = "", columns: int = 2) -> alt.FacetChart:
    """A run's scores with their fold spread: one panel per setting, mean +- one standard
    deviation over folds per encoder, encoders best first.

    Parameters
    ----------
    per_setting : pandas.DataFrame
        Columns ``setting`` (the panel's title), ``encoder``, ``score`` (mean over folds),
        ``sd`` (over folds; NaN draws the point alone), ``n_folds``
        (:attr:`encbench.views.run_result.RunAnswer.per_setting` with a ``setting`` label).
    order : sequence of str, optional
        Encoders top to bottom (the pooled ranking); default: as they come.
    best : sequence of str
        Encoders drawn in :data:`HIGHLIGHT` (those that cannot be told from the winner).
    columns : int
        Panels per row. Each panel has its own score axis: settings mix metrics.
    """
    _require(per_setting, ["setting", "encoder", "score", "sd", "n_folds"], "run_scores_chart")
    data = per_setting.assign(low=per_setting["score"] - per_setting["sd"].fillna(0.0),
                              high=per_setting["score"] + per_setting["sd"].fillna(0.0),
                              group=np.where(per_setting["encoder"].isin(list(best)), "best", "other"))
    order = list(order) if order is not None else list(dict.fromkeys(data["encoder"]))
    y = alt.Y("encoder:N", sort=order, title=None, axis=_LABEL_AXIS_Y)
    color = alt.Color("group:N", title=None, legend=None,
                      scale=alt.Scale(domain=["best", "other"], range=[HIGHLIGHT, LINE_GREY]))
    tooltip = [alt.Tooltip("setting:N"), alt.Tooltip("encoder:N"), alt.Tooltip("score:Q", format=".4f"),
               alt.Tooltip("sd:Q", title="fold sd", format=".4f"), alt.Tooltip("n_folds:Q", title="folds")]
    rule = alt.Chart().mark_rule(strokeWidth=2).encode(
        y=y, x=alt.X("low:Q", title="score, mean +- sd over folds", scale=alt.Scale(zero=False)),
        x2=alt.X2("high"), color=color, tooltip=tooltip)
    point = alt.Chart().mark_point(filled=True, size=40).encode(y=y, x=alt.X("score:Q"), color=color,
                                                                 tooltip=tooltip)
    panels = list(dict.fromkeys(data["setting"]))
    return alt.layer(rule, point, data=data).properties(width=260, height=_height(len(order), 60)).facet(
        facet=alt.Facet("setting:N", sort=panels, title=None), columns=columns, title=title,
    ).resolve_scale(x="independent")
