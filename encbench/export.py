"""Exports: tables to CSV/Parquet/LaTeX bytes, charts to PNG/SVG bytes, each with its provenance.

Every export carries a :class:`Provenance`: the view and filter state that produced it and where
the data came from (origins, run ids, snapshot, encbench version). It is written

- into the **file name** (view, item and a readable slug of the filter state, shortened with a
  hash of the full state when long), and
- into the file's **metadata** where the format has room for it: ``%`` comment lines heading
  LaTeX, the Parquet schema metadata key ``encbench.provenance``, a PNG ``iTXt`` chunk of the
  same key, and an SVG ``<metadata>`` element; or
- for CSV, which has none, into a **sidecar** ``<name>.provenance.json`` (format
  ``"provenance"``, :func:`table_provenance`) offered beside it: the CSV itself stays plain, so
  ``pandas.read_csv(path)`` or any spreadsheet reads it as it is.

All hold the same JSON document (:meth:`Provenance.to_json`).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import math
import re
import struct
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from xml.sax.saxutils import escape as _xml_escape

import pandas as pd

from encbench import __version__
from encbench.experiment import DEFAULT_TASK

METADATA_KEY = "encbench.provenance"
#: table formats, in the order the app offers them; "provenance" is the JSON sidecar of the others
TABLE_FORMATS: tuple[str, ...] = ("csv", "parquet", "latex", "provenance")
CHART_FORMATS: tuple[str, ...] = ("png", "svg")
MIME = {
    "csv": "text/csv",
    "parquet": "application/vnd.apache.parquet",
    "latex": "application/x-tex",
    "provenance": "application/json",
    "png": "image/png",
    "svg": "image/svg+xml",
}
EXTENSION = {"csv": "csv", "parquet": "parquet", "latex": "tex", "provenance": "provenance.json",
             "png": "png", "svg": "svg"}
#: button labels of the formats
FORMAT_LABELS = {"csv": "CSV", "parquet": "Parquet", "latex": "LaTeX", "provenance": "Provenance",
                 "png": "PNG", "svg": "SVG"}
#: what a LaTeX export needs in the preamble (also written as its first comment line)
LATEX_PREAMBLE = r"\usepackage{booktabs}"
_MAX_SLUG = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=-]+")


def _split_joined(values: Iterable[object]) -> tuple[str, ...]:
    """Distinct values, splitting the comma-joined cells made by ``one_score_per_experiment``."""
    found: set[str] = set()
    for value in values:
        if value is None or (isinstance(value, float) and value != value):
            continue
        found.update(part for part in str(value).split(",") if part)
    return tuple(sorted(found))


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


@dataclass(frozen=True)
class Provenance:
    """What produced an export: view, filter state and data provenance.

    Parameters
    ----------
    view : str
        The page or analysis (e.g. ``"consensus"``).
    filters : mapping
        The filter state (JSON-able values; lists for multi-selections, ``None`` for "all").
    origins, run_ids : tuple of str
        Where the rows behind the export came from (``scores.origin`` / ``scores.run_id``).
    snapshot : str, optional
        Identifies the database snapshot read.
    task : str, optional
        The task type the rows are of (binary, multiclass, regression; a view shows one): every
        export states it (the JSON, the header lines, the LaTeX caption; the file name when it
        is not the published study's binary).
    encbench_version : str
        Defaults to the installed version.
    created_at : str
        UTC time stamp (ISO 8601); defaults to now.
    """

    view: str
    filters: Mapping[str, object] = field(default_factory=dict)
    origins: tuple[str, ...] = ()
    run_ids: tuple[str, ...] = ()
    snapshot: str | None = None
    task: str | None = None
    encbench_version: str = __version__
    created_at: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()
    )

    @classmethod
    def from_scores(cls, view: str, filters: Mapping[str, object], scores: pd.DataFrame | None,
                    **kwargs) -> Provenance:
        """Provenance whose origins, run ids and (unless ``task`` is given) task are those of
        the ``scores`` rows used (rows without a ``task`` column are of the default task,
        binary)."""
        origins: tuple[str, ...] = ()
        run_ids: tuple[str, ...] = ()
        if scores is not None and len(scores):
            if "origin" in scores.columns:
                origins = _split_joined(scores["origin"].unique())
            if "run_id" in scores.columns:
                run_ids = _split_joined(scores["run_id"].unique())
            if kwargs.get("task") is None:
                kwargs["task"] = (",".join(_split_joined(scores["task"].dropna().unique()))
                                  if "task" in scores.columns else DEFAULT_TASK) or None
        return cls(view=view, filters=dict(filters), origins=origins, run_ids=run_ids, **kwargs)

    def with_filters(self, **extra: object) -> Provenance:
        """A copy whose filter state also holds ``extra`` (e.g. the detail a chart shows).

        ``extra`` comes first: it names what this export shows (the combination of a CD diagram),
        so it must survive when :meth:`filter_slug` shortens a long state.
        """
        rest = {k: v for k, v in self.filters.items() if k not in extra}
        return replace(self, filters={**extra, **rest})

    def as_dict(self) -> dict[str, object]:
        return {
            "tool": "encbench",
            "encbench_version": self.encbench_version,
            "view": self.view,
            "task": self.task,
            "filters": _jsonable(self.filters),
            "origins": list(self.origins),
            "run_ids": list(self.run_ids),
            "snapshot": self.snapshot,
            "created_at": self.created_at,
        }

    def to_json(self) -> str:
        """The provenance as compact ASCII JSON (what every format embeds)."""
        return json.dumps(self.as_dict(), sort_keys=True, ensure_ascii=True, separators=(",", ":"))

    def filter_slug(self) -> str:
        """A file-name-safe summary of the filter state, e.g. ``model=LogReg_scoring=AUC+F1``.

        Long states keep whole ``key=value`` parts (never a cut value such as ``alpha=0``), in
        order, as many as fit, and end with 8 hex digits of a hash of the full state, so two
        different states never share a name.
        """
        parts = []
        for key, value in self.filters.items():
            if value is None:
                shown = "all"
            elif isinstance(value, (list, tuple, set, frozenset)):
                items = sorted(map(str, value)) if isinstance(value, (set, frozenset)) else list(map(str, value))
                shown = "+".join(items) if items else "none"
            else:
                shown = str(value)
            parts.append(f"{key}={shown}")
        parts = [_UNSAFE.sub("-", p).strip("-_") for p in parts]
        slug = "_".join(p for p in parts if p)
        if len(slug) > _MAX_SLUG:
            digest = hashlib.sha256(json.dumps(_jsonable(self.filters), sort_keys=True).encode()).hexdigest()[:8]
            kept: list[str] = []
            for part in parts:
                if part and len("_".join([*kept, part])) <= _MAX_SLUG:
                    kept.append(part)
            slug = "_".join([*kept, digest])
        return slug

    def file_name(self, item: str, fmt: str) -> str:
        """``encbench_<view>_<item>_<filters>.<ext>`` for export format ``fmt``."""
        if fmt not in EXTENSION:
            raise ValueError(f"unknown export format: got {fmt!r}, expected one of {tuple(EXTENSION)!r}")
        # a binary export keeps its name (the published study's task); another task is named
        task = f"task={self.task}" if self.task and self.task != DEFAULT_TASK else ""
        pieces = ["encbench", self.view, item, task, self.filter_slug()]
        stem = "_".join(_UNSAFE.sub("-", p).strip("-_") for p in pieces if p)
        return f"{stem}.{EXTENSION[fmt]}"

    def header_lines(self) -> list[str]:
        """Human-readable lines (no comment marker) followed by the JSON document."""
        d = self.as_dict()
        lines = [f"encbench {d['encbench_version']} export: {d['view']}"]
        if self.task:
            lines.append(f"task: {self.task}")
        for key, value in self.filters.items():
            lines.append(f"filter {key}: {json.dumps(_jsonable(value), ensure_ascii=True)}")
        lines.append(f"origins: {', '.join(self.origins) or '-'}")
        lines.append(f"run_ids: {', '.join(self.run_ids) or '-'}")
        if self.snapshot:
            lines.append(f"snapshot: {self.snapshot}")
        lines.append(f"created_at: {self.created_at}")
        lines.append(f"{METADATA_KEY}: {self.to_json()}")
        return lines


def _check_frame(frame: object) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"tables export needs a pandas DataFrame: got {type(frame).__name__!r}")
    return frame


def table_to_csv(frame: pd.DataFrame, provenance: Provenance) -> bytes:
    """Plain UTF-8 CSV: a header row, then the rows (``pandas.read_csv`` reads it as it is).

    The provenance is not in the file (CSV has no place for metadata that every reader skips):
    it is in the sidecar of :func:`table_provenance`, named by
    ``provenance.file_name(item, "provenance")``.
    """
    frame = _check_frame(frame)
    return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")


def table_provenance(frame: pd.DataFrame, provenance: Provenance, *, item: str | None = None) -> bytes:
    """The JSON sidecar of a table's exports: the provenance and what the table holds.

    ``{"encbench.provenance": {...}, "table": {"columns": [...], "rows": n, "files": [...]}}``,
    where ``files`` are the names of the table's CSV, Parquet and LaTeX exports (when ``item``
    is given) that this sidecar describes.
    """
    frame = _check_frame(frame)
    table: dict[str, object] = {"columns": [str(c) for c in frame.columns], "rows": int(len(frame))}
    if item is not None:
        table["files"] = [provenance.file_name(item, fmt) for fmt in TABLE_FORMATS if fmt != "provenance"]
    document = {METADATA_KEY: provenance.as_dict(), "table": table}
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=True) + "\n").encode("utf-8")


def table_to_parquet(frame: pd.DataFrame, provenance: Provenance) -> bytes:
    """Parquet with the provenance JSON in the schema metadata under ``encbench.provenance``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = _check_frame(frame)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = dict(table.schema.metadata or {})
    metadata[METADATA_KEY.encode()] = provenance.to_json().encode()
    table = table.replace_schema_metadata(metadata)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


