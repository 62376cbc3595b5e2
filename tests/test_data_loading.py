"""load_dataset over bundled copies, files and OpenML (offline only: no test touches the network)."""
from __future__ import annotations

import csv
import hashlib
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import encbench.data.dataset as dataset_module
from encbench.data import (
    BUNDLED_DIR,
    Dataset,
    DatasetError,
    bundled_entries,
    fetch_openml,
    list_bundled,
    load_dataset,
    openml_cache_dir,
    parse_dataset_spec,
)
from encbench.data.openml_source import dataset_cache_dir

UNREACHABLE = "http://127.0.0.1:9/api/v1/xml"  # discard port: connection refused at once
REQUIRED = ["credit-g", "tic-tac-toe", "kr-vs-kp", "adult", "mushroom", "nursery", "sick",
            "credit-approval"]
RECORD_COLUMNS = ["dataset", "name", "source", "openml_id", "n_rows", "n_features",
                  "n_categorical", "target", "positive_class", "sha256", "task"]
SHARED_MANIFEST = Path("/work/shared/data/datasets/MANIFEST.csv")


def _csv(tmp_path: Path, name: str = "t.csv", seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], 40),
                          "size": rng.normal(size=40).round(4),
                          "label": np.tile(["no", "yes"], 20)})
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


# ------------------------------------------------------------------------------------ bundled


def test_list_bundled_has_the_required_datasets():
    table = list_bundled()
    assert list(table.columns)[:5] == ["key", "name", "rows", "cols", "target"]
    assert set(REQUIRED) <= set(table["name"])
    row = table.set_index("name").loc["credit-g"]
    assert (row["key"], row["rows"], row["cols"], row["target"]) == ("31", 1000, 21, "class")
    assert table["size_bytes"].sum() < 5_000_000
    assert (BUNDLED_DIR / "README.md").is_file()


@pytest.mark.skipif(not SHARED_MANIFEST.exists(), reason="shared manifest not on this machine")
def test_bundled_manifest_rows_are_the_shared_ones_unchanged():
    shared = {line.split(",")[2]: line for line in SHARED_MANIFEST.read_text().splitlines()}
    ours = (BUNDLED_DIR / "MANIFEST.csv").read_text().splitlines()
    assert ours[0] == SHARED_MANIFEST.read_text().splitlines()[0]
    for line in ours[1:]:
        assert shared[line.split(",")[2]] == line


def test_every_bundled_dataset_loads_as_its_manifest_says():
    for entry in bundled_entries():
        ds = load_dataset(f"bundled:{entry.name}")
        assert ds.key == str(entry.openml_id) and ds.source == "bundled"
        assert ds.openml_id == entry.openml_id and ds.target == entry.target
        assert ds.n_rows == entry.rows
        # sick's TBG column is entirely empty: dropped as the protocol says
        assert ds.n_features == entry.cols - 1 - (entry.name == "sick")
        assert ds.n_categorical == entry.n_categorical
        assert set(np.unique(ds.y)) == {0, 1} and len(ds.y) == ds.n_rows
        assert ds.sha256 == hashlib.sha256(entry.path.read_bytes()).hexdigest()


def test_mushrooms_question_marks_are_a_level_and_other_files_keep_them_missing():
    """The study's mushroom (OpenML 43922) has no missing stalk-root: its '?' of OpenML 24's file
    is a level there. Counted in the file's own text, the column's field of each data row."""
    lines = (BUNDLED_DIR / "43922_mushroom.arff").read_text().splitlines()
    names = [line.split()[1].strip("'") for line in lines if line.lower().startswith("@attribute")]
    data = [line.split(",") for line in lines[next(i for i, line in enumerate(lines)
                                                    if line.lower().startswith("@data")) + 1:]
            if line and not line.startswith("%")]
    assert len(data) == 8124 and {len(row) for row in data} == {len(names)}
    column = names.index("stalk-root")
    in_file = sum(row[column] == "?" for row in data)              # unquoted, unlike the levels
    ds = load_dataset("bundled:mushroom")
    assert in_file == 2480 and (ds.X["stalk-root"] == "?").sum() == in_file
    assert int(ds.X.isna().sum().sum()) == 0 and not ds.warnings
    credit = load_dataset("bundled:credit-approval")               # '?' stays missing elsewhere
    assert int(credit.X.isna().sum().sum()) > 0 and not (credit.X == "?").any().any()


