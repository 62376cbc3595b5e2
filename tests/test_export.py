"""Exports: every format carries the same provenance; file names carry the filter state."""
from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from PIL import Image

from encbench import __version__, export, plots


@pytest.fixture()
def prov():
    return export.Provenance(view="consensus",
                             filters={"model": ["LogReg", "DT"], "metric": ["AUC"], "tuning": None,
                                      "theta": 0.95},
                             origins=("local", "published"), run_ids=("published-x", "run-1"),
                             snapshot="1-2-3", created_at="2026-01-01T00:00:00+00:00")


@pytest.fixture()
def table():
    return pd.DataFrame({"encoder": ["ME_0.1", "OH", "50%_&"], "rank": [1, 2, 3],
                         "R-M": [1.25, np.nan, 3.0]})


def _payload(text: str) -> dict:
    return json.loads(text)


def test_provenance_from_scores_splits_joined_runs():
    rows = pd.DataFrame({"origin": ["published", "local,published"], "run_id": ["p", "p,r2"]})
    p = export.Provenance.from_scores("explorer", {"model": ["DT"]}, rows)
    assert p.origins == ("local", "published") and p.run_ids == ("p", "r2")
    assert p.encbench_version == __version__
    empty = export.Provenance.from_scores("explorer", {}, rows.iloc[:0])
    assert empty.origins == () and empty.run_ids == ()


def test_file_name_carries_filters_and_stays_safe(prov):
    name = prov.file_name("rankings", "csv")
    assert name == "encbench_consensus_rankings_model=LogReg+DT_metric=AUC_tuning=all_theta=0.95.csv"
    assert prov.file_name("rankings", "latex").endswith(".tex")
    weird = export.Provenance(view="v", filters={"dataset": ["a/b c", "d\\e"]})
    assert "/" not in weird.file_name("x", "png") and " " not in weird.file_name("x", "png")
    with pytest.raises(ValueError, match="'docx'"):
        prov.file_name("x", "docx")


def test_long_filter_state_is_cut_with_a_distinguishing_hash():
    a = export.Provenance(view="v", filters={"dataset": [str(i) for i in range(60)]})
    b = export.Provenance(view="v", filters={"dataset": [str(i) for i in range(61)]})
    assert len(a.file_name("t", "csv")) < 150
    assert a.file_name("t", "csv") != b.file_name("t", "csv")


def test_csv_is_plain_and_round_trips(prov, table):
    """CSVs started with '#' provenance lines, so a plain pd.read_csv failed."""
    data = export.table_bytes(table, "csv", prov)
    text = data.decode("utf-8")
    assert text.splitlines()[0] == "encoder,rank,R-M" and "#" not in text.replace("50%_&", "")
    pd.testing.assert_frame_equal(pd.read_csv(io.BytesIO(data)), table)


def test_csv_of_awkward_text_reads_back_plainly(prov):
    """Cells starting with '#', holding commas, quotes and newlines: a plain reader keeps them."""
    rng = np.random.default_rng(7)
    awkward = ["# not a comment", "a,b", 'say "hi"', "two\nlines", "", "%", "ü"]
    frame = pd.DataFrame({"text": rng.choice(awkward, 40), "score": rng.uniform(0, 1, 40).round(6),
                          "n": rng.integers(0, 100, 40)})
    frame.loc[frame["text"] == "", "text"] = "x"               # read_csv reads an empty cell as NaN
    back = pd.read_csv(io.BytesIO(export.table_to_csv(frame, prov)))
    pd.testing.assert_frame_equal(back, frame)


def test_provenance_sidecar_describes_the_table_exports(prov, table):
    data = export.table_bytes(table, "provenance", prov, item="rankings")
    doc = _payload(data.decode())
    assert doc[export.METADATA_KEY] == prov.as_dict()
    assert doc["table"] == {"columns": ["encoder", "rank", "R-M"], "rows": 3,
                            "files": [prov.file_name("rankings", f) for f in ("csv", "parquet", "latex")]}
    name = prov.file_name("rankings", "provenance")
    assert name == prov.file_name("rankings", "csv").removesuffix(".csv") + ".provenance.json"
    assert export.MIME["provenance"] == "application/json" and "provenance" in export.TABLE_FORMATS
    assert set(export.FORMAT_LABELS) == set(export.TABLE_FORMATS) | set(export.CHART_FORMATS)


def test_parquet_metadata_and_round_trip(prov, table):
    data = export.table_bytes(table, "parquet", prov)
    read = pq.read_table(io.BytesIO(data))
    meta = _payload(read.schema.metadata[export.METADATA_KEY.encode()].decode())
    assert meta == prov.as_dict()
    pd.testing.assert_frame_equal(read.to_pandas(), table)


def test_latex_is_escaped_with_provenance_comments(prov, table):
    text = export.table_bytes(table, "latex", prov).decode()
    lines = text.splitlines()
    assert lines[0] == r"% Needs \usepackage{booktabs} in the preamble (for \toprule, \midrule, \bottomrule)."
    assert lines[1].startswith("% encbench ")
    assert r"ME\_0.1" in text and r"50\%\_\&" in text and "--" in text
    assert r"\begin{tabular}" in text and r"\toprule" in text