# |, < and > print as an em dash and inverted marks in LaTeX's default (OT1) font encoding.
_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                  "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "\\": r"\textbackslash{}", "|": r"\textbar{}", "<": r"\textless{}",
                  ">": r"\textgreater{}"}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))
#: directions accepted by ``best`` in :func:`table_to_latex`
BEST_DIRECTIONS = ("min", "max")


def latex_escape(text: object) -> str:
    r"""``text`` with LaTeX's special characters escaped (``ME_0.1`` -> ``ME\_0.1``)."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], str(text))


def default_caption(provenance: Provenance, item: str | None = None) -> str:
    """A caption naming the view, the table, its task and its filter state (plain text, not
    escaped)."""
    what = f"{provenance.view} {item}" if item else provenance.view
    if provenance.task:
        what += f", task {provenance.task}"
    filters = "; ".join(
        f"{k}: {', '.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
        for k, v in provenance.filters.items())
    return f"encbench {what}" + (f" ({filters})" if filters else "") + "."


def latex_label(provenance: Provenance, item: str | None = None) -> str:
    """``tab:<view>-<item>-<filters>``: a label naming the table and its filter state.

    Two exports of different views, items or filter states get different labels (the filter
    part is :meth:`Provenance.filter_slug`, which ends with a hash of the full state when long),
    so several tables exported into one paper do not collide.
    """
    parts = [provenance.view, item or "", provenance.filter_slug()]
    text = "-".join(p for p in parts if p)
    return "tab:" + re.sub(r"[^A-Za-z0-9.:+-]+", "-", text.replace("=", "-")).strip("-")


def _decimals(values: pd.Series) -> int:
    """Decimals giving the column's largest magnitude 4 significant digits (0 to 4)."""
    top = float(values.abs().max()) if len(values) else 0.0
    if not top or not math.isfinite(top):
        return 4
    return max(0, min(4, 3 - math.floor(math.log10(top))))


