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

#: Default upload size limit in bytes (200 MB, decimal megabytes as shown to users). It applies
#: to a file as stored, once gzip-decompressed, and for Parquet once decoded (see
#: :func:`decoded_bytes`): a small file must not turn into gigabytes in memory.
DEFAULT_MAX_BYTES = 200_000_000
#: Default limit on a table's cells (rows x columns), checked before its values are parsed.
DEFAULT_MAX_CELLS = 20_000_000
#: The most columns a table may have (target included), checked from the header or the
#: metadata before any value is parsed. The widest published datasets have under 100.
MAX_COLUMNS = 10_000
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
#: ``DataFrame.attrs`` key of the CSV reader's load report: the rows with fewer fields than the
#: header (their last cells are read as missing), as ``{"count": n, "lines": [first lines],
#: "fields": fields of the header}``.
SHORT_ROWS_ATTR = "encbench_short_rows"
#: Line numbers of short rows the load report quotes.
_SHORT_LINES_LISTED = 5
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


def _check_shape(label: str, n_rows: int, n_cols: int, max_cells: int | None, *,
                 rows_word: str = "rows") -> None:
    """Refuse a table wider than :data:`MAX_COLUMNS` or larger than ``max_cells`` cells.

    Called with the counts a header or metadata gives, before the values are parsed; for text
    files ``n_rows`` counts lines, an upper bound of the records.
    """
    if n_cols > MAX_COLUMNS:
        raise DatasetError(
            f"file {label!r} has {n_cols:,} columns, over the limit of {MAX_COLUMNS:,} columns; "
            f"keep the columns you need (e.g. with pandas: frame[columns].to_csv(...))")
    if max_cells is not None and n_rows * n_cols > max_cells:
        raise DatasetError(
            f"file {label!r} holds {n_rows:,} {rows_word} x {n_cols:,} columns = "
            f"{n_rows * n_cols:,} cells, over the limit of {max_cells:,} cells (rows x columns); "
            f"use a sample of its rows or fewer columns")


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
    head = data[:65536].decode(_unicode_bom(data) or "utf-8", errors="replace")
    for line in head.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        return "arff" if stripped.lower().startswith("@relation") else "csv"
    return "csv"


def _line_of_offset(data: bytes, offset: int) -> int:
    """1-based line number of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
         (b"\xfe\xff", "utf-16"))


def _unicode_bom(data: bytes) -> str | None:
    """'utf-16' or 'utf-32' when ``data`` starts with that encoding's byte-order mark, else None.

    UTF-32 first: its little-endian mark begins with UTF-16's.
    """
    return next((codec for bom, codec in _BOMS if data.startswith(bom)), None)


def _wide_text_hint(data: bytes) -> str:
    """A conversion hint when NUL bytes look like UTF-16 text without a byte-order mark."""
    head = data[:4096]
    odd, even = head[1::2], head[0::2]
    for name, nuls, chars in (("UTF-16LE", odd, even), ("UTF-16BE", even, odd)):
        if len(head) >= 8 and nuls.count(0) >= 0.9 * len(nuls) and chars.count(0) < 0.1 * len(chars):
            return (f"; it looks like {name} text without a byte-order mark: save it as UTF-8 (e.g. "
                    f"iconv -f {name} -t UTF-8 in.csv > out.csv)")
    return ""


def _refuse_nul(label: str, kind: str, line: int, hint: str = "") -> DatasetError:
    return DatasetError(
        f"cannot parse {kind} file {label!r}: gave up at line {line}: binary data (a NUL byte), "
        f"this is not a {kind} text file{hint}", line=line)


def _decode_text(data: bytes, label: str, kind: str, *, allow_legacy: bool) -> str:
    """Decode a text file; binary content is an error naming the line where it shows up.

    UTF-8 (with or without its byte-order mark), UTF-16 and UTF-32 with a byte-order mark, and
    for CSV also Windows-1252/latin-1. A NUL byte anywhere (not only in the first MiB) means
    binary data: pandas would otherwise read the column holding it as text.
    """
    wide = _unicode_bom(data)
    if wide is not None:
        try:
            text = data.decode(wide)  # the codec reads the byte order from the mark and drops it
        except UnicodeDecodeError as exc:
            raise DatasetError(
                f"cannot parse {kind} file {label!r}: it starts with a {wide.upper()} byte-order mark "
                f"but byte {exc.start:,} is not {wide.upper()} text; save it as UTF-8") from None
        nul = text.find("\x00")
        if nul >= 0:
            raise _refuse_nul(label, kind, text.count("\n", 0, nul) + 1)
        logger.info("%s is %s text (byte-order mark); read as such", label, wide.upper())
        return text
    nul = data.find(b"\x00")
    if nul >= 0:
        raise _refuse_nul(label, kind, _line_of_offset(data, nul), _wide_text_hint(data))
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
    lines = text.split("\n")  # as lines are counted (LF); splitlines() also splits at CR, FF, ...
    snippet = lines[line - 1] if 0 < line <= len(lines) else ""
    return snippet if len(snippet) <= 120 else snippet[:117] + "..."


def _spaced_names_message(names: list[str], label: str) -> str | None:
    """Column names that differ only in leading or trailing spaces ('colour' and 'colour ').

    A CSV header is read stripped, so such names are duplicates there; Parquet and ARFF keep
    them, and they are refused the same way (a name with a trailing space can hardly be told
    apart, nor named on the command line).
    """
    groups: dict[str, list[tuple[int, str]]] = {}
    for i, name in enumerate(names, start=1):
        groups.setdefault(str(name).strip(), []).append((i, str(name)))
    clashes = [group for group in groups.values() if len({n for _, n in group}) > 1]
    if not clashes:
        return None
    parts = "; ".join(" and ".join(f"{n!r} (column {i})" for i, n in group) for group in clashes)
    return (f"file {label!r} has column names that differ only in leading or trailing spaces: "
            f"{parts}; rename them so that each name is unique without its spaces")


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


def _text_head(data: bytes, text: str) -> bytes:
    """The bytes the binary check looks at: the file's, or for UTF-16/32 its text as UTF-8."""
    return data if _unicode_bom(data) is None else text[:65536].encode("utf-8")


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