def test_latex_escapes_what_the_default_font_encoding_misprints(prov):
    """'|' prints as an em dash in OT1 (the consensus headers had 'LogReg/no/AUC | R-M')."""
    table = pd.DataFrame({"LogReg/no/AUC | R-M": [1], "a<b>c": ["x|y"]})
    body = export.table_to_latex(table, prov).decode().split(r"\begin{tabular}")[1]
    assert "|" not in body and "<" not in body and ">" not in body
    assert r"LogReg/no/AUC \textbar{} R-M" in body and r"a\textless{}b\textgreater{}c" in body
    assert r"x\textbar{}y" in body


def test_latex_labels_differ_by_view_item_and_filter_state(prov):
    table = pd.DataFrame({"encoder": ["OH"], "R-M": [1]})
    other = export.Provenance(view="consensus", filters={"model": ["SVM"], "metric": ["AUC"]})
    long_a = export.Provenance("consensus", {"dataset": [str(i) for i in range(60)]})
    long_b = export.Provenance("consensus", {"dataset": [str(i) for i in range(61)]})

    def label(p, item="rankings"):
        return next(line for line in export.table_to_latex(table, p, item=item).decode().splitlines()
                    if line.startswith(r"\label{"))

    labels = [label(prov), label(other), label(prov, "nemenyi"), label(long_a), label(long_b)]
    assert len(set(labels)) == len(labels)
    assert labels[1] == r"\label{tab:consensus-rankings-model-SVM-metric-AUC}"
    assert all(re.fullmatch(r"\\label\{tab:[A-Za-z0-9.:+-]+\}", lab) for lab in labels), labels


def test_latex_numbers_have_one_number_of_decimals_per_column(prov):
    """Mean ranks printed 8.146 next to 10.21 (4 significant digits each)."""
    table = pd.DataFrame({"encoder": ["WoE", "OH", "Sum"], "mean_rank": [8.146, 10.2083, 9.05],
                          "score": [0.91234, 0.5, 0.0], "p": [0.03, 2.5e-9, 0.5], "rank": [1.0, 2.0, 3.0]})
    rows = [line.removesuffix(r" \\").split(" & ") for line in
            export.table_to_latex(table, prov).decode().splitlines() if line.startswith(("WoE", "OH", "Sum"))]
    assert [r[1] for r in rows] == ["8.15", "10.21", "9.05"]           # largest: 4 significant digits
    assert [r[2] for r in rows] == ["0.9123", "0.5000", "0.0000"]
    assert rows[1][3] == r"$2.50\times 10^{-9}$" and rows[0][3] == "0.0300"   # not printed as zero
    assert [r[4] for r in rows] == ["1", "2", "3"]                      # whole numbers stay whole
    fixed = export.table_to_latex(table, prov, decimals={"mean_rank": 1}).decode()
    assert "& 10.2 &" in fixed


def test_latex_drops_internal_and_empty_columns_and_bolds_the_best_per_group(prov):
    """The explorer's LaTeX had 13 columns (run_id, an empty fold sd) and no bold best."""
    table = pd.DataFrame({"dataset": ["1", "1", "2", "2"], "metric": "AUC", "encoder": ["OH", "MT"] * 2,
                          "cv_score": [0.9, 0.8, 0.7, 0.75], "cv_std": np.nan, "rank": [1, 2, 2, 1],
                          "run_id": "published-x"})
    text = export.table_to_latex(table, prov, best={"cv_score": "max", "rank": "min"},
                                 best_within=["dataset", "metric"], drop=["run_id"]).decode()
    header = next(line for line in text.splitlines() if line.startswith("dataset & "))
    assert header == r"dataset & metric & encoder & cv\_score & rank \\"
    rows = [line for line in text.splitlines() if line[:1] in "12" and " & " in line]
    assert rows == [r"1 & AUC & OH & \textbf{0.9000} & \textbf{1} \\", r"1 & AUC & MT & 0.8000 & 2 \\",
                    r"2 & AUC & OH & 0.7000 & 2 \\", r"2 & AUC & MT & \textbf{0.7500} & \textbf{1} \\"]
    with pytest.raises(ValueError, match="'nope'"):
        export.table_to_latex(table, prov, drop=["nope"])
    with pytest.raises(ValueError, match="'grp'"):
        export.table_to_latex(table, prov, best={"rank": "min"}, best_within=["grp"])


def test_png_is_valid_and_carries_provenance(prov):
    chart = plots.counts_bars(pd.DataFrame({"m": ["a"], "t": ["x"], "results": [1]}), x="m", color="t")
    data = export.chart_bytes(chart, "png", prov)
    image = Image.open(io.BytesIO(data))
    image.verify()
    meta = _payload(export.read_png_text(data)[export.METADATA_KEY])
    assert meta["view"] == "consensus" and meta["origins"] == ["local", "published"]
    reopened = Image.open(io.BytesIO(data))
    assert export.METADATA_KEY in reopened.text                 # other readers see the chunk too