def _number_cells(values: pd.Series, decimals: int | None) -> list[str]:
    """One column's numbers: whole columns as integers, others with one number of decimals."""
    present = values.dropna()
    whole = bool(len(present)) and all(float(v).is_integer() and abs(v) < 1e15 for v in present)
    if whole and decimals is None:
        return ["--" if pd.isna(v) else f"{int(v)}" for v in values]
    places = _decimals(present) if decimals is None else int(decimals)
    cells = []
    for v in values:
        if pd.isna(v):
            cells.append("--")
        elif v != 0 and abs(v) < 0.5 * 10 ** -places:       # would print as 0.00: keep its digits
            mantissa, exponent = f"{v:.2e}".split("e")
            cells.append(rf"${mantissa}\times 10^{{{int(exponent)}}}$")
        else:
            cells.append(f"{v:.{places}f}")
    return cells


def table_to_latex(frame: pd.DataFrame, provenance: Provenance, *, caption: str | None = None,
                   label: str | None = None, best: Mapping[str, str] | None = None,
                   best_within: Sequence[str] | None = None, drop: Sequence[str] = (),
                   decimals: Mapping[str, int] | None = None, item: str | None = None) -> bytes:
    r"""A booktabs ``table`` with caption and label, headed by ``%`` provenance lines.

    The first line says what the preamble needs (``\usepackage{booktabs}``, for ``\toprule``,
    ``\midrule`` and ``\bottomrule``).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; text is LaTeX-escaped (``|``, ``<`` and ``>`` too), missing values are
        ``--``. A numeric column of whole numbers is written as integers; any other numeric
        column with one number of decimals for all its rows (``decimals``, else as many as give
        its largest value 4 significant digits), so a column's numbers line up; a nonzero value
        that would print as zero keeps 3 significant digits (``1.23\times 10^{-8}``).
    provenance : Provenance
    caption, label : str, optional
        Defaults: :func:`default_caption` and :func:`latex_label` (unique per view, item and
        filter state).
    best : mapping of column -> ``"min"`` or ``"max"``, optional
        Columns whose best value (lowest or highest) is set in bold, in every row holding it
        (ties are all bold). E.g. ``{"R-M": "min"}`` for a rank, ``{"cv_score": "max"}``.
    best_within : sequence of str, optional
        Columns grouping the rows: the best of each group is bold (e.g. the best encoder of each
        dataset and metric in a long table of scores). Default: the whole column.
    drop : sequence of str
        Columns left out of the LaTeX table (internal ids such as ``run_id``). Columns without
        any value are left out too.
    decimals : mapping of column -> int, optional
        Decimals of those columns (others: see ``frame``).
    item : str, optional
        The table's name in its view (used by the default caption and label).

    Raises
    ------
    ValueError
        If ``best``, ``best_within``, ``drop`` or ``decimals`` names a column the frame lacks,
        ``best`` a non-numeric column or another direction.
    """
    frame = _check_frame(frame)
    best = dict(best or {})
    decimals = dict(decimals or {})
    within = list(best_within or [])
    for what, names in (("drop", list(drop)), ("best_within", within), ("decimals", list(decimals))):
        unknown = [c for c in names if c not in frame.columns]
        if unknown:
            raise ValueError(f"{what} names columns the table lacks: got {unknown!r}; "
                             f"columns: {list(frame.columns)!r}")
    for column, direction in best.items():
        if column not in frame.columns:
            raise ValueError(f"best names a column the table lacks: got {column!r}; columns: {list(frame.columns)!r}")
        if direction not in BEST_DIRECTIONS:
            raise ValueError(f"best direction for {column!r} must be 'min' or 'max': got {direction!r}")
        if not pd.api.types.is_numeric_dtype(frame[column]):
            raise ValueError(f"best needs a numeric column: got {column!r} of dtype {frame[column].dtype}")
    kept = [c for c in frame.columns if c not in set(drop) and frame[c].notna().any()]
    cells = pd.DataFrame(index=frame.index)
    for column in kept:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            cells[column] = ["--" if _missing(v) else latex_escape(v) for v in values]
            continue
        text = _number_cells(values, decimals.get(column))
        if column in best and values.notna().any():
            how = "min" if best[column] == "min" else "max"
            target = (values.groupby([frame[c] for c in within], sort=False, dropna=False).transform(how)
                      if within else pd.Series(getattr(values, how)(), index=values.index))
            text = [rf"\textbf{{{t}}}" if pd.notna(v) and v == g else t for v, g, t in zip(values, target, text)]
        cells[column] = text
    cells.columns = [latex_escape(c) for c in kept]
    head = f"% Needs {LATEX_PREAMBLE} in the preamble (for \\toprule, \\midrule, \\bottomrule).\n"
    head += "".join(f"% {line}\n" for line in provenance.header_lines())
    label = label or latex_label(provenance, item)
    body = cells.to_latex(index=False, escape=False, caption=latex_escape(caption or default_caption(provenance, item)),
                          label=label, position="htbp",
                          column_format="".join("r" if pd.api.types.is_numeric_dtype(frame[c])
                                                and not pd.api.types.is_bool_dtype(frame[c]) else "l"
                                                for c in kept))
    return (head + body).encode("utf-8")


