"""Read CSV, Parquet and ARFF files (optionally gzip-compressed) into pandas DataFrames.

Every reader returns the same kind of frame: one column per attribute, in file order;
categorical columns (ARFF nominal/string/date attributes, text columns of CSV and Parquet,
Parquet dictionary/category columns) as pandas' ``str`` dtype with NaN for missing values;
numeric columns as int64 (when every value is integral and none is missing) or float64.
``'?'`` means missing everywhere (ARFF and OpenML's CSV exports write it so).

Problems are raised as :class:`~encbench.data.errors.DatasetError` (a ``ValueError``) whose
message names the file, and for CSV/ARFF the 1-based line where parsing gave up.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import logging
import os
import re
import threading
import warnings
import zlib
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pandas as pd

from encbench.data.errors import DatasetError

logger = logging.getLogger(__name__)

#: Default upload size limit in bytes (200 MB, decimal megabytes as shown to users).
DEFAULT_MAX_BYTES = 200_000_000
#: Formats :func:`read_table` understands.
FORMATS = ("csv", "parquet", "arff")

_EXTENSIONS = {
    ".csv": "csv", ".tsv": "csv", ".txt": "csv", ".tab": "csv",
    ".parquet": "parquet", ".pq": "parquet",
    ".arff": "arff",
}
_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"
_SEPARATORS = (",", ";", "\t", "|")
# Values that mean "missing" in a CSV file, on top of pandas' defaults ('', 'NA', 'NaN', ...):
# OpenML's and UCI's '?', also single-quoted as OpenML's CSV export quotes text ('"?"' is
# unquoted by the parser already).
_MISSING_MARKS = ("?", "'?'", '"?"')
_CSV_NA = ["?", "'?'"]
#: ``DataFrame.attrs`` key of the readers' load report: column -> cells read as missing
#: because they held '?' (quoted or not).
MISSING_MARKS_ATTR = "encbench_missing_marks"
_TEXT_CONTROLS = frozenset(b"\t\n\r\f")


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes (as stored, i.e. of the compressed bytes for ``.gz``)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _mb(n_bytes: float) -> str:
    return f"{n_bytes / 1e6:.1f} MB"


def read_file_bytes(path: str | os.PathLike, *, max_bytes: int | None = DEFAULT_MAX_BYTES,
                    label: str | None = None) -> bytes:
    """Read a file's bytes, refusing missing, over-size and empty files.

    Parameters
    ----------
    path : path-like
        The file.
    max_bytes : int or None
        Size limit in bytes (of the file as stored); None for no limit.
    label : str, optional
        Name of the file in messages (default: the file's base name).
    """
    path = Path(path)
    label = label or path.name
    if not path.exists():
        raise DatasetError(f"file {label!r} does not exist (looked for {str(path)!r})")
    if not path.is_file():
        raise DatasetError(f"{label!r} is not a file (got {str(path)!r})")
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise DatasetError(
            f"file {label!r} is {_mb(size)} ({size:,} bytes), over the {max_bytes / 1e6:g} MB "
            f"size limit"
        )
    if size == 0:
        raise DatasetError(f"file {label!r} is empty (0 bytes)")
    return path.read_bytes()


def _gunzip(data: bytes, label: str, max_bytes: int | None) -> bytes:
    """Decompress a gzip stream, refusing more than ``max_bytes`` of output.

    The size limit of an upload applies to what it holds, not only to its compressed bytes: a
    1 MB gzip bomb would otherwise expand to gigabytes in memory. Decompression is streamed and
    stops one byte past the limit, so memory stays bounded by the limit.
    """
    limit = None if max_bytes is None else max_bytes + 1
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(-1 if limit is None else limit)
    except (OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"cannot decompress gzip file {label!r}: {exc}") from None
    if max_bytes is not None and len(out) > max_bytes:
        del out
        raise DatasetError(
            f"file {label!r} expands to more than {max_bytes / 1e6:g} MB when decompressed "
            f"({len(data):,} bytes compressed); the size limit applies to the decompressed data")
    return out


def _format_from_name(name: str) -> tuple[str | None, bool]:
    """(format or None, gzip?) from a file name's extension(s)."""
    lower = name.lower()
    compressed = lower.endswith(".gz")
    if compressed:
        lower = lower[:-3]
    return _EXTENSIONS.get(os.path.splitext(lower)[1]), compressed


def _format_from_content(data: bytes) -> str:
    if data[:4] == _PARQUET_MAGIC:
        return "parquet"
    head = data[:65536].decode("utf-8", errors="replace")
    for line in head.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        return "arff" if stripped.lower().startswith("@relation") else "csv"
    return "csv"


def _line_of_offset(data: bytes, offset: int) -> int:
    """1-based line number of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


def _decode_text(data: bytes, label: str, kind: str, *, allow_legacy: bool) -> str:
    """Decode a text file; binary content is an error naming the line where it shows up."""
    nul = data.find(b"\x00", 0, 1 << 20)
    if nul >= 0:
        line = _line_of_offset(data, nul)
        raise DatasetError(
            f"cannot parse {kind} file {label!r}: gave up at line {line}: binary data "
            f"(a NUL byte), this is not a {kind} text file", line=line)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if allow_legacy:
            # Spreadsheet exports are often Windows-1252; latin-1 accepts any byte.
            for encoding in ("cp1252", "latin-1"):
                try:
                    text = data.decode(encoding)
                except UnicodeDecodeError:
                    continue
                logger.warning("%s is not UTF-8 (byte %d); read it as %s", label, exc.start,
                               encoding)
                return text
        line = _line_of_offset(data, exc.start)
        raise DatasetError(
            f"cannot parse {kind} file {label!r}: gave up at line {line}: not UTF-8 text "
            f"(byte 0x{data[exc.start]:02x})", line=line) from None


def _physical_line(text: str, line: int) -> str:
    lines = text.splitlines()
    snippet = lines[line - 1] if 0 < line <= len(lines) else ""
    return snippet if len(snippet) <= 120 else snippet[:117] + "..."


def _duplicates_message(names: list[str], label: str) -> str | None:
    positions: dict[str, list[int]] = {}
    for i, name in enumerate(names, start=1):
        positions.setdefault(name, []).append(i)
    dups = {n: p for n, p in positions.items() if len(p) > 1}
    if not dups:
        return None
    parts = ", ".join(
        f"{n!r} (columns {', '.join(map(str, p[:-1]))} and {p[-1]})" for n, p in dups.items()
    )
    return f"file {label!r} has duplicate column names: {parts}; column names must be unique"


# --------------------------------------------------------------------------------------- CSV


def _detect_sep(text: str) -> str:
    """The candidate separator that occurs most often (outside quotes) in the header line."""
    header = ""
    for line in text[:65536].splitlines():
        if line.strip():
            header = line
            break
    unquoted = re.sub(r'"[^"]*"', "", header)
    counts = {sep: unquoted.count(sep) for sep in _SEPARATORS}
    best = max(_SEPARATORS, key=lambda s: counts[s])  # ties go to the earlier candidate
    return best if counts[best] > 0 else ","


def _clean_header_name(name: str, index: int) -> str:
    name = name.strip()
    # OpenML's CSV export single-quotes every header name: 'pclass','survived',...
    if len(name) >= 2 and name[0] == name[-1] == "'":
        name = name[1:-1]
    return name if name else f"Unnamed: {index}"


def _csv_header(text: str, sep: str) -> list[str]:
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    for record in reader:
        if record and any(field.strip() for field in record):
            return [_clean_header_name(f, i) for i, f in enumerate(record)]
    return []


def _csv_diagnose(text: str, sep: str, n_cols: int, eof_in_quotes: bool) -> tuple[int, str] | None:
    """Find the physical line where a CSV stops making sense (Python's csv, same rules)."""
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    previous_end = 0
    header_seen = False
    last_start = None
    try:
        for record in reader:
            start, previous_end = previous_end + 1, reader.line_num
            if not record:
                continue
            last_start = start
            if not header_seen:
                header_seen = True
                continue
            if len(record) > n_cols:
                return start, (f"expected {n_cols} fields as in the header, found "
                               f"{len(record)}")
    except csv.Error as exc:  # pragma: no cover - non-strict reader rarely raises
        return previous_end + 1, str(exc)
    if eof_in_quotes and last_start is not None:
        return last_start, "a quoted field opened on this line is never closed (end of file reached)"
    return None


def _check_not_binary(data: bytes, label: str, kind: str) -> None:
    """Refuse binary content that has no NUL byte (e.g. an image or random bytes).

    Text files hold almost no control characters besides TAB, LF, CR and FF; binary data holds
    about one in nine. The first 64 KiB decide; the message names the line where it shows up.
    """
    head = data[:65536]
    controls = [i for i, b in enumerate(head) if (b < 0x20 and b not in _TEXT_CONTROLS) or b == 0x7F]
    if len(controls) > max(8, len(head) // 100):
        line = _line_of_offset(data, controls[0])
        raise DatasetError(
            f"cannot parse {kind} file {label!r}: gave up at line {line}: binary data "
            f"({len(controls)} control bytes in the first {len(head):,}), this is not a {kind} "
            f"text file", line=line)


def _normalise_newlines(text: str) -> str:
    """CR LF and classic-Mac CR line ends become LF (Python's csv module refuses bare CRs)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _missing_marks(frame: pd.DataFrame, raw: pd.DataFrame) -> dict[str, int]:
    """Per column, how many cells held a missing-value marker ('?', quoted or not)."""
    counts = {}
    for i, name in enumerate(frame.columns):
        n = int(raw.iloc[:, i].isin(_MISSING_MARKS).sum())
        if n:
            counts[str(name)] = n
    return counts


def _read_csv(data: bytes, label: str, sep: str | None) -> pd.DataFrame:
    text = _decode_text(data, label, "CSV", allow_legacy=True)  # NUL bytes: refused here
    _check_not_binary(data, label, "CSV")
    text = _normalise_newlines(text)
    if not re.search(r"\S", text):
        raise DatasetError(f"file {label!r} is empty (only blank lines)")
    sep = sep or _detect_sep(text)
    try:
        return _parse_csv(text, label, sep)
    except csv.Error as exc:  # the header/diagnosis pass uses Python's csv module
        raise DatasetError(f"cannot parse CSV file {label!r}: {exc}") from None


def _parse_csv(text: str, label: str, sep: str) -> pd.DataFrame:
    header = _csv_header(text, sep)
    message = _duplicates_message(header, label)
    if message:
        raise DatasetError(message)

    def fail(pandas_message: str) -> DatasetError:
        found = _csv_diagnose(text, sep, len(header), "EOF inside string" in pandas_message)
        if found is None:
            match = re.search(r"line (\d+)", pandas_message)
            line = int(match.group(1)) if match else None
            reason = pandas_message.strip().replace("Error tokenizing data. C error: ", "")
        else:
            line, reason = found
        where = f"gave up at line {line}: " if line else ""
        snippet = f"; the line reads {_physical_line(text, line)!r}" if line else ""
        return DatasetError(f"cannot parse CSV file {label!r}: {where}{reason}{snippet}",
                            line=line)

    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            frame = pd.read_csv(io.StringIO(text), sep=sep, index_col=False,
                                na_values=_CSV_NA, low_memory=False)
        except pd.errors.EmptyDataError:
            raise DatasetError(f"file {label!r} is empty (no header line)") from None
        except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError) as exc:
            raise fail(str(exc)) from None
    if len(header) == frame.shape[1]:
        frame.columns = header
    if frame.shape[0] == 0:
        raise DatasetError(f"file {label!r} has a header but no data rows")
    if "?" in text:  # count the cells read as missing because they hold '?' (load report)
        raw = pd.read_csv(io.StringIO(text), sep=sep, index_col=False, dtype=str,
                          keep_default_na=False, na_filter=False, low_memory=False)
        if raw.shape == frame.shape:
            frame.attrs[MISSING_MARKS_ATTR] = _missing_marks(frame, raw)
    return frame


# ---------------------------------------------------------------------------------- Parquet


def _nested_columns(schema) -> list[str]:
    """Columns of a Parquet schema holding lists, structs or maps (not one value per cell)."""
    import pyarrow as pa

    nested = []
    for f in schema:
        t = f.type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if pa.types.is_nested(t):
            nested.append(f"{f.name!r} ({t})")
    return nested


def _read_parquet(data: bytes, label: str, max_bytes: int | None = None) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
        schema = parquet.schema_arrow
        message = _duplicates_message(list(schema.names), label)
        nested = _nested_columns(schema)
        if nested:
            # pandas would turn each list into one text level per distinct list: refuse instead
            message = message or (
                f"file {label!r} has columns holding lists, structs or maps: "
                f"{', '.join(nested)}; every column must hold one value per row (flatten or "
                f"drop them)")
        meta = parquet.metadata
        expanded = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if message is None and max_bytes is not None and expanded > max_bytes:
            message = (f"file {label!r} expands to {_mb(expanded)} of data when decompressed, over "
                       f"the {max_bytes / 1e6:g} MB size limit")
        if message is None:
            table = parquet.read()
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
        raise DatasetError(f"cannot read Parquet file {label!r}: {exc}") from None
    if message:
        raise DatasetError(message)
    frame = table.to_pandas()
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    if frame.shape[1] == 0:
        raise DatasetError(f"file {label!r} has no columns")
    if frame.shape[0] == 0:
        raise DatasetError(f"file {label!r} has columns but no data rows")
    return frame


# ------------------------------------------------------------------------------------- ARFF

# liac-arff knows no DATE type; read dates as strings (categorical), keeping line numbers.
_ARFF_DATE = re.compile(
    r"""^(\s*@attribute\s+(?:'[^']*'|"[^"]*"|\S+)\s+)date\b.*$""", re.IGNORECASE | re.MULTILINE)
_ARFF_LINE_PART = re.compile(r",?\s*(?:at|in) line \d+[.:]?\s*", re.IGNORECASE)


def _read_arff(data: bytes, label: str) -> pd.DataFrame:
    import arff  # liac-arff

    text = _decode_text(data, label, "ARFF", allow_legacy=False)
    _check_not_binary(data, label, "ARFF")
    text = _normalise_newlines(text)
    if not re.search(r"\S", text):
        raise DatasetError(f"file {label!r} is empty (only blank lines)")
    first = next((i for i, ln in enumerate(text.splitlines(), 1)
                  if ln.strip() and not ln.lstrip().startswith("%")), 1)
    if not re.search(r"^\s*@relation\b", text, re.IGNORECASE | re.MULTILINE):
        raise DatasetError(
            f"cannot parse ARFF file {label!r}: gave up at line {first}: no @relation header, "
            f"this is not an ARFF file", line=first)
    try:
        parsed = arff.loads(_ARFF_DATE.sub(r"\1string", text))
    except arff.ArffException as exc:
        line = exc.line if isinstance(exc.line, int) and exc.line > 0 else None
        raw = str(exc)
        dup = re.match(r"Bad @ATTRIBUTE name (.*) at line (\d+), this name is already in use "
                       r"in line (\d+)", raw)
        if dup:
            raise DatasetError(
                f"file {label!r} has duplicate column names: {dup.group(1)!r} (declared at lines "
                f"{dup.group(3)} and {dup.group(2)}); column names must be unique",
                line=line) from None
        reason = _ARFF_LINE_PART.sub(" ", raw).strip().rstrip(".")
        where = f"gave up at line {line}: " if line else ""
        snippet = f"; the line reads {_physical_line(text, line)!r}" if line else ""
        raise DatasetError(f"cannot parse ARFF file {label!r}: {where}{reason}{snippet}",
                           line=line) from None
    attributes = parsed["attributes"]
    names = [name for name, _ in attributes]
    if not names:
        raise DatasetError(f"file {label!r} declares no @attribute")
    rows = parsed["data"]
    if not rows:
        raise DatasetError(f"file {label!r} has a header but no data rows")
    frame = pd.DataFrame(rows, columns=range(len(names)))
    marks: dict[str, int] = {}
    for i, (name, _) in enumerate(attributes):
        # '?' is ARFF's missing value; a quoted '?' reaches us as the text '?' and means the
        # same in OpenML's and UCI's files, so it is missing too (and reported).
        quoted = frame[i].map(lambda v: isinstance(v, str) and v == "?").to_numpy(dtype=bool)
        n = int(frame[i].isna().sum()) + int(quoted.sum())
        if quoted.any():
            frame.loc[quoted, i] = None
        if n:
            marks[name] = n
    columns = {}
    for i, (name, kind) in enumerate(attributes):
        values = frame[i]
        if isinstance(kind, list) or str(kind).upper() == "STRING":
            columns[name] = values.astype(object).astype("str")
        else:  # NUMERIC, REAL, INTEGER
            columns[name] = _tidy_numeric(pd.to_numeric(values, errors="raise").astype(float))
    result = pd.DataFrame(columns)
    result.attrs[MISSING_MARKS_ATTR] = marks
    return result


def _tidy_numeric(values: pd.Series) -> pd.Series:
    """Integral numbers without missing values become int64, as a CSV reader would give."""
    array = values.to_numpy(dtype=float)
    if array.size and np.isfinite(array).all() and (array == np.round(array)).all() \
            and np.abs(array).max() < 2**53:
        return values.astype(np.int64)
    return values


# ------------------------------------------------------------------------------- read_table


def _normalize(frame: pd.DataFrame) -> pd.DataFrame:
    """Text-like columns (object, str, string, category) become ``str`` with NaN for missing."""
    out = {}
    for i, name in enumerate(frame.columns):
        column = frame.iloc[:, i]
        dtype = column.dtype
        if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(dtype) \
                or pd.api.types.is_string_dtype(dtype):
            if isinstance(dtype, pd.CategoricalDtype):
                column = column.astype(object)
            column = column.astype("str")
        out[name] = column
    result = pd.DataFrame(out)
    result.index = pd.RangeIndex(len(result))
    result.attrs[MISSING_MARKS_ATTR] = dict(frame.attrs.get(MISSING_MARKS_ATTR, {}))
    return result


_CACHE: OrderedDict[tuple, tuple[pd.DataFrame, str]] = OrderedDict()
_CACHE_SIZE = 16
_CACHE_LOCK = threading.Lock()


def read_table_and_hash(path: str | os.PathLike, *, format: str | None = None,
                        sep: str | None = None, max_bytes: int | None = DEFAULT_MAX_BYTES,
                        label: str | None = None) -> tuple[pd.DataFrame, str]:
    """Like :func:`read_table`, also returning the SHA-256 of the file's bytes."""
    path = Path(path)
    label = label or path.name
    if format is not None and format not in FORMATS:
        raise DatasetError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, format, sep)
    except OSError:
        key = None
    if key is not None and (max_bytes is None or stat.st_size <= max_bytes):
        with _CACHE_LOCK:
            hit = _CACHE.get(key)
            if hit is not None:
                _CACHE.move_to_end(key)
                return hit[0].copy(), hit[1]
    data = read_file_bytes(path, max_bytes=max_bytes, label=label)
    digest = sha256_bytes(data)
    name_format, _ = _format_from_name(path.name)
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data, label, max_bytes)
        if not data.strip():
            raise DatasetError(f"file {label!r} is empty (nothing inside the gzip stream)")
    fmt = format or ("parquet" if data[:4] == _PARQUET_MAGIC else None) or name_format \
        or _format_from_content(data)
    if fmt == "csv":
        frame = _read_csv(data, label, sep)
    elif fmt == "parquet":
        frame = _read_parquet(data, label, max_bytes)
    else:
        frame = _read_arff(data, label)
    frame = _normalize(frame)
    logger.debug("read %s (%s): %d rows x %d columns", label, fmt, *frame.shape)
    if key is not None:
        with _CACHE_LOCK:
            _CACHE[key] = (frame, digest)
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        frame = frame.copy()
    return frame, digest


def read_table(path: str | os.PathLike, *, format: str | None = None, sep: str | None = None,
               max_bytes: int | None = DEFAULT_MAX_BYTES, label: str | None = None) -> pd.DataFrame:
    """Read a CSV, Parquet or ARFF file (each optionally ``.gz``) into a DataFrame.

    Parameters
    ----------
    path : path-like
        The file. The format comes from ``format``, else from the content for gzip and Parquet
        (magic bytes), else from the extension (``.csv .tsv .txt .parquet .pq .arff``, each
        optionally followed by ``.gz``), else from the content (``@relation`` means ARFF).
    format : {'csv', 'parquet', 'arff'}, optional
        Force a format (e.g. for an upload saved without its extension).
    sep : str, optional
        CSV separator; by default the most frequent of ``, ; TAB |`` in the header line.
    max_bytes : int or None
        Refuse files larger than this (default 200 MB), as stored and once decompressed (gzip
        output is capped while streaming; for Parquet the row groups' uncompressed size);
        None for no limit.
    label : str, optional
        Name of the file in messages (default: the file's base name), e.g. the name a user
        uploaded it under.

    Returns
    -------
    pandas.DataFrame
        Columns in file order. Text-like columns have the ``str`` dtype with NaN for missing;
        numeric columns are int64 or float64. ``'?'`` (quoted or not) and empty cells are
        missing; ``frame.attrs[MISSING_MARKS_ATTR]`` counts the '?' cells per column (the load
        report that validation turns into a warning). CR, LF and CR LF line ends are all read.

    Raises
    ------
    DatasetError
        Missing, empty, over-size (also once decompressed), binary or unparseable file, a
        Parquet column of lists/structs/maps (the message names the file and,
        for CSV/ARFF, the line where parsing gave up; :attr:`DatasetError.line` holds it),
        duplicate column names, a header without data rows.
    """
    return read_table_and_hash(path, format=format, sep=sep, max_bytes=max_bytes,
                               label=label)[0]
