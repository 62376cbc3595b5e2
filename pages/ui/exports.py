"""Tables and charts with their downloads (CSV, Parquet, LaTeX; PNG, SVG), each export carrying
its provenance.

Each table or chart has one "Download" menu (a popover); its buttons are built only while it is
open, in a fragment of its own, so a page's rerun sends one element per item instead of four
to six buttons (a filter change drew 16 to 20 of them on Sensitivity and the Overview), and
opening a menu reruns the menu alone."""
from __future__ import annotations

import logging
from collections.abc import Callable

import pandas as pd
import streamlit as st

from encbench import export
from pages.ui.store import snapshot_label

log = logging.getLogger(__name__)


@st.fragment
def _download_row(key: str, items: list[tuple[str, str, Callable[[], bytes], str]],
                  label: str = "Download") -> None:
    """The Download menu ``exports-{key}``, labelled with what it downloads (``"Download
    table"``): a button ``dl-{key}-{format}`` per item, built while the menu is open (the bytes
    themselves only when a button is clicked)."""
    menu = st.popover(label, key=f"exports-{key}", on_change="rerun", type="tertiary",
                      icon=":material/download:")
    with menu:
        if menu.open:
            for label, file_name, make, mime in items:
                st.download_button(label, data=make, file_name=file_name, mime=mime,
                                   key=f"dl-{key}-{label.lower()}", on_click="ignore",
                                   type="tertiary", icon=":material/download:")


def table_exports(frame: pd.DataFrame, item: str, provenance: export.Provenance, *,
                  best: dict[str, str] | None = None, latex: dict | None = None) -> None:
    """CSV / Parquet / LaTeX / provenance downloads of ``frame`` (menu ``exports-table-{item}``,
    each file generated when clicked).

    The CSV is plain; its provenance is the JSON sidecar beside it (``<name>.provenance.json``).
    ``best`` (column -> ``"min"``/``"max"``) sets each column's best value in bold in LaTeX;
    ``latex`` holds further keywords of :func:`encbench.export.table_to_latex` (``best_within``,
    ``drop``, ``decimals``)."""
    _download_row(f"table-{item}", _table_items(frame, item, provenance, best=best, latex=latex),
                  "Download table")


def _table_items(frame: pd.DataFrame, item: str, provenance: export.Provenance, *,
                 best: dict[str, str] | None = None, latex: dict | None = None) -> list:
    """The buttons of :func:`table_exports`: (label, file name, bytes when clicked, MIME type)."""
    return [
        (export.FORMAT_LABELS[fmt],
         provenance.file_name(item, fmt),
         (lambda fmt=fmt: export.table_bytes(frame, fmt, provenance, best=best, item=item,
                                             **(latex or {}) if fmt == "latex" else {})),
         export.MIME[fmt])
        for fmt in export.TABLE_FORMATS
    ]


def chart_exports(chart, item: str, provenance: export.Provenance, *,
                  table: tuple[pd.DataFrame, str] | None = None) -> None:
    """PNG / SVG downloads of an Altair chart or a Vega-Lite spec (menu ``exports-chart-{item}``,
    rendered by vl-convert when clicked); with ``table=(frame, table_item)``, the same menu
    also holds the :func:`table_exports` downloads of the numbers the chart draws (files named
    after ``table_item``)."""
    _download_row(f"chart-{item}", [
        (export.FORMAT_LABELS[fmt], provenance.file_name(item, fmt),
         (lambda fmt=fmt: export.chart_bytes(chart, fmt, provenance)), export.MIME[fmt])
        for fmt in export.CHART_FORMATS
    ] + (_table_items(table[0], table[1], provenance) if table is not None else []),
        "Download chart" if table is None else "Download chart and its data")


def show_table(frame: pd.DataFrame, item: str, provenance: export.Provenance, *,
               best: dict[str, str] | None = None, latex: dict | None = None,
               shown: pd.DataFrame | None = None, select: bool = False, **kwargs) -> pd.Series | None:
    """A dataframe with its Download menu underneath (``best``, ``latex``: see :func:`table_exports`).

    ``shown`` is drawn instead of ``frame`` (e.g. :func:`dash_missing`'s copy); the exports are
    always of ``frame``. ``select=True``: one row can be selected (widget ``select-{item}``) and
    its row of ``frame`` is returned (None while none is)."""
    if not select:
        st.dataframe(frame if shown is None else shown, hide_index=True, width="stretch", **kwargs)
        table_exports(frame, item, provenance, best=best, latex=latex)
        return None
    state = st.dataframe(frame if shown is None else shown, hide_index=True, width="stretch",
                         key=f"select-{item}", on_select="rerun", selection_mode="single-row", **kwargs)
    table_exports(frame, item, provenance, best=best, latex=latex)
    rows = list(getattr(getattr(state, "selection", None), "rows", None) or [])
    return frame.iloc[rows[0]] if rows and rows[0] < len(frame) else None


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


