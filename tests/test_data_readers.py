"""Readers of encbench.data: CSV, Parquet, ARFF (and .gz), and every bad-file message."""
from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from encbench.data import DatasetError, read_table, read_table_and_hash, sha256_file

ARFF = """% a comment
@relation toy
@attribute 'color' {red, green, 'dark blue'}
@attribute size numeric
@attribute count integer
@attribute note string
@attribute day date 'yyyy-MM-dd'
@attribute label {no, yes}
@data
red,1.5,3,'hello world','2020-01-01',no
'dark blue',?,4,?,'2020-01-02',yes
?,2.25,5,x,?,no
green,0.5,6,'it\\'s',2020-01-04,yes
"""


def _frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], n),
        "size": rng.normal(size=n).round(3),
        "count": rng.integers(0, 5, n),
        "label": np.tile(["no", "yes"], n // 2),
    })


def _is_str(series: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(series.dtype) and not pd.api.types.is_object_dtype(
        series.dtype)


# ------------------------------------------------------------------------------------ formats


def test_csv_types_missing_values_and_openml_header(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("'color','size','n','label'\n"
                    '"red",1.5,3,no\n'
                    "?,2.5,?,yes\n"
                    '"dark, blue",,5,no\n')
    frame = read_table(path)
    assert list(frame.columns) == ["color", "size", "n", "label"]
    assert _is_str(frame["color"]) and _is_str(frame["label"])
    assert frame["color"].tolist()[0] == "red" and frame["color"].tolist()[2] == "dark, blue"
    assert frame["color"].isna().tolist() == [False, True, False]
    assert frame["size"].dtype == np.float64 and np.isnan(frame["size"].iloc[2])
    assert frame["n"].isna().tolist() == [False, True, False]


def test_csv_separator_detection_and_gzip(tmp_path):
    frame = _frame()
    (tmp_path / "semi.csv").write_text(frame.to_csv(index=False, sep=";"))
    (tmp_path / "tab.tsv").write_text(frame.to_csv(index=False, sep="\t"))
    (tmp_path / "comma.csv.gz").write_bytes(gzip.compress(frame.to_csv(index=False).encode()))
    for name in ("semi.csv", "tab.tsv", "comma.csv.gz"):
        got = read_table(tmp_path / name)
        pd.testing.assert_frame_equal(got, frame, check_dtype=False)
        assert _is_str(got["color"]) and got["count"].dtype == np.int64


def test_parquet_roundtrip_category_and_object_become_str(tmp_path):
    frame = _frame()
    frame["cat"] = pd.Categorical(["a", None] * 20)
    frame["obj"] = pd.Series(["x", None] * 20, dtype=object)
    frame.to_parquet(tmp_path / "t.parquet")
    got = read_table(tmp_path / "t.parquet")
    assert _is_str(got["cat"]) and _is_str(got["obj"]) and _is_str(got["color"])
    assert got["cat"].isna().sum() == 20 and got["obj"].isna().sum() == 20
    assert got["cat"].dropna().unique().tolist() == ["a"]
    pd.testing.assert_frame_equal(got[list(_frame().columns)], _frame(), check_dtype=False)
    (tmp_path / "t.parquet.gz").write_bytes(gzip.compress((tmp_path / "t.parquet").read_bytes()))
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.parquet.gz"), got)


def test_arff_types_quotes_missing_and_dates(tmp_path):
    path = tmp_path / "t.arff"
    path.write_text(ARFF)
    frame = read_table(path)
    assert list(frame.columns) == ["color", "size", "count", "note", "day", "label"]
    assert frame["color"].tolist()[:2] == ["red", "dark blue"] and pd.isna(frame["color"][2])
    assert _is_str(frame["note"]) and frame["note"][0] == "hello world" and frame["note"][3] == "it's"
    assert _is_str(frame["day"]) and frame["day"][0] == "2020-01-01" and pd.isna(frame["day"][2])
    assert frame["size"].dtype == np.float64 and np.isnan(frame["size"][1])
    assert frame["count"].dtype == np.int64  # integral numbers without gaps
    (tmp_path / "t.arff.gz").write_bytes(gzip.compress(ARFF.encode()))
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.arff.gz"), frame)


def test_sparse_arff(tmp_path):
    path = tmp_path / "s.arff"
    path.write_text("@relation s\n@attribute a numeric\n@attribute b numeric\n"
                    "@attribute c {x,y}\n@data\n{0 1, 2 y}\n{1 2.5, 2 x}\n")
    frame = read_table(path)
    assert frame["a"].tolist() == [1.0, 0.0] and frame["b"].tolist() == [0.0, 2.5]
    assert frame["c"].tolist() == ["y", "x"]


def test_format_from_content_when_the_extension_says_nothing(tmp_path):
    (tmp_path / "upload1").write_text(ARFF)
    assert read_table(tmp_path / "upload1").shape == (4, 6)
    _frame().to_parquet(tmp_path / "upload2.csv")  # Parquet magic wins over the extension
    assert read_table(tmp_path / "upload2.csv").shape == (40, 4)
    (tmp_path / "upload3").write_text(_frame().to_csv(index=False))
    assert read_table(tmp_path / "upload3").shape == (40, 4)
    assert read_table(tmp_path / "upload3", format="csv").shape == (40, 4)


def test_windows_1252_csv_is_read(tmp_path):
    path = tmp_path / "w.csv"
    path.write_bytes("city,label\nK\u00f6ln,yes\nZ\u00fcrich,no\n".encode("cp1252"))
    assert read_table(path)["city"].tolist() == ["K\u00f6ln", "Z\u00fcrich"]


def test_results_are_copies(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(_frame().to_csv(index=False))
    first = read_table(path)
    first.loc[0, "color"] = "changed"
    assert read_table(path).loc[0, "color"] != "changed"


def test_sha256_is_of_the_file_bytes_and_stable(tmp_path):
    path = tmp_path / "t.csv.gz"
    path.write_bytes(gzip.compress(_frame().to_csv(index=False).encode(), mtime=0))
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert sha256_file(path) == expected
    assert read_table_and_hash(path)[1] == expected
    assert read_table_and_hash(path)[1] == expected


# ---------------------------------------------------------------------------------- bad files


def _error(path, **kwargs) -> DatasetError:
    with pytest.raises(DatasetError) as info:
        read_table(path, **kwargs)
    assert isinstance(info.value, ValueError)
    return info.value


@pytest.mark.parametrize("name", ["e.csv", "e.arff", "e.parquet", "e.csv.gz"])
def test_empty_file(tmp_path, name):
    (tmp_path / name).write_bytes(b"")
    assert f"file '{name}' is empty" in str(_error(tmp_path / name))


def test_blank_and_header_only_files(tmp_path):
    (tmp_path / "blank.csv").write_text("\n  \n\n")
    assert "'blank.csv' is empty" in str(_error(tmp_path / "blank.csv"))
    (tmp_path / "head.csv").write_text("a,b,label\n")
    assert "'head.csv' has a header but no data rows" in str(_error(tmp_path / "head.csv"))
    (tmp_path / "head.arff").write_text("@relation r\n@attribute a numeric\n@data\n")
    assert "'head.arff' has a header but no data rows" in str(_error(tmp_path / "head.arff"))
    (tmp_path / "empty.gz").write_bytes(gzip.compress(b""))
    assert "'empty.gz' is empty" in str(_error(tmp_path / "empty.gz"))
    _frame().iloc[:0].to_parquet(tmp_path / "none.parquet")
    assert "'none.parquet' has columns but no data rows" in str(_error(tmp_path / "none.parquet"))


def test_csv_too_many_fields_names_the_physical_line(tmp_path):
    # A quoted field spanning two lines and a blank line come before the bad row (line 6).
    path = tmp_path / "bad.csv"
    path.write_text('a,b\n"multi\nline",1\n\n2,3\n4,5,6\n7,8\n')
    err = _error(path)
    assert err.line == 6
    assert str(err).startswith("cannot parse CSV file 'bad.csv': gave up at line 6:")
    assert "expected 2 fields as in the header, found 3" in str(err) and "'4,5,6'" in str(err)


def _levels_with_cr(line_end: str, quote: str = '"') -> bytes:
    """300 rows whose 'city' level holds a bare CR in 143 of them (issue 36.7), quoted or not."""
    rng = np.random.default_rng(7)
    rows = ["city,size,price"]
    for i in range(300):
        city = f"{quote}Saint\rDenis{quote}" if i < 143 else "Paris"
        rows.append(f"{city},{rng.integers(1, 9)},{rng.normal(100, 10):.2f}")
    return (line_end.join(rows) + line_end).encode()


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_csv_a_bare_cr_inside_a_quoted_level_is_part_of_the_level(tmp_path, line_end):
    """Issue 36.7: a bare carriage return inside a quoted level split its row (300 rows read as
    443, then 143 'rows whose target is missing' dropped) or became a LF. It is one value, kept
    as written, in files whose lines end with LF or CR LF."""
    path = tmp_path / "cr.csv"
    path.write_bytes(_levels_with_cr(line_end))
    frame = read_table(path)
    assert frame.shape == (300, 3) and frame["price"].notna().all()
    assert frame["city"].value_counts().to_dict() == {"Saint\rDenis": 143, "Paris": 157}


@pytest.mark.parametrize("quote", ["", "'"])
def test_csv_a_bare_cr_outside_quotes_is_refused_naming_its_line(tmp_path, quote):
    """A bare CR outside (double) quotes in a file of LF lines is neither a line end nor text: the
    file is refused naming the first line holding one, instead of split rows dropped silently."""
    path = tmp_path / "cr.csv"
    path.write_bytes(_levels_with_cr("\n", quote))
    err = _error(path)
    assert err.line == 2
    assert str(err).startswith("cannot parse CSV file 'cr.csv': gave up at line 2: a carriage return (CR) "
                               "outside quotes, while the file's lines end with LF")
    assert "put the value holding it in double quotes" in str(err)
    start = f"{quote}Saint\rDenis{quote},"
    assert f"the line reads {start!r}"[:-1] in str(err)     # the line's repr, cut after its first field


def test_csv_every_row_too_long(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("a,b\n1,2,3\n4,5,6\n")
    err = _error(path)
    assert err.line == 2 and "gave up at line 2" in str(err) and "found 3" in str(err)


def test_csv_unterminated_quote(tmp_path):
    path = tmp_path / "quote.csv"
    path.write_text('a,b\n1,2\n3,"oops\n5,6\n7,8\n')
    err = _error(path)
    assert err.line == 3 and "gave up at line 3" in str(err) and "never closed" in str(err)


def test_binary_file_as_csv(tmp_path):
    path = tmp_path / "image.csv"
    path.write_bytes(b"a,b\n1,2\n\x89PNG\x00\x00\x01\x02")
    err = _error(path)
    assert err.line == 3 and "'image.csv'" in str(err) and "binary data" in str(err)


def test_not_utf8_arff(tmp_path):
    path = tmp_path / "latin.arff"
    path.write_bytes(b"@relation r\n@attribute a {x,y}\n@data\nx\n\xe9\n")
    err = _error(path)
    assert err.line == 5 and "gave up at line 5: not UTF-8 text" in str(err)


@pytest.mark.parametrize("body, line, reason", [
    ("1,x\n2,y\nfoo,x\n", 7, "Invalid numerical value"),
    ("1,x\n2,z\n", 6, "Data value z not found in nominal declaration"),
    ("1,x\n2,y,3\n", 6, "Bad @DATA instance format"),
])
def test_arff_data_errors_name_the_line(tmp_path, body, line, reason):
    path = tmp_path / "bad.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data\n" + body)
    err = _error(path)
    assert err.line == line
    assert str(err).startswith(f"cannot parse ARFF file 'bad.arff': gave up at line {line}: ")
    assert reason in str(err)


def test_arff_header_errors(tmp_path):
    path = tmp_path / "h.arff"
    path.write_text("@relation r\n@attribute a numerix\n@data\n1\n")
    err = _error(path)
    assert err.line == 2 and "gave up at line 2: Bad @ATTRIBUTE type" in str(err)
    path.write_text("hello\nworld\n")
    err = _error(path)
    assert err.line == 1 and "no @relation header" in str(err)


def test_corrupt_parquet_and_gzip(tmp_path):
    (tmp_path / "bad.parquet").write_bytes(b"PAR1" + b"garbage" * 10)
    assert "cannot read Parquet file 'bad.parquet'" in str(_error(tmp_path / "bad.parquet"))
    (tmp_path / "bad.csv.gz").write_bytes(gzip.compress(b"a,b\n1,2\n")[:15])
    assert "cannot decompress gzip file 'bad.csv.gz'" in str(_error(tmp_path / "bad.csv.gz"))


def test_duplicate_column_names_in_every_format(tmp_path):
    (tmp_path / "d.csv").write_text("a,b,a,label\n1,2,3,x\n")
    assert str(_error(tmp_path / "d.csv")) == (
        "file 'd.csv' has duplicate column names: 'a' (columns 1 and 3); "
        "column names must be unique")
    (tmp_path / "d.arff").write_text(
        "@relation r\n@attribute a numeric\n@attribute a {x,y}\n@data\n1,x\n")
    err = _error(tmp_path / "d.arff")
    assert "'d.arff' has duplicate column names: 'a' (declared at lines 2 and 3)" in str(err)
    table = pa.Table.from_arrays([pa.array([1, 2]), pa.array(["x", "y"])], names=["a", "a"])
    pq.write_table(table, tmp_path / "d.parquet")
    assert "'d.parquet' has duplicate column names: 'a' (columns 1 and 2)" in str(
        _error(tmp_path / "d.parquet"))


def test_size_limit_names_the_size(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text(_frame(2000).to_csv(index=False))
    size = path.stat().st_size
    err = _error(path, max_bytes=10_000)
    assert f"file 'big.csv' is {size / 1e6:.1f} MB ({size:,} bytes), over the 0.01 MB size limit" \
        == str(err)
    assert read_table(path, max_bytes=None).shape == (2000, 4)


def test_missing_file_and_label(tmp_path):
    err = _error(tmp_path / "nope.csv")
    assert "file 'nope.csv' does not exist" in str(err)
    (tmp_path / "x1").write_text("a,b\n1,2,3\n")
    assert "CSV file 'my upload.csv'" in str(_error(tmp_path / "x1", label="my upload.csv"))


# ------------------------------------------------------------------------- decoded-size limits


def _text_table(n: int = 300, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    words = np.array(["", "a", "bb", "ccc", "déjà vu", "x" * 40], dtype=object)
    text = pd.Series(rng.choice(words, n), dtype="str")
    text[rng.random(n) < 0.1] = np.nan
    return pd.DataFrame({"text": text, "number": rng.normal(size=n), "flag": rng.random(n) < 0.5,
                         "label": np.tile(["no", "yes"], n // 2)})


def test_decoded_bytes_counts_text_bytes_plus_eight_and_eight_per_number():
    from encbench.data.readers import decoded_bytes

    frame = _text_table()
    # naive reference: UTF-8 bytes of each present text value, plus 8 bytes for every cell
    text_bytes = sum(len(v.encode()) for col in ("text", "label") for v in frame[col].dropna())
    expected = text_bytes + 8 * frame.size
    plain = pa.Table.from_pandas(frame, preserve_index=False)
    assert decoded_bytes(plain) == expected
    encoded = plain.set_column(0, "text", pc.dictionary_encode(plain.column("text")))
    assert pa.types.is_dictionary(encoded.schema.field("text").type)
    assert decoded_bytes(encoded) == expected                   # measured without decoding
    assert decoded_bytes(encoded.to_batches()[0]) == expected   # a record batch as well


@pytest.mark.parametrize("options", [{}, {"use_dictionary": False},
                                     {"use_dictionary": False,
                                      "column_encoding": {"text": "DELTA_BYTE_ARRAY",
                                                          "label": "DELTA_LENGTH_BYTE_ARRAY"}}],
                         ids=["dictionary", "plain", "delta"])
def test_bounded_parquet_reading_gives_the_same_frame(tmp_path, options):
    frame = _text_table()
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=70,
                   **options)
    got = read_table(path)
    pd.testing.assert_frame_equal(got, read_table(path, max_bytes=None), check_exact=True)
    pd.testing.assert_frame_equal(got, frame.astype({"flag": bool}), check_dtype=False)
    assert _is_str(got["text"]) and got["text"].isna().sum() == frame["text"].isna().sum()


def test_parquet_decoded_size_limit_counts_text_and_numbers(tmp_path):
    frame = _text_table()
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    text_bytes = sum(len(v.encode()) for col in ("text", "label") for v in frame[col].dropna())
    decoded = text_bytes + 8 * frame.size
    assert read_table(path, max_bytes=decoded).shape == frame.shape    # exactly at the limit: read
    err = _error(path, max_bytes=decoded - 1)
    assert f"decodes to {decoded / 1e6:.1f} MB of data (300 rows x 4 columns" in str(err)
    assert f"over the {(decoded - 1) / 1e6:g} MB size limit; the limit applies to the decoded data" in str(err)


def test_cell_and_column_limits_in_every_format(tmp_path, monkeypatch):
    from encbench.data import readers

    frame = _frame(40)
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    arff = "@relation t\n" + "".join(f"@attribute {c} numeric\n" for c in ("a", "b", "label")) + \
        "@data\n" + "1,2,3\n" * 40
    (tmp_path / "t.arff").write_text(arff)
    assert "holds 40 lines x 4 columns = 160 cells, over the limit of 159 cells" in str(
        _error(tmp_path / "t.csv", max_cells=159))
    assert read_table(tmp_path / "t.csv", max_cells=160).shape == (40, 4)
    assert "holds 40 rows x 4 columns = 160 cells, over the limit of 159 cells" in str(
        _error(tmp_path / "t.parquet", max_cells=159))
    assert "holds 40 data lines x 3 columns = 120 cells, over the limit of 119 cells" in str(
        _error(tmp_path / "t.arff", max_cells=119))
    assert read_table(tmp_path / "t.arff", max_cells=120).shape == (40, 3)
    monkeypatch.setattr(readers, "MAX_COLUMNS", 3)
    for name in ("t.csv", "t.parquet"):   # whatever the cell limit
        assert f"'{name}' has 4 columns, over the limit of 3 columns" in str(
            _error(tmp_path / name, max_cells=None))
    assert read_table(tmp_path / "t.arff").shape == (40, 3)
    monkeypatch.setattr(readers, "MAX_COLUMNS", 2)
    (tmp_path / "u.arff").write_text(arff)      # another file: not the cached read above
    assert "'u.arff' has 3 columns, over the limit of 2 columns" in str(_error(tmp_path / "u.arff"))


def test_a_cached_unbounded_read_does_not_bypass_a_limit(tmp_path):
    path = tmp_path / "t.csv"
    _frame(40).to_csv(path, index=False)
    assert read_table(path, max_cells=None).shape == (40, 4)
    assert "over the limit of 100 cells" in str(_error(path, max_cells=100))


# ------------------------------------------------------------------------------ odd encodings


@pytest.mark.parametrize("bom, codec", [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
                                        (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be")])
def test_utf16_and_utf32_with_a_byte_order_mark_read_like_utf8(tmp_path, bom, codec):
    frame = _frame().assign(color=lambda f: f["color"].replace({"red": "röd", "blue": "blå"}))
    text = frame.to_csv(index=False)
    (tmp_path / "utf8.csv").write_text(text, encoding="utf-8")
    (tmp_path / "wide.csv").write_bytes(bom + text.encode(codec))
    pd.testing.assert_frame_equal(read_table(tmp_path / "wide.csv"), read_table(tmp_path / "utf8.csv"))
    (tmp_path / "wide.arff").write_bytes(bom + ARFF.encode(codec))
    (tmp_path / "utf8.arff").write_text(ARFF, encoding="utf-8")
    pd.testing.assert_frame_equal(read_table(tmp_path / "wide.arff"), read_table(tmp_path / "utf8.arff"))
    # a NUL character inside such text is binary data all the same, on the line it is on
    (tmp_path / "nul.csv").write_bytes(bom + "a,label\nx,1\ny\x00,0\n".encode(codec))
    err = _error(tmp_path / "nul.csv")
    assert "gave up at line 3: binary data (a NUL byte)" in str(err) and err.line == 3


def test_a_nul_byte_anywhere_is_binary_data(tmp_path):
    body = "".join(f"{i},{'ab'[i % 2]}\n" for i in range(200_000)).encode()
    assert len(body) > 1 << 20
    (tmp_path / "late.csv").write_bytes(b"n,label\n" + body + b"7\x00,a\n")
    err = _error(tmp_path / "late.csv")
    assert str(err).startswith("cannot parse CSV file 'late.csv': gave up at line 200002: binary data (a NUL byte)")
    (tmp_path / "be.csv").write_bytes("n,label\n1,a\n".encode("utf-16-be"))
    assert "looks like UTF-16BE text without a byte-order mark: save it as UTF-8 (e.g. iconv -f UTF-16BE -t " \
           "UTF-8 in.csv > out.csv)" in str(_error(tmp_path / "be.csv"))


def test_names_differing_only_in_spaces_are_refused_in_every_format(tmp_path):
    (tmp_path / "s.csv").write_text("colour,colour ,label\nred,x,no\n")
    assert "duplicate column names: 'colour' (columns 1 and 2)" in str(_error(tmp_path / "s.csv"))
    pq.write_table(pa.table({"colour": ["r"], " colour": ["x"], "a": [1], "a ": [2]}), tmp_path / "s.parquet")
    assert str(_error(tmp_path / "s.parquet")) == (
        "file 's.parquet' has column names that differ only in leading or trailing spaces: 'colour' (column 1) "
        "and ' colour' (column 2); 'a' (column 3) and 'a ' (column 4); rename them so that each name is unique "
        "without its spaces")
    (tmp_path / "s.arff").write_text("@relation r\n@attribute 'colour' {r,g}\n@attribute 'colour ' {x,y}\n"
                                     "@data\nr,x\n")
    assert "'s.arff' has column names that differ only in leading or trailing spaces: 'colour' (column 1) and " \
           "'colour ' (column 2)" in str(_error(tmp_path / "s.arff"))


def test_csv_rows_with_fewer_fields_than_the_header_are_reported_with_their_lines(tmp_path):
    """A short row's last cells are missing, and the load report counts such rows and gives the
    lines of the first five (a blank line and a quoted line break count as the file's lines);
    a file whose last column is missing only by empty fields reports nothing."""
    path = tmp_path / "short.csv"
    rows = ["a,b,c", "1,x,0", "2,y", "", '3,"z\nz",1'] + [f"{i},w" for i in range(4, 10)]
    path.write_text("\n".join(rows) + "\n")
    frame = read_table(path)
    assert frame.shape == (9, 3) and frame["c"].isna().sum() == 7
    assert frame.attrs["encbench_short_rows"] == {"count": 7, "lines": [3, 7, 8, 9, 10],
                                                  "fields": 3}
    whole = tmp_path / "whole.csv"
    whole.write_text("a,b,c\n1,x,0\n2,y,\n")
    assert read_table(whole)["c"].isna().sum() == 1
    assert "encbench_short_rows" not in read_table(whole).attrs