def _count_lines(text: str) -> int:
    """Lines of ``text`` (a last line without its LF counts): records plus blank lines."""
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def _normalise_newlines(text: str) -> str:
    """CR LF and classic-Mac CR line ends become LF (Python's csv module refuses bare CRs)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _csv_newlines(text: str) -> tuple[str, bool]:
    """CSV text with LF line ends, and whether bare carriage returns (CR) remain in it.

    CR LF becomes LF. A file without any LF is a classic-Mac one: its CRs are its line ends and
    become LF. In a file whose lines end with LF a bare CR is no line end: it stays, to be read as
    part of a quoted value (:func:`_refuse_unquoted_cr` refuses one outside quotes). Turning it
    into a line end split a row in two wherever a quoted level held one (each half then had
    too few fields, and the rows "without target" were dropped).
    """
    if "\r" not in text:
        return text, False
    text = text.replace("\r\n", "\n")
    if "\r" not in text:
        return text, False
    if "\n" not in text:
        return text.replace("\r", "\n"), False
    return text, True


def _refuse_unquoted_cr(text: str, sep: str, label: str) -> None:
    """Refuse a bare CR outside quotes in a file whose lines end with LF, naming its line.

    Read as a line end it would split a row, read as text it would glue two rows: either guess
    can lose rows silently, so the file is refused (Python's csv module, whose quoting rules are
    pandas', reads it up to that CR). A CR inside a quoted value is part of the value.
    """
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    try:
        for _ in reader:
            pass
    except csv.Error as exc:
        if "new-line character" not in str(exc):
            return  # another problem: the parse names it with its line
        line = reader.line_num
        raise DatasetError(
            f"cannot parse CSV file {label!r}: gave up at line {line}: a carriage return (CR) outside "
            f"quotes, while the file's lines end with LF, so it is neither a line end nor text; put "
            f"the value holding it in double quotes, or save the file with one kind of line end; the "
            f"line reads {_physical_line(text, line)!r}", line=line) from None


def _short_rows(text: str, sep: str, n_fields: int) -> dict | None:
    """The records with fewer than ``n_fields`` fields (pandas pads them with missing values):
    how many, and the physical lines where the first ones end; None when there are none.

    Python's csv module follows pandas' quoting rules; blank lines are skipped by both.
    """
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    count, lines, header_seen = 0, [], False
    for record in reader:
        if not record:
            continue
        if not header_seen:
            header_seen = any(field.strip() for field in record)
            continue
        if len(record) < n_fields:
            count += 1
            if len(lines) < _SHORT_LINES_LISTED:
                lines.append(reader.line_num)
    return {"count": count, "lines": lines, "fields": n_fields} if count else None


def _missing_marks(frame: pd.DataFrame, raw: pd.DataFrame) -> dict[str, int]:
    """Per column, how many cells held a missing-value marker ('?', quoted or not)."""
    counts = {}
    for i, name in enumerate(frame.columns):
        n = int(raw.iloc[:, i].isin(_MISSING_MARKS).sum())
        if n:
            counts[str(name)] = n
    return counts


def _read_csv(data: bytes, label: str, sep: str | None,
              max_cells: int | None = DEFAULT_MAX_CELLS) -> pd.DataFrame:
    text = _decode_text(data, label, "CSV", allow_legacy=True)  # NUL bytes: refused here
    _check_not_binary(_text_head(data, text), label, "CSV")
    text, bare_cr = _csv_newlines(text)
    if not re.search(r"\S", text):
        raise DatasetError(f"file {label!r} is empty (only blank lines)")
    sep = sep or _detect_sep(text)
    try:
        if bare_cr:
            _refuse_unquoted_cr(text, sep, label)
        return _parse_csv(text, label, sep, max_cells, bare_cr=bare_cr)
    except csv.Error as exc:  # the header/diagnosis pass uses Python's csv module
        raise DatasetError(f"cannot parse CSV file {label!r}: {exc}") from None


def _parse_csv(text: str, label: str, sep: str, max_cells: int | None, *,
               bare_cr: bool = False) -> pd.DataFrame:
    header = _csv_header(text, sep)
    # pandas ends a line at a bare CR too, unless told LF only: then a quoted CR stays in its value
    line_ends = {"lineterminator": "\n"} if bare_cr else {}
    _check_shape(label, _count_lines(text) - 1, len(header), max_cells, rows_word="lines")
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
                                na_values=_CSV_NA, low_memory=False, **line_ends)
        except pd.errors.EmptyDataError:
            raise DatasetError(f"file {label!r} is empty (no header line)") from None
        except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError) as exc:
            raise fail(str(exc)) from None
    if len(header) == frame.shape[1]:
        frame.columns = header
    if frame.shape[0] == 0:
        raise DatasetError(f"file {label!r} has a header but no data rows")
    # a short row leaves its last cells missing: only then is the text read a second time
    if frame.shape[1] > 1 and frame.iloc[:, -1].isna().any():
        short = _short_rows(text, sep, frame.shape[1])
        if short:
            frame.attrs[SHORT_ROWS_ATTR] = short
    if "?" in text:  # count the cells read as missing because they hold '?' (load report)
        raw = pd.read_csv(io.StringIO(text), sep=sep, index_col=False, dtype=str,
                          keep_default_na=False, na_filter=False, low_memory=False, **line_ends)
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


#: Bytes a decoded cell takes in memory besides a text value's own bytes (an offset or a
#: pointer), and a number's.
_CELL_BYTES = 8
#: A decimal cell becomes a Python ``Decimal`` object in pandas.
_DECIMAL_CELL_BYTES = 112


def _cell_bytes(arrow_type) -> int | None:
    """Decoded bytes per cell of a fixed-width Arrow type; None for text and binary values."""
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) \
            or pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type) \
            or pa.types.is_string_view(arrow_type) or pa.types.is_binary_view(arrow_type):
        return None
    if pa.types.is_decimal(arrow_type):
        return _DECIMAL_CELL_BYTES
    try:
        return max(_CELL_BYTES, arrow_type.bit_width // 8)
    except ValueError:  # not fixed-width (e.g. fixed-size binary is, but other kinds may not be)
        return _CELL_BYTES


def decoded_bytes(table) -> int:
    """Bytes an Arrow table's (or record batch's) values take once decoded into a DataFrame.

    Text and binary columns count each value's bytes plus :data:`_CELL_BYTES`; for a
    dictionary-encoded column this is computed from the dictionary and its indices without
    decoding it, so a column of millions of copies of one long value is measured, not built.
    Numbers, booleans and times count 8 bytes per cell (decimals more: Python objects).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    total = 0
    for column in table.columns:
        per_cell = _cell_bytes(column.type)
        total += len(column) * (per_cell if per_cell is not None else _CELL_BYTES)
        if per_cell is not None:
            continue
        for chunk in getattr(column, "chunks", [column]):
            if pa.types.is_dictionary(chunk.type):
                lengths = pc.binary_length(chunk.dictionary).fill_null(0).to_numpy(
                    zero_copy_only=False).astype(np.int64)
                indices = pc.drop_null(chunk.indices).to_numpy(zero_copy_only=False)
                if len(indices) and len(lengths):
                    total += int(np.bincount(indices, minlength=len(lengths)) @ lengths)
            else:
                total += int(pc.sum(pc.binary_length(chunk)).as_py() or 0)
    return total