def test_svg_is_xml_with_metadata_element(prov):
    chart = plots.counts_bars(pd.DataFrame({"m": ["a"], "t": ["x"], "results": [1]}), x="m", color="t")
    root = ET.fromstring(export.chart_bytes(chart, "svg", prov))
    meta = root.find("{http://www.w3.org/2000/svg}metadata")
    assert meta is not None and _payload(meta.text)["snapshot"] == "1-2-3"


def test_unknown_formats_and_inputs_are_named(prov, table):
    with pytest.raises(ValueError, match="'xlsx'"):
        export.table_bytes(table, "xlsx", prov)
    with pytest.raises(ValueError, match="'jpeg'"):
        export.chart_bytes(plots.counts_bars(pd.DataFrame({"m": ["a"], "t": ["x"], "results": [1]}), x="m", color="t"),
                           "jpeg", prov)
    with pytest.raises(ValueError, match="DataFrame"):
        export.table_bytes([1, 2], "csv", prov)
    with pytest.raises(ValueError, match="PNG"):
        export.add_png_text(b"not a png", "k", "v")


def test_with_filters_extends_without_mutating(prov):
    detail = prov.with_filters(detail="LogReg / no / AUC")
    assert detail.filters["detail"] == "LogReg / no / AUC" and "detail" not in prov.filters


def test_long_file_names_keep_whole_values_and_the_detail_they_show():
    """Names were cut mid-value (alpha=0_3209783a) and lost the CD diagram's combination."""
    long = export.Provenance("consensus", {"model": ["LogReg", "DT", "SVM", "kNN"], "tuning": ["no", "model"],
                                    "metric": ["AUC", "F1"], "strategy": ["R-M", "Q-M", "R-Nem", "R-Kem"],
                                    "alpha": 0.05, "mode": "per-combination", "origin": "published"})
    cd = long.with_filters(detail="DT / model / F1")
    for prov in (long, cd):
        stem = prov.file_name("cd-diagram", "png")[: -len(".png")]
        parts = stem.split("_")[3:]
        digest = parts.pop()
        assert len(digest) == 8 and all(c in "0123456789abcdef" for c in digest)
        for part in parts:   # every kept part is a whole key=value of the state
            key, _, value = part.partition("=")
            assert key in prov.filters, part
            assert export.Provenance("x", {key: prov.filters[key]}).filter_slug() == part
    assert "detail=DT-model-F1" in cd.file_name("cd-diagram", "png")
    assert list(cd.filters)[0] == "detail"


def test_latex_has_caption_label_and_the_best_value_per_column_in_bold(prov):
    """Paper-ready LaTeX."""
    table = pd.DataFrame({"encoder": ["OH", "ME_0.1", "MT"], "R-M": [2.0, 1.5, 1.5],
                          "Q-M": [0.91, 0.9, None]})
    text = export.table_bytes(table, "latex", prov, best={"R-M": "min", "Q-M": "max"},
                              item="rankings").decode()
    assert r"\begin{table}[htbp]" in text and r"\end{table}" in text
    assert r"\label{tab:consensus-rankings-model-LogReg+DT-metric-AUC-tuning-all-theta-0.95}" in text
    caption = next(line for line in text.splitlines() if line.startswith(r"\caption{"))
    assert "consensus rankings" in caption
    rows = {line.split(" & ")[0]: line for line in text.splitlines() if " & " in line}
    assert r"\textbf{1.500}" in rows[r"ME\_0.1"] and r"\textbf{1.500}" in rows["MT"]   # ties: both bold
    assert r"\textbf{0.9100}" in rows["OH"] and r"\textbf{2" not in rows["OH"]
    assert rows["MT"].removesuffix(r" \\").endswith("--")
    custom = export.table_to_latex(table, prov, caption="My 50% table", label="tab:mine").decode()
    assert r"\caption{My 50\% table}" in custom and r"\label{tab:mine}" in custom
    assert r"\textbf" not in custom


@pytest.mark.parametrize("best, match", [({"nope": "min"}, "'nope'"), ({"R-M": "lowest"}, "'lowest'"),
                                         ({"encoder": "max"}, "numeric")])
def test_latex_best_is_checked(prov, best, match):
    table = pd.DataFrame({"encoder": ["OH"], "R-M": [1.0]})
    with pytest.raises(ValueError, match=match):
        export.table_to_latex(table, prov, best=best)


def test_every_export_states_its_task():
    import pandas as pd

    rows = pd.DataFrame({"encoder": ["OH"], "cv_score": [1.5], "origin": ["local"], "run_id": ["r"],
                         "task": ["regression"]})
    prov = export.Provenance.from_scores("consensus", {"model": ["Ridge"]}, rows)
    assert prov.task == "regression" and prov.as_dict()["task"] == "regression"
    assert "task: regression" in prov.header_lines()
    assert "task=regression" in prov.file_name("rankings", "csv")
    assert "task regression" in export.default_caption(prov, "rankings")
    binary = export.Provenance.from_scores("consensus", {"model": ["LogReg"]}, rows.drop(columns="task"))
    assert binary.task == "binary" and "task=" not in binary.file_name("rankings", "csv")
    assert export.Provenance.from_scores("x", {}, rows, task="multiclass").task == "multiclass"