def test_bundled_lookup_by_name_and_id():
    by_name = load_dataset("bundled:credit-g")
    for spec in ("bundled:31", "31", "openml:31", "bundled:Credit-G", " 31 "):
        ds = load_dataset(spec)
        assert (ds.key, ds.source, ds.name, ds.sha256) == ("31", "bundled", "credit-g",
                                                           by_name.sha256)
        pd.testing.assert_frame_equal(ds.X, by_name.X)
    record = by_name.as_record()
    assert list(record) == RECORD_COLUMNS
    assert record == {"dataset": "31", "name": "credit-g", "source": "bundled", "openml_id": 31,
                      "n_rows": 1000, "n_features": 20, "n_categorical": 13, "target": "class",
                      "positive_class": "good", "sha256": by_name.sha256, "task": "binary"}
    assert by_name.classes == ("bad", "good") and int(by_name.y.sum()) == 700


def test_bundled_id_never_touches_openml(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("network path used")

    monkeypatch.setattr(dataset_module, "fetch_openml", boom)
    assert load_dataset("50").source == "bundled"


def test_bundled_errors():
    with pytest.raises(DatasetError, match=r"no bundled dataset 'nope'; bundled datasets are "
                                           r"kr-vs-kp \(3\), .*credit-g \(31\)"):
        load_dataset("bundled:nope")
    with pytest.raises(DatasetError, match=r"did you mean 'bundled:credit-g'\?"):
        load_dataset("credit-g")
    with pytest.raises(DatasetError, match=r"has target 'class'; got target 'age'.*load the "
                                           r"file itself"):
        load_dataset("bundled:credit-g", target="age")
    with pytest.raises(DatasetError, match=r"has positive class 'good' .*got "
                                           r"positive_class='bad'"):
        load_dataset("31", positive_class="bad")
    assert load_dataset("31", target="class", positive_class="good").key == "31"
    # The file itself may be used with another positive class; it is then its own dataset.
    path = BUNDLED_DIR / "31_credit-g.arff"
    ds = load_dataset(f"{path}:class:bad")
    assert ds.source == "upload" and ds.key == f"file:{ds.sha256[:12]}"
    assert ds.positive_class == "bad" and int(ds.y.sum()) == 300


# -------------------------------------------------------------------------------------- files


def test_file_dataset_key_name_and_sha_stability(tmp_path):
    path = _csv(tmp_path, "My Data.csv")
    ds = load_dataset(f"{path}:label")
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert ds.sha256 == expected and ds.key == f"file:{expected[:12]}"
    assert ds.name == "My Data" and ds.source == "upload" and ds.openml_id is None
    assert isinstance(ds, Dataset) and ds.path == path
    # Same bytes under another name: same key. One changed byte: another key.
    copy = tmp_path / "copy.csv"
    shutil.copy(path, copy)
    assert load_dataset(copy, target="label").key == ds.key
    text = path.read_text().replace("red", "rod", 1)
    copy.write_text(text)
    changed = load_dataset(copy, target="label")
    assert changed.sha256 != ds.sha256 and changed.key != ds.key


def test_spec_parsing(tmp_path):
    path = _csv(tmp_path)
    assert parse_dataset_spec("bundled:adult").kind == "bundled"
    assert parse_dataset_spec("1590") == parse_dataset_spec("openml:1590")
    spec = parse_dataset_spec(f"{path}:label:yes")
    assert (spec.kind, spec.value, spec.target, spec.positive_class) == (
        "file", str(path), "label", "yes")
    assert parse_dataset_spec(path).kind == "file"
    with pytest.raises(DatasetError, match=r"no dataset 'missing.csv:label': not a file"):
        parse_dataset_spec("missing.csv:label")


def test_file_size_limit_through_load_dataset(tmp_path):
    path = _csv(tmp_path)
    with pytest.raises(DatasetError, match=r"file 't.csv' is 0.0 MB \(\d[\d,]* bytes\), over "
                                           r"the 0.0005 MB size limit"):
        load_dataset(path, target="label", max_bytes=500)


# ------------------------------------------------------------------------------------- OpenML


def _assert_offline_message(message: str, openml_id: int) -> None:
    assert message.startswith("OpenML is unreachable")
    assert f"dataset {openml_id} cannot be downloaded" in message
    assert "bundled:<name>" in message and "credit-g (31)" in message
    assert "path/to/file.arff:<target>" in message


def test_openml_unreachable_fails_fast_with_the_offline_alternative(tmp_path):
    start = time.monotonic()
    with pytest.raises(DatasetError) as info:
        load_dataset("99999", server=UNREACHABLE, cache_dir=tmp_path)
    assert time.monotonic() - start < 5
    _assert_offline_message(str(info.value), 99999)
    start = time.monotonic()
    with pytest.raises(DatasetError) as info:  # a bundled id, forced to the network path
        load_dataset("31", prefer_bundled=False, server=UNREACHABLE, cache_dir=tmp_path)
    assert time.monotonic() - start < 5
    _assert_offline_message(str(info.value), 31)


def test_openml_package_itself_fails_fast(tmp_path, monkeypatch):
    # Skip our reachability check: the openml package's own request must fail at once too
    # (retry policy "robot", 1 try), with the same message.
    import openml

    monkeypatch.setattr("encbench.data.openml_source._check_reachable", lambda *a: None)
    before = openml.config.get_config_as_dict()
    start = time.monotonic()
    with pytest.raises(DatasetError) as info:
        fetch_openml(424242, server=UNREACHABLE, cache_dir=tmp_path)
    assert time.monotonic() - start < 5
    _assert_offline_message(str(info.value), 424242)
    assert openml.config.get_config_as_dict() == before  # configuration restored


def test_openml_from_a_prepopulated_cache(tmp_path):
    # The openml package finds description.xml and dataset.arff in its cache and never
    # connects (the server is unreachable anyway).
    did = dataset_cache_dir(31, cache_dir=tmp_path, server=UNREACHABLE)
    did.mkdir(parents=True)
    (did / "description.xml").write_text(
        '<oml:data_set_description xmlns:oml="http://openml.org/openml">\n'
        "<oml:id>31</oml:id><oml:name>credit-g</oml:name><oml:version>1</oml:version>\n"
        "<oml:format>ARFF</oml:format><oml:url>http://127.0.0.1:9/data/31</oml:url>\n"
        "<oml:default_target_attribute>class</oml:default_target_attribute>\n"
        "</oml:data_set_description>\n")
    shutil.copy(BUNDLED_DIR / "31_credit-g.arff", did / "dataset.arff")
    ds = load_dataset("31", prefer_bundled=False, server=UNREACHABLE, cache_dir=tmp_path)
    bundled = load_dataset("bundled:credit-g")
    assert (ds.source, ds.key, ds.openml_id, ds.name) == ("openml", "31", 31, "credit-g")
    assert ds.sha256 == bundled.sha256 and ds.positive_class == "good"
    pd.testing.assert_frame_equal(ds.X, bundled.X)
    np.testing.assert_array_equal(ds.y, bundled.y)


def test_cache_dir_follows_encbench_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ENCBENCH_CACHE", str(tmp_path))
    assert openml_cache_dir() == tmp_path / "openml"
    monkeypatch.delenv("ENCBENCH_CACHE")
    assert openml_cache_dir().parts[-3:] == ("db", "cache", "openml")


def test_required_bundled_files_exist_in_manifest():
    with (BUNDLED_DIR / "MANIFEST.csv").open(newline="") as fh:
        files = {row["file"] for row in csv.DictReader(fh)}
    assert files == {p.name for p in BUNDLED_DIR.iterdir()} - {"MANIFEST.csv", "README.md"}


def test_dataset_from_frame_matches_its_csv(tmp_path):
    from encbench.data import dataset_from_frame

    path = _csv(tmp_path)
    frame = pd.read_csv(path)
    ds = dataset_from_frame(frame, "label", name="synthetic")
    from_file = load_dataset(path, target="label")
    assert ds.key == from_file.key and ds.name == "synthetic" and ds.path is None
    pd.testing.assert_frame_equal(ds.X, from_file.X)
    with pytest.raises(DatasetError, match="target column 'nope' not in the data"):
        dataset_from_frame(frame, "nope", name="synthetic")


# ------------------------------------------------------------------- the study's label alignment

VOTE = Path(__file__).resolve().parent / "data" / "published" / "56_vote.arff"


def test_study_alignment_takes_the_labels_by_position_after_the_empty_row():
    """vote's 249th row has no recorded vote: the study's scripts dropped it and then paired
    the remaining 434 rows with the file's first 434 labels."""
    rows = load_dataset(f"{VOTE}:Class")
    study = load_dataset(f"{VOTE}:Class", target_alignment="study")
    assert rows.key == study.key == "56" and rows.n_rows == study.n_rows == 434
    data = [line for line in VOTE.read_text().split("@data", 1)[1].split() if "," in line]  # by hand
    file_y = np.array([line.rsplit(",", 1)[1].strip("'") == "republican" for line in data], dtype=int)
    assert len(file_y) == 435
    assert np.array_equal(rows.y, np.delete(file_y, 248))        # each row its own label
    assert np.array_equal(study.y, file_y[:434])                 # the first 434 labels
    assert np.array_equal(study.y[:248], rows.y[:248])
    assert np.array_equal(study.y[249:], rows.y[248:-1])         # one row late from row 249 on
    assert any("taken by position" in w for w in study.warnings)
    credit = load_dataset("bundled:credit-g", target_alignment="study")   # no empty row: unchanged
    assert np.array_equal(credit.y, load_dataset("bundled:credit-g").y)
    with pytest.raises(DatasetError, match="target_alignment"):
        load_dataset("bundled:credit-g", target_alignment="shifted")


def test_study_alignment_reproduces_published_vote_cells():
    """With the study's alignment the engine gives vote's published DT and SVM cells; with each
    row's own label it gives the scores the data supports, far above the published ones."""
    from encbench.engine.grid import Task
    from encbench.engine.protocol import Payload, run_task
    from encbench.store.published import load_published_results

    published = load_published_results()
    published = published[(published["dataset"] == "56") & (published["tuning"] == "no")]
    published = published.set_index(["encoder", "model", "scoring"])["cv_score"]

    def scores(dataset):
        data = Payload.from_dataset(dataset)
        rows = [row for encoder in ("OH", "MT") for fold in range(5)
                for row in run_task(Task("56", encoder, fold, 5, ("DT", "SVM"), ("AUC", "Acc"), "no"), data)]
        return pd.DataFrame(rows).groupby(["encoder", "model", "scoring"])["cv_score"].mean()

    study = scores(load_dataset(f"{VOTE}:Class", target_alignment="study"))
    rows = scores(load_dataset(f"{VOTE}:Class"))
    cells = published.loc[study.index]
    assert len(cells) == 8
    assert (study - cells).abs().max() <= 0.005
    assert published[("OH", "DT", "AUC")] == pytest.approx(0.750, abs=0.001)
    assert (rows - cells).min() > 0.1                            # e.g. DT/OH/AUC 0.95 against 0.75