def _over_decoded_limit(label: str, n_bytes: int, shape: tuple[int, int], max_bytes: int,
                        stored: int, *, partial: bool = False) -> DatasetError:
    return DatasetError(
        f"file {label!r} decodes to {'more than ' if partial else ''}"
        f"{_mb(n_bytes)} of data ({shape[0]:,} rows x {shape[1]:,} columns, {stored:,} bytes as "
        f"stored), over the {max_bytes / 1e6:g} MB size limit; the limit applies to the decoded "
        f"data")


_DICTIONARY_ENCODINGS = frozenset({"PLAIN_DICTIONARY", "RLE_DICTIONARY"})


def _text_read_plan(meta, text_columns: list[str]) -> tuple[list[str], list[str], int]:
    """How to read the text columns of a Parquet file within a size limit.

    Returns (columns to read dictionary-encoded, columns to read in bounded batches, the sum of
    the latter's largest column chunk). A dictionary-encoded column can hold millions of
    copies of a long value in a few bytes: read as a dictionary it costs its encoded size and
    is measured exactly. A DELTA_BYTE_ARRAY column (prefix sharing) can expand as much, and
    Arrow cannot read it as a dictionary: it is read in batches small enough that one batch
    stays within the limit (no value is longer than its column chunk's uncompressed bytes).
    Other text columns (PLAIN, DELTA_LENGTH_BYTE_ARRAY) decode to about their uncompressed size,
    which the row groups' size check bounds already.
    """
    wanted = set(text_columns)
    dictionary, batched, largest = set(), set(), {}
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j in range(group.num_columns):
            chunk = group.column(j)
            name = chunk.path_in_schema
            if name not in wanted:
                continue
            encodings = set(chunk.encodings)
            if "DELTA_BYTE_ARRAY" in encodings:
                batched.add(name)
                largest[name] = max(largest.get(name, 0), int(chunk.total_uncompressed_size))
            elif chunk.has_dictionary_page or encodings & _DICTIONARY_ENCODINGS:
                dictionary.add(name)
    dictionary -= batched
    return ([c for c in text_columns if c in dictionary], [c for c in text_columns if c in batched],
            sum(largest.values()))