#: the style of a chart's sideways-scrolling row (ITEM: the chart's item; WIDE: the screen width
#: from which the chart fits and its hint is hidden): a scroll bar drawn at all times
_SCROLL_STYLE = """<style>
.st-key-scroll-ITEM { overflow-x: scroll; padding-bottom: 2px; }
.st-key-scroll-ITEM::-webkit-scrollbar { height: 10px; }
.st-key-scroll-ITEM::-webkit-scrollbar-track { background: rgba(140, 140, 140, 0.15); border-radius: 5px; }
.st-key-scroll-ITEM::-webkit-scrollbar-thumb { background: #8c8c8c; border-radius: 5px; }
@media (min-width: WIDEpx) { .st-key-scroll-hint-ITEM { display: none; } }
</style>"""


def _spec_width(spec: dict) -> int:
    """The pixel width a Vega-Lite spec asks for (its own, or its widest part's), 0 if none."""
    widths = [spec.get("width")] + [_spec_width(part) for key in ("layer", "hconcat", "vconcat")
                                    for part in spec.get(key, [])]
    return max((int(w) for w in widths if isinstance(w, (int, float))), default=0)


def show_chart(chart, item: str, provenance: export.Provenance, *, width: str = "stretch",
               scroll: bool = False, table: tuple[pd.DataFrame, str] | None = None,
               select: str | None = None) -> list[dict] | None:
    """An Altair chart, or its Vega-Lite spec (a dict, e.g. cached), with its Download menu underneath.

    ``scroll=True`` (for a chart of fixed width, ``width="content"``, such as the CD diagram):
    on a screen narrower than the chart, the chart scrolls sideways inside its own row instead of
    widening the page. ``table=(frame, table_item)``: the chart's numbers as a table, downloaded
    from the same menu (see :func:`chart_exports`): one menu instead of two under a chart, each
    redrawn on every rerun. ``select``: the name of a selection the spec defines (a clicked
    cell); the chart reruns the page when it changes (widget ``select-{item}``) and what it
    selects is returned (a list of field values, empty while nothing is)."""
    # The spec without Altair's JSON-schema validation (st.altair_chart validates on every rerun,
    # about half of a chart's cost). Chart builders are
    # validated by tests/test_plots.py, and exports of a chart still validate when clicked.
    spec = chart if isinstance(chart, dict) else chart.to_dict(validate=False)
    if scroll:
        # A phone's browser draws no scroll bar until the row is touched, so a wide chart looked cut
        # off with nothing to say it scrolls: the row gets a scroll bar that is always drawn, and on a
        # screen narrower than the chart a line above it says so.
        st.html(_SCROLL_STYLE.replace("ITEM", item).replace("WIDE", str(_spec_width(spec) + 80)))
        with st.container(key=f"scroll-hint-{item}"):
            st.caption(":material/swipe: Wider than this screen: scroll the chart sideways.")
        with st.container(horizontal=True, wrap=False, key=f"scroll-{item}"):
            st.vega_lite_chart(spec, width=width)
    elif select:
        state = st.vega_lite_chart(spec, width=width, on_select="rerun", selection_mode=[select],
                                   key=f"select-{item}")
        chart_exports(chart, item, provenance, table=table)
        chosen = getattr(getattr(state, "selection", None), select, None) if state is not None else None
        if chosen is None and isinstance(state, dict):
            chosen = state.get("selection", {}).get(select)
        return list(chosen or [])
    else:
        st.vega_lite_chart(spec, width=width)
    chart_exports(chart, item, provenance, table=table)
    return None


def provenance(view: str, filters: dict, rows: pd.DataFrame | None, version: tuple, *,
               task: str | None = None) -> export.Provenance:
    """Provenance of an export from the filter state and the rows used; its task is ``task``
    (the view's), else the rows'."""
    return export.Provenance.from_scores(view, filters, rows, snapshot=snapshot_label(version), task=task)