def _missing(value: object) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def table_bytes(frame: pd.DataFrame, fmt: str, provenance: Provenance, *,
                best: Mapping[str, str] | None = None, item: str | None = None, **latex) -> bytes:
    """Dispatch on ``fmt`` in :data:`TABLE_FORMATS`.

    ``best`` and the other keywords of :func:`table_to_latex` (``best_within``, ``drop``,
    ``decimals``) apply to LaTeX only; ``item`` names the table in LaTeX and in the sidecar."""
    if fmt == "csv":
        return table_to_csv(frame, provenance)
    if fmt == "parquet":
        return table_to_parquet(frame, provenance)
    if fmt == "latex":
        return table_to_latex(frame, provenance, best=best, item=item, **latex)
    if fmt == "provenance":
        return table_provenance(frame, provenance, item=item)
    raise ValueError(f"unknown table format: got {fmt!r}, expected one of {TABLE_FORMATS!r}")


def _chart_spec(chart: object) -> dict:
    if isinstance(chart, dict):
        return chart
    to_dict = getattr(chart, "to_dict", None)
    if to_dict is None:
        raise ValueError(f"chart export needs an Altair chart or a Vega-Lite dict: got {type(chart).__name__!r}")
    return to_dict()


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def add_png_text(png: bytes, key: str, text: str) -> bytes:
    """Insert an uncompressed ``iTXt`` chunk (UTF-8 ``text`` under ``key``) after ``IHDR``."""
    signature = b"\x89PNG\r\n\x1a\n"
    if not png.startswith(signature):
        raise ValueError("not a PNG file: bad signature")
    ihdr_length = struct.unpack(">I", png[8:12])[0]
    end_of_ihdr = 8 + 12 + ihdr_length
    # iTXt: keyword \0 compression-flag compression-method language \0 translated-keyword \0 text
    data = key.encode("latin-1") + b"\x00\x00\x00" + b"\x00" + b"\x00" + text.encode("utf-8")
    return png[:end_of_ihdr] + _png_chunk(b"iTXt", data) + png[end_of_ihdr:]