def _read_batched(data: bytes, columns: list[str], widest: int, label: str, shape: tuple[int, int],
                  max_bytes: int, budget: int) -> dict:
    """Read ``columns`` in batches whose decoded size stays within ``max_bytes``; stop as soon as
    what was read exceeds ``budget`` (the limit left after the other columns)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows_per_batch = max(1, (max_bytes // 4) // max(widest, 1))
    parts: dict[str, list] = {c: [] for c in columns}
    total = 0
    for batch in pq.ParquetFile(io.BytesIO(data)).iter_batches(batch_size=rows_per_batch,
                                                                columns=columns):
        total += decoded_bytes(batch)
        if total > budget:
            parts.clear()
            raise _over_decoded_limit(label, max_bytes - budget + total, shape, max_bytes,
                                      len(data), partial=True)
        for name in columns:
            parts[name].append(batch.column(name))
    return {name: pa.chunked_array(chunks, type=None if chunks else pa.string())
            for name, chunks in parts.items()}


def _read_parquet(data: bytes, label: str, max_bytes: int | None = None,
                  max_cells: int | None = DEFAULT_MAX_CELLS) -> pd.DataFrame:
    """Read a Parquet file, bounding what it decodes to before building the DataFrame.

    The footer gives the rows and columns (checked against :data:`MAX_COLUMNS` and
    ``max_cells``), the fixed-width columns' decoded size and the row groups' uncompressed
    size, all checked before anything is read. With a ``max_bytes`` limit, text columns that
    can expand are read so that their decoded size is known before it is built
    (:func:`_text_read_plan`); the whole table's decoded size (:func:`decoded_bytes`) is
    checked before the DataFrame is made.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
        schema = parquet.schema_arrow
        meta = parquet.metadata
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
        raise DatasetError(f"cannot read Parquet file {label!r}: {exc}") from None
    n_rows, n_cols = int(meta.num_rows), len(schema.names)
    _check_shape(label, n_rows, n_cols, max_cells)
    message = _duplicates_message(list(schema.names), label) or _spaced_names_message(
        list(schema.names), label)
    nested = _nested_columns(schema)
    if nested:
        # pandas would turn each list into one text level per distinct list: refuse instead
        message = message or (
            f"file {label!r} has columns holding lists, structs or maps: "
            f"{', '.join(nested)}; every column must hold one value per row (flatten or "
            f"drop them)")
    if message:
        raise DatasetError(message)
    dictionary: list[str] = []
    batched: dict = {}
    try:
        if max_bytes is not None:
            expanded = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
            if expanded > max_bytes:
                raise DatasetError(
                    f"file {label!r} expands to {_mb(expanded)} of data when decompressed, over "
                    f"the {max_bytes / 1e6:g} MB size limit")
            fixed = n_rows * sum(_cell_bytes(f.type) or _CELL_BYTES for f in schema)
            if fixed > max_bytes:
                raise _over_decoded_limit(label, fixed, (n_rows, n_cols), max_bytes, len(data))
            text_columns = [f.name for f in schema if _cell_bytes(f.type) is None]
            dictionary, streamed, widest = _text_read_plan(meta, text_columns)
            if streamed:
                batched = _read_batched(data, streamed, widest, label, (n_rows, n_cols), max_bytes,
                                        max_bytes - fixed)
        rest = [name for name in schema.names if name not in batched]
        table = pq.ParquetFile(io.BytesIO(data), read_dictionary=dictionary or None).read(
            columns=rest)
        if batched:
            arrays = [batched[n] if n in batched else table.column(n) for n in schema.names]
            table = pa.Table.from_arrays(arrays, names=list(schema.names)).replace_schema_metadata(
                schema.metadata)
    except DatasetError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
        raise DatasetError(f"cannot read Parquet file {label!r}: {exc}") from None
    if max_bytes is not None:
        size = decoded_bytes(table)
        if size > max_bytes:
            del table, batched
            raise _over_decoded_limit(label, size, (n_rows, n_cols), max_bytes, len(data))
    if dictionary or batched:  # back to the file's types: dictionaries decoded in Arrow (fast)
        table = table.cast(schema)
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


_ARFF_ATTRIBUTE = re.compile(r"^[ \t]*@attribute\b", re.IGNORECASE | re.MULTILINE)
_ARFF_DATA = re.compile(r"^[ \t]*@data\b", re.IGNORECASE | re.MULTILINE)


def _read_arff(data: bytes, label: str, max_cells: int | None = DEFAULT_MAX_CELLS) -> pd.DataFrame:
    import arff  # liac-arff

    text = _decode_text(data, label, "ARFF", allow_legacy=False)
    _check_not_binary(_text_head(data, text), label, "ARFF")
    text = _normalise_newlines(text)
    if not re.search(r"\S", text):
        raise DatasetError(f"file {label!r} is empty (only blank lines)")
    first = next((i for i, ln in enumerate(text.splitlines(), 1)
                  if ln.strip() and not ln.lstrip().startswith("%")), 1)
    if not re.search(r"^\s*@relation\b", text, re.IGNORECASE | re.MULTILINE):
        raise DatasetError(
            f"cannot parse ARFF file {label!r}: gave up at line {first}: no @relation header, "
            f"this is not an ARFF file", line=first)
    # The header's attributes and the data lines bound the table before liac-arff builds it (a
    # sparse ARFF row can stand for thousands of cells in a few bytes).
    data_start = _ARFF_DATA.search(text)
    body = text.find("\n", data_start.end()) + 1 if data_start else len(text)
    n_lines = _count_lines(text[body:]) if body > 0 else 0
    _check_shape(label, n_lines, len(_ARFF_ATTRIBUTE.findall(text)), max_cells,
                 rows_word="data lines")
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
    message = _spaced_names_message(names, label)
    if message:
        raise DatasetError(message)
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