def read_png_text(png: bytes) -> dict[str, str]:
    """The ``tEXt``/``iTXt`` entries of a PNG (what :func:`add_png_text` writes)."""
    found: dict[str, str] = {}
    position = 8
    while position + 8 <= len(png):
        length = struct.unpack(">I", png[position:position + 4])[0]
        kind = png[position + 4:position + 8]
        data = png[position + 8:position + 8 + length]
        if kind == b"tEXt":
            key, _, value = data.partition(b"\x00")
            found[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = data.partition(b"\x00")
            rest = rest[2:]  # compression flag and method (we never compress)
            _language, _, rest = rest.partition(b"\x00")
            _translated, _, value = rest.partition(b"\x00")
            found[key.decode("latin-1")] = value.decode("utf-8")
        if kind == b"IEND":
            break
        position += 12 + length
    return found


def chart_to_png(chart: object, provenance: Provenance, *, scale: float = 2.0) -> bytes:
    """PNG through vl-convert (offline), with the provenance in an ``iTXt`` chunk."""
    import vl_convert

    png = vl_convert.vegalite_to_png(_chart_spec(chart), scale=scale)
    return add_png_text(png, METADATA_KEY, provenance.to_json())


def chart_to_svg(chart: object, provenance: Provenance) -> bytes:
    """SVG through vl-convert, with the provenance JSON in a ``<metadata>`` element."""
    import vl_convert

    svg = vl_convert.vegalite_to_svg(_chart_spec(chart))
    match = re.search(r"<svg\b[^>]*>", svg)
    if match is None:
        raise ValueError("vl-convert returned no <svg> element")
    element = f'<metadata id="{METADATA_KEY}">{_xml_escape(provenance.to_json())}</metadata>'
    return (svg[:match.end()] + element + svg[match.end():]).encode("utf-8")


def chart_bytes(chart: object, fmt: str, provenance: Provenance) -> bytes:
    """Dispatch on ``fmt`` in :data:`CHART_FORMATS`."""
    if fmt == "png":
        return chart_to_png(chart, provenance)
    if fmt == "svg":
        return chart_to_svg(chart, provenance)
    raise ValueError(f"unknown chart format: got {fmt!r}, expected one of {CHART_FORMATS!r}")