_STR_DTYPE = pd.Series([], dtype="str").dtype


def _normalize(frame: pd.DataFrame) -> pd.DataFrame:
    """Text-like columns (object, str, string, category) become ``str`` with NaN for missing.

    Only the columns whose dtype differs are converted (a wide CSV read by pandas is ``str``
    already, and a column-by-column rebuild of 2,000 columns takes seconds).
    """
    result = frame.copy(deep=False)
    for i, dtype in enumerate(frame.dtypes.tolist()):
        if dtype == _STR_DTYPE and isinstance(dtype, pd.StringDtype):
            continue
        if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(dtype) \
                or pd.api.types.is_string_dtype(dtype):
            column = frame.iloc[:, i]
            if isinstance(dtype, pd.CategoricalDtype):
                column = column.astype(object)
            result.isetitem(i, column.astype("str"))
    result.index = pd.RangeIndex(len(result))
    # only what there is to report: pandas deep-copies attrs on every column access
    result.attrs = {key: frame.attrs[key] for key in (MISSING_MARKS_ATTR, SHORT_ROWS_ATTR)
                    if frame.attrs.get(key)}
    return result


_CACHE: OrderedDict[tuple, tuple[pd.DataFrame, str]] = OrderedDict()
_CACHE_SIZE = 16
_CACHE_LOCK = threading.Lock()


def read_table_and_hash(path: str | os.PathLike, *, format: str | None = None,
                        sep: str | None = None, max_bytes: int | None = DEFAULT_MAX_BYTES,
                        label: str | None = None,
                        max_cells: int | None = DEFAULT_MAX_CELLS) -> tuple[pd.DataFrame, str]:
    """Like :func:`read_table`, also returning the SHA-256 of the file's bytes."""
    path = Path(path)
    label = label or path.name
    if format is not None and format not in FORMATS:
        raise DatasetError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, format, sep, max_bytes,
               max_cells)
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
        frame = _read_csv(data, label, sep, max_cells)
    elif fmt == "parquet":
        frame = _read_parquet(data, label, max_bytes, max_cells)
    else:
        frame = _read_arff(data, label, max_cells)
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
               max_bytes: int | None = DEFAULT_MAX_BYTES, label: str | None = None,
               max_cells: int | None = DEFAULT_MAX_CELLS) -> pd.DataFrame:
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
        Refuse files larger than this (default 200 MB), as stored, once decompressed (gzip
        output is capped while streaming) and, for Parquet, once decoded: the row groups'
        uncompressed size and the values' decoded size (:func:`decoded_bytes`, measured on
        dictionary-encoded text before any value is expanded); None for no limit.
    label : str, optional
        Name of the file in messages (default: the file's base name), e.g. the name a user
        uploaded it under.
    max_cells : int or None
        Refuse tables of more cells (rows x columns; default 20 million), counted before the
        values are parsed: from the Parquet footer, or from the header and the number of lines
        of a CSV or ARFF file (an upper bound of its rows). None for no limit. Whatever this
        is, more than :data:`MAX_COLUMNS` columns are refused.

    Returns
    -------
    pandas.DataFrame
        Columns in file order. Text-like columns have the ``str`` dtype with NaN for missing;
        numeric columns are int64 or float64. ``'?'`` (quoted or not) and empty cells are
        missing; ``frame.attrs[MISSING_MARKS_ATTR]`` counts the '?' cells per column (the load
        report that validation turns into a warning; absent when no cell held one);
        ``frame.attrs[SHORT_ROWS_ATTR]`` reports the CSV rows with fewer fields than the header,
        whose last cells are missing (absent when every row is whole). CR, LF and CR LF line
        ends are all read.

    Raises
    ------
    DatasetError
        Missing, empty, over-size (also once decompressed or decoded), too wide (over
        :data:`MAX_COLUMNS`) or too many cells, binary or unparseable file, a
        Parquet column of lists/structs/maps (the message names the file and,
        for CSV/ARFF, the line where parsing gave up; :attr:`DatasetError.line` holds it),
        duplicate column names, a header without data rows.
    """
    return read_table_and_hash(path, format=format, sep=sep, max_bytes=max_bytes,
                               label=label, max_cells=max_cells)[0]
